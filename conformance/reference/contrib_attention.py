"""Oracles of onnxruntime's attention-family contrib operators (com.microsoft); the entries are
in :mod:`conformance.ops.contrib_attention`.

RotaryEmbedding (com.microsoft, 1), onnxruntime-defined (ContribOperators.md): input
``[batch, sequence, hidden]`` split into ``num_heads`` heads, ``position_ids [batch, sequence]``
indexing the ``[max_position, rotary_dim / 2]`` cos/sin caches, pairs ``(2i, 2i+1)`` when
``interleaved``, halves otherwise.  This is the ai.onnx RotaryEmbedding-23 algorithm with its
inputs reordered, so the project's one rotary oracle
(:func:`conformance.reference.transformer.rotary_embedding`) is reused, not rewritten.
"""

from __future__ import annotations

import numpy as np

from . import transformer as _rope


def ms_rotary_embedding(x, position_ids, cos_cache, sin_cache, *, interleaved=0, num_heads=0,
                        rotary_embedding_dim=0) -> np.ndarray:
    """com.microsoft RotaryEmbedding-1: ``x [batch, seq, hidden]``, ``position_ids [batch, seq]``
    int64, caches ``[max_position, r/2]``; returns float64 ``[batch, seq, hidden]``.

    Raises:
        ValueError: the checks of :func:`conformance.reference.transformer.rotary_parts`."""
    return _rope.rotary_embedding(x, cos_cache, sin_cache, position_ids, interleaved=interleaved,
                                  num_heads=num_heads, rotary_embedding_dim=rotary_embedding_dim)


# ============================================================================ EmbedLayerNormalization
def _ids(a) -> np.ndarray:
    return np.asarray(a).astype(np.int64)


def embedding_sum(input_ids, segment_ids, word_embedding, position_embedding, segment_embedding=None,
                  position_ids=None) -> np.ndarray:
    """The embedding sum of com.microsoft EmbedLayerNormalization-1 in float64 ``[batch, seq, hidden]``:
    ``word_embedding[input_ids] + position_embedding[p] (+ segment_embedding[segment_ids])`` with
    ``p = position_ids`` (``[batch, seq]`` or ``[1, seq]``, broadcast over the batch) or the
    sequence index ``0..seq-1`` when position_ids is absent.

    Raises:
        ValueError: an id outside its table, segment_ids without segment_embedding (or the
            reverse), tables of different hidden sizes, ids not 2-D."""
    ids = _ids(input_ids)
    if ids.ndim != 2:
        raise ValueError(f"EmbedLayerNormalization: input_ids must be 2-D, not {ids.ndim}-D")
    b, s = ids.shape
    we, pe = np.asarray(word_embedding, np.float64), np.asarray(position_embedding, np.float64)
    if we.ndim != 2 or pe.ndim != 2 or we.shape[1] != pe.shape[1]:
        raise ValueError(f"EmbedLayerNormalization: embedding tables {we.shape} and {pe.shape} disagree")
    if (segment_ids is None) != (segment_embedding is None):
        raise ValueError("EmbedLayerNormalization: segment_ids and segment_embedding go together")
    pos = np.broadcast_to(np.arange(s)[None, :], (b, s)) if position_ids is None else \
        np.broadcast_to(_ids(position_ids), (b, s))
    for name, i, table in (("input_ids", ids, we), ("position", pos, pe)):
        if i.size and (i.min() < 0 or i.max() >= table.shape[0]):
            raise ValueError(f"EmbedLayerNormalization: {name} outside [0, {table.shape[0]})")
    e = we[ids] + pe[pos]
    if segment_ids is not None:
        se, sid = np.asarray(segment_embedding, np.float64), _ids(segment_ids)
        if se.ndim != 2 or se.shape[1] != we.shape[1] or sid.shape != ids.shape:
            raise ValueError("EmbedLayerNormalization: segment_embedding/segment_ids shapes")
        if sid.size and (sid.min() < 0 or sid.max() >= se.shape[0]):
            raise ValueError("EmbedLayerNormalization: segment_ids outside the table")
        e = e + se[sid]
    return e


