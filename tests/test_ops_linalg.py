"""Tests of the linear-algebra entries (``conformance/ops/linalg.py``, oracles and bounds in
``conformance/reference/linalg.py``).

* the oracles against independent formulas (Python loops over ``fractions.Fraction``,
  numpy in float64, the spec's examples in onnx's node tests);
* agreement with ``onnx.reference`` on every generated case, each disagreement explained;
* numpy kernels through ``KernelBackend``: legitimate ones (float32 accumulation of 16-bit
  types in sequential, reverse, pairwise, blocked and FMA order; float64; BLAS; Gemm fused
  or composed of MatMul/Mul/Add in T or with alpha folded into A; Det by LU, Laplace or
  numpy's log-domain LU; Einsum in float32/float64 or numpy's optimized pairwise path in T)
  pass every case; the deliberately wrong ones fail cases they target: MatMul accumulating
  float16 in float16, without 1-D promotion, int64 through double; Gemm ignoring transB or
  beta, C not broadcast (flat resize), float16 accumulation, int64 through double;
  MatMulInteger ignoring either zero point, an [M] zero point applied along K, int16
  accumulation; Einsum ignoring a repeated index, implicit output in order of appearance,
  float16 accumulation; Det dropping the sign of row swaps, the diagonal product, LU in
  float16;
* coverage: every type combination of every version, the trap patterns present.
"""

from __future__ import annotations

import itertools
import math
from collections import Counter
from fractions import Fraction

import ml_dtypes
import numpy as np
import onnx
import pytest

from conformance.backends import resolve_backend
from conformance.backends.kernel import KernelBackend
from conformance.coverage import compute_coverage
from conformance.ops import linalg, values as V
from conformance.reference import linalg as ref
from conformance.runner import run_cases
from oracle_checks import single_node_tests, sort_findings  # tests/oracle_checks.py

pytestmark = pytest.mark.filterwarnings("ignore::RuntimeWarning")
OPS = ["MatMul", "Gemm", "MatMulInteger", "Einsum", "Det"]
E = {e.op: e for e in linalg.ENTRIES}
BF16 = np.dtype(ml_dtypes.bfloat16)


def _obj(vals, shape=None):
    a = np.empty(len(vals), dtype=object)
    a[:] = list(vals)
    return a.reshape(shape) if shape is not None else a


def _feeds(case):
    """The inputs of a case by name, graph inputs and initializers together (absent: None)."""
    ds = case.datasets[0].inputs
    return {i.name: (ds[i.name] if i.name in ds else i.value) if i.present else None for i in case.inputs}


# ============================================================================ oracles
def _loop_matmul(a, b):
    """numpy.matmul's definition written out: 1-D promotion, batch broadcasting, exact sums."""
    a, b = np.asarray(a, dtype=object), np.asarray(b, dtype=object)
    a2 = a.reshape(1, -1) if a.ndim == 1 else a
    b2 = b.reshape(-1, 1) if b.ndim == 1 else b
    batch = np.broadcast_shapes(a2.shape[:-2], b2.shape[:-2])
    a2, b2 = np.broadcast_to(a2, batch + a2.shape[-2:]), np.broadcast_to(b2, batch + b2.shape[-2:])
    m, k, n = a2.shape[-2], a2.shape[-1], b2.shape[-1]
    out = np.empty(batch + (m, n), dtype=object)
    for idx in np.ndindex(*batch):
        for i in range(m):
            for j in range(n):
                out[idx + (i, j)] = sum((Fraction(a2[idx + (i, q)]) * Fraction(b2[idx + (q, j)]) for q in range(k)),
                                        Fraction(0))
    shape = batch + ((m,) if a.ndim > 1 else ()) + ((n,) if b.ndim > 1 else ())
    return out.reshape(shape)


@pytest.mark.parametrize("sa,sb", [((3, 4), (4, 2)), ((4,), (4,)), ((4,), (2, 4, 3)), ((2, 3, 4), (4,)),
                                   ((2, 1, 3, 4), (1, 3, 4, 2)), ((3, 0), (0, 2)), ((0, 3), (3, 2)), ((1, 5), (5, 1))])
def test_matmul_oracle_is_the_exact_numpy_matmul(sa, sb):
    rng = np.random.default_rng(0)
    a = V.representable(rng.normal(size=sa) * 2.0 ** rng.integers(-30, 30, size=sa), "double")
    b = V.representable(rng.normal(size=sb) * 2.0 ** rng.integers(-30, 30, size=sb), "double")
    got = ref.exact_matmul(a, b)
    want = _loop_matmul(a, b)
    assert got.shape == want.shape == np.matmul(a, b).shape
    assert [float(x) for x in want.ravel()] == got.ravel().tolist()  # float(Fraction) rounds correctly
    # integers: Python ints, exact beyond 2^64
    ia = _obj([int(x) for x in rng.integers(-2**62, 2**62, size=int(np.prod(sa)))], sa)
    ib = _obj([int(x) for x in rng.integers(-2**62, 2**62, size=int(np.prod(sb)))], sb)
    assert ref.exact_matmul(ia, ib).ravel().tolist() == [int(x) for x in _loop_matmul(ia, ib).ravel()]


def test_matmul_oracle_special_values_follow_ieee():
    inf, nan = math.inf, math.nan
    a = np.array([[inf, 1.0], [inf, -inf], [0.0, 2.0], [nan, 0.0], [-0.0, 1e-300]])
    b = np.array([[0.0, 1.0], [1.0, 2.0]])
    got = ref.exact_matmul(a, b)
    with np.errstate(invalid="ignore"):
        want = a @ b  # IEEE products and sums (each element's class is order-free)
    assert np.array_equal(np.isnan(got), np.isnan(want)) and np.array_equal(got[~np.isnan(got)], want[~np.isnan(want)])
    assert np.isnan(got[0, 0]) and got[0, 1] == inf and np.isnan(got[1]).all() and got[2].tolist() == [2.0, 4.0]


def test_matmul_oracle_reproduces_the_node_tests():
    tests = single_node_tests(("MatMul",), ("matmul",))
    assert len(tests) >= 7
    for t in tests:
        for ins, outs in t.data_sets:
            got = E["MatMul"].oracle(None, *[x.astype(np.float64) for x in ins])
            want = np.asarray(outs[0])
            assert got.shape == want.shape, t.name
            # the node tests' expectation is float32 numpy.matmul: within the float32 bound
            k = ins[0].shape[-1]
            b = ref.gamma(k, ref.U32) * ref.abs_matmul(ins[0], ins[1]) + 2 ** -24 * np.abs(got)
            assert np.all(np.abs(got - want) <= b), t.name


@pytest.mark.parametrize("ta,tb,cshape", [(0, 0, (3, 2)), (1, 0, (2,)), (0, 1, (3, 1)), (1, 1, ()), (0, 0, (1, 1)),
                                          (1, 0, None)])
