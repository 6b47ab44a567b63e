"""Every ONNX element type in :mod:`conformance.dtypes`, checked against independent facts.

* the 28 types are exactly the ones the schemas' type constraints name (a scan of
  ``onnx.defs``), with the schemas' spellings;
* kinds and widths agree with ONNX ``docs/IR.md``'s groups (written out here by name) and with
  how ``onnx.numpy_helper.from_array`` packs each type;
* ``iinfo`` ranges are the two's complement ranges of the width;
* float4e2m1 / float6e2m3 / float6e3m2: the value encodings match the formulas of the ONNX
  notes (``float4.md``, ``float6.md``); :func:`dtypes.round_to` is correctly rounded
  (brute-force nearest-even over every bit pattern), saturates, and maps NaN to +max as the
  notes' tables say; on float32 inputs it agrees with ``ml_dtypes`` except for NaN;
* float8e8m0: ``2**(bits-127)``; the three ``round_mode`` s against a brute-force search over
  every power of two, against ``ml_dtypes`` (mode "nearest") and onnx's reference
  ``numpy_helper.to_float8e8m0`` (all modes, normal float32); saturation by clipping gives
  the ``Cast`` table's "saturate + up" column;
* integers wrap as ``Cast`` specifies for fixed -> fixed; bool, complex, string.
"""

from __future__ import annotations

import re

import ml_dtypes
import numpy as np
import pytest
from onnx import TensorProto, defs, numpy_helper

from conformance import dtypes

pytestmark = pytest.mark.filterwarnings("ignore::RuntimeWarning")
T = TensorProto

# ONNX docs/IR.md, "Tensor Element Types", by group.
SPEC_FLOATS = {"float16", "bfloat16", "float", "double", "float8e4m3fn", "float8e4m3fnuz", "float8e5m2",
               "float8e5m2fnuz", "float8e8m0", "float4e2m1", "float6e2m3", "float6e3m2"}
SPEC_SIGNED = {"int2", "int4", "int8", "int16", "int32", "int64"}
SPEC_UNSIGNED = {"uint2", "uint4", "uint8", "uint16", "uint32", "uint64"}
SPEC_COMPLEX = {"complex64", "complex128"}


def _schema_type_names() -> set[str]:
    names = set()
    for s in defs.get_all_schemas_with_history():
        for tc in s.type_constraints:
            for ts in tc.allowed_type_strs:
                names.update(re.findall(r"tensor\((\w+)\)", ts))
    return names


# ============================================================================ names and tables
def test_all_types_are_the_schemas_types():
    names = [dtypes.type_name(t) for t in dtypes.ALL_TYPES]
    assert len(names) == len(set(names)) == 28
    assert set(names) == _schema_type_names()
    assert set(names) == SPEC_FLOATS | SPEC_SIGNED | SPEC_UNSIGNED | SPEC_COMPLEX | {"bool", "string"}
    assert T.UNDEFINED not in dtypes.ALL_TYPES
    assert list(dtypes.ALL_TYPES) == sorted(dtypes.ALL_TYPES)


@pytest.mark.parametrize("t", dtypes.ALL_TYPES, ids=dtypes.type_name)
def test_names_dtypes_round_trip(t):
    name = dtypes.type_name(t)
    assert name == T.DataType.Name(t).lower()
    assert dtypes.elem_type(name) == t == dtypes.elem_type(f"tensor({name})")
    dt = dtypes.np_dtype(t)
    assert dt == numpy_helper.to_array(numpy_helper.from_array(np.zeros(0, dt) if t != T.STRING
                                                               else np.array([], dtype=object))).dtype
    assert dtypes.elem_type(dt) == t and dtypes.elem_type(str(dt)) == t


