"""Tests of the logical, comparison and bitwise entries (:mod:`conformance.ops.logical`).

* the oracles against independent formulas: exact rational order for floats (NaN unordered,
  -0 == +0), integer subtraction, UTF-8 bytes for strings, numpy's bitwise ufuncs in the
  element type for two's complement, Python's ``and``/``or``; hand-derived values; onnx's
  own node-test examples (``onnx.backend.test.case.node``);
* agreement with ``onnx.reference`` on every generated case, every disagreement listed
  (:data:`KNOWN_OREF`) and asserted to still exist;
* kernels through ``KernelBackend``: numpy's operators and independent alternative forms
  (function bodies, float64 upcast, unsigned views, xor masks) pass every case; each
  deliberately wrong kernel (:data:`WRONG`) fails at least one case;
* coverage: every type combination of every version, the ``ties`` and ``ulp-neighbours``
  classes where the text needs them, with equal and float32-colliding pairs in them.
"""

from __future__ import annotations

import importlib
import math
import unicodedata
from collections import Counter
from fractions import Fraction

import ml_dtypes
import numpy as np
import onnx
import pytest

from conformance import registry
from conformance.backends import resolve_backend
from conformance.backends.kernel import KernelBackend
from conformance.coverage import compute_coverage
from conformance.ops import logical, values as V
from conformance.ops.entry import Ctx
from conformance.opspec import op_spec
from conformance.runner import run_cases
from oracle_checks import single_node_tests  # tests/oracle_checks.py

pytestmark = pytest.mark.filterwarnings("ignore::RuntimeWarning")

ENTRY = {e.op: e for e in logical.ENTRIES}
OPS = list(ENTRY)
LOGIC = ("And", "Or", "Xor")
COMPARE = ("Equal", "Greater", "Less", "GreaterOrEqual", "LessOrEqual")
BITWISE = ("BitwiseAnd", "BitwiseOr", "BitwiseXor")
#: operators with a legacy (broadcast/axis) version 1
LEGACY = ("And", "Or", "Xor", "Equal", "Greater", "Less")
INT_TYPES = ("uint8", "uint16", "uint32", "uint64", "int8", "int16", "int32", "int64")


def _ctx(op, t, version=None):
    spec = op_spec(op)
    v = version or max(spec.versions)
    formals = [f.name for f in spec.versions[v].inputs]
    return Ctx(op, v, v, {f: t for f in formals})


def _oracle(op, t, *inputs, version=None):
    return ENTRY[op].oracle(_ctx(op, t, version), *inputs)


# ============================================================================ oracle
def _key(x: float):
    """An exact total order of the non-NaN floats that does not use float comparison:
    (-inf) < finite rationals < (+inf); -0 and +0 are the same rational."""
    if math.isinf(x):
        return (1 if x > 0 else -1, Fraction(0))
    return (0, Fraction(x))


def _exact_cmp(op, x, y):
    if math.isnan(x) or math.isnan(y):
        return False  # IEEE 754 5.11: NaN is unordered with everything, itself included
    kx, ky = _key(x), _key(y)
    return {"Equal": kx == ky, "Greater": kx > ky, "Less": kx < ky,
            "GreaterOrEqual": kx >= ky, "LessOrEqual": kx <= ky}[op]


FLOATS = [math.nan, -math.inf, -1.7976931348623157e308, -1.5, -1.0, -5e-324, -0.0, 0.0, 5e-324,
          2.2250738585072014e-308, 1.0, 1.0000000000000002, 1.0000001192092896, 3.4028234663852886e38, math.inf]


@pytest.mark.parametrize("op", COMPARE)
def test_comparison_oracle_floats_against_exact_order(op):
    a = np.array(FLOATS).reshape(-1, 1)
    b = np.array(FLOATS).reshape(1, -1)
    got = _oracle(op, "double", a, b)
    assert got.dtype == np.bool_ and got.shape == (len(FLOATS), len(FLOATS))
    for i, x in enumerate(FLOATS):
        for j, y in enumerate(FLOATS):
            assert got[i, j] == _exact_cmp(op, x, y), (op, x, y)


