"""Element types by spec name, and value samplers for every kind of element type.

Type names are the spellings of the schemas' type constraints (``tensor(float)`` ->
``"float"``); the element type and numpy dtype come from onnx's own table
(``onnx.TensorProto.DataType``, ``onnx.helper.tensor_dtype_to_np_dtype``) through
:mod:`conformance.dtypes`.  Samplers return *exact* values (float64 arrays of values
representable in the type, Python-int object arrays, bools, strings, complex) as the
oracles take them (:mod:`conformance.ops.entry`), and :func:`to_type` turns them into the
arrays fed to a backend.
"""

from __future__ import annotations

import math
from functools import lru_cache

import ml_dtypes
import numpy as np
import onnx
from onnx import helper

from .. import dtypes

#: Kinds of element types (:func:`kind`).
FLOAT, INT, BOOL, STRING, COMPLEX = "float", "int", "bool", "string", "complex"
#: Floating types whose values are produced by rounding from float64 (the IEEE-like four).
IEEE = ("float16", "bfloat16", "float", "double")


def elem(name: str) -> int:
    """ONNX element type of a spec type name (``"float"``, ``"int8"``, ``"float8e4m3fn"``,
    also ``"tensor(float)"``).

    Raises:
        ValueError: not an element type name.
    """
    if name.startswith("tensor(") and name.endswith(")"):
        name = name[7:-1]
    return onnx.TensorProto.DataType.Value(name.upper())


def name_of(elem_type: int) -> str:
    """Spec type name of an ONNX element type (``TensorProto.FLOAT`` -> ``"float"``)."""
    return onnx.TensorProto.DataType.Name(elem_type).lower()


@lru_cache(maxsize=None)
def np_dtype(name: str) -> np.dtype:
    """numpy dtype of a spec type name (ml_dtypes for bfloat16, float8, int4...; object for
    string).

    Raises:
        ValueError / KeyError: not an element type onnx maps to numpy.
    """
    t = elem(name)
    try:
        return dtypes.np_dtype(t)
    except KeyError:
        return np.dtype(helper.tensor_dtype_to_np_dtype(t))


@lru_cache(maxsize=None)
def kind(name: str) -> str:
    """``float``, ``int``, ``bool``, ``string`` or ``complex`` for a spec type name."""
    if name == "bool":
        return BOOL
    if name == "string":
        return STRING
    if name.startswith("complex"):
        return COMPLEX
    dt = np_dtype(name)
    try:
        ml_dtypes.finfo(dt)
        return FLOAT
    except (ValueError, TypeError):
        return INT


def finfo(name: str):
    """``ml_dtypes.finfo`` of a floating type name."""
    return ml_dtypes.finfo(np_dtype(name))


def iinfo(name: str):
    """``ml_dtypes.iinfo`` (``numpy.iinfo`` semantics) of an integer type name, 4- and 2-bit
    types included."""
    return ml_dtypes.iinfo(np_dtype(name))


@lru_cache(maxsize=None)
def all_values(name: str) -> np.ndarray:
    """Every distinct bit pattern of an 8-bit-or-narrower floating type (float8, float6,
    float4, float8e8m0), in the type, NaN encodings included.

    Raises:
        ValueError: the type is wider than 8 bits.
    """
    dt = np_dtype(name)
    if dt.itemsize != 1:
        raise ValueError(f"{name} is wider than 8 bits")
    raw = np.arange(256, dtype=np.uint8).view(dt)
    canon = raw.astype(np.float32).astype(dt).view(np.uint8)
    keep = (canon == np.arange(256, dtype=np.uint8)) | np.isnan(raw.astype(np.float32))
    # narrow types stored in a byte (float4/float6): keep only patterns that fit the width
    return raw[keep]


def finite_grid(name: str) -> np.ndarray:
    """The distinct finite values of an 8-bit-or-narrower floating type (:func:`all_values`),
    sorted, as float64; zero once, as ``+0.0``.

    ``np.unique`` alone keeps whichever of ``-0.0`` and ``+0.0`` its sort puts first, and numpy
    sorts with the CPU's SIMD where it has it (x86-simd-sort on AVX2 / AVX-512), so that the grid,
    and every case drawn from it, differed between machines (session 16: 99 quantization cases of
    the smoke suite changed bytes with numpy's AVX2 paths switched off).

    Raises:
        ValueError: the type is wider than 8 bits.
    """
    allv = all_values(name).astype(np.float64)
    return np.unique(allv[np.isfinite(allv)] + 0.0)  # + 0.0: -0.0 becomes +0.0, the rest is unchanged


