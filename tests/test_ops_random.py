"""Tests of the random operators (``conformance/ops/random.py``; checks in
``conformance/reference/random.py``).

* the statistics against independent formulas: the normal CDF against ``math.erf``, the
  chi-squared bounds against mpmath's regularized incomplete gamma, the two-sided normal
  quantile against ``math.erfc``, the Kolmogorov distance against a brute-force supremum;
* the exact part of each check on hand-made outputs (type, shape, support, determined
  Bernoulli draws, Multinomial indices);
* numpy kernels through ``KernelBackend`` over the generated suite: legitimate ones (float64
  draws rounded once, float32 draws and arithmetic, arithmetic in the output type, float32
  uniforms for Bernoulli, float32 softmax for Multinomial) pass every case; the deliberately
  wrong ones are caught: RandomUniform on [0, high), a mean off by 10% of the spread, a
  spread off by 10% (up and down), dtype ignored, Bernoulli inverted (the function body's
  reading) or with p off by 10%, Multinomial without the max subtracted, reading the input as
  probabilities, every row drawn from the first;
* no false alarm in 1,000 seeded runs of a correct kernel per distribution;
* the contested Bernoulli: the text's reading passes, the function body's fails with a message
  naming it; onnxruntime (measured) follows the body;
* onnx.reference's outcomes, each disagreement asserted and explained;
* coverage: every version and type pair, seeded cases with two data sets, every value case
  judged by a check.
"""

from __future__ import annotations

import math
from collections import Counter

import ml_dtypes
import mpmath
import numpy as np
import pytest

from conformance import dtypes, registry
from conformance.backends import resolve_backend
from conformance.backends.kernel import KernelBackend
from conformance.opspec import op_spec
from conformance.reference import random as ref
from conformance.runner import run_cases

registry.available_ops()
from conformance.ops import random as entries  # noqa: E402

pytestmark = pytest.mark.filterwarnings("ignore::RuntimeWarning")
OPS = ref.OPS
BF16 = np.dtype(ml_dtypes.bfloat16)


@pytest.fixture(scope="module")
def suite():
    return {op: registry.generate([op], seed=0) for op in OPS}


def _value(cases):
    return [c for c in cases if c.expect_error is None]


def _node_inputs(c, k=0):
    return {**{i.name: i.value for i in c.inputs if i.present and i.initializer}, **c.datasets[k].inputs}


def _n(c):
    """Draws of a value case (its output's element count)."""
    if c.op in ("RandomNormal", "RandomUniform"):
        return int(np.prod(c.attributes["shape"]))
    x = _node_inputs(c)["input"]
    if c.op == "Multinomial":
        return x.shape[0] * int(c.attributes.get("sample_size", 1))
    return x.size


# ============================================================================ statistics vs independent formulas
def test_normal_cdf_against_math_erf():
    z = np.linspace(-9, 9, 20001)
    exact = np.array([0.5 * (1 + math.erf(v / math.sqrt(2))) for v in z])
    assert np.max(np.abs(ref.normal_cdf(z) - exact)) < 1.5e-7 <= ref.CDF_ERROR


def test_normal_quantile_against_erfc():
    z = ref.normal_quantile_two_sided(1e-6)
    assert abs(z - 4.891638) < 1e-5
    assert math.erfc(z / math.sqrt(2)) <= 1e-6 < math.erfc((z - 1e-6) / math.sqrt(2))


@pytest.mark.parametrize("n", (50, 4096, 16384))
def test_chi2_bounds_tails_against_mpmath(n):
    """Laurent-Massart's bounds hold: the exact chi-squared tails beyond them (regularized
    incomplete gamma) sum to at most alpha."""
    alpha = 1e-6 / 3
    lo, hi = ref.chi2_bounds(n, alpha)
    k = mpmath.mpf(n) / 2
    below = mpmath.gammainc(k, 0, mpmath.mpf(lo) / 2, regularized=True) if lo > 0 else 0
    above = mpmath.gammainc(k, mpmath.mpf(hi) / 2, mpmath.inf, regularized=True)
    assert float(below + above) <= alpha
    assert float(above) > alpha / 1000  # and not absurdly loose


def test_dkw_and_hoeffding_formulas():
    assert ref.dkw_epsilon(16384, 1e-6) == pytest.approx(math.sqrt(math.log(2e6) / 32768))
    assert 2 * math.exp(-2 * 16384 * ref.dkw_epsilon(16384, 1e-6) ** 2) == pytest.approx(1e-6)
    assert 2 * math.exp(-2 * ref.hoeffding(100.0, 1e-3) ** 2 / 100) == pytest.approx(1e-3)


