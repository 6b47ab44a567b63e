"""Reductions as entries of the operator table (family ``shaped``).

Operators: ReduceSum, ReduceMean, ReduceMax, ReduceMin, ReduceProd, ReduceL1, ReduceL2,
ReduceLogSum, ReduceLogSumExp, ReduceSumSquare (every version).
What each entry adds to the schema, and the decisions taken from the operator texts
(``onnx.defs.get_schema(op, version).doc``), are below.

**Axes.**  Up to ReduceSum-11 and the other Reduce* at 13, ``axes`` is an attribute ("The
default is to reduce over all the dimensions of the input tensor"); from ReduceSum-13 and the
others at 18 it is an optional int64 input with the attribute ``noop_with_empty_axes``: "When
axes is empty (either not provided or explicitly empty) [...] reduction over all axes if
'noop_with_empty_axes' is false, and reduction over the empty set of axes when
'noop_with_empty_axes' is true", and "reduction over an empty set of axes means that the
reduction step behaves like a no-op (identity function), but composite-reduction operators
will still perform the non-reduction steps": ReduceL1 gives ``|x|``, ReduceL2 ``|x|``,
ReduceSumSquare ``x^2``, ReduceLogSum ``log x``, ReduceLogSumExp ``x``.  Which version has
which is read from the schema (an ``axes`` input, a ``noop_with_empty_axes`` attribute).
Negative axes: version 11 and later ("Accepted range is [-r, r-1]"); version 1's text knows
none, so version 1 gets only non-negative axes (and no negative-axis error case).  An
attribute ``axes = []`` is not generated (the attribute versions do not say what it means).
Duplicate axes: not generated (the text says nothing).

**The shape table** (:func:`reduce_shapes`): rank 0 to 4, one axis, several, unsorted,
negative (from 11), every axis listed, axes omitted, a size-1 reduced dimension, zero-size
inputs whose reduced sets are not empty (an empty output), empty reductions (a zero-size
reduced dimension: the identity of the operator, where the version's text states one), long
rows (4096 elements) for the accumulating operators; at the input versions every pattern
fixes the ``axes`` value (``Shape.values``; the engine decides whether the input is present),
``axes = []`` with and without ``noop_with_empty_axes``, and ``noop_with_empty_axes = 1``
with non-empty axes (where it changes nothing).

**Empty reductions** ("Reduction over an empty set of values yields ..."): the sentence is in
the text of versions 1, 13 and later of every Reduce* (1, 11, 13 and later for Max/Min);
ReduceSum-11 and the others at 11 (Max/Min at 12) say nothing, so no empty reduction is
generated there.  Identities: 0 (Sum, L1, L2, SumSquare), 1 (Prod), minus infinity or the
type's minimum (Max; ``False`` for bool at 20), plus infinity or the maximum (Min), minus
infinity for LogSum/LogSumExp ("or undefined otherwise": generated at 28 only, where T is
floating only, because a pattern cannot be limited to some types), and "undefined" for
ReduceMean (never).

**Precision (the legitimacy rule of docs/tolerance.md).**  The texts fix no summation order
and no accumulator.  Legitimate: any order (sequential, reverse, pairwise, blocked lanes,
any scan), FMA or not, at the type's precision for float and double and in at least float32
for float16 and bfloat16 (the project's rule for accumulating 16-bit floats: the issue's
"accepts every accumulation order in at least float32"; onnxruntime 1.32 accumulates a
float16 ReduceSum in float32, OPERATORS.md §4.4).  A 16-bit accumulator is *not* legitimate:
it stalls at 2048 (float16) or 256 (bfloat16) on a long row of ones (the long-row cases
catch it; onnx.reference sums in T and fails them).  The tolerance is the worst any such
order can do (Higham, *Accuracy and Stability of Numerical Algorithms*, 2nd ed., §4.2, eq.
4.4-4.5: every recursive summation of ``n`` terms has ``|S' - S| <= gamma_{n-1} sum|x_i|``,
``gamma_k = k u / (1 - k u)``; §3.1 for products), plus the rounding of the result to the
type, per output element; the largest element bound becomes ``atol``, ``rtol`` covers the
final rounding (:func:`sum_tolerance` and its siblings).  The function bodies of 18 are
legitimate too: ReduceSumSquare/L2 square in T (``Mul(data, data)``), ReduceLogSum rounds the
sum to T before ``Log``, ReduceLogSumExp computes in double without a max shift; the
tolerances grant what they do, and the data stay where the bodies are exact enough (no
square below T's normal range for L2, nothing beyond double's ``exp`` range for LogSumExp).
Overflow that depends on the order (``fmax + fmax - fmax``) is never generated: the data
classes keep every partial sum or product of every order inside the accumulator, or every
order overflowing.  Integer results are exact; an integer sum, product or mean outside the
type is undefined ("integer overflow where the type wraps") and the integer classes never
produce one (the oracle refuses it, so a generator bug cannot slip through as a repaired
case).  Integer results the text does not say how to round (a mean, a root, a log) are
generated only where every rounding agrees: sums that are multiples of the count, perfect
squares, logs 0.1 to 0.35 above an integer.

**ReduceMean** is the exact mean (the exact sum over ``n``); "Reduction over an empty set of
values yields undefined": never generated (the input versions' zero-size pattern always
gives its axes).  A mean of values near ``fmax`` overflows in a kernel that sums first in T
and not in one that divides first: order-dependent, never generated.

**ReduceL1/L2/SumSquare/LogSum/LogSumExp/Prod** keep their non-reduction step under
``noop_with_empty_axes`` (``|x|``, ``x^2``, ``log x``...).  ReduceL2-18 with double data is
*contested*: its function body casts the sum of squares to float (``Cast to=1``) before
``Sqrt``.  ReduceLogSum-18 with an integer T is contested: its body applies ``Log``, which
has no integer types, to the integer sum (28 removes the integer types).

**NaN.**  ReduceSum/L1/Prod...: IEEE arithmetic (NaN in, NaN out; ``+inf`` and ``-inf``
together give NaN; ``0 * inf`` NaN); the sign of a zero result is not checked (the text does
not make the reduction an IEEE chain).  ReduceMax / ReduceMin: "Computes the max of the
input tensor's elements" and nothing about NaN; the decision is the one recorded for the
variadic Max/Min (conformance/ops/variadic.py): **NaN propagates** (IEEE 754-2019
``maximum``, the array API standard's ``max``, numpy's ``max`` and onnx.reference), so a
kernel that drops NaN (``fmax``, ``maximumNumber``) fails the ``special`` cases, whose rows
each hold one kind of special value (a NaN among numbers, infinities, signed zeros,
subnormals, the extremes).  The sign of a zero maximum is not checked.  Max/Min are exact
(the result is one of the inputs; bool from 20 compares ``False < True``).  ArgMax/ArgMin
and TopK: the index of a NaN is not specified; never generated.

ArgMax, ArgMin, CumSum and TopK (the index and scan operators) are in
:mod:`conformance.ops.reduce_index`, on the helpers of this module.
"""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np

