"""HTML compliance report of one results document: one self-contained file.

The page (jinja2, autoescaped everywhere; backend messages can contain anything) shows:

* a headline: backend, suite identity (operators and families, seed, content hash, depth:
  ``smoke`` says the run was a representative subset), counts per outcome and the score,
  defined on the page (:func:`conformance.reports.common.score`);
* the family summary: one row per operator family (:mod:`conformance.reports.families`) with
  its operator and case counts, score, a stacked outcome bar and its most frequent problems;
  each row expands (``<details>``) to its operators' rows;
* the most frequent problems: non-passing cases grouped by outcome and message
  (:func:`top_problems`), each group linking to its cases;
* matrices, coloured by the worst outcome in each cell: operator x dtype and operator x
  feature (:data:`conformance.reports.common.FEATURES`), grouped by family: a family row
  (its operators' counts summed) expands to the operator rows; each cell links to its cases;
* coverage: per family, then per operator version, the schema's type combinations the suite
  covers, each with this backend's outcomes, and the ones it misses
  (:mod:`conformance.reports.coverage_view`);
* accuracy: per family, then per operator and dtype, the distribution of measured error /
  tolerance over passing cases, as small inline SVG histograms drawn from pre-aggregated
  bin counts (:mod:`conformance.reports.accuracy`);
* every case, in a list that filters by family, operator, dtype, outcome, feature and free
  text, with a drill-down (tags, attributes and input shapes when the bundle's manifest
  is at hand, expected vs actual at the worst element, the message, and the command
  that reproduces the case).

Everything is computed from the results document alone; the bundle the run used (its
manifest, its models) only adds input shapes and attributes to the drill-down, and the page
renders without it.

The case records travel as one JSON document in ``<script type="application/json">``
(columnar, strings interned, ``<``, ``>`` and ``&`` written as ``\\u003c``... so that no
text can close the script element), and the list is drawn lazily by a small vanilla
script (only the visible rows exist in the DOM), so 100,000 cases stay responsive.  The
same script expands and collapses the family rows of the matrices.  Nothing is fetched
from the network, and the same results give the same bytes.
"""

from __future__ import annotations

import base64
import functools
import gc
import hashlib
import os
from collections import Counter, defaultdict
from pathlib import Path

import jinja2
from markupsafe import Markup

from ..compact import trim_heap
from ..suite import op_key
from .casedata import (MAX_DETAIL_CASES, CaseStore, case_data, case_row, decode_ids, json_for_script,
                       load_manifest)
from .common import (ABSENT, BAD, FEATURES, NUMBER, ORDER, SEVERITY, dtype_key, esc, feature_value, fmt_value,
                     outcome_rank, score, summarize, value_key, weighted, worst_outcome)
from .families import family_summary, group_matrix, op_families

__all__ = ["ORDER", "SEVERITY", "matrix", "data_matrix", "worst_outcome", "case_data", "case_row", "json_for_script",
           "render_html", "write_html", "load_manifest", "decode_ids", "top_problems", "CaseStore", "MAX_DETAIL_CASES"]

def _bytecode_cache() -> jinja2.BytecodeCache | None:
    """Compiled templates kept in the user's cache directory ($XDG_CACHE_HOME or ~/.cache,
    ``onnx-conformance/jinja``): compiling the report's template costs ~0.08 s a run; jinja checks
    each cached entry against its template's source.  ``None`` where the directory cannot be made."""
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    path = os.path.join(base, "onnx-conformance", "jinja")
    try:
        os.makedirs(path, exist_ok=True)
    except OSError:
        return None
    return jinja2.FileSystemBytecodeCache(path) if os.access(path, os.W_OK) else None


@functools.lru_cache(maxsize=1)
def _env() -> jinja2.Environment:
    """The report's jinja environment, made once per process (it keeps the compiled templates)."""
    env = jinja2.Environment(
        loader=jinja2.PackageLoader("conformance.reports", "templates"),
        bytecode_cache=_bytecode_cache(),
        autoescape=True,  # backend messages can contain anything
        undefined=jinja2.StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
    )
    env.filters["fmt"] = _fmt
    env.globals["mrow_html"] = _mrow_html
    env.globals["hist_html"] = _hist_html
    return env


