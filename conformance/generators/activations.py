"""Case generators for the ai.onnx element-wise activations (one generic loop, one table).

Operators: every entry of :data:`conformance.reference.activations.ACTIVATIONS` (Relu, LeakyRelu,
PRelu, Elu, Selu, Celu, Gelu, Sigmoid, HardSigmoid, HardSwish, Tanh, Softplus,
Softsign, Mish, ThresholdedRelu, Swish), at every version ``onnx.defs`` has, for every
type of the version's constraint T.  Oracle, variants and tolerance policy:
:mod:`conformance.reference.activations`.

Per (op, version, type) the cases are (tag ``numerics``):

* ``normal``: values in [domain_lo, -domain_lo] (a random shape of rank 0-4);
* ``wide``: both signs, magnitudes log-uniform from far below 1 to half the type's max;
* ``special``: NaN/+-inf (those with a defined result), +-0, subnormals, the smallest
  normal, +-1, +-max;
* ``near-overflow``: around +-ln(max) of the type and of float32 (where ``exp``
  overflows in the evaluation precision: naive ``log(1 + exp(x))`` fails there);
* ``worst-points`` (float and double, latest version, ops with
  :data:`conformance.reference.activations.WORST_POINTS`): 33 points within 0.2% of each
  x where onnxruntime 1.32's float32 error peaks (Tanh near +-8.48 and +-8.55, ...);
* integer types (Relu-14, PRelu-9/16): ``int`` (extremes included, PRelu kept small).

Function-body opsets: where onnx defines the version's function body at an opset that the
schedule above does not use (Softplus-1, Elu-6, Relu-14... at 18), ``special`` and
``near-overflow`` cases (``int`` for integer types) at that opset too (tag ``body_opset``):
a runtime without a kernel may expand the body there (:func:`body_opsets`).

Version 1's legacy ``consumed_inputs`` (Relu-1, Elu-1, ...): one case per float type with it
given (tag ``legacy``); it changes no value.

Attributes (tag ``params``): ``default`` (omitted), ``explicit-default`` and each
non-default value of the table, assigned cyclically over the float cases.  Opsets (tag
``opset``): cycling over the since_version, the last opset before the next version
(capped at 26 for onnxruntime), and 28 for every 7th case of the latest version.  PRelu: slope shapes
``same``, ``trailing``, ``size1-dims``, ``scalar`` (versions >= 7; ``same``/``one`` before),
as graph input or initializer; and for versions >= 7 a sweep of float cases with X (2, 3, 4, 5)
and the slopes of :data:`SLOPE_SWEEP` (``channel`` [C, 1, 1] as exported models carry it,
``channel-keepdims`` [1, C, 1, 1], ``fewer-dims-size1`` [H, 1], ``trailing-size1`` [1, H, W]).  Error cases: Gelu with an unknown ``approximate``, PRelu
with a slope that does not broadcast unidirectionally (version >= 7).
"""

from __future__ import annotations

import math

import numpy as np
from onnx import TensorProto, helper

from conformance import dtypes
from conformance.case import Case, DataSet, Input, Output
from conformance.registry import case_rng, register, register_strategy
from conformance.generators import common
from conformance.reference import activations as ref

from conformance.ops.schedule import LATEST_OPSET, RUNTIME_OPSET as ORT_MAX_OPSET  # noqa: E402
FLOAT_NAMES = ("float16", "bfloat16", "float", "double")
NUMERICS = ("normal", "wide", "special", "near-overflow")


def elem_of(tname: str) -> int:
    """ONNX element type of a spec type name (including the integer types dtypes lacks)."""
    return getattr(TensorProto, {"float": "FLOAT", "double": "DOUBLE"}.get(tname, tname.upper()))


def np_of(elem: int) -> np.dtype:
    return np.dtype(helper.tensor_dtype_to_np_dtype(elem)) if elem not in dtypes.FLOAT_TYPES else dtypes.np_dtype(elem)


