"""BatchNormalization (ai.onnx 1, 6, 7, 9, 14, 15) as an entry of the operator table (family
``shaped``).

Oracle, legitimate variants, the propagated rounding of the batch statistics and the
definitional decisions (mode per version, population variance, rank-1 X as C = 1, spatial=0
as per-activation statistics, saved_mean/saved_var as the batch mean and variance, version 1
as version 6 plus ``consumed_inputs``): :mod:`conformance.reference.batch_normalization`.
What the entry adds to the schema:

* **graph names**: versions 1-9 call outputs 1 and 2 ``mean``/``var``, the names of inputs 3
  and 4; a graph cannot use a name twice, so the models call them ``running_mean`` /
  ``running_var`` (the names of 14 and 15); ``saved_mean``/``saved_var`` keep theirs;
* **mode and outputs** (``outputs_rule``, ``output_slots``): 1 and 6 train when ``is_test`` is
  0 (the default) and request any subset of the four optional outputs in 5 output slots (Y
  alone in training is the *ambiguous* model below); 7 and 9 train exactly when an optional
  output is requested (5 slots, "Output case #1"), infer with Y alone; 14 and 15 train with
  ``training_mode=1`` (3 slots, running_mean/running_var each present or not) and infer with
  Y alone.  Training models mostly request every running statistic (:data:`MAIN_OUTS`); every
  output set is requested for every X type in each mode (``outputs_per_type``), and every
  numerics class in each mode;
* **the shape table**: X of rank 1 (from 9: C = 1) to 5 with parameters of shape (C), C = 1,
  N = 1, ``spatial=0`` (1, 6: rank 2 and (N, C, 1, 1) with parameters of size C; 7: rank 2-4
  with parameters (C x D1 x ... x Dn)), zero-size batches (inference: an empty batch has no
  statistics), long channels (training, >= 4096 elements per channel), and a tiny epsilon
  (1e-20) for the ``tiny-variance`` class; version 1's text says rank 4 (other ranks are
  contested);
* **attribute states**: the mode written out both ways, momentum 0, 1, 0.5, 0.618..., 0.1, 0.99
  in training (and one ignored in inference), epsilon 1e-10, 1e-30, 0.5, 3, 100; version 1
  every state with ``consumed_inputs`` [0, 0, 0, 1, 1] (the exporters' value) and [0, 0],
  [0, 0, 0, 0, 0] (contested);
* **numerics classes** (float32-calibrated tables per type; mixed types take the table of the
  statistics' type where X's does not fit it): ``normal``, ``wide`` (offsets, spreads and
  parameters over four decades), ``special`` (NaN, +-inf, +-0 and a subnormal in X in
  inference; NaN in one channel in training: +-inf there would make the mean +-inf by the
  formula and NaN in Welford kernels), ``large-offset`` (mean >> spread: rejects
  E[x^2] - E[x]^2), ``constant-channels`` (half the channels constant: var = 0, Y = B),
  ``tiny-variance``, ``near-limits`` (X near the type's largest value in inference; in
  training as large as the batch variance, the running variance and saved_var can hold),
  ``repeat-run`` (three identical data sets: an in-place update of the running statistics
  must not leak into the next run);
* **data sets**: ``repeat-run`` three identical ones; training with the parameters as
  initializers two (X drawn afresh, the statistics' inputs constant), long channels excepted;
* **contested** models (``Case.contested``): version 1 with X of rank other than 4 or
  ``consumed_inputs`` other than [0, 0, 0, 1, 1]; versions 1 and 6 in training (``is_test``
  0) with Y alone (the text lists Y alone as the test-mode output case).  Tags ``ambiguous``
  (``saved_var``: the variance here, the inverse standard deviation in onnxruntime and
  cuDNN; ``v1-training-Y-only``/``v6-training-Y-only``), ``training_mode`` (the mode the
  model runs in), ``epsilon`` (default/tiny/large), ``momentum`` (as written, or
  ``default``), ``C``, ``T1``/``T2`` (the types of scale and of the statistics),
  ``is_test``/``spatial`` (with defaults), ``consumed_inputs``;
* **tolerances** derived from the reference's legitimate variants plus the propagated rounding
  of the batch statistics (docs/tolerance.md);
* **error cases**: parameters of the wrong length or rank, rank-0 X, rank-1 X with
  parameters of length != 1, output counts the schema forbids, extra outputs in inference,
  types outside the constraints, a missing ``consumed_inputs``, version 7 spatial=0 with (C)
  parameters.

Where a half-type X meets a tiny epsilon, channels whose ``var + epsilon`` would make
``scale / sqrt(var + epsilon)`` overflow the type are given a variance it can hold: a
legitimate folded or inverse-square-root kernel in that type cannot represent the model
otherwise.
"""

