"""The normalization family as entries of the operator table (family ``shaped``):
InstanceNormalization (1, 6, 22), GroupNormalization (18, 21), RMSNormalization (23),
LpNormalization (1, 22), MeanVarianceNormalization (9, 13), LRN (1, 13), onnxruntime's
SimplifiedLayerNormalization-1 (ai.onnx domain, unknown to onnx) and com.microsoft
SkipLayerNormalization-1 / SkipSimplifiedLayerNormalization-1 (schemas from onnxruntime's
registry through :mod:`conformance.opspec`).

Oracles, legitimate variants and the definitional decisions:
:mod:`conformance.reference.normalization` (the re-association rule of docs/tolerance.md:
folded kernels at the mandated precision are legitimate).  What the entries add to the
schema:

* **shape tables** tying the input shapes to the attributes: every rank and every axis of
  RMSNormalization / SimplifiedLayerNormalization (ranks 1-5, ``scale`` of the full normalized
  shape, with size-1 dims, of fewer dims or a scalar) and LpNormalization (ranks 1-4), the
  axis left at its default; GroupNormalization's channel layouts (one group, one channel per
  group, in between; ``scale``/``bias`` per group at 18, per channel at 21);
  MeanVarianceNormalization's axes classes (default, spatial, channel, all, leading,
  negative from 13); LRN windows wider than C; the skip shapes of the com.microsoft operators
  (``[B, S, H]``, ``[1, S, H]``, ``[S, H]``, 2-D input); rows of 4096 normalized elements
  (``long-rows/...``) where the old generator had them; zero-size batches where the text
  defines an empty result; a power-of-two row (``.../pow2``) where a constant row's mean is
  exact in every summation order, so its expected output is exact (``B``, ``0``);
* **numerics classes** (every class replaces or extends the engine's defaults):
  ``normal`` (random offset and spread), ``wide`` (magnitudes over six decades, 2^-6..2^6
  for float16 whose squares must not overflow), ``special`` (a NaN in half the rows: NaN
  rows, the others finite), ``large-offset`` (mean >> spread: a one-pass variance and a mean
  an ulp off are amplified), ``tiny-variance`` (spread of a few ulps), ``constant-rows``
  (half the rows constant: ``y = B`` / ``0``), ``zero-norm`` and ``tiny-norm`` (rows with a
  norm of 0, and in (1e-16, 1e-13): a kernel clamping the norm at 1e-12, as
  ``F.normalize``, is told apart; not float16, which cannot hold them); MeanVarianceNormalization's
  constant rows not in float16 (the body's 1e-9 is 0 there: 0/0); LRN's ``special`` is one
  NaN in the lower channels (a ``r4/C=8/nan`` pattern: the last channels' windows do not
  reach it, so a sliding square sum that adds and subtracts it is caught);
* **attribute states** beyond absent and the explicit default: epsilon 1e-12 and 0.5
  (com.microsoft: 1e-5 and 0.5), Lp's ``p`` 1 and 2, LRN's (size, alpha, beta, bias)
  classes (even sizes, size 1, windows wider than C), InstanceNormalization-1's
  ``consumed_inputs`` with one flag per input; onnxruntime's SimplifiedLayerNormalization
  writes ``stash_type`` 11 for the combinations whose ``U`` is double (``type_attrs``);
* **tolerances** from the reference's legitimate variants
  (:func:`conformance.tolerance.derive_tolerance`) plus the propagated rounding of the
  statistics at the mandated precision (:func:`conformance.tolerance.statistic_rounding_errors`;
  ``T`` for InstanceNormalization, GroupNormalization-18, MeanVarianceNormalization,
  LpNormalization, LRN; float for GroupNormalization-21, RMSNormalization and the
  com.microsoft operators; the coarser of T's working precision and U for
  SimplifiedLayerNormalization);
* **contested** models (``Case.contested``: onnx's checker rejects what the schema admits):
  every GroupNormalization-18 case (deprecated), RMSNormalization with ``T != V`` (the
  function body infers Y as T), MeanVarianceNormalization outside float (the body's float
  constants make it ill-typed) and version 13 with ``axes`` absent (the body's
  ``Constant <value_ints = @axes>`` is unbound), tag ``checker_rejects``; and
  GroupNormalization-21 with an empty batch, which the checker accepts but whose function
  body cannot run (its ``Reshape`` to ``[0, 0, -1]`` is ambiguous for an empty tensor);
* **error cases** (:class:`~conformance.ops.entry.Err`) for what the text makes invalid.
"""

from __future__ import annotations

import numpy as np

from ..reference import normalization as ref
from ..reference.layer_normalization import epsilon_value
from ..tolerance import STAT_ULPS, chain_ulps, derive_tolerance, statistic_rounding_errors
from . import values as V
from .engine import register_entries
from .entry import Attrs, Entry, Err, Shape

#: Case.contested of every GroupNormalization-18 case.
GN18_CONTESTED = ("GroupNormalization-18 is deprecated in onnx's schema (per-group scale/bias replaced "
                  "by per-channel in 21): onnx's checker rejects every model using it")
#: Case.contested of the RMSNormalization cases with T != V.
RMS_T_NE_V_CONTESTED = ("T != V: the schema admits it and declares Y of type V, but the function body's "
                        "Mul(Cast(Normalized, T), Scale) is ill-typed and infers Y as T: onnx's checker "
                        "rejects the model")
#: ``checker_rejects`` tag -> Case.contested of the MeanVarianceNormalization models onnx's checker rejects.
MVN_CONTESTED = {
    "body-ill-typed": "T admits this type but the function body's float Exponent/Epsilon constants make "
                      "Pow/Add ill-typed for it: onnx's checker rejects the model",
    "default-axes-unbound": "version 13's function body reads Constant <value_ints = @axes>, unbound when "
                            "axes is left at its default: onnx's checker rejects the model",
}
#: onnxruntime's SimplifiedLayerNormalization: the type of inv_std_var (U) -> the stash_type that
#: makes it (the schema's type inference sets U's element type to stash_type).
SLN_STASH = {"float": 1, "double": 11}
#: Mean and standard deviation of the ``large-offset`` class per type (the spread stays
#: representable next to the offset: 16 ulp of 512 in float16, 64 of 1024 in bfloat16).
LARGE_OFFSET = {"float16": (512.0, 16.0), "bfloat16": (1024.0, 64.0), "float": (1.0e3, 1.0), "double": (1.0e3, 1.0)}
#: Long rows: the normalized extent of the ``long-rows`` patterns.
LONG = 4096


# ============================================================================ tolerance helpers
def _np(t: str) -> np.dtype:
    return V.np_dtype(t)


