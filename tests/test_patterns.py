"""Tests of the layer-pattern core and its first families (conformance/patterns/, issue 26).

* the composed float64 oracle against independent formulas (LayerNormalization, RMSNorm, Gelu
  erf and tanh, Swish, Dense in numpy float64), per canonical case;
* onnx.reference on every unfused graph passes every case (no disagreement to explain);
* a backend with levels (tests/pattern_rewrites.py): the right rewrites (exact fused kernels,
  float32 inside for 16-bit graphs) pass every case and fire; each deliberately wrong rewrite
  -- a LayerNormalization fusion accepting a scale that broadcasts to a larger shape, one
  ignoring Sub's operand order, one ignoring an exponent other than 2, a transpose fusion
  treating an identity permutation as a swap, a Gelu fusion using the tanh form for the erf
  form -- makes some case an optimizer failure (fail at ``opt``, pass at ``disable``), and
  exactly on the cases whose variation it mishandles;
* the tolerance rejects wrong kernels a few ulps-per-node cannot explain (a float16 chain
  without float32 accumulation is legitimate, Gelu-tanh for Gelu-erf in float32 is not);
* levels: classification, expansion, the run's results.json section and report;
* reproducibility, bundle round trip (onnx's loader reads pattern cases), unchanged single-node
  bytes;
* onnxruntime records the optimized graph and its LayerNormalization fusion fires.
"""

from __future__ import annotations

import math
from collections import Counter
from functools import lru_cache

import numpy as np
import onnx
import pytest

from conformance import levels, registry
from conformance.case import Case
from conformance.patterns import core, dense, gelu, layernorm
from conformance.runner import run_cases

import pattern_rewrites as pr  # tests/pattern_rewrites.py

pytestmark = pytest.mark.filterwarnings("ignore::RuntimeWarning")


@lru_cache(maxsize=None)
def _cases(name: str, seed: int = 0) -> tuple[Case, ...]:
    return tuple(core.pattern_cases(core.PATTERNS[name], seed))


def _feeds(c: Case) -> dict[str, np.ndarray]:
    ds = c.datasets[0].inputs
    out = {i.name: np.asarray(ds[i.name] if i.name in ds else i.value, dtype=np.float64) for i in c.inputs}
    for n in c.model.graph.node:  # Constant nodes
        if n.op_type == "Constant":
            out[n.output[0]] = onnx.numpy_helper.to_array(n.attribute[0].t).astype(np.float64)
    return out


def _ulps_off(c: Case, want: np.ndarray, k: float = 1.0) -> None:
    """The expected output is the float64 ``want`` rounded to T (within ``k`` ulps: the oracle's
    exact reductions and the formula's float64 ones differ in the last bits of float64)."""
    out = c.outputs[0]
    got = np.asarray(c.datasets[0].outputs[out.name], dtype=np.float64)
    assert got.shape == want.shape, c.id
    if not got.size:
        return
    eps = float(np.finfo(c.datasets[0].outputs[out.name].dtype).eps)
    fin = np.isfinite(want)
    assert np.array_equal(np.isnan(got), np.isnan(want)), c.id
    scale = max(1.0, np.abs(want[fin]).max(initial=1.0))
    np.testing.assert_allclose(got[fin], want[fin], rtol=k * eps, atol=k * eps * scale, err_msg=c.id)


# ============================================================================ composed oracle
def test_layernorm_oracle_is_the_formula():
    n = 0
    for c in _cases("LayerNormalization.decomposed"):
        v = {k[2:]: x for k, x in c.tags.items() if k.startswith("v_")}
        if c.tags.get("near_miss") or c.dtype == "float16":
            continue
        f = _feeds(c)
        x = f["X"]
        ax = (-2, -1) if v["norm_axes"] == "last-two" else -1
        m = x.mean(axis=ax, keepdims=True)
        var = ((x - m) ** 2).mean(axis=ax, keepdims=True)
        y = (x - m) / np.sqrt(var + f["epsilon"]) * f["scale"]
        if v["bias"] == "present":
            y = y + f["bias"]
        # the formula in float64 loses |mean| / sd ulps in x - mean (the oracle is exact)
        _ulps_off(c, y, 4 if v["offset"] != "large" else 1024)
        n += 1
    assert n >= 20


