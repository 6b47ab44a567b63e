"""Tests of NegativeLogLikelihoodLoss (12, 13, 22) and SoftmaxCrossEntropyLoss (12, 13)
(``conformance/ops/losses.py``, ``conformance/reference/losses.py``).

* the oracle against the text's three worked examples, onnx's node tests and an independent
  per-element loop (explicit log-sum-exp, explicit weighted mean) on every value case;
* kernels through ``KernelBackend``: legitimate ones (float32 accumulation for 16-bit types in
  order, pairwise, float64) pass every case; wrong ones (mean over every element instead of the
  non-ignored weights, SoftmaxCrossEntropyLoss ignoring weights, ignore_index ignored, no max
  shift in the softmax) fail cases the right kernel passes;
* onnx.reference's disagreements explained; error cases rejected; coverage.
"""

from __future__ import annotations

import math
from collections import Counter

import numpy as np
import onnx
import pytest

from conformance.backends import resolve_backend
from conformance.backends.kernel import KernelBackend
from conformance.coverage import compute_coverage
from conformance.reference import losses as ref
from conformance.runner import run_cases
from oracle_checks import single_node_tests, sort_findings

pytestmark = pytest.mark.filterwarnings("ignore::RuntimeWarning")
OPS = ["NegativeLogLikelihoodLoss", "SoftmaxCrossEntropyLoss"]
NAMES = {"NegativeLogLikelihoodLoss": ("input", "target", "weight", "loss"),
         "SoftmaxCrossEntropyLoss": ("scores", "labels", "weights", "output")}

X = np.array([[[1.0, 2.0], [2.0, 2.0], [3.0, 2.0]], [[0.0, 1.0], [2.0, 2.0], [1.0, 2]]])
T = np.array([[2, 1], [0, 2]])
W = np.array([0.2, 0.3, 0.1])


def test_text_examples():
    assert ref.nll(X, T, reduction="none").tolist() == [[-3.0, -2.0], [-0.0, -2.0]]
    assert math.isclose(float(ref.nll(X, T, W, reduction="sum")), -1.1, rel_tol=1e-12)
    got = float(ref.nll(X, T, W, reduction="mean"))  # the text prints -1.57: -1.1 / 0.7 to two decimals
    assert math.isclose(got, -1.1 / 0.7, rel_tol=1e-12) and round(got, 2) == -1.57


def test_oracle_reproduces_the_node_tests():
    tests = single_node_tests(tuple(OPS), ("negativeloglikelihoodloss", "softmax_cross_entropy_loss"))
    assert len(tests) >= 40
    for t in tests:
        node = t.model.graph.node[0]
        attrs = {a.name: onnx.helper.get_attribute_value(a) for a in node.attribute}
        red = attrs.get("reduction", b"mean")
        red = red.decode() if isinstance(red, bytes) else red
        for ins, outs in t.data_sets:
            x, tg, w = ins[0], ins[1], ins[2] if len(ins) > 2 else None
            if node.op_type == "NegativeLogLikelihoodLoss":
                got = [ref.nll(x, tg, w, attrs.get("ignore_index"), red)]
            else:
                o, lp = ref.sce(x, tg, w, attrs.get("ignore_index"), red)
                got = [o, lp][:len(outs)]
            for g, e in zip(got, outs):
                tol = 1e-2 if e.dtype == np.float16 else 1e-5
                assert np.allclose(g, e.astype(np.float64), rtol=tol, atol=tol, equal_nan=True), t.name


def _loop(op, x, t, w, ii, red):
    """Element by element: log-sum-exp of each (n, :, d) column written out, the picked
    class's term, then the reduction with the non-ignored weights as the mean's divisor."""
    x = np.asarray(x, dtype=np.float64)
    c = x.shape[1]
    losses, weights = [], []
    lp = np.empty(x.shape)
    for n in range(x.shape[0]):
        for d in np.ndindex(x.shape[2:]):
            col = [float(x[(n, k) + d]) for k in range(c)]
            if op == "SoftmaxCrossEntropyLoss":
                m = max(col)
                lse = m + math.log(math.fsum(math.exp(v - m) for v in col))
                col = [v - lse for v in col]
                for k in range(c):
                    lp[(n, k) + d] = col[k]
            cls = int(t[(n,) + d])
            if ii is not None and cls == ii:
                losses.append(0.0)
                weights.append(0.0)
                continue
            wc = 1.0 if w is None else float(w[cls])
            losses.append(-col[cls] * wc)
            weights.append(wc)
    if red == "none":
        out = np.array(losses).reshape(t.shape)
    elif red == "sum":
        out = math.fsum(losses)
    else:
        wt = math.fsum(weights)
        out = math.fsum(losses) / wt if wt else math.nan
    return np.asarray(out, dtype=np.float64), lp


def _feeds(case):
    ds = case.datasets[0].inputs
    return {i.name: (ds[i.name] if i.name in ds else i.value) for i in case.inputs}


