"""Built-in backends for optional runtimes (openvino, tract, tinygrad), on hand-built models.

Each test is skipped when its runtime is not installed (``pip install
'onnx-conformance[all]'``).  They check that a backend runs a model, returns the
right dtype, shape and values in the requested output order, maps an operator it
lacks to ``unsupported``, records its version, and rejects unknown options.
"""

from __future__ import annotations

import ml_dtypes
import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper

from conformance.backends import BUILTIN, resolve_backend
from conformance.runner import run_cases

RUNTIMES = {"openvino": "openvino", "tract": "tract", "tinygrad": "tinygrad"}


def _model(op, inputs, outputs, opset=17, **attrs) -> onnx.ModelProto:
    node = helper.make_node(op, [n for n, _, _ in inputs], [n for n, _, _ in outputs], **attrs)
    graph = helper.make_graph(
        [node], op,
        [helper.make_tensor_value_info(n, t, list(s)) for n, t, s in inputs],
        [helper.make_tensor_value_info(n, t, list(s)) for n, t, s in outputs],
    )
    m = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)], producer_name="test")
    m.ir_version = helper.find_min_ir_version_for(list(m.opset_import), ignore_unknown=True)
    onnx.checker.check_model(m)
    return m


def _run(backend, model, inputs, names):
    prepared = backend.prepare(model, model.SerializeToString())
    return backend.run(prepared, inputs, names)


@pytest.fixture(params=sorted(RUNTIMES))
def backend(request):
    pytest.importorskip(RUNTIMES[request.param])
    return resolve_backend(request.param)


def test_registered():
    for name in ("openvino", "tract", "tinygrad", "command"):
        assert name in BUILTIN


def test_relu_float32(backend):
    m = _model("Relu", [("X", TensorProto.FLOAT, (2, 3))], [("Y", TensorProto.FLOAT, (2, 3))], opset=14)
    x = np.array([[-1.5, 0.0, 2.0], [3.25, -0.0, -7.0]], np.float32)
    (y,) = _run(backend, m, {"X": x}, ["Y"])
    y = np.asarray(y)
    assert y.dtype == np.float32 and y.shape == (2, 3)
    np.testing.assert_array_equal(y, np.maximum(x, 0))


def test_abs_float16_keeps_dtype(backend):
    m = _model("Abs", [("X", TensorProto.FLOAT16, (4,))], [("Y", TensorProto.FLOAT16, (4,))], opset=13)
    x = np.array([-1.5, 2.0, -65504.0, 0.25], np.float16)
    (y,) = _run(backend, m, {"X": x}, ["Y"])
    assert np.asarray(y).dtype == np.float16
    np.testing.assert_array_equal(y, np.abs(x))


def test_scalar_input_stays_rank0(backend):
    m = _model("Add", [("A", TensorProto.FLOAT, (2, 2)), ("B", TensorProto.FLOAT, ())],
               [("C", TensorProto.FLOAT, (2, 2))], opset=14)
    a = np.arange(4, dtype=np.float32).reshape(2, 2)
    (c,) = _run(backend, m, {"A": a, "B": np.array(1.5, np.float32)}, ["C"])
    np.testing.assert_array_equal(c, a + 1.5)


def test_layer_normalization_outputs_by_name(backend):
    m = _model(
        "LayerNormalization",
        [("X", TensorProto.FLOAT, (2, 4)), ("Scale", TensorProto.FLOAT, (4,)), ("B", TensorProto.FLOAT, (4,))],
        [("Y", TensorProto.FLOAT, (2, 4)), ("Mean", TensorProto.FLOAT, (2, 1)), ("InvStdDev", TensorProto.FLOAT, (2, 1))],
        axis=-1, epsilon=1e-5,
    )
    rng = np.random.default_rng(0)
    x = rng.normal(size=(2, 4)).astype(np.float32)
    s = rng.normal(size=4).astype(np.float32)
    b = rng.normal(size=4).astype(np.float32)
    x64 = x.astype(np.float64)
    mean = x64.mean(-1, keepdims=True)
    inv = 1 / np.sqrt(x64.var(-1, keepdims=True) + np.float32(1e-5))
    y = (x64 - mean) * inv * s + b
    # requested in an order different from the graph's
    inv_out, y_out, mean_out = _run(backend, m, {"X": x, "Scale": s, "B": b}, ["InvStdDev", "Y", "Mean"])
    for got, want in ((y_out, y), (mean_out, mean), (inv_out, inv)):
        got = np.asarray(got)
        assert got.dtype == np.float32 and got.shape == want.shape
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)


