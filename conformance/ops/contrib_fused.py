"""onnxruntime's fused contrib operators (com.microsoft, onnxruntime-defined) as entries of the
operator table: Gelu, FastGelu, BiasGelu, QuickGelu (1), FusedMatMul, TransposeMatMul (1) and
FusedGemm (1).  Schemas (versions, types, attributes, defaults) come from onnxruntime's registry
(``conformance.opspec.op_spec(op, "com.microsoft")``); the oracles follow ContribOperators.md
(:mod:`conformance.reference.contrib_fused`, which says where the doc leaves a choice and what
onnxruntime's kernels and tests chose).

**Gelu family.**  Gelu (erf form) and QuickGelu (``x sigmoid(alpha x)``: Swish) are family
``unary`` (rank 0-4, zero-size), with the ai.onnx activations' classes (``special``: the special
values Gelu/Swish define -- NaN, +inf, subnormals, +-max --; ``near-overflow``; ``worst-points``
for Gelu) and tolerances (:func:`conformance.reference.activations.tolerance`: the variants'
spread, the unit floor, the erf/tanh/sigmoid budgets).  QuickGelu's ``alpha`` states: 0.5, 2,
-1 besides the default 1.702.  FastGelu (optional ``bias``) and BiasGelu (required ``B``) are
family ``shaped``: X/A of rank 1-4 (``[batch, sequence, hidden]`` the exported form) with the
bias over the last dimension, zero-size X with a bias and a zero-length last dimension with an
empty bias; classes ``normal`` (X uniform in [-6, 6], bias in [-1, 1]), ``wide`` (X and bias
over many binades, never near overflow), ``special`` (X the special values, bias ordinary:
``z = x + bias`` is NaN, +inf, tiny or +-max), ``worst-points`` (Gelu's, minus the bias).
Tolerance: the activation's rule on ``z``, with the sum rounded to T (or float32) as one more
legitimate variant, and for FastGelu ContribOperators.md's 6-digit constants as another
(:func:`conformance.reference.contrib_fused.gelu_variants`).  Errors: a bias whose length is
not the last dimension.

**FusedMatMul / TransposeMatMul.**  ``Y = alpha * matmul(A', B')`` with numpy.matmul semantics;
``transBatchA`` moves A's dimension 0 (its stored row dimension) behind the batch dimensions,
then ``transA`` swaps the last two (ContribOperators.md: "transposed on the 1st dimension and
batch dimensions (dim-1 to dim-rank-2)"; onnxruntime's own test builds its inputs the same way,
``[batch, N, M] -> [N, batch, M]``).  Shape tables from logical templates (the stored ones are
their inverse transposes, :func:`_mm`): 2-D in the four (transA, transB), 3-D in all sixteen
(transA, transB, transBatchA, transBatchB) and again at rank 4 with broadcast batch dimensions
(``[S, 1]`` against ``[1, P]``), square operands (a transpose ignored or applied to the other
operand is a wrong value, not a shape error), 3-D batch broadcasting with transBatch, rank 3 x 2, 2 x 3, 4 x 3, 1-D operands (never transposed themselves: "the last two
dimensions" do not exist for them and the readings differ; the other operand is), zero M, K
and batch, K = 67 with IEEE specials, long K (1024-2048, the float32 accumulation of the
16-bit types).  transBatch on an operand of rank < 3 or with operands of different ranks is
*contested*: the doc and numpy.matmul define it, onnxruntime's kernel rejects it.  ``alpha``
states 0.5, -2, 0.125.  Classes: ``normal`` and MatMul's ``wide``, ``special``, ``positive``
applied in the logical layout (:func:`_in_logical_space`).  Tolerance: MatMul's accumulation
bound with alpha's product (and the 16-bit types' product rounded to T before alpha),
:func:`conformance.reference.contrib_fused.fused_matmul_bound`.  Errors: mismatched K, a K that
only transA / transB / transBatchA makes wrong, a rank-0 operand.  TransposeMatMul ("duplicate
of FusedMatMul") has no transBatch attributes: the same table without them.

Types: every type the schemas allow (float16, float, double, bfloat16).  onnxruntime 1.32's CPU
provider has float kernels; other types either expand the schema's function body (Gelu float16,
FastGelu double) or are declined ("Could not find an implementation"): cases, not filtered.
"""

from __future__ import annotations

import math

import numpy as np

from .. import dtypes
from ..reference import activations as act
from ..reference import contrib_fused as ref
from ..reference import linalg as lref
from ..tolerance import Tolerance
from . import activations as acts
from . import linalg
from . import values as V
from .engine import register_entries
from .entry import Attrs, Entry, Err, Interval, Shape

MS = "com.microsoft"


def _lead(ctx) -> str:
    return next(iter(ctx.types.values()))


