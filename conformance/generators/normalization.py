"""Case generators for the ai.onnx normalization family: InstanceNormalization (1, 6, 22),
GroupNormalization (18, 21), RMSNormalization (23), LpNormalization (1, 22),
MeanVarianceNormalization (9, 13) and LRN (1, 13); and onnxruntime's com.microsoft
SkipLayerNormalization-1 and SkipSimplifiedLayerNormalization-1 (schemas from
``onnxruntime.capi.onnxruntime_pybind11_state.get_all_operator_schema()``).

Also onnxruntime's SimplifiedLayerNormalization-1, which onnxruntime registers in the
ai.onnx domain ("" version 1) where onnx knows no such operator (the checker rejects it;
see :func:`generate_simplified_layer_norm`).  Contested cases (``Case.contested``: onnx's
checker rejects models the schema admits): RMSNormalization with ``T != V``,
MeanVarianceNormalization's non-float and default-axes-13 cases, every GroupNormalization-18
case.

Not generated: GroupNormalization-21 with a stash_type other than 1 (the spec names no
other precision).

Oracles and variant policy: :mod:`conformance.reference.normalization`.  Every case is one
single-node model.  For each operator version the generator covers every type of its
``T`` constraint (RMSNormalization: every (T, V) pair), ranks and attribute classes by
cyclic schedules, models at the since_version opset and later ones (<= 26, a few at
28 for the newest version), numerics classes (``normal``; ``constant-rows`` where the
result is defined exactly; ``tiny-variance``; ``special-values`` -- NaN rows;
``long-rows`` (>= 4096 reduced elements); ``zero-norm`` for LpNormalization) and
error cases (``expect_error``, tag ``error``) for what the spec makes invalid.

Tolerances: :func:`conformance.tolerance.derive_tolerance` over the reference's
legitimate variants with the ulps of the coarser of the output type and the mandated
stage-one precision, at the output's natural unit (max |terms| of the affine stage).
"""

from __future__ import annotations

import numpy as np

from conformance import dtypes
from conformance.case import Case, DataSet, Input, Output
from conformance.registry import case_rng, register
from conformance.tolerance import STAT_ULPS, derive_tolerance, statistic_rounding_errors
from conformance.generators import common
from conformance.reference import normalization as ref

ALL_T = ("float16", "bfloat16", "float", "double")
OLD_T = ("float16", "float", "double")
from conformance.ops.schedule import LATEST_OPSET, RUNTIME_OPSET as MAX_ORT_OPSET  # noqa: E402

#: op -> [(since_version, dtypes, last opset of the version)]
VERSIONS = {
    "InstanceNormalization": [(1, OLD_T, 5), (6, OLD_T, 21), (22, ALL_T, LATEST_OPSET)],
    "GroupNormalization": [(18, ALL_T, 20), (21, ALL_T, LATEST_OPSET)],
    "RMSNormalization": [(23, ALL_T, LATEST_OPSET)],
    "LpNormalization": [(1, OLD_T, 21), (22, ALL_T, LATEST_OPSET)],
    "MeanVarianceNormalization": [(9, OLD_T, 12), (13, ALL_T, LATEST_OPSET)],
    "LRN": [(1, OLD_T, 12), (13, ALL_T, LATEST_OPSET)],
}


