"""Layer patterns of convolution blocks: Conv + BatchNormalization + activation, depthwise and
separable convolutions, Conv + per-channel Mul/Add.

Forms (what exporters emit):

* ``Conv.bn_act``: ``torch.nn.Conv{1,2,3}d`` + ``BatchNorm{1,2,3}d`` + an activation exported in
  eval mode without constant folding (``do_constant_folding=False``), Keras ``Conv{1,2,3}D`` +
  ``BatchNormalization`` + ``Activation`` through tf2onnx: ``Y = Act(BatchNormalization(Conv(X,
  W[, B]), scale, bias, mean, var))``.  onnxruntime's ``ConvBNFusion`` (level basic) folds the
  BatchNormalization into W and B -- ``W' = W * scale / sqrt(var + epsilon)``, ``B' = (B - mean)
  * scale / sqrt(var + epsilon) + bias`` -- which must keep the BatchNormalization's epsilon
  (the trap: the variances are drawn small, down to 0.01, so a fold dropping epsilon or assuming
  the default 1e-5 moves the output far outside the tolerance); ``ConvActivationFusion``
  (extended) makes ``com.microsoft.FusedConv`` with the activation.  Activations: none, Relu,
  Clip(0, 6) as Relu6 (min/max as inputs), LeakyRelu (alpha 0.1), Sigmoid, HardSigmoid and
  HardSwish (HardSwish-14; at opset 13 written out as ``Mul(X, HardSigmoid(X, 1/6, 0.5))``, the
  form exporters emit there, and at every opset as ``hardswish-decomposed``).  Axes: rank
  (Conv1D/2D/3D), the Conv bias present or absent,
  epsilon (the attribute's default 1e-5, 1e-3, 0.1), where the parameters live (initializers,
  Constant nodes, graph inputs: a graph input cannot be folded), the Conv output also a graph
  output, pads/strides, sizes 1 and an empty batch.  Near-miss: the BatchNormalization is not on
  the Conv's channel axis (a Transpose moves a spatial axis to axis 1 before it and back after:
  valid, the BatchNormalization normalizes what was the last spatial axis; a fold must not fire).
* ``Conv.separable``: Keras ``DepthwiseConv2D`` / ``SeparableConv{1,2}D`` and torch's
  depthwise-separable blocks (MobileNet): ``Conv(group = C, M = C * multiplier)`` +
  BatchNormalization + activation, then a pointwise 1x1 ``Conv`` + BatchNormalization (+
  activation).  Axes: the depth multiplier, the rank, the activation, whether the pointwise
  stage has its BatchNormalization.  Both BatchNormalizations are fold targets.
* ``Conv.affine``: Conv followed by a per-channel ``Mul`` and ``Add`` (exporters that write a
  frozen BatchNormalization as a scale and shift, TF's ``FusedBatchNorm`` folded by tf2onnx):
  ``ConvMulFusion`` / ``ConvAddFusion`` fold them into W and B when the constant has one value
  per output channel (shape ``[M, 1, ..., 1]``, ``[1, M, 1, ..., 1]``) or a single value.
  Near-miss: the constant broadcasts along the last spatial axis (shape ``[W]``): a fold into W
  would scale the wrong axis.
* ``ConvTranspose.bn_act``: ``nn.ConvTranspose{1,2}d`` + BatchNorm + activation (decoders, GAN
  generators), Keras ``Conv2DTranspose`` + ``BatchNormalization``: a fold must scale W's axis 1
  (``[C, M / group, k...]``), not axis 0 as for Conv (the trap, live with C = M).  Axes: rank,
  channels C = M or not, kernel, strides 2 with pads and output_padding, bias, epsilon, act.
* ``Conv.prelu``: Conv + ``PRelu`` with the slope per channel (``[M, 1, 1]``: torch
  ``nn.PReLU(num_parameters=C)``, Keras PReLU with shared spatial axes), one slope (``[1]``,
  scalar: ``nn.PReLU()``), ``[1, M, 1, 1]``.  A fusion into the convolution's activation holds
  only for those shapes.  Near-miss: a slope per column of the last spatial axis.
* ``Dense.bn``: ``nn.Linear`` + ``nn.BatchNorm1d`` (torch.onnx: ``Gemm(transB=1)``,
  ``BatchNormalization`` on ``[N, C]``), Keras ``Dense`` + ``BatchNormalization`` (tf2onnx:
  ``MatMul``, ``Add``, ``BatchNormalization``), then an activation.  A fold into the Gemm's
  weights and bias must keep epsilon, as for Conv.  Near-miss: the BatchNormalization over the
  rows (a Transpose before and after it).
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np

from ..ops.schedule import EXPORTER_OPSETS
from .core import Builder, Pattern, register_patterns

FAMILY = "conv_blocks"
ACTS = ("relu", "none", "relu6", "leakyrelu", "sigmoid", "hardsigmoid", "hardswish", "hardswish-decomposed")


def _spatial(b: Builder, rank: int, lo: int = 3, hi: int = 7) -> tuple[int, ...]:
    return tuple(int(b.rng.integers(lo, hi if rank < 3 else 5)) for _ in range(rank))


def _batch(b: Builder) -> int:
    s = b.v.get("shape", "normal")
    return {"normal": int(b.rng.integers(1, 3)), "batch1": 1, "zero-batch": 0}[s]


def act(b: Builder, y: str, kind: str) -> str:
    """Append the activation ``kind`` (:data:`ACTS`) to ``y``; returns its output."""
    if kind == "none":
        return y
    if kind == "relu":
        return b.node("Relu", (y,))
    if kind == "relu6":
        return b.node("Clip", (y, b.param("clip_min", np.array(0.0)), b.param("clip_max", np.array(6.0))))
    if kind == "leakyrelu":
        return b.node("LeakyRelu", (y,), alpha=0.1)
    if kind == "sigmoid":
        return b.node("Sigmoid", (y,))
    if kind == "hardsigmoid":
        return b.node("HardSigmoid", (y,), alpha=0.2, beta=0.5)
    if kind in ("hardswish", "hardswish-decomposed"):
        if b.opset >= 14 and kind == "hardswish":
            return b.node("HardSwish", (y,))
        hs = b.node("HardSigmoid", (y,), alpha=float(np.float32(1.0 / 6.0)), beta=0.5)
        return b.node("Mul", (y, hs))
    raise ValueError(kind)


def peek(b: Builder, name: str) -> np.ndarray:
    """The exact float64 value of ``name`` in the graph built so far (the composed oracle), so
    that a builder can draw later parameters from it."""
    from .core import PatternGraph, evaluate

    built = b.built()
    return evaluate(PatternGraph("peek", tuple(built.nodes), {"": b.opset}, dict(built.types)), built.feeds)[name]


def batch_norm(b: Builder, y: str, m: int, tag: str = "", epsilon=None) -> str:
    """A BatchNormalization over ``m`` channels with drawn parameters (variances in [0.01, 1]:
    small enough that epsilon matters); ``epsilon`` ``None``/``"default"`` leaves the attribute
    out (1e-5).  The means are per-channel quantiles (30 to 70 %) of the BatchNormalization's
    actual input (as running statistics follow the data): the output has both signs in a channel
    with distinct values, so a Relu after it does not make the whole output zero."""
    scale = b.param(f"bn{tag}_scale", b.data((m,), lo=0.5, hi=1.5))
    bias = b.param(f"bn{tag}_bias", b.data((m,), lo=0.0, hi=0.3))
    val = peek(b, y)
    q = b.rng.uniform(0.3, 0.7, size=m)
    per = np.moveaxis(val, 1, 0).reshape(m, -1)
    mean = b.param(f"bn{tag}_mean", np.array([np.quantile(per[i], q[i]) for i in range(m)]) if val.size
                   else b.data((m,), scale=0.2))
    var = b.param(f"bn{tag}_var", b.data((m,), lo=0.01, hi=1.0))
    attrs = {} if epsilon in (None, "default") else {"epsilon": float(epsilon)}
    return b.node("BatchNormalization", (y, scale, bias, mean, var), **attrs)


def _build_bn_act(b: Builder) -> None:
    rank = int(b.v.get("rank", 2))
    n = _batch(b)
    c, m = int(b.rng.integers(1, 4)), int(b.rng.integers(1, 5))
    k = int(b.rng.integers(1, 4))
    conv_attrs = {}
    geometry = b.v.get("geometry", "valid")
    if geometry == "same":
        conv_attrs["pads"] = [k // 2] * (2 * rank)
    elif geometry == "strided":
        conv_attrs["strides"] = [2] * rank
        conv_attrs["pads"] = [1] * (2 * rank)
    sp = _spatial(b, rank, lo=max(k + 1, 3))  # at least 2 outputs per axis: no all-negative output below a Relu
    x = b.input("X", b.data((n, c, *sp)))
    w = b.param("W", b.data((m, c, *([k] * rank)), scale=1.0 / np.sqrt(c * k ** rank)))
    ins = (x, w)
    if b.v.get("conv_bias", "present") == "present":
        ins = (x, w, b.param("B", b.data((m,), scale=0.3)))
    y = b.node("Conv", ins, kernel_shape=[k] * rank, **conv_attrs)
    conv_out = y
    if b.v.get("bn_axis", "channel") == "spatial":  # near-miss: BN over the last spatial axis
        perm = list(range(rank + 2))
        perm[1], perm[-1] = perm[-1], perm[1]
        t = b.node("Transpose", (y,), perm=perm)
        out_sp = _conv_out(sp, k, conv_attrs)
        z = batch_norm(b, t, out_sp[-1], epsilon=b.v.get("epsilon"))
        z = b.node("Transpose", (z,), perm=perm)
    else:
        z = batch_norm(b, y, m, epsilon=b.v.get("epsilon"))
    out = act(b, z, b.v.get("act", "relu"))
    b.output(out, conv_out) if b.v.get("expose") == "conv" else b.output(out)


def _conv_out(sp, k, attrs) -> tuple[int, ...]:
    s = attrs.get("strides", [1] * len(sp))
    p = attrs.get("pads", [0] * (2 * len(sp)))
    r = len(sp)
    return tuple((sp[i] + p[i] + p[i + r] - k) // s[i] + 1 for i in range(r))


BN_ACT = Pattern(
    "Conv.bn_act", FAMILY, "Conv+BatchNormalization",
    "torch.nn.Conv{1,2,3}d + BatchNorm + activation (torch.onnx eval, no constant folding) / Keras Conv + "
    "BatchNormalization + Activation (tf2onnx): Conv, BatchNormalization, activation",
    _build_bn_act,
    axes={"params": ("initializer", "constant", "input"), "rank": (2, 1, 3), "conv_bias": ("present", "absent"),
          "epsilon": ("default", 1e-3, 0.1), "act": ACTS, "expose": ("none", "conv"),
          "geometry": ("valid", "same", "strided"), "shape": ("normal", "batch1", "zero-batch")},
    near_misses={"bn_axis": ("spatial",)},
    opsets=EXPORTER_OPSETS,
    targets={"onnxruntime": ("!BatchNormalization",)},
    notes="variances down to 0.01 with epsilon up to 0.1: a fold that drops or assumes epsilon is far outside "
          "the tolerance; a graph-input BatchNormalization cannot be folded",
)


def _build_separable(b: Builder) -> None:
    rank = int(b.v.get("rank", 2))
    n = _batch(b)
    c, mult, m = int(b.rng.integers(1, 5)), int(b.v.get("multiplier", 1)), int(b.rng.integers(1, 5))
    k = 3
    sp = _spatial(b, rank, lo=3)
    x = b.input("X", b.data((n, c, *sp)))
    dw = b.param("W_depthwise", b.data((c * mult, 1, *([k] * rank)), scale=1.0 / 3.0))
    y = b.node("Conv", (x, dw), kernel_shape=[k] * rank, group=c, pads=[1] * (2 * rank))
    y = batch_norm(b, y, c * mult, tag="_dw", epsilon=b.v.get("epsilon"))
    y = act(b, y, b.v.get("act", "relu"))
    pw = b.param("W_pointwise", b.data((m, c * mult, *([1] * rank)), scale=1.0 / np.sqrt(c * mult)))
    pins = (y, pw) if b.v.get("pointwise_bias", "absent") == "absent" else \
        (y, pw, b.param("B_pointwise", b.data((m,), scale=0.3)))
    z = b.node("Conv", pins, kernel_shape=[1] * rank)
    if b.v.get("pointwise_bn", "present") == "present":
        z = batch_norm(b, z, m, tag="_pw", epsilon=b.v.get("epsilon"))
        z = act(b, z, b.v.get("pointwise_act", "none"))
    b.output(z)


SEPARABLE = Pattern(
    "Conv.separable", FAMILY, "SeparableConv",
    "Keras DepthwiseConv2D / SeparableConv (tf2onnx), torch depthwise-separable blocks (MobileNet): Conv(group=C), "
    "BatchNormalization, activation, Conv 1x1, BatchNormalization",
    _build_separable,
    axes={"params": ("initializer", "constant", "input"), "rank": (2, 1), "multiplier": (1, 2),
          "act": ("relu6", "relu", "hardswish", "none"), "pointwise_bn": ("present", "absent"),
          "pointwise_bias": ("absent", "present"), "pointwise_act": ("none", "relu"),
          "epsilon": ("default", 1e-3), "shape": ("normal", "batch1", "zero-batch")},
    opsets=EXPORTER_OPSETS,
    targets={"onnxruntime": ("!BatchNormalization",)},
)


def _build_affine(b: Builder) -> None:
    rank = 2
    n = _batch(b)
    c, m, k = int(b.rng.integers(1, 4)), int(b.rng.integers(1, 5)), int(b.rng.integers(1, 4))
    sp = _spatial(b, rank, lo=max(k, 3))
    x = b.input("X", b.data((n, c, *sp)))
    w = b.param("W", b.data((m, c, k, k), scale=1.0 / np.sqrt(c * k * k)))
    y = b.node("Conv", (x, w, b.param("B", b.data((m,), scale=0.3))), kernel_shape=[k, k])
    ow = sp[-1] - k + 1
    shape = {"channel": (m, 1, 1), "channel4": (1, m, 1, 1), "scalar": (), "one": (1,),
             "last": (ow,)}[b.v.get("const_shape", "channel")]
    s = b.param("mul_scale", b.data(shape, scale=0.5, offset=1.0))
    y = b.node("Mul", (y, s) if b.v.get("order", "conv-first") == "conv-first" else (s, y))
    if b.v.get("add", "present") == "present":
        t = b.param("add_shift", b.data(shape, scale=0.5))
        y = b.node("Add", (y, t) if b.v.get("order", "conv-first") == "conv-first" else (t, y))
    b.output(y)


AFFINE = Pattern(
    "Conv.affine", FAMILY, "Conv+BatchNormalization",
    "frozen BatchNormalization written as a scale and shift (tf2onnx FusedBatchNorm, exporters folding BN "
    "statistics): Conv, Mul, Add",
    _build_affine,
    axes={"params": ("initializer", "constant", "input"), "const_shape": ("channel", "channel4", "scalar", "one"),
          "order": ("conv-first", "const-first"), "add": ("present", "absent"),
          "shape": ("normal", "batch1", "zero-batch")},
    near_misses={"const_shape": ("last",)},
    opsets=EXPORTER_OPSETS,
    targets={"onnxruntime": ("!Mul",)},
    notes="near-miss: the constant has one value per column of the last spatial axis; folding it into W "
          "per output channel is wrong",
)

def _build_dense_bn(b: Builder) -> None:
    n = _batch(b) + (1 if b.v.get("shape", "normal") == "normal" else 0)  # >= 2 rows: a batch of rows
    k, c = int(b.rng.integers(1, 9)), int(b.rng.integers(1, 6))
    x = b.input("X", b.data((n, k)))
    if b.v.get("form", "gemm") == "gemm":
        w = b.param("W", b.data((c, k), scale=1.0 / np.sqrt(k)))
        y = b.node("Gemm", (x, w, b.param("B", b.data((c,), scale=0.3))), transB=1)
    else:
        w = b.param("W", b.data((k, c), scale=1.0 / np.sqrt(k)))
        y = b.node("Add", (b.node("MatMul", (x, w)), b.param("B", b.data((c,), scale=0.3))))
    if b.v.get("bn_axis", "feature") == "batch":  # near-miss: normalizes over the rows (BN after a Transpose)
        t = b.node("Transpose", (y,), perm=[1, 0])
        z = b.node("Transpose", (batch_norm(b, t, n, epsilon=b.v.get("epsilon")),), perm=[1, 0])
    else:
        z = batch_norm(b, y, c, epsilon=b.v.get("epsilon"))
    b.output(act(b, z, b.v.get("act", "relu")))


DENSE_BN = Pattern(
    "Dense.bn", FAMILY, "Dense+BatchNormalization",
    "torch nn.Linear + nn.BatchNorm1d (torch.onnx eval: Gemm transB=1, BatchNormalization) / Keras Dense + "
    "BatchNormalization (tf2onnx: MatMul, Add, BatchNormalization), activation",
    _build_dense_bn,
    axes={"form": ("gemm", "matmul-add"), "epsilon": ("default", 1e-3, 0.1), "act": ("relu", "none", "sigmoid"),
          "params": ("initializer", "constant", "input"), "shape": ("normal", "batch1", "zero-batch")},
    near_misses={"bn_axis": ("batch",)},
    opsets=EXPORTER_OPSETS,
    targets={"onnxruntime": ("!BatchNormalization",)},
    notes="BatchNormalization on [N, C] (features on axis 1); the near-miss normalizes the rows instead",
)

def _build_transpose_bn(b: Builder) -> None:
    rank = int(b.v.get("rank", 2))
    n = _batch(b)
    c = int(b.rng.integers(1, 4))
    m = c if b.v.get("channels", "same") == "same" else c + 1
    k = int(b.v.get("kernel", 2))
    sp = _spatial(b, rank, lo=2, hi=5)
    x = b.input("X", b.data((n, c, *sp)))
    w = b.param("W", b.data((c, m, *([k] * rank)), scale=1.0 / np.sqrt(c * k ** rank)))
    attrs = {"kernel_shape": [k] * rank, "strides": [2] * rank}
    if b.v.get("geometry", "plain") == "padded":
        attrs["pads"] = [k // 2] * (2 * rank)
        attrs["output_padding"] = [1] * rank
    ins = (x, w) if b.v.get("conv_bias", "present") == "absent" else (x, w, b.param("B", b.data((m,), scale=0.3)))
    y = b.node("ConvTranspose", ins, **attrs)
    z = batch_norm(b, y, m, epsilon=b.v.get("epsilon"))
    b.output(act(b, z, b.v.get("act", "relu")))


TRANSPOSE_BN = Pattern(
    "ConvTranspose.bn_act", FAMILY, "Conv2DTranspose+BatchNormalization",
    "torch nn.ConvTranspose{1,2}d + BatchNorm (decoders, GAN generators) / Keras Conv2DTranspose + "
    "BatchNormalization (tf2onnx): ConvTranspose, BatchNormalization, activation",
    _build_transpose_bn,
    axes={"params": ("initializer", "constant", "input"), "rank": (2, 1), "channels": ("same", "more"),
          "kernel": (2, 3), "geometry": ("plain", "padded"), "conv_bias": ("present", "absent"),
          "epsilon": ("default", 1e-3, 0.1), "act": ("relu", "none", "leakyrelu"),
          "shape": ("normal", "batch1", "zero-batch")},
    opsets=EXPORTER_OPSETS,
    targets={"onnxruntime": ("!BatchNormalization",)},
    notes="ConvTranspose's W is [C, M / group, k...]: a fold scales axis 1; with C = M a fold that scales axis 0 "
          "(Conv's layout) gives wrong values instead of a shape error",
)

def _build_prelu(b: Builder) -> None:
    rank = int(b.v.get("rank", 2))
    n = _batch(b)
    c, m, k = int(b.rng.integers(1, 4)), int(b.rng.integers(2, 5)), 3
    sp = _spatial(b, rank, lo=4)
    x = b.input("X", b.data((n, c, *sp)))
    w = b.param("W", b.data((m, c, *([k] * rank)), scale=1.0 / np.sqrt(c * k ** rank)))
    y = b.node("Conv", (x, w, b.param("B", b.data((m,), scale=0.3))), kernel_shape=[k] * rank, pads=[1] * (2 * rank))
    shape = {"channel": (m, *([1] * rank)), "one": (1,), "scalar": (), "channel4": (1, m, *([1] * rank)),
             "last": (sp[-1],)}[b.v.get("slope_shape", "channel")]
    slope = b.param("slope", b.data(shape, lo=0.05, hi=0.5))
    b.output(b.node("PRelu", (y, slope)))


PRELU = Pattern(
    "Conv.prelu", FAMILY, "Conv+PReLU",
    "torch nn.Conv2d + nn.PReLU(num_parameters=C) (slope [C, 1, 1]) or nn.PReLU() ([1]) / Keras Conv + PReLU "
    "(tf2onnx): Conv, PRelu",
    _build_prelu,
    axes={"slope_shape": ("channel", "one", "scalar", "channel4"), "rank": (2, 1),
          "params": ("initializer", "constant", "input"), "shape": ("normal", "batch1", "zero-batch")},
    near_misses={"slope_shape": ("last",)},
    opsets=EXPORTER_OPSETS,
    targets={"onnxruntime": ("com.microsoft:FusedConv",)},
    notes="near-miss: one slope per column of the last spatial axis, not per channel",
)

#: Why bfloat16 is not among the patterns' types (every node admits it from opset 13).
TYPES_NOTE = (
    "bfloat16 left out: exporters emit these layers in float, float16 (mixed precision) and "
    "double, and onnxruntime 1.32's CPU provider has no bfloat16 kernel for Conv, ConvTranspose, "
    "Gemm, Relu or Sigmoid (measured: NOT_IMPLEMENTED), so such cases would only measure refusals"
)
PATTERNS = tuple(replace(p, notes=(p.notes + "; " if p.notes else "") + TYPES_NOTE)
                 for p in (BN_ACT, SEPARABLE, AFFINE, DENSE_BN, TRANSPOSE_BN, PRELU))
BN_ACT, SEPARABLE, AFFINE, DENSE_BN, TRANSPOSE_BN, PRELU = PATTERNS
register_patterns(PATTERNS, FAMILY)
