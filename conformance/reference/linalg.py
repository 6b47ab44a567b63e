"""Exact oracles and accumulation bounds of the linear-algebra operators (MatMul, Gemm,
MatMulInteger, Einsum, Det).

**Exact values.**  Every finite floating input is an integer times a power of two, so a
matrix product, an Einsum contraction and a determinant of such inputs are exact rationals:
this module computes them with Python integers (:func:`scaled_ints`: a tensor as integers
times one power of two; numpy's ``matmul``/``einsum`` on object arrays do the integer
arithmetic) and rounds the result once to float64 (``int / int`` true division is correctly
rounded in CPython).  The engine then rounds that float64 to the output type.  Integer
inputs (object arrays of Python ints) go through the same functions unscaled.

**IEEE special values** (MatMul, Gemm, Einsum): an output element is NaN if one of its terms
is NaN (a NaN factor, or ``0 * inf``) or if its terms hold infinities of both signs; else
``+-inf`` if a term is infinite; else the exact finite sum.  Every summation order gives that
result (NaN and infinities are absorbing and order-free), so it is a defined value.

**Accumulation bounds** (Higham, *Accuracy and Stability of Numerical Algorithms*, 2nd ed.,
§3.1, eq. (3.5) and Lemma 3.1): a dot product of ``K`` terms computed in any order, blocked
or not, with or without fused multiply-add, in a precision of unit roundoff ``u`` satisfies
``|fl(x.y) - x.y| <= gamma_K(u) * sum_k |x_k y_k|``, ``gamma_k = k u / (1 - k u)``.  A
product that underflows adds at most half the precision's smallest subnormal.  The output is
then rounded to ``T``; comparing it with the exact value rounded to ``T`` adds at most
``u_T (|c| + |e|)`` plus the subnormal halves (:func:`final_tolerance`).
"""

from __future__ import annotations

import itertools
import math
from fractions import Fraction

import numpy as np

#: Unit roundoff and smallest subnormal of the accumulation precisions.
U32, S32 = 2.0**-24, 2.0**-149
U64, S64 = 2.0**-53, 2.0**-1074
#: Accumulation precision mandated per floating type: at least float32 for the 16-bit types
#: (numpy.matmul, which the MatMul text names as the model, accumulates float16 in float32);
#: the type itself for float and double.
ACC = {"float16": (U32, S32), "bfloat16": (U32, S32), "float": (U32, S32), "double": (U64, S64)}


def gamma(k: float, u: float) -> float:
    """Higham's ``gamma_k = k u / (1 - k u)`` (0 for ``k <= 0``; inf when ``k u >= 1``)."""
    if k <= 0:
        return 0.0
    return k * u / (1.0 - k * u) if k * u < 1 else math.inf


# ----------------------------------------------------------------------------- exact arithmetic
def scaled_ints(x) -> tuple[np.ndarray, int]:
    """A finite tensor as ``(n, E)`` with ``x == n * 2**E`` exactly: ``n`` an object array of
    Python ints of ``x``'s shape, ``E`` one exponent for the whole tensor.  Integer inputs
    (object arrays of ints, or numpy integer arrays) are returned unscaled (``E = 0``).

    Raises:
        ValueError: ``x`` has a NaN or an infinity.
    """
    x = np.asarray(x)
    if x.dtype == object or x.dtype.kind in "iub":
        out = np.empty(x.shape, dtype=object)
        out.ravel()[:] = [int(v) for v in x.ravel()]
        return out, 0
    x = x.astype(np.float64)
    if not np.isfinite(x).all():
        raise ValueError("scaled_ints needs finite values")
    m, e = np.frexp(x)  # x = m * 2**e, 0.5 <= |m| < 1
    mant = (m * 2.0**53).astype(np.int64)  # exact: 53-bit integers
    e = e.astype(np.int64) - 53
    nz = mant != 0
    emin = int(e[nz].min()) if nz.any() else 0
    out = np.empty(x.shape, dtype=object)
    out.ravel()[:] = [int(a) << int(b - emin) if a else 0 for a, b in zip(mant.ravel().tolist(), e.ravel().tolist())]
    return out, emin


def to_float(n, e: int = 0) -> float:
    """``n * 2**e`` (``n`` an int or a Fraction) correctly rounded to float64 (+-inf beyond)."""
    q = Fraction(n) * (Fraction(2) ** e)
    try:
        return float(q)
    except OverflowError:
        return math.inf if q > 0 else -math.inf


