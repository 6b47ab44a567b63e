"""Float64-or-exact oracles and derived tolerances of the reductions (ReduceSum, ReduceMean,
ReduceMax, ReduceMin, ReduceProd, ReduceL1, ReduceL2, ReduceLogSum, ReduceLogSumExp,
ReduceSumSquare), and the axes/rows helpers they share with the index and scan operators.

The decisions these follow (axes, empty reductions, NaN, the legitimacy rule behind each
tolerance: Higham, *Accuracy and Stability of Numerical Algorithms*, 2nd ed., §3.1 and §4.2)
are stated in :mod:`conformance.ops.reduce`, whose entries use them.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from fractions import Fraction
from typing import TYPE_CHECKING

import numpy as np

from ..opspec import op_spec
from ..tolerance import Tolerance, budget_rel, budget_ulps
from ..ops import values as V

if TYPE_CHECKING:
    from ..ops.entry import Ctx

# ============================================================================ axes and rows


def axes_input_since(op: str) -> int | None:
    """The first version of ``op`` whose ``axes`` is an input (schema), or ``None``."""
    spec = op_spec(op)
    return next((v for v in spec.since_versions if any(f.name == "axes" for f in spec.versions[v].inputs)), None)


def reduced_axes(attrs, axes_in, ndim: int) -> tuple[int, ...]:
    """The reduced dimensions, sorted and non-negative, for a Reduce* node.

    Args:
        attrs: the node's attributes with the schema defaults filled in (an ``axes``
            attribute at the attribute versions; ``noop_with_empty_axes`` at the input ones,
            whose presence says which kind of version this is).
        axes_in: the ``axes`` input (``None`` when absent, or at the attribute versions).
        ndim: rank of the data.

    Returns ``()`` for ``noop_with_empty_axes`` with empty or absent axes (no reduction).

    Raises:
        ValueError: an axis outside ``[-ndim, ndim - 1]``.
    """
    if "noop_with_empty_axes" in attrs:
        ax = [] if axes_in is None else [int(a) for a in np.ravel(np.asarray(axes_in, dtype=object))]
        if not ax:
            return () if int(attrs["noop_with_empty_axes"]) else tuple(range(ndim))
    else:
        ax = attrs.get("axes")
        if ax is None:
            return tuple(range(ndim))
        ax = [int(a) for a in ax]
    for a in ax:
        if not -ndim <= a < ndim:
            raise ValueError(f"axis {a} outside [{-ndim}, {ndim - 1}]")
    return tuple(sorted({a % ndim for a in ax}))


def to_rows(x: np.ndarray, red: tuple[int, ...]) -> np.ndarray:
    """``x`` with the kept dimensions first (in order) and the reduced ones flattened last:
    shape ``kept_dims + (n,)``, ``n`` the size of the reduced set (1 when ``red`` is empty)."""
    keep = [d for d in range(x.ndim) if d not in red]
    outer = tuple(x.shape[d] for d in keep)
    n = int(np.prod([x.shape[d] for d in red], dtype=np.int64))
    return np.transpose(x, keep + list(red)).reshape(outer + (n,))


def from_rows(rows: np.ndarray, shape: tuple[int, ...], red: tuple[int, ...]) -> np.ndarray:
    """The inverse of :func:`to_rows`: rows ``kept_dims + (n,)`` back to ``shape``."""
    keep = [d for d in range(len(shape)) if d not in red]
    perm = keep + list(red)
    t = np.asarray(rows).reshape(tuple(shape[d] for d in perm))
    return np.transpose(t, np.argsort(perm))


def reduce_rows(x: np.ndarray, red: tuple[int, ...], keepdims: int, row_fn: Callable, dtype) -> np.ndarray:
    """``row_fn`` applied to every reduced set of ``x`` (a 1-D array each), as an array of
    ``dtype``: shape ``x.shape`` with the reduced dims 1 (``keepdims``) or removed."""
    rows = to_rows(np.asarray(x), red)
    outer, n = rows.shape[:-1], rows.shape[-1]
    flat = rows.reshape((int(np.prod(outer, dtype=np.int64)), n))
    out = np.empty(flat.shape[0], dtype=dtype)
    for i in range(flat.shape[0]):
        out[i] = row_fn(flat[i])
    out = out.reshape(outer)
    if keepdims:
        out = out.reshape(tuple(1 if d in red else s for d, s in enumerate(np.shape(x))))
    return out


def _axes_of_ctx(ctx: Ctx, ndim: int) -> tuple[int, ...]:
    """The reduced dims of a case being drawn: ArgMax/ArgMin/TopK's ``axis`` attribute, CumSum's
    ``axis`` input, a Reduce*'s ``axes`` (the pattern's value, :attr:`Ctx.values`)."""
    if "axis" in ctx.attrs or "axis" in ctx.values:
        a = int(np.ravel(np.asarray(ctx.values["axis"], dtype=object))[0]) if "axis" in ctx.values \
            else int(ctx.attrs["axis"])
        return (a % ndim,) if ndim else ()
    axes_in = ctx.values.get("axes") if "axes" in ctx.types else None
    return reduced_axes(ctx.attrs, axes_in, ndim)


# ============================================================================ exact row functions


def _to_float(q: Fraction) -> float:
    try:
        return float(q)  # correctly rounded
    except OverflowError:
        return math.inf if q > 0 else -math.inf


def dyadic_sum(vals, power: int = 1) -> Fraction:
    """The exact sum of finite floats (``power=2``: of their squares) as a Fraction, by
    integer arithmetic over one power-of-two denominator (every float is ``p / 2^k``)."""
    ratios = [float(v).as_integer_ratio() for v in vals]
    if not ratios:
        return Fraction(0)
    den = max(q for _, q in ratios) ** power
    return Fraction(sum(p ** power * (den // q ** power) for p, q in ratios), den)


def _specials(vals) -> float | None:
    """IEEE result of a sum with NaN or infinities (``None`` if all finite)."""
    if any(math.isnan(v) for v in vals):
        return math.nan
    infs = {v for v in vals if math.isinf(v)}
    if len(infs) == 2:
        return math.nan
    return next(iter(infs)) if infs else None


def exact_sum(vals) -> float:
    """The exact sum of float values, correctly rounded to float64 (IEEE rules for NaN and
    infinities; an empty sum is 0)."""
    vals = [float(v) for v in vals]
    sp = _specials(vals)
    if sp is not None:
        return sp
    try:
        return math.fsum(vals)
    except OverflowError:
        return _to_float(dyadic_sum(vals))


def exact_row_sums(v: np.ndarray) -> np.ndarray:
    """:func:`exact_sum` of each row (the last axis) of a float64 array: float64, ``v``'s shape
    without its last axis.  No summation order, numpy's or another's, so the same bits on every
    machine (docs/running.md, "Bytes across machines")."""
    v = np.asarray(v, dtype=np.float64)
    flat = v.reshape(int(np.prod(v.shape[:-1])), v.shape[-1])
    out = np.empty(flat.shape[0])
    for i, (row, finite) in enumerate(zip(flat.tolist(), np.isfinite(flat).all(axis=1).tolist())):
        if finite:
            try:
                out[i] = math.fsum(row)
                continue
            except OverflowError:  # an intermediate beyond double's range: exact_sum's exact path
                pass
        out[i] = exact_sum(row)
    return out.reshape(v.shape[:-1])


def _sum_row(r):
    if r.dtype == object:
        return sum((int(v) for v in r), 0)
    return exact_sum(r)


# ============================================================================ oracles


def _out_dtype(x):
    return object if x.dtype == object else (np.bool_ if x.dtype == np.bool_ else np.float64)


def _check_int_range(ctx: Ctx, out: np.ndarray) -> np.ndarray:
    """Integer results must fit the type (overflow is undefined and never generated)."""
    t = ctx.out_types.get("reduced")
    if t is not None and V.kind(t) == V.INT and out.size:
        info = V.iinfo(t)
        if any(not info.min <= int(v) <= info.max for v in out.ravel()):
            raise ValueError(f"{ctx.op}: an integer result outside {t} (a data class produced an overflow)")
    return out


def _reduce_oracle(row_fn: Callable):
    # the axes input comes positionally (the attribute versions pass an ``axes`` keyword)
    def oracle(ctx, data, *axes_in, **attrs):
        x = np.asarray(data)
        red = reduced_axes(attrs, axes_in[0] if axes_in else None, x.ndim)
        return _check_int_range(ctx, reduce_rows(x, red, attrs.get("keepdims", 1), row_fn, _out_dtype(x)))

    return oracle


def reduce_sum(ctx, data, *axes_in, **attrs) -> np.ndarray:
    """ReduceSum: the exact sum of every reduced set (float64, correctly rounded; Python ints).

    ``axes_in``: the ``axes`` input where the version has one (``None`` when absent); the
    attribute versions pass ``axes`` among ``attrs``.  Returns the reduced array (shape by
    ``keepdims``; the input's shape under ``noop_with_empty_axes``).

    Raises:
        ValueError: an axis out of range, or an integer sum outside the type."""
    return _reduce_oracle(_sum_row)(ctx, data, *axes_in, **attrs)


def _mean_row(r):
    n = r.size
    if n == 0:
        raise ValueError("ReduceMean of an empty set is undefined (the text); never generated")
    if r.dtype == object:
        total = sum(int(v) for v in r)
        if total % n:
            raise ValueError("an integer mean that is not an integer: its rounding is not specified; never generated")
        return total // n
    vals = [float(v) for v in r]
    sp = _specials(vals)
    if sp is not None:
        return sp
    return _to_float(dyadic_sum(vals) / n)


def reduce_mean(ctx, data, *axes_in, **attrs) -> np.ndarray:
    """ReduceMean: the exact mean of every reduced set (the exact sum over ``n``, correctly
    rounded to float64; for integers an exact integer).  ``axes_in`` as :func:`reduce_sum`.

    Raises:
        ValueError: an empty reduced set ("yields undefined"), or an integer mean that is not
            an integer (the text does not say how it is rounded): data classes never make one."""
    return _reduce_oracle(_mean_row)(ctx, data, *axes_in, **attrs)


def _l1_row(r):
    if r.dtype == object:
        return sum((abs(int(v)) for v in r), 0)
    return exact_sum(np.abs(r.astype(np.float64)))


def _sum_square_exact(r) -> Fraction | float:
    """The exact sum of squares (a Fraction), or the IEEE result for NaN / infinities."""
    vals = [float(v) for v in r]
    if any(math.isnan(v) for v in vals):
        return math.nan
    if any(math.isinf(v) for v in vals):
        return math.inf
    return dyadic_sum(vals, 2)


def _sum_square_row(r):
    if r.dtype == object:
        return sum((int(v) ** 2 for v in r), 0)
    q = _sum_square_exact(r)
    return q if isinstance(q, float) else _to_float(q)


def _l2_row(r):
    if r.dtype == object:
        q = sum((int(v) ** 2 for v in r), 0)
        root = math.isqrt(q)
        if root * root != q:
            raise ValueError("an integer L2 norm that is not an integer: its rounding is not specified; never "
                             "generated")
        return root
    q = _sum_square_exact(r)
    if isinstance(q, float):
        return q
    return exact_sqrt(q)


def exact_sqrt(q: Fraction) -> float:
    """``sqrt(q)`` correctly rounded to float64 (integer square root of the scaled value;
    ties are impossible for a square root of a rational with a finite binary expansion)."""
    if q == 0:
        return 0.0
    # scale q by 4^k so the integer part has >= 2 * 60 bits, then isqrt gives 60+ correct bits
    k = max(0, (240 - (q.numerator.bit_length() - q.denominator.bit_length())) // 2 + 1)
    scaled = q * (Fraction(4) ** k)
    root = math.isqrt(scaled.numerator // scaled.denominator)
    exact_root = root * root * scaled.denominator == scaled.numerator
    # root <= sqrt(scaled) < root + 1; the sticky bit breaks any rounding tie towards the true value
    val = Fraction(2 * root + (0 if exact_root else 1), 2) / (Fraction(2) ** k)
    return _to_float(val)


def _prod_row(r):
    if r.dtype == object:
        p = 1
        for v in r:
            p *= int(v)
        return p
    vals = [float(v) for v in r]
    if any(math.isnan(v) for v in vals):
        return math.nan
    sign = -1.0 if sum(1 for v in vals if math.copysign(1.0, v) < 0) % 2 else 1.0
    if any(math.isinf(v) for v in vals):
        return math.nan if any(v == 0 for v in vals) else sign * math.inf
    if any(v == 0 for v in vals):
        return sign * 0.0
    q = Fraction(1)
    for v in vals:
        q *= Fraction(v)
    return _to_float(q)


def reduce_prod(ctx, data, *axes_in, **attrs) -> np.ndarray:
    """ReduceProd: the exact product of every reduced set (IEEE rules: NaN, ``0 * inf`` is NaN,
    the sign of infinities); the empty set gives 1.  ``axes_in`` as :func:`reduce_sum`.

    Raises:
        ValueError: an axis out of range, or an integer product outside the type."""
    return _reduce_oracle(_prod_row)(ctx, data, *axes_in, **attrs)


def _mp():
    import mpmath

    return mpmath


def _mp_to_float(y) -> float:
    mp = _mp()
    if mp.isnan(y):
        return math.nan
    if mp.isinf(y):
        return math.inf if y > 0 else -math.inf
    return float(y)  # mpmath rounds to nearest from 200 bits


def _int_log_result(y, what: str) -> int:
    """An integer LogSum/LogSumExp result: ``y`` must lie within 0.4 above an integer ``k >= 0``
    (truncation, floor and rounding to nearest then agree on ``k``: the text does not say
    which one an integer type gets)."""
    mp = _mp()
    k = int(mp.floor(y))
    if k < 0 or y - k > 0.4:
        raise ValueError(f"an integer {what} of {mp.nstr(y, 8)}: its rounding to the type is not specified; "
                         "never generated")
    return k


def _log_sum_row(r):
    mp = _mp()
    with mp.workprec(200):
        if r.dtype == object:
            total = sum(int(v) for v in r)
            if total <= 0:
                raise ValueError("an integer LogSum of a non-positive sum is not defined; never generated")
            return _int_log_result(mp.log(mp.mpf(total)), "LogSum")
        vals = [float(v) for v in r]
        sp = _specials(vals)
        if sp is not None:
            return math.nan if math.isnan(sp) or sp < 0 else math.inf
        q = dyadic_sum(vals)
        if q < 0:
            return math.nan
        if q == 0:
            return -math.inf
        return _mp_to_float(mp.log(mp.mpf(q.numerator)) - mp.log(mp.mpf(q.denominator)))


def _log_sum_exp_terms(r) -> tuple[float | None, list[float]]:
    """``(result, [])`` where a float row's LogSumExp is decided by its special values (NaN if any
    is NaN, ``+inf`` with a ``+inf``, ``-inf`` when every term is ``-inf`` or there is none), else
    ``(None, the finite terms)``."""
    vals = [float(v) for v in r]
    if any(math.isnan(v) for v in vals):
        return math.nan, []
    if any(v == math.inf for v in vals):
        return math.inf, []
    fin = [v for v in vals if v != -math.inf]
    return (None, fin) if fin else (-math.inf, [])


def _log_sum_exp_row(r):
    mp = _mp()
    with mp.workprec(96):  # 43 bits beyond double: a misrounding needs a tie within 2^-96
        if r.dtype == object:
            vals = [int(v) for v in r]
            if not vals:
                raise ValueError("an integer LogSumExp of an empty set is not defined; never generated")
            m = max(vals)
            y = m + mp.log(mp.fsum(mp.exp(v - m) for v in vals))
            return _int_log_result(y, "LogSumExp")
        special, fin = _log_sum_exp_terms(r)
        if special is not None:
            return special
        m = max(fin)
        return _mp_to_float(m + mp.log(mp.fsum(mp.exp(mp.mpf(v) - m) for v in fin)))


def reduce_log_sum(ctx, data, *axes_in, **attrs) -> np.ndarray:
    """ReduceLogSum: ``log`` of the exact sum (NaN for a negative sum, ``-inf`` for 0 and for
    the empty set), correctly rounded; integers only where the result is within 0.4 above a
    non-negative integer.  ``axes_in`` as :func:`reduce_sum`.

    Raises:
        ValueError: an axis out of range, or an integer result whose rounding is open."""
    return _reduce_oracle(_log_sum_row)(ctx, data, *axes_in, **attrs)


def _log_sum_exp_row64(r):
    """:func:`_log_sum_exp_row` in float64 (``exp`` within an ulp, an exact ``fsum``, ``log1p``):
    within ``4e-16`` of the exact value, which is far inside a float or 16-bit output's
    rounding (DESIGN.md: float64, or mpmath where float64 is not enough: for double)."""
    special, fin = _log_sum_exp_terms(r)
    if special is not None:
        return special
    m = max(fin)
    return m + math.log1p(math.fsum(math.exp(v - m) for v in fin) - 1.0)


def reduce_log_sum_exp(ctx, data, *axes_in, **attrs) -> np.ndarray:
    """ReduceLogSumExp: ``log(sum(exp(x)))`` evaluated exactly (``m + log(sum(exp(x - m)))`` at
    96 bits for double data, in float64 with an error below ``4e-16`` for the narrower types;
    ``+inf`` with a ``+inf`` element, ``-inf`` for a set of ``-inf`` or the empty set),
    rounded to nearest; integers as :func:`reduce_log_sum`.  ``axes_in`` as :func:`reduce_sum`."""
    x = np.asarray(data)
    row = _log_sum_exp_row if x.dtype == object or ctx.types.get("data") == "double" else _log_sum_exp_row64
    return _reduce_oracle(row)(ctx, data, *axes_in, **attrs)


def reduce_l1(ctx, data, *axes_in, **attrs) -> np.ndarray:
    """ReduceL1: the exact sum of ``|x|`` over every reduced set.  ``axes_in`` as
    :func:`reduce_sum`.

    Raises:
        ValueError: an axis out of range, or an integer result outside the type."""
    return _reduce_oracle(_l1_row)(ctx, data, *axes_in, **attrs)


def reduce_sum_square(ctx, data, *axes_in, **attrs) -> np.ndarray:
    """ReduceSumSquare: the exact sum of ``x^2`` over every reduced set (rationals, correctly
    rounded).  ``axes_in`` as :func:`reduce_sum`.

    Raises:
        ValueError: an axis out of range, or an integer result outside the type."""
    return _reduce_oracle(_sum_square_row)(ctx, data, *axes_in, **attrs)


def reduce_l2(ctx, data, *axes_in, **attrs) -> np.ndarray:
    """ReduceL2: ``sqrt`` of the exact sum of squares, correctly rounded to float64; integer
    results are exact integer square roots.  ``axes_in`` as :func:`reduce_sum`.

    Raises:
        ValueError: an axis out of range, or an integer sum of squares that is not a perfect
            square (the rounding to an integer is not specified: never generated)."""
    return _reduce_oracle(_l2_row)(ctx, data, *axes_in, **attrs)


def _extreme_row(fn: str, t: str):
    """Row function of ReduceMax (``fn="max"``) or ReduceMin: NaN propagates; the empty set
    gives the text's identity (-inf / +inf for floats, the type's minimum / maximum for
    integers, False / True for bool)."""
    k = V.kind(t)
    if k == V.FLOAT:
        empty = -math.inf if fn == "max" else math.inf
    elif k == V.INT:
        lo, hi = _int_bounds(t)
        empty = lo if fn == "max" else hi
    else:
        empty = fn != "max"
    pick = max if fn == "max" else min

    def row(r):
        if r.size == 0:
            return empty
        if k == V.BOOL:
            return bool(r.any()) if fn == "max" else bool(r.all())
        if k == V.FLOAT:
            f = r.astype(np.float64)
            return math.nan if np.isnan(f).any() else float(f.max() if fn == "max" else f.min())
        return pick(int(v) for v in r)

    return row


def _extreme(fn: str):
    def oracle(ctx, data, *axes_in, **attrs):
        x = np.asarray(data)
        red = reduced_axes(attrs, axes_in[0] if axes_in else None, x.ndim)
        return reduce_rows(x, red, attrs.get("keepdims", 1), _extreme_row(fn, ctx.types["data"]), _out_dtype(x))

    oracle.__name__ = oracle.__qualname__ = f"reduce_{fn}"
    oracle.__doc__ = (f"Reduce{fn.capitalize()}: the {fn}imum of every reduced set (NaN propagates; the empty set "
                      "gives the identity the text states).  ``axes_in`` as :func:`reduce_sum`.")
    return oracle


reduce_max = _extreme("max")
reduce_min = _extreme("min")


def exact_tolerance(ctx, inputs, attrs, outputs) -> dict:
    """Exact comparison of every output (the result is one of the inputs, an index, or an
    integer); the sign of zero is not checked."""
    return {name: Tolerance(0.0, 0.0, exact=True) for name in ctx.outputs}


# ============================================================================ tolerances


def _gamma(k: int, u: float) -> float:
    """Higham's ``gamma_k = k u / (1 - k u)`` (0 for ``k <= 0``)."""
    return k * u / (1.0 - k * u) if k > 0 else 0.0


