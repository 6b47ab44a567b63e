"""Tests of :mod:`conformance.dtypes` (the float8 types above all) and of feeding float8 to onnxruntime.

* every float8 bit pattern survives float8 -> float64 -> :func:`dtypes.round_to` (NaN: the
  type's canonical NaN of the same sign);
* :func:`dtypes.round_to` is correctly rounded from float64 (checked against a brute-force
  nearest-value search), unlike ``ml_dtypes``' own cast, which rounds through float32;
* overflow, -0 and NaN behave per type as the module docstring says;
* names, numpy dtypes, ``eps`` / ``finfo``, ``is_float`` / ``is_float8``; ``FLOAT_TYPES`` is
  still the four IEEE-like types;
* onnxruntime: float8 (and bfloat16) inputs and outputs go through the OrtValue raw-bits path
  (Identity and Cast, which onnxruntime implements for float8 on CPU).
"""

from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest
from onnx import TensorProto, helper

from conformance import dtypes

F8 = dtypes.FLOAT8_TYPES
pytestmark = pytest.mark.filterwarnings("ignore::RuntimeWarning")


def _all_values(t: int) -> np.ndarray:
    """All 256 values of a float8 type, in bit-pattern order."""
    return np.arange(256, dtype=np.uint8).view(dtypes.np_dtype(t))


def _nearest_even(x: float, t: int) -> float:
    """Brute-force round-to-nearest-even of a finite ``x`` onto the finite values of ``t``
    (None when ``x`` lies beyond the largest finite value's rounding range)."""
    vals = _all_values(t)
    v64 = vals.astype(np.float64)
    fin = np.isfinite(v64)
    bits, v64 = np.arange(256)[fin], v64[fin]
    d = np.abs(v64 - x)
    best = d.min()
    cand = np.unique(v64[d == best])
    if len(cand) == 1:
        return float(cand[0])
    # a tie: the candidate whose bit pattern has an even mantissa (last bit 0)
    even = [v for v in cand if (bits[v64 == v] % 2 == 0).all()]
    assert len(even) == 1, (x, cand)
    return float(even[0])


# ============================================================================ names and tables
def test_float_types_unchanged_and_float8_separate():
    assert dtypes.FLOAT_TYPES == (TensorProto.FLOAT16, TensorProto.BFLOAT16, TensorProto.FLOAT, TensorProto.DOUBLE)
    assert F8 == (TensorProto.FLOAT8E4M3FN, TensorProto.FLOAT8E4M3FNUZ, TensorProto.FLOAT8E5M2,
                  TensorProto.FLOAT8E5M2FNUZ)
    assert not set(F8) & set(dtypes.FLOAT_TYPES)


@pytest.mark.parametrize("t,name,np_name,eps,fmax", [
    (TensorProto.FLOAT8E4M3FN, "float8e4m3fn", "float8_e4m3fn", 0.125, 448.0),
    (TensorProto.FLOAT8E4M3FNUZ, "float8e4m3fnuz", "float8_e4m3fnuz", 0.125, 240.0),
    (TensorProto.FLOAT8E5M2, "float8e5m2", "float8_e5m2", 0.25, 57344.0),
    (TensorProto.FLOAT8E5M2FNUZ, "float8e5m2fnuz", "float8_e5m2fnuz", 0.25, 57344.0),
])
def test_float8_names_dtypes_eps(t, name, np_name, eps, fmax):
    dt = np.dtype(getattr(ml_dtypes, np_name))
    assert dtypes.type_name(t) == name
    assert dtypes.elem_type(name) == t == dtypes.elem_type(f"tensor({name})") == dtypes.elem_type(np_name)
    assert dtypes.np_dtype(t) == dt and dtypes.elem_type(dt) == t
    assert dtypes.eps(t) == eps == dtypes.eps(dt)
    assert float(dtypes.finfo(t).max) == fmax
    assert dtypes.is_float(t) and dtypes.is_float(dt) and dtypes.is_float8(t) and dtypes.is_float8(dt)
    # the spec's spelling is what the schemas use
    from onnx import defs
    assert f"tensor({name})" in defs.get_schema("Dropout", 22).type_constraints[0].allowed_type_strs


