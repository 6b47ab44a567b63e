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
import json
import math
import os
import re
from collections import Counter, defaultdict
from pathlib import Path

import jinja2
from markupsafe import Markup

from ..jsonsafe import JS_SAFE_INT, dumps, encode_float, page_safe
from .common import (ABSENT, BAD, FEATURES, ORDER, SEVERITY, dtype_key, dtype_of, feature_value, fmt_value,
                     outcome_rank, repro_prefix, score, summarize, value_key, worst_outcome)
from ..suite import op_key
from .families import OTHER, family_sort_key, family_summary, group_matrix, op_families

__all__ = ["ORDER", "SEVERITY", "matrix", "data_matrix", "worst_outcome", "case_data", "json_for_script",
           "render_html", "write_html", "load_manifest", "decode_ids", "top_problems"]

#: Non-passing cases whose input shapes (from the manifest) and model attributes (read from the
#: bundle) are embedded: bounded work and file size for runs where almost everything fails.
MAX_DETAIL_CASES = 10000


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
    return env


def warm_up() -> None:
    """Load what rendering a report needs (the compiled template, the modules the page's sections
    use), so that a run can do it while its workers run instead of after them.

    Raises:
        OSError, jinja2.TemplateError: a template cannot be read (as rendering would).
    """
    import numpy as np

    from . import accuracy, coverage_view  # noqa: F401 - imported for their cost, not their names

    np.median(np.zeros(1))  # numpy imports numpy.ma on a median's first call (7 ms)
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


def json_for_script(obj) -> Markup:
    """``obj`` as JSON that is safe inside ``<script type="application/json">``.

    ``<``, ``>`` and ``&`` are written as JSON escapes, so no string can close the
    element (``</script>``) or open a comment; ``JSON.parse`` gives back the original
    text.  Non-finite floats and lone surrogates are written in :mod:`conformance.jsonsafe`'s
    encoding (JSON has no NaN; the page is UTF-8).
    """
    text = dumps(obj, separators=(",", ":"), ensure_ascii=False)
    text = text.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")
    text = text.replace("\u2028", "\\u2028").replace("\u2029", "\\u2029")
    return Markup(text)


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


def data_matrix(data: dict, key: str = "dtype") -> dict:
    """Like :func:`matrix` (rows: operators), from the columns of :func:`case_data` (fast for many cases).

    ``key`` is ``dtype`` or one of the features in ``data["feat"]["keys"]``.
    """
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


_NUMBER = re.compile(r"[-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?")


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
    for c in cases:
        oc = str(c.get("outcome"))
        if oc in ("pass", "skip"):
            continue
        msg = str(c.get("message") or "")
        first = msg.strip().split("\n", 1)[0]
        line = first[:300]
        key = (oc, _NUMBER.sub("#", first)[:300])  # numbers replaced before the cut: equal messages, equal keys
        g = groups.get(key)
        if g is None:
            pieces = sorted((p.strip() for p in _NUMBER.split(line)), key=len, reverse=True)
            g = groups[key] = {"outcome": oc, "count": 0, "pattern": key[1] or "(no message)", "example": msg,
                               "ops": Counter(), "query": pieces[0] if pieces else ""}
        g["count"] += 1
        g["ops"][str(c.get("op", ""))] += 1
    out = sorted(groups.values(), key=lambda g: (-g["count"], outcome_rank(g["outcome"]), g["pattern"]))[:limit]
    for g in out:
        g["ops"] = ", ".join(f"{op} {k}" for op, k in g["ops"].most_common(4))
    return out


# -- manifest and attributes ------------------------------------------------------------

def load_manifest(bundle_or_file: str | os.PathLike) -> dict | None:
    """A bundle's ``manifest.json`` (the bundle directory or archive, or the file itself), or ``None``
    if unreadable."""
    from conformance.bundle import FORMAT, BundleError, is_archive, manifest_bytes

    p = Path(bundle_or_file)
    try:
        text = manifest_bytes(p) if p.is_dir() or is_archive(p) else p.read_bytes()
        m = json.loads(text)
    except (OSError, ValueError, BundleError):
        return None
    if not isinstance(m, dict) or m.get("format") != FORMAT or not isinstance(m.get("cases"), list):
        return None
    return m


def _type_name(elem_type) -> str:
    """The name of an ONNX element type (``float16``; the type's enum name, or the value as text,
    where it is no type we know)."""
    try:
        return _known_type_name(elem_type)
    except TypeError:  # unhashable: not a type at all
        return str(elem_type)


