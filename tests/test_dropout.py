"""Tests of the Dropout oracle (versions 1, 6, 7, 10, 12, 13, 22), its entry and the statistical check.

* inference is the identity (bit for bit) with an all-true mask;
* :func:`conformance.reference.dropout.check_dropout`: a correct training kernel passes it over
  many trials (false alarms bounded), wrong kernels (scale ``1 - ratio``, no scaling,
  dropping ``1 - ratio``, an inconsistent mask) are caught on the suite's random cases;
* the entry (:mod:`conformance.ops.dropout`): every numerics class is built only where the
  model has its mode (the mode recomputed from each case's attributes and inputs), every
  version / type / opset / optional input / output / attribute state from the schema is
  covered, the random cases have 4096 elements and a check;
* the runner: legitimate kernels pass every case (random ones through their check), wrong
  kernels fail some;
* the text's two readings of an absent ratio in training at 12 and 13 are both accepted,
  and only there;
* onnx.reference disagreements asserted; determinism;
* float8 (version 22): every (T, T1) pair covered (computed from the models), identity
  cases keep the float8 special values bit for bit, legitimate roundings of
  ``x / (1 - ratio)`` pass and wrong kernels fail, bundles round-trip, onnxruntime says
  ``unsupported`` cleanly, onnx.reference's outcomes recorded;
* explore mode: the engine's strategy draws cases whose class matches their mode, and a
  legitimate kernel passes them.
"""

from __future__ import annotations

import importlib
import re
from collections import Counter

import numpy as np
import pytest

from conformance import dtypes, registry
from conformance.backends import resolve_backend
from conformance.backends.kernel import KernelBackend
from conformance.opspec import op_spec
from conformance.ops import schedule
from conformance.reference import dropout as ref
from conformance.runner import run_cases

# load the families in the registry's order first: the entry module registers after the
# retired generator and so replaces it (imported earlier, the generator would win)
registry.available_ops()
from conformance.ops import dropout as entry_mod  # noqa: E402

OP = "Dropout"
SPEC = op_spec(OP)
VERSIONS = tuple(SPEC.since_versions)
#: Spec names of the float8 types (onnx's table through conformance.dtypes).
F8 = tuple(dtypes.type_name(t) for t in dtypes.FLOAT8_TYPES)
pytestmark = pytest.mark.filterwarnings("ignore::RuntimeWarning")


def _generate(seed):
    return registry.generate([OP], seed=seed)


@pytest.fixture(scope="module")
def suite():
    cases = _generate(0)
    assert {c.generator for c in cases} == {f"conformance.ops.engine.cases_Dropout@{registry.get(OP).version}"}
    return cases


def _types(v, formal):
    """Element type names a formal input of version ``v`` admits (from the schema)."""
    vs = SPEC.versions[v]
    ts = next(f.type_str for f in vs.inputs if f.name == formal)
    return {x[7:-1] for x in vs.type_constraints[ts]}


def _since(opset):
    return max(v for v in VERSIONS if v <= opset)


def _node_inputs(c):
    """Every present input by name, initializers included (what the node sees)."""
    return {**{i.name: i.value for i in c.inputs if i.present and i.initializer}, **c.datasets[0].inputs}


def _mode(c):
    """(training, ratio) of a case, recomputed from its attributes and inputs."""
    ni = _node_inputs(c)
    return ref.mode(c.since_version, c.attributes, ni.get("ratio"), ni.get("training_mode"))


