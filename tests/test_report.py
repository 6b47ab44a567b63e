"""HTML report: escaping, embedded case data, matrices, accuracy plots, repro commands, scaling."""

import html as htmllib
import json
import re
import shlex
import sys

import numpy as np
import pytest

from conformance.reports import accuracy
from conformance.reports.families import family_summary, group_matrix, op_families
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


def test_written_page_is_the_rendered_page(tmp_path):
    """write_html writes the case data a piece at a time; the file is render_html's page byte for
    byte, hostile and non-ASCII messages, and non-finite ratios included."""
    from conformance.reports.html import write_html

    doc = _doc([_res(0, "error", "</script> \u2028 caf\u00e9"), _res(1, "pass", outputs=[_out("Y", float("nan"))]),
                _res(2, "fail", "off by 1", outputs=[_out("Y", float("inf"), passed=False)]), _res(3, "pass")])
    path = write_html(doc, tmp_path / "r.html")
    assert path.read_bytes() == render_html(doc).encode("utf-8", errors="replace")
    assert _embedded(path.read_text(encoding="utf-8"))["n"] == 4


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
    assert all(len(v) == n for v in data["feat"]["col"])
    # tags, per case as (key, value) index pairs, give back each record's tags
    t = data["tags"]
    tags = [{t["keys"][k]: t["vals"][k][v] for k, v in zip(t["sets"][ks], tv)} for ks, tv in zip(c["tk"], c["tv"])]
    assert tags == [{"dtype": "float"}] * 2 and data["tags"]["keys"] == ["dtype"]
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


def test_accuracy_histograms_are_inline_svg_without_matplotlib(monkeypatch):
    """Bin counts drawn as <rect>s by the template: exact bar, log10(err/tol) bins, numbers beside."""
    monkeypatch.setitem(sys.modules, "matplotlib", None)  # any import of matplotlib now raises ImportError
    cases = [_res(k, "pass", dtype=dt, outputs=[_out("Y", r)]) for k, (dt, r) in
             enumerate([("float", 0.0), ("float", 1e-3), ("float", 0.5), ("float16", 0.02), ("float16", 0.0)])]
    cases.append(_res(9, "fail", "Y: off", outputs=[_out("Y", 7.0, False)]))  # failing cases are not in the histogram
    page = render_html(_doc(cases))
    assert "<img" not in page and "data:image" not in page
    table = page.split('id="accuracy-table"', 1)[1].split("</table>", 1)[0]
    rows = re.findall(r'<tr class="(famrow|op)">(.*?)</tr>', table, re.S)
    assert [k for k, _ in rows] == ["famrow", "op", "op"]  # the family (all of Abs), then float and float16
    fam, flt, f16 = (r for _, r in rows)

    def titles(row):
        return re.findall(r"<rect class=\"(exact|bin)\"[^>]*><title>([^<]*)</title></rect>", row)

    assert titles(flt) == [("exact", "exact: 1"), ("bin", "[1e-3, 1e-2.5): 1"), ("bin", "[1e-0.5, 1]: 1")]
    assert titles(f16) == [("exact", "exact: 1"), ("bin", "[1e-2, 1e-1.5): 1")]
    assert titles(fam) == [("exact", "exact: 2"), ("bin", "[1e-3, 1e-2.5): 1"), ("bin", "[1e-2, 1e-1.5): 1"),
                           ("bin", "[1e-0.5, 1]: 1")]
    # the numbers beside each histogram: outputs, exact, median, 99th percentile, max
    nums = lambda row: re.findall(r'<td class="num">([^<]*)</td>', row)  # noqa: E731
    assert nums(flt) == ["3", "1", "0.001", f"{np.quantile([0, 1e-3, 0.5], 0.99):.3g}", "0.5"]
    assert nums(fam)[:2] == ["5", "2"] and nums(fam)[4] == "0.5"
    assert "<td>float</td>" in flt and ">Abs</th>" in flt
    # taller bar for more outputs, within the histogram's box
    hs = [float(h) for h in re.findall(r'<rect class="exact"[^>]* height="([\d.]+)"', fam)]
    assert 0 < hs[0] <= 22
    assert render_html(_doc(cases)) == page  # same results, same bytes


