"""Tests of the recurrent entries LSTM, GRU and RNN (``conformance/ops/recurrent.py``; oracle,
running error bound and legitimate kernels in ``conformance/reference/recurrent.py``).

* the oracle against an explicit per-time-step loop written independently here (the operator
  text's equations, gate by gate, batch by batch) on every generated value case, and against
  onnx's node tests (the spec's examples);
* agreement with ``onnx.reference`` on every case, each disagreement explained;
* kernels through ``KernelBackend``: legitimate ones (float32 state, the state rounded to T at
  every step, fused gate GEMMs, a libm 3 ulp off; float64 for double) pass every case; the
  deliberately wrong ones fail cases the right kernel passes: LSTM gates read i, f, c, o; GRU
  ignoring linear_before_reset; the reverse direction reversing the padded sequence; Y_h taken
  at the last padded step; clip ignored; peepholes ignored; GRU's z and r gates swapped;
* the clip patterns keep LSTM's cell state inside the threshold (where the readings agree);
* error cases rejected; coverage of every version and type.
"""

from __future__ import annotations

from collections import Counter

import ml_dtypes
import numpy as np
import onnx
import pytest

from conformance.backends import resolve_backend
from conformance.backends.kernel import KernelBackend
from conformance.coverage import compute_coverage
from conformance.ops import recurrent as ops_rec
from conformance.reference import recurrent as ref
from conformance.runner import run_cases
from oracle_checks import single_node_tests, sort_findings  # tests/oracle_checks.py

pytestmark = pytest.mark.filterwarnings("ignore::RuntimeWarning")
OPS = ["LSTM", "GRU", "RNN"]
FORMALS = {"LSTM": ("X", "W", "R", "B", "sequence_lens", "initial_h", "initial_c", "P"),
           "GRU": ("X", "W", "R", "B", "sequence_lens", "initial_h"),
           "RNN": ("X", "W", "R", "B", "sequence_lens", "initial_h")}
OUTS = {"LSTM": ("Y", "Y_h", "Y_c"), "GRU": ("Y", "Y_h"), "RNN": ("Y", "Y_h")}
NP_T = {"float16": np.float16, "bfloat16": ml_dtypes.bfloat16, "float": np.float32, "double": np.float64}


def _feeds(case):
    ds = case.datasets[0].inputs
    return {i.name: (ds[i.name] if i.name in ds else i.value) if i.present else None for i in case.inputs}


def _args(op, feeds):
    """The 8 recurrence arguments (float64; sequence_lens ints) from formal-name feeds."""
    out = []
    for n in FORMALS["LSTM"]:
        v = feeds.get(n) if n in FORMALS[op] else None
        out.append(None if v is None else (np.asarray(v).astype(np.int64) if n == "sequence_lens"
                                           else np.asarray(v).astype(np.float64)))
    return out


# ============================================================================ independent loop
def _sig(x):
    return 1.0 / (1.0 + np.exp(-x))


_F = {"Relu": lambda x, a, b: np.maximum(x, 0), "Tanh": lambda x, a, b: np.tanh(x), "Sigmoid": lambda x, a, b: _sig(x),
      "Affine": lambda x, a, b: a * x + b, "LeakyRelu": lambda x, a, b: np.where(x >= 0, x, a * x),
      "ThresholdedRelu": lambda x, a, b: np.where(x >= a, x, 0.0), "ScaledTanh": lambda x, a, b: a * np.tanh(b * x),
      "HardSigmoid": lambda x, a, b: np.clip(a * x + b, 0, 1),
      "Elu": lambda x, a, b: np.where(x >= 0, x, a * (np.exp(x) - 1)),
      "Softsign": lambda x, a, b: x / (1 + np.abs(x)), "Softplus": lambda x, a, b: np.log(1 + np.exp(x))}
_ALPHA_DEFAULT = {"LeakyRelu": (float(np.float32(0.01)), None), "ThresholdedRelu": (1.0, None),
                  "HardSigmoid": (float(np.float32(0.2)), 0.5), "Elu": (1.0, None)}


