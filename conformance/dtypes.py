"""Element types: ONNX ``TensorProto`` data types <-> numpy dtypes, names, kinds, rounding.

Every element type the ONNX schemas use (``onnx.defs`` type constraints; ONNX ``docs/IR.md``,
"Tensor Element Types") is known here: :data:`ALL_TYPES`, the 28 values of
``onnx.TensorProto.DataType`` other than ``UNDEFINED``.  Nothing below is a hand-kept table
of types: the numpy dtype of each comes from onnx's own table
(``onnx.helper.tensor_dtype_to_np_dtype``), its spec name from the enum name
(``TensorProto.FLOAT8E4M3FN`` -> ``"float8e4m3fn"``, the spelling ``tensor(...)`` type
constraints use), and its kind (float, signed / unsigned integer, bool, string, complex)
and bit width from the numpy dtype and ``ml_dtypes.finfo`` / ``ml_dtypes.iinfo``.

numpy representation (onnx's ``numpy_helper`` convention):

* float16, float, double, the integer types of 8 bits or more, bool, complex64,
  complex128: numpy's own dtypes;
* bfloat16, the float8 types, float8e8m0, float4e2m1, float6e2m3, float6e3m2, int4, uint4,
  int2, uint2: ``ml_dtypes`` (``bfloat16``, ``float8_e4m3fn``, ``float8_e8m0fnu``,
  ``float4_e2m1fn``, ``float6_e2m3fn``, ``float6_e3m2fn``, ``int4``, ``uint2``...), one
  element per byte in memory (the low bits; a ``TensorProto`` packs them, see
  :data:`SUBBYTE_TYPES`);
* string: a numpy ``object`` array of Python ``str`` (``bytes`` are accepted where onnx
  accepts them; reading a ``TensorProto`` back gives ``str``).

Groups (tuples of ONNX element types, in ``TensorProto.DataType`` order):

* :data:`FLOAT_TYPES`: the four IEEE-like types every generator produces (float16,
  bfloat16, float, double);
* :data:`FLOAT8_TYPES`: the four 8-bit types of ONNX IR 9 (opset 19+).  Only generators
  that opt in produce them (Dropout-22).  float8e8m0 is *not* one of them (it is an
  exponent-only scale type, IR 11): see :data:`ALL_FLOAT_TYPES`;
* :data:`ALL_FLOAT_TYPES`: every real floating type (12: the above, float8e8m0,
  float4e2m1, float6e2m3, float6e3m2);
* :data:`INT_TYPES` (12: int2 ... int64, uint2 ... uint64), :data:`UNSIGNED_TYPES`,
  :data:`COMPLEX_TYPES`, and bool and string on their own;
* :data:`SUBBYTE_TYPES`: types narrower than a byte (int4, uint4, float4e2m1: two per
  byte; int2, uint2: four per byte; float6e2m3, float6e3m2: four per three bytes), which
  ``onnx.numpy_helper.from_array`` packs into ``raw_data`` (first element in the low bits,
  zero padding at the end; onnx ``docs/docsgen/source/technical/int4.md``, ``float4.md``,
  ``float6.md``).

Small float formats (ONNX ``docs/Float8.md`` and the ``float4.md`` / ``float6.md``
technical notes; ``E`` exponent bits, ``M`` mantissa bits):

=================  ==  ==  ======  ==========  ==================  =====  ==  =====================
type               E   M   max     min normal  min subnormal       inf    -0  NaN
=================  ==  ==  ======  ==========  ==================  =====  ==  =====================
float8e4m3fn       4   3   448     2^-6        2^-9                no     yes ``S.1111.111`` (2)
float8e4m3fnuz     4   3   240     2^-7        2^-10               no     no  ``1.0000.000`` only
float8e5m2         5   2   57344   2^-14       2^-16               yes    yes IEEE-like (several)
float8e5m2fnuz     5   2   57344   2^-15       2^-17               no     no  ``1.00000.00`` only
float8e8m0         8   0   2^127   2^-127      none                no     no  ``0xFF`` only; no sign, no zero
float4e2m1         2   1   6       1           0.5                 no     yes none
float6e2m3         2   3   7.5     1           0.125               no     yes none
float6e3m2         3   2   28      0.25        0.0625              no     yes none
=================  ==  ==  ======  ==========  ==================  =====  ==  =====================

Rounding (:func:`round_to`) is round-to-nearest-even from float64, correctly rounded
(one rounding).  ``ml_dtypes`` itself converts float64 -> float8 *through float32*
(two roundings: ``1 + 2**-4 + 2**-30`` becomes 1.0 in float8e4m3fn instead of 1.125), so
:func:`round_to` first rounds float64 to float32 *to odd* (truncate, then set the last
bit if anything was lost), which makes the second, round-to-nearest-even step
float32 -> float8 give the correctly rounded result (float32 has far more than two bits
beyond any float8 mantissa).  The same two steps serve float4e2m1 and the float6 types.

Overflow of the float8 types follows ``ml_dtypes`` (the ONNX ``Cast`` with
``saturate=0``; there is no saturation here): a value that rounds beyond the largest
finite value (``|x| > 464`` for float8e4m3fn, ``>= 248`` for float8e4m3fnuz,
``>= 61440`` for both e5m2 types; ties to even go up where the largest finite value has an
odd mantissa) becomes NaN for float8e4m3fn and the two fnuz types (they have no
infinity) and +-inf for float8e5m2; infinities map likewise (NaN, NaN, +-inf, NaN).
The fnuz types have no negative zero: -0.0 and negative values that round to zero
become +0, and every NaN (whatever its sign or payload) becomes the single NaN
``0x80``.  float8e4m3fn keeps the sign of NaN (``0x7f`` / ``0xff``).  For ``Cast`` with
``saturate=1`` (the default), clip to ``+-finfo(t).max`` first: rounding is monotonic
and the bound is representable, so this gives the saturating table of the ``Cast``
operator (+-inf -> +-max, NaN stays NaN).

float4e2m1, float6e2m3, float6e3m2 have neither infinities nor NaN: values beyond the
largest finite value *saturate* to +-max (also +-inf), as both ``ml_dtypes`` and the ONNX
notes (``float4.md``, ``float6.md``: "Downcasting RNE with saturation") do.  NaN becomes
**+max** (6, 7.5, 28), as the ONNX notes' tables say; ``ml_dtypes`` instead gives -0 for
NaN, so :func:`round_to` does not leave that to it.  -0.0 stays -0 (the sign is kept, as
``float4.md`` says "+/-0 -> +/-0"; ``float6.md`` has an example row "-0.0 -> 0.0" that
contradicts its own "+/-0: 0x00 / 0x20" row; -0 == 0 numerically anyway).

float8e8m0 (exponent only, ``2**(bits - 127)``, bits 0..254; 255 is NaN) has three
rounding modes, ``Cast``'s ``round_mode`` attribute (Cast-24+): ``"up"`` (the ``Cast``
default: the smallest power of two >= x), ``"down"`` (the largest power of two <= x) and
``"nearest"`` (nearest power of two, ties -- x = 1.5 * 2**k -- up).  :func:`round_to`
defaults to ``"nearest"``, which is what ``ml_dtypes``' own cast does; it computes directly
from float64 (``frexp``), so it is exact for every float64.  (``ml_dtypes`` 0.6 differs in one
place: it rounds the float32 subnormals in (2**-127, 1.5 * 2**-127) up to 2**-126, although
2**-127 is nearer; onnx's reference ``numpy_helper.to_float8e8m0`` does the same.)  Without saturation (the
table column "non-saturate + nearest" of ``Cast``): NaN, +-inf, 0, -0 and negative values
(unspecified by the spec) become NaN, as in ``ml_dtypes``; a result above 2**127 becomes
NaN; a positive value below 2**-127 becomes 2**-127 in the modes "nearest" and "up" (the
nearest / next representable value; ``ml_dtypes`` and onnx's reference ``to_float8e8m0``
agree; the ``Cast`` table lists NaN for "x < E8M0_MIN" there) and NaN in mode "down" (no
representable value at or below it).  For ``saturate=1`` clip to
``[finfo(t).min, finfo(t).max]`` = ``[2**-127, 2**127]`` first: 0 and tiny values give
2**-127, inf and huge values 2**127, as the table's "saturate + up" column says.

bfloat16 keeps its historical path (float64 -> float32 -> bfloat16, each
round-to-nearest-even), which can double-round only in the last bit of ties that a float64
oracle practically never produces; it is left so, so that existing cases keep their bytes.

Integer, bool and complex targets use numpy's / ``ml_dtypes``' cast: float -> integer
truncates towards zero, an integer out of range wraps (two's complement, as ``Cast``
specifies for fixed -> fixed; float -> fixed out of range is undefined in ``Cast``);
anything nonzero (NaN included) -> True; complex rounds each part to nearest even.
"""

