"""Tests of the element-wise activation oracles, generators and tolerances.

* the float64 oracle against plain-Python ``math`` formulas, element by element;
* hand-derived values (special values, defaults per version, clipping);
* the oracle against ``onnx.reference`` where that one is right, and one test per known
  disagreement asserting it still exists;
* determinism and coverage (every version x every type of its constraint, case counts at
  least the retired generator's, every PRelu slope shape in float cases);
* independent numpy kernels through ``KernelBackend``: legitimate ones (float32
  evaluation, naive ``exp(x)-1`` / ``1+erf`` / thresholded ``log(1+exp)`` forms,
  attributes cast to T) pass with no fail/error; each deliberately wrong one is caught.
"""

from __future__ import annotations

import math
from collections import Counter

import numpy as np
import onnx
import pytest

from conformance import registry
from conformance.backends import resolve_backend
from conformance.backends.kernel import KernelBackend
from conformance.ops import engine, schedule
from conformance.ops.entry import Ctx
from conformance.opspec import op_spec
from conformance.reference import activations as ref
from conformance.runner import run_cases

pytestmark = pytest.mark.filterwarnings("ignore::RuntimeWarning")
registry.available_ops()  # load every family in registry order (the entries replace the retired generator)
OPS = list(ref.ACTIVATIONS)
FLOATS = ("float16", "bfloat16", "float", "double")
#: Cases per operator of the retired generator (conformance/generators/activations.py, seed 0).
OLD_COUNTS = {"Relu": 79, "LeakyRelu": 43, "PRelu": 110, "Elu": 49, "Selu": 51, "Celu": 20, "Gelu": 37, "Sigmoid": 45,
              "HardSigmoid": 49, "HardSwish": 28, "Tanh": 45, "Softplus": 36, "Softsign": 36, "Mish": 30,
              "ThresholdedRelu": 34, "Swish": 16}


def _approximate(c) -> str:
    """Gelu's ``approximate`` as the node computes it (the default ``none`` when omitted)."""
    return c.attributes.get("approximate", "none")


def _slope_kind(c) -> str:
    """PRelu's slope kind: the first part of the shape pattern's name (``channel``, ``same``...)."""
    return c.tags["shape"].split("/")[0]


def _generate(seed: int):
    return registry.generate(OPS, seed=seed)


# ============================================================================ oracle
def _sig(v):
    return 1.0 / (1.0 + math.exp(-v)) if v >= 0 else math.exp(v) / (1.0 + math.exp(v))


def _softplus(v):
    return v + math.log1p(math.exp(-v)) if v > 0 else math.log1p(math.exp(v))


MATH = {
    "Relu": lambda v, a: v if v > 0 else 0.0,
    "LeakyRelu": lambda v, a: v if v >= 0 else a["alpha"] * v,
    "Elu": lambda v, a: v if v >= 0 else a["alpha"] * math.expm1(v),
    "Selu": lambda v, a: a["gamma"] * v if v > 0 else a["gamma"] * a["alpha"] * math.expm1(v),
    "Celu": lambda v, a: max(0.0, v) + min(0.0, a["alpha"] * math.expm1(v / a["alpha"])),
    "Gelu": lambda v, a: (0.5 * v * math.erfc(-v / math.sqrt(2.0)) if a["approximate"] == "none" else
                          v * _sig(2.0 * math.sqrt(2.0 / math.pi) * (v + 0.044715 * v ** 3))),  # 1+tanh(u)=2sig(2u)
    "Sigmoid": lambda v, a: _sig(v),
    "HardSigmoid": lambda v, a: max(0.0, min(1.0, a["alpha"] * v + a["beta"])),
    "HardSwish": lambda v, a: v * max(0.0, min(1.0, v / 6.0 + 0.5)),
    "Tanh": lambda v, a: math.tanh(v),
    "Softplus": lambda v, a: _softplus(v),
    "Softsign": lambda v, a: v / (1.0 + abs(v)),
    "Mish": lambda v, a: v * math.tanh(_softplus(v)),
    "ThresholdedRelu": lambda v, a: v if v > a["alpha"] else 0.0,
    "Swish": lambda v, a: v * _sig(a["alpha"] * v),
}


