"""onnxruntime's com.microsoft quantized contrib operators as entries of the operator table
(family ``shaped``): QLinearSigmoid (1), QLinearLeakyRelu (1), QLinearWhere (1) and
QLinearGlobalAveragePool (1) (onnxruntime-defined: their oracles follow its operator
documentation, ContribOperators.md, and its CPU kernel where the documentation is silent; see :mod:`conformance.reference.contrib_quant`).  QLinearAdd and
QLinearMul are entries of :mod:`conformance.ops.qlinear`.

What the entries exercise:

* **types**: T = uint8 and int8 (every type the schema allows); scales tensor(float);
* **optional inputs**: X_zero_point and Y_zero_point each present or absent (absent: 0);
* **attributes** (QLinearLeakyRelu): alpha absent (0.01), the explicit default, 0.5 (a power
  of two: the negative side exact in float32) and 0.2;
* **numerics classes** (the value of X drawn from the 256 possible values whose table entry is
  robust, :func:`conformance.reference.contrib_quant.robust_lookup`): ``requant`` (zero points
  at the type's extremes, 0, the middle or drawn; scales with random mantissas; Y_scale
  placing the outputs over the output type, a few saturating), ``saturate`` (Y_scale small:
  most outputs beyond the type's range at both ends), ``ties`` (QLinearLeakyRelu: power-of-two
  scales with ``Y_scale = 2 X_scale`` or ``4 X_scale`` and X near its zero point, so exact
  ``.5`` ties of both parities occur and must round to even);
* **shapes**: rank 1, 2 and 4, a long row (256-300 elements: every table entry), rank 0, an
  empty tensor;
* **tolerance**: exact (every robust element has one right answer);
* **errors**: a zero point of another type than X, a double scale (the schema's types).

QLinearWhere (every input required): ``Z = quantize(condition ? dequantize(X) : dequantize(Y))``
with its own scale and zero point per side, numpy broadcasting of condition, X and Y (a row,
all three, a scalar Y, a scalar condition, rank 4 with a per-channel-shaped X, a long row, rank
0, empty); classes ``requant``, ``saturate`` and ``ties`` (power-of-two scales, ``z_scale = 2``
or ``4 x_scale``, ``y_scale`` in ``{x_scale / 2, x_scale, 2 x_scale}``: exact ties that round to
even); errors: a zero point of another type, X and Y of different types, a uint8 condition,
shapes that do not broadcast.

QLinearGlobalAveragePool (every input required): ``Y = quantize(mean over the spatial axes of
dequantize(X))``, channels_last 0 (``[N, C, D...]``) and 1 (``[N, D..., C]``); rank 3, 4, 5, a
16x16-20x20 plane, a 1x1 plane, an empty batch; classes ``requant`` and ``saturate`` (no exact
ties: the multiplier ``x_scale / (y_scale count)`` is inexact); errors: zero-point type, a double
x_scale.
"""

from __future__ import annotations

from fractions import Fraction

import numpy as np

from ..case import Case
from ..reference import contrib_quant as ref
from ..reference import quantize as qref
from . import values as V
from .engine import register_entries
from .entry import Attrs, Entry, Err, Shape
from .qlinear import _data, _exact_tol, _obj, _scales, _zero_points
from .quantize import dequantize_table, quantize_table
from .values_common import EXACT as _EXACT

MS = "com.microsoft"
REQUANT, TIES, SATURATE = "requant", "ties", "saturate"
LOOKUP_NAMES = ("X", "X_scale", "X_zero_point", "Y_scale", "Y_zero_point")


def _alpha(ctx) -> float:
    return float(ctx.attrs.get("alpha", 0.01) if ctx.attrs.get("alpha") is not None else 0.01)


def _lookup_class(op: str, num: str):
    """The numerics class ``num`` of QLinearSigmoid / QLinearLeakyRelu (module docstring): the
    scales and zero points drawn, Y_scale nudged until at least half of the 256 possible X
    values have a robust table entry, X drawn among those (``ties``: among those within 6 of
    X_zero_point)."""

    def table(rng, ctx, shapes):
        present = [n for n in LOOKUP_NAMES if n in ctx.types]
        sh = dict(zip(present, shapes))
        t = ctx.types["X"]
        lo, hi = qref._target_range(t)
        alpha = _alpha(ctx)
        domain = _obj(np.arange(lo, hi + 1), (hi - lo + 1,))
        for attempt in range(40):
            zx = _zero_points(rng, t, ()) if "X_zero_point" in sh else None
            zy = _zero_points(rng, t, ()) if "Y_zero_point" in sh else None
            pow2 = num == TIES
            sx = _scales(rng, "float", (), pow2)
            if num == TIES:
                sy = float(sx) * float(rng.choice([2.0, 4.0]))
            else:
                v1, _ = ref.lookup_parts(op, domain, sx, zx, np.array(1.0), alpha)
                m = max(abs(float(a)) for a in v1.tolist()) or 1.0
                f = float(rng.choice([0.08, 0.15])) if num == SATURATE else float(rng.choice([0.7, 1.0, 1.3, 2.0]))
                sy = float(V.representable(np.array([m / (hi - lo) * f]), "float")[0])
            for _ in range(8):
                v, xr = ref.lookup_parts(op, domain, sx, zx, np.array(sy), alpha)
                ex = ref.exact_leaky(xr, sx, np.array(sy), alpha) if op == "QLinearLeakyRelu" else False
                ok = ref.robust_lookup(op, v, xr, np.array(sy), zy, t, ex)
                pool = [int(q) for q, good in zip(domain.tolist(), ok.tolist()) if good]
                if num == TIES:
                    z = 0 if zx is None else int(zx)
                    pool = [q for q in pool if abs(q - z) <= 6]
                if len(pool) >= (5 if num == TIES else 128):
                    break
                if num == TIES:
                    break
                sy = float(V.representable(np.array([sy * (1 + float(rng.uniform(-0.02, 0.02)))]), "float")[0])
            else:
                continue
            if len(pool) < (5 if num == TIES else 128):
                continue
            n = int(np.prod(sh["X"], dtype=np.int64))
            # the extremes of the type whenever their entry is robust
            ends = [q for q in (lo, hi) if q in pool]
            draw = list(rng.choice(pool, size=n)) if n else []
            for i, q in enumerate(ends[:n]):
                draw[int(rng.integers(0, n))] = q
            vals = {"X": _obj(draw, sh["X"]), "X_scale": np.asarray(sx, dtype=np.float64).reshape(sh["X_scale"]),
                    "Y_scale": np.full(sh["Y_scale"], sy, dtype=np.float64)}
            if zx is not None:
                vals["X_zero_point"] = _obj([int(zx)], sh["X_zero_point"])
            if zy is not None:
                vals["Y_zero_point"] = _obj([int(zy)], sh["Y_zero_point"])
            return [vals[k] for k in present]
        raise ValueError(f"{op}: no robust table found")

    table.__name__ = f"{op.lower()}_{num}"
    return table