from __future__ import annotations

import ml_dtypes
import numpy as np
from onnx import TensorProto, helper


def _onnx_types() -> tuple[int, ...]:
    """Every ``TensorProto.DataType`` value onnx maps to a numpy dtype (all but UNDEFINED)."""
    out = []
    for t in sorted(int(v) for v in TensorProto.DataType.values()):
        if t == TensorProto.UNDEFINED:
            continue
        try:
            helper.tensor_dtype_to_np_dtype(t)
        except (KeyError, ValueError):
            continue
        out.append(t)
    return tuple(out)


#: Every element type: the ``TensorProto.DataType`` values other than ``UNDEFINED``
#: (28 with onnx 1.23; the same set the schemas' type constraints name), in enum order.
ALL_TYPES: tuple[int, ...] = _onnx_types()

#: ONNX element type -> numpy dtype (onnx's own table).
_NP = {t: np.dtype(helper.tensor_dtype_to_np_dtype(t)) for t in ALL_TYPES}

#: ONNX element type -> the name the spec uses inside ``tensor(...)`` (the enum name in lower case).
_NAME = {t: TensorProto.DataType.Name(t).lower() for t in ALL_TYPES}
_BY_NAME = {v: k for k, v in _NAME.items()}
# numpy / ml_dtypes spellings: "float32", "float64", "float8_e4m3fn", "float4_e2m1fn", "int4", "object"...
for _t, _dt in _NP.items():
    _BY_NAME.setdefault(str(_dt), _t)


