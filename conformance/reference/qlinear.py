"""Exact oracles of the integer kernels of quantization: QLinearMatMul (ai.onnx 10, 21),
ConvInteger (10) and QLinearConv (10), and the robustness rule of their cases.

The operator texts (``onnx.defs``):

* **QLinearMatMul**: "Matrix product that behaves like numpy.matmul"; the inputs are quantized
  ``a`` (scale and zero point per tensor or per row: ``[M]`` for a 2-D ``a``, ``[D1, D2, M, 1]``
  batched) and ``b`` (per tensor or per column: ``[N]``, ``[D1, D2, 1, N]``); the output
  "quantization formula is y = saturate((x / y_scale) + y_zero_point)", "rounding to nearest
  ties to even"; "Production must never overflow, and accumulation may overflow if and only if
  in 32 bits" -- the products and their sum are integers (exact); version 21 adds float16 and
  bfloat16 scales (TS) and float8 inputs and outputs;
* **ConvInteger**: ``Conv(x - x_zero_point, w - w_zero_point)`` in int32; x_zero_point is
  per tensor, w_zero_point per tensor or per output channel (``[M]``); padding adds values
  whose dequantized value is 0 (the zero point);
* **QLinearConv**: the same convolution requantized like QLinearMatMul: "Each scale and
  zero-point pair must have same shape ... either scalars (per tensor) or 1-D tensors (per
  output channel)"; the bias B (int32) is "quantized using scale = input scale * weight scale
  and zero point as 0", so it is added to the integer accumulator.

Values are exact: the accumulator is a Python int (a :class:`fractions.Fraction` for float8
inputs), the real value of an output element ``v = acc * a_scale * b_scale / y_scale`` a
Fraction, rounded half to even by Python's ``round`` and saturated to the output type (float8
outputs: Cast's conversion with ``saturate=1``, :func:`conformance.reference.quantize.quantize_value`).

What a kernel may legitimately do differently, and how the cases avoid it
(:func:`robust_mask`): the requantization multiplier ``a_scale * b_scale / y_scale`` and its
product with the accumulator may be computed in float32 in any association (three or four
roundings, relative error below ``4 u`` with ``u = 2**-24``); float8 inputs may be dequantized to
float32 and summed in any order (error below ``K u`` times the sum of the terms' magnitudes).
An element whose ``v`` lies within ``SLACK_REL |v|`` (plus that accumulation term) of a
rounding boundary of the output type (an integer ``+ 0.5``, a float8 midpoint) could round
either way, so the generators never keep one -- except an exact tie whose every float32
computation is exact (all three scales powers of two, integer inputs): then "ties to even"
holds exactly and a kernel rounding half away from zero must be caught.
"""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np

from ..ops import values as V
from . import conv as conv_ref
from . import quantize as qref

#: The relative slack of a float32 requantization (a generous ``32 u``, ``u = 2**-24``: the
#: multiplier's two roundings, the product's, the accumulator's conversion).
SLACK_REL = 2.0 ** -19
#: The per-term slack of a float32 sum of dequantized float8 terms (``2 u`` per term).
SLACK_SUM = 2.0 ** -23


def exact(x) -> np.ndarray:
    """An object array of exact values: Python ints for integer inputs, Fractions for floating
    ones (finite values only)."""
    x = np.asarray(x)
    out = np.empty(x.shape, dtype=object)
    if x.dtype == object:
        out.ravel()[:] = [v if isinstance(v, (int, Fraction)) else Fraction(float(v)) for v in x.ravel().tolist()]
    elif x.dtype.kind in "iub":
        out.ravel()[:] = [int(v) for v in x.ravel().tolist()]
    else:
        out.ravel()[:] = [Fraction(float(v)) for v in x.ravel().tolist()]
    return out


def is_pow2(v) -> bool:
    """Whether ``v`` is a (positive) power of two."""
    f = Fraction(v)
    return f > 0 and f.numerator & (f.numerator - 1) == 0 and f.denominator & (f.denominator - 1) == 0