@pytest.mark.parametrize("alpha,beta", [(1.0, 1.0), (0.5, -1.5), (0.0, 2.0), (-1.0, 0.0)])
def test_gemm_oracle_is_the_formula(ta, tb, cshape, alpha, beta):
    rng = np.random.default_rng(3)
    m, k, n = 3, 4, 2
    a = V.representable(rng.normal(size=(k, m) if ta else (m, k)), "float")
    b = V.representable(rng.normal(size=(n, k) if tb else (k, n)), "float")
    c = None if cshape is None else V.representable(rng.normal(size=cshape), "float")
    got = E["Gemm"].oracle(None, a, b, c, alpha=alpha, beta=beta, transA=ta, transB=tb)
    ap, bp = (a.T if ta else a), (b.T if tb else b)
    cc = np.zeros((m, n)) if c is None else np.broadcast_to(c, (m, n))
    for i in range(m):
        for j in range(n):
            want = Fraction(alpha) * sum(Fraction(ap[i, q]) * Fraction(bp[q, j]) for q in range(k)) + \
                Fraction(beta) * Fraction(cc[i, j])
            assert got[i, j] == float(want)
    # integers: exact, integral alpha and beta
    ia = _obj([int(v) for v in rng.integers(-2**40, 2**40, size=a.size)], a.shape)
    ib = _obj([int(v) for v in rng.integers(-2**20, 2**20, size=b.size)], b.shape)
    gi = E["Gemm"].oracle(None, ia, ib, None, alpha=3.0, beta=0.0, transA=ta, transB=tb)
    assert gi.tolist() == (np.matmul(ia.T if ta else ia, ib.T if tb else ib) * 3).tolist()


def test_gemm_oracle_reproduces_the_node_tests():
    tests = single_node_tests(("Gemm",), ("gemm",))
    assert len(tests) >= 10
    for t in tests:
        node = t.model.graph.node[0]
        attrs = {a.name: onnx.helper.get_attribute_value(a) for a in node.attribute}
        for ins, outs in t.data_sets:
            x = [v.astype(np.float64) for v in ins] + [None] * (3 - len(ins))
            got = E["Gemm"].oracle(None, *x, **{"alpha": 1.0, "beta": 1.0, "transA": 0, "transB": 0, **attrs})
            want = np.asarray(outs[0]).astype(np.float64)
            assert got.shape == want.shape, t.name
            assert np.allclose(got, want, rtol=1e-5, atol=1e-5), t.name


def test_matmul_integer_oracle_is_the_formula():
    """(A - a_zp) @ (B - b_zp) written out with Python ints: a per-row a_zero_point of a 2-D A
    is ``[M]`` (one per row, not broadcast along K), batched ones ``[..., M, 1]``; per-column
    b_zero_point ``[N]`` / ``[..., 1, N]``."""
    rng = np.random.default_rng(4)
    m, k, n = 3, 3, 2  # M == K: a naive numpy broadcast of an [M] zero point would go along K
    a = _obj([int(v) for v in rng.integers(0, 256, m * k)], (m, k))
    b = _obj([int(v) for v in rng.integers(-128, 128, k * n)], (k, n))
    za = _obj([int(v) for v in rng.integers(0, 256, m)])
    zb = _obj([int(v) for v in rng.integers(-128, 128, n)])
    got = E["MatMulInteger"].oracle(None, a, b, za, zb)
    want = [[sum((a[i, q] - za[i]) * (b[q, j] - zb[j]) for q in range(k)) for j in range(n)] for i in range(m)]
    assert got.tolist() == want
    assert got.tolist() != np.matmul(a - za, b - zb).tolist()  # the naive broadcast differs
    # batched per-row / per-column, 1-D operands, absent zero points
    ab = _obj([int(v) for v in rng.integers(0, 256, 2 * m * k)], (2, m, k))
    zab = _obj([int(v) for v in rng.integers(0, 256, 2 * m)], (2, m, 1))
    zbb = _obj([int(v) for v in rng.integers(-128, 128, 2 * n)], (2, 1, n))
    got = E["MatMulInteger"].oracle(None, ab, b, zab, zbb)
    for t in range(2):
        want = [[sum((ab[t, i, q] - zab[t, i, 0]) * (b[q, j] - zbb[t, 0, j]) for q in range(k)) for j in range(n)]
                for i in range(m)]
        assert got[t].tolist() == want
    v = _obj([1, 2, 3])
    assert E["MatMulInteger"].oracle(None, v, b, None, zb).tolist() == \
        [sum((v[q]) * (b[q, j] - zb[j]) for q in range(k)) for j in range(n)]
    assert E["MatMulInteger"].oracle(None, a, v, za, None).tolist() == \
        [sum((a[i, q] - za[i]) * v[q] for q in range(k)) for i in range(m)]
    # the node test
    tests = single_node_tests(("MatMulInteger",), ("matmulinteger",))
    assert tests
    for t in tests:
        for ins, outs in t.data_sets:
            ex = [V.to_exact(x, V.name_of(onnx.helper.np_dtype_to_tensor_dtype(x.dtype))) for x in ins]
            assert E["MatMulInteger"].oracle(None, *ex).tolist() == outs[0].tolist(), t.name


def _leibniz(m) -> Fraction:
    n = len(m)
    total = Fraction(0)
    for p in itertools.permutations(range(n)):
        inv = sum(1 for i in range(n) for j in range(i + 1, n) if p[i] > p[j])
        term = Fraction(-1 if inv % 2 else 1)
        for i in range(n):
            term *= Fraction(m[i][p[i]])
        total += term
    return total


@pytest.mark.parametrize("shape", [(1, 1), (2, 2), (3, 3), (4, 4), (5, 5), (3, 2, 2), (2, 2, 3, 3), (0, 3, 3)])
def test_det_oracle_is_the_leibniz_formula(shape):
    rng = np.random.default_rng(5)
    for x in (V.representable(rng.normal(size=shape) * 2.0 ** rng.integers(-40, 40, size=shape), "double"),
              rng.integers(-3, 4, size=shape).astype(np.float64)):
        got = E["Det"].oracle(None, x)
        assert got.shape == shape[:-2]
        for idx in np.ndindex(*shape[:-2]):
            assert got[idx] == float(_leibniz(x[idx].tolist()))
    # singular integer matrices: exactly 0; permutation matrices: the sign of the permutation
    assert E["Det"].oracle(None, np.array([[1.0, 2.0], [2.0, 4.0]])) == 0.0
    assert E["Det"].oracle(None, np.array([[0.0, 1.0, 0.0], [1.0, 0.0, 0.0], [0.0, 0.0, 1.0]])) == -1.0


def test_det_oracle_reproduces_the_node_tests():
    tests = single_node_tests(("Det",), ("det",))
    assert len(tests) >= 2
    for t in tests:
        for ins, outs in t.data_sets:
            got = E["Det"].oracle(None, ins[0].astype(np.float64))
            want = np.asarray(outs[0]).astype(np.float64)
            assert got.shape == want.shape and np.allclose(got, want, rtol=1e-6), t.name


