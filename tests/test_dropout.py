"""Tests of the Dropout oracle (versions 1, 6, 7, 10, 12, 13, 22), its generator and the statistical check.

* inference is the identity (bit for bit) with an all-true mask;
* :func:`conformance.reference.dropout.check_dropout`: a correct training kernel passes it over
  many trials (false alarms bounded), wrong kernels (scale ``1 - ratio``, no scaling,
  dropping ``1 - ratio``, an inconsistent mask) are caught on the suite's random cases;
* the runner: legitimate kernels pass every deterministic case (random ones are
  skipped), wrong kernels fail some;
* onnx.reference disagreements asserted; determinism and coverage;
* float8 (version 22): every (T, T1) pair covered (computed from the models), identity
  cases keep the float8 special values bit for bit, legitimate roundings of
  ``x / (1 - ratio)`` pass and wrong kernels fail, bundles round-trip, onnxruntime says
  ``unsupported`` cleanly, onnx.reference's outcomes recorded.
"""

from __future__ import annotations

import re
from collections import Counter

import numpy as np
import pytest

import conformance.generators.dropout as gen
from conformance import dtypes, registry
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


def _kept(x, ratio, flaw, rt):
    """Kept values ``x / (1 - ratio)`` in ``x``'s dtype as a kernel computes them (``flaw``).

    Legitimate: ``None`` (float64 product, numpy/ml_dtypes cast), ``scale-in-T`` (scale rounded
    to T first), ``float32`` (scale and product in float32).  Decided per type:
    ``via-float16`` (product rounded to float16, then to T), ``scale-in-T1`` (scale computed
    in the ratio's type ``rt``).  Wrong: ``scale-1-minus-ratio``, ``no-scale``.
    """
    t = dtypes.elem_type(x.dtype)
    x64 = x.astype(np.float64)
    if flaw == "scale-1-minus-ratio":
        return dtypes.round_to(x64 * (1 - ratio), t)
    if flaw == "no-scale":
        return x.copy()
    if flaw == "scale-in-T":
        return dtypes.round_to(x64 * float(dtypes.round_to(np.float64(1 / (1 - ratio)), t).astype(np.float64)), t)
    if flaw == "float32":
        return (x64.astype(np.float32) * np.float32(1 / (1 - ratio))).astype(np.float32).astype(x.dtype)
    if flaw == "via-float16":
        return dtypes.round_to((x64 / (1 - ratio)).astype(np.float16).astype(np.float64), t)
    if flaw == "scale-in-T1" and rt is not None:
        r = np.asarray(ratio, dtype=np.float64)
        one = dtypes.round_to(np.float64(1.0), rt)
        s = dtypes.round_to(1.0 / dtypes.round_to(one.astype(np.float64) - r, rt).astype(np.float64), rt)
        return dtypes.round_to(x64 * s.astype(np.float64), t)
    return (x64 / (1 - ratio)).astype(x.dtype)


def make_kernel(flaw=None, seed=0):
    """A numpy Dropout for every version; ``flaw`` names a deliberate error (or a
    rounding variant, see :func:`_kept`)."""
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
            if dtypes.is_float8(x.dtype) or flaw in ("scale-in-T", "float32", "via-float16", "scale-in-T1"):
                rt = dtypes.elem_type(inputs["ratio"].dtype) if "ratio" in inputs else None
                y = np.where(keep, _kept(x, ratio, flaw, rt), dtypes.round_to(np.float64(0), dtypes.elem_type(x.dtype)))
            else:
                scale = {"scale-1-minus-ratio": 1 - ratio, "no-scale": 1.0}.get(flaw, 1 / (1 - ratio))
                y = np.where(keep, x.astype(np.float64) * scale, 0.0).astype(x.dtype)
        else:
            keep = np.ones(x.shape, dtype=bool)
            y = x.copy()
            if flaw == "always-scale":
                y = (x.astype(np.float64) / (1 - ratio)).astype(x.dtype)
            if flaw == "negative-zero-flip":
                y = np.where(x.astype(np.float64) == 0, np.zeros((), x.dtype), x)
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
    assert 350 <= len(suite) <= 500
    vals = [c for c in suite if c.expect_error is None]
    assert {(c.since_version, c.tags["dtype"]) for c in vals} == {
        (v, t) for v in gen.VERSIONS for t in gen.dtypes_of(v)}
    assert set(gen.dtypes_of(22)) == set(gen.ratio_dtypes_of(22)) and len(gen.dtypes_of(22)) == 8
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
             and not c.tags.get("random") and not (c.tags["dtype"] in gen.FLOAT8_NAMES and c.tags["numerics"] == "zero")]
    bad = [(r.id, r.message[:200]) for r in _ref(cases) if r.outcome not in ("pass", "skip")]
    assert not bad, bad[:5]


