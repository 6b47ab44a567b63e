"""QuantizeLinear / DequantizeLinear (conformance/ops/quantize.py): the exact oracle against the
text's worked rules, a legitimate float32 kernel that must pass every case it runs, and wrong
kernels that must fail cases the right one passes (rounding half away from zero, wrap-around,
the axis or block size ignored, the zero point ignored, the reciprocal of the scale,
DequantizeLinear's ``x * scale - zero_point``, float8 ``saturate`` ignored)."""

from __future__ import annotations

from collections import Counter

import ml_dtypes
import numpy as np
import pytest

from conformance.backends.kernel import KernelBackend
from conformance.ops import engine
from conformance.ops import quantize as ops_q
from conformance.ops import values as V
from conformance.reference import quantize as ref
from conformance.runner import run_cases
from oracle_checks import sort_findings  # tests/oracle_checks.py

pytestmark = pytest.mark.filterwarnings("ignore::RuntimeWarning")
E = {e.op: e for e in ops_q.ENTRIES}
INT8ISH = ("int8", "uint8", "int16", "uint16")
F8 = ("float8e4m3fn", "float8e5m2", "float8e4m3fnuz", "float8e5m2fnuz")


# ----------------------------------------------------------------------------- the oracle
def test_ties_round_to_even_with_a_scale_whose_reciprocal_is_inexact():
    """The issue's example: scale 7, x = 45.5 gives 6.5, which rounds to 6 (the reciprocal
    of 7 in float32 gives 6.5000005 -> 7)."""
    x = np.array([45.5, 52.5, -45.5, 3.5, 2.5, -0.5, 0.5], dtype=np.float64)
    y = ref.quantize_linear(x, np.array(7.0), np.array(0, dtype=object), axis=1, block_size=0, out_type="int8",
                            saturate=True, version=13)
    assert list(y) == [6, 8, -6, 0, 0, 0, 0]
    assert round(float(np.float32(45.5) * (np.float32(1) / np.float32(7)))) == 7  # what the wrong kernel sees


def test_saturation_and_zero_point():
    y = ref.quantize_linear(np.array([1000.0, -1000.0, 2.5, 3.5]), np.array(1.0), np.array(10, dtype=object), axis=1,
                            block_size=0, out_type="uint8", saturate=True, version=13)
    assert list(y) == [255, 0, 12, 14]
    y = ref.quantize_linear(np.array([7.4, 7.6, -8.6]), np.array(1.0), None, axis=1, block_size=0, out_type="int4",
                            saturate=True, version=21)
    assert list(y) == [7, 7, -8]


def test_float8_saturate_tables():
    x = np.array([1e6, -1e6, np.inf, np.nan])
    on = ref.quantize_linear(x, np.array(1.0), None, axis=1, block_size=0, out_type="float8e4m3fn", saturate=True,
                             version=19)
    off = ref.quantize_linear(x, np.array(1.0), None, axis=1, block_size=0, out_type="float8e4m3fn", saturate=False,
                              version=19)
    assert list(on[:3]) == [448.0, -448.0, 448.0] and np.isnan(on[3])
    assert np.isnan(off).all()
    e5 = ref.quantize_linear(x, np.array(1.0), None, axis=1, block_size=0, out_type="float8e5m2", saturate=True,
                             version=19)
    assert list(e5[:3]) == [57344.0, -57344.0, 57344.0]  # Cast's table: Inf -> FLT_MAX


def _loop_expand(p, shape, axis, bs):
    """Independent granularity rule: the scale of element ``idx`` by explicit index arithmetic."""
    p = np.asarray(p)
    out = np.empty(shape, dtype=object)
    a = axis % len(shape) if shape else 0
    for idx in np.ndindex(*shape):
        if p.ndim == 0:
            out[idx] = p[()]
        elif p.ndim == 1 and bs == 0:
            out[idx] = p[idx[a]]
        else:
            j = list(idx)
            j[a] = idx[a] // bs
            out[idx] = p[tuple(j)]
    return out


@pytest.mark.parametrize("shape,sshape,axis,bs", [((2, 3), (), 1, 0), ((2, 3, 4), (3,), 1, 0), ((2, 3, 4), (2,), -3, 0),
                                                  ((2, 7), (2, 3), 1, 3), ((8, 2), (2, 2), 0, 4), ((2, 2, 9), (2, 2, 3), -1, 4)])