# ----------------------------------------------------------------------------- Gelu (erf form)
def gelu_oracle(ctx, x, **attrs):
    """com.microsoft Gelu: ``0.5 x (1 + erf(x / sqrt 2))`` (:func:`conformance.reference.contrib_fused.gelu_erf`)."""
    return ref.gelu_erf(x)


def _unary_variants(ctx, x, op: str, attrs: dict):
    elem = V.elem(ctx.out_types["Y"])
    with np.errstate(all="ignore"):
        e = dtypes.round_to(act.oracle(op, x, attrs), elem).astype(np.float64)
        return e, act.variants(op, x, attrs, elem)


def _unary_tolerance(op: str, attrs_of):
    def fn(ctx, inputs, attrs, outputs):
        t = ctx.out_types["Y"]
        a = attrs_of(attrs)
        e, var = _unary_variants(ctx, inputs[0], op, a)
        return {"Y": act.tolerance(op, e, var, V.elem(t), x=inputs[0], attrs=a)}

    fn.__name__ = fn.__qualname__ = f"{op.lower()}_tolerance"
    fn.__doc__ = (f"The ai.onnx {op} rule (:func:`conformance.reference.activations.tolerance`): the legitimate "
                  "variants' spread, the floor below which errors are absolute, the accuracy budget.")
    return fn


def _unary_defined(op: str, attrs_of):
    def fn(ctx, x, **attrs):
        """False where a legitimate variant overflows and the oracle rounded to T does not."""
        e, var = _unary_variants(ctx, x, op, attrs_of(attrs))
        ok = np.ones(e.shape, dtype=bool)
        for v in var.values():
            ok &= ~(np.isfinite(e) & ~np.isfinite(v))
        return ok

    fn.__name__ = fn.__qualname__ = f"{op.lower()}_defined"
    return fn


def _gelu_attrs(attrs) -> dict:
    return {"approximate": "none"}


def _swish_attrs(attrs) -> dict:
    return {"alpha": float(np.float32(attrs.get("alpha", 1.702)))}


def _special_as(op: str):
    def fn(rng, ctx, shapes):
        """The special values of the ai.onnx activation ``op`` (:func:`conformance.ops.activations.special_values`),
        once each, the rest uniform in [-4, 4], shuffled, as a vector.  With a negative ``alpha``
        (QuickGelu) no infinity: ``inf * sigmoid(-inf)`` is ``inf * 0`` (the ai.onnx Swish states
        are all positive)."""
        vals = acts.special_values(op, _lead(ctx))
        if float(ctx.attrs.get("alpha", 1.0) or 0.0) < 0:
            vals = [v for v in vals if not math.isinf(v)]
        n = max(int(np.prod(shapes[0], dtype=np.int64)), len(vals))
        x = np.concatenate([vals, rng.uniform(-4.0, 4.0, size=n - len(vals))])
        return [x[rng.permutation(n)]]

    fn.__name__ = fn.__qualname__ = f"special_as_{op.lower()}"
    return fn


GELU = Entry(
    "Gelu", gelu_oracle, domain=MS, values={"X": Interval(scale=6.0)},
    float_numerics={"special": _special_as("Gelu"), "near-overflow": acts._near_overflow,
                    "worst-points": acts._worst_points},
    nan=True, inf=False, specials=(math.inf,), defined=_unary_defined("Gelu", _gelu_attrs),
    tolerance=_unary_tolerance("Gelu", _gelu_attrs), per_type=10,
    ulps_source="the ai.onnx Gelu budget: " + act.ULP_BUDGET["Gelu"][1],
)


# ----------------------------------------------------------------------------- QuickGelu
def quick_gelu_oracle(ctx, x, alpha=1.702, **attrs):
    """com.microsoft QuickGelu: ``x sigmoid(alpha x)`` (:func:`conformance.reference.contrib_fused.quick_gelu`)."""
    return ref.quick_gelu(x, alpha)


QUICK_GELU = Entry(
    "QuickGelu", quick_gelu_oracle, domain=MS, values={"X": Interval(scale=6.0)},
    attrs=(Attrs({"alpha": 0.5}), Attrs({"alpha": 2.0}), Attrs({"alpha": -1.0}, tag="negative")),
    float_numerics={"special": _special_as("Swish"), "near-overflow": acts._near_overflow},
    nan=True, inf=False, specials=(math.inf,), defined=_unary_defined("Swish", _swish_attrs),
    tolerance=_unary_tolerance("Swish", _swish_attrs), per_type=8,
    ulps_source="the ai.onnx Swish budget: " + act.ULP_BUDGET["Swish"][1],
)


# ----------------------------------------------------------------------------- FastGelu, BiasGelu
def fast_gelu_oracle(ctx, x, bias=None, **attrs):
    """com.microsoft FastGelu: ``0.5 z (1 + tanh(sqrt(2/pi) (z + 0.044715 z^3)))``, ``z = X + bias``
    (bias absent: ``z = X``), float64 (:func:`conformance.reference.contrib_fused.gelu_tanh`)."""
    return ref.gelu_tanh(ref.add_bias(x, bias))


