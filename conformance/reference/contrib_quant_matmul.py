"""Oracles of onnxruntime's com.microsoft integer matrix products (onnxruntime-defined: the
schema docs in its registry, ``conformance.opspec.op_spec(op, "com.microsoft")``, and
ContribOperators.md; its CPU kernels read, not copied, where the documentation is silent):

* **MatMulInteger16**: "Matrix product that behaves like numpy.matmul", int16/uint16 inputs,
  int32/uint32 output; "The production MUST never overflow. The accumulation may overflow if
  and only if in 32 bits" -- the cases keep every sum within the output type, so the result is
  the exact integer product;
* **MatMulIntegerToFloat**: ``Y = (A - a_zero_point) @ (B - b_zero_point) * a_scale * b_scale
  + bias`` (numpy.matmul; a_scale per tensor, b_scale and b_zero_point per tensor or per column
  of B ``[N]``; zero points default 0; bias ``[N]``);
* **DynamicQuantizeMatMul**: A (float) quantized to uint8 first, as DynamicQuantizeLinear does
  (:func:`conformance.reference.quantize.dynamic_quantize_linear`: ``scale = (max(0, max A) -
  min(0, min A)) / 255`` in float32, the zero point rounded half to even), then
  MatMulIntegerToFloat with that scale and zero point;
* **QGemm**: ``Y = alpha a_scale b_scale[n] ((A' - a_zero_point) (B' - b_zero_point[n]) + C)``
  (``A' = A^T`` with transA, ``B' = B^T`` with transB; C int32 "quantized with zero_point = 0 and
  scale = alpha / beta * a_scale * b_scale", so it joins the integer accumulator; beta is 1);
  float output without y_scale/y_zero_point, else requantized: ``saturate(round(Y / y_scale) +
  y_zero_point)``, rounding half to even (MLAS's requantization), like QLinearMatMul.

Values are exact: the accumulator is a Python int, the real values Fractions; the float outputs
are rounded once by the engine, the quantized ones by :func:`conformance.reference.qlinear.requantize`.
"""

from __future__ import annotations

from fractions import Fraction

import numpy as np

from . import quantize as qref
from .qlinear import exact, requantize


def _col(p, n: int | None = None):
    """A per-tensor or per-column ([N]) parameter as an object array broadcasting against the
    last axis; ``None`` -> 0."""
    if p is None:
        return np.array(0, dtype=object)
    e = exact(p)
    if e.size == 1 and e.ndim <= 1:
        return e.reshape(())
    if e.ndim != 1 or (n is not None and e.shape[0] != n):
        raise ValueError(f"a per-column parameter has N = {n} elements, not {e.shape}")
    return e


def int_matmul(a, a_zero_point, b, b_zero_point) -> np.ndarray:
    """``(A - a_zero_point) @ (B - b_zero_point)`` with numpy.matmul's rules, exactly (object
    ints): a_zero_point per tensor; b_zero_point per tensor or per column of B (``[N]``);
    ``None`` is 0.

    Raises:
        ValueError: shapes numpy.matmul rejects, a zero point of another shape.
    """
    a, b = exact(a), exact(b)
    if a.ndim < 1 or b.ndim < 1:
        raise ValueError("rank-0 operand")
    za = _col(a_zero_point, 1)
    if za.ndim:
        raise ValueError("a_zero_point is per tensor (a scalar)")
    n = b.shape[-1] if b.ndim >= 2 else 1
    zb = _col(b_zero_point, n)
    if b.ndim == 1 and zb.ndim:
        raise ValueError("a 1-D B has one column: a per-tensor zero point")
    da = a - za
    db = b - zb
    return np.asarray(np.matmul(da, db), dtype=object) if da.size or db.size else \
        np.asarray(np.matmul(np.zeros(a.shape, dtype=np.int64), np.zeros(b.shape, dtype=np.int64)), dtype=object)


def matmul_integer16(a, b) -> np.ndarray:
    """MatMulInteger16: numpy.matmul of the exact integers (object ints)."""
    return int_matmul(a, None, b, None)


def matmul_integer_to_float_parts(a, a_scale, a_zero_point, b, b_scale, b_zero_point, bias=None):
    """``(Y, mag)`` of MatMulIntegerToFloat, exactly (Fractions): ``Y = acc a_scale b_scale[n] +
    bias[n]`` and ``mag = |acc a_scale b_scale[n]|`` (the product a kernel rounds before the bias),
    ``acc`` :func:`int_matmul`.

    Raises:
        ValueError: as :func:`int_matmul`; a_scale not per tensor, b_scale neither per tensor nor
            ``[N]``, bias not ``[N]``.
    """
    acc = int_matmul(a, a_zero_point, b, b_zero_point)
    n = np.shape(b)[-1] if np.ndim(b) >= 2 else 1
    sa = _col(a_scale, 1)
    if sa.ndim:
        raise ValueError("a_scale per tensor only (per column of A: documented, onnxruntime: 'not supported')")
    sb = _col(b_scale, n)
    prod = acc * (sa * sb)
    y = prod if bias is None else prod + _bias(bias, n)
    return np.asarray(y, dtype=object), np.asarray(np.abs(prod), dtype=object)


