"""The integer kernels of quantization as entries of the operator table (family ``shaped``):
QLinearMatMul (ai.onnx 10, 21), ConvInteger (10) and QLinearConv (10), and onnxruntime's
com.microsoft QLinearAdd (1) and QLinearMul (1) (onnxruntime-defined: their oracles follow its
schema docs; see the last section).

Exact oracles and the robustness rule: :mod:`conformance.reference.qlinear` (integer
accumulation, exact requantization rounded half to even, saturation); the convolution geometry
(pads, strides, dilations, group, auto_pad, kernel_shape) is Conv's,
:func:`conformance.reference.conv.conv_geometry`.  What the entries add:

* **numerics classes** (one value table per case, drawn until every output element is robust,
  :func:`conformance.reference.qlinear.robust_mask`): ``requant`` (the inputs over their whole
  range, zero points at the type's extremes, 0, the middle or drawn; scales with random
  mantissas, so the multiplier ``a_scale * b_scale / y_scale`` is inexact in float32; y_scale
  placed so that the outputs fill the output type and a few saturate), ``ties`` (powers of two
  for every scale and small ``x - zero_point``: ``y_scale = a_scale * b_scale * 2`` or ``* 4``
  makes exact ``.5`` ties of both parities, which must round to even), ``saturate`` (y_scale
  small: most outputs beyond the type's range at both ends); float8 inputs and outputs
  (QLinearMatMul-21) draw from the float8 grid with a zero zero point and take ``requant``;
* **shapes**: QLinearMatMul per tensor, per row of ``a`` (``[M]``, ``[..., M, 1]``) and per
  column of ``b`` (``[N]``, ``[..., 1, N]``), ``[1]``, a batched ``a`` with a 2-D ``b``,
  ``M == K`` (a per-row scale applied along K gives a wrong value), K = 0, a 1-D ``a``, long K;
  the convolutions 1-D, 2-D, 3-D with Conv's attribute states (pads, asymmetric pads, strides,
  dilations, SAME_UPPER/SAME_LOWER with an odd total padding, VALID, group 2, depthwise,
  kernel_shape given), per-tensor and per-output-channel weight scales and zero points, B
  present and absent (QLinearConv), x_zero_point / w_zero_point present and absent
  (ConvInteger), an empty batch;
* **tolerance**: exact (the robust elements' results are the same for every legitimate kernel).

**com.microsoft QLinearAdd / QLinearMul** (onnxruntime-defined): ``C = (A_scale (A - A_zp) +
B_scale (B - B_zp)) / C_scale + C_zp`` and ``C = (A - A_zp)(B - B_zp) A_scale B_scale / C_scale +
C_zp`` with numpy broadcasting, scalar scales and zero points (absent: 0).  The schema names no
rounding and no saturation: the oracle rounds half to even and saturates (QuantizeLinear's rule,
what onnxruntime's kernels do) and the cases hold no element near a tie
(:func:`conformance.reference.qlinear.robust_binary`).  Contested: A_zero_point or B_zero_point
absent (the schema: optional, "Default value is 0"; onnxruntime's type inference rejects such a
model).  Error cases: a zero point of another type, shapes that do not broadcast, a per-axis
scale, a ``[1]`` scale ("It's a scalar"; onnxruntime's inference: "must be a scalar").
"""

from __future__ import annotations

import numpy as np

from ..reference import qlinear as ref
from ..reference import quantize as qref
from ..tolerance import Tolerance
from . import values as V
from .conv import _CONV_ERRORS, CONV_SHAPES
from .engine import register_entries
from .entry import Entry, Err, Shape

REQUANT, TIES, SATURATE = "requant", "ties", "saturate"
#: Powers of two of the ``ties`` class's input scales.
POW2 = (2.0 ** -3, 2.0 ** -4, 2.0 ** -5, 2.0 ** -6, 2.0 ** -7)


def _classes(t: str) -> tuple[str, ...]:
    return (REQUANT, TIES, SATURATE) if V.kind(t) == V.INT else (REQUANT,)


