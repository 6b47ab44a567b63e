"""Tests of the BatchNormalization oracle (conformance/reference/) and entry (conformance/ops/).

* the oracle against independent plain-Python formulas (math.fsum, loops) per version
  and mode, and against hand-derived properties;
* the oracle against onnx.reference where that is right, and one test per
  disagreement found (each asserts the disagreement still exists, so the note in the
  report stays true);
* the generated suite: determinism, size and coverage;
* numpy kernels run through KernelBackend on the whole suite: legitimate ones
  (float32 compute, folded, Welford, an rsqrt a few ulp off, plain input precision)
  give no fail and no error; deliberately wrong ones each give at least one fail.
"""

from __future__ import annotations

import itertools
import math
from collections import Counter

import ml_dtypes
import numpy as np
import pytest
from onnx import TensorProto, helper

from conformance import dtypes, registry
from conformance.backends.kernel import KernelBackend
from conformance.runner import run_cases
from conformance.ops import schedule
from conformance.opspec import op_spec
from conformance.reference import batch_normalization as ref

# every family first: while the retired generator module is still listed in the registry, the
# entry's registration must come after it (importing the entry module first would let the
# generator's registration win)
registry.available_ops()
from conformance.ops import batch_normalization as bnops  # noqa: E402
from oracle_checks import reduced_tolerances  # tests/oracle_checks.py

F16, BF16, F32, F64 = TensorProto.FLOAT16, TensorProto.BFLOAT16, TensorProto.FLOAT, TensorProto.DOUBLE
OP = "BatchNormalization"


@pytest.fixture(scope="module")
def suite():
    return registry.generate([OP], seed=0)


@pytest.fixture(scope="module")
def value_cases(suite):
    return [c for c in suite if c.expect_error is None]


# ============================================================================ oracle vs plain Python
def _plain_bn(x, scale, b, mean, var, eps, mom, training, spatial=True):
    """Loop-and-fsum BatchNormalization on nested lists (float64), independent of numpy tricks.

    Returns (Y as numpy array, running_mean, running_var, batch_mean, batch_var) lists.
    """
    x = np.asarray(x, dtype=np.float64)
    if x.ndim == 1:
        x4 = x.reshape(-1, 1)
    else:
        x4 = x.reshape(x.shape[0], x.shape[1], -1) if spatial else x.reshape(x.shape[0], -1, 1)
    if x.ndim == 1:
        x4 = x4.reshape(x.shape[0], 1, 1)
    n_, c_, s_ = x4.shape
    y = np.empty_like(x4)
    rm, rv, bm, bv = [], [], [], []
    sc, bb, mm, vv = (np.asarray(p, dtype=np.float64).reshape(-1).tolist() for p in (scale, b, mean, var))
    for c in range(c_):
        vals = [float(x4[n, c, s]) for n in range(n_) for s in range(s_)]
        if training:
            mu = math.fsum(vals) / len(vals)
            va = math.fsum((v - mu) ** 2 for v in vals) / len(vals)
        else:
            mu, va = mm[c], vv[c]
        bm.append(mu)
        bv.append(va)
        rm.append(mm[c] * mom + mu * (1 - mom))
        rv.append(vv[c] * mom + va * (1 - mom))
        den = math.sqrt(va + eps)
        for n in range(n_):
            for s in range(s_):
                y[n, c, s] = (float(x4[n, c, s]) - mu) / den * sc[c] + bb[c]
    return y.reshape(x.shape), rm, rv, bm, bv


def _rand_inputs(rng, shape, pshape, version):
    nm = ref.input_names(version)
    return {
        nm[0]: rng.normal(size=shape) * 2 + 1,
        nm[1]: rng.uniform(0.5, 1.5, pshape),
        nm[2]: rng.normal(size=pshape),
        nm[3]: rng.normal(size=pshape),
        nm[4]: rng.uniform(0.5, 2.0, pshape),
    }


SMALL_SHAPES = [(5,), (4, 3), (2, 3, 4), (2, 2, 3, 2), (1, 2, 2, 2, 3), (3, 1, 5)]


@pytest.mark.parametrize("version,shape", [(v, s) for v in ref.VERSIONS for s in SMALL_SHAPES
                                           if len(s) > 1 or v >= 9])  # rank 1 from version 9
@pytest.mark.parametrize("training", [False, True])
def test_oracle_matches_plain_python(version, training, shape):
    rng = np.random.default_rng(version * 100 + 10 * int(training) + SMALL_SHAPES.index(shape))
    c = 1 if len(shape) == 1 else shape[1]
    ins = _rand_inputs(rng, shape, (c,), version)
    attrs = {"epsilon": 1e-3, "momentum": 0.7}
    if version in ref.IS_TEST_VERSIONS:
        attrs["is_test"] = 0 if training else 1
    if version == 1:
        attrs["consumed_inputs"] = [0, 0, 0, 1, 1]  # changes no value
    if version >= 14:
        attrs["training_mode"] = int(training)
    outs = ref.output_names(version) if training else ("Y",)
    got = ref.oracle(version, ins, attrs, outs)
    eps, mom = float(np.float32(1e-3)), float(np.float32(0.7))
    nm = ref.input_names(version)
    y, rm, rv, bm, bv = _plain_bn(ins[nm[0]], ins[nm[1]], ins[nm[2]], ins[nm[3]], ins[nm[4]], eps, mom, training)
    np.testing.assert_allclose(got["Y"], y, rtol=1e-13, atol=1e-13)
    if training:
        np.testing.assert_allclose(got["running_mean"], rm, rtol=1e-13, atol=1e-14)
        np.testing.assert_allclose(got["running_var"], rv, rtol=1e-13, atol=1e-14)
        if version < 14:
            np.testing.assert_allclose(got["saved_mean"], bm, rtol=1e-13, atol=1e-14)
            np.testing.assert_allclose(got["saved_var"], bv, rtol=1e-13, atol=1e-14)