def test_missing_operator_is_unsupported(backend):
    # Det: none of the three runtimes implements it
    m = _model("Det", [("X", TensorProto.FLOAT, (3, 3))], [("Y", TensorProto.FLOAT, ())], opset=11)
    with pytest.raises(Exception) as info:
        _run(backend, m, {"X": np.eye(3, dtype=np.float32)}, ["Y"])
    assert backend.is_unsupported(info.value), str(info.value)[:500]
    # and a generic failure is not
    assert not backend.is_unsupported(RuntimeError("index 7 out of bounds"))


def test_environment_records_version(backend):
    env = backend.environment()
    assert env["backend"] == backend.name
    version = env.get(backend.name)
    assert isinstance(version, str) and version[:1].isdigit(), env


@pytest.mark.parametrize("name", sorted(RUNTIMES))
def test_unknown_option_is_rejected(name):
    pytest.importorskip(RUNTIMES[name])
    with pytest.raises(ValueError, match="unknown .*option.*known"):
        resolve_backend(name, {"no_such_option": "1"})


def test_toy_suite_scores(backend, toy_suite):
    """The runner scores the toy Abs suite through the backend."""
    results = {r.tags["dtype"]: r for r in run_cases(toy_suite.cases, backend) if not r.expect_error}
    for dt in ("float", "float16"):
        assert results[dt].outcome == "pass", results[dt].message
    if backend.name == "openvino":
        # OpenVINO's CPU plugin runs float64 models in float32 and returns float64: even
        # Abs loses precision.  The dtype is right, so the runner sees it as values.
        assert results["double"].outcome in ("pass", "fail")
        assert "dtype" not in results["double"].message
    else:
        assert results["double"].outcome == "pass", results["double"].message
    expected_bf16 = {"openvino": "pass", "tract": "unsupported", "tinygrad": ("pass", "error")}[backend.name]
    assert results["bfloat16"].outcome in expected_bf16, results["bfloat16"].message


# ----------------------------------------------------------------- per runtime


def test_openvino_bfloat16_round_trip():
    pytest.importorskip("openvino")
    b = resolve_backend("openvino")
    m = _model("Abs", [("X", TensorProto.BFLOAT16, (3,))], [("Y", TensorProto.BFLOAT16, (3,))], opset=13)
    x = np.array([-1.5, 2.0, -3.0e38], ml_dtypes.bfloat16)
    (y,) = _run(b, m, {"X": x}, ["Y"])
    assert y.dtype == np.dtype(ml_dtypes.bfloat16)
    np.testing.assert_array_equal(y.astype(np.float32), np.abs(x.astype(np.float32)))


@pytest.mark.parametrize("onnx_type, dtype, values", [
    (TensorProto.INT4, ml_dtypes.int4, [-8, -1, 0, 3, 7]),  # odd length: the last byte half used
    (TensorProto.UINT4, ml_dtypes.uint4, [0, 1, 9, 15, 4]),
    (TensorProto.FLOAT4E2M1, ml_dtypes.float4_e2m1fn, [0.5, -6.0, 1.5, 0.0, 3.0]),
    (TensorProto.FLOAT8E4M3FN, ml_dtypes.float8_e4m3fn, [448.0, -0.015625, 1.0, 0.0, -2.5]),
    (TensorProto.FLOAT8E5M2, ml_dtypes.float8_e5m2, [57344.0, -1.0, 0.5, 0.0, float("inf")]),
])
def test_openvino_packed_and_float8_types_round_trip(onnx_type, dtype, values):
    """The adapter packs 4-bit inputs as OpenVINO expects and reads 4-bit and float8 outputs back in
    their own dtype (not as OpenVINO's uint8 buffer): Identity gives its input back."""
    pytest.importorskip("openvino")
    b = resolve_backend("openvino")
    m = _model("Identity", [("X", onnx_type, (5,))], [("Y", onnx_type, (5,))], opset=23)
    x = np.array(values, np.float32).astype(dtype)
    (y,) = _run(b, m, {"X": x}, ["Y"])
    assert y.dtype == np.dtype(dtype) and y.shape == x.shape
    np.testing.assert_array_equal(y.astype(np.float32), x.astype(np.float32))


