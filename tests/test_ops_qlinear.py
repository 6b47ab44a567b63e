"""QLinearMatMul, ConvInteger and QLinearConv (conformance/ops/qlinear.py, oracles in
conformance/reference/qlinear.py).

* the oracles against explicit loops written here (Fractions, no numpy matmul/convolution) and
  onnx's node-test examples;
* legitimate numpy kernels (int32 accumulation with a float32 requantization multiplier in
  either association, float64) pass every value case they run; deliberately wrong ones fail
  cases the right one passes: the two zero points swapped, rounding half away from zero,
  wrap-around instead of saturation, a per-row / per-column / per-channel scale ignored,
  ConvInteger ignoring x_zero_point;
* onnx.reference's disagreements, each classified;
* every element type round-trips through a bundle bit for bit.
"""

from __future__ import annotations

import itertools
from collections import Counter
from fractions import Fraction

import ml_dtypes
import numpy as np
import pytest

from conformance.backends.kernel import KernelBackend
from conformance.ops import engine
from conformance.ops import qlinear as ops_ql
from conformance.ops import values as V
from conformance.reference import qlinear as ref
from conformance.runner import run_cases
from oracle_checks import single_node_tests, sort_findings  # tests/oracle_checks.py

pytestmark = pytest.mark.filterwarnings("ignore::RuntimeWarning")
E = {e.op: e for e in ops_ql.ENTRIES}


def _obj(vals, shape=None):
    a = np.empty(len(vals), dtype=object)
    a[:] = [int(v) for v in vals]
    return a.reshape(shape) if shape is not None else a


def _run(cases, kernels, name):
    return run_cases(cases, KernelBackend(kernels, name=name, check=False))


def _rng_range(dt):
    i = ml_dtypes.iinfo(dt)
    return int(i.min), int(i.max)


# ============================================================================ oracles
def _loop_qmm(a, sa, za, b, sb, zb, sy, zy, lo, hi):
    """QLinearMatMul of 2-D operands written out: per-row a parameters ([M] or scalar), per-column
    b parameters ([N] or scalar), the exact real value rounded half to even, saturated."""
    m, k = a.shape
    n = b.shape[1]

    def at(p, i):
        p = np.asarray(p, dtype=object).ravel()
        return p[0] if p.size == 1 else p[i]

    out = np.empty((m, n), dtype=object)
    for i in range(m):
        for j in range(n):
            acc = sum((int(a[i, q]) - int(at(za, i))) * (int(b[q, j]) - int(at(zb, j))) for q in range(k))
            v = Fraction(acc) * Fraction(float(at(sa, i))) * Fraction(float(at(sb, j))) / Fraction(float(sy))
            r = round(v) + int(zy)  # Python's round of a Fraction: half to even
            out[i, j] = min(hi, max(lo, r))
    return out


@pytest.mark.parametrize("seed", range(6))
def test_qlinear_matmul_oracle_matches_an_explicit_loop(seed):
    rng = np.random.default_rng(seed)
    m, k, n = 3, int(rng.integers(1, 6)), 4
    ta, tb, ty = rng.choice(["int8", "uint8"], size=3)
    la, ha = _rng_range(np.dtype(ta))
    lb, hb = _rng_range(np.dtype(tb))
    ly, hy = _rng_range(np.dtype(ty))
    a = _obj(rng.integers(la, ha + 1, size=m * k), (m, k))
    b = _obj(rng.integers(lb, hb + 1, size=k * n), (k, n))
    per = seed % 2
    za = _obj(rng.integers(la, ha + 1, size=m if per else 1), (m,) if per else ())
    zb = _obj(rng.integers(lb, hb + 1, size=n if per else 1), (n,) if per else ())
    sa = np.float32(rng.uniform(0.01, 0.1, size=m if per else ())).astype(np.float64)
    sb = np.float32(rng.uniform(0.01, 0.1, size=n if per else ())).astype(np.float64)
    sy, zy = float(np.float32(rng.uniform(0.05, 0.5))), int(rng.integers(ly, hy + 1))
    got = ref.qlinear_matmul(a, sa, za, b, sb, zb, np.array(sy), np.array(zy, dtype=object), ty)
    want = _loop_qmm(a, sa, za, b, sb, zb, sy, zy, ly, hy)
    assert got.tolist() == want.tolist()