def round_float(x: np.ndarray, name: str) -> np.ndarray:
    """float64 -> the floating type, round to nearest even (:func:`conformance.dtypes.round_to`
    where it knows the type, else through float32)."""
    x = np.asarray(x, dtype=np.float64)
    with np.errstate(over="ignore", invalid="ignore"):
        try:
            return dtypes.round_to(x, elem(name))
        except KeyError:
            return x.astype(np.float32).astype(np_dtype(name))


def representable(x: np.ndarray, name: str) -> np.ndarray:
    """float64 values rounded to the floating type and back (what the backend is fed)."""
    with np.errstate(over="ignore", invalid="ignore"):
        return round_float(x, name).astype(np.float64)


def to_type(x: np.ndarray, name: str) -> np.ndarray:
    """An exact value (float64, object ints, bool, str, complex) as an array of the type.

    Raises:
        OverflowError: an integer value outside the type (a generator bug).
    """
    k = kind(name)
    dt = np_dtype(name)
    x = np.asarray(x)
    if k == FLOAT:
        return x if x.dtype == dt else round_float(x, name)
    if k == INT:
        if x.dtype == dt:
            return x
        info = iinfo(name)
        flat = [int(v) for v in x.ravel()]
        if any(v < info.min or v > info.max for v in flat):
            raise OverflowError(f"value outside {name}")
        return np.array(flat, dtype=np.int64 if info.min < 0 else np.uint64).astype(dt).reshape(x.shape)
    if k == BOOL:
        return x.astype(np.bool_)
    if k == STRING:
        return np.asarray(x, dtype=object)
    return x.astype(dt)


def to_exact(x: np.ndarray, name: str) -> np.ndarray:
    """An array of the type as the oracle takes it (module docstring of
    :mod:`conformance.ops.entry`)."""
    k = kind(name)
    x = np.asarray(x)
    if k == FLOAT:
        return x.astype(np.float64)
    if k == INT:
        out = np.empty(x.shape, dtype=object)
        out.ravel()[:] = [int(v) for v in x.astype(np.int64 if iinfo(name).min < 0 else np.uint64).ravel()] \
            if x.size else []
        return out
    if k == COMPLEX:
        return x.astype(np.complex128)
    return x


def float_specials(name: str, nan: bool = True, inf: bool = True, extra=()) -> list[float]:
    """The special values of a floating type: +-0, the smallest subnormal and normal, +-1,
    +-0.5, +-2, the largest finite value and half of it, NaN and +-inf where the type has
    them and the entry defines them, and ``extra`` (rounded to the type)."""
    if name not in IEEE:
        vals = [float(v) for v in all_values(name).astype(np.float64)]
        return [v for v in vals if (nan or not math.isnan(v)) and (inf or not math.isinf(v))]
    fi = finfo(name)
    sub, tiny, fmax = float(fi.smallest_subnormal), float(fi.smallest_normal), float(fi.max)
    vals = [0.0, -0.0, sub, -sub, tiny, -tiny, 1.0, -1.0, 0.5, -0.5, 2.0, -2.0, fmax, -fmax, fmax / 2, -fmax / 2]
    if nan:
        vals.append(math.nan)
    if inf:
        vals += [math.inf, -math.inf]
    vals += list(extra)
    out, seen = [], set()
    for v in representable(np.array(vals), name).tolist():
        key = (v, math.copysign(1.0, v)) if not math.isnan(v) else "nan"
        if key not in seen:
            seen.add(key)
            out.append(v)
    return out


def sample_float(rng, shape, name: str, interval, mode: str) -> np.ndarray:
    """float64 values representable in the floating type.

    ``mode``: ``normal`` (uniform in the interval's normal range), ``wide`` (log-uniform
    magnitudes from the smallest normal to half the largest value, inside the interval),
    ``positive`` (uniform in (0, scale]).  Narrow types (float8, float4, ...) draw from
    every finite value of the type inside the interval.
    """
    n = int(np.prod(shape, dtype=np.int64))
    if name not in IEEE:
        vals = all_values(name).astype(np.float64)
        vals = vals[np.isfinite(vals) & (vals >= interval.lo) & (vals <= interval.hi)]
        if mode == "normal":
            small = vals[np.abs(vals) <= interval.scale]
            vals = small if small.size else vals
        return rng.choice(vals, size=n).reshape(shape)
    if mode == "normal":
        lo, hi = interval.normal_range()
        x = rng.uniform(lo, hi, size=n)
    else:
        fi = finfo(name)
        lo_exp = math.log10(float(fi.smallest_normal))
        hi_exp = math.log10(float(fi.max) / 2)
        mag = 10.0 ** rng.uniform(lo_exp, hi_exp, size=n)
        signs = rng.choice([-1.0, 1.0], size=n)
        x = signs * mag
        if interval.lo >= 0:
            x = np.abs(x) + interval.lo
        elif interval.hi <= 0:
            x = -np.abs(x) + interval.hi
        if math.isfinite(interval.lo) and math.isfinite(interval.hi):  # bounded: log-spaced inside it
            span = interval.hi - interval.lo
            x = interval.lo + span * rng.random(size=n) ** 4
        x = np.clip(x, interval.lo, interval.hi)
    return representable(x.reshape(shape), name)


