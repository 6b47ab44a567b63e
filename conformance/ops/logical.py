"""Entries of the element-wise logical, comparison and bitwise operators.

And, Or, Xor, Equal, Greater, Less, GreaterOrEqual, LessOrEqual, BitwiseAnd, BitwiseOr and
BitwiseXor are family ``binary``; Not and BitwiseNot are family ``unary``.  Each entry holds
only what the schema cannot say (:mod:`conformance.ops.entry`); every result is exact (a
bool or an integer), so every output is compared exactly.  Decisions recorded here:

* **Comparisons are IEEE 754 comparisons** (§5.11: "every NaN shall compare unordered with
  everything, including itself", and "comparisons shall ignore the sign of zero").  The
  operator text says only "Returns the tensor resulted from performing the `greater`
  logical operation elementwise on the input tensors `A` and `B`" (Greater-13; Equal,
  Less, GreaterOrEqual, LessOrEqual alike), so the ordinary floating-point comparison is
  the only reading: Greater/Less/GreaterOrEqual/LessOrEqual with a NaN operand are false,
  ``Equal(NaN, NaN)`` is false, ``Equal(-0, +0)`` is true and ``Greater(+0, -0)`` false.
  NaN and both zeros are generated (``special`` grids and the ``ties`` class); none of it
  is left undefined.
* **GreaterOrEqual and LessOrEqual** are defined by their function bodies at 12 and 16
  (``C = Or(Greater(A, B), Equal(A, B))``), which agrees with IEEE ``>=``/``<=`` also for
  NaN (both parts false).  A kernel computing ``Not(Less(A, B))`` is wrong on NaN.  Their
  body opsets are their since_versions, which the opset schedule already imports.
* **Ties**: Greater and GreaterOrEqual (Less and LessOrEqual) differ only where the
  operands are equal, and random draws are almost never equal, so every comparison
  carries a ``ties`` numerics class for every kind of its type (float with +-0, +-inf
  and NaN, integer with the type's extremes, string for Equal-19): the smaller input
  comes from a small pool of values, and each element of the other is the element it is
  compared with (under multidirectional broadcasting), one ulp (one unit, a confusable
  string) next to it, or another pool value.
* **double comparisons are done in double**: the ``ulp-neighbours`` class puts B within
  two ulps of the type of A (for double: values that differ only beyond float32
  precision, so a kernel that rounds double inputs to float32 before comparing
  fails).
* **Strings** (Equal-19 "adds" ``tensor(string)``): equality of the code-point sequences;
  the text mentions no case folding or Unicode normalization, so ``"é"`` (U+00E9) and
  ``"e\\u0301"`` are different strings, as are ``"a"`` and ``"A"``, ``"a"`` and ``"a "``
  (the string ``ties`` class puts such partners side by side).
* **Bitwise** operators act on the two's complement representation of the type ("the
  bitwise `and` operation elementwise", BitwiseAnd-18; "Returns the bitwise not of the
  input tensor element-wise", BitwiseNot-18).  The oracle computes exactly with Python
  ints: ``&``, ``|``, ``^`` and ``~`` on Python ints are two's complement of unbounded
  width, so for signed types the result is the type's result and stays in range; for
  unsigned types ``BitwiseNot(x) = (2**bits - 1) - x``.  Every input is defined.
* **Legacy broadcasting** (version 1 of And, Or, Xor, Equal, Greater, Less): "If
  broadcasting is enabled, the right-hand-side argument will be broadcasted to match the
  shape of left-hand-side argument. See the doc of `Add` for a detailed description of
  the broadcasting rules."  The engine's ``LEGACY_SHAPES`` (B aligned with A's trailing
  dims or at ``axis``) and its legacy error cases (B of another shape without
  ``broadcast``, misaligned B) apply.
* Type changes that the schema already lists (documentation only, :attr:`Entry.notes`):
  Equal-11 adds floats and the 8/16-bit and unsigned integers (before: bool, int32,
  int64); Equal-13 and Greater/Less-13 add bfloat16; Equal-19 adds string; Greater/Less-9
  add the integer types (before: float16, float, double).
"""