def _opsets(since: int, last: int) -> list[int]:
    """since_version, a middle one and the last (capped at 26); see :func:`_opset`."""
    top = min(last, MAX_ORT_OPSET)
    return sorted({since, (since + top) // 2, top})


def _opset(opsets: list[int], j: int, last: int) -> int:
    """The j-th case's opset: cyclic over ``opsets``; every tenth case of the newest
    version imports opset 28 (beyond onnxruntime's 26)."""
    if last == LATEST_OPSET and j % 10 == 7:
        return LATEST_OPSET
    return opsets[j % len(opsets)]


def _e(name: str) -> int:
    return dtypes.elem_type(name)


def _np(name: str):
    return dtypes.np_dtype(_e(name))


def _scale_of(*arrays) -> float:
    vals = np.concatenate([np.abs(np.asarray(a, np.float64)).ravel() for a in arrays])
    vals = vals[np.isfinite(vals)]
    return float(vals.max()) if vals.size and vals.max() > 0 else 1.0


def _build(op, since, opset, attrs, inputs, feeds_list, outs, tags, label, *, expect_error=None, domain="",
           contested=None) -> Case:
    """Assemble a case (``contested``: :attr:`conformance.case.Case.contested`).

    ``inputs``: list of (name, elem, shape, initializer value or None, present).
    ``feeds_list``: per data set, name -> float64 value (graph inputs only).
    ``outs``: list of (name, elem, [expected64 per ds], {variant: [per ds]}, unit, ulp_elem[,
    propagated]) (``propagated``: the bound of the statistics' propagated rounding, see
    :func:`_prop`); for error cases ``outs`` is a list of (name, elem).
    """
    ins = [
        Input(n, el, tuple(sh), initializer=v is not None, value=None if v is None else common.as_type(v, el),
              present=pr)
        for n, el, sh, v, pr in inputs
    ]
    if expect_error is not None:
        datasets = [DataSet(inputs={k: common.as_type(v, el) for k, (v, el) in f.items()}) for f in feeds_list]
        return Case(op=op, since_version=since, opset=opset, attributes=attrs, inputs=ins,
                    outputs=[Output(n, el) for n, el in outs], datasets=datasets, tags=tags, label=label,
                    expect_error=expect_error, domain=domain, contested=contested)
    datasets, outputs = [], []
    for k, f in enumerate(feeds_list):
        datasets.append(DataSet(
            inputs={n: common.as_type(v, el) for n, (v, el) in f.items()},
            outputs={o[0]: dtypes.round_to(o[2][k], o[1]) for o in outs},
        ))
    for name, el, exp, var, unit, ulp_el, *prop in outs:
        e = np.stack(exp)
        vs = {k: np.stack(v) for k, v in var.items()}
        outputs.append(Output(name, el, tolerance=derive_tolerance(e, vs, ulp_el, scale=unit,
                                                                   propagated=prop[0] if prop else None)))
    return Case(op=op, since_version=since, opset=opset, attributes=attrs, inputs=ins, outputs=outputs,
                datasets=datasets, tags=tags, label=label, domain=domain, contested=contested)


def _prop(rows, stat_elem: int, epsilon: float, gain=1.0, *, what="y", **kw) -> float:
    """Largest propagated rounding error of statistics ``STAT_ULPS`` ulps off at ``stat_elem``
    (:func:`conformance.tolerance.statistic_rounding_errors`) over the (rows, n) values
    ``rows``, times ``|gain|`` (broadcastable to ``rows`` for ``what="y"``, per row else)."""
    r = statistic_rounding_errors(np.asarray(rows, np.float64), stat_elem, epsilon=epsilon, **kw)[what]
    with np.errstate(invalid="ignore", over="ignore"):
        g = np.abs(np.asarray(gain, np.float64))
        v = r * (g if what == "y" else g.reshape(-1) if g.ndim else g)
    v = v[np.isfinite(v)]
    return float(v.max()) if v.size else 0.0


def _coarser(*elems: int) -> int:
    return max(elems, key=dtypes.eps)


def _make_x(rng, numerics: str, shape, t: int, rows_axes=None) -> np.ndarray:
    """X of a numerics class; ``rows_axes`` = (leading kept dims, reduced dims) view for
    row-wise classes (constant rows, NaN rows)."""
    if numerics in ("normal", "long-rows", "zero-size"):
        return common.normal(rng, shape, t, loc=rng.uniform(-1, 1), scale=rng.uniform(0.5, 2.0))
    if numerics == "tiny-variance":
        base = float(rng.choice([1.0, -2.0, 0.5]))
        return common.representable(base + rng.normal(0, 2 * dtypes.eps(t), size=shape), t)
    if numerics == "large-offset":
        off, std = {"float16": (512.0, 16.0), "bfloat16": (1024.0, 64.0), "float": (1.0e3, 1.0),
                    "double": (1.0e3, 1.0)}[dtypes.type_name(t)]
        return common.representable(off + rng.normal(0, std, size=shape), t)
    x = common.normal(rng, shape, t)
    if numerics == "tiny-norm":  # every other row scaled to a norm in (1e-16, 1e-13): nonzero, below 1e-12
        rows, n = rows_axes
        xr = x.reshape(rows, n)
        for r in range(0, rows, 2):
            nrm = float(np.sqrt(np.sum(xr[r] ** 2))) or 1.0
            xr[r] = common.representable(xr[r] / nrm * 10.0 ** rng.uniform(-16, -13), t)
        return xr.reshape(shape)
    if numerics in ("constant-rows", "special-values", "zero-norm"):
        rows, n = rows_axes
        xr = x.reshape(rows, n)
        pick = rng.choice(rows, size=max(1, rows // 2), replace=False) if rows > 1 else [0]
        for r in pick:
            if numerics == "constant-rows":
                xr[r] = float(rng.choice([0.0, 1.0, -3.0, 0.5, 2.25]))
            elif numerics == "zero-norm":
                xr[r] = 0.0
            else:
                xr[r, int(rng.integers(0, n))] = np.nan
        return xr.reshape(shape)
    raise ValueError(numerics)


def _tags(tname, shape, opset, numerics, **kw) -> dict:
    t = {"dtype": tname, "rank": len(shape), "opset": opset, "numerics": numerics, "outputs": "Y"}
    t.update(kw)
    return t


# ============================================================================ InstanceNormalization
def _nc_shape(rng, rank: int, *, pow2=False, long=False) -> tuple[int, ...]:
    if long:
        return {3: (1, 2, 4096), 4: (1, 2, 64, 64), 5: (1, 1, 16, 16, 16)}[rank]
    pick = (lambda hi: int(rng.choice([1, 2, 4, 8][: max(1, hi.bit_length())]))) if pow2 else (
        lambda hi: int(rng.integers(1, hi + 1)))
    caps = {3: (3, 5, 16), 4: (2, 4, 6, 6), 5: (2, 3, 4, 3, 4)}[rank]
    shape = [pick(c) for c in caps]
    if pow2:
        shape[-1] = max(shape[-1], 2)
    return tuple(shape)


def _instance_case(seed, since, tname, rank, j, numerics, opset, eps_kind, init, consumed_inputs=None):
    rng = case_rng(seed, "in", since, tname, rank, j) if consumed_inputs is None else case_rng(
        seed, "in", since, tname, rank, j, "consumed_inputs")
    t = _e(tname)
    shape = _nc_shape(rng, rank, pow2=numerics == "constant-rows", long=numerics == "long-rows")
    n, c = shape[:2]
    sp = int(np.prod(shape[2:]))
    eps = {"default": None, "tiny": 1e-12, "large": 0.5}[eps_kind]
    attrs = {} if eps is None else {"epsilon": eps}
    if consumed_inputs is not None:  # version 1's legacy in-place hint: changes no value
        attrs["consumed_inputs"] = list(consumed_inputs)
    scale = common.representable(rng.uniform(0.5, 1.5, c) * np.where(rng.random(c) < 0.2, -1, 1), t)
    bias = common.normal(rng, (c,), t)
    ds = 2 if j % 5 == 2 else 1
    feeds, exp, var = [], [], {}
    prop = 0.0
    for _ in range(ds):
        x = _make_x(rng, numerics, shape, t, (n * c, sp))
        nt = _np(tname)
        # statistics in T (the spec computes in T), gain |scale[c]| per (n, c) row
        prop = max(prop, _prop(x.astype(nt).reshape(n * c, sp), t, ref.epsilon_value(eps or 1e-5),
                               np.tile(np.abs(scale.astype(nt).astype(np.float64)), n)[:, None]))
        y = ref.instance_normalization(x.astype(nt), scale.astype(nt), bias.astype(nt), epsilon=eps or 1e-5)
        for k, v in ref.instance_normalization_variants(x.astype(nt), scale.astype(nt), bias.astype(nt),
                                                       epsilon=eps or 1e-5).items():
            var.setdefault(k, []).append(v)
        exp.append(y)
        f = {"input": (x, t)}
        if not init:
            f.update(scale=(scale, t), B=(bias, t))
        feeds.append(f)
    unit = _scale_of(*[e - bias.reshape((1, c) + (1,) * (rank - 2)) for e in exp], bias)
    inputs = [("input", t, shape, None, True), ("scale", t, (c,), scale if init else None, True),
              ("B", t, (c,), bias if init else None, True)]
    tags = _tags(tname, shape, opset, numerics, epsilon=eps_kind, params="initializers" if init else "inputs",
                 datasets=ds)
    label = f"{tname}/r{rank}/{numerics}/eps={eps_kind}/j{j}"
    if consumed_inputs is not None:
        tags["legacy"] = "consumed_inputs"
        label += f"/consumed_inputs={list(consumed_inputs)}"
    return _build("InstanceNormalization", since, opset, attrs, inputs, feeds,
                  [("Y", t, exp, var, unit, t, prop)], tags, label)


def _instance_errors(seed, since, opset, tname):
    t = _e(tname)
    rng = case_rng(seed, "in-err", since, tname)
    out = []
    for k, (xs, ss, why) in enumerate((((2, 3, 4), 4, "scale has 4 elements, C = 3"),
                                       ((2, 3, 4, 2), 2, "scale has 2 elements, C = 3"))):
        x = common.normal(rng, xs, t)
        s = common.normal(rng, (ss,), t)
        b = common.normal(rng, (ss,), t)
        out.append(_build("InstanceNormalization", since, opset, {}, [
            ("input", t, xs, None, True), ("scale", t, (ss,), None, True), ("B", t, (ss,), None, True)],
            [{"input": (x, t), "scale": (s, t), "B": (b, t)}], [("Y", t)],
            _tags(tname, xs, opset, "normal", error="scale-shape"), f"{tname}/error=scale-shape/{k}",
            expect_error=why))
    return out


@register("InstanceNormalization", version="1")
def generate_instance(seed: int) -> list[Case]:
    """InstanceNormalization-1/6/22 cases (module docstring): every type x rank 3-5 x numerics
    class, epsilon kinds, parameters as inputs or initializers, several opsets; errors:
    scale/B not of shape [C]."""
    cases = []
    numer = ("normal", "constant-rows", "tiny-variance", "normal", "special-values", "large-offset")
    for since, types, last in VERSIONS["InstanceNormalization"]:
        opsets = _opsets(since, last)
        j = 0
        for tname in types:
            for rank in (3, 4, 5):
                for k in range(4 if since != 1 else 2):
                    numerics = numer[(j + rank) % len(numer)]
                    cases.append(_instance_case(seed, since, tname, rank, j, numerics, _opset(opsets, j, last),
                                                ("default", "tiny", "large")[j % 3], j % 2 == 1))
                    j += 1
            cases.append(_instance_case(seed, since, tname, 3 + j % 3, j, "long-rows", opsets[-1], "default", False))
            j += 1
        cases += _instance_errors(seed, since, opsets[0], types[-1])
        if since == 1:  # the legacy consumed_inputs given, one case per type
            for k, tname in enumerate(types):
                cases.append(_instance_case(seed, since, tname, 4, j + k, "normal", since, "default", False,
                                            consumed_inputs=(0, 0, 0)))
    return cases


# ============================================================================ GroupNormalization
#: Case.contested of every GroupNormalization-18 case
GN18_CONTESTED = ("GroupNormalization-18 is deprecated in onnx's schema (per-group scale/bias replaced "
                  "by per-channel in 21): onnx's checker rejects every model using it")
def _group_case(seed, since, tname, rank, j, numerics, opset, eps_kind, stash_explicit):
    rng = case_rng(seed, "gn", since, tname, rank, j)
    t = _e(tname)
    g = int(rng.choice([1, 2, 3, 4]))
    cpg = int(rng.choice([1, 2, 3]))
    if j % 7 == 3:
        cpg = 1  # num_groups == C: InstanceNormalization
    c = g * cpg
    if numerics == "long-rows":
        shape = (1, c) + {3: (4096 // cpg,), 4: (32, 128 // cpg), 5: (8, 8, 64 // cpg)}[rank]
    else:
        shape = (int(rng.integers(1, 3)), c) + tuple(int(rng.integers(1, 5)) for _ in range(rank - 2))
        if numerics == "constant-rows":
            shape = shape[:2] + tuple(int(rng.choice([1, 2, 4])) for _ in range(rank - 2))
            if cpg == 3:
                shape = (shape[0], g * 4) + shape[2:]
                c, cpg = g * 4, 4
    n = shape[0]
    rows, per = n * g, int(np.prod(shape)) // max(n * g, 1)
    eps = {"default": None, "tiny": 1e-12, "large": 0.5}[eps_kind]
    attrs = {"num_groups": g}
    if eps is not None:
        attrs["epsilon"] = eps
    if since >= 21 and stash_explicit:
        attrs["stash_type"] = 1
    pshape = (g,) if since < 21 else (c,)
    scale = common.representable(rng.uniform(0.5, 1.5, pshape) * np.where(rng.random(pshape) < 0.2, -1, 1), t)
    bias = common.normal(rng, pshape, t)
    nt = _np(tname)
    x = _make_x(rng, numerics, shape, t, (rows, per))
    kw = dict(num_groups=g, epsilon=eps or 1e-5, version=since)
    y = ref.group_normalization(x.astype(nt), scale.astype(nt), bias.astype(nt), **kw)
    var = {k: [v] for k, v in ref.group_normalization_variants(x.astype(nt), scale.astype(nt), bias.astype(nt),
                                                               **kw).items()}
    b_full = np.repeat(bias, cpg) if since < 21 else bias
    unit = _scale_of(y - b_full.reshape((1, c) + (1,) * (rank - 2)), bias)
    ulp = _coarser(t, _e("float")) if since >= 21 else t
    # statistics in float (21's stash_type) or T (18), gain |scale| per element
    s_full = np.broadcast_to(ref._group_params(scale.astype(nt), bias.astype(nt), shape, g, since)[0], shape)
    prop = _prop(x.astype(nt).reshape(rows, per), _e("float") if since >= 21 else t, ref.epsilon_value(eps or 1e-5),
                 s_full.reshape(rows, per))
    inputs = [("X", t, shape, None, True), ("scale", t, pshape, None, True), ("bias", t, pshape, None, True)]
    groups = "one" if g == 1 else ("channels" if cpg == 1 else "between")
    tags = _tags(tname, shape, opset, numerics, epsilon=eps_kind, num_groups=groups,
                 stash_type="explicit" if "stash_type" in attrs else "default")
    return _build("GroupNormalization", since, opset, attrs, inputs,
                  [{"X": (x, t), "scale": (scale, t), "bias": (bias, t)}],
                  [("Y", t, [y], var, unit, ulp, prop)], tags, f"{tname}/r{rank}/G={g}/C={c}/{numerics}/j{j}",
                  contested=GN18_CONTESTED if since == 18 else None)


def _group_errors(seed, since, opset):
    out = []
    for k, (tname, xs, g, ps, err, why) in enumerate((
        ("float", (2, 6, 3), 4, 4 if since < 21 else 6, "num-groups", "C = 6 not divisible by num_groups = 4"),
        ("float16", (1, 6, 2, 2), 2, 6 if since < 21 else 2, "scale-shape",
         "scale/bias per group (18) or per channel (21): wrong length"),
    )):
        t = _e(tname)
        rng = case_rng(seed, "gn-err", since, k)
        x, s, b = common.normal(rng, xs, t), common.normal(rng, (ps,), t), common.normal(rng, (ps,), t)
        out.append(_build("GroupNormalization", since, opset, {"num_groups": g}, [
            ("X", t, xs, None, True), ("scale", t, (ps,), None, True), ("bias", t, (ps,), None, True)],
            [{"X": (x, t), "scale": (s, t), "bias": (b, t)}], [("Y", t)],
            _tags(tname, xs, opset, "normal", error=err), f"{tname}/error={err}", expect_error=why,
            contested=GN18_CONTESTED if since == 18 else None))
    return out


@register("GroupNormalization", version="2")
def generate_group(seed: int) -> list[Case]:
    """GroupNormalization-18 (per-group scale/bias) and -21 (per-channel, stash_type) cases:
    every type x rank 3-5 x numerics; num_groups 1, == C and in between; errors: C not
    divisible by num_groups, scale/bias of the other version's shape.  Every version-18
    case is contested (:data:`GN18_CONTESTED`): its expected outputs follow the version-18
    text, a backend rejecting the deprecated schema scores ``unsupported``."""
    cases = []
    numer = ("normal", "constant-rows", "tiny-variance", "normal", "special-values", "large-offset")
    for since, types, last in VERSIONS["GroupNormalization"]:
        opsets = _opsets(since, last)
        j = 0
        for tname in types:
            for rank in (3, 4, 5):
                for _ in range(4):
                    cases.append(_group_case(seed, since, tname, rank, j, numer[(j + rank) % len(numer)],
                                             _opset(opsets, j, last), ("default", "tiny", "large")[j % 3], j % 2 == 0))
                    j += 1
            cases.append(_group_case(seed, since, tname, 3 + j % 3, j, "long-rows", opsets[-1], "default", False))
            j += 1
        cases += _group_errors(seed, since, opsets[0])
    return cases


# ============================================================================ RMSNormalization
#: every (rank, axis) of ranks 1-5
_RANK_AXES = tuple((r, a) for r in (1, 2, 3, 4, 5) for a in range(-r, r))


def _rms_shapes(rng, rank, axis, numerics, scale_kind):
    """X's shape (long rows: 4096 normalized elements), the normalized start ``ax``, the
    scale's shape of a kind (``full`` = X.shape[ax:], ``ones`` = some dims 1, else the last
    normalized dim only or a scalar) and the kind's tag (``fewer-dims`` / ``scalar``)."""
    ax = axis % rank
    if numerics == "long-rows":
        shape = tuple([2] * ax + [1] * (rank - ax - 1) + [4096]) if rank > ax else (4096,)
    else:
        shape = tuple(int(rng.integers(1, {1: 16, 2: 8, 3: 5, 4: 4, 5: 3}[rank] + 1)) for _ in range(rank))
    norm = shape[ax:]
    if scale_kind == "full":
        sshape = norm
    elif scale_kind == "ones":
        sshape = tuple(1 if rng.random() < 0.5 else d for d in norm)
    else:
        sshape = norm[-1:] if len(norm) > 1 else ()
        scale_kind = "fewer-dims" if sshape else "scalar"
    return shape, ax, sshape, scale_kind


def _rms_case(seed, tname, vname, rank, axis, j, numerics, opset, eps_kind, scale_kind, omit_axis=False):
    rng = case_rng(seed, "rms", tname, vname, rank, axis, j, *(("omit-axis",) if omit_axis else ()))
    t, v = _e(tname), _e(vname)
    shape, ax, sshape, scale_kind = _rms_shapes(rng, rank, axis, numerics, scale_kind)
    norm = shape[ax:]
    eps = {"default": None, "tiny": 1e-12, "large": 0.5}[eps_kind]
    attrs = {} if omit_axis else {"axis": axis}  # omitted: the default -1
    if eps is not None:
        attrs["epsilon"] = eps
    if j % 3 == 0:
        attrs["stash_type"] = 1
    rows, n = int(np.prod(shape[:ax])), int(np.prod(norm))
    x = _make_x(rng, numerics, shape, t, (rows, n))
    scale = common.representable(rng.uniform(0.5, 1.5, sshape), v)
    xt, st = x.astype(_np(tname)), scale.astype(_np(vname))
    y = ref.rms_normalization(xt, st, axis=axis, epsilon=eps or 1e-5)
    var = {k: [w] for k, w in ref.rms_normalization_variants(xt, st, axis=axis, epsilon=eps or 1e-5).items()}
    ulp = _coarser(t, v, _e("float"))
    # mean square in float (stash_type 1), gain |scale| per element
    prop = _prop(xt.reshape(rows, n), _e("float"), ref.epsilon_value(eps or 1e-5),
                 np.broadcast_to(np.abs(st.astype(np.float64)), shape).reshape(rows, n), center=False)
    tags = _tags(tname, shape, opset, numerics, scale_dtype=vname, axis=axis, axis_sign="neg" if axis < 0 else "pos",
                 epsilon=eps_kind, scale_shape=scale_kind)
    return _build("RMSNormalization", 23, opset, attrs,
                  [("X", t, shape, None, True), ("scale", v, sshape, None, True)],
                  [{"X": (x, t), "scale": (scale, v)}], [("Y", v, [y], var, _scale_of(y), ulp, prop)], tags,
                  f"{tname}-{vname}/r{rank}/axis={'default' if omit_axis else axis}/{numerics}/j{j}",
                  contested=RMS_T_NE_V_CONTESTED if t != v else None)


#: Case.contested of the RMSNormalization cases with T != V
RMS_T_NE_V_CONTESTED = ("T != V: the schema admits it and declares Y of type V, but the function body's "
                        "Mul(Cast(Normalized, T), Scale) is ill-typed and infers Y as T: onnx's checker "
                        "rejects the model")


@register("RMSNormalization", version="2")
def generate_rms(seed: int) -> list[Case]:
    """RMSNormalization-23: every type with V = T, ranks 1-5 and every axis, scale
    broadcast kinds, epsilon kinds, numerics (no mean is subtracted: large-offset data
    separates a LayerNormalization-like kernel); errors: axis out of range, scale not
    broadcastable.

    ``T != V`` (the 12 other pairs, 4 cases each over ranks, axes, scale kinds and
    numerics) is *contested* (:data:`RMS_T_NE_V_CONTESTED`): the schema declares ``Y`` of
    type ``V`` and lets ``V`` differ from ``T``, but onnx's type inference of the
    context-dependent function body (``Mul(Normalized, Scale)`` with ``Normalized`` cast
    to ``T``) infers ``Y`` as ``T`` and the checker rejects the models ("Y has
    inconsistent type"); onnxruntime rejects them too.  The expected ``Y`` follows the
    operator text and the declared type ``V``; the tolerance accepts Normalized rounded
    to ``T`` before the product (the body) and the product rounded once to ``V``
    (:func:`conformance.reference.normalization.rms_normalization_variants`).
    """
    cases = []
    last = LATEST_OPSET
    opsets = _opsets(23, last)
    numer = ("normal", "large-offset", "constant-rows", "special-values", "tiny-variance")
    j = 0
    for tname in ALL_T:
        for vname in (tname,):  # T != V: contested (generate_rms docstring)
            for rank in (1, 2, 3, 4, 5):
                for axis in range(-rank, rank):
                    cases.append(_rms_case(seed, tname, vname, rank, axis, j, numer[j % len(numer)],
                                           _opset(opsets, j, last), ("default", "tiny", "large")[j % 3],
                                           ("full", "ones", "fewer")[j % 3]))
                    j += 1
        cases.append(_rms_case(seed, tname, tname, 2, -1, j, "long-rows", _opset(opsets, j, last), "default", "full"))
        j += 1
    pairs = [(t_, v_) for t_ in ALL_T for v_ in ALL_T if t_ != v_]
    for k in range(4 * len(pairs)):
        tname, vname = pairs[k % len(pairs)]
        rank, axis = _RANK_AXES[(7 * k) % len(_RANK_AXES)]
        cases.append(_rms_case(seed, tname, vname, rank, axis, j, numer[k % len(numer)], _opset(opsets, j, last),
                               ("default", "tiny", "large")[k % 3], ("full", "ones", "fewer")[(k // 3) % 3]))
        j += 1
    for k, tname in enumerate(ALL_T):  # axis left at its default (-1)
        cases.append(_rms_case(seed, tname, tname, 2 + k % 3, -1, j, ("normal", "large-offset")[k % 2],
                               _opset(opsets, j, last), "default", "full", omit_axis=True))
        j += 1
    for k, (xs, axis, ss, err, why) in enumerate((
        ((2, 3, 4), 3, (4,), "axis-range", "axis 3 outside [-3, 3)"),
        ((2, 3, 4), -4, (4,), "axis-range", "axis -4 outside [-3, 3)"),
        ((2, 3, 4), -1, (5,), "scale-shape", "scale [5] not broadcastable to X [2, 3, 4]"),
    )):
        t = _e(ALL_T[k % 4])
        rng = case_rng(seed, "rms-err", k)
        cases.append(_build("RMSNormalization", 23, opsets[k % len(opsets)], {"axis": axis},
                            [("X", t, xs, None, True), ("scale", t, ss, None, True)],
                            [{"X": (common.normal(rng, xs, t), t), "scale": (common.normal(rng, ss, t), t)}],
                            [("Y", t)], _tags(ALL_T[k % 4], xs, opsets[k % len(opsets)], "normal", error=err),
                            f"{ALL_T[k % 4]}/error={err}/{k}", expect_error=why))
    return cases


# ============================================================================ SimplifiedLayerNormalization
#: U (inv_std_var's type) -> the stash_type that makes it (the schema's type inference: U = stash_type)
SLN_STASH = {"float": 1, "double": 11}


def _sln_case(seed, tname, uname, vname, rank, axis, j, *, numerics, opset, eps_kind, scale_kind, with_inv,
              stash_explicit):
    rng = case_rng(seed, "sln", tname, uname, vname, rank, axis, j)
    t, u, v = _e(tname), _e(uname), _e(vname)
    shape, ax, sshape, scale_kind = _rms_shapes(rng, rank, axis, numerics, scale_kind)
    norm = shape[ax:]
    eps = {"default": None, "tiny": 1e-12, "large": 0.5}[eps_kind]
    stash = SLN_STASH[uname]
    attrs = {"axis": axis} if (axis != -1 or j % 2) else {}
    if eps is not None:
        attrs["epsilon"] = eps
    if stash != 1 or stash_explicit:
        attrs["stash_type"] = stash
    rows, n = int(np.prod(shape[:ax])), int(np.prod(norm))
    x = _make_x(rng, numerics, shape, t, (rows, n))
    scale = common.representable(rng.uniform(0.5, 1.5, sshape) * np.where(rng.random(sshape) < 0.2, -1, 1), v)
    xt, st = x.astype(_np(tname)), scale.astype(_np(vname))
    kw = dict(axis=axis, epsilon=1e-5 if eps is None else eps, stash_type=stash)
    y, inv = ref.simplified_layer_normalization(xt, st, **kw)
    var = ref.simplified_layer_normalization_variants(xt, st, **kw)
    f = _e("float")
    # mean square at the coarser of T's working precision and U (both are legitimate stage-one precisions)
    stat = _coarser(t, u, f)
    xr, ek = xt.reshape(rows, n), ref.epsilon_value(kw["epsilon"])
    prop = _prop(xr, stat, ek, np.broadcast_to(np.abs(st.astype(np.float64)), shape).reshape(rows, n), center=False)
    outs = [("Y", v, [y], {k: [w[0]] for k, w in var.items()}, _scale_of(y), _coarser(t, v, f), prop)]
    if with_inv:
        outs.append(("inv_std_var", u, [inv], {k: [w[1]] for k, w in var.items()}, _scale_of(inv), _coarser(t, u, f),
                     _prop(xr, stat, ek, what="inv", center=False)))
    tags = _tags(tname, shape, opset, numerics, scale_dtype=vname, stash_dtype=uname, axis=axis,
                 axis_sign="neg" if axis < 0 else "pos", epsilon=eps_kind, scale_shape=scale_kind,
                 outputs="Y,inv_std_var" if with_inv else "Y",
                 stash_type="explicit" if "stash_type" in attrs else "default",
                 axis_attr="explicit" if "axis" in attrs else "default")
    return _build("SimplifiedLayerNormalization", 1, opset, attrs,
                  [("X", t, shape, None, True), ("scale", v, sshape, None, True)],
                  [{"X": (x, t), "scale": (scale, v)}], outs, tags,
                  f"{tname}-{uname}-{vname}/r{rank}/axis={axis}/{'Y,inv' if with_inv else 'Y'}/{numerics}/j{j}")


#: ai.onnx opsets the SimplifiedLayerNormalization models import (the op is at version 1 in
#: every opset; 26 is onnxruntime's newest)
SLN_OPSETS = (11, 17, 21, 26)


@register("SimplifiedLayerNormalization", version="1")
def generate_simplified_layer_norm(seed: int) -> list[Case]:
    """onnxruntime's SimplifiedLayerNormalization-1 in the ai.onnx domain (schema from
    onnxruntime's registry; semantics: :func:`conformance.reference.normalization.
    simplified_layer_normalization`): every (T, U, V) of the 32, four cases each (two
    with inv_std_var, two without), the stash_type that makes U (1 for float, explicit
    or default; 11 for double), ranks 1-5 and every axis (cyclic), the axis attribute
    explicit or default, scale of the full normalized shape / with ones / fewer dims or
    a scalar, epsilon kinds, numerics classes, long rows per T; models import ai.onnx
    opset 11, 17, 21 or 26.  Errors: axis out of range, scale not broadcastable to
    ``X.shape[axis:]``, stash_type 10 (float16: not a U) with inv_std_var requested,
    inv_std_var declared double while stash_type is 1.

    onnx does not know the operator: onnx's checker rejects every one of these models
    (the cases are not contested: that is no self-contradiction of a spec).
    """
    cases = []
    numer = ("normal", "large-offset", "constant-rows", "special-values", "tiny-variance")
    j = 0
    for tname in ALL_T:
        for uname in ("float", "double"):
            for vname in ALL_T:
                for k in range(4):
                    rank, axis = _RANK_AXES[(7 * j + k) % len(_RANK_AXES)]
                    cases.append(_sln_case(
                        seed, tname, uname, vname, rank, axis, j, numerics=numer[j % len(numer)],
                        opset=SLN_OPSETS[j % len(SLN_OPSETS)], eps_kind=("default", "tiny", "large")[j % 3],
                        scale_kind=("full", "ones", "fewer")[(j // 2) % 3], with_inv=k in (0, 3),
                        stash_explicit=k == 3))
                    j += 1
        cases.append(_sln_case(seed, tname, "float", tname, 2, -1, j, numerics="long-rows", opset=SLN_OPSETS[-1],
                               eps_kind="default", scale_kind="full", with_inv=True, stash_explicit=False))
        j += 1
    f = _e("float")
    for k, (xs, attrs, ss, inv_el, err, why) in enumerate((
        ((2, 3, 4), {"axis": 3}, (4,), None, "axis-range", "axis 3 outside [-3, 3)"),
        ((2, 3, 4), {"axis": -4}, (4,), None, "axis-range", "axis -4 outside [-3, 3)"),
        ((2, 3, 4), {"axis": -1}, (5,), None, "scale-shape", "scale [5] not broadcastable to X.shape[-1:] = [4]"),
        ((2, 3, 4), {"axis": 1}, (2, 4), None, "scale-shape", "scale [2, 4] not broadcastable to X.shape[1:] = [3, 4]"),
        ((2, 3, 4), {"stash_type": 10}, (4,), _e("float16"), "stash-type",
         "stash_type 10 makes inv_std_var float16, not a U (float, double)"),
        ((2, 3, 4), {"stash_type": 1}, (4,), _e("double"), "inv-type",
         "inv_std_var declared double but stash_type 1 makes it float"),
    )):
        rng = case_rng(seed, "sln-err", k)
        outs = [("Y", f)] + ([("inv_std_var", inv_el)] if inv_el is not None else [])
        c = _build("SimplifiedLayerNormalization", 1, SLN_OPSETS[k % len(SLN_OPSETS)], attrs,
                   [("X", f, xs, None, True), ("scale", f, ss, None, True)],
                   [{"X": (common.normal(rng, xs, f), f), "scale": (common.normal(rng, ss, f), f)}], outs,
                   _tags("float", xs, SLN_OPSETS[k % len(SLN_OPSETS)], "normal", error=err,
                         outputs=",".join(o[0] for o in outs)),
                   f"float/error={err}/{k}", expect_error=why)
        if inv_el is not None:
            c.outputs[1].shape = (2, 3, 1)
        cases.append(c)
    return cases


# ============================================================================ LpNormalization
@register("LpNormalization", version="1")
def generate_lp(seed: int) -> list[Case]:
    """LpNormalization-1/22: every type x p in {1, 2} x rank 1-4 x axis (both signs), the
    default attributes, zero-norm rows (defined to give 0), NaN rows, long rows, rows whose
    norm is tiny but nonzero (``tiny-norm``, below 1e-12; float, double, bfloat16);
    errors: p = 3 / 0, axis out of range."""
    cases = []
    numer = ("normal", "zero-norm", "normal", "special-values")
    for since, types, last in VERSIONS["LpNormalization"]:
        opsets = _opsets(since, last)
        j = 0
        for tname in types:
            t = _e(tname)
            for p in (1, 2):
                for rank in (1, 2, 3, 4):
                    for axis in sorted({rank - 1, -1, 0, -rank, (j % rank)}):
                        rng = case_rng(seed, "lp", since, tname, p, rank, axis)
                        numerics = numer[j % len(numer)]
                        long = rank == 2 and axis == -1 and p == 2
                        shape = (2, 4096) if long else tuple(int(rng.integers(1, {1: 16, 2: 8, 3: 5, 4: 4}[rank] + 1))
                                                             for _ in range(rank))
                        numerics = "long-rows" if long else numerics
                        attrs = {}
                        if not (p == 2 and j % 4 == 0):
                            attrs["p"] = p
                        if not (axis == -1 and j % 3 == 0):
                            attrs["axis"] = axis
                        xm = np.moveaxis(np.zeros(shape), axis, -1)
                        x = _make_x(rng, numerics, xm.shape, t, (int(np.prod(xm.shape[:-1])), xm.shape[-1]))
                        x = np.moveaxis(x, -1, axis).copy()
                        xt = x.astype(_np(tname))
                        y = ref.lp_normalization(xt, p=p, axis=axis)
                        var = {k: [v] for k, v in ref.lp_normalization_variants(xt, p=p, axis=axis).items()}
                        # the norm STAT_ULPS ulps of T off: a relative error of y
                        prop = STAT_ULPS * dtypes.eps(t) * _scale_of(y) if np.isfinite(y).any() else 0.0
                        opset = _opset(opsets, j, last)
                        tags = _tags(tname, shape, opset, numerics, p=p, axis=axis,
                                     axis_sign="neg" if axis < 0 else "pos",
                                     attrs="defaults" if not attrs else ("partial" if len(attrs) == 1 else "explicit"))
                        cases.append(_build("LpNormalization", since, opset, attrs, [("input", t, shape, None, True)],
                                            [{"input": (x, t)}], [("output", t, [y], var, 1.0, t, prop)], tags,
                                            f"{tname}/p={p}/r{rank}/axis={axis}/{numerics}"))
                        j += 1
        # rows whose norm is tiny but not zero (below 1e-12; not representable in float16): the
        # spec divides, a kernel clamping the norm at an epsilon (F.normalize's 1e-12) does not
        for k, tname in enumerate(t for t in types if t != "float16"):
            t = _e(tname)
            for p in (1, 2):
                rng = case_rng(seed, "lp-tiny", since, tname, p)
                shape, axis = ((4, 6), -1) if p == 2 else ((3, 5, 2), 1)
                xm = np.moveaxis(np.zeros(shape), axis, -1)
                x = _make_x(rng, "tiny-norm", xm.shape, t, (int(np.prod(xm.shape[:-1])), xm.shape[-1]))
                x = np.moveaxis(x, -1, axis).copy()
                xt = x.astype(_np(tname))
                y = ref.lp_normalization(xt, p=p, axis=axis)
                var = {kk: [v] for kk, v in ref.lp_normalization_variants(xt, p=p, axis=axis).items()}
                prop = STAT_ULPS * dtypes.eps(t) * _scale_of(y)
                opset = opsets[(k + p) % len(opsets)]
                attrs = {"p": p, "axis": axis}
                tags = _tags(tname, shape, opset, "tiny-norm", p=p, axis=axis, axis_sign="neg" if axis < 0 else "pos",
                             attrs="explicit")
                cases.append(_build("LpNormalization", since, opset, attrs, [("input", t, shape, None, True)],
                                    [{"input": (x, t)}], [("output", t, [y], var, 1.0, t, prop)], tags,
                                    f"{tname}/p={p}/r{len(shape)}/axis={axis}/tiny-norm"))
        for k, (attrs, err, why) in enumerate((({"p": 3}, "p-value", "p must be 1 or 2"),
                                               ({"p": 0}, "p-value", "p must be 1 or 2"),
                                               ({"axis": 3}, "axis-range", "axis 3 outside [-3, 3)"),
                                               ({"axis": -4}, "axis-range", "axis -4 outside [-3, 3)"))):
            tname = types[k % len(types)]
            t = _e(tname)
            rng = case_rng(seed, "lp-err", since, k)
            cases.append(_build("LpNormalization", since, opsets[0], attrs, [("input", t, (2, 3, 4), None, True)],
                                [{"input": (common.normal(rng, (2, 3, 4), t), t)}], [("output", t)],
                                _tags(tname, (2, 3, 4), opsets[0], "normal", error=err),
                                f"{tname}/error={err}/{k}", expect_error=why))
    return cases


# ============================================================================ MeanVarianceNormalization
#: ``checker_rejects`` tag -> Case.contested of the MeanVarianceNormalization cases onnx's checker rejects
MVN_CONTESTED = {
    "body-ill-typed": "T admits this type but the function body's float Exponent/Epsilon constants make "
                      "Pow/Add ill-typed for it: onnx's checker rejects the model",
    "default-axes-unbound": "version 13's function body reads Constant <value_ints = @axes>, unbound when "
                            "axes is left at its default: onnx's checker rejects the model",
}
_MVN_AXES = (None, (0, 2, 3), (2, 3), (1,), (0, 1, 2, 3), (-1,), (1, -1), (0,))


@register("MeanVarianceNormalization", version="2")
def generate_mvn(seed: int) -> list[Case]:
    """MeanVarianceNormalization-9/13: every type x axes class (default [0, 2, 3],
    spatial, channel, all, negative axes for 13), ranks 3-5, constant slices (Y = 0;
    float and double only: the body's 1e-9 is 0 in a half type, where a constant slice
    is 0/0), NaN slices; errors: axis out of range.

    The function body is ill-typed for every ``T`` but float (its ``Exponent`` and
    ``Epsilon`` constants are float: ``Pow``/``Add`` bound to different types), so
    onnx's checker with full_check and runtimes that expand the body reject those
    models although ``T`` admits them.  The meaning is unambiguous (the text's formula
    with the body's 1e-9), so the cases are kept, tagged ``checker_rejects=body-ill-typed``
    and contested (:data:`MVN_CONTESTED`: a backend rejecting them scores ``unsupported``).
    Version 13's body reads ``axes`` with ``Constant <value_ints = @axes>``; when the
    attribute is left at its default the reference is unbound and the checker rejects
    the model (tag ``checker_rejects=default-axes-unbound``, contested too): also an onnx defect.
    """
    cases = []
    numer = ("normal", "normal", "constant-rows", "special-values")
    for since, types, last in VERSIONS["MeanVarianceNormalization"]:
        opsets = _opsets(since, last)
        j = 0
        for tname in types:
            t = _e(tname)
            for axes in _MVN_AXES:
                if since < 13 and axes is not None and any(a < 0 for a in axes):
                    continue
                for rank in ((4,) if axes is None or max(axes) >= 2 else (3, 4)) + ((5,) if j % 4 == 0 else ()):
                    rng = case_rng(seed, "mvn", since, tname, str(axes), rank)
                    numerics = numer[j % len(numer)]
                    if numerics == "constant-rows" and tname in ("float16", "bfloat16"):
                        # 1e-9 is 0 in a half type: a zero-variance slice is 0/0 in T, 0 in float32
                        numerics = "normal"
                    pow2 = numerics == "constant-rows"
                    shape = tuple(int(rng.choice([1, 2, 4])) if pow2 else int(rng.integers(1, 5)) for _ in range(rank))
                    ax = (0, 2, 3) if axes is None else axes
                    axn = sorted(a % rank for a in ax)
                    keep = [i for i in range(rank) if i not in axn]
                    perm = keep + axn
                    tshape = tuple(shape[i] for i in perm)
                    rows, n = int(np.prod(tshape[: len(keep)])), int(np.prod(tshape[len(keep):]))
                    if n < 2 or pow2 and n < 2:
                        shape = tuple(d if i != axn[-1] else d * 4 for i, d in enumerate(shape))
                        tshape = tuple(shape[i] for i in perm)
                        rows, n = int(np.prod(tshape[: len(keep)])), int(np.prod(tshape[len(keep):]))
                    xr = _make_x(rng, numerics, tshape, t, (rows, n))
                    x = np.transpose(xr, np.argsort(perm)).copy()
                    xt = x.astype(_np(tname))
                    y = ref.mean_variance_normalization(xt, axes=ax)
                    var = {k: [v] for k, v in ref.mean_variance_normalization_variants(xt, axes=ax).items()}
                    prop = _prop(xr.astype(_np(tname)).reshape(rows, n), t, ref.MVN_EPSILON, form="sqrt-plus-eps")
                    attrs = {} if axes is None else {"axes": list(axes)}
                    opset = _opset(opsets, j, last)
                    tags = _tags(tname, shape, opset, numerics, axes="default" if axes is None else str(list(axes)))
                    if tname != "float":
                        tags["checker_rejects"] = "body-ill-typed"
                    elif since >= 13 and axes is None:
                        tags["checker_rejects"] = "default-axes-unbound"
                    cases.append(_build("MeanVarianceNormalization", since, opset, attrs,
                                        [("X", t, shape, None, True)], [{"X": (x, t)}],
                                        [("Y", t, [y], var, _scale_of(y), t, prop)], tags,
                                        f"{tname}/r{rank}/axes={'default' if axes is None else list(axes)}/{numerics}",
                                        contested=MVN_CONTESTED.get(tags.get("checker_rejects"))))
                    j += 1
        tname = types[-1]
        t = _e(tname)
        rng = case_rng(seed, "mvn-err", since)
        cases.append(_build("MeanVarianceNormalization", since, opsets[0], {"axes": [0, 4]},
                            [("X", t, (2, 3, 2, 2), None, True)], [{"X": (common.normal(rng, (2, 3, 2, 2), t), t)}],
                            [("Y", t)], _tags(tname, (2, 3, 2, 2), opsets[0], "normal", error="axis-range"),
                            f"{tname}/error=axis-range", expect_error="axis 4 outside [-4, 4)"))
    return cases


# ============================================================================ LRN
#: (size, alpha, beta, bias) classes; None = attribute left at its default
_LRN_PARAMS = (
    (3, None, None, None),
    (5, 1.0, 0.75, 2.0),
    (2, 0.5, 0.5, 1.0),   # even size: asymmetric window
    (1, 2.0, 1.0, 0.5),
    (4, 1.5, 0.25, 1.0),
    (7, 0.9, 1.5, 3.0),   # window wider than C
    (3, 1e-4, 0.75, 1.0),
)


@register("LRN", version="1")
def generate_lrn(seed: int) -> list[Case]:
    """LRN-1/13: every type x (size, alpha, beta, bias) class (defaults, even size,
    size 1, window wider than C, alpha large enough that ``alpha / size`` matters) x
    rank 3-5; NaN inputs; errors: size missing (required attribute)."""
    cases = []
    for since, types, last in VERSIONS["LRN"]:
        opsets = _opsets(since, last)
        j = 0
        for tname in types:
            t = _e(tname)
            for pi, (size, alpha, beta, bias) in enumerate(_LRN_PARAMS):
                for rank in ((3, 4) if pi % 2 else (4, 5)):
                    rng = case_rng(seed, "lrn", since, tname, pi, rank)
                    shape = (int(rng.integers(1, 3)), int(rng.integers(3, 9))) + tuple(
                        int(rng.integers(1, 4)) for _ in range(rank - 2))
                    numerics = "special-values" if j % 9 == 4 else "normal"
                    x = common.normal(rng, shape, t, scale=1.5)
                    if numerics == "special-values":
                        x.reshape(-1)[int(rng.integers(0, x.size))] = np.nan
                    attrs = {"size": size}
                    for k, val in (("alpha", alpha), ("beta", beta), ("bias", bias)):
                        if val is not None:
                            attrs[k] = val
                    kw = {k: attrs[k] for k in attrs}
                    xt = x.astype(_np(tname))
                    y = ref.lrn(xt, **kw)
                    var = {k: [v] for k, v in ref.lrn_variants(xt, **kw).items()}
                    # the square sum STAT_ULPS ulps of T off: |dy| <= beta * STAT_ULPS * u * |y|
                    prop = abs(ref.f32(kw.get("beta", 0.75))) * STAT_ULPS * dtypes.eps(t) * _scale_of(y)
                    opset = _opset(opsets, j, last)
                    tags = _tags(tname, shape, opset, numerics, size=size,
                                 lrn_params="defaults" if alpha is None else f"a={alpha},b={beta},k={bias}")
                    cases.append(_build("LRN", since, opset, attrs, [("X", t, shape, None, True)], [{"X": (x, t)}],
                                        [("Y", t, [y], var, _scale_of(y), t, prop)], tags,
                                        f"{tname}/r{rank}/size={size}/p{pi}/{numerics}"))
                    j += 1
        tname = types[-1]
        t = _e(tname)
        rng = case_rng(seed, "lrn-err", since)
        cases.append(_build("LRN", since, opsets[0], {"alpha": 1e-4}, [("X", t, (1, 4, 2, 2), None, True)],
                            [{"X": (common.normal(rng, (1, 4, 2, 2), t), t)}], [("Y", t)],
                            _tags(tname, (1, 4, 2, 2), opsets[0], "normal", error="size-missing"),
                            f"{tname}/error=size-missing", expect_error="required attribute size is missing"))
    return cases


# ============================================================================ com.microsoft Skip*LayerNormalization
MS = "com.microsoft"
SKIP_T = ("float16", "float", "bfloat16")
#: skip shape kinds relative to input [B, S, H]
SKIP_KINDS = ("full", "batch1", "2d")


def _skip_case(seed, op, simplified, tname, j, *, rank, skip_kind, has_bias, has_beta, outs, eps_kind, numerics):
    rng = case_rng(seed, op, tname, j)
    t = _e(tname)
    f = _e("float")
    h = int(rng.choice([1, 4, 8, 16, 32, 64])) if numerics != "long-rows" else 4096
    shape = (int(rng.integers(1, 3)), int(rng.integers(1, 5)), h) if rank == 3 else (int(rng.integers(1, 6)), h)
    sshape = {"full": shape, "batch1": (1,) + shape[1:], "2d": shape[1:]}[skip_kind] if rank == 3 else shape
    eps = {"default": None, "tiny": 1e-12, "ln": 1e-5, "large": 0.5}[eps_kind]
    attrs = {} if eps is None else {"epsilon": eps}
    x = _make_x(rng, numerics, shape, t, (int(np.prod(shape[:-1])), h))
    sk = common.normal(rng, sshape, t, scale=0.5)
    gamma = common.representable(rng.uniform(0.5, 1.5, h), t)
    beta = common.normal(rng, (h,), t) if has_beta else None
    bias = common.normal(rng, (h,), t, scale=0.2) if has_bias else None
    nt = _np(tname)
    cast = lambda a: None if a is None else a.astype(nt)  # noqa: E731
    kw = dict(epsilon=1e-12 if eps is None else eps, simplified=simplified)
    args = (x.astype(nt), sk.astype(nt), gamma.astype(nt), cast(beta), cast(bias))
    y, mean, inv, ssum = ref.skip_layer_normalization(*args, **kw)
    var = ref.skip_layer_normalization_variants(*args, **kw)
    names = ("output", "mean", "inv_std_var", "input_skip_bias_sum")
    exp = (y, mean, inv, ssum)
    elems = (t, f, f, t)
    b64 = np.zeros(()) if beta is None else beta
    units = (_scale_of(y - b64, b64), _scale_of(ssum), _scale_of(inv), _scale_of(ssum))
    # statistics of the sum in float, gain |gamma|; the sum itself is not a statistic
    ek, srows = ref.epsilon_value(kw["epsilon"]), ssum.reshape(-1, h)
    props = (_prop(srows, f, ek, np.abs(gamma.astype(nt).astype(np.float64))[None, :], center=not simplified),
             _prop(srows, f, ek, what="mean"), _prop(srows, f, ek, what="inv", center=not simplified), None)
    spec = []
    for k, nm in enumerate(names):
        if nm not in outs:
            continue
        vs = {vn: [v[k]] for vn, v in var.items()}
        spec.append((nm, elems[k], [exp[k]], vs, units[k], _coarser(elems[k], f), props[k]))
    inputs = [("input", t, shape, None, True), ("skip", t, sshape, None, True), ("gamma", t, (h,), None, True)]
    feeds = {"input": (x, t), "skip": (sk, t), "gamma": (gamma, t)}
    if not simplified:
        inputs.append(("beta", t, (h,), None, has_beta))
        if has_beta:
            feeds["beta"] = (beta, t)
    inputs.append(("bias", t, (h,), None, has_bias))
    if has_bias:
        feeds["bias"] = (bias, t)
    case = _build(op, 1, 1, attrs, inputs, [feeds], spec,
                  _tags(tname, shape, 1, numerics, outputs=",".join(outs), skip_shape=skip_kind,
                        bias="present" if has_bias else "absent", beta="present" if has_beta else "absent",
                        epsilon=eps_kind),
                  f"{tname}/r{rank}/skip={skip_kind}/outs={','.join(outs)}/{numerics}/j{j}", domain=MS)
    present = set(outs)
    full = []
    for k, nm in enumerate(names):
        got = [o for o in case.outputs if o.name == nm]
        full.append(got[0] if got else Output(nm, elems[k], present=False))
    case.outputs = full  # schema order, absent ones marked (before the model is first built)
    assert present == {o.name for o in case.outputs if o.present}
    return case


def _skip_generate(seed, op, simplified):
    cases = []
    out_sets = (("output",), ("output", "input_skip_bias_sum"), ("output", "inv_std_var"),
                ("output", "mean", "inv_std_var", "input_skip_bias_sum"))
    if simplified:
        out_sets = tuple(tuple(o for o in s if o != "mean") for s in out_sets)
    numer = ("normal", "large-offset", "normal", "tiny-variance", "constant-rows", "special-values")
    j = 0
    for tname in SKIP_T:
        for rank in (2, 3):
            for k in range(6 if tname != "bfloat16" else 2):
                cases.append(_skip_case(
                    seed, op, simplified, tname, j, rank=rank, skip_kind=SKIP_KINDS[j % 3] if rank == 3 else "full",
                    has_bias=j % 3 != 1, has_beta=(not simplified) and j % 4 != 2, outs=out_sets[j % len(out_sets)],
                    eps_kind=("default", "ln", "large", "tiny")[j % 4], numerics=numer[(j + k) % len(numer)]))
                j += 1
        cases.append(_skip_case(seed, op, simplified, tname, j, rank=3, skip_kind="full", has_bias=True,
                                has_beta=not simplified, outs=out_sets[-1], eps_kind="ln", numerics="long-rows"))
        j += 1
    # errors: gamma / bias of the wrong length, skip of another hidden size
    for k, (gl, bl, sk, err, why) in enumerate(((5, 4, (2, 3, 4), "gamma-shape", "gamma [5] vs hidden_size 4"),
                                                (4, 3, (2, 3, 4), "bias-shape", "bias [3] vs hidden_size 4"),
                                                (4, 4, (2, 3, 5), "skip-shape", "skip [2, 3, 5] vs input [2, 3, 4]"))):
        t = _e("float")
        rng = case_rng(seed, op, "err", k)
        feeds = {"input": (common.normal(rng, (2, 3, 4), t), t), "skip": (common.normal(rng, sk, t), t),
                 "gamma": (common.normal(rng, (gl,), t), t), "bias": (common.normal(rng, (bl,), t), t)}
        inputs = [("input", t, (2, 3, 4), None, True), ("skip", t, sk, None, True), ("gamma", t, (gl,), None, True)]
        if not simplified:
            inputs.append(("beta", t, (4,), None, False))
        inputs.append(("bias", t, (bl,), None, True))
        c = _build(op, 1, 1, {}, inputs, [feeds], [("output", t)],
                   _tags("float", (2, 3, 4), 1, "normal", error=err), f"float/error={err}", expect_error=why,
                   domain=MS)
        cases.append(c)
    return cases


@register("SkipLayerNormalization", domain=MS, version="1")
def generate_skip_layer_norm(seed: int) -> list[Case]:
    """com.microsoft SkipLayerNormalization-1 (schema from onnxruntime): LayerNormalization
    over the last axis of ``input + skip (+ bias)`` with gamma (and beta); outputs
    output, mean, inv_std_var (U = float) and input_skip_bias_sum in their patterns;
    skip [B, S, H], [1, S, H] or [S, H]; float16, float, bfloat16; errors: parameter or
    skip shapes.  The model imports com.microsoft opset 1 (and an ai.onnx opset)."""
    return _skip_generate(seed, "SkipLayerNormalization", False)


@register("SkipSimplifiedLayerNormalization", domain=MS, version="1")
def generate_skip_simplified_layer_norm(seed: int) -> list[Case]:
    """com.microsoft SkipSimplifiedLayerNormalization-1: RMS normalization (no mean, no
    beta) of ``input + skip (+ bias)`` over the last axis; otherwise as
    :func:`generate_skip_layer_norm` (the ``mean`` output is never requested: RMS has none)."""
    return _skip_generate(seed, "SkipSimplifiedLayerNormalization", True)