def _kind_type_name(elem_type, kind) -> str:
    """:func:`_type_name`, wrapped as the ONNX type string of a sequence or optional kind
    (``seq(float)``, ``optional(seq(float))``; :data:`conformance.case.KINDS`)."""
    name = _type_name(elem_type)
    if kind == "sequence":
        return f"seq({name})"
    if kind == "optional_tensor":
        return f"optional({name})"
    if kind == "optional_sequence":
        return f"optional(seq({name}))"
    return name


@functools.lru_cache(maxsize=None)
def _known_type_name(elem_type) -> str:
    try:
        from conformance.dtypes import type_name

        return type_name(int(elem_type))
    except (KeyError, TypeError, ValueError):
        try:
            import onnx

            return onnx.TensorProto.DataType.Name(int(elem_type)).lower()
        except (ValueError, TypeError):
            return str(elem_type)


def _attr_display(v):
    """An attribute value as the drill-down shows it: float attributes are float32 in the
    model, so 7 significant digits say all of it (lists element by element)."""
    if isinstance(v, float):
        return _num(v, 7)
    if isinstance(v, list):
        return [_num(x, 7) if isinstance(x, float) else x for x in v]
    return v


def _model_attributes(bundle_dir: Path, rel: Path, op: str) -> dict | None:
    """Attributes of the node ``op`` in the model of the case directory ``rel`` of the bundle
    ``bundle_dir`` (a directory or an archive; ``None`` if unreadable)."""
    try:
        import onnx
        from onnx import helper

        from conformance.bundle import _read_file

        model = onnx.load_model_from_string(_read_file(str(bundle_dir), f"{rel.as_posix()}/model.onnx"))  # directory or archive
    except Exception:  # noqa: BLE001 - a missing or broken model just has no attributes shown
        return None
    for node in model.graph.node:
        if node.op_type == op or len(model.graph.node) == 1:
            out = {}
            for a in node.attribute:
                try:
                    v = helper.get_attribute_value(a)
                except Exception:  # noqa: BLE001
                    continue
                if isinstance(v, bytes):
                    v = v.decode("utf-8", "replace")
                elif isinstance(v, (list, tuple)):
                    v = [x.decode("utf-8", "replace") if isinstance(x, bytes) else x for x in v]
                    if not all(isinstance(x, (int, float, str)) for x in v):
                        v = str(v)
                elif not isinstance(v, (int, float, str)):
                    v = type(v).__name__
                out[a.name] = _attr_display(v)
            return out
    return {}


# -- the embedded case data ---------------------------------------------------------------

def _num(x, sig: int | None = None):
    """A number for the page's JSON: non-finite values as :mod:`conformance.jsonsafe` encodes
    them, optionally rounded to ``sig`` significant digits (a finite value that rounding would
    take beyond the float range, such as the largest double, is kept as it is)."""
    if x is None or isinstance(x, bool):
        return x
    if isinstance(x, int):
        return _json_safe(x)
    if isinstance(x, float):
        if not math.isfinite(x):
            return encode_float(x)
        if sig:
            r = float(f"{x:.{sig}g}")
            return r if math.isfinite(r) else x
        return x
    if isinstance(x, str):
        return x
    return _json_safe(x)


class _Interner:
    def __init__(self, first=None):
        self.items: list = []
        self.index: dict = {}
        if first is not None:
            self.add(first)

    def add(self, value, key=None) -> int:
        key = value if key is None else key
        i = self.index.get(key)
        if i is None:
            i = self.index[key] = len(self.items)
            self.items.append(value)
        return i


def _json_safe(v):
    """``v`` as page data (:func:`conformance.jsonsafe.page_safe`), with a fast path for the
    plain values that most tags are."""
    t = type(v)
    if (t is str and v.isascii()) or t is bool or v is None or (t is int and abs(v) <= JS_SAFE_INT):
        return v
    return page_safe(v)