from . import values as V
from .engine import register_entries
from .entry import Attrs, Ctx, Entry, Err, Shape
from ..reference.reduce import (  # the oracles and tolerances of these entries
    axes_input_since,
    _axes_of_ctx,
    exact_tolerance,
    from_rows,
    _int_bounds,
    l2_tolerance,
    log_sum_exp_tolerance,
    log_sum_tolerance,
    mean_tolerance,
    prod_tolerance,
    reduce_l1,
    reduce_l2,
    reduce_log_sum,
    reduce_log_sum_exp,
    reduce_max,
    reduce_mean,
    reduce_min,
    reduce_prod,
    reduce_sum,
    reduce_sum_square,
    sum_square_tolerance,
    sum_tolerance,
)


# ============================================================================ numerics classes


def _layout(ctx: Ctx, shapes) -> tuple[tuple[int, ...], tuple[int, ...], int, int]:
    """(data shape, reduced dims, number of reduced sets, size of each) of a case being drawn."""
    shape = tuple(shapes[0])
    red = _axes_of_ctx(ctx, len(shape))
    n = int(np.prod([shape[d] for d in red], dtype=np.int64))
    total = int(np.prod(shape, dtype=np.int64))
    return shape, red, (total // n if n else int(np.prod([shape[d] for d in range(len(shape)) if d not in red],
                                                              dtype=np.int64))), n


def _rowwise(make: Callable) -> Callable:
    """A numerics class from ``make(rng, ctx, m, n) -> (m, n) rows``: the rows are laid out
    along the case's reduced dims; the other inputs (``axes``) get placeholders the pattern's
    value replaces."""

    def fn(rng, ctx, shapes):
        shape, red, m, n = _layout(ctx, shapes)
        rows = np.asarray(make(rng, ctx, m, n))
        data = from_rows(rows.reshape((m, n)), shape, red) if rows.size else np.zeros(shape, dtype=rows.dtype)
        return [data] + [np.zeros(s, dtype=object) for s in shapes[1:]]

    fn.__name__ = fn.__qualname__ = getattr(make, "__name__", "rowwise")
    return fn


def _elementwise(make: Callable) -> Callable:
    """A numerics class from ``make(rng, ctx, shape, total) -> data`` (values whose every
    reduction is safe whatever the axes)."""

    def fn(rng, ctx, shapes):
        shape = tuple(shapes[0])
        data = np.asarray(make(rng, ctx, shape, int(np.prod(shape, dtype=np.int64))))
        return [data.reshape(shape)] + [np.zeros(s, dtype=object) for s in shapes[1:]]

    fn.__name__ = fn.__qualname__ = getattr(make, "__name__", "elementwise")
    return fn


def _t(ctx) -> str:
    """The element type of the data input (``data``; CumSum's ``x``; TopK's ``X``)."""
    return ctx.types.get("data") or ctx.types.get("x") or ctx.types["X"]


def _wide(rng, ctx, shape, total):
    """Log-uniform magnitudes from the smallest normal up to ``fmax / (8 N)`` (``N`` the
    number of elements), random signs: no partial sum of any order can overflow."""
    fi = V.finfo(_t(ctx))
    lo = math.log2(float(fi.smallest_normal))
    hi = math.log2(float(fi.max) / (8 * max(total, 1)))
    mag = 2.0 ** rng.uniform(lo, hi, size=total)
    return V.representable(rng.choice([-1.0, 1.0], size=total) * mag, _t(ctx))


def _wide_square(rng, ctx, shape, total, lo_sqrt: bool = False):
    """:func:`_wide` with magnitudes up to ``sqrt(fmax / (8 N))``: no square and no sum of
    squares overflows T (ReduceL2-18's function body squares in T); from
    ``2 sqrt(smallest normal)`` with ``lo_sqrt`` (every square normal in T)."""
    fi = V.finfo(_t(ctx))
    lo = math.log2(float(fi.smallest_normal)) * (0.5 if lo_sqrt else 1.0) + (1.0 if lo_sqrt else 0.0)
    hi = 0.5 * math.log2(float(fi.max) / (8 * max(total, 1)))
    mag = 2.0 ** rng.uniform(lo, hi, size=total)
    return V.representable(rng.choice([-1.0, 1.0], size=total) * mag, _t(ctx))


def _wide_l2(rng, ctx, shape, total):
    """ReduceL2's ``wide``: :func:`_wide_square` with every square normal in T."""
    return _wide_square(rng, ctx, shape, total, lo_sqrt=True)


def _l2_special(rng, ctx, m, n):
    """ReduceL2's ``special``: :func:`_sum_special`'s rows without the subnormal ones (their
    squares underflow T, where the function body of 18 squares: its result and the L2 norm
    differ by the whole value)."""
    return _sum_special(rng, ctx, m, n, kinds=("nan", "pinf", "ninf", "both-inf", "zeros", "finite", "overflow"))


def _cancel(rng, ctx, m, n):
    """Rows of large values that cancel (``+c`` and ``-c`` pairs around 1000 (float16), 1e6
    (bfloat16), 1e7 (float), 1e15 (double)) and small ones: the exact sum is small, and an
    accumulator below the legitimate precision loses it."""
    t = _t(ctx)
    big = {"float16": 1000.0, "bfloat16": 1.0e6, "float": 1.0e7, "double": 1.0e15}[t]
    rows = rng.uniform(-1.0, 1.0, size=(m, n))
    for i in range(m):
        k = n // 2
        if k:
            c = V.representable(big * rng.uniform(1.0, 2.0, size=k), t)
            pos = rng.permutation(n)
            rows[i, pos[:k]] = c * rng.choice([-1.0, 1.0], size=k)
            if 2 * k <= n:  # the opposite values, so the big ones cancel
                rows[i, pos[k:2 * k]] = -rows[i, pos[:k]]
    return V.representable(rows, t)


def _ones(rng, ctx, m, n):
    """Rows of ones and small powers of two (every partial sum exact in float32): a float16
    accumulator stalls at 2048 on a long row, a float32 one is exact."""
    vals = np.array([1.0, 1.0, 1.0, 0.5, 0.25, 2.0])
    return vals[rng.integers(0, len(vals), size=(m, n))]


def _mean_special(rng, ctx, m, n):
    """:func:`_sum_special` without the overflowing rows (a mean of ``0.75 fmax`` values is
    finite, but a kernel summing first in T overflows: order-dependent, never generated)."""
    return _sum_special(rng, ctx, m, n, overflow=False)