def test_disagreement_onnx_reference_accepts_ratio_out_of_range(suite):
    errs = [c for c in suite if c.expect_error]
    assert Counter(r.outcome for r in _ref(errs))["fail"] >= 1


def test_disagreement_onnx_reference_bfloat16_training_returns_float32(suite):
    cases = [c for c in suite if c.tags["dtype"] == "bfloat16" and c.tags.get("numerics") == "zero"]
    assert any("dtype float32" in r.message for r in _ref(cases))


# ============================================================================ float8 (version 22)
F8 = gen.FLOAT8_NAMES


def _f8(suite):
    return [c for c in suite if c.since_version == 22 and (c.tags["dtype"] in F8 or c.tags.get("ratio_input") in F8)]


def test_float8_coverage_is_complete_from_the_models(suite):
    from conformance.coverage import compute_coverage

    cov = compute_coverage(suite)
    versions = cov["ops"]["Dropout"]["versions"]
    v22 = versions["22"]
    assert v22["total_combinations"] == 64 and len(v22["covered"]) == 64 and v22["gaps"] == 0 and not v22["missing"]
    assert "T=float8e5m2fnuz, T1=float8e4m3fn, T2=bool" in v22["covered"]
    assert "T=double, T1=float8e5m2, T2=bool" in v22["covered"]
    assert all(e["gaps"] == 0 and len(e["covered"]) == e["total_combinations"] for e in versions.values())
    assert not cov["unmatched"]
    # without the float8 cases the 48 float8 pairs are gaps (the coverage is measured, not declared)
    f8_ids = {c.id for c in _f8(suite)}
    base = compute_coverage([c for c in suite if c.id not in f8_ids])["ops"]["Dropout"]["versions"]["22"]
    assert base["gaps"] == 48 and len(base["covered"]) == 16


def test_float8_cases_do_not_disturb_the_others(suite):
    f8 = _f8(suite)
    legacy = [c for c in suite if c.tags.get("legacy")]
    assert suite[-len(f8) - len(legacy):] == f8 + legacy  # generated after every earlier case, from own rng streams
    assert [c.since_version for c in legacy] == [1, 1, 1] and all(c.attributes["consumed_inputs"] == [0] for c in legacy)
    assert len(f8) == 4 * 19 + 48 * 2
    ids = [c.id for c in suite]
    assert len(set(ids)) == len(ids)


def test_float8_ratios_are_exact_and_data_cannot_overflow(suite):
    for c in _f8(suite):
        node_inputs = {**{i.name: i.value for i in c.inputs if i.present and i.initializer}, **c.datasets[0].inputs}
        if "ratio" in node_inputs:
            r = node_inputs["ratio"]
            assert dtypes.type_name(dtypes.elem_type(r.dtype)) == c.tags["ratio_input"]
            assert float(np.asarray(r).astype(np.float64)) == c.tags["ratio"]  # exact in T1
        x = node_inputs["data"]
        assert dtypes.type_name(dtypes.elem_type(x.dtype)) == c.tags["dtype"]
        if c.tags.get("random"):
            r = float(np.asarray(node_inputs.get("ratio", 0.5)).astype(np.float64))
            assert r in (0.5, 0.25, 0.375)
            x64 = x.astype(np.float64)
            assert np.isfinite(x64).all() and (x64 != 0).all()
            assert np.abs(x64).max() / (1 - r) < float(dtypes.finfo(x.dtype).max) / 4


@pytest.mark.parametrize("tname", F8)
def test_float8_identity_cases_keep_special_values_bit_for_bit(tname, suite):
    t = dtypes.elem_type(tname)
    cases = [c for c in suite if c.since_version == 22 and c.tags["dtype"] == tname and c.expect_error is None
             and not c.tags.get("random") and c.tags["numerics"] == "special"]
    assert len(cases) >= 10
    seen = set()
    for c in cases:
        x, y = c.datasets[0].inputs["data"], c.datasets[0].outputs["output"]
        assert y.dtype == x.dtype == dtypes.np_dtype(t) and y.tobytes() == x.tobytes()
        assert c.outputs[0].tolerance.exact
        x64 = x.astype(np.float64)
        seen |= {"nan"} if np.isnan(x64).any() else set()
        seen |= {"inf"} if np.isinf(x64).any() else set()
        seen |= {"-0"} if (np.signbit(x64) & (x64 == 0)).any() else set()
        seen |= {"subnormal"} if ((x64 != 0) & (np.abs(x64) < float(dtypes.finfo(t).smallest_normal))).any() else set()
        seen |= {"max"} if (np.abs(x64) == float(dtypes.finfo(t).max)).any() else set()
    want = {"nan", "subnormal", "max"} | ({"inf"} if tname == "float8e5m2" else set()) | (
        {"-0"} if tname in ("float8e4m3fn", "float8e5m2") else set())
    assert seen == want
    assert gen.special_values(t)[0] != gen.special_values(t)[0]  # NaN first


