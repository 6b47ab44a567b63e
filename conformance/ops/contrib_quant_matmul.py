"""onnxruntime's com.microsoft integer matrix products as entries of the operator table (family
``shaped``): MatMulInteger16 (1), MatMulIntegerToFloat (1), DynamicQuantizeMatMul (1) and QGemm
(1) (onnxruntime-defined: their oracles follow its schema docs and ContribOperators.md; see
:mod:`conformance.reference.contrib_quant_matmul`).

What the entries exercise:

* **types**: every combination the schemas allow (MatMulInteger16: int16/uint16 inputs,
  int32/uint32 output -- uint32 contested, see below; MatMulIntegerToFloat: int8/uint8 A and B,
  float/float16 scales and Y; DynamicQuantizeMatMul: int8/uint8 B; QGemm: int8/uint8 A and B,
  float, uint8 or int8 Y);
* **shapes**: 2-D, batched A with a 2-D B, batched both, broadcast batches, a 1-D A (and a 1-D
  B for MatMulInteger16), K = 0, long K (200-256 terms); QGemm: transA/transB, C absent, scalar,
  ``[N]``, ``[1, N]``, ``[M, 1]``, ``[M, N]``, K = 0;
* **quantization parameters**: zero points at the type's extremes, 0, the middle or drawn,
  present and absent where optional; b_scale / b_zero_point per tensor and per column of B
  (``[N]``); bias present and absent;
* **numerics classes**: ``int-range`` (data over the whole type range with its extremes; sums
  kept within the 32-bit output for MatMulInteger16), QGemm's ``requant`` / ``ties`` /
  ``saturate`` (QLinearMatMul's: every requantized element robust, exact ``.5`` ties with
  power-of-two scales that must round to even; for a float Y they choose the data only); DynamicQuantizeMatMul's
  ``dynamic`` (A from DynamicQuantizeLinear's table: the dynamic scale and zero point exact in
  float32, ties of ``A / scale`` that round to even);
* **tolerance**: exact for the integer outputs; for the float ones the float32 (float16: the
  output type's) evaluation bound, ``docs/tolerance.md``;
* **errors**: inner dimensions that differ, scales and zero points of shapes the documentation
  excludes, a zero point of another type, C that does not broadcast.

Left out, with the reason: a per-column ``a_scale`` of MatMulIntegerToFloat (documented: "the
number of columns of input 'A'", a scale per K that no integer kernel can factor out;
onnxruntime: "Per-Channel is not supported yet"); DynamicQuantizeMatMul with an empty or
all-zero A (DynamicQuantizeLinear's scale is 0: the text divides by it).
"""

from __future__ import annotations

import math

import numpy as np

from ..reference import contrib_quant_matmul as ref
from ..reference import linalg as laref
from ..reference import qlinear as qlref
from ..reference import quantize as qref
from ..tolerance import Tolerance
from . import values as V
from .. import coverage
from .engine import register_entries
from .entry import Attrs, Entry, Err, Shape
from .linalg import bound_tolerance
from .qlinear import draw_data, draw_scales, draw_zero_points, exact_tolerance, place_y_scale
from .quantize import dynamic_table

MS = "com.microsoft"
INT_RANGE, DYNAMIC = "int-range", "dynamic"
REQUANT, TIES, SATURATE = "requant", "ties", "saturate"
#: The unit roundoff of the float output types.
U = {"float": 2.0 ** -24, "float16": 2.0 ** -11}


def _obj(vals, shape) -> np.ndarray:
    out = np.empty(shape, dtype=object)
    out.ravel()[:] = [int(v) for v in np.asarray(vals).ravel().tolist()]
    return out


def float_tolerance(t: str, mag, bias: bool) -> Tolerance:
    """The tolerance of a float output ``acc * multiplier (+ bias)`` of type ``t`` (float or
    float16; docs/tolerance.md): the conversion of the integer accumulator, the multiplier's
    roundings (two: ``a_scale b_scale``, or QGemm's ``alpha a_scale b_scale``; or the product
    taken in two steps, per tensor then per column) and the product, each at most ``u`` of
    ``|acc * multiplier|`` (``mag``), in float32 or in the output type itself (float16): four
    roundings, ``4.5 u max(mag)`` with the second-order terms; the bias addition (``u |Y|``) and
    the expected value's own rounding to the output type (``u/2 |Y|``): ``rtol = 2 u``.  Without a
    bias every error is relative to the element: ``4 u + u/2``, ``rtol = 5 u``, no atol."""
    u = U[t]
    m = max((float(x) for x in np.asarray(mag, dtype=object).ravel().tolist()), default=0.0)
    if not bias:
        return Tolerance(0.0, 5.0 * u, variants=("bound",))
    return Tolerance(4.5 * u * m, 2.0 * u, variants=("bound",))


