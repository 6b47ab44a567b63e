"""Tests of the quantized (QDQ) layer patterns (conformance/patterns/qdq.py, issue 26).

* the composed oracle against an independent numpy composition written here (QuantizeLinear as
  ``clip(rint(x / s) + z)``, DequantizeLinear, MatMul, Add, Mul, Conv and the pools as explicit
  loops, Resize as separable 1-D interpolation), on every case;
* onnx.reference on the unfused graphs passes every case;
* the robustness rule: no float output has a non-zero chain spread (no variant flips a
  rounding), every QuantizeLinear element of a non-ties case keeps its margin, the ``ties``
  classes hold exact ties (below odd and even integers);
* a test backend with levels whose optimizing level applies QDQ fusions
  (:data:`RIGHT`: an integer kernel with an exact int32 accumulator and a float32 requantization
  multiplier, ratio-first float32 Add / Mul, a Relu folded into the output clamp at the output's
  zero point, Resize / pooling on the integers, DQ -> Q pairs with equal parameters removed):
  passes every case and fires on every canonical form, leaves near-misses alone; each wrong
  rewrite is caught as an optimizer failure exactly where its precondition fails: a quantized
  Resize rounding exact ties away from zero, a QLinear fusion taking the feeding Q's parameters
  instead of a differing DQ's, a binary fusion swapping the two zero points, a Relu folded into
  the clamp at the input's zero point, a DQ -> Q pair removed although it requantizes.
"""

from __future__ import annotations

import math
from collections import Counter
from functools import lru_cache

import numpy as np
import onnx
import pytest
from onnx import helper, numpy_helper
from onnx.reference import ReferenceEvaluator
from onnx.reference.op_run import OpRun
from onnx.reference.ops.op_dequantize_linear import DequantizeLinear_19
from onnx.reference.ops.op_quantize_linear import QuantizeLinear_19

from conformance import levels
from conformance.patterns import core, qdq
from conformance.runner import run_cases

import pattern_rewrites as pr  # tests/pattern_rewrites.py

pytestmark = pytest.mark.filterwarnings("ignore::RuntimeWarning")

NAMES = tuple(p.name for p in qdq.PATTERNS)
RANGE = {np.dtype(np.uint8): (0, 255), np.dtype(np.int8): (-128, 127), np.dtype(np.uint16): (0, 65535),
         np.dtype(np.int16): (-32768, 32767)}


@lru_cache(maxsize=None)
def _cases(name: str) -> tuple:
    return tuple(core.pattern_cases(core.PATTERNS[name], 0))


def _all() -> list:
    return [c for n in NAMES for c in _cases(n)]


def _values(c) -> dict:
    """Every initializer, Constant output and data-set input of the case, by name."""
    m = c.model
    out = {t.name: numpy_helper.to_array(t) for t in m.graph.initializer}
    for n in m.graph.node:
        if n.op_type == "Constant":
            out[n.output[0]] = numpy_helper.to_array(n.attribute[0].t)
    out.update({k: np.asarray(v) for k, v in c.datasets[0].inputs.items()})
    return out


def _attrs(n) -> dict:
    return {a.name: helper.get_attribute_value(a) for a in n.attribute}


# ============================================================================ independent numpy
def _per_axis(p: np.ndarray, ndim: int, axis: int) -> np.ndarray:
    if p.ndim == 0:
        return p.astype(np.float64)
    shape = [1] * ndim
    shape[axis % ndim] = p.size
    return p.astype(np.float64).reshape(shape)


def np_quantize(x, s, z, axis=1):
    x = np.asarray(x, dtype=np.float64)
    lo, hi = RANGE[z.dtype]
    q = np.rint(x / _per_axis(s, x.ndim, axis)) + _per_axis(z, x.ndim, axis)
    return np.clip(q, lo, hi)


def np_dequantize(q, s, z, axis=1):
    q = np.asarray(q, dtype=np.float64)
    return (q - _per_axis(z, q.ndim, axis)) * _per_axis(s, q.ndim, axis)


def np_conv(x, w, b, pads, group):
    """Direct loops over output positions (stride 1, dilation 1)."""
    n, c, h, wd = x.shape
    m, cg, kh, kw = w.shape
    xp = np.pad(x, ((0, 0), (0, 0), (pads[0], pads[2]), (pads[1], pads[3])))
    oh, ow = xp.shape[2] - kh + 1, xp.shape[3] - kw + 1
    y = np.zeros((n, m, oh, ow))
    mg = m // group
    for o in range(m):
        g = o // mg
        for i in range(oh):
            for j in range(ow):
                y[:, o, i, j] = np.sum(xp[:, g * cg:(g + 1) * cg, i:i + kh, j:j + kw] * w[o], axis=(1, 2, 3))
    if b is not None:
        y += b.reshape(1, -1, 1, 1)
    return y


