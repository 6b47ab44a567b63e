"""The random operators as entries of the operator table (family ``shaped``): RandomNormal,
RandomUniform (1, 22), RandomNormalLike, RandomUniformLike (1, 22), Bernoulli (15, 22) and
Multinomial (7, 22).

Their outputs are random: every value case is judged by a statistical check
(:mod:`conformance.reference.random`, :attr:`conformance.case.Case.check`): the output's
shape, element type and support exactly, its distribution by tests whose false-alarm
probability is at most 1e-6 per data set.  The oracles only give the output's shape (their
values are not compared and not stored).  What the entries add to the schema:

* **RandomNormal / RandomUniform** (no input): every output type T (``dtype`` written for
  every type but FLOAT, whose cases leave it out or write the explicit default); the required
  ``shape`` from the shape table: 16384 draws as ``[128, 128]``, ``[16384]`` and
  ``[8, 16, 128]`` (the statistical cases), a scalar ``[]``, ``[1]``, ``[2, 3]`` and a
  zero-size ``[0, 4]``; parameter states: absent, the explicit defaults, mean/scale -2/3,
  10/2, 0/0.001 (normal) and low/high -3/5, 10/10.5, -0.75/-0.5 (entirely negative: a kernel
  drawing on [0, high) fails the support), -1000/1000 (uniform), all exact in every T; the
  ``seed`` attribute absent, 0 and 1234 (a seeded case runs two data sets, each judged).
* **RandomNormalLike / RandomUniformLike**: every (T1, T2) pair; ``dtype`` written where T2
  differs from T1 and, where they agree, either left out (the input's type) or written
  (state ``dtype=input``); the input (any T1 values: strings, bools, complex included) of
  4096 elements as ``[64, 64]`` and ``[4, 1024]``, a scalar, ``[2, 3]`` and ``[0, k]``; the
  same parameter and seed states.
* **Bernoulli**: every (T1, T2) pair, ``dtype`` as for the *Like operators; p classes
  ``uniform-p`` (p uniform in [0, 1]), ``edge-p`` (a third exactly 0, a third exactly 1: those
  draws are determined) and ``small-p`` (p in [0, 0.1]), 4096 elements as ``[64, 64]`` and
  ``[16, 256]``, a scalar, ``[2, 3]``, zero-size.  Every Bernoulli case is contested
  (:data:`conformance.reference.random.BERNOULLI_CONTESTED`): the text draws 1 with
  probability p, the schema's function body with probability 1 - p; the check follows the
  text.
* **Multinomial**: every (T1, T2); ``dtype`` left out or explicit for int32, written for
  int64; ``sample_size`` absent (1), 5, 2048; logit classes ``logits`` (normal, sd 2),
  ``peaked`` (one class far above), ``masked`` (some classes -inf: never drawn), ``shifted``
  (logits near 100: ``exp`` overflows float32 unless the maximum is subtracted) and
  ``same-rows`` (2048 identical rows with ``sample_size`` at most 5: the draws are pooled, so
  the default ``sample_size`` 1 gets a distribution test); batch 1-4 with 2-10 classes, one
  class, an empty batch.
* **Error cases**: a ``dtype`` outside T / T2 (int32, string, UNDEFINED), RandomNormal /
  RandomUniform without ``shape`` or with a negative dimension, *Like and Bernoulli without
  ``dtype`` on an input type that is not an output type, Bernoulli on an int32 input,
  Multinomial's input of rank 1 and 3.

Not built: ``scale`` 0 or negative, ``low >= high`` and Bernoulli p outside [0, 1] (the text
does not say what they give or that they are errors).
"""

from __future__ import annotations

import numpy as np

from ..opspec import op_spec
from ..reference import random as ref
from . import values as V
from .engine import register_entries
from .entry import REALS, Attrs, Entry, Err, Shape

#: Draws of the statistical cases of RandomNormal / RandomUniform (no input to store).
N_GENERATED = 16384
#: Elements of the statistical cases of the operators with an input (the input is stored).
N_INPUT = 4096
#: Placeholder ``shape`` of the attribute states (every state must give the required attribute;
#: the shape pattern's own ``shape`` replaces it).
_PLACEHOLDER = [128, 128]


