"""onnxruntime's com.microsoft attention-family contrib operators
(:mod:`conformance.ops.contrib_attention`): RotaryEmbedding, EmbedLayerNormalization,
MultiHeadAttention, GroupQueryAttention and Attention (com.microsoft, 1).

* the oracle against an explicit loop written here from ContribOperators.md's description, on
  constructed forms and on every generated value case at seed 0 (RotaryEmbedding 54,
  MultiHeadAttention 81, GroupQueryAttention 87, Attention 60, EmbedLayerNormalization 48: every
  present output, the stored value within half an ulp of T and the float64 oracle within 16
  float64 ulps of the loop's);
* legitimate numpy kernels through ``KernelBackend`` (float32 and float64 computation) pass
  every generated case; deliberately wrong kernels (interleaving confused, position_ids
  ignored, the two halves' signs swapped) fail cases the right kernels pass;
* the invalid models are rejected.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from conformance.backends.kernel import KernelBackend
from conformance.ops import contrib_attention as ca
from conformance.runner import run_cases

pytestmark = pytest.mark.filterwarnings("ignore::RuntimeWarning")
OPS = ["com.microsoft:RotaryEmbedding", "com.microsoft:EmbedLayerNormalization", "com.microsoft:MultiHeadAttention",
       "com.microsoft:GroupQueryAttention", "com.microsoft:Attention"]


def _assert_all_pass(cases, op, kernel):
    """Every case of ``cases`` passes with ``kernel`` as ``op``'s implementation."""
    results = run_cases(cases, KernelBackend({op: kernel}, name="legitimate"))
    bad = [(c.id, r.outcome, r.message[:200]) for c, r in zip(cases, results) if r.outcome != "pass"]
    assert not bad, bad[:5]


def _assert_caught(cases, op, kernel, flaw, least):
    """The wrong ``kernel`` (``flaw``) fails at least ``least`` of ``cases``."""
    results = run_cases(cases, KernelBackend({op: kernel}, name=flaw))
    fails = [c for c, r in zip(cases, results) if r.outcome == "fail"]
    assert len(fails) >= least, (flaw, len(fails))

