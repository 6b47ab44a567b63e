"""Oracles of onnxruntime's com.microsoft quantized element-wise lookup operators:
QLinearSigmoid (1) and QLinearLeakyRelu (1) (onnxruntime-defined: ContribOperators.md and the
schema docs in onnxruntime's registry, ``conformance.opspec.op_spec(op, "com.microsoft")``).

The documentation: ``Y = quantize(f(dequantize(X)))`` with ``dequantize(X) = X_scale (X -
X_zero_point)`` and ``quantize(v) = saturate(round(v / Y_scale) + Y_zero_point)``; both zero
points are optional ("default 0"), both scales scalars of tensor(float); f is the logistic
function (QLinearSigmoid) or ``x if x >= 0 else alpha x`` (QLinearLeakyRelu, alpha a float
attribute, default 0.01).  The documentation names no rounding rule.  onnxruntime's CPU
kernel (``QLinearLookupBase``, read, not copied) builds a 256-entry table once per model: each
possible X is dequantized in float32, f is applied in float32 (MLAS's logistic approximation
for Sigmoid), and the result is quantized with MLAS's QuantizeLinear (float32 division,
round half to even, + zero point, saturation).  The oracle is that computation in exact
arithmetic (LeakyRelu: Fractions; Sigmoid: float64, its error ~1e-16 far below the slack)
rounded half to even and saturated (QuantizeLinear's rule,
:func:`conformance.reference.qlinear.requantize`).

Robustness (:func:`robust_lookup`): a float32 evaluation differs from the exact value by the
dequantization product's rounding, f's own error (Sigmoid: MLAS's approximation, a few ulp;
the derivative of the logistic is at most 1/4, so an input error ``e`` moves f by at most
``e/4``), and the division's rounding.  An element is kept only where every value within
``SLACK_LOOKUP (|v| + |x| / Y_scale)`` of ``v = f(x) / Y_scale`` (``x`` the dequantized input)
requantizes alike; exact ``.5`` ties are kept only where every float32 step is exact
(LeakyRelu with power-of-two scales on the non-negative side or with a power-of-two alpha),
and then round to even.
"""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np

from .qlinear import exact, is_pow2, requantize, robust_value

#: Relative slack of a float32 lookup-table entry: ``2**-16`` (= 256 u, u = 2**-24) of
#: ``|v| + |x| / Y_scale``: the dequantization product, the division (1 u each) and MLAS's
#: logistic approximation (documented as a few ulp) with generous room.
SLACK_LOOKUP = 2.0 ** -16


def _scalar(p, name: str):
    if np.size(p) != 1:
        raise ValueError(f"{name} is a scalar (per-tensor quantization)")
    return exact(p).reshape(())[()]


def lookup_parts(op: str, x, x_scale, x_zero_point, y_scale, alpha: float = 0.01):
    """``(v, xr)`` of QLinearSigmoid / QLinearLeakyRelu: ``xr = X_scale (X - X_zero_point)``
    (exact Fractions) and ``v = f(xr) / Y_scale`` (Fractions; Sigmoid through float64), object
    arrays of X's shape.  An absent zero point is 0.

    Raises:
        ValueError: a scale or zero point with more than one element.
    """
    sx = _scalar(x_scale, "X_scale")
    sy = _scalar(y_scale, "Y_scale")
    zx = 0 if x_zero_point is None else _scalar(x_zero_point, "X_zero_point")
    a = Fraction(float(np.float32(alpha)))
    xs = exact(x)
    xr = np.empty(xs.shape, dtype=object)
    v = np.empty(xs.shape, dtype=object)
    cache: dict = {}
    for i, q in enumerate(xs.ravel().tolist()):
        if q not in cache:
            r = Fraction(sx) * (q - zx)
            if op == "QLinearSigmoid":
                f = Fraction(1.0 / (1.0 + math.exp(-float(r))))
            else:
                f = r if r >= 0 else a * r
            cache[q] = (r, f / Fraction(sy))
        xr.ravel()[i], v.ravel()[i] = cache[q]
    return v, xr


