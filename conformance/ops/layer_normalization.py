"""LayerNormalization (ai.onnx 17, unchanged through opset 28) as an entry of the operator table
(family ``shaped``).

Oracle, legitimate variants, tolerance derivation and the definitional decisions:
:mod:`conformance.reference.layer_normalization` (two-pass variance per the text, not the
function body's one-pass form; statistics in ``U`` = ``stash_type``; Scale/B broadcast
inside ``X.shape[axis:]``; special values by the IEEE formula).  What the entry adds to the
schema:

* the type combinations ``(T, U)`` come from the schema; ``U`` is bound only by the optional
  outputs Mean/InvStdDev, so the combination fixes ``stash_type`` (``type_attrs``: the
  attribute's value is ``U``'s element type, 1 or 16);
* the shape table: every rank 1-5 with every ``axis`` in ``[-r, r)``, each pattern with a
  Scale and a B shape of one of the kinds the text's unidirectional broadcasting allows
  inside the normalized dims (``full``, ``fewer-dims``, ``size1-dims``, ``leading-ones``,
  ``scalar``: rank 0 or ``[1]``), in turn; ``axis`` omitted (rank 3); size-1 dims of X;
  zero-size outer dimensions; long rows (4096 and 4608 normalized elements); rows of 256
  (near-limit accumulation); a power-of-two row for constant rows.  Drawn dims are 2 or
  more: every normalized extent has at least 2 elements, every pattern with an outer axis
  at least 2 rows (explore mode shrinks to dims of 2).  Each rank/axis pattern exists once
  per optional-output set of the schema (``Shape.outputs``), so the per-type sweep covers
  every (T, U, rank, axis, outputs) tuple; the other patterns request none or both
  statistics;
* numerics classes (:data:`NUMERICS`): ``normal``, ``wide`` (rows of magnitudes 2^-8 to
  2^8), ``special`` (rows with a NaN, with +inf and -inf, and -- only when Mean is not
  requested -- a single infinity: Mean = +-inf by the formula, which Welford kernels turn
  into NaN; one finite row kept), ``large-offset`` (mean >> std, resolvable in ``U`` but
  lost by ``E[x^2] - E[x]^2``), ``constant-rows`` (half the rows constant; with a
  power-of-two extent constants with few mantissa bits, so every summation order gives the
  mean exactly, else 0), ``tiny-variance`` (noise of a few ulps of the coarser of T and U),
  ``near-limits`` (float16: half its largest value; other types: the largest magnitude
  whose float32 squares summed over a row stay finite);
* attribute states: ``epsilon`` 1e-12, 0 and 0.5 beyond absent and the explicit default
  (explore mode also draws any float32 epsilon in [1e-12, 1]); epsilon 0 only with classes
  whose rows have a clearly positive variance in ``U`` (``numerics_rule``; a zero variance
  with epsilon 0 is not generated);
* two data sets for ``large-offset`` and ``near-limits`` cases (one model run twice; Scale
  and B drawn afresh when they are graph inputs, the offset's sign drawn per set);
* tolerances from :func:`conformance.reference.layer_normalization.tolerances` (variants'
  spread, ulps of the mandated precision, the propagated rounding of the statistics);
* error cases: ``axis`` outside ``[-r, r)`` for ranks 1-5 (both signs), Scale and B not
  unidirectionally broadcastable inside ``X.shape[axis:]`` (size mismatch, more dims than
  X), ``stash_type`` outside ``U`` (7, 10, 11) with the statistics requested;
* tags ``axis`` (the node's, default -1), ``stash_type``, ``scale_shape`` and ``bias_shape``
  (the kind of the parameter's shape, ``absent`` for no B).

Not generated (undefined or contested, see the reference module): an empty normalized
extent; Scale/B varying along a non-normalized axis; epsilon 0 with a row whose variance can
be 0.
"""

from __future__ import annotations

import itertools

import numpy as np
import onnx.defs

from .. import dtypes
from ..reference import layer_normalization as ref
from . import values as V
from .engine import register_entries
from .entry import Attrs, Entry, Err, Shape

_SCHEMA = onnx.defs.get_schema(ref.OP, ref.SINCE)
#: The optional-output sets of the schema, fewest first: (), (Mean,), (InvStdDev,), (Mean, InvStdDev).
OUTPUT_SETS = tuple(c for k in range(3) for c in itertools.combinations(
    [f.name for f in _SCHEMA.outputs if f.option == onnx.defs.OpSchema.FormalParameterOption.Optional], k))
