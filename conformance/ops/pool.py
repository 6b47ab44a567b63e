"""The pooling operators as entries of the operator table (family ``shaped``): MaxPool,
AveragePool, LpPool, GlobalAveragePool, GlobalMaxPool, GlobalLpPool, MaxUnpool, and the
com.microsoft (onnxruntime-defined) MaxpoolWithMask and NhwcMaxPool.

Oracles, geometry, bounds and checks: :mod:`conformance.reference.pool`.  What the entries add
to the schema:

**Shape table** (:func:`_pool_shapes`): spatial ranks 1, 2 and 3; explicit symmetric and
asymmetric pads; strides; a kernel larger than the unpadded input (3x3 over 2x2 with pads 1,
which the text allows: only the padded input must hold the kernel); a kernel equal to the input;
1x1 kernels with stride 2; ``auto_pad`` SAME_UPPER and SAME_LOWER with an odd total padding (so
the two differ), with stride 2, and with dilations (the padding of the dilated kernel), VALID;
dilations (from MaxPool-10, LpPool-18, AveragePool-19); ``ceil_mode`` (from 10 / 18) with an
overhang beyond the input, an overhang beyond the padding, the window that would start in the
right padding (dropped), and with dilations; a zero-size batch; long windows (16x16) for the
accumulating classes.  MaxPool's Indices (from 8) in row- and column-major order, 2-D and 3-D,
with N, C >= 2 (the batch/channel offset).  AveragePool's ``count_include_pad`` (from 7) with
pads, with SAME padding, and with the ceil_mode overhang (0: the overhang divides by the input
elements only; 1: contested, :func:`conformance.reference.pool.check_average_pool_overhang`).

**Numerics.**  MaxPool: ``normal``, ``wide``, ``special`` (NaN, infinities, extremes,
subnormals, signed zeros sprinkled), ``large-offset`` (1000 + small differences: ties in the
16-bit types), ``extremes`` (values within a factor 2 of the type's largest magnitude and the
lowest value), integer ``int``/``int-extremes`` for int8/uint8 (MaxPool-12).  NaN in a window
(the text says "max" and nothing of NaN) and ties of the Indices output (the text does not say
which maximum's index) are judged by :func:`conformance.reference.pool.check_max_pool`: either
NaN reading, any index of an element holding the maximum.  AveragePool / LpPool: ``normal``,
``wide`` and ``special`` bounded so that no partial sum (LpPool: of ``|x|^p``) can overflow the
accumulation precision (an exact mean of two float32 maxima is finite, a legitimate float32
kernel overflows: the text does not ask for scaling), ``large-offset``, ``extremes`` (the
largest magnitudes that cannot overflow: ``max / (2 n)`` for a window of ``n``), ``positive``
(long windows: a float16 accumulator stagnates).

**Tolerance.**  Max pooling exact (also Indices).  AveragePool / GlobalAveragePool:
:func:`conformance.reference.pool.mean_bound`; LpPool / GlobalLpPool:
:func:`conformance.reference.pool.lp_tolerance` (docs/tolerance.md, "Pooling").

**Error cases.**  Negative pads, pads of the wrong length, kernel_shape of the wrong length, a
kernel (or dilated kernel) larger than the padded input, ``auto_pad`` with ``pads``,
``storage_order`` on MaxPool-1, ``ceil_mode`` / ``dilations`` / ``count_include_pad`` on the
versions without them.
"""

from __future__ import annotations

import math

import numpy as np

from ..reference import pool as ref
from ..tolerance import Tolerance
from . import values as V
from .engine import register_entries
from .entry import Attrs, Entry, Err, Shape

# ============================================================================ shape table
_DIMS = {"N": (1, 2), "C": (1, 3), "L": (3, 8), "D": (2, 4), "H": (2, 6), "W": (2, 6)}
CHECK_MAX = "conformance.reference.pool:check_max_pool"
CHECK_MAX_V10 = "conformance.reference.pool:check_max_pool_v10"
CHECK_AVG_OVERHANG_V10 = "conformance.reference.pool:check_average_pool_overhang_v10"
CHECK_LP_EITHER = "conformance.reference.pool:check_lp_pool_either_geometry"
CHECK_GLOBAL_MAX = "conformance.reference.pool:check_global_max_pool"
CHECK_AVG_OVERHANG = "conformance.reference.pool:check_average_pool_overhang"


def _sh(name, x, attrs, since=0, dims=None, **kw) -> Shape:
    return Shape(name, {"X": x}, attrs, since=since, dims={**_DIMS, **(dims or {})}, **kw)