def _kind_bits(dt: np.dtype) -> tuple[str, int]:
    """(numpy-style kind letter ``f i u b c O``, bits per element) of an element dtype."""
    if dt.isbuiltin != 2:  # numpy's own dtypes (2: a user-defined one, i.e. ml_dtypes')
        return dt.kind, dt.itemsize * 8
    try:  # ml_dtypes integers (int4, uint2...)
        info = ml_dtypes.iinfo(dt)
        return ("i" if info.min < 0 else "u"), int(info.bits)
    except (ValueError, TypeError):
        return "f", int(ml_dtypes.finfo(dt).bits)  # ml_dtypes floats (bfloat16, float8...)


_KIND = {t: _kind_bits(dt)[0] for t, dt in _NP.items()}
_BITS = {t: _kind_bits(dt)[1] for t, dt in _NP.items()}

#: The four IEEE-like float types every generator and reference produces.  Do not add
#: float8 here: generators iterate over this tuple.
FLOAT_TYPES = (TensorProto.FLOAT16, TensorProto.BFLOAT16, TensorProto.FLOAT, TensorProto.DOUBLE)

#: The four float8 types (ONNX IR 9, opset 19+), generated only where a generator opts in.
#: float8e8m0 is not among them (see :data:`ALL_FLOAT_TYPES`).
FLOAT8_TYPES = (TensorProto.FLOAT8E4M3FN, TensorProto.FLOAT8E4M3FNUZ, TensorProto.FLOAT8E5M2,
                TensorProto.FLOAT8E5M2FNUZ)

#: Every real floating type (12): :data:`FLOAT_TYPES`, :data:`FLOAT8_TYPES`, float8e8m0,
#: float4e2m1, float6e2m3, float6e3m2.
ALL_FLOAT_TYPES: tuple[int, ...] = tuple(t for t in ALL_TYPES if _KIND[t] == "f")