def test_accuracy_bins():
    assert accuracy.histogram(np.array([0.0, 1e-9, 1e-8, 5e-8, 1e-3, 1.0]))[0] == 1
    counts = accuracy.histogram(np.array([0.0, 1e-9, 1e-8, 5e-8, 1e-3, 1.0]))[1]
    assert len(counts) == (accuracy.LOG_MAX - accuracy.LOG_MIN) * accuracy.PER_DECADE
    assert counts[0] == 2 and counts[1] == 1 and counts[10] == 1 and counts[-1] == 1 and counts.sum() == 5
    bars = accuracy.bars(1000, [1] + [0] * 15)
    assert [b["kind"] for b in bars] == ["exact", "bin"]
    assert float(bars[0]["h"]) == pytest.approx(accuracy.HEIGHT - 2) and 1 <= float(bars[1]["h"]) < 5
    assert accuracy.bars(0, [0] * 16) == []


def test_environment_and_identity_in_headline(toy_suite):
    doc = results_document(toy_suite, {"backend": "onnxruntime", "onnxruntime": "1.2.3"},
                           [_res(0, "pass")], 2.5, {"backend_spec": "onnxruntime", "argv": ["run"]})
    page = render_html(doc)
    text = " ".join(htmllib.unescape(re.sub(r"<[^>]+>", " ", page)).split())
    from conformance import __version__

    for needle in ("onnxruntime 1.2.3", toy_suite.content_hash, f"onnx-conformance {__version__}", "seed", "Score"):
        assert needle in text, needle


def test_page_size_scales_linearly_to_100k_cases():
    """The page's size per case over the real operator table (every operator, in its family),
    measured at 5k and 20k cases and extrapolated to 100k: under 32 MB (243 bytes a case with the
    203-operator table, whose longer names lengthen the ids; a 200,000-case page of 36 MB opens in
    Chromium in 1.7 s, bench/bench_report.py).  Size is deterministic;
    render time is measured by bench/bench_report.py, not by a timed test."""
    from synthetic import synthetic_results  # tests/synthetic.py (conftest puts tests/ on sys.path)

    s5, s20 = (len(render_html(synthetic_results(n, seed=1, ops="table")).encode()) for n in (5_000, 20_000))
    per_case = (s20 - s5) / 15_000
    assert s20 + 80_000 * per_case < 32e6


def test_drill_down_gets_shapes_and_attributes_from_the_bundle(tmp_path, toy_suite):
    """With the bundle's manifest, failing cases carry input shapes/dtypes and the model's attributes."""
    from conformance.backends import resolve_backend
    from conformance.bundle_write import write_bundle
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


# -- families ------------------------------------------------------------------------------

def _rec(op, i, outcome, message="", dtype="float", domain=""):
    return {"id": f"{op}-1/{dtype}/{i}", "op": op, "domain": domain, "since_version": 1, "opset": 21,
            "tags": {"dtype": dtype}, "outcome": outcome, "message": message, "phase": "", "outputs": [],
            "expect_error": None, "duration_s": 0.001}


def _fam_doc(cases, families=None, **suite):
    ops = sorted({c["op"] for c in cases})
    s = {"seed": 0, "ops": ops, "content_hash": "h", "n_cases": len(cases), "source": "test", **suite}
    if families is not None:
        s["families"] = families
    return {"format": "onnx-conformance-results/1", "suite": s, "backend": {"backend": "b"}, "run": {}, "host": {},
            "duration_s": 1.0, "cases": cases}


FAM_CASES = ([_rec("Relu", i, "pass") for i in range(3)]
             + [_rec("Relu", 3 + i, "fail", f"Y: {i + 2} of 8 element(s) out of tolerance") for i in range(2)]
             + [_rec("Elu", 0, "unsupported", "no kernel", "float16"), _rec("Elu", 1, "xfail", "known")]
             + [_rec("Add", i, "pass") for i in range(4)] + [_rec("Add", 9, "crash", "killed by SIGSEGV")]
             + [_rec("NoSuchOp", 0, "error", "<b>boom</b>")])