def _ratio_type(c):
    r = next((i for i in c.inputs if i.name == "ratio"), None)
    return "absent" if r is None or not r.present else dtypes.type_name(r.elem_type)


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
    rounding variant, see :func:`_kept`; ``copy-if-ratio-absent`` is the other reading of
    the text at 12 and 13)."""
    rng = np.random.default_rng(seed)

    def kernel(inputs, attrs, outputs, opset):
        x = inputs["data"]
        since = _since(opset)
        if since >= 12:
            ratio = float(inputs["ratio"].astype(np.float64)) if "ratio" in inputs else 0.5
            training = bool(inputs["training_mode"]) if "training_mode" in inputs else False
            if flaw == "train-if-ratio-given" and "ratio" in inputs:
                training = True
            if flaw == "copy-if-ratio-absent" and "ratio" not in inputs:
                ratio = 0.0
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


def _check_fn(name):
    mod, fn = name.split(":")
    return getattr(importlib.import_module(mod), fn)


def _run_random(cases, kernel):
    """Run the suite's random cases on a kernel and apply each case's check directly."""
    out = []
    backend = KernelBackend({OP: kernel}, check=False)
    for c in cases:
        prepared = backend.prepare(c.model, c.model_bytes)
        names = [o.name for o in c.present_outputs]
        feeds = c.datasets[0].inputs
        got = dict(zip(names, backend.run(prepared, feeds, names)))
        out.append(_check_fn(c.check)(_node_inputs(c), got, c.attributes))
    return out


#: The classes whose cases are random training on 4096 nonzero elements.
RANDOM = ("random", "random-ratio-unset")


def _random(suite):
    rnd = [c for c in suite if c.check]
    assert rnd
    return rnd


# ============================================================================ oracle
def test_inference_is_identity_bit_for_bit():
    x = np.array([np.nan, np.inf, -np.inf, -0.0, 5e-324, 1.5])
    y, m = ref.dropout_inference(x)
    assert y.tobytes() == x.tobytes() and m.all() and m.dtype == bool
    y, m = ref.expected(22, {}, x)
    assert y.tobytes() == x.tobytes() and m.all() and m.dtype == bool
    with pytest.raises(ValueError):
        ref.validate_ratio(1.0)
    with pytest.raises(ValueError):
        ref.validate_ratio(-0.1)
    ref.validate_ratio(0.0)


def test_mode_from_the_schema():
    """The mode's source per version comes from the schema: is_test at 1 and 6, none at 7
    and 10, training_mode from 12; defaults are the schema's (is_test 0 trains, ratio 0.5)."""
    assert {v: ref.mode_source(v) for v in VERSIONS} == {
        1: "is_test", 6: "is_test", 7: None, 10: None, 12: "training_mode", 13: "training_mode", 22: "training_mode"}
    assert ref.mode(1, {}) == (True, 0.5)
    assert ref.mode(6, {"is_test": 1, "ratio": 0.2}) == (False, float(np.float32(0.2)))
    assert ref.mode(7, {"ratio": 0.9}) == (False, float(np.float32(0.9)))
    assert ref.mode(12, {}) == (False, 0.5)
    assert ref.mode(12, {}, None, np.bool_(True)) == (True, 0.5)
    assert ref.mode(22, {}, np.float16(0.25), np.bool_(False)) == (False, 0.25)
    # an all-zero input in training is deterministic unless the mask is requested
    assert not ref.random_outcome(22, {}, np.zeros(3), 0.5, True)
    assert ref.random_outcome(22, {}, np.zeros(3), 0.5, True, mask_requested=True)
    assert not ref.random_outcome(22, {}, np.ones(3), 0.0, True)


def test_unset_ratio_reading_comes_from_the_text():
    """12 and 13 say both 'If this input was not set ... a simple copy' and 'default to 0.5';
    22 keeps only the default."""
    assert [v for v in VERSIONS if ref.unset_ratio_is_copy(v)] == [12, 13]
    rng = np.random.default_rng(5)
    x = (rng.normal(size=4096) + 3).astype(np.float32)
    keep = rng.random(x.shape) >= 0.5
    drop = np.where(keep, x / np.float32(0.5), np.float32(0))
    assert ref.check_dropout_unset_ratio({"data": x}, {"output": x.copy(), "mask": np.ones(x.shape, bool)}, {})[0]
    assert ref.check_dropout_unset_ratio({"data": x}, {"output": drop, "mask": keep}, {})[0]
    # a copy with a mask that is not all true, a ratio-0.2 dropout, and scaling by 0.5: neither reading
    assert not ref.check_dropout_unset_ratio({"data": x}, {"output": x.copy(), "mask": keep}, {})[0]
    keep8 = rng.random(x.shape) >= 0.2
    assert not ref.check_dropout_unset_ratio({"data": x}, {"output": np.where(keep8, x / np.float32(0.8), 0)}, {})[0]
    assert not ref.check_dropout_unset_ratio({"data": x}, {"output": np.where(keep, x * np.float32(0.5), 0)}, {})[0]


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