def test_float8_kernels_legitimate_roundings_pass(suite):
    f8 = _f8(suite)
    for flaw in (None, "scale-in-T", "float32", "via-float16"):
        cases = [c for c in f8 if flaw != "via-float16" or c.tags["dtype"] in F8]  # float16 routing: float8 T only
        results = run_cases(cases, KernelBackend({OP: make_kernel(flaw=flaw, seed=2)}))
        bad = [(r.id, r.message[:200]) for r in results if r.outcome != "pass"]
        assert not bad, (flaw, bad[:3])


@pytest.mark.parametrize("flaw", ("scale-1-minus-ratio", "no-scale", "drop-1-minus-ratio", "mask-inverted"))
def test_float8_wrong_training_kernels_are_caught(flaw, suite):
    rnd = [c for c in suite if c.since_version == 22 and c.tags["dtype"] in F8 and c.tags.get("random")]
    results = run_cases(rnd, KernelBackend({OP: make_kernel(flaw=flaw)}, check=False))
    failed = {r.tags["dtype"] for r in results if r.outcome == "fail"}
    assert failed == set(F8)  # caught for every float8 type
    if flaw == "scale-1-minus-ratio":
        assert all(r.outcome == "fail" and "neither 0 nor data/(1-ratio)" in r.message for r in results)


def test_float8_tolerance_is_tight_enough():
    """An ulp tolerance would accept scaling by (1 - ratio) in float8e5m2; kept_value_range does not."""
    t = dtypes.elem_type("float8e5m2")
    x = dtypes.round_to(np.random.default_rng(0).normal(size=4096) * 2 + 0.01, t)
    x = x[x.astype(np.float64) != 0]
    for r in (0.5, 0.25, 0.375):
        keep = np.random.default_rng(1).random(x.shape) >= r
        good = np.where(keep, _kept(x, r, None, None), np.zeros((), x.dtype))
        wrong = np.where(keep, _kept(x, r, "scale-1-minus-ratio", None), np.zeros((), x.dtype))
        ratio = dtypes.round_to(np.float64(r), t)
        assert ref.check_dropout({"data": x, "ratio": ratio}, {"output": good, "mask": keep}, {})[0]
        ok, msg = ref.check_dropout({"data": x, "ratio": ratio}, {"output": wrong, "mask": keep}, {})
        assert not ok and "neither 0" in msg
        # one float8 ulp beyond the legitimate range is rejected too
        lo, hi = ref.kept_value_range(x, r)
        assert (lo <= hi).all() and ((hi - lo) <= 0.25 * np.abs(hi)).all()


def test_float8_via_float16_is_indistinguishable_but_caught_for_float32_data():
    """Routing the product through float16 gives the correctly rounded float8 result for every
    float8 value at the suite's ratios (so it is no flaw there); for float data it is caught."""
    for tname in F8:
        t = dtypes.elem_type(tname)
        x = np.arange(256, dtype=np.uint8).view(dtypes.np_dtype(t))
        x = x[np.isfinite(x.astype(np.float64)) & (np.abs(x.astype(np.float64)) < 64)]
        for r in (0.5, 0.25, 0.375):
            assert _kept(x, r, "via-float16", None).tobytes() == dtypes.round_to(x.astype(np.float64) / (1 - r), t).tobytes()
    x = (np.random.default_rng(3).normal(size=4096) + 3).astype(np.float32)
    keep = np.random.default_rng(4).random(x.shape) >= 0.375
    y = np.where(keep, _kept(x, 0.375, "via-float16", None), np.float32(0))
    assert not ref.check_dropout({"data": x, "ratio": np.float32(0.375)}, {"output": y, "mask": keep}, {})[0]


def test_scale_in_ratio_type_is_rejected(suite):
    """A scale computed in T1 (float8e5m2: 1/(1-0.375) = 1.5, not 1.6; 1/(1-0.25) = 1.25, not
    1.33) is not a legitimate variant."""
    cases = [c for c in suite if c.tags.get("pair") and c.tags.get("random") and c.tags["dtype"] in ("float", "double")
             and c.tags["ratio"] in (0.25, 0.375) and c.tags["ratio_input"] in F8]
    assert len(cases) >= 4
    results = run_cases(cases, KernelBackend({OP: make_kernel(flaw="scale-in-T1")}, check=False))
    assert {r.outcome for r in results} == {"fail"}


