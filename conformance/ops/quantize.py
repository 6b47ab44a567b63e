"""QuantizeLinear (ai.onnx 10, 13, 19, 21, 23, 24, 25, 28) and DequantizeLinear (10, 13, 19, 21,
23, 24, 25, 28) as entries of the operator table (family ``shaped``).

The exact oracles and the robustness rule: :mod:`conformance.reference.quantize`.  What the
entries add:

* **one value table per case** (numerics class ``quant-table``, the only class): per-element
  scales and zero points drawn per granularity, and quotients ``x / scale`` aimed at integers,
  exact ``.5`` ties of both parities (with scales that are not powers of two: 3, 7, 0.375...),
  quarter points, the type's range edges and values beyond them (saturation), and for floating
  targets (float8, float4e2m1, float6) the target's grid, its midpoints (ties), values beyond
  its largest and NaN/+-inf where the input type has them; every element is robust
  (:func:`conformance.reference.quantize.robust_quotient`): its result does not depend on the
  precision a legitimate kernel divides in;
* DequantizeLinear's tables keep ``x - x_zero_point`` within the integers the output type holds
  exactly (2**24 float, 2048 float16, 256 bfloat16) and scales of at most 4 significant bits, so
  that the product is correctly rounded whatever precision (float32 or the output type) the
  kernel multiplies in: the comparison is exact;
* **shapes**: per tensor (rank 0, 1, 2, zero-size), per axis at every axis of ranks 2-4 with
  negative axes and the default axis (from 13), blocked along the first, middle and last axis
  with block sizes that do and do not divide the dimension (from 21); odd element counts for
  the packed 4- and 2-bit types;
* **attributes**: ``saturate`` 0 (float8 targets, from 19), ``precision`` float and float16 (23+),
  ``output_dtype`` written where the zero point is absent and the type is not uint8 (21+;
  before 21 a case without zero point is uint8: :attr:`Entry.optional_rule`), and written out
  equal to the zero point's type on half of the others; DequantizeLinear's ``output_dtype``
  where the output type differs from the scale's (23+);
* **error cases**: a per-axis scale of the wrong length, an axis out of range, a blocked scale
  whose block count disagrees with ``block_size`` (below and above the accepted range), a zero
  point whose type disagrees with ``output_dtype``, zero point and scale of different shapes.

Left out with a reason (:attr:`Entry.type_filter`, reported by coverage): QuantizeLinear-23+
with an int32 ``y_scale`` (the division "in int32 precision" has no defined rounding).
"""

from __future__ import annotations

from functools import lru_cache

import numpy as np

from ..reference import quantize as ref
from ..tolerance import Tolerance
from . import values as V
from .entry import Attrs, Entry, Err, Shape
from .engine import register_entries

CLASS = "quant-table"

#: Scales (per element) of QuantizeLinear: powers of two and values whose reciprocal is not
#: exact (a kernel multiplying by the rounded reciprocal misses the ties of these).
Q_SCALES = (1.0, 0.5, 2.0, 0.25, 7.0, 3.0, 0.375, 5.0, 1.5, 0.1, 0.3, 11.0, 0.0625, 6.0)
#: Scales of DequantizeLinear: at most 4 significant bits (exact in every scale type).
DQ_SCALES = (1.0, 0.5, 0.25, 0.125, 1.5, 2.0, 3.0, 5.0, 7.0, 0.375, 0.75, 0.046875, 12.0, 1.25, 0.0234375)
#: The largest |x - x_zero_point| an output type holds exactly.
_EXACT_INT = {"float": 2**24, "float16": 2048, "bfloat16": 256}


def _axis(ctx) -> int:
    return int(ctx.attrs.get("axis", 1))


def _block(ctx) -> int:
    return int(ctx.attrs.get("block_size", 0) or 0)


def _precision(ctx) -> str | None:
    p = int(ctx.attrs.get("precision", 0) or 0)
    return V.name_of(p) if p else None


def _scale_values(rng, shape, t: str, table) -> np.ndarray:
    if t == "float8e8m0":
        vals = np.exp2(rng.integers(-3, 4, size=shape).astype(np.float64)).reshape(shape)
        return vals
    if V.kind(t) == V.INT:
        out = np.empty(shape, dtype=object)
        out.ravel()[:] = [int(v) for v in rng.choice([1, 2, 3, 7], size=int(np.prod(shape, dtype=np.int64)))]
        return out
    vals = np.asarray(rng.choice(table, size=shape), dtype=np.float64).reshape(shape)
    return V.representable(vals, t)


