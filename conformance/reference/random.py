"""Statistical checks of ai.onnx's random operators: RandomNormal, RandomUniform (1, 22),
RandomNormalLike, RandomUniformLike (1, 22), Bernoulli (15, 22) and Multinomial (7, 22).

A random output cannot be compared value by value: each case names one of the ``check_*``
functions of this module (:attr:`conformance.case.Case.check`), which judges the outputs of
one run in two parts.

**Exact part** (no false alarm): the output's shape and element type and its support.

* RandomNormal / RandomUniform: shape = the ``shape`` attribute; *Like: the input's shape.
  Type: ``dtype`` where given, else FLOAT (RandomNormal / RandomUniform: "Default is
  TensorProto::FLOAT") or the input's type (*Like, Bernoulli: "if not specified, we will use
  the data type of the input tensor"); Multinomial: ``dtype``, else int32 (the schema's
  default 6).  The defaults are read from the schema (:func:`conformance.opspec.op_spec`).
* Support: RandomNormal: finite values; RandomUniform: ``low <= y <= high`` (the text says
  "the range by `low` and `high`" and calls ``high`` the "Upper boundary of the output
  values"; it does not say half-open, and a value drawn in [low, high) and rounded to float16
  can round up to ``high``: the closed range is what every reading and every rounding
  gives); Bernoulli: every value 0 or 1, exactly 0 where p = 0 and exactly 1 where p = 1;
  Multinomial: every index in ``[0, class_size)``, never a class whose logit is -inf.

**Statistical part**, each test with a stated false-alarm probability; the per-case total is
at most :data:`FALSE_ALARM` (``1e-6``, Bonferroni over the tests of one case):

* the empirical CDF against the distribution's CDF by the Dvoretzky-Kiefer-Wolfowitz
  inequality with Massart's constant, ``P(sup |F_n - F| > eps) <= 2 exp(-2 n eps^2)`` (exact
  for every ``n`` and every distribution, continuous or discrete: no special function, no
  asymptotics);
* the mean and the spread, which the CDF test at n = 16384 sees only for shifts above ~0.05
  sigma: RandomNormal: ``sqrt(n) (mean - mu) / sigma`` is exactly standard normal (threshold
  from ``math.erfc``) and ``sum((y - mu)^2) / sigma^2`` is chi-squared with n degrees of
  freedom (Laurent and Massart's exact tail bounds, Ann. Statist. 28(5), 2000, Lemma 1:
  ``P(X - n >= 2 sqrt(n x) + 2x) <= e^-x``, ``P(n - X >= 2 sqrt(n x)) <= e^-x``);
  RandomUniform: Hoeffding's inequality for the mean (values in [low, high]) and for the mean
  of ``(y - (low + high) / 2)^2`` (in ``[0, (high - low)^2 / 4]``, expectation
  ``(high - low)^2 / 12``);
* Bernoulli: Hoeffding's inequality for ``sum(y - p)`` and for ``sum((2p - 1)(y - p))``
  (the second sees a kernel that draws 1 with probability ``1 - p``, which the first cannot
  when the p average 1/2);
* Multinomial: DKW on each row's distribution over the classes (Bonferroni over the rows),
  rows with equal logits pooled (a batch of identical rows with ``sample_size`` 1 is one
  sample of ``batch_size`` draws).

**Precision slack.**  The tests compare with the exact distribution of the parameters as
the model stores them (float32 attributes, the input as fed).  A kernel that draws in
higher precision and rounds to a 16-bit type, or computes ``mean + scale * z`` in the output
type, is legitimate: each value is then within :data:`RADIUS_ULPS` ulps of a value of the
exact distribution, ``|y - x| <= RADIUS_ULPS * eps_T * (|mu| + |y - mu|)`` (``eps_T`` the
output type's machine epsilon), and each bound is widened by the most that can move the
statistic (CDF: ``density * radius``, at most ``RADIUS_ULPS * eps_T * (phi(0) |mu| / sigma +
phi(1))`` for the normal since ``phi(z)|z| <= phi(1)``; mean and second moment: computed
from the observed values).  Multinomial's probabilities are compared with a slack of
``(class_size + 4) * eps`` on the CDF (softmax computed in the input's precision, float32
for 16-bit inputs: the project's mandated precision); Bernoulli's with ``2^-23`` per element
(a uniform drawn on a float32 grid).  The normal CDF is evaluated with Abramowitz and Stegun
7.1.26 (absolute error below 1.5e-7, added to the slack).

**Across runs (not checked).**  The text ties ``seed`` to no algorithm ("may not produce the
same values in different implementations (even if a seed is specified)", Bernoulli), and
says nothing of two runs of one session with a seed: onnxruntime's kernels keep their
generator and draw on, onnx.reference re-seeds each run.  A seeded case has two data sets,
each judged on its own: the second run must be a sample of the distribution too (a kernel
that repeats the first run's values passes, one that breaks on the second run does not).

**Contested: Bernoulli.**  The text: "an output of 1 is produced with probability p".  The
schema's function body draws ``X_random = RandomUniformLike(input)`` and outputs
``Cast(Greater(X_random, input))``: 1 with probability ``1 - p``.  The check follows the
text; when the result fits the body's reading instead, its message says so
(:data:`BERNOULLI_CONTESTED`).
"""

