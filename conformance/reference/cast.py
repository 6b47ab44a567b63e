"""Oracle of ai.onnx Cast (1, 6, 9, 13, 19, 21, 23, 24, 25, 28) and CastLike (15, 19, 21, 23, 24,
25): every element conversion the text defines, which elements it leaves undefined, and a
set-valued check of numeric -> string results.

Definitional decisions (``onnx.defs.get_schema("Cast", v).doc``, quoted as "the text"):

* **Exact values in, one rounding out.**  A source element is an exact value (a float64 that
  is exactly the fed value, a Python int, a bool, a string); the result is that value rounded
  *once* to the target: round to nearest, ties to even, for every floating target (the float8
  tables say "RNE" of ``[x]``, "the value rounded to the target mantissa width"; for float16,
  bfloat16, float and double it is IEEE 754's correctly rounded ``convertFormat``).  A
  conversion through a wider intermediate type (double -> float -> float16) rounds twice and
  differs on values just above a tie: those values are in the suite.  The rounding is
  implemented by rounding to odd to 53 bits (integers and decimal strings), then to odd to
  24 bits, then to nearest even in the target (:func:`conformance.dtypes.round_to`), which
  is exact because every target but double has at most 24 significant bits (double targets
  round the exact value directly).
* **float -> float** (not float8): ``+/- infinity if OOR``; NaN stays NaN, the sign of zero
  is kept.  **fixed -> float**: the same (``+ infinity in the case of uint``).
* **float -> fixed**: truncation toward zero (the text names no rounding; C conversion, every
  runtime and onnx.reference truncate, and "converting string "100.5" to an integer may
  yield result 100" says the same); **undefined if OOR**, and NaN and infinities are
  undefined as well: never value cases.
* **fixed -> fixed**: "discard higher bits and reinterpret" (two's complement wrap), for
  every width (int2 ... uint64).  **-> bool**: zero (+-0.0) is False, anything else
  (NaN included: "all else to True") True.  **bool ->**: 1 / 0.
* **float8 targets** (19+): the two tables of the text.  ``saturate=1`` (default): NaN ->
  NaN, ``[x]`` beyond the largest finite value -> +-max; +-inf -> +-max, except for the
  fnuz types at versions 19-23, whose table says NaN (version 24 changed those two cells to
  +-FLT_MAX).  ``saturate=0``: ``[x]`` beyond the range and +-inf -> NaN (e4m3fn and both
  fnuz types) or +-inf (e5m2).  -0 -> 0 for the fnuz types (they have no -0).
* **float8e8m0 target** (24+): ``round_mode`` ``up`` (default: the smallest power of two
  >= x), ``down`` (the largest <= x), ``nearest`` (ties, ``1.5 * 2**k``, up).  With
  ``saturate=1`` results beyond ``2**127`` give ``2**127`` (+inf too) and below ``2**-127``
  give ``2**-127``; 0 gives ``2**-127`` (the table's "0" cell is the encoding 0x00, the
  only reading that agrees with its "x < E8M0_MIN -> E8M0_MIN" row: the type has no zero).
  With ``saturate=0`` NaN and +inf give NaN, and 0 too with ``nearest`` (the table's
  column); positive values in ``[2**-127, 2**127]`` round in range.  **Left open, never value
  cases**: negative values and -0 ("Unspecified"), positive values below ``2**-127`` without
  saturation (the table says NaN for "x < E8M0_MIN", rounding up or to nearest gives
  ``2**-127``), 0 without saturation in modes ``up`` and ``down`` (untabulated; rounding up
  gives ``2**-127``, an out-of-range reading NaN), and values above ``2**127``
  without saturation whose rounded value is ``2**127`` (``down``, and ``nearest`` below
  ``1.5 * 2**127``: the table says NaN for "x > E8M0_MAX").
* **float4e2m1 (23+), float6e2m3 and float6e3m2 (28) targets**: the text's "+/- infinity
  if OOR" cannot hold for types without infinities, and ``saturate`` "only applies for float
  8 conversion"; the ONNX technical notes (``docs/technical/float4.md``, ``float6.md``)
  define the cast: round to nearest even with saturation, +-inf -> +-max, NaN -> +max.  The
  sign of a zero result is contested for float6 (``float6.md`` lists "-0.0 -> 0.0" beside
  "+/-0: 0x00 / 0x20"): the entries do not check it there.
* **string -> number** (9+): plain and scientific numeric literals (``[+-]digits[.digits]
  [(e|E)[+-]digits]``) and the reserved ``+INF``/``INF``/``-INF``/``NaN``, case-insensitive,
  to floating types; the value is the literal's exact decimal value rounded once to the target
  (the suite's literals round identically through double or float, since the text states no
  precision for the parse).  To integer types only integer literals inside the target's range
  are values ("2.718" to INT is undefined; out of range is not stated).  The text defines no
  string -> bool conversion: the only value cases are positive integer literals, True under
  every reading (a number's truth, a string's non-emptiness).
* **number -> string**: "plain floating-point representation (such as "314.15926")" fixes no
  precision or format, so the result is **set-valued** (:func:`check_number_strings`): every
  element must parse (the text's literals) back to the source value -- rounded to the source
  type, for floating sources; exactly, for integers and bool (1 / 0) -- and NaN and +-inf
  must be the reserved literals.  The values are chosen so that 6 significant digits round
  trip (a ``%g`` formatting passes).
* **string -> string** is the identity.
"""