def test_expand_matches_an_index_loop(shape, sshape, axis, bs):
    p = np.arange(int(np.prod(sshape, dtype=np.int64))).reshape(sshape)
    assert (ref.expand(p, shape, axis, bs) == _loop_expand(p, shape, axis, bs)).all()


@pytest.mark.parametrize("shape,sshape,axis,bs", [((2, 3), (2,), 1, 0), ((2, 6), (2, 2), 1, 2), ((2, 6), (2, 2), 1, 6),
                                                  ((2, 3), (3,), 2, 0), ((2, 6), (3, 2), 1, 3)])
def test_invalid_granularities_raise(shape, sshape, axis, bs):
    with pytest.raises(ValueError):
        ref.granularity(sshape, shape, axis, bs)


def test_dequantize_oracle():
    y = ref.dequantize_linear(np.array([0, 255, 128], dtype=object), np.array([0.5, 2.0, 3.0]),
                              np.array([128, 128, 100], dtype=object), axis=0, block_size=0)
    assert list(y) == [-64.0, 254.0, 84.0]


# ----------------------------------------------------------------------------- kernels
def _expand(p, shape, axis, bs, first_only=False):
    p = np.asarray(p)
    if p.ndim == 0 or p.size == 1 and bs == 0:
        return np.broadcast_to(p.reshape(()), shape)
    if first_only:
        return np.broadcast_to(p.reshape(-1)[0], shape)
    a = axis % len(shape)
    if p.ndim == 1:
        sh = [1] * len(shape)
        sh[a] = shape[a]
        return np.broadcast_to(p.reshape(sh), shape)
    return np.take(np.repeat(p, bs, axis=a), np.arange(shape[a]), axis=a)


def _int_range(dt):
    """(min, max) of an integer dtype (numpy's or ml_dtypes' 4- and 2-bit ones), else None."""
    try:
        i = ml_dtypes.iinfo(dt)
    except (ValueError, TypeError):
        return None
    return int(i.min), int(i.max)


def q_kernel(flaw: str | None = None):
    """QuantizeLinear in float32: ``x / scale`` correctly rounded, rint (half to even),
    ``+ zero_point``, saturation; float8 targets through ml_dtypes with the saturate table."""

    def kernel(inputs, attrs, outputs, opset):
        x = inputs["x"].astype(np.float32)
        s = inputs["y_scale"].astype(np.float32)
        zp = inputs.get("y_zero_point")
        od = attrs.get("output_dtype", 0)
        dt = zp.dtype if zp is not None else (V.np_dtype(V.name_of(od)) if od else np.dtype(np.uint8))
        axis, bs = attrs.get("axis", 1), attrs.get("block_size", 0)
        if flaw == "axis-default":  # the attribute not read: always axis 1
            axis = 1
        blocked = s.ndim > 1 or bs > 0
        S = _expand(s, x.shape, axis, bs, first_only=(flaw == "axis-ignored" and s.ndim == 1 and s.size > 1)
                    or (flaw == "block-ignored" and blocked))
        Z = np.zeros(x.shape, np.float32) if zp is None or flaw == "zp-ignored" else \
            _expand(zp.astype(np.float32), x.shape, axis, bs)
        q = x * (np.float32(1) / S) if flaw == "reciprocal" else x / S
        if _int_range(dt) is not None:
            r = np.sign(q) * np.floor(np.abs(q) + np.float32(0.5)) if flaw == "half-away" else np.rint(q)
            y = r.astype(np.float64) + Z
            if flaw == "wrap":
                return {"y": y.astype(np.int64).astype(dt)}
            lo, hi = _int_range(dt)
            return {"y": np.clip(y, lo, hi).astype(dt)}
        v = (q + Z).astype(np.float32)
        sat = attrs.get("saturate", 1) and flaw != "saturate-ignored"
        if sat:
            m = np.float32(float(ml_dtypes.finfo(dt).max))
            v = np.clip(v, -m, m).astype(np.float32)  # Cast's saturate table: +-Inf -> +-FLT_MAX too
        return {"y": v.astype(dt)}

    return kernel


