"""Tests of the CumProd-26 entry (``conformance/ops/reduce_index.py``, beside CumSum).

* the oracle against the text's example, onnx's node tests, numpy's cumprod on integers and an
  independent per-element loop of exact rational products (IEEE rules for the special values)
  on every generated value case;
* kernels through ``KernelBackend``: legitimate ones (a running product in the float32
  accumulator, a Hillis-Steele scan in another order, float64) pass every case; wrong ones
  (exclusive ignored, reverse ignored, a running product in the 16-bit type itself over a long
  row) fail cases the right kernel passes;
* onnx.reference's disagreements explained (it accumulates 16-bit types in the type itself,
  and refuses the contested one-element 1-D axis);
* error cases rejected; coverage of every type and attribute state.
"""

from __future__ import annotations

import math
from collections import Counter
from fractions import Fraction


import numpy as np
import onnx
import pytest

from conformance.backends import resolve_backend
from conformance.backends.kernel import KernelBackend
from conformance.coverage import compute_coverage
from conformance.ops.entry import Ctx
from conformance.ops.reduce_index import cumprod
from conformance.runner import run_cases
from oracle_checks import single_node_tests, sort_findings  # tests/oracle_checks.py

pytestmark = pytest.mark.filterwarnings("ignore::RuntimeWarning")
OPS = ["CumProd"]


def _ctx(t="float"):
    return Ctx("CumProd", 26, 26, {"x": t, "axis": "int64"}, {"y": t})


def test_text_example():
    x = np.array([1.0, 2.0, 3.0])
    ax = np.array(0)
    assert cumprod(_ctx(), x, ax).tolist() == [1, 2, 6]
    assert cumprod(_ctx(), x, ax, exclusive=1).tolist() == [1, 1, 2]
    assert cumprod(_ctx(), x, ax, reverse=1).tolist() == [6, 6, 3]
    assert cumprod(_ctx(), x, ax, exclusive=1, reverse=1).tolist() == [6, 3, 1]


def test_integers_match_numpy_and_never_wrap():
    rng = np.random.default_rng(1)
    r = rng.integers(-3, 4, size=(3, 4, 5))
    for a in range(-3, 3):
        got = cumprod(_ctx("int64"), r.astype(object), np.array(a))
        assert np.array_equal(got.astype(np.int64), np.cumprod(r, axis=a))
        got = cumprod(_ctx("int64"), r.astype(object), np.array(a), reverse=1)
        assert np.array_equal(got.astype(np.int64), np.flip(np.cumprod(np.flip(r, a), axis=a), a))
    with pytest.raises(ValueError, match="outside the type"):
        cumprod(_ctx("int32"), np.array([2**20, 2**20], dtype=object), np.array(0))


def test_oracle_reproduces_the_node_tests():
    tests = single_node_tests(("CumProd",), ("cumprod",))
    assert len(tests) >= 5
    for t in tests:
        node = t.model.graph.node[0]
        attrs = {a.name: onnx.helper.get_attribute_value(a) for a in node.attribute}
        for ins, outs in t.data_sets:
            x, axis = ins
            tn = "float" if x.dtype.kind == "f" else "int64"
            xi = x.astype(np.float64) if x.dtype.kind == "f" else x.astype(object)
            got = cumprod(_ctx(tn), xi, axis, **attrs)
            assert np.allclose(got.astype(np.float64), outs[0].astype(np.float64), rtol=1e-6), t.name


def _loop(x, axis, exclusive, reverse):
    """Element by element: the product of the elements before (exclusive) or up to and
    including (inclusive) it along the axis, counted from the end with reverse."""
    x = np.asarray(x)
    out = np.empty(x.shape, dtype=object)
    n = x.shape[axis]
    for idx in np.ndindex(x.shape):
        j = idx[axis]
        span = range(j + 1, n) if reverse else range(0, j)
        if not exclusive:
            span = list(span) + [j]
        vals = [x[idx[:axis] + (k,) + idx[axis + 1:]] for k in span]
        if x.dtype == object:
            out[idx] = math.prod(int(v) for v in vals)
            continue
        fl = [float(v) for v in vals]
        if any(math.isnan(v) for v in fl) or (any(math.isinf(v) for v in fl) and 0.0 in fl):
            out[idx] = math.nan
            continue
        sign = (-1) ** sum(math.copysign(1, v) < 0 for v in fl)
        if any(math.isinf(v) for v in fl):
            out[idx] = sign * math.inf
        elif 0.0 in fl:
            out[idx] = sign * 0.0
        else:
            q = math.prod((Fraction(abs(v)) for v in fl), start=Fraction(1))
            try:
                out[idx] = sign * float(q)
            except OverflowError:
                out[idx] = sign * math.inf
    return out