from __future__ import annotations

from functools import lru_cache

import numpy as np

from ..opspec import op_spec
from ..reference import batch_normalization as ref
from ..tolerance import DEFAULT_ULPS, chain_ulps, derive_tolerance
from . import values as V
from .engine import register_entries
from .entry import Attrs, Entry, Err, Shape

OP = "BatchNormalization"
#: Graph names of the formal outputs 1 and 2 of versions 1-9 (module docstring).
OUTPUT_NAMES = {"mean": "running_mean", "var": "running_var"}
#: Optional outputs of versions 1-9 by formal name.
OPTIONAL_OLD = ("mean", "var", "saved_mean", "saved_var")
#: The mode attribute per version: (name, training value, inference value); 7 and 9 have none.
MODE = {1: ("is_test", 0, 1), 6: ("is_test", 0, 1), 14: ("training_mode", 1, 0), 15: ("training_mode", 1, 0)}
#: (offset, std) of the large-offset class per type: the spread stays resolved (std >= 32 ulp
#: of the offset) while E[x^2] - E[x]^2 in the type loses everything (float, double) or
#: E[x^2] overflows it (float16).  (The retired generators' shared table; the other families
#: keep their own calibrations.)
LARGE_OFFSET = {"float16": (512.0, 16.0), "bfloat16": (1024.0, 64.0), "float": (1.0e4, 1.0), "double": (1.0e9, 1.0e-3)}
#: (sigma, center) of the tiny-variance class per type; its Shape pattern sets epsilon 1e-20.
TINY = {"float16": (1e-3, 2e-3), "bfloat16": (1e-6, 2e-6), "float": (1e-6, 1e-4), "double": (1e-9, 1e-7)}
TINY_EPS = 1e-20
#: Restrictiveness order of the tables above: a mixed-type case takes the first of its types.
NARROW = ("float16", "bfloat16", "float", "double")
MOMENTA = (0.0, 1.0, 0.5, 0.6180339887, 0.1, 0.99)
#: consumed_inputs of version 1: the exporters' value, and two the current schema allows but
#: ONNX 1.0's forbade (contested).
CONSUMED_OTHER = ((0, 0), (0, 0, 0, 0, 0))


# ----------------------------------------------------------------------------- mode and outputs
@lru_cache(maxsize=None)
def _defaults(version: int) -> dict:
    """The schema's attribute defaults of ``version``."""
    return {k: a.default for k, a in op_spec(OP).versions[version].attributes.items() if a.default is not None}


def graph_outputs(outputs) -> list[str]:
    """Graph names (:data:`OUTPUT_NAMES`) of formal output names."""
    return [OUTPUT_NAMES.get(o, o) for o in outputs]


def training(version: int, attrs, outputs) -> bool:
    """Whether the node trains (:func:`conformance.reference.batch_normalization.is_training`),
    the schema's defaults filled in; ``outputs``: formal or graph names of the optional
    outputs requested (Y may be among them)."""
    return ref.is_training(version, {**_defaults(version), **attrs}, [o for o in outputs if o != "Y"])


def _outputs_rule(version: int, attrs, outputs) -> bool:
    """Optional outputs only in training (7 and 9: the outputs decide the mode)."""
    return version in (7, 9) or training(version, attrs, ()) or not outputs


def _output_slots(version: int, attrs, outputs) -> int:
    """Node output count: 3 in training from 14; 5 when an optional output is requested before
    14 (the schema allows 1 or 5 there); else 1 (Y alone)."""
    if version >= 14:
        return 3 if training(version, attrs, outputs) else 1
    return 5 if outputs else 1


def _ctx_training(ctx) -> bool:
    return training(ctx.version, ctx.attrs, ctx.outputs)


# ----------------------------------------------------------------------------- shape table
def _tmpl(x: str, p: str) -> dict:
    return {"X": x, "scale": p, "B": p, "mean": p, "var": p, "input_mean": p, "input_var": p}


def _pat(name, x, p="C", attrs=None, since=1, until=15, dims=None, numerics=(), outputs=None) -> Shape:
    return Shape(name, _tmpl(x, p), attrs or {}, since, until, dims or {}, tuple(numerics), outputs)


#: The optional-output sets a training model of most patterns requests: every running
#: statistic, with (1-9) and without the saved ones.  Inference requests none (Y alone is the
#: only set its rule admits).  The other sets -- one running statistic, one saved statistic,
#: Y alone in training -- come from the unrestricted ``N=1`` patterns and the per-type fill
#: (``outputs_per_type``): a runtime that rejects or crashes on them (onnxruntime) would
#: otherwise leave most training cases unjudged.
MAIN_OUTS = (("mean", "var"), OPTIONAL_OLD, ("running_mean", "running_var"))
_LONG = ("normal", "large-offset")