@pytest.mark.parametrize("op", sorted(MATH))
def test_oracle_matches_math_formulas(op):
    xs = [-40.0, -7.5, -3.0, -1.0, -0.3, -1e-5, 0.0, 1e-5, 0.25, 1.0, 2.9, 6.0, 35.0]
    states = [{}] + ref.attribute_states(op)
    assert len(states) > 1 or not onnx.defs.get_schema(op, max(ref.versions(op))).attributes
    for attributes in states:
        a = ref.attr_values(op, max(ref.versions(op)), attributes)
        got = ref.oracle(op, np.array(xs), a)
        for v, g in zip(xs, got):
            want = MATH[op](v, a)
            assert math.isclose(g, want, rel_tol=1e-13, abs_tol=1e-300), (op, attributes, v, g, want)


def test_prelu_oracle_broadcasts_unidirectionally():
    x = np.arange(-6.0, 6.0).reshape(2, 3, 2)
    s = np.array([[0.5], [2.0], [-1.0]])  # (3, 1) -> broadcast to (2, 3, 2)
    y = ref.oracle("PRelu", x, {}, s)
    for idx in np.ndindex(x.shape):
        v = x[idx]
        assert y[idx] == (v if v >= 0 else s[idx[1], 0] * v)


def test_oracle_hand_derived_values():
    nan, inf = math.nan, math.inf
    r = ref.oracle("Relu", np.array([nan, -inf, inf, -0.0, -3.0]), {})
    assert np.isnan(r[0]) and r[1] == 0 and r[2] == inf and r[4] == 0
    assert ref.oracle("Softplus", np.array([1000.0]), {})[0] == 1000.0  # no overflow
    assert ref.oracle("Softplus", np.array([-inf]), {})[0] == 0.0
    hs = ref.oracle("HardSigmoid", np.array([-100.0, 100.0, 0.0]), ref.attr_values("HardSigmoid", 22, {}))
    assert list(hs) == [0.0, 1.0, 0.5]
    assert ref.oracle("Elu", np.array([-inf]), {"alpha": 2.0})[0] == -2.0
    # Selu-1 has its own (shorter) defaults
    assert ref.attr_values("Selu", 1, {}) == {"alpha": ref.f32(1.6732), "gamma": ref.f32(1.0507)}
    assert ref.attr_values("Selu", 6, {})["alpha"] == ref.f32(1.67326319217681884765625)
    assert ref.attr_values("LeakyRelu", 16, {})["alpha"] == float(np.float32(0.01))
    # integers are exact and stay integers
    xi = np.array([np.iinfo(np.int64).min, -1, 0, np.iinfo(np.int64).max], np.int64)
    assert list(ref.oracle("Relu", xi, {})) == [0, 0, 0, np.iinfo(np.int64).max]
    # ThresholdedRelu: strictly greater
    assert list(ref.oracle("ThresholdedRelu", np.array([1.0, 1.5]), {"alpha": 1.0})) == [0.0, 1.5]


#: Defaults as the operator documents state them (not read from the schema).
DOC_DEFAULTS = {"LeakyRelu": {"alpha": 0.01}, "Elu": {"alpha": 1.0}, "Celu": {"alpha": 1.0},
                "Selu": {"alpha": 1.67326319217681884765625, "gamma": 1.05070102214813232421875},
                "Gelu": {"approximate": "none"}, "HardSigmoid": {"alpha": 0.2, "beta": 0.5},
                "ThresholdedRelu": {"alpha": 1.0}, "Swish": {"alpha": 1.0}}


def test_defaults_are_the_documented_ones_per_version():
    """attr_values reads each version's schema: the documented defaults (float32), Selu-1's own."""
    for op in OPS:
        for v in ref.versions(op):
            want = {"alpha": 1.6732, "gamma": 1.0507} if (op, v) == ("Selu", 1) else DOC_DEFAULTS.get(op, {})
            want = {k: d if isinstance(d, str) else ref.f32(d) for k, d in want.items()}
            assert ref.attr_values(op, v, {}) == want, (op, v)
    # the engine's explicit-default state writes the version's own defaults
    entry = engine.ENTRIES["", "Selu"]
    states = dict(engine.attr_states(entry, op_spec("Selu").versions[1]))
    assert states["explicit-default"] == {"alpha": ref.f32(1.6732), "gamma": ref.f32(1.0507)}


