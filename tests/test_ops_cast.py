"""Tests of the Cast and CastLike entries (``conformance/ops/cast.py``) and their oracle
(``conformance/reference/cast.py``).

* the oracle against an independent implementation written here from the formats' bit
  definitions (ONNX ``docs/Float8.md``, the float4/float6 technical notes, IEEE 754) and exact
  rational arithmetic (``fractions``): every value of every 8-bit-or-narrower float type cast
  to every floating target, and a grid of ties, near-ties, overflow and underflow points;
  the text's own examples and table cells; onnx's node-test data for Cast (the spec's
  examples) where the text defines the elements;
* agreement with ``onnx.reference`` on the cases of the newest versions, every disagreement
  classified and explained (who is right);
* kernels through ``KernelBackend``: the independent implementation (with any formatting of
  numbers as strings and garbage for undefined elements) passes every case it runs; each
  deliberately wrong one (float8 saturating with saturate=0, rounding toward zero,
  float -> int rounding instead of truncating, bfloat16 by truncation, NaN -> float4 as -0,
  fixed -> fixed saturating, conversion through float32, -0 -> True, fnuz +-inf -> +-max at
  19-23, e5m2 overflow -> NaN without saturation, round_mode ignored, 3-digit strings,
  case-sensitive INF) fails at least one case of the subset it targets;
* coverage and structure: every type combination of every version has value cases, float8
  pairs the source can exceed get both saturate values, float8e8m0 pairs both saturate values
  and two rounding modes, undefined elements are never generated, the value tables hold the
  traps.
"""

from __future__ import annotations

import math
from collections import Counter, defaultdict
from fractions import Fraction

import numpy as np
import onnx
import pytest

from conformance import dtypes
from conformance.backends import resolve_backend
from conformance.backends.kernel import KernelBackend
from conformance.coverage import compute_coverage
from conformance.ops import cast as C
from conformance.ops import values as V
from conformance.ops.entry import Ctx
from conformance.reference import cast as ref
from conformance.runner import run_cases
from oracle_checks import single_node_tests  # tests/oracle_checks.py

pytestmark = pytest.mark.filterwarnings("ignore::RuntimeWarning")
OPS = ["Cast", "CastLike"]

# ============================================================================ an independent implementation
#: name -> (exponent bits, mantissa bits, bias, special-value encoding), from the formats' definitions:
#: "ieee" (all-ones exponent: inf/NaN), "fn" (only S.1111.111 is NaN, no inf), "fnuz" (only
#: 1.0000.000 is NaN, no inf, no -0), "none" (no inf, no NaN: float4/float6).
FORMATS = {
    "float16": (5, 10, 15, "ieee"), "bfloat16": (8, 7, 127, "ieee"), "float": (8, 23, 127, "ieee"),
    "double": (11, 52, 1023, "ieee"), "float8e4m3fn": (4, 3, 7, "fn"), "float8e4m3fnuz": (4, 3, 8, "fnuz"),
    "float8e5m2": (5, 2, 15, "ieee"), "float8e5m2fnuz": (5, 2, 16, "fnuz"), "float4e2m1": (2, 1, 1, "none"),
    "float6e2m3": (2, 3, 1, "none"), "float6e3m2": (3, 2, 3, "none"),
}
F8 = ("float8e4m3fn", "float8e4m3fnuz", "float8e5m2", "float8e5m2fnuz")
NARROW = F8 + ("float8e8m0", "float4e2m1", "float6e2m3", "float6e3m2")


def fmt_max(name: str) -> Fraction:
    e, m, bias, kind = FORMATS[name]
    top = 2**e - 1 if kind in ("fnuz", "none", "fn") else 2**e - 2
    frac = Fraction(2**(m + 1) - (2 if kind == "fn" else 1), 2**m)  # fn: the all-ones mantissa is NaN
    return frac * Fraction(2) ** (top - bias)


def fmt_emin(name: str) -> int:
    return 1 - FORMATS[name][2]


def decode(bits: int, name: str) -> float:
    """The value of a bit pattern of an 8-bit-or-narrower float type, from its definition."""
    if name == "float8e8m0":
        return math.nan if bits == 255 else 2.0 ** (bits - 127)
    e, m, bias, kind = FORMATS[name]
    width = 1 + e + m
    sign = -1.0 if bits >> (width - 1) & 1 else 1.0
    ex = (bits >> m) & (2**e - 1)
    man = bits & (2**m - 1)
    if kind == "fnuz" and bits == 1 << (width - 1):
        return math.nan
    if kind == "fn" and ex == 2**e - 1 and man == 2**m - 1:
        return math.nan
    if kind == "ieee" and ex == 2**e - 1:
        return sign * math.inf if man == 0 else math.nan
    if ex == 0:
        return sign * man * 2.0 ** (1 - bias - m)
    return sign * (1 + man / 2**m) * 2.0 ** (ex - bias)


def rne(q: Fraction, name: str) -> Fraction:
    """``q`` rounded to nearest even at the format's mantissa width, gradual underflow, no upper
    exponent bound (the text's ``[x]``)."""
    if q == 0:
        return Fraction(0)
    a = abs(q)
    e = a.numerator.bit_length() - a.denominator.bit_length()
    if Fraction(2) ** e > a:
        e -= 1
    e = max(e, fmt_emin(name))
    ulp = Fraction(2) ** (e - FORMATS[name][1])
    n = a / ulp
    fl = math.floor(n)
    rem = n - fl
    if rem > Fraction(1, 2) or (rem == Fraction(1, 2) and fl % 2 == 1):
        fl += 1
    return (fl * ulp) if q > 0 else -(fl * ulp)