def case_row(c: dict) -> tuple:
    """What :func:`case_data` takes from the case record ``c``, nothing interned yet: a function of
    the record alone, so a run computes it as each result comes in (``case_data(rows=...)``) and
    the end of the run only interns.

    Returns:
        ``(id, operator (:func:`conformance.suite.op_key`), outcome, [(tag, interning key, JSON-safe value)], [feature value per
        FEATURES], dtype, message, phase, opset, since_version, duration in ms, expected
        rejection or "", [output], detail)``: an output ``(name, ratio)`` (passing output of a
        passing case) or ``(name, passed, ratio, max_abs_err, atol, rtol, reason, worst_index,
        expected_at_worst, actual_at_worst)``; detail ``(io signature, its key, attributes,
        their key)`` for a case that did not pass and records one, else ``None``.
    """
    outcome = str(c.get("outcome"))
    passed_case = outcome == "pass"
    tags = c.get("tags")
    if not isinstance(tags, dict):
        tags = {}
        c = {**c, "tags": tags}
    tag_items = []
    for k, v in tags.items():
        t = type(v)
        if t is str:
            key = v
        elif t is int or t is bool or v is None:
            key = (t, v)  # 1, True and 1.0 are equal as dict keys; keep them apart
        elif t is float and math.isfinite(v):
            key = (t, repr(v))  # repr: 0.0 and -0.0 apart
        else:
            v = _json_safe(v)
            key = json.dumps(v, sort_keys=True)
        tag_items.append((k, key, v))
    fvals = [feature_value(c, k) for k, _, _ in FEATURES]
    d = c.get("duration_s")
    outs = []
    for o in c.get("outputs") or ():
        name = str(o.get("name", ""))
        if passed_case and o.get("passed"):
            outs.append((name, _num(o.get("ratio"), 3)))
            continue
        tol = o.get("tolerance") or {}
        outs.append((name, 1 if o.get("passed") else 0, _num(o.get("ratio"), 4), _num(o.get("max_abs_err"), 4),
                     _num(tol.get("atol"), 4), _num(tol.get("rtol"), 4), str(o.get("reason") or ""),
                     _json_safe(o.get("worst_index")), _num(o.get("expected_at_worst")),
                     _num(o.get("actual_at_worst"))))
    det = c.get("detail") if not passed_case else None
    if isinstance(det, dict):
        sig = {"in": [[str(x[0]), _kind_type_name(x[1], x[5] if len(x) > 5 else None), x[2], x[3], x[4]]
                      for x in det.get("inputs") or []],
               "out": [[str(x[0]), _kind_type_name(x[1], x[3] if len(x) > 3 else None), x[2]]
                       for x in det.get("outputs") or []]}
        attrs = _json_safe({k: _attr_display(v) for k, v in (det.get("attributes") or {}).items()})
        det = (sig, json.dumps(sig, sort_keys=True), attrs, json.dumps(attrs, sort_keys=True))
    else:
        det = None
    return (str(c.get("id")), op_key(c.get("op", ""), c.get("domain")), outcome, tag_items, fvals, dtype_of(c),
            str(c.get("message") or ""),
            str(c.get("phase") or ""), c.get("opset"), c.get("since_version"),
            _num(d * 1000.0, 2) if isinstance(d, (int, float)) and not isinstance(d, bool) else None,
            str(c["expect_error"]) if c.get("expect_error") else "", outs, det)