def floats_of(n: np.ndarray, e: int = 0) -> np.ndarray:
    """An object array of exact ints (or Fractions) times ``2**e``, rounded to float64."""
    n = np.asarray(n, dtype=object)
    out = np.empty(n.shape, dtype=np.float64)
    out.ravel()[:] = [to_float(v, e) for v in n.ravel()]
    return out


def promote(a: np.ndarray, b: np.ndarray) -> tuple[np.ndarray, np.ndarray, tuple[int, ...]]:
    """numpy.matmul's operand rules: a 1-D A becomes ``[1, K]``, a 1-D B ``[K, 1]``, the batch
    dimensions broadcast (multidirectionally).  Returns the two operands broadcast to a common
    batch shape and the shape of the final result (the prepended/appended 1 removed).

    Raises:
        ValueError: a rank-0 operand, mismatched inner dimensions or batch shapes that do
            not broadcast.
    """
    a, b = np.asarray(a), np.asarray(b)
    if a.ndim == 0 or b.ndim == 0:
        raise ValueError("matmul: rank-0 operand")
    a2 = a[None, :] if a.ndim == 1 else a
    b2 = b[:, None] if b.ndim == 1 else b
    if a2.shape[-1] != b2.shape[-2]:
        raise ValueError(f"matmul: inner dimensions {a2.shape} x {b2.shape}")
    batch = np.broadcast_shapes(a2.shape[:-2], b2.shape[:-2])
    a2 = np.broadcast_to(a2, batch + a2.shape[-2:])
    b2 = np.broadcast_to(b2, batch + b2.shape[-2:])
    out = batch + ((a2.shape[-2],) if a.ndim > 1 else ()) + ((b2.shape[-1],) if b.ndim > 1 else ())
    return a2, b2, out


def _term_classes(a2: np.ndarray, b2: np.ndarray):
    """Per output element of ``a2 @ b2`` (both ``[..., M, K]``/``[..., K, N]`` float64): whether
    a term is NaN, a term is +inf, a term is -inf (IEEE products ``a_mk * b_kn``)."""
    a = a2[..., :, :, None]
    b = b2[..., None, :, :]
    nan = np.isnan(a) | np.isnan(b) | (np.isinf(a) & (b == 0)) | ((a == 0) & np.isinf(b))
    inf = (np.isinf(a) | np.isinf(b)) & ~nan
    neg = np.signbit(a) != np.signbit(b)
    return nan.any(axis=-2), (inf & ~neg).any(axis=-2), (inf & neg).any(axis=-2)


def _finite(x: np.ndarray) -> np.ndarray:
    """``x`` with NaN and infinities replaced by 0 (their terms are classified separately)."""
    return np.where(np.isfinite(x), x, 0.0)


def exact_matmul(a, b) -> np.ndarray:
    """numpy.matmul of exact values, exactly: float64 inputs give the correctly rounded
    float64 of the exact product with IEEE special values (module docstring); object arrays of
    Python ints give Python ints.  Shapes as :func:`promote`.

    Raises:
        ValueError: invalid shapes (:func:`promote`).
    """
    a2, b2, out_shape = promote(a, b)
    if a2.dtype == object or b2.dtype == object:
        ia, _ = scaled_ints(a2)
        ib, _ = scaled_ints(b2)
        return np.asarray(np.matmul(ia, ib), dtype=object).reshape(out_shape)
    a2, b2 = a2.astype(np.float64), b2.astype(np.float64)
    ia, ea = scaled_ints(_finite(a2))
    ib, eb = scaled_ints(_finite(b2))
    y = floats_of(np.matmul(ia, ib), ea + eb)
    nan, pinf, ninf = _term_classes(a2, b2)
    y = np.where(pinf, math.inf, y)
    y = np.where(ninf, -math.inf, y)
    y = np.where(nan | (pinf & ninf), math.nan, y)
    return y.reshape(out_shape)


def abs_matmul(a, b) -> np.ndarray:
    """``|A| @ |B|`` (the per-element sum of absolute terms, shapes as :func:`promote`) in
    float64, rounded up by a relative ``4 K u64`` so it is never below the exact value;
    non-finite terms count as 0."""
    a2, b2, out_shape = promote(a, b)
    a2 = np.abs(_finite(np.asarray(a2, dtype=np.float64)))
    b2 = np.abs(_finite(np.asarray(b2, dtype=np.float64)))
    k = a2.shape[-1]
    with np.errstate(over="ignore"):
        s = np.matmul(a2, b2) * (1.0 + 4.0 * (k + 1) * U64)
    return s.reshape(out_shape)