def embed_layer_normalization(input_ids, segment_ids, word_embedding, position_embedding, segment_embedding,
                              gamma, beta, mask=None, position_ids=None, *, epsilon: float = 1e-12):
    """com.microsoft EmbedLayerNormalization-1 (ContribOperators.md), float64.

    ``output = LayerNormalization(embedding_sum, gamma, beta)`` over the hidden axis (biased
    variance, ``1 / sqrt(var + epsilon)``); ``mask_index[b]`` = the number of words of batch
    ``b`` (its mask's leading ones: the text's "position of first 0 in mask, or number of
    words", for a right-padded 0/1 mask); ``embedding_sum`` = the sum before normalization.

    Returns:
        ``(output [B, S, H] float64, mask_index [B] ints or None, embedding_sum [B, S, H])``.

    Raises:
        ValueError: :func:`embedding_sum`'s checks, gamma/beta not ``[hidden]``, mask not
            ``input_ids``' shape."""
    e = embedding_sum(input_ids, segment_ids, word_embedding, position_embedding, segment_embedding, position_ids)
    h = e.shape[-1]
    g, bt = np.asarray(gamma, np.float64), np.asarray(beta, np.float64)
    if g.shape != (h,) or bt.shape != (h,):
        raise ValueError(f"EmbedLayerNormalization: gamma {g.shape} / beta {bt.shape} are not [{h}]")
    m = e.mean(axis=-1, keepdims=True) if h else np.zeros(e.shape[:-1] + (1,))
    v = ((e - m) ** 2).mean(axis=-1, keepdims=True) if h else m
    y = (e - m) / np.sqrt(v + float(np.float32(epsilon))) * g + bt
    mi = None
    if mask is not None:
        mk = _ids(mask)
        if mk.shape != _ids(input_ids).shape:
            raise ValueError(f"EmbedLayerNormalization: mask {mk.shape} is not input_ids' shape")
        first0 = np.where((mk == 0).any(axis=1), (mk == 0).argmax(axis=1), mk.shape[1])
        mi = np.array([int(x) for x in first0], dtype=object)
    return y, mi, e


def embed_layer_normalization_bound(terms, e, gamma, *, epsilon: float, u_t: float, u_a: float) -> np.ndarray:
    """Per output element, the error bound of a kernel that rounds the embedding sum to T (unit
    roundoff ``u_t``) and computes the statistics and the normalization in a precision of unit
    roundoff ``u_a`` (float32 for 16-bit T), in any summation order, two-pass or one-pass
    (``E[x^2] - E[x]^2``) variance, FMA or not; first order (docs/tolerance.md,
    "com.microsoft attention family").

    ``terms``: the float64 ``|word| + |position| (+ |segment|)`` per element; ``e`` the exact sum.
    """
    h = e.shape[-1]
    if h == 0 or e.size == 0:
        return np.zeros(e.shape)
    eps = float(np.float32(epsilon))
    g = np.abs(np.asarray(gamma, np.float64))
    k = h + 4
    gk = k * u_a / (1 - k * u_a)
    eta = 2.2 * u_t * terms                                     # the sum's two roundings in T
    m = e.mean(axis=-1, keepdims=True)
    c = e - m
    v = (c * c).mean(axis=-1, keepdims=True)
    sq = (e * e).mean(axis=-1, keepdims=True)
    eta_max = eta.max(axis=-1, keepdims=True)
    dm = eta_max + gk * np.abs(e).mean(axis=-1, keepdims=True)
    dc = eta + dm + u_a * np.abs(c)
    # the variance: the perturbed centred terms, and the accumulation (one-pass: mean(e^2) scale)
    dv = 2 * np.sqrt(v) * dc.max(axis=-1, keepdims=True) + dc.max(axis=-1, keepdims=True) ** 2 + 2 * gk * sq
    sig = np.sqrt(v + eps)
    rel_sig = 0.5 * dv / (v + eps) + 2 * u_a
    bound = g * (dc / sig + np.abs(c) / sig * rel_sig) + 3 * u_a * (g * np.abs(c) / sig)
    return 2.0 * bound


