"""Explore-mode strategies of the element-wise activations and the Softmax family.

* every activation and Softmax/LogSoftmax/Hardmax has a registered strategy; its simplest
  draw (what shrinking goes to) is the first version, float, the since_version as opset,
  rank 0 (rank 1 for the Softmax family), attributes omitted, ``normal`` numerics, seed 0;
* the draws reach what the fixed suite does not: float attributes outside the table (the
  entries' ``explore_attrs`` ranges), every axis of every version, every PRelu slope shape;
* legitimate kernels (the independent numpy kernels of ``test_activations`` /
  ``test_softmax`` through ``KernelBackend``) pass every drawn example;
* :func:`conformance.explore.explore_op` finds a deliberately wrong kernel and shrinks its
  failure to a small case: Softmax with the single-axis semantics of 13 applied to
  versions 1/11, Gelu using the tanh approximation for ``approximate="none"``, LeakyRelu
  ignoring ``alpha``.
"""

from __future__ import annotations

import math
from collections import Counter

import numpy as np
import pytest
from hypothesis import HealthCheck, find, given, settings

import test_activations as ta
import test_softmax as ts
from conformance import registry
from conformance.backends.kernel import KernelBackend
from conformance.explore import ExploreFailure, describe_case, explore_op
from conformance.ops import engine
from conformance.opspec import op_spec
from conformance.ops import activations as act_table
from conformance.reference import activations as ref_act
from conformance.reference import softmax as sm_ref
from conformance.runner import run_case

pytestmark = pytest.mark.filterwarnings("ignore::RuntimeWarning")

ACTIVATIONS = list(ref_act.ACTIVATIONS)
SOFTMAX = ["Softmax", "LogSoftmax", "Hardmax"]
QUIET = dict(deadline=None, database=None, derandomize=True,
             suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large, HealthCheck.filter_too_much])


def _x(case):
    return case.inputs[0]


def _size(case) -> int:
    return int(np.prod(_x(case).shape))


# ----------------------------------------------------------------------------- the strategies
def test_every_activation_and_softmax_op_has_a_strategy():
    ops = registry.strategy_ops()
    assert set(ACTIVATIONS + SOFTMAX) <= set(ops)
    assert registry.strategy_name("Gelu") == "conformance.ops.engine.strategy_Gelu"
    assert registry.strategy_name("LogSoftmax") == "conformance.ops.engine.strategy_LogSoftmax"


@pytest.mark.parametrize("op", ["Relu", "PRelu", "Selu", "Gelu", "HardSigmoid", "Swish"])
def test_activation_strategy_shrinks_to_the_simplest_case(op):
    case = find(registry.get_strategy(op), lambda c: True, settings=settings(**QUIET))
    first = min(ref_act.versions(op))
    assert (case.since_version, case.opset) == (first, first), describe_case(case)
    assert case.tags["dtype"] == "float" and case.tags["numerics"] == "normal" and case.tags["params"] == "default"
    assert case.attributes == {} and _x(case).shape == () and case.tags["explore_seed"] == 0
    if op == "PRelu":
        assert ta._slope_kind(case) == "same" and case.tags["inputs_as"] == "inputs", describe_case(case)


@pytest.mark.parametrize("op", SOFTMAX)
def test_softmax_strategy_shrinks_to_the_simplest_case(op):
    case = find(registry.get_strategy(op), lambda c: True, settings=settings(**QUIET))
    assert (case.since_version, case.opset, case.tags["dtype"], case.tags["numerics"]) == (1, 1, "float", "normal")
    # rank 1 before 13: the default axis (1) is out of range, so the first pattern is axis 0
    assert _x(case).shape == (2,) and case.attributes == {"axis": 0} and case.tags["explore_seed"] == 0


