"""Entries of the element-wise binary arithmetic operators (family ``binary``): Add, Sub, Mul,
Div, Pow, Mod, BitShift, every version.

Each entry holds only what the schema cannot say (:mod:`conformance.ops.entry`); shapes
(multidirectional broadcasting from version 7, the legacy ``broadcast``/``axis`` rule of
Add/Sub/Mul/Div-1 and -6 and Pow-1), types, opsets and the generic error cases (shapes that
do not broadcast, legacy shapes that do not align) come from the engine
(:mod:`conformance.ops.engine`).  Decisions recorded here, quoting the operator text
(``onnx.defs.get_schema(op, version).doc``):

**Accuracy.**

* Add, Sub, Mul, Div on floating types are correctly rounded (IEEE 754-2019 §5.4.1:
  ``addition``, ``subtraction``, ``multiplication``, ``division``), so the comparison is
  exact after rounding the float64 oracle (``ulps=0``).  float64 has 53 >= 2p + 2 bits for
  float32 (p = 24), float16 and bfloat16, so rounding the float64 result again to the type
  is the correctly rounded result (double rounding is innocuous); for double the float64
  operation is itself the correctly rounded result.  A kernel that evaluates float16 in
  float32 and rounds is therefore exact as well.
* Mod is exact: ``fmod(x, y)`` is always representable (IEEE 754 ``remainder``-like
  exactness), and the floor form ``fmod(x, y) + y`` is one correctly rounded addition.
* Pow is not correctly rounded in any libm.  Budget: **4 ulp** for float and double, 2 ulp
  for float16/bfloat16.  Sources: OpenCL C 3.0 Table 7.1 allows ``pow`` 16 ulp, which is
  loose: a float32 ``exp(y * log(x))`` has a relative error of about ``|y ln x|`` ulp and
  would pass wherever ``|y ln x| < 16``; glibc's ``pow`` (< 1 ulp, 0.52 ulp documented in
  ``e_pow.c``) and ``powf`` (0.82 ulp, ``e_powf.c``) are the CPU reference, and onnxruntime
  1.32 measured 0.5 ulp for float32 (``../shared/OPERATORS.md`` §2.1); the CUDA C
  Programming Guide's maximum errors (``powf`` 4 ulp, ``pow`` 2 ulp) are the loosest
  production libm, so 4 ulp accepts every production libm while still catching a naive
  ``exp(y*log(x))`` once ``|y ln x|`` exceeds a few units.  float16/bfloat16: 2 ulp (the
  engine default): evaluating in float32 (or in float64 through glibc/numpy) and rounding is
  within 1 ulp; computing ``exp(y*log(x))`` in float16 is not (it loses about ``|y ln x|``
  float16 ulps) and is caught.

**Integers** (exact oracles on Python ints; results outside the output type are undefined
and never generated -- overflow of + - * is not specified by any version):

* Div: "For integer inputs, the result is computed using truncating division (rounding
  toward zero)" (Div-6, -7, -13, -14; Div-1 has float types only).  Division by zero and
  ``INT_MIN / -1`` (overflow) are undefined and never generated.
* Mod ``fmod=0``: "the semantics follow that of the Python %-operator. The sign of the
  result is that of the divisor" (Mod-13; Mod-10: "The sign of the remainder is the same as
  that of the Divisor"; Mod-28: "A - floor(A / B) * B").  ``fmod=1``: "the behavior of this
  operator follows that of the fmod function in C" (truncated quotient, sign of the
  dividend; Mod-28: "A - trunc(A / B) * B").  ``x % 0`` is undefined for integers (never
  generated).
* Pow with an integer base (T = int32/int64, from version 12): ``x ** y`` exactly.  A
  negative exponent is undefined for an integer base (the result is not an integer; the text
  says nothing about rounding); an exponent of a floating type T1 is generated only with
  integral, finite values (a fractional power of an integer is not an integer either).
  ``0 ** 0 = 1`` (IEEE ``pow(x, ±0) = 1``; Python).  Results beyond 2^53 must be exact: the
  ``pow-large`` class makes int64 results in (2^53, 2^63) and int32 results in (2^24, 2^31),
  which a kernel going through float64 (or float32) gets wrong.
* BitShift-11: T is unsigned.  "moves its binary representation toward the left/right
  side": bits moved out of the type's width are lost, so a left shift is ``(x << y) mod
  2^W``.  The text does not define shift amounts ``>= W`` (C leaves them undefined and x86
  masks the count): never generated at version 11.
* BitShift-28 adds signed types and defines every amount: "For a signed T the right shift is
  an arithmetic shift (sign-extending) ... a left shift can move bits into and past the sign
  bit, and bits shifted past the sign bit are discarded" (two's complement wrap of
  ``x << y``), and "If Y is negative, or is greater than or equal to the number of bits of T,
  then the result is whatever the sign bit extension alone produces: -1 for a right shift on
  a negative X ... and 0 in every other case" (so a left shift of a negative X by such an
  amount is 0).  ``direction`` is required; ``direction="UP"`` is an error case ("It can be
  either "RIGHT" ... or "LEFT"").

**Floating-point special values.**

* Add/Sub/Mul/Div: IEEE 754 (``x/0 = ±inf``, ``0/0 = NaN``, ``inf - inf = NaN``) is
  generated; the sign of zero results is IEEE's and is checked (``(-0) + (-0) = -0``,
  ``x - x = +0``, ``-1 * 0 = -0``, ``1 / -inf = -0``).
* Pow: the IEEE 754 §9.2.1 / C99 Annex F.9.4.4 ``pow`` special cases (``pow(x, ±0) = 1``
  even for NaN x, ``pow(1, y) = 1`` even for NaN y, ``pow(-1, ±inf) = 1``, ``0^negative =
  +inf`` and ``-0^negative odd integer = -inf``, a negative finite base with a non-integer
  exponent is NaN); the text only says ``f(x) = x^exponent`` and IEEE is the floating-point
  model every ONNX float operator assumes.  The sign of zero results is checked (``(-0)^3 =
  -0``).  With an integer exponent type T1 the exponent's exact value decides the sign
  (``(-1) ** (2^64 - 1) = -1``; no conversion of Y to a float is implied by the text).
* Mod ``fmod=1`` (all versions; Mod-13 and -28 spell it out): C ``fmod``: ``x = ±inf`` or
  ``y = ±0`` give NaN, ``y = ±inf`` with finite x gives x, NaN propagates; "The returned
  value has the same sign as x (except if x is -0)": zero results carry x's sign and are
  checked, *except* "If x is -0 and y is greater than zero, either +0 or -0 may be
  returned": that sign is set-valued and the element is not generated (``defined``).
* Mod-28 ``fmod=0`` on floats, exactly the text's five rules: "If x is ±0 and y is nonzero,
  ±0 with the sign of y is returned. If x is ±∞ and y is not NaN, NaN is returned. If y is
  ±0 and x is not NaN, NaN is returned. If y is ±∞ and x is finite and nonzero, x is
  returned when x and y have the same sign; otherwise, y is returned. If either argument is
  NaN, NaN is returned."  Elsewhere the value is the exact ``x - floor(x/y) * y``, rounded
  once (``fmod(x, y)`` plus ``y`` when the signs differ); a zero result has the sign of y
  ("The result has the same sign as B"; Python's ``4.0 % -2.0 == -0.0``, which Mod-13 names
  as the model).  The ``large-ratio`` class (``|A/B| > 2^24``) catches the literal
  ``A - floor(A/B)*B`` evaluated in float32, which loses every digit there; the
  ``multiples`` class (``A = n*B`` exactly or one ulp away) makes zero results of every
  sign combination and remainders of almost ``|B|``.
* Mod-10 says "In case of dividend being zero, the results will be platform dependent."
  Taken literally (x = 0), and in the probable intent (the divisor), both are undefined at
  version 10 and neither is generated.

**Contested models** (``contested``: a backend may reject them; if it runs them, the oracle
above applies):

* Mod-10 and Mod-13 with a floating T and ``fmod=0``: the schema's type constraint admits
  floats, but the text forbids them ("If the input type is floating point, then fmod
  attribute must be set to 1", Mod-10; "If the fmod attribute is set to 0, T is constrained
  to integer data types", Mod-13).  onnxruntime rejects them ("fmod attribute must be true
  for floating point types before opset 28").  Mod-28 defines the model; the oracle uses
  its semantics (which are Python's ``%``, the model Mod-13 names).
* Mod-13 with an integer T and ``fmod=1``: "If fmod is set to 1 ... T is constrained to
  floating point data types", while the schema admits integers (Mod-10 and Mod-28 define
  it: C ``fmod`` on integers, truncated quotient).

**Attribute values outside the text.** ``fmod`` "must be 0 (default), or 1" (Mod-13, -28):
``fmod=2`` is an error case from version 13.
"""

