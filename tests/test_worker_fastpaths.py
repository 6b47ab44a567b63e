"""The worker's fast paths (issue 30, "Per-case cost", third round) give exactly what the general
paths give: every dtype the suite has, 0-d, empty and strided arrays, NaN, infinities, -0.0."""

from __future__ import annotations

import json
import math

import ml_dtypes
import numpy as np
import pytest

from conformance import dtypes, tolerance
from conformance.tolerance import Tolerance, compare

FLOAT_DTYPES = sorted({dtypes.np_dtype(t) for t in dtypes.ALL_FLOAT_TYPES}, key=str)
TOLERANCES = [Tolerance(0.0, 0.0, exact=True), Tolerance(0.0, 0.0, exact=True, signed_zero=True),
              Tolerance(1e-3, 1e-2), Tolerance(1e-3, 1e-2, signed_zero=True), Tolerance(0.0, 1e-2)]


def _values(dt: np.dtype, rng) -> list[np.ndarray]:
    """Arrays of ``dt``: 0-d, empty, small, strided, with the special values the type holds."""
    specials = [0.0, -0.0, 1.0, -2.5, 0.5]
    for s in (float("nan"), float("inf"), float("-inf")):
        with np.errstate(all="ignore"):
            v = np.asarray([s]).astype(dt)
        if np.isnan(v.astype(np.float64))[0] == np.isnan(s) and (np.isnan(s) or v.astype(np.float64)[0] == s):
            specials.append(s)
    with np.errstate(all="ignore"):
        base = np.asarray(specials + list(rng.standard_normal(11)), dtype=np.float64).astype(dt)
    return [base[:1].reshape(()), base[:0], base[:0].reshape(0, 3), base, base.reshape(-1, 1)[::2],
            np.asarray(base[3:4]).reshape(()), base[::-1]]


def _slow(monkeypatch, *args):
    with monkeypatch.context() as m:
        m.setattr(tolerance, "_FLOAT_DTYPES", frozenset())
        return compare(*args)


def _same(a, b) -> None:
    assert json.dumps(a.to_json(), sort_keys=True) == json.dumps(b.to_json(), sort_keys=True)


@pytest.mark.parametrize("dt", FLOAT_DTYPES, ids=str)
def test_bitwise_equal_output_checks_as_before(dt, monkeypatch):
    rng = np.random.default_rng(0)
    for e in _values(dt, rng):
        for a in (e.copy(), np.array(e, copy=True, order="F"), e):
            for tol in TOLERANCES:
                got = compare("y", a, e, tol)
                _same(got, _slow(monkeypatch, "y", a, e, tol))


@pytest.mark.parametrize("dt", FLOAT_DTYPES, ids=str)
def test_near_outputs_still_take_the_general_path(dt, monkeypatch):
    """Outputs that differ in a bit (-0.0 for 0.0, another NaN, the next value) are judged as before."""
    rng = np.random.default_rng(1)
    for e in _values(dt, rng):
        if e.size == 0:
            continue
        flat = e.reshape(-1).copy()
        bits = flat.view(np.uint8 if dt.itemsize == 1 else np.uint16 if dt.itemsize == 2 else
                         np.uint32 if dt.itemsize == 4 else np.uint64)
        for k in range(min(3, flat.size)):
            a = flat.copy()
            a.view(bits.dtype)[k] ^= 1  # the last bit
            b = flat.copy()
            b.view(bits.dtype)[k] ^= bits.dtype.type(1) << bits.dtype.type(8 * dt.itemsize - 1)  # the sign bit
            for x in (a, b):
                x = x.reshape(e.shape)
                for tol in TOLERANCES:
                    _same(compare("y", x, e, tol), _slow(monkeypatch, "y", x, e, tol))