from __future__ import annotations

import math
from functools import lru_cache

import numpy as np

from conformance import dtypes
from conformance.opspec import op_spec

#: False-alarm probability of one check call (one data set), all its tests together.
FALSE_ALARM = 1e-6
#: Rounding radius of a legitimate kernel's values, in ulps of the output type (module docstring).
RADIUS_ULPS = 2.0
#: Absolute error of :func:`normal_cdf` (Abramowitz and Stegun 7.1.26: 1.5e-7), rounded up.
CDF_ERROR = 2e-7
#: Per-element bias of a Bernoulli draw ``u < p`` with ``u`` on a float32 grid.
BERNOULLI_GRID = 2.0 ** -23

#: The operators of this module.
OPS = ("RandomNormal", "RandomUniform", "RandomNormalLike", "RandomUniformLike", "Bernoulli", "Multinomial")
CHECK_NORMAL = "conformance.reference.random:check_random_normal"
CHECK_UNIFORM = "conformance.reference.random:check_random_uniform"
CHECK_NORMAL_LIKE = "conformance.reference.random:check_random_normal_like"
CHECK_UNIFORM_LIKE = "conformance.reference.random:check_random_uniform_like"
CHECK_BERNOULLI = "conformance.reference.random:check_bernoulli"
CHECK_MULTINOMIAL = "conformance.reference.random:check_multinomial"
#: Case.check per operator.
CHECKS = dict(zip(OPS, (CHECK_NORMAL, CHECK_UNIFORM, CHECK_NORMAL_LIKE, CHECK_UNIFORM_LIKE, CHECK_BERNOULLI,
                        CHECK_MULTINOMIAL)))

BERNOULLI_CONTESTED = ("Bernoulli's text draws 1 'with probability p'; its schema function body "
                       "(Greater(RandomUniformLike(input), input)) draws 1 with probability 1 - p. "
                       "The check follows the text and names the body's reading when a result fits it")


# ----------------------------------------------------------------------------- schema defaults
@lru_cache(maxsize=None)
def default(op: str, name: str):
    """The schema's default of attribute ``name`` of ``op`` (its newest version; the random
    operators' defaults are the same in every version), ``None`` where it has none."""
    spec = op_spec(op)
    a = spec.versions[max(spec.since_versions)].attributes.get(name)
    return None if a is None else a.default


def _f32(v) -> float:
    """A float attribute as the model stores it (float32)."""
    return float(np.float32(v))


def expected_elem_type(op: str, attrs: dict, input_dtype=None) -> int:
    """The ONNX element type the output must have (module docstring, exact part).

    Args:
        op: one of :data:`OPS`.
        attrs: the node's attributes as written (defaults not filled in).
        input_dtype: the input's numpy dtype (*Like, Bernoulli).

    Raises:
        KeyError: ``op`` is not a random operator.
    """
    if "dtype" in attrs and attrs["dtype"] is not None:
        return int(attrs["dtype"])
    if op in ("RandomNormal", "RandomUniform", "Multinomial"):
        return int(default(op, "dtype"))
    if op in ("RandomNormalLike", "RandomUniformLike", "Bernoulli"):
        return dtypes.elem_type(input_dtype)
    raise KeyError(op)