def test_ks_distance_against_brute_force():
    rng = np.random.default_rng(1)
    y = np.sort(np.round(rng.random(300), 2))  # ties
    f = y.copy()  # U(0, 1)
    grid = np.concatenate([y, y - 1e-12, y + 1e-12, [0.0, 1.0]])
    brute = max(abs(np.mean(y <= g) - min(max(g, 0), 1)) for g in grid)
    assert ref.ks_distance(y, f) == pytest.approx(brute, abs=1e-9)


# ============================================================================ exact part
def test_exact_part_of_the_checks():
    rng = np.random.default_rng(0)
    ok = rng.standard_normal((64, 64)).astype(np.float32)
    attrs = {"shape": [64, 64]}
    assert ref.check_random_normal({}, {"output": ok}, attrs)[0]
    assert "element type" in ref.check_random_normal({}, {"output": ok.astype(np.float64)}, attrs)[1]
    assert "shape" in ref.check_random_normal({}, {"output": ok.reshape(4096)}, attrs)[1]
    assert "non-finite" in ref.check_random_normal({}, {"output": np.where(ok > 3, np.inf, ok)}, attrs)[1]
    assert ref.check_random_normal({}, {"output": ok.astype(np.float16)}, {**attrs, "dtype": 10})[0]
    u = rng.random((64, 64)).astype(np.float32)
    assert ref.check_random_uniform({}, {"output": u}, attrs)[0]
    assert "outside" in ref.check_random_uniform({}, {"output": u + 0.01}, attrs)[1]
    # the closed upper end: high itself is accepted (a float16 rounding of a draw below it)
    assert ref.check_random_uniform({}, {"output": np.where(u > 0.999, 1.0, u).astype(np.float32)}, attrs)[0]
    # *Like: shape and type from the input
    x = np.zeros((64, 64), np.float16)
    assert ref.check_random_uniform_like({"input": x}, {"output": u.astype(np.float16)}, {})[0]
    assert "element type" in ref.check_random_uniform_like({"input": x}, {"output": u}, {})[1]
    assert ref.check_random_uniform_like({"input": x.astype(np.int8)}, {"output": u}, {"dtype": 1})[0]
    # Bernoulli
    p = rng.random(4096)
    p[:100], p[100:200] = 0.0, 1.0
    y = (rng.random(4096) < p).astype(np.float64)
    assert ref.check_bernoulli({"input": p}, {"output": y}, {})[0]
    assert "neither 0 nor 1" in ref.check_bernoulli({"input": p}, {"output": y * 2}, {})[1]
    flip = y.copy()
    flip[0] = 1.0
    assert "deterministic" in ref.check_bernoulli({"input": p}, {"output": flip}, {})[1]
    assert ref.check_bernoulli({"input": p}, {"output": y.astype(bool)}, {"dtype": 9})[0]
    # Multinomial
    logits = np.array([[0.0, 1.0, -np.inf], [2.0, 0.0, 1.0]], np.float32)
    draws = np.array([[1, 0, 1], [0, 2, 0]], np.int32)
    assert ref.check_multinomial({"input": logits}, {"output": draws}, {"sample_size": 3})[0]
    assert "element type" in ref.check_multinomial({"input": logits}, {"output": draws.astype(np.int64)},
                                                   {"sample_size": 3})[1]
    assert "outside" in ref.check_multinomial({"input": logits}, {"output": draws + 1}, {"sample_size": 3})[1]
    bad = draws.copy()
    bad[0, 0] = 2
    assert "-inf" in ref.check_multinomial({"input": logits}, {"output": bad}, {"sample_size": 3})[1]
    assert "shape" in ref.check_multinomial({"input": logits}, {"output": draws}, {})[1]


# ============================================================================ kernels
_DEFAULT_TYPE = {"RandomNormal": np.float32, "RandomUniform": np.float32, "Multinomial": np.int32}


