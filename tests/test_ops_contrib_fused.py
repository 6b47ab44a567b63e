"""onnxruntime's fused contrib operators (:mod:`conformance.ops.contrib_fused`): com.microsoft Gelu,
FastGelu, BiasGelu, QuickGelu, FusedMatMul, TransposeMatMul, FusedGemm.

* the oracles against explicit per-element loops written here from ContribOperators.md's text
  (``math.erf``, ``math.tanh``, ``math.exp``; matrix products as Fraction sums over explicitly
  transposed index maps);
* legitimate numpy kernels through ``KernelBackend`` (float32 computation of the 16-bit types,
  float64, a libm a few ulp off, FastGelu with the doc's 6-digit constants, products in float32
  in another order) pass every generated case; deliberately wrong kernels fail cases the right
  ones pass: Gelu with the tanh approximation, FastGelu ignoring its bias, QuickGelu ignoring
  alpha, BiasGelu ignoring B;
* the invalid models are rejected.
"""

from __future__ import annotations

import itertools
import math
from collections import Counter
from fractions import Fraction

import numpy as np
import pytest

from conformance.backends.kernel import KernelBackend
from conformance.ops import contrib_fused as cf
from conformance.reference import contrib_fused as ref
from conformance.runner import run_cases

pytestmark = pytest.mark.filterwarnings("ignore::RuntimeWarning")
OPS = ["com.microsoft:Gelu", "FastGelu", "BiasGelu", "QuickGelu", "FusedMatMul", "TransposeMatMul", "FusedGemm"]
F32_EPS = float(np.finfo(np.float32).eps)


# ============================================================================ oracles: explicit loops
def _loop(fn, x):
    x = np.asarray(x, dtype=np.float64)
    out = np.empty(x.shape)
    for idx in np.ndindex(*x.shape):
        out[idx] = fn(float(x[idx]))
    return out


def _gelu_erf_1(v):
    # 1 + erf(v / sqrt 2) written as erfc(-v / sqrt 2): the same value without the cancellation
    return 0.5 * v * math.erfc(-v / math.sqrt(2.0))


def _gelu_tanh_1(v):
    c = math.sqrt(2.0 / math.pi)
    return 0.5 * v * (1.0 + math.tanh(c * (v + 0.044715 * v * v * v)))


def _quick_1(v, alpha):
    return v / (1.0 + math.exp(-alpha * v)) if alpha * v > -700 else 0.0


XS = np.linspace(-7.5, 7.5, 61)


def test_gelu_oracle_is_the_erf_form():
    np.testing.assert_allclose(ref.gelu_erf(XS), _loop(_gelu_erf_1, XS), rtol=1e-13, atol=1e-300)
    # and not the tanh form (the two differ by up to ~1e-3 absolutely near |x| = 2)
    assert np.abs(ref.gelu_erf(XS) - _loop(_gelu_tanh_1, XS)).max() > 1e-4


def test_fast_gelu_oracle_is_the_tanh_form_with_bias():
    rng = np.random.default_rng(3)
    x = rng.uniform(-6, 6, size=(3, 5))
    bias = rng.uniform(-1, 1, size=5)
    got = cf.fast_gelu_oracle(None, x, bias)
    want = _loop(_gelu_tanh_1, x + bias[None, :])
    # the loop's 1 + tanh(u) cancels for u << 0: absolute 1e-15 there
    np.testing.assert_allclose(got, want, rtol=1e-13, atol=1e-15)
    np.testing.assert_allclose(cf.fast_gelu_oracle(None, x), _loop(_gelu_tanh_1, x), rtol=1e-13, atol=1e-15)
    # the doc's 6-digit constants: 0.797885 ~ sqrt(2/pi), 0.035677 ~ 0.044715 sqrt(2/pi)
    assert abs(ref.DOC_C0 - math.sqrt(2 / math.pi)) < 5e-7
    assert abs(ref.DOC_C1 - 0.044715 * math.sqrt(2 / math.pi)) < 5e-7


def test_bias_gelu_oracle_is_gelu_of_the_sum():
    rng = np.random.default_rng(4)
    a = rng.uniform(-5, 5, size=(2, 3, 4))
    b = rng.uniform(-1, 1, size=4)
    np.testing.assert_allclose(cf.bias_gelu_oracle(None, a, b), _loop(_gelu_erf_1, a + b), rtol=1e-13, atol=1e-300)


@pytest.mark.parametrize("alpha", [1.702, 0.5, 2.0, -1.0])
def test_quick_gelu_oracle_is_x_sigmoid_alpha_x(alpha):
    a32 = float(np.float32(alpha))
    np.testing.assert_allclose(cf.quick_gelu_oracle(None, XS, alpha=alpha), _loop(lambda v: _quick_1(v, a32), XS),
                               rtol=1e-13, atol=1e-300)


def test_quick_gelu_default_alpha_comes_from_the_schema():
    from conformance.opspec import op_spec

    assert op_spec("QuickGelu", "com.microsoft").versions[1].attributes["alpha"].default == pytest.approx(1.702)


# ============================================================================ kernels
def _erf32(z):
    return np.asarray(np.frompyfunc(math.erf, 1, 1)(z.astype(np.float64)), dtype=np.float64).astype(np.float32)