def bias_gelu_oracle(ctx, a, b, **attrs):
    """com.microsoft BiasGelu: ``Gelu(A + B)`` (erf form), B over A's last dimension, float64."""
    return ref.gelu_erf(ref.add_bias(a, b))


def _bias_op(ctx) -> str:
    return "FastGelu" if ctx.op == "FastGelu" else "BiasGelu"


def _bias_tolerance(ctx, inputs, attrs, outputs):
    """The activation's rule (:func:`conformance.reference.activations.tolerance` of Gelu, tanh form
    for FastGelu) on ``z = x + bias`` with :func:`conformance.reference.contrib_fused.gelu_variants`
    (the sum rounded to T or float32; FastGelu's documented 6-digit constants)."""
    (name, _), = outputs.items()
    t = ctx.out_types[name]
    elem = V.elem(t)
    x, bias = inputs[0], (inputs[1] if len(inputs) > 1 else None)
    approx = "tanh" if ctx.op == "FastGelu" else "none"
    z = ref.add_bias(x, bias)
    with np.errstate(all="ignore"):
        e = dtypes.round_to(act.oracle("Gelu", z, {"approximate": approx}), elem).astype(np.float64)
        var = ref.gelu_variants(_bias_op(ctx), x, bias, elem)
    return {name: act.tolerance("Gelu", e, var, elem, x=z, attrs={"approximate": approx})}


def _bias_draw(mode: str):
    def fn(rng, ctx, shapes):
        """Numerics class of FastGelu/BiasGelu (module docstring): ``normal``, ``wide``, ``special``,
        ``worst-points``; the bias (when present) ordinary in [-1, 1] except in ``wide``."""
        t = _lead(ctx)
        xs = shapes[0]
        n = int(np.prod(xs, dtype=np.int64))
        bias = [V.representable(rng.uniform(-1.0, 1.0, size=s), t) for s in shapes[1:]]
        if mode == "normal":
            x = rng.uniform(-6.0, 6.0, size=xs)
        elif mode == "wide":
            lo = math.log2(float(V.finfo(t).smallest_normal))
            hi = min(60.0, math.log2(float(V.finfo(t).max)) - 4)
            x = rng.choice([-1.0, 1.0], size=xs) * 2.0 ** rng.uniform(lo, hi, size=xs)
            bias = [V.representable(rng.choice([-1.0, 1.0], size=s) * 2.0 ** rng.uniform(-8, 3, size=s), t)
                    for s in shapes[1:]]
        elif mode == "special":
            vals = acts.special_values("Gelu", t)
            flat = np.concatenate([vals, rng.uniform(-4.0, 4.0, size=max(0, n - len(vals)))])[:n] if n else np.zeros(0)
            x = flat[rng.permutation(n)].reshape(xs)
        else:
            pts = np.asarray(act.WORST_POINTS["Gelu"], dtype=np.float64)
            grid = (pts[:, None] * (1.0 + np.linspace(-2e-3, 2e-3, 9))[None, :]).ravel()
            x = rng.choice(grid, size=xs)
            if bias:  # z = x + bias lands on the grid: x = grid - bias
                x = V.representable(x - np.broadcast_to(bias[0], xs), t)
        return [V.representable(np.asarray(x, dtype=np.float64), t)] + bias

    fn.__name__ = fn.__qualname__ = f"bias_gelu_{mode.replace('-', '_')}"
    return fn


BIAS_CLASSES = {m: _bias_draw(m) for m in ("normal", "wide", "special", "worst-points")}


def _bias_shapes(x: str, b: str) -> tuple[Shape, ...]:
    def sh(name, xt, bt, **kw):
        return Shape(name, {x: xt, b: bt}, **kw)

    return (
        sh("2d", "SN", "N"),
        sh("3d/batch-seq-hidden", "BSN", "N", dims={"N": (5, 17)}),
        sh("1d", "N", "N"),
        sh("4d", "BHSN", "N", dims={"B": (1, 2), "H": (1, 2)}),
        sh("3d/N=1", "BS1", "1"),
        sh("long-row", "2L", "L", dims={"L": (67, 67)}),
        sh("zero-size/batch", "0N", "N"),
        sh("zero-size/last", "S0", "0", cycle=False),
    )


def _bias_errors(x: str, b: str) -> tuple[Err, ...]:
    return (
        Err(f"{b} must have {x}'s last dimension (3), not 4", "bias-length", shapes=((2, 3), (4,))),
        Err(f"{b} is a 1-D tensor of {x}'s last dimension, not [2, 3]", "bias-rank", shapes=((2, 3), (2, 3))),
    )