def test_no_dependency_on_the_retired_generator():
    import pathlib

    src = pathlib.Path(entry_mod.__file__).read_text() + pathlib.Path(ref.__file__).read_text() + \
        pathlib.Path(__file__).read_text()
    assert "generators." + "dropout" not in src and "generators import " + "dropout" not in src


def test_coverage(suite):
    assert len(suite) >= 441  # the retired generator's count
    vals = [c for c in suite if c.expect_error is None]
    assert {(c.since_version, c.tags["dtype"]) for c in vals} == {(v, t) for v in VERSIONS for t in _types(v, "data")}
    assert set(F8) <= _types(22, "data") and _types(22, "data") == _types(22, "ratio") and len(F8) == 4
    for v in (v for v in VERSIONS if ref.mode_source(v) == "training_mode"):
        vc = [c for c in vals if c.since_version == v]
        tm = {"absent" if (x := _node_inputs(c).get("training_mode")) is None else bool(x) for c in vc}
        assert tm == {"absent", False, True}
        assert {_ratio_type(c) for c in vc} == {"absent"} | _types(v, "ratio")
        assert {c.tags["outputs"] for c in vc} == {"output", "output,mask"}
        assert {c.tags["inputs_as"] for c in vc} == {"inputs", "initializers"}
        assert any("seed" in c.attributes for c in vc)
        assert {c.tags["optional_inputs"] for c in vc} == {"none", "ratio", "training_mode", "ratio,training_mode"}
    for v in VERSIONS:
        assert {c.opset for c in vals if c.since_version == v} == set(schedule.opsets(SPEC, v))
        if ref.mode_source(v) != "training_mode":
            given = {tuple(sorted((k, x) for k, x in c.attributes.items() if k != "consumed_inputs"))
                     for c in vals if c.since_version == v}
            assert len(given) >= 4, (v, given)
    assert any(c.attributes.get("consumed_inputs") == [0] for c in vals if c.since_version == 1)
    # the mask is requested only where it is bool (from 10); before it has type T
    assert {c.since_version for c in vals if "mask" in c.tags["outputs"]} == {v for v in VERSIONS if v >= 10}
    # version 10's text does not say what the mask holds in inference: tagged
    assert {c.id for c in vals if c.tags.get("mask_semantics") == "inferred"} == {
        c.id for c in vals if c.since_version == 10 and "mask" in c.tags["outputs"]} != set()
    rnd = _random(suite)
    assert all(c.check in (ref.CHECK, ref.CHECK_UNSET) and c.skip is None for c in rnd)
    assert {c.since_version for c in rnd if c.tags["numerics"] == "random"} == {
        v for v in VERSIONS if ref.mode_source(v) is not None}
    assert {c.since_version for c in rnd if c.check == ref.CHECK_UNSET} == {12, 13}
    for name in entry_mod.INFERENCE + entry_mod.TRAINING:
        assert any(c.tags["numerics"] == name for c in vals), name
    assert {c.tags["rank"] for c in vals} >= {0, 1, 2, 3, 4} and any(c.tags.get("zero_size") for c in vals)
    errs = [c for c in suite if c.expect_error]
    assert {c.since_version for c in errs} == {12, 13, 22}
    assert {(c.since_version, c.tags["dtype"]) for c in errs} == {
        (v, t) for v in (12, 13, 22) for t in _types(v, "data")}
    for c in errs:
        ni = _node_inputs(c)
        assert bool(ni["training_mode"]) and not 0 <= float(ni["ratio"].astype(np.float64)) < 1


def test_numerics_classes_have_their_mode(suite):
    """The entry's numerics_rule: every class is built only where the model has its mode,
    recomputed here from the case's attributes and inputs."""
    vals = [c for c in suite if c.expect_error is None]
    for c in vals:
        training, r = _mode(c)
        x = c.datasets[0].inputs["data"].astype(np.float64)
        num = c.tags["numerics"]
        if num in entry_mod.INFERENCE:
            assert not training or r == 0, c.id
            assert c.check is None
        elif num == "train-ratio0":
            assert training and r == 0, c.id
            assert c.check is None
        else:
            assert training and r > 0, c.id
            if num == "zero-data":
                assert not x.any() and not np.signbit(x).any()
                assert (c.check is not None) == ("mask" in c.tags["outputs"])
            else:
                assert c.check is not None and x.size == entry_mod.LONG and np.isfinite(x).all() and (x != 0).all()
                assert ("ratio" in c.attributes or "ratio" in _node_inputs(c)) == (num == "random"), c.id
    # the random classes live on the 4096-element patterns only, which have no other class
    assert {c.tags["shape"] for c in vals if c.tags["numerics"] == "random"} == {"long/4x1024", "long/16x16x16"}
    assert {c.tags["shape"] for c in vals if c.tags["numerics"] == "random-ratio-unset"} == {"long/16x16x16"}
    assert {c.tags["numerics"] for c in vals if c.tags["shape"].startswith("long")} == set(RANDOM)
    # versions without a mode have inference classes only
    assert {c.tags["numerics"] for c in vals if ref.mode_source(c.since_version) is None} == set(entry_mod.INFERENCE)