def requantize_value(v: Fraction, zy, out_type: str, version: int = 21):
    """One output element: ``saturate(round(v) + y_zero_point)`` (round half to even) for an
    integer ``out_type`` (a Python int), Cast's saturating conversion of ``v + y_zero_point`` for
    a float8 one (float64)."""
    if V.kind(out_type) == V.INT:
        lo, hi = qref._target_range(out_type)
        return min(hi, max(lo, round(v) + int(zy)))
    return qref._to_float_target(float(Fraction(v) + Fraction(float(zy))), out_type, saturate=True,
                                 version=max(version, 19))


def requantize(v: np.ndarray, zy, out_type: str, version: int = 21) -> np.ndarray:
    """:func:`requantize_value` over an object array of exact reals ``v`` (``zy`` broadcast).
    Returns object ints (integer targets) or float64 (float8 targets)."""
    v = np.asarray(v, dtype=object)
    z = np.broadcast_to(np.asarray(zy, dtype=object), v.shape)
    vals = [requantize_value(a, b, out_type, version) for a, b in zip(v.ravel().tolist(), z.ravel().tolist())]
    if V.kind(out_type) == V.INT:
        out = np.empty(v.shape, dtype=object)
        out.ravel()[:] = vals
        return out
    return np.array(vals, dtype=np.float64).reshape(v.shape)


def robust_value(v: Fraction, slack: float, zy, out_type: str, exact_tie: bool, version: int = 21) -> bool:
    """Whether every value within ``slack`` of ``v`` requantizes like ``v`` (module docstring);
    an exact tie counts as robust only where ``exact_tie`` (every float32 computation is exact)."""
    if V.kind(out_type) == V.INT:
        f = v - math.floor(v)
        if f == Fraction(1, 2) and exact_tie:
            return True
    want = requantize_value(v, zy, out_type, version)
    for d in (slack, -slack):
        got = requantize_value(v + Fraction(d), zy, out_type, version)
        if not (got == want or (isinstance(got, float) and math.isnan(got) and math.isnan(want))):
            return False
    return True


# ----------------------------------------------------------------------------- QLinearMatMul
def _row(p, a_ndim: int) -> np.ndarray:
    """An ``a`` scale or zero point laid out for broadcasting against ``[..., M, K]``: a 1-D
    ``[M]`` (M > 1) of a 2-D ``a`` becomes ``[M, 1]`` (one per row)."""
    p = np.asarray(p, dtype=object)
    if p.ndim == 1 and p.size > 1 and a_ndim >= 2:
        return p.reshape(-1, 1)
    return p


def matmul_parts(a, a_scale, a_zero_point, b, b_scale, b_zero_point, y_scale):
    """``(v, mag)`` of QLinearMatMul, exactly: ``v = (a - a_zp) @ (b - b_zp) * a_scale * b_scale
    / y_scale`` (the real value before rounding; the scales factor out of the sum because they are
    per row of ``a`` and per column of ``b``) and ``mag``, the same with every term's magnitude.
    Object arrays (Fractions) of numpy.matmul's output shape.

    Raises:
        ValueError: shapes numpy.matmul (with the per-row/per-column layouts) does not accept,
            a y_scale that is not a scalar.
    """
    a, b = np.asarray(a), np.asarray(b)
    if a.ndim < 1 or b.ndim < 1:
        raise ValueError("QLinearMatMul: rank-0 operand")
    sy = exact(y_scale)
    if sy.size != 1:
        raise ValueError("y_scale is per tensor (a scalar)")
    for s_, z_, n_ in ((a_scale, a_zero_point, "a"), (b_scale, b_zero_point, "b")):
        if np.shape(s_) != np.shape(z_):
            raise ValueError(f"{n_}_scale {np.shape(s_)} and {n_}_zero_point {np.shape(z_)}: 'Scale and zero point "
                             "must have same shape'")
    # numpy.matmul's 1-D promotion: a [K] is [1, K] (per tensor), b [K] is [K, 1] (per tensor)
    a1, b1 = a.ndim == 1, b.ndim == 1
    a2, b2 = (a[None, :] if a1 else a), (b[:, None] if b1 else b)
    za, sa = _row(a_zero_point, a2.ndim), _row(exact(a_scale), a2.ndim)
    ia, ea = int_terms(a2, za)
    ib, eb = int_terms(b2, b_zero_point)
    acc = np.matmul(ia, ib)
    mag = np.matmul(np.abs(ia), np.abs(ib))
    mult = np.broadcast_to(np.asarray(sa * exact(b_scale) * Fraction(2) ** (ea + eb) / sy.reshape(()), dtype=object),
                           acc.shape)
    v, g = _times(acc, mult), _times(mag, mult)
    if b1:
        v, g = v[..., 0], g[..., 0]
    if a1:
        v, g = v[..., 0, :] if not b1 else v[..., 0], g[..., 0, :] if not b1 else g[..., 0]
    return v, g