@pytest.mark.parametrize("op", COMPARE)
def test_comparison_oracle_ints_against_subtraction(op):
    rng = np.random.default_rng(1)
    for t in INT_TYPES:
        info = V.iinfo(t)
        lo, hi = int(info.min), int(info.max)
        xs = [lo, lo + 1, hi, hi - 1, 0, 1] + [int(v) for v in rng.integers(lo, hi, 20, endpoint=True,
                                                                             dtype=np.uint64 if lo >= 0 else np.int64)]
        a = np.empty((len(xs), 1), dtype=object)
        a[:, 0] = xs
        b = a.reshape(1, -1)
        got = _oracle(op, t, a, b)
        for i, x in enumerate(xs):
            for j, y in enumerate(xs):
                d = x - y
                want = {"Equal": d == 0, "Greater": d > 0, "Less": d < 0, "GreaterOrEqual": d >= 0,
                        "LessOrEqual": d <= 0}[op]
                assert got[i, j] == want, (op, t, x, y)


def test_equal_oracle_strings_against_utf8_bytes():
    ss = list(logical.TIE_STRINGS) + ["string1", "string2", "日本語"]
    a = np.empty((len(ss), 1), dtype=object)
    a[:, 0] = ss
    got = _oracle("Equal", "string", a, a.reshape(1, -1))
    for i, x in enumerate(ss):
        for j, y in enumerate(ss):
            assert got[i, j] == (x.encode() == y.encode()), (x, y)
    # no normalization, no case folding
    assert unicodedata.normalize("NFC", "e\u0301") == "é"
    assert not _oracle("Equal", "string", np.array(["é"], object), np.array(["e\u0301"], object))[0]
    assert not _oracle("Equal", "string", np.array(["a"], object), np.array(["A"], object))[0]


@pytest.mark.parametrize("op", BITWISE + ("BitwiseNot",))
def test_bitwise_oracle_against_numpy_in_the_type(op):
    """numpy's bitwise ufuncs on the typed arrays are the two's complement results."""
    rng = np.random.default_rng(2)
    fn = {"BitwiseAnd": np.bitwise_and, "BitwiseOr": np.bitwise_or, "BitwiseXor": np.bitwise_xor}.get(op)
    for t in INT_TYPES:
        dt = V.np_dtype(t)
        info = V.iinfo(t)
        ext = np.array([info.min, info.min + 1, info.max, info.max - 1, 0, 1], dtype=dt)
        x = np.concatenate([ext, rng.integers(info.min, info.max, 30, endpoint=True, dtype=dt)])
        if fn is None:
            got = _oracle(op, t, V.to_exact(x, t))
            want = np.invert(x)
        else:
            a, b = x.reshape(-1, 1), x.reshape(1, -1)
            got = _oracle(op, t, V.to_exact(a, t), V.to_exact(b, t))
            want = fn(a, b)
        assert got.dtype == object
        assert all(isinstance(v, int) and info.min <= v <= info.max for v in got.ravel())
        np.testing.assert_array_equal(V.to_type(got, t), want, err_msg=f"{op} {t}")


def test_bitwise_hand_derived_values():
    def one(op, t, *xs):
        ins = [np.array([x], dtype=object) for x in xs]
        return int(_oracle(op, t, *ins)[0])

    assert one("BitwiseNot", "uint8", 0) == 255
    assert one("BitwiseNot", "uint8", 200) == 55
    assert one("BitwiseNot", "uint64", 0) == 2 ** 64 - 1
    assert one("BitwiseNot", "int8", -128) == 127
    assert one("BitwiseNot", "int8", 0) == -1
    assert one("BitwiseNot", "int64", 2 ** 63 - 1) == -(2 ** 63)
    assert one("BitwiseAnd", "int8", -1, 5) == 5
    assert one("BitwiseAnd", "int8", -128, 127) == 0
    assert one("BitwiseOr", "int16", -32768, 1) == -32767
    assert one("BitwiseXor", "int32", -1, 0) == -1
    assert one("BitwiseXor", "uint32", 2 ** 32 - 1, 1) == 2 ** 32 - 2


@pytest.mark.parametrize("op", LOGIC + ("Not",))
def test_logical_oracle_against_python(op):
    tf = [False, True]
    if op == "Not":
        got = _oracle(op, "bool", np.array(tf))
        assert list(got) == [True, False]
        return
    got = _oracle(op, "bool", np.array(tf).reshape(2, 1), np.array(tf).reshape(1, 2))
    py = {"And": lambda x, y: x and y, "Or": lambda x, y: x or y, "Xor": lambda x, y: x != y}[op]
    for i, x in enumerate(tf):
        for j, y in enumerate(tf):
            assert got[i, j] == py(x, y)


