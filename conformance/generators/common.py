"""Data helpers shared by the generators: value distributions and numerics classes.

Every function takes an explicit ``numpy.random.Generator`` and returns float64
arrays whose values are *exactly representable* in the target element type (they
are rounded to it and back), so the float64 oracle sees exactly the values the
backend is fed.
"""

from __future__ import annotations

import numpy as np

from conformance import dtypes


def representable(x: np.ndarray, elem_type: int) -> np.ndarray:
    """Round ``x`` to ``elem_type`` and return it as float64 (exactly representable values)."""
    return dtypes.round_to(np.asarray(x, dtype=np.float64), elem_type).astype(np.float64)


def as_type(x: np.ndarray, elem_type: int) -> np.ndarray:
    """``x`` (float64, already representable) in the numpy dtype of ``elem_type``."""
    return dtypes.round_to(np.asarray(x, dtype=np.float64), elem_type)


def normal(rng: np.random.Generator, shape, elem_type: int, *, loc=0.0, scale=1.0) -> np.ndarray:
    """Gaussian values, representable in ``elem_type``."""
    return representable(rng.normal(loc, scale, size=shape), elem_type)


def uniform(rng: np.random.Generator, shape, elem_type: int, low=-1.0, high=1.0) -> np.ndarray:
    """Uniform values in [low, high), representable in ``elem_type``."""
    return representable(rng.uniform(low, high, size=shape), elem_type)


#: (offset, std) per element type for :func:`large_offset`: the spread stays resolved
#: (std >= 32 ulp of the offset) while E[x^2] - E[x]^2 at the input precision loses
#: everything (float, double) or E[x^2] overflows the type (float16).
LARGE_OFFSET = {
    "float16": (512.0, 16.0),
    "bfloat16": (1024.0, 64.0),
    "float": (1.0e4, 1.0),
    "double": (1.0e9, 1.0e-3),
}


def large_offset(rng: np.random.Generator, shape, elem_type: int) -> np.ndarray:
    """Values with mean >> standard deviation (table :data:`LARGE_OFFSET`).

    Breaks kernels that compute the variance as E[x^2] - E[x]^2 in the input type.
    """
    offset, std = LARGE_OFFSET[dtypes.type_name(elem_type)]
    return representable(offset + rng.normal(0.0, std, size=shape), elem_type)


def near_limits(rng: np.random.Generator, shape, elem_type: int, *, fraction: float = 0.5) -> np.ndarray:
    """Values of magnitude up to ``fraction`` of the type's largest finite value."""
    fmax = float(dtypes.finfo(elem_type).max)
    return representable(rng.uniform(-1.0, 1.0, size=shape) * fmax * fraction, elem_type)