def qlinear_lookup(op: str, x, x_scale, x_zero_point, y_scale, y_zero_point, out_type: str,
                   alpha: float = 0.01) -> np.ndarray:
    """onnxruntime's QLinearSigmoid / QLinearLeakyRelu (module docstring): :func:`lookup_parts`
    rounded half to even, ``+ Y_zero_point`` (0 when absent), saturated to ``out_type``
    (uint8 / int8).  Returns object ints of X's shape.

    Raises:
        ValueError: as :func:`lookup_parts`.
    """
    v, _ = lookup_parts(op, x, x_scale, x_zero_point, y_scale, alpha)
    zy = 0 if y_zero_point is None else _scalar(y_zero_point, "Y_zero_point")
    return requantize(v, zy, out_type)


def robust_lookup(op: str, v, xr, y_scale, y_zero_point, out_type: str, exact_ok) -> np.ndarray:
    """Boolean mask of the elements every legitimate float32 table computes alike (module
    docstring); ``exact_ok`` (bool, broadcast to ``v``): the element's float32 computation is
    exact, so an exact ``.5`` tie is kept (it must round to even)."""
    sy = float(exact(y_scale).reshape(())[()])
    zy = 0 if y_zero_point is None else exact(y_zero_point).reshape(())[()]
    ok = np.broadcast_to(np.asarray(exact_ok, dtype=bool), np.shape(v))
    out = np.zeros(np.shape(v), dtype=bool)
    memo: dict = {}
    for i, (vi, ri, e) in enumerate(zip(np.asarray(v).ravel().tolist(), np.asarray(xr).ravel().tolist(),
                                        ok.ravel().tolist())):
        key = (vi, bool(e))
        if key not in memo:
            slack = SLACK_LOOKUP * (abs(float(vi)) + abs(float(ri)) / sy)
            memo[key] = robust_value(Fraction(vi), slack, zy, out_type, bool(e) and op == "QLinearLeakyRelu")
        out.ravel()[i] = memo[key]
    return out


def exact_leaky(xr, x_scale, y_scale, alpha: float) -> np.ndarray:
    """Where QLinearLeakyRelu's float32 computation is exact (a tie may be generated): both
    scales powers of two and (the element non-negative or alpha a power of two), for 8-bit
    inputs (``|X - X_zero_point| <= 255`` fits float32's mantissa)."""
    if not (is_pow2(float(np.asarray(x_scale).reshape(()))) and is_pow2(float(np.asarray(y_scale).reshape(())))):
        return np.zeros(np.shape(xr), dtype=bool)
    a_pow2 = is_pow2(float(np.float32(alpha)))
    return np.vectorize(lambda r: bool(r >= 0 or a_pow2), otypes=[bool])(np.asarray(xr, dtype=object)) \
        if np.size(xr) else np.zeros(np.shape(xr), dtype=bool)


# ----------------------------------------------------------------------------- QLinearWhere
#: Relative slack of QLinearWhere's float32 requantization (a dequantization product and a
#: quotient, or a table built from them): ``2**-18`` (64 u).
SLACK_WHERE = 2.0 ** -18


def where_parts(condition, x, x_scale, x_zero_point, y, y_scale, y_zero_point, z_scale):
    """``(v, exact_ok)`` of onnxruntime's QLinearWhere (ContribOperators.md: "Return elements,
    either from X or Y, depending on condition", each dequantized by its own scale and zero
    point and requantized by z_scale): ``v = x_scale (X - x_zero_point) / z_scale`` where
    ``condition`` else ``y_scale (Y - y_zero_point) / z_scale``, exact Fractions broadcast
    (numpy) over the three tensors; ``exact_ok`` marks the elements whose float32 computation
    is exact (both scales of the chosen side powers of two).

    Raises:
        ValueError: a scale or zero point with more than one element, shapes that do not
            broadcast.
    """
    sx, sy, sz = (_scalar(s, n) for s, n in ((x_scale, "x_scale"), (y_scale, "y_scale"), (z_scale, "z_scale")))
    zx, zy = _scalar(x_zero_point, "x_zero_point"), _scalar(y_zero_point, "y_zero_point")
    c, xs, ys = np.broadcast_arrays(np.asarray(condition, dtype=bool), exact(x), exact(y))
    rx, ry = Fraction(sx) / Fraction(sz), Fraction(sy) / Fraction(sz)
    v = np.empty(c.shape, dtype=object)
    ok = np.empty(c.shape, dtype=bool)
    ex_x = bool(is_pow2(sx) and is_pow2(sz))
    ex_y = bool(is_pow2(sy) and is_pow2(sz))
    for i, (ci, xi, yi) in enumerate(zip(c.ravel().tolist(), xs.ravel().tolist(), ys.ravel().tolist())):
        v.ravel()[i] = (xi - zx) * rx if ci else (yi - zy) * ry
        ok.ravel()[i] = ex_x if ci else ex_y
    return v, ok