def _pool_shapes(op: str, ceil_since: int, dil_since: int) -> tuple[Shape, ...]:
    """The pooling shape table of ``op`` (module docstring); ``ceil_since`` / ``dil_since``:
    the version that brings ``ceil_mode`` / ``dilations``."""
    K = "kernel_shape"
    out = [
        _sh("1d/k3", "NCL", {K: [3]}),
        _sh("2d/k2", "NCHW", {K: [2, 2]}),
        _sh("2d/k2s2", "NCHW", {K: [2, 2], "strides": [2, 2]}, dims={"H": (2, 7), "W": (2, 7)}),
        _sh("2d/k3/pads1", "NCHW", {K: [3, 3], "pads": [1, 1, 1, 1]}, dims={"H": (2, 5), "W": (2, 5)}),
        _sh("2d/kernel>input", "NC22", {K: [3, 3], "pads": [1, 1, 1, 1]}),
        _sh("2d/asym-pads", "NCHW", {K: [3, 2], "pads": [2, 1, 1, 0]}, dims={"H": (3, 6), "W": (3, 6)}),
        _sh("2d/k3s2", "NCHW", {K: [3, 3], "strides": [2, 2]}, dims={"H": (3, 7), "W": (3, 7)}),
        _sh("2d/rect-strides", "NCHW", {K: [2, 3], "strides": [1, 2]}, dims={"W": (3, 7)}),
        _sh("2d/k1s2", "NCHW", {K: [1, 1], "strides": [2, 2]}),
        _sh("2d/kernel=input", "NC35", {K: [3, 5]}),
        _sh("3d/k2", "NCDHW", {K: [2, 2, 2]}),
        _sh("3d/s2-pads", "NCDHW", {K: [3, 2, 2], "strides": [2, 1, 2], "pads": [1, 0, 1, 1, 1, 0]},
            dims={"D": (3, 5)}),
        _sh("2d/same-upper", "NCHW", {K: [2, 4], "auto_pad": "SAME_UPPER"}, dims={"H": (3, 6), "W": (3, 6)}),
        _sh("2d/same-lower", "NCHW", {K: [2, 4], "auto_pad": "SAME_LOWER"}, dims={"H": (3, 6), "W": (3, 6)}),
        _sh("2d/same-upper/s2", "NC46", {K: [3, 3], "strides": [2, 2], "auto_pad": "SAME_UPPER"}),
        _sh("2d/same-lower/s2", "NC46", {K: [3, 3], "strides": [2, 2], "auto_pad": "SAME_LOWER"}),
        _sh("2d/valid", "NCHW", {K: [2, 3], "strides": [2, 1], "auto_pad": "VALID"}, dims={"H": (2, 7), "W": (3, 6)}),
        _sh("2d/zero-batch", "0C44", {K: [2, 2]}, cycle=False),
        _sh("long-window/16x16", "12LL", {K: [16, 16]}, dims={"L": (16, 16)}, numerics=("positive", "large-offset")),
    ]
    if dil_since:
        out += [
            _sh("2d/dilations", "NCHW", {K: [2, 2], "dilations": [2, 3]}, since=dil_since,
                dims={"H": (3, 6), "W": (4, 7)}),
            _sh("1d/dilations/pads", "NCL", {K: [3], "dilations": [2], "pads": [2, 1]}, since=dil_since,
                dims={"L": (4, 8)}),
            _sh("2d/dilations/same-upper", "NCHW", {K: [2, 2], "dilations": [3, 2], "auto_pad": "SAME_UPPER"},
                since=dil_since, dims={"H": (3, 6), "W": (3, 6)}),
            _sh("2d/dilations/same-lower", "NCHW", {K: [2, 2], "dilations": [3, 2], "auto_pad": "SAME_LOWER"},
                since=dil_since, dims={"H": (3, 6), "W": (3, 6)}),
        ]
    if ceil_since:
        out += [
            # (D - 3) / 2 has a half: the last window hangs over the input
            _sh("2d/ceil", "NC46", {K: [3, 3], "strides": [2, 2], "ceil_mode": 1}, since=ceil_since),
            # the last window covers an input element, a pad and the overhang beyond it
            _sh("2d/ceil/pads", "NC66", {K: [3, 3], "strides": [2, 2], "pads": [1, 1, 1, 1], "ceil_mode": 1},
                since=ceil_since),
            # ceil gives 4 windows, the 4th would start in the right padding: 3
            # (LpPool-22's text has no such rule while onnx's shape inference applies it from opset 22:
            # contested between the two, not generated)
            _sh("2d/ceil/start-in-pad", "NC55", {K: [2, 2], "strides": [2, 2], "pads": [1, 1, 1, 1],
                                                 "ceil_mode": 1}, since=ceil_since,
                **({"until": 21} if op == "LpPool" else {})),
            _sh("3d/ceil", "NC343", {K: [2, 2, 2], "strides": [2, 2, 2], "ceil_mode": 1}, since=ceil_since),
        ]
    if ceil_since and dil_since:
        out.append(_sh("2d/ceil/dilations", "NC67", {K: [2, 2], "strides": [2, 3], "dilations": [2, 2],
                                                     "ceil_mode": 1}, since=max(ceil_since, dil_since)))
    if op == "MaxPool":
        ind = (("Indices",),)
        out += [
            _sh("indices/2d/col-major", "NC35", {K: [2, 2], "storage_order": 1}, since=8, outputs=ind,
                dims={"N": (2, 2), "C": (2, 3)}),
            _sh("indices/2d/row-major/pads", "NC54", {K: [3, 3], "strides": [2, 2], "pads": [1, 1, 1, 1],
                                                      "storage_order": 0}, since=8, outputs=ind,
                dims={"N": (2, 2), "C": (2, 3)}),
            _sh("indices/3d/col-major", "NC345", {K: [2, 2, 2], "strides": [1, 2, 1], "storage_order": 1},
                since=8, outputs=ind, dims={"N": (2, 2), "C": (1, 2)}),
        ]
    if op == "AveragePool":
        out += [
            _sh("2d/pads/count_include_pad", "NCHW", {K: [3, 3], "pads": [1, 1, 1, 1], "count_include_pad": 1},
                since=7, dims={"H": (2, 5), "W": (2, 5)}),
            _sh("2d/asym-pads/count_include_pad", "NCHW", {K: [3, 2], "pads": [2, 1, 1, 0], "count_include_pad": 1},
                since=7, dims={"H": (3, 6), "W": (3, 6)}),
            _sh("2d/same-upper/count_include_pad", "NCHW", {K: [2, 4], "auto_pad": "SAME_UPPER",
                                                            "count_include_pad": 1}, since=7),
            _sh("2d/same-lower/count_include_pad", "NCHW", {K: [2, 4], "auto_pad": "SAME_LOWER",
                                                            "count_include_pad": 1}, since=7),
            _sh("2d/ceil/count_include_pad=0", "NC46", {K: [3, 3], "strides": [2, 2], "ceil_mode": 1,
                                                         "count_include_pad": 0}, since=10),
            _sh("2d/ceil/pads/count_include_pad=0", "NC66", {K: [3, 3], "strides": [2, 2], "pads": [1, 1, 1, 1],
                                                              "ceil_mode": 1, "count_include_pad": 0}, since=10),
            # contested: is the overhang beyond the padding part of "the number of elements"?
            _sh("2d/ceil/pads/count_include_pad=1", "NC66", {K: [3, 3], "strides": [2, 2], "pads": [1, 1, 1, 1],
                                                              "ceil_mode": 1, "count_include_pad": 1}, since=10),
            _sh("2d/ceil/count_include_pad=1/inside-pads", "NC55", {K: [3, 3], "strides": [2, 2],
                                                                      "pads": [1, 1, 1, 1], "ceil_mode": 1,
                                                                      "count_include_pad": 1}, since=10),
        ]
    return tuple(out)