def make_kernels(flaw=None, variant=None, seed=0):
    """numpy kernels of the six operators (every version).  ``variant``: a legitimate way of
    computing (``float32``: draws and arithmetic in float32; ``in-T``: a float64 draw rounded to T,
    then ``mean + scale * z`` / ``low + w * u`` in T).  ``flaw``: a deliberate error."""
    rng = np.random.default_rng(seed)

    def out_dtype(op, attrs, x=None):
        if flaw == "ignore-dtype":
            return np.dtype(np.float32) if op != "Multinomial" else np.dtype(np.int64)
        if "dtype" in attrs:
            if attrs["dtype"] in (0, 8):
                raise ValueError("dtype outside T")
            return dtypes.np_dtype(attrs["dtype"])
        return np.dtype(_DEFAULT_TYPE[op]) if op in _DEFAULT_TYPE else x.dtype

    def normal(shape, attrs, dt):
        mean, scale = float(np.float32(attrs.get("mean", 0.0))), float(np.float32(attrs.get("scale", 1.0)))
        if flaw == "mean-off":
            mean += 0.1 * scale
        scale *= {"spread-up": 1.1, "spread-down": 0.9}.get(flaw, 1.0)
        if variant == "float32":
            z = rng.standard_normal(shape, dtype=np.float32)
            return (np.float32(mean) + np.float32(scale) * z).astype(dt)
        if variant == "in-T":
            z = rng.standard_normal(shape).astype(dt)
            return (z * dt.type(scale) + dt.type(mean)).astype(dt)
        return (mean + scale * rng.standard_normal(shape)).astype(dt)

    def uniform(shape, attrs, dt):
        low, high = float(np.float32(attrs.get("low", 0.0))), float(np.float32(attrs.get("high", 1.0)))
        if flaw == "from-zero":
            low = 0.0
        w = high - low
        if variant == "float32":
            u = rng.random(shape, dtype=np.float32)
            y = np.float32(low) + np.float32(w) * u
        elif variant == "in-T":
            u = rng.random(shape).astype(dt)
            y = np.minimum(u * dt.type(w) + dt.type(low), dt.type(high))
        else:
            u = rng.random(shape)
            if flaw == "spread-down":
                u = 0.05 + 0.9 * u
            if flaw == "mean-off":
                u = np.minimum(u + 0.1, 1.0)  # shifted by 10% of the range, kept in the support
            y = low + w * u
        return np.asarray(y).astype(dt)

    def generated(op):
        def k(inputs, attrs, outputs, opset):
            shape = tuple(attrs["shape"])
            if any(d < 0 for d in shape):
                raise ValueError("negative dim")
            dt = out_dtype(op, attrs)
            return {"output": (normal if op.startswith("RandomNormal") else uniform)(shape, attrs, dt)}
        return k

    def like(op):
        def k(inputs, attrs, outputs, opset):
            x = inputs["input"]
            dt = out_dtype(op, attrs, x)
            if dt.kind not in "f" and dt != BF16:
                raise ValueError("output type outside T2")
            return {"output": (normal if op.startswith("RandomNormal") else uniform)(x.shape, attrs, dt)}
        return k

    def bernoulli(inputs, attrs, outputs, opset):
        x = inputs["input"]
        if x.dtype.kind not in "f" and x.dtype != BF16:
            raise ValueError("p must be float")
        dt = out_dtype("Bernoulli", attrs, x)
        p = x.astype(np.float64)
        if flaw == "p-off":
            p = np.clip(1.1 * p, 0, 1)
        u = rng.random(x.shape, dtype=np.float32).astype(np.float64) if variant == "float32" else rng.random(x.shape)
        y = (u > p) if flaw == "inverted" else (u < p)  # inverted: the function body's Greater(U, p)
        return {"output": np.asarray(y).astype(dt)}

    def multinomial(inputs, attrs, outputs, opset):
        x = inputs["input"]
        if x.ndim != 2:
            raise ValueError("input must be [batch_size, class_size]")
        dt = out_dtype("Multinomial", attrs, x)
        s = int(attrs.get("sample_size", 1))
        b, k = x.shape
        lx = x.astype(np.float32 if variant == "float32" or flaw == "no-max" else np.float64)
        if flaw != "no-max":
            lx = lx - lx.max(axis=1, keepdims=True)
        e = np.exp(lx)
        if flaw == "probabilities":  # the input read as unnormalized probabilities (negative ones as 0)
            e = np.maximum(x.astype(np.float64), 0) + 1e-12
        cdf = np.cumsum(e, axis=1)
        out = np.zeros((b, s), dtype=np.int64)
        for r in range(b):
            src = 0 if flaw == "row0" else r
            u = rng.random(s) * cdf[src, -1]
            out[r] = np.minimum(np.searchsorted(cdf[src], u, side="right"), k - 1) if k else 0
            if flaw == "no-max" and not np.isfinite(cdf[src, -1]):
                out[r] = k  # what an overflowed search returns: past the last class
        return {"output": out.astype(dt)}

    return {"RandomNormal": generated("RandomNormal"), "RandomUniform": generated("RandomUniform"),
            "RandomNormalLike": like("RandomNormalLike"), "RandomUniformLike": like("RandomUniformLike"),
            "Bernoulli": bernoulli, "Multinomial": multinomial}


