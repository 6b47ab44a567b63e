"""Outcome classification of the runner, with purpose-built backends."""

import numpy as np
import pytest

from conformance.backends import resolve_backend
from conformance.backends.base import Backend, Unsupported
from conformance.backends.kernel import KernelBackend
from conformance.runner import run_cases, summarize


def _abs(i, a, o, v):
    return {"Y": np.abs(i["X"])}


def by_label(results):
    """Results keyed by dtype, and by the error kind for the invalid model."""
    return {(r.tags.get("error") and f"error={r.tags['error']}") or r.tags["dtype"]: r for r in results}


def test_correct_kernel_passes_values_and_rejects_invalid_model(toy_suite):
    res = by_label(run_cases(toy_suite.cases, KernelBackend({"Abs": _abs})))
    assert {k: r.outcome for k, r in res.items()} == {
        "float16": "pass", "bfloat16": "pass", "float": "pass", "double": "pass", "error=unknown-attribute": "pass"}
    assert "rejected at prepare" in res["error=unknown-attribute"].message
    assert res["float"].outputs[0]["ratio"] == 0.0


def test_wrong_values_fail_with_measured_error(toy_suite):
    res = by_label(run_cases(toy_suite.cases, KernelBackend({"Abs": lambda i, a, o, v: {"Y": -np.abs(i["X"])}})))
    r = res["float"]
    assert r.outcome == "fail" and r.phase == "compare"
    assert r.outputs[0]["ratio"] > 1 and r.outputs[0]["max_abs_err"] > 0
    assert "out of tolerance" in r.message


def test_wrong_dtype_and_shape_fail(toy_suite):
    res = by_label(run_cases(toy_suite.cases, KernelBackend({"Abs": lambda i, a, o, v: {"Y": np.abs(i["X"]).astype(np.float64)}})))
    assert res["float"].outcome == "fail" and "dtype" in res["float"].message
    assert res["double"].outcome == "pass"
    res = by_label(run_cases(toy_suite.cases, KernelBackend({"Abs": lambda i, a, o, v: {"Y": np.abs(i["X"]).ravel()}})))
    assert res["float"].outcome == "fail" and "shape" in res["float"].message


class _Raw(Backend):
    """A backend that returns whatever ``fn`` gives, skipping onnx checks."""

    name = "raw"

    def __init__(self, fn, prep=None):
        self.fn, self.prep = fn, prep

    def prepare(self, model, model_bytes):
        if self.prep:
            self.prep(model)
        return model

    def run(self, prepared, inputs, names):
        return self.fn(inputs)


def test_missing_output_fails(toy_suite):
    res = by_label(run_cases(toy_suite.cases, _Raw(lambda x: [])))
    assert res["float"].outcome == "fail" and "returned 0 output(s), expected 1" in res["float"].message
    # and an invalid model that is accepted is a fail too
    assert res["error=unknown-attribute"].outcome == "fail"
    assert "accepted an invalid model" in res["error=unknown-attribute"].message


def test_raising_backend_is_error_and_not_implemented_is_unsupported(toy_suite):
    def boom(x):
        raise RuntimeError("segment violation in kernel")

    res = by_label(run_cases(toy_suite.cases, _Raw(boom)))
    assert res["float"].outcome == "error" and res["float"].phase == "run"
    assert "segment violation" in res["float"].message

    def nope(model):
        raise NotImplementedError("bfloat16 Abs")

    res = by_label(run_cases(toy_suite.cases, _Raw(lambda x: [x["X"]], prep=nope)))
    assert res["bfloat16"].outcome == "unsupported" and res["bfloat16"].phase == "prepare"

    def typed(model):
        raise Unsupported("no kernel")

    assert summarize(run_cases(toy_suite.cases[:4], _Raw(None, prep=typed)))["unsupported"] == 4


def test_unsupported_is_never_a_pass(toy_suite):
    res = run_cases(toy_suite.cases, KernelBackend({}))
    s = summarize(res)
    assert s["pass"] == 1 and s["unsupported"] == 4  # only the invalid model's rejection passes