def np_pool(x, kind, kernel=(2, 2), strides=(1, 1), pads=(0, 0, 0, 0), count_include_pad=0):
    n, c, h, w = x.shape
    oh = (h + pads[0] + pads[2] - kernel[0]) // strides[0] + 1
    ow = (w + pads[1] + pads[3] - kernel[1]) // strides[1] + 1
    y = np.zeros((n, c, oh, ow))
    for i in range(oh):
        for j in range(ow):
            r0, c0 = i * strides[0] - pads[0], j * strides[1] - pads[1]
            r1, c1 = r0 + kernel[0], c0 + kernel[1]
            win = x[:, :, max(r0, 0):min(r1, h), max(c0, 0):min(c1, w)]
            if kind == "MaxPool":
                y[:, :, i, j] = win.max(axis=(2, 3))
            else:
                cnt = kernel[0] * kernel[1] if count_include_pad else win.shape[2] * win.shape[3]
                y[:, :, i, j] = win.sum(axis=(2, 3)) / cnt
    return y


def _source(o, f, in_n, out_n, coord):
    if coord == "half_pixel":
        return (o + 0.5) / f - 0.5
    if coord == "asymmetric":
        return o / f
    return o * (in_n - 1) / (out_n - 1) if out_n > 1 else np.zeros_like(o, dtype=np.float64)


def np_resize_axis(x, axis, f, mode, coord, nearest_mode):
    """1-D resize of ``x`` along ``axis`` by the factor ``f`` (Resize's coordinate transforms;
    linear clamps the source coordinate to the input, nearest as its rounding mode says)."""
    n = x.shape[axis]
    on = int(math.floor(n * f))
    src = _source(np.arange(on, dtype=np.float64), f, n, on, coord)
    xm = np.moveaxis(x, axis, -1)
    if mode == "nearest":
        if nearest_mode == "round_prefer_floor":
            idx = np.where(src - np.floor(src) == 0.5, np.floor(src), np.round(src))
        elif nearest_mode == "floor":
            idx = np.floor(src)
        else:
            idx = np.ceil(src)
        y = xm[..., np.clip(idx.astype(int), 0, n - 1)]
    else:
        s = np.clip(src, 0, n - 1)
        i0 = np.floor(s).astype(int)
        i1 = np.minimum(i0 + 1, n - 1)
        t = s - i0
        y = xm[..., i0] * (1 - t) + xm[..., i1] * t
    return np.moveaxis(y, -1, axis)


def np_resize(x, scales, mode, coord, nearest_mode="round_prefer_floor"):
    y = x
    for ax in range(x.ndim):
        if scales[ax] != 1.0:
            y = np_resize_axis(y, ax, float(scales[ax]), mode, coord, nearest_mode)
    return y


def np_evaluate(c) -> dict:
    """The case's graph evaluated node by node with the functions above (float64, exact
    rounding of QuantizeLinear by rint of the float64 quotient: the cases keep non-tie quotients
    far from .5 and exact ties exact in float64)."""
    env = _values(c)
    for n in c.model.graph.node:
        a = _attrs(n)
        i = [env[x] if x else None for x in n.input]
        op = n.op_type
        if op == "Constant":
            continue
        if op == "QuantizeLinear":
            z = i[2]
            y = np_quantize(i[0], i[1], z, a.get("axis", 1)).astype(z.dtype)
        elif op == "DequantizeLinear":
            z = i[2] if len(i) > 2 else np.zeros_like(i[1], dtype=i[0].dtype)
            y = np_dequantize(i[0], i[1], z, a.get("axis", 1))
        elif op == "MatMul":
            y = np.matmul(i[0], i[1])
        elif op == "Add":
            y = i[0] + i[1]
        elif op == "Mul":
            y = i[0] * i[1]
        elif op == "Relu":
            y = np.maximum(i[0], 0)
        elif op == "Conv":
            y = np_conv(i[0], i[1], i[2] if len(i) > 2 else None, a.get("pads", [0] * 4), a.get("group", 1))
        elif op in ("AveragePool", "MaxPool"):
            y = np_pool(i[0], op, a["kernel_shape"], a.get("strides", [1, 1]), a.get("pads", [0] * 4),
                        a.get("count_include_pad", 0))
        elif op == "GlobalAveragePool":
            y = i[0].mean(axis=(2, 3), keepdims=True) if i[0].size else np.zeros(i[0].shape[:2] + (1, 1))
        elif op == "Resize":
            y = np_resize(i[0], i[2], a["mode"].decode() if isinstance(a["mode"], bytes) else a["mode"],
                          a["coordinate_transformation_mode"].decode(),
                          a.get("nearest_mode", b"round_prefer_floor").decode())
        else:
            raise AssertionError(f"no numpy form for {op}")
        env[n.output[0]] = np.asarray(y)
    return env


def test_oracle_is_the_independent_numpy_composition():
    seen = Counter()
    for c in _all():
        env = np_evaluate(c)
        for o in c.outputs:
            want = c.datasets[0].outputs[o.name]
            got = env[o.name]
            assert got.shape == want.shape, c.id
            if np.issubdtype(want.dtype, np.integer):
                assert np.array_equal(got.astype(np.int64), want.astype(np.int64)), (c.id, got, want)
            else:  # float outputs: a DQ after a Q (exact) or the weight-only MatMul (float64 sums: an ulp)
                np.testing.assert_allclose(got, want, rtol=2.0 ** -22, atol=1e-30, err_msg=c.id)
        seen[c.op] += 1
    assert set(seen) == set(NAMES) and min(seen.values()) >= 10


