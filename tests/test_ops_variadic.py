"""Variadic (Sum, Mean, Max, Min) and select (Where) entries (conformance/ops/variadic.py).

* the oracle against independent formulas (``math.fsum``, Python ``max``/``min`` on ints,
  a list comprehension for Where) and the spec's own examples (onnx's node-test cases);
* the ``defined`` mask (order-dependent overflow) and the accumulation bound on hand cases;
  the bound holds for forward, reverse, pairwise and float32-accumulated sums of random data;
* coverage: every type combination of every version has value cases;
* legitimate kernels (forward, reverse, pairwise, float32 accumulation for 16-bit floats, Mean
  as sum * fl(1/n) or as a sum of fl(x_i/n), numpy's maximum/minimum) pass every case; wrong kernels are caught (Sum ignoring the third input,
  Mean dividing by 2, accumulation through float8, Where with X and Y swapped, Where merging
  selections by "x != 0" as onnxruntime does, Max on ints through float64, a permissive
  broadcast, broadcasting before version 8);
* onnx.reference on the normal and error cases, every disagreement listed with who is right.
"""

from __future__ import annotations

import itertools
import math
from collections import Counter

import ml_dtypes
import numpy as np
import pytest

from conformance.backends import resolve_backend
from conformance.backends.kernel import KernelBackend
from conformance.coverage import compute_coverage
from conformance.ops import variadic
from conformance.ops.entry import Ctx
from conformance.runner import run_cases

pytestmark = pytest.mark.filterwarnings("ignore::RuntimeWarning")
OPS = [e.op for e in variadic.ENTRIES]
ENTRY = {e.op: e for e in variadic.ENTRIES}


def _ctx(op, t="float", n=3):
    if op == "Where":
        return Ctx(op, 16, 16, {"condition": "bool", "X": t, "Y": t})
    return Ctx(op, 13, 13, {"data_0": t})


def _objs(vals):
    out = np.empty(len(vals), dtype=object)
    out[:] = vals
    return out


# ----------------------------------------------------------------------------- oracle
def test_spec_examples():
    """onnx/backend/test/case/node/{sum,mean,max,min,where}.py."""
    d0, d1, d2 = np.array([3., 0, 2]), np.array([1., 3, 4]), np.array([2., 6, 6])
    assert ENTRY["Sum"].oracle(_ctx("Sum"), d0, d1, d2).tolist() == [6, 9, 12]
    assert ENTRY["Mean"].oracle(_ctx("Mean"), d0, d1, d2).tolist() == [2, 3, 4]
    assert ENTRY["Sum"].oracle(_ctx("Sum"), d0).tolist() == d0.tolist()
    m0, m1 = np.array([3., 2, 1]), np.array([1., 4, 4])
    assert ENTRY["Max"].oracle(_ctx("Max"), m0, m1, np.array([2., 5, 3])).tolist() == [3, 5, 4]
    assert ENTRY["Min"].oracle(_ctx("Min"), m0, m1, np.array([2., 5, 0])).tolist() == [1, 2, 0]
    assert ENTRY["Max"].oracle(_ctx("Max", "int8"), _objs([3, 2, 1]), _objs([1, 4, 4])).tolist() == [3, 4, 4]
    assert ENTRY["Min"].oracle(_ctx("Min", "uint64"), _objs([3, 2, 1]), _objs([1, 4, 4])).tolist() == [1, 2, 1]
    c = np.array([[1, 0], [1, 1]], dtype=bool)
    z = ENTRY["Where"].oracle(_ctx("Where"), c, np.array([[1., 2], [3, 4]]), np.array([[9., 8], [7, 6]]))
    assert z.tolist() == [[1, 8], [3, 4]]