def test_is_float():
    for t in dtypes.FLOAT_TYPES:
        assert dtypes.is_float(t) and not dtypes.is_float8(t)
    for t in (TensorProto.INT64, TensorProto.BOOL, TensorProto.INT32, 12345):
        assert not dtypes.is_float(t) and not dtypes.is_float8(t)
    assert not dtypes.is_float(np.int64) and dtypes.is_float(np.float16) and not dtypes.is_float8(np.float32)
    with pytest.raises(KeyError):
        dtypes.type_name(12345)
    with pytest.raises(KeyError):
        dtypes.np_dtype(TensorProto.UNDEFINED)
    with pytest.raises(KeyError):
        dtypes.np_dtype(12345)


# ============================================================================ rounding
@pytest.mark.parametrize("t", F8)
def test_every_bit_pattern_round_trips(t):
    x = _all_values(t)
    bits = x.view(np.uint8)
    y = dtypes.round_to(x.astype(np.float64), t)
    assert y.dtype == dtypes.np_dtype(t)
    nan = np.isnan(x.astype(np.float64))
    assert (y.view(np.uint8)[~nan] == bits[~nan]).all()
    assert np.isnan(y[nan].astype(np.float64)).all()
    # the canonical NaN keeps the sign where the type has a signed NaN
    if t in (TensorProto.FLOAT8E4M3FN, TensorProto.FLOAT8E5M2):
        assert (np.signbit(y[nan].astype(np.float64)) == np.signbit(x[nan].astype(np.float64))).all()
    else:
        assert set(y[nan].view(np.uint8).tolist()) == {0x80}


@pytest.mark.parametrize("t", F8)
def test_round_to_is_correctly_rounded_from_float64(t):
    rng = np.random.default_rng(int(t))
    vals = _all_values(t).astype(np.float64)
    fin = np.sort(np.unique(vals[np.isfinite(vals)]))
    mids = (fin[:-1] + fin[1:]) / 2  # the ties
    tiny = np.abs(mids) * 2.0 ** -30 + 2.0 ** -60
    x = np.concatenate([mids, mids + tiny, mids - tiny, rng.uniform(-1, 1, 2000) * float(dtypes.finfo(t).max),
                        rng.normal(size=2000) * 4, rng.normal(size=500) * float(dtypes.finfo(t).smallest_normal)])
    got = dtypes.round_to(x, t).astype(np.float64)
    want = np.array([_nearest_even(v, t) for v in x])
    bad = np.flatnonzero(got != want)
    assert not bad.size, [(x[i], got[i], want[i]) for i in bad[:5]]
    # ml_dtypes' own float64 cast rounds through float32 and misses these near-ties
    naive = x.astype(dtypes.np_dtype(t)).astype(np.float64)
    assert (naive != want).any()


def test_round_to_keeps_shape_and_0d():
    for t in F8:
        assert dtypes.round_to(np.float64(0.375), t).shape == ()
        assert float(dtypes.round_to(np.float64(0.375), t).astype(np.float64)) == 0.375
        assert dtypes.round_to(np.zeros((2, 0, 3)), t).shape == (2, 0, 3)


def _f(t, v):
    return float(dtypes.round_to(np.array(v, dtype=np.float64), t).astype(np.float64))


