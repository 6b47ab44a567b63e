"""Dropout (ai.onnx 1, 6, 7, 10, 12, 13, 22) as an entry of the operator table (family ``shaped``).

Oracle, mode, checks and the definitional decisions: :mod:`conformance.reference.dropout`
(inference is the identity bit for bit, NaN / infinities / -0 / subnormals included, with an
all-true mask; training keeps each element with probability ``1 - ratio`` and scales it by
``1 / (1 - ratio)``; random outputs are judged by
:func:`~conformance.reference.dropout.check_dropout` through the entry's ``check`` hook).
What the entry adds to the schema:

* **numerics classes**, each of one mode (the entry's ``numerics_rule`` keeps them honest:
  a class is only built where the model has its mode):

  - inference: ``normal`` (Gaussian data, standard deviation 2), ``wide`` (magnitudes from
    the smallest normal to half the largest value; every finite value for float8) and
    ``special`` (NaN, +-inf, -0, subnormals, +-max sprinkled in; float8: the types' own
    specials first, then any of their values), kept bit for bit.  From 12 a present
    ``training_mode`` is false and a present ``ratio`` any value in [0, 1) (ignored);
    at 1 and 6 the attribute state is ``is_test`` nonzero or ratio 0; at 7 and 10 every
    state (no mode in the model);
  - ``train-ratio0``: training with ratio 0, the identity (special data): from 12
    ``ratio`` = 0 and ``training_mode`` = true both given; at 1 and 6 ``is_test`` 0 with
    ``ratio`` 0;
  - ``zero-data``: training with a nonzero ratio on all-zero data: zeros whatever is
    dropped (compared exactly; judged by the check when the mask is requested);
  - ``random``: training with a nonzero ratio given (the input from 12, any attribute state
    at 1 and 6) on 4096 nonzero finite elements, judged by the check; ``random-ratio-unset``
    the same with the ratio not given (the input absent from 12, the attribute at 1 and 6:
    0.5).  Ratios that meet a float8 type (T or T1) are
    0.5, 0.25 or 0.375, exact in every T1, and the data (standard deviation 2) stay far
    below the float8 maxima after scaling;

* **shape patterns**: ranks 0 to 4, a zero-size tensor, and two 4096-element patterns
  (4x1024 for ``random``, 16x16x16 for both random classes) at the versions that can
  train, so that every type combination gets a random case with its ratio given;
* **attribute states** beyond absent and the explicit default: ``is_test`` 1 with ratio
  absent / 0.2 / 0.7, ratio 0 (with and without ``is_test`` 0), ratio 0.25, 0.3 and 0.9
  (the versions with a ``ratio`` attribute), and ``seed`` from 12; version 1's
  ``consumed_inputs`` comes from the engine;
* **outputs**: the mask only where its type is bool (from 10); before it has type T and
  the text does not say what it holds (coverage declares it);
* **error cases**: ``ratio`` 1.0 and -0.1 with ``training_mode`` true ("with value in
  [0, 1)"), for every data type of every version with the input, the ratio's type
  rotating over T1.

Exact tolerances with the sign of zero checked (the identity keeps -0).  At 12 and 13 a
training model without ``ratio`` is judged by
:func:`~conformance.reference.dropout.check_dropout_unset_ratio` (the text says both "a
simple copy" and "default to 0.5").
"""

from __future__ import annotations

import numpy as np

from ..opspec import op_spec
from ..reference import dropout as ref
from . import values as V
from .engine import register_entries
from .entry import REALS, Attrs, Entry, Err, Shape

#: Classes whose models run in inference (or train with ratio 0 at 1 and 6).
INFERENCE = ("normal", "wide", "special")
#: Classes whose models train.
TRAINING = ("train-ratio0", "zero-data", "random", "random-ratio-unset")
#: Ratios of inference models (ignored): exact in every T1.
INFERENCE_RATIOS = (0.0, 0.5, 0.875, 0.375, 0.25)
#: More inference ratios where T1 is not a float8 type.
INFERENCE_RATIOS_WIDE = (0.9, 0.3)
#: Ratios of random training where T or T1 is a float8 type: exact in every T1 (at most two
#: mantissa bits), scales 2, 4/3 and 8/5.
RANDOM_RATIOS_FLOAT8 = (0.5, 0.25, 0.375)
#: Ratios of random training otherwise (0.2, 0.3, 0.1 are rounded to T1: the check reads the
#: ratio as fed).
RANDOM_RATIOS = (0.5, 0.2, 0.25, 0.375, 0.3, 0.1)
#: Elements of the random classes' patterns (statistical power of the check).
LONG = 4096

_SPEC = op_spec(ref.OP)
#: Every element type of ``data`` in any version (the float8 types from 22), from the schema.
DATA_TYPES = tuple(dict.fromkeys(
    t[7:-1] for vs in _SPEC.versions.values() for f in vs.inputs if f.name == "data"
    for t in vs.type_constraints[f.type_str]))


def _is_float8(name: str | None) -> bool:
    return name is not None and V.kind(name) == V.FLOAT and name not in V.IEEE


