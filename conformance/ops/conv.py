"""The convolution operators as entries of the operator table (family ``shaped``): Conv (1, 11,
22), ConvTranspose (1, 11, 22), Col2Im (18), DeformConv (19, 22), CausalConvWithState (27), and
onnxruntime's com.microsoft FusedConv (1) and ConvTransposeWithDynamicPads (1) (onnxruntime-defined:
their oracles follow its schemas and ``contrib_ops/cpu/fused_activation.cc``).  The sections
below describe Conv and ConvTranspose; each later operator's section starts with its oracle's
docstring.

Exact oracles, bounds and the legitimate float32 kernels: :mod:`conformance.reference.conv`;
the output sizes and pads of every ``auto_pad``: :mod:`conformance.reference.spatial`.  What the
entries add to the schema:

**Shape tables** tying X, W and B to the geometry attributes: 1-D, 2-D and 3-D spatial ranks;
explicit symmetric and asymmetric ``pads``; ``strides``; ``dilations``; ``auto_pad``
SAME_UPPER and SAME_LOWER with an *odd* total padding (so the two differ: an even kernel at
stride 1, or a 3x3 kernel at stride 2 over an even size) with and without dilations (the padding
comes from the dilated kernel), and VALID; ``group`` 2, depthwise (``group = C``) and a
depthwise multiplier; 1x1 kernels; a kernel larger than the unpadded input (padding makes the
window fit), a kernel the size of the input; ``kernel_shape`` given (equal to W's) and inferred;
B present and absent (the engine's optional-input states); an empty batch; long sums
(``C/group x kernel volume`` of 1152 to 2304 terms) for the accumulation precision.
ConvTranspose adds its weight layout ``(C, M/group, k...)`` (``M = W.shape[1] * group``),
``output_padding``, ``output_shape`` with an odd and an even total padding, with pads (which
it overrides), with SAME_UPPER, and with ``output_padding``; strides larger than the kernel
(positions that receive no term: the bias alone).

**Numerics classes**: ``normal`` (uniform in [-2, 2]), ``wide`` (X's channels and W's output
channels scaled by powers of two, so each output mixes magnitudes over many binades while a
channel pair stays of one magnitude: the regime where Winograd's transform error is bounded
relative to the direct sum; B over the products' range), ``special`` (NaN in X, -0, +0 and
subnormals; no infinities: see :mod:`conformance.reference.conv`), ``positive`` (every input
in [1/16, 1], the long patterns: partial sums only grow, so a float16 accumulator stagnates).

**Tolerance** (:func:`conv_tolerance`): the accumulation bound of
:mod:`conformance.reference.conv` in the mandated precision -- at least float32 for float16 and
bfloat16 (the rule of MatMul, :data:`conformance.reference.linalg.ACC`), the type for float and
double -- the larger of Higham's bound and Winograd F(2x2, 3x3)'s where that algorithm applies,
plus, for the 16-bit types with B, the rounding of the convolution to T before the bias is
added (a Conv followed by an Add in T); then the rounding to T on both sides
(:func:`conformance.reference.linalg.final_tolerance`).  The largest per-element bound becomes
``atol``.

**Contested** (the text contradicts itself): Conv-1 and ConvTranspose-1 with SAME_* and a stride
other than 1 (their auto_pad text: "pad the input so that the output spatial size match the
input"; version 11: ``ceil(input / strides)`` for Conv and ``input * strides`` for
ConvTranspose; the oracle follows version 11, which every runtime implements); ConvTranspose
with ``output_shape`` and an odd total padding (version 1's equations put the extra padding at
the end unless SAME_UPPER, version 11's at the beginning unless SAME_UPPER: the oracle follows
the case's version, and runtimes apply one rule to every version).

**Error cases**: group not dividing the channels (``X.shape[1] != W.shape[1] * group``), M not a
multiple of group, W of another rank than X, W's channels not C, kernel_shape disagreeing with W,
pads of the wrong length, negative pads, strides of the wrong length, a dilated kernel larger
than the padded input, B of the wrong length, pads with auto_pad, an auto_pad outside the four
values; ConvTranspose: W.shape[0] not C, group not dividing C, kernel_shape disagreeing with W,
pads of the wrong length, negative pads, an output_shape of the wrong length, pads with auto_pad,
an output_padding not less than its stride and dilation.
"""

from __future__ import annotations

import math

import numpy as np

from ..reference import conv as ref
from ..reference import libm
from ..reference import linalg as lref
from ..tolerance import Tolerance
from . import values as V
from .engine import register_entries
from .entry import Attrs, Entry, Err, Shape


# ----------------------------------------------------------------------------- shared helpers
def _t(ctx) -> str:
    return ctx.types["X"]


def _uniform(rng, shape, t: str, lo: float, hi: float) -> np.ndarray:
    return V.representable(rng.uniform(lo, hi, size=shape), t)


