"""HTML report: escaping, embedded case data, matrices, accuracy plots, repro commands, scaling."""

import base64
import html as htmllib
import json
import re
import shlex
import time

import pytest

from conformance.results import results_document
from conformance.runner import CaseResult
from conformance.suite import Suite
from conformance.reports.common import repro_command, score
from conformance.reports.html import case_data, data_matrix, decode_ids, json_for_script, matrix, render_html, top_problems


def _doc(results, run=None):
    return results_document(Suite(cases=[], seed=0, ops=["Abs"]), {"backend": "evil"}, results, 1.0, run)


def _res(i, outcome, message="", dtype="float", tags=None, outputs=None, opset=13):
    return CaseResult(id=f"Abs-13/{dtype}/{i}", op="Abs", domain="", since_version=13, opset=opset,
                      tags={"dtype": dtype, **(tags or {})}, outcome=outcome, message=message,
                      outputs=outputs or [])


def _out(name, ratio, passed=True, expected=1.0, actual=1.0, idx=(0,)):
    return {"name": name, "passed": passed, "reason": "" if passed else "off", "max_abs_err": abs(actual - expected),
            "ratio": ratio, "worst_index": list(idx), "expected_at_worst": expected, "actual_at_worst": actual,
            "tolerance": {"atol": 1e-6, "rtol": 1e-5, "spread": 0.0, "variants": ["a", "b"], "exact": False}}


def _embedded(page: str) -> dict:
    m = re.search(r'<script type="application/json" id="case-data">(.*?)</script>', page, re.S)
    assert m, "no case-data block"
    return json.loads(m.group(1), parse_constant=lambda c: pytest.fail(f"non-JSON constant {c} in the data"))


def test_backend_message_is_escaped():
    html = render_html(_doc([_res(0, "error", "<script>alert(1)</script>")]))
    assert "<script>alert(1)</script>" not in html
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in html  # the "most frequent problems" table, as text


@pytest.mark.parametrize("message", [
    "<script>alert(1)</script>",
    "</script><script>alert(2)</script>",
    "<!-- <script> </ScRiPt > & \u2028 ]]> 'quotes' \"double\"",
])
def test_hostile_message_stays_text_inside_the_json_block(message):
    page = render_html(_doc([_res(0, "error", message), _res(1, "pass")]))
    # exactly our two script elements, and the data block is intact JSON
    assert len(re.findall(r"<script\b", page, re.I)) == 2
    assert len(re.findall(r"</script", page, re.I)) == 2
    data = _embedded(page)
    assert message in data["strings"]
    block = page.split('id="case-data">', 1)[1].split("</script>", 1)[0]
    assert "<" not in block and ">" not in block and "&" not in block
    assert "\\u003cscript\\u003e" in block or "\\u003c!--" in block


def test_json_for_script_round_trips():
    obj = {"a": "</script><b>&amp;</b>", "n": [1, 2.5, None, True], "u": "\u2028\u2029é"}
    assert json.loads(str(json_for_script(obj))) == obj


def test_matrix_and_problem_list():
    html = render_html(_doc([_res(0, "pass"), _res(1, "fail", "Y: off", "float16"),
                             _res(2, "unsupported", "no kernel", "bfloat16")]))
    for text in ("float16", "bfloat16", "Y: off", "no kernel"):
        assert text in html
    assert "33.3%" in html  # 1 pass of 3
    # every case travels in the data block, the list shows non-passing ones first and by default
    data = _embedded(html)
    assert data["n"] == 3
    assert decode_ids(data) == ["Abs-13/float16/1", "Abs-13/bfloat16/2", "Abs-13/float/0"]
    assert [data["outcomes"][k] for k in data["c"]["oc"]] == ["fail", "unsupported", "pass"]
    assert '<option value="!pass">not passed</option>' in html


def test_matrix_cell_is_coloured_by_its_worst_outcome():
    m = matrix([_res(0, "pass").to_json(), _res(1, "error").to_json(), _res(2, "pass", dtype="double").to_json()])
    assert m["worst"][("Abs", "float")] == "error"
    assert m["worst"][("Abs", "double")] == "pass"