def expect_float(v, dst: str, version: int, sat: bool, mode: str) -> float:
    """The text's result of casting the exact value ``v`` (Fraction, or a float NaN/inf) to the
    floating type ``dst`` (the module docstring of conformance.reference.cast)."""
    if dst == "float8e8m0":
        if isinstance(v, float) and math.isnan(v):
            return math.nan
        if v == 0:
            return 2.0**-127 if sat else math.nan
        if isinstance(v, float):  # +inf
            return 2.0**127 if sat else math.nan
        k = v.numerator.bit_length() - v.denominator.bit_length()
        if Fraction(2) ** k > v:
            k -= 1
        lo = Fraction(2) ** k
        if v == lo:
            r = lo
        elif mode == "up":
            r = 2 * lo
        elif mode == "down":
            r = lo
        else:
            r = 2 * lo if v >= Fraction(3, 2) * lo else lo
        if r > Fraction(2) ** 127:
            return 2.0**127 if sat else math.nan
        if r < Fraction(2) ** -127:
            return 2.0**-127 if sat else math.nan
        return float(r)
    kind = FORMATS[dst][3]
    mx = fmt_max(dst)
    if isinstance(v, float) and v == 0:
        return 0.0 if kind == "fnuz" else v
    if isinstance(v, float) and math.isnan(v):
        return float(mx) if kind == "none" else math.nan
    if isinstance(v, float):  # +-inf
        s = 1 if v > 0 else -1
        if dst in F8:
            if sat:
                return math.nan if (kind == "fnuz" and version < 24) else s * float(mx)
            return s * math.inf if dst == "float8e5m2" else math.nan
        return s * float(mx) if kind == "none" else v
    r = rne(v, dst)
    if abs(r) > mx:
        s = 1 if r > 0 else -1
        if dst in F8:
            if sat:
                return s * float(mx)
            return s * math.inf if dst == "float8e5m2" else math.nan
        return s * float(mx) if kind == "none" else s * math.inf
    if r == 0:
        return 0.0 if (kind == "fnuz" or v >= 0) else -0.0
    return float(r)


def exact_of(v):
    """A source element as an exact value: Fraction, a float NaN/inf, or for strings the parse."""
    if isinstance(v, (bool, np.bool_)):
        return Fraction(int(v))
    if isinstance(v, (int, np.integer)):
        return Fraction(int(v))
    if isinstance(v, str):
        u = v.upper()
        if u in ("INF", "+INF"):
            return math.inf
        if u == "-INF":
            return -math.inf
        if u == "NAN":
            return math.nan
        return Fraction(v)
    f = float(v)
    return f if not math.isfinite(f) or f == 0 else Fraction(f)  # +-0.0 keep their sign


def wrap(v: int, bits: int, signed: bool) -> int:
    v %= 2**bits
    return v - 2**bits if signed and v >= 2 ** (bits - 1) else v


def fmt_plain(v, src_kind: str) -> str:
    if src_kind == "bool":
        return "1" if v else "0"
    if src_kind == "int":
        return str(int(v))
    f = float(v)
    if math.isnan(f):
        return "NaN"
    if math.isinf(f):
        return "INF" if f > 0 else "-INF"
    return repr(f)


def independent(vals: list, src: str, dst: str, version: int, sat: bool, mode: str, *, fmt=fmt_plain,
                garbage=0) -> list:
    """Cast a list of source elements (Python values) by the text, independently of the oracle;
    undefined elements (float -> int NaN/inf/out of range) give ``garbage``."""
    ks, kd = V.kind(src), V.kind(dst)
    out = []
    for v in vals:
        if kd == V.STRING:
            out.append(v if ks == V.STRING else fmt(v, ks))
            continue
        if ks == V.STRING and kd == V.BOOL:
            out.append(True)  # positive integer literals only
            continue
        q = exact_of(v)
        if kd == V.BOOL:
            out.append(not (q == 0))
        elif kd == V.INT:
            info = V.iinfo(dst)
            bits, signed = int(info.bits), int(info.min) < 0
            if isinstance(q, float) and q == 0:
                out.append(0)
            elif isinstance(q, float):
                out.append(garbage)
            elif ks in (V.FLOAT, V.STRING):
                t = math.trunc(q)
                out.append(t if int(info.min) <= t <= int(info.max) else garbage)
            else:
                out.append(wrap(int(q), bits, signed))
        else:
            out.append(expect_float(q, dst, version, sat, mode))
    return out


def _as_py(x: np.ndarray, src: str) -> list:
    k = V.kind(src)
    if k == V.FLOAT:
        return [float(v) for v in np.asarray(x).astype(np.float64).ravel()]
    if k == V.INT:
        return [int(v) for v in V.to_exact(np.asarray(x), src).ravel()]
    if k == V.BOOL:
        return [bool(v) for v in np.asarray(x).ravel()]
    return [v.decode() if isinstance(v, bytes) else str(v) for v in np.asarray(x).ravel()]


def _same(a, b) -> bool:
    """Element lists equal: NaN == NaN, signed zeros distinguished, ints/bools/strings exact."""
    if len(a) != len(b):
        return False
    for x, y in zip(a, b):
        if isinstance(x, float) or isinstance(y, float):
            x, y = float(x), float(y)
            if math.isnan(x) and math.isnan(y):
                continue
            if x != y or math.copysign(1, x) != math.copysign(1, y):
                return False
        elif x != y:
            return False
    return True


def _oracle_list(vals, src, dst, version, sat=True, mode="up"):
    arr = C._as_source_array(vals, src)
    out = ref.cast(arr, src, dst, version=version, saturate=sat, round_mode=mode)
    return [float(v) for v in out] if V.kind(dst) == V.FLOAT else list(out)


# ============================================================================ the oracle
@pytest.mark.parametrize("src", NARROW)
def test_every_narrow_value_decodes_and_upcasts_exactly(src):
    """Every bit pattern of the 8-bit-or-narrower types: the fed value is the definition's value,
    and casting it to float, double, float16 follows the independent rules."""
    vals = V.all_values(src)
    bits = vals.view(np.uint8).astype(int) if vals.dtype.itemsize == 1 else None
    got = vals.astype(np.float64)
    want = [decode(int(b), src) for b in bits]
    assert _same(list(got), want)
    exact = [float(v) for v in got]
    for dst in ("float", "double", "float16", "bfloat16"):
        assert _same(_oracle_list(exact, src, dst, 25), independent(exact, src, dst, 25, True, "up")), (src, dst)