from __future__ import annotations

import math
import re
import struct
import sys
from fractions import Fraction

import numpy as np
from onnx import TensorProto

from .. import dtypes
from ..ops import values as V

#: The float8 types of the saturation tables (19+).
FLOAT8 = ("float8e4m3fn", "float8e4m3fnuz", "float8e5m2", "float8e5m2fnuz")
#: Exponent-only scale type (24+): round_mode and saturate.
E8M0 = "float8e8m0"
#: Types without infinities or NaN whose cast follows the ONNX technical notes (saturation).
NOTE_SATURATING = ("float4e2m1", "float6e2m3", "float6e3m2")
#: float6 targets: the sign of a zero result is contested.
ZERO_SIGN_CONTESTED = ("float6e2m3", "float6e3m2")
#: The largest / smallest float8e8m0 values.
E8M0_MAX, E8M0_MIN = 2.0**127, 2.0**-127
ROUND_MODES = ("up", "down", "nearest")

_LITERAL = re.compile(r"[+-]?(\d+(\.\d*)?|\.\d+)([eE][+-]?\d+)?")
_INT_LITERAL = re.compile(r"-?\d+")


# ----------------------------------------------------------------------------- strings
def parse_literal(s) -> Fraction | float:
    """The value of a string the text defines for string -> float: an exact ``Fraction`` for a
    plain or scientific numeric literal, ``inf``/``-inf``/``nan`` for the reserved literals
    (``+INF``, ``INF``, ``-INF``, ``NaN``, case-insensitive).

    Raises:
        ValueError: anything else (the text: undefined).
    """
    if isinstance(s, bytes):
        s = s.decode()
    up = s.upper()
    if up in ("INF", "+INF"):
        return math.inf
    if up == "-INF":
        return -math.inf
    if up == "NAN":
        return math.nan
    if not _LITERAL.fullmatch(s):
        raise ValueError(f"{s!r} is not a numeric literal")
    return Fraction(s)


def is_int_literal(s) -> bool:
    """Whether ``s`` is an integer literal (optional ``-``, digits): the strings the suite casts
    to integer types."""
    return isinstance(s, str) and bool(_INT_LITERAL.fullmatch(s))


# ----------------------------------------------------------------------------- exact rounding
def _odd53(q) -> float:
    """An exact value (int or Fraction) rounded to float64 *to odd* (truncated, last bit set
    when inexact); +-inf beyond the double range."""
    try:
        f = float(q)  # correctly rounded (to nearest even)
    except OverflowError:
        return math.inf if q > 0 else -math.inf
    if math.isinf(f) or Fraction(f) == q:
        return f
    if abs(Fraction(f)) > abs(Fraction(q)):
        f = math.nextafter(f, 0.0)
    bits = struct.unpack("<q", struct.pack("<d", f))[0] | 1
    return struct.unpack("<d", struct.pack("<q", bits))[0]


def _rne53(q) -> float:
    """An exact value rounded to nearest even float64 (+-inf beyond the range)."""
    try:
        return float(q)
    except OverflowError:
        return math.inf if q > 0 else -math.inf