def _run(cases, **kw):
    return {r.id: r for r in run_cases(cases, KernelBackend(make_kernels(**kw)))}


@pytest.mark.parametrize("variant", (None, "float32", "in-T"))
def test_legitimate_kernels_pass_every_case(variant, suite):
    cases = [c for op in OPS for c in suite[op]]
    if variant is not None:  # the variants change the generators only: their cases
        cases = [c for c in cases if c.op.startswith("Random") or c.op == "Multinomial"]
    res = _run(cases, variant=variant, seed=1)
    bad = [(i, r.outcome, r.message[:200]) for i, r in res.items() if r.outcome != "pass"]
    assert not bad, bad[:5]
    assert len(res) == len(cases) >= 300


def _caught(op, flaw, suite, **kw):
    cases = _value(suite[op])
    res = _run(cases, flaw=flaw, **kw)
    return cases, {c.id: res[c.id].outcome == "fail" for c in cases}


def _stat_cases(cases, types=("float", "double", "float16")):
    """The 16384-draw cases of the listed output types."""
    return [c for c in cases if _n(c) >= entries.N_GENERATED and dtypes.type_name(c.outputs[0].elem_type) in types]


@pytest.mark.parametrize("flaw", ("mean-off", "spread-up", "spread-down"))
def test_normal_off_by_ten_percent_is_caught_on_every_statistical_case(flaw, suite):
    """A mean shifted by 10% of sigma, a sigma 10% too large or too small: every 16384-draw
    RandomNormal case of float, double and float16 fails (bfloat16's rounding slack is wider:
    there only most)."""
    cases, caught = _caught("RandomNormal", flaw, suite)
    stat = _stat_cases(cases)
    assert len(stat) >= 20
    assert all(caught[c.id] for c in stat), [c.id for c in stat if not caught[c.id]]
    bf = _stat_cases(cases, ("bfloat16",))
    assert sum(caught[c.id] for c in bf) >= len(bf) // 2


@pytest.mark.parametrize("flaw", ("mean-off", "spread-down", "from-zero"))
def test_uniform_wrong_kernels_are_caught(flaw, suite):
    """A range shrunk by 10% about its middle, shifted by 10% of its width (clipped into the
    support), and [0, high) instead of [low, high): every 16384-draw case of float and double
    fails; of float16 and bfloat16 most (every one for from-zero: the support), the rounding
    slack of [10, 10.5] in 16-bit types being as wide as the effect (from-zero: the cases whose
    low is not 0)."""
    cases, caught = _caught("RandomUniform", flaw, suite)
    moved = [c for c in cases if flaw != "from-zero" or float(c.attributes.get("low", 0.0)) != 0.0]
    stat = _stat_cases(moved, ("float", "double"))
    assert len(stat) >= 8
    assert all(caught[c.id] for c in stat), [c.id for c in stat if not caught[c.id]]
    narrow = _stat_cases(moved, ("float16", "bfloat16"))
    assert len(narrow) >= 8
    assert sum(caught[c.id] for c in narrow) >= (len(narrow) if flaw == "from-zero" else 0.6 * len(narrow))


@pytest.mark.parametrize("op", OPS)
def test_ignoring_dtype_is_caught(op, suite):
    """A kernel that always returns float32 (int64 for Multinomial): every case whose type is
    another fails, and only those."""
    cases, caught = _caught(op, "ignore-dtype", suite)
    other = {np.dtype(np.int64) if op == "Multinomial" else np.dtype(np.float32)}
    expect = {c.id: dtypes.np_dtype(c.outputs[0].elem_type) not in other for c in cases}
    assert sum(expect.values()) >= 5
    assert caught == expect


