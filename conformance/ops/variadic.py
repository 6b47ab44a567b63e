"""Entries of the variadic operators Sum, Mean, Max, Min (family ``variadic``) and of the
select operator Where (family ``select``).

Each entry holds only what the schema cannot say (:mod:`conformance.ops.entry`); the engine
(:mod:`conformance.ops.engine`) derives versions, types, 1 to 3 occurrences of the
variadic input, shapes (equal shapes before version 8, multidirectional broadcasting from
8, three-way broadcasting for Where), the legacy ``consumed_inputs`` state of version 1 and
the error cases (unequal shapes before 8, incompatible shapes from 8).  Decisions recorded
here, quoting ``onnx.defs.get_schema(op, version).doc``:

**Sum / Mean: the order and precision of accumulation.**  The text says only "Element-wise
sum of each of the input tensors" / "Element-wise mean of each of the input tensors" (and
"All inputs and outputs must have the same shape and data type" before 8, "with
Numpy-style broadcasting support" from 8).  It fixes neither the summation order nor the
way the mean divides, so every order (forward, reverse, pairwise, any tree), float32
accumulation for float16/bfloat16, and for Mean dividing the sum by ``n``, multiplying it by
``fl(1/n)`` or summing the ``fl(x_i / n)``, are legitimate.  The oracle is the *exact*
value (rational arithmetic: :class:`fractions.Fraction`, correctly rounded to float64; the
engine rounds it to ``T``), and the tolerance is the per-element bound ``bound`` (the engine
takes its largest finite value as ``atol``, with ``rtol = eps(T)/2`` for the rounding of the
expected value).  With ``u = eps(T)/2`` (unit roundoff), ``s`` = the smallest subnormal of
``T``, ``A = sum_i |x_i|`` and ``gamma_k = k u / (1 - k u)``:

* Sum of ``n`` inputs: ``B = gamma_{n-1} * A + [n > 1] * (u * A + s)``.  Higham, *Accuracy
  and Stability of Numerical Algorithms* (2nd ed.), §4.2, eq. (4.4)/(4.5): every recursive
  summation order of ``n`` terms satisfies ``|S_hat - S| <= gamma_{n-1} * sum |x_i|``;
  pairwise summation is a recursive order (its bound ``gamma_{ceil(log2 n)}`` is smaller);
  additions are exact when their result is subnormal (Higham §2.1, Theorem 2.4 /
  Hauser), so no absolute underflow term is needed for accumulation in ``T``.  The second
  term is the final rounding of a wider accumulator (float32 for 16-bit inputs: its own
  ``gamma_{n-1}`` is smaller than ``T``'s, and ``fl_T`` of the result adds at most half an
  ulp, ``u * |S| + s/2`` in the subnormal range) plus the one ulp by which two nearby values
  can round apart.  A single input is the identity: ``B = 0``.
* Mean of ``n`` inputs: ``B = [n > 1] * (gamma_{n+1} * A / n + n * s)``.  Sum then divide:
  ``gamma_{n-1} A/n + u |S/n|``; sum times ``fl(1/n)``: one rounding more; ``sum fl(x_i/n)``:
  ``u A/n + gamma_{n-1} (1+u) A/n <= gamma_n A/n``; each within ``gamma_{n+1} A / n`` (Higham
  Lemma 3.3: ``(1+theta_j)(1+theta_k) = 1+theta_{j+k}``).  The ``n * s`` term covers the
  divisions ``x_i / n`` that underflow (absolute error ``s/2`` each) and the final rounding.
  So "Mean computed as the sum of ``x_i/n`` rounded each in float16" is *legitimate*: it is
  inside the bound of the text's unspecified algorithm (tests check it passes).  Genuinely
  wrong kernels: dividing by the wrong count (2 always), accumulating through float8.
* Overflow depends on the order: ``fmax + fmax - fmax`` is ``inf`` forward and ``fmax``
  reversed; a float16 ``Mean(60000, 60000)`` overflows if summed in float16 and is 60000 in
  float32.  An element is generated only where every legitimate algorithm gives the same
  answer (``defined``): NaN in any input (NaN); infinities of both signs (NaN); otherwise
  when ``A * (1 + gamma_n)`` stays below ``fmax(T)`` (no partial sum can overflow), and for
  Sum also when all non-zero values (infinities included) have one sign and ``|S|`` is
  clearly below or above the overflow threshold (every partial sum is monotone: all
  orders overflow, or none does).  Elsewhere the element is replaced by a safe value.
* The sign of a zero sum is not checked (``signed_zero=False``): ``-0 + +0`` is ``+0`` in
  round-to-nearest but the text does not say the operation is an IEEE addition chain.

**Max / Min: NaN.**  The text says "Element-wise max of each of the input tensors" and
nothing about NaN.  IEEE 754-2019 §9.6 has both ``maximum`` (NaN propagates) and
``maximumNumber`` (a number beats a quiet NaN, like C's ``fmax`` and 754-2008's ``maxNum``),
and the text picks neither; numpy's ``fmax`` and ``maximum`` are both "element-wise
maximum".  onnxruntime 1.32 (CPU: microsoft/onnxruntime#21492 made the broadcast path
propagate too; CUDA: #19984) and ``onnx.reference`` (``np.maximum``) both propagate --
measured here: ``Max(NaN, 1, 2)`` and ``Max(1, NaN, 2)`` are NaN in float16/float/double in
both -- but onnx/onnx#6003 (NaN behaviour of clip/min/max differing between providers) is
still open and OpenVINO CPU does not propagate (openvinotoolkit/openvino#35839).  Decision:
**NaN propagates**, and NaN is generated.  The operation the text names is the maximum, and
the standards that define a maximum for arrays define it so: IEEE 754-2019 §9.6 ``maximum``
("if either operand is a NaN, the result is a quiet NaN"; 754-2019 dropped 754-2008's
``maxNum`` from the recommended operations), the Python array API standard's ``maximum``
("if either x1_i or x2_i is NaN, the result is NaN"), and onnx's own executable reference.
A kernel using ``fmax``/``fmin`` (``maximumNumber``) fails the NaN cases; the cases carry
the ``special`` numerics tag so a report can single them out while onnx/onnx#6003 is open.
Infinities are ordered (``max(-inf, x) = x``) and are generated.

**Max / Min: the sign of zero.**  ``max(-0, +0)``: -0 and +0 are equal numbers, the text does
not order them (754-2019 ``maximum`` would give +0, ``maxNum`` either); onnxruntime itself
returns ``-0`` for ``Max(0, -0, -0)`` in double and ``+0`` in float (measured).  The cases
are generated (the expected value is a zero) and compared without the zero's sign
(``signed_zero=False``; :func:`conformance.tolerance.compare` treats ``-0 == +0`` then), so
any order of zeros passes.  Max/Min are exact (``ulps=0``): the result is one of the inputs.
Integer types (int8/int16/uint8/uint16 from version 12, the 32/64-bit ones too) are exact;
no integer overflow is possible.

**Where.**  "Return elements, either from X or Y, depending on condition. Where behaves like
numpy.where with three parameters." and the inputs' texts: "values selected at indices where
condition is True" / "... is False".  The output elements *are* the selected input elements:
exact for every type (strings, bool, complex included), NaN selected is NaN, and the sign of
a selected zero is preserved (``signed_zero=True``: ``Where(True, -0, 1)`` is ``-0``).  The
engine draws Where's numerics classes from X's type (the condition is always bool), and the
entry adds a ``zeros`` class (:func:`where_zeros`) whose first output element selects an
X = -0 and last a Y = -0, so every float type checks the sign.  onnxruntime 1.32 CPU fails it
(measured: ``Where(True, [-0., -0.], [-0., -0.])`` gives ``[0., 0.]``; its kernel merges
``c ? X : 0`` and ``!c ? Y : 0`` with ``x != 0 ? x : y``).
Complex outputs are compared through :func:`conformance.tolerance.compare`, which compares
magnitudes: a kernel swapping X and Y is caught by the real cases, and by complex cases only
where ``|X| != |Y|`` (a limitation of ``compare``, left alone here).

**Legacy ``consumed_inputs`` (version 1).**  The engine adds a ``legacy`` state with
``consumed_inputs = [0]``; the attribute is an optimization hint with no effect on the
values.
"""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np