def _times(ints: np.ndarray, mult: np.ndarray) -> np.ndarray:
    out = np.empty(ints.shape, dtype=object)
    out.ravel()[:] = [int(i) * m for i, m in zip(ints.ravel().tolist(), mult.ravel().tolist())]
    return out


def int_terms(x, zero_point) -> tuple[np.ndarray, int]:
    """``x - zero_point`` as int64 integers ``n`` and one exponent ``E`` with ``x - zp = n 2^E``
    exactly (integer inputs: ``E = 0``; float8 inputs: their common binary exponent).

    Raises:
        ValueError: a difference beyond 2**40 in magnitude (the int64 sums could overflow).
    """
    d = np.asarray(x, dtype=np.float64) - np.asarray(zero_point, dtype=np.float64)
    if not np.isfinite(d).all():
        raise ValueError("quantized terms must be finite")
    fr = [Fraction(float(v)) for v in d.ravel().tolist()]
    k = max((f.denominator.bit_length() - 1 for f in fr), default=0)
    n = [int(f * (1 << k)) for f in fr]
    if n and max(abs(v) for v in n) >= 2 ** 40:
        raise ValueError("quantized terms beyond 2**40")
    return np.array(n, dtype=np.int64).reshape(d.shape), -k


def qlinear_matmul(a, a_scale, a_zero_point, b, b_scale, b_zero_point, y_scale, y_zero_point, out_type: str,
                   version: int = 21) -> np.ndarray:
    """QLinearMatMul, exactly: ``saturate(round((a - a_zp) @ (b - b_zp) * a_scale * b_scale /
    y_scale) + y_zero_point)`` (module docstring).  ``a``/``b``: object ints or float64 (float8);
    scales float64; ``out_type``: y_zero_point's type.  Returns object ints or float64.

    Raises:
        ValueError: invalid shapes (:func:`matmul_parts`).
    """
    v, _ = matmul_parts(a, a_scale, a_zero_point, b, b_scale, b_zero_point, y_scale)
    return requantize(v, exact(y_zero_point).reshape(()), out_type, version)


def robust_mask(v, mag, zy, out_type: str, float_inputs: bool, k: int, scales, version: int = 21) -> np.ndarray:
    """The output elements (bool, ``v``'s shape) whose requantization no legitimate kernel can
    change (module docstring).  ``v``/``mag``: :func:`matmul_parts`; ``scales``: the exact scales
    (any shapes), whose being powers of two makes exact ties legitimate; ``k``: the terms per
    output element."""
    v = np.asarray(v, dtype=object)
    tie_ok = not float_inputs and all(is_pow2(s) for p in scales for s in exact(p).ravel().tolist())
    z = exact(zy).reshape(())
    out = np.zeros(v.shape, dtype=bool)
    flat = out.reshape(-1)
    for i, (vi, gi) in enumerate(zip(v.ravel().tolist(), np.asarray(mag, dtype=object).ravel().tolist())):
        slack = SLACK_REL * abs(float(vi)) + (SLACK_SUM * k * float(gi) if float_inputs else 0.0)
        flat[i] = robust_value(Fraction(vi), slack, z, out_type, tie_ok, version)
    return out