def test_comparison_hand_derived_values():
    def one(op, x, y, t="float"):
        return bool(_oracle(op, t, np.array([x]), np.array([y]))[0])

    nan = math.nan
    assert one("Equal", -0.0, 0.0) and one("GreaterOrEqual", -0.0, 0.0) and one("LessOrEqual", 0.0, -0.0)
    assert not one("Greater", 0.0, -0.0) and not one("Less", -0.0, 0.0)
    assert not one("Equal", nan, nan)
    for op in COMPARE:
        assert not one(op, nan, 1.0) and not one(op, 1.0, nan) and not one(op, nan, nan), op
    assert one("Greater", math.inf, 1.7976931348623157e308) and not one("Greater", math.inf, math.inf)
    assert one("GreaterOrEqual", math.inf, math.inf)
    assert one("Greater", 1.0000000000000002, 1.0, "double")  # beyond float32 precision


def _onnx_examples():
    """The node-test examples onnx ships for these operators (their ``expect`` calls)."""
    node = importlib.import_module("onnx.backend.test.case.node")
    node._TargetOpType = None
    return single_node_tests(ENTRY, ["and_", "or_", "xor", "not_", "equal", "greater", "less", "greater_or_equal",
                                     "less_or_equal", "bitwiseand", "bitwiseor", "bitwisexor", "bitwisenot"])


def test_oracle_matches_onnx_node_test_examples():
    examples = _onnx_examples()
    assert {tc.model.graph.node[0].op_type for tc in examples} == set(OPS)
    n = 0
    for tc in examples:
        nd = tc.model.graph.node[0]
        opset = next(o.version for o in tc.model.opset_import if o.domain == "")
        version = onnx.defs.get_schema(nd.op_type, opset).since_version
        spec = op_spec(nd.op_type)
        formals = [f.name for f in spec.versions[version].inputs]
        types = [V.name_of(vi.type.tensor_type.elem_type) for vi in tc.model.graph.input]
        ctx = Ctx(nd.op_type, version, opset, dict(zip(formals, types)))
        for ins, outs in tc.data_sets:
            got = ENTRY[nd.op_type].oracle(ctx, *[V.to_exact(np.asarray(x), t) for x, t in zip(ins, types)])
            out_t = V.name_of(tc.model.graph.output[0].type.tensor_type.elem_type)
            np.testing.assert_array_equal(V.to_type(np.asarray(got), out_t), outs[0], err_msg=tc.name)
            n += 1
    assert n >= 40


# ============================================================================ onnx.reference
def _legacy_axis(c):
    return c.since_version == 1 and c.tags.get("shape") in ("legacy-axis0", "legacy-axis1")


#: Every disagreement of onnx.reference (onnx 1.23) with the suite; onnx.reference is wrong in each.
KNOWN_OREF = {
    # Version 1 text: "If broadcasting is enabled, the right-hand-side argument will be broadcasted
    # to match the shape of left-hand-side argument", aligned at `axis` ("If set, defines the
    # broadcast dimensions"). onnx.reference ignores broadcast/axis and broadcasts numpy-style: a B
    # aligned at axis 0 or 1 raises (TypeError) or is silently aligned with A's trailing dims.
    "legacy-axis-ignored": _legacy_axis,
    # Without broadcast=1 broadcasting is not enabled, so B must have A's shape; onnx.reference
    # broadcasts (2, 3) with (3,) anyway and returns outputs.
    "legacy-shape-accepted": lambda c: c.expect_error is not None and c.tags.get("error") == "legacy-shape",
}


def _known(c):
    return next((k for k, f in KNOWN_OREF.items() if f(c)), None)


@pytest.fixture(scope="module")
def oref_results(suite):
    return run_cases(suite, resolve_backend("onnx-reference"))


def test_oracle_agrees_with_onnx_reference(suite, oref_results):
    bad = [(c.id, r.outcome, r.message[:200]) for c, r in zip(suite, oref_results)
           if r.outcome != "pass" and _known(c) is None]
    assert not bad, bad[:8]
    assert sum(r.outcome == "pass" for r in oref_results) >= 650


@pytest.mark.parametrize("kind", sorted(KNOWN_OREF))
def test_disagreement_with_onnx_reference_exists(kind, suite, oref_results):
    outs = Counter(r.outcome for c, r in zip(suite, oref_results) if _known(c) == kind)
    assert outs["fail"] + outs["error"] >= 1, outs