def carrier(x: np.ndarray, src: str, *, rne: bool = False) -> np.ndarray:
    """float64 array carrying the source elements for a floating target: the exact value for
    floating sources, the value rounded to odd to 53 bits for integers and numeric strings
    (``rne``: to nearest even, for double targets), NaN/+-inf for the reserved strings, 1/0
    for bool."""
    k = V.kind(src)
    x = np.asarray(x)
    if k == V.FLOAT:
        return x.astype(np.float64)
    if k == V.BOOL:
        return x.astype(np.float64)
    fn = _rne53 if rne else _odd53
    out = np.empty(x.shape, dtype=np.float64)
    flat = out.reshape(-1)
    for i, v in enumerate(x.reshape(-1)):
        if k == V.STRING:
            v = parse_literal(v)
            flat[i] = v if isinstance(v, float) else fn(v)
        else:
            flat[i] = fn(int(v))
    return out


def _round_float(c: np.ndarray, dst: str, *, version: int, saturate: bool, round_mode: str) -> np.ndarray:
    """float64 carrier -> the target floating type's value (float64), by the rules of the module
    docstring."""
    with np.errstate(over="ignore", invalid="ignore"):
        if dst == "double":
            return c.copy()
        if dst in FLOAT8:
            fmax = float(V.finfo(dst).max)
            y = c
            if saturate:
                y = np.clip(c, -fmax, fmax)
                if dst.endswith("fnuz") and version < 24:  # the 19-23 table: +-inf -> NaN
                    y = np.where(np.isinf(c), np.nan, y)
            return V.round_float(y, dst).astype(np.float64)
        if dst == E8M0:
            y = np.clip(c, E8M0_MIN, E8M0_MAX) if saturate else c
            if saturate:
                y = np.where(np.isnan(c), np.nan, y)
            return dtypes.round_to(y, TensorProto.FLOAT8E8M0, round_mode=round_mode).astype(np.float64)
        if dst in NOTE_SATURATING:
            return V.round_float(c, dst).astype(np.float64)
        if dst == "float":
            return c.astype(np.float32).astype(np.float64)
        # float16, bfloat16: to odd at 24 bits, then to nearest even (exact)
        odd = dtypes._round_to_odd_float32(c)
        return odd.astype(V.np_dtype(dst)).astype(np.float64)


# ----------------------------------------------------------------------------- the oracle
def _exact_list(x: np.ndarray, src: str) -> list:
    """Source elements as exact Python values (float, int, bool, str), flat."""
    k = V.kind(src)
    flat = np.asarray(x).reshape(-1)
    if k == V.FLOAT:
        return [float(v) for v in flat.astype(np.float64)]
    if k == V.INT:
        return [int(v) for v in flat]
    if k == V.BOOL:
        return [bool(v) for v in flat]
    return [v.decode() if isinstance(v, bytes) else str(v) for v in flat]


def _wrap(v: int, dst: str) -> int:
    info = V.iinfo(dst)
    bits = int(info.bits)
    v %= 1 << bits
    return v - (1 << bits) if info.min < 0 and v > int(info.max) else v


def cast(x: np.ndarray, src: str, dst: str, *, version: int, saturate: bool = True,
         round_mode: str = "up") -> np.ndarray:
    """Cast the exact source elements ``x`` (any shape) from type ``src`` to type ``dst``.

    Returns the exact result (float64 for floating targets, an object array of Python ints for
    integer targets, bool, an object array of ``str`` for string -- a canonical formatting,
    judged set-valued by :func:`check_number_strings`).  Elements :func:`defined` rejects get
    an arbitrary value of the target (0, False, ``""``).

    Raises:
        KeyError / ValueError: an unknown type name.
    """
    x = np.asarray(x)
    ks, kd = V.kind(src), V.kind(dst)
    shape = x.shape
    if kd == V.FLOAT:
        ok = defined(x, src, dst, version=version, saturate=saturate, round_mode=round_mode)
        if ks == V.STRING:  # undefined strings are not parsed
            x = np.where(ok, x, "1").astype(object)
        c = np.where(ok, carrier(x, src, rne=dst == "double"), 1.0)
        return _round_float(c, dst, version=version, saturate=saturate, round_mode=round_mode)
    vals = _exact_list(x, src)
    if kd == V.STRING:
        out = np.empty(len(vals), dtype=object)
        out[:] = [v if ks == V.STRING else format_value(v, src) for v in vals]
        return out.reshape(shape)
    if kd == V.BOOL:
        if ks == V.STRING:
            res = [is_int_literal(v) and int(v) > 0 for v in vals]
        else:
            res = [bool(v != 0) or (isinstance(v, float) and math.isnan(v)) for v in vals]
        return np.array(res, dtype=bool).reshape(shape)
    # integer targets
    info = V.iinfo(dst)
    res = []
    for v in vals:
        if ks == V.FLOAT:
            r = int(math.trunc(v)) if math.isfinite(v) else 0
            res.append(r if info.min <= r <= info.max else 0)
        elif ks == V.STRING:
            r = int(v) if is_int_literal(v) else 0
            res.append(r if info.min <= r <= info.max else 0)
        else:
            res.append(_wrap(int(v), dst))
    out = np.empty(len(res), dtype=object)
    out[:] = res
    return out.reshape(shape)