# ============================================================================ robustness and ties
def _quotients(c):
    """(x / s, is-ties-class) of every QuantizeLinear element of the case, from the numpy
    composition."""
    env = np_evaluate(c)
    out = []
    for n in c.model.graph.node:
        if n.op_type == "QuantizeLinear":
            out.append(np.asarray(env[n.input[0]], dtype=np.float64) / float(env[n.input[1]]))
    return out


def test_float_outputs_have_no_spread_and_quantized_outputs_are_exact():
    kinds = Counter()
    for c in _all():
        for o in c.outputs:
            t = o.tolerance
            if c.op == "QDQ.weight_only":  # no QuantizeLinear: MatMul's derived float tolerance
                assert not t.exact and (t.spread > 0 or 0 in c.datasets[0].outputs[o.name].shape), c.id
            elif o.elem_type == onnx.TensorProto.FLOAT:
                assert t.spread == 0.0 and t.atol < 1e-30 and t.rtol <= 2.0 ** -23, (c.id, t)
                kinds["float"] += 1
            else:
                assert t.exact, c.id
                kinds["int"] += 1
    assert kinds["float"] >= 30 and kinds["int"] >= 50


def test_margin_and_exact_ties():
    ties = Counter()
    for c in _all():
        is_ties = c.tags["v_numerics"] == "ties" if "v_numerics" in c.tags else False
        for v in _quotients(c):
            frac = np.abs(v - np.floor(v) - 0.5)
            tie = frac == 0
            if not is_ties:
                assert not tie.any(), c.id
            assert not np.any((frac <= qdq.MARGIN * np.abs(v) + 2.0 ** -23) & ~tie), c.id
            below = np.floor(v[tie]).astype(np.int64)
            ties["odd-below" if False else "below-even"] += int(np.sum(below % 2 == 0))
            ties["below-odd"] += int(np.sum(below % 2 == 1))
            if tie.any():
                ties[c.op] += int(tie.sum())
    # every pattern with a ties class holds exact ties, below even and below odd integers
    assert ties["below-even"] >= 50 and ties["below-odd"] >= 50, ties
    for name in ("QDQ.dense", "QDQ.conv", "QDQ.binary", "QDQ.pool", "QDQ.resize", "QDQ.pairs"):
        assert ties[name] >= 5, (name, ties)


def test_reproducible():
    a = [c.content_hash for c in core.pattern_cases(qdq.DENSE, 5)]
    b = [c.content_hash for c in core.pattern_cases(qdq.DENSE, 5)]
    assert a == b and a != [c.content_hash for c in _cases("QDQ.dense")]


def test_generation_covers_axes_and_is_valid():
    for p in qdq.PATTERNS:
        cs = _cases(p.name)
        for axis, vals in p.axes.items():
            assert {core._label_value(v) for v in vals} <= {c.tags[f"v_{axis}"] for c in cs}, (p.name, axis)
        assert {c.tags["near_miss"] for c in cs if "near_miss" in c.tags} == \
            {f"{a}={core._label_value(v)}" for a, vs in p.near_misses.items() for v in vs}
        for c in cs:
            onnx.checker.check_model(c.model, full_check=True)
    assert 60 <= len(_all()) <= 400


# ============================================================================ onnx.reference
def test_onnx_reference_passes_every_unfused_graph():
    recs = [r for r in _summary("right")["records"] if r["level"] == "disable"]
    assert len(recs) == len(_all()) and all(r["outcome"] == "pass" for r in recs), \
        [r["id"] for r in recs if r["outcome"] != "pass"][:3]


def test_onnx_reference_lacks_opset13_qdq():
    """The one disagreement with onnx.reference here: it has no DequantizeLinear-13 kernel, so an
    opset-13 QDQ graph does not load; the test backend gives it its own version-19 kernel."""
    c = next(c for c in _cases("QDQ.dense") if c.opset == 13)
    with pytest.raises(Exception, match="DequantizeLinear"):
        ReferenceEvaluator(c.model)
    ReferenceEvaluator(c.model, new_ops=[DequantizeLinear, QuantizeLinear])


# ============================================================================ fused kernels (test domain)
DOMAIN = pr.DOMAIN
F32 = np.float32


def _requant(v32: np.ndarray, zy: np.ndarray, away: bool = False, floor_at=None) -> np.ndarray:
    lo, hi = RANGE[zy.dtype]
    r = np.sign(v32) * np.floor(np.abs(v32) + F32(0.5)) if away else np.rint(v32)
    q = r.astype(np.float64) + float(zy)
    q = np.clip(q, lo if floor_at is None else max(lo, floor_at), hi)
    return q.astype(zy.dtype)


def _col(p: np.ndarray, ndim: int, axis: int) -> np.ndarray:
    return _per_axis(p, ndim, axis)