def test_ill_posed_overflow_elements_are_not_generated():
    """An element whose result overflows in a legitimate evaluation (LeakyRelu's function body
    casts alpha to T: float16(1.03) * -63600 = -65525 rounds to -inf) where the float64 oracle
    rounded to T is finite (-65508 -> -65504) is ill-posed at the mandated precision: the
    entry's ``defined`` marks it, and the engine never generates it."""
    alpha = ref.f32(1.03)
    with np.errstate(over="ignore"):
        assert np.isneginf(np.float16(1.03) * np.float16(-63600.0))
    assert np.isfinite(np.float16(alpha * -63600.0))
    entry = engine.ENTRIES["", "LeakyRelu"]
    x = np.array([-63600.0, -60000.0, -1.0, 0.0, 65504.0])
    ctx = Ctx("LeakyRelu", 16, 16, {"X": "float16"}, {"Y": "float16"}, {"alpha": alpha}, ("Y",))
    assert list(entry.defined(ctx, x, alpha=alpha)) == [False, True, True, True, True]
    ctx32 = Ctx("LeakyRelu", 16, 16, {"X": "float"}, {"Y": "float"}, {"alpha": alpha}, ("Y",))
    assert entry.defined(ctx32, x, alpha=alpha).all()


# ============================================================================ onnx.reference
KNOWN_OREF = {
    # PRelu-1's legacy consumed_inputs (in the schema) is not an attribute of its implementation (TypeError)
    "prelu1-consumed-inputs": lambda c: c.op == "PRelu" and "consumed_inputs" in c.attributes,
    # Selu-1's defaults (1.6732, 1.0507) are not used: onnx.reference applies Selu-6's
    "selu1-defaults": lambda c: c.op == "Selu" and c.since_version == 1 and "alpha" not in c.attributes,
    # its Softsign writes into a rank-0 result with out= (TypeError)
    "softsign-rank0": lambda c: c.op == "Softsign" and c.tags.get("rank") == 0,
    # its Erf rounds to float32 (np.vectorize(erf, otypes="f")), the Gelu function body uses Erf
    "gelu-double-erf": lambda c: c.op == "Gelu" and c.tags.get("dtype") == "double",
    # it accepts a slope that does not broadcast unidirectionally, and an unknown Gelu approximate
    "prelu-slope": lambda c: c.op == "PRelu" and c.expect_error is not None,
    "gelu-approximate": lambda c: c.op == "Gelu" and c.expect_error is not None,
}


def _known(c):
    return next((k for k, f in KNOWN_OREF.items() if f(c)), None)


@pytest.fixture(scope="module")
def oref_results(suite):
    cases = [c for c in suite if c.tags.get("dtype") in ("float", "double", "float16")]
    return cases, run_cases(cases, resolve_backend("onnx-reference"))


def test_oracle_agrees_with_onnx_reference(oref_results):
    cases, results = oref_results
    bad = [(c.id, r.outcome, r.message[:200]) for c, r in zip(cases, results)
           if r.outcome != "pass" and _known(c) is None]
    assert not bad, bad[:5]
    assert sum(r.outcome == "pass" for r in results) > 200


@pytest.mark.parametrize("kind", sorted(KNOWN_OREF))
def test_disagreement_with_onnx_reference_exists(kind, oref_results):
    cases, results = oref_results
    outs = Counter(r.outcome for c, r in zip(cases, results) if _known(c) == kind)
    assert outs["fail"] + outs["error"] >= 1, outs


# ============================================================================ suite
def test_generation_is_deterministic(suite):
    again = _generate(0)
    assert [c.id for c in again] == [c.id for c in suite]
    assert [c.id for c in _generate(1)] != [c.id for c in suite]


