"""Float64 oracles and legitimate variants of the resampling operators: Resize (10, 11, 13,
18, 19), Upsample (7, 9, 10), GridSample (16, 20, 22), AffineGrid (20).

**Resize** is separable: every resized axis maps each output index ``x_resized`` to a
coordinate ``x_original`` of the input (``coordinate_transformation_mode``), and the output is
the input contracted along each axis with a weight matrix ``W[out, in]``
(:func:`axis_plan`).  The rules the oracle follows, from the operator text (Resize-19 unless
a version is named):

* ``output_dimension = floor(input_dimension * scale)`` with ``scales``; with ``sizes`` the
  size itself (``stretch``) or ``round_int(s * in)`` (half up) with ``s`` the min
  (``not_larger``) or max (``not_smaller``) of ``sizes[i] / in[axes[i]]`` (18+).
* ``scale`` in the coordinate formulas is the scale factor: the ``scales`` value, ``sizes /
  in`` (stretch) or the aspect-ratio ``s``.  The text also defines ``scale = length_resized /
  length_original``; both readings agree whenever ``in * scale`` is an integer, and the cases
  where they do not are *contested* (:func:`scale_readings_differ`).
* ``nearest``: the input index ``round_prefer_floor`` (``ceil(x - 1/2)``),
  ``round_prefer_ceil`` (``floor(x + 1/2)``), ``floor`` or ``ceil`` of ``x_original``,
  clamped to ``[0, in - 1]``; versions 7-10 (Upsample, Resize-10): ``floor(x / scale)``, what
  the texts' examples show.
* ``linear`` / ``cubic``: taps ``i`` with ``|i - x| < R / s'`` (``R`` = 1 or 2; ``s' =
  min(scale, 1)`` with ``antialias`` (18+), else 1), weight ``k(s' (i - x))`` (the triangle, or
  Keys' cubic with ``a = cubic_coeff_a``), normalised to sum 1 with ``antialias``.  A tap
  outside ``[0, in - 1]`` reads the nearest edge element (the sampling location's value is the
  edge's: onnx's node-test expectations, onnxruntime and PyTorch replicate the edge); with
  ``exclude_outside`` its weight is 0 and the others are renormalised.
* ``tf_crop_and_resize``: an output whose ``x_original`` lies outside ``[0, in - 1]`` on any
  axis is ``extrapolation_value``.
* integer types: the text defines the weighted average and says nothing of its conversion to
  an integer, so linear/cubic results of integer types are generated only where the exact
  result is an integer (:func:`dyadic_unit`), and every rounding agrees.

**Legitimate variants** (:func:`coordinate_variants`): coordinates evaluated in float32 in
the formula's order or with the reciprocal scale, weights and the per-axis intermediates in
float32.  A nearest pick or an extrapolation decision that a float32 evaluation could change
(a coordinate within the float32 error of a rounding boundary but not on it in every
variant) is never generated: :func:`axis_plan` raises :class:`Unstable`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

#: float32 unit roundoff: coordinates and weights computed in float32 are legitimate.
U32 = 2.0 ** -24

COORDINATE_MODES_11 = ("half_pixel", "pytorch_half_pixel", "align_corners", "asymmetric", "tf_half_pixel_for_nn",
                       "tf_crop_and_resize")
COORDINATE_MODES_13 = ("half_pixel", "pytorch_half_pixel", "align_corners", "asymmetric", "tf_crop_and_resize")
COORDINATE_MODES_19 = COORDINATE_MODES_13 + ("half_pixel_symmetric",)
NEAREST_MODES = ("round_prefer_floor", "round_prefer_ceil", "floor", "ceil")
KEEP_ASPECT = ("stretch", "not_larger", "not_smaller")


class Unstable(ValueError):
    """A nearest pick or an extrapolation decision that float32 and float64 coordinate
    arithmetic can decide differently (never generated)."""


def coordinate_modes(version: int) -> tuple[str, ...]:
    """The coordinate_transformation_mode values of Resize-``version`` (11: with
    ``tf_half_pixel_for_nn``; 19: with ``half_pixel_symmetric``; 10: none)."""
    if version < 11:
        return ()
    if version == 11:
        return COORDINATE_MODES_11
    return COORDINATE_MODES_19 if version >= 19 else COORDINATE_MODES_13


# ----------------------------------------------------------------------------- coordinates
def coordinates(ctm: str, out_len: int, in_len: int, scale: float, output_width: float, start: float = 0.0,
                end: float = 1.0, variant: str = "exact") -> np.ndarray:
    """``x_original`` of every output index along one axis (Resize-11+'s
    coordinate_transformation_mode text; ``legacy``: versions 7-10, ``x / scale``).

    Args:
        ctm: the mode (``legacy`` for Upsample and Resize-10).
        out_len / in_len: lengths of the axis in the output and the input.
        scale: the scale factor (module docstring).
        output_width: ``in_len * scale`` (fractional; half_pixel_symmetric's adjustment).
        start / end: the axis' roi (tf_crop_and_resize).
        variant: ``exact`` (float64), ``f32`` (float32 in the formula's order) or ``f32-recip``
            (float32 with the reciprocal of the scale, ``(in-1)/(out-1)`` grouped first).

    Returns:
        float64 array ``[out_len]``.

    Raises:
        ValueError: align_corners with an output length of 1 (0/0: undefined), an unknown mode.
    """
    f = np.float64 if variant == "exact" else np.float32
    x = np.arange(out_len, dtype=f)
    one, half = f(1), f(0.5)
    s = f(scale)
    recip = variant == "f32-recip"
    inv = one / s

    def div(a, b, b_inv):
        return a * b_inv if recip else a / b

    with np.errstate(all="ignore"):
        if ctm in ("half_pixel", "pytorch_half_pixel"):
            r = div(x + half, s, inv) - half
            if ctm == "pytorch_half_pixel" and out_len == 1:
                r = np.zeros(out_len, dtype=f)
        elif ctm == "half_pixel_symmetric":
            adjustment = f(out_len) / f(output_width)
            center = f(in_len) / f(2)
            offset = center * (one - adjustment)
            r = offset + div(x + half, s, inv) - half
        elif ctm in ("asymmetric", "legacy"):
            r = div(x, s, inv)
        elif ctm == "tf_half_pixel_for_nn":
            r = div(x + half, s, inv)
        elif ctm == "align_corners":
            if out_len == 1:
                if in_len == 1:
                    return np.zeros(1)
                raise ValueError("align_corners with an output length of 1: x_original = 0 * (in-1) / 0")
            if recip:
                r = x * (f(in_len - 1) / f(out_len - 1))
            else:
                r = x * f(in_len - 1) / f(out_len - 1)
        elif ctm == "tf_crop_and_resize":
            st, en = f(start), f(end)
            if out_len == 1:
                r = np.full(1, half * (st + en) * f(in_len - 1), dtype=f)
            elif recip:
                r = st * f(in_len - 1) + x * ((en - st) * f(in_len - 1) / f(out_len - 1))
            else:
                r = st * f(in_len - 1) + x * (en - st) * f(in_len - 1) / f(out_len - 1)
        else:
            raise ValueError(f"coordinate_transformation_mode {ctm!r}")
    return np.asarray(r, dtype=np.float64)


def coordinate_error(ctm: str, out_len: int, in_len: int, scale: float, x=None, start: float = 0.0,
                     end: float = 1.0) -> np.ndarray:
    """A bound on ``|x_f32 - x_original|`` per output index for any float32 evaluation of the
    formula: at most 4 roundings (a reciprocal scale, a product or quotient, an addition, the
    scale computed from sizes), each at most ``u`` relative to an operand no larger than ``M_j
    = |x_j| + (j + 1) / scale + 1``, plus ``in_len (1 + |start| + |end|)`` for the modes whose
    terms scale with the input length (align_corners, tf_crop_and_resize, half_pixel_symmetric):
    ``4 u M_j``."""
    j = np.arange(out_len, dtype=np.float64)
    xs = np.zeros(out_len) if x is None else np.abs(np.asarray(x, dtype=np.float64))
    m = xs + (j + 1.0) / max(scale, 1e-30) + 1.0
    if ctm in ("align_corners", "tf_crop_and_resize", "half_pixel_symmetric"):
        m = m + in_len * (1.0 + abs(start) + abs(end))
    return 4.0 * U32 * m


def _pick(x: np.ndarray, nearest_mode: str) -> np.ndarray:
    if nearest_mode == "round_prefer_floor":
        return np.ceil(x - 0.5)
    if nearest_mode == "round_prefer_ceil":
        return np.floor(x + 0.5)
    if nearest_mode == "floor":
        return np.floor(x)
    if nearest_mode == "ceil":
        return np.ceil(x)
    raise ValueError(f"nearest_mode {nearest_mode!r}")


def kernel(mode: str, t: np.ndarray, a: float) -> np.ndarray:
    """The interpolation kernel at offsets ``t``: the triangle ``max(0, 1 - |t|)``
    (``linear``) or Keys' cubic (IEEE TASSP 1981, eq. 4, ``a = cubic_coeff_a``):
    ``(a+2)|t|^3 - (a+3)|t|^2 + 1`` for ``|t| <= 1``, ``a|t|^3 - 5a|t|^2 + 8a|t| - 4a`` for
    ``1 < |t| < 2``, 0 beyond."""
    t = np.abs(np.asarray(t, dtype=np.float64))
    if mode == "linear":
        return np.maximum(0.0, 1.0 - t)
    inner = ((a + 2) * t - (a + 3)) * t * t + 1
    outer = ((a * t - 5 * a) * t + 8 * a) * t - 4 * a
    return np.where(t <= 1, inner, np.where(t < 2, outer, 0.0))


def weights(mode: str, x: np.ndarray, in_len: int, *, a: float = -0.75, exclude_outside: int = 0,
            aa_scale: float = 1.0, nearest_mode: str = "round_prefer_floor") -> np.ndarray:
    """The weight matrix ``W[out, in]`` of one axis for the coordinates ``x`` (module
    docstring): one-hot for ``nearest``; kernel taps with edge replication (outside taps added
    to the edge element) or, with ``exclude_outside``, dropped and renormalised.  ``aa_scale``
    is ``s' = min(scale, 1)`` with antialias (weights normalised), else 1."""
    out = np.zeros((len(x), in_len))
    if mode == "nearest":
        idx = np.clip(_pick(x, nearest_mode), 0, in_len - 1).astype(np.int64)
        out[np.arange(len(x)), idx] = 1.0
        return out
    radius = (1.0 if mode == "linear" else 2.0) / aa_scale
    x = np.asarray(x, dtype=np.float64)
    k = int(math.ceil(2 * radius)) + 1
    taps = np.floor(x - radius)[:, None] + 1 + np.arange(k)[None, :]  # |i - x| < radius, padded with zeros
    w = kernel(mode, aa_scale * (taps - x[:, None]), a)
    w = np.where(np.abs(taps - x[:, None]) < radius, w, 0.0)
    if aa_scale != 1.0:
        w = w / w.sum(axis=1, keepdims=True)
    if exclude_outside:
        w = np.where((taps < 0) | (taps >= in_len), 0.0, w)
        total = w.sum(axis=1, keepdims=True)
        w = np.where(total != 0, w / np.where(total != 0, total, 1.0), w)  # all outside: extrapolated
    rows = np.repeat(np.arange(len(x)), k)
    np.add.at(out, (rows, np.clip(taps, 0, in_len - 1).astype(np.int64).ravel()), w.ravel())
    return out


@dataclass(frozen=True)
class Axis:
    """The plan of one resized axis.

    Attributes:
        axis: the axis of X.
        in_len / out_len: lengths.
        scale: the scale factor (module docstring).
        output_width: ``in_len * scale`` (fractional).
        x: ``x_original`` per output index (float64).
        W: weight matrix ``[out_len, in_len]``.
        outside: per output index, extrapolated (tf_crop_and_resize).
        dx: bound on a float32 evaluation's coordinate error per output index.
        start / end: the axis' roi.
    """

    axis: int
    in_len: int
    out_len: int
    scale: float
    output_width: float
    x: np.ndarray
    W: np.ndarray
    outside: np.ndarray
    dx: np.ndarray
    start: float = 0.0
    end: float = 1.0
    aa_scale: float = 1.0


@dataclass(frozen=True)
class Plan:
    """Every resized axis of a Resize/Upsample call, the output shape and the attributes used."""

    axes: tuple[Axis, ...]
    out_shape: tuple[int, ...]
    mode: str
    ctm: str
    extrapolation_value: float
    a: float = -0.75
    exclude_outside: int = 0


def _floor_exact(v: float, what: str) -> int:
    """floor(v), refusing a product a float32 evaluation could floor differently."""
    r = round(v)
    if r != v and abs(v - r) < 1e-4:
        raise Unstable(f"{what} = {v!r} is within float32 rounding of an integer")
    return math.floor(v)


def resize_plan(version: int, shape: tuple[int, ...], roi=None, scales=None, sizes=None, *, mode="nearest",
                coordinate_transformation_mode="half_pixel", nearest_mode="round_prefer_floor",
                cubic_coeff_a=-0.75, exclude_outside=0, extrapolation_value=0.0, antialias=0, axes=None,
                keep_aspect_ratio_policy="stretch", scale_reading="factor", check=True, **_) -> Plan:
    """The per-axis plan of Resize-``version`` (10: ``legacy`` coordinates; Upsample uses
    version 9) on an input of ``shape`` (module docstring).

    Args:
        roi / scales / sizes: the inputs as given (``None``: absent; an empty scales at 11
            means absent).
        scale_reading: ``factor`` (the oracle) or ``ratio`` (``scale = out / in``, the
            text's other definition; :func:`scale_readings_differ`).
        check: raise :class:`Unstable` where float32 coordinates could change a nearest pick
            or an extrapolation decision.

    Raises:
        ValueError: both or neither of scales and sizes, a scale <= 0, a length that is not
            the rank (or the number of axes), axes out of range or repeated, an unknown mode,
            tf_crop_and_resize with scales and a roi not one wide (the text's output size
            includes the roi width, onnx's shape inference and runtimes ignore it), an
            undefined coordinate (align_corners to length 1).
        Unstable: see ``check``.
    """
    r = len(shape)
    scales = None if scales is None or np.size(scales) == 0 else [float(s) for s in np.ravel(scales)]
    sizes = None if sizes is None or np.size(sizes) == 0 else [int(s) for s in np.ravel(sizes)]
    if (scales is None) == (sizes is None):
        raise ValueError("exactly one of scales and sizes must be given")
    if version < 11:
        mode_set, ctm = ("nearest", "linear"), "legacy"
    else:
        mode_set, ctm = ("nearest", "linear", "cubic"), coordinate_transformation_mode
        if ctm not in coordinate_modes(version):
            raise ValueError(f"coordinate_transformation_mode {ctm!r} at version {version}")
    if mode not in mode_set:
        raise ValueError(f"mode {mode!r}")
    if mode == "nearest" and nearest_mode not in NEAREST_MODES:
        raise ValueError(f"nearest_mode {nearest_mode!r}")
    if keep_aspect_ratio_policy not in KEEP_ASPECT:
        raise ValueError(f"keep_aspect_ratio_policy {keep_aspect_ratio_policy!r}")
    ax = list(range(r)) if axes is None or version < 18 else [int(a) + r if int(a) < 0 else int(a) for a in axes]
    if any(not 0 <= a < r for a in ax) or len(set(ax)) != len(ax):
        raise ValueError(f"axes {axes} for rank {r}")
    n = len(ax)
    given = scales if scales is not None else sizes
    if len(given) != n:
        raise ValueError(f"{'scales' if scales is not None else 'sizes'} has {len(given)} values for {n} axes")
    if scales is not None and any(not s > 0 for s in scales):
        raise ValueError(f"scales {scales}: every scale is greater than 0")
    if sizes is not None and any(s < 0 for s in sizes):
        raise ValueError(f"sizes {sizes}")
    starts, ends = [0.0] * n, [1.0] * n
    if ctm == "tf_crop_and_resize":
        rv = None if roi is None else [float(v) for v in np.ravel(roi)]
        if rv is None or len(rv) != 2 * n:
            raise ValueError(f"roi of length {None if rv is None else len(rv)}: 2 * {n} values needed")
        starts, ends = rv[:n], rv[n:]
        if scales is not None and any(e - s != 1.0 for s, e in zip(starts, ends)):
            raise ValueError("tf_crop_and_resize with scales and a roi width other than 1: the text's output "
                             "size floor(in * (end - start) * scale) and onnx's shape inference disagree")
    in_lens = [shape[a] for a in ax]
    if scales is not None:
        factors = list(scales)
        outs = [_floor_exact(i * s, "input_dimension * scale") for i, s in zip(in_lens, factors)]
        widths = [i * s for i, s in zip(in_lens, factors)]
    elif keep_aspect_ratio_policy == "stretch" or version < 18:
        outs = list(sizes)
        factors = [o / i if i else 1.0 for o, i in zip(outs, in_lens)]
        widths = [float(o) for o in outs]
    else:
        ratios = [o / i for o, i in zip(sizes, in_lens)]
        s = min(ratios) if keep_aspect_ratio_policy == "not_larger" else max(ratios)
        widths = [s * i for i in in_lens]
        for w in widths:
            if abs(w - math.floor(w) - 0.5) < 1e-4 and w - math.floor(w) != 0.5:
                raise Unstable(f"round_int({w!r}) is within float32 rounding of a half")
        outs = [math.floor(w + 0.5) for w in widths]
        factors = [s] * n
    aa = bool(antialias) and version >= 18 and mode != "nearest"
    plans = []
    for k, a in enumerate(ax):
        i_len, o_len, sc = in_lens[k], outs[k], factors[k]
        if scale_reading == "ratio" and i_len:
            sc = o_len / i_len if o_len else sc
        if version >= 11 and ctm not in ("tf_crop_and_resize",) and o_len == i_len and sc == 1.0:
            x = np.arange(o_len, dtype=np.float64)  # identity along this axis
        else:
            x = coordinates(ctm, o_len, i_len, sc, widths[k], starts[k], ends[k])
        aa_s = min(sc, 1.0) if aa else 1.0
        if i_len == 0 or o_len == 0:
            W = np.zeros((o_len, i_len))
            outside = np.zeros(o_len, dtype=bool)
        else:
            W = weights(mode, x, i_len, a=float(cubic_coeff_a), exclude_outside=int(exclude_outside),
                        aa_scale=aa_s, nearest_mode=nearest_mode if version >= 11 else "floor")
            outside = ((x < 0) | (x > i_len - 1)) if ctm == "tf_crop_and_resize" else np.zeros(o_len, dtype=bool)
            if check:
                _check_stable(ctm, mode, nearest_mode if version >= 11 else "floor", x, o_len, i_len, sc, widths[k],
                              starts[k], ends[k])
        plans.append(Axis(a, i_len, o_len, sc, widths[k], x, W, outside,
                          coordinate_error(ctm, o_len, i_len, sc, x, starts[k], ends[k]), starts[k], ends[k], aa_s))
    out_shape = list(shape)
    for p in plans:
        out_shape[p.axis] = p.out_len
    return Plan(tuple(plans), tuple(out_shape), mode, ctm, float(extrapolation_value), float(cubic_coeff_a),
                int(exclude_outside))


_PLANS: dict = {}


def _key(v):
    if v is None:
        return None
    if isinstance(v, (list, tuple, np.ndarray)):
        return tuple(float(e) for e in np.ravel(np.asarray(v, dtype=object)))
    return v


def cached_plan(version: int, shape, roi=None, scales=None, sizes=None, **attrs) -> Plan:
    """:func:`resize_plan`, memoised on its arguments (plans are never mutated; a generation
    asks for the same plan from the oracle, the tolerance, the numerics class and the contested
    rule)."""
    key = (version, tuple(shape), _key(roi), _key(scales), _key(sizes),
           tuple(sorted((k, _key(v)) for k, v in attrs.items())))
    plan = _PLANS.get(key)
    if plan is None:
        if len(_PLANS) > 4096:
            _PLANS.clear()
        plan = _PLANS[key] = resize_plan(version, shape, roi, scales, sizes, **attrs)
    return plan


def _check_stable(ctm, mode, nearest_mode, x, o_len, i_len, sc, width, start, end) -> None:
    """Raise :class:`Unstable` if a float32 evaluation of the coordinates may pick another
    nearest index or change an extrapolation decision."""
    variants = [coordinates(ctm, o_len, i_len, sc, width, start, end, v) for v in ("f32", "f32-recip")]
    if mode == "nearest":
        want = np.clip(_pick(x, nearest_mode), 0, i_len - 1)
        for xv in variants:
            if not np.array_equal(np.clip(_pick(xv, nearest_mode), 0, i_len - 1), want):
                raise Unstable(f"nearest picks of {ctm} differ in float32 ({x} vs {xv})")
        # a coordinate off a boundary by less than the float32 error, in any variant
        bnd = x - 0.5 if nearest_mode.startswith("round") else x
        dist = np.abs(bnd - np.round(bnd))
        dx = 2 * coordinate_error(ctm, o_len, i_len, sc, x, start, end)
        close = (dist > 0) & (dist < dx)
        if np.any(close & (x > -0.5) & (x < i_len - 0.5)):
            raise Unstable(f"a nearest coordinate of {ctm} is within float32 error of a boundary: {x}")
    if ctm == "tf_crop_and_resize":
        want = (x < 0) | (x > i_len - 1)
        for xv in variants:
            if not np.array_equal((xv < 0) | (xv > i_len - 1), want):
                raise Unstable("tf_crop_and_resize extrapolation differs in float32")
        dx = 2 * coordinate_error(ctm, o_len, i_len, sc, x, start, end)
        near = (np.abs(x) < dx) & (x != 0) | (np.abs(x - (i_len - 1)) < dx) & (x != i_len - 1)
        if np.any(near):
            raise Unstable("a tf_crop_and_resize coordinate is within float32 error of the border")


def scale_readings_differ(version: int, shape, roi, scales, sizes, attrs) -> bool:
    """Whether the two readings of ``scale`` (the scale factor, or ``length_resized /
    length_original``) give different weights (only where ``in * scale`` is not an integer)."""
    a = cached_plan(version, shape, roi, scales, sizes, check=False, **attrs)
    b = cached_plan(version, shape, roi, scales, sizes, check=False, scale_reading="ratio", **attrs)
    return any(not np.allclose(p.W, q.W, rtol=0, atol=1e-9) or not np.array_equal(p.outside, q.outside)
               for p, q in zip(a.axes, b.axes))


def _along(x: np.ndarray, W: np.ndarray, axis: int) -> np.ndarray:
    """``W`` contracted with ``x`` along ``axis`` (float64 or complex)."""
    return np.moveaxis(np.tensordot(W, x, axes=([1], [axis])), 0, axis)


def apply_plan(plan: Plan, x: np.ndarray, dtype=np.float64, intermediate=None) -> np.ndarray:
    """The resized tensor: nearest as an exact gather (any element type: ints, strings, bools
    kept as they are), linear/cubic as the separable contraction in ``dtype`` (``intermediate``:
    a dtype each per-axis result is rounded to, a legitimate variant), then
    ``extrapolation_value`` where any axis is outside."""
    out = np.asarray(x)
    if plan.mode == "nearest":
        for p in plan.axes:
            idx = p.W.argmax(axis=1) if p.in_len else np.zeros(0, dtype=np.int64)
            out = np.take(out, idx, axis=p.axis) if p.in_len else np.empty(
                out.shape[:p.axis] + (p.out_len,) + out.shape[p.axis + 1:], dtype=out.dtype)
    else:
        out = out.astype(dtype)
        for p in plan.axes:
            out = _along(out, p.W.astype(dtype), p.axis)
            if intermediate is not None:
                out = out.astype(intermediate)
    if plan.ctm == "tf_crop_and_resize" and any(p.outside.any() for p in plan.axes):
        mask = np.zeros(out.shape, dtype=bool)
        for p in plan.axes:
            sh = [1] * out.ndim
            sh[p.axis] = p.out_len
            mask = mask | p.outside.reshape(sh)
        out = out.copy() if out.dtype != object else out.copy()
        out[mask] = plan.extrapolation_value
    return out


def resize(version: int, x, roi=None, scales=None, sizes=None, **attrs) -> np.ndarray:
    """Resize-``version`` of the exact input ``x`` (float64, complex, or object arrays of ints /
    strings / bools for nearest): the float64 oracle (module docstring).  Integer inputs with
    linear/cubic return Python ints where every result is an integer.

    Raises:
        ValueError: what :func:`resize_plan` raises; an integer linear/cubic result that is
            not an integer (not generated: the text does not say how it is rounded).
    """
    plan = resize_plan(version, np.shape(x), roi, scales, sizes, **attrs)
    return apply_plan_exact(plan, x)


def apply_plan_exact(plan: Plan, x) -> np.ndarray:
    """:func:`apply_plan` for the oracle: integer object arrays go through float64 and come
    back as Python ints (refusing a non-integral result)."""
    x = np.asarray(x)
    if plan.mode == "nearest" or x.dtype.kind in "fc":
        return apply_plan(plan, x, np.complex128 if x.dtype.kind == "c" else np.float64)
    if x.dtype == object and x.size and isinstance(x.ravel()[0], (bool, np.bool_, str)):
        raise ValueError("linear/cubic of a bool or string tensor is undefined")
    y = apply_plan(plan, x.astype(np.float64))
    if not np.all(np.isfinite(y)) or not np.array_equal(y, np.round(y)):
        raise ValueError("an integer linear/cubic result that is not an integer: the text does not say how it "
                         "is rounded")
    out = np.empty(y.shape, dtype=object)
    out.ravel()[:] = [int(v) for v in y.ravel()]
    return out


def dyadic_unit(plan: Plan, limit: int = 30) -> int | None:
    """The least ``k`` such that every weight times ``2^k`` is an integer (over the product of
    the axes' weights), or ``None`` if some weight is not a dyadic rational (``k <= limit``).
    Integer data that are multiples of ``2^k`` then have integer linear/cubic results,
    computed exactly in float32 while they stay below ``2^(24 - k)``."""
    total = 0
    for p in plan.axes:
        best = None
        for k in range(0, limit + 1):
            v = p.W * 2.0 ** k
            if np.array_equal(v, np.round(v)):
                best = k
                break
        if best is None:
            return None
        total += best
    return total


# ----------------------------------------------------------------------------- tolerance
def resize_error_bound(plan: Plan, x: np.ndarray, u: float = U32) -> np.ndarray:
    """Per output element, the error of a legitimate linear/cubic kernel (float32 coordinates,
    weights and per-axis intermediates; any accumulation order), before the final rounding to
    T (docs/tolerance.md, "Resampling"):

    * coordinates: along axis ``a`` the weights move by ``dW = max over x +- dx of |W(x') -
      W(x)|`` (times 2: the kernel's kinks), and since each row of ``dW`` sums to 0 the
      output moves by at most ``sum_i dW_ji |v_i - v_kj|`` (``k_j`` the row's largest
      weight): the input's *local differences*; the other axes' ``|W|`` carry it to the output;
    * arithmetic: per axis ``(c_w + n + 1) u`` of ``|W| |v|`` (``c_w`` = 2 for the triangle,
      8 for the cubic polynomial, 4 more for the antialias normalisation, ``n`` taps summed,
      one rounding of the intermediate).
    """
    v = np.asarray(x, dtype=np.float64)
    if plan.mode == "nearest" or v.size == 0:
        return np.zeros(plan.out_shape)
    absW = [np.abs(p.W) for p in plan.axes]
    mag = np.abs(v)
    for p, aw in zip(plan.axes, absW):
        mag = _along(mag, aw, p.axis)
    arith = 0.0
    coord = np.zeros(plan.out_shape)
    for k, p in enumerate(plan.axes):
        taps = int(max(1, np.count_nonzero(p.W, axis=1).max())) if p.W.size else 1
        cw = (2.0 if plan.mode == "linear" else 8.0) + (4.0 if p.aa_scale != 1.0 or plan.exclude_outside else 0.0)
        arith = arith + (cw + 4.0 + taps + 1.0) * u
        # coordinate term along this axis
        dW = np.zeros_like(p.W)
        for sgn in (-1.0, 1.0):
            Wp = weights(plan.mode, p.x + sgn * p.dx, p.in_len, a=plan.a, exclude_outside=plan.exclude_outside,
                         aa_scale=p.aa_scale)
            dW = np.maximum(dW, np.abs(Wp - p.W))
        dW = 2.0 * dW
        ref = p.W.argmax(axis=1)
        # local differences along the axis: sum_i dW_ji |v_i - v_ref(j)|
        vm = np.moveaxis(v, p.axis, 0)
        loc = np.zeros((p.out_len,) + vm.shape[1:])
        for j in range(p.out_len):
            cols = np.nonzero(dW[j])[0]
            if cols.size:
                loc[j] = np.tensordot(dW[j, cols], np.abs(vm[cols] - vm[ref[j]][None]), axes=([0], [0]))
        term = np.moveaxis(loc, 0, p.axis)
        for q, aw in zip(plan.axes, absW):
            if q.axis != p.axis:
                term = _along(term, aw, q.axis)
        coord = coord + term
    out = coord + arith * mag
    if plan.ctm == "tf_crop_and_resize":
        mask = np.zeros(plan.out_shape, dtype=bool)
        for p in plan.axes:
            sh = [1] * len(plan.out_shape)
            sh[p.axis] = p.out_len
            mask = mask | p.outside.reshape(sh)
        out = np.where(mask, 0.0, out)
    return out


# ============================================================================ GridSample
GRID_MODES = {16: ("bilinear", "nearest", "bicubic"), 20: ("linear", "nearest", "cubic")}
PADDING_MODES = ("zeros", "border", "reflection")


def grid_modes(version: int) -> tuple[str, ...]:
    """GridSample's mode values at ``version`` (16: bilinear/nearest/bicubic; 20+:
    linear/nearest/cubic)."""
    return GRID_MODES[16 if version < 20 else 20]


def unnormalize(g, length: int, align_corners: int, f=np.float64):
    """Pixel coordinate of the normalized grid value ``g`` along an axis of ``length``
    (torch.nn.functional.grid_sample, which the text refers to): align_corners=1 maps -1 and 1
    to the corner pixels' centers, ``(g + 1) / 2 * (L - 1)``; 0 to their outer edges,
    ``((g + 1) * L - 1) / 2``.  ``f``: the arithmetic (float32: a legitimate variant)."""
    g = np.asarray(g, dtype=f)
    one, two = f(1), f(2)
    with np.errstate(all="ignore"):
        if align_corners:
            return (g + one) / two * f(length - 1)
        return ((g + one) * f(length) - one) / two


def reflect(x, lo: float, hi: float):
    """Reflection of ``x`` by the borders ``lo`` and ``hi`` until inside (the text's example:
    -3.5 reflects by -1 to 1.5, then by 1 to 0.5); ``lo == hi``: 0 (torch's
    reflect_coordinates)."""
    x = np.asarray(x, dtype=np.float64)
    if lo == hi:
        return np.zeros_like(x)
    span = hi - lo
    d = np.abs(x - lo)
    flips = np.floor(d / span)
    extra = np.fmod(d, span)
    return np.where(flips % 2 == 0, extra + lo, span - extra + lo)


def pad_coordinate(x, length: int, padding_mode: str, align_corners: int):
    """The coordinate after ``border`` (clipped to ``[0, L-1]``) or ``reflection`` (reflected
    by ``[0, L-1]`` with align_corners, by ``[-0.5, L-0.5]`` without, then clipped);
    ``zeros`` leaves it."""
    x = np.asarray(x, dtype=np.float64)
    if padding_mode == "border":
        return np.clip(x, 0, length - 1)
    if padding_mode == "reflection":
        r = reflect(x, 0.0, length - 1.0) if align_corners else reflect(x, -0.5, length - 0.5)
        return np.clip(r, 0, length - 1)
    return x


def _axis_taps(mode: str, x: np.ndarray, length: int, padding_mode: str, align_corners: int, a: float = -0.75):
    """Per point, the taps along one axis: (indices [P, t] inside the axis, weights [P, t],
    valid [P, t]: False where zeros padding reads 0).  nearest rounds half to even (version
    20's text; torch's nearbyint) after padding the coordinate; linear pads the coordinate,
    then takes floor and floor + 1; cubic takes floor - 1 .. floor + 2 of the unpadded
    coordinate and pads each tap's index (torch's bicubic get_value_bounded)."""
    if mode == "nearest":
        xp = pad_coordinate(x, length, padding_mode, align_corners)
        idx = np.rint(xp)[:, None]
        w = np.ones_like(idx)
    elif mode in ("linear", "bilinear"):
        xp = pad_coordinate(x, length, padding_mode, align_corners)
        x0 = np.floor(xp)
        t = xp - x0
        idx = np.stack([x0, x0 + 1], axis=1)
        w = np.stack([1 - t, t], axis=1)
    else:
        x0 = np.floor(x)
        t = x - x0
        idx = x0[:, None] + np.arange(-1, 3)[None, :]
        w = kernel("cubic", idx - x[:, None], a)
        if padding_mode != "zeros":
            idx = np.rint(pad_coordinate(idx, length, padding_mode, align_corners))
    valid = (idx >= 0) & (idx <= length - 1)
    return np.clip(idx, 0, length - 1).astype(np.int64), w, valid


def grid_sample(x, grid, mode: str = "linear", padding_mode: str = "zeros", align_corners: int = 0,
                coords=None, absolute: bool = False) -> np.ndarray:
    """GridSample of ``x`` ``[N, C, D1..Dr]`` at ``grid`` ``[N, O1..Or, r]`` (the grid's last
    axis lists the coordinates innermost first: ``grid[..., 0]`` indexes ``Dr``), float64
    (complex for complex input; nearest gathers any element type).

    Args:
        coords: pixel coordinates ``[N, O1..Or, r]`` to use instead of unnormalizing the grid
            (the tolerance's shifted coordinates).
        absolute: weights and values in absolute value (the tolerance's magnitude term).

    Raises:
        ValueError: ranks or batch sizes that do not match, an unknown mode.
    """
    x = np.asarray(x)
    r = x.ndim - 2
    grid = np.asarray(grid, dtype=np.float64)
    if r < 1 or grid.ndim != r + 2 or grid.shape[-1] != r or grid.shape[0] != x.shape[0]:
        raise ValueError(f"GridSample: X {x.shape} and grid {grid.shape} do not match")
    if padding_mode not in PADDING_MODES:
        raise ValueError(f"padding_mode {padding_mode!r}")
    n, c = x.shape[:2]
    out_sp = grid.shape[1:-1]
    pts = int(np.prod(out_sp, dtype=np.int64))
    if coords is None:
        coords = np.stack([unnormalize(grid[..., r - 1 - d], x.shape[2 + d], align_corners) for d in range(r)],
                          axis=-1)  # coords[..., d] along X's spatial axis d
    coords = np.asarray(coords, dtype=np.float64).reshape(n, pts, r)
    nearest = mode == "nearest"
    if nearest:
        out = np.empty((n, c, pts), dtype=x.dtype if x.dtype != np.float64 else np.float64)
    else:
        out = np.zeros((n, c, pts), dtype=np.complex128 if x.dtype.kind == "c" else np.float64)
    for b in range(n):
        taps = [_axis_taps(mode, coords[b, :, d], x.shape[2 + d], padding_mode, align_corners) for d in range(r)]
        xb = x[b]
        if absolute:
            xb = np.abs(xb.astype(np.float64))
        if nearest:
            idx = tuple(t[0][:, 0] for t in taps)
            ok = np.logical_and.reduce([t[2][:, 0] for t in taps])
            vals = xb[(slice(None),) + idx] if pts else np.empty((c, 0), dtype=xb.dtype)
            zero = np.zeros((), dtype=xb.dtype) if xb.dtype != object else 0
            out[b] = np.where(ok[None, :], vals, zero) if xb.dtype != object else _where_obj(ok, vals, zero)
            continue
        for combo in np.ndindex(*[t[0].shape[1] for t in taps]):
            idx = tuple(t[0][:, k] for t, k in zip(taps, combo))
            w = np.prod([t[1][:, k] for t, k in zip(taps, combo)], axis=0)
            ok = np.logical_and.reduce([t[2][:, k] for t, k in zip(taps, combo)])
            if absolute:
                w = np.abs(w)
            vals = xb[(slice(None),) + idx].astype(out.dtype) if pts else np.zeros((c, 0))
            with np.errstate(all="ignore"):
                out[b] += np.where(ok[None, :], w[None, :] * vals, 0.0)
    return out.reshape((n, c) + tuple(out_sp))


def _where_obj(ok, vals, zero):
    out = vals.copy()
    out[:, ~ok] = zero
    return out


def grid_coordinates(grid, shape, align_corners: int, f=np.float64) -> np.ndarray:
    """Pixel coordinates ``[N, O.., r]`` (X's spatial axis order) of a grid, in arithmetic ``f``."""
    r = len(shape) - 2
    return np.stack([unnormalize(np.asarray(grid)[..., r - 1 - d], shape[2 + d], align_corners, f).astype(np.float64)
                     for d in range(r)], axis=-1)


def grid_unstable(grid, shape, mode, padding_mode, align_corners) -> np.ndarray:
    """Per grid point (``[N, O..]``), whether a float32 evaluation of its coordinates could
    change a nearest pick (a rounding boundary k + 1/2, after padding) or, with zeros padding,
    whether the point is inside (the boundary -1/2 / L - 1/2 is such a boundary too)."""
    ex = grid_coordinates(grid, shape, align_corners)
    f32 = grid_coordinates(np.asarray(grid, dtype=np.float32), shape, align_corners, np.float32)
    bad = np.zeros(ex.shape[:-1], dtype=bool)
    if mode != "nearest":
        return bad
    for d in range(ex.shape[-1]):
        length = shape[2 + d]
        pe = pad_coordinate(ex[..., d], length, padding_mode, align_corners)
        pf = pad_coordinate(f32[..., d], length, padding_mode, align_corners)
        bad |= np.rint(pe) != np.rint(pf)
        dist = np.abs((pe - 0.5) - np.round(pe - 0.5))
        tol = 8 * U32 * (length + 2) * (1 + np.abs(np.asarray(grid)[..., ex.shape[-1] - 1 - d]))
        bad |= (dist > 0) & (dist < tol)
    return bad


def grid_error_bound(x, grid, mode, padding_mode, align_corners) -> np.ndarray:
    """Per output element, the error of a legitimate linear/cubic GridSample kernel (float32
    coordinates and weights, any order): the output's change when every coordinate moves by
    its float32 error ``dx = 8 u (L + 2)(1 + |g|)`` in each direction along each axis (times
    2), plus ``(c_w + taps + 2) u`` times the absolute-weighted sum ``sum |w| |v|``."""
    if mode == "nearest":
        return np.zeros(np.shape(x)[:2] + np.shape(grid)[1:-1])
    g = np.asarray(grid, dtype=np.float64)
    shape = np.shape(x)
    r = len(shape) - 2
    base = grid_coordinates(g, shape, align_corners)
    y0 = grid_sample(x, g, mode, padding_mode, align_corners, coords=base)
    err = np.zeros(y0.shape)
    for d in range(r):
        dx = 8 * U32 * (shape[2 + d] + 2) * (1 + np.abs(g[..., r - 1 - d]))
        for sgn in (-1.0, 1.0):
            c = base.copy()
            c[..., d] = c[..., d] + sgn * dx
            yd = grid_sample(x, g, mode, padding_mode, align_corners, coords=c)
            err = np.maximum(err, 2 * np.abs(yd - y0))
    taps = (2 if mode in ("linear", "bilinear") else 4) ** r
    cw = 2.0 if mode in ("linear", "bilinear") else 8.0
    mag = grid_sample(x, g, mode, padding_mode, align_corners, coords=base, absolute=True)
    return err + (cw * r + taps + 2) * U32 * mag


# ============================================================================ AffineGrid
def base_positions(length: int, align_corners: int) -> np.ndarray:
    """Evenly spaced positions of one axis in [-1, 1]: the centers of the corner pixels at
    -1 and 1 (align_corners=1) or the outer edges (0: ``(2i + 1) / L - 1``); a length of 1:
    [0] (torch's affine_grid)."""
    if length <= 1:
        return np.zeros(max(length, 0))
    i = np.arange(length, dtype=np.float64)
    if align_corners:
        return -1 + 2 * i / (length - 1)
    return (2 * i + 1) / length - 1


def affine_grid(theta, size, align_corners: int = 0) -> np.ndarray:
    """AffineGrid: for ``size`` ``(N, C, H, W)`` and ``theta`` ``(N, 2, 3)`` the grid ``(N, H, W,
    2)`` of ``theta @ [x, y, 1]`` (x along W first); for ``(N, C, D, H, W)`` and ``(N, 3, 4)``
    ``(N, D, H, W, 3)`` of ``theta @ [x, y, z, 1]``.  float64.

    Raises:
        ValueError: size of length other than 4 or 5, theta's shape not matching it.
    """
    size = [int(s) for s in np.ravel(size)]
    theta = np.asarray(theta, dtype=np.float64)
    if len(size) not in (4, 5):
        raise ValueError(f"size {size}: (N, C, H, W) or (N, C, D, H, W)")
    r = len(size) - 2
    if theta.shape != (size[0], r, r + 1):
        raise ValueError(f"theta {theta.shape} for size {size}")
    sp = size[2:]
    axes = [base_positions(L, align_corners) for L in sp]  # D, H, W order
    mesh = np.meshgrid(*axes, indexing="ij")
    base = np.stack([m for m in reversed(mesh)] + [np.ones(tuple(sp))], axis=-1)  # x (W), y (H), [z (D)], 1
    out = np.einsum("nij,...j->n...i", theta, base)
    return out.reshape((size[0],) + tuple(sp) + (r,))


def affine_error_bound(theta, size, align_corners: int, u: float) -> np.ndarray:
    """Per output element, ``8 u sum_j |theta_ij| |b_j|`` with ``b`` the base position (its
    own rounding and the dot product's, in a precision of unit roundoff ``u``)."""
    mag = affine_grid(np.abs(np.asarray(theta, dtype=np.float64)), size, align_corners)  # |theta| @ |b| >= ...
    sizes = [int(s) for s in np.ravel(size)]
    r = len(sizes) - 2
    axes = [np.abs(base_positions(L, align_corners)) for L in sizes[2:]]
    mesh = np.meshgrid(*axes, indexing="ij")
    base = np.stack([m for m in reversed(mesh)] + [np.ones(tuple(sizes[2:]))], axis=-1)
    mag = np.einsum("nij,...j->n...i", np.abs(np.asarray(theta, dtype=np.float64)), base)
    return 8 * u * mag.reshape((sizes[0],) + tuple(sizes[2:]) + (r,))
