"""Tests of the binary arithmetic entries (Add, Sub, Mul, Div, Pow, Mod, BitShift;
``conformance/ops/binary.py``).

* the oracles against independent formulas (hardware float32/float16 arithmetic, Python's
  ``fractions``/``math``/int operators, numpy) and against the expected outputs of onnx's
  own node tests for these operators (the spec's examples);
* agreement with ``onnx.reference`` on every generated case, each disagreement listed with
  who is right and why;
* numpy kernels through ``KernelBackend``: legitimate ones (16-bit floats evaluated in
  float32, every float op through float64 / glibc ``pow``) pass every case; each
  deliberately wrong one (floor integer division, the other Mod sign rule for either
  ``fmod``, the literal float32 Mod formula, Pow of int64 through float64, float16 Pow as
  ``exp(y*log(x))`` in float16, a lenient broadcast, a masked shift count, ...) fails at
  least one case;
* coverage: every type combination of every version, undefined behaviour never generated,
  the numerics classes the traps need are present.
"""

from __future__ import annotations

import math
from collections import Counter
from fractions import Fraction

import ml_dtypes
import numpy as np
import onnx
import pytest

from conformance.backends import resolve_backend
from conformance.backends.kernel import KernelBackend
from conformance.coverage import compute_coverage
from conformance.ops import binary, values as V
from conformance.ops.entry import Ctx
from conformance.runner import run_cases
from oracle_checks import single_node_tests, sort_findings  # tests/oracle_checks.py

pytestmark = pytest.mark.filterwarnings("ignore::RuntimeWarning")
OPS = ["Add", "Sub", "Mul", "Div", "Pow", "Mod", "BitShift"]
E = {e.op: e for e in binary.ENTRIES}


def _ctx(op, version, types, out=None):
    return Ctx(op, version, version, types, out or {})


def _obj(vals):
    a = np.empty(len(vals), dtype=object)
    a[:] = vals
    return a


def _f(vals):
    return np.asarray(vals, dtype=np.float64)


def _same(a, b) -> bool:
    """Bitwise equality of float arrays (NaN == NaN, signed zeros distinguished)."""
    a, b = np.asarray(a, np.float64), np.asarray(b, np.float64)
    return bool(np.all((a == b) & (np.signbit(a) == np.signbit(b)) | (np.isnan(a) & np.isnan(b))))


# ============================================================================ oracles
@pytest.mark.parametrize("t", ["float16", "bfloat16", "float"])
@pytest.mark.parametrize("op,fn", [("Add", np.add), ("Sub", np.subtract), ("Mul", np.multiply), ("Div", np.divide)])
def test_float_arithmetic_is_the_hardware_rounding(op, fn, t):
    """Rounding the float64 oracle equals the type's own IEEE operation (numpy float32 is
    hardware arithmetic; float16/bfloat16 go through float32, itself exact here)."""
    rng = np.random.default_rng(1)
    dt = V.np_dtype(t)
    specials = V.float_specials(t)
    a = np.concatenate([rng.normal(size=400) * 10.0 ** rng.integers(-6, 6, 400), np.repeat(specials, len(specials))])
    b = np.concatenate([rng.normal(size=400) * 10.0 ** rng.integers(-6, 6, 400), np.tile(specials, len(specials))])
    a, b = V.representable(a, t), V.representable(b, t)
    got = V.to_type(E[op].oracle(_ctx(op, 14, {"A": t, "B": t}), a, b), t).astype(np.float64)
    if t == "float":
        want = fn(a.astype(np.float32), b.astype(np.float32)).astype(np.float64)
    else:  # exact rational result rounded once (Fraction -> correctly rounded double -> the type)
        want = []
        for x, y in zip(a.tolist(), b.tolist()):
            if not (math.isfinite(x) and math.isfinite(y)) or (op == "Div" and y == 0):
                want.append(float(fn(np.float64(x), np.float64(y))))
                continue
            fx, fy = Fraction(x), Fraction(y)
            r = {"Add": fx + fy, "Sub": fx - fy, "Mul": fx * fy, "Div": fx / fy if fy else None}[op]
            v = float(r)
            if v == 0:
                v = float(fn(np.float64(x), np.float64(y)))  # IEEE sign of the zero
            want.append(v)
        want = V.to_type(_f(want), t).astype(np.float64)
    assert dt is not None and _same(got, want)