def gemm(a, b, c, alpha: float, beta: float, trans_a: int, trans_b: int):
    """``alpha * A' B' + beta * C`` exactly (C absent: 0; C broadcast unidirectionally to
    ``[M, N]``), A' and B' transposed per ``transA``/``transB``.  Floats: the correctly rounded
    float64 with IEEE special values; ints: Python ints (``alpha``/``beta`` integral).

    Raises:
        ValueError: A or B not 2-D, mismatched K, C not broadcastable to ``[M, N]``.
    """
    a, b = np.asarray(a), np.asarray(b)
    if a.ndim != 2 or b.ndim != 2:
        raise ValueError("Gemm: A and B must be 2-D")
    a = a.T if trans_a else a
    b = b.T if trans_b else b
    m, n = a.shape[0], b.shape[1]
    cc = None if c is None else np.broadcast_to(np.asarray(c), (m, n))
    if a.dtype == object:
        ab = exact_matmul(a, b)
        y = np.empty((m, n), dtype=object)
        ab_s = ab.ravel().tolist()
        c_s = [0] * (m * n) if cc is None else cc.ravel().tolist()
        fa, fb = Fraction(alpha), Fraction(beta)
        vals = []
        for p, q in zip(ab_s, c_s):
            v = fa * p + fb * q
            if v.denominator != 1:
                raise ValueError("Gemm: non-integral result for an integer type")
            vals.append(int(v))
        y.ravel()[:] = vals
        return y
    a, b = a.astype(np.float64), b.astype(np.float64)
    ia, ea = scaled_ints(_finite(a))
    ib, eb = scaled_ints(_finite(b))
    ab = np.matmul(ia, ib)
    fa, fb = Fraction(alpha), Fraction(beta)
    scale = Fraction(2) ** (ea + eb)
    cf = np.zeros((m, n)) if cc is None else cc.astype(np.float64)
    out = np.empty((m, n), dtype=np.float64)
    flat_c = cf.ravel().tolist()
    out.ravel()[:] = [to_float(fa * p * scale + (fb * Fraction(q) if math.isfinite(q) else 0))
                      for p, q in zip(ab.ravel().tolist(), flat_c)]
    # special values: IEEE arithmetic on the classes (alpha * (+-inf / NaN) + beta * C)
    nan, pinf, ninf = _term_classes(a, b)
    special = np.where(nan | (pinf & ninf), math.nan, np.where(pinf, math.inf, np.where(ninf, -math.inf, 0.0)))
    with np.errstate(invalid="ignore"):
        ieee = alpha * special + beta * cf
        bad = ~np.isfinite(special) | ~np.isfinite(cf)
        out = np.where(bad, ieee, out)
    return out


def gemm_abs(a, b, c, alpha: float, beta: float, trans_a: int, trans_b: int) -> np.ndarray:
    """``|alpha| |A'| |B'| + |beta| |C|`` (float64, rounded up; non-finite terms count as 0)."""
    a, b = np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64)
    a = a.T if trans_a else a
    b = b.T if trans_b else b
    m, n = a.shape[0], b.shape[1]
    s = abs(alpha) * abs_matmul(a, b)
    if c is not None:
        s = s + abs(beta) * np.abs(_finite(np.broadcast_to(np.asarray(c, dtype=np.float64), (m, n))))
    return s * (1.0 + 4 * U64)


def matmul_integer(a, b, a_zero_point=None, b_zero_point=None) -> np.ndarray:
    """MatMulInteger: ``(A - a_zero_point) @ (B - b_zero_point)`` in exact integers (Python
    ints), numpy.matmul shapes.  ``a_zero_point``: a scalar (or 1 element), an ``[M]`` vector
    for a 2-D A (one per row: reshaped to ``[M, 1]``, the text's "per row quantization"), or
    a tensor of A's rank ending in 1 (``[D1, D2, M, 1]``); ``b_zero_point``: a scalar, ``[N]``
    or ``[D1, D2, 1, N]`` (per column).

    Raises:
        ValueError: shapes that do not fit (:func:`promote`, numpy broadcasting).
    """
    ia, _ = scaled_ints(a)
    ib, _ = scaled_ints(b)
    if a_zero_point is not None:
        za, _ = scaled_ints(a_zero_point)
        if za.ndim == 1 and za.size > 1 and ia.ndim >= 2:  # [M]: one per row of A
            za = za.reshape(za.shape[0], 1)
        ia = ia - za
    if b_zero_point is not None:
        zb, _ = scaled_ints(b_zero_point)
        ib = ib - zb
    return exact_matmul(ia, ib)


