"""Tests of the attention, loss and embedding patterns (conformance/patterns/attention.py, issue 26).

* the composed oracle against numpy written here (scaled dot-product attention with the additive
  mask and a max-shifted softmax; cross-entropy as -w[t] * log_softmax[t] with ignore_index and
  the three reductions; Gather with negative ids, scale and positions);
* onnx.reference and the right fusions (an SDPA kernel in float32, a fused LogSoftmax) pass every
  case; the attention fusion fires on every attention graph and leaves the near-miss alone;
* wrong fusions caught as optimizer failures: attention fused whatever the Softmax axis (the
  near-miss over the queries), Log(Softmax) fused into a LogSoftmax that drops the axis.
"""

from __future__ import annotations

from collections import Counter
from functools import lru_cache

import numpy as np
import onnx
import pytest

from conformance.patterns import attention, core
from test_patterns_conv_blocks import _run, _v, close, feeds

import pattern_rewrites2 as pr2

pytestmark = pytest.mark.filterwarnings("ignore::RuntimeWarning")


@lru_cache(maxsize=None)
def _cases(name: str) -> tuple:
    return tuple(core.pattern_cases(core.PATTERNS[name], 0))


def softmax(s, axis):
    e = np.exp(s - np.max(s, axis=axis, keepdims=True))
    return e / e.sum(axis=axis, keepdims=True)


def test_attention_oracle_is_the_formula():
    seen = Counter()
    for c in _cases("Attention.sdpa"):
        if c.dtype == "float16" or not c.datasets[0].outputs[c.outputs[0].name].size:
            continue
        f, v = feeds(c), _v(c)
        d = f["Q"].shape[-1]
        kt = f["K"] if v["k_layout"] == "pretransposed" else np.swapaxes(f["K"], -1, -2)
        s = (f["Q"] @ kt) / np.sqrt(d)
        if "mask" in f:
            s = s + f["mask"]
            assert (np.isfinite(s).any(axis=-1)).all(), c.id  # no fully masked query
        axis = -2 if c.tags.get("near_miss") else -1
        close(c, softmax(s, axis) @ f["V"], k=16)
        seen[v["mask"]] += 1
    assert min(seen[m] for m in ("none", "key-padding", "key-padding-inf", "causal", "full")) >= 2, seen


def test_loss_and_embedding_oracles():
    seen = Counter()
    for c in _cases("Loss.softmax_nll"):
        if c.dtype == "float16":
            continue
        f, v = feeds(c), _v(c)
        x, t = f["X"], c.datasets[0].inputs["target"]
        ls = np.log(softmax(x, 0 if c.tags.get("near_miss") else 1))
        node = next(n for n in c.model.graph.node if n.op_type == "NegativeLogLikelihoodLoss")
        a = {at.name: onnx.helper.get_attribute_value(at) for at in node.attribute}
        ign = a.get("ignore_index")
        w = f.get("weight", np.ones(x.shape[1]))
        keep = np.ones(t.shape, bool) if ign is None else t != ign
        tt = np.where(keep, t, 0)
        picked = np.take_along_axis(ls, tt[:, None], axis=1)[:, 0]
        wt = np.where(keep, w[tt], 0.0)
        loss = -picked * wt
        red = a.get("reduction", b"mean")
        red = red.decode() if isinstance(red, bytes) else red
        want = loss if red == "none" else loss.sum() if red == "sum" else loss.sum() / wt.sum()
        close(c, np.asarray(want), k=16)
        seen[red] += 1
        seen["ignored"] += ign is not None
    for c in _cases("Embedding.gather_scale"):
        if c.dtype == "float16":
            continue
        f, v = feeds(c), _v(c)
        ids = c.datasets[0].inputs["ids"]
        nm = bool(c.tags.get("near_miss"))
        e = np.take(f["W"], ids, axis=1 if nm else 0)
        d = f["W"].shape[1]
        e = e * f["sqrt_d"] if v["scale"] == "mul" else e / f["inv_sqrt_d"] if v["scale"] == "div" else e
        if "P" in f:
            e = e + f["P"]
        close(c, e, k=2)
        if ids.size:
            assert (v["ids"] == "negative") == bool((ids < 0).all()), c.id
        seen["embedding"] += 1
        seen["d"] += d > 0
    assert seen["mean"] and seen["sum"] and seen["none"] and seen["ignored"] >= 6 and seen["embedding"] >= 20, seen


