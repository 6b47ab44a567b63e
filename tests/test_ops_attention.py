"""Tests of ai.onnx Attention (23, 24, 25) and TensorScatter (24) (``conformance/ops/attention.py``;
oracles, bound and legitimate kernels in ``conformance/reference/attention.py``).

* the oracle against an explicit per-(batch, head, query, key) loop written independently here
  from the operator text, on every generated value case (every output), and against onnx's node
  tests (the spec's examples), each disagreement asserted and explained;
* agreement with ``onnx.reference`` on every case, each disagreement explained;
* kernels through ``KernelBackend``: legitimate ones (every node rounded to T, float32 throughout,
  online softmax with and without max subtraction, a libm 3 ulp off, FMA) pass every case; the
  deliberately wrong ones fail cases the right kernel passes: a causal mask aligned to the wrong
  corner, grouped-query heads mapped h -> h % kv, a boolean mask read inverted, past keys appended
  or dropped, scale ignored, softcap ignored;
* error cases rejected; coverage of every version and type.
"""

from __future__ import annotations

import math
from collections import Counter

import ml_dtypes
import numpy as np
import onnx
import pytest

from conformance.backends import resolve_backend
from conformance.backends.kernel import KernelBackend
from conformance.coverage import compute_coverage
from conformance.ops import attention as ops_att
from conformance.reference import attention as ref
from conformance.runner import run_cases
from oracle_checks import single_node_tests, sort_findings  # tests/oracle_checks.py

pytestmark = pytest.mark.filterwarnings("ignore::RuntimeWarning")
OPS = ["Attention"]
FORMALS = ("Q", "K", "V", "attn_mask", "past_key", "past_value", "nonpad_kv_seqlen")
OUTS = ("Y", "present_key", "present_value", "qk_matmul_output")
NP_T = {"float16": np.float16, "bfloat16": ml_dtypes.bfloat16, "float": np.float32, "double": np.float64}
T_OF = {np.dtype(v): k for k, v in NP_T.items()}


def _feeds(case):
    ds = case.datasets[0].inputs
    return {i.name: (ds[i.name] if i.name in ds else i.value) if i.present else None for i in case.inputs}


def _args(feeds):
    out = []
    for n in FORMALS:
        v = feeds.get(n)
        if v is None:
            out.append(None)
        elif n == "nonpad_kv_seqlen":
            out.append(np.asarray(v).astype(np.int64))
        elif n == "attn_mask" and np.asarray(v).dtype == np.bool_:
            out.append(np.asarray(v))
        else:
            out.append(np.asarray(v).astype(np.float64))
    return out


