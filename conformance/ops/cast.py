"""Cast (ai.onnx 1, 6, 9, 13, 19, 21, 23, 24, 25, 28) and CastLike (15, 19, 21, 23, 24, 25) as
entries of the operator table (family ``shaped``).

The conversion rules, what the text leaves undefined or open, and the set-valued check of
numeric -> string results: :mod:`conformance.reference.cast`.  What the entries add:

* **one value case per type pair** carrying the pair's *value table* (the numerics class
  ``cast-table``, the only class: :attr:`Entry.numerics_classes`): the source type's special
  values and extremes, the target's range edges mapped into the source (its largest value,
  values that round to it, the overflow tie and just above it, the smallest subnormal, half
  of it (a tie to zero) and just above, ties to even at a few exponents, values a hair above
  or below a tie that a conversion through a wider intermediate type rounds the other way),
  integer wrap-around points (the target's range +- 1, ``2**bits``), truncation points
  (+-0.5, the target's bounds +- a fraction), float8e8m0 powers of two and their ``1.5``
  ties, decimal and scientific literals and the reserved ``INF``/``NaN`` spellings for string
  sources, and ordinary draws; every element is one the text defines for the pair and the
  attributes (``defined``), so undefined behaviour is never a value case;
* the target type fixed by the combination: Cast's ``to`` (:attr:`Entry.type_attrs`; version
  1 writes the ``DataType`` name, a string attribute), CastLike's ``target_type`` input (a
  scalar, a 1-D, a zero-size or a same-rank tensor of the target type);
* attribute states: ``saturate`` 0/1 from 19, ``round_mode`` up/down/nearest from 24, and
  which pairs take them (:attr:`Entry.combination_states`): a float8 pair the source can
  exceed takes two or three cases in a row, every ``saturate`` state without ``round_mode``
  (the text: round_mode "only applies to casting to float8e8m0"); a float8e8m0 pair three, the
  states ordered so that three in a row hold both ``saturate`` values and two rounding modes;
  every other pair one case in the default state, except the pairs from ``float``
  (:data:`WITNESS`), which cycle over every state: ``saturate`` "only applies for float 8
  conversion", so a runtime must accept and ignore it there;
* contested: CastLike-24/25 to float8e8m0 with ``round_mode`` down or nearest (onnx's function
  body drops the attribute);
* shapes: 1-D, 2-D and 3-D tensors that hold the table (odd lengths included, for the packed
  4-bit/2-bit/6-bit types), and rank 0 and zero-size once per version (``Shape.cycle``);
* numeric -> string results judged by :func:`conformance.reference.cast.check_number_strings`;
  every other result compared exactly (the sign of zero included, except float6 targets);
* error cases: ``to`` missing, of the wrong attribute type for the version, an unknown
  ``DataType``, a ``to`` the output declaration contradicts, input types outside a version's
  constraint (bfloat16 before 13, float8 before 19, int4 before 21, float4e2m1 before 23,
  float8e8m0 before 24, int2 before 25, float6 before 28), string before 9; CastLike with a
  declared output type other than ``target_type``'s.
"""

from __future__ import annotations

import math

import numpy as np
from onnx import TensorProto

from ..opspec import op_spec
from ..reference import cast as ref
from ..tolerance import Tolerance
from . import values as V
from .engine import register_entries
from .entry import Attrs, Entry, Err, Shape

CLASS = "cast-table"
#: Elements of the table a 1-D case holds at least.
_L = (48, 64)


# ----------------------------------------------------------------------------- attributes
def to_attr(version: int, type_name: str):
    """Cast's ``to`` for a target type: the ``DataType`` enum name at version 1 (a string
    attribute, ``"FLOAT"``), its value from 6."""
    elem = V.elem(type_name)
    return TensorProto.DataType.Name(elem) if version < 6 else elem


def _cast_type_attrs(version: int, combo) -> dict:
    return {"to": to_attr(version, combo["T2"])}


#: ``to`` in a state is a placeholder: the combination writes the real one (type_attrs).
_TO = {"to": 1}


def _states(with_to: bool) -> tuple[Attrs, ...]:
    """Attribute states, ordered so that any three consecutive ones hold both saturate values
    and two rounding modes (a float8e8m0 pair takes three in a row), and the states without
    ``round_mode`` alternate saturate=1 / saturate=0 (a float8 pair takes two or three).
    CastLike gets ``default`` and ``explicit-default`` from the engine (it has no required
    attribute)."""
    base = dict(_TO) if with_to else {}
    out = []
    if with_to:
        out.append(Attrs(base, tag="default"))
    out += [
        Attrs({**base, "saturate": 0}, since=19, tag="saturate=0"),
        Attrs({**base, "round_mode": "nearest"}, since=24, tag="round_mode=nearest"),
        Attrs({**base, "round_mode": "up", "saturate": 0}, since=24, tag="round_mode=up/saturate=0"),
        Attrs({**base, "saturate": 1}, since=19 if with_to else 24, tag="saturate=1"),
        Attrs({**base, "round_mode": "down", "saturate": 0}, since=24, tag="round_mode=down/saturate=0"),
    ]
    if with_to:
        out.append(Attrs({**base, "saturate": 1, "round_mode": "up"}, since=24, tag="explicit-default"))
    out += [
        Attrs({**base, "round_mode": "nearest", "saturate": 0}, since=24, tag="round_mode=nearest/saturate=0"),
        Attrs({**base, "round_mode": "down"}, since=24, tag="round_mode=down"),
    ]
    return tuple(out)


