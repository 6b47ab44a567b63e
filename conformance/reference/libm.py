"""Transcendental functions whose values do not depend on the machine that computes them.

numpy picks the loops of its transcendental ufuncs (``exp``, ``log``, ``tanh`` ...) by the CPU
features it finds at import (SIMD loops for X86_V3 = AVX2/FMA, X86_V4 = AVX-512, NEON; the
baseline's otherwise), and those loops are not the same bit for bit: ``np.arcsinh`` was 2 ulp off
the true value with numpy 2.4's X86_V3 loops and within an ulp elsewhere; a Softmax case's derived
``atol`` was 3.36e-7 with them and 2.25e-7 without.  An oracle's float64 values, a legitimate
variant's float32 ones and the tolerances derived from them, hence a case's bytes and id, then
depended on the machine that generated the suite (docs/running.md, "Bytes across machines").

The functions here evaluate numpy's ufunc in ``np.longdouble`` and round the result to the
arguments' float type, where long double is wider than float64 (x86-64: a 64-bit significand;
numpy's long double loops call the C library's ``expl``, ``tanhl`` ..., which no CPU feature
changes): within an ulp of long double, so the float64 (or float32, float16) result is the one
nearest the true value except in ties 2**-11 ulp wide -- near-correctly rounded, as the variants
that model a runtime's arithmetic assume.  Elsewhere (aarch64 macOS, Windows: long double is
float64) and for arguments that are not numpy floats (ints, objects, ml_dtypes' bfloat16 and
float8), numpy's own ufunc is called.

Each function takes what the numpy ufunc of the same name takes (arrays or scalars, numpy's
type promotion with Python scalars weak, NEP 50) and returns an array of the promoted float
type, or a numpy scalar where no argument is an array.  Overflow of the rounding itself (``exp(710)``
is finite in long double) gives ``inf`` without a warning whatever the caller's ``np.errstate``
(numpy's float64 ``exp`` would warn unless the caller silenced overflow); the caller's error state
applies to the long double evaluation itself (``log(-1)``, ``log(0)``).
"""

from __future__ import annotations

from typing import Callable

import numpy as np

#: whether long double carries more significand bits than float64 (x86-64 Linux: 64 against 53)
WIDER = np.finfo(np.longdouble).nmant > np.finfo(np.float64).nmant


def widened(u: Callable) -> Callable:
    """``u`` (a numpy ufunc) evaluated in long double and rounded to the promoted float type of
    its arguments (float16, float32 or float64) where long double is wider; ``u`` itself for any
    other arguments or platform (module docstring).

    Raises:
        whatever ``u`` raises.
    """
    if not WIDER:
        return u

    def fn(*xs):
        dt = np.result_type(*xs)
        if dt.kind != "f" or dt.itemsize > 8:
            return u(*xs)
        out = u(*(np.asarray(x, dtype=np.longdouble) for x in xs))
        with np.errstate(over="ignore", under="ignore"):
            out = out.astype(dt)
        return out if any(isinstance(x, np.ndarray) for x in xs) else out[()]

    fn.__name__ = getattr(u, "__name__", "widened")
    fn.__doc__ = f"numpy's {fn.__name__}, evaluated in long double (conformance.reference.libm)."
    return fn


exp = widened(np.exp)
expm1 = widened(np.expm1)
log = widened(np.log)
log1p = widened(np.log1p)
tanh = widened(np.tanh)
cosh = widened(np.cosh)
logaddexp = widened(np.logaddexp)