def case_data(doc: dict, manifest: dict | None = None, bundle_dir: str | os.PathLike | None = None,
              families: dict[str, str] | None = None, rows: dict[str, tuple] | None = None) -> dict:
    """The case records of ``doc`` in the compact, columnar form the page's script reads.

    Layout (every list under ``c``, ``tags.col`` and ``feat.col`` has one entry per case)::

        {"n": cases, "outcomes", "ops", "dtypes", "phases", "strings": interned texts,
         "families": family names (:func:`conformance.reports.families.family_sort_key` order),
         "opfam": per entry of "ops", the index of its family in "families",
         "c": {"idp", "ids" (ids front-coded: id[i] = id[i-1][:idp[i]] + ids[i], see decode_ids),
               "op", "dt", "oc", "msg", "ph", "ov" (opset), "sv" (since_version),
               "dur" (milliseconds), "out", ["xe", "io", "at"]},
         "tags": {"keys", "vals": per key its distinct values, "col": per key 1 + value index, 0 if absent},
         "feat": {"keys", "vals": per feature its values as the matrices write them, "col"},
         "io": input/output signatures from the manifest, "attrs": model attributes,
         "repro": the command prefix that reruns the suite}

    ``out`` per case is ``0`` or a list of outputs: ``[name, ratio]`` for outputs of a
    passing case, and ``[name, passed, ratio, max_abs_err, atol, rtol, reason,
    worst_index, expected_at_worst, actual_at_worst]`` otherwise (texts as indexes
    into ``strings``; non-finite numbers as strings).  With the bundle's ``manifest``,
    names, dtypes and shapes of inputs and outputs are added for non-passing cases
    (``io``); with ``bundle_dir``, their model attributes (``at``).  ``families`` is
    ``{op type: family}`` (default :func:`conformance.reports.families.op_families` of ``doc``).
    ``rows``: :func:`case_row` of some of the cases, by id, computed before (the same page).

    Cases are ordered worst outcome first, then by operator and id.
    """
    sev = {o: k for k, o in enumerate(SEVERITY)}
    cases = sorted(doc.get("cases") or [],
                   key=lambda c: (sev.get(c.get("outcome"), -1), str(c.get("op")), str(c.get("id"))))
    outcomes = list(ORDER) + sorted({str(c.get("outcome")) for c in cases} - set(ORDER))
    oc_index = {o: i for i, o in enumerate(outcomes)}
    ops, dtypes, phases = _Interner(), _Interner(), _Interner("")
    strings, iosigs, attrsets = _Interner(""), _Interner(), _Interner()
    n = len(cases)
    tag_vals: dict[str, _Interner] = {}
    tag_col: dict[str, list[int]] = {}
    fkeys = [k for k, _, _ in FEATURES]
    feat_vals = [_Interner() for _ in fkeys]
    feat_col: list[list[int]] = [[] for _ in fkeys]
    entries = {}
    if manifest:
        entries = {e.get("id"): e for e in manifest.get("cases", []) if isinstance(e, dict)}
    bdir = Path(bundle_dir) if bundle_dir else None
    n_attr = n_io = 0
    col: dict[str, list] = {k: [] for k in ("id", "op", "dt", "oc", "msg", "ph", "ov", "sv", "dur", "out",
                                             "xe", "io", "at")}
    c_id, c_op, c_dt, c_oc, c_msg, c_ph, c_ov, c_sv, c_dur, c_xe, c_out = (
        col[k] for k in ("id", "op", "dt", "oc", "msg", "ph", "ov", "sv", "dur", "xe", "out"))
    s_add, ops_add, dt_add, ph_add = strings.add, ops.add, dtypes.add, phases.add
    fadd = [v.add for v in feat_vals]
    for i, c in enumerate(cases):
        row = rows.get(c.get("id")) if rows else None
        (cid, op, outcome, tag_items, fvals, dt, msg, phase, opset, sv, dur, xe, outs_in, det) = \
            row if row is not None else case_row(c)
        passed_case = outcome == "pass"
        for k, key, v in tag_items:
            vi = tag_vals.get(k)
            if vi is None:
                vi = tag_vals[k] = _Interner()
                tag_col[k] = [0] * n
            tag_col[k][i] = vi.add(v, key) + 1
        for j, fv in enumerate(fvals):
            feat_col[j].append(fadd[j](fv))
        c_id.append(cid)
        c_op.append(ops_add(op))
        c_dt.append(dt_add(dt))
        c_oc.append(oc_index[outcome])
        c_msg.append(s_add(msg))
        c_ph.append(ph_add(phase))
        c_ov.append(opset)
        c_sv.append(sv)
        c_dur.append(dur)
        c_xe.append(s_add(xe) if xe else 0)
        outs = []
        for o in outs_in:
            if len(o) == 2:
                outs.append([s_add(o[0]), o[1]])
            else:
                name = s_add(o[0])
                outs.append([name, o[1], o[2], o[3], o[4], o[5], s_add(o[6]), o[7], o[8], o[9]])
        c_out.append(outs or 0)
        if det is not None and n_io < MAX_DETAIL_CASES:  # recorded by the runner (results since 0.4)
            n_io += 1
            sig, sig_key, attrs, attrs_key = det
            col["io"].append(iosigs.add(sig, sig_key))
            col["at"].append(attrsets.add(attrs, attrs_key))
            continue
        e = entries.get(c.get("id"))
        if e and not passed_case and n_io < MAX_DETAIL_CASES:  # shapes are for the drill-down of failures
            n_io += 1
            sig = {"in": [[str(x.get("name")), _kind_type_name(x.get("elem_type"), x.get("kind")), x.get("shape"),
                           1 if x.get("initializer") else 0, 1 if x.get("present", True) else 0]
                          for x in e.get("inputs") or []],
                   "out": [[str(x.get("name")), _kind_type_name(x.get("elem_type"), x.get("kind")),
                            1 if x.get("present", True) else 0]
                           for x in e.get("outputs") or []]}
            col["io"].append(iosigs.add(sig, json.dumps(sig, sort_keys=True)))
        else:
            col["io"].append(-1)
        at = -1
        if bdir is not None and e and not passed_case and n_attr < MAX_DETAIL_CASES and e.get("dir"):
            rel = Path(str(e["dir"]))
            if ".." not in rel.parts and not rel.is_absolute():
                n_attr += 1
                attrs = _model_attributes(bdir, rel, str(c.get("op", "")))
                if attrs is not None:
                    attrs = _json_safe(attrs)
                    at = attrsets.add(attrs, json.dumps(attrs, sort_keys=True))
        col["at"].append(at)
    # ids, front-coded: consecutive ids (sorted) share long prefixes
    ids = col.pop("id")
    idp, ids_rest, prev = [], [], ""
    for cid in ids:
        k, m = 0, min(len(prev), len(cid))
        while k < m and prev[k] == cid[k]:
            k += 1
        idp.append(k)
        ids_rest.append(cid[k:])
        prev = cid
    col["idp"], col["ids"] = idp, ids_rest
    # columns that say nothing are left out (the page reads a missing one as "none")
    for k, empty in (("xe", 0), ("io", -1), ("at", -1)):
        if all(v == empty for v in col[k]):
            del col[k]
    tkeys = sorted(tag_vals)
    if families is None:
        families = op_families(doc)
    fam_names = sorted({families.get(o, OTHER) for o in ops.items}, key=family_sort_key)
    return {
        "n": n,
        "outcomes": outcomes,
        "ops": ops.items,
        "families": fam_names,
        "opfam": [fam_names.index(families.get(o, OTHER)) for o in ops.items],
        "dtypes": dtypes.items,
        "dtype_order": sorted(dtypes.items, key=dtype_key),
        "phases": phases.items,
        "strings": strings.items,
        "c": col,
        "tags": {"keys": tkeys, "vals": [tag_vals[k].items for k in tkeys], "col": [tag_col[k] for k in tkeys]},
        "feat": {"keys": fkeys, "vals": [v.items for v in feat_vals], "col": feat_col},
        "io": iosigs.items,
        "attrs": attrsets.items,
        "repro": repro_prefix(doc.get("run"), doc.get("suite")),
    }