# ----------------------------------------------------------------------------- Einsum
def parse_einsum(equation: str, ranks: list[int]) -> tuple[list[str], str]:
    """The explicit form of an Einsum equation: ``(input terms, output term)`` with spaces
    removed and every ellipsis replaced by the same capital-free letters, so that the result
    is an equation numpy.einsum evaluates exactly as the ONNX text defines it (implicit output:
    the letters that appear exactly once, in increasing ASCII order, after the ellipsis
    dimensions).  ``ranks``: the operands' ranks.

    Raises:
        ValueError: the number of terms differs from the operands, a term's length does not
            match its operand's rank, ellipses of different lengths, more than one ellipsis in
            a term, letters other than a-z/A-Z.
    """
    eq = equation.replace(" ", "")
    lhs, arrow, rhs = eq.partition("->")
    terms = lhs.split(",")
    if len(terms) != len(ranks):
        raise ValueError(f"Einsum: {len(terms)} terms for {len(ranks)} operands")
    used = set(c for c in eq if c.isalpha())
    for c in eq.replace("...", "").replace(",", "").replace("->", ""):
        if not (c.isascii() and c.isalpha()):
            raise ValueError(f"Einsum: invalid character {c!r}")
    ell_len = None
    for t, r in zip(terms, ranks):
        if t.count("...") > 1:
            raise ValueError("Einsum: more than one ellipsis in a term")
        if "..." in t:
            n = r - (len(t) - 3)
            if n < 0 or (ell_len is not None and n != ell_len):
                raise ValueError("Einsum: ellipses of different lengths")
            ell_len = n
        elif len(t) != r:
            raise ValueError(f"Einsum: term {t!r} for an operand of rank {r}")
    free = [c for c in "".join(chr(x) for x in range(ord("a"), ord("z") + 1)) if c not in used]
    ell = "".join(free[: ell_len or 0])
    terms = [t.replace("...", ell) for t in terms]
    if arrow:
        if rhs.count("...") > 1:
            raise ValueError("Einsum: more than one ellipsis in the output")
        out = rhs.replace("...", ell)
    else:
        letters = "".join(terms).replace(ell, "") if ell else "".join(terms)
        counts = {c: letters.count(c) for c in set(letters)}
        out = ell + "".join(sorted(c for c, k in counts.items() if k == 1))
    return terms, out


def einsum(equation: str, *operands) -> np.ndarray:
    """Einsum of exact values, exactly (module docstring): float64 operands give the correctly
    rounded float64 of the exact sum of products, with IEEE special values where a term is NaN
    or infinite; object arrays of ints give Python ints.  Semantics: :func:`parse_einsum`, then
    numpy.einsum on the exact integers (repeated letters in a term take the diagonal, letters
    absent from the output are summed, ellipsis dimensions broadcast).

    Raises:
        ValueError: an invalid equation (:func:`parse_einsum`) or shapes numpy rejects.
    """
    ops = [np.asarray(x) for x in operands]
    terms, out = parse_einsum(equation, [x.ndim for x in ops])
    spec = ",".join(terms) + "->" + out
    if all(x.dtype == object for x in ops):
        ints = [scaled_ints(x)[0] for x in ops]
        return np.asarray(np.einsum(spec, *ints), dtype=object)
    fl = [x.astype(np.float64) for x in ops]
    scaled = [scaled_ints(_finite(x)) for x in fl]
    n = np.einsum(spec, *[s[0] for s in scaled])
    y = floats_of(np.asarray(n, dtype=object), sum(s[1] for s in scaled))
    if all(np.isfinite(x).all() for x in fl):
        return y
    # the IEEE class of every term: the product of the factors' classes (finite non-zero -> +-1,
    # zeros, infinities and NaN kept) over every index combination, summed letters last
    summed = "".join(sorted(set("".join(terms)) - set(out)))
    cls = [np.where(np.isfinite(x) & (x != 0), np.where(x < 0, -1.0, 1.0), x) for x in fl]
    with np.errstate(invalid="ignore"):
        t = np.einsum(",".join(terms) + "->" + out + summed, *cls)
    t = t.reshape(t.shape[: len(out)] + (-1,))
    nan = np.isnan(t).any(axis=-1)
    pinf = (t == math.inf).any(axis=-1)
    ninf = (t == -math.inf).any(axis=-1)
    y = np.where(pinf, math.inf, y)
    y = np.where(ninf, -math.inf, y)
    y = np.where(nan | (pinf & ninf), math.nan, y)
    return y


