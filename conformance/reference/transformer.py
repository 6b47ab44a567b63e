"""Oracles, error bounds and legitimate kernels of the transformer operators (ai.onnx
RotaryEmbedding-23, SwiGLU-28, LinearAttention-27); the entries are in
:mod:`conformance.ops.transformer`.

Each oracle follows the operator text (``onnx.defs.get_schema(op).doc``): RotaryEmbedding its
numpy algorithm (the caches indexed by ``position_ids`` when given, taken per (batch, sequence
position) otherwise; pairs ``(2i, 2i+1)`` when ``interleaved``, halves ``(i, i + r/2)`` of the
rotated part otherwise, ``r = rotary_embedding_dim`` or the head size when 0; the tail of the
head past ``r`` passes through), SwiGLU ``Swish_alpha(A) * B`` with
``Swish_alpha(a) = a * Sigmoid(alpha * a)``, LinearAttention the sequential recurrences of its
four update rules.

The oracles compute in float64 on the exact input values; RotaryEmbedding's two-product sums are
correctly rounded (exact rational arithmetic for double inputs, whose products float64 cannot
hold; float32/float16/bfloat16 products are exact in float64).
"""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np

from ..ops import values as V
from . import libm


def gamma(k: int, u: float) -> float:
    """Higham's ``gamma_k = k u / (1 - k u)`` (0 for ``k <= 0``)."""
    return k * u / (1.0 - k * u) if k > 0 else 0.0


def unit(t: str) -> tuple[float, float]:
    """(unit roundoff, smallest subnormal) of the floating type ``t``."""
    fi = V.finfo(t)
    return float(fi.eps) / 2.0, float(fi.smallest_subnormal)