#: Every integer type (12), signed and unsigned, 2 to 64 bits (not bool).
INT_TYPES: tuple[int, ...] = tuple(t for t in ALL_TYPES if _KIND[t] in "iu")

#: The unsigned integer types (uint2, uint4, uint8, uint16, uint32, uint64).
UNSIGNED_TYPES: tuple[int, ...] = tuple(t for t in ALL_TYPES if _KIND[t] == "u")

#: complex64 and complex128.
COMPLEX_TYPES: tuple[int, ...] = tuple(t for t in ALL_TYPES if _KIND[t] == "c")

#: Types narrower than a byte, packed in a ``TensorProto`` (int4, uint4, float4e2m1, int2,
#: uint2, float6e2m3, float6e3m2).  numpy / ml_dtypes hold them one per byte.
SUBBYTE_TYPES: tuple[int, ...] = tuple(t for t in ALL_TYPES if _BITS[t] < 8)

_FLOAT8_DTYPES = frozenset(_NP[t] for t in FLOAT8_TYPES)


def _has(dt: np.dtype, special: float) -> bool:
    """Whether ``dt`` can hold ``special`` (NaN or inf): ml_dtypes' own conversion says."""
    with np.errstate(over="ignore", invalid="ignore"):
        back = np.array(special, dtype=np.float32).astype(dt).astype(np.float32)
    return bool(np.isnan(back) if np.isnan(special) else np.isinf(back))


#: Narrow floats rounded through float32-to-odd: float8 (4), float4e2m1, float6e2m3, float6e3m2.
_NARROW_FLOATS = frozenset(t for t in ALL_FLOAT_TYPES if _BITS[t] <= 8 and t != TensorProto.FLOAT8E8M0)
#: Those of them without NaN (float4e2m1, float6e2m3, float6e3m2): NaN -> +max.
_NO_NAN = frozenset(t for t in _NARROW_FLOATS if not _has(_NP[t], float("nan")))
_E8M0_MODES = ("nearest", "up", "down")


def np_dtype(elem_type: int) -> np.dtype:
    """numpy dtype for an ONNX element type (``onnx.helper.tensor_dtype_to_np_dtype``):
    ``float32`` for ``TensorProto.FLOAT``, ``ml_dtypes.int4`` for ``INT4``, ``object`` for
    ``STRING`` (arrays of Python ``str``)...

    Raises:
        KeyError: ``UNDEFINED`` or a value that is not an ONNX element type.
    """
    try:
        return _NP[elem_type]
    except (KeyError, TypeError):
        raise KeyError(f"unsupported ONNX element type {elem_type}") from None


def type_name(elem_type: int) -> str:
    """Spec name of an element type, as in ``tensor(...)`` type constraints:
    ``TensorProto.FLOAT`` -> ``"float"``, ``DOUBLE`` -> ``"double"``, ``FLOAT8E4M3FN`` ->
    ``"float8e4m3fn"``, ``FLOAT8E8M0`` -> ``"float8e8m0"``, ``INT4`` -> ``"int4"``,
    ``STRING`` -> ``"string"``...

    Raises:
        KeyError: ``UNDEFINED`` or a value that is not an ONNX element type.
    """
    return _NAME[elem_type]


def elem_type(name_or_dtype: str | np.dtype | type) -> int:
    """ONNX element type from a spec name (``"float16"``, ``"tensor(float)"``,
    ``"float8e5m2"``, ``"int4"``, ``"string"``), a numpy/ml_dtypes name (``"float32"``,
    ``"float8_e5m2"``, ``"float4_e2m1fn"``, ``"object"``) or a numpy dtype (an ``object``
    or ``str`` dtype gives ``STRING``, as in ``onnx.helper.np_dtype_to_tensor_dtype``).

    Raises:
        KeyError: unknown name or dtype.
    """
    if isinstance(name_or_dtype, str):
        name = name_or_dtype
        if name.startswith("tensor(") and name.endswith(")"):
            name = name[len("tensor(") : -1]
        return _BY_NAME[name]
    dt = np.dtype(name_or_dtype)
    try:
        return int(helper.np_dtype_to_tensor_dtype(dt))
    except (KeyError, ValueError, TypeError):
        raise KeyError(f"no ONNX element type for numpy dtype {dt}") from None