@pytest.mark.parametrize("dst", ("float16", "bfloat16") + NARROW)
def test_narrowing_is_correctly_rounded_with_the_text_tables(dst):
    """Every narrow value and a grid of ties, near-ties (a hair either side, below any float32
    resolution), overflow and underflow points, from double, cast to each floating target with
    every saturate/round_mode/version combination, equals the independent exact implementation."""
    rng = np.random.default_rng(7)
    pts = [math.nan, math.inf, -math.inf, 0.0, -0.0]
    for src in NARROW:
        pts += [float(v) for v in V.all_values(src).astype(np.float64)]
    pts += C._float_points(dst, rng)
    pts += [p * (1 + s * 2.0**-45) for p in list(pts) if math.isfinite(p) for s in (-1, 1)]
    pts += [float(v) for v in rng.normal(0, 100, 200)]
    arr = np.array(pts, dtype=np.float64)
    versions = (19, 24) if dst in F8 else (24,)
    modes = ref.ROUND_MODES if dst == "float8e8m0" else ("up",)
    checked = 0
    for version in versions:
        for sat in (True, False):
            for mode in modes:
                ok = ref.defined(arr, "double", dst, version=version, saturate=sat, round_mode=mode)
                vals = [float(v) for v in arr[ok]]
                assert len(vals) > 100
                got = _oracle_list(vals, "double", dst, version, sat, mode)
                want = independent(vals, "double", dst, version, sat, mode)
                bad = [(v, g, w) for v, g, w in zip(vals, got, want) if not _same([g], [w])]
                assert not bad, (dst, version, sat, mode, bad[:5])
                checked += len(vals)
    assert checked > 300


def test_integer_and_string_sources_round_once():
    """Integers beyond a target's precision and decimal literals round once from the exact value
    (2**60 + 2**36 + 1 is above a float32 tie: through double it would round down)."""
    big = [2**60 + 2**36 + 1, 2**60 + 3 * 2**36 - 1, 2**53 + 1, 2**24 + 1, -(2**60 + 2**36 + 1), 2**63 - 1]
    for dst in ("float", "bfloat16", "double", "float16", "float8e5m2", "float8e4m3fn"):
        got = _oracle_list(big, "int64", dst, 25)
        assert _same(got, independent(big, "int64", dst, 25, True, "up")), dst
    assert _oracle_list([2**60 + 2**36 + 1], "int64", "float", 25) == [float(2**60 + 2**37)]
    lits = ["0.1", "3.14", "1e-5", "1E8", "2.5E-3", "-7e2", "65520", "464", "+INF", "inf", "-Inf", "NaN", "nan"]
    for dst in ("float", "float16", "double", "bfloat16", "float8e4m3fn", "float8e5m2"):
        assert _same(_oracle_list(lits, "string", dst, 25), independent(lits, "string", dst, 25, True, "up")), dst


def test_the_texts_examples_and_table_cells():
    """The operator text: 200 (int16) -> -56 (int8); 36 -> True; the float8 tables (saturate and
    not, the 19-23 and 24+ fnuz infinity cells); the float8e8m0 table; the string literals."""
    assert _oracle_list([200], "int16", "int8", 13) == [-56]
    assert _oracle_list([36], "int32", "bool", 13) == [True]
    assert _oracle_list([-0.0, 0.0, math.nan, 1e-30], "float", "bool", 13) == [False, False, True, True]
    inf = [math.inf, -math.inf]
    for dst, mx in (("float8e4m3fn", 448.0), ("float8e5m2", 57344.0)):
        assert _oracle_list(inf, "float", dst, 19) == [mx, -mx]
        assert _oracle_list(inf + [1e6, -1e6], "float", dst, 24, sat=True) == [mx, -mx, mx, -mx]
    for dst, mx in (("float8e4m3fnuz", 240.0), ("float8e5m2fnuz", 57344.0)):
        assert all(math.isnan(v) for v in _oracle_list(inf, "float", dst, 19))  # version 19's table
        assert _oracle_list(inf, "float", dst, 24) == [mx, -mx]  # version 24's table
        assert all(math.isnan(v) for v in _oracle_list(inf + [1e6], "float", dst, 24, sat=False))
        assert _oracle_list([-0.0], "float", dst, 19) == [0.0] and not math.copysign(1, _oracle_list([-0.0], "float", dst, 19)[0]) < 0
    assert all(math.isnan(v) for v in _oracle_list(inf + [1e6, 480.0], "float", "float8e4m3fn", 24, sat=False))
    assert _oracle_list(inf + [1e6, -1e6], "float", "float8e5m2", 24, sat=False) == [math.inf, -math.inf, math.inf, -math.inf]
    assert _oracle_list([464.0, 464.5], "float", "float8e4m3fn", 24, sat=False)[0] == 448.0
    assert math.isnan(_oracle_list([464.5], "float", "float8e4m3fn", 24, sat=False)[0])
    # e8m0: saturate + up column, non-saturate + nearest column
    e8 = _oracle_list([0.0, math.nan, math.inf, 1e39, 1e-40, 3.0], "float", "float8e8m0", 24, True, "up")
    assert e8[0] == 2.0**-127 and math.isnan(e8[1]) and e8[2] == 2.0**127 and e8[3] == 2.0**127
    assert e8[4] == 2.0**-127 and e8[5] == 4.0
    e8 = _oracle_list([0.0, math.nan, math.inf, 3.0, 2.9, 0.75], "float", "float8e8m0", 24, False, "nearest")
    assert all(math.isnan(v) for v in e8[:3]) and e8[3:] == [4.0, 2.0, 1.0]
    assert _oracle_list([3.0, 5.0], "float", "float8e8m0", 24, True, "down") == [2.0, 4.0]
    # float4 / float6 notes: saturation, NaN -> +max
    assert _oracle_list([math.nan, math.inf, -math.inf, 7.0, 6.9, -100.0], "float", "float4e2m1", 23) == \
        [6.0, 6.0, -6.0, 6.0, 6.0, -6.0]
    assert _oracle_list([25.0, math.nan, math.inf], "float", "float6e2m3", 28) == [7.5, 7.5, 7.5]
    assert _oracle_list([25.0, math.nan, math.inf], "float", "float6e3m2", 28) == [24.0, 28.0, 28.0]
    # strings
    assert _oracle_list(["+INF", "INF", "inf", "-INF", "1e-5", "1E8", "3.14", "1000"], "string", "double", 13) == \
        [math.inf, math.inf, math.inf, -math.inf, 1e-5, 1e8, 3.14, 1000.0]
    assert math.isnan(_oracle_list(["NaN"], "string", "float", 13)[0])
    assert _oracle_list(["100", "-7"], "string", "int32", 13) == [100, -7]
    assert not ref.defined(np.array(["100.5", "2.718", "Hello World!", "1e3"], dtype=object), "string", "int32",
                           version=13).any()


