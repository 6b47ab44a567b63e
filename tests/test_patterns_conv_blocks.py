"""Tests of the convolution-block patterns (conformance/patterns/conv_blocks.py, issue 26).

* the composed oracle against an independent numpy composition (a direct N-D convolution loop
  written here, BatchNormalization and the activations from their formulas);
* onnx.reference on every unfused graph and a right Conv+BatchNormalization fold (parameters
  folded in float64, stored in T) pass every case; the fold fires on every foldable case and
  leaves the near-miss (BatchNormalization on a spatial axis) and graph-input parameters alone;
* a fold that drops the BatchNormalization's epsilon is caught as an optimizer failure (fails
  at ``opt``, passes at ``disable``), for every epsilon value, in float and double.
"""

from __future__ import annotations

from collections import Counter
from functools import lru_cache

import numpy as np
import onnx
import pytest

from conformance import levels
from conformance.patterns import conv_blocks, core
from conformance.runner import run_cases

import pattern_rewrites as pr
import pattern_rewrites2 as pr2

pytestmark = pytest.mark.filterwarnings("ignore::RuntimeWarning")


@lru_cache(maxsize=None)
def _cases(name: str) -> tuple:
    return tuple(core.pattern_cases(core.PATTERNS[name], 0))


def feeds(c) -> dict:
    """Every graph input, initializer and Constant output of ``c`` as float64."""
    ds = c.datasets[0].inputs
    out = {i.name: np.asarray(ds[i.name] if i.name in ds else i.value, dtype=np.float64) for i in c.inputs}
    for n in c.model.graph.node:
        if n.op_type == "Constant":
            out[n.output[0]] = onnx.numpy_helper.to_array(n.attribute[0].t).astype(np.float64)
    return out


def close(c, want: np.ndarray, k: float = 8.0, name: str | None = None) -> None:
    """The expected output equals the float64 ``want`` rounded to T within ``k`` ulps (relative to
    the output's largest magnitude: the oracle and the formula sum in different orders)."""
    name = name or c.outputs[0].name
    got = np.asarray(c.datasets[0].outputs[name], dtype=np.float64)
    assert got.shape == want.shape, (c.id, got.shape, want.shape)
    if not got.size:
        return
    eps = float(np.finfo(c.datasets[0].outputs[name].dtype).eps)
    np.testing.assert_allclose(got, want, rtol=k * eps, atol=k * eps * max(1.0, np.abs(want).max()), err_msg=c.id)


