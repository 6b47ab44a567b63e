"""onnxruntime's com.microsoft attention-family contrib operators
(:mod:`conformance.ops.contrib_attention`): RotaryEmbedding and EmbedLayerNormalization
(com.microsoft, 1).

* the oracle against an explicit loop written here from ContribOperators.md's description;
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
OPS = ["com.microsoft:RotaryEmbedding", "com.microsoft:EmbedLayerNormalization"]


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
    results = run_cases(cases, KernelBackend({"EmbedLayerNormalization": eln_kernel(compute, one_pass)}, name="l"))
    bad = [(c.id, r.outcome, r.message[:200]) for c, r in zip(cases, results) if r.outcome != "pass"]
    assert not bad, bad[:5]


@pytest.mark.parametrize("flaw,least", [("no-segment", 15), ("no-position-ids", 8), ("mask-length", 12),
                                        ("no-epsilon", 10)])
def test_eln_wrong_kernels_are_caught(flaw, least, value_cases):
    cases = _eln_cases(value_cases)
    results = run_cases(cases, KernelBackend({"EmbedLayerNormalization": eln_kernel(np.float32, flaw=flaw)}, name=flaw))
    fails = [c for c, r in zip(cases, results) if r.outcome == "fail"]
    assert len(fails) >= least, (flaw, len(fails))


def test_eln_error_cases_are_rejected(suite):
    cases = [c for c in suite if c.expect_error and c.op == "EmbedLayerNormalization"]
    assert {c.tags["error"] for c in cases} == {"gamma-shape", "beta-shape", "position-hidden", "ids-rank"}
    results = run_cases(cases, KernelBackend({"EmbedLayerNormalization": eln_kernel()}, name="l"))
    assert all(r.outcome == "pass" for r in results), [(c.id, r.message[:100]) for c, r in zip(cases, results)]