def _functions(op, attrs, nd):
    """Per direction, the activation callables; the suite's lists put the activations that take
    alpha (beta) first, so alpha[k] (beta[k]) belongs to the k-th activation."""
    per = {"LSTM": 3, "GRU": 2, "RNN": 1}[op]
    names = attrs.get("activations") or {"LSTM": ["Sigmoid", "Tanh", "Tanh"], "GRU": ["Sigmoid", "Tanh"],
                                         "RNN": ["Tanh"]}[op] * nd
    names = names[: per * nd]
    al = [float(np.float32(v)) for v in attrs.get("activation_alpha") or []]  # float attributes are float32
    be = [float(np.float32(v)) for v in attrs.get("activation_beta") or []]
    fs = []
    for k, n in enumerate(names):
        a = al[k] if k < len(al) else _ALPHA_DEFAULT.get(n, (None, None))[0]
        b = be[k] if k < len(be) else _ALPHA_DEFAULT.get(n, (None, None))[1]
        fs.append(lambda x, n=n, a=a, b=b: _F[n](x, a, b))
    return [fs[d * per:(d + 1) * per] for d in range(nd)]


def loop(op, x, w, r, b, lens, h0, c0, p, attrs):
    """The operator text's equations, one batch row and one time step at a time, float64."""
    layout = attrs.get("layout", 0)
    if layout:
        x = x.transpose(1, 0, 2)
        h0 = None if h0 is None else h0.transpose(1, 0, 2)
        c0 = None if c0 is None else c0.transpose(1, 0, 2)
    direction = attrs.get("direction", "forward")
    nd = 2 if direction == "bidirectional" else 1
    S, N, _ = x.shape
    H = attrs["hidden_size"]
    clip = None if attrs.get("clip") is None else float(np.float32(attrs["clip"]))
    cl = (lambda v: np.clip(v, -clip, clip)) if clip is not None else (lambda v: v)
    acts = _functions(op, attrs, nd)
    Y = np.zeros((S, nd, N, H))
    Yh = np.zeros((nd, N, H))
    Yc = np.zeros((nd, N, H))
    for d in range(nd):
        rev = direction == "reverse" or d == 1
        g = {"LSTM": "iofc", "GRU": "zrh", "RNN": "i"}[op]
        Wk = {k: w[d][j * H:(j + 1) * H] for j, k in enumerate(g)}
        Rk = {k: r[d][j * H:(j + 1) * H] for j, k in enumerate(g)}
        Wb = {k: (b[d][j * H:(j + 1) * H] if b is not None else np.zeros(H)) for j, k in enumerate(g)}
        Rb = {k: (b[d][(len(g) + j) * H:(len(g) + j + 1) * H] if b is not None else np.zeros(H))
              for j, k in enumerate(g)}
        for n in range(N):
            L = S if lens is None else int(lens[n])
            Ht = np.zeros(H) if h0 is None else h0[d, n].copy()
            Ct = np.zeros(H) if c0 is None else c0[d, n].copy()
            order = list(range(L))[::-1] if rev else list(range(L))
            for t in order:
                xt = x[t, n]
                if op == "RNN":
                    (f,) = acts[d]
                    Ht = f(cl(xt @ Wk["i"].T + Ht @ Rk["i"].T + Wb["i"] + Rb["i"]))
                elif op == "GRU":
                    f, gg = acts[d]
                    zt = f(cl(xt @ Wk["z"].T + Ht @ Rk["z"].T + Wb["z"] + Rb["z"]))
                    rt = f(cl(xt @ Wk["r"].T + Ht @ Rk["r"].T + Wb["r"] + Rb["r"]))
                    if attrs.get("linear_before_reset", 0):
                        ht = gg(cl(xt @ Wk["h"].T + rt * (Ht @ Rk["h"].T + Rb["h"]) + Wb["h"]))
                    else:
                        ht = gg(cl(xt @ Wk["h"].T + (rt * Ht) @ Rk["h"].T + Rb["h"] + Wb["h"]))
                    Ht = (1 - zt) * ht + zt * Ht
                else:
                    f, gg, hh = acts[d]
                    Pi, Po, Pf = ((p[d][:H], p[d][H:2 * H], p[d][2 * H:]) if p is not None else (0, 0, 0))
                    it = f(cl(xt @ Wk["i"].T + Ht @ Rk["i"].T + Pi * Ct + Wb["i"] + Rb["i"]))
                    if attrs.get("input_forget", 0):
                        ft = 1 - it
                    else:
                        ft = f(cl(xt @ Wk["f"].T + Ht @ Rk["f"].T + Pf * Ct + Wb["f"] + Rb["f"]))
                    ct = gg(cl(xt @ Wk["c"].T + Ht @ Rk["c"].T + Wb["c"] + Rb["c"]))
                    Ct = ft * Ct + it * ct
                    ot = f(cl(xt @ Wk["o"].T + Ht @ Rk["o"].T + Po * Ct + Wb["o"] + Rb["o"]))
                    Ht = ot * hh(Ct)
                Y[t, d, n] = Ht
            Yh[d, n] = Ht
            Yc[d, n] = Ct
    if layout:
        return Y.transpose(2, 0, 1, 3), Yh.transpose(1, 0, 2), Yc.transpose(1, 0, 2)
    return Y, Yh, Yc


