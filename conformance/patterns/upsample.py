"""Layer patterns of upsampling: Resize after a convolution (decoder / FPN / U-Net blocks).

Forms (what exporters emit):

* ``Resize.after_conv``: Keras ``UpSampling{1,2}D`` (tf2onnx: ``Resize`` nearest, asymmetric,
  floor; bilinear with half_pixel), torch ``nn.Upsample`` / ``F.interpolate`` (nearest:
  asymmetric + floor; bilinear: ``pytorch_half_pixel`` or ``align_corners``), and the nearest
  form with half_pixel coordinates and the default ``round_prefer_floor``, after a ``Conv`` (+ Relu), sometimes followed
  by another Conv: ``Conv, Relu, Resize(X, roi="", scales | sizes)``.  Optimizers fuse Resize
  into NHWC kernels or into the following convolution's input (a transposed-conv rewrite for
  nearest x2), which holds only for the mode, coordinate transformation and factor they
  assume.  Axes: the mode and coordinate transformation (the five exporter forms), scales or
  sizes, the factor (2, 3, 1.5), the rank (UpSampling1D / 2D), a Conv after, an empty batch.
  Near-miss: the scales also scale the channel axis (``[1, 2, 2, 2]``: not an upsampling of the
  image; valid).

The quantized form (``DequantizeLinear -> Resize -> QuantizeLinear`` with exact ties) belongs to
the QDQ family (conformance/patterns/qdq.py, ``QDQ.resize``).
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np

from ..ops.schedule import EXPORTER_OPSETS
from .core import Builder, Pattern, register_patterns

FAMILY = "upsample"

#: exporter form -> Resize attributes
MODES = {
    "nearest-keras": {"mode": "nearest", "coordinate_transformation_mode": "asymmetric", "nearest_mode": "floor"},
    "bilinear-half-pixel": {"mode": "linear", "coordinate_transformation_mode": "half_pixel"},
    "bilinear-pytorch": {"mode": "linear", "coordinate_transformation_mode": "pytorch_half_pixel"},
    "bilinear-align-corners": {"mode": "linear", "coordinate_transformation_mode": "align_corners"},
    "nearest-half-pixel": {"mode": "nearest", "coordinate_transformation_mode": "half_pixel"},
}


def _build(b: Builder) -> None:
    rank = int(b.v.get("rank", 2))
    n = {"normal": int(b.rng.integers(1, 3)), "zero-batch": 0}[b.v.get("shape", "normal")]
    c, m = int(b.rng.integers(1, 4)), int(b.rng.integers(1, 4))
    sp = tuple(int(b.rng.integers(2, 5)) for _ in range(rank))
    x = b.input("X", b.data((n, c, *sp)))
    w = b.param("W", b.data((m, c, *([3] * rank)), scale=1.0 / np.sqrt(9 * c)))
    y = b.node("Conv", (x, w, b.param("B", b.data((m,), scale=0.3))), kernel_shape=[3] * rank, pads=[1] * (2 * rank))
    y = b.node("Relu", (y,))
    factor = float(b.v.get("factor", 2.0))
    chan = 2.0 if b.v.get("channel_scale") == "yes" else 1.0
    scales = np.array([1.0, chan] + [factor] * rank, dtype=np.float32)
    ins = [y, ""]
    if b.v.get("spec", "scales") == "scales":
        ins.append(b.const("scales", scales, elem=1))
    else:
        sizes = [n, int(m * chan)] + [int(np.floor(s * factor)) for s in sp]
        ins += ["", b.const("sizes", np.array(sizes, dtype=np.int64))]
    y = b.node("Resize", tuple(ins), **MODES[b.v.get("mode", "nearest-keras")])
    if b.v.get("conv_after", "no") == "yes":
        mc = int(m * chan)
        w2 = b.param("W2", b.data((2, mc, *([1] * rank)), scale=1.0 / np.sqrt(mc)))
        y = b.node("Conv", (y, w2), kernel_shape=[1] * rank)
    b.output(y)


AFTER_CONV = Pattern(
    "Resize.after_conv", FAMILY, "UpSampling2D",
    "Keras UpSampling1D/2D (tf2onnx) / torch nn.Upsample, F.interpolate after a conv: Conv, Relu, Resize (, Conv)",
    _build,
    axes={"mode": tuple(MODES), "spec": ("scales", "sizes"), "factor": (2.0, 3.0, 1.5), "rank": (2, 1),
          "conv_after": ("no", "yes"), "params": ("initializer", "constant", "input"),
          "shape": ("normal", "zero-batch")},
    near_misses={"channel_scale": ("yes",)},
    opsets=EXPORTER_OPSETS,
    targets={"onnxruntime": ("com.microsoft.nchwc:Upsample", "com.ms.internal.nhwc:Resize")},
)

#: Why bfloat16 is not among the patterns' types (every node admits it from opset 13).
TYPES_NOTE = (
    "bfloat16 left out: exporters emit these layers in float, float16 (mixed precision) and "
    "double, and onnxruntime 1.32's CPU provider has no bfloat16 kernel for Conv, Relu or Resize "
    "(measured: NOT_IMPLEMENTED), so such cases would only measure refusals"
)
PATTERNS = tuple(replace(p, notes=(p.notes + "; " if p.notes else "") + TYPES_NOTE) for p in (AFTER_CONV,))
AFTER_CONV, = PATTERNS
register_patterns(PATTERNS, FAMILY)