def defined(x: np.ndarray, src: str, dst: str, *, version: int, saturate: bool = True,
            round_mode: str = "up") -> np.ndarray:
    """Bool mask (``x``'s shape): the elements whose cast the text defines (module docstring).

    Undefined: float -> fixed NaN, +-inf and truncated values outside the target; strings that
    are not the text's literals, non-integer or out-of-range literals to integer types, and
    anything but a positive integer literal to bool; float8e8m0 targets: negative values, -0,
    -inf, and without saturation positive values below ``2**-127`` or above ``2**127`` whose
    rounded value is in range.
    """
    x = np.asarray(x)
    ks, kd = V.kind(src), V.kind(dst)
    if ks == V.STRING and kd != V.STRING:
        vals = _exact_list(x, src)
        if kd == V.INT:
            info = V.iinfo(dst)
            ok = [is_int_literal(v) and info.min <= int(v) <= info.max for v in vals]
            return np.array(ok, dtype=bool).reshape(x.shape)
        if kd == V.BOOL:
            return np.array([is_int_literal(v) and int(v) > 0 for v in vals], dtype=bool).reshape(x.shape)
        ok = []
        for v in vals:
            try:
                parse_literal(v)
                ok.append(True)
            except ValueError:
                ok.append(False)
        ok = np.array(ok, dtype=bool).reshape(x.shape)
        if dst == E8M0:
            c = np.where(ok, carrier(np.where(ok, x, "1"), src), 1.0)
            ok &= _e8m0_defined(c, saturate, round_mode, signbit=np.array(
                [str(v).strip().startswith("-") for v in x.reshape(-1)], dtype=bool).reshape(x.shape))
        return ok
    if ks == V.FLOAT and kd == V.INT:
        c = x.astype(np.float64)
        info = V.iinfo(dst)
        with np.errstate(invalid="ignore"):
            t = np.trunc(c)
            # exact bounds: min is 0 or -2**(b-1), max + 1 a power of two (float(max) may round up)
            return np.isfinite(c) & (t >= float(int(info.min))) & (t < float(int(info.max) + 1))
    if dst == E8M0 and ks != V.STRING:
        c = carrier(x, src)
        return _e8m0_defined(c, saturate, round_mode, signbit=np.signbit(c))
    return np.ones(x.shape, dtype=bool)


def _e8m0_defined(c: np.ndarray, saturate: bool, round_mode: str, signbit: np.ndarray) -> np.ndarray:
    """Elements of the carrier ``c`` whose float8e8m0 cast the text defines (module docstring)."""
    with np.errstate(invalid="ignore"):
        nan = np.isnan(c)
        neg = ~nan & (signbit | (c < 0))
        ok = nan | ~neg
        if not saturate:
            tiny = ~nan & (c > 0) & (c < E8M0_MIN)
            if round_mode != "nearest":  # 0 is tabulated (NaN) only for non-saturate + nearest
                tiny |= ~nan & (c == 0)
            if round_mode == "down":
                high = ~nan & np.isfinite(c) & (c > E8M0_MAX)
            elif round_mode == "nearest":
                high = ~nan & np.isfinite(c) & (c > E8M0_MAX) & (c < 1.5 * E8M0_MAX)
            else:
                high = np.zeros(c.shape, dtype=bool)
            ok &= ~tiny & ~high
    return ok