def test_deterministic_expectations_are_the_identity_or_zeros(suite):
    det = [c for c in suite if c.expect_error is None and c.check is None]
    assert len(det) >= 500
    for c in det:
        x, y = c.datasets[0].inputs["data"], c.datasets[0].outputs["output"]
        assert y.dtype == x.dtype and y.tobytes() == x.tobytes()
        assert c.outputs[0].tolerance.exact and c.outputs[0].tolerance.signed_zero
        if "mask" in c.datasets[0].outputs:
            m = c.datasets[0].outputs["mask"]
            assert m.dtype == np.bool_ and m.all() and m.shape == x.shape


# ============================================================================ kernels
@pytest.mark.parametrize("seed", (0, 1))
def test_legitimate_kernel_passes_everything(seed, suite):
    results = run_cases(suite, KernelBackend({OP: make_kernel(seed=seed)}))
    bad = [(r.id, r.outcome, r.message[:300]) for r in results if r.outcome != "pass"]
    assert not bad, bad[:5]
    checks = _run_random(_random(suite), make_kernel(seed=seed))
    assert all(ok for ok, _ in checks), [m for ok, m in checks if not ok]


@pytest.mark.parametrize("flaw", ("mask-false-in-inference", "always-scale", "train-if-ratio-given", "mask-inverted"))
def test_wrong_kernel_is_caught_by_the_runner(flaw, suite):
    results = run_cases(suite, KernelBackend({OP: make_kernel(flaw=flaw)}, check=False))
    assert Counter(r.outcome for r in results)["fail"] >= 1


@pytest.mark.parametrize("flaw", ("scale-1-minus-ratio", "no-scale", "drop-1-minus-ratio", "mask-inverted"))
def test_wrong_training_kernel_is_caught_by_check_dropout(flaw, suite):
    """Training-mode flaws show only on the random cases, which the runner judges with
    their Case.check (check_dropout); the deterministic cases alone miss scale-1-minus-ratio."""
    rnd = _random(suite)
    checks = _run_random(rnd, make_kernel(flaw=flaw))
    assert sum(not ok for ok, _ in checks) >= 1
    results = run_cases(suite, KernelBackend({OP: make_kernel(flaw=flaw)}, check=False))
    fails = [r for r in results if r.outcome == "fail"]
    checked = {c.id for c in rnd}
    assert any(r.id in checked for r in fails)
    if flaw == "scale-1-minus-ratio":  # not catchable by the deterministic cases
        assert all(r.id in checked for r in fails)


def test_both_readings_of_an_absent_ratio_pass_at_12_and_13_only(suite):
    """A kernel that copies when training without a ratio follows the text of 12 and 13 (and
    passes every case there); version 22 says only 'default to 0.5', where it is caught."""
    unset = [c for c in suite if c.check and "ratio" not in _node_inputs(c) and ref.mode_source(c.since_version)
             == "training_mode"]
    assert {c.since_version for c in unset} == {12, 13, 22}
    kernel = make_kernel(flaw="copy-if-ratio-absent")
    by_v = {v: Counter(r.outcome for r in run_cases([c for c in suite if c.since_version == v],
                                                     KernelBackend({OP: kernel})))
            for v in (12, 13, 22)}
    assert set(by_v[12]) == {"pass"} and set(by_v[13]) == {"pass"}
    assert by_v[22]["fail"] >= 1
    assert {ok for ok, _ in _run_random([c for c in unset if c.since_version < 22], kernel)} == {True}


