"""Element types: ONNX ``TensorProto`` data types <-> numpy dtypes.

bfloat16 and the four float8 types are represented by ``ml_dtypes`` (``bfloat16``,
``float8_e4m3fn``, ``float8_e4m3fnuz``, ``float8_e5m2``, ``float8_e5m2fnuz``); every
other floating type by numpy's own.  The short names (``float16``, ``bfloat16``,
``float``, ``double``, ``float8e4m3fn``, ``float8e4m3fnuz``, ``float8e5m2``,
``float8e5m2fnuz``) are the ones the ONNX spec uses in type constraints
(``tensor(float16)``, ``tensor(float8e4m3fn)``...), and they are what case ids and tags
carry.

Two groups of floating types:

* :data:`FLOAT_TYPES`: the four IEEE-like types every generator produces (float16,
  bfloat16, float, double);
* :data:`FLOAT8_TYPES`: the four 8-bit types of ONNX IR 9 (opset 19+).  Only generators
  that opt in produce them (Dropout-22); :func:`is_float` covers both groups.

float8 formats (ONNX ``docs/Float8.md``; ``E`` exponent bits, ``M`` mantissa bits):

=================  ==  ==  ======  ==========  ==================  =====  ==  =====================
type               E   M   max     min normal  min subnormal       inf    -0  NaN
=================  ==  ==  ======  ==========  ==================  =====  ==  =====================
float8e4m3fn       4   3   448     2^-6        2^-9                no     yes ``S.1111.111`` (2)
float8e4m3fnuz     4   3   240     2^-7        2^-10               no     no  ``1.0000.000`` only
float8e5m2         5   2   57344   2^-14       2^-16               yes    yes IEEE-like (several)
float8e5m2fnuz     5   2   57344   2^-15       2^-17               no     no  ``1.00000.00`` only
=================  ==  ==  ======  ==========  ==================  =====  ==  =====================

Rounding (:func:`round_to`) is round-to-nearest-even from float64, correctly rounded
(one rounding).  ``ml_dtypes`` itself converts float64 -> float8 *through float32*
(two roundings: ``1 + 2**-4 + 2**-30`` becomes 1.0 in float8e4m3fn instead of 1.125), so
:func:`round_to` first rounds float64 to float32 *to odd* (truncate, then set the last
bit if anything was lost), which makes the second, round-to-nearest-even step
float32 -> float8 give the correctly rounded result (float32 has far more than two bits
beyond any float8 mantissa).  Overflow follows ``ml_dtypes`` (the ONNX ``Cast`` with
``saturate=0``; there is no saturation here): a value that rounds beyond the largest
finite value (``|x| > 464`` for float8e4m3fn, ``>= 248`` for float8e4m3fnuz,
``>= 61440`` for both e5m2 types; ties to even go up where the largest finite value has an
odd mantissa) becomes NaN for float8e4m3fn and the two fnuz types (they have no
infinity) and +-inf for float8e5m2; infinities map likewise (NaN, NaN, +-inf, NaN).
The fnuz types have no negative zero: -0.0 and negative values that round to zero
become +0, and every NaN (whatever its sign or payload) becomes the single NaN
``0x80``.  float8e4m3fn keeps the sign of NaN (``0x7f`` / ``0xff``).

bfloat16 keeps its historical path (float64 -> float32 -> bfloat16, each
round-to-nearest-even), which can double-round only in the last bit of ties that a float64
oracle practically never produces; it is left so, so that existing cases keep their bytes.
"""

from __future__ import annotations

import ml_dtypes
import numpy as np
from onnx import TensorProto

#: ONNX element type -> numpy dtype for the types our generators produce.
_NP = {
    TensorProto.FLOAT16: np.dtype(np.float16),
    TensorProto.BFLOAT16: np.dtype(ml_dtypes.bfloat16),
    TensorProto.FLOAT: np.dtype(np.float32),
    TensorProto.DOUBLE: np.dtype(np.float64),
    TensorProto.FLOAT8E4M3FN: np.dtype(ml_dtypes.float8_e4m3fn),
    TensorProto.FLOAT8E4M3FNUZ: np.dtype(ml_dtypes.float8_e4m3fnuz),
    TensorProto.FLOAT8E5M2: np.dtype(ml_dtypes.float8_e5m2),
    TensorProto.FLOAT8E5M2FNUZ: np.dtype(ml_dtypes.float8_e5m2fnuz),
    TensorProto.INT64: np.dtype(np.int64),
    TensorProto.INT32: np.dtype(np.int32),
    TensorProto.BOOL: np.dtype(np.bool_),
}