#: Rows at least this long are laid out for a vectorized kernel's code paths (``_common_special``).
VECTOR_ROW = 64
#: Where the ``nan`` / ``pinf`` / ``ninf`` kinds put their values in such a row (negative: from the
#: end): first element, inside the first block of 4, the boundaries at 4, 8, 16, 32, the tail;
#: NaN rows keep a finite last value after several NaNs (a max that drops NaN returns it).
VECTOR_POSITIONS = {"nan": (0, 3, 4, 16, 33, -3), "pinf": (0, 8, 15, -2), "ninf": (0, 7, 32, -1)}


def _row_kinds(rng, kinds, m: int, n: int):
    """``(row, kind, a random order of the row's n positions)`` for the ``m`` rows of a data
    class built one kind of row each, the kinds cycling from a random start (a row of a
    zero-length axis has nothing to shape and is skipped)."""
    start = int(rng.integers(len(kinds)))
    if n >= VECTOR_ROW:  # vectorizable rows: NaN, +inf, -inf rows first (each at the row's first element)
        first = tuple(k for k in ("nan", "pinf", "ninf") if k in kinds)
        rot = start % max(len(first), 1)  # which of them is the tensor's first element: the case's draw
        kinds, start = first[rot:] + first[:rot] + tuple(k for k in kinds if k not in first), 0
    for i in range(m):
        if n:
            yield i, kinds[(start + i) % len(kinds)], rng.permutation(n)


def _common_special(kind: str, r: np.ndarray, pos: np.ndarray, rng) -> bool:
    """Shape row ``r`` as the kinds every floating ``special`` class shares -- ``nan`` (one NaN
    among finite values), ``pinf`` / ``ninf`` (one infinity), ``zeros`` (signed zeros only) --
    and say whether ``kind`` was one of them.  A row of :data:`VECTOR_ROW` or more elements gets
    several copies at the code paths of a vectorized kernel instead (:data:`VECTOR_POSITIONS`):
    NaNs from the first element on with a finite last value, infinities at the first element,
    the block boundaries and the tail."""
    if r.size >= VECTOR_ROW and kind in VECTOR_POSITIONS:
        val = {"nan": math.nan, "pinf": math.inf, "ninf": -math.inf}[kind]
        for q in VECTOR_POSITIONS[kind]:
            r[q if q >= 0 else r.size + q] = val
        return True
    if kind == "nan":
        r[pos[0]] = math.nan
    elif kind == "pinf":
        r[pos[0]] = math.inf
    elif kind == "ninf":
        r[pos[0]] = -math.inf
    elif kind == "zeros":
        r[:] = rng.choice([0.0, -0.0], size=r.size)
    else:
        return False
    return True


def _sum_special(rng, ctx, m, n, overflow=True, kinds=None):
    """One kind of row each (cycling from a random start): NaN among finite values; ``+inf``;
    ``-inf``; both infinities (NaN); signed zeros only; subnormals only (their sum is exact in
    every order); the smallest normal with subnormals of the other sign; finite values; and
    rows of one sign whose every order overflows (each element at least ``0.75 fmax``, two
    or more per row) -- never a mix that overflows in some orders only."""
    t = _t(ctx)
    fi = V.finfo(t)
    sub, tiny, fmax = float(fi.smallest_subnormal), float(fi.smallest_normal), float(fi.max)
    rows = V.representable(rng.uniform(-2.0, 2.0, size=(m, n)), t)
    kinds = kinds or ("nan", "pinf", "ninf", "both-inf", "zeros", "subnormal", "tiny", "finite") + (
        ("overflow",) if overflow else ())
    for i, kind, pos in _row_kinds(rng, kinds, m, n):
        r = rows[i]
        if _common_special(kind, r, pos, rng):
            continue
        if kind == "both-inf":
            r[pos[0]] = math.inf
            if n > 1:
                r[pos[1]] = -math.inf
        elif kind == "subnormal":
            r[:] = sub * rng.integers(-3, 4, size=n)
        elif kind == "tiny":
            r[:] = sub * rng.integers(-2, 3, size=n)
            r[pos[0]] = tiny
        elif kind == "overflow" and n > 1:
            r[:] = fmax * rng.uniform(0.75, 1.0, size=n) * (1.0 if rng.random() < 0.5 else -1.0)
    return V.representable(rows, t)


def _extreme_special(rng, ctx, m, n):
    """ReduceMax/Min: one kind of row each (cycling from a random start): a NaN among
    numbers; NaN among infinities; ``+inf``; ``-inf``; every element ``-inf`` (or ``+inf``);
    signed zeros only; subnormals and zeros; ``+-fmax`` with the smallest normal; finite."""
    t = _t(ctx)
    fi = V.finfo(t)
    sub, tiny, fmax = float(fi.smallest_subnormal), float(fi.smallest_normal), float(fi.max)
    rows = V.representable(rng.uniform(-2.0, 2.0, size=(m, n)), t)
    kinds = ("nan", "nan-inf", "pinf", "ninf", "all-ninf", "all-pinf", "zeros", "subnormal", "extremes", "finite")
    for i, kind, pos in _row_kinds(rng, kinds, m, n):
        r = rows[i]
        if _common_special(kind, r, pos, rng):
            continue
        if kind == "nan-inf":
            r[:] = rng.choice([math.inf, -math.inf], size=n)
            r[pos[0]] = math.nan
        elif kind in ("all-ninf", "all-pinf"):
            r[:] = -math.inf if kind == "all-ninf" else math.inf
        elif kind == "subnormal":
            r[:] = sub * rng.integers(-3, 4, size=n)
        elif kind == "extremes":
            r[:] = rng.choice([fmax, -fmax, tiny, -tiny], size=n)
    return V.representable(rows, t)


def _objs(vals, shape) -> np.ndarray:
    """Python ints in an object array of ``shape`` (a list is read as is: numpy would turn
    ``[2**64 - 1, 0]`` into float64)."""
    flat = list(vals) if isinstance(vals, list) else np.ravel(vals).tolist()
    out = np.empty(int(np.prod(shape, dtype=np.int64)), dtype=object)
    out[:] = [int(v) for v in flat]
    return out.reshape(shape)