#: The source type whose pairs also carry the attributes a target ignores ("saturate ... only
#: applies for float 8 conversion"; round_mode only to float8e8m0): one pair per target and
#: version shows whether a runtime accepts them.  The other pairs leave them out.
WITNESS = "float"
#: Sources whose float8 pairs also take ``saturate=1`` written out.
_EXPLICIT_SAT = ("float", "float16")


def combination_states(version: int, combo, attrs) -> bool:
    """Whether the pair ``combo`` takes the attribute state ``attrs`` (module docstring):
    float8e8m0 targets every state; float8 targets those without ``round_mode`` (saturate=1
    written out only from float and float16); other targets only the default state, except
    from :data:`WITNESS`."""
    src, dst = combo["T1"], combo["T2"]
    if dst == ref.E8M0:
        return True
    if dst in ref.FLOAT8:
        if "round_mode" in attrs:
            return False
        return attrs.get("saturate") != 1 or src in _EXPLICIT_SAT
    return src == WITNESS or ("saturate" not in attrs and "round_mode" not in attrs)


def _target(ctx) -> str:
    return ctx.out_types.get("output") or ctx.types.get("target_type")


def _attrs_of(ctx, attrs) -> tuple[bool, str]:
    return bool(attrs.get("saturate", 1)), str(attrs.get("round_mode", "up"))


# ----------------------------------------------------------------------------- oracle
def _oracle(ctx, x, *rest, **attrs):
    sat, mode = _attrs_of(ctx, attrs)
    return ref.cast(x, ctx.types["input"], _target(ctx), version=ctx.version, saturate=sat, round_mode=mode)


def _defined(ctx, x, *rest, **attrs):
    sat, mode = _attrs_of(ctx, attrs)
    return ref.defined(x, ctx.types["input"], _target(ctx), version=ctx.version, saturate=sat, round_mode=mode)


def _check(ctx, inputs, attrs):
    src, dst = ctx.types["input"], _target(ctx)
    if dst == "string" and src != "string":
        return "conformance.reference.cast:check_number_strings"
    return None


def _contested(ctx, attrs):
    """CastLike-24/25 to float8e8m0 with ``round_mode`` other than ``up``: onnx's function body
    of CastLike writes a Cast with ``saturate`` only, so a runtime expanding it rounds up, while
    the attribute's text says it applies."""
    if ctx.op == "CastLike" and _target(ctx) == ref.E8M0 and ctx.given.get("round_mode", "up") != "up":
        return ("onnx's function body of CastLike-24/25 drops round_mode (its Cast node takes only saturate, "
                "so it rounds up); the attribute's text says it applies to float8e8m0 targets")
    return None


def _tolerance(ctx, inputs, attrs, outputs):
    dst = _target(ctx)
    signed = V.kind(dst) == V.FLOAT and dst not in ref.ZERO_SIGN_CONTESTED
    return {"output": Tolerance(0.0, 0.0, exact=True, signed_zero=signed)}


# ----------------------------------------------------------------------------- value tables
def saturate_matters(src: str, dst: str) -> bool:
    """Whether a ``src`` value can be beyond the range of the float8 target ``dst`` (or be
    +-inf), so that ``saturate`` changes the result."""
    if dst not in ref.FLOAT8:
        return False
    k = V.kind(src)
    if k in (V.STRING,):
        return True
    if k == V.BOOL:
        return False
    if k == V.FLOAT:
        if src in V.IEEE or np.isinf(V.all_values(src).astype(np.float64)).any():
            return True
        big = float(V.finfo(src).max)
    else:
        info = V.iinfo(src)
        big = float(max(abs(int(info.min)), int(info.max)))
    fi = V.finfo(dst)
    m, nm = float(fi.max), int(fi.nmant)
    ulp = 2.0 ** (math.floor(math.log2(m)) - nm)
    return big >= m + ulp / 2


def _per_type(version: int, combo) -> int:
    """Cases of a pair: 3 for float8e8m0 targets (both saturate values, two rounding modes),
    2 or 3 for float8 targets the source can exceed (every admitted saturate state), else 1."""
    src, dst = combo["T1"], combo["T2"]
    if version < 19:
        return 1
    if dst == ref.E8M0:
        return 3
    if saturate_matters(src, dst):
        return 3 if src in _EXPLICIT_SAT else 2
    return 1


