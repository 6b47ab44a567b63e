"""onnxruntime's com.microsoft QLinearSigmoid / QLinearLeakyRelu / QLinearWhere /
QLinearGlobalAveragePool (conformance/ops/contrib_quant.py):

* the oracle against an independent loop (the logistic through math.tanh, Fractions);
* legitimate kernels (a float32 lookup table as onnxruntime builds it, a float32 reciprocal of
  Y_scale, another float32 logistic formula, float64) pass every generated case;
* wrong kernels (zero points swapped or ignored, no saturation, rounding half away from zero,
  truncation, alpha ignored) fail cases the right kernel passes;
* the error cases are rejected by a kernel that checks the schema's types.
"""

from __future__ import annotations

import math
from collections import Counter
from fractions import Fraction

import numpy as np
import pytest

from conformance.backends.kernel import KernelBackend
from conformance.ops import contrib_quant as ops_cq
from conformance.ops import engine
from conformance.reference import contrib_quant as ref
from conformance.runner import run_cases

OPS = ("QLinearSigmoid", "QLinearLeakyRelu")


def _obj(vals, shape):
    out = np.empty(shape, dtype=object)
    out.ravel()[:] = [int(v) for v in np.asarray(vals).ravel().tolist()]
    return out


def test_oracle_matches_an_independent_loop():
    rng = np.random.default_rng(3)
    for op in OPS:
        for t, (lo, hi) in (("uint8", (0, 255)), ("int8", (-128, 127))):
            x = _obj(rng.integers(lo, hi + 1, size=12), (3, 4))
            zx, zy = (int(v) for v in rng.integers(lo, hi + 1, size=2))
            sx = float(np.float32(rng.uniform(0.01, 0.1)))
            sy = float(np.float32(rng.uniform(0.002, 0.01)))
            got = ref.qlinear_lookup(op, x, np.array(sx), np.array(zx), np.array(sy), np.array(zy), t, alpha=0.3)
            for i in range(3):
                for j in range(4):
                    r = sx * (int(x[i, j]) - zx)
                    if op == "QLinearSigmoid":
                        f = Fraction(0.5 * (1.0 + math.tanh(r / 2)))  # the logistic through tanh, not exp
                    else:
                        f = Fraction(r) if r >= 0 else Fraction(float(np.float32(0.3))) * Fraction(r)
                    v = f / Fraction(sy)
                    q = round(v)  # Python: half to even
                    assert got[i, j] == min(hi, max(lo, q + zy)), (op, t, i, j)


def test_ties_round_to_even_and_saturate():
    x = _obj([1, 3, 5, 7, 200], (5,))
    # X_scale 1/8, Y_scale 1/4: v = (x - 0) / 2 -> 0.5, 1.5, 2.5, 3.5 (ties) and 100
    got = ref.qlinear_lookup("QLinearLeakyRelu", x, np.array(0.125), np.array(0), np.array(0.25), np.array(0),
                             "uint8")
    assert got.tolist() == [0, 2, 2, 4, 100]
    got = ref.qlinear_lookup("QLinearLeakyRelu", _obj([0, 255], (2,)), np.array(1.0), np.array(128),
                             np.array(0.25), np.array(0), "int8", alpha=1.0)
    assert got.tolist() == [-128, 127]  # -512 and 508 saturate


def _kernel(op, mode="table32", flaw=None):
    """A float32 lookup-table kernel of ``op``: every X value dequantized in float32
    (``X_scale * (X - X_zero_point)``), f in float32 (``table32``: ``1 / (1 + exp(-x))``;
    ``tanh32``: ``(1 + tanh(x / 2)) / 2``; ``recip32``: the quotient by ``Y_scale`` as a product
    with its float32 reciprocal; ``f64``: everything in float64), quantized with rint (half to
    even), + Y_zero_point, saturated.  ``flaw`` names a deliberate mistake."""

    def kernel(inputs, attrs, outputs, opset):
        x = inputs["X"]
        t = x.dtype
        for n in ("X_zero_point", "Y_zero_point"):
            if n in inputs and inputs[n].dtype != t:
                raise TypeError(f"{n} has X's type")
        for n in ("X_scale", "Y_scale"):
            if inputs[n].dtype != np.float32:
                raise TypeError(f"{n} is float")
        zx = np.int64(inputs["X_zero_point"]) if "X_zero_point" in inputs else np.int64(0)
        zy = np.int64(inputs["Y_zero_point"]) if "Y_zero_point" in inputs else np.int64(0)
        if flaw == "swap-zero-points":
            zx, zy = zy, zx
        if flaw == "ignore-X-zero-point":
            zx = np.int64(0)
        if flaw == "ignore-Y-zero-point":
            zy = np.int64(0)
        dt = np.float64 if mode == "f64" else np.float32
        sx, sy = dt(inputs["X_scale"]), dt(inputs["Y_scale"])
        alpha = dt(attrs.get("alpha", 0.01))
        if flaw == "alpha-ignored":
            alpha = dt(0.01)
        d = (x.astype(np.int64) - zx).astype(dt)
        xr = (sx * d).astype(dt)
        if op == "QLinearSigmoid":
            if mode == "tanh32":
                f = ((dt(1) + np.tanh(xr / dt(2))) / dt(2)).astype(dt)
            else:
                f = (dt(1) / (dt(1) + np.exp(-xr))).astype(dt)
        else:
            f = np.where(xr >= 0, xr, alpha * xr).astype(dt)
        v = (f * (dt(1) / sy)).astype(dt) if mode == "recip32" else (f / sy).astype(dt)
        if flaw == "half-away":
            r = np.sign(v) * np.floor(np.abs(v) + dt(0.5))
        elif flaw == "truncate":
            r = np.trunc(v)
        else:
            r = np.rint(v)
        y = r.astype(np.int64) + zy
        i = np.iinfo(t)
        return {outputs[0]: y.astype(t) if flaw == "wrap" else np.clip(y, i.min, i.max).astype(t)}

    return kernel