# ============================================================================ shared attention pieces
def split_heads(x, num_heads: int) -> np.ndarray:
    """``[batch, seq, num_heads * head]`` -> ``[batch, num_heads, seq, head]`` (BSNH -> BNSH).

    Raises:
        ValueError: ``x`` not 3-D or its hidden size not a multiple of ``num_heads``."""
    x = np.asarray(x, np.float64)
    if x.ndim != 3:
        raise ValueError(f"attention: a 3-D [batch, seq, hidden] tensor is expected, not {x.ndim}-D")
    b, s, d = x.shape
    if num_heads <= 0 or d % num_heads:
        raise ValueError(f"attention: hidden size {d} is not a multiple of num_heads {num_heads}")
    return x.reshape(b, s, num_heads, d // num_heads).transpose(0, 2, 1, 3)


def merge_heads(y: np.ndarray) -> np.ndarray:
    """``[batch, heads, seq, head]`` -> ``[batch, seq, heads * head]``."""
    b, n, s, h = y.shape
    return y.transpose(0, 2, 1, 3).reshape(b, s, n * h)


def _gamma(k: float, u: float) -> float:
    return k * u / (1.0 - k * u) if 0 < k * u < 1 else (0.0 if k <= 0 else np.inf)


def attention_bound(q, k, v, probs, *, scale: float, add=None, dq=None, dk=None, dv=None, u_t: float, u_a: float,
                    softcap: float = 0.0) -> np.ndarray:
    """Per element of the attention output ``[B, Hq, Lq, Dv]``, a first-order bound of the error of
    any kernel that computes ``softmax(scale * Q K^T + add) V`` in a working precision of unit
    roundoff ``u_a`` (float32 for 16-bit T) and may round the scores, the probabilities and the
    heads to T (``u_t``): any accumulation order, max subtraction or not, blockwise (online)
    softmax, FMA or not (docs/tolerance.md, "com.microsoft attention family").

    ``q, k, v`` are the exact float64 heads (kv heads already repeated to ``Hq``), ``probs`` the
    exact probabilities (0 at disallowed keys), ``add`` the finite additive bias (``-inf`` /
    mask-filter entries do not matter: their probability is 0 and stays 0 to first order),
    ``dq, dk, dv`` per-element bounds of the heads' own errors (upstream roundings: bias
    addition, rotary, projection).

    With ``ds`` the bound of a score's error (the dot product's accumulation ``gamma_Dk (|q||k|)``,
    the heads' errors, the scale and bias roundings, the softcap's tanh) and ``eps`` its row
    maximum over the attended keys, every probability is within ``p (e^{2 eps} - 1)`` plus its own
    roundings, so ``|dy| <= (e^{2 eps} - 1 + gamma_{2 Lk + 8}(u_a) + 2 u_t) sum_j p_j |v_j|
    + sum_j p_j dv_j``."""
    q, k, v = (np.asarray(a, np.float64) for a in (q, k, v))
    d = q.shape[-1]
    lk = k.shape[-2]
    aq, ak = np.abs(q), np.abs(k)
    kt = np.swapaxes(ak, -1, -2)
    sc = abs(float(scale))
    acc = aq @ kt
    err = _gamma(d, u_a) * acc
    if dq is not None:
        err = err + np.asarray(dq) @ kt
    if dk is not None:
        err = err + (aq + (0 if dq is None else np.asarray(dq))) @ np.swapaxes(np.asarray(dk), -1, -2)
    s = sc * (q @ np.swapaxes(k, -1, -2))
    ds = sc * err + (2 * u_a + u_t) * np.abs(s)
    if softcap and softcap > 0:
        ds = ds + 4 * u_a * softcap + u_t * softcap
    if add is not None:
        a = np.asarray(add, np.float64)
        a = np.where(np.isfinite(a) & (np.abs(a) < 1e3), a, 0.0)
        ds = ds + u_t * (np.abs(s) + np.abs(a))
    p = np.asarray(probs, np.float64)
    eps = np.max(np.where(p > 0, ds, 0.0), axis=-1, keepdims=True) if lk else np.zeros(p.shape[:-1] + (1,))
    pv = p @ np.abs(v)
    bound = (np.expm1(2 * eps) + _gamma(2 * lk + 8, u_a) + 2 * u_t) * pv
    if dv is not None:
        bound = bound + p @ np.asarray(dv)
    return bound


# ============================================================================ MultiHeadAttention
def mha_heads(query, key=None, value=None, bias=None, *, num_heads: int):
    """The heads of com.microsoft MultiHeadAttention-1 (ContribOperators.md): ``(q, k, v)`` as
    float64 ``[B, N, S, H]``, ``[B, N, L, H]``, ``[B, N, L, Hv]``, and the exact ``(q, k, v)``
    before the heads split (for the error bound: the bias sums).

    Forms: query ``[B, S, D]`` with key ``[B, L, D]`` and value ``[B, L, Dv]`` (``bias``
    ``[D + D + Dv]`` added to each); key/value ``[B, N, L, H]`` (already heads, BNSH: no bias);
    packed KV ``key [B, L, N, 2, H]`` (value absent); packed QKV ``query [B, S, N, 3, H]`` (key and
    value absent).

    Raises:
        ValueError: shapes that fit no form, a hidden size not a multiple of num_heads, a bias of
            the wrong length."""
    q = np.asarray(query, np.float64)
    if q.ndim == 5:
        if key is not None or value is not None or q.shape[3] != 3 or q.shape[2] != num_heads:
            raise ValueError("MultiHeadAttention: packed QKV is [B, S, N, 3, H] without key/value")
        qh, kh, vh = (q[:, :, :, i].transpose(0, 2, 1, 3) for i in range(3))
        return qh, kh, vh
    if key is None or q.ndim != 3:
        raise ValueError("MultiHeadAttention: query must be 3-D with a key, or packed QKV")
    k = np.asarray(key, np.float64)
    d = q.shape[2]
    if k.ndim == 5:
        if value is not None or k.shape[3] != 2 or k.shape[2] != num_heads:
            raise ValueError("MultiHeadAttention: packed KV is [B, L, N, 2, H] without value")
        qh = split_heads(q, num_heads)
        kh, vh = (k[:, :, :, i].transpose(0, 2, 1, 3) for i in range(2))
        if kh.shape[-1] != qh.shape[-1]:
            raise ValueError("MultiHeadAttention: packed KV head size differs from the query's")
        return qh, kh, vh
    if value is None:
        raise ValueError("MultiHeadAttention: value is required with a 3-D or 4-D key")
    vv = np.asarray(value, np.float64)
    if k.ndim == 4:
        if vv.ndim != 4 or bias is not None or k.shape[1] != num_heads:
            raise ValueError("MultiHeadAttention: BNSH key/value are [B, N, L, H] (no bias)")
        qh = split_heads(q, num_heads)
        if k.shape[3] != qh.shape[3]:
            raise ValueError("MultiHeadAttention: key head size differs from the query's")
        return qh, k, vv
    if k.ndim != 3 or vv.ndim != 3 or k.shape[2] != d or k.shape[:2] != vv.shape[:2] or k.shape[0] != q.shape[0]:
        raise ValueError(f"MultiHeadAttention: key {k.shape} / value {vv.shape} do not fit query {q.shape}")
    if bias is not None:
        bb = np.asarray(bias, np.float64)
        if bb.shape != (2 * d + vv.shape[2],):
            raise ValueError(f"MultiHeadAttention: bias {bb.shape} is not [{2 * d + vv.shape[2]}]")
        q, k, vv = q + bb[:d], k + bb[d:2 * d], vv + bb[2 * d:]
    return split_heads(q, num_heads), split_heads(k, num_heads), split_heads(vv, num_heads)


def mha_mask(key_padding_mask, attention_bias, *, batch: int, heads: int, lq: int, total: int, past: int,
             mask_filter_value: float) -> np.ndarray:
    """The additive bias ``[B, N, S, T]`` of com.microsoft MultiHeadAttention: ``attention_bias``
    (``[B or 1, N or 1, S, T]``) plus ``mask_filter_value`` where ``key_padding_mask`` marks padding
    (``[B]``: keys at or past each batch's length; ``[B, T]`` or ``[B, L]`` without past: 0 entries;
    ``[B, S, T]``: 0 entries).

    Raises:
        ValueError: a mask or bias of a shape the text does not list."""
    add = np.zeros((batch, heads, lq, total))
    if attention_bias is not None:
        ab = np.asarray(attention_bias, np.float64)
        if ab.ndim != 4 or ab.shape[0] not in (1, batch) or ab.shape[1] not in (1, heads) or ab.shape[2:] != (lq, total):
            raise ValueError(f"MultiHeadAttention: attention_bias {ab.shape} is not [B|1, N|1, {lq}, {total}]")
        add = add + ab
    if key_padding_mask is not None:
        m = np.asarray(key_padding_mask).astype(np.int64)
        j = np.arange(total)
        if m.shape == (batch,):
            keep = (j[None, :] < m[:, None])[:, None, None, :]
        elif m.shape == (batch, total):
            keep = (m != 0)[:, None, None, :]
        elif m.shape == (batch, lq, total):
            keep = (m != 0)[:, None, :, :]
        else:
            raise ValueError(f"MultiHeadAttention: key_padding_mask {m.shape} fits no listed form")
        add = add + np.where(keep, 0.0, float(np.float32(mask_filter_value)))
    return add


def multi_head_attention(query, key=None, value=None, bias=None, key_padding_mask=None, attention_bias=None,
                         past_key=None, past_value=None, *, num_heads: int, scale=None, unidirectional: int = 0,
                         mask_filter_value: float = -10000.0):
    """com.microsoft MultiHeadAttention-1 (ContribOperators.md), float64, on the core
    :func:`conformance.reference.attention.scaled_dot_product_attention`.

    The heads come from :func:`mha_heads`; ``past_key``/``past_value`` ``[B, N, P, H]`` are
    prepended to the new keys/values, giving ``present_key``/``present_value`` ``[B, N, P + L, H]``;
    the scores are ``scale * Q K^T`` (default ``1/sqrt(H)``) plus :func:`mha_mask`'s bias;
    ``unidirectional`` 1: query ``i`` attends key ``j <= P + i`` (the causal mask aligned to the
    bottom-right corner, the query being the last ``S`` of the ``P + S`` tokens).

    Returns:
        ``(output [B, S, N * Hv], present_key, present_value, probs [B, N, S, T], add [B, N, S, T])``.

    Raises:
        ValueError: :func:`mha_heads`' and :func:`mha_mask`'s checks, a past of the wrong shape."""
    from .attention import scaled_dot_product_attention

    qh, kh, vh = mha_heads(query, key, value, bias, num_heads=num_heads)
    b, n, s, h = qh.shape
    p = 0
    if (past_key is None) != (past_value is None):
        raise ValueError("MultiHeadAttention: past_key and past_value go together")
    if past_key is not None:
        pk, pv = np.asarray(past_key, np.float64), np.asarray(past_value, np.float64)
        if pk.ndim != 4 or pk.shape[:2] != (b, n) or pk.shape[3] != h or pv.shape[:3] != pk.shape[:3]:
            raise ValueError(f"MultiHeadAttention: past_key {pk.shape} is not [B, N, P, H]")
        p = pk.shape[2]
        kh, vh = np.concatenate([pk, kh], axis=2), np.concatenate([pv, vh], axis=2)
    t = kh.shape[2]
    add = mha_mask(key_padding_mask, attention_bias, batch=b, heads=n, lq=s, total=t, past=p,
                   mask_filter_value=mask_filter_value)
    y, sc = scaled_dot_product_attention(qh, kh, vh, scale=scale, mask=add, is_causal=bool(unidirectional),
                                         causal_offset=t - s)
    return merge_heads(y), kh, vh, sc[3], sc["bias"]
