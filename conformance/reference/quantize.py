"""Exact oracles of QuantizeLinear (ai.onnx 10, 13, 19, 21, 23, 24, 25, 28) and
DequantizeLinear (10, 13, 19, 21, 23, 24, 25, 28), and the robustness rule of their cases.

The operator texts (``onnx.defs``, QuantizeLinear-28):

* ``y = saturate((x / y_scale) + y_zero_point)``; "For ``(x / y_scale)``, it rounds to the
  nearest even"; saturation to the integer type's range (uint16 ... uint2); float8 targets
  follow Cast's saturate tables (``saturate`` attribute, float8 only), float4e2m1 and float6
  always saturate;
* granularity from the scale's shape: a scalar (per tensor), a 1-D tensor of length
  ``D[axis]`` (per axis), or the input's rank with ``ceil(D[axis] / block_size)`` along the
  axis (blocked: each scale is replicated ``block_size`` times along ``axis``);
* DequantizeLinear: ``y = (x - x_zero_point) * x_scale``, the output in ``output_dtype`` (else
  the scale's type), which "also determines the precision of the multiplication".

Values are exact: the quotient ``x / y_scale`` is a :class:`fractions.Fraction`, rounded half
to even by Python's ``round``; the product of DequantizeLinear is exact in float64 for every
value the generators feed (at most 53 significant bits).

What a kernel may legitimately do differently, and how the cases avoid it
(:func:`robust_quotient`): the division may be computed in float32 or in the precision type
(the scale's type, or ``precision``), correctly rounded; a quotient that such a rounding moves
across a ``.5`` boundary (or a float8 rounding boundary) could round either way, so the
generators never feed one.  A tie that is exact in every such precision must round to even:
a kernel multiplying by the rounded reciprocal of the scale is wrong (scale 7, x = 45.5).
"""

from __future__ import annotations

import math
from fractions import Fraction
from functools import lru_cache

import numpy as np

from ..ops import values as V
from . import cast as cast_ref

#: Floating types a quantized value may have (T2/T3/T1 of the float8 era).
NARROW_FLOATS = ("float8e4m3fn", "float8e4m3fnuz", "float8e5m2", "float8e5m2fnuz", "float4e2m1",
                 "float6e2m3", "float6e3m2")
#: float8 targets whose conversion the ``saturate`` attribute governs.
FLOAT8 = ("float8e4m3fn", "float8e4m3fnuz", "float8e5m2", "float8e5m2fnuz")


def is_float_target(t: str) -> bool:
    """Whether the quantized type ``t`` is a floating one (float8, float4, float6)."""
    return V.kind(t) == V.FLOAT


