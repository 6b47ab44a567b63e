import math

import numpy as np
import pytest
from onnx import TensorProto

from conformance import dtypes
from conformance.reference import libm
from conformance.tolerance import Tolerance, compare, derive_tolerance


def test_derive_tolerance_bounds_the_variants_and_grants_ulps():
    rng = np.random.default_rng(1)
    e = rng.normal(size=1000)
    v32 = e.astype(np.float32)
    tol = derive_tolerance(e, {"f32": v32}, TensorProto.FLOAT)
    spread = float(np.max(np.abs(v32.astype(np.float64) - e)))
    assert tol.spread == pytest.approx(spread)
    assert tol.rtol == pytest.approx(4 * dtypes.eps(TensorProto.FLOAT))
    assert tol.atol >= 4 * spread
    # every variant is accepted by its own tolerance
    assert compare("Y", v32, v32, tol).passed


def test_derive_tolerance_rejects_variant_that_breaks_finite_values():
    e = np.array([1.0, 2.0])
    with pytest.raises(ValueError, match="not finite"):
        derive_tolerance(e, {"bad": np.array([1.0, np.inf])}, TensorProto.FLOAT)
    with pytest.raises(ValueError, match="shape"):
        derive_tolerance(e, {"bad": np.array([1.0])}, TensorProto.FLOAT)


def _tol(atol=1e-3, rtol=0.0):
    return Tolerance(atol=atol, rtol=rtol)


def test_compare_values_and_ratio():
    e = np.array([1.0, 2.0, 3.0], np.float32)
    a = np.array([1.0, 2.0005, 3.0], np.float32)
    c = compare("Y", a, e, _tol(1e-3))
    assert c.passed and 0.4 < c.ratio < 0.6 and c.worst_index == [1]
    c = compare("Y", a, e, _tol(1e-4))
    assert not c.passed and "1 of 3" in c.reason and c.ratio > 4


def test_compare_relative_term():
    e = np.array([1000.0], np.float32)
    a = np.array([1000.5], np.float32)
    assert not compare("Y", a, e, _tol(atol=0.1)).passed
    assert compare("Y", a, e, _tol(atol=0.1, rtol=1e-3)).passed


def test_compare_dtype_and_shape_mismatch_fail():
    e = np.zeros((2, 3), np.float32)
    assert "dtype" in compare("Y", e.astype(np.float16), e, _tol()).reason
    assert "shape" in compare("Y", e.reshape(3, 2), e, _tol()).reason
    assert math.isinf(compare("Y", e.reshape(3, 2), e, _tol()).ratio)


def test_compare_special_values_are_exact():
    e = np.array([np.nan, np.inf, -np.inf, 1.0], np.float32)
    assert compare("Y", e.copy(), e, _tol()).passed
    for bad in ([0.0, np.inf, -np.inf, 1.0], [np.nan, -np.inf, -np.inf, 1.0], [np.nan, np.inf, -np.inf, np.nan],
                [np.nan, np.inf, -np.inf, np.inf]):
        c = compare("Y", np.array(bad, np.float32), e, _tol(atol=1e30))
        assert not c.passed and "NaN/Inf" in c.reason


def test_compare_bfloat16_and_empty():
    import ml_dtypes

    e = np.array([1.0, 2.0], ml_dtypes.bfloat16)
    assert compare("Y", e.copy(), e, _tol(0)).passed
    z = np.zeros((0, 4), np.float16)
    assert compare("Y", z.copy(), z, _tol(0)).passed


def test_compare_never_raises_on_garbage():
    c = compare("Y", object(), np.zeros(2, np.float32), _tol())
    assert not c.passed


def test_compare_integers_and_bools_exactly():
    e = np.array([1, 2, 2**40 + 1], np.int64)
    assert compare("Y", e.copy(), e, _tol(atol=10)).passed
    c = compare("Y", np.array([1, 2, 2**40], np.int64), e, _tol(atol=10))
    assert not c.passed and "exact" in c.reason and c.worst_index == [2]
    assert not compare("Y", np.array([True, False]), np.array([True, True]), _tol()).passed


