"""Layer patterns of dtype boundaries and no-ops: Cast pairs, float16 islands, Dropout in
inference, Identity, and arithmetic with a neutral constant.

Forms (what exporters emit):

* ``Cast.pair``: mixed-precision exports (torch.autocast, Keras ``mixed_float16`` policies) and
  dtype round trips (``x.half().float()``, ``x.long().float()``, ``x.bool().float()``):
  ``Cast(Cast(X, to=mid), to=T)``.  Removing the pair (onnxruntime's cast elimination and
  chain rewrites) is right only when the middle type holds every value of T exactly (``wider``,
  ``same``); a narrower float rounds (and overflows to inf: the ``large`` data class goes past
  float16's 65504), an integer truncates toward zero, bool maps to {0, 1}: those pairs are not
  the identity and must stay.  Axes: the middle type (``wider``: float16->float, float->double,
  double->double; ``same``; ``narrower``: float->float16, double->float, float16->bfloat16;
  ``int32``; ``bool``), the data range.
* ``Cast.fp16_island``: an autocast region: ``Cast(X, float16)``, a dense layer and an
  activation computed in float16 (``MatMul``, ``Add``, ``Relu`` / ``Sigmoid``), ``Cast`` back to
  float (torch.autocast exports, onnxconverter-common's ``convert_float_to_float16`` with
  ``keep_io_types``).  The island's nodes may legitimately run in float32 (the core's
  float32-intermediates variant); removing the Casts (computing on the unrounded float input)
  is not the graph.  Axes: island type (float16, bfloat16), the activation, where W and B live.
* ``Noop.arith``: exporters leave ``Add(x, 0)``, ``Sub(x, 0)``, ``Mul(x, 1)``, ``Div(x, 1)`` from
  folded scalars (a ``* 1.0`` scale, a zero bias, ``/ temperature`` with temperature 1): a
  following Relu keeps the graph a layer.  Removing the node is right only when the constant is
  neutral in every element, the result has X's shape (the constant does not broadcast X to a
  larger shape: the trap) and the operand order makes it neutral (``0 - x`` and ``1 / x`` are
  not).  Axes: the op, the constant's shape (scalar, [1], full, a row), the operand order of
  Add/Mul, where the constant lives.  Near-misses: the constant broadcasting X to a larger shape;
  the constant first in a Sub (``0 - X``).
* ``Dropout.inference``: ``nn.Dropout`` / Keras ``Dropout`` exported for inference, often next to
  an ``Identity`` (torch's ``nn.Identity``, tf2onnx's Identity for tf.identity):
  ``Dropout(X[, ratio][, training_mode=false])`` then Identity, then Add of a residual.  The
  mask output, when requested, is all true.  onnxruntime's ``EliminateDropout`` /
  ``EliminateIdentity`` remove them (Dropout only when its mask is unused).  Axes: ratio absent
  or given, training_mode absent or false, the mask a graph output, the Identity present.
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np
from onnx import TensorProto

from ..ops.schedule import EXPORTER_OPSETS
from .core import Builder, Pattern, register_patterns

FAMILY = "boundaries"
_MID = {
    "float": {"wider": TensorProto.DOUBLE, "same": TensorProto.FLOAT, "narrower": TensorProto.FLOAT16},
    "double": {"wider": TensorProto.DOUBLE, "same": TensorProto.DOUBLE, "narrower": TensorProto.FLOAT},
    "float16": {"wider": TensorProto.FLOAT, "same": TensorProto.FLOAT16, "narrower": TensorProto.BFLOAT16},
}


def _shape(b: Builder) -> tuple[int, ...]:
    if b.v.get("shape") == "zero":
        return (0, int(b.rng.integers(1, 5)))
    return (int(b.rng.integers(1, 4)), int(b.rng.integers(1, 9)))


def _build_cast_pair(b: Builder) -> None:
    shape = _shape(b)
    mid = b.v.get("mid", "wider")
    big = b.v.get("range") == "large"
    # fractional parts in [0.1, 0.9] (truncation and rounding to an integer differ, and no value is
    # near an integer); large: up to 2e5 (past float16's 65504 for a float input)
    mag = b.rng.integers(0, 200000 if big else 100, size=shape) + b.rng.uniform(0.1, 0.9, size=shape)
    if b.t == "float16":
        mag = mag if big else b.rng.integers(0, 100, size=shape) + np.round(b.rng.uniform(0.1, 0.9, size=shape) * 8) / 8
        mag = np.minimum(mag, 60000.0)
    x = b.input("X", mag * b.rng.choice((-1.0, 1.0), size=shape))
    to = {"int32": TensorProto.INT32, "bool": TensorProto.BOOL}.get(mid) or _MID[b.t][mid]
    y = b.node("Cast", (x,), to=int(to))
    b.output(b.node("Cast", (y,), to=int(b.elem)))


CAST_PAIR = Pattern(
    "Cast.pair", FAMILY, "Cast (mixed precision)",
    "torch x.half().float() / x.long().float() / autocast boundaries, Keras mixed_float16: Cast, Cast back",
    _build_cast_pair,
    axes={"mid": ("wider", "same", "narrower", "int32", "bool"), "range": ("normal", "large"),
          "shape": ("normal", "zero")},
    opsets=EXPORTER_OPSETS,
    targets={"onnxruntime": ("!Cast",)},
    notes="only wider/same pairs are the identity; a float16 input's large class stays below 65504",
)


def _build_island(b: Builder) -> None:
    n, k, m = _shape(b)[0], int(b.rng.integers(1, 9)), int(b.rng.integers(1, 6))
    half = {"float16": TensorProto.FLOAT16, "bfloat16": TensorProto.BFLOAT16}[b.v.get("island", "float16")]
    x = b.input("X", b.data((n, k), scale=2.0))
    h = b.node("Cast", (x,), to=int(half))
    w = b.param("W", b.data((k, m), scale=1.0 / np.sqrt(k)), elem=half)
    bias = b.param("B", b.data((m,), scale=0.5), elem=half)
    y = b.node("Add", (b.node("MatMul", (h, w)), bias))
    a = b.v.get("act", "relu")
    if a != "none":
        y = b.node({"relu": "Relu", "sigmoid": "Sigmoid"}[a], (y,))
    b.output(b.node("Cast", (y,), to=int(b.elem)))


FP16_ISLAND = Pattern(
    "Cast.fp16_island", FAMILY, "Dense (mixed precision)",
    "torch.autocast / onnxconverter-common convert_float_to_float16(keep_io_types): Cast to float16, MatMul, Add, "
    "activation, Cast back",
    _build_island,
    axes={"island": ("float16", "bfloat16"), "act": ("relu", "sigmoid", "none"),
          "params": ("initializer", "constant", "input"), "shape": ("normal", "zero")},
    types=("float",),
    opsets=EXPORTER_OPSETS,
    targets={"onnxruntime": ("!Cast",)},
    notes="float only: the island's own type is the half type axis; double islands are not an exporter form",
)


_NEUTRAL = {"add0": ("Add", 0.0), "sub0": ("Sub", 0.0), "mul1": ("Mul", 1.0), "div1": ("Div", 1.0)}


def _build_noop(b: Builder) -> None:
    shape = (int(b.rng.integers(2, 4)), int(b.rng.integers(2, 6)))
    if b.v.get("shape") == "zero":
        shape = (0, shape[1])
    xv = b.data(shape, scale=2.0)
    if xv.size:  # both signs present: the Relu keeps some of X and some of -X (the 0 - X near-miss)
        xv.flat[0], xv.flat[-1] = abs(xv.flat[0]) + 0.25, -abs(xv.flat[-1]) - 0.25
    x = b.input("X", xv)
    order = b.v.get("order", "x-first")
    op, c = _NEUTRAL["sub0" if order == "const-first-sub" else b.v.get("op", "add0")]
    cs = {"scalar": (), "one": (1,), "full": shape, "row": (shape[1],), "larger": (2, *shape)}[b.v.get("const_shape",
                                                                                                      "scalar")]
    k = b.param("neutral", np.full(cs, c))
    if op in ("Sub", "Div") and order != "const-first-sub":
        order = "x-first"
    y = b.node(op, (k, x) if order in ("const-first", "const-first-sub") else (x, k))
    b.output(b.node("Relu", (y,)))


NOOP = Pattern(
    "Noop.arith", FAMILY, "Identity (folded scalars)",
    "exporters' folded scalars: Add 0 / Sub 0 / Mul 1 / Div 1, then Relu",
    _build_noop,
    axes={"op": ("add0", "sub0", "mul1", "div1"), "const_shape": ("scalar", "one", "full", "row"),
          "order": ("x-first", "const-first"), "params": ("initializer", "constant", "input"),
          "shape": ("normal", "zero")},
    near_misses={"const_shape": ("larger",), "order": ("const-first-sub",)},
    opsets=EXPORTER_OPSETS,
    targets={"onnxruntime": ("!Add", "!Sub", "!Mul", "!Div")},
    notes="near-misses: a neutral constant that broadcasts X to a larger shape, and 0 - X",
)


def _build_dropout(b: Builder) -> None:
    shape = _shape(b) + (int(b.rng.integers(1, 4)),)
    x = b.input("X", b.data(shape))
    ins = [x]
    if b.v.get("ratio", "absent") == "given":
        ins.append(b.param("ratio", np.array(0.5)))
    if b.v.get("training_mode", "absent") == "false":
        if len(ins) == 1:
            ins.append("")
        ins.append(b.const("training_mode", np.array(False), elem=TensorProto.BOOL))
    want_mask = b.v.get("mask", "unused") == "output"
    outs = b.node("Dropout", tuple(ins), outputs=2 if want_mask else 1)
    d, mask = outs if want_mask else (outs, None)
    if mask is not None:
        b._types[mask] = TensorProto.BOOL
    if b.v.get("identity", "yes") == "yes":
        d = b.node("Identity", (d,))
    r = b.input("R", b.data(shape))
    y = b.node("Add", (d, r))
    b.output(y, mask) if mask is not None else b.output(y)


DROPOUT = Pattern(
    "Dropout.inference", FAMILY, "Dropout",
    "torch nn.Dropout / Keras Dropout exported for inference, nn.Identity / tf.identity: Dropout, Identity, Add",
    _build_dropout,
    axes={"ratio": ("absent", "given"), "training_mode": ("absent", "false"), "mask": ("unused", "output"),
          "identity": ("yes", "no"), "params": ("initializer", "constant", "input"), "shape": ("normal", "zero")},
    opsets=EXPORTER_OPSETS,
    targets={"onnxruntime": ("!Dropout", "!Identity")},
)

#: Why bfloat16 is not among the patterns' types (every node admits it from opset 13).
TYPES_NOTE = (
    "bfloat16 left out: exporters emit these layers in float, float16 (mixed precision) and "
    "double, and onnxruntime 1.32's CPU provider has no bfloat16 kernel for Add, Relu or MatMul "
    "(bfloat16 is a middle type of Cast.pair and an island type of Cast.fp16_island) (measured: "
    "NOT_IMPLEMENTED), so such cases would only measure refusals"
)
PATTERNS = tuple(replace(p, notes=(p.notes + "; " if p.notes else "") + TYPES_NOTE)
                 for p in (CAST_PAIR, FP16_ISLAND, NOOP, DROPOUT))
CAST_PAIR, FP16_ISLAND, NOOP, DROPOUT = PATTERNS
register_patterns(PATTERNS, FAMILY)
