"""Tests of the normalization family (InstanceNormalization, GroupNormalization,
RMSNormalization, LpNormalization, MeanVarianceNormalization, LRN; onnxruntime's
SimplifiedLayerNormalization and com.microsoft Skip*LayerNormalization):

* the float64 oracles against independent plain-Python (``math.fsum``) formulas and
  hand-derived identities (GroupNormalization with one group = LayerNormalization, with
  C groups = InstanceNormalization; LRN's asymmetric window for even sizes; ...);
* onnx.reference agreement where it is right, documented disagreements where not;
* determinism and coverage (every version x type of its constraint), on the entries of the
  operator table (:mod:`conformance.ops.normalization`; tags the engine writes: ``numerics``,
  ``shape`` -- the pattern, e.g. ``long-rows/...`` --, ``params`` -- the attribute state --,
  ``outputs``, and the entries' own ``axis``, ``p``, ``size``, ``num_groups``,
  ``scale_dtype``, ``stash_dtype``, ``skip_shape``, ``checker_rejects``...);
* independent numpy kernels run through ``KernelBackend``: legitimate ones pass every
  case, deliberately wrong ones are caught;
* contested cases (``Case.contested``): a backend rejecting one scores ``unsupported``,
  a wrong value on one is still ``fail``.
"""

from __future__ import annotations

import math
from collections import Counter

import ml_dtypes
import numpy as np
import onnx.checker
import onnx.defs
import pytest

from conformance import registry
from conformance.backends import resolve_backend
from conformance.backends.base import Backend
from conformance.backends.kernel import KernelBackend
from conformance.runner import run_cases
from conformance.reference import layer_normalization as lnref
from conformance.reference import normalization as ref
from oracle_checks import reduced_tolerances  # tests/oracle_checks.py

registry.available_ops()  # every family in registry order (the entries replace the retired generator)

OPS = ("InstanceNormalization", "GroupNormalization", "RMSNormalization", "LpNormalization",
       "MeanVarianceNormalization", "LRN")
#: com.microsoft contrib operators (schemas from onnxruntime)
MS_OPS = ("SkipLayerNormalization", "SkipSimplifiedLayerNormalization")
#: onnxruntime's operators in the ai.onnx domain (schemas from onnxruntime; unknown to onnx)
ORT_OPS = ("SimplifiedLayerNormalization",)
SLN = "SimplifiedLayerNormalization"
ALL_T = ("float16", "bfloat16", "float", "double")
HALF = (np.dtype(np.float16), np.dtype(ml_dtypes.bfloat16))


def _generate(seed: int):
    return registry.generate(OPS + MS_OPS + ORT_OPS, seed=seed)


@pytest.fixture(scope="module")
def suite():
    return _generate(0)


@pytest.fixture(scope="module")
def value_cases(suite):
    return [c for c in suite if c.expect_error is None]


def _long(c) -> bool:
    """A case of a long-rows pattern (4096 normalized elements)."""
    return c.tags["shape"].startswith("long-rows")


def _klass(c) -> str:
    """The case's numerics class, ``long-rows`` for the long-rows patterns."""
    return "long-rows" if _long(c) else c.tags["numerics"]


# ============================================================================ oracle vs plain formulas
def _fsum_standardize(vals, eps):
    n = len(vals)
    m = math.fsum(vals) / n
    var = math.fsum((v - m) ** 2 for v in vals) / n
    return [(v - m) / math.sqrt(var + eps) for v in vals]


def test_instance_and_group_oracles_match_fsum():
    rng = np.random.default_rng(1)
    x = rng.normal(size=(2, 6, 3, 2))
    s6, b6 = rng.normal(size=6), rng.normal(size=6)
    eps = ref.f32(1e-5)
    y = ref.instance_normalization(x, s6, b6)
    for n in range(2):
        for c in range(6):
            z = _fsum_standardize(list(x[n, c].ravel()), eps)
            np.testing.assert_allclose(y[n, c].ravel(), [v * s6[c] + b6[c] for v in z], rtol=1e-13, atol=1e-13)
    s2, b2 = rng.normal(size=2), rng.normal(size=2)
    y18 = ref.group_normalization(x, s2, b2, num_groups=2, version=18)
    y21 = ref.group_normalization(x, s6, b6, num_groups=2, version=21)
    for n in range(2):
        for g in range(2):
            z = np.array(_fsum_standardize(list(x[n, 3 * g:3 * g + 3].ravel()), eps)).reshape(3, 3, 2)
            np.testing.assert_allclose(y18[n, 3 * g:3 * g + 3], z * s2[g] + b2[g], rtol=1e-13, atol=1e-13)
            want21 = z * s6[3 * g:3 * g + 3, None, None] + b6[3 * g:3 * g + 3, None, None]
            np.testing.assert_allclose(y21[n, 3 * g:3 * g + 3], want21, rtol=1e-13, atol=1e-13)


def test_group_identities():
    rng = np.random.default_rng(2)
    x = rng.normal(size=(2, 4, 5))
    s, b = rng.normal(size=4), rng.normal(size=4)
    # num_groups == C: InstanceNormalization (both versions)
    np.testing.assert_allclose(ref.group_normalization(x, s, b, num_groups=4, version=21),
                               ref.instance_normalization(x, s, b), rtol=1e-13)
    np.testing.assert_allclose(ref.group_normalization(x, s, b, num_groups=4, version=18),
                               ref.instance_normalization(x, s, b), rtol=1e-13)
    # one group: LayerNormalization over axis 1 with a per-channel scale (21) / scalar scale (18)
    y_ln = lnref.layer_normalization(x, s[:, None], b[:, None], axis=1)[0]
    np.testing.assert_allclose(ref.group_normalization(x, s, b, num_groups=1, version=21), y_ln, rtol=1e-12)
    y_ln1 = lnref.layer_normalization(x, s[:1], b[:1], axis=1)[0]
    np.testing.assert_allclose(ref.group_normalization(x, s[:1], b[:1], num_groups=1, version=18), y_ln1,
                               rtol=1e-12)


def test_rms_oracle_matches_fsum_and_does_not_center():
    rng = np.random.default_rng(3)
    x = rng.normal(5.0, 1.0, size=(3, 4))
    s = rng.normal(size=4)
    y = ref.rms_normalization(x, s, axis=1, epsilon=1e-5)
    for r in range(3):
        rms = math.sqrt(math.fsum(v * v for v in x[r]) / 4 + ref.f32(1e-5))
        np.testing.assert_allclose(y[r], x[r] / rms * s, rtol=1e-14)
    assert np.all(y / s > 0)  # positive data stays positive: no mean subtracted


def test_simplified_layer_norm_oracle_matches_fsum():
    """Y = X / sqrt(mean(X^2) + eps) * scale over axis..r-1 (scale broadcast), inv_std_var
    = 1 / sqrt(mean(X^2) + eps) of shape X.shape[:axis] + [1, ...]; stash_type 1 or 11."""
    rng = np.random.default_rng(31)
    x = rng.normal(3.0, 1.0, size=(2, 3, 4))
    s = rng.normal(size=(1, 4))  # broadcast over the 3
    y, inv = ref.simplified_layer_normalization(x, s, axis=1, epsilon=1e-3, stash_type=11)
    assert y.shape == x.shape and inv.shape == (2, 1, 1)
    eps = float(np.float32(1e-3))
    for b in range(2):
        vals = list(x[b].ravel())
        rms = math.sqrt(math.fsum(v * v for v in vals) / len(vals) + eps)
        np.testing.assert_allclose(y[b], x[b] / rms * s, rtol=1e-14)
        assert math.isclose(inv[b, 0, 0], 1 / rms, rel_tol=1e-14)
    assert np.all(y / s > 0)  # no mean subtracted
    # the same Y as RMSNormalization-23
    y23 = ref.rms_normalization(x, s, axis=1, epsilon=1e-3)
    np.testing.assert_array_equal(y, y23)
    for bad in ({"axis": 3}, {"stash_type": 10}):
        with pytest.raises(ValueError):
            ref.simplified_layer_normalization(x, s, **bad)
    with pytest.raises(ValueError):
        ref.simplified_layer_normalization(x, np.ones((2, 4)), axis=1)


