"""The linear-algebra operators as entries of the operator table (family ``shaped``): MatMul,
Gemm, MatMulInteger, Einsum, Det.

Exact oracles and accumulation bounds: :mod:`conformance.reference.linalg` (integer arithmetic
on the exact inputs, rounded once; IEEE special values term by term).  What the entries add to
the schema:

**Tolerance (MatMul, Gemm, Einsum, Det).**  The texts fix no summation order, blocking or
fused multiply-add, so every order is legitimate; they fix no accumulation precision either.
MatMul "behaves like numpy.matmul", and numpy.matmul accumulates float16 in float32 (measured
in the tests: its float16 product over K = 4096 is the float32 sum rounded once), so the
mandated accumulation precision is **at least float32 for float16 and bfloat16**, and the type
itself for float and double (:data:`conformance.reference.linalg.ACC`); the same rule is used
for Gemm, Einsum and Det.  Per output element, with ``S = sum |terms|`` (``|A||B|`` for
MatMul) and ``u`` the accumulation precision's unit roundoff, every legitimate kernel is
within ``gamma_K(u) S + K s`` of the exact value (Higham eq. 3.5; ``s`` the subnormal half
of each product that may underflow); :func:`conformance.reference.linalg.final_tolerance`
adds the rounding to ``T`` on both sides.  The comparison takes the largest bound over the
output as ``atol`` (:class:`conformance.tolerance.Tolerance` has one ``atol`` per output).
Long inner dimensions (K of 1024-4096) in float16/bfloat16 make float16 accumulation fail: a
sequential float16 sum of 4096 positive products stagnates hundreds of units off, where the
bound allows about one.  Integer results are exact; overflow is undefined and never
generated (the drawn magnitudes keep every partial sum inside the type).

**MatMul.**  numpy.matmul semantics: a 1-D A is promoted to ``[1, K]`` and a 1-D B to
``[K, 1]``, the added dimension removed from the result (a 1-D x 1-D product is a scalar);
batch dimensions broadcast multidirectionally; K = 0 gives zeros; rank-0 operands are
errors.  Shape table :func:`_matmul_shapes`; numerics ``normal``, ``wide`` (rows of A and
columns of B scaled by powers of two as far as the type allows without overflow),
``special`` (NaN, +-inf, +-0 and subnormals placed so that outputs are NaN by ``inf * 0``,
NaN by opposite infinities, +-inf and finite), ``positive`` (all terms positive: the
stagnation case of low-precision accumulation, on the long patterns), integer ``int``
(magnitudes up to ``sqrt(max / K)``) and ``int-extremes`` (A holds the type's extremes, B
is one-hot per column: the output is A's extremes, exactly, which a kernel converting 64-bit
integers to double loses).

**Gemm.**  ``Y = alpha A' B' + beta C``.  Shape table :func:`_gemm_shapes`: every
(transA, transB) with a full C; from 7 every unidirectional broadcast of C to ``[M, N]``
(scalar, ``[1]``, ``[N]``, ``[1, N]``, ``[M, 1]``, ``[1, 1]``); in 1 and 6 ``broadcast=1``
with C a suffix of ``[M, N]`` (scalar, ``[N]``, ``[M, N]``); K = 0 (``Y = beta C``),
M = 0, ``1 x 1``, long K.  C absent from 11 (the engine's optional-input states).
Attribute states (:data:`GEMM_ATTRS`): ``alpha``/``beta`` scaled, integral, ``beta = 0``,
``alpha = 0``, negative, beyond absent and explicit defaults; integer types only with
non-negative integral alpha and beta (the text does not say how ``0.5 * A B`` becomes an
integer), the ``special`` class never with ``alpha = 0`` (BLAS skips the product, IEEE
gives ``0 * inf = NaN``).  Tolerance :func:`gemm_tolerance`: the K-term accumulation as for
MatMul, and for the 16-bit types the formula's outer operations may round to T.  Error
cases: a 3-D A, mismatched K (also one that only ``transA`` makes wrong), a C that does not
broadcast unidirectionally, a legacy C of the wrong shape without ``broadcast=1``.

**MatMulInteger.**  ``(A - a_zero_point) @ (B - b_zero_point)`` in exact integers (int32
output; products of at most 255 x 255 and K <= 4096 never overflow).  Zero points (the
engine's optional-input states: none, either, both, per type combination) as the text
allows them (:func:`_mmi_shapes`): scalar, ``[1]``, per row of A (``[M]`` for a 2-D A --
one per *row*, which numpy broadcasting of ``A - zp`` would apply along K instead: the
``M=K`` pattern makes that a wrong value, not only a shape error -- and ``[..., M, 1]``
batched), per column of B (``[N]``, ``[..., 1, N]``); 1-D operands; K = 0; long K.
Default integer numerics (``int``: the whole range with its extremes; ``int-extremes``).
Error cases: mismatched K, a zero point of another type than its matrix.

**Einsum.**  A table of equations (:data:`EINSUM_TABLE`): transpose (explicit and implicit),
a 3-D permutation, the rank-0 ``->``, trace (explicit and implicit), diagonal, batched
diagonal through an ellipsis, sums over all and one axis, inner and outer products, matmul
(explicit and implicit), batch matmul with spaces, broadcasting ellipses (size-1 batch dims
on both sides), an implicit ellipsis output, a repeated letter shared with another operand
(``ii,ij->j``), three-operand chains and bilinear forms, implicit output order with capitals
(``ia,aJ`` is ``[J, i]``: ASCII order puts capitals first) and capitals in explicit mode,
Frobenius products, attention-like 4-D contractions, a rank-0 operand, zero-size sums and
batches, long dot products (1024-4096) for the accumulation precision.  The oracle parses
the equation itself (implicit output, ellipsis) and lets numpy.einsum do exact integer
arithmetic.  Tolerance :func:`einsum_tolerance` (exact for pure data movement).  Numerics:
``wide`` and integer classes sized to the equation's terms; ``special`` puts infinities
only where the contraction path cannot change the result (module function docstring).
Error cases: the number of terms, a term's rank, a letter with two sizes (also within one
term), an output letter absent from the inputs, ellipses of different lengths.

**Det.**  Exact determinants (integer arithmetic on the exact entries) of ``[*, M, M]``:
M = 1-5, batches of one and two dimensions, an empty batch.  Numerics: ``normal`` (entries in
[-2, 2]), ``wide`` (columns scaled by powers of two), ``special`` (signed permutation matrices,
triangular ones with power-of-two diagonals, subnormal diagonal entries, a zero row, -0
matrices, the identity; no NaN or infinity: the text defines none and a BLAS that skips zero
multipliers need not propagate them), ``singular`` (a row the sum of two others or equal to
one: exactly 0) and ``ill-conditioned`` (the same, perturbed).  Tolerance
:func:`conformance.reference.linalg.det_bound`: the backward error of elimination with
bounded multipliers and of Householder QR propagated through the exact cofactors, the
log-domain product of the pivots (numpy.linalg.det), or the Laplace expansion, in at least
float32 for the 16-bit types.  Error cases: a non-square and a rank-1 input.
"""