def _obj(vals, shape) -> np.ndarray:
    out = np.empty(shape, dtype=object)
    out.ravel()[:] = [int(v) for v in np.asarray(vals).ravel()]
    return out


# ----------------------------------------------------------------------------- QuantizeLinear
def _q_target_ints(rng, t: str, z: int, n: int) -> list:
    """Quotients (exact, before ``+ z``) for an integer target: integers, ties of both
    parities, quarter points, the range edges and beyond."""
    lo, hi = ref._target_range(t)
    a, b = lo - z, hi - z
    span = min(b - a, 600)
    c = int(rng.integers(a, a + span + 1)) if b > a else a
    pts = [0, 0.5, -0.5, 1.5, -1.5, 2.5, 3.5, -2.5, a, b, a - 0.5, b + 0.5, b - 0.5, a + 0.5, b + 1, a - 1,
           b + 7.25, a - 9.75, 2 * b + 3, 2 * a - 3, c + 0.5, c + 0.25, c - 0.25, c + 1.5, 0.25, -0.75, 1000.5]
    pool = pts + [float(v) for v in rng.integers(a, b + 1, size=4)] + \
        [float(v) + 0.5 for v in rng.integers(max(a, -600), min(b, 600) + 1, size=4)]
    return [pool[int(i)] for i in rng.integers(0, len(pool), size=n)]


@lru_cache(maxsize=None)
def _grid(t: str) -> tuple[np.ndarray, np.ndarray]:
    """(the finite values of the floating type ``t`` sorted, the midpoints between neighbours)."""
    fin = V.finite_grid(t)
    return fin, (fin[1:] + fin[:-1]) / 2


def _q_target_floats(rng, t: str, n: int, x_type: str, inf: bool = True) -> list:
    """Quotients for a floating target: its grid, midpoints (ties), beyond its largest, NaN
    and infinities (where ``x_type`` has them and ``inf``)."""
    fin, mids = _grid(t)
    fmax = float(fin.max())
    pool = [fmax, -fmax, fmax * 1.25, -fmax * 3, fmax * 1.03, 0.0] + \
        [float(v) for v in rng.choice(fin, size=8)] + [float(v) for v in rng.choice(mids, size=8)]
    if x_type in V.IEEE:
        pool += [float("nan")] + ([float("inf"), -float("inf")] if inf else [])
    return [pool[int(i)] for i in rng.integers(0, len(pool), size=n)]