# ----------------------------------------------------------------------------- distributions
_P = 0.3275911
_A = (0.254829592, -0.284496736, 1.421413741, -1.453152027, 1.061405429)


def normal_cdf(z) -> np.ndarray:
    """Standard normal CDF ``Phi(z)`` (float64 array), Abramowitz and Stegun 7.1.26 for erf:
    absolute error below :data:`CDF_ERROR`; vectorized."""
    z = np.asarray(z, dtype=np.float64)
    x = np.abs(z) / math.sqrt(2.0)
    t = 1.0 / (1.0 + _P * x)
    poly = t * (_A[0] + t * (_A[1] + t * (_A[2] + t * (_A[3] + t * _A[4]))))
    erf = 1.0 - poly * np.exp(-x * x)
    return np.where(z >= 0, 0.5 * (1.0 + erf), 0.5 * (1.0 - erf))


def dkw_epsilon(n: int, alpha: float) -> float:
    """``eps`` with ``P(sup |F_n - F| > eps) <= alpha`` for ``n`` i.i.d. draws
    (Dvoretzky-Kiefer-Wolfowitz with Massart's constant): ``sqrt(ln(2 / alpha) / (2 n))``."""
    return math.sqrt(math.log(2.0 / alpha) / (2.0 * max(n, 1)))


def hoeffding(n_or_sumsq: float, alpha: float) -> float:
    """``t`` with ``P(|sum X_i - E| >= t) <= alpha`` for independent ``X_i`` in intervals whose
    squared widths sum to ``n_or_sumsq``: ``sqrt(sumsq ln(2 / alpha) / 2)``."""
    return math.sqrt(max(n_or_sumsq, 0.0) * math.log(2.0 / alpha) / 2.0)


@lru_cache(maxsize=None)
def normal_quantile_two_sided(alpha: float) -> float:
    """``z`` with ``P(|Z| > z) = alpha`` for a standard normal Z (``math.erfc`` and bisection)."""
    lo, hi = 0.0, 40.0
    for _ in range(200):
        mid = 0.5 * (lo + hi)
        if math.erfc(mid / math.sqrt(2.0)) > alpha:
            lo = mid
        else:
            hi = mid
    return hi


def chi2_bounds(n: int, alpha: float) -> tuple[float, float]:
    """``(lo, hi)`` with ``P(X < lo) + P(X > hi) <= alpha`` for X chi-squared with n degrees of
    freedom (Laurent and Massart, Lemma 1, ``x = ln(2 / alpha)`` on each side)."""
    x = math.log(2.0 / alpha)
    return n - 2.0 * math.sqrt(n * x), n + 2.0 * math.sqrt(n * x) + 2.0 * x


def ks_distance(y_sorted: np.ndarray, cdf_values: np.ndarray) -> float:
    """``sup_x |F_n(x) - F(x)|`` for sorted draws and ``F`` at them (continuous F; ties
    allowed): ``max(i/n - F(y_i), F(y_i) - (i-1)/n)``."""
    n = y_sorted.size
    if n == 0:
        return 0.0
    i = np.arange(1, n + 1, dtype=np.float64)
    return float(max(np.max(i / n - cdf_values), np.max(cdf_values - (i - 1) / n)))


def _eps_of(y: np.ndarray) -> float:
    return dtypes.eps(y.dtype)


# ----------------------------------------------------------------------------- exact part
def _shape_and_type(y: np.ndarray, shape, elem: int) -> str | None:
    """A failure message, or ``None`` when ``y`` has ``shape`` and element type ``elem``."""
    try:
        got = dtypes.elem_type(y.dtype)
    except (KeyError, TypeError, ValueError):
        got = None
    if got != elem:
        return (f"output element type {y.dtype} (ONNX {got}) differs from the expected "
                f"{dtypes.type_name(elem)} (ONNX {elem}): dtype attribute / input type ignored")
    if tuple(y.shape) != tuple(int(d) for d in shape):
        return f"output shape {list(y.shape)} differs from the expected {list(map(int, shape))}"
    return None