# ============================================================================ numerics
def _float_type(ctx) -> str:
    return ctx.types["X"]


def _window_volume(ctx) -> int:
    k = ctx.attrs.get("kernel_shape")
    if k:
        return int(np.prod(k))
    return int(np.prod(ctx.shapes["X"][2:])) if len(ctx.shapes["X"]) > 2 else 1


def _acc_max(t: str) -> float:
    """Largest finite value of the accumulation precision of ``t`` (float32 for 16-bit types)."""
    return float(np.finfo(np.float64 if t == "double" else np.float32).max)


def _sum_cap(ctx, p: float = 1.0) -> float:
    """The largest |x| such that ``n |x|^p`` stays a quarter below the accumulation precision's
    largest value (and x representable)."""
    t = _float_type(ctx)
    n = max(_window_volume(ctx), 1)
    cap = (_acc_max(t) / (4 * n)) ** (1.0 / p)
    return min(cap, float(V.finfo(t).max))


def _p_of(ctx) -> float:
    return float(ctx.attrs.get("p", 2)) if ctx.op in ("LpPool", "GlobalLpPool") else 1.0


def _large_offset(rng, ctx, shapes):
    """1000 + differences in [0, 1): the mean's small part next to a large common part."""
    t = _float_type(ctx)
    sign = -1.0 if rng.random() < 0.5 else 1.0
    return [V.representable(sign * (1000.0 + rng.uniform(0, 1, size=shapes[0])), t)]


def _positive(rng, ctx, shapes):
    """Every element in [1/16, 1]: partial sums only grow (a float16 accumulator stagnates)."""
    return [V.representable(rng.uniform(1 / 16, 1, size=shapes[0]), _float_type(ctx))]


def _extremes_max(rng, ctx, shapes):
    """Magnitudes within a factor two of the type's largest, both signs, and the lowest value."""
    t = _float_type(ctx)
    fmax = float(V.finfo(t).max)
    x = rng.uniform(0.5, 1.0, size=shapes[0]) * fmax * rng.choice([-1.0, 1.0], size=shapes[0])
    x = V.representable(x, t)
    if x.size:
        x.ravel()[int(rng.integers(x.size))] = -fmax
        x.ravel()[int(rng.integers(x.size))] = fmax
    return [x]