# ============================================================================ kernels
NUMPY = {"And": np.logical_and, "Or": np.logical_or, "Xor": np.logical_xor, "Not": np.logical_not,
         "Equal": np.equal, "Greater": np.greater, "Less": np.less, "GreaterOrEqual": np.greater_equal,
         "LessOrEqual": np.less_equal, "BitwiseAnd": np.bitwise_and, "BitwiseOr": np.bitwise_or,
         "BitwiseXor": np.bitwise_xor, "BitwiseNot": np.invert}
_UNSIGNED = {1: np.uint8, 2: np.uint16, 4: np.uint32, 8: np.uint64}


def _operands(op, a, b, attributes, opset, loose=False):
    """A and B aligned: legacy broadcast/axis before opset 7, multidirectional after."""
    if op in LEGACY and opset < 7:
        if not attributes.get("broadcast"):
            if a.shape != b.shape:
                raise ValueError(f"legacy {op}: B {b.shape} must have A's shape {a.shape}")
            return a, b
        axis = attributes.get("axis", a.ndim - b.ndim)
        if tuple(a.shape[axis:axis + b.ndim]) != b.shape:
            raise ValueError(f"legacy {op}: B {b.shape} does not match A {a.shape} at axis {axis}")
        return a, b.reshape((1,) * axis + b.shape + (1,) * (a.ndim - axis - b.ndim))
    try:
        np.broadcast_shapes(a.shape, b.shape)
    except ValueError:
        if not loose:
            raise
        return a, np.resize(b, a.shape)  # flaw: cycles B over A's shape
    return a, b


def _alternative(op, a, b=None):
    """Independent legitimate forms: function bodies, float64 upcast, swapped operands,
    unsigned views for bitwise, xor with all-ones for BitwiseNot."""
    up = (lambda x: x.astype(np.float64)) if a.dtype.kind == "f" or a.dtype == ml_dtypes.bfloat16 else (lambda x: x)
    if op == "And":
        return a & b
    if op == "Or":
        return a | b
    if op == "Xor":
        return a != b
    if op == "Not":
        return ~a
    if op == "Equal":
        if a.dtype == object:
            return np.asarray(np.frompyfunc(lambda x, y: x.encode() == y.encode(), 2, 1)(a, b), dtype=bool)
        return up(a) == up(b)
    if op == "Greater":
        return np.less(up(b), up(a))
    if op == "Less":
        return np.greater(up(b), up(a))
    if op == "GreaterOrEqual":  # the function body: Or(Greater(A, B), Equal(A, B))
        return (up(a) > up(b)) | (up(a) == up(b))
    if op == "LessOrEqual":
        return (up(a) < up(b)) | (up(a) == up(b))
    u = _UNSIGNED[a.dtype.itemsize]
    if op == "BitwiseNot":
        return np.bitwise_xor(a.view(u), np.array(np.iinfo(u).max, u)).view(a.dtype)
    ua, ub = np.array(a).view(u), np.array(b).view(u)
    return NUMPY[op](ua, ub).view(a.dtype)


def make_kernel(op, *, alternative=False, flaw=None):
    """A kernel for ``op``: numpy's operator (or :func:`_alternative`), with an optional flaw."""

    def kernel(inputs, attributes, outputs, opset):
        if "X" in inputs:
            a, b = inputs["X"], None
        else:
            a, b = _operands(op, inputs["A"], inputs["B"], attributes, opset, loose=flaw == "and-loose-broadcast")
        fl = a.dtype.kind == "f" or a.dtype == ml_dtypes.bfloat16
        if flaw == "compare-in-float32" and a.dtype == np.float64:
            a, b = a.astype(np.float32), b.astype(np.float32)
        with np.errstate(all="ignore"):
            y = _alternative(op, a, b) if alternative else (NUMPY[op](a) if b is None else NUMPY[op](a, b))
            if flaw == "greater-as-ge":
                y = np.greater_equal(a, b)
            if flaw == "less-as-le":
                y = np.less_equal(a, b)
            if flaw == "ge-as-greater":
                y = np.greater(a, b)
            if flaw == "ge-as-not-less":
                y = ~np.less(a, b)
            if flaw == "equal-nan-true" and fl:
                y = np.equal(a, b) | (np.isnan(a) & np.isnan(b))
            if flaw == "equal-signed-zero" and fl:
                y = np.equal(a, b) & (np.signbit(a) == np.signbit(b))
            if flaw == "bitwisenot-unsigned-negation" and a.dtype.kind == "u":
                y = np.negative(a)
            if flaw == "equal-string-casefold" and a.dtype == object:
                y = np.asarray(np.frompyfunc(lambda x, z: x.casefold() == z.casefold(), 2, 1)(a, b), dtype=bool)
            if flaw == "equal-string-nfc" and a.dtype == object:
                nfc = lambda x: unicodedata.normalize("NFC", x)  # noqa: E731
                y = np.asarray(np.frompyfunc(lambda x, z: nfc(x) == nfc(z), 2, 1)(a, b), dtype=bool)
            if flaw == "equal-string-strip" and a.dtype == object:
                y = np.asarray(np.frompyfunc(lambda x, z: x.strip() == z.strip(), 2, 1)(a, b), dtype=bool)
            if flaw == "equal-string-prefix" and a.dtype == object:  # strncmp over the shorter length
                y = np.asarray(np.frompyfunc(lambda x, z: x[:len(z)] == z[:len(x)], 2, 1)(a, b), dtype=bool)
            if flaw == "xor-as-or":
                y = np.logical_or(a, b)
        y = np.asarray(y)
        if y.dtype == object:
            y = y.astype(bool)
        return {outputs[0]: y}

    return kernel


