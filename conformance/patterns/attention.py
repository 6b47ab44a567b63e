"""Layer patterns of attention, the common losses and embeddings.

Forms (what exporters emit):

* ``Attention.sdpa``: ``torch.nn.MultiheadAttention`` / HF BERT self-attention / Keras
  ``MultiHeadAttention`` below the fused operators: ``MatMul(Q, Transpose(K, [0, 1, 3, 2]))``,
  ``Div`` by ``sqrt(D)`` (or ``Mul`` by ``1/sqrt(D)``), ``Add`` of an additive mask, ``Softmax``
  over the keys, ``MatMul`` with V.  onnxruntime's ``AttentionFusion`` / ``MultiHeadAttention``
  fusions and ai.onnx Attention-23 replace it; the scale, the mask's shape and the Softmax axis
  are the preconditions.  Axes: the scale form (Div, Mul, folded into Q), K pre-transposed or
  through a Transpose, the mask (none; a key-padding mask ``[B, 1, 1, Lk]`` of 0 / -10000; the
  same with -inf; a causal ``[Lq, Lk]`` mask; a full ``[B, H, Lq, Lk]`` float mask), where the
  mask lives, sizes (one query, Lq != Lk, an empty batch).  Every query keeps at least one key.
  Near-miss: the Softmax over the queries (axis -2): valid, not attention (its masked keys get
  -4, not -10000: over the queries a -10000 column is rounded to steps of 8 in float16).
* ``Loss.softmax_nll``: ``nn.CrossEntropyLoss`` written out (torch.onnx below
  SoftmaxCrossEntropyLoss, Keras sparse categorical cross-entropy from logits):
  ``NegativeLogLikelihoodLoss(LogSoftmax(X, axis=1), target)`` or with ``Log(Softmax(X))``
  (the form a ``log(softmax(x))`` model leaves; a Log(Softmax) -> LogSoftmax rewrite is right
  where nothing underflows: the logits of that form are drawn N(0, 1/4), every probability
  above ~0.04, so no Softmax within its own tolerance reaches 0 before the Log).  Axes: the form, reduction
  (mean, sum, none), class weights, ``ignore_index`` (a class present in the targets, or -1
  present; one target ignored, one kept), rank 3 (``[N, C, d1]``, token classification: the
  class axis is not the last, so a fusion that loses the Softmax axis is caught) or 2.  No empty batch: the
  mean of no targets is 0 / 0, which the single-node NegativeLogLikelihoodLoss cases cover.
  Near-miss: the Softmax over axis 0 (the batch), not the classes.
* ``Embedding.gather_scale``: ``nn.Embedding`` + the transformer's ``* sqrt(d_model)`` + learned
  positions (Keras ``Embedding``, fairseq / T2T): ``Add(Mul(Gather(W, ids), sqrt(D)), P)``.
  Axes: the scale (Mul by sqrt(D), Div by 1/sqrt(D), none), the ids (non-negative, negative
  counting from the end: Gather's text allows ``[-V, V-1]``), the positions present or not,
  where W lives.  Near-miss: Gather on axis 1 (columns of W).
"""

from __future__ import annotations

import math
from dataclasses import replace

import numpy as np
from onnx import TensorProto

from ..ops.schedule import EXPORTER_OPSETS
from .core import Builder, Pattern, register_patterns

FAMILY = "attention"