def _feeds(case):
    ds = case.datasets[0].inputs
    return {i.name: (ds[i.name] if i.name in ds else i.value) for i in case.inputs}


def test_oracle_is_the_loop_on_every_value_case(value_cases):
    n = 0
    for c in value_cases:
        f = _feeds(c)
        x, axis = f["x"], int(np.ravel(f["axis"])[0])
        xin = x.astype(object) if x.dtype.kind in "iu" else x.astype(np.float64)
        ex, rv = c.attributes.get("exclusive", 0), c.attributes.get("reverse", 0)
        if x.ndim == 0 or x.size > 600:
            continue
        mine = _loop(xin, axis % x.ndim, ex, rv)
        got = cumprod(Ctx("CumProd", 26, 26, {"x": c.tags["dtype"], "axis": "int64"}, {}), xin, np.array(axis),
                      exclusive=ex, reverse=rv)
        if x.dtype.kind in "iu":
            assert got.tolist() == mine.tolist(), c.id
        else:
            a, b = got.astype(np.float64), mine.astype(np.float64)
            assert np.array_equal(a, b, equal_nan=True), c.id
            assert np.array_equal(np.signbit(a), np.signbit(b)), c.id
        n += 1
    assert n >= 150


# ============================================================================ kernels
def make_kernel(mode="running", flaw=None):
    """CumProd: ``running`` (a running product in the accumulator: float32 for 16-bit types,
    the type itself otherwise), ``scan`` (Hillis-Steele: log2(n) rounds of pairwise products),
    ``float64``; ``flaw``: ``exclusive-ignored``, ``reverse-ignored``, ``half-accumulator``."""

    def kernel(inputs, attrs, outputs, opset):
        x, axis = inputs["x"], inputs["axis"]
        if axis.dtype.kind != "i" or axis.size != 1 or axis.ndim > 1:
            raise ValueError("axis must be one int32/int64 value")
        a = int(axis.reshape(-1)[0])
        if not -x.ndim <= a < x.ndim:
            raise ValueError("axis out of range")
        ex = int(attrs.get("exclusive", 0)) and flaw != "exclusive-ignored"
        rv = int(attrs.get("reverse", 0)) and flaw != "reverse-ignored"
        dt = x.dtype
        if dt.kind in "iu":
            acc = dt
        elif mode == "float64":
            acc = np.float64
        else:
            acc = np.float32 if dt.itemsize == 2 and flaw != "half-accumulator" else dt
        r = np.moveaxis(x, a, -1).astype(acc)
        if rv:
            r = r[..., ::-1]
        if ex:  # shift right, the empty product 1 first
            r = np.concatenate([np.ones(r.shape[:-1] + (1,), dtype=acc), r[..., :-1]], axis=-1)[..., :r.shape[-1]]
        with np.errstate(all="ignore"):
            c = r.copy()
            if mode == "scan":
                k = 1
                while k < c.shape[-1]:
                    c[..., k:] = (c[..., k:] * c[..., :-k]).astype(acc)
                    k *= 2
            else:
                for j in range(1, c.shape[-1]):
                    c[..., j] = (c[..., j - 1] * c[..., j]).astype(acc)
        if rv:
            c = c[..., ::-1]
        return {outputs[0]: np.moveaxis(c, -1, a).astype(dt)}

    return kernel


def _run(cases, kernel, name, check=True):
    return run_cases(cases, KernelBackend({"CumProd": kernel}, name=name, check=check))


@pytest.mark.parametrize("mode", ["running", "scan", "float64"])
def test_legitimate_kernels_pass_everything(mode, value_cases):
    results = _run(value_cases, make_kernel(mode), mode)
    bad = [(c.id, r.outcome, r.message[:200]) for c, r in zip(value_cases, results) if r.outcome != "pass"]
    assert not bad, (len(bad), bad[:5])