def test_coverage(suite, value_cases):
    have = {(c.op, c.since_version, c.tags["dtype"]) for c in value_cases}
    for op in OPS:
        for v, types in ref.versions(op).items():
            for t in types:
                assert (op, v, t) in have, (op, v, t)
            nums = {c.tags["numerics"] for c in value_cases if c.op == op and c.since_version == v}
            assert {"normal", "wide", "special", "near-overflow"} <= nums
            if op in ref.WORST_POINTS:
                assert "worst-points" in nums
            assert v in {c.opset for c in suite if c.op == op and c.since_version == v}
    for op in OPS:
        params = {c.tags["params"] for c in value_cases if c.op == op}
        assert params >= ({"default", "explicit-default", "non-default"} if ref.ACTIVATIONS[op].attrs else {"default"})
        # every state of the reference's table is written into some node
        given = [c.attributes for c in value_cases if c.op == op and c.tags["params"] == "non-default"]
        assert all(s in given for s in ref.attribute_states(op)), op
    assert {_approximate(c) for c in value_cases if c.op == "Gelu" and c.tags["dtype"] == "bfloat16"} == \
        {"none", "tanh"}
    prelu = [c for c in value_cases if c.op == "PRelu"]
    assert {_slope_kind(c) for c in prelu} >= {"same", "trailing", "size1-dims", "scalar", "one"}
    # every unidirectionally broadcastable slope kind in float cases of every float type of every
    # version >= 7, the exported per-channel [C, 1, 1] among them
    for v in (7, 9, 16):
        for t in ref.versions("PRelu")[v]:
            kinds = {_slope_kind(c) for c in prelu if c.since_version == v and c.tags["dtype"] == t}
            assert kinds >= {"same", "trailing", "size1-dims", "scalar", "channel", "channel-keepdims",
                             "fewer-dims-size1", "trailing-size1", "zero-size"}, (v, t, kinds)
    channel = {c.tags["dtype"] for c in prelu if c.since_version == 16 and _slope_kind(c) == "channel"
               and c.inputs[1].shape == (c.inputs[0].shape[1], 1, 1) and c.inputs[0].shape[1] > 1}
    assert channel >= set(FLOATS)
    for c in prelu:  # unidirectional: Y has X's shape; before 7 the slope is X's shape or of size 1
        xs, ss = c.inputs[0].shape, c.inputs[1].shape
        assert np.broadcast_shapes(xs, ss) == xs, c.id
        assert c.since_version >= 7 or ss == xs or ss == (1,), c.id
    assert {c.opset for c in suite} >= {28, 26}
    assert {c.tags["error"] for c in suite if c.expect_error} == {"approximate", "slope-shape"}
    counts = Counter(c.op for c in suite)
    for op in OPS:
        assert OLD_COUNTS[op] <= counts[op] <= 400, (op, counts[op])


def test_special_values_present(value_cases):
    for op in OPS:
        xs = np.concatenate([np.asarray(c.datasets[0].inputs[c.inputs[0].name], np.float64).ravel()
                             for c in value_cases if c.op == op and c.tags["numerics"] == "special"])
        assert (xs == 0).any() and (np.abs(xs[np.isfinite(xs)]) < 1e-300).any()
        assert np.isnan(xs).any() == ("nan" in ref.ACTIVATIONS[op].specials), op
        assert np.isposinf(xs).any() == ("inf" in ref.ACTIVATIONS[op].specials), op
        assert np.isneginf(xs).any() == ("-inf" in ref.ACTIVATIONS[op].specials), op
        if op != "PRelu":  # the points where exp overflows in the type and in float32
            assert (np.abs(np.abs(xs) - math.log(float(np.finfo(np.float32).max))) < 0.01).any(), op


def test_tolerance_is_relative_above_the_floor(value_cases):
    eps32 = float(np.finfo(np.float32).eps)
    for c in value_cases:
        tol = c.outputs[0].tolerance
        if c.tags["dtype"] == "float":
            assert tol.rtol <= 64 * eps32, (c.id, tol)
            assert tol.atol <= 64 * eps32, (c.id, tol)
        if c.tags["dtype"] not in FLOATS:
            assert tol.exact, c.id