from __future__ import annotations

import math
import operator

import numpy as np

from ..opspec import op_spec
from . import values as V
from .engine import register_entries
from .entry import Entry

# ----------------------------------------------------------------------------- oracles


def _logical(fn):
    """Oracle of a boolean operator from a numpy logical ufunc."""

    def oracle(ctx, *inputs, **attrs):
        return np.asarray(fn(*inputs), dtype=bool)

    oracle.__name__ = oracle.__qualname__ = fn.__name__
    return oracle


def _compare(fn):
    """Oracle of a comparison: ``fn`` (``operator.gt``...) applied element-wise to the exact
    inputs (float64 IEEE comparisons, exact Python ints, Python strings)."""

    def oracle(ctx, a, b, **attrs):
        return np.asarray(fn(a, b), dtype=bool)

    oracle.__name__ = oracle.__qualname__ = fn.__name__
    return oracle


def _bitwise(fn):
    """Oracle of a binary bitwise operator: ``fn`` on Python ints (two's complement of
    unbounded width, exact for signed and unsigned types)."""
    vec = np.frompyfunc(fn, 2, 1)

    def oracle(ctx, a, b, **attrs):
        return np.asarray(vec(a, b), dtype=object)

    oracle.__name__ = oracle.__qualname__ = fn.__name__
    return oracle


def bitwise_not(ctx, x, **attrs):
    """BitwiseNot on exact ints: ``~x`` for signed types, ``(2**bits - 1) - x`` for unsigned."""
    info = V.iinfo(ctx.types["X"])
    top = int(info.max)
    fn = (lambda v: ~v) if int(info.min) < 0 else (lambda v: top - v)
    return np.asarray(np.frompyfunc(fn, 1, 1)(x), dtype=object)


# ----------------------------------------------------------------------------- numerics classes


def aligned_copy(ctx, a: np.ndarray, shape_b: tuple[int, ...]) -> np.ndarray | None:
    """A ``shape_b`` array whose every element is the element of ``a`` it is compared with
    under multidirectional broadcasting (the first one, where it is broadcast over several
    of ``a``'s); None for legacy versions (where B's alignment depends on ``axis``,
    which a numerics class does not see), shapes that do not broadcast, or empty results."""
    if "broadcast" in op_spec(ctx.op).versions[ctx.version].attributes:
        return None
    try:
        out = np.broadcast_shapes(a.shape, tuple(shape_b))
    except ValueError:
        return None
    if 0 in out:
        return None
    ab = np.broadcast_to(a, out)
    pad = len(out) - len(shape_b)
    idx = tuple(0 if i < pad else (slice(0, 1) if shape_b[i - pad] == 1 else slice(None)) for i in range(len(out)))
    return np.array(ab[idx]).reshape(shape_b)


def float_step(x: np.ndarray, name: str, k: np.ndarray) -> np.ndarray:
    """``x`` (float64 values of the floating type ``name``) moved by ``k`` units in the last
    place of the type (away from zero for positive ``k``); zeros, infinities and NaN stay."""
    x = np.asarray(x, dtype=np.float64)
    dt = V.np_dtype(name)
    u = {2: np.uint16, 4: np.uint32, 8: np.uint64}[dt.itemsize]
    bits = V.round_float(x, name).astype(dt).view(u).astype(object)
    k = np.broadcast_to(np.asarray(k, dtype=object), x.shape)
    ok = np.isfinite(x) & (x != 0)
    moved = np.array([int(b) + int(s) if o else int(b) for b, s, o in zip(bits.ravel(), k.ravel(), ok.ravel())],
                     dtype=u).reshape(x.shape)
    return moved.view(dt).astype(np.float64)