def test_bernoulli_wrong_kernels_are_caught(suite):
    """The function body's reading (1 with probability 1 - p) fails every case of 4096 elements
    or more, and the message names it; p off by 10% (``min(1.1 p, 1)``) fails every 16384-element
    case (at 4096 the shift, ~0.045 n, is about Hoeffding's bound: caught there only sometimes)."""
    cases = _value(suite["Bernoulli"])
    big = [c for c in cases if _n(c) >= entries.N_INPUT]
    assert len(big) >= 50
    res = _run(big, flaw="inverted")
    assert all(res[c.id].outcome == "fail" and "function body's reading" in res[c.id].message for c in big)
    long = [c for c in cases if _n(c) >= entries.N_GENERATED]
    assert len(long) >= 7
    res = _run(long, flaw="p-off")
    assert all(res[c.id].outcome == "fail" for c in long), [res[c.id].message for c in long]


def _cdf_gap(x):
    """Largest CDF distance, over the rows, between softmax(x) and x read as probabilities (where
    it is below 0.15 the two readings are too close for 2048 draws: DKW's bound is 0.06)."""
    x = x.astype(np.float64)
    e = np.exp(x - x.max(axis=1, keepdims=True))
    q = np.maximum(x, 0) + 1e-12
    return float(np.max(np.abs(np.cumsum(e / e.sum(1, keepdims=True), 1) - np.cumsum(q / q.sum(1, keepdims=True), 1))))


_ROW_CLASSES = ("logits", "peaked", "masked", "shifted")


@pytest.mark.parametrize("flaw,classes,least", (("no-max", ("shifted",), 1), ("probabilities", _ROW_CLASSES, 2048),
                                                ("row0", _ROW_CLASSES, 2048)))
def test_multinomial_wrong_kernels_are_caught(flaw, classes, least, suite):
    """exp without the maximum subtracted (float32 overflow at logits near 100: every shifted
    case), the input read as probabilities instead of log-probabilities (every case with
    2048 draws where the readings differ by more than 0.15 in CDF), every row drawn from the
    first row's distribution (multi-row cases with 2048 draws a row)."""
    cases = _value(suite["Multinomial"])
    res = _run(cases, flaw=flaw)
    target = [c for c in cases if c.tags["numerics"] in classes and int(c.attributes.get("sample_size", 1)) >= least
              and (flaw != "row0" or _node_inputs(c)["input"].shape[0] > 1)
              and (flaw != "probabilities" or _cdf_gap(_node_inputs(c)["input"]) > 0.15)]
    assert len(target) >= 3, flaw
    assert all(res[c.id].outcome == "fail" for c in target), [c.id for c in target if res[c.id].outcome != "fail"]


# ============================================================================ false alarms
def test_no_false_alarm_in_1000_seeded_runs():
    """A correct kernel, 1,000 seeded runs per distribution (4096 draws each, float32; float16 for
    the uniform, whose rounding reaches high): no check fails."""
    rng = np.random.default_rng(2026)
    z = rng.standard_normal((1000, 4096)).astype(np.float32)
    fails = sum(not ref.judge_normal(z[i] * np.float32(3) - np.float32(2), -2.0, 3.0)[0] for i in range(1000))
    u = (rng.random((1000, 4096)) * 8 - 3).astype(np.float16)
    fails += sum(not ref.judge_uniform(u[i], -3.0, 5.0)[0] for i in range(1000))
    p = rng.random(4096)
    fails += sum(not ref.check_bernoulli({"input": p}, {"output": (rng.random(4096) < p).astype(np.float64)}, {})[0]
                 for _ in range(1000))
    logits = np.array([[0.5, -1.0, 2.0, 0.0]], np.float32)
    cdf = np.cumsum(ref.softmax_rows(logits)[0])
    draws = np.minimum(np.searchsorted(cdf, rng.random((1000, 1, 2048)), side="right"), 3).astype(np.int32)
    fails += sum(not ref.check_multinomial({"input": logits}, {"output": draws[i]}, {"sample_size": 2048})[0]
                 for i in range(1000))
    assert fails == 0