def test_spellings():
    assert dtypes.type_name(T.FLOAT) == "float" and dtypes.type_name(T.DOUBLE) == "double"
    assert dtypes.type_name(T.FLOAT8E8M0) == "float8e8m0" and dtypes.type_name(T.FLOAT4E2M1) == "float4e2m1"
    assert dtypes.type_name(T.INT4) == "int4" and dtypes.type_name(T.STRING) == "string"
    assert dtypes.type_name(T.COMPLEX64) == "complex64"
    assert dtypes.np_dtype(T.STRING) == np.dtype(object)
    assert dtypes.np_dtype(T.INT4) == np.dtype(ml_dtypes.int4)
    assert dtypes.np_dtype(T.FLOAT8E8M0) == np.dtype(ml_dtypes.float8_e8m0fnu)
    assert dtypes.np_dtype(T.FLOAT6E3M2) == np.dtype(ml_dtypes.float6_e3m2fn)
    assert dtypes.np_dtype(T.COMPLEX128) == np.dtype(np.complex128)
    assert dtypes.elem_type(np.dtype("<U5")) == T.STRING == dtypes.elem_type(object)
    assert dtypes.elem_type("float32") == T.FLOAT and dtypes.elem_type("float8_e8m0fnu") == T.FLOAT8E8M0
    assert dtypes.elem_type("float4_e2m1fn") == T.FLOAT4E2M1 and dtypes.elem_type(ml_dtypes.uint2) == T.UINT2
    for bad in ("tensor(float128)", "floaty", "UNDEFINED"):
        with pytest.raises(KeyError):
            dtypes.elem_type(bad)
    with pytest.raises(KeyError):
        dtypes.elem_type(np.dtype("V3"))
    for bad in (T.UNDEFINED, 29, 12345):
        with pytest.raises(KeyError):
            dtypes.type_name(bad)
        with pytest.raises(KeyError):
            dtypes.np_dtype(bad)


@pytest.mark.parametrize("t", dtypes.ALL_TYPES, ids=dtypes.type_name)
def test_kind_predicates(t):
    name = dtypes.type_name(t)
    dt = dtypes.np_dtype(t)
    for arg in (t, dt, name):
        assert dtypes.is_float(arg) == (name in SPEC_FLOATS)
        assert dtypes.is_int(arg) == (name in SPEC_SIGNED | SPEC_UNSIGNED)
        assert dtypes.is_unsigned(arg) == (name in SPEC_UNSIGNED)
        assert dtypes.is_complex(arg) == (name in SPEC_COMPLEX)
        assert dtypes.is_bool(arg) == (name == "bool")
        assert dtypes.is_string(arg) == (name == "string")
    # float8e8m0 is a float but not one of the four float8 types of FLOAT8_TYPES
    for arg in (t, dt, name):
        assert dtypes.is_float8(arg) == (name in {"float8e4m3fn", "float8e4m3fnuz", "float8e5m2", "float8e5m2fnuz"})


def test_groups():
    names = lambda ts: {dtypes.type_name(t) for t in ts}  # noqa: E731
    assert names(dtypes.ALL_FLOAT_TYPES) == SPEC_FLOATS
    assert names(dtypes.INT_TYPES) == SPEC_SIGNED | SPEC_UNSIGNED
    assert names(dtypes.UNSIGNED_TYPES) == SPEC_UNSIGNED
    assert names(dtypes.COMPLEX_TYPES) == SPEC_COMPLEX
    assert names(dtypes.SUBBYTE_TYPES) == {"int2", "uint2", "int4", "uint4", "float4e2m1", "float6e2m3", "float6e3m2"}
    for x in (12345, "nope", np.dtype("V3")):
        assert not any(f(x) for f in (dtypes.is_float, dtypes.is_int, dtypes.is_unsigned, dtypes.is_bool,
                                      dtypes.is_string, dtypes.is_complex, dtypes.is_subbyte, dtypes.is_float8))


@pytest.mark.parametrize("t", [t for t in dtypes.ALL_TYPES if t != T.STRING], ids=dtypes.type_name)
def test_bit_width_is_how_onnx_packs(t):
    # 24 elements written by onnx's own from_array: bytes * 8 / 24 is the stored width
    raw = numpy_helper.from_array(np.zeros(24, dtypes.np_dtype(t))).raw_data
    assert dtypes.bit_width(t) == len(raw) * 8 // 24
    assert dtypes.is_subbyte(t) == (len(raw) < 24)


def test_bit_width_of_string_raises():
    with pytest.raises(KeyError):
        dtypes.bit_width(T.STRING)


