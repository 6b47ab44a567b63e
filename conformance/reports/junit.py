"""JUnit XML export of a results document, for CI dashboards.

One ``<testcase>`` per case (``classname`` = operator, ``name`` = case id, ``time`` =
its duration), grouped into one ``<testsuite>`` per operator.  Outcomes map to:

=============  ============================================================
pass           a plain testcase
fail, xpass    ``<failure type="fail|xpass">``
error, crash,  ``<error type="error|crash|timeout">``
timeout
unsupported    ``<skipped type="unsupported">`` with the backend's message
xfail, skip    ``<skipped type="xfail|skip">``
=============  ============================================================

Element bodies carry the full message, each output's expected and actual value at the
worst element, and the command that reproduces the case.  The tree is built with
:mod:`xml.etree.ElementTree` (which escapes markup); characters that XML 1.0 cannot
carry at all (NUL, ESC, ...) are written as ``\\xNN`` so the file always parses.
"""

from __future__ import annotations

import os
import re
import xml.etree.ElementTree as ET
from collections import Counter, defaultdict
from pathlib import Path

from .common import repro_command, summarize

#: outcome -> (child element, or None for a plain pass)
MAPPING = {
    "pass": None,
    "fail": "failure",
    "xpass": "failure",
    "error": "error",
    "crash": "error",
    "timeout": "error",
    "unsupported": "skipped",
    "xfail": "skipped",
    "skip": "skipped",
}

_BAD_XML = re.compile("[^\u0009\u000a\u000d\u0020-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]")


def xml_text(s) -> str:
    """``s`` as text that XML 1.0 can carry: forbidden characters become ``\\xNN`` / ``\\uNNNN``."""
    s = "" if s is None else str(s)
    return _BAD_XML.sub(lambda m: f"\\x{ord(m.group()):02x}" if ord(m.group()) < 256 else f"\\u{ord(m.group()):04x}", s)


def _first_line(s: str, limit: int = 300) -> str:
    s = (s or "").strip().split("\n", 1)[0]
    return s if len(s) <= limit else s[:limit] + " ..."


def _details(case: dict, repro: str | None) -> str:
    lines = []
    if case.get("message"):
        lines.append(str(case["message"]))
    for o in case.get("outputs") or ():
        if o.get("passed"):
            continue
        tol = o.get("tolerance") or {}
        lines.append(f"output {o.get('name')}: worst index {o.get('worst_index')}, expected {o.get('expected_at_worst')!r}, "
                     f"actual {o.get('actual_at_worst')!r}, max |err| {o.get('max_abs_err')!r}, "
                     f"err/tol {o.get('ratio')!r} (atol {tol.get('atol')!r}, rtol {tol.get('rtol')!r})")
    tags = case.get("tags") or {}
    if tags:
        lines.append("tags: " + ", ".join(f"{k}={v}" for k, v in sorted(tags.items())))
    if repro:
        lines.append(f"reproduce: {repro}")
    return "\n".join(lines)


def junit_tree(doc: dict) -> ET.ElementTree:
    """Build the JUnit XML tree of a results document (see the module docstring)."""
    cases = doc.get("cases") or []
    run, suite = doc.get("run") or {}, doc.get("suite") or {}
    backend = (doc.get("backend") or {}).get("backend", "backend")
    by_op: dict[str, list[dict]] = defaultdict(list)
    for c in cases:
        by_op[str(c.get("op", ""))].append(c)

    def counts(cs) -> dict[str, str]:
        s = summarize(cs)
        kinds: Counter = Counter()
        for o, n in s.items():
            kinds[MAPPING.get(o, "error")] += n
        return {"tests": str(len(cs)), "failures": str(kinds.get("failure", 0)), "errors": str(kinds.get("error", 0)),
                "skipped": str(kinds.get("skipped", 0)),
                "time": f"{sum(float(c.get('duration_s') or 0) for c in cs):.6f}"}

    root = ET.Element("testsuites", {"name": xml_text(f"onnx-conformance {backend}"), **counts(cases)})
    for op in sorted(by_op):
        cs = by_op[op]
        ts = ET.SubElement(root, "testsuite", {"name": xml_text(f"onnx-conformance.{backend}.{op}"), **counts(cs)})
        props = ET.SubElement(ts, "properties")
        for name, value in (("backend", backend), ("suite_content_hash", suite.get("content_hash")),
                            ("suite_seed", suite.get("seed")), ("backend_spec", run.get("backend_spec"))):
            if value is not None:
                ET.SubElement(props, "property", {"name": name, "value": xml_text(value)})
        for c in cs:
            outcome = str(c.get("outcome"))
            tc = ET.SubElement(ts, "testcase", {"classname": xml_text(op), "name": xml_text(c.get("id")),
                                                "time": f"{float(c.get('duration_s') or 0):.6f}"})
            kind = MAPPING.get(outcome, "error")
            if kind is None:
                continue
            repro = repro_command(run, str(c.get("id")), suite)
            msg = _first_line(str(c.get("message") or "")) or outcome
            child = ET.SubElement(tc, kind, {"type": xml_text(outcome), "message": xml_text(f"{outcome}: {msg}")})
            child.text = xml_text(_details(c, repro))
    return ET.ElementTree(root)


def write_junit(doc: dict, path: str | os.PathLike) -> Path:
    """Write the JUnit XML of ``doc`` to ``path`` (UTF-8, with an XML declaration)."""
    path = Path(path)
    tree = junit_tree(doc)
    ET.indent(tree, space=" ")
    tree.write(path, encoding="utf-8", xml_declaration=True)
    return path