def _off(r, k):
    """A libm result ``r`` in [-1, 1] (erf, tanh) ``k`` ulps off, except where it saturates at +-1
    (every production libm returns +-1 exactly there) and never beyond +-1."""
    one = r.dtype.type(1)
    moved = np.clip(r * r.dtype.type(1 + k * float(np.finfo(r.dtype).eps)), -one, one)
    return np.where(np.abs(r) == one, r, moved)


def _compute(x):
    return np.float64 if x.dtype == np.float64 else np.float32


def gelu_family_kernel(op: str, flaw: str | None = None, ulp_off: float = 0.0, doc_constants: bool = False):
    """A numpy kernel of ``op`` computing in float32 (float64 for double) and rounding to T.

    ``flaw``: 'tanh' (Gelu/BiasGelu with the tanh approximation), 'erf' (FastGelu with erf),
    'no-bias' (the bias input ignored), 'alpha' (QuickGelu with alpha 1.702 whatever the
    attribute).  ``ulp_off``: the libm results (erf, tanh, exp) scaled by ``1 + ulp_off eps``
    (:func:`_off`).
    ``doc_constants``: FastGelu with ContribOperators.md's 0.797885 / 0.035677."""

    def kernel(inputs, attrs, outputs, opset):
        names = list(inputs)
        x = inputs[names[0]]
        bias = inputs[names[1]] if len(names) > 1 else None
        dt = x.dtype
        w = _compute(x)
        z = x.astype(w)
        if bias is not None:
            if bias.ndim != 1 or bias.shape[0] != x.shape[-1]:
                raise ValueError("bias must be 1-D of X's last dimension")
            if flaw != "no-bias":
                z = z + bias.astype(w)
        eps = float(np.finfo(w).eps)
        one, half = w(1), w(0.5)
        with np.errstate(all="ignore"):
            if op == "QuickGelu":
                alpha = w(np.float32(1.702 if flaw == "alpha" else attrs.get("alpha", 1.702)))
                e = np.exp(-alpha * z) * w(1 + ulp_off * eps)
                y = z / (one + e)
            elif (op == "FastGelu") != (flaw in ("tanh", "erf")):  # the tanh form
                c0, c1 = (w(ref.DOC_C0), w(ref.DOC_C1)) if doc_constants else \
                    (w(math.sqrt(2 / math.pi)), w(0.044715 * math.sqrt(2 / math.pi)))
                th = _off(np.tanh(c0 * z + c1 * z * z * z), ulp_off)
                y = half * z * (one + th)
            else:
                er = (_erf32(z / w(math.sqrt(2.0))) if w == np.float32 else
                      np.asarray(np.frompyfunc(math.erf, 1, 1)(z / math.sqrt(2.0)), dtype=np.float64))
                y = half * z * (one + _off(er.astype(w), ulp_off))
        return {outputs[0]: y.astype(dt)}

    return kernel


def _run(cases, kernels, name):
    return run_cases(cases, KernelBackend(kernels, name=name))


GELU_OPS = ("Gelu", "FastGelu", "BiasGelu", "QuickGelu")


def _family_kernels(**kw):
    return {op: gelu_family_kernel(op, **kw) for op in GELU_OPS}


def _bad(cases, results):
    return [(c.id, r.outcome, (r.message or "")[:160]) for c, r in zip(cases, results) if r.outcome != "pass"]


@pytest.mark.parametrize("kw", [{}, {"ulp_off": 4.0}, {"ulp_off": -4.0}, {"doc_constants": True}],
                         ids=["float32", "libm+4ulp", "libm-4ulp", "doc-constants"])
def test_legitimate_gelu_kernels_pass_everything(kw, value_cases):
    cases = [c for c in value_cases if c.op in GELU_OPS]
    assert len(cases) >= 150
    results = _run(cases, _family_kernels(**kw), "legit")
    bad = _bad(cases, results)
    assert not bad, bad[:8]


@pytest.mark.parametrize("op,flaw,least", [("Gelu", "tanh", 12), ("BiasGelu", "tanh", 15), ("FastGelu", "erf", 20),
                                           ("FastGelu", "no-bias", 15), ("BiasGelu", "no-bias", 15),
                                           ("QuickGelu", "alpha", 10)])
def test_wrong_gelu_kernels_are_caught(op, flaw, least, value_cases):
    cases = [c for c in value_cases if c.op == op]
    good = _run(cases, {op: gelu_family_kernel(op)}, "right")
    bad = _run(cases, {op: gelu_family_kernel(op, flaw=flaw)}, flaw)
    caught = [c.id for c, g, b in zip(cases, good, bad) if g.outcome == "pass" and b.outcome == "fail"]
    assert len(caught) >= least, (op, flaw, len(caught))


def test_gelu_error_cases_are_rejected(suite):
    cases = [c for c in suite if c.expect_error and c.op in GELU_OPS]
    assert {(c.op, c.tags["error"]) for c in cases} == {(op, t) for op in ("FastGelu", "BiasGelu")
                                                       for t in ("bias-length", "bias-rank")}
    results = _run(cases, _family_kernels(), "legit")
    assert all(r.outcome == "pass" for r in results), [(c.id, r.message[:100]) for c, r in zip(cases, results)]