def units(t: str) -> tuple[float, float, float]:
    """(unit roundoff of ``t``, its smallest subnormal, the unit roundoff of the narrowest
    legitimate accumulator: float32 for float16/bfloat16, ``t`` itself otherwise)."""
    fi = V.finfo(t)
    u = float(fi.eps) / 2
    acc = 2.0 ** -24 if t in ("float16", "bfloat16") else u
    return u, float(fi.smallest_subnormal), acc


def _rows_of(ctx, inputs, attrs) -> np.ndarray:
    x = np.asarray(inputs[0], dtype=np.float64)
    axes = inputs[1] if len(inputs) > 1 else None
    return to_rows(x, reduced_axes(attrs, axes, x.ndim))


def sum_tolerance(ctx, inputs, attrs, outputs) -> dict:
    """ReduceSum's tolerance: exact for integers; for floats, with ``n`` the size of the
    reduced set, ``A`` the sum of ``|x|`` over it, ``u``/``s`` the unit roundoff and smallest
    subnormal of T and ``u'`` that of the accumulator (module docstring)::

        atol = max over elements of gamma_{n-1}(u') (1 + u) A + 2 s,   rtol = 2.01 u

    A kernel's accumulated sum ``S'`` holds ``|S' - S| <= gamma_{n-1}(u') A`` in any order
    (Higham §4.2); rounding it to T adds ``u |S'| + s/2`` and the expected value's own
    rounding ``u |S| + s/2``; ``|S'| <= |S| + gamma A``.  A single element (``n = 1``, the
    identity, ``noop_with_empty_axes``) is then exact up to the rounding of the expectation.
    """
    t = ctx.out_types["reduced"]
    if V.kind(t) != V.FLOAT:
        return {"reduced": Tolerance(0.0, 0.0, exact=True)}
    u, s, acc = units(t)
    rows = _rows_of(ctx, inputs, attrs)
    n = rows.shape[-1]
    with np.errstate(all="ignore"):
        a = np.abs(np.where(np.isfinite(rows), rows, 0.0)).sum(axis=-1)
    b = _gamma(n - 1, acc) * (1 + u) * a
    b = np.where(np.isfinite(np.asarray(outputs["reduced"], dtype=np.float64)).reshape(b.shape), b, 0.0)
    atol = float(b.max()) if b.size else 0.0
    return {"reduced": Tolerance(atol + 2 * s if n > 1 else 0.0, 2.01 * u,
                                 variants=(f"bound:any order, accumulator u={acc:g}",))}