# ============================================================================ independent loop
def loop(q, k, v, mask, pk, pv, nonpad, attrs, version):
    """The operator text, one (batch, head, query) row at a time, scalar arithmetic for the
    scores and the softmax: 3-D inputs split into heads, past prepended, query head h reads kv
    head h // (Hq / Hkv), scores ``scale * q.k`` (scale default 1/sqrt(head_size)), softcap
    ``c tanh(s / c)`` before the bias, the mask looked up with numpy's right-aligned broadcasting
    (24+: keys past its last dimension are disallowed), the causal rule ``j <= i + offset``
    (offset: past length, else nonpad - Lq, else 0), the window of 25, the padding of nonpad;
    a row with no allowed key is zero."""
    rank = q.ndim
    hq = attrs.get("q_num_heads") or q.shape[1]
    hkv = attrs.get("kv_num_heads") or k.shape[1]

    def heads(x, h):
        if x.ndim == 4:
            return x
        b, n, w = x.shape
        d = w // h
        out = np.zeros((b, h, n, d))
        for bi in range(b):
            for hi in range(h):
                for s in range(n):
                    out[bi, hi, s] = x[bi, s, hi * d:(hi + 1) * d]
        return out

    q4, k4, v4 = heads(q, hq), heads(k, hkv), heads(v, hkv)
    past = 0
    if pk is not None:
        past = pk.shape[2]
        k4 = np.concatenate([pk, k4], axis=2)
        v4 = np.concatenate([pv, v4], axis=2)
    B, Hq, Lq, D = q4.shape
    Hkv, Lt, E = k4.shape[1], k4.shape[2], v4.shape[3]
    scale = attrs["scale"] if attrs.get("scale") is not None else 1.0 / math.sqrt(D)
    cap = attrs.get("softcap", 0.0) or 0.0
    left = attrs.get("left_window_size", -1) if version >= 25 else -1
    right = attrs.get("right_window_size", -1) if version >= 25 else -1
    causal = attrs.get("is_causal", 0)
    mode = attrs.get("qk_matmul_output_mode", 0)
    Y = np.zeros((B, Hq, Lq, E))
    stage = np.zeros((B, Hq, Lq, Lt))
    for b in range(B):
        off = past if pk is not None else (int(nonpad[b]) - Lq if nonpad is not None else 0)
        for h in range(Hq):
            g = h // (Hq // Hkv)
            for i in range(Lq):
                raw, capped, biased = [], [], []
                for j in range(Lt):
                    s = scale * sum(float(q4[b, h, i, d]) * float(k4[b, g, j, d]) for d in range(D))
                    c = cap * math.tanh(s / cap) if cap > 0 else s
                    bias = 0.0
                    if mask is not None:
                        m = mask
                        idx = [b, h, i, j][4 - m.ndim:]
                        if version >= 24 and j >= m.shape[-1]:
                            val = None
                        else:
                            idx = tuple(0 if m.shape[a] == 1 else idx[a] for a in range(m.ndim))
                            val = m[idx]
                        if val is None:
                            bias = -math.inf
                        elif m.dtype == np.bool_:
                            bias = 0.0 if val else -math.inf
                        else:
                            bias = float(val)
                    p_ = off + i
                    if causal and j > p_:
                        bias = -math.inf
                    if left >= 0 and j < p_ - left:
                        bias = -math.inf
                    if right >= 0 and j > p_ + right:
                        bias = -math.inf
                    if nonpad is not None and j >= int(nonpad[b]):
                        bias = -math.inf
                    raw.append(s)
                    capped.append(c)
                    biased.append(c + bias)
                ok = [x for x in biased if x != -math.inf]
                probs = [0.0] * Lt
                if ok:
                    mx = max(ok)
                    ex = [math.exp(x - mx) if x != -math.inf else 0.0 for x in biased]
                    tot = sum(ex)
                    probs = [e / tot for e in ex]
                for e_ in range(E):
                    Y[b, h, i, e_] = sum(probs[j] * v4[b, g, j, e_] for j in range(Lt))
                stage[b, h, i] = (raw, capped, biased, probs)[mode]
    if rank == 3:
        Y = Y.transpose(0, 2, 1, 3).reshape(B, Lq, Hq * E)
    return {"Y": Y, "present_key": k4, "present_value": v4, "qk_matmul_output": stage}


def test_oracle_is_the_loop_on_every_value_case(value_cases):
    n = Counter()
    for c in value_cases:
        args = _args(_feeds(c))
        mine = loop(*args, dict(c.attributes), c.since_version)
        got = dict(zip(OUTS, ref.attention(*args, version=c.since_version, **c.attributes)))
        for o in c.outputs:
            if not o.present:
                continue
            g, m = got[o.name], mine[o.name]
            assert g.shape == m.shape, (c.id, o.name)
            assert np.array_equal(np.isneginf(g), np.isneginf(m)), (c.id, o.name)
            fin = np.isfinite(m)
            assert np.allclose(g[fin], m[fin], rtol=1e-12, atol=1e-12), (c.id, o.name)
            want = c.datasets[0].outputs[o.name].astype(np.float64)
            fi = ml_dtypes.finfo(NP_T[c.tags["dtype"]])
            mm = np.abs(np.where(fin, m, 0))
            slack = float(fi.smallest_subnormal) + 1e-12 * (float(mm.max()) if mm.size else 0.0)
            assert np.all(np.abs(want[fin] - m[fin]) <= float(fi.eps) * mm[fin] + slack), (c.id, o.name)
            n[o.name] += 1
    assert n["Y"] > 1000 and n["qk_matmul_output"] > 80 and n["present_key"] > 80, n


