"""Tests of the padding + pooling patterns (conformance/patterns/pad_pool.py, issue 26).

* the composed oracle against numpy written here (np.pad with slicing for negative pads, explicit
  window loops for MaxPool / AveragePool with their own pads and count_include_pad);
* onnx.reference on every unfused graph and a right Pad-into-pool fusion pass every case; the
  fusion fires on the foldable forms (-inf before MaxPool, 0 before AveragePool) and leaves the
  others (a zero pad before MaxPool, reflect/edge, graph-input pad values, the near-misses) alone;
* a Pad+MaxPool fusion folding a zero pad into the pooling is caught as an optimizer failure.
"""

from __future__ import annotations

from collections import Counter
from functools import lru_cache

import numpy as np
import onnx
import pytest

from conformance.patterns import core, pad_pool
from test_patterns_conv_blocks import _run, _v, close, conv_loop, feeds

import pattern_rewrites2 as pr2

pytestmark = pytest.mark.filterwarnings("ignore::RuntimeWarning")


@lru_cache(maxsize=None)
def _cases(name: str) -> tuple:
    return tuple(core.pattern_cases(core.PATTERNS[name], 0))


def np_pad(x, pads, mode: str, value: float) -> np.ndarray:
    """ONNX Pad by numpy: negative amounts crop first, then np.pad pads the positive ones."""
    r = x.ndim
    sl = tuple(slice(max(0, -pads[i]), x.shape[i] - max(0, -pads[r + i])) for i in range(r))
    x = x[sl]
    width = [(max(0, pads[i]), max(0, pads[r + i])) for i in range(r)]
    if mode == "constant":
        return np.pad(x, width, mode="constant", constant_values=value)
    return np.pad(x, width, mode=mode)


