"""Every output format, from results holding every awkward value a backend can produce (issue 20).

A runtime under test is wrong in every way: NaN and infinities where numbers are expected (and
where they are not), the largest double, integers beyond 2**53 and beyond int64, empty and huge
outputs, outputs of the wrong dtype or rank, messages with markup, control characters, lone
surrogates and non-ASCII text.  Each test renders results.json, report.html (and ``report``'s
re-render), JUnit, diff (terminal and HTML), the submission package (and ``verify``), the
scoreboard and the terminal tables, and checks that each is well-formed: strict JSON (``orjson``
refuses NaN tokens and invalid UTF-8), XML that parses, pages that are valid UTF-8 with strict
JSON embedded.
"""

from __future__ import annotations

import io
import json
import math
import re
import xml.etree.ElementTree as ET
from html.parser import HTMLParser

import orjson
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from rich.console import Console

import faulty
from conformance.cli import main, summary_table
from conformance.jsonsafe import decode_number, dumps, json_safe, written
from conformance.reports.diff import diff_results, print_diff, render_diff_html
from conformance.reports.html import render_html
from conformance.reports.junit import junit_tree
from conformance.reports.scoreboard import render_scoreboard
from conformance.results import FORMAT, load_results, write_results
from conformance.runner import OUTCOMES

_SCRIPT_JSON = re.compile(r'<script type="application/json"[^>]*>(.*?)</script>', re.S)


def _strict(data: bytes):
    """orjson's parse: strict JSON (no NaN/Infinity tokens) in valid UTF-8."""
    return orjson.loads(data)


def _check_page(page: str | bytes) -> None:
    """A page of ours: valid UTF-8, parses as HTML, every embedded JSON block strict."""
    raw = page.encode("utf-8") if isinstance(page, str) else page
    text = raw.decode("utf-8")  # strict: raises on a lone surrogate written as bytes
    HTMLParser().feed(text)
    for block in _SCRIPT_JSON.findall(text):
        _strict(block.encode("utf-8"))


# ------------------------------------------------------------------ the encoding itself


@pytest.mark.parametrize("x, enc", [(math.nan, "NaN"), (math.inf, "Infinity"), (-math.inf, "-Infinity"), (1.5, 1.5)])
def test_encoding_round_trips_through_python_and_reads_the_old_spelling(x, enc):
    assert json_safe(x) == enc
    back = decode_number(json.loads(dumps({"v": x}))["v"])
    assert (math.isnan(back) and math.isnan(x)) or back == x
    assert float(enc) == x or (math.isnan(float(enc)) and math.isnan(x))  # Python's float() reads it too
    old = {"NaN": "nan", "Infinity": "inf", "-Infinity": "-inf"}.get(enc)
    if old:
        assert decode_number(old) == back or math.isnan(decode_number(old))


def test_written_walks_only_awkward_values():
    plain = {"a": [1, 2.5, "x"], "b": None}
    value, text = written(plain)
    assert value is plain and _strict(text.encode()) == plain
    value, text = written({"a": float("nan"), "m": "x\udc80", "big": 2**70})
    assert _strict(text.encode()) == {"a": "NaN", "m": "x\ufffd", "big": float(2**70)}
    assert json.loads(text)["big"] == 2**70  # exact for Python's reader


# ------------------------------------------------------------------ a backend wrong in every way


def _all_formats(out, bundle, tmp_path, other=None):
    """Render every format from the run in ``out`` and check each (see the module docstring)."""
    _strict((out / "results.json").read_bytes())
    for line in (out / "results.jsonl").read_bytes().splitlines():
        _strict(line)
    _check_page((out / "report.html").read_bytes())
    assert main(["report", str(out / "results.json"), "--out", str(tmp_path / "again.html")]) == 0
    _check_page((tmp_path / "again.html").read_bytes())
    assert main(["junit", str(out / "results.json"), "--out", str(tmp_path / "junit.xml")]) == 0
    ET.parse(tmp_path / "junit.xml")
    if other is not None:
        assert main(["diff", str(other / "results.json"), str(out / "results.json"),
                     "--html", str(tmp_path / "diff.html")]) in (0, 1)
        _check_page((tmp_path / "diff.html").read_bytes())
    assert main(["package", str(out), "--bundle", str(bundle), "--out", str(tmp_path / "pkg.zip")]) == 0
    assert main(["verify", str(tmp_path / "pkg.zip")]) == 0