def test_det_bound_holds_for_the_usual_algorithms():
    """LU with partial pivoting (our loop, LAPACK through numpy in float32 and float64: the
    latter takes the product in the log domain), Laplace expansion, all within the bound on
    random, column-scaled, singular and ill-conditioned matrices; an LU in float16 is not."""
    rng = np.random.default_rng(6)
    worst = {}
    for m in range(1, 6):
        for trial in range(30):
            x = rng.uniform(-2, 2, size=(m, m))
            if trial % 3 == 1 and m > 1:
                x = x * 2.0 ** rng.integers(-30, 31, size=(1, m))
            if trial % 3 == 2 and m > 2:
                x[-1] = x[0] + x[1] + 2.0 ** -12 * rng.uniform(-1, 1, size=m)
            x = V.representable(x, "float")
            exact = ref.det(x)
            b = ref.det_bound(x, ref.U32, ref.S32)
            for name, got in (("lu32", _lu_det(x, np.float32)), ("numpy32", np.linalg.det(x.astype(np.float32))),
                              ("laplace32", _laplace_det(x.astype(np.float32))),
                              ("numpy64", np.linalg.det(x))):
                err = abs(float(got) - float(exact))
                worst[name] = max(worst.get(name, 0.0), err / float(b))
                assert err <= b, (name, m, trial, err, b)
    assert 0 < max(worst.values()) < 1, worst


def _loop_einsum(equation, *ops):
    """Einsum by its definition, independently of the reference's parser: every assignment of
    the letters, the product of the operands' elements (a size-1 ellipsis dim broadcasts),
    summed in Fractions over the letters absent from the output."""
    eq = equation.replace(" ", "")
    lhs, _, rhs = eq.partition("->")
    terms = lhs.split(",")
    ell = ""
    for t, x in zip(terms, ops):
        if "..." in t:
            ell = "ABCDEFGH"[: x.ndim - (len(t) - 3)]  # capitals unused by the table's ellipsis equations
    terms = [t.replace("...", ell) for t in terms]
    if "->" in eq:
        out = rhs.replace("...", ell)
    else:
        flat = "".join(t for t in terms)
        singles = sorted(c for c in set(flat) if flat.count(c) == 1 and c not in ell)
        out = ell + "".join(singles)
    size = {}
    for t, x in zip(terms, ops):
        for c, d in zip(t, x.shape):
            size[c] = d if d != 1 or c not in size else size[c]  # a size-1 dim broadcasts
    letters = sorted(size)
    res = {}
    for vals in itertools.product(*[range(size[c]) for c in letters]):
        env = dict(zip(letters, vals))
        term = Fraction(1)
        for t, x in zip(terms, ops):
            idx = tuple(env[c] if x.shape[i] > 1 else 0 for i, c in enumerate(t))
            term *= Fraction(x[idx])
        key = tuple(env[c] for c in out)
        res[key] = res.get(key, Fraction(0)) + term
    shape = tuple(size[c] for c in out)
    y = np.zeros(shape, dtype=object)
    for idx in np.ndindex(*shape):
        y[idx] = res.get(idx, Fraction(0))
    return y


def test_einsum_oracle_is_the_definition():
    """Every equation of the table on random operands (the pattern's shapes, small dims): the
    oracle equals the definition written out in Fractions and numpy.einsum in float64."""
    rng = np.random.default_rng(7)
    for sh in linalg.EINSUM_TABLE:
        eq = sh.attrs["equation"]
        dims = {c: 2 + (ord(c) % 3) for c in "".join(sh.inputs.values()) if c.isalpha()}
        dims["L"] = 7
        ops = [V.representable(rng.normal(size=tuple(dims[c] if c.isalpha() else int(c) for c in tpl)), "float")
               for tpl in sh.inputs.values()]
        got = E["Einsum"].oracle(None, *ops, equation=eq)
        want = _loop_einsum(eq, *ops)
        assert got.shape == want.shape, sh.name
        assert [float(v) for v in want.ravel()] == got.ravel().tolist(), sh.name
        assert np.allclose(got, np.einsum(eq.replace(" ", ""), *ops)), sh.name
        iops = [_obj([int(v) for v in rng.integers(-5, 6, size=o.size)], o.shape) for o in ops]
        assert E["Einsum"].oracle(None, *iops, equation=eq).tolist() == \
            np.asarray(_loop_einsum(eq, *iops)).astype(object).tolist(), sh.name
    # implicit output: letters once, in ASCII order (capitals first)
    a, b = np.ones((2, 3)), np.ones((3, 4))
    assert E["Einsum"].oracle(None, a, b, equation="ia,aJ").shape == (4, 2)
    assert E["Einsum"].oracle(None, np.arange(6.0).reshape(2, 3), equation="ba").tolist() == [[0, 3], [1, 4], [2, 5]]


def test_einsum_oracle_reproduces_the_node_tests():
    tests = single_node_tests(("Einsum",), ("einsum",))
    assert len(tests) >= 9
    for t in tests:
        eq = onnx.helper.get_attribute_value(t.model.graph.node[0].attribute[0]).decode()
        for ins, outs in t.data_sets:
            got = E["Einsum"].oracle(None, *[x.astype(np.float64) for x in ins], equation=eq)
            want = np.asarray(outs[0]).astype(np.float64)
            assert got.shape == want.shape, t.name
            assert np.allclose(got, want, rtol=2**-7 if outs[0].dtype == BF16 else 1e-12), t.name


def test_numpy_float16_matmul_accumulates_in_float32():
    """The decision behind the 16-bit bound: numpy.matmul (the model the MatMul text names)
    gives the float32 sum rounded once for float16 operands; a float16 accumulator would be far off."""
    rng = np.random.default_rng(1)
    a = rng.uniform(0, 1, (2, 4096)).astype(np.float16)
    b = rng.uniform(0, 1, (4096, 2)).astype(np.float16)
    exact = ref.exact_matmul(a.astype(np.float64), b.astype(np.float64))
    got = (a @ b).astype(np.float64)
    f32 = (a.astype(np.float32) @ b.astype(np.float32)).astype(np.float16).astype(np.float64)
    assert np.all(np.abs(got - exact) <= 1.0) and np.all(np.abs(got - f32) <= 1.0)  # ulp(1024) = 1
    acc = np.zeros((2, 2), np.float16)
    for k in range(4096):
        acc = (acc + a[:, k, None] * b[None, k, :]).astype(np.float16)
    assert np.all(np.abs(acc.astype(np.float64) - exact) > 20)


def test_bound_is_higham_and_tight_enough():
    """The per-element bound holds for adversarial orders in float32 and is well below what
    float16 accumulation loses."""
    rng = np.random.default_rng(2)
    for k in (3, 64, 4096):
        a = V.representable(rng.uniform(-4, 4, (3, k)), "float16")
        b = V.representable(rng.uniform(-4, 4, (k, 2)), "float16")
        exact = ref.exact_matmul(a, b)
        s = ref.abs_matmul(a, b)
        g = ref.gamma(k, ref.U32) * s
        terms = a[:, :, None] * b[None, :, :]  # exact in float64
        for order in ("forward", "backward", "by-magnitude", "largest-first"):
            t = terms.copy()
            if order == "backward":
                t = t[:, ::-1]
            elif order != "forward":
                idx = np.argsort(np.abs(t), axis=1)
                t = np.take_along_axis(t, idx[:, ::-1] if order == "largest-first" else idx, axis=1)
            acc = np.zeros((3, 2), np.float32)
            for q in range(k):
                acc = (acc + t[:, q].astype(np.float32)).astype(np.float32)
            assert np.all(np.abs(acc.astype(np.float64) - exact) <= g)