# ============================================================================ kernels
def _version(op, opset):
    return onnx.defs.get_schema(op, opset).since_version


def _formulas(x, a, naive):
    """Independent numpy formulas (evaluated in x's dtype)."""
    c = lambda v: np.asarray(v, x.dtype)  # noqa: E731
    erf = np.vectorize(math.erf, otypes=[np.float64])  # otypes: zero-size inputs too
    one, zero = c(1), c(0)
    ex = np.exp(x)
    sig = one / (one + np.exp(-x)) if naive else np.where(x >= 0, one / (one + np.exp(-np.abs(x))),
                                                        np.exp(-np.abs(x)) / (one + np.exp(-np.abs(x))))
    sp = (np.where(x > (40 if x.dtype == np.float64 else 20), x, np.log(one + ex)) if naive
          else np.logaddexp(zero, x))
    em1 = (ex - one) if naive else np.expm1(x)
    return {
        "Relu": lambda: np.where(x < 0, zero, x),
        "LeakyRelu": lambda: np.where(x < 0, c(a["alpha"]) * x, x),
        "Elu": lambda: np.where(x < 0, c(a["alpha"]) * em1, x),
        "Selu": lambda: np.where(x <= 0, c(a["gamma"]) * c(a["alpha"]) * em1, c(a["gamma"]) * x),
        "Celu": lambda: np.where(x > 0, x, c(a["alpha"]) * np.expm1(x / c(a["alpha"]))),
        "Gelu": lambda: (c(0.5) * x * (one + np.asarray(erf(x / c(math.sqrt(2))), x.dtype))
                         if a.get("approximate", "none") == "none" else
                         c(0.5) * x * (one + np.tanh(c(math.sqrt(2 / math.pi)) * (x + c(0.044715) * x * x * x)))),
        "Sigmoid": lambda: sig,
        "HardSigmoid": lambda: np.clip(c(a["alpha"]) * x + c(a["beta"]), zero, one),
        "HardSwish": lambda: x * np.clip(x / c(6) + c(0.5), zero, one),
        "Tanh": lambda: np.tanh(x),
        "Softplus": lambda: sp,
        "Softsign": lambda: x / (one + np.abs(x)),
        "Mish": lambda: x * np.tanh(sp),
        "ThresholdedRelu": lambda: np.where(x > c(a["alpha"]), x, zero),
        "Swish": lambda: x * (one / (one + np.exp(-c(a["alpha"]) * x))),
    }


def make_kernel(op, *, naive=False, attrs_in_t=False, flaw=None):
    def kernel(inputs, attributes, outputs, opset):
        name = next(iter(inputs))
        x = inputs[name]
        t = x.dtype
        a = ref.attr_values(op, _version(op, opset), attributes)
        if op == "Gelu" and a["approximate"] not in ("none", "tanh"):
            raise ValueError("approximate")
        if flaw == "selu-swapped":
            a["alpha"], a["gamma"] = a["gamma"], a["alpha"]
        if flaw == "gelu-tanh-for-none":
            a["approximate"] = "tanh"
        if flaw == "selu1-new-defaults" and "alpha" not in attributes:
            a = ref.attr_values(op, 6, {})
        if attrs_in_t:
            a = {k: (float(np.asarray(v).astype(t)) if isinstance(v, float) else v) for k, v in a.items()}
        if t.kind in "iu":
            xw = x
        else:
            xw = x.astype(np.float64 if t == np.float64 else np.float32)
        with np.errstate(all="ignore"):
            if op == "PRelu":
                s = inputs["slope"]
                np.broadcast_shapes(s.shape, x.shape)  # unidirectional: result must be x's shape
                if np.broadcast_shapes(s.shape, x.shape) != x.shape:
                    raise ValueError("slope")
                if flaw == "prelu-slope-cycled":  # slope flattened and repeated over X's elements
                    s = np.resize(s.ravel(), x.size).reshape(x.shape)
                y = np.where(xw < 0, s.astype(xw.dtype) * xw, xw)
            else:
                y = _formulas(xw, a, naive)[op]()
            if flaw == "leaky-alpha-on-positives":
                y = np.where(xw < 0, y, np.asarray(a["alpha"], xw.dtype) * xw)
            if flaw == "hardsigmoid-unclipped":
                y = np.asarray(a["alpha"], xw.dtype) * xw + np.asarray(a["beta"], xw.dtype)
            if flaw == "softplus-naive-overflow":
                y = np.log(np.asarray(1, xw.dtype) + np.exp(xw))
            if flaw == "relu-nan-to-zero":
                y = np.where(np.isnan(xw), 0, y)
            if flaw == "thresholded-ge":
                y = np.where(xw >= np.asarray(a["alpha"], xw.dtype), xw, 0)
            if flaw == "elu-no-alpha":
                y = np.where(xw < 0, np.expm1(xw), xw)
            if flaw == "sigmoid-in-float16" and t == np.float16:
                y = (np.float16(1) / (np.float16(1) + np.exp(-x))).astype(np.float32)
        y = np.asarray(y).astype(t)
        return {outputs[0]: y}

    return kernel


