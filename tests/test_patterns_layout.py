"""Tests of the layout patterns (conformance/patterns/layout.py, issue 26).

* the composed oracle against numpy written here (np.transpose, np.reshape with the 0 / -1 /
  allowzero rules resolved by hand, the direct convolution loop of test_patterns_conv_blocks);
* onnx.reference on every unfused graph and the right Transpose-pair and Reshape-pair rewrites
  pass every case (and fire where they apply);
* wrong rewrites caught as optimizer failures: a Transpose pair removed although it does not
  cancel (kind=compose), a Reshape pair fused with a 0 left to copy X's dimension instead of the
  intermediate's (second=zero-copy), one that does not copy allowzero=1 (second=literal-zero).
"""

from __future__ import annotations

from collections import Counter
from functools import lru_cache

import numpy as np
import onnx
import pytest

from conformance.patterns import core, layout
from test_patterns_conv_blocks import _run, _v, activation, close, conv_loop, feeds

import pattern_rewrites2 as pr2

pytestmark = pytest.mark.filterwarnings("ignore::RuntimeWarning")


@lru_cache(maxsize=None)
def _cases(name: str) -> tuple:
    return tuple(core.pattern_cases(core.PATTERNS[name], 0))


def _perms(c) -> list:
    return [list(onnx.helper.get_attribute_value(n.attribute[0])) for n in c.model.graph.node
            if n.op_type == "Transpose"]


def reshape(x, shape, allowzero=0) -> np.ndarray:
    """Reshape by its text: 0 copies the input's dimension (allowzero 0), -1 is inferred."""
    s = [x.shape[i] if (d == 0 and not allowzero) else d for i, d in enumerate(shape)]
    if -1 in s:
        known = int(np.prod([d for d in s if d != -1]))
        s[s.index(-1)] = x.size // known
    assert int(np.prod(s)) == x.size
    return x.reshape(s)


def test_oracles_are_the_formula():
    seen = Counter()
    for c in _cases("Conv.channels_last"):
        if c.dtype == "float16":
            continue
        f, v = feeds(c), _v(c)
        p = _perms(c)
        y = activation(conv_loop(f["X"].transpose(p[0]), f["W"], f["B"]), v["act"])
        if len(p) > 1:
            y = y.transpose(p[1])
            assert (p[1] == list(np.argsort(p[0]))) == (v["out_perm"] == "inverse"), c.id
        close(c, y)
        seen["channels_last"] += 1
    for c in _cases("Transpose.pair"):
        f, v = feeds(c), _v(c)
        p, q = _perms(c)
        y = f["X"].transpose(p)
        y = np.maximum(y, 0) if v["between"] == "relu" else y + f["bias"] if v["between"] == "add" else y
        y = y.transpose(q)
        close(c, y, k=1)
        cancels = [p[i] for i in q] == list(range(len(p)))
        assert cancels == (v["kind"] != "compose"), c.id
        seen[v["kind"]] += 1
    for c in _cases("Reshape.pair"):
        f = feeds(c)
        r = [n for n in c.model.graph.node if n.op_type == "Reshape"]
        z = [{a.name: a.i for a in n.attribute}.get("allowzero", 0) for n in r]
        y = reshape(f["X"], [int(d) for d in f["shape1"]], z[0])
        y = np.maximum(y, 0) if _v(c)["between"] == "relu" else y
        close(c, reshape(y, [int(d) for d in f["shape2"]], z[1]), k=1)
        seen[_v(c)["second"]] += 1
    for c in _cases("Flatten.gemm"):
        if c.dtype == "float16":
            continue
        f, v = feeds(c), _v(c)
        x = f["X"]
        flat = x.reshape(x.shape[0] * x.shape[1], x.shape[2] * x.shape[3]) if c.tags.get("near_miss") else \
            x.reshape(x.shape[0], int(np.prod(x.shape[1:])))
        close(c, activation(flat @ f["W"].T + f["B"], v["act"]))
        seen["flatten"] += 1
    for c in _cases("Squeeze.unsqueeze"):
        x = feeds(c)["X"]
        want = np.squeeze(x) if c.tags.get("near_miss") else np.maximum(x, 0) if _v(c)["between"] == "relu" else x
        close(c, want, k=1)
        seen["squeeze-nm" if c.tags.get("near_miss") else "squeeze"] += 1
    assert min(seen[k] for k in ("channels_last", "inverse", "identity", "compose", "explicit", "zero-copy",
                                 "minus-one", "literal-zero", "flatten", "squeeze", "squeeze-nm")) >= 3, seen