def test_overflow_infinity_negative_zero_per_type():
    e4, e4uz, e5, e5uz = F8
    # e4m3fn: 448 max, ties to even at 464 stay 448, beyond -> NaN; no inf
    assert _f(e4, 464.0) == 448.0 and np.isnan(_f(e4, 464.0001)) and np.isnan(_f(e4, np.inf))
    # e4m3fnuz: 240 max (odd mantissa), the tie 248 goes up -> NaN
    assert _f(e4uz, 247.99) == 240.0 and np.isnan(_f(e4uz, 248.0)) and np.isnan(_f(e4uz, -np.inf))
    # e5m2: IEEE-like, +-inf
    assert _f(e5, 61439.0) == 57344.0 and _f(e5, 61440.0) == np.inf and _f(e5, -np.inf) == -np.inf
    # e5m2fnuz: no inf -> NaN
    assert _f(e5uz, 61439.0) == 57344.0 and np.isnan(_f(e5uz, 61440.0)) and np.isnan(_f(e5uz, np.inf))
    # -0: kept by e4m3fn and e5m2, +0 in the fnuz types (also for negative underflow)
    for t, has_neg_zero in ((e4, True), (e4uz, False), (e5, True), (e5uz, False)):
        z = dtypes.round_to(np.array([-0.0, -1e-30]), t)
        assert (z.astype(np.float64) == 0).all()
        assert bool(np.signbit(z.astype(np.float64)).all()) is has_neg_zero
        if not has_neg_zero:
            assert (z.view(np.uint8) == 0).all()


def test_bfloat16_rounding_unchanged():
    x = np.array([1.0 + 2.0 ** -8 + 2.0 ** -40, 3.14159, -2.5e-40])
    assert dtypes.round_to(x, TensorProto.BFLOAT16).tobytes() == x.astype(np.float32).astype(ml_dtypes.bfloat16).tobytes()


# ============================================================================ onnxruntime
def _model(t: int, opset: int = 21):
    n1 = helper.make_node("Identity", ["x"], ["y"])
    n2 = helper.make_node("Cast", ["x"], ["z"], to=TensorProto.FLOAT)
    n3 = helper.make_node("Cast", ["f"], ["w"], to=t)
    g = helper.make_graph([n1, n2, n3], "g",
                          [helper.make_tensor_value_info("x", t, [None]), helper.make_tensor_value_info("f", 1, [None])],
                          [helper.make_tensor_value_info("y", t, [None]), helper.make_tensor_value_info("z", 1, [None]),
                           helper.make_tensor_value_info("w", t, [None])])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", opset)])
    m.ir_version = 10
    return m


@pytest.mark.parametrize("t", F8 + (TensorProto.BFLOAT16,))
def test_onnxruntime_feeds_and_reads_float8_bits(t):
    pytest.importorskip("onnxruntime")
    from conformance.backends.ort import OnnxRuntimeBackend

    be = OnnxRuntimeBackend()
    m = _model(t)
    prepared = be.prepare(m, m.SerializeToString())
    if t == TensorProto.BFLOAT16:
        x = dtypes.round_to(np.array([1.5, -0.0, np.nan, 2.0 ** -130, -3.0, 1e38]), t)
    else:
        x = _all_values(t)  # every bit pattern, NaNs and subnormals included
    f = np.array([0.3, -2.7, 100.0, 1e-3], dtype=np.float32)
    y, z, w = be.run(prepared, {"x": x, "f": f}, ["y", "z", "w"])
    assert y.dtype == x.dtype and y.shape == x.shape
    assert y.tobytes() == x.tobytes()  # Identity: bit for bit
    assert z.dtype == np.float32
    fin = np.isfinite(x.astype(np.float64))
    assert (z[fin] == x[fin].astype(np.float32)).all() and np.isnan(z[np.isnan(x.astype(np.float64))]).all()
    # Cast float -> T (in range, so saturate or not does not matter): round to nearest even
    assert w.dtype == x.dtype and (w.astype(np.float64) == dtypes.round_to(f.astype(np.float64), t).astype(np.float64)).all()


def test_onnxruntime_plain_types_still_use_run():
    pytest.importorskip("onnxruntime")
    from conformance.backends.ort import OnnxRuntimeBackend

    be = OnnxRuntimeBackend()
    m = _model(TensorProto.FLOAT16)
    prepared = be.prepare(m, m.SerializeToString())
    x = np.array([1.5, -0.0], dtype=np.float16)
    y, z, w = be.run(prepared, {"x": x, "f": np.array([2.0], np.float32)}, ["y", "z", "w"])
    assert y.tobytes() == x.tobytes() and w.dtype == np.float16 and float(w[0]) == 2.0
