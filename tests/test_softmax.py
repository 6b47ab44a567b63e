"""Tests of the Softmax / LogSoftmax / Hardmax oracle (versions 1, 11, 13), generator and tolerances.

* the oracle against plain-Python formulas (``math.exp``, ``math.fsum``, index loops),
  with the 2-D coercion before 13 and the single axis from 13;
* the oracle against ``onnx.reference`` where that one is right, and one test per known
  disagreement, asserting it still exists;
* determinism and coverage;
* numpy kernels through ``KernelBackend``: legitimate implementations pass everything,
  each deliberately wrong kernel gives at least one ``fail``.
"""

from __future__ import annotations

import itertools
import math
from collections import Counter

import numpy as np
import pytest

from conformance import dtypes, registry
from conformance.backends import resolve_backend
from conformance.backends.kernel import KernelBackend
from conformance.runner import run_cases
from conformance.reference import softmax as ref

OPS = ("Softmax", "LogSoftmax", "Hardmax")
pytestmark = pytest.mark.filterwarnings("ignore::RuntimeWarning")


def _generate(ops, seed):
    return registry.generate(list(ops), seed=seed)


def _axis(c):
    """The case's ``axis`` attribute, or ``"default"`` when the node omits it."""
    return c.attributes.get("axis", "default")


def _flattened(c) -> bool:
    """Versions 1 and 11 coerce to 2-D: more than one axis is normalized together."""
    r = c.tags["rank"]
    ax = ref.default_axis(c.since_version) if _axis(c) == "default" else _axis(c)
    return c.since_version < 13 and ax % r < r - 1


NUMERICS = ("normal", "wide", "special", "large", "neg-inf", "ties")


# ============================================================================ oracle
def plain(op, x, axis, since):
    """Index-loop formula: group elements by their 'row key' (outer indices, and for version 13
    the indices of every other axis), exp / fsum per row, no max shift (small inputs only)."""
    x = np.asarray(x, dtype=np.float64)
    r = x.ndim
    ax = axis % r
    groups: dict = {}
    for idx in itertools.product(*[range(d) for d in x.shape]):
        key = idx[:ax] if since < 13 else idx[:ax] + idx[ax + 1:]
        groups.setdefault(key, []).append(idx)
    y = np.empty(x.shape)
    for members in groups.values():
        vals = [float(x[i]) for i in members]
        if op == "Hardmax":
            best = max(range(len(vals)), key=lambda k: (vals[k], -k))
            for k, i in enumerate(members):
                y[i] = 1.0 if k == best else 0.0
            continue
        s = math.fsum(math.exp(v) for v in vals)
        for v, i in zip(vals, members):
            y[i] = math.exp(v) / s if op == "Softmax" else v - math.log(s)
    return y


@pytest.mark.parametrize("op", OPS)
@pytest.mark.parametrize("since", ref.VERSIONS)
def test_oracle_matches_plain_formula(op, since):
    rng = np.random.default_rng(5)
    for rank in range(1, 5):
        shape = tuple(int(rng.integers(1, 4)) for _ in range(rank))
        x = rng.normal(size=shape) * 3
        if op == "Hardmax":
            x = np.round(x)  # ties
        lo, hi = ref.axis_range(since, rank)
        for axis in range(lo, hi):
            np.testing.assert_allclose(ref.evaluate(op, x, axis, since), plain(op, x, axis, since),
                                       rtol=1e-13, atol=1e-13)


def test_oracle_hand_values():
    x = np.array([[1.0, 2.0, 3.0], [1000.0, 1000.0, -np.inf]])
    e = np.exp([1.0, 2.0, 3.0]) / np.exp([1.0, 2.0, 3.0]).sum()
    np.testing.assert_allclose(ref.evaluate("Softmax", x, 1, 13), [e, [0.5, 0.5, 0.0]], rtol=1e-15)
    np.testing.assert_allclose(ref.evaluate("LogSoftmax", x, 1, 13)[1], [-math.log(2), -math.log(2), -np.inf])
    allneg = np.full((1, 3), -np.inf)
    assert np.isnan(ref.evaluate("Softmax", allneg, 1, 13)).all()
    assert np.isnan(ref.evaluate("LogSoftmax", allneg, 1, 13)).all()
    np.testing.assert_array_equal(ref.evaluate("Hardmax", allneg, 1, 13), [[1, 0, 0]])
    np.testing.assert_array_equal(ref.evaluate("Hardmax", np.array([[2.0, 5.0, 5.0, 1.0]]), 1, 13), [[0, 1, 0, 0]])
    # version 1: the flattened rows; version 13: one axis
    x3 = np.arange(8.0).reshape(2, 2, 2)
    assert ref.evaluate("Softmax", x3, 1, 1).reshape(2, 4).sum(axis=1) == pytest.approx([1, 1])
    assert ref.evaluate("Softmax", x3, 1, 13).sum(axis=1) == pytest.approx(np.ones((2, 2)))
    assert ref.evaluate("Hardmax", x3, 1, 11).reshape(2, 4).tolist() == [[0, 0, 0, 1], [0, 0, 0, 1]]
    with pytest.raises(ValueError):
        ref.evaluate("Softmax", x3, 3, 13)
    with pytest.raises(ValueError):
        ref.evaluate("Softmax", x3, -1, 1)
    with pytest.raises(ValueError):
        ref.evaluate("Softmax", np.float64(1.0), 0, 13)