def test_sign_of_zero_is_checked_only_when_the_tolerance_says_so():
    e = np.array([-0.0, 0.0, 1.0], np.float32)
    flipped = np.array([0.0, -0.0, 1.0], np.float32)
    loose = Tolerance(atol=0.0, rtol=0.0)
    assert compare("y", flipped, e, loose).passed
    strict = Tolerance(atol=0.0, rtol=0.0, signed_zero=True)
    chk = compare("y", flipped, e, strict)
    assert not chk.passed and "2 zero(s) of the wrong sign" in chk.reason and chk.worst_index == [0]
    assert compare("y", e.copy(), e, strict).passed
    # a tiny nonzero where -0 is expected is a value question (within atol), not a sign question
    assert compare("y", np.array([1e-30, 0.0, 1.0], np.float32), e, Tolerance(atol=1e-20, rtol=0.0, signed_zero=True)).passed


def test_signed_zero_round_trips_and_is_omitted_when_unset():
    t = Tolerance(atol=1.0, rtol=0.5, signed_zero=True)
    assert Tolerance.from_json(t.to_json()) == t
    assert "signed_zero" not in Tolerance(atol=1.0, rtol=0.5).to_json()  # earlier cases keep their hashes
    assert Tolerance.from_json(Tolerance(atol=1.0, rtol=0.5).to_json()).signed_zero is False


def test_statistic_rounding_error_formula_and_exact_rows():
    from conformance.tolerance import exact_mean_rows, statistic_rounding_errors

    u = dtypes.eps(TensorProto.FLOAT)
    # a large-offset row: the mean's 2 ulps amplified by 1/std (first-order formula, to 1%)
    x = np.array([[1000.0, 1001.0, 999.0, 1000.5]])
    r = statistic_rounding_errors(x, TensorProto.FLOAT, epsilon=1e-5)
    m, v = x.mean(), x.var()
    dm = 2 * u * np.abs(x).mean()
    assert r["mean"][0] == pytest.approx(dm)
    first = dm / math.sqrt(v + 1e-5) + 0.5 * np.abs(x - m) * (v + 1e-5) ** -1.5 * (2 * u * (v + 1e-5) + dm * dm)
    np.testing.assert_allclose(r["y"], first, rtol=1e-2)
    # constant rows of 2^k elements have exact means: no term; 3 elements, or NaN rows: as stated
    c = np.array([[2.25] * 4, [np.nan] * 4])
    assert list(exact_mean_rows(c, TensorProto.FLOAT)) == [True, False]
    r = statistic_rounding_errors(c, TensorProto.FLOAT, epsilon=1e-12)
    assert np.all(r["y"] == 0)
    c3 = np.array([[2.25] * 3])  # 1/3 is inexact: sum * (1/3) may be an ulp off, times 1/sqrt(1e-12)
    assert not exact_mean_rows(c3, TensorProto.FLOAT)[0]
    r = statistic_rounding_errors(c3, TensorProto.FLOAT, epsilon=1e-12)
    assert r["y"].max() == pytest.approx(2 * u * 2.25 * 1e6, rel=1e-3)
    # the term enters atol and is recorded (and serialised only where present)
    tol = derive_tolerance(np.ones(3), {"v": np.ones(3)}, TensorProto.FLOAT, propagated=np.array([0.5, 0.25]))
    assert tol.propagated == 0.5 and tol.atol == pytest.approx(0.5 + 4 * u)
    assert Tolerance.from_json(tol.to_json()) == tol
    assert "propagated" not in derive_tolerance(np.ones(3), {}, TensorProto.FLOAT).to_json()


def test_complex_outputs_compare_real_and_imaginary_parts():
    """A complex output is right only if both parts are: a conjugate or a value rotated onto
    the same modulus is a failure, even under an exact tolerance."""
    e = np.array([1 + 2j, 3 - 1j], dtype=np.complex64)
    exact = Tolerance(0.0, 0.0, exact=True)
    assert compare("y", e.copy(), e, exact).passed
    assert not compare("y", np.conj(e), e, exact).passed
    rotated = (e * np.exp(0.5j)).astype(np.complex64)
    assert np.allclose(np.abs(rotated), np.abs(e)) and not compare("y", rotated, e, exact).passed
    near = e + np.complex64(1e-7 + 1e-7j)
    assert compare("y", near, e, Tolerance(atol=1e-6, rtol=0.0)).passed
    assert not compare("y", near, e, exact).passed


# ------------------------------------------------------------------ the fast path agrees
from hypothesis import given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402
from hypothesis.extra import numpy as hnp  # noqa: E402


