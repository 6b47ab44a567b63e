"""Layer patterns of quantized models in the QDQ format: QuantizeLinear / DequantizeLinear pairs
around a dense layer, a convolution (+ Relu), Add / Mul, pooling and Resize, and Q/DQ pairs that
cancel or requantize.

Forms (what the quantization tools emit: onnxruntime's ``quantize_static`` in QDQ format,
PyTorch's FX / PT2E quantization exported to QDQ, TensorFlow Lite models converted to QDQ):
every float tensor between two layers is written ``Q(x, s, z) -> DQ(., s, z)``; weights are int8
initializers behind a DQ (per tensor, or per output channel with ``axis``); a bias is an int32
initializer behind a DQ with scale ``x_scale * w_scale`` and zero point 0.  onnxruntime's
``QDQSelectorActionTransformer`` (level extended) turns ``DQ, DQ -> MatMul -> Q`` into
``QLinearMatMul`` (or ``MatMulIntegerToFloat``), ``DQ, DQ(, DQ bias) -> Conv -> Q`` into
``QLinearConv`` (dropping a ``Relu`` whose effect the output clamp holds), ``DQ, DQ -> Add/Mul ->
Q`` into ``com.microsoft.QLinearAdd/QLinearMul``, ``DQ -> AveragePool/GlobalAveragePool -> Q``
into ``com.microsoft.QLinearAveragePool/QLinearGlobalAveragePool``, and drops the DQ/Q pair
around MaxPool and Resize when their scale and zero point are the same (the op then runs on the
integers).

Patterns (``QDQ.<layer>``) and their variation axes (the rewrites' preconditions):

* ``QDQ.dense``: ``DQ(x), DQ(W) -> MatMul (-> Add DQ(int32 bias)) -> Q (-> DQ)``; activation type
  uint8/int8, symmetric / asymmetric zero points, per-tensor / per-channel weight scales, bias
  present / absent, the activation given quantized or as ``float -> Q -> DQ``, parameters as
  initializers / Constant nodes / graph inputs, an output Q with or without the DQ after it.
  Near-misses: the DQ's scale or zero point differs from the Q that feeds it (a fusion that takes
  the producer's parameters is wrong), the weight's per-channel axis not the output channel (no
  bias), the int32 bias' scale not ``x_scale * w_scale`` (a fusion adding the integers to the
  accumulator is wrong).
* ``QDQ.conv``: ``DQ(x), DQ(W per output channel), DQ(bias) -> Conv (-> Relu) -> Q``; kernel
  3x3 / 1x1, pads, depthwise groups.  Near-miss: per-channel weight scales on the input-channel
  axis (no bias).  Relu before Q: a fused kernel folds it into the clamp
  ``max(q, y_zero_point)``; asymmetric output zero points inside the range make that fold's
  zero point matter; an output zero point at the type's minimum (``y_zero_point=type-min``) is
  where onnxruntime's ``ReluQuantFusion`` removes the Relu.
* ``QDQ.binary``: ``DQ(a), DQ(b) -> Add / Mul -> Q`` with three different scales and zero
  points, broadcasting.  Near-miss: one operand a float tensor (not dequantized).
* ``QDQ.pool``: ``DQ -> AveragePool / MaxPool / GlobalAveragePool -> Q`` with the same or other
  output parameters.
* ``QDQ.resize``: ``DQ -> Resize (nearest / linear) -> Q``.  Linear x2 with half_pixel has
  weights 1/4 and 3/4: quotients ``k + 1/2`` are exact ties in every precision, which the text
  rounds half to even; a quantized Resize rounding them away from zero is wrong.
* ``QDQ.pairs``: ``Q(s, z) -> DQ(s, z) -> Q(s, z)``: the DQ -> Q pair cancels (the result is the
  first Q's).  Near-misses: the second Q with another scale or zero point (a requantization
  that must not be removed).
* ``QDQ.dense16``, ``QDQ.conv16``, ``QDQ.binary16``, ``QDQ.pool16``: the same graphs with uint16 /
  int16 activations and int8 weights (onnxruntime's A16W8), at the exporter opsets from 21
  (QuantizeLinear/DequantizeLinear-21 take 16-bit types): a runtime without a 16-bit QLinear
  kernel must leave them alone or compute them exactly.
* ``QDQ.weight_only``: ``X (float) -> MatMul(X, DQ(int8 / uint8 W)) (-> Add B)``, weight-only
  quantization: a float output with MatMul's derived tolerance (no QuantizeLinear); a rewrite
  computing X in int8 changes the values.

Expected values: the operator table's oracles composed (``core.evaluate``), QuantizeLinear
exactly (rational division, ties to even, saturation).  Every quantized output compares exactly.
Legitimate variants that may differ from the exact composition before a Q -- the unfused float
chain in float32 in any accumulation order, an integer kernel with an exact int32 accumulator and
a float32 requantization multiplier -- are kept out of the data, not granted a tolerance: the
builders draw the data again until every QuantizeLinear of the graph gives the same integers in
every variant of ``core.chain_variants`` (each float node moved by its own single-node tolerance,
which bounds float32 accumulation) and under a float32 multiplier ``fl32(fl32(s_x s_w) / s_y)``
with a relative margin of ``2^-18`` (:func:`_robust`); the ``ties`` numerics class instead makes
every scale a power of two and every value a small integer multiple of it, so every legitimate
computation is exact and the text's ties-to-even decides the exact ties it holds
(docs/tolerance.md "Quantized layer patterns").
"""