def _sum_ints(rng, ctx, shape, total):
    """Uniform integers small enough that no partial sum of any order leaves the type:
    ``|x| <= max / (N + 1)`` (``N`` the number of elements; unsigned: ``[0, max / N]``)."""
    lo, hi = _int_bounds(_t(ctx))
    cap = max(1, min(hi // (total + 1), 10**6))
    vals = rng.integers(0 if lo == 0 else -cap, cap, size=total, endpoint=True)
    return _objs(vals, shape)


def _sum_int_extremes(rng, ctx, m, n, both_sum=-1):
    """Rows holding one extreme of the type each, with small values whose every partial sum
    stays inside the type: ``max`` with non-positive values, ``min`` with non-negative ones,
    ``max`` and ``min`` together (their sum is -1) with zeros; unsigned: ``max`` with zeros,
    ``max - k`` with ``k`` ones."""
    lo, hi = _int_bounds(_t(ctx))
    rows = np.zeros((m, n), dtype=object)
    kinds = ("max", "min", "both", "zeros") if lo < 0 else ("max", "max-k", "zeros")
    for i, kind, pos in _row_kinds(rng, kinds, m, n):
        r = [0] * n
        if kind == "max":
            r = [-int(v) if lo < 0 else 0 for v in rng.integers(0, 5, size=n)]
            r[pos[0]] = hi
        elif kind == "min":
            r = [int(v) for v in rng.integers(0, 5, size=n)]
            r[pos[0]] = lo
        elif kind == "both":
            r[pos[0]] = hi
            if n > 1:
                r[pos[1]] = lo + (both_sum + 1)
        elif kind == "max-k":
            k = int(rng.integers(0, n))
            r[pos[0]] = hi - k
            for j in pos[1:k + 1]:
                r[j] = 1
        rows[i, :] = r
    return rows


def _l1_int_extremes(rng, ctx, m, n):
    """Rows whose sum of ``|x|`` is at most the type's maximum in every order: the maximum
    (or ``-max``) with zeros, ``max - k`` with ``k`` elements of magnitude 1 (mixed signs),
    zeros; ``|min|`` never (it exceeds the maximum)."""
    lo, hi = _int_bounds(_t(ctx))
    rows = np.zeros((m, n), dtype=object)
    kinds = ("max", "neg-max", "split", "zeros") if lo < 0 else ("max", "split", "zeros")
    for i, kind, pos in _row_kinds(rng, kinds, m, n):
        r = [0] * n
        if kind in ("max", "neg-max"):
            r[pos[0]] = hi if kind == "max" else -hi
        elif kind == "split":
            k = int(rng.integers(0, n))
            r[pos[0]] = hi - k
            for j in pos[1:k + 1]:
                r[j] = 1 if lo == 0 or rng.random() < 0.5 else -1
        rows[i, :] = r
    return rows


def _square_ints(rng, ctx, shape, total):
    """Integers whose squares sum within the type: ``|x| <= sqrt(max / (N + 1))``."""
    lo, hi = _int_bounds(_t(ctx))
    cap = max(1, min(math.isqrt(hi // (total + 1)), 10**6))
    return _objs(rng.integers(0 if lo == 0 else -cap, cap, size=total, endpoint=True), shape)


def _square_int_extremes(rng, ctx, m, n):
    """Rows reaching the type's maximum square: one element ``+-isqrt(max)`` with zeros, or two
    elements whose squares sum to at most the maximum."""
    lo, hi = _int_bounds(_t(ctx))
    r0 = math.isqrt(hi)
    rows = np.zeros((m, n), dtype=object)
    for i in range(m):
        if n == 0:
            continue
        pos = rng.permutation(n)
        sign = -1 if lo < 0 and rng.random() < 0.5 else 1
        if n > 1 and rng.random() < 0.5:
            a = math.isqrt(hi // 2)
            rows[i, pos[0]], rows[i, pos[1]] = sign * a, a
        else:
            rows[i, pos[0]] = sign * r0
    return rows


#: Pythagorean tuples ``(a, b, ..., c)`` with ``a^2 + b^2 + ... = c^2`` (ReduceL2 of integers
#: is exact only on perfect squares).
_PYTHAGOREAN = ((3, 4), (5, 12), (1, 2, 2), (2, 3, 6), (1, 4, 8), (4, 4, 7), (2, 6, 9), (1, 1, 1, 1),
                (1, 1, 3, 5), (2, 4, 5, 6), (8, 15), (7, 24))


def _l2_ints(rng, ctx, m, n, scale_cap: int | None = None):
    """Rows whose sum of squares is a perfect square: a Pythagorean tuple (random signs,
    scaled) laid at random positions, zeros elsewhere; the scale keeps the squares within the
    type."""
    lo, hi = _int_bounds(_t(ctx))
    rows = np.zeros((m, n), dtype=object)
    for i in range(m):
        if n == 0:
            continue
        fits = [tp for tp in _PYTHAGOREAN if len(tp) <= n]
        tp = fits[int(rng.integers(len(fits)))] if fits else (1,)
        c2 = sum(v * v for v in tp)
        k_max = max(1, math.isqrt(hi // c2) if scale_cap is None else min(scale_cap, math.isqrt(hi // c2)))
        k = int(rng.integers(1, k_max + 1))
        pos = rng.permutation(n)
        for j, v in zip(pos, tp):
            rows[i, j] = k * v * (-1 if lo < 0 and rng.random() < 0.5 else 1)
    return rows


def _l2_small_ints(rng, ctx, m, n):
    """:func:`_l2_ints` with scales up to 20."""
    return _l2_ints(rng, ctx, m, n, scale_cap=20)


def _prod_rows(rng, ctx, m, n, width: float, target: float):
    """Rows whose exact product is ``+-2^t`` times a factor near 1 (``t`` drawn in
    ``[-target, target]`` per row): ``log2 |x_i|`` uniform in ``[-width, width]``, shifted
    together so that they sum to ``t``; every partial product of every order stays within
    ``2^(+-(n width + target + 1))``, inside the accumulator."""
    t = _t(ctx)
    rows = np.zeros((m, n))
    for i in range(m):
        if n == 0:
            continue
        g = rng.uniform(-width, width, size=n)
        tgt = rng.uniform(-target, target)
        g = g + (tgt - g.sum()) / n
        rows[i] = rng.choice([-1.0, 1.0], size=n) * 2.0 ** g
    return V.representable(rows, t)


def _prod_normal(rng, ctx, m, n):
    """Factors near 1 (``2^[-0.5, 0.5]``, random signs), products ``2^[-6, 6]``."""
    return _prod_rows(rng, ctx, m, n, 0.5, 6.0)


def _prod_wide(rng, ctx, m, n):
    """Factors ``2^[-w, w]`` with ``w = min(4, 24 / n)``, products up to half the type's
    exponent range."""
    emax = math.log2(float(V.finfo(_t(ctx)).max))
    return _prod_rows(rng, ctx, m, n, min(4.0, 24.0 / max(n, 1)), 0.5 * emax)


def _prod_special(rng, ctx, m, n):
    """One kind of row each: NaN; an infinity among finite non-zero factors (its sign from
    theirs); an infinity and a zero (NaN); a zero; factors whose product overflows in every
    order (all ``|x| >= 1``, one of them ``fmax``); powers of two at most 1 whose exact
    product is subnormal or below half the smallest subnormal (exact in every order);
    ``+-1`` only; ordinary factors."""
    t = _t(ctx)
    fi = V.finfo(t)
    fmax, sub = float(fi.max), float(fi.smallest_subnormal)
    rows = np.asarray(_prod_normal(rng, ctx, m, n), dtype=np.float64).copy()
    kinds = ("nan", "inf", "inf-zero", "zero", "overflow", "underflow", "signs", "finite")
    if n >= VECTOR_ROW:  # vectorizable rows: NaN, +inf, -inf at the code paths (_common_special)
        kinds = ("nan", "pinf", "ninf") + kinds[2:]
    emin = int(round(math.log2(sub)))
    for i, kind, pos in _row_kinds(rng, kinds, m, n):
        r = rows[i]
        if n >= VECTOR_ROW and _common_special(kind, r, pos, rng):
            continue
        if kind == "nan":
            r[pos[0]] = math.nan
        elif kind == "inf":
            r[pos[0]] = math.inf * (1 if rng.random() < 0.5 else -1)
        elif kind == "inf-zero" and n > 1:
            r[pos[0]], r[pos[1]] = math.inf, rng.choice([0.0, -0.0])
        elif kind == "zero":
            r[pos[0]] = rng.choice([0.0, -0.0])
        elif kind == "overflow" and n > 1:
            r[:] = rng.choice([-1.0, 1.0], size=n) * rng.uniform(1.5, 2.0, size=n)
            r[pos[0]] = fmax * (1 if rng.random() < 0.5 else -1)
        elif kind == "underflow":
            # exponents summing to emin + 3 (subnormal) or emin - 3 (below half the smallest)
            k = emin + (3 if rng.random() < 0.5 else -3)
            parts = np.full(n, k // n)
            parts[: k - int(parts.sum())] += 1 if k - int(parts.sum()) > 0 else 0
            parts[-1] += k - int(parts.sum())
            r[:] = 2.0 ** parts.astype(np.float64)
        elif kind == "signs":
            r[:] = rng.choice([-1.0, 1.0], size=n)
    return V.representable(rows, t)


def _prod_ints(rng, ctx, m, n):
    """Factors ``+-1`` with some ``2`` and ``3`` (and a zero now and then), the product within
    the type (every partial product is at most the whole in magnitude)."""
    lo, hi = _int_bounds(_t(ctx))
    rows = np.empty((m, n), dtype=object)
    for i in range(m):
        r = [1 if lo == 0 or rng.random() < 0.5 else -1 for _ in range(n)]
        mag = 1
        for j in rng.permutation(n):
            v = int(rng.choice([2, 3]))
            if mag * v > min(hi, 10**12) or rng.random() < 0.4:
                continue
            r[j] *= v
            mag *= v
        if n and rng.random() < 0.15:
            r[int(rng.integers(n))] = 0
        rows[i, :] = r
    return rows


def _prod_int_extremes(rng, ctx, m, n):
    """Rows reaching the type's extremes: ``max`` (or ``-max``) with ``+-1``s, ``min`` with
    ``1``s, ``max // 2`` with a 2, a zero with an extreme."""
    lo, hi = _int_bounds(_t(ctx))
    rows = np.empty((m, n), dtype=object)
    kinds = ("max", "min", "half", "zero") if lo < 0 else ("max", "half", "zero")
    for i, kind, pos in _row_kinds(rng, kinds, m, n):
        r = [1] * n
        if kind == "max":
            r = [1 if lo == 0 or rng.random() < 0.5 else -1 for _ in range(n)]
            r[pos[0]] = hi
        elif kind == "min":
            r[pos[0]] = lo
        elif kind == "half":
            r[pos[0]] = hi // 2
            if n > 1:
                r[pos[1]] = 2
        else:
            r[pos[0]] = hi if lo == 0 else lo
            if n > 1:
                r[pos[1]] = 0
        rows[i, :] = r
    return rows


def _positive(rng, ctx, shape, total):
    """ReduceLogSum's ``normal``: uniform in (0.05, 4] (a positive sum)."""
    return V.representable(rng.uniform(0.05, 4.0, size=total), _t(ctx))


def _positive_wide(rng, ctx, shape, total):
    """Positive log-uniform magnitudes from the smallest normal to ``fmax / (8 N)``."""
    return np.abs(_wide(rng, ctx, shape, total))


def _log_sum_special(rng, ctx, m, n):
    """ReduceLogSum: one kind of row each: NaN; ``+inf`` (inf); ``-inf`` (NaN); both
    infinities (NaN); zeros only (``-inf``); ``+-1`` pairs summing exactly to 0 (``-inf`` in
    every order); negative values only (NaN); positive subnormals (their sum is exact);
    positive values."""
    t = _t(ctx)
    fi = V.finfo(t)
    sub = float(fi.smallest_subnormal)
    rows = V.representable(rng.uniform(0.05, 4.0, size=(m, n)), t)
    kinds = ("nan", "pinf", "ninf", "both-inf", "zeros", "cancel-zero", "negative", "subnormal", "finite")
    for i, kind, pos in _row_kinds(rng, kinds, m, n):
        r = rows[i]
        if _common_special(kind, r, pos, rng):
            continue
        if kind == "both-inf" and n > 1:
            r[pos[0]], r[pos[1]] = math.inf, -math.inf
        elif kind == "cancel-zero":
            r[:] = 0.0
            k = n // 2
            r[pos[:k]] = 1.0
            r[pos[k:2 * k]] = -1.0
        elif kind == "negative":
            r[:] = -r
        elif kind == "subnormal":
            r[:] = sub * rng.integers(1, 4, size=n)
    return V.representable(rows, t)


#: 1 and ``ceil(e^(k + 0.1))``, ``k = 2..19``: integer sums whose log is 0 exactly or lies
#: 0.1 to 0.2 above ``k``.
_EXP_CEIL = (1,) + tuple(math.ceil(math.exp(k + 0.1)) for k in range(2, 20))


def _log_sum_ints(rng, ctx, m, n):
    """Rows of non-negative integers summing to 1 or ``ceil(e^(k + 0.1))`` (ReduceLogSum of an
    integer type is exact only where every rounding agrees: a log of 0, or 0.1 above an
    integer ``k``, far beyond any ``log``'s error, so truncation, floor and rounding to nearest
    all give ``k``), ``k`` up to what the type holds."""
    lo, hi = _int_bounds(_t(ctx))
    rows = np.zeros((m, n), dtype=object)
    ks = [k for k, v in enumerate(_EXP_CEIL) if v <= min(hi, 10**7)]
    for i in range(m):
        if n == 0:
            continue
        total = _EXP_CEIL[ks[int(rng.integers(len(ks)))]]
        cuts = np.sort(rng.integers(0, total + 1, size=n - 1))
        parts = np.diff(np.concatenate([[0], cuts, [total]]))
        rows[i, :] = [int(v) for v in parts]
    return rows


def _lse_large(rng, ctx, m, n):
    """ReduceLogSumExp's ``large``: rows around 650 (``exp`` overflows float32: a float32
    kernel needs the max shift; the function body of 18 computes in double, where it does not
    overflow) or around -650 (``exp`` underflows to 0 in float32, ``log(0) = -inf`` without the
    shift; not in double)."""
    t = _t(ctx)
    sign = np.where(rng.random(size=(m, 1)) < 0.5, 1.0, -1.0)
    return V.representable(sign * 650.0 + rng.uniform(-5, 5, size=(m, n)), t)


def _lse_wide(rng, ctx, shape, total):
    """Uniform in [-700, 700]: inside double's ``exp`` range (the function body's), far
    outside float32's."""
    return V.representable(rng.uniform(-700.0, 700.0, size=total), _t(ctx))


def _lse_special(rng, ctx, m, n):
    """ReduceLogSumExp: one kind of row each: NaN; ``+inf`` (inf); ``-inf`` among finite values
    (ignored); every element ``-inf`` (``-inf``); both infinities (inf); signed zeros (log n);
    subnormals; values at -700 (inside double's exp range, whose body computes there)."""
    t = _t(ctx)
    sub = float(V.finfo(t).smallest_subnormal)
    rows = V.representable(rng.uniform(-4.0, 4.0, size=(m, n)), t)
    kinds = ("nan", "pinf", "ninf", "all-ninf", "both-inf", "zeros", "subnormal", "very-negative")
    for i, kind, pos in _row_kinds(rng, kinds, m, n):
        r = rows[i]
        if _common_special(kind, r, pos, rng):
            continue
        if kind == "all-ninf":
            r[:] = -math.inf
        elif kind == "both-inf" and n > 1:
            r[pos[0]], r[pos[1]] = math.inf, -math.inf
        elif kind == "subnormal":
            r[:] = sub * rng.integers(-3, 4, size=n)
        elif kind == "very-negative":
            r[:] = -700.0 + rng.uniform(0, 2, size=n)
    return V.representable(rows, t)


def _lse_ints(rng, ctx, m, n):
    """Integer rows whose LogSumExp lies 0.13 to 0.32 above their maximum ``k`` in [45, 300]:
    one element ``k - 1`` (``log(1 + e^-1) = 0.313``) or one or two ``k - 2`` (0.127, 0.239),
    the others at most ``k - 40``; truncation, floor and rounding to nearest all give ``k``,
    whatever a ``log``/``exp`` error (the function body of 18 rounds the double result toward
    zero: ``log(exp(247))`` in double may be 246.99999999999997, so ``k + 0`` is never a
    case).  A row of one element is 0 (``log(exp(0)) = 0`` exactly)."""
    lo, hi = _int_bounds(_t(ctx))
    rows = np.zeros((m, n), dtype=object)
    for i in range(m):
        if n < 2:
            continue
        k = int(rng.integers(45, 300))
        low = 0 if lo == 0 else k - 200
        r = [int(v) for v in rng.integers(low, k - 40, size=n, endpoint=True)]
        pos = rng.permutation(n)
        r[pos[0]] = k
        near = [[k - 1], [k - 2], [k - 2, k - 2]][int(rng.integers(3 if n > 2 else 2))]
        for j, v in zip(pos[1:], near):
            r[j] = v
        rows[i, :] = r
    return rows


def _divisible(rows: np.ndarray, t: str) -> np.ndarray:
    """Integer rows changed so that each row's sum is a multiple of its length (an exact
    integer mean): the element of largest magnitude moves towards zero by the remainder
    (positive) or away from the type's minimum by the complement (negative), so no partial
    sum leaves the type."""
    m, n = rows.shape
    for i in range(m):
        if n == 0:
            continue
        r = [int(v) for v in rows[i]]
        rem = sum(r) % n
        if rem:
            j = max(range(n), key=lambda q: abs(r[q]))
            r[j] = r[j] - rem if r[j] > 0 else r[j] + (n - rem)
        rows[i, :] = r
    return rows


def _mean_ints(rng, ctx, m, n):
    """Uniform integers small enough that no partial sum leaves the type, each row's sum a
    multiple of its length."""
    lo, hi = _int_bounds(_t(ctx))
    total = m * n
    cap = max(1, min(hi // (total + 1) - n, 10**6))
    rows = _objs(rng.integers(0 if lo == 0 else -cap, cap, size=(m, n), endpoint=True), (m, n))
    return _divisible(rows, _t(ctx))


def _mean_int_extremes(rng, ctx, m, n):
    """:func:`_sum_int_extremes`'s rows (``max`` and ``min`` together as ``max, min + 1``, sum
    0), each row's sum made a multiple of its length."""
    rows = _sum_int_extremes(rng, ctx, m, n, both_sum=0)
    return _divisible(rows, _t(ctx))


# ============================================================================ shape tables


_LETTERS = "SMKN"
_DIMS = {0: (1, 1), 1: (1, 12), 2: (1, 6), 3: (1, 4), 4: (1, 3)}


def _fmt(axes) -> str:
    return "all" if axes is None else ("[]" if not axes else ",".join(str(a) for a in axes))


def reduce_shapes(op: str, empty_since: tuple[tuple[int, int], ...], long: bool = True,
                  long_numerics: tuple[str, ...] = ("normal", "cancel", "ones"),
                  dims: dict | None = None) -> tuple[Shape, ...]:
    """The shape table of a Reduce* operator (module docstring).

    Args:
        op: the operator (its schema says where ``axes`` becomes an input).
        empty_since: the inclusive version ranges whose text states the empty reduction's
            result (empty-reduction patterns are generated only there).
        long: add the long-row patterns (accumulating operators).
        long_numerics: the numerics classes the long rows are worth.
        dims: rank -> (lo, hi) of the drawn dimensions (default :data:`_DIMS`).
    """
    dims = dims or _DIMS
    inp = axes_input_since(op) or 10**6
    out: list[Shape] = []

    def add(name, tmpl, axes, neg=False, attrs=None, empty=False, dims_=None, numerics=(), present=None):
        rank = len(tmpl)
        d = dims_ or {c: dims[rank] for c in tmpl if c.isalpha()}
        ranges = list(empty_since) if empty else [(0, 10**6)]
        for lo, hi in ranges:
            # attribute versions (axes omitted when None); the attribute kind has no noop
            if axes is not None and not axes:
                pass
            elif not attrs:
                a_lo, a_hi = max(lo, 11 if neg else 0), min(hi, inp - 1)
                if a_lo <= a_hi:
                    out.append(Shape(name, {"data": tmpl}, {} if axes is None else {"axes": list(axes)},
                                     a_lo, a_hi, d, numerics))
            # input versions: the pattern fixes the input's value ([] for "every axis")
            i_lo, i_hi = max(lo, inp), hi
            if i_lo <= i_hi:
                val = [] if axes is None else list(axes)
                opt = None if present is None else ((("axes",),) if present else ((),))
                out.append(Shape(name + "/input", {"data": tmpl, "axes": str(len(val))}, dict(attrs or {}),
                                 i_lo, i_hi, d, numerics, values={"axes": val}, optional=opt))

    # the patterns whose semantics the texts single out come first: the combinations that
    # get fewer cases than there are patterns (integer types) see a window of the list
    add("zero-size/empty-set", "S0K", [1], empty=True)
    add("r3/axes=-1,0", "SMK", [-1, 0], neg=True)
    add("r3/axes=[]/noop", "SMK", [], attrs={"noop_with_empty_axes": 1}, present=True)  # input versions only
    add("r3/axes=0,2", "SMK", [0, 2])
    add("zero-size/all", "0K", None, empty=True)
    add("r2/axes=[]/noop=0", "SM", [], attrs={"noop_with_empty_axes": 0}, present=True)
    add("r0", "", None)
    add("r3/axes=1/noop", "SMK", [1], attrs={"noop_with_empty_axes": 1}, present=True)
    add("r2/axes=-2", "SM", [-2], neg=True)
    add("zero-size/kept", "S0K", [0, 2], present=True)  # absent axes would reduce the empty set
    add("r1/axes=0", "S", [0])
    add("r1/axes=-1", "S", [-1], neg=True)
    add("r2/all", "SM", None)
    add("r2/axes=1", "SM", [1])
    add("r3/axes=2,0", "SMK", [2, 0])
    add("r3/axes=1", "SMK", [1])
    add("r3/axes=0,1,2", "SMK", [0, 1, 2])
    add("r3/all", "SMK", None)
    add("r4/axes=1,3", "SMKN", [1, 3])
    add("r4/axes=-3", "SMKN", [-3], neg=True)
    add("size1/axes=1", "S1K", [1])
    add("r0/noop", "", [], attrs={"noop_with_empty_axes": 1}, present=False)
    # special values laid out for vectorized kernels: rows of 67 (>= 64, a scalar tail of 3)
    add("vector/4x67/axes=1", "4L", [1], dims_={"L": (67, 67)}, numerics=("special",))
    if long:
        add("long/2x4096/axes=1", "2L", [1], dims_={"L": (4096, 4096)}, numerics=long_numerics)
        add("long/4096x2/axes=0", "L2", [0], dims_={"L": (4096, 4096)}, numerics=long_numerics)
    return tuple(out)


def reduce_attrs(op: str) -> tuple[Attrs, ...]:
    """keepdims 0, and at the input versions ``noop_with_empty_axes`` 1 with either keepdims."""
    inp = axes_input_since(op) or 10**6
    return (Attrs({"keepdims": 0}, tag="keepdims=0"),
            Attrs({"noop_with_empty_axes": 1}, since=inp, tag="noop"),
            Attrs({"noop_with_empty_axes": 1, "keepdims": 0}, since=inp, tag="noop,keepdims=0"))


def reduce_errors(op: str) -> tuple[Err, ...]:
    """Axes outside the version's range: as the attribute (``r``; ``-r-1`` from 11) and, at the
    input versions, as the input's value; the ``axes`` input of another type than int64."""
    inp = axes_input_since(op) or 10**6
    out = [Err("axes value 2 outside [0, 1] for rank 2", "axes=2/attr", {"axes": [2]}, ((2, 3),), until=inp - 1),
           Err("axes value -3 outside [-2, 1] for rank 2 (accepted range [-r, r-1])", "axes=-3/attr", {"axes": [-3]},
               ((2, 3),), since=11, until=inp - 1)]
    if inp < 10**6:
        out += [Err("axes value 2 outside [-2, 1] for rank 2 (accepted range [-r, r-1])", "axes=2/input", {},
                    ((2, 3), (1,)), since=inp, values={"axes": [2]}),
                Err("axes value -3 outside [-2, 1] for rank 2 (accepted range [-r, r-1])", "axes=-3/input", {},
                    ((2, 3), (1,)), since=inp, values={"axes": [-3]}),
                Err("axes must be tensor(int64)", "axes-int32", {}, ((2, 3), (1,)), since=inp,
                    types={"axes": "int32"}, values={"axes": [1]}),
                Err("axes value 0 outside [-0, -1] for rank 0: a rank-0 tensor has no axis to reduce",
                    "rank0/axes=0/input", {}, ((), (1,)), since=inp, values={"axes": [0]})]
    out.append(Err("axes value 0 outside [0, -1] for rank 0: a rank-0 tensor has no axis to reduce",
                   "rank0/axes=0/attr", {"axes": [0]}, ((),), until=inp - 1))
    return tuple(out)


_AXES_NOTES = {11: "negative axes ([-r, r-1])"}


# ============================================================================ entries


def sweep(shapes: tuple[Shape, ...], ints: int = 6, floats: int | None = None) -> Callable[[int, dict], int]:
    """``per_type``: every pattern of the version once per floating type (the patterns cycle
    within each combination; at most ``floats`` cases where given: the patterns then rotate
    over the combinations) and for bool, ``ints`` cases per integer combination."""

    def per_type(version: int, combo) -> int:
        t = next(iter(combo.values()))
        n = sum(1 for sh in shapes if sh.applies(version))
        if V.kind(t) == V.BOOL:  # one combination: every pattern
            return n
        if V.kind(t) != V.FLOAT:
            return ints
        return n if floats is None else min(n, floats)

    return per_type


def _sum_entry() -> Entry:
    op = "ReduceSum"
    inp = axes_input_since(op)
    shapes = reduce_shapes(op, ((1, 10), (inp, 10**6)))
    return Entry(op, reduce_sum, family="shaped", shapes=shapes,
                 attrs=reduce_attrs(op), tolerance=sum_tolerance, per_type=sweep(shapes), errors=reduce_errors(op),
                 float_numerics={"wide": _elementwise(_wide), "special": _rowwise(_sum_special),
                                 "cancel": _rowwise(_cancel), "ones": _rowwise(_ones)},
                 int_numerics={"int": _elementwise(_sum_ints), "int-extremes": _rowwise(_sum_int_extremes)},
                 notes={**_AXES_NOTES, 11: "negative axes; the text drops the empty-set sentence (none generated)",
                        inp: "axes as an optional input; noop_with_empty_axes"})


def _extreme_entry(op: str, fn) -> Entry:
    inp = axes_input_since(op)
    # the empty-set sentence is in the text of 1, 11, 13 and later (not 12)
    shapes = reduce_shapes(op, ((1, 11), (13, 10**6)), long=False)
    return Entry(op, fn, family="shaped", shapes=shapes, attrs=reduce_attrs(op), tolerance=exact_tolerance,
                 per_type=sweep(shapes, ints=4, floats=10), errors=reduce_errors(op),
                 float_numerics={"special": _rowwise(_extreme_special)},
                 notes={**_AXES_NOTES, 12: "int8, uint8; the text drops the empty-set sentence (none generated)",
                        13: "bfloat16; the empty-set sentence again", inp: "axes as an optional input; "
                        "noop_with_empty_axes", 20: "bool (False < True)"})


def _mean_entry() -> Entry:
    op = "ReduceMean"
    inp = axes_input_since(op)
    shapes = reduce_shapes(op, ())  # "Reduction over an empty set of values yields undefined"
    return Entry(op, reduce_mean, family="shaped", shapes=shapes, attrs=reduce_attrs(op), tolerance=mean_tolerance,
                 per_type=sweep(shapes, ints=6), errors=reduce_errors(op),
                 float_numerics={"wide": _elementwise(_wide), "special": _rowwise(_mean_special),
                                 "cancel": _rowwise(_cancel), "ones": _rowwise(_ones)},
                 int_numerics={"int": _rowwise(_mean_ints), "int-extremes": _rowwise(_mean_int_extremes)},
                 notes={**_AXES_NOTES, 13: "bfloat16", inp: "axes as an optional input; noop_with_empty_axes"})


def _norm_entry(op: str, oracle, tolerance, float_numerics, int_numerics, contested=None) -> Entry:
    inp = axes_input_since(op)
    shapes = reduce_shapes(op, ((1, 10), (13, 10**6)))
    return Entry(op, oracle, family="shaped", shapes=shapes, attrs=reduce_attrs(op), tolerance=tolerance,
                 per_type=sweep(shapes, ints=6, floats=14), errors=reduce_errors(op), float_numerics=float_numerics,
                 int_numerics=int_numerics, contested=contested,
                 notes={**_AXES_NOTES, 11: "negative axes; the text drops the empty-set sentence (none generated)",
                        13: "bfloat16", inp: "axes as an optional input; noop_with_empty_axes (the non-reduction "
                        "step still applies: |x|, x^2); a function body"})


def _l2_contested(ctx, attrs) -> str | None:
    """ReduceL2-18's function body computes a double input's root in float (``Cast to=1``):
    the body and the text's L2 norm differ for double (module docstring)."""
    if ctx.version >= 18 and ctx.types.get("data") == "double":
        return ("ReduceL2-18's function body casts the sum of squares to float (Cast to=1) before Sqrt and "
                "CastLike back: a double input gets a float-precision root (and inf above 3.4e38); the text "
                "computes the L2 norm of the double data")
    return None


def _prod_entry() -> Entry:
    op = "ReduceProd"
    inp = axes_input_since(op)
    shapes = reduce_shapes(op, ((1, 10), (13, 10**6)), long=False)
    return Entry(op, reduce_prod, family="shaped", shapes=shapes, attrs=reduce_attrs(op), tolerance=prod_tolerance,
                 per_type=sweep(shapes, ints=6, floats=14), errors=reduce_errors(op),
                 float_numerics={"normal": _rowwise(_prod_normal), "wide": _rowwise(_prod_wide),
                                 "special": _rowwise(_prod_special)},
                 int_numerics={"int": _rowwise(_prod_ints), "int-extremes": _rowwise(_prod_int_extremes)},
                 notes={**_AXES_NOTES, 11: "negative axes; the text drops the empty-set sentence (none generated)",
                        13: "bfloat16", inp: "axes as an optional input; noop_with_empty_axes"})


def _log_sum_contested(ctx, attrs) -> str | None:
    """ReduceLogSum-18 with an integer T: its function body applies ``Log`` (floating types
    only) to the integer ``ReduceSum``: the body is not a valid graph for integer T (28
    removes the integer types)."""
    if ctx.op == "ReduceLogSum" and ctx.version == 18 and V.kind(ctx.types.get("data", "float")) == V.INT:
        return ("ReduceLogSum-18's function body is Log(ReduceSum(data)); Log has no integer types, so the body "
                "does not type-check for integer T (the schema admits them; ReduceLogSum-28 removes them)")
    return None


def _log_entry(op: str) -> Entry:
    inp = axes_input_since(op)
    # the empty set's -inf: tested at 28 only, where T has floating types only (before 28 the
    # integer types make it undefined, and a pattern cannot be restricted to some types)
    if op == "ReduceLogSum":
        shapes = reduce_shapes(op, ((28, 10**6),), long_numerics=("normal", "ones"))
        fl = {"normal": _elementwise(_positive), "wide": _elementwise(_positive_wide),
              "special": _rowwise(_log_sum_special), "ones": _rowwise(_ones)}
        ints = {"int": _rowwise(_log_sum_ints), "int-extremes": _rowwise(_log_sum_ints)}
        fn, tol = reduce_log_sum, log_sum_tolerance
    else:
        shapes = reduce_shapes(op, ((28, 10**6),), long_numerics=("normal", "large"))
        fl = {"wide": _elementwise(_lse_wide), "special": _rowwise(_lse_special), "large": _rowwise(_lse_large)}
        ints = {"int": _rowwise(_lse_ints), "int-extremes": _rowwise(_lse_ints)}
        fn, tol = reduce_log_sum_exp, log_sum_exp_tolerance
    return Entry(op, fn, family="shaped", shapes=shapes, attrs=reduce_attrs(op), tolerance=tol,
                 per_type=sweep(shapes, ints=5, floats=14), errors=reduce_errors(op), float_numerics=fl,
                 int_numerics=ints, contested=_log_sum_contested,
                 notes={**_AXES_NOTES, 13: "bfloat16", inp: "axes as an optional input; noop_with_empty_axes; a "
                        "function body", 28: "integer types removed"})


_SQUARE_FLOATS = {"wide": _elementwise(_wide_square), "special": _rowwise(_sum_special)}
_SUM_FLOATS = {"wide": _elementwise(_wide), "special": _rowwise(_sum_special), "ones": _rowwise(_ones)}

ENTRIES = (_sum_entry(), _extreme_entry("ReduceMax", reduce_max), _extreme_entry("ReduceMin", reduce_min),
           _mean_entry(), _prod_entry(), _log_entry("ReduceLogSum"), _log_entry("ReduceLogSumExp"),
           _norm_entry("ReduceL1", reduce_l1, sum_tolerance, _SUM_FLOATS,
                       {"int": _elementwise(_sum_ints), "int-extremes": _rowwise(_l1_int_extremes)}),
           _norm_entry("ReduceSumSquare", reduce_sum_square, sum_square_tolerance, dict(_SQUARE_FLOATS),
                       {"int": _elementwise(_square_ints), "int-extremes": _rowwise(_square_int_extremes)}),
           _norm_entry("ReduceL2", reduce_l2, l2_tolerance, {"wide": _elementwise(_wide_l2),
                                                             "special": _rowwise(_l2_special)},
                       {"int": _rowwise(_l2_small_ints), "int-extremes": _rowwise(_l2_ints)}, _l2_contested))
register_entries(ENTRIES, family="reduce")