# ============================================================================ kernels
def _is_float(dt) -> bool:
    return dt.kind == "f" or dt == BF16


def _acc_dtype(dt, mode):
    if mode == "float64":
        return np.float64
    if dt in (np.dtype(np.float16), BF16):
        return np.float16 if mode == "f16-accumulate" else np.float32
    return dt


def _reduce(terms, acc, order, block=8):
    """Sum ``terms`` (float64, exact products) over axis -2 in ``acc`` precision, in ``order``."""
    k = terms.shape[-2]
    t = terms.astype(np.float64)
    if order == "reverse":
        t = t[..., ::-1, :]
    if order == "pairwise":
        parts = [t[..., q, :].astype(acc) for q in range(k)]
        if not parts:
            return np.zeros(t.shape[:-2] + t.shape[-1:], acc)
        while len(parts) > 1:
            parts = [(parts[i] + parts[i + 1]).astype(acc) if i + 1 < len(parts) else parts[i]
                     for i in range(0, len(parts), 2)]
        return parts[0]
    if order == "blocked":
        blocks = [_reduce(t[..., q:q + block, :], acc, "forward") for q in range(0, k, block)]
        out = np.zeros(t.shape[:-2] + t.shape[-1:], acc)
        for p in blocks:
            out = (out + p).astype(acc)
        return out
    out = np.zeros(t.shape[:-2] + t.shape[-1:], acc)
    for q in range(k):
        if order == "fma":  # the product exact (float64), one rounding per step
            out = (out.astype(np.float64) + t[..., q, :]).astype(acc)
        else:
            out = (out + t[..., q, :].astype(acc)).astype(acc)
    return out


def matmul_kernel(mode="float32", order="forward", flaw=None):
    """A numpy MatMul: products exact, accumulated in ``mode``'s precision in ``order``, the
    result rounded to T; integers in int64/uint64 (or through double: flaw)."""

    def kernel(inputs, attrs, outputs, opset):
        a, b = inputs["A"], inputs["B"]
        dt = a.dtype
        if flaw == "no-1d-promotion":
            a2 = a.reshape(1, -1) if a.ndim == 1 else a
            b2 = b.reshape(-1, 1) if b.ndim == 1 else b
            return {outputs[0]: np.matmul(a2.astype(np.float64), b2.astype(np.float64)).astype(dt)}
        if a.ndim == 0 or b.ndim == 0:
            raise ValueError("rank 0")
        a2, b2, shape = ref.promote(a, b)
        if not _is_float(dt):
            if flaw == "int-through-double":
                y = np.matmul(a2.astype(np.float64), b2.astype(np.float64)).astype(dt)
            else:
                y = np.matmul(a2.astype(np.int64 if dt.kind == "i" else np.uint64),
                              b2.astype(np.int64 if dt.kind == "i" else np.uint64)).astype(dt)
            return {outputs[0]: y.reshape(shape)}
        acc = _acc_dtype(dt, flaw or mode)
        if order == "blas":
            y = np.matmul(a2.astype(acc), b2.astype(acc))
        else:
            with np.errstate(all="ignore"):
                terms = a2.astype(np.float64)[..., :, :, None] * b2.astype(np.float64)[..., None, :, :]
                # terms: [..., M, K, N]; rounded to the accumulation precision as a kernel's products are
                if flaw == "f16-accumulate":
                    terms = terms.astype(np.float16)
                y = _reduce(terms.astype(np.float64), acc, order)
        return {outputs[0]: np.asarray(y).astype(dt).reshape(shape)}

    return kernel


def _outer(dt, y_acc, c, alpha, beta, acc, mode):
    """``alpha * AB + beta * C`` from the accumulated ``AB``: in the accumulation precision and
    rounded once (``fused``), or as MatMul, Mul and Add nodes in T would (``composed``)."""
    if mode == "composed":
        ab = y_acc.astype(dt)
        y = (ab.astype(np.float64) * alpha).astype(dt)
        if c is not None:
            y = (y.astype(np.float64) + (c.astype(np.float64) * beta).astype(dt).astype(np.float64)).astype(dt)
        return y
    y = (y_acc.astype(acc) * np.asarray(alpha, dtype=acc)).astype(acc)
    if c is not None:
        y = (y + (c.astype(acc) * np.asarray(beta, dtype=acc)).astype(acc)).astype(acc)
    return y.astype(dt)


def gemm_kernel(mode="float32", order="forward", outer="fused", flaw=None):
    """A numpy Gemm: A' B' accumulated as :func:`matmul_kernel` does, then ``alpha * AB +
    beta * C`` (:func:`_outer`); integers exactly; ``flaw`` injects one error."""

    def kernel(inputs, attrs, outputs, opset):
        a, b, c = inputs["A"], inputs["B"], inputs.get("C")
        alpha, beta = float(attrs.get("alpha", 1.0)), float(attrs.get("beta", 1.0))
        if flaw == "ignore-beta":
            beta = 1.0
        ta, tb = attrs.get("transA", 0), attrs.get("transB", 0) and flaw != "ignore-transB"
        if a.ndim != 2 or b.ndim != 2:
            raise ValueError("Gemm: 2-D A and B")
        a2, b2 = (a.T if ta else a), (b.T if tb else b)
        if a2.shape[1] != b2.shape[0]:
            raise ValueError("Gemm: K")
        m, n = a2.shape[0], b2.shape[1]
        dt = a.dtype
        if c is not None and opset < 7 and tuple(c.shape) != (m, n):  # legacy: broadcast=1, C a suffix of (M, N)
            if not attrs.get("broadcast") or tuple(c.shape) not in ((), (n,)):
                raise ValueError("Gemm-1/6: C must be (M, N) without broadcast=1")
        if c is not None:
            c = np.resize(c, (m, n)) if flaw == "C-not-broadcast" else np.broadcast_to(c, (m, n))
        if not _is_float(dt):
            if flaw == "int-through-double":
                y = np.matmul(a2.astype(np.float64), b2.astype(np.float64)) * alpha
                y = y + (0 if c is None else c.astype(np.float64) * beta)
                return {outputs[0]: y.astype(dt)}
            ab = np.matmul(a2.astype(object), b2.astype(object))
            y = ab * int(alpha) + (0 if c is None else c.astype(object) * int(beta))
            return {outputs[0]: np.asarray(y, dtype=object).astype(dt)}
        acc = _acc_dtype(dt, flaw or mode)
        if outer == "alpha-folded":  # alpha into A (rounded to T), then the plain product plus beta C
            a2 = (a2.astype(np.float64) * alpha).astype(dt)
            alpha = 1.0
        if order == "blas":
            y_acc = np.matmul(a2.astype(acc), b2.astype(acc))
        else:
            terms = a2.astype(np.float64)[:, :, None] * b2.astype(np.float64)[None, :, :]
            if flaw == "f16-accumulate":
                terms = terms.astype(np.float16).astype(np.float64)
            y_acc = _reduce(terms, acc, order)
        with np.errstate(all="ignore"):
            return {outputs[0]: _outer(dt, y_acc, c, alpha, beta, acc, "composed" if outer == "composed" else "fused")}

    return kernel