def _lookup_oracle(op: str):
    def oracle(ctx, X, X_scale, X_zero_point=None, Y_scale=None, Y_zero_point=None, **attrs):
        return ref.qlinear_lookup(op, X, X_scale, X_zero_point, Y_scale, Y_zero_point, ctx.out_types["Y"],
                                  _alpha(ctx))

    oracle.__name__ = oracle.__qualname__ = f"{op.lower()}_oracle"
    oracle.__doc__ = (f"onnxruntime's {op} (:func:`conformance.reference.contrib_quant.qlinear_lookup`): "
                      "object ints of X's shape and type T.")
    return oracle


def _lookup_shapes() -> tuple[Shape, ...]:
    def sh(name, x, **kw):
        return Shape(name, {"X": x}, **kw)

    return (
        sh("r1", "L", dims={"L": (5, 12)}),
        sh("r2", "SL", dims={"S": (2, 3), "L": (5, 9)}),
        sh("r4", "NCHW", dims={"N": (1, 2), "C": (2, 3), "H": (2, 3), "W": (3, 5)}),
        sh("long/r1", "L", dims={"L": (256, 300)}),
        sh("rank0", "", cycle=False),
        sh("zero-size", "S0", cycle=False),
    )


def _lookup_errors() -> tuple[Err, ...]:
    shp = ((2, 3), (), (), (), ())
    return (
        Err("X_zero_point has X's type T (int8 with a uint8 X)", "zero-point-type",
            types={"X": "uint8", "X_zero_point": "int8"}, shapes=shp, type_name="uint8"),
        Err("Y_zero_point has X's type T (uint8 with an int8 X)", "y-zero-point-type",
            types={"X": "int8", "Y_zero_point": "uint8"}, shapes=shp, type_name="int8"),
        Err("X_scale is tensor(float) (here double)", "scale-type", types={"X_scale": "double"}, shapes=shp,
            type_name="uint8"),
    )


def _classes(op: str):
    cls = (REQUANT, TIES, SATURATE) if op == "QLinearLeakyRelu" else (REQUANT, SATURATE)
    return lambda t: cls


QLINEAR_SIGMOID, QLINEAR_LEAKY_RELU = (
    Entry(op, _lookup_oracle(op), family="shaped", domain=MS, shapes=_lookup_shapes(),
          int_numerics={n: _lookup_class(op, n) for n in _classes(op)("uint8")},
          numerics_classes=_classes(op), per_type=24, tolerance=_exact_tol, errors=_lookup_errors(),
          attrs=(Attrs({"alpha": 0.5}), Attrs({"alpha": 0.2}, tag="alpha-0.2")) if op == "QLinearLeakyRelu" else (),
          notes={1: "onnxruntime-defined (com.microsoft): Y = quantize(f(dequantize(X))), scalar scales and "
                    "zero points (absent: 0); rounding half to even and saturation as QuantizeLinear (the "
                    "documentation names neither; onnxruntime's kernel: a float32 lookup table quantized by "
                    "MLAS)"})
    for op in ("QLinearSigmoid", "QLinearLeakyRelu"))

# ----------------------------------------------------------------------------- QLinearWhere
WHERE_NAMES = ("condition", "X", "x_scale", "x_zero_point", "Y", "y_scale", "y_zero_point", "z_scale",
               "z_zero_point")


def _where_class(num: str):
    """The numerics class ``num`` of QLinearWhere: X and Y over the whole range (``ties``: near
    their zero points, power-of-two scales with ``z_scale = 2`` or ``4 x_scale``), zero points at
    the extremes, 0, the middle or drawn, a random condition; z_scale placing the chosen values
    over the output type (``saturate``: far beyond) and nudged until every element is robust
    (:func:`conformance.reference.contrib_quant.robust_where`)."""

    def table(rng, ctx, shapes):
        sh = dict(zip(WHERE_NAMES, shapes))
        t = ctx.types["X"]
        lo, hi = qref._target_range(t)
        pow2 = num == TIES
        for attempt in range(60):
            vals = {n: _zero_points(rng, t, sh[n]) for n in ("x_zero_point", "y_zero_point", "z_zero_point")}
            vals["condition"] = rng.integers(0, 2, size=sh["condition"]).astype(bool)
            for d, z in (("X", "x_zero_point"), ("Y", "y_zero_point")):
                vals[d] = _data(rng, t, sh[d], vals[z], pow2)
            vals["x_scale"] = _scales(rng, "float", sh["x_scale"], pow2)
            vals["y_scale"] = np.asarray(vals["x_scale"]) * float(rng.choice([0.5, 1.0, 2.0])) if pow2 else \
                _scales(rng, "float", sh["y_scale"], False)

            def parts(sc):
                return ref.where_parts(vals["condition"], vals["X"], vals["x_scale"], vals["x_zero_point"], vals["Y"],
                                       vals["y_scale"], vals["y_zero_point"], np.array(sc))

            if pow2:
                sz = float(np.asarray(vals["x_scale"])) * float(rng.choice([2.0, 4.0]))
            else:
                v1, _ = parts(1.0)
                m = max((abs(float(a)) for a in v1.ravel().tolist()), default=1.0) or 1.0
                f = float(rng.choice([0.08, 0.15])) if num == SATURATE else float(rng.choice([0.7, 1.0, 1.3, 2.0]))
                sz = float(V.representable(np.array([m / ((hi - lo) / 2) * f]), "float")[0])
            for _ in range(1 if pow2 else 20):
                v, ex = parts(sz)
                if ref.robust_where(v, ex, vals["z_zero_point"], t).all():
                    vals["z_scale"] = np.full(sh["z_scale"], sz, dtype=np.float64)
                    return [vals[n] for n in WHERE_NAMES]
                sz = float(V.representable(np.array([sz * (1 + float(rng.uniform(-0.02, 0.02)))]), "float")[0])
        raise ValueError("QLinearWhere: no robust table found")

    table.__name__ = f"qlinear_where_{num}"
    return table


