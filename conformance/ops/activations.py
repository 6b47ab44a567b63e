"""The element-wise activations as entries of the operator table: Relu, LeakyRelu, PRelu, Elu,
Selu, Celu, Gelu, Sigmoid, HardSigmoid, HardSwish, Tanh, Softplus, Softsign, Mish,
ThresholdedRelu and Swish, every version ``onnx.defs`` has.

Oracle, legitimate variants, tolerance floors, accuracy budgets and the definitional decisions
(NaN and infinities only where the formula defines a result, Celu at ``x > alpha * max``
follows the text, Gelu's tanh constants...): :mod:`conformance.reference.activations`.  What
the entries add to the schema:

* family ``unary`` (rank 0-4 and zero-size shapes) for the fifteen one-input operators;
  PRelu is family ``shaped``: its own table of slope shapes (:data:`PRELU_SHAPES`), every
  unidirectionally broadcastable form from version 7 (``same``, ``trailing``, ``size1-dims``,
  ``scalar`` of rank 0 and 1, the exported per-channel ``channel`` [C, 1, 1],
  ``channel-keepdims`` [1, C, 1, 1], ``fewer-dims-size1`` [H, 1], ``trailing-size1``
  [1, H, W], a zero-size X), ``same`` and ``one`` (a slope of size 1) before;
* attribute states: the reference's table of non-default values
  (:func:`conformance.reference.activations.attribute_states`); the defaults are the schema's;
* numerics classes beyond the defaults: ``special`` (replacing the engine's grid: only the
  special values whose result the formula defines -- no ``-inf`` for Gelu, Mish, Swish and
  HardSwish, no infinities for Softsign, no NaN for HardSigmoid, HardSwish and
  ThresholdedRelu -- with subnormals, the smallest normal, +-max and the points where ``exp``
  overflows); ``near-overflow`` (around +-ln(max) of the type and of float32, where a naive
  ``log(1 + exp(x))`` overflows); ``worst-points`` (33 points within 0.2% of each x where
  onnxruntime 1.32's float32 error peaks, :data:`conformance.reference.activations.WORST_POINTS`;
  the operators listed there); integer types (Relu-14, PRelu-9/16) from the schema with the
  engine's ``int`` and ``int-extremes`` classes (PRelu: X in [-1000, 1000], slopes in
  [-3, 3]; products outside the type are never generated);
* tolerances from the reference (:func:`conformance.reference.activations.tolerance`: the
  legitimate variants' spread, the op's floor below which errors are absolute, and the
  accuracy budget ``ULP_BUDGET`` with its OpenCL source); ``ulps`` stays 0 because the
  ``tolerance`` hook applies the budget.  An element whose legitimate evaluation at the
  mandated precision overflows where the float64 oracle rounded to the type does not (a
  result at the edge of the type's range) is ill-posed and never generated (``defined``);
* error cases: Gelu with an unknown ``approximate``; PRelu (>= 7) with a slope that does not
  broadcast unidirectionally to X;
* explore mode: the engine's strategy over the same coordinates, and float attributes drawn
  beyond the table from :data:`EXPLORE_ATTRS` (tag ``params=drawn``).
"""

from __future__ import annotations

import math

import numpy as np
import onnx.defs

from .. import dtypes
from ..reference import activations as ref
from ..tolerance import Tolerance
from . import values as V
from .engine import register_entries
from .entry import Attrs, Entry, Err, Interval, Shape

#: Cases per type combination (the numerics classes and shapes cycle over them), chosen so
#: that every operator has at least as many cases as its retired generator made (seed 0).
PER_TYPE = {"Relu": 5, "LeakyRelu": 6, "Elu": 6, "Selu": 6, "Celu": 5, "Gelu": 10, "Sigmoid": 5,
            "HardSigmoid": 6, "HardSwish": 5, "Tanh": 5, "Softplus": 5, "Softsign": 5, "Mish": 5,
            "ThresholdedRelu": 5, "Swish": 5}

#: (op, float attribute) -> the closed range explore mode also draws a float32 value from
#: (``Entry.explore_attrs``).  The text restricts none of them except Celu's alpha (``x / alpha``:
#: nonzero; kept > 0, where ``where(x > 0, x, alpha * expm1(x / alpha))`` is the text's max/min form).
EXPLORE_ATTRS = {
    ("LeakyRelu", "alpha"): (-2.0, 2.0),
    ("Elu", "alpha"): (-2.0, 4.0),
    ("Selu", "alpha"): (0.0, 4.0),
    ("Selu", "gamma"): (0.0, 4.0),
    ("Celu", "alpha"): (0.0625, 4.0),
    ("HardSigmoid", "alpha"): (-2.0, 2.0),
    ("HardSigmoid", "beta"): (-1.0, 2.0),
    ("ThresholdedRelu", "alpha"): (-4.0, 4.0),
    ("Swish", "alpha"): (-4.0, 4.0),
}