class QDense(OpRun):
    """Integer dense: int32 accumulator of ``(x - zx)(w - zw)`` (+ the int32 bias), requantized
    with the float32 multiplier ``fl32(fl32(sx sw) / sy)`` per output column."""

    op_domain = DOMAIN

    def _run(self, x, sx, zx, w, sw, zw, sy, zy, bias=None, w_axis=None):
        acc = (x.astype(np.int64) - int(zx)) @ (w.astype(np.int64) - _col(zw, 2, 1).astype(np.int64))
        if bias is not None:
            acc = acc + bias.astype(np.int64)
        assert np.all(np.abs(acc) < 2 ** 31)
        mult = (F32(sx) * sw.astype(F32)) / F32(sy)
        return (_requant(acc.astype(F32) * mult.astype(F32), zy),)


class QConv(OpRun):
    """Integer convolution, the same requantization; ``relu``: the output clamp starts at
    ``relu_floor`` (right: the output zero point)."""

    op_domain = DOMAIN

    def _run(self, x, sx, zx, w, sw, zw, sy, zy, bias=None, pads=None, group=None, relu=None, relu_floor=None):
        d = x.astype(np.int64) - int(zx)
        acc = np_conv(d.astype(np.float64), w.astype(np.float64), None, pads, group)  # exact: < 2^53
        if bias is not None:
            acc = acc + bias.astype(np.float64).reshape(1, -1, 1, 1)
        mult = (F32(sx) * sw.astype(F32)) / F32(sy)
        v = acc.astype(F32) * _col(mult, 4, 1).astype(F32)
        floor_at = None
        if relu:
            floor_at = int(zy) if relu_floor == "output" else int(zx)
        return (_requant(v.astype(F32), zy, floor_at=floor_at),)


class QBinary(OpRun):
    """com.microsoft.QLinearAdd / QLinearMul's float32 form: ``(a - za) fl32(sa / sc) + (b - zb)
    fl32(sb / sc)`` (ratio first), ``(a - za)(b - zb) fl32(fl32(sa sb) / sc)``; ``swap``: the zero
    points swapped (wrong)."""

    op_domain = DOMAIN

    def _run(self, a, sa, za, b, sb, zb, sc, zc, op=None, swap=None):
        if swap:
            za, zb = zb, za
        da = (a.astype(np.int64) - int(za)).astype(F32)
        db = (b.astype(np.int64) - int(zb)).astype(F32)
        if op == "Add":
            v = da * (F32(sa) / F32(sc)) + db * (F32(sb) / F32(sc))
        else:
            v = (da * db) * ((F32(sa) * F32(sb)) / F32(sc))
        return (_requant(v.astype(F32), zc),)


class QPool(OpRun):
    """Pooling of the integers ``x - zx`` (sums exact), requantized with ``fl32(sx / sy)``: the
    mean as ``fl32(sum) * m / count``; MaxPool takes the integer maximum."""

    op_domain = DOMAIN

    def _run(self, x, sx, zx, sy, zy, kind=None, kernel_shape=None, strides=None, pads=None, count_include_pad=None):
        d = (x.astype(np.int64) - int(zx)).astype(np.float64)
        if kind == "GlobalAveragePool":
            s = d.sum(axis=(2, 3), keepdims=True).astype(F32)
            v = s * (F32(sx) / F32(sy)) / F32(d.shape[2] * d.shape[3]) if d.size else s
        elif kind == "MaxPool":
            v = np_pool(d, "MaxPool", kernel_shape, strides, pads).astype(F32) * (F32(sx) / F32(sy))
        else:
            mean = np_pool(d, "AveragePool", kernel_shape, strides, pads, count_include_pad)
            v = mean.astype(F32) * (F32(sx) / F32(sy))
        return (_requant(np.asarray(v, dtype=F32), zy),)


class QResize(OpRun):
    """Resize of the integers ``x - zx`` in float32, requantized with ``fl32(sx / sy)``; ``away``:
    exact ties rounded away from zero (wrong)."""

    op_domain = DOMAIN

    def _run(self, x, sx, zx, scales, sy, zy, mode=None, coord=None, nearest_mode=None, away=None):
        d = (x.astype(np.int64) - int(zx)).astype(F32)
        r = np_resize(d, scales, mode, coord, nearest_mode or "round_prefer_floor").astype(F32)
        return (_requant(r * (F32(sx) / F32(sy)), zy, away=bool(away)),)


class DequantizeLinear(DequantizeLinear_19):
    """onnx.reference's DequantizeLinear-19 for every version: onnx 1.23's reference has no
    DequantizeLinear-10/13 nor QuantizeLinear-13 ("No implementation for operator
    'DequantizeLinear' domain '' and version 13, found 19, 21, 23, 25"), so it cannot run an
    opset-13..18 QDQ graph (test_onnx_reference_lacks_opset13_qdq); version 19 only added float8
    types and float16 scales, so its kernel is the version-13 one for these graphs."""

    op_domain = ""

    def _run(self, x, x_scale, x_zero_point=None, axis=None, **_):
        return DequantizeLinear_19._run(self, x, x_scale, x_zero_point, axis=1 if axis is None else axis)


class QuantizeLinear(QuantizeLinear_19):
    """onnx.reference's QuantizeLinear-19 for every version (as :class:`DequantizeLinear`)."""

    op_domain = ""

    def _run(self, x, y_scale, zero_point=None, axis=None, **_):
        return QuantizeLinear_19._run(self, x, y_scale, zero_point, axis=1 if axis is None else axis, saturate=True)