def _backend(name, **kw):
    return KernelBackend({op: make_kernel(op, **kw) for op in OPS}, name=name)


LEGIT = {
    "float32-eval": {},
    "naive-forms": {"naive": True},
    "attrs-cast-to-T": {"attrs_in_t": True},
}


@pytest.mark.parametrize("name", sorted(LEGIT))
def test_legitimate_kernel_passes_everything(name, suite):
    results = run_cases(suite, _backend(name, **LEGIT[name]))
    bad = [(r.id, r.outcome, r.message[:300]) for r in results if r.outcome != "pass"]
    assert not bad, bad[:5]


WRONG = {
    "gelu-tanh-for-none": "Gelu",
    "leaky-alpha-on-positives": "LeakyRelu",
    "selu-swapped": "Selu",
    "selu1-new-defaults": "Selu",
    "hardsigmoid-unclipped": "HardSigmoid",
    "softplus-naive-overflow": "Softplus",
    "relu-nan-to-zero": "Relu",
    "thresholded-ge": "ThresholdedRelu",
    "elu-no-alpha": "Elu",
    "prelu-slope-cycled": "PRelu",
}


@pytest.mark.parametrize("flaw", sorted(WRONG))
def test_wrong_kernel_is_caught(flaw, value_cases):
    op = WRONG[flaw]
    cases = [c for c in value_cases if c.op == op]
    results = run_cases(cases, KernelBackend({op: make_kernel(op, flaw=flaw)}, name=flaw, check=False))
    outcomes = Counter(r.outcome for r in results)
    assert outcomes["fail"] >= 1, outcomes


def test_prelu_cycled_slope_caught_by_float_cases(value_cases):
    """A kernel that flattens the slope and cycles it over X is caught by float cases (not only
    by an int64 one), in particular by the per-channel [C, 1, 1] slope exported models use."""
    cases = [c for c in value_cases if c.op == "PRelu" and c.tags["dtype"] in FLOATS]
    results = run_cases(cases, KernelBackend({"PRelu": make_kernel("PRelu", flaw="prelu-slope-cycled")}, check=False))
    failed = {(_slope_kind(c), c.tags["dtype"]) for c, r in zip(cases, results) if r.outcome == "fail"}
    assert {("channel", t) for t in FLOATS} <= failed, failed


def test_gelu_tanh_for_none_caught_per_dtype(value_cases):
    cases = [c for c in value_cases if c.op == "Gelu" and _approximate(c) == "none"]
    results = run_cases(cases, KernelBackend({"Gelu": make_kernel("Gelu", flaw="gelu-tanh-for-none")}, check=False))
    failed = {c.tags["dtype"] for c, r in zip(cases, results) if r.outcome == "fail"}
    assert failed >= {"float", "double"}, failed