def test_undefined_elements_are_the_texts():
    def d(vals, src, dst, **kw):
        return list(ref.defined(C._as_source_array(vals, src), src, dst, version=kw.pop("version", 25), **kw))

    assert d([math.nan, math.inf, -math.inf, 127.9, 128.0, -128.9, -129.0], "float", "int8") == \
        [False, False, False, True, False, True, False]
    assert d([-0.99, -1.0, 255.5, 256.0], "double", "uint8") == [True, False, True, False]
    assert d([float(2**63), float(2**63 - 1024), -float(2**63)], "double", "int64") == [False, True, True]
    assert d([-1.0, -0.0, 0.0, 1e-40, math.inf, 1e39], "float", "float8e8m0", saturate=True) == \
        [False, False, True, True, True, True]
    assert d([1e-40, 0.0, 1.2 * 2.0**127, 1.6 * 2.0**127], "double", "float8e8m0", saturate=False,
             round_mode="nearest") == [False, True, False, True]
    assert d([0.0, 1.2 * 2.0**127], "double", "float8e8m0", saturate=False, round_mode="up") == [False, True]
    assert d([1.2 * 2.0**127], "double", "float8e8m0", saturate=False, round_mode="down") == [False]
    assert d(["1", "0", "-3", "a"], "string", "bool") == [True, False, False, False]


def test_numbers_as_strings_are_judged_set_valued():
    """Any formatting that parses back to the source value passes (onnxruntime's %.9g, Python's
    repr, %g for the suite's values); too few digits, words, or another value fail."""
    x = np.array([314.15926, 0.1, 1e-4, 65504.0, -0.0, np.nan, np.inf, -np.inf], dtype=np.float32)
    ok_forms = [[f"{v:.9g}" for v in x.tolist()], [repr(float(v)) for v in x.tolist()],
                ["314.15927", "0.1", "0.0001", "65504", "-0", "NaN", "INF", "-INF"],
                ["314.159271240234375", "0.100000001", "9.99999975e-05", "6.5504e4", "0", "nan", "+inf", "-inf"]]
    for ys in ok_forms:
        ok, msg = ref.check_number_strings({"input": x}, {"output": np.array(ys, dtype=object)}, {})
        assert ok, (ys, msg)
    bad_forms = [[f"{v:.3g}" for v in x.tolist()], ["314.15927", "0.1", "0.0001", "65504", "-0", "NaN", "Infinity",
                                                     "-INF"], ["314.15927", "0.2", "1e-4", "65504", "0", "NaN", "INF",
                                                              "-INF"]]
    for ys in bad_forms:
        ok, _ = ref.check_number_strings({"input": x}, {"output": np.array(ys, dtype=object)}, {})
        assert not ok, ys
    i = np.array([2**63 - 1, -5, 0], dtype=np.int64)
    assert ref.check_number_strings({"input": i}, {"output": np.array(["9223372036854775807", "-5", "0"], dtype=object)}, {})[0]
    assert not ref.check_number_strings({"input": i}, {"output": np.array(["9.22337e+18", "-5", "0"], dtype=object)}, {})[0]
    b = np.array([True, False])
    assert ref.check_number_strings({"input": b}, {"output": np.array(["1", "0"], dtype=object)}, {})[0]
    assert not ref.check_number_strings({"input": b}, {"output": np.array(["True", "False"], dtype=object)}, {})[0]


def _node_tests():
    """onnx's own node tests for Cast (the spec's examples), built in memory by importing their
    module (its Base class records the exported cases)."""
    import warnings

    from conformance.onnx_node import as_tensor

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        tests = single_node_tests(("Cast",), ("cast",))
    out = []
    for t in tests:
        node = t.model.graph.node[0]
        attrs = {a.name: onnx.helper.get_attribute_value(a) for a in node.attribute}
        src = V.name_of(t.model.graph.input[0].type.tensor_type.elem_type)
        dst = V.name_of(attrs["to"])
        for ins, outs in t.data_sets:
            out.append((t.name, src, dst, attrs, as_tensor(ins[0]), as_tensor(outs[0])))
    return out