def dq_kernel(flaw: str | None = None):
    """DequantizeLinear in float32: ``(x - zero_point) * scale``, rounded to the output type."""

    def kernel(inputs, attrs, outputs, opset):
        x = inputs["x"].astype(np.float32)
        s = inputs["x_scale"].astype(np.float32)
        zp = inputs.get("x_zero_point")
        od = attrs.get("output_dtype", 0)
        dt = V.np_dtype(V.name_of(od)) if od else inputs["x_scale"].dtype
        axis, bs = attrs.get("axis", 1), attrs.get("block_size", 0)
        S = _expand(s, x.shape, axis, bs)
        Z = np.zeros(x.shape, np.float32) if zp is None else _expand(zp.astype(np.float32), x.shape, axis, bs)
        y = x * S - Z if flaw == "x*s-z" else (x - Z) * S
        return {"y": y.astype(dt)}

    return kernel


def _q_point(p) -> bool:
    t = dict(p.types)
    out = t.get("T3", t.get("T2"))
    return out in INT8ISH and t["T1"] in ("float", "float16") and t.get("T2") in ("float", "float16", "int8", "uint8")


def _f8_point(p) -> bool:
    t = dict(p.types)
    return t.get("T3", t.get("T2")) in F8 and t["T1"] == "float" and p.version in (19, 24)


def _dq_point(p) -> bool:
    t = dict(p.types)
    x = t.get("T1", t.get("T"))
    return x in INT8ISH + ("int32",) and t.get("T3", t.get("T2", "float")) in ("float", "float16")


@pytest.fixture(scope="module")
def q_cases():
    return [c for c in engine.cases(E["QuantizeLinear"], 0, select=_q_point) if c.expect_error is None]


@pytest.fixture(scope="module")
def f8_cases():
    return [c for c in engine.cases(E["QuantizeLinear"], 0, select=_f8_point) if c.expect_error is None]


@pytest.fixture(scope="module")
def dq_cases():
    return [c for c in engine.cases(E["DequantizeLinear"], 0, select=_dq_point) if c.expect_error is None]


def _run(cases, kernels, name):
    return run_cases(cases, KernelBackend(kernels, name=name, check=False))


def test_legitimate_quantize_kernel_passes(q_cases, f8_cases):
    cases = q_cases + f8_cases
    assert len(q_cases) >= 150 and len(f8_cases) >= 20
    assert {c.since_version for c in q_cases} == {10, 13, 19, 21, 23, 24, 25, 28}
    res = _run(cases, {"QuantizeLinear": q_kernel()}, "f32")
    bad = [(c.id, r.outcome, r.message[:200]) for c, r in zip(cases, res) if r.outcome != "pass"]
    assert not bad, bad[:5]


def test_legitimate_dequantize_kernel_passes(dq_cases):
    assert len(dq_cases) >= 100
    res = _run(dq_cases, {"DequantizeLinear": dq_kernel()}, "f32")
    bad = [(c.id, r.outcome, r.message[:200]) for c, r in zip(dq_cases, res) if r.outcome != "pass"]
    assert not bad, bad[:5]


@pytest.mark.parametrize("flaw,least", [("half-away", 40), ("wrap", 40), ("axis-ignored", 20), ("block-ignored", 10),
                                        ("zp-ignored", 40), ("reciprocal", 10)])
def test_wrong_quantize_kernels_fail(flaw, least, q_cases):
    res = _run(q_cases, {"QuantizeLinear": q_kernel(flaw)}, flaw)
    n = Counter(r.outcome for r in res)
    assert n["fail"] >= least, n
    fails = {c.tags["shape"] for c, r in zip(q_cases, res) if r.outcome == "fail"}
    if flaw == "axis-ignored":
        assert any(s.startswith("axis=") for s in fails), fails
    if flaw == "block-ignored":
        assert all(s.startswith("blocked/") for s in fails), fails


