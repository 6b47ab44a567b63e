"""JUnit XML export: well-formed, one testcase per case, outcomes mapped, hostile text survives."""

import xml.etree.ElementTree as ET

from conformance.results import results_document, write_results
from conformance.runner import OUTCOMES, CaseResult
from conformance.suite import Suite
from conformance.reports.commands import main
from conformance.reports.junit import junit_tree, write_junit

HOSTILE = "<script>alert(1)</script> & ]]> \x00\x1b[31m \ud800 \"q\" 'q'"


def _res(i, outcome, message="", op="Abs"):
    outputs = []
    if outcome == "fail":
        outputs = [{"name": "Y", "passed": False, "reason": "off", "max_abs_err": 0.5, "ratio": 50.0,
                    "worst_index": [1, 2], "expected_at_worst": 1.25, "actual_at_worst": 1.75,
                    "tolerance": {"atol": 0.01, "rtol": 0.0}}]
    return CaseResult(id=f"{op}-13/float/{i}", op=op, domain="", since_version=13, opset=13,
                      tags={"dtype": "float"}, outcome=outcome, message=message, outputs=outputs, duration_s=0.25)


def _doc():
    results = [_res(k, o, f"{o} happened" if o != "pass" else "") for k, o in enumerate(OUTCOMES)]
    results.append(_res(99, "error", HOSTILE, op="Relu"))
    run = {"backend_spec": "onnxruntime", "backend_options": {}, "bundle": "/b", "ops": ["Abs"], "seed": 0}
    return results_document(Suite(cases=[], seed=0, ops=["Abs", "Relu"]), {"backend": "ort"}, results, 1.0, run)


def test_well_formed_and_mapped(tmp_path):
    path = write_junit(_doc(), tmp_path / "junit.xml")
    root = ET.parse(path).getroot()  # parses: well-formed despite NUL, ESC and a lone surrogate
    assert root.tag == "testsuites"
    assert root.get("tests") == str(len(OUTCOMES) + 1)
    # fail + xpass = failures; error + crash + timeout + the hostile error = errors; unsupported/xfail/skip = skipped
    assert (root.get("failures"), root.get("errors"), root.get("skipped")) == ("2", "4", "3")
    suites = {s.get("name"): s for s in root.findall("testsuite")}
    assert set(suites) == {"onnx-conformance.ort.Abs", "onnx-conformance.ort.Relu"}
    cases = {tc.get("name"): tc for tc in root.iter("testcase")}
    assert len(cases) == len(OUTCOMES) + 1
    assert all(tc.get("classname") == tc.get("name").split("-")[0] for tc in cases.values())
    kinds = {}
    for k, o in enumerate(OUTCOMES):
        tc = cases[f"Abs-13/float/{k}"]
        child = list(tc)
        kinds[o] = (child[0].tag, child[0].get("type")) if child else None
        assert tc.get("time") == "0.250000"
    assert kinds == {"pass": None, "fail": ("failure", "fail"), "error": ("error", "error"),
                     "unsupported": ("skipped", "unsupported"), "crash": ("error", "crash"),
                     "timeout": ("error", "timeout"), "xfail": ("skipped", "xfail"), "xpass": ("failure", "xpass"),
                     "skip": ("skipped", "skip")}
    uns = cases[f"Abs-13/float/{OUTCOMES.index('unsupported')}"].find("skipped")
    assert uns.get("message") == "unsupported: unsupported happened"
    fail = cases[f"Abs-13/float/{OUTCOMES.index('fail')}"].find("failure")
    assert "expected 1.25, actual 1.75" in fail.text and "worst index [1, 2]" in fail.text
    assert "reproduce: onnx-conformance run --backend onnxruntime --bundle /b --match Abs-13/float/1 --out repro" in fail.text


def test_hostile_message_round_trips_as_text(tmp_path):
    path = write_junit(_doc(), tmp_path / "junit.xml")
    raw = path.read_text(encoding="utf-8")
    assert "<script>" not in raw
    err = ET.parse(path).getroot().find(".//testcase[@name='Relu-13/float/99']/error")
    assert err.text.startswith("<script>alert(1)</script> & ]]> \\x00\\x1b[31m \\ud800 \"q\" 'q'")
    assert err.get("message").startswith("error: <script>alert(1)</script>")


def test_tree_is_an_elementtree():
    tree = junit_tree(_doc())
    assert isinstance(tree, ET.ElementTree)
    assert ET.fromstring(ET.tostring(tree.getroot())).tag == "testsuites"


def test_cli(tmp_path, capsys):
    r = tmp_path / "results.json"
    write_results(_doc(), r)
    out = tmp_path / "j.xml"
    assert main(["junit", str(r), "--out", str(out)]) == 0
    assert "10 testcases" in capsys.readouterr().out
    assert ET.parse(out).getroot().get("tests") == "10"
    assert main(["junit", str(tmp_path / "nope.json"), "--out", str(out)]) == 2