def test_oracle_is_the_loop_on_every_value_case(value_cases):
    n = 0
    for c in value_cases:
        xn, tn, wn, on = NAMES[c.op]
        f = _feeds(c)
        x, t, w = f[xn].astype(np.float64), f[tn], f.get(wn)
        w = None if w is None else w.astype(np.float64)
        ii, red = c.attributes.get("ignore_index"), c.attributes.get("reduction", "mean")
        if x.size > 200:
            continue
        mine, lp = _loop(c.op, x, t, w, ii, red)
        if c.op == "NegativeLogLikelihoodLoss":
            got, glp = ref.nll(x, t, w, ii, red), None
        else:
            got, glp = ref.sce(x, t, w, ii, red)
            assert np.allclose(glp, lp, rtol=1e-12, atol=1e-12), c.id
        assert np.allclose(got, mine, rtol=1e-12, atol=1e-12, equal_nan=True), c.id
        # the stored expected value is the oracle's, rounded to the output type
        e = c.datasets[0].outputs[on].astype(np.float64)
        assert np.allclose(e, mine, rtol=1e-2, atol=1e-2, equal_nan=True), c.id
        n += 1
    assert n >= 300, n


# ============================================================================ kernels
def make_kernel(mode="forward", flaw=None):
    """Both losses in the compute precision (float32 for 16-bit types, the type otherwise; or
    ``float64``), summing ``forward`` or ``pairwise``; ``flaw``: ``mean-over-all`` (divide by
    the element count), ``weight-ignored``, ``ignore-index-ignored``, ``no-max-shift``."""

    def kernel(inputs, attrs, outputs, opset):
        names = list(inputs)
        x, t = inputs[names[0]], inputs[names[1]].astype(np.int64)
        w = inputs[names[2]] if len(names) > 2 else None
        sce = names[0] == "scores"
        if x.ndim < 2 or t.shape != x.shape[:1] + x.shape[2:]:
            raise ValueError("target shape")
        if w is not None and w.shape != (x.shape[1],):
            raise ValueError("weight shape")
        dt = x.dtype
        acc = np.float64 if mode == "float64" or dt == np.float64 else np.float32
        a = x.astype(acc)
        with np.errstate(all="ignore"):
            if sce:
                m = a.max(axis=1, keepdims=True) if a.size and flaw != "no-max-shift" else acc(0)
                s = (a - m).astype(acc)
                logp = (s - np.log(np.exp(s).sum(axis=1, keepdims=True, dtype=acc))).astype(acc)
            else:
                logp = a
            ii = attrs.get("ignore_index")
            keep = np.ones(t.shape, bool) if ii is None or flaw == "ignore-index-ignored" else t != ii
            safe = np.where(keep, t, 0)
            ww = np.ones(x.shape[1], acc) if w is None or (flaw == "weight-ignored" and sce) else w.astype(acc)
            y = np.take_along_axis(logp, safe[:, None], axis=1)[:, 0] if t.size else np.zeros(t.shape, acc)
            wt = np.where(keep, ww[safe], acc(0)).astype(acc)
            loss = np.where(keep, -y * wt, acc(0)).astype(acc)
            red = attrs.get("reduction", "mean")
            if red == "none":
                out = loss
            else:
                s_ = ref._sum(loss.ravel(), "pairwise" if mode == "pairwise" else "forward", acc)
                if red == "sum":
                    out = s_
                else:
                    den = acc(loss.size) if flaw == "mean-over-all" else ref._sum(wt.ravel(), "forward", acc)
                    out = s_ / den
        res = {outputs[0]: np.asarray(out).astype(dt)}
        if len(outputs) > 1:
            res[outputs[1]] = logp.astype(dt)
        return res

    return kernel


def _run(cases, kernel, name, check=True):
    return run_cases(cases, KernelBackend({op: kernel for op in OPS}, name=name, check=check))


@pytest.mark.parametrize("mode", ["forward", "pairwise", "float64"])
def test_legitimate_kernels_pass_everything(mode, value_cases):
    results = _run(value_cases, make_kernel(mode), mode)
    bad = [(c.id, r.outcome, r.message[:200]) for c, r in zip(value_cases, results) if r.outcome != "pass"]
    assert not bad, (len(bad), bad[:5])


def _state(c):
    return c.attributes.get("ignore_index"), c.attributes.get("reduction", "mean")


def _has_weight(c):
    return any(i.name in ("weight", "weights") and i.present for i in c.inputs)


WRONG = {
    "mean-over-all": lambda c: _state(c)[1] == "mean" and _has_weight(c) and not c.contested,
    "weight-ignored": lambda c: c.op == "SoftmaxCrossEntropyLoss" and _has_weight(c) and _state(c)[1] != "mean",
    "ignore-index-ignored": lambda c: _state(c)[0] is not None and _state(c)[1] != "mean",
    "no-max-shift": lambda c: c.op == "SoftmaxCrossEntropyLoss" and c.tags["numerics"] == "large",
}