def decode_ids(data: dict) -> list[str]:
    """The case ids of :func:`case_data` output, undoing the front coding."""
    out, prev = [], ""
    for k, rest in zip(data["c"]["idp"], data["c"]["ids"]):
        prev = prev[:k] + rest
        out.append(prev)
    return out


# -- the page ---------------------------------------------------------------------------

def _auto_manifest(doc: dict) -> tuple[dict | None, Path | None]:
    bundle = (doc.get("run") or {}).get("bundle")
    if not bundle:
        return None, None
    if all(c.get("outcome") == "pass" or "detail" in c for c in doc.get("cases") or ()):
        return None, None  # the results carry every drill-down detail: no manifest to read
    m = load_manifest(bundle)
    return m, (Path(bundle) if m is not None else None)


def render_html(doc: dict, manifest: dict | None = None, bundle_dir: str | os.PathLike | None = None,
                rows: dict[str, tuple] | None = None) -> str:
    """Render a results document (see :mod:`conformance.results`) to one self-contained HTML page.

    Args:
        doc: the results document.
        manifest: the suite's bundle manifest, for input shapes and dtypes in the drill-down.
            When omitted, the manifest of the bundle recorded in ``doc["run"]["bundle"]``
            is used if it can be read.
        bundle_dir: the bundle directory, for the model attributes of non-passing cases
            (defaults to the recorded bundle when the manifest came from there).
        rows: :func:`case_row` of cases of ``doc`` by id, computed before (a run computes them
            as its results come in); the page is the same with or without them.

    The bundle is optional detail: when the recorded one is gone (or unreadable), the page is
    rendered from ``doc`` alone, without input shapes and attributes in the drill-down.
    Operators are grouped by family (:func:`conformance.reports.families.op_families`).

    Returns:
        The page as text (UTF-8 when written); the same ``doc`` (and bundle) gives the same text.
    """
    gc_was_enabled = gc.isenabled()
    gc.disable()  # the render allocates millions of small containers and frees none of them early
    try:
        return _render(doc, manifest, bundle_dir, rows)
    finally:
        if gc_was_enabled:
            gc.enable()