@pytest.mark.parametrize("t", dtypes.INT_TYPES, ids=dtypes.type_name)
def test_iinfo_is_the_twos_complement_range(t):
    bits = dtypes.bit_width(t)
    info = dtypes.iinfo(t)
    if dtypes.is_unsigned(t):
        assert (int(info.min), int(info.max)) == (0, 2 ** bits - 1)
    else:
        assert (int(info.min), int(info.max)) == (-(2 ** (bits - 1)), 2 ** (bits - 1) - 1)
    assert dtypes.iinfo(dtypes.np_dtype(t)).max == info.max


@pytest.mark.parametrize("t", [T.BOOL, T.FLOAT, T.FLOAT4E2M1, T.COMPLEX64, T.STRING], ids=dtypes.type_name)
def test_iinfo_rejects_non_integers(t):
    with pytest.raises(ValueError):
        dtypes.iinfo(t)


def test_finfo_of_new_float_types():
    # ONNX float4.md / float6.md / Float8.md
    facts = {T.FLOAT4E2M1: (6.0, 1.0, 0.5, 0.5), T.FLOAT6E2M3: (7.5, 1.0, 0.125, 0.125),
             T.FLOAT6E3M2: (28.0, 0.25, 0.0625, 0.25), T.FLOAT8E8M0: (2.0 ** 127, 2.0 ** -127, 2.0 ** -127, 1.0)}
    for t, (fmax, normal, subnormal, eps) in facts.items():
        f = dtypes.finfo(t)
        assert (float(f.max), float(f.smallest_normal), float(f.smallest_subnormal)) == (fmax, normal, subnormal)
        assert dtypes.eps(t) == eps
    assert float(dtypes.finfo(T.FLOAT8E8M0).min) == 2.0 ** -127
    with pytest.raises(ValueError):
        dtypes.finfo(T.INT4)


# ============================================================================ float4 / float6
#: (elem type, exponent bits, mantissa bits, bias) from the ONNX notes float4.md / float6.md
NARROW = [(T.FLOAT4E2M1, 2, 1, 1), (T.FLOAT6E2M3, 2, 3, 1), (T.FLOAT6E3M2, 3, 2, 3)]


def _formula_values(e_bits: int, m_bits: int, bias: int) -> np.ndarray:
    """Every bit pattern's value by the notes' formula (no inf, no NaN)."""
    out = []
    for b in range(2 ** (1 + e_bits + m_bits)):
        s, e, m = b >> (e_bits + m_bits), (b >> m_bits) & (2 ** e_bits - 1), b & (2 ** m_bits - 1)
        v = 2.0 ** (e - bias) * (1 + m / 2 ** m_bits) if e else 2.0 ** (1 - bias) * m / 2 ** m_bits
        out.append(-v if s else v)
    return np.array(out)


def _nearest_even(x: float, vals: np.ndarray) -> float:
    """Brute-force round-to-nearest-even of finite ``x`` onto ``vals`` (indexed by bit pattern)."""
    d = np.abs(vals - x)
    best = np.flatnonzero(d == d.min())
    if len(set(vals[best])) == 1:
        return float(vals[best[0]])
    even = [b for b in best if b % 2 == 0]
    assert len({float(vals[b]) for b in even}) == 1, (x, vals[best])
    return float(vals[even[0]])


@pytest.mark.parametrize("t,e_bits,m_bits,bias", NARROW, ids=lambda v: dtypes.type_name(v) if v in dtypes.ALL_TYPES else "")
def test_narrow_float_encoding_matches_the_onnx_notes(t, e_bits, m_bits, bias):
    n = 2 ** (1 + e_bits + m_bits)
    vals = np.arange(n, dtype=np.uint8).view(dtypes.np_dtype(t)).astype(np.float64)
    want = _formula_values(e_bits, m_bits, bias)
    assert (vals == want).all() and (np.signbit(vals) == np.signbit(want)).all()
    if t == T.FLOAT4E2M1:  # float4.md's table of values
        assert vals[:8].tolist() == [0, 0.5, 1, 1.5, 2, 3, 4, 6]