def test_oracle_is_the_loop_on_every_value_case(value_cases):
    n = 0
    for c in value_cases:
        f = _feeds(c)
        args = _args(c.op, f)
        attrs = {k: v for k, v in c.attributes.items()}
        if c.op == "GRU" and attrs.get("direction") == "foward":
            attrs["direction"] = "forward"
        mine = dict(zip(("Y", "Y_h", "Y_c"), loop(c.op, *args, attrs)))
        got = ref.oracle(c.op, args, c.attributes, OUTS[c.op])
        for o in c.outputs:
            if not o.present:
                continue
            assert got[o.name].shape == mine[o.name].shape, c.id
            assert np.allclose(got[o.name], mine[o.name], rtol=1e-12, atol=1e-12), (c.id, o.name)
            # the stored expectation is the loop's value rounded to T (within an ulp of T: the
            # oracle and the loop may round a value near a tie of T differently; for double the
            # two float64 evaluations differ by their own rounding, 1e-12 of the largest value)
            want = c.datasets[0].outputs[o.name].astype(np.float64)
            fi = ml_dtypes.finfo(NP_T[c.tags["dtype"]])
            m = np.abs(mine[o.name])
            slack = float(fi.smallest_subnormal) + 1e-12 * (float(m.max()) if m.size else 0.0)
            assert np.all(np.abs(want - mine[o.name]) <= float(fi.eps) * m + slack), (c.id, o.name)
            n += 1
    assert n > 1500


def test_oracle_reproduces_the_node_tests():
    tests = single_node_tests(("LSTM", "GRU", "RNN"), ("lstm", "gru", "rnn"))
    assert len(tests) >= 10
    for t in tests:
        node = t.model.graph.node[0]
        attrs = {a.name: onnx.helper.get_attribute_value(a) for a in node.attribute}
        attrs = {k: (v.decode() if isinstance(v, bytes) else
                     [s.decode() if isinstance(s, bytes) else s for s in v] if isinstance(v, list) else v)
                 for k, v in attrs.items()}
        names = [i.name for i in t.model.graph.input]
        for ins, outs in t.data_sets:
            byname = dict(zip(names, ins))
            feeds = {f: byname.get(n) for f, n in zip(FORMALS[node.op_type], list(node.input) + [""] * 8) if n}
            args = _args(node.op_type, feeds)
            outs_named = [o for o in node.output if o]
            got = ref.oracle(node.op_type, args, attrs, OUTS[node.op_type])
            formal_out = [f for f, n in zip(OUTS[node.op_type], node.output) if n]
            for fo, want in zip(formal_out, outs):
                assert np.allclose(got[fo], np.asarray(want, dtype=np.float64), rtol=1e-4, atol=1e-5), (t.name, fo)
            assert len(outs_named) == len(outs)


# ============================================================================ kernels
def rec_kernel(op, flaw=None, **kw):
    """A numpy kernel of ``op`` (:func:`conformance.reference.recurrent.kernel`) for the case's
    type; ``flaw`` injects one error."""

    def kernel(inputs, attrs, outputs, opset):
        names = [n for n in FORMALS[op]]
        t = {np.dtype(np.float16): "float16", np.dtype(ml_dtypes.bfloat16): "bfloat16",
             np.dtype(np.float32): "float", np.dtype(np.float64): "double"}[inputs["X"].dtype]
        args = _args(op, {n: inputs.get(n) for n in names})
        attrs = {k: ([s.decode() if isinstance(s, bytes) else s for s in v] if isinstance(v, list) else v)
                 for k, v in attrs.items()}
        wanted = tuple(OUTS[op])
        opts = dict(kw)
        if opts.pop("round_to_T", False) and t in ("float16", "bfloat16"):
            opts["round_to"] = NP_T[t]
        if flaw == "gates-ifco" and op == "LSTM":  # reads W/R/B's blocks as i, f, c, o
            hs = attrs["hidden_size"]

            def perm(a, axis, k=1):
                blocks = np.split(a, 4 * k, axis=axis)
                out = []
                for j in range(k):
                    i_, o_, f_, c_ = blocks[4 * j:4 * j + 4]
                    out += [i_, c_, o_, f_]  # the block read as "o" is the text's f, etc.
                return np.concatenate(out, axis=axis)

            del hs
            args[1] = perm(args[1], 1)
            args[2] = perm(args[2], 1)
            if args[3] is not None:
                args[3] = perm(args[3], 1, 2)
        if flaw == "gates-rzh" and op == "GRU":  # reads W/R/B's z and r blocks swapped
            for j in (1, 2, 3):
                if args[j] is not None:
                    k = 2 if j == 3 else 1
                    blocks = np.split(args[j], 3 * k, axis=1)
                    out = []
                    for m in range(k):
                        z_, r_, h_ = blocks[3 * m:3 * m + 3]
                        out += [r_, z_, h_]
                    args[j] = np.concatenate(out, axis=1)
        if flaw == "lbr-ignored":
            attrs.pop("linear_before_reset", None)
        if flaw == "clip-ignored":
            attrs.pop("clip", None)
        if flaw == "peepholes-ignored":
            args[7] = None
        out = ref.kernel(op, args, attrs, wanted, t, **opts)
        if flaw in ("reverse-padded", "Y_h-last-padded") and args[4] is not None:
            out = _flawed_lengths(op, args, attrs, wanted, t, flaw, out)
        return {n: out[n] for n in outputs}

    return kernel


