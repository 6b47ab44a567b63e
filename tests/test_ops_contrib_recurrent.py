"""Tests of onnxruntime's com.microsoft AttnLSTM entry (``conformance/ops/contrib_recurrent.py``;
oracle, running error bound and kernels in ``conformance/reference/contrib_recurrent.py``).

* the oracle against an explicit per-time-step, per-memory-step loop written independently
  here from the operator text (gate by gate, score by score) on every generated value case;
* kernels through ``KernelBackend``: legitimate ones (float32 state, fused gate GEMMs, a libm
  3 ulp off, a softmax with max subtraction; float64 for double) pass every case; the
  deliberately wrong ones fail cases the right kernel passes: the attention state not fed
  back, memory_seq_lens ignored, the LSTM gates read i, f, c, o, AW's rows read as
  ``concat(CONTEXT, H)``;
* the tolerance stays tight (a few hundred ulps of the output at most);
* error cases rejected; the contested pattern carries its reason; the trap patterns exist.

onnx.reference has no com.microsoft AttnLSTM: no comparison with it is possible.
"""

from __future__ import annotations

from collections import Counter

import numpy as np
import pytest

from conformance.backends.kernel import KernelBackend
from conformance.ops import contrib_recurrent as ops_cr
from conformance.reference import contrib_recurrent as ref
from conformance.runner import run_cases

pytestmark = pytest.mark.filterwarnings("ignore::RuntimeWarning")
OPS = ["AttnLSTM", "DynamicQuantizeLSTM"]
FORMALS = ref.ATTN_INPUTS
OUTS = ("Y", "Y_h", "Y_c")
TYPES = {np.dtype(np.float32): "float", np.dtype(np.float64): "double"}


def _feeds(case):
    ds = case.datasets[0].inputs
    return {i.name: (ds[i.name] if i.name in ds else i.value) if i.present else None for i in case.inputs}


def _args(feeds):
    out = []
    for n in FORMALS:
        v = feeds.get(n)
        out.append(None if v is None else (np.asarray(v).astype(np.int64) if n.endswith("seq_lens")
                                           else np.asarray(v).astype(np.float64)))
    return out


@pytest.fixture(scope="module")
def attn(value_cases):
    """The AttnLSTM value cases."""
    return [c for c in value_cases if c.op == "AttnLSTM"]


@pytest.fixture(scope="module")
def dq(value_cases):
    """The DynamicQuantizeLSTM value cases."""
    return [c for c in value_cases if c.op == "DynamicQuantizeLSTM"]


def _outs(c) -> set:
    return set(c.tags["outputs"].split(","))


# ============================================================================ independent loop
_F = {"Relu": lambda x, a, b: np.maximum(x, 0), "Tanh": lambda x, a, b: np.tanh(x),
      "Sigmoid": lambda x, a, b: 1.0 / (1.0 + np.exp(-x)), "Affine": lambda x, a, b: a * x + b,
      "LeakyRelu": lambda x, a, b: np.where(x >= 0, x, a * x), "ScaledTanh": lambda x, a, b: a * np.tanh(b * x),
      "HardSigmoid": lambda x, a, b: np.clip(a * x + b, 0, 1),
      "Elu": lambda x, a, b: np.where(x >= 0, x, a * (np.exp(x) - 1)),
      "Softsign": lambda x, a, b: x / (1 + np.abs(x)), "Softplus": lambda x, a, b: np.log(1 + np.exp(x))}


def _acts(attrs, nd):
    """Per direction (f, g, h); the suite's lists put the activations taking alpha/beta first."""
    names = list(attrs.get("activations") or ["Sigmoid", "Tanh", "Tanh"] * nd)
    al = [float(np.float32(v)) for v in attrs.get("activation_alpha") or []]
    be = [float(np.float32(v)) for v in attrs.get("activation_beta") or []]
    fs = [(lambda x, n=n, k=k: _F[n](x, al[k] if k < len(al) else None, be[k] if k < len(be) else None))
          for k, n in enumerate(names)]
    return [fs[3 * d:3 * d + 3] for d in range(nd)]