def test_edges_and_valid_models():
    for p in layout.PATTERNS:
        cs = _cases(p.name)
        assert any(0 in c.datasets[0].outputs[c.outputs[0].name].shape for c in cs), p.name
        for c in cs[::5]:
            onnx.checker.check_model(c.model, full_check=True)
    # the zero-copy trap is live: copying X's first dimension instead of the intermediate's differs
    zc = [c for c in _cases("Reshape.pair") if _v(c)["second"] == "zero-copy"]
    assert zc and all(feeds(c)["X"].shape[0] != c.datasets[0].outputs[c.outputs[0].name].shape[0] for c in zc)


@lru_cache(maxsize=None)
def _summary(which: str) -> dict:
    rw = {"right": (pr2.transpose_pair(), pr2.reshape_pair()),
          "cancel-any": (pr2.transpose_pair(cancel_any=True),),
          "reshape-zero": (pr2.reshape_pair(ignore_zero=True),),
          "reshape-allowzero": (pr2.reshape_pair(drop_allowzero=True),)}[which]
    cases = [c for p in ("Transpose.pair", "Reshape.pair", "Conv.channels_last", "Flatten.gemm", "Squeeze.unsqueeze")
             for c in _cases(p)]
    return _run(cases, rw, which)


def test_reference_and_right_rewrites_pass_every_case():
    s = _summary("right")
    assert s["failures"] == [], s["failures"][:3]
    fired = Counter()
    for r in s["records"]:
        if r["level"] == "opt" and r["tags"]["pattern"] in ("Transpose.pair", "Reshape.pair"):
            ops = r["optimized"]["ops"]
            fired[r["tags"]["pattern"]] += ops.count("Transpose") + ops.count("Reshape") <= 1
    assert fired["Transpose.pair"] >= 10 and fired["Reshape.pair"] >= 10, fired


@pytest.mark.parametrize("which,pattern,culprit", [
    ("cancel-any", "Transpose.pair", ("kind", "compose")),
    ("reshape-zero", "Reshape.pair", ("second", "zero-copy")),
    ("reshape-allowzero", "Reshape.pair", ("second", "literal-zero")),
])
def test_wrong_rewrites_are_optimizer_failures(which, pattern, culprit):
    s = _summary(which)
    assert len(s["failures"]) >= 3, which
    for f in s["failures"]:
        assert f["class"] == "optimizer" and f["levels"] == ["opt"] and f["outcomes"]["disable"] == "pass", f
        assert f["pattern"] == pattern and f["variation"][culprit[0]] == culprit[1], f
        assert f["responsible"] == [s["failures"][0]["responsible"][0]] and f["responsible"][0] in (
            "TransposePairFusion", "ReshapeFusion"), f


def test_onnx_reference_flatten_zero_batch():
    """onnx.reference's Flatten raises on an empty batch (numpy cannot infer -1 from a zero-size
    array); Flatten's text defines the output shape (0, C*H*W).  The suite's oracle gives it
    (checked above); the test backend replaces the kernel (tests/pattern_rewrites2.py)."""
    from onnx.reference import ReferenceEvaluator

    c = next(c for c in _cases("Flatten.gemm") if c.tags["v_shape"] == "zero-batch" and c.tags["v_form"] == "flatten")
    with pytest.raises(ValueError, match="reshape"):
        ReferenceEvaluator(c.model).run(None, c.datasets[0].inputs)
    got = ReferenceEvaluator(c.model, new_ops=[pr2.Flatten]).run(None, c.datasets[0].inputs)[0]
    want = c.datasets[0].outputs[c.outputs[0].name]
    assert got.shape == want.shape and want.shape[0] == 0 and want.shape[1] >= 1