#: ONNX element type -> the name the spec uses inside ``tensor(...)``.
_NAME = {
    TensorProto.FLOAT16: "float16",
    TensorProto.BFLOAT16: "bfloat16",
    TensorProto.FLOAT: "float",
    TensorProto.DOUBLE: "double",
    TensorProto.FLOAT8E4M3FN: "float8e4m3fn",
    TensorProto.FLOAT8E4M3FNUZ: "float8e4m3fnuz",
    TensorProto.FLOAT8E5M2: "float8e5m2",
    TensorProto.FLOAT8E5M2FNUZ: "float8e5m2fnuz",
    TensorProto.INT64: "int64",
    TensorProto.INT32: "int32",
    TensorProto.BOOL: "bool",
}
_BY_NAME = {v: k for k, v in _NAME.items()}
_BY_NAME.update({"float32": TensorProto.FLOAT, "float64": TensorProto.DOUBLE})
# numpy / ml_dtypes spellings of the float8 types (``str(np.dtype(ml_dtypes.float8_e4m3fn))``).
_BY_NAME.update({"float8_e4m3fn": TensorProto.FLOAT8E4M3FN, "float8_e4m3fnuz": TensorProto.FLOAT8E4M3FNUZ,
                 "float8_e5m2": TensorProto.FLOAT8E5M2, "float8_e5m2fnuz": TensorProto.FLOAT8E5M2FNUZ})

#: The four IEEE-like float types every generator and reference produces.  Do not add
#: float8 here: generators iterate over this tuple.
FLOAT_TYPES = (TensorProto.FLOAT16, TensorProto.BFLOAT16, TensorProto.FLOAT, TensorProto.DOUBLE)

#: The four float8 types (ONNX IR 9, opset 19+), generated only where a generator opts in.
FLOAT8_TYPES = (TensorProto.FLOAT8E4M3FN, TensorProto.FLOAT8E4M3FNUZ, TensorProto.FLOAT8E5M2,
                TensorProto.FLOAT8E5M2FNUZ)

_FLOAT8_DTYPES = frozenset(_NP[t] for t in FLOAT8_TYPES)


def np_dtype(elem_type: int) -> np.dtype:
    """numpy dtype for an ONNX element type.

    Raises:
        KeyError: the element type is not one this project generates.
    """
    try:
        return _NP[elem_type]
    except KeyError:
        raise KeyError(f"unsupported ONNX element type {elem_type}") from None


def type_name(elem_type: int) -> str:
    """Spec name of an element type, e.g. ``TensorProto.FLOAT`` -> ``"float"``,
    ``TensorProto.FLOAT8E4M3FN`` -> ``"float8e4m3fn"``.

    Raises:
        KeyError: an element type this project does not know.
    """
    return _NAME[elem_type]


def elem_type(name_or_dtype: str | np.dtype | type) -> int:
    """ONNX element type from a spec name (``"float16"``, ``"tensor(float)"``,
    ``"float8e5m2"``), a numpy/ml_dtypes name (``"float32"``, ``"float8_e5m2"``) or a numpy dtype.

    Raises:
        KeyError: unknown name or dtype.
    """
    if isinstance(name_or_dtype, str):
        name = name_or_dtype
        if name.startswith("tensor(") and name.endswith(")"):
            name = name[len("tensor(") : -1]
        return _BY_NAME[name]
    dt = np.dtype(name_or_dtype)
    for k, v in _NP.items():
        if v == dt:
            return k
    raise KeyError(f"no ONNX element type for numpy dtype {dt}")