def test_every_type_and_bias_state_is_generated(value_cases):
    seen = {(c.op, c.tags.get("dtype") or c.id.split("/")[1]) for c in value_cases if c.op in GELU_OPS}
    for op in GELU_OPS:
        for t in ("float16", "float", "double", "bfloat16"):
            assert (op, t) in seen, (op, t)
    fast = [c for c in value_cases if c.op == "FastGelu"]
    with_bias = {any(i.name == "bias" and i.present for i in c.inputs) for c in fast}
    assert with_bias == {True, False}
    assert any(c.datasets[0].inputs[c.inputs[0].name].size == 0 for c in fast)



# ============================================================================ FusedMatMul: oracle
def _stored_index(logical_idx, ndim, trans, trans_batch):
    """Where element ``logical_idx`` (``(b..., r, c)`` of the matrix numpy.matmul sees) lives in the
    stored operand, from the doc's words: transBatch -- the stored dim 0 is the row dimension, dims
    1..rank-2 the batch (``S[r, b..., c]``); trans -- rows and columns swapped."""
    *b, r, c = logical_idx
    if trans:
        r, c = c, r
    if trans_batch and ndim >= 3:
        return (r, *b, c)
    return (*b, r, c)


def _loop_fused_matmul(a, b, alpha, ta, tb, tba, tbb):
    """``alpha * sum_k A'[.., i, k] B'[.., k, j]`` with Fractions, operands read through
    :func:`_stored_index` (same ranks >= 2 or rank-2 operands, batch broadcast by size-1 dims)."""
    def lshape(x, t, tbat):
        sh = list(x.shape)
        if tbat and x.ndim >= 3:
            sh = sh[1:-1] + [sh[0], sh[-1]]
        if t:
            sh[-1], sh[-2] = sh[-2], sh[-1]
        return sh

    la, lb = lshape(a, ta, tba), lshape(b, tb, tbb)
    batch_a, batch_b = la[:-2], lb[:-2]
    batch = np.broadcast_shapes(tuple(batch_a), tuple(batch_b))
    m, k, n = la[-2], la[-1], lb[-1]
    assert lb[-2] == k
    out = np.zeros(tuple(batch) + (m, n))
    for bi in itertools.product(*[range(d) for d in batch]):
        ba = tuple(x if d > 1 else 0 for x, d in zip(bi[len(bi) - len(batch_a):], batch_a))
        bb = tuple(x if d > 1 else 0 for x, d in zip(bi[len(bi) - len(batch_b):], batch_b))
        for i in range(m):
            for j in range(n):
                acc = Fraction(0)
                for q in range(k):
                    acc += Fraction(float(a[_stored_index(ba + (i, q), a.ndim, ta, tba)])) * \
                        Fraction(float(b[_stored_index(bb + (q, j), b.ndim, tb, tbb)]))
                out[bi + (i, j)] = float(Fraction(float(np.float32(alpha))) * acc)
    return out


@pytest.mark.parametrize("ta,tb,tba,tbb", list(itertools.product((0, 1), repeat=4)))
def test_fused_matmul_oracle_is_the_index_loop(ta, tb, tba, tbb):
    rng = np.random.default_rng(11)
    s, m, k, n = 2, 3, 4, 5
    la, lb = (s, m, k), (s, k, n)
    sa, sb = ref.stored_shape(la, ta, tba), ref.stored_shape(lb, tb, tbb)
    a, b = rng.integers(-4, 5, size=sa).astype(np.float64), rng.integers(-4, 5, size=sb).astype(np.float64)
    got = cf.fused_matmul_oracle(None, a, b, alpha=0.5, transA=ta, transB=tb, transBatchA=tba, transBatchB=tbb)
    want = _loop_fused_matmul(a, b, 0.5, ta, tb, tba, tbb)
    assert got.shape == want.shape == (s, m, n)
    np.testing.assert_array_equal(got, want)


def test_fused_matmul_oracle_rank4_broadcast_and_onnxruntime_test_example():
    rng = np.random.default_rng(12)
    a = rng.integers(-3, 4, size=(3, 2, 1, 4)).astype(np.float64)  # transBatchA: [M=3, 2, 1, K=4]
    b = rng.integers(-3, 4, size=(1, 2, 4, 5)).astype(np.float64)
    got = cf.fused_matmul_oracle(None, a, b, transBatchA=1)
    np.testing.assert_array_equal(got, _loop_fused_matmul(a, b, 1.0, 0, 0, 1, 0))
    # onnxruntime's fused_matmul_op_test.cc "test 2D": [3, 4] x [4, 3] of 0..11 -> 42, 48, 54, ...
    x = np.arange(12, dtype=np.float64)
    y = cf.fused_matmul_oracle(None, x.reshape(3, 4), x.reshape(4, 3))
    np.testing.assert_array_equal(y.ravel(), [42, 48, 54, 114, 136, 158, 186, 224, 262])
    # transBatchA with the test's TransposeBatch layout ([batch, N, M] -> [N, batch, M]) gives the same
    a3 = np.arange(12, dtype=np.float64).reshape(2, 2, 3)
    stored = np.ascontiguousarray(np.transpose(a3, (1, 0, 2)))
    np.testing.assert_array_equal(cf.fused_matmul_oracle(None, stored, x.reshape(3, 4), transBatchA=1),
                                  np.matmul(a3, x.reshape(3, 4)))