def test_near_miss_oracles_follow_the_graph_not_the_layer():
    seen = Counter()
    for c in _cases("LayerNormalization.decomposed"):
        nm = c.tags.get("near_miss")
        if not nm or c.dtype == "float16":
            continue
        f = _feeds(c)
        x = f["X"]
        ax = -2 if nm == "axis=not-last" else -1
        m = x.mean(axis=ax, keepdims=True)
        d = (m - x) if nm == "sub_order=swapped" else (x - m)
        with np.errstate(invalid="ignore"):
            var = (d ** (3.0 if nm == "exponent=3" else 2.0)).mean(axis=ax, keepdims=True)
            den = np.sqrt(var) + f["epsilon"] if nm == "eps_place=outside" else np.sqrt(var + f["epsilon"])
            y = d / den * f["scale"] + f["bias"]
        _ulps_off(c, y, 4)
        seen[nm] += 1
    assert set(seen) == {"exponent=3", "sub_order=swapped", "scale_shape=larger", "axis=not-last",
                         "eps_place=outside"}
    # the larger scale broadcasts the output to a larger shape than X
    big = next(c for c in _cases("LayerNormalization.decomposed") if c.tags.get("near_miss") == "scale_shape=larger")
    assert c.outputs[0].shape is None and big.datasets[0].outputs[big.outputs[0].name].ndim > _feeds(big)["X"].ndim


def test_rms_gelu_swish_dense_oracles_are_the_formulas():
    erf = np.vectorize(math.erf, otypes=[np.float64])
    counts = Counter()
    acts = {"relu": lambda z: np.maximum(z, 0), "leaky_relu": lambda z: np.where(z < 0, np.float32(0.1) * z, z),
            "sigmoid": lambda z: 1 / (1 + np.exp(-z)), "tanh": np.tanh, "clip6": lambda z: np.clip(z, 0, 6),
            "gelu": lambda z: 0.5 * z * (1 + erf(z / np.sqrt(2))) if z.size else z}
    for name in ("LayerNormalization.rms", "Gelu.erf", "Gelu.tanh", "Swish.mul_sigmoid", "Dense.matmul_add",
                 "Dense.activation"):
        for c in _cases(name):
            if c.tags.get("near_miss") or c.dtype == "float16":
                continue
            f, v = _feeds(c), {k[2:]: x for k, x in c.tags.items() if k.startswith("v_")}
            if name == "LayerNormalization.rms":
                x = f["X"]
                y = x / np.sqrt((x ** 2).mean(axis=-1, keepdims=True) + f["epsilon"]) * f["scale"]
            elif name == "Gelu.erf":
                x = f["X"]
                s = x / f["sqrt2"] if v["form"] == "div" else x * f["inv_sqrt2"]
                y = x * (erf(s) + 1) * f["half"] if x.size else x
            elif name == "Gelu.tanh":
                x = f["X"]
                y = x * f["half"] * (1 + np.tanh((x + f["coefficient"] * x ** 3) * f["sqrt_2_over_pi"]))
            elif name == "Swish.mul_sigmoid":
                x = f["X"]
                a = f.get("alpha", 1.0)
                y = x / (1 + np.exp(-(x * a)))
            elif name == "Dense.activation":
                y = acts[v["activation"]](np.matmul(f["X"], f["W"]) + f["B"])
            else:
                y = np.matmul(f["X"], f["W"]) + f["B"]
            _ulps_off(c, np.asarray(y, dtype=np.float64), 4)
            counts[name] += 1
    assert all(counts[n] >= 10 for n in counts) and len(counts) == 6


