"""Entries of the element-wise unary operators (family ``unary``).

Each entry holds only what the schema cannot say (:mod:`conformance.ops.entry`).
Decisions recorded here:

* Accuracy budgets (``ulps``) for float and double follow the OpenCL C 3.0 single
  precision table (§7.4, Table 7.1: ``exp``, ``log`` 3 ulp; ``sin``, ``cos``, ``acosh``,
  ``asinh``, ``cosh``, ``sinh`` 4 ulp; ``acos``, ``asin`` 4 ulp; ``atan``, ``atanh``,
  ``tan`` 5 ulp; ``erf`` 16 ulp), raised where a production libm measured beyond it:
  onnxruntime 1.32 float32 Acos 4.13 ulp and Asin 4.35 ulp (200k points,
  ``../shared/OPERATORS.md`` §2.1), so 5 ulp for both.  float16/bfloat16: 2 ulp (OpenCL
  half table; evaluating in float32 and rounding stays within 1 ulp).
* Correctly rounded (exact after rounding the float64 oracle): Abs, Neg, Floor, Ceil, Round,
  Sign, Identity, Sqrt and Reciprocal (IEEE 754 §5.4.1 requires ``squareRoot`` and
  ``division`` correctly rounded; float64 is wide enough for float32 and narrower results to
  be correctly rounded after a second rounding).
* The sign of zero is checked where IEEE or the text defines it: Abs, Neg, Floor, Ceil,
  Round (``round(-0.4) = -0``), Sqrt (``sqrt(-0) = -0``), Identity.
* Undefined, never generated: Abs and Neg of the most negative integer (no positive
  counterpart), Sign of NaN (the text gives -1, 0, 1 only).
"""

from __future__ import annotations

import math

import numpy as np

from ..reference.libm import widened
from .engine import register_entries
from .entry import Attrs, Entry, Interval, ufunc

_ERF = np.frompyfunc(math.erf, 1, 1)


def _not_int_min(ctx, x, **a):
    t = ctx.types["X"]
    if x.dtype != object:
        return np.ones(np.shape(x), bool)
    from . import values as V

    return x != int(V.iinfo(t).min)


def _round_half_even(x):
    return np.round(x)  # numpy rounds half to even, keeps -0


def _sign(x):
    if x.dtype == object:
        return np.asarray([(v > 0) - (v < 0) for v in x.ravel()], dtype=object).reshape(x.shape)
    return np.sign(x)


def _abs(x):
    return np.abs(x) if x.dtype != object else np.asarray([abs(v) for v in x.ravel()], dtype=object).reshape(x.shape)


def _neg(x):
    return -x


def _isinf(ctx, x, detect_positive=1, detect_negative=1, **a):
    return (np.isposinf(x) & bool(detect_positive)) | (np.isneginf(x) & bool(detect_negative))


def _cast_attr(v: float, t: str):
    """A float attribute as the function body's ``CastLike(attr, input)`` makes it: rounded to a
    float T, truncated toward zero for an integer T (Cast)."""
    from . import values as V

    if V.kind(t) == V.FLOAT:
        return float(V.representable(np.array(v), t))
    return int(v)


def _shrink(ctx, x, lambd=0.5, bias=0.0, **a):
    t = ctx.types["input"]
    lam, b = _cast_attr(lambd, t), _cast_attr(bias, t)
    if x.dtype == object:
        return np.asarray([v + b if v < -lam else (v - b if v > lam else 0) for v in x.ravel()],
                          dtype=object).reshape(x.shape)
    return np.where(x < -lam, x + b, np.where(x > lam, x - b, 0.0))


def _limits(t: str):
    from . import values as V

    if V.kind(t) == V.FLOAT:
        fi = V.finfo(t)
        return float(fi.min), float(fi.max)
    info = V.iinfo(t)
    return int(info.min), int(info.max)


def _clip(ctx, x, lo=None, hi=None, min=None, max=None, **a):
    """Clip: ``min(max(x, lo), hi)`` (Clip-13 text: ``Min(max, Max(input, min))``, so min > max
    gives max).  Bounds are the attributes ``min``/``max`` before 11 and optional scalar inputs
    from 11; an absent bound is the type's ``numeric_limits::lowest()`` / ``max()`` (text of
    every version), so +-inf is clipped to the largest finite value."""
    t = ctx.types["input"]
    low, high = _limits(t)
    lo = (min if min is not None else low) if lo is None else lo
    hi = (max if max is not None else high) if hi is None else hi
    if x.dtype == object:
        lo, hi = int(lo), int(hi)
        return np.asarray([v if lo <= v <= hi else (hi if v > hi or lo > hi else lo) for v in x.ravel()],
                          dtype=object).reshape(x.shape)
    return np.minimum(np.maximum(x, np.float64(lo)), np.float64(hi))