def loop(x, w, r, b, lens, h0, c0, p, qw, mw, v, m, mlens, aw, attrs):
    """The text's equations, one batch row, one time step and one memory step at a time."""
    nd = 2 if attrs.get("direction") == "bidirectional" else 1
    S, N, I = x.shape
    H = attrs["hidden_size"]
    clip = attrs.get("clip")
    cl = (lambda q: q) if clip is None else (lambda q: np.clip(q, -clip, clip))
    acts = _acts(attrs, nd)
    Y = np.zeros((S, nd, N, H))
    Yh = np.zeros((nd, N, H))
    Yc = np.zeros((nd, N, H))
    mech = qw is not None
    for d in range(nd):
        f, g, hh = acts[d]
        Wk = dict(zip("iofc", np.split(w[d], 4)))
        Rk = dict(zip("iofc", np.split(r[d], 4)))
        Wb = dict(zip("iofc", np.split(b[d][:4 * H], 4))) if b is not None else dict.fromkeys("iofc", 0.0)
        Rb = dict(zip("iofc", np.split(b[d][4 * H:], 4))) if b is not None else dict.fromkeys("iofc", 0.0)
        Pi, Po, Pf = (p[d][:H], p[d][H:2 * H], p[d][2 * H:]) if p is not None else (0, 0, 0)
        rev = attrs.get("direction") == "reverse" or d == 1
        for n in range(N):
            L = S if lens is None else int(lens[n])
            Ht = np.zeros(H) if h0 is None else h0[d, n].copy()
            Ct = np.zeros(H) if c0 is None else c0[d, n].copy()
            attn = np.zeros(w.shape[2] - I)
            for t in (range(L - 1, -1, -1) if rev else range(L)):
                xt = np.concatenate([x[t, n], attn])
                it = f(cl(xt @ Wk["i"].T + Ht @ Rk["i"].T + Pi * Ct + Wb["i"] + Rb["i"]))
                ft = 1 - it if attrs.get("input_forget", 0) else \
                    f(cl(xt @ Wk["f"].T + Ht @ Rk["f"].T + Pf * Ct + Wb["f"] + Rb["f"]))
                ct = g(cl(xt @ Wk["c"].T + Ht @ Rk["c"].T + Wb["c"] + Rb["c"]))
                Ct = ft * Ct + it * ct
                ot = f(cl(xt @ Wk["o"].T + Ht @ Rk["o"].T + Po * Ct + Wb["o"] + Rb["o"]))
                Ht = ot * hh(cl(Ct) if clip is not None else Ct)
                Y[t, d, n] = Ht
                if not mech:
                    continue
                ML = m.shape[1] if mlens is None else int(mlens[n])
                E, A = mw.shape[1], mw.shape[2]
                pq = [sum(Ht[k] * qw[d, k, a] for k in range(H)) for a in range(A)]
                scores = []
                for s in range(ML):
                    key = [sum(m[n, s, e] * mw[d, e, a] for e in range(E)) for a in range(A)]
                    scores.append(sum(v[d, a] * np.tanh(key[a] + pq[a]) for a in range(A)))
                ex = [np.exp(q) for q in scores]
                align = [q / sum(ex) for q in ex]
                context = np.array([sum(align[s] * m[n, s, e] for s in range(ML)) for e in range(E)])
                attn = context if aw is None else np.concatenate([Ht, context]) @ aw[d]
            Yh[d, n] = Ht
            Yc[d, n] = Ct
    return Y, Yh, Yc


def test_oracle_is_the_loop_on_every_value_case(attn):
    n = 0
    for c in attn:
        args = _args(_feeds(c))
        want = loop(*args, dict(c.attributes))
        got = ref.oracle(args, dict(c.attributes))
        for k, name in enumerate(OUTS):
            np.testing.assert_allclose(got[name], want[k], rtol=1e-9, atol=1e-12, err_msg=f"{c.id} {name}")
        n += 1
    assert n >= 150


def test_attention_matters_in_every_attention_pattern(attn):
    """The attention state changes Y (not a plain LSTM): the oracle with the feedback removed
    differs on every case of more than one step where the mechanism is present."""
    n = 0
    for c in attn:
        args = _args(_feeds(c))
        x = args[0]
        lens = args[4]
        if args[8] is None or x.shape[0] < 2 or x.shape[1] == 0 or (lens is not None and max(lens) < 2):
            continue
        a = ref.oracle(args, dict(c.attributes), ("Y",))["Y"]
        b = ref.recurrence(ref.rec.Float64(), *args, attrs=dict(c.attributes), outputs=("Y",), flaw="no-feedback")
        assert np.max(np.abs(a - b["Y"])) > 1e-6, c.id
        n += 1
    assert n >= 100


