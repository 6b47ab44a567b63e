"""Canonical NaNs in generated expected outputs (conformance.case.canonicalise_nans): the NaN sign
numpy's SIMD loops choose must not reach the content hash or the written files (docs/running.md,
"Bytes across machines"); Cast's NaN encodings, float8 NaNs and the inputs keep their bits."""

from __future__ import annotations

import ml_dtypes
import numpy as np
import onnx
import pytest
from onnx import TensorProto, numpy_helper

from conformance import dtypes, registry
from conformance.bundle import read_bundle
from conformance.bundle_write import write_bundle
from conformance.case import Case, DataSet, Input, Output
from conformance.suite import Suite
from conformance.tolerance import Tolerance

#: the canonical quiet NaN's bits (positive, the quiet bit alone) and a negative NaN with a payload
CANON = {np.float16: 0x7E00, ml_dtypes.bfloat16: 0x7FC0, np.float32: 0x7FC0_0000, np.float64: 0x7FF8_0000_0000_0000}
NEG_PAYLOAD = {np.float16: 0xFE01, ml_dtypes.bfloat16: 0xFFC1, np.float32: 0xFFC0_0001,
               np.float64: 0xFFF8_0000_0000_0001}


def _bits(a) -> list[int]:
    a = np.asarray(a)
    return a.view(f"u{a.dtype.itemsize}").ravel().tolist()


def _from_bits(bits, dt) -> np.ndarray:
    dt = np.dtype(dt)
    return np.array(bits, dtype=f"u{dt.itemsize}").view(dt)


@pytest.mark.parametrize("dt", list(CANON), ids=lambda d: np.dtype(d).name)
def test_canonical_nans_per_dtype(dt):
    a = _from_bits([NEG_PAYLOAD[dt], CANON[dt] | 1, _bits(np.array(-0.0, dt))[0], _bits(np.array(np.inf, dt))[0],
                    _bits(np.array(1.5, dt))[0]], dt).reshape(5, 1)
    before = _bits(a)
    out = dtypes.canonical_nans(a)
    assert out.dtype == a.dtype and out.shape == a.shape
    assert _bits(out) == [CANON[dt], CANON[dt]] + before[2:]  # NaNs made one; -0, inf, 1.5 as they were
    assert _bits(a) == before  # the argument is not written to
    assert _bits(dtypes.canonical_nans(_from_bits(NEG_PAYLOAD[dt], dt))) == [CANON[dt]]  # 0-d
    plain = np.array([1.0, -0.0], dt)
    assert dtypes.canonical_nans(plain) is plain  # nothing to change: the same array


def test_canonical_nans_complex_parts_and_narrow_types_untouched():
    c = np.zeros(2, np.complex64)
    c.real = _from_bits([NEG_PAYLOAD[np.float32], 0x3F80_0000], np.float32)
    c.imag = _from_bits([0x4000_0000, NEG_PAYLOAD[np.float32]], np.float32)
    out = dtypes.canonical_nans(c)
    assert _bits(out.real) == [CANON[np.float32], 0x3F80_0000] and _bits(out.imag) == [0x4000_0000, CANON[np.float32]]
    for dt, bits in ((ml_dtypes.float8_e4m3fn, [0xFF, 0x7F]), (ml_dtypes.float8_e5m2, [0xFF, 0xFD]),
                     (ml_dtypes.float8_e4m3fnuz, [0x80]), (ml_dtypes.float8_e8m0fnu, [0xFF])):
        a = _from_bits(bits, dt)
        assert dtypes.canonical_nans(a) is a, np.dtype(dt).name  # float8: NaN encodings are kept
    ints = np.array([-1, 2], np.int32)
    assert dtypes.canonical_nans(ints) is ints