@pytest.mark.parametrize("version,shape", [(6, (5, 3)), (7, (5, 2, 3)), (1, (5, 3)), (1, (5, 3, 1, 1))])
@pytest.mark.parametrize("training", [False, True])
def test_oracle_spatial0_is_per_activation(version, training, shape):
    rng = np.random.default_rng(7)
    pshape = ref.layout(shape, 0, version).param_shape
    # versions 1 and 6: 1-D parameters of size C (= C*D1*...*Dn where both readings agree)
    assert pshape == ((shape[1],) if version in ref.IS_TEST_VERSIONS else shape[1:])
    ins = _rand_inputs(rng, shape, pshape, version)
    attrs = {"spatial": 0, "epsilon": 1e-4}
    if version in ref.IS_TEST_VERSIONS:
        attrs["is_test"] = 0 if training else 1
    outs = ref.OUTPUTS_OLD if training else ("Y",)
    got = ref.oracle(version, ins, attrs, outs)
    # spatial=0 == flattening to (N, C*D...) with spatial=1 (the version 9 advice)
    flat = {k: (v.reshape(shape[0], -1) if k == "X" else v.reshape(-1)) for k, v in ins.items()}
    y, rm, rv, bm, bv = _plain_bn(flat["X"], flat["scale"], flat["B"], flat["mean"], flat["var"],
                                  float(np.float32(1e-4)), float(np.float32(0.9)), training)
    np.testing.assert_allclose(got["Y"], y.reshape(shape), rtol=1e-13, atol=1e-13)
    if training:
        assert got["running_mean"].shape == pshape
        np.testing.assert_allclose(got["saved_var"].reshape(-1), bv, rtol=1e-13, atol=1e-15)
        np.testing.assert_allclose(got["running_var"].reshape(-1), rv, rtol=1e-13)


def test_oracle_mode_rules():
    assert ref.is_training(6, {}, ["Y"])  # is_test defaults to 0
    assert ref.is_training(1, {"consumed_inputs": [0, 0, 0, 1, 1]}, ["Y"])  # version 1 too
    assert not ref.is_training(1, {"is_test": 1}, ref.OUTPUTS_OLD)
    assert [ref.version_for_opset(o) for o in (1, 2, 5)] == [1, 1, 1]
    assert not ref.is_training(6, {"is_test": 1}, ["Y"])
    assert ref.is_training(6, {"is_test": 0}, ["Y", "saved_var"])
    assert not ref.is_training(7, {}, ["Y"])
    assert ref.is_training(9, {}, ["Y", "running_var"])
    assert not ref.is_training(14, {}, ["Y"])
    assert ref.is_training(15, {"training_mode": 1}, ["Y", "running_mean", "running_var"])
    assert [ref.version_for_opset(o) for o in (6, 7, 8, 9, 13, 14, 15, 28)] == [6, 7, 7, 9, 9, 14, 15, 15]


def test_oracle_properties():
    rng = np.random.default_rng(3)
    x = rng.normal(size=(4, 3, 5))
    x[:, 1, :] = 0.625  # constant channel
    ins = {"X": x, "scale": np.array([1.0, 2.0, -1.0]), "B": np.array([0.5, -3.0, 1.0]),
           "input_mean": np.array([1.0, 2.0, 3.0]), "input_var": np.array([4.0, 5.0, 6.0])}
    outs = ref.OUTPUTS_NEW
    o = ref.oracle(15, ins, {"training_mode": 1, "momentum": 1.0}, outs)
    assert np.all(o["Y"][:, 1] == -3.0)  # constant channel: Y = B exactly
    np.testing.assert_array_equal(o["running_mean"], ins["input_mean"])  # momentum 1 keeps the input
    np.testing.assert_array_equal(o["running_var"], ins["input_var"])
    o0 = ref.oracle(15, ins, {"training_mode": 1, "momentum": 0.0}, outs)
    np.testing.assert_allclose(o0["running_mean"], x.mean(axis=(0, 2)), rtol=1e-14)
    np.testing.assert_allclose(o0["running_var"], x.var(axis=(0, 2)), rtol=1e-12, atol=1e-15)
    # normalized batch: per channel mean 0 and variance var/(var+eps) before scale/B
    o1 = ref.oracle(14, {**ins, "scale": np.ones(3), "B": np.zeros(3)}, {"training_mode": 1}, outs)
    y = o1["Y"][:, [0, 2]]
    np.testing.assert_allclose(y.mean(axis=(0, 2)), 0, atol=1e-14)
    v = x[:, [0, 2]].var(axis=(0, 2))
    eps = float(np.float32(1e-5))
    np.testing.assert_allclose(y.var(axis=(0, 2)), v / (v + eps), rtol=1e-12)
    # the default momentum is the float32 0.9
    od = ref.oracle(14, ins, {"training_mode": 1}, outs)
    m = float(np.float32(0.9))
    np.testing.assert_allclose(od["running_mean"], ins["input_mean"] * m + x.mean(axis=(0, 2)) * (1 - m),
                               rtol=1e-15)


def test_oracle_rejects_invalid_shapes():
    good = {"X": np.zeros((2, 3)), "scale": np.ones(3), "B": np.ones(3), "mean": np.ones(3), "var": np.ones(3)}
    with pytest.raises(ValueError):
        ref.oracle(9, {**good, "scale": np.ones(2)}, {}, ["Y"])
    with pytest.raises(ValueError):
        ref.oracle(9, {**good, "X": np.zeros(())}, {}, ["Y"])
    with pytest.raises(ValueError):
        ref.oracle(9, {**good, "X": np.zeros((6,))}, {}, ["Y"])  # rank 1: C = 1
    with pytest.raises(ValueError):
        ref.oracle(9, {**good, "X": np.zeros((0, 3))}, {}, list(ref.OUTPUTS_OLD))  # empty batch, training
    assert ref.oracle(9, {**good, "X": np.zeros((0, 3))}, {}, ["Y"])["Y"].shape == (0, 3)