@pytest.mark.parametrize("t,e_bits,m_bits,bias", NARROW, ids=lambda v: dtypes.type_name(v) if v in dtypes.ALL_TYPES else "")
def test_narrow_float_round_to_is_correctly_rounded(t, e_bits, m_bits, bias):
    vals = _formula_values(e_bits, m_bits, bias)
    fmax = float(vals.max())
    fin = np.unique(vals)
    mids = (fin[:-1] + fin[1:]) / 2
    tiny = np.abs(mids) * 2.0 ** -30 + 2.0 ** -60
    rng = np.random.default_rng(int(t))
    x = np.concatenate([vals, mids, mids + tiny, mids - tiny, rng.uniform(-1.2, 1.2, 3000) * fmax,
                        rng.normal(size=500) * float(fin[fin > 0].min())])
    got = dtypes.round_to(x, t)
    assert got.dtype == dtypes.np_dtype(t) and got.shape == x.shape
    want = np.array([_nearest_even(v, vals) if abs(v) <= fmax else np.copysign(fmax, v) for v in x])
    g = got.astype(np.float64)
    bad = np.flatnonzero(g != want)
    assert not bad.size, [(x[i], g[i], want[i]) for i in bad[:5]]
    # only the low bits are used
    assert (got.view(np.uint8) < 2 ** (1 + e_bits + m_bits)).all()
    # ml_dtypes' own float64 cast goes through float32 and double-rounds some near-ties
    naive = x.astype(dtypes.np_dtype(t)).astype(np.float64)
    assert (naive != want).any()


@pytest.mark.parametrize("t", [t for t, *_ in NARROW], ids=dtypes.type_name)
def test_narrow_float_special_values_follow_the_onnx_notes(t):
    fmax = float(dtypes.finfo(t).max)
    x = np.array([np.inf, -np.inf, 1e300, -1e300, np.nan, -np.nan, 0.0, -0.0, -1e-300])
    got = dtypes.round_to(x, t).astype(np.float64)
    # float4.md / float6.md: +-Inf and out of range saturate, NaN -> +max, zeros keep their sign
    assert got[:6].tolist() == [fmax, -fmax, fmax, -fmax, fmax, fmax]
    assert (got[6:] == 0).all() and np.signbit(got[6:]).tolist() == [False, True, True]
    # the float6.md example: 25.0 -> 7.5 (E2M3, saturated) and 24.0 (E3M2, rounded)
    assert float(dtypes.round_to(np.float64(25.0), T.FLOAT6E2M3).astype(np.float64)) == 7.5
    assert float(dtypes.round_to(np.float64(25.0), T.FLOAT6E3M2).astype(np.float64)) == 24.0


@pytest.mark.parametrize("t", [t for t, *_ in NARROW], ids=dtypes.type_name)
def test_narrow_float_agrees_with_ml_dtypes_on_float32_except_nan(t):
    rng = np.random.default_rng(7)
    x32 = rng.integers(0, 2 ** 32, 20000, dtype=np.uint64).astype(np.uint32).view(np.float32)
    x32 = np.concatenate([x32, rng.normal(size=5000).astype(np.float32) * 8])
    ours = dtypes.round_to(x32.astype(np.float64), t)
    theirs = x32.astype(dtypes.np_dtype(t))
    keep = ~np.isnan(x32)
    assert (ours.view(np.uint8)[keep] == theirs.view(np.uint8)[keep]).all()
    assert (theirs[~keep].astype(np.float64) == 0).all()  # ml_dtypes: NaN -> -0; the notes: +max


# ============================================================================ float8e8m0
E8 = T.FLOAT8E8M0
POW = 2.0 ** np.arange(-127, 128)  # every finite float8e8m0 value, bits 0..254


def test_e8m0_encoding():
    vals = np.arange(256, dtype=np.uint8).view(dtypes.np_dtype(E8)).astype(np.float64)
    assert (vals[:255] == POW).all() and np.isnan(vals[255])