@settings(max_examples=300, deadline=None)
@given(
    data=st.data(),
    dtype=st.sampled_from([np.float16, np.float32, np.float64]),
    shape=hnp.array_shapes(min_dims=0, max_dims=3, min_side=1, max_side=5),
    atol=st.floats(1e-12, 10.0),
    rtol=st.floats(0.0, 1.0),
    signed_zero=st.booleans(),
)
def test_compare_fast_path_agrees_with_the_general_path(data, dtype, shape, atol, rtol, signed_zero):
    """compare's shortcut for finite outputs under atol > 0 gives the check the general path gives,
    field for field (passing, failing, signed zeros, worst index and its values)."""
    from conformance.tolerance import _compare_float

    finite = st.floats(-1e4, 1e4, width=np.finfo(dtype).bits) | st.sampled_from([0.0, -0.0])
    e = data.draw(hnp.arrays(dtype, shape, elements=finite))
    noise = data.draw(hnp.arrays(dtype, shape, elements=finite))
    a = (e + noise * data.draw(st.sampled_from([0.0, 1e-6, 1e-3, 1.0]))).astype(dtype)
    a = np.where(data.draw(hnp.arrays(np.bool_, shape)), -a, a).astype(dtype)  # sign flips, -0.0 included
    tol = Tolerance(atol=atol, rtol=rtol, signed_zero=signed_zero)
    fast = compare("y", a, e, tol)
    general = _compare_float("y", a.astype(np.float64), e.astype(np.float64), tol)
    assert fast.to_json() == general.to_json()


# ============================================================================ the budget table
def test_budget_table_is_opencl_full_profile_per_type():
    """The table's values are the OpenCL full profile's (double, float, half columns); sqrt,
    divide and reciprocal correctly rounded only in double and half, 3 / 2.5 ulp in float; the
    correctly-rounded profile makes them exact everywhere."""
    from conformance.tolerance import OPENCL_ULPS, budget_ulps, table_ulps

    assert OPENCL_ULPS["sqrt"] == (0, 3, 0) and OPENCL_ULPS["divide"] == (0, 2.5, 0)
    assert OPENCL_ULPS["exp"] == (3, 3, 2) and OPENCL_ULPS["log"] == (3, 3, 2)
    assert table_ulps("sqrt", "float") == 3 and table_ulps("sqrt", "double") == 0
    assert table_ulps("sqrt", "float", "correctly-rounded") == 0
    assert table_ulps("exp", "bfloat16") == table_ulps("exp", "float16") == 2
    # a 16-bit result may come from float32 within float32's budget, rounded once: just over 1/2 ulp
    assert 0.5 < budget_ulps("sqrt", "float16") < 0.501 and budget_ulps("sqrt", "float16", "correctly-rounded") == 0
    with pytest.raises(ValueError):
        table_ulps("exp", "float", "fast")


def test_budget_tolerance_accepts_b_ulps_off_at_a_binade_start():
    """(b + 1/2) ulp: a result b ulp from the true value just above a power of two, whose
    expectation rounded down to it, passes; b + 1 ulp fails."""
    from conformance.tolerance import budget_tolerance

    tol = budget_tolerance(3.0, "float")
    true = 1.0 + 0.4 * 2.0 ** -23  # expectation rounds to 1.0
    e = np.array([1.0], dtype=np.float32)
    ok = np.array([true + 3 * 2.0 ** -23], dtype=np.float64).astype(np.float32)  # <= 3 ulp from the true value
    assert compare("Y", ok, e, tol).passed
    bad = np.array([1.0 + 5 * 2.0 ** -23], dtype=np.float32)
    assert not compare("Y", bad, e, tol).passed
    assert budget_tolerance(0.0, "double").exact


# ============================================================================ kernels at the budget
def _perturb(y, dt, fn, keep):
    """``y`` (float64 true values) as a libm at the budget of ``fn`` at precision ``dt`` (float32
    or float64) returns it: ``y +- b ulp(y)`` alternating sides, rounded toward ``y`` so it stays
    within ``b`` ulp; where ``keep`` (exact special cases: zeros, infinities, NaN), ``y`` rounded."""
    from conformance.tolerance import table_ulps

    with np.errstate(all="ignore"):
        r = y.astype(dt)
        b = table_ulps(fn, "float" if dt == np.float32 else "double")
        if b == 0 or y.size == 0:
            return r
        a_ = np.abs(y).astype(dt)
        a_ = np.where(a_.astype(np.float64) > np.abs(y), np.nextafter(a_, dt.type(0)), a_)
        u = np.spacing(a_).astype(np.float64)
        s = np.where(np.arange(y.size).reshape(y.shape) % 2 == 0, 1.0, -1.0)
        t = (y + s * b * u).astype(dt)
        t = np.where(np.abs(t.astype(np.float64) - y) > b * u, np.nextafter(t, r), t)
        # never across zero: every real kernel gets the sign right (sign(a) sign(b), sqrt >= 0)
        ok = np.isfinite(y) & np.isfinite(t) & (y != 0) & ~keep & (np.sign(t) == np.sign(y))
        return np.where(ok, t, r)


