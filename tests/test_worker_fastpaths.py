"""The worker's fast paths (issue 30, "Per-case cost", third round) give exactly what the general
paths give: every dtype the suite has, 0-d, empty and strided arrays, NaN, infinities, -0.0."""

from __future__ import annotations

import json

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