def _e8m0_brute(x: float, mode: str) -> float:
    """Brute force over every power of two 2**-127 .. 2**128 (2**128 = overflow -> NaN)."""
    if not (np.isfinite(x) and x > 0):
        return np.nan
    cands = np.append(POW, 2.0 ** 128)
    if mode == "up":
        above = cands[cands >= x]
        if not above.size:
            return np.nan
        v = above.min()
    elif mode == "down":
        below = cands[cands <= x]
        if not below.size:
            return np.nan
        v = below.max()
    else:
        d = np.abs(cands - x)
        v = cands[d == d.min()].max()  # ties up
    return np.nan if v > 2.0 ** 127 else float(v)


@pytest.mark.parametrize("mode", ["nearest", "up", "down"])
def test_e8m0_round_to_against_brute_force(mode):
    rng = np.random.default_rng(3)
    k = np.arange(-130, 130, dtype=np.float64)
    ties = 1.5 * 2.0 ** k
    x = np.concatenate([
        POW, ties, ties * (1 + 2.0 ** -40), ties * (1 - 2.0 ** -40), POW * (1 + 2.0 ** -52), POW * (1 - 2.0 ** -53),
        2.0 ** rng.uniform(-140, 130, 3000), [5e-324, 1e-300, 1e300, 2.0 ** 128, 0.0, -0.0, -1.0, -2.0 ** -200,
                                              np.inf, -np.inf, np.nan]])
    got = dtypes.round_to(x, E8, round_mode=mode)
    assert got.dtype == dtypes.np_dtype(E8) and got.shape == x.shape
    g = got.astype(np.float64)
    want = np.array([_e8m0_brute(v, mode) for v in x])
    bad = np.flatnonzero(~((g == want) | (np.isnan(g) & np.isnan(want))))
    assert not bad.size, [(x[i], g[i], want[i]) for i in bad[:5]]
    assert (got.view(np.uint8)[np.isnan(g)] == 0xFF).all()


def test_e8m0_nearest_is_ml_dtypes_cast_on_float32():
    rng = np.random.default_rng(4)
    x32 = rng.integers(0, 2 ** 32, 50000, dtype=np.uint64).astype(np.uint32).view(np.float32)
    x32 = np.concatenate([x32, np.abs(x32), np.float32([0, -0.0, np.inf, 1.5 * 2.0 ** -127, 2.0 ** -149])])
    x32 = np.concatenate([x32, np.arange(0, 0x800000, 97, dtype=np.uint32).view(np.float32)])  # subnormals
    ours = dtypes.round_to(x32.astype(np.float64), E8)  # default mode: nearest
    theirs = x32.astype(dtypes.np_dtype(E8))
    differ = ours.view(np.uint8) != theirs.view(np.uint8)
    # ml_dtypes rounds the float32 subnormals in (2**-127, 1.5 * 2**-127) up to 2**-126, though
    # 2**-127 is nearer; everywhere else it agrees
    odd = (x32 > 2.0 ** -127) & (x32 < 1.5 * 2.0 ** -127)
    assert odd.sum() > 10 and (differ == odd).all()
    assert (ours.view(np.uint8)[odd] == 0).all() and (theirs.view(np.uint8)[odd] == 1).all()


@pytest.mark.parametrize("mode", ["nearest", "up", "down"])
def test_e8m0_agrees_with_onnx_reference_on_normal_float32(mode):
    rng = np.random.default_rng(5)
    bits = rng.integers(1, 255, 50000).astype(np.uint32) << 23 | rng.integers(0, 2 ** 23, 50000).astype(np.uint32)
    bits[:3] = [0x7F7FFFFF, 0x7F400000, 0x00800000]  # FLT_MAX, 1.5 * 2**127, FLT_MIN
    x32 = bits.view(np.float32)  # positive normal float32
    ref = numpy_helper.to_float8e8m0(x32, saturate=False, round_mode=mode)
    ours = dtypes.round_to(x32.astype(np.float64), E8, round_mode=mode)
    assert (ours.view(np.uint8) == ref.view(np.uint8)).all()
    sat = numpy_helper.to_float8e8m0(x32, saturate=True, round_mode=mode)
    f = dtypes.finfo(E8)
    clipped = dtypes.round_to(np.clip(x32.astype(np.float64), float(f.min), float(f.max)), E8, round_mode=mode)
    assert (clipped.view(np.uint8) == sat.view(np.uint8)).all()