def _shapes() -> tuple[Shape, ...]:
    main = {"outputs": MAIN_OUTS}
    out = [
        _pat("r2", "NC", **main),
        _pat("r3", "NCH", **main),
        _pat("r4", "NCHW", **main),
        _pat("r5", "NCDHW", dims={c: (2, 3) for c in "NCDHW"}, **main),
        _pat("r1", "N", "1", since=9, dims={"N": (2, 16)}, **main),
        _pat("r4/C=1", "N1HW", "1", **main),
        _pat("r3/N=1", "1CH", since=6),
        _pat("r4/N=1", "1CHW"),
        _pat("r4/tiny-eps", "NCHW", attrs={"epsilon": TINY_EPS}, numerics=("tiny-variance",), **main),
        # spatial=0: 1 and 6 give 1-D parameters of size C (unambiguous where D1*...*Dn = 1);
        # 7 gives them the shape C x D1 x ... x Dn
        _pat("spatial0/r2", "NC", attrs={"spatial": 0}, until=7, **main),
        _pat("spatial0/r4-11", "NC11", attrs={"spatial": 0}, until=6, **main),
        _pat("spatial0/r3", "NCH", "CH", attrs={"spatial": 0}, since=7, until=7, **main),
        _pat("spatial0/r4", "NCHW", "CHW", attrs={"spatial": 0}, since=7, until=7, **main),
        # 7 and 9 infer only with Y alone, one of the 16 output sets: patterns of their own
        _pat("r3/infer", "NCH", since=7, until=9, outputs=((),)),
        _pat("r5/infer", "NCDHW", since=7, until=9, dims={c: (2, 3) for c in "NCDHW"}, outputs=((),)),
        _pat("spatial0/r3/infer", "NCH", "CH", attrs={"spatial": 0}, since=7, until=7, outputs=((),)),
    ]
    # zero-size batches, inference only (an empty batch has no statistics)
    infer = ((1, 6, {"is_test": 1}, "/is_test=1"), (7, 9, {}, ""), (14, 15, {"training_mode": 0}, "/training_mode=0"))
    for since, until, attrs, sfx in infer:
        out.append(_pat(f"zero-size/r4{sfx}", "0CHW", attrs=attrs, since=since, until=until, numerics=("normal",),
                        outputs=((),)))
        out.append(_pat(f"zero-size/r2{sfx}", "0C", attrs=attrs, since=max(since, 6), until=until,
                        numerics=("normal",), outputs=((),)))
        if until >= 9:
            out.append(_pat(f"zero-size/r1{sfx}", "0", "1", attrs=attrs, since=max(since, 9), until=until,
                            numerics=("normal",), outputs=((),)))
    # long channels (>= 4096 elements per channel), training only; one rank per version
    # (their variants are the costly ones)
    big = {"C": (2, 3)}
    long = ((1, "r4", "2CHW", {"C": (1, 2), "H": (64, 64), "W": (32, 32)}),
            (6, "r2", "LC", {"L": (4096, 4096), **big}),
            (7, "r3", "2CL", {"L": (2048, 2048), **big}),
            (9, "r1", "L", {"L": (4100, 4100)}),
            (14, "r5", "2CDHW", {"C": (2, 2), "D": (2, 2), "H": (32, 32), "W": (32, 32)}),
            (15, "r4", "2CHW", {"C": (1, 2), "H": (64, 64), "W": (32, 32)}))
    for v, rank, x, dims in long:
        mode = MODE.get(v)
        attrs = {mode[0]: mode[1]} if mode else {}
        sfx = f"/{mode[0]}={mode[1]}" if mode else ""
        out.append(_pat(f"long/{rank}{sfx}", x, "1" if x == "L" else "C", attrs=attrs, since=v, until=v, dims=dims,
                        numerics=_LONG, outputs=MAIN_OUTS))
    return tuple(out)


