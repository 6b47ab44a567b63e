"""The resampling operators as entries of the operator table (family ``shaped``): Resize
(10, 11, 13, 18, 19), Upsample (1, 7, 9, 10), GridSample (16, 20, 22), AffineGrid (20), and
the onnxruntime-defined com.microsoft GridSample (1) and CropAndResize (1).

Oracles, coordinate rules and the error bound: :mod:`conformance.reference.resample`.  What
the entries add to the schema:

**Resize.**  A table of patterns (:data:`RESIZE_ROWS`), each a fixed input shape with its
``scales`` or ``sizes`` (and ``roi``) values and the attributes it is about: every mode
(nearest, linear, cubic), every coordinate_transformation_mode of each version (11's
``tf_half_pixel_for_nn``, 19's ``half_pixel_symmetric``), the four nearest_modes with exact
ties (downsampling by 2 under half_pixel puts every coordinate on a half), cubic_coeff_a,
exclude_outside, antialias (18+) for linear and cubic downsampling, axes (18+, negative
too), keep_aspect_ratio_policy (18+), scales and sizes (11: sizes with an empty scales; 13+:
one of them omitted), roi with extrapolation (tf_crop_and_resize), upsampling and
downsampling, an output length of 1 (pytorch_half_pixel's special case), identity, ranks 1-5,
an empty input, and onnx's node-test examples.  Attribute states beyond the patterns'
(:data:`RESIZE_STATES`): each nearest_mode, ``cubic_coeff_a = -0.5``, ``exclude_outside``,
``extrapolation_value = 3``, antialias, both aspect-ratio policies.  ``roi`` is present (the
identity ``[0.., 1..]``) or omitted alternately in the patterns that do not crop.

* Types: every T1 (strings, bools and complex take the nearest mode: a weighted average of
  strings or bools is undefined, and complex linear/cubic is left out; a pattern of another
  mode becomes nearest for them, with tf_crop_and_resize turned into asymmetric for strings
  and bools, whose extrapolation_value has no conversion); every T2 (roi's type).  Integer
  types: nearest over the whole range (``int``, ``int-extremes``); linear/cubic only with
  data that are multiples of ``2^k`` so that every result is an exact integer
  (:func:`conformance.reference.resample.dyadic_unit`; the text does not say how a
  fractional result becomes an integer), and a pattern whose weights are not dyadic becomes
  nearest for integer types.
* Tolerance (:func:`resize_tolerance`): nearest and integer outputs exact (the sign of zero
  checked: nearest moves data); linear/cubic the bound of
  :func:`conformance.reference.resample.resize_error_bound` (float32 coordinates, weights and
  intermediates) plus one ulp of T.
* Contested (``Case.contested``): keep_aspect_ratio_policy other than stretch with scales
  (the text ignores the policy, onnx's shape inference rejects the model); ``in * scale`` not an integer where the two readings of
  ``scale`` (the scale factor, which onnx.reference and onnxruntime use, or the text's
  ``length_resized / length_original``) give different weights (not half_pixel_symmetric,
  whose adjustment only makes sense with the factor); linear at version 10 (the text defines
  no coordinate mapping before 11; the oracle uses ``x / scale`` as Upsample did).
* Errors: scales and sizes both given (11: a non-empty scales with sizes), neither given
  (13+), a scale of 0 or negative, scales/sizes/roi of the wrong length, unknown mode /
  coordinate_transformation_mode (``tf_half_pixel_for_nn`` after 11, ``half_pixel_symmetric``
  before 19) / nearest_mode / keep_aspect_ratio_policy, axes out of range.  A repeated axis
  is *not* an error case: the text says "Behavior is undefined if an axis is repeated".

**Upsample.**  Versions 7 (scales attribute) and 9 (scales input): nearest as the texts'
example shows (``floor(x / scale)``: the pick along a width scaled by 3 is 0, 0, 0, 1, 1, 1),
scales >= 1 ("It takes value greater than or equal to 1"), every type; linear is contested
(no coordinate mapping in the text; oracle ``x / scale``).  Version 10 is deprecated: every
case is contested (onnx's checker rejects a deprecated operator), and error cases for a
scale below 1.  Version 1 (EXPERIMENTAL in the schema: height_scale/width_scale on 4-D input,
nearest or bilinear) is generated and contested.

**GridSample.**  torch.nn.functional.grid_sample's conventions, which the text refers to
(:func:`conformance.reference.resample.grid_sample`): a grid value ``g`` is the pixel coordinate
``(g + 1) / 2 (L - 1)`` (align_corners) or ``((g + 1) L - 1) / 2``; the grid's last axis lists
coordinates innermost first; ``zeros`` reads 0 outside, ``border`` clips the location,
``reflection`` reflects it by the corner pixels' centers (align_corners) or their outer edges
and then clips (the text's example: -3.5 -> 1.5 -> 0.5); cubic takes the four taps of the
unpadded location and pads each tap (torch's bicubic); nearest rounds a half to even (version
20's text; torch's nearbyint for 16).  Patterns (:data:`GRID_ROWS`): every mode, padding mode
and align_corners, a spatial size of 1, an empty grid; from 20 the 5-D and 3-D (one spatial
axis) forms.  The grid is drawn per case (:func:`grid_values`): -1, 1, 0, the corner pixels'
centers and edges, exact halves, far outside (several reflections), uniform draws; nearest
points that float32 coordinates could pick differently are drawn again; cubic with border
padding stays inside the pixel range, where clipping the location (the text's "border values
for out-of-bound grid locations") and torch's per-tap padding agree.  Integer, string, bool and
complex X take nearest (strings and bools with border padding: a zero of no defined
conversion).  Tolerance as Resize's (:func:`conformance.reference.resample.grid_error_bound`).
Errors: 5-D X at 16, the grid's last dimension, batch or rank mismatch, the other version's
mode names, an unknown padding mode.

**AffineGrid.**  ``theta @ [x, y, (z,) 1]`` over torch.affine_grid's base positions
(``(2i + 1)/L - 1``, or ``-1 + 2i/(L-1)`` with align_corners; 0 for a length of 1), 2-D and
3-D, empty; a spatial size of 1 with align_corners is contested (the text makes -1 and 1 the
same pixel center: torch 0, onnx.reference -1, onnxruntime +1).  Tolerance ``8 u sum |theta||b|``
with ``u`` the coarser of T's and float32's.

**com.microsoft GridSample and CropAndResize (onnxruntime-defined).**  GridSample-16's
semantics (4-D, bilinear/nearest/bicubic) with Grid of X's type T1 and Y of T2; T1 != T2 is
contested (the contrib schema admits it, its type inference gives Y the type of X), string,
bool and complex T1 are declared unbuildable.  CropAndResize is TensorFlow's crop_and_resize
in the output's NCHW layout: per RoI ``[y1, x1, y2, x2]`` Resize's tf_crop_and_resize along H
and W (the box's center for a crop of 1, flipped boxes flip, outside: extrapolation_value),
bilinear or nearest (no exact tie is generated: the text does not say how it rounds).
"""

from __future__ import annotations

from functools import lru_cache

import numpy as np

from ..reference import resample as ref
from ..tolerance import Tolerance
from . import values as V
from .engine import register_entries
from .entry import Attrs, Entry, Err, Shape

NEAREST_ONLY = ("string", "bool", "complex64", "complex128")
MS = "com.microsoft"


# ============================================================================ pattern table
def _tpl(shape) -> str:
    return "".join(str(d) for d in shape)


