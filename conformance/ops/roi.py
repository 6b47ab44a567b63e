"""The region-of-interest pooling operators as entries of the operator table (family
``shaped``): RoiAlign (10, 16, 22) and MaxRoiPool (1, 22).

Oracles, bounds and checks: :mod:`conformance.reference.pool` (``roi_align*``,
``max_roi_pool*``).  What the entries add to the schema:

**RoiAlign.**  The text names Mask R-CNN's RoIAlign and leaves the algorithm's details to it;
the oracle follows the details onnx's reference and onnxruntime share (samples beyond
``[-1, H] x [-1, W]`` are 0, clamping to the last row/column, the adaptive grid
``ceil(roi_size / output_size)``, ``output_half_pixel`` RoIs of at least 1x1).  Version 10 has
no ``coordinate_transformation_mode`` and no pixel shift (the behaviour 16 calls
``output_half_pixel``); from 16 the default is ``half_pixel`` (-0.5).  Shape table
(:func:`_roi_align_shapes`): output 1x1, 2x3, 3x3, 1x3, sampling_ratio 0 (adaptive), 1 and 2,
spatial_scale 0.5, mode avg and max, both coordinate modes written out (16+), zero RoIs.  RoIs
(:func:`_rois`) are drawn per case inside the image, smaller than a pixel, or reaching beyond
it, with 1-3 RoIs on random images of the batch (``batch_indices``), and redrawn until every
sample is 0.02 away from the discontinuities of the algorithm (the ``-1`` and ``H``/``W``
limits, an adaptive grid ``ceil`` within 0.02 of an integer), so a kernel computing
coordinates in float32 takes the same branches.  ``mode = max`` is contested (the text: "max"
of the sampled values; onnx's reference and onnxruntime: the max over samples of the largest
weighted corner term, onnx#4764) and judged by
:func:`conformance.reference.pool.check_roi_align_max`: either reading passes.  Numerics
``normal``, ``wide`` and ``special`` bounded so that no sum overflows (no NaN or infinities: a
weight of 0 times an infinity is NaN in one kernel and skipped in another; the text defines
neither), ``large-offset``.  Tolerance :func:`conformance.reference.pool.roi_align_bound`.

**MaxRoiPool.**  Fast R-CNN's RoIPool (Caffe's and onnxruntime's details): corners scaled and
rounded half away from zero, RoIs of at least one pixel, bins
``[floor(p size / pooled), ceil((p + 1) size / pooled))`` clipped to the image, empty bins 0.
RoIs have corners at quarter pixels (never a rounding tie) and are redrawn until the float32
bin limits onnxruntime computes equal the exact ones.  Exact tolerance (a maximum).
"""

from __future__ import annotations

import math

import numpy as np

from ..reference import pool as ref
from ..tolerance import Tolerance
from . import values as V
from .engine import register_entries
from .entry import Attrs, Entry, Err, Shape
from .pool import _large_offset

CHECK_ROI_MAX = "conformance.reference.pool:check_roi_align_max"
CHECK_ROI_MAX_V10 = "conformance.reference.pool:check_roi_align_max_v10"
_DIMS = {"N": (1, 2), "C": (1, 3), "H": (4, 7), "W": (4, 7), "R": (1, 3)}
#: Distance every sample keeps from a discontinuity of RoiAlign (pixels, or grid units).
MARGIN = 0.02


def _half_pixel(ctx) -> bool:
    return ctx.version >= 16 and ctx.attrs.get("coordinate_transformation_mode", "half_pixel") == "half_pixel"


# ============================================================================ RoiAlign
def _valid_roi(row, ctx) -> bool:
    h, w = ctx.shapes["X"][2], ctx.shapes["X"][3]
    a = ctx.attrs
    oh, ow, sr = int(a.get("output_height", 1)), int(a.get("output_width", 1)), int(a.get("sampling_ratio", 0))
    scale = float(a.get("spatial_scale", 1.0))
    hp = _half_pixel(ctx)
    if row[2] <= row[0] or row[3] <= row[1]:
        return False
    _, _, coords = ref.roi_align_samples(row, h, w, oh, ow, sr, scale, hp)
    for y, x in coords:
        if min(abs(y + 1), abs(y - h), abs(x + 1), abs(x - w)) < MARGIN:
            return False
    if sr == 0:
        rw = (row[2] - row[0]) * scale
        rh = (row[3] - row[1]) * scale
        if not hp:
            rw, rh = max(rw, 1.0), max(rh, 1.0)
        for q in (rh / oh, rw / ow):
            if abs(q - round(q)) < MARGIN:
                return False
    return True


