"""Tests of the transformer entries RotaryEmbedding-23 and SwiGLU-28
(``conformance/ops/transformer.py``; oracles and kernels in ``conformance/reference/transformer.py``).

* the oracle against explicit loops written independently here (per batch, head, position and
  pair, from the operator text's words) on every generated value case, and against onnx's node
  tests (the spec's examples);
* agreement with ``onnx.reference`` on every case (none disagrees);
* kernels through ``KernelBackend``: legitimate ones (float32 arithmetic, a fused
  multiply-add, arithmetic in T itself, a libm a few ulp off) pass every case; the
  deliberately wrong ones fail cases the right kernel passes: rotary interleaving confused,
  a partial rotary_embedding_dim rotating halves of the whole head, the tail past
  rotary_embedding_dim not passed through (onnxruntime's odd-head behaviour), position_ids
  ignored, the sine's sign flipped; SwiGLU with A and B swapped, alpha ignored;
* error cases rejected; coverage of every type.
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
from conformance.ops import transformer as ops_tr
from conformance.reference import transformer as ref
from conformance.runner import run_cases
from oracle_checks import single_node_tests, sort_findings  # tests/oracle_checks.py

pytestmark = pytest.mark.filterwarnings("ignore::RuntimeWarning")
OPS = ["RotaryEmbedding", "SwiGLU"]
NP_T = {"float16": np.float16, "bfloat16": ml_dtypes.bfloat16, "float": np.float32, "double": np.float64}


def _feeds(case):
    ds = case.datasets[0].inputs
    return {i.name: (ds[i.name] if i.name in ds else i.value) if i.present else None for i in case.inputs}


def _f64(v):
    return None if v is None else np.asarray(v).astype(np.float64)


# ============================================================================ independent loops
def rope_loop(x, cos, sin, pos, attrs):
    """RotaryEmbedding from the text's words, element by element: head ``h`` of token ``(b, s)``
    has ``head_size`` elements; the first ``r`` are rotated in pairs (``(2i, 2i+1)``
    interleaved, ``(i, i + r/2)`` otherwise) by the angle whose cos/sin are row ``pos[b, s]``
    of the 2-D caches (or row ``(b, s)`` of the 3-D ones), element ``i`` of the row."""
    x = np.asarray(x, dtype=np.float64)
    y = x.copy()
    four = x.ndim == 4
    if four:
        nb, nh, ns, d = x.shape
    else:
        nb, ns, w = x.shape
        nh = attrs["num_heads"]
        d = w // nh
    r = attrs.get("rotary_embedding_dim", 0) or d
    for b in range(nb):
        for s in range(ns):
            row_c = cos[int(pos[b][s])] if pos is not None else cos[b][s]
            row_s = sin[int(pos[b][s])] if pos is not None else sin[b][s]
            for h in range(nh):
                def at(j):
                    return (b, h, s, j) if four else (b, s, h * d + j)

                for i in range(r // 2):
                    j1, j2 = (2 * i, 2 * i + 1) if attrs.get("interleaved", 0) else (i, i + r // 2)
                    a, c = x[at(j1)], x[at(j2)]
                    y[at(j1)] = row_c[i] * a - row_s[i] * c
                    y[at(j2)] = row_s[i] * a + row_c[i] * c
    return y


def swiglu_loop(a, b, alpha):
    out = np.empty(np.shape(a))
    for idx in np.ndindex(np.shape(a)):
        av, bv = float(a[idx]), float(b[idx])
        z = float(np.float32(alpha)) * av
        sig = 0.0 if -z > 700 else 1.0 / (1.0 + math.exp(-z))  # NaN stays NaN
        out[idx] = av * sig * bv
    return out


def _rope_args(case):
    f = _feeds(case)
    return _f64(f["X"]), _f64(f["cos_cache"]), _f64(f["sin_cache"]), f.get("position_ids")


def test_rope_oracle_is_the_loop_on_every_value_case(value_cases):
    n = 0
    for c in value_cases:
        if c.op != "RotaryEmbedding":
            continue
        x, co, si, pos = _rope_args(c)
        mine = rope_loop(x, co, si, pos, c.attributes)
        got = ref.rotary_embedding(x, co, si, pos, **{k: c.attributes.get(k, 0) for k in
                                                      ("interleaved", "rotary_embedding_dim", "num_heads")})
        assert got.shape == mine.shape == x.shape, c.id
        assert np.allclose(got, mine, rtol=1e-13, atol=1e-300, equal_nan=True), c.id
        want = c.datasets[0].outputs["Y"].astype(np.float64)
        fi = ml_dtypes.finfo(NP_T[c.tags["dtype"]])
        with np.errstate(all="ignore"):
            ok = (np.abs(want - mine) <= float(fi.eps) * np.abs(mine) + float(fi.smallest_subnormal)) | \
                 (np.isnan(want) & np.isnan(mine)) | (want == mine)
        assert ok.all(), c.id
        n += 1
    assert n >= 100


def test_swiglu_oracle_is_the_loop_on_every_value_case(value_cases):
    n = 0
    for c in value_cases:
        if c.op != "SwiGLU":
            continue
        f = _feeds(c)
        a, b = _f64(f["A"]), _f64(f["B"])
        alpha = c.attributes.get("alpha", 1.0)
        mine = swiglu_loop(a, b, alpha)
        got = ref.swiglu(a, b, alpha=alpha)
        assert np.allclose(got, mine, rtol=1e-14, atol=0, equal_nan=True), c.id
        n += 1
    assert n >= 50


def test_oracle_reproduces_the_node_tests():
    tests = single_node_tests(("RotaryEmbedding", "SwiGLU"), ("rotaryembedding", "swiglu"))
    ops = Counter(t.model.graph.node[0].op_type for t in tests)
    assert ops["RotaryEmbedding"] >= 6 and ops["SwiGLU"] >= 1, ops
    for t in tests:
        node = t.model.graph.node[0]
        attrs = {a.name: onnx.helper.get_attribute_value(a) for a in node.attribute}
        names = [i.name for i in t.model.graph.input]
        for ins, outs in t.data_sets:
            byname = dict(zip(names, ins))
            feeds = [byname.get(n) if n else None for n in node.input]
            if node.op_type == "RotaryEmbedding":
                feeds += [None] * (4 - len(feeds))
                got = ref.rotary_embedding(*[_f64(v) if i < 3 else v for i, v in enumerate(feeds)],
                                           **{k: attrs.get(k, 0) for k in
                                              ("interleaved", "rotary_embedding_dim", "num_heads")})
            else:
                got = ref.swiglu(_f64(feeds[0]), _f64(feeds[1]), alpha=attrs.get("alpha", 1.0))
            want = np.asarray(outs[0], dtype=np.float64)
            tol = 1e-2 if outs[0].dtype == np.float16 else 1e-5
            assert np.allclose(got, want, rtol=tol, atol=tol), t.name


# ============================================================================ kernels
def _t_of(arr) -> str:
    return {np.dtype(np.float16): "float16", np.dtype(ml_dtypes.bfloat16): "bfloat16",
            np.dtype(np.float32): "float", np.dtype(np.float64): "double"}[np.asarray(arr).dtype]


def rope_kernel(flaw=None, mode="float32", fma=False):
    """A RotaryEmbedding kernel: ``mode`` ``float32`` (float32 arithmetic for every type but
    double), ``native`` (arithmetic in T itself); ``flaw`` injects one error."""

    def kernel(inputs, attrs, outputs, opset):
        x = inputs["X"]
        t = _t_of(x)
        compute = np.float64 if t == "double" else (NP_T[t] if mode == "native" else np.float32)
        a = {k: attrs.get(k, 0) for k in ("interleaved", "rotary_embedding_dim", "num_heads")}
        co, si = inputs["cos_cache"], inputs["sin_cache"]
        pos = inputs.get("position_ids")
        if flaw == "interleave-confused":
            a["interleaved"] = 1 - int(a["interleaved"])
        if flaw == "sin-flipped":
            si = -si
        if flaw == "position_ids-ignored" and pos is not None:
            s = pos.shape[1]
            co = np.broadcast_to(co[:s][None], (pos.shape[0], s, co.shape[1]))
            si = np.broadcast_to(si[:s][None], (pos.shape[0], s, si.shape[1]))
            pos = None
        if flaw == "partial-whole-head" and a["rotary_embedding_dim"] and not a["interleaved"]:
            # pairs (i, i + head/2) over the whole head's halves, the first r/2 of each half rotated
            x64 = np.asarray(x, dtype=np.float64)
            x4, c, s_, _, _, r = ref.rotary_parts(x64, co.astype(np.float64), si.astype(np.float64), pos, **a)
            d = x4.shape[3]
            x1, x2 = x4[..., : r // 2], x4[..., d // 2: d // 2 + r // 2]
            y = x4.copy()
            y[..., : r // 2] = c * x1 - s_ * x2
            y[..., d // 2: d // 2 + r // 2] = s_ * x1 + c * x2
            y = y.reshape(x.shape) if x.ndim == 3 else np.transpose(y, (0, 2, 1, 3))
            return {"Y": y.astype(x.dtype)}
        y = ref.rotary_kernel(x.astype(np.float64), co.astype(np.float64), si.astype(np.float64), pos,
                              compute=compute, fma=fma, **a)
        if flaw == "tail-zeroed" and a["rotary_embedding_dim"]:  # the part past r not copied through
            y4 = np.asarray(y).copy()
            v = y4 if x.ndim == 4 else y4.reshape(x.shape[0], x.shape[1], a["num_heads"], -1)
            v[..., a["rotary_embedding_dim"]:] = 0
            y = v.reshape(x.shape)
        return {"Y": np.asarray(y).astype(x.dtype)}

    return kernel


def swiglu_kernel(flaw=None, mode="float32", libm_ulps=0.0):
    """A SwiGLU kernel: ``float32`` (float32 arithmetic for 16-bit types, T otherwise) or
    ``native`` (T itself, the naive ``a / (1 + exp(-alpha a)) * b``); ``libm_ulps``: exp
    perturbed by that many ulps of the compute type."""

    def kernel(inputs, attrs, outputs, opset):
        a, b = inputs["A"], inputs["B"]
        t = _t_of(a)
        compute = NP_T[t] if (mode == "native" or t in ("float", "double")) else np.float32
        if flaw == "swapped":
            a, b = b, a
        alpha = compute(np.float32(attrs.get("alpha", 1.0)))
        if flaw == "alpha-ignored":
            alpha = compute(1.0)
        ac, bc = a.astype(compute), b.astype(compute)
        with np.errstate(all="ignore"):
            e = np.exp(-(alpha * ac)).astype(compute)
            if libm_ulps:
                e = (e.astype(np.float64) * (1 + libm_ulps * float(ml_dtypes.finfo(compute).eps))).astype(compute)
            if mode == "native":
                y = ac / (compute(1) + e) * bc
            else:
                y = ac * (compute(1) / (compute(1) + e)) * bc
        return {"Y": np.asarray(y).astype(a.dtype)}

    return kernel


def _run(cases, kernels, name, check=True):
    return run_cases(cases, KernelBackend(kernels, name=name, check=check))


LEGIT = {
    "float32": {"RotaryEmbedding": rope_kernel(), "SwiGLU": swiglu_kernel()},
    "fma": {"RotaryEmbedding": rope_kernel(fma=True), "SwiGLU": swiglu_kernel(libm_ulps=3.0)},
    "native-T": {"RotaryEmbedding": rope_kernel(mode="native"), "SwiGLU": swiglu_kernel(mode="native")},
    "native-fma-libm": {"RotaryEmbedding": rope_kernel(mode="native", fma=True),
                        "SwiGLU": swiglu_kernel(mode="native", libm_ulps=-2.0)},
}


@pytest.mark.parametrize("name", sorted(LEGIT))
def test_legitimate_kernels_pass_everything(name, value_cases):
    results = _run(value_cases, LEGIT[name], name)
    bad = [(c.id, r.outcome, r.message[:200]) for c, r in zip(value_cases, results) if r.outcome != "pass"]
    assert not bad, (len(bad), bad[:5])


def _partial(c):
    return bool(c.attributes.get("rotary_embedding_dim")) and not c.attributes.get("interleaved") and \
        c.attributes["rotary_embedding_dim"] < (c.inputs[0].shape[-1] if len(c.inputs[0].shape) == 4 else
                                                c.inputs[0].shape[-1] // c.attributes["num_heads"])


def _partial_any(c):
    """rotary_embedding_dim smaller than the head (interleaved or not)."""
    r = c.attributes.get("rotary_embedding_dim", 0)
    shp = c.inputs[0].shape
    head = shp[-1] if len(shp) == 4 else shp[-1] // c.attributes["num_heads"]
    return bool(r) and r < head


def _nonempty(c):
    return all(d > 0 for d in c.inputs[0].shape)


WRONG = {
    # flaw: (operator, filter on value cases, kernel, at least this many fails)
    "interleave-confused": ("RotaryEmbedding", _nonempty, rope_kernel("interleave-confused"), 80),
    "sin-flipped": ("RotaryEmbedding", _nonempty, rope_kernel("sin-flipped"), 80),
    "position_ids-ignored": ("RotaryEmbedding", lambda c: _nonempty(c) and c.tags.get("optional_inputs") ==
                             "position_ids", rope_kernel("position_ids-ignored"), 40),
    "partial-whole-head": ("RotaryEmbedding", lambda c: _nonempty(c) and _partial(c),
                           rope_kernel("partial-whole-head"), 10),
    "tail-zeroed": ("RotaryEmbedding", lambda c: _nonempty(c) and _partial_any(c), rope_kernel("tail-zeroed"), 20),
    "swapped": ("SwiGLU", lambda c: _nonempty(c) and c.tags["numerics"] != "special", swiglu_kernel("swapped"), 30),
    "alpha-ignored": ("SwiGLU", lambda c: _nonempty(c) and c.attributes.get("alpha", 1.0) != 1.0
                      and c.tags["numerics"] != "special", swiglu_kernel("alpha-ignored"), 20),
}


@pytest.mark.parametrize("flaw", sorted(WRONG))
def test_wrong_kernels_are_caught(flaw, value_cases):
    op, keep, kern, least = WRONG[flaw]
    cases = [c for c in value_cases if c.op == op and keep(c)]
    assert len(cases) >= least, len(cases)
    results = _run(cases, {op: kern}, flaw, check=False)
    n = Counter(r.outcome for r in results)
    assert n["fail"] >= least, n
    by_type = Counter(c.tags["dtype"] for c, r in zip(cases, results) if r.outcome == "fail")
    types = {"float", "float16", "bfloat16"} | ({"double"} if op == "SwiGLU" else set())
    assert types <= set(by_type), by_type


def test_error_cases_are_rejected(suite):
    cases = [c for c in suite if c.expect_error]
    assert {c.tags["error"] for c in cases} >= {"cache-dim", "cache-dim-partial", "3d-no-num_heads",
                                                "3d-hidden-not-multiple", "4d-odd-head", "broadcast",
                                                "shape-mismatch"}
    results = _run(cases, LEGIT["float32"], "legit")
    assert all(r.outcome == "pass" for r in results), [(c.id, r.message[:100]) for c, r in zip(cases, results)
                                                        if r.outcome != "pass"]


def test_agreement_with_onnx_reference(suite):
    """onnx.reference (1.23) implements the text's algorithm and the function body: every case
    passes, in every type (its float16 arithmetic is within the bound)."""
    results = run_cases(suite, resolve_backend("onnx-reference"))
    why, unexplained = sort_findings(suite, results, lambda c, r: None)
    assert not unexplained, (len(unexplained), unexplained[:5])
    ok = Counter((c.op, c.tags["dtype"]) for c, r in zip(suite, results) if r.outcome == "pass")
    assert all(ok[("RotaryEmbedding", t)] >= 30 for t in ("float16", "bfloat16", "float")), ok


def test_coverage_and_trap_patterns(suite, value_cases):
    cov = compute_coverage(suite)
    for op in OPS:
        for v, e in cov["ops"][op]["versions"].items():
            assert not e["missing"], (op, v, e["missing"][:3])
    rope = [c for c in value_cases if c.op == "RotaryEmbedding"]
    assert {c.tags["shape"] for c in rope} == {s.name for s in ops_tr.ROPE_SHAPES}
    seen = Counter((len(c.inputs[0].shape), bool(c.attributes.get("interleaved")), _partial(c) or bool(
        c.attributes.get("rotary_embedding_dim")), c.tags.get("optional_inputs") == "position_ids") for c in rope)
    assert len(seen) >= 12, seen
    # position_ids never 0..S-1 in batch 0
    for c in rope:
        p = _feeds(c).get("position_ids")
        if p is not None and p.size:
            assert list(p[0]) != list(range(p.shape[1])), c.id
    assert {c.tags["numerics"] for c in value_cases if c.op == "SwiGLU"} == set(ops_tr.SW_CLASSES)
    alphas = {None if a is None else round(float(a), 4) for a in
              (c.attributes.get("alpha") for c in value_cases if c.op == "SwiGLU")}
    assert alphas >= {None, 1.0, 1.702, 0.5, -1.25}, alphas


# ============================================================================ LinearAttention
LA_IN = ("query", "key", "value", "past_state", "decay", "beta")


def _la_attrs(a):
    return {k: (v.decode() if isinstance(v, bytes) else v) for k, v in a.items()
            if k in ("q_num_heads", "kv_num_heads", "update_rule", "scale", "chunk_size")}


def la_loop(q, k, v, past, decay, beta, attrs):
    """LinearAttention from the text's formulas, scalar loops: per batch and KV head the state
    S[dk][dv]; per token: S = exp(g) * S (gated; g per key row or per head), the delta rule
    S += beta k (v - S^T k)^T, else S += k v^T; each query head h of the group reading KV head
    h // (Hq / Hkv): o = scale * q^T S."""
    hq, hkv = attrs["q_num_heads"], attrs["kv_num_heads"]
    rule = attrs.get("update_rule", "gated_delta")
    nb, nt, wq = q.shape
    dk = wq // hq
    dv = v.shape[2] // hkv
    scale = float(np.float32(attrs.get("scale", 0.0))) or 1.0 / math.sqrt(dk)
    out = np.zeros((nb, nt, hq * dv))
    present = np.zeros((nb, hkv, dk, dv))
    for b in range(nb):
        for h in range(hkv):
            S = [[(past[b, h, i, j] if past is not None else 0.0) for j in range(dv)] for i in range(dk)]
            for t in range(nt):
                kk = [k[b, t, h * dk + i] for i in range(dk)]
                vv = [v[b, t, h * dv + j] for j in range(dv)]
                if rule in ("gated", "gated_delta"):
                    for i in range(dk):
                        g = decay[b, t, h * dk + i] if decay.shape[2] == hkv * dk else decay[b, t, h]
                        S[i] = [math.exp(g) * s for s in S[i]]
                if rule in ("delta", "gated_delta"):
                    bt = beta[b, t, h] if beta.shape[2] == hkv else beta[b, t, 0]
                    pred = [sum(S[i][j] * kk[i] for i in range(dk)) for j in range(dv)]
                    vv = [bt * (vv[j] - pred[j]) for j in range(dv)]
                for i in range(dk):
                    for j in range(dv):
                        S[i][j] += kk[i] * vv[j]
                grp = hq // hkv
                for hh in range(h * grp, (h + 1) * grp):
                    for j in range(dv):
                        out[b, t, hh * dv + j] = scale * sum(q[b, t, hh * dk + i] * S[i][j] for i in range(dk))
            present[b, h] = np.array(S)
    return out, present