def _elem_or_none(elem_type_or_dtype) -> int | None:
    if isinstance(elem_type_or_dtype, (int, np.integer)):
        return int(elem_type_or_dtype)
    try:
        return elem_type(elem_type_or_dtype)
    except (KeyError, TypeError):
        return None


def is_float(elem_type_or_dtype: int | np.dtype | type) -> bool:
    """True for the real floating types (:data:`ALL_FLOAT_TYPES`: float16, bfloat16, float,
    double, the float8 types, float8e8m0, float4e2m1, float6e2m3, float6e3m2), given as an
    ONNX element type, a name or a numpy dtype; False otherwise (integers, bool, string,
    complex, unknown element types)."""
    return _elem_or_none(elem_type_or_dtype) in ALL_FLOAT_TYPES


def is_float8(elem_type_or_dtype: int | np.dtype | type) -> bool:
    """True for the four float8 types of :data:`FLOAT8_TYPES` (ONNX element type, name or numpy
    dtype); False for float8e8m0 and everything else."""
    return _elem_or_none(elem_type_or_dtype) in FLOAT8_TYPES


def is_int(elem_type_or_dtype: int | np.dtype | type) -> bool:
    """True for the integer types (:data:`INT_TYPES`: int2, int4, int8 ... int64 and the
    unsigned ones), given as an ONNX element type, a name or a numpy dtype; False for bool."""
    return _elem_or_none(elem_type_or_dtype) in INT_TYPES


def is_unsigned(elem_type_or_dtype: int | np.dtype | type) -> bool:
    """True for the unsigned integer types (:data:`UNSIGNED_TYPES`); False for bool."""
    return _elem_or_none(elem_type_or_dtype) in UNSIGNED_TYPES


def is_bool(elem_type_or_dtype: int | np.dtype | type) -> bool:
    """True for ``TensorProto.BOOL`` (or numpy ``bool``)."""
    return _elem_or_none(elem_type_or_dtype) == TensorProto.BOOL


def is_string(elem_type_or_dtype: int | np.dtype | type) -> bool:
    """True for ``TensorProto.STRING`` (or a numpy ``object`` / ``str`` dtype)."""
    return _elem_or_none(elem_type_or_dtype) == TensorProto.STRING


def is_complex(elem_type_or_dtype: int | np.dtype | type) -> bool:
    """True for complex64 and complex128 (:data:`COMPLEX_TYPES`)."""
    return _elem_or_none(elem_type_or_dtype) in COMPLEX_TYPES


def is_subbyte(elem_type_or_dtype: int | np.dtype | type) -> bool:
    """True for the types narrower than a byte (:data:`SUBBYTE_TYPES`: int4, uint4,
    float4e2m1, int2, uint2, float6e2m3, float6e3m2), which a ``TensorProto`` packs."""
    return _elem_or_none(elem_type_or_dtype) in SUBBYTE_TYPES


def bit_width(elem_type: int) -> int:
    """Bits per element: 2, 4, 6, 8, 16, 32, 64 or 128 (complex128); 8 for bool (one byte
    in a ``TensorProto``).

    Raises:
        KeyError: ``STRING`` (variable length), ``UNDEFINED`` or not an element type.
    """
    if elem_type == TensorProto.STRING:
        raise KeyError("string elements have no fixed width")
    np_dtype(elem_type)  # KeyError for unknown types
    return _BITS[elem_type]


def _dtype_of(elem_type_or_dtype: int | np.dtype) -> np.dtype:
    if isinstance(elem_type_or_dtype, (int, np.integer)):
        return np_dtype(int(elem_type_or_dtype))
    return np.dtype(elem_type_or_dtype)


def eps(elem_type_or_dtype: int | np.dtype) -> float:
    """Machine epsilon (distance from 1.0 to the next representable value) as a Python float.

    float8: 0.125 (e4m3 types), 0.25 (e5m2 types); float8e8m0: 1.0; float4e2m1: 0.5;
    float6e2m3: 0.125; float6e3m2: 0.25.  complex64 / complex128: that of float / double.

    Raises:
        KeyError: an unknown ONNX element type; ValueError: a non-float numpy dtype.
    """
    return float(ml_dtypes.finfo(_dtype_of(elem_type_or_dtype)).eps)