def test_agrees_with_onnx_node_test_data_where_the_text_defines_the_elements():
    """onnx's node-test expectations (numpy / ml_dtypes casts) equal the oracle on every element
    the text defines, except the listed ones, each explained."""
    tests = _node_tests()
    assert len(tests) >= 40
    disagreements = Counter()
    compared = 0
    for name, src, dst, attrs, x, y in tests:
        sat, mode = bool(attrs.get("saturate", 1)), attrs.get("round_mode", "up")
        if isinstance(mode, bytes):
            mode = mode.decode()
        exact = V.to_exact(x, src) if V.kind(src) != V.BOOL else x
        ok = ref.defined(exact, src, dst, version=25, saturate=sat, round_mode=mode).ravel()
        got = _oracle_list(list(np.asarray(exact).ravel()[ok]), src, dst, 25, sat, mode) if ok.any() else []
        want = _as_py(np.asarray(y).ravel()[ok], dst)
        compared += len(got)
        for xi, g, w in zip(np.asarray(exact).ravel()[ok], got, want):
            if not _same([g], [w]):
                disagreements[(name, _why_node(src, dst, float(xi), g, w))] += 1
    assert compared > 500
    whys = {w for _, w in disagreements}
    assert whys <= {"NaN -> float4 (note: +max; ml_dtypes: -0)", "float8e8m0 0 -> 2**-127 (ml_dtypes/onnx: 2**-126)",
                    "float8e8m0 below 2**-127 (onnx's to_float8e8m0 rounds float32 subnormals to 2**-126)"}, disagreements
    assert any("float4" in w for w in whys)


def _why_node(src, dst, x, got, want) -> str:
    if dst == "float4e2m1" and math.isnan(x):
        return "NaN -> float4 (note: +max; ml_dtypes: -0)"
    if dst == "float8e8m0" and x == 0:
        return "float8e8m0 0 -> 2**-127 (ml_dtypes/onnx: 2**-126)"
    if dst == "float8e8m0" and 0 < x < 2.0**-126:
        return "float8e8m0 below 2**-127 (onnx's to_float8e8m0 rounds float32 subnormals to 2**-126)"
    return f"UNEXPLAINED {src}->{dst} {x!r}: oracle {got!r}, onnx {want!r}"


# ============================================================================ the suite's structure
def _pair(c):
    t = c.tags.get("types")
    if t:
        a, b = t.split(",")
        return a.split("=")[1], b.split("=")[1]
    return c.tags["dtype"], c.tags["dtype"]


def test_every_combination_of_every_version_has_value_cases(suite):
    cov = compute_coverage(suite)
    for op in OPS:
        versions = cov["ops"][op]["versions"]
        assert set(map(int, versions)) == set(onnx_versions(op))
        for v, e in versions.items():
            assert e["gaps"] == 0 and not e["missing"], (op, v, e["missing"][:3])
            assert e["total_combinations"] == len(e["covered"])


def onnx_versions(op):
    from conformance.opspec import op_spec

    return op_spec(op).since_versions


def test_case_counts_stay_near_one_per_pair(value_cases):
    n = Counter(c.op for c in value_cases)
    assert 3554 <= n["Cast"] <= 4300, n
    assert 2421 <= n["CastLike"] <= 2600, n


def test_float8_pairs_get_both_saturate_values_and_e8m0_pairs_the_rounding_modes(value_cases):
    states = defaultdict(set)
    for c in value_cases:
        if c.op == "Cast" and c.since_version >= 19:
            src, dst = _pair(c)
            states[(c.since_version, src, dst)].add((c.attributes.get("saturate", 1), c.attributes.get("round_mode", "up")))
    f8 = [(k, s) for k, s in states.items() if k[2] in F8 and C.saturate_matters(k[1], k[2])]
    assert len(f8) > 300
    for k, s in f8:
        assert {sat for sat, _ in s} == {0, 1}, k
        assert all(mode == "up" for _, mode in s), k  # round_mode is never written to a float8 target
    e8 = [(k, s) for k, s in states.items() if k[2] == "float8e8m0"]
    assert len(e8) > 60
    for k, s in e8:
        assert {sat for sat, _ in s} == {0, 1} and len({m for _, m in s}) >= 2, (k, s)
    # the other targets carry saturate / round_mode only from the witness source
    others = [c for c in value_cases if c.since_version >= 19 and _pair(c)[1] not in F8 + ("float8e8m0",)
              and ("saturate" in c.attributes or "round_mode" in c.attributes)]
    assert others and {_pair(c)[0] for c in others} <= {C.WITNESS, "float"}


def test_value_cases_hold_only_defined_elements(value_cases):
    """Independently of ``defined``: no NaN/inf/out-of-range float for an integer target, no
    negative or -0 for float8e8m0, only integer literals for string -> int, positive ones for
    string -> bool."""
    checked = Counter()
    for c in value_cases:
        src, dst = _pair(c)
        x = np.asarray(c.datasets[0].inputs.get("input", next((i.value for i in c.inputs if i.name == "input"), None)))
        vals = _as_py(x, src)
        if V.kind(src) == V.FLOAT and V.kind(dst) == V.INT:
            info = V.iinfo(dst)
            assert all(math.isfinite(v) and int(info.min) <= math.trunc(v) <= int(info.max) for v in vals), c.id
            checked["float->int"] += len(vals)
        if dst == "float8e8m0" and V.kind(src) in (V.FLOAT, V.INT):
            assert all(math.isnan(float(v)) or (float(v) >= 0 and math.copysign(1, float(v)) > 0) for v in vals), c.id
            checked["e8m0"] += len(vals)
        if src == "string" and V.kind(dst) == V.INT:
            assert all(s.lstrip("-").isdigit() for s in vals), c.id
            checked["string->int"] += len(vals)
        if src == "string" and dst == "bool":
            assert all(s.isdigit() and int(s) > 0 for s in vals), c.id
    assert checked["float->int"] > 10000 and checked["e8m0"] > 1000 and checked["string->int"] > 100