LEGIT = {"numpy": {}, "alternative-forms": {"alternative": True}}


@pytest.mark.parametrize("name", sorted(LEGIT))
def test_legitimate_kernel_passes_everything(name, suite):
    backend = KernelBackend({op: make_kernel(op, **LEGIT[name]) for op in OPS}, name=name)
    results = run_cases(suite, backend)
    bad = [(r.id, r.outcome, r.message[:300]) for r in results if r.outcome != "pass"]
    assert not bad, bad[:5]
    assert len(results) == len(suite) > 700


#: flaw -> the operators it is applied to (each must fail at least one case of each)
WRONG = {
    "greater-as-ge": ("Greater",),
    "less-as-le": ("Less",),
    "ge-as-greater": ("GreaterOrEqual",),
    "ge-as-not-less": ("GreaterOrEqual",),
    "equal-nan-true": ("Equal",),
    "equal-signed-zero": ("Equal",),
    "bitwisenot-unsigned-negation": ("BitwiseNot",),
    "and-loose-broadcast": ("And",),
    "compare-in-float32": COMPARE,
    "xor-as-or": ("Xor",),
}


@pytest.mark.parametrize("flaw", sorted(WRONG))
def test_wrong_kernel_is_caught(flaw, suite):
    for op in WRONG[flaw]:
        cases = [c for c in suite if c.op == op]
        results = run_cases(cases, KernelBackend({op: make_kernel(op, flaw=flaw)}, name=flaw, check=False))
        outcomes = Counter(r.outcome for r in results)
        assert outcomes["fail"] >= 1, (op, outcomes)


#: each STRING_PARTNER pair is equal under one of these (case, composition, spaces, prefix)
STRING_FLAWS = ("equal-string-casefold", "equal-string-nfc", "equal-string-strip", "equal-string-prefix")


def test_string_partners_catch_a_string_flaw(suite):
    """Equal-19 has two string cases (one per numerics class); the ties case puts confusable
    partners side by side, so at least one of the case-folding, NFC-normalizing and
    space-stripping and prefix-comparing kernels fails (which one depends on the seed's pool)."""
    cases = [c for c in suite if c.op == "Equal" and c.tags.get("dtype") == "string"]
    assert len(cases) >= 2
    caught = set()
    for flaw in STRING_FLAWS:
        results = run_cases(cases, KernelBackend({"Equal": make_kernel("Equal", flaw=flaw)}, check=False))
        if any(r.outcome == "fail" for r in results):
            caught.add(flaw)
    assert caught, caught


def test_loose_broadcast_fails_the_error_case(suite):
    """The kernel that cycles an incompatible B over A is caught by the invalid model itself."""
    cases = [c for c in suite if c.op == "And" and c.expect_error is not None and c.tags["error"] == "broadcast"
             and c.since_version >= 7]
    assert cases
    results = run_cases(cases, KernelBackend({"And": make_kernel("And", flaw="and-loose-broadcast")}, check=False))
    assert all(r.outcome == "fail" for r in results), [r.message for r in results]


@pytest.mark.parametrize("flaw, kind", [("greater-as-ge", "float"), ("greater-as-ge", "int"),
                                        ("compare-in-float32", "double")])