def test_sum_mean_oracle_against_fsum():
    """Exact sums: the oracle equals math.fsum (correctly rounded) element by element, also
    with catastrophic cancellation; Mean of 4 inputs is fsum / 4 (dividing by a power of two
    is exact away from the subnormal range)."""
    rng = np.random.default_rng(1)
    xs = [rng.normal(size=50) * 10.0 ** rng.integers(-20, 20, size=50) for _ in range(3)]
    xs.append(-xs[0])  # cancellation: the result is x1 + x2 + ... exactly
    got = ENTRY["Sum"].oracle(_ctx("Sum", "double", 4), *xs)
    want = [math.fsum(v) for v in zip(*xs)]
    assert got.tolist() == want
    got = ENTRY["Mean"].oracle(_ctx("Mean", "double", 4), *xs)
    assert got.tolist() == [w / 4 for w in want]
    # 1 + 2^-53 + 2^-53: float64 forward gives 1, the exact sum 1 + 2^-52
    e = 2.0 ** -53
    assert ENTRY["Sum"].oracle(_ctx("Sum", "double"), np.array([1.0]), np.array([e]), np.array([e])).tolist() == \
        [1 + 2 * e]
    # IEEE rules: NaN, inf - inf, one-signed infinities
    nan, inf = math.nan, math.inf
    s = ENTRY["Sum"].oracle(_ctx("Sum"), np.array([nan, inf, inf, 1.0]), np.array([1.0, -inf, 1.0, -0.0]))
    assert math.isnan(s[0]) and math.isnan(s[1]) and s[2] == inf and s[3] == 1.0


def test_max_min_oracle_against_python():
    """Ints compared exactly at the 64-bit extremes (no float64 round trip); floats with
    infinities; the result is always one of the inputs."""
    lo, hi = -(2 ** 63), 2 ** 63 - 1
    a, b, c = _objs([hi, hi - 1, lo, 0]), _objs([hi - 1, hi, lo + 1, -1]), _objs([lo, 5, lo, 1])
    assert ENTRY["Max"].oracle(_ctx("Max", "int64"), a, b, c).tolist() == [max(v) for v in zip(a, b, c)]
    assert ENTRY["Min"].oracle(_ctx("Min", "int64"), a, b, c).tolist() == [min(v) for v in zip(a, b, c)]
    u = _objs([2 ** 64 - 1, 2 ** 64 - 2])
    v = _objs([2 ** 64 - 2, 2 ** 64 - 1])
    assert ENTRY["Max"].oracle(_ctx("Max", "uint64"), u, v).tolist() == [2 ** 64 - 1] * 2
    rng = np.random.default_rng(2)
    xs = [np.concatenate([rng.normal(size=20), [math.inf, -math.inf, 0.0]]) for _ in range(3)]
    for op, fn in (("Max", max), ("Min", min)):
        got = ENTRY[op].oracle(_ctx(op), *xs)
        assert got.tolist() == [fn(v) for v in zip(*xs)]


def test_where_oracle_against_comprehension():
    """Three-way broadcasting, strings, complex and the sign of a selected zero."""
    rng = np.random.default_rng(3)
    c = rng.random((3, 1, 4)) < 0.5
    x = rng.normal(size=(1, 2, 1))
    y = np.array(-0.0)
    got = ENTRY["Where"].oracle(_ctx("Where"), c, x, y)
    assert got.shape == (3, 2, 4)
    for i, j, k in itertools.product(range(3), range(2), range(4)):
        want = x[0, j, 0] if c[i, 0, k] else -0.0
        assert got[i, j, k] == want and math.copysign(1, got[i, j, k]) == math.copysign(1, want)
    s = ENTRY["Where"].oracle(_ctx("Where", "string"), np.array([True, False]), _objs(["a", "b"]),
                              _objs(["日本", ""]))
    assert s.tolist() == ["a", ""]
    z = ENTRY["Where"].oracle(_ctx("Where", "complex64"), np.array([False]), np.array([1 + 2j]), np.array([3 - 1j]))
    assert z.tolist() == [3 - 1j]


# ----------------------------------------------------------------------------- defined / bound
def test_defined_order_dependent_overflow():
    """float16: an element is kept only where every legitimate order agrees (module docstring)."""
    sum_def = ENTRY["Sum"].defined
    mean_def = ENTRY["Mean"].defined
    ctx = _ctx("Sum", "float16")
    big = 60000.0
    col = lambda *v: [np.array([x]) for x in v]  # noqa: E731
    assert not sum_def(ctx, *col(big, big, -big))[0]  # forward inf, reverse 60000
    assert sum_def(ctx, *col(big, big, 1.0))[0]  # one sign: every order overflows to +inf
    assert sum_def(ctx, *col(big, 1.0, 2.0))[0]  # no partial sum can overflow
    assert sum_def(ctx, *col(math.nan, big, -big))[0]  # NaN whatever the order
    assert sum_def(ctx, *col(math.inf, -math.inf, big))[0]  # NaN whatever the order
    assert not sum_def(ctx, *col(big, big, -math.inf))[0]  # -inf, or NaN through +inf
    assert sum_def(ctx, *col(big, big, math.inf))[0]  # +inf
    assert not mean_def(ctx, *col(big, big))[0]  # float16 sum overflows, float32 accumulation gives 60000
    assert mean_def(ctx, *col(30000.0, 30000.0))[0]
    assert mean_def(ctx, *col(math.nan, big, big))[0]
    # one sign, exact sum at fmax: an order rounding up on the way could overflow -> excluded
    assert not sum_def(ctx, *col(32752.0, 32752.0, 0.0))[0]
    assert sum_def(ctx, *col(30000.0, 30000.0, 1.0))[0]