def test_one_d_operands_are_never_transposed(suite):
    """Only the other operand of a 1-D one carries trans (module docstring of the entries)."""
    seen = 0
    for c in suite:
        if c.op not in ("FusedMatMul", "TransposeMatMul") or c.expect_error:
            continue
        ra, rb = len(c.inputs[0].shape), len(c.inputs[1].shape)
        assert not (ra == 1 and c.attributes.get("transA")), c.id
        assert not (rb == 1 and c.attributes.get("transB")), c.id
        seen += ra == 1 or rb == 1
    assert seen >= 20


# ============================================================================ FusedMatMul: kernels
def _transposed(x, trans, trans_batch):
    if x.ndim >= 3 and trans_batch:
        x = np.transpose(x, list(range(1, x.ndim - 1)) + [0, x.ndim - 1])
    if x.ndim >= 2 and trans:
        x = np.swapaxes(x, -1, -2)
    return x


def _fma_matmul(la, lb):
    """A sequential dot product with a fused multiply-add in float32: each step ``acc + a b``
    computed exactly (float64 holds a float32 product and the sum of the two exactly enough) and
    rounded once to float32; batch dimensions broadcast as numpy.matmul; 1-D operands promoted."""
    a2 = la[None, :] if la.ndim == 1 else la
    b2 = lb[:, None] if lb.ndim == 1 else lb
    batch = np.broadcast_shapes(a2.shape[:-2], b2.shape[:-2])
    a2 = np.broadcast_to(a2, batch + a2.shape[-2:]).astype(np.float64)
    b2 = np.broadcast_to(b2, batch + b2.shape[-2:]).astype(np.float64)
    acc = np.zeros(batch + (a2.shape[-2], b2.shape[-1]), dtype=np.float32)
    for q in range(a2.shape[-1]):
        acc = (acc.astype(np.float64) + a2[..., :, q:q + 1] * b2[..., q:q + 1, :]).astype(np.float32)
    if la.ndim == 1:
        acc = acc[..., 0, :]
    if lb.ndim == 1:
        acc = acc[..., 0]
    return acc


def matmul_kernel(compute=np.float32, flaw=None, fold_alpha=False, t_rounding=False, fma=False):
    """FusedMatMul/TransposeMatMul in numpy: the operands transposed as the doc says, the product in
    ``compute`` (float32 for the 16-bit types, numpy's BLAS order), alpha applied after (or folded
    into A: ``fold_alpha``; or the product rounded to T first: ``t_rounding``; or a sequential
    float32 fused multiply-add: ``fma``).  ``flaw``: 'no-alpha',
    'no-transBatchA', 'swap-trans' (transA applied to B and transB to A)."""

    def kernel(inputs, attrs, outputs, opset):
        a, b = inputs["A"], inputs["B"]
        dt = a.dtype
        w = np.float64 if dt == np.float64 or compute == np.float64 else np.float32
        alpha = w(np.float32(attrs.get("alpha", 1.0)))
        ta, tb = int(attrs.get("transA", 0)), int(attrs.get("transB", 0))
        tba, tbb = int(attrs.get("transBatchA", 0)), int(attrs.get("transBatchB", 0))
        if flaw == "no-alpha":
            alpha = w(1)
        if flaw == "no-transBatchA":
            tba = 0
        if flaw == "swap-trans":
            ta, tb = tb, ta
        la, lb = _transposed(a.astype(w), ta, tba), _transposed(b.astype(w), tb, tbb)
        if fma and w == np.float32:
            y = _fma_matmul(la, lb) * alpha
        elif fold_alpha:
            y = np.matmul(la * alpha, lb)
        elif t_rounding:
            y = np.matmul(la, lb).astype(dt).astype(w) * alpha
        else:
            y = np.matmul(la, lb) * alpha
        return {outputs[0]: np.asarray(y).astype(dt)}

    return kernel


MM_OPS = ("FusedMatMul", "TransposeMatMul")


@pytest.mark.parametrize("kw", [{}, {"compute": np.float64}, {"fold_alpha": True}, {"t_rounding": True},
                                {"fma": True}], ids=["float32", "float64", "alpha-folded", "T-rounded-product", "fma"])
def test_legitimate_matmul_kernels_pass_everything(kw, value_cases):
    cases = [c for c in value_cases if c.op in MM_OPS]
    assert len(cases) >= 200
    assert sum(c.contested is not None for c in cases) >= 4  # the doc's reading is computed, and passes
    results = _run(cases, {op: matmul_kernel(**kw) for op in MM_OPS}, "legit")
    bad = _bad(cases, results)
    assert not bad, bad[:8]


@pytest.mark.parametrize("op,flaw,least", [("FusedMatMul", "no-alpha", 60), ("TransposeMatMul", "no-alpha", 30),
                                           ("FusedMatMul", "no-transBatchA", 8), ("FusedMatMul", "swap-trans", 8),
                                           ("TransposeMatMul", "swap-trans", 4)])
def test_wrong_matmul_kernels_are_caught(op, flaw, least, value_cases):
    cases = [c for c in value_cases if c.op == op]
    good = _run(cases, {op: matmul_kernel()}, "right")
    bad = _run(cases, {op: matmul_kernel(flaw=flaw)}, flaw)
    caught = [c.id for c, g, b in zip(cases, good, bad) if g.outcome == "pass" and b.outcome == "fail"]
    assert len(caught) >= least, (op, flaw, len(caught))