@pytest.fixture(scope="module")
def cases():
    return [c for e in ops_cq.ENTRIES for c in engine.cases(e, 0)]


def _values(cases):
    return [c for c in cases if c.expect_error is None]


def test_case_mix(cases):
    vals = [c for c in _values(cases) if c.op in OPS]
    n = Counter((c.op, c.tags["numerics"]) for c in vals)
    assert n[("QLinearSigmoid", "requant")] >= 10 and n[("QLinearSigmoid", "saturate")] >= 10, n
    assert all(n[("QLinearLeakyRelu", k)] >= 8 for k in ("requant", "saturate", "ties")), n
    opt = Counter(c.tags["optional_inputs"] for c in vals)
    assert set(opt) == {"none", "X_zero_point", "Y_zero_point", "X_zero_point,Y_zero_point"}, opt
    assert {c.tags["dtype"] for c in vals} == {"uint8", "int8"}
    # the saturate class really saturates, the ties class really holds exact ties
    sat = [c for c in vals if c.tags["numerics"] == "saturate" and c.tags["shape"] == "long/r1"]
    assert sat
    for c in sat:
        y = np.asarray(c.datasets[0].outputs["Y"])
        i = np.iinfo(y.dtype)
        assert ((y == i.min) | (y == i.max)).mean() > 0.3, c.id


@pytest.mark.parametrize("mode", ["table32", "tanh32", "recip32", "f64"])
def test_legitimate_kernels_pass(mode, cases):
    vals = [c for c in _values(cases) if c.op in OPS]
    k = {op: _kernel(op, mode) for op in OPS}
    res = run_cases(vals, KernelBackend(k, name=mode, check=False))
    bad = [(c.id, r.outcome, r.message[:200]) for c, r in zip(vals, res) if r.outcome != "pass"]
    assert not bad, bad[:5]


def _has(c, *names):
    return all(n in c.tags["optional_inputs"].split(",") for n in names)


WRONG = {
    # flaw: (filter, operators, the least number of fails per operator)
    "swap-zero-points": (lambda c: _has(c, "X_zero_point", "Y_zero_point"), OPS, 5),
    "ignore-X-zero-point": (lambda c: _has(c, "X_zero_point"), OPS, 5),
    "ignore-Y-zero-point": (lambda c: _has(c, "Y_zero_point"), OPS, 5),
    "wrap": (lambda c: c.tags["numerics"] == "saturate", OPS, 5),
    "truncate": (lambda c: c.tags["numerics"] == "requant", OPS, 5),
    "half-away": (lambda c: c.tags["numerics"] == "ties", ("QLinearLeakyRelu",), 3),
    "alpha-ignored": (lambda c: c.tags["params"] in ("alpha=0.5", "non-default", "alpha-0.2")
                      and c.tags["numerics"] != "saturate", ("QLinearLeakyRelu",), 2),
}


@pytest.mark.parametrize("flaw", sorted(WRONG))
def test_wrong_kernels_are_caught(flaw, cases):
    keep, ops, least = WRONG[flaw]
    sel = [c for c in _values(cases) if c.op in ops and keep(c)]
    assert len(sel) >= 2 * least, len(sel)
    res = run_cases(sel, KernelBackend({op: _kernel(op, flaw=flaw) for op in ops}, name=flaw, check=False))
    n = Counter((c.op, r.outcome) for c, r in zip(sel, res))
    assert all(n[(op, "fail")] >= least for op in ops), n


def test_error_cases_are_rejected(cases):
    errs = [c for c in cases if c.expect_error and c.op in OPS]
    assert len(errs) == 6
    res = run_cases(errs, KernelBackend({op: _kernel(op) for op in OPS}, name="e", check=True))
    assert all(r.outcome == "pass" for r in res), [(c.id, r.message[:100]) for c, r in zip(errs, res)
                                                    if r.outcome != "pass"]


def test_robustness_rule_rejects_near_boundary_entries():
    # v = 0.5 + 1e-7 relative: within the slack of a boundary -> not robust; 0.5 exactly with an
    # exact computation -> robust (a tie), without -> not
    v = np.array([Fraction(1, 2) + Fraction(1, 10**7), Fraction(1, 2), Fraction(1, 2), Fraction(3, 10)],
                 dtype=object)
    xr = np.array([Fraction(1, 8)] * 4, dtype=object)
    ok = ref.robust_lookup("QLinearLeakyRelu", v, xr, np.array(0.25), None, "uint8",
                           np.array([False, True, False, False]))
    assert ok.tolist() == [False, True, False, True]
    assert not ref.robust_lookup("QLinearSigmoid", v[1:2], xr[1:2], np.array(0.25), None, "uint8", True)[0]


def test_reproducible(cases):
    again = [c for e in ops_cq.ENTRIES for c in engine.cases(e, 0)]
    assert [c.id for c in again] == [c.id for c in cases]


# ============================================================================ QLinearWhere
def test_where_oracle_matches_an_independent_loop():
    rng = np.random.default_rng(5)
    for t, (lo, hi) in (("uint8", (0, 255)), ("int8", (-128, 127))):
        c = rng.integers(0, 2, size=(2, 1)).astype(bool)
        x = _obj(rng.integers(lo, hi + 1, size=3), (3,))
        y = _obj(rng.integers(lo, hi + 1, size=6), (2, 3))
        zx, zy, zz = (int(v) for v in rng.integers(lo, hi + 1, size=3))
        sx, sy, sz = (float(np.float32(v)) for v in rng.uniform(0.01, 0.1, size=3))
        got = ref.qlinear_where(c, x, np.array(sx), np.array(zx), y, np.array(sy), np.array(zy), np.array(sz),
                                np.array(zz), t)
        for i in range(2):
            for j in range(3):
                if c[i, 0]:
                    v = Fraction(sx) * (int(x[j]) - zx) / Fraction(sz)
                else:
                    v = Fraction(sy) * (int(y[i, j]) - zy) / Fraction(sz)
                assert got[i, j] == min(hi, max(lo, round(v) + zz)), (t, i, j)