from . import values as V
from .engine import register_entries
from .entry import Entry

# ----------------------------------------------------------------------------- helpers


def _gamma(k: int, u: float) -> float:
    """Higham's ``gamma_k = k u / (1 - k u)`` (0 for ``k <= 0``)."""
    return k * u / (1.0 - k * u) if k > 0 else 0.0


def _units(ctx) -> tuple[float, float, float]:
    """(unit roundoff ``u``, smallest subnormal ``s``, largest finite value) of the data type."""
    fi = V.finfo(ctx.types["data_0"])
    return float(fi.eps) / 2.0, float(fi.smallest_subnormal), float(fi.max)


def _flat(inputs) -> tuple[list[np.ndarray], tuple[int, ...]]:
    arrs = np.broadcast_arrays(*[np.asarray(x) for x in inputs])
    shape = arrs[0].shape if arrs else ()
    return [np.asarray(a).ravel() for a in arrs], shape


def _to_float(q: Fraction) -> float:
    try:
        return float(q)  # int / int true division: correctly rounded
    except OverflowError:
        return math.inf if q > 0 else -math.inf


def _exact_sum_elem(vals, divide: int = 1) -> float:
    """The exact sum (divided by ``divide``) of one element's values, rounded once to
    float64; IEEE rules for NaN and infinities (NaN, or infinities of both signs: NaN)."""
    if any(math.isnan(v) for v in vals):
        return math.nan
    infs = {v for v in vals if math.isinf(v)}
    if len(infs) == 2:
        return math.nan
    if infs:
        return next(iter(infs))
    return _to_float(sum((Fraction(v) for v in vals), Fraction(0)) / divide)