def test_e8m0_saturate_by_clipping_gives_the_cast_table():
    # Cast-24+: "saturate + up": 0 -> 0 (bits; 2**-127), NaN -> NaN, Inf -> E8M0_MAX, x > max -> max, x < min -> min
    f = dtypes.finfo(E8)
    x = np.array([0.0, np.nan, np.inf, 1e39, 1e-45])
    got = dtypes.round_to(np.clip(x, float(f.min), float(f.max)), E8, round_mode="up").view(np.uint8)
    assert got.tolist() == [0, 255, 254, 254, 0]
    # "non-saturate + nearest": 0 -> NaN, Inf -> NaN, x > max -> NaN
    assert dtypes.round_to(np.array([0.0, np.inf, 1e39]), E8).view(np.uint8).tolist() == [255, 255, 255]


def test_round_mode_is_only_for_e8m0():
    with pytest.raises(ValueError):
        dtypes.round_to(np.ones(2), T.FLOAT, round_mode="up")
    with pytest.raises(ValueError):
        dtypes.round_to(np.ones(2), E8, round_mode="sideways")
    assert dtypes.round_to(np.ones(2), T.FLOAT, round_mode="nearest").dtype == np.float32


# ============================================================================ other kinds
def test_integers_wrap_and_truncate():
    # Cast: fixed -> fixed out of range discards the high bits (200 int16 -> -56 int8)
    r = lambda v, t: dtypes.round_to(np.array(v), t).astype(np.int64).tolist()  # noqa: E731
    assert r(np.int16([200]), T.INT8) == [-56]
    assert r(np.int64([7, 8, -9, 9, -1]), T.INT4) == [7, -8, 7, -7, -1]
    assert r(np.int64([15, 16, -1]), T.UINT4) == [15, 0, 15]
    assert r(np.int64([1, 2, -3]), T.INT2) == [1, -2, 1]
    assert r(np.int64([3, 4, 5, -1]), T.UINT2) == [3, 0, 1, 3]
    assert r(np.array([2.7, -2.7, 7.9]), T.INT4) == [2, -2, 7]  # truncation towards zero
    y = dtypes.round_to(np.int64([-8, 7]), T.INT4)
    assert y.dtype == np.dtype(ml_dtypes.int4) and y.view(np.uint8).tolist() == [8, 7]  # low 4 bits


def test_bool_complex_string():
    b = dtypes.round_to(np.array([0.0, -0.0, np.nan, 2.0, -1e-300]), T.BOOL)
    assert b.dtype == np.bool_ and b.tolist() == [False, False, True, True, True]
    z = np.array([1 + 2j, np.pi - 1j / 3])
    assert dtypes.round_to(z, T.COMPLEX64).tobytes() == z.astype(np.complex64).tobytes()
    assert dtypes.round_to(np.float64(0.1), T.COMPLEX64) == np.complex64(np.float32(0.1))
    with pytest.raises(TypeError):
        dtypes.round_to(np.array(["a"], dtype=object), T.STRING)


@pytest.mark.parametrize("t", [t for t in dtypes.ALL_TYPES if t != T.STRING], ids=dtypes.type_name)
def test_round_to_keeps_shape(t):
    for shape in [(), (0,), (2, 0, 3), (3,), (2, 3)]:
        y = dtypes.round_to(np.ones(shape), t)
        assert y.shape == shape and y.dtype == dtypes.np_dtype(t)
        assert (y.astype(np.float64) == 1).all() or t == T.BOOL and y.all()


# ============================================================================ onnxruntime
#: Types onnxruntime 1.32's CPU provider has no Identity kernel for (int4, uint4, int2, uint2,
#: float4e2m1, float8e8m0: "Could not find an implementation") or no tensor type at all
#: (complex64, complex128, float6e2m3, float6e3m2: "MLDataType ... is not currently registered").
ORT_132_NO_IDENTITY = {"int4", "uint4", "int2", "uint2", "float4e2m1", "float8e8m0", "complex64", "complex128",
                       "float6e2m3", "float6e3m2"}