def _render(doc: dict, manifest: dict | None, bundle_dir, rows: dict[str, tuple] | None = None) -> str:
    ctx = _context(doc, manifest, bundle_dir, rows)
    ctx["data_json"] = json_for_script(ctx.pop("data"))
    return _env().get_template("report.html.j2").render(**ctx)


def _context(doc: dict, manifest: dict | None, bundle_dir, rows: dict[str, tuple] | None = None) -> dict:
    """The report template's variables, the case data (:func:`case_data`) as ``data``.  The cases'
    ``op`` become their :func:`conformance.suite.op_key` (in place): every table and matrix of
    the page names an operator outside ai.onnx with its domain."""
    for c in doc.get("cases") or ():
        if c.get("domain") and isinstance(c, dict):
            c["op"] = op_key(c.get("op", ""), c["domain"])
    if manifest is None:
        manifest, auto_dir = _auto_manifest(doc)
        bundle_dir = bundle_dir or auto_dir
    cases = doc.get("cases") or []
    summary = summarize(cases)
    pct, num, den = score(summary)
    total = len(cases)
    order = [o for o in summary if summary[o]]
    order.sort(key=outcome_rank)
    fams = op_families(doc)
    data = case_data(doc, manifest, bundle_dir, fams, rows)
    dtype_matrix = group_matrix(data_matrix(data, "dtype"), order, fams)
    features = []
    for key, title, expl in FEATURES:
        fm = group_matrix(data_matrix(data, key), order, fams, feature=True)
        if fm:
            fm.update(key=key, title=title, explanation=expl)
            features.append(fm)
    from .accuracy import accuracy_section
    from .coverage_view import coverage_rows

    accuracy = accuracy_section(cases, fams)
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
        n_families=len(data["families"]),
        family_rows=family_summary(cases, fams, order),
        dm=dtype_matrix,
        features=features,
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


def write_html(doc: dict, path: str | os.PathLike, manifest: dict | None = None,
               bundle_dir: str | os.PathLike | None = None, rows: dict[str, tuple] | None = None) -> Path:
    """Render ``doc`` (see :func:`render_html`) and write it to ``path`` (UTF-8); returns the path.
    The bytes are those of :func:`render_html`'s page; the case data is written a piece at a time
    (:func:`_script_json_pieces`), so the page never exists whole in memory (a 47,549-case page
    is 38 MB, 76 MB as one Python string).

    Raises:
        OSError: ``path`` cannot be written.
    """
    path = Path(path)
    gc_was_enabled = gc.isenabled()
    gc.disable()  # as render_html
    try:
        ctx = _context(doc, manifest, bundle_dir, rows)
        data = ctx.pop("data")
        marker = f"\x00case-data-{os.urandom(8).hex()}\x00"  # never in a page: replaced below
        page = _env().get_template("report.html.j2").render(data_json=Markup(marker), **ctx)
        head, tail = page.split(marker)  # exactly one: the template names data_json once
        del page
        # errors="replace": a lone surrogate that reached the page some other way cannot lose the report
        with open(path, "w", encoding="utf-8", errors="replace") as f:
            f.write(head)
            for piece in _script_json_pieces(data):
                f.write(piece)
            f.write(tail)
    finally:
        if gc_was_enabled:
            gc.enable()
    return path


def _script_json_pieces(obj, depth: int = 3):
    """:func:`json_for_script` of ``obj`` as pieces whose concatenation is its text: objects with
    text keys and lists are split into their members down to ``depth`` levels (the case data's
    columns), each member written by :func:`json_for_script`."""
    if depth > 0 and isinstance(obj, dict) and all(isinstance(k, str) for k in obj):
        yield "{"
        for i, (k, v) in enumerate(obj.items()):
            yield ("," if i else "") + json_for_script(k) + ":"
            yield from _script_json_pieces(v, depth - 1)
        yield "}"
    elif depth > 0 and isinstance(obj, list) and obj and all(isinstance(v, (list, dict)) for v in obj):
        yield "["
        for i, v in enumerate(obj):
            if i:
                yield ","
            yield from _script_json_pieces(v, depth - 1)
        yield "]"
    else:
        yield str(json_for_script(obj))