# ============================================================================ kernels
def kernel_of(flaw=None, **kw):
    def kernel(inputs, attrs, outputs, opset):
        t = TYPES[inputs["X"].dtype]
        args = _args({n: inputs.get(n) for n in FORMALS})
        attrs = {k: ([s.decode() if isinstance(s, bytes) else s for s in v] if isinstance(v, list) else v)
                 for k, v in attrs.items()}
        if flaw == "gates-ifco":  # W/R/B's blocks read as i, f, c, o
            def perm(q, k=1):
                blocks = np.split(q, 4 * k, axis=1)
                out = []
                for j in range(k):
                    i_, o_, f_, c_ = blocks[4 * j:4 * j + 4]
                    out += [i_, c_, o_, f_]
                return np.concatenate(out, axis=1)
            args[1], args[2] = perm(args[1]), perm(args[2])
            if args[3] is not None:
                args[3] = perm(args[3], 2)
        rf = flaw if flaw in ("no-feedback", "memory-lens-ignored", "aw-order") else None
        out = ref.kernel(args, attrs, OUTS, t, flaw=rf, **kw)
        return {n: out[n] for n in outputs}

    return kernel


def _run(cases, kernel, name, check=True):
    return run_cases(cases, KernelBackend({"AttnLSTM": kernel}, name=name, check=check))


LEGIT = {"float32": {}, "fused": {"fused": True}, "libm-3ulp": {"libm_ulps": 3.0},
         "fused-maxsub-libm": {"fused": True, "max_sub": True, "libm_ulps": -3.0}}


@pytest.mark.parametrize("name", sorted(LEGIT))
def test_legitimate_kernels_pass_everything(name, attn):
    results = _run(attn, kernel_of(**LEGIT[name]), name)
    bad = [(c.id, r.outcome, r.message[:200]) for c, r in zip(attn, results) if r.outcome != "pass"]
    assert not bad, (len(bad), bad[:5])


def _mem_short(c):
    f = _feeds(c)
    ml = f.get("memory_seq_lens")
    return ml is not None and any(int(q) < f["M"].shape[1] for q in ml)


def _steps(c):
    f = _feeds(c)
    lens = f.get("sequence_lens")
    return int(max(lens)) if lens is not None and len(lens) else f["X"].shape[0] * bool(f["X"].shape[1])


WRONG = {
    # flaw: (filter on value cases, at least this many fails)
    "no-feedback": (lambda c: c.op and any(i.name == "M" and i.present for i in c.inputs) and _steps(c) >= 2, 80),
    "memory-lens-ignored": (lambda c: _mem_short(c), 10),
    "gates-ifco": (lambda c: _steps(c) >= 1, 100),
    "aw-order": (lambda c: any(i.name == "AW" and i.present for i in c.inputs) and _steps(c) >= 2, 30),
}


@pytest.mark.parametrize("flaw", sorted(WRONG))
def test_wrong_kernels_are_caught(flaw, attn):
    keep, least = WRONG[flaw]
    cases = [c for c in attn if keep(c)]
    assert len(cases) >= least, len(cases)
    right = _run(cases, kernel_of(), "right")
    assert all(r.outcome == "pass" for r in right)
    results = _run(cases, kernel_of(flaw=flaw), flaw, check=False)
    n = Counter(r.outcome for r in results)
    assert n["fail"] >= least, n
    assert {c.tags["dtype"] for c, r in zip(cases, results) if r.outcome == "fail"} == {"float", "double"}


def test_tolerance_is_tight(attn):
    """The running bound stays small for float: its median atol near 1e-5 (about 100 ulps of
    the outputs, which are of order 0.1-1), the worst (5 saturating steps with the attention
    fed back) below 1e-2; double below 1e-10."""
    at = {"float": [], "double": []}
    for c in attn:
        for o in c.outputs:
            if o.tolerance is not None:
                at[c.tags["dtype"]].append(o.tolerance.atol)
    assert 0 < np.median(at["float"]) < 5e-5, np.median(at["float"])
    assert max(at["float"]) < 1e-2, max(at["float"])
    assert max(at["double"]) < 1e-10, max(at["double"])