def test_relu_sign_of_zero_is_not_checked(value_cases):
    """Relu(-0): max(0, -0) does not define the sign, and compare() ignores it: a kernel
    turning -0 into +0 passes (documented limitation, not a catchable flaw)."""
    cases = [c for c in value_cases if c.op == "Relu" and c.tags["numerics"] == "special"]
    assert any((np.asarray(c.datasets[0].inputs["X"]) == 0).any() for c in cases)

    def plus_zero(inputs, attributes, outputs, opset):
        x = next(iter(inputs.values()))
        return {outputs[0]: np.where(x <= 0, np.zeros((), x.dtype), x) if x.dtype.kind == "f"
                else np.maximum(x, 0).astype(x.dtype)}

    results = run_cases(cases, KernelBackend({"Relu": plus_zero}, check=False))
    assert all(r.outcome == "pass" for r in results)


def test_function_body_opsets_get_their_own_cases(suite):
    """Where onnx defines a version's function body at an opset the schedule does not use,
    that opset gets cases too: onnxruntime 1.31.1 expands Softplus-1's body
    ``Log(Add(Exp(X), 1))`` at opset 18 and overflows (it has a kernel at the other opsets)."""
    assert schedule.body_opsets(op_spec("Softplus"), 1) == [18]
    assert schedule.body_opsets(op_spec("Softplus"), 22) == []  # the body (opset 18) predates version 22
    assert schedule.body_opsets(op_spec("Relu"), 14) == [18]
    body = [c for c in suite if c.tags.get("body_opset")]
    assert {(c.op, c.since_version, c.opset) for c in body} >= {("Softplus", 1, 18), ("Relu", 14, 18), ("Elu", 6, 18)}
    sp = [c for c in body if c.op == "Softplus"]
    assert {c.tags["dtype"] for c in sp} == {"float16", "float", "double"}
    assert {c.tags["numerics"] for c in sp} == {"special"}
    # the special values include the points where exp overflows in the type (the near-overflow ones)
    for c in sp:
        x = next(iter(c.datasets[0].inputs.values()))
        th = math.log(float(np.finfo(x.dtype).max))
        xs = x.astype(np.float64)
        assert ((xs > th) & (xs < 1.02 * th)).any(), c.id  # exp(x) overflows in T, softplus(x) ~ x does not

    def naive_body(inputs, attrs, names, opset):  # the body cast by cast in T: exp overflows
        x = next(iter(inputs.values()))
        with np.errstate(over="ignore"):
            return {names[0]: np.log(np.exp(x) + x.dtype.type(1))}

    results = run_cases(sp, KernelBackend({"Softplus": naive_body}, name="naive-body", check=False))
    assert {r.outcome for r in results} == {"fail"}
    assert all("NaN/Inf" in r.message for r in results)


# ============================================================================ accuracy budgets (issue 10)
def test_every_transcendental_activation_has_a_sourced_budget():
    for op in ("Tanh", "Sigmoid", "Elu", "Celu", "Selu", "Softplus", "Mish", "Gelu", "Swish"):
        budget, source = ref.ULP_BUDGET[op]
        assert budget >= 4 and "OpenCL" in source, op
    assert ref.ulp_budget("Tanh", onnx.TensorProto.FLOAT16) == 0.0  # float32 evaluation, one rounding
    assert ref.ulp_budget("Relu", onnx.TensorProto.FLOAT) == 0.0


def test_worst_points_are_sampled(value_cases):
    """Cases sample the x where onnxruntime's float32 error peaks, e.g. Tanh near +-8.48 and 8.55."""
    wp = [c for c in value_cases if c.tags["numerics"] == "worst-points"]
    assert {c.op for c in wp} == set(ref.WORST_POINTS)
    for op in ref.WORST_POINTS:  # float and double of the latest version at least
        latest = max(ref.versions(op))
        assert {c.tags["dtype"] for c in wp if c.op == op and c.since_version == latest} >= {"float", "double"}, op
    # Gelu's peaks are for both approximations: float and double cases with each
    assert {(c.tags["dtype"], _approximate(c)) for c in wp if c.op == "Gelu"} >= \
        {(t, a) for t in ("float", "double") for a in ("none", "tanh")}
    tanh = next(c for c in wp if c.op == "Tanh" and c.tags["dtype"] == "float")
    x = next(iter(tanh.datasets[0].inputs.values())).astype(np.float64)
    assert np.any(np.abs(x - 8.55) < 1e-3) and np.any(np.abs(x + 8.47554) < 1e-3)