def _float_points(dst: str, rng) -> list[float]:
    """Exact values around the floating target's rounding and range edges (module docstring)."""
    if dst == ref.E8M0:
        ks = rng.integers(-126, 126, size=3)
        pts = [0.0, 1.0, 2.0, 3.0, 0.75, 6.0, 12.0, 1.25, 1.75, 5.0, 7.0, 0.375, 0.625, ref.E8M0_MIN, ref.E8M0_MAX,
               2.0**-130, 2.0**-127 * 0.75, 2.0**-127 * 1.5, 1.5 * 2.0**127, 1.25 * 2.0**127, 2.0**128, 1e-40, 3e38]
        for k in ks:
            b = 2.0 ** int(k)
            pts += [b, 1.5 * b, 1.5 * b * (1 + 2.0**-30), 1.5 * b * (1 - 2.0**-30), 1.2 * b, 1.9 * b]
        return pts
    fi = V.finfo(dst)
    m, nm = float(fi.max), int(fi.nmant)
    sub, tiny = float(fi.smallest_subnormal), float(fi.smallest_normal)
    ulp = 2.0 ** (math.floor(math.log2(m)) - nm)
    pts = [m, m + ulp / 4, m + ulp / 2, (m + ulp / 2) * (1 + 2.0**-20), 2 * m, m * 1.0001, m / 2,
           sub, sub / 2, sub / 2 * (1 + 2.0**-20), 1.5 * sub, 2.5 * sub, 0.75 * sub, sub / 4, tiny, tiny - sub,
           1.0, 1 + 2.0 ** -(nm + 1), 1 + 3 * 2.0 ** -(nm + 1), 1 + 2.0 ** -(nm + 2), 1 - 2.0 ** -(nm + 2)]
    lo, hi = math.log2(tiny), math.log2(m) - 1
    for e in rng.integers(int(lo), int(hi) + 1, size=3):
        k = int(rng.integers(0, 2**nm)) & ~1 if nm else 0
        even_tie = 2.0 ** int(e) * (1 + (2 * k + 1) / 2.0 ** (nm + 1))  # the lower neighbour is even
        odd_tie = 2.0 ** int(e) * (1 + (2 * k + 3) / 2.0 ** (nm + 1))  # the upper one is
        pts += [even_tie, odd_tie, even_tie * (1 + 2.0**-40), odd_tie * (1 - 2.0**-40),
                even_tie * (1 + 2.0**-20), odd_tie * (1 - 2.0**-20)]
    pts += [float(v) for v in 10.0 ** rng.uniform(math.log10(tiny), math.log10(m), size=4)]
    return pts + [-p for p in pts[:: 2]]