def matmul_integer_kernel(flaw=None):
    """A numpy MatMulInteger in int32 (legitimate: no overflow is generated); ``flaw`` injects
    one error."""

    def kernel(inputs, attrs, outputs, opset):
        a, b = inputs["A"].astype(np.int32), inputs["B"].astype(np.int32)
        za, zb = inputs.get("a_zero_point"), inputs.get("b_zero_point")
        if za is not None and flaw != "ignore-a-zero-point":
            za = za.astype(np.int32)
            if za.ndim == 1 and za.size > 1 and a.ndim >= 2 and flaw != "zero-point-along-K":
                za = za.reshape(-1, 1)
            a = a - za
        if zb is not None and flaw != "ignore-b-zero-point":
            b = b - zb.astype(np.int32)
        acc = np.int16 if flaw == "int16-accumulate" else np.int32
        y = np.matmul(a.astype(acc), b.astype(acc))
        return {outputs[0]: y.astype(np.int32)}

    return kernel


def _lu_det(x, acc, flaw=None):
    """Determinant of one matrix by Gaussian elimination with partial pivoting in ``acc``."""
    a = np.array(x, dtype=acc)
    m = a.shape[-1]
    sign = acc(1)
    det = acc(1)
    for k in range(m):
        p = k + int(np.argmax(np.abs(a[k:, k])))
        if p != k:
            a[[k, p]] = a[[p, k]]
            if flaw != "drop-swap-sign":
                sign = -sign
        det = acc(det * a[k, k])
        if a[k, k] != 0:
            a[k + 1:, k:] = (a[k + 1:, k:] - np.outer(a[k + 1:, k] / a[k, k], a[k, k:]).astype(acc)).astype(acc)
    return acc(sign * det)


def _laplace_det(x):
    """Cofactor expansion along the first row, in x's dtype."""
    m = x.shape[-1]
    if m == 1:
        return x[0, 0]
    total = x.dtype.type(0)
    for j in range(m):
        minor = np.delete(x[1:], j, axis=1)
        total = x.dtype.type(total + (-1) ** j * x[0, j] * _laplace_det(minor))
    return total


def det_kernel(algo="lu", flaw=None):
    """A numpy Det: per matrix, ``lu`` (partial pivoting) or ``laplace`` in at least float32
    (float64 for double), ``numpy`` (numpy.linalg.det in float64); ``flaw`` injects one error."""

    def kernel(inputs, attrs, outputs, opset):
        x = inputs["X"]
        if x.ndim < 2 or x.shape[-1] != x.shape[-2]:
            raise ValueError("Det: [*, M, M]")
        dt = x.dtype
        acc = np.float64 if dt == np.float64 else np.float32
        if flaw == "f16-lu":
            acc = np.float16
        flat = x.reshape(-1, x.shape[-1], x.shape[-1])
        out = np.empty(flat.shape[0], dtype=np.float64)
        for i, mtx in enumerate(flat):
            if flaw == "diagonal-product":
                out[i] = np.prod(mtx.astype(np.float64).diagonal())
            elif algo == "numpy":
                out[i] = np.linalg.det(mtx.astype(np.float64))
            elif algo == "laplace":
                out[i] = _laplace_det(mtx.astype(acc))
            else:
                out[i] = _lu_det(mtx.astype(acc), acc, flaw)
        return {outputs[0]: out.reshape(x.shape[:-2]).astype(dt)}

    return kernel


def einsum_kernel(mode="float32", optimize=False, flaw=None):
    """A numpy Einsum: numpy.einsum in at least float32 (float64 for double; ``optimize``:
    pairwise contractions with intermediates in T, as numpy's optimized path and onnxruntime
    evaluate them), integers in int64; ``flaw`` injects one error."""

    def kernel(inputs, attrs, outputs, opset):
        ops = [inputs[k] for k in sorted(inputs, key=lambda n: int(n.rsplit("_", 1)[1]))]
        eq = attrs["equation"].replace(" ", "")
        terms, out = ref.parse_einsum(eq, [x.ndim for x in ops])
        if flaw == "ignore-repeated-index":  # a letter repeated in a term treated as two letters
            fresh = iter("QRSTUVWXYZ")
            terms = ["".join(c if c not in t[:i] else next(fresh) for i, c in enumerate(t)) for t in terms]
        if flaw == "implicit-order-of-appearance" and "->" not in eq:
            flat = "".join(terms)
            out = "".join(dict.fromkeys(c for c in flat if flat.count(c) == 1))
        spec = ",".join(terms) + "->" + out
        dt = ops[0].dtype
        if not _is_float(dt):
            y = np.einsum(spec, *[x.astype(np.int64 if dt.kind == "i" else np.uint64) for x in ops])
            return {outputs[0]: np.asarray(y).astype(dt)}
        if flaw == "f16-accumulate" and dt == np.float16:
            summed = "".join(sorted(set("".join(terms)) - set(out)))
            t = np.einsum(",".join(terms) + "->" + out + summed, *[x.astype(np.float64) for x in ops])
            t = t.astype(np.float16).reshape(t.shape[: len(out)] + (-1,))
            acc = np.zeros(t.shape[:-1], np.float16)
            for q in range(t.shape[-1]):
                acc = (acc + t[..., q]).astype(np.float16)
            return {outputs[0]: acc}
        if optimize:  # in T: every pairwise product rounded to T (numpy has no bfloat16 einsum: float32)
            y = np.einsum(spec, *[x.astype(np.float32) if dt == BF16 else x for x in ops], optimize=True)
            return {outputs[0]: np.asarray(y).astype(dt)}
        acc = np.float64 if (mode == "float64" or dt == np.float64) else np.float32
        with np.errstate(all="ignore"):
            y = np.einsum(spec, *[x.astype(acc) for x in ops])
        return {outputs[0]: np.asarray(y).astype(dt)}

    return kernel


def _backend(kernels, name, check=True):
    return KernelBackend(kernels, name=name, check=check)


LEGIT = [("float32", "forward"), ("float32", "reverse"), ("float32", "pairwise"), ("float32", "blocked"),
         ("float32", "fma"), ("float32", "blas"), ("float64", "forward")]


@pytest.mark.parametrize("mode,order", LEGIT)
def test_legitimate_matmul_kernels_pass_everything(mode, order, value_cases):
    cases = [c for c in value_cases if c.op == "MatMul"]
    results = run_cases(cases, _backend({"MatMul": matmul_kernel(mode, order)}, f"{mode}-{order}"))
    bad = [(c.id, r.outcome, r.message[:200]) for c, r in zip(cases, results) if r.outcome != "pass"]
    assert not bad, bad[:5]