def _budget_kernel(ulps):
    """The float64 result moved by ``ulps`` true ulps of the output type (a libm at that accuracy)."""
    def kernel(inputs, attributes, outputs, opset):
        x = next(iter(inputs.values()))
        op = kernel.op
        v = max(s for s in ref.versions(op) if s <= opset)
        y = ref.oracle(op, x.astype(np.float64), ref.attr_values(op, v, attributes))
        t = x.dtype
        with np.errstate(all="ignore"):
            yt = y.astype(t)
            sp = np.spacing(np.nextafter(np.abs(yt), t.type(0))).astype(np.float64)  # below max: finite
            # toward zero (no overflow at max), where the result is finite in T
            out = np.where(np.isfinite(yt), y - np.sign(y) * ulps * sp, y).astype(t)
        return {outputs[0]: out}
    return kernel


@pytest.mark.parametrize("op", sorted(ref.ULP_BUDGET))
def test_a_libm_within_the_budget_passes_and_beyond_fails(op, value_cases):
    """A float32 kernel whose results are (budget - 1) ulps off passes every float case; one
    (4 * budget) ulps off fails some: the budget is what is granted, not a blanket."""
    cases = [c for c in value_cases if c.op == op and c.tags["dtype"] == "float"]
    budget = ref.ULP_BUDGET[op][0]
    k = _budget_kernel(budget - 1)
    k.op = op
    res = run_cases(cases, KernelBackend({op: k}, check=False))
    bad = [(r.id, r.message[:160]) for r in res if r.outcome != "pass"]
    assert not bad, bad[:3]
    k2 = _budget_kernel(4 * budget)
    k2.op = op
    assert any(r.outcome == "fail" for r in run_cases(cases, KernelBackend({op: k2}, check=False)))


def test_onnxruntime_passes_its_worst_points(value_cases):
    """Calibration: onnxruntime 1.32's float32 kernels pass the worst-point cases (Tanh's
    5.5-ulp peak near |x| = 8.48 included) under the stated budgets."""
    pytest.importorskip("onnxruntime")
    cases = [c for c in value_cases if c.tags["numerics"] == "worst-points" and c.tags["dtype"] == "float"]
    res = run_cases(cases, resolve_backend("onnxruntime"))
    # old versions at their first opset may have no kernel (a clean "unsupported"), nothing fails
    assert {r.outcome for r in res} <= {"pass", "unsupported"}, \
        [(r.id, r.message[:160]) for r in res if r.outcome not in ("pass", "unsupported")]
    latest = [(c.op, r.outcome) for c, r in zip(cases, res) if c.since_version == max(ref.versions(c.op))]
    assert {op for op, o in latest if o == "pass"} == set(ref.WORST_POINTS), latest


def test_celu_at_max_follows_the_text_not_the_body_overflow(value_cases):
    """Decision (reference docstring): Celu(x) = x for x > 0 even where the function body's
    alpha * Elu(x / alpha) overflows (x > alpha * max, alpha < 1): not contested; a kernel
    that expands the body in T fails those cases."""
    fmax = float(np.finfo(np.float32).max)
    assert ref.oracle("Celu", np.array([fmax], np.float32), {"alpha": 0.5})[0] == fmax
    cases = [c for c in value_cases if c.op == "Celu" and c.tags["dtype"] == "float" and c.tags["numerics"] == "special"
             and ref.attr_values("Celu", c.since_version, c.attributes)["alpha"] < 1]
    assert cases and all(c.contested is None for c in cases)

    def body(inputs, attributes, outputs, opset):
        x = next(iter(inputs.values()))
        a = np.float32(attributes.get("alpha", 1.0))
        with np.errstate(all="ignore"):
            z = x / a
            return {outputs[0]: (a * np.where(z < 0, np.expm1(z), z)).astype(x.dtype)}

    res = run_cases(cases, KernelBackend({"Celu": body}, check=False))
    assert all(r.outcome == "fail" and "NaN/Inf" in r.message for r in res), [r.message[:120] for r in res]