def where_oracle(ctx, condition, X, x_scale, x_zero_point, Y, y_scale, y_zero_point, z_scale, z_zero_point,
                 **attrs):
    """onnxruntime's QLinearWhere (:func:`conformance.reference.contrib_quant.qlinear_where`):
    object ints of the broadcast shape and type T."""
    return ref.qlinear_where(condition, X, x_scale, x_zero_point, Y, y_scale, y_zero_point, z_scale, z_zero_point,
                             ctx.out_types["Z"])


def _where_shapes() -> tuple[Shape, ...]:
    def sh(name, c, x, y, **kw):
        return Shape(name, {"condition": c, "X": x, "Y": y}, **kw)

    return (
        sh("same/r2", "SL", "SL", "SL", dims={"S": (2, 3), "L": (5, 9)}),
        sh("broadcast/condition-row", "L", "SL", "SL", dims={"S": (2, 3), "L": (5, 9)}),
        sh("broadcast/all", "S1", "1L", "SL", dims={"S": (2, 4), "L": (3, 7)}),
        sh("scalar-Y", "SL", "SL", ""),
        sh("scalar-condition", "", "SL", "L"),
        sh("r4", "NCHW", "C11", "NCHW", dims={"N": (1, 2), "C": (2, 3), "H": (2, 3), "W": (3, 5)}),
        sh("long/r1", "L", "L", "L", dims={"L": (256, 300)}),
        sh("rank0", "", "", "", cycle=False),
        sh("zero-size", "S0", "S0", "0", cycle=False),
    )


def _where_errors() -> tuple[Err, ...]:
    s = ((2, 3), (2, 3), (), (), (2, 3), (), (), (), ())
    return (
        Err("x_zero_point has X's type T (int8 with a uint8 X)", "zero-point-type",
            types={"X": "uint8", "x_zero_point": "int8"}, shapes=s, type_name="uint8"),
        Err("X and Y have one type T (uint8 and int8)", "X-Y-types", types={"X": "uint8", "Y": "int8"}, shapes=s,
            type_name="uint8"),
        Err("condition is tensor(bool) (here uint8)", "condition-type", types={"condition": "uint8"}, shapes=s,
            type_name="uint8"),
        Err("condition, X and Y must broadcast: (2, 3), (2, 3) and (4,)", "broadcast",
            shapes=((2, 3), (2, 3), (), (), (4,), (), (), (), ()), type_name="uint8"),
    )


QLINEAR_WHERE = Entry(
    "QLinearWhere", where_oracle, family="shaped", domain=MS, shapes=_where_shapes(),
    int_numerics={n: _where_class(n) for n in (REQUANT, TIES, SATURATE)},
    numerics_classes=lambda t: (REQUANT, TIES, SATURATE), per_type=24, tolerance=_exact_tol, errors=_where_errors(),
    notes={1: "onnxruntime-defined (com.microsoft): every input required; scalar scales and zero points; numpy "
              "broadcasting of condition, X and Y; rounding half to even and saturation as QuantizeLinear"})

# ----------------------------------------------------------------------------- QLinearGlobalAveragePool
GAP_NAMES = ("X", "x_scale", "x_zero_point", "y_scale", "y_zero_point")


def _gap_class(num: str):
    """The numerics class ``num`` (``requant``, ``saturate``) of QLinearGlobalAveragePool: X over
    the whole range around drawn zero points, random scales, y_scale placing the means over the
    output type (``saturate``: far beyond), nudged until every element is robust
    (:func:`conformance.reference.contrib_quant.robust_global_average`)."""

    def table(rng, ctx, shapes):
        sh = dict(zip(GAP_NAMES, shapes))
        t = ctx.types["X"]
        lo, hi = qref._target_range(t)
        cl = int(ctx.attrs.get("channels_last") or 0)
        for attempt in range(60):
            vals = {n: _zero_points(rng, t, sh[n]) for n in ("x_zero_point", "y_zero_point")}
            vals["X"] = _data(rng, t, sh["X"], None, False)
            vals["x_scale"] = _scales(rng, "float", sh["x_scale"], False)
            v1 = ref.global_average_parts(vals["X"], vals["x_scale"], vals["x_zero_point"], np.array(1.0), cl)
            m = max((abs(float(a)) for a in v1.ravel().tolist()), default=1.0) or 1.0
            f = float(rng.choice([0.08, 0.15])) if num == SATURATE else float(rng.choice([0.7, 1.0, 1.3, 2.0]))
            sy = float(V.representable(np.array([m / ((hi - lo) / 2) * f]), "float")[0])
            for _ in range(20):
                v = ref.global_average_parts(vals["X"], vals["x_scale"], vals["x_zero_point"], np.array(sy), cl)
                if ref.robust_global_average(vals["X"], vals["x_scale"], vals["x_zero_point"], np.array(sy),
                                             vals["y_zero_point"], t, cl).all():
                    vals["y_scale"] = np.full(sh["y_scale"], sy, dtype=np.float64)
                    return [vals[n] for n in GAP_NAMES]
                sy = float(V.representable(np.array([sy * (1 + float(rng.uniform(-0.02, 0.02)))]), "float")[0])
        raise ValueError(f"QLinearGlobalAveragePool: no robust table found for {sh}")

    table.__name__ = f"qlinear_global_average_pool_{num}"
    return table


def gap_oracle(ctx, X, x_scale, x_zero_point, y_scale, y_zero_point, **attrs):
    """onnxruntime's QLinearGlobalAveragePool
    (:func:`conformance.reference.contrib_quant.qlinear_global_average_pool`): object ints."""
    return ref.qlinear_global_average_pool(X, x_scale, x_zero_point, y_scale, y_zero_point, ctx.out_types["Y"],
                                           int(ctx.attrs.get("channels_last") or 0))