# ----------------------------------------------------------------------------- number -> string
def format_value(v, src: str) -> str:
    """A canonical "plain" representation of a source element (the expected output stored for
    numeric -> string, which :func:`check_number_strings` judges set-valued): integers in
    decimal, bool as 1 / 0, floats as the shortest decimal that rounds back to the source value
    in double, ``NaN``, ``INF``, ``-INF``."""
    k = V.kind(src)
    if k == V.BOOL:
        return "1" if v else "0"
    if k == V.INT:
        return str(int(v))
    v = float(v)
    if math.isnan(v):
        return "NaN"
    if math.isinf(v):
        return "INF" if v > 0 else "-INF"
    return np.format_float_positional(v, unique=True, trim="-")


def _source_type(arr: np.ndarray) -> str:
    return dtypes.type_name(dtypes.elem_type(arr.dtype))


def check_number_strings(inputs: dict, outputs: dict, attrs: dict) -> tuple[bool, str]:
    """Judge a numeric -> string Cast/CastLike result set-valued (module docstring): the output
    has the input's shape and holds strings; each parses (:func:`parse_literal`) back to the
    source element -- rounded to nearest even in the source type for floating sources (NaN to
    NaN, +-inf to the same infinity), exactly for integers and bool (1 / 0).

    Returns:
        ``(passed, message)``.
    """
    x = np.asarray(inputs["input"])
    y = np.asarray(outputs["output"])
    if y.shape != x.shape:
        return False, f"output shape {list(y.shape)} != input shape {list(x.shape)}"
    src = _source_type(x)
    k = V.kind(src)
    exact = V.to_exact(x, src) if k != V.BOOL else x
    fmax = float(V.finfo(src).max) if k == V.FLOAT else 0.0
    for idx, (v, s) in enumerate(zip(np.asarray(exact).reshape(-1), y.reshape(-1))):
        if isinstance(s, bytes):
            s = s.decode()
        if not isinstance(s, str):
            return False, f"element {idx}: {s!r} is not a string"
        # the common case without a Fraction: a numeric literal whose correctly rounded double is
        # the source value itself, below the type's largest (the exact value then rounds to it in
        # every narrower type too: it lies within half a double ulp of it, the type's rounding
        # boundaries much further); an integer literal equal to the integer.  Anything else takes
        # the exact path below.
        if k == V.FLOAT:
            fv = float(v)
            if abs(fv) < fmax and _LITERAL.fullmatch(s) and float(s) == fv:
                continue
        elif _INT_LITERAL.fullmatch(s) and int(s) == (int(bool(v)) if k == V.BOOL else int(v)):
            continue
        try:
            p = parse_literal(s)
        except ValueError:
            if k == V.FLOAT and isinstance(s, str) and s.upper() in ("-NAN", "+NAN") and math.isnan(float(v)):
                continue  # the sign of a NaN is not part of its value
            return False, f"element {idx}: {s!r} (from {v!r}) is not a numeric literal or INF/NaN"
        if k == V.FLOAT:
            fv = float(v)
            if math.isnan(fv) or (isinstance(p, float) and (math.isnan(p) or math.isinf(p))):
                same = (math.isnan(fv) and isinstance(p, float) and math.isnan(p)) or (fv == p)
            else:
                back = float(_round_float(np.array([_odd53(p) if src != "double" else _rne53(p)]), src,
                                          version=28, saturate=False, round_mode="nearest")[0])
                same = back == fv
            if not same:
                return False, f"element {idx}: {s!r} does not parse back to the {src} value {fv!r}"
        else:
            want = int(bool(v)) if k == V.BOOL else int(v)
            if isinstance(p, float) or p != want:
                return False, f"element {idx}: {s!r} is not the value {want}"
    return True, f"{y.size} string(s) parse back to the source values"


__all__ = ["E8M0", "FLOAT8", "NOTE_SATURATING", "ROUND_MODES", "ZERO_SIGN_CONTESTED", "carrier", "cast",
           "check_number_strings", "defined", "format_value", "is_int_literal", "parse_literal"]