def _orders(xs, t):
    """Forward, reverse, pairwise (x0 + (x1 + x2)) in t, and float32 accumulation."""
    xs = [np.asarray(x, dtype=t) for x in xs]
    fwd = xs[0]
    for x in xs[1:]:
        fwd = (fwd + x).astype(t)
    rev = xs[-1]
    for x in xs[-2::-1]:
        rev = (rev + x).astype(t)
    pair = (xs[0] + (xs[1] + xs[2]).astype(t)).astype(t) if len(xs) == 3 else fwd
    acc = sum(x.astype(np.float32) for x in xs).astype(t)
    return {"forward": fwd, "reverse": rev, "pairwise": pair, "float32": acc}


@pytest.mark.parametrize("t", ["float16", "bfloat16", "float"])
def test_bound_holds_for_every_order(t):
    """|order - exact| <= bound + u |expected| for random data with cancellation, and the
    bound is no looser than (n + 1) u sum|x|."""
    dt = {"float16": np.float16, "bfloat16": ml_dtypes.bfloat16, "float": np.float32}[t]
    rng = np.random.default_rng(4)
    xs = [rng.uniform(-4, 4, size=4000).astype(dt).astype(np.float64) for _ in range(3)]
    ctx = _ctx("Sum", t)
    exact = ENTRY["Sum"].oracle(ctx, *xs)
    bound = ENTRY["Sum"].bound(ctx, xs, {}, t)
    u = float(ml_dtypes.finfo(dt).eps) / 2
    a = sum(np.abs(x) for x in xs)
    assert np.all(bound <= 4.01 * u * a + float(ml_dtypes.finfo(dt).smallest_subnormal))
    e = exact.astype(dt).astype(np.float64)
    worst = 0.0
    for name, got in _orders(xs, dt).items():
        err = np.abs(got.astype(np.float64) - e)
        r = err / (bound + u * np.abs(e))
        worst = max(worst, float(r.max()))
        assert np.all(r <= 1.0), (name, float(r.max()))
    assert worst > 0.05  # the bound is not vacuous for these data
    mexact = ENTRY["Mean"].oracle(ctx, *xs).astype(dt).astype(np.float64)
    mbound = ENTRY["Mean"].bound(ctx, xs, {}, t)
    variants = {
        "sum/n": _orders(xs, dt)["forward"] / dt(3),
        "sum*fl(1/n)": _orders(xs, dt)["reverse"] * dt(1 / 3),
        "sum fl(x/n)": _orders([np.asarray(x, dt) / dt(3) for x in xs], dt)["forward"],
        "float32": (sum(x.astype(np.float32) for x in xs) / np.float32(3)).astype(dt),
    }
    for name, got in variants.items():
        err = np.abs(np.asarray(got, dtype=dt).astype(np.float64) - mexact)
        assert np.all(err <= mbound + u * np.abs(mexact)), name


def test_single_input_is_exact():
    """Sum/Mean of one input is the identity: the bound is zero (the tolerance's atol then
    is 0 and only the expected value's own rounding, none here, is allowed)."""
    x = [np.array([1.5, -3.25, 1e-7])]
    for op in ("Sum", "Mean"):
        assert np.all(ENTRY[op].bound(_ctx(op), x, {}, "float") == 0)


