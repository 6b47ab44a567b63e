"""Oracles of onnxruntime's attention-family contrib operators (com.microsoft); the entries are
in :mod:`conformance.ops.contrib_attention`.

RotaryEmbedding (com.microsoft, 1), onnxruntime-defined (ContribOperators.md): input
``[batch, sequence, hidden]`` split into ``num_heads`` heads, ``position_ids [batch, sequence]``
indexing the ``[max_position, rotary_dim / 2]`` cos/sin caches, pairs ``(2i, 2i+1)`` when
``interleaved``, halves otherwise.  This is the ai.onnx RotaryEmbedding-23 algorithm with its
inputs reordered, so the project's one rotary oracle
(:func:`conformance.reference.transformer.rotary_embedding`) is reused, not rewritten.

EmbedLayerNormalization (1), MultiHeadAttention (1), GroupQueryAttention (1) and Attention (1)
(com.microsoft), onnxruntime-defined: :func:`embed_layer_normalization`,
:func:`multi_head_attention`, :func:`group_query_attention`, :func:`ms_attention`; the attention
operators wrap the ai.onnx core :func:`conformance.reference.attention.scaled_dot_product_attention`
(layouts, caches, masks and rotary here, the softmax attention there).  Error bounds:
:func:`embed_layer_normalization_bound`, :func:`attention_bound`.
"""

from __future__ import annotations

import numpy as np

from . import transformer as _rope
from . import libm


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
    bound = (libm.expm1(2 * eps) + _gamma(2 * lk + 8, u_a) + 2 * u_t) * pv
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
        if (ab.ndim != 4 or ab.shape[0] not in (1, batch) or ab.shape[1] not in (1, heads)
                or ab.shape[2:] != (lq, total)):
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


# ============================================================================ GroupQueryAttention
def gqa_heads(query, key=None, value=None, *, num_heads: int, kv_num_heads: int):
    """The heads of com.microsoft GroupQueryAttention-1: query ``[B, S, N * H]`` with key/value
    ``[B, S, Nkv * H]``, or packed QKV ``[B, S, (N + 2 Nkv) H]`` (key and value absent); returns
    float64 ``[B, N, S, H]``, ``[B, Nkv, S, H]``, ``[B, Nkv, S, H]``.

    Raises:
        ValueError: ``kv_num_heads`` not dividing ``num_heads``, hidden sizes that are not
            multiples of the head counts, key/value of other shapes."""
    if kv_num_heads <= 0 or num_heads <= 0 or num_heads % kv_num_heads:
        raise ValueError(f"GroupQueryAttention: kv_num_heads {kv_num_heads} does not divide num_heads {num_heads}")
    q = np.asarray(query, np.float64)
    if q.ndim != 3:
        raise ValueError("GroupQueryAttention: query must be 3-D")
    if key is None and value is None:
        d = q.shape[2]
        if d % (num_heads + 2 * kv_num_heads):
            raise ValueError("GroupQueryAttention: packed QKV width is not (N + 2 Nkv) * head_size")
        h = d // (num_heads + 2 * kv_num_heads)
        q, k, v = q[..., :num_heads * h], q[..., num_heads * h:(num_heads + kv_num_heads) * h], \
            q[..., (num_heads + kv_num_heads) * h:]
    else:
        if key is None or value is None:
            raise ValueError("GroupQueryAttention: key and value go together")
        k, v = np.asarray(key, np.float64), np.asarray(value, np.float64)
        if k.shape != v.shape or k.shape[:2] != q.shape[:2]:
            raise ValueError(f"GroupQueryAttention: key {k.shape} / value {v.shape} do not fit query {q.shape}")
    qh, kh, vh = split_heads(q, num_heads), split_heads(k, kv_num_heads), split_heads(v, kv_num_heads)
    if kh.shape[-1] != qh.shape[-1]:
        raise ValueError("GroupQueryAttention: query and key head sizes differ")
    return qh, kh, vh