def test_random_cases_go_through_bundles_and_isolation(suite, tmp_path):
    from conformance.bundle import read_bundle
    from conformance.bundle_write import write_bundle
    from conformance.isolation import run_isolated
    from conformance.suite import Suite

    rnd = _random(suite)[:6]
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


def _ref_training_dtype(c):
    """The dtype onnx.reference gives a training output: ``mask * X * (1.0 / (1.0 - ratio))``
    in numpy, with ``ratio`` a 0-d array of T1 (not a weak scalar), so T and T1 promote."""
    ni = _node_inputs(c)
    x, r = ni["data"], ni["ratio"]
    return (np.zeros(1, bool) * np.zeros(1, x.dtype) * (1.0 / (1.0 - np.zeros((), r.dtype)))).dtype


def _ref_outcome(c):
    """onnx.reference's outcome on a case of version 7 and later, and why: its training
    formula (``mask * X * (1.0 / (1.0 - ratio))`` with ``ratio`` a 0-d array of T1) is
    evaluated here on the case's data and judged by the case's own check."""
    training, ratio = _mode(c)
    if c.expect_error:
        return "fail", "accepts a ratio outside [0, 1)"
    if not training or ratio == 0:
        return "pass", "identity"
    ni = _node_inputs(c)
    if "ratio" not in ni:
        return "error", "absent ratio in training"
    x = ni["data"]
    if _ref_training_dtype(c) != x.dtype:
        return "fail", "T and T1 promote"
    if c.check is None:
        return "pass", "training computed right"
    keep = np.random.default_rng(0).random(x.shape) >= ratio
    y = keep * x * (1.0 / (1.0 - ni["ratio"]))
    ok, _ = _check_fn(c.check)(ni, {"output": y, "mask": keep}, c.attributes)
    return ("pass", "training computed right") if ok else ("fail", "scale rounded to T1")


def test_onnx_reference_outcomes(suite):
    """onnx.reference from version 7: every inference and ratio-0 case passes; training is
    right where the output keeps T, and three disagreements (who is right: the spec, in each):
    a ratio outside [0, 1) is accepted; an absent ratio in training raises TypeError
    (``ratio`` is passed as None: the text makes the input optional, default 0.5); the
    training output has the promoted type of T and T1 (float16 data with a float ratio give
    float32; bfloat16 and float8 data always float32 or float64) where the text says T; and
    with float data and a float16 or bfloat16 ratio the scale is rounded to T1 (the
    suite's decision, :mod:`conformance.reference.dropout`: the scale is a function of the
    ratio's value, computed in at least T)."""
    cases = [c for c in suite if c.since_version >= 7]
    results = {r.id: r for r in _ref(cases)}
    seen = Counter()
    for c in cases:
        want, why = _ref_outcome(c)
        r = results[c.id]
        assert r.outcome == want, (c.id, why, r.message[:200])
        if why == "absent ratio in training":
            assert "TypeError" in r.message
        if why == "T and T1 promote":
            assert re.search(r"float(32|64)(\[[0-9, ]*\])? != (data|expected)", r.message), (c.id, r.message)
        seen[why] += 1
    assert set(seen) == {"identity", "accepts a ratio outside [0, 1)", "absent ratio in training", "T and T1 promote",
                         "training computed right", "scale rounded to T1"}, seen
    assert seen["identity"] >= 300


def test_disagreement_onnx_reference_promotes_bfloat16_and_mixed_types(suite):
    """The smallest witnesses: bfloat16 data and float16 data with a float ratio, on all-zero
    data in training (deterministic: zeros), come back float32 / float64."""
    cases = [c for c in suite if c.tags.get("numerics") == "zero-data" and not c.check and "ratio" in _node_inputs(c)
             and c.tags["dtype"] in ("bfloat16", "float16")]
    promoted = [c for c in cases if _ref_training_dtype(c) != c.datasets[0].inputs["data"].dtype]
    assert {c.tags["dtype"] for c in promoted} == {"bfloat16", "float16"}
    assert {r.outcome for r in _ref(promoted)} == {"fail"}


# ============================================================================ float8 (version 22)
def _f8(suite):
    return [c for c in suite if c.since_version == 22 and (c.tags["dtype"] in F8 or _ratio_type(c) in F8)]


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