def test_awkward_backend_every_format(tmp_path, capsys):
    bundle, out, ort = tmp_path / "b", tmp_path / "awk", tmp_path / "ort"
    assert main(["generate", "--ops", "Abs", "--out", str(bundle)]) == 0
    assert main(["run", "--backend", "onnxruntime", "--bundle", str(bundle), "--out", str(ort)]) in (0, 1)
    n_kinds = len(faulty.AWKWARD_OUTPUTS) + len(faulty.AWKWARD_MESSAGES)
    assert main(["run", "--backend", "faulty:awkward", "--bundle", str(bundle), "--out", str(out),
                 "--jobs", "1"]) == 1
    doc = json.loads((out / "results.json").read_text(encoding="utf-8"))
    value_cases = [c for c in doc["cases"] if not c.get("expect_error")]
    assert len(value_cases) >= n_kinds  # every awkward output and message was met
    reasons = " | ".join(o.get("reason") or "" for c in doc["cases"] for o in c["outputs"])
    messages = " | ".join(c["message"] for c in doc["cases"])
    for needle in ("dtype object", "dtype bool", "dtype int64", "dtype uint64", "shape [1048576]", "shape [0]",
                   "differ in NaN/Inf", "not an array"):
        assert needle in reasons, needle
    assert "\ufffd" in messages and "[bold red]" in messages and "\u4e2d" in messages
    assert "Infinity" in [o.get("ratio") for c in doc["cases"] for o in c["outputs"]]
    assert doc["backend"]["nan"] == "NaN" and doc["backend"]["awkward"] == "1.0 <b>\ufffd</b>"
    _all_formats(out, bundle, tmp_path, other=ort)
    # the terminal table shows markup-looking names as text
    printed = capsys.readouterr().out
    assert "awkward" in printed and "Traceback" not in printed


def test_scoreboard_with_an_awkward_backend(tmp_path, capsys):
    out = tmp_path / "sb"
    assert main(["scoreboard", "--backends", "onnxruntime,faulty:awkward", "--ops", "Abs", "--depth", "smoke",
                 "--out", str(out)]) == 0
    _check_page((out / "scoreboard.html").read_bytes())
    for name in ("onnxruntime", "faulty_awkward"):
        _check_page((out / name / "report.html").read_bytes())


@pytest.mark.parametrize("broken, shown", [("write_html", True), ("write_results", False)])
def test_scoreboard_goes_on_past_a_failing_backend(toy_registered, tmp_path, monkeypatch, capsys, broken, shown):
    """One backend's report (or its whole run) fails: the next backend still runs, the scoreboard
    is written and names the failure, and the exit status is 1."""
    import conformance.execute
    import conformance.reports.html
    import conformance.results

    module = conformance.reports.html if broken == "write_html" else conformance.results
    real = getattr(module, broken)

    def flaky(doc, path, *a, **kw):
        if "onnx-reference" in str(path):
            raise ValueError("Out of range float values are not JSON compliant")
        return real(doc, path, *a, **kw)

    monkeypatch.setattr(module, broken, flaky)
    out = tmp_path / "sb"
    assert main(["scoreboard", "--backends", "onnx-reference,onnxruntime", "--ops", "Abs", "--out", str(out)]) == 1
    printed = capsys.readouterr().out
    assert "failed onnx-reference" in printed and "Out of range float" in printed
    assert (out / "onnxruntime" / "report.html").is_file()
    page = (out / "scoreboard.html").read_text(encoding="utf-8")
    assert "Out of range float" in page
    # a report that failed still has its results on the scoreboard; a run that failed has none
    assert (">onnx-reference<" in page.replace("<th>", ">").replace("</th>", "<")) == shown or \
        ("its results are shown" in page) == shown


# ------------------------------------------------------------------ property: the results schema

_awkward_float = st.one_of(st.floats(allow_nan=True, allow_infinity=True),
                           st.sampled_from([math.nan, math.inf, -math.inf, 1.7976931348623157e308, -0.0, 5e-324]))
_awkward_int = st.one_of(st.integers(), st.sampled_from([2**53 + 1, -(2**63), 2**64 - 1, 2**70, -(2**100)]))
_awkward_text = st.one_of(
    st.text(max_size=30),
    st.sampled_from(faulty.AWKWARD_MESSAGES[:3] + ["", "NaN", "Infinity", "\udc80", "a\ud800b", "\x00", "]]>"]),
)
_number = st.one_of(_awkward_float, _awkward_int, st.none(), _awkward_text, st.booleans())
_scalar = st.one_of(_number, _awkward_text)
_value = st.recursive(_scalar, lambda inner: st.one_of(st.lists(inner, max_size=3),
                                                       st.dictionaries(_awkward_text, inner, max_size=3)),
                      max_leaves=6)