FAMS = {"Relu": "activations", "Elu": "activations", "Add": "binary"}  # NoSuchOp: not named, the table says "other"


def test_families_come_from_the_document_then_the_operator_table():
    assert op_families(_fam_doc(FAM_CASES, FAMS)) == {**FAMS, "NoSuchOp": "other"}
    # an older document without the key: the operator table's families
    assert op_families(_fam_doc(FAM_CASES)) == {"Relu": "activations", "Elu": "activations", "Add": "binary",
                                                 "NoSuchOp": "other"}
    # the document wins over the table; junk values are ignored
    assert op_families(_fam_doc(FAM_CASES, {"Relu": "mine", "Add": 3}))["Relu"] == "mine"
    assert op_families(_fam_doc(FAM_CASES, {"Relu": "mine", "Add": 3}))["Add"] == "binary"


def test_family_summary_rows():
    rows = family_summary(FAM_CASES, {**FAMS, "NoSuchOp": "other"})
    assert [r["name"] for r in rows] == ["activations", "binary", "other"]  # "other" last
    act, binary, other = rows
    assert (act["n_ops"], act["n"], act["counts"]) == (2, 7, {"pass": 3, "fail": 2, "unsupported": 1, "xfail": 1})
    assert (act["score"], act["score_num"], act["score_den"]) == (pytest.approx(100 * 4 / 7), 4, 7)
    assert score(act["counts"])[0] == act["score"]  # the page's score definition
    assert act["worst"] == "fail" and [s[0] for s in act["segs"]] == ["pass", "fail", "unsupported", "xfail"]
    assert [(p["outcome"], p["count"], p["pattern"]) for p in act["problems"]] == [
        ("fail", 2, "Y: # of # element(s) out of tolerance"), ("unsupported", 1, "no kernel")]  # xfail is no problem
    assert act["problems"][0]["ops"] == "Relu 2" and act["problems"][0]["query"] == "element(s) out of tolerance"
    assert act["worst_ops"] == [("Relu", 2), ("Elu", 1)]
    assert [o["op"] for o in act["ops"]] == ["Elu", "Relu"]
    relu = act["ops"][1]
    assert (relu["n"], relu["pass"], relu["problem"]["count"], relu["problem"]["outcome"]) == (5, 3, 2, "fail")
    assert binary["score"] == pytest.approx(80.0) and binary["problems"][0]["pattern"] == "killed by SIGSEGV"
    assert other["ops"][0]["op"] == "NoSuchOp" and other["worst"] == "error"


def _between(page, start, end):
    return page.split(start, 1)[1].split(end, 1)[0]


def test_family_summary_comes_first_and_expands_to_operators():
    page = render_html(_fam_doc(FAM_CASES, FAMS))
    # right after the headline, before the problem list and the matrices
    assert page.index('id="summary"') < page.index('id="family-summary"') < page.index('id="problems"') \
        < page.index('id="dtype-matrix"')
    summary = _between(page, 'id="family-summary"', "</section>")
    fams = re.findall(r'<details class="fam" data-family="([^"]*)">(.*?)</details>', summary, re.S)
    assert [f for f, _ in fams] == ["activations", "binary", "other"]
    act = dict(fams)["activations"]
    head, body = act.split("</summary>", 1)
    text = lambda h: " ".join(htmllib.unescape(re.sub(r"<[^>]+>", " ", h)).split())  # noqa: E731
    assert text(head).startswith("activations 2 7 57.1% fail 2 \u00d7 Y: # of # element(s) out of tolerance")
    assert re.findall(r'<div class="frow op">.*?<a href="#cases\?op=(\w+)&amp;oc=all">', body) == ["Elu", "Relu"]
    assert "&lt;b&gt;boom&lt;/b&gt;" in dict(fams)["other"] and "<b>boom</b>" not in page  # escaped