# ----------------------------------------------------------------------------- judges
def judge_normal(y: np.ndarray, mean: float, scale: float, alpha: float = FALSE_ALARM) -> tuple[bool, str]:
    """Judge draws ``y`` (any float dtype, any shape) of N(mean, scale^2).

    Tests (each at ``alpha / 3``): DKW on the CDF, the standardized mean (exactly normal), the
    sum of squares about ``mean`` (chi-squared, Laurent-Massart), each widened by the
    rounding slack of the output type (module docstring).  Every value must be finite.

    Returns:
        ``(passed, message)``.
    """
    y64 = np.asarray(y).astype(np.float64).reshape(-1)
    n = y64.size
    if not np.all(np.isfinite(y64)):
        k = int(np.sum(~np.isfinite(y64)))
        return False, f"{k} non-finite value(s) among {n} normal draws (first {y64[~np.isfinite(y64)][0]!r})"
    if n == 0:
        return True, "no draws (zero-size output)"
    if scale <= 0:
        return True, f"scale {scale} <= 0: no distribution test"
    a = alpha / 3.0
    e = RADIUS_ULPS * _eps_of(np.asarray(y))
    mu, sigma = float(mean), float(scale)
    # CDF
    z = (np.sort(y64) - mu) / sigma
    d = ks_distance(z, normal_cdf(z))
    slack = e * (0.3989422804014327 * abs(mu) / sigma + 0.24197072451914337) + CDF_ERROR
    eps = dkw_epsilon(n, a)
    if d > eps + slack:
        return False, (f"Kolmogorov distance {d:.4f} of {n} draws from N({mu:g}, {sigma:g}^2) exceeds "
                       f"{eps + slack:.4f} (DKW, false alarm {a:.2g})")
    dev = np.abs(y64 - mu)
    u = e * (abs(mu) + dev) * (1.0 + e)
    # mean
    zq = normal_quantile_two_sided(a)
    m = float(np.mean(y64))
    tol = zq * sigma / math.sqrt(n) + float(np.mean(u))
    if abs(m - mu) > tol:
        return False, (f"mean {m:.6g} of {n} draws differs from {mu:g} by more than {tol:.4g} "
                       f"({zq:.2f} sigma/sqrt(n), false alarm {a:.2g})")
    # spread
    s = float(np.sum(dev * dev)) / (sigma * sigma)
    s_slack = float(np.sum(u * (2.0 * dev + u))) / (sigma * sigma)
    lo, hi = chi2_bounds(n, a)
    if s < lo - s_slack or s > hi + s_slack:
        return False, (f"spread: mean squared deviation {s / n:.5f} sigma^2 of {n} draws outside "
                       f"[{(lo - s_slack) / n:.5f}, {(hi + s_slack) / n:.5f}] (chi-squared, false alarm {a:.2g})")
    return True, f"N({mu:g}, {sigma:g}^2): {n} draws, D={d:.4f}, mean {m:.4g}, spread {math.sqrt(s / n):.4f} sigma"