def _bias(bias, n: int):
    e = exact(bias)
    if e.shape != (n,):
        raise ValueError(f"bias is [N] = [{n}], not {e.shape}")
    return e


def to_float(v) -> np.ndarray:
    """Fractions -> float64 (correctly rounded)."""
    v = np.asarray(v, dtype=object)
    return np.array([float(x) for x in v.ravel().tolist()], dtype=np.float64).reshape(v.shape)


def matmul_integer_to_float(a, a_scale, a_zero_point, b, b_scale, b_zero_point, bias=None) -> np.ndarray:
    """MatMulIntegerToFloat (module docstring), float64 of numpy.matmul's output shape."""
    return to_float(matmul_integer_to_float_parts(a, a_scale, a_zero_point, b, b_scale, b_zero_point, bias)[0])


def dynamic_quantize_matmul_parts(a, b, b_scale, b_zero_point, bias=None):
    """``(Y, mag)`` of DynamicQuantizeMatMul (module docstring), exactly.

    Raises:
        ValueError: an empty or all-zero A (the dynamic scale divides by 0), as
            :func:`matmul_integer_to_float_parts`.
    """
    aq, sa, za = qref.dynamic_quantize_linear(np.asarray(a, dtype=np.float64))
    return matmul_integer_to_float_parts(aq, sa, za, b, b_scale, b_zero_point, bias)


def dynamic_quantize_matmul(a, b, b_scale, b_zero_point=None, bias=None) -> np.ndarray:
    """DynamicQuantizeMatMul (module docstring), float64."""
    return to_float(dynamic_quantize_matmul_parts(a, b, b_scale, b_zero_point, bias)[0])


def qgemm_parts(a, a_scale, a_zero_point, b, b_scale, b_zero_point, c=None, y_scale=None, alpha: float = 1.0,
                trans_a: int = 0, trans_b: int = 0):
    """``(v, mag)`` of QGemm, exactly: ``v = alpha a_scale b_scale[n] ((A' - a_zp)(B' - b_zp[n]) +
    C) [/ y_scale]`` (Fractions, ``(M, N)``) and ``mag = |v|``.  ``alpha`` is the float32 value
    the model stores.

    Raises:
        ValueError: A or B not 2-D, inner dimensions that differ, a scale or zero point of a
            shape the documentation excludes, C not unidirectionally broadcastable to (M, N).
    """
    a, b = exact(a), exact(b)
    if a.ndim != 2 or b.ndim != 2:
        raise ValueError("QGemm: A and B are 2-D")
    a = a.T if trans_a else a
    b = b.T if trans_b else b
    if a.shape[1] != b.shape[0]:
        raise ValueError(f"inner dimensions {a.shape} x {b.shape}")
    m, n = a.shape[0], b.shape[1]
    if np.shape(b_scale) != np.shape(b_zero_point):
        raise ValueError("b_scale and b_zero_point have one shape")
    for p, name in ((a_scale, "a_scale"), (a_zero_point, "a_zero_point"), (y_scale, "y_scale")):
        if p is not None and np.ndim(p) != 0:
            raise ValueError(f"{name} is a scalar")
    acc = int_matmul(a, a_zero_point, b, b_zero_point)
    if c is not None:
        ce = exact(c)
        if ce.ndim > 2 or np.broadcast_shapes(ce.shape, (m, n)) != (m, n):
            raise ValueError(f"C {ce.shape} is not unidirectionally broadcastable to {(m, n)}")
        acc = acc + ce
    mult = Fraction(float(np.float32(alpha))) * _col(a_scale, 1) * _col(b_scale, n)
    if y_scale is not None:
        mult = mult / _col(y_scale, 1)
    v = np.asarray(np.broadcast_to(acc, (m, n)) * mult, dtype=object)
    return v, np.asarray(np.abs(v), dtype=object)


def qgemm(a, a_scale, a_zero_point, b, b_scale, b_zero_point, c=None, y_scale=None, y_zero_point=None,
          out_type: str = "float", alpha: float = 1.0, trans_a: int = 0, trans_b: int = 0) -> np.ndarray:
    """QGemm (module docstring): float64 (``out_type`` float: y_scale and y_zero_point absent) or
    object ints ``saturate(round(v) + y_zero_point)`` rounded half to even (``out_type`` uint8 /
    int8).

    Raises:
        ValueError: as :func:`qgemm_parts`; only one of y_scale and y_zero_point present.
    """
    if (y_scale is None) != (y_zero_point is None):
        raise ValueError("y_scale and y_zero_point are both present (quantized Y) or both absent (float Y)")
    v, _ = qgemm_parts(a, a_scale, a_zero_point, b, b_scale, b_zero_point, c, y_scale, alpha, trans_a, trans_b)
    if y_scale is None:
        return to_float(v)
    return requantize(v, exact(y_zero_point).reshape(()), out_type)