def _hist_html(r, ax) -> Markup:
    """An accuracy row's histogram (``r``: its ``n``, ``exact`` and ``bars``) on the axis ``ax``
    (:func:`conformance.reports.accuracy.axis`), as the page has it (was a template macro)."""
    env = _env()
    get = functools.partial(env.getattr, r)
    w, h = esc(env.getattr(ax, "width")), esc(env.getattr(ax, "height"))
    lim = esc(env.getattr(ax, "limit_x"))
    bars = "".join(f'<rect class="{esc(b["kind"])}" x="{esc(b["x"])}" y="{esc(b["y"])}" '
                   f'width="{esc(b["w"])}" height="{esc(b["h"])}"><title>{esc(b["what"])}: '
                   f'{esc(b["n"])}</title></rect>' for b in get("bars"))
    return Markup(f'<svg class="hist" viewBox="0 0 {w} {h}" width="{w}" height="{h}" role="img" '
                  f'aria-label="{esc(get("n"))} outputs, {esc(get("exact"))} exact">'
                  f'<line class="lim" x1="{lim}" x2="{lim}" y1="0" y2="{h}"/>{bars}</svg>')


def _mcell_html(cell, q: dict) -> Markup:
    """One cell of a matrix (an :func:`~conformance.reports.common.outcome_cell`, or ``None``:
    empty) linking to its cases (the query ``q``), as the page has it (was a template macro: the
    same text, for the mixed bundle's 2,300 cells ~0.004 s of CPU less)."""
    if not cell:
        return Markup('<td class="cell empty"></td>')
    get = cell.__getitem__ if type(cell) is dict else functools.partial(_env().getattr, cell)
    bar = "".join(f'<i class="s-{esc(o)}" style="width:{esc("%.2f" % (w,))}%"></i>' for o, _, w in get("segs"))
    return Markup(f'<td class="cell o-{esc(get("worst"))}" title="{esc(get("title"))}">'
                  f'<a href="#cases?{esc(_urlencode(q))}"><span class="frac">'
                  f'{esc(get("pass"))}/{esc(get("n"))}</span><span class="bar">{bar}</span></a></td>')


def _mrow_html(cells, cols, base: dict, col_key: str, row=None) -> Markup:
    """A matrix row's cells (:func:`_mcell_html` of each column ``c`` of ``cols``, one after another):
    the cell ``cells[(row, c)]``, or ``cells[c]`` where ``row`` is ``None`` (a family's row), its
    query ``base`` then ``{col_key: c, "oc": "all"}``.  One call a row, not one a cell: a three-seed
    run's matrices have 107,000 cells, and each call from the template costs ~10 us of jinja's."""
    get = cells.get
    return Markup("".join([_mcell_html(get(c if row is None else (row, c)), {**base, col_key: c, "oc": "all"})
                           for c in cols]))


#: :func:`_qs` of the texts seen (operator, dtype, family and feature names: a few hundred), at most 4,096.
_QS: dict[str, str] = {}


def _qs(x) -> str:
    """``x`` quoted for a query string as jinja's ``urlencode`` filter quotes it (``url_quote(x,
    for_qs=True)``), a text's quoting made once."""
    if type(x) is not str:
        return jinja2.utils.url_quote(x, for_qs=True)
    r = _QS.get(x)
    if r is None:
        r = jinja2.utils.url_quote(x, for_qs=True)
        if len(_QS) < 4096:
            _QS[x] = r
    return r


def _urlencode(q) -> str:
    """jinja's ``urlencode`` filter of ``q`` (:func:`jinja2.filters.do_urlencode`), a dict's keys and
    values quoted by :func:`_qs` (the matrices' 2,300 cells of the mixed bundle share ~300 texts)."""
    if type(q) is not dict:
        return jinja2.filters.do_urlencode(q)
    return "&".join([f"{_qs(k)}={_qs(v)}" for k, v in q.items()])