def _node_attrs(node):
    return {a.name: onnx.helper.get_attribute_value(a) for a in node.attribute}


#: onnx node tests whose expectation differs from the text, with the reason (asserted below).
NODE_TEST_DISAGREEMENTS = {}


def test_oracle_reproduces_the_node_tests():
    tests = single_node_tests(("Attention",), ("attention",))
    assert len(tests) >= 80
    checked, differ = 0, {}
    for t in tests:
        node = t.model.graph.node[0]
        ver = next(o.version for o in t.model.opset_import if o.domain in ("", "ai.onnx"))
        ver = max(v for v in (23, 24, 25) if v <= ver)
        attrs = _node_attrs(node)
        names = [i.name for i in t.model.graph.input]
        for ins, outs in t.data_sets:
            byname = dict(zip(names, ins))
            feeds = {f: byname.get(n) for f, n in zip(FORMALS, list(node.input) + [""] * 7) if n}
            args = _args(feeds)
            got = dict(zip(OUTS, ref.attention(*args, version=ver, **attrs)))
            for fo, want in zip([f for f, n in zip(OUTS, node.output) if n], outs):
                w = np.asarray(want, dtype=np.float64)
                g = got[fo]
                tol = 2e-2 if np.asarray(want).dtype in (np.float16, ml_dtypes.bfloat16) else 1e-4
                fin = np.isfinite(w)
                same = g.shape == w.shape and np.array_equal(np.isneginf(g), np.isneginf(w)) and np.allclose(
                    g[fin], w[fin], rtol=tol, atol=tol)
                if not same:
                    differ[(t.name, fo)] = float(np.max(np.abs(np.nan_to_num(g - w)))) if g.shape == w.shape else -1
                checked += 1
    assert checked >= 100
    assert set(differ) == set(NODE_TEST_DISAGREEMENTS), differ


# ============================================================================ kernels
def _kernel_args(inputs):
    t = T_OF[np.dtype(inputs["Q"].dtype)]
    return t, _args({n: inputs.get(n) for n in FORMALS})


def att_kernel(**kw):
    """A legitimate kernel (:func:`conformance.reference.attention.attention_kernel`)."""

    def kernel(inputs, attrs, outputs, opset):
        t, args = _kernel_args(inputs)
        ver = max(v for v in (23, 24, 25) if v <= opset)
        out = dict(zip(OUTS, ref.attention_kernel(*args, t=t, version=ver, **attrs, **kw)))
        return {n: out[n] for n in outputs}

    return kernel