def mean_tolerance(ctx, inputs, attrs, outputs) -> dict:
    """ReduceMean's tolerance: exact for integers; for floats (``n``, ``A``, ``u``, ``s``,
    ``u'`` as :func:`sum_tolerance`, ``s'`` the accumulator's smallest subnormal)::

        atol = max over elements of gamma_{n+1}(u') (1 + u) A / n + n s' + 2 s,   rtol = 2.01 u

    Sum then divide (``gamma_{n-1} A/n + u'|S/n|``), sum times ``fl(1/n)`` (one rounding
    more) and the sum of ``fl(x_i / n)`` (``u' A/n + gamma_{n-1}(1 + u') A/n``) all stay within
    ``gamma_{n+1}(u') A / n`` (Higham Lemma 3.3); ``n s'`` covers the quotients ``x_i / n`` that
    underflow.  ``n = 1`` is exact."""
    t = ctx.out_types["reduced"]
    if V.kind(t) != V.FLOAT:
        return {"reduced": Tolerance(0.0, 0.0, exact=True)}
    u, s, acc = units(t)
    s_acc = float(V.finfo("float").smallest_subnormal) if t in ("float16", "bfloat16") else s
    rows = _rows_of(ctx, inputs, attrs)
    n = rows.shape[-1]
    if n <= 1:
        return {"reduced": Tolerance(0.0, 2.01 * u, variants=("exact: a single element",))}
    with np.errstate(all="ignore"):
        a = np.abs(np.where(np.isfinite(rows), rows, 0.0)).sum(axis=-1) / n
    b = _gamma(n + 1, acc) * (1 + u) * a
    b = np.where(np.isfinite(np.asarray(outputs["reduced"], dtype=np.float64)).reshape(b.shape), b, 0.0)
    atol = float(b.max()) if b.size else 0.0
    return {"reduced": Tolerance(atol + n * s_acc + 2 * s, 2.01 * u,
                                 variants=("bound:any order, sum/n, sum*fl(1/n) or sum of x/n, "
                                           f"accumulator u={acc:g}",))}