class QWeightMatMul(OpRun):
    """Weight-only MatMul: ``X @ ((W - zw) sw)`` in float32 (the dequantized weight folded as a
    constant, a legitimate rewrite); ``quantize_a`` (wrong, what an int8-compute kernel does):
    each row of X quantized to int8 with scale ``max|x| / 127`` first."""

    op_domain = DOMAIN

    def _run(self, x, w, sw, zw, axis=None, quantize_a=None):
        wd = ((w.astype(np.int64) - _col(zw, 2, 1).astype(np.int64)).astype(F32) * _col(sw, 2, 1).astype(F32))
        x = x.astype(F32)
        if quantize_a and x.size:
            s = np.maximum(np.abs(x).max(axis=-1, keepdims=True), F32(1e-30)) / F32(127)
            x = (np.rint(x / s) * s).astype(F32)
        return ((x @ wd.astype(F32)).astype(F32),)


KERNELS = [QDense, QConv, QBinary, QPool, QResize, QWeightMatMul, DequantizeLinear, QuantizeLinear]


# ============================================================================ rewrites
def _producer(g, name):
    return next((n for n in g.nodes if name in n.output), None)


def _const(g, name):
    return g.consts.get(name) if name else None


def _dq_parts(g, name, *, producer_params=False):
    """(q, scale, zero point, axis) names of the DQ producing ``name`` if its scale and zero
    point are constants and it is consumed only once; ``producer_params`` (wrong): where a Q
    feeds the DQ, that Q's scale and zero point instead of the DQ's."""
    dq = _producer(g, name)
    if dq is None or dq.op_type != "DequantizeLinear" or len(dq.input) < 3:
        return None
    if _const(g, dq.input[1]) is None or _const(g, dq.input[2]) is None:
        return None
    if g.only(name, g.consumers(name)[0].op_type if g.consumers(name) else "") is None:
        return None
    s, z = dq.input[1], dq.input[2]
    if producer_params:
        q = _producer(g, dq.input[0])
        if q is not None and q.op_type == "QuantizeLinear":
            s, z = q.input[1], q.input[2]
    return dq, dq.input[0], s, z, g.attr(dq, "axis", 1)


def _q_after(g, name):
    q = g.only(name, "QuantizeLinear")
    if q is None or _const(g, q.input[1]) is None or _const(g, q.input[2]) is None:
        return None
    return q


def dense_fusion(*, producer_params=False, any_bias_scale=False):
    """``DQ(x), DQ(W) -> MatMul (-> Add DQ(int32 bias)) -> Q`` into the integer kernel QDense where
    W and every scale and zero point are constants, a per-channel W scale lies on the output axis
    and the bias' scale is ``fl32(x_scale * w_scale)`` with zero point 0.  Wrong:
    ``producer_params`` takes the parameters of the Q feeding x's DQ; ``any_bias_scale`` adds the
    int32 bias whatever its scale."""

    def rewrite(model):
        g = pr._Graph(model)
        for mm in g.nodes:
            if mm.op_type != "MatMul":
                continue
            xa, wa = _dq_parts(g, mm.input[0], producer_params=producer_params), _dq_parts(g, mm.input[1])
            if xa is None or wa is None or wa[1] not in g.consts:
                continue
            w_axis = wa[4]
            if np.asarray(g.consts[wa[2]]).ndim == 1 and w_axis % 2 != 1:  # per-channel, not the output axis
                continue
            remove, out, bias = [xa[0], wa[0], mm], mm.output[0], None
            add = g.only(out, "Add")
            if add is not None:
                ba = _dq_parts(g, pr._other(add, out))
                if ba is None or ba[1] not in g.consts:
                    continue
                sx = g.consts[xa[0].input[1]]  # the DQ's own scale (even for the wrong producer_params)
                want = (np.float32(sx) * g.consts[wa[2]].astype(np.float32)).astype(np.float32)
                bs, bz = g.consts[ba[2]], g.consts[ba[3]]
                if not any_bias_scale and not (np.array_equal(bs, np.broadcast_to(want, bs.shape)) and not np.any(bz)):
                    continue
                remove += [ba[0], add]
                out, bias = add.output[0], ba[1]
            q = _q_after(g, out)
            if q is None:
                continue
            remove.append(q)
            ins = [xa[1], xa[2], xa[3], wa[1], wa[2], wa[3], q.input[1], q.input[2]] + ([bias] if bias else [])
            return g.replace(remove, helper.make_node("QDense", ins, list(q.output), domain=DOMAIN))
        return None

    rewrite.rewrite_name = "QDQDenseFusion"
    return rewrite