from __future__ import annotations

import math

import numpy as np

from . import values as V
from .engine import register_entries
from .entry import Attrs, Entry, Err, ufunc


# ----------------------------------------------------------------------------- helpers
def _is_int(x) -> bool:
    return isinstance(x, np.ndarray) and x.dtype == object


def _map2(fn, a, b) -> np.ndarray:
    """``fn`` element-wise over two broadcast arrays, as an object array."""
    out = np.frompyfunc(fn, 2, 1)(a, b)
    return np.asarray(out, dtype=object)


def _width(t: str) -> int:
    info = V.iinfo(t)
    return int(info.max).bit_length() + (1 if int(info.min) < 0 else 0)


def _trunc_div(a: int, b: int) -> int:
    q = abs(a) // abs(b)
    return q if (a < 0) == (b < 0) else -q


def _trunc_mod(a: int, b: int) -> int:
    r = abs(a) % abs(b)
    return -r if a < 0 else r


# ----------------------------------------------------------------------------- Add Sub Mul Div
def _div(ctx, a, b):
    if _is_int(a):
        return _map2(lambda p, q: _trunc_div(int(p), int(q)) if q != 0 else 0, a, b)
    return a / b


def _div_defined(ctx, a, b):
    if not _is_int(a):
        return np.ones(np.broadcast_shapes(np.shape(a), np.shape(b)), bool)
    lo = int(V.iinfo(ctx.types["A"]).min)
    return _map2(lambda p, q: q != 0 and not (p == lo and q == -1 and lo < 0), a, b).astype(bool)


