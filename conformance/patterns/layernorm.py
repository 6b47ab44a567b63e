"""Layer patterns of LayerNormalization: the decomposed form, the RMS form, residual + LN.

Forms (what exporters emit):

* ``LayerNormalization.decomposed``: torch.onnx below opset 17 (and tf2onnx, Keras'
  ``LayerNormalization``): ``m = ReduceMean(X); d = Sub(X, m); v = ReduceMean(Pow(d, 2));
  Y = Add(Mul(Div(d, Sqrt(Add(v, eps))), scale), bias)``.  onnxruntime's ``LayerNormFusion``
  (level basic/extended) turns it into ``LayerNormalization``.
* ``LayerNormalization.rms``: the T5 / LLaMA RMSNorm: ``Y = Mul(Div(X, Sqrt(Add(ReduceMean(Pow(X,
  2)), eps))), scale)`` or with ``Reciprocal`` and ``Mul``; ``SimplifiedLayerNormFusion`` turns it
  into ``SimplifiedLayerNormalization``; ai.onnx RMSNormalization-23 is the fused operator.
* ``LayerNormalization.residual``: ``S = Add(X, R)`` then LayerNormalization (the op from opset
  17, else decomposed); ``SkipLayerNormFusion`` makes ``com.microsoft.SkipLayerNormalization``.
  The sum may also be a graph output (the residual stream continues).

Variation axes (the rewrites' preconditions): where the parameters live (``params``), the
scale's and bias' shapes (full ``[D]``, ``[1]``, scalar, leading ones ``[1, D]``), epsilon,
operand order of the scale's Mul, an intermediate exposed as a graph output, shapes with size 1
and 0 (an empty batch).  Near-misses (valid graphs that are not the layer, which a correct
optimizer leaves alone): exponent 3, ``Sub(m, X)`` (operands swapped), a scale broadcasting to
a larger shape than X, the normalized axis not the last.
"""

from __future__ import annotations

import numpy as np

from ..ops.schedule import EXPORTER_OPSETS
from .core import BF16_NOTE, Builder, Fused, Pattern, register_patterns

FAMILY = "layernorm"
_SHAPES = ("BSD", "ND", "D1", "zero-batch", "N1")
_PARAM_SHAPES = ("full", "one", "scalar", "leading-ones")


def _x_shape(b: Builder) -> tuple[int, ...]:
    r = b.rng
    kind = b.v.get("shape", "BSD")
    d = int(r.integers(2, 17))
    if kind == "BSD":
        return (int(r.integers(1, 3)), int(r.integers(1, 5)), d)
    if kind == "ND":
        return (int(r.integers(2, 6)), d)
    if kind == "D1":  # one row
        return (1, d)
    if kind == "zero-batch":  # an empty batch: valid, the output is empty
        return (0, d)
    if kind == "N1":  # a normalized axis of size 1: x - m = 0, Y = bias
        return (int(r.integers(2, 5)), 1)
    raise ValueError(kind)


def _param_shape(kind: str, x: tuple[int, ...], axis: int = -1) -> tuple[int, ...]:
    d = x[axis]
    if kind == "full":
        return (d,) if axis == -1 else tuple(x[axis % len(x):])
    if kind == "one":
        return (1,)
    if kind == "scalar":
        return ()
    if kind == "leading-ones":
        return (1, d) if axis == -1 else (1,) + tuple(x[axis % len(x):])
    if kind == "larger":  # broadcasts X to a larger shape: not a LayerNormalization's Scale
        return (2,) + (1,) * (len(x) - 1) + (d,) if len(x) >= 1 else (2, d)
    raise ValueError(kind)


def reduce_mean(b: Builder, x: str, axes: list[int], name: str | None = None) -> str:
    """``ReduceMean(x)`` over ``axes`` with keepdims, as the opset writes it (an attribute below 18,
    an input from 18)."""
    if b.opset >= 18:
        ax = b.const(f"axes{len(b._nodes)}", np.array(axes, dtype=np.int64))
        return b.node("ReduceMean", (x, ax), keepdims=1)
    return b.node("ReduceMean", (x,), axes=list(axes), keepdims=1)


