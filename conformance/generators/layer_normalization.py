"""Case generator for ai.onnx LayerNormalization-17 (same definition for opsets 17..28).

Oracle and tolerance policy: :mod:`conformance.reference.layer_normalization` (read its docstring
for the definitional decisions: two-pass variance, parameter broadcasting, what is
undefined).  Every case is one single-node model; ``since_version`` is 17 and the
imported opset is 17, 18, 21, 23, 26 or 28.

Suite layout (deterministic in ``seed``; every case has its own
``case_rng(seed, key...)`` stream, so adding a case does not change the others):

* ``core``: the full product dtype (float16, bfloat16, float, double) x every
  (rank 1-5, axis in [-r, r)) x output pattern (Y; Y,Mean; Y,InvStdDev;
  Y,Mean,InvStdDev) = 480 cases.  The secondary coordinates -- stash_type (1, 16),
  B present/absent, Scale/B shape kind, parameters as graph inputs or initializers,
  epsilon (default, tiny 1e-12, zero, large 0.5), numerics class, opset, one or two
  data sets -- are assigned by independent cyclic schedules over the product index
  so that every pair (dtype, x) is covered (tests assert it).
* ``long-rows``: >= 4096 normalized elements per row, per dtype and stash_type.
* ``near-limits`` extra cases at larger sizes, ``zero-size`` (an outer dimension 0).
* ``error``: axis out of range (both signs), Scale/B not broadcastable (size
  mismatch, more dims than X), stash_type outside U (7, 10, 11).

Numerics classes (tag ``numerics``): ``normal``; ``large-offset`` (mean >> std,
resolvable in the statistics' precision but lost by ``E[x^2] - E[x]^2``);
``constant-rows`` (some rows constant, normalized extent a power of two and
constants with few mantissa bits so every summation order gives the mean exactly:
``InvStdDev = 1/sqrt(eps)``, ``Y = B``); ``tiny-variance`` (variance comparable to or
below epsilon); ``near-limits`` (float16: half of its largest finite value, where
float16 accumulation overflows; other types: the largest magnitude whose float32
squares summed over a row stay finite, the limit the mandated float32 statistics
impose); ``special-values`` (rows with a NaN, with both +inf and -inf -- all outputs
NaN for every algorithm -- and, only when Mean is not requested, rows with a single
infinity: Mean = +-inf by the formula, which Welford kernels turn into NaN);
``long-rows``; ``zero-size``.

Tolerances (per output, :func:`conformance.tolerance.derive_tolerance` over all data
sets): the spread of the reference module's legitimate variants, plus a few ulps of
the precision the spec mandates for the output -- ``U`` for Mean/InvStdDev, the
coarser of ``T`` and ``U`` for Y (Y is never more precise than Normalized, which is
computed in ``U``: double X with float statistics gets float ulps) -- at the
output's natural unit: max |X| for Mean (its rounding error scales with the
summands, not with the mean), max(|Normalized*Scale| + |B|) for Y (B can cancel
Normalized*Scale), max |InvStdDev| for InvStdDev; plus the propagated rounding of
the statistics computed ``STAT_ULPS`` ulps of ``U`` off
(:func:`conformance.tolerance.statistic_rounding_errors`: ``|Scale| * E_prop`` for Y,
``dm`` for Mean, the deviation of ``1/sqrt(v' + eps)`` for InvStdDev).

Not generated (undefined or contested, see the reference module): an empty
normalized extent; Scale/B varying along a non-normalized axis; epsilon 0 with a
row whose variance can be 0.
"""

from __future__ import annotations

import numpy as np
from onnx import TensorProto

from conformance import dtypes
from conformance.case import Case, DataSet, Input, Output
from conformance.registry import case_rng, register, register_strategy
from conformance.tolerance import derive_tolerance, statistic_rounding_errors
from conformance.generators import common
from conformance.reference import layer_normalization as ref

OP = "LayerNormalization"
SINCE = 17

DTYPES = ("float16", "bfloat16", "float", "double")
PATTERNS = (("Y",), ("Y", "Mean"), ("Y", "InvStdDev"), ("Y", "Mean", "InvStdDev"))
OUTPUT_NAMES = ("Y", "Mean", "InvStdDev")
OPSETS = (17, 18, 21, 23, 26)
from conformance.ops.schedule import LATEST_OPSET  # noqa: E402  (one place for the opset constants)
EPSILONS = {"default": None, "tiny": 1e-12, "zero": 0.0, "large": 0.5}
CORE_NUMERICS = ("normal", "large-offset", "constant-rows", "tiny-variance", "normal", "special-values", "near-limits")
SCALE_KINDS = ("full", "fewer-dims", "size1-dims", "leading-ones", "scalar")