def _trainable_runs() -> list[tuple[int, int]]:
    """Contiguous runs of since_versions that have a mode (``is_test`` or ``training_mode``),
    as (since, until) for :class:`Shape` (the last run open-ended)."""
    vs = list(_SPEC.since_versions)
    runs: list[list[int]] = []
    for i, v in enumerate(vs):
        if ref.mode_source(v) is None:
            continue
        if runs and vs.index(runs[-1][-1]) == i - 1:
            runs[-1].append(v)
        else:
            runs.append([v])
    return [(r[0], r[-1] if r[-1] != vs[-1] else 10**6) for r in runs]


def _shapes() -> tuple[Shape, ...]:
    small = INFERENCE + ("train-ratio0", "zero-data")
    out = [
        Shape("r2", {"data": "ML"}, dims={"M": (1, 4), "L": (2, 6)}, numerics=small),
        Shape("r1", {"data": "L"}, dims={"L": (2, 12)}, numerics=small),
        Shape("r3", {"data": "SML"}, dims={"S": (1, 4), "M": (1, 4), "L": (2, 6)}, numerics=small),
        Shape("r4", {"data": "NSML"}, dims={"N": (1, 3), "S": (1, 4), "M": (1, 4), "L": (2, 6)}, numerics=small),
        Shape("r0", {"data": ""}, numerics=small),
        Shape("zero-size", {"data": "0L"}, dims={"L": (2, 6)}, numerics=("normal", "train-ratio0", "zero-data")),
    ]
    for since, until in _trainable_runs():
        out.append(Shape("long/4x1024", {"data": "4L"}, since=since, until=until, dims={"L": (LONG // 4, LONG // 4)},
                         numerics=("random",)))
        out.append(Shape("long/16x16x16", {"data": "LLL"}, since=since, until=until, dims={"L": (16, 16)},
                         numerics=("random", "random-ratio-unset")))
    return tuple(out)


# ----------------------------------------------------------------------------- numerics classes
def _gauss(rng, t, shape):
    """Gaussian data (standard deviation 2) representable in ``t``, no zeros."""
    x = np.array(V.representable(rng.normal(0.0, 2.0, size=shape), t), dtype=np.float64).reshape(shape)
    x[x == 0] = 1.0
    return x


def _specials(t: str) -> tuple[list[float], list[float]]:
    """(the values every special case should show first, the other special values) of ``t``."""
    if _is_float8(t):
        first = ref.special_values(V.elem(t))
    else:
        fi = V.finfo(t)
        sub = float(fi.smallest_subnormal)
        first = [np.nan, np.inf, -np.inf, -0.0, sub, -3 * sub, float(fi.max), -float(fi.max)]
    key = {repr(v) for v in first}
    rest = [v for v in V.float_specials(t) if repr(v) not in key]
    return first, rest


def _sprinkle(rng, t, x):
    """``x`` with special values written into random positions: the type's main specials
    first (in random order), then others, as many as fit."""
    x = np.array(x, dtype=np.float64)
    flat = x.reshape(-1)
    first, rest = _specials(t)
    vals = [first[i] for i in rng.permutation(len(first))] + [rest[i] for i in rng.permutation(len(rest))]
    k = min(flat.size, len(vals))
    for p, v in zip(rng.permutation(flat.size)[:k], vals[:k]):
        flat[p] = v
    return x


def _params(ctx, rng, ratio=None, training=None) -> list:
    """The values of the present optional inputs (``ratio``, ``training_mode``)."""
    out = []
    if "ratio" in ctx.types:
        out.append(np.float64(ratio))
    if "training_mode" in ctx.types:
        out.append(np.bool_(training))
    return out


def _inference_ratio(rng, ctx) -> float:
    pool = INFERENCE_RATIOS + (() if _is_float8(ctx.types.get("ratio")) else INFERENCE_RATIOS_WIDE)
    return float(pool[int(rng.integers(len(pool)))])


def _random_ratio(rng, ctx) -> float:
    f8 = _is_float8(ctx.types["data"]) or _is_float8(ctx.types.get("ratio"))
    pool = RANDOM_RATIOS_FLOAT8 if f8 else RANDOM_RATIOS
    return float(pool[int(rng.integers(len(pool)))])


def _normal(rng, ctx, shapes):
    return [_gauss(rng, ctx.types["data"], shapes[0])] + _params(ctx, rng, _inference_ratio(rng, ctx), False)


def _wide(rng, ctx, shapes):
    x = V.sample_float(rng, shapes[0], ctx.types["data"], REALS, "wide")
    return [x] + _params(ctx, rng, _inference_ratio(rng, ctx), False)


def _special(rng, ctx, shapes):
    t = ctx.types["data"]
    return [_sprinkle(rng, t, _gauss(rng, t, shapes[0]))] + _params(ctx, rng, _inference_ratio(rng, ctx), False)


def _train_ratio0(rng, ctx, shapes):
    t = ctx.types["data"]
    return [_sprinkle(rng, t, _gauss(rng, t, shapes[0]))] + _params(ctx, rng, 0.0, True)


def _zero_data(rng, ctx, shapes):
    return [np.zeros(shapes[0])] + _params(ctx, rng, _random_ratio(rng, ctx), True)


def _random(rng, ctx, shapes):
    return [_gauss(rng, ctx.types["data"], shapes[0])] + _params(ctx, rng, _random_ratio(rng, ctx), True)


def _rule(version, numerics, attrs, optional) -> bool:
    """Whether a class may be built with these attributes and optional inputs (module
    docstring): its mode must be the model's."""
    src = ref.mode_source(version)
    if src is None:
        return numerics in INFERENCE
    if src == "training_mode":
        if numerics in INFERENCE:
            return True
        if numerics in ("train-ratio0", "random"):
            return "ratio" in optional and "training_mode" in optional
        if numerics == "random-ratio-unset":
            return "ratio" not in optional and "training_mode" in optional
        return "training_mode" in optional
    training, r = ref.mode(version, attrs)
    if numerics in INFERENCE:
        return not training or r == 0
    if numerics == "train-ratio0":
        return training and r == 0
    if numerics == "random-ratio-unset":
        return training and "ratio" not in attrs
    if numerics == "random":
        return training and r > 0 and "ratio" in attrs
    return training and r > 0


# ----------------------------------------------------------------------------- hooks
def _oracle(ctx, data, ratio=None, training_mode=None, **attrs):
    return ref.expected(ctx.version, attrs, data, ratio, training_mode)


def _check(ctx, inputs, attrs):
    data, ratio, training = (list(inputs) + [None, None])[:3]
    if not ref.random_outcome(ctx.version, attrs, data, ratio, training, "mask" in ctx.outputs):
        return None
    if ratio is None and ref.mode_source(ctx.version) == "training_mode" and ref.unset_ratio_is_copy(ctx.version):
        return ref.CHECK_UNSET
    return ref.CHECK


def _mask_is_bool(version: int) -> bool:
    """Whether the mask output has type bool at ``version`` (from 10; before, type T)."""
    vs = _SPEC.versions[version]
    t = next(f.type_str for f in vs.outputs if f.name == "mask")
    return vs.type_constraints.get(t, [t]) == ["tensor(bool)"]


def _outputs_rule(version, attrs, outputs) -> bool:
    return "mask" not in outputs or _mask_is_bool(version)


def _tags(ctx) -> dict:
    """``mask_semantics=inferred`` where the mask is requested at a version whose text does not
    say what it holds in inference (10: all true is the only mask consistent with ``output =
    data`` and with the text of 12; before 10 the mask is not requested)."""
    if "mask" in ctx.outputs and ref.mode_source(ctx.version) is None:
        return {"mask_semantics": "inferred"}
    return {}


def _errors() -> tuple[Err, ...]:
    """ratio 1.0 and -0.1 in training, per data type T of every version with ``training_mode``,
    the ratio's type rotating over T1 (both from the schema)."""
    out = []
    for v, vs in _SPEC.versions.items():
        if ref.mode_source(v) != "training_mode":
            continue
        ts = [x[7:-1] for x in vs.type_constraints[next(f.type_str for f in vs.inputs if f.name == "data")]]
        t1s = [x[7:-1] for x in vs.type_constraints[next(f.type_str for f in vs.inputs if f.name == "ratio")]]
        for i, t in enumerate(ts):
            for k, r in enumerate((1.0, -0.1)):
                out.append(Err(f"ratio {r} with training_mode true: the ratio input takes a 'value in [0, 1)'",
                               f"ratio={r}", shapes=((2, 3), (), ()), since=v, until=v, type_name=t,
                               types={"ratio": t1s[(i + k) % len(t1s)]},
                               values={"ratio": r, "training_mode": True}))
    return tuple(out)


ENTRY = Entry(
    ref.OP, _oracle, family="shaped", shapes=_shapes(), per_type=8, signed_zero=True,
    float_numerics={"normal": _normal, "wide": _wide, "special": _special, "train-ratio0": _train_ratio0,
                    "zero-data": _zero_data, "random": _random, "random-ratio-unset": _random},
    numerics_types={n: DATA_TYPES for n in ("wide",) + TRAINING},  # float8 data get them too
    numerics_rule=_rule, check=_check, tags=_tags, outputs_rule=_outputs_rule, errors=_errors(),
    attrs=(Attrs({"is_test": 1}), Attrs({"is_test": 1, "ratio": 0.2}), Attrs({"is_test": 1, "ratio": 0.7}),
           Attrs({"ratio": 0.0}), Attrs({"is_test": 0, "ratio": 0.0}), Attrs({"ratio": 0.25}),
           Attrs({"ratio": 0.3}), Attrs({"ratio": 0.9}), Attrs({"seed": 3})),
    notes={7: "is_test removed: no mode in the model (an inference runtime copies)",
           10: "mask of type bool",
           12: "ratio and training_mode inputs; ratio absent: 'a simple copy' and 'default to 0.5'",
           22: "float8 and bfloat16 T1; an absent ratio defaults to 0.5"},
)

ENTRIES = (ENTRY,)
register_entries(ENTRIES, family="dropout")