# ----------------------------------------------------------------------------- convolution
def conv_integer_acc(x, w, x_zero_point, w_zero_point, attrs) -> np.ndarray:
    """``Conv(x - x_zero_point, w - w_zero_point)`` exactly (object ints or Fractions), shape
    ``(N, M, out...)``: x_zero_point a scalar (or one element), w_zero_point a scalar or ``[M]``
    (per output channel); the padding holds the zero point (0 after the subtraction).

    Raises:
        ValueError: invalid shapes or attributes (:func:`conformance.reference.conv.conv_geometry`),
            a w_zero_point that is neither a scalar nor ``[M]``.
    """
    x, w = np.asarray(x, dtype=np.int64), np.asarray(w, dtype=np.int64)
    if x_zero_point is not None:
        zx = np.asarray(x_zero_point, dtype=np.int64)
        if zx.size != 1:
            raise ValueError(f"x_zero_point must be a scalar (per tensor), not {zx.shape}")
        x = x - zx.reshape(())
    if w_zero_point is not None:
        zw = np.asarray(w_zero_point, dtype=np.int64)
        if zw.size == 1:
            w = w - zw.reshape(())
        elif zw.ndim == 1 and zw.shape[0] == w.shape[0]:
            w = w - zw.reshape((-1,) + (1,) * (w.ndim - 1))
        else:
            raise ValueError(f"w_zero_point of shape {zw.shape}: a scalar or [M] = [{w.shape[0]}]")
    return exact(conv_ref.conv_sums(x, w, attrs))


def conv_integer(x, w, x_zero_point=None, w_zero_point=None, attrs=None) -> np.ndarray:
    """ConvInteger-10, exactly: the int32 output as object ints (:func:`conv_integer_acc`)."""
    return conv_integer_acc(x, w, x_zero_point, w_zero_point, attrs or {})


def qlinear_conv_parts(x, x_scale, x_zero_point, w, w_scale, w_zero_point, y_scale, b=None, attrs=None):
    """``(v, mag)`` of QLinearConv, exactly: ``v = (Conv(x - x_zp, w - w_zp) + B) * x_scale *
    w_scale[m] / y_scale`` and ``mag`` the same of the terms' magnitudes (``|B|`` included),
    object arrays (Fractions) of shape ``(N, M, out...)``.

    Raises:
        ValueError: invalid geometry; an x or y scale that is not a scalar; a w scale neither a
            scalar nor ``[M]``; B not ``[M]``.
    """
    attrs = attrs or {}
    acc = conv_integer_acc(x, w, x_zero_point, w_zero_point, attrs)
    m = acc.shape[1]
    sx, sw, sy = exact(x_scale), exact(w_scale), exact(y_scale)
    if sx.size != 1 or sy.size != 1:
        raise ValueError("x_scale and y_scale are per tensor (scalars)")
    if sw.size != 1 and sw.shape != (m,):
        raise ValueError(f"w_scale of shape {sw.shape}: a scalar or [M] = [{m}]")
    if np.shape(x_scale) != np.shape(x_zero_point) or np.shape(w_scale) != np.shape(w_zero_point):
        raise ValueError("'Each scale and zero-point pair must have same shape'")
    zw = np.asarray(w_zero_point, dtype=np.int64)
    xd = np.asarray(x, dtype=np.int64) - np.asarray(x_zero_point, dtype=np.int64).reshape(())
    wd = np.asarray(w, dtype=np.int64) - (zw.reshape((-1,) + (1,) * (np.ndim(w) - 1)) if zw.size > 1
                                          else zw.reshape(()))
    mag = exact(conv_ref.conv_sums(np.abs(xd), np.abs(wd), attrs))
    lay = (1, -1) + (1,) * (acc.ndim - 2)
    if b is not None:
        bb = exact(b)
        if bb.shape != (m,):
            raise ValueError(f"B of shape {bb.shape}, not [M] = [{m}]")
        acc = acc + bb.reshape(lay)
        mag = mag + np.abs(bb).reshape(lay)
    mult = sx.reshape(()) * (sw.reshape(lay) if sw.size > 1 else sw.reshape(())) / sy.reshape(())
    return np.asarray(acc * mult, dtype=object), np.asarray(mag * mult, dtype=object)