def qlinear_where(condition, x, x_scale, x_zero_point, y, y_scale, y_zero_point, z_scale, z_zero_point,
                  out_type: str) -> np.ndarray:
    """onnxruntime's QLinearWhere: :func:`where_parts` rounded half to even, ``+ z_zero_point``,
    saturated to ``out_type`` (uint8 / int8; QuantizeLinear's rule, what its kernel's MLAS
    quantization does).  Returns object ints of the broadcast shape.

    Raises:
        ValueError: as :func:`where_parts`.
    """
    v, _ = where_parts(condition, x, x_scale, x_zero_point, y, y_scale, y_zero_point, z_scale)
    return requantize(v, _scalar(z_zero_point, "z_zero_point"), out_type)


def robust_where(v, exact_ok, z_zero_point, out_type: str) -> np.ndarray:
    """Boolean mask of the QLinearWhere elements every float32 kernel requantizes alike: more
    than ``SLACK_WHERE |v|`` from a rounding boundary, exact ties only where ``exact_ok``."""
    zz = exact(z_zero_point).reshape(())[()]
    out = np.zeros(np.shape(v), dtype=bool)
    ok = np.broadcast_to(np.asarray(exact_ok, dtype=bool), np.shape(v))
    for i, (vi, e) in enumerate(zip(np.asarray(v).ravel().tolist(), ok.ravel().tolist())):
        out.ravel()[i] = robust_value(Fraction(vi), SLACK_WHERE * abs(float(vi)), zz, out_type, bool(e))
    return out


# ----------------------------------------------------------------------------- QLinearGlobalAveragePool
def global_average_parts(x, x_scale, x_zero_point, y_scale, channels_last: int = 0):
    """``v`` of onnxruntime's QLinearGlobalAveragePool (ContribOperators.md: GlobalAveragePool of
    the dequantized X, quantized by y_scale / y_zero_point; X is ``[N, C, D1, ...]``, or ``[N, D1,
    ..., C]`` with ``channels_last``): ``v = x_scale (mean over the spatial axes of X -
    x_zero_point) / y_scale``, exact Fractions of Y's shape (the spatial axes kept as 1).

    Raises:
        ValueError: X of rank below 3, an empty spatial extent (the mean of nothing), a scale or
            zero point with more than one element.
    """
    xs = exact(x)
    if xs.ndim < 3:
        raise ValueError("X is [N, C, D1, ...] (rank >= 3)")
    axes = tuple(range(1, xs.ndim - 1)) if channels_last else tuple(range(2, xs.ndim))
    count = int(np.prod([xs.shape[a] for a in axes]))
    if count == 0:
        raise ValueError("the spatial extent is empty")
    sx, sy, zx = _scalar(x_scale, "x_scale"), _scalar(y_scale, "y_scale"), _scalar(x_zero_point, "x_zero_point")
    sums = np.sum(xs - zx, axis=axes, keepdims=True) if xs.size else np.zeros(
        tuple(1 if a in axes else d for a, d in enumerate(xs.shape)), dtype=object)
    mult = Fraction(sx) / (Fraction(sy) * count)
    v = np.empty(np.shape(sums), dtype=object)
    v.ravel()[:] = [Fraction(int(s)) * mult for s in np.asarray(sums).ravel().tolist()]
    return v


def qlinear_global_average_pool(x, x_scale, x_zero_point, y_scale, y_zero_point, out_type: str,
                                channels_last: int = 0) -> np.ndarray:
    """onnxruntime's QLinearGlobalAveragePool: :func:`global_average_parts` rounded half to
    even, ``+ y_zero_point``, saturated (QuantizeLinear's rule).  Returns object ints.

    Raises:
        ValueError: as :func:`global_average_parts`.
    """
    v = global_average_parts(x, x_scale, x_zero_point, y_scale, channels_last)
    return requantize(v, _scalar(y_zero_point, "y_zero_point"), out_type)