def einsum_terms(equation: str, shapes: list[tuple[int, ...]]) -> tuple[int, int]:
    """(terms summed per output element ``P``, operands ``n``) of an equation on operands of
    these shapes: ``P`` is the product of the sizes of the letters absent from the output."""
    terms, out = parse_einsum(equation, [len(s) for s in shapes])
    size = {}
    for t, s in zip(terms, shapes):
        for c, d in zip(t, s):
            size[c] = max(size.get(c, 1), d)
    p = 1
    for c, d in size.items():
        if c not in out:
            p *= d
    return p, len(shapes)


def einsum_abs(equation: str, *operands) -> np.ndarray:
    """The Einsum of ``|operands|`` in float64 (non-finite counted as 0), rounded up."""
    ops = [np.abs(_finite(np.asarray(x, dtype=np.float64))) for x in operands]
    terms, out = parse_einsum(equation, [x.ndim for x in ops])
    p, n = einsum_terms(equation, [x.shape for x in ops])
    s = np.einsum(",".join(terms) + "->" + out, *ops)
    return np.asarray(s) * (1.0 + 4.0 * (p + n + 1) * U64)


# ----------------------------------------------------------------------------- Det
def _bareiss(m: list[list[int]]) -> int:
    """Exact integer determinant (Bareiss fraction-free elimination, row swaps for zero pivots)."""
    n = len(m)
    if n == 0:
        return 1
    a = [row[:] for row in m]
    sign, prev = 1, 1
    for k in range(n - 1):
        if a[k][k] == 0:
            sw = next((i for i in range(k + 1, n) if a[i][k] != 0), None)
            if sw is None:
                return 0
            a[k], a[sw] = a[sw], a[k]
            sign = -sign
        for i in range(k + 1, n):
            for j in range(k + 1, n):
                a[i][j] = (a[i][j] * a[k][k] - a[i][k] * a[k][j]) // prev
        prev = a[k][k]
    return sign * a[n - 1][n - 1]


def det(x) -> np.ndarray:
    """Determinants of ``[*, M, M]`` finite float64 matrices, exactly (each matrix as integers
    times ``2**E``: the determinant is the integer determinant times ``2**(M E)``), correctly
    rounded to float64; shape ``[*]``.

    Raises:
        ValueError: rank < 2, non-square matrices, non-finite entries.
    """
    x = np.asarray(x, dtype=np.float64)
    if x.ndim < 2 or x.shape[-1] != x.shape[-2]:
        raise ValueError("Det: input must be [*, M, M]")
    m = x.shape[-1]
    batch = x.shape[:-2]
    flat = x.reshape((-1, m, m))
    out = np.empty(flat.shape[0], dtype=np.float64)
    for i in range(flat.shape[0]):
        n, e = scaled_ints(flat[i])
        out[i] = to_float(_bareiss([[int(v) for v in row] for row in n]), m * e)
    return out.reshape(batch)


def permanent_abs(x) -> np.ndarray:
    """``per(|X|)`` of each ``[*, M, M]`` matrix (float64, Leibniz over the ``M!``
    permutations; for the small M of the suite), shape ``[*]``."""
    a = np.abs(np.asarray(x, dtype=np.float64))
    m = a.shape[-1]
    out = np.zeros(a.shape[:-2])
    rows = np.arange(m)
    for p in itertools.permutations(range(m)):
        out = out + np.prod(a[..., rows, list(p)], axis=-1)
    return out


def abs_cofactors(x) -> np.ndarray:
    """``|cof_ij|`` = ``|det|`` of the minor without row i and column j, exactly
    (:func:`det`) and rounded to float64, shape ``[*, M, M]``."""
    x = np.asarray(x, dtype=np.float64)
    m = x.shape[-1]
    out = np.empty(x.shape)
    for i in range(m):
        for j in range(m):
            minor = np.delete(np.delete(x, i, axis=-2), j, axis=-1)
            out[..., i, j] = np.abs(det(minor)) if m > 1 else 1.0
    return out