def warm_up() -> None:
    """Load what rendering a report needs (the compiled template, the modules the page's sections
    use), so that a run can do it while its workers run instead of after them.

    Raises:
        OSError, jinja2.TemplateError: a template cannot be read (as rendering would).
    """
    from . import accuracy, coverage_view  # noqa: F401 - imported for their cost, not their names

    env = _env()
    env.get_template("report.html.j2")
    for name in ("report.js.j2", "report.css.j2"):
        _static(env, name)


def _static(env: jinja2.Environment, name: str) -> Markup:
    """A file of ours from the templates folder, verbatim (script or style: never user data)."""
    src, _, _ = env.loader.get_source(env, name)
    assert "</" + "script" not in src.lower() and "</" + "style" not in src.lower()
    return Markup(src)


def _fmt(x) -> str:
    if x is None:
        return ""
    if isinstance(x, str):
        return x
    if isinstance(x, float):
        return f"{x:.3g}"
    return str(x)


# -- matrices -----------------------------------------------------------------------------

def _assemble(cells: dict[tuple[str, str], Counter], col_tag: str) -> dict:
    rows = sorted({k[0] for k in cells})
    cols = sorted({k[1] for k in cells}, key=dtype_key if col_tag == "dtype" else value_key)
    return {"rows": rows, "cols": cols, "cells": dict(cells),
            "worst": {k: worst_outcome(v) for k, v in cells.items()}}


def matrix(cases: list[dict], row_key: str = "op", col_tag: str = "dtype") -> dict:
    """Outcome counts per (row, column).

    Args:
        cases: case records of a results document.
        row_key: case field for the rows (``op``).
        col_tag: feature for the columns (a tag name, see :func:`conformance.reports.common.feature_value`).

    Returns:
        ``{"rows", "cols", "cells": {(r, c): Counter}, "worst": {(r, c): outcome}}``.
    """
    cells: dict[tuple[str, str], Counter] = defaultdict(Counter)
    for c in cases:
        cells[(str(c.get(row_key, "")), feature_value(c, col_tag))][c.get("outcome")] += 1
    return _assemble(cells, col_tag)


def data_matrix(data: dict | CaseStore, key: str = "dtype") -> dict:
    """Like :func:`matrix` (rows: operators), from the columns of :func:`case_data` or from a
    :class:`~conformance.reports.casedata.CaseStore` (fast for many cases).

    ``key`` is ``dtype`` or one of the features in ``data["feat"]["keys"]``.
    """
    if isinstance(data, CaseStore):
        return _assemble(data.cells(key), key)
    c = data["c"]
    if key == "dtype":
        names, col = data["dtypes"], c["dt"]
    else:
        j = data["feat"]["keys"].index(key)
        names, col = data["feat"]["vals"][j], data["feat"]["col"][j]
    cells: dict[tuple[str, str], Counter] = defaultdict(Counter)
    ops, outcomes = data["ops"], data["outcomes"]
    for (op, v, oc), k in Counter(zip(c["op"], col, c["oc"])).items():
        cells[(ops[op], names[v])][outcomes[oc]] += k
    return _assemble(cells, key)


def top_problems(cases: list[dict], limit: int = 15) -> list[dict]:
    """The most frequent kinds of non-passing result: cases grouped by outcome and message pattern.

    A pattern is the message's first line with every number replaced by ``#`` (so
    "3 of 8 element(s)" and "5 of 8 element(s)" group together), cut to 300 characters
    (after the replacement: "IR version: 10, max 9" and "IR version: 13, max 10" group together
    however long the rest of the line).  Each group has
    ``outcome, count, pattern, example`` (the first full message) and ``query``: the
    longest number-free piece of the message, for the case list's search box.
    """
    groups: dict[tuple[str, str], dict] = {}
    for c, w in weighted(cases):
        oc = str(c.get("outcome"))
        if oc in ("pass", "skip"):
            continue
        msg = str(c.get("message") or "")
        first = msg.strip().split("\n", 1)[0]
        line = first[:300]
        key = (oc, NUMBER.sub("#", first)[:300])  # numbers replaced before the cut: equal messages, equal keys
        g = groups.get(key)
        if g is None:
            pieces = sorted((p.strip() for p in NUMBER.split(line)), key=len, reverse=True)
            g = groups[key] = {"outcome": oc, "count": 0, "pattern": key[1] or "(no message)", "example": msg,
                               "ops": Counter(), "query": pieces[0] if pieces else ""}
        g["count"] += w
        g["ops"][str(c.get("op", ""))] += w
    out = sorted(groups.values(), key=lambda g: (-g["count"], outcome_rank(g["outcome"]), g["pattern"]))[:limit]
    for g in out:
        g["ops"] = ", ".join(f"{op} {k}" for op, k in g["ops"].most_common(4))
    return out