def prod_tolerance(ctx, inputs, attrs, outputs) -> dict:
    """ReduceProd: ``n - 1`` multiplications in any order at ``u'`` (float32 for 16-bit
    floats), none of whose partial products under- or overflows the accumulator (the data
    classes see to it), then the rounding to T: the error is relative::

        atol = 2 s,   rtol = gamma_{n-1}(u') (1 + u) + 2.01 u

    (Higham §3.1: a product of ``n`` factors carries at most ``gamma_{n-1}``)."""
    t = ctx.out_types["reduced"]
    if V.kind(t) != V.FLOAT:
        return {"reduced": Tolerance(0.0, 0.0, exact=True)}
    u, s, acc = units(t)
    n = _rows_of(ctx, inputs, attrs).shape[-1]
    if n <= 1:
        return {"reduced": Tolerance(0.0, 2.01 * u, variants=("exact: a single element",))}
    return {"reduced": Tolerance(2 * s, _gamma(n - 1, acc) * (1 + u) + 2.01 * u,
                                 variants=(f"bound:any order, accumulator u={acc:g}",))}


def _acc_type(t: str) -> str:
    """The narrowest legitimate accumulator type of ``t`` (:func:`units`): float for 16-bit."""
    return "float" if t in ("float16", "bfloat16") else t