# ----------------------------------------------------------------------------- MatMulNBits
def unpack_bits(packed, count: int, bits: int) -> np.ndarray:
    """The ``count`` unsigned ``bits``-bit values packed along the last axis of the uint8 array
    ``packed``, low-order bits first (MatMulNBits' documentation: "for 4 bits, the first 4 bits are
    stored in the lower 4 bits of a byte, and the second 4 bits are stored in the higher 4 bits");
    int64 of shape ``packed.shape[:-1] + (count,)``; the bits beyond ``count`` are ignored."""
    p = np.asarray(packed, dtype=np.uint8).astype(np.int64)
    per = 8 // bits
    shifts = np.arange(per, dtype=np.int64) * bits
    vals = (p[..., :, None] >> shifts) & ((1 << bits) - 1)
    vals = vals.reshape(p.shape[:-1] + (p.shape[-1] * per,))
    return vals[..., :count]


def pack_bits(vals, bits: int, nbytes: int, pad=None) -> np.ndarray:
    """The inverse of :func:`unpack_bits`: ``vals`` (ints in ``[0, 2^bits)``) packed low bits
    first along the last axis into ``nbytes`` bytes; the unused trailing positions take ``pad``
    (same leading shape, ints; default 0)."""
    v = np.asarray(vals, dtype=np.int64)
    per = 8 // bits
    total = nbytes * per
    full = np.zeros(v.shape[:-1] + (total,), dtype=np.int64)
    if pad is not None:
        full[..., v.shape[-1]:] = np.asarray(pad, dtype=np.int64)[..., : total - v.shape[-1]]
    full[..., : v.shape[-1]] = v
    full = full.reshape(v.shape[:-1] + (nbytes, per))
    out = np.zeros(v.shape[:-1] + (nbytes,), dtype=np.int64)
    for i in range(per):
        out |= (full[..., i] & ((1 << bits) - 1)) << (i * bits)
    return out.astype(np.uint8)