def _rois(rng, ctx):
    """RoIs ``[x1, y1, x2, y2]`` in image coordinates (module docstring)."""
    t = ctx.types["rois"]
    r = ctx.shapes["rois"][0]
    h, w = ctx.shapes["X"][2], ctx.shapes["X"][3]
    scale = float(ctx.attrs.get("spatial_scale", 1.0))
    out = np.zeros((r, 4))
    for i in range(r):
        for _ in range(1000):
            kind = ("inside", "inside", "small", "beyond")[int(rng.integers(4))]
            row = []
            for size in (w, h):
                if kind == "small":
                    a = rng.uniform(0, size - 1.5)
                    b = a + rng.uniform(0.2, 0.9)
                elif kind == "beyond":
                    a = rng.uniform(size / 2, size - 0.5)
                    b = size + rng.uniform(0.3, 2.5)
                else:
                    a = rng.uniform(0, size - 1.5)
                    b = rng.uniform(a + 0.6, size - 0.1)
                row.append((a / scale, b / scale))
            cand = V.representable(np.array([row[0][0], row[1][0], row[0][1], row[1][1]]), t)
            if _valid_roi(cand, ctx):
                out[i] = cand
                break
        else:
            raise ValueError("RoiAlign: no valid RoI drawn")
    return out


def _batch_indices(rng, ctx):
    n = ctx.shapes["X"][0]
    out = np.empty(ctx.shapes["batch_indices"], dtype=object)
    out.ravel()[:] = [int(v) for v in rng.integers(0, n, size=out.size)]
    return out


def roi_align_oracle(ctx, x, rois, batch_indices, **attrs):
    """:func:`conformance.reference.pool.roi_align` (the text's reading of ``max``)."""
    return ref.roi_align(x, rois, batch_indices, attrs, _half_pixel(ctx))


def _roi_align_tolerance(ctx, inputs, attrs, outputs):
    t = ctx.types["X"]
    x, rois, bi = inputs
    atol = ref.roi_align_bound(np.asarray(x, dtype=np.float64), np.asarray(rois, dtype=np.float64), bi, attrs,
                               _half_pixel(ctx), t)
    return {"Y": Tolerance(atol, 2.01 * float(V.finfo(t).eps) / 2, variants=("bound",))}


def _roi_check(ctx, inputs, attrs):
    if attrs.get("mode", "avg") != "max":
        return None
    return CHECK_ROI_MAX if ctx.version >= 16 else CHECK_ROI_MAX_V10


def _roi_contested(ctx, attrs):
    if attrs.get("mode", "avg") == "max":
        return ("mode=max: the text takes the max of the bilinearly interpolated samples, onnx's reference and "
                "onnxruntime the max of the weighted corner terms (onnx#4764); either reading passes")
    return None


def _cap(ctx) -> float:
    t = ctx.types["X"]
    acc_max = float(np.finfo(np.float64 if t == "double" else np.float32).max)
    return min(float(V.finfo(t).max) / 4, acc_max / 1024)


def _roi_wide(rng, ctx, shapes):
    t = ctx.types["X"]
    lo = math.log10(float(V.finfo(t).smallest_normal))
    mag = 10.0 ** rng.uniform(lo, math.log10(_cap(ctx)), size=shapes[0])
    return [V.representable(mag * rng.choice([-1.0, 1.0], size=shapes[0]), t)] + [None] * (len(shapes) - 1)