def test_value_tables_hold_the_traps(value_cases):
    by = defaultdict(list)
    for c in value_cases:
        if c.op == "Cast":
            by[(c.since_version,) + _pair(c)].append(c)

    def inputs(v, src, dst):
        out = []
        for c in by[(v, src, dst)]:
            out += _as_py(c.datasets[0].inputs["input"], src)
        return out

    xs = inputs(24, "float", "float8e4m3fn")
    assert 464.0 in xs and any(464 < x < 480 for x in xs) and any(math.isnan(x) for x in xs) and math.inf in xs
    xs = inputs(25, "double", "float16")
    near = [x for x in xs if math.isfinite(x) and float(np.float32(x)) != x and
            float(np.float16(np.float32(x))) != float(np.float16(x))]
    assert near, "no value of double -> float16 tells a conversion through float32 apart"
    xs = inputs(25, "int64", "float")
    assert 2**60 + 2**36 + 1 in xs
    xs = inputs(25, "string", "float")
    assert {"+INF", "NaN", "1E8"} <= set(xs)
    xs = inputs(25, "int16", "int8")
    assert {128, -129, 255} <= set(xs)
    xs = inputs(25, "float", "int4")
    assert any(x != math.trunc(x) and abs(x - math.trunc(x)) == 0.5 for x in xs)
    xs = inputs(24, "float", "float8e8m0")
    assert any(x > 0 and math.frexp(x)[0] == 0.75 for x in xs)  # 1.5 * 2**k: a nearest tie
    for c in value_cases:
        assert c.outputs[0].tolerance.exact


def test_castlike_round_mode_cases_are_contested_and_the_rest_not(value_cases):
    contested = [c for c in value_cases if c.contested]
    assert contested and all(c.op == "CastLike" and _pair(c)[1] == "float8e8m0" and
                             c.attributes.get("round_mode") in ("down", "nearest") for c in contested)
    assert all(not c.contested for c in value_cases if c.op == "Cast")


def test_oracle_entry_convention():
    ctx = Ctx("Cast", 19, 19, {"input": "float"}, {"output": "float8e4m3fn"}, {"saturate": 0, "to": 17})
    y = C.CAST.oracle(ctx, np.array([1e6, 3.0]), saturate=0, to=17)
    assert math.isnan(y[0]) and y[1] == 3.0


# ============================================================================ onnx.reference
def _classify_reference(c, x, exp, got) -> set[str]:
    """Why onnx.reference's output of a case differs from the expected one (each reason a
    known defect or an interpretation that the text does not share)."""
    src, dst = _pair(c)
    if src == dst == "string":
        same = [str(v) for v in np.asarray(got).ravel()] == [str(v) for v in np.asarray(exp).ravel()]
        return {"string -> string returns a numpy str_ array (dtype <U), not onnx's object array; values equal"} \
            if same else {"UNEXPLAINED str->str"}
    if V.kind(dst) == V.STRING:
        ok, _ = ref.check_number_strings({"input": x}, {"output": np.asarray(got, dtype=object)}, {})
        if ok:
            return set()
        if src == "bool":
            return {"bool -> string gives 'True'/'False' (Python str), not a numeric representation"}
        return {"UNEXPLAINED string"}
    xs, es, gs = _as_py(x, src), _as_py(exp, dst), _as_py(got, dst)
    out = set()
    sat = bool(c.attributes.get("saturate", 1))
    for xi, e, g in zip(xs, es, gs):
        if _same([e], [g]):
            continue
        xf = float(exact_of(xi)) if not isinstance(exact_of(xi), float) else exact_of(xi)
        if dst in ("float4e2m1", "float6e2m3", "float6e3m2") and math.isnan(xf):
            out.add("NaN -> float4/float6 gives -0 (ml_dtypes), the notes say +max")
        elif dst in F8 and dst.endswith("fnuz") and sat and c.since_version < 24 and math.isinf(xf):
            out.add("fnuz +-inf with saturate=1 gives +-max at 19-23 (the 24 table), the 19-23 text says NaN")
        elif dst == "float8e8m0":
            out.add("float8e8m0: to_float8e8m0's infinities (NaN with saturate), zeros and subnormals (2**-126), "
                    "and rounding through float32")
        elif c.op == "CastLike" and src == dst == "float8e5m2":
            out.add("same type")
        elif src in ("double", "int64", "uint64", "string") and V.kind(dst) == V.FLOAT:
            out.add("rounds through float32 (double rounding: ml_dtypes / saturate_cast convert from float32)")
        else:
            out.add(f"UNEXPLAINED {src}->{dst} x={xi!r} expected={e!r} got={g!r}")
    return out


def test_onnx_reference_disagreements_are_explained(value_cases):
    """onnx.reference on the cases of Cast-24/25 and CastLike-25: every failing case is
    explained; the reasons found are the known ones (each is onnx.reference's defect or its
    numpy-based reading, the oracle follows the text)."""
    cases = [c for c in value_cases if (c.op == "Cast" and c.since_version in (24, 25)) or
             (c.op == "CastLike" and c.since_version == 25)]
    assert len(cases) > 1500
    backend = resolve_backend("onnx-reference")
    results = run_cases(cases, backend)
    outcomes = Counter(r.outcome for r in results)
    assert outcomes["pass"] > 0.8 * len(cases), outcomes
    reasons = Counter()
    for c, r in zip(cases, results):
        if r.outcome == "pass":
            continue
        if r.outcome in ("error", "unsupported"):  # unsupported: a contested model rejected
            assert "TypeError" in r.message and (r.outcome == "error" or c.contested), (c.id, r.message[:300])
            if c.op == "CastLike" and "round_mode" in c.attributes:
                reasons["CastLike-24/25 with round_mode: no such implementation (CastLike_19 takes no round_mode)"] += 1
            else:  # x.astype: ml_dtypes registers casts to and from numpy's own types only (some pairs)
                src, dst = _pair(c)
                ml = {"bfloat16", "int4", "uint4", "int2", "uint2"} | set(NARROW)
                assert {src, dst} <= ml | {"string"} and src != dst, (c.id, r.message[:300])
                reasons["x.astype between two ml_dtypes types, or between one and str, raises TypeError "
                        "(ml_dtypes registers no such cast)"] += 1
            continue
        assert r.outcome == "fail", (c.id, r.outcome, r.message[:300])
        prep = backend.prepare(c.model, c.model_bytes)
        ds = c.datasets[0]
        name = c.present_outputs[0].name
        got = np.asarray(backend.run(prep, ds.inputs, [name])[0])
        x = ds.inputs["input"] if "input" in ds.inputs else next(i.value for i in c.inputs if i.name == "input")
        why = _classify_reference(c, x, ds.outputs[name], got)
        assert why and not any(w.startswith("UNEXPLAINED") for w in why), (c.id, why)
        for w in why:
            reasons[w] += 1
    assert set(reasons) <= {
        "NaN -> float4/float6 gives -0 (ml_dtypes), the notes say +max",
        "float8e8m0: to_float8e8m0's infinities (NaN with saturate), zeros and subnormals (2**-126), and rounding "
        "through float32",
        "rounds through float32 (double rounding: ml_dtypes / saturate_cast convert from float32)",
        "bool -> string gives 'True'/'False' (Python str), not a numeric representation",
        "string -> string returns a numpy str_ array (dtype <U), not onnx's object array; values equal",
        "CastLike-24/25 with round_mode: no such implementation (CastLike_19 takes no round_mode)",
        "x.astype between two ml_dtypes types, or between one and str, raises TypeError (ml_dtypes registers no "
        "such cast)",
    }, reasons
    assert reasons["NaN -> float4/float6 gives -0 (ml_dtypes), the notes say +max"] > 0