def test_variants_bound_float32_accumulation_of_float16():
    """fp16 training statistics: a float32-accumulating fp16 kernel stays within the variants' spread."""
    rng = np.random.default_rng(11)
    x = (rng.normal(size=(8, 2, 32, 32)) * 3 + 40).astype(np.float16).astype(np.float64)  # 8192 per channel
    ins = {"X": x, "scale": np.ones(2), "B": np.zeros(2), "input_mean": np.zeros(2), "input_var": np.ones(2)}
    types = {"X": F16, "scale": F16, "B": F16, "input_mean": F16, "input_var": F16}
    attrs = {"training_mode": 1}
    e = ref.oracle(15, ins, attrs, ["Y", "running_mean", "running_var"])
    var = ref.variants(15, ins, attrs, ["Y", "running_mean", "running_var"], types)
    spread = max(np.max(np.abs(v - e["Y"])) for v in var["Y"].values())
    # naive sequential float16 accumulation of the sum is NOT legitimate: it drifts far off
    with np.errstate(over="ignore"):
        s16 = np.cumsum(x[:, 0].reshape(-1).astype(np.float16), dtype=np.float16)[-1]
    assert not abs(float(s16) / 8192 - x[:, 0].mean()) < 1.0  # overflows (inf) or drifts
    # a float32-accumulating kernel (e.g. one thread per channel, sequential) is within spread
    g = np.moveaxis(x, 1, 0).reshape(2, -1).astype(np.float32)
    mu = np.cumsum(g, axis=1, dtype=np.float32)[:, -1] / np.float32(g.shape[1])
    d = g - mu[:, None]
    v = np.cumsum(d * d, axis=1, dtype=np.float32)[:, -1] / np.float32(g.shape[1])
    y = ((x - mu.reshape(1, 2, 1, 1)) / np.sqrt(v.reshape(1, 2, 1, 1) + np.float32(1e-5))).astype(np.float16)
    assert np.max(np.abs(y.astype(np.float64) - e["Y"])) <= 4 * spread + 4 * dtypes.eps(F16) * np.max(np.abs(e["Y"]))


# ============================================================================ onnx.reference
def _ref_run(version, ins, attrs, outputs, types=None, opset=None):
    from onnx.reference import ReferenceEvaluator

    nm = ref.input_names(version)
    types = types or {n: F32 for n in nm}
    graph_in = [helper.make_tensor_value_info(n, types[n], list(np.shape(ins[n]))) for n in nm]
    onames = list(outputs)
    node = helper.make_node(OP, list(nm), onames, **attrs)
    otypes = ref.output_types(version, types)
    graph = helper.make_graph([node], "g", graph_in,
                              [helper.make_tensor_value_info(o, otypes[o], None) for o in onames if o])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset or version)])
    feeds = {n: dtypes.round_to(np.asarray(ins[n]), types[n]) for n in nm}
    return ReferenceEvaluator(model).run(None, feeds)


def _ins(version, shape, seed=0, offset=0.0, spread=1.0):
    rng = np.random.default_rng(seed)
    c = 1 if len(shape) == 1 else shape[1]
    d = _rand_inputs(rng, shape, (c,), version)
    nm = ref.input_names(version)
    d[nm[0]] = offset + spread * d[nm[0]]
    return {k: np.float32(v).astype(np.float64) for k, v in d.items()}


@pytest.mark.parametrize("version,attrs,outs", [
    (6, {"is_test": 1}, ("Y",)),
    (14, {}, ("Y",)),
    (15, {"training_mode": 0}, ("Y",)),
    (14, {"training_mode": 1}, ref.OUTPUTS_NEW),
    (15, {"training_mode": 1, "momentum": 0.5}, ref.OUTPUTS_NEW),
])
@pytest.mark.parametrize("shape", [(4, 3), (2, 3, 4, 5), (2, 2, 2, 2, 3)])
def test_oracle_agrees_with_onnx_reference_float32(version, attrs, outs, shape):
    ins = _ins(version, shape)
    got = _ref_run(version, ins, attrs, outs)
    exp = ref.oracle(version, ins, attrs, outs)
    for o, a in zip(outs, got):
        assert a.dtype == np.float32
        np.testing.assert_allclose(a.astype(np.float64), exp[o], rtol=2e-5, atol=2e-5)


def test_onnx_reference_bn7_cannot_run():
    """Disagreement: onnx.reference maps BN-7 to its BN-6 class, whose absent is_test means
    training, and its training path returns a nested tuple -> TypeError, even for inference."""
    ins = _ins(7, (4, 3))
    with pytest.raises(TypeError, match="tuple"):
        _ref_run(7, ins, {}, ("Y",))


def test_onnx_reference_bn6_training_cannot_run():
    """Disagreement: BN-6 with is_test=0 (training) fails in onnx.reference (nested tuple)."""
    ins = _ins(6, (4, 3))
    with pytest.raises(TypeError, match="tuple"):
        _ref_run(6, ins, {"is_test": 0}, ref.OUTPUTS_OLD)


def test_onnx_reference_bn9_inference_uses_batch_statistics():
    """Disagreement: onnx.reference BN-9 inference normalizes with momentum-blended batch
    statistics (the default momentum is filled in, so its ``momentum is None`` test-mode
    branch never runs) instead of the given mean/var.  The oracle follows the spec."""
    ins = _ins(9, (4, 3), seed=1, offset=3.0)
    (y,) = _ref_run(9, ins, {}, ("Y",))
    exp = ref.oracle(9, ins, {}, ("Y",))["Y"]
    assert np.max(np.abs(y - exp)) > 0.1
    # what it computes: Y normalized with mean*m + batch_mean*(1-m), var*m + batch_var*(1-m)
    x = ins["X"]
    m = 0.9
    rm = ins["mean"] * m + x.mean(axis=0) * (1 - m)
    rv = ins["var"] * m + x.var(axis=0) * (1 - m)
    blended = (x - rm) / np.sqrt(rv + 1e-5) * ins["scale"] + ins["B"]
    np.testing.assert_allclose(y, blended, rtol=1e-4, atol=1e-4)


def test_onnx_reference_bn9_training_returns_only_y():
    """Disagreement: BN-9 training in onnx.reference produces Y only (no running/saved outputs)."""
    ins = _ins(9, (4, 3))
    with pytest.raises(Exception, match="Unable to find output"):
        _ref_run(9, ins, {}, ref.OUTPUTS_OLD)


@pytest.mark.parametrize("version", [14, 15])
def test_onnx_reference_rank1_training_fails(version):
    """Disagreement: rank-1 X (C = 1) training raises IndexError in onnx.reference (np.delete of axis 1)."""
    ins = _ins(version, (6,))
    exp = ref.oracle(version, ins, {"training_mode": 1}, ref.OUTPUTS_NEW)
    assert np.isfinite(exp["Y"]).all()
    with pytest.raises(IndexError):
        _ref_run(version, ins, {"training_mode": 1}, ref.OUTPUTS_NEW)