def group_query_attention(query, key, value, past_key, past_value, seqlens_k, total_sequence_length, cos_cache=None,
                          sin_cache=None, position_ids=None, attention_bias=None, head_sink=None, *, num_heads: int,
                          kv_num_heads: int, scale=None, softcap: float = 0.0, local_window_size: int = -1,
                          do_rotary: int = 0, rotary_interleaved: int = 0, causal: int = 1, smooth_softmax: int = -1):
    """com.microsoft GroupQueryAttention-1 (ContribOperators.md), float64, per batch entry on the
    core :func:`conformance.reference.attention.scaled_dot_product_attention`.

    Entry ``b`` holds ``T = seqlens_k[b] + 1`` tokens after the step, so its ``P = T - S`` cached
    tokens are ``past_key[b, :, :P]`` (absent past: ``P = 0``); query row ``s`` is at position
    ``P + s``.  With ``do_rotary`` the new query and key heads are rotated at their positions
    (``position_ids[b, s]`` when given) with the caches (``rotary_interleaved``: pairs (2i, 2i+1));
    the keys are the cached ones then the new ones; query head ``h`` reads kv head
    ``h // (N / Nkv)``; causal: key ``j <= P + s``; ``local_window_size = W > 0``: also
    ``j >= P + s - W`` (Attention-25's left_window_size reading; contested, see the entry);
    scores ``scale Q K^T`` (default ``1/sqrt(H)``), softcap ``c tanh(s / c)`` when ``softcap > 0``,
    plus ``attention_bias[..., :T]``; ``smooth_softmax`` 1 with ``head_sink``: the head's
    ``exp(sink_h)`` joins the softmax denominator.

    Returns:
        ``(output [B, S, N H], present_key, present_value, probs, heads)``: the presents
        ``[B, Nkv, max(past length, total_sequence_length), H]`` with each entry's first ``T``
        rows defined (the rest zero here: unspecified by the text); ``probs`` and ``heads`` per
        entry (lists) for the error bound.

    Raises:
        ValueError: :func:`gqa_heads`' checks, ``T < S`` (a right-padded prompt: its padded rows
            are unspecified, never generated), a cache too short, a bias of the wrong shape."""
    from . import transformer as _rope
    from .attention import scaled_dot_product_attention

    qh, kh, vh = gqa_heads(query, key, value, num_heads=num_heads, kv_num_heads=kv_num_heads)
    b, n, s, h = qh.shape
    sk = np.asarray(seqlens_k).astype(np.int64).reshape(-1)
    total = int(np.asarray(total_sequence_length).reshape(()))
    if sk.shape != (b,):
        raise ValueError(f"GroupQueryAttention: seqlens_k must be [{b}]")
    if (past_key is None) != (past_value is None):
        raise ValueError("GroupQueryAttention: past_key and past_value go together")
    pbuf = 0 if past_key is None else np.shape(past_key)[2]
    plen = max(pbuf, total)
    pres_k = np.zeros((b, kv_num_heads, plen, h))
    pres_v = np.zeros((b, kv_num_heads, plen, vh.shape[-1]))
    ys, probs, heads = [], [], []
    for bi in range(b):
        t = int(sk[bi]) + 1
        p = t - s
        if p < 0 or t > total or (p > 0 and p > pbuf):
            raise ValueError(f"GroupQueryAttention: seqlens_k[{bi}] + 1 = {t} does not fit S = {s}, past {pbuf}, "
                             f"total {total}")
        qb, kb, vb = qh[bi:bi + 1], kh[bi:bi + 1], vh[bi:bi + 1]
        if do_rotary:
            pos = (np.arange(p, p + s)[None, :] if position_ids is None
                   else np.asarray(position_ids).astype(np.int64)[bi:bi + 1])
            rd = 2 * np.shape(cos_cache)[-1]
            kw = {"interleaved": rotary_interleaved, "rotary_embedding_dim": rd if rd != h else 0}
            qb = _rope.rotary_embedding(qb, cos_cache, sin_cache, pos, **kw)
            kb = _rope.rotary_embedding(kb, cos_cache, sin_cache, pos, **kw)
        if p > 0:
            kb = np.concatenate([np.asarray(past_key, np.float64)[bi:bi + 1, :, :p], kb], axis=2)
            vb = np.concatenate([np.asarray(past_value, np.float64)[bi:bi + 1, :, :p], vb], axis=2)
        pres_k[bi, :, :t], pres_v[bi, :, :t] = kb[0], vb[0]
        add = None
        if attention_bias is not None:
            ab = np.asarray(attention_bias, np.float64)
            if ab.ndim != 4 or ab.shape[0] not in (1, b) or ab.shape[1] not in (1, n) or ab.shape[2:] != (s, total):
                raise ValueError(f"GroupQueryAttention: attention_bias {ab.shape} is not [B|1, N|1, {s}, {total}]")
            add = ab[(bi if ab.shape[0] > 1 else 0):][:1, :, :, :t]
        window = (local_window_size, -1) if local_window_size is not None and local_window_size > 0 else None
        y, sc = scaled_dot_product_attention(qb, kb, vb, scale=scale, mask=add, is_causal=bool(causal),
                                             causal_offset=p, softcap=softcap, window=window)
        pr = sc[3]
        if smooth_softmax == 1:
            sink = np.zeros(n) if head_sink is None else np.asarray(head_sink, np.float64)
            z = sc[2]
            m = np.maximum(np.max(np.where(np.isneginf(z), -np.inf, z), axis=-1, keepdims=True),
                           sink[None, :, None, None])
            e = np.where(np.isneginf(z), 0.0, libm.exp(z - m))
            pr = e / (e.sum(axis=-1, keepdims=True) + libm.exp(sink[None, :, None, None] - m))
            y = pr @ np.repeat(vb, n // kv_num_heads, axis=1)
        ys.append(y)
        probs.append(pr)
        heads.append((qb, np.repeat(kb, n // kv_num_heads, axis=1), np.repeat(vb, n // kv_num_heads, axis=1),
                      None if add is None else np.broadcast_to(add, pr.shape)))
    out = merge_heads(np.concatenate(ys, axis=0)) if b else np.zeros((0, s, n * h))
    return out, pres_k, pres_v, probs, heads


# ============================================================================ Attention (com.microsoft)
def ms_attention_projections(x, weights, bias=None, *, num_heads: int, qkv_hidden_sizes=None):
    """The input projection of com.microsoft Attention-1: ``X W (+ bias)`` split into Q, K, V of
    hidden sizes ``qkv_hidden_sizes`` (default: a third of the weights' second dimension each),
    float64 ``[B, S, D]``, ``[B, S, D]``, ``[B, S, Dv]``; also ``|X| |W| + |bias|`` split alike (the
    scale of a projection's rounding error).

    Raises:
        ValueError: the text's rules: sizes that are not positive multiples of num_heads, sizes whose
            sum is not the weights' second dimension, a second dimension not divisible by three
            without qkv_hidden_sizes, Q and K sizes that differ, a bias of another length."""
    xx, w = np.asarray(x, np.float64), np.asarray(weights, np.float64)
    if xx.ndim != 3 or w.ndim != 2 or w.shape[0] != xx.shape[2]:
        raise ValueError(f"Attention: input {xx.shape} and weights {w.shape} do not fit")
    width = w.shape[1]
    if qkv_hidden_sizes is None or len(qkv_hidden_sizes) == 0:
        if width % 3:
            raise ValueError("Attention: without qkv_hidden_sizes the weights' second dimension must be divisible by 3")
        sizes = [width // 3] * 3
    else:
        sizes = [int(a) for a in qkv_hidden_sizes]
        if len(sizes) != 3 or sum(sizes) != width:
            raise ValueError(f"Attention: qkv_hidden_sizes {sizes} do not sum to the weights' {width}")
    if any(sz <= 0 or sz % num_heads for sz in sizes) or sizes[0] != sizes[1]:
        raise ValueError(f"Attention: hidden sizes {sizes} must be positive multiples of num_heads {num_heads}, "
                         "Q and K alike")
    b = np.zeros(width) if bias is None else np.asarray(bias, np.float64)
    if b.shape != (width,):
        raise ValueError(f"Attention: bias {b.shape} is not [{width}]")
    full = xx @ w + b
    mag = np.abs(xx) @ np.abs(w) + np.abs(b)
    cut = np.cumsum([0] + sizes)
    parts = [full[..., cut[i]:cut[i + 1]] for i in range(3)]
    mags = [mag[..., cut[i]:cut[i + 1]] for i in range(3)]
    return parts, mags


def ms_attention_mask(mask_index, attention_bias, *, batch: int, heads: int, lq: int, total: int,
                      mask_filter_value: float = -10000.0) -> np.ndarray:
    """The additive bias ``[B, N, S, T]`` of com.microsoft Attention-1: ``attention_bias`` plus
    ``mask_filter_value`` at masked keys: ``mask_index`` ``[B]`` (right padding: keys at or past each
    length), ``[2B]`` (left padding: exclusive ends then inclusive starts), ``[B, T]`` or
    ``[B, S, T]`` (0 masked, 1 attended).

    Raises:
        ValueError: a mask_index of another shape (the 4-D and ``3B + 2`` forms are not built)."""
    add = np.zeros((batch, heads, lq, total))
    if attention_bias is not None:
        ab = np.asarray(attention_bias, np.float64)
        if (ab.ndim != 4 or ab.shape[0] not in (1, batch) or ab.shape[1] not in (1, heads)
                or ab.shape[2:] != (lq, total)):
            raise ValueError(f"Attention: attention_bias {ab.shape} is not [B|1, N|1, {lq}, {total}]")
        add = add + ab
    if mask_index is not None:
        m = np.asarray(mask_index).astype(np.int64)
        j = np.arange(total)
        if m.shape == (batch,):
            keep = (j[None, :] < m[:, None])[:, None, None, :]
        elif m.shape == (2 * batch,):
            end, start = m[:batch], m[batch:]
            keep = ((j[None, :] < end[:, None]) & (j[None, :] >= start[:, None]))[:, None, None, :]
        elif m.shape == (batch, total):
            keep = (m != 0)[:, None, None, :]
        elif m.shape == (batch, lq, total):
            keep = (m != 0)[:, None, :, :]
        else:
            raise ValueError(f"Attention: mask_index {m.shape} fits no built form")
        add = add + np.where(keep, 0.0, float(np.float32(mask_filter_value)))
    return add


def ms_attention(x, weights, bias=None, mask_index=None, past=None, attention_bias=None, *, num_heads: int,
                 qkv_hidden_sizes=None, scale=None, unidirectional: int = 0, mask_filter_value: float = -10000.0):
    """com.microsoft Attention-1 (ContribOperators.md), float64: :func:`ms_attention_projections`,
    heads, ``past [2, B, N, P, H]`` prepended to the keys and values (``present [2, B, N, P + S, H]``),
    :func:`ms_attention_mask`'s bias, ``unidirectional``: key ``j <= P + i``; the core
    :func:`conformance.reference.attention.scaled_dot_product_attention`.

    Returns:
        ``(output [B, S, Dv], present, probs, (qh, kh, vh), (mq, mk, mv))``, the last two for the
        error bound (heads and their projection magnitudes, past rows with magnitude 0).

    Raises:
        ValueError: the projection's and mask's checks; a past with other hidden sizes."""
    from .attention import scaled_dot_product_attention

    (q, k, v), (mq, mk, mv) = ms_attention_projections(x, weights, bias, num_heads=num_heads,
                                                       qkv_hidden_sizes=qkv_hidden_sizes)
    qh, kh, vh = (split_heads(a, num_heads) for a in (q, k, v))
    mqh, mkh, mvh = (split_heads(a, num_heads) for a in (mq, mk, mv))
    b, n, s, h = qh.shape
    if past is not None:
        ps = np.asarray(past, np.float64)
        if ps.ndim != 5 or ps.shape[:3] != (2, b, n) or ps.shape[4] != h or vh.shape[-1] != h:
            raise ValueError(f"Attention: past {ps.shape} is not [2, B, N, P, H] (Q, K, V of one hidden size)")
        kh, vh = np.concatenate([ps[0], kh], axis=2), np.concatenate([ps[1], vh], axis=2)
        z = np.zeros_like(ps[0])
        mkh, mvh = np.concatenate([z, mkh], axis=2), np.concatenate([z, mvh], axis=2)
    t = kh.shape[2]
    add = ms_attention_mask(mask_index, attention_bias, batch=b, heads=n, lq=s, total=t,
                            mask_filter_value=mask_filter_value)
    y, sc = scaled_dot_product_attention(qh, kh, vh, scale=scale, mask=add, is_causal=bool(unidirectional),
                                         causal_offset=t - s)
    present = np.stack([kh, vh]) if past is not None else None
    return merge_heads(y), present, sc[3], (qh, kh, vh, sc["bias"]), (mqh, mkh, mvh)