def test_tie_flaws_caught_in_every_version(flaw, kind, suite):
    """Greater-as-GreaterOrEqual is caught by float cases and by integer cases of every version
    that has them; float32 rounding of doubles by every version with double, for every comparison."""
    ops = ("Greater",) if flaw == "greater-as-ge" else COMPARE
    for op in ops:
        cases = [c for c in suite if c.op == op and c.expect_error is None and
                 (V.kind(c.tags["dtype"]) == kind if kind != "double" else c.tags["dtype"] == "double")]
        assert cases
        results = run_cases(cases, KernelBackend({op: make_kernel(op, flaw=flaw)}, check=False))
        failed = {c.since_version for c, r in zip(cases, results) if r.outcome == "fail"}
        assert failed == {c.since_version for c in cases}, (op, failed)


# ============================================================================ suite and coverage
def test_coverage_every_version_and_type(suite):
    cov = compute_coverage(suite)
    assert not cov["unmatched"]
    assert set(cov["ops"]) == set(OPS)
    for op, o in cov["ops"].items():
        assert set(o["versions"]) == {str(v) for v in op_spec(op).versions}
        for v, e in o["versions"].items():
            assert len(e["covered"]) == e["total_combinations"] > 0, (op, v, e["missing"])
            assert not e["missing"] and not e["unexercised"], (op, v)


def test_numerics_classes(value_cases):
    for op in COMPARE:
        for v in op_spec(op).versions:
            types = {c.tags["dtype"] for c in value_cases if c.op == op and c.since_version == v}
            assert types, (op, v)
            for t in types:
                nums = {c.tags["numerics"] for c in value_cases if c.op == op and c.since_version == v
                        and c.tags["dtype"] == t}
                k = V.kind(t)
                want = {"float": {"special", "ties", "ulp-neighbours"}, "int": {"int-extremes", "ties"},
                        "string": {"ties"}, "bool": {"bool"}}[k]
                assert want <= nums, (op, v, t, nums)
    for op in ("GreaterOrEqual", "LessOrEqual"):  # the function-body opsets
        assert {c.opset for c in value_cases if c.op == op} >= {12, 16}


def _compared(c):
    """A and B of a value case as the operator compares them (legacy alignment applied)."""
    d = c.datasets[0]
    a, b = [d.inputs[i.name] if i.name in d.inputs else i.value for i in c.inputs]
    a, b = _operands(c.op, np.asarray(a), np.asarray(b), c.attributes, c.opset)
    return np.broadcast_arrays(a, b)


def test_ties_have_equal_pairs_of_every_kind(value_cases):
    """The ties class gives many equal compared pairs for every kind (zeros of both signs
    for floats, integer extremes, strings)."""
    for op in COMPARE:
        eq = Counter()
        for c in value_cases:
            if c.op == op and c.tags["numerics"] == "ties":
                a, b = _compared(c)
                k = V.kind(c.tags["dtype"])
                same = (a == b) if a.dtype != object else np.frompyfunc(lambda x, y: x == y, 2, 1)(a, b).astype(bool)
                eq[k] += int(np.sum(same))
                if k == "float":
                    eq["signed-zeros"] += int(np.sum((a == 0) & (b == 0) & (np.signbit(a) != np.signbit(b))))
                if k == "int":
                    info = V.iinfo(c.tags["dtype"])
                    eq["extreme"] += int(np.sum(same & ((a == info.min) | (a == info.max))))
        assert eq["float"] >= 20 and eq["int"] >= 20 and eq["signed-zeros"] >= 1 and eq["extreme"] >= 1, (op, eq)
        if op == "Equal":
            assert eq["string"] >= 1, eq


def test_double_pairs_differ_beyond_float32(value_cases):
    """Every comparison version with double has pairs A != B with float32(A) == float32(B)."""
    for op in COMPARE:
        have = set()
        for c in value_cases:
            if c.op == op and c.tags["dtype"] == "double":
                a, b = _compared(c)
                if np.any((a != b) & (a.astype(np.float32) == b.astype(np.float32))):
                    have.add(c.since_version)
        want = {c.since_version for c in value_cases if c.op == op and c.tags["dtype"] == "double"}
        assert want and have == want, (op, have, want)


def test_generation_is_deterministic(suite):
    again = registry.generate(OPS, seed=0)
    assert [c.id for c in again] == [c.id for c in suite]
    assert [c.id for c in registry.generate(["Equal"], seed=1)] != [c.id for c in suite if c.op == "Equal"]