def test_simplified_layer_norm_variants_cover_both_stage_one_precisions():
    """Variants are computed in T's working precision and in U; inv_std_var is rounded to U."""
    x = np.random.default_rng(32).normal(size=(3, 8)).astype(np.float32)
    s = np.ones(8, np.float16)
    var = ref.simplified_layer_normalization_variants(x, s, stash_type=11)
    assert {k.split("-")[0] for k in var} == {"T", "U"}
    for y, inv in var.values():
        assert inv.shape == (3, 1) and y.shape == (3, 8)
        np.testing.assert_array_equal(y, y.astype(np.float16).astype(np.float64))  # rounded to V
    var1 = ref.simplified_layer_normalization_variants(x, s, stash_type=1)
    assert {k.split("-")[0] for k in var1} == {"T"}  # float32 is both
    for _, inv in var1.values():
        np.testing.assert_array_equal(inv, inv.astype(np.float32).astype(np.float64))


def test_lp_oracle():
    x = np.array([[3.0, -4.0, 0.0], [0.0, 0.0, 0.0]])
    np.testing.assert_allclose(ref.lp_normalization(x, p=2, axis=1), [[0.6, -0.8, 0.0], [0, 0, 0]])
    np.testing.assert_allclose(ref.lp_normalization(x, p=1, axis=1), [[3 / 7, -4 / 7, 0.0], [0, 0, 0]])
    np.testing.assert_allclose(ref.lp_normalization(x, p=1, axis=0), [[1.0, -1.0, 0.0], [0, 0, 0]])
    big = np.array([1e200, 1e200])  # scaled 2-norm does not overflow
    np.testing.assert_allclose(ref.lp_normalization(big, p=2, axis=0), [2 ** -0.5] * 2)
    with pytest.raises(ValueError):
        ref.lp_normalization(x, p=3)
    with pytest.raises(ValueError):
        ref.lp_normalization(x, axis=2)


def test_mvn_oracle():
    rng = np.random.default_rng(4)
    x = rng.normal(size=(2, 3, 2, 2))
    y = ref.mean_variance_normalization(x)  # default axes [0, 2, 3]
    for c in range(3):
        vals = list(x[:, c].ravel())
        m = math.fsum(vals) / len(vals)
        sd = math.sqrt(math.fsum((v - m) ** 2 for v in vals) / len(vals))
        np.testing.assert_allclose(y[:, c].ravel(), [(v - m) / (sd + 1e-9) for v in vals], rtol=1e-12)
    np.testing.assert_allclose(ref.mean_variance_normalization(x, axes=(-1, 1)),
                               ref.mean_variance_normalization(x, axes=(1, 3)))
    assert np.all(ref.mean_variance_normalization(np.full((2, 2, 2, 2), 3.0)) == 0.0)


def test_lrn_oracle_window_and_scaling():
    assert [ref.lrn_window(c, 2, 5) for c in range(5)] == [(0, 1), (1, 2), (2, 3), (3, 4), (4, 4)]
    assert [ref.lrn_window(c, 3, 4) for c in range(4)] == [(0, 1), (0, 2), (1, 3), (2, 3)]
    assert ref.lrn_window(2, 9, 4) == (0, 3)
    rng = np.random.default_rng(5)
    x = rng.normal(size=(1, 5, 2))
    a, b, k = ref.f32(0.7), ref.f32(0.6), ref.f32(1.3)
    y = ref.lrn(x, size=4, alpha=0.7, beta=0.6, bias=1.3)
    for c in range(5):
        lo, hi = max(0, c - 1), min(4, c + 2)  # floor(3/2) = 1 below, ceil(3/2) = 2 above
        for d in range(2):
            sq = math.fsum(x[0, i, d] ** 2 for i in range(lo, hi + 1))
            assert math.isclose(y[0, c, d], x[0, c, d] / (k + a / 4 * sq) ** b, rel_tol=1e-14)


def test_oracles_reject_invalid():
    x = np.zeros((2, 6, 3))
    with pytest.raises(ValueError, match="divisor"):
        ref.group_normalization(x, np.ones(4), np.ones(4), num_groups=4)
    with pytest.raises(ValueError, match="shape"):
        ref.group_normalization(x, np.ones(2), np.ones(2), num_groups=2, version=21)
    with pytest.raises(ValueError, match="shape"):
        ref.group_normalization(x, np.ones(6), np.ones(6), num_groups=2, version=18)
    with pytest.raises(ValueError):
        ref.instance_normalization(x, np.ones(5), np.ones(6))
    with pytest.raises(ValueError):
        ref.rms_normalization(x, np.ones(4), axis=-1)
    with pytest.raises(ValueError):
        ref.rms_normalization(x, np.ones(3), axis=3)
    with pytest.raises(ValueError):
        ref.mean_variance_normalization(x, axes=(0, 3))


# ============================================================================ suite properties
def test_generation_draws_from_its_seed(suite):
    """Another seed, other cases (the same seed's same bytes: test_ops_table, every entry)."""
    assert [c.id for c in _generate(1)] != [c.id for c in suite]


def _schema_types(op, version):
    s = onnx.defs.get_schema(op, version)
    names = {"tensor(float16)": "float16", "tensor(bfloat16)": "bfloat16", "tensor(float)": "float",
             "tensor(double)": "double"}
    return {names[t] for t in s.type_constraints[0].allowed_type_strs}