def _obj(vals, shape) -> np.ndarray:
    out = np.empty(shape, dtype=object)
    out.ravel()[:] = [int(v) for v in np.asarray(vals).ravel().tolist()]
    return out


def _is_float(t: str) -> bool:
    return V.kind(t) == V.FLOAT


def _grid(t: str, lim: float = 8.0) -> np.ndarray:
    fin = V.finite_grid(t)
    return fin[np.abs(fin) <= lim]


def _zero_points(rng, t: str, shape) -> np.ndarray:
    """Zero points of the integer type ``t``: its extremes, 0, the middle, or drawn; float8: 0."""
    if _is_float(t):
        return np.zeros(shape, dtype=np.float64)
    lo, hi = qref._target_range(t)
    cands = [lo, hi, 0 if lo <= 0 <= hi else lo, (lo + hi) // 2]
    n = int(np.prod(shape, dtype=np.int64))
    vals = [cands[int(i)] if i < 4 else int(rng.integers(lo, hi + 1)) for i in rng.integers(0, 7, size=n)]
    return _obj(vals, shape)


def _data(rng, t: str, shape, zp, small: bool) -> np.ndarray:
    """Quantized data of type ``t``: the whole range (with its extremes), or ``zp + d`` with a
    small ``d`` in [-3, 3] (clipped into the type); float8: the grid within [-8, 8]."""
    if _is_float(t):
        g = _grid(t, 2.0 if small else 8.0)
        return np.asarray(rng.choice(g, size=shape), dtype=np.float64).reshape(shape)
    lo, hi = qref._target_range(t)
    if small:
        z = np.broadcast_to(np.asarray(zp, dtype=object), shape) if np.ndim(zp) == 0 else None
        z = np.broadcast_to(zp, shape) if z is None else z
        d = rng.integers(-3, 4, size=shape)
        return _obj([min(hi, max(lo, int(a) + int(b))) for a, b in zip(np.asarray(z).ravel().tolist(),
                                                                         d.ravel().tolist())], shape)
    n = int(np.prod(shape, dtype=np.int64))
    pool = np.concatenate([rng.integers(lo, hi + 1, size=n), [lo, hi]])
    return _obj(rng.choice(pool, size=n), shape)


def _scales(rng, t: str, shape, pow2: bool) -> np.ndarray:
    """Positive scales of type ``t``: powers of two, or random mantissas in [2^-5, 1]."""
    if pow2:
        vals = rng.choice(POW2, size=shape)
    else:
        vals = np.exp2(rng.uniform(-5.0, 0.0, size=shape))
    return V.representable(np.asarray(vals, dtype=np.float64).reshape(shape), t)


def _y_scale(rng, t_scale: str, v1, out_type: str, num: str) -> float:
    """A y_scale placing ``max |v1|`` (the real values at ``y_scale = 1``) at a multiple of the
    output type's half range: below it (no saturation), around it, or far beyond (``saturate``)."""
    m = max((abs(float(x)) for x in np.asarray(v1, dtype=object).ravel().tolist()), default=0.0)
    if m == 0.0:
        return 1.0
    if _is_float(out_type):
        r = float(np.abs(_grid(out_type, np.inf)).max())
    else:
        lo, hi = qref._target_range(out_type)
        r = (hi - lo) / 2
    f = float(rng.choice([0.08, 0.15, 0.3])) if num == SATURATE else float(rng.choice([0.7, 1.0, 1.3, 2.5]))
    return max(float(V.representable(np.array([m / r * f]), t_scale)[0]), 2.0 ** -14)


def _robust_table(rng, ctx, num, draw, parts, names, k):
    """Draw ``draw(pow2)`` -> (values by formal name, scales) until every output element is
    robust (:func:`conformance.reference.qlinear.robust_mask`): y_scale is nudged between
    tries; the last resort is a table of powers of two (exact)."""
    out_type = ctx.out_types["y"]
    float_in = any(_is_float(ctx.types[n]) for n in names)
    pow2 = num == TIES
    vals = draw(pow2)
    ts = ctx.types["y_scale"]
    sy = None
    for attempt in range(40):
        if sy is None:
            v1, _ = parts(vals, 1.0)
            if num == TIES:
                sy = float(np.prod([float(vals[s].ravel()[0]) for s in _scale_names(ctx)])) * float(rng.choice([2, 4]))
            else:
                sy = _y_scale(rng, ts, v1, out_type, num)
        v, mag = parts(vals, sy)
        scales = [vals[s] for s in _scale_names(ctx)] + [np.array(sy)]
        ok = ref.robust_mask(v, mag, vals["y_zero_point"], out_type, float_in, k, scales, ctx.version)
        if ok.all():
            vals["y_scale"] = np.array(sy, dtype=np.float64)
            return vals
        sy = float(V.representable(np.array([sy * (1 + float(rng.uniform(-0.02, 0.02)))]), ts)[0])
        if attempt == 20:
            vals = draw(True)
            sy = None
    raise ValueError(f"{ctx.op}: no robust table found")


def _scale_names(ctx) -> tuple[str, str]:
    return ("a_scale", "b_scale") if "a_scale" in ctx.types else ("x_scale", "w_scale")


def _exact_tol(ctx, inputs, attrs, outputs):
    return {k: Tolerance(0.0, 0.0, exact=True, signed_zero=False) for k in outputs}


#: Public names of the value-table helpers above, reused by onnxruntime's contrib quantized
#: operators (:mod:`conformance.ops.contrib_quant_matmul`): zero points, quantized data, scales,
#: a y_scale placing the outputs over the output type, the exact tolerance.
draw_zero_points, draw_data, draw_scales, place_y_scale, exact_tolerance = _zero_points, _data, _scales, _y_scale, \
    _exact_tol


# ----------------------------------------------------------------------------- QLinearMatMul
MM_NAMES = ("a", "a_scale", "a_zero_point", "b", "b_scale", "b_zero_point", "y_scale", "y_zero_point")


def _mm_class(num: str):
    """The numerics class ``num`` of QLinearMatMul (module docstring)."""

    def table(rng, ctx, shapes):
        return _mm_table(rng, ctx, shapes, num)

    table.__name__ = f"qlinear_matmul_{num}"
    return table


def _mm_table(rng, ctx, shapes, num):
    """The value table of a QLinearMatMul case of numerics class ``num`` (module docstring)."""
    sh = dict(zip(MM_NAMES, shapes))
    k = sh["a"][-1] if len(sh["a"]) else 0

    def draw(pow2):
        za = _zero_points(rng, ctx.types["a_zero_point"], sh["a_zero_point"])
        zb = _zero_points(rng, ctx.types["b_zero_point"], sh["b_zero_point"])
        small = pow2
        vals = {
            "a": _data(rng, ctx.types["a"], sh["a"], _layout_a(za, sh["a"]), small),
            "a_scale": _scales(rng, ctx.types["a_scale"], sh["a_scale"], pow2), "a_zero_point": za,
            "b": _data(rng, ctx.types["b"], sh["b"], zb, small),
            "b_scale": _scales(rng, ctx.types["b_scale"], sh["b_scale"], pow2), "b_zero_point": zb,
            "y_zero_point": _zero_points(rng, ctx.types["y_zero_point"], sh["y_zero_point"]),
        }
        return vals

    def parts(vals, sy):
        return ref.matmul_parts(vals["a"], vals["a_scale"], vals["a_zero_point"], vals["b"], vals["b_scale"],
                                vals["b_zero_point"], np.array(sy))

    vals = _robust_table(rng, ctx, num, draw, parts, ("a", "b"), k)
    return [vals[n] for n in MM_NAMES]


def _layout_a(za, a_shape):
    """a's zero point broadcast to a's shape (``[M]`` is one per row)."""
    z = np.asarray(za, dtype=object)
    if z.ndim == 1 and z.size > 1 and len(a_shape) >= 2:
        z = z.reshape(-1, 1)
    return np.broadcast_to(z, a_shape)


def mm_oracle(ctx, a, a_scale, a_zero_point, b, b_scale, b_zero_point, y_scale, y_zero_point, **attrs):
    """QLinearMatMul (:func:`conformance.reference.qlinear.qlinear_matmul`)."""
    return ref.qlinear_matmul(a, a_scale, a_zero_point, b, b_scale, b_zero_point, y_scale, y_zero_point,
                              ctx.out_types["y"], ctx.version)


def _mm_shapes() -> tuple[Shape, ...]:
    def sh(name, a, b, sa, sb, **kw):
        return Shape(name, {"a": a, "a_scale": sa, "a_zero_point": sa, "b": b, "b_scale": sb, "b_zero_point": sb},
                     **kw)

    return (
        sh("2d/per-tensor", "MK", "KN", "", ""),
        sh("2d/per-row,per-column", "MK", "KN", "M", "N"),
        sh("2d/per-tensor,per-column", "MK", "KN", "", "N"),
        sh("2d/[1],[1]", "MK", "KN", "1", "1"),
        sh("batch/per-row,per-column", "SMK", "SKN", "SM1", "S1N"),
        sh("batch-a/per-tensor", "SMK", "KN", "", ""),
        sh("M=K/per-row,per-tensor", "MM", "MN", "M", ""),
        sh("1d-a/per-tensor", "K", "KN", "", ""),
        sh("1d-b/per-row", "MK", "K", "M", ""),
        sh("batch-broadcast/per-row,per-column", "S1MK", "1TKN", "S1M1", "1T1N", dims={"S": (2, 2), "T": (3, 3)}),
        sh("zero-K", "M0", "0N", "", "N", cycle=False),
        sh("long-K/per-column", "2L", "L3", "", "3", dims={"L": (200, 256)}, numerics=(REQUANT, SATURATE)),
    )


def _mm_per_type(version: int, combo) -> int:
    if all(V.kind(t) == V.INT for k, t in combo.items() if k != "TS"):
        return 12 if version < 21 else 4
    return 0


_MM_ERRORS = (
    Err("the inner dimensions differ (numpy.matmul: a [M, K] x b [K, N])", "inner-mismatch",
        shapes=((2, 3), (), (), (4, 2), (), (), (), ()), type_name="uint8"),
    Err("a_zero_point has a's type T1 (here int8 with a uint8 a)", "a-zero-point-type",
        types={"a": "uint8", "a_zero_point": "int8"}, shapes=((2, 3), (), (), (3, 2), (), (), (), ()),
        type_name="uint8"),
    Err("a_scale is tensor(float) at version 10 (here double)", "scale-type", types={"a_scale": "double"},
        shapes=((2, 3), (), (), (3, 2), (), (), (), ()), type_name="uint8", until=20),
    Err("'Scale and zero point must have same shape': a per-row a_scale [2] with a scalar a_zero_point",
        "scale-zero-point-shapes", shapes=((2, 3), (2,), (), (3, 2), (), (), (), ()), type_name="uint8"),
    Err("per column of b: b_scale and b_zero_point have N = 2 elements, not 3", "per-column-length",
        shapes=((2, 3), (), (), (3, 2), (3,), (3,), (), ()), type_name="uint8"),
)

QLINEAR_MATMUL = Entry(
    "QLinearMatMul", mm_oracle, family="shaped", shapes=_mm_shapes(),
    int_numerics={n: _mm_class(n) for n in (REQUANT, TIES, SATURATE)}, float_numerics={REQUANT: _mm_class(REQUANT)},
    numerics_classes=_classes, per_type=_mm_per_type, tolerance=_exact_tol, errors=_MM_ERRORS,
    notes={10: "int8/uint8; scales float; per tensor, per row of a, per column of b",
           21: "float16/bfloat16 scales (TS), float8 a, b and y"})


# ----------------------------------------------------------------------------- convolutions
def _conv_patterns(zp_names, scale_names=()) -> tuple[Shape, ...]:
    """Conv's shape table (:data:`conformance.ops.conv.CONV_SHAPES`: every attribute state and
    spatial rank) with X, W, B renamed x, w, B and the weight's scale and zero point per output
    channel (``[M]``, the template of W's first dimension) on every other pattern, per tensor on
    the others; both for the 2-D 3x3 pattern.  The long sums keep one pattern (1152 terms)."""
    out = []
    for i, sh in enumerate(CONV_SHAPES):
        if sh.name.startswith("long-K") and sh.name != "long-K/3x3":
            continue
        base = {"x": sh.inputs["X"], "w": sh.inputs["W"], "B": sh.inputs["B"]}
        m = sh.inputs["W"][0]
        pers = ("per-channel", "per-tensor") if sh.name == "2d/3x3" else (("per-channel",) if i % 2 == 0
                                                                           else ("per-tensor",))
        for per in pers:
            tpl = m if per == "per-channel" else ""
            ins = dict(base)
            ins[zp_names[0]] = ""
            ins[zp_names[1]] = tpl
            if scale_names:
                ins[scale_names[0]] = ""
                ins[scale_names[1]] = tpl
            num = (REQUANT, SATURATE) if sh.name.startswith("long-K") and scale_names else ()
            out.append(Shape(f"{sh.name}/{per}", ins, dict(sh.attrs), sh.since, sh.until, dict(sh.dims), num,
                             cycle=sh.cycle))
    return tuple(out)


def _conv_errors(qlinear: bool) -> tuple[Err, ...]:
    """Conv's error cases (:data:`conformance.ops.conv._CONV_ERRORS`) with the inputs laid out
    for the operator (x, [x_scale, x_zero_point,] w, ...), plus its own."""
    out = []
    for e in _CONV_ERRORS:
        xs, ws = e.shapes[0], e.shapes[1]
        if qlinear:
            shapes = (xs, (), (), ws, (), (), (), ()) + ((e.shapes[2],) if len(e.shapes) > 2 else ())
        else:
            if len(e.shapes) > 2:
                continue  # B: ConvInteger has none
            shapes = (xs, ws)
        out.append(Err(e.why, e.tag, dict(e.attrs), shapes, type_name="uint8"))
    return tuple(out)


# ----------------------------------------------------------------------------- ConvInteger
def conv_integer_oracle(ctx, x, w, x_zero_point=None, w_zero_point=None, **attrs):
    """ConvInteger (:func:`conformance.reference.qlinear.conv_integer`)."""
    return ref.conv_integer(x, w, x_zero_point, w_zero_point, attrs)


CI_SHAPES = _conv_patterns(("x_zero_point", "w_zero_point"))

CONV_INTEGER = Entry(
    "ConvInteger", conv_integer_oracle, family="shaped", shapes=CI_SHAPES, per_type=len(CI_SHAPES),
    tolerance=_exact_tol,
    errors=_conv_errors(False) + (
        Err("x_zero_point has x's type T1 (here int8 with a uint8 x)", "x-zero-point-type",
            types={"x": "uint8", "x_zero_point": "int8"}, shapes=((1, 2, 5, 5), (3, 2, 3, 3), ()), type_name="uint8"),
        Err("x_zero_point 'is a scalar, which means a per-tensor/layer quantization': one per input channel [2]",
            "x-zero-point-per-channel", shapes=((1, 2, 5, 5), (3, 2, 3, 3), (2,)), type_name="uint8"),
        Err("a 1-D w_zero_point has M elements (3), not 2", "w-zero-point-length",
            shapes=((1, 2, 5, 5), (3, 2, 3, 3), (), (2,)), type_name="uint8"),
        Err("w_zero_point has w's type T2 (here uint8 with an int8 w)", "w-zero-point-type",
            types={"w": "int8", "w_zero_point": "uint8"}, shapes=((1, 2, 5, 5), (3, 2, 3, 3), (), ()),
            type_name="uint8"),
    ),
    notes={10: "x_zero_point per tensor, w_zero_point per tensor or per output channel; int32 output"})


# ----------------------------------------------------------------------------- QLinearConv
QC_NAMES = ("x", "x_scale", "x_zero_point", "w", "w_scale", "w_zero_point", "y_scale", "y_zero_point", "B")


def _qc_class(num: str):
    """The numerics class ``num`` of QLinearConv (module docstring)."""

    def table(rng, ctx, shapes):
        present = [n for n in QC_NAMES if n in ctx.types]
        sh = dict(zip(present, shapes))
        k = int(np.prod(sh["w"][1:], dtype=np.int64))

        def draw(pow2):
            zx = _zero_points(rng, ctx.types["x_zero_point"], sh["x_zero_point"])
            zw = _zero_points(rng, ctx.types["w_zero_point"], sh["w_zero_point"])
            zw_full = np.broadcast_to(np.asarray(zw, dtype=object).reshape((-1,) + (1,) * (len(sh["w"]) - 1))
                                      if np.size(zw) > 1 else np.asarray(zw, dtype=object), sh["w"])
            vals = {"x": _data(rng, ctx.types["x"], sh["x"], zx, pow2),
                    "x_scale": _scales(rng, ctx.types["x_scale"], sh["x_scale"], pow2), "x_zero_point": zx,
                    "w": _data(rng, ctx.types["w"], sh["w"], zw_full, pow2),
                    "w_scale": _scales(rng, ctx.types["w_scale"], sh["w_scale"], pow2), "w_zero_point": zw,
                    "y_zero_point": _zero_points(rng, ctx.types["y_zero_point"], sh["y_zero_point"])}
            if "B" in sh:
                lim = 8 if pow2 else 255 * 255 * max(1, min(k, 64))
                vals["B"] = _obj(rng.integers(-lim, lim + 1, size=sh["B"]), sh["B"])
            return vals

        def parts(vals, sy):
            return ref.qlinear_conv_parts(vals["x"], vals["x_scale"], vals["x_zero_point"], vals["w"],
                                          vals["w_scale"], vals["w_zero_point"], np.array(sy), vals.get("B"),
                                          ctx.attrs)

        vals = _robust_table(rng, ctx, num, draw, parts, ("x", "w"), k)
        return [vals[n] for n in present]

    table.__name__ = f"qlinear_conv_{num}"
    return table


def qlinear_conv_oracle(ctx, x, x_scale, x_zero_point, w, w_scale, w_zero_point, y_scale, y_zero_point, B=None,
                        **attrs):
    """QLinearConv (:func:`conformance.reference.qlinear.qlinear_conv`)."""
    return ref.qlinear_conv(x, x_scale, x_zero_point, w, w_scale, w_zero_point, y_scale, y_zero_point, B, attrs,
                            ctx.out_types["y"])


QC_SHAPES = _conv_patterns(("x_zero_point", "w_zero_point"), ("x_scale", "w_scale"))

QLINEAR_CONV = Entry(
    "QLinearConv", qlinear_conv_oracle, family="shaped", shapes=QC_SHAPES,
    int_numerics={n: _qc_class(n) for n in (REQUANT, TIES, SATURATE)}, numerics_classes=_classes,
    per_type=len(QC_SHAPES), tolerance=_exact_tol,
    errors=_conv_errors(True) + (
        Err("x_zero_point has x's type T1 (here int8 with a uint8 x)", "x-zero-point-type",
            types={"x": "uint8", "x_zero_point": "int8"}, shapes=((1, 2, 5, 5), (), (), (3, 2, 3, 3), (), (), (), ()),
            type_name="uint8"),
        Err("x_scale 'is a scalar, which means a per-tensor/layer quantization': one per input channel [2]",
            "x-scale-per-channel", shapes=((1, 2, 5, 5), (2,), (2,), (3, 2, 3, 3), (), (), (), ()), type_name="uint8"),
        Err("a 1-D w_scale and w_zero_point have M elements (3), not 2", "w-scale-length",
            shapes=((1, 2, 5, 5), (), (), (3, 2, 3, 3), (2,), (2,), (), ()), type_name="uint8"),
        Err("'Each scale and zero-point pair must have same shape': w_scale [3] with a scalar w_zero_point",
            "w-scale-zero-point-shapes", shapes=((1, 2, 5, 5), (), (), (3, 2, 3, 3), (3,), (), (), ()),
            type_name="uint8"),
        Err("B is int32 (T4): an int8 bias", "B-type", types={"B": "int8"},
            shapes=((1, 2, 5, 5), (), (), (3, 2, 3, 3), (), (), (), (), (3,)), type_name="uint8"),
    ),
    notes={10: "x and y per tensor, w per tensor or per output channel; B int32 at scale x_scale * w_scale"})

ENTRIES = (QLINEAR_MATMUL, CONV_INTEGER, QLINEAR_CONV)
register_entries(ENTRIES, family="qlinear")


# ----------------------------------------------------------------------------- com.microsoft QLinearAdd / QLinearMul
MS = "com.microsoft"
BIN_NAMES = ("A", "A_scale", "A_zero_point", "B", "B_scale", "B_zero_point", "C_scale", "C_zero_point")


def _bin_class(op: str, num: str):
    """The numerics class ``num`` (``requant`` or ``saturate``) of onnxruntime's QLinearAdd /
    QLinearMul: A and B over the whole range, zero points (where present) at the extremes, 0,
    the middle or drawn, random scales, C_scale placing the results in (or far beyond) the
    type's range; C_scale nudged until every element is robust
    (:func:`conformance.reference.qlinear.robust_binary`: no element near a rounding boundary, no
    exact tie)."""

    def table(rng, ctx, shapes):
        present = [n for n in BIN_NAMES if n in ctx.types]
        sh = dict(zip(present, shapes))
        t = ctx.types["A"]
        out_type = ctx.out_types["C"]
        for attempt in range(60):
            vals = {n: _zero_points(rng, t, sh[n]) for n in ("A_zero_point", "B_zero_point", "C_zero_point")
                    if n in sh}
            vals["A"] = _data(rng, t, sh["A"], None, False)
            vals["B"] = _data(rng, t, sh["B"], None, False)
            vals["A_scale"] = _scales(rng, "float", sh["A_scale"], False)
            vals["B_scale"] = _scales(rng, "float", sh["B_scale"], False)

            def parts(sc):
                return ref.qlinear_binary_parts(op, vals["A"], vals["A_scale"], vals.get("A_zero_point"), vals["B"],
                                                vals["B_scale"], vals.get("B_zero_point"), np.array(sc))

            v1, _ = parts(1.0)
            sc = _y_scale(rng, "float", v1, out_type, num)
            zc = np.asarray(vals.get("C_zero_point", np.array(0, dtype=object)), dtype=object).reshape(())
            for _ in range(20):
                v, mag = parts(sc)
                if ref.robust_binary(v, mag, zc, out_type).all():
                    vals["C_scale"] = np.full(sh["C_scale"], sc, dtype=np.float64)
                    return [vals[n] for n in present]
                sc = float(V.representable(np.array([sc * (1 + float(rng.uniform(-0.02, 0.02)))]), "float")[0])
        raise ValueError(f"{op}: no robust table found")

    table.__name__ = f"{op.lower()}_{num}"
    return table


def _bin_oracle(op: str):
    def oracle(ctx, A, A_scale, A_zero_point, B, B_scale, B_zero_point, C_scale, C_zero_point=None, **attrs):
        return ref.qlinear_binary(op, A, A_scale, A_zero_point, B, B_scale, B_zero_point, C_scale, C_zero_point,
                                  ctx.out_types["C"])

    oracle.__name__ = oracle.__qualname__ = f"{op.lower()}_oracle"
    oracle.__doc__ = f"onnxruntime's {op} (:func:`conformance.reference.qlinear.qlinear_binary`)."
    return oracle


def _bin_shapes() -> tuple[Shape, ...]:
    ab = ("A_zero_point", "B_zero_point")
    both = (ab, ab + ("C_zero_point",))  # the patterns onnxruntime's type inference accepts

    def sh(name, a, b, p="", optional=both, **kw):
        return Shape(name, {"A": a, "B": b, **{n: p for n in BIN_NAMES if n not in ("A", "B")}}, optional=optional,
                     **kw)

    return (
        sh("same/r2", "SL", "SL", dims={"S": (2, 3), "L": (5, 9)}),
        sh("same/r2/any-zero-points", "SL", "SL", optional=None, dims={"S": (2, 3), "L": (5, 9)}),
        sh("broadcast/B-row", "SL", "L", dims={"S": (2, 3), "L": (5, 9)}),
        sh("broadcast/both", "S1", "1L", dims={"S": (2, 4), "L": (3, 7)}),
        sh("scalar-B", "SL", ""),
        sh("scalar-A", "", "SL"),
        sh("r4/broadcast-channel", "NCHW", "C11", dims={"N": (1, 2), "C": (2, 3), "H": (2, 3), "W": (3, 5)}),
        sh("long/r1", "L", "L", dims={"L": (256, 300)}),
        sh("rank0", "", "", cycle=False),
        sh("zero-size", "S0", "0", cycle=False),
    )


def _bin_errors(op: str) -> tuple[Err, ...]:
    return (
        Err("A_zero_point has A's type T (int8 with a uint8 A)", "zero-point-type",
            types={"A": "uint8", "A_zero_point": "int8"}, shapes=((2, 3), (), (), (2, 3), (), (), (), ()),
            type_name="uint8"),
        Err("A and B must broadcast (numpy): (2, 3) and (4,)", "broadcast",
            shapes=((2, 3), (), (), (4,), (), (), (), ()), type_name="uint8"),
        Err("A_scale 'is a scalar, which means a per-tensor/layer quantization': a [3] A_scale", "scale-per-axis",
            shapes=((2, 3), (3,), (), (2, 3), (), (), (), ()), type_name="uint8"),
        Err("C_scale 'is a scalar': a 1-element [1] tensor is not (onnxruntime's type inference: 'Scale and "
            "Zero-point must be a scalar')", "scale-[1]", shapes=((2, 3), (), (), (2, 3), (), (), (1,), ()),
            type_name="uint8"),
    )


def _bin_contested(ctx, attrs) -> str | None:
    """A_zero_point or B_zero_point absent: onnxruntime's schema declares them optional ("Default
    value is 0 if it's not specified"), its type inference rejects the model ("Input data type
    does not match the expected data type")."""
    missing = [n for n in ("A_zero_point", "B_zero_point") if n not in ctx.types]
    if missing:
        return (f"{' and '.join(missing)} absent: onnxruntime's schema makes it optional (default 0), its type "
                "inference rejects the model")
    return None


QLINEAR_ADD, QLINEAR_MUL = (
    Entry(op, _bin_oracle(op), family="shaped", domain=MS, shapes=_bin_shapes(),
          int_numerics={n: _bin_class(op, n) for n in (REQUANT, SATURATE)},
          numerics_classes=lambda t: (REQUANT, SATURATE), per_type=16, tolerance=_exact_tol, errors=_bin_errors(op),
          contested=_bin_contested,
          notes={1: "onnxruntime-defined (com.microsoft): scalar scales and zero points, numpy broadcasting; "
                    "rounding and saturation as QuantizeLinear (the schema names neither)"})
    for op in ("QLinearAdd", "QLinearMul"))

MS_ENTRIES = (QLINEAR_ADD, QLINEAR_MUL)
register_entries(MS_ENTRIES, family="qlinear")