def test_matrices_are_grouped_by_family():
    doc = _fam_doc(FAM_CASES, FAMS)
    data = case_data(doc)
    assert data["families"] == ["activations", "binary", "other"]
    assert {op: data["families"][k] for op, k in zip(data["ops"], data["opfam"])} == {**FAMS, "NoSuchOp": "other"}
    g = group_matrix(data_matrix(data, "dtype"), ["pass", "fail", "error", "crash", "unsupported", "xfail"],
                     op_families(doc))
    assert [(x["name"], x["ops"]) for x in g["groups"]] == [("activations", ["Elu", "Relu"]), ("binary", ["Add"]),
                                                            ("other", ["NoSuchOp"])]
    cell = g["groups"][0]["cells"]["float"]  # Relu's five float cases and Elu's xfail, summed
    assert (cell["n"], cell["pass"], cell["worst"]) == (6, 4, "fail")
    assert g["groups"][0]["cells"]["float16"]["worst"] == "unsupported"
    assert g["cells"][("Relu", "float")]["n"] == 5
    page = render_html(doc)
    table = _between(page, 'id="dtype-matrix"', "</table>")
    bodies = re.findall(r'<tbody class="fam" data-family="([^"]*)">(.*?)</tbody>', table, re.S)
    assert [b for b, _ in bodies] == ["activations", "binary", "other"]
    act = dict(bodies)["activations"]
    assert act.count('<tr class="famrow">') == 1 and act.count('<tr class="op">') == 2
    assert 'href="#cases?fam=activations&amp;dtype=float&amp;oc=all"' in act  # a family cell lists its cases
    assert '<td class="cell o-fail" title="pass 3, fail 2, xfail 1">' in act
    assert 'href="#cases?op=Relu&amp;dtype=float&amp;oc=all"' in act
    # the family filter of the case list
    assert '<select id="f-fam">' in page


def test_coverage_section_is_grouped_by_family():
    from conformance import registry
    from conformance.coverage import compute_coverage

    gen = registry.generate(["Relu", "Add"], seed=0)
    outcomes = {c.id: ("fail" if k % 10 == 0 else "pass") for k, c in enumerate(gen)}
    cases = [{**_rec(c.op, k, outcomes[c.id]), "id": c.id, "since_version": c.since_version, "tags": c.tags}
             for k, c in enumerate(gen)]
    doc = _fam_doc(cases, {"Relu": "activations", "Add": "binary"})
    doc["coverage"] = compute_coverage(gen, outcomes)
    page = render_html(doc)
    table = _between(page, 'id="coverage-table"', "</table>")
    bodies = dict(re.findall(r'<tbody class="fam" data-family="([^"]*)">(.*?)</tbody>', table, re.S))
    assert list(bodies) == ["activations", "binary"]
    assert ">Relu<br>" in bodies["activations"] and ">Add<br>" in bodies["binary"]
    n_value = sum(1 for c in gen if c.op == "Relu" and c.expect_error is None)
    famrow = bodies["activations"].split('<tr class="op">', 1)[0]
    m = re.search(r"all covered: (\d+)/(\d+)", famrow)
    assert m and int(m.group(2)) == n_value
    assert int(m.group(1)) == sum(1 for c in gen if c.op == "Relu" and c.expect_error is None and outcomes[c.id] == "pass")


@pytest.mark.parametrize("depth, needle", [(None, "depth: full"), ("full", "depth: full"),
                                           ("smoke", "depth: smoke \u2014 a representative subset; run full depth for compliance")])
def test_headline_says_which_depth_ran(depth, needle):
    doc = _fam_doc(FAM_CASES, FAMS, **({"depth": depth} if depth else {}))
    page = render_html(doc)
    headline = " ".join(htmllib.unescape(re.sub(r"<[^>]+>", " ", _between(page, 'id="summary"', "</section>"))).split())
    assert needle in headline
    assert ("smoke" in headline) == (depth == "smoke")


