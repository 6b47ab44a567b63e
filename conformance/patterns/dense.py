"""Layer patterns of the Dense layer: MatMul + Add, Gemm / MatMul with transposed operands, Dense +
activation.

Forms (what exporters emit):

* ``Dense.matmul_add``: ``torch.nn.Linear`` through torch.onnx (rank > 2 inputs, or opset
  >= 14 exports) and Keras ``Dense`` through tf2onnx: ``Y = Add(MatMul(X, W), B)``.
  onnxruntime's ``MatMulAddFusion`` (level basic) turns it into ``Gemm`` (with Reshapes around it
  for a rank-3 X).  Axes: where W and B live, B's shape (``[N]``, ``[1]``, scalar, ``[1, N]``,
  ``[M, N]``), X's rank, the Add's operand order, the MatMul result also a graph output, sizes 1
  and 0 (an empty batch ``M = 0``, an empty reduction ``K = 0`` whose product is zeros).
  Near-miss: B broadcasting X's product to a larger shape (``[2, M, N]``): a Gemm cannot hold it.
* ``Dense.transposed``: ``torch.nn.Linear`` in older torch.onnx exports (``Gemm`` with
  ``transB=1``) and exporters that write the transpose out: ``Gemm(Transpose(A, perm), B, C)`` or
  ``MatMul(Transpose(A, perm), B)``.  ``GemmTransposeFusion`` folds the Transpose into
  ``transA``; ``MatmulTransposeFusion`` into ``com.microsoft.FusedMatMul``.  The permutation is
  a swap (``[1, 0]``), the identity (``[0, 1]``: a no-op Transpose, which a fusion must not treat
  as a swap: the trap) or absent, on A or on the weight B; a square operand makes a wrongly
  swapped one give wrong values rather than a shape error.
* ``Dense.activation``: a Dense layer with its usual neighbour, the activation (Keras
  ``Dense(activation=...)``, torch Linear + activation): ``act(Add(MatMul(X, W), B))`` with
  Relu, LeakyRelu, Sigmoid, Tanh, Clip(0, 6) or the erf Gelu written out; onnxruntime makes
  ``FusedGemm`` / ``BiasGelu``.  Near-miss: the activation before the bias (``act(X W) + B``).
"""

from __future__ import annotations

import numpy as np

from ..ops.schedule import EXPORTER_OPSETS
from .core import BF16_NOTE, Builder, Fused, Pattern, register_patterns

FAMILY = "dense"


def _mkn(b: Builder) -> tuple[int, int, int]:
    r = b.rng
    m, k, n = int(r.integers(2, 6)), int(r.integers(2, 17)), int(r.integers(1, 9))
    kind = b.v.get("shape", "MKN")
    if kind == "M1":
        m = 1
    elif kind == "zero-M":  # an empty batch
        m = 0
    elif kind == "zero-K":  # an empty reduction: the product is zeros, Y = B broadcast
        k = 0
    elif kind == "N1":
        n = 1
    return m, k, n


def _bias_shape(kind: str, m: int, n: int) -> tuple[int, ...]:
    return {"full": (n,), "one": (1,), "scalar": (), "row": (1, n), "matrix": (m, n), "larger": (2, m, n)}[kind]


def _build_matmul_add(b: Builder) -> None:
    m, k, n = _mkn(b)
    xs = (m, k) if b.v.get("x_rank", 2) == 2 else (int(b.rng.integers(1, 4)), m, k)
    x = b.input("X", b.data(xs))
    w = b.param("W", b.data((k, n), scale=1.0 / np.sqrt(max(k, 1))))
    bias = b.param("B", b.data(_bias_shape(b.v.get("bias_shape", "full"), m, n), scale=0.5))
    mm = b.node("MatMul", (x, w))
    y = b.node("Add", (bias, mm) if b.v.get("add_order") == "bias-first" else (mm, bias))
    b.output(y, mm) if b.v.get("expose") == "matmul" else b.output(y)


def _fused_gemm(b: Builder, built) -> Fused | None:
    """Gemm-13 on X, W, B where X is rank 2 and B broadcasts to [M, N] (unidirectionally)."""
    if b.v.get("x_rank", 2) != 2 or b.v.get("bias_shape") == "larger":
        return None
    return Fused("Gemm", 13, ("X", "W", "B"), {}, built.outputs[0])


MATMUL_ADD = Pattern(
    "Dense.matmul_add", FAMILY, "Dense",
    "torch.nn.Linear (torch.onnx, rank > 2 or opset >= 14) / Keras Dense (tf2onnx): MatMul, Add",
    _build_matmul_add,
    axes={"params": ("initializer", "constant", "input"), "bias_shape": ("full", "one", "scalar", "row", "matrix"),
          "x_rank": (2, 3), "add_order": ("matmul-first", "bias-first"), "expose": ("none", "matmul"),
          "shape": ("MKN", "M1", "zero-M", "zero-K", "N1")},
    near_misses={"bias_shape": ("larger",)},
    opsets=EXPORTER_OPSETS, fused=_fused_gemm,
    targets={"onnxruntime": ("Gemm", "com.microsoft:FusedMatMul")},
    notes=BF16_NOTE,
)