def _flawed_lengths(op, args, attrs, wanted, t, flaw, right):
    """``reverse-padded``: the reverse direction runs over the whole padded sequence (from S-1),
    then Y is masked past each length and Y_h is the state after t = 0; ``Y_h-last-padded``:
    Y_h / Y_c read from Y at the last padded step ``S - 1`` (zero for shorter batches)."""
    layout = attrs.get("layout", 0)
    nd = 2 if attrs.get("direction") == "bidirectional" else 1
    lens = args[4]
    out = dict(right)
    if flaw == "Y_h-last-padded":
        y = ref.kernel(op, args, attrs, ("Y",), t)["Y"]
        last = y[:, -1] if layout else y[-1]  # (N, D, H) or (D, N, H)
        out["Y_h"] = last
        return out
    if not (attrs.get("direction") in ("reverse", "bidirectional")):
        return out
    full = list(args)
    full[4] = None
    wrong = ref.kernel(op, full, attrs, wanted, t)
    d = nd - 1
    seq_axis, dir_axis, batch_axis = (1, 2, 0) if layout else (0, 1, 2)
    y = np.array(out["Y"], copy=True)
    wy = np.array(wrong["Y"], copy=True)
    S = y.shape[seq_axis]
    for n, L in enumerate(lens):
        for tt in range(S):
            idx = [slice(None)] * 4
            idx[seq_axis], idx[dir_axis], idx[batch_axis] = tt, d, n
            y[tuple(idx)] = wy[tuple(idx)] if tt < L else 0
    out["Y"] = y
    for k in ("Y_h", "Y_c"):
        if k in out:
            v = np.array(out[k], copy=True)
            wv = wrong[k]
            if layout:
                v[:, d] = wv[:, d]
            else:
                v[d] = wv[d]
            out[k] = v
    return out


def _run(cases, kernels, name, check=True):
    return run_cases(cases, KernelBackend(kernels, name=name, check=check))


LEGIT = {"float32": {}, "fused": {"fused": True}, "state-in-T": {"round_to_T": True},
         "libm-3ulp": {"libm_ulps": 3.0}, "fused-state-in-T-libm": {"fused": True, "round_to_T": True,
                                                                    "libm_ulps": -3.0}}


@pytest.mark.parametrize("name", sorted(LEGIT))
def test_legitimate_kernels_pass_everything(name, value_cases):
    ks = {op: rec_kernel(op, **LEGIT[name]) for op in OPS}
    results = _run(value_cases, ks, name)
    bad = [(c.id, r.outcome, r.message[:200]) for c, r in zip(value_cases, results) if r.outcome != "pass"]
    assert not bad, (len(bad), bad[:5])


def _lens_short(c):
    f = _feeds(c)
    sl = f.get("sequence_lens")
    x = f["X"]
    s = x.shape[1] if c.attributes.get("layout", 0) else x.shape[0]
    return sl is not None and any(int(v) < s for v in sl)


def _outs(c) -> set:
    """The outputs a case requests (its ``outputs`` tag, ``Y,Y_h``)."""
    return set(c.tags["outputs"].split(","))


