"""Tests of the Dropout oracle (versions 1, 6, 7, 10, 12, 13, 22), its generator and the statistical check.

* inference is the identity (bit for bit) with an all-true mask;
* :func:`conformance.reference.dropout.check_dropout`: a correct training kernel passes it over
  many trials (false alarms bounded), wrong kernels (scale ``1 - ratio``, no scaling,
  dropping ``1 - ratio``, an inconsistent mask) are caught on the suite's random cases;
* the runner: legitimate kernels pass every deterministic case (random ones are
  skipped), wrong kernels fail some;
* onnx.reference disagreements asserted; determinism and coverage.
"""

from __future__ import annotations

from collections import Counter

import numpy as np
import pytest

import conformance.generators.dropout as gen
from conformance import registry
from conformance.backends import resolve_backend
from conformance.backends.kernel import KernelBackend
from conformance.runner import run_cases
from conformance.reference import dropout as ref

OP = "Dropout"
pytestmark = pytest.mark.filterwarnings("ignore::RuntimeWarning")


def _generate(seed):
    return registry.generate([OP], seed=seed)


@pytest.fixture(scope="module")
def suite():
    return _generate(0)


def _since(opset):
    for v in sorted(gen.VERSIONS, reverse=True):
        if opset >= v:
            return v
    raise AssertionError(opset)


def make_kernel(flaw=None, seed=0):
    """A numpy Dropout for every version; ``flaw`` names a deliberate error."""
    rng = np.random.default_rng(seed)

    def kernel(inputs, attrs, outputs, opset):
        x = inputs["data"]
        since = _since(opset)
        if since >= 12:
            ratio = float(inputs["ratio"]) if "ratio" in inputs else 0.5
            training = bool(inputs["training_mode"]) if "training_mode" in inputs else False
            if flaw == "train-if-ratio-given" and "ratio" in inputs:
                training = True
            if training:
                ref.validate_ratio(ratio)
        elif since in (1, 6):
            ratio = float(attrs.get("ratio", 0.5))
            training = not attrs.get("is_test", 0)
        else:
            ratio, training = float(attrs.get("ratio", 0.5)), False
        if training and ratio > 0:
            keep = rng.random(x.shape) >= (ratio if flaw != "drop-1-minus-ratio" else 1 - ratio)
            scale = {"scale-1-minus-ratio": 1 - ratio, "no-scale": 1.0}.get(flaw, 1 / (1 - ratio))
            y = np.where(keep, x.astype(np.float64) * scale, 0.0).astype(x.dtype)
        else:
            keep = np.ones(x.shape, dtype=bool)
            y = x.copy()
            if flaw == "always-scale":
                y = (x.astype(np.float64) / (1 - ratio)).astype(x.dtype)
        if flaw == "mask-false-in-inference" and not training:
            keep = np.zeros(x.shape, dtype=bool)
        if flaw == "mask-inverted":
            keep = ~keep
        res = {"output": y, "mask": keep if since >= 10 else keep.astype(x.dtype)}
        return {o: res[o] for o in outputs}

    return kernel


def _run_random(cases, kernel):
    """Run the suite's random cases on a kernel and apply check_dropout directly."""
    out = []
    backend = KernelBackend({OP: kernel}, check=False)
    for c in cases:
        prepared = backend.prepare(c.model, c.model_bytes)
        names = [o.name for o in c.present_outputs]
        feeds = c.datasets[0].inputs
        got = dict(zip(names, backend.run(prepared, feeds, names)))
        node_inputs = {**{i.name: i.value for i in c.inputs if i.present and i.initializer}, **feeds}
        out.append(ref.check_dropout(node_inputs, got, c.attributes))
    return out


# ============================================================================ oracle
def test_inference_is_identity_bit_for_bit():
    x = np.array([np.nan, np.inf, -np.inf, -0.0, 5e-324, 1.5])
    y, m = ref.dropout_inference(x)
    assert y.tobytes() == x.tobytes() and m.all() and m.dtype == bool
    with pytest.raises(ValueError):
        ref.validate_ratio(1.0)
    with pytest.raises(ValueError):
        ref.validate_ratio(-0.1)
    ref.validate_ratio(0.0)