# ============================================================================ kernels
def _version(op: str, opset: int) -> int:
    return onnx.defs.get_schema(op, opset).since_version


def _target_of(inputs, attrs, op) -> str:
    if op == "CastLike" or "target_type" in inputs:
        return dtypes.type_name(dtypes.elem_type(inputs["target_type"].dtype))
    to = attrs["to"]
    return V.name_of(onnx.TensorProto.DataType.Value(to) if isinstance(to, str) else int(to))


def make_kernel(op: str, convert):
    """A Cast/CastLike kernel from ``convert(values, src, dst, version, sat, mode) -> list``."""

    def kernel(inputs, attrs, outputs, opset):
        x = inputs["input"]
        src = dtypes.type_name(dtypes.elem_type(x.dtype))
        dst = _target_of(inputs, attrs, op)
        mode = attrs.get("round_mode", "up")
        vals = convert(_as_py(x, src), src, dst, _version(op, opset), bool(attrs.get("saturate", 1)), mode)
        k = V.kind(dst)
        if k == V.STRING:
            y = np.array(vals, dtype=object)
        elif k == V.INT:
            y = V.to_type(np.array(vals, dtype=object), dst)
        else:
            y = np.array(vals, dtype=np.float64 if k == V.FLOAT else bool).astype(V.np_dtype(dst))
        return {outputs[0]: y.reshape(x.shape)}

    return kernel


def run_kernel(cases, convert, name):
    kernels = {op: make_kernel(op, convert) for op in OPS}
    return Counter(r.outcome for r in run_cases(cases, KernelBackend(kernels, name=name)))


@pytest.fixture(scope="module")
def sample(value_cases):
    """A deterministic subset that spans every target type, version and attribute state: every
    case of Cast-13/21/24 and CastLike-19, and every case of the other versions whose target is
    a float8 or float8e8m0 type."""
    out = [c for c in value_cases if (c.op == "Cast" and c.since_version in (13, 21, 24)) or
           (c.op == "CastLike" and c.since_version == 19) or
           (c.since_version >= 19 and _pair(c)[1] in F8 + ("float8e8m0",))]
    assert {_pair(c)[1] for c in out} >= set(F8) | {"float8e8m0", "float4e2m1", "int4", "string", "bool", "bfloat16"}
    return out


def _pct_g(v, k):
    return fmt_plain(v, k) if k != "float" else (f"{float(v):g}" if math.isfinite(float(v)) else fmt_plain(v, k))


def _ort_style(v, k):
    return fmt_plain(v, k) if k != "float" else (f"{float(v):.9g}" if math.isfinite(float(v)) else
                                                   ("NaN" if math.isnan(float(v)) else ("INF" if v > 0 else "-INF")))


LEGIT = {
    "independent": lambda vals, s, d, v, sat, m: independent(vals, s, d, v, sat, m),
    "strings %g, undefined -> INT_MIN": lambda vals, s, d, v, sat, m: independent(
        vals, s, d, v, sat, m, fmt=_pct_g, garbage=int(V.iinfo(d).min) if V.kind(d) == V.INT else 0),
    "strings %.9g (onnxruntime's)": lambda vals, s, d, v, sat, m: independent(vals, s, d, v, sat, m, fmt=_ort_style),
}


@pytest.mark.parametrize("name", list(LEGIT))
def test_legitimate_kernels_pass_every_case(sample, name):
    cases = sample if name == "independent" else [c for c in sample if _pair(c)[1] in ("string", "int8", "uint4")]
    assert len(cases) > 50
    outcomes = run_kernel(cases, LEGIT[name], name)
    assert outcomes == Counter({"pass": len(cases)}), outcomes


def _wrong(base_change):
    """A kernel that is the independent one except where ``base_change`` returns a value."""

    def convert(vals, s, d, v, sat, m):
        good = independent(vals, s, d, v, sat, m)
        out = []
        for x, g in zip(vals, good):
            w = base_change(x, g, s, d, v, sat, m)
            out.append(g if w is None else w)
        return out

    return convert


def _rz(x, g, s, d, v, sat, m):
    """Round toward zero to the floating target (truncate the exact value's extra bits)."""
    if V.kind(d) != V.FLOAT or d == "float8e8m0" or V.kind(s) == V.STRING:
        return None
    q = exact_of(x)
    if isinstance(q, float) or q == 0 or not math.isfinite(g):
        return None
    e = q.numerator.bit_length() - q.denominator.bit_length()
    if Fraction(2) ** e > abs(q):
        e -= 1
    ulp = Fraction(2) ** (max(e, fmt_emin(d)) - FORMATS[d][1])
    t = math.trunc(q / ulp) * ulp
    return float(t) if abs(t) <= fmt_max(d) else None


def _via_float32(x, g, s, d, v, sat, m):
    if V.kind(d) != V.FLOAT or s not in ("double", "int64", "uint64", "int32", "uint32"):
        return None
    return independent([float(np.float32(float(exact_of(x))))], "float", d, v, sat, m)[0]


