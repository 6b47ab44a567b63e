"""Tests of the upsampling patterns (conformance/patterns/upsample.py, issue 26).

* the composed oracle against numpy written here: Resize as one interpolation matrix per axis
  built from the coordinate transformations' formulas (asymmetric, half_pixel,
  pytorch_half_pixel, align_corners), nearest floor / round_prefer_floor, linear with clamped
  taps; the convolution by the direct loop of test_patterns_conv_blocks;
* onnx.reference passes every case (no optimizing rewrite: the backend's ``opt`` level equals
  ``disable`` here);
* the tolerance rejects a wrong coordinate transformation (half_pixel read as asymmetric), a
  wrong kernel a runtime could fuse in.
"""

from __future__ import annotations

from collections import Counter
from functools import lru_cache

import numpy as np
import onnx
import pytest

from conformance.patterns import core, upsample
from conformance.tolerance import compare
from test_patterns_conv_blocks import _run, _v, close, conv_loop, feeds

pytestmark = pytest.mark.filterwarnings("ignore::RuntimeWarning")


@lru_cache(maxsize=None)
def _cases(name: str = "Resize.after_conv") -> tuple:
    return tuple(core.pattern_cases(core.PATTERNS[name], 0))


def axis_matrix(in_len: int, out_len: int, scale: float, mode: str, ctm: str, nearest_mode: str) -> np.ndarray:
    """(out_len, in_len) interpolation matrix of one axis by the Resize text's formulas."""
    i = np.arange(out_len, dtype=np.float64)
    if ctm == "asymmetric":
        x = i / scale
    elif ctm == "half_pixel":
        x = (i + 0.5) / scale - 0.5
    elif ctm == "pytorch_half_pixel":
        x = (i + 0.5) / scale - 0.5 if out_len > 1 else np.zeros_like(i)
    else:  # align_corners
        x = i * (in_len - 1) / (out_len - 1) if out_len > 1 else np.zeros_like(i)
    m = np.zeros((out_len, in_len))
    for o, xo in enumerate(x):
        if mode == "nearest":
            j = int(np.floor(xo)) if nearest_mode == "floor" else int(np.ceil(xo - 0.5))
            m[o, min(max(j, 0), in_len - 1)] = 1.0
        else:
            xc = min(max(xo, 0.0), in_len - 1)
            j0 = int(np.floor(xc))
            j1 = min(j0 + 1, in_len - 1)
            m[o, j0] += 1 - (xc - j0)
            m[o, j1] += xc - j0
    return m


def resize(x: np.ndarray, out_shape, scales, attrs) -> np.ndarray:
    for ax in range(x.ndim):
        if out_shape[ax] == x.shape[ax] and scales[ax] == 1.0:
            continue
        m = axis_matrix(x.shape[ax], out_shape[ax], scales[ax], attrs["mode"],
                        attrs.get("coordinate_transformation_mode", "half_pixel"),
                        attrs.get("nearest_mode", "round_prefer_floor"))
        x = np.moveaxis(np.tensordot(m, np.moveaxis(x, ax, 0), axes=(1, 0)), 0, ax)
    return x


def _expected(c, ctm_override: str | None = None) -> np.ndarray:
    f = feeds(c)
    rs = next(n for n in c.model.graph.node if n.op_type == "Resize")
    attrs = {a.name: onnx.helper.get_attribute_value(a) for a in rs.attribute}
    attrs = {k: v.decode() if isinstance(v, bytes) else v for k, v in attrs.items()}
    if ctm_override:
        attrs["coordinate_transformation_mode"] = ctm_override
    r = f["X"].ndim - 2
    y = np.maximum(conv_loop(f["X"], f["W"], f["B"], [1] * (2 * r)), 0)
    if "scales" in f:
        sc = [float(s) for s in f["scales"]]
        out = [int(np.floor(d * s)) for d, s in zip(y.shape, sc)]
    else:
        out = [int(s) for s in f["sizes"]]
        sc = [o / d if d else 1.0 for o, d in zip(out, y.shape)]
    y = resize(y, out, sc, attrs)
    if "W2" in f:
        y = conv_loop(y, f["W2"])
    return y


def test_oracle_is_the_formula():
    seen = Counter()
    for c in _cases():
        if c.dtype == "float16":
            continue
        close(c, _expected(c), k=8)
        seen[_v(c)["mode"]] += 1
    assert min(seen[m] for m in upsample.MODES) >= 2, seen


def test_wrong_coordinate_transformation_is_rejected():
    """half_pixel / pytorch_half_pixel / align_corners read as asymmetric (a fused upsampling kernel
    that assumes one form) fails the tolerance on every non-empty bilinear case."""
    n = 0
    for c in _cases():
        v = _v(c)
        if not v["mode"].startswith("bilinear") or c.dtype == "float16" or \
                not c.datasets[0].outputs[c.outputs[0].name].size:
            continue
        out = c.outputs[0]
        wrong = _expected(c, "asymmetric").astype(c.datasets[0].outputs[out.name].dtype)
        res = compare(out.name, wrong, c.datasets[0].outputs[out.name], out.tolerance)
        assert not res.passed, c.id
        n += 1
    assert n >= 5


def test_valid_models_and_reference_passes():
    cs = _cases()
    assert any(0 in c.datasets[0].outputs[c.outputs[0].name].shape for c in cs)
    for c in cs[::4]:
        onnx.checker.check_model(c.model, full_check=True)
    s = _run(cs, (), "none")
    assert s["failures"] == [], s["failures"][:3]