WRONG = {
    # flaw: (operators, filter on value cases, at least this many fails)
    "gates-ifco": (("LSTM",), lambda c: True, 150),
    "gates-rzh": (("GRU",), lambda c: True, 150),
    "lbr-ignored": (("GRU",), lambda c: c.attributes.get("linear_before_reset", 0) == 1, 20),
    "reverse-padded": (OPS, lambda c: _lens_short(c) and c.attributes.get("direction") in ("reverse", "bidirectional")
                       and bool(_outs(c) & {"Y", "Y_h"}), 20),
    "Y_h-last-padded": (OPS, lambda c: _lens_short(c) and "Y_h" in _outs(c), 20),
    "clip-ignored": (OPS, lambda c: "clip" in c.attributes, 20),
    "peepholes-ignored": (("LSTM",), lambda c: any(i.name == "P" and i.present for i in c.inputs), 20),
}


@pytest.mark.parametrize("flaw", sorted(WRONG))
def test_wrong_kernels_are_caught(flaw, value_cases):
    ops, keep, least = WRONG[flaw]
    cases = [c for c in value_cases if c.op in ops and keep(c)]
    assert len(cases) >= least, len(cases)
    results = _run(cases, {op: rec_kernel(op, flaw=flaw) for op in ops}, flaw, check=False)
    n = Counter(r.outcome for r in results)
    assert n["fail"] >= least, n
    # every type sees it caught, float and double on most cases
    by_type = Counter(c.tags["dtype"] for c, r in zip(cases, results) if r.outcome == "fail")
    assert {"float", "double", "float16"} <= set(by_type), by_type


def test_clip_cases_keep_the_cell_state_inside_the_threshold(value_cases):
    """Where the readings of LSTM's clip agree: |Ct| <= clip at every step while some gate
    pre-activation exceeds it (so a kernel ignoring clip differs)."""
    lstm = [c for c in value_cases if c.op == "LSTM" and "clip" in c.attributes]
    assert len(lstm) >= 20
    exceeded = 0
    for c in lstm:
        args = _args("LSTM", _feeds(c))
        clip = c.attributes["clip"]
        a = dict(c.attributes)
        a.pop("clip")
        # the cell state after every step: Y_c of the sequence cut after t steps
        x = args[0]
        S = x.shape[1] if a.get("layout", 0) else x.shape[0]
        for t in range(1, S + 1):
            sub = list(args)
            sub[0] = x[:t] if not a.get("layout", 0) else x[:, :t]
            sub[4] = None if args[4] is None else np.minimum(args[4], t)
            cc = ref.oracle("LSTM", sub, c.attributes, ("Y_c",))["Y_c"]
            assert np.max(np.abs(cc)) <= clip, c.id
        if a.get("direction") != "reverse":
            n_in = x.shape[-1]
            pre = np.abs(x.reshape(-1, n_in) @ args[1][0].T)
            exceeded += bool(np.max(pre) > clip)
    assert exceeded >= len(lstm) // 2, (exceeded, len(lstm))


def test_error_cases_are_rejected(suite):
    cases = [c for c in suite if c.expect_error]
    assert {c.tags["error"] for c in cases} >= {"hidden_size-mismatch", "num_directions-mismatch",
                                                "unknown-activation", "unknown-direction"}
    results = _run(cases, {op: rec_kernel(op) for op in OPS}, "legit")
    assert all(r.outcome == "pass" for r in results), [(c.id, r.message[:100]) for c, r in zip(cases, results)
                                                        if r.outcome != "pass"]


def test_activations_and_alpha_reading(value_cases):
    """Every activation name of the text appears in every operator's cases, and the lists where
    alpha/beta are given put the activations that take them first (both readings agree)."""
    for op in OPS:
        seen = set()
        for c in value_cases:
            if c.op != op:
                continue
            acts = c.attributes.get("activations") or []
            seen |= set(acts)
            if c.attributes.get("activation_alpha"):
                takers = [a in ref.TAKES_ALPHA for a in acts]
                assert takers == sorted(takers, reverse=True), (c.id, acts)
            if c.attributes.get("activation_beta"):
                takers = [a in ref.TAKES_BETA for a in acts]
                assert takers == sorted(takers, reverse=True), (c.id, acts)
        assert seen >= set(ref.ACTIVATIONS), (op, set(ref.ACTIVATIONS) - seen)


# ============================================================================ onnx.reference
def _nondefault_acts(c) -> bool:
    acts = c.attributes.get("activations")
    nd = 2 if c.attributes.get("direction") == "bidirectional" else 1
    return acts is not None and list(acts) != list(ref.DEFAULT_ACTS[c.op]) * nd


