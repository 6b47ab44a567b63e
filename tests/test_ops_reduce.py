"""Reductions and scans (conformance/ops/reduce.py): the ten Reduce*, ArgMax/ArgMin, CumSum, TopK.

* the oracles against independent formulas (numpy in float64 on data whose results are
  exact, Python ints at the 64-bit extremes, ``math.fsum``/Fraction, mpmath square roots, a
  numpy max-shifted logsumexp, numpy's argmax/cumsum) and the spec's worked examples (onnx's
  node-test cases, CumSum's and TopK's texts);
* the axes semantics (attribute, input, ``noop_with_empty_axes`` with its non-reduction
  step, negative axes) and the tolerances: the accumulation bounds hold for forward,
  reverse, pairwise and float32 accumulation (and every way to divide a mean), are sharp,
  and a 16-bit accumulator breaks them; the data classes keep their promises (partial
  products inside the accumulator, integer logs with a margin);
* coverage: every type combination of every version, every pattern, the noop / empty-axes /
  empty-set combinations the texts distinguish, empty reductions only where the version's
  text states the result, every identity kind, ties for ArgMax/TopK, every
  exclusive/reverse, largest/sorted state;
* legitimate kernels (numpy, sequential, reverse, pairwise, float64, the function bodies of
  18, a Hillis-Steele scan, the last of tied extremes before ArgMax-12, TopK's unsorted
  output reversed) pass every case; wrong kernels are caught: the issue's ReduceSum
  ignoring noop_with_empty_axes, ReduceMax dropping NaN, ArgMax returning the last of equal
  maxima with select_last_index=0, and keepdims ignored, negative axes not wrapped, CumSum
  exclusive/reverse swapped, TopK's ties by the higher index, a 16-bit accumulator, 64-bit
  integers through double, empty axes as a no-op, an empty set as 0, LogSumExp without its
  max shift, L2 without its root, noop skipping |x| / x^2 / log...;
* explore mode's draws pass the numpy kernels; it finds ArgMax's wrong tie;
* onnx.reference and onnxruntime: every disagreement asserted, with who is right.
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
from conformance.ops import reduce as R
from conformance.reference import reduce as RR
from conformance.ops import reduce_index as RI
from conformance.ops.entry import Ctx
from conformance.opspec import op_spec
from conformance.runner import run_cases

pytestmark = pytest.mark.filterwarnings("ignore::RuntimeWarning")
OPS = ["ReduceSum", "ReduceMax", "ReduceMin", "ReduceMean", "ArgMax", "ArgMin", "ReduceL1", "ReduceSumSquare",
       "ReduceL2", "ReduceProd", "ReduceLogSum", "ReduceLogSumExp", "CumSum", "TopK"]
ENTRY = {e.op: e for e in R.ENTRIES + RI.ENTRIES}
HALF = {"float16": np.float16, "bfloat16": ml_dtypes.bfloat16}


def _ctx(op, version, t="float", attrs=None):
    types = {"data": t}
    if RR.axes_input_since(op) and version >= RR.axes_input_since(op):
        types["axes"] = "int64"
    return Ctx(op, version, version, types, {"reduced": t}, dict(attrs or {}))


def _objs(vals, shape=None):
    out = np.empty(len(vals), dtype=object)
    out[:] = [int(v) for v in vals]
    return out.reshape(shape if shape is not None else (len(vals),))


def _call(op, version, x, axes_in=None, t="float", **attrs):
    """The oracle with the version's schema defaults filled in (as the engine does);
    ``axes_in`` is the input (input versions), an ``axes`` keyword the attribute."""
    vs = op_spec(op).versions[version]
    full = {k: a.default for k, a in vs.attributes.items() if a.default is not None}
    full.update(attrs)
    e = ENTRY[op]
    if "noop_with_empty_axes" in full:
        return e.oracle(_ctx(op, version, t, full), x, None if axes_in is None else np.asarray(axes_in), **full)
    return e.oracle(_ctx(op, version, t, full), x, **full)


# ============================================================================ axes semantics
def test_reduced_axes_semantics():
    """Attribute versions: axes omitted = every axis, negative wrapped; input versions: axes
    absent or empty = every axis unless noop_with_empty_axes, then none; out of range raises."""
    assert RR.reduced_axes({"keepdims": 1}, None, 3) == (0, 1, 2)
    assert RR.reduced_axes({"axes": [2, 0]}, None, 3) == (0, 2)
    assert RR.reduced_axes({"axes": [-1, 0]}, None, 3) == (0, 2)
    assert RR.reduced_axes({"noop_with_empty_axes": 0}, None, 3) == (0, 1, 2)
    assert RR.reduced_axes({"noop_with_empty_axes": 0}, np.array([], dtype=np.int64), 3) == (0, 1, 2)
    assert RR.reduced_axes({"noop_with_empty_axes": 1}, None, 3) == ()
    assert RR.reduced_axes({"noop_with_empty_axes": 1}, np.array([], dtype=np.int64), 3) == ()
    assert RR.reduced_axes({"noop_with_empty_axes": 1}, np.array([-2]), 3) == (1,)
    assert RR.reduced_axes({"keepdims": 1}, None, 0) == ()
    for bad in ([3], [-4]):
        with pytest.raises(ValueError):
            RR.reduced_axes({"axes": bad}, None, 3)
        with pytest.raises(ValueError):
            RR.reduced_axes({"noop_with_empty_axes": 0}, np.array(bad), 3)
    assert RR.axes_input_since("ReduceSum") == 13
    assert {op: RR.axes_input_since(op) for op in ("ReduceMean", "ReduceMax", "ReduceL2")} == \
        {"ReduceMean": 18, "ReduceMax": 18, "ReduceL2": 18}


def test_rows_round_trip():
    rng = np.random.default_rng(0)
    x = rng.normal(size=(2, 3, 4, 5))
    for red in ((), (0,), (1, 3), (0, 1, 2, 3), (2,)):
        rows = RR.to_rows(x, red)
        assert rows.shape[-1] == int(np.prod([x.shape[d] for d in red]))
        assert np.array_equal(RR.from_rows(rows, x.shape, red), x)
    z = np.zeros((2, 0, 3))
    assert RR.to_rows(z, (1,)).shape == (2, 3, 0)
    assert RR.from_rows(RR.to_rows(z, (1,)), z.shape, (1,)).shape == z.shape


# ============================================================================ ReduceSum oracle
def test_reduce_sum_spec_examples():
    """onnx/backend/test/case/node/reducesum.py: keepdims, do_not_keepdims, negative axes,
    default axes, empty axes with noop, the empty set."""
    data = np.array([[[1, 2], [3, 4]], [[5, 6], [7, 8]], [[9, 10], [11, 12]]], dtype=np.float64)
    for v in (1, 11, 13):
        ax = {"axes": [1]} if v < 13 else {}
        axes = [1] if v >= 13 else None
        got = _call("ReduceSum", v, data, axes, keepdims=1, **ax)
        assert got.tolist() == [[[4, 6]], [[12, 14]], [[20, 22]]]
        got = _call("ReduceSum", v, data, axes, keepdims=0, **ax)
        assert got.tolist() == [[4, 6], [12, 14], [20, 22]]
        assert _call("ReduceSum", v, data, None, keepdims=1).tolist() == [[[78]]]
    assert _call("ReduceSum", 11, data, None, axes=[-2], keepdims=1).tolist() == [[[4, 6]], [[12, 14]], [[20, 22]]]
    assert _call("ReduceSum", 13, data, [-2], keepdims=1).tolist() == [[[4, 6]], [[12, 14]], [[20, 22]]]
    # empty axes: noop returns the input, otherwise every axis
    assert np.array_equal(_call("ReduceSum", 13, data, [], noop_with_empty_axes=1), data)
    assert np.array_equal(_call("ReduceSum", 13, data, None, noop_with_empty_axes=1, keepdims=0), data)
    assert _call("ReduceSum", 13, data, [], keepdims=0).tolist() == 78
    # the empty set: reduce_sum_empty_set: shape [2, 0, 4], axes [1] -> zeros [2, 1, 4]
    e = _call("ReduceSum", 13, np.zeros((2, 0, 4)), [1], keepdims=1)
    assert e.shape == (2, 1, 4) and not e.any()
    assert _call("ReduceSum", 1, np.zeros((0, 3)), None, keepdims=0).tolist() == 0


def test_reduce_sum_against_numpy_and_python():
    """Small-integer float data (every sum exact in float64): numpy agrees for every axes
    choice and keepdims; int64 at the extremes: Python's exact sum, which no float64 path
    gives (2^53 + 1 is not a double); IEEE rules for NaN and infinities."""
    rng = np.random.default_rng(1)
    x = rng.integers(-50, 50, size=(3, 4, 5)).astype(np.float64)
    for axes in ([0], [1, 2], [2, 0], [-1], [0, 1, 2]):
        for kd in (0, 1):
            want = np.sum(x, axis=tuple(axes), keepdims=bool(kd))
            assert np.array_equal(_call("ReduceSum", 11, x, None, axes=axes, keepdims=kd), want)
            assert np.array_equal(_call("ReduceSum", 13, x, axes, keepdims=kd), want)
    big = _objs([2**63 - 1, -(2**63), 2**53 + 1, 0], (2, 2))
    got = _call("ReduceSum", 13, big, [1], t="int64", keepdims=0)
    assert got.tolist() == [-1, 2**53 + 1]
    with pytest.raises(ValueError, match="outside int64"):
        _call("ReduceSum", 13, _objs([2**63 - 1, 1]), [0], t="int64")
    spec = np.array([[math.nan, 1.0], [math.inf, 1.0], [math.inf, -math.inf], [-math.inf, 5.0]])
    got = _call("ReduceSum", 13, spec, [1], keepdims=0)
    assert math.isnan(got[0]) and got[1] == math.inf and math.isnan(got[2]) and got[3] == -math.inf
    # exact: 1 + 2^-53 + 2^-53 is 1 + 2^-52, not float64's forward 1
    e = 2.0 ** -53
    assert _call("ReduceSum", 13, np.array([1.0, e, e]), [0], keepdims=0) == 1 + 2 * e


# ============================================================================ ReduceMax / ReduceMin oracle
def test_reduce_max_min_spec_examples():
    """onnx/backend/test/case/node/reducemax.py / reducemin.py: keepdims, negative axes, the
    bool inputs of version 20, the empty set (-inf / +inf)."""
    data = np.array([[[5, 1], [20, 2]], [[30, 1], [40, 2]], [[55, 1], [60, 2]]], dtype=np.float64)
    for v in (1, 11, 12, 13):
        got = _call("ReduceMax", v, data, None, axes=[1], keepdims=1)
        assert got.tolist() == [[[20, 2]], [[40, 2]], [[60, 2]]]
        assert _call("ReduceMin", v, data, None, axes=[1], keepdims=0).tolist() == [[5, 1], [30, 1], [55, 1]]
    for v in (18, 20):
        assert _call("ReduceMax", v, data, [-2], keepdims=1).tolist() == [[[20, 2]], [[40, 2]], [[60, 2]]]
        assert _call("ReduceMin", v, data, None, keepdims=0).tolist() == 1
        assert np.array_equal(_call("ReduceMax", v, data, [], noop_with_empty_axes=1), data)
    b = np.array([[True, True], [True, False], [False, True], [False, False]])
    assert _call("ReduceMax", 20, b, [1], t="bool", keepdims=1).tolist() == [[True], [True], [True], [False]]
    assert _call("ReduceMin", 20, b, [1], t="bool", keepdims=1).tolist() == [[True], [False], [False], [False]]
    e = _call("ReduceMax", 18, np.zeros((2, 0, 4)), [1], keepdims=1)
    assert e.shape == (2, 1, 4) and np.all(e == -np.inf)
    assert np.all(_call("ReduceMin", 18, np.zeros((2, 0, 4)), [1], keepdims=1) == np.inf)
    assert _call("ReduceMax", 20, np.zeros((0,), dtype=bool), None, t="bool", keepdims=0).tolist() is False
    assert _call("ReduceMin", 20, np.zeros((0,), dtype=bool), None, t="bool", keepdims=0).tolist() is True
    assert _call("ReduceMax", 13, _objs([], (0, 2)), None, t="int8", keepdims=0).tolist() == -128
    assert _call("ReduceMin", 13, _objs([], (0, 2)), None, t="uint64", keepdims=0).tolist() == 2**64 - 1


def test_reduce_max_min_against_numpy():
    """numpy's max/min (NaN propagating) on random data with NaN and infinities, every axes
    choice; 64-bit integers at the extremes exactly."""
    rng = np.random.default_rng(2)
    x = rng.normal(size=(3, 4, 5))
    x[0, 1, 2], x[2, 3, 4], x[1, 0, 0] = np.nan, np.inf, -np.inf
    for axes in ([0], [1, 2], [2, 0], [-1], [0, 1, 2]):
        for kd in (0, 1):
            for op, f in (("ReduceMax", np.max), ("ReduceMin", np.min)):
                want = f(x, axis=tuple(axes), keepdims=bool(kd))
                got = _call(op, 18, x, axes, keepdims=kd)
                assert np.array_equal(got, want, equal_nan=True), (op, axes)
    big = _objs([2**63 - 1, 2**63 - 2, -(2**63), -(2**63) + 1], (2, 2))
    assert _call("ReduceMax", 13, big, None, t="int64", axes=[1], keepdims=0).tolist() == [2**63 - 1, -(2**63) + 1]
    assert _call("ReduceMin", 13, big, None, t="int64", axes=[0], keepdims=0).tolist() == [-(2**63), -(2**63) + 1]


def test_empty_set_identity_of_every_kind(value_cases):
    """Empty reductions of ReduceMax/Min are generated for floats (-inf/+inf), integers (the
    type's minimum/maximum) and bool (False/True), and never at version 12 (its text says
    nothing of the empty set)."""
    for op, fn in (("ReduceMax", "max"), ("ReduceMin", "min")):
        cs = [c for c in value_cases if c.op == op and _empty_reduction(c)]
        assert 12 not in {c.since_version for c in cs}
        kinds = set()
        for c in cs:
            out = np.asarray(next(iter(c.datasets[0].outputs.values())))
            t = c.tags["dtype"]
            k = "bool" if t == "bool" else ("int" if np.dtype(out.dtype).kind in "iu" else "float")
            want = {"bool": fn == "min", "int": (np.iinfo(out.dtype).min if fn == "max" else
                                                  np.iinfo(out.dtype).max) if k == "int" else None,
                    "float": -np.inf if fn == "max" else np.inf}[k]
            assert np.all(out == want), c.id
            kinds.add(k)
        assert kinds == {"bool", "int", "float"}, (op, kinds)


# ============================================================================ ReduceMean oracle
def test_reduce_mean_spec_examples_and_exactness():
    """onnx/backend/test/case/node/reducemean.py (keepdims, default axes, negative axes);
    the exact mean (not float64's sum / n); integer means exact, a non-integer integer mean
    and the empty set refused (never generated)."""
    data = np.array([[[5, 1], [20, 2]], [[30, 1], [40, 2]], [[55, 1], [60, 2]]], dtype=np.float64)
    for v in (1, 11, 13):
        assert _call("ReduceMean", v, data, None, axes=[1], keepdims=1).tolist() == [[[12.5, 1.5]], [[35, 1.5]],
                                                                                   [[57.5, 1.5]]]
        assert _call("ReduceMean", v, data, None, keepdims=1).tolist() == [[[18.25]]]
    assert _call("ReduceMean", 18, data, [-2], keepdims=0).tolist() == [[12.5, 1.5], [35, 1.5], [57.5, 1.5]]
    assert np.array_equal(_call("ReduceMean", 18, data, [], noop_with_empty_axes=1), data)
    x = np.array([1.0, 2.0 ** -53, 2.0 ** -53])  # exact mean (1 + 2^-52) / 3
    from fractions import Fraction
    want = float((Fraction(1) + Fraction(2) ** -52) / 3)
    assert _call("ReduceMean", 18, x, [0], keepdims=0) == want
    assert _call("ReduceMean", 18, _objs([2**63 - 1, 2**63 - 3]), [0], t="int64", keepdims=0) == 2**63 - 2
    with pytest.raises(ValueError, match="rounding"):
        _call("ReduceMean", 18, _objs([1, 2]), [0], t="int64")
    with pytest.raises(ValueError, match="undefined"):
        _call("ReduceMean", 18, np.zeros((0, 2)), [0])


@pytest.mark.parametrize("t", ["float16", "bfloat16", "float"])
def test_mean_bound_holds_for_every_algorithm(t):
    """sum / n, sum * fl(1/n) and the sum of fl(x / n), in any order, in float32 for 16-bit
    floats and in T for float, stay within the mean's tolerance."""
    dt = {"float16": np.float16, "bfloat16": ml_dtypes.bfloat16, "float": np.float32}[t]
    acc = np.dtype(np.float32)
    rng = np.random.default_rng(5)
    rows = rng.uniform(-4, 4, size=(64, 300)).astype(dt).astype(np.float64)
    ctx = _ctx("ReduceMean", 18, t, {"keepdims": 0, "noop_with_empty_axes": 0})
    exact = ENTRY["ReduceMean"].oracle(ctx, rows, np.array([1]), keepdims=0, noop_with_empty_axes=0)
    tol = RR.mean_tolerance(ctx, [rows, np.array([1])], {"noop_with_empty_axes": 0}, {"reduced": exact})["reduced"]
    e = exact.astype(dt).astype(np.float64)
    n = rows.shape[-1]
    for order in ("forward", "reverse", "pairwise", "numpy"):
        s = _acc_sum(rows, acc, order)
        forms = {"sum/n": s / acc.type(n), "sum*fl(1/n)": s * acc.type(1.0 / n),
                 "sum fl(x/n)": _acc_sum((rows.astype(acc) / acc.type(n)).astype(acc), acc, order)}
        for name, got in forms.items():
            err = np.abs(np.asarray(got, dtype=acc).astype(dt).astype(np.float64) - e)
            assert np.all(err <= tol.atol + tol.rtol * np.abs(e)), (order, name)


# ============================================================================ ArgMax / ArgMin
def test_arg_spec_examples():
    """onnx/backend/test/case/node/argmax.py / argmin.py: keepdims, default axis 0, negative
    axis, select_last_index on [[2, 2], [3, 10]]."""
    data = np.array([[2, 1], [3, 10]], dtype=np.float64)
    am, an = ENTRY["ArgMax"].oracle, ENTRY["ArgMin"].oracle
    c = _ctx("ArgMax", 13)
    assert am(c, data, axis=1, keepdims=1).tolist() == [[0], [1]]
    assert am(c, data, axis=0, keepdims=1).tolist() == [[1, 1]]
    assert am(c, data, axis=-1, keepdims=0).tolist() == [0, 1]
    assert an(c, data, axis=1, keepdims=1).tolist() == [[1], [0]]
    ties = np.array([[2, 2], [3, 10]], dtype=np.float64)
    assert am(c, ties, axis=1, keepdims=1, select_last_index=1).tolist() == [[1], [1]]
    assert am(c, ties, axis=1, keepdims=1, select_last_index=0).tolist() == [[0], [1]]
    assert an(c, ties, axis=1, keepdims=1, select_last_index=1).tolist() == [[1], [0]]
    z = np.array([-0.0, 0.0, -1.0])  # -0 == +0: a tie
    assert am(c, z, axis=0, keepdims=0, select_last_index=1) == 1
    assert am(c, z, axis=0, keepdims=0, select_last_index=0) == 0
    big = _objs([2**63 - 2, 2**63 - 1, 2**63 - 1])  # float64 would tie all three
    assert am(_ctx("ArgMax", 13, "int64"), big, axis=0, keepdims=0) == 1
    for bad in (dict(axis=2), dict(axis=-3)):
        with pytest.raises(ValueError):
            am(c, data, keepdims=1, **bad)
    with pytest.raises(ValueError, match="empty"):
        am(c, np.zeros((2, 0)), axis=1, keepdims=1)


def test_arg_against_numpy():
    rng = np.random.default_rng(3)
    x = rng.integers(-3, 4, size=(3, 4, 5)).astype(np.float64)  # many ties
    for axis in (0, 1, 2, -1):
        for fn, f in (("ArgMax", np.argmax), ("ArgMin", np.argmin)):
            o = ENTRY[fn].oracle
            first = o(_ctx(fn, 13), x, axis=axis, keepdims=0, select_last_index=0)
            assert np.array_equal(first, f(x, axis=axis))
            last = o(_ctx(fn, 13), x, axis=axis, keepdims=0, select_last_index=1)
            n = x.shape[axis]
            assert np.array_equal(last, n - 1 - f(np.flip(x, axis=axis), axis=axis))


def test_arg_check_judges_ties_before_12():
    """Versions 1 and 11 with tied extremes are judged by check_arg*: the first or the last
    tied index passes, a non-extreme index or a wrong shape fails."""
    x = np.array([[3.0, 1.0, 3.0], [0.0, 5.0, 5.0]], dtype=np.float32)
    ok1 = {"reduced": np.array([[0], [1]], dtype=np.int64)}
    ok2 = {"reduced": np.array([[2], [2]], dtype=np.int64)}
    bad = {"reduced": np.array([[1], [2]], dtype=np.int64)}
    assert RI.check_argmax({"data": x}, ok1, {"axis": 1})[0]
    assert RI.check_argmax({"data": x}, ok2, {"axis": 1})[0]
    assert not RI.check_argmax({"data": x}, bad, {"axis": 1})[0]
    assert not RI.check_argmax({"data": x}, {"reduced": np.array([0, 1], dtype=np.int64)}, {"axis": 1})[0]
    assert RI.check_argmin({"data": x}, {"reduced": np.array([1, 0], dtype=np.int64)}, {"axis": -1, "keepdims": 0})[0]
    assert RI._arg_check(_ctx("ArgMax", 11), [x], {"axis": 1}) == "conformance.ops.reduce_index:check_argmax"
    assert RI._arg_check(_ctx("ArgMax", 12), [x], {"axis": 1}) is None
    assert RI._arg_check(_ctx("ArgMax", 11), [np.array([[1.0, 2.0]])], {"axis": 1}) is None


def test_arg_ties_cover_both_indices(value_cases):
    """From 12 every type has tie cases with select_last_index 0 and 1 whose first and last
    occurrences differ (exact expectations); before 12 tie cases carry the check."""
    for op in ("ArgMax", "ArgMin"):
        fn = "max" if op == "ArgMax" else "min"
        ties = [c for c in value_cases if c.op == op and RI._has_ties(_data(c), int(c.attributes.get("axis", 0)), fn)]
        assert all(c.check for c in ties if c.since_version < 12)
        assert any(c.check for c in ties if c.since_version < 12)
        new = [c for c in ties if c.since_version >= 12]
        assert {int(c.attributes.get("select_last_index", 0)) for c in new} == {0, 1}
        kinds = {("int" if np.asarray(_data(c)).dtype.kind in "iu" else "float") for c in new}
        assert kinds == {"int", "float"}
        assert not any(c.check for c in value_cases if c.op == op and c.since_version >= 12)


# ============================================================================ L1 / SumSquare / L2
def test_norm_spec_examples():
    """onnx/backend/test/case/node/reducel1.py, reducel2.py, reducesumsquare.py: data
    arange(1, 13) as [3, 2, 2], axes [2]; noop keeps the non-reduction step (|x|, x^2)."""
    data = np.arange(1, 13, dtype=np.float64).reshape(3, 2, 2)
    l1 = _call("ReduceL1", 13, data, None, axes=[2], keepdims=1)
    assert l1.tolist() == [[[3], [7]], [[11], [15]], [[19], [23]]]
    sq = _call("ReduceSumSquare", 18, data, [2], keepdims=1)
    assert sq.tolist() == [[[5], [25]], [[61], [113]], [[181], [265]]]
    l2 = _call("ReduceL2", 18, data, [-1], keepdims=0)
    assert np.array_equal(l2, np.sqrt(np.sum(data ** 2, axis=-1)))  # sqrt is correctly rounded in numpy
    x = np.array([[-2.0, 3.0], [-0.5, 0.0]])
    assert _call("ReduceL1", 18, x, [], noop_with_empty_axes=1).tolist() == [[2, 3], [0.5, 0]]
    assert _call("ReduceSumSquare", 18, x, None, noop_with_empty_axes=1).tolist() == [[4, 9], [0.25, 0]]
    assert _call("ReduceL2", 18, x, [], noop_with_empty_axes=1).tolist() == [[2, 3], [0.5, 0]]
    for op in ("ReduceL1", "ReduceSumSquare", "ReduceL2"):  # empty sets: 0 (versions 1, 13, 18)
        assert _call(op, 18, np.zeros((2, 0)), [1], keepdims=0).tolist() == [0, 0]
    assert _call("ReduceL1", 13, _objs([-(2**62), 2**62 - 1]), None, t="int64", keepdims=0) == 2**63 - 1
    assert _call("ReduceL2", 18, _objs([3, -4, 0]), [0], t="int32", keepdims=0) == 5
    with pytest.raises(ValueError, match="not specified"):
        _call("ReduceL2", 18, _objs([1, 1]), [0], t="int32")
    nan = _call("ReduceL2", 18, np.array([[np.inf, -np.inf], [np.nan, 1.0]]), [1], keepdims=0)
    assert nan[0] == np.inf and np.isnan(nan[1])


def test_reduce_prod_oracle():
    """onnx/backend/test/case/node/reduceprod.py (axes [1]; default axes; the empty set is 1);
    the exact product against Python's on integers and powers of two; IEEE rules (0 * inf is
    NaN, the sign of an infinite product)."""
    data = np.arange(1, 13, dtype=np.float64).reshape(3, 2, 2)
    assert _call("ReduceProd", 13, data, None, axes=[1], keepdims=1).tolist() == [[[3, 8]], [[35, 48]], [[99, 120]]]
    assert _call("ReduceProd", 18, data, None, keepdims=0).tolist() == 479001600
    assert _call("ReduceProd", 18, np.zeros((2, 0, 4)), [1], keepdims=1).tolist() == [[[1] * 4]] * 2
    assert _call("ReduceProd", 18, np.array([[np.inf, -2.0], [np.inf, 0.0]]), [1], keepdims=0).tolist()[0] == -np.inf
    assert np.isnan(_call("ReduceProd", 18, np.array([[np.inf, 0.0]]), [1], keepdims=0)[0])
    x = np.array([3.0, 1.0 / 3.0])  # float64 3 * fl(1/3) = 1 exactly, the exact product is not 1
    from fractions import Fraction
    assert _call("ReduceProd", 18, x, [0], keepdims=0) == float(Fraction(3) * Fraction(1 / 3))
    assert _call("ReduceProd", 18, _objs([2**31, -(2**31) + 1, 1]), [0], t="int64", keepdims=0) == \
        2**31 * (-(2**31) + 1)


def test_prod_rows_stay_inside_the_accumulator():
    """The product classes keep every partial product of every order inside float32 (the
    accumulator of the 16-bit types) and the products inside T's normal range."""
    for t in ("float16", "bfloat16", "float"):
        ctx = _ctx("ReduceProd", 18, t)
        rng = np.random.default_rng(11)
        fi = ml_dtypes.finfo({"float16": np.float16, "bfloat16": ml_dtypes.bfloat16, "float": np.float32}[t])
        for n in (1, 2, 5, 16, 64):
            for fn in (R._prod_normal, R._prod_wide):
                rows = fn(rng, ctx, 20, n)
                logs = np.log2(np.abs(rows))
                assert np.all(np.abs(np.cumsum(logs, axis=1)) < 120) and np.all(np.abs(np.cumsum(logs[:, ::-1],
                                                                                                 axis=1)) < 120)
                total = np.abs(np.prod(rows, axis=1))
                assert np.all(total < float(fi.max) / 2) and np.all(total > float(fi.smallest_normal)), (t, n)


def test_log_sum_and_log_sum_exp_oracles():
    """onnx/backend/test/case/node/reducelogsumexp.py (axes [1], keepdims);
    numpy's max-shifted logsumexp and log(sum) on float64 data; infinities (+inf wins, a set of
    -inf is -inf); the empty set is -inf; integer results only where every rounding agrees."""

    def logsumexp(a, axis):
        m = np.max(a, axis=axis, keepdims=True)
        return np.squeeze(m, axis=axis) + np.log(np.sum(np.exp(a - m), axis=axis))

    data = np.array([[[5, 1], [20, 2]], [[30, 1], [40, 2]], [[55, 1], [60, 2]]], dtype=np.float64)
    got = _call("ReduceLogSumExp", 13, data, None, axes=[1], keepdims=1)
    # the example's formula np.log(np.sum(np.exp(data), axis, keepdims)), in float64 (its printed
    # [[[20., 2.31326175]], ...] is float32 rounded for print: log(e^5 + e^20) = 20.0000003)
    assert np.allclose(got, np.log(np.sum(np.exp(data), axis=1, keepdims=True)), rtol=1e-15, atol=0)
    assert np.allclose(got, [[[20, 2.31326175]], [[40, 2.31326175]], [[60, 2.31326175]]], rtol=2e-4)
    rng = np.random.default_rng(8)
    x = rng.uniform(-700, 700, size=(3, 4, 5))
    for axes in ([2, 1], [0], [-1]):
        assert np.allclose(_call("ReduceLogSumExp", 18, x, axes, keepdims=0), logsumexp(x, axis=tuple(axes)),
                           rtol=1e-14, atol=0)
        p = np.abs(x) + 1
        assert np.allclose(_call("ReduceLogSum", 18, p, axes, keepdims=1),
                           np.log(np.sum(p, axis=tuple(axes), keepdims=True)), rtol=1e-14, atol=0)
    inf = _call("ReduceLogSumExp", 18, np.array([[np.inf, 1.0], [-np.inf, -np.inf], [np.inf, -np.inf]]), [1],
                keepdims=0)
    assert inf.tolist() == [np.inf, -np.inf, np.inf]
    ls = _call("ReduceLogSum", 18, np.array([[0.0, -0.0], [1.0, -2.0], [np.inf, 1.0]]), [1], keepdims=0)
    assert ls[0] == -np.inf and np.isnan(ls[1]) and ls[2] == np.inf
    for op in ("ReduceLogSum", "ReduceLogSumExp"):
        assert _call(op, 28, np.zeros((2, 0)), [1], keepdims=0).tolist() == [-np.inf, -np.inf]
    assert _call("ReduceLogSum", 18, _objs([3, 5, 1]), [0], t="int32", keepdims=0) == 2  # log 9 = 2.197
    assert _call("ReduceLogSumExp", 18, _objs([100, 99, 3]), [0], t="int64", keepdims=0) == 100  # +0.313
    with pytest.raises(ValueError, match="not specified"):  # log 2 = 0.69: truncation and nearest differ
        _call("ReduceLogSum", 18, _objs([2]), [0], t="int32")
    assert _call("ReduceLogSumExp", 18, _objs([0]), [0], t="int32", keepdims=0) == 0


def test_integer_log_classes_keep_a_margin():
    """The integer LogSum/LogSumExp rows give results 0 exactly or at least 0.1 above an
    integer (and at most 0.35): truncation, floor and rounding to nearest agree whatever a
    float log's error."""
    import mpmath

    for t in ("int32", "uint64"):
        rng = np.random.default_rng(9)
        for n in (1, 2, 3, 7):
            for q in (sum(int(v) for v in r) for r in R._log_sum_ints(rng, _ctx("ReduceLogSum", 18, t), 30, n)):
                y = math.log(q)
                assert q == 1 or 0.1 <= y - math.floor(y) <= 0.35, q
            for r in R._lse_ints(rng, _ctx("ReduceLogSumExp", 18, t), 30, n):
                vals = [int(v) for v in r]
                y = max(vals) + mpmath.log(mpmath.fsum(mpmath.exp(v - max(vals)) for v in vals))
                frac = float(y - mpmath.floor(y))
                assert (n == 1 and vals == [0]) or 0.1 <= frac <= 0.35, (vals, frac)


def test_cumsum_oracle():
    """onnx/backend/test/case/node/cumsum.py and the text's example: [1, 2, 3] gives [1, 3, 6],
    exclusive [0, 1, 3], reverse [6, 5, 3], both [5, 3, 0]; 2-D along each axis, negative
    axis; exact prefix sums (not float64's running sum); IEEE rules per element; int64 exact."""
    o = ENTRY["CumSum"].oracle
    c = Ctx("CumSum", 14, 14, {"x": "float", "axis": "int64"}, {"y": "float"})
    x = np.array([1.0, 2.0, 3.0])
    assert o(c, x, np.array(0)).tolist() == [1, 3, 6]
    assert o(c, x, np.array(0), exclusive=1).tolist() == [0, 1, 3]
    assert o(c, x, np.array(0), reverse=1).tolist() == [6, 5, 3]
    assert o(c, x, np.array(0), exclusive=1, reverse=1).tolist() == [5, 3, 0]
    m = np.array([[1.0, 2, 3], [4, 5, 6]])
    assert o(c, m, np.array(0)).tolist() == [[1, 2, 3], [5, 7, 9]]
    assert o(c, m, np.array(1)).tolist() == [[1, 3, 6], [4, 9, 15]]
    assert o(c, m, np.array(-1)).tolist() == [[1, 3, 6], [4, 9, 15]]
    assert o(c, m, np.array([1])).tolist() == [[1, 3, 6], [4, 9, 15]]
    e = 2.0 ** -53
    assert o(c, np.array([1.0, e, e]), np.array(0)).tolist() == [1.0, 1.0, 1 + 2 * e]
    sp = o(c, np.array([1.0, np.inf, 2.0, -np.inf, 3.0]), np.array(0))
    assert sp[0] == 1 and sp[1] == np.inf and sp[2] == np.inf and np.isnan(sp[3]) and np.isnan(sp[4])
    ex = o(c, np.array([np.nan, 1.0]), np.array(0), exclusive=1)
    assert ex[0] == 0 and np.isnan(ex[1])
    ci = Ctx("CumSum", 14, 14, {"x": "int64", "axis": "int32"}, {"y": "int64"})
    big = _objs([2**63 - 1, -(2**63), 2**53 + 1])
    assert o(ci, big, np.array(0)).tolist() == [2**63 - 1, -1, 2**53]
    rng = np.random.default_rng(12)
    r = rng.integers(-100, 100, size=(3, 5, 4)).astype(np.float64)
    for a in (0, 1, 2, -1):
        assert np.array_equal(o(c, r, np.array(a)), np.cumsum(r, axis=a))
        assert np.array_equal(o(c, r, np.array(a), reverse=1), np.flip(np.cumsum(np.flip(r, a), axis=a), a))


def test_cumsum_coverage(value_cases):
    """Every axis pattern of each version, the four exclusive/reverse combinations with axis
    int32 and int64 for every T, the one-element 1-D axis as a contested case."""
    cs = [c for c in value_cases if c.op == "CumSum"]
    for v in (11, 14):
        vc = [c for c in cs if c.since_version == v]
        assert {c.tags["shape"] for c in vc} == {sh.name for sh in ENTRY["CumSum"].shapes}
        states = {(int(c.attributes.get("exclusive", 0)), int(c.attributes.get("reverse", 0))) for c in vc}
        assert states == {(0, 0), (0, 1), (1, 0), (1, 1)}
        t2 = {next(i.elem_type for i in c.inputs if i.name == "axis") for c in vc}
        assert t2 == {onnx.TensorProto.INT32, onnx.TensorProto.INT64}
    assert all(c.contested for c in cs if c.tags["shape"].startswith(("r2/axis=[", "r3/axis=[")))
    assert not any(c.contested for c in cs if "[" not in c.tags["shape"])


def test_topk_oracle():
    """onnx/backend/test/case/node/topk.py (k=3 of arange(12) as [3, 4]; smallest, sorted;
    negative axis) and the ties rule ('the element with the lower index will appear first',
    -0 == +0), for the attribute k of version 1 and the K input."""
    o = ENTRY["TopK"].oracle
    c = Ctx("TopK", 11, 11, {"X": "float", "K": "int64"}, {"Values": "float", "Indices": "int64"})
    x = np.arange(12, dtype=np.float64).reshape(3, 4)
    v, i = o(c, x, np.array([3]), axis=1)
    assert v.tolist() == [[3, 2, 1], [7, 6, 5], [11, 10, 9]] and i.tolist() == [[3, 2, 1]] * 3
    v1, i1 = o(Ctx("TopK", 1, 1, {"X": "float"}), x, axis=-1, k=3)
    assert v1.tolist() == v.tolist() and i1.tolist() == i.tolist()
    s = np.array([[0, 1, 2, 3], [4, 5, 6, 7], [11, 10, 9, 8]], dtype=np.float64)
    v, i = o(c, s, np.array([3]), axis=1, largest=0, sorted=1)
    assert v.tolist() == [[0, 1, 2], [4, 5, 6], [8, 9, 10]] and i.tolist() == [[0, 1, 2], [0, 1, 2], [3, 2, 1]]
    v, i = o(c, x, np.array([2]), axis=-2)
    assert v.tolist() == [[8, 9, 10, 11], [4, 5, 6, 7]] and i.tolist() == [[2, 2, 2, 2], [1, 1, 1, 1]]
    t = np.array([1.0, 2.0, 2.0, 1.0])
    assert [a.tolist() for a in o(c, t, np.array([2]))] == [[2, 2], [1, 2]]
    assert [a.tolist() for a in o(c, t, np.array([3]), largest=0)] == [[1, 1, 2], [0, 3, 1]]
    z = np.array([-0.0, 0.0, -1.0])
    assert o(c, z, np.array([1]))[1].tolist() == [0]
    big = _objs([2**63 - 2, 2**63 - 1, 2**63 - 1])  # float64 would tie all three
    assert o(Ctx("TopK", 11, 11, {"X": "int64"}), big, np.array([1]))[1].tolist() == [1]
    for bad in ([0], [5]):
        with pytest.raises(ValueError):
            o(c, t, np.array(bad))


def test_topk_unsorted_check():
    """sorted=0: any order of the right (value, index) pairs passes; another set, a value not
    at its index, or the higher of tied indices at the k-th place fails."""
    x = np.array([[5.0, 1.0, 5.0, 3.0]], dtype=np.float32)
    ok = {"Values": np.array([[5.0, 5.0]], dtype=np.float32), "Indices": np.array([[2, 0]], dtype=np.int64)}
    assert RI.check_topk_unsorted({"X": x, "K": np.array([2])}, ok, {"axis": 1, "sorted": 0})[0]
    tie = {"Values": np.array([[5.0, 5.0, 3.0]], dtype=np.float32), "Indices": np.array([[0, 2, 3]], dtype=np.int64)}
    assert RI.check_topk_unsorted({"X": x, "K": np.array([3])}, tie, {"sorted": 0})[0]
    wrong_set = {"Values": np.array([[5.0, 3.0]], dtype=np.float32), "Indices": np.array([[0, 3]], dtype=np.int64)}
    assert not RI.check_topk_unsorted({"X": x, "K": np.array([2])}, wrong_set, {"sorted": 0})[0]
    bad_val = {"Values": np.array([[5.0, 4.0]], dtype=np.float32), "Indices": np.array([[0, 2]], dtype=np.int64)}
    assert not RI.check_topk_unsorted({"X": x, "K": np.array([2])}, bad_val, {"sorted": 0})[0]
    y = np.array([[1.0, 2.0, 2.0]], dtype=np.float32)
    hi_tie = {"Values": np.array([[2.0]], dtype=np.float32), "Indices": np.array([[2]], dtype=np.int64)}
    assert not RI.check_topk_unsorted({"X": y, "K": np.array([1])}, hi_tie, {"sorted": 0})[0]
    small = {"Values": np.array([[1.0, 3.0]], dtype=np.float32), "Indices": np.array([[1, 3]], dtype=np.int64)}
    assert RI.check_topk_unsorted({"X": x, "K": np.array([2])}, small, {"sorted": 0, "largest": 0})[0]


def test_topk_coverage(value_cases):
    """Every version's patterns; from 11 largest and sorted both ways, sorted=0 judged by the
    check; tie cases (values repeating in a row) for floats and integers."""
    cs = [c for c in value_cases if c.op == "TopK"]
    for v in (1, 10, 11, 24):
        vc = [c for c in cs if c.since_version == v]
        assert {c.tags["shape"] for c in vc} == {sh.name for sh in ENTRY["TopK"].shapes if sh.applies(v)}
        if v >= 11:
            assert {(int(c.attributes.get("largest", 1)), int(c.attributes.get("sorted", 1))) for c in vc} == \
                {(0, 0), (0, 1), (1, 0), (1, 1)}
    assert all((c.check is not None) == (int(c.attributes.get("sorted", 1)) == 0) for c in cs)
    ties = [c for c in cs if c.tags["numerics"] == "ties" and c.since_version >= 11]
    assert {np.asarray(_dx(c)).dtype.kind for c in ties} >= {"f", "i"}


def _dx(c):
    d = c.datasets[0].inputs.get("X")
    return d if d is not None else next(i.value for i in c.inputs if i.name == "X")


def test_dyadic_sum_is_exact():
    """RR.dyadic_sum equals the Fraction sum (and sum of squares) over the whole float64 range."""
    from fractions import Fraction

    rng = np.random.default_rng(13)
    for _ in range(200):
        v = (rng.normal(size=20) * 10.0 ** rng.integers(-300, 300, size=20)).tolist() + [5e-324, -0.0]
        assert RR.dyadic_sum(v) == sum((Fraction(x) for x in v), Fraction(0))
        assert RR.dyadic_sum(v, 2) == sum((Fraction(x) ** 2 for x in v), Fraction(0))
    assert RR.dyadic_sum([]) == 0


def test_exact_sqrt_against_mpmath():
    """RR.exact_sqrt is sqrt correctly rounded to float64 (mpmath at 300 bits, then rounded)."""
    import mpmath
    from fractions import Fraction

    rng = np.random.default_rng(7)
    mpmath.mp.prec = 300
    for _ in range(300):
        q = Fraction(int(rng.integers(1, 2**62))) * Fraction(2) ** int(rng.integers(-300, 300)) / int(
            rng.integers(1, 2**40))
        want = float(mpmath.sqrt(mpmath.mpf(q.numerator) / q.denominator))
        assert RR.exact_sqrt(q) == want
    for k in (1, 4, 2, 2**-1074 * 4, 10**300):
        assert RR.exact_sqrt(Fraction(k)) == math.sqrt(k)


# ============================================================================ bounds
def _orders(rows, acc, only=None, ufunc=np.add):
    """Forward, reverse, pairwise and numpy sums (``ufunc=np.multiply``: products) of the rows
    (last axis) in dtype ``acc`` (``only``: just that one)."""
    r = rows.astype(acc)
    unit = 0 if ufunc is np.add else 1

    def seq(a):
        s = a[..., 0]
        for j in range(1, a.shape[-1]):
            s = ufunc(s, a[..., j]).astype(acc)
        return s

    def pair(a):  # a balanced tree: the identity pads to a power of two (x + 0, x * 1 are exact)
        n = a.shape[-1]
        width = 1 << max(0, (n - 1).bit_length())
        a = np.concatenate([a, np.full(a.shape[:-1] + (width - n,), unit, dtype=acc)], axis=-1)
        while a.shape[-1] > 1:
            a = ufunc(a[..., 0::2], a[..., 1::2]).astype(acc)
        return a[..., 0]

    make = {"forward": lambda: seq(r), "reverse": lambda: seq(r[..., ::-1]), "pairwise": lambda: pair(r),
            "numpy": lambda: ufunc.reduce(r, axis=-1, dtype=acc)}
    return {k: f() for k, f in make.items() if only is None or k == only}


@pytest.mark.parametrize("t", ["float16", "bfloat16", "float"])
def test_sum_bound_holds_for_every_order(t):
    """|order - expected| <= atol + rtol |expected| for each legitimate order (float32
    accumulation for 16-bit floats; T for float), on random data; the bound is sharp (float's
    sequential ``1 + u + u + ...`` comes within 10% of it), and a 16-bit accumulator does not
    hold it on a long row of ones."""
    dt = {"float16": np.float16, "bfloat16": ml_dtypes.bfloat16, "float": np.float32}[t]
    acc = np.float32
    rng = np.random.default_rng(4)
    rows = rng.uniform(-4, 4, size=(64, 300)).astype(dt).astype(np.float64)
    ctx = _ctx("ReduceSum", 13, t, {"keepdims": 0, "noop_with_empty_axes": 0})
    exact = ENTRY["ReduceSum"].oracle(ctx, rows, np.array([1]), keepdims=0, noop_with_empty_axes=0)
    tol = RR.sum_tolerance(ctx, [rows, np.array([1])], {"noop_with_empty_axes": 0}, {"reduced": exact})["reduced"]
    e = exact.astype(dt).astype(np.float64)
    for name, got in _orders(rows, acc).items():
        err = np.abs(got.astype(dt).astype(np.float64) - e)
        r = err / (tol.atol + tol.rtol * np.abs(e))
        assert np.all(r <= 1.0), (name, float(r.max()))
    if t == "float":  # the bound is sharp: 1 + u + u + ... sequentially stays at 1, losing (n-1) u
        u = 2.0 ** -24
        row = np.array([[1.0] + [u] * 299])
        ex = ENTRY["ReduceSum"].oracle(ctx, row, np.array([1]), keepdims=0, noop_with_empty_axes=0)
        tl = RR.sum_tolerance(ctx, [row, np.array([1])], {"noop_with_empty_axes": 0}, {"reduced": ex})["reduced"]
        fwd = _orders(row, np.float32)["forward"].astype(np.float64)
        assert fwd[0] == 1.0
        ratio = abs(fwd[0] - float(np.float32(ex[0]))) / (tl.atol + tl.rtol * abs(ex[0]))
        assert 0.9 < ratio <= 1.0, ratio
    ones = np.ones((1, 4096))
    ex1 = ENTRY["ReduceSum"].oracle(ctx, ones, np.array([1]), keepdims=0, noop_with_empty_axes=0)
    tol1 = RR.sum_tolerance(ctx, [ones, np.array([1])], {"noop_with_empty_axes": 0}, {"reduced": ex1})["reduced"]
    if t in HALF:
        stalled = _orders(ones, dt)["forward"].astype(np.float64)  # accumulating in T
        assert abs(stalled[0] - 4096) > tol1.atol + tol1.rtol * 4096


def test_sum_tolerance_exact_for_single_elements_and_ints():
    ctx = _ctx("ReduceSum", 13, "float", {})
    x = np.array([[1.5, -2.0]])
    tol = RR.sum_tolerance(ctx, [x, None], {"noop_with_empty_axes": 1}, {"reduced": x})["reduced"]
    assert tol.atol == 0.0
    cti = _ctx("ReduceSum", 13, "int32", {})
    assert RR.sum_tolerance(cti, [_objs([1, 2]), None], {"noop_with_empty_axes": 0},
                           {"reduced": np.array(3)})["reduced"].exact


# ============================================================================ coverage
def test_tolerances_are_finite(value_cases):
    """Every output's tolerance is finite (a bound over an overflowing partial sum once gave
    CumSum an infinite atol, which a bundle's JSON manifest cannot hold) and floating outputs
    of the accumulating operators are not exact."""
    for c in value_cases:
        for o in c.outputs:
            if o.present:
                assert math.isfinite(o.tolerance.atol) and math.isfinite(o.tolerance.rtol), c.id


def test_coverage_every_combination(suite):
    cov = compute_coverage(suite)
    assert set(cov["ops"]) == set(OPS)
    gaps = {(op, v): e["missing"] for op, o in cov["ops"].items() for v, e in o["versions"].items() if e["gaps"]}
    assert gaps == {}, gaps


@pytest.mark.parametrize("op", [o for o in OPS if o.startswith(("Reduce", "Arg"))])
def test_every_pattern_and_axes_state(op, value_cases):
    """Every pattern of each version is generated, for every floating type where the entry
    sweeps them all (``per_type``); at the input
    versions each of (axes absent | empty | non-empty) x (noop 0 | 1) occurs; negative axes
    only from 11; empty reductions only where the version's text states the result."""
    entry = ENTRY[op]
    cases = [c for c in value_cases if c.op == op]
    spec = op_spec(op)
    inp = RR.axes_input_since(op)
    for v in spec.since_versions:
        vc = [c for c in cases if c.since_version == v]
        pats = {sh.name for sh in entry.shapes if sh.applies(v)}
        assert {c.tags["shape"] for c in vc} == pats, v
        for t in {c.tags["dtype"] for c in vc if c.tags["dtype"] in ("float", "double", "float16", "bfloat16")}:
            if entry.per_type(v, {"T": t}) >= len(pats):  # a full sweep for this type
                assert {c.tags["shape"] for c in vc if c.tags["dtype"] == t} == pats, (v, t)
        neg = [c for c in vc if any(int(a) < 0 for a in c.attributes.get("axes", [])) or
               int(c.attributes.get("axis", 0)) < 0]
        assert bool(neg) == (11 <= v < (inp or 10**6)), v
        if inp and v >= inp:
            states = set()
            for c in vc:
                present = c.tags["optional_inputs"] == "axes"
                axes = c.datasets[0].inputs.get("axes") if present else None
                if axes is None and present:
                    axes = next(i.value for i in c.inputs if i.name == "axes")
                kind = "absent" if not present else ("empty" if np.asarray(axes).size == 0 else "given")
                states.add((kind, int(c.attributes.get("noop_with_empty_axes", 0))))
            assert states == {(k, n) for k in ("absent", "empty", "given") for n in (0, 1)}, (v, states)


def _data(c):
    d = c.datasets[0].inputs.get("data")
    return d if d is not None else next(i.value for i in c.inputs if i.name == "data")


def _empty_reduction(c) -> bool:
    """The case reduces an empty set: an empty input, a non-empty output."""
    return np.asarray(_data(c)).size == 0 and np.asarray(next(iter(c.datasets[0].outputs.values()))).size > 0


def test_empty_reductions_only_where_stated(value_cases):
    """ReduceSum: versions 1 and 13 state 'Reduction over an empty set of values yields 0';
    version 11 says nothing: no empty reduction there; the identity is 0."""
    by_v = Counter(c.since_version for c in value_cases if c.op == "ReduceSum" and _empty_reduction(c))
    assert set(by_v) == {1, 13}, by_v
    for c in value_cases:
        if c.op == "ReduceSum" and _empty_reduction(c):
            out = np.asarray(next(iter(c.datasets[0].outputs.values())))
            assert not out.astype(np.float64).any()


# ============================================================================ kernels
def _version(op, opset):
    return op_spec(op).version_in_force(opset)


def _kernel_axes(op, x, inputs, attributes, opset, flaw):
    """Reduced axes as an independent kernel reads the node (raises on invalid axes)."""
    v = _version(op, opset)
    inp = RR.axes_input_since(op)
    nd = x.ndim
    if inp and v >= inp:
        noop = int(attributes.get("noop_with_empty_axes", 0))
        if flaw == "ignore-noop":
            noop = 0
        axes = inputs.get("axes")
        if axes is not None and axes.dtype != np.int64:
            raise TypeError("axes must be int64")
        axes = [] if axes is None else [int(a) for a in axes.ravel()]
        if not axes:
            if flaw == "empty-axes-noop" and "axes" in inputs:
                return ()
            return () if noop else tuple(range(nd))
    else:
        axes = attributes.get("axes")
        if axes is None:
            return tuple(range(nd))
        axes = list(axes)
    if flaw == "negative-axis-dropped":
        axes = [a for a in axes if a >= 0]
    for a in axes:
        if not -nd <= a < nd:
            raise ValueError("axis out of range")
    return tuple(sorted({a % nd for a in axes}))


def _int_sums(rows):
    kept, n = rows.shape[:-1], rows.shape[-1]
    flat = rows.reshape((int(np.prod(kept, dtype=np.int64)), n))
    return [sum(int(v) for v in r) for r in flat], kept


def _acc(dt, variant, flaw):
    """(accumulator dtype, order): float32 for 16-bit floats, T otherwise, float64 for the
    ``float64`` variant; a ``half-accumulator`` flaw loops in the 16-bit type itself."""
    acc = np.float32 if dt.itemsize == 2 else dt
    order = "numpy" if variant == "float64" else variant
    if variant == "float64":
        acc = np.float64
    if flaw == "half-accumulator":
        acc, order = dt, "forward"
    return np.dtype(acc), order


def _acc_sum(rows, acc, order):
    if rows.shape[-1] == 0:
        return np.zeros(rows.shape[:-1], dtype=acc)
    if order == "numpy":
        return rows.astype(acc).sum(axis=-1, dtype=acc)
    return np.asarray(_orders(rows, acc, order)[order])


def _sum_rows(rows, dt, variant, flaw):
    if dt.kind in "iu":
        if flaw == "int-via-double":
            return rows.astype(np.float64).sum(axis=-1).astype(dt)
        sums, kept = _int_sums(rows)
        return np.array(sums, dtype=object).reshape(kept).astype(dt)
    acc, order = _acc(dt, variant, flaw)
    return _acc_sum(rows, acc, order).astype(dt)


def _mean_rows(rows, dt, variant, flaw):
    """Mean: sum / n (numpy, pairwise), sum * fl(1/n) (forward), sum of fl(x / n) (reverse)."""
    n = d = rows.shape[-1]
    if dt.kind in "iu":
        if flaw == "int-via-double":
            return (rows.astype(np.float64).sum(axis=-1) / n).astype(dt)
        sums, kept = _int_sums(rows)
        return np.array([q // n for q in sums], dtype=object).reshape(kept).astype(dt)
    acc, order = _acc(dt, variant, flaw)
    if order == "reverse":
        return _acc_sum((rows.astype(acc) / acc.type(d)).astype(acc), acc, order).astype(dt)
    total = _acc_sum(rows, acc, order)
    if order == "forward":
        return (total * acc.type(1.0 / d)).astype(acc).astype(dt)
    return (total / acc.type(d)).astype(acc).astype(dt)


def _extreme_rows(fn):
    def rows_fn(rows, dt, variant, flaw):
        kept, n = rows.shape[:-1], rows.shape[-1]
        if n == 0:
            if flaw == "empty-zero":
                return np.zeros(kept, dtype=dt)
            if dt.kind == "b":
                return np.full(kept, fn == "min", dtype=dt)
            if dt.kind in "iu":
                info = np.iinfo(dt)
                return np.full(kept, info.min if fn == "max" else info.max, dtype=dt)
            return np.full(kept, -np.inf if fn == "max" else np.inf, dtype=dt)
        if dt.kind == "b":
            return (rows.any(axis=-1) if fn == "max" else rows.all(axis=-1)).astype(dt)
        if flaw == "nan-dropped":  # fmax / maximumNumber: a number beats NaN
            return (np.fmax if fn == "max" else np.fmin).reduce(rows, axis=-1).astype(dt)
        if variant == "reverse":
            rows = rows[..., ::-1]
        return (rows.max(axis=-1) if fn == "max" else rows.min(axis=-1)).astype(dt)

    return rows_fn


def _prod_kernel_rows(rows, dt, variant, flaw):
    kept, n = rows.shape[:-1], rows.shape[-1]
    if n == 0:
        return np.full(kept, 0 if flaw == "empty-zero" else 1, dtype=dt)
    if dt.kind in "iu":
        if flaw == "int-via-double":
            return np.prod(rows.astype(np.float64), axis=-1).astype(dt)
        flat = rows.reshape((-1, n)).astype(object)
        vals = [math.prod(int(v) for v in r) for r in flat]
        return np.array(vals, dtype=object).reshape(kept).astype(dt)
    acc, order = _acc(dt, variant, flaw)
    return np.asarray(_orders(rows, acc, order, np.multiply)[order]).astype(dt)


def _l1_rows(rows, dt, variant, flaw):
    if dt.kind in "iu":
        return _sum_rows(np.abs(rows.astype(object)), dt, variant, flaw)
    return _sum_rows(np.abs(rows), dt, variant, flaw)


def _squares(rows, dt, variant, flaw):
    """Squares as the accumulator holds them: in T first (``body``: the function body's
    ``Mul(data, data)``), else in the accumulator."""
    acc, _ = _acc(dt, variant, flaw)
    if variant == "body":
        return (rows * rows).astype(dt).astype(acc)
    return rows.astype(acc) * rows.astype(acc)


def _sum_square_rows(rows, dt, variant, flaw):
    if dt.kind in "iu":
        sq = rows.astype(object) ** 2
        if flaw == "int-via-double":
            return sq.astype(np.float64).sum(axis=-1).astype(dt)
        sums, kept = _int_sums(sq)
        return np.array(sums, dtype=object).reshape(kept).astype(dt)
    acc, order = _acc(dt, variant, flaw)
    return _acc_sum(_squares(rows, dt, variant, flaw), acc, "numpy" if order == "body" else order).astype(dt)


def _l2_rows(rows, dt, variant, flaw):
    if dt.kind in "iu":
        sums, kept = _int_sums(rows.astype(object) ** 2)
        return np.array([math.isqrt(q) for q in sums], dtype=object).reshape(kept).astype(dt)
    acc, order = _acc(dt, variant, flaw)
    total = _acc_sum(_squares(rows, dt, variant, flaw), acc, "numpy" if order == "body" else order)
    if flaw == "l2-no-sqrt":
        return total.astype(dt)
    if variant == "body":  # ReduceSum's output in T, Cast to float, Sqrt, CastLike
        return np.sqrt(total.astype(dt).astype(np.float32)).astype(dt)
    return np.sqrt(total).astype(dt)


def _log_sum_rows(rows, dt, variant, flaw):
    """log of the sum: the sum at the accumulator; ``body``: rounded to T and log in T (the
    function body of 18), else log at the accumulator; integers: float64 then truncation."""
    if dt.kind in "iu":
        sums, kept = _int_sums(rows)
        return np.array([math.floor(math.log(q)) for q in sums], dtype=object).reshape(kept).astype(dt)
    acc, order = _acc(dt, variant, flaw)
    total = _acc_sum(rows, acc, "numpy" if order == "body" else order)
    with np.errstate(all="ignore"):
        if variant == "body":
            return np.log(total.astype(dt).astype(np.float32)).astype(dt) if dt.itemsize == 2 else \
                np.log(total.astype(dt)).astype(dt)
        return np.log(total).astype(dt)


def _lse_rows(rows, dt, variant, flaw):
    """m + log(sum(exp(x - m))) at the accumulator with infinities handled; ``body``: the
    function body of 18 (double, no shift); ``no-max-shift``: the literal formula at the
    accumulator; ``inf-nan``: the shift without special values (inf - inf)."""
    kept, n = rows.shape[:-1], rows.shape[-1]
    if n == 0:
        return np.full(kept, 0 if flaw == "empty-zero" else -np.inf, dtype=dt)
    with np.errstate(all="ignore"):
        if dt.kind in "iu":
            y = np.log(np.exp(rows.astype(np.float64)).sum(axis=-1))
            return np.trunc(y).astype(dt)
        acc, order = _acc(dt, variant, flaw)
        if variant == "body":
            return np.log(np.exp(rows.astype(np.float64)).sum(axis=-1)).astype(dt)
        r = rows.astype(acc)
        if flaw == "no-max-shift":
            return np.log(_acc_sum(np.exp(r), acc, order)).astype(dt)
        m = r.max(axis=-1, keepdims=True)
        if flaw != "inf-nan":
            m = np.where(np.isfinite(m), m, 0).astype(acc)
        y = np.squeeze(m, -1) + np.log(_acc_sum(np.exp(r - m), acc, order))
        return y.astype(acc).astype(dt)


ROW_KERNELS = {"ReduceSum": _sum_rows, "ReduceMax": _extreme_rows("max"), "ReduceMin": _extreme_rows("min"),
               "ReduceMean": _mean_rows, "ReduceL1": _l1_rows, "ReduceSumSquare": _sum_square_rows,
               "ReduceL2": _l2_rows, "ReduceProd": _prod_kernel_rows, "ReduceLogSum": _log_sum_rows,
               "ReduceLogSumExp": _lse_rows}


def make_arg_kernel(op, variant="numpy", flaw=None):
    """ArgMax/ArgMin from the text: the first occurrence, the last with select_last_index;
    ``variant="last-before-12"`` picks the last of tied extremes at versions 1 and 11 (the
    text leaves it open there)."""
    fn = "max" if op == "ArgMax" else "min"

    def kernel(inputs, attributes, outputs, opset):
        x = inputs["data"]
        axis = int(attributes.get("axis", -1 if flaw == "axis-default-last" else 0))
        if flaw == "negative-axis-as-0" and axis < 0:
            axis = 0
        if not -x.ndim <= axis < x.ndim or x.shape[axis] == 0:
            raise ValueError("invalid axis or empty axis")
        axis %= x.ndim
        keep = int(attributes.get("keepdims", 1)) if flaw != "keepdims-ignored" else 1
        last = bool(attributes.get("select_last_index", 0))
        if flaw == "select-last-ignored":
            last = False
        if flaw == "last-of-ties" or (variant == "last-before-12" and opset < 12):
            last = True
        xs = np.moveaxis(x, axis, -1)
        if flaw == "via-float32":
            xs = xs.astype(np.float32)
        f = np.argmax if fn == "max" else np.argmin
        idx = (xs.shape[-1] - 1 - f(xs[..., ::-1], axis=-1)) if last else f(xs, axis=-1)
        idx = np.asarray(idx, dtype=np.int64)
        if keep:
            idx = np.expand_dims(idx, axis)
        return {outputs[0]: idx}

    return kernel


def make_cumsum_kernel(variant="numpy", flaw=None):
    """CumSum from the text: ``np.cumsum`` along the axis at the accumulator (float32 for
    16-bit floats); ``scan``: a Hillis-Steele scan (log steps, another order); ``float64``."""

    def kernel(inputs, attributes, outputs, opset):
        x, axis = inputs["x"], inputs["axis"]
        if axis.dtype.kind not in "i" or axis.size != 1 or axis.ndim > 1:
            raise ValueError("axis must be one int32/int64 value")
        a = int(axis.reshape(-1)[0])
        if flaw == "negative-axis-as-0" and a < 0:
            a = 0
        if not -x.ndim <= a < x.ndim:
            raise ValueError("axis out of range")
        a %= x.ndim
        exclusive, reverse = int(attributes.get("exclusive", 0)), int(attributes.get("reverse", 0))
        if flaw == "exclusive-reverse-swapped":
            exclusive, reverse = reverse, exclusive
        if flaw == "exclusive-ignored":
            exclusive = 0
        if flaw == "reverse-ignored":
            reverse = 0
        dt = x.dtype
        r = np.moveaxis(x, a, -1)
        if reverse:
            r = r[..., ::-1]
        if dt.kind in "iu":
            acc = np.float64 if flaw == "int-via-double" else dt
        else:
            acc = np.float64 if variant == "float64" else (np.float32 if dt.itemsize == 2 else dt)
            if flaw == "half-accumulator":
                acc = dt
        r = r.astype(acc)
        with np.errstate(all="ignore"):
            if variant == "scan" and dt.kind == "f" and r.shape[-1] > 1:
                c = r.copy()
                k = 1
                while k < c.shape[-1]:
                    c[..., k:] = (c[..., k:] + c[..., :-k]).astype(acc)
                    k *= 2
            elif flaw == "half-accumulator":  # a running sum in the 16-bit type
                c = r.copy()
                for j in range(1, c.shape[-1]):
                    c[..., j] = (c[..., j - 1] + c[..., j]).astype(acc)
            else:
                c = np.cumsum(r, axis=-1, dtype=acc)
        if exclusive:
            c = np.concatenate([np.zeros(c.shape[:-1] + (1,), dtype=acc), c[..., :-1]], axis=-1)[..., :c.shape[-1]]
        if reverse:
            c = c[..., ::-1]
        return {outputs[0]: np.moveaxis(c, -1, a).astype(dt)}

    return kernel


def make_topk_kernel(variant="numpy", flaw=None):
    """TopK from the text: a stable sort (ties: the lower index first); ``variant="reversed"``
    returns a ``sorted=0`` result in reverse order (the text leaves it open)."""

    def kernel(inputs, attributes, outputs, opset):
        x = inputs["X"]
        if "K" in inputs:
            kt = inputs["K"]
            if kt.ndim != 1 or kt.size != 1:
                raise ValueError("K must be a 1-D tensor of one element")
            k = int(kt[0])
        else:
            k = int(attributes["k"])
        axis = int(attributes.get("axis", 0 if flaw == "axis-default-0" else -1))
        if flaw == "negative-axis-as-0" and axis < 0:
            axis = 0
        if not -x.ndim <= axis < x.ndim:
            raise ValueError("axis out of range")
        axis %= x.ndim
        n = x.shape[axis]
        if not 1 <= k <= n:
            raise ValueError("k out of range")
        largest = int(attributes.get("largest", 1)) if flaw != "largest-ignored" else 1
        xs = np.moveaxis(x, axis, -1)
        keys = xs.astype(np.float32) if flaw == "via-float32" else xs
        if largest and flaw == "unstable-ties":  # descending, but equal values by the higher index
            order = np.argsort(keys, axis=-1, kind="stable")[..., ::-1]
        elif largest:
            order = (n - 1 - np.argsort(keys[..., ::-1], axis=-1, kind="stable"))[..., ::-1]
        elif flaw == "unstable-ties":
            order = (n - 1 - np.argsort(keys[..., ::-1], axis=-1, kind="stable"))
        else:
            order = np.argsort(keys, axis=-1, kind="stable")
        order = order[..., :k]
        if variant == "reversed" and int(attributes.get("sorted", 1)) == 0:
            order = order[..., ::-1]
        vals = np.take_along_axis(xs, order, axis=-1)
        return {outputs[0]: np.moveaxis(vals, -1, axis), outputs[1]: np.moveaxis(order.astype(np.int64), -1, axis)}

    return kernel


def make_reduce_kernel(op, variant="numpy", flaw=None):
    """A numpy kernel of ``op`` written from the text; ``variant`` a legitimate order or
    accumulator, ``flaw`` a wrong reading."""

    if op in ("ArgMax", "ArgMin"):
        return make_arg_kernel(op, variant, flaw)
    if op == "CumSum":
        return make_cumsum_kernel(variant, flaw)
    if op == "TopK":
        return make_topk_kernel(variant, flaw)

    def kernel(inputs, attributes, outputs, opset):
        x = inputs["data"]
        red = _kernel_axes(op, x, inputs, attributes, opset, flaw)
        keep = int(attributes.get("keepdims", 1))
        if flaw == "keepdims-ignored":
            keep = 1
        kept = tuple(n for d, n in enumerate(x.shape) if d not in red)
        n = int(np.prod([x.shape[d] for d in red], dtype=np.int64))
        rows = np.moveaxis(x, red, tuple(range(x.ndim - len(red), x.ndim))).reshape(kept + (n,))
        if flaw == "noop-identity" and not red and op != "ReduceLogSumExp":  # the non-reduction step skipped
            return {outputs[0]: x.copy()}
        # the body's float root for double is contested (module docstring): double takes numpy's
        v = "numpy" if variant == "body" and x.dtype == np.float64 and op == "ReduceL2" else variant
        s = np.asarray(ROW_KERNELS[op](rows, x.dtype, v, flaw))
        if flaw == "mean-count-last-axis" and len(red) > 1 and n:  # divided by the last reduced dim only
            s = (s.astype(np.float64) * (n / x.shape[red[-1]])).astype(x.dtype)
        if keep and red:
            s = s.reshape(tuple(1 if d in red else k for d, k in enumerate(x.shape)))
        elif not red:
            s = s.reshape(x.shape)
        return {outputs[0]: s}

    return kernel


#: The accumulating operators (their kernels take the order variants).
ACCUMULATING = ["ReduceSum", "ReduceMean", "ReduceL1", "ReduceSumSquare", "ReduceL2", "ReduceProd", "ReduceLogSum",
                "ReduceLogSumExp"]
#: variant -> the operators it is a variant of (``numpy``: every operator).
LEGIT = {"numpy": OPS, "forward": ACCUMULATING, "reverse": ACCUMULATING + ["ReduceMax", "ReduceMin"],
         "pairwise": ACCUMULATING, "float64": ACCUMULATING, "last-before-12": ["ArgMax", "ArgMin"],
         "body": ["ReduceSumSquare", "ReduceL2", "ReduceLogSum", "ReduceLogSumExp"],
         "scan": ["CumSum"], "reversed": ["TopK"]}


@pytest.mark.parametrize("variant", list(LEGIT))
def test_legitimate_kernel_passes_everything(variant, suite):
    """Every order, float32 accumulation for 16-bit floats (the narrowest legitimate
    accumulator), float64 accumulation, the last of tied extremes where the version leaves
    it open: each passes every case of its operators, error cases included."""
    ops = LEGIT[variant]
    backend = KernelBackend({op: make_reduce_kernel(op, variant) for op in ops}, name=variant)
    results = run_cases([c for c in suite if c.op in ops], backend)
    bad = [(r.id, r.outcome, r.message[:300]) for r in results if r.outcome != "pass"]
    assert not bad, bad[:5]


WRONG = {
    "ignore-noop": ["ReduceSum", "ReduceMax", "ReduceMin", "ReduceMean", "ReduceL1", "ReduceSumSquare", "ReduceL2"],
    "keepdims-ignored": [op for op in OPS if op not in ("CumSum", "TopK")],
    "negative-axis-dropped": [op for op in OPS if op.startswith("Reduce")],
    "half-accumulator": [op for op in ACCUMULATING if op != "ReduceLogSumExp"] + ["CumSum"],
    "int-via-double": ["ReduceSum", "ReduceMean", "ReduceL1", "ReduceSumSquare", "ReduceProd", "CumSum"],
    "empty-axes-noop": [op for op in OPS if op.startswith("Reduce")],
    "mean-count-last-axis": ["ReduceMean"],
    "noop-identity": ["ReduceL1", "ReduceSumSquare", "ReduceL2", "ReduceLogSum"],  # noop skips |x|, x^2, log
    "l2-no-sqrt": ["ReduceL2"],
    "last-of-ties": ["ArgMax", "ArgMin"],  # the last of equal extremes with select_last_index=0
    "select-last-ignored": ["ArgMax", "ArgMin"],
    "axis-default-last": ["ArgMax", "ArgMin"],
    "negative-axis-as-0": ["ArgMax", "ArgMin", "CumSum", "TopK"],
    "via-float32": ["ArgMax", "ArgMin", "TopK"],
    "nan-dropped": ["ReduceMax", "ReduceMin"],
    "empty-zero": ["ReduceMax", "ReduceMin", "ReduceProd", "ReduceLogSumExp"],
    "no-max-shift": ["ReduceLogSumExp"],
    "exclusive-reverse-swapped": ["CumSum"],
    "unstable-ties": ["TopK"],  # equal values by the higher index
    "largest-ignored": ["TopK"],
    "axis-default-0": ["TopK"],
    "exclusive-ignored": ["CumSum"],
    "reverse-ignored": ["CumSum"],
    "inf-nan": ["ReduceLogSumExp"],
}


@pytest.mark.parametrize("flaw,op", [(f, op) for f, ops in WRONG.items() for op in ops])
def test_wrong_kernel_is_caught(flaw, op, value_cases):
    cases = [c for c in value_cases if c.op == op]
    assert cases
    results = run_cases(cases, KernelBackend({op: make_reduce_kernel(op, flaw=flaw)}, name=flaw, check=False))
    outcomes = Counter(r.outcome for r in results)
    assert outcomes["fail"] >= 1, outcomes


def test_half_accumulator_caught_per_half_type(value_cases):
    """A float16/bfloat16 accumulator fails on the long rows of ones of each 16-bit type."""
    cases = [c for c in value_cases if c.op == "ReduceSum" and c.tags["dtype"] in HALF
             and c.tags["shape"].startswith("long") and c.tags["numerics"] == "ones"]
    assert {c.tags["dtype"] for c in cases} == set(HALF)
    res = run_cases(cases, KernelBackend({"ReduceSum": make_reduce_kernel("ReduceSum", flaw="half-accumulator")},
                                         check=False))
    assert {c.tags["dtype"] for c, r in zip(cases, res) if r.outcome == "fail"} == set(HALF)


# ============================================================================ explore mode
def test_explore_draws_pass_the_numpy_kernels():
    """Explore mode draws from the same parameter space (dims drawn by hypothesis, any opset of
    the version): the numpy kernels pass every drawn case of every operator of the family."""
    from conformance.explore import explore_op
    from conformance.runner import run_case

    backend = KernelBackend({op: make_reduce_kernel(op) for op in OPS}, name="numpy")
    for op in OPS:
        counts = explore_op(op, lambda c: run_case(c, backend), max_examples=12, derandomize=True)
        assert set(counts) == {"pass"} and counts["pass"] >= 12, (op, counts)


def test_explore_finds_the_tie_order_of_argmax():
    """explore_op finds ArgMax returning the last of equal maxima with select_last_index=0."""
    from conformance.explore import ExploreFailure, explore_op
    from conformance.runner import run_case

    backend = KernelBackend({"ArgMax": make_reduce_kernel("ArgMax", flaw="last-of-ties")}, check=False)
    with pytest.raises(ExploreFailure) as info:
        explore_op("ArgMax", lambda c: run_case(c, backend), max_examples=200, derandomize=True)
    assert info.value.result.outcome == "fail"


# ============================================================================ onnx.reference / onnxruntime
#: (op, case filter, why onnx.reference 1.23 is wrong).
REFERENCE_WRONG = {
    "half accumulation": (
        lambda c: (c.op in ACCUMULATING or c.op == "CumSum") and c.tags["dtype"] in HALF,
        "onnx.reference sums float16/bfloat16 in the type itself (numpy's sum / mean with dtype=T of a float16 "
        "or ml_dtypes bfloat16 array): below the float32 accumulation the suite requires for 16-bit floats "
        "(module docstring of conformance/ops/reduce.py); smallest: ReduceSum-13 of 4096 bfloat16 ones gives "
        "256"),
    "64-bit integer mean through float64": (
        lambda c: c.op == "ReduceMean" and c.tags["dtype"] in ("int64", "uint64")
        and c.tags.get("numerics") == "int-extremes",
        "onnx.reference's ReduceMean of int64/uint64 is np.mean (float64) cast back: ReduceMean-18(uint64 "
        "[2^64 - 1], noop) gives 0 and int64 means beyond 2^53 lose their low bits; the exact mean is in range"),
    "32-bit sum of squares as 64-bit": (
        lambda c: c.op == "ReduceSumSquare" and c.tags["dtype"] in ("int32", "uint32"),
        "onnx.reference's ReduceSumSquare returns int64 (uint64) for int32 (uint32) data: numpy's sum promotes "
        "the 32-bit integers and the result is not cast back; the output type is T"),
    "integer LogSum/LogSumExp refused": (
        lambda c: c.op in ("ReduceLogSum", "ReduceLogSumExp") and c.tags["dtype"] in ("int32", "int64", "uint32",
                                                                                    "uint64"),
        "onnx.reference raises TypeError ('Issues with types') for integer ReduceLogSum/ReduceLogSumExp, which the "
        "schema admits before 28 (valid models)"),
    "LogSumExp of a rank-0 input refused": (
        lambda c: c.op == "ReduceLogSumExp" and c.expect_error is None and len(_data(c).shape) == 0,
        "onnx.reference raises TypeError on ReduceLogSumExp of a rank-0 tensor ('Input tensors of rank zero are "
        "valid')"),
    "LogSumExp of infinities": (
        lambda c: c.op == "ReduceLogSumExp" and c.tags.get("numerics") == "special",
        "onnx.reference shifts by the maximum without special values: ReduceLogSumExp-13([-inf, -inf]) gives "
        "NaN (log(0) = -inf; onnxruntime and the function body of 18 give -inf), and sets holding +inf with "
        "other values give inf - inf = NaN where the result is +inf"),
    "TopK's K and axis unchecked": (
        lambda c: c.op == "TopK" and c.tags.get("error") in ("k=-1", "K-two-values", "axis=-3"),
        "onnx.reference runs TopK with K = [-1] (the text: 'a single positive value'), with K = [1, 2] (a 1-D "
        "tensor of one element) and with axis -3 on a rank-2 input (accepted range [-r, r-1]): invalid models"),
    "axes type unchecked": (
        lambda c: c.expect_error is not None and c.tags.get("error") == "axes-int32",
        "onnx.reference runs ReduceSum-13 (the others at 18) with an int32 axes input; the schema allows "
        "tensor(int64) only (onnx.checker rejects the model)"),
}


def test_onnx_reference(suite):
    """onnx.reference agrees everywhere but the listed disagreements, and each occurs."""
    res = run_cases(suite, resolve_backend("onnx-reference"))
    seen, unexplained = Counter(), []
    for c, r in zip(suite, res):
        if r.outcome == "pass" or (r.outcome == "unsupported" and c.contested):
            continue
        why = [k for k, (f, _) in REFERENCE_WRONG.items()
               if f(c) and r.outcome == ("error" if "refused" in k else "fail")]
        if why:
            seen[why[0]] += 1
        else:
            unexplained.append((c.id, r.outcome, r.message[:200]))
    assert not unexplained, unexplained
    assert set(seen) == set(REFERENCE_WRONG), seen


#: (case filter, why onnxruntime 1.32 CPU is wrong, outcome).
ORT_WRONG = {
    "int64 sum through double": (
        lambda c: c.op in ("ReduceSum", "ReduceMean", "ReduceSumSquare", "ReduceProd") and c.tags["dtype"] in ("int64",)
        and c.tags.get("numerics") == "int-extremes",
        "onnxruntime sums int64 through double: ReduceSum-13(int64 [2^53 + 1], keepdims=0) gives 2^53, "
        "ReduceSum([INT64_MAX, INT64_MIN]) gives 0 (the exact sum -1 is in range); ReduceMean likewise", "fail"),
    "opset-1 float16 cast insertion": (
        lambda c: c.opset < 6 and c.tags["dtype"] == "float16",
        "onnxruntime inserts a Cast to float for a float16 ReduceSum (every Reduce*, ArgMax/ArgMin) and writes "
        "Cast's 'to' as an int, which "
        "Cast-1 (opset 1-5) declares a string: 'Mismatched attribute type' (INVALID_GRAPH) on a valid model",
        "error"),
    "max/min drop a NaN after the first element": (
        lambda c: c.op in ("ReduceMax", "ReduceMin") and c.tags.get("numerics") == "special",
        "onnxruntime's ReduceMax/ReduceMin keep the running value when the comparison with NaN is false: "
        "ReduceMax-13(float [1, NaN], axes=[0], keepdims=0) gives 1 while [NaN, 1] gives NaN; NaN propagates "
        "(decision in conformance/ops/reduce.py, as for Max/Min)", "fail"),
    "rank-0 data with an axis accepted": (
        lambda c: c.expect_error is not None and "rank0/axes=0" in c.id,
        "onnxruntime reduces a rank-0 tensor over axes=[0] (attribute or input) and returns it; the accepted "
        "range [-r, r-1] is empty for r = 0 (numpy: 'axis 0 is out of bounds for array of dimension 0')", "fail"),
    "empty bool max/min refused": (
        lambda c: c.op in ("ReduceMax", "ReduceMin") and c.tags["dtype"] == "bool" and _empty_reduction(c),
        "onnxruntime raises 'ReduceMax is not defined for empty set with bool type'; ReduceMax-20's text: the "
        "empty set 'yields minus infinity (if supported by the datatype) or the minimum value of the data type "
        "otherwise' (False for bool; True for ReduceMin)", "error"),
}


def test_onnxruntime_disagreements(suite):
    pytest.importorskip("onnxruntime")
    res = run_cases(suite, resolve_backend("onnxruntime"))
    seen, unexplained = Counter(), []
    for c, r in zip(suite, res):
        if r.outcome in ("pass", "unsupported"):
            continue
        why = [k for k, (f, _, o) in ORT_WRONG.items() if f(c) and r.outcome == o]
        if why:
            seen[why[0]] += 1
        else:
            unexplained.append((c.id, r.outcome, r.message[:200]))
    assert not unexplained, unexplained
    assert set(seen) == set(ORT_WRONG), seen