# ============================================================================ contested Bernoulli
def test_bernoulli_contested_and_onnxruntime_follows_the_body(suite):
    """Every Bernoulli case is contested; onnxruntime 1.32 (no Bernoulli kernel: it expands the
    function body) draws 1 with probability 1 - p: a p = 0 element gives 1.  Smallest case: p = 0
    and p = 1 in a [2, 3] input at version 15."""
    pytest.importorskip("onnxruntime")
    cases = _value(suite["Bernoulli"])
    assert all(c.contested == ref.BERNOULLI_CONTESTED for c in cases)
    pick = [c for c in cases if c.since_version == 15 and c.tags["numerics"] == "edge-p" and _n(c) >= 4096][:2]
    res = run_cases(pick, resolve_backend("onnxruntime"))
    assert pick and all(r.outcome == "fail" and "function body's reading" in r.message for r in res)


def _ort_reason(c, r):
    """Why onnxruntime 1.32 fails or errs on a case (None: unexplained); every one is
    onnxruntime's error (see each reason)."""
    if c.op == "Bernoulli" and c.expect_error is None:
        # no Bernoulli kernel: the expanded function body draws 1 with probability 1 - p (contested)
        return "follows Bernoulli's function body" if "function body's reading" in r.message else None
    if c.op == "Bernoulli" and "dtype=string" in c.id:
        # onnx's checker rejects it ('output has unsupported type tensor(string)'); the body's Cast gives '0'/'1'
        return "accepts Bernoulli-15 with dtype STRING" if r.outcome == "fail" else None
    if c.op.endswith("Like") and c.opset == 1 and dtypes.type_name(c.inputs[0].elem_type) == "float16":
        # the inserted float16 -> float Cast carries an INT 'to', which Cast-1 (opset 1) takes as a STRING
        return "opset-1 float16 input: invalid inserted Cast" if "InsertedPrecisionFreeCast" in r.message else None
    if c.op == "Multinomial" and _node_inputs(c)["input"].shape[0] == 0:
        # the text's [batch_size, class_size] admits an empty batch (output [0, sample_size])
        return "Multinomial refuses an empty batch" if "batch_size is < 1" in r.message else None
    return None


def test_onnxruntime_outcomes(suite):
    """onnxruntime 1.32 on the random family: every fail and error explained (unsupported types
    and versions aside): Bernoulli follows its function body (every 4096-element Bernoulli-15
    case it runs fails), accepts Bernoulli-15 with dtype STRING; RandomNormalLike /
    RandomUniformLike at opset 1 with a float16 input break in its own inserted Cast;
    Multinomial refuses an empty batch.  RandomNormal, RandomUniform and the *Like operators
    pass every case they run otherwise, Multinomial every non-empty one."""
    pytest.importorskip("onnxruntime")
    cases = [c for op in OPS for c in suite[op]]
    results = run_cases(cases, resolve_backend("onnxruntime"))
    why = Counter()
    for c, r in zip(cases, results):
        if r.outcome in ("fail", "error"):
            reason = _ort_reason(c, r)
            assert reason is not None, (c.id, r.outcome, r.message[:200])
            why[reason] += 1
    assert set(why) == {"follows Bernoulli's function body", "accepts Bernoulli-15 with dtype STRING",
                        "opset-1 float16 input: invalid inserted Cast", "Multinomial refuses an empty batch"}, why
    ran = [(c, r) for c, r in zip(cases, results) if c.op == "Bernoulli" and c.expect_error is None
           and r.outcome in ("pass", "fail") and _n(c) >= entries.N_INPUT]
    assert ran and all(r.outcome == "fail" for _, r in ran)
    assert sum(r.outcome == "pass" for c, r in zip(cases, results) if c.op.startswith("Random")) >= 100


# ============================================================================ onnx.reference
def _ref_reason(c, r):
    """Why onnx.reference does not pass a case (None: unexplained)."""
    if c.op == "Multinomial":
        return "no Multinomial implementation" if "No registered implementation" in r.message else None
    if c.expect_error is not None:
        return "accepts dtype STRING" if "dtype=string" in c.id else None
    if c.op in ("RandomNormal", "RandomUniform") and c.attributes["shape"] == []:
        return "rejects shape []" if "shape cannot be empty" in r.message else None
    if c.op.endswith("Like") and _node_inputs(c)["input"].shape == ():
        return "rank-0 input: randn() gives a Python float" if "TypeError" in r.message else None
    if c.op == "Bernoulli" and _node_inputs(c)["input"].shape == ():
        return "rank-0 input: binomial() gives a Python int" if r.outcome == "unsupported" else None
    return None