def test_coverage(suite, value_cases):
    all_versions = {}
    for s in onnx.defs.get_all_schemas_with_history():
        if s.name in OPS and s.domain == "":
            all_versions.setdefault(s.name, set()).add(s.since_version)
    have = Counter((c.op, c.since_version, c.tags["dtype"]) for c in value_cases)
    for op, versions in all_versions.items():
        for v in versions:
            for t in _schema_types(op, v):
                assert have[(op, v, t)] >= 2, (op, v, t)
            opsets = {c.opset for c in value_cases if c.op == op and c.since_version == v}
            assert v in opsets and len(opsets) >= 2, (op, v, opsets)
            assert any(c.op == op and c.since_version == v and c.expect_error for c in suite), (op, v)
    rms = [c for c in value_cases if c.op == "RMSNormalization"]
    assert {(c.tags["dtype"], c.tags["scale_dtype"]) for c in rms} == {(t, v) for t in ALL_T for v in ALL_T}
    assert all((c.contested is not None) == (c.tags["dtype"] != c.tags["scale_dtype"]) for c in rms)
    assert {c.tags["axis"] for c in value_cases if c.op == "RMSNormalization" and c.tags["rank"] == 5} == set(
        range(-5, 5))
    assert {c.tags["num_groups"] for c in value_cases if c.op == "GroupNormalization"} == {"one", "channels",
                                                                                           "between"}
    assert {c.tags["size"] for c in value_cases if c.op == "LRN"} == {1, 2, 3, 4, 5, 7}
    assert {c.tags["p"] for c in value_cases if c.op == "LpNormalization"} == {1, 2}
    assert any(c.tags["numerics"] == "zero-norm" for c in value_cases if c.op == "LpNormalization")
    tiny = {(c.since_version, c.tags["dtype"], c.tags["p"]) for c in value_cases
            if c.op == "LpNormalization" and c.tags["numerics"] == "tiny-norm"}
    assert tiny == {(v, t, p) for v, ts in ((1, ("float", "double")), (22, ("bfloat16", "float", "double")))
                    for t in ts for p in (1, 2)}
    assert any(_long(c) for c in value_cases if c.op == "GroupNormalization")
    assert any(c.opset == 28 for c in value_cases)
    assert max(c.opset for c in value_cases if c.opset != 28) <= 26
    # at least the retired generator's counts (seed 0)
    old = {"GroupNormalization": 108, "InstanceNormalization": 121, "LRN": 100, "LpNormalization": 225,
           "MeanVarianceNormalization": 90, "RMSNormalization": 179, SLN: 138, "SkipLayerNormalization": 34,
           "SkipSimplifiedLayerNormalization": 34}
    for op in OPS + MS_OPS + ORT_OPS:
        n = sum(c.op == op for c in suite)
        assert old[op] <= n <= 260, (op, n)
    # every numerics class of the retired generator, per operator
    classes = {"InstanceNormalization": {"normal", "constant-rows", "tiny-variance", "special", "large-offset",
                                         "long-rows"},
               "GroupNormalization": {"normal", "constant-rows", "tiny-variance", "special", "large-offset",
                                      "long-rows"},
               "RMSNormalization": {"normal", "large-offset", "constant-rows", "special", "tiny-variance",
                                    "long-rows"},
               "LpNormalization": {"normal", "zero-norm", "special", "long-rows", "tiny-norm"},
               "MeanVarianceNormalization": {"normal", "constant-rows", "special"},
               "LRN": {"normal", "special"},
               "SkipLayerNormalization": {"normal", "large-offset", "tiny-variance", "constant-rows", "special",
                                          "long-rows"}}
    for op, want in classes.items():
        for v in {c.since_version for c in value_cases if c.op == op}:
            got = {_klass(c) for c in value_cases if c.op == op and c.since_version == v}
            assert want <= got, (op, v, want - got)
    # several data sets for one model (every set is compared; the tolerance is the largest)
    assert {len(c.datasets) for c in value_cases if c.op == "InstanceNormalization"} == {1, 2}
    # MeanVarianceNormalization's constant rows are 0/0 in float16 (the body's 1e-9 is 0 there)
    assert not any(c.tags["numerics"] == "constant-rows" and c.tags["dtype"] == "float16" for c in value_cases
                   if c.op == "MeanVarianceNormalization")
    # RMSNormalization: every (rank, axis) for every uncontested T = V; T != V a few cases each
    for t in ALL_T:
        same = [c for c in rms if c.tags["dtype"] == t == c.tags["scale_dtype"]]
        assert {(c.tags["rank"], c.tags["axis"]) for c in same if "attr_axis" in c.tags} == {
            (r, a) for r in range(1, 6) for a in range(-r, r)}, t
    assert max(Counter(c.tags["types"] for c in rms if c.contested).values()) < len(rms) // 16
    # exact constant rows (a power-of-two row: every summation order computes the mean exactly)
    for op in ("InstanceNormalization", "GroupNormalization", "MeanVarianceNormalization"):
        assert any(c.tags["numerics"] == "constant-rows" and "/pow2" in c.tags["shape"]
                   for c in value_cases if c.op == op), op
    # zero-size batches where the text defines an empty result
    assert {c.op for c in value_cases if c.tags.get("zero_size")} >= {
        "InstanceNormalization", "GroupNormalization", "RMSNormalization", "LpNormalization",
        "MeanVarianceNormalization", "LRN", SLN}
    # attribute states of the retired generator: epsilon kinds, LRN parameter classes, Lp p
    for op in ("InstanceNormalization", "GroupNormalization", "RMSNormalization", SLN):
        eps = {c.attributes.get("epsilon") for c in value_cases if c.op == op}
        assert {None, 1e-12, 0.5} <= eps, (op, eps)
    lrn = {tuple(c.attributes.get(k) for k in ("size", "alpha", "beta", "bias")) for c in value_cases
           if c.op == "LRN"}
    assert {(3, None, None, None), (5, 1.0, 0.75, 2.0), (2, 0.5, 0.5, 1.0), (1, 2.0, 1.0, 0.5), (4, 1.5, 0.25, 1.0),
            (7, 0.9, 1.5, 3.0)} <= lrn
    assert {(c.attributes.get("p"), "axis" in c.attributes) for c in value_cases if c.op == "LpNormalization"} == {
        (None, True), (None, False), (1, True), (2, True), (2, False), (1, False)}
    for op in MS_OPS:
        cs = [c for c in value_cases if c.op == op]
        assert {c.domain for c in cs} == {"com.microsoft"}
        assert {c.tags["dtype"] for c in cs} == {"float16", "float", "bfloat16"}
        assert {c.tags["skip_shape"] for c in cs} == {"full", "batch1", "2d"}
        assert {c.tags["bias"] for c in cs} == {"present", "absent"}
        assert any("input_skip_bias_sum" in c.tags["outputs"] for c in cs)
        assert any(c.expect_error for c in suite if c.op == op)
        assert {c.opset for c in cs} == {1}  # com.microsoft opset 1: onnxruntime refuses a newer one
    outs = {c.tags["outputs"] for c in value_cases if c.op == "SkipLayerNormalization"}
    assert len(outs) == 8  # every optional-output pattern
    assert not any("mean" in c.tags["outputs"] for c in value_cases if c.op == "SkipSimplifiedLayerNormalization")
    assert {c.tags["beta"] for c in value_cases if c.op == "SkipLayerNormalization"} == {"present", "absent"}
    # the cases onnx's checker rejects although the schema admits them are contested (error
    # cases expect a rejection anyway)
    for c in value_cases:
        if c.op == "GroupNormalization" and c.since_version == 18:
            assert c.contested and "deprecated" in c.contested
        if c.op == "MeanVarianceNormalization":
            assert (c.contested is not None) == ("checker_rejects" in c.tags)


def test_simplified_layer_norm_coverage(suite, value_cases):
    """Every (T, U, V) with inv_std_var requested (U is bound by it), and without; U is
    the stash_type; every axis of rank 5; opsets; errors."""
    cs = [c for c in value_cases if c.op == SLN]
    assert all(c.domain == "" and c.since_version == 1 and c.contested is None for c in cs)
    combos = {(c.tags["dtype"], c.tags["stash_dtype"], c.tags["scale_dtype"]) for c in cs
              if c.tags["outputs"] == "Y,inv_std_var"}
    assert combos == {(t, u, v) for t in ALL_T for u in ("float", "double") for v in ALL_T}
    assert any(c.tags["outputs"] == "Y" for c in cs)
    for c in cs:
        stash = c.attributes.get("stash_type", 1)
        assert stash == {"float": 1, "double": 11}[c.tags["stash_dtype"]]
        outs = {o.name: o for o in c.outputs if o.present}
        assert outs["Y"].elem_type == c.inputs[1].elem_type  # Y: V = scale's type
        if "inv_std_var" in outs:
            assert outs["inv_std_var"].elem_type == stash  # U = stash_type
            ax = c.tags["axis"] % c.tags["rank"]
            shape = c.inputs[0].shape
            assert c.datasets[0].outputs["inv_std_var"].shape == shape[:ax] + (1,) * (len(shape) - ax)
    assert {c.tags["axis"] for c in cs if c.tags["rank"] == 5} == set(range(-5, 5))
    assert {c.tags["stash_type"] for c in cs if c.tags["stash_dtype"] == "float"} == {"explicit", "default"}
    assert {c.tags["scale_shape"] for c in cs} == {"full", "ones", "fewer-dims", "scalar"}
    assert {_klass(c) for c in cs} >= {"normal", "large-offset", "constant-rows", "special", "tiny-variance",
                                       "long-rows"}
    # the ai.onnx opsets of the schedule: the version's own, onnxruntime's newest, onnx's newest
    assert {c.opset for c in cs} == {1, 26, 28}
    errs = {c.tags["error"].split("=")[0] for c in suite if c.op == SLN and c.expect_error}
    assert errs == {"axis-range", "scale-shape", "stash-type", "inv-type"}
    # the invalid inv_std_var declarations: float16 (stash_type 10, not a U) and double with stash_type 1
    declared = {c.tags["error"]: (c.attributes["stash_type"], c.outputs[1].elem_type) for c in suite
                if c.op == SLN and c.tags.get("error") in ("stash-type", "inv-type")}
    assert declared == {"stash-type": (10, onnx.TensorProto.FLOAT16), "inv-type": (1, onnx.TensorProto.DOUBLE)}