def sample_int(rng, shape, name: str, lo_hi=None, extremes: bool = True) -> np.ndarray:
    """Python-int object array: uniform in ``lo_hi`` (default the type's range), with the
    type's extremes, 0 and +-1 written into the first elements when ``extremes``."""
    info = iinfo(name)
    lo, hi = (int(info.min), int(info.max)) if lo_hi is None else (max(lo_hi[0], int(info.min)), min(lo_hi[1], int(info.max)))
    n = int(np.prod(shape, dtype=np.int64))
    vals = [int(v) for v in rng.integers(lo, hi, size=n, endpoint=True, dtype=np.uint64 if lo >= 0 else np.int64)]
    if extremes:
        ext = [v for v in (int(info.min), int(info.max), 0, 1, -1) if lo <= v <= hi] if lo_hi is None else \
            [v for v in (lo, hi, 0, 1, -1) if lo <= v <= hi]
        k = min(len(ext), n)
        order = rng.permutation(n)[:k] if n else []
        for i, j in enumerate(order):
            vals[j] = ext[i]
    out = np.empty(n, dtype=object)
    out[:] = vals
    return out.reshape(shape)


def sample_bool(rng, shape) -> np.ndarray:
    """Uniform booleans."""
    return rng.random(size=shape) < 0.5


ALPHABET = ("", "a", "b", "ab", "A", "é", "日本", " ", "a b", "0", "-1", "NaN")


def sample_string(rng, shape) -> np.ndarray:
    """Short strings from :data:`ALPHABET` (empty, case, non-ASCII, spaces, numbers as text)."""
    n = int(np.prod(shape, dtype=np.int64))
    out = np.empty(n, dtype=object)
    out[:] = [ALPHABET[i] for i in rng.integers(0, len(ALPHABET), size=n)]
    return out.reshape(shape)


def sample_complex(rng, shape, name: str) -> np.ndarray:
    """Complex values with normal real and imaginary parts, representable in the type."""
    dt = np_dtype(name)
    z = rng.normal(size=shape) + 1j * rng.normal(size=shape)
    return z.astype(dt).astype(np.complex128)


#: Positions of the special values in a row of :data:`ROW_LENGTH` elements (:func:`special_rows`):
#: the first element, inside the first vector block of 4, both sides of the block boundaries at
#: 4, 8, 16, 32 and 64, the middle, and the scalar tail after the last multiple of 16 and 64.
ROW_POSITIONS = (0, 1, 3, 4, 7, 8, 15, 16, 31, 32, 40, 47, 48, 63, 64, 66)
#: Row length of :func:`special_rows`: vectorizable (at least 64) and not a multiple of 4, so
#: that a kernel's remainder loop runs too.
ROW_LENGTH = 67


def special_rows(rng, base: np.ndarray, specials: list, shift: int = 0) -> np.ndarray:
    """``base`` (rows, :data:`ROW_LENGTH`) float64 values with ``specials`` written at
    :data:`ROW_POSITIONS` of every row: row ``r`` starts with NaN, ``+inf``, ``-inf`` in turn
    (those of them in ``specials``; ``shift`` rotates which), the other positions cycle over the
    list, each row from another offset, so every value meets every code path of a vectorized
    kernel (first element, first block, block boundaries, tail) and a row holds several.

    Raises:
        ValueError: ``base`` rows are shorter than the last position.
    """
    x = np.array(base, dtype=np.float64, copy=True)
    rows, n = x.shape
    if n <= ROW_POSITIONS[-1]:
        raise ValueError(f"rows of {n} elements; special_rows needs at least {ROW_POSITIONS[-1] + 1}")
    if not specials:
        return x
    firsts = [v for v in specials if math.isnan(v)][:1] + [v for v in specials if v == math.inf][:1] + \
        [v for v in specials if v == -math.inf][:1]
    k = len(specials)
    for r in range(rows):
        off = (r * 5 + shift * 3) % k
        for j, q in enumerate(ROW_POSITIONS):
            x[r, q] = specials[(off + j) % k]
        if firsts:
            x[r, 0] = firsts[(r + shift) % len(firsts)]
            x[r, ROW_POSITIONS[(r + shift) % 4 + 4]] = firsts[(r + shift + 1) % len(firsts)]
    return x