def robust_global_average(x, x_scale, x_zero_point, y_scale, y_zero_point, out_type: str,
                          channels_last: int = 0) -> np.ndarray:
    """Boolean mask (Y's shape) of the QLinearGlobalAveragePool elements every legitimate kernel
    requantizes alike: an integer sum times a float32 multiplier (``SLACK_WHERE |v|``) or a
    float32 sum of the dequantized terms in any order (``count u`` times the mean magnitude of
    the terms over y_scale, u = 2**-24); no exact tie."""
    v = global_average_parts(x, x_scale, x_zero_point, y_scale, channels_last)
    xs = exact(x)
    axes = tuple(range(1, xs.ndim - 1)) if channels_last else tuple(range(2, xs.ndim))
    count = int(np.prod([xs.shape[a] for a in axes]))
    zx = _scalar(x_zero_point, "x_zero_point")
    r = float(_scalar(x_scale, "x_scale")) / float(_scalar(y_scale, "y_scale"))
    mag = np.sum(np.abs(xs - zx), axis=axes, keepdims=True) if xs.size else np.zeros(np.shape(v), dtype=object)
    zy = _scalar(y_zero_point, "y_zero_point")
    out = np.zeros(np.shape(v), dtype=bool)
    for i, (vi, mi) in enumerate(zip(np.asarray(v).ravel().tolist(), np.asarray(mag).ravel().tolist())):
        slack = SLACK_WHERE * abs(float(vi)) + count * 2.0 ** -24 * float(mi) / count * r
        out.ravel()[i] = robust_value(Fraction(vi), slack, zy, out_type, False)
    return out


# ----------------------------------------------------------------------------- QLinearAveragePool
def average_pool_parts(x, x_scale, x_zero_point, y_scale, attrs, channels_last: int = 0):
    """``(v, mag)`` of onnxruntime's QLinearAveragePool (its documentation: "Output =
    Dequantize(Input) -> AveragePool on fp32 data -> Quantize(output)"; AveragePool's geometry,
    :func:`conformance.reference.pool.windows`): ``v = x_scale (sum of the window's X -
    x_zero_point) / (count y_scale)``, the padding 0 after dequantization, ``count`` the window's
    input elements (``count_include_pad`` 0) or its input and padding positions (1; the ceil_mode
    overhang beyond the padding counts in neither); ``mag`` the same with ``|X - x_zero_point|``.
    Object arrays (Fractions) of Y's shape (``[N, C, O...]``, or ``[N, O..., C]`` with
    ``channels_last``).  An absent zero point is 0.

    Raises:
        ValueError: X of rank below 3, scales or zero points that are not scalars, a window
            without input element under ``count_include_pad`` 0 (a mean of nothing).
    """
    from . import pool as pool_ref

    xs = exact(x)
    if xs.ndim < 3:
        raise ValueError("X is [N, C, D1, ...] (rank >= 3)")
    if channels_last:
        xs = np.moveaxis(xs, -1, 1)
    sx, sy = _scalar(x_scale, "x_scale"), _scalar(y_scale, "y_scale")
    zx = 0 if x_zero_point is None else _scalar(x_zero_point, "x_zero_point")
    out, pos, kind = pool_ref.windows(xs.shape[2:], attrs)
    inc = int(attrs.get("count_include_pad", 0) or 0)
    n, c = xs.shape[:2]
    v = np.empty((n, c) + tuple(out), dtype=object)
    mag = np.empty(v.shape, dtype=object)
    r = Fraction(sx) / Fraction(sy)
    flat_pos = pos.reshape(-1, pos.shape[-2], pos.shape[-1])
    flat_kind = kind.reshape(-1, kind.shape[-1])
    for i in range(n):
        for j in range(c):
            plane = xs[i, j]
            for w, (p, kd) in enumerate(zip(flat_pos, flat_kind)):
                terms = [plane[tuple(q)] - zx for q, kk in zip(p.tolist(), kd.tolist()) if kk == 0]
                cnt = int((kd <= 1).sum()) if inc else len(terms)
                if cnt == 0:
                    raise ValueError("a window without input element (count_include_pad 0): a mean of nothing")
                idx = (i, j) + np.unravel_index(w, tuple(out))
                v[idx] = Fraction(sum(terms)) * r / cnt
                mag[idx] = Fraction(sum(abs(t) for t in terms)) * r / cnt
    if channels_last:
        v, mag = np.moveaxis(v, 1, -1), np.moveaxis(mag, 1, -1)
    return v, mag