# ----------------------------------------------------------------------------- attribute states
def _states() -> tuple[Attrs, ...]:
    """Attribute states (module docstring); each applies where its attributes exist."""
    plan = [("train", {}, "t"), ("infer", {}, "i")]
    plan += [(f"train/momentum={m:g}", {"momentum": m}, "t") for m in MOMENTA]
    plan += [("infer/momentum=0.5", {"momentum": 0.5}, "i")]
    plan += [("train/epsilon=1e-10", {"epsilon": 1e-10}, "t"), ("infer/epsilon=1e-10", {"epsilon": 1e-10}, "i"),
             ("infer/epsilon=1e-30", {"epsilon": 1e-30}, "i"), ("train/epsilon=1e-30", {"epsilon": 1e-30}, "t"),
             ("train/epsilon=0.5", {"epsilon": 0.5}, "t"), ("infer/epsilon=3", {"epsilon": 3.0}, "i"),
             ("train/epsilon=100", {"epsilon": 100.0}, "t")]
    out = []
    for versions in ((1,), (6,), (7, 9), (14, 15)):
        v0 = versions[0]
        seen = set()
        if v0 == 1:
            out.append(Attrs({"consumed_inputs": list(ref.LEGACY_CONSUMED_INPUTS)}, 1, 1, "default"))
            out.append(Attrs({"consumed_inputs": list(ref.LEGACY_CONSUMED_INPUTS),
                              **{k: d for k, d in _defaults(1).items()}}, 1, 1, "explicit-default"))
        for tag, values, mode in plan:
            vals = dict(values)
            if v0 in MODE:
                name, t, i = MODE[v0]
                vals[name] = t if mode == "t" else i
            else:
                tag = tag.split("/", 1)[1] if "/" in tag else ""
            key = repr(sorted(vals.items()))
            if not tag or key in seen:
                continue
            seen.add(key)
            if v0 == 1:
                vals["consumed_inputs"] = list(ref.LEGACY_CONSUMED_INPUTS)
            out.append(Attrs(vals, versions[0], versions[-1], tag))
        if v0 == 1:
            for ci in CONSUMED_OTHER:
                for mode, val in (("train", 0), ("infer", 1)):
                    out.append(Attrs({"consumed_inputs": list(ci), "is_test": val}, 1, 1,
                                     f"consumed={','.join(map(str, ci))}/{mode}"))
    return tuple(out)


# ----------------------------------------------------------------------------- numerics classes
def _narrow(*types: str) -> str:
    return next(t for t in NARROW if t in types)


def _fmax(t: str) -> float:
    return float(V.finfo(t).max)


def _rsign(rng, shape):
    return np.where(rng.random(shape) < 0.5, -1.0, 1.0)


def _layout(ctx, x_shape):
    return ref.layout(x_shape, ref.spatial_of(ctx.version, ctx.attrs), ctx.version)


def _from_groups(g: np.ndarray, lay: ref.Layout) -> np.ndarray:
    """Inverse of :meth:`Layout.to_groups`."""
    xs = lay.x_shape
    if len(xs) == 1:
        return g.reshape(xs)
    if not lay.spatial:
        return g.T.reshape(xs).copy()
    return np.moveaxis(g.reshape((xs[1], xs[0]) + xs[2:]), 0, 1).copy()