def wrong_kernel(flaw):
    """The float64 oracle's arithmetic with one semantic error, rounded to T:

    * ``causal-corner``: the causal (and window) frontier aligned to the other corner: bottom-right
      (``Lk - Lq``) without a cache, top-left (0) with a past or nonpad_kv_seqlen;
    * ``gqa-modulo``: query head h reads kv head ``h % Hkv`` instead of ``h // (Hq / Hkv)``;
    * ``mask-inverted``: a boolean mask read True = masked;
    * ``past-appended`` / ``past-dropped``: the past keys/values after the current ones / not
      used (the present outputs stay right);
    * ``scale-ignored`` (scale 1), ``softcap-ignored``."""

    def kernel(inputs, attrs, outputs, opset):
        t, args = _kernel_args(inputs)
        ver = max(v for v in (23, 24, 25) if v <= opset)
        a = dict(attrs)
        q4, k4, v4, mask, off, window, kvl, rank = ref.prepare(*args, version=ver, **a)
        present_k, present_v = k4, v4
        lq, lt = q4.shape[2], k4.shape[2]
        if flaw == "causal-corner":
            off = (lt - lq) if args[4] is None and args[6] is None else 0
        if flaw == "gqa-modulo":
            hq, hkv = q4.shape[1], k4.shape[1]
            k4 = k4[:, [h % hkv for h in range(hq)]]
            v4 = v4[:, [h % hkv for h in range(hq)]]
        if flaw == "mask-inverted" and mask is not None and mask.dtype == np.bool_:
            mask = ~mask
        if flaw in ("past-appended", "past-dropped") and args[4] is not None:
            p = args[4].shape[2]
            if flaw == "past-appended":
                k4 = np.concatenate([k4[:, :, p:], k4[:, :, :p]], axis=2)
                v4 = np.concatenate([v4[:, :, p:], v4[:, :, :p]], axis=2)
            else:
                k4, v4 = k4[:, :, p:], v4[:, :, p:]
                mask = None if mask is None else mask[..., p:]
                off = 0
        scale = a.get("scale")
        if flaw == "scale-ignored":
            scale = 1.0
        cap = float(a.get("softcap", 0.0) or 0.0)
        if flaw == "softcap-ignored":
            cap = 0.0
        y, sc = ref.scaled_dot_product_attention(
            q4, k4, v4, scale=None if scale is None else float(scale), mask=mask, is_causal=bool(a.get("is_causal", 0)),
            causal_offset=off, softcap=cap, window=window, kv_seqlen=kvl)
        stage = sc[int(a.get("qk_matmul_output_mode", 0) or 0)]
        if flaw == "past-dropped" and args[4] is not None:
            stage = np.concatenate([np.full(stage.shape[:3] + (args[4].shape[2],), -np.inf), stage], axis=-1)
        if rank == 3:
            y = ref._merge_heads(y, 3)
        out = {"Y": y, "present_key": present_k, "present_value": present_v, "qk_matmul_output": stage}
        return {n: np.asarray(out[n]).astype(NP_T[t]) for n in outputs}

    return kernel


def _run(cases, kernel, name, check=True):
    return run_cases(cases, KernelBackend({"Attention": kernel}, name=name, check=check))


LEGIT = {"per-node": {}, "float32-throughout": {"per_node": False}, "online-softmax": {"block": 2},
         "online-no-max-shift": {"block": 3, "max_shift": False, "libm_ulps": 3.0},
         "no-max-shift-fma-libm": {"max_shift": False, "fma": True, "libm_ulps": -3.0}}


@pytest.mark.parametrize("name", sorted(LEGIT))
def test_legitimate_kernels_pass_everything(name, value_cases):
    results = _run(value_cases, att_kernel(**LEGIT[name]), name, check=False)
    bad = [(c.id, r.outcome, r.message[:200]) for c, r in zip(value_cases, results) if r.outcome != "pass"]
    assert not bad, (len(bad), bad[:5])


def _has(c, name) -> bool:
    return any(i.name == name and i.present for i in c.inputs)


def _lens_differ(c) -> bool:
    f = _feeds(c)
    q, k = f["Q"], f["K"]
    lq = q.shape[2] if q.ndim == 4 else q.shape[1]
    lk = (k.shape[2] if k.ndim == 4 else k.shape[1]) + (f["past_key"].shape[2] if f.get("past_key") is not None else 0)
    return lq != lk or f.get("past_key") is not None or f.get("nonpad_kv_seqlen") is not None


def _gqa(c) -> bool:
    f = _feeds(c)
    if f["Q"].ndim == 4:
        return f["Q"].shape[1] // f["K"].shape[1] > 1 and f["K"].shape[1] > 1
    return c.attributes["q_num_heads"] // c.attributes["kv_num_heads"] > 1 and c.attributes["kv_num_heads"] > 1


def _bool_mask(c) -> bool:
    return _has(c, "attn_mask") and c.tags.get("dtype") is not None and "U=bool" in c.id


WRONG = {
    # flaw: (filter on value cases, at least this many fails)
    "causal-corner": (lambda c: c.attributes.get("is_causal") == 1 and _lens_differ(c), 60),
    "gqa-modulo": (_gqa, 60),
    "mask-inverted": (lambda c: _has(c, "attn_mask") and _feeds(c)["attn_mask"].dtype == np.bool_, 60),
    "past-appended": (lambda c: _has(c, "past_key") and c.tags["shape"] != "4d/past/empty", 60),
    "past-dropped": (lambda c: _has(c, "past_key") and c.tags["shape"] != "4d/past/empty", 60),
    "scale-ignored": (lambda c: c.tags["shape"] not in ("4d/zero-batch", "4d/zero-query", "4d/zero-keys"), 300),
    "softcap-ignored": (lambda c: (c.attributes.get("softcap") or 0) > 0, 40),
}