def test_float16_accumulation_is_caught(value_cases):
    """A float16 accumulator fails the long-K cases (the mandated float32 accumulation)."""
    cases = [c for c in value_cases if c.op in MM_OPS and "long-K" in c.id and "/float16/" in c.id]
    assert cases

    def k16(inputs, attrs, outputs, opset):
        a, b = inputs["A"], inputs["B"]
        la, lb = _transposed(a, attrs.get("transA", 0), 0), _transposed(b, attrs.get("transB", 0), 0)
        acc = np.zeros((la.shape[0], lb.shape[1]), dtype=np.float16)
        for q in range(la.shape[1]):
            acc = (acc + la[:, q:q + 1] * lb[q:q + 1, :]).astype(np.float16)
        return {outputs[0]: (acc * np.float16(np.float32(attrs.get("alpha", 1.0)))).astype(np.float16)}

    results = _run(cases, {op: k16 for op in MM_OPS}, "fp16-acc")
    assert all(r.outcome == "fail" for r in results), [(c.id, r.outcome) for c, r in zip(cases, results)]


def test_matmul_error_cases_are_rejected(suite):
    cases = [c for c in suite if c.expect_error and c.op in MM_OPS]
    assert {c.tags["error"] for c in cases if c.op == "FusedMatMul"} == {
        "inner-mismatch", "transA-ignored", "transB-ignored", "scalar", "transBatchA-ignored"}
    results = _run(cases, {op: matmul_kernel() for op in MM_OPS}, "legit")
    assert all(r.outcome == "pass" for r in results), [(c.id, r.message[:100]) for c, r in zip(cases, results)]
    # each would be accepted by a kernel ignoring the attribute the case is about
    for flaw, tag in (("no-transBatchA", "transBatchA-ignored"),):
        sel = [c for c in cases if c.tags["error"] == tag]
        assert sel
        assert all(r.outcome == "fail" for r in _run(sel, {"FusedMatMul": matmul_kernel(flaw=flaw)}, flaw))



# ============================================================================ FusedGemm: oracle
def _sig(v):
    return 1.0 / (1.0 + math.exp(-v)) if v > -700 else 0.0


def _softplus(v):
    return v + math.log1p(math.exp(-v)) if v > 0 else math.log1p(math.exp(v))


#: Each activation per element from its formula (ContribOperators.md / the ai.onnx operator texts;
#: ParametricSoftplus ``alpha ln(1 + e^(beta x))``, ScaledTanh ``alpha tanh(beta x)``).
LOOP_ACTS = {
    "Relu": lambda v, p: max(v, 0.0),
    "Tanh": lambda v, p: math.tanh(v),
    "Sigmoid": lambda v, p: _sig(v),
    "Softplus": lambda v, p: _softplus(v),
    "Softsign": lambda v, p: v / (1.0 + abs(v)),
    "LeakyRelu": lambda v, p: v if v >= 0 else p["alpha"] * v,
    "HardSigmoid": lambda v, p: min(1.0, max(0.0, p["alpha"] * v + p["beta"])),
    "Elu": lambda v, p: v if v >= 0 else p["alpha"] * math.expm1(v),
    "Selu": lambda v, p: p["gamma"] * (v if v > 0 else p["alpha"] * math.expm1(v)),
    "Celu": lambda v, p: max(0.0, v) + min(0.0, p["alpha"] * math.expm1(v / p["alpha"])),
    "ThresholdedRelu": lambda v, p: v if v > p["alpha"] else 0.0,
    "ParametricSoftplus": lambda v, p: p["alpha"] * _softplus(p["beta"] * v),
    "ScaledTanh": lambda v, p: p["alpha"] * math.tanh(p["beta"] * v),
}


def test_the_activation_table_is_onnxruntimes():
    assert set(LOOP_ACTS) == set(ref.GEMM_ACTIVATIONS)
    assert {a.values["activation"] for a in cf.GEMM_ATTRS} == set(ref.GEMM_ACTIVATIONS)


@pytest.mark.parametrize("name", sorted(ref.GEMM_ACTIVATIONS))
def test_fused_gemm_oracle_is_the_loop(name):
    rng = np.random.default_rng(21)
    m, k, n = 3, 4, 5
    a = rng.integers(-4, 5, size=(k, m)).astype(np.float64) / 4  # transA=1
    b = rng.integers(-4, 5, size=(k, n)).astype(np.float64) / 4
    c = rng.integers(-4, 5, size=(n,)).astype(np.float64) / 2
    params = {"alpha": 0.75, "beta": 0.5, "gamma": 1.25}
    attrs = {f"activation_{p}": v for p, v in params.items() if p in ref.GEMM_ACTIVATIONS[name][0]}
    got = cf.fused_gemm_oracle(None, a, b, c, alpha=0.5, beta=-1.5, transA=1, activation=name, **attrs)
    want = np.empty((m, n))
    for i in range(m):
        for j in range(n):
            z = 0.5 * sum(a[q, i] * b[q, j] for q in range(k)) - 1.5 * c[j]
            want[i, j] = LOOP_ACTS[name](z, params)
    np.testing.assert_allclose(got, want, rtol=1e-13, atol=1e-15)


