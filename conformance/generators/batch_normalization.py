"""Case generator for ai.onnx BatchNormalization, versions 1, 6, 7, 9, 14 and 15.

Oracle, mode rules and tolerance policy: :mod:`conformance.reference.batch_normalization` (its
docstring records the decisions: training mode per version, population variance,
rank-1 X as C = 1, spatial=0 as per-activation statistics, saved_mean/saved_var).

Graph naming: inputs use the schema names.  Outputs 1 and 2 of versions 6/7/9 are
named ``mean``/``var`` in the schema, like inputs 3 and 4; one graph cannot use a name
twice (SSA), so every version's graphs call them ``running_mean``/``running_var``
(the names versions 14/15 give them); ``saved_mean``/``saved_var`` keep theirs.

Output slots: the mode of 7/9 is decided by the number of node outputs (the schema
allows 1 or 5) and 14/15 training requires 3.  To request a subset of the optional
outputs, the node keeps its trailing empty output names (``Y, running_mean, "", "",
""``), through ``Case.output_slots`` (tag ``output_slots``).

Suite layout (deterministic in ``seed``; each case draws from its own
``case_rng(seed, "bn", key)`` stream):

* ``grid``: version x dtype x mode x optional-output pattern allowed in that mode:
  6/7/9: inference (Y) and training with each of the 15 non-empty subsets of
  (running_mean, running_var, saved_mean, saved_var) in 5 slots; 14/15: inference (Y)
  and training with (running_mean, running_var) each present or absent in 3 slots.
  Secondary coordinates (rank 1-5, params as inputs or initializers, opsets, data
  sets, epsilon, momentum) rotate with the index.
* ``numerics``: version x dtype x mode x {large-offset, constant-channels,
  special-values, tiny-variance, near-limits}; ``long-channels`` (>= 4096 elements per
  channel in training); ``zero-size`` (N = 0, inference).
* ``shapes`` (rank 1-5, C = 1, N = 1, N != C), ``epsilon`` (default omitted, default
  explicit, tiny, large) and ``momentum`` (default, 0.9, 0, 1, 0.5, 0.618034...,
  0.1, 0.99) sweeps; ``opsets`` (each version at its since_version and later opsets
  where it is current, BN-15 also at 28); ``spatial`` (6/7); ``mixed`` types (14: T x
  U, all 16 both modes; 15: all 64 (T, T1, T2) in training, a pairwise-covering 16 in
  inference).
* ``repeat-run``: training with the statistics as initializers and three data sets
  with the same X: every run must give the same outputs (an in-place update of the
  running statistics must not leak into the next run).
* ``ambiguous``: version 6 with is_test=0 (training by the attribute text) but only Y
  requested; tag ``ambiguous``.  Every case requesting ``saved_var`` is tagged
  ``ambiguous: saved_var`` (variance vs onnxruntime's inverse standard deviation).
* ``error``: rank-0 X, scale/B/mean/var of the wrong length or rank, rank-1 X with
  parameters of length != 1, output counts the schema forbids (2-4 slots in 6/7/9,
  3 in 14/15 inference, fewer than 3 in 14/15 training), types outside the
  constraints (bfloat16 before 14, scale != X type in 14, input_mean != input_var type
  in 15), version 7 spatial=0 with (C) parameters.

Version 1 (opsets 1-5) runs through the same layout as version 6 (it is version 6
plus the required ``consumed_inputs``; see the reference module): every group above
has version-1 cases, with ``consumed_inputs=[0, 0, 0, 1, 1]`` (what the exporters of
the time wrote, mean/var consumed) unless the spec says otherwise, X of rank 4 (the
version-1 text: "4-dimensional tensor of shape NCHW") in the rotating coordinates, and
spatial=0 on (N, C, 1, 1) or rank 2.  Contested (``Case.contested``: rejection scores
``unsupported``): version-1 X of rank 2, 3 or 5 (outside the version-1 text, defined
from version 6 on), and ``consumed_inputs`` other than [0, 0, 0, 1, 1] -- [0, 0] (what
onnx's 6 -> 5 version converter writes) and [0, 0, 0, 0, 0] -- which the current
schema allows (no constraint on the values) but ONNX 1.0's schema forbade
(``EnforceConsumed({{3, 1}, {4, 2}})``: "Input index 3 must be set to consumed").
Version-1 error cases: ``consumed_inputs`` missing (required), plus version 6's.
Tags ``consumed_inputs`` (e.g. ``0,0,0,1,1``, or ``absent``).

Not generated: training on an empty batch (statistics undefined); +-inf in X in
training (the mean is +-inf by the formula, Welford kernels give NaN); version 6
with spatial=0 on rank > 2 (parameter shape contradictory); version 6 is_test=1 with
5 outputs; training_mode values other than 0/1 (the spec does not forbid them and
onnx treats nonzero as true, but their meaning is not written down).
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass, field

import numpy as np
from onnx import TensorProto

from conformance import dtypes
from conformance.case import Case, DataSet, Input, Output
from conformance.registry import case_rng, register, register_strategy
from conformance.tolerance import derive_tolerance, statistic_rounding_errors
from conformance.generators import common
from conformance.reference import batch_normalization as ref

OP = "BatchNormalization"
F16, BF16, F32, F64 = TensorProto.FLOAT16, TensorProto.BFLOAT16, TensorProto.FLOAT, TensorProto.DOUBLE
TYPES = {1: (F16, F32, F64), 6: (F16, F32, F64), 7: (F16, F32, F64), 9: (F16, F32, F64), 14: (F16, BF16, F32, F64),
         15: (F16, BF16, F32, F64)}
#: Opsets at which each version is the current one (28 = onnx's latest, beyond onnxruntime).
OPSETS = {1: (1, 2, 3, 4, 5), 6: (6,), 7: (7, 8), 9: (9, 11, 13), 14: (14,), 15: (15, 18, 21, 23, 26)}
from conformance.ops.schedule import LATEST_OPSET  # noqa: E402  (one place for the opset constants)
#: consumed_inputs values of version 1: the legacy exporters' (mean/var consumed) and two
#: the current schema allows but ONNX 1.0 forbade (contested, module docstring).
CONSUMED_LEGACY = ref.LEGACY_CONSUMED_INPUTS
CONSUMED_OTHER = ((0, 0), (0, 0, 0, 0, 0))
V1_RANK = 4

#: Shapes per rank (N x C x ...): C = 1, N = 1 and N != C all occur.
SHAPES = {
    1: ((7,), (12,), (5,), (16,)),
    2: ((4, 3), (6, 1), (3, 5), (1, 4)),
    3: ((2, 3, 4), (3, 2, 5), (2, 1, 6), (4, 5, 2)),
    4: ((2, 3, 4, 2), (1, 4, 3, 3), (3, 2, 2, 3), (2, 1, 3, 4)),
    5: ((2, 2, 3, 2, 2), (1, 3, 2, 2, 2), (3, 1, 2, 2, 2)),
}
#: Training shapes with >= 4096 elements per channel (long-channels).
LONG_SHAPES = ((2, 2, 64, 32), (4096, 2), (2, 3, 2048), (1, 1, 64, 64), (2, 2, 2, 32, 32), (4100,))

EPS_TINY = 1e-10
EPS_LARGE = (0.5, 3.0)
MOMENTA = (None, 0.9, 0.0, 1.0, 0.5, 0.6180339887, 0.1, 0.99)
#: (sigma, center, tiny epsilon) of the tiny-variance class per X type.
TINY = {F16: (1e-3, 2e-3, 1e-8), BF16: (1e-6, 2e-6, 1e-14), F32: (1e-6, 1e-4, 1e-14), F64: (1e-9, 1e-7, 1e-20)}
OPT = {"rm": "running_mean", "rv": "running_var", "sm": "saved_mean", "sv": "saved_var"}
SHORT = {"Y": "Y", "running_mean": "rm", "running_var": "rv", "saved_mean": "sm", "saved_var": "sv"}


@dataclass
class Spec:
    """Everything that defines one case (before the data is drawn)."""

    key: str
    version: int
    opset: int
    t: int
    t1: int | None = None
    t2: int | None = None
    training: bool = False
    outputs: tuple[str, ...] = ("Y",)
    x_shape: tuple[int, ...] = (2, 3, 4)
    spatial: int | None = None
    is_test: int | None = None
    training_mode: int | None = None
    epsilon: float | None = None
    eps_tag: str = "default"
    momentum: float | None = None
    params: str = "inputs"
    numerics: str = "normal"
    n_datasets: int = 1
    extra_tags: dict = field(default_factory=dict)
    # error cases
    error: str | None = None
    expect_error: str | None = None
    param_shapes: dict | None = None
    slots: int | None = None
    input_types: dict | None = None
    same_x: bool = False
    #: version 1's consumed_inputs (None: attribute omitted, an error case)
    consumed_inputs: tuple[int, ...] | None = CONSUMED_LEGACY

    @property
    def T1(self) -> int:
        return self.t if self.t1 is None else self.t1

    @property
    def T2(self) -> int:
        return self.t if self.t2 is None else self.t2


# ----------------------------------------------------------------------------- helpers
def _types(spec: Spec) -> dict[str, int]:
    names = ref.input_names(spec.version)
    types = dict(zip(names, (spec.t, spec.T1, spec.T1, spec.T2, spec.T2)))
    if spec.input_types:
        types.update(spec.input_types)
    return types


def _attributes(spec: Spec) -> dict:
    a: dict = {}
    if spec.version in ref.IS_TEST_VERSIONS and spec.is_test is not None:
        a["is_test"] = spec.is_test
    if spec.version == 1 and spec.consumed_inputs is not None:
        a["consumed_inputs"] = list(spec.consumed_inputs)
    if spec.version >= 14 and spec.training_mode is not None:
        a["training_mode"] = spec.training_mode
    if spec.version in ref.SPATIAL_VERSIONS and spec.spatial is not None:
        a["spatial"] = spec.spatial
    if spec.epsilon is not None:
        a["epsilon"] = float(spec.epsilon)
    if spec.momentum is not None:
        a["momentum"] = float(spec.momentum)
    return a


def _default_slots(spec: Spec) -> int:
    if spec.slots is not None:
        return spec.slots
    if not spec.training:
        return 1
    return len(ref.output_names(spec.version))


def _rsign(rng, shape):
    return np.where(rng.random(shape) < 0.5, -1.0, 1.0)


def _draw(spec: Spec, rng: np.random.Generator, lay: ref.Layout, types: dict[str, int]) -> dict[str, np.ndarray]:
    """Float64 values (representable in their types) of every input, by formal name."""
    names = ref.input_names(spec.version)
    pshape = lay.param_shape
    xs = lay.x_shape
    t = spec.t
    num = spec.numerics
    scale = rng.uniform(0.5, 1.5, pshape) * _rsign(rng, pshape)
    b = rng.normal(0.0, 1.0, pshape)
    mean_in = rng.normal(0.0, 1.0, pshape)
    var_in = rng.uniform(0.5, 2.0, pshape)
    if num in ("normal", "constant-channels", "special-values", "zero-size"):
        mu = rng.uniform(-2.0, 2.0, pshape)
        sd = rng.uniform(0.5, 2.0, pshape)
        x = lay.bcast(mu) + lay.bcast(sd) * rng.normal(size=xs)
        if not spec.training:
            mean_in = mu + 0.3 * sd * rng.normal(size=pshape)
            var_in = sd**2 * rng.uniform(0.7, 1.4, pshape)
    elif num in ("large-offset", "long-channels-large-offset"):
        off, std = common.LARGE_OFFSET[dtypes.type_name(t)]
        mu = off * rng.uniform(0.95, 1.05, pshape)
        x = lay.bcast(mu) + std * rng.normal(size=xs)
        mean_in = mu + 0.3 * std * rng.normal(size=pshape)
        var_in = std**2 * rng.uniform(0.7, 1.4, pshape)
    elif num == "long-channels":
        mu = rng.uniform(2.0, 6.0, pshape) * _rsign(rng, pshape)
        sd = rng.uniform(0.5, 2.0, pshape)
        x = lay.bcast(mu) + lay.bcast(sd) * rng.normal(size=xs)
    elif num == "tiny-variance":
        sigma, center, _ = TINY[t]
        mu = rng.uniform(-center, center, pshape)
        x = lay.bcast(mu) + sigma * rng.normal(size=xs)
        if not spec.training:
            mean_in = mu
            var_in = sigma**2 * rng.uniform(0.7, 1.4, pshape)
    elif num == "near-limits":
        fmax = float(dtypes.finfo(t).max)
        x = rng.uniform(-1.0, 1.0, xs) * fmax * 0.45
        scale = rng.uniform(0.25, 1.0, pshape) * _rsign(rng, pshape)
        if not spec.training:
            mean_in = rng.uniform(-0.05, 0.05, pshape) * fmax
            var_in = rng.uniform(1.0, 4.0, pshape)
    else:
        raise ValueError(f"unknown numerics class {num!r}")
    x = common.representable(x, t)
    if num == "constant-channels":
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
        if not spec.training:
            # var = 0: half of these channels have mean == the constant (Y = B), the others
            # mean a few sqrt(eps) away (Y of order 1, like the other channels)
            eps = ref.f32(ref.DEFAULT_EPSILON if spec.epsilon is None else spec.epsilon)
            var_in = np.where(const.reshape(pshape), 0.0, var_in)
            same = const & ((rng.random(k) < 0.5) | (spec.eps_tag == "tiny"))
            near = cval + np.sqrt(eps) * rng.uniform(-2.0, 2.0, k)
            cmean = np.where(same, cval, near)
            mean_in = np.where(const.reshape(pshape), cmean.reshape(pshape), mean_in)
    if num == "special-values":
        flat = x.reshape(-1).copy()
        if spec.training:
            g = lay.to_groups(x)
            row = int(rng.integers(0, g.shape[0]))
            cols = rng.permutation(g.shape[1])[: max(1, g.shape[1] // 4)]
            g[row, cols] = np.nan
            x = _from_groups(g, lay)
        else:
            pos = rng.permutation(flat.size)[:3]
            for p, v in zip(pos, (np.nan, np.inf, -np.inf)):
                flat[p] = v
            x = flat.reshape(xs)
    vals = {names[0]: x, names[1]: scale, names[2]: b, names[3]: mean_in, names[4]: var_in}
    return {n: common.representable(v, types[n]) for n, v in vals.items()}


def _from_groups(g: np.ndarray, lay: ref.Layout) -> np.ndarray:
    xs = lay.x_shape
    if len(xs) == 1:
        return g.reshape(xs)
    if not lay.spatial:
        return g.T.reshape(xs).copy()
    moved = (xs[1], xs[0]) + xs[2:]
    return np.moveaxis(g.reshape(moved), 0, 1).copy()


# ----------------------------------------------------------------------------- building
def _build(spec: Spec, seed: int) -> Case:
    rng = case_rng(seed, "bn", spec.key)
    v = spec.version
    names = ref.input_names(v)
    onames = ref.output_names(v)
    types = _types(spec)
    attrs = _attributes(spec)
    spatial = attrs.get("spatial", 1)
    lay = ref.layout(spec.x_shape, spatial, v) if spec.x_shape else None
    out_types = ref.output_types(v, types)

    # -- data
    raw = []
    fixed = None
    for _k in range(spec.n_datasets):
        if spec.error is None:
            vals = _draw(spec, rng, lay, types)
        else:
            vals = _draw_error(spec, rng, types)
        if spec.params == "initializers":
            if fixed is None:
                fixed = {n: vals[n] for n in names[1:]}
            vals.update(fixed)
        if spec.same_x and raw:
            vals[names[0]] = raw[0][names[0]]
        raw.append(vals)

    inputs = []
    for n in names:
        shape = tuple(np.shape(raw[0][n]))
        init = spec.params == "initializers" and n != "X"
        inputs.append(Input(n, types[n], shape, initializer=init,
                            value=common.as_type(raw[0][n], types[n]) if init else None))

    present = set(spec.outputs)
    tags = {
        "dtype": dtypes.type_name(spec.t),
        "rank": len(spec.x_shape),
        "outputs": ",".join(o for o in onames if o in present),
        "output_slots": _default_slots(spec),
        "params": spec.params,
        "numerics": spec.numerics,
        "epsilon": spec.eps_tag,
        "opset": spec.opset,
        "training_mode": int(spec.training),
        "momentum": "default" if spec.momentum is None else f"{float(spec.momentum):g}",
        "T1": dtypes.type_name(spec.T1),
        "T2": dtypes.type_name(spec.T2),
        "n_datasets": spec.n_datasets,
    }
    if v in ref.IS_TEST_VERSIONS:
        tags["is_test"] = int(attrs.get("is_test", 0))
    if v in ref.SPATIAL_VERSIONS:
        tags["spatial"] = int(spatial)
    if v == 1:
        ci = attrs.get("consumed_inputs")
        tags["consumed_inputs"] = "absent" if ci is None else ",".join(map(str, ci))
    if "saved_var" in present:
        tags["ambiguous"] = "saved_var"
    if len(spec.x_shape) >= 2:
        tags["C"] = int(spec.x_shape[1])
    tags.update(spec.extra_tags)

    label = _label(spec, attrs)
    datasets: list[DataSet] = []
    outputs: list[Output] = []
    if spec.error is not None:
        tags["error"] = spec.error
        for vals in raw:
            datasets.append(DataSet({n: common.as_type(vals[n], types[n]) for n in names
                                     if not (spec.params == "initializers" and n != "X")}))
        for o in onames:
            shape = tuple(spec.x_shape) if o == "Y" else (None,)
            outputs.append(Output(o, out_types[o], None, present=o in present, shape=shape))
    else:
        req = [o for o in onames if o in present]
        exp64 = []
        var_all = []
        prop = {o: 0.0 for o in onames}
        for vals in raw:
            exp64.append(ref.oracle(v, vals, attrs, req))
            var_all.append(ref.variants(v, vals, attrs, req, types))
            if ref.is_training(v, attrs, req):
                for o, b in _propagated(v, vals, attrs, types, lay).items():
                    if o in prop:
                        prop[o] = max(prop[o], b)
        for vals, e in zip(raw, exp64):
            ins = {n: common.as_type(vals[n], types[n]) for n in names
                   if not (spec.params == "initializers" and n != "X")}
            datasets.append(DataSet(ins, {o: dtypes.round_to(e[o], out_types[o]) for o in req}))
        for o in onames:
            if o not in present:
                outputs.append(Output(o, out_types[o], None, present=False))
                continue
            e_cat = np.concatenate([e[o].ravel() for e in exp64])
            vnames = list(var_all[0][o])
            v_cat = {vn: np.concatenate([va[o][vn].ravel() for va in var_all]) for vn in vnames}
            tol = derive_tolerance(e_cat, v_cat, out_types[o], propagated=prop[o] or None)
            outputs.append(Output(o, out_types[o], tol))

    return Case(OP, v, spec.opset, attrs, inputs, outputs, datasets, tags=tags, label=label,
                expect_error=spec.expect_error, output_slots=_default_slots(spec), contested=_contested(spec))


def _propagated(v: int, vals: dict, attrs: dict, types: dict, lay: ref.Layout) -> dict[str, float]:
    """Training mode: bounds of the propagated rounding of batch statistics ``STAT_ULPS`` ulps
    of T off (the elementwise part may hold them in T; :mod:`conformance.tolerance`), per output:
    ``|scale| * E_prop`` for Y, ``dm`` / ``dv + dm^2`` for saved_mean / saved_var and
    ``(1 - momentum)`` times them for the running statistics."""
    names = ref.input_names(v)
    x = np.asarray(vals[names[0]], dtype=np.float64)
    eps, mom = ref.attribute_values(attrs)
    t = types[names[0]]
    g = lay.to_groups(x)
    pr = statistic_rounding_errors(g, t, epsilon=eps)
    gain = np.abs(np.asarray(vals[names[1]], dtype=np.float64)).reshape(-1, 1)

    def mx(a):
        a = a[np.isfinite(a)]
        return float(a.max()) if a.size else 0.0

    om = 1.0 - mom
    return {"Y": mx(pr["y"] * gain), "saved_mean": mx(pr["mean"]), "saved_var": mx(pr["var"]),
            "running_mean": om * mx(pr["mean"]), "running_var": om * mx(pr["var"])}


def _contested(spec: Spec) -> str | None:
    """Why the spec contradicts itself about a version-1 value case (module docstring), else None."""
    if spec.version != 1 or spec.error is not None:
        return None
    why = []
    if len(spec.x_shape) != V1_RANK:
        why.append(f"BatchNormalization-1 describes X as a 4-dimensional NCHW tensor (rank {len(spec.x_shape)} "
                   "given); version 6 generalised it to N x C x D1 ... Dn")
    if spec.consumed_inputs != CONSUMED_LEGACY:
        why.append(f"consumed_inputs={list(spec.consumed_inputs)}: the current schema places no constraint, "
                   "ONNX 1.0's schema required mean and var consumed (EnforceConsumed({{3, 1}, {4, 2}}))")
    return "; ".join(why) or None


def _label(spec: Spec, attrs: dict) -> str:
    parts = [dtypes.type_name(spec.t)]
    if spec.T1 != spec.t or spec.T2 != spec.t:
        parts.append(f"T1={dtypes.type_name(spec.T1)},T2={dtypes.type_name(spec.T2)}")
    parts.append("train" if spec.training else "infer")
    slots = _default_slots(spec)
    onames = ref.output_names(spec.version)[:slots]
    parts.append("outs=" + ",".join(SHORT[o] if o in spec.outputs else "" for o in onames))
    parts.append(f"r{len(spec.x_shape)}")
    if spec.version in ref.SPATIAL_VERSIONS and "spatial" in attrs:
        parts.append(f"spatial={attrs['spatial']}")
    if spec.version in ref.IS_TEST_VERSIONS and "is_test" in attrs:
        parts.append(f"is_test={attrs['is_test']}")
    if spec.version == 1 and spec.consumed_inputs != CONSUMED_LEGACY:
        ci = attrs.get("consumed_inputs")
        parts.append("consumed=" + ("absent" if ci is None else ",".join(map(str, ci))))
    if spec.eps_tag != "default" or "epsilon" in attrs:
        parts.append(f"eps={attrs.get('epsilon', ref.DEFAULT_EPSILON):g}")
    if "momentum" in attrs and spec.training:
        parts.append(f"mom={attrs['momentum']:g}")
    if spec.params == "initializers":
        parts.append("init")
    if spec.opset != spec.version:
        parts.append(f"opset={spec.opset}")
    parts.append(spec.error and f"error={spec.error}" or spec.numerics)
    return "/".join(parts)


# ----------------------------------------------------------------------------- error cases
def _draw_error(spec: Spec, rng: np.random.Generator, types: dict[str, int]) -> dict[str, np.ndarray]:
    names = ref.input_names(spec.version)
    xs = spec.x_shape
    c = 1 if len(xs) <= 1 else xs[1]
    shapes = {n: (c,) for n in names[1:]}
    shapes.update(spec.param_shapes or {})
    vals = {names[0]: rng.normal(size=xs)}
    for n in names[1:]:
        vals[n] = rng.uniform(0.5, 1.5, shapes[n])
    return {n: common.representable(vals[n], types[n]) if types[n] in dtypes.FLOAT_TYPES
            else np.asarray(np.round(vals[n])) for n in names}


def _error_specs() -> list[Spec]:
    out = []

    def add(key, version, error, why, **kw):
        kw.setdefault("opset", version)
        kw.setdefault("t", F32)
        out.append(Spec(key=f"error/{key}", version=version, error=error, expect_error=why, **kw))

    for v in (6, 7, 9, 14, 15):
        nm = ref.input_names(v)
        inf_kw = {"is_test": 1} if v == 6 else {}
        add(f"scale-len/{v}", v, "scale-shape", "scale must have shape (C)", x_shape=(2, 3, 4),
            param_shapes={"scale": (4,)}, **inf_kw)
        add(f"rank0/{v}", v, "rank0", "X of rank 0 (spec: N x C x D1 ... Dn, or (N,))", x_shape=(),
            param_shapes={n: (1,) for n in nm[1:]}, **inf_kw)
        add(f"mean-len/{v}", v, "mean-shape", f"{nm[3]} must have shape (C)", x_shape=(3, 2, 2),
            param_shapes={nm[3]: (3,)}, **inf_kw)
    add("bias-len/9", 9, "bias-shape", "B must have shape (C)", x_shape=(2, 4), param_shapes={"B": (3,)})
    add("bias-len/15", 15, "bias-shape", "B must have shape (C)", x_shape=(2, 4, 3), param_shapes={"B": (1,)},
        t=F16)
    add("var-rank/14", 14, "var-shape", "input_var must be 1-D of shape (C)", x_shape=(2, 3, 2),
        param_shapes={"input_var": (3, 1)})
    add("var-rank/7", 7, "var-shape", "var must have shape (C) with spatial=1", x_shape=(2, 3, 2),
        param_shapes={"var": (3, 2)})
    add("var-len/train/15", 15, "var-shape", "input_var must have shape (C)", x_shape=(4, 3),
        param_shapes={"input_var": (4,)}, training=True, training_mode=1,
        outputs=("Y", "running_mean", "running_var"))
    add("scale-len/train/9", 9, "scale-shape", "scale must have shape (C)", x_shape=(4, 3, 2),
        param_shapes={"scale": (2,)}, training=True, outputs=ref.OUTPUTS_OLD)
    for v in (9, 14, 15):
        nm = ref.input_names(v)
        add(f"rank1-len/{v}", v, "rank1-param-shape", "rank-1 X means C = 1: parameters of shape (1)",
            x_shape=(6,), param_shapes={n: (6,) for n in nm[1:]})
    for v in (6, 7, 9):
        add(f"slots3/{v}", v, "output-count", "the schema allows 1 or 5 outputs (3 given)", x_shape=(4, 3),
            training=True, outputs=("Y", "running_mean", "running_var"), slots=3)
    add("slots2/9", 9, "output-count", "the schema allows 1 or 5 outputs (2 given)", x_shape=(4, 3), t=F64,
        training=True, outputs=("Y", "running_mean"), slots=2)
    add("slots4/7", 7, "output-count", "the schema allows 1 or 5 outputs (4 given)", x_shape=(4, 3), t=F16,
        training=True, outputs=("Y", "running_mean", "running_var", "saved_mean"), slots=4)
    for v in (14, 15):
        add(f"infer-extra/{v}", v, "inference-extra-outputs", "training_mode=False: extra outputs are invalid",
            x_shape=(4, 3, 2), training=False, training_mode=0,
            outputs=("Y", "running_mean", "running_var"), slots=3)
        add(f"train-slots1/{v}", v, "training-output-count",
            "training_mode=True: outputs Y, running_mean, running_var (3 slots), 1 given",
            x_shape=(4, 3, 2), training=True, training_mode=1, outputs=("Y",), slots=1)
    add("train-slots2/15", 15, "training-output-count",
        "training_mode=True: outputs Y, running_mean, running_var (3 slots), 2 given",
        x_shape=(4, 3), training=True, training_mode=1, outputs=("Y", "running_mean"), slots=2)
    add("infer-extra-omitted/14", 14, "inference-extra-outputs",
        "training_mode absent (False): extra outputs are invalid", x_shape=(4, 3), t=F64,
        outputs=("Y", "running_mean", "running_var"), slots=3)
    add("bf16/9", 9, "type", "bfloat16 is not in T before version 14", x_shape=(2, 3), t=BF16)
    add("bf16/7", 7, "type", "bfloat16 is not in T before version 14", x_shape=(2, 3), t=BF16)
    add("scale-type/14", 14, "type", "scale and B must have X's type T in version 14", x_shape=(2, 3), t=F16,
        input_types={"scale": F32, "B": F32})
    add("mean-type/9", 9, "type", "mean must have X's type T in version 9", x_shape=(2, 3), t=F32,
        input_types={"mean": F64})
    add("mean-var-type/15", 15, "type", "input_mean and input_var share T2", x_shape=(2, 3), t=F32,
        input_types={"input_var": F64})
    add("int-x/15", 15, "type", "T is a float type (int32 given)", x_shape=(2, 3), t=F32,
        input_types={"X": TensorProto.INT32})
    add("spatial0-param/7", 7, "spatial0-param-shape",
        "spatial=0: parameters have shape (C x D1 x ... x Dn)", x_shape=(2, 3, 4), spatial=0,
        param_shapes={n: (3,) for n in ref.INPUTS_OLD[1:]})
    # version 1: consumed_inputs is required; version 6's error cases
    add("consumed-missing/1", 1, "missing-attribute", "consumed_inputs is a required attribute of version 1",
        x_shape=(2, 3, 2, 2), is_test=1, consumed_inputs=None)
    add("consumed-missing/train/1", 1, "missing-attribute", "consumed_inputs is a required attribute of version 1",
        x_shape=(4, 3, 2, 2), t=F16, training=True, outputs=ref.OUTPUTS_OLD, consumed_inputs=None, opset=3)
    add("scale-len/1", 1, "scale-shape", "scale must have shape (C)", x_shape=(2, 3, 2, 2),
        param_shapes={"scale": (4,)}, is_test=1)
    add("rank0/1", 1, "rank0", "X of rank 0 (spec: 4-dimensional NCHW)", x_shape=(),
        param_shapes={n: (1,) for n in ref.INPUTS_OLD[1:]}, is_test=1)
    add("mean-len/1", 1, "mean-shape", "mean must have shape (C)", x_shape=(3, 2, 2, 2),
        param_shapes={"mean": (3,)}, is_test=1, t=F64)
    add("var-len/train/1", 1, "var-shape", "var must have shape (C)", x_shape=(4, 3, 2, 1),
        param_shapes={"var": (2,)}, training=True, outputs=ref.OUTPUTS_OLD, opset=5)
    add("slots3/1", 1, "output-count", "the schema allows 1 or 5 outputs (3 given)", x_shape=(4, 3, 1, 2),
        training=True, outputs=("Y", "running_mean", "running_var"), slots=3)
    add("bf16/1", 1, "type", "bfloat16 is not in T of version 1", x_shape=(2, 3, 2, 2), t=BF16, is_test=1)
    add("mean-type/1", 1, "type", "mean must have X's type T in version 1", x_shape=(2, 3, 2, 2), is_test=1,
        input_types={"mean": F64})
    return out


# ----------------------------------------------------------------------------- the suite
def _patterns(version: int) -> list[tuple[bool, tuple[str, ...]]]:
    """(training, present outputs) allowed per version (module docstring)."""
    pats = [(False, ("Y",))]
    if version < 14:
        opt = ("running_mean", "running_var", "saved_mean", "saved_var")
        for r in range(1, 5):
            for sub in itertools.combinations(opt, r):
                pats.append((True, ("Y",) + sub))
    else:
        for sub in (("running_mean", "running_var"), ("running_mean",), ("running_var",), ()):
            pats.append((True, ("Y",) + sub))
    return pats


def _full(version: int, training: bool, i: int = 0) -> tuple[str, ...]:
    if not training:
        return ("Y",)
    if version >= 14:
        return ref.OUTPUTS_NEW
    return ref.OUTPUTS_OLD if i % 2 else ("Y", "running_mean", "running_var")


def _ranks(version: int) -> tuple[int, ...]:
    """Ranks the rotating coordinates cycle through (version 1: its text's rank 4 only)."""
    if version == 1:
        return (V1_RANK,)
    return (1, 2, 3, 4, 5) if version >= 9 else (2, 3, 4, 5)


def _sweep_ranks(version: int) -> tuple[int, ...]:
    """Ranks of the shapes sweep (version 1: also 2, 3 and 5, contested)."""
    return (2, 3, 4, 5) if version == 1 else _ranks(version)


def _consumed_kw(version: int, i: int) -> dict:
    """Version 1: the legacy consumed_inputs, every 7th index one of the other values."""
    if version != 1 or i % 7 != 6:
        return {}
    return {"consumed_inputs": CONSUMED_OTHER[(i // 7) % len(CONSUMED_OTHER)]}


def _shape(version: int, i: int) -> tuple[int, ...]:
    ranks = _ranks(version)
    r = ranks[i % len(ranks)]
    pool = SHAPES[r]
    return pool[(i // len(ranks)) % len(pool)]


def _mode_kw(version: int, training: bool, i: int) -> dict:
    """Mode attributes: v6 is_test, v14/15 training_mode (sometimes explicit at its default)."""
    if version in ref.IS_TEST_VERSIONS:
        return {"is_test": (0 if i % 3 == 0 else None) if training else 1}
    if version >= 14:
        return {"training_mode": 1 if training else (0 if i % 3 == 0 else None)}
    return {}


def _eps_cycle(t: int, i: int) -> tuple[float | None, str]:
    k = i % 6
    if k == 1:
        return 1e-5, "default"
    if k == 3:
        return EPS_LARGE[(i // 6) % 2], "large"
    if k == 5:
        return EPS_TINY, "tiny"
    return None, "default"


def specs() -> list[Spec]:
    """Every case spec of the suite, in a fixed order (see module docstring)."""
    out: list[Spec] = []

    # grid: version x dtype x mode x output pattern
    for v in ref.VERSIONS:
        i = 0
        for t in TYPES[v]:
            for training, pat in _patterns(v):
                eps, etag = _eps_cycle(t, i)
                ops = OPSETS[v]
                out.append(Spec(
                    key=f"grid/{v}/{dtypes.type_name(t)}/{int(training)}/{','.join(pat)}", version=v,
                    opset=ops[i % len(ops)], t=t, training=training, outputs=pat, x_shape=_shape(v, i),
                    epsilon=eps, eps_tag=etag, momentum=MOMENTA[i % len(MOMENTA)] if training else None,
                    params="initializers" if i % 3 == 2 else "inputs", n_datasets=2 if i % 4 == 1 else 1,
                    extra_tags={"group": "grid"}, **_mode_kw(v, training, i), **_consumed_kw(v, i)))
                i += 1

    # numerics classes: version x dtype x mode
    classes = ("large-offset", "constant-channels", "special-values", "tiny-variance", "near-limits")
    for v in ref.VERSIONS:
        i = 0
        for t in TYPES[v]:
            for num in classes:
                for training in (False, True):
                    t2 = None
                    if num == "near-limits" and training:
                        if not (v >= 14 and t == F16):
                            continue
                        t2 = F32
                    eps, etag = (TINY[t][2], "tiny") if num == "tiny-variance" else (None, "default")
                    shape = _shape(v, i + 1)
                    if num == "special-values" and int(np.prod(shape)) < 6:
                        shape = (2, 3, 2)
                    out.append(Spec(
                        key=f"num/{v}/{dtypes.type_name(t)}/{num}/{int(training)}", version=v, opset=v, t=t, t2=t2,
                        training=training, outputs=_full(v, training, i), x_shape=shape, epsilon=eps, eps_tag=etag,
                        params="initializers" if i % 4 == 3 else "inputs", numerics=num,
                        n_datasets=2 if i % 5 == 0 else 1, extra_tags={"group": "numerics"},
                        **_mode_kw(v, training, i), **_consumed_kw(v, i)))
                    i += 1

    # long channels (training): every version x dtype, plus large offsets
    for v in ref.VERSIONS:
        for j, t in enumerate(TYPES[v]):
            shapes = [s for s in LONG_SHAPES if len(s) in _ranks(v) or (len(s) > 1 and v != 1)]
            shape = shapes[(j + v) % len(shapes)]
            for num in ("long-channels", "long-channels-large-offset"):
                if num.endswith("large-offset") and t == F64:
                    continue
                out.append(Spec(
                    key=f"long/{v}/{dtypes.type_name(t)}/{num}", version=v, opset=v, t=t, training=True,
                    outputs=_full(v, True, j), x_shape=shape, numerics=num,
                    params="initializers" if j % 2 else "inputs",
                    extra_tags={"group": "long", "long_channels": True}, **_mode_kw(v, True, j)))

    # zero-size batch (inference)
    for v in ref.VERSIONS:
        for j, t in enumerate(TYPES[v]):
            shape = ((0, 3), (0, 2, 3), (0, 3, 2, 2), (0,))[(j + v) % (4 if v >= 9 else 3)] if v != 1 else (0, 3, 2, 2)
            out.append(Spec(key=f"zero/{v}/{dtypes.type_name(t)}", version=v, opset=v, t=t, x_shape=shape,
                            numerics="zero-size", params="initializers" if j % 2 else "inputs",
                            extra_tags={"group": "zero-size"}, **_mode_kw(v, False, j)))

    # shapes: every rank (incl. C = 1, N = 1) in both modes
    for v in ref.VERSIONS:
        i = 0
        for r in _sweep_ranks(v):
            for k, shape in enumerate(SHAPES[r]):
                training = bool(k % 2)
                t = TYPES[v][(i + k) % len(TYPES[v])]
                out.append(Spec(key=f"shape/{v}/{shape}", version=v, opset=v, t=t, training=training,
                                outputs=_full(v, training, i), x_shape=shape,
                                params="initializers" if i % 2 else "inputs",
                                extra_tags={"group": "shapes"}, **_mode_kw(v, training, i)))
                i += 1

    # epsilon sweep (both modes) and momentum sweep (training)
    for v in ref.VERSIONS:
        for j, (eps, etag) in enumerate(((None, "default"), (1e-5, "default"), (EPS_TINY, "tiny"), (1e-30, "tiny"),
                                         (0.5, "large"), (3.0, "large"), (100.0, "large"))):
            for training in (False, True):
                t = TYPES[v][(j + int(training)) % len(TYPES[v])]
                numerics = "constant-channels" if j % 2 == 0 else "normal"
                if etag == "tiny" and t == F16:
                    # scale/sqrt(0 + eps) overflows float16 for eps < ~5e-10: folded or
                    # inverse-std float16 kernels (legitimate) would give NaN there
                    numerics = "normal"
                out.append(Spec(key=f"eps/{v}/{j}/{int(training)}", version=v, opset=v, t=t, training=training,
                                outputs=_full(v, training, j), x_shape=_shape(v, j + 2), epsilon=eps, eps_tag=etag,
                                numerics=numerics, extra_tags={"group": "epsilon"}, **_mode_kw(v, training, j)))
        for j, mom in enumerate(MOMENTA):
            t = TYPES[v][j % len(TYPES[v])]
            out.append(Spec(key=f"mom/{v}/{j}", version=v, opset=v, t=t, training=True,
                            outputs=_full(v, True, j + 1), x_shape=_shape(v, j + 1), momentum=mom,
                            params="initializers" if j % 2 else "inputs", n_datasets=2 if j % 3 == 0 else 1,
                            extra_tags={"group": "momentum"}, **_mode_kw(v, True, j)))
        # momentum given in inference (ignored there)
        out.append(Spec(key=f"mom-infer/{v}", version=v, opset=v, t=F32, x_shape=_shape(v, 3), momentum=0.5,
                        extra_tags={"group": "momentum"}, **_mode_kw(v, False, 1)))

    # opsets beyond since_version (and onnx's latest, 28, for the current version 15)
    later = [(1, 2), (1, 3), (1, 4), (1, 5), (7, 8), (9, 11), (9, 13), (15, 18), (15, 21), (15, 23), (15, 26), (15, LATEST_OPSET)]
    for v, op in later:
        for training in (False, True):
            for t in ((F32, F16) if op != LATEST_OPSET else TYPES[v]):
                out.append(Spec(key=f"opset/{v}/{op}/{int(training)}/{dtypes.type_name(t)}", version=v, opset=op,
                                t=t, training=training, outputs=_full(v, training, op), x_shape=_shape(v, op),
                                extra_tags={"group": "opsets"}, **_mode_kw(v, training, op)))

    # spatial (1, 6, 7); version 1: spatial=0 where its 1-D parameters of size C are unambiguous
    spatial_shapes = {1: ((0, (3, 4, 1, 1)), (0, (5, 1, 1, 1)), (1, (2, 3, 2, 2)), (0, (4, 3)), (0, (6, 2))),
                      6: ((0, (4, 3)), (0, (5, 1)), (1, (2, 3, 2)), (0, (3, 2, 3)), (0, (2, 2, 2, 3)))}
    spatial_shapes[7] = spatial_shapes[6]
    for v in ref.SPATIAL_VERSIONS:
        for j, (sp, shape) in enumerate(spatial_shapes[v]):
            if v in ref.IS_TEST_VERSIONS and sp == 0 and int(np.prod(shape[2:])) != 1:
                continue
            for training in (False, True):
                t = TYPES[v][(j + int(training)) % 3]
                out.append(Spec(key=f"spatial/{v}/{j}/{int(training)}", version=v, opset=v, t=t, training=training,
                                outputs=_full(v, training, j), x_shape=shape, spatial=sp,
                                params="initializers" if j % 2 else "inputs",
                                extra_tags={"group": "spatial"}, **_mode_kw(v, training, j)))

    # mixed types
    for a, ta in enumerate(TYPES[14]):
        for b, tb in enumerate(TYPES[14]):
            for training in (False, True):
                out.append(Spec(key=f"mixed/14/{a}{b}/{int(training)}", version=14, opset=14, t=ta, t2=tb,
                                training=training, outputs=_full(14, training), x_shape=_shape(14, a + b),
                                params="initializers" if (a + b) % 2 else "inputs",
                                extra_tags={"group": "mixed"}, **_mode_kw(14, training, a)))
    ts = TYPES[15]
    for a, b, c in itertools.product(range(4), repeat=3):
        out.append(Spec(key=f"mixed/15/{a}{b}{c}/1", version=15, opset=OPSETS[15][(a + b + c) % 5], t=ts[a],
                        t1=ts[b], t2=ts[c], training=True, outputs=_full(15, True), x_shape=_shape(15, a + 2 * b + c),
                        params="initializers" if (a + b + c) % 3 == 0 else "inputs", momentum=MOMENTA[(a + c) % 8],
                        extra_tags={"group": "mixed"}, **_mode_kw(15, True, a)))
    for a, b in itertools.product(range(4), repeat=2):
        c = (a + b) % 4
        out.append(Spec(key=f"mixed/15/{a}{b}{c}/0", version=15, opset=OPSETS[15][(a + b) % 5], t=ts[a], t1=ts[b],
                        t2=ts[c], x_shape=_shape(15, a + b + 1), params="initializers" if b % 2 else "inputs",
                        extra_tags={"group": "mixed"}, **_mode_kw(15, False, a + b)))

    # repeated runs of one model (initializer statistics, same X in every data set): the
    # outputs must not depend on earlier runs (running statistics are outputs, the
    # initializers stay constant)
    for v in ref.VERSIONS:
        for j, t in enumerate(TYPES[v]):
            out.append(Spec(key=f"repeat/{v}/{dtypes.type_name(t)}", version=v, opset=v, t=t, training=True,
                            outputs=_full(v, True, 0), x_shape=_shape(v, j + 5), params="initializers",
                            n_datasets=3, same_x=True, momentum=0.5,
                            extra_tags={"group": "repeat-run", "repeat_run": True}, **_mode_kw(v, True, j)))

    # versions 1 and 6: is_test=0 (training) with only Y requested -- ambiguous
    for v in ref.IS_TEST_VERSIONS:
        for j, t in enumerate(TYPES[v]):
            out.append(Spec(key=f"ambiguous/{v}/{j}", version=v, opset=v, t=t, training=True, outputs=("Y",),
                            slots=1, x_shape=_shape(v, j), is_test=0 if j == 0 else None,
                            extra_tags={"group": "ambiguous", "ambiguous": f"v{v}-training-Y-only"}))

    # version 1: consumed_inputs values, both modes, each type
    for j, ci in enumerate((CONSUMED_LEGACY,) + CONSUMED_OTHER):
        for training in (False, True):
            t = TYPES[1][(j + int(training)) % 3]
            out.append(Spec(key=f"consumed/1/{j}/{int(training)}", version=1, opset=OPSETS[1][j], t=t,
                            training=training, outputs=_full(1, training, j + 1), x_shape=_shape(1, j + 1),
                            consumed_inputs=ci, params="initializers" if j % 2 else "inputs",
                            extra_tags={"group": "consumed_inputs"}, **_mode_kw(1, training, j)))

    out.extend(_error_specs())
    return out


@register(OP, version="1")
def generate(seed: int) -> list[Case]:
    """All BatchNormalization cases (module docstring) for ``seed``.

    Returns:
        the cases, in the order of :func:`specs`.
    """
    return [_build(s, seed) for s in specs()]


# ----------------------------------------------------------------------------- explore mode
#: versions and dtypes in shrink order (hypothesis shrinks ``sampled_from`` towards the first)
EXPLORE_VERSIONS = (15, 14, 9, 7, 6)
EXPLORE_NUMERICS = ("normal", "large-offset", "constant-channels", "special-values", "tiny-variance", "near-limits")
#: largest dim per rank in explore mode
EXPLORE_CAPS = {1: 32, 2: 12, 3: 6, 4: 4, 5: 3}


def _explore_types(version: int) -> tuple[int, ...]:
    return (F32,) + tuple(t for t in TYPES[version] if t != F32)


@register_strategy(OP)
def strategy():
    """Hypothesis strategy of fresh BatchNormalization value cases (explore mode).

    Draws a :class:`Spec` -- version, X type (and T1/T2 for the mixed-type versions
    14/15), training or inference, an optional-output pattern allowed in that mode,
    rank and every dim of X, numerics class, epsilon, momentum, mode attributes
    explicit or omitted, spatial (6/7), parameters as inputs or initializers, opset,
    number of data sets -- and a data seed, and builds it with :func:`_build`, the
    code behind :func:`generate`.  Draws shrink towards version 15, float, inference,
    ``Y`` only, the lowest rank, dims of 1, ``normal`` numerics, default epsilon and
    momentum, seed 0.  The suite's constraints are kept (``near-limits`` in training
    only for float16 X with float statistics in 14/15, at least 6 elements for
    ``special-values``, no spatial=0 at rank > 2 for version 6, no tiny epsilon with
    constant float16 channels).
    """
    from hypothesis import reject
    from hypothesis import strategies as st

    @st.composite
    def cases(draw) -> Case:
        v = draw(st.sampled_from(EXPLORE_VERSIONS))
        t = draw(st.sampled_from(_explore_types(v)))
        # every coordinate is drawn whatever the others are (a fixed-length choice sequence
        # shrinks coordinate by coordinate); inapplicable ones are ignored
        t1 = draw(st.sampled_from((None,) + TYPES[15]))
        t2 = draw(st.sampled_from((None,) + TYPES[15]))
        if v < 15:
            t1 = None
        if v < 14:
            t2 = None
        training = draw(st.booleans())
        outputs = draw(st.sampled_from([p for tr, p in _patterns(v) if tr == training]))
        rank = draw(st.integers(1 if v >= 9 else 2, 5))
        shape = [draw(st.integers(1, EXPLORE_CAPS[rank])) for _ in range(rank)]
        numerics = draw(st.sampled_from(EXPLORE_NUMERICS))
        eps_kind = draw(st.sampled_from(("default", "default-explicit", "large", "tiny")))
        eps, etag = {"default": (None, "default"), "default-explicit": (1e-5, "default"),
                     "large": (EPS_LARGE[0], "large"), "tiny": (EPS_TINY, "tiny")}[eps_kind]
        # the suite's constraints (the numerics classes are calibrated for one type, as in the suite)
        mixed = (t1 is not None and t1 != t) or (t2 is not None and t2 != t)
        if mixed and numerics not in ("normal", "special-values"):
            numerics = "normal"
        if numerics == "near-limits" and training:
            if v >= 14 and t == F16:
                t1, t2 = None, F32  # float statistics: float16 ones overflow
            else:
                numerics = "normal"
        if numerics == "tiny-variance":
            eps, etag = TINY[t][2], "tiny"
        if etag == "tiny" and t == F16 and numerics == "constant-channels":
            numerics = "normal"  # scale/sqrt(0 + eps) overflows float16 (see the epsilon sweep)
        if numerics == "special-values" and int(np.prod(shape)) < 6:
            shape[0] = -(-6 // int(np.prod(shape[1:])))
        if training and int(np.prod(shape)) // (shape[1] if rank > 1 else 1) < 2:
            shape[0] = 2  # batch statistics of one element: variance 0, folded float16 kernels overflow
        momentum = draw(st.sampled_from(MOMENTA))
        if not training:
            momentum = None
        spatial = draw(st.sampled_from((None, 1, 0)))
        if v not in (6, 7) or (spatial == 0 and v == 6 and rank > 2):
            spatial = None
        params = draw(st.sampled_from(("inputs", "initializers")))
        opset = draw(st.sampled_from(OPSETS[v]))
        n_ds = draw(st.integers(1, 2))
        mode = draw(st.integers(0, 2))
        seed = draw(st.integers(0, 2**32 - 1))
        spec = Spec(key="explore", version=v, opset=opset, t=t, t1=t1, t2=t2, training=training, outputs=outputs,
                    x_shape=tuple(shape), spatial=spatial, epsilon=eps, eps_tag=etag, momentum=momentum,
                    params=params, numerics=numerics, n_datasets=n_ds,
                    extra_tags={"group": "explore", "explore_seed": seed}, **_mode_kw(v, training, mode))
        try:
            return _build(spec, seed)
        except ValueError as exc:
            # a legitimate variant overflows where the float64 oracle does not (e.g. a float16
            # batch whose values all round to the same large offset: variance 0, a folded
            # scale/sqrt(eps) beyond float16): the case is ill-posed at the mandated precision
            if "is not finite where the oracle is" not in str(exc):
                raise
            reject()

    return cases()