def _coarser(*names: str) -> str:
    """The type of lowest precision among ``names``."""
    return max(names, key=lambda t: float(V.finfo(t).eps))


def _scale_of(*arrays) -> float:
    """Largest finite magnitude of the arrays (1.0 if none): the output's natural unit."""
    vals = np.concatenate([np.abs(np.asarray(a, np.float64)).ravel() for a in arrays])
    vals = vals[np.isfinite(vals)]
    return float(vals.max()) if vals.size and vals.max() > 0 else 1.0


def _prop(rows, stat_t: str, eps: float, gain=1.0, *, what: str = "y", **kw) -> float:
    """Largest propagated rounding error of statistics ``STAT_ULPS`` ulps of ``stat_t`` off
    (:func:`conformance.tolerance.statistic_rounding_errors`) over the (rows, n) values
    ``rows``, times ``|gain|`` (broadcastable to ``rows`` for ``what="y"``, per row else)."""
    r = statistic_rounding_errors(np.asarray(rows, np.float64), V.elem(stat_t), epsilon=eps, **kw)[what]
    with np.errstate(invalid="ignore", over="ignore"):
        g = np.abs(np.asarray(gain, np.float64))
        v = r * (g if what == "y" else g.reshape(-1) if g.ndim else g)
    v = v[np.isfinite(v)]
    return float(v.max()) if v.size else 0.0


def _tol(expected, variants, ulp_t: str, *, scale: float, propagated: float, steps=("sqrt", "divide")):
    """The tolerance of one output: the variants' spread, the propagated rounding of the statistics and
    the budget table's library steps of the last stage composed (:func:`conformance.tolerance.chain_ulps`:
    ``sqrt`` and the division, ``pow`` for LRN; docs/tolerance.md, "The composition rule")."""
    return derive_tolerance(expected, variants, V.elem(ulp_t), scale=scale, propagated=propagated,
                            ulps=chain_ulps(steps, ulp_t))


# ============================================================================ layouts (rows of a statistic)
def _rows(shape, lead: int):
    """(rows, n, back) for statistics over every dim from ``lead`` on (a reshape)."""
    shape = tuple(shape)
    rows = int(np.prod(shape[:lead], dtype=np.int64))
    n = int(np.prod(shape[lead:], dtype=np.int64))
    return rows, n, lambda a: np.asarray(a).reshape(shape)


def _layout_instance(ctx, shape):
    return _rows(shape, 2)


def _layout_group(ctx, shape):
    shape = tuple(shape)
    g = int(ctx.attrs["num_groups"])
    rows, n = shape[0] * g, int(np.prod(shape, dtype=np.int64)) // max(shape[0] * g, 1)
    return rows, n, lambda a: np.asarray(a).reshape(shape)


def _layout_axis(ctx, shape):
    return _rows(shape, int(ctx.attrs["axis"]) % len(shape))


def _layout_last(ctx, shape):
    return _rows(shape, len(shape) - 1)


def _layout_mvn(ctx, shape):
    shape = tuple(shape)
    r = len(shape)
    axes = sorted(int(a) % r for a in ctx.attrs["axes"])
    keep = [i for i in range(r) if i not in axes]
    perm = keep + axes
    tshape = tuple(shape[i] for i in perm)
    rows = int(np.prod(tshape[: len(keep)], dtype=np.int64))
    n = int(np.prod(tshape[len(keep):], dtype=np.int64))
    return rows, n, lambda a: np.transpose(np.asarray(a).reshape(tshape), np.argsort(perm))


def _layout_lp(ctx, shape):
    shape = tuple(shape)
    ax = int(ctx.attrs["axis"]) % len(shape)
    moved = tuple(shape[i] for i in range(len(shape)) if i != ax) + (shape[ax],)
    rows, n = int(np.prod(moved[:-1], dtype=np.int64)), shape[ax]
    return rows, n, lambda a: np.moveaxis(np.asarray(a).reshape(moved), -1, ax)


# ============================================================================ numerics classes
def _normal(rng, rows, n, t):
    return rng.normal(rng.uniform(-1, 1), rng.uniform(0.5, 2.0), size=(rows, n))


def _wide(rng, rows, n, t):
    lo, hi = (-6 * np.log10(2), 6 * np.log10(2)) if t == "float16" else (-3.0, 3.0)
    return rng.choice([-1.0, 1.0], size=(rows, n)) * 10.0 ** rng.uniform(lo, hi, size=(rows, n))