# ----------------------------------------------------------------------------- coverage
def test_coverage_every_combination(suite):
    cov = compute_coverage(suite)
    assert set(cov["ops"]) == set(OPS)
    gaps = {(op, v): e["missing"] for op, o in cov["ops"].items() for v, e in o["versions"].items() if e["gaps"]}
    assert gaps == {}, gaps
    assert not [m for o in cov["ops"].values() for e in o["versions"].values() for m in e["missing"]]


def test_shapes_arities_numerics(value_cases):
    """Every arity 1..3 for each variadic version; equal shapes before 8; Where gets the
    float numerics classes of X (not only "bool" from the condition)."""
    for op in ("Sum", "Mean", "Max", "Min"):
        for v in {c.since_version for c in value_cases if c.op == op}:
            cs = [c for c in value_cases if c.op == op and c.since_version == v]
            assert {c.tags["arity"] for c in cs} == {1, 2, 3}, (op, v)
            if v < 8:
                assert all(len({i.shape for i in c.inputs}) == 1 for c in cs), (op, v)
            else:
                assert any(len({i.shape for i in c.inputs}) > 1 for c in cs), (op, v)
    where = [c for c in value_cases if c.op == "Where"]
    assert {"normal", "wide", "special", "int", "int-extremes", "string", "complex", "bool"} <= \
        {c.tags["numerics"] for c in where}
    assert all(c.outputs[0].tolerance.signed_zero for c in where if c.tags["dtype"] in ("float", "double"))


# ----------------------------------------------------------------------------- kernels
def _equal_or_broadcast(arrays, opset, strict=True):
    if opset < 8 and strict and len({a.shape for a in arrays}) > 1:
        raise ValueError("inputs of different shapes before opset 8")
    return np.broadcast_arrays(*arrays)  # raises on incompatible shapes


def make_kernel(op, variant="numpy", flaw=None):
    """A numpy kernel of ``op``; ``variant`` picks a legitimate algorithm, ``flaw`` a wrong one."""

    def kernel(inputs, attributes, outputs, opset):
        xs = list(inputs.values())
        if op == "Where":
            c, x, y = xs
            if flaw == "permissive-broadcast":
                shape = max((a.shape for a in xs), key=lambda s: int(np.prod(s)))
                c, x, y = (np.resize(a, shape) for a in (c, x, y))
            else:
                c, x, y = _equal_or_broadcast([c, x, y], opset)
            if flaw == "swapped":
                out = np.where(c, y, x)
            elif flaw == "merge-nonzero":  # onnxruntime CPU: X_sel = c ? X : 0, Y_sel = !c ? Y : 0
                zero = np.zeros((), x.dtype)
                xs_, ys_ = np.where(c, x, zero), np.where(~c, y, zero)
                out = np.where(xs_ != zero, xs_, ys_) if x.dtype.kind not in "bOUS" else np.where(c, x, y)
            else:
                out = np.where(c, x, y)
            return {outputs[0]: np.asarray(out, dtype=x.dtype)}
        dt = xs[0].dtype
        if flaw == "permissive-broadcast":
            shape = max((a.shape for a in xs), key=lambda s: int(np.prod(s)))
            xs = [np.resize(a, shape) for a in xs]
        else:
            xs = _equal_or_broadcast(xs, opset, strict=flaw != "broadcast-before-8")
        n = len(xs)
        if op in ("Max", "Min"):
            if flaw == "via-float64" and dt.kind in "iu":
                f = np.maximum if op == "Max" else np.minimum
                out = xs[0].astype(np.float64)
                for a in xs[1:]:
                    out = f(out, a.astype(np.float64))
                with np.errstate(invalid="ignore"):
                    return {outputs[0]: out.astype(dt)}
            f = {"Max": np.fmax if flaw == "fmax" else np.maximum,
                 "Min": np.fmin if flaw == "fmax" else np.minimum}[op]
            out = xs[0]
            for a in xs[1:]:
                out = f(out, a)
            return {outputs[0]: np.array(out, dtype=dt)}
        if flaw == "ignore-third":
            xs = xs[:2]
        acc_t = dt
        if variant == "float32" and dt.itemsize == 2:
            acc_t = np.dtype(np.float32)
        if flaw == "float8":
            acc_t = np.dtype(ml_dtypes.float8_e4m3fn)
        terms = [a.astype(acc_t) for a in xs]
        if op == "Mean" and variant == "divide-each":
            terms = [(t / acc_t.type(n)).astype(acc_t) for t in terms]
        order = terms[::-1] if variant == "reverse" else terms
        if variant == "pairwise" and len(order) == 3:
            s = (order[0] + (order[1] + order[2]).astype(acc_t)).astype(acc_t)
        else:
            s = order[0]
            for t in order[1:]:
                s = (s + t).astype(acc_t)
        if op == "Mean" and variant != "divide-each":
            if flaw == "div2":
                s = (s / acc_t.type(2)).astype(acc_t)
            elif variant == "reciprocal":
                s = (s * acc_t.type(1.0 / n)).astype(acc_t)
            else:
                s = (s / acc_t.type(n)).astype(acc_t)
        return {outputs[0]: np.asarray(s).astype(np.float32).astype(dt) if acc_t != dt else np.asarray(s, dtype=dt)}

    return kernel