def test_every_float8_pair_has_inference_and_random_cases(suite):
    """Every (T, T1) pair with a float8 type has a random case and a deterministic one with
    the ratio of type T1 in the model (the old generator's pair cases)."""
    vals = [c for c in _f8(suite) if c.expect_error is None]
    pairs = {(c.tags["dtype"], _ratio_type(c)) for c in vals}
    f8_pairs = {(t, r) for t in _types(22, "data") for r in _types(22, "ratio") if t in F8 or r in F8}
    assert len(f8_pairs) == 48 and f8_pairs <= pairs
    for t, r in f8_pairs:
        mine = [c for c in vals if (c.tags["dtype"], _ratio_type(c)) == (t, r)]
        assert any(c.tags["numerics"] == "random" for c in mine) and any(not c.check for c in mine), (t, r)
    for t in F8:  # every class for every float8 data type
        assert {c.tags["numerics"] for c in vals if c.tags["dtype"] == t} == set(entry_mod.INFERENCE + entry_mod.TRAINING)
    ids = [c.id for c in suite]
    assert len(set(ids)) == len(ids)


def test_float8_ratios_are_exact_and_data_cannot_overflow(suite):
    seen = 0
    for c in _f8(suite):
        node_inputs = _node_inputs(c)
        x = node_inputs["data"]
        assert dtypes.type_name(dtypes.elem_type(x.dtype)) == c.tags["dtype"]
        if c.tags.get("numerics") in RANDOM:
            seen += 1
            r = float(np.asarray(node_inputs.get("ratio", 0.5)).astype(np.float64))
            assert r in entry_mod.RANDOM_RATIOS_FLOAT8
            x64 = x.astype(np.float64)
            assert np.isfinite(x64).all() and (x64 != 0).all()
            assert np.abs(x64).max() / (1 - r) < float(dtypes.finfo(x.dtype).max) / 4
    assert seen >= 60  # the retired generator's float8 random cases
    # every ratio of a float8 case is exact in its type
    for r in entry_mod.RANDOM_RATIOS_FLOAT8 + entry_mod.INFERENCE_RATIOS:
        for t in F8:
            assert float(dtypes.round_to(np.float64(r), dtypes.elem_type(t)).astype(np.float64)) == r


@pytest.mark.parametrize("tname", F8)
def test_float8_identity_cases_keep_special_values_bit_for_bit(tname, suite):
    t = dtypes.elem_type(tname)
    cases = [c for c in suite if c.since_version == 22 and c.tags["dtype"] == tname and c.expect_error is None
             and not c.check and c.tags["numerics"] in ("special", "train-ratio0")]
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
    assert ref.special_values(t)[0] != ref.special_values(t)[0]  # NaN first


def test_float8_kernels_legitimate_roundings_pass(suite):
    f8 = _f8(suite)
    for flaw in (None, "scale-in-T", "float32", "via-float16"):
        cases = [c for c in f8 if flaw != "via-float16" or c.tags["dtype"] in F8]  # float16 routing: float8 T only
        results = run_cases(cases, KernelBackend({OP: make_kernel(flaw=flaw, seed=2)}))
        bad = [(r.id, r.message[:200]) for r in results if r.outcome != "pass"]
        assert not bad, (flaw, bad[:3])


@pytest.mark.parametrize("flaw", ("scale-1-minus-ratio", "no-scale", "drop-1-minus-ratio", "mask-inverted"))
def test_float8_wrong_training_kernels_are_caught(flaw, suite):
    rnd = [c for c in suite if c.since_version == 22 and c.tags["dtype"] in F8 and c.tags.get("numerics") in RANDOM]
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
        for r in entry_mod.RANDOM_RATIOS_FLOAT8:
            assert _kept(x, r, "via-float16", None).tobytes() == dtypes.round_to(x.astype(np.float64) / (1 - r), t).tobytes()
    x = (np.random.default_rng(3).normal(size=4096) + 3).astype(np.float32)
    keep = np.random.default_rng(4).random(x.shape) >= 0.375
    y = np.where(keep, _kept(x, 0.375, "via-float16", None), np.float32(0))
    assert not ref.check_dropout({"data": x, "ratio": np.float32(0.375)}, {"output": y, "mask": keep}, {})[0]