QLINEAR_GLOBAL_AVERAGE_POOL = Entry(
    "QLinearGlobalAveragePool", gap_oracle, family="shaped", domain=MS,
    shapes=(Shape("3d", {"X": "NCL"}, dims={"N": (1, 2), "C": (2, 3), "L": (3, 9)}),
            Shape("4d", {"X": "NCHW"}, dims={"N": (1, 2), "C": (2, 3), "H": (2, 4), "W": (2, 5)}),
            Shape("5d", {"X": "NCDHW"}, dims={"N": (1, 1), "C": (2, 2), "D": (2, 3), "H": (2, 3), "W": (2, 3)}),
            Shape("long/4d", {"X": "1CHW"}, dims={"C": (2, 2), "H": (16, 20), "W": (16, 20)}),
            Shape("one-element-spatial", {"X": "NC11"}, dims={"N": (1, 2), "C": (2, 3)}),
            Shape("zero-batch", {"X": "0CHW"}, cycle=False)),
    int_numerics={n: _gap_class(n) for n in (REQUANT, SATURATE)},
    numerics_classes=lambda t: (REQUANT, SATURATE), per_type=16, tolerance=_exact_tol,
    attrs=(Attrs({"channels_last": 1}),),
    errors=(Err("x_zero_point has X's type T (int8 with a uint8 X)", "zero-point-type",
                types={"X": "uint8", "x_zero_point": "int8"}, shapes=((1, 2, 3, 3), (), (), (), ()),
                type_name="uint8"),
            Err("x_scale is tensor(float) (here double)", "scale-type", types={"x_scale": "double"},
                shapes=((1, 2, 3, 3), (), (), (), ()), type_name="uint8")),
    notes={1: "onnxruntime-defined (com.microsoft): GlobalAveragePool of the dequantized X, requantized; "
              "channels_last 0/1; rounding half to even and saturation as QuantizeLinear"})

# ----------------------------------------------------------------------------- QuantizeLinear / DequantizeLinear
QCLASS = "quant-table"


def ms_quantize_oracle(ctx, x, y_scale, y_zero_point=None, **attrs):
    """onnxruntime's com.microsoft QuantizeLinear (its schema doc: ``y = saturate((x / y_scale) +
    y_zero_point)``, "rounding to nearest ties to even", saturation to the integer type; per tensor
    without ``axis``, per axis with it): ai.onnx's exact oracle
    (:func:`conformance.reference.quantize.quantize_linear`, no blocks).  Object ints of x's shape."""
    return qref.quantize_linear(x, y_scale, y_zero_point, axis=int(attrs.get("axis", 1)), block_size=0,
                                out_type=ctx.out_types["y"], saturate=True, version=ctx.version)


def ms_dequantize_oracle(ctx, x, x_scale, x_zero_point=None, **attrs):
    """onnxruntime's com.microsoft DequantizeLinear (``y = (x - x_zero_point) * x_scale``, zero
    point 0 when absent): ai.onnx's exact oracle
    (:func:`conformance.reference.quantize.dequantize_linear`).  float64 of x's shape."""
    return qref.dequantize_linear(x, x_scale, x_zero_point, axis=int(attrs.get("axis", 1)), block_size=0)


def _ms_q_optional_rule(version: int, combo, optional) -> bool:
    """"Default is uint8 with zero point of 0 if it's not specified": without y_zero_point only T2 =
    uint8 (no attribute names another type)."""
    return "y_zero_point" in optional or combo.get("T2") == "uint8"


def _ms_q_shapes(s: str, z: str) -> tuple[Shape, ...]:
    def sh(name, x, sc, attrs=None, dims=None, cycle=True):
        return Shape(name, {"x": x, s: sc, z: sc}, dict(attrs or {}), dims=dims or {}, cycle=cycle)

    d2 = {"S": (2, 3), "L": (5, 9)}
    d3 = {"A": (2, 3), "B": (2, 3), "L": (3, 7)}
    return (
        sh("tensor/r2", "SL", "", dims=d2),
        sh("tensor/r1/odd", "L", "", dims={"L": (9, 17)}),
        sh("axis=1/r2", "SL", "L", {"axis": 1}, dims=d2),
        sh("axis=0/r3", "ABL", "A", {"axis": 0}, dims=d3),
        sh("axis=-1/r3", "ABL", "L", {"axis": -1}, dims=d3),
        sh("axis=-2/r3", "ABL", "B", {"axis": -2}, dims=d3),
        sh("axis=2/r4", "AB3L", "3", {"axis": 2}, dims={"A": (1, 2), "B": (2, 2), "L": (2, 3)}),
        sh("axis=-3/r3", "ABL", "A", {"axis": -3}, dims=d3),
        sh("long/r1", "L", "", dims={"L": (64, 80)}),  # past every SIMD width, cheap in explore mode
        sh("tensor/rank0", "", "", cycle=False),
        sh("tensor/zero-size", "S0", "", dims={"S": (1, 3)}, cycle=False),
    )


def _ms_q_errors(s: str, z: str, dq: bool) -> tuple[Err, ...]:
    base = dict(type_name="uint8" if dq else "float")
    out = [
        Err(f"per-axis {s} has the length of the axis: (2,) for axis 1 of a (2, 3) input", "scale-length",
            {"axis": 1}, ((2, 3), (2,), (2,)), **base),
        Err("axis in [-r, r-1]: 2 for a rank-2 input", "axis-out-of-range", {"axis": 2}, ((2, 3), (3,), (3,)),
            **base),
        Err(f"'Scale and zero point must have same shape': {z} (2,) with {s} (3,)", "zero-point-shape",
            {"axis": 1}, ((2, 3), (3,), (2,)), **base),
        Err(f"axis not specified: 'per-tensor quantization and input {s} and {z} must be scalars' (here [3])",
            "per-axis-without-axis", {}, ((2, 3), (3,), (3,)), **base),
    ]
    if dq:
        out.append(Err("x_zero_point has x's type T1 (int8 with a uint8 x)", "zero-point-type", {},
                       ((2, 3), (), ()), types={"x": "uint8", "x_zero_point": "int8"}, type_name="uint8"))
    else:
        out.append(Err("y_scale has x's type T1 (a float16 scale with a float x)", "scale-type", {},
                       ((2, 3), (), ()), types={"y_scale": "float16"}, type_name="float"))
    return tuple(out)