FAST_GELU = Entry(
    "FastGelu", fast_gelu_oracle, family="shaped", domain=MS, shapes=_bias_shapes("X", "bias"),
    float_numerics=BIAS_CLASSES, numerics_classes=lambda t: tuple(BIAS_CLASSES), tolerance=_bias_tolerance,
    per_type=16, errors=_bias_errors("X", "bias"),
    ulps_source="the ai.onnx Gelu (tanh) budget: " + act.ULP_BUDGET["Gelu"][1],
)

BIAS_GELU = Entry(
    "BiasGelu", bias_gelu_oracle, family="shaped", domain=MS, shapes=_bias_shapes("A", "B"),
    float_numerics=BIAS_CLASSES, numerics_classes=lambda t: tuple(BIAS_CLASSES), tolerance=_bias_tolerance,
    per_type=12, errors=_bias_errors("A", "B"),
    ulps_source="the ai.onnx Gelu budget: " + act.ULP_BUDGET["Gelu"][1],
)



# ----------------------------------------------------------------------------- FusedMatMul, TransposeMatMul
_TRANS = ("transA", "transB", "transBatchA", "transBatchB")


def _flags(attrs) -> tuple[int, int, int, int]:
    return tuple(int(attrs.get(k, 0) or 0) for k in _TRANS)


def fused_matmul_oracle(ctx, a, b, alpha=1.0, transA=0, transB=0, transBatchA=0, transBatchB=0, **attrs):
    """com.microsoft FusedMatMul / TransposeMatMul: ``alpha * matmul(A', B')``, the transposes of
    :func:`conformance.reference.contrib_fused.logical` (``transBatch`` first, then ``trans``), the
    product exact (:func:`conformance.reference.contrib_fused.fused_matmul`)."""
    return ref.fused_matmul(a, b, alpha, transA, transB, transBatchA, transBatchB)


def fused_matmul_tolerance(ctx, inputs, attrs, outputs):
    """:func:`conformance.reference.contrib_fused.fused_matmul_bound` (MatMul's accumulation bound
    with alpha's product; the 16-bit types' rounding of the product to T before alpha), then the
    rounding to T on both sides (:func:`conformance.ops.linalg.bound_tolerance`)."""
    t = ctx.out_types["Y"]
    bound = ref.fused_matmul_bound(inputs[0], inputs[1], attrs.get("alpha", 1.0), _flags(attrs), t)
    return {"Y": linalg.bound_tolerance(t, bound, outputs["Y"])}


def _in_logical_space(fn):
    """A MatMul numerics class of :mod:`conformance.ops.linalg` (rows of A, columns of B, the
    inner dimension K) applied to the operands as numpy.matmul sees them, then laid out as
    stored (:func:`conformance.reference.contrib_fused.to_stored`)."""

    def g(rng, ctx, shapes):
        ta, tb, tba, tbb = _flags(ctx.attrs)
        lshapes = [ref.logical_shape(shapes[0], ta, tba), ref.logical_shape(shapes[1], tb, tbb)]
        a, b = fn(rng, ctx, lshapes)[:2]
        return [ref.to_stored(a, ta, tba), ref.to_stored(b, tb, tbb)]

    g.__name__ = g.__qualname__ = f"logical_{fn.__name__}"
    g.__doc__ = f"{fn.__doc__}\n\n(In the operands' logical layout: :func:`_in_logical_space`.)"
    return g


MATMUL_CLASSES = {"wide": _in_logical_space(linalg.wide("MatMul")),
                  "special": _in_logical_space(linalg.special("MatMul")),
                  "positive": _in_logical_space(linalg.positive)}


def _code(ta, tb, tba=0, tbb=0) -> str:
    return ("t" if ta else "n") + ("t" if tb else "n") + ("/batchA" if tba else "") + ("/batchB" if tbb else "")


def _mm(name, a, b, ta=0, tb=0, tba=0, tbb=0, **kw) -> Shape:
    """A pattern from the *logical* templates ``a`` (``[..., M, K]``) and ``b`` (``[..., K, N]``):
    the stored templates are their inverse transposes (:func:`conformance.reference.contrib_fused.stored_shape`)."""
    attrs = {k: 1 for k, v in zip(_TRANS, (ta, tb, tba, tbb)) if v}
    sa = "".join(ref.stored_shape(tuple(a), ta, tba))
    sb = "".join(ref.stored_shape(tuple(b), tb, tbb))
    return Shape(name, {"A": sa, "B": sb}, attrs, **kw)