def _ln_chain(b: Builder, x: str, axes, scale: str | None, bias: str | None) -> str:
    """The decomposed LayerNormalization of ``x`` over ``axes`` (an int or a list), honouring the
    near-miss axes ``exponent``, ``sub_order`` and ``eps_place`` and the ``mul_order`` axis."""
    axes = [axes] if isinstance(axes, int) else list(axes)
    m = reduce_mean(b, x, axes)
    d = b.node("Sub", (m, x) if b.v.get("sub_order") == "swapped" else (x, m))
    two = b.param("two", np.array(float(b.v.get("exponent", 2.0))))
    p = b.node("Pow", (d, two))
    v = reduce_mean(b, p, axes)
    eps = b.param("epsilon", np.array(b.v.get("epsilon", 1e-5)))
    if b.v.get("eps_place") == "outside":  # d / (sqrt(v) + eps): not a LayerNormalization
        s = b.node("Add", (b.node("Sqrt", (v,)), eps))
    else:
        s = b.node("Sqrt", (b.node("Add", (v, eps)),))
    n = b.node("Div", (d, s))
    y = n
    if scale is not None:
        y = b.node("Mul", (scale, n) if b.v.get("mul_order") == "scale-first" else (n, scale))
    if bias is not None:
        y = b.node("Add", (y, bias))
    return y


def _build_decomposed(b: Builder) -> None:
    xs = _x_shape(b)
    axis = -2 if b.v.get("axis") == "not-last" else -1
    two_axes = b.v.get("norm_axes") == "last-two" and axis == -1
    if axis == -2 and xs[-2] == 0:  # the reduced axis must not be empty ("undefined")
        xs = xs[:-2] + (3, xs[-1])
    if two_axes:  # LayerNormalization with axis=-2: a leading batch dimension kept (an empty one too)
        xs = (xs[0],) + (int(b.rng.integers(1, 4)),) + xs[-1:] if xs[0] == 0 or len(xs) == 2 else xs
    sd = float(b.rng.uniform(0.5, 2.0))
    # a large mean against the spread ("offset"): the one-pass variance E[x^2] - E[x]^2 of a fused
    # kernel cancels (docs/tolerance.md, LayerNormalization: not a legitimate variant)
    off = float(b.rng.choice((-1.0, 1.0))) * 64 * sd if b.v.get("offset") == "large" else float(b.rng.uniform(-2, 2))
    x_val = b.data(xs, scale=sd, offset=off)
    if b.v.get("exponent", 2.0) != 2.0 and x_val.size:
        # one large value per normalized row: a positive third central moment, so the near-miss
        # has finite outputs (mean(d^3) + eps > 0) that differ from the LayerNormalization's
        x_val = b.data(xs, scale=0.1, offset=float(b.rng.uniform(-2, 2)))
        ax = axis % len(xs)
        rows = np.moveaxis(x_val, ax, -1)
        rows[..., int(b.rng.integers(rows.shape[-1]))] += 3.0
        x_val = _round_like(b, np.moveaxis(rows, -1, ax))
    x = b.input("X", x_val)
    sk = b.v.get("scale_shape", "full")
    if two_axes:
        sshape = _param_shape(sk, xs, -2)
    else:
        sshape = _param_shape(sk, xs, -1) if axis == -1 else ((xs[-2], 1) if sk == "full" else _param_shape(sk, xs))
    scale = b.param("scale", b.data(sshape, lo=0.5, hi=1.5) * np.where(b.rng.random(sshape) < 0.3, -1, 1))
    bias = None
    if b.v.get("bias", "present") == "present":
        if two_axes:
            bshape = _param_shape(b.v.get("bias_shape", "full"), xs, -2)
        else:
            bshape = _param_shape(b.v.get("bias_shape", "full"), xs, -1) if axis == -1 else (xs[-2], 1)
        bias = b.param("bias", b.data(bshape, scale=0.5))
    y = _ln_chain(b, x, [-2, -1] if two_axes else axis, scale, bias)
    if b.v.get("expose") == "sub":  # the centred X also leaves the graph: a fusion must keep it
        b.output(y, "sub")
    else:
        b.output(y)