def _last_opset(since: int, all_versions: list[int]) -> int:
    """The last opset in which version ``since`` is in force (the next version's opset - 1, or
    the latest opset)."""
    later = [v for v in all_versions if v > since]
    return (later[0] - 1) if later else LATEST_OPSET


def _opsets(op: str, since: int, all_versions: list[int]) -> list[int]:
    last = _last_opset(since, all_versions)
    out = [since]
    mid = min(last, ORT_MAX_OPSET)
    if mid > since:
        out.append(mid)
    if last == LATEST_OPSET and since < LATEST_OPSET:  # the newest version: a few cases at the latest opset
        out.append(LATEST_OPSET)
    return out


def _shape(rng) -> tuple[int, ...]:
    rank = int(rng.integers(0, 5))
    caps = {0: 1, 1: 24, 2: 6, 3: 4, 4: 3}[rank]
    return tuple(int(rng.integers(1, caps + 1)) for _ in range(rank))


def _specials(op: str, elem: int) -> list[float]:
    fi = dtypes.finfo(elem)
    sub, tiny, fmax = float(fi.smallest_subnormal), float(fi.tiny), float(fi.max)
    vals = [0.0, -0.0, sub, -sub, 4 * sub, -4 * sub, tiny / 2, -tiny / 2, tiny, -tiny, 1.0, -1.0, fmax, -fmax,
            0.5 * fmax, -0.5 * fmax]
    spec = ref.ACTIVATIONS[op]
    vals += [{"nan": math.nan, "inf": math.inf, "-inf": -math.inf}[s] for s in spec.specials]
    if op in ("Gelu", "Mish", "Swish", "HardSwish"):
        pass  # -fmax: x * (something that underflows to 0) is fine, finite
    return vals


def _data(rng, op: str, numerics: str, elem: int, shape) -> np.ndarray:
    spec = ref.ACTIVATIONS[op]
    n = int(np.prod(shape))
    fmax = float(dtypes.finfo(elem).max)
    if numerics == "normal":
        x = rng.uniform(spec.domain_lo, -spec.domain_lo, size=n)
    elif numerics == "wide":
        lo = math.log10(float(dtypes.finfo(elem).tiny))
        x = rng.choice([-1.0, 1.0], size=n) * 10.0 ** rng.uniform(lo, math.log10(fmax / 2), size=n)
    elif numerics == "special":
        vals = _specials(op, elem)
        n = max(n, len(vals))
        x = np.concatenate([vals, rng.uniform(-4, 4, size=n - len(vals))])
        x = x[rng.permutation(n)]
        shape = (n,)
    elif numerics == "worst-points":  # around onnxruntime's measured error peaks (reference WORST_POINTS)
        pts = np.asarray(ref.WORST_POINTS[op], dtype=np.float64)
        x = (pts[:, None] * (1.0 + np.linspace(-2e-3, 2e-3, 33))[None, :]).ravel()
        shape = (x.size,)
    elif numerics == "near-overflow":
        ths = {math.log(fmax), math.log(float(np.finfo(np.float32).max))}
        pts = [s * t * f for t in sorted(ths) for s in (1.0, -1.0) for f in (0.95, 0.99, 1.0, 1.01, 1.05, 1.2)]
        pts = [p for p in pts if abs(p) < fmax]
        x = np.array(pts)
        shape = (len(pts),)
    else:
        raise ValueError(numerics)
    return common.representable(np.asarray(x, dtype=np.float64).reshape(shape), elem)


def _int_data(rng, op: str, elem: int, shape) -> np.ndarray:
    dt = np_of(elem)
    info = np.iinfo(dt)
    n = int(np.prod(shape))
    lo, hi = (max(info.min, -1000), min(info.max, 1000)) if op == "PRelu" else (info.min, info.max)
    x = rng.integers(lo, hi, size=n, endpoint=True, dtype=np.int64 if dt.kind == "i" else np.uint64).astype(dt)
    ext = np.array([0, 1, lo, hi], dtype=dt) if info.min < 0 else np.array([0, 1, hi], dtype=dt)
    x = np.concatenate([ext, x])[: max(n, len(ext))]
    return x.reshape(shape if x.size == n else (x.size,))


