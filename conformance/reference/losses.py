"""Oracles, legitimate variants and error bounds of the loss operators
NegativeLogLikelihoodLoss (ai.onnx 12, 13, 22) and SoftmaxCrossEntropyLoss (12, 13).

Definitions (the operator texts, ``onnx.defs`` docs, and their function bodies):

* NegativeLogLikelihoodLoss: ``input`` (N, C, d1..dk) holds log-probabilities, ``target``
  (N, d1..dk) class labels; ``loss[n, d] = -input[n, target[n, d], d] * weight[target[n, d]]``
  (``weight`` 1 where absent), 0 where ``target == ignore_index``.
* SoftmaxCrossEntropyLoss: the same on ``log_prob = LogSoftmax(scores, axis=1)`` (optional
  second output, shape of ``scores``).
* ``reduction``: ``none`` (the loss tensor), ``sum`` (a scalar), ``mean`` (default): the sum
  divided by the sum of the weights of the *non-ignored* targets (1 per target without
  ``weight``).  That divisor is the function bodies' (and PyTorch's, which the text cites):
  the text's own formulas say ``mean(loss)`` (over every element, ignored ones counted) and
  ``sum(weight[target])`` "for all samples"; the entries mark ``mean`` with ``ignore_index``
  contested for that reason.  Every target ignored (or N = 0) makes the mean ``0 / 0``: NaN,
  as the function bodies compute it.

A target outside ``[0, C)`` that is not ``ignore_index`` is left undefined by the texts: the
oracle raises on it (no case has one).
"""

from __future__ import annotations

import math

import numpy as np

from .. import dtypes
from ..tolerance import budget_rel
from . import libm

OPS = ("NegativeLogLikelihoodLoss", "SoftmaxCrossEntropyLoss")


def log_softmax(scores: np.ndarray) -> np.ndarray:
    """LogSoftmax over axis 1 of (N, C, d1..dk) ``scores`` in float64 (max-shifted).

    Returns float64 of the same shape; an empty input gives an empty result."""
    x = np.asarray(scores, dtype=np.float64)
    if x.size == 0:
        return x.copy()
    m = np.max(x, axis=1, keepdims=True)
    with np.errstate(all="ignore"):
        s = x - m
        return s - libm.log(np.sum(libm.exp(s), axis=1, keepdims=True))


def _picked(logp: np.ndarray, target: np.ndarray, weight, ignore_index) -> tuple[np.ndarray, np.ndarray]:
    """(per-target loss, per-target weight), both float64 of the target's shape; ignored
    targets give 0 and 0.

    Raises:
        ValueError: the target's shape is not (N, d1..dk) of the input's, the weight not of
            length C, or a target outside [0, C) that is not ignore_index.
    """
    t = np.asarray(target).astype(np.int64)
    if logp.ndim < 2 or t.shape != logp.shape[:1] + logp.shape[2:]:
        raise ValueError(f"target shape {t.shape} does not match input {logp.shape} without its class axis")
    c = logp.shape[1]
    w = np.ones(c) if weight is None else np.asarray(weight, dtype=np.float64)
    if w.shape != (c,):
        raise ValueError(f"weight shape {w.shape}, expected ({c},)")
    keep = np.ones(t.shape, dtype=bool) if ignore_index is None else t != int(ignore_index)
    if ((t[keep] < 0) | (t[keep] >= c)).any():
        raise ValueError("a target outside [0, C) that is not ignore_index (undefined)")
    safe = np.where(keep, t, 0)
    y = np.take_along_axis(logp, safe[:, None], axis=1)[:, 0] if t.size else np.zeros(t.shape)
    wt = np.where(keep, w[safe], 0.0)
    with np.errstate(all="ignore"):
        loss = np.where(keep, -y * wt, 0.0)
    return loss, wt


def reduce(loss: np.ndarray, wt: np.ndarray, reduction: str) -> np.ndarray:
    """The ``reduction`` of the per-target ``loss`` with per-target weights ``wt`` (float64):
    ``none`` -> ``loss``; ``sum`` -> scalar sum; ``mean`` -> ``sum(loss) / sum(wt)`` (NaN for
    0 / 0)."""
    if reduction == "none":
        return loss
    s = math.fsum(loss.ravel().tolist())
    if reduction == "sum":
        return np.array(s)
    with np.errstate(all="ignore"):
        return np.array(np.float64(s) / np.float64(math.fsum(wt.ravel().tolist())))


def nll(x, target, weight=None, ignore_index=None, reduction="mean") -> np.ndarray:
    """NegativeLogLikelihoodLoss (12, 13, 22) in float64: ``x`` (N, C, d1..dk) float64,
    ``target`` (N, d1..dk) integers, ``weight`` (C,) or None.  Returns the loss (shape of the
    target for ``none``, a scalar otherwise).  Raises ValueError (see :func:`_picked`)."""
    loss, wt = _picked(np.asarray(x, dtype=np.float64), target, weight, ignore_index)
    return reduce(loss, wt, reduction)


def sce(scores, labels, weights=None, ignore_index=None, reduction="mean") -> tuple[np.ndarray, np.ndarray]:
    """SoftmaxCrossEntropyLoss (12, 13) in float64: returns ``(output, log_prob)``; shapes as
    :func:`nll`, ``log_prob`` the shape of ``scores``."""
    logp = log_softmax(scores)
    loss, wt = _picked(logp, labels, weights, ignore_index)
    return reduce(loss, wt, reduction), logp


# ----------------------------------------------------------------------------- variants and bounds
def compute_type(type_name: str):
    """The precision a kernel computes in: float32 for the 16-bit types, the type otherwise."""
    return np.float64 if type_name == "double" else np.float32