def _pair(rng, ctx, shapes, pool: np.ndarray, neighbour, p_copy=0.5, p_near=0.25) -> list[np.ndarray]:
    """A and B of a ties-like class.  The input with fewer elements is drawn from ``pool``;
    each element of the other is, with probabilities ``p_copy``, ``p_near`` and the rest, the
    element it is compared with (:func:`aligned_copy`), that element's ``neighbour``, or a
    pool value.  Drawing the smaller input first keeps the ties when it is a scalar or a
    short vector broadcast over the other; where the alignment is unknown (legacy
    versions) the compared element is replaced by a pool value (a tie with probability
    1 / ``len(pool)``)."""
    sizes = [int(np.prod(s, dtype=np.int64)) for s in shapes]
    first = 0 if sizes[0] < sizes[1] else 1
    other = 1 - first
    x = rng.choice(pool, size=sizes[first]).reshape(shapes[first])
    pick = rng.choice(pool, size=sizes[other]).reshape(shapes[other])
    base = aligned_copy(ctx, x, shapes[other])
    if base is None:
        base = pick
    r = rng.random(size=shapes[other])
    y = np.where(r < p_copy, base, np.where(r < p_copy + p_near, neighbour(base), pick))
    out = [x, y] if first == 0 else [y, x]
    return [np.asarray(v, dtype=pool.dtype) for v in out]


def float_ties(rng, ctx, shapes):
    """``ties`` for floating A, B (:func:`_pair`): a pool of three ordinary values, +-0, the
    largest value, +-inf and NaN; neighbours one ulp of the type away (the other zero for
    a zero)."""
    t = ctx.types["A"]
    fmax = float(V.finfo(t).max)
    pool = V.representable(np.concatenate([rng.uniform(-4, 4, size=3),
                                           [0.0, -0.0, fmax, math.inf, -math.inf, math.nan]]), t)
    def near(v):  # one ulp away; a zero's neighbour is the zero of the other sign
        v = np.asarray(v, dtype=np.float64)
        return np.where(v == 0, -v, float_step(v, t, rng.choice([-1, 1], size=np.shape(v))))

    return _pair(rng, ctx, shapes, pool, near)


def float_ulp_neighbours(rng, ctx, shapes):
    """``ulp-neighbours`` for floating A, B (:func:`_pair`): a pool of an ordinary value, a
    wide one and (double) a float32 value or (other types) a value up to 100; neighbours
    one or two ulps of the type away, more often than exact copies.  For double the
    neighbours differ only beyond float32 precision."""
    t = ctx.types["A"]
    wide = float(rng.choice([-1.0, 1.0]) * 10.0 ** rng.uniform(-30, 30))
    third = float(np.float32(rng.uniform(-4, 4))) if t == "double" else float(rng.uniform(-100, 100))
    pool = V.representable(np.array([rng.uniform(-4, 4), wide, third]), t)
    return _pair(rng, ctx, shapes, pool, lambda v: float_step(v, t, rng.choice([-2, -1, 1, 2], size=np.shape(v))),
                 p_copy=0.3, p_near=0.6)


def int_ties(rng, ctx, shapes):
    """``ties`` for integer A, B (:func:`_pair`): a pool of the type's min and max and three
    of min+1, max-1, 0, +-1 and two random values; neighbours one unit away, inside the
    type."""
    info = V.iinfo(ctx.types["A"])
    lo, hi = int(info.min), int(info.max)
    drawn = rng.integers(lo, hi, size=2, endpoint=True, dtype=np.uint64 if lo >= 0 else np.int64)
    cand = sorted({lo + 1, hi - 1, 0, 1, max(lo, -1)} | {int(v) for v in drawn})
    cand = [v for v in cand if v not in (lo, hi)]
    pool = np.empty(5, dtype=object)
    pool[:] = [lo, hi] + [cand[i] for i in rng.choice(len(cand), size=3, replace=False)]
    step = np.frompyfunc(lambda x, d: min(max(x + int(d), lo), hi), 2, 1)
    return _pair(rng, ctx, shapes, pool,
                 lambda v: np.asarray(step(np.asarray(v, dtype=object), rng.choice([-1, 1], size=np.shape(v))),
                                      dtype=object))