def _where_kernel(mode="table32", flaw=None):
    """QLinearWhere in float32 (``table32``: ``X_real / z_scale`` with ``X_real = x_scale (X -
    x_zero_point)``; ``ratio32``: ``(X - x_zero_point)`` times the float32 ratio ``x_scale /
    z_scale``; ``f64``), rint, + z_zero_point, saturation.  ``flaw``: a deliberate mistake."""

    def kernel(inputs, attrs, outputs, opset):
        t = inputs["X"].dtype
        if inputs["Y"].dtype != t or any(inputs[n].dtype != t for n in ("x_zero_point", "y_zero_point",
                                                                          "z_zero_point")):
            raise TypeError("X, Y and the zero points have one type T")
        if inputs["condition"].dtype != np.bool_:
            raise TypeError("condition is bool")
        dt = np.float64 if mode == "f64" else np.float32
        zx, zy, zz = (np.int64(inputs[n]) for n in ("x_zero_point", "y_zero_point", "z_zero_point"))
        sx, sy, sz = (dt(inputs[n]) for n in ("x_scale", "y_scale", "z_scale"))
        if flaw == "swap-zero-points":
            zx, zy = zy, zx
        if flaw == "swap-scales":
            sx, sy = sy, sx

        def side(q, s, z):
            d = (q.astype(np.int64) - z).astype(dt)
            return (d * dt(s / sz)).astype(dt) if mode == "ratio32" else ((s * d).astype(dt) / sz).astype(dt)

        v = np.where(inputs["condition"], side(inputs["X"], sx, zx), side(inputs["Y"], sy, zy))
        if flaw == "half-away":
            r = np.sign(v) * np.floor(np.abs(v) + dt(0.5))
        else:
            r = np.rint(v)
        y = r.astype(np.int64) + zz
        i = np.iinfo(t)
        return {outputs[0]: y.astype(t) if flaw == "wrap" else np.clip(y, i.min, i.max).astype(t)}

    return kernel


@pytest.fixture(scope="module")
def where_cases(cases):
    return [c for c in cases if c.op == "QLinearWhere"]


@pytest.mark.parametrize("mode", ["table32", "ratio32", "f64"])
def test_legitimate_where_kernels_pass(mode, where_cases):
    vals = _values(where_cases)
    assert len(vals) >= 40 and {c.tags["numerics"] for c in vals} == {"requant", "ties", "saturate"}
    res = run_cases(vals, KernelBackend({"QLinearWhere": _where_kernel(mode)}, name=mode, check=False))
    bad = [(c.id, r.outcome, r.message[:200]) for c, r in zip(vals, res) if r.outcome != "pass"]
    assert not bad, bad[:5]


WRONG_WHERE = {
    "swap-zero-points": (lambda c: c.tags["numerics"] != "saturate", 5),
    "swap-scales": (lambda c: c.tags["numerics"] == "requant", 5),
    "half-away": (lambda c: c.tags["numerics"] == "ties", 3),
    "wrap": (lambda c: c.tags["numerics"] == "saturate", 5),
}


@pytest.mark.parametrize("flaw", sorted(WRONG_WHERE))
def test_wrong_where_kernels_are_caught(flaw, where_cases):
    keep, least = WRONG_WHERE[flaw]
    sel = [c for c in _values(where_cases) if keep(c)]
    assert len(sel) >= 2 * least, len(sel)
    res = run_cases(sel, KernelBackend({"QLinearWhere": _where_kernel(flaw=flaw)}, name=flaw, check=False))
    n = Counter(r.outcome for r in res)
    assert n["fail"] >= least, n


def test_where_error_cases_are_rejected(where_cases):
    errs = [c for c in where_cases if c.expect_error]
    assert len(errs) == 4
    res = run_cases(errs, KernelBackend({"QLinearWhere": _where_kernel()}, name="e", check=True))
    assert all(r.outcome == "pass" for r in res), [(c.id, r.message[:100]) for c, r in zip(errs, res)
                                                    if r.outcome != "pass"]


# ============================================================================ QLinearGlobalAveragePool
def test_global_average_pool_oracle_matches_an_independent_loop():
    rng = np.random.default_rng(9)
    for cl in (0, 1):
        x = _obj(rng.integers(0, 256, size=2 * 3 * 4 * 5), (2, 3, 4, 5))
        zx, zy = 100, 7
        sx, sy = float(np.float32(0.05)), float(np.float32(0.03))
        got = ref.qlinear_global_average_pool(x, np.array(sx), np.array(zx), np.array(sy), np.array(zy), "uint8",
                                              channels_last=cl)
        assert got.shape == ((2, 1, 1, 5) if cl else (2, 3, 1, 1))
        for n in range(2):
            for c in range(5 if cl else 3):
                els = [int(x[n, i, j, c]) if cl else int(x[n, c, i, j])
                       for i in range(3 if cl else 4) for j in range(4 if cl else 5)]
                v = Fraction(sx) * Fraction(sum(e - zx for e in els), len(els)) / Fraction(sy)
                want = min(255, max(0, round(v) + zy))
                assert (got[n, 0, 0, c] if cl else got[n, c, 0, 0]) == want, (cl, n, c)