MS_QUANTIZE_LINEAR = Entry(
    "QuantizeLinear", ms_quantize_oracle, family="shaped", domain=MS, shapes=_ms_q_shapes("y_scale", "y_zero_point"),
    float_numerics={QCLASS: quantize_table}, numerics_classes=lambda t: (QCLASS,), per_type=8,
    tolerance=_exact_tol, optional_rule=_ms_q_optional_rule, errors=_ms_q_errors("y_scale", "y_zero_point", False),
    notes={1: "onnxruntime-defined (com.microsoft): float/float16 x and y_scale (one type T1), int8/uint8/int16/"
              "uint16/int4/uint4 y; per tensor (axis absent) or per axis; rounding half to even, saturation; "
              "no y_zero_point: uint8"})

MS_DEQUANTIZE_LINEAR = Entry(
    "DequantizeLinear", ms_dequantize_oracle, family="shaped", domain=MS,
    shapes=_ms_q_shapes("x_scale", "x_zero_point"), int_numerics={QCLASS: dequantize_table},
    numerics_classes=lambda t: (QCLASS,), per_type=8, tolerance=_exact_tol,
    errors=_ms_q_errors("x_scale", "x_zero_point", True),
    notes={1: "onnxruntime-defined (com.microsoft): int8/uint8/int16/uint16/int32/int4/uint4 x, float/float16 "
              "scale and y; per tensor (axis absent) or per axis; x_zero_point 0 when absent"})

# ----------------------------------------------------------------------------- QLinearAveragePool
AP_NAMES = ("X", "x_scale", "x_zero_point", "y_scale", "y_zero_point")


def _ap_class(num: str):
    """The numerics class ``num`` (``requant``, ``saturate``) of QLinearAveragePool: X over the
    whole range, zero points (where present) at the extremes, 0, the middle or drawn, a random
    x_scale, y_scale placing the window means over the output type (``saturate``: far beyond),
    nudged until every element is robust (:func:`conformance.reference.contrib_quant.robust_average_pool`)."""

    def table(rng, ctx, shapes):
        present = [n for n in AP_NAMES if n in ctx.types]
        sh = dict(zip(present, shapes))
        t = ctx.types["X"]
        lo, hi = qref._target_range(t)
        cl = int(ctx.attrs.get("channels_last") or 0)
        count = int(np.prod(ctx.attrs["kernel_shape"]))
        for attempt in range(60):
            vals = {n: _zero_points(rng, t, sh[n]) for n in ("x_zero_point", "y_zero_point") if n in sh}
            vals["X"] = _data(rng, t, sh["X"], None, False)
            vals["x_scale"] = _scales(rng, "float", sh["x_scale"], False)

            def parts(sy):
                return ref.average_pool_parts(vals["X"], vals["x_scale"], vals.get("x_zero_point"), np.array(sy),
                                              ctx.attrs, cl)

            v1, _ = parts(1.0)
            m = max((abs(float(a)) for a in v1.ravel().tolist()), default=1.0) or 1.0
            f = float(rng.choice([0.08, 0.15])) if num == SATURATE else float(rng.choice([0.7, 1.0, 1.3, 2.0]))
            sy = float(V.representable(np.array([m / ((hi - lo) / 2) * f]), "float")[0])
            for _ in range(20):
                v, mag = parts(sy)
                if ref.robust_average_pool(v, mag, vals.get("y_zero_point"), t, count).all():
                    vals["y_scale"] = np.full(sh["y_scale"], sy, dtype=np.float64)
                    return [vals[n] for n in present]
                sy = float(V.representable(np.array([sy * (1 + float(rng.uniform(-0.02, 0.02)))]), "float")[0])
        raise ValueError(f"QLinearAveragePool: no robust table found for {sh}")

    table.__name__ = f"qlinear_average_pool_{num}"
    return table


def ap_oracle(ctx, X, x_scale, x_zero_point=None, y_scale=None, y_zero_point=None, **attrs):
    """onnxruntime's QLinearAveragePool (:func:`conformance.reference.contrib_quant.qlinear_average_pool`):
    object ints."""
    return ref.qlinear_average_pool(X, x_scale, x_zero_point, y_scale, y_zero_point, ctx.out_types["Y"], attrs,
                                    int(attrs.get("channels_last") or 0))


def _ap_contested(ctx, attrs) -> str | None:
    """x_zero_point absent: onnxruntime's schema makes it optional ("Default value is 0 if it's not
    specified"), its type inference rejects the model ("Input data type does not match the expected
    data type"), as for QLinearAdd."""
    if "x_zero_point" not in ctx.types:
        return "x_zero_point absent: onnxruntime's schema makes it optional (default 0), its type inference rejects"
    return None


#: The optional-input sets onnxruntime's type inference accepts (x_zero_point present).
_AP_ACCEPTED = (("x_zero_point",), ("x_zero_point", "y_zero_point"))


def _ap_shapes() -> tuple[Shape, ...]:
    def sh(name, x, attrs, **kw):
        kw.setdefault("optional", _AP_ACCEPTED)
        return Shape(name, {"X": x}, attrs, **kw)

    d2 = {"N": (1, 2), "C": (2, 3), "H": (4, 6), "W": (4, 7)}
    return (
        sh("2d/k3", "NCHW", {"kernel_shape": [3, 3]}, dims=d2),
        sh("2d/k3/any-zero-points", "NCHW", {"kernel_shape": [3, 3]}, dims=d2, optional=None),
        sh("2d/k2/s2", "NCHW", {"kernel_shape": [2, 2], "strides": [2, 2]}, dims=d2),
        sh("2d/k3/pads/exclude", "NCHW", {"kernel_shape": [3, 3], "pads": [1, 1, 1, 1], "count_include_pad": 0},
           dims=d2),
        sh("2d/k3/pads/include", "NCHW", {"kernel_shape": [3, 3], "pads": [1, 1, 1, 1], "count_include_pad": 1},
           dims=d2),
        sh("2d/asymmetric-pads", "NCHW", {"kernel_shape": [2, 3], "pads": [0, 1, 1, 0]}, dims=d2),
        sh("2d/k3/s2/ceil", "NCHW", {"kernel_shape": [3, 3], "strides": [2, 2], "ceil_mode": 1,
                                      "count_include_pad": 0}, dims={"N": (1, 1), "C": (2, 2), "H": (6, 6),
                                                                     "W": (6, 6)}),
        sh("2d/SAME_UPPER/k2", "NCHW", {"kernel_shape": [2, 2], "auto_pad": "SAME_UPPER"}, dims=d2),
        sh("2d/SAME_LOWER/k3/s2", "NCHW", {"kernel_shape": [3, 3], "strides": [2, 2], "auto_pad": "SAME_LOWER"},
           dims=d2),
        sh("1d/k3/s2", "NCL", {"kernel_shape": [3], "strides": [2]}, dims={"N": (1, 2), "C": (2, 3), "L": (5, 9)}),
        sh("3d/k2", "NCDHW", {"kernel_shape": [2, 2, 2]},
           dims={"N": (1, 1), "C": (2, 2), "D": (2, 3), "H": (2, 4), "W": (2, 4)}),
        sh("2d/channels_last/k3/pads", "NHWC", {"kernel_shape": [3, 3], "pads": [1, 1, 1, 1], "channels_last": 1},
           dims=d2),
        sh("2d/long-window/k7", "NC88", {"kernel_shape": [7, 7]}, dims={"N": (1, 1), "C": (2, 2)}),
        sh("zero-batch", "0CHW", {"kernel_shape": [2, 2]}, dims={"C": (2, 2), "H": (3, 3), "W": (3, 3)}, cycle=False),
    )