def _slope_shape(rng, version: int, x_shape, k: int) -> tuple[str, tuple[int, ...]]:
    kinds = ("same", "trailing", "size1-dims", "scalar") if version >= 7 else ("same", "one")
    kind = kinds[k % len(kinds)]
    r = len(x_shape)
    if kind == "same" or r == 0:  # rank-0 X: a (1,) slope would make Y rank 1
        return "same", tuple(x_shape)
    if kind == "trailing":
        return kind, tuple(x_shape[int(rng.integers(1, r + 1)) if r > 1 else 0:])
    if kind == "size1-dims":
        return kind, tuple(1 if rng.integers(0, 2) else d for d in x_shape)
    if kind == "scalar":
        return kind, () if rng.integers(0, 2) else (1,)
    return "one", (1,)


def _attr_schedule(op: str) -> list[tuple[str, dict]]:
    """(params tag, node attributes) choices for an op, in cyclic order."""
    spec = ref.ACTIVATIONS[op]
    if not spec.attrs:
        return [("default", {})]
    out = [("default", {}), ("explicit-default", {k: d for k, (d, _) in spec.attrs.items()})]
    n_alt = max(len(alts) for _, alts in spec.attrs.values())
    for i in range(n_alt):
        out.append(("non-default", {k: alts[i % len(alts)] for k, (_, alts) in spec.attrs.items()}))
    return out


def _io(op: str, version: int):
    return ref.input_name(op, version), ref.output_name(op, version)


def _value_case(op, version, opset, tname, numerics, params_tag, attributes, rng, slope_k=0, params="inputs",
                x_shape=None, slope_shape=None, extra_tags=None):
    """One value case.  The suite passes only ``rng`` for the random coordinates (the shape,
    then the data, then PRelu's slope shape from kind ``slope_k``, then its values); explore
    mode passes the drawn ``x_shape`` and PRelu's ``slope_shape`` (a function of X's final
    shape returning ``(kind, shape)``) and ``rng`` draws only the values.  ``extra_tags`` are
    added to the case's tags."""
    elem = elem_of(tname)
    xin, yout = _io(op, version)
    if x_shape is None:
        x_shape = _shape(rng)
    is_float = elem in dtypes.FLOAT_TYPES
    if is_float:
        x = _data(rng, op, numerics, elem, x_shape)
    else:
        x = _int_data(rng, op, elem, x_shape)
    x_shape = x.shape
    attrs = ref.attr_values(op, version, attributes)
    inputs = [Input(xin, elem, tuple(x_shape))]
    feeds = {xin: common.as_type(x, elem) if is_float else x}
    slope = None
    tags = {}
    if op == "PRelu":
        if slope_shape is None:
            kind, s_shape = _slope_shape(rng, version, x_shape, slope_k)
        else:  # explore: a function of X's final shape ("special"/"near-overflow" make X 1-D)
            kind, s_shape = slope_shape(tuple(x_shape))
        if is_float:
            mag = rng.uniform(0.05, 2.0, size=s_shape) * np.where(rng.random(size=s_shape) < 0.3, -1.0, 1.0)
            slope = common.representable(mag, elem)
            s_feed = common.as_type(slope, elem)
        else:
            lo = -3 if np_of(elem).kind == "i" else 0
            s_feed = rng.integers(lo, 4, size=s_shape).astype(np_of(elem))
            slope = s_feed
        init = params == "initializers" and is_float
        inputs.append(Input("slope", elem, tuple(s_shape), initializer=init, value=s_feed if init else None))
        if not init:
            feeds["slope"] = s_feed
        tags.update(slope_shape=kind, slope_params=params if is_float else "inputs")
    y64 = ref.oracle(op, x, attrs, slope)
    if is_float:
        with np.errstate(over="ignore"):  # results beyond the type's max round to inf (expected)
            expected = dtypes.round_to(y64, elem)
            var = ref.variants(op, x, attrs, elem, slope)
        tol = ref.tolerance(op, expected.astype(np.float64), var, elem, x=x, attrs=attrs)
    else:
        expected = np.asarray(y64, dtype=np_of(elem))
        tol = ref.tolerance(op, y64, {}, elem)
    tags.update(dtype=tname, rank=len(x_shape), numerics=numerics, opset=opset, params=params_tag, outputs=yout)
    if op == "Gelu":
        tags["approximate"] = attrs["approximate"]
    tags.update(extra_tags or {})
    label = f"{tname}/{numerics}/{params_tag}/opset{opset}"
    if op == "Gelu":
        label += f"/approx={attrs['approximate']}"
    return Case(op=op, since_version=version, opset=opset, attributes=dict(attributes), inputs=inputs,
                outputs=[Output(yout, elem, tolerance=tol)], datasets=[DataSet({**feeds}, {yout: expected})],
                tags=tags, label=label)