def _round_like(b: Builder, v: np.ndarray) -> np.ndarray:
    """``v`` rounded to the case's type (as float64)."""
    from .. import dtypes

    return dtypes.round_to(np.asarray(v, dtype=np.float64), b.elem).astype(np.float64)


def _fused_ln(b: Builder, built) -> Fused | None:
    """LayerNormalization-17 over the last axis, where the graph is one (not a near-miss)."""
    v = b.v
    if v.get("exponent", 2.0) != 2.0 or v.get("sub_order") == "swapped" or v.get("axis") == "not-last" \
            or v.get("scale_shape") == "larger" or v.get("eps_place") == "outside":
        return None
    eps = float(np.float32(built.value("epsilon")))
    ins = ("X", "scale") + (("bias",) if "bias" in built.types else ())
    axis = -2 if v.get("norm_axes") == "last-two" else -1
    return Fused("LayerNormalization", 17, ins, {"axis": axis, "epsilon": eps}, built.outputs[0])


DECOMPOSED = Pattern(
    "LayerNormalization.decomposed", FAMILY, "LayerNormalization",
    "torch.onnx LayerNorm below opset 17 / tf2onnx / keras2onnx: ReduceMean, Sub, Pow, ReduceMean, Add, Sqrt, "
    "Div, Mul, Add",
    _build_decomposed,
    axes={"params": ("initializer", "constant", "input"), "scale_shape": _PARAM_SHAPES,
          "bias_shape": ("full", "one", "leading-ones"), "epsilon": (1e-5, 1e-12, 1e-6), "shape": _SHAPES,
          "mul_order": ("normalized-first", "scale-first"), "expose": ("none", "none", "sub"),
          "bias": ("present", "present", "absent"), "norm_axes": ("last", "last-two"),
          "offset": ("moderate", "large")},
    near_misses={"exponent": (3.0,), "sub_order": ("swapped",), "scale_shape": ("larger",), "axis": ("not-last",),
                 "eps_place": ("outside",)},
    opsets=EXPORTER_OPSETS, fused=_fused_ln,
    targets={"onnxruntime": ("LayerNormalization",)},
    notes=BF16_NOTE,
)


# ----------------------------------------------------------------------------- RMS
def _build_rms(b: Builder) -> None:
    xs = _x_shape(b)
    axis = -2 if b.v.get("axis") == "not-last" else -1
    if axis == -2 and xs[-2] == 0:
        xs = xs[:-2] + (3, xs[-1])
    offset = float(b.rng.uniform(-0.5, 0.5)) if b.v.get("exponent", 2.0) == 2.0 else 3.0  # x^3 > 0: finite
    x = b.input("X", b.data(xs, scale=float(b.rng.uniform(0.5, 2.0)) if offset != 3.0 else 0.5, offset=offset))
    sk = b.v.get("scale_shape", "full")
    sshape = _param_shape(sk, xs, -1) if axis == -1 else ((xs[-2], 1) if sk == "full" else _param_shape(sk, xs))
    scale = b.param("scale", b.data(sshape, lo=0.5, hi=1.5))
    two = b.param("two", np.array(float(b.v.get("exponent", 2.0))))
    p = b.node("Pow", (x, two))
    v = reduce_mean(b, p, [axis])
    eps = b.param("epsilon", np.array(b.v.get("epsilon", 1e-6)))
    if b.v.get("eps_place") == "outside":  # x / (sqrt(ms) + eps): not an RMSNormalization
        s = b.node("Add", (b.node("Sqrt", (v,)), eps))
    else:
        s = b.node("Sqrt", (b.node("Add", (v, eps)),))
    if b.v.get("form") == "reciprocal":
        r = b.node("Reciprocal", (s,))
        n = b.node("Mul", (x, r))
    else:
        n = b.node("Div", (x, s))
    y = b.node("Mul", (scale, n) if b.v.get("mul_order") == "scale-first" else (n, scale))
    b.output(y)