def _terms(ctx, shapes) -> int:
    """Products per output element (Conv: ``W.shape[1] * prod(k)``; ConvTranspose: at most
    ``C/group * prod(k)``)."""
    w = shapes[1]
    if ctx.op == "ConvTranspose":
        return max(1, int(np.prod(w, dtype=np.int64)) // max(1, w[1]))
    return max(1, int(np.prod(w[1:], dtype=np.int64)))


def normal(rng, ctx, shapes):
    """Numerics class ``normal``: every input uniform in [-2, 2]."""
    return [_uniform(rng, s, _t(ctx), -2, 2) for s in shapes]


def positive(rng, ctx, shapes):
    """Numerics class ``positive``: every input in [1/16, 1] (partial sums only grow: a float16
    accumulator stagnates on the long patterns)."""
    return [_uniform(rng, s, _t(ctx), 1 / 16, 1) for s in shapes]


def wide(rng, ctx, shapes):
    """Numerics class ``wide``: X's channels scaled by ``2^a_c`` and W's output channels by
    ``2^b_m`` (``|a|, |b| <= e``), elements by ``2^[-1, 1]``; ``e`` the largest for which
    ``Q`` products stay four times below the type's largest value (at most 12); B over the
    products' range."""
    t = _t(ctx)
    fi = V.finfo(t)
    q = _terms(ctx, shapes)
    room = int(math.log2(float(fi.max))) - 4 - math.ceil(math.log2(q))
    e = max(0, min(12, (room - 2) // 2, int(-math.log2(float(fi.smallest_normal))) // 2 - 4))
    x = rng.uniform(-1, 1, size=shapes[0]) * 2.0 ** rng.integers(-1, 2, size=shapes[0])
    w = rng.uniform(-1, 1, size=shapes[1]) * 2.0 ** rng.integers(-1, 2, size=shapes[1])
    if x.size:
        x *= 2.0 ** rng.integers(-e, e + 1, size=(1, shapes[0][1]) + (1,) * (len(shapes[0]) - 2))
    wax = 1 if ctx.op == "ConvTranspose" else 0
    if w.size:
        sc = [1] * len(shapes[1])
        sc[wax] = shapes[1][wax]
        w *= 2.0 ** rng.integers(-e, e + 1, size=tuple(sc))
    out = [V.representable(x, t), V.representable(w, t)]
    for s in shapes[2:]:
        out.append(V.representable(rng.uniform(-1, 1, size=s) * 2.0 ** rng.integers(-2 * e, 2 * e + 1, size=s), t))
    return out


def special(rng, ctx, shapes):
    """Numerics class ``special``: ordinary values in [-2, 2]; in X one NaN (the outputs whose
    window holds it are NaN), a -0, a +0 and two subnormals, at random positions."""
    t = _t(ctx)
    fi = V.finfo(t)
    out = normal(rng, ctx, shapes)
    x = out[0]
    if x.size:
        vals = [math.nan, -0.0, 0.0, float(fi.smallest_subnormal), -3 * float(fi.smallest_subnormal)]
        pos = rng.permutation(x.size)[: min(x.size, len(vals))]
        for p, v in zip(pos, vals):
            x.reshape(-1)[p] = v
    return out


CLASSES = {"normal": normal, "wide": wide, "special": special, "positive": positive}


def _final(t: str, bound: np.ndarray, expected) -> Tolerance:
    """:func:`conformance.reference.conv.output_tolerance`."""
    return ref.output_tolerance(t, bound, expected)


def _t_rounding(t: str, no_bias_exact: np.ndarray) -> np.ndarray:
    """:func:`conformance.reference.conv.rounding_before_bias`."""
    return ref.rounding_before_bias(t, no_bias_exact)


def _contested_same_v1(ctx, attrs) -> str | None:
    ap = attrs.get("auto_pad", "NOTSET")
    if ctx.version < 11 and ap in ("SAME_UPPER", "SAME_LOWER") and any(int(s) != 1 for s in attrs.get("strides") or ()):
        return (f"{ctx.op}-1's auto_pad text: 'pad the input so that the output spatial size match the input' (no "
                f"stride); version 11: {'ceil(input / strides)' if ctx.op == 'Conv' else 'input * strides'}")
    return None


# ----------------------------------------------------------------------------- Conv
def conv_oracle(ctx, x, w, b=None, **attrs):
    """Conv of the exact inputs, exactly (:func:`conformance.reference.conv.conv`)."""
    return ref.conv(x, w, b, attrs)


def conv_tolerance(ctx, inputs, attrs, outputs):
    """:func:`conformance.reference.conv.conv_bound` in the mandated accumulation precision, plus
    the 16-bit types' rounding before the bias, then the rounding to T (module docstring)."""
    t = ctx.out_types["Y"]
    x, w, b = inputs[0], inputs[1], inputs[2] if len(inputs) > 2 else None
    u, s = lref.ACC[t]
    bound = ref.conv_bound(x, w, b, attrs, u, s)
    if b is not None:
        bound = bound + _t_rounding(t, ref.conv(x, w, None, attrs))
    return {"Y": _final(t, bound, outputs["Y"])}


def _sh(name, x, w, b, attrs=None, **kw) -> Shape:
    dims = {"N": (1, 2), "C": (1, 3), "M": (1, 3), **kw.pop("dims", {})}
    return Shape(name, {"X": x, "W": w, "B": b}, dict(attrs or {}), dims=dims, **kw)


def _conv_shapes() -> tuple[Shape, ...]:
    sp = {"h": (3, 7), "w": (3, 7), "d": (2, 4)}
    return (
        _sh("1d", "NCh", "MC3", "M", dims={"h": (3, 9)}),
        _sh("1d/strides-pads", "NCh", "MC3", "M", {"strides": [2], "pads": [1, 2]}, dims={"h": (4, 9)}),
        _sh("1d/dilations", "NCh", "MC3", "M", {"dilations": [3]}, dims={"h": (7, 9)}),
        _sh("1d/same-upper/k=2", "NCh", "MC2", "M", {"auto_pad": "SAME_UPPER"}, dims={"h": (3, 9)}),
        _sh("1d/same-lower/k=2", "NCh", "MC2", "M", {"auto_pad": "SAME_LOWER"}, dims={"h": (3, 9)}),
        _sh("2d/3x3", "NChw", "MC33", "M", dims=sp),
        _sh("2d/3x3/pads=1", "NChw", "MC33", "M", {"pads": [1, 1, 1, 1]}, dims=sp),
        _sh("2d/3x3/kernel_shape/asym-pads", "NChw", "MC33", "M", {"kernel_shape": [3, 3], "pads": [0, 1, 2, 0]},
            dims=sp),
        _sh("2d/2x3/strides/asym-pads", "NChw", "MC23", "M", {"pads": [0, 2, 1, 0], "strides": [2, 1]}, dims=sp),
        _sh("2d/dilations", "NChw", "MC22", "M", {"dilations": [2, 3]}, dims={"h": (4, 8), "w": (4, 8)}),
        _sh("2d/same-upper/strides", "NC67", "MC33", "M", {"auto_pad": "SAME_UPPER", "strides": [2, 2]}),
        _sh("2d/same-lower/strides", "NC67", "MC33", "M", {"auto_pad": "SAME_LOWER", "strides": [2, 2]}),
        _sh("2d/same-upper/dilations", "NChw", "MC22", "M", {"auto_pad": "SAME_UPPER", "dilations": [3, 3]}, dims=sp),
        _sh("2d/same-lower/dilations", "NChw", "MC22", "M", {"auto_pad": "SAME_LOWER", "dilations": [3, 3]}, dims=sp),
        _sh("2d/valid/strides", "NChw", "MC32", "M", {"auto_pad": "VALID", "strides": [1, 2]}, dims=sp),
        _sh("2d/group=2", "N4hw", "6233", "6", {"group": 2}, dims=sp),
        _sh("2d/group=2/dilations", "N4hw", "4222", "4", {"group": 2, "dilations": [2, 2]},
            dims={"h": (4, 7), "w": (4, 7)}),
        _sh("2d/depthwise", "N3hw", "3133", "3", {"group": 3, "pads": [1, 1, 1, 1]}, dims=sp),
        _sh("2d/depthwise-multiplier/strides", "N2hw", "4122", "4", {"group": 2, "strides": [2, 2]}, dims=sp),
        _sh("2d/1x1", "NChw", "MC11", "M", dims=sp),
        _sh("2d/kernel-larger-than-input/pads", "NC22", "MC33", "M", {"pads": [1, 1, 1, 1]}),
        _sh("2d/kernel=input", "NC33", "MC33", "M"),
        _sh("3d", "NCdhw", "MC222", "M", dims={"d": (2, 4), "h": (2, 4), "w": (2, 4)}),
        _sh("3d/strides-pads-dilations", "NCdhw", "MC232", "M",
            {"strides": [1, 2, 1], "pads": [1, 0, 0, 0, 1, 1], "dilations": [2, 1, 1]},
            dims={"d": (3, 5), "h": (3, 5), "w": (2, 4)}),
        _sh("3d/same-upper", "NCdhw", "MC222", "M", {"auto_pad": "SAME_UPPER"},
            dims={"d": (2, 4), "h": (2, 4), "w": (2, 4)}),
        _sh("zero-batch", "0Chw", "MC33", "M", dims=sp),
        _sh("long-K/3x3", "1L55", "2L33", "2", dims={"L": (128, 128)}, numerics=("positive", "normal")),
        _sh("long-K/1x1", "1L33", "2L11", "2", dims={"L": (1024, 1024)}, numerics=("positive",)),
        _sh("long-K/1d", "1Lh", "2L5", "2", dims={"L": (256, 256), "h": (5, 8)}, numerics=("positive",)),
    )


CONV_SHAPES = _conv_shapes()

_CONV_ERRORS = (
    Err("X.shape[1] == W.shape[1] * group == C: group 2 does not divide C = 3", "group-not-dividing-C",
        {"group": 2}, ((1, 3, 5, 5), (4, 1, 3, 3))),
    Err("W.shape[0] mod group == 0: M = 3 with group 2", "M-not-multiple-of-group", {"group": 2},
        ((1, 4, 5, 5), (3, 2, 3, 3))),
    Err("W (M, C/group, k1, k2) has X's rank: a rank-3 W for a 2-D convolution", "W-rank", {},
        ((1, 2, 5, 5), (3, 2, 3))),
    Err("X.shape[1] == W.shape[1] * group: W has 3 input channels for C = 2", "W-channels", {},
        ((1, 2, 5, 5), (3, 3, 3, 3))),
    Err("kernel_shape [2, 2] disagrees with W's spatial shape (3, 3)", "kernel_shape-mismatch",
        {"kernel_shape": [2, 2]}, ((1, 2, 5, 5), (3, 2, 3, 3))),
    Err("pads has one begin and one end value per spatial axis (4 for 2-D), not 2", "pads-length",
        {"pads": [1, 1]}, ((1, 2, 5, 5), (3, 2, 3, 3))),
    Err("pads 'can take any value greater than or equal to 0': -1", "negative-pads",
        {"pads": [-1, 0, 0, 0]}, ((1, 2, 5, 5), (3, 2, 3, 3))),
    Err("strides has one value per spatial axis (2), not 3", "strides-length",
        {"strides": [1, 1, 1]}, ((1, 2, 5, 5), (3, 2, 3, 3))),
    Err("the dilated kernel ((3 - 1) * 2 + 1 = 5) is larger than the padded input (4): no output window",
        "dilated-kernel-larger-than-input", {"dilations": [2, 2]}, ((1, 2, 4, 4), (3, 2, 3, 3))),
    Err("B is 1-D of length M = 3, not 2", "B-length", {}, ((1, 2, 5, 5), (3, 2, 3, 3), (2,))),
    Err("pads 'cannot be used simultaneously with auto_pad attribute' (SAME_UPPER)", "pads-with-auto_pad",
        {"auto_pad": "SAME_UPPER", "pads": [1, 1, 1, 1]}, ((1, 2, 5, 5), (3, 2, 3, 3))),
    Err("auto_pad 'must be either NOTSET, SAME_UPPER, SAME_LOWER or VALID': SAME", "auto_pad-value",
        {"auto_pad": "SAME"}, ((1, 2, 5, 5), (3, 2, 3, 3))),
)

CONV = Entry(
    "Conv", conv_oracle, family="shaped", shapes=CONV_SHAPES, tolerance=conv_tolerance,
    float_numerics=CLASSES, per_type=len(CONV_SHAPES), errors=_CONV_ERRORS,
    contested=_contested_same_v1,
    notes={11: "auto_pad SAME_*: output = ceil(input / strides) (version 1: 'match the input')", 22: "bfloat16"},
)


# ----------------------------------------------------------------------------- ConvTranspose
def conv_transpose_oracle(ctx, x, w, b=None, **attrs):
    """ConvTranspose of the exact inputs, exactly (:func:`conformance.reference.conv.conv_transpose`,
    ``output_shape`` pads split by the case's version's text)."""
    return ref.conv_transpose(x, w, b, attrs, ctx.version)


def conv_transpose_tolerance(ctx, inputs, attrs, outputs):
    """:func:`conformance.reference.conv.conv_transpose_bound` in the mandated precision, plus the
    16-bit types' rounding before the bias, then the rounding to T."""
    t = ctx.out_types["Y"]
    x, w, b = inputs[0], inputs[1], inputs[2] if len(inputs) > 2 else None
    u, s = lref.ACC[t]
    bound = ref.conv_transpose_bound(x, w, b, attrs, u, s, ctx.version)
    if b is not None:
        bound = bound + _t_rounding(t, ref.conv_transpose(x, w, None, attrs, ctx.version))
    return {"Y": _final(t, bound, outputs["Y"])}


def _odd_split(ctx, attrs) -> bool:
    """Whether a ConvTranspose-1 case has ``output_shape`` and an odd total padding on an axis."""
    if ctx.version >= 11 or attrs.get("output_shape") is None:
        return False
    geo = ref.conv_transpose_geometry(ctx.shapes["X"], ctx.shapes["W"], attrs, ctx.version)
    return any((b + e) % 2 for b, e in zip(geo.begin, geo.end))


def _ct_contested(ctx, attrs) -> str | None:
    """ConvTranspose-1 with output_shape and an odd total padding (module docstring), and
    :func:`_contested_same_v1`."""
    if _odd_split(ctx, attrs):
        return ("ConvTranspose-1 with output_shape and an odd total padding: its text puts the extra padding at the "
                "end unless SAME_UPPER ('If (auto_pads != SAME_UPPER): pads[start_i] = total_padding[i]/2'), "
                "version 11's at the beginning unless SAME_UPPER (either is accepted)")
    return _contested_same_v1(ctx, attrs)


def _ct_check(ctx, inputs, attrs) -> str | None:
    """Either split of ConvTranspose-1's odd output_shape padding passes
    (:func:`conformance.reference.conv.check_output_shape_either_split`)."""
    return "conformance.reference.conv:check_output_shape_either_split" if _odd_split(ctx, attrs) else None


def _ct_shapes() -> tuple[Shape, ...]:
    sp = {"h": (2, 4), "w": (2, 4), "d": (2, 3)}
    return (
        _sh("1d", "NCh", "CM3", "M", dims=sp),
        _sh("1d/strides", "NCh", "CM3", "M", {"strides": [2]}, dims=sp),
        _sh("1d/strides-pads-output_padding", "NCh", "CM4", "M", {"strides": [3], "pads": [1, 2],
                                                               "output_padding": [2]}, dims=sp),
        _sh("1d/output_shape/odd-total", "NC4", "CM3", "M", {"strides": [2], "output_shape": [8]}),
        _sh("1d/output_shape/even-total", "NC4", "CM3", "M", {"strides": [2], "output_shape": [7]}),
        _sh("2d", "NChw", "CM33", "M", dims=sp),
        _sh("2d/strides-output_padding", "NChw", "CM33", "M", {"strides": [2, 3], "output_padding": [1, 2]}, dims=sp),
        _sh("2d/asym-pads/strides", "NChw", "CM32", "M", {"pads": [0, 1, 2, 0], "strides": [2, 1]}, dims=sp),
        _sh("2d/dilations/strides", "NChw", "CM22", "M", {"dilations": [2, 2], "strides": [2, 1]}, dims=sp),
        _sh("2d/output_shape", "NC34", "CM33", "M", {"strides": [2, 2], "output_shape": [6, 9]}),
        _sh("2d/output_shape+output_padding", "NC34", "CM33", "M",
            {"strides": [2, 2], "output_padding": [1, 1], "output_shape": [8, 9]}),
        _sh("2d/output_shape+pads", "NC34", "CM33", "M",
            {"strides": [2, 2], "pads": [1, 1, 1, 1], "output_shape": [7, 9]}),
        _sh("2d/output_shape/same-upper", "NC34", "CM33", "M",
            {"auto_pad": "SAME_UPPER", "strides": [2, 2], "output_shape": [6, 8]}),
        _sh("2d/same-upper/strides", "NChw", "CM33", "M", {"auto_pad": "SAME_UPPER", "strides": [2, 2]}, dims=sp),
        _sh("2d/same-lower/strides", "NChw", "CM33", "M", {"auto_pad": "SAME_LOWER", "strides": [2, 2]}, dims=sp),
        _sh("2d/same-upper/k=2", "NChw", "CM22", "M", {"auto_pad": "SAME_UPPER"}, dims=sp),
        _sh("2d/valid/strides", "NChw", "CM33", "M", {"auto_pad": "VALID", "strides": [2, 2]}, dims=sp),
        _sh("2d/group=2", "N4hw", "4233", "4", {"group": 2}, dims=sp),
        _sh("2d/depthwise/strides", "N3hw", "3122", "3", {"group": 3, "strides": [2, 2]}, dims=sp),
        _sh("2d/kernel_shape", "NChw", "CM23", "M", {"kernel_shape": [2, 3]}, dims=sp),
        _sh("2d/1x1/strides", "NChw", "CM11", "M", {"strides": [2, 2]}, dims=sp),
        _sh("3d/strides", "NCdhw", "CM222", "M", {"strides": [2, 1, 2]}, dims=sp),
        _sh("3d/strides-pads-output_padding", "NCdhw", "CM322", "M",
            {"strides": [2, 2, 2], "output_padding": [1, 0, 1], "pads": [1, 0, 0, 0, 1, 1]}, dims=sp),
        _sh("zero-batch", "0Chw", "CM33", "M", dims=sp),
        _sh("long-K", "1L33", "L233", "2", dims={"L": (256, 256)}, numerics=("positive", "normal")),
    )


CT_SHAPES = _ct_shapes()

_CT_ERRORS = (
    Err("W (C, M/group, k1, k2): W.shape[0] = 3 is not C = 2", "W-channels", {},
        ((1, 2, 4, 4), (3, 2, 3, 3))),
    Err("group 2 does not divide C = 3", "group-not-dividing-C", {"group": 2}, ((1, 3, 4, 4), (3, 1, 3, 3))),
    Err("W has X's rank: a rank-3 W for a 2-D transposed convolution", "W-rank", {}, ((1, 2, 4, 4), (2, 2, 3))),
    Err("kernel_shape [2, 2] disagrees with W's spatial shape (3, 3)", "kernel_shape-mismatch",
        {"kernel_shape": [2, 2]}, ((1, 2, 4, 4), (2, 2, 3, 3))),
    Err("pads has 2 values per spatial axis (4 for 2-D), not 3", "pads-length", {"pads": [1, 1, 1]},
        ((1, 2, 4, 4), (2, 2, 3, 3))),
    Err("output_shape has one value per spatial axis (2), not 3", "output_shape-length",
        {"output_shape": [8, 8, 8]}, ((1, 2, 4, 4), (2, 2, 3, 3))),
    Err("B is 1-D of length M = W.shape[1] * group = 2, not 3", "B-length", {},
        ((1, 2, 4, 4), (2, 2, 3, 3), (3,))),
    Err("pads 'cannot be used simultaneously with auto_pad attribute' (SAME_UPPER)", "pads-with-auto_pad",
        {"auto_pad": "SAME_UPPER", "pads": [1, 1, 1, 1], "strides": [2, 2]}, ((1, 2, 4, 4), (2, 2, 3, 3))),
    Err("pads 'can take any value greater than or equal to 0': -1", "negative-pads", {"pads": [-1, 0, 0, 0]},
        ((1, 2, 4, 4), (2, 2, 3, 3))),
    Err("'Each padding value in output_padding must be less than the corresponding stride/dilation dimension': "
        "2 with stride 1 and dilation 1", "output_padding-too-large", {"output_padding": [2, 2]},
        ((1, 2, 4, 4), (2, 2, 3, 3))),
)

CONV_TRANSPOSE = Entry(
    "ConvTranspose", conv_transpose_oracle, family="shaped", shapes=CT_SHAPES, tolerance=conv_transpose_tolerance,
    float_numerics=CLASSES, per_type=len(CT_SHAPES), errors=_CT_ERRORS, contested=_ct_contested,
    check=_ct_check,
    notes={11: "auto_pad SAME_*: output = input * strides (version 1: 'match the input'); output_shape's odd "
               "total padding: extra at the beginning unless SAME_UPPER (version 1: at the end unless SAME_UPPER)",
           22: "bfloat16"},
)



# ----------------------------------------------------------------------------- Col2Im
def col2im_oracle(ctx, x, image_shape, block_shape, **attrs):
    """Col2Im of the exact input, exactly (:func:`conformance.reference.conv.col2im`)."""
    return ref.col2im(x, image_shape, block_shape, attrs)


def col2im_tolerance(ctx, inputs, attrs, outputs):
    """The sum of at most ``prod(block_shape)`` elements in T, any order
    (:func:`conformance.reference.conv.col2im_bound`; the text names no wider precision), the
    largest per-element bound as ``atol`` plus half an ulp relative; complex types part by part
    (the comparison checks the real and imaginary parts each); integers exact."""
    t = ctx.out_types["output"]
    k = V.kind(t)
    if k == V.INT:
        return {"output": Tolerance(0.0, 0.0, exact=True)}
    x = inputs[0]
    part = {"complex64": "float", "complex128": "double"}.get(t, t)
    u = float(V.finfo(part).eps) / 2
    if k == V.COMPLEX:
        b = np.maximum(ref.col2im_bound(x.real, inputs[1], inputs[2], attrs, u),
                       ref.col2im_bound(x.imag, inputs[1], inputs[2], attrs, u))
    else:
        b = ref.col2im_bound(x, inputs[1], inputs[2], attrs, u)
    y = np.asarray(outputs["output"])
    fin = np.isfinite(y.real if k == V.COMPLEX else y.astype(np.float64))
    b = b[fin] if b.shape == y.shape else b
    atol = float(b.max()) if np.size(b) else 0.0
    return {"output": Tolerance(atol, u, variants=("bound",))}


def _col2im_float(kind: str):
    def fn(rng, ctx, shapes):
        """Floating numerics classes of Col2Im (the structural shape inputs are the pattern's):
        ``wide``: magnitudes ``2^[-E, E]`` with ``E`` such that 8 overlapping values stay four
        times below the type's largest (an overflowing partial sum would depend on the order);
        ``special``: ordinary values plus one NaN, one +inf, one -inf (an infinity meeting a
        finite value is that infinity, meeting the other is NaN, in any order), a -0 and a
        subnormal.  Complex types: both parts alike."""
        t = ctx.types["input"]
        part = {"complex64": "float", "complex128": "double"}.get(t, t)
        fi = V.finfo(part)
        sh = shapes[0]
        if kind == "wide":
            e = min(60, int(math.log2(float(fi.max))) - 6)
            x = rng.uniform(-1, 1, size=sh) * 2.0 ** rng.integers(-e, e + 1, size=sh)
        else:
            x = rng.uniform(-2, 2, size=sh)
            if x.size:
                vals = [math.nan, math.inf, -math.inf, -0.0, float(fi.smallest_subnormal)]
                for q, v in zip(rng.permutation(x.size)[: len(vals)], vals):
                    x.reshape(-1)[q] = v
        x = V.representable(x, part)
        if V.kind(t) == V.COMPLEX:
            x = x + 1j * V.representable(rng.uniform(-2, 2, size=sh), part)
        return [x] + [np.zeros(s_, dtype=np.int64) for s_ in shapes[1:]]

    fn.__name__ = fn.__qualname__ = f"col2im_{kind}"
    return fn


def _c2i(name, inp, image, block, attrs=None, **kw) -> Shape:
    return Shape(name, {"input": inp, "image_shape": str(len(image)), "block_shape": str(len(block))},
                 dict(attrs or {}), values={"image_shape": list(image), "block_shape": list(block)},
                 dims={"N": (1, 2), **kw.pop("dims", {})}, **kw)


COL2IM_SHAPES = (
    _c2i("2d/overlap", "N86", [3, 4], [2, 2]),
    _c2i("2d/strides/no-overlap", "N64", [4, 6], [2, 3], {"strides": [2, 3]}),
    _c2i("2d/pads-dilations-strides", "N8L", [5, 5], [2, 2], {"pads": [1, 0, 1, 2], "dilations": [2, 1],
                                                             "strides": [1, 2]}, dims={"L": (15, 15)}),
    _c2i("2d/block=image", "N61", [2, 3], [2, 3]),
    _c2i("2d/1x1-block", "NC6", [2, 3], [1, 1]),
    _c2i("3d/overlap", "N88", [3, 3, 3], [2, 2, 2]),
    _c2i("3d/strides-pads", "N88", [3, 4, 2], [2, 2, 2], {"strides": [1, 2, 1], "pads": [0, 1, 0, 0, 0, 1]}),
    _c2i("zero-batch", "086", [3, 4], [2, 2]),
)

_COL2IM_ERRORS = (
    Err("L = 5 is not the number of blocks (2 x 3 = 6 for a 3 x 4 image and 2 x 2 blocks)", "L-mismatch",
        shapes=((1, 4, 5), (2,), (2,)), values={"image_shape": [3, 4], "block_shape": [2, 2]}),
    Err("input.shape[1] = 6 is not a multiple of prod(block_shape) = 4", "channels-not-multiple",
        shapes=((1, 6, 6), (2,), (2,)), values={"image_shape": [3, 4], "block_shape": [2, 2]}),
    Err("image_shape and block_shape have the same length (2 and 3 here)", "shape-lengths",
        shapes=((1, 8, 6), (2,), (3,)), values={"image_shape": [3, 4], "block_shape": [2, 2, 2]}),
)


def _col2im_types(version, combo) -> str | None:
    if combo["T"] in ("bool", "string"):
        return ("Col2Im adds the values of overlapping blocks (PyTorch's fold, which the text names); the text "
                "defines no sum of booleans or strings")
    return None


COL2IM = Entry(
    "Col2Im", col2im_oracle, family="shaped", shapes=COL2IM_SHAPES, tolerance=col2im_tolerance, per_type=8,
    float_numerics={"wide": _col2im_float("wide"), "special": _col2im_float("special")},
    errors=_COL2IM_ERRORS, type_filter=_col2im_types,
)


# ----------------------------------------------------------------------------- DeformConv
_DEFORM_NAMES = ("X", "W", "offset", "B", "mask")


def _deform_data(offsets: str):
    def fn(rng, ctx, shapes):
        """Numerics classes of DeformConv: X, W, B uniform in [-2, 2], mask in [0, 1]; offsets
        ``fractional`` (multiples of 1/64 in [-2.5, 2.5]: bilinear weights exact in every type,
        samples falling outside X), ``integer`` (in [-2, 2]: a gather, neighbours outside X),
        ``zero`` (with the mask absent or ones, DeformConv is Conv)."""
        t = _t(ctx)
        names = [n for n in _DEFORM_NAMES if n in ctx.types]
        out = []
        for name, sh in zip(names, shapes):
            if name == "offset":
                if offsets == "fractional":
                    v = np.round(rng.uniform(-2.5, 2.5, size=sh) * 64) / 64
                elif offsets == "integer":
                    v = rng.integers(-2, 3, size=sh).astype(np.float64)
                else:
                    v = np.zeros(sh)
                out.append(V.representable(v, t))
            elif name == "mask":
                out.append(_uniform(rng, sh, t, 0, 1) if offsets != "zero" else np.ones(sh))
            else:
                out.append(_uniform(rng, sh, t, -2, 2))
        return out

    fn.__name__ = fn.__qualname__ = f"deform_{offsets}"
    return fn


DEFORM_CLASSES = {"fractional-offsets": _deform_data("fractional"), "integer-offsets": _deform_data("integer"),
                  "zero-offsets": _deform_data("zero")}


def deform_oracle(ctx, x, w, offset, b=None, mask=None, **attrs):
    """DeformConv of the exact inputs, exactly (:func:`conformance.reference.conv.deform_conv`)."""
    return ref.deform_conv(x, w, offset, b, mask, attrs)


def deform_tolerance(ctx, inputs, attrs, outputs):
    """:func:`conformance.reference.conv.deform_conv_bound` in the mandated precision (at least
    float32 for the 16-bit types, as Conv), plus the 16-bit types' rounding before the bias,
    then the rounding to T."""
    t = ctx.out_types["Y"]
    x, w, off = inputs[0], inputs[1], inputs[2]
    b = inputs[3] if len(inputs) > 3 else None
    mask = inputs[4] if len(inputs) > 4 else None
    u, s = lref.ACC[t]
    bound = ref.deform_conv_bound(x, w, off, b, mask, attrs, u, s)
    if b is not None:
        bound = bound + _t_rounding(t, ref.deform_conv(x, w, off, None, mask, attrs))
    return {"Y": _final(t, bound, outputs["Y"])}


def _dc(name, x, w, off, b, mask, attrs=None, **kw) -> Shape:
    dims = {"N": (1, 2), "C": (1, 3), "M": (1, 3), **kw.pop("dims", {})}
    return Shape(name, {"X": x, "W": w, "offset": off, "B": b, "mask": mask}, dict(attrs or {}), dims=dims, **kw)


DEFORM_SHAPES = (
    _dc("2d/3x3", "NC45", "MC33", "NQ23", "M", "N923", dims={"Q": (18, 18)}),
    _dc("2d/pads-strides-dilations", "NC55", "MC22", "N833", "M", "N433",
        {"pads": [1, 1, 1, 1], "strides": [2, 2], "dilations": [2, 1]}),
    _dc("2d/offset_group=2", "N445", "M433", "NQ23", "M", "NR23", {"offset_group": 2},
        dims={"Q": (36, 36), "R": (18, 18)}),
    _dc("2d/group=2", "N445", "4233", "NQ23", "4", "N923", {"group": 2}, dims={"Q": (18, 18)}),
    _dc("2d/group=2/offset_group=2/kernel_shape", "N444", "4222", "NQ33", "4", "N833",
        {"group": 2, "offset_group": 2, "kernel_shape": [2, 2]}, dims={"Q": (16, 16)}),
    _dc("2d/1x1", "NC34", "MC11", "N234", "M", "N134"),
    _dc("1d", "NC6", "MC3", "N34", "M", "N34"),
    _dc("zero-batch", "0C45", "MC33", "0Q23", "M", "0923", dims={"Q": (18, 18)}),
)

_DEFORM_ERRORS = (
    Err("offset has offset_group * kH * kW * 2 = 18 channels, not 9", "offset-channels", {},
        ((1, 2, 4, 5), (3, 2, 3, 3), (1, 9, 2, 3))),
    Err("offset's spatial shape is the output's (2, 3), not (3, 3)", "offset-spatial", {},
        ((1, 2, 4, 5), (3, 2, 3, 3), (1, 18, 3, 3))),
    Err("C = 3 must be divisible by offset_group = 2", "offset_group-not-dividing-C", {"offset_group": 2},
        ((1, 3, 4, 5), (3, 3, 3, 3), (1, 36, 2, 3))),
    Err("X.shape[1] == W.shape[1] * group: W has 3 input channels for C = 2", "W-channels", {},
        ((1, 2, 4, 5), (3, 3, 3, 3), (1, 18, 2, 3))),
)

DEFORM_CONV = Entry(
    "DeformConv", deform_oracle, family="shaped", shapes=DEFORM_SHAPES, tolerance=deform_tolerance,
    float_numerics=DEFORM_CLASSES, numerics_classes=lambda t: tuple(DEFORM_CLASSES), per_type=len(DEFORM_SHAPES),
    errors=_DEFORM_ERRORS, notes={22: "bfloat16"},
)


# ----------------------------------------------------------------------------- CausalConvWithState
_CAUSAL_NAMES = ("input", "weight", "bias", "past_state")


def _causal_data(kind: str):
    def fn(rng, ctx, shapes):
        """Numerics classes of CausalConvWithState: ``normal`` (every input in [-2, 2]),
        ``wide`` (channels scaled by ``2^[-6, 6]``, input and state alike), ``special`` (one NaN,
        a -0 and a subnormal in the input or the past state: the NaN reaches the outputs whose
        window holds it and the state that keeps it)."""
        t = ctx.types["input"]
        names = [n for n in _CAUSAL_NAMES if n in ctx.types]
        out = [_uniform(rng, sh, t, -2, 2) for sh in shapes]
        if kind == "wide" and shapes[0][1]:
            sc = 2.0 ** rng.integers(-6, 7, size=shapes[0][1])
            for i, n in enumerate(names):
                if n in ("input", "past_state"):
                    out[i] = V.representable(out[i] * sc[None, :, None], t)
        if kind == "special":
            fi = V.finfo(t)
            tgt = [i for i, n in enumerate(names) if n in ("input", "past_state") and out[i].size]
            vals = [math.nan, -0.0, float(fi.smallest_subnormal)]
            for v in vals:
                if tgt:
                    i = tgt[int(rng.integers(len(tgt)))]
                    out[i].reshape(-1)[int(rng.integers(out[i].size))] = v
        return out

    fn.__name__ = fn.__qualname__ = f"causal_{kind}"
    return fn


CAUSAL_CLASSES = {k: _causal_data(k) for k in ("normal", "wide", "special")}


def causal_oracle(ctx, x, w, bias=None, past_state=None, activation="none", **attrs):
    """CausalConvWithState (its text): the past state (zeros when absent) concatenated before the
    input along the length, a depthwise valid convolution with ``weight`` ``(C, 1, k)`` (exact,
    :func:`conformance.reference.conv.conv` with ``group = C``), SiLU ``z sigmoid(z)`` for
    ``silu``/``swish`` (float64); ``present_state`` the last ``k - 1`` positions of the
    concatenation."""
    n, c, _ = x.shape
    k = w.shape[2]
    past = np.zeros((n, c, k - 1)) if past_state is None else past_state
    seq = np.concatenate([past, x], axis=2)
    z = ref.conv(seq, w, bias, {"group": c})
    act = activation.decode() if isinstance(activation, bytes) else activation
    if act in ("silu", "swish"):
        with np.errstate(all="ignore"):
            z = z / (1.0 + libm.exp(-z))
    return z, seq[:, :, seq.shape[2] - (k - 1):]


def causal_tolerance(ctx, inputs, attrs, outputs):
    """``output``: the depthwise sum of ``k`` products and the bias
    (:func:`conformance.reference.conv.direct_bound` in the mandated precision: float32 for the
    16-bit types) and the rounding before the bias in T; with SiLU, that bound times
    ``max |silu'| < 1.1`` plus SiLU's own error in the working precision (exp 3 ulp, the
    addition, the division and the product: 8 ulp of float, relative) and, for the 16-bit types,
    ``z`` rounded to T first (``1.1 u_T |z|``) and the result's rounding; ``present_state``:
    exact (data movement)."""
    t = ctx.out_types["output"]
    x, w = inputs[0], inputs[1]
    bias = inputs[2] if len(inputs) > 2 else None
    past = inputs[3] if len(inputs) > 3 else None
    n, c, _ = x.shape
    k = w.shape[2]
    seq = np.concatenate([np.zeros((n, c, k - 1)) if past is None else past, x], axis=2)
    u, s = lref.ACC[t]
    u_t = float(V.finfo(t).eps) / 2
    a = {"group": c}
    bound = ref.direct_bound(seq, w, bias, a, u, s)
    z = ref.conv(seq, w, bias, a)
    if bias is not None:
        bound = bound + _t_rounding(t, ref.conv(seq, w, None, a))
    act = attrs.get("activation", "none")
    if act in ("silu", "swish"):
        with np.errstate(all="ignore"):
            y = np.abs(np.asarray(outputs["output"], dtype=np.float64))
            zf = np.abs(np.where(np.isfinite(z), z, 0.0))
        bound = 1.1 * bound + 8 * u * np.where(np.isfinite(y), y, 0.0)
        if u_t > u:
            bound = bound + 1.1 * u_t * zf + 4 * u_t * np.where(np.isfinite(y), y, 0.0)
    return {"output": _final(t, bound, outputs["output"]), "present_state": Tolerance(0.0, 0.0, exact=True)}


def _cc(name, x, w, past, **kw) -> Shape:
    dims = {"N": (1, 2), "C": (1, 4), **kw.pop("dims", {})}
    return Shape(name, {"input": x, "weight": w, "bias": "C", "past_state": past}, dims=dims, **kw)


CAUSAL_SHAPES = (
    _cc("k=3", "NCL", "C13", "NC2", dims={"L": (1, 6)}),
    _cc("k=4/decode-step", "NC1", "C14", "NC3"),
    _cc("k=4/input-shorter-than-state", "NC2", "C14", "NC3"),
    _cc("k=2/long", "NCL", "C12", "NC1", dims={"L": (8, 16), "C": (4, 8)}),
    _cc("k=1/empty-state", "NCL", "C11", "NC0", dims={"L": (1, 5)}),
    _cc("zero-batch", "0CL", "C13", "0C2"),
)

_CAUSAL_ERRORS = (
    Err("weight is (channels, 1, k): 3 channels for an input of 2", "weight-channels", {},
        ((1, 2, 5), (3, 1, 3))),
    Err("past_state is (batch_size, channels, k - 1) = (1, 2, 2), not (1, 2, 3)", "past_state-length", {},
        ((1, 2, 5), (2, 1, 3), (2,), (1, 2, 3))),
    Err("the input is rank 3 (batch_size, channels, length)", "input-rank", {}, ((2, 5), (2, 1, 3))),
)

CAUSAL_CONV = Entry(
    "CausalConvWithState", causal_oracle, family="shaped", shapes=CAUSAL_SHAPES, tolerance=causal_tolerance,
    float_numerics=CAUSAL_CLASSES, numerics_classes=lambda t: tuple(CAUSAL_CLASSES), per_type=12,
    attrs=(Attrs({"activation": "silu"}, tag="silu"), Attrs({"activation": "swish"}, tag="swish")),
    errors=_CAUSAL_ERRORS,
)


# ----------------------------------------------------------------------------- com.microsoft FusedConv
MS = "com.microsoft"

#: onnxruntime's fused activations (contrib_ops/cpu/fused_activation.cc): name -> (parameter count,
#: the largest |derivative|, whether the activation is a transcendental function).
FUSED_ACTIVATIONS = {"Relu": (0, 1.0, False), "Tanh": (0, 1.0, True), "Sigmoid": (0, 0.25, True),
                     "Silu": (0, 1.1, True), "LeakyRelu": (1, None, False), "Clip": (2, 1.0, False),
                     "HardSigmoid": (2, None, False)}


def fused_activation(z: np.ndarray, activation, params) -> np.ndarray:
    """onnxruntime's fused activation of FusedConv in float64 (its ContribOperators.md: "the same
    as Conv besides it includes an attribute activation"; the activations and their
    ``activation_params`` of ``fused_activation.cc``): identity when absent, Relu, Tanh,
    Sigmoid, Silu ``z sigmoid(z)``, LeakyRelu ``(alpha)``, Clip ``(min, max)``, HardSigmoid
    ``(alpha, beta)``: ``max(0, min(1, alpha z + beta))``.

    Raises:
        ValueError: another activation name.
    """
    act = activation.decode() if isinstance(activation, bytes) else activation
    p = list(params or [])
    with np.errstate(all="ignore"):
        if act is None:
            return z
        if act == "Relu":
            return np.maximum(z, 0.0)
        if act == "Tanh":
            return libm.tanh(z)
        if act == "Sigmoid":
            return 1.0 / (1.0 + libm.exp(-z))
        if act == "Silu":
            return z / (1.0 + libm.exp(-z))
        if act == "LeakyRelu":
            return np.where(z >= 0, z, p[0] * z)
        if act == "Clip":
            return np.minimum(np.maximum(z, p[0]), p[1])
        if act == "HardSigmoid":
            return np.clip(p[0] * z + p[1], 0.0, 1.0)
    raise ValueError(f"unimplemented activation: {act}")


def fused_conv_oracle(ctx, x, w, b=None, z=None, activation=None, activation_params=None, **attrs):
    """FusedConv: ``activation(Conv(X, W, B) + Z)`` (Z, onnxruntime's "sum" input, has Y's shape),
    the convolution exact (:func:`conformance.reference.conv.conv`), the activation in float64
    (:func:`fused_activation`)."""
    y = ref.conv(x, w, b, attrs)
    if z is not None:
        y = y + z
    return fused_activation(y, activation, activation_params)


def fused_conv_tolerance(ctx, inputs, attrs, outputs):
    """The Conv bound with Z as one more term (the largest of Higham's and Winograd's, in the
    mandated precision; the 16-bit types' rounding of the sum to T before B and Z), carried
    through the activation's largest slope (1; 0.25 for Sigmoid; 1.1 for Silu; ``max(1,
    |alpha|)`` for LeakyRelu; ``|alpha|`` for HardSigmoid), plus for Tanh, Sigmoid and Silu their
    own error in the working precision (8 ulp of it, relative to ``max(|y|, 1)``: MLAS's
    polynomial approximations) and, for the 16-bit types, ``z`` rounded to T first."""
    t = ctx.out_types["Y"]
    x, w = inputs[0], inputs[1]
    b = inputs[2] if len(inputs) > 2 else None
    zin = inputs[3] if len(inputs) > 3 else None
    u, s = lref.ACC[t]
    u_t = float(V.finfo(t).eps) / 2
    bound = ref.conv_bound(x, w, b, attrs, u, s)
    pre = ref.conv(x, w, None, attrs)
    if zin is not None:
        bound = bound + gamma_1(u) * np.abs(zin) + u * np.abs(np.where(np.isfinite(pre), pre, 0.0))
    if b is not None or zin is not None:
        bound = bound + _t_rounding(t, pre)
    act = attrs.get("activation")
    if act is not None:
        _, slope, transcendental = FUSED_ACTIVATIONS[act]
        p = list(attrs.get("activation_params") or [])
        if slope is None:
            slope = max(1.0, abs(p[0])) if act == "LeakyRelu" else abs(p[0])
        y = np.abs(np.asarray(outputs["Y"], dtype=np.float64))
        y = np.where(np.isfinite(y), y, 0.0)
        zz = ref.conv(x, w, b, attrs) + (0 if zin is None else zin)
        zz = np.abs(np.where(np.isfinite(zz), zz, 0.0))
        bound = slope * bound
        if transcendental:
            bound = bound + 8 * u * np.maximum(y, 1.0)
        if u_t > u:
            bound = bound + slope * u_t * zz
    return {"Y": _final(t, bound, outputs["Y"])}


def gamma_1(u: float) -> float:
    """``gamma_1(u)``: one rounding (the addition of Z)."""
    return lref.gamma(1, u)


def _fc(name, x, w, b, z, attrs=None, **kw) -> Shape:
    dims = {"N": (1, 2), "C": (1, 3), "M": (1, 3), **kw.pop("dims", {})}
    return Shape(name, {"X": x, "W": w, "B": b, "Z": z}, dict(attrs or {}), dims=dims, **kw)


FUSED_SHAPES = (
    _fc("2d/3x3", "NC45", "MC33", "M", "NM23"),
    _fc("2d/pads-strides", "NC56", "MC33", "M", "NM33", {"pads": [1, 1, 1, 1], "strides": [2, 2]}),
    _fc("2d/same-upper/k=2", "NC56", "MC22", "M", "NM56", {"auto_pad": "SAME_UPPER"}),
    _fc("2d/same-lower/k=2", "NC56", "MC22", "M", "NM56", {"auto_pad": "SAME_LOWER"}),
    _fc("2d/group=2/dilations", "N456", "4222", "4", "N434", {"group": 2, "dilations": [2, 2]}),
    _fc("2d/depthwise/kernel_shape", "N345", "3133", "3", "N323", {"group": 3, "kernel_shape": [3, 3]}),
    _fc("1d/strides", "NC7", "MC3", "M", "NM3", {"strides": [2]}),
    _fc("3d", "NC333", "MC222", "M", "NM222"),
    _fc("zero-batch", "0C45", "MC33", "M", "0M23"),
)

#: The activation states (Silu, which ``fused_activation.cc`` gained after onnxruntime 1.32 --
#: 1.32 rejects it at initialization -- is left out; the oracle knows it).
FUSED_ATTRS = (
    Attrs({"activation": "Relu"}, tag="Relu"),
    Attrs({"activation": "Tanh"}, tag="Tanh"),
    Attrs({"activation": "Sigmoid"}, tag="Sigmoid"),
    Attrs({"activation": "LeakyRelu", "activation_params": [0.125]}, tag="LeakyRelu"),
    Attrs({"activation": "Clip", "activation_params": [-1.0, 1.5]}, tag="Clip"),
    Attrs({"activation": "HardSigmoid", "activation_params": [0.25, 0.5]}, tag="HardSigmoid"),
)

_FUSED_ERRORS = (
    Err("X.shape[1] == W.shape[1] * group: W has 3 input channels for C = 2 (as Conv)", "W-channels", {},
        ((1, 2, 5, 5), (3, 3, 3, 3))),
    Err("kernel_shape [2, 2] disagrees with W's spatial shape (3, 3) (as Conv)", "kernel_shape-mismatch",
        {"kernel_shape": [2, 2]}, ((1, 2, 5, 5), (3, 2, 3, 3))),
    Err("activation_params: LeakyRelu takes 1 value, not 2 ('activation_params count mismatch')",
        "activation_params-count", {"activation": "LeakyRelu", "activation_params": [0.1, 0.2]},
        ((1, 2, 5, 5), (3, 2, 3, 3))),
    Err("an activation onnxruntime does not implement ('unimplemented activation: Elu')", "unknown-activation",
        {"activation": "Elu"}, ((1, 2, 5, 5), (3, 2, 3, 3))),
)

FUSED_CONV = Entry(
    "FusedConv", fused_conv_oracle, family="shaped", domain=MS, shapes=FUSED_SHAPES,
    tolerance=fused_conv_tolerance, float_numerics={k: v for k, v in CLASSES.items() if k != "positive"},
    attrs=FUSED_ATTRS, per_type=18, errors=_FUSED_ERRORS,
)


# ----------------------------------------------------------------- com.microsoft ConvTransposeWithDynamicPads
def ct_dynamic_oracle(ctx, x, w, pads=None, b=None, **attrs):
    """ConvTransposeWithDynamicPads: ConvTranspose (version 11's text,
    :func:`conformance.reference.conv.conv_transpose`) whose ``pads`` come from the optional
    int64 input ``Pads`` (ONNX layout ``[x1_begin, ..., x1_end, ...]``) instead of an attribute;
    absent: the auto_pad rule or zeros.  onnxruntime documents no more (its schema has no doc)."""
    a = dict(attrs)
    if pads is not None:
        a["pads"] = [int(v) for v in np.ravel(pads)]
    return ref.conv_transpose(x, w, b, a, 22)


def ct_dynamic_tolerance(ctx, inputs, attrs, outputs):
    """As ConvTranspose's (:func:`conv_transpose_tolerance`), the pads from the input."""
    t = ctx.out_types["Y"]
    x, w = inputs[0], inputs[1]
    pads = inputs[2] if len(inputs) > 2 else None
    b = inputs[3] if len(inputs) > 3 else None
    a = dict(attrs)
    if pads is not None:
        a["pads"] = [int(v) for v in np.ravel(pads)]
    u, s = lref.ACC[t]
    bound = ref.conv_transpose_bound(x, w, b, a, u, s, 22)
    if b is not None:
        bound = bound + _t_rounding(t, ref.conv_transpose(x, w, None, a, 22))
    return {"Y": _final(t, bound, outputs["Y"])}


def _ctd(name, x, w, b, pads=None, attrs=None, **kw) -> Shape:
    dims = {"N": (1, 2), "C": (1, 3), "M": (1, 3), "h": (2, 4), "w": (2, 4), **kw.pop("dims", {})}
    with_pads = pads is not None
    return Shape(name, {"X": x, "W": w, "Pads": str(2 * (len(x) - 2)) if with_pads else "", "B": b},
                 dict(attrs or {}), dims=dims, values={"Pads": list(pads)} if with_pads else {},
                 optional=((("Pads",), ("Pads", "B")) if with_pads else ((), ("B",))), **kw)


CTD_SHAPES = (
    _ctd("2d/Pads/strides", "NChw", "CM33", "M", [1, 0, 0, 2], {"strides": [2, 2]}),
    _ctd("2d/Pads/output_padding", "NChw", "CM33", "M", [0, 1, 1, 0], {"strides": [2, 3], "output_padding": [1, 2]}),
    _ctd("2d/Pads/dilations/kernel_shape", "NChw", "CM22", "M", [1, 1, 0, 1], {"dilations": [2, 2],
                                                                              "kernel_shape": [2, 2]}),
    _ctd("2d/Pads/group=2", "N4hw", "4233", "4", [1, 1, 1, 1], {"group": 2, "strides": [2, 1]}),
    _ctd("1d/Pads", "NCh", "CM4", "M", [2, 1], {"strides": [3]}),
    _ctd("2d/no-Pads", "NChw", "CM33", "M", None, {"strides": [2, 2]}),
    _ctd("2d/same-upper", "NChw", "CM33", "M", None, {"auto_pad": "SAME_UPPER", "strides": [2, 2]}),
    _ctd("2d/same-lower", "NChw", "CM33", "M", None, {"auto_pad": "SAME_LOWER", "strides": [2, 2]}),
    _ctd("zero-batch", "0Chw", "CM33", "M", [1, 0, 0, 1]),
)

_CTD_ERRORS = (
    Err("W (C, M/group, k1, k2): W.shape[0] = 3 is not C = 2 (as ConvTranspose)", "W-channels", {},
        ((1, 2, 4, 4), (3, 2, 3, 3))),
    Err("kernel_shape [2, 2] disagrees with W's spatial shape (3, 3) (as ConvTranspose)", "kernel_shape-mismatch",
        {"kernel_shape": [2, 2]}, ((1, 2, 4, 4), (2, 2, 3, 3))),
)

def _ctd_contested(ctx, attrs) -> str | None:
    """Pads absent: onnxruntime's schema makes the input optional, its CPU kernel requires it."""
    if "Pads" not in ctx.types:
        return ("Pads absent: onnxruntime's schema declares the input optional, its CPU kernel requires it "
                "('Dynamic pads tensor is required')")
    return None


CT_DYNAMIC = Entry(
    "ConvTransposeWithDynamicPads", ct_dynamic_oracle, family="shaped", domain=MS, shapes=CTD_SHAPES,
    contested=_ctd_contested,
    tolerance=ct_dynamic_tolerance, float_numerics={k: v for k, v in CLASSES.items() if k != "positive"},
    per_type=len(CTD_SHAPES), errors=_CTD_ERRORS,
)


ENTRIES = (CONV, CONV_TRANSPOSE, COL2IM, DEFORM_CONV, CAUSAL_CONV, FUSED_CONV, CT_DYNAMIC)
register_entries(ENTRIES, family="conv")