# ----------------------------------------------------------------------------- BitCast
#: The bit width of every type BitCast-26 admits (the storage width of one element: bool is a
#: byte, the 4- and 2-bit types their nibble or pair, complex both parts).
BIT_WIDTHS = {"uint2": 2, "int2": 2, "uint4": 4, "int4": 4, "float4e2m1": 4, "uint8": 8, "int8": 8, "bool": 8,
              "float8e4m3fn": 8, "float8e4m3fnuz": 8, "float8e5m2": 8, "float8e5m2fnuz": 8, "float8e8m0": 8,
              "uint16": 16, "int16": 16, "float16": 16, "bfloat16": 16, "uint32": 32, "int32": 32, "float": 32,
              "uint64": 64, "int64": 64, "double": 64, "complex64": 64, "complex128": 128}


def bits_of(arr, t: str) -> list[int]:
    """The bit pattern of every element of the typed array ``arr`` of type ``t`` (row-major),
    as Python ints of :data:`BIT_WIDTHS` bits, read little endian (the BitCast text: "treat
    the underlying bytes as little endian")."""
    a = np.ascontiguousarray(np.asarray(arr, dtype=V.np_dtype(t)))
    size = a.dtype.itemsize
    raw = np.frombuffer(a.tobytes(), dtype=np.uint8).reshape(-1, size) if a.size else np.zeros((0, size), np.uint8)
    if sys.byteorder != "little" and size > 1:
        raw = raw[:, ::-1]
    mask = (1 << BIT_WIDTHS[t]) - 1
    return [int.from_bytes(row.tobytes(), "little") & mask for row in raw]


def from_bits(bits, t: str, shape) -> np.ndarray:
    """An array of type ``t`` and ``shape`` whose elements have the bit patterns ``bits``
    (Python ints of the type's width, :func:`bits_of`'s inverse)."""
    dt = V.np_dtype(t)
    bits = [int(b) for b in bits]
    if BIT_WIDTHS[t] < 8 or t == "bool":
        return np.array(bits, dtype=np.uint8).view(dt).reshape(shape)
    size = dt.itemsize
    order = "little" if sys.byteorder == "little" else "big"
    buf = b"".join(b.to_bytes(size, order) for b in bits)
    return np.frombuffer(buf, dtype=dt).copy().reshape(shape)


def bitcast(x, src: str, dst: str) -> np.ndarray:
    """BitCast-26: the elements of ``x`` (the oracle's exact values of type ``src``, made the
    typed array a backend is fed) reinterpreted as ``dst``, bit for bit (NaN payloads, signalling
    NaNs and the sign of zero included).  Returns the *typed* ``dst`` array (its bits are the
    result; the engine keeps an array already of the output type as it is).

    Raises:
        ValueError: ``src`` and ``dst`` of different bit widths ("The target data type must have
            the same bit-width as the input data type"), a string type.
    """
    if src not in BIT_WIDTHS or dst not in BIT_WIDTHS:
        raise ValueError(f"BitCast: {src} -> {dst}: string is not supported")
    if BIT_WIDTHS[src] != BIT_WIDTHS[dst]:
        raise ValueError(f"BitCast: {src} ({BIT_WIDTHS[src]} bits) -> {dst} ({BIT_WIDTHS[dst]} bits)")
    fed = V.to_type(np.asarray(x), src)
    return from_bits(bits_of(fed, src), dst, fed.shape)


def check_bitcast(inputs: dict, outputs: dict, attrs: dict) -> tuple[bool, str]:
    """Judge a BitCast result bit for bit (``Case.check``): the output has the type ``to``
    names and the input's shape, and every element the input element's bit pattern (a value
    comparison would let a NaN with another payload, or a quieted signalling NaN, pass).

    Returns:
        ``(passed, message)``.
    """
    x = np.asarray(inputs["input"])
    y = np.asarray(next(iter(outputs.values())))
    dst = V.name_of(int(attrs["to"]))
    src = _source_type(x)
    if y.dtype != V.np_dtype(dst):
        return False, f"output dtype {y.dtype}, 'to' names {dst}"
    if y.shape != x.shape:
        return False, f"output shape {list(y.shape)} != input shape {list(x.shape)}"
    bx, by = bits_of(x, src), bits_of(y, dst)
    for i, (a, b) in enumerate(zip(bx, by)):
        if a != b:
            w = (BIT_WIDTHS[dst] + 3) // 4
            return False, (f"element {i} (flat): bits 0x{b:0{w}x}, the input's are 0x{a:0{w}x} "
                           f"({sum(p != q for p, q in zip(bx, by))} of {len(bx)} differ)")
    return True, ""