from __future__ import annotations

import dataclasses
import math

import numpy as np
import onnx

from ..ops.schedule import EXPORTER_OPSETS
from . import core
from .core import Builder, Pattern, register_patterns

FAMILY = "qdq"
U8, I8, I32 = onnx.TensorProto.UINT8, onnx.TensorProto.INT8, onnx.TensorProto.INT32
U16, I16 = onnx.TensorProto.UINT16, onnx.TensorProto.INT16
_RANGE = {U8: (0, 255), I8: (-128, 127), U16: (0, 65535), I16: (-32768, 32767)}
_QTYPES = {"uint8": U8, "int8": I8, "uint16": U16, "int16": I16}
#: Activation types of 16 bits (QuantizeLinear/DequantizeLinear from opset 21; onnxruntime's
#: quantize_static "A16W8": 16-bit activations, int8 weights): values spread ~50x wider.
WIDE = (U16, I16)
#: Relative margin (of the float32 multiplier / float32 chain) an element's requantized value must
#: keep from a ``.5`` boundary beyond what the chain variants already check: ~4 float32 ulps of
#: the multiplier and the product, times 16.
MARGIN = 2.0 ** -18
#: Attempts at drawing a robust case before giving up (a builder bug, never reached at seed 0).
TRIES = 40
#: Quantization tools emit float32 scales; Q/DQ before opset 19 take nothing else.
TYPES = ("float",)
_NOTE_TYPES = ("float only: QuantizeLinear/DequantizeLinear before opset 19 take float32 scales "
               "only, and the quantization tools (quantize_static, PT2E, TFLite) emit float32 scales")


# ----------------------------------------------------------------------------- quantization helpers
def _qtype(b: Builder) -> int:
    return _QTYPES[b.v.get("activation", "uint8")]


def _scale(b: Builder, lo_exp: int = -6, hi_exp: int = -3) -> float:
    """A scale: a power of two (``ties`` class) or 4 significant bits (``m / 8 * 2^e``, m in 9..15
    odd or even: 0.5625 .. 0.9375 times a power of two), exact in float32 and float16."""
    e = int(b.rng.integers(lo_exp, hi_exp + 1))
    if b.v.get("numerics") == "ties":
        return float(2.0 ** e)
    return float(int(b.rng.integers(9, 16)) / 16.0 * 2.0 ** e)


def _zero_point(b: Builder, qt: int) -> int:
    """Symmetric: 0 (int8) / 128 (uint8); asymmetric: drawn inside the range, away from its ends
    (odd and even values: ties to even on ``round(v) + z`` and ``round(v + z)`` differ for odd z)."""
    lo, hi = _RANGE[qt]
    if b.v.get("zero_point", "asymmetric") == "symmetric":
        return 0 if lo < 0 else (hi + 1) // 2
    mid = (lo + hi + 1) // 2
    return int(mid + (b.rng.integers(-2000, 2001) if qt in WIDE else b.rng.integers(-40, 41)))


def _ties(b: Builder) -> bool:
    return b.v.get("numerics") == "ties"


def _qvalues(b: Builder, shape, qt: int, z: int, wide: bool = False) -> np.ndarray:
    """Quantized values around the zero point (object array of Python ints); the ``ties`` class
    keeps them within 3 of it (small products: the output scale can be 2 or 4 times the product of
    the input scales, every pre-Q value a multiple of 1/2 or 1/4 quantum)."""
    lo, hi = _RANGE[qt]
    spread = 3 if _ties(b) and not wide else (3000 if qt in WIDE else 60)
    v = np.clip(z + b.rng.integers(-spread, spread + 1, size=tuple(shape)), lo, hi)
    return np.asarray(v.astype(np.int64), dtype=object)


def _dq(b: Builder, x: str, s: str, z: str | None, axis: int | None = None) -> str:
    attrs = {} if axis is None else {"axis": int(axis)}
    return b.node("DequantizeLinear", (x, s) + ((z,) if z else ()), out_type=onnx.TensorProto.FLOAT, **attrs)


def _q(b: Builder, x: str, s: str, z: str, qt: int, axis: int | None = None) -> str:
    attrs = {} if axis is None else {"axis": int(axis)}
    return b.node("QuantizeLinear", (x, s, z), out_type=qt, **attrs)


def _scalar(b: Builder, name: str, value, elem) -> str:
    """A scale or zero point: a parameter (``params`` axis) of shape [] (exporters' form)."""
    return b.param(name, np.array(value, dtype=np.float64 if elem == onnx.TensorProto.FLOAT else object), elem)