def _roi_special(rng, ctx, shapes):
    """Ordinary values with signed zeros, subnormals, the smallest normal and the no-overflow
    cap sprinkled (no NaN or infinity: module docstring)."""
    t = ctx.types["X"]
    fi = V.finfo(t)
    cap = float(V.representable(np.array([_cap(ctx)]), t)[0])
    sp = [0.0, -0.0, float(fi.smallest_subnormal), -float(fi.smallest_subnormal), float(fi.smallest_normal), cap,
          -cap]
    x = V.representable(rng.uniform(-4, 4, size=shapes[0]), t)
    flat = x.reshape(-1)
    for i, q in enumerate(rng.permutation(flat.size)[: max(len(sp), flat.size // 4)]):
        flat[q] = sp[i % len(sp)]
    return [x] + [None] * (len(shapes) - 1)


def _x_only(fn):
    """A numerics class of X alone (the structural RoIs and batch indices replace the rest)."""
    def wrapped(rng, ctx, shapes):
        out = fn(rng, ctx, shapes)
        return list(out) + [np.zeros(s) for s in shapes[len(out):]]
    wrapped.__name__ = wrapped.__qualname__ = getattr(fn, "__name__", "x_only")
    return wrapped


def _fill(fn):
    def wrapped(rng, ctx, shapes):
        out = fn(rng, ctx, shapes)
        return [out[0]] + [np.zeros(s) if v is None else v for s, v in zip(shapes[1:], out[1:])]
    wrapped.__name__ = wrapped.__qualname__ = getattr(fn, "__name__", "fill")
    return wrapped


def _roi_align_shapes() -> tuple[Shape, ...]:
    def sh(name, attrs, since=0, **kw):
        return Shape(name, {"X": "NCHW", "rois": "R4", "batch_indices": "R"}, attrs, since=since,
                     dims={**_DIMS, **kw.pop("dims", {})}, **kw)

    M = "coordinate_transformation_mode"
    return (
        sh("avg/1x1", {}),
        sh("avg/2x3/sr0", {"output_height": 2, "output_width": 3}),
        sh("avg/2x2/sr2", {"output_height": 2, "output_width": 2, "sampling_ratio": 2}),
        sh("avg/3x3/sr1/scale0.5", {"output_height": 3, "output_width": 3, "sampling_ratio": 1, "spatial_scale": 0.5}),
        sh("max/2x2/sr0", {"mode": "max", "output_height": 2, "output_width": 2}),
        sh("max/1x3/sr2", {"mode": "max", "output_height": 1, "output_width": 3, "sampling_ratio": 2}),
        sh("avg/2x2/half_pixel", {M: "half_pixel", "output_height": 2, "output_width": 2}, since=16),
        sh("avg/2x2/output_half_pixel", {M: "output_half_pixel", "output_height": 2, "output_width": 2}, since=16),
        sh("max/2x2/output_half_pixel", {M: "output_half_pixel", "mode": "max", "output_height": 2,
                                         "output_width": 2}, since=16),
        sh("zero-rois", {"output_height": 2, "output_width": 2}, dims={"R": (0, 0)}, cycle=False),
    )


_X4 = ((1, 1, 4, 4), (2, 4), (2,))
ROIALIGN = Entry(
    "RoiAlign", roi_align_oracle, family="shaped", shapes=_roi_align_shapes(),
    structural={"rois": _rois, "batch_indices": _batch_indices},
    attrs=(Attrs({"spatial_scale": 0.5}, tag="scale0.5"), Attrs({"sampling_ratio": 3}, tag="sr3")),
    float_numerics={"wide": _fill(_roi_wide), "special": _fill(_roi_special), "large-offset": _x_only(_large_offset)},
    tolerance=_roi_align_tolerance, check=_roi_check, contested=_roi_contested, per_type=12,
    errors=(
        Err("rois is 'of shape (num_rois, 4)': 5 columns", "rois-shape", shapes=((1, 1, 4, 4), (2, 5), (2,))),
        Err("batch_indices has one element per RoI ('1:1 correspondence'): 3 for 2 RoIs", "batch_indices-length",
            shapes=((1, 1, 4, 4), (2, 4), (3,))),
        Err("X is a 4-D feature map (N, C, H, W): rank 3", "X-rank", shapes=((1, 4, 4), (2, 4), (2,))),
        Err("mode is 'avg' or 'max': 'sum'", "mode-value", attrs={"mode": "sum"}, shapes=_X4),
        Err("coordinate_transformation_mode allows 'half_pixel' and 'output_half_pixel': 'align_corners'",
            "coordinate_transformation_mode-value", attrs={"coordinate_transformation_mode": "align_corners"},
            shapes=_X4, since=16),
    ),
    notes={16: "coordinate_transformation_mode (default half_pixel: a -0.5 pixel shift that version 10 lacks)",
           22: "bfloat16"},
)


# ============================================================================ MaxRoiPool
def _roi5(rng, ctx):
    """RoIs ``[batch_id, x1, y1, x2, y2]`` with corners at quarter pixels of the feature map
    (module docstring), redrawn until the float32 bin limits equal the exact ones."""
    t = ctx.types["rois"]
    r = ctx.shapes["rois"][0]
    n, h, w = ctx.shapes["X"][0], ctx.shapes["X"][2], ctx.shapes["X"][3]
    scale = float(ctx.attrs.get("spatial_scale", 1.0))
    pooled = list(ctx.attrs["pooled_shape"])
    out = np.zeros((r, 5))
    for i in range(r):
        for _ in range(1000):
            fr = [0.0, 0.25, 0.75]
            x1 = int(rng.integers(0, w - 1)) + fr[int(rng.integers(3))]
            y1 = int(rng.integers(0, h - 1)) + fr[int(rng.integers(3))]
            x2 = x1 + int(rng.integers(0, w + 1)) + fr[int(rng.integers(3))]
            y2 = y1 + int(rng.integers(0, h + 1)) + fr[int(rng.integers(3))]
            cand = np.array([float(rng.integers(0, n)), x1 / scale, y1 / scale, x2 / scale, y2 / scale])
            if not np.array_equal(V.representable(cand, t), cand):
                continue
            exact = ref.max_roi_pool_bins(cand, h, w, pooled, scale, exact=True)
            f32 = ref.max_roi_pool_bins(cand, h, w, pooled, scale, exact=False)
            if exact == f32:
                out[i] = cand
                break
        else:
            raise ValueError("MaxRoiPool: no valid RoI drawn")
    return out


def max_roi_pool_oracle(ctx, x, rois, **attrs):
    """:func:`conformance.reference.pool.max_roi_pool`."""
    return ref.max_roi_pool(x, rois, attrs)


def _max_roi_shapes() -> tuple[Shape, ...]:
    def sh(name, attrs, **kw):
        return Shape(name, {"X": "NCHW", "rois": "R5"}, attrs, dims={**_DIMS, **kw.pop("dims", {})}, **kw)

    P = "pooled_shape"
    return (
        sh("1x1", {P: [1, 1]}),
        sh("2x2", {P: [2, 2]}),
        sh("3x2", {P: [3, 2]}),
        sh("2x3/scale0.5", {P: [2, 3], "spatial_scale": 0.5}),
        sh("4x4/bins-smaller-than-pixels", {P: [4, 4]}, dims={"H": (4, 5), "W": (4, 5)}),
        sh("zero-rois", {P: [2, 2]}, dims={"R": (0, 0)}, cycle=False),
    )


MAXROIPOOL = Entry(
    "MaxRoiPool", max_roi_pool_oracle, family="shaped", shapes=_max_roi_shapes(), structural={"rois": _roi5},
    attrs=(Attrs({"pooled_shape": [2, 2]}, tag="pooled-only"),
           Attrs({"pooled_shape": [2, 2], "spatial_scale": 1.0}, tag="explicit-default"),
           Attrs({"pooled_shape": [2, 2], "spatial_scale": 0.25}, tag="scale0.25")),
    nan=False, per_type=12,
    errors=(Err("rois is [[batch_id, x1, y1, x2, y2], ...]: 4 columns", "rois-shape",
                attrs={"pooled_shape": [2, 2]}, shapes=((1, 1, 4, 4), (2, 4))),
            Err("pooled_shape is (height, width): 3 values", "pooled_shape-length",
                attrs={"pooled_shape": [2, 2, 2]}, shapes=((1, 1, 4, 4), (2, 5)))),
    notes={22: "bfloat16"},
)


ENTRIES = (ROIALIGN, MAXROIPOOL)
register_entries(ENTRIES, family="pool")