def _defaults(op: str) -> dict:
    """The schema's defaults of ``op``'s attributes (newest version), the explicit-default state."""
    spec = op_spec(op)
    vs = spec.versions[max(spec.since_versions)]
    return {k: a.default for k, a in vs.attributes.items() if a.default is not None}


def _types(op: str, param: str) -> dict[int, tuple[str, ...]]:
    """since_version -> the type names of type parameter ``param`` (from the schema)."""
    return {v: tuple(t[7:-1] for t in vs.type_constraints[param]) for v, vs in op_spec(op).versions.items()}


# ============================================================================ RandomNormal / RandomUniform
def _generated_shapes() -> tuple[Shape, ...]:
    big = ([128, 128], [N_GENERATED], [8, 16, 128])
    out = [Shape(f"n{N_GENERATED}/{'x'.join(map(str, s))}", {}, attrs={"shape": s}) for s in big]
    out += [Shape("scalar", {}, attrs={"shape": []}, cycle=False),
            Shape("one", {}, attrs={"shape": [1]}, cycle=False),
            Shape("small/2x3", {}, attrs={"shape": [2, 3]}, cycle=False),
            Shape("zero-size/0x4", {}, attrs={"shape": [0, 4]}, cycle=False)]
    return tuple(out)


def _generated_oracle(ctx, **attrs):
    return np.zeros(tuple(int(d) for d in attrs["shape"]))


def _generated_type_attrs(version, combo):
    """dtype written for every T but FLOAT (the default, left out or explicit per state)."""
    return {} if combo["T"] == "float" else {"dtype": V.elem(combo["T"])}


def _seeded_datasets(ctx, numerics, params):
    """Two runs of a seeded model (each judged), one otherwise; inputs repeated."""
    return (2, tuple(ctx.types)) if "seed" in ctx.given else (1, ())


def _seed_states(extra: dict) -> tuple[Attrs, ...]:
    return (Attrs({**extra, "seed": 0.0}, tag="seed=0"), Attrs({**extra, "seed": 1234.0}, tag="seed=1234"))


NORMAL_PARAMS = ((-2.0, 3.0), (10.0, 2.0), (0.0, 0.001))
UNIFORM_PARAMS = ((-3.0, 5.0), (10.0, 10.5), (-0.75, -0.5), (-1000.0, 1000.0))


def _normal_states(extra: dict, op: str) -> tuple[Attrs, ...]:
    defaults = {k: v for k, v in _defaults(op).items() if k != "dtype" or "shape" in extra}
    # with a required shape the engine adds neither state (each must give the shape)
    out = [Attrs(dict(extra), tag="default"), Attrs({**extra, **defaults}, tag="explicit-defaults")] if extra else []
    out += [Attrs({**extra, "mean": m, "scale": s}, tag=f"mean={m:g},scale={s:g}") for m, s in NORMAL_PARAMS]
    return tuple(out) + _seed_states(extra)


def _uniform_states(extra: dict, op: str) -> tuple[Attrs, ...]:
    defaults = {k: v for k, v in _defaults(op).items() if k != "dtype" or "shape" in extra}
    out = [Attrs(dict(extra), tag="default"), Attrs({**extra, **defaults}, tag="explicit-defaults")] if extra else []
    out += [Attrs({**extra, "low": lo, "high": hi}, tag=f"low={lo:g},high={hi:g}") for lo, hi in UNIFORM_PARAMS]
    return tuple(out) + _seed_states(extra)


def _generated_errors(op: str) -> tuple[Err, ...]:
    shape = {"shape": [2, 3]}
    return (
        Err("dtype must be one of T (float16, float, double; bfloat16 from 22): int32 is not", "dtype=int32",
            {**shape, "dtype": V.elem("int32")}, out_types={"output": "int32"}),
        Err("dtype must be one of T: STRING is not", "dtype=string", {**shape, "dtype": V.elem("string")},
            out_types={"output": "string"}),
        Err("dtype must be one of the DataType enum values of T: 0 (UNDEFINED) is not", "dtype=undefined",
            {**shape, "dtype": 0}),
        Err("shape is a required attribute ('The shape of the output tensor')", "no-shape", {"shape": None}),
        Err("shape [-1, 3]: a dimension of the output tensor cannot be negative", "shape=-1", {"shape": [-1, 3]}),
    )