def test_missing_activation_parameter_and_unknown_name_raise():
    a = np.ones((2, 2))
    with pytest.raises(ValueError, match="alpha"):
        cf.fused_gemm_oracle(None, a, a, activation="LeakyRelu")
    with pytest.raises(ValueError, match="unknown"):
        cf.fused_gemm_oracle(None, a, a, activation="Gelu", activation_alpha=1.0)


# ============================================================================ FusedGemm: kernels
ORT_DEFAULTS = {"LeakyRelu": {"alpha": 0.01}, "HardSigmoid": {"alpha": 0.2, "beta": 0.5}, "Elu": {"alpha": 1.0},
                "Selu": {"alpha": 1.67326, "gamma": 1.0507}, "Celu": {"alpha": 1.0}, "ThresholdedRelu": {"alpha": 1.0},
                "ParametricSoftplus": {"alpha": 1.0, "beta": 1.0}, "ScaledTanh": {"alpha": 1.0, "beta": 1.0}}


def _np_act(name, z, p, ulp_off=0.0):
    if z.dtype == object:  # integers: Relu, ThresholdedRelu (or none)
        if name is None:
            return z
        f = {"Relu": lambda v: max(v, 0), "ThresholdedRelu": lambda v: v if v > p["alpha"] else 0}[name]
        return np.asarray([f(v) for v in z.ravel()], dtype=object).reshape(z.shape)
    w = z.dtype.type
    one, zero = w(1), w(0)
    eps = float(np.finfo(z.dtype).eps)

    def exp(v):
        return np.exp(v) * w(1 + ulp_off * eps)

    def tanh(v):
        return _off(np.tanh(v), ulp_off)

    a, b, g = (w(p.get(k, 0.0)) for k in ("alpha", "beta", "gamma"))
    return {
        None: lambda: z,
        "Relu": lambda: np.maximum(z, zero),
        "Tanh": lambda: tanh(z),
        "Sigmoid": lambda: one / (one + exp(-z)),
        "Softplus": lambda: np.logaddexp(zero, z),
        "Softsign": lambda: z / (one + np.abs(z)),
        "LeakyRelu": lambda: np.where(z >= 0, z, a * z),
        "HardSigmoid": lambda: np.clip(a * z + b, zero, one),
        "Elu": lambda: np.where(z >= 0, z, a * (exp(z) - one)),
        "Selu": lambda: g * np.where(z > 0, z, a * exp(z) - a),
        "Celu": lambda: np.maximum(zero, z) + np.minimum(zero, a * (exp(z / a) - one)),
        "ThresholdedRelu": lambda: np.where(z > a, z, zero),
        "ParametricSoftplus": lambda: a * np.logaddexp(zero, b * z),
        "ScaledTanh": lambda: a * tanh(b * z),
    }[name]()


def gemm_kernel(compute=np.float32, flaw=None, t_rounding=False, ulp_off=0.0):
    """FusedGemm in numpy: ``alpha A'B' + beta C`` in ``compute`` (float32 for the 16-bit types), the
    activation in the same precision (``t_rounding``: the Gemm result rounded to T first);
    integers exact.  ``flaw``: 'act-before-C' (``act(alpha A'B') + beta C``), 'act-params-ignored'
    (the ai.onnx defaults instead of activation_*), 'no-activation'."""

    def kernel(inputs, attrs, outputs, opset):
        a, b, c = inputs["A"], inputs["B"], inputs.get("C")
        dt = a.dtype
        name = attrs.get("activation")
        if name is not None and name not in LOOP_ACTS:
            raise ValueError(f"unknown kernel type: {name}")
        if a.ndim != 2 or b.ndim != 2:
            raise ValueError("A and B must be 2-D")
        p = {k[len("activation_"):]: float(v) for k, v in attrs.items() if k.startswith("activation_")}
        if flaw == "act-params-ignored" and name in ORT_DEFAULTS:
            p = dict(ORT_DEFAULTS[name])
        if flaw == "no-activation":
            name = None
        ta, tb = int(attrs.get("transA", 0)), int(attrs.get("transB", 0))
        a2, b2 = (a.T if ta else a), (b.T if tb else b)
        if a2.shape[1] != b2.shape[0]:
            raise ValueError("K mismatch")
        m, n = a2.shape[0], b2.shape[1]
        if c is not None:
            c = np.broadcast_to(c, (m, n)) if c.ndim <= 2 else None
            if c is None:
                raise ValueError("C rank")
        if dt.kind in "iu":
            ai, bi = a2.astype(object), b2.astype(object)
            z = int(attrs.get("alpha", 1.0)) * np.asarray(np.matmul(ai, bi), dtype=object).reshape(m, n)
            if c is not None:
                z = z + int(attrs.get("beta", 1.0)) * c.astype(object)
            return {outputs[0]: _np_act(name, z, p).astype(dt)}
        w = np.float64 if dt == np.float64 or compute == np.float64 else np.float32
        alpha, beta = w(np.float32(attrs.get("alpha", 1.0))), w(np.float32(attrs.get("beta", 1.0)))
        ab = alpha * np.matmul(a2.astype(w), b2.astype(w))
        cc = beta * c.astype(w) if c is not None else w(0)
        if flaw == "act-before-C":
            return {outputs[0]: (_np_act(name, ab, p, ulp_off) + cc).astype(dt)}
        z = ab + cc
        if t_rounding:
            z = z.astype(dt).astype(w)
        return {outputs[0]: np.asarray(_np_act(name, z, p, ulp_off)).astype(dt)}

    return kernel