WRONG = {
    # (kernel change, which cases it runs on)
    "float8 saturating when saturate=0": (
        lambda x, g, s, d, v, sat, m: independent([x], s, d, v, True, m)[0] if d in F8 and not sat else None,
        lambda c: _pair(c)[1] in F8 and c.attributes.get("saturate") == 0),
    "round toward zero": (_rz, lambda c: _pair(c)[1] in ("float16", "bfloat16") + F8 and V.kind(_pair(c)[0]) != V.STRING),
    "float -> int rounds to nearest": (
        lambda x, g, s, d, v, sat, m: (lambda r: r if int(V.iinfo(d).min) <= r <= int(V.iinfo(d).max) else g)(
            round(float(x))) if V.kind(s) == V.FLOAT and V.kind(d) == V.INT else None,
        lambda c: V.kind(_pair(c)[0]) == V.FLOAT and V.kind(_pair(c)[1]) == V.INT),
    "bfloat16 by truncation": (
        lambda x, g, s, d, v, sat, m: float((np.array([float(x)], np.float32).view(np.uint32) & 0xFFFF0000)
                                            .view(np.float32)[0]) if d == "bfloat16" and s in ("float", "double")
        and math.isfinite(float(x)) else None,
        lambda c: _pair(c)[1] == "bfloat16"),
    "NaN -> float4/float6 as -0 (ml_dtypes)": (
        lambda x, g, s, d, v, sat, m: -0.0 if d in ("float4e2m1", "float6e2m3", "float6e3m2") and isinstance(
            exact_of(x), float) and math.isnan(exact_of(x)) else None,
        lambda c: _pair(c)[1] in ("float4e2m1", "float6e2m3", "float6e3m2")),
    "fixed -> fixed saturates instead of wrapping": (
        lambda x, g, s, d, v, sat, m: max(int(V.iinfo(d).min), min(int(V.iinfo(d).max), int(x)))
        if V.kind(s) == V.INT and V.kind(d) == V.INT else None,
        lambda c: V.kind(_pair(c)[0]) == V.INT and V.kind(_pair(c)[1]) == V.INT),
    "conversion through float32 (double rounding)": (
        _via_float32, lambda c: _pair(c)[0] in ("double", "int64", "uint64") and V.kind(_pair(c)[1]) == V.FLOAT),
    "-0 -> True": (
        lambda x, g, s, d, v, sat, m: True if d == "bool" and isinstance(x, float) and x == 0 and
        math.copysign(1, x) < 0 else None,
        lambda c: _pair(c)[1] == "bool" and V.kind(_pair(c)[0]) == V.FLOAT),
    "fnuz +-inf -> +-max at 19-23 (the 24 table)": (
        lambda x, g, s, d, v, sat, m: math.copysign(float(fmt_max(d)), float(x)) if d.endswith("fnuz") and sat
        and isinstance(x, float) and math.isinf(x) else None,
        lambda c: _pair(c)[1].endswith("fnuz") and c.since_version < 24),
    "e5m2 overflow -> NaN without saturation": (
        lambda x, g, s, d, v, sat, m: math.nan if d == "float8e5m2" and not sat and math.isinf(g) else None,
        lambda c: _pair(c)[1] == "float8e5m2"),
    "round_mode ignored (always up)": (
        lambda x, g, s, d, v, sat, m: independent([x], s, d, v, sat, "up")[0] if d == "float8e8m0" else None,
        lambda c: _pair(c)[1] == "float8e8m0" and c.attributes.get("round_mode") in ("down", "nearest")),
    "numbers as 3-digit strings": (
        lambda x, g, s, d, v, sat, m: f"{float(x):.3g}" if d == "string" and V.kind(s) == V.FLOAT else None,
        lambda c: _pair(c)[1] == "string" and V.kind(_pair(c)[0]) == V.FLOAT),
    "INF literals case-sensitive": (
        lambda x, g, s, d, v, sat, m: math.nan if s == "string" and V.kind(d) == V.FLOAT and
        x.upper() in ("INF", "+INF", "-INF") and x not in ("INF", "+INF", "-INF") else None,
        lambda c: _pair(c)[0] == "string" and V.kind(_pair(c)[1]) == V.FLOAT),
}


@pytest.mark.parametrize("name", list(WRONG))
def test_wrong_kernels_are_caught(value_cases, name):
    change, which = WRONG[name]
    cases = [c for c in value_cases if which(c)][:400]
    assert cases, f"no case for {name}"
    outcomes = run_kernel(cases, _wrong(change), name)
    assert outcomes["fail"] >= 1, outcomes
    assert outcomes["error"] == 0, outcomes


def test_onnx_reference_cannot_run_cast_1(value_cases):
    """onnx.reference's Cast_1 hands version 1's string ``to`` ("FLOAT") to
    ``tensor_dtype_to_np_dtype``, which takes the enum value: KeyError on every Cast-1 case (the
    model is valid: onnx's checker accepts it)."""
    cases = [c for c in value_cases if c.op == "Cast" and c.since_version == 1][:20]
    assert len(cases) == 20 and all(isinstance(c.attributes["to"], str) for c in cases)
    onnx.checker.check_model(cases[0].model, full_check=True)
    results = run_cases(cases, resolve_backend("onnx-reference"))
    assert all(r.outcome == "error" and "KeyError" in r.message for r in results), Counter(r.outcome for r in results)


def test_error_cases_are_invalid_for_onnx(suite):
    """Every error case is rejected by onnx's own checker (full check: strict type inference)."""
    errors = [c for c in suite if c.expect_error is not None]
    assert len(errors) >= 70 and {c.op for c in errors} == set(OPS)
    for c in errors:
        with pytest.raises(Exception):
            onnx.checker.check_model(c.model, full_check=True)
    tags = Counter(c.tags["error"] for c in errors)
    assert tags["to-missing"] == 10 and tags["output-type"] == 9 + 6