def conv_loop(x, w, b=None, pads=None, strides=None, group=1) -> np.ndarray:
    """Direct convolution by explicit loops over output positions (independent of the oracle)."""
    n, c = x.shape[:2]
    m, cg = w.shape[:2]
    ks = w.shape[2:]
    r = len(ks)
    pads = pads or [0] * (2 * r)
    strides = strides or [1] * r
    xp = np.pad(x, [(0, 0), (0, 0)] + [(pads[i], pads[i + r]) for i in range(r)])
    outs = [(xp.shape[2 + i] - ks[i]) // strides[i] + 1 for i in range(r)]
    y = np.zeros((n, m, *outs))
    per = m // group
    for oc in range(m):
        g = oc // per
        for pos in np.ndindex(*outs):
            sl = tuple(slice(pos[i] * strides[i], pos[i] * strides[i] + ks[i]) for i in range(r))
            patch = xp[(slice(None), slice(g * cg, (g + 1) * cg)) + sl]
            y[(slice(None), oc) + pos] = (patch * w[oc]).reshape(n, int(np.prod(patch.shape[1:]))).sum(axis=1)
    if b is not None:
        y += b.reshape((1, -1) + (1,) * r)
    return y


def conv_transpose_loop(x, w, b=None, strides=None, pads=None, output_padding=None) -> np.ndarray:
    """ConvTranspose (group 1) by scattering each input element's kernel (independent of the
    oracle): full output ``(i - 1) s + k + output_padding``, then the pads cropped."""
    n, c = x.shape[:2]
    m = w.shape[1]
    ks = w.shape[2:]
    r = len(ks)
    strides = strides or [1] * r
    pads = pads or [0] * (2 * r)
    op = output_padding or [0] * r
    full = [(x.shape[2 + i] - 1) * strides[i] + ks[i] + op[i] for i in range(r)]
    y = np.zeros((n, m, *full))
    for pos in np.ndindex(*x.shape[2:]):
        sl = tuple(slice(pos[i] * strides[i], pos[i] * strides[i] + ks[i]) for i in range(r))
        # x[:, :, pos] (n, c) times w (c, m, k...) -> (n, m, k...)
        y[(slice(None), slice(None)) + sl] += np.tensordot(x[(slice(None), slice(None)) + pos], w, axes=(1, 0))
    crop = tuple(slice(pads[i], full[i] - pads[r + i]) for i in range(r))
    y = y[(slice(None), slice(None)) + crop]
    if b is not None:
        y = y + b.reshape((1, -1) + (1,) * r)
    return y


def _conv_attrs_of(c, op: str) -> dict:
    n = next(n for n in c.model.graph.node if n.op_type == op)
    return {a.name: onnx.helper.get_attribute_value(a) for a in n.attribute}


def bn(y, f, tag, eps) -> np.ndarray:
    sh = (1, -1) + (1,) * (y.ndim - 2)
    p = {k: f[f"bn{tag}_{k}"].reshape(sh) for k in ("scale", "bias", "mean", "var")}
    return (y - p["mean"]) / np.sqrt(p["var"] + eps) * p["scale"] + p["bias"]


def activation(y, kind, opset: int = 13) -> np.ndarray:
    """The activation ``kind`` from its formula (attributes at their float32 values, as stored;
    HardSwish-14's alpha is 1/6 exactly: the text fixes it, no attribute rounds it)."""
    hs = lambda a, b_: np.clip(a * y + b_, 0, 1)  # noqa: E731
    return {"none": y, "relu": np.maximum(y, 0), "relu6": np.clip(y, 0, 6),
            "leakyrelu": np.where(y < 0, float(np.float32(0.1)) * y, y),
            "sigmoid": 1 / (1 + np.exp(-y)), "hardsigmoid": hs(float(np.float32(0.2)), 0.5),
            "hardswish": y * hs(1 / 6 if opset >= 14 else float(np.float32(1 / 6)), 0.5),
            "hardswish-decomposed": y * hs(float(np.float32(1 / 6)), 0.5)}[kind]


def _eps(v) -> float:
    e = v.get("epsilon", "default")
    return float(np.float32(1e-5 if e == "default" else float(e)))


def _v(c) -> dict:
    return {k[2:]: x for k, x in c.tags.items() if k.startswith("v_")}


def _conv_attrs(c, which: int = 0) -> dict:
    n = [n for n in c.model.graph.node if n.op_type == "Conv"][which]
    return {a.name: onnx.helper.get_attribute_value(a) for a in n.attribute}


# ============================================================================ oracle
def test_bn_act_oracle_is_the_formula():
    seen = Counter()
    for c in _cases("Conv.bn_act"):
        if c.dtype == "float16":
            continue
        f, v = feeds(c), _v(c)
        a = _conv_attrs(c)
        y = conv_loop(f["X"], f["W"], f.get("B"), a.get("pads"), a.get("strides"))
        if c.tags.get("near_miss"):
            perm = list(range(y.ndim))
            perm[1], perm[-1] = perm[-1], perm[1]
            z = bn(y.transpose(perm), f, "", _eps(v)).transpose(perm)
        else:
            z = bn(y, f, "", _eps(v))
        close(c, activation(z, v["act"], c.opset))
        if v["expose"] == "conv":
            close(c, y, name=c.outputs[1].name)
        seen[v["rank"]] += 1
        seen[v["act"]] += 1
    assert {seen[r] for r in ("1", "2", "3")} and min(seen[a] for a in conv_blocks.ACTS) >= 1, seen


def test_separable_and_affine_oracles_are_the_formula():
    n = Counter()
    for c in _cases("Conv.separable"):
        if c.dtype == "float16":
            continue
        f, v = feeds(c), _v(c)
        r = f["X"].ndim - 2
        y = conv_loop(f["X"], f["W_depthwise"], None, [1] * (2 * r), None, group=f["X"].shape[1])
        y = activation(bn(y, f, "_dw", _eps(v)), v["act"], c.opset)
        z = conv_loop(y, f["W_pointwise"], f.get("B_pointwise"))
        if v["pointwise_bn"] == "present":
            z = activation(bn(z, f, "_pw", _eps(v)), v["pointwise_act"], c.opset)
        close(c, z)
        n["separable"] += 1
    for c in _cases("Conv.affine"):
        if c.dtype == "float16":
            continue
        f, v = feeds(c), _v(c)
        y = conv_loop(f["X"], f["W"], f["B"]) * f["mul_scale"]
        if v["add"] == "present":
            y = y + f["add_shift"]
        close(c, y)
        n["affine"] += 1
    for c in _cases("ConvTranspose.bn_act"):
        if c.dtype == "float16":
            continue
        f, v = feeds(c), _v(c)
        a = _conv_attrs_of(c, "ConvTranspose")
        y = conv_transpose_loop(f["X"], f["W"], f.get("B"), a.get("strides"), a.get("pads"), a.get("output_padding"))
        close(c, activation(bn(y, f, "", _eps(v)), v["act"]))
        n["transpose"] += 1
    for c in _cases("Conv.prelu"):
        if c.dtype == "float16":
            continue
        f = feeds(c)
        r = f["X"].ndim - 2
        y = conv_loop(f["X"], f["W"], f["B"], [1] * (2 * r))
        close(c, np.where(y < 0, y * f["slope"], y))
        n["prelu-nm" if c.tags.get("near_miss") else "prelu"] += 1
    for c in _cases("Dense.bn"):
        if c.dtype == "float16":
            continue
        f, v = feeds(c), _v(c)
        y = f["X"] @ (f["W"].T if v["form"] == "gemm" else f["W"]) + f["B"]
        z = bn(y.T, f, "", _eps(v)).T if c.tags.get("near_miss") else bn(y, f, "", _eps(v))
        close(c, activation(z, v["act"]))
        n["dense"] += 1
    assert n["separable"] >= 20 and n["affine"] >= 20 and n["dense"] >= 20 and n["transpose"] >= 20
    assert n["prelu"] >= 20 and n["prelu-nm"] >= 2


def test_shapes_edges_and_valid_models():
    for p in conv_blocks.PATTERNS:
        cs = _cases(p.name)
        assert any(0 in c.datasets[0].outputs[c.outputs[0].name].shape for c in cs), p.name
        # no degenerate case: an output that is all zeros (every value below a Relu) tests no fold
        assert all(np.any(c.datasets[0].outputs[c.outputs[0].name]) for c in cs
                   if c.datasets[0].outputs[c.outputs[0].name].size), p.name
        for c in cs[::7]:
            onnx.checker.check_model(c.model, full_check=True)
    # HardSwish before opset 14 is written out as HardSigmoid(1/6, 1/2) * X
    hsw = Counter()
    for p in ("Conv.bn_act", "Conv.separable"):
        for c in _cases(p):
            ops = {n.op_type for n in c.model.graph.node}
            if c.tags["v_act"] == "hardswish":
                hsw[c.opset >= 14] += 1
                assert ("HardSwish" in ops) == (c.opset >= 14) and ("HardSigmoid" in ops) == (c.opset < 14), c.id
            if c.tags["v_act"] == "hardswish-decomposed":
                hsw["decomposed"] += 1
                assert "HardSwish" not in ops and "HardSigmoid" in ops, c.id
    assert hsw[True] and hsw["decomposed"], hsw


# ============================================================================ rewrites
def _run(cases, rewrites, name):
    be = pr2.RewriteBackend2(rewrites, name=name)
    res = [r.to_json() for r in run_cases(levels.expand(list(cases), be.levels), be)]
    s = levels.pattern_summary(res, list(be.levels))
    s["records"] = res
    return s


@lru_cache(maxsize=None)
def _summary(which: str) -> dict:
    rw = {"right": (pr2.conv_bn_fold(), pr2.gemm_bn_fold(), pr2.conv_transpose_bn_fold()),
          "drop-eps": (pr2.conv_bn_fold(drop_epsilon=True), pr2.gemm_bn_fold(drop_epsilon=True)),
          "conv-layout": (pr2.conv_transpose_bn_fold(conv_layout=True),)}[which]
    cases = [c for p in ("Conv.bn_act", "Conv.separable", "Dense.bn", "ConvTranspose.bn_act") for c in _cases(p)]
    return _run(cases, rw, which)


def test_reference_and_right_fold_pass_every_case():
    s = _summary("right")
    assert s["failures"] == [], s["failures"][:3]
    folded = Counter()
    for r in s["records"]:
        if r["level"] != "opt":
            continue
        gone = "BatchNormalization" not in r["optimized"]["ops"]
        t = r["tags"]
        if t.get("near_miss") or t["v_params"] == "input" or t.get("v_form") == "matmul-add":
            assert not gone, r["id"]  # the near-miss and graph-input parameters are left alone
        elif t["v_params"] != "input" and t.get("v_expose", "none") == "none":
            assert gone, r["id"]
            folded[t["pattern"]] += 1
    assert folded["Conv.bn_act"] >= 30 and folded["Conv.separable"] >= 20 and folded["Dense.bn"] >= 15 and \
        folded["ConvTranspose.bn_act"] >= 20, folded


def test_conv_transpose_fold_in_conv_layout_is_caught():
    """A ConvTranspose+BatchNormalization fold scaling W's axis 0 (Conv's output-channel axis; for
    ConvTranspose the input channels) is caught on the C = M cases it folds, and only there."""
    s = _summary("conv-layout")
    bad = s["failures"]
    assert len(bad) >= 10
    for f in bad:
        assert f["class"] == "optimizer" and f["levels"] == ["opt"] and f["outcomes"]["disable"] == "pass", f
        assert f["pattern"] == "ConvTranspose.bn_act" and f["variation"]["channels"] == "same", f
        assert f["responsible"] == ["ConvTransposeBNFusion"], f


def test_fold_dropping_epsilon_is_caught():
    s = _summary("drop-eps")
    bad = s["failures"]
    assert bad
    for f in bad:
        assert f["class"] == "optimizer" and f["levels"] == ["opt"] and f["outcomes"]["disable"] == "pass", f
        assert f["variation"]["params"] != "input" and not f.get("near_miss"), f
        assert f["responsible"] == ["GemmBNFusion" if f["pattern"] == "Dense.bn" else "ConvBNFusion"], f
    caught = {(f["dtype"], f["variation"]["epsilon"]) for f in bad if f["pattern"] == "Conv.bn_act"}
    for t in ("float", "double"):
        assert {(t, e) for e in ("default", "0.001", "0.1")} <= caught, caught
    assert ("float16", "0.1") in caught
    dense = {f["variation"]["epsilon"] for f in bad if f["pattern"] == "Dense.bn" and f["dtype"] != "float16"}
    assert dense >= {"0.001", "0.1"}, dense


def test_onnx_reference_batchnorm9_uses_batch_statistics():
    """The one disagreement with onnx.reference here: its BatchNormalization_9 normalizes with the
    batch's own mean and variance (blended with the given ones by momentum) whenever momentum has
    a value, and the evaluator fills in the schema default 0.9; BatchNormalization-9's text is
    inference only (the running mean and variance are inputs, Y the only output).  The suite's
    oracle follows the text (checked against the formula above); the test backend replaces the
    kernel (tests/pattern_rewrites2.py)."""
    from onnx.reference import ReferenceEvaluator

    c = next(c for c in _cases("Conv.bn_act") if c.opset == 13 and c.dtype == "double" and "canonical" in c.id)
    want = c.datasets[0].outputs[c.outputs[0].name]
    got = ReferenceEvaluator(c.model).run(None, c.datasets[0].inputs)[0]
    assert np.max(np.abs(got - want)) > 1e-3
    fixed = ReferenceEvaluator(c.model, new_ops=pr.FUSED_OPS + [pr2.BatchNormalization]).run(
        None, c.datasets[0].inputs)[0]
    np.testing.assert_allclose(fixed, want, rtol=1e-12, atol=1e-12)


def test_onnx_reference_conv_transpose_empty_batch():
    """onnx.reference's ConvTranspose raises on an empty batch (its per-image loop leaves the result
    unset); the text's output shape is defined and the oracle gives it; the test backend's
    ConvTranspose runs one zero image and keeps none (tests/pattern_rewrites2.py)."""
    from onnx.reference import ReferenceEvaluator

    c = next(c for c in _cases("ConvTranspose.bn_act") if c.tags["v_shape"] == "zero-batch" and c.dtype == "float")
    with pytest.raises(TypeError):
        ReferenceEvaluator(c.model).run(None, c.datasets[0].inputs)
    got = ReferenceEvaluator(c.model, new_ops=[pr2.ConvTranspose, pr2.BatchNormalization]).run(
        None, c.datasets[0].inputs)[0]
    want = c.datasets[0].outputs[c.outputs[0].name]
    assert got.shape == want.shape and want.shape[0] == 0 and want.size == 0


def test_reproducible():
    """Same seed, same bytes (the BatchNormalization means drawn from the peeked Conv output
    included); another seed, other cases."""
    p = core.PATTERNS["Conv.separable"]
    a = [c.content_hash for c in core.pattern_cases(p, 5)]
    assert a == [c.content_hash for c in core.pattern_cases(p, 5)]
    assert a != [c.content_hash for c in _cases("Conv.separable")]