def conv_fusion(*, relu_floor="output"):
    def rewrite(model):
        g = pr._Graph(model)
        for cv in g.nodes:
            if cv.op_type != "Conv":
                continue
            xa, wa = _dq_parts(g, cv.input[0]), _dq_parts(g, cv.input[1])
            if xa is None or wa is None or wa[1] not in g.consts:
                continue
            if np.asarray(g.consts[wa[2]]).ndim == 1 and wa[4] != 0:  # per channel on another axis
                continue
            remove, bias = [xa[0], wa[0], cv], None
            if len(cv.input) > 2 and cv.input[2]:
                ba = _dq_parts(g, cv.input[2])
                if ba is None:
                    continue
                remove.append(ba[0])
                bias = ba[1]
            out, relu = cv.output[0], 0
            r = g.only(out, "Relu")
            if r is not None:
                remove.append(r)
                out, relu = r.output[0], 1
            q = _q_after(g, out)
            if q is None:
                continue
            remove.append(q)
            ins = [xa[1], xa[2], xa[3], wa[1], wa[2], wa[3], q.input[1], q.input[2]] + ([bias] if bias else [])
            new = helper.make_node("QConv", ins, list(q.output), domain=DOMAIN, pads=list(g.attr(cv, "pads", [0] * 4)),
                                   group=int(g.attr(cv, "group", 1)), relu=relu, relu_floor=relu_floor)
            return g.replace(remove, new)
        return None

    rewrite.rewrite_name = "QDQConvFusion"
    return rewrite


def binary_fusion(*, swap_zero_points=False):
    def rewrite(model):
        g = pr._Graph(model)
        for bn in g.nodes:
            if bn.op_type not in ("Add", "Mul"):
                continue
            aa, ba = _dq_parts(g, bn.input[0]), _dq_parts(g, bn.input[1])
            q = _q_after(g, bn.output[0])
            if aa is None or ba is None or q is None:
                continue
            ins = [aa[1], aa[2], aa[3], ba[1], ba[2], ba[3], q.input[1], q.input[2]]
            new = helper.make_node("QBinary", ins, list(q.output), domain=DOMAIN, op=bn.op_type,
                                   swap=int(swap_zero_points))
            return g.replace([aa[0], ba[0], bn, q], new)
        return None

    rewrite.rewrite_name = "QDQBinaryFusion"
    return rewrite


def pool_fusion():
    def rewrite(model):
        g = pr._Graph(model)
        for pl in g.nodes:
            if pl.op_type not in ("AveragePool", "MaxPool", "GlobalAveragePool"):
                continue
            xa, q = _dq_parts(g, pl.input[0]), _q_after(g, pl.output[0])
            if xa is None or q is None:
                continue
            attrs = {"kind": pl.op_type}
            if pl.op_type != "GlobalAveragePool":
                attrs.update(kernel_shape=list(g.attr(pl, "kernel_shape")), strides=list(g.attr(pl, "strides", [1, 1])),
                             pads=list(g.attr(pl, "pads", [0] * 4)),
                             count_include_pad=int(g.attr(pl, "count_include_pad", 0)))
            new = helper.make_node("QPool", [xa[1], xa[2], xa[3], q.input[1], q.input[2]], list(q.output),
                                   domain=DOMAIN, **attrs)
            return g.replace([xa[0], pl, q], new)
        return None

    rewrite.rewrite_name = "QDQPoolFusion"
    return rewrite


def resize_fusion(*, away=False):
    def rewrite(model):
        g = pr._Graph(model)
        for rs in g.nodes:
            if rs.op_type != "Resize" or len(rs.input) < 3 or rs.input[2] not in g.consts:
                continue
            xa, q = _dq_parts(g, rs.input[0]), _q_after(g, rs.output[0])
            if xa is None or q is None:
                continue
            new = helper.make_node("QResize", [xa[1], xa[2], xa[3], rs.input[2], q.input[1], q.input[2]],
                                   list(q.output), domain=DOMAIN, mode=g.attr(rs, "mode").decode(),
                                   coord=g.attr(rs, "coordinate_transformation_mode").decode(),
                                   nearest_mode=g.attr(rs, "nearest_mode", b"round_prefer_floor").decode(),
                                   away=int(away))
            return g.replace([xa[0], rs, q], new)
        return None

    rewrite.rewrite_name = "QDQResizeFusion"
    return rewrite


def pair_removal(*, any_params=False):
    """``DQ(q, s, z) -> Q(s', z')`` becomes ``Identity(q)`` where ``(s', z') == (s, z)`` (constants)
    and the types agree; ``any_params`` (wrong) removes a requantizing pair as well."""

    def rewrite(model):
        g = pr._Graph(model)
        for q in g.nodes:
            if q.op_type != "QuantizeLinear":
                continue
            dq = _producer(g, q.input[0])
            if dq is None or dq.op_type != "DequantizeLinear":
                continue
            vals = [_const(g, n) for n in (dq.input[1], dq.input[2], q.input[1], q.input[2])]
            if any(v is None for v in vals) or vals[1].dtype != vals[3].dtype:
                continue
            if not any_params and not (np.array_equal(vals[0], vals[2]) and np.array_equal(vals[1], vals[3])):
                continue
            remove = [q] + ([dq] if g.only(dq.output[0], "QuantizeLinear") is q else [])
            return g.replace(remove, helper.make_node("Identity", [dq.input[0]], list(q.output)))
        return None

    rewrite.rewrite_name = "QDQPairRemoval"
    return rewrite