@pytest.mark.parametrize("kw", [{}, {"compute": np.float64}, {"t_rounding": True}, {"ulp_off": 4.0},
                                {"ulp_off": -4.0}], ids=["float32", "float64", "T-rounded", "libm+4", "libm-4"])
def test_legitimate_gemm_kernels_pass_everything(kw, value_cases):
    cases = [c for c in value_cases if c.op == "FusedGemm"]
    assert len(cases) >= 100
    results = _run(cases, {"FusedGemm": gemm_kernel(**kw)}, "legit")
    bad = _bad(cases, results)
    assert not bad, bad[:8]


@pytest.mark.parametrize("flaw,least", [("act-before-C", 20), ("act-params-ignored", 10), ("no-activation", 40)])
def test_wrong_gemm_kernels_are_caught(flaw, least, value_cases):
    cases = [c for c in value_cases if c.op == "FusedGemm"]
    good = _run(cases, {"FusedGemm": gemm_kernel()}, "right")
    bad = _run(cases, {"FusedGemm": gemm_kernel(flaw=flaw)}, flaw)
    caught = [c for c, g, b in zip(cases, good, bad) if g.outcome == "pass" and b.outcome == "fail"]
    assert len(caught) >= least, (flaw, len(caught))
    if flaw == "act-params-ignored":  # every parameterised activation is caught somewhere
        assert {c.attributes["activation"] for c in caught} == set(ORT_DEFAULTS), \
            {c.attributes["activation"] for c in caught}


def test_gemm_error_cases_are_rejected(suite):
    cases = [c for c in suite if c.expect_error and c.op == "FusedGemm"]
    assert {c.tags["error"] for c in cases} == {"unknown-activation", "inner-mismatch", "transA-ignored",
                                                "C-not-broadcastable", "A-rank3"}
    results = _run(cases, {"FusedGemm": gemm_kernel()}, "legit")
    assert all(r.outcome == "pass" for r in results), [(c.id, r.message[:100]) for c, r in zip(cases, results)]


def test_gemm_covers_every_type_and_the_contested_no_activation(value_cases):
    cases = [c for c in value_cases if c.op == "FusedGemm"]
    types = {c.id.split("/")[1] for c in cases}
    assert types == {"float16", "float", "double", "uint32", "uint64", "int32", "int64"}
    assert all(c.contested is not None for c in cases if c.attributes.get("activation") is None)
    assert any(c.contested is not None for c in cases)
    ints = [c for c in cases if c.id.split("/")[1] in ("int32", "int64", "uint32", "uint64")]
    assert {c.attributes.get("activation") for c in ints} == {None, "Relu", "ThresholdedRelu"}


# ============================================================================ onnx.reference
ALL_OPS = ("Gelu", "FastGelu", "BiasGelu", "QuickGelu", "FusedMatMul", "TransposeMatMul", "FusedGemm")


def test_onnx_reference_implements_none_of_them(suite):
    """onnx.reference has no com.microsoft kernels: there is no second opinion to compare with (if
    a later onnx adds one, this test says so and the comparison is due)."""
    from onnx.reference import ReferenceEvaluator

    for op in ALL_OPS:
        case = next(c for c in suite if c.op == op and c.expect_error is None)
        with pytest.raises(NotImplementedError, match="com.microsoft"):
            ReferenceEvaluator(case.model)


# ============================================================================ every generated case
def _dot(pairs) -> float | Fraction:
    """Sum of products: exact (a Fraction) when every factor is finite, else IEEE float arithmetic
    (NaN and infinities are absorbing: the class does not depend on the order)."""
    pairs = [(float(x), float(y)) for x, y in pairs]
    if all(math.isfinite(x) and math.isfinite(y) for x, y in pairs):
        return sum((Fraction(x) * Fraction(y) for x, y in pairs), Fraction(0))
    return sum(x * y for x, y in pairs)


def _scale(alpha, acc, beta=0.0, c=None) -> float:
    if isinstance(acc, Fraction) and (c is None or math.isfinite(c)):
        v = Fraction(float(np.float32(alpha))) * acc
        if c is not None:
            v += Fraction(float(np.float32(beta))) * Fraction(c)
        return float(v)
    v = float(np.float32(alpha)) * float(acc)
    return v + float(np.float32(beta)) * c if c is not None else v