GEMM_LEGIT = LEGIT + [("float32", "forward", "composed"), ("float32", "pairwise", "alpha-folded"),
                      ("float32", "blas", "composed")]


@pytest.mark.parametrize("mode,order,outer", [x if len(x) == 3 else x + ("fused",) for x in GEMM_LEGIT])
def test_legitimate_gemm_kernels_pass_everything(mode, order, outer, value_cases):
    cases = [c for c in value_cases if c.op == "Gemm"]
    results = run_cases(cases, _backend({"Gemm": gemm_kernel(mode, order, outer)}, f"{mode}-{order}-{outer}"))
    bad = [(c.id, r.outcome, r.message[:200]) for c, r in zip(cases, results) if r.outcome != "pass"]
    assert not bad, bad[:5]


def test_error_cases_are_rejected_by_the_checker(suite):
    cases = [c for c in suite if c.expect_error and c.op in OPS]
    assert {c.tags["error"] for c in cases if c.op == "MatMul"} == {"inner-mismatch", "1d-mismatch", "batch-mismatch",
                                                                    "scalar"}
    results = run_cases(cases, _backend({"MatMul": matmul_kernel(), "Gemm": gemm_kernel(),
                                         "MatMulInteger": matmul_integer_kernel(), "Det": det_kernel(),
                                         "Einsum": einsum_kernel()}, "legit"))
    assert all(r.outcome == "pass" for r in results), [(c.id, r.message[:100]) for c, r in zip(cases, results)
                                                        if r.outcome != "pass"]


WRONG_MATMUL = {
    # flaw: (filter on value cases, at least this many fails)
    "f16-accumulate": (lambda c: c.tags["dtype"] == "float16", 3),
    "no-1d-promotion": (lambda c: c.tags["shape"].startswith(("1d", "long-K/1d")), 3),
    "int-through-double": (lambda c: c.tags["dtype"] in ("int64", "uint64"), 2),
}


WRONG_GEMM = {
    "ignore-transB": (lambda c: c.attributes.get("transB") == 1, 1),
    "ignore-beta": (lambda c: c.attributes.get("beta", 1.0) != 1.0, 3),
    "C-not-broadcast": (lambda c: c.tags["shape"].endswith("C=column"), 1),
    "f16-accumulate": (lambda c: c.tags["dtype"] == "float16", 2),
    "int-through-double": (lambda c: c.tags["dtype"] in ("int64", "uint64"), 2),
}


@pytest.mark.parametrize("flaw", sorted(WRONG_GEMM))
def test_wrong_gemm_kernels_are_caught(flaw, value_cases):
    keep, least = WRONG_GEMM[flaw]
    cases = [c for c in value_cases if c.op == "Gemm" and keep(c)]
    assert cases
    results = run_cases(cases, _backend({"Gemm": gemm_kernel(flaw=flaw)}, flaw, check=False))
    fails = [c for c, r in zip(cases, results) if r.outcome == "fail"]
    assert len(fails) >= least, Counter(r.outcome for r in results)
    if flaw == "f16-accumulate":
        longk = [c for c in cases if "long-K" in c.tags["shape"] and c.tags["numerics"] == "positive"]
        assert longk and all(c in fails for c in longk)


def test_legitimate_matmul_integer_kernel_passes_everything(value_cases):
    cases = [c for c in value_cases if c.op == "MatMulInteger"]
    results = run_cases(cases, _backend({"MatMulInteger": matmul_integer_kernel()}, "int32"))
    bad = [(c.id, r.outcome, r.message[:200]) for c, r in zip(cases, results) if r.outcome != "pass"]
    assert not bad, bad[:5]


WRONG_MMI = {
    "ignore-b-zero-point": lambda c: "b_zero_point" in c.tags["optional_inputs"],
    "ignore-a-zero-point": lambda c: "a_zero_point" in c.tags["optional_inputs"],
    "zero-point-along-K": lambda c: "a_zero_point" in c.tags["optional_inputs"] and "per-row" in c.tags["shape"],
    "int16-accumulate": lambda c: True,
}


@pytest.mark.parametrize("flaw", sorted(WRONG_MMI))
def test_wrong_matmul_integer_kernels_are_caught(flaw, value_cases):
    cases = [c for c in value_cases if c.op == "MatMulInteger" and WRONG_MMI[flaw](c)]
    assert cases
    results = run_cases(cases, _backend({"MatMulInteger": matmul_integer_kernel(flaw)}, flaw, check=False))
    n = Counter(r.outcome for r in results)
    assert n["fail"] >= 2, n
    if flaw == "zero-point-along-K":  # a wrong value (not only a broadcast error) where M == K
        assert any(r.outcome == "fail" and c.tags["shape"].startswith("M=K") for c, r in zip(cases, results))


@pytest.mark.parametrize("algo", ["lu", "laplace", "numpy"])
def test_legitimate_det_kernels_pass_everything(algo, value_cases):
    cases = [c for c in value_cases if c.op == "Det"]
    results = run_cases(cases, _backend({"Det": det_kernel(algo)}, algo))
    bad = [(c.id, r.outcome, r.message[:200]) for c, r in zip(cases, results) if r.outcome != "pass"]
    assert not bad, bad[:5]


WRONG_DET = {
    "drop-swap-sign": lambda c: True,
    "diagonal-product": lambda c: True,
    "f16-lu": lambda c: c.tags["dtype"] == "float16",
}


@pytest.mark.parametrize("flaw", sorted(WRONG_DET))
def test_wrong_det_kernels_are_caught(flaw, value_cases):
    cases = [c for c in value_cases if c.op == "Det" and WRONG_DET[flaw](c)]
    assert cases
    results = run_cases(cases, _backend({"Det": det_kernel(flaw=flaw)}, flaw, check=False))
    n = Counter(r.outcome for r in results)
    assert n["fail"] >= 2, n


@pytest.mark.parametrize("mode,optimize", [("float32", False), ("float64", False), ("float32", True)])
def test_legitimate_einsum_kernels_pass_everything(mode, optimize, value_cases):
    cases = [c for c in value_cases if c.op == "Einsum"]
    results = run_cases(cases, _backend({"Einsum": einsum_kernel(mode, optimize)}, f"{mode}-{optimize}"))
    bad = [(c.id, r.outcome, r.message[:200]) for c, r in zip(cases, results) if r.outcome != "pass"]
    assert not bad, bad[:5]


WRONG_EINSUM = {
    "ignore-repeated-index": lambda c: any(len(set(t)) < len(t) for t in
                                           c.attributes["equation"].split("->")[0].replace("...", "").split(",")),
    "implicit-order-of-appearance": lambda c: "->" not in c.attributes["equation"],
    "f16-accumulate": lambda c: c.tags["dtype"] == "float16",
}