def _pick_rows(rng, rows):
    """Half the rows (at least one)."""
    return rng.choice(rows, size=max(1, rows // 2), replace=False) if rows > 1 else np.arange(rows)


def _special(rng, rows, n, t):
    x = rng.normal(size=(rows, n))
    if x.size:
        for r in _pick_rows(rng, rows):
            x[r, int(rng.integers(0, n))] = np.nan
    return x


def _large_offset(rng, rows, n, t):
    off, std = LARGE_OFFSET[t]
    return off + rng.normal(0.0, std, size=(rows, n))


def _tiny_variance(rng, rows, n, t):
    base = float(rng.choice([1.0, -2.0, 0.5]))
    return base + rng.normal(0.0, 2 * float(V.finfo(t).eps), size=(rows, n))


def _constant_rows(rng, rows, n, t):
    x = rng.normal(size=(rows, n))
    if x.size:
        for r in _pick_rows(rng, rows):
            x[r] = float(rng.choice([0.0, 1.0, -3.0, 0.5, 2.25]))
    return x


def _zero_norm(rng, rows, n, t):
    x = rng.normal(size=(rows, n))
    if x.size:
        x[_pick_rows(rng, rows)] = 0.0
    return x


def _tiny_norm(rng, rows, n, t):
    """Every other row scaled to a 2-norm in (1e-16, 1e-13): nonzero, below 1e-12."""
    x = rng.normal(size=(rows, n))
    for r in range(0, rows, 2):
        nrm = float(np.sqrt(np.sum(x[r] ** 2))) or 1.0
        x[r] = V.representable(x[r] / nrm * 10.0 ** rng.uniform(-16, -13), t)
    return x


X_CLASSES = {"normal": _normal, "wide": _wide, "special": _special, "large-offset": _large_offset,
             "tiny-variance": _tiny_variance, "constant-rows": _constant_rows, "zero-norm": _zero_norm,
             "tiny-norm": _tiny_norm}
#: Classes that shape the parameters too (the com.microsoft operators: skip and bias keep the
#: sum's rows constant / of tiny variance).
_QUIET = ("tiny-variance", "constant-rows")


def _scale_param(rng, shape, flip: bool = True):
    """A scale in +-[0.5, 1.5] (a fifth negative when ``flip``)."""
    s = rng.uniform(0.5, 1.5, size=shape)
    return s * np.where(rng.random(size=shape) < 0.2, -1.0, 1.0) if flip else s


def _params_affine(rng, ctx, names, shapes, kind):
    """scale (+-[0.5, 1.5]) and bias (standard normal) of InstanceNormalization / GroupNormalization."""
    return [_scale_param(rng, shapes[0]), rng.normal(size=shapes[1])]


def _params_scale(flip: bool):
    def params(rng, ctx, names, shapes, kind):
        return [_scale_param(rng, shapes[0], flip)]
    return params


def _params_none(rng, ctx, names, shapes, kind):
    return []


def _params_skip(rng, ctx, names, shapes, kind):
    """skip (normal, sd 0.5; 0.25 in the quiet classes), gamma in [0.5, 1.5], beta (normal),
    bias (normal, sd 0.2; 0.125 in the quiet classes), for the present ones."""
    out = []
    for nm, sh in zip(names, shapes):
        if nm == "skip":
            out.append(np.full(sh, 0.25) if kind in _QUIET else rng.normal(0.0, 0.5, size=sh))
        elif nm == "gamma":
            out.append(rng.uniform(0.5, 1.5, size=sh))
        elif nm == "beta":
            out.append(rng.normal(size=sh))
        else:  # bias
            out.append(np.full(sh, 0.125) if kind in _QUIET else rng.normal(0.0, 0.2, size=sh))
    return out


def _classes(kinds, layout, params):
    """name -> numerics class function of the engine: X of the class laid out in the rows its
    statistics are computed over (``layout``), then the parameters."""
    def make(kind):
        def fn(rng, ctx, shapes):
            names = list(ctx.types)
            t = ctx.types[names[0]]
            rows, n, back = layout(ctx, shapes[0])
            x = back(X_CLASSES[kind](rng, rows, n, t))
            return [x] + list(params(rng, ctx, names[1:], list(shapes[1:]), kind))
        fn.__name__ = fn.__qualname__ = f"numerics_{kind.replace('-', '_')}"
        return fn
    return {k: make(k) for k in kinds}


CENTERED_CLASSES = ("normal", "wide", "special", "large-offset", "tiny-variance", "constant-rows")


# ============================================================================ InstanceNormalization
def _instance_oracle(ctx, x, scale, b, *, epsilon, **_):
    return ref.instance_normalization(x, scale, b, epsilon=epsilon)


def _instance_tolerance(ctx, inputs, attrs, outputs):
    x, s, b = inputs
    t = ctx.types["input"]
    nt = _np(t)
    y = outputs["output"]
    n, c = x.shape[:2]
    sp = int(np.prod(x.shape[2:], dtype=np.int64))
    bshape = (1, c) + (1,) * (x.ndim - 2)
    eps = attrs["epsilon"]
    var = ref.instance_normalization_variants(x.astype(nt), s.astype(nt), b.astype(nt), epsilon=eps)
    # statistics in T (the spec computes in T), gain |scale[c]| per (n, c) row
    prop = _prop(x.reshape(n * c, sp), t, epsilon_value(eps), np.tile(np.abs(s), n)[:, None])
    unit = _scale_of(y - b.reshape(bshape), b)
    return {"output": _tol(y, var, t, scale=unit, propagated=prop)}


def _nc_shapes(first: str, params: dict, dims: dict, long_numerics=("normal", "large-offset")):
    """The N x C x D... patterns of InstanceNormalization (``first``: X's formal name;
    ``params``: parameter formal -> template; ``dims``: letter ranges over the defaults)."""
    d = {"N": (1, 3), "C": (1, 5)}
    return (
        Shape("r3", {first: "NCD", **params}, dims={**d, "D": (1, 16), **dims}),
        Shape("r4", {first: "NCHW", **params}, dims={"N": (1, 2), "C": (1, 4), "H": (1, 6), "W": (1, 6), **dims}),
        Shape("r5", {first: "NCDHW", **params},
              dims={"N": (1, 2), "C": (1, 3), "D": (1, 4), "H": (1, 3), "W": (1, 4), **dims}),
        Shape("r3/one-element", {first: "NC1", **params}, dims={**d, **dims}),
        Shape("r4/pow2", {first: "NC24", **params}, dims={**d, **dims}, numerics=("constant-rows",)),
        Shape("long-rows/r3", {first: "12L", **{k: "2" for k in params}}, dims={"L": (LONG, LONG)},
              numerics=long_numerics),
        Shape("long-rows/r4", {first: "12HW", **{k: "2" for k in params}}, dims={"H": (64, 64), "W": (64, 64)},
              numerics=long_numerics),
        Shape("long-rows/r5", {first: "11DHW", **{k: "1" for k in params}},
              dims={"D": (16, 16), "H": (16, 16), "W": (16, 16)}, numerics=long_numerics),
        Shape("zero-size", {first: "0CHW", **params}, dims={"C": (1, 4), "H": (1, 3), "W": (1, 3)},
              numerics=("normal",)),
    )


INSTANCE = Entry(
    "InstanceNormalization", _instance_oracle, family="shaped",
    shapes=_nc_shapes("input", {"scale": "C", "B": "C"}, {}),
    float_numerics=_classes(CENTERED_CLASSES, _layout_instance, _params_affine),
    attrs=(Attrs({"epsilon": 1e-12}, tag="eps-tiny"), Attrs({"epsilon": 0.5}, tag="eps-large"),
           # version 1's legacy in-place hint, one flag per input (the engine adds [0]): changes no value
           Attrs({"consumed_inputs": [0, 0, 0]}, until=1, tag="legacy")),
    tolerance=_instance_tolerance, per_type=12,
    # two data sets for one model (as the retired generator had for a fifth of the cases): the
    # normal class outside the long rows, scale and B fed afresh unless initializers
    datasets=lambda ctx, numerics, params: (
        (2, ()) if numerics == "normal" and np.prod(ctx.shapes["input"]) <= 1024 else (1, ())),
    errors=(Err("scale and B must be 1-D of length C: scale has 4 elements, C = 3", "scale-shape/r3",
                shapes=((2, 3, 4), (4,), (4,))),
            Err("scale and B must be 1-D of length C: scale has 2 elements, C = 3", "scale-shape/r4",
                shapes=((2, 3, 4, 2), (2,), (2,)))),
    notes={6: "consumed_inputs removed", 22: "bfloat16"},
)


# ============================================================================ GroupNormalization
def _group_oracle(ctx, x, scale, bias, *, num_groups, epsilon, stash_type=1, **_):
    return ref.group_normalization(x, scale, bias, num_groups=num_groups, epsilon=epsilon, version=ctx.version,
                                   stash_type=stash_type)


def _group_tolerance(ctx, inputs, attrs, outputs):
    x, s, b = inputs
    t, v = ctx.types["X"], ctx.version
    nt = _np(t)
    g, eps = int(attrs["num_groups"]), attrs["epsilon"]
    y = outputs["Y"]
    shape = x.shape
    c = shape[1]
    var = ref.group_normalization_variants(x.astype(nt), s.astype(nt), b.astype(nt), num_groups=g, epsilon=eps,
                                           version=v)
    b_full = np.repeat(b, c // g) if v < 21 else b
    unit = _scale_of(y - b_full.reshape((1, c) + (1,) * (x.ndim - 2)), b)
    ulp = _coarser(t, "float") if v >= 21 else t
    # statistics in float (21's stash_type) or T (18), gain |scale| per element
    s_full = np.broadcast_to(ref.group_params(s, b, shape, g, v)[0], shape)
    rows = shape[0] * g
    per = int(np.prod(shape, dtype=np.int64)) // max(rows, 1)
    prop = _prop(x.reshape(rows, per), "float" if v >= 21 else t, epsilon_value(eps), s_full.reshape(rows, per))
    return {"Y": _tol(y, var, ulp, scale=unit, propagated=prop)}


#: (name, X template, num_groups, channels, dims, numerics): GroupNormalization's layouts
#: (C a literal digit: it is tied to num_groups).
_GROUP_LAYOUTS = (
    ("r3/G=1/C=3", "N3D", 1, 3, {"D": (1, 4)}, ()),
    ("r4/G=2/C=4", "N4HW", 2, 4, {"H": (1, 4), "W": (1, 4)}, ()),
    ("r5/G=3/C=3", "N3DHW", 3, 3, {"D": (1, 3), "H": (1, 3), "W": (1, 3)}, ()),
    ("r3/G=3/C=9", "N9D", 3, 9, {"D": (1, 4)}, ()),
    ("r4/G=4/C=8", "N8HW", 4, 8, {"H": (1, 4), "W": (1, 4)}, ()),
    ("r4/G=1/C=1", "N1HW", 1, 1, {"H": (1, 4), "W": (1, 4)}, ()),
    ("r4/G=2/C=2/pow2", "N244", 2, 2, {}, ("constant-rows",)),
    ("long-rows/r3/G=2/C=4", "14L", 2, 4, {"L": (LONG // 2, LONG // 2)}, ("normal", "large-offset")),
    ("long-rows/r4/G=1/C=2", "12HW", 1, 2, {"H": (32, 32), "W": (64, 64)}, ("normal", "large-offset")),
    ("long-rows/r5/G=4/C=4", "14DHW", 4, 4, {"D": (16, 16), "H": (16, 16), "W": (16, 16)},
     ("normal", "large-offset")),
    ("zero-size/G=2/C=4", "04D", 2, 4, {"D": (1, 4)}, ("normal",)),
)


def _group_shapes() -> tuple[Shape, ...]:
    out = []
    for name, x, g, c, dims, nums in _GROUP_LAYOUTS:
        d = {"N": (1, 2), **dims}
        # pattern names are unique in the table (the engine finds a pattern by its name)
        out.append(Shape(name + "/per-group", {"X": x, "scale": str(g), "bias": str(g)}, {"num_groups": g},
                         until=20, dims=d, numerics=nums))
        out.append(Shape(name + "/per-channel", {"X": x, "scale": str(c), "bias": str(c)}, {"num_groups": g},
                         since=21, dims=d, numerics=nums))
    return tuple(out)


#: Case.contested of a GroupNormalization-21 model with an empty batch.
GN_EMPTY_CONTESTED = ("N = 0: the text defines an empty Y, but the function body reshapes X to [N, G, C/G, ...] "
                      "and then with Shape3D = [0, 0, -1], whose -1 Reshape cannot infer from an empty tensor: "
                      "a runtime expanding the body (onnxruntime, onnx.reference) fails")


def _group_contested(ctx, attrs):
    if ctx.version == 18:
        return GN18_CONTESTED
    return GN_EMPTY_CONTESTED if ctx.shapes["X"][0] == 0 else None


def _group_tags(ctx):
    g, c = int(ctx.attrs["num_groups"]), ctx.shapes["X"][1]
    return {"num_groups": "one" if g == 1 else ("channels" if g == c else "between")}


GROUP = Entry(
    "GroupNormalization", _group_oracle, family="shaped", shapes=_group_shapes(),
    float_numerics=_classes(CENTERED_CLASSES, _layout_group, _params_affine),
    # num_groups is required: every state carries one, the shape pattern's (tied to C) overrides it
    attrs=(Attrs({"num_groups": 1}, tag="default"),
           Attrs({"num_groups": 1, "epsilon": 1e-5}, until=20, tag="explicit-default"),
           Attrs({"num_groups": 1, "epsilon": 1e-5, "stash_type": 1}, since=21, tag="explicit-default"),
           Attrs({"num_groups": 1, "epsilon": 1e-12}, tag="eps-tiny"),
           Attrs({"num_groups": 1, "epsilon": 0.5}, tag="eps-large")),
    tolerance=_group_tolerance, per_type=13, tags=_group_tags,
    contested=_group_contested,
    errors=(Err("C = 6 not divisible by num_groups = 4", "num-groups", {"num_groups": 4},
                ((2, 6, 3), (4,), (4,)), until=20),
            Err("C = 6 not divisible by num_groups = 4", "num-groups", {"num_groups": 4},
                ((2, 6, 3), (6,), (6,)), since=21),
            Err("scale/bias have one value per group at version 18: [6] with num_groups = 2", "scale-shape",
                {"num_groups": 2}, ((1, 6, 2, 2), (6,), (6,)), until=20, type_name="float16"),
            Err("scale/bias have one value per channel from version 21: [2] with C = 6", "scale-shape",
                {"num_groups": 2}, ((1, 6, 2, 2), (2,), (2,)), since=21, type_name="float16"),
            Err("the required attribute num_groups is missing", "num-groups-missing", {"num_groups": None},
                ((2, 4, 3), (4,), (4,)), since=21)),
    notes={21: "scale/bias per channel; stage one in stash_type precision (float)"},
)


# ============================================================================ RMS / SimplifiedLayerNormalization
_RANK_DIMS = {1: (1, 16), 2: (1, 8), 3: (1, 5), 4: (1, 4), 5: (1, 3)}


def _axis_shapes(x: str, scale: str | None, ranks, *, default_axis=(3,), long=True, zero=True,
                 long_numerics=("normal", "large-offset")) -> tuple[Shape, ...]:
    """Every (rank, axis) of ``ranks`` (both signs); with ``scale``, the scale's shape cycles
    over the full normalized shape, the normalized shape with size-1 dims, and its last dim
    only (a scalar when one dim is normalized); ``axis`` left at its default for the ranks in
    ``default_axis``; long rows (2 x 4096, axis -1); a zero-size batch."""
    out, i = [], 0
    for r in ranks:
        letters = "ABCDE"[:r]
        dims = {c: _RANK_DIMS[r] for c in letters}
        for a in range(-r, r):
            ax = a % r
            norm = letters[ax:]
            inputs = {x: letters}
            name = f"r{r}/axis={a}"
            if scale is not None:
                kind = ("full", "ones", "fewer")[i % 3]
                if kind == "full":
                    sc = norm
                elif kind == "ones":
                    sc = "".join("1" if k % 2 == 0 else ch for k, ch in enumerate(norm))
                else:
                    sc = norm[-1:] if len(norm) > 1 else ""
                inputs[scale] = sc
                name += f"/scale={kind if kind != 'fewer' else ('fewer-dims' if sc else 'scalar')}"
            out.append(Shape(name, inputs, {"axis": a}, dims=dims))
            i += 1
    for r in default_axis:
        letters = "ABCDE"[:r]
        inputs = {x: letters, **({scale: letters[-1]} if scale is not None else {})}
        out.append(Shape(f"r{r}/axis=default", inputs, dims={c: _RANK_DIMS[r] for c in letters}))
    if long:
        out.append(Shape("long-rows/2x4096", {x: "2L", **({scale: "L"} if scale is not None else {})}, {"axis": -1},
                         dims={"L": (LONG, LONG)}, numerics=long_numerics))
    if zero:
        out.append(Shape("zero-size", {x: "0B", **({scale: "B"} if scale is not None else {})}, {"axis": -1},
                         dims={"B": (1, 8)}, numerics=("normal",)))
    return tuple(out)


RMS_SHAPES = _axis_shapes("X", "scale", (1, 2, 3, 4, 5))


def _scale_kind(x_shape, s_shape, ax) -> str:
    norm = tuple(x_shape[ax:])
    s = tuple(s_shape)
    if s == norm:
        return "full"
    if not s:
        return "scalar"
    return "ones" if len(s) == len(norm) else "fewer-dims"


def _axis_tags(ctx):
    x = ctx.shapes["X"]
    axis = int(ctx.attrs["axis"])
    tags = {"axis": axis, "axis_sign": "neg" if axis < 0 else "pos", "scale_dtype": ctx.types["scale"],
            "scale_shape": _scale_kind(x, ctx.shapes["scale"], axis % max(len(x), 1))}
    return tags


def _rms_oracle(ctx, x, scale, *, axis, epsilon, stash_type, **_):
    return ref.rms_normalization(x, scale, axis=axis, epsilon=epsilon, stash_type=stash_type)


def _rms_tolerance(ctx, inputs, attrs, outputs):
    x, s = inputs
    t, v = ctx.types["X"], ctx.types["scale"]
    y = outputs["Y"]
    axis, eps = int(attrs["axis"]), attrs["epsilon"]
    var = ref.rms_normalization_variants(x.astype(_np(t)), s.astype(_np(v)), axis=axis, epsilon=eps)
    rows, n, _ = _rows(x.shape, axis % x.ndim)
    # mean square in float (stash_type 1), gain |scale| per element
    prop = _prop(x.reshape(rows, n), "float", epsilon_value(eps),
                 np.broadcast_to(np.abs(s), x.shape).reshape(rows, n), center=False)
    return {"Y": _tol(y, var, _coarser(t, v, "float"), scale=_scale_of(y), propagated=prop)}


RMS = Entry(
    "RMSNormalization", _rms_oracle, family="shaped", shapes=RMS_SHAPES,
    float_numerics=_classes(CENTERED_CLASSES, _layout_axis, _params_scale(False)),
    attrs=(Attrs({"epsilon": 1e-12}, tag="eps-tiny"), Attrs({"epsilon": 0.5}, tag="eps-large")),
    tolerance=_rms_tolerance, tags=_axis_tags,
    # T = V: every pattern per type; T != V (contested) four cases per pair
    per_type=lambda v, c: len(RMS_SHAPES) if c["T"] == c["V"] else 4,
    contested=lambda ctx, attrs: RMS_T_NE_V_CONTESTED if ctx.types["X"] != ctx.types["scale"] else None,
    errors=(Err("axis 3 outside [-3, 3)", "axis-range=3", {"axis": 3}, ((2, 3, 4), (4,)), type_name="float16",
                types={"scale": "float16"}),
            Err("axis -4 outside [-3, 3)", "axis-range=-4", {"axis": -4}, ((2, 3, 4), (4,)), type_name="bfloat16",
                types={"scale": "bfloat16"}, out_types={"Y": "bfloat16"}),
            Err("scale [5] is not broadcastable to X [2, 3, 4]", "scale-shape", {"axis": -1}, ((2, 3, 4), (5,)),
                types={"scale": "float"}, out_types={"Y": "float"})),
)


def _sln_oracle(ctx, x, scale, *, axis, epsilon, stash_type, **_):
    return ref.simplified_layer_normalization(x, scale, axis=axis, epsilon=epsilon, stash_type=stash_type)


def _sln_tolerance(ctx, inputs, attrs, outputs):
    x, s = inputs
    t, v = ctx.types["X"], ctx.types["scale"]
    stash = int(attrs["stash_type"])
    u = {1: "float", 11: "double"}[stash]
    axis, eps = int(attrs["axis"]), attrs["epsilon"]
    var = ref.simplified_layer_normalization_variants(x.astype(_np(t)), s.astype(_np(v)), axis=axis,
                                                      epsilon=eps, stash_type=stash)
    rows, n, _ = _rows(x.shape, axis % x.ndim)
    xr, ek = x.reshape(rows, n), epsilon_value(eps)
    # mean square at the coarser of T's working precision and U (both legitimate stage-one precisions)
    stat = _coarser(t, u, "float")
    y = outputs["Y"]
    out = {"Y": _tol(y, {k: w[0] for k, w in var.items()}, _coarser(t, v, "float"), scale=_scale_of(y),
                     propagated=_prop(xr, stat, ek, np.broadcast_to(np.abs(s), x.shape).reshape(rows, n),
                                      center=False))}
    if "inv_std_var" in outputs:
        inv = outputs["inv_std_var"]
        out["inv_std_var"] = _tol(inv, {k: w[1] for k, w in var.items()}, _coarser(t, u, "float"),
                                  scale=_scale_of(inv), propagated=_prop(xr, stat, ek, what="inv", center=False))
    return out


def _sln_tags(ctx):
    tags = _axis_tags(ctx)
    stash = int(ctx.attrs["stash_type"])
    tags.update(stash_dtype={1: "float", 11: "double"}.get(stash, str(stash)),
                stash_type="explicit" if "stash_type" in ctx.given else "default",
                axis_attr="explicit" if "axis" in ctx.given else "default")
    return tags


SLN = Entry(
    "SimplifiedLayerNormalization", _sln_oracle, family="shaped", shapes=RMS_SHAPES,
    float_numerics=_classes(CENTERED_CLASSES, _layout_axis, _params_scale(True)),
    attrs=(Attrs({"epsilon": 1e-12}, tag="eps-tiny"), Attrs({"epsilon": 0.5}, tag="eps-large")),
    # U (inv_std_var's type) is stash_type: double needs stash_type 11 written
    type_attrs=lambda v, c: {"stash_type": SLN_STASH[c["U"]]} if c["U"] != "float" else {},
    tolerance=_sln_tolerance, tags=_sln_tags, per_type=6,
    errors=(Err("axis 3 outside [-3, 3)", "axis-range=3", {"axis": 3}, ((2, 3, 4), (4,)),
                types={"scale": "float"}, out_types={"Y": "float"}),
            Err("axis -4 outside [-3, 3)", "axis-range=-4", {"axis": -4}, ((2, 3, 4), (4,)),
                types={"scale": "float"}, out_types={"Y": "float"}),
            Err("scale [5] not broadcastable to X.shape[-1:] = [4]", "scale-shape=5", {"axis": -1},
                ((2, 3, 4), (5,)), types={"scale": "float"}, out_types={"Y": "float"}),
            Err("scale [2, 4] not broadcastable to X.shape[1:] = [3, 4]", "scale-shape=2,4", {"axis": 1},
                ((2, 3, 4), (2, 4)), types={"scale": "float"}, out_types={"Y": "float"}),
            Err("stash_type 10 makes inv_std_var float16, not a U (float, double)", "stash-type",
                {"stash_type": 10}, ((2, 3, 4), (4,)), types={"scale": "float"},
                out_types={"Y": "float", "inv_std_var": "float16"}, outputs={"inv_std_var": (2, 3, 1)}),
            Err("inv_std_var declared double but stash_type 1 makes it float", "inv-type", {"stash_type": 1},
                ((2, 3, 4), (4,)), types={"scale": "float"}, out_types={"Y": "float", "inv_std_var": "double"},
                outputs={"inv_std_var": (2, 3, 1)})),
)


# ============================================================================ LpNormalization
def _lp_oracle(ctx, x, *, p, axis, **_):
    return ref.lp_normalization(x, p=p, axis=axis)


def _lp_tolerance(ctx, inputs, attrs, outputs):
    (x,) = inputs
    t = ctx.types["input"]
    y = outputs["output"]
    p, axis = int(attrs["p"]), int(attrs["axis"])
    var = ref.lp_normalization_variants(x.astype(_np(t)), p=p, axis=axis)
    # the norm STAT_ULPS ulps of T off: a relative error of y
    prop = STAT_ULPS * float(V.finfo(t).eps) * _scale_of(y) if np.isfinite(y).any() else 0.0
    return {"output": _tol(y, var, t, scale=1.0, propagated=prop)}


def _lp_tags(ctx):
    axis = int(ctx.attrs["axis"])
    return {"p": int(ctx.attrs["p"]), "axis": axis, "axis_sign": "neg" if axis < 0 else "pos"}


LP_SHAPES = _axis_shapes("input", None, (1, 2, 3, 4), default_axis=(2, 3), long_numerics=("normal",))

LP = Entry(
    "LpNormalization", _lp_oracle, family="shaped", shapes=LP_SHAPES,
    float_numerics=_classes(("normal", "wide", "special", "zero-norm", "tiny-norm"), _layout_lp, _params_none),
    numerics_types={"tiny-norm": ("bfloat16", "float", "double")},
    attrs=(Attrs({"p": 1}, tag="p=1"), Attrs({"p": 2}, tag="p=2")),
    tolerance=_lp_tolerance, tags=_lp_tags, per_type=32,
    errors=(Err("p must be 1 or 2: p = 3", "p-value=3", {"p": 3}, ((2, 3, 4),), type_name="float16"),
            Err("p must be 1 or 2: p = 0", "p-value=0", {"p": 0}, ((2, 3, 4),)),
            Err("axis 3 outside [-3, 3)", "axis-range=3", {"axis": 3}, ((2, 3, 4),), type_name="double"),
            Err("axis -4 outside [-3, 3)", "axis-range=-4", {"axis": -4}, ((2, 3, 4),))),
    notes={22: "bfloat16"},
)


# ============================================================================ MeanVarianceNormalization
def _mvn_oracle(ctx, x, *, axes, **_):
    return ref.mean_variance_normalization(x, axes=axes)


def _mvn_tolerance(ctx, inputs, attrs, outputs):
    (x,) = inputs
    t = ctx.types["X"]
    y = outputs["Y"]
    axes = tuple(attrs["axes"])
    var = ref.mean_variance_normalization_variants(x.astype(_np(t)), axes=axes)
    rows, n, _ = _layout_mvn(ctx, x.shape)
    r = x.ndim
    ax = sorted(a % r for a in axes)
    keep = [i for i in range(r) if i not in ax]
    xr = np.transpose(x, keep + ax).reshape(rows, n)
    prop = _prop(xr, t, ref.MVN_EPSILON, form="sqrt-plus-eps")
    return {"Y": _tol(y, var, t, scale=_scale_of(y), propagated=prop)}


def _mvn_rejected(ctx) -> str | None:
    if ctx.types["X"] != "float":
        return "body-ill-typed"
    if ctx.version >= 13 and "axes" not in ctx.given:
        return "default-axes-unbound"
    return None


def _mvn_tags(ctx):
    tags = {"axes": str(list(ctx.given["axes"])) if "axes" in ctx.given else "default"}
    why = _mvn_rejected(ctx)
    if why:
        tags["checker_rejects"] = why
    return tags


def _mvn_shapes() -> tuple[Shape, ...]:
    """Axes classes: the default ([0, 2, 3], attribute absent or written by the state),
    per-channel statistics, spatial, the channel axis, every axis, the leading axis, negative
    axes (13: the text of 9 knows none), a power-of-two slice for exact constant rows, long
    rows and a zero-size tensor whose reduced slices are never empty."""
    d4 = {"A": (1, 3), "B": (1, 4), "C": (2, 4), "D": (1, 4)}
    return (
        Shape("r4/axes=default", {"X": "ABCD"}, dims=d4),
        Shape("r4/axes=0,2,3", {"X": "ABCD"}, {"axes": [0, 2, 3]}, dims=d4),
        Shape("r4/axes=2,3", {"X": "ABCD"}, {"axes": [2, 3]}, dims=d4),
        Shape("r3/axes=1", {"X": "ABC"}, {"axes": [1]}, dims={"A": (1, 4), "B": (2, 4), "C": (1, 4)}),
        Shape("r4/axes=1", {"X": "ABCD"}, {"axes": [1]}, dims={"A": (1, 3), "B": (2, 4), "C": (1, 3), "D": (1, 3)}),
        Shape("r4/axes=0,1,2,3", {"X": "ABCD"}, {"axes": [0, 1, 2, 3]}, dims=d4),
        Shape("r3/axes=0", {"X": "ABC"}, {"axes": [0]}, dims={"A": (2, 4), "B": (1, 4), "C": (1, 4)}),
        Shape("r5/axes=2,3", {"X": "ABCDE"}, {"axes": [2, 3]},
              dims={"A": (1, 2), "B": (1, 3), "C": (2, 3), "D": (1, 3), "E": (1, 3)}),
        Shape("r4/axes=2,3/pow2", {"X": "AB24"}, {"axes": [2, 3]}, dims={"A": (1, 3), "B": (1, 4)},
              numerics=("constant-rows",)),
        Shape("r3/axes=-1", {"X": "ABC"}, {"axes": [-1]}, since=13, dims={"A": (1, 4), "B": (1, 4), "C": (2, 8)}),
        Shape("r4/axes=1,-1", {"X": "ABCD"}, {"axes": [1, -1]}, since=13,
              dims={"A": (1, 3), "B": (1, 4), "C": (1, 3), "D": (2, 4)}),
        Shape("long-rows/r4/axes=2,3", {"X": "12HW"}, {"axes": [2, 3]}, dims={"H": (64, 64), "W": (64, 64)},
              numerics=("normal",)),
        Shape("zero-size/axes=2,3", {"X": "A0CD"}, {"axes": [2, 3]}, dims={"A": (1, 3), "C": (2, 3), "D": (1, 3)},
              numerics=("normal",)),
    )


MVN = Entry(
    "MeanVarianceNormalization", _mvn_oracle, family="shaped", shapes=_mvn_shapes(),
    float_numerics=_classes(("normal", "wide", "special", "constant-rows"), _layout_mvn, _params_none),
    # the body's 1e-9 is 0 in float16: a constant slice is 0/0 there (0 in float32)
    numerics_types={"constant-rows": ("bfloat16", "float", "double")},
    tolerance=_mvn_tolerance, tags=_mvn_tags, per_type=13,
    contested=lambda ctx, attrs: MVN_CONTESTED.get(_mvn_rejected(ctx)),
    errors=(Err("axis 4 outside [-4, 4)", "axis-range", {"axes": [0, 4]}, ((2, 3, 2, 2),)),),
    notes={13: "bfloat16; negative axes"},
)


# ============================================================================ LRN
#: (size, alpha, beta, bias) states: None = attribute absent (size is required).
LRN_PARAMS = (
    (3, None, None, None),
    (5, 1.0, 0.75, 2.0),
    (2, 0.5, 0.5, 1.0),    # even size: asymmetric window
    (1, 2.0, 1.0, 0.5),
    (4, 1.5, 0.25, 1.0),
    (7, 0.9, 1.5, 3.0),    # window wider than C
    (3, 1e-4, 0.75, 1.0),  # the defaults written
)


def _lrn_states() -> tuple[Attrs, ...]:
    out = []
    for size, alpha, beta, bias in LRN_PARAMS:
        vals = {"size": size, **{k: v for k, v in (("alpha", alpha), ("beta", beta), ("bias", bias)) if v is not None}}
        tag = f"size={size}" if alpha is None else f"size={size}/a={alpha:g},b={beta:g},k={bias:g}"
        out.append(Attrs(vals, tag="explicit-default" if (size, alpha, beta, bias) == (3, 1e-4, 0.75, 1.0) else tag))
    return tuple(out)


def _lrn_oracle(ctx, x, *, size, alpha, beta, bias, **_):
    return ref.lrn(x, size=size, alpha=alpha, beta=beta, bias=bias)


def _lrn_tolerance(ctx, inputs, attrs, outputs):
    (x,) = inputs
    t = ctx.types["X"]
    y = outputs["Y"]
    kw = {k: attrs[k] for k in ("size", "alpha", "beta", "bias")}
    var = ref.lrn_variants(x.astype(_np(t)), **kw)
    # the square sum STAT_ULPS ulps of T off: |dy| <= beta * STAT_ULPS * u * |y|
    prop = abs(ref.f32(kw["beta"])) * STAT_ULPS * float(V.finfo(t).eps) * _scale_of(y)
    return {"Y": _tol(y, var, t, scale=_scale_of(y), propagated=prop, steps=("pow", "divide"))}


def _lrn_x(rng, rows, n, t):
    return rng.normal(0.0, 1.5, size=(rows, n))


LRN_SHAPES = (
    Shape("r3", {"X": "NCD"}, dims={"N": (1, 2), "C": (3, 8), "D": (1, 3)}),
    Shape("r4", {"X": "NCHW"}, dims={"N": (1, 2), "C": (3, 8), "H": (1, 3), "W": (1, 3)}),
    Shape("r5", {"X": "NCDHW"}, dims={"N": (1, 2), "C": (3, 8), "D": (1, 3), "H": (1, 3), "W": (1, 3)}),
    Shape("r4/C=1", {"X": "N1HW"}, dims={"N": (1, 2), "H": (1, 3), "W": (1, 3)}),
    Shape("r4/C=2", {"X": "N2HW"}, dims={"N": (1, 2), "H": (1, 3), "W": (1, 3)}),
    # a NaN in the low channels of a wide C: channels beyond its window stay finite (a sliding
    # square sum that adds and subtracts the NaN poisons every later channel)
    Shape("r4/C=8/nan", {"X": "N8HW"}, dims={"N": (1, 2), "H": (1, 3), "W": (1, 3)}, numerics=("special",)),
    Shape("zero-size", {"X": "0CHW"}, dims={"C": (3, 8), "H": (1, 3), "W": (1, 3)}, numerics=("normal",)),
)


def _lrn_classes():
    classes = _classes(("normal", "wide", "special"), _layout_last, _params_none)

    def normal(rng, ctx, shapes):
        rows, n, back = _layout_last(ctx, shapes[0])
        return [back(_lrn_x(rng, rows, n, ctx.types["X"]))]

    def special(rng, ctx, shapes):
        """One NaN, in the lower half of the channels (its window never covers the last ones
        when C > size + 1)."""
        shape = shapes[0]
        x = _lrn_x(rng, 1, int(np.prod(shape, dtype=np.int64)), ctx.types["X"]).reshape(shape)
        if x.size:
            idx = [int(rng.integers(0, d)) for d in shape]
            idx[1] = int(rng.integers(0, max(1, shape[1] // 2)))
            x[tuple(idx)] = np.nan
        return [x]

    classes.update(normal=normal, special=special)
    return classes


LRN = Entry(
    "LRN", _lrn_oracle, family="shaped", shapes=LRN_SHAPES, float_numerics=_lrn_classes(),
    attrs=_lrn_states(), tolerance=_lrn_tolerance, per_type=14,
    tags=lambda ctx: {"size": int(ctx.attrs["size"])},
    errors=(Err("the required attribute size is missing", "size-missing", {"size": None, "alpha": 1e-4},
                ((1, 4, 2, 2),)),),
    notes={13: "bfloat16"},
)


# ============================================================================ com.microsoft Skip*LayerNormalization
MS = "com.microsoft"


def _skip_oracle(simplified: bool):
    def oracle(ctx, inp, skip, gamma, *rest, epsilon, **_):
        beta, bias = (None, rest[0]) if simplified else rest
        return ref.skip_layer_normalization(inp, skip, gamma, beta, bias, epsilon=epsilon, simplified=simplified)
    oracle.__name__ = oracle.__qualname__ = "skip_simplified_oracle" if simplified else "skip_oracle"
    return oracle


def _skip_tolerance(simplified: bool):
    def tolerance(ctx, inputs, attrs, outputs):
        t = ctx.types["input"]
        nt = _np(t)
        inp, skip, gamma = inputs[:3]
        beta, bias = (None, inputs[3]) if simplified else inputs[3:5]
        cast = (lambda a: None if a is None else a.astype(nt))  # noqa: E731
        kw = {"epsilon": attrs["epsilon"], "simplified": simplified}
        var = ref.skip_layer_normalization_variants(inp.astype(nt), skip.astype(nt), gamma.astype(nt), cast(beta),
                                                    cast(bias), **kw)
        h = inp.shape[-1]
        ssum = ref.skip_sum(inp, skip, bias)
        srows, ek = ssum.reshape(-1, h), epsilon_value(attrs["epsilon"])
        b64 = np.zeros(()) if beta is None else beta
        names = ("output", "mean", "inv_std_var", "input_skip_bias_sum")
        # statistics of the sum in float (U), gain |gamma|; the sum itself is not a statistic
        gain = np.abs(gamma)[None, :]
        out = {}
        for k, nm in enumerate(names):
            if nm not in outputs:
                continue
            e = outputs[nm]
            el = ctx.out_types[nm]
            if nm == "output":
                unit = _scale_of(e - b64, b64)
                prop = _prop(srows, "float", ek, gain, center=not simplified)
            elif nm == "mean":
                unit, prop = _scale_of(e), _prop(srows, "float", ek, what="mean")
            elif nm == "inv_std_var":
                unit, prop = _scale_of(e), _prop(srows, "float", ek, what="inv", center=not simplified)
            else:
                unit, prop = _scale_of(e), 0.0
            # the library steps of each output: the normalization's sqrt and division, the mean's
            # division by n, none in the sum input + skip + bias
            steps = {"output": ("sqrt", "divide"), "inv_std_var": ("sqrt", "divide"), "mean": ("divide",)}.get(nm, ())
            out[nm] = _tol(e, {vn: v[k] for vn, v in var.items()}, _coarser(el, "float"), scale=unit,
                           propagated=prop, steps=steps)
        return out
    return tolerance


SKIP_SHAPES_DIMS = {"R": (1, 5), "B": (1, 2), "S": (1, 4), "H": (1, 64)}


def _skip_shapes(params: tuple[str, ...]) -> tuple[Shape, ...]:
    p = {k: "H" for k in params}
    return (
        Shape("r2", {"input": "RH", "skip": "RH", **p}, dims=SKIP_SHAPES_DIMS),
        Shape("r3/skip=full", {"input": "BSH", "skip": "BSH", **p}, dims=SKIP_SHAPES_DIMS),
        Shape("r3/skip=batch1", {"input": "BSH", "skip": "1SH", **p}, dims=SKIP_SHAPES_DIMS),
        Shape("r3/skip=2d", {"input": "BSH", "skip": "SH", **p}, dims=SKIP_SHAPES_DIMS),
        Shape("long-rows/r3", {"input": "12L", "skip": "12L", **{k: "L" for k in params}},
              dims={"L": (LONG, LONG)}, numerics=("normal", "large-offset")),
    )


def _skip_tags(ctx):
    x, s = ctx.shapes["input"], ctx.shapes["skip"]
    kind = "full" if tuple(s) == tuple(x) else ("batch1" if len(s) == len(x) else "2d")
    return {"skip_shape": kind, "bias": "present" if "bias" in ctx.types else "absent",
            "beta": "present" if "beta" in ctx.types else "absent"}


def _skip_errors(simplified: bool) -> tuple[Err, ...]:
    def shapes(gamma, bias, skip):
        return ((2, 3, 4), skip, (gamma,)) + (() if simplified else ((4,),)) + ((bias,),)
    return (Err("gamma [5] vs hidden_size 4", "gamma-shape", shapes=shapes(5, 4, (2, 3, 4))),
            Err("bias [3] vs hidden_size 4", "bias-shape", shapes=shapes(4, 3, (2, 3, 4))),
            Err("skip [2, 3, 5] vs input [2, 3, 4]", "skip-shape", shapes=shapes(4, 4, (2, 3, 5))))


def _skip_entry(simplified: bool) -> Entry:
    params = ("gamma", "bias") if simplified else ("gamma", "beta", "bias")
    return Entry(
        "SkipSimplifiedLayerNormalization" if simplified else "SkipLayerNormalization", _skip_oracle(simplified),
        family="shaped", domain=MS, shapes=_skip_shapes(params),
        float_numerics=_classes(CENTERED_CLASSES, _layout_last, _params_skip),
        attrs=(Attrs({"epsilon": 1e-5}, tag="eps-ln"), Attrs({"epsilon": 0.5}, tag="eps-large")),
        tolerance=_skip_tolerance(simplified), tags=_skip_tags, per_type=11,
        # a simplified (RMS) normalization computes no mean: its slot is never requested
        outputs_rule=(lambda v, attrs, outs: "mean" not in outs) if simplified else None,
        errors=_skip_errors(simplified),
    )


ENTRIES = (GROUP, INSTANCE, LRN, LP, MVN, RMS, SLN, _skip_entry(False), _skip_entry(True))
register_entries(ENTRIES, family="normalization")