#: (name, X shape, attributes, "scales" or "sizes", values, roi or None, since, until).  Rows
#: with ``roi`` use tf_crop_and_resize; the others get the identity roi where roi is present.
RESIZE_ROWS = (
    # ---- nearest
    ("nearest/up/node-example", (1, 1, 2, 2), {}, "scales", [1, 1, 2, 3], None, 11, 99),
    ("nearest/down/node-example", (1, 1, 2, 4), {"nearest_mode": "round_prefer_floor"}, "scales", [1, 1, 0.6, 0.6],
     None, 11, 99),
    ("nearest/ties/down2", (1, 2, 4, 6), {}, "scales", [1, 1, 0.5, 0.5], None, 11, 99),
    ("nearest/ties/round_prefer_ceil", (1, 1, 4, 6), {"nearest_mode": "round_prefer_ceil"}, "scales",
     [1, 1, 0.5, 0.5], None, 11, 99),
    ("nearest/floor/up2", (1, 1, 3, 4), {"nearest_mode": "floor"}, "scales", [1, 1, 2, 2], None, 11, 99),
    ("nearest/ceil/up2", (1, 1, 3, 4), {"nearest_mode": "ceil"}, "scales", [1, 1, 2, 2], None, 11, 99),
    ("nearest/asymmetric/up", (1, 1, 2, 3), {"coordinate_transformation_mode": "asymmetric"}, "scales",
     [1, 1, 3, 2], None, 11, 99),
    ("nearest/asymmetric/ceil", (1, 1, 3, 2), {"coordinate_transformation_mode": "asymmetric",
                                               "nearest_mode": "ceil"}, "scales", [1, 1, 1.5, 2.5], None, 11, 99),
    ("nearest/align_corners/ties", (1, 1, 3, 4), {"coordinate_transformation_mode": "align_corners"}, "sizes",
     [1, 1, 5, 7], None, 11, 99),
    ("nearest/pytorch_half_pixel/len1", (1, 1, 4, 5), {"coordinate_transformation_mode": "pytorch_half_pixel"},
     "sizes", [1, 1, 1, 3], None, 11, 99),
    ("nearest/tf_half_pixel_for_nn", (1, 1, 4, 4), {"coordinate_transformation_mode": "tf_half_pixel_for_nn"},
     "scales", [1, 1, 0.5, 1.5], None, 11, 11),
    ("nearest/tf_crop_and_resize", (1, 1, 4, 4), {"extrapolation_value": 3.0}, "sizes", [1, 1, 3, 3],
     [0, 0, -0.5, 0.25, 1, 1, 1.0, 1.25], 11, 99),
    ("nearest/half_pixel_symmetric", (1, 1, 4, 5), {"coordinate_transformation_mode": "half_pixel_symmetric"},
     "scales", [1, 1, 1.25, 0.75], None, 19, 99),
    ("nearest/identity", (2, 3, 4, 5), {}, "scales", [1, 1, 1, 1], None, 11, 99),
    ("nearest/sizes/out-len-1", (1, 1, 3, 4), {}, "sizes", [1, 1, 1, 1], None, 11, 99),
    ("nearest/rank1", (5,), {}, "scales", [2.0], None, 11, 99),
    ("nearest/rank3", (2, 4, 4), {"nearest_mode": "floor"}, "scales", [1, 1.5, 0.5], None, 11, 99),
    ("nearest/rank5", (1, 1, 2, 3, 2), {}, "scales", [1, 1, 2, 1, 1.5], None, 11, 99),
    ("nearest/zero-size", (2, 0, 3, 2), {}, "scales", [1, 1, 2, 2], None, 11, 99),
    ("nearest/axes=2,3", (1, 2, 3, 4), {"axes": [2, 3]}, "scales", [2, 0.5], None, 18, 99),
    ("nearest/axes=-1/sizes", (2, 3, 4), {"axes": [-1]}, "sizes", [8], None, 18, 99),
    ("nearest/keep_aspect/not_larger", (1, 1, 4, 6), {"axes": [2, 3], "keep_aspect_ratio_policy": "not_larger"},
     "sizes", [8, 9], None, 18, 99),
    # ---- linear
    ("linear/up/node-example", (1, 1, 2, 2), {"mode": "linear"}, "scales", [1, 1, 2, 2], None, 11, 99),
    ("linear/down/node-example", (1, 1, 2, 4), {"mode": "linear", "nearest_mode": "round_prefer_floor"}, "scales",
     [1, 1, 0.6, 0.6], None, 11, 99),
    ("linear/up", (2, 2, 3, 4), {"mode": "linear"}, "scales", [1, 1, 2, 1.5], None, 11, 99),
    ("linear/down", (1, 2, 6, 8), {"mode": "linear"}, "scales", [1, 1, 0.5, 0.75], None, 11, 99),
    ("linear/asymmetric", (1, 1, 3, 4), {"mode": "linear", "coordinate_transformation_mode": "asymmetric"},
     "scales", [1, 1, 2, 1.5], None, 11, 99),
    ("linear/align_corners", (1, 1, 3, 5), {"mode": "linear", "coordinate_transformation_mode": "align_corners"},
     "sizes", [1, 1, 5, 9], None, 11, 99),
    ("linear/pytorch_half_pixel/len1", (1, 1, 4, 4), {"mode": "linear",
                                                      "coordinate_transformation_mode": "pytorch_half_pixel"},
     "sizes", [1, 1, 1, 3], None, 11, 99),
    ("linear/tf_crop_and_resize", (1, 1, 4, 5), {"mode": "linear", "extrapolation_value": 3.0}, "sizes",
     [1, 1, 3, 4], [0, 0, 0.25, -0.25, 1, 1, 0.75, 0.5], 11, 99),
    ("linear/tf_crop_and_resize/same-size", (1, 1, 4, 5), {"mode": "linear"}, "sizes", [1, 1, 4, 5],
     [0, 0, 0.25, -0.25, 1, 1, 0.75, 0.5], 11, 99),  # the output has X's shape, the crop still moves it
    ("linear/tf_crop_and_resize/scales", (1, 1, 4, 4), {"mode": "linear"}, "scales", [1, 1, 2, 2],
     [0, 0, -0.25, 0.25, 1, 1, 0.75, 1.25], 11, 99),
    ("linear/antialias/down", (1, 1, 8, 8), {"mode": "linear", "antialias": 1}, "scales", [1, 1, 0.5, 0.25],
     None, 18, 99),
    ("linear/antialias/sizes", (1, 2, 6, 9), {"mode": "linear", "antialias": 1}, "sizes", [1, 2, 4, 3],
     None, 18, 99),
    ("linear/half_pixel_symmetric", (1, 1, 4, 5), {"mode": "linear",
                                                   "coordinate_transformation_mode": "half_pixel_symmetric"},
     "scales", [1, 1, 1.25, 0.75], None, 19, 99),
    ("linear/keep_aspect/not_smaller", (1, 1, 4, 6), {"mode": "linear", "axes": [2, 3],
                                                      "keep_aspect_ratio_policy": "not_smaller"},
     "sizes", [8, 9], None, 18, 99),
    ("linear/keep_aspect/not_larger", (1, 1, 4, 6), {"mode": "linear", "keep_aspect_ratio_policy": "not_larger"},
     "sizes", [1, 1, 8, 9], None, 18, 99),
    ("linear/keep_aspect/rounding", (1, 1, 3, 5), {"mode": "linear", "axes": [2, 3],
                                                   "keep_aspect_ratio_policy": "not_larger"},
     "sizes", [4, 4], None, 18, 99),
    ("linear/axes=1", (2, 3, 4), {"mode": "linear", "axes": [1]}, "scales", [2.0], None, 18, 99),
    ("linear/rank3", (2, 4, 4), {"mode": "linear"}, "scales", [1, 0.5, 1.5], None, 11, 99),
    ("linear/rank5", (1, 1, 2, 2, 4), {"mode": "linear"}, "scales", [1, 1, 2, 1.5, 0.5], None, 11, 99),
    ("linear/rank1", (6,), {"mode": "linear"}, "scales", [0.5], None, 11, 99),
    ("linear/identity", (2, 3, 4, 5), {"mode": "linear"}, "scales", [1, 1, 1, 1], None, 11, 99),
    ("linear/out-len-1", (1, 1, 4, 5), {"mode": "linear"}, "sizes", [1, 1, 1, 1], None, 11, 99),
    ("linear/zero-size", (0, 1, 2, 2), {"mode": "linear"}, "scales", [1, 1, 2, 2], None, 11, 99),
    # ---- cubic
    ("cubic/up/node-example", (1, 1, 4, 4), {"mode": "cubic"}, "scales", [1, 1, 2, 2], None, 11, 99),
    ("cubic/down/node-example", (1, 1, 4, 4), {"mode": "cubic"}, "scales", [1, 1, 0.8, 0.8], None, 11, 99),
    ("cubic/a=-0.5", (1, 1, 4, 4), {"mode": "cubic", "cubic_coeff_a": -0.5}, "scales", [1, 1, 2, 2], None, 11, 99),
    ("cubic/exclude_outside", (1, 1, 4, 4), {"mode": "cubic", "cubic_coeff_a": -0.5, "exclude_outside": 1},
     "scales", [1, 1, 2, 2], None, 11, 99),
    ("cubic/exclude_outside/down", (1, 1, 6, 8), {"mode": "cubic", "exclude_outside": 1}, "scales",
     [1, 1, 0.5, 0.5], None, 11, 99),
    ("cubic/align_corners", (1, 1, 4, 4), {"mode": "cubic", "coordinate_transformation_mode": "align_corners"},
     "sizes", [1, 1, 7, 7], None, 11, 99),
    ("cubic/asymmetric", (1, 1, 4, 4), {"mode": "cubic", "coordinate_transformation_mode": "asymmetric"},
     "scales", [1, 1, 2, 1.5], None, 11, 99),
    ("cubic/pytorch_half_pixel/len1", (1, 1, 4, 4), {"mode": "cubic",
                                                     "coordinate_transformation_mode": "pytorch_half_pixel"},
     "sizes", [1, 1, 1, 3], None, 11, 99),
    ("cubic/tf_crop_and_resize", (1, 1, 5, 5), {"mode": "cubic", "extrapolation_value": 3.0}, "sizes",
     [1, 1, 3, 4], [0, 0, 0.25, -0.25, 1, 1, 0.75, 0.5], 11, 99),
    ("cubic/antialias/down", (1, 1, 8, 8), {"mode": "cubic", "antialias": 1}, "scales", [1, 1, 0.5, 0.5],
     None, 18, 99),
    ("cubic/antialias/exclude_outside", (1, 1, 6, 8), {"mode": "cubic", "antialias": 1, "exclude_outside": 1},
     "sizes", [1, 1, 3, 3], None, 18, 99),
    ("cubic/half_pixel_symmetric", (1, 1, 4, 5), {"mode": "cubic",
                                                  "coordinate_transformation_mode": "half_pixel_symmetric"},
     "scales", [1, 1, 1.25, 0.75], None, 19, 99),
    ("cubic/down", (1, 2, 8, 6), {"mode": "cubic"}, "scales", [1, 1, 0.5, 0.5], None, 11, 99),
    ("cubic/rank3/axes", (2, 4, 4), {"mode": "cubic", "axes": [-2, -1]}, "scales", [1.5, 0.5], None, 18, 99),
    ("cubic/rank2", (4, 5), {"mode": "cubic"}, "scales", [1.75, 2.0], None, 11, 99),
    # ---- version 10 (no coordinate mode: x / scale, nearest by floor as the example shows)
    ("v10/nearest/up", (1, 1, 2, 2), {}, "scales", [1, 1, 2, 3], None, 10, 10),
    ("v10/nearest/down", (1, 1, 4, 6), {}, "scales", [1, 1, 0.5, 0.5], None, 10, 10),
    ("v10/nearest/rank3", (2, 3, 2), {}, "scales", [1, 2, 2], None, 10, 10),
    ("v10/nearest/rank1", (3,), {}, "scales", [2.0], None, 10, 10),
    ("v10/nearest/identity", (2, 3), {}, "scales", [1, 1], None, 10, 10),
    ("v10/nearest/zero-size", (0, 3), {}, "scales", [1, 2], None, 10, 10),
    ("v10/linear/up", (1, 1, 2, 3), {"mode": "linear"}, "scales", [1, 1, 2, 2], None, 10, 10),
)