def qlinear_average_pool(x, x_scale, x_zero_point, y_scale, y_zero_point, out_type: str, attrs,
                         channels_last: int = 0) -> np.ndarray:
    """onnxruntime's QLinearAveragePool: :func:`average_pool_parts` rounded half to even, ``+
    y_zero_point`` (0 when absent), saturated (QuantizeLinear's rule, what its kernel's MLAS
    quantization does).  Returns object ints.

    Raises:
        ValueError: as :func:`average_pool_parts`.
    """
    v, _ = average_pool_parts(x, x_scale, x_zero_point, y_scale, attrs, channels_last)
    zy = 0 if y_zero_point is None else _scalar(y_zero_point, "y_zero_point")
    return requantize(v, zy, out_type)


def robust_average_pool(v, mag, y_zero_point, out_type: str, count: int) -> np.ndarray:
    """Boolean mask of the QLinearAveragePool elements every legitimate kernel requantizes alike:
    an integer sum times a float32 multiplier (``SLACK_WHERE |v|``) or a float32 sum of up to
    ``count`` dequantized terms in any order and a division (``(count + 2) u mag``, u = 2**-24);
    no exact tie."""
    zy = 0 if y_zero_point is None else _scalar(y_zero_point, "y_zero_point")
    out = np.zeros(np.shape(v), dtype=bool)
    for i, (vi, mi) in enumerate(zip(np.asarray(v).ravel().tolist(), np.asarray(mag).ravel().tolist())):
        slack = SLACK_WHERE * abs(float(vi)) + (count + 2) * 2.0 ** -24 * float(mi)
        out.ravel()[i] = robust_value(Fraction(vi), slack, zy, out_type, False)
    return out


# ----------------------------------------------------------------------------- QLinearSoftmax
def softmax_parts(x, x_scale, x_zero_point, y_scale, axis: int, opset: int):
    """``(v, d)`` of onnxruntime's QLinearSoftmax (its documentation: ``Softmax(input, axis) =
    Exp(input) / ReduceSum(Exp(input), axis, keepdims=1)`` of the dequantized X, "for dimensions
    axis, or all dims along with axis according to op-version": the ``opset`` attribute < 13
    coerces X to ``[prod(shape[:axis]), prod(shape[axis:])]``, >= 13 normalizes along ``axis``
    alone): ``v = softmax(x_scale (X - x_zero_point)) / y_scale`` in float64 (the exponentials of
    differences from the row maximum; error ~1e-16, far below the robustness slack) as Fractions,
    and ``d`` the number of terms of each normalization.  An absent zero point is 0.

    Raises:
        ValueError: axis out of range, scales or zero points that are not scalars.
    """
    xs = exact(x)
    r = xs.ndim
    if not -r <= axis < max(r, 1):
        raise ValueError(f"axis {axis} outside [-{r}, {r - 1}]")
    sx, sy = float(_scalar(x_scale, "x_scale")), Fraction(_scalar(y_scale, "y_scale"))
    zx = 0 if x_zero_point is None else _scalar(x_zero_point, "x_zero_point")
    a = axis % r if r else 0
    real = np.asarray([float(int(q) - int(zx)) * sx for q in xs.ravel().tolist()], dtype=np.float64).reshape(
        xs.shape)
    if opset < 13:
        lead = int(np.prod(xs.shape[:a], dtype=np.int64))
        rows = real.reshape(lead, -1) if real.size else real.reshape(lead, 0) if lead else real.reshape(0, 1)
        m = rows.max(axis=1, keepdims=True) if rows.size else rows
        e = np.exp(rows - m)
        p = (e / e.sum(axis=1, keepdims=True)).reshape(xs.shape) if rows.size else real
        d = rows.shape[1] if rows.ndim == 2 else 1
    else:
        m = real.max(axis=a, keepdims=True) if real.size else real
        e = np.exp(real - m)
        p = e / e.sum(axis=a, keepdims=True) if real.size else real
        d = xs.shape[a] if r else 1
    v = np.empty(xs.shape, dtype=object)
    v.ravel()[:] = [Fraction(float(q)) / sy for q in np.asarray(p).ravel().tolist()]
    return v, int(d)