@pytest.mark.parametrize("flaw", sorted(WRONG))
def test_wrong_kernels_are_caught(flaw, value_cases):
    cases = [c for c in value_cases if WRONG[flaw](c) and c.tags.get("shape") != "empty/0xC"]
    assert len(cases) >= 20, len(cases)
    right = _run(cases, make_kernel(), "right")
    assert all(r.outcome == "pass" for r in right)
    results = _run(cases, make_kernel(flaw=flaw), flaw, check=False)
    n = Counter(r.outcome for r in results)
    assert n["fail"] + n["error"] >= len(cases) // 2 and n["fail"] >= 10, n
    ops = {c.op for c, r in zip(cases, results) if r.outcome == "fail"}
    assert ops == {c.op for c in cases}, ops


def test_error_cases_are_rejected(suite):
    cases = [c for c in suite if c.expect_error]
    assert {c.tags["error"] for c in cases} == {"target-shape", "target-rank", "weight-length"}
    assert {c.op for c in cases} == set(OPS)
    results = _run(cases, make_kernel(), "legit")
    assert all(r.outcome == "pass" for r in results), [(c.id, r.message[:100]) for c, r in zip(cases, results)
                                                        if r.outcome != "pass"]


def test_mean_with_ignore_index_is_contested_and_all_ignored_is_nan(value_cases):
    cont = [c for c in value_cases if c.contested]
    sce_weighted = [c for c in cont if c.op == "SoftmaxCrossEntropyLoss" and _has_weight(c)]
    assert len(sce_weighted) >= 10
    assert cont and all(_state(c)[1] == "mean" and (_state(c)[0] is not None or c in sce_weighted) for c in cont)
    assert all(not c.contested for c in value_cases if _state(c)[1] != "mean")
    assert all(c.contested for c in value_cases if _state(c)[1] == "mean" and _state(c)[0] is not None)
    every = [c for c in cont if c.tags["shape"].startswith("all-ignored") and _state(c)[0] is not None]
    assert len(every) >= 4
    for c in every:
        assert np.isnan(c.datasets[0].outputs[NAMES[c.op][3]].astype(np.float64)).all(), c.id
    # ignored targets are really there (at least one per case with ignore_index)
    for c in value_cases:
        ii = _state(c)[0]
        t = _feeds(c)[NAMES[c.op][1]]
        if ii is not None and t.size:
            assert (t == ii).any(), c.id


def _reference_disagreement(case, res) -> str | None:
    """``contested-mean``: onnx.reference's mean with ignore_index is not the function body's;
    ``empty``: it cannot reshape an N = 0 input; ``log-of-softmax``: SoftmaxCrossEntropyLoss
    takes ``log(softmax(x))``, -inf where the softmax underflows (scores 30 apart: our ``wide``
    class), or imprecise where it is subnormal, where LogSoftmax is finite and exact to float32; ``half-accumulation``: it sums the 1024 terms of the long
    pattern in float16/bfloat16 itself (overflow to inf, or an error beyond the float32 bound)."""
    if case.contested:
        return "contested-mean"
    if case.tags["shape"].startswith("empty") and res.outcome == "error":
        return "empty"
    if case.op == "SoftmaxCrossEntropyLoss" and case.tags["numerics"] == "wide":
        return "log-of-softmax"
    if case.tags["dtype"] in ("float16", "bfloat16") and case.tags["shape"].startswith("long"):
        return "half-accumulation"
    return None


def test_agreement_with_onnx_reference(suite):
    vals = [c for c in suite if not c.expect_error]
    results = run_cases(vals, resolve_backend("onnx-reference"))
    why, unexplained = sort_findings(vals, results, _reference_disagreement)
    assert not unexplained, (len(unexplained), unexplained[:5])
    assert set(why) == {"contested-mean", "empty", "log-of-softmax", "half-accumulation"}, why
    ok = Counter(c.op for c, r in zip(vals, results) if r.outcome == "pass")
    assert ok["NegativeLogLikelihoodLoss"] >= 150 and ok["SoftmaxCrossEntropyLoss"] >= 100, ok


def test_coverage_and_states(suite, value_cases):
    cov = compute_coverage(suite)
    for op in OPS:
        for v, e in cov["ops"][op]["versions"].items():
            assert not e["missing"], (op, v, e["missing"][:3])
    states = Counter(_state(c) for c in value_cases)
    assert {(ii, r) for ii in (None, 1, -1, -100) for r in ("none", "sum", "mean")} <= set(states)
    assert {c.tags["shape"] for c in value_cases} >= {"NC", "NCd1", "NCd1d2", "NCd1d2d3", "long/1x3x1024",
                                                      "empty/0xC", "all-ignored/1x4x7"}
    assert any(_has_weight(c) for c in value_cases) and any(not _has_weight(c) for c in value_cases)
    lp = Counter(any(o.name == "log_prob" and o.present for o in c.outputs) for c in value_cases
                 if c.op == "SoftmaxCrossEntropyLoss")
    assert lp[True] >= 20 and lp[False] >= 20, lp
    assert 400 <= len(value_cases) <= 1500
