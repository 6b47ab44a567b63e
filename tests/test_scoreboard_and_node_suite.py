"""The scoreboard command and onnx's node tests as a second suite."""

import json
import warnings

import numpy as np

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
    # sequence, optional and string inputs/outputs are compared, not skipped (issue 27)
    assert not any(c.skip for c in suite.cases)
    kinds = {o.kind for c in suite.cases for o in c.outputs}
    assert {"sequence", "optional_sequence"} <= kinds
    assert any(np.asarray(v).dtype == object for c in suite.cases for ds in c.datasets for v in ds.outputs.values()
               if isinstance(v, np.ndarray))
    assert main(["run", "--suite", "onnx-node", "--match", "test_relu", "--match", "test_layer_normalization_2d",
                 "--out", str(tmp_path / "r")]) == 0
    doc = json.loads((tmp_path / "r" / "results.json").read_text())
    assert doc["summary"]["pass"] >= 3 and doc["run"]["suite"] == "onnx-node"


#: onnx's Dropout node tests whose ratio / training_mode inputs are 0-d tensors (numpy scalars in
#: onnx >= 1.23, 0-d TensorProtos on disk before): they run, none is skipped.
DROPOUT_0D = {"test_dropout_default_ratio", "test_dropout_default_mask_ratio", "test_training_dropout",
              "test_training_dropout_default", "test_training_dropout_default_mask", "test_training_dropout_mask",
              "test_training_dropout_zero_ratio", "test_training_dropout_zero_ratio_mask"}


def _dropout_0d_cases():
    cases = [c for c in onnx_node_suite().cases
             if c.op == "Dropout" and any(np.asarray(v).ndim == 0 for ds in c.datasets for v in ds.inputs.values())]
    return {c.tags["test"]: c for c in cases}


def test_dropout_node_tests_with_0d_inputs_run():
    from conformance.runner import run_cases
    from conformance.backends import resolve_backend

    cases = _dropout_0d_cases()
    assert set(cases) == DROPOUT_0D and not any(c.skip for c in cases.values())
    random = {n for n, c in cases.items() if c.check}
    assert random == {"test_training_dropout", "test_training_dropout_default", "test_training_dropout_default_mask",
                      "test_training_dropout_mask"}  # training mode, ratio > 0: judged statistically
    res = {r.tags["test"]: r for r in run_cases(list(cases.values()), resolve_backend("onnxruntime"))}
    assert {n: r.outcome for n, r in res.items()} == dict.fromkeys(DROPOUT_0D, "pass"), {
        n: r.message for n, r in res.items() if r.outcome != "pass"}


def test_random_dropout_node_tests_catch_wrong_kernels():
    from conformance.backends.kernel import KernelBackend
    from conformance.runner import run_cases

    cases = [c for n, c in _dropout_0d_cases().items() if c.check]
    assert len(cases) == 4

    def dropout(scale_by, keep_all=False):
        def fn(i, a, o, v):
            x, r = (np.asarray(t) for t in list(i.values())[:2])
            keep = np.ones(x.shape, bool) if keep_all else np.random.default_rng(1).random(x.shape) >= r
            out = {o[0]: np.where(keep, x * scale_by(r), 0).astype(x.dtype)}
            if len(o) > 1:
                out[o[1]] = keep
            return out
        return fn

    def outcomes(fn):
        return [r.outcome for r in run_cases(cases, KernelBackend({"Dropout": fn}))]

    assert outcomes(dropout(lambda r: 1 / (1 - r))) == ["pass"] * 4  # a legitimate draw of another generator
    assert outcomes(dropout(lambda r: 1.0)) == ["fail"] * 4  # kept elements not scaled by 1 / (1 - ratio)
    assert outcomes(dropout(lambda r: 1 / (1 - r), keep_all=True)) == ["fail"] * 4  # nothing dropped


def test_onnx_node_suite_from_model_directories(tmp_path, monkeypatch):
    """onnx 1.16 to 1.22 give node tests as a model directory (test.model is None): the suite
    loads them from there and `run --suite onnx-node --match test_relu` works."""
    import onnx
    from onnx import numpy_helper
    from onnx.backend.test import loader

    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore")
        real = {t.name: t for t in loader.load_model_tests(kind="node")}

    class DirTest:
        def __init__(self, t):
            root = tmp_path / t.name
            root.mkdir()
            onnx.save(t.model, root / "model.onnx")
            for k, (ins, outs) in enumerate(t.data_sets):
                (root / f"test_data_set_{k}").mkdir()
                for prefix, vals in (("input", ins), ("output", outs)):
                    for i, v in enumerate(vals):
                        (root / f"test_data_set_{k}" / f"{prefix}_{i}.pb").write_bytes(
                            numpy_helper.from_array(np.asarray(v)).SerializeToString())
            self.name, self.url, self.model_dir, self.model, self.data_sets = t.name, None, str(root), None, None
            self.rtol, self.atol = t.rtol, t.atol

    old = [DirTest(real[n]) for n in ("test_relu", "test_dropout_default_ratio", "test_training_dropout_mask")]
    monkeypatch.setattr(loader, "load_model_tests", lambda kind=None, data_dir=None: old)
    suite = onnx_node_suite()
    assert [c.tags["test"] for c in suite.cases] == ["test_dropout_default_ratio", "test_relu", "test_training_dropout_mask"]
    assert not any(c.skip for c in suite.cases) and suite.cases[2].check
    assert main(["run", "--suite", "onnx-node", "--match", "test_relu", "--out", str(tmp_path / "r")]) == 0
    doc = json.loads((tmp_path / "r" / "results.json").read_text())
    assert [(c["tags"]["test"], c["outcome"]) for c in doc["cases"]] == [("test_relu", "pass")]
    assert doc["backend"]["onnx"] == onnx.__version__ and doc["backend"]["onnxruntime"]