def test_report_renders_from_results_alone_when_the_bundle_is_gone(tmp_path, toy_suite):
    """``onnx-conformance report results.json --out r.html`` needs nothing but the results file."""
    import shutil

    from conformance.backends import resolve_backend
    from conformance.bundle_write import write_bundle
    from conformance.cli import main
    from conformance.results import write_results
    from conformance.runner import run_cases

    bundle = write_bundle(toy_suite, tmp_path / "bundle")
    results = run_cases(toy_suite.cases, resolve_backend("onnx-reference"))
    assert any(r.outcome != "pass" for r in results) and all((r.detail is None) == (r.outcome == "pass") for r in results)
    run = {"backend_spec": "onnx-reference", "backend_options": {}, "bundle": str(bundle), "ops": ["Abs"], "seed": 0}
    doc = results_document(toy_suite, {"backend": "onnx-reference"}, results, 1.0, run)
    path = write_results(doc, tmp_path / "results.json")
    old = write_results({**doc, "cases": [{k: v for k, v in c.items() if k != "detail"} for c in doc["cases"]]},
                        tmp_path / "old.json")  # results written before the runner recorded details
    assert main(["report", str(path), "--out", str(tmp_path / "with.html")]) == 0
    assert main(["report", str(old), "--out", str(tmp_path / "old_with.html")]) == 0
    with_bundle = (tmp_path / "with.html").read_text(encoding="utf-8")
    old_with = (tmp_path / "old_with.html").read_text(encoding="utf-8")
    assert "io" in _embedded(with_bundle)["c"] and "at" in _embedded(with_bundle)["c"]  # from the results
    assert "io" in _embedded(old_with)["c"]  # from the bundle's manifest
    shutil.rmtree(bundle)
    assert main(["report", str(path), "--out", str(tmp_path / "r.html")]) == 0
    assert (tmp_path / "r.html").read_text(encoding="utf-8") == with_bundle  # the results say it all
    assert main(["report", str(old), "--out", str(tmp_path / "old.html")]) == 0
    page = (tmp_path / "old.html").read_text(encoding="utf-8")
    data = _embedded(page)
    assert sorted(decode_ids(data)) == sorted(c.id for c in toy_suite.cases)
    assert "io" not in data["c"] and "at" not in data["c"]  # the optional detail is left out, nothing else
    assert 'id="family-summary"' in page and 'data-family="unary"' in page
    # the same bytes as the page with the bundle, but for the drill-down's shapes and the manifest check
    strip = lambda p: re.sub(r'<script type="application/json".*?</script>', "", p, flags=re.S)  # noqa: E731
    assert strip(page) == strip(old_with).replace(
        re.search(r"<tr><th>bundle manifest</th>.*?</tr>", old_with).group(0), "")


def test_a_run_report_is_the_report_of_its_results(tmp_path, toy_suite):
    """A run reads its records one at a time into the report's compact store (``CaseStore``);
    the page it writes is, byte for byte, the one ``report`` renders from its results.json alone,
    and a store filled from the document's cases gives that page too."""
    from conformance.bundle_write import write_bundle
    from conformance.cli import main
    from conformance.execute import RunSpec, execute
    from conformance.reports.html import CaseStore, render_html
    from conformance.results import load_results

    bundle = write_bundle(toy_suite, tmp_path / "bundle")
    out = tmp_path / "run"
    out.mkdir()
    doc, _ = execute(RunSpec(backend_spec="onnx-reference", suite="bundle", bundle=str(bundle), jobs=2), out)
    assert {c["outcome"] for c in doc["cases"]} >= {"pass", "fail"}  # rows of both kinds, details included
    assert main(["report", str(out / "results.json"), "--out", str(tmp_path / "again.html")]) == 0
    assert (out / "report.html").read_bytes() == (tmp_path / "again.html").read_bytes()
    whole = load_results(out / "results.json")
    page = render_html(whole)
    assert page.encode() == (out / "report.html").read_bytes()
    assert render_html(whole, store=CaseStore.of(load_results(out / "results.json")["cases"])) == page