def final_step_rel(fn: str, t: str) -> float:
    """The relative error of a composite's last library step ``fn`` and of the expectation's
    rounding (docs/tolerance.md, "The composition rule"): the step evaluated in T (its budget
    :func:`conformance.tolerance.budget_rel` includes the rounding to T) plus the expectation's
    half ulp, or -- for 16-bit T -- evaluated in the float32 accumulator and rounded to T
    (``beta' (1 + u) + 2 u``): the larger of the two."""
    u = float(V.finfo(t).eps) / 2
    in_t = budget_rel(fn, t) + u
    acc_t = _acc_type(t)
    if acc_t == t:
        return in_t * 1.001
    return max(in_t, budget_rel(fn, acc_t) * (1 + u) + 2 * u) * 1.001


def log_sum_tolerance(ctx, inputs, attrs, outputs) -> dict:
    """ReduceLogSum: the sum within ``gamma_{n-1}(u') A`` (any order at the accumulator) and
    rounded to T (the function body of 18: ``ReduceSum`` in T, then ``Log``), so ``log``'s
    argument carries a relative error ``d = gamma_{n-1}(u') (1 + u) A / S + u``, which ``log``
    (condition number ``1 / |log S|``) turns into an absolute error ``d`` of the result; then
    ``log`` itself within the budget table's (:func:`final_step_rel`, in T or in the
    accumulator)::

        atol = max over finite results of 1.01 d + 2 s,   rtol = final_step_rel("log", T)
    """
    t = ctx.out_types["reduced"]
    if V.kind(t) != V.FLOAT:
        return {"reduced": Tolerance(0.0, 0.0, exact=True)}
    u, s, acc = units(t)
    rows = _rows_of(ctx, inputs, attrs)
    n = rows.shape[-1]
    out = np.asarray(outputs["reduced"], dtype=np.float64).reshape(rows.shape[:-1])
    with np.errstate(all="ignore"):
        a = np.abs(np.where(np.isfinite(rows), rows, 0.0)).sum(axis=-1)
        ssum = np.abs(rows.sum(axis=-1))
        d = np.where(np.isfinite(out) & (ssum > 0), _gamma(n - 1, acc) * (1 + u) * a / ssum + u, 0.0)
    atol = float(d.max()) * 1.01 if d.size else 0.0
    return {"reduced": Tolerance(atol + 2 * s, final_step_rel("log", t),
                                 variants=("bound:any order, sum rounded to T, log within the budget table "
                                           f"({budget_ulps('log', t):g} ulp in T)",))}