# ============================================================================ kernels
def _wd(x):
    """Working dtype of an independent kernel: float32 for half types."""
    return np.float32 if x.dtype in HALF else x.dtype


def _eps(attrs, default=1e-5):
    """The epsilon attribute as the node stores it (a 32-bit float)."""
    return float(np.float32(attrs.get("epsilon", default)))


def _std(x, axes, eps, unbiased=False):
    m = x.mean(axis=axes, keepdims=True)
    d = x - m
    n = np.prod([x.shape[a] for a in axes])
    var = (d * d).sum(axis=axes, keepdims=True) / (n - 1 if unbiased else n)
    return d / np.sqrt(var + x.dtype.type(eps))


def k_instance(flaw=None):
    def kernel(inputs, attrs, outputs, opset):
        x, s, b = inputs["input"], inputs["scale"], inputs["B"]
        ref.instance_normalization(x.astype(np.float64), s, b)  # validation only
        w = _wd(x)
        xw = x.astype(w)
        y = _std(xw, tuple(range(2, x.ndim)), _eps(attrs), unbiased=flaw == "unbiased")
        sh = (1, -1) + (1,) * (x.ndim - 2)
        y = y * s.astype(w).reshape(sh) + b.astype(w).reshape(sh)
        return {"output": y.astype(x.dtype)}
    return kernel


