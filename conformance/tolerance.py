"""Per-output tolerances derived from legitimate algorithm variants, and the comparison.

Policy (DESIGN.md, "Oracle and tolerance"): a tolerance must accept every
implementation that follows the spec at the precision the spec mandates and reject
wrong semantics.  We get there empirically, per case and per output:

1. the oracle evaluates the operator in float64 (``expected64``);
2. the reference module evaluates the same formula at the *mandated* precision with
   several legitimate algorithm variants (summation order, Welford, one cast at the
   end or the spec's function body cast by cast, ...);
3. ``spread`` is the largest absolute deviation of any variant from ``expected64``;
4. the accepted error of an element ``e`` of the expected output is

       atol + rtol * |e|,   atol = safety * spread + ulps * eps(out) * scale,
                            rtol = ulps * eps(out)

   where ``eps(out)`` is the machine epsilon of the output element type and
   ``scale`` the magnitude of the output's natural unit (by default the largest
   finite ``|e|``), so that a few ulp of the output dtype (rounding of the stored
   expectation, an rsqrt a few ulp off, FMA or not) are always accepted.

Propagated rounding of statistics (``propagated``, :func:`statistic_rounding_error`).
The spread of our own variants is an *empirical* bound: variants can round their mean
identically by chance, and the error a statistic's rounding causes is amplified by the
condition of the formula, not by the output's magnitude.  For the statistics-based
operators (``y = g * (x - m) * R(v) + b`` with ``R(v) = 1/sqrt(v + eps)``; RMS forms have
no ``m``; MeanVarianceNormalization has ``R(v) = 1/(sqrt(v) + eps)``), every kernel
computing ``m`` and ``v`` at the mandated precision ``P`` (machine epsilon ``u_P``) holds
them only to a few ulp of ``P``.  We grant ``k = STAT_ULPS = 2`` ulps::

    dm = k * max(u_P * mean(|x|), s_P)   (>= k ulp_P(m): ulp_P(m) <= max(u_P |m|, s_P), |m| <= mean|x|)
    dv = k * max(u_P * (v + eps), s_P)   (>= k ulp_P(v + eps))

(``s_P``: the smallest subnormal of ``P``, the ulp of its subnormal range: a float16
batch variance of 1e-7 is a few float16 ulps.)
    v' in [max(v - dv, 0), v + dm^2 + dv]   (a two-pass variance about m + dm is v + dm^2)

    E_prop(x) = |g| * max over m' in {m - dm, m + dm}, v' at both ends of
                | (x - m') * R(v') - (x - m) * R(v) |
              ~ |g| * (R(v) * dm + 1/2 * |x - m| * R(v)^3 * (dv + dm^2))   to first order

(exact at the corners: the expression is linear in ``m'`` and monotonic in ``v'``).  A
mean that every summation order computes exactly (a constant row of ``2^k`` elements whose
partial sums are representable, :func:`exact_mean_rows`) has ``dm = 0``: there the
expected outputs stay exact (InstanceNormalization's ``B``, MeanVarianceNormalization's 0).  The
first term is the mean's rounding amplified by ``|scale| / sqrt(var + eps)``: for a
float32 constant channel with ``epsilon = 1e-12`` and mean 1 it is ~0.24 *|scale|*, and no
float32 kernel can do better (the mean of a row is a float32 number).  The generators add
``max E_prop`` to ``atol`` (``derive_tolerance(..., propagated=...)``), and record it in
:attr:`Tolerance.propagated`.  It is zero unless a caller passes it, so every other
operator's tolerance is unchanged.

NaN and infinities are compared exactly: an expected NaN requires a NaN, an expected
``+inf`` requires ``+inf``; a NaN or infinity where a finite value is expected fails.
The sign of zero is checked only where the spec defines it and the case says so
(``Tolerance.signed_zero``: an expected ``-0.0`` requires ``-0.0`` and ``+0.0`` requires
``+0.0``, e.g. an identity such as Dropout in inference); elsewhere (``max(0, -0)``) it is
not.

Every comparison records the measured error and the ratio error / tolerance at the
worst element, so a report can show how close a passing case came to failing.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from . import dtypes
from .jsonsafe import encode_float

#: Multiplier on the measured spread of legitimate variants.
DEFAULT_SAFETY = 4.0
#: Output-dtype ulps always granted (relative and as an absolute floor at ``scale``).
DEFAULT_ULPS = 4.0
#: Ulps of the mandated precision granted to a computed statistic (mean, variance, mean
#: square, norm): its final rounding (1/2 ulp) plus an accumulation accurate to 1 1/2 ulp.
STAT_ULPS = 2.0


# ============================================================================ budget table
#: The accuracy budget table (docs/tolerance.md, "The budget table"): function -> maximum error
#: in ulps of the *true* result, per column ``(double, float, half)``; 0 means correctly rounded.
#: Source: OpenCL SPIR-V Environment 3.0, "ULP Values for Math Instructions - Full Profile"
#: (Float64, Float32, Float16 columns; the same values as OpenCL C 3.0 §7.4 Table 7.1 for
#: single precision -- ``sqrt`` 3 ulp, ``x / y`` and ``1.0 / x`` 2.5 ulp -- and its double and
#: half-precision tables).  ``reciprocal`` is ``OpFDiv`` with a numerator of 1.
OPENCL_ULPS: dict[str, tuple[float, float, float]] = {
    "add": (0, 0, 0), "multiply": (0, 0, 0), "fma": (0, 0, 0),
    "divide": (0, 2.5, 0), "reciprocal": (0, 2.5, 0), "sqrt": (0, 3, 0), "rsqrt": (2, 2, 1),
    "exp": (3, 3, 2), "expm1": (3, 3, 2), "log": (3, 3, 2), "log1p": (2, 2, 2),
    "sin": (4, 4, 2), "cos": (4, 4, 2), "tan": (5, 5, 2),
    "asin": (4, 4, 2), "acos": (4, 4, 2), "atan": (5, 5, 2),
    "sinh": (4, 4, 2), "cosh": (4, 4, 2), "tanh": (5, 5, 2),
    "asinh": (4, 4, 2), "acosh": (4, 4, 2), "atanh": (5, 5, 2),
    "erf": (16, 16, 4), "erfc": (16, 16, 4), "pow": (16, 16, 4),
}

#: Where the suite's budget differs from :data:`OPENCL_ULPS`: function -> ((double, float,
#: half), reason).  Raised where a production libm measured beyond OpenCL; tightened where
#: OpenCL's bound is looser than every production libm and would let a wrong formula pass.
SUITE_DEVIATIONS: dict[str, tuple[tuple[float, float, float], str]] = {
    "asin": ((5, 5, 2), "raised: onnxruntime 1.32 float32 Asin measured 4.35 ulp (200k points)"),
    "acos": ((5, 5, 2), "raised: onnxruntime 1.32 float32 Acos measured 4.13 ulp (200k points)"),
    "erf": ((4, 4, 2), "tightened: glibc and onnxruntime measured <= 1 ulp; 16 ulp would hide a float16 erf"),
    "pow": ((4, 4, 2), "tightened: CUDA powf 4 ulp is the loosest production libm; 16 ulp would pass a naive "
                       "exp(y*log(x)) wherever |y ln x| < 16"),
}

#: Budget profiles: ``opencl`` (the default: the table above) and ``correctly-rounded``, the
#: stricter profile of IEEE 754 §5.4.1, which requires ``squareRoot`` and ``division``
#: correctly rounded in every format (a runtime that promises IEEE arithmetic can be held to it).
PROFILES = ("opencl", "correctly-rounded")
#: The profile the generators use.
PROFILE = "opencl"
_IEEE_EXACT = ("add", "multiply", "fma", "divide", "reciprocal", "sqrt")
_COLUMN = {"double": 0, "float": 1, "float16": 2, "bfloat16": 2}


def table_ulps(fn: str, type_name: str, profile: str | None = None) -> float:
    """The table's budget of ``fn`` evaluated natively in ``type_name`` (``"double"``,
    ``"float"``, ``"float16"``; ``"bfloat16"`` takes the half column), in ulps of the true
    result; 0 = correctly rounded.

    Raises:
        KeyError: a function or type the table does not have; ValueError: an unknown profile.
    """
    profile = profile or PROFILE
    if profile not in PROFILES:
        raise ValueError(f"unknown budget profile {profile!r}")
    if profile == "correctly-rounded" and fn in _IEEE_EXACT:
        return 0.0
    col = _COLUMN[type_name]
    row = SUITE_DEVIATIONS[fn][0] if fn in SUITE_DEVIATIONS else OPENCL_ULPS[fn]
    return float(row[col])


def budget_ulps(fn: str, type_name: str, profile: str | None = None) -> float:
    """The budget of one evaluation of ``fn`` whose result is stored in ``type_name``, in ulps
    of that type (the rule of docs/tolerance.md): the table's native budget, and for 16-bit
    types at least what evaluating in float32 within float32's budget and rounding once gives,
    ``1/2 + b_float * eps_float / eps_T`` (a legitimate kernel for 16-bit types; for a correctly
    rounded function that is just over half an ulp, not an exact result: double rounding).
    0 = correctly rounded (exact comparison).
    """
    b = table_ulps(fn, type_name, profile)
    if type_name in ("float16", "bfloat16"):
        b32 = table_ulps(fn, "float", profile)
        if b32 > 0:
            b = max(b, 0.5 + b32 * 2.0 ** -23 / float(dtypes.eps(dtypes.elem_type(type_name))))
    return b


def budget_rel(fn: str, type_name: str, profile: str | None = None) -> float:
    """The relative error of one evaluation of ``fn`` at precision ``type_name``:
    ``max(budget_ulps, 1/2) * eps(T)`` (``ulp(v) <= eps |v|`` for normal ``v``; a correctly
    rounded result is within half an ulp)."""
    return max(budget_ulps(fn, type_name, profile), 0.5) * float(dtypes.eps(dtypes.elem_type(type_name)))


def budget_tolerance(budget: float, type_name: str, signed_zero: bool = False, variants=()) -> Tolerance:
    """The tolerance of a single function within ``budget`` ulps (``budget_ulps``) whose
    expectation is the float64 result rounded to ``type_name``: ``(b + 1/2)`` ulps (the
    kernel's ``b`` and the expectation's own rounding), relative to ``|e|`` and, below the
    normal range, in units of the smallest subnormal; exact when ``b`` is 0 (correctly rounded:
    the rounded oracle is the only right answer)."""
    if budget == 0:
        return Tolerance(0.0, 0.0, exact=True, signed_zero=signed_zero)
    fi = dtypes.finfo(dtypes.elem_type(type_name))
    k = budget + 0.5
    return Tolerance(k * float(fi.smallest_subnormal), k * float(fi.eps),
                     variants=tuple(variants) or (f"budget={budget:g}ulp",), signed_zero=signed_zero)


def chain_ulps(steps, out_type: str, roundings: int = 3) -> float:
    """:data:`DEFAULT_ULPS` or, where larger, :func:`composed_ulps` of the chain evaluated in
    ``out_type`` itself or -- for 16-bit types -- in float32 and rounded once (the ulps a
    normalization's final step ``(x - m) g / sqrt(v + eps) + b`` is granted)."""
    cands = [DEFAULT_ULPS, composed_ulps(steps, out_type, out_type, roundings)]
    if out_type in ("float16", "bfloat16"):
        cands.append(composed_ulps(steps, "float", out_type, roundings))
    return max(cands)


def composed_ulps(steps, precision: str, out_type: str, roundings: int = 3) -> float:
    """The composition rule for a chain whose every step's relative error enters the result with
    a condition number of at most 1 (a product or quotient of the steps' results: ``(x - m) *
    g / sqrt(v + eps) + b``, ``x / pow(k + a s, beta)``), in ulps of ``out_type``: the budgets of
    ``steps`` (:func:`budget_ulps` at ``precision``, the precision the chain is evaluated in),
    ``roundings`` correctly rounded operations at half an ulp of ``precision`` each, the rounding
    to ``out_type`` when it is narrower and the expectation's own half ulp.

    Raises:
        KeyError: a step the table does not have.
    """
    e_p = float(dtypes.eps(dtypes.elem_type(precision)))
    e_t = float(dtypes.eps(dtypes.elem_type(out_type)))
    inner = sum(max(budget_ulps(f, precision), 0.5) for f in steps) + 0.5 * roundings
    return inner * e_p / e_t + (0.5 if e_t > e_p else 0.0) + 0.5


@dataclass(frozen=True)
class Tolerance:
    """Accepted error for one output: ``|actual - expected| <= atol + rtol * |expected|``.

    Attributes:
        atol: absolute term, in the output's units.
        rtol: relative term (dimensionless).
        spread: largest |variant - float64 oracle| over the legitimate variants.
        variants: names of the variants that were measured.
        exact: the values must match exactly (ints, or defined special values only).
        signed_zero: an expected zero must have the same sign (the spec defines it).
        propagated: the part of ``atol`` that bounds the propagated rounding of computed
            statistics (:func:`statistic_rounding_error`; 0 where not applicable).
    """

    atol: float
    rtol: float
    spread: float = 0.0
    variants: tuple[str, ...] = ()
    exact: bool = False
    signed_zero: bool = False
    propagated: float = 0.0

    def to_json(self) -> dict:
        # by hand, not dataclasses.asdict (a recursive deep copy): bundles read it once per
        # output of every case to check content hashes
        d = {"atol": self.atol, "rtol": self.rtol, "spread": self.spread, "variants": list(self.variants),
             "exact": self.exact}
        if self.signed_zero:  # written only when set, so earlier cases keep their content hashes
            d["signed_zero"] = True
        if self.propagated:  # likewise: only where a statistic's rounding is propagated
            d["propagated"] = self.propagated
        return d

    @classmethod
    def from_json(cls, d: dict) -> Tolerance:
        # the fields set as the frozen dataclass's __init__ sets them (one object.__setattr__ each),
        # at a third of its cost: a run reads every output's tolerance of every case
        t = object.__new__(cls)
        t.__dict__.update(
            atol=float(d["atol"]),
            rtol=float(d["rtol"]),
            spread=float(d.get("spread", 0.0)),
            variants=tuple(d.get("variants", ())),
            exact=bool(d.get("exact", False)),
            signed_zero=bool(d.get("signed_zero", False)),
            propagated=float(d.get("propagated", 0.0)),
        )
        return t


def _finite_max_abs(a: np.ndarray) -> float:
    a = np.asarray(a, dtype=np.float64)
    fin = a[np.isfinite(a)]
    return float(np.max(np.abs(fin))) if fin.size else 0.0


def derive_tolerance(
    expected64: np.ndarray,
    variants: dict[str, np.ndarray],
    out_elem_type: int,
    *,
    scale: float | None = None,
    safety: float = DEFAULT_SAFETY,
    ulps: float = DEFAULT_ULPS,
    propagated=None,
) -> Tolerance:
    """Derive the tolerance of one output from its float64 oracle and legitimate variants.

    Args:
        expected64: the float64 oracle output (any shape).
        variants: name -> the same output computed by a legitimate algorithm at the
            precision the spec mandates (any float dtype, same shape).
        out_elem_type: ONNX element type of the output.
        scale: magnitude of the output's natural unit for the absolute ulp floor;
            default: largest finite |expected64| (1.0 if there is none).
        safety: multiplier on the measured spread.
        ulps: output-dtype ulps granted relative to |expected| and at ``scale``.
        propagated: optional bound (scalar or array, e.g. from
            :func:`statistic_rounding_error`) of the propagated rounding of computed
            statistics; its largest finite value is added to ``atol``.  Omitted: no term.

    Raises:
        ValueError: a variant disagrees with the oracle on shape or on which elements
            are NaN/infinite: that is a bug in the reference, not a tolerance question.
    """
    e = np.asarray(expected64, dtype=np.float64)
    spread = 0.0
    for name, v in variants.items():
        v = np.asarray(v).astype(np.float64)
        if v.shape != e.shape:
            raise ValueError(f"variant {name!r} has shape {v.shape}, oracle {e.shape}")
        fin = np.isfinite(e)
        if not np.isfinite(v[fin]).all():
            raise ValueError(f"variant {name!r} is not finite where the oracle is")
        if fin.any():
            spread = max(spread, float(np.max(np.abs(v[fin] - e[fin]))))
    eps = dtypes.eps(out_elem_type)
    if scale is None:
        scale = _finite_max_abs(e) or 1.0
    atol = safety * spread + ulps * eps * scale
    prop = 0.0 if propagated is None else _finite_max_abs(propagated)
    return Tolerance(atol=float(atol + prop), rtol=float(ulps * eps), spread=float(spread), variants=tuple(variants),
                     propagated=float(prop))


def exact_mean_rows(x, stat_elem: int) -> np.ndarray:
    """Rows whose mean every summation order computes exactly at ``stat_elem``'s precision.

    A constant row of ``n = 2^k`` copies of ``c`` whose multiples ``j * c`` (``j <= n``) are all
    representable: every partial sum of every order is exact, and so are ``sum / n``,
    ``sum * (1/n)`` and Welford's ``mean + (c - mean) / j``.  Such a mean carries no rounding
    error and :func:`statistic_rounding_error` grants none (``dm = 0``).

    Args:
        x: (rows, n) float64 values.
    """
    x = np.asarray(x, dtype=np.float64)
    rows, n = x.shape
    if rows == 0 or n == 0 or n & (n - 1):
        return np.zeros(rows, dtype=bool)
    c = x[:, :1]
    const = np.all(x == c, axis=1) & np.isfinite(c[:, 0])
    mult = c * np.arange(1, n + 1, dtype=np.float64)[None, :]
    with np.errstate(over="ignore"):
        rep = np.all(dtypes.round_to(mult, stat_elem).astype(np.float64) == mult, axis=1)
    return const & rep


def statistic_rounding_error(
    x,
    stat_elem: int,
    *,
    epsilon: float = 0.0,
    center: bool = True,
    form: str = "sqrt-eps",
    ulps: float = STAT_ULPS,
) -> np.ndarray:
    """Bound of the error of ``(x - m) * R(v)`` caused by statistics ``k`` ulps off (module docstring).

    Args:
        x: (rows, n) float64 values a row's statistics are computed from (one row per
            statistic group, as the kernel sees them).
        stat_elem: ONNX element type of the mandated precision of the statistics.
        epsilon: the epsilon of ``R``.
        center: the mean is subtracted (False: RMS forms, ``m = 0`` exactly, ``v`` is the
            mean square).
        form: ``"sqrt-eps"`` (``R(v) = 1/sqrt(v + eps)``), ``"sqrt-plus-eps"``
            (``1/(sqrt(v) + eps)``, MeanVarianceNormalization).
        ulps: ``k``.

    Returns:
        (rows, n) float64 bound per element, before the scale ``g`` (multiply by |g|);
        0 for rows that are not finite.
    """
    return statistic_rounding_errors(x, stat_elem, epsilon=epsilon, center=center, form=form, ulps=ulps)["y"]


def statistic_rounding_errors(
    x,
    stat_elem: int,
    *,
    epsilon: float = 0.0,
    center: bool = True,
    form: str = "sqrt-eps",
    ulps: float = STAT_ULPS,
) -> dict[str, np.ndarray]:
    """:func:`statistic_rounding_error` and the same bound for the statistics themselves.

    Returns:
        ``{"y": (rows, n) bound of |d(x - m) R(v)|, "mean": (rows,) dm, "var": (rows,)
        bound of |v' - v| (dv + dm^2), "inv": (rows,) bound of |R(v') - R(v)|}``; zeros for
        rows that are not finite.
    """
    x = np.asarray(x, dtype=np.float64)
    if x.ndim != 2:
        raise ValueError(f"x must be (rows, n), got shape {x.shape}")
    rows = x.shape[0]
    if x.size == 0:
        z = np.zeros(rows)
        return {"y": np.zeros_like(x), "mean": z, "var": z, "inv": z}
    u = dtypes.eps(stat_elem)
    sub = float(dtypes.finfo(stat_elem).smallest_subnormal)
    fin = np.isfinite(x).all(axis=1, keepdims=True)
    xs = np.where(fin, x, 0.0)
    if center:
        m0 = np.mean(xs, axis=1, keepdims=True)
        d = xs - m0
        d = d - np.mean(d, axis=1, keepdims=True)
        dm = ulps * np.maximum(u * np.mean(np.abs(xs), axis=1, keepdims=True), sub)
        dm = np.where(exact_mean_rows(xs, stat_elem)[:, None], 0.0, dm)
    else:
        d = xs
        dm = np.zeros((rows, 1))
    v = np.mean(d * d, axis=1, keepdims=True)
    if form == "sqrt-eps":
        def r(w):
            return 1.0 / np.sqrt(w + epsilon)
        dv = ulps * np.maximum(u * (v + epsilon), sub)
    elif form == "sqrt-plus-eps":
        def r(w):
            return 1.0 / (np.sqrt(w) + epsilon)
        dv = ulps * np.maximum(u * v, sub)
    else:
        raise ValueError(form)
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        r0 = r(v)
        y0 = d * r0
        worst = np.zeros_like(d)
        worst_r = np.zeros_like(v)
        for w in (np.maximum(v - dv, 0.0), v + dm * dm + dv):
            rw = r(w)
            worst_r = np.maximum(worst_r, np.abs(rw - r0))
            for sgn in (-1.0, 1.0):
                worst = np.maximum(worst, np.abs((d - sgn * dm) * rw - y0))

    def clean(a):
        return np.where(fin & np.isfinite(a), a, 0.0)

    return {"y": clean(worst), "mean": clean(dm)[:, 0], "var": clean(dv + dm * dm)[:, 0], "inv": clean(worst_r)[:, 0]}


@dataclass
class Check:
    """Result of comparing one output.

    Attributes:
        name: output name.
        passed: within tolerance, right shape and dtype, special values matched.
        reason: empty when passed, else why not (shape, dtype, NaN mismatch, values).
        max_abs_err: largest |actual - expected| over finite expected elements.
        ratio: largest error / (atol + rtol|e|) over elements (<= 1 passes; inf when
            a special value or shape/dtype does not match).
        worst_index: index of the element that gives ``ratio``.
        expected_at_worst / actual_at_worst: values there (float64).
        tolerance: the tolerance used.
    """

    name: str
    passed: bool
    reason: str = ""
    max_abs_err: float = 0.0
    ratio: float = 0.0
    worst_index: list[int] | None = None
    expected_at_worst: float | None = None
    actual_at_worst: float | None = None
    tolerance: Tolerance | None = field(default=None)

    def to_json(self) -> dict:
        d = {
            "name": self.name,
            "passed": self.passed,
            "reason": self.reason,
            "max_abs_err": _json_float(self.max_abs_err),
            "ratio": _json_float(self.ratio),
            "worst_index": self.worst_index,
            "expected_at_worst": _json_float(self.expected_at_worst),
            "actual_at_worst": _json_float(self.actual_at_worst),
            "tolerance": self.tolerance.to_json() if self.tolerance else None,
        }
        return d


def _json_float(x):
    if x is None:
        return None
    x = float(x)
    return x if x - x == 0.0 else encode_float(x)  # finite as it is (inf - inf and NaN are NaN): one call less


def compare_value(name: str, actual, expected, tol: Tolerance) -> Check:
    """Compare one backend output of any value kind with the expected value under ``tol``.

    ``expected`` is an ndarray (a tensor: :func:`compare`), a ``list`` of ndarrays (a sequence:
    same length, then element by element, each under ``tol``; the check is the worst element's,
    its ``worst_index`` prefixed by the element's position) or ``None`` (an absent optional:
    the backend must return ``None``).  A backend's ``tuple`` is taken as a sequence.  Where a
    tensor is expected, whatever the backend returned goes to :func:`compare` as before (a
    ``None`` or a list is then not an array of the expected dtype and shape).

    Returns:
        a :class:`Check`; never raises for bad ``actual``.  A sequence of the wrong length, a
        present value where the optional is absent (or the reverse), or a tensor where a
        sequence is expected fails with a message saying so.
    """
    if expected is None:
        if actual is None:
            return Check(name, True, tolerance=tol)
        return Check(name, False, f"expected an absent optional (None), got a {_kind_name(actual)}",
                     ratio=math.inf, tolerance=tol)
    if not isinstance(expected, list):  # a tensor: exactly as it always was compared
        return compare(name, actual, expected, tol)
    if actual is None:
        return Check(name, False, f"got an absent optional (None), expected a {_kind_name(expected)}",
                     ratio=math.inf, tolerance=tol)
    if isinstance(expected, list):
        if not isinstance(actual, (list, tuple)):
            return Check(name, False, f"expected a sequence of {len(expected)} tensor(s), got a {_kind_name(actual)}",
                         ratio=math.inf, tolerance=tol)
        if len(actual) != len(expected):
            return Check(name, False, f"sequence of length {len(actual)} != expected length {len(expected)}",
                         ratio=math.inf, tolerance=tol)
        worst = Check(name, True, tolerance=tol)
        for k, (a, e) in enumerate(zip(actual, expected)):
            if isinstance(a, (list, tuple)) or a is None:
                chk = Check(name, False, f"expected a tensor, got a {_kind_name(a)}", ratio=math.inf, tolerance=tol)
            else:
                chk = compare(f"{name}[{k}]", a, e, tol)
            if not chk.passed or chk.ratio > worst.ratio:
                chk.name = name
                chk.reason = f"element {k}: {chk.reason}" if chk.reason else ""
                chk.worst_index = [k] + list(chk.worst_index or [])
                if not chk.passed:
                    return chk
                worst = chk
        return worst


def _strings(a: np.ndarray) -> np.ndarray:
    """An ONNX STRING tensor in one numpy form: an object array of ``str`` (``bytes`` decoded as
    UTF-8, undecodable bytes kept as they are, so they compare unequal to any text)."""
    out = np.empty(a.shape, dtype=object)
    flat = out.reshape(-1)
    for k, x in enumerate(a.reshape(-1)):
        if isinstance(x, (bytes, np.bytes_)):
            try:
                x = bytes(x).decode("utf-8")
            except UnicodeDecodeError:
                x = bytes(x)
        flat[k] = str(x) if isinstance(x, (str, np.str_)) else x
    return out


def _kind_name(v) -> str:
    if v is None:
        return "absent optional (None)"
    if isinstance(v, (list, tuple)):
        return f"sequence of {len(v)}"
    return f"tensor ({type(v).__name__})"


def compare(name: str, actual, expected: np.ndarray, tol: Tolerance) -> Check:
    """Compare one backend output with the expected output under ``tol``.

    Args:
        name: output name, for messages.
        actual: what the backend returned (anything ``np.asarray`` takes).
        expected: expected output in the output element type.
        tol: the output's tolerance.

    Returns:
        a :class:`Check`; never raises for bad ``actual``.
    """
    expected = np.asarray(expected)
    try:
        actual = np.asarray(actual)
    except Exception as exc:  # noqa: BLE001 - a backend may return anything
        return Check(name, False, f"output is not an array: {exc}", ratio=math.inf, tolerance=tol)
    if expected.dtype.kind in "OUS" and actual.dtype.kind in "OUS" and actual.dtype != expected.dtype:
        # ONNX STRING has several numpy forms (object arrays of str, str_ arrays): one type
        expected, actual = _strings(expected), _strings(actual)
    if actual.dtype != expected.dtype:
        return Check(name, False, f"dtype {actual.dtype} != expected {expected.dtype}", ratio=math.inf, tolerance=tol)
    if actual.shape != expected.shape:
        return Check(
            name, False, f"shape {list(actual.shape)} != expected {list(expected.shape)}", ratio=math.inf, tolerance=tol
        )
    if expected.size == 0:
        return Check(name, True, tolerance=tol)
    kind = expected.dtype.kind
    exact_kind = kind in "biuUS"  # integers, booleans, fixed-width strings: compared exactly below
    if (exact_kind or expected.dtype in _FLOAT_DTYPES) and actual.tobytes() == expected.tobytes():
        # Bit for bit the expected output (most outputs of a run): every element equal (for a float,
        # or the same NaN, zeros of the same sign), so the paths below give this check without the
        # element-wise != and its reduction (exact kinds) or converting either array to float64
        # (floats: every error and ratio 0, the worst at the first element).
        if exact_kind:
            return Check(name, True, tolerance=tol)
        first = float(expected.reshape(-1)[0])
        return Check(name, True, "", max_abs_err=0.0, ratio=0.0, worst_index=[0] * expected.ndim,
                     expected_at_worst=first, actual_at_worst=first, tolerance=tol)
    if kind in "biuUSO":
        # integers, booleans, strings: exact
        bad = actual != expected
        if not bad.any():
            return Check(name, True, tolerance=tol)
        idx = np.unravel_index(int(np.argmax(bad)), expected.shape)
        return Check(name, False, f"{int(bad.sum())} of {expected.size} element(s) differ (exact comparison); first at "
                                  f"{list(map(int, idx))}: expected {expected[idx]!r}, got {actual[idx]!r}",
                     ratio=math.inf, worst_index=[int(i) for i in idx], tolerance=tol)
    if expected.dtype.kind == "c":
        # real and imaginary parts, each under the tolerance (a last axis of 2: [..., 0] real,
        # [..., 1] imaginary); comparing moduli let a conjugate or a rotated value pass
        expected = np.stack([expected.real, expected.imag], axis=-1)
        actual = np.stack([actual.real, actual.imag], axis=-1)
    a = np.asarray(actual, dtype=np.float64)
    e = np.asarray(expected, dtype=np.float64)
    if (a == e).all() and not (tol.signed_zero and _zero_sign_differs(a, e).any()):
        # Every element equal (so no NaN, and an infinity only where the same one is expected):
        # the check both paths below give (every error and ratio 0, the worst at the first
        # element), in a fifth of the numpy calls; most outputs of a run are exact.
        idx = (0,) * e.ndim
        return Check(name, True, "", max_abs_err=0.0, ratio=0.0, worst_index=[0] * e.ndim,
                     expected_at_worst=float(e[idx]), actual_at_worst=float(a[idx]), tolerance=tol)
    if tol.atol > 0 and not tol.exact:
        # Fast path: no NaN or infinity on either side and the bound atol + rtol|e| > 0 everywhere,
        # where the full path below gives the same numbers in a third of the numpy calls (a run
        # compares every output of every case).
        if (np.isfinite(a).all() and np.isfinite(e).all()
                and not (tol.signed_zero and _zero_sign_differs(a, e).any())):
            err = np.abs(a - e)
            with np.errstate(over="ignore"):  # a huge error over a subnormal atol: the ratio is inf, as meant
                ratio = err / (tol.atol + tol.rtol * np.abs(e))
            return _within(name, a, e, err, ratio, tol)
    return _compare_float(name, a, e, tol)


#: the numpy dtypes of ONNX's floating-point types (numpy's and ml_dtypes'), where :func:`compare`
#: takes an output equal to the expected one bit for bit as it is
_FLOAT_DTYPES = frozenset(dtypes.np_dtype(t) for t in dtypes.ALL_FLOAT_TYPES)


def _compare_float(name: str, a: np.ndarray, e: np.ndarray, tol: Tolerance) -> Check:
    """:func:`compare` of float64 arrays of one shape, special values and all (the general path)."""
    nan_e, nan_a = np.isnan(e), np.isnan(a)
    inf_e = np.isinf(e)
    special_bad = (nan_e != nan_a) | (inf_e & (a != e)) | (~nan_e & ~inf_e & ~np.isfinite(a))
    if special_bad.any():
        idx = np.unravel_index(int(np.argmax(special_bad)), e.shape)
        return Check(
            name,
            False,
            f"{int(special_bad.sum())} element(s) differ in NaN/Inf, first at {list(map(int, idx))}: "
            f"expected {e[idx]!r}, got {a[idx]!r}",
            max_abs_err=math.inf,
            ratio=math.inf,
            worst_index=[int(i) for i in idx],
            expected_at_worst=float(e[idx]),
            actual_at_worst=float(a[idx]),
            tolerance=tol,
        )
    if tol.signed_zero:
        zero_bad = _zero_sign_differs(a, e)
        if zero_bad.any():
            idx = np.unravel_index(int(np.argmax(zero_bad)), e.shape)
            return Check(name, False, f"{int(zero_bad.sum())} zero(s) of the wrong sign, first at "
                                      f"{list(map(int, idx))}: expected {e[idx]!r}, got {a[idx]!r}",
                         ratio=math.inf, worst_index=[int(i) for i in idx], expected_at_worst=float(e[idx]),
                         actual_at_worst=float(a[idx]), tolerance=tol)
    fin = np.isfinite(e)
    err = np.where(fin, np.abs(a - np.where(fin, e, 0.0)), 0.0)
    if tol.exact:
        bound = np.zeros_like(e)
    else:
        bound = tol.atol + tol.rtol * np.abs(np.where(fin, e, 0.0))
    with np.errstate(divide="ignore", invalid="ignore"):
        r = np.where(err == 0, 0.0, err / bound)
    return _within(name, a, e, err, r, tol)


def _zero_sign_differs(a: np.ndarray, e: np.ndarray) -> np.ndarray:
    """Where an expected zero has a zero of the other sign (float64 arrays of one shape)."""
    return (e == 0) & (a == 0) & (np.signbit(e) != np.signbit(a))


def _within(name: str, a: np.ndarray, e: np.ndarray, err: np.ndarray, r: np.ndarray, tol: Tolerance) -> Check:
    """The :class:`Check` of finite errors ``err`` = |a - e| (0 where ``e`` is not finite) and their
    ratios ``r`` to the bound (float64 arrays of one shape)."""
    flat = int(r.argmax())
    # the index np.unravel_index gives, in Python (a third of _within's cost), and the elements
    # there by their C-order position, which argmax's is (``.flat``: any layout)
    idx = []
    rest = flat
    for d in reversed(e.shape):
        rest, i = divmod(rest, d)
        idx.append(i)
    idx.reverse()
    ratio = float(r.flat[flat])
    passed = ratio <= 1.0
    ew, aw = e.flat[flat], a.flat[flat]
    reason = ""
    if not passed:
        n_bad = int((r > 1.0).sum())
        reason = (
            f"{n_bad} of {e.size} element(s) out of tolerance; worst at {idx}: "
            f"expected {ew:.9g}, got {aw:.9g}, |err| {err.flat[flat]:.3g} > "
            f"atol {tol.atol:.3g} + rtol {tol.rtol:.3g}*|e| ({ratio:.3g}x)"
        )
    return Check(
        name,
        passed,
        reason,
        max_abs_err=float(err.max()),
        ratio=ratio,
        worst_index=idx,
        expected_at_worst=float(ew),
        actual_at_worst=float(aw),
        tolerance=tol,
    )