def log_sum_exp_tolerance(ctx, inputs, attrs, outputs) -> dict:
    """ReduceLogSumExp at the accumulator's precision (``u'``; ``b_exp``, ``b_log`` the relative
    budgets of ``exp`` and ``log`` there, :func:`conformance.tolerance.budget_rel`), with or
    without the max shift (``m + log(sum(exp(x - m)))`` or the literal ``log(sum(exp(x)))``):

    * each term within ``b_exp + u' / e`` relative (the shift ``x - m`` is rounded: ``u' |x - m|``,
      amplified by ``exp``'s condition ``|x - m|``, ``z e^-z <= 1/e``); the sum of positive terms
      adds ``gamma_{n-1}(u')``; ``log`` (condition ``1 / |log S|``) turns the sum's relative error
      into an absolute error of the result;
    * ``log`` within ``b_log`` of its own result: ``log n`` at most after the shift, the whole
      ``|y|`` without it (hence ``b_log`` relative); the addition of ``m`` ``u'|y|``; the rounding
      to T and the expectation's (the function body of 18, in double, is far inside)::

        atol = 1.01 (b_exp + u' + gamma_{n-1}(u')) + b_log log(n) + 2 s,
        rtol = b_log + u' + 2.01 u
    """
    t = ctx.out_types["reduced"]
    if V.kind(t) != V.FLOAT:
        return {"reduced": Tolerance(0.0, 0.0, exact=True)}
    u, s, acc = units(t)
    n = max(1, _rows_of(ctx, inputs, attrs).shape[-1])
    b_exp, b_log = budget_rel("exp", _acc_type(t)), budget_rel("log", _acc_type(t))
    atol = 1.01 * (b_exp + acc + _gamma(n - 1, acc)) + b_log * math.log(n) + 2 * s
    return {"reduced": Tolerance(atol, b_log + acc + 2.01 * u,
                                 variants=(f"bound:with or without the max shift at u={acc:g}, exp and log within "
                                           "the budget table",))}