#: PRelu's slope shapes.  Letters are dims drawn per case in [2, 4] (the same letter is the same
#: dim in X and slope), digits literal; the pattern's name starts with the slope's kind.
PRELU_SHAPES = (
    Shape("same/r0", {"X": "", "slope": ""}),
    Shape("same/r2", {"X": "SM", "slope": "SM"}),
    Shape("same/r4", {"X": "NCHW", "slope": "NCHW"}),
    Shape("same/zero-size", {"X": "S0", "slope": "S0"}),
    Shape("one", {"X": "SMK", "slope": "1"}, until=6),
    Shape("trailing/r3", {"X": "SMK", "slope": "MK"}, since=7),
    Shape("trailing/r4", {"X": "NCHW", "slope": "W"}, since=7),
    Shape("size1-dims/r3", {"X": "SMK", "slope": "S1K"}, since=7),
    Shape("size1-dims/r4", {"X": "NCHW", "slope": "1C1W"}, since=7),
    Shape("scalar/r0", {"X": "SMK", "slope": ""}, since=7),
    Shape("scalar/r1", {"X": "SM", "slope": "1"}, since=7),
    Shape("channel", {"X": "NCHW", "slope": "C11"}, since=7),
    Shape("channel-keepdims", {"X": "NCHW", "slope": "1C11"}, since=7),
    Shape("fewer-dims-size1", {"X": "NCHW", "slope": "H1"}, since=7),
    Shape("trailing-size1", {"X": "NCHW", "slope": "1HW"}, since=7),
    Shape("zero-size", {"X": "S0K", "slope": "K"}, since=7),
)


#: Ordinary PRelu slopes (both signs).
_SLOPES = Interval(-2.0, 2.0)


def _formals(op: str) -> set[str]:
    """The data input's formal names over the operator's versions (``X`` or ``input``)."""
    return {ref.input_name(op, v) for v in ref.versions(op)}


def _lead(ctx) -> str:
    """Element type of the data input."""
    return next(iter(ctx.types.values()))


def overflow_points(t: str) -> list[float]:
    """+-ln(max) of type ``t`` and of float32 times 0.95, 0.99, 1, 1.01, 1.05 and 1.2: where
    ``exp`` overflows in the type or in a float32 evaluation."""
    fmax = float(V.finfo(t).max)
    ths = sorted({math.log(fmax), math.log(float(np.finfo(np.float32).max))})
    pts = [s * th * f for th in ths for s in (1.0, -1.0) for f in (0.95, 0.99, 1.0, 1.01, 1.05, 1.2)]
    return [p for p in pts if abs(p) < fmax]


def special_values(op: str, t: str) -> list[float]:
    """The special inputs of ``op`` in floating type ``t`` (rounded to it): +-0, subnormals
    (the smallest, 4x it, half the smallest normal), the smallest normal, +-0.5, +-1, +-2,
    +-max and half of it, +-ln(max) of ``t`` and float32 and 1% beyond, and NaN / +inf / -inf
    where the reference says the formula defines a result (``Activation.specials``)."""
    a = ref.ACTIVATIONS[op]
    fi = V.finfo(t)
    sub, tiny = float(fi.smallest_subnormal), float(fi.smallest_normal)
    fmax = float(fi.max)
    ths = sorted({math.log(fmax), math.log(float(np.finfo(np.float32).max))})
    extra = [4 * sub, -4 * sub, tiny / 2, -tiny / 2] + [s * th * f for th in ths for s in (1.0, -1.0)
                                                         for f in (1.0, 1.01) if th * f < fmax]
    vals = V.float_specials(t, nan="nan" in a.specials, inf=False, extra=tuple(extra))
    return vals + [{"inf": math.inf, "-inf": -math.inf}[s] for s in a.specials if s != "nan"]


def _special(rng, ctx, shapes):
    """Every special value of the operator once, the rest of the drawn shape's size filled with
    uniform values in [-4, 4], shuffled, as a vector (like the engine's special grids)."""
    vals = special_values(ctx.op, _lead(ctx))
    n = max(int(np.prod(shapes[0], dtype=np.int64)), len(vals))
    x = np.concatenate([vals, rng.uniform(-4.0, 4.0, size=n - len(vals))])
    return [x[rng.permutation(n)]]


def _points(rng, ctx, shapes, pts):
    """The points as X: a vector of them (one input), or X of the drawn shape filled from them
    (each at least once where the size allows) and an ordinary slope (PRelu)."""
    pts = np.asarray(pts, dtype=np.float64)
    if len(shapes) == 1:
        return [pts]
    shape = shapes[0]
    n = int(np.prod(shape, dtype=np.int64))
    x = np.concatenate([pts[rng.permutation(pts.size)], rng.choice(pts, size=max(0, n - pts.size))])[:n]
    t = ctx.types["slope"]
    return [x.reshape(shape), V.sample_float(rng, shapes[1], t, _SLOPES, "normal")]


def _near_overflow(rng, ctx, shapes):
    """X around +-ln(max) of the type and of float32 (:func:`overflow_points`)."""
    return _points(rng, ctx, shapes, overflow_points(_lead(ctx)))