@pytest.mark.parametrize("flaw", sorted(WRONG))
def test_wrong_kernels_are_caught(flaw, value_cases):
    keep, least = WRONG[flaw]
    cases = [c for c in value_cases if keep(c)]
    assert len(cases) >= least, len(cases)
    results = _run(cases, wrong_kernel(flaw), flaw, check=False)
    n = Counter(r.outcome for r in results)
    assert n["fail"] >= least, n
    by_type = Counter(c.tags["dtype"] for c, r in zip(cases, results) if r.outcome == "fail")
    assert {"float", "double", "float16", "bfloat16"} <= set(by_type), by_type


def test_the_unflawed_wrong_kernel_passes(value_cases):
    """The wrong kernels' scaffold without a flaw passes every case (their fails are the flaw's)."""
    results = _run(value_cases, wrong_kernel(None), "scaffold", check=False)
    bad = [(c.id, r.outcome, r.message[:200]) for c, r in zip(value_cases, results) if r.outcome != "pass"]
    assert not bad, (len(bad), bad[:5])


def test_error_cases_are_rejected(suite):
    cases = [c for c in suite if c.expect_error and c.op == "Attention"]
    assert {c.tags["error"] for c in cases} >= {"3d-heads-not-multiple", "4d-heads-not-multiple", "mask-broadcast",
                                                "mask-too-long", "3d-no-num_heads", "head-size-mismatch",
                                                "3d-hidden-not-multiple", "past_key-alone"}
    results = _run(cases, att_kernel(), "legit", check=False)
    assert all(r.outcome == "pass" for r in results), [(c.id, r.message[:100]) for c, r in zip(cases, results)
                                                        if r.outcome != "pass"]


# ============================================================================ onnx.reference
def _reference_disagreement(case, res) -> str | None:
    """Why onnx.reference (onnx 1.23, ``op_attention.py``) and the suite disagree; the suite is
    right in each:

    * ``mode0-softcapped``: ``qk_matmul_output_mode`` 0 with softcap returns the softcapped scores
      (``qk_matmul_output = _softcap(qk_matmul_output, softcap)`` overwrites the raw product); the
      text: "0 (default): raw QK matmul result".
    * ``23-mask-padded``: at 23 a mask whose last dimension is 1 is padded with ``-inf`` (the
      reference pads at every version); 23's text ("broadcastable to") and 23's function body
      (no Pad) broadcast it.
    * ``no-keys-crash``: a key sequence of length 0 ("zero-size array to reduction operation
      maximum"); the text: a fully-masked row is a zero row.
    """
    msg = res.message or ""
    shape = case.tags.get("shape", "")
    if case.attributes.get("qk_matmul_output_mode", 0) == 0 and (case.attributes.get("softcap") or 0) > 0 \
            and "qk_matmul_output" in msg:
        return "mode0-softcapped"
    if case.since_version == 23 and shape == "4d/mask-column":
        return "23-mask-padded"
    if shape == "4d/zero-keys" and "zero-size array" in msg:
        return "no-keys-crash"
    return None


def test_agreement_with_onnx_reference(suite):
    cases = [c for c in suite if c.op == "Attention"]
    results = run_cases(cases, resolve_backend("onnx-reference"))
    why, unexplained = sort_findings(cases, results, _reference_disagreement)
    assert not unexplained, (len(unexplained), unexplained[:5])
    assert set(why) == {"mode0-softcapped", "23-mask-padded", "no-keys-crash"}, why
    ok = Counter((c.since_version, c.tags["dtype"]) for c, r in zip(cases, results) if r.outcome == "pass")
    assert all(ok[(v, t)] >= 100 for v in (23, 24, 25) for t in NP_T), ok


