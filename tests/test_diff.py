"""``onnx-conformance diff``: regressions, fixes, other changes, new and removed cases; text, HTML, exit status."""

import copy
import json
import re

import pytest

from conformance.results import results_document, write_results
from conformance.runner import CaseResult
from conformance.suite import Suite
from conformance.reports.commands import main
from conformance.reports.diff import diff_results, render_diff_html


def _res(name, outcome, message="", ratio=None, op="Abs"):
    outputs = [{"name": "Y", "passed": outcome == "pass", "ratio": ratio}] if ratio is not None else []
    return CaseResult(id=f"{op}-13/float/{name}", op=op, domain="", since_version=13, opset=13,
                      tags={"dtype": "float"}, outcome=outcome, message=message, outputs=outputs)


def _doc(results, backend="ort", content_hash="h1"):
    doc = results_document(Suite(cases=[], seed=0, ops=["Abs"]), {"backend": backend}, results, 1.0)
    doc["suite"]["content_hash"] = content_hash
    return doc


OLD = [_res("a", "pass", ratio=0.01), _res("b", "pass"), _res("c", "fail", "off"), _res("d", "error", "boom"),
       _res("e", "unsupported", "no kernel"), _res("gone", "pass"), _res("f", "pass", ratio=0.01)]
NEW = [_res("a", "pass", ratio=0.02), _res("b", "crash", "<script>alert(1)</script>"), _res("c", "pass"),
       _res("d", "unsupported", "declined"), _res("e", "unsupported", "no kernel"), _res("new", "fail", "x"),
       _res("f", "pass", ratio=0.9)]


def test_categories():
    d = diff_results(_doc(OLD), _doc(NEW))
    ids = {k: [r["id"].rsplit("/", 1)[1] for r in d[k]] for k in ("regressions", "fixes", "changed", "added",
                                                                     "removed", "drift")}
    assert ids == {"regressions": ["b"], "fixes": ["c"], "changed": ["d"], "added": ["new"], "removed": ["gone"],
                   "drift": ["f"]}
    assert d["unchanged"] == 2  # a (small accuracy change) and e
    r = d["regressions"][0]
    assert (r["old"], r["new"], r["new_message"]) == ("pass", "crash", "<script>alert(1)</script>")
    assert d["same_suite"] and not d["notes"]
    assert d["by_op"]["Abs"] == {"regressions": 1, "fixes": 1, "changed": 1, "added": 1, "removed": 1, "drift": 1}


def test_different_suites_and_duplicates_are_noted():
    old = _doc(OLD, content_hash="h1")
    new = _doc(NEW + [_res("a", "fail")], content_hash="h2")
    d = diff_results(old, new)
    assert not d["same_suite"]
    assert any("different suites" in n for n in d["notes"])
    assert any("more than once" in n for n in d["notes"])


def test_html_is_escaped_and_lists_everything():
    page = render_diff_html(diff_results(_doc(OLD), _doc(NEW)))
    assert "<script>alert(1)</script>" not in page
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in page
    assert "<script" not in page.lower()  # a static page
    for cid in ("Abs-13/float/b", "Abs-13/float/c", "Abs-13/float/d", "Abs-13/float/new", "Abs-13/float/gone"):
        assert cid in page
    assert re.search(r'<section id="regressions">\s*<h2>Regressions \(1\)</h2>', page)


@pytest.mark.parametrize("new, status", [(NEW, 1), ([_res(x.id.rsplit("/", 1)[1], "pass") for x in OLD], 0)])
def test_cli_exit_status_and_outputs(tmp_path, capsys, new, status):
    o, n = tmp_path / "old.json", tmp_path / "new.json"
    write_results(_doc(OLD), o)
    write_results(_doc(new), n)
    html = tmp_path / "diff.html"
    assert main(["diff", str(o), str(n), "--html", str(html)]) == status
    out = capsys.readouterr().out
    if status:
        assert "1 regression(s)" in out and "Abs-13/float/b" in out and "<script>alert(1)</script>" in out
    else:
        assert "0 regression(s)" in out
    assert html.stat().st_size > 1000


def test_cli_bad_input(tmp_path, capsys):
    good = tmp_path / "r.json"
    write_results(_doc(OLD), good)
    (tmp_path / "junk.json").write_text("{not json")
    assert main(["diff", str(good), str(tmp_path / "missing.json")]) == 2
    assert "no such file" in capsys.readouterr().err
    assert main(["diff", str(tmp_path / "junk.json"), str(good)]) == 2
    assert "not valid JSON" in capsys.readouterr().err


def test_real_runs_diff(tmp_path, toy_suite):
    """Two results documents of the real toy suite: an onnxruntime-like run against an edited copy."""
    from conformance.backends import resolve_backend
    from conformance.runner import run_cases

    backend = resolve_backend("onnxruntime")
    res = run_cases(toy_suite.cases, backend)
    old = results_document(toy_suite, backend.environment(), res, 1.0)
    new = copy.deepcopy(old)
    passing = [c for c in new["cases"] if c["outcome"] == "pass"]
    passing[0]["outcome"], passing[0]["message"] = "fail", "Y: off by one"
    d = diff_results(old, new)
    assert [r["id"] for r in d["regressions"]] == [passing[0]["id"]]
    assert d["unchanged"] == len(old["cases"]) - 1
    json.dumps(d)  # plain data