def qlinear_conv(x, x_scale, x_zero_point, w, w_scale, w_zero_point, y_scale, y_zero_point, b=None, attrs=None,
                 out_type: str = "uint8") -> np.ndarray:
    """QLinearConv-10, exactly: ``saturate(round((Conv(x - x_zp, w - w_zp) + B) * x_scale *
    w_scale[m] / y_scale) + y_zero_point)`` (module docstring).  Returns object ints.

    Raises:
        ValueError: as :func:`qlinear_conv_parts`.
    """
    v, _ = qlinear_conv_parts(x, x_scale, x_zero_point, w, w_scale, w_zero_point, y_scale, b, attrs)
    return requantize(v, exact(y_zero_point).reshape(()), out_type, 10)


# ----------------------------------------------------------------------------- com.microsoft QLinearAdd / QLinearMul
def qlinear_binary_parts(op: str, a, a_scale, a_zero_point, b, b_scale, b_zero_point, c_scale):
    """``(v, mag)`` of onnxruntime's com.microsoft QLinearAdd / QLinearMul (its schema docs):
    ``v = (A_scale (A - A_zp) + B_scale (B - B_zp)) / C_scale`` (Add) or
    ``v = (A - A_zp)(B - B_zp) A_scale B_scale / C_scale`` (Mul), numpy broadcasting, exactly
    (object arrays of Fractions); ``mag`` the sum of the terms' magnitudes (Add: the two
    products; Mul: ``|v|``).  An absent zero point is 0.

    Raises:
        ValueError: a scale or zero point that is not a scalar ("It's a scalar, which means a
            per-tensor/layer quantization"), shapes that do not broadcast.
    """
    for p in (a_scale, b_scale, c_scale, a_zero_point, b_zero_point):
        if p is not None and np.size(p) != 1:
            raise ValueError("scales and zero points are scalars (per tensor)")
    za = 0 if a_zero_point is None else exact(a_zero_point).reshape(())[()]
    zb = 0 if b_zero_point is None else exact(b_zero_point).reshape(())[()]
    sa, sb, sc = (exact(s).reshape(())[()] for s in (a_scale, b_scale, c_scale))
    da, db = exact(a) - za, exact(b) - zb
    da, db = np.broadcast_arrays(da, db)
    if op == "QLinearAdd":
        t1, t2 = da * (sa / sc), db * (sb / sc)
        v = t1 + t2
        mag = np.abs(t1) + np.abs(t2)
    else:
        v = da * db * (sa * sb / sc)
        mag = np.abs(v)
    return np.asarray(v, dtype=object), np.asarray(mag, dtype=object)


def qlinear_binary(op: str, a, a_scale, a_zero_point, b, b_scale, b_zero_point, c_scale, c_zero_point,
                   out_type: str) -> np.ndarray:
    """com.microsoft QLinearAdd / QLinearMul, exactly: :func:`qlinear_binary_parts` rounded half to
    even, ``+ C_zero_point`` (0 when absent), saturated to the 8-bit type (the schema names
    neither rounding nor saturation: the suite takes QuantizeLinear's, which onnxruntime's kernels
    implement, and never generates an element at a tie).  Returns object ints.

    Raises:
        ValueError: as :func:`qlinear_binary_parts`.
    """
    v, _ = qlinear_binary_parts(op, a, a_scale, a_zero_point, b, b_scale, b_zero_point, c_scale)
    zc = 0 if c_zero_point is None else exact(c_zero_point).reshape(())[()]
    return requantize(v, zc, out_type)


def robust_binary(v, mag, zc, out_type: str) -> np.ndarray:
    """The elements of a QLinearAdd/QLinearMul case no float32 evaluation can round otherwise:
    more than ``SLACK_REL (|v| + mag)`` from a rounding boundary, never an exact tie (the schema
    names no rounding rule)."""
    out = np.zeros(np.shape(v), dtype=bool)
    flat = out.reshape(-1)
    for i, (vi, gi) in enumerate(zip(np.asarray(v).ravel().tolist(), np.asarray(mag).ravel().tolist())):
        flat[i] = robust_value(Fraction(vi), SLACK_REL * (abs(float(vi)) + float(gi)), zc, out_type, False)
    return out