def _error_cases(op: str, version: int, opset: int) -> list[Case]:
    xin, yout = _io(op, version)
    out = []
    x = np.linspace(-2, 2, 6, dtype=np.float32).reshape(2, 3)
    if op == "Gelu":
        out.append(Case(op=op, since_version=version, opset=opset, attributes={"approximate": "erf"},
                        inputs=[Input(xin, TensorProto.FLOAT, (2, 3))], outputs=[Output(yout, TensorProto.FLOAT)],
                        datasets=[DataSet({xin: x})], expect_error="approximate must be 'none' or 'tanh'",
                        tags={"dtype": "float", "rank": 2, "opset": opset, "error": "approximate"},
                        label="error/approximate=erf"))
    if op == "PRelu" and version >= 7:
        s = np.ones((2,), np.float32)
        out.append(Case(op=op, since_version=version, opset=opset, attributes={},
                        inputs=[Input(xin, TensorProto.FLOAT, (2, 3)), Input("slope", TensorProto.FLOAT, (2,))],
                        outputs=[Output(yout, TensorProto.FLOAT)], datasets=[DataSet({xin: x, "slope": s})],
                        expect_error="slope (2,) does not broadcast unidirectionally to X (2, 3)",
                        tags={"dtype": "float", "rank": 2, "opset": opset, "error": "slope-shape"},
                        label="error/slope-not-broadcastable"))
    return out