def k_group(flaw=None):
    def kernel(inputs, attrs, outputs, opset):
        x, s, b = inputs["X"], inputs["scale"], inputs["bias"]
        g = attrs["num_groups"]
        version = 21 if opset >= 21 else 18
        n, c = x.shape[:2]
        if flaw == "per-group-scale-21":
            version = 18
            if s.shape == (c,) and c != g:
                s, b = s[:: c // g], b[:: c // g]
        ref.group_normalization(x.astype(np.float64), s, b, num_groups=g, version=version)
        w = np.float32 if (version >= 21 or x.dtype in HALF) else x.dtype
        xg = x.astype(w).reshape(n, g, c // g * int(np.prod(x.shape[2:])))
        y = _std(xg, (2,), _eps(attrs)).reshape(x.shape)
        sw, bw = s.astype(w), b.astype(w)
        if version < 21:
            sw, bw = np.repeat(sw, c // g), np.repeat(bw, c // g)
        sh = (1, c) + (1,) * (x.ndim - 2)
        y = y.astype(x.dtype).astype(_wd(x)) * sw.reshape(sh) + bw.reshape(sh)
        return {"Y": y.astype(x.dtype)}
    return kernel


def k_rms(flaw=None):
    def kernel(inputs, attrs, outputs, opset):
        x, s = inputs["X"], inputs["scale"]
        axis = attrs.get("axis", -1)
        ref.rms_normalization(x.astype(np.float64), s, axis=axis)
        ax = axis % x.ndim
        xf = x.astype(np.float32)
        axes = tuple(range(ax, x.ndim))
        if flaw == "subtract-mean":
            xf = xf - xf.mean(axis=axes, keepdims=True)
        ms = (xf * xf).mean(axis=axes, keepdims=True)
        y = (xf / np.sqrt(ms + _eps(attrs))).astype(x.dtype)
        return {"Y": (y.astype(np.float32) * s.astype(np.float32)).astype(s.dtype)}
    return kernel


def k_sln(flaw=None, stage_one="T"):
    """SimplifiedLayerNormalization in T's working precision (float32 for half types; or in
    U with ``stage_one="U"``), the product with scale in that precision, one cast to V."""
    def kernel(inputs, attrs, outputs, opset):
        x, s = inputs["X"], inputs["scale"]
        axis, stash = attrs.get("axis", -1), attrs.get("stash_type", 1)
        ref.simplified_layer_normalization(x.astype(np.float64), s, axis=axis, stash_type=stash)  # validation
        u = {1: np.float32, 11: np.float64}[stash]
        axes = tuple(range(axis % x.ndim, x.ndim))
        w = np.dtype(u if stage_one == "U" else _wd(x)).type
        xw = x.astype(w)
        if flaw == "subtract-mean":
            xw = xw - xw.mean(axis=axes, keepdims=True)
        ms = (xw * xw).mean(axis=axes, keepdims=True)
        e = w(_eps(attrs))
        std = np.sqrt(ms) + e if flaw == "eps-outside-sqrt" else np.sqrt(ms + e)
        y = xw / std * s.astype(w)
        inv = std if flaw == "inv-is-std" else 1 / std
        res = {"Y": y.astype(s.dtype), "inv_std_var": inv.astype(np.float32 if flaw == "inv-always-float" else u)}
        return {k: res[k] for k in outputs}
    return kernel


class SLNBackend(KernelBackend):
    """KernelBackend that also checks the declared output types of SimplifiedLayerNormalization
    models as onnxruntime's type inference does: Y of scale's type, inv_std_var of type stash_type."""

    def prepare(self, model, model_bytes):
        prepared = super().prepare(model, model_bytes)
        node, _, _, attrs = prepared
        if node.op_type == SLN:
            types = {v.name: v.type.tensor_type.elem_type for v in list(model.graph.input) + list(model.graph.output)}
            types.update({t.name: t.data_type for t in model.graph.initializer})
            if types[node.output[0]] != types[node.input[1]]:
                raise TypeError("Y must have scale's type")
            if len(node.output) > 1 and node.output[1] and types[node.output[1]] != attrs.get("stash_type", 1):
                raise TypeError("inv_std_var must have the type stash_type names")
        return prepared


def k_lp(flaw=None):
    def kernel(inputs, attrs, outputs, opset):
        x = inputs["input"]
        p, axis = attrs.get("p", 2), attrs.get("axis", -1)
        ref.lp_normalization(x.astype(np.float64), p=p, axis=axis)
        xw = x.astype(_wd(x))
        norm = np.abs(xw).sum(axis=axis, keepdims=True) if p == 1 else np.sqrt((xw * xw).sum(axis=axis,
                                                                                             keepdims=True))
        with np.errstate(invalid="ignore", divide="ignore"):
            if flaw == "clamp-eps":  # torch.nn.functional.normalize: x / max(||x||_p, 1e-12)
                norm = np.maximum(norm, xw.dtype.type(1e-12))
            y = xw / norm if flaw == "no-zero-guard" else np.where(norm == 0, 0, xw / np.where(norm == 0, 1, norm))
        return {"output": y.astype(x.dtype)}
    return kernel


def k_mvn(flaw=None):
    def kernel(inputs, attrs, outputs, opset):
        x = inputs["X"]
        axes = tuple(attrs.get("axes", (0, 2, 3)))
        ref.mean_variance_normalization(x.astype(np.float64), axes=axes)
        xw = x.astype(_wd(x))
        axes = tuple(a % x.ndim for a in axes)
        m = xw.mean(axis=axes, keepdims=True)
        d = xw - m
        n = np.prod([x.shape[a] for a in axes])
        sd = np.sqrt((d * d).sum(axis=axes, keepdims=True) / (n - 1 if flaw == "unbiased" else n))
        with np.errstate(invalid="ignore", divide="ignore"):
            return {"Y": (d / (sd + np.float32(1e-9))).astype(x.dtype)}
    return kernel


def k_lrn(flaw=None):
    def kernel(inputs, attrs, outputs, opset):
        x = inputs["X"]
        size = attrs["size"]
        a, b, k = (float(np.float32(attrs.get(n, d))) for n, d in (("alpha", 1e-4), ("beta", 0.75), ("bias", 1.0)))
        xw = x.astype(_wd(x))
        sq = np.zeros_like(xw)
        c_ = x.shape[1]
        for c in range(c_):
            lo, hi = ref.lrn_window(c, size, c_)
            if flaw == "symmetric-window":
                lo, hi = max(0, c - size // 2), min(c_ - 1, c + size // 2)
            sq[:, c] = (xw[:, lo:hi + 1] ** 2).sum(axis=1)
        scale = a if flaw == "no-size-division" else a / size
        return {"Y": (xw / (k + scale * sq) ** b).astype(x.dtype)}
    return kernel


def k_skip(simplified):
    def make(flaw=None):
        def kernel(inputs, attrs, outputs, opset):
            x, sk, g = inputs["input"], inputs["skip"], inputs["gamma"]
            beta, bias = inputs.get("beta"), inputs.get("bias")
            h = x.shape[-1]
            for p in (g, beta, bias):
                if p is not None and p.shape != (h,):
                    raise ValueError("parameter shape")
            if sk.shape[-1] != h:
                raise ValueError("skip shape")
            s = x.astype(np.float32) + sk.astype(np.float32)
            if bias is not None and flaw != "ignore-bias":
                s = s + bias.astype(np.float32)
            eps = _eps(attrs, 1e-12)
            if simplified and flaw != "subtract-mean":
                mean, d = None, s
            else:
                mean = s.mean(-1, keepdims=True)
                d = s - mean
            inv = 1 / np.sqrt((d * d).mean(-1, keepdims=True) + np.float32(eps))
            y = d * inv * g.astype(np.float32)
            if beta is not None:
                y = y + beta.astype(np.float32)
            res = {"output": y.astype(x.dtype), "inv_std_var": inv.astype(np.float32),
                   "input_skip_bias_sum": s.astype(x.dtype)}
            if mean is not None:
                res["mean"] = mean.astype(np.float32)
            return {k: res[k] for k in outputs}
        return kernel
    return make


KERNELS = {"SkipLayerNormalization": k_skip(False), "SkipSimplifiedLayerNormalization": k_skip(True),
           "InstanceNormalization": k_instance, "GroupNormalization": k_group, "RMSNormalization": k_rms,
           "LpNormalization": k_lp, "MeanVarianceNormalization": k_mvn, "LRN": k_lrn, SLN: k_sln}


def _checker_rejects(case) -> bool:
    """Cases onnx.checker rejects although they are valid: the contested ones
    (``Case.contested``: GroupNormalization-18 is deprecated; MeanVarianceNormalization's
    function body is ill-typed for every T but float and version 13's body leaves a
    default ``axes`` unbound; RMSNormalization's body infers Y as T when T != V), and the
    operators onnx does not know (com.microsoft, onnxruntime's SimplifiedLayerNormalization)."""
    return case.contested is not None or case.domain == "com.microsoft" or case.op in ORT_OPS


def test_legitimate_kernels_pass_everything(suite):
    kernels = {op: f() for op, f in KERNELS.items()}
    results = run_cases([c for c in suite if not _checker_rejects(c)], KernelBackend(kernels, name="numpy-f32"))
    results += run_cases([c for c in suite if _checker_rejects(c)], SLNBackend(kernels, name="numpy-f32", check=False))
    bad = [(r.id, r.outcome, r.message[:200]) for r in results if r.outcome != "pass"]
    assert not bad, bad[:5]


@pytest.mark.parametrize("op", OPS + MS_OPS + ORT_OPS)
def test_explore_strategy_draws_pass_the_legitimate_kernels(op):
    """Every operator of the family has the engine's explore strategy (the suite's parameter
    space drawn by hypothesis: versions, types, numerics classes, shape patterns, attribute
    states, optional inputs and outputs); its draws are valid cases that the legitimate
    kernels pass."""
    from hypothesis import HealthCheck, given, settings

    from conformance.runner import run_case

    key = f"com.microsoft:{op}" if op in MS_OPS else op
    seen = set()

    @settings(max_examples=12, database=None, deadline=None, suppress_health_check=list(HealthCheck))
    @given(registry.get_strategy(key))
    def draw(case):
        assert case.expect_error is None and case.op == op
        r = run_case(case, SLNBackend({op: KERNELS[op]()}, name="numpy-f32", check=False))
        assert r.outcome == "pass", (case.id, r.message[:300])
        seen.add(case.tags["numerics"])

    draw()
    assert len(seen) >= 2, seen


@pytest.mark.parametrize("stage_one", ["U"])
def test_simplified_layer_norm_stage_one_in_stash_precision_passes(stage_one, suite):
    """Computing stage one in U (as LayerNormalization-17 defines stash_type) is accepted too."""
    cases = [c for c in suite if c.op == SLN]
    res = run_cases(cases, SLNBackend({SLN: k_sln(stage_one=stage_one)}, name="stash", check=False))
    bad = [(r.id, r.outcome, r.message[:200]) for r in res if r.outcome != "pass"]
    assert not bad, bad[:5]


def test_checker_rejects_the_contested_cases(suite):
    """Every contested case is rejected by onnx's checker with full_check; the uncontested
    float MVN cases with explicit axes are accepted."""
    case = next(c for c in suite if c.op == "GroupNormalization" and c.since_version == 18)
    with pytest.raises(onnx.checker.ValidationError, match="deprecated"):
        onnx.checker.check_model(case.model, full_check=True)
    for t in ("double", "float16"):
        case = next(c for c in suite if c.op == "MeanVarianceNormalization" and c.tags["dtype"] == t)
        assert case.contested and "ill-typed" in case.contested
        with pytest.raises(Exception, match="inconsistent type"):
            onnx.checker.check_model(case.model, full_check=True)
    case = next(c for c in suite if c.op == "MeanVarianceNormalization" and c.tags["dtype"] == "float"
                and c.expect_error is None and c.contested is None)
    onnx.checker.check_model(case.model, full_check=True)
    case = next(c for c in suite if c.tags.get("checker_rejects") == "default-axes-unbound")
    assert case.contested and "unbound" in case.contested
    with pytest.raises(Exception, match="value"):
        onnx.checker.check_model(case.model, full_check=True)
    case = next(c for c in suite if c.op == "RMSNormalization" and c.contested)
    with pytest.raises(Exception, match="Y"):
        onnx.checker.check_model(case.model, full_check=True)
    contested = [c for c in suite if c.contested is not None]
    assert {c.op for c in contested} == {"GroupNormalization", "MeanVarianceNormalization", "RMSNormalization"}
    # every one but GroupNormalization-21's empty batches (test_group_normalization_empty_batch_is_contested)
    for c in [c for c in contested if not _empty_batch(c)][::7]:
        with pytest.raises(Exception):
            onnx.checker.check_model(c.model, full_check=True)


def _empty_batch(c) -> bool:
    """GroupNormalization-21 contested for its empty batch (the function body cannot run)."""
    return c.contested is not None and c.contested.startswith("N = 0")


def test_group_normalization_empty_batch_is_contested(value_cases):
    """GroupNormalization-21 with N = 0: the text defines an empty Y (the oracle's), but the
    function body reshapes to ``[0, 0, -1]``, whose -1 Reshape cannot infer from an empty
    tensor.  onnx's checker accepts the model, onnx.reference (which expands the body) fails
    at run: the case is contested, so a runtime failing like the body scores unsupported."""
    cases = [c for c in value_cases if c.op == "GroupNormalization" and c.since_version == 21
             and c.tags.get("zero_size")]
    assert cases and all(_empty_batch(c) for c in cases)
    assert all(c.datasets[0].outputs["Y"].size == 0 for c in cases)
    for c in cases:
        onnx.checker.check_model(c.model, full_check=True)
    res = _ref_outcomes(cases)
    assert {r.outcome for r in res.values()} == {"unsupported"}, [r.message[:200] for r in res.values()]
    assert all("reshape" in r.message for r in res.values())
    # a non-empty batch of the same layout is not contested
    assert any(c.contested is None and c.tags["shape"].startswith("r3/G=1") for c in value_cases
               if c.op == "GroupNormalization" and c.since_version == 21)


class _Rejecting(Backend):
    """Refuses every model at prepare with a plain (not 'unsupported') error."""

    name = "rejecting"

    def prepare(self, model, model_bytes):
        raise RuntimeError("type inference failed: Y has inconsistent type")

    def run(self, prepared, inputs, output_names):
        raise AssertionError("never prepared")


def test_contested_case_rejected_is_unsupported_but_wrong_value_fails(suite):
    """A backend rejecting a contested model scores ``unsupported`` ("contested model ...");
    rejecting an uncontested valid model is ``error``; a wrong value on a contested model
    is still ``fail``."""
    contested = [c for c in suite if c.contested is not None and c.expect_error is None]
    picks = [next(c for c in contested if c.op == op)
             for op in ("GroupNormalization", "MeanVarianceNormalization", "RMSNormalization")]
    plain = next(c for c in suite if c.op == "RMSNormalization" and c.contested is None and c.expect_error is None)
    res = run_cases(picks + [plain], _Rejecting())
    assert [r.outcome for r in res] == ["unsupported"] * 3 + ["error"]
    assert all(r.message.startswith("contested model") for r in res[:3])
    rms = [c for c in contested if c.op == "RMSNormalization"]
    res = run_cases(rms, KernelBackend({"RMSNormalization": k_rms("subtract-mean")}, check=False))
    assert any(r.outcome == "fail" for r in res)
    assert all(r.outcome in ("pass", "fail") for r in res)
    res = run_cases(rms, KernelBackend({"RMSNormalization": k_rms()}, check=False))
    assert all(r.outcome == "pass" for r in res), [r.message[:200] for r in res if r.outcome != "pass"][:3]


FLAWS = (
    ("GroupNormalization", "per-group-scale-21", lambda c: c.since_version == 21),
    ("InstanceNormalization", "unbiased", lambda c: True),
    ("LRN", "no-size-division", lambda c: True),
    ("LRN", "symmetric-window", lambda c: True),
    ("RMSNormalization", "subtract-mean", lambda c: True),
    ("LpNormalization", "no-zero-guard", lambda c: True),
    ("LpNormalization", "clamp-eps", lambda c: c.tags["numerics"] == "tiny-norm"),
    ("MeanVarianceNormalization", "unbiased", lambda c: True),
    ("SkipLayerNormalization", "ignore-bias", lambda c: True),
    ("SkipSimplifiedLayerNormalization", "subtract-mean", lambda c: True),
    ("SkipSimplifiedLayerNormalization", "ignore-bias", lambda c: True),
    (SLN, "subtract-mean", lambda c: True),
    (SLN, "eps-outside-sqrt", lambda c: True),
    (SLN, "inv-is-std", lambda c: "inv_std_var" in c.tags["outputs"]),
    (SLN, "inv-always-float", lambda c: "inv_std_var" in c.tags["outputs"]),
)


@pytest.mark.parametrize("op,flaw,sel", FLAWS, ids=[f[1] + "-" + f[0] for f in FLAWS])
def test_wrong_kernel_is_caught(op, flaw, sel, value_cases):
    cases = [c for c in value_cases if c.op == op and sel(c)]
    results = run_cases(cases, SLNBackend({op: KERNELS[op](flaw)}, name=flaw, check=False))
    assert sum(r.outcome == "fail" for r in results) >= 1


# ============================================================================ onnx.reference
def _ref_outcomes(cases):
    return {r.id: r for r in run_cases(cases, resolve_backend("onnx-reference"))}


def test_onnx_reference_agrees_where_it_is_right(value_cases):
    """float/double cases of the ops onnx.reference implements faithfully (the classes
    below excluded) pass against the oracle."""
    def ok(c):
        t = c.tags
        if c.domain or c.op in ORT_OPS:
            return False  # onnx.reference has no kernels for onnxruntime's operators
        if c.contested is not None:
            return False  # see test_disagreement_onnx_reference_rms_t_ne_v_returns_t
        if t["dtype"] not in ("float", "double") or _klass(c) in ("long-rows", "large-offset"):
            return False
        if c.op == "LRN" or (c.op == "LpNormalization" and t["p"] == 1) or "checker_rejects" in t:
            return False
        if t["params"] == "legacy":
            return False  # see test_disagreement_onnx_reference_rejects_legacy_consumed_inputs
        return True
    cases = [c for c in value_cases if ok(c)][::2]
    assert {c.op for c in cases} == set(OPS) - {"LRN"}
    bad = [(r.id, r.message[:120]) for r in _ref_outcomes(cases).values() if r.outcome != "pass"]
    assert not bad, bad[:5]


def test_disagreement_onnx_reference_rejects_legacy_consumed_inputs(value_cases):
    """InstanceNormalization-1 declares the legacy ``consumed_inputs`` attribute; onnx.reference's
    implementation does not take it (TypeError).  The oracle is right: the attribute is an
    in-place hint that changes no value."""
    cases = [c for c in value_cases if c.tags["params"] == "legacy"]
    assert {(c.op, c.since_version) for c in cases} == {("InstanceNormalization", 1)} and len(cases) >= 3
    assert all("consumed_inputs" in c.attributes for c in cases)
    res = _ref_outcomes(cases)
    assert {r.outcome for r in res.values()} == {"error"}
    assert all("consumed_inputs" in r.message or "attrib" in r.message for r in res.values())


def test_disagreement_onnx_reference_lrn_loops_over_the_batch_axis(value_cases):
    """onnx.reference's LRN iterates ``for c in range(x.shape[0])`` (N, not C): channels
    >= N get square_sum = 0.  It also rejects every rank but 4.  The oracle is right
    (spec: the window is across channels of an N x C x D1 ... Dk tensor)."""
    cases = [c for c in value_cases if c.op == "LRN" and c.tags["numerics"] == "normal"]
    res = _ref_outcomes(cases)
    assert any(r.outcome == "fail" for r in res.values())
    assert all(r.outcome == "error" for c in cases if c.tags["rank"] != 4 for r in [res[c.id]])
    x = np.random.default_rng(0).normal(size=(1, 4, 1, 1)).astype(np.float32)
    y = ref.lrn(x, size=3, alpha=1.0, beta=1.0, bias=1.0)
    assert not np.allclose(y[0, 1:], x[0, 1:])  # onnx.reference returns x / bias^beta there


def test_disagreement_onnx_reference_lp1_forgets_the_absolute_value(value_cases):
    """onnx.reference computes ``sum(x^p)^(1/p)``: for p = 1 negative entries cancel
    (spec: the L1 norm, sum |x|)."""
    cases = [c for c in value_cases if c.op == "LpNormalization" and c.tags["p"] == 1
             and c.tags["numerics"] == "normal" and c.tags["dtype"] == "float"]
    res = _ref_outcomes(cases)
    assert sum(r.outcome == "fail" for r in res.values()) >= len(cases) // 2


def test_disagreement_onnx_reference_rms_float16_stage_one_in_T(value_cases):
    """RMSNormalization with stash_type 1 must compute stage one in float; onnx.reference
    squares float16 X in float16 (512^2 overflows it... to inf, then Y = 0)."""
    cases = [c for c in value_cases if c.op == "RMSNormalization" and c.tags["dtype"] == "float16"
             and c.tags["numerics"] == "large-offset"]
    res = _ref_outcomes(cases)
    assert any(r.outcome == "fail" for r in res.values())
    x = np.full((1, 4), 512.0, np.float16)
    np.testing.assert_allclose(ref.rms_normalization(x, np.ones(4, np.float16)), 1.0, rtol=1e-6)


def test_disagreement_onnx_reference_rms_t_ne_v_returns_t(value_cases):
    """Contested RMSNormalization with T != V: onnx.reference returns Y of type T (the
    function body's inferred type), the declared output type is V."""
    cases = [c for c in value_cases if c.op == "RMSNormalization" and c.contested][:6]
    res = _ref_outcomes(cases)
    assert all(r.outcome == "fail" and "dtype" in r.message for r in res.values())


def test_group_normalization_body_is_one_pass_and_loses_large_offset_data(value_cases):
    """GroupNormalization-18/21's function body computes Var = E[x^2] - E[x]^2 (onnxruntime
    and onnx.reference expand it): large-offset cases separate it from the two-pass
    definition; a one-pass float32 kernel is rejected on them."""
    body = onnx.defs.get_schema("GroupNormalization", 21)
    assert body.has_context_dependent_function

    def onepass(inputs, attrs, outputs, opset):
        x, s, b = inputs["X"], inputs["scale"], inputs["bias"]
        g, (n, c) = attrs["num_groups"], x.shape[:2]
        xr = x.astype(np.float32).reshape(n, g, c // g * int(np.prod(x.shape[2:])))
        m = xr.mean(-1, keepdims=True)
        var = (xr * xr).mean(-1, keepdims=True) - m * m
        y = ((xr - m) / np.sqrt(var + _eps(attrs))).reshape(x.shape).astype(x.dtype).astype(np.float32)
        sh = (1, c) + (1,) * (x.ndim - 2)
        return {"Y": (y * s.astype(np.float32).reshape(sh) + b.astype(np.float32).reshape(sh)).astype(x.dtype)}

    cases = [c for c in value_cases if c.op == "GroupNormalization" and c.since_version == 21]
    res = run_cases(cases, KernelBackend({"GroupNormalization": onepass}, check=False))
    failed = {c.tags["numerics"] for c, r in zip(cases, res) if r.outcome == "fail"}
    assert "large-offset" in failed and failed <= {"large-offset", "tiny-variance"}


# ============================================================================ statistics an ulp off, folded kernels
# Issue 10: the tolerance must bound what any kernel at the mandated precision can do, not only
# the spread of the reference's own variants.  These kernels compute everything exactly (float64)
# except the statistics, which they round to the mandated precision P and then move by one ulp
# of P (a summation order that lands one ulp away); the output is rounded once.  A mean that
# every summation order computes exactly (a constant row of 2^k elements) is not moved.
F32, F64 = np.dtype(np.float32), np.dtype(np.float64)
BF16 = np.dtype(ml_dtypes.bfloat16)
_BITS = {np.dtype(np.float16): 11, BF16: 8, F32: 24, F64: 53}
_TINY = {np.dtype(np.float16): 2.0 ** -24, BF16: 2.0 ** -133, F32: 2.0 ** -149, F64: 5e-324}


def _rt(a, dt):
    """Round float64 values to dt and back."""
    a = np.asarray(a, dtype=np.float64)
    dt = np.dtype(dt)
    return a if dt == F64 else a.astype(F32).astype(dt).astype(np.float64) if dt == BF16 else a.astype(dt).astype(
        np.float64)


def ulp_off(a, dt, sign):
    """``a`` rounded to dt, then one ulp of dt further in direction ``sign``."""
    r = _rt(a, dt)
    dt = np.dtype(dt)
    with np.errstate(divide="ignore"):
        e = np.floor(np.log2(np.abs(np.where(r == 0, 1.0, r))))
    step = np.where(r == 0, _TINY[dt], np.maximum(2.0 ** (e - (_BITS[dt] - 1)), _TINY[dt]))
    return _rt(r + sign * step, dt)


def _exact_mean(rows):
    n = rows.shape[1]
    return np.all(rows == rows[:, :1], axis=1) & (n & (n - 1) == 0)


def std_off(rows, eps, p_dt, sm, sv, *, center=True, plus_eps=False):
    """(normalized, mean', inv') of (rows, n) float64 values with statistics one ulp of p_dt off."""
    with np.errstate(all="ignore"):
        if center:
            m = rows.mean(axis=1)
            m = np.where(_exact_mean(rows), m, ulp_off(m, p_dt, sm))[:, None]
        else:
            m = np.zeros((rows.shape[0], 1))
        d = rows - m
        v = np.maximum(ulp_off((d * d).mean(axis=1, keepdims=True), p_dt, sv), 0.0)  # a sum of squares is >= 0
        inv = 1.0 / (np.sqrt(v) + eps) if plus_eps else 1.0 / np.sqrt(v + eps)
        return d * inv, m, inv


def _out(y, dt):
    return _rt(y, dt).astype(dt)


def _p(*dts):
    """The coarsest of the given precisions."""
    return max((np.dtype(d) for d in dts), key=lambda d: -_BITS[d])


def k_off(op, sm, sv):
    """A kernel of ``op`` whose statistics are one ulp of the mandated precision off."""
    def kernel(inputs, attrs, outputs, opset):
        eps = _eps(attrs, 1e-12 if op in MS_OPS else 1e-5)
        if op == "InstanceNormalization":
            x, s, b = (inputs[k].astype(np.float64) for k in ("input", "scale", "B"))
            t = inputs["input"].dtype
            n, c = x.shape[:2]
            y, _, _ = std_off(x.reshape(n * c, int(np.prod(x.shape[2:]))), eps, t, sm, sv)
            sh = (1, c) + (1,) * (x.ndim - 2)
            return {"output": _out(y.reshape(x.shape) * s.reshape(sh) + b.reshape(sh), t)}
        if op == "GroupNormalization":
            x, s, b = (inputs[k].astype(np.float64) for k in ("X", "scale", "bias"))
            t, g = inputs["X"].dtype, attrs["num_groups"]
            n, c = x.shape[:2]
            y, _, _ = std_off(x.reshape(n * g, c // g * int(np.prod(x.shape[2:]))), eps, F32 if opset >= 21 else t,
                              sm, sv)
            if opset < 21:
                s, b = np.repeat(s, c // g), np.repeat(b, c // g)
            sh = (1, c) + (1,) * (x.ndim - 2)
            return {"Y": _out(y.reshape(x.shape) * s.reshape(sh) + b.reshape(sh), t)}
        if op == "MeanVarianceNormalization":
            xin = inputs["X"]
            x, t = xin.astype(np.float64), xin.dtype
            axes = sorted(a % x.ndim for a in attrs.get("axes", (0, 2, 3)))
            keep = [i for i in range(x.ndim) if i not in axes]
            xt = np.transpose(x, keep + axes)
            y, _, _ = std_off(xt.reshape(-1, int(np.prod([x.shape[a] for a in axes]))), 1e-9, t, sm, sv,
                              plus_eps=True)
            return {"Y": _out(np.transpose(y.reshape(xt.shape), np.argsort(keep + axes)), t)}
        if op in ("RMSNormalization", SLN):
            x, s = inputs["X"].astype(np.float64), inputs["scale"].astype(np.float64)
            t, v = inputs["X"].dtype, inputs["scale"].dtype
            ax = attrs.get("axis", -1) % x.ndim
            stash = attrs.get("stash_type", 1)
            u = {1: F32, 11: F64}[stash]
            p_dt = F32 if op == "RMSNormalization" else _p(_wd(inputs["X"]), u)
            y, _, inv = std_off(x.reshape(int(np.prod(x.shape[:ax])), int(np.prod(x.shape[ax:]))), eps, p_dt, sm, sv,
                                center=False)
            res = {"Y": _out(y.reshape(x.shape) * s, v),
                   "inv_std_var": _out(inv.reshape(x.shape[:ax] + (1,) * (x.ndim - ax)), u)}
            return {k: res[k] for k in outputs}
        if op in MS_OPS:
            x = inputs["input"].astype(np.float64) + inputs["skip"].astype(np.float64)
            if inputs.get("bias") is not None:
                x = x + inputs["bias"].astype(np.float64)
            t = inputs["input"].dtype
            h = x.shape[-1]
            y, m, inv = std_off(x.reshape(-1, h), eps, F32, sm, sv, center=op == "SkipLayerNormalization")
            y = y.reshape(x.shape) * inputs["gamma"].astype(np.float64)
            if inputs.get("beta") is not None:
                y = y + inputs["beta"].astype(np.float64)
            rs = x.shape[:-1] + (1,)
            res = {"output": _out(y, t), "mean": _out(m.reshape(rs), F32), "inv_std_var": _out(inv.reshape(rs), F32),
                   "input_skip_bias_sum": _out(x, t)}
            return {k: res[k] for k in outputs}
        if op == "LpNormalization":
            xin = inputs["input"]
            x, t = xin.astype(np.float64), xin.dtype
            p, axis = attrs.get("p", 2), attrs.get("axis", -1)
            with np.errstate(all="ignore"):
                nrm = np.abs(x).sum(axis=axis, keepdims=True) if p == 1 else np.sqrt((x * x).sum(axis=axis,
                                                                                                 keepdims=True))
                nrm = np.where(nrm == 0, 0.0, ulp_off(nrm, t, sm))
                return {"output": _out(np.where(nrm == 0, 0.0, x / np.where(nrm == 0, 1.0, nrm)), t)}
        if op == "LRN":
            xin = inputs["X"]
            x, t = xin.astype(np.float64), xin.dtype
            size = attrs["size"]
            a, b, k = (float(np.float32(attrs.get(n, d))) for n, d in (("alpha", 1e-4), ("beta", 0.75), ("bias", 1.0)))
            sq = np.zeros_like(x)
            for c in range(x.shape[1]):
                lo, hi = ref.lrn_window(c, size, x.shape[1])
                sq[:, c] = (x[:, lo:hi + 1] ** 2).sum(axis=1)
            with np.errstate(all="ignore"):
                return {"Y": _out(x / (k + a / size * ulp_off(sq, t, sm)) ** b, t)}
        raise AssertionError(op)
    return kernel


STAT_OPS = ("InstanceNormalization", "GroupNormalization", "MeanVarianceNormalization", "RMSNormalization", SLN,
            "LpNormalization", "LRN") + MS_OPS
SIGNS = ((1, 1), (-1, -1), (1, -1))


@pytest.mark.parametrize("op", STAT_OPS)
def test_statistics_one_ulp_off_pass_every_case(op, value_cases):
    """Kernels whose mean and variance (mean square, norm, square sum) are one ulp of the
    mandated precision off pass every value case of the op, in every direction."""
    cases = [c for c in value_cases if c.op == op]
    assert len(cases) >= 30
    for sm, sv in SIGNS:
        res = run_cases(cases, SLNBackend({op: k_off(op, sm, sv)}, name=f"off{sm}{sv}", check=False))
        bad = [(r.id, r.message[:200]) for r in res if r.outcome != "pass"]
        assert not bad, (sm, sv, len(bad), bad[:3])


def _failed_numerics(op, cases):
    failed = set()
    for sm, sv in SIGNS:
        res = run_cases(cases, SLNBackend({op: k_off(op, sm, sv)}, check=False))
        failed |= {_klass(c) for c, r in zip(cases, res) if r.outcome == "fail"}
    return failed


@pytest.mark.parametrize("op", STAT_OPS)
def test_propagated_term_alone_bounds_ulp_off_statistics(op, value_cases):
    """The derived term, without the variants' spread (only it and the output-ulp floor), bounds
    the statistics-one-ulp-off kernels on every case: a derivation, not an empirical margin."""
    cases = [c for c in value_cases if c.op == op]
    assert not _failed_numerics(op, reduced_tolerances(cases, spread=False, propagated=True))


CENTERED = ("InstanceNormalization", "GroupNormalization", "MeanVarianceNormalization", "SkipLayerNormalization")


@pytest.mark.parametrize("op", CENTERED)
def test_propagated_term_is_needed(op, value_cases):
    """Without the term (and the spread), the ulp-off kernels of the centred operators fail
    large-offset / tiny-variance cases: the mean's rounding is amplified by |scale|/sqrt(var + eps)."""
    cases = [c for c in value_cases if c.op == op]
    failed = _failed_numerics(op, reduced_tolerances(cases, spread=False, propagated=False))
    # MeanVarianceNormalization has no large-offset class (its body's one-pass variance is a variant)
    hard = {"large-offset", "tiny-variance", "long-rows"} if op != "MeanVarianceNormalization" else {"normal"}
    assert failed & hard, failed


def k_folded(op):
    """Folded kernels: ``a = scale / sqrt(var + eps)``, ``c = B - mean * a``, ``y = x * a + c``
    in float32 (double for double), one cast (the re-association rule)."""
    def kernel(inputs, attrs, outputs, opset):
        eps = _eps(attrs, 1e-12 if op in MS_OPS else 1e-5)
        if op == "MeanVarianceNormalization":
            x = inputs["X"]
            w = np.dtype(_wd(x)).type
            axes = tuple(a % x.ndim for a in attrs.get("axes", (0, 2, 3)))
            xw = x.astype(w)
            m = xw.mean(axis=axes, keepdims=True)
            r = w(1) / (np.sqrt(((xw - m) ** 2).mean(axis=axes, keepdims=True)) + w(1e-9))
            return {"Y": (xw * r - m * r).astype(x.dtype)}
        if op in MS_OPS:
            x = inputs["input"]
            s = x.astype(np.float32) + inputs["skip"].astype(np.float32)
            if inputs.get("bias") is not None:
                s = s + inputs["bias"].astype(np.float32)
            m = s.mean(-1, keepdims=True)
            inv = np.float32(1) / np.sqrt(((s - m) ** 2).mean(-1, keepdims=True) + np.float32(eps))
            a = inv * inputs["gamma"].astype(np.float32)
            beta = inputs["beta"].astype(np.float32) if inputs.get("beta") is not None else np.float32(0)
            res = {"output": (s * a + (beta - m * a)).astype(x.dtype), "mean": m, "inv_std_var": inv,
                   "input_skip_bias_sum": s.astype(x.dtype)}
            return {k: res[k] for k in outputs}
        if op == "InstanceNormalization":
            x, s, b = inputs["input"], inputs["scale"], inputs["B"]
            rows, w = x.reshape(x.shape[0] * x.shape[1], int(np.prod(x.shape[2:]))), np.dtype(_wd(x)).type
            sr, br = np.tile(s, x.shape[0])[:, None].astype(w), np.tile(b, x.shape[0])[:, None].astype(w)
        else:  # GroupNormalization
            x, s, b = inputs["X"], inputs["scale"], inputs["bias"]
            g, (n, c) = attrs["num_groups"], x.shape[:2]
            w = np.float32 if (opset >= 21 or x.dtype in HALF) else x.dtype.type
            if opset < 21:
                s, b = np.repeat(s, c // g), np.repeat(b, c // g)
            rows = x.reshape(n * g, c // g * int(np.prod(x.shape[2:])))
            sh = (1, c) + (1,) * (x.ndim - 2)
            sr = np.broadcast_to(s.astype(w).reshape(sh), x.shape).reshape(rows.shape)
            br = np.broadcast_to(b.astype(w).reshape(sh), x.shape).reshape(rows.shape)
        xw = rows.astype(w)
        m = xw.mean(axis=1, keepdims=True)
        a = sr * (w(1) / np.sqrt(((xw - m) ** 2).mean(axis=1, keepdims=True) + w(eps)))
        return {"output" if op == "InstanceNormalization" else "Y": (xw * a + (br - m * a)).reshape(x.shape).astype(
            x.dtype)}
    return kernel


@pytest.mark.parametrize("op", ("InstanceNormalization", "GroupNormalization", "MeanVarianceNormalization") + MS_OPS[:1])
def test_folded_kernels_pass_every_case(op, value_cases):
    """The fold (PyTorch's CPU instance/group/batch norm, onnxruntime's InstanceNormalization)
    is legitimate at the mandated precision: it passes every value case."""
    cases = [c for c in value_cases if c.op == op]
    res = run_cases(cases, SLNBackend({op: k_folded(op)}, name="folded", check=False))
    bad = [(r.id, r.message[:200]) for r in res if r.outcome != "pass"]
    assert not bad, (len(bad), bad[:3])