def weight_only_fusion(*, quantize_a=False):
    """``MatMul(X, DQ(W))`` with X not dequantized and W, its scale and zero point constants (per
    tensor or per output column) into QWeightMatMul; ``quantize_a`` (wrong): int8 compute of X."""

    def rewrite(model):
        g = pr._Graph(model)
        for mm in g.nodes:
            if mm.op_type != "MatMul":
                continue
            xp = _producer(g, mm.input[0])
            wa = _dq_parts(g, mm.input[1])
            if (xp is not None and xp.op_type == "DequantizeLinear") or wa is None or wa[1] not in g.consts:
                continue
            if np.asarray(g.consts[wa[2]]).ndim == 1 and wa[4] % 2 != 1:
                continue
            new = helper.make_node("QWeightMatMul", [mm.input[0], wa[1], wa[2], wa[3]], list(mm.output), domain=DOMAIN,
                                   quantize_a=int(quantize_a))
            return g.replace([wa[0], mm], new)
        return None

    rewrite.rewrite_name = "QDQWeightOnlyFusion"
    return rewrite


RIGHT = (pair_removal(), dense_fusion(), conv_fusion(), binary_fusion(), pool_fusion(), resize_fusion(),
         weight_only_fusion())
WRONG = {
    "resize-ties-away": (resize_fusion(away=True),),
    "dense-producer-params": (dense_fusion(producer_params=True),),
    "dense-bias-scale-ignored": (dense_fusion(any_bias_scale=True),),
    "binary-swapped-zero-points": (binary_fusion(swap_zero_points=True),),
    "conv-relu-input-zero-point": (conv_fusion(relu_floor="input"),),
    "pair-removes-requantization": (pair_removal(any_params=True),),
    "weight-only-int8-activations": (weight_only_fusion(quantize_a=True),),
}


class QDQBackend(pr.RewriteBackend):
    """The core's rewrite backend with the QDQ fused kernels."""

    def prepare_at_level(self, model, model_bytes, level, disabled=()):
        model, ops = self.rewritten(model, level, disabled)
        return ReferenceEvaluator(model, new_ops=KERNELS), ops


@lru_cache(maxsize=None)
def _summary(which: str) -> dict:
    rewrites = RIGHT if which == "right" else WRONG[which]
    backend = QDQBackend(rewrites, name=which)
    res = [r.to_json() for r in run_cases(levels.expand(_all(), backend.levels), backend)]
    s = levels.pattern_summary(res, list(backend.levels))
    s["records"] = res
    return s


def test_integer_kernels_pass_every_case_and_fire():
    s = _summary("right")
    assert s["failures"] == [], s["failures"][:3]
    fired = Counter()
    for r in s["records"]:
        if r["level"] != "opt":
            continue
        assert r["outcome"] == "pass", r["id"]
        ops = r["optimized"]["ops"]
        if any(o.startswith(DOMAIN + ":") for o in ops) or (r["tags"]["pattern"] == "QDQ.pairs" and "Identity" in ops):
            fired[r["tags"]["pattern"]] += 1
            # near-misses that are no longer the layer are left alone; a DQ whose parameters differ
            # from the Q feeding it is still a QDQ dense layer (fused with the DQ's parameters)
            assert r["tags"].get("near_miss") in (None, "dq_scale=differs", "dq_zero_point=differs"), r["id"]
        elif not r["tags"].get("near_miss") and r["tags"].get("v_params") != "input":
            raise AssertionError(f"the right fusion did not fire on {r['id']}: {ops}")
    assert set(fired) == set(NAMES) and min(fired.values()) >= 10, fired


RESPONSIBLE = {"resize-ties-away": "QDQResizeFusion", "dense-producer-params": "QDQDenseFusion",
               "dense-bias-scale-ignored": "QDQDenseFusion", "binary-swapped-zero-points": "QDQBinaryFusion",
               "conv-relu-input-zero-point": "QDQConvFusion", "pair-removes-requantization": "QDQPairRemoval",
               "weight-only-int8-activations": "QDQWeightOnlyFusion"}


@pytest.mark.parametrize("which,pattern,culprit", [
    ("resize-ties-away", "QDQ.resize", {"numerics": "ties", "mode": "linear"}),
    ("dense-producer-params", "QDQ.dense", {"near_miss": ("dq_scale=differs", "dq_zero_point=differs")}),
    ("dense-bias-scale-ignored", "QDQ.dense", {"near_miss": ("bias_scale=differs",)}),
    ("binary-swapped-zero-points", "QDQ.binary", {}),
    ("conv-relu-input-zero-point", "QDQ.conv", {"relu": "relu"}),
    ("pair-removes-requantization", "QDQ.pairs", {"near_miss": ("requant=scale", "requant=zero_point")}),
    ("weight-only-int8-activations", "QDQ.weight_only", {}),
])
def test_wrong_rewrites_are_optimizer_failures(which, pattern, culprit):
    s = _summary(which)
    bad = [f for f in s["failures"] if f["pattern"] == pattern]
    assert bad, f"{which}: no case caught"
    recs = {r["id"]: r for r in s["records"]}
    for f in s["failures"]:  # (the 8-bit pattern or its 16-bit form)
        assert f["pattern"] in (pattern, pattern + "16") and f["class"] == "optimizer" and f["levels"] == ["opt"], f
        assert f["outcomes"]["disable"] == "pass" and f["responsible"] == [RESPONSIBLE[which]], f
        for k, val in culprit.items():
            if k == "near_miss":
                assert f.get("near_miss") in val or any(
                    r["tags"].get("near_miss") in val for i, r in recs.items() if levels.base_id(i) == f["id"]), f
            else:
                assert f["variation"][k] == val, f
    nm = {f["near_miss"] for f in bad if f.get("near_miss")}
    if "near_miss" in culprit:  # every near-miss value the rewrite mishandles is caught
        assert nm == set(culprit["near_miss"]), nm
    if which == "resize-ties-away":  # canonical form (linear x2 half_pixel, same parameters): caught at every opset
        assert sum(1 for f in bad if f["variation"].get("numerics") == "ties") >= 4