def _row_patterns(row) -> list[Shape]:
    """The :class:`Shape` patterns of one row: version 10's (X, scales); 11's (roi always
    present: the identity or the row's crop; an empty scales with sizes) and 13+'s (roi
    present or omitted; scales or sizes omitted)."""
    name, x, attrs, kind, vals, roi, since, until = row
    attrs = dict(attrs)
    n = len(attrs.get("axes", x))
    out = []
    if roi is not None:
        attrs["coordinate_transformation_mode"] = "tf_crop_and_resize"
    ident = [0.0] * n + [1.0] * n
    if since <= 10:
        out.append(Shape(name, {"X": _tpl(x), "scales": str(len(vals))}, attrs, since=10, until=10,
                         values={"scales": vals}))
        return out
    if since <= 11 <= until:
        r = roi if roi is not None else ident
        values = {"roi": r, "scales": vals if kind == "scales" else []}
        tpl = {"X": _tpl(x), "roi": str(len(r)) if len(r) < 10 else "R",
               "scales": str(len(vals)) if kind == "scales" else "0"}
        opt: tuple = ((),)
        if kind == "sizes":
            values["sizes"] = vals
            tpl["sizes"] = str(len(vals))
            opt = (("sizes",),)
        out.append(Shape(f"{name}@11", tpl, attrs, since=11, until=11, values=values, optional=opt,
                         dims={"R": (len(r), len(r))}))
    if until >= 13:
        r = roi if roi is not None else ident
        values = {"roi": r, kind: vals}
        tpl = {"X": _tpl(x), "roi": str(len(r)) if len(r) < 10 else "R", kind: str(len(vals))}
        opt = ((("roi", kind),) if roi is not None else ((kind,), ("roi", kind)))
        out.append(Shape(name, tpl, attrs, since=max(since, 13), until=until, values=values, optional=opt,
                         dims={"R": (len(r), len(r))}))
    return out


def _resize_shapes() -> tuple[Shape, ...]:
    """Every row's patterns, the modes interleaved (nearest, linear, cubic, ...): a
    combination that sweeps a window of the table (the integer types) meets every mode."""
    groups: dict[str, list] = {}
    for row in RESIZE_ROWS:
        groups.setdefault(row[0].split("/")[0], []).append(row)
    order = []
    while any(groups.values()):
        for g in list(groups):
            if groups[g]:
                order.append(groups[g].pop(0))
    out = []
    for row in order:
        out += _row_patterns(row)
    return tuple(out)


RESIZE_SHAPES = _resize_shapes()
_BY_NAME = {sh.name: sh for sh in RESIZE_SHAPES}


# ============================================================================ helpers
def _value(ctx, inputs, name):
    """The present input ``name`` (exact) or None."""
    return inputs.get(name)


def _named(ctx, args) -> dict:
    """Resize's inputs by formal name (absent: missing)."""
    names = ["X", "roi", "scales", "sizes"] if ctx.version >= 11 else ["X", "scales"]
    return {n: a for n, a in zip(names, args) if a is not None}


def _plan(ctx, named, attrs, check=True):
    version = ctx.version
    x = named["X"]
    scales = named.get("scales")
    if ctx.op == "Upsample":
        version = 10
        if ctx.version == 7:
            scales = attrs["scales"]
        if ctx.version == 1:
            scales = [1.0, 1.0, attrs["height_scale"], attrs["width_scale"]]
            attrs = {**attrs, "mode": "linear" if attrs.get("mode") == "bilinear" else attrs.get("mode", "nearest")}
        if scales is not None and any(float(v) < 1 for v in np.ravel(scales)):
            raise ValueError("Upsample: scales takes values greater than or equal to 1")
    kw = {k: v for k, v in attrs.items() if k not in ("scales", "height_scale", "width_scale")}
    return ref.cached_plan(version, np.shape(x), named.get("roi"), scales, named.get("sizes"), check=check, **kw)


# ============================================================================ oracle
def resize_oracle(ctx, *args, **attrs):
    """Resize-10/11/13/18/19 and Upsample-7/9/10 of the exact inputs
    (:func:`conformance.reference.resample.resize`; module docstring)."""
    named = _named(ctx, args) if ctx.op == "Resize" else {"X": args[0], **({"scales": args[1]} if len(args) > 1
                                                                            else {})}
    plan = _plan(ctx, named, attrs)
    return ref.apply_plan_exact(plan, named["X"])


def resize_tolerance(ctx, inputs, attrs, outputs):
    """Nearest and integer outputs exact (nearest: sign of zero checked); linear/cubic:
    ``atol`` = the largest :func:`conformance.reference.resample.resize_error_bound` plus
    32 subnormals (products that underflow), ``rtol`` = one ulp of T (the kernel's and the
    expectation's roundings)."""
    t = ctx.out_types["Y"]
    named = (_named(ctx, inputs) if ctx.op == "Resize" else
             {"X": inputs[0], **({"scales": inputs[1]} if len(inputs) > 1 and inputs[1] is not None else {})})
    plan = _plan(ctx, named, attrs, check=False)
    if plan.mode == "nearest":
        return {"Y": Tolerance(0.0, 0.0, exact=True, signed_zero=V.kind(t) == V.FLOAT)}
    if V.kind(t) != V.FLOAT:
        return {"Y": Tolerance(0.0, 0.0, exact=True)}
    fi = V.finfo(t)
    b = ref.resize_error_bound(plan, named["X"])
    b = b[np.isfinite(b)]
    sub = max(float(fi.smallest_subnormal), 2.0 ** -149 if t != "double" else 0.0)
    atol = (float(b.max()) if b.size else 0.0) + 32 * sub
    return {"Y": Tolerance(atol, float(fi.eps), variants=("f32-coordinates-weights",))}


def _mode_of(attrs) -> str:
    return attrs.get("mode", "nearest")


# ============================================================================ numerics
def _float_t(ctx) -> str:
    return ctx.types["X"]


def _rest(rng, ctx, shapes):
    """Placeholders for the structural inputs (the pattern's values replace them)."""
    return [np.zeros(s) for s in shapes[1:]]


def resize_wide(rng, ctx, shapes):
    """Numerics class ``wide``: log-uniform magnitudes from 2^10 smallest normals to max/16
    (cubic's negative lobes overshoot; max/16 keeps every result finite)."""
    t = _float_t(ctx)
    fi = V.finfo(t)
    lo, hi = np.log2(float(fi.smallest_normal)) + 10, np.log2(float(fi.max)) - 4
    n = int(np.prod(shapes[0], dtype=np.int64))
    x = rng.choice([-1.0, 1.0], size=n) * 2.0 ** rng.uniform(lo, hi, size=n)
    return [V.representable(x.reshape(shapes[0]), t)] + _rest(rng, ctx, shapes)