# -- the page ---------------------------------------------------------------------------

def _auto_manifest(doc: dict, store: CaseStore) -> tuple[dict | None, Path | None]:
    bundle = (doc.get("run") or {}).get("bundle")
    if not bundle or not store.undetailed:
        return None, None  # the results carry every drill-down detail: no manifest to read
    m = load_manifest(bundle)
    return m, (Path(bundle) if m is not None else None)


def render_html(doc: dict, manifest: dict | None = None, bundle_dir: str | os.PathLike | None = None,
                store: CaseStore | None = None) -> str:
    """Render a results document (see :mod:`conformance.results`) to one self-contained HTML page.

    Args:
        doc: the results document.
        manifest: the suite's bundle manifest, for input shapes and dtypes in the drill-down of
            cases whose record has no ``detail`` (results written before 0.4).  When omitted,
            the manifest of the bundle recorded in ``doc["run"]["bundle"]`` is used if it can be read.
        bundle_dir: the bundle directory, for the model attributes of those cases
            (defaults to the recorded bundle when the manifest came from there).
        store: the cases of ``doc`` already in a :class:`~conformance.reports.casedata.CaseStore`
            (a run fills one from its results file; ``doc["cases"]`` is then not read for them);
            the page is the same as from ``doc["cases"]``.

    The bundle is optional detail: when the recorded one is gone (or unreadable), the page is
    rendered from ``doc`` alone, without input shapes and attributes in the drill-down.
    Operators are grouped by family (:func:`conformance.reports.families.op_families`).

    Returns:
        The page as text (UTF-8 when written); the same ``doc`` (and bundle) gives the same text.
    """
    return "".join(_page(doc, manifest, bundle_dir, store))


def write_html(doc: dict, path: str | os.PathLike, manifest: dict | None = None,
               bundle_dir: str | os.PathLike | None = None, store: CaseStore | None = None) -> Path:
    """Render ``doc`` (see :func:`render_html`) and write it to ``path`` (UTF-8); returns the path.
    The bytes are those of :func:`render_html`'s page, written a piece at a time: the page never
    exists whole in memory (a 60,000-case page is 30 MB).

    A large page (a ``store`` of :data:`FORK_MIN_CASES` cases or more) is written by two processes
    where this one can fork safely (Linux, no other thread): a forked child writes the case data
    (:meth:`CaseStore.pieces`) to a scratch file beside ``path`` while this process renders the
    template around it, then copies it in; the same bytes as one process writes (a three-seed run's
    page: ~2.7 s of case data beside ~1.1 s of template).  A child that fails leaves the case data to
    this process.

    Raises:
        OSError: ``path`` cannot be written.
    """
    from ..forked import can_fork

    path = Path(path)
    fork = store is not None and store.n >= FORK_MIN_CASES and can_fork()
    with open(path, "wb") as f:
        buf: list[str] = []  # the template's small pieces (7,400 a 7,300-case run) written 64 KiB at a time
        size = 0
        for piece in _page(doc, manifest, bundle_dir, store, fork_dir=path.parent if fork else None):
            if type(piece) is _ForkedData:
                _write_text(f, buf)
                piece.copy_to(f)
                buf.clear()
                size = 0
                continue
            buf.append(piece)
            size += len(piece)
            if size >= 65536:
                _write_text(f, buf)
                buf.clear()
                size = 0
        _write_text(f, buf)
    return path