def test_negative_zero_flip_is_caught(suite):
    """Decision: ``output = scale * data * mask`` with every element kept gives -0 for -0 data
    (IEEE), and inference is the identity, so a kernel that returns +0 for -0 is wrong.  The
    identity outputs' tolerance checks the sign of zero (``Tolerance.signed_zero``)."""
    cases = [c for c in suite if c.since_version == 22 and c.tags["dtype"] in ("float8e4m3fn", "float8e5m2")
             and c.tags["numerics"] == "special" and c.tags["mode"] == "inference"]
    with_neg_zero = [c for c in cases if (np.signbit(c.datasets[0].outputs["output"].astype(np.float64))
                                          & (c.datasets[0].outputs["output"].astype(np.float64) == 0)).any()]
    assert with_neg_zero
    kernel = make_kernel(flaw="negative-zero-flip")
    for c in with_neg_zero:
        got = kernel(dict(c.datasets[0].inputs), {}, ["output"], c.opset)["output"]
        assert got.tobytes() != c.datasets[0].outputs["output"].tobytes()
    results = run_cases(with_neg_zero, KernelBackend({OP: kernel}))
    assert {r.outcome for r in results} == {"fail"}
    assert all("zero(s) of the wrong sign" in r.message for r in results)
    assert {r.outcome for r in run_cases(with_neg_zero, KernelBackend({OP: make_kernel()}))} == {"pass"}


def test_float8_cases_through_a_bundle(suite, tmp_path):
    from conformance.bundle import BundleError, read_bundle, write_bundle
    from conformance.suite import Suite

    f8 = _f8(suite)
    pick = [c for c in f8 if c.tags["numerics"] == "special"][:6] + [c for c in f8 if c.tags.get("random")][:3] + [
        c for c in f8 if c.expect_error][:2]
    back = read_bundle(write_bundle(Suite(cases=pick), tmp_path / "b"), verify=True)
    assert [c.id for c in back.cases] == [c.id for c in pick]
    for a, b in zip(pick, back.cases):
        for name, v in a.datasets[0].inputs.items():
            w = b.datasets[0].inputs[name]
            assert w.dtype == v.dtype and w.tobytes() == v.tobytes()
        for name, v in a.datasets[0].outputs.items():
            if a.check is None and a.expect_error is None:
                assert b.datasets[0].outputs[name].tobytes() == v.tobytes()
    assert {r.outcome for r in run_cases(back.cases, KernelBackend({OP: make_kernel(seed=1)}))} == {"pass"}
    # an edited float8 input is detected by the hash check
    victim = next((tmp_path / "b" / "cases").iterdir()) / "test_data_set_0" / "input_0.pb"
    raw = bytearray(victim.read_bytes())
    raw[-1] ^= 0x01
    victim.write_bytes(bytes(raw))
    with pytest.raises(BundleError, match="hash"):
        read_bundle(tmp_path / "b", verify=True)


def test_float8_onnxruntime_says_unsupported_cleanly(suite):
    pytest.importorskip("onnxruntime")
    f8 = _f8(suite)
    results = run_cases(f8, resolve_backend("onnxruntime"))
    outcomes = Counter(r.outcome for r in results)
    # onnxruntime 1.31 has no Dropout-22 kernel for float8 T or T1 (nor opsets 26 / 28)
    assert set(outcomes) <= {"unsupported", "pass"}, outcomes
    # a pass can only be the rejection of an invalid ratio (whether a rejection for want of a
    # kernel scores pass or unsupported on an error case is the runner's business)
    assert all(r.expect_error for r in results if r.outcome == "pass")
    assert all(r.outcome == "unsupported" for r in results if not r.expect_error)
    assert all("NOT_IMPLEMENTED" in r.message or "Unsupported model IR version" in r.message
               for r in results if r.outcome == "unsupported")


def test_float8_onnx_reference_outcomes(suite):
    """onnx.reference: the identity cases pass; float8 training returns float32 (the type
    of ``mask * X * scale`` in numpy), which disagrees with the spec's output type T; so does
    float16/bfloat16 data with a float8 ratio; a missing ratio input raises TypeError."""
    f8 = _f8(suite)
    results = {r.id: r for r in _ref(f8)}
    for c in f8:
        r = results[c.id]
        if c.expect_error:
            assert r.outcome == "fail"  # accepts ratio outside [0, 1) (as for the other types)
        elif c.tags["mode"] == "inference" or c.tags["ratio"] == 0.0:
            assert r.outcome == "pass", (c.id, r.message)
        elif c.tags["ratio_input"] == "absent":
            assert r.outcome == "error" and "TypeError" in r.message
        elif c.tags["dtype"] in F8 + ("float16", "bfloat16"):
            # float32 (float64 with a double ratio: numpy promotes ``mask * X * scale``)
            assert r.outcome == "fail" and re.search(r"float(32|64)(\[[0-9, ]*\])? != (data|expected)", r.message), (
                c.id, r.message)
        else:  # float / double data with a float8 ratio: computed right
            assert r.outcome == "pass", (c.id, r.message)