def _gap_kernel(mode="int32", flaw=None):
    """QLinearGlobalAveragePool: ``int32`` the integer sum of ``X - x_zero_point`` times the
    float32 multiplier ``x_scale / (y_scale count)`` (MLAS's way); ``mean32`` the float32 mean of
    the dequantized values divided by y_scale; then rint, + y_zero_point, saturation."""

    def kernel(inputs, attrs, outputs, opset):
        x = inputs["X"]
        t = x.dtype
        if any(inputs[n].dtype != t for n in ("x_zero_point", "y_zero_point")):
            raise TypeError("zero points have X's type")
        if inputs["x_scale"].dtype != np.float32:
            raise TypeError("x_scale is float")
        cl = int(attrs.get("channels_last", 0))
        if flaw == "channels-last-ignored":
            cl = 0
        axes = tuple(range(1, x.ndim - 1)) if cl else tuple(range(2, x.ndim))
        count = int(np.prod([x.shape[a] for a in axes]))
        zx = np.int64(0) if flaw == "ignore-x-zero-point" else np.int64(inputs["x_zero_point"])
        zy = np.int64(inputs["y_zero_point"])
        sx, sy = np.float32(inputs["x_scale"]), np.float32(inputs["y_scale"])
        d = x.astype(np.int64) - zx
        if mode == "int32":
            v = d.sum(axis=axes, keepdims=True).astype(np.float32) * np.float32(sx / (sy * np.float32(count)))
        else:
            v = (sx * d.astype(np.float32)).mean(axis=axes, keepdims=True, dtype=np.float32) / sy
        y = np.rint(v).astype(np.int64) + zy
        i = np.iinfo(t)
        return {outputs[0]: y.astype(t) if flaw == "wrap" else np.clip(y, i.min, i.max).astype(t)}

    return kernel


@pytest.fixture(scope="module")
def gap_cases(cases):
    return [c for c in cases if c.op == "QLinearGlobalAveragePool"]


@pytest.mark.parametrize("mode", ["int32", "mean32"])
def test_legitimate_global_average_pool_kernels_pass(mode, gap_cases):
    vals = _values(gap_cases)
    assert len(vals) >= 30 and {c.tags["params"] for c in vals} >= {"default", "non-default"}
    res = run_cases(vals, KernelBackend({"QLinearGlobalAveragePool": _gap_kernel(mode)}, name=mode, check=False))
    bad = [(c.id, r.outcome, r.message[:200]) for c, r in zip(vals, res) if r.outcome != "pass"]
    assert not bad, bad[:5]
    errs = [c for c in gap_cases if c.expect_error]
    res = run_cases(errs, KernelBackend({"QLinearGlobalAveragePool": _gap_kernel(mode)}, name="e", check=True))
    assert len(errs) == 2 and all(r.outcome == "pass" for r in res)


WRONG_GAP = {
    "channels-last-ignored": (lambda c: c.tags["params"] == "non-default" and "zero-batch" not in c.tags["shape"], 3),
    "ignore-x-zero-point": (lambda c: "zero-batch" not in c.tags["shape"], 5),
    "wrap": (lambda c: c.tags["numerics"] == "saturate" and "zero-batch" not in c.tags["shape"], 5),
}


@pytest.mark.parametrize("flaw", sorted(WRONG_GAP))
def test_wrong_global_average_pool_kernels_are_caught(flaw, gap_cases):
    keep, least = WRONG_GAP[flaw]
    sel = [c for c in _values(gap_cases) if keep(c)]
    assert len(sel) >= least, len(sel)
    res = run_cases(sel, KernelBackend({"QLinearGlobalAveragePool": _gap_kernel(flaw=flaw)}, name=flaw, check=False))
    n = Counter(r.outcome for r in res)
    assert n["fail"] >= least, n


# ============================================================================ com.microsoft QuantizeLinear / DequantizeLinear
import ml_dtypes  # noqa: E402

from conformance.reference import quantize as qref  # noqa: E402


def _irange(dt):
    i = ml_dtypes.iinfo(dt)
    return int(i.min), int(i.max)


def _per_axis(p, x, attrs, first_only=False):
    """A scale or zero point laid out against x: a scalar without ``axis`` (a 1-D one is invalid
    then: onnxruntime's documentation), per axis with it (length checked)."""
    p = np.asarray(p)
    if "axis" not in attrs:
        if p.ndim != 0:
            raise ValueError("no axis: per tensor, scalars only")
        return p
    ax = attrs["axis"]
    if not -x.ndim <= ax < x.ndim:
        raise ValueError("axis out of range")
    ax %= x.ndim
    if p.ndim == 0:
        return p
    if p.shape != (x.shape[ax],):
        raise ValueError("per-axis length")
    if first_only:
        return p.reshape(-1)[0]
    sh = [1] * x.ndim
    sh[ax] = x.shape[ax]
    return p.reshape(sh)


def _ms_q_kernel(mode="f32", flaw=None):
    """com.microsoft QuantizeLinear: ``x / y_scale`` in float32 (``f16``: in x's type when it is
    float16), rint, ``+ y_zero_point``, saturation (uint8 without a zero point)."""

    def kernel(inputs, attrs, outputs, opset):
        x, s, z = inputs["x"], inputs["y_scale"], inputs.get("y_zero_point")
        if s.dtype != x.dtype:
            raise TypeError("y_scale has x's type")
        if z is not None and z.shape != s.shape:
            raise ValueError("scale and zero point shapes")
        dt = z.dtype if z is not None else np.dtype(np.uint8)
        S = _per_axis(s, x, attrs, first_only=flaw == "axis-ignored")
        Z = np.int64(0) if z is None or flaw == "zp-ignored" else _per_axis(z.astype(np.int64), x, attrs)
        ct = x.dtype if mode == "f16" else np.float32
        xf, sf = x.astype(ct), np.asarray(S).astype(ct)
        q = (xf * (ct(1) / sf)).astype(ct) if flaw == "reciprocal" else (xf / sf).astype(ct)
        r = np.sign(q) * np.floor(np.abs(q) + ct(0.5)) if flaw == "half-away" else np.rint(q)
        y = r.astype(np.float64) + Z
        lo, hi = _irange(dt)
        if flaw == "wrap":  # two's complement wrap-around instead of saturation
            return {"y": (((y.astype(np.int64) - lo) % (hi - lo + 1)) + lo).astype(dt)}
        return {"y": np.clip(y, lo, hi).astype(dt)}

    return kernel