#: A page of this many cases or more is written by two processes (:func:`write_html`): below it the
#: case data takes under ~0.4 s, not worth a fork.
FORK_MIN_CASES = 25_000


class _ForkedData:
    """The case data of a page, written by a forked child (:class:`conformance.forked.ForkedWriter`)
    to a scratch file (:func:`write_html`)."""

    def __init__(self, data, directory: Path):
        """Fork a child that writes the pieces of ``data`` (an iterator of text, not started) to a
        scratch file in ``directory``."""
        from ..forked import ForkedWriter

        self.data = data
        self.child = ForkedWriter(directory, ".report-data-", lambda f: _write_text(f, data))

    def copy_to(self, f) -> None:
        """Wait for the child and copy what it wrote to ``f`` (binary); where it failed, write the
        case data here instead (the same bytes)."""
        import shutil

        try:
            if self.child.wait():
                with open(self.child.path, "rb") as g:
                    shutil.copyfileobj(g, f, 1 << 20)
            else:
                _write_text(f, self.data)
        finally:
            self.close()

    def close(self) -> None:
        self.child.close()


def _write_text(f, pieces) -> None:
    """Write the text ``pieces`` to the binary file ``f``, UTF-8 (a lone surrogate replaced: it
    cannot lose the report), ~1 MiB at a time."""
    buf: list[str] = []
    size = 0
    for piece in pieces:
        buf.append(piece)
        size += len(piece)
        if size >= 1 << 20:
            f.write("".join(buf).encode("utf-8", "replace"))
            buf.clear()
            size = 0
    f.write("".join(buf).encode("utf-8", "replace"))


def _page(doc: dict, manifest: dict | None, bundle_dir, store: CaseStore | None, fork_dir: Path | None = None):
    """The page's text in pieces: the template rendered around a marker, then the case data
    (:meth:`CaseStore.pieces`) where the marker was; with ``fork_dir``, the case data is a
    :class:`_ForkedData` piece (written by a child, its scratch file in ``fork_dir``)."""
    gc_was_enabled = gc.isenabled()
    gc.disable()  # the render allocates many small containers and frees few of them early
    forked = None

    def start(data) -> None:  # the case data written by a child while the aggregates and the template are made
        nonlocal forked
        try:
            forked = _ForkedData(data, fork_dir)
        except OSError:  # no child to be had (no scratch file, no process): this process writes it
            forked = None

    try:
        ctx = _context(doc, manifest, bundle_dir, store, start=start if fork_dir is not None else None)
        trim_heap()  # the page's aggregates computed: what they read and dropped goes back
        data = ctx.pop("data")
        marker = f"\x00case-data-{os.urandom(8).hex()}\x00"  # never in a page: replaced below
        # the template's output as it is produced (the page around the case data is 13 MB for the
        # whole suite, its coverage and matrices): one piece holds the marker, the value of
        # data_json, which the template names once
        pieces = _env().get_template("report.html.j2").generate(data_json=Markup(marker), **ctx)
        for piece in pieces:
            if marker in piece:
                head, tail = piece.split(marker)
                yield head
                if forked is not None:
                    yield forked
                else:
                    yield from data
                yield tail
                break
            yield piece
        else:
            raise AssertionError("the report template did not write the case data")
        yield from pieces
    finally:
        if forked is not None:
            forked.close()
        if gc_was_enabled:
            gc.enable()