def _fused_rms(b: Builder, built) -> Fused | None:
    v = b.v
    if v.get("exponent", 2.0) != 2.0 or v.get("axis") == "not-last" or v.get("scale_shape") == "larger" \
            or v.get("eps_place") == "outside":
        return None
    eps = float(np.float32(built.value("epsilon")))
    return Fused("RMSNormalization", 23, ("X", "scale"), {"axis": -1, "epsilon": eps}, built.outputs[0])


RMS = Pattern(
    "LayerNormalization.rms", FAMILY, "RMSNormalization",
    "T5 / LLaMA RMSNorm (transformers, torch.onnx): Pow, ReduceMean, Add, Sqrt, Div (or Reciprocal, Mul), Mul",
    _build_rms,
    axes={"params": ("initializer", "constant", "input"), "scale_shape": _PARAM_SHAPES,
          "epsilon": (1e-6, 1e-5, 1e-12), "shape": _SHAPES, "form": ("div", "reciprocal"),
          "mul_order": ("normalized-first", "scale-first")},
    near_misses={"exponent": (3.0,), "scale_shape": ("larger",), "axis": ("not-last",), "eps_place": ("outside",)},
    opsets=EXPORTER_OPSETS, fused=_fused_rms,
    targets={"onnxruntime": ("SimplifiedLayerNormalization", "RMSNormalization")},
    notes=BF16_NOTE,
)


# ----------------------------------------------------------------------------- residual
def _build_residual(b: Builder) -> None:
    xs = _x_shape(b)
    x = b.input("X", b.data(xs, offset=float(b.rng.choice((-64.0, 64.0))) if b.v.get("offset") == "large" else 0.0))
    r = b.input("R", b.data(xs, scale=0.5)) if b.v.get("skip") == "input" else \
        b.param("R", b.data(xs[-1:], scale=0.5))
    s = b.node("Add", (r, x) if b.v.get("add_order") == "skip-first" else (x, r))
    scale = b.param("scale", b.data(_param_shape(b.v.get("scale_shape", "full"), xs, -1), lo=0.5, hi=1.5))
    bias = b.param("bias", b.data(_param_shape("full", xs, -1), scale=0.5))
    if b.v.get("ln") == "op" and b.opset >= 17:
        eps = float(np.float32(b.v.get("epsilon", 1e-5)))
        y = b.node("LayerNormalization", (s, scale, bias), axis=-1, epsilon=eps)
    else:
        y = _ln_chain(b, s, -1, scale, bias)
    if b.v.get("expose") == "sum":
        b.output(y, s)
    else:
        b.output(y)


RESIDUAL = Pattern(
    "LayerNormalization.residual", FAMILY, "LayerNormalization",
    "transformer block (BERT, GPT-2 post/pre-LN): Add(X, residual) then LayerNormalization (the op from opset 17, "
    "else decomposed)",
    _build_residual,
    axes={"params": ("initializer", "constant", "input"), "ln": ("op", "decomposed"),
          "skip": ("input", "input", "param"), "add_order": ("x-first", "skip-first"),
          "scale_shape": ("full", "one", "scalar"), "expose": ("none", "sum"), "shape": ("BSD", "ND", "zero-batch"),
          "epsilon": (1e-5, 1e-12), "offset": ("moderate", "large")},
    opsets=EXPORTER_OPSETS,
    targets={"onnxruntime": ("com.microsoft:SkipLayerNormalization",)},
    notes=BF16_NOTE,
)

PATTERNS = (DECOMPOSED, RMS, RESIDUAL)
register_patterns(PATTERNS, FAMILY)