def test_openvino_options():
    pytest.importorskip("openvino")
    b = resolve_backend("openvino", {"inference_precision_hint": "default", "inference_num_threads": "0"})
    assert b.config == {}
    assert resolve_backend("openvino").config == {"INFERENCE_PRECISION_HINT": "f32", "INFERENCE_NUM_THREADS": "1"}
    with pytest.raises(ValueError, match="inference_precision_hint"):
        resolve_backend("openvino", {"inference_precision_hint": "f8"})
    with pytest.raises(ValueError, match="not available"):
        resolve_backend("openvino", {"device": "NPU9"})


def test_openvino_conversion_check_failure_is_error_not_unsupported():
    pytest.importorskip("openvino")
    b = resolve_backend("openvino")
    exc = RuntimeError("FrontEnd API failed with OpConversionFailure:\n-- LayerNormalization-21 with a message:\n"
                       "Check 'backward_compatible_check || in_out_elements_equal' failed")
    assert not b.is_unsupported(exc)
    assert b.is_unsupported(RuntimeError("OpConversionFailure ... No conversion rule found for operations: Det-21"))


def test_tract_bfloat16_is_unsupported():
    pytest.importorskip("tract")
    b = resolve_backend("tract")
    m = _model("Abs", [("X", TensorProto.BFLOAT16, (3,))], [("Y", TensorProto.BFLOAT16, (3,))], opset=13)
    with pytest.raises(Exception) as info:
        b.prepare(m, m.SerializeToString())
    assert b.is_unsupported(info.value) and "bfloat16" in str(info.value).lower()


def test_tract_type_it_does_not_support_is_unsupported():
    """tract declines a kernel's element type at run time ("Erf does not support I8"): a clean
    refusal, scored unsupported, not error (287 cases of the whole suite)."""
    pytest.importorskip("tract")
    b = resolve_backend("tract")
    assert b.is_unsupported(RuntimeError('Evaluating #1 "Erf" Erf\n\nCaused by:\n    Erf does not support I8'))
    assert not b.is_unsupported(RuntimeError('Evaluating #1 "Pad" Pad\n\nCaused by:\n    assertion failed'))


def test_tract_error_messages_lose_the_backtrace():
    pytest.importorskip("tract")
    b = resolve_backend("tract")
    m = _model("Det", [("X", TensorProto.FLOAT, (3, 3))], [("Y", TensorProto.FLOAT, ())], opset=11)
    with pytest.raises(Exception) as info:
        b.prepare(m, m.SerializeToString())
    assert "Stack backtrace" not in str(info.value)


def test_tinygrad_device_and_bfloat16_output():
    pytest.importorskip("tinygrad")
    b = resolve_backend("tinygrad", {"device": "PYTHON"})
    assert b.environment()["device"] == "PYTHON"
    m = _model("Relu", [("X", TensorProto.BFLOAT16, (3,))], [("Y", TensorProto.BFLOAT16, (3,))], opset=14)
    x = np.array([-1.5, 2.0, 0.25], ml_dtypes.bfloat16)
    (y,) = _run(b, m, {"X": x}, ["Y"])
    assert y.dtype == np.dtype(ml_dtypes.bfloat16)  # not tinygrad's float32 upcast from Tensor.numpy()
    np.testing.assert_array_equal(y.astype(np.float32), np.maximum(x.astype(np.float32), 0))


def test_tinygrad_declining_assertion_is_unsupported():
    pytest.importorskip("tinygrad")
    b = resolve_backend("tinygrad", {"device": "PYTHON"})
    assert b.is_unsupported(AssertionError("only float32 is supported"))
    assert not b.is_unsupported(AssertionError("shape mismatch"))
    with pytest.raises(ValueError, match="cannot be opened"):
        resolve_backend("tinygrad", {"device": "NOSUCHDEVICE"})
