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