# ============================================================================ coverage, patterns
def test_coverage_every_combination_of_every_version(suite):
    cov = compute_coverage(suite)
    for op in OPS:
        versions = cov["ops"][op]["versions"]
        spec = {s.since_version for s in onnx.defs.get_all_schemas_with_history() if s.name == op and s.domain == ""}
        assert set(map(int, versions)) == spec
        for v, e in versions.items():
            # every combination has cases or the entry's stated reason (T2 != T1, U other than bool/T1)
            assert e["gaps"] == 0, (op, v, [m for m in e["missing"] if "declared_unbuildable" not in m][:3])
            assert len(e["missing"]) == 4 * 4 * 13 - 8, (v, len(e["missing"]))  # 8 built: T1 x (bool, T1)
    counts = Counter(c.op for c in suite)
    assert all(300 <= n <= 2500 for n in counts.values()), counts


def test_trap_patterns(value_cases):
    att = [c for c in value_cases if c.op == "Attention"]
    assert {c.tags["shape"] for c in att} == {s.name for s in ops_att.ATT_SHAPES}
    # every qk_matmul_output_mode with its output, both mask kinds, presents, 3-D, windows
    modes = {c.attributes.get("qk_matmul_output_mode", 0) for c in att if "qk_matmul_output" in c.tags["outputs"]}
    assert modes == {0, 1, 2, 3}
    kinds = Counter(str(_feeds(c)["attn_mask"].dtype) for c in att if _has(c, "attn_mask"))
    assert kinds["bool"] >= 200 and sum(v for k, v in kinds.items() if k != "bool") >= 200, kinds
    assert sum("present_key" in c.tags["outputs"] for c in att) >= 80
    assert {c.since_version for c in att if "left_window_size" in c.attributes} == {25}
    assert sum(_has(c, "nonpad_kv_seqlen") for c in att) >= 40
    # fully-masked rows: some expected Y rows are exactly zero while others are not
    dead = 0
    for c in att:
        if c.tags["numerics"] == "dead-rows" and _has(c, "attn_mask"):
            y = c.datasets[0].outputs["Y"]
            dead += bool(y.size and np.any(np.all(y.astype(np.float64) == 0, axis=-1)))
    assert dead >= 50, dead
    assert sum(1 for c in att if c.contested) >= 10


# ============================================================================ TensorScatter
@pytest.fixture(scope="module")
def suite_ts():
    from conformance import registry

    return registry.generate(["TensorScatter"], seed=0)


@pytest.fixture(scope="module")
def value_cases_ts(suite_ts):
    return [c for c in suite_ts if c.expect_error is None]


def ts_loop(past, upd, w, mode, axis):
    """The text's pseudocode, element by element over every index of the update."""
    out = np.array(past, copy=True)
    ax = axis % past.ndim
    m = past.shape[ax]
    for idx in np.ndindex(*upd.shape):
        pos = int(w[idx[0]]) + idx[ax] if w is not None else idx[ax]
        if mode == "circular":
            pos %= m
        dst = list(idx)
        dst[ax] = pos
        out[tuple(dst)] = upd[idx]
    return out


def _ts_args(feeds):
    w = feeds.get("write_indices")
    return feeds["past_cache"], feeds["update"], None if w is None else np.asarray(w).astype(np.int64)


def _same(a, b) -> bool:
    a, b = np.asarray(a), np.asarray(b)
    if a.shape != b.shape:
        return False
    if a.dtype != object and a.dtype == b.dtype:
        return a.tobytes() == b.tobytes()  # a copy: bit for bit (NaN payloads, signed zeros)
    return bool(np.all(a == b))


def test_tensor_scatter_oracle_is_the_pseudocode(value_cases_ts):
    n = Counter()
    for c in value_cases_ts:
        p, u, w = _ts_args(_feeds(c))
        a = c.attributes
        mode, axis = a.get("mode", "linear"), a.get("axis", -2)
        want = ts_loop(p, u, w, mode, axis)
        got = ref.tensor_scatter(p, u, w, mode=mode, axis=axis)
        assert _same(got, want), c.id
        assert _same(c.datasets[0].outputs["present_cache"], want), c.id
        n[mode] += 1
        if mode == "circular" and w is not None and u.size and u.shape[axis % u.ndim] >= 2:
            n["wraps"] += any(int(x) % p.shape[axis % p.ndim] + u.shape[axis % u.ndim] > p.shape[axis % p.ndim]
                              for x in w)
    assert n["linear"] >= 120 and n["circular"] >= 40 and n["wraps"] >= 20, n