def test_the_store_is_filled_in_suite_order_as_results_come(tmp_path):
    """``execute._StoreFeed`` adds records in suite order up to the first case without a result
    (its line not written yet), and on from there once it has one; the store it finishes is
    the one ``_case_store`` fills at once (the same page)."""
    from array import array

    from conformance.execute import _case_store, _StoreFeed
    from conformance.reports.html import render_html

    recs = [_res(k, ["pass", "fail", "error", "pass"][k], outputs=[_out("Y", 0.25 * k, k != 1)]).to_json()
            for k in range(4)]
    path = tmp_path / "results.jsonl"
    lines = [json.dumps(r).encode() + b"\n" for r in recs]
    order = [2, 0, 3, 1]  # the order the results came in: not the suite's
    offsets, pos, body = array("q", [-1]) * 4, 0, b""
    feed = _StoreFeed(path, offsets)
    seen = []
    for j in order:
        offsets[j], pos, body = pos, pos + len(lines[j]), body + lines[j]
        path.write_bytes(body)
        feed.feed()
        seen.append(feed.next)
    assert seen == [0, 1, 1, 4]  # 2 waits for 0, then for 1
    store = feed.finish()
    whole = _case_store(path, offsets)
    assert [store.outcome(i) for i in range(4)] == [r["outcome"] for r in recs] == \
        [whole.outcome(i) for i in range(4)]
    doc = _doc([CaseResult.from_json(r) for r in recs])
    assert render_html(doc, store=store) == render_html(doc, store=whole) == render_html(doc)


def test_a_run_with_a_crash_reports_as_its_results_do(tmp_path, toy_suite, monkeypatch):
    """A crash sends the cases its worker had attempted back to run later, each alone: the records
    come out of suite order, the store's feed waits for them, and the page is still the one
    ``report`` renders from results.json; most of the store was filled while the workers ran."""
    import faulty

    from conformance import execute as ex
    from conformance.bundle_write import write_bundle
    from conformance.cli import main

    at_finish = []
    real = ex._StoreFeed.finish
    monkeypatch.setattr(ex._StoreFeed, "finish", lambda self: at_finish.append(self.next) or real(self))
    bundle = write_bundle(toy_suite, tmp_path / "bundle")
    out = tmp_path / "run"
    out.mkdir()
    doc, _ = ex.execute(ex.RunSpec(backend_spec="onnx-reference", suite="bundle", bundle=str(bundle), jobs=1,
                                   timeout=30), out, backend=faulty.segfaulting())
    assert "crash" in {c["outcome"] for c in doc["cases"]} and len(doc["cases"]) == len(toy_suite.cases)
    assert len(at_finish) == 1 and at_finish[0] > 0  # fed while the workers ran
    assert main(["report", str(out / "results.json"), "--out", str(tmp_path / "again.html")]) == 0
    assert (out / "report.html").read_bytes() == (tmp_path / "again.html").read_bytes()


def test_a_results_file_is_read_a_case_at_a_time(tmp_path):
    """results.json holds its head on the first line and one case a line after it: iter_results
    reads it so, each case as load_results reads the whole (awkward values in the same encoding),
    case_at finds a case again by its offset; a file in another layout (one line, as another tool
    writes it) is read whole; `report` gives the same page from both."""
    from conformance.cli import main
    from conformance.results import case_at, iter_results, load_results, write_results

    cases = [_res(0, "pass", outputs=[_out("Y", 0.5)]),
             _res(1, "fail", "bad \ud800 <x> \u00e9", outputs=[_out("Y", float("nan"), False, actual=float("inf"))]),
             _res(2, "error", "x" * 5000)]
    path = write_results(_doc(cases), tmp_path / "results.json")
    lines = path.read_bytes().split(b"\n")
    assert lines[0].endswith(b'"cases":[') and lines[-2:] == [b"]}", b""] and len(lines) == len(cases) + 3
    whole = load_results(path)
    head, it = iter_results(path)
    got = list(it)
    assert [c for _, c in got] == whole["cases"] and head == {k: v for k, v in whole.items() if k != "cases"}
    assert [case_at(path, off) for off, _ in got] == whole["cases"]
    other = tmp_path / "other.json"
    other.write_text(json.dumps(whole))
    assert [c for _, c in iter_results(other)[1]] == whole["cases"]
    assert main(["report", str(path), "--out", str(tmp_path / "a.html")]) == 0
    assert main(["report", str(other), "--out", str(tmp_path / "b.html")]) == 0
    assert (tmp_path / "a.html").read_bytes() == (tmp_path / "b.html").read_bytes()
    assert any(t.startswith("bad ") for t in _embedded((tmp_path / "a.html").read_text())["strings"])