def resize_special(rng, ctx, shapes):
    """Numerics class ``special``: ordinary values in [-2, 2] with a quarter of the elements
    replaced by special values: every one of the type's (NaN, +-inf, +-0, subnormals, +-max)
    for nearest (data movement); the finite, non-overflowing ones (+-0, subnormals, the
    smallest normal, +-1/2, +-2) for linear/cubic, where a NaN or infinity reaches the outputs
    whose zero-weight taps a kernel may or may not multiply (``0 * inf``: the text does not
    say)."""
    t = _float_t(ctx)
    x = V.representable(rng.uniform(-2, 2, size=shapes[0]), t)
    vals = V.float_specials(t)
    if _mode_of(ctx.attrs) != "nearest":
        fmax = float(V.finfo(t).max)
        vals = [v for v in vals if np.isfinite(v) and abs(v) < fmax / 4]
    flat = x.reshape(-1)
    if flat.size:
        k = min(flat.size, max(len(vals), flat.size // 4))
        pos = rng.permutation(flat.size)[:k]
        for i, q in enumerate(pos):
            flat[q] = vals[i % len(vals)]
    return [x] + _rest(rng, ctx, shapes)


def _int_data(rng, ctx, shapes, extremes: bool):
    """Integer classes: nearest takes the whole range (``int-extremes``: only the type's
    extremes and their neighbours); linear/cubic multiples of ``2^k`` (the plan's dyadic
    unit) bounded so that every weighted sum stays inside the type and below 2^22 (exact in
    float32 arithmetic)."""
    t = ctx.types["X"]
    info = V.iinfo(t)
    lo, hi = int(info.min), int(info.max)
    shape = shapes[0]
    n = int(np.prod(shape, dtype=np.int64))
    out = np.empty(shape, dtype=object)
    if _mode_of(ctx.attrs) == "nearest":
        if extremes:
            ext = sorted({lo, lo + 1, hi, hi - 1, 0, 1})
            out.ravel()[:] = [ext[int(i)] for i in rng.integers(len(ext), size=n)]
        else:
            out.ravel()[:] = [int(v) for v in V.sample_int(rng, (n,), t).ravel()]
        return [out] + _rest(rng, ctx, shapes)
    plan = _plan(ctx, {"X": np.zeros(shape), **{k: v for k, v in ctx.values.items()}}, ctx.attrs, check=False)
    k = ref.dyadic_unit(plan) or 0
    gain = 1.0
    for p in plan.axes:
        if p.W.size:
            gain *= float(np.abs(p.W).sum(axis=1).max())
    bound = min(hi, -lo if lo < 0 else hi, 2 ** 22) / (2.0 * gain)
    m = int(bound // 2 ** k)
    if lo < 0:
        ms = rng.integers(-m, m + 1, size=n) if m > 0 else np.zeros(n, dtype=np.int64)
    else:
        ms = rng.integers(0, m + 1, size=n) if m > 0 else np.zeros(n, dtype=np.int64)
    if extremes and m > 0 and n >= 2:
        ms[0], ms[-1] = m, (-m if lo < 0 else 0)
    out.ravel()[:] = [int(v) * 2 ** k for v in ms]
    return [out] + _rest(rng, ctx, shapes)


def resize_int(rng, ctx, shapes):
    return _int_data(rng, ctx, shapes, False)


def resize_int_extremes(rng, ctx, shapes):
    return _int_data(rng, ctx, shapes, True)


# ============================================================================ attributes by type
@lru_cache(maxsize=None)
def _dyadic_pattern(name: str, state: tuple = ()) -> bool:
    """Whether the pattern's linear/cubic weights (with the attribute state ``state``
    under the pattern's attributes) are dyadic rationals (exact integer results for integer
    data that are multiples of ``2^k``)."""
    sh = _BY_NAME[name]
    vals = dict(sh.values)
    shape = tuple(int(c) for c in sh.inputs["X"])
    version = sh.until if sh.until <= 11 else 19
    try:
        plan = ref.resize_plan(version, shape, vals.get("roi"), vals.get("scales"), vals.get("sizes"), check=False,
                               **{**dict(state), **dict(sh.attrs)})
    except ValueError:
        return False
    return ref.dyadic_unit(plan) is not None



def resize_drawn_attrs(rng, point) -> dict:
    """Attributes a type fixes per pattern (no draw): strings, bools and complex take the
    nearest mode (and asymmetric for a tf_crop_and_resize pattern of strings and bools: their
    extrapolation_value has no conversion); integer types take nearest where the pattern's
    weights are not dyadic (module docstring)."""
    types = dict(point.types)
    t = types.get("T1", types.get("T"))
    sh = _BY_NAME.get(point.shape)
    if sh is None:
        return {}
    out = {}
    mode = sh.attrs.get("mode", dict(point.attrs).get("mode", "nearest"))
    if t in NEAREST_ONLY:
        if mode != "nearest":
            out["mode"] = "nearest"
        if t in ("string", "bool") and sh.attrs.get("coordinate_transformation_mode") == "tf_crop_and_resize":
            out["coordinate_transformation_mode"] = "asymmetric"
    elif V.kind(t) == V.INT and mode != "nearest" and not _dyadic_pattern(point.shape, tuple(point.attrs)):
        out["mode"] = "nearest"
    return out


def resize_contested(ctx, attrs):
    """Module docstring: the two readings of ``scale``; linear at version 10."""
    if ctx.op == "Upsample" and ctx.version == 10:
        return UPSAMPLE10_CONTESTED
    if ctx.op == "Upsample" and ctx.version == 1:
        return UPSAMPLE1_CONTESTED
    if _mode_of(attrs) in ("linear", "bilinear") and (ctx.op == "Upsample" or ctx.version == 10):
        return LEGACY_LINEAR_CONTESTED
    vals = dict(ctx.values)
    if ctx.op == "Resize" and ctx.version >= 18 and attrs.get("keep_aspect_ratio_policy", "stretch") != "stretch" \
            and np.size(vals.get("scales", [])) > 0:
        return POLICY_SCALES_CONTESTED
    if ctx.op == "Resize" and ctx.version >= 11 and attrs.get("coordinate_transformation_mode") != \
            "half_pixel_symmetric":
        try:
            differ = ref.scale_readings_differ(ctx.version, ctx.shapes["X"], vals.get("roi"), vals.get("scales"),
                                               vals.get("sizes"), attrs)
        except ValueError:
            differ = False
        if differ:
            return SCALE_CONTESTED
    return None


SCALE_CONTESTED = ("input_dimension * scale is not an integer: the text defines scale = length_resized / "
                   "length_original, onnx.reference and onnxruntime use the scale factor (the scales value, or "
                   "the aspect-ratio scale); the oracle uses the factor, and the two give different weights")
LEGACY_LINEAR_CONTESTED = ("linear before Resize-11 (Upsample, Resize-10): the text defines no coordinate mapping; "
                           "the oracle uses x_original = x_resized / scale (onnxruntime's, Upsample's lineage)")
POLICY_SCALES_CONTESTED = ("keep_aspect_ratio_policy other than stretch with scales: the text says the policy "
                           "'is not applicable when the scales input is used' (ignored), onnx's shape inference "
                           "rejects the model ('Providing scales is incompatible with a keep_aspect_ratio_policy "
                           "other than stretch')")
UPSAMPLE1_CONTESTED = ("Upsample-1 is an EXPERIMENTAL operator in onnx's schema (height_scale/width_scale on 4-D "
                       "input): onnx's checker and runtimes need not accept it")
UPSAMPLE10_CONTESTED = ("Upsample-10 is deprecated in onnx's schema (replaced by Resize-10): onnx's checker "
                        "rejects every model using it")

RESIZE_STATES = (
    Attrs({"nearest_mode": "round_prefer_ceil"}, since=11, tag="round_prefer_ceil"),
    Attrs({"nearest_mode": "floor"}, since=11, tag="floor"),
    Attrs({"nearest_mode": "ceil"}, since=11, tag="ceil"),
    Attrs({"cubic_coeff_a": -0.5}, since=11, tag="a=-0.5"),
    Attrs({"exclude_outside": 1}, since=11, tag="exclude_outside"),
    Attrs({"extrapolation_value": 3.0}, since=11, tag="extrapolation=3"),
    Attrs({"antialias": 1}, since=18, tag="antialias"),
    Attrs({"keep_aspect_ratio_policy": "not_larger"}, since=18, tag="not_larger"),
    Attrs({"keep_aspect_ratio_policy": "not_smaller"}, since=18, tag="not_smaller"),
)


def _resize_per_type(version, combo) -> int:
    """Every pattern for the floating T1 with T2 = float (and at 10), 10 per integer T1 with
    T2 = float, 3 for the other combinations."""
    t1 = combo.get("T1", combo.get("T"))
    t2 = combo.get("T2", "float")
    if t2 != "float":
        return 3
    if V.kind(t1) == V.FLOAT:
        return sum(1 for sh in RESIZE_SHAPES if sh.applies(version))
    return 10 if V.kind(t1) == V.INT else 4


def _resize_errors() -> tuple[Err, ...]:
    x = (1, 1, 2, 2)
    ident = [0.0] * 4 + [1.0] * 4
    out = [
        Err("scales takes values greater than 0 (a scale of 0)", "scale=0", {}, (x, (4,)), until=10,
            values={"scales": [1, 1, 0, 2]}),
        Err("scales takes values greater than 0 (a negative scale)", "scale<0", {}, (x, (4,)), until=10,
            values={"scales": [1, 1, -2, 2]}),
        Err("the number of elements of scales is the rank of X", "scales-length", {}, (x, (3,)), until=10,
            values={"scales": [1, 2, 2]}),
        Err("mode is nearest or linear at version 10", "mode=cubic", {"mode": "cubic"}, (x, (4,)), until=10,
            values={"scales": [1, 1, 2, 2]}),
        # 11
        Err("sizes may only be set if scales is an empty tensor", "scales-and-sizes", {}, (x, (8,), (4,), (4,)),
            since=11, until=11, values={"roi": ident, "scales": [1, 1, 2, 2], "sizes": [1, 1, 4, 4]}),
        Err("scales takes values greater than 0 (a scale of 0)", "scale=0", {}, (x, (8,), (4,)), since=11,
            until=11, values={"roi": ident, "scales": [1, 1, 0, 2]}),
        Err("scales takes values greater than 0 (a negative scale)", "scale<0", {}, (x, (8,), (4,)), since=11,
            until=11, values={"roi": ident, "scales": [1, 1, 2, -1]}),
        Err("the number of elements of scales is the rank of X", "scales-length", {}, (x, (8,), (2,)), since=11,
            until=11, values={"roi": ident, "scales": [2, 2]}),
        Err("roi is [start1, ..., startN, end1, ..., endN] (2N values; 4 given)", "roi-length",
            {"coordinate_transformation_mode": "tf_crop_and_resize"}, (x, (4,), (4,)), since=11, until=11,
            values={"roi": [0, 0, 1, 1], "scales": [1, 1, 2, 2]}),
        # 13+
        Err("one of scales and sizes must be specified and it is an error if both are specified",
            "scales-and-sizes", {}, (x, (8,), (4,), (4,)), since=13,
            values={"roi": ident, "scales": [1, 1, 2, 2], "sizes": [1, 1, 4, 4]}),
        Err("one of scales and sizes MUST be specified (neither given)", "neither", {}, (x,), since=13),
        Err("scales takes values greater than 0 (a scale of 0)", "scale=0", {}, (x, (8,), (4,)), since=13,
            values={"roi": ident, "scales": [1, 1, 0, 2]}),
        Err("scales takes values greater than 0 (a negative scale)", "scale<0", {}, (x, (8,), (4,)), since=13,
            values={"roi": ident, "scales": [1, 1, 2, -1]}),
        Err("the number of elements of scales is the rank of X", "scales-length", {}, (x, (8,), (2,)), since=13,
            values={"roi": ident, "scales": [2, 2]}),
        Err("the number of elements of sizes is the rank of X", "sizes-length", {}, (x, (8,), (0,), (3,)),
            since=11, until=11, values={"roi": ident, "scales": [], "sizes": [1, 4, 4]}),
        Err("roi is [start1, ..., startN, end1, ..., endN] (2N values; 4 given)", "roi-length",
            {"coordinate_transformation_mode": "tf_crop_and_resize"}, (x, (4,), (4,)), since=13,
            values={"roi": [0, 0, 1, 1], "scales": [1, 1, 2, 2]}),
        # attributes
        Err("mode is one of nearest, linear, cubic", "mode=bicubic", {"mode": "bicubic"}, (x, (8,), (4,)),
            since=11, values={"roi": ident, "scales": [1, 1, 2, 2]}),
        Err("tf_half_pixel_for_nn is not a coordinate_transformation_mode after version 11", "ctm=tf_half_pixel_for_nn",
            {"coordinate_transformation_mode": "tf_half_pixel_for_nn"}, (x, (8,), (4,)), since=13,
            values={"roi": ident, "scales": [1, 1, 2, 2]}),
        Err("half_pixel_symmetric is a coordinate_transformation_mode from version 19", "ctm=half_pixel_symmetric",
            {"coordinate_transformation_mode": "half_pixel_symmetric"}, (x, (8,), (4,)), since=11, until=18,
            values={"roi": ident, "scales": [1, 1, 2, 2]}),
        Err("nearest_mode is one of round_prefer_floor, round_prefer_ceil, floor, ceil", "nearest_mode=round",
            {"nearest_mode": "round"}, (x, (8,), (4,)), since=11, values={"roi": ident, "scales": [1, 1, 2, 2]}),
        Err("keep_aspect_ratio_policy is one of stretch, not_larger, not_smaller", "policy=fit",
            {"keep_aspect_ratio_policy": "fit"}, (x, (8,), (0,), (4,)), since=18,
            values={"roi": ident, "scales": [], "sizes": [1, 1, 4, 4]}),
        Err("axes: accepted range is [-r, r-1]", "axes=4", {"axes": [4]}, (x, (2,), (1,)), since=18,
            values={"roi": [0.0, 1.0], "scales": [2.0]}),
        Err("axes: accepted range is [-r, r-1]", "axes=-5", {"axes": [-5, 3]}, (x, (4,), (2,)), since=18,
            values={"roi": [0.0, 0.0, 1.0, 1.0], "scales": [2.0, 2.0]}),
        Err("the number of elements of scales is the length of axes", "scales-length-axes", {"axes": [2, 3]},
            (x, (4,), (4,)), since=18, values={"roi": [0.0, 0.0, 1.0, 1.0], "scales": [1, 1, 2, 2]}),
    ]
    return tuple(out)


RESIZE = Entry(
    "Resize", resize_oracle, family="shaped", shapes=RESIZE_SHAPES, tolerance=resize_tolerance,
    attrs=RESIZE_STATES, float_numerics={"wide": resize_wide, "special": resize_special},
    int_numerics={"int": resize_int, "int-extremes": resize_int_extremes}, drawn_attrs=resize_drawn_attrs,
    contested=resize_contested, per_type=_resize_per_type, errors=_resize_errors(), signed_zero=True,
    notes={11: "roi, sizes, coordinate_transformation_mode, cubic mode, nearest_mode, exclude_outside, "
               "extrapolation_value", 13: "roi/scales/sizes optional (one of scales and sizes), bfloat16; "
           "tf_half_pixel_for_nn gone", 18: "antialias, axes, keep_aspect_ratio_policy",
           19: "half_pixel_symmetric"},
)


# ============================================================================ Upsample
UPSAMPLE_ROWS = (
    ("nearest/up/example", (1, 1, 2, 2), {}, [1, 1, 2, 3]),
    ("nearest/up2", (2, 3, 2), {}, [1, 2, 2]),
    ("nearest/rank1", (3,), {}, [2.0]),
    ("nearest/up1.5", (1, 1, 2, 4), {}, [1, 1, 1.5, 2.5]),
    ("nearest/identity", (2, 3), {}, [1, 1]),
    ("nearest/zero-size", (0, 3), {}, [1, 2]),
    ("nearest/rank5", (1, 2, 1, 2, 2), {}, [1, 1, 3, 2, 1]),
    ("linear/up", (1, 1, 2, 3), {"mode": "linear"}, [1, 1, 2, 2]),
)


def _upsample_shapes() -> tuple[Shape, ...]:
    out = [Shape("v1/nearest/example", {"X": "1122"}, {"height_scale": 2.0, "width_scale": 2.0}, until=1),
           Shape("v1/nearest/up3x2", {"X": "2123"}, {"height_scale": 3.0, "width_scale": 2.0}, until=1),
           Shape("v1/bilinear", {"X": "1123"}, {"height_scale": 2.0, "width_scale": 2.0, "mode": "bilinear"},
                 until=1)]
    for name, x, attrs, scales in UPSAMPLE_ROWS:
        out.append(Shape(f"{name}@7", {"X": _tpl(x)}, {**attrs, "scales": [float(s) for s in scales]}, since=7,
                         until=7))
        out.append(Shape(name, {"X": _tpl(x), "scales": str(len(scales))}, attrs, since=9,
                         values={"scales": scales}))
    return tuple(out)


def _upsample_per_type(version, combo) -> int:
    return 8 if V.kind(combo["T"]) == V.FLOAT else 3


def _upsample_drawn(rng, point) -> dict:
    t = dict(point.types)["T"]
    sh = next(s for s in UPSAMPLE.shapes if s.name == point.shape)
    if sh.attrs.get("mode") in ("linear", "bilinear") and t in NEAREST_ONLY:
        return {"mode": "nearest"}
    return {}


UPSAMPLE = Entry(
    "Upsample", resize_oracle, family="shaped", shapes=_upsample_shapes(), tolerance=resize_tolerance,
    attrs=(Attrs({"scales": [1.0, 2.0]}, since=7, until=7, tag="given"),
           Attrs({"height_scale": 2.0, "width_scale": 2.0}, until=1, tag="given")),
    float_numerics={"wide": resize_wide, "special": resize_special},
    int_numerics={"int": resize_int, "int-extremes": resize_int_extremes}, drawn_attrs=lambda rng, p: _upsample_drawn(
        rng, p), contested=resize_contested, per_type=_upsample_per_type, signed_zero=True,
    errors=(
        Err("scales takes values greater than or equal to 1", "scale<1", {"scales": [1.0, 0.5]}, ((2, 4),), until=7),
        Err("scales takes values greater than or equal to 1", "scale<1", {}, ((2, 4), (2,)), since=9,
            values={"scales": [1.0, 0.5]}),
        Err("the number of elements of scales is the rank of X", "scales-length", {}, ((2, 4), (3,)), since=9,
            values={"scales": [1.0, 2.0, 2.0]}),
        Err("mode is nearest or linear", "mode=cubic", {"mode": "cubic", "scales": [1.0, 2.0]}, ((2, 4),), until=7),
    ),
    notes={7: "scales attribute (any rank) replaces height_scale/width_scale", 9: "scales as an input",
           10: "deprecated (Resize-10)"},
)


# ============================================================================ GridSample
#: (name, X shape, grid shape, attributes with the mode as "linear"/"cubic"/"nearest", since).
#: Version 16 gets the 4-D rows with bilinear/bicubic, 20+ every row with linear/cubic.
GRID_ROWS = (
    ("linear/zeros", (2, 2, 3, 4), (2, 3, 5, 2), {}, 16),
    ("linear/zeros/align_corners", (1, 2, 4, 3), (1, 4, 4, 2), {"align_corners": 1}, 16),
    ("linear/border", (1, 1, 4, 5), (1, 3, 4, 2), {"padding_mode": "border"}, 16),
    ("linear/reflection", (1, 2, 3, 4), (1, 4, 5, 2), {"padding_mode": "reflection"}, 16),
    ("linear/reflection/align_corners", (2, 1, 4, 3), (2, 3, 3, 2), {"padding_mode": "reflection",
                                                                     "align_corners": 1}, 16),
    ("nearest/zeros", (1, 2, 4, 4), (1, 4, 4, 2), {"mode": "nearest"}, 16),
    ("nearest/border/align_corners", (1, 1, 3, 5), (1, 4, 3, 2), {"mode": "nearest", "padding_mode": "border",
                                                                  "align_corners": 1}, 16),
    ("nearest/reflection", (1, 2, 4, 2), (1, 3, 4, 2), {"mode": "nearest", "padding_mode": "reflection"}, 16),
    ("cubic/zeros", (1, 2, 4, 4), (1, 3, 4, 2), {"mode": "cubic"}, 16),
    ("cubic/border", (1, 1, 5, 4), (1, 3, 3, 2), {"mode": "cubic", "padding_mode": "border"}, 16),
    ("cubic/reflection/align_corners", (1, 1, 4, 5), (1, 4, 3, 2), {"mode": "cubic", "padding_mode": "reflection",
                                                                    "align_corners": 1}, 16),
    ("cubic/reflection", (2, 1, 3, 4), (2, 2, 4, 2), {"mode": "cubic", "padding_mode": "reflection"}, 16),
    ("linear/size1-spatial", (1, 2, 1, 3), (1, 2, 3, 2), {}, 16),
    ("nearest/size1-spatial/align_corners", (1, 1, 1, 1), (1, 2, 2, 2), {"mode": "nearest", "align_corners": 1}, 16),
    ("linear/zero-size-grid", (1, 2, 3, 3), (1, 0, 2, 2), {}, 16),
    ("linear/5d", (1, 2, 2, 3, 4), (1, 2, 3, 2, 3), {}, 20),
    ("nearest/5d/reflection", (1, 1, 3, 2, 3), (1, 2, 2, 2, 3), {"mode": "nearest", "padding_mode": "reflection"}, 20),
    ("cubic/5d/align_corners", (1, 1, 3, 3, 4), (1, 2, 2, 2, 3), {"mode": "cubic", "align_corners": 1}, 20),
    ("linear/3d-input/border", (2, 2, 5), (2, 4, 1), {"padding_mode": "border"}, 20),
)
_V16 = {"linear": "bilinear", "cubic": "bicubic", "nearest": "nearest"}


def _grid_shapes() -> tuple[Shape, ...]:
    out = []
    for name, x, g, attrs, since in GRID_ROWS:
        mode = attrs.get("mode", "linear")
        rest = {k: v for k, v in attrs.items() if k != "mode"}
        if since <= 16:
            a16 = dict(rest, **({"mode": _V16[mode]} if mode != "linear" else {}))
            out.append(Shape(f"{name}@16", {"X": _tpl(x), "grid": _tpl(g)}, a16, until=16))
        a20 = dict(rest, **({"mode": mode} if mode != "linear" else {}))
        out.append(Shape(name, {"X": _tpl(x), "grid": _tpl(g)}, a20, since=20))
    return tuple(out)


GRID_SHAPES = _grid_shapes()


def _gmode(attrs, version) -> str:
    m = attrs.get("mode", "bilinear" if version < 20 else "linear")
    return {"bilinear": "linear", "bicubic": "cubic"}.get(m, m)


def grid_values(rng, ctx):
    """The grid of a GridSample case (structural: drawn per case, never repaired): per point
    one of the positions worth testing -- -1, 1, 0, the corner pixels' centers and edges,
    exact half-pixel positions, far outside (+-3.5 and beyond: reflection bounces several
    times) -- or a uniform draw in [-1.25, 1.25], rounded to the grid's type; nearest points
    whose pick a float32 evaluation could change are drawn again; cubic with border padding
    stays inside the pixel-center range (torch's bicubic pads each tap, the text's "border
    values for out-of-bound grid locations" reads as clipping the location: they agree there)."""
    gname = "grid" if "grid" in ctx.shapes else "Grid"
    shape = ctx.shapes[gname]
    xs = ctx.shapes["X"]
    t2 = ctx.types[gname]
    mode, pad, ac = _gmode(ctx.attrs, ctx.version), ctx.attrs.get("padding_mode", "zeros"), \
        int(ctx.attrs.get("align_corners", 0))
    r = shape[-1] if shape else 0
    n = int(np.prod(shape[:-1], dtype=np.int64)) if shape else 0
    g = rng.uniform(-1.25, 1.25, size=(n, r))
    for d in range(r):
        length = xs[2 + r - 1 - d]  # grid[..., 0] indexes the innermost spatial axis
        specials = [-1.0, 1.0, 0.0, -3.5, 2.75, -1.5, 1.25, -5.0,
                    2 / length - 1, 1 - 2 / length, 1 / length - 1, 1 - 1 / length]
        for i in range(n):
            if rng.random() < 0.45:
                g[i, d] = specials[int(rng.integers(len(specials)))]
    if mode == "cubic" and pad == "border":
        for d in range(r):
            length = xs[2 + r - 1 - d]
            lim = 1.0 if ac else max(0.0, 1 - 1 / length)
            g[:, d] = np.clip(g[:, d], -lim, lim)
    if V.kind(t2) == V.INT:  # the contrib operator's grid has X's type: integer positions
        lo = -3 if int(V.iinfo(t2).min) < 0 else 0
        g = np.clip(np.round(g * 2), lo, 3)
    else:
        g = V.representable(g, t2)
    full = g.reshape(tuple(shape[:-1]) + (r,)) if shape else g
    if mode == "nearest" and n:
        for _ in range(20):
            bad = ref.grid_unstable(full, xs, mode, pad, ac).reshape(-1)
            if not bad.any():
                break
            flat = full.reshape(n, r)
            new = rng.uniform(-1.25, 1.25, size=(int(bad.sum()), r))
            flat[bad] = np.round(new) if V.kind(t2) == V.INT else V.representable(new, t2)
            full = flat.reshape(full.shape)
        else:
            raise ref.Unstable("grid points too close to a rounding boundary")
    if V.kind(t2) == V.INT:
        out = np.empty(full.shape, dtype=object)
        out.ravel()[:] = [int(v) for v in full.ravel()]
        return out
    return full


def grid_sample_oracle(ctx, x, grid, mode=None, padding_mode="zeros", align_corners=0, **_):  # noqa: D417
    """GridSample-16/20/22 of the exact inputs (:func:`conformance.reference.resample.grid_sample`).

    Raises:
        ValueError: shapes that do not match, a mode of the other version's names.
        Unstable: a nearest pick float32 coordinates could change (never generated).
    """
    m = _gmode({"mode": mode} if mode else {}, ctx.version)
    if mode is not None and mode not in ref.grid_modes(ctx.version):
        raise ValueError(f"mode {mode!r} at version {ctx.version}")
    grid = np.asarray(grid, dtype=np.float64)
    if m == "nearest" and ref.grid_unstable(grid, np.shape(x), m, padding_mode, int(align_corners)).any():
        raise ref.Unstable("a nearest pick float32 coordinates could change")
    if ctx.version == 1 and np.asarray(x).dtype == object:  # com.microsoft: integer X, floating Y
        x = np.asarray(x, dtype=np.float64)
    return ref.grid_sample(x, grid, m, padding_mode, int(align_corners))


def grid_sample_tolerance(ctx, inputs, attrs, outputs):
    """Nearest and non-floating outputs exact (nearest: sign of zero checked); linear/cubic:
    :func:`conformance.reference.resample.grid_error_bound` plus one ulp of T."""
    t = ctx.out_types["Y"]
    m = _gmode(attrs, ctx.version)
    if m == "nearest":
        return {"Y": Tolerance(0.0, 0.0, exact=True, signed_zero=V.kind(t) == V.FLOAT)}
    if V.kind(t) != V.FLOAT:
        return {"Y": Tolerance(0.0, 0.0, exact=True)}
    fi = V.finfo(t)
    b = ref.grid_error_bound(np.asarray(inputs[0], dtype=np.float64), np.asarray(inputs[1], dtype=np.float64), m,
                             attrs.get("padding_mode", "zeros"),
                             int(attrs.get("align_corners", 0)))
    b = b[np.isfinite(b)]
    sub = max(float(fi.smallest_subnormal), 2.0 ** -149 if t != "double" else 0.0)
    return {"Y": Tolerance((float(b.max()) if b.size else 0.0) + 64 * sub, float(fi.eps),
                           variants=("f32-coordinates-weights",))}


def grid_drawn_attrs(rng, point) -> dict:
    """Strings, bools, complex and integer X take nearest (a weighted average of strings or
    bools is undefined; an integer's rounding is not stated; complex interpolation is left
    out); strings and bools take border padding where zeros would write a 0 of no defined
    conversion."""
    types = dict(point.types)
    t = types["T1"]
    sh = next(s for s in GRID_SHAPES if s.name == point.shape)
    if point.version == 1:  # com.microsoft: Y is floating, X any number type (no forcing)
        return {}
    merged = {**dict(point.attrs), **dict(sh.attrs)}
    out = {}
    if t in NEAREST_ONLY or V.kind(t) == V.INT:
        if _gmode(merged, point.version) != "nearest":
            out["mode"] = "nearest"
        if t in ("string", "bool") and merged.get("padding_mode", "zeros") == "zeros":
            out["padding_mode"] = "border"
    return out


def _grid_per_type(version, combo) -> int:
    t1, t2 = combo["T1"], combo["T2"]
    if t2 == "float" and V.kind(t1) == V.FLOAT:
        return sum(1 for sh in GRID_SHAPES if sh.applies(version))
    return 3


GRID_STATES = (
    Attrs({"padding_mode": "border"}, tag="border"),
    Attrs({"padding_mode": "reflection"}, tag="reflection"),
    Attrs({"align_corners": 1}, tag="align_corners"),
    Attrs({"padding_mode": "reflection", "align_corners": 1}, tag="reflection+align_corners"),
)


def _grid_errors() -> tuple[Err, ...]:
    return (
        Err("only spatial (4-D) inputs at version 16", "5d", {}, ((1, 1, 2, 2, 2), (1, 2, 2, 2, 3)), until=16),
        Err("grid's last dimension is the number of spatial dimensions (2 for 4-D X)", "grid-last-dim", {},
            ((1, 1, 3, 3), (1, 2, 2, 3))),
        Err("grid's batch is X's N", "batch", {}, ((2, 1, 3, 3), (1, 2, 2, 2))),
        Err("grid has rank r + 2 for X of rank r + 2", "grid-rank", {}, ((1, 1, 3, 3), (1, 2, 2, 2, 2)), since=20),
        Err("mode is bilinear, nearest or bicubic at version 16", "mode=linear", {"mode": "linear"},
            ((1, 1, 3, 3), (1, 2, 2, 2)), until=16),
        Err("mode is linear, nearest or cubic from version 20", "mode=bilinear", {"mode": "bilinear"},
            ((1, 1, 3, 3), (1, 2, 2, 2)), since=20),
        Err("padding_mode is zeros, border or reflection", "padding_mode=circular", {"padding_mode": "circular"},
            ((1, 1, 3, 3), (1, 2, 2, 2))),
    )


GRID_SAMPLE = Entry(
    "GridSample", grid_sample_oracle, family="shaped", shapes=GRID_SHAPES, tolerance=grid_sample_tolerance,
    attrs=GRID_STATES, structural={"grid": grid_values},
    float_numerics={"wide": resize_wide, "special": resize_special}, drawn_attrs=grid_drawn_attrs,
    per_type=_grid_per_type, errors=_grid_errors(), signed_zero=True,
    notes={20: "N-D (rank r + 2), modes renamed linear/cubic, nearest rounds half to even", 22: "bfloat16"},
)


# ============================================================================ AffineGrid
AFFINE_ROWS = (
    ("2d", (2, 2, 3), [2, 3, 4, 5], {}),
    ("2d/align_corners", (1, 2, 3), [1, 1, 3, 3], {"align_corners": 1}),
    ("2d/size1", (1, 2, 3), [1, 2, 1, 4], {}),
    ("2d/size1/align_corners", (2, 2, 3), [2, 1, 3, 1], {"align_corners": 1}),
    ("3d", (1, 3, 4), [1, 2, 2, 3, 4], {}),
    ("3d/align_corners", (2, 3, 4), [2, 1, 3, 2, 2], {"align_corners": 1}),
    ("2d/zero-size", (1, 2, 3), [1, 1, 0, 3], {}),
)


def _affine_shapes() -> tuple[Shape, ...]:
    return tuple(Shape(name, {"theta": _tpl(th), "size": str(len(sz))}, attrs, values={"size": sz})
                 for name, th, sz, attrs in AFFINE_ROWS)


def affine_grid_oracle(ctx, theta, size, align_corners=0, **_):
    """AffineGrid-20 (:func:`conformance.reference.resample.affine_grid`)."""
    return ref.affine_grid(theta, size, int(align_corners))


def affine_grid_tolerance(ctx, inputs, attrs, outputs):
    """``8 u sum_j |theta_ij| |b_j|`` per element (:func:`conformance.reference.resample.
    affine_error_bound`), ``u`` the coarser of T's and float32's unit roundoff (grid positions
    in float32 are legitimate, as for every coordinate), plus one ulp of T."""
    t = ctx.out_types["grid"]
    fi = V.finfo(t)
    u = max(float(fi.eps) / 2, ref.U32)
    b = ref.affine_error_bound(inputs[0], inputs[1], int(attrs.get("align_corners", 0)), u)
    b = b[np.isfinite(b)]
    return {"grid": Tolerance((float(b.max()) if b.size else 0.0) + 8 * float(fi.smallest_subnormal),
                              float(fi.eps), variants=("bound",))}


def _affine_special(rng, ctx, shapes):
    """Numerics class ``special`` of AffineGrid: theta in [-2, 2] with +-0, subnormals and
    +-1/2 (finite: a NaN or infinity times a base position of 0 is NaN in every order, but
    whether a kernel multiplies the homogeneous 1 or adds the translation decides inf - inf)."""
    t = ctx.types["theta"]
    th = V.representable(rng.uniform(-2, 2, size=shapes[0]), t)
    fi = V.finfo(t)
    vals = [0.0, -0.0, float(fi.smallest_subnormal), -float(fi.smallest_normal), 0.5, -0.5, 1.0]
    flat = th.reshape(-1)
    for i, q in enumerate(rng.permutation(flat.size)[:min(flat.size, len(vals))]):
        flat[q] = vals[i]
    return [th, np.zeros(shapes[1])]


def _affine_wide(rng, ctx, shapes):
    """Numerics class ``wide`` of AffineGrid: theta with magnitudes 2^-10 .. 2^10 (2^-6 .. 2^6
    for the 16-bit types): no product overflows."""
    t = ctx.types["theta"]
    e = 6 if t in ("float16", "bfloat16") else 10
    th = rng.choice([-1.0, 1.0], size=shapes[0]) * 2.0 ** rng.uniform(-e, e, size=shapes[0])
    return [V.representable(th, t), np.zeros(shapes[1])]


AFFINE_SIZE1_CONTESTED = ("a spatial size of 1 with align_corners=1: the text makes -1 and 1 both refer to the "
                          "center of the one pixel; the oracle takes 0 (torch.nn.functional.affine_grid's linspace "
                          "of one step), onnx.reference takes -1 and onnxruntime 1.32 takes +1")


def _affine_contested(ctx, attrs):
    size = ctx.values.get("size")
    if int(attrs.get("align_corners", 0)) and size is not None and any(int(v) == 1 for v in list(size)[2:]):
        return AFFINE_SIZE1_CONTESTED
    return None


AFFINE_GRID = Entry(
    "AffineGrid", affine_grid_oracle, family="shaped", shapes=_affine_shapes(), tolerance=affine_grid_tolerance,
    contested=_affine_contested, attrs=(Attrs({"align_corners": 1}, tag="align_corners"),),
    float_numerics={"wide": _affine_wide, "special": _affine_special}, per_type=len(AFFINE_ROWS),
    errors=(
        Err("size is (N, C, H, W) or (N, C, D, H, W)", "size-length", {}, ((1, 2, 3), (3,)),
            values={"size": [1, 3, 3]}),
        Err("theta is (N, 2, 3) for a 2-D size", "theta-shape", {}, ((1, 3, 4), (4,)), values={"size": [1, 1, 3, 3]}),
    ),
)

# ============================================================================ com.microsoft (onnxruntime-defined)


def _ms_grid_filter(version, combo) -> str | None:
    """Combinations the contrib schema admits but no value case can show: a string, bool or
    complex X/Grid (a grid of them has no position, and Y is floating)."""
    if combo["T1"] in ("string", "bool", "complex64", "complex128"):
        return f"Grid has X's type T1 = {combo['T1']}: no position, and Y (T2) is floating"
    return None


def _ms_int(rng, ctx, shapes):
    """Integer X of the contrib GridSample: values in [-100, 100] ([0, 200] unsigned), exact in
    every floating Y."""
    t = ctx.types["X"]
    lo = -100 if int(V.iinfo(t).min) < 0 else 0
    x = np.empty(shapes[0], dtype=object)
    x.ravel()[:] = [int(v) for v in rng.integers(lo, lo + 201, size=x.size)]
    return [x, np.zeros(shapes[1])]


def _ms_grid_per_type(version, combo) -> int:
    return len(MS_GRID_SHAPES) if combo["T1"] == "float" and combo["T2"] == "float" else 3


MS_GRID_SHAPES = tuple(Shape(sh.name.replace("@16", ""), {"X": sh.inputs["X"], "Grid": sh.inputs["grid"]},
                             dict(sh.attrs)) for sh in GRID_SHAPES if sh.until == 16)

MS_GRID_T1_NE_T2 = ("Y's type T2 differs from X's T1: the contrib schema admits it, but its type inference "
                    "gives Y the type of X (onnxruntime: 'Type (tensor(float16)) of output arg (Y) ... does not "
                    "match expected type')")

MS_GRID_SAMPLE = Entry(
    "GridSample", grid_sample_oracle, family="shaped", domain=MS, shapes=MS_GRID_SHAPES,
    contested=lambda ctx, attrs: MS_GRID_T1_NE_T2 if ctx.types["X"] != ctx.out_types["Y"] else None,
    tolerance=lambda ctx, inputs, attrs, outputs: grid_sample_tolerance(ctx, inputs, attrs, outputs),
    attrs=GRID_STATES, structural={"Grid": grid_values}, type_filter=_ms_grid_filter,
    float_numerics={"wide": resize_wide, "special": resize_special},
    int_numerics={"int": _ms_int, "int-extremes": _ms_int},
    per_type=_ms_grid_per_type, signed_zero=True,
    errors=(Err("4-D X only ('Currently, only spatial (4-D) inputs are supported')", "5d", {},
                ((1, 1, 2, 2, 2), (1, 2, 2, 2, 3))),
            Err("Grid's last dimension is 2", "grid-last-dim", {}, ((1, 1, 3, 3), (1, 2, 2, 3))),
            Err("mode is bilinear, nearest or bicubic", "mode=linear", {"mode": "linear"},
                ((1, 1, 3, 3), (1, 2, 2, 2)))),
    notes={1: "onnxruntime-defined (com.microsoft): GridSample-16's semantics, Grid of X's type, Y floating"},
)

#: (name, X shape, rois [[y1, x1, y2, x2], ...], batch_indices, crop_size, attributes): dyadic
#: boxes (exact in every floating type), nearest rows without a tie (the text does not say how
#: a nearest tie rounds; TensorFlow's crop_and_resize rounds half away from zero).
CROP_ROWS = (
    ("bilinear/inside", (2, 2, 5, 6), [[0, 0, 1, 1], [0.25, 0.125, 0.75, 0.875]], [0, 1], [3, 4], {}),
    ("bilinear/extrapolate", (1, 2, 5, 5), [[-0.25, -0.5, 0.75, 1.25]], [0], [5, 3], {"extrapolation_value": 2.0}),
    ("bilinear/extrapolate/default-value", (1, 1, 4, 4), [[0.5, -1.0, 1.5, 0.5]], [0], [4, 4], {}),
    ("bilinear/crop1x1", (2, 1, 5, 4), [[0.25, 0.5, 0.75, 1.0], [0, 0, 0.5, 0.5]], [1, 0], [1, 1], {}),
    ("bilinear/flipped", (1, 2, 5, 6), [[0.75, 0.875, 0.25, 0.125]], [0], [3, 3], {}),
    ("bilinear/upsample", (1, 1, 3, 3), [[0, 0, 1, 1], [0.25, 0.25, 0.5, 0.75]], [0, 0], [7, 5], {}),
    ("nearest/inside", (2, 2, 5, 5), [[0, 0, 1, 1], [0.25, 0.1875, 0.75, 0.8125]], [1, 0], [4, 3],
     {"mode": "nearest"}),
    ("nearest/extrapolate", (1, 2, 5, 5), [[-0.25, -0.5, 0.75, 1.25]], [0], [5, 4],
     {"mode": "nearest", "extrapolation_value": -1.0}),
    ("no-rois", (1, 2, 3, 3), np.zeros((0, 4)), [], [2, 2], {}),
)


def crop_plans(x_shape, rois, crop_size, mode="bilinear", extrapolation_value=0.0, check=True):
    """Per RoI the :class:`conformance.reference.resample.Plan` of its crop: Resize's
    tf_crop_and_resize along H and W (``x = y1 (H-1) + i (y2-y1)(H-1)/(ch-1)``, a length of 1
    at the box's center, outside ``[0, H-1]``: extrapolation_value), bilinear or nearest
    (half away from zero, which is round_prefer_ceil on non-negative coordinates).

    Raises:
        ValueError: crop sizes that are not positive, rois not ``[R, 4]``, an unknown mode, a
            nearest tie (the text does not say how it rounds).
        Unstable: a pick or extrapolation float32 coordinates could change.
    """
    ch, cw = (int(v) for v in np.ravel(crop_size))
    rois = np.asarray(rois, dtype=np.float64)
    if ch <= 0 or cw <= 0 or rois.ndim != 2 or rois.shape[1] != 4 or mode not in ("bilinear", "nearest"):
        raise ValueError("CropAndResize: crop_size, rois or mode")
    m = "linear" if mode == "bilinear" else "nearest"
    plans = []
    for y1, x1, y2, x2 in rois:
        axes = []
        for ax, (lo, hi, out) in zip((2, 3), ((y1, y2, ch), (x1, x2, cw))):
            length = x_shape[ax]
            xs = ref.coordinates("tf_crop_and_resize", out, length, 1.0, float(out), lo, hi)
            W = ref.weights(m, xs, length, nearest_mode="round_prefer_ceil")
            if m == "nearest" and not np.array_equal(W, ref.weights(m, xs, length)):
                inside = (xs >= 0) & (xs <= length - 1)
                if np.any(inside & (np.abs(xs - np.floor(xs) - 0.5) == 0)):
                    raise ValueError("a nearest tie: the text does not say how it rounds")
            if check:
                ref._check_stable("tf_crop_and_resize", m, "round_prefer_ceil", xs, out, length, 1.0, float(out), lo, hi)
            axes.append(ref.Axis(ax, length, out, 1.0, float(out), xs, W, (xs < 0) | (xs > length - 1),
                                 ref.coordinate_error("tf_crop_and_resize", out, length, 1.0, xs, lo, hi), lo, hi))
        plans.append(ref.Plan(tuple(axes), (1, x_shape[1], ch, cw), m, "tf_crop_and_resize",
                              float(extrapolation_value)))
    return plans


def crop_and_resize_oracle(ctx, x, rois, batch_indices, crop_size, mode="bilinear", extrapolation_value=0.0, **_):
    """com.microsoft CropAndResize (onnxruntime-defined): Y ``[R, C, ch, cw]`` (the output's
    description; the summary's ``[num_boxes, crop_height, crop_width, depth]`` is TensorFlow's
    layout), each crop :func:`crop_plans` applied to ``X[batch_indices[r]]``.

    Raises:
        ValueError: what :func:`crop_plans` raises, a batch index outside ``[0, N)``.
    """
    ch, cw = (int(v) for v in np.ravel(crop_size))
    plans = crop_plans(np.shape(x), rois, crop_size, mode, extrapolation_value)
    out = np.zeros((len(plans), np.shape(x)[1], ch, cw))
    for r, (plan, b) in enumerate(zip(plans, np.ravel(batch_indices))):
        if not 0 <= int(b) < np.shape(x)[0]:
            raise ValueError(f"batch index {b}")
        out[r] = ref.apply_plan(plan, np.asarray(x, dtype=np.float64)[int(b)][None])[0]
    return out


def crop_and_resize_tolerance(ctx, inputs, attrs, outputs):
    """Nearest exact (sign of zero checked); bilinear the Resize bound per RoI
    (:func:`conformance.reference.resample.resize_error_bound`) plus one ulp of T."""
    t = ctx.out_types["Y"]
    fi = V.finfo(t)
    x, rois, bi, cs = inputs
    if attrs.get("mode", "bilinear") == "nearest":
        return {"Y": Tolerance(0.0, 0.0, exact=True, signed_zero=True)}
    best = 0.0
    for plan, b in zip(crop_plans(np.shape(x), rois, cs, "bilinear", check=False), np.ravel(bi)):
        e = ref.resize_error_bound(plan, np.asarray(x, dtype=np.float64)[int(b)][None])
        e = e[np.isfinite(e)]
        best = max(best, float(e.max()) if e.size else 0.0)
    return {"Y": Tolerance(best + 32 * max(float(fi.smallest_subnormal), 2.0 ** -149), float(fi.eps),
                           variants=("f32-coordinates-weights",))}


def _crop_shapes() -> tuple[Shape, ...]:
    out = []
    for name, x, rois, bi, cs, attrs in CROP_ROWS:
        r = len(rois)
        out.append(Shape(name, {"X": _tpl(x), "rois": f"{r}4", "batch_indices": str(r), "crop_size": "2"}, attrs,
                         values={"rois": rois, "batch_indices": bi, "crop_size": cs}))
    return tuple(out)


CROP_AND_RESIZE = Entry(
    "CropAndResize", crop_and_resize_oracle, family="shaped", domain=MS, shapes=_crop_shapes(),
    tolerance=crop_and_resize_tolerance, float_numerics={"wide": resize_wide, "special": resize_special},
    attrs=(Attrs({"extrapolation_value": 3.0}, tag="extrapolation=3"), Attrs({"mode": "nearest"}, tag="nearest")),
    per_type=len(CROP_ROWS), signed_zero=True,
    errors=(
        Err("crop_height and crop_width need to be positive", "crop-size=0", {}, ((1, 1, 4, 4), (1, 4), (1,), (2,)),
            values={"rois": [[0, 0, 1, 1]], "batch_indices": [0], "crop_size": [0, 2]}),
        Err("rois is [num_rois, 4]", "rois-shape", {}, ((1, 1, 4, 4), (1, 3), (1,), (2,)),
            values={"rois": [[0, 0, 1]], "batch_indices": [0], "crop_size": [2, 2]}),
        Err("batch_indices has one index per RoI", "batch-indices-length", {}, ((1, 1, 4, 4), (1, 4), (2,), (2,)),
            values={"rois": [[0, 0, 1, 1]], "batch_indices": [0, 0], "crop_size": [2, 2]}),
        Err("mode is bilinear or nearest", "mode=bicubic", {"mode": "bicubic"}, ((1, 1, 4, 4), (1, 4), (1,), (2,)),
            values={"rois": [[0, 0, 1, 1]], "batch_indices": [0], "crop_size": [2, 2]}),
    ),
    notes={1: "onnxruntime-defined (com.microsoft): TensorFlow's crop_and_resize, NCHW"},
)

ENTRIES = (RESIZE, UPSAMPLE, GRID_SAMPLE, AFFINE_GRID, MS_GRID_SAMPLE, CROP_AND_RESIZE)
register_entries(ENTRIES, family="resample")