# ============================================================================ RotaryEmbedding
def _heads(x: np.ndarray, num_heads: int) -> np.ndarray:
    """``x`` as ``[batch, seq, heads, head_size]`` (the text's first step): a 4-D
    ``[batch, heads, seq, head_size]`` transposed, a 3-D ``[batch, seq, hidden]`` split into
    ``num_heads`` heads.

    Raises:
        ValueError: a 3-D input with ``num_heads`` 0, or ``hidden`` not a multiple of it."""
    if x.ndim == 4:
        return np.transpose(x, (0, 2, 1, 3))
    if x.ndim != 3:
        raise ValueError(f"RotaryEmbedding: X must be 3-D or 4-D, not {x.ndim}-D")
    if not num_heads:
        raise ValueError("RotaryEmbedding: num_heads 'Must be provided when input is a 3D tensor'")
    b, s, h = x.shape
    if h % num_heads:
        raise ValueError(f"RotaryEmbedding: hidden_size {h} is not a multiple of num_heads {num_heads}")
    return x.reshape((b, s, num_heads, h // num_heads))


def _unheads(y: np.ndarray, shape: tuple[int, ...]) -> np.ndarray:
    return y.reshape(shape) if len(shape) == 3 else np.transpose(y, (0, 2, 1, 3))


def rotary_parts(x, cos_cache, sin_cache, position_ids=None, *, interleaved=0, rotary_embedding_dim=0,
                 num_heads=0):
    """The pieces of the text's algorithm, float64: ``(x4, c, s, x1, x2, r)`` with ``x4`` the
    input as ``[batch, seq, heads, head_size]``, ``c``/``s`` the caches as
    ``[batch, seq, 1, r/2]`` (indexed by ``position_ids`` when given), ``x1``/``x2`` the two
    members of each rotated pair ``[batch, seq, heads, r/2]`` and ``r`` the rotated width.

    Raises:
        ValueError: the text's checks (a cache whose last dimension is not ``r/2``, an odd
            ``r``, ``r`` past the head, a cache of the wrong rank, 3-D without num_heads)."""
    x4 = _heads(np.asarray(x, dtype=np.float64), int(num_heads or 0))
    d = x4.shape[3]
    r = int(rotary_embedding_dim or 0) or d
    if r % 2 or r > d:
        raise ValueError(f"RotaryEmbedding: rotary_embedding_dim {r} must be even and at most head_size {d}")
    c = np.asarray(cos_cache, dtype=np.float64)
    s = np.asarray(sin_cache, dtype=np.float64)
    if position_ids is not None:
        if c.ndim != 2 or s.ndim != 2:
            raise ValueError("RotaryEmbedding: with position_ids the caches are 2-D (max_position_id_plus_1, r/2)")
        pid = np.asarray(position_ids).astype(np.int64)
        if pid.size and (pid.min() < 0 or pid.max() >= c.shape[0] or pid.max() >= s.shape[0]):
            raise ValueError("RotaryEmbedding: a position id outside the caches")
        c, s = c[pid], s[pid]
    elif c.ndim != 3 or s.ndim != 3:
        raise ValueError("RotaryEmbedding: without position_ids the caches are 3-D (batch, seq, r/2)")
    if c.shape[-1] != r // 2 or s.shape[-1] != r // 2:
        raise ValueError(f"RotaryEmbedding: the caches' last dimension must be rotary_embedding_dim/2 = {r // 2}")
    if c.shape[:2] != x4.shape[:2] or s.shape[:2] != x4.shape[:2]:
        raise ValueError("RotaryEmbedding: the caches (or position_ids) do not match (batch, sequence_length)")
    c, s = c[:, :, None, :], s[:, :, None, :]
    xr = x4[..., :r]
    if interleaved:
        x1, x2 = xr[..., 0::2], xr[..., 1::2]
    else:
        x1, x2 = xr[..., : r // 2], xr[..., r // 2:]
    return x4, c, s, x1, x2, r


def _assemble(x4, real, imag, r, interleaved, shape):
    out = x4.copy()
    if interleaved:
        out[..., 0:r:2], out[..., 1:r:2] = real, imag
    else:
        out[..., : r // 2], out[..., r // 2: r] = real, imag
    return _unheads(out, shape)


def _two_products(a, b, c, d, sign: int) -> np.ndarray:
    """``a*b + sign*c*d`` correctly rounded to float64 (exact rational arithmetic)."""
    a, b, c, d = np.broadcast_arrays(a, b, c, d)
    out = np.empty(a.shape, dtype=np.float64)
    fa, fb, fc, fd, fo = a.ravel(), b.ravel(), c.ravel(), d.ravel(), out.reshape(-1)
    for i in range(fa.size):
        vals = (fa[i], fb[i], fc[i], fd[i])
        if all(math.isfinite(v) for v in vals):
            fo[i] = float(Fraction(vals[0]) * Fraction(vals[1]) + sign * Fraction(vals[2]) * Fraction(vals[3]))
        else:
            fo[i] = vals[0] * vals[1] + sign * (vals[2] * vals[3])
    return out


def rotary_embedding(x, cos_cache, sin_cache, position_ids=None, *, interleaved=0, rotary_embedding_dim=0,
                     num_heads=0, exact: bool = False) -> np.ndarray:
    """RotaryEmbedding-23 (the text's algorithm): ``real = cos x1 - sin x2``,
    ``imag = sin x1 + cos x2`` for each rotated pair, written back in place of the pair, the
    head's tail past ``rotary_embedding_dim`` unchanged.

    Args:
        x: ``[batch, heads, seq, head_size]`` or ``[batch, seq, heads * head_size]``, float64.
        cos_cache / sin_cache: ``[max_position_id_plus_1, r/2]`` with ``position_ids``,
            ``[batch, seq, r/2]`` without.
        position_ids: ``[batch, seq]`` integers or None.
        exact: each two-product sum correctly rounded (double inputs); otherwise float64
            arithmetic (exact products for float32 and narrower inputs).

    Returns:
        float64 array of ``x``'s shape.

    Raises:
        ValueError: see :func:`rotary_parts`."""
    shape = np.shape(x)
    x4, c, s, x1, x2, r = rotary_parts(x, cos_cache, sin_cache, position_ids, interleaved=interleaved,
                                       rotary_embedding_dim=rotary_embedding_dim, num_heads=num_heads)
    with np.errstate(all="ignore"):
        if exact:
            real = _two_products(c, x1, s, x2, -1)
            imag = _two_products(s, x1, c, x2, 1)
        else:
            real = c * x1 - s * x2
            imag = s * x1 + c * x2
    return _assemble(x4, real, imag, r, interleaved, shape)


def rotary_magnitude(x, cos_cache, sin_cache, position_ids=None, **attrs) -> np.ndarray:
    """Per output element, ``|cos x1| + |sin x2|`` (``|sin x1| + |cos x2|``) for a rotated
    element and 0 for a passed-through one (non-finite terms as 0): the scale of the rounding
    error a kernel makes in the element's two products and one sum."""
    shape = np.shape(x)
    x4, c, s, x1, x2, r = rotary_parts(x, cos_cache, sin_cache, position_ids, **attrs)
    with np.errstate(all="ignore"):
        real = np.abs(c * x1) + np.abs(s * x2)
        imag = np.abs(s * x1) + np.abs(c * x2)
    real = np.where(np.isfinite(real), real, 0.0)
    imag = np.where(np.isfinite(imag), imag, 0.0)
    return _assemble(np.zeros_like(x4), real, imag, r, attrs.get("interleaved", 0), shape)


def rotary_kernel(x, cos_cache, sin_cache, position_ids=None, *, compute=np.float32, fma: bool = False,
                  **attrs) -> np.ndarray:
    """A legitimate kernel: the text's algorithm in the numpy type ``compute`` (float32 for
    float16/bfloat16/float, float64 for double, or the input type itself); ``fma``: the first
    product is kept exact and the sum rounded once (a fused multiply-add).  Returns the result
    in ``compute`` (the caller rounds it to T)."""
    shape = np.shape(x)
    x4, c, s, x1, x2, r = rotary_parts(x, cos_cache, sin_cache, position_ids, **attrs)
    ct = [np.asarray(v, dtype=compute) for v in (c, s, x1, x2)]
    c, s, x1, x2 = ct
    with np.errstate(all="ignore"):
        if fma:  # one rounding of c*x1 - fl(s*x2)
            wide = np.float64 if compute != np.float64 else np.longdouble
            real = (c.astype(wide) * x1.astype(wide) - (s * x2).astype(wide)).astype(compute)
            imag = (s.astype(wide) * x1.astype(wide) + (c * x2).astype(wide)).astype(compute)
        else:
            real = c * x1 - s * x2
            imag = s * x1 + c * x2
    out = _assemble(x4.astype(compute), real, imag, r, attrs.get("interleaved", 0), shape)
    return out


# ============================================================================ SwiGLU
def sigmoid(z: np.ndarray) -> np.ndarray:
    """The logistic function in float64, without overflow: ``1 / (1 + exp(-z))``."""
    z = np.asarray(z, dtype=np.float64)
    with np.errstate(all="ignore"):
        e = libm.exp(-np.abs(z))
        return np.where(z >= 0, 1.0 / (1.0 + e), e / (1.0 + e))


def swiglu(a, b, *, alpha=1.0) -> np.ndarray:
    """SwiGLU-28: ``Y = A * Sigmoid(alpha * A) * B`` (A the gate, B the value; identical shapes,
    no broadcasting), float64.

    Raises:
        ValueError: A and B of different shapes ("broadcasting is not applied")."""
    a = np.asarray(a, dtype=np.float64)
    b = np.asarray(b, dtype=np.float64)
    if a.shape != b.shape:
        raise ValueError(f"SwiGLU: A {a.shape} and B {b.shape} must have identical shapes")
    with np.errstate(all="ignore"):
        return a * sigmoid(np.float64(np.float32(alpha)) * a) * b


# ============================================================================ LinearAttention
UPDATE_RULES = ("linear", "gated", "delta", "gated_delta")


def _split_heads(x: np.ndarray, h: int) -> np.ndarray:
    """``[B, T, h*d]`` -> ``[B, T, h, d]``."""
    b, t, w = x.shape
    if w % h:
        raise ValueError(f"LinearAttention: last dimension {w} is not a multiple of {h} heads")
    return x.reshape((b, t, h, w // h))


def linear_attention(query, key, value, past_state=None, decay=None, beta=None, *, q_num_heads, kv_num_heads,
                     update_rule="gated_delta", scale=0.0, chunk_size=64, dtype=np.float64):
    """LinearAttention-27: the recurrence of ``update_rule`` run token by token (the text's
    "Equivalent to running the recurrent update sequentially for each token").

    Shapes: query ``[B, T, Hq*dk]``, key ``[B, T, Hkv*dk]``, value ``[B, T, Hkv*dv]``,
    past_state ``[B, Hkv, dk, dv]`` (zeros when absent), decay ``[B, T, Hkv*dk]`` (per key
    dimension) or ``[B, T, Hkv]`` (per head), beta ``[B, T, Hkv]`` or ``[B, T, 1]``.  Query head
    ``h`` reads KV head ``h // (Hq / Hkv)``.  ``scale`` 0 means ``1/sqrt(dk)``.

    Returns:
        ``(output [B, T, Hq*dv], present_state [B, Hkv, dk, dv])`` in ``dtype`` (float64: the
        oracle; float32: a legitimate kernel's state).

    Raises:
        ValueError: an unknown update rule, q_num_heads not a positive multiple of
            kv_num_heads, a missing decay (gated rules) or beta (delta rules), shapes that
            disagree."""
    if update_rule not in UPDATE_RULES:
        raise ValueError(f"LinearAttention: unknown update_rule {update_rule!r}")
    hq, hkv = int(q_num_heads), int(kv_num_heads)
    if hq <= 0 or hkv <= 0 or hq % hkv:
        raise ValueError("LinearAttention: q_num_heads must be a positive multiple of kv_num_heads")
    f = lambda v: None if v is None else np.asarray(v, dtype=np.float64).astype(dtype)  # noqa: E731
    q = _split_heads(f(query), hq)
    k = _split_heads(f(key), hkv)
    v = _split_heads(f(value), hkv)
    bsz, t, _, dk = q.shape
    if k.shape[:2] != (bsz, t) or k.shape[3] != dk or v.shape[:2] != (bsz, t):
        raise ValueError("LinearAttention: query, key and value disagree in (B, T) or d_k")
    dv = v.shape[3]
    gated = update_rule in ("gated", "gated_delta")
    delta = update_rule in ("delta", "gated_delta")
    if gated and decay is None:
        raise ValueError(f"LinearAttention: decay is required for {update_rule!r}")
    if delta and beta is None:
        raise ValueError(f"LinearAttention: beta is required for {update_rule!r}")
    g = None
    if gated:
        dd = f(decay)
        if dd.ndim != 3 or dd.shape[:2] != (bsz, t) or dd.shape[2] not in (hkv * dk, hkv):
            raise ValueError("LinearAttention: decay must be (B, T, H_kv*d_k) or (B, T, H_kv)")
        g = dd.reshape((bsz, t, hkv, dk if dd.shape[2] == hkv * dk else 1))  # per key dim or per head
    bt = None
    if delta:
        bb = f(beta)
        if bb.ndim != 3 or bb.shape[:2] != (bsz, t) or bb.shape[2] not in (hkv, 1):
            raise ValueError("LinearAttention: beta must be (B, T, H_kv) or (B, T, 1)")
        bt = np.broadcast_to(bb, (bsz, t, hkv))
    st = np.zeros((bsz, hkv, dk, dv), dtype=dtype) if past_state is None else f(past_state).copy()
    if st.shape != (bsz, hkv, dk, dv):
        raise ValueError(f"LinearAttention: past_state must be {(bsz, hkv, dk, dv)}, not {st.shape}")
    sc = float(np.float32(scale)) if scale else 1.0 / math.sqrt(dk)
    sc = dtype(sc)
    grp = hq // hkv
    out = np.zeros((bsz, t, hq, dv), dtype=dtype)
    with np.errstate(all="ignore"):
        for i in range(t):
            kt, vt = k[:, i], v[:, i]  # [B, Hkv, dk], [B, Hkv, dv]
            if gated:
                st = libm.exp(g[:, i])[..., None] * st  # exp(g) scales the state's d_k rows
            if delta:
                pred = np.einsum("bhkv,bhk->bhv", st, kt)
                upd = bt[:, i][..., None] * (vt - pred)
            else:
                upd = vt
            st = st + kt[..., :, None] * upd[..., None, :]
            qt = q[:, i].reshape((bsz, hkv, grp, dk))
            o = sc * np.einsum("bhgk,bhkv->bhgv", qt, st)
            out[:, i] = o.reshape((bsz, hq, dv))
    return out.reshape((bsz, t, hq * dv)), st


def linear_attention_bound(query, key, value, past_state=None, decay=None, beta=None, *, q_num_heads,
                           kv_num_heads, update_rule="gated_delta", scale=0.0, chunk_size=64,
                           state_type: str = "float"):
    """A running bound of the error of a legitimate LinearAttention kernel: the recurrence in
    float32 (``u = 2^-24``; the narrowest precision any of the operator's types computes in),
    any order of each dot product, exp within the budget table's float32 3 ulp, the running
    state optionally rounded to ``state_type`` at every step (16-bit S), the scale
    ``1/sqrt(d_k)`` within sqrt's and division's budgets.  Per step, with ``S`` the exact
    state and ``E`` its bound::

        gated:  E <- e^g E + e^g |S| 7u
        delta:  p = S^T k,  e_p = |k|^T E + gamma_dk |k|^T |S|,
                e_upd = |beta| (e_p + u (|v| + |p|)) + u |beta (v - p)|
        write:  E <- E + |k| e_upd + u |k| |upd| + u |S_new| (+ u_S |S_new|)
        read:   e_o = |scale| (|q|^T E + gamma_dk |q|^T |S|) + 12 u |o|

    Returns:
        ``(bound of output [B, T, Hq*dv], bound of present_state [B, Hkv, dk, dv])``, float64,
        before the rounding of the outputs to their types.

    Raises:
        ValueError: as :func:`linear_attention`."""
    out, _ = linear_attention(query, key, value, past_state, decay, beta, q_num_heads=q_num_heads,
                              kv_num_heads=kv_num_heads, update_rule=update_rule, scale=scale)
    u = 2.0 ** -24
    us = unit(state_type)[0] if state_type in ("float16", "bfloat16") else 0.0
    hq, hkv = int(q_num_heads), int(kv_num_heads)
    f = lambda v: None if v is None else np.asarray(v, dtype=np.float64)  # noqa: E731
    q = _split_heads(f(query), hq)
    k = _split_heads(f(key), hkv)
    v = _split_heads(f(value), hkv)
    bsz, t, _, dk = q.shape
    dv = v.shape[3]
    gated = update_rule in ("gated", "gated_delta")
    delta = update_rule in ("delta", "gated_delta")
    g = None
    if gated:
        dd = f(decay)
        g = dd.reshape((bsz, t, hkv, dk if dd.shape[2] == hkv * dk else 1))
    bt = np.broadcast_to(f(beta), (bsz, t, hkv)) if delta else None
    st = np.zeros((bsz, hkv, dk, dv)) if past_state is None else f(past_state).copy()
    err = np.zeros_like(st)
    sc = abs(float(np.float32(scale))) if scale else 1.0 / math.sqrt(dk)
    gk = gamma(dk, u)
    grp = hq // hkv
    eo = np.zeros((bsz, t, hq, dv))
    with np.errstate(all="ignore"):
        for i in range(t):
            kt, vt = k[:, i], v[:, i]
            if gated:
                ex = libm.exp(g[:, i])[..., None]
                st = ex * st
                err = ex * err + np.abs(st) * 7 * u
            if delta:
                pred = np.einsum("bhkv,bhk->bhv", st, kt)
                e_p = np.einsum("bhkv,bhk->bhv", err, np.abs(kt)) + gk * np.einsum("bhkv,bhk->bhv", np.abs(st),
                                                                                   np.abs(kt))
                b_ = bt[:, i][..., None]
                upd = b_ * (vt - pred)
                e_upd = np.abs(b_) * (e_p + u * (np.abs(vt) + np.abs(pred))) + u * np.abs(upd)
            else:
                upd, e_upd = vt, np.zeros_like(vt)
            outer = kt[..., :, None] * upd[..., None, :]
            st = st + outer
            err = err + np.abs(kt)[..., :, None] * e_upd[..., None, :] + u * np.abs(outer) + (u + us) * np.abs(st)
            qt = np.abs(q[:, i].reshape((bsz, hkv, grp, dk)))
            o_abs = np.einsum("bhgk,bhkv->bhgv", qt, np.abs(st))
            e = sc * (np.einsum("bhgk,bhkv->bhgv", qt, err) + gk * o_abs)
            eo[:, i] = e.reshape((bsz, hq, dv))
    eo = eo.reshape((bsz, t, hq * dv)) + 12 * u * np.abs(out)
    return eo, err