def variant(op: str, x, target, weight, ignore_index, reduction: str, acc, order: str = "forward"):
    """A legitimate kernel's result in precision ``acc`` (numpy float dtype), summing in
    ``order`` (``forward``, ``reverse`` or ``pairwise``).  Returns (output, log_prob or None)
    as float64 arrays."""
    x = np.asarray(x, dtype=acc)
    with np.errstate(all="ignore"):
        if op == "SoftmaxCrossEntropyLoss":
            m = np.max(x, axis=1, keepdims=True) if x.size else x
            s = (x - m).astype(acc)
            e = libm.exp(s).astype(acc)
            tot = _sum(np.moveaxis(e, 1, -1), order, acc)[..., None] if x.size else e
            logp = (s - np.moveaxis(libm.log(tot).astype(acc), -1, 1)).astype(acc) if x.size else s
        else:
            logp = x
        t = np.asarray(target).astype(np.int64)
        c = x.shape[1]
        w = np.ones(c, dtype=acc) if weight is None else np.asarray(weight, dtype=acc)
        keep = np.ones(t.shape, dtype=bool) if ignore_index is None else t != int(ignore_index)
        safe = np.where(keep, t, 0)
        y = np.take_along_axis(logp, safe[:, None], axis=1)[:, 0] if t.size else np.zeros(t.shape, dtype=acc)
        wt = np.where(keep, w[safe], acc(0)).astype(acc)
        loss = np.where(keep, (-y * wt).astype(acc), acc(0)).astype(acc)
        if reduction == "none":
            out = loss
        else:
            s_ = _sum(loss.ravel(), order, acc)
            out = s_ if reduction == "sum" else (s_ / _sum(wt.ravel(), order, acc)).astype(acc)
    lp = np.asarray(logp, dtype=np.float64) if op == "SoftmaxCrossEntropyLoss" else None
    return np.asarray(out, dtype=np.float64), lp


def _sum(a: np.ndarray, order: str, acc):
    """Sum over the last axis in precision ``acc``, one rounding per addition, in ``order``."""
    a = np.asarray(a, dtype=acc)
    if order == "reverse":
        a = a[..., ::-1]
    if order == "pairwise":
        while a.shape[-1] > 1:
            if a.shape[-1] % 2:
                a = np.concatenate([a, np.zeros(a.shape[:-1] + (1,), dtype=acc)], axis=-1)
            a = (a[..., 0::2] + a[..., 1::2]).astype(acc)
        return a[..., 0] if a.shape[-1] else np.zeros(a.shape[:-1], dtype=acc)
    out = np.zeros(a.shape[:-1], dtype=acc)
    for j in range(a.shape[-1]):
        out = (out + a[..., j]).astype(acc)
    return out


def gamma(n: int, u: float) -> float:
    """Higham's ``gamma_n = n u / (1 - n u)``: the relative bound of ``n`` roundings."""
    return n * u / (1 - n * u) if n * u < 1 else math.inf


def bound(op: str, x, target, weight, ignore_index, reduction: str, type_name: str) -> dict:
    """Per-output absolute error bounds (float64 arrays broadcastable to the outputs) of any
    kernel computing in :func:`compute_type` of ``type_name`` in any summation order, with or
    without FMA (docs/tolerance.md, "Losses"):

    * ``log_prob`` (SoftmaxCrossEntropyLoss): LogSoftmax's composition rule, ``1.01 b_exp +
      b_log log C`` absolute plus ``gamma_C`` of the row sum (relative, which is absolute in
      log);
    * per-target loss: ``|w| a_y + u |l|`` (``a_y`` the log_prob bound, 0 for
      NegativeLogLikelihoodLoss whose ``input`` is exact; one rounding of the product);
    * ``sum``: ``gamma_{n-1} sum|l| + sum(per-target bounds)`` over the ``n`` targets;
    * ``mean``: ``(e_S + |S/W| e_W) / (W - e_W) + u |S/W|`` with ``e_W = gamma_{n-1} sum w``.
    """
    p = "double" if type_name == "double" else "float"
    u = float(dtypes.eps(dtypes.elem_type(p))) / 2
    xs = np.asarray(x, dtype=np.float64)
    c = xs.shape[1] if xs.ndim >= 2 else 1
    out = {}
    if op == "SoftmaxCrossEntropyLoss":
        a_y = 1.01 * budget_rel("exp", p) + budget_rel("log", p) * math.log(max(c, 1)) + gamma(c, u) + 2 * u
        logp = log_softmax(xs)
        out["log_prob"] = np.full(xs.shape, a_y) + 2 * u * np.abs(logp)
        loss, wt = _picked(logp, target, weight, ignore_index)
    else:
        a_y = 0.0
        loss, wt = _picked(xs, target, weight, ignore_index)
    per = np.abs(wt) * a_y + u * np.abs(loss)
    if reduction == "none":
        out["loss"] = per
        return out
    n = max(loss.size, 1)
    e_s = gamma(n - 1, u) * float(np.sum(np.abs(loss))) + float(np.sum(per)) + u * abs(float(np.sum(loss)))
    if reduction == "sum":
        out["loss"] = np.array(e_s)
        return out
    w_tot = float(np.sum(wt))
    e_w = gamma(n - 1, u) * float(np.sum(np.abs(wt)))
    with np.errstate(all="ignore"):
        q = abs(float(np.sum(loss)) / w_tot) if w_tot else 0.0
    out["loss"] = np.array((e_s + q * e_w) / (w_tot - e_w) + u * q if w_tot > e_w else 0.0)
    return out