def _extremes_sum(rng, ctx, shapes):
    """The largest magnitudes no partial sum can overflow with (``max_acc / (4 n)``, and the
    type's largest where that is smaller), both signs, with subnormals in some windows."""
    t = _float_type(ctx)
    cap = _sum_cap(ctx, _p_of(ctx))
    x = rng.uniform(0.5, 1.0, size=shapes[0]) * cap * rng.choice([-1.0, 1.0], size=shapes[0])
    x = V.representable(x, t)
    if x.size >= 4:
        sub = float(V.finfo(t).smallest_subnormal)
        for q in rng.permutation(x.size)[: max(1, x.size // 8)]:
            x.ravel()[q] = sub * float(rng.integers(1, 4)) * (-1.0 if rng.random() < 0.5 else 1.0)
    return [x]


def _wide_sum(rng, ctx, shapes):
    """Log-uniform magnitudes from the smallest normal to the no-overflow cap, both signs."""
    t = _float_type(ctx)
    cap = _sum_cap(ctx, _p_of(ctx))
    lo = math.log10(float(V.finfo(t).smallest_normal))
    mag = 10.0 ** rng.uniform(lo, math.log10(cap), size=shapes[0])
    return [V.representable(mag * rng.choice([-1.0, 1.0], size=shapes[0]), t)]


def _special_sum(rng, ctx, shapes):
    """Ordinary values with a quarter sprinkled with NaN, +-inf, +-0, subnormals, the smallest
    normal and the no-overflow cap (never two magnitudes that overflow the accumulation)."""
    t = _float_type(ctx)
    fi = V.finfo(t)
    cap = V.representable(np.array([_sum_cap(ctx, _p_of(ctx))]), t)[0]
    sp = [math.nan, math.inf, -math.inf, 0.0, -0.0, float(fi.smallest_subnormal), -float(fi.smallest_subnormal),
          float(fi.smallest_normal), float(cap), -float(cap)]
    x = V.representable(rng.uniform(-4, 4, size=shapes[0]), t)
    if x.size:
        flat = x.reshape(-1)
        k = min(flat.size, max(len(sp), flat.size // 4))
        for i, q in enumerate(rng.permutation(flat.size)[:k]):
            flat[q] = sp[i % len(sp)]
    return [x]


MAX_NUMERICS = {"large-offset": _large_offset, "extremes": _extremes_max, "positive": _positive}
SUM_NUMERICS = {"wide": _wide_sum, "special": _special_sum, "large-offset": _large_offset,
                "extremes": _extremes_sum, "positive": _positive}


# ============================================================================ MaxPool
def max_pool_oracle(ctx, x, **attrs):
    """Y (and Indices from 8) of :func:`conformance.reference.pool.max_pool`."""
    y, ind = ref.max_pool(x, attrs, drop=_drops(ctx))
    return (y,) if ctx.version < 8 else (y, ind)


def _drops(ctx) -> bool:
    """Whether the version's text drops a ceil_mode window that starts in the right padding
    (MaxPool-22 and AveragePool-22; not LpPool's text)."""
    return ctx.op in ("MaxPool", "AveragePool") and ctx.version >= 22


def _empty_windows(ctx, attrs) -> bool:
    """Whether a window holds no input element (before 22: the ceil_mode window that starts in
    the right padding)."""
    if not int(attrs.get("ceil_mode", 0) or 0):
        return False
    _, _, kind = ref.windows(ctx.shapes["X"][2:], attrs, _drops(ctx))
    return bool((~np.any(kind == 0, axis=-1)).any())


def _max_check(ctx, inputs, attrs):
    """The judged outputs: Indices requested (ties are the text's open question), NaN in X, or
    a window without input elements (before 22)."""
    x = inputs[0]
    nan = x.dtype != object and bool(np.isnan(np.asarray(x, dtype=np.float64)).any())
    if "Indices" in ctx.outputs or nan or _empty_windows(ctx, attrs):
        return CHECK_MAX if ctx.version >= 22 else CHECK_MAX_V10
    return None


def _max_contested(ctx, attrs):
    if _empty_windows(ctx, attrs):
        return ("a ceil_mode window that starts in the right padding holds no input element (versions before 22 "
                "keep it): the text defines no maximum there (any value passes there)")
    return None


def _max_tags(ctx):
    return {"spatial_rank": len(ctx.shapes["X"]) - 2}


K2 = {"kernel_shape": [2, 2]}


def _common_errors(op: str, dil_since: int) -> tuple[Err, ...]:
    s4 = ((1, 1, 4, 4),)
    out = [
        Err("pads 'can take any value greater than or equal to 0': -1 is invalid", "negative-pads",
            attrs={**K2, "pads": [-1, 0, 0, 0]}, shapes=s4),
        Err("pads holds a begin and an end value per spatial axis: 2 values for 2 axes", "pads-length",
            attrs={**K2, "pads": [1, 1]}, shapes=s4),
        Err("kernel_shape has one value per spatial axis: [2] for a 2-D input", "kernel-rank",
            attrs={"kernel_shape": [2]}, shapes=s4),
        Err("a 5x5 kernel over a 3x3 input without pads gives an output size below 1", "kernel>padded-input",
            attrs={"kernel_shape": [5, 5]}, shapes=((1, 1, 3, 3),)),
        Err("auto_pad 'cannot be used simultaneously' with pads", "auto_pad+pads",
            attrs={**K2, "auto_pad": "SAME_UPPER", "pads": [1, 1, 1, 1]}, shapes=s4),
    ]
    if dil_since:
        out.append(Err("a 2x2 kernel dilated by 6 spans 7 > the 4x4 input: the output size formula gives -2",
                       "dilated-kernel>input", attrs={**K2, "dilations": [6, 6]}, shapes=s4, since=dil_since))
        out.append(Err(f"{op} has no dilations attribute before version {dil_since}", "dilations-unknown",
                       attrs={**K2, "dilations": [1, 1]}, shapes=s4, until=dil_since - 1))
    return tuple(out)


def _explicit_defaults(names: dict[str, object], since: dict[str, int]) -> tuple[Attrs, ...]:
    """The explicit-default state with kernel_shape (required: the engine's own explicit-default
    state lacks it), one per version range where the set of defaulted attributes changes."""
    cuts = sorted(set(since.values()) | {0})
    out = []
    for i, lo in enumerate(cuts):
        hi = cuts[i + 1] - 1 if i + 1 < len(cuts) else 10**6
        vals = {"kernel_shape": [2, 2], **{k: v for k, v in names.items() if since.get(k, 0) <= lo}}
        out.append(Attrs(vals, since=lo, until=hi, tag="explicit-default"))
    return tuple(out)


MAXPOOL = Entry(
    "MaxPool", max_pool_oracle, family="shaped", shapes=_pool_shapes("MaxPool", 10, 10),
    attrs=(Attrs(K2, tag="kernel-only"),
           *_explicit_defaults({"auto_pad": "NOTSET", "storage_order": 0, "ceil_mode": 0},
                               {"storage_order": 8, "ceil_mode": 10}),
           Attrs({**K2, "storage_order": 1}, since=8, tag="storage_order=1")),
    float_numerics=MAX_NUMERICS, check=_max_check, contested=_max_contested, tags=_max_tags, per_type=24,
    errors=_common_errors("MaxPool", 10) + (
        Err("MaxPool-1 has no storage_order attribute (it arrives with Indices at 8)", "storage_order-v1",
            attrs={**K2, "storage_order": 1}, shapes=((1, 1, 4, 4),), until=1),
        Err("MaxPool has no ceil_mode attribute before version 10", "ceil_mode-unknown",
            attrs={**K2, "ceil_mode": 1}, shapes=((1, 1, 4, 4),), until=9),
    ),
    notes={8: "Indices output and storage_order", 10: "ceil_mode and dilations", 11: "text only",
           12: "int8 and uint8", 22: "bfloat16"},
)


# ============================================================================ AveragePool
def average_pool_oracle(ctx, x, **attrs):
    """:func:`conformance.reference.pool.average_pool` (count_include_pad absent before 7: 0)."""
    return ref.average_pool(x, attrs, drop=_drops(ctx))


def _reaches_overhang(ctx, attrs) -> bool:
    """count_include_pad=1 and a window reaching beyond the padding, or count_include_pad=0 and
    a window without input elements (before 22)."""
    if not int(attrs.get("ceil_mode", 0) or 0):
        return False
    if not int(attrs.get("count_include_pad", 0) or 0):
        return _empty_windows(ctx, attrs)
    _, _, kind = ref.windows(ctx.shapes["X"][2:], attrs, _drops(ctx))
    return bool((kind == 2).any())


def _avg_check(ctx, inputs, attrs):
    if not _reaches_overhang(ctx, attrs):
        return None
    return CHECK_AVG_OVERHANG if ctx.version >= 22 else CHECK_AVG_OVERHANG_V10


def _avg_tolerance(ctx, inputs, attrs, outputs):
    t = ctx.types["X"]
    atol, rtol = ref.mean_bound(np.asarray(inputs[0], dtype=np.float64), attrs, t, drop=_drops(ctx))
    return {"Y": Tolerance(atol, rtol, variants=("bound",))}


def _avg_contested(ctx, attrs):
    if _reaches_overhang(ctx, attrs):
        if not int(attrs.get("count_include_pad", 0) or 0):
            return ("a ceil_mode window that starts in the right padding holds no input element (versions before "
                    "22 keep it): the text does not define its average (any value passes there)")
        return ("count_include_pad=1 with a ceil_mode window beyond the padding: the text divides by 'the number "
                "of elements' and does not say whether the overhang counts (judged by either reading)")
    return None


AVERAGEPOOL = Entry(
    "AveragePool", average_pool_oracle, family="shaped", shapes=_pool_shapes("AveragePool", 10, 19),
    attrs=(Attrs(K2, tag="kernel-only"),
           *_explicit_defaults({"auto_pad": "NOTSET", "count_include_pad": 0, "ceil_mode": 0},
                               {"count_include_pad": 7, "ceil_mode": 10}),
           Attrs({**K2, "count_include_pad": 1}, since=7, tag="count_include_pad=1")),
    float_numerics=SUM_NUMERICS, tolerance=_avg_tolerance, check=_avg_check, contested=_avg_contested,
    tags=_max_tags, per_type=24,
    errors=_common_errors("AveragePool", 19) + (
        Err("AveragePool-1 has no count_include_pad attribute (version 7 adds it)", "count_include_pad-v1",
            attrs={**K2, "count_include_pad": 1}, shapes=((1, 1, 4, 4),), until=1),
        Err("AveragePool has no ceil_mode attribute before version 10", "ceil_mode-unknown",
            attrs={**K2, "ceil_mode": 1}, shapes=((1, 1, 4, 4),), until=7),
    ),
    notes={7: "count_include_pad", 10: "ceil_mode", 11: "the output-size text mentions dilations (the attribute "
                                                          "arrives at 19)", 19: "dilations", 22: "bfloat16"},
)


# ============================================================================ LpPool
def lp_pool_oracle(ctx, x, **attrs):
    """:func:`conformance.reference.pool.lp_pool`."""
    return ref.lp_pool(x, attrs)


def _lp_tolerance(ctx, inputs, attrs, outputs):
    t = ctx.types["X"]
    atol, rtol = ref.lp_tolerance(outputs["Y"], _window_volume(ctx), float(attrs.get("p", 2)), t)
    return {"Y": Tolerance(atol, rtol, variants=("bound",))}


def _lp_p_states() -> tuple[Attrs, ...]:
    return (Attrs({**K2, "p": 1.0}, until=1, tag="p=1"), Attrs({**K2, "p": 3.0}, until=1, tag="p=3"),
            Attrs({**K2, "p": 1}, since=2, tag="p=1"), Attrs({**K2, "p": 3}, since=2, tag="p=3"))


def _lp_shapes() -> tuple[Shape, ...]:
    base = _pool_shapes("LpPool", 18, 18)
    # p = 1 and 3 on patterns of their own, so that every version sees p != 2 with pads and strides
    extra = (
        _sh("2d/k3/pads1/p=1", "NCHW", {"kernel_shape": [3, 3], "pads": [1, 1, 1, 1], "p": 1}, since=2),
        _sh("2d/k2s2/p=3", "NCHW", {"kernel_shape": [2, 2], "strides": [2, 2], "p": 3}, since=2),
        _sh("2d/k3/pads1/p=1.0", "NCHW", {"kernel_shape": [3, 3], "pads": [1, 1, 1, 1], "p": 1.0}, until=1),
        _sh("2d/k2s2/p=3.0", "NCHW", {"kernel_shape": [2, 2], "strides": [2, 2], "p": 3.0}, until=1),
        # contested: LpPool-22's text keeps the ceil_mode window that starts in the right padding
        # (its value is 0, an empty sum), onnx's shape inference drops it from opset 22
        _sh("2d/ceil/start-in-pad/contested", "NC55", {"kernel_shape": [2, 2], "strides": [2, 2],
                                                       "pads": [1, 1, 1, 1], "ceil_mode": 1}, since=22,
            fill_types=("float", "float16")),
    )
    return base + extra


def _lp_contested_geometry(ctx, attrs) -> bool:
    """LpPool-22 with a ceil_mode window that starts in the right padding."""
    if ctx.version < 22 or not int(attrs.get("ceil_mode", 0) or 0):
        return False
    sp = ctx.shapes["X"][2:]
    keep, _, _ = ref.windows(sp, attrs, drop=False)
    drop, _, _ = ref.windows(sp, attrs, drop=True)
    return keep != drop


def _lp_check(ctx, inputs, attrs):
    return CHECK_LP_EITHER if _lp_contested_geometry(ctx, attrs) else None


def _lp_contested(ctx, attrs):
    if _lp_contested_geometry(ctx, attrs):
        return ("LpPool-22's text computes the ceil_mode output size without dropping the window that starts in "
                "the right padding (an empty sum: 0); onnx's shape inference drops it from opset 22 (MaxPool-22's "
                "rule): either output shape passes")
    return None


LPPOOL = Entry(
    "LpPool", lp_pool_oracle, family="shaped", shapes=_lp_shapes(),
    attrs=(Attrs(K2, tag="kernel-only"),
           *_explicit_defaults({"auto_pad": "NOTSET", "ceil_mode": 0}, {"ceil_mode": 18}), *_lp_p_states()),
    float_numerics=SUM_NUMERICS, tolerance=_lp_tolerance, check=_lp_check, contested=_lp_contested, tags=_max_tags,
    per_type=24,
    errors=_common_errors("LpPool", 18) + (
        Err("LpPool has no ceil_mode attribute before version 18", "ceil_mode-unknown",
            attrs={**K2, "ceil_mode": 1}, shapes=((1, 1, 4, 4),), until=17),
    ),
    notes={2: "p becomes an int; kernel_shape required", 18: "ceil_mode and dilations", 22: "bfloat16"},
)


# ============================================================================ global pools
def _global_shapes() -> tuple[Shape, ...]:
    return (
        Shape("1d", {"X": "NCL"}, dims=_DIMS),
        Shape("2d", {"X": "NCHW"}, dims=_DIMS),
        Shape("3d", {"X": "NCDHW"}, dims=_DIMS),
        Shape("2d/1x1", {"X": "NC11"}, dims=_DIMS),
        Shape("2d/zero-batch", {"X": "0CHW"}, dims=_DIMS, cycle=False),
        Shape("long/64x64", {"X": "12LL"}, dims={"L": (64, 64)}, numerics=("positive", "large-offset")),
    )


def _global_oracle(kind: str):
    def oracle(ctx, x, **attrs):
        return ref.global_pool(x, kind, float(attrs.get("p", 2)))
    oracle.__name__ = oracle.__qualname__ = f"global_{kind}_oracle"
    return oracle


def _global_avg_tolerance(ctx, inputs, attrs, outputs):
    x = np.asarray(inputs[0], dtype=np.float64)
    n = int(np.prod(x.shape[2:]))
    a = np.abs(x).reshape(x.shape[0], x.shape[1], n)
    with np.errstate(all="ignore"):
        sums = np.sum(a, axis=-1)
    atol, rtol = ref.sum_mean_bound(sums, n, n, ctx.types["X"])
    return {"Y": Tolerance(atol, rtol, variants=("bound",))}


def _global_lp_tolerance(ctx, inputs, attrs, outputs):
    n = int(np.prod(ctx.shapes["X"][2:]))
    atol, rtol = ref.lp_tolerance(outputs["Y"], n, float(attrs.get("p", 2)), ctx.types["X"])
    return {"Y": Tolerance(atol, rtol, variants=("bound",))}


def _global_max_check(ctx, inputs, attrs):
    x = np.asarray(inputs[0], dtype=np.float64)
    return CHECK_GLOBAL_MAX if bool(np.isnan(x).any()) else None


GLOBAL_AVG = Entry("GlobalAveragePool", _global_oracle("avg"), family="shaped", shapes=_global_shapes(),
                   float_numerics=SUM_NUMERICS, tolerance=_global_avg_tolerance, tags=_max_tags, per_type=12,
                   notes={22: "bfloat16"})
GLOBAL_MAX = Entry("GlobalMaxPool", _global_oracle("max"), family="shaped", shapes=_global_shapes(),
                   float_numerics=MAX_NUMERICS, check=_global_max_check, tags=_max_tags, per_type=12,
                   notes={22: "bfloat16"})
GLOBAL_LP = Entry("GlobalLpPool", _global_oracle("lp"), family="shaped", shapes=_global_shapes(),
                  attrs=(Attrs({"p": 1.0}, until=1, tag="p=1"), Attrs({"p": 3.0}, until=1, tag="p=3"),
                         Attrs({"p": 1}, since=2, tag="p=1"), Attrs({"p": 3}, since=2, tag="p=3")),
                  float_numerics=SUM_NUMERICS, tolerance=_global_lp_tolerance, tags=_max_tags, per_type=12,
                  notes={2: "p becomes an int", 22: "bfloat16"})


# ============================================================================ MaxUnpool
def _unpool_target(ctx) -> list[int]:
    """The shape of the MaxPool input the case's X came from: the inferred one, or with
    ``output_shape`` given, one larger along every axis whose stride is at least 2 (the same
    pooled size: ``floor((D + 1 - k + pads) / s) = floor((D - k + pads) / s)``)."""
    a = ctx.attrs
    d = ref.unpool_default_shape(ctx.shapes["X"], list(a["kernel_shape"]), a.get("strides"), a.get("pads"))
    if "output_shape" not in ctx.types:
        return d
    s = list(a.get("strides") or [1] * (len(d) - 2))
    return d[:2] + [v + (1 if st >= 2 else 0) for v, st in zip(d[2:], s)]


def _unpool_indices(rng, ctx):
    """I: the Indices of MaxPool (row-major) over a random input of :func:`_unpool_target`'s
    shape with distinct values, so that every index is the one maximum of its window."""
    shape = _unpool_target(ctx)
    orig = rng.permutation(int(np.prod(shape))).astype(np.float64).reshape(shape)
    a = {k: v for k, v in ctx.attrs.items() if k in ("kernel_shape", "strides", "pads")}
    _, ind = ref.max_pool(orig, a)
    out = np.empty(ind.shape, dtype=object)
    out.ravel()[:] = [int(v) for v in ind.ravel()]
    return out


def _unpool_output_shape(rng, ctx):
    out = np.empty(len(ctx.shapes["X"]), dtype=object)
    out[:] = _unpool_target(ctx)
    return out


def max_unpool_oracle(ctx, x, i, output_shape=None, **attrs):
    """:func:`conformance.reference.pool.max_unpool`."""
    return ref.max_unpool(x, i, attrs, output_shape)


def _unpool_shapes() -> tuple[Shape, ...]:
    K, S = "kernel_shape", "strides"
    d = {**_DIMS, "H": (1, 3), "W": (1, 3), "D": (1, 3), "L": (1, 4)}

    def sh(name, t, attrs, **kw):
        return Shape(name, {"X": t, "I": t, "output_shape": str(len(t))}, attrs, dims={**d, **kw.pop("dims", {})},
                     **kw)

    return (
        sh("2d/k2s2", "NCHW", {K: [2, 2], S: [2, 2]}),
        sh("2d/k2s2/pads", "NCHW", {K: [2, 2], S: [2, 2], "pads": [1, 0, 0, 1]}),
        sh("2d/k2s3", "NCHW", {K: [2, 2], S: [3, 3]}),
        sh("2d/k3s3/asym", "NCHW", {K: [3, 2], S: [3, 2]}),
        sh("2d/k1", "NCHW", {K: [1, 1]}),
        sh("1d/k3s3", "NCL", {K: [3], S: [3]}),
        sh("3d/k2s2", "NCDHW", {K: [2, 2, 2], S: [2, 2, 2]}),
        sh("2d/zero-batch", "0C22", {K: [2, 2], S: [2, 2]}, cycle=False),
    )


MAXUNPOOL = Entry(
    "MaxUnpool", max_unpool_oracle, family="shaped", shapes=_unpool_shapes(),
    structural={"I": _unpool_indices, "output_shape": _unpool_output_shape},
    attrs=(Attrs({"kernel_shape": [2, 2]}, tag="kernel-only"),
           Attrs({"kernel_shape": [2, 2], "strides": [2, 2]}, tag="strides")),
    tags=_max_tags, per_type=16,
    errors=(Err("I must have X's shape ('Dimensions must be the same as input tensor X')", "I-shape",
                attrs={"kernel_shape": [2, 2], "strides": [2, 2]}, shapes=((1, 1, 2, 2), (1, 1, 3, 3))),
            Err("kernel_shape has one value per spatial axis: [2] for a 2-D input", "kernel-rank",
                attrs={"kernel_shape": [2]}, shapes=((1, 1, 2, 2), (1, 1, 2, 2)))),
    notes={11: "output_shape input semantics unchanged (text only)", 22: "bfloat16"},
)


# ============================================================================ com.microsoft NhwcMaxPool
MS = "com.microsoft"


def nhwc_max_pool_oracle(ctx, x, **attrs):
    """MaxPool-22's Y (:func:`conformance.reference.pool.max_pool`, the ceil_mode drop rule
    included: onnxruntime's pooling attributes apply it) on a channels-last ``x``
    ``[N, D1..Dn, C]``: onnxruntime's schema documents nothing beyond the name and MaxPool's
    attributes (onnxruntime-defined)."""
    xc = np.moveaxis(x, -1, 1)
    y, _ = ref.max_pool(xc, attrs)
    return np.moveaxis(y, 1, -1)


def _nhwc_shapes() -> tuple[Shape, ...]:
    """The MaxPool-22 patterns that apply (2-D and 3-D; no Indices), channels last."""
    out = []
    for sh in _pool_shapes("MaxPool", 10, 10):
        t = sh.inputs["X"]
        if sh.outputs is not None or len(t) < 4 or "long-window" in sh.name:
            continue
        out.append(Shape(sh.name, {"x": t[0] + t[2:] + t[1]}, sh.attrs, dims=sh.dims, numerics=sh.numerics,
                         cycle=sh.cycle))
    return tuple(out)


NHWC_MAXPOOL = Entry(
    "NhwcMaxPool", nhwc_max_pool_oracle, family="shaped", domain=MS, shapes=_nhwc_shapes(),
    attrs=(Attrs(K2, tag="kernel-only"),
           Attrs({**K2, "auto_pad": "NOTSET", "ceil_mode": 0}, tag="explicit-default")),
    tags=lambda ctx: {"spatial_rank": len(ctx.shapes["x"]) - 2, "layout": "NHWC"}, per_type=24,
    errors=(Err("kernel_shape has one value per spatial axis: [2] for a 2-D input", "kernel-rank",
                attrs={"kernel_shape": [2]}, shapes=((1, 4, 4, 1),)),
            Err("a 5x5 kernel over a 3x3 input without pads gives an output size below 1", "kernel>padded-input",
                attrs={"kernel_shape": [5, 5]}, shapes=((1, 3, 3, 1),))),
)


ENTRIES = (MAXPOOL, AVERAGEPOOL, LPPOOL, GLOBAL_AVG, GLOBAL_MAX, GLOBAL_LP, MAXUNPOOL, NHWC_MAXPOOL)
register_entries(ENTRIES, family="pool")