@pytest.mark.parametrize("flaw", sorted(WRONG_EINSUM))
def test_wrong_einsum_kernels_are_caught(flaw, value_cases):
    cases = [c for c in value_cases if c.op == "Einsum" and WRONG_EINSUM[flaw](c)]
    assert cases
    results = run_cases(cases, _backend({"Einsum": einsum_kernel(flaw=flaw)}, flaw, check=False))
    fails = [c for c, r in zip(cases, results) if r.outcome == "fail"]
    assert len(fails) >= 2, Counter(r.outcome for r in results)
    if flaw == "f16-accumulate":  # the long dot products of positive terms
        longd = [c for c in cases if c.tags["shape"] == "long-dot"]
        assert longd and all(c in fails for c in longd)


@pytest.mark.parametrize("flaw", sorted(WRONG_MATMUL))
def test_wrong_matmul_kernels_are_caught(flaw, value_cases):
    keep, least = WRONG_MATMUL[flaw]
    cases = [c for c in value_cases if c.op == "MatMul" and keep(c)]
    assert cases
    results = run_cases(cases, _backend({"MatMul": matmul_kernel(flaw=flaw)}, flaw, check=False))
    fails = [c for c, r in zip(cases, results) if r.outcome == "fail"]
    assert len(fails) >= least, Counter(r.outcome for r in results)
    if flaw == "f16-accumulate":  # every long-K float16 case with positive terms catches it
        longk = [c for c in cases if c.tags["shape"].startswith("long-K") and c.tags["numerics"] == "positive"]
        assert longk and all(c in fails for c in longk)


# ============================================================================ onnx.reference
def _reference_disagreement(case, res) -> str | None:
    """Why onnx.reference (onnx 1.23.2) and the suite disagree; None if unknown.  In each the
    suite is right:

    * ``matmul-scalar``: onnx.reference's MatMul multiplies a rank-0 operand (``np.dot``)
      where numpy.matmul, the text's model, raises; onnx's own checker rejects the model.
    * ``gemm-1-missing``: onnx.reference has no Gemm-1 (``unsupported``).
    * ``mmi-per-row-zero-point``: MatMulInteger subtracts an ``[M]`` a_zero_point of a 2-D A
      with numpy broadcasting, i.e. along K (one per *column* of A): a broadcast error when
      M != K, wrong values when M == K.  The text: "If the input is 2D of shape [M, K] then
      zero point tensor may be an M element vector [zp_1, zp_2, ..., zp_M]" (per row).
    * ``mmi-no-type-check``: a zero point of another type than its matrix is accepted.
    * ``einsum-no-validation``: Einsum accepts ellipses of different lengths (numpy
      broadcasts them); the text: "every occurrence of ellipsis in the equation must represent
      the same number of dimensions", and onnx's shape inference rejects the model.
    * ``det-float16``: Det raises for float16 (numpy.linalg.det does not take float16).
    * ``det-bfloat16-dtype``: Det-22 returns float64 for bfloat16 input (the result of
      numpy.linalg.det on the upcast input is not cast back to T).
    * ``gemm6-beta-ignored``: Gemm-6 with ``broadcast=0`` computes ``alpha A'B'`` and adds C
      *unscaled* (``res + c``: beta is dropped), and returns float32 for float16 inputs (the
      sum is not cast back): wrong values for every beta != 1, a wrong dtype for float16.
    * ``gemm-int-through-double``: integer Gemm computes ``np.dot(a, b) * alpha`` with a
      float alpha, i.e. in float64: int64/uint64 results beyond 2^53 lose their low bits.
    * ``gemm-no-validation``: Gemm accepts a 3-D A (``np.dot`` contracts it) and a legacy C
      of the wrong shape without ``broadcast=1``; onnx's checker or the text rejects them.
    """
    err = case.tags.get("error")
    if case.op == "MatMul" and case.expect_error and err == "scalar":
        return "matmul-scalar"
    if case.op == "MatMulInteger":
        if case.expect_error:
            return "mmi-no-type-check" if err in ("a-zero-point-type", "b-zero-point-type") else None
        if "a_zero_point" in case.tags["optional_inputs"] and _feeds(case)["a_zero_point"].size > 1 and \
                _feeds(case)["a_zero_point"].ndim == 1:
            return "mmi-per-row-zero-point"
        return None
    if case.op == "Einsum":
        return "einsum-no-validation" if case.expect_error and err == "ellipsis-lengths" else None
    if case.op == "Det" and not case.expect_error:
        if case.tags["dtype"] == "float16" and res.outcome == "error":
            return "det-float16"
        if case.tags["dtype"] == "bfloat16" and "dtype" in res.message:
            return "det-bfloat16-dtype"
        return None
    if case.op != "Gemm":
        return None
    if case.since_version == 1 and res.outcome == "unsupported":
        return "gemm-1-missing"
    if case.expect_error:
        return "gemm-no-validation" if err in ("A-rank3", "legacy-C-not-broadcast", "legacy-shape") else None
    if case.since_version == 6 and not case.attributes.get("broadcast") and (
            case.attributes.get("beta", 1.0) != 1.0 or case.tags["dtype"] == "float16"):
        return "gemm6-beta-ignored"
    if case.tags["dtype"] in ("int64", "uint64"):
        return "gemm-int-through-double"
    return None


def test_agreement_with_onnx_reference(suite):
    results = run_cases(suite, resolve_backend("onnx-reference"))
    why, unexplained = sort_findings(suite, results, _reference_disagreement)
    assert not unexplained, unexplained[:5]
    assert set(why) == {"matmul-scalar", "gemm-1-missing", "gemm6-beta-ignored", "gemm-int-through-double",
                        "gemm-no-validation", "mmi-per-row-zero-point", "mmi-no-type-check", "det-float16",
                        "det-bfloat16-dtype", "einsum-no-validation"}, why


# ============================================================================ coverage
def test_coverage_every_combination_of_every_version(suite):
    cov = compute_coverage(suite)
    for op in OPS:
        versions = cov["ops"][op]["versions"]
        spec = {s.since_version for s in onnx.defs.get_all_schemas_with_history() if s.name == op and s.domain == ""}
        assert set(map(int, versions)) == spec
        for v, e in versions.items():
            assert not e["missing"], (op, v, e["missing"][:3])
    counts = Counter(c.op for c in suite)
    assert all(30 <= n <= 400 for n in counts.values()), counts