#: Scale/B shape kinds (module docstring), cycled over the rank/axis patterns.
KINDS = ("full", "fewer-dims", "size1-dims", "leading-ones", "scalar")
#: Dimension letters by position, and the largest dim per rank (at most ~1000 elements).
_LETTERS = "PQRST"
_CAPS = {1: 32, 2: 12, 3: 6, 4: 4, 5: 4}

#: (offset, std) of the large-offset class by (T, U): std stays resolved in T and in the
#: statistics' precision while E[x^2] - E[x]^2 in U (float) or in T loses it.
LARGE_OFFSET = {
    ("float16", "float"): (512.0, 16.0),
    ("bfloat16", "float"): (1024.0, 64.0),
    ("float", "float"): (1.0e4, 1.0),
    # X is cast to float32 by the mandated computation: 1e9 +- 1e-3 would not survive it
    ("double", "float"): (1.0e3, 1.0),
}
#: with bfloat16 statistics X is cast to 8 significant bits: keep std >= 16 ulp(offset)
LARGE_OFFSET_BF16U = (256.0, 32.0)
#: Constants of constant rows with a power-of-two extent (few mantissa bits: every partial sum exact).
CONSTANTS = (0.0, 1.0, -3.0, 0.5, 2.25, -0.75, 8.0)
#: Classes whose rows have a clearly positive variance: the ones epsilon 0 admits.
POSITIVE_VARIANCE = ("normal", "wide", "special", "large-offset", "near-limits")


# ----------------------------------------------------------------------------- shapes
def _param(kind: str, x: str, ax: int, i: int) -> str | None:
    """Template of a Scale/B of ``kind`` for X template ``x`` and axis ``ax`` (>= 0), or None
    where the kind does not apply; ``i`` varies the choice between patterns."""
    norm = x[ax:]
    if kind == "full":
        return norm
    if kind == "fewer-dims":
        return norm[1 + i % (len(norm) - 1):] if len(norm) >= 2 else None
    if kind == "size1-dims":
        pos = i % len(norm)
        return norm[:pos] + "1" + norm[pos + 1:]
    if kind == "leading-ones":
        return "1" * (1 + i % ax) + norm if ax > 0 else None
    if kind == "scalar":
        return "" if i % 2 == 0 else "1"
    raise ValueError(kind)


def _kind(start: int, x: str, ax: int, i: int) -> str:
    """The template of the first kind that applies, in cyclic order from ``start``."""
    for k in range(len(KINDS)):
        t = _param(KINDS[(start + k) % len(KINDS)], x, ax, i)
        if t is not None:
            return t
    raise AssertionError("full always applies")


def _dims(x: str) -> dict[str, tuple[int, int]]:
    """Letter ranges: every dim in [2, cap] (the largest per rank), so that every normalized
    extent has at least 2 elements, every pattern with an outer axis at least 2 rows, and a
    size-1 dim of Scale/B always broadcasts; X's own size-1 dims have a pattern of their own."""
    return {c: (2, _CAPS[len(x)]) for c in x if c.isalpha()}


def _with_outputs(name: str, inputs: dict, attrs: dict, dims: dict, sets=OUTPUT_SETS, numerics=()) -> list[Shape]:
    """One pattern per optional-output set (the set in the name unless it is empty)."""
    return [Shape(name + ("/" + "+".join(o) if o else ""), inputs, attrs, dims=dims, numerics=numerics, outputs=(o,))
            for o in sets]