def _ms_dq_kernel(flaw=None):
    """com.microsoft DequantizeLinear in float32: ``(x - x_zero_point) * x_scale``."""

    def kernel(inputs, attrs, outputs, opset):
        x, s, z = inputs["x"], inputs["x_scale"], inputs.get("x_zero_point")
        if z is not None and (z.dtype != x.dtype or z.shape != s.shape):
            raise TypeError("x_zero_point has x's type and the scale's shape")
        S = _per_axis(s, x, attrs, first_only=flaw == "axis-ignored").astype(np.float32)
        Z = np.float32(0) if z is None or flaw == "zp-ignored" else \
            _per_axis(z.astype(np.int64), x, attrs).astype(np.float32)
        xf = x.astype(np.int64).astype(np.float32)
        y = xf * S - Z if flaw == "x*s-z" else (xf - Z) * S
        with np.errstate(over="ignore"):
            return {"y": y.astype(s.dtype)}

    return kernel


@pytest.fixture(scope="module")
def msq_cases(cases):
    return [c for c in cases if c.op in ("QuantizeLinear", "DequantizeLinear")]


def test_ms_quantize_oracle_matches_an_independent_loop():
    # per axis 0 of a (2, 3) input: scale 7 with x = 45.5 is 6.5 -> 6 (even); 3 * 2.5 = 7.5 -> 8; saturation
    x = np.array([[45.5, 52.5, -1000.0], [7.5, 4.5, 1000.0]])
    s, z = np.array([7.0, 3.0]), _obj([0, -128], (2,))
    got = ref_q = qref.quantize_linear(x, s, z, axis=0, block_size=0, out_type="int8", saturate=True, version=1)
    for i in range(2):
        for j in range(3):
            q = Fraction(x[i, j]) / Fraction(s[i])
            assert got[i, j] == min(127, max(-128, round(q) + int(z[i]))), (i, j)
    assert ref_q.tolist() == [[6, 8, -128], [-126, -126, 127]]  # 7.5 / 3 = 2.5 -> 2
    got = ops_cq.ms_quantize_oracle(engine.Ctx("QuantizeLinear", 1, 1, {}, {"y": "uint8"}), np.array([2.5, 3.5, -2.0]),
                                    np.array(1.0))
    assert got.tolist() == [2, 4, 0]  # no zero point: uint8, ties to even, saturation at 0


@pytest.mark.parametrize("mode", ["f32", "f16"])
def test_ms_legitimate_quantize_kernels_pass(mode, msq_cases):
    vals = [c for c in _values(msq_cases) if c.op == "QuantizeLinear"]
    assert len(vals) >= 90 and {c.tags["dtype"] for c in vals} == {"float", "float16"}
    res = run_cases(vals, KernelBackend({"QuantizeLinear": _ms_q_kernel(mode)}, name=mode, check=False))
    bad = [(c.id, r.outcome, r.message[:200]) for c, r in zip(vals, res) if r.outcome != "pass"]
    assert not bad, bad[:5]


def test_ms_legitimate_dequantize_kernel_passes(msq_cases):
    vals = [c for c in _values(msq_cases) if c.op == "DequantizeLinear"]
    assert len(vals) >= 100 and len({c.tags["dtype"] for c in vals}) == 7
    res = run_cases(vals, KernelBackend({"DequantizeLinear": _ms_dq_kernel()}, name="f32", check=False))
    bad = [(c.id, r.outcome, r.message[:200]) for c, r in zip(vals, res) if r.outcome != "pass"]
    assert not bad, bad[:5]


@pytest.mark.parametrize("op,flaw,least", [("QuantizeLinear", "half-away", 20), ("QuantizeLinear", "wrap", 20),
                                           ("QuantizeLinear", "zp-ignored", 20), ("QuantizeLinear", "reciprocal", 5),
                                           ("QuantizeLinear", "axis-ignored", 20),
                                           ("DequantizeLinear", "zp-ignored", 20),
                                           ("DequantizeLinear", "x*s-z", 20), ("DequantizeLinear", "axis-ignored", 20)])
def test_ms_wrong_kernels_are_caught(op, flaw, least, msq_cases):
    vals = [c for c in _values(msq_cases) if c.op == op]
    k = _ms_q_kernel(flaw=flaw) if op == "QuantizeLinear" else _ms_dq_kernel(flaw)
    res = run_cases(vals, KernelBackend({op: k}, name=flaw, check=False))
    n = Counter(r.outcome for r in res)
    assert n["fail"] >= least and not n["error"], n
    if flaw == "axis-ignored":
        assert all("axis=" in c.tags["shape"] for c, r in zip(vals, res) if r.outcome == "fail")


def test_ms_quantize_error_cases_are_rejected(msq_cases):
    errs = [c for c in msq_cases if c.expect_error]
    assert len(errs) == 10
    res = run_cases(errs, KernelBackend({"QuantizeLinear": _ms_q_kernel(), "DequantizeLinear": _ms_dq_kernel()},
                                        name="e", check=False))
    assert all(r.outcome == "pass" for r in res), [(c.id, r.message[:100]) for c, r in zip(errs, res)
                                                    if r.outcome != "pass"]