def test_first_element_as_float64():
    """The check's values at the worst element are the float64 values the general path converts."""
    for dt in FLOAT_DTYPES:
        with np.errstate(all="ignore"):
            v = np.asarray([0.5, -0.0, 1.5, 3.0, 448.0, 1e-3], dtype=np.float64).astype(dt)
        for x in v:
            assert float(x) == np.asarray(x, dtype=np.float64) or np.isnan(float(x))
    assert ml_dtypes.bfloat16 in [d.type for d in FLOAT_DTYPES]


def test_other_dtypes_unchanged():
    """Integers, booleans, strings and complex values do not take the bitwise path."""
    assert all(d.kind in "fV" for d in tolerance._FLOAT_DTYPES)
    for e in (np.arange(5, dtype=np.int8), np.array([True, False]), np.array(["a", "b"], dtype=object),
              np.array([1 + 2j], dtype=np.complex64)):
        chk = compare("y", e.copy(), e, Tolerance(0.0, 0.0, exact=True))
        assert chk.passed


# ------------------------------------------------------------------ tensor files read from their bytes
def _tensor_files(rng) -> list[bytes]:
    """Serialised tensors as bundles hold them (``numpy_helper.from_array``), every ONNX type."""
    from onnx import numpy_helper

    out = []
    for t in dtypes.ALL_TYPES:
        dt = dtypes.np_dtype(t)
        for shape in ((), (0,), (3,), (2, 0, 4), (2, 3), (1, 1, 1, 5), (200,)):
            n = int(np.prod(shape))
            if dt.kind in "OUS":
                v = np.array([f"s{k}\u00e9" for k in range(n)], dtype=object).reshape(shape)
            elif dt == np.bool_:
                v = (rng.integers(0, 2, n) == 1).reshape(shape)
            else:
                with np.errstate(all="ignore"):
                    v = np.asarray(rng.standard_normal(n) * 4, dtype=np.float64)
                    if n > 2:
                        v[:3] = [np.nan, -0.0, np.inf]
                    v = v.astype(dt).reshape(shape) if dt.kind in "fVc" else \
                        rng.integers(0, 3, n).astype(dt).reshape(shape)
            for name in ("x", "", "a_long_name_" * 20):
                try:
                    out.append(numpy_helper.from_array(v, name).SerializeToString())
                except Exception:  # noqa: BLE001 - a type from_array does not write
                    break
    return out


def _slow_tensor(data: bytes):
    import onnx

    from conformance.bundle import tensor_array

    t = onnx.TensorProto()
    t.ParseFromString(data)
    return tensor_array(t)


def _outcome(fn, data):
    try:
        a = fn(data)
    except Exception as exc:  # noqa: BLE001 - compared below
        return ("raised", type(exc).__name__, str(exc))
    if a is None:
        return ("array", "object")
    return ("array", str(a.dtype), a.shape, a.tobytes() if a.dtype.kind != "O" else repr(a.tolist()),
            a.flags.writeable)


def test_raw_tensor_is_tensor_array():
    from conformance.bundle import _raw_tensor

    files = _tensor_files(np.random.default_rng(2))
    fast = 0
    for data in files:
        a = _raw_tensor(data)
        if a is None:
            continue
        fast += 1
        assert _outcome(lambda d: a, data) == _outcome(_slow_tensor, data)
    assert fast > len(files) // 2  # the common types take it (strings and packed types do not)