def test_feature_matrices_and_cell_links():
    cases = [
        _res(0, "pass", tags={"axis": -1, "outputs": "Y", "params": "inputs", "opset": 17}),
        _res(1, "fail", "bad", tags={"axis": -1, "outputs": "Y,Mean", "params": "initializers", "opset": 18}),
        _res(2, "pass", tags={"axis": 0, "training_mode": 1}, opset=21),  # opset from the case field
    ]
    doc = _doc(cases)
    data = case_data(doc)
    axis = data_matrix(data, "axis")
    assert axis["cells"][("Abs", "-1")] == {"pass": 1, "fail": 1}
    assert axis["worst"][("Abs", "-1")] == "fail" and axis["worst"][("Abs", "0")] == "pass"
    assert data_matrix(data, "opset")["cols"] == ["17", "18", "21"]
    assert data_matrix(data, "training_mode")["cells"][("Abs", "1")] == {"pass": 1}
    # the fast path agrees with the plain one
    for key in ("dtype", "axis", "outputs", "params", "opset", "training_mode"):
        slow = matrix([c.to_json() for c in cases], "op", key)
        assert data_matrix(data, key)["cells"] == slow["cells"], key
    page = render_html(doc)
    for key in ("axis", "outputs", "training_mode", "opset", "params"):
        assert f'data-feature="{key}"' in page
    # cells link to their cases through the URL fragment the page's script reads
    assert 'href="#cases?op=Abs&amp;f=axis&amp;v=-1&amp;oc=all"' in page
    assert 'href="#cases?op=Abs&amp;dtype=float&amp;oc=all"' in page


def test_case_data_is_compact_and_keeps_the_worst_element():
    nan = float("nan")
    cases = [
        _res(0, "pass", outputs=[_out("Y", 0.25)]),
        _res(1, "fail", "Y: off", outputs=[_out("Y", 7.5, False, expected=2.6796875, actual=0.560546875, idx=(1, 2)),
                                          _out("Mean", nan, True, expected=nan, actual=float("inf"))]),
    ]
    data = json.loads(str(json_for_script(case_data(_doc(cases)))))
    c, s = data["c"], data["strings"]
    n = data["n"]
    assert all(len(v) == n for v in c.values())
    assert decode_ids(data) == ["Abs-13/float/1", "Abs-13/float/0"] and c["idp"] == [0, 13] and c["ids"] == ["Abs-13/float/1", "0"]
    assert all(len(v) == n for v in data["tags"]["col"] + data["feat"]["col"])
    failing, passing = c["out"][0], c["out"][1]
    assert [s[passing[0][0]], passing[0][1]] == ["Y", 0.25]  # a passing output: name and err/tol only
    y, mean = failing
    assert s[y[0]] == "Y" and y[1] == 0 and y[2] == 7.5 and y[7] == [1, 2]
    assert y[8] == 2.6796875 and y[9] == 0.560546875  # full precision where it matters
    assert mean[2] == "NaN" and mean[8] == "NaN" and mean[9] == "Infinity"


def test_top_problems_group_messages_with_numbers():
    cases = [_res(k, "fail", f"Y: {k} of 8 element(s) out of tolerance").to_json() for k in range(5)]
    cases += [_res(9, "crash", "backend process killed by SIGSEGV").to_json(), _res(10, "pass").to_json()]
    g = top_problems(cases)
    assert g[0]["count"] == 5 and g[0]["pattern"] == "Y: # of # element(s) out of tolerance"
    assert g[0]["query"] == "element(s) out of tolerance"
    assert g[1]["outcome"] == "crash" and g[1]["count"] == 1


def test_repro_command_quotes_every_argument():
    run = {"backend_spec": "my pkg.mod:Backend", "backend_options": {"device": "CPU", "x": "a b"},
           "bundle": "/data/my bundle", "ops": ["Abs"], "seed": 0, "match": None, "argv": []}
    cid = "Abs-13/float/it's"
    cmd = repro_command(run, cid)
    assert shlex.split(cmd) == ["onnx-conformance", "run", "--backend", "my pkg.mod:Backend",
                                "--backend-option", "device=CPU", "--backend-option", "x=a b",
                                "--bundle", "/data/my bundle", "--match", cid, "--out", "repro"]
    run2 = {"backend_spec": "onnxruntime", "backend_options": {}, "bundle": None, "ops": ["A", "B"], "seed": 3}
    assert repro_command(run2, "A/x") == "onnx-conformance run --backend onnxruntime --ops A,B --seed 3 --match A/x --out repro"
    assert repro_command({}, "x") is None
    run3 = {"backend_spec": "ort", "suite": "onnx-node", "bundle": None, "variants": ["inputs", "initializers"],
            "xfail": "my xfail.toml"}
    assert repro_command(run3, "test_abs") == ("onnx-conformance run --backend ort --suite onnx-node --variants "
                                               "inputs,initializers --xfail 'my xfail.toml' --match test_abs --out repro")
    # the page gets the prefix and quotes the id itself, the same way
    data = case_data(_doc([_res(0, "fail")], run))
    assert data["repro"] + " --match " + shlex.quote("Abs-13/float/0") + " --out repro" == repro_command(run, "Abs-13/float/0")


def test_score_definition():
    assert score({"pass": 3, "xfail": 1, "fail": 2, "skip": 4}) == (pytest.approx(100 * 4 / 6), 4, 6)
    assert score({"skip": 2})[0] is None