def generate_op(op: str, seed: int) -> list[Case]:
    """All cases of ``op`` (module docstring), deterministic in ``seed``."""
    vers = ref.versions(op)
    all_v = list(vers)
    sched = _attr_schedule(op)
    cases = []
    j = 0
    for version, types in vers.items():
        opsets = _opsets(op, version, all_v)
        for tname in types:
            numerics = NUMERICS if tname in FLOAT_NAMES else ("int", "int")
            for k, num in enumerate(numerics):
                reps = 2 if (op == "Gelu" and tname in FLOAT_NAMES) else 1
                for rep in range(reps):
                    params_tag, attributes = sched[j % len(sched)]
                    if op == "Gelu":
                        params_tag, attributes = [("default", {}), ("explicit-default", {"approximate": "none"}),
                                                  ("non-default", {"approximate": "tanh"})][(j + rep) % 3]
                        if rep == 1 and attributes.get("approximate") != "tanh":
                            params_tag, attributes = "non-default", {"approximate": "tanh"}
                    # opset 28 (beyond onnxruntime) for a few cases only; since_version and the
                    # last opset of the version's range (<= 26) for the others
                    if params_tag == "explicit-default" and op != "Gelu":  # this version's defaults (Selu-1)
                        dflt = ref.attr_values(op, version, {})
                        attributes = {k: dflt[k] for k in attributes}
                    opset = opsets[-1] if (len(opsets) > 2 and j % 7 == 3) else opsets[j % min(len(opsets), 2)]
                    rng = case_rng(seed, op, version, tname, num, k, rep)
                    cases.append(_value_case(op, version, opset, tname, num, params_tag, attributes, rng,
                                             slope_k=j, params=("inputs", "initializers")[(j // 3) % 2]))
                    j += 1
        cases.extend(_error_cases(op, version, opsets[-1] if opsets[-1] <= ORT_MAX_OPSET else opsets[0]))
        if op == "PRelu" and version >= 7:
            cases.extend(_prelu_slope_sweep(version, types, opsets, version == all_v[-1], seed))
        if op in ref.WORST_POINTS and version == all_v[-1]:  # float and double at the worst points
            for k, tname in enumerate(t for t in ("float", "double") if t in types):
                for approx in (("none", "tanh") if op == "Gelu" else (None,)):
                    attributes = {} if approx is None else {"approximate": approx}
                    rng = case_rng(seed, op, version, tname, "worst-points", approx or "")
                    cases.append(_value_case(op, version, opsets[0], tname, "worst-points",
                                             "non-default" if approx == "tanh" else "default", attributes, rng))
        cases.extend(_body_opset_cases(op, version, types, opsets, all_v, seed))
        cases.extend(_legacy_attribute_cases(op, version, types, seed))
    return cases


#: PRelu slope shapes for X of shape (N, C, H, W) = :data:`SWEEP_X`, beyond the cyclic kinds: the
#: per-channel forms exported models use ([C, 1, 1]; [1, C, 1, 1]) and fewer dims with size-1 dims
SWEEP_X = (2, 3, 4, 5)
SLOPE_SWEEP = {"channel": (3, 1, 1), "channel-keepdims": (1, 3, 1, 1), "fewer-dims-size1": (4, 1),
               "trailing-size1": (1, 4, 5)}


def _prelu_slope_sweep(version, types, opsets, latest, seed) -> list[Case]:
    """PRelu (version >= 7) float cases with X (2, 3, 4, 5) and each slope of :data:`SLOPE_SWEEP`
    (tag ``slope_shape``): every float type for the latest version, float for the older ones.
    A kernel that flattens the slope and cycles it over X fails them."""
    out = []
    for tname in [t for t in types if t in FLOAT_NAMES and (latest or t == "float")]:
        for k, (kind, shape) in enumerate(SLOPE_SWEEP.items()):
            rng = case_rng(seed, "PRelu", version, tname, "slope-sweep", kind)
            out.append(_value_case("PRelu", version, opsets[k % min(len(opsets), 2)], tname, "normal", "default", {},
                                   rng, params=("inputs", "initializers")[k % 2], x_shape=SWEEP_X,
                                   slope_shape=lambda xs, kind=kind, shape=shape: (kind, shape)))
    return out


def _legacy_attribute_cases(op, version, types, seed) -> list[Case]:
    """Version 1's legacy ``consumed_inputs`` (an in-place hint that changes no value): per float
    type one ``normal`` case with the attribute given, ``[0]`` or ``[1]`` per input in turn
    (tag ``legacy=consumed_inputs``)."""
    import onnx.defs

    if "consumed_inputs" not in onnx.defs.get_schema(op, version).attributes:
        return []
    n_inputs = 2 if op == "PRelu" else 1
    out = []
    for k, tname in enumerate(t for t in types if t in FLOAT_NAMES):
        rng = case_rng(seed, op, version, tname, "normal", "consumed_inputs")
        c = _value_case(op, version, version, tname, "normal", "default", {"consumed_inputs": [k % 2] * n_inputs}, rng)
        c.tags["legacy"] = "consumed_inputs"
        c.label += f"/consumed_inputs={[k % 2] * n_inputs}"
        out.append(c)
    return out


def body_opsets(op: str, version: int, all_versions: list[int]) -> list[int]:
    """The opsets at which onnx defines a function body for ``op``-``version``
    (``function_opset_versions`` and ``context_dependent_function_opset_versions`` of the
    schema) that fall in the version's opset range.  A runtime without a kernel may expand
    the body there (onnxruntime 1.31.1 does for Softplus-1 at opset 18, where
    ``Log(Add(Exp(X), 1))`` overflows for large X), so those opsets get cases of their own."""
    import onnx.defs

    s = onnx.defs.get_schema(op, version)
    last = _last_opset(version, all_versions)
    found = set(s.function_opset_versions) | set(s.context_dependent_function_opset_versions)
    return sorted(b for b in found if version <= b <= last)


def _body_opset_cases(op, version, types, opsets, all_versions, seed) -> list[Case]:
    """Per type, ``special`` and ``near-overflow`` cases (``int`` for integer types) with
    default attributes at each :func:`body_opsets` opset the schedule does not already use
    (tag ``body_opset``)."""
    out = []
    for b in body_opsets(op, version, all_versions):
        if b in opsets:
            continue
        for tname in types:
            for num in (("special", "near-overflow") if tname in FLOAT_NAMES else ("int",)):
                rng = case_rng(seed, op, version, tname, num, "body-opset", b)
                c = _value_case(op, version, b, tname, num, "default", {}, rng)
                c.tags["body_opset"] = b
                out.append(c)
    return out


def _make(op: str):
    def generate(seed: int) -> list[Case]:
        return generate_op(op, seed)

    generate.__qualname__ = f"generate_{op}"
    generate.__doc__ = f"Cases of {op} at every version (see module docstring)."
    return generate


for _op in ref.ACTIVATIONS:
    if ref.versions(_op):
        register(_op, version="1")(_make(_op))


# ----------------------------------------------------------------------------- explore mode
#: Type order of explore draws (shrinking goes to the first one the version allows).
EXPLORE_TYPES = ("float", "double", "float16", "bfloat16", "int32", "int64", "int8", "int16", "uint32", "uint64")
#: Largest dim per rank of explore shapes (the suite's :func:`_shape` caps).
EXPLORE_CAPS = {0: 1, 1: 24, 2: 6, 3: 4, 4: 3}
#: How an attribute is set, simplest first: omitted, the version's default written out, a
#: value of the table's non-default list, a value drawn from :data:`EXPLORE_ATTR_RANGES`.
ATTR_KINDS = ("omitted", "explicit-default", "table", "drawn")
#: (op, float attribute) -> closed range explore draws a float32 value from.  The spec
#: restricts none of these except Celu's alpha (``x / alpha``: nonzero; kept > 0, where
#: the usual ``where(x > 0, x, alpha*expm1(x/alpha))`` form is the spec's max/min formula).
EXPLORE_ATTR_RANGES = {
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
#: PRelu slope shape kinds per version range, simplest first (as in :func:`_slope_shape`).
SLOPE_KINDS = {True: ("same", "trailing", "size1-dims", "scalar"), False: ("same", "one")}


def _explore_slope(version: int, kind: str, start: int, mask: tuple[bool, ...], scalar_shape: tuple):
    """``x_shape -> (kind, slope shape)`` from drawn choices (the shapes :func:`_slope_shape` makes)."""

    def shape_of(x_shape):
        r = len(x_shape)
        if kind == "same" or r == 0:  # rank-0 X: a (1,) slope would make Y rank 1
            return "same", tuple(x_shape)
        if kind == "trailing":
            return kind, tuple(x_shape[min(start, r) if r > 1 else 0:])
        if kind == "size1-dims":
            return kind, tuple(1 if m else d for m, d in zip(mask, x_shape))
        if kind == "scalar":
            return kind, scalar_shape
        return "one", (1,)

    return shape_of


def strategy(op: str):
    """Hypothesis strategy of fresh value cases of activation ``op`` (explore mode).

    Draws, in this order: the version (``onnx.defs``' since_versions of ``op``), a type of
    that version's constraint T (float, double, float16, bfloat16, then the integer types),
    the opset (any in ``[since_version, next since_version - 1]``, up to 28 for the latest),
    the numerics class (``normal``, ``wide``, ``special``, ``near-overflow``; ``int`` for
    integer types, whatever was drawn), each attribute's setting (:data:`ATTR_KINDS`:
    omitted, the version's default written out, a table value, or a float32 drawn from
    :data:`EXPLORE_ATTR_RANGES`; Gelu's ``approximate`` from ``none``/``tanh``), the rank
    (0-4) and every dim (:data:`EXPLORE_CAPS`), PRelu's slope shape (kind, trailing start,
    size-1 mask, ``()`` or ``(1,)``) and whether it is a graph input or an initializer
    (float types), and a data seed.  Every coordinate is drawn whatever the others are
    (a fixed-length choice sequence shrinks coordinate by coordinate); inapplicable ones are
    ignored.  The case is built by :func:`_value_case`, the suite's code (oracle, legitimate
    variants, derived tolerance).

    Shrinking goes to the first version, float (or the version's first type), the version's
    since_version as opset, ``normal`` numerics, attributes omitted, rank 0, dims of 1, a
    slope of X's shape given as an input, seed 0.  ``special`` and ``near-overflow`` make X
    1-D, as in the suite.  A draw whose legitimate variant overflows where the float64
    oracle does not (a result at the edge of the type's range) is rejected: it is
    ill-posed at the mandated precision.
    """
    from hypothesis import reject
    from hypothesis import strategies as st

    spec = ref.ACTIVATIONS[op]
    vers = ref.versions(op)
    all_v = list(vers)

    @st.composite
    def cases(draw) -> Case:
        version = draw(st.sampled_from(all_v))
        types = [t for t in EXPLORE_TYPES if t in vers[version]]
        tname = draw(st.sampled_from(types))
        later = [v for v in all_v if v > version]
        opset = draw(st.integers(version, later[0] - 1 if later else LATEST_OPSET))
        is_float = tname in FLOAT_NAMES
        numerics = draw(st.sampled_from(NUMERICS))
        if not is_float:
            numerics = "int"
        defaults = ref.attr_values(op, version, {})
        attributes, kinds = {}, []
        for name, (_, alts) in spec.attrs.items():
            kind = draw(st.sampled_from(ATTR_KINDS))
            table = draw(st.sampled_from(alts))
            rng_ = EXPLORE_ATTR_RANGES.get((op, name))
            drawn = draw(st.floats(*rng_, width=32)) if rng_ else table
            kinds.append(kind)
            if kind != "omitted":
                attributes[name] = {"explicit-default": defaults[name], "table": table, "drawn": drawn}[kind]
        if not attributes:
            params_tag = "default"
        elif all(attributes[k] == defaults[k] for k in attributes):
            params_tag = "explicit-default"
        else:
            params_tag = "non-default"
        rank = draw(st.integers(0, 4))
        x_shape = tuple(draw(st.integers(1, EXPLORE_CAPS[rank])) for _ in range(rank))
        slope_kind = draw(st.sampled_from(SLOPE_KINDS[version >= 7]))
        start = draw(st.integers(1, 4))
        mask = tuple(draw(st.booleans()) for _ in range(4))
        scalar_shape = draw(st.sampled_from(((), (1,))))
        params = draw(st.sampled_from(("inputs", "initializers")))
        seed = draw(st.integers(0, 2**32 - 1))
        extra = {"explore_seed": seed, "attr_kinds": ",".join(kinds)} if kinds else {"explore_seed": seed}
        try:
            return _value_case(op, version, opset, tname, numerics, params_tag, attributes,
                               np.random.default_rng(seed), params=params, x_shape=x_shape,
                               slope_shape=_explore_slope(version, slope_kind, start, mask, scalar_shape),
                               extra_tags=extra)
        except ValueError as exc:
            if "is not finite where the expectation is" not in str(exc):
                raise
            reject()

    return cases()


def _make_strategy(op: str):
    def build():
        return strategy(op)

    build.__qualname__ = f"strategy_{op}"
    build.__doc__ = f"Explore-mode strategy of {op} (see :func:`strategy`)."
    return build


for _op in ref.ACTIVATIONS:
    if ref.versions(_op):
        register_strategy(_op)(_make_strategy(_op))