def qlinear_softmax(x, x_scale, x_zero_point, y_scale, y_zero_point, out_type: str, axis: int = -1,
                    opset: int = 13) -> np.ndarray:
    """onnxruntime's QLinearSoftmax: :func:`softmax_parts` rounded half to even, ``+ y_zero_point``,
    saturated (QuantizeLinear's rule).  Object ints of X's shape.

    Raises:
        ValueError: as :func:`softmax_parts`.
    """
    v, _ = softmax_parts(x, x_scale, x_zero_point, y_scale, axis, opset)
    return requantize(v, _scalar(y_zero_point, "y_zero_point"), out_type)


def robust_softmax(v, d: int, y_zero_point, out_type: str) -> np.ndarray:
    """Boolean mask of the QLinearSoftmax elements every float32 evaluation requantizes alike: more
    than ``(d + 8) u |v| + 2**-20`` from a rounding boundary (``u = 2**-24``: the float32
    exponentials, a sum of ``d`` of them in any order, the quotient and the product by
    ``1 / y_scale``; the absolute term for the tiny probabilities whose exponentials a float32
    table may flush); no tie (the exponentials are irrational)."""
    zy = _scalar(y_zero_point, "y_zero_point")
    out = np.zeros(np.shape(v), dtype=bool)
    for i, vi in enumerate(np.asarray(v).ravel().tolist()):
        slack = (d + 8) * 2.0 ** -24 * abs(float(vi)) + 2.0 ** -20
        out.ravel()[i] = robust_value(Fraction(vi), slack, zy, out_type, False)
    return out


# ----------------------------------------------------------------------------- QLinearConcat
def concat_parts(y_scale, triples, axis: int):
    """``(v, exact_ok)`` of onnxruntime's QLinearConcat (its documentation: "Concatenate a list of
    tensors into a single tensor", the variadic ``inputs`` being (tensor, scale, zero point)
    triples, Y's own scale and zero point first): each tensor's ``v = x_scale (X - x_zero_point) /
    Y_scale`` (Fractions), concatenated along ``axis``; ``exact_ok`` marks the elements whose
    float32 computation is exact (both scales powers of two).

    Raises:
        ValueError: no triple, scales or zero points that are not scalars, ranks or non-axis
            dimensions that differ, axis out of range.
    """
    if not triples:
        raise ValueError("at least one (tensor, scale, zero point) triple")
    sy = _scalar(y_scale, "Y_scale")
    parts, oks = [], []
    r = np.ndim(triples[0][0])
    if not -r <= axis < r:
        raise ValueError(f"axis {axis} outside [-{r}, {r - 1}]")
    a = axis % r
    for x, s, z in triples:
        xs = exact(x)
        if xs.ndim != r or any(xs.shape[i] != np.shape(triples[0][0])[i] for i in range(r) if i != a):
            raise ValueError("the inputs have the same shape except along axis")
        ratio = Fraction(_scalar(s, "scale")) / Fraction(sy)
        zz = _scalar(z, "zero point")
        v = np.empty(xs.shape, dtype=object)
        v.ravel()[:] = [(q - zz) * ratio for q in xs.ravel().tolist()]
        parts.append(v)
        oks.append(np.full(xs.shape, bool(is_pow2(_scalar(s, "scale")) and is_pow2(sy))))
    return np.concatenate(parts, axis=a), np.concatenate(oks, axis=a)


def qlinear_concat(y_scale, y_zero_point, triples, axis: int, out_type: str) -> np.ndarray:
    """onnxruntime's QLinearConcat: :func:`concat_parts` rounded half to even, ``+ Y_zero_point``,
    saturated (QuantizeLinear's rule; an input whose scale and zero point are Y's is copied, which
    the formula gives too).  Object ints.

    Raises:
        ValueError: as :func:`concat_parts`.
    """
    v, _ = concat_parts(y_scale, triples, axis)
    return requantize(v, _scalar(y_zero_point, "Y_zero_point"), out_type)