def test_ties_round_to_even_and_saturate():
    # acc = 5, 7, -5, -3, 1000 with y_scale = 2 a_scale b_scale: 2.5 -> 2, 3.5 -> 4, -2.5 -> -2, -1.5 -> -2
    a = _obj([5, 7, -5, -3, 1000], (5, 1))
    b = _obj([1], (1, 1))
    y = ref.qlinear_matmul(a, np.array(0.25), _obj([0], ()), b, np.array(0.5), _obj([0], ()), np.array(0.25),
                           _obj([0], ()), "int8")
    assert y.ravel().tolist() == [2, 4, -2, -2, 127]
    y = ref.qlinear_matmul(a, np.array(0.25), _obj([0], ()), b, np.array(0.5), _obj([0], ()), np.array(0.25),
                           _obj([10], ()), "uint8")
    assert y.ravel().tolist() == [12, 14, 8, 8, 255]


def test_node_test_examples():
    tests = single_node_tests(("QLinearMatMul", "ConvInteger", "QLinearConv"),
                              ("qlinearmatmul", "convinteger", "qlinearconv"))
    seen = Counter()
    for t in tests:
        node = t.model.graph.node[0]
        for ins, outs in t.data_sets:
            ex = [np.asarray(x) for x in ins]
            if node.op_type not in E:
                continue
            if node.op_type == "QLinearMatMul":
                got = ref.qlinear_matmul(*ex, V.name_of(t.model.graph.output[0].type.tensor_type.elem_type))
            elif node.op_type == "ConvInteger":
                attrs = {a.name: list(a.ints) if a.ints else a.i for a in node.attribute}
                got = ref.conv_integer(ex[0], ex[1], ex[2] if len(ex) > 2 else None, ex[3] if len(ex) > 3 else None,
                                       attrs)
            else:
                attrs = {a.name: list(a.ints) if a.ints else a.i for a in node.attribute}
                got = ref.qlinear_conv(*ex[:8], ex[8] if len(ex) > 8 else None, attrs,
                                       V.name_of(t.model.graph.output[0].type.tensor_type.elem_type))
            assert np.asarray(got, dtype=np.float64).tolist() == np.asarray(outs[0], dtype=np.float64).tolist(), t.name
            seen[node.op_type] += 1
    assert all(seen[op] >= 1 for op in E) and seen["QLinearMatMul"] >= 2, seen


def test_robustness_rule():
    f = Fraction
    # an exact tie is kept only where every float32 computation is exact
    assert ref.robust_value(f(5, 2), 1e-6, 0, "int8", exact_tie=True)
    assert not ref.robust_value(f(5, 2), 1e-6, 0, "int8", exact_tie=False)
    # within the slack of a .5 boundary: either rounding is legitimate, so never generated
    assert not ref.robust_value(f(5, 2) + f(1, 10**7), 2.0 ** -19 * 2.5, 0, "int8", exact_tie=False)
    assert ref.robust_value(f(5, 2) + f(1, 100), 2.0 ** -19 * 2.5, 0, "int8", exact_tie=False)
    # saturated either way: robust
    assert ref.robust_value(f(255, 2), 1e-3, 0, "int8", exact_tie=False)


# ============================================================================ kernels
def _f(x) -> np.ndarray:
    return np.asarray(x).astype(np.float32)


def _rowl(p, ndim):
    p = np.asarray(p)
    return p.reshape(-1, 1) if p.ndim == 1 and p.size > 1 and ndim >= 2 else p


def _finish(q, zy, mode, flaw):
    """float32 (or float64) real values -> the output type: rint (or half away), + zero point,
    saturation (or wrap-around); float8 outputs through ml_dtypes with saturation."""
    dt = zy.dtype
    try:
        lo, hi = _rng_range(dt)
    except (ValueError, TypeError):
        if flaw == "float8-no-saturation":  # beyond the largest value: inf or NaN, not the largest
            return (q + zy.astype(q.dtype)).astype(dt)
        m = float(ml_dtypes.finfo(dt).max)
        return (np.clip(q + zy.astype(q.dtype), -m, m)).astype(dt)
    r = np.sign(q) * np.floor(np.abs(q) + 0.5) if flaw == "half-away" else np.rint(q)
    y = r.astype(np.float64) + zy.astype(np.float64)
    if flaw == "wrap":
        return y.astype(np.int64).astype(dt)
    return np.clip(y, lo, hi).astype(dt)


def _validate(inputs, pairs):
    """The checks a kernel makes: each scale with its zero point of the same shape."""
    for s_, z_ in pairs:
        if inputs[s_].shape != inputs[z_].shape:
            raise ValueError(f"{s_} {inputs[s_].shape} and {z_} {inputs[z_].shape} differ")