def test_bound_false_alarm_rate():
    # Hoeffding half-width: 2 exp(-2 n t^2) = alpha
    t = ref.dropped_fraction_bound(4096, 1e-6)
    assert 2 * np.exp(-2 * 4096 * t * t) == pytest.approx(1e-6)
    # empirical: a correct kernel passes 300 trials at several ratios and dtypes
    rng = np.random.default_rng(0)
    for trial in range(300):
        ratio = [0.1, 0.5, 0.9][trial % 3]
        dt = [np.float16, np.float32, np.float64][trial % 3]
        ratio = float(np.float32(ratio))  # as fed (float32 input) and as an attribute
        x = (rng.normal(size=2048) + 3).astype(dt)
        keep = rng.random(x.shape) >= ratio
        y = np.where(keep, x.astype(np.float64) / (1 - ratio), 0).astype(dt)
        ok, msg = ref.check_dropout({"data": x, "ratio": np.float32(ratio)}, {"output": y, "mask": keep}, {})
        assert ok, msg
        ok, msg = ref.check_dropout({"data": x}, {"output": y}, {"ratio": ratio})
        assert ok, msg


def test_check_catches_hand_made_errors():
    rng = np.random.default_rng(1)
    x = rng.normal(size=4096) + 3
    keep = rng.random(x.shape) >= 0.3
    good = np.where(keep, x / 0.7, 0.0)
    assert ref.check_dropout({"data": x, "ratio": 0.3}, {"output": good, "mask": keep}, {})[0]
    assert not ref.check_dropout({"data": x, "ratio": 0.3}, {"output": np.where(keep, x * 0.7, 0.0)}, {})[0]
    assert not ref.check_dropout({"data": x, "ratio": 0.3}, {"output": good, "mask": ~keep}, {})[0]
    drop7 = rng.random(x.shape) >= 0.7
    assert not ref.check_dropout({"data": x, "ratio": 0.3}, {"output": np.where(drop7, x / 0.7, 0.0)}, {})[0]
    assert not ref.check_dropout({"data": x, "ratio": 0.3}, {"output": good.astype(np.float32)}, {})[0]


# ============================================================================ suite
def test_generation_is_deterministic(suite):
    assert [c.id for c in _generate(0)] == [c.id for c in suite]
    assert [c.id for c in _generate(1)] != [c.id for c in suite]


def test_coverage(suite):
    assert 150 <= len(suite) <= 300
    vals = [c for c in suite if c.expect_error is None]
    assert {(c.since_version, c.tags["dtype"]) for c in vals} == {
        (v, t) for v in gen.VERSIONS for t in gen.dtypes_of(v)}
    for v in (12, 13, 22):
        vc = [c for c in vals if c.since_version == v]
        assert {str(c.tags["training_mode"]) for c in vc} == {"absent", "False", "True"}
        assert {c.tags["ratio_input"] for c in vc} == {"absent"} | set(gen.ratio_dtypes_of(v))
        assert {c.tags["outputs"] for c in vc} == {"output", "output,mask"}
        assert {c.tags["params"] for c in vc} == {"inputs", "initializers"}
        assert any(c.tags.get("seed") for c in vc)
    assert {c.opset for c in suite} >= {o for v in gen.VERSIONS for o in gen.OPSETS[v]}
    rnd = [c for c in suite if c.tags.get("random")]
    assert rnd and all(c.check == "conformance.reference.dropout:check_dropout" and c.skip is None for c in rnd)
    assert all(c.check is None and c.skip is None for c in suite if not c.tags.get("random"))
    assert {c.since_version for c in rnd} == {1, 6, 12, 13, 22}
    assert any(c.tags["numerics"] == "special" for c in vals)
    assert {c.since_version for c in suite if c.expect_error} == {12, 13, 22}