def test_onnx_reference_outcomes(suite):
    """onnx.reference passes every case but: Multinomial (not implemented), RandomNormal /
    RandomUniform with shape [] (its constructor raises 'shape cannot be empty': the text's
    shape is any list, [] a scalar), the *Like operators and Bernoulli on a rank-0 input
    (numpy's draw returns a Python scalar, ``.astype`` fails), and dtype STRING accepted
    (invalid: T excludes it).  Every disagreement is onnx.reference's error."""
    cases = [c for op in OPS for c in suite[op]]
    results = run_cases(cases, resolve_backend("onnx-reference"))
    why = Counter()
    for c, r in zip(cases, results):
        if r.outcome == "pass":
            continue
        reason = _ref_reason(c, r)
        assert reason is not None, (c.id, r.outcome, r.message[:200])
        why[reason] += 1
    assert set(why) == {"no Multinomial implementation", "accepts dtype STRING", "rejects shape []",
                        "rank-0 input: randn() gives a Python float", "rank-0 input: binomial() gives a Python int"}
    assert sum(r.outcome == "pass" for r in results) >= 500


# ============================================================================ coverage
def test_every_version_and_type_pair_is_judged_by_a_check(suite):
    for op in OPS:
        spec = op_spec(op)
        cases = _value(suite[op])
        assert {c.since_version for c in cases} == set(spec.since_versions)
        assert all(c.check == ref.CHECKS[op] for c in cases)
        assert all(len(c.datasets) == (2 if "seed" in c.attributes else 1) for c in cases)
        for v, vs in spec.versions.items():
            outs = {dtypes.type_name(c.outputs[0].elem_type) for c in cases if c.since_version == v}
            want = {t[7:-1] for t in vs.type_constraints[vs.outputs[0].type_str]}
            assert outs == want, (op, v)
            if vs.inputs:
                ins = {dtypes.type_name(c.inputs[0].elem_type) for c in cases if c.since_version == v}
                assert ins == {t[7:-1] for t in vs.type_constraints[vs.inputs[0].type_str]}, (op, v)
        assert any("seed" in c.attributes for c in cases) and any("seed" not in c.attributes for c in cases)
        assert any(_n(c) == 0 for c in cases)


def test_like_dtype_absent_and_written_for_every_shared_type(suite):
    for op in ("RandomNormalLike", "RandomUniformLike", "Bernoulli"):
        seen = Counter()
        for c in _value(suite[op]):
            t1, t2 = (dtypes.type_name(c.inputs[0].elem_type), dtypes.type_name(c.outputs[0].elem_type))
            if t1 == t2:
                seen[(t1, "dtype" in c.attributes)] += 1
        shared = {t for t, _ in seen}
        assert shared >= {"float16", "float", "double"}
        assert all(seen[(t, True)] and seen[(t, False)] for t in shared), (op, seen)


# ============================================================================ Scatter (conformance/ops/indexing.py)
from conformance.ops import indexing as ix  # noqa: E402
from conformance.ops.entry import Ctx  # noqa: E402


def _scatter_loop(data, indices, updates, axis):
    """The 9 text's rule written out: for every entry of updates, the target index is the entry's
    own index with the axis coordinate replaced by the entry of indices (negative: + s)."""
    out = np.array(data, dtype=object, copy=True)
    ax = axis % data.ndim
    for pos in np.ndindex(*np.shape(indices)):
        k = int(indices[pos])
        k = k + data.shape[ax] if k < 0 else k
        out[pos[:ax] + (k,) + pos[ax + 1:]] = updates[pos]
    return out


@pytest.fixture(scope="module")
def scatter_suite():
    return registry.generate(["Scatter"], seed=0)


@pytest.mark.parametrize("version", (9, 11))
def test_scatter_oracle_on_the_texts_examples(version):
    """Examples 1 and 2 of the Scatter text (identical at 9 and 11)."""
    ctx = Ctx("Scatter", version, version, {"data": "float", "indices": "int64", "updates": "float"})
    obj = np.empty((2, 3), dtype=object)
    obj[...] = [[1, 0, 2], [0, 2, 1]]
    out = ix.SCATTER.oracle(ctx, np.zeros((3, 3)), obj, np.array([[1.0, 1.1, 1.2], [2.0, 2.1, 2.2]]), axis=0)
    assert out.tolist() == [[2.0, 1.1, 0.0], [1.0, 0.0, 2.2], [0.0, 2.1, 1.2]]
    obj = np.empty((1, 2), dtype=object)
    obj[...] = [[1, 3]]
    out = ix.SCATTER.oracle(ctx, np.array([[1.0, 2.0, 3.0, 4.0, 5.0]]), obj, np.array([[1.1, 2.1]]), axis=1)
    assert out.tolist() == [[1.0, 1.1, 3.0, 2.1, 5.0]]