# ============================================================================ QLinearAveragePool
from conformance.reference import pool as pool_ref  # noqa: E402


def test_average_pool_oracle_matches_an_independent_loop():
    rng = np.random.default_rng(11)
    x = _obj(rng.integers(0, 256, size=(1, 2, 4, 5)), (1, 2, 4, 5))
    zx, zy, sx, sy = 120, 3, float(np.float32(0.05)), float(np.float32(0.02))
    for inc in (0, 1):
        attrs = {"kernel_shape": [3, 3], "pads": [1, 1, 1, 1], "count_include_pad": inc}
        got = ref.qlinear_average_pool(x, np.array(sx), np.array(zx), np.array(sy), np.array(zy), "uint8", attrs)
        assert got.shape == (1, 2, 4, 5)
        for c in range(2):
            for i in range(4):
                for j in range(5):
                    terms = [int(x[0, c, a, b]) - zx for a in range(i - 1, i + 2) for b in range(j - 1, j + 2)
                             if 0 <= a < 4 and 0 <= b < 5]
                    v = Fraction(sx) * Fraction(sum(terms), 9 if inc else len(terms)) / Fraction(sy)
                    assert got[0, c, i, j] == min(255, max(0, round(v) + zy)), (inc, c, i, j)
    # channels_last: the same numbers laid out [N, H, W, C]
    attrs = {"kernel_shape": [2, 2], "strides": [2, 2]}
    a = ref.qlinear_average_pool(x, np.array(sx), np.array(zx), np.array(sy), np.array(zy), "uint8", attrs)
    b = ref.qlinear_average_pool(np.moveaxis(x, 1, -1), np.array(sx), np.array(zx), np.array(sy), np.array(zy),
                                 "uint8", attrs, channels_last=1)
    assert np.array_equal(np.moveaxis(b, -1, 1), a)


def _ap_kernel(mode="int32", flaw=None):
    """QLinearAveragePool: ``int32`` the integer window sum of ``X - x_zero_point`` times the float32
    multiplier ``x_scale / (y_scale count)``; ``mean32`` the float32 mean of the dequantized
    values divided by y_scale; then rint, + y_zero_point, saturation.  The geometry from
    :func:`conformance.reference.pool.windows` (AveragePool's, tested with the pool family)."""

    def kernel(inputs, attrs, outputs, opset):
        x = inputs["X"]
        t = x.dtype
        for n in ("x_zero_point", "y_zero_point"):
            if n in inputs and (inputs[n].dtype != t or inputs[n].size != 1):
                raise TypeError(f"{n}: a scalar of X's type")
        if inputs["x_scale"].size != 1 or len(attrs["kernel_shape"]) != x.ndim - 2:
            raise ValueError("x_scale a scalar; kernel_shape per spatial axis")
        cl = attrs.get("channels_last", 0) and flaw != "channels-last-ignored"
        xn = np.moveaxis(x, -1, 1) if cl else x
        zx = np.int64(0) if "x_zero_point" not in inputs or flaw == "ignore-x-zero-point" else \
            np.int64(inputs["x_zero_point"])
        zy = np.int64(inputs.get("y_zero_point", 0))
        sx, sy = np.float32(inputs["x_scale"]), np.float32(inputs["y_scale"])
        inc = attrs.get("count_include_pad", 0) and flaw != "include-pad-ignored"
        out, pos, kind = pool_ref.windows(xn.shape[2:], attrs)
        y = np.zeros(xn.shape[:2] + tuple(out), np.int64)
        pf, kf = pos.reshape(-1, *pos.shape[-2:]), kind.reshape(-1, kind.shape[-1])
        for n_ in range(xn.shape[0]):
            for c in range(xn.shape[1]):
                for w, (p, kd) in enumerate(zip(pf, kf)):
                    d = np.array([int(xn[(n_, c) + tuple(q)]) for q, k_ in zip(p, kd) if k_ == 0], np.int64) - zx
                    if flaw == "pad-with-0":  # padding holds the quantized value 0, not the zero point
                        d = np.concatenate([d, np.full(int((kd == 1).sum()), -zx)])
                    cnt = int((kd <= 1).sum()) if inc else d.size
                    if mode == "int32":
                        v = np.float32(d.sum()) * np.float32(sx / (sy * np.float32(cnt)))
                    else:
                        v = np.float32((sx * d.astype(np.float32)).sum(dtype=np.float32) / np.float32(cnt)) / sy
                    y[(n_, c) + np.unravel_index(w, tuple(out))] = np.int64(np.rint(v)) + zy
        y = np.moveaxis(y, 1, -1) if cl else y
        i = np.iinfo(t)
        return {outputs[0]: y.astype(t) if flaw == "wrap" else np.clip(y, i.min, i.max).astype(t)}

    return kernel


@pytest.fixture(scope="module")
def ap_cases(cases):
    return [c for c in cases if c.op == "QLinearAveragePool"]


@pytest.mark.parametrize("mode", ["int32", "mean32"])
def test_legitimate_average_pool_kernels_pass(mode, ap_cases):
    vals = [c for c in _values(ap_cases) if c.contested is None]
    assert len(vals) >= 45
    res = run_cases(vals, KernelBackend({"QLinearAveragePool": _ap_kernel(mode)}, name=mode, check=False))
    bad = [(c.id, r.outcome, r.message[:200]) for c, r in zip(vals, res) if r.outcome != "pass"]
    assert not bad, bad[:5]


