"""Softmax, LogSoftmax and Hardmax (ai.onnx 1, 11, 13) as entries of the operator table
(family ``shaped``).

Oracle, legitimate variants and the definitional decisions: :mod:`conformance.reference.softmax`
(2-D coercion at ``axis`` before 13, one axis from 13; max-shifted evaluation; special values
by the formula; Hardmax ties to the first maximum).  What the entries add to the schema:

* the shape table: every rank 1-5 with every valid ``axis`` of the version (version 1:
  ``[0, r)``, the text knows no negative axis; 11 and 13: ``[-r, r)``), the attribute
  omitted (rank 3; rank 1 only from 13, where the default -1 is valid), and long rows (a
  normalized axis of 4096, and a rank-3 input whose flattened or single axis is 640 long);
* numerics classes: ``normal``, ``wide`` (standard deviation 10: float16 probabilities
  underflow, LogSoftmax stays finite), ``large`` (values near 100 (float16), 200
  (bfloat16), 1000 (float, double): ``exp`` without the max shift overflows), ``neg-inf``
  (some ``-inf`` entries in rows with a finite maximum), ``ties`` (small integers: many tied
  maxima), ``special`` (Softmax and LogSoftmax: a row of all ``-inf`` and a row with a NaN,
  both NaN by the formula; Hardmax: an all ``-inf`` row and ``+inf`` entries);
* tolerances derived from the legitimate variants (float32 arithmetic for float16 and
  bfloat16, three summation orders, division or reciprocal), plus the budget table's ``exp``,
  ``log`` and division at the compute precision composed through the formula (Softmax: ``2
  b_exp + b_div`` relative; LogSoftmax: ``1.01 b_exp + b_log log n`` absolute,
  docs/tolerance.md "The composition rule"); Hardmax is exact;
* error cases: ``axis`` outside the version's range (``r`` and ``-r-1``; version 1 also
  ``r+1``).
"""

from __future__ import annotations

import dataclasses
import math

import numpy as np

from ..reference import softmax as ref
from .. import dtypes
from ..tolerance import Tolerance, budget_rel, derive_tolerance
from . import values as V
from .engine import register_entries
from .entry import Entry, Err, Shape

#: Mean of the ``large`` class per type (``exp`` of it overflows the type).
LARGE = {"float16": 100.0, "bfloat16": 200.0, "float": 1000.0, "double": 1000.0}
#: Dimension letters by rank, and the largest dims (smaller for higher ranks).
_LETTERS = "SMKNP"
_DIMS = {1: (2, 16), 2: (1, 8), 3: (1, 5), 4: (1, 4), 5: (1, 3)}


def _rank(r: int, name: str, attrs: dict, since: int = 0, until: int = 10**6) -> Shape:
    letters = _LETTERS[:r]
    return Shape(name, {"input": letters}, attrs, since, until, {c: _DIMS[r] for c in letters})


def _shapes() -> tuple[Shape, ...]:
    out = []
    for r in range(1, 5):
        out += [_rank(r, f"r{r}/axis={a}", {"axis": a}, since=11 if a < 0 else 0) for a in range(-r, r)]
    out.append(_rank(3, "r3/axis=default", {}))
    out.append(_rank(1, "r1/axis=default", {}, since=13))
    out.append(_rank(5, "r5/axis=2", {"axis": 2}))
    long = ("normal", "large")  # accumulation over long rows, with and without the max shift's help
    out.append(Shape("long-rows/2x4096", {"input": "2L"}, {"axis": 1}, dims={"L": (4096, 4096)}, numerics=long))
    out.append(Shape("long-rows/2x8x640/axis=1", {"input": "28L"}, {"axis": 1}, until=12, dims={"L": (640, 640)},
                     numerics=long))
    out.append(Shape("long-rows/2x8x640/axis=-1", {"input": "28L"}, {"axis": -1}, since=13,
                     dims={"L": (640, 640)}, numerics=long))
    return tuple(out)


def _rows(rng, ctx, shape):
    """(rows view of a fresh standard-normal input, function back to the input's layout)."""
    x = V.representable(rng.normal(0.0, 2.0, size=shape), ctx.types["input"])
    return ref.to_rows(x, ctx.attrs["axis"], ctx.version)