def granularity(scale_shape: tuple[int, ...], x_shape: tuple[int, ...], axis: int, block_size: int) -> str:
    """``"tensor"``, ``"axis"`` or ``"blocked"`` for a scale of ``scale_shape`` (the operator
    text's three granularities).

    Raises:
        ValueError: the scale's shape fits none of them for ``x_shape``, ``axis`` and
            ``block_size`` (an invalid model).
    """
    r = len(x_shape)
    if len(scale_shape) == 0 or (len(scale_shape) == 1 and scale_shape[0] == 1 and block_size == 0):
        return "tensor"
    if not -r <= axis < r:
        raise ValueError(f"axis {axis} outside [-{r}, {r - 1}]")
    a = axis % r
    if len(scale_shape) == 1 and block_size == 0:
        if scale_shape[0] != x_shape[a]:
            raise ValueError(f"per-axis scale of length {scale_shape[0]}, axis {axis} has {x_shape[a]}")
        return "axis"
    if len(scale_shape) == r and block_size > 0:
        for i, (d, s) in enumerate(zip(x_shape, scale_shape)):
            if i == a:
                if s != -(-d // block_size):
                    raise ValueError(f"blocked scale has {s} blocks along axis {axis}, ceil({d}/{block_size}) needed")
            elif s != d:
                raise ValueError(f"blocked scale dimension {i} is {s}, the input's is {d}")
        return "blocked"
    raise ValueError(f"scale of shape {scale_shape} fits no granularity for input {x_shape}, axis {axis}, "
                     f"block_size {block_size}")


def expand(p: np.ndarray, x_shape: tuple[int, ...], axis: int, block_size: int) -> np.ndarray:
    """The scale or zero point ``p`` replicated to the input's shape ``x_shape`` (per tensor,
    per axis along ``axis``, or blocked: each element ``block_size`` times along ``axis``).

    Raises:
        ValueError: as :func:`granularity`.
    """
    p = np.asarray(p)
    g = granularity(p.shape, tuple(x_shape), axis, block_size)
    if g == "tensor":
        return np.broadcast_to(p.reshape(()), x_shape)
    a = axis % len(x_shape)
    if g == "axis":
        shape = [1] * len(x_shape)
        shape[a] = x_shape[a]
        return np.broadcast_to(p.reshape(shape), x_shape)
    rep = np.repeat(p, block_size, axis=a)
    return np.take(rep, np.arange(x_shape[a]), axis=a)


def _fraction(v) -> Fraction:
    return Fraction(int(v)) if isinstance(v, (int, np.integer)) else Fraction(float(v))


def _round_to(v: float, t: str) -> float:
    """float64 -> the IEEE type ``t`` (round to nearest even), as float64 (numpy's float64 ->
    float32 and float64 -> float16 conversions are correctly rounded; bfloat16 through
    :func:`conformance.ops.values.round_float`)."""
    with np.errstate(over="ignore", invalid="ignore"):
        if t == "float":
            return float(np.float32(v))
        if t == "float16":
            return float(np.float16(v))
        if t == "double":
            return float(v)
    return float(V.round_float(np.array([v]), t)[0])


def _target_range(t: str) -> tuple[int, int]:
    info = V.iinfo(t)
    return int(info.min), int(info.max)


def _to_float_target(v: float, t: str, *, saturate: bool, version: int) -> float:
    """:func:`_to_float_target_cached` (memoized: the generators convert the same values often)."""
    return _to_float_target_cached(float(v), t, bool(saturate), int(version))


@lru_cache(maxsize=65536)
def _to_float_target_cached(v: float, t: str, saturate: bool, version: int) -> float:
    """A float64 value converted to the floating quantized type ``t`` (Cast's rules at the
    corresponding version: the saturate tables for float8, saturation for float4/float6)."""
    sat = saturate if t in FLOAT8 else True
    return float(cast_ref._round_float(np.array([v], dtype=np.float64), t, version=version, saturate=sat,
                                       round_mode="up")[0])


def quantize_value(xv, sv, zv, t: str, *, saturate: bool, version: int):
    """One element of QuantizeLinear, exactly: ``saturate(round(x / s) + z)`` for an integer
    target ``t`` (a Python int), the conversion of ``x / s + z`` for a floating one (float64).
    ``xv``: float or int; ``sv``: the scale (float or int, nonzero); ``zv``: the zero point."""
    if V.kind(t) == V.INT:
        q = _fraction(xv) / _fraction(sv)
        lo, hi = _target_range(t)
        return min(hi, max(lo, round(q) + int(zv)))
    x, s = float(xv), float(sv)
    if not math.isfinite(x):
        v = x / s + float(zv)
    else:
        v = float(_fraction(x) / _fraction(s) + _fraction(zv))
    return _to_float_target(v, t, saturate=saturate, version=version)


def quantize_linear(x, y_scale, y_zero_point, *, axis: int, block_size: int, out_type: str, saturate: bool,
                    version: int) -> np.ndarray:
    """QuantizeLinear, exactly (module docstring).

    Args:
        x: the input, float64 (float types) or an object array of ints (int32).
        y_scale: float64 (or ints for an int32 scale), per tensor / axis / blocked.
        y_zero_point: same shape as ``y_scale`` (ints or float64), or ``None`` (zero).
        out_type: the quantized type's spec name.
    Returns:
        object array of Python ints (integer targets) or float64 (floating targets).
    Raises:
        ValueError: a scale or zero point whose shape fits no granularity.
    """
    x = np.asarray(x)
    s = expand(y_scale, x.shape, axis, block_size)
    z = expand(y_zero_point, x.shape, axis, block_size) if y_zero_point is not None else np.zeros(x.shape, dtype=object)
    vals = [quantize_value(a, b, c, out_type, saturate=saturate, version=version)
            for a, b, c in zip(x.ravel().tolist(), np.asarray(s).ravel().tolist(), np.asarray(z).ravel().tolist())]
    if V.kind(out_type) == V.INT:
        out = np.empty(x.shape, dtype=object)
        out.ravel()[:] = vals
        return out
    return np.array(vals, dtype=np.float64).reshape(x.shape)


def division_precisions(scale_type: str, precision: str | None) -> tuple[str, ...]:
    """The precisions a kernel may divide in: float32 (as kernels do) and the precision type
    (``precision``, else the scale's type), where it is an IEEE type."""
    out = ["float"]
    for t in (precision, scale_type):
        if t in ("float16", "bfloat16", "float", "double") and t not in out:
            out.append(t)
    return tuple(out)


def robust_quotient(xv, sv, zv, t: str, precisions, *, saturate: bool, version: int) -> bool:
    """Whether the quantized value of one element is the same when ``x / s`` is first
    rounded correctly to each of ``precisions`` (then ``+ z`` in that precision for a floating
    target), or computed from ``x`` and ``s`` converted to that precision first (the reading
    "the division in the precision type" of QuantizeLinear-23+), as when it is exact: the
    elements the cases may hold."""
    want = quantize_value(xv, sv, zv, t, saturate=saturate, version=version)
    x, s = float(xv), float(sv)
    if not math.isfinite(x):
        return True
    q = _fraction(x) / _fraction(s)
    quotients = []
    for p in precisions:
        quotients.append((p, _round_to(float(q), p) if p != "double" else float(q)))
        if p != "double":  # x and the scale converted to the precision type first, then divided in it
            xp, sp = _round_to(x, p), _round_to(s, p)
            qq = _round_to(float(_fraction(xp) / _fraction(sp)), p) if math.isfinite(xp) and sp else math.inf
            quotients.append((p, qq))
    for p, qp in quotients:
        if not math.isfinite(qp):
            return False
        if V.kind(t) == V.INT:
            lo, hi = _target_range(t)
            got = min(hi, max(lo, round(Fraction(qp)) + int(zv)))
        else:
            v = _round_to(qp + float(zv), p) if p != "double" else qp + float(zv)
            got = _to_float_target(v, t, saturate=saturate, version=version)
        if not (got == want or (isinstance(got, float) and math.isnan(got) and math.isnan(want))):
            return False
    return True


def dequantize_linear(x, x_scale, x_zero_point, *, axis: int, block_size: int) -> np.ndarray:
    """DequantizeLinear, exactly: ``(x - x_zero_point) * x_scale`` (float64; the engine rounds
    it once to the output type).

    Args:
        x: the quantized input (object ints, or float64 for float8/float4/float6).
        x_scale: float64, per tensor / axis / blocked.
        x_zero_point: same shape as ``x_scale``, or ``None`` (zero).
    Raises:
        ValueError: a scale or zero point whose shape fits no granularity.
    """
    x = np.asarray(x)
    s = expand(x_scale, x.shape, axis, block_size)
    z = expand(x_zero_point, x.shape, axis, block_size) if x_zero_point is not None else None
    out = []
    for i, (a, b) in enumerate(zip(x.ravel().tolist(), np.asarray(s).ravel().tolist())):
        zv = 0 if z is None else np.asarray(z).ravel()[i]
        a_f, z_f = float(a), float(zv)
        if not math.isfinite(a_f) or not math.isfinite(float(b)):
            out.append((a_f - z_f) * float(b))
        else:
            out.append(float((_fraction(a) - _fraction(zv)) * _fraction(b)))
    return np.array(out, dtype=np.float64).reshape(x.shape)


def dynamic_quantize_linear(x) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """DynamicQuantizeLinear-11 (uint8), exactly from the float32 scale (operator text):
    ``y_scale = (max(0, max(x)) - min(0, min(x))) / 255`` (the float32 result of the exact
    quotient: the scale is an output of type float, so it is the correctly rounded value),
    ``y_zero_point = round(saturate(0 - min(0, min(x)) / y_scale))`` (round half to even,
    saturation to [0, 255]), ``y = saturate(round(x / y_scale) + y_zero_point)``.

    Args:
        x: float64 values of a float32 tensor, at least one element, not all zero, finite.
    Returns:
        (y as object ints, y_scale as a float64 scalar, y_zero_point as an object int scalar).
    Raises:
        ValueError: an empty or all-zero ``x`` (the scale would be 0: the text divides by it).
    """
    x = np.asarray(x, dtype=np.float64)
    if x.size == 0:
        raise ValueError("DynamicQuantizeLinear of an empty tensor: min/max undefined")
    hi, lo = max(0.0, float(x.max())), min(0.0, float(x.min()))
    r = Fraction(hi) - Fraction(lo)
    if r == 0:
        raise ValueError("DynamicQuantizeLinear of an all-zero tensor: y_scale 0")
    scale = float(np.float32(float(r / 255)))
    zfp = -Fraction(lo) / Fraction(scale)
    zp = round(min(Fraction(255), max(Fraction(0), zfp)))
    y = quantize_linear(x, np.array(scale), np.array(zp, dtype=object), axis=1, block_size=0, out_type="uint8",
                        saturate=True, version=11)
    zout = np.empty((), dtype=object)
    zout[()] = int(zp)
    return y, np.array(scale, dtype=np.float64), zout


def dynamic_robust(x) -> tuple[bool, np.ndarray]:
    """(whether the scale and the zero point of :func:`dynamic_quantize_linear` come out the same
    from float32 arithmetic -- ``max - min`` and ``min / scale`` rounded to float32 --, the mask of
    the elements whose ``y`` does not depend on float32 division)."""
    x = np.asarray(x, dtype=np.float64)
    hi, lo = max(0.0, float(x.max())), min(0.0, float(x.min()))
    if float(np.float32(hi - lo)) != hi - lo or hi - lo == 0:
        return False, np.zeros(x.shape, bool)
    y, scale, zp = dynamic_quantize_linear(x)
    s = float(scale)
    zf = -float(np.float32(lo / s)) if lo else 0.0
    z32 = int(np.rint(min(255.0, max(0.0, zf))))
    if z32 != int(zp[()]):
        return False, np.zeros(x.shape, bool)
    ok = np.array([robust_quotient(v, s, int(zp[()]), "uint8", ("float",), saturate=True, version=11)
                   for v in x.ravel().tolist()], dtype=bool).reshape(x.shape)
    return True, ok