WRONG_AP = {
    "include-pad-ignored": (lambda c: c.attributes.get("count_include_pad") == 1 and (
        "pads" in c.attributes or "SAME" in c.tags["shape"]), 3),
    "pad-with-0": (lambda c: c.attributes.get("count_include_pad") == 1 and "pads/include" in c.tags["shape"], 2),
    "ignore-x-zero-point": (lambda c: "zero-batch" not in c.tags["shape"], 20),
    "channels-last-ignored": (lambda c: c.attributes.get("channels_last") == 1, 2),
    "wrap": (lambda c: c.tags["numerics"] == "saturate" and "zero-batch" not in c.tags["shape"], 10),
}


@pytest.mark.parametrize("flaw", sorted(WRONG_AP))
def test_wrong_average_pool_kernels_are_caught(flaw, ap_cases):
    keep, least = WRONG_AP[flaw]
    sel = [c for c in _values(ap_cases) if c.contested is None and keep(c)]
    assert len(sel) >= least, len(sel)
    res = run_cases(sel, KernelBackend({"QLinearAveragePool": _ap_kernel(flaw=flaw)}, name=flaw, check=False))
    n = Counter(r.outcome for r in res)
    assert n["fail"] + n["error"] >= least and n["fail"] >= 1, n


def test_average_pool_error_cases_are_rejected(ap_cases):
    errs = [c for c in ap_cases if c.expect_error]
    assert len(errs) == 3
    res = run_cases(errs, KernelBackend({"QLinearAveragePool": _ap_kernel()}, name="e", check=False))
    assert all(r.outcome == "pass" for r in res), [(c.id, r.message[:100]) for c, r in zip(errs, res)
                                                    if r.outcome != "pass"]


# ============================================================================ QLinearSoftmax
def test_softmax_oracle_matches_an_independent_loop():
    rng = np.random.default_rng(12)
    x = _obj(rng.integers(-128, 128, size=(2, 3, 4)), (2, 3, 4))
    sx, zx, sy, zy = float(np.float32(0.07)), 5, float(np.float32(1 / 300)), -128
    for opset, axis in ((13, 1), (12, 1), (13, -1)):
        got = ref.qlinear_softmax(x, np.array(sx), np.array(zx), np.array(sy), np.array(zy), "int8", axis, opset)
        for i in range(2):
            for j in range(3):
                for k in range(4):
                    if opset >= 13 and axis == 1:
                        row = [x[i, a, k] for a in range(3)]
                    elif opset < 13:  # coerced to [2, 12]: the whole trailing block
                        row = [x[i, a, b] for a in range(3) for b in range(4)]
                    else:
                        row = [x[i, j, b] for b in range(4)]
                    den = sum(math.exp(sx * (int(q) - zx)) for q in row)
                    p = math.exp(sx * (int(x[i, j, k]) - zx)) / den
                    assert got[i, j, k] == min(127, max(-128, round(p / sy) + zy)), (opset, axis, i, j, k)


def _sm_kernel(mode="table32", flaw=None):
    """QLinearSoftmax: ``table32`` float32 exponentials of ``x_scale (X - max)``, a float32 sum, the
    quotient divided by y_scale (``f64``: float64); rint, + y_zero_point, saturation.  ``flaw``
    ``floor-reciprocal`` multiplies by ``floor(1 / y_scale)`` (onnxruntime's kernel)."""

    def kernel(inputs, attrs, outputs, opset):
        x = inputs["X"]
        t = x.dtype
        if "x_zero_point" in inputs and inputs["x_zero_point"].dtype != t or inputs["y_scale"].size != 1:
            raise TypeError("x_zero_point of X's type; y_scale a scalar")
        ops = attrs["opset"]
        axis = attrs.get("axis", -1)
        if flaw == "axis-ignored":
            axis = -1
        if not -x.ndim <= axis < max(x.ndim, 1):
            raise ValueError("axis")
        dt = np.float64 if mode == "f64" else np.float32
        xr = x.astype(np.int64).astype(dt) * dt(inputs["X_scale"])  # the zero point cancels
        a = axis % x.ndim
        if ops < 13 and flaw != "single-axis":
            rows = xr.reshape(int(np.prod(x.shape[:a])), -1)
            e = np.exp(rows - rows.max(axis=1, keepdims=True)).astype(dt)
            p = (e / e.sum(axis=1, keepdims=True, dtype=dt)).reshape(x.shape)
        else:
            e = np.exp(xr - xr.max(axis=a, keepdims=True)).astype(dt)
            p = e / e.sum(axis=a, keepdims=True, dtype=dt)
        sy = dt(inputs["y_scale"])
        v = (p * dt(np.floor(dt(1) / sy))).astype(dt) if flaw == "floor-reciprocal" else (p / sy).astype(dt)
        zy = np.int64(0) if flaw == "y-zero-point-ignored" else np.int64(inputs["y_zero_point"])
        y = np.rint(v).astype(np.int64) + zy
        i = np.iinfo(t)
        return {outputs[0]: y.astype(t) if flaw == "wrap" else np.clip(y, i.min, i.max).astype(t)}

    return kernel


@pytest.fixture(scope="module")
def sm_cases(cases):
    return [c for c in cases if c.op == "QLinearSoftmax"]


@pytest.mark.parametrize("mode", ["table32", "f64"])
def test_legitimate_softmax_kernels_pass(mode, sm_cases):
    vals = [c for c in _values(sm_cases) if c.contested is None and c.datasets[0].inputs]
    assert len(vals) >= 45
    res = run_cases(vals, KernelBackend({"QLinearSoftmax": _sm_kernel(mode)}, name=mode, check=False))
    bad = [(c.id, r.outcome, r.message[:200]) for c, r in zip(vals, res) if r.outcome != "pass"]
    assert not bad, bad[:5]