def _rows_out(ctx, inputs, attrs, outputs):
    """(rows of the exact inputs, the exact outputs flattened like the rows' kept part)."""
    rows = _rows_of(ctx, inputs, attrs)
    out = np.asarray(outputs["reduced"], dtype=np.float64).reshape(rows.shape[:-1])
    return rows, out


def sum_square_tolerance(ctx, inputs, attrs, outputs) -> dict:
    """ReduceSumSquare: ``n`` squares each rounded -- in T, as the function body of 18 does
    (``Mul(data, data)``), or in the accumulator -- and summed in any order at ``u'``; every
    term is non-negative, so the error is relative to the result ``S``::

        atol = n s + 2 s,   rtol = gamma_n(u') (1 + u) + 3.01 u

    (``n s``: squares that underflow T; ``u``, ``s`` of T, ``u'`` of the accumulator, float32
    for 16-bit floats).  FMA or not: within the same bound."""
    t = ctx.out_types["reduced"]
    if V.kind(t) != V.FLOAT:
        return {"reduced": Tolerance(0.0, 0.0, exact=True)}
    u, s, acc = units(t)
    n = _rows_of(ctx, inputs, attrs).shape[-1]
    return {"reduced": Tolerance((n + 2) * s, _gamma(n, acc) * (1 + u) + 3.01 * u,
                                 variants=(f"bound:squares rounded in T, any order, accumulator u={acc:g}",))}