def test_valid_models_and_edges():
    for p in attention.PATTERNS:
        for c in _cases(p.name)[::4]:
            onnx.checker.check_model(c.model, full_check=True)
    assert any(0 in c.datasets[0].outputs[c.outputs[0].name].shape for c in _cases("Attention.sdpa"))
    assert any(0 in c.datasets[0].outputs[c.outputs[0].name].shape for c in _cases("Embedding.gather_scale"))


@lru_cache(maxsize=None)
def _summary(which: str) -> dict:
    rw = {"right": (pr2.attention_fusion(), pr2.log_softmax_fusion()),
          "any-axis": (pr2.attention_fusion(any_softmax_axis=True),),
          "drop-axis": (pr2.log_softmax_fusion(drop_axis=True),)}[which]
    cases = [c for p in attention.PATTERNS for c in _cases(p.name)]
    return _run(cases, rw, which)


def test_reference_and_right_fusions_pass_every_case():
    s = _summary("right")
    assert s["failures"] == [], s["failures"][:3]
    for r in s["records"]:
        if r["level"] == "opt" and r["tags"]["pattern"] == "Attention.sdpa":
            t = r["tags"]
            fused = "test.fused:SDPA" in r["optimized"]["ops"]
            # a graph-input scale is not a constant: no fusion
            assert fused == (not t.get("near_miss") and not (t["v_params"] == "input" and t["v_scale"] != "folded")), \
                r["id"]
    n = sum(r["level"] == "opt" and "test.fused:LogSoftmaxF" in r["optimized"]["ops"] for r in s["records"])
    assert n == sum(r["level"] == "opt" and r["tags"].get("v_form") == "log-softmax" for r in s["records"]) >= 6


@pytest.mark.parametrize("which,check", [
    ("any-axis", lambda f: f["pattern"] == "Attention.sdpa" and f["near_miss"] == "softmax_axis=-2"),
    ("drop-axis", lambda f: f["pattern"] == "Loss.softmax_nll" and f["variation"]["form"] == "log-softmax"),
])
def test_wrong_fusions_are_optimizer_failures(which, check):
    s = _summary(which)
    assert len(s["failures"]) >= 2, which
    for f in s["failures"]:
        assert f["class"] == "optimizer" and f["levels"] == ["opt"] and f["outcomes"]["disable"] == "pass", f
        assert check(f) and f["responsible"] in (["AttentionFusion"], ["LogSoftmaxFusion"]), f


def test_onnx_reference_nll_ignore_index_minus_one():
    """onnx.reference's NegativeLogLikelihoodLoss with ``ignore_index=-1``, no weight and the mean
    reduction divides by every target, the ignored one included; the text (and the oracle,
    checked above) divides by the kept targets: its code skips the unit weights exactly when
    ``ignore_index == -1``.  The test backend passes unit weights (tests/pattern_rewrites2.py)."""
    from onnx.reference import ReferenceEvaluator

    c = next(c for c in _cases("Loss.softmax_nll") if c.tags["v_ignore_index"] == "negative" and c.dtype == "double"
             and c.tags["v_reduction"] == "mean" and c.tags["v_weight"] == "absent")
    want = float(c.datasets[0].outputs[c.outputs[0].name])
    t = c.datasets[0].inputs["target"]
    kept = int((t != -1).sum())
    got = float(ReferenceEvaluator(c.model).run(None, c.datasets[0].inputs)[0])
    assert kept < t.size and got == pytest.approx(want * kept / t.size, rel=1e-12)
    fixed = float(ReferenceEvaluator(c.model, new_ops=[pr2.NegativeLogLikelihoodLoss]).run(
        None, c.datasets[0].inputs)[0])
    assert fixed == pytest.approx(want, rel=1e-12)