def is_float(elem_type_or_dtype: int | np.dtype | type) -> bool:
    """True for the floating types this project knows (:data:`FLOAT_TYPES` and
    :data:`FLOAT8_TYPES`), given as an ONNX element type or a numpy dtype; False otherwise
    (integers, bool, unknown element types)."""
    if isinstance(elem_type_or_dtype, (int, np.integer)):
        return int(elem_type_or_dtype) in FLOAT_TYPES or int(elem_type_or_dtype) in FLOAT8_TYPES
    try:
        return elem_type(elem_type_or_dtype) in FLOAT_TYPES + FLOAT8_TYPES
    except (KeyError, TypeError):
        return False


def is_float8(elem_type_or_dtype: int | np.dtype | type) -> bool:
    """True for the four float8 types (ONNX element type or numpy dtype)."""
    if isinstance(elem_type_or_dtype, (int, np.integer)):
        return int(elem_type_or_dtype) in FLOAT8_TYPES
    try:
        return np.dtype(elem_type_or_dtype) in _FLOAT8_DTYPES
    except TypeError:
        return False


def _dtype_of(elem_type_or_dtype: int | np.dtype) -> np.dtype:
    if isinstance(elem_type_or_dtype, (int, np.integer)):
        return np_dtype(int(elem_type_or_dtype))
    return np.dtype(elem_type_or_dtype)


def eps(elem_type_or_dtype: int | np.dtype) -> float:
    """Machine epsilon (distance from 1.0 to the next representable value) as a Python float.

    float8: 0.125 (e4m3 types), 0.25 (e5m2 types).

    Raises:
        KeyError: an unknown ONNX element type; ValueError: a non-float numpy dtype.
    """
    return float(ml_dtypes.finfo(_dtype_of(elem_type_or_dtype)).eps)


def finfo(elem_type_or_dtype: int | np.dtype):
    """``ml_dtypes.finfo`` (works for bfloat16, the float8 types and the numpy float types):
    ``.max``, ``.eps``, ``.smallest_normal``, ``.smallest_subnormal``...

    Raises:
        KeyError: an unknown ONNX element type; ValueError: a non-float numpy dtype.
    """
    return ml_dtypes.finfo(_dtype_of(elem_type_or_dtype))


def _round_to_odd_float32(x: np.ndarray) -> np.ndarray:
    """float64 -> float32 rounded *to odd*: truncated towards zero, last bit set if inexact.

    Shapes are kept (0-d included).  NaN and infinities pass unchanged; a finite value beyond
    float32's range becomes +-FLT_MAX with the (already odd) last bit, so a later narrower
    rounding still overflows.
    """
    x = np.asarray(x, dtype=np.float64)
    with np.errstate(over="ignore", invalid="ignore"):
        f = x.astype(np.float32)  # round-to-nearest-even
        fin = np.isfinite(x)
        away = fin & (np.abs(f.astype(np.float64)) > np.abs(x))
        f = np.where(away, np.nextafter(f, np.float32(0)), f).astype(np.float32)
        inexact = fin & (f.astype(np.float64) != x)
    bits = np.asarray(f).view(np.uint32) | inexact.astype(np.uint32)
    return bits.view(np.float32)


def round_to(x: np.ndarray, elem_type: int) -> np.ndarray:
    """Round a (float64) array to the element type, round-to-nearest-even.

    float8 types: correctly rounded from float64 (round to odd in float32, then
    round-to-nearest-even to float8; module docstring), overflow to NaN / inf as the module
    docstring says (no saturation).  bfloat16 goes through ml_dtypes, which rounds correctly
    from float32; we first round float64 -> float32, which can double-round only in the last
    bit of ties that a float64 oracle practically never produces.  Other types: numpy's cast.

    Raises:
        KeyError: an element type this project does not know.
    """
    dt = np_dtype(elem_type)
    x = np.asarray(x)
    if dt in _FLOAT8_DTYPES:
        with np.errstate(over="ignore", invalid="ignore"):
            return _round_to_odd_float32(x.astype(np.float64)).astype(dt)
    if dt == np.dtype(ml_dtypes.bfloat16):
        return x.astype(np.float32).astype(dt)
    return x.astype(dt)