def _la_args(case):
    f = _feeds(case)
    return [_f64(f.get(n)) for n in LA_IN]


def test_linear_attention_oracle_is_the_loop_on_every_value_case(value_cases_la):
    n = 0
    for c in value_cases_la:
        args = _la_args(c)
        a = _la_attrs(c.attributes)
        mo, ms = la_loop(*args, a)
        go, gs = ref.linear_attention(*args, **a)
        assert np.allclose(go, mo, rtol=1e-12, atol=1e-12) and np.allclose(gs, ms, rtol=1e-12, atol=1e-12), c.id
        n += 1
    assert n >= 100


@pytest.fixture(scope="module")
def suite_la():
    from conformance import registry

    return registry.generate(["LinearAttention"], seed=0)


@pytest.fixture(scope="module")
def value_cases_la(suite_la):
    return [c for c in suite_la if c.expect_error is None]


def test_linear_attention_node_tests():
    tests = single_node_tests(("LinearAttention",), ("linear_attention",))
    assert len(tests) >= 10
    for t in tests:
        node = t.model.graph.node[0]
        attrs = _la_attrs({a.name: onnx.helper.get_attribute_value(a) for a in node.attribute})
        names = [i.name for i in t.model.graph.input]
        for ins, outs in t.data_sets:
            byname = dict(zip(names, ins))
            args = [_f64(byname.get(n)) if n else None for n in list(node.input) + [""] * (6 - len(node.input))]
            got = ref.linear_attention(*args, **attrs)
            for g, w in zip(got, outs):
                tol = 2e-2 if w.dtype == np.float16 else 1e-4
                assert np.allclose(g, w.astype(np.float64), rtol=tol, atol=tol), t.name