def test_onnx_reference_rank1_inference_bn9_fails_but_14_works():
    ins9 = _ins(9, (6,))
    with pytest.raises(IndexError):
        _ref_run(9, ins9, {}, ("Y",))
    ins14 = _ins(14, (6,))
    (y,) = _ref_run(14, ins14, {}, ("Y",))
    np.testing.assert_allclose(y, ref.oracle(14, ins14, {}, ("Y",))["Y"], rtol=1e-5, atol=1e-5)


@pytest.mark.filterwarnings("ignore::RuntimeWarning")
def test_onnx_reference_float16_training_variance_overflows():
    """Disagreement (DESIGN.md): float16 training statistics in onnx.reference are computed in
    float16; sum((x - mean)^2) overflows to inf for 4 values of magnitude 200, so
    running_var = inf and Y = B.  Version 15 mandates float statistics for float16."""
    x = np.array([[200.0], [-200.0], [180.0], [-180.0]])
    ins = {"X": x, "scale": np.ones(1), "B": np.zeros(1), "input_mean": np.zeros(1), "input_var": np.ones(1)}
    types = {n: F16 for n in ref.INPUTS_NEW}
    y, rm, rv = _ref_run(15, ins, {"training_mode": 1}, ref.OUTPUTS_NEW, types)
    exp = ref.oracle(15, ins, {"training_mode": 1}, ref.OUTPUTS_NEW)
    assert np.isinf(rv).all() and np.isfinite(exp["running_var"]).all()
    assert np.all(y == 0) and np.max(np.abs(exp["Y"])) > 0.9


def test_onnx_reference_mixed_types_give_wrong_output_type():
    """Disagreement: BN-15 training with T2 != T returns running_mean/var in T (cast to X's type)."""
    ins = _ins(15, (4, 3))
    types = {"X": F32, "scale": F32, "B": F32, "input_mean": F64, "input_var": F64}
    _, rm, rv = _ref_run(15, ins, {"training_mode": 1}, ref.OUTPUTS_NEW, types)
    assert rm.dtype == np.float32 and ref.output_types(15, types)["running_mean"] == F64


def _reference_is_right(c) -> bool:
    """Cases where onnx.reference follows the spec (the disagreements above excluded)."""
    t = c.tags
    if c.since_version == 1:
        return False  # onnx.reference has no version 1 (test_onnx_reference_has_no_bn1)
    if c.since_version == 6:
        return t["training_mode"] == 0  # is_test=1
    if c.since_version in (7, 9):
        return False
    if not t["dtype"] == t["T1"] == t["T2"]:
        return False  # running statistics returned in T
    if t["training_mode"] and t["rank"] == 1:
        return False
    return not _reference_half_statistics(c)


def _reference_half_statistics(c) -> bool:
    t = c.tags
    return bool(t["training_mode"]) and t["dtype"] in ("float16", "bfloat16") and (
        t["shape"].startswith("long") or t["numerics"] in ("tiny-variance", "near-limits"))


@pytest.mark.filterwarnings("ignore::RuntimeWarning")
def test_onnx_reference_agrees_on_suite_where_right(value_cases):
    from conformance.backends import resolve_backend

    be = resolve_backend("onnx-reference")
    right = [c for c in value_cases if _reference_is_right(c)]
    assert len(right) > 150
    res = run_cases(right, be)
    bad = [(r.id, r.outcome, r.message[:200]) for r in res if r.outcome != "pass"]
    assert not bad, bad[:5]
    # and where it computes half-precision statistics in half precision, it fails some
    half = [c for c in value_cases if c.since_version >= 14 and c.tags["dtype"] == c.tags["T2"]
            and c.tags["rank"] > 1 and _reference_half_statistics(c)]
    assert any(r.outcome == "fail" for r in run_cases(half, be))


# ============================================================================ the suite
def test_suite_draws_from_its_seed(suite):
    """Another seed, other values (the same seed's same bytes: test_ops_table, every entry)."""
    other = registry.generate([OP], seed=1)
    assert len(other) == len(suite)
    assert sum(a.content_hash != b.content_hash for a, b in zip(other, suite)) > 0.9 * len(suite)


def test_suite_size_and_tags(suite, value_cases):
    assert len(suite) >= 981  # the retired generator's count (seed 0)
    assert len(value_cases) >= 930
    for c in suite:
        keys = ("dtype", "rank", "opset", "output_slots") + (
            ("error",) if c.expect_error else
            ("outputs", "params", "inputs_as", "shape", "numerics", "epsilon", "momentum", "training_mode", "datasets",
             "C", "T1", "T2"))
        for k in keys:
            assert k in c.tags, (c.id, k)
        assert c.tags["opset"] == c.opset
        assert c.since_version == ref.version_for_opset(c.opset) or c.expect_error
    for c in value_cases:
        # every case that requests saved_var carries the ambiguity tag
        assert ("saved_var" in [o.name for o in c.present_outputs]) == (c.tags.get("ambiguous") == "saved_var")
        assert c.tags["datasets"] == len(c.datasets)


def _pattern(c):
    return c.tags["outputs"]


def _x_types(v):
    """X's types at version ``v``, from the schema."""
    vs = op_spec(OP).versions[v]
    return sorted(t.removeprefix("tensor(").removesuffix(")") for t in vs.type_constraints[vs.inputs[0].type_str])


def _patterns(v):
    """(training, outputs tag) every version/type must show: inference Y alone; training every
    set of the optional outputs (graph names) -- 7 and 9 a non-empty one (the outputs decide
    the mode there), 1 and 6 also Y alone (the contested ambiguous model)."""
    opt = bnops.graph_outputs(f.name for f in op_spec(OP).versions[v].outputs if f.option == "optional")
    sets = [s for k in range(len(opt) + 1) for s in itertools.combinations(opt, k) if s or v not in (7, 9)]
    return [(0, "Y")] + [(1, ",".join(("Y",) + s)) for s in sets]


def test_coverage_version_dtype_mode_pattern(value_cases):
    seen = {(c.since_version, c.tags["dtype"], c.tags["training_mode"], _pattern(c)) for c in value_cases}
    for v in ref.VERSIONS:
        types = _x_types(v)
        assert set(types) >= {"float16", "float", "double"}
        for t in types:
            for training, pat in _patterns(v):
                key = (v, t, training, pat)
                assert key in seen, key
    assert len(_patterns(6)) == 17 and len(_patterns(7)) == 16 and len(_patterns(14)) == 5
    # bfloat16 only from 14
    assert not any(c.tags["dtype"] == "bfloat16" and c.since_version < 14 for c in value_cases)


