"""Oracles, error bounds and legitimate kernels of ai.onnx Attention (23, 24, 25) and
TensorScatter (24); the entries are in :mod:`conformance.ops.attention`.

The core, :func:`scaled_dot_product_attention`, is the float64 scaled dot-product attention of
the Attention operator text (``onnx.defs.get_schema("Attention", 25).doc``) on 4-D heads; it is
public and shared with onnxruntime's com.microsoft attention operators, so its signature only
ever grows keyword arguments.  :func:`attention` wraps it with the ONNX operator's layout
handling (3-D inputs split by ``q_num_heads`` / ``kv_num_heads``, ``past_key`` / ``past_value``
concatenated, a short ``attn_mask`` padded, the causal offset of each cache case,
``nonpad_kv_seqlen``) and returns the operator's four outputs.

Decisions taken from the operator text (each stated where it is applied):

* causal alignment: "query ``i`` attends key ``j`` iff ``j <= i + offset``", ``offset`` =
  ``past_sequence_length`` with ``past_key``, ``nonpad_kv_seqlen[b] - q_sequence_length`` with
  ``nonpad_kv_seqlen`` and no past, **0 when neither is given** (the text's "no-cache case":
  top-left, so a query longer or shorter than the keys is *not* bottom-right aligned without a
  cache).  The core's own default (``causal_offset=None``) is ``Lk - Lq`` (bottom-right), the
  alignment of a self-attention step over a cache; :func:`attention` always passes the text's
  offset explicitly.
* order: ``scores = scale * Q K^T`` (the text scales Q and K by ``sqrt(scale)`` each: the same
  real number), softcap ``c * tanh(scores / c)`` (``c > 0``) *before* the bias is added, then the
  bias (boolean mask: ``0`` where True, ``-inf`` where False; float mask: added as is; causal,
  window and padding: ``-inf`` where disallowed), softmax over the keys, ``P V``.
* a fully-masked query row (its combined bias is ``-inf`` at every key, decided on the bias,
  not on the scores) gives a zero row of ``Y`` and of the mode-3 probabilities, not NaN (the
  text of 23, 24 and 25: "produces a zero output row, not NaN").
"""

from __future__ import annotations

import numpy as np


def _as_offsets(offset, batch: int) -> np.ndarray:
    """``offset`` (an int or a ``(B,)`` array) as an int64 array broadcastable to ``(B,1,1,1)``."""
    off = np.asarray(offset, dtype=np.int64)
    if off.ndim == 0:
        return off.reshape(1, 1, 1, 1)
    if off.shape != (batch,):
        raise ValueError(f"causal_offset must be a scalar or of shape ({batch},), not {off.shape}")
    return off.reshape(batch, 1, 1, 1)


def allowed_keys(batch: int, lq: int, lk: int, *, is_causal=False, causal_offset=None, window=None,
                 kv_seqlen=None) -> np.ndarray:
    """The structural part of the mask (causal, sliding window, padding), bool
    ``(B or 1, 1, Lq, Lk)``, True where query ``i`` may attend key ``j``.

    * causal (Attention "is_causal"): ``j <= i + offset``;
    * window (Attention-25 ``left_window_size`` / ``right_window_size``): with ``p = offset + i``,
      ``p - left <= j`` when ``left >= 0`` and ``j <= p + right`` when ``right >= 0`` (``-1`` or
      ``None``: that side unbounded);
    * ``kv_seqlen`` (Attention-24 ``nonpad_kv_seqlen``, shape ``(B,)``): ``j < kv_seqlen[b]``.

    ``causal_offset`` None means ``lk - lq`` (bottom-right); a ``(B,)`` array gives each batch
    its own offset (the external-cache case).  Raises ValueError on a malformed offset or
    ``kv_seqlen``."""
    off = _as_offsets(lk - lq if causal_offset is None else causal_offset, batch)
    i = np.arange(lq, dtype=np.int64).reshape(1, 1, lq, 1)
    j = np.arange(lk, dtype=np.int64).reshape(1, 1, 1, lk)
    ok = np.ones((off.shape[0], 1, lq, lk), dtype=bool)
    p = i + off
    if is_causal:
        ok &= j <= p
    if window is not None:
        left, right = window
        if left is not None and left >= 0:
            ok &= j >= p - left
        if right is not None and right >= 0:
            ok &= j <= p + right
    if kv_seqlen is not None:
        n = np.asarray(kv_seqlen, dtype=np.int64)
        if n.shape != (batch,):
            raise ValueError(f"kv_seqlen must be of shape ({batch},), not {n.shape}")
        ok = ok & (j < n.reshape(batch, 1, 1, 1))
    return ok


def softmax_rows(x: np.ndarray, masked_rows: np.ndarray | None = None) -> np.ndarray:
    """Softmax over the last axis in float64 with max subtraction; rows listed True in
    ``masked_rows`` (broadcastable to ``x.shape[:-1] + (1,)``) and rows that are ``-inf``
    everywhere are zero rows (the Attention text's fully-masked-row guard), never NaN."""
    x = np.asarray(x, dtype=np.float64)
    m = np.max(x, axis=-1, keepdims=True) if x.shape[-1] else np.zeros(x.shape[:-1] + (1,))
    dead = np.isneginf(m)
    if masked_rows is not None:
        dead = dead | masked_rows
    with np.errstate(invalid="ignore", over="ignore"):
        e = np.exp(x - np.where(dead, 0.0, m))
        e = np.where(dead, 0.0, e)
        s = np.sum(e, axis=-1, keepdims=True)
        return np.where(dead, 0.0, e / np.where(s == 0, 1.0, s))