def test_gemm_trap_patterns(value_cases):
    gm = [c for c in value_cases if c.op == "Gemm"]
    for v in (7, 9, 11, 13):  # every C kind, every (transA, transB), C absent from 11
        mine = [c for c in gm if c.since_version == v]
        kinds = {c.tags["shape"].split("/C=")[-1] for c in mine if "/C=" in c.tags["shape"]
                 and c.tags.get("optional_inputs") != "none"}
        assert kinds >= {"MN", "row", "row-2d", "column", "scalar", "one", "1x1"}, (v, kinds)
        tr = {(c.attributes.get("transA", 0), c.attributes.get("transB", 0)) for c in mine}
        assert tr == {(0, 0), (0, 1), (1, 0), (1, 1)}
        if v >= 11:
            assert any(c.tags.get("optional_inputs") == "none" for c in mine)
        params = {c.tags["params"] for c in mine}
        assert params >= {"default", "explicit-default", "scaled", "integral", "beta=0", "alpha=0", "negative"}, params
    legacy = {(c.since_version, c.tags["shape"]) for c in gm if c.since_version < 7}
    assert {(v, "legacy/nn/C=row") for v in (1, 6)} <= legacy and {(v, "legacy/tn/C=scalar") for v in (1, 6)} <= legacy
    for c in gm:  # integer cases only with non-negative integral alpha/beta; special never with alpha 0
        a, b = c.attributes.get("alpha", 1.0), c.attributes.get("beta", 1.0)
        if V.kind(c.tags["dtype"]) == V.INT:
            assert a in (0.0, 1.0, 2.0, 3.0) and b in (0.0, 1.0, 2.0, 3.0), c.id
        if c.tags["numerics"] == "special":
            assert a != 0.0, c.id
    longk = {(c.since_version, c.tags["dtype"]) for c in gm if "long-K" in c.tags["shape"]
             and c.tags["numerics"] == "positive"}
    assert longk >= {(v, "float16") for v in (1, 6, 7, 9, 11, 13)} | {(13, "bfloat16")}, longk


def test_matmul_integer_coverage(value_cases):
    mmi = [c for c in value_cases if c.op == "MatMulInteger"]
    for combo in {c.tags["types"] for c in mmi}:  # every zero-point state per type combination
        mine = [c for c in mmi if c.tags["types"] == combo]
        assert {c.tags["optional_inputs"] for c in mine} == {"none", "a_zero_point", "b_zero_point",
                                                            "a_zero_point,b_zero_point"}
        per_row = [c for c in mine if "a_zero_point" in c.tags["optional_inputs"] and
                   _feeds(c)["a_zero_point"].ndim >= 1 and _feeds(c)["a_zero_point"].size > 1]
        per_col = [c for c in mine if "b_zero_point" in c.tags["optional_inputs"] and
                   _feeds(c)["b_zero_point"].size > 1]
        assert per_row and per_col, combo
    longk = [c for c in mmi if c.tags["shape"] == "long-K"]
    assert longk and all(_feeds(c)["A"].shape[-1] >= 1024 for c in longk)


def test_einsum_table_coverage(value_cases):
    es = [c for c in value_cases if c.op == "Einsum"]
    names = {sh.name for sh in linalg.EINSUM_TABLE}
    for v in (12, 28):
        assert {c.tags["shape"] for c in es if c.since_version == v} == names
    for t in ("float16", "float", "double", "bfloat16"):  # every equation in every float type
        vs = (28,) if t == "bfloat16" else (12, 28)
        for v in vs:
            assert {c.tags["shape"] for c in es if c.since_version == v and c.tags["dtype"] == t} == names, (v, t)
    longd = {(c.since_version, c.tags["dtype"]) for c in es if c.tags["shape"] == "long-dot"
             and c.tags["numerics"] == "positive" and _feeds(c)["Inputs_0"].size >= 1024}
    assert longd >= {(12, "float16"), (28, "float16"), (28, "bfloat16")}
    # infinities only where the contraction path cannot change the result's class
    inf_seen = set()
    for c in es:
        f = _feeds(c)
        if any(np.isinf(np.asarray(x, dtype=np.float64)).any() for x in f.values() if V.kind(c.tags["dtype"]) == V.FLOAT):
            n = len(f)
            assert n <= 2 and c.tags["shape"] not in ("bilinear", "chain-3"), c.id
            inf_seen.add(c.tags["shape"])
    assert {"matmul", "transpose", "trace"} & inf_seen
    # no integer overflow: the einsum of magnitudes stays inside the type
    n_int = 0
    for c in es:
        if V.kind(c.tags["dtype"]) == V.INT:
            f = _feeds(c)
            ops = [np.abs(f[f"Inputs_{i}"].astype(object)) for i in range(len(f))]
            p, n = ref.einsum_terms(c.attributes["equation"], [o.shape for o in ops])
            if p == 1 and n == 1:
                continue  # data movement: the type's extremes themselves
            mag = ref.einsum(c.attributes["equation"], *ops)
            assert all(int(m) <= int(V.iinfo(c.tags["dtype"]).max) for m in np.ravel(mag)), c.id
            n_int += 1
    assert n_int >= 40


def test_matmul_trap_patterns(value_cases):
    mm = [c for c in value_cases if c.op == "MatMul"]
    # long K (1024-4096) in every 16-bit type of every version, with positive terms
    longk = {(c.since_version, c.tags["dtype"]) for c in mm if c.tags["shape"].startswith("long-K")
             and c.tags["numerics"] == "positive" and _feeds(c)["A"].shape[-1] >= 1024}
    assert longk >= {(1, "float16"), (9, "float16"), (13, "float16"), (13, "bfloat16")}, longk
    # 1-D promotion on both sides, rank-0 results, batch broadcasting, zero-size K with zeros
    shapes = {c.tags["shape"]: c for c in mm}
    assert _feeds(shapes["1d-1d"])["A"].ndim == 1 and shapes["1d-1d"].datasets[0].outputs["Y"].ndim == 0
    zk = [c for c in mm if c.tags["shape"] == "zero-K"]
    assert zk and all(np.all(np.asarray(c.datasets[0].outputs["Y"]).astype(np.float64) == 0) for c in zk)
    # special: NaN from inf * 0 and from opposite infinities, +-inf and finite outputs
    sp = [c for c in mm if c.tags["numerics"] == "special" and c.datasets[0].outputs["Y"].size]
    y = np.concatenate([np.asarray(c.datasets[0].outputs["Y"], dtype=np.float64).ravel() for c in sp])
    assert np.isnan(y).any() and np.isinf(y).any() and np.isfinite(y).any()
    # int-extremes: the type's extremes reach the output (int64 beyond 2^53)
    ext = [c for c in mm if c.tags["numerics"] == "int-extremes" and c.tags["dtype"] == "int64"]
    vals = {int(v) for c in ext for v in np.asarray(c.datasets[0].outputs["Y"]).ravel()}
    assert 2**63 - 1 in vals and -(2**63) in vals
    # no integer partial sum can overflow, in any order: the positive terms sum to at most
    # the type's max and the negative ones to at least its min
    n_int = 0
    for c in mm:
        if V.kind(c.tags["dtype"]) == V.INT:
            info = V.iinfo(c.tags["dtype"])
            f = _feeds(c)
            a2, b2, _ = ref.promote(f["A"].astype(object), f["B"].astype(object))
            terms = a2[..., :, :, None] * b2[..., None, :, :]
            pos = np.where(terms > 0, terms, 0).sum(axis=-2)
            neg = np.where(terms < 0, terms, 0).sum(axis=-2)
            assert all(int(v) <= int(info.max) for v in np.ravel(pos)), c.id
            assert all(int(v) >= int(info.min) for v in np.ravel(neg)), c.id
            n_int += 1
    assert n_int >= 100