def _loop_rope(x, pid, cos, sin, num_heads, interleaved, rdim=0):
    """An explicit per-element loop: x [B, S, N*H], pid [B, S], caches [P, r/2]."""
    b, s, w = x.shape
    h = w // num_heads
    r = rdim or h
    y = np.array(x, dtype=np.float64)
    for bi in range(b):
        for si in range(s):
            p = int(pid[bi, si])
            for n in range(num_heads):
                base = n * h
                for i in range(r // 2):
                    if interleaved:
                        j, k = base + 2 * i, base + 2 * i + 1
                    else:
                        j, k = base + i, base + i + r // 2
                    c, sn = float(cos[p, i]), float(sin[p, i])
                    a, bb = float(x[bi, si, j]), float(x[bi, si, k])
                    y[bi, si, j] = a * c - bb * sn
                    y[bi, si, k] = a * sn + bb * c
    return y


@pytest.mark.parametrize("interleaved,heads,d,rdim", [(0, 2, 8, 0), (1, 2, 8, 0), (0, 3, 4, 0), (1, 1, 6, 0),
                                                      (0, 2, 8, 4), (1, 2, 10, 6)])
def test_oracle_is_the_loop(interleaved, heads, d, rdim):
    rng = np.random.default_rng(7)
    b, s, p = 2, 3, 7
    r = rdim or d
    x = rng.standard_normal((b, s, heads * d))
    pid = rng.integers(0, p, size=(b, s))
    cos, sin = rng.uniform(-1, 1, (p, r // 2)), rng.uniform(-1, 1, (p, r // 2))
    got = ca.ref.ms_rotary_embedding(x, pid, cos, sin, interleaved=interleaved, num_heads=heads,
                                     rotary_embedding_dim=rdim)
    np.testing.assert_allclose(got, _loop_rope(x, pid, cos, sin, heads, interleaved, rdim), rtol=1e-14, atol=1e-14)
    assert not math.isclose(float(np.abs(got - x).max()), 0.0)  # something rotated


def rope_kernel(compute=np.float32, flaw=None):
    """A numpy com.microsoft RotaryEmbedding computing in ``compute``; ``flaw``: 'interleave'
    (the other pairing), 'no-position-ids' (rows 0..S-1), 'sign' (real/imag signs swapped)."""

    def kernel(inputs, attrs, outputs, opset):
        x, pid = inputs["input"], inputs["position_ids"]
        cos, sin = inputs["cos_cache"].astype(compute), inputs["sin_cache"].astype(compute)
        dt = x.dtype
        heads = int(attrs.get("num_heads", 0))
        inter = int(attrs.get("interleaved", 0))
        b, s, w = x.shape
        h = w // heads
        r = int(attrs.get("rotary_embedding_dim", 0)) or h
        if r // 2 != cos.shape[-1] or w % heads:
            raise ValueError("bad shapes")
        if flaw == "interleave":
            inter = 1 - inter
        if flaw == "no-position-ids":
            pid = np.broadcast_to(np.arange(s), (b, s))
        x4 = x.astype(compute).reshape(b, s, heads, h)
        c, sn = cos[pid][:, :, None, :], sin[pid][:, :, None, :]
        xr = x4[..., :r]
        x1, x2 = (xr[..., 0::2], xr[..., 1::2]) if inter else (xr[..., : r // 2], xr[..., r // 2:])
        if flaw == "sign":
            real, imag = c * x1 + sn * x2, -sn * x1 + c * x2
        else:
            real, imag = c * x1 - sn * x2, sn * x1 + c * x2
        out = x4.copy()
        if inter:
            out[..., 0:r:2], out[..., 1:r:2] = real, imag
        else:
            out[..., : r // 2], out[..., r // 2: r] = real, imag
        return {outputs[0]: out.reshape(b, s, w).astype(dt)}

    return kernel


def _run(cases, kernel, name):
    return run_cases(cases, KernelBackend({"RotaryEmbedding": kernel}, name=name))


@pytest.mark.parametrize("compute", [np.float32, np.float64])
def test_legitimate_kernels_pass_everything(compute, value_cases):
    cases = [c for c in value_cases if c.op == "RotaryEmbedding"]
    assert len(cases) >= 30
    results = _run(cases, rope_kernel(compute), f"legit-{compute.__name__}")
    bad = [(c.id, r.outcome, r.message[:200]) for c, r in zip(cases, results) if r.outcome != "pass"]
    # bfloat16 models: onnx's checker accepts them, the kernel runs them in float32 too
    assert not bad, bad[:5]


@pytest.mark.parametrize("flaw,least", [("interleave", 20), ("no-position-ids", 20), ("sign", 30)])
def test_wrong_kernels_are_caught(flaw, least, value_cases):
    cases = [c for c in value_cases if c.op == "RotaryEmbedding"]
    results = _run(cases, rope_kernel(np.float32, flaw), flaw)
    fails = [c for c, r in zip(cases, results) if r.outcome == "fail"]
    assert len(fails) >= least, (flaw, len(fails))


def test_error_cases_are_rejected(suite):
    cases = [c for c in suite if c.expect_error and c.op == "RotaryEmbedding"]
    assert {c.tags["error"] for c in cases} == {"hidden-not-multiple", "cache-dim"}
    results = _run(cases, rope_kernel(), "legit")
    assert all(r.outcome == "pass" for r in results), [(c.id, r.message[:100]) for c, r in zip(cases, results)]


# ============================================================================ EmbedLayerNormalization
def _loop_eln(ids, sids, we, pe, se, g, b, mask, pids, eps):
    """Explicit loops from ContribOperators.md: per token the three rows added, then the
    layer normalization of the row; mask_index = the first 0 of the mask (or its length)."""
    bsz, s = ids.shape
    h = we.shape[1]
    y = np.zeros((bsz, s, h))
    esum = np.zeros((bsz, s, h))
    for bi in range(bsz):
        for si in range(s):
            p = si if pids is None else int(pids[0 if pids.shape[0] == 1 else bi, si])
            row = [float(we[int(ids[bi, si]), k]) + float(pe[p, k]) for k in range(h)]
            if se is not None:
                row = [row[k] + float(se[int(sids[bi, si]), k]) for k in range(h)]
            mean = math.fsum(row) / h
            var = math.fsum((r - mean) ** 2 for r in row) / h
            for k in range(h):
                esum[bi, si, k] = row[k]
                y[bi, si, k] = (row[k] - mean) / math.sqrt(var + eps) * float(g[k]) + float(b[k])
    mi = None
    if mask is not None:
        mi = []
        for bi in range(bsz):
            n = s
            for si in range(s):
                if mask[bi, si] == 0:
                    n = si
                    break
            mi.append(n)
    return y, mi, esum


@pytest.mark.parametrize("seg,mask,pids", [(False, False, None), (True, True, None), (True, False, "full"),
                                          (False, True, "broadcast")])
def test_eln_oracle_is_the_loop(seg, mask, pids):
    rng = np.random.default_rng(3)
    b, s, h, v, p, g = 2, 4, 6, 7, 6, 3
    ids = rng.integers(0, v, (b, s))
    sids = rng.integers(0, g, (b, s)) if seg else None
    we, pe = rng.standard_normal((v, h)), rng.standard_normal((p, h))
    se = rng.standard_normal((g, h)) if seg else None
    gm, bt = rng.standard_normal(h), rng.standard_normal(h)
    mk = np.array([[1, 1, 0, 0], [1, 1, 1, 1]]) if mask else None
    pid = None if pids is None else rng.integers(0, p, (b if pids == "full" else 1, s))
    y, mi, e = ca.ref.embed_layer_normalization(ids, sids, we, pe, se, gm, bt, mk, pid, epsilon=1e-5)
    ly, lmi, le = _loop_eln(ids, sids, we, pe, se, gm, bt, mk, pid, float(np.float32(1e-5)))
    np.testing.assert_allclose(y, ly, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(e, le, rtol=1e-15, atol=1e-15)
    assert (mi is None) == (lmi is None)
    if mask:
        assert list(mi) == lmi == [2, 4]


def eln_kernel(compute=np.float32, one_pass=False, flaw=None):
    """A numpy EmbedLayerNormalization computing in ``compute``: the sum rounded to T, the
    statistics two-pass (``one_pass``: ``E[x^2] - E[x]^2``, summed in reverse); ``flaw``:
    'no-segment' (segment embeddings ignored), 'no-position-ids' (positions 0..S-1 always),
    'mask-length' (mask_index = the sequence length), 'no-epsilon'."""

    def kernel(inputs, attrs, outputs, opset):
        ids, we, pe = inputs["input_ids"], inputs["word_embedding"], inputs["position_embedding"]
        g, bt = inputs["gamma"].astype(compute), inputs["beta"].astype(compute)
        dt = we.dtype
        bsz, s = ids.shape
        h = we.shape[1]
        if ids.ndim != 2 or pe.shape[1] != h or g.shape != (h,) or bt.shape != (h,):
            raise ValueError("bad shapes")
        pids = inputs.get("position_ids")
        pos = np.broadcast_to(np.arange(s), (bsz, s)) if pids is None or flaw == "no-position-ids" else \
            np.broadcast_to(pids, (bsz, s))
        e = (we[ids].astype(compute) + pe[pos].astype(compute)).astype(dt)
        se = inputs.get("segment_embedding")
        if se is not None and flaw != "no-segment":
            e = (e.astype(compute) + se[inputs["segment_ids"]].astype(compute)).astype(dt)
        x = e.astype(compute)
        eps = compute(0.0 if flaw == "no-epsilon" else attrs.get("epsilon", 1e-12))
        if one_pass:
            m = x[..., ::-1].sum(-1, keepdims=True) / compute(h)
            var = (x * x)[..., ::-1].sum(-1, keepdims=True) / compute(h) - m * m
            var = np.maximum(var, compute(0))
        else:
            m = x.mean(-1, keepdims=True)
            var = ((x - m) ** 2).mean(-1, keepdims=True)
        with np.errstate(all="ignore"):
            y = ((x - m) / np.sqrt(var + eps) * g + bt).astype(dt)
        res = {"output": y}
        if "mask_index" in outputs:
            mk = inputs["mask"]
            first0 = np.where((mk == 0).any(1), (mk == 0).argmax(1), s)
            res["mask_index"] = (np.full(bsz, s) if flaw == "mask-length" else first0).astype(np.int32)
        if "embedding_sum" in outputs:
            res["embedding_sum"] = e
        return {k: res[k] for k in outputs}

    return kernel


def _eln_cases(value_cases):
    return [c for c in value_cases if c.op == "EmbedLayerNormalization"]


@pytest.mark.parametrize("compute,one_pass", [(np.float32, False), (np.float32, True), (np.float64, False)])
def test_eln_legitimate_kernels_pass_everything(compute, one_pass, value_cases):
    cases = _eln_cases(value_cases)
    assert len(cases) >= 40
    _assert_all_pass(cases, "EmbedLayerNormalization", eln_kernel(compute, one_pass))


@pytest.mark.parametrize("flaw,least", [("no-segment", 15), ("no-position-ids", 8), ("mask-length", 12),
                                        ("no-epsilon", 10)])
def test_eln_wrong_kernels_are_caught(flaw, least, value_cases):
    cases = _eln_cases(value_cases)
    _assert_caught(cases, "EmbedLayerNormalization", eln_kernel(np.float32, flaw=flaw), flaw, least)


def test_eln_error_cases_are_rejected(suite):
    cases = [c for c in suite if c.expect_error and c.op == "EmbedLayerNormalization"]
    assert {c.tags["error"] for c in cases} == {"gamma-shape", "beta-shape", "position-hidden", "ids-rank"}
    _assert_all_pass(cases, "EmbedLayerNormalization", eln_kernel())


# ============================================================================ attention helpers (tests)
def _softmax_v(s, v, compute, online):
    """softmax(s) @ v over the last axis of s in ``compute``: plain (max subtracted) or online
    (blocks of 3 keys, running max and sum rescaled: flash attention's order)."""
    s = s.astype(compute)
    v = v.astype(compute)
    if not online:
        m = s.max(-1, keepdims=True)
        m = np.where(np.isfinite(m), m, 0)
        e = np.exp(s - m)
        return (e / e.sum(-1, keepdims=True)) @ v
    lk = s.shape[-1]
    m = np.full(s.shape[:-1] + (1,), -np.inf, dtype=compute)
    den = np.zeros(s.shape[:-1] + (1,), dtype=compute)
    acc = np.zeros(s.shape[:-1] + (v.shape[-1],), dtype=compute)
    for j0 in range(0, lk, 3):
        blk = s[..., j0:j0 + 3]
        m_new = np.maximum(m, blk.max(-1, keepdims=True))
        safe = np.where(np.isfinite(m_new), m_new, 0).astype(compute)
        corr = np.where(np.isfinite(m), np.exp(m - safe), 0).astype(compute)
        e = np.exp(blk - safe)
        den = den * corr + e.sum(-1, keepdims=True)
        acc = acc * corr + e @ v[..., j0:j0 + 3, :]
        m = m_new
    return acc / den


def _loop_attention(q, k, v, scale, add, causal_offset=None):
    """Explicit per-query loops: q [Hq, Lq, D], k/v [Hkv, Lk, *]; query head h reads kv head
    h // (Hq / Hkv); ``add`` [Hq, Lq, Lk] additive (-inf disallowed) ; ``causal_offset``: key j
    allowed iff j <= i + offset."""
    hq, lq, _ = q.shape
    hkv, lk, dv = v.shape
    y = np.zeros((hq, lq, dv))
    for h in range(hq):
        g = h // (hq // hkv)
        for i in range(lq):
            sc = []
            for j in range(lk):
                if causal_offset is not None and j > i + causal_offset:
                    sc.append(-math.inf)
                    continue
                sc.append(scale * math.fsum(float(q[h, i, d]) * float(k[g, j, d]) for d in range(q.shape[2]))
                          + float(add[h, i, j]))
            mx = max(sc)
            w = [math.exp(x - mx) if x != -math.inf else 0.0 for x in sc]
            tot = math.fsum(w)
            for d in range(dv):
                y[h, i, d] = math.fsum(w[j] * float(v[g, j, d]) for j in range(lk)) / tot
    return y


# ============================================================================ MultiHeadAttention
@pytest.mark.parametrize("form", ["self-bias-uni", "cross-kpm2d", "past-kpm-total-uni", "kpm1d-ab", "kpm3d", "bnsh",
                                  "packed-qkv", "packed-kv"])
def test_mha_oracle_is_the_loop(form):
    rng = np.random.default_rng(11)
    b, s, n, h = 2, 3, 2, 4
    d = n * h
    lk = s if form in ("self-bias-uni", "past-kpm-total-uni", "packed-qkv") else 5
    q, k, v = rng.standard_normal((b, s, d)), rng.standard_normal((b, lk, d)), rng.standard_normal((b, lk, d))
    kw = dict(num_heads=n)
    bias = kpm = ab = pk = pv = None
    p = 0
    if form == "self-bias-uni":
        bias = rng.standard_normal(3 * d)
        kw["unidirectional"] = 1
    if form == "past-kpm-total-uni":
        p = 2
        pk, pv = rng.standard_normal((b, n, p, h)), rng.standard_normal((b, n, p, h))
        kpm = np.array([[1, 0, 1, 1, 0], [1, 1, 1, 0, 1]])
        kw["unidirectional"] = 1
    if form == "cross-kpm2d":
        kpm = np.array([[1, 1, 0, 1, 0], [1, 1, 1, 1, 1]])
    if form == "kpm1d-ab":
        kpm = np.array([2, 5])
        ab = rng.standard_normal((1, n, s, lk))
    if form == "kpm3d":
        kpm = (rng.random((b, s, lk)) < 0.6).astype(int)
        kpm[..., 0] = 1
    args = [q, k, v]
    if form == "bnsh":
        args = [q, k.reshape(b, lk, n, h).transpose(0, 2, 1, 3), v.reshape(b, lk, n, h).transpose(0, 2, 1, 3)]
    if form == "packed-qkv":
        args = [np.stack([x.reshape(b, s, n, h) for x in (q, k, v)], axis=3), None, None]
    if form == "packed-kv":
        args = [q, np.stack([x.reshape(b, lk, n, h) for x in (k, v)], axis=3), None]
    y, pres_k, pres_v, _, _ = ca.ref.multi_head_attention(*args, bias, kpm, ab, pk, pv, **kw)
    # the loop, from the text
    if bias is not None:
        q, k, v = q + bias[:d], k + bias[d:2 * d], v + bias[2 * d:]
    for bi in range(b):
        qh = q[bi].reshape(s, n, h).transpose(1, 0, 2)
        kh = k[bi].reshape(lk, n, h).transpose(1, 0, 2)
        vh = v[bi].reshape(lk, n, h).transpose(1, 0, 2)
        if pk is not None:
            kh, vh = np.concatenate([pk[bi], kh], 1), np.concatenate([pv[bi], vh], 1)
        t = kh.shape[1]
        add = np.zeros((n, s, t))
        for i in range(s):
            for j in range(t):
                if ab is not None:
                    add[:, i, j] += ab[0, :, i, j]
                if kpm is not None:
                    keep = (j < kpm[bi]) if kpm.ndim == 1 else (kpm[bi, j] if kpm.ndim == 2 else kpm[bi, i, j])
                    if not keep:
                        add[:, i, j] += -10000.0
        want = _loop_attention(qh, kh, vh, 1 / math.sqrt(h), add, (t - s) if kw.get("unidirectional") else None)
        np.testing.assert_allclose(y[bi].reshape(s, n, h).transpose(1, 0, 2), want, rtol=1e-12, atol=1e-12)
        np.testing.assert_allclose(pres_k[bi], kh, rtol=0, atol=1e-15)


def mha_kernel(compute=np.float32, online=False, round_scores=False, flaw=None):
    """A numpy com.microsoft MultiHeadAttention (3-D/4-D/packed forms, bias, key_padding_mask,
    attention_bias, past, unidirectional) computing in ``compute``; ``online``: blockwise
    softmax; ``round_scores``: the scores and the heads rounded to T (a kernel working in T).
    ``flaw``: 'past-appended' (past keys after the new ones), 'causal-top-left' (the causal mask
    aligned to the top-left corner, ignoring the past), 'mask-inverted' (key_padding_mask's 0s
    attended), 'no-bias' (the input projection bias ignored)."""

    def kernel(inputs, attrs, outputs, opset):
        q = inputs["query"]
        dt = q.dtype
        n = int(attrs["num_heads"])
        k, v, bias = inputs.get("key"), inputs.get("value"), inputs.get("bias")
        if flaw == "no-bias":
            bias = None
        f = (lambda x: x.astype(compute))  # noqa: E731
        if q.ndim == 5:
            qh, kh, vh = (f(q[:, :, :, i]).transpose(0, 2, 1, 3) for i in range(3))
        else:
            bq, sq, d = q.shape
            if d % n:
                raise ValueError("num_heads")
            if bias is not None:
                dv = v.shape[-1]
                if bias.shape != (2 * d + dv,) or k.shape[-1] != d:
                    raise ValueError("bias")
                q, k, v = (f(q) + f(bias[:d])).astype(dt), (f(k) + f(bias[d:2 * d])).astype(dt), \
                    (f(v) + f(bias[2 * d:])).astype(dt)
            qh = f(q).reshape(bq, sq, n, d // n).transpose(0, 2, 1, 3)
            if k.ndim == 5:
                kh, vh = (f(k[:, :, :, i]).transpose(0, 2, 1, 3) for i in range(2))
            elif k.ndim == 4:
                kh, vh = f(k), f(v)
            else:
                if k.shape[-1] != d:
                    raise ValueError("key hidden")
                kh = f(k).reshape(k.shape[0], k.shape[1], n, d // n).transpose(0, 2, 1, 3)
                vh = f(v).reshape(v.shape[0], v.shape[1], n, v.shape[2] // n).transpose(0, 2, 1, 3)
        pk = inputs.get("past_key")
        if pk is not None:
            pair = ([f(pk), kh], [f(inputs["past_value"]), vh])
            if flaw == "past-appended":
                pair = (pair[0][::-1], pair[1][::-1])
            kh, vh = np.concatenate(pair[0], 2), np.concatenate(pair[1], 2)
        b, _, s, h = qh.shape
        t = kh.shape[2]
        scale = attrs.get("scale", 1 / math.sqrt(h))
        sc = (qh @ kh.transpose(0, 1, 3, 2)) * compute(scale)
        if round_scores:
            sc = f(sc.astype(dt))
        ab = inputs.get("attention_bias")
        if ab is not None:
            sc = sc + f(ab)
        m = inputs.get("key_padding_mask")
        mfv = compute(attrs.get("mask_filter_value", -10000.0))
        if m is not None:
            if m.ndim == 1:
                keep = (np.arange(t)[None, :] < m[:, None])[:, None, None, :]
            elif m.ndim == 2:
                if m.shape[1] != t:
                    raise ValueError("mask shape")
                keep = (m != 0)[:, None, None, :]
            else:
                keep = (m != 0)[:, None]
            if flaw == "mask-inverted":
                keep = ~keep
            sc = sc + np.where(keep, compute(0), mfv)
        if attrs.get("unidirectional", 0):
            off = 0 if flaw == "causal-top-left" else t - s
            fut = np.arange(t)[None, :] > np.arange(s)[:, None] + off
            sc = np.where(fut, compute(-np.inf), sc)
        y = _softmax_v(sc, vh, compute, online)
        res = {"output": y.transpose(0, 2, 1, 3).reshape(b, s, -1).astype(dt),
               "present_key": kh.astype(dt), "present_value": vh.astype(dt)}
        return {o: res[o] for o in outputs}

    return kernel


def _mha_cases(value_cases):
    # bfloat16: onnx's checker accepts the models; the numpy kernels run them as well
    return [c for c in value_cases if c.op == "MultiHeadAttention"]


@pytest.mark.parametrize("compute,online,round_scores", [(np.float32, False, False), (np.float32, True, True),
                                                         (np.float64, True, False)])
def test_mha_legitimate_kernels_pass_everything(compute, online, round_scores, value_cases):
    cases = _mha_cases(value_cases)
    assert len(cases) >= 60
    kernel = mha_kernel(compute, online, round_scores)
    _assert_all_pass(cases, "MultiHeadAttention", kernel)


@pytest.mark.parametrize("flaw,least", [("past-appended", 8), ("causal-top-left", 6), ("mask-inverted", 10),
                                        ("no-bias", 10)])
def test_mha_wrong_kernels_are_caught(flaw, least, value_cases):
    cases = _mha_cases(value_cases)
    _assert_caught(cases, "MultiHeadAttention", mha_kernel(np.float32, flaw=flaw), flaw, least)


def test_mha_error_cases_are_rejected(suite):
    cases = [c for c in suite if c.expect_error and c.op == "MultiHeadAttention"]
    assert {c.tags["error"] for c in cases} == {"heads-not-dividing", "key-hidden", "bias-length", "mask-shape"}
    _assert_all_pass(cases, "MultiHeadAttention", mha_kernel())


# ============================================================================ GroupQueryAttention
def _gqa_case(rng, form):
    n, kv, h, b = 4, 2, 8, 2
    s, p = (3, 0) if form.startswith("prompt") else (1, 5)
    if form.startswith("rotary"):
        h = 16
    q = rng.standard_normal((b, s, n * h))
    k, v = rng.standard_normal((b, s, kv * h)), rng.standard_normal((b, s, kv * h))
    pk = pv = None
    if p:
        pk, pv = rng.standard_normal((b, kv, p, h)), rng.standard_normal((b, kv, p, h))
    sk = np.array([s - 1] * b) if not p else np.array([p, 2])
    kw = dict(num_heads=n, kv_num_heads=kv)
    extra = {}
    if form.startswith("rotary"):
        ang = np.arange(16)[:, None] * 10000.0 ** (-np.arange(h // 2) / (h // 2))
        extra["cos_cache"], extra["sin_cache"] = np.cos(ang), np.sin(ang)
        kw.update(do_rotary=1, rotary_interleaved=int("interleaved" in form))
    if form == "decode-bias":
        extra["attention_bias"] = rng.standard_normal((b, n, s, p + 1))
    if form == "decode-sink":
        extra["head_sink"] = rng.standard_normal(n)
        kw["smooth_softmax"] = 1
    if form == "prompt-softcap":
        kw["softcap"] = 1.5
    if form == "prompt-window":
        q, k, v = (rng.standard_normal((b, 5, x.shape[2])) for x in (q, k, v))
        s, sk = 5, np.array([4, 4])
        kw["local_window_size"] = 2
    return q, k, v, pk, pv, sk, int(sk.max()) + 1, extra, kw


@pytest.mark.parametrize("form", ["prompt", "decode-ragged", "decode-bias", "decode-sink", "prompt-softcap",
                                  "prompt-window", "rotary-decode", "rotary-interleaved-prompt"])
def test_gqa_oracle_is_the_loop(form):
    rng = np.random.default_rng(5)
    q, k, v, pk, pv, sk, total, extra, kw = _gqa_case(rng, form)
    y, pres_k, _, _, _ = ca.ref.group_query_attention(q, k, v, pk, pv, sk, total, extra.get("cos_cache"),
                                                      extra.get("sin_cache"), None, extra.get("attention_bias"),
                                                      extra.get("head_sink"), **kw)
    n, kv = kw["num_heads"], kw["kv_num_heads"]
    b, s, _ = q.shape
    h = q.shape[2] // n
    if kw.get("do_rotary"):
        pos = np.array([[int(sk[bi]) + 1 - s + i for i in range(s)] for bi in range(b)])
        q = _loop_rope(q, pos, extra["cos_cache"], extra["sin_cache"], n, kw["rotary_interleaved"])
        k = _loop_rope(k, pos, extra["cos_cache"], extra["sin_cache"], kv, kw["rotary_interleaved"])
    for bi in range(b):
        t = int(sk[bi]) + 1
        p = t - s
        qh = q[bi].reshape(s, n, h).transpose(1, 0, 2)
        kh = k[bi].reshape(s, kv, h).transpose(1, 0, 2)
        vh = v[bi].reshape(s, kv, h).transpose(1, 0, 2)
        if p:
            kh, vh = np.concatenate([pk[bi, :, :p], kh], 1), np.concatenate([pv[bi, :, :p], vh], 1)
        np.testing.assert_allclose(pres_k[bi, :, :t], kh, rtol=1e-14, atol=1e-14)
        add = np.zeros((n, s, t))
        sc = kw.get("softcap", 0.0)
        win = kw.get("local_window_size", -1)
        for hh in range(n):
            g = hh // (n // kv)
            for i in range(s):
                for j in range(t):
                    if j > p + i or (win > 0 and j < p + i - win):
                        add[hh, i, j] = -math.inf
                    elif "attention_bias" in extra:
                        add[hh, i, j] = extra["attention_bias"][bi, hh, i, j]
        if sc or "head_sink" in extra:  # softcap and the sink: an explicit loop of their own
            want = np.zeros((n, s, h))
            for hh in range(n):
                g = hh // (n // kv)
                for i in range(s):
                    z = []
                    for j in range(t):
                        x = math.fsum(float(qh[hh, i, d]) * float(kh[g, j, d]) for d in range(h)) / math.sqrt(h)
                        if sc:
                            x = sc * math.tanh(x / sc)
                        z.append(x + add[hh, i, j])
                    sink = float(extra["head_sink"][hh]) if "head_sink" in extra else None
                    mx = max(z + ([sink] if sink is not None else []))
                    w = [math.exp(x - mx) if x != -math.inf else 0.0 for x in z]
                    den = math.fsum(w) + (math.exp(sink - mx) if sink is not None else 0.0)
                    for d in range(h):
                        want[hh, i, d] = math.fsum(w[j] * float(vh[g, j, d]) for j in range(t)) / den
        else:
            want = _loop_attention(qh, kh, vh, 1 / math.sqrt(h), add)
        np.testing.assert_allclose(y[bi].reshape(s, n, h).transpose(1, 0, 2), want, rtol=1e-12, atol=1e-12)


def gqa_kernel(compute=np.float32, online=False, round_scores=False, flaw=None):
    """A numpy com.microsoft GroupQueryAttention (prompt and decode steps, ragged batches, packed
    QKV, rotary, softcap, attention_bias, head_sink, local window as W + 1 keys) in ``compute``.
    ``flaw``: 'kv-head' (query head h reads kv head h % Nkv), 'past-appended' (the cached keys after
    the new ones), 'causal-top-left' (query row i attends keys j <= i, ignoring the past),
    'rotary-interleave' (the other pairing)."""

    def rope(x, pos, cos, sin, inter):
        r = cos.shape[1] * 2
        c, sn = cos[pos][:, None, :, :], sin[pos][:, None, :, :]
        out = x.copy()
        xr = x[..., :r]
        x1, x2 = (xr[..., 0::2], xr[..., 1::2]) if inter else (xr[..., :r // 2], xr[..., r // 2:])
        re, im = c * x1 - sn * x2, sn * x1 + c * x2
        if inter:
            out[..., 0:r:2], out[..., 1:r:2] = re, im
        else:
            out[..., :r // 2], out[..., r // 2:r] = re, im
        return out

    def kernel(inputs, attrs, outputs, opset):
        q = inputs["query"]
        dt = q.dtype
        f = (lambda x: x.astype(compute))  # noqa: E731
        n, kv = int(attrs["num_heads"]), int(attrs["kv_num_heads"])
        if n % kv:
            raise ValueError("kv_num_heads")
        b, s, d = q.shape
        if inputs.get("key") is None:
            h = d // (n + 2 * kv)
            q, k, v = q[..., :n * h], q[..., n * h:(n + kv) * h], q[..., (n + kv) * h:]
        else:
            k, v = inputs["key"], inputs["value"]
            if d % n:
                raise ValueError("hidden")
            h = d // n
        qh = f(q).reshape(b, s, n, h).transpose(0, 2, 1, 3)
        kh = f(k).reshape(b, s, kv, h).transpose(0, 2, 1, 3)
        vh = f(v).reshape(b, s, kv, h).transpose(0, 2, 1, 3)
        sk = inputs["seqlens_k"].astype(np.int64)
        total = int(inputs["total_sequence_length"])
        pk, pv = inputs.get("past_key"), inputs.get("past_value")
        pbuf = 0 if pk is None else pk.shape[2]
        if pbuf and s > 1 and b > 1:
            raise ValueError("batch_size must be 1 when sequence_length > 1 and past context is given")
        causal = int(attrs.get("causal", 1))
        win = int(attrs.get("local_window_size", -1))
        if win > 0 and not causal:
            raise ValueError("local_window_size must be -1 when causal is 0")
        plen = max(pbuf, total)
        pres_k = np.zeros((b, kv, plen, h), dtype=compute)
        pres_v = np.zeros((b, kv, plen, h), dtype=compute)
        scale = compute(attrs.get("scale", 1 / math.sqrt(h)))
        cap = float(attrs.get("softcap", 0.0))
        ys = []
        for bi in range(b):
            t = int(sk[bi]) + 1
            p = t - s
            qb, kb, vb = qh[bi:bi + 1], kh[bi:bi + 1], vh[bi:bi + 1]
            if int(attrs.get("do_rotary", 0)):
                inter = int(attrs.get("rotary_interleaved", 0))
                if flaw == "rotary-interleave":
                    inter = 1 - inter
                pid = inputs.get("position_ids")
                pos = np.arange(p, p + s)[None] if pid is None else pid[bi:bi + 1]
                cos, sin = f(inputs["cos_cache"]), f(inputs["sin_cache"])
                qb, kb = rope(qb, pos, cos, sin, inter), rope(kb, pos, cos, sin, inter)
            if p > 0:
                pair = ([f(pk[bi:bi + 1, :, :p]), kb], [f(pv[bi:bi + 1, :, :p]), vb])
                if flaw == "past-appended":
                    pair = (pair[0][::-1], pair[1][::-1])
                kb, vb = np.concatenate(pair[0], 2), np.concatenate(pair[1], 2)
            pres_k[bi, :, :t], pres_v[bi, :, :t] = kb[0], vb[0]
            idx = np.arange(n) % kv if flaw == "kv-head" else np.arange(n) // (n // kv)
            kr, vr = kb[:, idx], vb[:, idx]
            sc = (qb @ kr.transpose(0, 1, 3, 2)) * scale
            if round_scores:
                sc = f(sc.astype(dt))
            if cap > 0:
                sc = compute(cap) * np.tanh(sc / compute(cap))
            ab = inputs.get("attention_bias")
            if ab is not None:
                sc = sc + f(ab[bi if ab.shape[0] > 1 else 0][None, :, :, :t])
            off = 0 if flaw == "causal-top-left" else p
            i, j = np.arange(s)[:, None], np.arange(t)[None, :]
            ok = np.ones((s, t), bool)
            if causal:
                ok &= j <= i + off
            if win > 0:
                ok &= j >= i + off - win
            sc = np.where(ok, sc, compute(-np.inf))
            sink = inputs.get("head_sink")
            if int(attrs.get("smooth_softmax", -1)) == 1:
                snk = np.zeros(n, compute) if sink is None else f(sink)
                m = np.maximum(sc.max(-1, keepdims=True), snk[None, :, None, None])
                e = np.exp(sc - m)
                y = (e / (e.sum(-1, keepdims=True) + np.exp(snk[None, :, None, None] - m))) @ vr
            else:
                y = _softmax_v(sc, vr, compute, online)
            ys.append(y)
        y = np.concatenate(ys).transpose(0, 2, 1, 3).reshape(b, s, n * h)
        res = {"output": y.astype(dt), "present_key": pres_k.astype(dt), "present_value": pres_v.astype(dt)}
        return {o: res[o] for o in outputs}

    return kernel


def _gqa_cases(value_cases):
    return [c for c in value_cases if c.op == "GroupQueryAttention"]


@pytest.mark.parametrize("compute,online,round_scores", [(np.float32, False, False), (np.float32, True, True),
                                                         (np.float64, True, False)])
def test_gqa_legitimate_kernels_pass_everything(compute, online, round_scores, value_cases):
    cases = _gqa_cases(value_cases)
    assert len(cases) >= 60
    results = run_cases(cases, KernelBackend({"GroupQueryAttention": gqa_kernel(compute, online, round_scores)},
                                             name="l"))
    bad = [(c.id, r.outcome, r.message[:200]) for c, r in zip(cases, results) if r.outcome != "pass"]
    assert not bad, bad[:5]


@pytest.mark.parametrize("flaw,least", [("kv-head", 50), ("past-appended", 15), ("causal-top-left", 25),
                                        ("rotary-interleave", 12)])
def test_gqa_wrong_kernels_are_caught(flaw, least, value_cases):
    cases = _gqa_cases(value_cases)
    _assert_caught(cases, "GroupQueryAttention", gqa_kernel(np.float32, flaw=flaw), flaw, least)


def test_gqa_local_window_is_contested():
    """local_window_size's two readings (W + 1 keys as Attention-25's left_window_size, the oracle;
    W keys as a Mistral window, onnxruntime's CPU kernel) differ, and the cases say so."""
    from conformance import registry

    cases = [c for c in registry.generate(["com.microsoft:GroupQueryAttention"], seed=0)
             if c.expect_error is None and c.tags.get("attr_local_window_size")]
    assert cases and all(c.contested for c in cases)
    rng = np.random.default_rng(2)
    q, k, v, pk, pv, sk, total, _, kw = _gqa_case(rng, "prompt-window")
    y = ca.ref.group_query_attention(q, k, v, None, None, sk, total, **kw)[0]
    narrower = ca.ref.group_query_attention(q, k, v, None, None, sk, total, **{**kw, "local_window_size": 1})[0]
    assert np.abs(y - narrower).max() > 0.01


def test_gqa_error_cases_are_rejected(suite):
    cases = [c for c in suite if c.expect_error and c.op == "GroupQueryAttention"]
    assert {c.tags["error"] for c in cases} == {"kv-heads-not-dividing", "hidden-not-multiple", "batch-chunk-with-past",
                                                 "window-without-causal"}
    _assert_all_pass(cases, "GroupQueryAttention", gqa_kernel())


# ============================================================================ Attention (com.microsoft)
@pytest.mark.parametrize("form", ["plain", "v-hidden", "lengths-uni", "left-padding", "mask3d-ab", "past-uni",
                                  "past-mask2d"])
def test_ms_attention_oracle_is_the_loop(form):
    rng = np.random.default_rng(9)
    b, s, i_, n, h = 2, 3, 5, 2, 4
    hv = 6 if form == "v-hidden" else h
    sizes = [n * h, n * h, n * hv]
    x = rng.standard_normal((b, s, i_))
    w = rng.standard_normal((i_, sum(sizes)))
    bias = rng.standard_normal(sum(sizes))
    kw = dict(num_heads=n, qkv_hidden_sizes=sizes if form == "v-hidden" else None)
    p = 2 if form.startswith("past") else 0
    t = s + p
    past = rng.standard_normal((2, b, n, p, h)) if p else None
    mi = ab = None
    if form in ("lengths-uni", "past-uni"):
        kw["unidirectional"] = 1
    if form == "lengths-uni":
        mi = np.array([2, 3])
    if form == "left-padding":
        mi = np.array([3, 3, 1, 0])
    if form == "mask3d-ab":
        mi = (rng.random((b, s, t)) < 0.6).astype(int)
        mi[..., 0] = 1
        ab = rng.standard_normal((1, n, s, t))
    if form == "past-mask2d":
        mi = np.array([[1, 0, 1, 1, 1], [1, 1, 1, 0, 1]])
    y, present, _, _, _ = ca.ref.ms_attention(x, w, bias, mi, past, ab, **kw)
    for bi in range(b):
        proj = [[math.fsum(float(x[bi, si, k]) * float(w[k, c]) for k in range(i_)) + float(bias[c])
                 for c in range(sum(sizes))] for si in range(s)]
        proj = np.array(proj)
        q, k, v = proj[:, :sizes[0]], proj[:, sizes[0]:2 * sizes[0]], proj[:, 2 * sizes[0]:]
        qh, kh, vh = (a.reshape(s, n, -1).transpose(1, 0, 2) for a in (q, k, v))
        if p:
            kh, vh = np.concatenate([past[0, bi], kh], 1), np.concatenate([past[1, bi], vh], 1)
            np.testing.assert_allclose(present[0, bi], kh, rtol=1e-12, atol=1e-12)
            np.testing.assert_allclose(present[1, bi], vh, rtol=1e-12, atol=1e-12)
        add = np.zeros((n, s, t))
        for si in range(s):
            for j in range(t):
                keep = True
                if mi is not None:
                    if mi.shape == (b,):
                        keep = j < mi[bi]
                    elif mi.shape == (2 * b,):
                        keep = mi[b + bi] <= j < mi[bi]
                    elif mi.ndim == 2:
                        keep = bool(mi[bi, j])
                    else:
                        keep = bool(mi[bi, si, j])
                add[:, si, j] = (0.0 if keep else -10000.0) + (ab[0, :, si, j] if ab is not None else 0.0)
        want = _loop_attention(qh, kh, vh, 1 / math.sqrt(h), add, (t - s) if kw.get("unidirectional") else None)
        np.testing.assert_allclose(y[bi].reshape(s, n, hv).transpose(1, 0, 2), want, rtol=1e-11, atol=1e-11)


def msa_kernel(compute=np.float32, online=False, round_scores=False, flaw=None):
    """A numpy com.microsoft Attention (projection, qkv_hidden_sizes, mask_index forms, past,
    attention_bias, unidirectional) in ``compute``; the projection rounded to T.  ``flaw``:
    'past-appended', 'causal-top-left', 'left-padding-as-lengths' (a [2B] mask_index read as
    lengths), 'no-bias'."""

    def kernel(inputs, attrs, outputs, opset):
        x, w = inputs["input"], inputs["weights"]
        dt = x.dtype
        f = (lambda a: a.astype(compute))  # noqa: E731
        n = int(attrs["num_heads"])
        width = w.shape[1]
        sizes = list(attrs.get("qkv_hidden_sizes", [])) or ([width // 3] * 3 if width % 3 == 0 else None)
        if sizes is None or sum(sizes) != width or any(z % n for z in sizes) or sizes[0] != sizes[1]:
            raise ValueError("hidden sizes")
        bias = inputs.get("bias")
        proj = f(x) @ f(w)
        if bias is not None and flaw != "no-bias":
            proj = proj + f(bias)
        proj = f(proj.astype(dt))
        b, s, _ = x.shape
        q, k, v = proj[..., :sizes[0]], proj[..., sizes[0]:2 * sizes[0]], proj[..., 2 * sizes[0]:]
        qh, kh, vh = (a.reshape(b, s, n, -1).transpose(0, 2, 1, 3) for a in (q, k, v))
        past = inputs.get("past")
        if past is not None:
            if sizes[2] != sizes[0]:
                raise ValueError("past with another v hidden size")
            pair = ([f(past[0]), kh], [f(past[1]), vh])
            if flaw == "past-appended":
                pair = (pair[0][::-1], pair[1][::-1])
            kh, vh = np.concatenate(pair[0], 2), np.concatenate(pair[1], 2)
        t = kh.shape[2]
        h = qh.shape[-1]
        sc = (qh @ kh.transpose(0, 1, 3, 2)) * compute(attrs.get("scale", 1 / math.sqrt(h)))
        if round_scores:
            sc = f(sc.astype(dt))
        ab = inputs.get("attention_bias")
        if ab is not None:
            sc = sc + f(ab)
        m = inputs.get("mask_index")
        if m is not None:
            j = np.arange(t)[None, :]
            if m.shape == (2 * b,) and flaw != "left-padding-as-lengths":
                keep = ((j < m[:b, None]) & (j >= m[b:, None]))[:, None, None, :]
            elif m.ndim == 1:
                keep = (j < m[:b, None])[:, None, None, :]
            elif m.ndim == 2:
                keep = (m != 0)[:, None, None, :]
            else:
                keep = (m != 0)[:, None]
            sc = sc + np.where(keep, compute(0), compute(attrs.get("mask_filter_value", -10000.0)))
        if attrs.get("unidirectional", 0):
            off = 0 if flaw == "causal-top-left" else t - s
            sc = np.where(np.arange(t)[None, :] > np.arange(s)[:, None] + off, compute(-np.inf), sc)
        y = _softmax_v(sc, vh, compute, online)
        res = {"output": y.transpose(0, 2, 1, 3).reshape(b, s, -1).astype(dt)}
        if "present" in outputs:
            res["present"] = np.stack([kh, vh]).astype(dt)
        return {o: res[o] for o in outputs}

    return kernel


def _msa_cases(value_cases):
    return [c for c in value_cases if c.op == "Attention" and c.domain == "com.microsoft"]


@pytest.mark.parametrize("compute,online,round_scores", [(np.float32, False, False), (np.float32, True, True),
                                                         (np.float64, True, False)])
def test_ms_attention_legitimate_kernels_pass_everything(compute, online, round_scores, value_cases):
    cases = _msa_cases(value_cases)
    assert len(cases) >= 50
    _assert_all_pass(cases, "Attention", msa_kernel(compute, online, round_scores))


@pytest.mark.parametrize("flaw,least", [("past-appended", 8), ("causal-top-left", 6), ("left-padding-as-lengths", 2),
                                        ("no-bias", 20)])
def test_ms_attention_wrong_kernels_are_caught(flaw, least, value_cases):
    cases = _msa_cases(value_cases)
    _assert_caught(cases, "Attention", msa_kernel(np.float32, flaw=flaw), flaw, least)


def test_ms_attention_error_cases_are_rejected(suite):
    cases = [c for c in suite if c.expect_error and c.op == "Attention" and c.domain == "com.microsoft"]
    assert {c.tags["error"] for c in cases} == {"heads-not-dividing", "weights-not-thirds", "sizes-sum",
                                                 "past-v-hidden"}
    _assert_all_pass(cases, "Attention", msa_kernel())


# ============================================================================ every generated value case
# The oracle against loops written here from ContribOperators.md, on EVERY value case the four
# operators generate at seed 0 (issue 24): plain Python loops over batch, head, query and key
# (a numpy dot over the head dimension, in float64), independent of conformance/reference.
# Expected outputs are stored rounded to T, so a loop value v (float64) agrees when
# |expected - v| <= ulp_T(v) / 2 + 2^-40 (1 + max |v|): one rounding to T of a float64 value
# within a few float64 ulps (relative to the output's scale) of the loop's; integer outputs exact.
# The float64 oracle itself (the entry's, float attributes as the float32 the model holds) on the
# case's inputs must be within 16 float64 ulps of max(1, max |loop|) on every output.
def _feeds(case):
    """Every present input by formal name, floats as float64 (initializers included)."""
    ds = case.datasets[0]
    out = {}
    for i in case.inputs:
        if not i.present:
            continue
        val = i.value if i.initializer else ds.inputs[i.name]
        a = np.asarray(val)
        out[i.name] = a.astype(np.float64) if a.dtype.kind not in "iub" else a.astype(np.int64)
    return out


def _ulp(x, dtype):
    """The spacing of ``dtype`` (float32/float16/bfloat16) at the magnitude of ``x``."""
    import ml_dtypes

    fi = ml_dtypes.finfo(dtype)
    e = np.floor(np.log2(np.maximum(np.abs(x), float(fi.smallest_normal))))
    return np.exp2(e - fi.nmant)


def _agree(case, name, want):
    exp = np.asarray(case.datasets[0].outputs[name])
    want = np.asarray(want)
    assert exp.shape == want.shape, (case.id, name, exp.shape, want.shape)
    if exp.dtype.kind in "iu":
        assert np.array_equal(exp.astype(np.int64), want.astype(np.int64)), (case.id, name)
        return
    w = want.astype(np.float64)
    tiny = 2.0**-40 * (1.0 + (float(np.abs(w).max()) if w.size else 0.0))
    err = np.abs(exp.astype(np.float64) - w)
    bound = 0.5 * _ulp(w, exp.dtype) + tiny
    assert (err <= bound).all(), (case.id, name, float((err - bound).max()), np.unravel_index(err.argmax(), err.shape))


def _f32(x):
    """A float attribute as the model holds it (AttributeProto.f is a float32)."""
    return float(np.float32(x))


def _dot(a, b):
    return float(np.dot(a, b))


def _softmax_rows(scores, vals, sink=None):
    """sum_j softmax(scores)_j vals[j] for one query row; -inf scores weigh 0; ``sink``: exp(sink)
    joins the denominator (smooth softmax / head_sink)."""
    mx = max(scores + ([sink] if sink is not None else []))
    w = [0.0 if x == -math.inf else math.exp(x - mx) for x in scores]
    den = math.fsum(w) + (math.exp(sink - mx) if sink is not None else 0.0)
    return np.array([math.fsum(w[j] * float(vals[j][d]) for j in range(len(w))) / den
                     for d in range(len(vals[0]))])


def _bcast(ab, bi, hh):
    """attention_bias [B|1, N|1, S, T] at batch bi, head hh."""
    return ab[bi if ab.shape[0] > 1 else 0, hh if ab.shape[1] > 1 else 0]


def _loop_mha_case(case, seen):
    """com.microsoft MultiHeadAttention from the text: Q/K/V from query/key/value (3-D BSD, 4-D
    BNSH key/value, packed BSN3H query or BLN2H key), the bias [Q|K|V] added to the 3-D forms,
    past_key/past_value before the new keys (present = that concatenation), scores
    scale Q K^T + attention_bias + mask_filter_value at key_padding_mask's 0s ((B) lengths,
    (B, T), (B, S, T)), unidirectional: key j > i + (T - S) excluded."""
    f, a = _feeds(case), case.attributes
    n = int(a["num_heads"])
    q, k, v, bias = f["query"], f.get("key"), f.get("value"), f.get("bias")
    if q.ndim == 5:
        seen.add("packed-qkv")
        b, s = q.shape[:2]
        h = q.shape[4]
        qh = [[[q[bi, i, hh, 0] for i in range(s)] for hh in range(n)] for bi in range(b)]
        kh = [[[q[bi, i, hh, 1] for i in range(s)] for hh in range(n)] for bi in range(b)]
        vh = [[[q[bi, i, hh, 2] for i in range(s)] for hh in range(n)] for bi in range(b)]
    else:
        b, s, dq = q.shape
        h = dq // n
        if bias is not None:
            seen.add("bias")
            dv_ = v.shape[-1]
            q = q + bias[:dq]
            k = k + bias[dq:2 * dq]
            v = v + bias[2 * dq:2 * dq + dv_]
        qh = [[[q[bi, i, hh * h:(hh + 1) * h] for i in range(s)] for hh in range(n)] for bi in range(b)]
        if k.ndim == 5:
            seen.add("packed-kv")
            lk = k.shape[1]
            kh = [[[k[bi, j, hh, 0] for j in range(lk)] for hh in range(n)] for bi in range(b)]
            vh = [[[k[bi, j, hh, 1] for j in range(lk)] for hh in range(n)] for bi in range(b)]
        elif k.ndim == 4:
            seen.add("kv-bnsh")
            kh = [[[k[bi, hh, j] for j in range(k.shape[2])] for hh in range(n)] for bi in range(b)]
            vh = [[[v[bi, hh, j] for j in range(v.shape[2])] for hh in range(n)] for bi in range(b)]
        else:
            lk, hv = k.shape[1], v.shape[2] // n
            kh = [[[k[bi, j, hh * h:(hh + 1) * h] for j in range(lk)] for hh in range(n)] for bi in range(b)]
            vh = [[[v[bi, j, hh * hv:(hh + 1) * hv] for j in range(lk)] for hh in range(n)] for bi in range(b)]
    pk, pv = f.get("past_key"), f.get("past_value")
    if pk is not None:
        seen.add("past")
        kh = [[[pk[bi, hh, j] for j in range(pk.shape[2])] + kh[bi][hh] for hh in range(n)] for bi in range(b)]
        vh = [[[pv[bi, hh, j] for j in range(pv.shape[2])] + vh[bi][hh] for hh in range(n)] for bi in range(b)]
    t = len(kh[0][0])
    scale = _f32(a["scale"]) if a.get("scale") is not None else 1.0 / math.sqrt(h)
    mfv = _f32(a.get("mask_filter_value", -10000.0))
    kpm, ab = f.get("key_padding_mask"), f.get("attention_bias")
    uni = int(a.get("unidirectional", 0))
    if kpm is not None:
        seen.add(f"key_padding_mask-{kpm.ndim}d")
    if ab is not None:
        seen.add("attention_bias")
    if uni:
        seen.add("unidirectional")
    hv = len(vh[0][0][0])
    y = np.zeros((b, s, n * hv))
    for bi in range(b):
        for hh in range(n):
            for i in range(s):
                sc = []
                for j in range(t):
                    if uni and j > i + (t - s):
                        sc.append(-math.inf)
                        continue
                    x = scale * _dot(qh[bi][hh][i], kh[bi][hh][j])
                    if ab is not None:
                        x += float(_bcast(ab, bi, hh)[i, j])
                    if kpm is not None:
                        keep = (j < kpm[bi]) if kpm.ndim == 1 else bool(kpm[bi, j] if kpm.ndim == 2 else kpm[bi, i, j])
                        if not keep:
                            x += mfv
                    sc.append(x)
                y[bi, i, hh * hv:(hh + 1) * hv] = _softmax_rows(sc, vh[bi][hh])
    res = {"output": y}
    res["present_key"] = np.array([[np.stack(kh[bi][hh]) for hh in range(n)] for bi in range(b)])
    res["present_value"] = np.array([[np.stack(vh[bi][hh]) for hh in range(n)] for bi in range(b)])
    return res


def _loop_ms_attention_case(case, seen):
    """com.microsoft Attention from the text: the projection input @ weights + bias split by
    qkv_hidden_sizes (thirds by default) into Q, K, V heads; past [2, B, N, P, H] before the new
    keys (present = [K; V] over all keys); scores scale Q K^T + attention_bias, plus
    mask_filter_value where mask_index excludes a key ((B) right-padding lengths, (2B) ends then
    inclusive starts, (B, T) 0/1, (B, S, T) 0/1); unidirectional: key j > i + P excluded."""
    f, a = _feeds(case), case.attributes
    n = int(a["num_heads"])
    x, w, bias = f["input"], f["weights"], f.get("bias")
    b, s, _ = x.shape
    sizes = list(a.get("qkv_hidden_sizes") or [w.shape[1] // 3] * 3)
    if a.get("qkv_hidden_sizes"):
        seen.add("qkv_hidden_sizes")
    if bias is not None:
        seen.add("bias")
    proj = np.zeros((b, s, w.shape[1]))
    for bi in range(b):
        for si in range(s):
            for c in range(w.shape[1]):
                proj[bi, si, c] = math.fsum(x[bi, si, :] * w[:, c]) + (float(bias[c]) if bias is not None else 0.0)
    h, hv = sizes[0] // n, sizes[2] // n
    off = (0, sizes[0], sizes[0] + sizes[1])
    past = f.get("past")
    p = 0 if past is None else past.shape[3]
    if past is not None:
        seen.add("past" if p else "past-empty")
    kh = [[([past[0, bi, hh, j] for j in range(p)] if p else [])
           + [proj[bi, j, off[1] + hh * h:off[1] + (hh + 1) * h] for j in range(s)] for hh in range(n)]
          for bi in range(b)]
    vh = [[([past[1, bi, hh, j] for j in range(p)] if p else [])
           + [proj[bi, j, off[2] + hh * hv:off[2] + (hh + 1) * hv] for j in range(s)] for hh in range(n)]
          for bi in range(b)]
    t = p + s
    scale = _f32(a["scale"]) if a.get("scale") is not None else 1.0 / math.sqrt(h)
    mfv = _f32(a.get("mask_filter_value", -10000.0))
    mi, ab = f.get("mask_index"), f.get("attention_bias")
    uni = int(a.get("unidirectional", 0))
    if mi is not None:
        seen.add("mask_index-" + ("lengths" if mi.shape == (b,) else "left-padding" if mi.shape == (2 * b,)
                                  else f"{mi.ndim}d"))
    if ab is not None:
        seen.add("attention_bias")
    if uni:
        seen.add("unidirectional")
    y = np.zeros((b, s, n * hv))
    for bi in range(b):
        for hh in range(n):
            for i in range(s):
                qrow = proj[bi, i, hh * h:(hh + 1) * h]
                sc = []
                for j in range(t):
                    if uni and j > i + p:
                        sc.append(-math.inf)
                        continue
                    z = scale * _dot(qrow, kh[bi][hh][j])
                    if ab is not None:
                        z += float(_bcast(ab, bi, hh)[i, j])
                    if mi is not None:
                        if mi.shape == (b,):
                            keep = j < mi[bi]
                        elif mi.shape == (2 * b,):
                            keep = mi[b + bi] <= j < mi[bi]
                        elif mi.ndim == 2:
                            keep = bool(mi[bi, j])
                        else:
                            keep = bool(mi[bi, i, j])
                        if not keep:
                            z += mfv
                    sc.append(z)
                y[bi, i, hh * hv:(hh + 1) * hv] = _softmax_rows(sc, vh[bi][hh])
    res = {"output": y}
    if past is not None or "present" in [o.name for o in case.outputs if o.present]:
        res["present"] = np.array([[[np.stack(kh[bi][hh]) for hh in range(n)] for bi in range(b)],
                                   [[np.stack(vh[bi][hh]) for hh in range(n)] for bi in range(b)]])
    return res


def _rotate(row, pos, cos, sin, interleaved):
    """One head's row rotated at position ``pos`` (rotary dimension 2 * cos.shape[1], the tail
    passes through): pairs (2i, 2i+1) interleaved, else (i, i + r/2)."""
    out = np.array(row, dtype=np.float64)
    half = cos.shape[1]
    for i in range(half):
        j, k = (2 * i, 2 * i + 1) if interleaved else (i, i + half)
        c, sn = float(cos[pos, i]), float(sin[pos, i])
        out[j] = float(row[j]) * c - float(row[k]) * sn
        out[k] = float(row[j]) * sn + float(row[k]) * c
    return out


def _loop_gqa_case(case, seen):
    """com.microsoft GroupQueryAttention from the text: query [B, S, N H] with key/value
    [B, S, Nkv H] or packed [B, S, (N + 2 Nkv) H]; batch entry b holds T_b = seqlens_k[b] + 1
    tokens, its new tokens at positions P_b = T_b - S .. T_b - 1 (past_key/past_value's first P_b
    rows before them); do_rotary: Q and K rotated at those positions (or position_ids),
    interleaved or not, over 2 * cos_cache.shape[1] dims; query head h reads kv head
    h // (N / Nkv); scores scale Q K^T, softcap c tanh(s / c), + attention_bias; causal: key
    j <= P_b + i; local_window_size W: also j >= P_b + i - W (W + 1 keys: the contested reading
    the oracle follows, Attention-25's left_window_size, not onnxruntime CPU's W keys);
    smooth_softmax: exp(head_sink[h]) (0 without head_sink) joins the denominator.  present:
    [B, Nkv, max(P, total_sequence_length), H], rows T_b.. zero."""
    f, a = _feeds(case), case.attributes
    n, kv = int(a["num_heads"]), int(a["kv_num_heads"])
    q = f["query"]
    b, s, _ = q.shape
    if "key" in f:
        h = q.shape[2] // n
        k, v = f["key"], f["value"]
    else:
        seen.add("packed")
        h = q.shape[2] // (n + 2 * kv)
        q, k, v = q[..., :n * h], q[..., n * h:(n + kv) * h], q[..., (n + kv) * h:]
    sk, total = f["seqlens_k"], int(f["total_sequence_length"])
    pk, pv = f.get("past_key"), f.get("past_value")
    pbuf = 0 if pk is None else pk.shape[2]
    rot = int(a.get("do_rotary", 0))
    inter = int(a.get("rotary_interleaved", 0))
    pid = f.get("position_ids")
    scale = _f32(a["scale"]) if a.get("scale") is not None else 1.0 / math.sqrt(h)
    cap = _f32(a.get("softcap", 0.0))
    causal = int(a.get("causal", 1))
    win = int(a.get("local_window_size", -1))
    smooth = int(a.get("smooth_softmax", -1)) == 1
    ab, sink = f.get("attention_bias"), f.get("head_sink")
    for cond, tag in ((pk is not None, "past"), (rot, "rotary"), (rot and inter, "rotary-interleaved"),
                      (rot and 2 * f.get("cos_cache", np.zeros((1, 0))).shape[1] < h, "rotary-partial"),
                      (pid is not None, "position_ids"), (cap > 0, "softcap"), (not causal, "causal=0"),
                      (win > 0, "local_window"), (smooth, "smooth_softmax"), (sink is not None, "head_sink"),
                      (ab is not None, "attention_bias"), (kv == 1, "mqa"), (pk is not None and len(set(sk)) > 1,
                                                                             "ragged")):
        if cond:
            seen.add(tag)
    plen = max(pbuf, total)
    pres_k, pres_v = np.zeros((b, kv, plen, h)), np.zeros((b, kv, plen, h))
    y = np.zeros((b, s, n * h))
    for bi in range(b):
        tb = int(sk[bi]) + 1
        p0 = tb - s
        pos = [int(pid[bi, i]) if pid is not None else p0 + i for i in range(s)]

        def head(x, i, hh):
            row = x[bi, i, hh * h:(hh + 1) * h]
            return _rotate(row, pos[i], f["cos_cache"], f["sin_cache"], inter) if rot else row

        keys = [[pk[bi, g, j] for j in range(p0)] + [head(k, i, g) for i in range(s)] for g in range(kv)]
        vals = [[pv[bi, g, j] for j in range(p0)] + [v[bi, i, g * h:(g + 1) * h] for i in range(s)]
                for g in range(kv)]
        for g in range(kv):
            for j in range(tb):
                pres_k[bi, g, j], pres_v[bi, g, j] = keys[g][j], vals[g][j]
        for hh in range(n):
            g = hh // (n // kv)
            for i in range(s):
                qrow = head(q, i, hh)
                sc = []
                for j in range(tb):
                    if (causal and j > p0 + i) or (win > 0 and j < p0 + i - win):
                        sc.append(-math.inf)
                        continue
                    z = scale * _dot(qrow, keys[g][j])
                    if cap > 0:
                        z = cap * math.tanh(z / cap)
                    if ab is not None:
                        z += float(_bcast(ab, bi, hh)[i, j])
                    sc.append(z)
                snk = (float(sink[hh]) if sink is not None else 0.0) if smooth else None
                y[bi, i, hh * h:(hh + 1) * h] = _softmax_rows(sc, vals[g], snk)
    return {"output": y, "present_key": pres_k, "present_value": pres_v}


def _loop_eln_case(case, seen):
    """EmbedLayerNormalization on a generated case through :func:`_loop_eln` (mask_index: the
    first 0 of the right-padded mask; embedding_sum: the word + position (+ segment) sum)."""
    f, a = _feeds(case), case.attributes
    for nm in ("segment_ids", "mask", "position_ids"):
        if nm in f:
            seen.add(nm)
    if "position_ids" in f and f["position_ids"].shape[0] == 1 < f["input_ids"].shape[0]:
        seen.add("position_ids-broadcast")
    y, mi, e = _loop_eln(f["input_ids"], f.get("segment_ids"), f["word_embedding"], f["position_embedding"],
                         f.get("segment_embedding"), f["gamma"], f["beta"], f.get("mask"), f.get("position_ids"),
                         float(np.float32(a.get("epsilon", 1e-12))))
    return {"output": y, "mask_index": None if mi is None else np.array(mi), "embedding_sum": e}


def _loop_rope_case(case, seen):
    """com.microsoft RotaryEmbedding on a generated case through :func:`_loop_rope`."""
    f, a = _feeds(case), case.attributes
    seen.add("interleaved" if a.get("interleaved") else "halves")
    if a.get("rotary_embedding_dim"):
        seen.add("partial")
    return {"output": _loop_rope(f["input"], f["position_ids"], f["cos_cache"], f["sin_cache"], int(a["num_heads"]),
                                 int(a.get("interleaved", 0)), int(a.get("rotary_embedding_dim", 0)))}


_EVERY = {
    "RotaryEmbedding": (_loop_rope_case, 54, {"interleaved", "halves", "partial"}),
    "MultiHeadAttention": (_loop_mha_case, 81, {"packed-qkv", "packed-kv", "kv-bnsh", "bias", "past", "unidirectional",
                                                "key_padding_mask-1d", "key_padding_mask-2d", "key_padding_mask-3d",
                                                "attention_bias"}),
    "GroupQueryAttention": (_loop_gqa_case, 87, {"packed", "past", "rotary", "rotary-interleaved", "rotary-partial",
                                                 "position_ids", "softcap", "causal=0", "local_window",
                                                 "smooth_softmax", "head_sink", "attention_bias", "mqa", "ragged"}),
    "Attention": (_loop_ms_attention_case, 60, {"qkv_hidden_sizes", "bias", "past", "past-empty", "unidirectional",
                                                "mask_index-lengths", "mask_index-left-padding", "mask_index-2d",
                                                "mask_index-3d", "attention_bias"}),
    "EmbedLayerNormalization": (_loop_eln_case, 48, {"segment_ids", "mask", "position_ids",
                                                     "position_ids-broadcast"}),
}


@pytest.mark.parametrize("op", sorted(_EVERY))
def test_oracle_is_the_loop_on_every_value_case(op, value_cases):
    """Every value case of ``op`` at seed 0 (no exception), every present output: the stored
    expected value is the loop's, rounded to T (bound in the section comment above)."""
    loop, count, forms = _EVERY[op]
    entry = next(e for e in ca.ENTRIES if e.op == op)
    cases = [c for c in value_cases if c.op == op and c.domain == "com.microsoft"]
    seen: set = set()
    checked = 0
    for c in cases:
        want = loop(c, seen)
        present = [o.name for o in c.outputs if o.present]
        assert present
        for name in present:
            _agree(c, name, want[name])
        # and the float64 oracle itself on the case's inputs, before the rounding to T: within
        # 16 float64 ulps of the output's scale (measured: at most 2.75 ulps, GQA long-past)
        f = _feeds(c)
        attrs = {k: _f32(v) if isinstance(v, float) else v for k, v in c.attributes.items()}
        if op == "EmbedLayerNormalization":
            attrs.setdefault("epsilon", 1e-12)  # the schema's default
        got = entry.oracle(None, *[f.get(i.name) for i in c.inputs], **attrs)
        got = got if isinstance(got, tuple) else (got,)
        for o, g in zip(c.outputs, got):
            if o.present:
                g, w = np.asarray(g, np.float64), np.asarray(want[o.name], np.float64)
                assert g.shape == w.shape, (c.id, o.name)
                scale = max(1.0, float(np.abs(w).max()) if w.size else 0.0)
                assert np.abs(g - w).max(initial=0.0) <= 16 * 2.0**-52 * scale, (c.id, o.name)
        checked += 1
    # all of the operator's value cases (the generator at seed 0 makes this many), every form
    assert checked == len(cases) == count, (op, checked, len(cases))
    assert forms <= seen, (op, forms - seen)