def scaled_dot_product_attention(q, k, v, *, scale=None, mask=None, is_causal=False, causal_offset=None,
                                 softcap=0.0, window=None, kv_seqlen=None):
    """Scaled dot-product attention in float64, the core of ai.onnx Attention (23-25).

    Args:
        q: ``(B, Hq, Lq, Dk)`` query.
        k: ``(B, Hkv, Lk, Dk)`` keys (already including any past keys).
        v: ``(B, Hkv, Lk, Dv)`` values; ``Dv`` may differ from ``Dk``.
        scale: the factor of ``Q K^T``; None means ``1 / sqrt(Dk)`` (the text's default
            "1/sqrt(head_size)").
        mask: None, a bool array (True = attend, False adds ``-inf``) or an additive float
            array (added to the scores; ``-inf`` entries disallow), broadcastable to
            ``(B, Hq, Lq, Lk)`` by numpy's rules.
        is_causal: query row ``i`` may attend key ``j`` only if ``j <= i + causal_offset``.
        causal_offset: an int or a ``(B,)`` int array; None means ``Lk - Lq`` (bottom-right
            alignment).  ai.onnx Attention passes the text's offset (past length,
            ``nonpad_kv_seqlen - Lq``, or 0 without a cache); see :func:`attention`.
        softcap: ``c > 0`` replaces the scaled scores by ``c * tanh(scores / c)`` *before* the
            mask is added (the text: "applied before mask / bias addition and softmax").
        window: None or ``(left, right)`` (Attention-25): with ``p = causal_offset + i``, key
            ``j`` is allowed iff ``p - left <= j`` (``left >= 0``) and ``j <= p + right``
            (``right >= 0``); ``-1`` leaves a side unbounded.
        kv_seqlen: None or ``(B,)`` ints: keys ``j >= kv_seqlen[b]`` are disallowed (the
            padding mask Attention-24 derives from ``nonpad_kv_seqlen``).

    Query head ``h`` reads key/value head ``h // (Hq // Hkv)`` (grouped-query / multi-query
    attention; the text's reference repeats each kv head ``Hq / Hkv`` times in place).

    Returns:
        ``(y, scores)``: ``y`` float64 ``(B, Hq, Lq, Dv)``; ``scores`` a dict of float64
        ``(B, Hq, Lq, Lk)`` arrays keyed by Attention's ``qk_matmul_output_mode``: ``0`` the
        scaled ``Q K^T``, ``1`` after softcap, ``2`` after the bias (``-inf`` where
        disallowed), ``3`` the softmax probabilities (zero rows where fully masked); plus
        ``"bias"`` (the combined additive bias) and ``"masked_rows"`` (bool
        ``(B, Hq, Lq, 1)``, True where every key is disallowed).  A fully-masked row gives
        a zero row of ``y`` and of ``scores[3]`` (the text: "a zero output row, not NaN").

    Raises:
        ValueError: ranks other than 4, ``Hq`` not a multiple of ``Hkv``, batch or head counts
            of K and V that differ, head sizes of Q and K that differ, key lengths of K and V
            that differ, a mask that does not broadcast.
    """
    q = np.asarray(q, dtype=np.float64)
    k = np.asarray(k, dtype=np.float64)
    v = np.asarray(v, dtype=np.float64)
    if q.ndim != 4 or k.ndim != 4 or v.ndim != 4:
        raise ValueError("scaled_dot_product_attention: q, k and v must be 4-D (B, H, L, D)")
    b, hq, lq, dk = q.shape
    if k.shape[0] != b or v.shape[0] != b:
        raise ValueError("scaled_dot_product_attention: batch sizes of q, k, v differ")
    hkv, lk = k.shape[1], k.shape[2]
    if v.shape[1] != hkv or v.shape[2] != lk:
        raise ValueError("scaled_dot_product_attention: k and v differ in heads or sequence length")
    if k.shape[3] != dk:
        raise ValueError(f"scaled_dot_product_attention: head sizes of q ({dk}) and k ({k.shape[3]}) differ")
    if hkv == 0 or hq % hkv:
        raise ValueError(f"scaled_dot_product_attention: q heads {hq} not a multiple of kv heads {hkv}")
    dv = v.shape[3]
    group = hq // hkv
    kh = np.repeat(k, group, axis=1) if group > 1 else k
    vh = np.repeat(v, group, axis=1) if group > 1 else v
    s = float(1.0 / np.sqrt(dk)) if scale is None else float(scale)
    with np.errstate(invalid="ignore", over="ignore"):
        qk = np.matmul(q, np.swapaxes(kh, -1, -2)) * s
        capped = softcap * np.tanh(qk / softcap) if softcap and softcap > 0 else qk.copy()
    bias = np.zeros((b, hq, lq, lk), dtype=np.float64)
    if mask is not None:
        m = np.asarray(mask)
        try:
            np.broadcast_shapes(m.shape, bias.shape)
        except ValueError as exc:
            raise ValueError(f"scaled_dot_product_attention: mask of shape {m.shape} does not broadcast to "
                             f"{bias.shape}") from exc
        if m.dtype == np.bool_:
            bias = bias + np.where(m, 0.0, -np.inf)
        else:
            bias = bias + m.astype(np.float64)
    ok = allowed_keys(b, lq, lk, is_causal=is_causal, causal_offset=causal_offset, window=window,
                      kv_seqlen=kv_seqlen)
    bias = np.where(ok, bias, -np.inf)
    masked_rows = np.all(np.isneginf(bias), axis=-1, keepdims=True) if lk else np.ones((b, hq, lq, 1), bool)
    with np.errstate(invalid="ignore"):
        biased = capped + bias
    p = softmax_rows(biased, masked_rows)
    y = np.matmul(p, vh) if lk else np.zeros((b, hq, lq, dv))
    return y, {0: qk, 1: capped, 2: biased, 3: p, "bias": bias, "masked_rows": masked_rows}
