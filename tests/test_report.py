"""HTML report: escaping, matrix, failing cases."""

from conformance.results import results_document
from conformance.runner import CaseResult
from conformance.suite import Suite
from reports.html import render_html


def _doc(results):
    return results_document(Suite(cases=[], seed=0, ops=["Abs"]), {"backend": "evil"}, results, 1.0)


def _res(i, outcome, message="", dtype="float"):
    return CaseResult(id=f"Abs-13/{dtype}/{i}", op="Abs", domain="", since_version=13, opset=13,
                      tags={"dtype": dtype}, outcome=outcome, message=message)


def test_backend_message_is_escaped():
    html = render_html(_doc([_res(0, "error", "<script>alert(1)</script>")]))
    assert "<script>alert(1)</script>" not in html
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in html


def test_matrix_and_problem_list():
    html = render_html(_doc([_res(0, "pass"), _res(1, "fail", "Y: off", "float16"), _res(2, "unsupported", "no kernel", "bfloat16")]))
    for text in ("float16", "bfloat16", "Abs-13/float16/1", "Y: off", "no kernel"):
        assert text in html
    assert "Abs-13/float/0" not in html  # passing cases are not listed as problems
    assert "33.3%" in html  # 1 pass of 3


def test_matrix_cell_is_coloured_by_its_worst_outcome():
    from reports.html import matrix

    m = matrix([_res(0, "pass").to_json(), _res(1, "error").to_json(), _res(2, "pass", dtype="double").to_json()])
    assert m["worst"][("Abs", "float")] == "error"
    assert m["worst"][("Abs", "double")] == "pass"