def _values(num: str, rng, ctx, shapes) -> list[np.ndarray]:
    """Float64 values of X, scale, B, mean, var for numerics class ``num`` (module docstring)."""
    names = ref.input_names(ctx.version)
    t, t1, t2 = ctx.types[names[0]], ctx.types[names[1]], ctx.types[names[3]]
    xs = tuple(shapes[0])
    lay = _layout(ctx, xs)
    ps = lay.param_shape
    train = _ctx_training(ctx)
    eps = ref.f32(ctx.attrs["epsilon"])
    scale = rng.uniform(0.5, 1.5, ps) * _rsign(rng, ps)
    b = rng.normal(0.0, 1.0, ps)
    mean_in = rng.normal(0.0, 1.0, ps)
    var_in = rng.uniform(0.5, 2.0, ps)
    if num in ("normal", "constant-channels", "special", "repeat-run"):
        mu, sd = rng.uniform(-2.0, 2.0, ps), rng.uniform(0.5, 2.0, ps)
        x = lay.bcast(mu) + lay.bcast(sd) * rng.normal(size=xs)
        if not train:
            mean_in, var_in = mu + 0.3 * sd * rng.normal(size=ps), sd**2 * rng.uniform(0.7, 1.4, ps)
    elif num == "wide":
        mu = rng.uniform(-20.0, 20.0, ps)
        sd = 10.0 ** rng.uniform(-1.3, 1.3, ps)
        scale = 10.0 ** rng.uniform(-1.0, 1.0, ps) * _rsign(rng, ps)
        b = rng.normal(0.0, 10.0, ps)
        x = lay.bcast(mu) + lay.bcast(sd) * rng.normal(size=xs)
        if not train:
            mean_in, var_in = mu + 0.5 * sd * rng.normal(size=ps), sd**2 * 10.0 ** rng.uniform(-0.5, 0.5, ps)
    elif num == "large-offset":
        # X's table unless the statistics' type cannot hold its offset
        off, std = LARGE_OFFSET[t if 4 * LARGE_OFFSET[t][0] < _fmax(t2) else t2]
        mu = off * rng.uniform(0.95, 1.05, ps)
        x = lay.bcast(mu) + std * rng.normal(size=xs)
        mean_in, var_in = mu + 0.3 * std * rng.normal(size=ps), std**2 * rng.uniform(0.7, 1.4, ps)
    elif num == "tiny-variance":
        sigma, center = TINY[_narrow(t, t2)]
        mu = rng.uniform(-center, center, ps)
        x = lay.bcast(mu) + sigma * rng.normal(size=xs)
        if not train:
            mean_in, var_in = mu, sigma**2 * rng.uniform(0.7, 1.4, ps)
    elif num == "near-limits":
        scale = rng.uniform(0.25, 1.0, ps) * _rsign(rng, ps)
        if train:
            # as large as every statistic can hold: the sum of squares (4a^2 per element, n of
            # them, accumulated in float or double), the running mean and variance (T2) and
            # saved_var (T)
            n = max(lay.group_size, 1)
            lim = [_fmax(t), np.sqrt(_fmax("double" if t == "double" else "float") / (4 * n))]
            if "mean" in ctx.outputs or "running_mean" in ctx.outputs:
                lim.append(_fmax(t2))
            if "var" in ctx.outputs or "running_var" in ctx.outputs:
                lim.append(np.sqrt(_fmax(t2)))
            if "saved_var" in ctx.outputs:
                lim.append(np.sqrt(_fmax(t)))
            amp = 0.45 * min(lim)
        else:
            amp = 0.45 * _fmax(t)
            lim = min(_fmax(t), _fmax(t2))
            mean_in, var_in = rng.uniform(-0.05, 0.05, ps) * lim, rng.uniform(1.0, 4.0, ps)
        x = rng.uniform(-1.0, 1.0, xs) * amp
    else:
        raise ValueError(f"unknown numerics class {num!r}")
    x = V.representable(x, t)
    if num == "constant-channels" and lay.groups:
        k = lay.groups
        const = np.zeros(k, bool)
        const[rng.permutation(k)[: max(1, k // 2)]] = True
        if k > 1 and const.all():
            const[0] = False
        g = lay.to_groups(x)
        # few mantissa bits: every summation order gives the mean exactly (var = 0, Y = B)
        cval = rng.integers(-16, 17, k) / 8.0
        g[const] = cval[const][:, None]
        x = _from_groups(g, lay)
        if not train:
            # var = 0: half of these channels have mean == the constant (Y = B), the others a
            # few sqrt(eps) away (Y of order 1)
            var_in = np.where(const.reshape(ps), 0.0, var_in)
            same = const & ((rng.random(k) < 0.5) | (eps < 1e-8))
            near = cval + np.sqrt(eps) * rng.uniform(-2.0, 2.0, k)
            mean_in = np.where(const.reshape(ps), np.where(same, cval, near).reshape(ps), mean_in)
    if num == "special" and x.size:
        if train:
            g = lay.to_groups(x)
            row = int(rng.integers(0, g.shape[0]))
            g[row, rng.permutation(g.shape[1])[: max(1, g.shape[1] // 4)]] = np.nan
            x = _from_groups(g, lay)
        else:
            flat = x.reshape(-1).copy()
            sub = float(V.finfo(t).smallest_subnormal)
            for p_, val in zip(rng.permutation(flat.size), (np.nan, np.inf, -np.inf, 0.0, -0.0, sub)):
                flat[p_] = val
            x = flat.reshape(xs)
    vals = [x, V.representable(scale, t1), V.representable(b, t1), V.representable(mean_in, t2),
            V.representable(var_in, t2)]
    return _fold_fits(ctx, vals, lay, train, rng)


def _fold_fits(ctx, vals, lay: ref.Layout, train: bool, rng) -> list[np.ndarray]:
    """Half-type X: give channels whose ``scale / sqrt(var + eps)`` (times X) would overflow T a
    variance T can hold (module docstring): in training by moving elements of the channel a
    few ulps apart, in inference by raising ``var``."""
    t = ctx.types["X"]
    if t not in ("float16", "bfloat16") or not lay.groups or not vals[0].size:
        return vals
    x, scale, b, mean_in, var_in = vals
    eps = ref.f32(ctx.attrs["epsilon"])
    g = lay.to_groups(x)
    xmax = np.max(np.abs(np.where(np.isfinite(g), g, 0.0)), axis=1)
    smax = np.abs(scale).reshape(-1)
    # inv = 1/sqrt(var + eps) must keep inv, inv*|scale| and inv*|scale|*|x| below fmax/8
    inv_max = _fmax(t) / (8.0 * np.maximum(smax, 1.0) * np.maximum(xmax, 1.0))
    vmin = 1.0 / inv_max**2 - eps
    if train:
        _, var = ref.exact_stats(np.where(np.isfinite(g), g, 0.0))
        bad = var < vmin
        if bad.any():
            ulp = np.spacing(np.maximum(np.abs(g[bad]), V.finfo(t).tiny).astype(V.np_dtype(t)), dtype=V.np_dtype(t))
            step = np.maximum(np.sqrt(np.maximum(vmin[bad], 0.0)) * 4.0, 4.0 * ulp.astype(np.float64).max(axis=1))
            d = np.where(np.arange(g.shape[1]) % 2 == 0, 1.0, -1.0)[None, :] * step[:, None]
            g[bad] = g[bad] + d
            x = V.representable(_from_groups(g, lay), t)
    else:
        need = vmin.reshape(var_in.shape) * 4.0
        var_in = np.where(var_in < need, V.representable(np.maximum(need, 0.0), ctx.types[ref.input_names(ctx.version)[4]]),
                          var_in)
    return [x, scale, b, mean_in, var_in]


def _cls(num: str):
    def fn(rng, ctx, shapes):
        return _values(num, rng, ctx, shapes)

    fn.__name__ = fn.__qualname__ = f"numerics_{num.replace('-', '_')}"
    return fn


CLASSES = ("normal", "wide", "special", "large-offset", "constant-channels", "tiny-variance", "near-limits",
           "repeat-run")


# ----------------------------------------------------------------------------- hooks
def _oracle(ctx, *inputs, **attrs):
    """Every output of the version (schema order); the unrequested optional ones ``None``."""
    v = ctx.version
    names = ref.input_names(v)
    req = graph_outputs(ctx.outputs)
    got = ref.oracle(v, dict(zip(names, inputs)), attrs, req)
    formal = [f.name for f in op_spec(OP).versions[v].outputs]
    return tuple(got.get(OUTPUT_NAMES.get(o, o)) for o in formal)


def _tolerance(ctx, inputs, attrs, outputs):
    """Per output: the reference's legitimate variants' spread (x4) plus a few ulps, plus the
    propagated rounding of the batch statistics in training (docs/tolerance.md)."""
    v = ctx.version
    names = ref.input_names(v)
    ins = dict(zip(names, inputs))
    types = {n: V.elem(ctx.types[n]) for n in names}
    req = graph_outputs(ctx.outputs)
    var = ref.variants(v, ins, attrs, req, types)
    otypes = ref.output_types(v, types)
    prop = ref.propagated_bounds(v, ins, attrs, types[names[0]]) if ref.is_training(v, attrs, req) else {}
    out = {}
    for formal, g in zip(ctx.outputs, req):
        # Y's last stage composes sqrt and the division at the budget table's bounds (chain_ulps)
        ulps = chain_ulps(("sqrt", "divide"), V.name_of(otypes[g])) if formal == "Y" else DEFAULT_ULPS
        out[formal] = derive_tolerance(outputs[formal], var[g], otypes[g], propagated=prop.get(g) or None, ulps=ulps)
    return out


#: Elements per statistic group from which a case is a long-channel one (one data set: their
#: variants are the costly ones).
LONG_GROUP = 4096


def _datasets(ctx, numerics, params):
    """``repeat-run``: three identical data sets; training with the parameters as initializers:
    two (X drawn afresh, the running statistics' inputs constant; module docstring), except
    for long channels."""
    if numerics == "repeat-run":
        return 3, tuple(ref.input_names(ctx.version))
    long = _layout(ctx, ctx.shapes["X"]).group_size >= LONG_GROUP
    return (2, ()) if params == "initializers" and _ctx_training(ctx) and not long else (1, ())


def _optional(ctx) -> list[str]:
    return [o for o in ctx.outputs if o != "Y"]


def _contested(ctx, attrs):
    why = []
    if ctx.version == 1:
        r = len(ctx.shapes["X"])
        if r != 4:
            why.append(f"BatchNormalization-1 describes X as a 4-dimensional NCHW tensor (rank {r} given); "
                       "version 6 generalised it to N x C x D1 ... Dn")
        ci = tuple(ctx.given.get("consumed_inputs", ()))
        if ci != ref.LEGACY_CONSUMED_INPUTS:
            why.append(f"consumed_inputs={list(ci)}: the current schema places no constraint, ONNX 1.0's schema "
                       "required mean and var consumed (EnforceConsumed({{3, 1}, {4, 2}}))")
    if ctx.version in ref.IS_TEST_VERSIONS and _ctx_training(ctx) and not _optional(ctx):
        why.append("is_test=0 selects training, but the text lists Y alone as the test-mode output case "
                   "('Output case #2: Y (test mode)')")
    return "; ".join(why) or None


def _tags(ctx) -> dict:
    v = ctx.version
    train = _ctx_training(ctx)
    eps = ref.f32(ctx.attrs["epsilon"])
    x = ctx.shapes["X"]
    out = {"training_mode": int(train), "C": int(x[1]) if len(x) >= 2 else 1,
           "epsilon": "default" if eps == ref.f32(ref.DEFAULT_EPSILON) else ("tiny" if eps < 1e-6 else
                                                                             ("large" if eps >= 0.1 else "other"))}
    if "saved_var" in ctx.outputs:
        out["ambiguous"] = "saved_var"
    elif v in ref.IS_TEST_VERSIONS and train and not _optional(ctx):
        out["ambiguous"] = f"v{v}-training-Y-only"
    if v == 1:
        out["consumed_inputs"] = ",".join(map(str, ctx.given.get("consumed_inputs", ()))) or "absent"
    if "is_test" in ctx.attrs:
        out["is_test"] = int(ctx.attrs["is_test"])
    if "spatial" in ctx.attrs:
        out["spatial"] = int(ctx.attrs["spatial"])
    names = ref.input_names(v)
    out["T1"], out["T2"] = ctx.types[names[1]], ctx.types[names[3]]
    out["momentum"] = f"{float(ctx.given['momentum']):g}" if "momentum" in ctx.given else "default"
    return out


def _per_type(version: int, combo) -> int:
    """Value cases per type combination: 42 per type before 14 (one type parameter, 3 types);
    for 14 and 15 fewer for the mixed combinations, which few runtimes implement (12 x 7 + 4 x
    28 and 60 x 3 + 4 x 28: the single-type depth of the retired generator)."""
    if version < 14:
        return 42
    if len(set(combo.values())) == 1:
        return 28
    return 7 if version == 14 else 3


# ----------------------------------------------------------------------------- error cases
def _err(v, tag, why, x, params=None, *, attrs=None, outputs=None, slots=None, type_name=None, types=None) -> Err:
    """An error case of version ``v``: X of shape ``x``, parameters of shape (C) unless
    ``params`` (formal name -> shape) says otherwise."""
    names = ref.input_names(v)
    c = (x[1] if len(x) > 1 else 1,)
    shp = {n: c for n in names[1:]}
    shp.update(params or {})
    a = dict(attrs or {})
    if v == 1:
        a.setdefault("consumed_inputs", list(ref.LEGACY_CONSUMED_INPUTS))
    outs = None if outputs is None else {o: (None,) for o in outputs}
    return Err(why, tag, a, (tuple(x),) + tuple(tuple(shp[n]) for n in names[1:]), since=v, until=v,
               type_name=type_name, types=types or {}, outputs=outs, slots=slots)


def _errors() -> tuple[Err, ...]:
    out = []
    old5, new3 = OPTIONAL_OLD, ("running_mean", "running_var")
    for v in (1, 6, 7, 9, 14, 15):
        nm = ref.input_names(v)
        inf = {"is_test": 1} if v in ref.IS_TEST_VERSIONS else {}
        x4 = (2, 3, 2, 2) if v == 1 else (2, 3, 4)
        out.append(_err(v, "scale-shape", "scale must have shape (C)", x4, {"scale": (4,)}, attrs=inf))
        out.append(_err(v, "rank0", "X of rank 0 (spec: N x C x D1 ... Dn, or (N,))", (), {n: (1,) for n in nm[1:]},
                        attrs=inf))
        out.append(_err(v, "mean-shape", f"{nm[3]} must have shape (C)", (3, 2, 2, 2) if v == 1 else (3, 2, 2),
                        {nm[3]: (3,)}, attrs=inf))
    out.append(_err(9, "bias-shape", "B must have shape (C)", (2, 4), {"B": (3,)}))
    out.append(_err(15, "bias-shape", "B must have shape (C)", (2, 4, 3), {"B": (1,)}, type_name="float16"))
    out.append(_err(14, "var-shape", "input_var must be 1-D of shape (C)", (2, 3, 2), {"input_var": (3, 1)}))
    out.append(_err(7, "var-shape", "var must have shape (C) with spatial=1", (2, 3, 2), {"var": (3, 2)}))
    out.append(_err(15, "var-shape", "input_var must have shape (C)", (4, 3), {"input_var": (4,)},
                    attrs={"training_mode": 1}, outputs=new3, slots=3))
    out.append(_err(9, "scale-shape", "scale must have shape (C)", (4, 3, 2), {"scale": (2,)}, outputs=old5, slots=5))
    for v in (9, 14, 15):
        out.append(_err(v, "rank1-param-shape", "rank-1 X means C = 1: parameters of shape (1)", (6,),
                        {n: (6,) for n in ref.input_names(v)[1:]}))
    for v in (6, 7, 9):
        out.append(_err(v, "output-count", "the schema allows 1 or 5 outputs (3 given)", (4, 3),
                        outputs=("mean", "var"), slots=3))
    out.append(_err(9, "output-count", "the schema allows 1 or 5 outputs (2 given)", (4, 3), type_name="double",
                    outputs=("mean",), slots=2))
    out.append(_err(7, "output-count", "the schema allows 1 or 5 outputs (4 given)", (4, 3), type_name="float16",
                    outputs=("mean", "var", "saved_mean"), slots=4))
    for v in (14, 15):
        out.append(_err(v, "inference-extra-outputs", "training_mode=False: extra outputs are invalid", (4, 3, 2),
                        attrs={"training_mode": 0}, outputs=new3, slots=3))
        out.append(_err(v, "training-output-count",
                        "training_mode=True: outputs Y, running_mean, running_var (3 slots), 1 given", (4, 3, 2),
                        attrs={"training_mode": 1}, outputs=(), slots=1))
    out.append(_err(15, "training-output-count",
                    "training_mode=True: outputs Y, running_mean, running_var (3 slots), 2 given", (4, 3),
                    attrs={"training_mode": 1}, outputs=("running_mean",), slots=2))
    out.append(_err(14, "inference-extra-outputs", "training_mode absent (False): extra outputs are invalid", (4, 3),
                    type_name="double", outputs=new3, slots=3))
    out.append(_err(9, "type", "bfloat16 is not in T before version 14", (2, 3), type_name="bfloat16"))
    out.append(_err(7, "type", "bfloat16 is not in T before version 14", (2, 3), type_name="bfloat16"))
    out.append(_err(14, "type", "scale and B must have X's type T in version 14", (2, 3), type_name="float16",
                    types={"scale": "float", "B": "float"}))
    out.append(_err(9, "type", "mean must have X's type T in version 9", (2, 3), types={"mean": "double"}))
    out.append(_err(15, "type", "input_mean and input_var share T2", (2, 3), types={"input_var": "double"}))
    out.append(_err(15, "type", "T is a float type (int32 given)", (2, 3), types={"X": "int32"}))
    out.append(_err(7, "spatial0-param-shape", "spatial=0: parameters have shape (C x D1 x ... x Dn)", (2, 3, 4),
                    attrs={"spatial": 0}))
    # version 1: consumed_inputs is required; version 6's error cases
    out.append(_err(1, "missing-attribute", "consumed_inputs is a required attribute of version 1", (2, 3, 2, 2),
                    attrs={"is_test": 1, "consumed_inputs": None}))
    out.append(_err(1, "missing-attribute", "consumed_inputs is a required attribute of version 1", (4, 3, 2, 2),
                    type_name="float16", attrs={"consumed_inputs": None}, outputs=old5, slots=5))
    out.append(_err(1, "var-shape", "var must have shape (C)", (4, 3, 2, 1), {"var": (2,)}, outputs=old5, slots=5))
    out.append(_err(1, "output-count", "the schema allows 1 or 5 outputs (3 given)", (4, 3, 1, 2),
                    outputs=("mean", "var"), slots=3))
    out.append(_err(1, "type", "bfloat16 is not in T of version 1", (2, 3, 2, 2), type_name="bfloat16",
                    attrs={"is_test": 1}))
    out.append(_err(1, "type", "mean must have X's type T in version 1", (2, 3, 2, 2), attrs={"is_test": 1},
                    types={"mean": "double"}))
    return tuple(out)


ENTRY = Entry(
    OP, _oracle, family="shaped", shapes=_shapes(), attrs=_states(), tolerance=_tolerance,
    float_numerics={n: _cls(n) for n in CLASSES}, outputs_rule=_outputs_rule, output_slots=_output_slots,
    output_names=OUTPUT_NAMES, datasets=_datasets, tags=_tags, contested=_contested, errors=_errors(),
    per_type=_per_type, outputs_per_type=training,
    notes={6: "consumed_inputs goes (version 1 = version 6 + consumed_inputs)",
           7: "is_test goes: the number of outputs decides the mode",
           9: "spatial goes; rank-1 X (N,) with C = 1",
           14: "training_mode; running statistics of type U; saved_mean/saved_var go",
           15: "scale/B of type T1, statistics of type T2"})
ENTRIES = (ENTRY,)
register_entries(ENTRIES, family="batch normalization")
