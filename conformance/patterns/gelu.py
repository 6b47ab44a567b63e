"""Layer patterns of the Gelu family: the erf form, the tanh form, Swish.

Forms (what exporters emit):

* ``Gelu.erf``: ``torch.nn.GELU()`` below opset 20 (BERT's gelu): ``Y = Mul(Mul(X, Add(Erf(Div(X,
  sqrt(2))), 1)), 0.5)``; written with ``Mul(X, 1/sqrt(2))`` by some exporters and with the 0.5
  applied to X first (``Mul(Mul(X, 0.5), ...)``: HF's ``0.5 * x * (1 + erf(x / sqrt(2)))``).
  onnxruntime's ``GeluFusion`` makes ``com.microsoft.Gelu``; ai.onnx Gelu-20 (``approximate=
  "none"``) is the fused operator.  Near-miss: the divisor is not sqrt(2) (1.5).
* ``Gelu.tanh``: ``torch.nn.GELU(approximate="tanh")`` / GPT-2's ``gelu_new``: ``0.5 x (1 +
  tanh(sqrt(2/pi) (x + 0.044715 x^3)))`` with ``Pow(X, 3)`` or ``Mul(Mul(X, X), X)``;
  ``FastGeluFusion`` makes ``com.microsoft.FastGelu``; Gelu-20 ``approximate="tanh"`` is the fused
  operator; also the factored form ``sqrt(2/pi) x (1 + 0.044715 x x)`` (Megatron, HF's
  ``gelu_fast``) (GPT-2 computes ``(0.5 * x) * (1 + tanh(...))``: the 0.5 applied to X first is the
  canonical form).  onnxruntime 1.32's FastGeluFusion matches Pow only at versions 7, 12, 13 and
  float on CPU: from opset 15 (Pow-15) the Pow form is never fused.  Near-miss: the cubic
  coefficient is 0.05.
* ``Swish``: ``torch.nn.SiLU`` / Keras ``swish``: ``Mul(X, Sigmoid(X))`` (either operand order),
  and the scaled form ``Mul(X, Sigmoid(Mul(X, alpha)))`` (QuickGelu: alpha 1.702);
  ``QuickGeluFusion`` makes ``com.microsoft.QuickGelu``; ai.onnx Swish-24 is the fused operator.
  Near-miss: the Mul takes another tensor than the Sigmoid's input (``Mul(Y, Sigmoid(X))``).
"""

from __future__ import annotations

import math

import numpy as np

from ..ops.schedule import EXPORTER_OPSETS
from .core import BF16_NOTE, Builder, Fused, Pattern, register_patterns

FAMILY = "gelu"
_SHAPES = ("BSD", "ND", "rank0", "zero")


def _x_shape(b: Builder) -> tuple[int, ...]:
    r = b.rng
    kind = b.v.get("shape", "BSD")
    if kind == "BSD":
        return (int(r.integers(1, 3)), int(r.integers(1, 5)), int(r.integers(2, 17)))
    if kind == "ND":
        return (int(r.integers(2, 6)), int(r.integers(1, 9)))
    if kind == "rank0":
        return ()
    if kind == "zero":
        return (0, int(r.integers(1, 5)))
    raise ValueError(kind)


def _x(b: Builder) -> str:
    return b.input("X", b.data(_x_shape(b), scale=2.0))


def _halve(b: Builder, x: str, rest: str) -> str:
    """``0.5 * x * rest`` in the order the ``half`` axis says."""
    half = b.param("half", np.array(0.5))
    if b.v.get("half", "last") == "first":
        xh = b.node("Mul", (x, half))
        return b.node("Mul", (xh, rest))
    xr = b.node("Mul", (x, rest) if b.v.get("x_order", "x-first") == "x-first" else (rest, x))
    return b.node("Mul", (xr, half))


def _build_erf(b: Builder) -> None:
    x = _x(b)
    div = float(b.v.get("divisor", math.sqrt(2.0)))
    if b.v.get("form", "div") == "div":
        s = b.node("Div", (x, b.param("sqrt2", np.array(div))))
    else:
        s = b.node("Mul", (x, b.param("inv_sqrt2", np.array(1.0 / div))))
    e = b.node("Erf", (s,))
    one = b.param("one", np.array(1.0))
    a = b.node("Add", (e, one))
    b.output(_halve(b, x, a))


def _fused_gelu(approximate: str):
    def fused(b: Builder, built) -> Fused | None:
        if b.v.get("divisor", math.sqrt(2.0)) != math.sqrt(2.0) or b.v.get("coefficient", 0.044715) != 0.044715:
            return None
        return Fused("Gelu", 20, ("X",), {"approximate": approximate}, built.outputs[0])
    return fused