def finfo(elem_type_or_dtype: int | np.dtype):
    """``ml_dtypes.finfo`` (works for bfloat16, every small float type and the numpy float
    types): ``.max``, ``.min``, ``.eps``, ``.smallest_normal``, ``.smallest_subnormal``...
    For float8e8m0 ``.min`` is the smallest value, 2**-127 (the type has no sign and no zero).

    Raises:
        KeyError: an unknown ONNX element type; ValueError: a non-float numpy dtype.
    """
    return ml_dtypes.finfo(_dtype_of(elem_type_or_dtype))


def iinfo(elem_type_or_dtype: int | np.dtype):
    """``ml_dtypes.iinfo`` (``numpy.iinfo`` semantics) of an integer type, the 4- and
    2-bit ones included: ``.min``, ``.max``, ``.bits`` (int2: -2..1, uint2: 0..3, int4:
    -8..7, uint4: 0..15).

    Raises:
        KeyError: an unknown ONNX element type; ValueError: not an integer type (bool,
            floats, complex, string).
    """
    dt = _dtype_of(elem_type_or_dtype)
    if dt.kind == "O":
        raise ValueError(f"{dt} is not an integer type")
    return ml_dtypes.iinfo(dt)


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


def _round_e8m0(x: np.ndarray, round_mode: str) -> np.ndarray:
    """float64 -> float8e8m0 (module docstring), exact: ``frexp`` gives x = m * 2**e with
    0.5 <= m < 1, so 2**(e-1) <= x < 2**e."""
    x = np.asarray(x, dtype=np.float64)
    with np.errstate(invalid="ignore"):
        m, e = np.frexp(x)
        k = e.astype(np.int64) - 1  # floor(log2(x)) for finite x > 0
        if round_mode == "nearest":
            k = k + (m >= 0.75)  # x >= 1.5 * 2**k: ties go up
        elif round_mode == "up":
            k = k + (m > 0.5)  # not a power of two
        biased = k + 127
        if round_mode != "down":
            biased = np.maximum(biased, 0)  # below 2**-127: the next value up is 2**-127
        ok = np.isfinite(x) & (x > 0) & (biased >= 0) & (biased <= 254)
    bits = np.where(ok, biased, 255).astype(np.uint8)
    return bits.view(_NP[TensorProto.FLOAT8E8M0])


def round_to(x: np.ndarray, elem_type: int, *, round_mode: str = "nearest") -> np.ndarray:
    """Round a (float64) array to the element type; same shape (0-d included), dtype
    :func:`np_dtype` of the type.

    * float8, float4e2m1, float6e2m3, float6e3m2: round-to-nearest-even, correctly rounded
      from float64 (round to odd in float32, then round-to-nearest-even; module docstring);
      float8 overflow gives NaN / inf (no saturation), float4/float6 saturate and give +max
      for NaN (module docstring).
    * float8e8m0: ``round_mode`` ``"nearest"`` (default; ties up), ``"up"`` or ``"down"``,
      the ``Cast`` attribute; exact from float64; NaN for non-positive, non-finite and
      overflowing values (module docstring).
    * bfloat16 goes through ml_dtypes, which rounds correctly from float32; we first round
      float64 -> float32, which can double-round only in the last bit of ties that a float64
      oracle practically never produces.
    * float16, float, double, complex: numpy's cast (round-to-nearest-even).
    * integers and bool: numpy's / ml_dtypes' cast (truncation, wrap-around, nonzero -> True).

    Clip to ``finfo(t).min`` / ``.max`` first for ``Cast`` with ``saturate=1``.

    Raises:
        KeyError: not an element type.
        TypeError: ``STRING`` (there is nothing to round).
        ValueError: ``round_mode`` other than ``"nearest"`` for a type other than float8e8m0,
            or not one of ``"nearest"``, ``"up"``, ``"down"``.
    """
    dt = np_dtype(elem_type)
    if elem_type == TensorProto.STRING:
        raise TypeError("round_to: string is not a numeric type")
    if round_mode not in _E8M0_MODES or (round_mode != "nearest" and elem_type != TensorProto.FLOAT8E8M0):
        raise ValueError(f"round_mode {round_mode!r} is not valid for {type_name(elem_type)}; "
                         f"float8e8m0 takes {_E8M0_MODES}, other types only 'nearest'")
    x = np.asarray(x)
    if elem_type == TensorProto.FLOAT8E8M0:
        return _round_e8m0(x, round_mode)
    if dt in _FLOAT8_DTYPES:
        with np.errstate(over="ignore", invalid="ignore"):
            return _round_to_odd_float32(x.astype(np.float64)).astype(dt)
    if elem_type in _NARROW_FLOATS:  # float4e2m1, float6e2m3, float6e3m2
        x64 = x.astype(np.float64)
        with np.errstate(over="ignore", invalid="ignore"):
            y = _round_to_odd_float32(x64).astype(dt)
        if elem_type in _NO_NAN:
            y = np.where(np.isnan(x64), np.array(finfo(dt).max, dtype=dt), y).astype(dt)
        return y
    if dt == np.dtype(ml_dtypes.bfloat16):
        return x.astype(np.float32).astype(dt)
    return x.astype(dt)