def _matmul_shapes(batch: bool) -> tuple[Shape, ...]:
    """FusedMatMul's (``batch``) or TransposeMatMul's shape table (module docstring)."""
    out = [_mm(f"2d/{_code(ta, tb)}", "MK", "KN", ta, tb) for ta in (0, 1) for tb in (0, 1)]
    # square operands: a kernel that ignores a transpose or applies it to the other operand
    # computes a wrong value of the right shape (not a shape error)
    sq = {"S": (3, 3), "M": (3, 3), "K": (3, 3), "N": (3, 3)}
    out += [_mm("square/2d/tn", "MK", "KN", 1, 0, dims=sq), _mm("square/3d/nt", "SMK", "SKN", 0, 1, dims=sq)]
    if batch:
        out += [_mm("square/3d/tn/batchA", "SMK", "SKN", 1, 0, 1, 0, dims=sq),
                _mm("square/3d/nn/batchB", "SMK", "SKN", 0, 0, 0, 1, dims=sq)]
    if batch:
        out += [_mm(f"3d/{_code(ta, tb, tba, tbb)}", "SMK", "SKN", ta, tb, tba, tbb)
                for tba in (0, 1) for tbb in (0, 1) for ta in (0, 1) for tb in (0, 1)]
        # rank 4 with broadcast batch dimensions ([S, 1] against [1, P]) in all sixteen combinations
        out += [_mm(f"4d-broadcast/{_code(ta, tb, tba, tbb)}", "S1MK", "1PKN", ta, tb, tba, tbb)
                for tba in (0, 1) for tbb in (0, 1) for ta in (0, 1) for tb in (0, 1)]
        out += [
            _mm("4d/nt/batchA/batchB", "SPMK", "SPKN", 0, 1, 1, 1, dims={"P": (1, 3)}),
            _mm("3d-broadcast/nn/batchA", "1MK", "SKN", 0, 0, 1, 0),
            _mm("3d-broadcast/tt/batchB", "SMK", "1KN", 1, 1, 0, 1),
            _mm("zero-batch/nn/batchA", "0MK", "0KN", 0, 0, 1, 0),
            # transBatch on an operand of rank 2 or of another rank than the other operand: the doc
            # (dims 1..rank-2 are the batch: none for rank 2) and numpy.matmul define them, onnxruntime's
            # kernel (and its tests: 'is_trans_batch requires dim_size >= 3 and same dim size in both sides')
            # rejects them: contested (:func:`_contested`)
            _mm("contested/2d/batchA", "MK", "KN", 0, 0, 1, 0),
            _mm("contested/3d-x-2d/batchA", "SMK", "KN", 0, 0, 1, 0),
        ]
    else:
        out += [_mm(f"3d/{_code(ta, tb)}", "SMK", "SKN", ta, tb) for ta in (0, 1) for tb in (0, 1)]
        out += [_mm(f"4d-broadcast/{_code(ta, tb)}", "S1MK", "1PKN", ta, tb) for ta in (0, 1) for tb in (0, 1)]
    out += [
        _mm("3d-x-2d/tn", "SMK", "KN", 1, 0),
        _mm("2d-x-3d/nt", "MK", "SKN", 0, 1),
        _mm("4d-x-3d/tt", "S2MK", "2KN", 1, 1, dims={"S": (1, 3)}),
        # 1-D operands are never transposed (the doc's "last two dimensions" do not exist: onnxruntime
        # ignores trans for them, a promote-then-transpose reading would not): the other operand is
        _mm("1d-x-2d/nt", "K", "KN", 0, 1),
        _mm("2d-x-1d/tn", "MK", "K", 1, 0),
        _mm("3d-x-1d/tn", "SMK", "K", 1, 0),
        _mm("1d-x-1d", "K", "K", dims={"K": (1, 8)}),
        _mm("zero-M/tn", "0K", "KN", 1, 0),
        _mm("zero-K/tt", "M0", "0N", 1, 1),
        _mm("zero-batch/nt", "0MK", "KN", 0, 1),
        _mm("vector/K=67/nt", "3L", "L2", 0, 1, dims={"L": (67, 67)}, numerics=("special",)),
        _mm("long-K/tt", "2L", "L3", 1, 1, dims={"L": (1024, 2048)}, numerics=("positive",)),
    ]
    return tuple(out)


def _contested(ctx, attrs) -> str | None:
    """transBatchA/B on an operand of rank < 3 or with operands of different ranks (:func:`_matmul_shapes`)."""
    ra, rb = len(ctx.shapes.get("A", ())), len(ctx.shapes.get("B", ()))
    tba, tbb = int(attrs.get("transBatchA", 0) or 0), int(attrs.get("transBatchB", 0) or 0)
    if (tba or tbb) and (ra != rb or (tba and ra < 3) or (tbb and rb < 3)):
        return ("transBatchA/transBatchB on an operand of rank < 3 or with operands of different ranks: "
                "ContribOperators.md (transpose of dim 0 with dims 1..rank-2, then numpy.matmul) defines it, "
                "onnxruntime's kernel rejects it (its tests: 'is_trans_batch requires dim_size >= 3 and same "
                "dim size in both sides')")
    return None


MATMUL_ATTRS = (Attrs({"alpha": 0.5}, tag="alpha=0.5"), Attrs({"alpha": -2.0}, tag="alpha=-2"),
                Attrs({"alpha": 0.125}, tag="alpha=0.125"))