def judge_uniform(y: np.ndarray, low: float, high: float, alpha: float = FALSE_ALARM) -> tuple[bool, str]:
    """Judge draws ``y`` of the uniform distribution on ``[low, high]``.

    Support exactly (``low <= y <= high``); then (each at ``alpha / 3``) DKW on the CDF,
    Hoeffding on the mean and on the mean squared distance from the midpoint, widened by the
    rounding slack of the output type.

    Returns:
        ``(passed, message)``.
    """
    y64 = np.asarray(y).astype(np.float64).reshape(-1)
    n = y64.size
    lo, hi = float(low), float(high)
    out = ~((y64 >= lo) & (y64 <= hi))
    if out.any():
        v = y64[out]
        finite = y64[~np.isnan(y64)]
        lo_seen, hi_seen = (float(finite.min()), float(finite.max())) if finite.size else (np.nan, np.nan)
        return False, (f"{int(out.sum())} of {n} value(s) outside [{lo:g}, {hi:g}]: first {v[0]!r}, "
                       f"min {lo_seen!r}, max {hi_seen!r}")
    if n == 0:
        return True, "no draws (zero-size output)"
    w = hi - lo
    if w <= 0:
        return True, f"degenerate range [{lo:g}, {hi:g}]: support only"
    a = alpha / 3.0
    e = RADIUS_ULPS * _eps_of(np.asarray(y))
    r = e * max(abs(lo), abs(hi)) * (1.0 + e)
    ys = np.sort(y64)
    d = ks_distance(ys, (ys - lo) / w)
    eps = dkw_epsilon(n, a) + r / w
    if d > eps:
        return False, (f"Kolmogorov distance {d:.4f} of {n} draws from U[{lo:g}, {hi:g}] exceeds {eps:.4f} "
                       f"(DKW, false alarm {a:.2g})")
    mid = 0.5 * (lo + hi)
    m = float(np.mean(y64))
    tol = hoeffding(n, a) * w / n + r
    if abs(m - mid) > tol:
        return False, (f"mean {m:.6g} of {n} draws differs from {mid:g} by more than {tol:.4g} "
                       f"(Hoeffding, false alarm {a:.2g})")
    dev = np.abs(y64 - mid)
    q = float(np.mean(dev * dev))
    tol2 = hoeffding(n, a) * (w * w / 4.0) / n + r * (w + r)
    if abs(q - w * w / 12.0) > tol2:
        return False, (f"spread: mean squared distance {q:.6g} from the midpoint differs from (high-low)^2/12 = "
                       f"{w * w / 12.0:.6g} by more than {tol2:.3g} (Hoeffding, false alarm {a:.2g})")
    return True, f"U[{lo:g}, {hi:g}]: {n} draws, D={d:.4f}, mean {m:.4g}"


def bernoulli_statistics(y64: np.ndarray, p: np.ndarray, alpha: float) -> tuple[bool, str]:
    """Hoeffding tests of ``sum(y - p)`` and ``sum((2p - 1)(y - p))`` (each at ``alpha / 2``), with
    :data:`BERNOULLI_GRID` bias per element.  Returns ``(passed, message)``."""
    n = p.size
    a = alpha / 2.0
    s1 = float(np.sum(y64 - p))
    t1 = hoeffding(n, a) + n * BERNOULLI_GRID
    w = 2.0 * p - 1.0
    s2 = float(np.sum(w * (y64 - p)))
    t2 = hoeffding(float(np.sum(w * w)), a) + float(np.sum(np.abs(w))) * BERNOULLI_GRID
    if abs(s1) > t1:
        return False, f"sum(y - p) = {s1:.1f} over {n} draws exceeds {t1:.1f} (Hoeffding, false alarm {a:.2g})"
    if abs(s2) > t2:
        return False, f"sum((2p-1)(y - p)) = {s2:.1f} over {n} draws exceeds {t2:.1f} (Hoeffding, false alarm {a:.2g})"
    return True, f"sum(y - p) = {s1:.1f} (bound {t1:.1f}), sum((2p-1)(y-p)) = {s2:.1f} (bound {t2:.1f})"


# ----------------------------------------------------------------------------- checks (Case.check)
def _normal_params(op: str, attrs: dict) -> tuple[float, float]:
    return (_f32(attrs.get("mean", default(op, "mean"))), _f32(attrs.get("scale", default(op, "scale"))))


def _uniform_params(op: str, attrs: dict) -> tuple[float, float]:
    return (_f32(attrs.get("low", default(op, "low"))), _f32(attrs.get("high", default(op, "high"))))


def _generated(op: str, outputs: dict, shape, elem: int, judge) -> tuple[bool, str]:
    y = np.asarray(outputs["output"])
    bad = _shape_and_type(y, shape, elem)
    if bad:
        return False, bad
    return judge(y)