def test_variants_and_fused_tolerance_are_recorded():
    c = next(c for c in _cases("LayerNormalization.decomposed") if c.dtype == "float16" and "canonical" in c.id)
    t = c.outputs[0].tolerance
    assert "float32-intermediates" in t.variants and "fused" in t.variants and t.spread > 0
    c32 = next(c for c in _cases("LayerNormalization.decomposed") if c.dtype == "float" and "canonical" in c.id)
    assert "float32-intermediates" not in c32.outputs[0].tolerance.variants


# ============================================================================ backends with levels
def _run(cases, backend) -> dict:
    res = [r.to_json() for r in run_cases(levels.expand(list(cases), backend.levels), backend)]
    s = levels.pattern_summary(res, list(backend.levels))
    s["records"] = res
    return s


ALL = ("LayerNormalization.decomposed", "Dense.transposed", "Gelu.erf")
MINE = tuple(p.name for p in (*layernorm.PATTERNS, *dense.PATTERNS, *gelu.PATTERNS))


@lru_cache(maxsize=None)
def _summary(which: str) -> dict:
    rewrites = {
        "right": pr.RIGHT,
        "ln-larger-scale": (pr.layer_norm_fusion(larger_scale=True),),
        "ln-sub-order": (pr.layer_norm_fusion(any_sub_order=True),),
        "ln-exponent": (pr.layer_norm_fusion(any_exponent=True),),
        "ln-one-pass": (pr.layer_norm_fusion(one_pass=True),),
        "identity-as-swap": (pr.transpose_fusion(identity_as_swap=True),),
        "gelu-tanh": (pr.gelu_fusion(tanh_for_erf=True),),
    }[which]
    names = MINE if which == "right" else ALL  # the right rewrites: every pattern of these families
    cases = [c for n in names for c in _cases(n)]
    return _run(cases, pr.RewriteBackend(rewrites, name=which))


def test_reference_and_right_rewrites_pass_every_case():
    """onnx.reference on every unfused graph of every pattern (Erf in double replaced, see
    below) and the right rewrites' fused kernels pass every case at both levels."""
    s = _summary("right")
    assert set(s["patterns"]) == set(MINE) and sum(v["cases"] for v in s["patterns"].values()) > 400
    assert s["failures"] == [], s["failures"][:3]
    for fam, per in s["families"].items():
        for lv in ("disable", "opt"):
            assert set(per[lv]) == {"pass"}, (fam, lv, per[lv])
    fired = Counter(r["tags"]["pattern"] for r in s["records"] if r["level"] == "opt" and
                    any(o.startswith("test.fused:") for o in r["optimized"]["ops"]))
    folded = Counter(r["tags"]["pattern"] for r in s["records"] if r["level"] == "opt" and
                     r["tags"]["pattern"] == "Dense.transposed" and r["tags"]["v_perm"] != "none" and
                     "Transpose" not in r["optimized"]["ops"])
    # the right rewrites fire (fused LayerNorm and Gelu, transposes folded) on every pattern
    assert fired["LayerNormalization.decomposed"] >= 20 and fired["Gelu.erf"] >= 20 and folded["Dense.transposed"] >= 20
    # and leave the near-misses alone
    assert not any(r["tags"].get("near_miss") and any(o.startswith("test.fused:") for o in r["optimized"]["ops"])
                   for r in s["records"])