# ============================================================================ onnx.reference
def _ref_results(cases):
    return run_cases(cases, resolve_backend("onnx-reference"))


def test_oracle_agrees_with_onnx_reference_single_axis_float_double(value_cases):
    # where onnx.reference is right: version 13 (or an axis whose flattening is one axis),
    # float/double (computed in T), Softmax and Hardmax (LogSoftmax: only where log(softmax) is exact enough)
    cases = [c for c in value_cases if c.op in ("Softmax", "Hardmax") and c.tags["dtype"] in ("float", "double")
             and (c.since_version == 13 or not _flattened(c)) and c.opset >= 7]
    assert len(cases) > 100
    bad = [(r.id, r.message[:200]) for r in _ref_results(cases) if r.outcome != "pass"]
    assert not bad, bad[:5]


def test_disagreement_onnx_reference_single_axis_before_13(value_cases):
    """onnx.reference's Softmax/Hardmax-1/11 normalize over one axis, not the flattened tail."""
    cases = [c for c in value_cases if c.since_version < 13 and _flattened(c) and c.opset >= 7
             and c.tags["dtype"] in ("float", "double") and c.op in ("Softmax", "Hardmax")]
    outcomes = Counter(r.outcome for r in _ref_results(cases))
    assert outcomes["fail"] >= 10, outcomes


def test_disagreement_onnx_reference_logsoftmax_is_log_of_softmax_in_t(value_cases):
    """onnx.reference's LogSoftmax is log(Softmax) in T: float16 underflows to -inf."""
    cases = [c for c in value_cases if c.op == "LogSoftmax" and c.since_version == 13 and c.tags["dtype"] == "float16"
             and c.tags["numerics"] == "wide"]
    results = _ref_results(cases)
    assert any(r.outcome == "fail" and "NaN/Inf" in r.message for r in results)


def test_disagreement_onnx_reference_bfloat16_in_bfloat16(value_cases):
    """onnx.reference sums bfloat16 exponentials in bfloat16: long rows go out of tolerance."""
    cases = [c for c in value_cases if c.op == "Softmax" and c.tags["dtype"] == "bfloat16"
             and c.tags["shape"].startswith("long-rows")]
    assert cases
    assert Counter(r.outcome for r in _ref_results(cases))["fail"] >= 1


# ============================================================================ suite
def test_generation_is_deterministic(suite):
    again = _generate(OPS, 0)
    assert [c.id for c in again] == [c.id for c in suite]
    other = _generate(OPS, 1)
    assert [c.id for c in other] != [c.id for c in suite]


def test_coverage(suite, value_cases):
    for op in OPS:
        cs = [c for c in value_cases if c.op == op]
        assert 238 <= len(cs) <= 300  # the retired generator made 220 value cases per operator
        got = {(c.since_version, c.tags["dtype"]) for c in cs}
        want = {(v, t) for v in ref.VERSIONS for t in ("float16", "float", "double") + (("bfloat16",) if v >= 13 else ())}
        assert got == want
        for v in ref.VERSIONS:
            vc = [c for c in cs if c.since_version == v]
            assert {c.tags["numerics"] for c in vc} >= set(NUMERICS)
            assert any(c.tags["shape"].startswith("long-rows") for c in vc)
            assert any(_axis(c) == "default" for c in vc)
            assert {c.opset for c in vc} >= {v, {1: 10, 11: 12, 13: 26}[v]}
            if v < 13:
                assert any(_flattened(c) for c in vc)
            for rank in range(1, 5):
                lo, hi = ref.axis_range(v, rank)
                for t in {c.tags["dtype"] for c in vc}:  # every valid axis for every type
                    got = {_axis(c) for c in vc if c.tags["rank"] == rank and c.tags["dtype"] == t}
                    assert got >= set(range(lo, hi)), (v, t, rank, got)
        assert any(c.opset == 28 for c in cs)
        assert any(int(np.prod(c.inputs[0].shape[1:])) >= 4096 for c in cs)
        errs = [c for c in suite if c.op == op and c.expect_error]
        assert {c.since_version for c in errs} == set(ref.VERSIONS)