#: The numerics classes of the suite (the retired generator's special-values is ``special``;
#: its long-channels and zero-size are Shape patterns, tag ``shape``).
CLASSES = {"normal", "wide", "large-offset", "constant-channels", "near-limits", "special", "tiny-variance",
           "repeat-run"}


def test_coverage_secondary(value_cases, suite):
    tags = lambda k: Counter(c.tags.get(k) for c in value_cases)  # noqa: E731
    assert set(tags("rank")) == {1, 2, 3, 4, 5}
    assert not any(c.tags["rank"] == 1 and c.since_version < 9 for c in value_cases)
    assert {"default", "tiny", "large"} <= set(tags("epsilon"))
    moms = set(tags("momentum"))
    for m in ("default", "0.9", "0", "1", "0.5", "0.618034", "0.1", "0.99"):
        assert m in moms, m
    assert set(tags("inputs_as")) == {"inputs", "initializers"}
    assert set(tags("numerics")) == CLASSES
    assert any(c.tags.get("C") == 1 for c in value_cases)
    assert any(len(c.inputs[0].shape) >= 2 and c.inputs[0].shape[0] != c.inputs[0].shape[1] for c in value_cases)
    assert any(len(c.datasets) >= 2 for c in value_cases)
    spec = op_spec(OP)
    for v in ref.VERSIONS:
        mine = [c for c in value_cases if c.since_version == v]
        ops = {c.opset for c in mine}
        assert set(schedule.opsets(spec, v)) <= ops, (v, ops)
        assert any(c.tags["shape"].startswith("zero-size") and c.tags.get("zero_size") for c in mine)
        # long channels in training, per version
        assert any(c.tags["shape"].startswith("long") and c.tags["training_mode"] == 1
                   and ref.layout(c.inputs[0].shape).group_size >= 4096 for c in mine)
        # every numerics class in both modes (the old near-limits training was float16-only)
        for num in CLASSES:
            assert {c.tags["training_mode"] for c in mine if c.tags["numerics"] == num} == {0, 1}, (v, num)
    assert any(c.opset == 28 for c in value_cases)
    # training in 6/7/9 with spatial=0 and v6 is_test both ways
    assert {(c.tags.get("spatial"), c.tags["training_mode"]) for c in value_cases if c.since_version == 7} >= {
        (0, 0), (0, 1), (1, 0), (1, 1)}
    assert {c.tags.get("is_test") for c in value_cases if c.since_version == 6} == {0, 1}
    # near-limits in inference really is near the limit of X's type
    near = [c for c in value_cases if c.tags["numerics"] == "near-limits" and not c.tags["training_mode"]
            and not c.tags.get("zero_size")]
    assert near
    for c in near:
        x = c.datasets[0].inputs["X"].astype(np.float64)
        assert np.max(np.abs(x)) >= 0.1 * float(dtypes.finfo(c.inputs[0].elem_type).max), c.id


def test_coverage_mixed_types(value_cases):
    t15 = {(c.tags["dtype"], c.tags["T1"], c.tags["T2"], c.tags["training_mode"]) for c in value_cases
           if c.since_version == 15}
    names = _x_types(15)
    assert len(names) == 4
    for mode in (0, 1):
        combos = {k[:3] for k in t15 if k[3] == mode}
        for (i, j) in itertools.combinations(range(3), 2):
            for a, b in itertools.product(names, repeat=2):
                assert any(cmb[i] == a and cmb[j] == b for cmb in combos), (mode, i, j, a, b)
    assert any(k[1] != k[2] for k in t15)
    t14 = {(c.tags["dtype"], c.tags["T2"], c.tags["training_mode"]) for c in value_cases if c.since_version == 14}
    for a, b in itertools.product(names, repeat=2):
        assert (a, b, 0) in t14 and (a, b, 1) in t14


def test_error_cases(suite):
    errs = [c for c in suite if c.expect_error]
    kinds = Counter(c.tags["error"] for c in errs)
    for k in ("scale-shape", "mean-shape", "var-shape", "bias-shape", "rank0", "output-count",
              "inference-extra-outputs", "training-output-count", "type", "rank1-param-shape",
              "missing-attribute"):
        assert kinds[k] >= 1, k
    for c in errs:
        assert all(not ds.outputs for ds in c.datasets) and c.datasets
        assert all(o.tolerance is None for o in c.outputs)


def test_output_slots_in_models(suite):
    """Requested subsets keep their trailing empty output names (the mode depends on the count)."""
    for c in suite:
        node = c.model.graph.node[0]
        assert len(node.output) == c.tags["output_slots"], c.id
        assert [o for o in node.output if o] == [o.name for o in c.present_outputs]


def test_tolerances_recorded(value_cases):
    for c in value_cases:
        for o in c.present_outputs:
            assert o.tolerance is not None and o.tolerance.atol > 0 and o.tolerance.variants, (c.id, o.name)


# ============================================================================ kernels
def _wide(dt):
    dt = np.dtype(dt)
    return np.dtype(np.float64) if dt == np.float64 else np.dtype(np.float32)


def _welford_seq(g, acc):
    k, n = g.shape
    mean = np.zeros(k, acc)
    m2 = np.zeros(k, acc)
    ga = g.astype(acc)
    with np.errstate(invalid="ignore", over="ignore"):
        for i in range(n):
            delta = ga[:, i] - mean
            mean = mean + delta / acc.type(i + 1)
            m2 = m2 + delta * (ga[:, i] - mean)
    return mean, m2 / acc.type(n)


_BITS = {np.dtype(np.float16): 11, np.dtype(ml_dtypes.bfloat16): 8, np.dtype(np.float32): 24,
         np.dtype(np.float64): 53}


def _ulp_off(a, dt, sign):
    """float64 ``a`` rounded to dt and moved one ulp of dt in direction ``sign`` (as float64)."""
    dt = np.dtype(dt)
    r = np.asarray(a, np.float64).astype(np.float32).astype(dt).astype(np.float64) if dt != np.float64 else \
        np.asarray(a, np.float64)
    with np.errstate(divide="ignore", invalid="ignore"):
        e = np.floor(np.log2(np.abs(np.where((r == 0) | ~np.isfinite(r), 1.0, r))))
    step = np.where(r == 0, float(ml_dtypes.finfo(dt).smallest_subnormal), 2.0 ** (e - (_BITS[dt] - 1)))
    out = r + sign * step
    return out.astype(np.float32).astype(dt).astype(np.float64) if dt != np.float64 else out