@pytest.mark.parametrize("which,pattern,culprit,rewrite", [
    ("ln-larger-scale", "LayerNormalization.decomposed", {"scale_shape": "larger"}, "LayerNormFusion"),
    ("ln-sub-order", "LayerNormalization.decomposed", {"sub_order": "swapped"}, "LayerNormFusion"),
    ("ln-exponent", "LayerNormalization.decomposed", {"exponent": "3"}, "LayerNormFusion"),
    ("ln-one-pass", "LayerNormalization.decomposed", {"offset": "large"}, "LayerNormFusion"),
    ("identity-as-swap", "Dense.transposed", {"perm": "identity"}, "TransposeFusion"),
    ("gelu-tanh", "Gelu.erf", {}, "GeluFusion"),
])
def test_wrong_rewrites_are_optimizer_failures(which, pattern, culprit, rewrite):
    s = _summary(which)
    bad = [f for f in s["failures"] if f["pattern"] == pattern]
    assert bad, f"{which}: no case caught"
    for f in s["failures"]:
        assert f["class"] == "optimizer" and f["levels"] == ["opt"] and f["outcomes"]["disable"] == "pass", f
        assert f["responsible"] == [rewrite], f  # the runner names the rewrite whose removal makes it pass
        for k, val in culprit.items():  # only the cases whose variation the rewrite mishandles
            assert f["variation"][k] == val, f
        assert f["nodes"] and f["variation"]
    if which == "gelu-tanh":  # the tanh form is 3e-4 off: caught in float and double, not in float16's ulps
        assert {f["dtype"] for f in bad} >= {"float", "double"}
    if which == "ln-one-pass":  # a float32 E[x^2] - E[x]^2 at mean 64 sd: ~1e-4 off; 16-bit graphs hide it
        assert {f["dtype"] for f in bad} == {"float"}


def test_onnx_reference_erf_double_is_float32():
    """The one disagreement with onnx.reference on these families: its Erf evaluates double
    inputs through float32 (``otypes=["f"]``), ~5e-8 off, which fails our double tolerance of a
    few double ulps; the suite's oracle (math.erf in float64) is right: Erf-13 is defined for
    double and nothing in its text allows float32 accuracy.  The test backend replaces it."""
    from onnx import TensorProto, helper
    from onnx.reference import ReferenceEvaluator

    m = helper.make_model(helper.make_graph([helper.make_node("Erf", ["x"], ["y"])], "g",
                                            [helper.make_tensor_value_info("x", TensorProto.DOUBLE, [3])],
                                            [helper.make_tensor_value_info("y", TensorProto.DOUBLE, [3])]),
                          opset_imports=[helper.make_opsetid("", 13)])
    x = np.array([0.1, -0.7, 1.3])
    want = np.array([math.erf(v) for v in x])
    got = ReferenceEvaluator(m).run(None, {"x": x})[0]
    assert np.max(np.abs(got - want)) > 1e-9  # float32 accuracy
    fixed = ReferenceEvaluator(m, new_ops=pr.FUSED_OPS).run(None, {"x": x})[0]
    assert np.array_equal(fixed, want)


def test_a_wrong_kernel_is_a_kernel_failure():
    """onnx.reference's own Erf (float32 for double) at both levels and no rewrite: the double
    Gelu cases are wrong at every level, a kernel failure, not an optimizer one."""
    be = pr.RewriteBackend((), name="float32-erf", ops=[pr.LayerNorm, pr.Gelu, pr.MatMulT])
    s = _run([c for c in _cases("Gelu.erf") if c.dtype in ("double", "float")], be)
    assert s["classes"]["gelu"]["kernel"] >= 10 and "optimizer" not in s["classes"]["gelu"]
    assert {f["dtype"] for f in s["failures"]} == {"double"} and all(f["class"] == "kernel" for f in s["failures"])


def test_float16_chain_without_float32_is_legitimate_and_tolerance_is_tight():
    """onnx.reference evaluates float16 nodes in float16 (the unfused chain rounded to T after
    every node): it passes (above); and the float32 fused Gelu-tanh for Gelu-erf fails in float
    by a factor the tolerance does not come near."""
    s = _summary("gelu-tanh")
    worst = [f for f in s["failures"] if f["dtype"] == "float"]
    assert worst and all("out of tolerance" in f["message"] for f in worst)