def _clip_defined(ctx, x, lo=None, hi=None, min=None, max=None, **a):
    """Elements the text defines: min > max only from Clip-13 (the sentence arrives there); before
    11 the schema default (float32's max) and the text's default (T's numeric_limits) differ for
    float16 and double beyond float32's range, so no element goes there."""
    ok = np.ones(np.shape(x), dtype=bool)
    lo_v = min if lo is None else lo
    hi_v = max if hi is None else hi
    if ctx.version < 13 and lo_v is not None and hi_v is not None and float(lo_v) > float(hi_v):
        ok[...] = False
    if ctx.version < 11 and x.dtype != object and ctx.types["input"] != "float":
        ok &= ~(np.abs(x) >= float(np.finfo(np.float32).max))
    return ok


def _min_above_max(rng, ctx, shapes):
    """Clip data with both bounds given and min > max (from Clip-13 every element becomes max;
    earlier versions leave it undefined and the engine replaces the bounds)."""
    from . import values as V

    t = ctx.types["input"]
    if V.kind(t) == V.FLOAT:
        x = V.sample_float(rng, shapes[0], t, Interval(-4, 4), "normal")
        bounds = [np.float64(1.0), np.float64(-1.0)]
    else:
        x = V.sample_int(rng, shapes[0], t, (-100, 100))
        bounds = [np.asarray(7, dtype=object), np.asarray(3, dtype=object)]
    return [x] + bounds[: len(shapes) - 1]


def _clip_contested(ctx, attrs):
    if ctx.version == 13 and ctx.opset < 16 and ctx.types["input"] == "bfloat16":
        return ("Clip-13's function body uses Where, which admits bfloat16 only from Where-16: at opsets 13-15 the "
                "body is ill-typed for bfloat16")
    return None



def _identity_values(seed: int, depth: str = "full") -> list:
    """Identity's sequence and optional types (:func:`conformance.ops.sequence.identity_value_cases`)."""
    from .sequence import identity_value_cases

    return identity_value_cases(seed, depth)