def l2_tolerance(ctx, inputs, attrs, outputs) -> dict:
    """ReduceL2: the squares rounded in T (the function body of 18: ``Mul(data, data)``), their
    sum in any order at ``u'`` and rounded to T (the body's ``ReduceSum`` output), a square
    root within the budget table's (in T or in the accumulator, :func:`final_step_rel`)::

        atol = sqrt(n s) + 2 s,   rtol = (u + gamma_n(u') / 2) (1 + u) + final_step_rel("sqrt", T)

    (a relative error ``e`` of the sum is ``e / 2`` of its root; ``sqrt(S + d) - sqrt(S) <=
    sqrt(d)`` for squares below T's normal range: the data classes keep ``x^2`` normal in T,
    where the body's square of a tiny value would flush to zero).  Exact for integers."""
    t = ctx.out_types["reduced"]
    if V.kind(t) != V.FLOAT:
        return {"reduced": Tolerance(0.0, 0.0, exact=True)}
    u, s, acc = units(t)
    n = _rows_of(ctx, inputs, attrs).shape[-1]
    return {"reduced": Tolerance(math.sqrt(n * s) + 2 * s,
                                 (u + _gamma(n, acc) / 2) * (1 + u) + final_step_rel("sqrt", t),
                                 variants=(f"bound:squares in T, any order, sqrt within the budget table, "
                                           f"accumulator u={acc:g}",))}


def _int_bounds(t: str) -> tuple[int, int]:
    info = V.iinfo(t)
    return int(info.min), int(info.max)