# ============================================================================ levels
def test_classify():
    L = ["disable", "basic", "all"]
    assert levels.classify({"disable": "pass", "basic": "pass", "all": "pass"}, L) == ("pass", [])
    assert levels.classify({"disable": "pass", "basic": "fail", "all": "error"}, L) == ("optimizer", ["basic", "all"])
    assert levels.classify({"disable": "fail", "basic": "fail", "all": "fail"}, L)[0] == "kernel"
    assert levels.classify({"disable": "unsupported", "basic": "pass", "all": "pass"}, L)[0] == "other"
    assert levels.classify({"disable": "fail", "basic": "pass", "all": "pass"}, L)[0] == "other"


def test_expand_and_ids():
    c = _cases("Gelu.erf")[0]
    single = registry.generate(["Relu"], 0, "smoke")[0]
    out = levels.expand([c, single], ["disable", "all"])
    assert [x.id for x in out] == [c.id + "@disable", c.id + "@all", single.id]
    assert out[0].content_hash == c.content_hash and out[0].model_bytes == c.model_bytes
    assert levels.base_id(out[1].id) == c.id and levels.base_id(single.id) == single.id
    assert levels.expand([c], []) == [c]


def test_run_writes_pattern_section_and_report(tmp_path):
    from conformance.execute import RunSpec, execute

    spec = RunSpec(backend_spec="tests", ops=["Gelu.erf", "Relu"], depth="smoke", jobs=0)
    doc, _ = execute(spec, tmp_path, backend=pr.RewriteBackend((pr.gelu_fusion(tanh_for_erf=True),), name="rw"))
    p = doc["patterns"]
    assert p["levels"] == ["disable", "opt"]
    assert p["classes"]["gelu"].get("optimizer", 0) >= 1
    lines = (tmp_path / "results.jsonl").read_text().splitlines()
    assert any('"level":"opt"' in ln for ln in lines) and not any('"level"' in ln for ln in lines if "Relu" in ln)
    html = (tmp_path / "report.html").read_text()
    assert "Layer patterns" in html and "optimizer failure" in html


# ============================================================================ generation, bundle
def test_reproducible_and_seeded():
    a = [c.content_hash for c in core.pattern_cases(core.PATTERNS["Dense.matmul_add"], 3, "smoke")]
    b = [c.content_hash for c in core.pattern_cases(core.PATTERNS["Dense.matmul_add"], 3, "smoke")]
    d = [c.content_hash for c in core.pattern_cases(core.PATTERNS["Dense.matmul_add"], 4, "smoke")]
    assert a == b and a != d


def test_generation_covers_axes_types_opsets_and_edges():
    from conformance.ops.schedule import EXPORTER_OPSETS

    for p in (*layernorm.PATTERNS, *dense.PATTERNS, *gelu.PATTERNS):
        cs = _cases(p.name)
        assert {c.dtype for c in cs} == set(p.types), p.name
        assert {c.opset for c in cs} == set(p.opsets) == set(EXPORTER_OPSETS), p.name
        for axis, vals in p.axes.items():
            assert {core._label_value(v) for v in vals} <= {c.tags[f"v_{axis}"] for c in cs}, (p.name, axis)
        assert {c.tags["near_miss"] for c in cs if "near_miss" in c.tags} == \
            {f"{a}={core._label_value(v)}" for a, vs in p.near_misses.items() for v in vs}
        shapes = [np.shape(c.datasets[0].outputs[c.outputs[0].name]) for c in cs]
        if "shape" in p.axes:
            assert any(0 in s for s in shapes), p.name  # an empty batch / reduction
        assert all(onnx.checker.check_model(c.model, full_check=True) is None for c in cs[:12])
    smoke = registry.generate(["LayerNormalization.decomposed"], 0, "smoke")
    assert len(smoke) == 12 and all("canonical" in c.id for c in smoke)


