"""Layer patterns of layout changes: channels-last convolutions, Transpose pairs, Reshape pairs,
Flatten + Gemm dense heads, Unsqueeze / Squeeze pairs.

Forms (what exporters emit):

* ``Conv.channels_last``: tf2onnx / keras2onnx for Keras ``Conv1D``/``Conv2D`` with
  ``data_format="channels_last"`` (the default): ``Transpose(X, [0, 3, 1, 2])`` (NHWC -> NCHW),
  ``Conv`` (+ Relu), ``Transpose(., [0, 2, 3, 1])`` back.  onnxruntime's ``TransposeOptimizer``
  (level basic) pushes and cancels transposes, ``NhwcTransformer`` (level all) makes NHWC
  kernels.  Axes: rank (Conv2D, Conv1D with ``[0, 2, 1]``), the activation, the output transpose
  present or absent, parameters, an empty batch.  Near-miss: the output permutation is not the
  inverse (``[0, 3, 2, 1]``: NWHC), so nothing cancels.
* ``Transpose.pair``: consecutive layout changes (``x.permute(p).contiguous()`` then ``permute(q)``
  in torch, Keras ``Permute`` layers, two channels-last layers meeting):
  ``Transpose(Op(Transpose(X, p)), q)`` with ``Op`` none, Relu or an Add of a broadcast bias
  (the optimizer must transpose the bias too).  Axes: ``kind`` -- ``inverse`` (q = p^-1: the
  pair cancels), ``identity`` (both permutations the identity), ``compose`` (q = p with p a
  3-cycle: q o p is not the identity, the pair must become one Transpose, never vanish; the
  trap) -- the op between, the rank.
* ``Reshape.pair``: ``x.view(a, -1).view(...)`` in torch exports, Keras ``Reshape`` after
  ``Reshape``: two Reshapes.  Reshape-14's ``allowzero``: 0 copies the dimension of the
  *immediate* input (a fusion into one Reshape of X must resolve it against the intermediate
  shape, not X's: the trap ``zero-copy``), 1 makes a 0 literal (a zero-size tensor; a fusion
  that does not copy allowzero turns it into a copy of the input's dimension).  Axes: the second
  shape (explicit, ``[0, -1]`` copying the intermediate's first dimension, ``[-1]``, a literal 0
  with allowzero=1 on an empty X).  Opsets from 14 (allowzero exists).
* ``Flatten.gemm``: the dense head after the convolutions (``nn.Flatten`` + ``nn.Linear``,
  Keras ``Flatten`` + ``Dense``): ``Flatten(X, axis=1)`` or ``Reshape(X, [0, -1])`` or
  ``Reshape(X, [N, -1])`` then ``Gemm(., W, B, transB=1)`` (+ Relu).  Near-miss: ``Flatten``
  with ``axis=2`` (rows N*C, a Gemm over H*W: valid, not the head).
* ``Squeeze.unsqueeze``: ``Unsqueeze(X, axes)`` (+ Relu) then ``Squeeze(., axes)``: the identity;
  axes first / last / middle.  Near-miss: the Squeeze without axes on an X that has a size-1
  dimension of its own (it removes that one too: not the identity).
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np

from ..ops.schedule import EXPORTER_OPSETS
from .conv_blocks import act
from .core import Builder, Pattern, register_patterns

FAMILY = "layout"


def _n(b: Builder) -> int:
    return {"normal": int(b.rng.integers(1, 3)), "batch1": 1, "zero-batch": 0}[b.v.get("shape", "normal")]


def _build_channels_last(b: Builder) -> None:
    rank = int(b.v.get("rank", 2))
    n, c, m, k = _n(b), int(b.rng.integers(1, 4)), int(b.rng.integers(1, 5)), int(b.rng.integers(1, 4))
    sp = tuple(int(b.rng.integers(k + 1, 6)) for _ in range(rank))  # >= 2 outputs per axis
    x = b.input("X", b.data((n, *sp, c)))
    to_first = [0, rank + 1, *range(1, rank + 1)]
    to_last = [0, *range(2, rank + 2), 1]
    t = b.node("Transpose", (x,), perm=to_first)
    w = b.param("W", b.data((m, c, *([k] * rank)), scale=1.0 / np.sqrt(c * k ** rank)))
    y = b.node("Conv", (t, w, b.param("B", b.data((m,), scale=0.3, offset=0.5))), kernel_shape=[k] * rank)
    y = act(b, y, b.v.get("act", "relu"))
    back = b.v.get("out_perm", "inverse")
    if back == "inverse":
        y = b.node("Transpose", (y,), perm=to_last)
    elif back == "other":  # near-miss: channels last with the spatial axes reversed
        y = b.node("Transpose", (y,), perm=[0, *range(rank + 1, 1, -1), 1])
    b.output(y)


CHANNELS_LAST = Pattern(
    "Conv.channels_last", FAMILY, "Conv2D (channels_last)",
    "Keras Conv1D/Conv2D data_format=channels_last (tf2onnx): Transpose NHWC->NCHW, Conv, activation, Transpose back",
    _build_channels_last,
    axes={"params": ("initializer", "constant", "input"), "rank": (2, 1), "act": ("relu", "none", "sigmoid"),
          "out_perm": ("inverse", "absent"), "shape": ("normal", "batch1", "zero-batch")},
    near_misses={"out_perm": ("other",)},
    opsets=EXPORTER_OPSETS,
    targets={"onnxruntime": ("!Transpose", "com.ms.internal.nhwc:Conv", "com.microsoft:NhwcFusedConv")},
)


_PERMS = {3: ([0, 2, 1], [1, 2, 0]), 4: ([0, 2, 3, 1], [0, 2, 3, 1])}


def _build_transpose_pair(b: Builder) -> None:
    rank = int(b.v.get("rank", 4))
    shape = tuple(int(b.rng.integers(1, 5)) for _ in range(rank))
    if b.v.get("shape") == "zero":
        shape = (0,) + shape[1:]
    x = b.input("X", b.data(shape))
    kind = b.v.get("kind", "inverse")
    p = _PERMS[rank][1]  # a cycle: p o p is not the identity (rank 3: [1, 2, 0]; rank 4: [0, 2, 3, 1])
    if kind == "identity":
        p = q = list(range(rank))
    elif kind == "inverse":
        q = [int(i) for i in np.argsort(p)]
    else:  # compose: the same cycle twice
        q = list(p)
    t = b.node("Transpose", (x,), perm=p)
    between = b.v.get("between", "none")
    if between == "relu":
        t = b.node("Relu", (t,))
    elif between == "add":
        tshape = tuple(shape[i] for i in p)
        t = b.node("Add", (t, b.param("bias", b.data((tshape[-1],), scale=0.5))))
    b.output(b.node("Transpose", (t,), perm=q))


TRANSPOSE_PAIR = Pattern(
    "Transpose.pair", FAMILY, "Permute",
    "torch permute(...).permute(...) / Keras Permute layers / channels-last layers meeting: Transpose, (op), Transpose",
    _build_transpose_pair,
    axes={"kind": ("inverse", "identity", "compose"), "between": ("none", "relu", "add"), "rank": (4, 3),
          "params": ("initializer", "constant", "input"), "shape": ("normal", "zero")},
    opsets=EXPORTER_OPSETS,
    targets={"onnxruntime": ("!Transpose",)},
    notes="kind=compose is the trap: the pair does not cancel (p o p is not the identity)",
)


def _build_reshape_pair(b: Builder) -> None:
    a_, b_, c_ = (int(b.rng.integers(2, 5)) for _ in range(3))
    second = b.v.get("second", "explicit")
    empty = second == "literal-zero"
    x = b.input("X", b.data((0 if empty else a_, b_, c_)))
    first = b.v.get("first", "merge")
    s1 = [-1, c_] if first == "minus-one" else [(0 if empty else a_) * b_, c_]
    if empty:
        s1, z1 = [0, b_ * c_], 1  # a literal 0: allowzero=1
    else:
        z1 = int(b.v.get("allowzero", 0))
    r1 = b.node("Reshape", (x, b.const("shape1", np.array(s1, dtype=np.int64))), **({"allowzero": z1} if z1 else {}))
    if b.v.get("between") == "relu":
        r1 = b.node("Relu", (r1,))
    z2 = int(b.v.get("allowzero", 0))
    if second == "explicit":
        s2 = [a_, b_ * c_]
    elif second == "zero-copy":  # 0 copies the intermediate's first dimension (a * b), not X's (a)
        s2, z2 = [0, -1], 0
    elif second == "minus-one":
        s2 = [-1]
    else:  # literal-zero: an empty tensor reshaped to [b, 0, c] with allowzero=1
        s2, z2 = [b_, 0, c_], 1
    y = b.node("Reshape", (r1, b.const("shape2", np.array(s2, dtype=np.int64))), **({"allowzero": z2} if z2 else {}))
    b.output(y)


RESHAPE_PAIR = Pattern(
    "Reshape.pair", FAMILY, "Reshape",
    "torch view(...).view(...) / Keras Reshape after Reshape: Reshape, (op), Reshape",
    _build_reshape_pair,
    axes={"second": ("explicit", "zero-copy", "minus-one", "literal-zero"), "first": ("merge", "minus-one"),
          "allowzero": (0, 1), "between": ("none", "relu")},
    opsets=tuple(o for o in EXPORTER_OPSETS if o >= 14),
    targets={"onnxruntime": ("!Reshape",)},
    notes="opsets from 14: allowzero (Reshape-14) is an axis; zero-copy is the trap (0 refers to the intermediate)",
)


def _build_flatten_gemm(b: Builder) -> None:
    n, c, h, w = _n(b), int(b.rng.integers(1, 4)), int(b.rng.integers(1, 4)), int(b.rng.integers(1, 4))
    x = b.input("X", b.data((n, c, h, w)))
    form = b.v.get("form", "flatten")
    axis = int(b.v.get("flatten_axis", 1))
    k = c * h * w if axis == 1 else h * w
    if form == "flatten" or axis != 1:
        f = b.node("Flatten", (x,), **({"axis": axis} if axis != 1 else {}))
    elif form == "reshape-0":
        f = b.node("Reshape", (x, b.const("shape", np.array([0, -1], dtype=np.int64))))
    else:
        f = b.node("Reshape", (x, b.const("shape", np.array([n, -1], dtype=np.int64))))
    m = int(b.rng.integers(1, 6))
    bias = b.param("B", b.data((m,), scale=0.3, offset=0.5))  # mostly positive: the Relu keeps some output
    y = b.node("Gemm", (f, b.param("W", b.data((m, k), scale=1.0 / np.sqrt(k))), bias), transB=1)
    b.output(act(b, y, b.v.get("act", "relu")))


FLATTEN_GEMM = Pattern(
    "Flatten.gemm", FAMILY, "Flatten+Dense",
    "torch nn.Flatten + nn.Linear / Keras Flatten + Dense: Flatten (or Reshape [0, -1] / [N, -1]), Gemm transB=1, "
    "activation",
    _build_flatten_gemm,
    axes={"form": ("flatten", "reshape-0", "reshape-const"), "act": ("relu", "none"),
          "params": ("initializer", "constant", "input"), "shape": ("normal", "batch1", "zero-batch")},
    near_misses={"flatten_axis": (2,)},
    opsets=EXPORTER_OPSETS,
    targets={"onnxruntime": ("com.microsoft:FusedGemm", "!Flatten")},
)


def _build_squeeze(b: Builder) -> None:
    shape = [int(b.rng.integers(2, 5)) for _ in range(3)]
    which = b.v.get("axes", "first")
    if b.v.get("squeeze_axes") == "none":  # near-miss: X has a size-1 dimension of its own
        shape[1] = 1
    if b.v.get("shape") == "zero":
        shape[-1] = 0
    x = b.input("X", b.data(tuple(shape)))
    ax = {"first": 0, "last": -1, "middle": 2}[which]
    u = b.node("Unsqueeze", (x, b.const("axes", np.array([ax], dtype=np.int64))))
    if b.v.get("between") == "relu":
        u = b.node("Relu", (u,))
    if b.v.get("squeeze_axes") == "none":
        y = b.node("Squeeze", (u,))
    else:
        y = b.node("Squeeze", (u, b.const("squeeze_axes", np.array([ax], dtype=np.int64))))
    b.output(y)


SQUEEZE = Pattern(
    "Squeeze.unsqueeze", FAMILY, "Reshape",
    "torch unsqueeze(d) ... squeeze(d) / Keras expand_dims + squeeze: Unsqueeze, (op), Squeeze",
    _build_squeeze,
    axes={"axes": ("first", "last", "middle"), "between": ("none", "relu"), "shape": ("normal", "zero")},
    near_misses={"squeeze_axes": ("none",)},
    opsets=EXPORTER_OPSETS,
    targets={"onnxruntime": ("!Unsqueeze",)},
)

#: Why bfloat16 is not among the patterns' types (every node admits it from opset 13).
TYPES_NOTE = (
    "bfloat16 left out: exporters emit these layers in float, float16 (mixed precision) and "
    "double, and onnxruntime 1.32's CPU provider has no bfloat16 kernel for Conv, Gemm, Relu or "
    "Add (the data-movement nodes take every type; their single-node cases cover the integer "
    "types) (measured: NOT_IMPLEMENTED), so such cases would only measure refusals"
)
PATTERNS = tuple(replace(p, notes=(p.notes + "; " if p.notes else "") + TYPES_NOTE)
                 for p in (CHANNELS_LAST, TRANSPOSE_PAIR, RESHAPE_PAIR, FLATTEN_GEMM, SQUEEZE))
CHANNELS_LAST, TRANSPOSE_PAIR, RESHAPE_PAIR, FLATTEN_GEMM, SQUEEZE = PATTERNS
register_patterns(PATTERNS, FAMILY)