QLINEAR_AVERAGE_POOL = Entry(
    "QLinearAveragePool", ap_oracle, family="shaped", domain=MS, shapes=_ap_shapes(),
    int_numerics={n: _ap_class(n) for n in (REQUANT, SATURATE)}, numerics_classes=lambda t: (REQUANT, SATURATE),
    per_type=28, tolerance=_exact_tol, contested=_ap_contested,
    # kernel_shape is required: every state writes one (the pattern's own wins)
    attrs=(Attrs({"kernel_shape": [2, 2]}, tag="kernel-only"),
           Attrs({"kernel_shape": [2, 2], "auto_pad": "NOTSET", "ceil_mode": 0, "channels_last": 0,
                  "count_include_pad": 0}, tag="explicit-default"),
           Attrs({"kernel_shape": [2, 2], "count_include_pad": 1}, tag="count_include_pad=1")),
    errors=(Err("x_zero_point has X's type T (int8 with a uint8 X)", "zero-point-type", {"kernel_shape": [2, 2]},
                ((1, 2, 4, 4), (), (), (), ()), types={"X": "uint8", "x_zero_point": "int8"}, type_name="uint8"),
            Err("x_scale 'is a scalar, which means a per-tensor/layer quantization': a [2] x_scale", "scale-per-channel",
                {"kernel_shape": [2, 2]}, ((1, 2, 4, 4), (2,), (2,), (), ()), type_name="uint8"),
            Err("kernel_shape has one entry per spatial axis: [2] for a 2-D X", "kernel-rank", {"kernel_shape": [2]},
                ((1, 2, 4, 4), (), (), (), ()), type_name="uint8")),
    notes={1: "onnxruntime-defined (com.microsoft): AveragePool of the dequantized X (AveragePool's geometry, "
              "count_include_pad, channels_last), requantized; zero points default 0; rounding half to even and "
              "saturation as QuantizeLinear"})

# ----------------------------------------------------------------------------- QLinearSoftmax
SM_NAMES = ("X", "X_scale", "x_zero_point", "y_scale", "y_zero_point")
POW2_SCALE = "pow2-scale"


def _sm_axis(ctx) -> int:
    a = ctx.attrs.get("axis")
    return -1 if a is None else int(a)


def _sm_class(num: str):
    """The numerics class ``num`` of QLinearSoftmax: X over the whole range around drawn zero
    points, X_scale in [2^-6, 0.25] (the exponentials of a 255-step range stay normal in float32);
    ``pow2-scale``: y_scale 2^-8 or 2^-7 (``1 / y_scale`` an integer: the usual softmax output
    scale), X redrawn until robust; ``requant``: y_scale placing probability 1 at 60-100% of the
    type's range; ``saturate``: probability 1 at 2-6 times the range (the larger probabilities
    saturate); y_scale nudged until every element is robust
    (:func:`conformance.reference.contrib_quant.robust_softmax`)."""

    def table(rng, ctx, shapes):
        present = [n for n in SM_NAMES if n in ctx.types]
        sh = dict(zip(present, shapes))
        t = ctx.types["X"]
        lo, hi = qref._target_range(t)
        opset = int(ctx.attrs.get("opset", 13))
        for attempt in range(80):
            vals = {n: _zero_points(rng, t, sh[n]) for n in ("x_zero_point", "y_zero_point") if n in sh}
            if num != SATURATE and rng.random() < 0.5:
                vals["y_zero_point"] = _obj([lo], sh["y_zero_point"])  # the usual: probabilities from the bottom
            vals["X"] = _data(rng, t, sh["X"], None, False)
            vals["X_scale"] = np.full(sh["X_scale"], float(V.representable(
                np.array([np.exp2(rng.uniform(-6, -2))]), "float")[0]))
            if num == POW2_SCALE:
                sys_ = [float(rng.choice([2.0 ** -8, 2.0 ** -7]))]
            else:
                f = float(rng.uniform(2, 6)) if num == SATURATE else float(rng.uniform(0.6, 1.0))
                sys_ = [float(V.representable(np.array([1.0 / ((hi - lo) * f)]), "float")[0])]
                for _ in range(15):
                    sys_.append(float(V.representable(np.array([sys_[-1] * (1 + float(rng.uniform(-0.02, 0.02)))]),
                                                      "float")[0]))
            for sy in sys_:
                v, d = ref.softmax_parts(vals["X"], vals["X_scale"], vals.get("x_zero_point"), np.array(sy),
                                         _sm_axis(ctx), opset)
                if ref.robust_softmax(v, d, vals["y_zero_point"], t).all():
                    vals["y_scale"] = np.full(sh["y_scale"], sy, dtype=np.float64)
                    return [vals[n] for n in present]
        raise ValueError(f"QLinearSoftmax: no robust table found for {sh}")

    table.__name__ = f"qlinear_softmax_{num.replace('-', '_')}"
    return table


def sm_oracle(ctx, X, X_scale, x_zero_point=None, y_scale=None, y_zero_point=None, **attrs):
    """onnxruntime's QLinearSoftmax (:func:`conformance.reference.contrib_quant.qlinear_softmax`): object ints."""
    axis = attrs.get("axis")
    return ref.qlinear_softmax(X, X_scale, x_zero_point, y_scale, y_zero_point, ctx.out_types["Y"],
                               -1 if axis is None else int(axis), int(attrs["opset"]))