def _at_budget(f, fn):
    """``f`` (a float64 numpy function) as a libm at the budget of ``fn`` (:func:`_perturb`) at
    the argument's precision (float32 or float64)."""

    def g(x, *a, **k):
        x = np.asarray(x)
        dt = x.dtype if x.dtype in (np.float32, np.float64) else np.dtype(np.float64)
        with np.errstate(all="ignore"):
            y = np.asarray(f(x.astype(np.float64)), dtype=np.float64)
        return _perturb(y, dt, fn, ~np.isfinite(x))

    return g


def _tanh_at_budget(x, *a, **k):
    """tanh at the budget below its saturation: where the true value rounds to +-1 every libm
    returns +-1 (a result beyond 1, or 1 - 5 ulp for ``tanh(20)``, is no implementation's), and
    the perturbation never leaves [-1, 1]."""
    x = np.asarray(x)
    dt = x.dtype if x.dtype in (np.float32, np.float64) else np.dtype(np.float64)
    with np.errstate(all="ignore"):
        y = libm.tanh(x.astype(np.float64))
    return np.clip(_perturb(y, dt, "tanh", ~np.isfinite(x) | (np.abs(y.astype(dt)) >= 1)), -1, 1).astype(dt)


def _divide_at_budget(a, b, *args, **kw):
    a, b = np.broadcast_arrays(np.asarray(a), np.asarray(b))
    dt = a.dtype if a.dtype in (np.float32, np.float64) else np.dtype(np.float64)
    with np.errstate(all="ignore"):
        y = a.astype(np.float64) / b.astype(np.float64)
    return _perturb(y, dt, "divide", ~(np.isfinite(a) & np.isfinite(b)))


class _BudgetNumpy:
    """numpy with ``exp``, ``log``, ``sqrt``, ``reciprocal``, ``divide``, ``tanh``, ``log1p`` and
    ``expm1`` replaced by libms at the budget."""

    # the true value's float64 (near-correctly rounded: libm), then perturbed by the whole budget; from
    # numpy's float64 loops (an ulp or two off on an X86_V3 machine) the kernel was beyond its budget
    exp = staticmethod(_at_budget(libm.exp, "exp"))
    log = staticmethod(_at_budget(libm.log, "log"))
    sqrt = staticmethod(_at_budget(np.sqrt, "sqrt"))
    reciprocal = staticmethod(_at_budget(np.reciprocal, "reciprocal"))
    divide = staticmethod(_divide_at_budget)
    tanh = staticmethod(_tanh_at_budget)
    log1p = staticmethod(_at_budget(libm.log1p, "log1p"))
    expm1 = staticmethod(_at_budget(libm.expm1, "expm1"))

    def __getattr__(self, name):
        return getattr(np, name)


def _lse_no_shift(rows, dt, variant, flaw):
    """ReduceLogSumExp at the float32 accumulator (16-bit, float) or double, the literal
    ``log(sum(exp(x)))`` wherever it neither overflows nor underflows (the issue's double
    ``ReduceLogSumExp-1`` at -645.9), the max shift elsewhere; exp and log at the budget."""
    bnp = _BudgetNumpy()
    kept, n = rows.shape[:-1], rows.shape[-1]
    if n == 0:
        return np.full(kept, -np.inf, dtype=dt)
    acc = np.float64 if dt == np.float64 else np.float32
    r = rows.astype(acc)
    with np.errstate(all="ignore"):
        lit = bnp.log(bnp.exp(r).sum(axis=-1, dtype=acc))
        m = r.max(axis=-1, keepdims=True)
        m = np.where(np.isfinite(m), m, 0).astype(acc)
        shifted = np.squeeze(m, -1) + bnp.log(bnp.exp(r - m).sum(axis=-1, dtype=acc))
        lim = 80.0 if acc == np.float32 else 700.0
        safe = np.isfinite(r).all(axis=-1) & (np.abs(r).max(axis=-1) < lim) & np.isfinite(lit)
        return np.where(safe, lit, shifted).astype(acc).astype(dt)


def _pow_narrowed(x, y, work):
    """Pow as a runtime computing in float32 for every non-double base: a double exponent
    converted to the computation type (1e-300 becomes 0), then ``pow``."""
    import test_ops_binary as tb

    if y.dtype == np.float64 and x.dtype != np.float64:
        return np.power(x.astype(np.float32), y.astype(np.float32))
    return tb._POW_FLOAT(x, y, work)