def _activation(b: Builder, name: str, shape, qt: int, s: float, z: int, wide: bool = False) -> tuple[str, float]:
    """The dequantized activation ``name``: a quantized graph input behind a DQ, or (``input`` axis
    ``float-q``) a float graph input quantized by a Q and dequantized by a DQ whose scale and zero
    point differ where a near-miss says so (``dq_scale`` / ``dq_zero_point``).  ``wide``: values
    spread over the range in the ``ties`` class too (where the ties come from averaging).
    Returns the DQ output and the DQ's scale."""
    sn = _scalar(b, f"{name}_scale", s, onnx.TensorProto.FLOAT)
    zn = _scalar(b, f"{name}_zero_point", z, qt)
    near = b.v.get("dq_scale", "same") != "same" or b.v.get("dq_zero_point", "same") != "same"
    if b.v.get("input", "quantized") == "quantized" and not near:
        xq = b.input(name, _qvalues(b, shape, qt, z, wide), qt)
        return _dq(b, xq, sn, zn), s
    lo, hi = _RANGE[qt]
    ties = _ties(b)
    sp = 3 if ties and not wide else (3500 if qt in WIDE else 70)
    k = np.clip(z + b.rng.integers(-sp, sp + 1, size=tuple(shape)), lo - 2, hi + 2) - z  # a few beyond: saturate
    d = b.rng.choice((-0.5, 0.5, 0.25, -0.25) if ties else (-0.375, -0.25, -0.125, 0.125, 0.25, 0.375, 0.0),
                     size=tuple(shape))
    if not ties:  # a few beyond the range: saturation
        sel = b.rng.random(tuple(shape)) < 0.1
        edge = np.where(b.rng.random(tuple(shape)) < 0.5, lo - 2, hi + 2) - z
        k = np.where(sel, edge, k)
    xf = b.input(name, (k + d) * s)  # exact: at most 10 + 3 significant bits times a 4-bit scale
    xq = _q(b, xf, sn, zn, qt)
    s2, z2 = s, z
    if b.v.get("dq_scale", "same") == "differs":
        s2 = s * (1.5 if b.v.get("numerics") != "ties" else 2.0)
    if b.v.get("dq_zero_point", "same") == "differs":
        z2 = z + 3 if z + 3 <= hi else z - 3
    if (s2, z2) != (s, z):
        sn = _scalar(b, f"{name}_dq_scale", s2, onnx.TensorProto.FLOAT)
        zn = _scalar(b, f"{name}_dq_zero_point", z2, qt)
    return _dq(b, xq, sn, zn), s2


def _fit_scale(b: Builder, y: str, qt: int, ties_scale: float | None = None) -> float:
    """The output scale of ``y``: in the ``ties`` class ``ties_scale`` (a power of two a small
    multiple of the input quanta); else a 4-bit value putting the largest ``|y|`` of the exact
    composition so far ~100 quanta from the zero point (with an asymmetric zero point a few
    saturate)."""
    if _ties(b) and ties_scale is not None:
        return float(ties_scale)
    graph, built = _graph(b)
    env = core.evaluate(graph, built.feeds)
    yv = np.abs(np.asarray(env[y], dtype=np.float64))
    return _out_scale(b, float(yv.max()) if yv.size else 1.0, qt)


def _output(b: Builder, y: str, qt: int, s: float, z: int) -> None:
    """``Q(y, s, z)`` and, on the ``tail`` axis ``dq`` (not for the ``ties`` class, whose output is
    the integers), the DQ after it as the graph output."""
    sn = _scalar(b, "y_scale", s, onnx.TensorProto.FLOAT)
    zn = _scalar(b, "y_zero_point", z, qt)
    q = _q(b, y, sn, zn, qt)
    if b.v.get("tail", "dq") == "dq" and b.v.get("numerics") != "ties":
        b.output(_dq(b, q, sn, zn))
    else:
        b.output(q)


# ----------------------------------------------------------------------------- robustness
def _graph(tmp: Builder) -> tuple[core.PatternGraph, core.Built]:
    built = tmp.built()
    return core.PatternGraph("probe", tuple(built.nodes), {"": tmp.opset}, dict(built.types)), built


def _robust(tmp: Builder) -> bool:
    """Whether every QuantizeLinear of the graph gives the same integers in every legitimate
    variant (module docstring).  Per QuantizeLinear node and element, with ``v = x / s`` the exact
    quotient of the composition:

    * an exact tie (``v = k + 1/2``) must be one in the float32 chain too (the core's ``rounded``
      variant gives the same ``x``): every legitimate computation is then exact and the text's
      ties-to-even decides it (only the ``ties`` class draws them; elsewhere a tie is redrawn);
    * any other element must keep ``MARGIN |v| + 2^-23`` from ``k + 1/2`` (a float32 multiplier
      or division), and give the same integer in every chain variant of the core (each float node
      rounded to float32, or moved by its own single-node tolerance in four sign patterns)."""
    graph, built = _graph(tmp)
    runs: list[core.NodeRun] = []
    env = core.evaluate(graph, built.feeds, record=runs, tolerances=True)
    qs = [n for n in graph.nodes if n.op == "QuantizeLinear"]
    names = [n.outputs[0] for n in qs] + [n.inputs[0] for n in qs]
    variants = core.chain_variants(graph, built.feeds, names, runs, seed=0)
    ties_ok = tmp.v.get("numerics") == "ties"
    for n in qs:
        x = np.asarray(env[n.inputs[0]], dtype=np.float64)
        s = float(np.asarray(env[n.inputs[1]], dtype=np.float64))
        with np.errstate(all="ignore"):
            v = x / s
        frac = np.abs(v - np.floor(v) - 0.5)
        tie = frac == 0.0
        if tie.any():
            if not ties_ok:
                return False
            x32 = np.asarray(variants["rounded"][n.inputs[0]], dtype=np.float64)
            if not np.array_equal(x32[tie], x[tie]):
                return False
        if np.any((frac <= MARGIN * np.abs(v) + 2.0 ** -23) & ~tie):
            return False
        want = np.asarray(env[n.outputs[0]]).astype(np.int64)
        for vals in variants.values():
            got = np.asarray(vals[n.outputs[0]]).astype(np.int64)
            if not np.array_equal(got[~tie], want[~tie]):
                return False
    return True