def _build_sdpa(b: Builder) -> None:
    r = b.rng
    size = b.v.get("size", "normal")
    bsz = {"normal": int(r.integers(1, 3)), "zero-batch": 0}.get(size, 1)
    h, d = int(r.integers(1, 3)), int(r.integers(2, 9))
    lq = 1 if size == "one-query" else int(r.integers(2, 6))
    lk = int(r.integers(2, 7)) if size != "square" else lq
    q = b.input("Q", b.data((bsz, h, lq, d)))
    kform = b.v.get("k_layout", "transpose")
    k = b.input("K", b.data((bsz, h, d, lk) if kform == "pretransposed" else (bsz, h, lk, d)))
    v = b.input("V", b.data((bsz, h, lk, d)))
    kt = k if kform == "pretransposed" else b.node("Transpose", (k,), perm=[0, 1, 3, 2])
    scale = b.v.get("scale", "div")
    if scale == "folded":
        q = b.node("Mul", (q, b.param("q_scale", np.array(1.0 / math.sqrt(d)))))
    s = b.node("MatMul", (q, kt))
    if scale == "div":
        s = b.node("Div", (s, b.param("sqrt_d", np.array(math.sqrt(d)))))
    elif scale == "mul":
        s = b.node("Mul", (s, b.param("inv_sqrt_d", np.array(1.0 / math.sqrt(d)))))
    mask = b.v.get("mask", "key-padding")
    axis = int(b.v.get("softmax_axis", -1))
    if mask != "none":
        neg = -np.inf if mask == "key-padding-inf" else -10000.0
        if axis != -1:
            # the near-miss normalizes over the queries: a masked key's column holds -10000 + s, which
            # float16 rounds to steps of 8 (any legitimate float16 chain is then arbitrary there), and
            # -inf gives 0 / 0; the same key-padding pattern with -4 keeps the column meaningful
            neg = -4.0
        if mask.startswith("key-padding"):
            keep = r.random((bsz, 1, 1, lk)) < 0.7
            keep[..., 0] = True  # every query keeps a key
            m = np.where(keep, 0.0, neg)
        elif mask == "causal":
            m = np.where(np.tril(np.ones((lq, lk)), k=max(lk - lq, 0)) > 0, 0.0, neg)
        else:  # full: a float bias per head and query
            m = b.data((bsz, h, lq, lk), scale=1.0)
        s = b.node("Add", (s, b.param("mask", m)))
    p = b.node("Softmax", (s,), axis=axis)
    b.output(b.node("MatMul", (p, v)))


SDPA = Pattern(
    "Attention.sdpa", FAMILY, "MultiHeadAttention",
    "torch nn.MultiheadAttention / HF BERT self-attention / Keras MultiHeadAttention written out: MatMul(Q, K^T), "
    "Div sqrt(D), Add mask, Softmax, MatMul V",
    _build_sdpa,
    axes={"scale": ("div", "mul", "folded"), "k_layout": ("transpose", "pretransposed"),
          "mask": ("key-padding", "none", "key-padding-inf", "causal", "full"),
          "params": ("initializer", "constant", "input"), "size": ("normal", "one-query", "square", "zero-batch")},
    near_misses={"softmax_axis": (-2,)},
    opsets=EXPORTER_OPSETS,
    targets={"onnxruntime": ("com.microsoft:Attention", "com.microsoft:MultiHeadAttention", "Attention")},
    notes="masks of -10000 and -inf; every query keeps at least one key (no fully masked row)",
)


def _build_nll(b: Builder) -> None:
    r = b.rng
    n = int(r.integers(2, 5))
    c = int(r.integers(2, 6))
    extra = (int(r.integers(2, 4)),) if int(b.v.get("rank", 3)) == 3 else ()
    # Log(Softmax): logits N(0, 1/4) keep every probability above ~0.04, far above the Softmax's own
    # tolerance, so no legitimate Softmax result reaches 0 before the Log
    form = b.v.get("form", "logsoftmax")
    x = b.input("X", b.data((n, c, *extra), scale=2.0 if form == "logsoftmax" else 0.5))
    t = r.integers(0, c, size=(n, *extra))
    ign = b.v.get("ignore_index", "absent")
    attrs = {"reduction": b.v.get("reduction", "mean")}
    if ign != "absent":
        ii = 1 if ign == "class" else -1
        attrs["ignore_index"] = ii
        t.flat[0] = ii  # one ignored target, one kept (n >= 2: the mean never divides by zero)
        t.flat[-1] = (ii + 1) % c if ii >= 0 else 0
    tgt = b.input("target", t.astype(np.int64), elem=TensorProto.INT64)
    axis = int(b.v.get("softmax_axis", 1))
    if form == "logsoftmax":
        ls = b.node("LogSoftmax", (x,), axis=axis)
    else:
        ls = b.node("Log", (b.node("Softmax", (x,), axis=axis),))
    ins = [ls, tgt]
    if b.v.get("weight", "absent") == "present":
        ins.append(b.param("weight", b.data((c,), lo=0.25, hi=2.0)))
    b.output(b.node("NegativeLogLikelihoodLoss", tuple(ins), **attrs))