def test_activation_attributes_are_drawn_beyond_the_table():
    entry = engine.ENTRIES["", "LeakyRelu"]
    table = {ref_act.attr_values("LeakyRelu", 16, {})["alpha"], *ref_act.ACTIVATIONS["LeakyRelu"].attrs["alpha"]}
    case = find(registry.get_strategy("LeakyRelu"),
                lambda c: "alpha" in c.attributes and c.attributes["alpha"] not in table,
                settings=settings(**QUIET))
    alpha = case.attributes["alpha"]
    lo, hi = entry.explore_attrs["alpha"]
    assert lo <= alpha <= hi and float(np.float32(alpha)) == alpha and case.tags["params"] == "drawn"
    # every float attribute of every activation has a range (Celu's alpha kept away from 0: x / alpha)
    for op in ACTIVATIONS:
        e = engine.ENTRIES["", op]
        floats = {k for v in op_spec(op).versions.values() for k, a in v.attributes.items()
                  if isinstance(a.default, float)}
        assert set(e.explore_attrs) == floats, op
    assert engine.ENTRIES["", "Celu"].explore_attrs["alpha"][0] > 0
    # the omitted attribute of Selu-1 written out is Selu-1's own default, not Selu-6's
    case = find(registry.get_strategy("Selu"),
                lambda c: c.since_version == 1 and c.tags["params"] == "explicit-default" and len(c.attributes) == 2,
                settings=settings(max_examples=1000, **QUIET))
    assert case.attributes == ref_act.attr_values("Selu", 1, {}) != ref_act.attr_values("Selu", 6, {})


def test_prelu_slope_kinds_and_softmax_axes_are_all_reached():
    seen: Counter = Counter()

    @settings(max_examples=150, **QUIET)
    @given(registry.get_strategy("PRelu"))
    def prelu(case):
        seen[ta._slope_kind(case), case.tags["inputs_as"]] += 1
        slope = case.inputs[1]
        # unidirectional broadcast: Y has X's shape
        assert np.broadcast_shapes(slope.shape, _x(case).shape) == _x(case).shape, describe_case(case)

    prelu()
    kinds = {sh.name.split("/")[0] for sh in engine.ENTRIES["", "PRelu"].shapes}
    assert {k for k, _ in seen} == kinds >= {"same", "trailing", "size1-dims", "scalar", "one", "channel"}, seen
    assert {p for _, p in seen} == {"inputs", "initializers"}, seen

    axes: set = set()

    @settings(max_examples=200, **QUIET)
    @given(registry.get_strategy("Softmax"))
    def softmax(case):
        axes.add((case.since_version, "default" if case.tags["shape"].endswith("default") else case.attributes["axis"]))

    softmax()
    # the choices are every valid axis of the version and rank 1-4 (and the default where valid) ...
    entry = next(e for e in engine.ENTRIES.values() if e.op == "Softmax")
    spec = op_spec("Softmax")
    for since in (1, 11, 13):
        patterns = [sh for sh in entry.shapes if sh.name in engine.shape_patterns(entry, spec.versions[since])]
        for rank in range(1, 5):
            lo, hi = sm_ref.axis_range(since, rank)
            choices = {sh.attrs.get("axis") for sh in patterns if len(sh.inputs["input"]) == rank
                       and not sh.name.startswith("long")}
            assert sorted(a for a in choices if a is not None) == list(range(lo, hi))
            assert (None in choices) == (rank == 3 or (rank == 1 and since >= 13))
    # ... and the draws reach both signs and the 2-D coercion at a leading axis (the default
    # pattern is among the choices above)
    for since in (11, 13):
        assert {(since, 0), (since, -1), (since, -2)} <= axes, sorted(axes, key=str)
    assert {(1, 0), (1, 2)} <= axes, sorted(axes, key=str)


# ----------------------------------------------------------------------------- legitimate kernels pass
def _legit_activations(name="float32-eval"):
    return KernelBackend({op: ta.make_kernel(op, **ta.LEGIT[name]) for op in ACTIVATIONS}, name=name)


@pytest.mark.parametrize("legit", sorted(ta.LEGIT))
def test_legitimate_activation_kernels_pass_every_drawn_case(legit):
    backend = _legit_activations(legit)
    for op in ACTIVATIONS:
        counts = explore_op(op, lambda c: run_case(c, backend), max_examples=25, derandomize=True)
        assert set(counts) == {"pass"} and counts["pass"] >= 25, (op, counts)