def check_random_normal(inputs: dict, outputs: dict, attrs: dict) -> tuple[bool, str]:
    """RandomNormal (1, 22): output of the ``shape`` attribute and type ``dtype`` (default FLOAT),
    values N(mean, scale^2) (:func:`judge_normal`).

    Args:
        inputs: none (the operator has no input).
        outputs: ``{"output": array}``.
        attrs: the node's attributes as written.

    Returns:
        ``(passed, message)``.
    """
    mean, scale = _normal_params("RandomNormal", attrs)
    return _generated("RandomNormal", outputs, attrs["shape"], expected_elem_type("RandomNormal", attrs),
                      lambda y: judge_normal(y, mean, scale))


def check_random_uniform(inputs: dict, outputs: dict, attrs: dict) -> tuple[bool, str]:
    """RandomUniform (1, 22): output of the ``shape`` attribute and type ``dtype`` (default
    FLOAT), values uniform on [low, high] (:func:`judge_uniform`).  Returns ``(passed, message)``."""
    low, high = _uniform_params("RandomUniform", attrs)
    return _generated("RandomUniform", outputs, attrs["shape"], expected_elem_type("RandomUniform", attrs),
                      lambda y: judge_uniform(y, low, high))


def check_random_normal_like(inputs: dict, outputs: dict, attrs: dict) -> tuple[bool, str]:
    """RandomNormalLike (1, 22): output of the input's shape, type ``dtype`` or the input's,
    values N(mean, scale^2).  Returns ``(passed, message)``."""
    x = np.asarray(inputs["input"])
    mean, scale = _normal_params("RandomNormalLike", attrs)
    return _generated("RandomNormalLike", outputs, x.shape, expected_elem_type("RandomNormalLike", attrs, x.dtype),
                      lambda y: judge_normal(y, mean, scale))


def check_random_uniform_like(inputs: dict, outputs: dict, attrs: dict) -> tuple[bool, str]:
    """RandomUniformLike (1, 22): output of the input's shape, type ``dtype`` or the input's,
    values uniform on [low, high].  Returns ``(passed, message)``."""
    x = np.asarray(inputs["input"])
    low, high = _uniform_params("RandomUniformLike", attrs)
    return _generated("RandomUniformLike", outputs, x.shape,
                      expected_elem_type("RandomUniformLike", attrs, x.dtype), lambda y: judge_uniform(y, low, high))


def check_bernoulli(inputs: dict, outputs: dict, attrs: dict) -> tuple[bool, str]:
    """Bernoulli (15, 22): output of the input's shape and type ``dtype`` or the input's; every
    value 0 or 1 (False/True for bool), 0 where p = 0 and 1 where p = 1; ``sum(y - p)`` and
    ``sum((2p - 1)(y - p))`` within Hoeffding's bounds (:func:`bernoulli_statistics`).  When a
    result fails and fits the function body's reading (1 with probability ``1 - p``), the
    message says so (module docstring, contested).

    Args:
        inputs: ``{"input": p}`` (float16 / bfloat16 / float / double, values in [0, 1]).
        outputs: ``{"output": array}``.
        attrs: the node's attributes as written.

    Returns:
        ``(passed, message)``.
    """
    x = np.asarray(inputs["input"])
    y = np.asarray(outputs["output"])
    bad = _shape_and_type(y, x.shape, expected_elem_type("Bernoulli", attrs, x.dtype))
    if bad:
        return False, bad
    p = x.astype(np.float64).reshape(-1)
    y64 = y.astype(np.float64).reshape(-1)
    odd = ~((y64 == 0) | (y64 == 1))
    if odd.any():
        return False, f"{int(odd.sum())} value(s) neither 0 nor 1 (first {y64[odd][0]!r})"
    if p.size == 0:
        return True, "no draws (zero-size output)"
    fixed = (p == 0) | (p == 1)
    wrong = fixed & (y64 != p)
    if wrong.any():
        msg = (f"{int(wrong.sum())} of {int(fixed.sum())} deterministic draw(s) wrong: p = {p[wrong][0]:g} "
               f"gave {y64[wrong][0]:g}")
        if np.all(y64[fixed] == 1 - p[fixed]) and bernoulli_statistics(y64, 1.0 - p, FALSE_ALARM)[0]:
            msg += "; the result fits the function body's reading (1 with probability 1 - p), not the text's"
        return False, msg
    ok, msg = bernoulli_statistics(y64, p, FALSE_ALARM)
    if not ok and bernoulli_statistics(y64, 1.0 - p, FALSE_ALARM)[0]:
        msg += "; the result fits the function body's reading (1 with probability 1 - p), not the text's"
    return ok, msg