def test_scatter_cases_against_an_explicit_loop(scatter_suite):
    """Every value case's expected output is the explicit loop's; version 9 draws no negative
    index (its text defines none), version 11 does; every version-11 model is contested
    (deprecated), no version-9 model is."""
    seen = Counter()
    for c in _value(scatter_suite):
        ni = _node_inputs(c)
        want = _scatter_loop(ni["data"], ni["indices"], ni["updates"], int(c.attributes.get("axis", 0)))
        got = c.datasets[0].outputs["output"]
        assert got.shape == want.shape and all(
            (a == b) or (isinstance(a, float) and a != a and b != b) for a, b in zip(got.ravel().tolist(),
                                                                                  want.ravel().tolist())), c.id
        seen[(c.since_version, bool((ni["indices"] < 0).any()))] += 1
        assert (c.contested is not None) == (c.since_version == 11)
    assert seen[(9, True)] == 0 and seen[(11, True)] >= 10 and seen[(9, False)] >= 40


def _k_scatter(flaw=None):
    """A vectorized numpy Scatter: the target of every updates entry is its own index grid with
    the axis coordinate replaced by the index.  ``axis-ignored``: always axis 0;
    ``negative-as-zero``: negative indices clamped to 0 instead of counted from the back."""
    def k(inputs, attrs, outputs, opset):
        data, idx, upd = inputs["data"], inputs["indices"].astype(np.int64), inputs["updates"]
        axis = int(attrs.get("axis", 0))
        if not -data.ndim <= axis < data.ndim:
            raise ValueError("axis out of range")
        axis = 0 if flaw == "axis-ignored" else axis % data.ndim
        s = data.shape[axis]
        if idx.shape != upd.shape or idx.ndim != data.ndim:
            raise ValueError("indices and updates must have one shape, data's rank")
        if idx.size and ((idx >= s) | (idx < -s)).any():
            raise IndexError("index out of bounds")
        idx = np.maximum(idx, 0) if flaw == "negative-as-zero" else np.where(idx < 0, idx + s, idx)
        out = data.copy()
        grid = list(np.indices(idx.shape, sparse=False))
        grid[axis] = idx
        out[tuple(grid)] = upd
        return {"output": out}
    return k


def test_scatter_kernels(scatter_suite):
    """A numpy kernel passes every case (version 11 run without onnx's checker, which rejects
    the deprecated operator: with it every version-11 value case is 'unsupported'); ignoring
    axis and clamping negative indices are caught (the latter at 11 only: 9 draws none)."""
    res = run_cases(scatter_suite, KernelBackend({"Scatter": _k_scatter()}, check=False))
    bad = [(r.id, r.outcome, r.message[:150]) for r in res if r.outcome != "pass"]
    assert not bad, bad[:5]
    checked = run_cases(scatter_suite, KernelBackend({"Scatter": _k_scatter()}))
    assert all(r.outcome == "unsupported" for c, r in zip(scatter_suite, checked)
               if c.since_version == 11 and c.expect_error is None)
    values = _value(scatter_suite)
    for flaw, least in (("axis-ignored", 20), ("negative-as-zero", 5)):
        wrong = run_cases(values, KernelBackend({"Scatter": _k_scatter(flaw)}, check=False))
        hit = Counter(c.since_version for c, r in zip(values, wrong) if r.outcome in ("fail", "error"))
        assert sum(hit.values()) >= least, flaw
        if flaw == "negative-as-zero":
            assert hit[9] == 0


def test_scatter_onnxruntime():
    """onnxruntime 1.32 passes Scatter-9 (complex types unsupported) and rejects every Scatter-11
    model (deprecated: contested, so 'unsupported')."""
    pytest.importorskip("onnxruntime")
    cases = [c for c in registry.generate(["Scatter"], seed=0) if c.expect_error is None]
    res = run_cases(cases, resolve_backend("onnxruntime"))
    out = Counter((c.since_version, r.outcome) for c, r in zip(cases, res))
    assert out[(9, "fail")] == out[(9, "error")] == 0 and out[(9, "pass")] >= 40
    assert out[(11, "unsupported")] == sum(c.since_version == 11 for c in cases)