def bn_kernel(*, compute="native", stats="two-pass", folded=False, rsqrt_ulps=0, bug=None, stats_off=None):
    """A numpy BatchNormalization kernel for KernelBackend.

    compute: "native" (X's type, float16 included) or "float32" (max(T, float32)).
    stats: "two-pass" (pairwise sums) or "welford" (sequential), accumulated in max(T, float32).
    stats_off: (sm, sv): the batch mean rounded to T and moved one ulp of T, the variance one
        ulp of max(T, float32) (directions sm, sv; a mean every order computes exactly -- a
        constant group of 2^k elements -- is kept; the variance stays >= 0).
    bug: None or one deliberate error (see WRONG).
    """

    state: dict = {}

    def kernel(inputs, attributes, outputs, opset):
        v = ref.version_for_opset(opset)
        nm = ref.input_names(v)
        x, s, b, mi, vi = (inputs[n] for n in nm)
        if bug == "mutates-running-stats-input":
            mi = state[id(mi)][1] if id(mi) in state and state[id(mi)][0] is mi else mi
            vi = state[id(vi)][1] if id(vi) in state and state[id(vi)][0] is vi else vi
        t, t2 = x.dtype, mi.dtype
        ct = np.dtype(t) if compute == "native" else _wide(t)
        acc = _wide(t)
        eps = np.float32(attributes.get("epsilon", 1e-5))
        mom = np.float32(attributes.get("momentum", 0.9))
        training = ref.is_training(v, attributes, outputs)
        if bug == "inference-batch-stats":
            training_y = True
        else:
            training_y = training
        spatial = ref.spatial_of(v, attributes)
        if x.ndim == 0:
            raise ValueError("rank-0 X")
        if bug == "channel-last" and x.ndim >= 2:
            xt = np.moveaxis(x, -1, 1)
            lay = ref.layout(xt.shape, spatial, v)
        else:
            xt = x
            lay = ref.layout(x.shape, spatial, v)
        for p in (s, b, mi, vi):
            if p.shape != lay.param_shape:
                raise ValueError(f"parameter shape {p.shape} != {lay.param_shape}")
        if training or training_y:
            g = lay.to_groups(xt.astype(np.float64)).astype(acc)
            if g.shape[1] == 0:
                mu = np.full(g.shape[0], np.nan, acc)
                var = mu
                var_u = mu
            else:
                if stats == "welford":
                    mu, var = _welford_seq(g, acc)
                else:
                    with np.errstate(invalid="ignore", over="ignore"):
                        mu = np.sum(g, axis=1, dtype=acc) / acc.type(g.shape[1])
                        d = g - mu[:, None]
                        var = np.sum(d * d, axis=1, dtype=acc) / acc.type(g.shape[1])
                if stats_off is not None:
                    n_ = g.shape[1]
                    exact = np.all(g == g[:, :1], axis=1) & (n_ & (n_ - 1) == 0)
                    mu = np.where(exact, mu, _ulp_off(mu, t, stats_off[0])).astype(acc)
                    with np.errstate(invalid="ignore", over="ignore"):
                        # var + eps is evaluated in at least float32 (module docstring of the reference)
                        var = np.maximum(_ulp_off(var, acc, stats_off[1]), 0.0).astype(acc)
                with np.errstate(divide="ignore", invalid="ignore"):
                    var_u = var * acc.type(g.shape[1]) / acc.type(g.shape[1] - 1)
            mu, var, var_u = (a.reshape(lay.param_shape) for a in (mu, var, var_u))
        if training_y and bug != "training-input-stats":
            ym, yv = mu, (var_u if bug == "unbiased-var" else var)
        else:
            ym, yv = mi, vi
        ss, bb = (b, s) if bug == "scale-bias-swapped" else (s, b)
        with np.errstate(invalid="ignore", over="ignore", divide="ignore"):
            den = yv.astype(_wide(ct)) + (np.float32(0) if bug == "eps-ignored" else eps).astype(_wide(ct))
            inv = (1 / np.sqrt(den))
            if rsqrt_ulps:
                inv = inv * (1 + rsqrt_ulps * float(dtypes.finfo(ct).eps))
            inv = inv.astype(ct)
            m_c, s_c, b_c = (lay.bcast(p.astype(ct)) for p in (ym, ss, bb))
            inv_c = lay.bcast(inv)
            xc = xt.astype(ct)
            if folded:
                a = s_c * inv_c
                y = xc * a + (b_c - m_c * a)
            else:
                y = (xc - m_c) * inv_c * s_c + b_c
        y = y.astype(t)
        if bug == "channel-last" and x.ndim >= 2:
            y = np.moveaxis(y, 1, -1)
        res = {"Y": y}
        if training:
            c2 = _wide(t2)
            with np.errstate(invalid="ignore", over="ignore"):
                m2 = mom.astype(c2)
                if bug == "momentum-inverted":
                    m2 = (1 - m2).astype(c2)
                cur_v = var_u if bug in ("unbiased-var", "running-var-unbiased") else var
                res["running_mean"] = (mi.astype(c2) * m2 + mu.astype(c2) * (1 - m2)).astype(t2)
                res["running_var"] = (vi.astype(c2) * m2 + cur_v.astype(c2) * (1 - m2)).astype(t2)
            with np.errstate(over="ignore"):
                res["saved_mean"] = mu.astype(t)
                res["saved_var"] = var.astype(t)
            if bug == "mutates-running-stats-input":
                # an in-place running-statistics update aliasing the input buffers: the
                # initializer arrays are the same objects in every run of one model
                state[id(mi)] = (mi, res["running_mean"].astype(mi.dtype))
                state[id(vi)] = (vi, res["running_var"].astype(vi.dtype))
            if bug == "zero-optional-outputs":
                for k in ("running_mean", "running_var", "saved_mean", "saved_var"):
                    res[k] = np.zeros_like(res[k])
        return {o: res[o] for o in outputs}

    return kernel