def test_axis_attribute_ignored_fails(q_cases):
    """A kernel that always quantizes along axis 1: fails where the pattern's axis is another
    one of the same length (errors where the lengths differ, which only an error shows)."""
    res = _run(q_cases, {"QuantizeLinear": q_kernel("axis-default")}, "axis-default")
    fails = [c for c, r in zip(q_cases, res) if r.outcome == "fail"]
    assert len(fails) >= 5, Counter(r.outcome for r in res)
    assert all(c.attributes.get("axis", 1) % len(c.inputs[0].shape) != 1 for c in fails)


def test_saturate_ignored_fails_float8(f8_cases):
    res = _run(f8_cases, {"QuantizeLinear": q_kernel("saturate-ignored")}, "nosat")
    n = Counter(r.outcome for r in res)
    assert n["fail"] >= 5, n


def test_dequantize_x_times_scale_minus_zero_point_fails(dq_cases):
    res = _run(dq_cases, {"DequantizeLinear": dq_kernel("x*s-z")}, "x*s-z")
    n = Counter(r.outcome for r in res)
    assert n["fail"] >= len(dq_cases) // 3, n


def test_error_cases_present():
    for e in (ops_q.QUANTIZE_LINEAR, ops_q.DEQUANTIZE_LINEAR):
        tags = {c.tags["error"] for c in engine.error_cases(e)}
        assert {"scale-length", "axis-out-of-range", "block-size-too-small", "block-size-too-large"} <= tags, tags


# ----------------------------------------------------------------------------- DynamicQuantizeLinear
def dyn_kernel(flaw: str | None = None):
    """DynamicQuantizeLinear in float32, as onnx's function body: the range including 0, the
    scale ``range / 255``, the zero point rounded half to even and saturated, then
    QuantizeLinear."""

    def kernel(inputs, attrs, outputs, opset):
        x = inputs["x"].astype(np.float32)
        hi, lo = np.maximum(np.float32(0), x.max()), np.minimum(np.float32(0), x.min())
        scale = np.float32((hi - lo) / np.float32(255))
        zf = np.clip(np.float32(0) - lo / scale, 0, 255)
        zp = np.float32(np.floor(zf) if flaw == "zp-truncated" else np.rint(zf))
        y = np.clip(np.rint(x / scale) + zp, 0, 255)
        return {"y": y.astype(np.uint8), "y_scale": np.array(scale, np.float32), "y_zero_point": np.array(zp).astype(np.uint8)}

    return kernel


def test_dynamic_oracle_example():
    """Range [-1.5, 1.0] (0 inside): scale 2.5/255, zero point 1.5/(2.5/255) = 153 exactly."""
    y, s, z = ref.dynamic_quantize_linear(np.array([-1.5, 0.0, 1.0]))
    assert float(s) == float(np.float32(2.5 / 255)) and int(z[()]) == 153
    assert list(y) == [0, 153, 255]


def test_dynamic_kernels():
    cases = [c for c in engine.cases(E["DynamicQuantizeLinear"], 0) if c.expect_error is None]
    assert len(cases) >= 12
    res = _run(cases, {"DynamicQuantizeLinear": dyn_kernel()}, "f32")
    bad = [(c.id, r.outcome, r.message[:200]) for c, r in zip(cases, res) if r.outcome != "pass"]
    assert not bad, bad[:5]
    res = _run(cases, {"DynamicQuantizeLinear": dyn_kernel("zp-truncated")}, "trunc")
    n = Counter(r.outcome for r in res)
    assert n["fail"] >= 3, n


# ----------------------------------------------------------------------------- packed types
PACKED = ("int4", "uint4", "int2", "uint2")


def _packed_point(p) -> bool:
    t = dict(p.types)
    return t.get("T3", t.get("T2")) in PACKED and t["T1"] == "float" and t.get("T2") in ("float", "int4", "uint4") \
        and p.version in (21, 25)


@pytest.fixture(scope="module")
def packed_cases():
    return [c for c in engine.cases(E["QuantizeLinear"], 0, select=_packed_point) if c.expect_error is None]


def _nibble_swap(kernel):
    """The values right, the packing wrong: adjacent elements exchanged, as a kernel writing
    the high nibble (or 2-bit field) first decodes (an odd count pairs the last with padding)."""

    def wrong(inputs, attrs, outputs, opset):
        y = kernel(inputs, attrs, outputs, opset)["y"]
        flat = y.ravel().copy()
        m = flat.size - flat.size % 2
        flat[:m] = flat[:m].reshape(-1, 2)[:, ::-1].ravel()
        return {"y": flat.reshape(y.shape)}

    return wrong