WRONG_SM = {
    "floor-reciprocal": (lambda c: c.tags["numerics"] == "requant", 5),
    "y-zero-point-ignored": (lambda c: True, 20),
    "axis-ignored": (lambda c: c.attributes.get("axis", -1) % len(c.inputs[0].shape or (1,)) !=
                     len(c.inputs[0].shape) - 1, 5),
    "single-axis": (lambda c: c.attributes["opset"] < 13 and c.attributes.get("axis", -1) % max(
        len(c.inputs[0].shape), 1) < len(c.inputs[0].shape) - 1, 3),
    "wrap": (lambda c: c.tags["numerics"] == "saturate", 5),
}


@pytest.mark.parametrize("flaw", sorted(WRONG_SM))
def test_wrong_softmax_kernels_are_caught(flaw, sm_cases):
    keep, least = WRONG_SM[flaw]
    sel = [c for c in _values(sm_cases) if c.contested is None and "zero-size" not in c.tags["shape"] and keep(c)]
    assert len(sel) >= least, len(sel)
    res = run_cases(sel, KernelBackend({"QLinearSoftmax": _sm_kernel(flaw=flaw)}, name=flaw, check=False))
    n = Counter(r.outcome for r in res)
    assert n["fail"] >= least, n


def test_softmax_error_cases_are_rejected(sm_cases):
    errs = [c for c in sm_cases if c.expect_error]
    assert len(errs) == 3
    res = run_cases(errs, KernelBackend({"QLinearSoftmax": _sm_kernel()}, name="e", check=False))
    assert all(r.outcome == "pass" for r in res), [(c.id, r.message[:100]) for c, r in zip(errs, res)
                                                    if r.outcome != "pass"]


# ============================================================================ QLinearConcat
def test_concat_oracle_matches_an_independent_loop():
    a, b = _obj([[10, 200], [0, 255]], (2, 2)), _obj([[7], [9]], (2, 1))
    sa, sb, sy = float(np.float32(0.1)), 0.25, float(np.float32(0.3))
    got = ref.qlinear_concat(np.array(sy), _obj([5], ()), [(a, np.array(sa), _obj([100], ())),
                                                          (b, np.array(sb), _obj([3], ()))], -1, "uint8")
    for i in range(2):
        row = [Fraction(sa) * (int(a[i, j]) - 100) for j in range(2)] + [Fraction(sb) * (int(b[i, 0]) - 3)]
        assert got[i].tolist() == [min(255, max(0, round(v / Fraction(sy)) + 5)) for v in row]


def _concat_kernel(flaw=None):
    """QLinearConcat in float32: each input dequantized ``(X - zp) * scale``, divided by Y_scale,
    rint, + Y_zero_point, saturated; an input with Y's scale and zero point copied."""

    def kernel(inputs, attrs, outputs, opset):
        ys, yz = np.float32(inputs["Y_scale"]), inputs["Y_zero_point"]
        xs = [inputs[f"inputs_{i}"] for i in range(len([k for k in inputs if k.startswith("inputs_")]))]
        if len(xs) % 3:
            raise ValueError("(tensor, scale, zero point) triples")
        axis = attrs["axis"]
        t = yz.dtype
        parts = []
        first = xs[1], xs[2]
        for i in range(0, len(xs), 3):
            x, s, z = xs[i:i + 3]
            if flaw == "first-parameters":
                s, z = first
            if x.ndim != xs[0].ndim or not -x.ndim <= axis < x.ndim:
                raise ValueError("rank / axis")
            if np.float32(s) == ys and z == yz and flaw is None:
                parts.append(x.astype(np.int64))
                continue
            v = ((x.astype(np.int64) - np.int64(z)).astype(np.float32) * np.float32(s)) / ys
            r = np.sign(v) * np.floor(np.abs(v) + np.float32(0.5)) if flaw == "half-away" else np.rint(v)
            parts.append(r.astype(np.int64) + (0 if flaw == "y-zero-point-ignored" else np.int64(yz)))
        y = np.concatenate(parts, axis=axis)
        i = np.iinfo(t)
        return {"Y": y.astype(t) if flaw == "wrap" else np.clip(y, i.min, i.max).astype(t)}

    return kernel


@pytest.fixture(scope="module")
def concat_cases(cases):
    return [c for c in cases if c.op == "QLinearConcat"]


def test_legitimate_concat_kernel_passes(concat_cases):
    vals = _values(concat_cases)
    assert len(vals) == 20 and {c.tags["numerics"] for c in vals} == {"requant", "ties", "saturate", "copy"}
    res = run_cases(vals, KernelBackend({"QLinearConcat": _concat_kernel()}, name="f32", check=False))
    bad = [(c.id, r.outcome, r.message[:200]) for c, r in zip(vals, res) if r.outcome != "pass"]
    assert not bad, bad[:5]
    errs = [c for c in concat_cases if c.expect_error]
    res = run_cases(errs, KernelBackend({"QLinearConcat": _concat_kernel()}, name="e", check=False))
    assert len(errs) == 3 and all(r.outcome == "pass" for r in res)


@pytest.mark.parametrize("flaw,num,least", [("half-away", "ties", 2), ("first-parameters", "requant", 5),
                                            ("y-zero-point-ignored", "requant", 5), ("wrap", "saturate", 2)])
def test_wrong_concat_kernels_are_caught(flaw, num, least, concat_cases):
    sel = [c for c in _values(concat_cases) if c.tags["numerics"] == num and "zero-size" not in c.tags["shape"]]
    res = run_cases(sel, KernelBackend({"QLinearConcat": _concat_kernel(flaw)}, name=flaw, check=False))
    n = Counter(r.outcome for r in res)
    assert n["fail"] >= least, n