def qmm_kernel(mode: str = "mult32", flaw: str | None = None):
    """QLinearMatMul: int32 accumulation (float32 for float8 inputs), then the requantization in
    float32: ``mult32`` ``acc * (a_scale * b_scale / y_scale)`` (onnxruntime's order), ``assoc32``
    ``((acc * a_scale) * b_scale) / y_scale``, ``f64`` in float64."""

    def kernel(inputs, attrs, outputs, opset):
        a, b = inputs["a"], inputs["b"]
        za, zb, zy = inputs["a_zero_point"], inputs["b_zero_point"], inputs["y_zero_point"]
        _validate(inputs, (("a_scale", "a_zero_point"), ("b_scale", "b_zero_point")))
        if b.ndim >= 2 and zb.size > 1 and zb.shape[-1] != b.shape[-1]:
            raise ValueError("per column of b: N elements")
        sa, sb, sy = _f(inputs["a_scale"]), _f(inputs["b_scale"]), _f(inputs["y_scale"])
        if flaw == "swap-zero-points":
            za, zb = zb.astype(za.dtype), za.astype(zb.dtype)
        if flaw == "per-row-ignored":
            sa, za = sa.ravel()[:1].reshape(()), za.ravel()[:1].reshape(())
        if flaw == "per-column-ignored":
            sb, zb = sb.ravel()[:1].reshape(()), zb.ravel()[:1].reshape(())
        ints = a.dtype.kind in "iu" and b.dtype.kind in "iu"
        rowl = (lambda p, nd: p) if flaw == "a-zero-point-along-K" else _rowl  # numpy broadcasting of [M]
        da = a.astype(np.int64) - rowl(za, a.ndim).astype(np.int64) if ints else _f(a) - _f(rowl(za, a.ndim))
        db = b.astype(np.int64) - zb.astype(np.int64) if ints else _f(b) - _f(zb)
        acc = np.matmul(da, db)
        sa_l = _rowl(sa, a.ndim) if a.ndim >= 2 and b.ndim >= 2 else sa
        if mode == "f64":
            q = acc.astype(np.float64) * sa_l.astype(np.float64) * sb.astype(np.float64) / sy.astype(np.float64)
        elif mode == "assoc32":
            q = ((acc.astype(np.float32) * sa_l).astype(np.float32) * sb).astype(np.float32) / sy
        else:
            mult = ((sa_l * sb).astype(np.float32) / sy).astype(np.float32)
            q = (acc.astype(np.float32) * mult).astype(np.float32)
        return {outputs[0]: _finish(q, zy, mode, flaw)}

    return kernel


@pytest.fixture(scope="module")
def all_cases():
    """Every case of the three entries at seed 0 (generated once for the module)."""
    return [c for e in ops_ql.ENTRIES for c in engine.cases(e, 0)]


@pytest.fixture(scope="module")
def mm_cases(all_cases):
    return [c for c in all_cases if c.op == "QLinearMatMul" and c.expect_error is None]


@pytest.mark.parametrize("mode", ["mult32", "assoc32", "f64"])
def test_legitimate_qlinear_matmul_kernels_pass(mode, mm_cases):
    assert len(mm_cases) >= 500
    assert {c.tags["numerics"] for c in mm_cases} == {"requant", "ties", "saturate"}
    res = _run(mm_cases, {"QLinearMatMul": qmm_kernel(mode)}, mode)
    bad = [(c.id, r.outcome, r.message[:200]) for c, r in zip(mm_cases, res) if r.outcome != "pass"]
    assert not bad, bad[:5]


WRONG_MM = {
    "swap-zero-points": (lambda c: "per-tensor" in c.tags["shape"] and "zero-K" not in c.tags["shape"], 50),
    "half-away": (lambda c: c.tags["numerics"] == "ties", 30),
    "wrap": (lambda c: c.tags["numerics"] == "saturate", 30),
    "per-row-ignored": (lambda c: "per-row" in c.tags["shape"], 20),
    "per-column-ignored": (lambda c: "per-column" in c.tags["shape"], 20),
    # an [M] a_zero_point subtracted along K (numpy broadcasting): a wrong value where M == K
    "a-zero-point-along-K": (lambda c: c.tags["shape"].startswith("M=K/per-row"), 6),
    "float8-no-saturation": (lambda c: c.tags["numerics"] == "saturate" and "T3=float8" in c.id, 20),
}


@pytest.mark.parametrize("flaw", sorted(WRONG_MM))
def test_wrong_qlinear_matmul_kernels_are_caught(flaw, mm_cases):
    keep, least = WRONG_MM[flaw]
    cases = [c for c in mm_cases if keep(c)]
    assert len(cases) >= least
    res = _run(cases, {"QLinearMatMul": qmm_kernel(flaw=flaw)}, flaw)
    n = Counter(r.outcome for r in res)
    assert n["fail"] >= least // 2, n