@pytest.mark.parametrize("t", ["int8", "uint8", "int32", "int64", "uint64"])
def test_integer_arithmetic_exact(t):
    info = V.iinfo(t)
    rng = np.random.default_rng(2)
    vals = [int(info.min), int(info.max), 0, 1, int(info.max) // 3] + \
           [int(v) for v in rng.integers(int(info.min), int(info.max), 60, dtype=np.int64 if info.min < 0 else np.uint64)]
    if info.min < 0:
        vals += [-1, -7, 7]
    a, b = _obj(vals * len(vals)), _obj([v for v in vals for _ in vals])
    ctx = _ctx("Div", 14, {"A": t, "B": t})
    assert list(E["Add"].oracle(ctx, a, b)) == [x + y for x, y in zip(a, b)]
    assert list(E["Sub"].oracle(ctx, a, b)) == [x - y for x, y in zip(a, b)]
    assert list(E["Mul"].oracle(ctx, a, b)) == [x * y for x, y in zip(a, b)]
    q = E["Div"].oracle(ctx, a, b)
    ok = E["Div"].defined(ctx, a, b)
    assert ok.sum() > 100 and (~ok).sum() >= len(vals)
    for x, y, r, d in zip(a, b, q, ok):
        if y == 0 or (x == int(info.min) and y == -1 and info.min < 0):
            assert not d
        else:
            assert d and r == int(Fraction(x, y))  # int(Fraction) truncates toward zero
    # the spec example of Div-14 ("test_div_int32_trunc" style): -7 / 2 = -3, 7 / -2 = -3
    if info.min < 0:
        assert list(E["Div"].oracle(ctx, _obj([-7, 7, -7]), _obj([2, -2, -2]))) == [-3, -3, 3]


def _mod_exact(x: float, y: float, fmod: int) -> float:
    fx, fy = Fraction(x), Fraction(y)
    q = fx / fy
    n = math.floor(q) if fmod == 0 else math.trunc(q)
    return float(fx - n * fy)


@pytest.mark.parametrize("t", ["float16", "bfloat16", "float", "double"])
def test_mod_float_matches_exact_rationals(t):
    rng = np.random.default_rng(3)
    a = V.representable(rng.normal(size=300) * 10.0 ** rng.integers(-3, 8, 300), t)
    b = V.representable(rng.normal(size=300) * 10.0 ** rng.integers(-3, 3, 300), t)
    keep = np.isfinite(a) & np.isfinite(b) & (b != 0)
    a, b = a[keep], b[keep]
    assert a.size > 200
    ctx = _ctx("Mod", 28, {"A": t, "B": t})
    for fmod in (0, 1):
        got = V.to_type(E["Mod"].oracle(ctx, a, b, fmod=fmod), t).astype(np.float64)
        for x, y, g in zip(a.tolist(), b.tolist(), got.tolist()):
            want = float(V.to_type(_f([_mod_exact(x, y, fmod)]), t)[0])
            assert g == want or (want == 0 and g == 0), (x, y, fmod, g, want)
            if g == 0:  # zero results: sign of y (fmod=0, Python's %), of x (fmod=1, C fmod)
                assert math.copysign(1, g) == math.copysign(1, y if fmod == 0 else x)
        if t == "double":  # against Python's float % and math.fmod directly
            ref = [x % y if fmod == 0 else math.fmod(x, y) for x, y in zip(a.tolist(), b.tolist())]
            assert _same(got, ref)


def test_mod28_special_cases_of_the_text():
    """Mod-28's listed special cases, one row per rule (fmod=0 and fmod=1)."""
    inf, nan = math.inf, math.nan
    rows = [  # x, y, fmod, expected
        (0.0, 3.0, 0, 0.0), (-0.0, 3.0, 0, 0.0), (0.0, -3.0, 0, -0.0), (-0.0, -3.0, 0, -0.0),  # sign of y
        (inf, 3.0, 0, nan), (-inf, 3.0, 0, nan), (inf, inf, 0, nan),
        (2.0, 0.0, 0, nan), (2.0, -0.0, 0, nan), (0.0, 0.0, 0, nan),
        (2.5, inf, 0, 2.5), (-2.5, -inf, 0, -2.5), (2.5, -inf, 0, -inf), (-2.5, inf, 0, inf),
        (nan, 2.0, 0, nan), (2.0, nan, 0, nan), (0.0, nan, 0, nan),
        (inf, 3.0, 1, nan), (2.0, 0.0, 1, nan), (2.5, inf, 1, 2.5), (-2.5, inf, 1, -2.5), (2.5, -inf, 1, 2.5),
        (nan, 1.0, 1, nan), (1.0, nan, 1, nan), (-0.0, -3.0, 1, -0.0), (0.0, -3.0, 1, 0.0),
        (-7.0, 3.0, 0, 2.0), (7.0, -3.0, 0, -2.0), (-7.0, 3.0, 1, -1.0), (7.0, -3.0, 1, 1.0),
        (4.0, -2.0, 0, -0.0), (-4.0, 2.0, 0, 0.0), (-4.0, 2.0, 1, -0.0), (4.0, -2.0, 1, 0.0),
        (-1e-30, 1.0, 0, 1.0),  # exact 1 - 1e-30 rounds to 1.0 (in double and float)
    ]
    for t in ("float", "double"):
        ctx = _ctx("Mod", 28, {"A": t, "B": t})
        for x, y, fmod, want in rows:
            got = float(V.to_type(E["Mod"].oracle(ctx, _f([x]), _f([y]), fmod=fmod), t)[0])
            assert _same([got], [want]), (t, x, y, fmod, got, want)
    # x = -0, y > 0 with fmod=1: either zero may be returned -> not generated
    ctx = _ctx("Mod", 28, {"A": "float", "B": "float"})
    assert list(E["Mod"].defined(ctx, _f([-0.0, -0.0, 0.0, -0.0]), _f([3.0, -3.0, 3.0, inf]), fmod=1)) == \
        [False, True, True, False]
    assert E["Mod"].defined(ctx, _f([-0.0]), _f([3.0]), fmod=0).all()


def test_mod_integer_rules():
    vals = [-128, -127, -9, -7, -1, 0, 1, 3, 7, 9, 126, 127]
    a, b = _obj(vals * len(vals)), _obj([v for v in vals for _ in vals])
    for version in (10, 13, 28):
        ctx = _ctx("Mod", version, {"A": "int8", "B": "int8"})
        f0, f1 = E["Mod"].oracle(ctx, a, b, fmod=0), E["Mod"].oracle(ctx, a, b, fmod=1)
        ok = E["Mod"].defined(ctx, a, b)
        for x, y, r0, r1, d in zip(a, b, f0, f1, ok):
            if y == 0 or (version == 10 and x == 0):
                assert not d
                continue
            assert d and r0 == x % y  # Python %: sign of the divisor
            assert r1 == x - y * int(Fraction(x, y)) and r1 == int(math.fmod(x, y))  # C fmod: sign of the dividend
    # contested models: floats with fmod=0 before 28; integers with fmod=1 at 13 only
    c = E["Mod"].contested
    assert c(_ctx("Mod", 10, {"A": "float"}), {"fmod": 0}) and c(_ctx("Mod", 13, {"A": "float16"}), {"fmod": 0})
    assert c(_ctx("Mod", 13, {"A": "int32"}), {"fmod": 1})
    assert not c(_ctx("Mod", 28, {"A": "float"}), {"fmod": 0}) and not c(_ctx("Mod", 10, {"A": "int32"}), {"fmod": 1})
    assert not c(_ctx("Mod", 13, {"A": "float"}), {"fmod": 1}) and not c(_ctx("Mod", 28, {"A": "int8"}), {"fmod": 1})


def test_pow_oracle():
    # integer base: exact Python powers, far beyond 2^53
    ctx = _ctx("Pow", 15, {"X": "int64", "Y": "int64"})
    x, y = _obj([3, -3, 7, 2, 0, -1, 5]), _obj([39, 39, 22, 62, 0, 2 ** 63 - 1, 3])
    assert list(E["Pow"].oracle(ctx, x, y)) == [3 ** 39, -(3 ** 39), 7 ** 22, 2 ** 62, 1, -1, 125]
    assert 3 ** 39 != int(float(3) ** 39)  # what float64 gives is not the value
    # integer base, floating exponent: integral values only; negative exponents undefined
    ctx = _ctx("Pow", 15, {"X": "int32", "Y": "float"})
    d = E["Pow"].defined(ctx, _obj([2, 2, 2, 2, 2]), _f([3.0, 0.5, -1.0, math.nan, -0.0]))
    assert list(d) == [True, False, False, False, True]
    assert list(E["Pow"].oracle(ctx, _obj([2, -3]), _f([3.0, 3.0]))) == [8, -27]
    # floating base: IEEE pow special cases (C99 F.9.4.4), as math.pow / numpy give them
    ctx = _ctx("Pow", 15, {"X": "double", "Y": "double"})
    inf, nan = math.inf, math.nan
    rows = [(-8.0, 1 / 3, nan), (0.0, -1.0, inf), (-0.0, -3.0, -inf), (-0.0, -2.0, inf), (-0.0, 3.0, -0.0),
            (nan, 0.0, 1.0), (1.0, nan, 1.0), (-1.0, inf, 1.0), (-2.0, 3.0, -8.0), (0.5, -inf, inf), (2.0, 0.5, 2 ** .5)]
    got = E["Pow"].oracle(ctx, _f([r[0] for r in rows]), _f([r[1] for r in rows]))
    assert _same(got, [r[2] for r in rows])
    rng = np.random.default_rng(4)
    xs, ys = rng.uniform(0, 10, 200), rng.uniform(-20, 20, 200)
    got = E["Pow"].oracle(ctx, xs, ys)
    glibc = np.array([math.pow(a, b) for a, b in zip(xs, ys)])
    assert np.all(np.abs(got - glibc) <= np.spacing(np.abs(glibc)))  # glibc pow: < 1 ulp
    import mpmath

    with mpmath.workprec(300):  # correctly rounded
        assert _same(got, [float(mpmath.mpf(a) ** mpmath.mpf(b)) for a, b in zip(xs, ys)])
    # floating base, integer exponent: the exponent's exact parity decides the sign
    ctx = _ctx("Pow", 15, {"X": "float16", "Y": "uint64"})
    got = E["Pow"].oracle(ctx, _f([-1.0, -1.0, -0.5, -2.0, 3.0]), _obj([2 ** 64 - 1, 2 ** 64 - 2, 2 ** 64 - 1, 3, 2]))
    assert _same(got, [-1.0, 1.0, -0.0, -8.0, 9.0])
    from conformance.tolerance import budget_ulps
    assert E["Pow"].budget == "pow" and "OpenCL" in E["Pow"].ulps_source
    assert [budget_ulps("pow", t) for t in ("double", "float", "float16", "bfloat16")] == [4, 4, 2, 2]


def test_bitshift_oracle():
    for t, w in (("uint8", 8), ("uint64", 64), ("int8", 8), ("int32", 32)):
        ctx = _ctx("BitShift", 28, {"X": t, "Y": t})
        # the text's examples
        assert list(E["BitShift"].oracle(ctx, _obj([1, 4]), _obj([1, 1]), direction="RIGHT")) == [0, 2]
        assert list(E["BitShift"].oracle(ctx, _obj([1, 2]), _obj([1, 2]), direction="LEFT")) == [2, 8]
        # in-range amounts: numpy's shifts in the type (wrap-around of the left shift)
        info = V.iinfo(t)
        rng = np.random.default_rng(5)
        xs = V.sample_int(rng, (200,), t)
        ss = _obj([int(v) for v in rng.integers(0, w, 200)])
        dt = V.np_dtype(t)
        xn, sn = V.to_type(xs, t), np.asarray(list(ss), dtype=dt)
        assert list(E["BitShift"].oracle(ctx, xs, ss, direction="LEFT")) == np.left_shift(xn, sn).tolist()
        assert list(E["BitShift"].oracle(ctx, xs, ss, direction="RIGHT")) == np.right_shift(xn, sn).tolist()
        # amounts >= width (and negative, signed types): "-1 for a right shift on a negative X ... 0 otherwise"
        big = _obj([w, w + 5, int(info.max)] + ([-1, -w, int(info.min)] if info.min < 0 else []))
        for xv in (5, int(info.max)) + ((-5, int(info.min)) if info.min < 0 else ()):
            xa = _obj([xv] * len(big))
            assert set(E["BitShift"].oracle(ctx, xa, big, direction="LEFT")) == {0}
            assert set(E["BitShift"].oracle(ctx, xa, big, direction="RIGHT")) == {-1 if xv < 0 else 0}
    ctx = _ctx("BitShift", 28, {"X": "int8", "Y": "int8"})
    assert list(E["BitShift"].oracle(ctx, _obj([64, -128, -1, -5]), _obj([1, 1, 7, 1]), direction="LEFT")) == \
        [-128, 0, -128, -10]
    assert list(E["BitShift"].oracle(ctx, _obj([-128, -5, 127]), _obj([7, 1, 6]), direction="RIGHT")) == [-1, -3, 1]
    # version 11: amounts >= width are undefined
    ctx = _ctx("BitShift", 11, {"X": "uint8", "Y": "uint8"})
    assert list(E["BitShift"].defined(ctx, _obj([1, 1, 1]), _obj([0, 7, 8]), direction="LEFT")) == [True, True, False]


def _node_tests():
    return single_node_tests(OPS, ("add", "sub", "mul", "div", "pow", "mod", "bitshift"))


def test_oracle_reproduces_onnx_node_tests():
    """The oracle on the inputs of onnx's own node tests for these operators gives their
    expected outputs (exactly; Pow within its budget), except where the text leaves a
    value undefined or set-valued."""
    tests = _node_tests()
    assert len(tests) >= 90
    checked = Counter()
    for t in tests:
        node = t.model.graph.node[0]
        opset = next(o.version for o in t.model.opset_import if o.domain in ("", "ai.onnx"))
        version = onnx.defs.get_schema(node.op_type, opset).since_version
        attrs = {a.name: onnx.helper.get_attribute_value(a) for a in node.attribute}
        attrs = {k: v.decode() if isinstance(v, bytes) else v for k, v in attrs.items()}
        entry = E[node.op_type]
        if node.op_type == "Mod":
            attrs.setdefault("fmod", 0)
        types = {f: V.name_of(vi.type.tensor_type.elem_type) for f, vi in
                 zip([i.name for i in onnx.defs.get_schema(node.op_type, opset).inputs], t.model.graph.input)}
        for ins, outs in t.data_sets:
            ex = [V.to_exact(np.asarray(a), types[f]) for a, f in zip(ins, types)]
            ctx = Ctx(node.op_type, version, opset, types, {})
            got = entry.oracle(ctx, *ex, **attrs)
            out_t = V.name_of(t.model.graph.output[0].type.tensor_type.elem_type)
            got = V.to_type(np.asarray(got), out_t)
            want = np.asarray(outs[0])
            mask = np.ones(want.shape, bool)
            if entry.defined is not None:
                mask = np.broadcast_to(np.asarray(entry.defined(ctx, *ex, **attrs), bool), want.shape)
            assert mask.any(), t.name
            if V.kind(out_t) == V.FLOAT and node.op_type == "Pow":
                g, w = got.astype(np.float64)[mask], want.astype(np.float64)[mask]
                eps = float(V.finfo(out_t).eps)
                assert np.all(np.abs(g - w) <= 4 * eps * np.abs(w)), t.name
            elif V.kind(out_t) == V.FLOAT:
                assert _same(got.astype(np.float64)[mask], want.astype(np.float64)[mask]), t.name
            else:
                assert got[mask].tolist() == want[mask].tolist(), t.name
            checked[node.op_type] += 1
    assert set(checked) == set(OPS), checked


# ============================================================================ onnx.reference
def _reference_disagreement(case, res) -> str | None:
    """Why onnx.reference (onnx 1.23.2) and the oracle disagree on ``case``; None if unknown.
    In every listed case the oracle is right:

    * ``legacy-axis``: the legacy ``broadcast=1, axis=k`` rule ("The starting of the
      mutually equal shape is specified by the argument axis") is ignored; onnx.reference
      aligns B with numpy's trailing rule (wrong values, a wrong shape or a TypeError).
    * ``pow1-legacy-attrs``: onnx.reference's Pow has no ``broadcast``/``axis`` attribute
      (TypeError) although Pow-1 declares them.
    * ``legacy-shape``: without ``broadcast=1`` a legacy version "needs" B of A's shape
      ("Attribute broadcast=1 needs to be passed to enable broadcasting"); onnx.reference
      broadcasts anyway.
    * ``fmod-2``: ``fmod`` "must be 0 (default), or 1"; onnx.reference accepts 2.
    * ``pow-int-through-float``: int64 ``Pow`` with results beyond 2^53 computed through
      float64 (numpy's float power) and truncated: ``3**39`` is odd, its float64 is not.
    """
    if case.expect_error:
        return case.tags.get("error") if case.tags.get("error") in ("legacy-shape", "fmod-2") else None
    if case.since_version < 7 and "axis" in case.attributes:
        return "legacy-axis"
    if case.op == "Pow" and case.since_version == 1 and "broadcast" in case.attributes:
        return "pow1-legacy-attrs"
    if case.op == "Pow" and res.outcome == "fail":
        types = dict(p.split("=") for p in case.tags.get("types", "").split(",") if "=" in p)
        tx = types.get("T", case.tags["dtype"])
        if tx == "int64" and case.tags["numerics"] in ("pow-large", "int-pow"):
            return "pow-int-through-float"
    return None


def test_agreement_with_onnx_reference(suite):
    results = run_cases(suite, resolve_backend("onnx-reference"))
    why, unexplained = sort_findings(suite, results, _reference_disagreement,
                                     skip=lambda c, r: r.outcome == "unsupported" and c.contested)
    assert not unexplained, unexplained[:5]
    # every listed disagreement still exists (the list is not stale)
    assert set(why) == {"legacy-axis", "pow1-legacy-attrs", "legacy-shape", "fmod-2", "pow-int-through-float"}, why
    assert sum(1 for r in results if r.outcome == "pass") > 0.9 * len(results)


# ============================================================================ kernels
_LEGACY = {"Add": 7, "Sub": 7, "Mul": 7, "Div": 7, "Pow": 7}


def _align(op, a, b, attrs, opset, flaw):
    if opset < _LEGACY.get(op, 0):
        if attrs.get("broadcast", 0):
            if b.size == 1:
                return b.reshape(())
            axis = attrs.get("axis", a.ndim - b.ndim)
            if tuple(a.shape[axis:axis + b.ndim]) != b.shape:
                raise ValueError("legacy broadcast: B does not match A at axis")
            return b.reshape((1,) * axis + b.shape + (1,) * (a.ndim - axis - b.ndim))
        if a.shape != b.shape and flaw != "broadcast-lenient":
            raise ValueError("legacy version without broadcast=1: shapes differ")
        if a.shape == b.shape:
            return b
    try:
        np.broadcast_shapes(a.shape, b.shape)
    except ValueError:
        if flaw != "broadcast-lenient":
            raise
        return np.resize(b, a.shape)  # accepts incompatible shapes
    return b


def _wide(dt, mode):
    if mode == "float64" or dt == np.float64:
        return np.float64
    return np.float32


def _pow_float(x, y, work):
    if y.dtype == np.float64:  # never narrow the exponent below its own type
        work = np.float64
    xf = x.astype(work)
    if y.dtype.kind in "iu":
        odd = (y & 1).astype(bool)
        mag = np.power(np.abs(xf), y.astype(np.float64).astype(work))
        return np.where(np.signbit(xf) & odd, -mag, mag)
    return np.power(xf, y.astype(work))


def make_kernel(op, mode="float32", flaw=None):
    """A numpy kernel for ``op``: 16-bit floats evaluated in float32 (``mode="float32"``) or
    every float in float64 (``mode="float64"``), then rounded; ``flaw`` injects one error."""

    def kernel(inputs, attrs, outputs, opset):
        a, b = list(inputs.values())
        b = _align(op, a, b, attrs, opset, flaw)
        dt = a.dtype
        is_float = dt.kind == "f" or dt == ml_dtypes.bfloat16
        work = _wide(dt, mode) if is_float else None
        with np.errstate(all="ignore"):
            if op in ("Add", "Sub", "Mul", "Div"):
                if is_float:
                    fn = {"Add": np.add, "Sub": np.subtract, "Mul": np.multiply, "Div": np.divide}[op]
                    y = fn(a.astype(work), b.astype(work))
                elif op == "Div":
                    q = a // b
                    if flaw != "div-floor":  # floor -> truncation
                        q = q + ((a - q * b != 0) & ((a < 0) != (b < 0))).astype(q.dtype)
                    y = q
                else:
                    y = {"Add": np.add, "Sub": np.subtract, "Mul": np.multiply}[op](a, b)
            elif op == "Mod":
                fmod = attrs.get("fmod", 0)
                if fmod not in (0, 1):
                    raise ValueError("fmod must be 0 or 1")
                floor = (fmod == 0) != (flaw in ("mod0-as-fmod", "mod1-as-floor") and
                                        (fmod == 0) == (flaw == "mod0-as-fmod"))
                if is_float and flaw == "mod-literal-float32" and fmod == 0:
                    af, bf = a.astype(np.float32), b.astype(np.float32)
                    y = af - np.floor(af / bf) * bf
                elif is_float:
                    y = np.mod(a.astype(work), b.astype(work)) if floor else np.fmod(a.astype(work), b.astype(work))
                else:
                    y = np.mod(a, b) if floor else np.fmod(a, b)
            elif op == "Pow":
                if not is_float:  # integer base
                    if flaw == "pow-int-through-float64":
                        y = np.power(a.astype(np.float64), b.astype(np.float64)).astype(dt)
                    else:
                        xo, yo = np.broadcast_arrays(a.astype(object), b.astype(object))
                        y = np.array([int(p) ** int(q) for p, q in zip(xo.ravel(), yo.ravel())],
                                     dtype=dt).reshape(xo.shape)
                elif flaw == "pow-f16-exp-log" and dt == np.float16:
                    y = np.exp(b.astype(np.float16) * np.log(a))  # every step rounded to float16
                elif flaw == "pow-f16-exp-log-signed" and dt == np.float16:  # same, sign of odd powers restored
                    y = np.exp(b.astype(np.float16) * np.log(np.abs(a)))
                    odd = np.abs(np.fmod(b.astype(np.float64), 2)) == 1
                    y = np.where((a < 0) & odd, -y, np.where((a < 0) & (b != np.floor(b)), np.nan, y))
                elif flaw == "pow-exponent-as-double" and b.dtype.kind in "iu":
                    y = np.power(a.astype(np.float64), b.astype(np.float64))
                else:
                    y = _pow_float(a, b, work)
            elif op == "BitShift":
                d = attrs.get("direction")
                if d not in ("LEFT", "RIGHT"):
                    raise ValueError("direction")
                w = dt.itemsize * 8
                s = b.astype(np.int64)  # uint64 amounts >= 2^63 wrap negative: out of range either way
                inside = (s >= 0) & (s < w)
                sc = (s & (w - 1)) if flaw == "shift-count-masked" else np.where(inside, s, 0)
                sc = sc.astype(dt)
                y = np.left_shift(a, sc) if d == "LEFT" else np.right_shift(a, sc)
                if flaw != "shift-count-masked":
                    y = np.where(inside, y, np.where((a < 0) & (d == "RIGHT"), -1, 0).astype(dt))
        return {outputs[0]: np.asarray(y).astype(dt)}

    return kernel


def _backend(mode="float32", flaw=None, check=True):
    return KernelBackend({op: make_kernel(op, mode, flaw) for op in OPS}, name=f"{mode}-{flaw}", check=check)


@pytest.mark.parametrize("mode", ["float32", "float64"])
def test_legitimate_kernel_passes_everything(mode, suite):
    results = run_cases(suite, _backend(mode))
    bad = [(c.id, r.outcome, r.message[:300]) for c, r in zip(suite, results)
           if r.outcome != "pass" and not (r.outcome == "unsupported" and c.contested)]
    assert not bad, bad[:5]
    assert Counter(r.outcome for r in results)["pass"] >= len(suite) - 40


WRONG = {
    "div-floor": ("Div", None),
    "mod0-as-fmod": ("Mod", None),
    "mod1-as-floor": ("Mod", None),
    "mod-literal-float32": ("Mod", "large-ratio"),
    "pow-int-through-float64": ("Pow", "pow-large"),
    "pow-f16-exp-log": ("Pow", None),
    "broadcast-lenient": ("Add", None),
    "shift-count-masked": ("BitShift", None),
}


def test_pow_integer_exponent_through_double_is_legitimate(suite):
    """Converting an int64 exponent to double (onnxruntime) can change its parity beyond 2^53; the
    text fixes no precision for that conversion, so no case claims the parity there."""
    cases = [c for c in suite if c.op == "Pow" and not c.expect_error and not c.contested]
    results = run_cases(cases, _backend(flaw="pow-exponent-as-double", check=False))
    assert cases and Counter(r.outcome for r in results)["fail"] == 0


@pytest.mark.parametrize("flaw", sorted(WRONG))
def test_wrong_kernel_is_caught(flaw, suite):
    op, numerics = WRONG[flaw]
    cases = [c for c in suite if c.op == op and (numerics is None or c.tags.get("numerics") == numerics)]
    if flaw == "mod0-as-fmod":  # the sign rule alone: integer and 28's float cases with fmod=0
        cases = [c for c in cases if c.attributes.get("fmod", 0) == 0 and not c.expect_error and not c.contested]
    if flaw == "mod1-as-floor":
        cases = [c for c in cases if c.attributes.get("fmod", 0) == 1 and not c.expect_error]
    if flaw == "pow-f16-exp-log":
        cases = [c for c in cases if c.tags["dtype"] == "float16" and not c.expect_error]
    assert cases
    results = run_cases(cases, _backend(flaw=flaw, check=False))
    outcomes = Counter(r.outcome for r in results)
    assert outcomes["fail"] >= 1, outcomes
    if flaw == "mod0-as-fmod":  # caught on integers and on Mod-28 floats separately
        kinds = {V.kind(c.tags["dtype"]) for c, r in zip(cases, results) if r.outcome == "fail"}
        assert kinds == {V.INT, V.FLOAT}, kinds
    if flaw == "pow-int-through-float64":  # int64 results beyond 2^53, every version with integers
        assert {c.since_version for c, r in zip(cases, results) if r.outcome == "fail"} == {12, 13, 15}


@pytest.mark.parametrize("flaw", ["pow-f16-exp-log", "pow-f16-exp-log-signed"])
def test_float16_pow_in_float16_is_caught_by_ordinary_cases(flaw, suite):
    """exp(y*log(x)) rounded step by step in float16 loses about ``|y ln x|`` float16 ulps;
    even with the sign of odd powers of negative bases restored, every non-empty float16
    ``integral-exponent`` case (bases in [-8, 8], exponents in [-12, 12]) catches it."""
    cases = [c for c in suite if c.op == "Pow" and c.tags["dtype"] == "float16" and
             c.tags["numerics"] == "integral-exponent" and not c.tags.get("zero_size")]
    assert len(cases) >= 4
    results = run_cases(cases, _backend(flaw=flaw, check=False))
    fails = sum(r.outcome == "fail" for r in results)
    # the plain form is NaN on every negative base; the signed one by magnitude (1-4x the budget)
    assert fails == len(cases) if flaw == "pow-f16-exp-log" else fails >= 0.75 * len(cases), fails


# ============================================================================ coverage
def test_coverage_every_combination_of_every_version(suite):
    cov = compute_coverage(suite)
    assert not cov["unmatched"]
    for op in OPS:
        versions = cov["ops"][op]["versions"]
        spec = {s.since_version for s in onnx.defs.get_all_schemas_with_history() if s.name == op and s.domain == ""}
        assert set(map(int, versions)) == spec
        for v, e in versions.items():
            assert not e["missing"], (op, v, e["missing"][:3])
            assert len(e["covered"]) == e["total_combinations"] > 0
    counts = Counter(c.op for c in suite)
    assert all(30 <= n <= 500 for n in counts.values()), counts


def _bcast(case):
    ins = [np.asarray(case.datasets[0].inputs[i.name]) if i.name in case.datasets[0].inputs else i.value
           for i in case.inputs]
    a, b = ins
    if case.since_version < 7 and case.attributes.get("broadcast"):
        axis = case.attributes.get("axis", a.ndim - b.ndim)
        b = b.reshape((1,) * axis + b.shape + (1,) * (a.ndim - axis - b.ndim))
    return np.broadcast_arrays(a, b)


def test_undefined_behaviour_is_never_generated(value_cases):
    seen = Counter()
    for c in value_cases:
        a, b = _bcast(c)
        if a.size == 0:
            continue
        ai, bi = a.astype(object), b.astype(object)
        kind = V.kind(c.tags["dtype"])
        if c.op in ("Div", "Mod") and kind == V.INT:
            assert (bi != 0).all(), c.id
            seen[c.op] += 1
            if c.op == "Div" and a.dtype.kind == "i":
                assert not ((ai == int(np.iinfo(a.dtype).min)) & (bi == -1)).any(), c.id
            if c.op == "Mod" and c.since_version == 10:
                assert (ai != 0).all(), c.id
        if c.op == "Pow" and kind == V.INT:
            yf = b.astype(np.float64)
            assert np.all(np.isfinite(yf) & (yf >= 0) & (yf == np.floor(yf))), c.id
            seen["Pow"] += 1
        if c.op == "BitShift" and c.since_version == 11:
            assert ((bi >= 0) & (bi < a.dtype.itemsize * 8)).all(), c.id
            seen["BitShift"] += 1
        if c.op == "Mod" and kind == V.FLOAT and c.attributes.get("fmod") == 1:
            af, bf = a.astype(np.float64), b.astype(np.float64)
            assert not ((af == 0) & np.signbit(af) & (bf > 0)).any(), c.id
            seen["Mod-fmod1"] += 1
    assert set(seen) == {"Div", "Mod", "Pow", "BitShift", "Mod-fmod1"}, seen


def test_trap_classes_are_present(value_cases):
    # Pow: int64 results beyond 2^53 (int32 beyond 2^24) in every version with integer T
    big = set()
    for c in value_cases:
        if c.op == "Pow" and c.tags["numerics"] == "pow-large":
            z = np.asarray(c.datasets[0].outputs["Z"]).astype(object)
            if z.size and min(abs(int(v)) for v in z.ravel()) > (2 ** 53 if c.tags["dtype"] == "int64" else 2 ** 24):
                big.add((c.since_version, c.tags["dtype"]))
    assert big >= {(v, t) for v in (12, 13, 15) for t in ("int64", "int32")}, big
    # Mod: |A/B| > 2^24 for every float type of every version
    ratio = set()
    for c in value_cases:
        if c.op == "Mod" and c.tags["numerics"] == "large-ratio":
            a, b = (x.astype(np.float64) for x in _bcast(c))
            if a.size and (np.abs(a / b) > 2 ** 24).all():
                ratio.add((c.since_version, c.tags["dtype"]))
    assert ratio >= {(v, t) for v in (10, 13, 28) for t in ("float16", "float", "double")} | {(13, "bfloat16"),
                                                                                            (28, "bfloat16")}
    # both fmod values for every type of every Mod version; BitShift both directions and,
    # at 28, negative and >= width amounts for signed types
    fm = {(c.since_version, c.tags["dtype"], c.attributes.get("fmod", 0)) for c in value_cases if c.op == "Mod"}
    for v in (10, 13, 28):
        for t in ("int8", "uint64", "float16", "double"):
            assert {(v, t, 0), (v, t, 1)} <= fm, (v, t)
    sh = [c for c in value_cases if c.op == "BitShift" and c.since_version == 28 and c.tags["dtype"] == "int8"]
    ys = np.concatenate([_bcast(c)[1].ravel().astype(np.int64) for c in sh])
    assert (ys < 0).any() and (ys >= 8).any() and ((ys >= 0) & (ys < 8)).any()
    assert {c.attributes["direction"] for c in value_cases if c.op == "BitShift"} == {"LEFT", "RIGHT"}
    # legacy broadcast patterns in versions 1 and 6 (Pow: 1) with their attributes
    leg = {(c.op, c.since_version, c.tags["shape"]) for c in value_cases if c.since_version < 7}
    for op, v in [("Add", 1), ("Add", 6), ("Div", 6), ("Pow", 1)]:
        assert {(op, v, s) for s in ("legacy-scalar", "legacy-suffix", "legacy-axis0", "legacy-axis1")} <= leg


def test_error_cases(suite):
    errs = {(c.op, c.since_version, c.tags["error"]) for c in suite if c.expect_error}
    assert ("BitShift", 11, "direction") in errs and ("BitShift", 28, "direction") in errs
    assert ("Mod", 13, "fmod-2") in errs and ("Mod", 28, "fmod-2") in errs and ("Mod", 10, "fmod-2") not in errs
    for op, v in [("Add", 1), ("Sub", 6), ("Pow", 1)]:
        assert {(op, v, "legacy-shape"), (op, v, "legacy-align"), (op, v, "broadcast")} <= errs
    assert ("Div", 14, "broadcast") in errs and ("Add", 14, "legacy-shape") not in errs


def test_contested_flag_only_where_the_text_contradicts_the_schema(value_cases):
    got = Counter((c.since_version, V.kind(c.tags["dtype"]), c.attributes.get("fmod", 0)) for c in value_cases
                  if c.contested)
    assert set(got) == {(10, V.FLOAT, 0), (13, V.FLOAT, 0), (13, V.INT, 1)}, got
    assert all(c.contested is None for c in value_cases if c.op != "Mod")