def lu_pivots(x) -> np.ndarray:
    """The pivots ``u_ii`` of Gaussian elimination with partial pivoting (float64) of each
    ``[*, M, M]`` matrix, shape ``[*, M]`` (a zero column gives a zero pivot)."""
    a = np.array(x, dtype=np.float64, copy=True)
    m = a.shape[-1]
    flat = a.reshape(-1, m, m)
    piv = np.zeros(flat.shape[:-1])
    for b in range(flat.shape[0]):
        w = flat[b]
        for k in range(m):
            p = k + int(np.argmax(np.abs(w[k:, k])))
            if p != k:
                w[[k, p]] = w[[p, k]]
            piv[b, k] = w[k, k]
            if w[k, k] != 0:
                w[k + 1:, k:] -= np.outer(w[k + 1:, k] / w[k, k], w[k, k:])
    return piv.reshape(a.shape[:-1])


def det_bound(x, u: float, s: float) -> np.ndarray:
    """Per matrix: the largest error of a determinant computed in a precision of unit roundoff
    ``u`` (smallest subnormal ``s``) by any of the usual algorithms, shape ``[*]``:

    * Gaussian elimination with multipliers of magnitude at most 1 (LU with partial pivoting:
      LAPACK getrf, Eigen PartialPivLU; full pivoting): the computed factors are those of
      ``X + D`` with ``|D| <= gamma_M |L||U|`` (Higham Thm 9.3); an elimination step at most
      doubles a column's largest magnitude, so ``(|L||U|)_ij <= M 2^(M-1) c_j`` with ``c_j``
      the largest ``|x_ij|`` of column j.  Householder QR is backward stable column by column
      (``||d_j|| <= gamma~_{cM^2} ||x_j||``, Higham Thm 19.4).  Both lie within
      ``|D_ij| <= e c_j``, ``e = gamma_{M^2 2^M}``.  Expanding the determinant multilinearly,
      ``|det(X + D) - det X| <= sum_ij e c_j |cof_ij| + M! prod_j c_j ((1 + e)^M - 1 - M e)``
      (the first-order term with the exact cofactors; every term with two or more entries of
      D is at most ``e^k prod_j c_j``).  The product of the M pivots adds ``gamma_M``.
      The pivots' product may also be taken in the log domain, ``sign * exp(sum ln|u_ii|)``
      (numpy.linalg.det, hence onnx.reference: an algebraically exact re-association, so
      legitimate by the rule of docs/tolerance.md): the logarithms, their sum and the
      exponential add a relative ``gamma_{2M+4} L`` with ``L = sum |ln |u_ii||`` (pivots of
      a float64 elimination; counted twice for safety).
    * the Laplace/Leibniz expansion in any order: ``gamma_{M! + M} per(|X|)``.

    The bound is the larger of the two, plus ``M! M s`` for products that underflow.  Both
    scale exactly with powers of two applied to columns (the ``wide`` class) but for the
    log-domain term.
    """
    x = np.asarray(x, dtype=np.float64)
    m = x.shape[-1]
    if x.size == 0:
        return np.zeros(x.shape[:-2])
    c = np.abs(x).max(axis=-2)  # [*, M]: column maxima
    e = gamma(m * m * 2**m, u)
    first = (abs_cofactors(x) * (e * c)[..., None, :]).sum(axis=(-1, -2))
    higher = math.factorial(m) * np.prod(c, axis=-1) * ((1 + e) ** m - 1 - m * e) * (1 + 1e-6)
    d = np.abs(det(x))
    with np.errstate(divide="ignore"):
        logs = np.abs(np.log(np.abs(lu_pivots(x))))
    big_l = np.where(np.isfinite(logs), logs, 0.0).sum(axis=-1)
    lu = (first + higher) * (1 + gamma(m, u)) + gamma(m, u) * d + 2 * gamma(2 * m + 4, u) * big_l * d
    lap = gamma(math.factorial(m) + m, u) * permanent_abs(x)
    return np.maximum(lu, lap) * (1 + 4 * U64) + math.factorial(m) * m * s


# ----------------------------------------------------------------------------- final comparison
def final_tolerance(bound_max: float, t_u: float, t_s: float) -> tuple[float, float]:
    """``(atol, rtol)`` that accept a result ``c`` within ``bound_max`` of the exact ``e`` and
    then rounded to ``T`` (unit roundoff ``t_u``, smallest subnormal ``t_s``), compared with
    ``fl_T(e)``: ``|fl(c) - fl(e)| <= |c - e| + t_u |c| + t_u |e| + t_s <= (1 + t_u) B +
    2 t_u |e| + t_s``, and ``|e| <= (|fl(e)| + t_s/2) / (1 - t_u)``."""
    rtol = 2 * t_u / (1 - t_u)
    return (1 + t_u) * bound_max + 2 * t_s, rtol