def _int_products(rng, ctx, shapes):
    """``products``: integer factors whose every product stays in the type (per case the
    type's bits are split between the factors; magnitudes log-uniform), so that Mul's
    integer cases are not all repaired overflow."""
    t = ctx.types["A"]
    signed = int(V.iinfo(t).min) < 0
    bits = _width(t) - (1 if signed else 0)
    split = float(rng.uniform(0, bits - 1))
    out = []
    for s, top in ((shapes[0], split), (shapes[1], bits - 1 - split)):
        k = int(np.prod(s, dtype=np.int64))
        mags = [int(2 ** v) for v in rng.uniform(0, top, size=k)]
        signs = rng.choice([-1, 1], size=k) if signed else np.ones(k, int)
        arr = np.empty(k, dtype=object)
        arr[:] = [m * int(g) for m, g in zip(mags, signs)]
        out.append(arr.reshape(s))
    return out


def _int_small_divisor(rng, ctx, shapes):
    """``small-divisor``: dividends over the whole type, divisors in [-9, 9] (quotients and
    remainders of every sign, far from 0 and 1)."""
    t = ctx.types["A"]
    info = V.iinfo(t)
    a = V.sample_int(rng, shapes[0], t)
    lo = max(-9, int(info.min))
    b = V.sample_int(rng, shapes[1], t, (lo, 9), extremes=False)
    return [a, b]