def _large(rng, ctx, shapes):
    t = ctx.types["input"]
    return [V.representable(LARGE[t] + rng.normal(0.0, 3.0, size=shapes[0]), t)]


def _wide(rng, ctx, shapes):
    return [V.representable(rng.normal(0.0, 10.0, size=shapes[0]), ctx.types["input"])]


def _ties(rng, ctx, shapes):
    return [rng.integers(-1, 2, size=shapes[0]).astype(np.float64)]


def _neg_inf(rng, ctx, shapes):
    rows, back = _rows(rng, ctx, shapes[0])
    rows = rows.copy()
    n_rows, n = rows.shape
    for i in range(n_rows):
        if n > 1:
            rows[i, rng.choice(n, size=int(rng.integers(1, n)), replace=False)] = -np.inf
    return [back(rows)]


def _special(rng, ctx, shapes):
    rows, back = _rows(rng, ctx, shapes[0])
    rows = rows.copy()
    n_rows, n = rows.shape
    if rows.size:
        rows[0, :] = -np.inf
        if n_rows > 1:
            rows[1, int(rng.integers(0, n))] = np.inf if ctx.op == "Hardmax" else np.nan
    return [back(rows)]


def _oracle(ctx, x, axis):
    return ref.evaluate(ctx.op, x, axis, ctx.version)


def _tolerance(ctx, inputs, attrs, outputs):
    t = ctx.out_types["output"]
    if ctx.op == "Hardmax":
        return {"output": Tolerance(0.0, 0.0, exact=True)}
    e = V.elem(t)
    tol = derive_tolerance(outputs["output"], ref.variants(ctx.op, inputs[0], attrs["axis"], ctx.version, e), e)
    # the composition rule (docs/tolerance.md): exp, log and the division at the budget table's bounds
    # at the compute precision P (float32 for 16-bit types), which our near-correctly rounded variants
    # do not exhibit
    p = V.name_of(dtypes.elem_type(ref.compute_type(e)))
    b_exp, b_log, b_div = budget_rel("exp", p), budget_rel("log", p), budget_rel("divide", p)
    x = np.asarray(inputs[0], dtype=np.float64)
    n = ref.to_rows(x, attrs["axis"], ctx.version)[0].shape[-1] if x.size else 1
    if ctx.op == "Softmax":  # y = e_i / s: e_i and s each within b_exp relative, the quotient b_div
        return {"output": dataclasses.replace(tol, rtol=tol.rtol + 2 * b_exp + b_div,
                                              variants=tol.variants + ("budget:exp,exp,divide",))}
    # LogSoftmax: (x - m) - log(s): s within b_exp relative is an absolute b_exp of log s; log s <= log n
    return {"output": dataclasses.replace(tol, atol=tol.atol + 1.01 * b_exp + b_log * math.log(max(n, 1)),
                                          variants=tol.variants + ("budget:exp,log",))}


def _errors() -> tuple[Err, ...]:
    out = []
    for r in (1, 2, 3):
        shape = ((3, 4, 2)[:r],)
        for a, since, until in ((r, 0, 10**6), (r + 1, 0, 10), (-r - 1, 11, 10**6)):
            lo = 0 if until == 10 else -r
            out.append(Err(f"axis {a} outside [{lo}, {r}) for rank {r}", f"axis={a}/r{r}", {"axis": a}, shape,
                           since, until))
    return tuple(out)


def _entry(op: str) -> Entry:
    return Entry(op, _oracle, family="shaped", shapes=_shapes(), tolerance=_tolerance, per_type=26,
                 float_numerics={"wide": _wide, "large": _large, "neg-inf": _neg_inf, "ties": _ties,
                                 "special": _special},
                 nan=op != "Hardmax", errors=_errors(),
                 notes={11: "negative axis accepted ([-r, r))", 13: "one axis instead of 2-D coercion; default -1"})


ENTRIES = tuple(_entry(op) for op in ref.OPS)
register_entries(ENTRIES, family="softmax")