def _sm_shapes() -> tuple[Shape, ...]:
    def sh(name, x, attrs=None, **kw):
        return Shape(name, {"X": x}, dict(attrs or {}), **kw)

    return (
        sh("2d/axis=-1", "NL", {"axis": -1}, dims={"N": (2, 3), "L": (5, 12)}),
        sh("3d/axis=1", "NLC", {"axis": 1}, dims={"N": (1, 2), "L": (4, 9), "C": (2, 3)}),
        sh("3d/axis-absent", "NCL", dims={"N": (1, 2), "C": (2, 3), "L": (4, 9)}),
        sh("4d/axis=2", "NCLW", {"axis": 2}, dims={"N": (1, 1), "C": (2, 2), "L": (3, 6), "W": (2, 3)}),
        sh("4d/axis=-3", "NLHW", {"axis": -3}, dims={"N": (1, 2), "L": (3, 5), "H": (2, 2), "W": (2, 3)}),
        sh("1d/axis=0", "L", {"axis": 0}, dims={"L": (3, 17)}),
        sh("long/axis=-1", "2L", {"axis": -1}, dims={"L": (128, 160)}),
        sh("D=1/axis=-1", "N1", {"axis": -1}, dims={"N": (3, 5)}),
        sh("zero-size", "0L", {"axis": -1}, dims={"L": (3, 4)}, cycle=False),
    )


QLINEAR_SOFTMAX = Entry(
    "QLinearSoftmax", sm_oracle, family="shaped", domain=MS, shapes=_sm_shapes(),
    int_numerics={n: _sm_class(n) for n in (POW2_SCALE, REQUANT, SATURATE)},
    numerics_classes=lambda t: (POW2_SCALE, REQUANT, SATURATE), per_type=27, tolerance=_exact_tol,
    # opset is required: every state writes it
    attrs=(Attrs({"opset": 13}, tag="opset=13"), Attrs({"opset": 13, "axis": -1}, tag="explicit-default"),
           Attrs({"opset": 12}, tag="opset=12"), Attrs({"opset": 11}, tag="opset=11")),
    errors=(Err("x_zero_point has X's type T (int8 with a uint8 X)", "zero-point-type", {"opset": 13},
                ((2, 3), (), (), (), ()), types={"X": "uint8", "x_zero_point": "int8"}, type_name="uint8"),
            Err("y_scale 'must be a scalar': a [3] y_scale", "y-scale-per-axis", {"opset": 13},
                ((2, 3), (), (), (3,), ()), type_name="uint8"),
            Err("axis in [-r, r-1]: 2 for a rank-2 X", "axis-out-of-range", {"opset": 13, "axis": 2},
                ((2, 3), (), (), (), ()), type_name="uint8")),
    notes={1: "onnxruntime-defined (com.microsoft): Softmax of the dequantized X requantized (half to even, "
              "saturation); the opset attribute chooses Softmax-13's single axis or the older coercion to 2-D"})

# ----------------------------------------------------------------------------- QLinearConcat
#: (tag, tensor shapes, axis, class): the cases of each output type.
_CONCAT_VARIANTS = (
    ("axis0/two", [(2, 3), (1, 3)], 0, REQUANT),
    ("axis1/three", [(2, 1), (2, 3), (2, 2)], 1, REQUANT),
    ("axis=-1/rank3", [(2, 2, 3), (2, 2, 1)], -1, REQUANT),
    ("axis=-3/rank3", [(1, 2, 2), (2, 2, 2)], -3, SATURATE),
    ("same-parameters", [(2, 3), (2, 3)], 0, "copy"),
    ("one-input", [(2, 3)], 1, REQUANT),
    ("ties", [(2, 4), (2, 4)], 1, TIES),
    ("saturate", [(3, 2), (1, 2)], 0, SATURATE),
    ("zero-size", [(0, 3), (2, 3)], 0, REQUANT),
    ("long/every-value", [(1, 300), (1, 40)], 1, REQUANT),
)