def _case(op: str, x: np.ndarray, y: np.ndarray, t_in: int, t_out: int, label: str, attrs=None) -> Case:
    return Case(op, 21, 21, dict(attrs or {}), [Input("input", t_in, x.shape)],
                [Output("output", t_out, Tolerance(0.0, 0.0, exact=True))],
                [DataSet({"input": x}, {"output": y})], tags={"dtype": label}, label=label)


def _neg_nan_cases(seed: int) -> list[Case]:
    """Identity of a negative NaN (float, and float8e4m3fn's 0xff) and Cast float -> float16 of it (0xfe00: the conversion keeps the sign, drops the low payload)."""
    x = _from_bits([NEG_PAYLOAD[np.float32], 0x3F80_0000], np.float32)
    f8 = _from_bits([0xFF, 0x38], ml_dtypes.float8_e4m3fn)
    y16 = x.astype(np.float16)  # the conversion keeps the sign (0xfe00)
    return [_case("Identity", x, x, TensorProto.FLOAT, TensorProto.FLOAT, "float"),
            _case("Identity", f8, f8, TensorProto.FLOAT8E4M3FN, TensorProto.FLOAT8E4M3FN, "float8e4m3fn"),
            _case("Cast", x, y16, TensorProto.FLOAT, TensorProto.FLOAT16, "float-float16",
                  {"to": TensorProto.FLOAT16})]


@pytest.fixture
def neg_nan_op(monkeypatch):
    """A registered generator (op ``NegNaNProbe``) whose cases' expected outputs hold negative NaNs."""
    registry.available_ops()
    monkeypatch.setitem(registry._REGISTRY, ("", "NegNaNProbe"),
                        registry.GeneratorInfo("NegNaNProbe", "", "1", _neg_nan_cases))
    return "NegNaNProbe"


def test_generated_cases_hash_and_write_canonical_nans(neg_nan_op, tmp_path):
    ident, ident8, cast = registry.generate([neg_nan_op], 0)
    x = _neg_nan_cases(0)[0].datasets[0].inputs["input"]
    # the expected output: canonical NaN; the input (what a runtime is fed): the drawn bits
    assert _bits(ident.datasets[0].outputs["output"]) == [CANON[np.float32], 0x3F80_0000]
    assert _bits(ident.datasets[0].inputs["input"]) == _bits(x) == [NEG_PAYLOAD[np.float32], 0x3F80_0000]
    # the hash is the hash of the case written with the canonical NaN from the start
    raw = _neg_nan_cases(0)[0]
    canon = _neg_nan_cases(0)[0]
    canon.datasets[0].outputs["output"] = _from_bits([CANON[np.float32], 0x3F80_0000], np.float32)
    assert ident.content_hash == canon.content_hash != raw.content_hash
    # float8e4m3fn's negative NaN and Cast's float16 NaN keep their bits
    assert _bits(ident8.datasets[0].outputs["output"]) == [0xFF, 0x38]
    assert _bits(cast.datasets[0].outputs["output"]) == [0xFE00, 0x3C00]
    assert cast.content_hash == _neg_nan_cases(0)[2].content_hash

    out = write_bundle(Suite(cases=[ident, ident8, cast], seed=0, ops=[neg_nan_op]), tmp_path / "b")
    for case, want_in, want_out in ((ident, _bits(x), [CANON[np.float32], 0x3F80_0000]),
                                    (ident8, [0xFF, 0x38], [0xFF, 0x38]),
                                    (cast, _bits(x), [0xFE00, 0x3C00])):
        d = out / "cases" / case.dirname / "test_data_set_0"
        assert _bits(numpy_helper.to_array(onnx.load_tensor(str(d / "output_0.pb")))) == want_out, case.id
        assert _bits(numpy_helper.to_array(onnx.load_tensor(str(d / "input_0.pb")))) == want_in, case.id
    back = read_bundle(out)  # verifies the files against the manifest's hashes
    assert [c.content_hash for c in back.cases] == [ident.content_hash, ident8.content_hash, cast.content_hash]