from __future__ import annotations

import math

import numpy as np

from ..reference import linalg as ref
from ..tolerance import Tolerance
from . import values as V
from .engine import register_entries
from .entry import Attrs, Entry, Err, Shape

# ----------------------------------------------------------------------------- shared helpers


def _matrix_views(op: str, ctx, a: np.ndarray, b: np.ndarray):
    """Writeable views of A and B as ``[..., M, K]`` and ``[..., K, N]`` (1-D operands
    promoted as numpy.matmul does; Gemm's transposes undone)."""
    if op == "Gemm":
        return (a.T if ctx.attrs.get("transA") else a), (b.T if ctx.attrs.get("transB") else b)
    return (a if a.ndim >= 2 else a[None, :]), (b if b.ndim >= 2 else b[:, None])


def _at(x: np.ndarray, i: int, j: int) -> tuple:
    """Index of element ``(i, j)`` of the first matrix of a ``[..., R, C]`` view."""
    return (0,) * (x.ndim - 2) + (i, j)


def _terms(op: str, ctx, shapes) -> int:
    """K: the number of products per output element."""
    a = shapes[0]
    if op == "Gemm":
        return a[0] if ctx.attrs.get("transA") else a[1]
    return a[-1]


def _uniform(rng, shape, t: str, lo: float, hi: float) -> np.ndarray:
    return V.representable(rng.uniform(lo, hi, size=shape), t)


def _float_type(ctx) -> str:
    return next(iter(ctx.types.values()))