def robust_build(fn):
    """Wrap a builder ``fn(b)``: draw on a scratch builder until :func:`_robust`, then keep it.

    Raises:
        RuntimeError: no robust draw in :data:`TRIES` attempts."""

    def build(b: Builder) -> None:
        for _ in range(TRIES):
            tmp = Builder(b.v, b.t, b.opset, b.rng)
            fn(tmp)
            if _robust(tmp):
                b.__dict__.update({k: v for k, v in tmp.__dict__.items() if k != "rng"})
                return
        raise RuntimeError(f"no robust quantized draw in {TRIES} tries for {b.v}")

    build.__doc__ = fn.__doc__
    build.__name__ = fn.__name__
    return build


def _out_scale(b: Builder, y_abs_max: float, qt: int) -> float:
    """An output scale putting ``y_abs_max`` near the edge of the type's range (a few saturate)."""
    target = max(y_abs_max, 1e-3) / (1000.0 if qt in WIDE else 100.0)
    e = math.floor(math.log2(target))
    if b.v.get("numerics") == "ties":
        return float(2.0 ** e)
    return float(int(b.rng.integers(9, 16)) / 8.0 * 2.0 ** e)


# ----------------------------------------------------------------------------- dense
def _build_dense(b: Builder) -> None:
    """DQ(x), DQ(W) -> MatMul (-> Add DQ(bias)) -> Q (-> DQ)."""
    r, qt = b.rng, _qtype(b)
    m, k, n = int(r.integers(1, 5)), int(r.integers(2, 17)), int(r.integers(1, 9))
    if _ties(b):  # enough elements for ties below odd and even integers
        m, n = max(m, 3), max(n, 4)
    shape = b.v.get("shape", "MKN")
    if shape == "M1":
        m = 1
    elif shape == "zero-M":
        m = 0
    axis_nm = b.v.get("weight_axis", "output") in ("input", "input-bias")
    if axis_nm:
        n = k  # a square W: a fusion taking the [K] scale per output column gives wrong values, no error
    sx, zx = _scale(b), _zero_point(b, qt)
    x, sx = _activation(b, "X", (m, k), qt, sx, zx)
    per_channel = b.v.get("weight_scale", "per-channel") == "per-channel" or axis_nm
    wz_sym = b.v.get("zero_point", "asymmetric") == "symmetric" or per_channel
    nsc = (k if axis_nm else n) if per_channel else None
    sw = np.array([_scale(b, -7, -5) for _ in range(nsc)]) if nsc else np.array(_scale(b, -7, -5))
    zw = np.zeros(np.shape(sw), dtype=np.int64) if wz_sym else np.array(int(r.integers(-4, 5)))
    ws = 3 if _ties(b) else 100
    wq = np.clip(zw.reshape(-1, 1) if axis_nm else zw, -128, 127) + r.integers(-ws, ws + 1, size=(k, n))
    wq = np.asarray(np.clip(wq, -128, 127).astype(np.int64), dtype=object)
    w = b.param("W", wq, I8)
    wsn = b.param("W_scale", sw, onnx.TensorProto.FLOAT)
    wzn = b.param("W_zero_point", np.asarray(zw, dtype=object), I8)
    wd = _dq(b, w, wsn, wzn, axis=(0 if axis_nm else 1) if per_channel else None)
    y = b.node("MatMul", (x, wd))
    # axis 0: a bias has no scale of its own; input-bias gives it x_scale * w_scale[j] per column j
    # (what a fusion reading the [K] scales per column assumes), so only the axis is wrong
    if (b.v.get("bias", "present") == "present" and not axis_nm) or b.v.get("weight_axis") == "input-bias":
        bs = sx * sw * (1.25 if b.v.get("bias_scale", "product") == "differs" else 1.0)
        bl = 8 if _ties(b) else 2000
        bq = np.asarray(r.integers(-bl, bl + 1, size=(n,)).astype(np.int64), dtype=object)
        bn = b.param("bias", bq, I32)
        bsn = b.param("bias_scale", bs, onnx.TensorProto.FLOAT)
        bzn = b.param("bias_zero_point", np.zeros(np.shape(bs), dtype=object), I32)
        bd = _dq(b, bn, bsn, bzn, axis=0 if np.ndim(bs) else None)
        y = b.node("Add", (y, bd))
    _output(b, y, qt, _fit_scale(b, y, qt, 2.0 * float(np.min(sw)) * sx), _zero_point(b, qt))