# ============================================================================ kernels
@pytest.mark.parametrize("seed", (0, 1))
def test_legitimate_kernel_passes_everything(seed, suite):
    results = run_cases(suite, KernelBackend({OP: make_kernel(seed=seed)}))
    bad = [(r.id, r.outcome, r.message[:300]) for r in results if r.outcome != "pass"]
    assert not bad, bad[:5]
    rnd = [c for c in suite if c.tags.get("random")]
    checks = _run_random(rnd, make_kernel(seed=seed))
    assert all(ok for ok, _ in checks), [m for ok, m in checks if not ok]


@pytest.mark.parametrize("flaw", ("mask-false-in-inference", "always-scale", "train-if-ratio-given", "mask-inverted"))
def test_wrong_kernel_is_caught_by_the_runner(flaw, suite):
    results = run_cases(suite, KernelBackend({OP: make_kernel(flaw=flaw)}, check=False))
    assert Counter(r.outcome for r in results)["fail"] >= 1


@pytest.mark.parametrize("flaw", ("scale-1-minus-ratio", "no-scale", "drop-1-minus-ratio", "mask-inverted"))
def test_wrong_training_kernel_is_caught_by_check_dropout(flaw, suite):
    """Training-mode flaws show only on the random cases, which the runner judges with
    their Case.check (check_dropout); the deterministic cases alone miss scale-1-minus-ratio."""
    rnd = [c for c in suite if c.tags.get("random")]
    checks = _run_random(rnd, make_kernel(flaw=flaw))
    assert sum(not ok for ok, _ in checks) >= 1
    results = run_cases(suite, KernelBackend({OP: make_kernel(flaw=flaw)}, check=False))
    fails = [r for r in results if r.outcome == "fail"]
    assert any(r.tags.get("random") for r in fails)
    if flaw == "scale-1-minus-ratio":  # not catchable by the deterministic cases
        assert all(r.tags.get("random") for r in fails)


def test_random_cases_go_through_bundles_and_isolation(suite, tmp_path):
    from conformance.bundle import read_bundle, write_bundle
    from conformance.isolation import run_isolated
    from conformance.suite import Suite

    rnd = [c for c in suite if c.tags.get("random")][:6]
    back = read_bundle(write_bundle(Suite(cases=rnd), tmp_path / "b"))
    assert (tmp_path / "b" / "checks").is_dir() and not (tmp_path / "b" / "cases").exists()
    assert [c.check for c in back.cases] == [c.check for c in rnd]
    good = run_isolated(back.cases, KernelBackend({OP: make_kernel(seed=0)}), jobs=1)
    assert {r.outcome for r in good} == {"pass"}
    bad = run_isolated(back.cases, KernelBackend({OP: make_kernel(flaw="scale-1-minus-ratio")}), jobs=1)
    assert {r.outcome for r in bad} == {"fail"} and all("data" in r.message or r.message for r in bad)


# ============================================================================ onnx.reference
def _ref(cases):
    return run_cases(cases, resolve_backend("onnx-reference"))


def test_onnx_reference_agrees_from_version_7(suite):
    cases = [c for c in suite if c.since_version >= 7 and c.expect_error is None and c.tags["dtype"] != "bfloat16"
             and not c.tags.get("random")]
    bad = [(r.id, r.message[:200]) for r in _ref(cases) if r.outcome not in ("pass", "skip")]
    assert not bad, bad[:5]


def test_disagreement_onnx_reference_accepts_ratio_out_of_range(suite):
    errs = [c for c in suite if c.expect_error]
    assert Counter(r.outcome for r in _ref(errs))["fail"] >= 1


def test_disagreement_onnx_reference_bfloat16_training_returns_float32(suite):
    cases = [c for c in suite if c.tags["dtype"] == "bfloat16" and c.tags.get("numerics") == "zero"]
    assert any("dtype float32" in r.message for r in _ref(cases))