def _generated_entry(op: str, states, check: str, notes: dict) -> Entry:
    return Entry(
        op, _generated_oracle, family="shaped", shapes=_generated_shapes(), numerics_classes=lambda t: ("random",),
        type_attrs=_generated_type_attrs, attrs=states, per_type=len(states), datasets=_seeded_datasets,
        check=lambda ctx, inputs, attrs, _c=check: _c, errors=_generated_errors(op), notes=notes)


RANDOM_NORMAL = _generated_entry("RandomNormal", _normal_states({"shape": _PLACEHOLDER}, "RandomNormal"),
                                 ref.CHECK_NORMAL, {22: "bfloat16"})
RANDOM_UNIFORM = _generated_entry("RandomUniform", _uniform_states({"shape": _PLACEHOLDER}, "RandomUniform"),
                                  ref.CHECK_UNIFORM, {22: "bfloat16"})


# ============================================================================ the operators with an input
#: State tag of a model that writes ``dtype`` although T2 equals the input's type.
DTYPE_WRITTEN = "dtype=input"


def _like_shapes(tag: str, long: tuple[str, ...] = ()) -> tuple[Shape, ...]:
    """The 4096-element patterns (the cycle), the small ones (a fill case each) and, for the
    floating input types ``long``, one 16384-element case each (a fill case per type)."""
    side = int(np.sqrt(N_INPUT))
    extra = (Shape(f"n{N_GENERATED}/128x128", {"input": "LL"}, dims={"L": (128, 128)}, cycle=False,
                   fill_types=long),) if long else ()
    return extra + (
        Shape(f"n{N_INPUT}/{side}x{side}", {"input": "LL"}, dims={"L": (side, side)}),
        Shape(f"n{N_INPUT}/{tag}", {"input": tag.split("x")[0] + "L"},
              dims={"L": (N_INPUT // int(tag.split("x")[0]),) * 2}),
        Shape("scalar", {"input": ""}, cycle=False),
        Shape("small/2x3", {"input": "23"}, cycle=False),
        Shape("zero-size", {"input": "0L"}, cycle=False),
    )


def _dtype_attr(rng, p) -> dict:
    """``dtype`` = T2 where T2 differs from the input's type T1 or the state asks it written."""
    combo = dict(p.types)
    if combo["T1"] != combo["T2"] or p.attrs_tag == DTYPE_WRITTEN:
        return {"dtype": V.elem(combo["T2"])}
    return {}


def _dtype_tags(ctx) -> dict:
    return {"attr_dtype": ctx.given["dtype"]} if "dtype" in ctx.given else {"attr_dtype": "absent"}


def _any_values(rng, t: str, shape) -> np.ndarray:
    """Input values of any type T1 (their values do not matter to the *Like operators)."""
    k = V.kind(t)
    if k == V.FLOAT:
        return V.sample_float(rng, shape, t, REALS, "normal")
    if k == V.INT:
        return V.sample_int(rng, shape, t)
    if k == V.BOOL:
        return V.sample_bool(rng, shape)
    if k == V.STRING:
        return V.sample_string(rng, shape)
    return V.sample_complex(rng, shape, t)


def _like_input(rng, ctx, shapes):
    return [_any_values(rng, ctx.types["input"], shapes[0])]


def _like_oracle(ctx, input, **attrs):
    return np.zeros(np.shape(input))


def _like_errors(op: str) -> tuple[Err, ...]:
    return (
        Err("dtype absent: the output takes the input's type, int32, which is not in T2", "no-dtype-int-input",
            {}, ((2, 3),), type_name="int32", out_types={"output": "int32"}),
        Err("dtype must be 'valid as an output type' (T2): int32 is not", "dtype=int32", {"dtype": V.elem("int32")},
            ((2, 3),), out_types={"output": "int32"}),
        Err("dtype must be 'valid as an output type' (T2): STRING is not", "dtype=string",
            {"dtype": V.elem("string")}, ((2, 3),), out_types={"output": "string"}),
    )


def _shared_per_type(n: int):
    """``n`` value cases for a combination whose T2 is the input's type T1 (each attribute state
    once: ``dtype`` both left out and written), one for the others."""
    return lambda version, combo: n if combo["T1"] == combo["T2"] else 0


def _like_entry(op: str, states, check: str, per_type) -> Entry:
    return Entry(
        op, _like_oracle, family="shaped", shapes=_like_shapes("4x1024"), numerics_classes=lambda t: ("random",),
        float_numerics={"random": _like_input}, drawn_attrs=_dtype_attr, tags=_dtype_tags,
        attrs=states + (Attrs({}, tag=DTYPE_WRITTEN),), per_type=per_type, datasets=_seeded_datasets,
        check=lambda ctx, inputs, attrs, _c=check: _c, errors=_like_errors(op),
        notes={22: "bfloat16 in T1 and T2"})


RANDOM_NORMAL_LIKE = _like_entry("RandomNormalLike", _normal_states({}, "RandomNormalLike"), ref.CHECK_NORMAL_LIKE,
                                 _shared_per_type(len(NORMAL_PARAMS) + 5))
RANDOM_UNIFORM_LIKE = _like_entry("RandomUniformLike", _uniform_states({}, "RandomUniformLike"),
                                  ref.CHECK_UNIFORM_LIKE, _shared_per_type(len(UNIFORM_PARAMS) + 5))


# ============================================================================ Bernoulli
def _bernoulli_class(kind: str):
    """p values of class ``kind`` (module docstring), exact in the input's type."""

    def fn(rng, ctx, shapes):
        t = ctx.types["input"]
        shape = shapes[0]
        n = int(np.prod(shape, dtype=np.int64))
        if kind == "small-p":
            p = rng.uniform(0.0, 0.1, size=n)
        else:
            p = rng.uniform(0.0, 1.0, size=n)
            if kind == "edge-p" and n:
                pick = rng.permutation(n)
                p[pick[: n // 3]] = 0.0
                p[pick[n // 3: 2 * n // 3]] = 1.0
        p = np.clip(V.representable(p, t), 0.0, 1.0)
        return [p.reshape(shape)]

    fn.__name__ = f"bernoulli_{kind}"
    return fn


BERNOULLI_CLASSES = ("uniform-p", "edge-p", "small-p")
#: Input types with a 16384-element uniform-p case (power against p off by 10%), from the schema.
_BERNOULLI_LONG = tuple(dict.fromkeys(t for ts in _types("Bernoulli", "T1").values() for t in ts))


def _bernoulli_oracle(ctx, input, **attrs):
    return np.zeros(np.shape(input))


BERNOULLI = Entry(
    "Bernoulli", _bernoulli_oracle, family="shaped", shapes=_like_shapes("16x256", _BERNOULLI_LONG),
    numerics_classes=lambda t: BERNOULLI_CLASSES, float_numerics={k: _bernoulli_class(k) for k in BERNOULLI_CLASSES},
    drawn_attrs=_dtype_attr, tags=_dtype_tags,
    attrs=_seed_states({}) + (Attrs({}, tag=DTYPE_WRITTEN),), datasets=_seeded_datasets, per_type=_shared_per_type(4),
    check=lambda ctx, inputs, attrs: ref.CHECK_BERNOULLI, contested=lambda ctx, attrs: ref.BERNOULLI_CONTESTED,
    errors=(Err("dtype must be one of T2: STRING is not", "dtype=string", {"dtype": V.elem("string")}, ((2, 3),),
                out_types={"output": "string"}),
            Err("the input (probabilities) must be of T1 (float16, float, double; bfloat16 from 22): int32 is not",
                "input=int32", {}, ((2, 3),), type_name="int32")),
    notes={22: "bfloat16 in T1"},
)


# ============================================================================ Multinomial
MULTINOMIAL_CLASSES = ("logits", "peaked", "masked", "shifted", "same-rows")
#: Offset of the ``shifted`` class: ``exp`` of it overflows float32 (above ~88.7).
SHIFT = 100.0
#: Largest sample_size with which the 2048-row ``same-rows`` pattern is built (output size).
SAME_ROWS_SAMPLES = 5


def _multinomial_class(kind: str):
    """Logits of class ``kind`` (module docstring), exact in the input's type."""

    def fn(rng, ctx, shapes):
        t = ctx.types["input"]
        b, k = shapes[0]
        x = rng.normal(0.0, 2.0, size=(b, k))
        if kind == "same-rows":
            x = np.broadcast_to(rng.normal(0.0, 1.5, size=(1, k)), (b, k)).copy()
        elif kind == "peaked" and k:
            x[np.arange(b), rng.integers(0, k, size=b)] += 6.0
        elif kind == "shifted":
            x += SHIFT
        x = V.representable(x, t)
        if kind == "masked" and k > 1:
            for r in range(b):
                drop = rng.permutation(k)[: int(rng.integers(1, k))]
                x[r, drop] = -np.inf
        return [x]

    fn.__name__ = f"multinomial_{kind}"
    return fn


def _multinomial_oracle(ctx, input, dtype=None, sample_size=1, seed=None):
    out = np.empty((np.shape(input)[0], int(sample_size)), dtype=object)
    out[...] = 0
    return out


def _multinomial_rule(version, numerics, attrs, optional) -> bool:
    """The ``same-rows`` class (2048 rows) only with a sample_size of at most 5."""
    return numerics != "same-rows" or int(attrs.get("sample_size", 1)) <= SAME_ROWS_SAMPLES


def _multinomial_type_attrs(version, combo):
    """dtype written for int64 (int32 is the default: left out or explicit per state)."""
    return {} if combo["T2"] == "int32" else {"dtype": V.elem(combo["T2"])}


MULTINOMIAL = Entry(
    "Multinomial", _multinomial_oracle, family="shaped",
    shapes=(Shape("rows", {"input": "BK"}, dims={"B": (1, 4), "K": (2, 10)},
                  numerics=("logits", "peaked", "masked", "shifted")),
            Shape("same-rows/2048", {"input": "NK"}, dims={"N": (2048, 2048), "K": (3, 6)}, numerics=("same-rows",)),
            Shape("one-class", {"input": "B1"}, dims={"B": (1, 3)}, cycle=False),
            Shape("zero-batch", {"input": "0K"}, cycle=False)),
    numerics_classes=lambda t: MULTINOMIAL_CLASSES,
    float_numerics={k: _multinomial_class(k) for k in MULTINOMIAL_CLASSES},
    type_attrs=_multinomial_type_attrs, numerics_rule=_multinomial_rule, per_type=6,
    attrs=(Attrs({"sample_size": 2048}, tag="sample_size=2048"), Attrs({"sample_size": 5}, tag="sample_size=5"),
           Attrs({"seed": 0.0, "sample_size": 2048}, tag="seed=0"), Attrs({"seed": 7.0}, tag="seed=7")),
    datasets=_seeded_datasets, check=lambda ctx, inputs, attrs: ref.CHECK_MULTINOMIAL,
    errors=(Err("dtype must be one of T2 (int32, int64): float is not", "dtype=float", {"dtype": V.elem("float")},
                ((2, 3),), out_types={"output": "float"}),
            Err("the input has shape [batch_size, class_size]: rank 1", "rank1", {}, ((5,),)),
            Err("the input has shape [batch_size, class_size]: rank 3", "rank3", {}, ((2, 3, 4),))),
    notes={22: "bfloat16 in T1"},
)


ENTRIES: tuple = (RANDOM_NORMAL, RANDOM_UNIFORM, RANDOM_NORMAL_LIKE, RANDOM_UNIFORM_LIKE, BERNOULLI, MULTINOMIAL)
register_entries(ENTRIES, family="random")