# ============================================================================ convolutions
def _loop_conv_integer(x, w, zx, zw, pads, strides, dilations, group):
    """ConvInteger written out for a 2-D input: explicit loops over every output position,
    channel and kernel offset; positions in the padding contribute 0 (the zero point)."""
    n, c, h, wd = x.shape
    m, cg, kh, kw = w.shape
    oh = (h + pads[0] + pads[2] - dilations[0] * (kh - 1) - 1) // strides[0] + 1
    ow = (wd + pads[1] + pads[3] - dilations[1] * (kw - 1) - 1) // strides[1] + 1
    out = np.zeros((n, m, oh, ow), dtype=object)
    mg = m // group
    for b_, o, i, j in itertools.product(range(n), range(m), range(oh), range(ow)):
        g = o // mg
        zwo = int(np.asarray(zw).ravel()[o] if np.size(zw) > 1 else np.asarray(zw).ravel()[0])
        s = 0
        for ci, p, q in itertools.product(range(cg), range(kh), range(kw)):
            r = i * strides[0] + p * dilations[0] - pads[0]
            t = j * strides[1] + q * dilations[1] - pads[1]
            if 0 <= r < h and 0 <= t < wd:
                s += (int(x[b_, g * cg + ci, r, t]) - int(zx)) * (int(w[o, ci, p, q]) - zwo)
        out[b_, o, i, j] = s
    return out