def test_second_dataset_is_checked(toy_suite):
    case = next(c for c in toy_suite.cases if c.tags["dtype"] == "float")
    assert len(case.datasets) == 2
    first = case.datasets[0].inputs["X"]

    def right_only_on_first(i, a, o, v):
        return {"Y": np.abs(i["X"]) if np.array_equal(i["X"], first) else i["X"] * 0}

    r = run_cases([case], KernelBackend({"Abs": right_only_on_first}))[0]
    assert r.outcome == "fail" and "data set 1" in r.message


def test_onnxruntime_and_onnx_reference_and_backend_api(toy_suite):
    ort = summarize(run_cases(toy_suite.cases, resolve_backend("onnxruntime")))
    assert ort["fail"] == 0 and ort["error"] == 0 and ort["pass"] >= 3
    api = resolve_backend("onnxruntime.backend.backend:OnnxRuntimeBackend")
    assert summarize(run_cases(toy_suite.cases, api))["fail"] == 0


def test_resolve_backend_errors():
    with pytest.raises(ValueError, match="unknown backend 'tensorflow'"):
        resolve_backend("tensorflow")
    with pytest.raises(ValueError, match="cannot import module"):
        resolve_backend("no_such_pkg.mod:Backend")
    with pytest.raises(ValueError, match="has no attribute"):
        resolve_backend("onnx.backend.base:NoSuchBackend")
    with pytest.raises(ValueError, match="neither"):
        resolve_backend("numpy:ndarray")
    with pytest.raises(ValueError, match="unknown onnxruntime option"):
        resolve_backend("onnxruntime", {"colour": "blue"})
    with pytest.raises(ValueError, match="not available"):
        resolve_backend("onnxruntime", {"providers": "NoSuchExecutionProvider"})
    with pytest.raises(ValueError, match="graph_optimization_level"):
        resolve_backend("onnxruntime", {"graph_optimization_level": "max"})


def test_onnxruntime_options_are_recorded():
    b = resolve_backend("onnxruntime", {"graph_optimization_level": "disable"})
    env = b.environment()
    assert env["graph_optimization_level"] == "disable" and env["providers"] == ["CPUExecutionProvider"]
    assert env["onnxruntime"]


def test_onnxruntime_version_refusal_is_unsupported_not_a_rejection(toy_suite):
    """A model stamped with an IR version newer than the runtime: the real onnxruntime refuses
    it for its version, which says nothing about the model, valid or invalid."""
    from conformance.backends.ort import OnnxRuntimeBackend

    class TooNew(OnnxRuntimeBackend):
        def prepare(self, model, model_bytes):
            m = type(model)()
            m.CopyFrom(model)
            m.ir_version = 99
            return super().prepare(m, m.SerializeToString())

    be = TooNew()
    assert be.name == "onnxruntime" and be.environment()["onnx"]
    error = next(c for c in toy_suite.cases if c.expect_error)
    value = next(c for c in toy_suite.cases if c.expect_error is None)
    e, v = run_cases([error, value], be)
    assert (e.outcome, v.outcome) == ("unsupported", "unsupported"), (e.message, v.message)
    assert e.message.startswith("declined as unsupported at prepare for the model's version "
                                "(Unsupported model IR version: 99, max supported IR version: ")
    assert v.message.startswith("prepare: cannot load the model for its version (Unsupported model IR version: 99")
    # the same models at their own IR version: the invalid one is rejected (a pass), the valid one runs
    e, v = run_cases([error, value], resolve_backend("onnxruntime"))
    assert (e.outcome, v.outcome) == ("pass", "pass"), (e.message, v.message)


def test_a_check_outside_the_project_is_never_called(toy_suite, monkeypatch):
    """A case's ``check`` is resolved only inside the conformance package: a case naming another
    module's function is an error of the case, and that function is not imported or called."""
    import dataclasses
    import os

    monkeypatch.setattr(os, "getcwd", lambda: pytest.fail("a check outside the project was called"))
    case = dataclasses.replace(next(c for c in toy_suite.cases if c.tags["dtype"] == "float"), check="os:getcwd")
    r = run_cases([case], KernelBackend({"Abs": _abs}))[0]
    assert r.outcome == "error" and "not a function of the conformance package" in r.message