def _concat_case(seed: int, t: str, tag: str, shapes, axis: int, num: str) -> Case:
    """One QLinearConcat value case: per input its own scale and zero point (``copy``: Y's), data
    over the type's range; an element no float32 kernel requantizes alike (within ``SLACK_WHERE
    |v|`` of a boundary; an inexact tie) takes its input's zero point instead (exactly 0)."""
    from .. import registry
    from ..case import Case, DataSet, Input, Output

    rng = registry.case_rng(seed, "QLinearConcat", t, tag)
    lo, hi = qref._target_range(t)
    pow2 = num == TIES
    zy = _zero_points(rng, t, ())
    if pow2:  # the ties around the middle of the range (not saturated away)
        zy = _obj([(lo + hi) // 2 + int(rng.integers(-3, 4))], ())
    triples = []
    for shp in shapes:
        if num == "copy":
            triples.append([None, None, None])
            continue
        z = _obj([(lo + hi) // 2 + int(rng.integers(-20, 21))], ()) if pow2 else _zero_points(rng, t, ())
        x = _data(rng, t, shp, z, pow2)
        triples.append([x, _scales(rng, "float", (), pow2), z])
    if pow2:  # x_scale = y_scale / 2 (odd differences give exact .5 ties) or y_scale (integers)
        sy = float(rng.choice([2.0 ** -4, 2.0 ** -5]))
        for i, tr in enumerate(triples):
            tr[1] = np.array(sy * (0.5 if i == 0 else float(rng.choice([0.5, 1.0]))))
    else:
        m = max((abs(float(v)) for x, s, z in triples if x is not None
                 for v in ((np.asarray(x, dtype=object) - z) * Fraction(float(s))).ravel().tolist()), default=1.0) or 1.0
        f = float(rng.choice([0.08, 0.15])) if num == SATURATE else float(rng.choice([0.7, 1.0, 1.3]))
        sy = float(V.representable(np.array([m / ((hi - lo) / 2) * f]), "float")[0])
    if num == "copy":
        triples = [[_data(rng, t, shp, None, False), np.array(sy), zy] for shp in shapes]
    for tr in triples:  # the non-robust elements become the zero point
        v, ok = ref.concat_parts(np.array(sy), [tr], 0 if np.ndim(tr[0]) else 0)
        robust = ref.robust_where(v, ok, zy, t)
        xs = np.asarray(tr[0], dtype=object).copy()
        xs[~robust] = tr[2][()] if isinstance(tr[2], np.ndarray) else tr[2]
        tr[0] = xs
    y = ref.qlinear_concat(np.array(sy), zy, [tuple(tr) for tr in triples], axis, t)
    feeds = {"Y_scale": np.array(sy, dtype=np.float32), "Y_zero_point": V.to_type(np.asarray(zy, dtype=object), t)}
    inputs = [Input("Y_scale", V.elem("float"), ()), Input("Y_zero_point", V.elem(t), ())]
    for i, (x, s, z) in enumerate(triples):
        for j, (val, tt) in enumerate(((x, t), (np.asarray(s), "float"), (np.asarray(z, dtype=object), t))):
            name = f"inputs_{3 * i + j}"
            arr = V.to_type(val, tt)
            inputs.append(Input(name, V.elem(tt), tuple(arr.shape)))
            feeds[name] = arr
    out = V.to_type(y, t)
    return Case(op="QLinearConcat", since_version=1, opset=1, attributes={"axis": axis}, inputs=inputs,
                outputs=[Output("Y", V.elem(t), _EXACT)], datasets=[DataSet(feeds, {"Y": out})],
                tags={"dtype": t, "numerics": num, "shape": tag, "arity": len(shapes), "opset": 1},
                label=f"{t}/{num}/{tag}/opset1", domain=MS)


def _concat_error(seed: int, tag: str, why: str, shapes, axis: int, types=None) -> Case:
    from .. import registry
    from ..case import Case, DataSet, Input, Output

    rng = registry.case_rng(seed, "QLinearConcat", "error", tag)
    feeds = {"Y_scale": np.array(0.1, dtype=np.float32), "Y_zero_point": np.array(3, dtype=np.uint8)}
    inputs = [Input("Y_scale", V.elem("float"), ()), Input("Y_zero_point", V.elem("uint8"), ())]
    for i, shp in enumerate(shapes):
        tt = (types or {}).get(i, "uint8" if i % 3 != 1 else "float")
        arr = V.to_type(rng.integers(0, 200, size=shp) if tt != "float" else rng.uniform(0.05, 0.2, size=shp), tt)
        inputs.append(Input(f"inputs_{i}", V.elem(tt), tuple(arr.shape)))
        feeds[f"inputs_{i}"] = arr
    return Case(op="QLinearConcat", since_version=1, opset=1, attributes={"axis": axis}, inputs=inputs,
                outputs=[Output("Y", V.elem("uint8"))], datasets=[DataSet(feeds)],
                tags={"dtype": "uint8", "error": tag, "opset": 1}, label=f"uint8/error={tag}", expect_error=why,
                domain=MS)


def concat_cases(seed: int, depth: str = "full") -> list:
    """Every QLinearConcat case (:attr:`Entry.extra_cases`: the engine's variadic occurrences share
    one type, the heterogeneous (tensor, scale, zero point) list is built here)."""
    out = [_concat_case(seed, t, *v) for t in ("uint8", "int8") for v in _CONCAT_VARIANTS]
    if depth == "smoke":
        out = out[:1] + out[len(_CONCAT_VARIANTS):len(_CONCAT_VARIANTS) + 1]
    errs = [
        _concat_error(seed, "axis-out-of-range", "axis 2 outside [-r, r-1] for rank-2 inputs",
                      [(2, 3), (), (), (1, 3), (), ()], 2),
        _concat_error(seed, "shapes", "'All input tensors must have the same shape, except for the dimension size "
                      "of the axis to concatenate on': (2, 3) and (2, 4) along axis 0",
                      [(2, 3), (), (), (2, 4), (), ()], 0),
        _concat_error(seed, "incomplete-triple", "inputs are (tensor, scale, zero point) triples: 5 inputs",
                      [(2, 3), (), (), (1, 3), ()], 0),
    ]
    return out + (errs[:1] if depth == "smoke" else errs)


def _concat_oracle(ctx, Y_scale, Y_zero_point, *inputs, **attrs):
    """onnxruntime's QLinearConcat (:func:`conformance.reference.contrib_quant.qlinear_concat`)."""
    triples = [tuple(inputs[i:i + 3]) for i in range(0, len(inputs), 3)]
    return ref.qlinear_concat(Y_scale, Y_zero_point, triples, int(attrs["axis"]), ctx.out_types["Y"])


def _concat_filter(version: int, combo) -> str | None:
    if combo.get("TV") == "float":
        return "TV's float is the scales' type in the heterogeneous inputs list (covered by every case)"
    if combo.get("TV") != combo.get("T8"):
        return "the quantized inputs have Y's type T8 (onnxruntime's kernel and type inference: one type)"
    return None


def _concat_declared(version: int, combo) -> str | None:
    if combo.get("TV") == combo.get("T8"):
        return ("the inputs list is heterogeneous: TV binds the quantized tensors (T8's type) and their float scales "
                "at once, so a model shows TV as both; every value case is this combination")
    return None


QLINEAR_CONCAT = Entry(
    "QLinearConcat", _concat_oracle, family="values", domain=MS, extra_cases=concat_cases,
    type_filter=_concat_filter, declared=_concat_declared,
    notes={1: "onnxruntime-defined (com.microsoft): (tensor, scale, zero point) triples requantized to Y's "
              "scale and zero point and concatenated along axis; rounding half to even, saturation"})

ENTRIES = (QLINEAR_SIGMOID, QLINEAR_LEAKY_RELU, QLINEAR_WHERE, QLINEAR_GLOBAL_AVERAGE_POOL, MS_QUANTIZE_LINEAR,
           MS_DEQUANTIZE_LINEAR, QLINEAR_AVERAGE_POOL, QLINEAR_SOFTMAX, QLINEAR_CONCAT)
register_entries(ENTRIES, family="contrib_quant")

__all__ = ["ENTRIES", "QLINEAR_SIGMOID", "QLINEAR_LEAKY_RELU", "QLINEAR_WHERE", "QLINEAR_GLOBAL_AVERAGE_POOL",
           "MS_QUANTIZE_LINEAR", "MS_DEQUANTIZE_LINEAR", "QLINEAR_AVERAGE_POOL", "QLINEAR_SOFTMAX", "QLINEAR_CONCAT"]