@pytest.mark.parametrize("seed", range(4))
def test_conv_integer_oracle_matches_an_explicit_loop(seed):
    rng = np.random.default_rng(seed)
    group = (1, 2)[seed % 2]
    x = rng.integers(0, 256, size=(2, 4, 6, 5))
    w = rng.integers(-128, 128, size=(4, 4 // group, 3, 2))
    zx = int(rng.integers(0, 256))
    zw = rng.integers(-128, 128, size=(4,)) if seed < 2 else np.array(int(rng.integers(-128, 128)))
    pads, strides, dilations = [1, 0, 2, 1], [seed % 2 + 1, 1], [1, 2 - seed % 2]
    attrs = {"pads": pads, "strides": strides, "dilations": dilations, "group": group}
    got = ref.conv_integer(x, w, np.array(zx), zw, attrs)
    assert got.tolist() == _loop_conv_integer(x, w, zx, zw, pads, strides, dilations, group).tolist()
    # QLinearConv: the same sums with the bias, requantized per output channel
    sx, sw, sy = 0.02, np.array([0.01, 0.03, 0.005, 0.02]), 0.7
    b = rng.integers(-5000, 5000, size=4)
    zw4 = np.broadcast_to(zw, (4,)).copy()  # the pair's shapes agree: per channel
    y = ref.qlinear_conv(x, np.array(sx), np.array(zx), w, sw, zw4, np.array(sy), np.array(3), b, attrs, "uint8")
    acc = _loop_conv_integer(x, w, zx, zw, pads, strides, dilations, group)
    want = np.empty(acc.shape, dtype=object)
    for idx in np.ndindex(*acc.shape):
        v = (Fraction(acc[idx]) + int(b[idx[1]])) * Fraction(sx) * Fraction(float(sw[idx[1]])) / Fraction(sy)
        want[idx] = min(255, max(0, round(v) + 3))
    assert y.tolist() == want.tolist()


def _geometry(x_shape, w_shape, attrs):
    from conformance.reference.conv import conv_geometry

    return conv_geometry(x_shape, w_shape, attrs)


def _int_conv(x, w, zx, zw, attrs, pad_with_zero_point=True):
    """An integer convolution in int64: x padded with its zero point (onnxruntime's layout; 0 where
    ``pad_with_zero_point`` is false: wrong), the zero points subtracted, a sum per kernel offset."""
    geo = _geometry(x.shape, w.shape, attrs)
    group = int(attrs.get("group", 1))
    x = x.astype(np.int64)
    w = w.astype(np.int64)
    zx = np.int64(0) if zx is None else np.asarray(zx, dtype=np.int64).reshape(())
    zw = np.int64(0) if zw is None else np.asarray(zw, dtype=np.int64)
    wz = w - (zw.reshape((-1,) + (1,) * (w.ndim - 1)) if zw.size > 1 else zw.reshape(()))
    width = [(0, 0), (0, 0)] + [(b, e) for b, e in zip(geo.begin, geo.end)]
    xp = np.pad(x, width, constant_values=zx if pad_with_zero_point else 0) - zx
    n, c = x.shape[:2]
    m = w.shape[0]
    cg, mg = c // group, m // group
    y = np.zeros((n, m) + tuple(geo.out), dtype=np.int64)
    for off in itertools.product(*[range(k) for k in w.shape[2:]]):
        sl = tuple(slice(o * d, o * d + (q - 1) * s + 1, s) for o, d, q, s in
                   zip(off, geo.dilations, geo.out, geo.strides))
        win = xp[(slice(None), slice(None)) + sl]  # (N, C, out...)
        for g in range(group):
            wk = wz[(slice(g * mg, (g + 1) * mg), slice(None)) + off]  # (mg, cg)
            y[:, g * mg:(g + 1) * mg] += np.einsum("mc,nc...->nm...", wk, win[:, g * cg:(g + 1) * cg])
    return y


def ci_kernel(flaw=None):
    """ConvInteger in int64 (legitimate: no int32 overflow is generated)."""

    def kernel(inputs, attrs, outputs, opset):
        zx = None if flaw == "ignore-x-zero-point" else inputs.get("x_zero_point")
        if zx is not None and zx.size != 1:
            raise ValueError("x_zero_point is per tensor")
        y = _int_conv(inputs["x"], inputs["w"], zx, inputs.get("w_zero_point"), attrs,
                      pad_with_zero_point=flaw != "pad-with-0")
        return {outputs[0]: y.astype(np.int32)}

    return kernel


def qc_kernel(mode="mult32", flaw=None):
    """QLinearConv: int64 accumulation plus B, then ``acc * (x_scale * w_scale[m] / y_scale)`` in
    float32 (``mult32``), ``((acc * x_scale) * w_scale) / y_scale`` (``assoc32``) or float64."""

    def kernel(inputs, attrs, outputs, opset):
        _validate(inputs, (("x_scale", "x_zero_point"), ("w_scale", "w_zero_point")))
        if inputs["x_scale"].size != 1 or inputs["y_scale"].size != 1:
            raise ValueError("x_scale and y_scale are per tensor")
        sw = _f(inputs["w_scale"])
        if flaw == "per-channel-ignored":
            sw = sw.ravel()[:1].reshape(())
        acc = _int_conv(inputs["x"], inputs["w"], inputs["x_zero_point"], inputs["w_zero_point"], attrs)
        lay = (1, -1) + (1,) * (acc.ndim - 2)
        if "B" in inputs and flaw != "ignore-B":
            acc = acc + inputs["B"].astype(np.int64).reshape(lay)
        sw = sw.reshape(lay) if sw.size > 1 else sw.reshape(())
        sx, sy = _f(inputs["x_scale"]), _f(inputs["y_scale"])
        if mode == "f64":
            q = acc.astype(np.float64) * np.float64(sx) * sw.astype(np.float64) / np.float64(sy)
        elif mode == "assoc32":
            q = ((acc.astype(np.float32) * sx).astype(np.float32) * sw).astype(np.float32) / sy
        else:
            q = (acc.astype(np.float32) * ((sx * sw).astype(np.float32) / sy).astype(np.float32)).astype(np.float32)
        return {outputs[0]: _finish(q, inputs["y_zero_point"], mode, flaw)}

    return kernel


@pytest.fixture(scope="module")
def conv_cases(all_cases):
    return [c for c in all_cases if c.op in ("ConvInteger", "QLinearConv") and c.expect_error is None]


def test_legitimate_conv_kernels_pass(conv_cases):
    ci = [c for c in conv_cases if c.op == "ConvInteger"]
    qc = [c for c in conv_cases if c.op == "QLinearConv"]
    assert len(ci) >= 100 and len(qc) >= 200
    assert {c.tags["numerics"] for c in qc} == {"requant", "ties", "saturate"}
    assert {c.tags["optional_inputs"] for c in ci} == {"none", "x_zero_point", "w_zero_point",
                                                       "x_zero_point,w_zero_point"}
    res = _run(ci, {"ConvInteger": ci_kernel()}, "int64")
    bad = [(c.id, r.outcome, r.message[:200]) for c, r in zip(ci, res) if r.outcome != "pass"]
    assert not bad, bad[:5]
    for mode in ("mult32", "assoc32", "f64"):
        res = _run(qc, {"QLinearConv": qc_kernel(mode)}, mode)
        bad = [(c.id, r.outcome, r.message[:200]) for c, r in zip(qc, res) if r.outcome != "pass"]
        assert not bad, (mode, bad[:5])


WRONG_CONV = {
    # flaw: (operator, filter, at least this many fails)
    "ignore-x-zero-point": ("ConvInteger", lambda c: "x_zero_point" in c.tags["optional_inputs"], 20),
    "pad-with-0": ("ConvInteger", lambda c: "x_zero_point" in c.tags["optional_inputs"] and (
        "pads" in c.attributes or c.attributes.get("auto_pad", "NOTSET") in ("SAME_UPPER", "SAME_LOWER")), 5),
    "per-channel-ignored": ("QLinearConv", lambda c: c.tags["shape"].endswith("per-channel"), 40),
    "half-away": ("QLinearConv", lambda c: c.tags["numerics"] == "ties", 20),
    "wrap": ("QLinearConv", lambda c: c.tags["numerics"] == "saturate", 20),
    "ignore-B": ("QLinearConv", lambda c: c.tags["optional_inputs"] == "B", 40),
}


@pytest.mark.parametrize("flaw", sorted(WRONG_CONV))
def test_wrong_conv_kernels_are_caught(flaw, conv_cases):
    op, keep, least = WRONG_CONV[flaw]
    cases = [c for c in conv_cases if c.op == op and keep(c)]
    assert len(cases) >= least
    kern = ci_kernel(flaw) if op == "ConvInteger" else qc_kernel(flaw=flaw)
    res = _run(cases, {op: kern}, flaw)
    n = Counter(r.outcome for r in res)
    assert n["fail"] >= least // 2, n


# ============================================================================ invalid models, onnx.reference
def test_error_cases_are_rejected(all_cases):
    cases = [c for c in all_cases if c.expect_error]
    assert {c.tags["error"] for c in cases if c.op == "QLinearMatMul"} == {
        "inner-mismatch", "a-zero-point-type", "scale-type", "scale-zero-point-shapes", "per-column-length"}
    assert {"group-not-dividing-C", "x-zero-point-type", "w-zero-point-type"} <= \
        {c.tags["error"] for c in cases if c.op == "ConvInteger"}
    assert {"B-type", "B-length", "x-zero-point-type"} <= {c.tags["error"] for c in cases if c.op == "QLinearConv"}
    res = run_cases(cases, KernelBackend({"QLinearMatMul": qmm_kernel(), "ConvInteger": ci_kernel(),
                                          "QLinearConv": qc_kernel()}, name="legit", check=True))
    bad = [(c.id, r.outcome, r.message[:100]) for c, r in zip(cases, res) if r.outcome != "pass"]
    assert not bad, bad[:5]


def _y_zero_point(case):
    ds = case.datasets[0].inputs
    i = next(i for i in case.inputs if i.name == "y_zero_point")
    return int(np.asarray(ds.get("y_zero_point", i.value)).reshape(()))


def _reference_disagreement(case, res) -> str | None:
    """Why onnx.reference (onnx 1.23.2) and the suite disagree; None if unknown.  The suite is
    right in each:

    * ``no-float8``: QLinearMatMul-21 with a float8 input or output: onnx.reference calls
      ``np.iinfo`` on a float8 output type ("Invalid integer data type") and converts float8
      inputs with ``astype(np.int32)`` (truncating their values) where the output is an integer.
    * ``per-row-along-K``: QLinearMatMul with a per-row ``[M]`` a_zero_point: onnx.reference
      subtracts it with numpy broadcasting, along K (a shape error, or wrong values where
      M == K); the text: "an M element vector [v_1, v_2, ..., v_M] for per row quantization".
    * ``per-channel-2d-only``: ConvInteger's per-channel w_zero_point and QLinearConv's
      per-channel w_scale are reshaped for a 2-D convolution (``expand_dims(.., (1, 2, 3))``,
      ``(0, 2, 3)``): a 1-D or 3-D convolution errors or is wrong.
    * ``zero-point-before-rounding``: ``rint(v + y_zero_point)`` instead of ``round(v) +
      y_zero_point`` (the text: ``saturate((x / y_scale) + y_zero_point)`` with the rounding of
      ``x / y_scale``): an exact tie with an odd zero point rounds the other way (``ties`` class).
    * ``multiplier-in-TS``: QLinearMatMul-21 with float16/bfloat16 scales: onnx.reference
      computes ``a_scale * b_scale / y_scale`` in that type (11 or 8 significant bits), so
      outputs far from any tie move by a quantum; the suite requires the multiplier in float32
      or wider (docs/tolerance.md, "Integer kernels of quantization").
    * ``no-validation``: invalid models (strides of the wrong length, pads with auto_pad, a zero
      point of another type...) are run, not rejected.
    """
    msg = res.message or ""
    shape = case.tags.get("shape", "")
    if case.expect_error:
        return "no-validation" if res.outcome == "fail" else None
    if case.op == "QLinearMatMul" and "float8" in case.id:
        return "no-float8"
    if case.op == "QLinearMatMul" and "per-row" in shape:
        za = next(i for i in case.inputs if i.name == "a_zero_point")
        if int(np.prod(za.shape)) > 1:
            return "per-row-along-K"
    if case.op in ("ConvInteger", "QLinearConv") and shape.endswith("per-channel") and not shape.startswith("2d"):
        return "per-channel-2d-only"
    if case.tags.get("numerics") == "ties" and res.outcome == "fail" and _y_zero_point(case) % 2:
        return "zero-point-before-rounding"
    if case.op == "QLinearMatMul" and res.outcome == "fail" and ("TS=float16" in case.id or "TS=bfloat16" in case.id):
        return "multiplier-in-TS"
    return None


def test_agreement_with_onnx_reference(all_cases):
    from conformance.backends import resolve_backend

    cases = all_cases
    results = run_cases(cases, resolve_backend("onnx-reference"))
    why, unexplained = sort_findings(cases, results, _reference_disagreement)
    assert not unexplained, unexplained[:5]
    assert set(why) == {"no-float8", "per-row-along-K", "per-channel-2d-only", "zero-point-before-rounding",
                        "multiplier-in-TS", "no-validation"}, why
    # the cases onnx.reference gets right: most of version 10's
    ok = Counter(c.op for c, r in zip(cases, results) if r.outcome == "pass")
    assert ok["QLinearMatMul"] >= 100 and ok["QLinearConv"] >= 150 and ok["ConvInteger"] >= 90, ok


def test_every_element_type_round_trips_through_a_bundle(all_cases, tmp_path):
    from conformance.bundle import read_bundle
    from conformance.bundle_write import write_bundle
    from conformance.suite import Suite

    value = [c for c in all_cases if c.expect_error is None]
    pick, seen = [], set()
    for c in value:  # one case per element type not yet seen, among inputs and outputs
        types = {i.elem_type for i in c.inputs if i.present} | {o.elem_type for o in c.outputs}
        if types - seen:
            pick.append(c)
            seen |= types
    want = {"int8", "uint8", "int32", "float", "float16", "bfloat16", "float8e4m3fn", "float8e4m3fnuz", "float8e5m2",
            "float8e5m2fnuz"}
    assert {V.name_of(t) for t in seen} == want
    back = read_bundle(write_bundle(Suite(cases=pick, seed=0, ops=list(E), generators={}), tmp_path / "b"))
    assert len(back.cases) == len(pick)
    for a, b in zip(pick, back.cases):
        for k, v in a.datasets[0].inputs.items():
            w = b.datasets[0].inputs[k]
            assert v.dtype == w.dtype and v.tobytes() == w.tobytes(), (a.id, k)
        for i, j in zip(a.inputs, b.inputs):
            if i.value is not None:
                assert i.value.dtype == j.value.dtype and i.value.tobytes() == j.value.tobytes(), (a.id, i.name)
        for k, v in a.datasets[0].outputs.items():
            w = b.datasets[0].outputs[k]
            assert v.dtype == w.dtype and v.tobytes() == w.tobytes(), (a.id, k)


# ============================================================================ com.microsoft QLinearAdd / QLinearMul
def test_qlinear_binary_oracle_matches_an_explicit_loop():
    rng = np.random.default_rng(7)
    for op in ("QLinearAdd", "QLinearMul"):
        for t, (lo, hi) in (("uint8", (0, 255)), ("int8", (-128, 127))):
            a = _obj(rng.integers(lo, hi + 1, size=6), (2, 3))
            b = _obj(rng.integers(lo, hi + 1, size=3), (3,))
            za, zb, zc = (int(v) for v in rng.integers(lo, hi + 1, size=3))
            sa, sb, sc = (float(np.float32(v)) for v in rng.uniform(0.01, 0.2, size=3))
            got = ref.qlinear_binary(op, a, np.array(sa), np.array(za), b, np.array(sb), np.array(zb), np.array(sc),
                                     np.array(zc), t)
            for i, j in itertools.product(range(2), range(3)):
                x, y = Fraction(int(a[i, j]) - za), Fraction(int(b[j]) - zb)
                if op == "QLinearAdd":
                    v = (Fraction(sa) * x + Fraction(sb) * y) / Fraction(sc)
                else:
                    v = x * y * Fraction(sa) * Fraction(sb) / Fraction(sc)
                assert got[i, j] == min(hi, max(lo, round(v) + zc)), (op, t, i, j)


def qbin_kernel(op, mode="ratio32", flaw=None):
    """onnxruntime's QLinearAdd/QLinearMul in float32: ``ratio32`` the ratios ``A_scale / C_scale``
    and ``B_scale / C_scale`` (Mul: ``A_scale B_scale / C_scale``) rounded to float32 first (MLAS),
    ``plain32`` the formula as written in float32, ``f64``; then rint, + C_zero_point, saturation."""

    def kernel(inputs, attrs, outputs, opset):
        for n in ("A_scale", "B_scale", "C_scale", "A_zero_point", "B_zero_point", "C_zero_point"):
            if n in inputs and inputs[n].ndim != 0:
                raise ValueError(f"{n} must be a scalar")
        t = inputs["A"].dtype
        if any(inputs[n].dtype != t for n in ("B", "A_zero_point", "B_zero_point", "C_zero_point") if n in inputs):
            raise TypeError("A, B and the zero points have one type T")
        z = {n: np.int64(inputs[n]) if n in inputs else np.int64(0)
             for n in ("A_zero_point", "B_zero_point", "C_zero_point")}
        if flaw == "ignore-A-zero-point":
            z["A_zero_point"] = np.int64(0)
        da = inputs["A"].astype(np.int64) - z["A_zero_point"]
        db = inputs["B"].astype(np.int64) - z["B_zero_point"]
        sa, sb, sc = (np.float32(inputs[n]) for n in ("A_scale", "B_scale", "C_scale"))
        if flaw == "swap-scales":
            sa, sb = sb, sa

        dt = np.float64 if mode == "f64" else np.float32
        if op == "QLinearAdd":
            if mode == "ratio32":
                v = (np.float32(sa / sc) * da.astype(np.float32)).astype(np.float32) + \
                    (np.float32(sb / sc) * db.astype(np.float32)).astype(np.float32)
            else:
                v = (dt(sa) * da.astype(dt) + dt(sb) * db.astype(dt)) / dt(sc)
        else:
            p = (da * db).astype(dt)
            v = p * dt(dt(sa) * dt(sb) / dt(sc)) if mode == "ratio32" else p * dt(sa) * dt(sb) / dt(sc)
        r = np.trunc(v) if flaw == "truncate" else np.rint(v)
        y = r.astype(np.int64) + (0 if flaw == "ignore-C-zero-point" else z["C_zero_point"])
        i = np.iinfo(t)
        return {outputs[0]: y.astype(t) if flaw == "wrap" else np.clip(y, i.min, i.max).astype(t)}

    return kernel


@pytest.fixture(scope="module")
def bin_cases():
    return [c for e in ops_ql.MS_ENTRIES for c in engine.cases(e, 0)]


def test_qlinear_binary_kernels(bin_cases):
    values = [c for c in bin_cases if c.expect_error is None]
    errors = [c for c in bin_cases if c.expect_error]
    assert len(values) >= 70 and {c.tags["numerics"] for c in values} == {"requant", "saturate"}
    assert any(c.contested for c in values) and sum(1 for c in values if not c.contested) >= 60
    for mode in ("ratio32", "plain32", "f64"):
        k = {op: qbin_kernel(op, mode) for op in ("QLinearAdd", "QLinearMul")}
        res = run_cases(values, KernelBackend(k, name=mode, check=False))
        bad = [(c.id, r.outcome, r.message[:200]) for c, r in zip(values, res) if r.outcome != "pass"]
        assert not bad, (mode, bad[:5])
    res = run_cases(errors, KernelBackend({op: qbin_kernel(op) for op in ("QLinearAdd", "QLinearMul")}, name="e",
                                          check=True))
    assert all(r.outcome == "pass" for r in res), [(c.id, r.message[:100]) for c, r in zip(errors, res)
                                                    if r.outcome != "pass"]


WRONG_BIN = {
    # flaw: (filter, the operators it can show on: A_scale B_scale is symmetric in QLinearMul)
    "swap-scales": (lambda c: True, ("QLinearAdd",)),
    "truncate": (lambda c: c.tags["numerics"] == "requant", ("QLinearAdd", "QLinearMul")),
    "wrap": (lambda c: c.tags["numerics"] == "saturate", ("QLinearAdd", "QLinearMul")),
    "ignore-C-zero-point": (lambda c: "C_zero_point" in c.tags["optional_inputs"], ("QLinearAdd", "QLinearMul")),
    "ignore-A-zero-point": (lambda c: "A_zero_point" in c.tags["optional_inputs"], ("QLinearAdd", "QLinearMul")),
}


@pytest.mark.parametrize("flaw", sorted(WRONG_BIN))
def test_wrong_qlinear_binary_kernels_are_caught(flaw, bin_cases):
    keep, ops = WRONG_BIN[flaw]
    cases = [c for c in bin_cases if c.expect_error is None and c.op in ops and keep(c)]
    assert len(cases) >= 10
    k = {op: qbin_kernel(op, flaw=flaw) for op in ops}
    res = run_cases(cases, KernelBackend(k, name=flaw, check=False))
    n = Counter((c.op, r.outcome) for c, r in zip(cases, res))
    assert all(n[(op, "fail")] >= 3 for op in ops), n