def test_raw_tensor_odd_bytes():
    """Any other layout, damaged or truncated bytes: the fast reader answers nothing or the same."""
    from conformance.bundle import _raw_tensor
    from onnx import numpy_helper

    rng = np.random.default_rng(3)
    files = _tensor_files(rng)[:400]
    base = numpy_helper.from_array(np.arange(6, dtype=np.float32).reshape(2, 3), "x")
    odd = [b"", b"\x08", b"\x10\x01", b"\x4a\x04abcd", b"\x10\x01\x4a\x03abc",  # 3 bytes of float32
           b"\x08\x02\x10\x01\x4a\x04abcd",  # 1 value for shape (2,)
           b"\x08\xff\xff\xff\xff\xff\xff\xff\xff\xff\x01\x10\x01\x4a\x04abcd",  # dims [-1]
           b"\x08\x01\x10\x01\x10\x0b\x4a\x04abcd",  # data_type twice (the last holds)
           b"\x08\x01\x10\x01\x4a\x04abcd\x4a\x08abcdefgh",  # raw_data twice
           b"\x08\x01\x10\x01\x42\x01\xff\x4a\x04abcd",  # a name that is not UTF-8
           b"\x0a\x01\x01\x10\x01\x4a\x04abcd",  # packed dims
           b"\x08\x01\x10\x01\x70\x01\x4a\x04abcd",  # data_location EXTERNAL
           b"\x08\x81\x80\x00\x10\x01\x4a\x04abcd",  # an overlong varint
           base.SerializeToString() + b"\x10\x01"]
    for data in files:
        for _ in range(4):
            k = int(rng.integers(0, len(data) + 1))
            odd.append(data[:k])
            if data:
                b = bytearray(data)
                b[int(rng.integers(0, len(b)))] ^= 1 << int(rng.integers(0, 8))
                odd.append(bytes(b))
    answered = 0
    for data in odd:
        got = _outcome(_raw_tensor, data)
        if got[0] == "array" and got[1] == "object":  # None: not answered, protobuf parses it
            continue
        answered += 1
        assert got == _outcome(_slow_tensor, data), data[:40]
    assert answered > 10


def test_tolerance_from_json_is_the_dataclass():
    import pickle

    for d in ({"atol": 1e-3, "rtol": 0.0, "spread": 2.5e-4, "variants": ["a", "b"], "exact": False},
              {"atol": 0, "rtol": 0, "exact": True, "signed_zero": True},
              {"atol": "1e-7", "rtol": 1, "propagated": 3e-9, "variants": []}):
        got = Tolerance.from_json(d)
        want = Tolerance(atol=float(d["atol"]), rtol=float(d["rtol"]), spread=float(d.get("spread", 0.0)),
                         variants=tuple(d.get("variants", ())), exact=bool(d.get("exact", False)),
                         signed_zero=bool(d.get("signed_zero", False)), propagated=float(d.get("propagated", 0.0)))
        assert got == want and hash(got) == hash(want) and repr(got) == repr(want)
        assert vars(got) == vars(want) and list(vars(got)) == list(vars(want))
        assert got.to_json() == want.to_json() and pickle.loads(pickle.dumps(got)) == want
        with pytest.raises(AttributeError):
            got.atol = 1.0  # still frozen


@pytest.mark.parametrize("size", [0, 1, 65535, 65536, 65537, 3 * 65536, 3 * 65536 + 5, 1_000_000])
def test_read_file_any_size(tmp_path, size):
    """A case file is read whole whatever its size against the read's chunk (64 KiB)."""
    import os

    from conformance.bundle import BundleError, _read_file

    data = os.urandom(size)
    (tmp_path / "f.pb").write_bytes(data)
    assert _read_file(str(tmp_path), "f.pb") == data
    with pytest.raises(BundleError, match="missing file"):
        _read_file(str(tmp_path), "g.pb")


