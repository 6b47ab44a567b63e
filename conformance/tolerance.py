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
from dataclasses import asdict, dataclass, field

import numpy as np

from . import dtypes

#: Multiplier on the measured spread of legitimate variants.
DEFAULT_SAFETY = 4.0
#: Output-dtype ulps always granted (relative and as an absolute floor at ``scale``).
DEFAULT_ULPS = 4.0


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
    """

    atol: float
    rtol: float
    spread: float = 0.0
    variants: tuple[str, ...] = ()
    exact: bool = False
    signed_zero: bool = False

    def to_json(self) -> dict:
        d = asdict(self)
        d["variants"] = list(self.variants)
        if not self.signed_zero:  # written only when set, so earlier cases keep their content hashes
            del d["signed_zero"]
        return d

    @classmethod
    def from_json(cls, d: dict) -> Tolerance:
        return cls(
            atol=float(d["atol"]),
            rtol=float(d["rtol"]),
            spread=float(d.get("spread", 0.0)),
            variants=tuple(d.get("variants", ())),
            exact=bool(d.get("exact", False)),
            signed_zero=bool(d.get("signed_zero", False)),
        )


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
    return Tolerance(atol=float(atol), rtol=float(ulps * eps), spread=float(spread), variants=tuple(variants))


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
    if math.isnan(x):
        return "nan"
    if math.isinf(x):
        return "inf" if x > 0 else "-inf"
    return x


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
    if actual.dtype != expected.dtype:
        return Check(name, False, f"dtype {actual.dtype} != expected {expected.dtype}", ratio=math.inf, tolerance=tol)
    if actual.shape != expected.shape:
        return Check(
            name, False, f"shape {list(actual.shape)} != expected {list(expected.shape)}", ratio=math.inf, tolerance=tol
        )
    if expected.size == 0:
        return Check(name, True, tolerance=tol)
    if expected.dtype.kind in "biuUSO":
        # integers, booleans, strings: exact
        bad = actual != expected
        if not bad.any():
            return Check(name, True, tolerance=tol)
        idx = np.unravel_index(int(np.argmax(bad)), expected.shape)
        return Check(name, False, f"{int(bad.sum())} of {expected.size} element(s) differ (exact comparison); first at "
                                  f"{list(map(int, idx))}: expected {expected[idx]!r}, got {actual[idx]!r}",
                     ratio=math.inf, worst_index=[int(i) for i in idx], tolerance=tol)
    if expected.dtype.kind == "c":
        expected, actual = np.abs(expected), np.abs(actual)
    a = actual.astype(np.float64)
    e = expected.astype(np.float64)
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
        zero_bad = (e == 0) & (a == 0) & (np.signbit(e) != np.signbit(a))
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
    flat = int(np.argmax(r))
    idx = np.unravel_index(flat, e.shape)
    ratio = float(r[idx])
    passed = bool(ratio <= 1.0)
    reason = ""
    if not passed:
        n_bad = int((r > 1.0).sum())
        reason = (
            f"{n_bad} of {e.size} element(s) out of tolerance; worst at {list(map(int, idx))}: "
            f"expected {e[idx]:.9g}, got {a[idx]:.9g}, |err| {err[idx]:.3g} > "
            f"atol {tol.atol:.3g} + rtol {tol.rtol:.3g}*|e| ({ratio:.3g}x)"
        )
    return Check(
        name,
        passed,
        reason,
        max_abs_err=float(np.max(err)),
        ratio=ratio,
        worst_index=[int(i) for i in idx],
        expected_at_worst=float(e[idx]),
        actual_at_worst=float(a[idx]),
        tolerance=tol,
    )