def _reference_disagreement(case, res) -> str | None:
    """Why onnx.reference (onnx 1.23) and the suite disagree; None if unknown.  The suite is
    right in each (onnx.reference's ``op_lstm.py``/``op_gru.py``/``op_rnn.py`` read the
    attributes as ``noqa: ARG002`` -- unused):

    * ``rnn-1-unimplemented``: RNN-1 has no implementation ("found 7, 14").
    * ``no-validation``: an invalid model accepted (hidden_size is ignored, R's last dimension
      is taken instead; LSTM/GRU ignore ``activations``, so an unknown name passes).
    * ``gru-1-foward``: GRU-1's schema default direction ``"foward"`` (contested) is rejected as
      an unknown direction.
    * ``activations-ignored``: LSTM and GRU always use Sigmoid/Tanh(/Tanh): ``activations``,
      alpha and beta are ignored.
    * ``rnn-activations``: RNN implements Tanh and Affine only, and wants exactly one alpha /
      beta per direction ("activation_alpha must have the same size as num_directions"),
      so lists of the other activations are rejected.
    * ``output_sequence-unknown``: LSTM-1, GRU-1 and GRU-3 with ``output_sequence`` written: its
      ``_run`` has no such parameter ("Issues with types ... and attributes [...]").
    * ``clip-ignored``, ``sequence_lens-ignored`` (every batch runs the whole padded sequence,
      Y is not zeroed, the reverse direction reverses the padded sequence), ``input_forget-ignored``.
    """
    a = case.attributes
    msg = res.message or ""
    if case.op == "RNN" and case.since_version == 1:
        return "rnn-1-unimplemented"
    if case.expect_error:
        return "no-validation"
    if case.op == "GRU" and a.get("direction") == "foward":
        return "gru-1-foward"
    if "output_sequence" in a and res.outcome == "error" and "Issues with types" in msg:
        return "output_sequence-unknown"
    if case.op == "RNN" and (_nondefault_acts(case) or "activation_alpha" in a):
        return "rnn-activations"
    if case.op != "RNN" and _nondefault_acts(case):
        return "activations-ignored"
    if "clip" in a:
        return "clip-ignored"
    if _lens_short(case):
        return "sequence_lens-ignored"
    if a.get("input_forget"):
        return "input_forget-ignored"
    return None


def test_agreement_with_onnx_reference(suite):
    results = run_cases(suite, resolve_backend("onnx-reference"))
    why, unexplained = sort_findings(suite, results, _reference_disagreement)
    assert not unexplained, (len(unexplained), unexplained[:5])
    assert set(why) == {"rnn-1-unimplemented", "no-validation", "gru-1-foward", "output_sequence-unknown",
                        "activations-ignored", "rnn-activations", "clip-ignored", "sequence_lens-ignored",
                        "input_forget-ignored"}, why
    # where it implements the text (default activations, no clip, whole sequences) it agrees, every type
    ok = Counter((c.op, c.tags["dtype"]) for c, r in zip(suite, results) if r.outcome == "pass")
    assert all(ok[(op, t)] >= 10 for op in OPS for t in ("float16", "float", "double")), ok


# ============================================================================ coverage
def test_coverage_every_combination_of_every_version(suite):
    cov = compute_coverage(suite)
    for op in OPS:
        versions = cov["ops"][op]["versions"]
        spec = {s.since_version for s in onnx.defs.get_all_schemas_with_history() if s.name == op and s.domain == ""}
        assert set(map(int, versions)) == spec
        for v, e in versions.items():
            assert not e["missing"], (op, v, e["missing"][:3])
    counts = Counter(c.op for c in suite)
    assert all(200 <= n <= 600 for n in counts.values()), counts


def test_trap_patterns(value_cases):
    for op, shapes in (("LSTM", ops_rec.LSTM_SHAPES), ("GRU", ops_rec.GRU_SHAPES), ("RNN", ops_rec.RNN_SHAPES)):
        mine = [c for c in value_cases if c.op == op]
        assert {c.tags["shape"] for c in mine} == {s.name for s in shapes}
        outs = {frozenset(_outs(c)) for c in mine}
        assert len(outs) == (7 if op == "LSTM" else 3), outs
        assert sum(_lens_short(c) for c in mine) >= 20
        assert {c.attributes.get("direction", "forward") for c in mine} >= {"forward", "reverse", "bidirectional"}
        assert any(c.attributes.get("layout") == 1 for c in mine)