def test_compact_encoder_writes_what_json_writes():
    """The result line's encoder made once (jsonsafe._encode_compact) gives JSONEncoder.encode's text,
    raises where it raises, and is unharmed by a value that made it raise."""
    import math

    from conformance import jsonsafe

    enc = json.JSONEncoder(allow_nan=False, separators=(",", ":"))
    assert jsonsafe._C_COMPACT is not None  # CPython: the C encoder is there
    shared = {"k": [1, 2]}
    values = [{"a": 1}, [], {}, "text \u00e9", 1.5, None, True, {"x": [shared, shared, {"y": shared}]},
              {"n": 2**80, "f": [1e-05, 1.5e-07, -0.0, 5e-324, 1e16, 0.1], "s": "\ud800 \U0001F600 \x00\x7f\""},
              {"big": list(range(50)), "t": (1, 2)}, {1: "int key", 2.5: "float key", None: 0, True: 1}]
    bad = [{"x": math.nan}, [math.inf], {"o": object()}, {"b": b"bytes"}, {(1, 2): 0}]
    for v in values + bad + values:
        try:
            want = ("ok", enc.encode(v))
        except (ValueError, TypeError) as exc:
            want = ("raised", type(exc).__name__, str(exc))
        try:
            got = ("ok", jsonsafe._encode_compact(v))
        except (ValueError, TypeError) as exc:
            got = ("raised", type(exc).__name__, str(exc))
        assert got == want
    for v in values + bad:
        assert jsonsafe.written(v, separators=(",", ":"))[1] == jsonsafe.written(v, separators=(",", ":"), indent=None)[1]
    a: list = []
    a.append(a)
    with pytest.raises(RecursionError):  # as before: the circular value is made safe, which recurses
        jsonsafe.written(a, separators=(",", ":"))
    assert jsonsafe._encode_compact({"after": [1]}) == '{"after":[1]}'


