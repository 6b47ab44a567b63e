"""onnxruntime's com.microsoft attention-family contrib operators
(:mod:`conformance.ops.contrib_attention`): RotaryEmbedding (com.microsoft, 1).

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
OPS = ["com.microsoft:RotaryEmbedding"]


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