def test_bundle_round_trip_and_onnx_loader(tmp_path):
    from onnx.backend.test.loader import load_model_tests

    from conformance.bundle import read_bundle
    from conformance.bundle_write import write_bundle
    from conformance.suite import generate_suite

    suite = generate_suite(["Swish.mul_sigmoid"], 0, "smoke")
    write_bundle(suite, tmp_path / "b")
    back = read_bundle(tmp_path / "b")
    assert [c.id for c in back.cases] == [c.id for c in suite.cases]
    for a, b in zip(suite.cases, back.cases):
        assert a.model_bytes == b.model_bytes and a.tags == b.tags and b.graph is None
        assert b.outputs[0].tolerance == a.outputs[0].tolerance and len(b.model.graph.node) >= 2
    tests = load_model_tests(data_dir=str(tmp_path / "b"), kind="cases")
    assert len(tests) == len(suite.cases)


def test_single_node_bytes_unchanged_by_the_core():
    # Case.graph / Case.level default off: a single-node case builds exactly one node named after
    # its operator, its id has no level suffix
    c = registry.generate(["LayerNormalization"], 0, "smoke")[0]
    assert c.graph is None and c.level is None and "@" not in c.id
    assert [n.op_type for n in c.model.graph.node] == ["LayerNormalization"]


# ============================================================================ onnxruntime
def test_onnxruntime_records_optimized_graph():
    pytest.importorskip("onnxruntime")
    from conformance.backends.ort import OnnxRuntimeBackend

    be = OnnxRuntimeBackend()
    c = next(c for c in _cases("LayerNormalization.decomposed") if c.dtype == "float" and c.opset == 17
             and "canonical" in c.id)
    res = run_cases(levels.expand([c], be.levels), be)
    assert [r.outcome for r in res] == ["pass"] * 4
    assert res[0].optimized["ops"] == sorted({n.op_type for n in c.model.graph.node})
    assert "LayerNormalization" in res[1].optimized["ops"]  # LayerNormFusion at basic


def test_coverage_lists_patterns_axes_and_layers():
    from conformance.coverage import compute_coverage

    cases = list(_cases("Gelu.erf")) + list(_cases("Dense.transposed")) + registry.generate(["Relu"], 0, "smoke")
    cov = compute_coverage(cases, {c.id + "@opt": "pass" for c in cases})
    pc = cov["patterns"]
    assert set(pc["patterns"]) == {"Gelu.erf", "Dense.transposed"} and pc["layers"] == {
        "Dense": ["Dense.transposed"], "Gelu": ["Gelu.erf"]}
    g = pc["patterns"]["Gelu.erf"]
    assert g["missing"] == [] and set(g["axes"]["params"]) == {"initializer", "constant", "input"}
    assert g["near_misses"] == {"divisor=1.5": 3} and g["outcomes"] == {"pass": len(_cases("Gelu.erf"))}
    assert cov["unmatched"] == [] and list(cov["ops"]) == ["Relu"]


def test_cli_run_levels(tmp_path, capsys):
    pytest.importorskip("onnxruntime")
    from conformance.cli import main

    rc = main(["run", "--backend", "onnxruntime", "--ops", "Swish.mul_sigmoid", "--depth", "smoke", "--levels",
               "disable,all", "--jobs", "0", "--out", str(tmp_path / "r"), "--force"])
    assert rc == 0
    import json

    doc = json.loads((tmp_path / "r" / "results.json").read_text())
    assert doc["run"]["levels"] == ["disable", "all"] and doc["patterns"]["levels"] == ["disable", "all"]
    ids = [c["id"] for c in doc["cases"]]
    assert len(ids) == 24 and all(i.endswith(("@disable", "@all")) for i in ids)
    assert main(["run", "--backend", "onnxruntime", "--ops", "Swish.mul_sigmoid", "--depth", "smoke", "--levels",
                 "fast", "--jobs", "0", "--out", str(tmp_path / "r2"), "--force"]) != 0


