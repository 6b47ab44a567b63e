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

from .elementwise import register_entries
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


ENTRIES = [
    Entry("Abs", ufunc(_abs), defined=_not_int_min, signed_zero=True),
    Entry("Neg", ufunc(_neg), defined=_not_int_min, signed_zero=True),
    Entry("Floor", ufunc(np.floor), signed_zero=True),
    Entry("Ceil", ufunc(np.ceil), signed_zero=True),
    Entry("Round", ufunc(_round_half_even), signed_zero=True,
          specials=(0.5, 1.5, 2.5, -0.5, -1.5, -2.5, 0.49999997, 4503599627370495.5)),
    Entry("Sign", ufunc(_sign), nan=False),
    Entry("Sqrt", ufunc(np.sqrt), values={"X": Interval(0.0, math.inf, scale=16)}, signed_zero=True),
    Entry("Reciprocal", ufunc(lambda x: 1.0 / x)),
    Entry("Exp", ufunc(np.exp), ulps=3, ulps_source="OpenCL C Table 7.1: exp 3 ulp",
          values={"X": Interval(-80, 80, scale=8)}),
    Entry("Log", ufunc(np.log), values={"X": Interval(0.0, math.inf, edges=(1.0,), scale=16)}, ulps=3,
          ulps_source="OpenCL C Table 7.1: log 3 ulp; onnxruntime 1.32 float32 2.35 ulp"),
    Entry("Sin", ufunc(np.sin), ulps=4, ulps_source="OpenCL C Table 7.1: sin 4 ulp"),
    Entry("Cos", ufunc(np.cos), ulps=4, ulps_source="OpenCL C Table 7.1: cos 4 ulp"),
    Entry("Tan", ufunc(np.tan), ulps=5, ulps_source="OpenCL C Table 7.1: tan 5 ulp"),
    Entry("Asin", ufunc(np.arcsin), values={"input": Interval(-1.0, 1.0, edges=(-1.0, 1.0))}, ulps=5,
          ulps_source="OpenCL C Table 7.1: asin 4 ulp; onnxruntime 1.32 float32 4.35 ulp"),
    Entry("Acos", ufunc(np.arccos), values={"input": Interval(-1.0, 1.0, edges=(-1.0, 1.0))}, ulps=5,
          ulps_source="OpenCL C Table 7.1: acos 4 ulp; onnxruntime 1.32 float32 4.13 ulp"),
    Entry("Atan", ufunc(np.arctan), ulps=5, ulps_source="OpenCL C Table 7.1: atan 5 ulp; onnxruntime 3.39 ulp"),
    Entry("Sinh", ufunc(np.sinh), values={"input": Interval(-80, 80, scale=8)}, ulps=4,
          ulps_source="OpenCL C Table 7.1: sinh 4 ulp"),
    Entry("Cosh", ufunc(np.cosh), values={"input": Interval(-80, 80, scale=8)}, ulps=4,
          ulps_source="OpenCL C Table 7.1: cosh 4 ulp"),
    Entry("Asinh", ufunc(np.arcsinh), ulps=4, ulps_source="OpenCL C Table 7.1: asinh 4 ulp"),
    Entry("Acosh", ufunc(np.arccosh), values={"input": Interval(1.0, math.inf, edges=(1.0,), scale=16)}, ulps=4,
          ulps_source="OpenCL C Table 7.1: acosh 4 ulp"),
    Entry("Atanh", ufunc(np.arctanh), values={"input": Interval(-1.0, 1.0, edges=(-1.0, 1.0))}, ulps=5,
          ulps_source="OpenCL C Table 7.1: atanh 5 ulp"),
    Entry("Erf", ufunc(lambda x: np.asarray(_ERF(x), dtype=np.float64) if x.dtype != object else
                       np.asarray([round(math.erf(v)) for v in x.ravel()], dtype=object).reshape(x.shape)),
          ulps=4, ulps_source="OpenCL C Table 7.1: erf 16 ulp; glibc and onnxruntime measured <= 1 ulp: 4"),
]

register_entries(ENTRIES)