ENTRIES = [
    Entry("Abs", ufunc(_abs), defined=_not_int_min, signed_zero=True),
    Entry("Neg", ufunc(_neg), defined=_not_int_min, signed_zero=True),
    Entry("Floor", ufunc(np.floor), signed_zero=True),
    Entry("Ceil", ufunc(np.ceil), signed_zero=True),
    Entry("Round", ufunc(_round_half_even), signed_zero=True,
          specials=(0.5, 1.5, 2.5, -0.5, -1.5, -2.5, 0.49999997, 4503599627370495.5)),
    Entry("Sign", ufunc(_sign), nan=False),
    Entry("Sqrt", ufunc(np.sqrt), values={"X": Interval(0.0, math.inf, scale=16)}, signed_zero=True, budget="sqrt"),
    Entry("Reciprocal", ufunc(lambda x: 1.0 / x), budget="reciprocal"),
    Entry("Exp", ufunc(widened(np.exp)), budget="exp", ulps_source="OpenCL C Table 7.1: exp 3 ulp",
          values={"X": Interval(-80, 80, scale=8)}),
    Entry("Log", ufunc(widened(np.log)), values={"X": Interval(0.0, math.inf, edges=(1.0,), scale=16)}, budget="log",
          ulps_source="OpenCL C Table 7.1: log 3 ulp; onnxruntime 1.32 float32 2.35 ulp"),
    Entry("Sin", ufunc(widened(np.sin)), budget="sin", ulps_source="OpenCL C Table 7.1: sin 4 ulp"),
    Entry("Cos", ufunc(widened(np.cos)), budget="cos", ulps_source="OpenCL C Table 7.1: cos 4 ulp"),
    Entry("Tan", ufunc(widened(np.tan)), budget="tan", ulps_source="OpenCL C Table 7.1: tan 5 ulp"),
    Entry("Asin", ufunc(widened(np.arcsin)), values={"input": Interval(-1.0, 1.0, edges=(-1.0, 1.0))}, budget="asin",
          ulps_source="OpenCL C Table 7.1: asin 4 ulp; onnxruntime 1.32 float32 4.35 ulp"),
    Entry("Acos", ufunc(widened(np.arccos)), values={"input": Interval(-1.0, 1.0, edges=(-1.0, 1.0))}, budget="acos",
          ulps_source="OpenCL C Table 7.1: acos 4 ulp; onnxruntime 1.32 float32 4.13 ulp"),
    Entry("Atan", ufunc(widened(np.arctan)), budget="atan", ulps_source="OpenCL C Table 7.1: atan 5 ulp; onnxruntime 3.39 ulp"),
    Entry("Sinh", ufunc(widened(np.sinh)), values={"input": Interval(-80, 80, scale=8)}, budget="sinh",
          ulps_source="OpenCL C Table 7.1: sinh 4 ulp"),
    Entry("Cosh", ufunc(widened(np.cosh)), values={"input": Interval(-80, 80, scale=8)}, budget="cosh",
          ulps_source="OpenCL C Table 7.1: cosh 4 ulp"),
    Entry("Asinh", ufunc(widened(np.arcsinh)), budget="asinh", ulps_source="OpenCL C Table 7.1: asinh 4 ulp"),
    Entry("Acosh", ufunc(widened(np.arccosh)), values={"input": Interval(1.0, math.inf, edges=(1.0,), scale=16)}, budget="acosh",
          ulps_source="OpenCL C Table 7.1: acosh 4 ulp"),
    Entry("Atanh", ufunc(widened(np.arctanh)), values={"input": Interval(-1.0, 1.0, edges=(-1.0, 1.0))}, budget="atanh",
          ulps_source="OpenCL C Table 7.1: atanh 5 ulp"),
    # Erf-9 on integers: how erf's value in (-1, 1) becomes an integer is not said (truncation or
    # rounding), so only inputs whose erf is exactly 0 or +-1 in float64 (0 and |x| >= 6) are generated.
    Entry("Erf", ufunc(lambda x: np.asarray(_ERF(x), dtype=np.float64) if x.dtype != object else
                       np.asarray([int(math.erf(v)) for v in x.ravel()], dtype=object).reshape(x.shape)),
          defined=lambda ctx, x, **a: np.ones(x.shape, bool) if x.dtype != object else
          np.asarray([v == 0 or abs(v) >= 6 for v in x.ravel()], dtype=bool).reshape(x.shape), safe=(0,),
          budget="erf", ulps_source="OpenCL C Table 7.1: erf 16 ulp; glibc and onnxruntime measured <= 1 ulp: 4"),
]

ENTRIES += [
    Entry("IsNaN", ufunc(np.isnan)),
    Entry("IsInf", _isinf, attrs=(Attrs({"detect_positive": 0}), Attrs({"detect_negative": 0}),
                                  Attrs({"detect_positive": 0, "detect_negative": 0}))),
    Entry("Identity", ufunc(lambda x: x), signed_zero=True, extra_cases=_identity_values),
    # Shrink-9: the function body casts lambd and bias to T; the text compares with the float
    # attributes.  Both are legitimate: attribute states use values exact in every T (no element
    # falls between the two thresholds) and 1 ulp covers x + bias rounded once or twice.
    Entry("Shrink", _shrink, safe=(0,), ulps=1, ulps16=1, ulps_source="x + bias with bias in T (function body) or in float "
          "(text), one rounding each", attrs=(Attrs({"lambd": 1.5}), Attrs({"bias": 2.0}),
                                               Attrs({"lambd": 0.25, "bias": 3.0}))),
    # Clip: NaN is unspecified (fmin/fmax drop it), so it is not generated.  min > max: every element
    # becomes max (Clip-13 text), states with min > max at every version.
    Entry("Clip", _clip, nan=False, defined=_clip_defined, contested=_clip_contested,
          float_numerics={"min>max": _min_above_max}, int_numerics={"min>max": _min_above_max}, values={"min": Interval(-4, 2), "max": Interval(-2, 4)},
          ints={"min": (-100, 50), "max": (-50, 100)},
          attrs=(Attrs({"min": -1.0}), Attrs({"max": 0.5}), Attrs({"min": -0.5, "max": 0.5}),
                 Attrs({"min": 1.0, "max": 2.0}))),
]

register_entries(ENTRIES, family="unary")