_GROUPS = {
    "exp-log-at-budget": ["Exp", "Log", "ReduceLogSumExp", "ReduceLogSum"],
    "sqrt-at-budget": ["Sqrt", "Reciprocal", "Div", "ReduceL2"],
    "exponent-narrowed": ["Pow"],
}


def _budget_backend(monkeypatch):
    import test_ops_binary as tb
    import test_ops_reduce as tr
    import test_ops_unary as tu

    from conformance.backends.kernel import KernelBackend

    bnp = _BudgetNumpy()
    monkeypatch.setattr(tr, "np", bnp)
    monkeypatch.setitem(tr.ROW_KERNELS, "ReduceLogSumExp", _lse_no_shift)
    for op, fn in (("Exp", bnp.exp), ("Log", bnp.log), ("Sqrt", bnp.sqrt), ("Reciprocal", bnp.reciprocal)):
        monkeypatch.setitem(tu._F, op, fn)
    monkeypatch.setattr(tb, "np", bnp)
    if not hasattr(tb, "_POW_FLOAT"):
        tb._POW_FLOAT = tb._pow_float
    monkeypatch.setattr(tb, "_pow_float", _pow_narrowed)
    kernels = {op: tu.make_kernel(op) for op in ("Exp", "Log", "Sqrt", "Reciprocal")}
    kernels.update({op: tr.make_reduce_kernel(op) for op in ("ReduceLogSumExp", "ReduceLogSum", "ReduceL2")})
    kernels.update({op: tb.make_kernel(op) for op in ("Div", "Pow")})
    return KernelBackend(kernels, name="at-budget", check=False)


@pytest.mark.parametrize("seed", [0, 1])
@pytest.mark.parametrize("group", list(_GROUPS))
def test_kernels_at_the_budget_pass_every_case(group, seed, monkeypatch):
    """The issue's legitimate kernels -- exp and log at the budget (ReduceLogSumExp's literal
    form included), sqrt / reciprocal / divide at the budget, every 16-bit type evaluated in
    float32 and rounded once, Pow's exponent narrowed to float32 -- pass every value case of
    their operators at seeds 0 and 1 (integer Pow/Div paths: exact kernels)."""
    from conformance import registry
    from conformance.runner import run_cases

    ops = _GROUPS[group]
    cases = [c for c in registry.generate(ops, seed=seed) if c.expect_error is None and not c.contested]
    res = run_cases(cases, _budget_backend(monkeypatch))
    bad = [(r.id, r.message[:200]) for r in res if r.outcome != "pass"]
    assert len(res) == len(cases) > 400
    assert bad == [], (len(bad), bad[:5])


def _family_kernels(family, monkeypatch):
    """(operators, backend) of a family test module's legitimate kernel with numpy's library
    functions replaced by the at-budget ones (:class:`_BudgetNumpy`)."""
    import importlib

    from conformance.backends.kernel import KernelBackend

    m = importlib.import_module(family)
    monkeypatch.setattr(m, "np", _BudgetNumpy())
    if family == "test_softmax":
        return list(m.OPS), KernelBackend(m._kernels(algo="f32"), name="at-budget")
    if family == "test_activations":
        return list(m.OPS), m._backend("at-budget")
    if family == "test_layer_normalization":
        return [m.OP], KernelBackend({m.OP: m.LEGIT["float32-onecast"]}, name="at-budget")
    return [m.OP], KernelBackend({m.OP: m.LEGIT["native"]}, name="at-budget")


@pytest.mark.parametrize("family", ["test_softmax", "test_activations", "test_layer_normalization",
                                    "test_batch_normalization"])
def test_composites_with_the_library_at_the_budget_pass(family, monkeypatch):
    """The composition rule: Softmax/LogSoftmax, the activations (Softplus, Mish, Gelu, Sigmoid,
    Tanh...), LayerNormalization and BatchNormalization computed by their families' legitimate
    kernels with exp, log, sqrt, tanh, log1p, expm1 at the budget table's bounds pass every case
    (seed 0)."""
    from conformance import registry
    from conformance.runner import run_cases

    ops, backend = _family_kernels(family, monkeypatch)
    cases = registry.generate(ops, seed=0)
    res = run_cases(cases, backend)
    bad = [(r.id, r.message[:200]) for r in res if r.outcome != "pass"]
    assert len(res) == len(cases) > 500
    assert bad == [], (len(bad), bad[:5])