@st.composite
def _output(draw):
    return {"name": draw(_awkward_text), "passed": draw(st.booleans()), "reason": draw(_awkward_text),
            "max_abs_err": draw(_number), "ratio": draw(_number),
            "worst_index": draw(st.one_of(st.lists(_awkward_int, max_size=4), _value)),
            "expected_at_worst": draw(_number), "actual_at_worst": draw(_number),
            "tolerance": draw(st.one_of(st.none(), st.fixed_dictionaries(
                {"atol": _number, "rtol": _number, "spread": _number, "variants": st.lists(_awkward_text, max_size=2),
                 "exact": st.booleans()})))}


@st.composite
def _record(draw, k):
    tags = draw(st.dictionaries(st.sampled_from(["dtype", "axis", "numerics", "opset", "note", "\udc80"]),
                                _value, max_size=4))
    return {"id": f"Op-{k}/{draw(_awkward_text)}", "op": draw(st.sampled_from(["Abs", "Pow", "[bold]X", "<b>Y"])),
            "domain": "", "since_version": draw(st.one_of(_awkward_int, st.none())),
            "opset": draw(st.one_of(_awkward_int, st.none())), "tags": tags,
            "outcome": draw(st.sampled_from(OUTCOMES)), "message": draw(_awkward_text),
            "phase": draw(st.sampled_from(["prepare", "run", "compare", ""])),
            "outputs": draw(st.lists(_output(), max_size=3)),
            "expect_error": draw(st.one_of(st.none(), _awkward_text)),
            "duration_s": draw(st.one_of(_awkward_float, st.none()))}


@st.composite
def _doc(draw):
    n = draw(st.integers(0, 6))
    cases = [draw(_record(k)) for k in range(n)]
    return {"format": FORMAT, "suite": {"seed": 0, "content_hash": "x", "families": {}, "n_cases": n},
            "backend": {"backend": draw(_awkward_text), "version": draw(_value)}, "run": {}, "host": {},
            "summary": {}, "duration_s": draw(_awkward_float), "cases": cases}


@settings(max_examples=15, deadline=None, database=None, derandomize=True,
          suppress_health_check=list(HealthCheck))
@given(doc=_doc(), other=_doc())
def test_every_format_renders_any_results(doc, other, tmp_path_factory):
    tmp = tmp_path_factory.mktemp("awkward")
    # results.json: strict, and what reads it back renders the same way
    write_results(doc, tmp / "results.json")
    _strict((tmp / "results.json").read_bytes())
    again = load_results(tmp / "results.json")
    # another writer's file: NaN/Infinity tokens, lone surrogate escapes
    (tmp / "foreign.json").write_text(json.dumps(doc), encoding="ascii")
    foreign = load_results(tmp / "foreign.json")
    other = json_safe(other)
    # the documents renderers meet: a run's (its records as written: json_safe) and files'
    for d in (json_safe(doc), again, foreign):
        _check_page(render_html(d))
        ET.fromstring(ET.tostring(junit_tree(d).getroot()))
        d2 = diff_results(other, d)
        print_diff(d2, Console(file=io.StringIO(), width=120))
        _check_page(render_diff_html(d2))
        _check_page(render_scoreboard({"a": d, "b": other}))
        Console(file=io.StringIO(), width=120).print(summary_table(d["cases"], str(d["backend"].get("backend"))))


def test_openvino_and_tract_end_to_end(tmp_path):
    """The issue's selection on two real runtimes that are wrong in many ways (OpenVINO returns
    finite values where NaN or infinities are expected and narrows types; tract panics): every
    report and the scoreboard are written and well-formed."""
    pytest.importorskip("openvino")
    pytest.importorskip("tract")
    out = tmp_path / "sb"
    assert main(["scoreboard", "--backends", "openvino,tract", "--ops", "ReduceMax,Mod,Softmax",
                 "--depth", "smoke", "--out", str(out)]) == 0
    _check_page((out / "scoreboard.html").read_bytes())
    for name in ("openvino", "tract"):
        doc = _strict((out / name / "results.json").read_bytes())
        outcomes = {c["outcome"] for c in doc["cases"]}
        assert "pass" in outcomes and outcomes & {"fail", "crash", "error"}, (name, outcomes)
        _check_page((out / name / "report.html").read_bytes())
    ov = _strict((out / "openvino" / "results.json").read_bytes())
    # the value that ended the first such run: an infinite error/tolerance ratio
    assert any(o.get("ratio") == "Infinity" for c in ov["cases"] for o in c["outputs"])