def test_error_cases_are_rejected(suite):
    cases = [c for c in suite if c.expect_error and c.op == "AttnLSTM"]
    assert {c.tags["error"] for c in cases} == {"hidden_size-mismatch", "num_directions-mismatch",
                                                "unknown-activation", "unknown-direction", "AW-shape",
                                                "memory_seq_lens-beyond-M"}
    results = _run(cases, kernel_of(), "legit")
    assert all(r.outcome == "pass" for r in results), [(c.id, r.message[:100]) for c, r in zip(cases, results)
                                                        if r.outcome != "pass"]


def test_contested_and_trap_patterns(suite, attn):
    value_cases = attn
    suite = [c for c in suite if c.op == "AttnLSTM"]
    assert {c.tags["shape"] for c in value_cases} == {s.name for s in ops_cr.SHAPES}
    contested = [c for c in value_cases if c.contested]
    assert contested and all(c.tags["shape"] == "contested/no-attention-mechanism" for c in contested)
    assert all(not any(i.name == "QW" and i.present for i in c.inputs) for c in contested)
    assert sum(_mem_short(c) for c in value_cases) >= 10
    assert {c.attributes.get("direction", "forward") for c in value_cases} >= {"forward", "reverse", "bidirectional"}
    assert len({frozenset(_outs(c)) for c in value_cases}) == 7
    z_ne_e = [c for c in value_cases if any(i.name == "AW" and i.present for i in c.inputs)
              and _feeds(c)["AW"].shape[2] != _feeds(c)["MW"].shape[1]]
    assert len(z_ne_e) >= 10
    assert 150 <= len(suite) <= 600


# ============================================================================ DynamicQuantizeLSTM
def _dq_args(feeds):
    """The 12 inputs, float64 (ints exact), sequence_lens int64."""
    out = []
    for n in ref.DQ_INPUTS:
        v = feeds.get(n)
        out.append(None if v is None else (np.asarray(v).astype(np.int64) if n == "sequence_lens"
                                           else np.asarray(v).astype(np.float64)))
    return out


def _dequantize_loop(q, scale, zp):
    """``[D, K, 4H]`` -> LSTM's ``[D, 4H, K]``, element by element: ``(q - zp[j]) * scale[j]``
    for channel ``j`` (the 4H axis) or the direction's single scale."""
    D, K, G = q.shape
    out = np.zeros((D, G, K))
    for d in range(D):
        for k in range(K):
            for j in range(G):
                s = scale[d] if scale.ndim == 1 else scale[d, j]
                z = zp[d] if zp.ndim == 1 else zp[d, j]
                out[d, j, k] = (q[d, k, j] - z) * s
    return out


def test_dq_oracle_is_the_lstm_loop_on_dequantized_weights(dq):
    from test_ops_recurrent import loop as lstm_loop  # the ai.onnx LSTM tests' independent loop

    n = 0
    for c in dq:
        a = _dq_args(_feeds(c))
        w = _dequantize_loop(a[1], a[8], a[9])
        r = _dequantize_loop(a[2], a[10], a[11])
        want = lstm_loop("LSTM", a[0], w, r, a[3], a[4], a[5], a[6], a[7], dict(c.attributes))
        got = ref.dq_lstm_oracle(a, dict(c.attributes))
        for k, name in enumerate(OUTS):
            np.testing.assert_allclose(got[name], want[k], rtol=1e-9, atol=1e-12, err_msg=f"{c.id} {name}")
        n += 1
    assert n >= 80