@pytest.mark.parametrize("algo", ["f32", "reverse"])
def test_legitimate_softmax_kernels_pass_every_drawn_case(algo):
    backend = KernelBackend(ts._kernels(algo=algo), name=algo)
    for op in SOFTMAX:
        counts = explore_op(op, lambda c: run_case(c, backend), max_examples=40, derandomize=True)
        assert set(counts) == {"pass"} and counts["pass"] >= 40, (op, counts)


# ----------------------------------------------------------------------------- wrong kernels shrink
def _explore_failure(op, kernel, max_examples=60) -> ExploreFailure:
    backend = KernelBackend({op: kernel}, name="wrong", check=False)
    with pytest.raises(ExploreFailure) as info:
        explore_op(op, lambda c: run_case(c, backend), max_examples=max_examples, derandomize=True)
    f = info.value
    assert f.result.outcome == "fail" and f.counts["fail"] >= 1, str(f)
    return f


def test_softmax_with_the_single_axis_semantics_before_13_shrinks_to_a_small_flattened_case():
    f = _explore_failure("Softmax", ts.make_kernel("Softmax", flaw="single-axis-always"))
    c = f.case
    # only the 2-D coercion of versions 1/11 differs from one axis: the axis is not the last
    # one and the flattened dims after it are not all 1
    assert c.since_version < 13 and ts._flattened(c), describe_case(c)
    assert len(_x(c).shape) <= 3 and _size(c) <= 8, describe_case(c)
    assert c.tags["dtype"] == "float" and c.tags["numerics"] == "normal" and not c.tags["shape"].startswith("long"), \
        describe_case(c)
    assert f.counts["pass"] >= 1  # not found at once: random draws, then shrinking


def test_gelu_tanh_for_none_shrinks_to_a_default_attribute_scalar():
    f = _explore_failure("Gelu", ta.make_kernel("Gelu", flaw="gelu-tanh-for-none"))
    c = f.case
    # the flaw needs no attribute: "none" is the default
    assert c.attributes == {} and ta._approximate(c) == "none", describe_case(c)
    assert len(_x(c).shape) <= 1 and _size(c) <= 2 and c.tags["numerics"] == "normal", describe_case(c)


def _leaky_alpha_ignored(inputs, attributes, outputs, opset):
    x = next(iter(inputs.values()))
    y = np.where(x < 0, np.asarray(ref_act.f32(0.01), x.dtype) * x, x).astype(x.dtype)
    return {outputs[0]: y}


def test_leaky_relu_ignoring_alpha_shrinks_to_one_negative_element_and_a_set_alpha():
    f = _explore_failure("LeakyRelu", _leaky_alpha_ignored)
    c = f.case
    # the flaw needs a non-default alpha and a negative input, nothing else
    default = ref_act.attr_values("LeakyRelu", c.since_version, {})["alpha"]
    assert "alpha" in c.attributes and not math.isclose(c.attributes["alpha"], default), describe_case(c)
    assert c.tags["params"] == "non-default", describe_case(c)
    assert c.attributes["alpha"] in ref_act.ACTIVATIONS["LeakyRelu"].attrs["alpha"], describe_case(c)
    assert (c.since_version, c.opset, c.tags["dtype"]) == (1, 1, "float"), describe_case(c)
    assert len(_x(c).shape) <= 1 and c.tags["shape"] in ("rank0", "rank1"), describe_case(c)
    x = np.asarray(c.datasets[0].inputs[_x(c).name])
    assert (x < 0).any()
    # one normal element, or the special class, whose values are a fixed vector (every special value
    # of the type once, as the engine's special grids): hypothesis orders choice sequences
    # shortest first, so a rank-0 special case comes before a normal draw that needs a dimension
    # (a rank-0 normal draw fails only where its seed gives a negative value)
    if c.tags["numerics"] == "special":
        assert _size(c) == len(act_table.special_values("LeakyRelu", "float")), describe_case(c)
    else:
        assert c.tags["numerics"] == "normal" and _size(c) <= 2, describe_case(c)