def la_kernel(flaw=None, state_in_s=False):
    """A LinearAttention kernel: the recurrence in float32 (:func:`ref.linear_attention` with
    ``dtype=float32``), or token by token with the state rounded to S (``state_in_s``);
    ``flaw`` injects one error."""

    def kernel(inputs, attrs, outputs, opset):
        a = _la_attrs(attrs)
        args = [inputs.get(n) for n in LA_IN]
        t = args[0].dtype
        s_t = args[3].dtype if args[3] is not None else t
        args = [None if x is None else x.astype(np.float32) for x in args]
        if flaw == "gqa-modulo" and a["q_num_heads"] != a["kv_num_heads"]:
            # query head h reads KV head h % Hkv instead of h // (Hq / Hkv)
            hq, hkv = a["q_num_heads"], a["kv_num_heads"]
            grp = hq // hkv
            q = args[0].reshape(args[0].shape[0], args[0].shape[1], hq, -1)
            perm = [(h % hkv) * grp + (h // hkv) for h in range(hq)]
            inv = np.argsort(perm)
            args[0] = q[:, :, inv].reshape(args[0].shape)
        if flaw == "delta-as-linear":
            a["update_rule"] = {"delta": "linear", "gated_delta": "gated"}.get(a.get("update_rule", "gated_delta"))
            args[5] = None
        if flaw == "beta-ignored" and args[5] is not None:
            args[5] = np.ones_like(args[5])
        if flaw == "scale-ignored":
            a["scale"] = 0.0
        if flaw == "decay-sign" and args[4] is not None:
            args[4] = -args[4]
        if state_in_s:
            o_steps, st = [], args[3]
            for i in range(args[0].shape[1]):
                sl = [None if x is None else x[:, i:i + 1] for x in args[:3]] + [st] + \
                     [None if x is None else x[:, i:i + 1] for x in args[4:]]
                o, st = ref.linear_attention(*sl, dtype=np.float32, **a)
                st = st.astype(s_t).astype(np.float32)
                o_steps.append(o.astype(np.float32))
            o = np.concatenate(o_steps, axis=1) if o_steps else np.zeros(
                (args[0].shape[0], 0, a["q_num_heads"] * (args[2].shape[2] // a["kv_num_heads"])), np.float32)
            if st is None:
                st = ref.linear_attention(*args, dtype=np.float32, **a)[1]
        else:
            o, st = ref.linear_attention(*args, dtype=np.float32, **a)
        res = {"output": o.astype(t), "present_state": st.astype(s_t)}
        return {n: res[n] for n in outputs}

    return kernel


@pytest.mark.parametrize("state_in_s", [False, True])
def test_linear_attention_legitimate_kernels(state_in_s, value_cases_la):
    results = _run(value_cases_la, {"LinearAttention": la_kernel(state_in_s=state_in_s)}, "legit")
    bad = [(c.id, r.outcome, r.message[:200]) for c, r in zip(value_cases_la, results) if r.outcome != "pass"]
    assert not bad, (len(bad), bad[:5])


def _rule(c):
    return c.attributes.get("update_rule", "gated_delta")


def _ne(c):
    return all(d > 0 for d in c.inputs[0].shape)


LA_WRONG = {
    "gqa-modulo": (lambda c: _ne(c) and c.attributes["q_num_heads"] > c.attributes["kv_num_heads"] > 1, 10),
    "delta-as-linear": (lambda c: _ne(c) and _rule(c) in ("delta", "gated_delta"), 40),
    "beta-ignored": (lambda c: _ne(c) and _rule(c) in ("delta", "gated_delta"), 40),
    "scale-ignored": (lambda c: _ne(c) and c.attributes.get("scale", 0.0) not in (0.0,), 10),
    "decay-sign": (lambda c: _ne(c) and _rule(c) in ("gated", "gated_delta"), 40),
}


@pytest.mark.parametrize("flaw", sorted(LA_WRONG))
def test_linear_attention_wrong_kernels_are_caught(flaw, value_cases_la):
    keep, least = LA_WRONG[flaw]
    cases = [c for c in value_cases_la if keep(c)]
    assert len(cases) >= least, len(cases)
    results = _run(cases, {"LinearAttention": la_kernel(flaw)}, flaw, check=False)
    n = Counter(r.outcome for r in results)
    assert n["fail"] >= least, n
    by_type = {c.tags["dtype"] for c, r in zip(cases, results) if r.outcome == "fail"}
    assert {"float", "float16", "bfloat16"} <= by_type, by_type


def test_linear_attention_errors_and_reference(suite_la):
    errs = [c for c in suite_la if c.expect_error]
    assert {c.tags["error"] for c in errs} >= {"heads-not-multiple", "unknown-update_rule", "gated-no-decay",
                                               "delta-no-beta", "past_state-shape"}
    results = _run(errs, {"LinearAttention": la_kernel()}, "legit")
    assert all(r.outcome == "pass" for r in results), [(c.id, r.message[:100]) for c, r in zip(errs, results)
                                                        if r.outcome != "pass"]
    # onnx.reference (float32 internally) agrees on every value case and rejects the invalid models
    # (the unknown update_rule is 'unsupported' there: it raises ValueError at run)
    res = run_cases(suite_la, resolve_backend("onnx-reference"))
    bad = [(c.id, r.outcome) for c, r in zip(suite_la, res) if r.outcome != "pass"
           and not (c.expect_error and c.tags["error"] == "unknown-update_rule")]
    assert not bad, bad[:5]


def test_linear_attention_coverage(suite_la, value_cases_la):
    cov = compute_coverage(suite_la)
    for v, e in cov["ops"]["LinearAttention"]["versions"].items():
        assert not e["missing"], (v, e["missing"][:3])
    assert {_rule(c) for c in value_cases_la} == set(ref.UPDATE_RULES)
    assert any("update_rule" not in c.attributes for c in value_cases_la)  # the default, gated_delta
    opts = {c.tags.get("optional_inputs") for c in value_cases_la}
    assert {"none", "past_state", "decay", "beta", "decay,beta", "past_state,decay,beta"} <= opts, opts
    # S differs from T only with past_state (nothing else binds it)
    for c in value_cases_la:
        if "past_state" not in c.tags.get("optional_inputs", ""):
            assert c.outputs[1].elem_type == c.inputs[0].elem_type, c.id
