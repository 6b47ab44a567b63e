"""conformance.reference.libm: numpy's transcendental ufuncs evaluated in long double, within about
half an ulp of mpmath's value whatever loops numpy picked, with numpy's own types and shapes."""

import warnings

import mpmath
import numpy as np
import pytest

from conformance.reference import libm

pytestmark = pytest.mark.skipif(not libm.WIDER, reason="long double is float64 here: libm is numpy's own ufuncs")

_MP = {"exp": mpmath.exp, "expm1": mpmath.expm1, "log": mpmath.log, "log1p": mpmath.log1p, "tanh": mpmath.tanh,
       "cosh": mpmath.cosh}


def _points(name: str) -> np.ndarray:
    rng = np.random.default_rng(7)
    x = np.concatenate([rng.uniform(-20, 20, 400), rng.uniform(-1e-3, 1e-3, 100), rng.uniform(-700, 700, 100)])
    if name in ("log", "log1p"):
        x = np.abs(x) + (0.0 if name == "log" else -0.5)
        x = x[x > (0.0 if name == "log" else -1.0)]
    return x


@pytest.mark.parametrize("name", sorted(_MP))
def test_float64_within_about_half_an_ulp_of_mpmath(name):
    """Long double's 11 extra bits: the float64 result is the nearest but in ties 2**-11 ulp wide,
    so no point is more than 0.5 + 2**-10 ulp from the value mpmath gives at 80 digits."""
    x = _points(name)
    got = getattr(libm, name)(x)
    assert got.dtype == np.float64 and got.shape == x.shape
    worst = 0.0
    with mpmath.workdps(80):
        for xi, gi in zip(x.tolist(), got.tolist()):
            true = _MP[name](mpmath.mpf(xi))
            if not mpmath.isfinite(true) or abs(true) > 1.7e308:
                continue
            ulp = float(np.spacing(np.float64(abs(float(true)))))
            worst = max(worst, float(abs(mpmath.mpf(gi) - true)) / ulp)
    assert worst <= 0.5 + 2.0 ** -10, worst


def test_float32_is_the_float32_nearest_the_true_value():
    """A float32 argument gives float32, rounded once from long double: what a correctly rounded
    float32 libm gives, checked against mpmath's value rounded to float32."""
    x = np.random.default_rng(3).uniform(-10, 10, 300).astype(np.float32)
    got = libm.exp(x)
    assert got.dtype == np.float32
    want = np.array([float(mpmath.exp(mpmath.mpf(float(v)))) for v in x]).astype(np.float32)
    assert (got == want).mean() > 0.99  # float64 -> float32 double rounding: a tie in 2**29


def test_types_and_special_values_as_numpy():
    assert type(libm.exp(1.0)) is np.float64 and libm.exp(1.0) == np.float64(np.e)
    assert libm.logaddexp(0.0, np.float32([1.0])).dtype == np.float32  # a Python scalar is weak (NEP 50)
    assert libm.exp(np.float16([1.0])).dtype == np.float16
    assert np.signbit(libm.tanh(-0.0)) and np.signbit(libm.expm1(np.array([-0.0]))[0])
    assert np.isnan(libm.exp(np.nan)) and libm.exp(-np.inf) == 0.0 and libm.log(0.0 + np.inf) == np.inf
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert libm.exp(np.array([710.0]))[0] == np.inf  # finite in long double, inf once rounded, silently
    ints = np.array([1, 2])
    assert libm.exp(ints).dtype == np.exp(ints).dtype  # not a float argument: numpy's own ufunc