DENSE = Pattern(
    "QDQ.dense", FAMILY, "Dense (quantized)",
    "onnxruntime quantize_static (QDQ) / PT2E / TFLite: DQ(x), DQ(W) -> MatMul -> Add DQ(int32 bias) -> Q -> DQ",
    robust_build(_build_dense),
    axes={"activation": ("uint8", "int8"), "zero_point": ("asymmetric", "symmetric"),
          "weight_scale": ("per-channel", "per-tensor"), "bias": ("present", "absent"),
          "input": ("quantized", "float-q"), "params": ("initializer", "constant", "input"),
          "tail": ("dq", "q"), "numerics": ("random", "ties"), "shape": ("MKN", "M1", "zero-M")},
    near_misses={"dq_scale": ("differs",), "dq_zero_point": ("differs",), "weight_axis": ("input", "input-bias"),
                 "bias_scale": ("differs",)},
    types=TYPES, opsets=EXPORTER_OPSETS,
    targets={"onnxruntime": ("QLinearMatMul", "com.microsoft:MatMulIntegerToFloat", "MatMulInteger",
                             "com.microsoft:QGemm")},
    notes=_NOTE_TYPES + ". Near-misses: dq_scale / dq_zero_point (drawn with input=float-q: the DQ's parameters "
          "differ from the Q feeding it; the bias scale follows the DQ's), weight_axis=input (per-channel "
          "scales along K of a square W, no bias; input-bias: with a bias of scale x_scale w_scale[j]), "
          "bias_scale=differs (the int32 bias' scale is 1.25 x_scale w_scale: "
          "a fusion adding the int32 bias to the accumulator is wrong)",
)