LEGIT = {
    "native": bn_kernel(),
    "float32-compute": bn_kernel(compute="float32"),
    "folded-native": bn_kernel(folded=True),
    "welford": bn_kernel(stats="welford", compute="float32"),
    "rsqrt-2ulp-off": bn_kernel(rsqrt_ulps=2),
    "stats-ulp-off-up": bn_kernel(compute="float32", stats_off=(1, 1)),
    "stats-ulp-off-down": bn_kernel(compute="float32", stats_off=(-1, -1)),
    "stats-ulp-off-mixed": bn_kernel(compute="float32", stats_off=(1, -1)),
}
WRONG = {
    "eps-ignored": bn_kernel(bug="eps-ignored"),
    "unbiased-var": bn_kernel(bug="unbiased-var"),
    "momentum-inverted": bn_kernel(bug="momentum-inverted"),
    "inference-batch-stats": bn_kernel(bug="inference-batch-stats"),
    "training-input-stats": bn_kernel(bug="training-input-stats"),
    "zero-optional-outputs": bn_kernel(bug="zero-optional-outputs"),
    "channel-last": bn_kernel(bug="channel-last"),
    "running-var-unbiased": bn_kernel(bug="running-var-unbiased"),
    "scale-bias-swapped": bn_kernel(bug="scale-bias-swapped"),
    "mutates-running-stats-input": bn_kernel(bug="mutates-running-stats-input"),
}


@pytest.mark.parametrize("name", sorted(LEGIT))
def test_legitimate_kernel_passes(name, suite):
    results = run_cases(suite, KernelBackend({OP: LEGIT[name]}, name=name))
    bad = [(r.id, r.outcome, r.message[:300]) for r in results if r.outcome != "pass"]
    assert not bad, f"{len(bad)} non-pass, first: {bad[:5]}"


OFF = {k: v for k, v in LEGIT.items() if k.startswith("stats-ulp-off")}


def _failed(cases) -> set:
    failed = set()
    for name, kernel in OFF.items():
        res = run_cases(cases, KernelBackend({OP: kernel}, name=name))
        failed |= {(c.tags["numerics"], c.tags["dtype"]) for c, r in zip(cases, res) if r.outcome == "fail"}
    return failed


@pytest.fixture(scope="module")
def training_cases(value_cases):
    """Training cases with one data set (an output's tolerance over several data sets
    is the largest of each term over them, so atol no longer splits into its terms)."""
    cases = [c for c in value_cases if c.tags["training_mode"] and len(c.datasets) == 1]
    assert len(cases) >= 200
    return cases


def test_propagated_term_alone_bounds_ulp_off_statistics(training_cases):
    """The derived term, without the variants' spread, bounds the kernels whose batch mean and
    variance are one ulp off (every direction) on every training case: a derivation,
    not an empirical margin (docs/tolerance.md)."""
    assert not _failed(reduced_tolerances(training_cases, spread=False, propagated=True))


def test_propagated_term_is_needed(training_cases):
    """Without the term (and the spread) the ulp-off kernels fail large-offset or tiny-variance
    cases: the mean's rounding amplified by |scale| / sqrt(var + eps)."""
    failed = _failed(reduced_tolerances(training_cases, spread=False, propagated=False))
    assert {n for n, _ in failed} & {"large-offset", "tiny-variance"}, failed


@pytest.mark.parametrize("name", sorted(WRONG))
def test_wrong_kernel_caught(name, value_cases):
    results = run_cases(value_cases, KernelBackend({OP: WRONG[name]}, name=name))
    counts = Counter(r.outcome for r in results)
    assert counts["fail"] >= 1, counts


# ============================================================================ version 1
@pytest.fixture(scope="module")
def v1_cases(suite):
    return [c for c in suite if c.since_version == 1]


def test_version1_value_models_carry_consumed_inputs(v1_cases):
    values = [c for c in v1_cases if c.expect_error is None]
    assert len(values) >= 140
    seen = Counter()
    for c in values:
        (node,) = c.model.graph.node
        attrs = {a.name: a for a in node.attribute}
        assert "consumed_inputs" in attrs, c.id
        ci = tuple(attrs["consumed_inputs"].ints)
        seen[ci] += 1
        assert 1 <= c.opset <= schedule.last_opset(op_spec(OP), 1) and c.model.opset_import[0].version == c.opset
        assert c.model.ir_version == 3
        # IR 3: initializers are graph inputs too
        inits = {i.name for i in c.model.graph.initializer}
        assert inits <= {i.name for i in c.model.graph.input}
        # contested exactly where the version-1 text and the current schema part ways, and
        # where is_test=0 (training) meets Y alone (the text's test-mode output case)
        ambiguous = c.tags.get("ambiguous") == "v1-training-Y-only"
        assert ambiguous == (c.tags["training_mode"] == 1 and c.tags["outputs"] == "Y"), c.id
        assert (c.contested is not None) == (c.tags["rank"] != 4 or ci != ref.LEGACY_CONSUMED_INPUTS
                                             or ambiguous), c.id
    assert seen[ref.LEGACY_CONSUMED_INPUTS] > 0.8 * len(values)
    assert {ref.LEGACY_CONSUMED_INPUTS, *bnops.CONSUMED_OTHER} <= set(seen)


def test_version1_depth(v1_cases):
    values = [c for c in v1_cases if c.expect_error is None]
    tags = lambda k: {c.tags.get(k) for c in values}  # noqa: E731
    assert tags("dtype") == {"float16", "float", "double"}
    assert tags("is_test") == {0, 1} and tags("spatial") == {0, 1}
    assert {2, 3, 4, 5} == tags("rank")
    assert set(schedule.opsets(op_spec(OP), 1)) <= tags("opset")
    assert {"default", "tiny", "large"} <= tags("epsilon")
    assert {"default", "0.9", "0", "1", "0.5"} <= tags("momentum")
    assert tags("numerics") == CLASSES
    assert any(s.startswith("long") for s in tags("shape")) and any(s.startswith("zero-size") for s in tags("shape"))
    # is_test explicit and absent; spatial=0 at rank 4 (N, C, 1, 1), not contested
    assert {c.attributes.get("is_test") for c in values} == {None, 0, 1}
    assert any(c.tags["spatial"] == 0 and c.tags["rank"] == 4 and c.contested is None for c in values)
    errs = Counter(c.tags["error"] for c in v1_cases if c.expect_error)
    assert errs["missing-attribute"] == 2 and errs["type"] >= 2
    for k in ("scale-shape", "mean-shape", "var-shape", "rank0", "output-count"):
        assert errs[k] >= 1, k
    for c in v1_cases:
        if c.tags.get("error") == "missing-attribute":
            assert "consumed_inputs" not in c.attributes