# ----------------------------------------------------------------------------- Pow
def _pow_int(x: int, y) -> int:
    """Exact ``x ** y`` for an integer base and a non-negative integral exponent; far beyond
    every 64-bit type it returns a stand-in of the right sign (treated as overflow)."""
    y = int(y)
    if y < 0:
        return 0  # undefined (masked by ``_pow_defined``)
    if abs(x) <= 1 or y <= 128:
        return x ** y
    return (-1 if x < 0 and y % 2 else 1) * 2 ** 200


def _pow_float(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """``x ** y`` for float64 arrays, correctly rounded to float64: numpy for the IEEE special
    cases, zeros, infinities and NaN; ``mpmath`` at 128 bits for every finite nonzero result
    (numpy's SIMD ``pow`` is up to 1 ulp off and depends on the CPU; the suite's bytes must
    not)."""
    import mpmath

    ref = np.power(x, y)
    xb, yb = np.broadcast_arrays(np.asarray(x, np.float64), np.asarray(y, np.float64))
    ref = np.array(np.broadcast_to(ref, xb.shape), dtype=np.float64)
    todo = np.isfinite(ref) & (ref != 0) & (xb != 0) & (yb != 0) & (np.abs(xb) != 1) & np.isfinite(xb)
    if todo.any():
        flat, xs, ys = ref.reshape(-1), xb.ravel(), yb.ravel()
        with mpmath.workprec(128):
            for i in np.flatnonzero(todo):
                a, b = float(xs[i]), float(ys[i])
                mag = float(mpmath.power(mpmath.mpf(abs(a)), mpmath.mpf(b)))
                flat[i] = -mag if a < 0 and int(b) % 2 else mag  # a < 0 with a finite result: b is integral
    return ref


def _pow(ctx, x, y):
    if _is_int(x):
        return _map2(lambda a, b: _pow_int(int(a), b) if (isinstance(b, int) or
                                                            (math.isfinite(b) and b == int(b))) else 0, x, y)
    if _is_int(y):  # float base, integer exponent: the exponent's exact parity decides the sign
        yf = np.asarray(y, dtype=np.float64)
        mag = np.abs(_pow_float(np.abs(x), yf))
        odd = _map2(lambda a, b: int(b) % 2 == 1, x, y).astype(bool)
        return np.where(np.signbit(x) & odd, -mag, mag)
    return _pow_float(x, y)


def _pow_defined(ctx, x, y):
    """Integer bases: non-negative integral exponents only.  Floating bases with an integer
    exponent beyond 2^53: the text fixes no precision for converting the exponent, and a kernel
    that converts it to double (as onnxruntime does) may change its parity, so a negative base
    (whose result sign depends on the parity) is not generated there."""
    shape = np.broadcast_shapes(np.shape(x), np.shape(y))
    if not _is_int(x):
        if _is_int(y):
            big = _map2(lambda a, b: abs(int(b)) > 2 ** 53, x, y).astype(bool)
            return ~(np.broadcast_to(np.signbit(x), shape) & big)
        return np.ones(shape, bool)
    return _map2(lambda a, b: (isinstance(b, int) and b >= 0) or
                 (not isinstance(b, int) and math.isfinite(b) and b == int(b) and b >= 0), x, y).astype(bool)


def _exponents(rng, ty: str, shape, lo: int, hi: int):
    if V.kind(ty) == V.FLOAT:
        return rng.integers(lo, hi, size=shape, endpoint=True).astype(np.float64)
    info = V.iinfo(ty)
    return V.sample_int(rng, shape, ty, (max(lo, int(info.min)), min(hi, int(info.max))), extremes=False)


def _pow_integral(rng, ctx, shapes):
    """``integral-exponent`` (floating base): bases in [-8, 8] (negative ones included),
    integral exponents in [-12, 12] of Y's type: the signs of odd and even powers."""
    tx, ty = ctx.types["X"], ctx.types["Y"]
    x = V.representable(rng.uniform(-8, 8, size=shapes[0]), tx)
    return [x, _exponents(rng, ty, shapes[1], -12, 12)]


def _pow_small_ints(rng, ctx, shapes):
    """``int-pow`` (integer base): bases in [-12, 12], integral exponents in [0, 20]."""
    tx, ty = ctx.types["X"], ctx.types["Y"]
    return [V.sample_int(rng, shapes[0], tx, (-12, 12)), _exponents(rng, ty, shapes[1], 0, 20)]


def _pow_large(rng, ctx, shapes):
    """``pow-large`` (integer base): exact powers just below the type's maximum -- int64
    results in (2^53, 2^63), int32 in (2^24, 2^31) -- which a kernel computing through
    float64 (float32) rounds.  One base magnitude per case (signs vary), so that every
    broadcast pairing stays in that range."""
    tx, ty = ctx.types["X"], ctx.types["Y"]
    top = int(V.iinfo(tx).max)
    floor_bits = 53 if top > 2 ** 32 else 24
    b = int(rng.choice([3, 5, 6, 7, 11, 13, 17, 19, 23]))
    e_hi = int(math.log(top) / math.log(b)) + 1
    while b ** e_hi > top:
        e_hi -= 1
    e_lo = int(floor_bits * math.log(2) / math.log(b)) + 1
    while b ** e_lo <= 2 ** floor_bits:
        e_lo += 1
    n0 = int(np.prod(shapes[0], dtype=np.int64))
    x = np.empty(n0, dtype=object)
    x[:] = [b * int(s) for s in rng.choice([-1, 1], size=n0)]
    return [x.reshape(shapes[0]), _exponents(rng, ty, shapes[1], e_lo, e_hi)]


# ----------------------------------------------------------------------------- Mod
def _mod(ctx, a, b, fmod=0):
    if _is_int(a):
        if fmod:
            return _map2(lambda p, q: _trunc_mod(int(p), int(q)) if q != 0 else 0, a, b)
        return _map2(lambda p, q: int(p) % int(q) if q != 0 else 0, a, b)
    r = np.fmod(a, b)  # exact; NaN for x = ±inf or y = ±0, x for y = ±inf, NaN propagates
    if fmod:
        return r
    r = np.where((r != 0) & (np.signbit(r) != np.signbit(b)), r + b, r)  # one correctly rounded +
    return np.where(r == 0, np.copysign(0.0, b), r)  # zero results (x = ±0 included) take y's sign


def _mod_defined(ctx, a, b, fmod=0):
    shape = np.broadcast_shapes(np.shape(a), np.shape(b))
    if _is_int(a):
        ok = np.asarray(b != 0, dtype=bool)
        if ctx.version == 10:  # "In case of dividend being zero, the results will be platform dependent"
            ok = ok & np.asarray(a != 0, dtype=bool)
        return np.broadcast_to(ok, shape)
    ok = np.ones(shape, bool)
    if fmod:  # x = -0, y > 0: "either +0 or -0 may be returned"
        ok &= ~((a == 0) & np.signbit(a) & (b > 0))
    if ctx.version == 10:
        ok &= ~((a == 0) | (b == 0))
    return ok


def _mod_contested(ctx, attrs):
    fmod = attrs.get("fmod", 0)
    is_float = V.kind(ctx.types["A"]) == V.FLOAT
    if ctx.version < 28 and is_float and not fmod:
        return (f"Mod-{ctx.version}: the schema admits floating T with fmod=0, the text forbids it "
                "('If the input type is floating point, then fmod attribute must be set to 1' (Mod-10); "
                "'If the fmod attribute is set to 0, T is constrained to integer data types' (Mod-13)); "
                "Mod-28 defines it")
    if ctx.version == 13 and not is_float and fmod:
        return ("Mod-13: the schema admits integer T with fmod=1, the text forbids it ('If fmod is set to 1, "
                "... T is constrained to floating point data types'); Mod-10 and Mod-28 define it")
    return None


def _mod_large_ratio(rng, ctx, shapes):
    """``large-ratio``: ``|A/B| >= 2^25``: the exact remainder is representable, the literal
    ``A - floor(A/B)*B`` in float32 loses every digit.  Per case, divisors have exponents in
    ``[e, e + 1)`` and dividends in ``[e + 26, emax)``, so every broadcast pairing qualifies."""
    t = ctx.types["A"]
    fi = V.finfo(t)
    lo_e = math.log2(float(fi.smallest_normal)) + 2
    top_e = math.log2(float(fi.max)) - 1
    e = float(rng.uniform(lo_e, max(lo_e, min(8.0, top_e - 27))))
    na, nb = (int(np.prod(s, dtype=np.int64)) for s in shapes)
    b = 2.0 ** rng.uniform(e, e + 1, size=nb) * rng.choice([-1.0, 1.0], size=nb)
    a = 2.0 ** rng.uniform(e + 26, top_e, size=na) * rng.choice([-1.0, 1.0], size=na)
    return [V.representable(a, t).reshape(shapes[0]), V.representable(b, t).reshape(shapes[1])]


def _mod_multiples(rng, ctx, shapes):
    """``multiples``: ``A = n * B`` exactly (n in [-12, 12]) or one ulp away: zero remainders
    of every sign combination (the sign of a zero result: y's for ``fmod=0``, x's for
    ``fmod=1``) and remainders of almost ``|B|``."""
    t = ctx.types["A"]
    na, nb = (int(np.prod(s, dtype=np.int64)) for s in shapes)
    b = V.representable(rng.uniform(0.5, 4.0, size=nb) * rng.choice([-1.0, 1.0], size=nb), t)
    b0 = float(b.ravel()[0]) if nb else 1.0
    if na == nb:
        base = b
    else:  # broadcasting: multiples of one divisor, so that most pairings are exact multiples
        b = np.where(rng.random(nb) < 0.75, b0, b)
        base = np.full(na, b0)
    n = rng.integers(-12, 13, size=na).astype(np.float64)
    a = V.representable(base * n, t)
    nudge = rng.random(na) < 0.25
    a = np.where(nudge, np.nextafter(a, np.where(rng.random(na) < 0.5, np.inf, -np.inf)), a)
    return [V.representable(a, t).reshape(shapes[0]), b.reshape(shapes[1])]


# ----------------------------------------------------------------------------- BitShift
def _shift(a: int, s: int, direction: str, w: int, signed: bool) -> int:
    if s < 0 or s >= w:
        return -1 if (direction == "RIGHT" and a < 0) else 0
    if direction == "RIGHT":
        return a >> s  # arithmetic for negative a (Python ints)
    r = (a << s) & ((1 << w) - 1)  # bits moved past the width (the sign bit) are discarded
    return r - (1 << w) if signed and r >> (w - 1) else r


def _bitshift(ctx, x, y, direction="LEFT"):
    t = ctx.types["X"]
    w, signed = _width(t), int(V.iinfo(t).min) < 0
    return _map2(lambda a, s: _shift(int(a), int(s), direction, w, signed), x, y)


def _bitshift_defined(ctx, x, y, direction="LEFT"):
    if ctx.version >= 28:
        return np.ones(np.broadcast_shapes(np.shape(x), np.shape(y)), bool)
    w = _width(ctx.types["X"])
    return np.broadcast_to(_map2(lambda a, s: 0 <= s < w, x, y).astype(bool),
                           np.broadcast_shapes(np.shape(x), np.shape(y)))


def _shift_counts(rng, ctx, shapes):
    """``shift-counts``: X over the whole type, Y in [0, W) (version 11) or [-3, W + 3]
    (version 28: negative and too-large amounts, clipped to Y's type)."""
    t = ctx.types["X"]
    w = _width(t)
    info = V.iinfo(t)
    lo, hi = (0, w - 1) if ctx.version < 28 else (max(-3, int(info.min)), w + 3)
    return [V.sample_int(rng, shapes[0], t), V.sample_int(rng, shapes[1], t, (lo, hi))]


def _pow_narrowed(ctx):
    """Pow-12+ with a double exponent (T1) on a narrower floating base (T = float, float16,
    bfloat16): the text does not say in which precision Y is used, and a kernel computing in
    float32 converts it (1e-300 becomes 0, so ``pow(inf, y)`` would be 1): only exponents that
    float32 represents exactly are generated, where both readings compute the same function."""
    t, t1 = ctx.types.get("X"), ctx.types.get("Y")
    if t1 == "double" and t in ("float", "float16", "bfloat16"):
        return {"Y": "float"}
    return {}


# ----------------------------------------------------------------------------- the table
_IEEE = "IEEE 754 §5.4.1: correctly rounded (exact after rounding the float64 oracle)"

ENTRIES = [
    Entry("Add", ufunc(lambda a, b: a + b), family="binary", signed_zero=True, ulps_source=_IEEE),
    Entry("Sub", ufunc(lambda a, b: a - b), family="binary", signed_zero=True, ulps_source=_IEEE),
    Entry("Mul", ufunc(lambda a, b: a * b), family="binary", signed_zero=True, ulps_source=_IEEE,
          int_numerics={"products": _int_products}),
    Entry("Div", _div, family="binary", defined=_div_defined, signed_zero=True, budget="divide",
          ulps_source="the budget table: OpenCL x / y correctly rounded (double, half), 2.5 ulp (float)",
          int_numerics={"small-divisor": _int_small_divisor},
          notes={6: "integer types arrive; 'the result is computed using truncating division'"}),
    Entry("Pow", _pow, family="binary", defined=_pow_defined, safe=(1, 1), signed_zero=True,
          budget="pow", narrowed=_pow_narrowed,
          ulps_source="OpenCL C 3.0 Table 7.1: pow 16 ulp (loose); glibc pow 0.52 ulp / powf 0.82 ulp, "
                      "onnxruntime 1.32 float32 0.5 ulp; CUDA powf 4 ulp: 4 ulp (float, double), 2 ulp (16-bit)",
          ints={"X": (-12, 12), "Y": (-40, 40)},
          float_numerics={"integral-exponent": _pow_integral},
          int_numerics={"int-pow": _pow_small_ints, "pow-large": _pow_large},
          specials=(3.0, -3.0, 0.25, -0.25, 1.5, -1.5, 10.0),
          notes={12: "integer T and the separate exponent type T1 arrive", 13: "bfloat16 in T", 15: "bfloat16 in T1"}),
    Entry("Mod", _mod, family="binary", defined=_mod_defined, safe=(1, 1), signed_zero=True,
          attrs=(Attrs({"fmod": 1}, tag="fmod1"),), contested=_mod_contested,
          float_numerics={"multiples": _mod_multiples, "large-ratio": _mod_large_ratio},
          int_numerics={"small-divisor": _int_small_divisor},
          specials=(3.0, -3.0, 0.75, -0.75, 1e-3),
          errors=(Err("fmod 'must be 0 (default), or 1' (Mod-13; Mod-28: 'Its value must be 0 (default) or 1')",
                      "fmod-2", attrs={"fmod": 2}, since=13),),
          notes={13: "bfloat16; text: fmod=0 only for integers, fmod=1 only for floats",
                 28: "float fmod=0 defined (five special cases); integer fmod=1 defined"}),
    Entry("BitShift", _bitshift, family="binary", defined=_bitshift_defined,
          attrs=(Attrs({"direction": "LEFT"}, tag="left"), Attrs({"direction": "RIGHT"}, tag="right")),
          ints={"Y": (-70, 70)},
          int_numerics={"shift-counts": _shift_counts},
          errors=(Err("direction 'can be either \"RIGHT\" (for right shift) or \"LEFT\" (for left shift)'",
                      "direction", attrs={"direction": "UP"}),),
          notes={28: "signed types; arithmetic right shift; amounts < 0 or >= width defined"}),
]

register_entries(ENTRIES, family="binary")