def softmax_rows(logits: np.ndarray) -> np.ndarray:
    """Row-wise probabilities of unnormalized log-probabilities (float64; -inf gives 0).

    Raises:
        ValueError: a row is all -inf or holds NaN / +inf (no distribution).
    """
    x = np.asarray(logits, dtype=np.float64)
    if np.isnan(x).any() or np.isposinf(x).any():
        raise ValueError("logits with NaN or +inf define no distribution")
    m = np.max(x, axis=1, keepdims=True) if x.shape[1] else np.zeros((x.shape[0], 1))
    if x.size and np.isneginf(m).any():
        raise ValueError("a row of all -inf logits defines no distribution")
    e = np.exp(x - m)
    return e / np.sum(e, axis=1, keepdims=True)


def check_multinomial(inputs: dict, outputs: dict, attrs: dict) -> tuple[bool, str]:
    """Multinomial (7, 22): output ``[batch_size, sample_size]`` of type ``dtype`` (default
    int32); every index in ``[0, class_size)`` and never a class of logit -inf; per group of
    rows with equal logits, the pooled indices' CDF over the classes within DKW's bound of the
    softmax's (Bonferroni over the groups), widened by ``(class_size + 4) * eps`` (softmax in
    the input's precision, float32 for 16-bit inputs).

    Args:
        inputs: ``{"input": [batch_size, class_size] logits}``.
        outputs: ``{"output": array}``.
        attrs: the node's attributes as written (``sample_size`` default from the schema).

    Returns:
        ``(passed, message)``.
    """
    x = np.asarray(inputs["input"])
    y = np.asarray(outputs["output"])
    s = int(attrs.get("sample_size", default("Multinomial", "sample_size")))
    bad = _shape_and_type(y, (x.shape[0], s), expected_elem_type("Multinomial", attrs))
    if bad:
        return False, bad
    b, k = x.shape
    yi = y.astype(np.int64)
    out = (yi < 0) | (yi >= k)
    if out.any():
        return False, f"{int(out.sum())} index(es) outside [0, {k}) (first {int(yi[out][0])})"
    if y.size == 0:
        return True, "no draws (zero-size output)"
    p = softmax_rows(x)
    zero = np.take_along_axis(p, yi, axis=1) == 0
    if zero.any():
        r, c = np.argwhere(zero)[0]
        return False, f"{int(zero.sum())} draw(s) of a class with logit -inf (row {r}: class {int(yi[r, c])})"
    groups: dict[bytes, list[int]] = {}
    for r in range(b):
        groups.setdefault(x[r].tobytes(), []).append(r)
    a = FALSE_ALARM / len(groups)
    e = dtypes.eps(np.float32) if x.dtype.itemsize <= 4 else dtypes.eps(np.float64)
    slack = (k + 4) * e
    worst = 0.0
    for rows in groups.values():
        draws = yi[rows].reshape(-1)
        n = draws.size
        f_n = np.cumsum(np.bincount(draws, minlength=k)) / n
        f = np.cumsum(p[rows[0]])
        d = float(np.max(np.abs(f_n - f)))
        eps = dkw_epsilon(n, a) + slack
        worst = max(worst, d)
        if d > eps:
            counts = np.bincount(draws, minlength=k).tolist()
            return False, (f"row {rows[0]}: distance {d:.4f} between the {n} draws' CDF over {k} classes and "
                           f"softmax(input)'s exceeds {eps:.4f} (DKW, false alarm {a:.2g}); draws per class "
                           f"{counts}, expected {np.round(p[rows[0]] * n, 1).tolist()}")
    return True, f"{b} row(s) in {len(groups)} group(s), {s} draw(s) each, worst CDF distance {worst:.4f}"
