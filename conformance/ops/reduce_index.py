"""The index and scan operators of the reductions as entries of the operator table (family
``shaped``): ArgMax, ArgMin, CumSum, CumProd, TopK (every version), on the axes, rows, tolerance and
numerics helpers of :mod:`conformance.ops.reduce` (split from it by sub-family; the cases are
byte for byte those it generated).  The decisions taken from the operator texts
(``onnx.defs.get_schema(op, version).doc``):

**ArgMax/ArgMin** (1, 11, 12, 13): the first occurrence of the extreme, the last with
``select_last_index`` (12); before 12 the text does not say which of tied extremes, so tied
cases there are judged by :func:`check_argmax` / :func:`check_argmin` (any tied index) and
the other classes draw distinct values; ``-0 == +0`` is a tie.  "The input tensor must not
be empty" (11): an empty axis is an error case, zero-size inputs are not generated at 11.

**CumSum** (11, 14): exact prefix sums, ``exclusive`` and ``reverse`` as the text's example;
``axis`` "A 0-D tensor" of int32 or int64; a one-element 1-D axis is a contested case
(onnx.checker and onnxruntime accept it, onnx.reference refuses it).

**CumProd** (26): the product twin of CumSum on its machinery (shape table, axis as a 0-D
input, ``exclusive`` -- the first output the empty product 1 -- and ``reverse``); exact prefix
products (IEEE rules for NaN, infinities, zeros and overflow, element by element); the data
classes are ReduceProd's, whose every partial product of every order stays inside the
accumulator (``wide``: inside ``2^(emax/2)``, so every prefix is finite in T too).  The text
says nothing about integer overflow (no wrap-around is stated): integer prefix products
outside the type are never generated, as for CumSum.

**TopK** (1, 10, 11, 24): ``k`` the attribute at 1, the ``K`` input (a 1-D tensor of one
positive value) from 10; values by value, ties by the lower index ("the element with the
lower index will appear first"); ``sorted=0`` leaves the order undefined: judged by
:func:`check_topk_unsorted` (the text's top-k set, any order).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from fractions import Fraction

import numpy as np

from ..tolerance import Tolerance
from . import values as V
from .engine import register_entries
from .entry import Attrs, Entry, Err, Shape
from ..reference.reduce import (
    exact_tolerance,
    _gamma,
    _int_bounds,
    reduce_rows,
    _to_float,
    to_rows,
    units,
)
from .reduce import (
    _cancel,
    _DIMS,
    _elementwise,
    _objs,
    _ones,
    _prod_int_extremes,
    _prod_ints,
    _prod_normal,
    _prod_rows,
    _prod_special,
    _rowwise,
    _sum_int_extremes,
    _sum_ints,
    _sum_special,
    sweep,
    _t,
    VECTOR_POSITIONS,
    VECTOR_ROW,
    _wide,
)


def _scaled_ints(vals: list[float]) -> tuple[list[int], int]:
    """Finite floats as exact integers ``x * 2^k`` with one ``k`` for all (exact prefix sums by
    integer addition)."""
    k = 0
    for v in vals:
        if v != 0:
            m, e = math.frexp(v)
            k = max(k, 53 - e)
    return [int(Fraction(v) * (1 << k)) if k >= 0 else int(v) for v in vals], k


def _cumsum_row(r, exclusive: bool, reverse: bool):
    """Exact (inclusive or exclusive, forward or reverse) prefix sums of one row: Python ints,
    or floats correctly rounded from the exact rational prefix sums (IEEE rules for NaN and
    infinities, element by element)."""
    vals = list(r[::-1]) if reverse else list(r)
    n = len(vals)
    out: list = []
    if r.dtype == object:
        acc = 0
        for v in vals:
            out.append(acc if exclusive else acc + int(v))
            acc += int(v)
    else:
        fl = [float(v) for v in vals]
        fin = [v if math.isfinite(v) else 0.0 for v in fl]
        ints, k = _scaled_ints(fin)
        acc = 0
        state = None  # NaN / +inf / -inf seen so far
        for j in range(n):
            cur_state, cur_acc = state, acc
            v = fl[j]
            new_state = state
            if math.isnan(v) or state == "nan":
                new_state = "nan"
            elif math.isinf(v):
                new_state = "nan" if state not in (None, v) else v
            new_acc = acc + ints[j]
            s_state, s_acc = (cur_state, cur_acc) if exclusive else (new_state, new_acc)
            if s_state is None:
                out.append(_to_float(Fraction(s_acc, 1 << k)) if k >= 0 else float(s_acc))
            else:
                out.append(math.nan if s_state == "nan" else s_state)
            state, acc = new_state, new_acc
    out = out[::-1] if reverse else out
    res = np.empty(n, dtype=object if r.dtype == object else np.float64)
    res[:] = out
    return res


def cumsum(ctx, x, axis, exclusive=0, reverse=0, **attrs) -> np.ndarray:
    """CumSum: the exact cumulative sums of ``x`` along ``axis`` (a 0-D int32/int64 tensor; a
    one-element 1-D one is read the same way, see the entry's ``contested``); ``exclusive``:
    the j-th output is the sum of the first ``j - 1`` elements; ``reverse``: summed from the
    end.  Returns an array of ``x``'s shape.

    Raises:
        ValueError: ``axis`` out of ``[-r, r-1]``, or an integer prefix sum outside the type."""
    xa = np.asarray(x)
    a = int(np.ravel(np.asarray(axis, dtype=object))[0])
    if not -xa.ndim <= a < xa.ndim:
        raise ValueError(f"axis {a} outside [{-xa.ndim}, {xa.ndim - 1}]")
    a %= xa.ndim
    moved = np.moveaxis(xa, a, -1)
    flat = moved.reshape((-1, moved.shape[-1])) if moved.size else moved.reshape((0, moved.shape[-1]))
    out = np.empty(flat.shape, dtype=object if xa.dtype == object else np.float64)
    for i in range(flat.shape[0]):
        out[i] = _cumsum_row(flat[i], bool(exclusive), bool(reverse))
    res = np.moveaxis(out.reshape(moved.shape), -1, a)
    t = ctx.out_types.get("y")
    if t is not None and V.kind(t) == V.INT and res.size:
        lo, hi = _int_bounds(t)
        if any(not lo <= int(v) <= hi for v in res.ravel()):
            raise ValueError("CumSum: an integer prefix sum outside the type (a data class produced an overflow)")
    return res


def _topk_order(vals: list, largest: bool) -> list[int]:
    """Indices of ``vals`` in the text's order: by value (descending for ``largest``), equal
    values (``-0 == +0`` included) by the lower index first."""
    return sorted(range(len(vals)), key=lambda i: ((-vals[i] if largest else vals[i]), i))


def topk(ctx, X, *k_in, axis=-1, k=None, largest=1, sorted=1, **attrs) -> tuple[np.ndarray, np.ndarray]:
    """TopK: the ``k`` largest (``largest=0``: smallest) elements along ``axis`` and their
    indices, ordered by value with ties broken by the lower index (the text), for every
    version (``k`` an attribute at 1, the ``K`` input from 10).  With ``sorted=0`` the order is
    undefined: the expected outputs are the sorted ones and the case is judged by
    :func:`check_topk_unsorted`.  Returns ``(Values, Indices)`` (exact values, Python ints).

    Raises:
        ValueError: ``axis`` out of range, ``k`` not in ``[1, axis length]``, a NaN (the text
            does not order it: never generated)."""
    xa = np.asarray(X)
    kk = int(np.ravel(np.asarray(k_in[0], dtype=object))[0]) if k_in and k_in[0] is not None else int(k)
    a = int(axis)
    if not -xa.ndim <= a < xa.ndim:
        raise ValueError(f"axis {a} outside [{-xa.ndim}, {xa.ndim - 1}]")
    a %= xa.ndim
    n = xa.shape[a]
    if not 1 <= kk <= n:
        raise ValueError(f"k = {kk} outside [1, {n}] (the axis length)")
    moved = np.moveaxis(xa, a, -1)
    flat = moved.reshape((-1, n))
    vals_out = np.empty((flat.shape[0], kk), dtype=object if xa.dtype == object else np.float64)
    idx_out = np.empty((flat.shape[0], kk), dtype=object)
    for i, r in enumerate(flat):
        vals = [int(v) for v in r] if xa.dtype == object else [float(v) for v in r]
        if any(isinstance(v, float) and math.isnan(v) for v in vals):
            raise ValueError("TopK of a NaN: the text does not order it; never generated")
        order = _topk_order(vals, bool(largest))[:kk]
        vals_out[i] = [vals[j] for j in order]
        idx_out[i] = order
    shape = moved.shape[:-1] + (kk,)
    return (np.moveaxis(vals_out.reshape(shape), -1, a), np.moveaxis(idx_out.reshape(shape), -1, a))


def check_topk_unsorted(inputs: dict, outputs: dict, attrs: dict) -> tuple[bool, str]:
    """Judge TopK with ``sorted=0`` ("order of returned 'Values' and 'Indices' are
    undefined"): the outputs' shapes and types, every ``Values`` element equal to ``X`` at its
    ``Indices`` element, and, per row, the set of indices equal to the text's top-k set (ties
    at the k-th place resolved by the lower index).  Returns ``(passed, message)``."""
    x = np.asarray(inputs["X"])
    k = int(np.ravel(inputs["K"])[0]) if "K" in inputs else int(attrs["k"])
    axis = int(attrs.get("axis", -1)) % x.ndim
    largest = int(attrs.get("largest", 1))
    vals, idx = np.asarray(outputs["Values"]), np.asarray(outputs["Indices"])
    want = tuple(k if d == axis else s for d, s in enumerate(x.shape))
    if vals.shape != want or idx.shape != want or idx.dtype != np.int64 or vals.dtype != x.dtype:
        return False, f"outputs {vals.dtype}{list(vals.shape)} / {idx.dtype}{list(idx.shape)}, expected " \
                      f"{x.dtype}{list(want)} / int64{list(want)}"
    xs = np.moveaxis(x, axis, -1)
    vs, js = np.moveaxis(vals, axis, -1), np.moveaxis(idx, axis, -1)
    for pos in np.ndindex(xs.shape[:-1]):
        row = [int(v) for v in xs[pos]] if x.dtype.kind in "iu" else [float(v) for v in xs[pos].astype(np.float64)]
        got = [int(j) for j in js[pos]]
        if any(not 0 <= j < len(row) for j in got):
            return False, f"an index outside the axis at {list(pos)}: {got}"
        if sorted(got) != sorted(_topk_order(row, bool(largest))[:k]):
            return False, f"indices {got} at {list(pos)} are not the top-{k} set"
        vrow = vs[pos]
        if any(not (vrow[q] == xs[pos][j] or (np.isnan(vrow[q]) and np.isnan(xs[pos][j]))) for q, j in enumerate(got)):
            return False, f"values at {list(pos)} do not match X at their indices"
    return True, "the top-k set, in an order the text leaves open (sorted=0)"


def _topk_check(ctx, inputs, attrs) -> str | None:
    return "conformance.ops.reduce_index:check_topk_unsorted" if int(attrs.get("sorted", 1)) == 0 else None


def _arg_row(fn: str, last: bool):
    def row(r):
        vals = [float(v) for v in r] if r.dtype != object else [int(v) for v in r]
        if any(isinstance(v, float) and math.isnan(v) for v in vals):
            raise ValueError("ArgMax/ArgMin of a NaN is not specified; never generated")
        best = max(vals) if fn == "max" else min(vals)
        idx = [i for i, v in enumerate(vals) if v == best]  # -0 == +0: a tie
        return idx[-1] if last else idx[0]

    return row


def _arg(fn: str):
    def oracle(ctx, data, **attrs):
        x = np.asarray(data)
        if x.ndim == 0:
            raise ValueError("ArgMax/ArgMin needs rank >= 1 (axis in [-r, r-1])")
        axis = int(attrs.get("axis", 0))
        if not -x.ndim <= axis < x.ndim:
            raise ValueError(f"axis {axis} outside [{-x.ndim}, {x.ndim - 1}]")
        red = (axis % x.ndim,)
        if x.shape[red[0]] == 0:
            raise ValueError("ArgMax/ArgMin over an empty axis has no index; never generated")
        return reduce_rows(x, red, attrs.get("keepdims", 1), _arg_row(fn, bool(attrs.get("select_last_index", 0))),
                           object)

    oracle.__name__ = oracle.__qualname__ = f"arg{fn}"
    oracle.__doc__ = (f"Arg{fn.capitalize()}: the index (int64, as Python ints) of the {fn}imum along ``axis``; "
                      "the first occurrence, the last with ``select_last_index`` (12).  Exact comparison of the "
                      "exact values (``-0 == +0``: a tie).\n\nRaises:\n    ValueError: rank 0, an axis out of "
                      "range, an empty axis or a NaN (never generated).")
    return oracle


argmax = _arg("max")
argmin = _arg("min")


def _has_ties(x: np.ndarray, axis: int, fn: str) -> bool:
    rows = to_rows(np.asarray(x), (axis % x.ndim,))
    flat = rows.reshape((-1, rows.shape[-1])) if rows.size else rows.reshape((0, 0))
    for r in flat:
        vals = np.array([int(v) for v in r], dtype=object) if r.dtype == object or r.dtype.kind in "iu" \
            else r.astype(np.float64)
        best = vals.max() if fn == "max" else vals.min()
        if int(np.sum(vals == best)) > 1:
            return True
    return False


def _judge_arg(fn: str, inputs: dict, outputs: dict, attrs: dict) -> tuple[bool, str]:
    x = np.asarray(inputs["data"])
    y = np.asarray(outputs["reduced"])
    axis = int(attrs.get("axis", 0)) % x.ndim
    keep = int(attrs.get("keepdims", 1))
    want_shape = tuple(1 if d == axis else n for d, n in enumerate(x.shape)) if keep else \
        tuple(n for d, n in enumerate(x.shape) if d != axis)
    if y.dtype != np.int64 or y.shape != want_shape:
        return False, f"output {y.dtype}{list(y.shape)}, expected int64{list(want_shape)}"
    xs = np.moveaxis(x.astype(np.float64) if x.dtype.kind == "f" or x.dtype.itemsize == 2 and x.dtype.kind not in "iu"
                     else x.astype(object), axis, -1)
    idx = y.reshape(xs.shape[:-1])
    for pos in np.ndindex(xs.shape[:-1]):
        row = xs[pos]
        k = int(idx[pos])
        if not 0 <= k < row.shape[0]:
            return False, f"index {k} at {list(pos)} outside the axis of size {row.shape[0]}"
        best = row.max() if fn == "max" else row.min()
        if row[k] != best:
            return False, f"index {k} at {list(pos)} holds {row[k]!r}, not the {fn}imum {best!r}"
    return True, f"every index holds a {fn}imum (ties: the version leaves the index open)"


def check_argmax(inputs: dict, outputs: dict, attrs: dict) -> tuple[bool, str]:
    """Judge an ArgMax result where the version does not say which of tied maxima is meant
    (versions 1 and 11: ``select_last_index`` arrives at 12): int64, the right shape, and
    every index pointing at a maximum of its row.  Returns ``(passed, message)``."""
    return _judge_arg("max", inputs, outputs, attrs)


def check_argmin(inputs: dict, outputs: dict, attrs: dict) -> tuple[bool, str]:
    """:func:`check_argmax` for ArgMin."""
    return _judge_arg("min", inputs, outputs, attrs)


def _arg_check(ctx, inputs, attrs) -> str | None:
    """Versions 1 and 11 with tied extremes: judged by :func:`check_argmax` / :func:`check_argmin`."""
    fn = "max" if ctx.op == "ArgMax" else "min"
    if ctx.version >= 12 or not _has_ties(np.asarray(inputs[0]), int(attrs.get("axis", 0)), fn):
        return None
    return f"conformance.ops.reduce_index:check_arg{fn}"


def cumsum_tolerance(ctx, inputs, attrs, outputs) -> dict:
    """CumSum: each output is a sum of up to ``n`` elements of its row (``n`` the axis length),
    which any order of any scan (sequential, Blelloch, blocked) evaluates within
    ``gamma_{n-1}(u') A_j``, ``A_j`` the sum of ``|x|`` over that output's elements (the
    inclusive prefix in the summing direction, which bounds the exclusive one); as
    :func:`sum_tolerance`::

        atol = max over finite outputs of gamma_{n-1}(u') (1 + u) A_j + 2 s,   rtol = 2.01 u
    """
    t = ctx.out_types["y"]
    if V.kind(t) != V.FLOAT:
        return {"y": Tolerance(0.0, 0.0, exact=True)}
    u, s, acc = units(t)
    x = np.asarray(inputs[0], dtype=np.float64)
    a = int(np.ravel(np.asarray(inputs[1], dtype=object))[0]) % max(x.ndim, 1)
    rows = np.moveaxis(x, a, -1)
    n = rows.shape[-1] if rows.ndim else 1
    out = np.moveaxis(np.asarray(outputs["y"], dtype=np.float64), a, -1)
    with np.errstate(all="ignore"):
        fin = np.where(np.isfinite(rows), np.abs(rows), 0.0)
        if int(attrs.get("reverse", 0)):  # the |x| an output sums: its prefix (inclusive bounds exclusive)
            prefix = np.cumsum(fin[..., ::-1], axis=-1)[..., ::-1]
        else:
            prefix = np.cumsum(fin, axis=-1)
        b = _gamma(n - 1, acc) * (1 + u) * prefix
        b = np.where(np.isfinite(out) & np.isfinite(b), b, 0.0)
    atol = float(b.max()) if b.size else 0.0
    return {"y": Tolerance(atol + 2 * s if n > 1 else 0.0, 2.01 * u,
                           variants=(f"bound:any scan order, accumulator u={acc:g}",))}


def _distinct_rows(draw: Callable, m: int, n: int, rng=None, tries: int = 20) -> np.ndarray:
    """Rows of ``n`` distinct values (no two equal, ``-0`` and ``+0`` counting as equal) from
    ``draw(k) -> k values``: ``4 n`` values drawn, duplicates dropped, ``n`` of them picked
    (ArgMax/ArgMin of versions 1 and 11 say nothing of ties).  Where the type has fewer values
    than ``n`` (an 8-bit integer row of 1000, which explore mode may draw), the row keeps ``n``
    of the draws, ties included: such cases are judged by :func:`check_argmax` /
    :func:`check_argmin` (:func:`_arg_check`), which accept any tied index."""
    rng = rng if rng is not None else np.random.default_rng(0)
    rows = np.empty((m, n), dtype=object)
    for i in range(m):
        for _ in range(tries):
            drawn = list(draw(4 * n + 4))
            uniq = list(dict.fromkeys(0.0 if v == 0 else v for v in drawn))
            if len(uniq) >= n:
                break
        else:
            uniq = drawn
        rows[i, :] = [uniq[int(j)] for j in rng.permutation(len(uniq))[:n]]
    return rows


def _arg_normal(rng, ctx, m, n):
    """Distinct uniform values in [-4, 4] per row."""
    t = _t(ctx)
    if ctx.version >= 12:
        return V.representable(rng.uniform(-4, 4, size=(m, n)), t)
    return _distinct_rows(lambda k: V.representable(rng.uniform(-4, 4, size=k), t).tolist(), m, n, rng
                          ).astype(np.float64)


def _arg_wide(rng, ctx, m, n):
    """Distinct log-uniform magnitudes over the type's range, random signs, per row."""
    t = _t(ctx)
    fi = V.finfo(t)
    lo, hi = math.log2(float(fi.smallest_normal)), math.log2(float(fi.max))

    def draw(k):
        return V.representable(rng.choice([-1.0, 1.0], size=k) * 2.0 ** rng.uniform(lo, hi, size=k), t).tolist()

    if ctx.version >= 12:
        return np.array(draw(m * n), dtype=np.float64).reshape((m, n))
    return _distinct_rows(draw, m, n, rng).astype(np.float64)


def _vector_inf_rows(rows: np.ndarray, ctx, t: str) -> np.ndarray:
    """``rows`` (m, n >= VECTOR_ROW) with ``+inf`` or ``-inf`` (one per row, alternating; which
    comes first rotates over the versions and types) at the reductions' vector positions: the
    first element, the block boundaries, the tail -- tied copies of the extreme (the first
    occurrence, or the last with ``select_last_index``; before 12 judged by the tie checks)."""
    rows = rows.copy()
    start = ctx.version + {"float": 1, "double": 2}.get(t, 0)
    n = rows.shape[1]
    for r in range(rows.shape[0]):
        kind = ("pinf", "ninf")[(start + r) % 2]
        for q in VECTOR_POSITIONS[kind]:
            rows[r, q % n] = math.inf if kind == "pinf" else -math.inf
    return V.representable(rows, t)


def _arg_special(rng, ctx, m, n):
    """Rows of the special values without NaN (its index is not specified): +-inf, +-fmax,
    +-the smallest normal and subnormal, +-1; at 12 and later also ties between -0 and +0
    (equal: the first, or with ``select_last_index`` the last, occurrence); distinct values
    at 1 and 11."""
    t = _t(ctx)
    if n >= VECTOR_ROW:  # vectorizable rows: ordinary values, infinities at the code paths
        return _vector_inf_rows(np.asarray(_arg_normal(rng, ctx, m, n), dtype=np.float64), ctx, t)
    fi = V.finfo(t)
    pool = [math.inf, -math.inf, float(fi.max), -float(fi.max), float(fi.smallest_normal),
            -float(fi.smallest_normal), float(fi.smallest_subnormal), -float(fi.smallest_subnormal), 1.0, -1.0, 0.0]
    if ctx.version >= 12:
        pool += [-0.0, 0.0, -0.0]
        rows = np.array([[pool[int(k)] for k in rng.integers(0, len(pool), size=n)] for _ in range(m)],
                        dtype=np.float64).reshape((m, n))
        return V.representable(rows, t)
    pool = V.representable(np.array(pool), t).tolist()
    return _distinct_rows(lambda k: pool + V.representable(rng.uniform(-4, 4, size=k), t).tolist(), m, n, rng
                          ).astype(np.float64)


def _arg_ties(rng, ctx, m, n):
    """Rows of few distinct small values, the extreme repeated at two or more positions
    (the first and the last occurrence differ)."""
    kind = V.kind(_t(ctx))
    rows = rng.integers(-2, 3, size=(m, n)).astype(np.float64)
    if kind == V.INT and _int_bounds(_t(ctx))[0] == 0:
        rows = rows + 2
    for i in range(m):
        if n > 1:
            pos = rng.permutation(n)[:2]
            hi_v, lo_v = rows[i].max(), rows[i].min()
            extreme = hi_v if rng.random() < 0.5 else lo_v
            rows[i, pos] = extreme
    if kind == V.INT:
        return _objs(rows.astype(np.int64), (m, n))
    return rows


def _arg_ints(rng, ctx, m, n):
    """Distinct integers of the type per row, the extremes among them."""
    lo, hi = _int_bounds(_t(ctx))

    def draw(k):
        vals = [int(v) for v in rng.integers(lo, hi, size=k, endpoint=True, dtype=np.int64 if lo < 0 else np.uint64)]
        ext = [lo, hi, 0, 1] if k > 1 else []
        for j, e in zip(rng.permutation(k)[:2], ext[int(rng.integers(0, 3)):]):
            vals[int(j)] = e
        return vals

    if ctx.version >= 12:
        return _objs(draw(m * n), (m, n))
    return _distinct_rows(draw, m, n, rng)


def _arg_int_extremes(rng, ctx, m, n):
    """Rows holding the type's minimum and maximum (twice each at 12 and later: ties)."""
    lo, hi = _int_bounds(_t(ctx))
    rows = np.empty((m, n), dtype=object)
    for i in range(m):
        if ctx.version >= 12:
            r = [[lo, hi, lo + 1, hi - 1][int(k)] for k in rng.integers(0, 4, size=n)]
        else:
            base = [lo, hi, lo + 1, hi - 1, 0] + [int(v) for v in rng.permutation(np.arange(2, 2 + n))]
            r = list(dict.fromkeys(v for v in base if lo <= v <= hi))[:n]
            if len(r) < n:  # a row longer than the type has values (explore mode): ties, judged by the checks
                r += [int(v) for v in rng.integers(lo, hi, size=n - len(r), endpoint=True)]
            r = [r[int(j)] for j in rng.permutation(n)]
        rows[i, :] = r
    return rows


# ---------------------------------------------------------------------------- integer classes


def arg_shapes() -> tuple[Shape, ...]:
    """ArgMax/ArgMin: every axis of ranks 1-4 (negative from 11), the attribute omitted (axis
    0), a size-1 axis, a zero-size input whose reduced axis is not empty (not at 11: "The input
    tensor must not be empty"), a long row."""
    out: list[Shape] = []

    def add(name, tmpl, axis, since=0, until=10**6, dims=None, numerics=()):
        d = dims or {c: _DIMS[len(tmpl)] for c in tmpl if c.isalpha()}
        out.append(Shape(name, {"data": tmpl}, {} if axis is None else {"axis": axis}, since, until, d, numerics))

    add("r2/axis=-1", "SM", -1, since=11)
    add("r3/axis=1", "SMK", 1)
    add("r2/axis=default", "SM", None)
    add("r1/axis=0", "S", 0)
    add("r3/axis=-2", "SMK", -2, since=11)
    add("r2/axis=1", "SM", 1)
    add("r4/axis=3", "SMKN", 3)
    add("r1/axis=-1", "S", -1, since=11)
    add("r3/axis=2", "SMK", 2)
    add("r3/axis=0", "SMK", 0)
    add("r4/axis=-4", "SMKN", -4, since=11)
    add("size1/axis=1", "S1K", 1)
    add("zero-size/kept", "S0K", 2, until=10)
    add("zero-size/kept", "S0K", 2, since=12)
    add("long/axis=1", "2L", 1, dims={"L": (1000, 1000)})
    # vectorizable rows of tied infinities: from 12, where ties are defined (select_last_index)
    add("vector/4x67/axis=1", "4L", 1, since=12, dims={"L": (67, 67)}, numerics=("special",))
    return tuple(out)


def _arg_entry(op: str, fn) -> Entry:
    shapes = arg_shapes()
    errors = tuple(Err(f"axis {a} outside [{lo}, 1] for rank 2", f"axis={a}", {"axis": a}, ((2, 3),), since, until)
                   for a, lo, since, until in ((2, 0, 0, 10**6), (-3, -2, 11, 10**6)))
    errors += (Err(f"{op} over an empty axis: no index exists (ArgMax-11: 'The input tensor must not be empty')",
                   "empty-axis", {"axis": 1}, ((2, 0),)),)
    return Entry(op, fn, family="shaped", shapes=shapes, tolerance=exact_tolerance, check=_arg_check,
                 attrs=(Attrs({"keepdims": 0}, tag="keepdims=0"),
                        Attrs({"select_last_index": 1}, since=12, tag="last"),
                        Attrs({"select_last_index": 1, "keepdims": 0}, since=12, tag="last,keepdims=0")),
                 per_type=sweep(shapes, ints=5), errors=errors, nan=False,
                 float_numerics={"normal": _rowwise(_arg_normal), "wide": _rowwise(_arg_wide),
                                 "special": _rowwise(_arg_special), "ties": _rowwise(_arg_ties)},
                 int_numerics={"int": _rowwise(_arg_ints), "int-extremes": _rowwise(_arg_int_extremes),
                               "ties": _rowwise(_arg_ties)},
                 notes={11: "negative axis; 'The input tensor must not be empty'",
                        12: "select_last_index (ties: first occurrence, or the last); before 12 the text does not "
                            "say which of tied extremes: such cases are judged by check_arg*",
                        13: "bfloat16"})


def cumsum_shapes() -> tuple[Shape, ...]:
    """CumSum: ranks 1-4 with every kind of axis (first, middle, last, negative), the axis a
    0-D tensor; a one-element 1-D axis (contested); size-1 and zero-size axes; long rows."""
    out: list[Shape] = []

    def add(name, tmpl, axis, one=False, dims=None, numerics=()):
        d = dims or {c: _DIMS[len(tmpl)] for c in tmpl if c.isalpha()}
        out.append(Shape(name, {"x": tmpl, "axis": "1" if one else ""}, {}, dims=d, numerics=numerics,
                         values={"axis": [axis] if one else axis}))

    add("r2/axis=1", "SM", 1)
    add("r3/axis=-2", "SMK", -2)
    add("r1/axis=0", "S", 0)
    add("r2/axis=-1", "SM", -1)
    add("r2/axis=0", "SM", 0)
    add("r3/axis=2", "SMK", 2)
    add("r3/axis=0", "SMK", 0)
    add("r4/axis=3", "SMKN", 3)
    add("r4/axis=-4", "SMKN", -4)
    add("r1/axis=-1", "S", -1)
    add("size1/axis=1", "S1K", 1)
    add("zero-size/axis=1", "S0K", 1)
    add("zero-size/axis=2", "S0K", 2)
    add("r2/axis=[1]", "SM", 1, one=True)
    add("r3/axis=[-1]", "SMK", -1, one=True)
    add("long/axis=1", "2L", 1, dims={"L": (4096, 4096)}, numerics=("normal", "cancel", "ones"))
    add("vector/4x67/axis=1", "4L", 1, dims={"L": (67, 67)}, numerics=("special",))
    return tuple(out)


#: The invalid models of the scans (CumSum, CumProd): their ``axis`` input is the same.
_SCAN_ERRORS = (
    Err("axis 2 outside [-2, 1] for rank 2 ('Must be in the range [-rank(x), rank(x)-1]')", "axis=2", {},
        ((2, 3), ()), values={"axis": 2}),
    Err("axis -3 outside [-2, 1] for rank 2", "axis=-3", {}, ((2, 3), ()), values={"axis": -3}),
    Err("axis must be int32 or int64 (T2)", "axis-float", {}, ((2, 3), ()), types={"axis": "float"},
        values={"axis": 1.0}),
    Err("axis must be a 0-D tensor, not two values", "axis-2-values", {}, ((2, 3), (2,)), values={"axis": [0, 1]}))
#: The scans' attribute states beyond the defaults.
_SCAN_ATTRS = (Attrs({"exclusive": 1}, tag="exclusive"), Attrs({"reverse": 1}, tag="reverse"),
               Attrs({"exclusive": 1, "reverse": 1}, tag="exclusive,reverse"))


def _cumsum_contested(ctx, attrs) -> str | None:
    """A one-element 1-D ``axis``: the text says "A 0-D tensor"; onnx's checker, onnxruntime and
    numpy-style readers accept it, onnx.reference refuses it."""
    if ctx.shapes.get("axis") not in (None, ()):
        return ("CumSum's axis given as a one-element 1-D tensor: the text says 'A 0-D tensor'; onnx.checker "
                "accepts the model and onnxruntime reads the one element, onnx.reference refuses it")
    return None


def _cumsum_entry() -> Entry:
    shapes = cumsum_shapes()
    return Entry("CumSum", cumsum, family="shaped", shapes=shapes, tolerance=cumsum_tolerance,
                 attrs=_SCAN_ATTRS,
                 per_type=sweep(shapes, ints=4, floats=12), errors=_SCAN_ERRORS, contested=_cumsum_contested,
                 float_numerics={"wide": _elementwise(_wide), "special": _rowwise(_sum_special),
                                 "cancel": _rowwise(_cancel), "ones": _rowwise(_ones)},
                 int_numerics={"int": _elementwise(_sum_ints), "int-extremes": _rowwise(_sum_int_extremes)},
                 notes={14: "float16, bfloat16"})


def _cumprod_row(r, exclusive: bool, reverse: bool):
    """Exact (inclusive or exclusive, forward or reverse) prefix products of one row: Python
    ints, or floats correctly rounded from the exact rational products (IEEE rules: NaN if a
    NaN or both an infinity and a zero were seen, else an infinity or a zero with the product
    of the signs); the exclusive first element is the empty product 1."""
    vals = list(r[::-1]) if reverse else list(r)
    out: list = []
    if r.dtype == object:
        acc = 1
        for v in vals:
            out.append(acc if exclusive else acc * int(v))
            acc *= int(v)
    else:
        acc, neg, nan, inf, zero = Fraction(1), False, False, False, False
        for v in vals:
            v = float(v)
            if exclusive:
                out.append(_prod_value(acc, neg, nan, inf, zero))
            nan = nan or math.isnan(v)
            neg ^= math.copysign(1.0, v) < 0
            inf = inf or math.isinf(v)
            zero = zero or v == 0
            if math.isfinite(v) and v != 0:
                acc *= Fraction(abs(v))
            if not exclusive:
                out.append(_prod_value(acc, neg, nan, inf, zero))
    out = out[::-1] if reverse else out
    res = np.empty(len(vals), dtype=object if r.dtype == object else np.float64)
    res[:] = out
    return res


def _prod_value(acc: Fraction, neg: bool, nan: bool, inf: bool, zero: bool) -> float:
    if nan or (inf and zero):
        return math.nan
    sign = -1.0 if neg else 1.0
    if inf:
        return sign * math.inf
    if zero:
        return sign * 0.0
    return sign * _to_float(acc)


def cumprod(ctx, x, axis, exclusive=0, reverse=0, **attrs) -> np.ndarray:
    """CumProd-26: the exact cumulative products of ``x`` along ``axis`` (a 0-D int32/int64
    tensor; a one-element 1-D one is read the same way, contested as for CumSum);
    ``exclusive``: the j-th output is the product of the first ``j - 1`` elements (the first
    one 1); ``reverse``: multiplied from the end.  Returns an array of ``x``'s shape (float64
    for floating types, Python ints otherwise).

    Raises:
        ValueError: ``axis`` out of ``[-r, r-1]``, or an integer prefix product outside the
            type (the text does not define overflow; no data class produces one)."""
    xa = np.asarray(x)
    a = int(np.ravel(np.asarray(axis, dtype=object))[0])
    if not -xa.ndim <= a < xa.ndim:
        raise ValueError(f"axis {a} outside [{-xa.ndim}, {xa.ndim - 1}]")
    a %= xa.ndim
    moved = np.moveaxis(xa, a, -1)
    flat = moved.reshape((-1, moved.shape[-1])) if moved.size else moved.reshape((0, moved.shape[-1]))
    out = np.empty(flat.shape, dtype=object if xa.dtype == object else np.float64)
    for i in range(flat.shape[0]):
        out[i] = _cumprod_row(flat[i], bool(exclusive), bool(reverse))
    res = np.moveaxis(out.reshape(moved.shape), -1, a)
    t = ctx.out_types.get("y")
    if t is not None and V.kind(t) == V.INT and res.size:
        lo, hi = _int_bounds(t)
        if any(not lo <= int(v) <= hi for v in res.ravel()):
            raise ValueError("CumProd: an integer prefix product outside the type (a data class produced an overflow)")
    return res


def cumprod_tolerance(ctx, inputs, attrs, outputs) -> dict:
    """CumProd: each output is a product of at most ``n - 1`` multiplications (``n`` the axis
    length), in any order of any scan, at the accumulator's ``u'`` (float32 for 16-bit types),
    none of whose partial products leaves the accumulator's normal range (the data classes see
    to it), then rounded to T: the error is relative (Higham §3.1, as ReduceProd)::

        atol = 2 s,   rtol = gamma_{n-1}(u') (1 + u) + 2.01 u
    """
    t = ctx.out_types["y"]
    if V.kind(t) != V.FLOAT:
        return {"y": Tolerance(0.0, 0.0, exact=True)}
    u, s, acc = units(t)
    x = np.asarray(inputs[0])
    a = int(np.ravel(np.asarray(inputs[1], dtype=object))[0]) % max(x.ndim, 1)
    n = x.shape[a] if x.ndim else 1
    return {"y": Tolerance(2 * s, _gamma(n - 1, acc) * (1 + u) + 2.01 * u,
                           variants=(f"bound:any scan order, accumulator u={acc:g}",))}


def _cumprod_wide(rng, ctx, m, n):
    """Factors ``2^[-w, w]`` with ``w = min(4, emax / (4 n))``, products within
    ``2^(+-emax/4)``: every prefix of every order inside ``2^(emax/2)``, finite in T."""
    emax = math.log2(float(V.finfo(_t(ctx)).max))
    return _prod_rows(rng, ctx, m, n, min(4.0, 0.25 * emax / max(n, 1)), 0.25 * emax)


def _cumprod_near_one(rng, ctx, m, n):
    """Long rows: factors ``2^[-w, w]`` with ``w = min(0.5, 4 / n)``, products within
    ``2^(+-4)``: every prefix inside ``2^11`` (float16's range), the relative error of a
    long scan accumulates over the whole row."""
    return _prod_rows(rng, ctx, m, n, min(0.5, 4.0 / max(n, 1)), 4.0)


def cumprod_shapes() -> tuple[Shape, ...]:
    """CumProd: CumSum's table (:func:`cumsum_shapes`) with long rows of 256 near-one factors
    (4096 would leave every type's range) and the vectorizable special rows."""
    out = []
    for sh in cumsum_shapes():
        if sh.name.startswith("long/"):
            sh = Shape("long/axis=1", sh.inputs, {}, dims={"L": (256, 256)}, numerics=("near-one",),
                       values=sh.values)
        out.append(sh)
    return tuple(out)


def _cumprod_contested(ctx, attrs) -> str | None:
    """A one-element 1-D ``axis`` (as :func:`_cumsum_contested`)."""
    if ctx.shapes.get("axis") not in (None, ()):
        return ("CumProd's axis given as a one-element 1-D tensor: the text says 'A 0-D tensor'; onnx.checker "
                "accepts the model")
    return None


def _cumprod_entry() -> Entry:
    shapes = cumprod_shapes()
    return Entry("CumProd", cumprod, family="shaped", shapes=shapes, tolerance=cumprod_tolerance,
                 attrs=_SCAN_ATTRS,
                 per_type=sweep(shapes, ints=6), errors=_SCAN_ERRORS, contested=_cumprod_contested,
                 float_numerics={"normal": _rowwise(_prod_normal), "wide": _rowwise(_cumprod_wide),
                                 "special": _rowwise(_prod_special), "near-one": _rowwise(_cumprod_near_one)},
                 numerics_classes=lambda t: (("normal", "wide", "special", "near-one") if V.kind(t) == V.FLOAT
                                             else ("int", "int-extremes")),
                 int_numerics={"int": _rowwise(_prod_ints), "int-extremes": _rowwise(_prod_int_extremes)})


def topk_shapes() -> tuple[Shape, ...]:
    """TopK: ranks 1-4, ``k`` of 1, a few and the whole axis (the axis length drawn at least
    ``k``), the axis omitted (-1), negative axes from 11, a size-1 axis, a zero-size input whose
    axis is not empty, a long axis; ``k`` the attribute at 1, the ``K`` input (``[k]``) from 10."""
    out: list[Shape] = []

    def add(name, tmpl, axis, k, dims=None, since=0, numerics=()):
        d = {c: _DIMS[len(tmpl)] for c in tmpl if c.isalpha()}
        d.update(dims or {})
        attrs = {} if axis is None else {"axis": axis}
        if since < 10:
            out.append(Shape(name + "/attr", {"X": tmpl}, {**attrs, "k": k}, since, 9, d, numerics))
        out.append(Shape(name, {"X": tmpl, "K": "1"}, attrs, max(since, 10), 10**6, d, numerics, values={"K": [k]}))

    add("r2/axis=default/k=2", "SL", None, 2, {"L": (2, 8)})
    add("r2/axis=0/k=2", "LS", 0, 2, {"L": (2, 6)})
    add("r3/axis=1/k=2", "SLK", 1, 2, {"L": (2, 5)})
    add("r1/k=1", "L", 0, 1, {"L": (1, 12)})
    add("r1/k=all", "5", -1, 5)
    add("r2/axis=-2/k=3", "LS", -2, 3, {"L": (3, 6)}, since=11)
    add("r3/axis=-1/k=all", "SM4", -1, 4)
    add("r4/axis=2/k=3", "SMLK", 2, 3, {"L": (3, 4)})
    add("r3/axis=-3/k=1", "LMK", -3, 1, since=11)
    add("size1/k=1", "S1", -1, 1)
    add("zero-size/k=1", "0L", -1, 1, {"L": (1, 4)})
    add("long/k=10", "2L", -1, 10, {"L": (1000, 1000)}, numerics=("normal", "ties"))
    add("vector/k=3", "4L", -1, 3, {"L": (67, 67)}, numerics=("special",))
    return tuple(out)


def _topk_normal(rng, ctx, shapes):
    x = V.representable(rng.uniform(-4, 4, size=shapes[0]), _t(ctx))
    return [x] + [np.zeros(s, dtype=object) for s in shapes[1:]]


def _topk_ties(rng, ctx, shapes):
    """Few distinct small values: ties everywhere, also across the k-th place (the lower index
    wins); signed zeros among the floats (``-0 == +0``)."""
    kind = V.kind(_t(ctx))
    lo = 0 if kind == V.INT and _int_bounds(_t(ctx))[0] == 0 else -2
    x = rng.integers(lo, lo + 4, size=shapes[0]).astype(np.float64)
    if kind == V.INT:
        return [_objs(x.astype(np.int64), shapes[0])] + [np.zeros(s, dtype=object) for s in shapes[1:]]
    x = np.where(x == 0, rng.choice([0.0, -0.0], size=x.shape), x)
    return [x] + [np.zeros(s, dtype=object) for s in shapes[1:]]


def _topk_special(rng, ctx, shapes):
    """The special values without NaN (the text does not order it): +-inf, +-fmax, +-the
    smallest normal and subnormal, signed zeros, +-1."""
    fi = V.finfo(_t(ctx))
    pool = np.array([math.inf, -math.inf, float(fi.max), -float(fi.max), float(fi.smallest_normal),
                     -float(fi.smallest_normal), float(fi.smallest_subnormal), -float(fi.smallest_subnormal), 0.0,
                     -0.0, 1.0, -1.0])
    x = V.representable(rng.choice(pool, size=shapes[0]), _t(ctx))
    if x.ndim == 2 and x.shape[1] >= VECTOR_ROW:  # vectorizable rows: infinities at the code paths
        x = _vector_inf_rows(V.representable(rng.uniform(-4, 4, size=x.shape), _t(ctx)), ctx, _t(ctx))
    return [x] + [np.zeros(s, dtype=object) for s in shapes[1:]]


def _topk_entry() -> Entry:
    shapes = topk_shapes()
    errors = (Err("k = 5 exceeds the axis length 3", "k>n/attr", {"k": 5, "axis": 1}, ((2, 3),), until=9),
              Err("k = 5 exceeds the axis length 3", "k>n", {"axis": 1}, ((2, 3), (1,)), since=10, values={"K": [5]}),
              Err("K must hold a positive value", "k=-1", {"axis": 1}, ((2, 3), (1,)), since=10, values={"K": [-1]}),
              Err("K must hold a single value (a 1-D tensor of one element)", "K-two-values", {"axis": 1},
                  ((2, 3), (2,)), since=10, values={"K": [1, 2]}),
              Err("axis 2 outside [-2, 1] for rank 2", "axis=2", {"axis": 2}, ((2, 3), (1,)), since=10,
                  values={"K": [1]}),
              Err("axis -3 outside [-2, 1] for rank 2", "axis=-3", {"axis": -3}, ((2, 3), (1,)), since=11,
                  values={"K": [1]}))
    return Entry("TopK", topk, family="shaped", shapes=shapes, tolerance=exact_tolerance, check=_topk_check,
                 # version 1's required k (every pattern writes its own over it)
                 attrs=(Attrs({"k": 1}, tag="k"), Attrs({"k": 1, "axis": -1}, tag="k,axis=-1"),
                        Attrs({"largest": 0}, since=11, tag="smallest"), Attrs({"sorted": 0}, since=11, tag="unsorted"),
                        Attrs({"largest": 0, "sorted": 0}, since=11, tag="smallest,unsorted")),
                 per_type=sweep(shapes, ints=4, floats=12), errors=errors, nan=False,
                 float_numerics={"normal": _topk_normal, "ties": _topk_ties, "special": _topk_special},
                 int_numerics={"ties": _topk_ties},
                 notes={10: "k as the K input", 11: "largest, sorted (sorted=0: order undefined); negative axes; "
                        "integer types", 24: "bfloat16"})


ENTRIES = (_arg_entry("ArgMax", argmax), _arg_entry("ArgMin", argmin), _cumsum_entry(), _cumprod_entry(),
           _topk_entry())
register_entries(ENTRIES, family="reduce")