LEGIT = ["numpy", "reverse", "pairwise", "float32", "reciprocal", "divide-each"]


@pytest.mark.parametrize("variant", LEGIT)
def test_legitimate_kernel_passes_everything(variant, suite):
    """Every order, float32 accumulation and the three ways to divide a mean pass every case,
    error cases included."""
    backend = KernelBackend({op: make_kernel(op, variant) for op in OPS}, name=variant)
    results = run_cases(suite, backend)
    bad = [(r.id, r.outcome, r.message[:300]) for r in results if r.outcome != "pass"]
    assert not bad, bad[:5]


WRONG = {
    "ignore-third": ["Sum", "Mean"],
    "div2": ["Mean"],
    "float8": ["Sum", "Mean"],
    "swapped": ["Where"],
    "merge-nonzero": ["Where"],
    "via-float64": ["Max", "Min"],
    "fmax": ["Max", "Min"],  # dropping NaN (maximumNumber): NaN propagates (module docstring)
    "permissive-broadcast": ["Sum", "Mean", "Max", "Min", "Where"],
    "broadcast-before-8": ["Sum", "Mean", "Max", "Min"],
}


@pytest.mark.parametrize("flaw,op", [(f, op) for f, ops in WRONG.items() for op in ops])
def test_wrong_kernel_is_caught(flaw, op, suite):
    cases = [c for c in suite if c.op == op]
    if flaw in ("permissive-broadcast", "broadcast-before-8"):
        cases = [c for c in cases if c.expect_error is not None]
    assert cases
    results = run_cases(cases, KernelBackend({op: make_kernel(op, flaw=flaw)}, name=flaw, check=False))
    outcomes = Counter(r.outcome for r in results)
    assert outcomes["fail"] >= 1, outcomes


def test_where_negative_zero_lost_by_merge_is_caught_per_float_type(value_cases):
    """The x != 0 merge loses a selected -0: caught in float16, float and double."""
    cases = [c for c in value_cases if c.op == "Where" and c.tags["numerics"] in ("special", "zeros")]
    res = run_cases(cases, KernelBackend({"Where": make_kernel("Where", flaw="merge-nonzero")}, check=False))
    failed = {c.tags["dtype"] for c, r in zip(cases, res) if r.outcome == "fail"}
    assert failed >= {"float16", "float", "double", "bfloat16"}, failed


def test_max_nan_propagates(value_cases):
    """The decision (module docstring): NaN inputs are generated for Max/Min and give NaN."""
    for op in ("Max", "Min"):
        cases = [c for c in value_cases if c.op == op and c.tags["numerics"] == "special"]
        assert cases
        nan_in = [c for c in cases if any(np.isnan(np.asarray(v, dtype=np.float64)).any()
                                          for d in c.datasets for v in d.inputs.values())]
        assert nan_in
        assert all(np.isnan(np.asarray(v, dtype=np.float64)).any() for c in nan_in for v in c.datasets[0].outputs.values())


# ----------------------------------------------------------------------------- onnx.reference
#: op -> (case filter, why onnx.reference 1.23 is wrong).
REFERENCE_WRONG = {
    "legacy consumed_inputs": (
        lambda c: c.op in ("Sum", "Mean") and c.since_version == 1 and c.tags.get("params") == "legacy",
        "Sum/Mean-1 with consumed_inputs: onnx.reference raises TypeError ('Issues with types ... and "
        "attributes [consumed_inputs]'); the attribute is a legacy optimization hint of a valid model"),
    "Mean in-place broadcast": (
        lambda c: c.op == "Mean" and c.since_version >= 8 and c.tags["arity"] > 1 and
        np.broadcast_shapes(*[i.shape for i in c.inputs]) != c.inputs[0].shape,
        "onnx.reference's Mean does res = args[0].copy(); res += m: a first input smaller than the broadcast "
        "shape raises 'non-broadcastable output operand' (Mean-8+ broadcasts multidirectionally)"),
}