# ----------------------------------------------------------------------------- canonical NaN
def _canonical_nan(dt: np.dtype) -> np.generic:
    """The canonical quiet NaN of an IEEE-like binary type ``dt``: sign 0, exponent all ones,
    the significand's leading (quiet) bit set and every other bit 0 (float16 ``0x7e00``,
    bfloat16 ``0x7fc0``, float ``0x7fc00000``, double ``0x7ff8000000000000``), from
    ``finfo``'s exponent and mantissa widths."""
    fi = finfo(dt)
    bits = ((1 << fi.nexp) - 1) << fi.nmant | 1 << (fi.nmant - 1)
    return np.array(bits, dtype=f"u{dt.itemsize}").view(dt)[()]


#: The element types whose NaNs :func:`canonical_nans` makes one: the IEEE-like
#: :data:`FLOAT_TYPES` and complex64 / complex128 (each part), where NaNs of any sign and payload
#: mean one value and arithmetic leaves the sign and payload unspecified (IEEE 754-2019 6.2.3,
#: 6.3).  Not the float8, float8e8m0, float4 and float6 types: a float8 type has one NaN encoding
#: (fnuz, e8m0), two that the conversion tables tell apart by sign (e4m3fn), or several (e5m2),
#: and a float4 / float6 type none; their results come from :func:`round_to` of values, not from
#: a machine's loops.
CANONICAL_NAN_TYPES: tuple[int, ...] = FLOAT_TYPES + COMPLEX_TYPES

_CANONICAL_NAN = {_NP[t]: _canonical_nan(_NP[t]) for t in FLOAT_TYPES}


def canonical_nans(a: np.ndarray) -> np.ndarray:
    """``a`` with every NaN made the canonical quiet NaN of its dtype (positive, the default
    quiet payload: :func:`_canonical_nan`), for the types of :data:`CANONICAL_NAN_TYPES` (a
    complex element's real and imaginary parts each); every other element and every other
    dtype bit for bit as it is.

    Args:
        a: an array of any dtype and shape (0-d included).

    Returns:
        ``a`` itself where there is nothing to change (no NaN, or a dtype not canonicalised),
        else a new array of ``a``'s dtype and shape (``a`` is never written to).
    """
    a = np.asarray(a)
    dt = a.dtype
    if dt.kind == "c" and _elem_or_none(dt) in CANONICAL_NAN_TYPES:
        if not np.isnan(a).any():  # either part NaN
            return a
        out = a.copy()
        out.real, out.imag = canonical_nans(a.real), canonical_nans(a.imag)  # element copies: bits kept
        return out
    nan = _CANONICAL_NAN.get(dt)
    if nan is None:
        return a
    mask = np.isnan(a)
    if not mask.any():
        return a
    out = a.copy()
    out[mask] = nan
    return out