def pool(x, k, strides, pads, kind: str, cip: int = 0) -> np.ndarray:
    """Max / average pooling by explicit window loops (pads: begins then ends)."""
    r = x.ndim - 2
    fill = -np.inf if kind == "max" else 0.0
    xp = np.pad(x, [(0, 0), (0, 0)] + [(pads[i], pads[r + i]) for i in range(r)], constant_values=fill)
    real = np.pad(np.ones(x.shape[2:]), [(pads[i], pads[r + i]) for i in range(r)])
    outs = [(xp.shape[2 + i] - k) // strides[i] + 1 for i in range(r)]
    y = np.zeros(x.shape[:2] + tuple(outs))
    for pos in np.ndindex(*outs):
        sl = tuple(slice(pos[i] * strides[i], pos[i] * strides[i] + k) for i in range(r))
        win = xp[(slice(None), slice(None)) + sl].reshape(x.shape[0], x.shape[1], k ** r)
        if kind == "max":
            y[(slice(None), slice(None)) + pos] = win.max(axis=-1) if win.size else 0
        else:
            n = k ** r if cip else real[sl].sum()
            y[(slice(None), slice(None)) + pos] = win.sum(axis=-1) / n
    return y


def _expected(c) -> np.ndarray:
    f, v = feeds(c), _v(c)
    pad_node = next(n for n in c.model.graph.node if n.op_type == "Pad")
    pool_node = next(n for n in c.model.graph.node if n.op_type in ("MaxPool", "AveragePool", "Conv"))
    pads = [int(p) for p in f["pads"]]
    x = f["X"]
    if "pad_axes" in f:  # Pad-18 axes: the spatial axes only
        full = [0] * (2 * x.ndim)
        ax = [int(a) for a in f["pad_axes"]]
        for j, a in enumerate(ax):
            full[a], full[x.ndim + a] = pads[j], pads[len(ax) + j]
        pads = full
    mode = {a.name: a.s.decode() for a in pad_node.attribute}.get("mode", "constant")
    value = float(f["pad_value"]) if "pad_value" in f else 0.0
    y = np_pad(x, pads, mode, value)
    a = {at.name: onnx.helper.get_attribute_value(at) for at in pool_node.attribute}
    r = x.ndim - 2
    k = a["kernel_shape"][0]
    if pool_node.op_type == "Conv":
        z = conv_loop(y, f["W"], f["B"], a.get("pads"), a.get("strides"))
        return (np.maximum(z, 0) if v["act"] == "relu" else z), v
    return pool(y, k, a.get("strides", [1] * r), a.get("pads", [0] * (2 * r)),
                "max" if pool_node.op_type == "MaxPool" else "avg", a.get("count_include_pad", 0)), v


def test_oracle_is_the_formula():
    seen = Counter()
    for name in ("Pool.pad_maxpool", "Pool.pad_avgpool", "Conv.pad_conv"):
        for c in _cases(name):
            if c.dtype == "float16":
                continue
            want, v = _expected(c)
            close(c, want, k=8 if name == "Conv.pad_conv" else 4)
            seen[(name, v["value"])] += 1
            seen[(name, "axes")] += "pad_axes" in feeds(c)
    assert all(seen[("Pool.pad_maxpool", m)] for m in ("-inf", "0", "omitted", "reflect", "edge")), seen
    assert seen[("Pool.pad_maxpool", "axes")] and seen[("Pool.pad_avgpool", "0.5")], seen
    assert seen[("Conv.pad_conv", "axes")] and seen[("Conv.pad_conv", "0.5")] and \
        seen[("Pool.pad_avgpool", "axes")], seen


def test_zero_pad_changes_maxpool():
    """The trap is live: on every zero-padded MaxPool case whose border windows matter, folding the
    zero into MaxPool's -inf padding changes the output (data mostly negative)."""
    n = 0
    for c in _cases("Pool.pad_maxpool"):
        v = _v(c)
        if v["value"] not in ("0", "omitted") or c.tags.get("near_miss") or v["amount"] == "negative" or \
                not c.datasets[0].outputs[c.outputs[0].name].size:
            continue
        f = feeds(c)
        assert np.mean(f["X"] < 0) > 0.8
        assert (c.datasets[0].outputs[c.outputs[0].name] == 0).any(), c.id  # a window of padding zeros won
        n += 1
    assert n >= 6


def test_valid_models():
    for p in pad_pool.PATTERNS:
        for c in _cases(p.name)[::5]:
            onnx.checker.check_model(c.model, full_check=True)


@lru_cache(maxsize=None)
def _summary(which: str) -> dict:
    rw = {"right": (pr2.pad_pool_fusion(),), "zero-into-max": (pr2.pad_pool_fusion(zero_into_max=True),),
          "any-into-conv": (pr2.pad_pool_fusion(any_value_into_conv=True),)}[which]
    cases = [c for p in ("Pool.pad_maxpool", "Pool.pad_avgpool", "Conv.pad_conv") for c in _cases(p)]
    return _run(cases, rw, which)


def test_reference_and_right_fusion_pass_every_case():
    s = _summary("right")
    assert s["failures"] == [], s["failures"][:3]
    fired = Counter()
    for r in s["records"]:
        if r["level"] != "opt":
            continue
        t = r["tags"]
        gone = "Pad" not in r["optimized"]["ops"]
        foldable = (t["v_value"] == "-inf" if t["pattern"] == "Pool.pad_maxpool" else
                    t["v_value"] in ("0", "omitted") if t["pattern"] == "Conv.pad_conv" else
                    t["v_value"] in ("0", "omitted") and (t["v_own_pads"] == "none" or t["v_count_include_pad"] == "1"))
        foldable = foldable and not t.get("near_miss") and t.get("v_amount") != "negative" and \
            not (t["v_params"] == "input" and t["v_value"] != "omitted")
        assert gone == foldable, r["id"]
        fired[t["pattern"]] += gone
    assert fired["Pool.pad_maxpool"] >= 8 and fired["Pool.pad_avgpool"] >= 20 and fired["Conv.pad_conv"] >= 20, fired


def test_nonzero_pad_folded_into_conv_is_caught():
    s = _summary("any-into-conv")
    bad = s["failures"]
    assert len(bad) >= 3
    for f in bad:
        assert f["class"] == "optimizer" and f["levels"] == ["opt"] and f["outcomes"]["disable"] == "pass", f
        assert f["pattern"] == "Conv.pad_conv" and f["near_miss"] == "value=0.5", f
        assert f["responsible"] == ["PadFusion"], f


def test_zero_pad_folded_into_maxpool_is_caught():
    s = _summary("zero-into-max")
    bad = s["failures"]
    assert len(bad) >= 6
    for f in bad:
        assert f["class"] == "optimizer" and f["levels"] == ["opt"] and f["outcomes"]["disable"] == "pass", f
        assert f["pattern"] == "Pool.pad_maxpool" and f["variation"]["value"] in ("0", "omitted"), f
        assert f["responsible"] == ["PadFusion"], f  # the runner names the rewrite whose removal fixes it
    assert {f["dtype"] for f in bad} == {"float", "float16", "double"}


def test_onnx_reference_pool_disagreements():
    """onnx.reference against the text, on graphs of this family (each replaced in the test backend,
    tests/pattern_rewrites2.py): (1) Pad with a negative amount (Cropping) raises, while Pad's
    text says pads "add or remove (if negative)" -- the suite's oracle crops (checked against
    np_pad above); (2) MaxPool with asymmetric pads gives the wrong output shape: [1, 1, 3, 7] for
    a [1, 1, 4, 5] input, kernel 3, pads [0, 1, 2, 2], where the text's formula gives
    floor((4 + 0 + 2 - 3) / 1 + 1) = 4 and floor((5 + 1 + 2 - 3) / 1 + 1) = 6."""
    from onnx import TensorProto as T
    from onnx import helper as h
    from onnx.reference import ReferenceEvaluator

    c = next(c for c in _cases("Pool.pad_maxpool") if c.tags["v_amount"] == "negative" and c.dtype == "float")
    with pytest.raises(ValueError, match="negative"):
        ReferenceEvaluator(c.model).run(None, c.datasets[0].inputs)
    got = ReferenceEvaluator(c.model, new_ops=[pr2.Pad]).run(None, c.datasets[0].inputs)[0]
    np.testing.assert_array_equal(got, c.datasets[0].outputs[c.outputs[0].name])
    node = h.make_node("MaxPool", ["x"], ["y"], kernel_shape=[3, 3], pads=[0, 1, 2, 2])
    m = h.make_model(h.make_graph([node], "g", [h.make_tensor_value_info("x", T.FLOAT, [1, 1, 4, 5])],
                                  [h.make_tensor_value_info("y", T.FLOAT, None)]),
                 opset_imports=[h.make_opsetid("", 12)])
    x = np.random.default_rng(0).standard_normal((1, 1, 4, 5)).astype(np.float32)
    assert ReferenceEvaluator(m).run(None, {"x": x})[0].shape == (1, 1, 3, 7)
    want = pool(x.astype(np.float64), 3, [1, 1], [0, 1, 2, 2], "max")
    assert want.shape == (1, 1, 4, 6)
    fused = pr2.PaddedPool.__new__(pr2.PaddedPool)
    np.testing.assert_array_equal(fused._run(x, kind="max", kernel_shape=[3, 3], pads=[0, 1, 2, 2])[0], want)