def test_onnx_reference_on_normal_cases(value_cases):
    """onnx.reference agrees on every normal/int/bool/string/complex case except the listed
    disagreements (where it is wrong); each listed disagreement still occurs."""
    cases = [c for c in value_cases if c.tags["numerics"] in ("normal", "int", "bool", "string", "complex")]
    res = run_cases(cases, resolve_backend("onnx-reference"))
    seen = Counter()
    unexplained = []
    for c, r in zip(cases, res):
        why = [k for k, (f, _) in REFERENCE_WRONG.items() if f(c)]
        if r.outcome == "pass":
            assert not why, (c.id, why)
            continue
        if why and r.outcome == "error":
            seen[why[0]] += 1
        else:
            unexplained.append((c.id, r.outcome, r.message[:200]))
    assert not unexplained, unexplained
    assert set(seen) == set(REFERENCE_WRONG), seen


def test_onnx_reference_accepts_unequal_shapes_before_8(suite):
    """Known disagreement: onnx.reference broadcasts Sum/Mean/Max/Min-1 and -6 inputs of
    different shapes; the text says "All inputs and outputs must have the same shape" (the
    error case is right, onnx.reference is lenient)."""
    cases = [c for c in suite if c.expect_error is not None and c.tags.get("error") == "shape"]
    assert {c.op for c in cases} == {"Sum", "Mean", "Max", "Min"}
    res = run_cases(cases, resolve_backend("onnx-reference"))
    assert all(r.outcome == "fail" for r in res), Counter(r.outcome for r in res)
    other = [c for c in suite if c.expect_error is not None and c.tags.get("error") != "shape"]
    assert other and all(r.outcome == "pass" for r in run_cases(other, resolve_backend("onnx-reference")))


def test_max_sign_of_zero_is_not_checked(value_cases):
    """max(-0, +0) is not ordered by the text: a kernel flipping the sign of every zero result
    passes every Max/Min case (decision in the module docstring), while the special cases do
    contain zeros of both signs."""
    cases = [c for c in value_cases if c.op in ("Max", "Min") and c.tags["numerics"] == "special"
             and c.tags["dtype"] in ("float", "double", "float16")]
    assert any((np.asarray(v) == 0).any() and np.signbit(np.asarray(v, dtype=np.float64)[np.asarray(v) == 0]).any()
               for c in cases for v in c.datasets[0].inputs.values())

    def flip(op):
        inner = make_kernel(op)

        def k(inputs, attributes, outputs, opset):
            out = inner(inputs, attributes, outputs, opset)[outputs[0]]
            return {outputs[0]: np.where(out == 0, -out, out).astype(out.dtype)}
        return k

    res = run_cases(cases, KernelBackend({op: flip(op) for op in ("Max", "Min")}, check=False))
    assert all(r.outcome == "pass" for r in res), Counter(r.outcome for r in res)


def test_onnxruntime_where_loses_a_selected_negative_zero(value_cases):
    """Known onnxruntime 1.32 CPU disagreement (it is wrong): Where merges ``c ? X : 0`` and
    ``!c ? Y : 0`` by ``x != 0 ? x : y`` (where_op.cc), so a selected X = -0 comes out +0;
    the text's output elements are the selected input elements.  Smallest case:
    ``Where(True, [-0., -0.], [-0., -0.])`` (float, opset 16) returns ``[0., 0.]``."""
    pytest.importorskip("onnxruntime")
    cases = [c for c in value_cases if c.op == "Where" and c.tags["numerics"] == "zeros"
             and c.tags["dtype"] in ("float", "double", "float16") and not c.tags.get("zero_size")]
    assert cases
    res = run_cases(cases, resolve_backend("onnxruntime"))
    fails = [r for r in res if r.outcome == "fail"]
    assert fails and all("wrong sign" in r.message for r in fails), [(r.id, r.outcome, r.message) for r in res]