SOFTMAX_NLL = Pattern(
    "Loss.softmax_nll", FAMILY, "CrossEntropyLoss",
    "torch nn.CrossEntropyLoss written out / Keras sparse categorical cross-entropy (from logits): LogSoftmax "
    "(or Log(Softmax)), NegativeLogLikelihoodLoss",
    _build_nll,
    axes={"form": ("logsoftmax", "log-softmax"), "reduction": ("mean", "sum", "none"),
          "weight": ("absent", "present"), "ignore_index": ("absent", "class", "negative"), "rank": (3, 2),
          "params": ("initializer", "constant", "input")},
    near_misses={"softmax_axis": (0,)},
    opsets=EXPORTER_OPSETS,
    targets={"onnxruntime": ("SoftmaxCrossEntropyLoss", "!Softmax")},
    notes="logits N(0, 4), N(0, 1/4) for Log(Softmax): no Softmax result comes near 0, so Log(Softmax) and "
          "LogSoftmax agree within the tolerance; "
          "no empty batch (the mean of nothing is 0 / 0)",
)


def _build_embedding(b: Builder) -> None:
    r = b.rng
    vocab, d = int(r.integers(3, 12)), int(r.integers(2, 9))
    bsz = 0 if b.v.get("shape") == "zero-batch" else int(r.integers(1, 3))
    seq = int(r.integers(1, 6))
    axis = int(b.v.get("gather_axis", 0))
    hi = vocab if axis == 0 else d
    ids = r.integers(0, hi, size=(bsz, seq))
    if b.v.get("ids", "non-negative") == "negative":
        ids = ids - hi  # [-hi, -1]: counted from the end
    w = b.param("W", b.data((vocab, d)))
    idx = b.input("ids", ids.astype(np.int64), elem=TensorProto.INT64)
    e = b.node("Gather", (w, idx), axis=axis) if axis else b.node("Gather", (w, idx))
    sc = b.v.get("scale", "mul")
    if sc == "mul":
        e = b.node("Mul", (e, b.param("sqrt_d", np.array(math.sqrt(d)))))
    elif sc == "div":
        e = b.node("Div", (e, b.param("inv_sqrt_d", np.array(1.0 / math.sqrt(d)))))
    if b.v.get("positions", "present") == "present" and axis == 0:
        e = b.node("Add", (e, b.param("P", b.data((seq, d), scale=0.5))))
    b.output(e)


EMBEDDING = Pattern(
    "Embedding.gather_scale", FAMILY, "Embedding",
    "torch nn.Embedding * sqrt(d_model) + learned positions (fairseq / T2T) / Keras Embedding: Gather, Mul, Add",
    _build_embedding,
    axes={"scale": ("mul", "div", "none"), "ids": ("non-negative", "negative"), "positions": ("present", "absent"),
          "params": ("initializer", "constant", "input"), "shape": ("normal", "zero-batch")},
    near_misses={"gather_axis": (1,)},
    opsets=EXPORTER_OPSETS,
    targets={"onnxruntime": ("com.microsoft:EmbedLayerNormalization",)},
)

#: Why bfloat16 is not among the patterns' types (every node admits it from opset 13).
TYPES_NOTE = (
    "bfloat16 left out: exporters emit these layers in float, float16 (mixed precision) and "
    "double, and onnxruntime 1.32's CPU provider has no bfloat16 kernel for MatMul, Softmax, Add "
    "or Mul (measured: NOT_IMPLEMENTED), so such cases would only measure refusals"
)
PATTERNS = tuple(replace(p, notes=(p.notes + "; " if p.notes else "") + TYPES_NOTE)
                 for p in (SDPA, SOFTMAX_NLL, EMBEDDING))
SDPA, SOFTMAX_NLL, EMBEDDING = PATTERNS
register_patterns(PATTERNS, FAMILY)