#: Types onnxruntime 1.32 has no tensor type for at all (not even a graph input).
ORT_132_NO_TENSOR = {"complex64", "complex128", "float6e2m3", "float6e3m2"}
ORT_SHAPES = [(), (5,), (2, 3), (0,), (1, 0, 3)]


def _ort():
    ort = pytest.importorskip("onnxruntime")
    from conformance.backends.ort import OnnxRuntimeBackend

    return ort, OnnxRuntimeBackend()


def _graph_model(nodes, ins, outs, opset, *, ir=None):
    from onnx import helper

    g = helper.make_graph(nodes, "g", [helper.make_tensor_value_info(n, t, None) for n, t in ins],
                          [helper.make_tensor_value_info(n, t, None) for n, t in outs])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", opset)])
    m.ir_version = ir or helper.find_min_ir_version_for(list(m.opset_import))
    return m


def _identity_model(t: int):
    """Identity at the newest opset (<= 25) whose type constraint names ``t``; Cast-28 to the
    same type for the float6 types, which no Identity admits (only opset-28 operators do)."""
    from onnx import helper

    name = f"tensor({dtypes.type_name(t)})"
    for opset in (25, 24, 23, 21, 19, 16, 14, 13):
        if name in defs.get_schema("Identity", opset).type_constraints[0].allowed_type_strs:
            return _graph_model([helper.make_node("Identity", ["x"], ["y"])], [("x", t)], [("y", t)], opset)
    assert name in defs.get_schema("Cast", 28).type_constraints[1].allowed_type_strs
    return _graph_model([helper.make_node("Cast", ["x"], ["y"], to=t)], [("x", t)], [("y", t)], 28)


def _ort_sample(t: int, shape: tuple) -> np.ndarray:
    """Canonical bit patterns of ``t`` (every pattern cycles through for narrow types)."""
    rng = np.random.default_rng(int(t))
    n = int(np.prod(shape, dtype=np.int64))
    dt = dtypes.np_dtype(t)
    if t == T.STRING:
        return np.array([["", "a", "ünï", "日本"][i % 4] for i in range(n)], dtype=object).reshape(shape)
    if t == T.BOOL:
        return (np.arange(n) % 3 == 0).reshape(shape)
    bits = dtypes.bit_width(t)
    if bits <= 8:
        return (np.arange(n) % 2 ** bits).astype(np.uint8).view(dt).reshape(shape)
    return rng.integers(0, 256, n * dt.itemsize).astype(np.uint8).view(dt).reshape(shape)


def _bits_equal(a: np.ndarray, b: np.ndarray) -> bool:
    if a.dtype != b.dtype or a.shape != b.shape:
        return False
    return a.tolist() == b.tolist() if a.dtype == object else a.tobytes() == b.tobytes()


@pytest.mark.parametrize("t", dtypes.ALL_TYPES, ids=dtypes.type_name)
def test_onnxruntime_identity_every_type(t):
    ort, be = _ort()
    m = _identity_model(t)
    try:
        prepared = be.prepare(m, m.SerializeToString())
    except Exception as exc:  # noqa: BLE001
        assert be.is_unsupported(exc), exc  # a clean "not implemented" / unknown type, never an error
        if ort.__version__.startswith("1.32."):
            assert dtypes.type_name(t) in ORT_132_NO_IDENTITY, exc
        return
    if ort.__version__.startswith("1.32."):
        assert dtypes.type_name(t) not in ORT_132_NO_IDENTITY
    for shape in ORT_SHAPES:
        x = _ort_sample(t, shape)
        (y,) = be.run(prepared, {"x": x}, ["y"])
        assert _bits_equal(x, y), (shape, x, y)