def test_tensor_scatter_node_tests():
    tests = single_node_tests(("TensorScatter",), ("tensorscatter",))
    assert len(tests) >= 3
    for t in tests:
        node = t.model.graph.node[0]
        attrs = {k: (v.decode() if isinstance(v, bytes) else v) for k, v in _node_attrs(node).items()}
        names = [i.name for i in t.model.graph.input]
        for ins, outs in t.data_sets:
            byname = dict(zip(names, ins))
            args = [byname.get(n) if n else None for n in list(node.input) + [""] * (3 - len(node.input))]
            got = ref.tensor_scatter(*args, **attrs)
            assert _same(got, outs[0]), t.name


def ts_kernel(flaw=None):
    """A vectorised kernel (fancy indexing on the sequence axis); ``circular-ignored`` writes
    linearly and drops what falls past the end, ``indices-ignored`` writes at 0."""

    def kernel(inputs, attrs, outputs, opset):
        past, upd = inputs["past_cache"], inputs["update"]
        w = inputs.get("write_indices")
        mode, axis = attrs.get("mode", b"linear"), attrs.get("axis", -2)
        mode = mode.decode() if isinstance(mode, bytes) else mode
        ax = axis % past.ndim
        m, s = past.shape[ax], upd.shape[ax]
        if ax == 0 or s > m or any(past.shape[i] != upd.shape[i] for i in range(past.ndim) if i != ax):
            raise ValueError("invalid")
        w = np.zeros(past.shape[0], np.int64) if w is None or flaw == "indices-ignored" else np.asarray(w, np.int64)
        if mode == "linear" and past.shape[0] and s and (w + s).max() > m:
            raise ValueError("past the end")
        out = past.copy()
        for b in range(past.shape[0]):
            pos = w[b] + np.arange(s)
            keep = np.ones(s, bool)
            if mode == "circular" and flaw != "circular-ignored":
                pos = pos % m
            else:
                keep = pos < m
            ob = np.moveaxis(out[b], ax - 1, 0)
            ub = np.moveaxis(upd[b], ax - 1, 0)
            ob[pos[keep]] = ub[keep]
        return {"present_cache": out}

    return kernel


def test_tensor_scatter_kernels(suite_ts, value_cases_ts):
    be = lambda f: KernelBackend({"TensorScatter": ts_kernel(f)}, name=str(f), check=False)  # noqa: E731
    res = run_cases(suite_ts, be(None))
    bad = [(c.id, r.outcome, r.message[:150]) for c, r in zip(suite_ts, res) if r.outcome != "pass"]
    assert not bad, bad[:5]
    wraps = [c for c in value_cases_ts if c.attributes.get("mode") == "circular" and _has(c, "write_indices")]
    n = Counter(r.outcome for r in run_cases(wraps, be("circular-ignored")))
    assert n["fail"] >= 20, n
    given = [c for c in value_cases_ts if _has(c, "write_indices") and c.tags["shape"] != "zero-update"]
    n = Counter(r.outcome for r in run_cases(given, be("indices-ignored")))
    assert n["fail"] >= 60, n


def test_tensor_scatter_onnx_reference(suite_ts):
    res = run_cases(suite_ts, resolve_backend("onnx-reference"))
    why = Counter()
    for c, r in zip(suite_ts, res):
        if r.outcome == "pass":
            continue
        # onnx.reference does not check the linear bound (numpy raises only past the end of the
        # array) nor axis 0; the invalid models it accepts
        assert c.expect_error, (c.id, r.outcome, r.message[:200])
        why[c.tags["error"]] += 1
    assert set(why) <= {"axis=0", "linear-past-the-end"}, why