def test_scale_in_ratio_type_is_rejected(suite):
    """A scale computed in T1 (float8e5m2: 1/(1-0.375) = 1.5, not 1.6; 1/(1-0.25) = 1.25, not
    1.33) is not a legitimate variant."""
    cases = [c for c in _f8(suite) if c.tags.get("numerics") == "random" and c.tags["dtype"] in ("float", "double")
             and _ratio_type(c) in F8 and _mode(c)[1] in (0.25, 0.375)]
    assert len(cases) >= 4
    results = run_cases(cases, KernelBackend({OP: make_kernel(flaw="scale-in-T1")}, check=False))
    assert {r.outcome for r in results} == {"fail"}


def test_negative_zero_flip_is_caught(suite):
    """Decision: ``output = scale * data * mask`` with every element kept gives -0 for -0 data
    (IEEE), and inference is the identity, so a kernel that returns +0 for -0 is wrong.  The
    identity outputs' tolerance checks the sign of zero (``Tolerance.signed_zero``)."""
    cases = [c for c in suite if c.expect_error is None and not c.check]
    with_neg_zero = [c for c in cases if (np.signbit(c.datasets[0].outputs["output"].astype(np.float64))
                                          & (c.datasets[0].outputs["output"].astype(np.float64) == 0)).any()]
    assert {c.tags["dtype"] for c in with_neg_zero} >= {"float16", "float", "double", "bfloat16",
                                                        "float8e4m3fn", "float8e5m2"}
    kernel = make_kernel(flaw="negative-zero-flip")
    results = run_cases(with_neg_zero, KernelBackend({OP: kernel}))
    assert {r.outcome for r in results} == {"fail"}
    assert all("zero(s) of the wrong sign" in r.message for r in results)
    assert {r.outcome for r in run_cases(with_neg_zero, KernelBackend({OP: make_kernel()}))} == {"pass"}


def test_float8_cases_through_a_bundle(suite, tmp_path):
    from conformance.bundle import BundleError, read_bundle
    from conformance.bundle_write import write_bundle
    from conformance.suite import Suite

    f8 = _f8(suite)
    pick = [c for c in f8 if c.tags.get("numerics") == "special"][:6] + [c for c in f8 if c.check][:3] + [
        c for c in f8 if c.expect_error][:2]
    assert len(pick) == 11
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
    # onnxruntime 1.32 has no Dropout-22 kernel for float8 T or T1 (nor opsets 26 / 28)
    assert set(outcomes) <= {"unsupported", "pass"}, outcomes
    # a pass can only be the rejection of an invalid ratio (whether a rejection for want of a
    # kernel scores pass or unsupported on an error case is the runner's business)
    assert all(r.expect_error for r in results if r.outcome == "pass")
    assert all(r.outcome == "unsupported" for r in results if not r.expect_error)
    assert all("NOT_IMPLEMENTED" in r.message or "Unsupported model IR version" in r.message
               for r in results if r.outcome == "unsupported" and not r.expect_error)


# ============================================================================ explore
def test_explore_strategy_draws_cases_of_their_mode():
    """Dropout's explore strategy (the engine's, from the entry) spans every version and
    class, keeps each class in its mode, and a legitimate kernel passes what it draws."""
    from hypothesis import HealthCheck, given, settings

    strat = registry.get_strategy(OP)
    drawn = []

    @settings(max_examples=120, derandomize=True, database=None, deadline=None,
              suppress_health_check=list(HealthCheck))
    @given(strat)
    def collect(c):
        drawn.append(c)

    collect()
    assert {c.since_version for c in drawn} == set(VERSIONS)
    assert {c.tags["numerics"] for c in drawn} == set(entry_mod.INFERENCE + entry_mod.TRAINING), (len(drawn), Counter(c.tags["numerics"] for c in drawn))
    for c in drawn:
        training, r = _mode(c)
        num = c.tags["numerics"]
        assert (not training or r == 0) if num in entry_mod.INFERENCE else training, c.id
        assert (r == 0) == (num == "train-ratio0") or num in entry_mod.INFERENCE, c.id
    results = run_cases(drawn, KernelBackend({OP: make_kernel(seed=3)}))
    assert {r.outcome for r in results} == {"pass"}, [(r.id, r.message[:200]) for r in results if r.outcome != "pass"][:3]