def test_coverage_has_no_batch_normalization_gap(suite):
    from conformance.coverage import compute_coverage

    vs = compute_coverage(suite)["ops"][OP]["versions"]
    assert set(vs) == {str(v) for v in ref.VERSIONS}
    for v, d in vs.items():
        assert d["gaps"] == 0 and d["value"]["cases"] > 0, v
    assert len(vs["1"]["covered"]) == 3


@pytest.mark.parametrize("name", sorted(WRONG))
def test_wrong_kernel_caught_on_version1(name, v1_cases):
    cases = [c for c in v1_cases if c.expect_error is None]
    results = run_cases(cases, KernelBackend({OP: WRONG[name]}, name=name))
    counts = Counter(r.outcome for r in results)
    assert counts["fail"] >= 1, counts


@pytest.mark.parametrize("name", ["native", "folded-native"])
def test_legitimate_kernel_ignores_consumed_inputs(name, v1_cases):
    """The same kernel on version 1 and on its version-6 twin (consumed_inputs dropped, opset 6)."""
    import dataclasses

    cases = [c for c in v1_cases if c.expect_error is None][:40]
    twins = [dataclasses.replace(c, since_version=6, opset=6, contested=None,
                                 attributes={k: v for k, v in c.attributes.items() if k != "consumed_inputs"})
             for c in cases]
    be = KernelBackend({OP: LEGIT[name]}, name=name)
    assert [r.outcome for r in run_cases(cases, be)] == ["pass"] * len(cases)
    assert [r.outcome for r in run_cases(twins, be)] == ["pass"] * len(twins)


def test_onnx_reference_has_no_bn1():
    """Disagreement: onnx.reference implements BatchNormalization 6, 9, 14 only; opset 1-5 models raise."""
    ins = _ins(6, (2, 3, 2, 2))
    with pytest.raises(RuntimeError, match="No implementation for operator 'BatchNormalization'.*version 1"):
        _ref_run(6, ins, {"is_test": 1, "consumed_inputs": [0, 0, 0, 1, 1]}, ("Y",), opset=1)


@pytest.mark.filterwarnings("ignore::RuntimeWarning")
def test_onnxruntime_version1(v1_cases):
    """onnxruntime has no BatchNormalization(1) kernel: float/double cases are ``unsupported``
    (NOT_IMPLEMENTED); float16 ones fail earlier -- the CPU provider's float16 fallback inserts a
    Cast with an INT ``to``, which Cast-1 (opsets 1-5) declares STRING, and the graph check calls
    the valid model invalid -- so they are ``error``.  Error cases: the missing consumed_inputs and
    the types outside T are rejected by the graph check (``pass``); the others meet the same missing
    kernel, which does not show that onnxruntime checks them (``unsupported``)."""
    pytest.importorskip("onnxruntime")
    from conformance.backends import resolve_backend

    be = resolve_backend("onnxruntime")
    pick = {}
    for c in v1_cases:
        key = (c.expect_error is None, c.tags["dtype"], c.contested is None, c.tags.get("error"))
        pick.setdefault(key, c)
    res = {k: run_cases([c], be)[0] for k, c in pick.items()}
    errs = {k[3]: r.outcome for k, r in res.items() if not k[0]}
    assert errs.get("missing-attribute") == "pass" and "pass" in errs.values(), errs
    assert "unsupported" in errs.values(), errs
    for (value, dt, plain, err), r in res.items():
        if not value and "NOT_IMPLEMENTED" in r.message:
            assert r.outcome == "unsupported" and r.message.startswith("declined as unsupported"), (r.id, r.message)
        elif not value:
            assert r.outcome == "pass", (r.id, r.message)
        elif not plain:
            assert r.outcome == "unsupported" and r.message.startswith("contested model"), (r.id, r.message)
        elif dt == "float16":
            assert r.outcome == "error" and "InsertedPrecisionFreeCast" in r.message, (r.id, r.message)
        else:
            assert r.outcome == "unsupported" and "BatchNormalization(1)" in r.message, (r.id, r.message)
    assert "consumed_inputs" in res[(False, "float", True, "missing-attribute")].message


@pytest.mark.parametrize("version", [9, 14, 15])
def test_onnxruntime_float16_statistics_initializers_leak_between_runs(version):
    """Disagreement: onnxruntime 1.32 (CPU) trains BatchNormalization 9/14/15 with float16
    running-statistics initializers by updating them in place: the second run of one session
    reads the first run's running_mean/running_var as its input_mean/input_var.  The spec makes
    them outputs (inputs are constants; runs are independent), so onnxruntime is wrong; graph
    inputs and float statistics are not affected, nor is version 7.  The suite's two-data-set
    training cases with initializers catch it (data set 1 fails)."""
    ort = pytest.importorskip("onnxruntime")
    from onnx import numpy_helper

    nm = ref.input_names(version)
    outs = ["Y", "running_mean", "running_var"] + (["", ""] if version < 14 else [])
    node = helper.make_node(OP, list(nm), outs, **({"training_mode": 1} if version >= 14 else {}))
    vals = {nm[1]: [1.0, 1.0], nm[2]: [0.0, 0.0], nm[3]: [0.25, -1.0], nm[4]: [1.0, 2.0]}
    inits = [numpy_helper.from_array(np.array(vals[n], np.float16), n) for n in nm[1:]]
    graph = helper.make_graph([node], "g", [helper.make_tensor_value_info("X", F16, [2, 2])],
                              [helper.make_tensor_value_info(o, F16, None) for o in outs[:3]], inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", version)])
    model.ir_version = 8
    sess = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    x = np.array([[1.0, 4.0], [3.0, 0.0]], np.float16)
    first, second = (sess.run(["running_mean"], {"X": x})[0].astype(np.float64) for _ in range(2))
    m = float(np.float32(0.9))
    expected = np.array([0.25, -1.0]) * m + x.astype(np.float64).mean(axis=0) * (1 - m)
    np.testing.assert_allclose(first, expected, atol=2e-3)
    leaked = first * m + x.astype(np.float64).mean(axis=0) * (1 - m)  # run 1's output fed back as input
    np.testing.assert_allclose(second, leaked, atol=2e-3)
    assert np.max(np.abs(second - expected)) > 0.1