#: (offset, std) of the large-offset class by (T, U): std stays resolved in T and in the
#: statistics' precision while E[x^2] - E[x]^2 in U (float) or in T loses it.
_LARGE_OFFSET = {
    ("float16", "float"): common.LARGE_OFFSET["float16"],
    ("bfloat16", "float"): common.LARGE_OFFSET["bfloat16"],
    ("float", "float"): common.LARGE_OFFSET["float"],
    # X is cast to float32 by the mandated computation: 1e9 +- 1e-3 would not survive it
    ("double", "float"): (1.0e3, 1.0),
}
#: with bfloat16 statistics X is cast to 8 significant bits: keep std >= 16 ulp(offset)
_LARGE_OFFSET_BF16U = (256.0, 32.0)


def _elem(name: str) -> int:
    return dtypes.elem_type(name)


# ----------------------------------------------------------------------------- shapes
def _random_shape(rng, rank: int, axis: int, *, pow2: bool = False, min_n: int = 1) -> tuple[int, ...]:
    """A small shape (< ~1000 elements) with a normalized extent of at least ``min_n``
    (and a power of two with ``pow2``)."""
    ax = axis % rank
    caps = {1: 32, 2: 12, 3: 6, 4: 4, 5: 4}[rank]
    if pow2:
        choices = [2, 4, 8, 16, 32] if rank == 1 else ([1, 2, 4, 8] if rank <= 3 else [1, 2, 4])
        shape = [int(rng.choice(choices)) for _ in range(rank)]
    else:
        shape = [int(rng.integers(1, caps + 1)) for _ in range(rank)]
    n = int(np.prod(shape[ax:]))
    if n < min_n:  # grow the last dimension (stays a power of two when min_n is one)
        shape[-1] *= -(-min_n // n)
    if ax > 0 and int(np.prod(shape[:ax])) < 2:
        shape[0] = 2  # at least 2 rows, so cases mix row kinds
    while int(np.prod(shape)) > 1024:
        k = max(range(ax), key=lambda i: shape[i], default=None)
        if k is None or shape[k] == 1:
            break
        shape[k] = (shape[k] + 1) // 2
    return tuple(shape)


def _param_shape(kind: str, x_shape: tuple[int, ...], ax: int, rng) -> tuple[int, ...] | None:
    """Scale/B shape of a kind, or None when the kind does not apply to this X/axis."""
    norm = tuple(x_shape[ax:])
    if kind == "full":
        return norm
    if kind == "fewer-dims":
        if len(norm) < 2:
            return None
        return norm[int(rng.integers(1, len(norm))):]
    if kind == "size1-dims":
        big = [i for i, d in enumerate(norm) if d > 1]
        if not big:
            return None
        k = int(rng.integers(1, len(big) + 1))
        ones = set(int(i) for i in rng.choice(big, size=k, replace=False))
        return tuple(1 if i in ones else d for i, d in enumerate(norm))
    if kind == "leading-ones":
        if ax == 0:
            return None
        return (1,) * int(rng.integers(1, ax + 1)) + norm
    if kind == "scalar":
        return () if rng.integers(0, 2) else (1,)
    raise ValueError(kind)


def _pick_kind(kinds, start: int, x_shape, ax, rng) -> tuple[str, tuple[int, ...]]:
    """First applicable kind in cyclic order from ``start`` (``full`` always applies)."""
    for k in range(len(kinds)):
        kind = kinds[(start + k) % len(kinds)]
        shape = _param_shape(kind, x_shape, ax, rng)
        if shape is not None:
            return kind, shape
    raise AssertionError("unreachable")


# ----------------------------------------------------------------------------- data
def _stats_name(stash_type: int) -> str:
    return dtypes.type_name(ref.stash_elem_type(stash_type))


def _make_x(rng, numerics: str, shape, ax: int, t: int, stash_type: int, *, allow_single_inf: bool) -> np.ndarray:
    """X (float64, representable in ``t``) of a numerics class."""
    tname, uname = dtypes.type_name(t), _stats_name(stash_type)
    rows = int(np.prod(shape[:ax]))
    n = int(np.prod(shape[ax:]))
    if numerics in ("normal", "zero-size"):
        loc = rng.uniform(-1.0, 1.0)
        return common.normal(rng, shape, t, loc=loc, scale=rng.uniform(0.5, 2.0))
    if numerics == "long-rows":
        return common.normal(rng, shape, t, loc=rng.uniform(1.0, 3.0), scale=1.0)
    if numerics == "large-offset":
        offset, std = _LARGE_OFFSET[(tname, uname)] if uname == "float" else _LARGE_OFFSET_BF16U
        sign = 1.0 if rng.integers(0, 2) else -1.0
        return common.representable(sign * offset + rng.normal(0.0, std, size=shape), t)
    if numerics == "tiny-variance":
        # noise of a few ulp(1) of the coarser of T and U: variance ~ or < epsilon
        coarse = max(dtypes.eps(t), dtypes.eps(ref.stash_elem_type(stash_type)))
        base = float(rng.choice([1.0, -2.0, 0.5]))
        return common.representable(base + rng.normal(0.0, 2.0 * coarse, size=shape), t)
    if numerics == "near-limits":
        if tname == "float16":
            return common.near_limits(rng, shape, t, fraction=0.5)
        # the largest magnitude M with n * (2M)^2 well below float32's max (two-pass D can be 2M)
        m = float(np.sqrt(float(np.finfo(np.float32).max) / max(n, 1)) / 8.0)
        return common.representable(rng.uniform(-1.0, 1.0, size=shape) * m, t)
    if numerics == "constant-rows":
        x = common.normal(rng, shape, t, loc=0.0, scale=1.0).reshape(rows, n)
        consts = np.array([0.0, 1.0, -3.0, 0.5, 2.25, -0.75, 8.0])
        k = max(1, rows // 2) if rows > 1 else 1
        which = rng.choice(rows, size=k, replace=False) if rows else []
        for r_ in which:
            x[r_, :] = consts[int(rng.integers(0, len(consts)))]
        return x.reshape(shape)
    if numerics == "special-values":
        x = common.normal(rng, shape, t).reshape(rows, n)
        kinds = ["nan", "inf-pair"] + (["inf", "-inf"] if allow_single_inf else [])
        if n < 2:
            kinds = [k for k in kinds if k != "inf-pair"]
        order = [kinds[int(i)] for i in rng.permutation(len(kinds))]
        special_rows = rows if rows == 1 else max(1, rows - 1)  # keep one finite row when possible
        for r_ in range(special_rows):
            kind = order[r_ % len(order)]
            pos = rng.choice(n, size=2 if kind == "inf-pair" else 1, replace=False)
            if kind == "nan":
                x[r_, pos[0]] = np.nan
            elif kind == "inf-pair":
                x[r_, pos[0]], x[r_, pos[1]] = np.inf, -np.inf
            else:
                x[r_, pos[0]] = np.inf if kind == "inf" else -np.inf
        return x.reshape(shape)
    raise ValueError(numerics)


def _make_param(rng, shape, t: int, which: str) -> np.ndarray:
    if which == "Scale":
        mag = rng.uniform(0.5, 1.5, size=shape)
        sign = np.where(rng.random(size=shape) < 0.2, -1.0, 1.0)
        return common.representable(mag * sign, t)
    return common.normal(rng, shape, t, scale=1.0)


def _positive_variance(x: np.ndarray, ax: int, stash_type: int) -> bool:
    """Every row has a clearly nonzero variance once cast to U (for epsilon = 0)."""
    shape = x.shape
    rows, n = int(np.prod(shape[:ax])), int(np.prod(shape[ax:]))
    if n < 2:
        return False
    u = ref.stash_elem_type(stash_type)
    r = common.representable(x.reshape(rows, n), u)
    return bool(np.all(np.std(r, axis=1) > dtypes.eps(u) * np.max(np.abs(r), axis=1)))


# ----------------------------------------------------------------------------- case building
def _tags(tname: str, x_shape, axis: int, pat: str, stash_type: int, bias_shape) -> dict:
    """The tags every LayerNormalization case carries (value and error cases alike)."""
    return {
        "dtype": tname,
        "rank": len(x_shape),
        "axis": int(axis),
        "axis_sign": "neg" if axis < 0 else "pos",
        "outputs": pat,
        "stash_type": int(stash_type),
        "bias": "present" if bias_shape is not None else "absent",
    }


def _value_case(
    *,
    rng,
    tname: str,
    x_shape: tuple[int, ...],
    axis: int,
    pattern: tuple[str, ...],
    stash_type: int,
    numerics: str,
    scale_kind: str,
    scale_shape: tuple[int, ...],
    bias_kind: str | None,
    bias_shape: tuple[int, ...] | None,
    params: str,
    eps_kind: str,
    opset: int,
    n_datasets: int,
    extra_tags: dict | None = None,
    omit_axis: bool = False,
) -> Case:
    t = _elem(tname)
    u = ref.stash_elem_type(stash_type)
    ax = axis % len(x_shape)
    epsilon = EPSILONS[eps_kind]
    if omit_axis and axis != -1:
        raise ValueError(f"omit_axis needs axis -1 (the default), not {axis}")
    attrs = {} if omit_axis else {"axis": int(axis)}
    if epsilon is not None:
        attrs["epsilon"] = float(epsilon)
    if stash_type != 1 or rng.integers(0, 2):
        attrs["stash_type"] = int(stash_type)  # stash_type=1 is sometimes explicit, sometimes the default
    eps_val = 1e-5 if epsilon is None else epsilon
    single_inf = "Mean" not in pattern
    scale = _make_param(rng, scale_shape, t, "Scale")
    bias = None if bias_shape is None else _make_param(rng, bias_shape, t, "B")

    xs = []
    for _ in range(n_datasets):
        for _try in range(50):
            x = _make_x(rng, numerics, x_shape, ax, t, stash_type, allow_single_inf=single_inf)
            if epsilon != 0.0 or _positive_variance(x, ax, stash_type):
                break
        else:
            raise AssertionError("could not draw rows with positive variance for epsilon=0")
        xs.append(x)
    per_ds_params = params == "inputs" and n_datasets > 1
    scales = [scale] + [_make_param(rng, scale_shape, t, "Scale") for _ in range(n_datasets - 1)]
    biases = [bias] + [
        None if bias_shape is None else _make_param(rng, bias_shape, t, "B") for _ in range(n_datasets - 1)
    ]
    if not per_ds_params:
        scales = [scale] * n_datasets
        biases = [bias] * n_datasets

    np_t = dtypes.np_dtype(t)
    # propagated rounding of statistics STAT_ULPS ulps of U off (conformance.tolerance), per output
    prop = {o: 0.0 for o in OUTPUT_NAMES}
    expected = {o: [] for o in OUTPUT_NAMES}
    variants: dict[str, dict[str, list]] = {o: {} for o in OUTPUT_NAMES}
    datasets = []
    for x, s, b in zip(xs, scales, biases):
        xt, st = x.astype(np_t), s.astype(np_t)
        bt = None if b is None else b.astype(np_t)
        outs = ref.layer_normalization(xt, st, bt, axis=axis, epsilon=eps_val, stash_type=stash_type)
        var = ref.variant_outputs(xt, st, bt, axis=axis, epsilon=eps_val, stash_type=stash_type, t_elem=t)
        rows_n = (int(np.prod(x_shape[:ax])), int(np.prod(x_shape[ax:])))
        pr = statistic_rounding_errors(xt.astype(np.float64).reshape(rows_n), u, epsilon=ref.epsilon_value(eps_val))
        gain = np.broadcast_to(np.abs(st.astype(np.float64)), x_shape).reshape(rows_n)
        for o, v in (("Y", pr["y"] * gain), ("Mean", pr["mean"]), ("InvStdDev", pr["inv"])):
            v = v[np.isfinite(v)]
            prop[o] = max(prop[o], float(v.max()) if v.size else 0.0)
        for k, o in enumerate(OUTPUT_NAMES):
            expected[o].append(outs[k])
            for vname, vout in var.items():
                variants[o].setdefault(vname, []).append(vout[k])
        feeds = {"X": common.as_type(x, t)}
        if params == "inputs":
            feeds["Scale"] = common.as_type(s, t)
            if b is not None:
                feeds["B"] = common.as_type(b, t)
        ds_out = {}
        for k, o in enumerate(OUTPUT_NAMES):
            if o in pattern:
                ds_out[o] = dtypes.round_to(outs[k], t if o == "Y" else u)
        datasets.append(DataSet(inputs=feeds, outputs=ds_out))

    x_all = np.stack(xs)
    x_fin = x_all[np.isfinite(x_all)]
    x_scale = float(np.max(np.abs(x_fin))) if x_fin.size else 1.0
    # natural unit of Y's error: the magnitude of the stage-two terms |Normalized*Scale| + |B|
    # (|Y| alone underestimates it where B cancels Normalized*Scale)
    y_terms = []
    for y64, b in zip(expected["Y"], biases):
        b64 = np.zeros(()) if b is None else b
        y_terms.append((np.abs(y64 - b64) + np.abs(b64)).ravel())
    y_terms = np.concatenate(y_terms)
    y_terms = y_terms[np.isfinite(y_terms)]
    y_scale = float(np.max(y_terms)) if y_terms.size else 1.0
    outputs = []
    for o in OUTPUT_NAMES:
        elem = t if o == "Y" else u
        if o not in pattern:
            outputs.append(Output(o, elem, present=False))
            continue
        e = np.stack(expected[o])
        vs = {k: np.stack(v) for k, v in variants[o].items()}
        # ulps of the precision the spec mandates for this output: Y cannot be more precise
        # than Normalized, computed in U (e.g. T = double with float statistics)
        ulp_elem = elem
        if o == "Y" and dtypes.eps(u) > dtypes.eps(t):
            ulp_elem = u
        unit = {"Mean": x_scale or 1.0, "Y": y_scale or 1.0}.get(o)
        tol = derive_tolerance(e, vs, ulp_elem, scale=unit, propagated=prop[o])
        outputs.append(Output(o, elem, tolerance=tol))

    init = params == "initializers"
    inputs = [
        Input("X", t, tuple(x_shape)),
        Input("Scale", t, tuple(scale_shape), initializer=init, value=common.as_type(scale, t) if init else None),
        Input(
            "B",
            t,
            tuple(bias_shape or ()),
            initializer=init and bias_shape is not None,
            value=common.as_type(bias, t) if (init and bias is not None) else None,
            present=bias_shape is not None,
        ),
    ]
    pat = ",".join(pattern)
    tags = {
        **_tags(tname, x_shape, axis, pat, stash_type, bias_shape),
        "scale_shape": scale_kind,
        "bias_shape": bias_kind or "absent",
        "params": params,
        "epsilon": eps_kind,
        "numerics": numerics,
        "opset": opset,
        "datasets": n_datasets,
    }
    tags.update(extra_tags or {})
    label = f"{tname}/r{len(x_shape)}/axis={'default' if omit_axis else axis}/stash={stash_type}/outs={pat}/{numerics}"
    if omit_axis:
        tags["axis_attribute"] = "default"
    return Case(
        op=OP,
        since_version=SINCE,
        opset=opset,
        attributes=attrs,
        inputs=inputs,
        outputs=outputs,
        datasets=datasets,
        tags=tags,
        label=label,
    )


def _core_cases(seed: int) -> list[Case]:
    cases = []
    j = 0
    for tname in DTYPES:
        for rank in range(1, 6):
            for axis in range(-rank, rank):
                for p_idx, pattern in enumerate(PATTERNS):
                    rng = case_rng(seed, "core", tname, rank, f"axis={axis}", p_idx)
                    ax = axis % rank
                    # independent cyclic schedules (strides co-prime with the cycle lengths)
                    stash_type = 16 if (j * 3 + p_idx) % 5 == 0 else 1
                    numerics = CORE_NUMERICS[(j * 5 + rank) % len(CORE_NUMERICS)]
                    eps_kind = ("default", "tiny", "large", "default", "zero")[(j * 7 + 1) % 5]
                    if eps_kind == "zero" and numerics not in ("normal", "large-offset", "near-limits"):
                        eps_kind = "tiny"
                    has_b = (j * 5 + 2) % 3 != 0
                    params = ("inputs", "initializers")[(j // 2 + j) % 2]
                    opset = LATEST_OPSET if j % 29 == 11 else OPSETS[(j * 3) % len(OPSETS)]
                    n_ds = 2 if j % 6 == 3 else 1
                    if numerics == "near-limits" and rank >= 4:
                        numerics = "normal"
                    x_shape = _random_shape(
                        rng,
                        rank,
                        axis,
                        pow2=numerics == "constant-rows",
                        min_n=8 if eps_kind == "zero" else (2 if numerics == "special-values" else 1),
                    )
                    scale_kind, scale_shape = _pick_kind(SCALE_KINDS, j % len(SCALE_KINDS), x_shape, ax, rng)
                    bias_kind, bias_shape = None, None
                    if has_b:
                        start = (j * 2 + 1) % len(SCALE_KINDS)
                        bias_kind, bias_shape = _pick_kind(SCALE_KINDS, start, x_shape, ax, rng)
                    cases.append(
                        _value_case(
                            rng=rng,
                            tname=tname,
                            x_shape=x_shape,
                            axis=axis,
                            pattern=pattern,
                            stash_type=stash_type,
                            numerics=numerics,
                            scale_kind=scale_kind,
                            scale_shape=scale_shape,
                            bias_kind=bias_kind,
                            bias_shape=bias_shape,
                            params=params,
                            eps_kind=eps_kind,
                            opset=opset,
                            n_datasets=n_ds,
                        )
                    )
                    j += 1
    return cases


#: long-rows shapes: (x_shape, axis); normalized extent >= 4096
_LONG = (((2, 4096), -1), ((2, 64, 64), 1), ((1, 2, 16, 16, 16), 2), ((3, 4608), 1))


def _long_cases(seed: int) -> list[Case]:
    cases = []
    for i, tname in enumerate(DTYPES):
        for k, (shape, axis) in enumerate(_LONG):
            if k == 3 and tname != "float16":
                continue
            stash_type = 16 if k == 2 else 1
            pattern = PATTERNS[(i + k) % 4] if k != 0 else PATTERNS[3]
            rng = case_rng(seed, "long", tname, k)
            ax = axis % len(shape)
            numerics = "long-rows"
            cases.append(
                _value_case(
                    rng=rng,
                    tname=tname,
                    x_shape=shape,
                    axis=axis,
                    pattern=pattern,
                    stash_type=stash_type,
                    numerics=numerics,
                    scale_kind="full",
                    scale_shape=tuple(shape[ax:]),
                    bias_kind="full" if k != 1 else None,
                    bias_shape=tuple(shape[ax:]) if k != 1 else None,
                    params="initializers" if k % 2 else "inputs",
                    eps_kind="default",
                    opset=OPSETS[(i + k) % len(OPSETS)],
                    n_datasets=1,
                )
            )
    # large offset on long rows too (drift of a one-pass float32 accumulator)
    for i, tname in enumerate(DTYPES):
        shape, axis = (2, 4096), -1
        rng = case_rng(seed, "long-offset", tname)
        cases.append(
            _value_case(
                rng=rng, tname=tname, x_shape=shape, axis=axis, pattern=PATTERNS[3], stash_type=1,
                numerics="large-offset", scale_kind="full", scale_shape=(4096,), bias_kind="full",
                bias_shape=(4096,), params="inputs", eps_kind="default", opset=OPSETS[i % len(OPSETS)],
                n_datasets=1, extra_tags={"long_rows": True},
            )
        )
    return cases


def _near_limit_cases(seed: int) -> list[Case]:
    cases = []
    for i, tname in enumerate(DTYPES):
        for k, (shape, axis) in enumerate((((4, 256), -1), ((3, 8, 16), -2), ((2, 3, 4, 8), 2))):
            rng = case_rng(seed, "near", tname, k)
            ax = axis % len(shape)
            cases.append(
                _value_case(
                    rng=rng, tname=tname, x_shape=shape, axis=axis, pattern=PATTERNS[(i + k) % 4],
                    stash_type=16 if k == 2 else 1, numerics="near-limits", scale_kind="full",
                    scale_shape=tuple(shape[ax:]), bias_kind="full", bias_shape=tuple(shape[ax:]),
                    params="inputs", eps_kind=("default", "tiny", "large")[k], opset=OPSETS[(i + k) % len(OPSETS)],
                    n_datasets=2 if k == 0 else 1,
                )
            )
    return cases


def _zero_size_cases(seed: int) -> list[Case]:
    shapes = (((0, 4), -1), ((0, 3, 4), 1), ((2, 0, 3, 4), 2), ((3, 0, 5), -1), ((0, 2, 2, 2, 2), -4))
    cases = []
    for i, tname in enumerate(DTYPES):
        for k, (shape, axis) in enumerate(shapes):
            if (i + k) % 2 and k not in (0, 1):
                continue
            rng = case_rng(seed, "zero", tname, k)
            ax = axis % len(shape)
            cases.append(
                _value_case(
                    rng=rng, tname=tname, x_shape=shape, axis=axis, pattern=PATTERNS[(i + k) % 4],
                    stash_type=1, numerics="zero-size", scale_kind="full", scale_shape=tuple(shape[ax:]),
                    bias_kind="full" if k % 2 == 0 else None, bias_shape=tuple(shape[ax:]) if k % 2 == 0 else None,
                    params=("inputs", "initializers")[k % 2], eps_kind="default",
                    opset=OPSETS[(i + k) % len(OPSETS)], n_datasets=1,
                )
            )
    return cases


def _error_case(
    rng, *, tname: str, x_shape, axis: int, scale_shape, bias_shape, stash_type: int, error: str, reason: str,
    opset: int, pattern=PATTERNS[3], mean_elem: int | None = None,
) -> Case:
    t = _elem(tname)
    u = mean_elem if mean_elem is not None else (ref.STASH_TYPES.get(stash_type, TensorProto.FLOAT))
    feeds = {
        "X": common.as_type(common.normal(rng, x_shape, t), t),
        "Scale": common.as_type(common.uniform(rng, scale_shape, t, 0.5, 1.5), t),
    }
    if bias_shape is not None:
        feeds["B"] = common.as_type(common.normal(rng, bias_shape, t), t)
    attrs = {"axis": int(axis)}
    if stash_type != 1:
        attrs["stash_type"] = int(stash_type)
    pat = ",".join(pattern)
    return Case(
        op=OP,
        since_version=SINCE,
        opset=opset,
        attributes=attrs,
        inputs=[
            Input("X", t, tuple(x_shape)),
            Input("Scale", t, tuple(scale_shape)),
            Input("B", t, tuple(bias_shape or ()), present=bias_shape is not None),
        ],
        outputs=[Output(o, t if o == "Y" else u, present=o in pattern) for o in OUTPUT_NAMES],
        datasets=[DataSet(inputs=feeds)],
        tags={
            **_tags(tname, x_shape, axis, pat, stash_type, bias_shape),
            "params": "inputs",
            "opset": opset,
            "error": error,
        },
        label=f"{tname}/r{len(x_shape)}/axis={axis}/stash={stash_type}/error={error}",
        expect_error=reason,
    )


def _error_cases(seed: int) -> list[Case]:
    cases = []
    i = 0
    for rank in range(1, 6):
        shape = tuple([3, 2, 4, 2, 3][:rank])
        for axis in (rank, -rank - 1):
            tname = DTYPES[i % 4]
            cases.append(
                _error_case(
                    case_rng(seed, "err-axis", rank, f"axis={axis}"), tname=tname, x_shape=shape, axis=axis,
                    scale_shape=shape[-1:], bias_shape=shape[-1:] if i % 2 else None, stash_type=1,
                    error="axis-range", reason=f"axis {axis} outside [-{rank}, {rank})",
                    opset=OPSETS[i % len(OPSETS)], pattern=PATTERNS[i % 4],
                )
            )
            i += 1
    shape = (2, 3, 4)
    scale_bad = (
        ((5,), -1, "size mismatch: Scale [5] vs X[axis:] [4]"),
        ((3, 5), 1, "size mismatch: Scale [3, 5] vs X[axis:] [3, 4]"),
        ((2, 4), 1, "size mismatch: Scale [2, 4] vs X[axis:] [3, 4]"),
        ((1, 1, 3, 4), 1, "Scale [1, 1, 3, 4] has more dims than X [2, 3, 4]"),
    )
    for k, (s, axis, why) in enumerate(scale_bad):
        ax = axis % 3
        cases.append(
            _error_case(
                case_rng(seed, "err-scale", k), tname=DTYPES[k % 4], x_shape=shape, axis=axis, scale_shape=s,
                bias_shape=shape[ax:] if k % 2 else None, stash_type=1, error="scale-shape", reason=why,
                opset=OPSETS[k % len(OPSETS)], pattern=PATTERNS[k % 4],
            )
        )
    bias_bad = (
        ((5,), -1, "size mismatch: B [5] vs X[axis:] [4]"),
        ((2, 4), 1, "size mismatch: B [2, 4] vs X[axis:] [3, 4]"),
        ((1, 1, 3, 4), 1, "B [1, 1, 3, 4] has more dims than X [2, 3, 4]"),
    )
    for k, (b, axis, why) in enumerate(bias_bad):
        ax = axis % 3
        cases.append(
            _error_case(
                case_rng(seed, "err-bias", k), tname=DTYPES[(k + 1) % 4], x_shape=shape, axis=axis,
                scale_shape=shape[ax:], bias_shape=b, stash_type=1, error="bias-shape", reason=why,
                opset=OPSETS[(k + 2) % len(OPSETS)], pattern=PATTERNS[(k + 1) % 4],
            )
        )
    stash_bad = ((7, TensorProto.INT64), (10, TensorProto.FLOAT16), (11, TensorProto.DOUBLE), (10, TensorProto.FLOAT16))
    for k, (st, elem) in enumerate(stash_bad):
        cases.append(
            _error_case(
                case_rng(seed, "err-stash", k), tname=DTYPES[k % 4], x_shape=shape, axis=-1, scale_shape=(4,),
                bias_shape=(4,) if k % 2 else None, stash_type=st, error="stash-type",
                reason=f"stash_type {st} is not in U (float, bfloat16)", opset=OPSETS[k % len(OPSETS)],
                pattern=PATTERNS[[3, 1, 2, 3][k]], mean_elem=elem,
            )
        )
    return cases


@register(OP, version="1")
def generate(seed: int) -> list[Case]:
    """All LayerNormalization-17 cases for ``seed`` (module docstring): value cases with
    float64-oracle expectations and per-output derived tolerances, and error cases.

    Deterministic: the same seed gives byte-identical cases.
    """
    return (_core_cases(seed) + _long_cases(seed) + _near_limit_cases(seed) + _zero_size_cases(seed)
            + _error_cases(seed) + _default_axis_cases(seed))


def _default_axis_cases(seed: int) -> list[Case]:
    """Per dtype one case with ``axis`` left out (the default, -1), ranks 1-4 in turn, every
    output pattern in turn (tag ``axis_attribute=default``).  Generated last, so the cases
    above keep their ids."""
    cases = []
    for i, tname in enumerate(DTYPES):
        rng = case_rng(seed, "default-axis", tname)
        rank = 1 + i % 4
        shape = _random_shape(rng, rank, -1)
        cases.append(_value_case(
            rng=rng, tname=tname, x_shape=shape, axis=-1, pattern=PATTERNS[i % len(PATTERNS)], stash_type=1,
            numerics=("normal", "large-offset")[i % 2], scale_kind="full", scale_shape=shape[-1:],
            bias_kind="full", bias_shape=shape[-1:], params="inputs", eps_kind="default",
            opset=OPSETS[i % len(OPSETS)], n_datasets=1, omit_axis=True))
    return cases


# ----------------------------------------------------------------------------- explore mode
#: dtypes in shrink order: hypothesis shrinks ``sampled_from`` towards the first element
EXPLORE_DTYPES = ("float", "double", "float16", "bfloat16")
EXPLORE_NUMERICS = ("normal", "large-offset", "constant-rows", "tiny-variance", "special-values", "near-limits")
#: largest dim per rank in explore mode (at most ~1000 elements, like the suite's core cases)
EXPLORE_CAPS = {1: 64, 2: 16, 3: 8, 4: 5, 5: 4}


@register_strategy(OP)
def strategy():
    """Hypothesis strategy of fresh LayerNormalization-17 value cases (explore mode).

    Draws every coordinate of the suite's value cases -- dtype, rank, every dim,
    axis, output pattern, stash_type, numerics class, epsilon kind, Scale/B shape
    kind, B present, parameters as inputs or initializers, opset, number of data
    sets -- and a seed for the data, then builds the case with the same code as
    :func:`generate` (oracle, legitimate variants, derived tolerances).  Each draw
    shrinks towards its simplest value: float, rank 1, dims of 1, the first axis,
    ``Y`` only, stash_type 1, ``normal`` numerics, the default epsilon, a full
    Scale, no B, opset 17, one data set, seed 0.  The suite's constraints are kept
    (a power-of-two normalized extent for ``constant-rows``, at least 2 normalized
    elements for ``special-values`` and 8 for epsilon 0, no ``near-limits`` at rank 4-5).
    """
    from hypothesis import strategies as st

    @st.composite
    def cases(draw) -> Case:
        tname = draw(st.sampled_from(EXPLORE_DTYPES))
        rank = draw(st.integers(1, 5))
        axis = draw(st.integers(-rank, rank - 1))
        ax = axis % rank
        pattern = draw(st.sampled_from(PATTERNS))
        stash_type = draw(st.sampled_from((1, 16)))
        numerics = draw(st.sampled_from(EXPLORE_NUMERICS))
        if numerics == "near-limits" and rank >= 4:
            numerics = "normal"
        eps_kind = draw(st.sampled_from(("default", "large", "tiny", "zero")))
        if eps_kind == "zero" and numerics not in ("normal", "large-offset", "near-limits"):
            eps_kind = "tiny"
        if numerics == "constant-rows":
            dim = st.sampled_from((1, 2, 4, 8))
        else:
            dim = st.integers(1, EXPLORE_CAPS[rank])
        shape = [draw(dim) for _ in range(rank)]
        min_n = 8 if eps_kind == "zero" else (2 if numerics == "special-values" else 1)
        n = int(np.prod(shape[ax:]))
        if n < min_n:  # grow the last dim (a power of two stays one: min_n and n are powers of two)
            shape[-1] *= -(-min_n // n)
        x_shape = tuple(shape)
        scale_kind = draw(st.sampled_from(SCALE_KINDS))
        has_b = draw(st.booleans())
        bias_kind = draw(st.sampled_from(SCALE_KINDS))  # drawn either way: a fixed-length choice sequence
        if not has_b:
            bias_kind = None
        params = draw(st.sampled_from(("inputs", "initializers")))
        opset = draw(st.sampled_from(OPSETS + (LATEST_OPSET,)))
        n_ds = draw(st.integers(1, 2))
        seed = draw(st.integers(0, 2**32 - 1))
        rng = np.random.default_rng(seed)
        scale_kind, scale_shape = _pick_kind(SCALE_KINDS, SCALE_KINDS.index(scale_kind), x_shape, ax, rng)
        bias_shape = None
        if bias_kind is not None:
            bias_kind, bias_shape = _pick_kind(SCALE_KINDS, SCALE_KINDS.index(bias_kind), x_shape, ax, rng)
        return _value_case(
            rng=rng, tname=tname, x_shape=x_shape, axis=axis, pattern=pattern, stash_type=stash_type,
            numerics=numerics, scale_kind=scale_kind, scale_shape=scale_shape, bias_kind=bias_kind,
            bias_shape=bias_shape, params=params, eps_kind=eps_kind, opset=opset, n_datasets=n_ds,
            extra_tags={"explore_seed": seed},
        )

    return cases()
