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

from . import libm


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
        e = libm.exp(x - np.where(dead, 0.0, m))
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
        capped = softcap * libm.tanh(qk / softcap) if softcap and softcap > 0 else qk.copy()
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


# ============================================================================ the operator
#: ``softmax_precision`` values the text of 25 lists (TensorProto data types) -> type names.
SOFTMAX_PRECISION = {1: "float", 10: "float16", 11: "double", 16: "bfloat16"}
#: Unit roundoff and smallest subnormal per floating type name.
UNIT = {"double": (2.0 ** -53, 2.0 ** -1074), "float": (2.0 ** -24, 2.0 ** -149),
        "float16": (2.0 ** -11, 2.0 ** -24), "bfloat16": (2.0 ** -8, 2.0 ** -133)}
#: The precision a legitimate kernel must at least accumulate in (MatMul's rule,
#: :data:`conformance.reference.linalg.ACC`: float32 for the 16-bit types).
PRECISION = {"double": "double", "float": "float", "float16": "float", "bfloat16": "float"}


def _split_heads(x: np.ndarray, heads: int, what: str) -> np.ndarray:
    """A 3-D ``(B, L, H * D)`` input as ``(B, H, L, D)`` (the text's reshape and transpose)."""
    if not heads:
        raise ValueError(f"Attention: a 3-D {what} needs q_num_heads and kv_num_heads")
    b, n, hid = x.shape
    if hid % heads:
        raise ValueError(f"Attention: {what}'s hidden size {hid} is not a multiple of {heads} heads")
    return np.transpose(x.reshape(b, n, heads, hid // heads), (0, 2, 1, 3))


def prepare(q, k, v, attn_mask=None, past_key=None, past_value=None, nonpad_kv_seqlen=None, *, version=25,
            q_num_heads=None, kv_num_heads=None, is_causal=0, left_window_size=-1, right_window_size=-1, **_):
    """The operator text's layout steps, float64: ``(q4, k4, v4, mask, offset, window,
    kv_seqlen, rank)`` with ``q4 (B, Hq, Lq, Dk)``, ``k4``/``v4`` the present keys/values
    ``(B, Hkv, P + Lkv, D)`` (past prepended), the mask padded to the total length with
    ``-inf``/False where its last dimension is shorter (24+: "padded to total_sequence_length
    with negative infinity", a last dimension of 1 included, as the function body of 24 and 25
    pads it; 23's text and body broadcast it: the reading of a last dimension of 1 at 24+ is
    contested), the causal/window ``offset`` (``past_sequence_length`` with a past,
    ``nonpad_kv_seqlen - q_sequence_length`` per batch with nonpad_kv_seqlen and no past, 0
    otherwise), ``window`` (25) and ``kv_seqlen`` (the padding mask).

    Raises:
        ValueError: Q, K, V of different ranks or not 3-D/4-D; a 3-D input without the head
            attributes; ``q_num_heads`` not a multiple of ``kv_num_heads``; head sizes of Q and
            K that differ; past_key without past_value (or the reverse); nonpad_kv_seqlen with
            a past; a past of other batch/heads/head size; a mask that does not broadcast, or
            whose last dimension is longer than the total sequence (or shorter, before 24)."""
    arrs = [np.asarray(a, dtype=np.float64) for a in (q, k, v)]
    q, k, v = arrs
    if not (q.ndim == k.ndim == v.ndim) or q.ndim not in (3, 4):
        raise ValueError("Attention: Q, K and V must all be 3-D or all 4-D")
    rank = q.ndim
    if rank == 3:
        q = _split_heads(q, int(q_num_heads or 0), "Q")
        k = _split_heads(k, int(kv_num_heads or 0), "K")
        v = _split_heads(v, int(kv_num_heads or 0), "V")
    if (past_key is None) != (past_value is None):
        raise ValueError("Attention: past_key and past_value 'shall be used together'")
    if past_key is not None and nonpad_kv_seqlen is not None:
        raise ValueError("Attention: nonpad_kv_seqlen 'should not be used together with past_key and past_value'")
    if k.shape[1] == 0 or q.shape[1] % k.shape[1]:
        raise ValueError(f"Attention: q_num_heads {q.shape[1]} is not a multiple of kv_num_heads {k.shape[1]}")
    if q.shape[3] != k.shape[3]:
        raise ValueError(f"Attention: head sizes of Q ({q.shape[3]}) and K ({k.shape[3]}) differ")
    past = 0
    if past_key is not None:
        pk = np.asarray(past_key, dtype=np.float64)
        pv = np.asarray(past_value, dtype=np.float64)
        if pk.ndim != 4 or pv.ndim != 4 or pk.shape[:2] != k.shape[:2] or pk.shape[3] != k.shape[3] or \
                pv.shape[:2] != v.shape[:2] or pv.shape[3] != v.shape[3] or pk.shape[2] != pv.shape[2]:
            raise ValueError("Attention: past_key/past_value must be (B, kv_num_heads, past_sequence_length, head)")
        past = pk.shape[2]
        k = np.concatenate([pk, k], axis=2)
        v = np.concatenate([pv, v], axis=2)
    b, lq, lt = q.shape[0], q.shape[2], k.shape[2]
    mask = None
    if attn_mask is not None:
        mask = np.asarray(attn_mask)
        if mask.ndim == 0:
            mask = mask.reshape(1)
        short = lt - mask.shape[-1]
        if short < 0 or (short > 0 and version < 24 and mask.shape[-1] != 1):
            raise ValueError(f"Attention: attn_mask's last dimension {mask.shape[-1]} does not match the total "
                             f"sequence length {lt}")
        if short > 0 and version >= 24:  # 24+: padded, a last dimension of 1 too (the function body's Pad)
            pad = [(0, 0)] * (mask.ndim - 1) + [(0, short)]
            mask = np.pad(mask, pad, constant_values=False if mask.dtype == np.bool_ else -np.inf)
        try:
            np.broadcast_shapes(mask.shape, (b, q.shape[1], lq, lt))
        except ValueError as exc:
            raise ValueError(f"Attention: attn_mask {mask.shape} does not broadcast to {(b, q.shape[1], lq, lt)}") \
                from exc
    kv_seqlen = None
    if nonpad_kv_seqlen is not None:
        kv_seqlen = np.asarray(nonpad_kv_seqlen).astype(np.int64).reshape(-1)
        if kv_seqlen.shape != (b,):
            raise ValueError(f"Attention: nonpad_kv_seqlen must be of shape ({b},)")
        offset = kv_seqlen - lq
    else:
        offset = past
    window = None
    if version >= 25 and (int(left_window_size) >= 0 or int(right_window_size) >= 0):
        window = (int(left_window_size), int(right_window_size))
    return q, k, v, mask, offset, window, kv_seqlen, rank


def _merge_heads(y: np.ndarray, rank: int) -> np.ndarray:
    """``(B, H, L, D)`` back to the input's layout (3-D: ``(B, L, H * D)``)."""
    if rank == 4:
        return y
    b, h, n, d = y.shape
    return np.transpose(y, (0, 2, 1, 3)).reshape(b, n, h * d)


def attention(q, k, v, attn_mask=None, past_key=None, past_value=None, nonpad_kv_seqlen=None, *, version=25,
              **attrs):
    """ai.onnx Attention (23, 24, 25) in float64: ``(Y, present_key, present_value,
    qk_matmul_output)`` (``present_*`` the past and current keys/values concatenated,
    ``(B, Hkv, P + L, D)``; ``qk_matmul_output`` the ``qk_matmul_output_mode`` stage,
    ``(B, Hq, Lq, P + L)``).  ``attrs`` are the node's attributes (``scale`` absent: the
    default ``1/sqrt(head_size)``, a written 0 is a literal 0 as in the function body;
    ``softcap`` 0: none); :func:`prepare` does the layout and
    raises its ValueErrors, :func:`scaled_dot_product_attention` the arithmetic.
    ``softmax_precision`` does not change the exact result (only the tolerance)."""
    q4, k4, v4, mask, offset, window, kv_seqlen, rank = prepare(
        q, k, v, attn_mask, past_key, past_value, nonpad_kv_seqlen, version=version, **attrs)
    scale = attrs.get("scale")
    y, sc = scaled_dot_product_attention(
        q4, k4, v4, scale=None if scale is None else float(scale), mask=mask, is_causal=bool(attrs.get("is_causal", 0)),
        causal_offset=offset, softcap=float(attrs.get("softcap", 0.0) or 0.0), window=window, kv_seqlen=kv_seqlen)
    mode = int(attrs.get("qk_matmul_output_mode", 0) or 0)
    return _merge_heads(y, rank), k4, v4, sc[mode]


def tensor_scatter(past_cache, update, write_indices=None, *, mode="linear", axis=-2) -> np.ndarray:
    """ai.onnx TensorScatter-24: ``present_cache`` = ``past_cache`` with, for every batch ``b``
    (axis 0) and every index ``s`` of ``update`` along ``axis``, the slice ``update[..., s, ...]``
    written at ``write_indices[b] + s`` (``linear``) or ``(write_indices[b] + s) % max_sequence_length``
    (``circular``) along ``axis``; ``write_indices`` absent means zeros.  Exact (data movement):
    the result has the inputs' values and dtype.

    Raises:
        ValueError: an unknown mode; ``axis`` 0 (the batch axis) or out of range; shapes that
            differ outside ``axis`` or an update longer than the cache along it; a linear write
            past the cache's end; a negative write index; write_indices not of shape (B,)."""
    past = np.asarray(past_cache)
    upd = np.asarray(update)
    if mode not in ("linear", "circular"):
        raise ValueError(f"TensorScatter: mode must be 'linear' or 'circular', not {mode!r}")
    r = past.ndim
    if upd.ndim != r or r < 2:
        raise ValueError("TensorScatter: past_cache and update must have the same rank (>= 2)")
    ax = axis + r if axis < 0 else axis
    if not 1 <= ax < r:
        raise ValueError(f"TensorScatter: axis {axis} must be in [-r + 1, r - 1] (not the batch axis)")
    for i in range(r):
        if i != ax and past.shape[i] != upd.shape[i]:
            raise ValueError(f"TensorScatter: shapes {past.shape} and {upd.shape} differ at dimension {i}")
    m, s = past.shape[ax], upd.shape[ax]
    if s > m:
        raise ValueError(f"TensorScatter: the update ({s}) is longer than the cache ({m}) along axis {axis}")
    b = past.shape[0]
    w = np.zeros(b, dtype=np.int64) if write_indices is None else np.asarray(write_indices).astype(np.int64)
    if w.shape != (b,):
        raise ValueError(f"TensorScatter: write_indices must be of shape ({b},)")
    if b and (w.min() < 0 or (mode == "linear" and (w + s).max() > m)):
        raise ValueError("TensorScatter: a write index outside the cache")
    out = past.copy()
    for bi in range(b):
        for j in range(s):
            pos = int(w[bi]) + j
            if mode == "circular":
                pos %= m
            dst = [bi] + [slice(None)] * (r - 1)
            src = [bi] + [slice(None)] * (r - 1)
            dst[ax], src[ax] = pos, j
            out[tuple(dst)] = upd[tuple(src)]
    return out


# ============================================================================ tolerance
def _gamma(k: float, u: float) -> float:
    return k * u / (1.0 - k * u) if k > 0 else 0.0


def _budget(fn: str, t: str) -> float:
    from ..tolerance import budget_ulps

    return float(budget_ulps(fn, t))


def bound(q, k, v, attn_mask=None, past_key=None, past_value=None, nonpad_kv_seqlen=None, *, t: str, version=25,
          **attrs) -> dict:
    """Per-element forward-error bounds, float64, of every legitimate kernel of ai.onnx
    Attention for element type ``t`` (docs/tolerance.md "Attention and TensorScatter"):
    ``{"Y": (B, Hq, Lq, Dv), 0: .., 1: .., 2: .., 3: ..}`` (the ``qk_matmul_output`` stages
    of each mode, ``(B, Hq, Lq, Lk)``; 0 where the stage is exact or ``-inf``).

    A legitimate kernel follows the function body at the mandated precision: it may round
    every node's result to T (``sqrt(scale)`` computed in float32 and cast to T; ``Q`` and ``K``
    scaled in T; the matmuls accumulated in P = float32 for 16-bit T, T otherwise, in any order,
    with or without FMA; softcap's Div/Tanh/Mul; the bias Add; the cast to the softmax type S =
    ``softmax_precision`` or T; the Softmax computed internally in P_S (float32 for a 16-bit S),
    with or without max subtraction, blockwise (online) with rescaling, exp/tanh within the
    budget table; the probabilities rounded to S and to T) or keep a wider type throughout.
    The logit errors ``e_j`` of a row perturb its softmax at most as
    ``p_j e^{e_j} / sum_k p_k e^{-e_k} - p_j`` (and the mirror), exactly, not to first order.

    Raises the ValueErrors of :func:`prepare`."""
    q4, k4, v4, mask, offset, window, kv_seqlen, rank = prepare(
        q, k, v, attn_mask, past_key, past_value, nonpad_kv_seqlen, version=version, **attrs)
    scale_attr = attrs.get("scale")
    softcap = float(attrs.get("softcap", 0.0) or 0.0)
    y, sc = scaled_dot_product_attention(
        q4, k4, v4, scale=None if scale_attr is None else float(scale_attr), mask=mask,
        is_causal=bool(attrs.get("is_causal", 0)), causal_offset=offset, softcap=softcap, window=window,
        kv_seqlen=kv_seqlen)
    sp = attrs.get("softmax_precision")
    s_t = SOFTMAX_PRECISION.get(int(sp), t) if sp else t
    u_t, sub_t = UNIT[t]
    u_p, sub_p = UNIT[PRECISION[t]]
    u_s, sub_s = UNIT[s_t]
    ps = PRECISION[s_t]
    u_ps, sub_ps = UNIT[ps]
    u32 = UNIT["float"][0]
    b, hq, lq, dk = q4.shape
    lk = k4.shape[2]
    group = hq // k4.shape[1] if k4.shape[1] else 1
    kh = np.repeat(k4, group, axis=1)
    vh = np.repeat(v4, group, axis=1)
    s = float(scale_attr) if scale_attr is not None else 1.0 / np.sqrt(dk) if dk else 1.0
    # logits: sqrt(scale) in float32 then cast to T (|dc| <= 2 u32 + u_T), Q and K scaled in T,
    # the matmul in P, the result rounded to T
    dc = 2 * u32 + u_t
    rel_pre = (1 + dc) ** 2 * (1 + u_t) ** 2 - 1
    absqk = np.matmul(np.abs(q4), np.swapaxes(np.abs(kh), -1, -2)) * s
    qk = sc[0]
    sq = np.sqrt(s)
    mq = float(np.max(np.abs(q4))) if q4.size else 0.0
    mk = float(np.max(np.abs(k4))) if k4.size else 0.0
    under = dk * (sub_t * (mq + mk) * sq + sub_t ** 2 + sub_p) + sub_t
    e0 = (rel_pre + _gamma(dk, u_p) * (1 + rel_pre)) * absqk + u_t * np.abs(qk) + under
    e0 = e0 * (1 + u_t)
    # softcap c tanh(L / c): Lipschitz 1 in L; the division, tanh (budget) and product rounded
    # to T; c cast to T (|dz/dc| <= 1)
    z = sc[1]
    if softcap > 0:
        sech2 = 1.0 - libm.tanh(qk / softcap) ** 2
        e1 = e0 + u_t * np.abs(qk) * sech2 + u_t * softcap + (_budget("tanh", t) * 2 * u_t + u_t) * np.abs(z) + sub_t
    else:
        e1 = e0
    # bias added in T (finite entries), then the cast to S when S is narrower than T
    x = sc[2]
    fin = np.isfinite(x)
    with np.errstate(invalid="ignore"):
        e2 = np.where(fin, e1 + u_t * np.abs(np.where(fin, x, 0.0)), 0.0)
    e2s = e2 + (u_s * np.abs(np.where(fin, x, 0.0)) if UNIT[s_t][0] > u_t else 0.0)
    e2s = np.where(fin, e2s, 0.0)
    # exact softmax of the perturbed logits
    p = sc[3]
    with np.errstate(over="ignore", invalid="ignore"):
        up = libm.exp(np.minimum(e2s, 700.0))
        dn = libm.exp(-np.minimum(e2s, 700.0))
        a_ = np.sum(p * up, axis=-1, keepdims=True)
        b_ = np.sum(p * dn, axis=-1, keepdims=True)
        dp = p * np.maximum(up / np.where(b_ > 0, b_, 1.0) - 1.0, 1.0 - dn / np.where(a_ > 0, a_, 1.0))
    dp = np.where(p > 0, dp, 0.0)
    # the softmax's own arithmetic in P_S: argument rounding (|x_j - m| plus the online
    # rescalings, at most twice the row's range), Lk + 1 exponentials, the sum, the division
    if lk:
        xr0 = np.where(fin, x, -np.inf)
        xr1 = np.where(fin, x, np.inf)
        rng_ = np.max(xr0, axis=-1, keepdims=True) - np.min(xr1, axis=-1, keepdims=True)
        rng_ = np.where(np.isfinite(rng_), rng_, 0.0)
    else:
        rng_ = 0.0
    r_num = 2 * u_ps * rng_ + (lk + 1) * (_budget("exp", ps) * 2 * u_ps + 2 * u_ps)
    r_sm = 2 * r_num + _gamma(lk, u_ps) + (_budget("divide", ps) * 2 * u_ps + u_ps)
    r_sm = r_sm * (1 + 2 * r_num)
    pp = p + dp
    e3 = dp + r_sm * pp + lk * sub_ps
    # rounded to S, then cast to T where T is narrower
    e3 = e3 + u_s * (pp + e3) + sub_s
    if u_t > u_s:
        e3 = e3 + u_t * (pp + e3) + sub_t
    e3 = np.where(sc["masked_rows"], 0.0, e3)
    e3 = np.where(p > 0, e3, np.where(fin, e3, 0.0))
    # P V accumulated in P (its rounding to T is final_tolerance's, in tolerance_of)
    pv_abs = np.matmul(pp + e3, np.abs(vh))
    ey = np.matmul(e3, np.abs(vh)) + _gamma(lk, u_p) * pv_abs + lk * sub_p + sub_t
    return {"Y": _merge_heads(ey, rank), 0: e0, 1: e1, 2: np.where(fin, e2, 0.0), 3: e3}


def tolerance_of(t: str, e: np.ndarray):
    """The :class:`conformance.tolerance.Tolerance` of one output from its per-element bound
    (the largest; twice for ``double``: the float64 oracle is itself such a kernel), then the
    rounding to T on both sides (:func:`conformance.reference.linalg.final_tolerance`)."""
    from .. import tolerance as tol
    from .linalg import final_tolerance

    bmax = float(np.max(e)) if np.size(e) else 0.0
    if t == "double":
        bmax *= 2
    u, sub = UNIT[t]
    atol, rtol = final_tolerance(bmax, u, sub)
    return tol.Tolerance(atol, rtol, variants=("bound:function body rounded per node, P accumulation, any softmax",))


# ============================================================================ legitimate kernels
def _np_type(t: str):
    import ml_dtypes

    return {"double": np.float64, "float": np.float32, "float16": np.float16, "bfloat16": ml_dtypes.bfloat16}[t]


def attention_kernel(q, k, v, attn_mask=None, past_key=None, past_value=None, nonpad_kv_seqlen=None, *, t: str,
                     version=25, per_node=True, block=0, max_shift=True, libm_ulps=0.0, fma=False, **attrs):
    """A legitimate numpy kernel of ai.onnx Attention for element type ``t``: returns the four
    outputs in T's numpy type.

    ``per_node`` rounds every node of the function body to T (the body's casts; softmax in
    S = ``softmax_precision`` or T, internally float32 for a 16-bit S); otherwise everything
    stays in P (float32 for 16-bit T, T otherwise) until the outputs.  ``block > 0``: the
    softmax and ``P V`` computed blockwise over the keys (online softmax, flash attention's
    running max and rescaling); ``max_shift`` False: ``exp(x)`` without subtracting the row
    maximum; ``libm_ulps``: exp and tanh off by that many ulps of their precision; ``fma``:
    the dot products accumulated in float64 then rounded (a fused multiply-add's single
    rounding, at most).  Raises the ValueErrors of :func:`prepare`."""
    tt = _np_type(t)
    pt = _np_type(PRECISION[t])
    sp = attrs.get("softmax_precision")
    st = _np_type(SOFTMAX_PRECISION.get(int(sp), t)) if sp else tt
    pst = _np_type(PRECISION[SOFTMAX_PRECISION.get(int(sp), t)]) if sp else pt
    q4, k4, v4, mask, offset, window, kv_seqlen, rank = prepare(
        q, k, v, attn_mask, past_key, past_value, nonpad_kv_seqlen, version=version, **attrs)
    rn = (lambda a: np.asarray(a).astype(tt)) if per_node else (lambda a: np.asarray(a).astype(pt))
    b, hq, lq, dk = q4.shape
    lk = k4.shape[2]
    group = hq // k4.shape[1]
    kh = np.repeat(k4, group, axis=1)
    vh = np.repeat(v4, group, axis=1)
    scale_attr = attrs.get("scale")
    s32 = np.float32(scale_attr) if scale_attr is not None else np.float32(1.0) / np.sqrt(np.float32(dk))
    c = rn(np.sqrt(np.float32(s32)))
    qs = rn(rn(q4) * c)
    ks = rn(rn(kh) * c)

    def mm(a, bb):
        if fma:
            return np.matmul(a.astype(np.float64), bb.astype(np.float64)).astype(pt)
        return np.matmul(a.astype(pt), bb.astype(pt))

    lib = 1.0 + libm_ulps * float(np.finfo(np.float32 if pt != np.float64 else np.float64).eps)
    with np.errstate(all="ignore"):
        l0 = rn(mm(qs, np.swapaxes(ks, -1, -2)))
        capv = float(attrs.get("softcap", 0.0) or 0.0)
        if capv > 0:
            cc = rn(np.float32(capv))
            l1 = rn(rn(libm.tanh(rn(l0 / cc).astype(pt)) * lib) * cc)
        else:
            l1 = l0
        bias = np.zeros((b, hq, lq, lk))
        if mask is not None:
            bias = bias + (np.where(mask, 0.0, -np.inf) if mask.dtype == np.bool_ else rn(mask).astype(np.float64))
        ok = allowed_keys(b, lq, lk, is_causal=bool(attrs.get("is_causal", 0)), causal_offset=offset,
                          window=window, kv_seqlen=kv_seqlen)
        bias = np.where(ok, bias, -np.inf)
        dead = np.all(np.isneginf(bias), axis=-1, keepdims=True) if lk else np.ones((b, hq, lq, 1), bool)
        l2 = rn(l1.astype(np.float64) + bias) if per_node else (l1.astype(pt) + bias.astype(pt))
        xs = np.asarray(l2).astype(st).astype(pst) if per_node else np.asarray(l2).astype(pst)
        vv = vh.astype(tt).astype(pt)
        if block and lk:
            m = np.full((b, hq, lq, 1), -np.inf, dtype=pst)
            ssum = np.zeros((b, hq, lq, 1), dtype=pst)
            acc = np.zeros((b, hq, lq, vh.shape[3]), dtype=pt)
            for j0 in range(0, lk, block):
                xb = xs[..., j0:j0 + block]
                mn = np.maximum(m, np.max(xb, axis=-1, keepdims=True)) if max_shift else np.zeros_like(m)
                mz = np.where(np.isneginf(mn), 0, mn).astype(pst)
                resc = (libm.exp((np.where(np.isneginf(m), mz, m) - mz).astype(pst)) * lib).astype(pst)
                e = (libm.exp((xb - mz).astype(pst)) * lib).astype(pst)
                ssum = (ssum * resc + np.sum(e, axis=-1, keepdims=True, dtype=pst)).astype(pst)
                acc = (acc * resc.astype(pt) + mm(e.astype(pt), vv[:, :, j0:j0 + block])).astype(pt)
                m = mn if max_shift else m
            y = np.where(dead, 0, acc / np.where(ssum == 0, 1, ssum).astype(pt))
            pfull = _softmax_kernel(xs, pst, max_shift, lib, dead)
        else:
            pfull = _softmax_kernel(xs, pst, max_shift, lib, dead)
            pT = (pfull.astype(st).astype(tt) if per_node else pfull.astype(pt))
            y = mm(pT.astype(pt), vv)
        y = np.where(dead, 0, y)
    mode = int(attrs.get("qk_matmul_output_mode", 0) or 0)
    stage = {0: l0, 1: l1, 2: l2, 3: pfull.astype(st) if per_node else pfull}[mode]
    out = (_merge_heads(np.asarray(y).astype(tt), rank), k4.astype(tt), v4.astype(tt), np.asarray(stage).astype(tt))
    return out


def _softmax_kernel(xs, pst, max_shift, lib, dead):
    """Softmax over the last axis in ``pst`` (max subtraction or not), zero rows where ``dead``."""
    with np.errstate(all="ignore"):
        m = np.max(xs, axis=-1, keepdims=True) if xs.shape[-1] else np.zeros(xs.shape[:-1] + (1,), pst)
        m = np.where(np.isneginf(m) | ~max_shift, 0, m).astype(pst)
        e = (libm.exp((xs - m).astype(pst)) * lib).astype(pst)
        ssum = np.sum(e, axis=-1, keepdims=True, dtype=pst)
        p = (e / np.where(ssum == 0, 1, ssum)).astype(pst)
    return np.where(dead, 0, p).astype(pst)
