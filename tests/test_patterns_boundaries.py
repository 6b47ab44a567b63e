"""Tests of the dtype-boundary and no-op patterns (conformance/patterns/boundaries.py, issue 26).

* the composed oracle against numpy written here (astype through the middle type with truncation
  toward zero for integers, float16 overflow to inf; the island with float16 rounding after
  each node; the neutral arithmetic; Dropout in inference as the identity with an all-true mask);
* onnx.reference and the right rewrites (lossless Cast pairs removed, neutral arithmetic removed
  where it is the identity) pass every case and fire;
* wrong rewrites caught as optimizer failures: a Cast pair removed although the middle type is
  narrower / an integer / bool; a neutral Add removed although its constant broadcasts X to a
  larger shape; ``0 - X`` removed as if it were ``X - 0``.
"""

from __future__ import annotations

from collections import Counter
from functools import lru_cache

import numpy as np
import onnx
import pytest

from conformance.patterns import boundaries, core
from test_patterns_conv_blocks import _run, _v, close, feeds

import pattern_rewrites2 as pr2

pytestmark = pytest.mark.filterwarnings("ignore::RuntimeWarning")


@lru_cache(maxsize=None)
def _cases(name: str) -> tuple:
    return tuple(core.pattern_cases(core.PATTERNS[name], 0))


def _mid_np(t: str, mid: str):
    import ml_dtypes

    if mid == "int32":
        return np.int32
    if mid == "bool":
        return np.bool_
    return {("float", "wider"): np.float64, ("float", "same"): np.float32, ("float", "narrower"): np.float16,
            ("double", "wider"): np.float64, ("double", "same"): np.float64, ("double", "narrower"): np.float32,
            ("float16", "wider"): np.float32, ("float16", "same"): np.float16,
            ("float16", "narrower"): ml_dtypes.bfloat16}[(t, mid)]


def test_cast_pair_oracle():
    seen = Counter()
    for c in _cases("Cast.pair"):
        v = _v(c)
        x = c.datasets[0].inputs["X"]
        mid = _mid_np(c.dtype, v["mid"])
        with np.errstate(all="ignore"):
            y = (np.trunc(x).astype(mid) if mid is np.int32 else x.astype(mid)).astype(x.dtype)
        got = c.datasets[0].outputs[c.outputs[0].name]
        np.testing.assert_array_equal(got, y, err_msg=c.id)
        identity = np.array_equal(got, x)
        assert identity == (v["mid"] in ("wider", "same") or not x.size), c.id  # only the lossless pairs
        seen[v["mid"]] += 1
        seen["inf"] += bool(np.isinf(got).any())
    assert min(seen[m] for m in ("wider", "same", "narrower", "int32", "bool")) >= 3 and seen["inf"] >= 1, seen


def test_island_noop_dropout_oracles():
    import ml_dtypes

    seen = Counter()
    for c in _cases("Cast.fp16_island"):
        f, v = feeds(c), _v(c)
        h = np.float16 if v["island"] == "float16" else ml_dtypes.bfloat16
        r = lambda a: np.asarray(a).astype(h).astype(np.float64)  # noqa: E731
        y = r(r(r(f["X"]) @ f["W"]) + f["B"])
        y = {"relu": np.maximum(y, 0), "sigmoid": 1 / (1 + np.exp(-y)), "none": y}[v["act"]]
        want = r(y).astype(np.float32).astype(np.float64)
        got = c.datasets[0].outputs[c.outputs[0].name].astype(np.float64)
        # one half-type ulp: the oracle sums the products exactly, the formula in float64
        np.testing.assert_allclose(got, want, rtol=2 ** -7, atol=2 ** -7 * max(1.0, np.abs(want).max(initial=1)))
        seen["island"] += 1
    for c in _cases("Noop.arith"):
        f, v = feeds(c), _v(c)
        x, k = f["X"], f["neutral"]
        nm = c.tags.get("near_miss", "")
        y = k - x if "const-first-sub" in nm else {"add0": x + k, "sub0": x - k, "mul1": x * k, "div1": x / k}[v["op"]]
        close(c, np.maximum(y, 0), k=1)
        if nm.startswith("const_shape"):
            assert y.ndim == 3 and y.shape[0] == 2, c.id  # broadcast to a larger shape: not X's
        seen["noop-nm" if nm else "noop"] += 1
    for c in _cases("Dropout.inference"):
        f = feeds(c)
        close(c, f["X"] + f["R"], k=1)
        if len(c.outputs) > 1:
            m = c.datasets[0].outputs[c.outputs[1].name]
            assert m.dtype == np.bool_ and m.all() and m.shape == f["X"].shape, c.id
            seen["mask"] += 1
        seen["dropout"] += 1
    assert seen["island"] >= 10 and seen["noop"] >= 30 and seen["noop-nm"] >= 6 and seen["mask"] >= 3, seen


def test_valid_models():
    for p in boundaries.PATTERNS:
        cs = _cases(p.name)
        assert any(0 in c.datasets[0].outputs[c.outputs[0].name].shape for c in cs), p.name
        for c in cs[::3]:
            onnx.checker.check_model(c.model, full_check=True)


@lru_cache(maxsize=None)
def _summary(which: str) -> dict:
    rw = {"right": (pr2.cast_pair_removal(), pr2.noop_removal()),
          "cast-any": (pr2.cast_pair_removal(any_pair=True),),
          "noop-broadcast": (pr2.noop_removal(ignore_broadcast=True),),
          "noop-order": (pr2.noop_removal(ignore_order=True),)}[which]
    cases = [c for p in boundaries.PATTERNS for c in _cases(p.name)]
    return _run(cases, rw, which)


def test_reference_and_right_rewrites_pass_every_case():
    s = _summary("right")
    assert s["failures"] == [], s["failures"][:3]
    fired = Counter()
    for r in s["records"]:
        if r["level"] != "opt":
            continue
        t, ops = r["tags"], r["optimized"]["ops"]
        if t["pattern"] == "Cast.pair":
            assert ("Cast" not in ops) == (t["v_mid"] in ("wider", "same")), r["id"]
            fired["cast"] += "Cast" not in ops
        if t["pattern"] == "Noop.arith":
            gone = not ({"Add", "Sub", "Mul", "Div"} & set(ops))
            assert not (gone and t.get("near_miss")), r["id"]
            fired["noop"] += gone
    assert fired["cast"] >= 10 and fired["noop"] >= 20, fired


@pytest.mark.parametrize("which,pattern,check", [
    ("cast-any", "Cast.pair", lambda f: f["variation"]["mid"] in ("narrower", "int32", "bool")),
    ("noop-broadcast", "Noop.arith", lambda f: f["near_miss"] == "const_shape=larger"),
    ("noop-order", "Noop.arith", lambda f: f["near_miss"] == "order=const-first-sub"),
])
def test_wrong_rewrites_are_optimizer_failures(which, pattern, check):
    s = _summary(which)
    assert len(s["failures"]) >= 2, which
    for f in s["failures"]:
        assert f["class"] == "optimizer" and f["levels"] == ["opt"] and f["outcomes"]["disable"] == "pass", f
        assert f["pattern"] == pattern and check(f), f
        assert f["responsible"] and f["responsible"][0] in ("CastPairElimination", "NoopElimination"), f
    if which == "cast-any":
        assert {f["variation"]["mid"] for f in s["failures"]} == {"narrower", "int32", "bool"}