def _matmul_errors(batch: bool) -> tuple[Err, ...]:
    out = (
        Err("the inner dimensions differ (numpy.matmul: A' [..., M, K] x B' [..., K, N])", "inner-mismatch",
            shapes=((2, 3), (4, 2))),
        Err("with transA=1 A [2, 3] is [3, 2]: K = 2 does not match B's 3 (valid only if transA were ignored)",
            "transA-ignored", {"transA": 1}, ((2, 3), (3, 4))),
        Err("with transB=1 B [3, 4] is [4, 3]: K = 4 does not match A's 3 (valid only if transB were ignored)",
            "transB-ignored", {"transB": 1}, ((2, 3), (3, 4))),
        Err("numpy.matmul rejects a rank-0 operand", "scalar", shapes=((), (3,))),
    )
    if batch:
        out += (Err("with transBatchA=1 A [3, 2, 4] is [2, 3, 4]: batch 2 does not broadcast with B's 3 (valid "
                    "only if transBatchA were ignored)", "transBatchA-ignored", {"transBatchA": 1},
                    ((3, 2, 4), (3, 4, 5))),)
    return out


FUSED_MATMUL = Entry(
    "FusedMatMul", fused_matmul_oracle, family="shaped", domain=MS, shapes=_matmul_shapes(True),
    tolerance=fused_matmul_tolerance, attrs=MATMUL_ATTRS, float_numerics=MATMUL_CLASSES,
    per_type=len(_matmul_shapes(True)), errors=_matmul_errors(True), contested=_contested,
)

TRANSPOSE_MATMUL = Entry(
    "TransposeMatMul", fused_matmul_oracle, family="shaped", domain=MS, shapes=_matmul_shapes(False),
    tolerance=fused_matmul_tolerance, attrs=MATMUL_ATTRS, float_numerics=MATMUL_CLASSES,
    per_type=len(_matmul_shapes(False)), errors=_matmul_errors(False),
)



# ----------------------------------------------------------------------------- FusedGemm
def fused_gemm_oracle(ctx, a, b, c=None, alpha=1.0, beta=1.0, transA=0, transB=0, activation=None, **attrs):
    """com.microsoft FusedGemm: ``activation(alpha A' B' + beta C)``, the Gemm exact, the activation
    in float64 with its ``activation_*`` parameters (:func:`conformance.reference.contrib_fused.fused_gemm`);
    integer types: Python ints (Relu, ThresholdedRelu)."""
    return ref.fused_gemm(a, b, c, alpha, beta, transA, transB, activation, ref.activation_params(attrs))


def fused_gemm_tolerance(ctx, inputs, attrs, outputs):
    """Gemm's bound ``E`` (:func:`conformance.ops.linalg.gemm_tolerance`'s formula: ``gamma_{K+2}(u)
    (|alpha||A'||B'| + |beta||C|) + (K+2)(1+|alpha|) s``, plus for the 16-bit types the outer
    operations rounded to T) and, for the 16-bit types, the Gemm result rounded to T before the
    activation (``u_T |z|``: a Gemm then an activation node in T), carried through the
    activation's largest slope over ``[z - E, z + E]`` (:func:`conformance.reference.contrib_fused.local_slope`:
    a saturated Tanh passes almost none of it),
    plus the activation's own budget ``b eps(P) max(|y|, 1)`` in the compute precision P
    (:data:`conformance.reference.contrib_fused.ACTIVATION_ULPS`: the ai.onnx activations' table);
    then the rounding to T on both sides (:func:`conformance.ops.linalg.bound_tolerance`)."""
    t = ctx.out_types["Y"]
    if V.kind(t) != V.FLOAT:
        return {"Y": Tolerance(0.0, 0.0, exact=True)}
    a, b, c = inputs[0], inputs[1], inputs[2] if len(inputs) > 2 else None
    alpha, beta = attrs.get("alpha", 1.0), attrs.get("beta", 1.0)
    ta, tb = attrs.get("transA", 0), attrs.get("transB", 0)
    u, s = lref.ACC[t]
    u_t = float(V.finfo(t).eps) / 2
    k = np.shape(a)[0 if ta else 1]
    z = lref.gemm(a, b, c, alpha, beta, ta, tb)
    zf = np.where(np.isfinite(z), np.abs(z), 0.0)
    bound = lref.gamma(k + 2, u) * lref.gemm_abs(a, b, c, alpha, beta, ta, tb) + (k + 2) * (1 + abs(alpha)) * s
    if u_t > u:
        ab = np.abs(lref.gemm(a, b, None, 1.0, 0.0, ta, tb))
        ab = np.where(np.isfinite(ab), ab, 0.0)
        cc = 0.0 if c is None else abs(beta) * np.abs(np.broadcast_to(np.asarray(c, dtype=np.float64), ab.shape))
        bound = bound + lref.gamma(3, u_t) * (abs(alpha) * (ab + bound) + cc) + u_t * zf
    act_name = attrs.get("activation")
    params = ref.activation_params(attrs)
    y = np.asarray(outputs["Y"], dtype=np.float64)
    y = np.where(np.isfinite(y), np.abs(y), 0.0)
    eps_p = 2 * u
    slope = ref.local_slope(act_name, z, bound, params)
    bound = slope * bound + ref.ACTIVATION_ULPS[act_name] * eps_p * np.maximum(y, 1.0)
    return {"Y": linalg.bound_tolerance(t, bound, outputs["Y"])}