def _int_points(dst: str) -> list[int]:
    """Integer sources: wrap-around points of an integer target, rounding ties of a floating
    one (odd integers beyond the target's precision; ``2**60 + 2**36 + 1`` is above a float32
    tie that a conversion through double rounds down), float8e8m0 ties."""
    k = V.kind(dst)
    if k == V.INT:
        info = V.iinfo(dst)
        lo, hi, bits = int(info.min), int(info.max), int(info.bits)
        return [lo, hi, lo - 1, hi + 1, 2**bits, 2**bits - 1, -1, hi + 2**bits, lo - 2**bits + 3, 2**(bits - 1),
                -(2**(bits - 1)) - 1, 3 * 2**bits + 5]
    if dst == ref.E8M0:
        return [0, 1, 2, 3, 5, 6, 7, 12, 24, 48, 1000, 2**31 - 1, 2**62 + 2**61, 2**63 + 2**62]
    if k == V.FLOAT:
        fi = V.finfo(dst)
        p = int(fi.nmant) + 1
        m = float(fi.max)
        pts = [2**p + 1, 2**p + 3, 2**p + 2, 2**(p + 1) + 2, 2**(p + 1) + 6]
        if m < 2.0**66:
            mi = int(m)
            ulp = 2 ** (mi.bit_length() - p)
            pts += [mi, mi + ulp // 4, mi + ulp // 2, mi + ulp // 2 + 1, 2 * mi, -mi - ulp // 2]
        for e in (40, 60):
            if e > p:
                pts += [2**e + 2 ** (e - p) + 1, 2**e + 3 * 2 ** (e - p) - 1, 2**e + 2 ** (e - p)]
        return pts + [-v for v in pts[:3]]
    return [0, 1, -1, 2, 100]


_STRINGS_FLOAT = ["0", "1", "-1", "0.5", "-2.25", "3.14", "100.5", "1e-5", "1E8", "2.5E-3", "-7e2", ".5", "5.",
                  "0.1", "-0.375", "1000000", "-1000000", "65504", "65520", "70000", "448", "464", "480", "240",
                  "248", "57344", "61440", "6", "7", "7.5", "28", "1e40", "3e38", "1.5", "0.75", "3", "12",
                  "2.5e-7", "1e-30", "1.0e+2", "-0.0625", "123456.789"]
_STRINGS_SPECIAL = ["NaN", "nan", "NAN", "INF", "inf", "+INF", "+inf", "-INF", "-inf", "Inf"]


def _string_table(dst: str, rng, version: int, sat: bool, mode: str) -> list[str]:
    k = V.kind(dst)
    if k == V.STRING:
        return list(V.ALPHABET) + ["1e5", "INF", "-0", "  2", "\u00e9t\u00e9"]
    if k == V.BOOL:
        return ["1", "2", "7", "42", "100", "65535"]
    if k == V.INT:
        info = V.iinfo(dst)
        lo, hi = int(info.min), int(info.max)
        vals = {lo, hi, 0, 1, min(hi, 7), max(lo, -1)}
        vals |= {int(v) for v in rng.integers(lo, hi, size=10, endpoint=True, dtype=np.int64 if lo < 0 else np.uint64)}
        return [str(v) for v in sorted(vals)]
    lits = list(_STRINGS_FLOAT) + list(_STRINGS_SPECIAL)
    lits += [f"{v:.{int(rng.integers(1, 6))}g}" for v in rng.normal(0, 50, size=6)]
    lits += [f"{v:.3e}" for v in rng.normal(0, 1, size=3) * 10.0 ** rng.integers(-6, 6, size=3)]
    return [s for s in lits if _robust_literal(s, dst, version, sat, mode)]


def _robust_literal(s: str, dst: str, version: int, sat: bool, mode: str) -> bool:
    """Whether the literal rounds to the same ``dst`` value directly, through double and
    through float (the text states no parsing precision), with the case's attributes."""
    v = ref.parse_literal(s)
    if isinstance(v, float):
        return True
    opts = dict(version=version, saturate=sat, round_mode=mode)
    direct = ref._round_float(np.array([ref._rne53(v) if dst == "double" else ref._odd53(v)]), dst, **opts)[0]
    dbl = ref._round_float(np.array([ref._rne53(v)]), dst, **opts)[0]
    with np.errstate(over="ignore"):
        f32 = float(np.float32(ref._odd53(v)))
    via_f = ref._round_float(np.array([f32]), dst, **opts)[0]
    same = [a for a in (dbl, via_f) if not (a == direct or (math.isnan(a) and math.isnan(direct)))]
    return not same


def _source_candidates(src: str, dst: str, rng, version: int = 28, sat: bool = True, mode: str = "up") -> list:
    """Exact candidate values of type ``src`` for the pair (before the ``defined`` filter)."""
    k = V.kind(src)
    kd = V.kind(dst)
    if k == V.BOOL:
        return [True, False]
    if k == V.STRING:
        return _string_table(dst, rng, version, sat, mode)
    if k == V.INT:
        info = V.iinfo(src)
        lo, hi = int(info.min), int(info.max)
        vals = [lo, hi, 0, 1, lo + 1, hi - 1, min(hi, 2), max(lo, -1)]
        if kd == V.STRING:
            vals += [int(v) for v in rng.integers(max(lo, -999999), min(hi, 999999), size=12, endpoint=True)]
        else:
            vals += _int_points(dst)
            vals += [int(v) for v in rng.integers(lo, hi, size=12, endpoint=True,
                                                   dtype=np.int64 if lo < 0 else np.uint64)]
        return [v for v in vals if lo <= v <= hi]
    # floating sources
    if kd == V.STRING:
        return _string_source_floats(src, rng)
    if src in V.IEEE:
        vals = list(V.float_specials(src))
    else:
        allv = V.all_values(src).astype(np.float64)
        fin = allv[np.isfinite(allv)]
        vals = [float(fin.max()), float(fin.min()), float(np.min(np.abs(fin[fin != 0]))) if (fin != 0).any() else 1.0]
        vals += [float(v) for v in allv if not np.isfinite(v)]
        vals += [float(v) for v in rng.choice(fin, size=min(14, fin.size), replace=False)]
        if src != ref.E8M0:
            vals += [0.0, -0.0, -vals[2]]
    if kd == V.INT:
        info = V.iinfo(dst)
        lo, hi = float(int(info.min)), float(int(info.max))
        vals += [lo, hi, lo - 0.5, hi + 0.5, hi + 0.75, lo - 0.75, -0.5, -0.99, 0.5, 2.5, -2.5, 1e-3, 0.999,
                 hi + 1, lo - 1]
        vals += [float(v) for v in rng.uniform(max(lo, -1e6), min(hi, 1e6), size=8)]
    elif kd == V.BOOL:
        vals += [1e-30, -1e-30, 0.25, -3.0]
    elif kd == V.FLOAT:
        vals += _float_points(dst, rng)
    vals += [float(v) for v in rng.normal(0, 8, size=6)]
    return [float(v) for v in V.representable(np.array(vals, dtype=np.float64), src)]


def _string_source_floats(src: str, rng) -> list[float]:
    """Floating values whose 6-significant-digit (``%g``) formatting rounds back to them in
    ``src``, with magnitudes in [1e-4, 1e6), NaN, +-inf, +-0 where the type has them."""
    cands = [0.0, -0.0, 1.0, -1.0, 0.5, 3.0, -2.75, 100.5, 0.1, 314.15926, 0.0001, 12345.6, 65504.0, 999999.0]
    cands += [float(v) for v in rng.integers(1, 999999, size=8) * 10.0 ** rng.integers(-6, 1, size=8)]
    cands += [-c for c in cands[::3]]
    cands += [math.nan, math.inf, -math.inf]
    if src not in V.IEEE:
        allv = V.all_values(src).astype(np.float64)
        cands += [float(v) for v in rng.choice(allv, size=min(16, allv.size), replace=False)]
    vals = V.representable(np.array(cands, dtype=np.float64), src)
    out = []
    for v in vals.tolist():
        if math.isfinite(v) and v != 0 and not (1e-4 <= abs(v) < 1e6):
            continue
        if math.isfinite(v):
            q = ref.parse_literal(f"{v:g}")
            back = float(f"{v:g}") if src == "double" else float(ref._round_float(
                np.array([ref._odd53(q)]), src, version=28, saturate=False, round_mode="nearest")[0])
            if back != v:
                continue
        out.append(v)
    return out


def _as_source_array(vals: list, src: str) -> np.ndarray:
    k = V.kind(src)
    if k == V.FLOAT:
        return np.array(vals, dtype=np.float64)
    if k == V.BOOL:
        return np.array(vals, dtype=bool)
    out = np.empty(len(vals), dtype=object)
    out[:] = vals
    return out


def _dedupe(vals: list, src: str) -> list:
    seen, out = set(), []
    for v in vals:
        key = ("nan",) if isinstance(v, float) and math.isnan(v) else (
            (v, math.copysign(1.0, v)) if isinstance(v, float) else (type(v).__name__, v))
        if key not in seen:
            seen.add(key)
            out.append(v)
    return out


def table(rng, ctx) -> np.ndarray:
    """The pair's value table (module docstring): distinct source values, each defined for the
    case's target and attributes, in a random order."""
    src, dst = ctx.types["input"], _target(ctx)
    sat, mode = _attrs_of(ctx, ctx.attrs)
    vals = _dedupe(_source_candidates(src, dst, rng, ctx.version, sat, mode), src)
    arr = _as_source_array(vals, src)
    ok = ref.defined(arr, src, dst, version=ctx.version, saturate=sat, round_mode=mode)
    arr = arr[ok]
    return arr[rng.permutation(arr.size)]


def _fit(rng, tab: np.ndarray, shape) -> np.ndarray:
    """The table laid out in ``shape``: every value when it fits (the rest drawn from the table
    again), else a random subset."""
    n = int(np.prod(shape, dtype=np.int64))
    if n == 0 or tab.size == 0:
        if n and tab.size == 0:
            raise ValueError("empty value table")
        return tab[:0].reshape(shape)
    if n <= tab.size:
        flat = tab[rng.permutation(tab.size)[:n]]
    else:
        extra = tab[rng.integers(0, tab.size, size=n - tab.size)]
        flat = np.concatenate([tab, extra])[rng.permutation(n)]
    return flat.reshape(shape)


def _target_value(t: str, shape) -> np.ndarray:
    """CastLike's ``target_type``: only its type matters; ones (True, ``"a"``)."""
    k = V.kind(t)
    if k == V.FLOAT:
        return np.ones(shape, dtype=np.float64)
    if k == V.BOOL:
        return np.ones(shape, dtype=bool)
    if k == V.STRING:
        return np.full(shape, "a", dtype=object)
    out = np.empty(shape, dtype=object)
    out.reshape(-1)[:] = [1] * int(np.prod(shape, dtype=np.int64))
    return out


def _cast_table(rng, ctx, shapes):
    x = _fit(rng, table(rng, ctx), shapes[0])
    if ctx.op == "CastLike":
        return [x, _target_value(ctx.types["target_type"], shapes[1])]
    return [x]


# ----------------------------------------------------------------------------- shapes
def _shapes(castlike: bool) -> tuple[Shape, ...]:
    def s(name, x, t, dims, cycle=True):
        inputs = {"input": x, "target_type": t} if castlike else {"input": x}
        return Shape(name, inputs, dims=dims, cycle=cycle)

    return (
        s("r1", "L", "", {"L": _L}),
        s("r2", "SL", "1" if castlike else "", {"S": (2, 3), "L": (24, 32)}),
        s("r3", "2SL", "L" if castlike else "", {"S": (2, 3), "L": (12, 16)}),
        s("r1/target-zero-size" if castlike else "r2/long", "L" if castlike else "2L", "0" if castlike else "",
          {"L": _L}),
        s("rank0", "", "", {}, cycle=False),
        s("zero-size", "S0", "S0" if castlike else "", {"S": (1, 3)}, cycle=False),
    )


# ----------------------------------------------------------------------------- error cases
#: (since_version, a type the version's constraint first admits): the type is invalid just before.
def _arrivals() -> tuple[tuple[int, str], ...]:
    """(version, type): the first type (schema order) that Cast's T2 gains at each version,
    read from the installed onnx's schemas (string at 9, bfloat16 at 13, float8e4m3fn at
    19, ...; an older onnx has fewer)."""
    spec = op_spec("Cast")
    vs = spec.since_versions
    out = []
    for a, b in zip(vs, vs[1:]):
        old = set(spec.versions[a].type_constraints["T2"])
        new = [t for t in spec.versions[b].type_constraints["T2"] if t not in old]
        if new:
            out.append((b, new[0][7:-1] if new[0].startswith("tensor(") else new[0]))
    return tuple(out)


def _before(versions: tuple[int, ...], since: int) -> int | None:
    """The last of ``versions`` before ``since`` (None if there is none)."""
    prev = [v for v in versions if v < since]
    return prev[-1] if prev else None


_TYPE_ARRIVALS = _arrivals()
_CAST_VERSIONS = tuple(op_spec("Cast").since_versions)
_CASTLIKE_VERSIONS = tuple(op_spec("CastLike").since_versions)


def _cast_errors() -> tuple[Err, ...]:
    f, d = V.elem("float"), V.elem("double")
    out = [
        Err("'to' is a required attribute", "to-missing", {"to": None}, ((2, 3),), type_name="float",
            out_types={"output": "float"}),
        Err("'to' must be one of the DataType enum values (999 is none)", "to-unknown", {"to": 999}, ((2, 3),),
            since=6, type_name="float", out_types={"output": "float"}),
        Err("'to' is an INT attribute from version 6 (a DataType value), not a string", "to-string",
            {"to": "FLOAT"}, ((2, 3),), since=6, type_name="float", out_types={"output": "float"}),
        Err("'to' is a STRING attribute at version 1 (the DataType name)", "to-int", {"to": f}, ((2, 3),), until=5,
            type_name="float", out_types={"output": "float"}),
        Err("the output has the type 'to' names: to=DOUBLE declared float", "output-type", {"to": d}, ((2, 3),),
            since=6, type_name="float", out_types={"output": "float"}),
    ]
    for since, t in _TYPE_ARRIVALS:
        prev = _before(_CAST_VERSIONS, since)
        out.append(Err(f"input type {t} is outside T1 of Cast-{prev} (admitted from {since})", f"input-{t}",
                       {"to": to_attr(prev, "float")}, ((2, 3),), since=prev, until=prev,
                       types={"input": t}, out_types={"output": "float"}))
        out.append(Err(f"'to' = {t} is outside T2 of Cast-{prev} (admitted from {since})", f"to-{t}",
                       {"to": to_attr(prev, t)}, ((2, 3),), since=prev, until=prev,
                       type_name="float", out_types={"output": t}))
    return tuple(out)


def _castlike_errors() -> tuple[Err, ...]:
    out = [Err("the output has target_type's type: target_type double, output declared float", "output-type",
               {}, ((2, 3), (1,)), type_name="float", types={"target_type": "double"},
               out_types={"output": "float"}),
           Err("target_type is a required input", "target-missing", {}, ((2, 3),), type_name="float",
               out_types={"output": "float"})]
    for since, t in _TYPE_ARRIVALS:
        # a type Cast gains after CastLike's newest version is outside that version's T2 too
        prev = _before(_CASTLIKE_VERSIONS, since) if since <= _CASTLIKE_VERSIONS[-1] else _CASTLIKE_VERSIONS[-1]
        if prev is None:
            continue
        out.append(Err(f"target_type {t} is outside T2 of CastLike-{prev}", f"target-{t}", {}, ((2, 3), (1,)),
                       since=prev, until=prev, type_name="float", types={"target_type": t},
                       out_types={"output": t}))
    return tuple(out)


# ----------------------------------------------------------------------------- entries
_NOTES = {9: "string <-> numbers", 13: "the conversion rules (OOR, wrap, bool); bfloat16", 19: "float8, saturate",
          21: "int4/uint4", 23: "float4e2m1", 24: "float8e8m0, round_mode; the fnuz saturate table maps +-inf "
          "to +-max (NaN at 19-23)", 25: "int2/uint2", 28: "float6e2m3/float6e3m2"}

CAST = Entry(
    "Cast", _oracle, family="shaped", shapes=_shapes(False), attrs=_states(True), type_attrs=_cast_type_attrs,
    float_numerics={CLASS: _cast_table}, numerics_classes=lambda t: (CLASS,), per_type=_per_type,
    combination_states=combination_states, defined=_defined, check=_check, tolerance=_tolerance, signed_zero=True,
    errors=_cast_errors(), notes=_NOTES)

CASTLIKE = Entry(
    "CastLike", _oracle, family="shaped", shapes=_shapes(True), attrs=_states(False), contested=_contested,
    float_numerics={CLASS: _cast_table}, numerics_classes=lambda t: (CLASS,), combination_states=combination_states,
    defined=_defined, check=_check, tolerance=_tolerance, signed_zero=True, errors=_castlike_errors(),
    notes={15: "Cast to target_type's type", 19: "saturate", 24: "round_mode"})

ENTRIES = (CAST, CASTLIKE)
register_entries(ENTRIES, family="cast")


# ----------------------------------------------------------------------------- BitCast
BIT_CLASS = "bit-patterns"

#: Bit patterns of the 16-, 32- and 64-bit types: zeros of both signs, the smallest subnormals,
#: the smallest normals, +-1, the largest finite values, +-inf, quiet NaNs with and without a
#: payload and of both signs, signalling NaNs (float16, bfloat16, float, double), the integer
#: extremes; the 64-bit ones also two float32 halves (complex64).
_BITS16 = (0x0000, 0x8000, 0x0001, 0x8001, 0x03FF, 0x0400, 0x3C00, 0xBC00, 0x7BFF, 0xFBFF, 0x7C00, 0xFC00, 0x7E00,
           0xFE00, 0x7C01, 0x7D55, 0x7FFF, 0xFFFF, 0x7F80, 0xFF80, 0x7FC0, 0xFFC0, 0x7F81, 0x7FC1, 0x0080, 0x007F,
           0x3F80, 0x7F7F, 0x00FF, 0x7FFE)
_BITS32 = (0x00000000, 0x80000000, 0x00000001, 0x80000001, 0x007FFFFF, 0x00800000, 0x3F800000, 0xBF800000,
           0x7F7FFFFF, 0xFF7FFFFF, 0x7F800000, 0xFF800000, 0x7FC00000, 0xFFC00000, 0x7FC12345, 0xFFC00001,
           0x7F800001, 0x7FA00000, 0xFFFFFFFF, 0x7FFFFFFF, 0x12345678, 0x000000FF)
_BITS64 = (0x0, 0x8000000000000000, 0x1, 0x800FFFFFFFFFFFFF, 0x0010000000000000, 0x3FF0000000000000,
           0xBFF0000000000000, 0x7FEFFFFFFFFFFFFF, 0x7FF0000000000000, 0xFFF0000000000000, 0x7FF8000000000000,
           0xFFF8000000000000, 0x7FF8000000000123, 0x7FF0000000000001, 0x7FF4000000000000, 0xFFFFFFFFFFFFFFFF,
           0x7FFFFFFFFFFFFFFF, 0x0123456789ABCDEF)


def _bit_pool(width: int, rng) -> list[int]:
    """The candidate bit patterns of a width (every pattern up to 8 bits)."""
    if width <= 8:
        return list(range(1 << width))
    if width == 16:
        return list(_BITS16) + [int(v) for v in rng.integers(0, 1 << 16, size=16)]
    if width == 32:
        return list(_BITS32) + [int(v) for v in rng.integers(0, 1 << 32, size=16, dtype=np.uint64)]
    halves = [_BITS32[int(i)] for i in rng.integers(0, len(_BITS32), size=24)]
    pairs = [(halves[i] << 32) | halves[i + 1] for i in range(0, 24, 2)]
    if width == 64:
        return list(_BITS64) + pairs + [int(v) for v in rng.integers(0, 2**63, size=8, dtype=np.uint64)]
    doubles = [_BITS64[int(i)] for i in rng.integers(0, len(_BITS64), size=40)]
    return [(doubles[i] << 64) | doubles[i + 1] for i in range(0, 40, 2)]


def bit_table(rng, src: str, dst: str) -> list[int]:
    """The patterns a BitCast case of ``src -> dst`` holds: the width's pool, less the patterns
    the source type cannot be fed with (the suite carries floating inputs as exact float64
    values: a signalling float/bfloat16/float8 NaN is quieted, a NaN payload of bfloat16 and
    e5m2 canonicalised on the way; the int -> float pairs carry every pattern), and, for a
    bool target, every pattern other than 0 and 1 (no bool value has them)."""
    pool = sorted(set(_bit_pool(ref.BIT_WIDTHS[src], rng)))
    arr = ref.from_bits(pool, src, (len(pool),))
    with np.errstate(invalid="ignore", over="ignore"):
        exact = V.to_exact(arr, src)
        fed = V.to_type(V.representable(exact, src) if V.kind(src) == V.FLOAT else exact, src)
    keep = [p for p, q in zip(pool, ref.bits_of(fed, src)) if p == q]
    if dst == "bool" or src == "bool":
        keep = [p for p in keep if p in (0, 1)]
    return [keep[int(i)] for i in rng.permutation(len(keep))]


def _bit_table(rng, ctx, shapes):
    src, dst = ctx.types["input"], ctx.out_types["output"]
    tab = np.array(bit_table(rng, src, dst), dtype=object)
    bits = _fit(rng, tab, shapes[0])
    with np.errstate(invalid="ignore", over="ignore"):
        return [V.to_exact(ref.from_bits(bits.ravel().tolist(), src, shapes[0]), src)]


def _bitcast_oracle(ctx, x, **attrs):
    """BitCast (:func:`conformance.reference.cast.bitcast`): the typed output array."""
    return ref.bitcast(x, ctx.types["input"], ctx.out_types["output"])


def _bitcast_type_filter(version: int, combo) -> str | None:
    a, b = ref.BIT_WIDTHS.get(combo["T1"]), ref.BIT_WIDTHS.get(combo["T2"])
    if a != b:  # one reason for every such pair (coverage counts distinct reasons)
        return ("T1 and T2 of different bit widths: 'The target data type must have the same bit-width as the "
                "input data type' (an invalid model: error cases)")
    return None


def _bitcast_check(ctx, inputs, attrs) -> str | None:
    """The cases whose output holds a NaN are judged bit for bit
    (:func:`conformance.reference.cast.check_bitcast`: a value comparison lets any NaN pass);
    the others by the exact value comparison with the sign of zero, which is the same thing
    there (every other pattern of a type has its own value)."""
    dst = ctx.out_types["output"]
    if V.kind(dst) not in (V.FLOAT, V.COMPLEX):
        return None
    with np.errstate(invalid="ignore"):
        y = ref.bitcast(inputs[0], ctx.types["input"], dst)
        f = y.astype(np.complex128) if V.kind(dst) == V.COMPLEX else y.astype(np.float64)
    return "conformance.reference.cast:check_bitcast" if np.isnan(f).any() else None


def _bitcast_tol(ctx, inputs, attrs, outputs):
    return {"output": Tolerance(0.0, 0.0, exact=True, signed_zero=True)}


def _bitcast_errors() -> tuple[Err, ...]:
    def e(why, tag, src, dst, attrs=None, out=None):
        return Err(why, tag, {"to": V.elem(dst)} if attrs is None else attrs, ((2, 3),), type_name=src,
                   types={"input": src}, out_types={"output": out or dst})

    same = "'The target data type must have the same bit-width as the input data type'"
    return (
        e(f"{same}: float (32) -> int16 (16)", "width-float-int16", "float", "int16"),
        e(f"{same}: uint8 (8) -> int4 (4)", "width-uint8-int4", "uint8", "int4"),
        e(f"{same}: bool (8) -> int16 (16)", "width-bool-int16", "bool", "int16"),
        e(f"{same}: complex64 (64) -> complex128 (128)", "width-complex64-complex128", "complex64", "complex128"),
        e(f"{same}: int2 (2) -> int4 (4)", "width-int2-int4", "int2", "int4"),
        e("'to' is a required attribute", "to-missing", "float", "int32", attrs={"to": None}, out="int32"),
        e("'to' must be a non-string type: STRING", "to-string", "float", "string"),
        e("the output has the type 'to' names: to=INT32 declared uint32", "output-type", "float", "int32",
          out="uint32"),
    )


BITCAST = Entry(
    "BitCast", _bitcast_oracle, family="shaped",
    shapes=(Shape("all/16x16", {"input": "SL"}, dims={"S": (16, 16), "L": (16, 16)}),
            Shape("r1/odd", {"input": "L"}, dims={"L": (17, 17)}),
            Shape("r3", {"input": "2SL"}, dims={"S": (2, 3), "L": (3, 5)}),
            Shape("rank0", {"input": ""}, cycle=False),
            Shape("zero-size", {"input": "S0"}, dims={"S": (1, 3)}, cycle=False)),
    attrs=(Attrs(_TO, tag="to"),), type_attrs=lambda v, c: {"to": V.elem(c["T2"])},
    float_numerics={BIT_CLASS: _bit_table}, int_numerics={BIT_CLASS: _bit_table},
    numerics_types={BIT_CLASS: tuple(ref.BIT_WIDTHS)}, numerics_classes=lambda t: (BIT_CLASS,), per_type=3,
    type_filter=_bitcast_type_filter, tolerance=_bitcast_tol, signed_zero=True,
    check=_bitcast_check, errors=_bitcast_errors(),
    notes={26: "reinterpret the bits (little endian); equal bit widths only"})

register_entries((BITCAST,), family="cast")