def _shapes() -> tuple[Shape, ...]:
    out: list[Shape] = []
    both = (OUTPUT_SETS[0], OUTPUT_SETS[-1])
    i = 0
    for r in range(1, 6):
        x = _LETTERS[:r]
        for a in range(-r, r):
            ax = a % r
            inputs = {"X": x, "Scale": _kind(i, x, ax, i), "B": _kind(2 * i + 1, x, ax, i + 1)}
            out += _with_outputs(f"r{r}/axis={a}", inputs, {"axis": a}, _dims(x))
            i += 1
    out += _with_outputs("r3/axis=default", {"X": "PQR", "Scale": "R", "B": "1R"}, {}, _dims("PQR"))
    out += _with_outputs("size1/Px1xRx1", {"X": "P1R1", "Scale": "R1", "B": "1R1"}, {"axis": 1}, _dims("P1R1"), both)
    empty = ("normal",)  # no element: one class says it all
    out += _with_outputs("zero-size/0xQ", {"X": "0Q", "Scale": "Q", "B": "Q"}, {"axis": -1}, {"Q": (2, 8)}, both,
                         empty)
    out += _with_outputs("zero-size/Px0xRxS", {"X": "P0RS", "Scale": "S", "B": "RS"}, {"axis": 2},
                         {"P": (1, 3), "R": (1, 4), "S": (2, 4)}, both, empty)
    long = ("normal", "large-offset")  # accumulation over long rows, with and without an offset
    out += _with_outputs("long-rows/2x4096", {"X": "2L", "Scale": "L", "B": "L"}, {"axis": -1}, {"L": (4096, 4096)},
                         both, long)
    out += _with_outputs("long-rows/2x64x64", {"X": "2LL", "Scale": "LL", "B": "L"}, {"axis": 1}, {"L": (64, 64)},
                         both, long)
    out += _with_outputs("long-rows/3x4608", {"X": "3L", "Scale": "L", "B": "L"}, {"axis": 1}, {"L": (4608, 4608)},
                         both, long)
    out += _with_outputs("rows-256/4x256", {"X": "4L", "Scale": "L", "B": "L"}, {"axis": -1}, {"L": (256, 256)},
                         both, ("near-limits", "large-offset", "normal"))
    out += _with_outputs("pow2/Px2x4x8", {"X": "P248", "Scale": "48", "B": "248"}, {"axis": 1}, {"P": (2, 3)},
                         both, ("constant-rows", "tiny-variance"))
    return tuple(out)


SHAPES = _shapes()


# ----------------------------------------------------------------------------- numerics
def _t(ctx) -> str:
    return ctx.types["X"]


def _u(ctx) -> str:
    return dtypes.type_name(ref.stash_elem_type(ctx.attrs["stash_type"]))


def _rows_n(ctx, shape) -> tuple[int, int]:
    ax = ctx.attrs["axis"] % len(shape)
    return int(np.prod(shape[:ax], dtype=np.int64)), int(np.prod(shape[ax:], dtype=np.int64))


def _params(rng, ctx, shapes) -> list[np.ndarray]:
    """Scale (magnitudes 0.5-1.5, a fifth negative) and B (standard normal) if present."""
    t = _t(ctx)
    mag = rng.uniform(0.5, 1.5, size=shapes[1])
    out = [V.representable(mag * np.where(rng.random(size=shapes[1]) < 0.2, -1.0, 1.0), t)]
    if len(shapes) > 2:
        out.append(V.representable(rng.normal(0.0, 1.0, size=shapes[2]), t))
    return out


def _positive(x: np.ndarray, ctx) -> bool:
    """Every finite row has a clearly nonzero variance once cast to U."""
    rows, n = _rows_n(ctx, x.shape)
    r = V.representable(x.reshape(rows, n), _u(ctx))
    r = r[np.isfinite(r).all(axis=1)]
    return bool(np.all(np.std(r, axis=1) > dtypes.eps(dtypes.elem_type(_u(ctx))) * np.max(np.abs(r), axis=1)))


def _class(draw_x):
    """A numerics class from a function drawing X (float64); with epsilon 0, X is drawn again
    until every finite row has a clearly positive variance in U."""

    def fn(rng, ctx, shapes):
        for _ in range(50):
            x = V.representable(draw_x(rng, ctx, tuple(shapes[0])), _t(ctx))
            if ctx.attrs["epsilon"] != 0.0 or _positive(x, ctx):
                return [x] + _params(rng, ctx, shapes)
        raise ValueError(f"{draw_x.__name__}: no rows with a positive variance for epsilon 0 in 50 draws")

    fn.__name__ = draw_x.__name__
    return fn


def _normal(rng, ctx, shape):
    """Offset -1..1 and spread 0.5..2; long rows (1024+ elements) offset 1..3 so sums grow."""
    if _rows_n(ctx, shape)[1] >= 1024:
        return rng.normal(rng.uniform(1.0, 3.0), 1.0, size=shape)
    return rng.normal(rng.uniform(-1.0, 1.0), rng.uniform(0.5, 2.0), size=shape)


def _wide(rng, ctx, shape):
    """Each row its own magnitude 2^-8 .. 2^8 (offset and spread): rows are normalized apart."""
    rows, n = _rows_n(ctx, shape)
    mag = 2.0 ** rng.uniform(-8.0, 8.0, size=(rows, 1))
    return (mag * (rng.uniform(-2.0, 2.0, size=(rows, 1)) + rng.normal(0.0, 1.0, size=(rows, n)))).reshape(shape)