def test_packed_types_round_trip_and_wrong_packing_is_caught(packed_cases, tmp_path):
    from conformance.bundle import read_bundle
    from conformance.bundle_write import write_bundle
    from conformance.suite import Suite

    assert {c.outputs[0].elem_type for c in packed_cases} == {V.elem(t) for t in PACKED}
    assert any(int(np.prod(c.datasets[0].outputs["y"].shape)) % 2 for c in packed_cases)  # odd counts
    back = read_bundle(write_bundle(Suite(cases=packed_cases, seed=0, ops=["QuantizeLinear"], generators={}),
                                    tmp_path / "b"))
    for a, b in zip(packed_cases, back.cases):
        for name in ("y",):
            ya, yb = a.datasets[0].outputs[name], b.datasets[0].outputs[name]
            assert ya.dtype == yb.dtype and ya.tobytes() == yb.tobytes(), a.id
        for k, v in a.datasets[0].inputs.items():
            assert v.tobytes() == b.datasets[0].inputs[k].tobytes(), (a.id, k)
    res = _run(packed_cases, {"QuantizeLinear": q_kernel()}, "f32")
    assert all(r.outcome == "pass" for r in res), [(c.id, r.message[:100]) for c, r in zip(packed_cases, res)
                                                   if r.outcome != "pass"][:3]
    res = _run(packed_cases, {"QuantizeLinear": _nibble_swap(q_kernel())}, "swap")
    n = Counter(r.outcome for r in res)
    assert n["fail"] >= len(packed_cases) // 2, n


# ----------------------------------------------------------------------------- onnx.reference
def _reference_disagreement(case, res) -> str | None:
    """Why onnx.reference (onnx 1.23.2) and the suite disagree; None if unknown.  The suite is
    right in each:

    * ``narrow-float-nan``: QuantizeLinear of NaN to float4e2m1/float6e2m3/float6e3m2 (types
      without NaN): onnx.reference writes the pattern of -0; the ONNX technical notes
      (float4.md, float6.md) and the Cast family's reading give +max.
    * ``block-size-range``: block_size above the accepted range ``[ceil(Di/Si),
      ceil(Di/(Si-1))-1]`` accepted (onnx.reference repeats and crops).
    * ``no-dq-before-19``: onnx.reference implements DequantizeLinear from 19 only ("No
      implementation for operator 'DequantizeLinear' ... version 13, found 19, 21, 23, 25"):
      value and error cases of versions 10 and 13 are declined.
    * ``no-type-check``: DynamicQuantizeLinear with a double x accepted (T1 is float only).
    """
    msg = res.message or ""
    if case.expect_error:
        if case.tags.get("error") == "block-size-too-large" and res.outcome == "fail":
            return "block-size-range"
        if case.op == "DequantizeLinear" and res.outcome == "unsupported" and case.since_version in (10, 13):
            return "no-dq-before-19"
        if case.op == "DynamicQuantizeLinear" and case.tags.get("error") == "x-double":
            return "no-type-check"
        return None
    if case.op == "DequantizeLinear" and case.since_version in (10, 13) and "No implementation" in msg:
        return "no-dq-before-19"
    if case.op == "QuantizeLinear" and res.outcome == "fail" and any(
            f"T3={t}" in case.id for t in ("float4e2m1", "float6e2m3", "float6e3m2")):
        x = case.datasets[0].inputs["x"]
        return "narrow-float-nan" if np.isnan(np.asarray(x, dtype=np.float64)).any() else None
    return None


def test_agreement_with_onnx_reference():
    from conformance.backends import resolve_backend

    cases = [c for e in ops_q.ENTRIES for c in engine.cases(e, 0)]
    results = run_cases(cases, resolve_backend("onnx-reference"))
    why, unexplained = sort_findings(cases, results, _reference_disagreement)
    assert not unexplained, unexplained[:5]
    assert set(why) == {"narrow-float-nan", "block-size-range", "no-dq-before-19", "no-type-check"}, why