ERF = Pattern(
    "Gelu.erf", FAMILY, "Gelu",
    "torch.nn.GELU() below opset 20 / BERT gelu: Div, Erf, Add, Mul, Mul",
    _build_erf,
    axes={"params": ("initializer", "constant", "input"), "form": ("div", "mul"), "half": ("last", "first"),
          "x_order": ("x-first", "x-second"), "shape": _SHAPES},
    near_misses={"divisor": (1.5,)},
    opsets=EXPORTER_OPSETS, fused=_fused_gelu("none"),
    targets={"onnxruntime": ("com.microsoft:Gelu", "Gelu", "com.microsoft:BiasGelu")},
    notes=BF16_NOTE,
)


def _build_tanh(b: Builder) -> None:
    x = _x(b)
    coef = float(b.v.get("coefficient", 0.044715))
    cube = b.v.get("cube", "pow")
    if cube == "factored":  # sqrt(2/pi) x (1 + 0.044715 x x): Megatron / HF's "gelu_fast"
        m1 = b.node("Mul", (x, b.param("coefficient", np.array(coef))))
        m2 = b.node("Mul", (m1, x))
        a1 = b.node("Add", (m2, b.param("one_inner", np.array(1.0))))
        m4 = b.node("Mul", (x, b.param("sqrt_2_over_pi", np.array(math.sqrt(2.0 / math.pi)))))
        k = b.node("Mul", (m4, a1))
    else:
        if cube == "pow":
            x3 = b.node("Pow", (x, b.param("three", np.array(3.0))))
        else:
            x2 = b.node("Mul", (x, x))
            x3 = b.node("Mul", (x2, x))
        c = b.node("Mul", (x3, b.param("coefficient", np.array(coef))))
        inner = b.node("Add", (x, c))
        k = b.node("Mul", (inner, b.param("sqrt_2_over_pi", np.array(math.sqrt(2.0 / math.pi)))))
    t = b.node("Tanh", (k,))
    a = b.node("Add", (t, b.param("one", np.array(1.0))))
    b.output(_halve(b, x, a))


TANH = Pattern(
    "Gelu.tanh", FAMILY, "Gelu",
    "torch.nn.GELU(approximate='tanh') / GPT-2 gelu_new: Pow (or Mul, Mul), Mul, Add, Mul, Tanh, Add, Mul, Mul",
    _build_tanh,
    axes={"params": ("initializer", "constant", "input"), "cube": ("pow", "mul", "factored"), "half": ("first", "last"),
          "x_order": ("x-first", "x-second"), "shape": _SHAPES},
    near_misses={"coefficient": (0.05,)},
    opsets=EXPORTER_OPSETS, fused=_fused_gelu("tanh"),
    targets={"onnxruntime": ("com.microsoft:FastGelu", "Gelu")},
    notes=BF16_NOTE,
)


def _build_swish(b: Builder) -> None:
    x = _x(b)
    arg = x
    alpha = float(b.v.get("alpha", 1.0))
    if alpha != 1.0:
        arg = b.node("Mul", (x, b.param("alpha", np.array(alpha))))
    s = b.node("Sigmoid", (arg,))
    other = x
    if b.v.get("operand") == "other":  # the near-miss: another tensor times Sigmoid(X)
        other = b.input("Y", b.data(_shape_of(b, x), scale=2.0))
    y = b.node("Mul", (other, s) if b.v.get("order", "x-first") == "x-first" else (s, other))
    b.output(y)


def _shape_of(b: Builder, name: str) -> tuple[int, ...]:
    return tuple(np.shape(b._feeds[name]))


def _fused_swish(b: Builder, built) -> Fused | None:
    if b.v.get("operand") == "other":
        return None
    alpha = float(np.float32(built.value("alpha"))) if "alpha" in built.types else 1.0
    return Fused("Swish", 24, ("X",), {"alpha": alpha}, built.outputs[0])


SWISH = Pattern(
    "Swish.mul_sigmoid", FAMILY, "Swish",
    "torch.nn.SiLU / Keras swish: Sigmoid, Mul (QuickGelu: Mul by alpha first)",
    _build_swish,
    axes={"order": ("x-first", "sigmoid-first"), "alpha": (1.0, 1.702), "shape": _SHAPES,
          "params": ("initializer", "constant", "input")},
    near_misses={"operand": ("other",)},
    opsets=EXPORTER_OPSETS, fused=_fused_swish,
    targets={"onnxruntime": ("com.microsoft:QuickGelu",)},
    notes=BF16_NOTE,
)

PATTERNS = (ERF, TANH, SWISH)
register_patterns(PATTERNS, FAMILY)