def _large_offset(rng, ctx, shape):
    t, u = _t(ctx), _u(ctx)
    offset, std = LARGE_OFFSET[(t, u)] if u == "float" else LARGE_OFFSET_BF16U
    return (offset if rng.integers(0, 2) else -offset) + rng.normal(0.0, std, size=shape)


def _tiny_variance(rng, ctx, shape):
    coarse = max(dtypes.eps(dtypes.elem_type(_t(ctx))), dtypes.eps(dtypes.elem_type(_u(ctx))))
    return float(rng.choice([1.0, -2.0, 0.5])) + rng.normal(0.0, 2.0 * coarse, size=shape)


def _near_limits(rng, ctx, shape):
    t = _t(ctx)
    if t == "float16":
        return rng.uniform(-1.0, 1.0, size=shape) * float(V.finfo(t).max) * 0.5
    # the largest magnitude M with n * (2M)^2 well below float32's max (two-pass D can be 2M)
    n = _rows_n(ctx, shape)[1]
    return rng.uniform(-1.0, 1.0, size=shape) * float(np.sqrt(float(np.finfo(np.float32).max) / max(n, 1)) / 8.0)


def _constant_rows(rng, ctx, shape):
    rows, n = _rows_n(ctx, shape)
    x = rng.normal(0.0, 1.0, size=(rows, n))
    pow2 = n & (n - 1) == 0
    for r_ in rng.choice(rows, size=max(1, rows // 2), replace=False) if rows else []:
        x[r_, :] = CONSTANTS[int(rng.integers(0, len(CONSTANTS)))] if pow2 else 0.0
    return x.reshape(shape)


def _special(rng, ctx, shape):
    rows, n = _rows_n(ctx, shape)
    x = V.representable(rng.normal(0.0, 1.0, size=(rows, n)), _t(ctx))
    kinds = ["nan", "inf-pair"] + (["inf", "-inf"] if "Mean" not in ctx.outputs else [])
    order = [kinds[int(i)] for i in rng.permutation(len(kinds))]
    for r_ in range(rows if rows == 1 else max(0, rows - 1)):  # keep one finite row when possible
        kind = order[r_ % len(order)]
        pos = rng.choice(n, size=2, replace=False)
        if kind == "nan":
            x[r_, pos[0]] = np.nan
        elif kind == "inf-pair":
            x[r_, pos[0]], x[r_, pos[1]] = np.inf, -np.inf
        else:
            x[r_, pos[0]] = np.inf if kind == "inf" else -np.inf
    return x.reshape(shape)


#: The entry's numerics classes (``normal``, ``wide`` and ``special`` replace the defaults).
NUMERICS = {"normal": _class(_normal), "wide": _class(_wide), "special": _class(_special),
            "large-offset": _class(_large_offset), "constant-rows": _class(_constant_rows),
            "tiny-variance": _class(_tiny_variance), "near-limits": _class(_near_limits)}


def _numerics_rule(version, numerics, attrs, optional) -> bool:
    """Epsilon 0 only with rows whose variance is clearly positive (module docstring)."""
    return attrs.get("epsilon") != 0.0 or numerics in POSITIVE_VARIANCE


# ----------------------------------------------------------------------------- hooks
def _oracle(ctx, X, Scale, B, axis, epsilon, stash_type):
    return ref.layer_normalization(X, Scale, B, axis=axis, epsilon=epsilon, stash_type=stash_type)


def _tolerance(ctx, inputs, attrs, outputs):
    X, Scale, B = inputs
    return ref.tolerances(X, Scale, B, axis=attrs["axis"], epsilon=attrs["epsilon"], stash_type=attrs["stash_type"],
                          t_elem=V.elem(_t(ctx)), outputs=tuple(outputs), expected=outputs)


def _type_attrs(version, combo) -> dict:
    """``U`` fixes ``stash_type`` (its element type); float, the default, is left to the state."""
    u = V.elem(combo["U"])
    return {} if u == _SCHEMA.attributes["stash_type"].default_value.i else {"stash_type": u}


def shape_kind(shape, x_shape, axis: int) -> str:
    """The kind (:data:`KINDS`) of a Scale/B shape for X's shape and ``axis``.

    Raises:
        ValueError: not one of the kinds (not broadcastable inside ``X.shape[axis:]``).
    """
    shape, x_shape = tuple(shape), tuple(x_shape)
    norm = x_shape[axis % len(x_shape):]
    if shape in ((), (1,)) and norm != (1,):
        return "scalar"
    if shape == norm:
        return "full"
    if len(shape) > len(norm) and set(shape[: len(shape) - len(norm)]) == {1} and shape[-len(norm):] == norm:
        return "leading-ones"
    if len(shape) == len(norm) and all(d in (1, n) for d, n in zip(shape, norm)):
        return "size1-dims"
    if len(shape) < len(norm) and shape == norm[len(norm) - len(shape):]:
        return "fewer-dims"
    raise ValueError(f"{list(shape)} is not a parameter shape for X {list(x_shape)} at axis {axis}")


def _tags(ctx) -> dict:
    x, axis = ctx.shapes["X"], ctx.attrs["axis"]
    return {"axis": axis, "stash_type": ctx.attrs["stash_type"],
            "scale_shape": shape_kind(ctx.shapes["Scale"], x, axis),
            "bias_shape": shape_kind(ctx.shapes["B"], x, axis) if "B" in ctx.shapes else "absent"}


def _datasets(ctx, numerics, params):
    return (2, ()) if numerics in ("large-offset", "near-limits") else (1, ())


def _unknown(names, rank: int) -> dict:
    """Requested optional outputs of an error case, declared with ``rank`` unknown dims."""
    return {o: (None,) * rank for o in names}


def _errors() -> tuple[Err, ...]:
    types = ("float16", "bfloat16", "float", "double")
    out = []
    i = 0
    for r in range(1, 6):
        shape = (3, 2, 4, 2, 3)[:r]
        for a in (r, -r - 1):
            out.append(Err(f"axis {a} outside [-{r}, {r})", "axis-range", {"axis": a},
                           (shape, shape[-1:]) + ((shape[-1:],) if i % 2 else ()), type_name=types[i % 4],
                           outputs=_unknown(OUTPUT_SETS[i % 4], len(shape))))
            i += 1
    x = (2, 3, 4)
    for k, (s, a, why) in enumerate((((5,), -1, "size mismatch: Scale [5] vs X[axis:] [4]"),
                                     ((3, 5), 1, "size mismatch: Scale [3, 5] vs X[axis:] [3, 4]"),
                                     ((2, 4), 1, "size mismatch: Scale [2, 4] vs X[axis:] [3, 4]"),
                                     ((1, 1, 3, 4), 1, "Scale [1, 1, 3, 4] has more dims than X [2, 3, 4]"))):
        out.append(Err(why, "scale-shape", {"axis": a}, (x, s) + ((x[a % 3:],) if k % 2 else ()),
                       type_name=types[k % 4], outputs=_unknown(OUTPUT_SETS[k % 4], 3)))
    for k, (b, a, why) in enumerate((((5,), -1, "size mismatch: B [5] vs X[axis:] [4]"),
                                     ((2, 4), 1, "size mismatch: B [2, 4] vs X[axis:] [3, 4]"),
                                     ((1, 1, 3, 4), 1, "B [1, 1, 3, 4] has more dims than X [2, 3, 4]"))):
        out.append(Err(why, "bias-shape", {"axis": a}, (x, x[a % 3:], b), type_name=types[(k + 1) % 4],
                       outputs=_unknown(OUTPUT_SETS[(k + 1) % 4], 3)))
    for k, st in enumerate((7, 10, 11, 10)):
        # the statistics requested, declared with the type stash_type names (not in U)
        out.append(Err(f"stash_type {st} is not in U (float, bfloat16)", "stash-type", {"axis": -1, "stash_type": st},
                       (x, (4,)) + (((4,),) if k % 2 else ()), type_name=types[k % 4],
                       outputs=_unknown(OUTPUT_SETS[(3, 1, 2, 3)[k]], 3),
                       out_types={o: dtypes.type_name(st) for o in OUTPUT_SETS[-1]}))
    return tuple(out)


ENTRY = Entry(
    ref.OP, _oracle, family="shaped", shapes=SHAPES, per_type=len(SHAPES), float_numerics=NUMERICS,
    attrs=(Attrs({"epsilon": 1e-12}, tag="eps-tiny"), Attrs({"epsilon": 0.0}, tag="eps-zero"),
           Attrs({"epsilon": 0.5}, tag="eps-large")),
    explore_attrs={"epsilon": (float(np.float32(1e-12)), 1.0)},
    numerics_rule=_numerics_rule, type_attrs=_type_attrs, tolerance=_tolerance, tags=_tags, datasets=_datasets,
    errors=_errors(),
    notes={17: "Mean/InvStdDev of type U = stash_type; stage one in U, stage two in T"},
)
ENTRIES = (ENTRY,)
register_entries(ENTRIES, family="layer normalization")