# ----------------------------------------------------------------------------- MatMulInteger16
def _mmi16_table(rng, ctx, shapes):
    """Data over each input type's range, bounded so that every sum of K products fits the
    output type (``K m^2 <= 2^31 - 1``, int32; uint32: non-negative data, ``K m^2 <= 2^32 - 1``);
    the bounds themselves, 0 and 1 among them."""
    k = max(int(shapes[0][-1]) if len(shapes[0]) else 1, 1)
    t3 = ctx.out_types["Y"]
    lim = 2 ** 31 - 1 if t3 == "int32" else 2 ** 32 - 1
    m = math.isqrt(lim // k)
    out = []
    for name, shp in zip(("A", "B"), shapes):
        lo, hi = qref._target_range(ctx.types[name])
        lo, hi = max(lo, -m, 0 if t3 == "uint32" else lo), min(hi, m)
        n = int(np.prod(shp, dtype=np.int64))
        pool = [lo, hi, 0, 1, min(hi, 2), max(lo, -1)]
        vals = [pool[int(rng.integers(0, len(pool)))] if rng.random() < 0.3 else int(rng.integers(lo, hi + 1))
                for _ in range(n)]
        out.append(_obj(vals, shp))
    return out


def mmi16_oracle(ctx, A, B, **attrs):
    """MatMulInteger16 (:func:`conformance.reference.contrib_quant_matmul.matmul_integer16`): object ints."""
    return ref.matmul_integer16(A, B)


def _mm_shapes(extra=None, one_d_b: bool = True, zero_k: bool = True, long_k=(200, 256)) -> tuple[Shape, ...]:
    extra = extra or {}

    def sh(name, a, b, per="", **kw):
        if not extra:  # no quantization parameters (MatMulInteger16): no granularity in the name
            name = name.split("/per-")[0]
        ins = {"A": a, "B": b}
        for k_, v in extra.items():  # per column and the bias: B's last dimension
            ins[k_] = (b[-1] if per else "") if k_ in ("b_scale", "b_zero_point") else b[-1] if k_ == "bias" else v
        return Shape(name, ins, **kw)

    out = [
        sh("2d/per-tensor", "MK", "KN"),
        sh("2d/per-column", "MK", "KN", "N"),
        sh("batch-a/per-column", "SMK", "KN", "N"),
        sh("batch/per-tensor", "SMK", "SKN"),
        sh("batch-broadcast/per-column", "S1MK", "1TKN", "N", dims={"S": (2, 2), "T": (2, 3)}),
        sh("1d-a/per-column", "K", "KN", "N"),
        sh("long-K/per-column", "2L", "L3", "3", dims={"L": long_k}),
    ]
    if one_d_b:
        out.append(sh("1d-b", "MK", "K"))
    if zero_k:
        out.append(sh("zero-K/per-column", "M0", "0N", "N", cycle=False))
    out.append(sh("zero-M", "0K", "KN", cycle=False))
    return tuple(out)


def _mmi16_contested(ctx, attrs) -> str | None:
    if ctx.out_types.get("Y") == "uint32":
        return ("T3 admits uint32, but onnxruntime's type inference of MatMulInteger16 makes Y int32 whatever "
                "the inputs (a uint32 Y is refused)")
    return None


MATMUL_INTEGER16 = Entry(
    "MatMulInteger16", mmi16_oracle, family="shaped", domain=MS, shapes=_mm_shapes(),
    int_numerics={INT_RANGE: _mmi16_table}, numerics_classes=lambda t: (INT_RANGE,), per_type=6,
    tolerance=exact_tolerance, contested=_mmi16_contested,
    errors=(Err("the inner dimensions differ (numpy.matmul: A [M, K] x B [K, N])", "inner-mismatch",
                shapes=((2, 3), (4, 2)), type_name="int16"),
            Err("A is int16/uint16 (T1): an int8 A", "A-type", types={"A": "int8"}, shapes=((2, 3), (3, 2)),
                type_name="int16")),
    notes={1: "onnxruntime-defined (com.microsoft): numpy.matmul of int16/uint16 inputs, int32/uint32 output; "
              "'The production MUST never overflow' (the cases keep every sum within the output type)"})


# ----------------------------------------------------------------------------- MatMulIntegerToFloat
MITF_NAMES = ("A", "B", "a_scale", "b_scale", "a_zero_point", "b_zero_point", "bias")
MITF_EXTRA = {"a_scale": "", "b_scale": "", "a_zero_point": "", "b_zero_point": "", "bias": "N"}


def _scales_for(rng, t: str, shape, k: int, other: float = 1.0) -> np.ndarray:
    """Random-mantissa scales of type ``t``; float16: small enough that ``K 255^2`` times the
    product of the two scales stays below 2^14 (no overflow of float16 outputs)."""
    s = np.asarray(draw_scales(rng, t, shape, False), dtype=np.float64)
    if t == "float16":
        cap = 2.0 ** 14 / (max(k, 1) * 255.0 * 255.0) / other
        s = np.asarray(V.representable(np.minimum(s, cap) * (1 - 0.1 * rng.random(np.shape(s))), t),
                       dtype=np.float64).reshape(shape)
        s = np.where(s == 0, 2.0 ** -14, s)
    return s


def _bias_for(rng, t: str, prod, shape) -> np.ndarray:
    """A bias of type ``t`` of the magnitude of the products (some elements cancel them)."""
    m = max((abs(float(x)) for x in np.asarray(prod, dtype=object).ravel().tolist()), default=1.0) or 1.0
    return np.asarray(V.representable(rng.uniform(-m, m, size=shape), t), dtype=np.float64).reshape(shape)


def _mitf_table(rng, ctx, shapes):
    present = [n for n in MITF_NAMES if n in ctx.types]
    sh = dict(zip(present, shapes))
    k = int(sh["A"][-1])
    t3 = ctx.types["a_scale"]
    vals = {}
    for d, z in (("A", "a_zero_point"), ("B", "b_zero_point")):
        t = ctx.types[d]
        zs = sh.get(z, ())
        zp = draw_zero_points(rng, t, zs)
        if z in sh:
            vals[z] = zp
        vals[d] = draw_data(rng, t, sh[d], None, False)
    vals["a_scale"] = _scales_for(rng, t3, sh["a_scale"], k)
    vals["b_scale"] = _scales_for(rng, t3, sh["b_scale"], k, float(np.asarray(vals["a_scale"]).ravel()[0]))
    if "bias" in sh:
        _, prod = ref.matmul_integer_to_float_parts(vals["A"], vals["a_scale"], vals.get("a_zero_point"), vals["B"],
                                                    vals["b_scale"], vals.get("b_zero_point"))
        vals["bias"] = _bias_for(rng, t3, prod, sh["bias"])
    return [vals[n] for n in present]


def mitf_oracle(ctx, A, B, a_scale, b_scale, a_zero_point=None, b_zero_point=None, bias=None, **attrs):
    """MatMulIntegerToFloat (:func:`conformance.reference.contrib_quant_matmul.matmul_integer_to_float`)."""
    return ref.matmul_integer_to_float(A, a_scale, a_zero_point, B, b_scale, b_zero_point, bias)


def _mitf_tol(ctx, inputs, attrs, outputs):
    a, b, sa, sb, za, zb, bias = (list(inputs) + [None] * 7)[:7]
    _, mag = ref.matmul_integer_to_float_parts(a, sa, za, b, sb, zb, None)
    return {"Y": float_tolerance(ctx.out_types["Y"], mag, bias is not None)}


def _mm_errors(names, required: int, types_a: str) -> tuple[Err, ...]:
    """Inner mismatch, a b_scale of the wrong length, a zero point of another type (``names``: the
    inputs in schema order, the first ``required`` of them required)."""
    def shapes(a, b, **over):
        last = max([required - 1] + [names.index(n) for n in over])
        return tuple(a if n == "A" else b if n == "B" else over.get(n, ()) for n in names[:last + 1])

    return (
        Err("the inner dimensions differ (numpy.matmul: A [M, K] x B [K, N])", "inner-mismatch",
            shapes=shapes((2, 3), (4, 2)), type_name=types_a),
        Err("b_scale is a scalar or has 'the number of columns of input B' elements (2), here 3", "b-scale-length",
            shapes=shapes((2, 3), (3, 2), b_scale=(3,), b_zero_point=(3,)), type_name=types_a),
        Err("b_zero_point has B's type T2 (int8 with a uint8 B)", "b-zero-point-type",
            types={"B": "uint8", "b_zero_point": "int8"}, shapes=shapes((2, 3), (3, 2), b_zero_point=()),
            type_name=types_a),
    )


MATMUL_INTEGER_TO_FLOAT = Entry(
    "MatMulIntegerToFloat", mitf_oracle, family="shaped", domain=MS, shapes=_mm_shapes(MITF_EXTRA, one_d_b=False),
    int_numerics={INT_RANGE: _mitf_table}, numerics_classes=lambda t: (INT_RANGE,), per_type=10,
    tolerance=_mitf_tol,
    errors=_mm_errors(MITF_NAMES, 4, "uint8") + (
        Err("a_zero_point has A's type T1 (int8 with a uint8 A)", "a-zero-point-type",
            types={"A": "uint8", "a_zero_point": "int8"}, shapes=((2, 3), (3, 2), (), (), ()), type_name="uint8"),
        Err("bias has Y's type T3 (a float16 bias with float scales)", "bias-type", types={"bias": "float16"},
            shapes=((2, 3), (3, 2), (), (), (), (), (2,)), type_name="uint8")),
    notes={1: "onnxruntime-defined (com.microsoft): Y = (A - a_zp) @ (B - b_zp) a_scale b_scale + bias "
              "(numpy.matmul); a_scale per tensor, b_scale/b_zero_point per tensor or per column of B; "
              "zero points default 0; float or float16 Y"})


# ----------------------------------------------------------------------------- DynamicQuantizeMatMul
DQMM_NAMES = ("A", "B", "b_scale", "b_zero_point", "bias")
DQMM_EXTRA = {"b_scale": "", "b_zero_point": "", "bias": "N"}


def _dqmm_table(rng, ctx, shapes):
    present = [n for n in DQMM_NAMES if n in ctx.types]
    sh = dict(zip(present, shapes))
    k = int(sh["A"][-1])
    vals = {"A": dynamic_table(rng, ctx, [sh["A"]])[0]}
    t = ctx.types["B"]
    if "b_zero_point" in sh:
        vals["b_zero_point"] = draw_zero_points(rng, t, sh["b_zero_point"])
    vals["B"] = draw_data(rng, t, sh["B"], None, False)
    vals["b_scale"] = _scales_for(rng, "float", sh["b_scale"], k)
    if "bias" in sh:
        _, prod = ref.dynamic_quantize_matmul_parts(vals["A"], vals["B"], vals["b_scale"], vals.get("b_zero_point"))
        vals["bias"] = _bias_for(rng, "float", prod, sh["bias"])
    return [vals[n] for n in present]


def dqmm_oracle(ctx, A, B, b_scale, b_zero_point=None, bias=None, **attrs):
    """DynamicQuantizeMatMul (:func:`conformance.reference.contrib_quant_matmul.dynamic_quantize_matmul`)."""
    return ref.dynamic_quantize_matmul(A, B, b_scale, b_zero_point, bias)


def _dqmm_tol(ctx, inputs, attrs, outputs):
    a, b, sb, zb, bias = (list(inputs) + [None] * 5)[:5]
    _, mag = ref.dynamic_quantize_matmul_parts(a, b, sb, zb, None)
    return {"Y": float_tolerance("float", mag, bias is not None)}


def _dqmm_shapes() -> tuple[Shape, ...]:
    # K 64-96: A's dynamic quantization table checks every element (explore-mode draws stay cheap)
    return tuple(s for s in _mm_shapes(DQMM_EXTRA, one_d_b=False, zero_k=False, long_k=(64, 96))
                 if not s.name.startswith("zero-"))


DYNAMIC_QUANTIZE_MATMUL = Entry(
    "DynamicQuantizeMatMul", dqmm_oracle, family="shaped", domain=MS, shapes=_dqmm_shapes(),
    float_numerics={DYNAMIC: _dqmm_table}, numerics_classes=lambda t: (DYNAMIC,), per_type=12,
    tolerance=_dqmm_tol, errors=_mm_errors(DQMM_NAMES, 3, "float"),
    notes={1: "onnxruntime-defined (com.microsoft): A quantized to uint8 as DynamicQuantizeLinear does, then "
              "MatMulIntegerToFloat with B's scale and zero point (per tensor or per column) and the bias"})


# ----------------------------------------------------------------------------- QGemm
QG_NAMES = ("A", "a_scale", "a_zero_point", "B", "b_scale", "b_zero_point", "C", "y_scale", "y_zero_point")


def _qg_class(num: str):
    """The numerics class ``num`` of QGemm: QLinearMatMul's (``requant``, ``ties``, ``saturate``:
    every requantized element robust, :func:`conformance.reference.qlinear.robust_value`) for a
    quantized Y; for a float Y the class only chooses the data (``ties``: power-of-two scales and
    small differences, the products exact; the others: the whole range)."""

    def table(rng, ctx, shapes):
        present = [n for n in QG_NAMES if n in ctx.types]
        sh = dict(zip(present, shapes))
        ta, tb = ctx.types["A"], ctx.types["B"]
        alpha = float(np.float32(ctx.attrs.get("alpha", 1.0)))
        ta_, tb_ = int(ctx.attrs.get("transA", 0) or 0), int(ctx.attrs.get("transB", 0) or 0)
        k = sh["A"][0] if ta_ else sh["A"][1]
        out_t = ctx.out_types["Y"]
        kind = num if qlref.is_pow2(alpha) or num != TIES else REQUANT
        pow2 = kind == TIES
        for attempt in range(60):
            vals = {"a_zero_point": draw_zero_points(rng, ta, sh["a_zero_point"]),
                    "b_zero_point": draw_zero_points(rng, tb, sh["b_zero_point"]),
                    "a_scale": draw_scales(rng, "float", sh["a_scale"], pow2),
                    "b_scale": draw_scales(rng, "float", sh["b_scale"], pow2)}
            zb = np.asarray(vals["b_zero_point"], dtype=object)
            zb_full = zb if zb.ndim == 0 else (zb.reshape(-1, 1) if tb_ else zb.reshape(1, -1))
            vals["A"] = draw_data(rng, ta, sh["A"], vals["a_zero_point"], pow2)
            vals["B"] = draw_data(rng, tb, sh["B"], np.broadcast_to(zb_full, sh["B"]), pow2)
            if "C" in sh:
                lim = 8 if pow2 else 255 * 255 * max(1, min(k, 16))
                vals["C"] = _obj(rng.integers(-lim, lim + 1, size=sh["C"]), sh["C"])
            if "y_scale" not in sh:  # a float Y: the class chose the data only
                return [vals[n] for n in present]
            vals["y_zero_point"] = draw_zero_points(rng, out_t, sh["y_zero_point"])

            def parts(sy):
                return ref.qgemm_parts(vals["A"], vals["a_scale"], vals["a_zero_point"], vals["B"], vals["b_scale"],
                                       vals["b_zero_point"], vals.get("C"), np.array(sy), alpha, ta_, tb_)

            if pow2:
                sy = float(np.asarray(vals["a_scale"]).ravel()[0]) * float(np.asarray(vals["b_scale"]).ravel()[0]) \
                    * float(rng.choice([2.0, 4.0]))
            else:
                v1, _ = parts(1.0)
                sy = place_y_scale(rng, "float", v1, out_t, kind)
            tie_ok = pow2 and qlref.is_pow2(alpha)
            for _ in range(1 if pow2 else 20):
                v, _ = parts(sy)
                z = qlref.exact(vals["y_zero_point"]).reshape(())
                ok = all(qlref.robust_value(vi, qlref.SLACK_REL * abs(float(vi)), z, out_t, tie_ok)
                         for vi in np.asarray(v).ravel().tolist())
                if ok:
                    vals["y_scale"] = np.array(sy, dtype=np.float64)
                    return [vals[n] for n in present]
                sy = float(V.representable(np.array([sy * (1 + float(rng.uniform(-0.02, 0.02)))]), "float")[0])
        raise ValueError("QGemm: no robust table found")

    table.__name__ = f"qgemm_{num.replace('-', '_')}"
    return table


def qgemm_oracle(ctx, A, a_scale, a_zero_point, B, b_scale, b_zero_point, C=None, y_scale=None, y_zero_point=None,
                 **attrs):
    """QGemm (:func:`conformance.reference.contrib_quant_matmul.qgemm`): float64 or object ints."""
    return ref.qgemm(A, a_scale, a_zero_point, B, b_scale, b_zero_point, C, y_scale, y_zero_point,
                     ctx.out_types["Y"], float(attrs.get("alpha", 1.0)), int(attrs.get("transA", 0)),
                     int(attrs.get("transB", 0)))


def _qg_tol(ctx, inputs, attrs, outputs):
    if ctx.out_types["Y"] != "float":
        return {"Y": Tolerance(0.0, 0.0, exact=True)}
    return {"Y": float_tolerance("float", (), False)}


def _qg_shapes() -> tuple[Shape, ...]:
    def sh(name, a, b, per="", c="N", attrs=None, **kw):
        return Shape(name, {"A": a, "B": b, "b_scale": per, "b_zero_point": per, "C": c}, dict(attrs or {}), **kw)

    return (
        sh("NN/per-tensor/C=[N]", "MK", "KN"),
        sh("NN/per-column/C=[M,N]", "MK", "KN", "N", "MN"),
        sh("TN/per-column/C=[1,N]", "KM", "KN", "N", "1N", {"transA": 1}),
        sh("NT/per-column/C=[M,1]", "MK", "NK", "N", "M1", {"transB": 1}),
        sh("TT/per-tensor/C=scalar", "KM", "NK", "", "", {"transA": 1, "transB": 1}),
        sh("NN/per-column/M=K", "MM", "MN", "N", "N", dims={"M": (3, 4)}),
        sh("long-K/per-column", "2L", "L3", "3", "3", dims={"L": (200, 256)}, numerics=(REQUANT, SATURATE)),
        # in the cycle (not only the fill step), so that the float/quantized Y rules hold for them too
        sh("zero-K/per-column", "M0", "0N", "N", "N"),
        sh("zero-M", "0K", "KN", "", "N"),
    )


def _qg_optional_rule(version: int, combo, optional) -> bool:
    """A float Y has neither y_scale nor y_zero_point; a quantized Y has both ("The output is full
    precision(float32) if it is not provided. Or the output is quantized")."""
    quant = combo.get("TY") != "float"
    return ("y_scale" in optional) == quant and ("y_zero_point" in optional) == quant


#: Why a float-Y combination of QGemm shows no TYZ (filtered and declared alike: one reason)
_QG_FLOAT_Y = "a float Y has no y_zero_point: no formal of the model binds TYZ (the uint8 combination stands for it)"


def _qg_type_filter(version: int, combo) -> str | None:
    if combo.get("TY") == "float" and combo.get("TYZ") != "uint8":
        return _QG_FLOAT_Y
    if combo.get("TY") != "float" and combo.get("TY") != combo.get("TYZ"):
        return "a quantized Y has y_zero_point's type (its quantization parameters); error case 'Y-type'"
    return None


def _qg_declared(version: int, combo) -> str | None:
    if combo.get("TY") == "float":
        return _QG_FLOAT_Y
    return None


def _qg_rule(version: int, num: str, attrs, optional) -> bool:
    """``ties`` only with a power-of-two alpha (the multiplier exact, so a tie is one)."""
    return num != TIES or qlref.is_pow2(float(np.float32(attrs.get("alpha", 1.0))))


QGEMM = Entry(
    "QGemm", qgemm_oracle, family="shaped", domain=MS, shapes=_qg_shapes(),
    int_numerics={n: _qg_class(n) for n in (REQUANT, TIES, SATURATE)},
    numerics_classes=lambda t: (REQUANT, TIES, SATURATE), numerics_rule=_qg_rule, per_type=12,
    tolerance=_qg_tol, optional_rule=_qg_optional_rule, type_filter=_qg_type_filter, declared=_qg_declared,
    attrs=(Attrs({"alpha": 0.5}), Attrs({"alpha": 1.7}, tag="alpha=1.7")),
    errors=(
        Err("the inner dimensions differ: A [2, 3] x B [4, 2]", "inner-mismatch",
            shapes=((2, 3), (), (), (4, 2), (), ()), type_name="uint8"),
        Err("a_scale 'is a scalar, which means a per-tensor quantization': a [2] a_scale", "a-scale-per-row",
            shapes=((2, 3), (2,), (), (3, 2), (), ()), type_name="uint8"),
        Err("b_scale is a scalar or has N = 2 elements (here 3)", "b-scale-length",
            shapes=((2, 3), (), (), (3, 2), (3,), (3,)), type_name="uint8"),
        Err("C 'should be unidirectional broadcastable to (M, N)': [3, 2] for (2, 2)", "C-broadcast",
            shapes=((2, 3), (), (), (3, 2), (), (), (3, 2)), type_name="uint8"),
        Err("a_zero_point has A's type TA (int8 with a uint8 A)", "a-zero-point-type",
            types={"A": "uint8", "a_zero_point": "int8"}, shapes=((2, 3), (), (), (3, 2), (), ()), type_name="uint8"),
        Err("a quantized Y has y_zero_point's type: an int8 Y with a uint8 y_zero_point", "Y-type",
            types={"A": "uint8", "a_zero_point": "uint8", "y_zero_point": "uint8"}, out_types={"Y": "int8"},
            shapes=((2, 3), (), (), (3, 2), (), (), (2,), (), ()), type_name="uint8"),
    ),
    notes={1: "onnxruntime-defined (com.microsoft): Y = alpha a_scale b_scale ((A' - a_zp)(B' - b_zp) + C), "
              "float without y_scale/y_zero_point, else requantized (half to even, saturation); b per tensor "
              "or per column; C int32 broadcast to (M, N)"})

# ----------------------------------------------------------------------------- MatMulNBits
NB_NAMES = ("A", "B", "scales", "zero_points", "g_idx", "bias")
NBITS = "nbits"
#: Placeholders of the required attributes (every pattern writes its own).
NB_REQUIRED = {"K": 32, "N": 3, "block_size": 16}
#: The unit roundoff of the types A may be downcast to (accuracy_level 2: float16, 3: bfloat16).
U_LEVEL = {2: 2.0 ** -11, 3: 2.0 ** -8}


def _nb_shape(name, k, n, bits, bs, a="MK", g_idx=False, write_bits=True, **kw) -> Shape:
    """One MatMulNBits pattern: K, N, bits and block_size fixed (attributes), B ``(N, k_blocks,
    blob_size)``, scales ``(N, k_blocks)``, zero points packed or unpacked by the combination."""
    kb = -(-k // bs)
    dims = {"K": (k, k), "N": (n, n), "Q": (kb, kb), "Z": (bs * bits // 8, bs * bits // 8), "M": (1, 4),
            **kw.pop("dims", {})}
    ins = {"A": a, "B": "NQZ", "scales": "NQ", "zero_points": "NQ", "g_idx": "K", "bias": "N"}
    # with g_idx (T4's only formal) the zero points too, so that such a case shows every type
    opt = (("zero_points", "g_idx"), ("zero_points", "g_idx", "bias")) if g_idx else \
        ((), ("zero_points",), ("bias",), ("zero_points", "bias"))
    attrs = {"K": k, "N": n, "bits": bits, "block_size": bs} if write_bits else {"K": k, "N": n, "block_size": bs}
    return Shape(name, ins, attrs, dims=dims, optional=opt, **kw)


def _nb_shapes() -> tuple[Shape, ...]:
    return (
        _nb_shape("b4/bs16/K=64/bits-default", 64, 5, 4, 16, write_bits=False),
        _nb_shape("b4/bs32/K=40/partial-block", 40, 3, 4, 32),
        _nb_shape("b4/bs16/K=48/batch", 48, 7, 4, 16, a="SMK", dims={"S": (2, 3)}),
        _nb_shape("b4/bs16/K=80/odd-blocks", 80, 3, 4, 16),
        _nb_shape("b4/bs16/K=32/M=1", 32, 6, 4, 16, a="1K"),
        _nb_shape("b2/bs16/K=32", 32, 4, 2, 16),
        _nb_shape("b2/bs32/K=72/odd-blocks", 72, 3, 2, 32),
        _nb_shape("b8/bs32/K=64", 64, 3, 8, 32),
        _nb_shape("b8/bs16/K=24/partial-block", 24, 4, 8, 16),
        _nb_shape("b4/bs64/K=200/long-K", 200, 2, 4, 64),
        _nb_shape("b4/bs16/K=32/g_idx", 32, 3, 4, 16, g_idx=True),
        _nb_shape("b4/bs16/K=32/zero-M", 32, 3, 4, 16, a="0K", cycle=False),
    )


def _nb_table(rng, ctx, shapes):
    """A over [-1, 1] in A's type; q uniform over the ``bits``-bit range (its ends included); the
    padding of the last block and of the packed zero points random (a kernel must ignore it);
    scales with random mantissas in [2^-6, 2^-2] (negative ones too), zero points packed (uint8)
    or unpacked (A's type: integers and halves), bias in A's type."""
    present = [x for x in NB_NAMES if x in ctx.types]
    sh = dict(zip(present, shapes))
    t1 = ctx.types["A"]
    k, n, bits, bs = (int(ctx.attrs[x]) for x in ("K", "N", "bits", "block_size"))
    kb, hi = -(-k // bs), (1 << bits) - 1
    vals = {"A": np.asarray(V.representable(rng.uniform(-1, 1, size=sh["A"]), t1), dtype=np.float64)}
    q = rng.integers(0, hi + 1, size=(n, kb * bs))
    q[:, 0], q[:, -1] = 0, hi
    vals["B"] = _obj(ref.pack_bits(q.reshape(n, kb, bs), bits, bs * bits // 8), (n, kb, bs * bits // 8))
    sc = np.exp2(rng.uniform(-6, -2, size=(n, kb))) * rng.choice([1.0, 1.0, -1.0], size=(n, kb))
    vals["scales"] = np.asarray(V.representable(sc, t1), dtype=np.float64).reshape(sh["scales"])
    if "zero_points" in sh:
        tz = ctx.types["zero_points"]
        z = rng.integers(0, hi + 1, size=(n, kb))
        if tz == "uint8":
            zb = -(-kb * bits // 8)
            vals["zero_points"] = _obj(ref.pack_bits(z, bits, zb, pad=rng.integers(0, hi + 1, size=(n, zb * 8))),
                                       (n, zb))
        else:
            zf = z + rng.choice([0.0, 0.0, 0.5], size=(n, kb))
            vals["zero_points"] = np.asarray(V.representable(zf, tz), dtype=np.float64).reshape(n, kb)
    if "g_idx" in sh:
        vals["g_idx"] = _obj(np.arange(k) // bs, (k,))
    if "bias" in sh:
        vals["bias"] = np.asarray(V.representable(rng.uniform(-2, 2, size=(n,)), t1), dtype=np.float64)
    return [vals[x] for x in present]


def nb_oracle(ctx, A, B, scales, zero_points=None, g_idx=None, bias=None, **attrs):
    """MatMulNBits (:func:`conformance.reference.contrib_quant_matmul.matmul_nbits`): float64."""
    return ref.matmul_nbits(A, B, scales, zero_points, bias, int(attrs["K"]), int(attrs["N"]),
                            int(attrs.get("bits", 4)), int(attrs["block_size"]), g_idx)


def _nb_tol(ctx, inputs, attrs, outputs):
    """The accumulation bound of ``A @ W^T + bias`` (docs/tolerance.md): Higham's ``gamma_{K+2}``
    at the accumulation precision (float32 for every A type, :data:`conformance.reference.linalg.ACC`)
    times ``|A| @ |W|^T + |bias|`` (the dequantized weight's rounding in A's type included: ``u_A``
    of the same sum), plus what ``accuracy_level`` allows: A downcast to float16 (2) or bfloat16
    (3), ``u`` of that type of the sum; A quantized to int8 per block (4), ``max |A_block| / 254``
    times the block's ``sum |W|``."""
    t = ctx.out_types["Y"]
    a, b, sc, zp, _, bias = (list(inputs) + [None] * 6)[:6]
    k, n, bits, bs = (int(attrs[x]) for x in ("K", "N", "bits", "block_size"))
    w = ref.nbits_weight(b, sc, zp, k, n, bits, bs)
    u, s = laref.ACC[t]
    a = np.asarray(a, dtype=np.float64)
    absum = laref.abs_matmul(a, np.abs(w.T))
    if bias is not None:
        absum = absum + np.abs(np.asarray(bias, dtype=np.float64))
    u_a = float(V.finfo(t).eps) / 2
    level = int(attrs.get("accuracy_level", 0) or 0)
    bound = (laref.gamma(k + 2, u) + u_a + U_LEVEL.get(level, 0.0)) * absum + (k + 2) * s
    if level == 4 and a.size:
        blk = np.arange(k) // bs
        amax = np.stack([np.abs(a[..., blk == j]).max(axis=-1) for j in range(-(-k // bs))], axis=-1)
        wsum = np.stack([np.abs(w[:, blk == j]).sum(axis=-1) for j in range(-(-k // bs))], axis=-1)  # (N, kb)
        bound = bound + np.matmul(amax, wsum.T) / 254.0 * (1 + 2.0 ** -20)
    return {"Y": bound_tolerance(t, bound, outputs["Y"])}


def _nb_type_filter(version: int, combo) -> str | None:
    if combo.get("T3") not in ("uint8", combo.get("T1")):
        return "unpacked zero_points have A's type (the documentation: 'Unpacked (same type as A)')"
    return None


def _nb_optional_rule(version: int, combo, optional) -> bool:
    """An unpacked (T3 = A's type) combination has its zero_points present (else T3 is bound by
    nothing and the uint8 combination stands for it)."""
    return combo.get("T3") == "uint8" or "zero_points" in optional


MATMUL_NBITS = Entry(
    "MatMulNBits", nb_oracle, family="shaped", domain=MS, shapes=_nb_shapes(),
    float_numerics={NBITS: _nb_table}, numerics_classes=lambda t: (NBITS,), per_type=12, tolerance=_nb_tol,
    type_filter=_nb_type_filter, optional_rule=_nb_optional_rule,
    # K, N and block_size are required: every state writes them (the pattern's own values win)
    attrs=tuple(Attrs({**NB_REQUIRED, **v}, tag=t) for t, v in (
        ("required-only", {}), ("explicit-default", {"accuracy_level": 0, "bits": 4, "weight_prepacked": 0}),
        ("accuracy_level=1", {"accuracy_level": 1}), ("accuracy_level=2", {"accuracy_level": 2}),
        ("accuracy_level=3", {"accuracy_level": 3}), ("accuracy_level=4", {"accuracy_level": 4}))),
    errors=(
        Err("B is (N, k_blocks, blob_size) = (3, 2, 8): here (3, 2, 4)", "B-shape",
            {"K": 32, "N": 3, "bits": 4, "block_size": 16}, ((2, 32), (3, 2, 4), (3, 2)), type_name="float"),
        Err("A's last dimension is K (32): here 16", "A-K", {"K": 32, "N": 3, "bits": 4, "block_size": 16},
            ((2, 16), (3, 2, 8), (3, 2)), type_name="float"),
        Err("scales have A's type T1 (float16 scales with a float A)", "scales-type",
            {"K": 32, "N": 3, "bits": 4, "block_size": 16}, ((2, 32), (3, 2, 8), (3, 2)), type_name="float",
            types={"scales": "float16"}),
        Err("block_size 'must be a power of two and >= 16': 8", "block-size-8",
            {"K": 32, "N": 3, "bits": 4, "block_size": 8}, ((2, 32), (3, 4, 4), (3, 4)), type_name="float"),
    ),
    notes={1: "onnxruntime-defined (com.microsoft): Y = A @ ((q - zero_point) scale)^T + bias, q packed "
              "low bits first block by block along K; zero points packed, unpacked (A's type) or 2^(bits-1); "
              "accuracy_level allows A downcast (2, 3) or quantized to int8 per block (4)"})

# ----------------------------------------------------------------------------- GatherBlockQuantized
GBQ_NAMES = ("data", "indices", "scales", "zero_points")
GBQ = "gather-table"
GBQ_FLOATS = ("float8e4m3fn", "float8e4m3fnuz", "float8e5m2", "float8e5m2fnuz", "float4e2m1")
OUT_OF_RANGE = "out-of-range"


def _gbq_table(rng, ctx, shapes):
    """data over its type's range (integers, extremes included; the finite float8/float4 grid),
    scales with random mantissas in [2^-6, 2^-1] of either sign, zero points over the data type's
    range, indices over ``[-s, s-1]`` (negative ones included; the ``out-of-range`` patterns add
    ``s`` and ``-s-1``, which give zeros)."""
    present = [x for x in GBQ_NAMES if x in ctx.types]
    sh = dict(zip(present, shapes))
    t1, t2 = ctx.types["data"], ctx.types["scales"]
    vals = {}
    if t1 in GBQ_FLOATS:
        fin = V.finite_grid(t1)
        vals["data"] = np.asarray(rng.choice(fin, size=sh["data"]), dtype=np.float64).reshape(sh["data"])
    else:
        lo, hi = (0, 255) if t1 == "uint8" else qref._target_range(t1)
        vals["data"] = _obj(np.concatenate([[lo, hi], rng.integers(lo, hi + 1, size=max(
            int(np.prod(sh["data"], dtype=np.int64)) - 2, 0))])[: int(np.prod(sh["data"], dtype=np.int64))]
            [rng.permutation(int(np.prod(sh["data"], dtype=np.int64)))], sh["data"])
        if "zero_points" in sh:
            vals["zero_points"] = _obj(rng.integers(lo, hi + 1, size=sh["zero_points"]), sh["zero_points"])
    sc = np.exp2(rng.uniform(-6, -1, size=sh["scales"])) * rng.choice([1.0, 1.0, -1.0], size=sh["scales"])
    vals["scales"] = np.asarray(V.representable(sc, t2), dtype=np.float64).reshape(sh["scales"])
    ga = int(ctx.attrs.get("gather_axis", 0) or 0)
    n = sh["data"][ga % len(sh["data"])]
    ni = int(np.prod(sh["indices"], dtype=np.int64))
    idx = rng.integers(-n, n, size=ni)
    vals["indices"] = _obj(idx, sh["indices"])
    return [vals[x] for x in present]


def _gbq_oor_table(rng, ctx, shapes):
    vals = _gbq_table(rng, ctx, shapes)
    present = [x for x in GBQ_NAMES if x in ctx.types]
    i = present.index("indices")
    ga = int(ctx.attrs.get("gather_axis", 0) or 0)
    n = shapes[0][ga % len(shapes[0])]
    idx = np.asarray(vals[i], dtype=object).copy()
    flat = idx.reshape(-1)
    if flat.size >= 2:
        flat[0], flat[-1] = n, -n - 1  # one past each end
    vals[i] = idx
    return vals


def gbq_oracle(ctx, data, indices, scales, zero_points=None, **attrs):
    """GatherBlockQuantized (:func:`conformance.reference.contrib_quant_matmul.gather_block_quantized`): float64."""
    return ref.gather_block_quantized(data, indices, scales, zero_points, data_type=ctx.types["data"],
                                      gather_axis=int(attrs.get("gather_axis", 0)),
                                      quantize_axis=int(attrs.get("quantize_axis", 1)),
                                      block_size=int(attrs.get("block_size", 128)), bits=int(attrs.get("bits", 4)))


def _gbq_shapes() -> tuple[Shape, ...]:
    def sh(name, data, idx, sc, attrs, dims, **kw):
        kw.setdefault("numerics", (GBQ,))  # out-of-range indices on their own pattern only
        return Shape(name, {"data": data, "indices": idx, "scales": sc, "zero_points": sc}, attrs, dims=dims, **kw)

    v = {"V": (4, 6), "I": (2, 4)}
    return (
        sh("2d/bs16/quantize_axis-default", "VK", "I", "VQ", {"block_size": 16}, {**v, "K": (32, 32), "Q": (2, 2)}),
        sh("2d/bs16/partial-block", "VK", "I", "VQ", {"block_size": 16, "quantize_axis": -1},
           {**v, "K": (40, 40), "Q": (3, 3)}),
        sh("2d/indices-2d", "VK", "IJ", "VQ", {"block_size": 32, "quantize_axis": 1},
           {**v, "J": (2, 3), "K": (64, 64), "Q": (2, 2)}),
        sh("2d/indices-scalar", "VK", "", "VQ", {"block_size": 16}, {**v, "K": (16, 16), "Q": (1, 1)}),
        sh("3d/bs32/quantize_axis=2", "VAK", "I", "VAQ", {"block_size": 32, "quantize_axis": 2},
           {**v, "A": (2, 3), "K": (64, 64), "Q": (2, 2)}),
        sh("2d/block_size-default-128", "VK", "I", "VQ", {}, {**v, "K": (256, 256), "Q": (2, 2)}),
        sh(f"2d/{OUT_OF_RANGE}", "VK", "I", "VQ", {"block_size": 16}, {**v, "I": (3, 5), "K": (32, 32), "Q": (2, 2)},
           numerics=(OUT_OF_RANGE,)),
        sh("2d/gather_axis=-2", "VK", "I", "VQ", {"block_size": 16, "gather_axis": -2},
           {**v, "K": (32, 32), "Q": (2, 2)}),
        # in the cycle: the fill step of a cycle=False pattern takes the first combination (float8) with every
        # optional input, which the float types forbid
        sh("empty-indices", "VK", "0", "VQ", {"block_size": 16}, {**v, "K": (32, 32), "Q": (2, 2)}),
    )


def _gbq_type_attrs(version: int, combo) -> dict:
    """uint8 data takes ``bits`` 8 in the shaped patterns (one value a byte: their logical shapes
    are the stored ones); the packed 2- and 4-bit layouts are :func:`gbq_packed_cases`."""
    return {"bits": 8} if combo.get("T1") == "uint8" else {}


def _gbq_optional_rule(version: int, combo, optional) -> bool:
    """"zero_points must not be provided when data is an FP8 or FP4 type"."""
    return combo.get("T1") not in GBQ_FLOATS or "zero_points" not in optional


def gbq_packed_cases(seed: int, depth: str = "full") -> list:
    """GatherBlockQuantized with uint8 data packed 2 or 4 values a byte (``bits`` 4, 2), built here
    (:attr:`Entry.extra_cases`: the shaped patterns hold logical shapes): data ``(V, K bits / 8)``
    packed low-order bits first along the last axis (the documentation), scales ``(V, K / block)``,
    zero points absent (``2^(bits - 1)``) or packed the same way along the block axis (``(V,
    ceil(blocks bits / 8))``: the documentation is silent; onnxruntime's kernel, read, packs them
    so), indices with negative and out-of-range values; exact."""
    from .. import registry
    from ..case import Case, DataSet, Input, Output
    from .values_common import EXACT

    out = []
    variants = [(bits, t2, zp, tind, k) for bits in (4, 2) for t2 in ("float", "float16")
                for zp, tind, k in ((True, "int32", 48), (False, "int64", 32))]
    if depth == "smoke":
        variants = variants[:1]
    for bits, t2, has_zp, tind, k in variants:
        rng = registry.case_rng(seed, "GatherBlockQuantized", "packed", bits, t2, has_zp, tind, k)
        v, bs = 5, 16
        nb, hi = k // bs, (1 << bits) - 1
        q = rng.integers(0, hi + 1, size=(v, k))
        data = ref.pack_bits(q, bits, k * bits // 8)
        sc = np.asarray(V.representable(np.exp2(rng.uniform(-6, -1, size=(v, nb))) *
                                        rng.choice([1.0, -1.0], size=(v, nb)), t2), dtype=np.float64)
        zb = -(-nb * bits // 8)
        zq = rng.integers(0, hi + 1, size=(v, nb))
        zp = ref.pack_bits(zq, bits, zb, pad=rng.integers(0, hi + 1, size=(v, zb * 8 // bits))) if has_zp else None
        idx = np.array([4, -1, 0, 5, -6, 2], dtype=np.int64)  # 5 and -6: out of range -> zeros
        y = ref.gather_block_quantized(_obj(q, q.shape), _obj(idx, idx.shape), sc,
                                       None if zp is None else _obj(zq, zq.shape), data_type="uint8",
                                       block_size=bs, bits=bits)
        feeds = {"data": data, "indices": idx.astype(np.int32 if tind == "int32" else np.int64),
                 "scales": V.to_type(sc, t2)}
        inputs = [Input("data", V.elem("uint8"), data.shape), Input("indices", V.elem(tind), idx.shape),
                  Input("scales", V.elem(t2), sc.shape)]
        if zp is not None:
            feeds["zero_points"] = zp
            inputs.append(Input("zero_points", V.elem("uint8"), zp.shape))
        attrs = {"bits": bits, "block_size": bs, "gather_axis": 0, "quantize_axis": 1}
        tag = f"packed/bits={bits}/K={k}"
        out.append(Case(op="GatherBlockQuantized", since_version=1, opset=1, attributes=attrs, inputs=inputs,
                        outputs=[Output("output", V.elem(t2), EXACT)],
                        datasets=[DataSet(feeds, {"output": V.to_type(y, t2)})],
                        tags={"dtype": "uint8", "numerics": "packed", "shape": tag, "opset": 1,
                              "optional_inputs": "zero_points" if zp is not None else "none"},
                        label=f"T1=uint8,T2={t2},Tind={tind}/{tag}/{'zp' if zp is not None else 'no-zp'}/opset1",
                        domain=MS))
    return out


GATHER_BLOCK_QUANTIZED = Entry(
    "GatherBlockQuantized", gbq_oracle, family="shaped", domain=MS, shapes=_gbq_shapes(),
    int_numerics={GBQ: _gbq_table, OUT_OF_RANGE: _gbq_oor_table},
    float_numerics={GBQ: _gbq_table, OUT_OF_RANGE: _gbq_oor_table},
    numerics_types={GBQ: GBQ_FLOATS + ("int4", "uint4", "uint8"), OUT_OF_RANGE: GBQ_FLOATS + ("int4", "uint4", "uint8")},
    numerics_classes=lambda t: (GBQ, OUT_OF_RANGE), per_type=3, tolerance=exact_tolerance,
    type_attrs=_gbq_type_attrs, optional_rule=_gbq_optional_rule, extra_cases=gbq_packed_cases,
    errors=(
        Err("block_size 'needs to be a power of 2 and not smaller than 16': 8", "block-size-8",
            {"block_size": 8}, ((4, 16), (2,), (4, 2)), type_name="int4"),
        Err("scales match data blocked along quantize_axis: (4, 3) for a (4, 32) data with block_size 16",
            "scales-shape", {"block_size": 16}, ((4, 32), (2,), (4, 3)), type_name="int4"),
        Err("'zero_points must not be provided when data is an FP8 or FP4 type'", "fp8-zero-points",
            {"block_size": 16}, ((4, 32), (2,), (4, 2), (4, 2)), type_name="float8e4m3fn"),
        Err("'For uint8 data, the gather_axis must be 0'", "uint8-gather-axis",
            {"block_size": 16, "gather_axis": 1, "quantize_axis": 0, "bits": 8}, ((32, 4), (2,), (2, 4)),
            type_name="uint8"),
    ),
    notes={1: "onnxruntime-defined (com.microsoft): Gather of the block-wise dequantized data "
              "((data - zero_point) scale along quantize_axis; float8/float4 data: data scale), out-of-range "
              "indices give zeros"})

ENTRIES = (MATMUL_INTEGER16, MATMUL_INTEGER_TO_FLOAT, DYNAMIC_QUANTIZE_MATMUL, QGEMM, MATMUL_NBITS,
           GATHER_BLOCK_QUANTIZED)
#: What no value case does, and why (coverage lists it with the reason).
coverage.DECLARED_UNEXERCISED[("com.microsoft:MatMulNBits", 1, "attribute weight_prepacked only given its default value")] = (
    "weight_prepacked 1 and 2 are CUDA SM80/SM90 fpA_intB layouts of B, for those execution providers only")
register_entries(ENTRIES, family="contrib_quant_matmul")

__all__ = ["ENTRIES", "MATMUL_INTEGER16", "MATMUL_INTEGER_TO_FLOAT", "DYNAMIC_QUANTIZE_MATMUL", "QGEMM",
           "MATMUL_NBITS", "GATHER_BLOCK_QUANTIZED", "float_tolerance"]