# ------------------------------------------------------------------ exact types equal bit for bit (fifth round)
def _exact_values(dt: np.dtype, rng) -> list[np.ndarray]:
    if dt.kind == "b":
        base = rng.integers(0, 2, 9) == 1
    elif dt.kind in "US":
        base = np.array(["", "a", "\u00e9t\u00e9" if dt.kind == "U" else "b", "abc", "a\x00"] * 2, dtype=dt)
    else:
        info = np.iinfo(dt)
        base = np.array([info.min, info.max, 0, 1] + [int(x) for x in rng.integers(info.min // 2, info.max // 2, 6)],
                        dtype=dt)
    return [base[:1].reshape(()), base[:0], base[:0].reshape(0, 3), base, base.reshape(-1, 1)[::2], base[::-1]]


def _slow_exact(name, a, e, tol):
    """The element-wise exact comparison of :func:`compare` (what it gave before the shortcut)."""
    from conformance.tolerance import Check

    a, e = np.asarray(a), np.asarray(e)
    if e.size == 0:
        return Check(name, True, tolerance=tol)
    bad = a != e
    if not bad.any():
        return Check(name, True, tolerance=tol)
    idx = np.unravel_index(int(np.argmax(bad)), e.shape)
    return Check(name, False, f"{int(bad.sum())} of {e.size} element(s) differ (exact comparison); first at "
                              f"{list(map(int, idx))}: expected {e[idx]!r}, got {a[idx]!r}",
                 ratio=math.inf, worst_index=[int(i) for i in idx], tolerance=tol)


EXACT_DTYPES = [np.dtype(d) for d in (np.bool_, np.int8, np.uint8, np.int16, np.uint16, np.int32, np.uint32,
                                      np.int64, np.uint64, "U5", "S5")]


@pytest.mark.parametrize("dt", EXACT_DTYPES, ids=str)
def test_exact_types_bitwise_equal_check_as_before(dt):
    """An integer, bool or fixed-width string output equal to the expected one bit for bit gives the
    check the element-wise comparison gives; one that differs is judged as before."""
    rng = np.random.default_rng(2)
    tol = Tolerance(0.0, 0.0, exact=True)
    for e in _exact_values(dt, rng):
        others = [e.copy(), np.array(e, copy=True, order="F"), e]
        if e.size:
            d = e.reshape(-1).copy()
            d[-1] = d[0] if d[-1] != d[0] else (d[0] + 1 if dt.kind in "iu" else (not d[0]) if dt.kind == "b" else "z")
            others.append(d.reshape(e.shape))
        for a in others:
            got = compare("y", a, e, tol)
            want = _slow_exact("y", a, e, tol)
            _same(got, want)
            assert got.passed == bool(np.array_equal(a, e))


# ------------------------------------------------------------------ onnxruntime's options made once a level (fifth round)
def test_ort_sessions_share_options_made_once_a_level():
    """prepare() shares one SessionOptions a level among its sessions, each session with the backend's
    settings; prepare_at_level() still makes its own (the file its optimized graph is saved to)."""
    pytest.importorskip("onnxruntime")
    from onnx import TensorProto, helper

    from conformance.backends.ort import OnnxRuntimeBackend

    node = helper.make_node("Relu", ["x"], ["y"])
    graph = helper.make_graph([node], "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [3])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [3])])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 14)])
    data = model.SerializeToString()
    x = np.array([-1.0, 0.0, 2.0], dtype=np.float32)
    for level, name in (("all", "ORT_ENABLE_ALL"), ("disable", "ORT_DISABLE_ALL")):
        b = OnnxRuntimeBackend(graph_optimization_level=level)
        first, second = b.prepare(model, data), b.prepare(model, data)
        for p in (first, second):
            so = p[0].get_session_options()
            assert so.graph_optimization_level == getattr(b._ort.GraphOptimizationLevel, name)
            assert (so.intra_op_num_threads, so.inter_op_num_threads, so.log_severity_level) == (1, 1, 4)
            assert so.optimized_model_filepath == ""
            np.testing.assert_array_equal(b.run(p, {"x": x}, ["y"])[0], np.maximum(x, 0))
        at = b.prepare_at_level(model, data, "basic")
        assert at[2] == ["Relu"]
        assert at[0].get_session_options().graph_optimization_level == b._ort.GraphOptimizationLevel.ORT_ENABLE_BASIC
        again = b.prepare(model, data)  # the shared options untouched by the level's own
        assert again[0].get_session_options().graph_optimization_level == getattr(b._ort.GraphOptimizationLevel, name)
        assert again[0].get_session_options().optimized_model_filepath == ""


# ------------------------------------------------------------------ outputs of numpy-less types (session 15)
@pytest.mark.parametrize("t", sorted(__import__("conformance.backends.ort", fromlist=["_BITS_ELEM"])._BITS_ELEM))
def test_ortvalue_outputs_read_as_onnx_reads_them(t):
    """An output onnxruntime's Python API cannot give as numpy (bfloat16, float8, 4-, 2- and 6-bit
    types) is read from the OrtValue's memory: a whole-byte type copied straight into a writable
    array, a packed one through ``numpy_helper.to_array``; either way bit for bit the array onnx
    decodes from the same bytes, whatever the shape (empty and scalar included)."""
    ort = pytest.importorskip("onnxruntime")
    from onnx import TensorProto, numpy_helper

    from conformance.backends.ort import _WHOLE_BYTES, _ortvalue_to_numpy

    assert (t in _WHOLE_BYTES) == (not dtypes.is_subbyte(t))
    rng = np.random.default_rng(t)
    for shape in ((2, 3), (7,), (), (0, 4)):
        bits = dtypes.bit_width(t)
        codes = rng.integers(0, 1 << bits, size=shape).astype(np.uint8 if bits <= 8 else np.uint16)
        want = codes.view(dtypes.np_dtype(t)) if bits >= 8 else codes.astype(dtypes.np_dtype(t))
        raw = numpy_helper.from_array(want).raw_data
        try:
            ov = ort.OrtValue.ortvalue_from_shape_and_type(list(shape), t)
        except Exception as exc:  # noqa: BLE001 - a type this onnxruntime does not have (float6)
            pytest.skip(f"onnxruntime has no {dtypes.type_name(t)} tensor: {exc}")
        if ov.tensor_size_in_bytes() != len(raw):
            pytest.skip(f"onnxruntime packs {dtypes.type_name(t)} otherwise")
        if raw:
            import ctypes

            ctypes.memmove(ov.data_ptr(), raw, len(raw))
        got = _ortvalue_to_numpy(ov)
        ref = TensorProto(data_type=t, dims=list(shape), raw_data=raw)
        expect = numpy_helper.to_array(ref)
        assert got.dtype == expect.dtype and got.shape == expect.shape == tuple(shape)
        assert got.tobytes() == expect.tobytes() and got.flags.writeable