def _context(doc: dict, manifest: dict | None, bundle_dir, store: CaseStore | None = None, start=None) -> dict:
    """The report template's variables, the case data as ``data`` (an iterator of JSON text pieces).
    The cases' ``op`` become their :func:`conformance.suite.op_key` (in place): every table and
    matrix of the page names an operator outside ai.onnx with its domain.  ``start(data)``, where
    given, is called with the case data as soon as it can be made, before the page's aggregates
    (a forked child writes it meanwhile: :func:`write_html`)."""
    if store is None:
        for c in doc.get("cases") or ():
            if isinstance(c, dict) and c.get("domain"):
                c["op"] = op_key(c.get("op", ""), c["domain"])
        store = CaseStore.of(doc.get("cases") or [])
    if manifest is None:
        manifest, auto_dir = _auto_manifest(doc, store)
        bundle_dir = bundle_dir or auto_dir
    cases = store.slim()
    fams = op_families({**doc, "cases": cases})
    data = store.pieces(fams, doc.get("run"), doc.get("suite"), manifest, bundle_dir)
    if start is not None:
        store._flush()  # every case's columns in the scratch file before a child reads it
        start(data)
    summary = summarize(cases)
    pct, num, den = score(summary)
    total = len(cases)
    order = [o for o in summary if summary[o]]
    order.sort(key=outcome_rank)
    dtype_matrix = group_matrix(data_matrix(store, "dtype"), order, fams)

    def features():  # each feature's matrix made as the template reaches it (2.4 MiB together at seed 0)
        for key, title, expl in FEATURES:
            fm = group_matrix(data_matrix(store, key), order, fams, feature=True)
            if fm:
                fm.update(key=key, title=title, explanation=expl)
                yield fm
    from .accuracy import LazyFamilies, axis
    from .coverage_view import coverage_rows

    # the accuracy rows of each family made as the template reaches it (accuracy.accuracy_section's)
    accuracy = {"families": LazyFamilies(store.ratios, fams), "axis": axis()}
    env = _env()
    suite = {"seed": None, "ops": [], "content_hash": None, "n_cases": None, "source": None, "versions": {},
             "generators": {}, **(doc.get("suite") or {})}
    depth = str(suite.get("depth") or "full")
    manifest_hash = manifest.get("content_hash") if manifest else None
    backend = doc.get("backend") or {}
    script = _static(env, "report.js.j2")
    # the page allows exactly this script (Content-Security-Policy hash): an injected one would not run
    script_hash = base64.b64encode(hashlib.sha256(f"\n{script}\n".encode()).digest()).decode()
    return dict(
        doc={"format": doc.get("format"), "duration_s": doc.get("duration_s")},
        suite=suite,
        backend=backend,
        backend_name=str(backend.get("backend") or "?"),
        backend_version=backend.get(str(backend.get("backend"))) if isinstance(
            backend.get(str(backend.get("backend"))), (str, int, float)) else None,
        host=doc.get("host") or {},
        run=doc.get("run") or {},
        summary=summary,
        order=order,
        total=total,
        score=pct,
        score_num=num,
        score_den=den,
        bad=[o for o in BAD if summary.get(o)],
        stored_summary_differs=bool(doc.get("summary")) and any(
            doc["summary"].get(o, 0) != summary.get(o, 0) for o in set(doc["summary"]) | set(summary)),
        depth=depth,
        n_families=len(store.family_names(fams)),
        family_rows=family_summary(cases, fams, order),
        dm=dtype_matrix,
        features=features(),
        accuracy=accuracy,
        acc_axis=accuracy["axis"],
        coverage=coverage_rows(doc.get("coverage"), list(ORDER), fams),
        problems=top_problems(cases),
        stale_xfails=[str(e) for e in ((doc.get("expected_failures") or {}).get("stale") or [])],
        xfail_file=(doc.get("expected_failures") or {}).get("file"),
        manifest_hash=manifest_hash,
        data=data,
        script=script,
        script_hash=script_hash,
        style=_static(env, "report.css.j2"),
        fmt_value=fmt_value,
        absent=ABSENT,
        verdict=doc.get("verdict"),
        verdict_rows=VERDICT_ROWS,
        patterns=doc.get("patterns"),
        pattern_rows=PATTERN_FAILURE_ROWS,
    )


#: Failing layer-pattern cases the layer-pattern section lists (results.json ``patterns.failures`` has all).
PATTERN_FAILURE_ROWS = 60

#: Findings and waivers the verdict section lists (the rest are counted; results.json has all).
VERDICT_ROWS = 200