#: String -> a string it must not equal (case, trailing space, prefix, composed and
#: decomposed e-acute, empty and blank): the neighbours of the string ``ties`` class.
STRING_PARTNER = {"a": "A", "A": "a", "a ": "a", "ab": "abc", "abc": "ab", "b": "B", "B": "b", "é": "e\u0301",
                  "e\u0301": "é", "": " ", " ": "", "日本": "日本語", "日本語": "日本"}
#: Strings of the string ``ties`` class.
TIE_STRINGS = tuple(STRING_PARTNER)


def string_ties(rng, ctx, shapes):
    """``ties`` for string A, B (:func:`_pair`): a pool of four of :data:`TIE_STRINGS`;
    neighbours are :data:`STRING_PARTNER` (equal but for case, a space, a suffix or the
    Unicode composition)."""
    pool = np.empty(4, dtype=object)
    pool[:] = [TIE_STRINGS[i] for i in rng.choice(len(TIE_STRINGS), size=4, replace=False)]
    partner = np.frompyfunc(STRING_PARTNER.__getitem__, 1, 1)
    return _pair(rng, ctx, shapes, pool, lambda v: np.asarray(partner(np.asarray(v, dtype=object)), dtype=object),
                 p_copy=0.45, p_near=0.35)


def ties(rng, ctx, shapes):
    """The ``ties`` numerics class of every kind (one name for floating, integer and string
    inputs): :func:`float_ties`, :func:`int_ties` or :func:`string_ties` by A's type."""
    k = V.kind(ctx.types["A"])
    return {V.FLOAT: float_ties, V.INT: int_ties, V.STRING: string_ties}[k](rng, ctx, shapes)


_FLOAT_CMP = {"ties": ties, "ulp-neighbours": float_ulp_neighbours}
_INT_CMP = {"ties": ties}


def _comparison(op: str, fn, notes=None, strings=False) -> Entry:
    """A comparison entry: the exact oracle and the ``ties``/``ulp-neighbours`` classes."""
    return Entry(op, _compare(fn), family="binary", float_numerics=_FLOAT_CMP, int_numerics=_INT_CMP,
                 string_numerics={"ties": ties} if strings else {}, notes=notes or {})


_GL_NOTES = {9: "adds the integer types (before: float16, float, double)", 13: "adds bfloat16"}
_GE_NOTES = {12: "function body Or(Greater(A, B), Equal(A, B)) at opset 12",
             16: "adds bfloat16; function body at opset 16"}

ENTRIES = [
    Entry("And", _logical(np.logical_and), family="binary"),
    Entry("Or", _logical(np.logical_or), family="binary"),
    Entry("Xor", _logical(np.logical_xor), family="binary"),
    Entry("Not", _logical(np.logical_not)),
    _comparison("Equal", operator.eq, strings=True, notes={
        11: "adds float16, float, double and the 8/16-bit and unsigned integers (before: bool, int32, int64)",
        13: "adds bfloat16", 19: "adds string"}),
    _comparison("Greater", operator.gt, _GL_NOTES),
    _comparison("Less", operator.lt, _GL_NOTES),
    _comparison("GreaterOrEqual", operator.ge, _GE_NOTES),
    _comparison("LessOrEqual", operator.le, _GE_NOTES),
    Entry("BitwiseAnd", _bitwise(operator.and_), family="binary", int_numerics=_INT_CMP),
    Entry("BitwiseOr", _bitwise(operator.or_), family="binary", int_numerics=_INT_CMP),
    Entry("BitwiseXor", _bitwise(operator.xor), family="binary", int_numerics=_INT_CMP),
    Entry("BitwiseNot", bitwise_not),
]

register_entries(ENTRIES, family="logical")