def test_special_values_present(value_cases):
    sm = [c for c in value_cases if c.op == "Softmax" and c.tags["numerics"] == "special"]
    assert any(np.isnan(c.datasets[0].outputs["output"].astype(np.float64)).any() for c in sm)
    large = [c for c in value_cases if c.tags["numerics"] == "large"]
    for c in large:  # exp without the shift overflows in the computation type
        x = c.datasets[0].inputs["input"].astype(np.float64)
        limit = math.log(float(np.finfo(ref.compute_type(c.inputs[0].elem_type)).max))
        assert x.max() > limit, c.id


# ============================================================================ kernels
def _since(opset):
    return 13 if opset >= 13 else (11 if opset >= 11 else 1)


def make_kernel(op, flaw=None, algo="f32"):
    def kernel(inputs, attrs, outputs, opset):
        x = inputs["input"]
        t = x.dtype
        since = _since(opset)
        axis = attrs.get("axis", ref.default_axis(since))
        sem = 13 if flaw == "single-axis-always" else (1 if flaw == "flatten-always" else since)
        lo, hi = ref.axis_range(since, x.ndim)
        if not lo <= axis < hi:
            raise ValueError("axis out of range")
        rows, back = ref.to_rows(x, axis if sem >= 11 or axis >= 0 else axis % x.ndim, sem)
        c = np.float64 if algo == "f64" else ref.compute_type(dtypes.elem_type(t)).type
        if flaw == "in-T":
            c = t
        xc = rows.astype(c)
        with np.errstate(all="ignore"):
            if op == "Hardmax":
                if flaw == "ties-last":
                    idx = rows.shape[1] - 1 - np.argmax(xc[:, ::-1], axis=1)
                else:
                    idx = np.argmax(xc, axis=1)
                y = np.zeros(rows.shape, dtype=t)
                y[np.arange(rows.shape[0]), idx] = 1
                return {"output": back(y)}
            m = np.zeros_like(xc[:, :1]) if flaw == "no-max-shift" else np.max(xc, axis=1, keepdims=True)
            d = (xc - m).astype(c)
            e = np.exp(d).astype(c)
            if algo == "reverse":
                s = np.cumsum(e[:, ::-1], axis=1, dtype=c)[:, -1:]
            else:
                s = np.sum(e, axis=1, keepdims=True, dtype=c)
            if op == "Softmax":
                y = e * (c(1) / s) if algo == "reverse" else e / s
            elif flaw == "log-of-softmax":
                y = np.log((e / s).astype(t).astype(c))
            else:
                y = d - np.log(s)
        return {"output": back(y.astype(np.float64)).astype(t)}
    return kernel


def _kernels(**kw):
    return {op: make_kernel(op, **kw) for op in OPS}


@pytest.mark.parametrize("algo", ("f32", "f64", "reverse"))
def test_legitimate_kernel_passes_everything(algo, suite):
    results = run_cases(suite, KernelBackend(_kernels(algo=algo), name=algo))
    bad = [(r.id, r.outcome, r.message[:300]) for r in results if r.outcome != "pass"]
    assert not bad, bad[:5]


@pytest.mark.parametrize("op,flaw", [
    ("Softmax", "single-axis-always"), ("Softmax", "flatten-always"), ("Softmax", "no-max-shift"),
    ("LogSoftmax", "single-axis-always"), ("LogSoftmax", "no-max-shift"), ("LogSoftmax", "log-of-softmax"),
    ("Hardmax", "ties-last"), ("Hardmax", "single-axis-always"), ("Softmax", "in-T"),
])
def test_wrong_kernel_is_caught(op, flaw, value_cases):
    cases = [c for c in value_cases if c.op == op]
    if flaw == "log-of-softmax":  # float16 only: the flaw the brief names
        cases = [c for c in cases if c.tags["dtype"] == "float16"]
    results = run_cases(cases, KernelBackend({op: make_kernel(op, flaw=flaw)}, name=flaw, check=False))
    assert Counter(r.outcome for r in results)["fail"] >= 1


def test_tolerance_is_tight(value_cases):
    eps32 = float(np.finfo(np.float32).eps)
    for c in value_cases:
        if c.op == "Softmax" and c.tags["dtype"] == "float" and c.tags["numerics"] == "normal":
            assert c.outputs[0].tolerance.atol <= 64 * eps32, c.id
        if c.op == "Hardmax":
            assert c.outputs[0].tolerance.exact