def _exact(inputs, divide: bool) -> np.ndarray:
    cols, shape = _flat(inputs)
    n = len(inputs)
    out = np.array([_exact_sum_elem([float(c[i]) for c in cols], n if divide else 1)
                    for i in range(cols[0].size)], dtype=np.float64) if cols[0].size else np.zeros(0)
    return out.reshape(shape)


def sum_oracle(ctx, *inputs, **attrs) -> np.ndarray:
    """Exact element-wise sum, correctly rounded to float64."""
    return _exact(inputs, divide=False)


def mean_oracle(ctx, *inputs, **attrs) -> np.ndarray:
    """Exact element-wise mean (exact sum / n), correctly rounded to float64."""
    return _exact(inputs, divide=True)


def _extreme(fn):
    def oracle(ctx, *inputs, **attrs):
        arrs = np.broadcast_arrays(*[np.asarray(x) for x in inputs])
        out = np.array(arrs[0], copy=True)
        for a in arrs[1:]:
            if out.dtype == object:  # Python ints: exact comparison
                out = np.asarray(np.frompyfunc(fn, 2, 1)(out, a), dtype=object).reshape(out.shape)
            else:
                out = np.maximum(out, a) if fn is max else np.minimum(out, a)
        return out

    oracle.__name__ = oracle.__qualname__ = f"{fn.__name__}_oracle"
    return oracle


def where_oracle(ctx, condition, X, Y, **attrs) -> np.ndarray:
    """``numpy.where(condition, X, Y)`` with three-way broadcasting (the selected elements,
    exactly)."""
    return np.where(np.asarray(condition, dtype=bool), X, Y)


def where_zeros(rng, ctx, shapes) -> list[np.ndarray]:
    """Numerics class ``zeros`` of Where: X and Y made of signed zeros (and +-1, +-the smallest
    subnormal), so every float case checks that a selected -0 stays -0 whatever the shape
    pattern (the ``special`` grid draws only 6 of its values per input when there are three)."""
    sub = float(V.finfo(ctx.types["X"]).smallest_subnormal)
    pool = np.array([-0.0, 0.0, -0.0, 0.0, 1.0, -1.0, sub, -sub])
    cond = rng.random(size=shapes[0]) < 0.5
    x, y = (rng.choice(pool, size=int(np.prod(s, dtype=np.int64))).reshape(s) for s in shapes[1:])
    if cond.size and x.size and y.size:  # the first output element selects X = -0, the last Y = -0
        cond.ravel()[0], x.ravel()[0] = True, -0.0
        cond.ravel()[-1], y.ravel()[-1] = False, -0.0
    return [cond, x, y]