def _gemm_shapes() -> tuple[Shape, ...]:
    tr = {"nn": {}, "tn": {"transA": 1}, "nt": {"transB": 1}, "tt": {"transA": 1, "transB": 1}}
    ab = {"nn": ("MK", "KN"), "tn": ("KM", "KN"), "nt": ("MK", "NK"), "tt": ("KM", "NK")}
    out = [Shape(f"{k}/C=MN", {"A": ab[k][0], "B": ab[k][1], "C": "MN"}, tr[k]) for k in tr]
    # C unidirectionally broadcast to [M, N] (as Gemm-7+): scalar, [1], [N], [1, N], [M, 1], [1, 1]
    for k, cs in (("nn", "N"), ("nt", "1N"), ("tn", "M1"), ("tt", ""), ("nn", "1"), ("nt", "11")):
        name = {"": "scalar", "1": "one", "N": "row", "1N": "row-2d", "M1": "column", "11": "1x1"}[cs]
        out.append(Shape(f"{k}/C={name}", {"A": ab[k][0], "B": ab[k][1], "C": cs}, tr[k]))
    sq = {"M": (3, 3), "K": (3, 3), "N": (3, 3)}
    out += [
        # square: transA ignored, or the activation applied before C is added, is a wrong value
        Shape("square/tn/C=MN", {"A": "KM", "B": "KN", "C": "MN"}, tr["tn"], dims=sq),
        Shape("nn/zero-K", {"A": "M0", "B": "0N", "C": "MN"}),
        Shape("tn/zero-M", {"A": "K0", "B": "KN", "C": "1N"}, tr["tn"]),
        Shape("nt/size1", {"A": "1K", "B": "1K", "C": "11"}, tr["nt"]),
        Shape("nn/vector/K=67", {"A": "3L", "B": "L2", "C": "32"}, dims={"L": (67, 67)}, numerics=("special",)),
        Shape("tt/long-K", {"A": "L2", "B": "3L", "C": "3"}, tr["tt"], dims={"L": (1024, 2048)},
              numerics=("positive",)),
    ]
    return tuple(out)


def _act(name: str, tag: str | None = None, **kw) -> Attrs:
    vals = {"activation": name, **{f"activation_{k}": v for k, v in kw.items() if k in ("alpha", "beta", "gamma")}}
    vals.update({k[len("gemm_"):]: v for k, v in kw.items() if k.startswith("gemm_")})
    return Attrs(vals, tag=tag or name)


#: Every activation onnxruntime's FusedGemm creates, with its required parameters (values exact in
#: float16), and some with Gemm's alpha/beta non-default.
GEMM_ATTRS = (
    _act("Relu"), _act("Tanh"), _act("Sigmoid"), _act("Softplus"), _act("Softsign"),
    _act("LeakyRelu", alpha=0.125), _act("HardSigmoid", alpha=0.25, beta=0.5), _act("Elu", alpha=0.5),
    _act("Selu", alpha=1.5, gamma=1.25), _act("Celu", alpha=0.75), _act("ThresholdedRelu", alpha=0.5),
    _act("ParametricSoftplus", alpha=2.0, beta=0.5), _act("ScaledTanh", alpha=1.5, beta=0.5),
    _act("LeakyRelu", "LeakyRelu/negative-alpha/scaled", alpha=-0.5, gemm_alpha=0.5, gemm_beta=-1.5),
    _act("Tanh", "Tanh/integral", gemm_alpha=2.0, gemm_beta=3.0),
    _act("Relu", "Relu/beta=0", gemm_beta=0.0),
    _act("Relu", "Relu/integral", gemm_alpha=2.0, gemm_beta=3.0),
    _act("Sigmoid", "Sigmoid/negative", gemm_alpha=-1.0, gemm_beta=-0.25),
    _act("ThresholdedRelu", "ThresholdedRelu/integral", alpha=1.0, gemm_alpha=2.0, gemm_beta=1.0),
)

