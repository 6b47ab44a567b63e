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
from ..tolerance import Tolerance
from . import activations as acts
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
        once each, the rest uniform in [-4, 4], shuffled, as a vector."""
        vals = acts.special_values(op, _lead(ctx))
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

ENTRIES = (GELU, FAST_GELU, BIAS_GELU, QUICK_GELU)
register_entries(ENTRIES, family="contrib_fused")