def wide(op: str):
    """Numerics class ``wide``: rows of A and columns of B scaled by powers of two in
    ``[-E, E]`` (elements also by ``2^[-j, j]``, ``j <= 3``), ``E`` and ``j`` the largest for
    which ``K`` products stay four times below the type's largest value (and the scales clear
    of the subnormal range); C (Gemm) over the products' range."""

    def fn(rng, ctx, shapes):
        t = _float_type(ctx)
        k = max(1, _terms(op, ctx, shapes))
        fi = V.finfo(t)
        room = int(math.log2(float(fi.max))) - 2 - math.ceil(math.log2(k))  # log2 of the largest product
        j = min(3, max(0, room // 4))
        e = max(0, min((room - 2 * j) // 2, int(-math.log2(float(fi.smallest_normal))) // 2 - 4))
        a = rng.uniform(-1, 1, size=shapes[0]) * 2.0 ** rng.integers(-j, j + 1, size=shapes[0])
        b = rng.uniform(-1, 1, size=shapes[1]) * 2.0 ** rng.integers(-j, j + 1, size=shapes[1])
        av, bv = _matrix_views(op, ctx, a, b)
        if av.size and bv.size:
            av *= 2.0 ** rng.integers(-e, e + 1, size=av.shape[:-1])[..., None]
            bv *= 2.0 ** rng.integers(-e, e + 1, size=bv.shape[:-2] + bv.shape[-1:])[..., None, :]
        out = [V.representable(a, t), V.representable(b, t)]
        for s in shapes[2:]:  # Gemm's C
            out.append(V.representable(rng.uniform(-1, 1, size=s) * 2.0 ** rng.integers(-2 * e, 2 * e + 1, size=s), t))
        return out

    fn.__name__ = fn.__qualname__ = f"{op.lower()}_wide"
    return fn


#: Inner dimensions at least this long get the vectorized layout of ``special``.
VECTOR_K = 64
#: Positions (negative: from the end) of NaN, +inf, -inf in such a row of A: the first element,
#: inside the first block of 4, the boundaries at 4, 8, 16, 32, the scalar tail.
VECTOR_POSITIONS = {"nan": (0, 3, 4, 16, 33, -3), "pinf": (0, 8, 15, -2), "ninf": (0, 7, 32, -1)}


def _vector_rows(rows: np.ndarray, ctx, t: str) -> None:
    """Write NaN, +inf and -inf into the rows (a 2-D view, rows of at least :data:`VECTOR_K`) at
    :data:`VECTOR_POSITIONS`, one kind per row; which kind the first row gets rotates over the
    versions and types, so each of them is some case's first element."""
    start = ctx.version + {"float": 1, "double": 2}.get(t, 0)
    k = rows.shape[-1]
    for r in range(rows.shape[0]):
        what = ("nan", "pinf", "ninf")[(start + r) % 3]
        val = {"nan": math.nan, "pinf": math.inf, "ninf": -math.inf}[what]
        for q in VECTOR_POSITIONS[what]:
            rows[r, q % k] = val


def special(op: str):
    """Numerics class ``special``: ordinary values in [-2, 2], then in the first matrix of A
    and B: ``inf`` meeting a zero (a NaN output), ``+inf`` and ``-inf`` in one row (NaN), a
    single infinity (``+-inf``), a NaN, ``-0``, ``+0`` and subnormals (ordinary outputs)."""

    def fn(rng, ctx, shapes):
        t = _float_type(ctx)
        fi = V.finfo(t)
        sub, tiny = float(fi.smallest_subnormal), float(fi.smallest_normal)
        a = _uniform(rng, shapes[0], t, -2, 2)
        b = _uniform(rng, shapes[1], t, 0.25, 2)  # no zero in B unless placed
        av, bv = _matrix_views(op, ctx, a, b)
        if av.size and bv.size and av.shape[-1] >= VECTOR_K:
            # rows long enough for a vectorized dot product: NaN, +inf, -inf from the first element on,
            # at the block boundaries and in the tail (B stays positive and finite: NaN, +inf, -inf out)
            _vector_rows(av[(0,) * (av.ndim - 2)], ctx, t)
        elif av.size and bv.size:
            m, k = av.shape[-2:]
            n = bv.shape[-1]
            rows = list(range(m))
            rng.shuffle(rows)
            plan = ["inf*0", "opposite", "one-inf", "nan", "zeros"]
            for r, what in zip(rows, plan[int(rng.integers(len(plan))):] + plan):
                if what == "inf*0":
                    av[_at(av, r, 0)] = math.inf
                    bv[_at(bv, 0, int(rng.integers(n)))] = 0.0
                elif what == "opposite" and k >= 2:
                    av[_at(av, r, 0)], av[_at(av, r, k - 1)] = math.inf, -math.inf
                elif what == "one-inf":
                    av[_at(av, r, k - 1)] = -math.inf if rng.random() < 0.5 else math.inf
                elif what == "nan":
                    av[_at(av, r, int(rng.integers(k)))] = math.nan
                elif what == "zeros":
                    av[_at(av, r, 0)] = -0.0
                    av[_at(av, r, k - 1)] = sub
                    if k >= 3:
                        av[_at(av, r, 1)] = -tiny
        out = [a, b]
        for s in shapes[2:]:  # Gemm's C: finite (beta * C with C special is beta's business)
            out.append(_uniform(rng, s, t, -2, 2))
        return out

    fn.__name__ = fn.__qualname__ = f"{op.lower()}_special"
    return fn


def positive(rng, ctx, shapes):
    """Numerics class ``positive``: every input in [1/16, 1]: partial sums only grow, so an
    accumulator below the mandated precision stagnates (the long-K patterns)."""
    t = _float_type(ctx)
    return [_uniform(rng, s, t, 1 / 16, 1) for s in shapes]


def _int_range(t: str, share: int) -> tuple[int, int]:
    """``[lo, hi]`` of drawn integers of type ``t`` such that ``share`` of them summed stay
    inside the type (a magnitude bound ``max // share``)."""
    info = V.iinfo(t)
    hi = int(info.max) // max(1, share)
    return (-hi if int(info.min) < 0 else 0), hi


def _ints(rng, shape, lo: int, hi: int) -> np.ndarray:
    out = np.empty(shape, dtype=object)
    out.ravel()[:] = [int(v) for v in rng.integers(lo, hi, size=int(np.prod(shape, dtype=np.int64)), endpoint=True,
                                                   dtype=np.int64 if lo < 0 else np.uint64)]
    return out


def int_class(op: str):
    """Numerics class ``int`` of MatMul/Gemm: magnitudes up to ``isqrt(max / (2 |alpha| K))``
    (Gemm's C up to ``max / (2 |beta|)``), with the range's extremes present: no partial sum
    leaves the type, whatever the order."""

    def fn(rng, ctx, shapes):
        t = next(iter(ctx.types.values()))
        k = max(1, _terms(op, ctx, shapes))
        alpha = abs(ctx.attrs.get("alpha", 1.0)) if op == "Gemm" else 1.0
        info = V.iinfo(t)
        m = math.isqrt(int(info.max) // max(1, int(2 * max(alpha, 1.0) * k)))
        lo = -m if int(info.min) < 0 else 0
        out = [_ints(rng, s, lo, m) for s in shapes[:2]]
        for x in out:
            if x.size >= 2:
                x.ravel()[0], x.ravel()[-1] = m, lo
        for s in shapes[2:]:
            beta = abs(ctx.attrs.get("beta", 1.0))
            clo, chi = _int_range(t, int(2 * max(beta, 1.0)))
            out.append(_ints(rng, s, clo, chi))
        return out

    fn.__name__ = fn.__qualname__ = f"{op.lower()}_int"
    return fn


def int_extremes(op: str):
    """Numerics class ``int-extremes`` of MatMul/Gemm: A holds the extremes of the range its
    term may take (the type's for MatMul; ``max / (2 |alpha|)`` for Gemm), B is one-hot per
    column (each output element is one element of A, exactly), Gemm's C holds the extremes of
    ``max / (2 |beta|)``."""

    def fn(rng, ctx, shapes):
        t = next(iter(ctx.types.values()))
        info = V.iinfo(t)
        if op == "Gemm":
            alpha, beta = abs(ctx.attrs.get("alpha", 1.0)), abs(ctx.attrs.get("beta", 1.0))
            lo, hi = _int_range(t, int(2 * alpha) if alpha else 1)
        else:
            lo, hi = int(info.min), int(info.max)
        ext = sorted({lo, lo + 1, hi, hi - 1, 0, 1} | ({-1} if lo < 0 else set()))
        a = np.empty(shapes[0], dtype=object)
        a.ravel()[:] = [ext[int(i)] for i in rng.integers(len(ext), size=a.size)]
        b = np.zeros(shapes[1], dtype=object)
        av, bv = _matrix_views(op, ctx, a, b)
        if bv.size:
            kk = bv.shape[-2]
            for idx in np.ndindex(*bv.shape[:-2], bv.shape[-1]):
                bv[idx[:-1] + (int(rng.integers(kk)), idx[-1])] = 1
        out = [a, b]
        for s in shapes[2:]:
            clo, chi = _int_range(t, int(2 * beta) if beta else 1)
            cext = [clo, chi, 0, 1]
            c = np.empty(s, dtype=object)
            c.ravel()[:] = [cext[int(i)] for i in rng.integers(len(cext), size=c.size)]
            out.append(c)
        return out

    fn.__name__ = fn.__qualname__ = f"{op.lower()}_int_extremes"
    return fn


def _finite_max(x) -> float:
    x = np.asarray(x, dtype=np.float64)
    return float(x.max()) if x.size else 0.0


def bound_tolerance(t: str, bound: np.ndarray, expected) -> Tolerance:
    """The tolerance of a ``t``-typed output whose exact values are ``expected`` and whose
    per-element accumulation bound is ``bound`` (largest over the finite expected elements;
    non-finite ones compare exactly): :func:`conformance.reference.linalg.final_tolerance`."""
    if V.kind(t) != V.FLOAT:
        return Tolerance(0.0, 0.0, exact=True)
    fi = V.finfo(t)
    e = np.asarray(expected, dtype=np.float64)
    b = np.broadcast_to(np.asarray(bound, dtype=np.float64), e.shape)
    atol, rtol = ref.final_tolerance(_finite_max(b[np.isfinite(e)]), float(fi.eps) / 2,
                                     float(fi.smallest_subnormal))
    return Tolerance(atol, rtol, variants=("bound",))


# ----------------------------------------------------------------------------- MatMul
def matmul_oracle(ctx, a, b, **attrs):
    """numpy.matmul of the exact inputs, exactly (:func:`conformance.reference.linalg.exact_matmul`)."""
    return ref.exact_matmul(a, b)


def matmul_tolerance(ctx, inputs, attrs, outputs):
    """Higham's bound ``gamma_K(u) (|A||B|)_ij + K s`` in the mandated accumulation precision
    (module docstring)."""
    t = ctx.out_types["Y"]
    if V.kind(t) != V.FLOAT:
        return {"Y": Tolerance(0.0, 0.0, exact=True)}
    a, b = inputs[0], inputs[1]
    u, s = ref.ACC[t]
    k = np.shape(a)[-1]
    bound = ref.gamma(k, u) * ref.abs_matmul(a, b) + k * s
    return {"Y": bound_tolerance(t, bound, outputs["Y"])}


def _matmul_shapes() -> tuple[Shape, ...]:
    return (
        Shape("2d", {"A": "MK", "B": "KN"}),
        Shape("2d/K=5-16", {"A": "MK", "B": "KN"}, dims={"K": (5, 16)}),
        Shape("1d-1d", {"A": "K", "B": "K"}, dims={"K": (1, 8)}),
        Shape("1d-A", {"A": "K", "B": "KN"}),
        Shape("1d-B", {"A": "MK", "B": "K"}),
        Shape("1d-A/batch", {"A": "K", "B": "SKN"}),
        Shape("1d-B/batch", {"A": "SMK", "B": "K"}),
        Shape("batch", {"A": "SMK", "B": "SKN"}),
        Shape("batch-A", {"A": "SMK", "B": "KN"}),
        Shape("batch-B", {"A": "MK", "B": "SKN"}),
        Shape("batch-broadcast", {"A": "S1MK", "B": "1PKN"}),
        Shape("rank4-x-rank3", {"A": "S2MK", "B": "2KN"}, dims={"S": (1, 3)}),
        Shape("size1", {"A": "1K", "B": "K1"}),
        Shape("zero-K", {"A": "M0", "B": "0N"}),
        Shape("zero-M", {"A": "0K", "B": "KN"}),
        Shape("zero-batch", {"A": "0MK", "B": "KN"}),
        Shape("zero-M/1d-B", {"A": "0K", "B": "K"}),
        Shape("vector/K=67", {"A": "3L", "B": "L2"}, dims={"L": (67, 67)}, numerics=("special",)),
        Shape("long-K", {"A": "2L", "B": "L3"}, dims={"L": (1024, 4096)}, numerics=("positive",)),
        Shape("long-K/1d-A", {"A": "L", "B": "L2"}, dims={"L": (1024, 4096)}, numerics=("normal",)),
    )


_MATMUL_ERRORS = (
    Err("the inner dimensions differ (numpy.matmul: A [..., M, K] x B [..., K, N])", "inner-mismatch",
        shapes=((2, 3), (4, 2))),
    Err("1-D operands of different lengths (numpy.matmul: the inner product needs equal K)", "1d-mismatch",
        shapes=((3,), (4,))),
    Err("batch dimensions [2] and [3] do not broadcast (numpy.matmul broadcasts the batch dims)",
        "batch-mismatch", shapes=((2, 2, 3), (3, 3, 2))),
    Err("numpy.matmul rejects a rank-0 operand ('matmul: Input operand 0 does not have enough dimensions')",
        "scalar", shapes=((), (3,))),
)

MATMUL = Entry(
    "MatMul", matmul_oracle, family="shaped", shapes=_matmul_shapes(), tolerance=matmul_tolerance,
    float_numerics={"wide": wide("MatMul"), "special": special("MatMul"), "positive": positive},
    int_numerics={"int": int_class("MatMul"), "int-extremes": int_extremes("MatMul")},
    per_type=20, errors=_MATMUL_ERRORS,
    notes={9: "integer types (uint32, uint64, int32, int64)", 13: "bfloat16"},
)


# ----------------------------------------------------------------------------- Gemm
def gemm_oracle(ctx, a, b, c=None, alpha=1.0, beta=1.0, transA=0, transB=0, **attrs):
    """``alpha * A' B' + beta * C`` exactly (:func:`conformance.reference.linalg.gemm`; C
    absent from 11: zero)."""
    return ref.gemm(a, b, c, alpha, beta, transA, transB)


def gemm_tolerance(ctx, inputs, attrs, outputs):
    """``E = gamma_{K+2}(u) (|alpha| |A'||B'| + |beta| |C|)_ij + (K+2)(1+|alpha|) s``: every
    term passes through at most K+2 roundings in the accumulation precision ``u`` (the product,
    the K-1 additions, alpha's and beta's products and the last addition, in either grouping:
    ``alpha`` applied to the sum or folded into A).  For the 16-bit types the formula's outer
    operations -- ``A'B'``, ``alpha * (.)``, ``beta * C`` -- may also each be rounded to T, as a
    MatMul, Mul and Add in T compute them (onnx.reference does; the K-term dot product itself
    stays in at least float32: module docstring): ``+ gamma_3(u_T) (|alpha| (|A'B'| + E) +
    |beta| |C|)``, relative to the *values* rounded, not to the sum of absolute terms.  For
    float and double ``u_T = u`` and the first term already covers them."""
    t = ctx.out_types["Y"]
    if V.kind(t) != V.FLOAT:
        return {"Y": Tolerance(0.0, 0.0, exact=True)}
    a, b, c = inputs[0], inputs[1], inputs[2] if len(inputs) > 2 else None
    alpha, beta, ta, tb = attrs.get("alpha", 1.0), attrs.get("beta", 1.0), attrs.get("transA", 0), attrs.get("transB", 0)
    u, s = ref.ACC[t]
    u_t = float(V.finfo(t).eps) / 2
    k = np.shape(a)[0 if ta else 1]
    bound = ref.gamma(k + 2, u) * ref.gemm_abs(a, b, c, alpha, beta, ta, tb) + (k + 2) * (1 + abs(alpha)) * s
    if u_t > u:
        ab = np.abs(ref.gemm(a, b, None, 1.0, 0.0, ta, tb))
        cc = 0.0 if c is None else abs(beta) * np.abs(np.broadcast_to(np.asarray(c, dtype=np.float64), ab.shape))
        with np.errstate(invalid="ignore"):
            bound = bound + ref.gamma(3, u_t) * (abs(alpha) * (ab + bound) + cc)
    return {"Y": bound_tolerance(t, bound, outputs["Y"])}


def _gemm_shapes() -> tuple[Shape, ...]:
    tr = {"nn": {}, "tn": {"transA": 1}, "nt": {"transB": 1}, "tt": {"transA": 1, "transB": 1}}
    ab = {"nn": ("MK", "KN"), "tn": ("KM", "KN"), "nt": ("MK", "NK"), "tt": ("KM", "NK")}
    out = [Shape(f"{k}/C=MN", {"A": ab[k][0], "B": ab[k][1], "C": "MN"}, tr[k]) for k in tr]
    # unidirectional broadcasting of C (7+): scalar, [1], [N], [1, N], [M, 1], [1, 1]
    for k, c in (("nn", "N"), ("nt", "1N"), ("tn", "M1"), ("tt", ""), ("nn", "1"), ("nt", "11"), ("tt", "M1"),
                 ("tn", "N")):
        name = {"": "scalar", "1": "one", "N": "row", "1N": "row-2d", "M1": "column", "11": "1x1"}[c]
        out.append(Shape(f"{k}/C={name}", {"A": ab[k][0], "B": ab[k][1], "C": c}, tr[k], since=7))
    # legacy broadcast=1 (1, 6): C a suffix of [M, N]
    for k, c in (("nn", "N"), ("tn", ""), ("nt", "MN"), ("tt", "N")):
        name = {"": "scalar", "N": "row", "MN": "MN"}[c]
        out.append(Shape(f"legacy/{k}/C={name}", {"A": ab[k][0], "B": ab[k][1], "C": c}, {**tr[k], "broadcast": 1},
                         until=6))
    out += [
        Shape("nn/zero-K", {"A": "M0", "B": "0N", "C": "MN"}),
        Shape("tn/zero-K", {"A": "0M", "B": "0N", "C": "N"}, {"transA": 1}, since=7),
        Shape("nn/zero-M", {"A": "0K", "B": "KN", "C": "1N"}, since=7),
        Shape("nt/size1", {"A": "1K", "B": "1K", "C": "11"}, {"transB": 1}),
        Shape("nn/vector/K=67", {"A": "3L", "B": "L2", "C": "32"}, dims={"L": (67, 67)}, numerics=("special",)),
        Shape("nn/long-K", {"A": "2L", "B": "L3", "C": "23"}, dims={"L": (1024, 4096)}, numerics=("positive",)),
        Shape("tt/long-K", {"A": "L2", "B": "3L", "C": "3"}, {"transA": 1, "transB": 1}, since=7,
              dims={"L": (1024, 4096)}, numerics=("normal",)),
    ]
    return tuple(out)


#: Attribute states beyond absent and the explicit defaults (values exact in every float type).
GEMM_ATTRS = (
    Attrs({"alpha": 0.5, "beta": -1.5}, tag="scaled"),
    Attrs({"alpha": 2.0, "beta": 3.0}, tag="integral"),
    Attrs({"beta": 0.0}, tag="beta=0"),
    Attrs({"alpha": 0.0, "beta": 2.0}, tag="alpha=0"),
    Attrs({"alpha": -1.0, "beta": -0.25}, tag="negative"),
)


def gemm_numerics_rule(version, numerics, attrs, optional) -> bool:
    """Integer classes only with alpha and beta in {0, 1, 2, 3} (an integral, non-negative
    result: the text does not say how a fractional ``alpha * A B`` becomes an integer, and
    unsigned results must stay >= 0); ``special`` not with alpha = 0 (``0 * inf``: BLAS
    skips the product when alpha is 0, IEEE gives NaN, and the text does not choose)."""
    alpha, beta = attrs.get("alpha", 1.0), attrs.get("beta", 1.0)
    if numerics in ("int", "int-extremes"):
        return alpha in (0.0, 1.0, 2.0, 3.0) and beta in (0.0, 1.0, 2.0, 3.0)
    if numerics == "special":
        return alpha != 0.0
    return True


def _gemm_per_type(version, combo) -> int:
    """Value cases per type: every shape pattern for the 16-bit types (the long-K patterns
    where their accumulation precision matters), fewer for the others."""
    t = combo["T"]
    return 19 if t in ("float16", "bfloat16") else (8 if V.kind(t) == V.FLOAT else 6)


_GEMM_ERRORS = (
    Err("A must be 2-D ('input tensor A has dimension (M X K)')", "A-rank3", shapes=((2, 3, 4), (4, 2), (2,)),
        since=7),
    Err("the inner dimensions differ (A [M, K], B [K, N])", "inner-mismatch", shapes=((2, 3), (4, 2), (2, 2))),
    Err("with transA=1 A [K, M] = [2, 3] is [3, 2] transposed: K = 2 does not match B's 3 (valid only if transA "
        "were ignored)", "transA-ignored", {"transA": 1}, shapes=((2, 3), (3, 4), (4,)), since=7),
    Err("C [3] is not unidirectionally broadcastable to (M, N) = (2, 4)", "C-not-broadcastable",
        shapes=((2, 3), (3, 4), (3,)), since=7),
    Err("C [2, 1, 4] has more dimensions than (M, N) (unidirectional broadcasting)", "C-rank3",
        shapes=((2, 3), (3, 4), (2, 1, 4)), since=7),
    Err("without broadcast=1, C must have Y's shape (M, N) ('If attribute broadcast is non-zero, input tensor C "
        "will be broadcasted')", "legacy-C-not-broadcast", shapes=((2, 3), (3, 4), (4,)), until=6),
)

GEMM = Entry(
    "Gemm", gemm_oracle, family="shaped", shapes=_gemm_shapes(), tolerance=gemm_tolerance, attrs=GEMM_ATTRS,
    float_numerics={"wide": wide("Gemm"), "special": special("Gemm"), "positive": positive},
    int_numerics={"int": int_class("Gemm"), "int-extremes": int_extremes("Gemm")},
    numerics_rule=gemm_numerics_rule, errors=_GEMM_ERRORS,
    per_type=_gemm_per_type,
    notes={7: "C broadcasts unidirectionally (the broadcast attribute is gone)", 9: "integer types",
           11: "C optional (absent: as if 0)", 13: "bfloat16"},
)


# ----------------------------------------------------------------------------- MatMulInteger
def matmul_integer_oracle(ctx, a, b, a_zero_point=None, b_zero_point=None, **attrs):
    """``(A - a_zero_point) @ (B - b_zero_point)`` in exact integers
    (:func:`conformance.reference.linalg.matmul_integer`: an ``[M]`` a_zero_point is one per
    row of a 2-D A)."""
    return ref.matmul_integer(a, b, a_zero_point, b_zero_point)


def _mmi_shapes() -> tuple[Shape, ...]:
    zp = ("a_zero_point", "b_zero_point")

    def sh(name, a, b, za, zb, **kw):
        return Shape(name, {"A": a, "B": b, zp[0]: za, zp[1]: zb}, **kw)

    return (
        sh("2d/zp=scalar", "MK", "KN", "", ""),
        sh("2d/zp=[1]", "MK", "KN", "1", "1"),
        sh("2d/zp=per-row,per-column", "MK", "KN", "M", "N"),
        sh("2d/zp=scalar,per-column", "MK", "KN", "", "N"),
        sh("batch/zp=per-row,per-column", "SMK", "SKN", "SM1", "S1N"),
        sh("batch-A/zp=scalar", "SMK", "KN", "", ""),
        sh("rank4-x-rank2/zp=per-row,scalar", "S2MK", "KN", "S2M1", ""),
        sh("1d-A/zp=scalar,per-column", "K", "KN", "", "N"),
        sh("1d-B/zp=per-row,scalar", "MK", "K", "M", ""),
        sh("M=K/zp=per-row,per-column", "MM", "MN", "M", "N"),
        sh("zero-K", "M0", "0N", "M", "N"),
        sh("long-K", "2L", "L3", "", "3", dims={"L": (1024, 4096)}),
    )


_MMI_ERRORS = (
    Err("the inner dimensions differ (numpy.matmul: A [..., M, K] x B [..., K, N])", "inner-mismatch",
        shapes=((2, 3), (4, 2))),
    Err("a_zero_point has A's type T1 (here int8 with a uint8 A)", "a-zero-point-type",
        types={"A": "uint8", "a_zero_point": "int8"}, shapes=((2, 3), (3, 2), ()), type_name="uint8"),
    Err("b_zero_point has B's type T2 (here uint8 with an int8 B)", "b-zero-point-type",
        types={"B": "int8", "b_zero_point": "uint8"}, shapes=((2, 3), (3, 2), (), ()), type_name="uint8"),
)

MATMUL_INTEGER = Entry(
    "MatMulInteger", matmul_integer_oracle, family="shaped", shapes=_mmi_shapes(), per_type=24,
    errors=_MMI_ERRORS,
    notes={10: "zero points: a scalar, per row of A ([M] for a 2-D A, [..., M, 1]), per column of B"},
)


# ----------------------------------------------------------------------------- Det
def det_oracle(ctx, x, **attrs):
    """Exact determinants of ``[*, M, M]`` (:func:`conformance.reference.linalg.det`), shape ``[*]``."""
    return ref.det(x)


def det_tolerance(ctx, inputs, attrs, outputs):
    """:func:`conformance.reference.linalg.det_bound` in the mandated precision (at least
    float32 for the 16-bit types), then the rounding to T."""
    t = ctx.out_types["Y"]
    u, s = ref.ACC[t]
    return {"Y": bound_tolerance(t, ref.det_bound(inputs[0], u, s), outputs["Y"])}


def _det_normal(rng, ctx, shapes):
    """Numerics class ``normal`` of Det: entries uniform in [-2, 2] (a 5 x 5 determinant stays
    far inside float16's range)."""
    return [_uniform(rng, shapes[0], ctx.types["X"], -2, 2)]


def _det_singular(rng, ctx, shapes):
    """Numerics class ``singular``: integer matrices (entries in [-3, 3]) whose last row is the
    sum of two others or equal to another (exact in every type): the determinant is 0 exactly."""
    x = rng.integers(-3, 4, size=shapes[0]).astype(np.float64)
    m = x.shape[-1]
    if x.size and m >= 2:
        flat = x.reshape(-1, m, m)
        for i in range(flat.shape[0]):
            flat[i, -1] = flat[i, 0] + flat[i, 1] if (m >= 3 and i % 2 == 0) else flat[i, 0]
    elif x.size:
        x[...] = 0.0
    return [x]


def _det_ill(rng, ctx, shapes):
    """Numerics class ``ill-conditioned``: the last row is the sum of two others plus a small
    perturbation (2^-4 for the 16-bit types, 2^-12 for float, 2^-40 for double, relative to
    entries in [-2, 2]): the determinant is small and an algorithm's error is large relative
    to it (the bound is condition-aware)."""
    t = ctx.types["X"]
    x = _uniform(rng, shapes[0], t, -2, 2)
    m = x.shape[-1]
    if x.size and m >= 2:
        flat = x.reshape(-1, m, m)
        eps = 2.0 ** -4 if t in ("float16", "bfloat16") else (2.0 ** -12 if t == "float" else 2.0 ** -40)
        for i in range(flat.shape[0]):
            base = flat[i, 0] + (flat[i, 1] if m >= 3 else 0.0)
            flat[i, -1] = base + eps * rng.uniform(-1, 1, size=m)
        x = V.representable(x, t)
    return [x]


def _det_special(rng, ctx, shapes):
    """Numerics class ``special`` of Det (no NaN or infinity: the text does not define them,
    and LU kernels that skip zero multipliers -- reference BLAS ``dger`` -- need not propagate a
    NaN): per matrix in turn a permutation matrix with signs (det
    +-1), a triangular matrix with power-of-two diagonal, a diagonal one with subnormal
    entries, a matrix with a zero row, a zero matrix with -0 entries, the identity."""
    t = ctx.types["X"]
    fi = V.finfo(t)
    x = np.zeros(shapes[0])
    m = x.shape[-1]
    if not x.size:
        return [x]
    flat = x.reshape(-1, m, m)
    for i in range(flat.shape[0]):
        kind = (i + int(rng.integers(6))) % 6
        if kind == 0:
            p = rng.permutation(m)
            flat[i][np.arange(m), p] = rng.choice([-1.0, 1.0], size=m)
        elif kind == 1:
            flat[i] = np.triu(rng.integers(-3, 4, size=(m, m))).astype(np.float64)
            flat[i][np.arange(m), np.arange(m)] = rng.choice([0.5, -1.0, 2.0, -4.0], size=m)
        elif kind == 2:
            d = np.ones(m)
            d[int(rng.integers(m))] = float(fi.smallest_subnormal) * int(rng.integers(1, 4))
            flat[i] = np.diag(d)
        elif kind == 3:
            flat[i] = rng.uniform(-2, 2, size=(m, m))
            flat[i, int(rng.integers(m))] = 0.0
        elif kind == 4:
            flat[i] = -0.0
        else:
            flat[i] = np.eye(m)
    return [V.representable(x, t)]


def wide_det(rng, ctx, shapes):
    """Numerics class ``wide`` of Det: columns scaled by powers of two ``2^r_j`` (``|r_j| <=
    2e``, ``e`` = 3 for the 16-bit types, 30 for float, 200 for double) whose exponents sum to
    about 0: entries over a wide range, the determinant of ordinary size (column scaling by
    powers of two is exact for every elimination and expansion, and the bound scales with it)."""
    t = ctx.types["X"]
    e = {"float16": 3, "bfloat16": 3, "float": 30}.get(t, 200)
    x = rng.uniform(-2, 2, size=shapes[0])
    m = x.shape[-1]
    if x.size and m >= 2:
        r = rng.integers(-e, e + 1, size=x.shape[:-2] + (m,))
        r[..., -1] = np.clip(-r[..., :-1].sum(axis=-1), -2 * e, 2 * e)
        x = x * 2.0 ** r[..., None, :]
    return [V.representable(x, t)]


def _det_shapes() -> tuple[Shape, ...]:
    return (
        Shape("1x1", {"X": "11"}),
        Shape("2x2", {"X": "22"}),
        Shape("3x3", {"X": "33"}),
        Shape("4x4", {"X": "44"}),
        Shape("5x5", {"X": "55"}),
        Shape("batch/MxM", {"X": "SMM"}, dims={"S": (1, 4), "M": (1, 4)}),
        Shape("batch2/MxM", {"X": "SPMM"}, dims={"S": (1, 3), "P": (1, 3), "M": (2, 3)}),
        Shape("batch/1x1", {"X": "S11"}),
        Shape("zero-batch", {"X": "0MM"}),
    )


_DET_ERRORS = (
    Err("the inner-most 2 dimensions must form square matrices ([*, M, M])", "not-square", shapes=((2, 3),)),
    Err("the input has at least 2 dimensions ([*, M, M])", "rank1", shapes=((3,),)),
)

DET = Entry(
    "Det", det_oracle, family="shaped", shapes=_det_shapes(), tolerance=det_tolerance,
    float_numerics={"normal": _det_normal, "wide": wide_det, "special": _det_special, "singular": _det_singular,
                    "ill-conditioned": _det_ill},
    per_type=18, errors=_DET_ERRORS, notes={22: "bfloat16"},
)


# ----------------------------------------------------------------------------- Einsum
def einsum_oracle(ctx, *inputs, equation, **attrs):
    """Einsum of the exact operands, exactly (:func:`conformance.reference.linalg.einsum`)."""
    return ref.einsum(equation, *inputs)


def _einsum_counts(ctx, shapes) -> tuple[int, int, int]:
    """``(P, n, k)``: terms summed per output element, operands, and intermediate tensors a
    pairwise evaluation may round to T (``n - 2`` contractions before the last, plus one per
    operand first reduced over a letter of its own, with two or more operands)."""
    eq = ctx.attrs["equation"]
    p, n = ref.einsum_terms(eq, shapes)
    terms, out = ref.parse_einsum(eq, [len(sh) for sh in shapes])
    own = 0
    for i, t in enumerate(terms):
        others = "".join(terms[:i] + terms[i + 1:]) + out
        own += any(c not in others for c in t)
    k = (own if n >= 2 else 0) + max(0, n - 2)
    return p, n, k


def _operand_shapes(ctx, inputs) -> list:
    return [np.shape(x) for x in inputs if x is not None]


def einsum_tolerance(ctx, inputs, attrs, outputs):
    """``gamma_{P+n-2}(u) E|x|`` per output element, ``E|x|`` the Einsum of the operands'
    magnitudes (every term is a product of ``n`` factors, ``n - 1`` roundings, summed with at
    most ``P - 1`` additions along any contraction path), in the mandated accumulation
    precision; for the 16-bit types ``+ gamma_k(u_T) E|x|`` for the ``k`` intermediate
    tensors a pairwise evaluation (numpy.einsum with ``optimize``, onnxruntime) rounds to T.
    Pure data movement (``P = n = 1``: transpose, diagonal) is exact."""
    t = ctx.out_types["Output"]
    if V.kind(t) != V.FLOAT:
        return {"Output": Tolerance(0.0, 0.0, exact=True)}
    ops = [x for x in inputs if x is not None]
    p, n, k = _einsum_counts(ctx, _operand_shapes(ctx, ops))
    if p == 1 and n == 1:
        return {"Output": Tolerance(0.0, 0.0, exact=True)}
    u, s = ref.ACC[t]
    u_t = float(V.finfo(t).eps) / 2
    mag = ref.einsum_abs(attrs["equation"], *ops)
    bound = (ref.gamma(p + n - 2, u) + (ref.gamma(k, u_t) if u_t > u else 0.0)) * mag + p * n * s
    return {"Output": bound_tolerance(t, bound, outputs["Output"])}


def _einsum_wide(rng, ctx, shapes):
    """Numerics class ``wide`` of Einsum: elements ``r 2^e`` with ``|e| <= j``, ``j`` the largest
    for which a product of the ``n`` factors summed ``P`` times stays four times below the
    type's largest value (at most 8)."""
    t = ctx.types["Inputs"]
    p, n, _ = _einsum_counts(ctx, shapes)
    fi = V.finfo(t)
    room = int(math.log2(float(fi.max))) - 2 - math.ceil(math.log2(max(p, 1)))
    j = max(0, min(8, room // max(n, 1)))
    return [V.representable(rng.uniform(-1, 1, size=sh) * 2.0 ** rng.integers(-j, j + 1, size=sh), t)
            for sh in shapes]


def _einsum_special(rng, ctx, shapes):
    """Numerics class ``special`` of Einsum: ordinary values in [-2, 2]; the first operand gets
    NaN, +-0 and a subnormal, and +-inf where the result's class does not depend on the
    contraction path: one operand, or two whose every term is a product of one element of
    each (an infinity meeting a zero factor is NaN, opposite infinities are NaN, in any order).
    With three operands, or an operand summed over a letter of its own first, the path
    decides: ``inf * (b1 c1 + b2 c2)`` is one infinity pairwise and may be ``inf - inf = NaN``
    term by term, and a pre-reduced ``sum_k b_k = 0`` turns ``inf * b_k`` into ``inf * 0``."""
    t = ctx.types["Inputs"]
    fi = V.finfo(t)
    out = [_uniform(rng, sh, t, -2, 2) for sh in shapes]
    x = out[0]
    _, n, k = _einsum_counts(ctx, shapes)
    if x.ndim >= 1 and x.shape[-1] >= VECTOR_K and n <= 2 and k == 0:
        _vector_rows(x.reshape(-1, x.shape[-1]), ctx, t)
    elif x.size:
        vals = [math.nan, -0.0, 0.0, float(fi.smallest_subnormal)]
        if n <= 2 and k == 0:
            vals[1:1] = [math.inf, -math.inf]
        pos = rng.permutation(x.size)[: min(x.size, len(vals))]
        for q, v in zip(pos, vals[int(rng.integers(len(vals))):] + vals):
            x.reshape(-1)[q] = v
    return out


def _einsum_int(extremes: bool):
    def fn(rng, ctx, shapes):
        """Integer classes of Einsum: ``int`` draws every operand with magnitudes up to
        ``(max / P)^(1/n)`` (no partial sum leaves the type); ``int-extremes`` gives the first
        operand the extremes of ``[-(max // P), max // P]`` and the others 0 and 1 (the type's
        extremes themselves for pure data movement)."""
        t = ctx.types["Inputs"]
        info = V.iinfo(t)
        p, n, _ = _einsum_counts(ctx, shapes)
        signed = int(info.min) < 0
        if not extremes:
            m = int((int(info.max) // max(p, 1)) ** (1.0 / max(n, 1)))
            while m > 0 and (m ** n) * p > int(info.max):
                m -= 1
            return [_ints(rng, sh, -m if signed else 0, m) for sh in shapes]
        hi = int(info.max) // max(p, 1)
        lo = -hi if signed else 0
        if p == 1 and n == 1:
            lo, hi = int(info.min), int(info.max)
        ext = sorted({lo, hi, lo + 1 if lo < hi else lo, hi - 1 if hi > lo else hi, 0, 1})
        first = np.empty(shapes[0], dtype=object)
        first.ravel()[:] = [ext[int(i)] for i in rng.integers(len(ext), size=first.size)]
        return [first] + [_ints(rng, sh, 0, 1) for sh in shapes[1:]]

    fn.__name__ = fn.__qualname__ = "einsum_int_extremes" if extremes else "einsum_int"
    return fn


def _eq(name: str, equation: str, *templates: str, **kw) -> Shape:
    return Shape(name, {f"Inputs_{i}": tpl for i, tpl in enumerate(templates)}, {"equation": equation}, **kw)


#: The table of equations: (pattern name, equation, operand templates).
EINSUM_TABLE = (  # the integer types take a window of 6 patterns each, from the first 14
    _eq("transpose", "ij->ji", "MN"),
    _eq("trace", "ii->", "MM"),
    _eq("diagonal", "ii->i", "MM"),
    _eq("sum-axis", "ij->i", "MN"),
    _eq("inner", "i,i", "K", "K"),
    _eq("matmul", "ij,jk->ik", "MK", "KN"),
    _eq("batch-matmul/spaces", "bij, bjk -> bik", "SMK", "SKN"),
    _eq("ellipsis-broadcast", "...ij,...jk->...ik", "S1MK", "1PKN"),
    _eq("chain-3", "ij,jk,kl->il", "MK", "KP", "PN"),
    _eq("repeated-and-shared", "ii,ij->j", "MM", "MN"),
    _eq("bilinear", "i,ij,j->", "M", "MN", "N"),
    _eq("outer", "i,j->ij", "M", "N"),
    _eq("batch-diagonal/ellipsis", "...ii ->...i", "SMM"),
    _eq("zero-size/sum", "ij,jk->ik", "M0", "0N"),
    _eq("transpose/implicit", "ba", "MN"),
    _eq("permute-3d", "ijk->kij", "SMN"),
    _eq("scalar", "->", ""),
    _eq("trace/implicit", "ii", "MM"),
    _eq("sum-all", "ij->", "MN"),
    _eq("matmul/implicit", "ij,jk", "MK", "KN"),
    _eq("ellipsis/implicit", "...ij,...jk", "SMK", "SKN"),
    _eq("case/implicit-order", "ia,aJ", "MK", "KN"),
    _eq("frobenius", "ij,ij->", "MN", "MN"),
    _eq("case/explicit", "iB,Bj->ji", "MK", "KN"),
    _eq("attention-scores", "bhqd,bhkd->bhqk", "SHQD", "SHKD", dims={"H": (1, 2), "S": (1, 2)}),
    _eq("scalar-operand", ",ij->ij", "", "MN"),
    _eq("zero-size/batch", "bij->bji", "0MN"),
    _eq("long-dot", "i,i->", "L", "L", dims={"L": (1024, 4096)}, numerics=("positive",)),
    _eq("vector/matmul", "ij,jk->ik", "3L", "L2", dims={"L": (67, 67)}, numerics=("special",)),
)


_EINSUM_ERRORS = (
    Err("the equation has 2 terms for 1 operand", "term-count", {"equation": "ij,jk->ik"}, ((2, 3),)),
    Err("a term's length differs from its operand's rank", "term-rank", {"equation": "ijk->i"}, ((2, 3),)),
    Err("a letter has two different sizes (j: 3 and 4)", "size-mismatch", {"equation": "ij,jk->ik"},
        ((2, 3), (4, 2))),
    Err("a repeated letter in one term has two sizes (i: 2 and 3)", "diagonal-size", {"equation": "ii->i"},
        ((2, 3),)),
    Err("an output letter that no input term has", "output-letter", {"equation": "ij->ik"}, ((2, 3),)),
    Err("every occurrence of ellipsis must represent the same number of dimensions (1 and 2 here)",
        "ellipsis-lengths", {"equation": "...ij,...jk->...ik"}, ((2, 2, 3), (2, 2, 3, 4))),
)


def _einsum_per_type(version, combo) -> int:
    """Every pattern for the floating types (the long dot product needs the 16-bit types'
    accumulation), 6 per integer type (the patterns rotate over the types)."""
    return len(EINSUM_TABLE) if V.kind(combo["T"]) == V.FLOAT else 6


EINSUM = Entry(
    "Einsum", einsum_oracle, family="shaped", shapes=EINSUM_TABLE, tolerance=einsum_tolerance,
    attrs=(Attrs({"equation": "ij->ji"}, tag="equation"),),
    float_numerics={"wide": _einsum_wide, "special": _einsum_special, "positive": positive},
    int_numerics={"int": _einsum_int(False), "int-extremes": _einsum_int(True)},
    per_type=_einsum_per_type, errors=_EINSUM_ERRORS, notes={28: "bfloat16"},
)

ENTRIES = (MATMUL, GEMM, MATMUL_INTEGER, EINSUM, DET)
register_entries(ENTRIES, family="linalg")