def test_accuracy_plots_are_matplotlib_svg_and_deterministic():
    cases = [_res(k, "pass", dtype=dt, outputs=[_out("Y", r)]) for k, (dt, r) in
             enumerate([("float", 0.0), ("float", 1e-3), ("float", 0.5), ("float16", 0.02), ("float16", 0.0)])]
    page = render_html(_doc(cases))
    uris = re.findall(r'<img src="data:image/svg\+xml;base64,([A-Za-z0-9+/=]+)"', page)
    assert len(uris) == 1  # one figure per operator
    svg = base64.b64decode(uris[0]).decode()
    assert "<svg" in svg and "matplotlib" in svg.lower()
    assert "float16" in svg and "Abs" in svg and "1 (limit)" in svg
    assert render_html(_doc(cases)) == page  # same results, same bytes
    # the summary table beside the plots
    assert re.search(r"<td>Abs</td><td>float</td><td class=\"num\">3</td><td class=\"num\">1</td>", page)


def test_environment_and_identity_in_headline(toy_suite):
    doc = results_document(toy_suite, {"backend": "onnxruntime", "onnxruntime": "1.2.3"},
                           [_res(0, "pass")], 2.5, {"backend_spec": "onnxruntime", "argv": ["run"]})
    page = render_html(doc)
    text = " ".join(htmllib.unescape(re.sub(r"<[^>]+>", " ", page)).split())
    from conformance import __version__

    for needle in ("onnxruntime 1.2.3", toy_suite.content_hash, f"onnx-conformance {__version__}", "seed", "Score"):
        assert needle in text, needle


def test_render_scales_linearly_to_100k_cases():
    """Render time and size per case, measured at 5k and 20k cases, extrapolated to 100k.

    Time is the process's CPU time (rendering is single-threaded and CPU-bound), so other
    work on the machine, such as the other test worker, does not distort it.
    """
    from synthetic import synthetic_results  # tests/synthetic.py (conftest puts tests/ on sys.path)

    def measure(n):
        doc = synthetic_results(n, seed=1)
        best = None
        for _ in range(2):
            t0 = time.process_time()
            page = render_html(doc)
            dt = time.process_time() - t0
            best = dt if best is None else min(best, dt)
        return best, len(page.encode())

    t5, s5 = measure(5_000)
    t20, s20 = measure(20_000)
    per_case_t = (t20 - t5) / 15_000
    per_case_s = (s20 - s5) / 15_000
    t100 = t20 + 80_000 * max(per_case_t, 0)
    s100 = s20 + 80_000 * per_case_s
    print(f"render 5k {t5:.2f} s, 20k {t20:.2f} s -> 100k ~{t100:.1f} s; size 20k {s20 / 1e6:.1f} MB -> "
          f"100k ~{s100 / 1e6:.1f} MB ({per_case_s:.0f} bytes/case)")
    assert s100 < 25e6
    assert t100 < 10.0
    assert t20 < 6 * t5 + 1.0  # no worse than linear (plus fixed costs)


def test_drill_down_gets_shapes_and_attributes_from_the_bundle(tmp_path, toy_suite):
    """With the bundle's manifest, failing cases carry input shapes/dtypes and the model's attributes."""
    from conformance.backends import resolve_backend
    from conformance.bundle import write_bundle
    from conformance.runner import run_cases

    bundle = write_bundle(toy_suite, tmp_path / "bundle")
    results = run_cases(toy_suite.cases, resolve_backend("onnx-reference"))  # accepts the invalid model: a fail
    run = {"backend_spec": "onnx-reference", "backend_options": {}, "bundle": str(bundle), "ops": ["Abs"], "seed": 0}
    doc = results_document(toy_suite, {"backend": "onnx-reference"}, results, 1.0, run)
    page = render_html(doc)  # the manifest is found through run.bundle
    data = _embedded(page)
    ids = decode_ids(data)
    bad = next(c for c in toy_suite.cases if c.expect_error)
    k = ids.index(bad.id)
    assert data["outcomes"][data["c"]["oc"][k]] == "fail"
    io = data["io"][data["c"]["io"][k]]
    assert io["in"] == [[i.name, "float", list(i.shape), 0, 1] for i in bad.inputs]
    assert data["attrs"][data["c"]["at"][k]] == {"alpha": 1.0}
    assert data["strings"][data["c"]["xe"][k]] == bad.expect_error
    # passing cases carry neither (file size)
    passing = [j for j, oc in enumerate(data["c"]["oc"]) if data["outcomes"][oc] == "pass"]
    assert passing and all(data["c"]["io"][j] == -1 and data["c"]["at"][j] == -1 for j in passing)