# ----------------------------------------------------------------------------- conv
def _build_conv(b: Builder) -> None:
    """DQ(x), DQ(W), DQ(bias) -> Conv (-> Relu) -> Q (-> DQ)."""
    r, qt = b.rng, _qtype(b)
    c = int(r.integers(1, 4))
    dw = b.v.get("group", "1") == "depthwise"
    mch = c * int(r.integers(1, 3)) if dw else int(r.integers(1, 5))
    g = c if dw else 1
    kk = int(b.v.get("kernel", 3))
    h, w_ = int(r.integers(kk, kk + 4)), int(r.integers(kk, kk + 4))
    nb = 0 if b.v.get("shape") == "zero-batch" else int(r.integers(1, 3))
    sx, zx = _scale(b), _zero_point(b, qt)
    x, sx = _activation(b, "X", (nb, c, h, w_), qt, sx, zx)
    axis_nm = b.v.get("weight_axis", "output") == "input"
    if axis_nm:
        g, mch = 1, int(r.integers(2, 4))
    nsc = (c // g if axis_nm else mch) if b.v.get("weight_scale", "per-channel") == "per-channel" or axis_nm else None
    sw = np.array([_scale(b, -7, -5) for _ in range(nsc)]) if nsc else np.array(_scale(b, -7, -5))
    ws = 3 if _ties(b) else 100
    wq = np.asarray(r.integers(-ws, ws + 1, size=(mch, c // g, kk, kk)).astype(np.int64), dtype=object)
    wn = b.param("W", wq, I8)
    wsn = b.param("W_scale", sw, onnx.TensorProto.FLOAT)
    wzn = b.param("W_zero_point", np.zeros(np.shape(sw), dtype=object), I8)
    wd = _dq(b, wn, wsn, wzn, axis=(1 if axis_nm else 0) if nsc else None)
    ins = [x, wd]
    if b.v.get("bias", "present") == "present" and not axis_nm:  # (axis 1: a bias scale has no meaning)
        bs = sx * sw
        bl = 8 if _ties(b) else 3000
        bq = np.asarray(r.integers(-bl, bl + 1, size=(mch,)).astype(np.int64), dtype=object)
        bd = _dq(b, b.param("bias", bq, I32), b.param("bias_scale", bs, onnx.TensorProto.FLOAT),
                 b.param("bias_zero_point", np.zeros(np.shape(bs), dtype=object), I32), axis=0 if np.ndim(bs) else None)
        ins.append(bd)
    pads = [kk // 2] * 4 if b.v.get("pads", "same") == "same" else [0] * 4
    y = b.node("Conv", tuple(ins), kernel_shape=[kk, kk], pads=pads, group=g)
    if b.v.get("relu", "relu") == "relu":
        y = b.node("Relu", (y,))
    zy = _RANGE[qt][0] if b.v.get("y_zero_point", "drawn") == "type-min" else _zero_point(b, qt)
    _output(b, y, qt, _fit_scale(b, y, qt, 2.0 * float(np.min(sw)) * sx), zy)


CONV = Pattern(
    "QDQ.conv", FAMILY, "Conv2D (quantized)",
    "onnxruntime quantize_static (QDQ) / PT2E / TFLite: DQ(x), DQ(W per channel), DQ(int32 bias) -> Conv -> Relu -> Q",
    robust_build(_build_conv),
    axes={"relu": ("relu", "none"), "y_zero_point": ("drawn", "type-min"), "activation": ("uint8", "int8"),
          "zero_point": ("asymmetric", "symmetric"),
          "weight_scale": ("per-channel", "per-tensor"), "bias": ("present", "absent"), "kernel": (3, 1),
          "pads": ("same", "valid"), "group": ("1", "depthwise"), "input": ("quantized", "float-q"),
          "params": ("initializer", "constant"), "tail": ("dq", "q"), "numerics": ("random", "ties"),
          "shape": ("NCHW", "zero-batch")},
    near_misses={"weight_axis": ("input",)},
    types=TYPES, opsets=EXPORTER_OPSETS,
    targets={"onnxruntime": ("QLinearConv", "com.microsoft:QLinearConv")},
    notes=_NOTE_TYPES,
)


# ----------------------------------------------------------------------------- binary
def _build_binary(b: Builder) -> None:
    """DQ(a), DQ(b) -> Add / Mul -> Q (-> DQ)."""
    r, qt = b.rng, _qtype(b)
    op = b.v.get("op", "Add")
    shp = (int(r.integers(1, 4)), int(r.integers(1, 6)))
    bshape = {"same": shp, "row": (shp[1],), "scalar": ()}[b.v.get("broadcast", "same")]
    sa, za = _scale(b, -5, -3), _zero_point(b, qt)
    a, sa = _activation(b, "A", shp, qt, sa, za)
    if b.v.get("b_form", "dequantized") == "float":  # near-miss: B is no dequantized tensor
        bv = b.data(bshape, scale=0.2)
        bb = b.param("B", np.round(bv * 64) / 64)
    else:
        same = b.v.get("scales", "different") == "same"
        sb = sa if same else _scale(b, -5, -3)
        zb = za if same else _zero_point(b, qt)
        sbn = _scalar(b, "B_scale", sb, onnx.TensorProto.FLOAT)
        zbn = _scalar(b, "B_zero_point", zb, qt)
        bq = b.input("B", _qvalues(b, bshape, qt, zb), qt) if b.v.get("b_const", "input") == "input" else \
            b.param("B", _qvalues(b, bshape, qt, zb), qt)
        bb = _dq(b, bq, sbn, zbn)
    ins = (bb, a) if b.v.get("order", "ab") == "ba" else (a, bb)
    y = b.node(op, ins)
    sb_ = sa if b.v.get("b_form", "dequantized") == "float" else sb
    ties_scale = 2.0 * (min(sa, sb_) if op == "Add" else sa * sb_)
    _output(b, y, qt, _fit_scale(b, y, qt, ties_scale), _zero_point(b, qt))


BINARY = Pattern(
    "QDQ.binary", FAMILY, "Add / Multiply (quantized)",
    "onnxruntime quantize_static (QDQ) / PT2E / TFLite: DQ(a), DQ(b) -> Add / Mul -> Q -> DQ",
    robust_build(_build_binary),
    axes={"op": ("Add", "Mul"), "activation": ("uint8", "int8"), "zero_point": ("asymmetric", "symmetric"),
          "scales": ("different", "same"), "broadcast": ("same", "row", "scalar"), "order": ("ab", "ba"),
          "b_const": ("input", "initializer"), "input": ("quantized", "float-q"),
          "params": ("initializer", "constant", "input"), "tail": ("dq", "q"), "numerics": ("random", "ties")},
    near_misses={"b_form": ("float",)},
    types=TYPES, opsets=EXPORTER_OPSETS,
    targets={"onnxruntime": ("com.microsoft:QLinearAdd", "com.microsoft:QLinearMul")},
    notes=_NOTE_TYPES,
)


# ----------------------------------------------------------------------------- pool
def _build_pool(b: Builder) -> None:
    """DQ -> AveragePool / MaxPool / GlobalAveragePool -> Q (-> DQ)."""
    r, qt = b.rng, _qtype(b)
    pool = b.v.get("pool", "AveragePool")
    nb = 0 if b.v.get("shape") == "zero-batch" else int(r.integers(1, 3))
    c, h, w_ = int(r.integers(1, 4)), int(r.integers(2, 7)), int(r.integers(2, 7))
    if b.v.get("numerics") == "ties" and pool == "GlobalAveragePool":  # a power-of-two plane: exact means
        h, w_ = (int(r.choice((1, 2, 4))) for _ in range(2))
    sx, zx = _scale(b), _zero_point(b, qt)
    x, sx = _activation(b, "X", (nb, c, h, w_), qt, sx, zx, wide=True)
    attrs = {}
    if pool != "GlobalAveragePool":
        attrs = {"kernel_shape": [2, 2], "strides": [int(b.v.get("strides", 2))] * 2}
        if b.v.get("pads", "none") == "one":
            attrs["pads"] = [0, 0, 1, 1]
            if pool == "AveragePool":
                attrs["count_include_pad"] = int(b.v.get("count_include_pad", 0))
    y = b.node(pool, (x,), **attrs)
    if b.v.get("requant", "same") == "same":
        sy, zy = sx, zx
    else:
        sy, zy = _fit_scale(b, y, qt, 2.0 * sx), _zero_point(b, qt)
    _output(b, y, qt, sy, zy)


POOL = Pattern(
    "QDQ.pool", FAMILY, "Pooling (quantized)",
    "onnxruntime quantize_static (QDQ) / PT2E / TFLite: DQ -> AveragePool / MaxPool / GlobalAveragePool -> Q -> DQ",
    robust_build(_build_pool),
    axes={"pool": ("AveragePool", "MaxPool", "GlobalAveragePool"), "requant": ("same", "different"),
          "activation": ("uint8", "int8"), "zero_point": ("asymmetric", "symmetric"), "pads": ("none", "one"),
          "count_include_pad": (0, 1), "strides": (2, 1), "input": ("quantized", "float-q"),
          "params": ("initializer", "constant"), "tail": ("q", "dq"), "numerics": ("ties", "random"),
          "shape": ("NCHW", "zero-batch")},
    types=TYPES, opsets=EXPORTER_OPSETS,
    targets={"onnxruntime": ("com.microsoft:QLinearAveragePool", "com.microsoft:QLinearGlobalAveragePool",
                             "!DequantizeLinear")},
    notes=_NOTE_TYPES + ". Canonical: the ties class (a 2x2 mean of quanta is a quarter: exact ties)",
)


# ----------------------------------------------------------------------------- resize
def _build_resize(b: Builder) -> None:
    """DQ -> Resize -> Q: the output is the integers (linear x2 holds exact ties)."""
    r, qt = b.rng, _qtype(b)
    nb, c = int(r.integers(1, 3)), int(r.integers(1, 3))
    h, w_ = int(r.integers(1, 5)), int(r.integers(2, 5))
    sx, zx = _scale(b), _zero_point(b, qt)
    x, sx = _activation(b, "X", (nb, c, h, w_), qt, sx, zx, wide=True)
    mode = b.v.get("mode", "linear")
    f = float(b.v.get("scale", 2.0))
    scales = b.const("scales", np.array([1.0, 1.0, f, f]), onnx.TensorProto.FLOAT)
    attrs = {"mode": mode, "coordinate_transformation_mode": b.v.get("coordinate", "half_pixel")}
    if mode == "nearest":
        attrs["nearest_mode"] = b.v.get("nearest_mode", "round_prefer_floor")
    y = b.node("Resize", (x, "", scales), **attrs)
    if b.v.get("requant", "same") == "same":
        sy, zy = sx, zx
    else:
        sy, zy = _fit_scale(b, y, qt, 2.0 * sx), _zero_point(b, qt)
    sn = _scalar(b, "y_scale", sy, onnx.TensorProto.FLOAT)
    zn = _scalar(b, "y_zero_point", zy, qt)
    b.output(_q(b, y, sn, zn, qt))


RESIZE = Pattern(
    "QDQ.resize", FAMILY, "UpSampling2D (quantized)",
    "onnxruntime quantize_static (QDQ) / PT2E / TFLite: DQ -> Resize (nearest / bilinear) -> Q",
    robust_build(_build_resize),
    axes={"mode": ("linear", "nearest"), "requant": ("same", "different"), "activation": ("uint8", "int8"),
          "zero_point": ("asymmetric", "symmetric"), "coordinate": ("half_pixel", "asymmetric", "align_corners"),
          "scale": (2.0, 4.0), "input": ("quantized", "float-q"), "params": ("initializer", "constant"),
          "numerics": ("ties", "random")},
    types=TYPES, opsets=EXPORTER_OPSETS,
    targets={"onnxruntime": ("!DequantizeLinear",)},
    notes=_NOTE_TYPES + ". Canonical: linear x2 half_pixel, same parameters: the interpolation weights "
          "1/4, 3/4 make exact ties (k + 1/2 quanta) that round half to even; the output is the integers",
)


# ----------------------------------------------------------------------------- pairs
def _build_pairs(b: Builder) -> None:
    """Q(s1, z1) -> DQ(s1, z1) -> Q(s2, z2): cancelling when (s2, z2) == (s1, z1)."""
    r, qt = b.rng, _qtype(b)
    shp = (int(r.integers(1, 4)), int(r.integers(4, 9)))
    if b.v.get("shape") == "empty":
        shp = (0, shp[1])
    s, z = _scale(b), _zero_point(b, qt)
    xd, s = _activation(b, "X", shp, qt, s, z, wide=True)
    s2, z2 = s, z
    req = b.v.get("requant", "none")
    if req == "scale":
        s2 = s * 2.0 if b.v.get("numerics") == "ties" else s * 1.25
    elif req == "zero_point":
        z2 = z - 5 if z - 5 >= _RANGE[qt][0] else z + 5
    sn = _scalar(b, "X2_scale", s2, onnx.TensorProto.FLOAT)
    zn = _scalar(b, "X2_zero_point", z2, qt)
    q2 = _q(b, xd, sn, zn, qt)
    if b.v.get("tail", "q") == "dq" and b.v.get("numerics") != "ties":
        b.output(_dq(b, q2, sn, zn))
    else:
        b.output(q2)
    if b.v.get("expose", "none") == "dq":  # the dequantized value also leaves the graph
        b.output(xd)


PAIRS = Pattern(
    "QDQ.pairs", FAMILY, "Quantize / dequantize pairs",
    "quantize_static (QDQ) between layers: Q -> DQ -> Q with the same parameters (cancels) or others (requantizes)",
    robust_build(_build_pairs),
    axes={"activation": ("uint8", "int8"), "zero_point": ("asymmetric", "symmetric"),
          "input": ("float-q", "quantized"), "params": ("initializer", "constant", "input"), "tail": ("q", "dq"),
          "expose": ("none", "dq"), "numerics": ("random", "ties"), "shape": ("NC", "empty")},
    near_misses={"requant": ("scale", "zero_point")},
    types=TYPES, opsets=EXPORTER_OPSETS,
    targets={"onnxruntime": ("!DequantizeLinear",)},
    notes=_NOTE_TYPES + ". requant near-misses: the DQ -> Q pair requantizes and must stay",
)

# ----------------------------------------------------------------------------- weight-only
def _build_weight_only(b: Builder) -> None:
    """X (float) -> MatMul(X, DQ(W int8)) (-> Add B float): weight-only quantization."""
    r = b.rng
    m, k, n = int(r.integers(1, 5)), int(r.integers(2, 40)), int(r.integers(1, 9))
    if b.v.get("shape") == "zero-M":
        m = 0
    elif b.v.get("shape") == "M1":
        m = 1
    x = b.input("X", b.data((m, k)))
    per_channel = b.v.get("weight_scale", "per-channel") == "per-channel"
    sw = np.array([_scale(b, -8, -6) for _ in range(n)]) if per_channel else np.array(_scale(b, -8, -6))
    sym = b.v.get("zero_point", "symmetric") == "symmetric"
    qt = I8 if b.v.get("weight_type", "int8") == "int8" else U8
    base = 0 if qt == I8 else 128
    zw = np.full(np.shape(sw), base if sym else base + int(r.integers(-20, 21)), dtype=np.int64)
    lo, hi = _RANGE[qt]
    wq = np.asarray(np.clip(zw + r.integers(-120, 121, size=(k, n)), lo, hi).astype(np.int64), dtype=object)
    wd = _dq(b, b.param("W", wq, qt), b.param("W_scale", sw, onnx.TensorProto.FLOAT),
             b.param("W_zero_point", np.asarray(zw, dtype=object), qt), axis=1 if per_channel else None)
    y = b.node("MatMul", (x, wd))
    if b.v.get("bias", "present") == "present":
        y = b.node("Add", (y, b.param("B", b.data((n,), scale=0.5))))
    b.output(y)


WEIGHT_ONLY = Pattern(
    "QDQ.weight_only", FAMILY, "Dense (weight-only int8)",
    "quantize_static / torch int8 weight-only quantization: X float -> MatMul(X, DQ(int8 W)) -> Add bias",
    robust_build(_build_weight_only),
    axes={"weight_scale": ("per-channel", "per-tensor"), "zero_point": ("symmetric", "asymmetric"),
          "weight_type": ("int8", "uint8"), "bias": ("present", "absent"), "params": ("initializer", "constant"),
          "shape": ("MKN", "M1", "zero-M")},
    types=TYPES, opsets=EXPORTER_OPSETS,
    targets={"onnxruntime": ("com.microsoft:MatMulNBits", "com.microsoft:MatMulIntegerToFloat")},
    notes=_NOTE_TYPES + ". The output is float (MatMul's accumulation tolerance): a rewrite that quantizes "
          "the float activation (an int8 compute of X) changes the values",
)


def _sixteen(p: Pattern, layer_note: str) -> Pattern:
    """The 16-bit-activation form of ``p`` (A16W8: uint16/int16 activations, int8 weights) at
    the exporter opsets where QuantizeLinear/DequantizeLinear take them (21 and later); no
    near-misses of its own (the 8-bit form has them)."""
    return dataclasses.replace(
        p, name=p.name + "16", axes={**p.axes, "activation": ("uint16", "int16")}, near_misses={},
        opsets=tuple(o for o in EXPORTER_OPSETS if o >= 21), exporter=p.exporter + " with 16-bit activations (A16W8)",
        notes=p.notes + ". " + layer_note)


_NOTE16 = ("16-bit activations: onnxruntime's CPU QLinear kernels take 8 bits only, so a fusion must not "
           "fire (or must compute in 16 bits)")
DENSE16, CONV16, BINARY16, POOL16 = (_sixteen(p, _NOTE16) for p in (DENSE, CONV, BINARY, POOL))

PATTERNS = (DENSE, CONV, BINARY, POOL, RESIZE, PAIRS, DENSE16, CONV16, BINARY16, POOL16, WEIGHT_ONLY)
register_patterns(PATTERNS, FAMILY)