def _q_table(rng, ctx, shapes):
    x_shape, s_shape = shapes[0], shapes[1]
    t1, t2, t3 = ctx.types["x"], ctx.types["y_scale"], ctx.out_types["y"]
    axis, bs = _axis(ctx), _block(ctx)
    sat = bool(ctx.attrs.get("saturate", 1))
    precs = ref.division_precisions(t2, _precision(ctx))
    scale = _scale_values(rng, s_shape, t2, Q_SCALES)
    has_zp = "y_zero_point" in ctx.types
    if ref.is_float_target(t3):
        zp = np.zeros(s_shape, dtype=np.float64)
    else:
        lo, hi = ref._target_range(t3)
        cands = [lo, hi, 0 if lo <= 0 <= hi else lo, (lo + hi) // 2]
        zv = [cands[int(i)] if i < 4 else int(rng.integers(lo, hi + 1)) for i in rng.integers(0, 7, size=max(1, int(np.prod(s_shape, dtype=np.int64))))]
        zp = _obj(np.array(zv[: int(np.prod(s_shape, dtype=np.int64))], dtype=object), s_shape)
        if not has_zp:
            zp = _obj(np.zeros(s_shape, dtype=np.int64), s_shape)
    n = int(np.prod(x_shape, dtype=np.int64))
    s_full = np.asarray(ref.expand(scale, x_shape, axis, bs)).ravel().tolist() if n else []
    z_full = np.asarray(ref.expand(zp, x_shape, axis, bs)).ravel().tolist() if n else []
    xs = []
    no_inf = False
    for i in range(n):
        s, z = s_full[i], z_full[i]
        for attempt in range(4):
            if ref.is_float_target(t3):
                # +-inf into a fnuz type with saturate before 24: Cast's table of the time gives NaN,
                # Cast-24's +-max; QuantizeLinear's text names neither (left out, docs/tolerance.md)
                no_inf = t3.endswith("fnuz") and sat and ctx.version < 24
                q = _q_target_floats(rng, t3, 1, t1, inf=not no_inf)[0]
            else:
                q = _q_target_ints(rng, t3, int(z), 1)[0] if attempt < 3 else 0.0
            if V.kind(t1) == V.INT:
                info = V.iinfo(t1)
                if not np.isfinite(q):
                    continue
                xv = int(max(int(info.min), min(int(info.max), round(q * float(s)))))
            else:
                xv = float(V.representable(np.array([q * float(s)]), t1)[0])
                if np.isinf(xv) and (not ref.is_float_target(t3) or no_inf):
                    continue
            if ref.robust_quotient(xv, s, z, t3, precs, saturate=sat, version=ctx.version):
                break
        else:
            xv = 0 if V.kind(t1) == V.INT else 0.0
        xs.append(xv)
    if V.kind(t1) == V.INT:
        x = _obj(np.array(xs, dtype=object), x_shape)
    else:
        x = np.array(xs, dtype=np.float64).reshape(x_shape)
    out = [x, scale]
    if has_zp:
        out.append(zp)
    return out


def _q_out_type(ctx) -> str:
    return ctx.out_types["y"]


def _q_oracle(ctx, x, y_scale, y_zero_point=None, **attrs):
    return ref.quantize_linear(x, y_scale, y_zero_point, axis=int(attrs.get("axis", 1)),
                               block_size=int(attrs.get("block_size", 0) or 0), out_type=_q_out_type(ctx),
                               saturate=bool(attrs.get("saturate", 1)), version=ctx.version)


def _q_optional_rule(version: int, combo, optional) -> bool:
    """Before 21 a QuantizeLinear without ``y_zero_point`` is uint8 (no ``output_dtype``)."""
    if "y_zero_point" in optional or version >= 21:
        return True
    return combo.get("T2") == "uint8"


def _q_out_name(version: int, combo) -> str:
    return combo["T3"] if version >= 23 else combo["T2"]


def _q_drawn(rng, p) -> dict:
    """``output_dtype`` (21+): written where the zero point is absent and the type is not
    uint8 (it alone names the type), and equal to the zero point's type on the cases given as
    initializers."""
    if p.version < 21:
        return {}
    t = _q_out_name(p.version, dict(p.types))
    if "y_zero_point" not in p.optional:
        return {"output_dtype": V.elem(t)} if t != "uint8" or p.params == "initializers" else {}
    return {"output_dtype": V.elem(t)} if p.params == "initializers" else {}


def _q_type_filter(version: int, combo) -> str | None:
    if version >= 23 and combo.get("T2") == "int32":
        return ("an int32 y_scale makes the division 'int32 precision', whose rounding the text does not define "
                "(onnx.reference divides in float)")
    return None


def _q_combination_states(version: int, combo, attrs) -> bool:
    """``saturate=0`` for float8 targets only (the text: it only applies to them)."""
    t = _q_out_name(version, combo)
    if "saturate" in attrs and attrs["saturate"] == 0:
        return t in ref.FLOAT8
    return True


def _exact_tol(ctx, inputs, attrs, outputs):
    return {"y": Tolerance(0.0, 0.0, exact=True, signed_zero=False)}


def _shapes(s: str, z: str, blocked_since: int = 21) -> tuple[Shape, ...]:
    def sh(name, x, sc, attrs=None, since=0, dims=None, cycle=True):
        return Shape(name, {"x": x, s: sc, z: sc}, dict(attrs or {}), since=since, dims=dims or {}, cycle=cycle)

    d2 = {"S": (2, 3), "L": (5, 9)}
    d3 = {"A": (2, 3), "B": (2, 3), "L": (3, 7)}
    return (
        sh("tensor/r2", "SL", "", dims=d2),
        sh("tensor/r1/odd", "L", "", dims={"L": (9, 17)}),
        sh("axis-default/r2", "SL", "L", since=13, dims=d2),
        sh("axis=0/r3", "ABL", "A", {"axis": 0}, since=13, dims=d3),
        sh("axis=-1/r3", "ABL", "L", {"axis": -1}, since=13, dims=d3),
        sh("axis=-2/r3", "ABL", "B", {"axis": -2}, since=13, dims=d3),
        sh("axis=2/r4", "AB3L", "3", {"axis": 2}, since=13, dims={"A": (1, 2), "B": (2, 2), "L": (2, 3)}),
        sh("axis=-3/r3", "ABL", "A", {"axis": -3}, since=13, dims=d3),
        sh("blocked/axis=1/B=3", "S7", "S3", {"axis": 1, "block_size": 3}, since=blocked_since, dims=d2),
        sh("blocked/axis=0/B=4", "8S", "2S", {"axis": 0, "block_size": 4}, since=blocked_since, dims=d2),
        sh("blocked/axis=-1/B=4", "2S9", "2S3", {"axis": -1, "block_size": 4}, since=blocked_since, dims=d2),
        sh("blocked/axis=1/B=5/one-block", "S5", "S1", {"axis": 1, "block_size": 5}, since=blocked_since, dims=d2),
        sh("blocked/axis=-2/B=2/r3", "S5L", "S3L", {"axis": -2, "block_size": 2}, since=blocked_since,
           dims={"S": (1, 2), "L": (2, 3)}),
        sh("tensor/rank0", "", "", cycle=False),
        sh("tensor/zero-size", "S0", "", dims={"S": (1, 3)}, cycle=False),
    )


def _q_per_type(version: int, combo) -> int:
    t = _q_out_name(version, combo)
    if version < 21:
        return 6
    if t in ref.FLOAT8:
        return 2
    return 2 if combo["T1"] == combo["T2"] else 1


def _errors(s: str, z: str, dq: bool) -> tuple[Err, ...]:
    base = dict(type_name="uint8" if dq else "float")
    out = [
        Err(f"per-axis {s} must have the length of the axis: (2,) for axis 1 of a (2, 3) input", "scale-length",
            {"axis": 1}, ((2, 3), (2,), (2,)), since=13, **base),
        Err("axis must be in [-r, r-1]: 2 for a rank-2 input", "axis-out-of-range", {"axis": 2},
            ((2, 3), (3,), (3,)), since=13, **base),
        Err("axis must be in [-r, r-1]: -3 for a rank-2 input", "axis-negative-out-of-range", {"axis": -3},
            ((2, 3), (2,), (2,)), since=13, **base),
        Err(f"{z} must have the shape of {s}: (3,) and (2,)", "zero-point-shape", {"axis": 1},
            ((2, 3), (3,), (2,)), since=13, **base),
        Err("block_size 2 is below the accepted range [ceil(6/2), ceil(6/1)-1] = [3, 5] for a (2, 6) input and a "
            "(2, 2) scale", "block-size-too-small", {"axis": 1, "block_size": 2}, ((2, 6), (2, 2), (2, 2)),
            since=21, **base),
        Err("block_size 6 is above the accepted range [3, 5] for a (2, 6) input and a (2, 2) scale",
            "block-size-too-large", {"axis": 1, "block_size": 6}, ((2, 6), (2, 2), (2, 2)), since=21, **base),
        Err("blocked: the scale's other dimensions must be the input's: (3, 2) for a (2, 6) input", "block-shape",
            {"axis": 1, "block_size": 3}, ((2, 6), (3, 2), (3, 2)), since=21, **base),
    ]
    if not dq:
        out.append(Err("if both output_dtype and y_zero_point are given, output_dtype must be y_zero_point's type: "
                       "INT8 with a uint8 zero point", "output-dtype-mismatch", {"output_dtype": V.elem("int8")},
                       ((2, 3), (), ()), since=21, type_name="float", types={"y_zero_point": "uint8"},
                       out_types={"y": "int8"}))
    else:
        out.append(Err("x_zero_point must have x's type: uint8 x with an int8 zero point", "zero-point-type",
                       {}, ((2, 3), (), ()), types={"x": "uint8", "x_zero_point": "int8"}))
    return tuple(out)


QUANTIZE_LINEAR = Entry(
    "QuantizeLinear", _q_oracle, family="shaped", shapes=_shapes("y_scale", "y_zero_point"),
    attrs=(Attrs({"saturate": 0}, since=19, tag="saturate=0"),
           Attrs({"precision": V.elem("float")}, since=23, tag="precision=float"),
           Attrs({"precision": V.elem("float16")}, since=23, tag="precision=float16")),
    float_numerics={CLASS: _q_table}, int_numerics={CLASS: _q_table}, numerics_classes=lambda t: (CLASS,),
    per_type=_q_per_type, tolerance=_exact_tol, type_filter=_q_type_filter, optional_rule=_q_optional_rule,
    drawn_attrs=_q_drawn, combination_states=_q_combination_states, errors=_errors("y_scale", "y_zero_point", False),
    notes={13: "axis (per-axis)", 19: "float16/bfloat16 inputs and scales, float8 targets, saturate",
           21: "int16/uint16/int4/uint4, blocked (block_size), output_dtype",
           23: "precision, y_scale's own type T2, float4e2m1", 24: "float8e8m0 scales", 25: "int2/uint2",
           28: "float6e2m3/float6e3m2"})


# ----------------------------------------------------------------------------- DequantizeLinear
def _dq_out(ctx) -> str:
    return ctx.out_types["y"]


def _dq_table(rng, ctx, shapes):
    x_shape, s_shape = shapes[0], shapes[1]
    t1, t2, t3 = ctx.types["x"], ctx.types["x_scale"], _dq_out(ctx)
    axis, bs = _axis(ctx), _block(ctx)
    scale = _scale_values(rng, s_shape, t2, DQ_SCALES)
    has_zp = "x_zero_point" in ctx.types
    ns = int(np.prod(s_shape, dtype=np.int64))
    n = int(np.prod(x_shape, dtype=np.int64))
    if V.kind(t1) == V.FLOAT:
        allv = V.all_values(t1).astype(np.float64)
        finite = allv[np.isfinite(allv)]
        fmax = float(finite.max())
        pool = np.concatenate([finite, [fmax, -fmax if (finite < 0).any() else fmax]]
                              + ([[np.nan]] if np.isnan(allv).any() else []))
        pool = pool[np.abs(np.nan_to_num(pool)) * 12.0 < float(V.finfo(t3).max) / 2]  # no overflow in T3
        x = np.asarray(rng.choice(pool, size=x_shape), dtype=np.float64).reshape(x_shape)
        zp = np.zeros(s_shape, dtype=np.float64)
        return [x, scale] + ([zp] if has_zp else [])
    lo, hi = ref._target_range(t1)
    lim = _EXACT_INT[t3] if t3 in _EXACT_INT else 2**24
    if t1 == "int32":
        zv = [0] * ns
    else:
        cands = [lo, hi, 0 if lo <= 0 <= hi else lo, (lo + hi) // 2]
        zv = [cands[int(i)] if i < 4 else int(rng.integers(lo, hi + 1)) for i in rng.integers(0, 7, size=ns)]
    zp = _obj(np.array(zv, dtype=object), s_shape) if ns else _obj(np.zeros(s_shape, dtype=np.int64), s_shape)
    z_full = np.asarray(ref.expand(zp if has_zp else _obj(np.zeros(s_shape, dtype=np.int64), s_shape),
                                   x_shape, axis, bs)).ravel().tolist() if n else []
    xs = []
    for i in range(n):
        z = int(z_full[i])
        a, b = max(lo, z - lim), min(hi, z + lim)
        pick = int(rng.integers(0, 6))
        xv = [a, b, z, min(b, z + 1), max(a, z - 1), int(rng.integers(a, b + 1))][pick]
        xs.append(xv)
    x = _obj(np.array(xs, dtype=object), x_shape)
    return [x, scale] + ([zp] if has_zp else [])


def _dq_oracle(ctx, x, x_scale, x_zero_point=None, **attrs):
    return ref.dequantize_linear(x, x_scale, x_zero_point, axis=int(attrs.get("axis", 1)),
                                 block_size=int(attrs.get("block_size", 0) or 0))


def _dq_drawn(rng, p) -> dict:
    """``output_dtype`` (23+): written where the output type differs from the scale's, and on
    the cases given as initializers."""
    if p.version < 23:
        return {}
    c = dict(p.types)
    if c["T3"] != c["T2"] or p.params == "initializers":
        return {"output_dtype": V.elem(c["T3"])}
    return {}


DEQUANTIZE_LINEAR = Entry(
    "DequantizeLinear", _dq_oracle, family="shaped", shapes=_shapes("x_scale", "x_zero_point"),
    float_numerics={CLASS: _dq_table}, int_numerics={CLASS: _dq_table}, numerics_classes=lambda t: (CLASS,),
    per_type=lambda v, c: 6 if v < 21 else 1, tolerance=_exact_tol, drawn_attrs=_dq_drawn,
    errors=_errors("x_scale", "x_zero_point", True),
    notes={13: "axis (per-axis)", 19: "float8 inputs, float16/bfloat16 scales", 21: "int16/uint16/int4/uint4, "
           "blocked (block_size)", 23: "output_dtype, float4e2m1", 24: "float8e8m0 scales", 25: "int2/uint2",
           28: "float6e2m3/float6e3m2"})

ENTRIES = (QUANTIZE_LINEAR, DEQUANTIZE_LINEAR)
register_entries(ENTRIES, family="quantize")

#: The value tables of QuantizeLinear and DequantizeLinear (one per case: robust quotients, ties,
#: saturation; exact products), public for onnxruntime's com.microsoft QuantizeLinear /
#: DequantizeLinear (:mod:`conformance.ops.contrib_quant`), which read the same context fields.
quantize_table, dequantize_table = _q_table, _dq_table


# ----------------------------------------------------------------------------- DynamicQuantizeLinear
#: Target scales: powers of two and values whose float32 quotients are inexact.
DYN_SCALES = (0.0625, 0.5, 1.0, 0.25, 0.1, 0.3, 0.02, 1.7, 3.0)


def _dyn_table(rng, ctx, shapes):
    """x with its minimum and maximum placed so that the zero point's intermediate value is a
    tie (k + 0.5, both parities), a fraction that truncation and rounding tell apart (k + 0.3,
    k + 0.7), an integer, or clipped (all positive: 0; all negative: 255); the other elements
    aim at ties of ``x / y_scale``.  Drawn again until the scale and the zero point are robust
    (:func:`conformance.reference.quantize.dynamic_robust`); non-robust elements become 0."""
    shape = shapes[0]
    n = int(np.prod(shape, dtype=np.int64))
    for _ in range(40):
        s = float(rng.choice(DYN_SCALES))
        mode = str(rng.choice(["tie", "tie", "frac", "int", "positive", "negative"]))
        k = int(rng.integers(1, 254))
        f = {"tie": 0.5, "frac": float(rng.choice([0.3, 0.7])), "int": 0.0}.get(mode, 0.0)
        if mode == "positive":
            lo, hi = s * float(rng.uniform(0.1, 50)), 255 * s
        elif mode == "negative":
            lo, hi = -255 * s, -s * float(rng.uniform(0.1, 50))
        else:
            lo = -(k + f) * s
            hi = lo + 255 * s
        lo, hi = (float(v) for v in V.representable(np.array([lo, hi]), "float"))
        if n == 1:
            vals = np.array([lo if abs(lo) > abs(hi) else hi])
        else:
            pts = [lo, hi]
            qs = np.floor(rng.uniform(lo / s, hi / s, size=max(0, n - 2))) + rng.choice([0.5, 0.0, 0.25], size=max(0, n - 2))
            pts += [float(q) * s for q in qs]
            vals = np.clip(V.representable(np.array(pts[:n]), "float"), min(lo, hi), max(lo, hi))
            vals = vals[rng.permutation(n)]
        ok, mask = ref.dynamic_robust(vals)
        if not ok:
            continue
        keep = mask | (vals == vals.min()) | (vals == vals.max())
        vals = np.where(keep, vals, 0.0)
        ok2, mask2 = ref.dynamic_robust(vals)
        if ok2 and mask2.all():
            return [vals.reshape(shape)]
    raise ValueError("no robust DynamicQuantizeLinear data found")


def _dyn_oracle(ctx, x, **attrs):
    return ref.dynamic_quantize_linear(x)


def _dyn_tol(ctx, inputs, attrs, outputs):
    return {k: Tolerance(0.0, 0.0, exact=True, signed_zero=False) for k in outputs}


DYNAMIC_QUANTIZE_LINEAR = Entry(
    "DynamicQuantizeLinear", _dyn_oracle, family="shaped",
    shapes=(Shape("r2", {"x": "SL"}, dims={"S": (2, 3), "L": (5, 9)}),
            Shape("r1", {"x": "L"}, dims={"L": (7, 17)}),
            Shape("r3", {"x": "ABL"}, dims={"A": (1, 2), "B": (2, 3), "L": (3, 5)}),
            Shape("rank0", {"x": ""}, cycle=False)),
    float_numerics={CLASS: _dyn_table}, numerics_classes=lambda t: (CLASS,), per_type=12, tolerance=_dyn_tol,
    errors=(Err("T1 is tensor(float) only: a double x", "x-double", shapes=((2, 3),), types={"x": "double"}),),
    notes={11: "uint8 only; scale, zero point (rounded half to even, saturated) and y"})

#: DynamicQuantizeLinear's value table (public: onnxruntime's DynamicQuantizeMatMul quantizes its A
#: the same way, :mod:`conformance.ops.contrib_quant_matmul`).
dynamic_table = _dyn_table

ENTRIES = ENTRIES + (DYNAMIC_QUANTIZE_LINEAR,)
register_entries((DYNAMIC_QUANTIZE_LINEAR,), family="quantize")