def _long(c):
    return c.tags["shape"].startswith("long")


WRONG = {
    "exclusive-ignored": (lambda c: c.attributes.get("exclusive") == 1 and c.inputs[0].shape and
                          min(c.inputs[0].shape) > 0, 30),
    "reverse-ignored": (lambda c: c.attributes.get("reverse") == 1 and c.inputs[0].shape and
                        min(c.inputs[0].shape) > 0, 30),
    "half-accumulator": (lambda c: _long(c) and c.tags["dtype"] in ("float16", "bfloat16"), 4),
}


@pytest.mark.parametrize("flaw", sorted(WRONG))
def test_wrong_kernels_are_caught(flaw, value_cases):
    keep, least = WRONG[flaw]
    cases = [c for c in value_cases if keep(c)]
    assert len(cases) >= least, len(cases)
    results = _run(cases, make_kernel(flaw=flaw), flaw, check=False)
    n = Counter(r.outcome for r in results)
    assert n["fail"] >= least, n
    by_type = {c.tags["dtype"] for c, r in zip(cases, results) if r.outcome == "fail"}
    if flaw != "half-accumulator":
        assert {"float", "double", "float16", "bfloat16", "int32", "uint64"} <= by_type, by_type


def test_error_cases_are_rejected(suite):
    cases = [c for c in suite if c.expect_error]
    assert {c.tags["error"] for c in cases} >= {"axis=2", "axis=-3", "axis-float", "axis-2-values"}
    results = _run(cases, make_kernel(), "legit")
    assert all(r.outcome == "pass" for r in results), [(c.id, r.message[:100]) for c, r in zip(cases, results)
                                                        if r.outcome != "pass"]


def _reference_disagreement(case, res) -> str | None:
    """``half-accumulator``: onnx.reference's ``np.cumprod`` runs in the 16-bit type itself, which
    over a long row leaves the float32-accumulator bound; ``contested-axis``: the one-element
    1-D axis it refuses."""
    if case.contested:
        return "contested-axis"
    if res.outcome == "fail" and case.tags["dtype"] in ("float16", "bfloat16"):
        return "half-accumulator"
    return None


def test_agreement_with_onnx_reference(suite):
    results = run_cases(suite, resolve_backend("onnx-reference"))
    why, unexplained = sort_findings(suite, results, _reference_disagreement)
    assert not unexplained, (len(unexplained), unexplained[:5])
    assert set(why) <= {"half-accumulator", "contested-axis"} and why["half-accumulator"] >= 2, why
    # on the same cases, a running product in the 16-bit type is what fails
    half = [c for c, r in zip(suite, results) if r.outcome == "fail"]
    again = _run(half, make_kernel(flaw="half-accumulator"), "half", check=False)
    assert all(r.outcome == "fail" for r in again), Counter(r.outcome for r in again)
    ok = Counter(c.tags["dtype"] for c, r in zip(suite, results) if r.outcome == "pass")
    assert all(ok[t] >= 10 for t in ("float16", "bfloat16", "float", "double", "int32", "int64", "uint32", "uint64"))


def test_coverage_and_states(suite, value_cases):
    cov = compute_coverage(suite)
    for v, e in cov["ops"]["CumProd"]["versions"].items():
        assert not e["missing"], (v, e["missing"][:3])
    states = Counter((c.attributes.get("exclusive", 0), c.attributes.get("reverse", 0)) for c in value_cases)
    assert set(states) == {(0, 0), (1, 0), (0, 1), (1, 1)}, states
    axes = {int(np.ravel(_feeds(c)["axis"])[0]) for c in value_cases}
    assert {-4, -2, -1, 0, 1, 2, 3} <= axes
    # zeros and signed values reach the integer and float cases
    ints = [_feeds(c)["x"] for c in value_cases if c.tags["dtype"] == "int32"]
    assert any((x == 0).any() for x in ints) and any((x < 0).any() for x in ints)
    assert any(c.tags["numerics"] == "special" for c in value_cases)
    assert 150 <= len(value_cases) <= 400