def dq_kernel_of(flaw=None, **kw):
    def kernel(inputs, attrs, outputs, opset):
        a = _dq_args({n: inputs.get(n) for n in ref.DQ_INPUTS})
        attrs = {k: ([s.decode() if isinstance(s, bytes) else s for s in v] if isinstance(v, list) else v)
                 for k, v in attrs.items()}
        if flaw == "W-layout":  # W and R read in LSTM's [D, 4H, K] layout: reshaped, not transposed
            for j in (1, 2):
                a[j] = a[j].reshape(a[j].shape[0], a[j].shape[2], a[j].shape[1]).swapaxes(1, 2)
        if flaw == "zero-point-ignored":
            a[9], a[11] = np.zeros_like(a[9]), np.zeros_like(a[11])
        if flaw == "gates-ifco":  # the 4H axis read as i, f, c, o
            for j in (1, 2, 8, 9, 10, 11):
                if a[j].ndim >= 2 and a[j].shape[-1] % 4 == 0 and a[j].shape[-1] > 1:
                    i_, o_, f_, c_ = np.split(a[j], 4, axis=-1)
                    a[j] = np.concatenate([i_, c_, o_, f_], axis=-1)
            if a[3] is not None:
                blocks = np.split(a[3], 8, axis=1)
                a[3] = np.concatenate([blocks[k] for k in (0, 3, 1, 2, 4, 7, 5, 6)], axis=1)
        out = ref.dq_lstm_kernel(a, attrs, OUTS, **kw)
        return {n: out[n] for n in outputs}

    return kernel


def _dq_run(cases, kernel, name, check=True):
    return run_cases(cases, KernelBackend({"DynamicQuantizeLSTM": kernel}, name=name, check=check))


DQ_LEGIT = {"quantized": {}, "float": {"quantize": False}, "quantized-fused": {"fused": True}}


@pytest.mark.parametrize("name", sorted(DQ_LEGIT))
def test_dq_legitimate_kernels_pass_everything(name, dq):
    results = _dq_run(dq, dq_kernel_of(**DQ_LEGIT[name]), name)
    bad = [(c.id, r.outcome, r.message[:200]) for c, r in zip(dq, results) if r.outcome != "pass"]
    assert not bad, (len(bad), bad[:5])


def test_dq_tolerance_is_used(dq):
    """The quantizing kernel's worst error is a sizeable part of the tolerance (above 5 %): the
    bound of an unspecified dynamic quantization is not vacuous."""
    worst = 0.0
    for c in dq:
        a = _dq_args(_feeds(c))
        out = ref.dq_lstm_kernel(a, dict(c.attributes), OUTS)
        want = ref.dq_lstm_oracle(a, dict(c.attributes))
        for o in c.outputs:
            if o.tolerance is not None and np.size(want[o.name]):
                lim = o.tolerance.atol + o.tolerance.rtol * np.abs(want[o.name])
                worst = max(worst, float(np.max(np.abs(out[o.name] - want[o.name]) / lim)))
    assert 0.05 < worst < 1, worst


def _per_channel(c):
    return len(_feeds(c)["W_scale"].shape) == 2


DQ_WRONG = {
    "W-layout": (lambda c: _feeds(c)["X"].shape[1] > 0, 40),
    "zero-point-ignored": (lambda c: _feeds(c)["X"].shape[1] > 0 and not (
        _per_channel(c) and _feeds(c)["W"].dtype == np.int8), 25),
    "gates-ifco": (lambda c: _feeds(c)["X"].shape[1] > 0, 40),
}


@pytest.mark.parametrize("flaw", sorted(DQ_WRONG))
def test_dq_wrong_kernels_are_caught(flaw, dq):
    keep, least = DQ_WRONG[flaw]
    cases = [c for c in dq if keep(c)]
    assert len(cases) >= least, len(cases)
    results = _dq_run(cases, dq_kernel_of(flaw=flaw), flaw, check=False)
    n = Counter(r.outcome for r in results)
    assert n["fail"] >= least, n


def test_dq_error_cases_are_rejected(suite):
    cases = [c for c in suite if c.expect_error and c.op == "DynamicQuantizeLSTM"]
    assert {c.tags["error"] for c in cases} == {"hidden_size-mismatch", "W-layout", "W_scale-shape",
                                                "num_directions-mismatch"}
    results = _dq_run(cases, dq_kernel_of(), "legit")
    assert all(r.outcome == "pass" for r in results), [(c.id, r.message[:100]) for c, r in zip(cases, results)
                                                        if r.outcome != "pass"]


def test_dq_patterns(dq):
    assert {c.tags["shape"] for c in dq} == {s.name for s in ops_cr.DQ_SHAPES}
    assert {str(_feeds(c)["W"].dtype) for c in dq} == {"int8", "uint8"}
    assert sum(_per_channel(c) for c in dq) >= 20
    assert {c.attributes.get("direction", "forward") for c in dq} >= {"forward", "reverse", "bidirectional"}