def _defined(mean: bool):
    """The mask of elements every legitimate summation order and algorithm agrees on (module
    docstring, "Overflow depends on the order")."""

    def defined(ctx, *inputs, **attrs):
        u, _, fmax = _units(ctx)
        cols, shape = _flat(inputs)
        n = len(inputs)
        if not cols or cols[0].size == 0:
            return np.ones(shape, dtype=bool)
        x = np.stack([c.astype(np.float64) for c in cols])  # (n, elems)
        nan = np.isnan(x).any(axis=0)
        pinf = (x == np.inf).any(axis=0)
        ninf = (x == -np.inf).any(axis=0)
        fin = np.where(np.isfinite(x), x, 0.0)
        with np.errstate(over="ignore"):
            a = np.abs(fin).sum(axis=0)  # float64: no overflow for float32-or-narrower values
        g = _gamma(n, u)
        safe = a * (1.0 + g) < fmax
        ok = nan | (pinf & ninf) | safe
        if not mean:
            pos = (fin > 0).any(axis=0) | pinf
            neg = (fin < 0).any(axis=0) | ninf
            one_sign = ~(pos & neg)
            s = np.array([abs(_exact_sum_elem([float(v) for v in fin[:, i]])) for i in range(fin.shape[1])])
            with np.errstate(over="ignore", invalid="ignore"):
                clear = (s * (1.0 + g) < fmax) | (s * (1.0 - g) > fmax * (1.0 + 2.0 * u))
            ok |= one_sign & (clear | pinf | ninf)
        return ok.reshape(shape)

    defined.__name__ = defined.__qualname__ = "mean_defined" if mean else "sum_defined"
    return defined


def sum_bound(ctx, inputs, attrs, elem) -> np.ndarray:
    """Per-element bound of any legitimate Sum (module docstring):
    ``gamma_{n-1} A + [n > 1] (u A + s)`` with ``A = sum |x_i|`` (Higham §4.2)."""
    u, s, _ = _units(ctx)
    n = len(inputs)
    cols, shape = _flat(inputs)
    with np.errstate(over="ignore", invalid="ignore"):
        a = np.abs(np.stack([c.astype(np.float64) for c in cols])).sum(axis=0) if cols and cols[0].size else np.zeros(0)
        b = _gamma(n - 1, u) * a + ((u * a + s) if n > 1 else 0.0)
    return np.asarray(b, dtype=np.float64).reshape(shape)


def mean_bound(ctx, inputs, attrs, elem) -> np.ndarray:
    """Per-element bound of any legitimate Mean (module docstring):
    ``[n > 1] (gamma_{n+1} A / n + n s)``."""
    u, s, _ = _units(ctx)
    n = len(inputs)
    cols, shape = _flat(inputs)
    if n == 1:
        return np.zeros(shape)
    with np.errstate(over="ignore", invalid="ignore"):
        a = np.abs(np.stack([c.astype(np.float64) for c in cols])).sum(axis=0) if cols[0].size else np.zeros(0)
        b = _gamma(n + 1, u) * a / n + n * s
    return np.asarray(b, dtype=np.float64).reshape(shape)


_BOUND_SOURCE = ("Higham, Accuracy and Stability of Numerical Algorithms, 2nd ed., §4.2 (eqs. 4.4-4.5): "
                 "any recursive summation order has |error| <= gamma_{n-1} sum|x_i|")

ENTRIES = [
    Entry("Sum", sum_oracle, family="variadic", defined=_defined(mean=False), bound=sum_bound,
          ulps_source=_BOUND_SOURCE,
          notes={8: "multidirectional broadcasting (before: all inputs have the same shape)"}),
    Entry("Mean", mean_oracle, family="variadic", defined=_defined(mean=True), bound=mean_bound,
          ulps_source=_BOUND_SOURCE + "; plus the division's rounding (Higham Lemma 3.3)",
          notes={8: "multidirectional broadcasting (before: all inputs have the same shape)"}),
    Entry("Max", _extreme(max), family="variadic",
          notes={8: "multidirectional broadcasting", 12: "integer types"}),
    Entry("Min", _extreme(min), family="variadic",
          notes={8: "multidirectional broadcasting", 12: "integer types"}),
    Entry("Where", where_oracle, family="select", signed_zero=True, float_numerics={"zeros": where_zeros},
          notes={16: "bfloat16"}),
]

register_entries(ENTRIES, family="variadic")
