"""Layer patterns of padding before pooling and convolution: Pad + MaxPool, Pad + AveragePool,
Pad + Conv.

Forms (what exporters emit):

* ``Pool.pad_maxpool``: Keras ``ZeroPadding{1,2}D`` + ``MaxPooling{1,2}D`` (tf2onnx: a constant
  Pad of value 0), torch's ``F.pad(x, p, value=-inf)`` / ``nn.ConstantPad2d`` + ``MaxPool2d``,
  TF's explicit-padding max pools and ``ReflectionPad`` / ``ReplicationPad`` + ``MaxPool``:
  ``Y = MaxPool(Pad(X, pads, value))``.  Fusions that fold the Pad into the pooling's ``pads``
  (onnxruntime's ``PadFusion``, onnx-optimizer's ``fuse_pad_into_pool``) are right only when the
  pad value is MaxPool's own padding, -inf (or where no padded element can win: never assumed
  here); the trap: a zero pad folded into MaxPool, which pads with -inf, is wrong wherever a
  window over the border holds only negative values -- the data here are mostly negative
  (``-1 + 0.5 N(0, 1)``).  Axes: the pad value / mode (-inf, 0, the value input omitted = 0,
  reflect, edge), the pad amounts (one each side, asymmetric, negative = Cropping), kernel and
  strides, MaxPool's own pads, the rank (MaxPooling1D / 2D), Pad-18's ``axes`` input, an empty
  batch.  Near-miss: the Pad also pads the channel axis (a fold into the spatial pads is
  impossible).
* ``Pool.pad_avgpool``: Keras ``ZeroPadding2D`` + ``AveragePooling2D``, torch ``ZeroPad2d`` +
  ``AvgPool2d``: ``Y = AveragePool(Pad(X, pads, 0))``.  The padded zeros are counted in every
  window's average, so a fold is right only as ``count_include_pad=1`` and only if the
  pooling's own pads (if any) are counted too.  Axes: the pooling's ``count_include_pad`` and own
  pads (own pads with ``count_include_pad=0`` cannot be merged with counted zeros), the pad
  mode (zero, reflect, edge), amounts, Pad-18's ``axes`` input.  Near-miss: the pad value 0.5
  (not AveragePool's zero).
* ``Conv.pad_conv``: Keras ``ZeroPadding2D`` + ``Conv2D`` (tf2onnx), torch ``nn.ZeroPad2d`` /
  ``ReflectionPad2d`` + ``Conv2d``: ``Relu(Conv(Pad(X, pads, value), W, B))``.  onnxruntime's
  ``PadFusion`` folds a constant zero Pad into Conv's ``pads``; right only for the value 0, the
  spatial axes and non-negative amounts (a Cropping is not a padding).  Axes: the value / mode,
  amounts (one, asymmetric, negative), Conv's own pads and strides, rank, Pad-18's ``axes``
  input, parameters, an empty batch.  Near-misses: the value 0.5; the channel axis padded too
  (the Conv then has one more input channel).
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np

from ..ops.schedule import EXPORTER_OPSETS
from .core import Builder, Pattern, register_patterns

FAMILY = "pad_pool"


def _pads(b: Builder, rank: int, amount: str, k: int) -> list[int]:
    """ONNX pads (begins then ends) over N, C and ``rank`` spatial axes."""
    if amount == "one":
        sp = [1] * rank, [1] * rank
    elif amount == "asymmetric":
        sp = [0] + [1] * (rank - 1), [min(2, k - 1) or 1] * rank
    elif amount == "negative":  # Cropping: remove one element at the start, pad one at the end
        sp = [-1] * rank, [1] * rank
    else:
        raise ValueError(amount)
    return [0, 0, *sp[0], 0, 0, *sp[1]]


def _pad(b: Builder, x: str, pads: list[int], mode: str) -> str:
    """Pad ``x``: ``mode`` one of ``-inf``, ``0``, ``omitted`` (value input left out: 0),
    ``0.5``, ``reflect``, ``edge``."""
    rank = len(pads) // 2
    if b.v.get("axes_input") == "spatial" and b.opset >= 18:
        keep = [i for i in range(rank) if i >= 2]
        p = b.const("pads", np.array([pads[i] for i in keep] + [pads[rank + i] for i in keep], dtype=np.int64))
        axes = b.const("pad_axes", np.array(keep, dtype=np.int64))
    else:
        p, axes = b.const("pads", np.array(pads, dtype=np.int64)), None
    attrs = {}
    ins = [x, p]
    if mode in ("reflect", "edge"):
        attrs["mode"] = mode
    elif mode != "omitted":
        ins.append(b.param("pad_value", np.array(float(mode))))
    if axes is not None:
        ins += [""] * (3 - len(ins)) + [axes]
    return b.node("Pad", tuple(ins), **attrs)


def _x(b: Builder, rank: int, k: int, offset: float) -> str:
    n = {"normal": int(b.rng.integers(1, 3)), "zero-batch": 0}[b.v.get("shape", "normal")]
    c = int(b.rng.integers(1, 4))
    sp = tuple(int(b.rng.integers(max(k, 2), 7)) for _ in range(rank))
    return b.input("X", b.data((n, c, *sp), scale=0.5, offset=offset))


def _pool_attrs(b: Builder, k: int, rank: int) -> dict:
    attrs = {"kernel_shape": [k] * rank}
    if int(b.v.get("strides", 1)) != 1:
        attrs["strides"] = [int(b.v["strides"])] * rank
    if b.v.get("own_pads", "none") == "one":
        attrs["pads"] = [1] * (2 * rank)
    return attrs


def _build_max(b: Builder) -> None:
    rank = int(b.v.get("rank", 2))
    k = int(b.v.get("kernel", 3))
    x = _x(b, rank, k, offset=-1.0)
    pads = _pads(b, rank, b.v.get("amount", "one"), k)
    if b.v.get("pad_channels") == "yes":  # near-miss: the channel axis padded too
        pads[1] = 1
    y = _pad(b, x, pads, b.v.get("value", "-inf"))
    b.output(b.node("MaxPool", (y,), **_pool_attrs(b, k, rank)))


PAD_MAXPOOL = Pattern(
    "Pool.pad_maxpool", FAMILY, "ZeroPadding+MaxPooling",
    "Keras ZeroPadding + MaxPooling (tf2onnx) / torch ConstantPad (-inf) or ReflectionPad + MaxPool: Pad, MaxPool",
    _build_max,
    axes={"value": ("-inf", "0", "omitted", "reflect", "edge"), "amount": ("one", "asymmetric", "negative"),
          "kernel": (3, 2), "strides": (1, 2), "own_pads": ("none", "one"), "rank": (2, 1),
          "axes_input": ("absent", "spatial"), "params": ("initializer", "constant", "input"),
          "shape": ("normal", "zero-batch")},
    near_misses={"pad_channels": ("yes",)},
    opsets=EXPORTER_OPSETS,
    targets={"onnxruntime": ("!Pad",)},
    notes="a fold is right only for the value -inf; the data are mostly negative so a folded zero pad changes "
          "the border windows",
)


def _build_avg(b: Builder) -> None:
    rank = int(b.v.get("rank", 2))
    k = int(b.v.get("kernel", 3))
    x = _x(b, rank, k, offset=0.5)
    pads = _pads(b, rank, b.v.get("amount", "one"), k)
    y = _pad(b, x, pads, b.v.get("value", "0"))
    attrs = _pool_attrs(b, k, rank)
    cip = int(b.v.get("count_include_pad", 0))
    if cip:
        attrs["count_include_pad"] = 1
    b.output(b.node("AveragePool", (y,), **attrs))


PAD_AVGPOOL = Pattern(
    "Pool.pad_avgpool", FAMILY, "ZeroPadding+AveragePooling",
    "Keras ZeroPadding + AveragePooling (tf2onnx) / torch ZeroPad2d + AvgPool2d: Pad, AveragePool",
    _build_avg,
    axes={"value": ("0", "omitted", "reflect", "edge"), "count_include_pad": (0, 1), "own_pads": ("none", "one"),
          "amount": ("one", "asymmetric"), "kernel": (3, 2), "strides": (1, 2), "rank": (2, 1),
          "axes_input": ("absent", "spatial"),
          "params": ("initializer", "constant", "input"), "shape": ("normal", "zero-batch")},
    near_misses={"value": ("0.5",)},
    opsets=EXPORTER_OPSETS,
    targets={"onnxruntime": ("!Pad",)},
    notes="the padded zeros are counted: a fold must set count_include_pad=1 and cannot merge with own pads that "
          "are not counted",
)

def _build_conv(b: Builder) -> None:
    rank = int(b.v.get("rank", 2))
    k = int(b.v.get("kernel", 3))
    x = _x(b, rank, k, offset=0.5)
    pads = _pads(b, rank, b.v.get("amount", "one"), k)
    if b.v.get("pad_channels") == "yes":  # near-miss: the channel axis padded too (more input channels)
        pads[1] = 1
    y = _pad(b, x, pads, b.v.get("value", "0"))
    c = int(b._feeds[x].shape[1]) + (1 if b.v.get("pad_channels") == "yes" else 0)
    m = int(b.rng.integers(1, 4))
    w = b.param("W", b.data((m, c, *([k] * rank)), scale=1.0 / np.sqrt(c * k ** rank)))
    attrs = {"kernel_shape": [k] * rank}
    if b.v.get("own_pads", "none") == "one":
        attrs["pads"] = [1] * (2 * rank)
    if int(b.v.get("strides", 1)) != 1:
        attrs["strides"] = [int(b.v["strides"])] * rank
    y = b.node("Conv", (y, w, b.param("B", b.data((m,), scale=0.3, offset=0.5))), **attrs)
    b.output(b.node("Relu", (y,)) if b.v.get("act", "relu") == "relu" else y)


PAD_CONV = Pattern(
    "Conv.pad_conv", FAMILY, "ZeroPadding+Conv",
    "Keras ZeroPadding2D + Conv2D (tf2onnx) / torch nn.ZeroPad2d, ReflectionPad2d + Conv2d: Pad, Conv, Relu",
    _build_conv,
    axes={"value": ("0", "omitted", "reflect", "edge"), "amount": ("one", "asymmetric", "negative"),
          "own_pads": ("none", "one"), "kernel": (3, 2), "strides": (1, 2), "rank": (2, 1),
          "axes_input": ("absent", "spatial"), "act": ("relu", "none"), "params": ("initializer", "constant", "input"),
          "shape": ("normal", "zero-batch")},
    near_misses={"value": ("0.5",), "pad_channels": ("yes",)},
    opsets=EXPORTER_OPSETS,
    targets={"onnxruntime": ("!Pad",)},
    notes="a fold into Conv's pads is right only for a zero constant pad of the spatial axes with non-negative amounts",
)

#: Why bfloat16 is not among the patterns' types (every node admits it from opset 13).
TYPES_NOTE = (
    "bfloat16 left out: exporters emit these layers in float, float16 (mixed precision) and "
    "double, and onnxruntime 1.32's CPU provider has no bfloat16 kernel for Conv, MaxPool or "
    "AveragePool (measured: NOT_IMPLEMENTED), so such cases would only measure refusals"
)
PATTERNS = tuple(replace(p, notes=(p.notes + "; " if p.notes else "") + TYPES_NOTE)
                 for p in (PAD_MAXPOOL, PAD_AVGPOOL, PAD_CONV))
PAD_MAXPOOL, PAD_AVGPOOL, PAD_CONV = PATTERNS
register_patterns(PATTERNS, FAMILY)