def _loop_matmul_case(a, b, attrs):
    """FusedMatMul by :func:`_stored_index` over every output element (1-D operands promoted as
    numpy.matmul, rank-2 transBatch a no-op)."""
    ta, tb = attrs.get("transA", 0), attrs.get("transB", 0)
    tba, tbb = attrs.get("transBatchA", 0), attrs.get("transBatchB", 0)
    a1, b1 = a.ndim == 1, b.ndim == 1
    a2 = a.reshape(1, -1) if a1 else a
    b2 = b.reshape(-1, 1) if b1 else b

    def lshape(x, t, tbat):
        sh = list(x.shape)
        if tbat and x.ndim >= 3:
            sh = sh[1:-1] + [sh[0], sh[-1]]
        if t:
            sh[-1], sh[-2] = sh[-2], sh[-1]
        return sh

    la, lb = lshape(a2, 0 if a1 else ta, tba), lshape(b2, 0 if b1 else tb, tbb)
    batch = np.broadcast_shapes(tuple(la[:-2]), tuple(lb[:-2]))
    m, k, n = la[-2], la[-1], lb[-1]
    out = np.zeros(tuple(batch) + (m, n))
    for bi in itertools.product(*[range(d) for d in batch]):
        ba = tuple(x if d > 1 else 0 for x, d in zip(bi[len(bi) - len(la) + 2:], la[:-2]))
        bb = tuple(x if d > 1 else 0 for x, d in zip(bi[len(bi) - len(lb) + 2:], lb[:-2]))
        for i in range(m):
            for j in range(n):
                acc = _dot((a2[_stored_index(ba + (i, q), a2.ndim, 0 if a1 else ta, tba)],
                            b2[_stored_index(bb + (q, j), b2.ndim, 0 if b1 else tb, tbb)]) for q in range(k))
                out[bi + (i, j)] = _scale(attrs.get("alpha", 1.0), acc)
    if a1:
        out = out[..., 0, :]
    if b1:
        out = out[..., 0]
    return out


def _loop_gemm_case(a, b, c, attrs):
    ta, tb = attrs.get("transA", 0), attrs.get("transB", 0)
    a2, b2 = (a.T if ta else a), (b.T if tb else b)
    m, k, n = a2.shape[0], a2.shape[1], b2.shape[1]
    cc = None if c is None else np.broadcast_to(c, (m, n))
    name = attrs.get("activation")
    p = {k2[len("activation_"):]: float(np.float32(v)) for k2, v in attrs.items() if k2.startswith("activation_")}
    integer = a.dtype.kind in "iu"
    out = np.empty((m, n), dtype=object if integer else np.float64)
    for i in range(m):
        for j in range(n):
            if integer:
                z = int(attrs.get("alpha", 1.0)) * sum(int(a2[i, q]) * int(b2[i * 0 + q, j]) for q in range(k))
                z += 0 if cc is None else int(attrs.get("beta", 1.0)) * int(cc[i, j])
                out[i, j] = z if name is None else (max(z, 0) if name == "Relu" else (z if z > p["alpha"] else 0))
                continue
            z = _scale(attrs.get("alpha", 1.0), _dot((a2[i, q], b2[q, j]) for q in range(k)),
                       attrs.get("beta", 1.0), None if cc is None else float(cc[i, j]))
            out[i, j] = z if name is None else (math.nan if math.isnan(z) else LOOP_ACTS[name](z, p))
    return out


def _loop_gelu_case(op, inputs, attrs):
    x = inputs[0].astype(np.float64)
    if len(inputs) > 1 and inputs[1] is not None:
        x = x + inputs[1].astype(np.float64)
    if op == "QuickGelu":
        a32 = float(np.float32(attrs.get("alpha", 1.702)))
        return _loop(lambda v: math.nan if math.isnan(v) else (v if math.isinf(v) else _quick_1(v, a32)), x)
    f = _gelu_tanh_1 if op == "FastGelu" else _gelu_erf_1
    return _loop(lambda v: math.nan if math.isnan(v) else (v if math.isinf(v) else f(v)), x)


def test_loops_agree_with_every_generated_value_case(value_cases):
    """The loops above (written from the docs, not from the reference module) reproduce the stored
    expected output of every generated value case, rounded to T: exactly for integers, within 1
    ulp of T (the alpha product's double rounding, the loops' own libm and ``1 + tanh`` cancellation
    in double) for floats; NaN and infinities in the same places."""
    checked = Counter()
    for c in value_cases:
        ds = c.datasets[0]
        feeds = [(ds.inputs[i.name] if i.name in ds.inputs else i.value) if i.present else None for i in c.inputs]
        attrs = dict(c.attributes)
        if c.op in MM_OPS:
            got = _loop_matmul_case(feeds[0], feeds[1], attrs)
        elif c.op == "FusedGemm":
            got = _loop_gemm_case(feeds[0], feeds[1], feeds[2] if len(feeds) > 2 else None, attrs)
        else:
            got = _loop_gelu_case(c.op, feeds, attrs)
        want = next(iter(ds.outputs.values()))
        dt = np.asarray(want).dtype
        if dt.kind in "iu":
            assert [int(v) for v in np.ravel(got)] == [int(v) for v in np.ravel(want)], c.id
        else:
            g = np.asarray(got, dtype=np.float64).astype(dt).astype(np.float64)
            w = np.asarray(want).astype(np.float64)
            assert g.shape == w.shape, c.id
            np.testing.assert_array_equal(np.isnan(g), np.isnan(w), err_msg=c.id)
            fin = np.isfinite(w)
            np.testing.assert_array_equal(g[~fin & ~np.isnan(w)], w[~fin & ~np.isnan(w)], err_msg=c.id)
            ulp = np.spacing(np.abs(w[fin]).astype(dt)).astype(np.float64)
            assert np.all(np.abs(g[fin] - w[fin]) <= ulp + 1e-15), c.id
        checked[c.op] += 1
    assert set(checked) == set(ALL_OPS) and min(checked.values()) >= 30, checked