# ============================================================================ onnxruntime 1.32
def _ort_run(c, level: str) -> np.ndarray:
    import onnxruntime as ort

    so = ort.SessionOptions()
    so.graph_optimization_level = {"disable": ort.GraphOptimizationLevel.ORT_DISABLE_ALL,
                                   "extended": ort.GraphOptimizationLevel.ORT_ENABLE_EXTENDED}[level]
    s = ort.InferenceSession(c.model.SerializeToString(), so, providers=["CPUExecutionProvider"])
    return s.run(None, dict(c.datasets[0].inputs))[0]


def test_onnxruntime_findings_pinned():
    """onnxruntime 1.32's failures on these families (every one an optimizer failure at extended,
    right with optimizations disabled; docs/tolerance.md "Quantized layer patterns"):

    * the QDQ AveragePool / GlobalAveragePool fusion (QDQSelectorActionTransformer ->
      com.microsoft.QLinearAveragePool) rounds ``x / y_scale + y_zero_point`` half to even instead
      of ``round(x / y_scale)`` then ``+ y_zero_point``: exact ties with an odd zero point go the
      other way, every other element is right;
    * the QDQ Gemm fusion (MatMulAddFusion -> Gemm, then QGemm) adds the int32 bias to the
      accumulator whatever its DQ scale, and reads a per-channel weight scale on axis 0 (K) as per
      column."""
    ort = pytest.importorskip("onnxruntime")
    pool = [c for c in _cases("QDQ.pool") if c.outputs[0].elem_type != onnx.TensorProto.FLOAT]
    odd_ties = 0
    for c in pool:
        want = c.datasets[0].outputs[c.outputs[0].name]
        assert np.array_equal(_ort_run(c, "disable"), want), c.id
        if not ort.__version__.startswith("1.32"):
            continue
        env = np_evaluate(c)
        q = [n for n in c.model.graph.node if n.op_type == "QuantizeLinear"][-1]
        v = np.asarray(env[q.input[0]], dtype=np.float64) / float(env[q.input[1]])
        z = env[q.input[2]]
        lo, hi = RANGE[z.dtype]
        got = _ort_run(c, "extended")
        assert np.array_equal(got.astype(np.int64), np.clip(np.rint(v + int(z)), lo, hi)), c.id
        tie = np.abs(v - np.floor(v) - 0.5) == 0
        bad = got != want
        assert not np.any(bad & ~tie) and (not bad.any() or int(z) % 2 == 1), c.id
        odd_ties += int(bad.sum())
    for nm in ("bias_scale=differs", "weight_axis=input-bias"):
        c = next(c for c in _cases("QDQ.dense") if c.tags.get("near_miss") == nm)
        want = c.datasets[0].outputs[c.outputs[0].name]
        assert np.array_equal(_ort_run(c, "disable"), want), c.id
        if ort.__version__.startswith("1.32"):
            assert not np.array_equal(_ort_run(c, "extended"), want), c.id
    if ort.__version__.startswith("1.32"):
        assert odd_ties >= 10


def test_onnxruntime_weight_only_int8_compute_pinned():
    """onnxruntime 1.32 rewrites ``MatMul(X, DQ(int8 W))`` (QDQSelectorActionTransformer, level
    extended) into ``com.microsoft.MatMulNBits`` with ``accuracy_level`` 4 by default (the session
    option ``session.qdq_matmulnbits_accuracy_level``): an int8 computation that quantizes the float
    X, ~1e-2 off where the float32 MatMul's tolerance is ~1e-4.  With the option at 0 the same
    rewrite computes in float32 and passes."""
    ort = pytest.importorskip("onnxruntime")
    cs = [c for c in _cases("QDQ.weight_only") if "canonical" in c.id]
    assert len(cs) == 4
    for c in cs:
        want, tol = c.datasets[0].outputs[c.outputs[0].name], c.outputs[0].tolerance
        bound = tol.atol + tol.rtol * np.abs(want)
        assert np.all(np.abs(_ort_run(c, "disable") - want) <= bound), c.id
        if not ort.__version__.startswith("1.32"):
            continue
        assert np.any(np.abs(_ort_run(c, "extended") - want) > 10 * bound), c.id
        so = ort.SessionOptions()
        so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_EXTENDED
        so.add_session_config_entry("session.qdq_matmulnbits_accuracy_level", "0")
        s = ort.InferenceSession(c.model.SerializeToString(), so, providers=["CPUExecutionProvider"])
        assert np.all(np.abs(s.run(None, dict(c.datasets[0].inputs))[0] - want) <= bound), c.id