def nbits_weight(b, scales, zero_points, k: int, n: int, bits: int, block_size: int) -> np.ndarray:
    """The dequantized weight ``W`` (float64, ``(N, K)``) of MatMulNBits: ``W[n, k] = (q[n, k] -
    zp[n, k // block_size]) scale[n, k // block_size]`` with ``q`` unpacked from B ``(N, k_blocks,
    blob_size)`` block by block (the padding of the last block ignored); zero points packed
    (uint8, ``(N, ceil(k_blocks bits / 8))``), unpacked (A's type, ``(N, k_blocks)``) or absent
    (``2^(bits - 1)``); scales ``(N, k_blocks)`` (or flattened).

    Raises:
        ValueError: B, scales or zero points of another shape than the documentation's.
    """
    kb = -(-k // block_size)
    blob = block_size * bits // 8
    b = np.asarray(b)
    if b.shape != (n, kb, blob):
        raise ValueError(f"B is (N, k_blocks, blob_size) = {(n, kb, blob)}, not {b.shape}")
    q = unpack_bits(b, block_size, bits).reshape(n, kb * block_size)[:, :k]
    s = np.asarray(scales, dtype=np.float64)
    if s.size != n * kb:
        raise ValueError(f"scales has N * k_blocks = {n * kb} elements, not {s.size}")
    s = s.reshape(n, kb)
    if zero_points is None:
        z = np.full((n, kb), 2.0 ** (bits - 1))
    elif np.asarray(zero_points).dtype == np.uint8 or np.asarray(zero_points).dtype == object:
        zp = np.asarray(zero_points, dtype=np.int64).astype(np.uint8)
        zb = -(-kb * bits // 8)
        if zp.size != n * zb:
            raise ValueError(f"packed zero_points is (N, ceil(k_blocks bits / 8)) = {(n, zb)}, not {zp.shape}")
        z = unpack_bits(zp.reshape(n, zb), kb, bits).astype(np.float64)
    else:
        z = np.asarray(zero_points, dtype=np.float64)
        if z.size != n * kb:
            raise ValueError(f"unpacked zero_points is (N, k_blocks) = {(n, kb)}, not {z.shape}")
        z = z.reshape(n, kb)
    blk = np.arange(k) // block_size
    return (q - z[:, blk]) * s[:, blk]


def matmul_nbits(a, b, scales, zero_points, bias, k: int, n: int, bits: int, block_size: int,
                 g_idx=None) -> np.ndarray:
    """MatMulNBits (onnxruntime's documentation): ``Y = A @ W^T + bias`` with W
    :func:`nbits_weight`, float64 of shape ``A.shape[:-1] + (N,)``.  ``g_idx`` (deprecated)
    must be the identity grouping ``k // block_size`` (the only one the cases use).

    Raises:
        ValueError: A's last dimension is not K; as :func:`nbits_weight`; another g_idx.
    """
    a = np.asarray(a, dtype=np.float64)
    if a.shape[-1] != k:
        raise ValueError(f"A's last dimension is K = {k}, not {a.shape[-1]}")
    if g_idx is not None and not np.array_equal(np.asarray(g_idx, dtype=np.int64), np.arange(k) // block_size):
        raise ValueError("g_idx other than k // block_size: undocumented (deprecated input)")
    w = nbits_weight(b, scales, zero_points, k, n, bits, block_size)
    y = np.matmul(a, w.T)
    if bias is not None:
        bb = np.asarray(bias, dtype=np.float64)
        if bb.shape != (n,):
            raise ValueError(f"bias is [N] = [{n}], not {bb.shape}")
        y = y + bb
    return y


# ----------------------------------------------------------------------------- GatherBlockQuantized
def gather_block_quantized(data, indices, scales, zero_points, *, data_type: str, gather_axis: int = 0,
                           quantize_axis: int = 1, block_size: int = 128, bits: int = 4) -> np.ndarray:
    """onnxruntime's GatherBlockQuantized (its documentation): ``data`` dequantized block-wise along
    ``quantize_axis`` -- ``(data - zero_point[block]) * scale[block]``, the zero point 0 for
    int4/uint4 when absent, ``2^(bits - 1)`` for uint8, none for the float8/float4 types (block_size
    0: one block over the whole axis; a scales dimension of 1 on another axis broadcasts) -- then
    gathered along ``gather_axis`` like Gather, except that an index outside ``[-s, s-1]`` gives
    zeros.  ``data`` as exact values (object ints; float64 for the floating types), logical
    (unpacked) shape; uint8 only with ``bits`` 8 here.  Returns float64 of Gather's output shape.

    Raises:
        ValueError: what the documentation excludes: a block_size that is not a power of two >= 16
            (or 0 for the floating types), zero points with floating data, scales or zero points of
            another shape, uint8 with gather_axis other than 0 or quantize_axis other than the last.
    """
    floating = data_type not in ("int4", "uint4", "uint8")
    d = np.asarray(data, dtype=np.float64)
    r = d.ndim
    if r < 1:
        raise ValueError("data has rank >= 1")
    ga, qa = gather_axis % r, quantize_axis % r
    if not (-r <= gather_axis < r and -r <= quantize_axis < r):
        raise ValueError("axis out of range")
    if block_size == 0 and floating:
        bs = max(d.shape[qa], 1)
    elif block_size >= 16 and block_size & (block_size - 1) == 0:
        bs = block_size
    else:
        raise ValueError("block_size is a power of 2 and not smaller than 16 (or 0 for FP8/FP4 data)")
    if data_type == "uint8" and (ga != 0 or qa != r - 1):
        raise ValueError("uint8 data: gather_axis 0 and quantize_axis the last")
    if floating and zero_points is not None:
        raise ValueError("zero_points must not be provided when data is an FP8 or FP4 type")
    s = np.asarray(scales, dtype=np.float64)
    nb = -(-d.shape[qa] // bs)
    if s.ndim != r or s.shape[qa] != nb or any(
            s.shape[i] != d.shape[i] and not (floating and s.shape[i] == 1) for i in range(r) if i != qa):
        raise ValueError(f"scales {s.shape} do not match data {d.shape} blocked by {bs} along axis {qa}")

    def expand(p):
        p = np.take(np.repeat(p, bs, axis=qa), np.arange(d.shape[qa]), axis=qa)
        return np.broadcast_to(p, d.shape)

    if zero_points is None:
        z = 2.0 ** (bits - 1) if data_type == "uint8" else 0.0
    else:
        zz = np.asarray(zero_points, dtype=np.float64)
        if zz.shape != s.shape:
            raise ValueError("scales and zero_points have one shape")
        z = expand(zz)
    deq = (d - z) * expand(s)
    idx = np.asarray(indices, dtype=np.int64)
    n = d.shape[ga]
    valid = (idx >= -n) & (idx < n)
    pick = np.where(valid, np.where(idx < 0, idx + n, idx), 0)
    out = np.take(deq, pick, axis=ga)
    mask = valid.reshape((1,) * ga + idx.shape + (1,) * (r - ga - 1))
    return np.where(mask, out, 0.0)