def _build_transposed(b: Builder) -> None:
    r = b.rng
    m, k, n = int(r.integers(2, 6)), int(r.integers(2, 9)), int(r.integers(1, 7))
    perm = b.v.get("perm", "swap")
    on_b = b.v.get("operand", "A") == "B"
    if b.v.get("square") == "yes" or perm == "identity":  # identity + square: the trap gives wrong values
        if on_b:
            n = k
        else:
            k = m
    tb = 0 if on_b else int(b.v.get("transB", 0))
    if on_b:  # the Transpose on the weight: Gemm(A, Transpose(W)) / MatMul(A, Transpose(W))
        at = b.input("A", b.data((m, k)))
        w0 = b.param("B", b.data((n, k) if perm == "swap" else (k, n), scale=1.0 / np.sqrt(k)))
        w = w0 if perm == "none" else b.node("Transpose", (w0,), perm=[1, 0] if perm == "swap" else [0, 1])
    else:
        a_shape = (k, m) if perm == "swap" else (m, k)
        a = b.input("A", b.data(a_shape))
        w = b.param("B", b.data((n, k) if tb else (k, n), scale=1.0 / np.sqrt(k)))
        at = a if perm == "none" else b.node("Transpose", (a,), perm=[1, 0] if perm == "swap" else [0, 1])
    if b.v.get("op", "gemm") == "gemm":
        c = b.param("C", b.data((n,), scale=0.5))
        alpha = float(b.v.get("alpha", 1.0))
        attrs = {"transB": tb} if tb else {}
        if alpha != 1.0:
            attrs["alpha"] = alpha
        y = b.node("Gemm", (at, w, c), **attrs)
    else:
        if tb:
            w = b.node("Transpose", (w,), perm=[1, 0])
        y = b.node("MatMul", (at, w))
    b.output(y)


TRANSPOSED = Pattern(
    "Dense.transposed", FAMILY, "Dense",
    "torch.nn.Linear in torch.onnx (Gemm transB=1) and exporters writing the transpose out: Transpose, Gemm / MatMul",
    _build_transposed,
    axes={"perm": ("swap", "identity", "none"), "op": ("gemm", "matmul"), "operand": ("A", "B"), "transB": (0, 1),
          "square": ("no", "yes"), "alpha": (1.0, 0.5), "params": ("initializer", "constant", "input")},
    opsets=EXPORTER_OPSETS,
    targets={"onnxruntime": ("!Transpose",)},
    notes="the identity permutation with a square A is the trap: a fusion that folds any Transpose into transA "
          "computes A^T B; " + BF16_NOTE,
)

def _activation(b: Builder, y: str, kind: str) -> str:
    """``kind`` applied to ``y``: relu, leaky_relu (alpha 0.1), sigmoid, tanh, clip6 (ReLU6 as Clip
    with constant bounds), gelu (the erf form written out, as torch.onnx below opset 20 emits it)."""
    if kind == "relu":
        return b.node("Relu", (y,))
    if kind == "leaky_relu":
        return b.node("LeakyRelu", (y,), alpha=0.1)
    if kind == "sigmoid":
        return b.node("Sigmoid", (y,))
    if kind == "tanh":
        return b.node("Tanh", (y,))
    if kind == "clip6":
        if b.opset >= 11:
            return b.node("Clip", (y, b.param("clip_min", np.array(0.0)), b.param("clip_max", np.array(6.0))))
        return b.node("Clip", (y,), min=0.0, max=6.0)
    if kind == "gelu":
        s = b.node("Div", (y, b.param("sqrt2", np.array(np.sqrt(2.0)))))
        e = b.node("Add", (b.node("Erf", (s,)), b.param("one", np.array(1.0))))
        return b.node("Mul", (b.node("Mul", (y, e)), b.param("half", np.array(0.5))))
    raise ValueError(kind)


def _build_dense_act(b: Builder) -> None:
    m, k, n = _mkn(b)
    xs = (m, k) if b.v.get("x_rank", 2) == 2 else (int(b.rng.integers(1, 4)), m, k)
    x = b.input("X", b.data(xs))
    w = b.param("W", b.data((k, n), scale=1.5 / np.sqrt(max(k, 1))))
    bias = b.param("B", b.data((n,), scale=1.0))
    mm = b.node("MatMul", (x, w))
    kind = b.v.get("activation", "relu")
    if b.v.get("act_place") == "before-bias":  # the near-miss: act(X W) + B is not Dense(act)
        y = b.node("Add", (_activation(b, mm, kind), bias))
    else:
        y = _activation(b, b.node("Add", (mm, bias)), kind)
    b.output(y)


DENSE_ACT = Pattern(
    "Dense.activation", FAMILY, "Dense",
    "Keras Dense(activation=...) / torch Linear + activation: MatMul, Add, then Relu, LeakyRelu, Sigmoid, Tanh, "
    "Clip(0, 6) or the erf Gelu written out",
    _build_dense_act,
    axes={"activation": ("relu", "gelu", "leaky_relu", "sigmoid", "tanh", "clip6"),
          "params": ("initializer", "constant", "input"), "x_rank": (2, 3), "shape": ("MKN", "M1", "zero-M", "N1")},
    near_misses={"act_place": ("before-bias",)},
    opsets=EXPORTER_OPSETS,
    targets={"onnxruntime": ("com.microsoft:FusedGemm", "com.microsoft:BiasGelu", "com.microsoft:FusedMatMul",
                             "Gemm")},
    notes="a layer with its usual neighbour: onnxruntime fuses Gemm + activation (FusedGemm), Add + Gelu "
          "(BiasGelu); " + BF16_NOTE,
)

PATTERNS = (MATMUL_ADD, TRANSPOSED, DENSE_ACT)
register_patterns(PATTERNS, FAMILY)