def test_tolerance_accepts_every_variant_it_is_derived_from():
    """Each legitimate chain variant (rounded to T per node, float32 intermediates, per-node
    perturbations by the operator table's own tolerances) and the fused operator, recomputed
    for the case's inputs, is within the case's tolerance of the stored expectation."""
    from conformance.tolerance import compare_value

    n = nf = 0
    for name in ("LayerNormalization.decomposed", "LayerNormalization.rms", "Gelu.tanh", "Dense.matmul_add"):
        p = core.PATTERNS[name]
        for c in _cases(name)[::3]:
            g = c.graph
            feeds = {i.name: core._exact(c.datasets[0].inputs[i.name] if i.name in c.datasets[0].inputs else i.value,
                                         i.elem_type) for i in c.inputs}
            runs: list = []
            env = core.evaluate(g, feeds, record=runs, tolerances=True)
            out = c.outputs[0]
            variants = core.chain_variants(g, feeds, [out.name], runs, seed=1)
            for vname, v in variants.items():
                chk = compare_value(out.name, np.asarray(v[out.name]).astype(c.datasets[0].outputs[out.name].dtype),
                                    c.datasets[0].outputs[out.name], out.tolerance)
                assert chk.passed, (c.id, vname, chk.reason)
                n += 1
            b = core.Builder({}, c.dtype, c.opset, np.random.default_rng(0))
            b.v = {k[2:]: _raw(p, k[2:], x) for k, x in c.tags.items() if k.startswith("v_")}
            if p.fused is not None and out.name == (p.fused(b, _built(c)) or core.Fused("", 0, (), {}, "")).output:
                y, _ = core.evaluate_fused(p.fused(b, _built(c)), env, g.types, c.opset)
                chk = compare_value(out.name, dtypes_round(y, out.elem_type), c.datasets[0].outputs[out.name],
                                    out.tolerance)
                assert chk.passed, (c.id, "fused", chk.reason)
                nf += 1
    assert n > 150 and nf >= 30


def _raw(p, axis, label):
    """The axis value whose label is ``label`` (tags hold labels)."""
    for v in tuple(p.axes.get(axis, ())) + tuple(p.near_misses.get(axis, ())):
        if core._label_value(v) == label:
            return v
    return label


def _built(c):
    feeds = {i.name: np.asarray(c.datasets[0].inputs[i.name] if i.name in c.datasets[0].inputs else i.value,
                                dtype=np.float64) for i in c.inputs}
    return core.Built(list(c.graph.nodes), list(c.inputs), feeds, dict(c.graph.types), [o.name for o in c.outputs])


def dtypes_round(y, elem):
    from conformance import dtypes

    return dtypes.round_to(np.asarray(y, dtype=np.float64), elem)


def test_onnxruntime_132_layer_norm_fusion_ignores_sub_order():
    """onnxruntime 1.32's LayerNormFusion fuses ``Sub(mean, X)`` (operands swapped) as if it were
    ``Sub(X, mean)``: the output's sign flips at levels basic and up; the runner names the
    rewrite.  Pinned to 1.32 (a fixed release makes this case pass)."""
    ort = pytest.importorskip("onnxruntime")
    if ort.__version__ != "1.32.0":
        pytest.skip(f"measured on onnxruntime 1.32.0, not {ort.__version__}")
    from conformance.backends.ort import OnnxRuntimeBackend

    be = OnnxRuntimeBackend()
    c = next(c for c in _cases("LayerNormalization.decomposed")
             if c.tags.get("near_miss") == "sub_order=swapped" and c.dtype == "float")
    res = {r.level: r for r in run_cases(levels.expand([c], be.levels), be)}
    assert res["disable"].outcome == "pass" and res["all"].outcome == "fail"
    assert res["all"].optimized["responsible"] == "LayerNormFusion"
    assert "LayerNormalization" in res["all"].optimized["ops"]
