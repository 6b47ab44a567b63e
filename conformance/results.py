"""``results.json``: the record of one run of a suite on one backend.

Schema (``format: onnx-conformance-results/1``)::

    {
      "format": "onnx-conformance-results/1",
      "suite":   {seed, ops, generators, versions, content_hash, n_cases, source,
                  families: {op type: family, as reports group operators}},
      "backend": {backend, versions and options of the runtime},
      "run":     {backend_spec, backend_options, bundle (absolute path or null), ops, seed,
                  match, argv}: enough to reproduce the run or one case of it
                  (``onnx-conformance run --backend SPEC [--backend-option K=V ...]
                  --bundle BUNDLE --match CASE_ID --out DIR``),
      "host":    {python, platform, machine},
      "summary": {outcome: count for every outcome},
      "duration_s": wall time of the run in seconds,
      "coverage": conformance.coverage.compute_coverage of the suite with this run's
                  outcomes per type combination (null if it could not be computed),
      "cases": [ {id, op, domain, since_version, opset, tags, outcome, message, phase,
                  expect_error, duration_s,
                  outputs: [{name, passed, reason, max_abs_err, ratio, worst_index,
                             expected_at_worst, actual_at_worst, tolerance}]} ]
    }

``ratio`` is the measured error divided by the tolerance at the worst element
(<= 1 passes), so reports can show accuracy, not only pass/fail.

The file is strict JSON: a number that is not finite (a ratio, an error, a value at the worst
element, anything a backend produced) is the string ``"NaN"``, ``"Infinity"`` or
``"-Infinity"`` (:mod:`conformance.jsonsafe`; readers use :func:`conformance.jsonsafe.decode_number`,
which also reads the ``"nan"``/``"inf"`` of results written before suite 0.3.1).
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable, Iterator, Mapping
from pathlib import Path

import orjson

from .compact import trim_heap
from .jsonsafe import dumps, json_line, json_safe
from .runner import summarize
from .suite import Suite, host_environment, op_key

FORMAT = "onnx-conformance-results/1"


class ResultsError(Exception):
    """A results file is missing or malformed."""


def results_document(suite: Suite, backend_env: dict, results, duration_s: float,
                     run: dict | None = None) -> dict:
    """Build the results document (see module docstring) from a list of CaseResults or their
    records (``CaseResult.to_json`` dicts, used as they are), or from another re-iterable of
    records (a run's :class:`conformance.reports.casedata.SlimCases`, the document's ``cases``
    as given: its results file is written from results.jsonl)."""
    return {
        "format": FORMAT,
        "suite": {**suite.identity(), "families": families(results, suite.families)},
        "backend": json_safe(backend_env),  # a backend's own text: may hold anything
        "run": run or {},
        "host": host_environment(),
        "summary": _summary(results),
        "duration_s": round(duration_s, 3),
        "cases": [r if isinstance(r, dict) else r.to_json() for r in results] if isinstance(results, list) else results,
    }


def _summary(results) -> dict[str, int]:
    """:func:`conformance.runner.summarize` of ``results``; a compact store's cases counted a kind
    of case at a time (:func:`conformance.reports.common.weighted`)."""
    if not callable(getattr(results, "grouped", None)):
        return summarize(results)
    from collections import Counter

    from .runner import OUTCOMES

    c: Counter = Counter()
    for r, k in results.grouped():
        c[r["outcome"]] += k
    return {o: c.get(o, 0) for o in OUTCOMES}


def families(results, known: dict[str, str] | None = None) -> dict[str, str]:
    """``{operator (:func:`op_key`): family}`` for the operators of ``results`` (CaseResults or
    case records): from ``known`` (the suite's record), else from the operator table
    (:func:`conformance.registry.family`, which imports it; ``"other"`` for a foreign suite's
    operator), so that a report re-rendered from the results alone groups them."""
    seen = {}
    grouped = getattr(results, "grouped", None)
    for r in (r for r, _ in grouped()) if callable(grouped) else results:
        op, domain = (r["op"], r.get("domain", "")) if isinstance(r, dict) else (r.op, r.domain)
        key = op_key(op, domain)
        if key not in seen:
            if known and key in known:
                seen[key] = known[key]
            else:
                from . import registry

                seen[key] = registry.family(op, domain or "")
    return dict(sorted(seen.items()))


def write_results(doc: dict, path: str | os.PathLike, *, case_lines: Iterable[bytes] | None = None) -> Path:
    """Write ``doc`` as compact JSON to ``path`` (via a temporary file and a rename), ``"cases"``
    last, one case a line: strict JSON, non-finite numbers in :mod:`conformance.jsonsafe`'s
    encoding.  The first line is the document up to ``"cases":[``, then each case on its own line
    (a comma ending all but the last), then ``]}``: any JSON reader reads it whole, and
    :func:`iter_results` a case at a time.

    Args:
        case_lines: ``doc["cases"]`` already serialised, one compact JSON text per case in order
            (the lines of a run's ``results.jsonl``; any iterable, consumed one line at a time):
            written as they are, giving the bytes serialising the cases would give.
    """
    path = Path(path)
    tmp = path.with_name(path.name + ".tmp")
    head = {k: v for k, v in doc.items() if k != "cases"}
    if case_lines is None:
        case_lines = (json_line(c)[1][:-1] for c in doc.get("cases", []))  # results.jsonl's lines
    with open(tmp, "wb") as f:
        last = None  # written a piece behind: the head's closing brace is not
        for piece in _json_pieces(head, 3):  # the coverage a piece per operator: its text is 9 MB whole
            if last is not None:
                f.write(last.encode())
            last = piece
        f.write(b',"cases":[' if last == "}" else b'{"cases":[')  # "{}": a document of cases alone
        trim_heap()  # each operator's coverage, parsed and written
        sep = b"\n"
        batch: list[bytes] = []  # written 1,024 lines at a time (two writes a line were 15,000 calls)
        for line in case_lines:
            batch.append(line)
            if len(batch) >= 1024:
                f.write(sep + b",\n".join(batch))
                batch.clear()
                sep = b",\n"
        if batch:
            f.write(sep + b",\n".join(batch))
        f.write(b"\n]}\n")
    os.replace(tmp, path)
    return path


def iter_results(path: str | os.PathLike) -> tuple[dict, Iterator[tuple[int, dict]]]:
    """Read a results file a case at a time: ``(document without its cases, iterator of (offset
    of the case's line, case))``, the cases in :func:`load_results`' encoding.  A file in the
    layout :func:`write_results` writes is read line by line (a 100,000-case document took 800 MiB
    whole); any other is read whole by :func:`load_results`.

    Raises:
        ResultsError: missing file, invalid JSON, or not our format (from the first line; a
            damaged case line raises when the iterator reaches it).
    """
    path = Path(path)
    first = _first_line(path)
    if not first.endswith(_CASES_MARKER):
        doc = load_results(path)
        cases = doc.pop("cases")
        return doc, ((-1, c) for c in cases)
    text = first[:-len(_CASES_MARKER)].rstrip(b",")
    head = _decode(path, text + b"}")
    if not isinstance(head, dict) or head.get("format") != FORMAT:
        raise ResultsError(f"{path}: not an onnx-conformance results file (expected format {FORMAT!r})")
    return head, case_lines(path, len(first))


#: How the first line of a results file in :func:`write_results`' layout ends.
_CASES_MARKER = b'"cases":[\n'


def _first_line(path: Path) -> bytes:
    try:
        with open(path, "rb") as f:
            return f.readline()
    except FileNotFoundError:
        raise ResultsError(f"{path}: no such file") from None
    except OSError as exc:
        raise ResultsError(f"{path}: {exc}") from exc


def first_case_offset(path: str | os.PathLike) -> int | None:
    """Where the first case's line starts in a results file in the layout :func:`write_results`
    writes (:func:`case_lines`), ``None`` for a file in any other layout.

    Raises:
        ResultsError: missing or unreadable file.
    """
    first = _first_line(Path(path))
    return len(first) if first.endswith(_CASES_MARKER) else None


def case_lines(path: str | os.PathLike, start: int, stop: int | None = None) -> Iterator[tuple[int, dict]]:
    """``(offset, case)`` of each case line of a results file in :func:`write_results`' layout from
    the line at byte ``start`` (a line's start) on, to the end of the cases or to the first line
    that starts at or after ``stop``.

    Raises:
        ResultsError: a damaged line, or a list of cases that does not end.
    """
    path = Path(path)
    with open(path, "rb") as f:
        f.seek(start)
        offset = start
        for line in f:
            if stop is not None and offset >= stop:
                return
            body = line.rstrip(b"\r\n")
            if body == b"]}":
                return
            case = _decode(path, body[:-1] if body.endswith(b",") else body)
            if not isinstance(case, dict):
                raise ResultsError(f"{path}: a case at byte {offset} is not an object")
            yield offset, case
            offset += len(line)
    raise ResultsError(f"{path}: the list of cases does not end (a truncated file?)")


def case_at(path: str | os.PathLike, offset: int, files: dict | None = None) -> dict:
    """The case on the line at ``offset`` of a results file (an offset :func:`iter_results` gave);
    with ``files`` (a dict the caller keeps), the file is opened once and kept open there.

    Raises:
        ResultsError: not a case's line (the file changed since).
    """
    if files is None:
        with open(path, "rb") as f:
            f.seek(offset)
            line = f.readline().rstrip(b"\r\n")
    else:
        f = files.get(str(path))
        if f is None:
            f = files[str(path)] = open(path, "rb")  # noqa: SIM115 - kept open for the next case
        f.seek(offset)
        line = f.readline().rstrip(b"\r\n")
    case = _decode(Path(path), line[:-1] if line.endswith(b",") else line)
    if not isinstance(case, dict):
        raise ResultsError(f"{path}: no case at byte {offset}")
    return case


def _decode(path: Path, text: bytes):
    """One JSON text of a results file in :func:`load_results`' encoding."""
    try:
        value = orjson.loads(text)  # strict JSON, what our files hold, read 3x faster
    except orjson.JSONDecodeError:  # NaN tokens (another writer's), lone surrogates, huge integers
        try:
            value = json.loads(text, parse_constant=str)
        except ValueError as exc:
            raise ResultsError(f"{path}: not valid JSON: {exc}") from exc
    return json_safe(value) if b"\\ud" in text else value


def _json_pieces(obj, depth: int):
    """:func:`conformance.jsonsafe.dumps` of ``obj`` (compact) as pieces whose concatenation is its
    text: an object with text keys is split into its members down to ``depth`` levels; the last
    piece of a split object is its closing brace.  A mapping that keeps its values as JSON text
    (``json_pieces(key)``: :class:`conformance.coverage.CompactOps`) is written from that text."""
    if isinstance(obj, Mapping) and hasattr(obj, "json_pieces"):
        yield "{"
        for i, k in enumerate(obj):
            yield ("," if i else "") + dumps(k) + ":"
            yield from obj.json_pieces(k)
        yield "}"
    elif depth > 0 and isinstance(obj, dict) and obj and all(type(k) is str for k in obj):
        yield "{"
        for i, (k, v) in enumerate(obj.items()):
            yield ("," if i else "") + dumps(k) + ":"
            yield from _json_pieces(v, depth - 1)
        yield "}"
    else:
        yield dumps(obj, separators=(",", ":"))


def load_results(path: str | os.PathLike) -> dict:
    """Read and check a results file: the document in :mod:`conformance.jsonsafe`'s encoding
    (what the report, diff, JUnit and package renderers take), whoever wrote it.

    Raises:
        ResultsError: missing file, invalid JSON, or not our format.
    """
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
        # another writer's NaN/Infinity tokens read as our encoding's strings; a lone surrogate
        # escape (valid JSON, not valid text) is replaced: the document is JSON-safe as a run's is
        doc = json.loads(text, parse_constant=str)
        if "\\ud" in text:
            doc = json_safe(doc)
    except FileNotFoundError:
        raise ResultsError(f"{path}: no such file") from None
    except (OSError, ValueError) as exc:
        raise ResultsError(f"{path}: not valid JSON: {exc}") from exc
    if not isinstance(doc, dict) or doc.get("format") != FORMAT or not isinstance(doc.get("cases"), list):
        raise ResultsError(f"{path}: not an onnx-conformance results file (expected format {FORMAT!r})")
    return doc