#: Activations whose formula propagates NaN and maps +-inf to a defined value (the ``special``
#: class): not HardSigmoid / ThresholdedRelu (min/max and a comparison drop NaN: the ai.onnx
#: activations do not generate NaN for them either), not Softsign (``inf / (1 + inf)``).
SPECIAL_ACTIVATIONS = ("Relu", "LeakyRelu", "Tanh", "Sigmoid", "Softplus", "Elu", "Selu", "Celu",
                       "ParametricSoftplus", "ScaledTanh")
#: Activations the ``positive`` class (long-K accumulation, every z > 0) is worth: those that are
#: the identity or close to it for positive z, so the accumulation error reaches the output (a
#: saturated Tanh/Sigmoid hides it; a LeakyRelu or HardSigmoid case would show nothing of its own).
POSITIVE_ACTIVATIONS = (None, "Relu", "Softplus", "Elu", "Selu", "Celu", "ParametricSoftplus")
#: The activations that keep integers integral (the integer types' states).
INT_ACTIVATIONS = ("Relu", "ThresholdedRelu")


def gemm_numerics_rule(version, numerics, attrs, optional) -> bool:
    """Gemm's rule (:func:`conformance.ops.linalg.gemm_numerics_rule`: integer classes with alpha and
    beta in {0..3}, ``special`` not with alpha = 0), ``special`` only with an activation of
    :data:`SPECIAL_ACTIVATIONS`, ``positive`` only with one of :data:`POSITIVE_ACTIVATIONS`."""
    if not linalg.gemm_numerics_rule(version, numerics, attrs, optional):
        return False
    if numerics == "special":
        return attrs.get("activation") in SPECIAL_ACTIVATIONS
    if numerics == "positive":
        return attrs.get("activation") in POSITIVE_ACTIVATIONS
    return True


def _combination_states(version, combo, attrs) -> bool:
    """Integer types take only the states whose activation keeps integers integral (Relu,
    ThresholdedRelu, or none) with integral non-negative Gemm alpha and beta."""
    if V.kind(combo["T"]) != V.INT:
        return True
    return (attrs.get("activation") in (None,) + INT_ACTIVATIONS
            and attrs.get("alpha", 1.0) in (0.0, 1.0, 2.0, 3.0) and attrs.get("beta", 1.0) in (0.0, 1.0, 2.0, 3.0))


def _gemm_contested(ctx, attrs) -> str | None:
    """No ``activation``: the schema makes it optional without a default and ContribOperators.md
    says only "the same as Gemm besides it includes attributes activation and leaky_relu_alpha"
    (an attribute the schema does not have); onnxruntime's kernel rejects a node without it
    ("unknown kernel type").  The oracle reads it as a plain Gemm."""
    if attrs.get("activation") is None:
        return ("FusedGemm without activation: optional in the schema, undefined by ContribOperators.md, "
                "rejected by onnxruntime's kernel ('unknown kernel type'); computed as a plain Gemm")
    return None


def _gemm_per_type(version, combo) -> int:
    return 40 if V.kind(combo["T"]) == V.FLOAT else 6


_GEMM_ERRORS = (
    Err("an activation onnxruntime's FusedGemm does not create ('unknown kernel type'): Gelu", "unknown-activation",
        {"activation": "Gelu"}, ((2, 3), (3, 4), (4,))),
    Err("the inner dimensions differ (A [M, K], B [K, N])", "inner-mismatch", {"activation": "Relu"},
        ((2, 3), (4, 2), (2,))),
    Err("with transA=1 A [2, 3] is [3, 2]: K = 2 does not match B's 3 (valid only if transA were ignored)",
        "transA-ignored", {"activation": "Relu", "transA": 1}, ((2, 3), (3, 4), (4,))),
    Err("C [3] is not unidirectionally broadcastable to (M, N) = (2, 4) (the bias of the wrong length)",
        "C-not-broadcastable", {"activation": "Relu"}, ((2, 3), (3, 4), (3,))),
    Err("A must be 2-D (as Gemm: 'input tensor A has dimension (M X K)')", "A-rank3", {"activation": "Relu"},
        ((2, 3, 4), (4, 2), (2,))),
)

FUSED_GEMM = Entry(
    "FusedGemm", fused_gemm_oracle, family="shaped", domain=MS, shapes=_gemm_shapes(),
    tolerance=fused_gemm_tolerance, attrs=GEMM_ATTRS,
    float_numerics={"wide": linalg.wide("Gemm"), "special": linalg.special("Gemm"), "positive": linalg.positive},
    int_numerics={"int": linalg.int_class("Gemm"), "int-extremes": linalg.int_extremes("Gemm")},
    numerics_rule=gemm_numerics_rule, combination_states=_combination_states, contested=_gemm_contested,
    per_type=_gemm_per_type, errors=_GEMM_ERRORS,
)

ENTRIES = (GELU, FAST_GELU, BIAS_GELU, QUICK_GELU, FUSED_MATMUL, TRANSPOSE_MATMUL, FUSED_GEMM)
register_entries(ENTRIES, family="contrib_fused")