@pytest.mark.parametrize("t", dtypes.ALL_TYPES, ids=dtypes.type_name)
def test_onnxruntime_feeds_and_reads_every_tensor_type(t):
    # a graph whose output is its input: no kernel involved, only feeding and fetching
    ort, be = _ort()
    m = _graph_model([], [("x", t)], [("x", t)], 25)
    try:
        prepared = be.prepare(m, m.SerializeToString())
    except Exception as exc:  # noqa: BLE001
        assert be.is_unsupported(exc), exc
        if ort.__version__.startswith("1.32."):
            assert dtypes.type_name(t) in ORT_132_NO_TENSOR, exc
        return
    for shape in ORT_SHAPES + [(7,), (3, 3)]:
        x = _ort_sample(t, shape)
        (y,) = be.run(prepared, {"x": x}, ["x"])
        assert _bits_equal(x, y), (shape, x, y)


@pytest.mark.parametrize("t", [T.INT4, T.UINT4, T.INT2, T.UINT2], ids=dtypes.type_name)
def test_onnxruntime_packed_layout_is_onnx_layout(t):
    # kernels that read and write single elements: a wrong packing would scramble them
    from onnx import helper

    _, be = _ort()
    info = dtypes.iinfo(t)
    vals = np.arange(int(info.min), int(info.max) + 1)
    x = np.resize(vals, (3, 5)).astype(dtypes.np_dtype(t))  # odd element count
    m = _graph_model([helper.make_node("Transpose", ["x"], ["y"], perm=[1, 0]), helper.make_node("Cast", ["x"], ["f"], to=T.FLOAT),
                      helper.make_node("Cast", ["g"], ["z"], to=t)],
                     [("x", t), ("g", T.FLOAT)], [("y", t), ("f", T.FLOAT), ("z", t)], 25)
    prepared = be.prepare(m, m.SerializeToString())
    g = np.resize(vals, (7,)).astype(np.float32)
    y, f, z = be.run(prepared, {"x": x, "g": g}, ["y", "f", "z"])
    assert y.dtype == x.dtype and y.tobytes() == np.ascontiguousarray(x.T).tobytes()
    assert f.dtype == np.float32 and (f == np.resize(vals, (3, 5))).all()
    assert z.dtype == x.dtype and z.shape == (7,) and (z.astype(np.int64) == np.resize(vals, (7,))).all()


def test_onnxruntime_float8e8m0_values():
    from onnx import helper

    _, be = _ort()
    m = _graph_model([helper.make_node("Cast", ["x"], ["f"], to=T.FLOAT), helper.make_node("Cast", ["p"], ["z"], to=E8)],
                     [("x", E8), ("p", T.FLOAT)], [("f", T.FLOAT), ("z", E8)], 25)
    prepared = be.prepare(m, m.SerializeToString())
    x = np.arange(256, dtype=np.uint8).view(dtypes.np_dtype(E8))
    p = (2.0 ** np.arange(-126, 128)).astype(np.float32)  # exact: no rounding involved
    f, z = be.run(prepared, {"x": x, "p": p}, ["f", "z"])
    assert (f[:255] == POW).all()  # 2**(bits - 127); 2**-127 is a float32 subnormal
    assert np.isnan(f[255])
    assert z.dtype == dtypes.np_dtype(E8) and z.view(np.uint8).tolist() == list(range(1, 255))


def test_onnxruntime_strings_next_to_bits_types():
    from onnx import helper

    from conformance.backends.base import Unsupported

    _, be = _ort()
    # bfloat16 in, string out: run() takes the OrtValue and the numpy array side by side
    m = _graph_model([helper.make_node("Cast", ["x"], ["s"], to=T.STRING)], [("x", T.BFLOAT16)], [("s", T.STRING)], 21)
    prepared = be.prepare(m, m.SerializeToString())
    (s,) = be.run(prepared, {"x": np.array([1.5, -2.0], dtype=ml_dtypes.bfloat16)}, ["s"])
    assert s.dtype == object and [float(v) for v in s] == [1.5, -2.0]
    # string in, bfloat16 out: the Python API cannot make a string OrtValue -> a clean unsupported
    m = _graph_model([helper.make_node("Cast", ["s"], ["x"], to=T.BFLOAT16)], [("s", T.STRING)], [("x", T.BFLOAT16)], 21)
    prepared = be.prepare(m, m.SerializeToString())
    with pytest.raises(Unsupported) as info:
        be.run(prepared, {"s": np.array(["1.5"], dtype=object)}, ["x"])
    assert be.is_unsupported(info.value)
