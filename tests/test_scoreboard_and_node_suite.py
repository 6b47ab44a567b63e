"""The scoreboard command and onnx's node tests as a second suite."""

import json

from conformance.cli import main
from conformance.onnx_node import onnx_node_suite


def test_scoreboard(toy_registered, tmp_path, capsys):
    out = tmp_path / "sb"
    assert main(["scoreboard", "--backends", "onnxruntime,onnx-reference,no-such-runtime", "--ops", "Abs",
                 "--out", str(out)]) == 0
    html = (out / "scoreboard.html").read_text()
    ort = json.loads((out / "onnxruntime" / "results.json").read_text())
    ref = json.loads((out / "onnx-reference" / "results.json").read_text())
    assert ort["suite"]["content_hash"] == ref["suite"]["content_hash"]
    # onnx-reference accepts the invalid model, onnxruntime rejects it: a disagreement on the page
    err_id = next(c["id"] for c in ort["cases"] if c["tags"].get("error"))
    assert err_id in html and "no-such-runtime" in html
    assert "skipping" in capsys.readouterr().out


def test_onnx_node_suite_runs_with_its_own_tolerances(tmp_path):
    suite = onnx_node_suite()
    assert len(suite.cases) > 1500
    relu = next(c for c in suite.cases if c.label == "test_relu")
    assert relu.op == "Relu" and relu.outputs[0].tolerance.rtol == 1e-3 and relu.outputs[0].tolerance.atol == 1e-7
    assert any(c.skip for c in suite.cases)  # sequences/strings are skipped with a reason, not dropped
    assert main(["run", "--suite", "onnx-node", "--match", "test_relu", "--match", "test_layer_normalization_2d",
                 "--out", str(tmp_path / "r")]) == 0
    doc = json.loads((tmp_path / "r" / "results.json").read_text())
    assert doc["summary"]["pass"] >= 3 and doc["run"]["suite"] == "onnx-node"