def _worst_points(rng, ctx, shapes):
    """33 points within 0.2% of each x where onnxruntime 1.32's float32 error peaks
    (:data:`conformance.reference.activations.WORST_POINTS`)."""
    pts = np.asarray(ref.WORST_POINTS[ctx.op], dtype=np.float64)
    return _points(rng, ctx, shapes, (pts[:, None] * (1.0 + np.linspace(-2e-3, 2e-3, 33))[None, :]).ravel())


def _oracle(ctx, x, *rest, **attrs):
    return ref.oracle(ctx.op, x, attrs, rest[0] if rest else None)


def _variants(ctx, inputs, attrs):
    """(oracle rounded to the output type as float64, the reference's legitimate variants)."""
    elem = V.elem(next(iter(ctx.out_types.values())))
    x, slope = inputs[0], (inputs[1] if len(inputs) > 1 else None)
    with np.errstate(all="ignore"):
        e = dtypes.round_to(ref.oracle(ctx.op, x, attrs, slope), elem).astype(np.float64)
        return e, ref.variants(ctx.op, x, attrs, elem, slope)


def _defined(ctx, *inputs, **attrs):
    """False where a legitimate variant overflows and the oracle rounded to the type does not:
    a result at the edge of the type's range is ill-posed at the mandated precision."""
    x = inputs[0]
    if x.dtype == object:
        return np.ones(x.shape, dtype=bool)
    e, var = _variants(ctx, inputs, attrs)
    ok = np.ones(e.shape, dtype=bool)
    for v in var.values():
        ok &= ~(np.isfinite(e) & ~np.isfinite(v))
    return ok


def _tolerance(ctx, inputs, attrs, outputs):
    """:func:`conformance.reference.activations.tolerance` of the one output (exact for integers)."""
    (name, _), = outputs.items()
    t = ctx.out_types[name]
    if V.kind(t) != V.FLOAT:
        return {name: Tolerance(0.0, 0.0, exact=True)}
    e, var = _variants(ctx, inputs, attrs)
    return {name: ref.tolerance(ctx.op, e, var, V.elem(t), x=inputs[0], attrs=attrs)}


def _source(op: str) -> str:
    if op in ref.ULP_BUDGET:
        b, src = ref.ULP_BUDGET[op]
        return f"{b:g} ulp of the tolerance's unit (reference ULP_BUDGET): {src}"
    return "piecewise linear or rational: the variants' spread and 4 ulp (reference tolerance floors)"


def _entry(op: str) -> Entry:
    a = ref.ACTIVATIONS[op]
    numerics = {"special": _special, "near-overflow": _near_overflow}
    if op in ref.WORST_POINTS:
        numerics["worst-points"] = _worst_points
    iv = Interval(scale=-a.domain_lo)
    errors = ()
    if op == "Gelu":
        errors = (Err("approximate must be 'none' or 'tanh'", "approximate", {"approximate": "erf"}),)
    return Entry(op, _oracle, values={f: iv for f in _formals(op)},
                 attrs=tuple(Attrs(s) for s in ref.attribute_states(op)), float_numerics=numerics,
                 nan="nan" in a.specials, inf={"inf", "-inf"} <= set(a.specials), defined=_defined,
                 # the one infinity the formula defines (Gelu, Mish, Swish, HardSwish: +inf only) joins the
                 # special values the engine lays out in vectorizable rows (special-rows)
                 specials=tuple({"inf": math.inf, "-inf": -math.inf}[k] for k in a.specials
                                if k in ("inf", "-inf") and not {"inf", "-inf"} <= set(a.specials)),
                 tolerance=_tolerance, errors=errors, per_type=PER_TYPE[op], ulps_source=_source(op),
                 explore_attrs={k: r for (o, k), r in EXPLORE_ATTRS.items() if o == op})


def _prelu() -> Entry:
    # a sweep: every slope shape of versions >= 7 in every type combination
    return Entry("PRelu", _oracle, family="shaped", shapes=PRELU_SHAPES,
                 per_type=sum(sh.applies(7) for sh in PRELU_SHAPES),
                 values={"X": Interval(scale=-ref.ACTIVATIONS["PRelu"].domain_lo), "slope": _SLOPES}, ints={"X": (-1000, 1000), "slope": (-3, 3)},
                 float_numerics={"near-overflow": _near_overflow}, defined=_defined, tolerance=_tolerance,
                 errors=(Err("slope (2,) does not broadcast unidirectionally to X (2, 3)", "slope-shape",
                             shapes=((2, 3), (2,)), since=7),),
                 notes={7: "unidirectional broadcasting of slope (before: slope of X's shape or of size 1)"},
                 ulps_source=_source("PRelu"))


ENTRIES = tuple(_prelu() if op == "PRelu" else _entry(op) for op in ref.ACTIVATIONS if onnx.defs.has(op))
register_entries(ENTRIES, family="activations")
