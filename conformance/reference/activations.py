"""Float64 oracles, legitimate variants and tolerances of the ai.onnx element-wise activations.

One table (:data:`ACTIVATIONS`) describes every operator: its formula (written once,
evaluated in whatever float dtype its input has, so the same code is the float64 oracle
and the reduced-precision variants), its attributes and defaults per version, which
special values the spec defines a result for, alternative legitimate forms of the
formula, and the class of the absolute tolerance floor.

Spec sections: the operator docs of Relu, LeakyRelu, PRelu, Elu, Selu, Celu, Gelu,
Sigmoid, HardSigmoid, HardSwish, Tanh, Softplus, Softsign, Mish, ThresholdedRelu and
Swish (``onnx.defs.get_schema(op, version).doc``) and their function bodies, which cast
the float attributes to ``T`` (``CastLike``) before use.

Definitional decisions (documented here, asserted by the tests):

* float attributes are float32 in the model; the oracle uses the float32 value exactly
  (e.g. LeakyRelu's default alpha is 0.00999999977648258...).
* NaN in -> NaN out for every operator whose formula propagates it in every branch
  (Relu's ``max(0, x)`` as ONNX Max does, LeakyRelu, PRelu, Elu, Selu, Celu, Gelu,
  Sigmoid, Tanh, Softplus, Softsign, Mish, Swish).  For HardSigmoid/HardSwish
  (``max(0, min(1, .))``: IEEE fmin/fmax drop NaN) and ThresholdedRelu (``NaN > alpha``
  is false, so "0 otherwise" literally) NaN is not generated.
* infinities are generated only where the formula is defined (no ``inf * 0``,
  ``inf / inf``): e.g. Gelu/Mish/Swish/HardSwish(-inf) and Softsign(+-inf) are not.
* the sign of a zero result (Relu(-0)) is not defined by ``max(0, x)`` and is not checked
  by :func:`conformance.tolerance.compare` anyway.
* Gelu(approximate="tanh") uses the spec's constants (sqrt(2/pi), 0.044715).
* Celu at ``x > alpha * max`` (alpha < 1): the text's ``max(0,x) + min(0,alpha*(exp(x/alpha)-1))``
  is ``x`` (the ``min`` branch is 0 for every ``x >= 0``); the function body
  ``Mul(alpha, Elu(Div(X, alpha)))`` is algebraically the same but its intermediate ``x/alpha``
  overflows to inf, so a runtime expanding it returns inf.  *Not contested*: the text defines
  a finite value and the body only computes an expansion of it with an avoidable
  intermediate overflow (as for Softplus-1's ``Log(Add(Exp(X), 1))`` at large x, and
  LayerNormalization's one-pass body): the expected output is ``x`` and such a runtime fails
  (onnxruntime 1.32's kernel returns ``x``).

Tolerance (:func:`tolerance`): the Tolerance model is one ``atol + rtol*|e|`` per output.
For element-wise ops the error is relative, except where the formula (or a legitimate
form of it) cancels: ``exp(x) - 1`` near 0, ``1 + erf(x/sqrt2)`` / ``1 + tanh(.)`` for
negative x, ``alpha*x + beta`` near the HardSigmoid knee, ``log(1 + exp(x))`` for
negative x (Softplus, and Mish through it: 82 float32 ulps at x = -5.2).  So each op has a *floor* below which errors are absolute:

* ``exact`` (piecewise linear: Relu, LeakyRelu, PRelu, ThresholdedRelu): floor = the
  smallest normal of the output type; tiny and subnormal outputs are checked to a few
  subnormal ulps.
* ``tiny`` (Tanh, Softsign): floor = smallest normal / eps, i.e.
  an absolute floor of a few smallest-normals: flushing a subnormal result to zero (FTZ,
  ``1/(1+exp(100))`` in float32) is accepted, everything above is relative.
* ``unit`` (Elu, Selu, Celu, Gelu, HardSigmoid, HardSwish, Softplus, Mish, Sigmoid): floor = 1.0, the
  natural unit of these functions; outputs of magnitude < 1 get an absolute tolerance of
  a few ulp(1) of T plus the measured spread of the cancelling forms.  ulp(1) of T
  (not of float32) because the spec's function bodies evaluated cast by cast in T
  (``Sum(One, Erf(...))`` in float16, as onnx.reference does) are legitimate and cancel
  in T: Gelu-20 float16 at x = -2.6 is 6 float16 ulps off relatively.  This is coarse for
  tiny outputs (Elu(-1e-6) is only checked to ~4 ulp(1)), deliberately: the spec's own
  formula ``alpha*(exp(x)-1)`` is legitimate and loses that much.  Sigmoid is here too
  although no form of it cancels: its output is a probability in (0, 1) whose natural
  unit is 1, and fast kernels (onnxruntime's float and double Sigmoid) are accurate to a
  fraction of ulp(1) absolutely, not relatively (sigmoid(-100) -> 0).

* ``input`` (Swish = x * Sigmoid(alpha x), its function body): Sigmoid's absolute error
  (above) times |x|; floor = the largest |x| whose output is below 1 and whose sigmoid
  is not saturated (:func:`floor_scale`).  onnxruntime's expanded Swish-24 float is 0.5%
  off at y = -8.8e-5 (x ~ -9) for that reason.

Above the floor the relative tolerance is ``max(4, budget, 4 * worst relative deviation of a
variant in output ulps)`` ulps, ulps in the tolerance's own unit ``eps(T) * max(|e|, floor)``
(which is at least one true ulp of ``e``).  Integer outputs are exact.

Accuracy budgets (:data:`ULP_BUDGET`, float and double outputs).  A tolerance must accept a good
libm, not only our variants (numpy's, i.e. glibc's, functions round almost correctly).  The
budget of each transcendental activation is the OpenCL C full-profile bound of the built-ins its
formula composes (OpenCL C 3.0 specification, section 7.4 "Relative Error as ULPs", tables of
single and double precision built-in math functions: ``exp``, ``expm1`` 3 ulp, ``log1p`` 2 ulp,
``tanh`` 5 ulp, ``erf``/``erfc`` 16 ulp, ``x / y`` 2.5 ulp, ``+``/``*`` correctly rounded,
0.5 ulp each), summed along the formula (errors of an inner function enter the outer one with
a factor <= 1 for these compositions).  Calibration: onnxruntime 1.32 CPU, max error in this
unit over a dense grid (2e6 float32 points over the op's range, plus 2e5 in [8.4, 8.7] for
Tanh; every float16 value in the range): see :data:`ORT_MEASURED`.  For float16/bfloat16 no
budget is needed: kernels evaluate in float32 and round once (float32's budget is far below one
ulp of T; onnxruntime float16 measured <= 0.5 ulp).  The points where onnxruntime's error peaks
(:data:`WORST_POINTS`) get cases of their own (``numerics=worst-points``).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np
import onnx
import onnx.defs

from conformance import dtypes
from conformance.reference import libm
from conformance.tolerance import DEFAULT_SAFETY, DEFAULT_ULPS, Tolerance, derive_tolerance

F32 = np.float32
_ERF = np.frompyfunc(math.erf, 1, 1)
_ERFC = np.frompyfunc(math.erfc, 1, 1)
SQRT_2_OVER_PI = math.sqrt(2.0 / math.pi)


def f32(v: float) -> float:
    """The float32 value of a float attribute, as a Python float."""
    return float(np.float32(v))


def _c(v, x):
    """Constant ``v`` in the dtype of ``x`` (so float32 formulas stay float32)."""
    return np.asarray(v, dtype=x.dtype)


def _erf(x, complement=False):
    f = _ERFC if complement else _ERF
    return np.asarray(f(x.astype(np.float64)), dtype=np.float64).astype(x.dtype)  # correctly rounded-ish erf


def _sigmoid(x):
    with np.errstate(over="ignore"):
        e = libm.exp(-np.abs(x))
        one = _c(1, x)
        return np.where(x >= 0, one / (one + e), e / (one + e))


def _softplus(x):
    return libm.logaddexp(_c(0, x), x)


# ----------------------------------------------------------------------------- formulas
# f(x, a) with x a float array (dtype = evaluation precision) and a the attribute dict
# (Python floats, float32 values); every function returns the same dtype as x.
def relu(x, a):
    return np.where(x < 0, _c(0, x), x)


def leaky_relu(x, a):
    return np.where(x < 0, _c(a["alpha"], x) * x, x)


def prelu(x, a):
    s = a["slope"].astype(x.dtype)
    return np.where(x < 0, s * x, x).astype(x.dtype)


def elu(x, a, naive=False):
    em1 = libm.exp(x) - _c(1, x) if naive else libm.expm1(x)
    return np.where(x < 0, _c(a["alpha"], x) * em1, x)


def selu(x, a, naive=False):
    al, g = _c(a["alpha"], x), _c(a["gamma"], x)
    neg = g * (al * libm.exp(x) - al) if naive else g * al * libm.expm1(x)
    return np.where(x <= 0, neg, g * x)


def celu(x, a, naive=False):
    al = _c(a["alpha"], x)
    em1 = libm.exp(x / al) - _c(1, x) if naive else libm.expm1(x / al)
    return np.where(x > 0, x, al * em1)


def gelu(x, a, naive=False, float32_constants=False):
    half = _c(0.5, x)
    if a.get("approximate", "none") == "tanh":
        with np.errstate(over="ignore", invalid="ignore"):
            # the function body: Sqrt(CastLike(float 0.63661975, X)), CastLike(float 0.044715, X)
            c0 = math.sqrt(f32(2.0 / math.pi)) if float32_constants else SQRT_2_OVER_PI
            c1 = f32(0.044715) if float32_constants else 0.044715
            u = _c(c0, x) * (x + _c(c1, x) * x * x * x)
            if naive or float32_constants:  # the spec's text: 0.5 x (1 + tanh(u))
                return half * x * (_c(1, x) + libm.tanh(u))
            # 1 + tanh(u) = 2 sigmoid(2u): no cancellation for negative x
            return x * _sigmoid(_c(2, x) * u)
    if naive:  # the spec's text: 0.5 x (1 + erf(x / sqrt 2))
        return half * x * (_c(1, x) + _erf(x / _c(math.sqrt(2.0), x)))
    return half * x * _erf(-x / _c(math.sqrt(2.0), x), complement=True)


def sigmoid(x, a, naive=False):
    if naive:
        with np.errstate(over="ignore"):
            return _c(1, x) / (_c(1, x) + libm.exp(-x))
    return _sigmoid(x)


def hard_sigmoid(x, a):
    return np.clip(_c(a["alpha"], x) * x + _c(a["beta"], x), _c(0, x), _c(1, x))


def hard_swish(x, a, alpha32=False):
    alpha = f32(1.0 / 6.0) if alpha32 else 1.0 / 6.0  # function body: HardSigmoid<alpha=0.16666667f>
    return x * np.clip(_c(alpha, x) * x + _c(0.5, x), _c(0, x), _c(1, x))


def tanh(x, a):
    return libm.tanh(x)


def softplus(x, a, naive=False):
    if naive:  # log(1 + exp(x)) with the usual overflow guard
        with np.errstate(over="ignore"):
            return np.where(x > _c(20 if x.dtype == np.float32 else 40, x), x, libm.log(_c(1, x) + libm.exp(x)))
    return _softplus(x)


def softsign(x, a):
    return x / (_c(1, x) + np.abs(x))


def mish(x, a, naive=False):
    return x * libm.tanh(softplus(x, a, naive=naive))


def thresholded_relu(x, a):
    return np.where(x > _c(a["alpha"], x), x, _c(0, x))


def swish(x, a, naive=False):
    ax = _c(a["alpha"], x) * x
    return x * sigmoid(ax, a, naive=naive)


# ----------------------------------------------------------------------------- table
@dataclass(frozen=True)
class Activation:
    """One operator of the family.

    Attributes:
        op: operator type.
        fn: ``fn(x, attrs) -> y`` evaluated in the dtype of ``x``.
        alternates: names of keyword switches of ``fn`` giving other legitimate forms.
        attrs: attribute name -> the non-default values worth exercising (float attributes
            float32-rounded; state ``i`` of an operator with several attributes sets each
            attribute to its ``i``-th value, cyclically: :func:`attribute_states`).  The defaults
            are the schema's (:func:`attr_values`), never retyped here.
        specials: special input values with a defined result (subset of nan, inf, -inf).
        floor: ``exact``, ``tiny`` or ``unit`` (module docstring).
        domain_lo: lower bound of ordinary random data (upper bound is -domain_lo).
    """

    op: str
    fn: Callable
    alternates: tuple[str, ...] = ()
    attrs: dict = field(default_factory=dict)
    specials: tuple[str, ...] = ("nan", "inf", "-inf")
    floor: str = "tiny"
    domain_lo: float = -6.0


ACTIVATIONS: dict[str, Activation] = {
    a.op: a
    for a in [
        Activation("Relu", relu, floor="exact"),
        Activation("LeakyRelu", leaky_relu, attrs={"alpha": (f32(0.1), f32(2.0), 0.0, f32(-0.5))}, floor="exact"),
        Activation("PRelu", prelu, floor="exact"),
        Activation("Elu", elu, ("naive",), {"alpha": (0.5, 2.0, f32(0.1))}, floor="unit"),
        Activation("Selu", selu, ("naive",), {"alpha": (2.0, 1.0), "gamma": (3.0, 0.5)}, floor="unit"),
        Activation("Celu", celu, ("naive",), {"alpha": (0.5, 2.0, f32(0.3))}, floor="unit"),
        Activation("Gelu", gelu, ("naive", "float32_constants"), {"approximate": ("tanh",)},
                   specials=("nan", "inf"), floor="unit"),
        Activation("Sigmoid", sigmoid, ("naive",), floor="unit"),
        Activation("HardSigmoid", hard_sigmoid, attrs={"alpha": (0.5, f32(1.0 / 6.0), 1.0), "beta": (0.25, 0.5, 0.0)},
                   specials=("inf", "-inf"), floor="unit"),
        Activation("HardSwish", hard_swish, ("alpha32",), specials=("inf",), floor="unit"),
        Activation("Tanh", tanh),
        Activation("Softplus", softplus, ("naive",), floor="unit", domain_lo=-30.0),
        Activation("Softsign", softsign, specials=("nan",)),
        Activation("Mish", mish, ("naive",), specials=("nan", "inf"), floor="unit"),
        Activation("ThresholdedRelu", thresholded_relu, attrs={"alpha": (0.5, 0.0, -1.0, 2.0)},
                   specials=("inf", "-inf"), floor="exact"),
        Activation("Swish", swish, ("naive",), {"alpha": (0.5, 2.0, f32(1.702))}, specials=("nan", "inf"),
                   floor="input"),
    ]
}

#: op -> (budget in ulps of the tolerance's unit, source): float and double outputs (module docstring)
ULP_BUDGET: dict[str, tuple[float, str]] = {
    "Tanh": (5.0, "OpenCL C tanh: 5 ulp"),
    "Sigmoid": (6.0, "1 / (1 + exp(-x)): exp 3 + add 0.5 + divide 2.5 (OpenCL C)"),
    "Elu": (4.0, "alpha * expm1(x): expm1 3 + mul 0.5 (OpenCL C), rounded up"),
    "Celu": (4.0, "alpha * expm1(x / alpha): expm1 3 + div/mul (OpenCL C), rounded up"),
    "Selu": (4.0, "gamma * alpha * expm1(x): expm1 3 + mul 0.5 (OpenCL C), rounded up"),
    "Softplus": (5.0, "log1p(exp(x)): log1p 2 + exp 3 (OpenCL C)"),
    "Mish": (11.0, "x * tanh(softplus(x)): tanh 5 + softplus 5 + mul 0.5 (OpenCL C), rounded up"),
    "Gelu": (17.0, "0.5 x erfc(-x / sqrt 2): erf/erfc 16 + mul 0.5 (OpenCL C), rounded up; "
                   "approximate=tanh: tanh 5 + polynomial 2"),
    "Swish": (7.0, "x * sigmoid(alpha x): sigmoid 6 + mul 0.5 (OpenCL C), rounded up"),
}
#: onnxruntime 1.32 CPU, max error in ulps of the tolerance's unit (true ulps of e where they
#: differ) and where, float32 / float16 (module docstring; reproduce: tests/test_activations.py)
ORT_MEASURED = {
    "Tanh": "float32 2.73 (5.46 true ulp) at x = -8.4755; float16 0.49",
    "Sigmoid": "float32 1.40 at x = 16.454; float16 0.25",
    "Elu": "float32 0.55 at x = -0.310; float16 0.25",
    "Celu": "float32 0.55 at x = -0.310 (no float16 kernel in Celu-12)",
    "Selu": "float32 1.27 (1.34 true ulp at -1.358) at x = -0.849; float16 0.49",
    "Softplus": "float32 1.13 (1.28 true ulp at 0.867) at x = 0.567",
    "Mish": "float32 2.47 at x = 8.568 (4.18 true ulp at 3.830)",
    "Gelu": "float32 1.10 at x = 1.149 (none); 6.49 at x = -5.042 below the unit floor (tanh)",
}
#: x values where onnxruntime 1.32's float32 error peaks, per op (the cases sample around them)
WORST_POINTS = {
    "Tanh": (-8.47554, 8.47554, 8.55, -8.55),
    "Sigmoid": (16.4542,),
    "Selu": (-0.84862, -1.35816),
    "Softplus": (0.5665, 0.86672),
    "Mish": (8.5678, 3.83046),
    "Softsign": (-0.14708, -0.14163),
    "Gelu": (1.14912, 1.91491, -5.04225, 3.69019),
}


def ulp_budget(op: str, elem: int) -> float:
    """The accuracy budget (ulps) of ``op`` for output type ``elem`` (0 where none applies)."""
    if op not in ULP_BUDGET or elem not in (onnx.TensorProto.FLOAT, onnx.TensorProto.DOUBLE):
        return 0.0
    return ULP_BUDGET[op][0]


def versions(op: str) -> dict[int, tuple[str, ...]]:
    """since_version -> the type names of constraint T (from ``onnx.defs``), ai.onnx domain."""
    out = {}
    for s in onnx.defs.get_all_schemas_with_history():
        if s.name == op and s.domain == "":
            tc = next(t for t in s.type_constraints if t.type_param_str == "T")
            out[s.since_version] = tuple(sorted(t[len("tensor("):-1] for t in tc.allowed_type_strs))
    return dict(sorted(out.items()))


def input_name(op: str, version: int) -> str:
    """Formal name of the data input (``X`` or ``input``)."""
    return onnx.defs.get_schema(op, version).inputs[0].name


def output_name(op: str, version: int) -> str:
    return onnx.defs.get_schema(op, version).outputs[0].name


def schema_defaults(op: str, version: int) -> dict:
    """Attribute name -> default of ``op``-``version`` as ``onnx.defs`` gives it (float
    attributes as their float32 value, strings decoded); the legacy ``consumed_inputs`` and
    attributes without a default are left out.  Selu-1's defaults (1.6732, 1.0507) differ from
    Selu-6's: they come from the version's own schema."""
    out = {}
    for name, attr in onnx.defs.get_schema(op, version).attributes.items():
        if name == "consumed_inputs" or not attr.default_value.name:
            continue
        d = onnx.helper.get_attribute_value(attr.default_value)
        out[name] = d.decode() if isinstance(d, bytes) else (d if isinstance(d, str) else f32(d))
    return out


def attr_values(op: str, version: int, attributes: dict) -> dict:
    """The attribute values a node with ``attributes`` computes with: the version's schema
    defaults (:func:`schema_defaults`) updated with ``attributes`` (floats as their float32
    value; the legacy ``consumed_inputs`` of version 1, an in-place hint, is left out)."""
    vals = schema_defaults(op, version)
    for k, v in attributes.items():
        if k == "consumed_inputs":
            continue
        vals[k] = v.decode() if isinstance(v, bytes) else (v if isinstance(v, str) else f32(v))
    return vals


def attribute_states(op: str) -> list[dict]:
    """The non-default attribute states of ``op`` from :attr:`Activation.attrs`: state ``i``
    sets every attribute to its ``i``-th table value (cyclically), as many states as the
    longest list (HardSigmoid: ``alpha=0.5, beta=0.25``, ``alpha=1/6, beta=0.5``,
    ``alpha=1, beta=0``)."""
    table = ACTIVATIONS[op].attrs
    n = max((len(v) for v in table.values()), default=0)
    return [{k: vals[i % len(vals)] for k, vals in table.items()} for i in range(n)]


def oracle(op: str, x: np.ndarray, attrs: dict, slope: np.ndarray | None = None) -> np.ndarray:
    """The float64 result of ``op`` on ``x`` (any shape), exact for integers.

    Args:
        x: float values, a numpy integer array, or an object array of Python ints (the
            operator table's exact integers).
        attrs: attribute values with defaults filled in (:func:`attr_values`).
        slope: PRelu's slope (unidirectionally broadcastable to ``x``).
    Returns:
        float64 array of x's shape; for integer ``x`` (Relu-14, PRelu-9/16) the exact result in
        x's integer dtype, or an object array of Python ints (no wrap-around) for object input.
    """
    a = dict(attrs)
    x = np.asarray(x)
    if x.dtype.kind in "iuO":  # integer types: exact, in the type itself or in Python ints
        if slope is not None:
            a["slope"] = np.asarray(slope).astype(x.dtype)
        y = ACTIVATIONS[op].fn(x, a)
        return np.asarray(y, dtype=object) if x.dtype == object else y
    if slope is not None:
        a["slope"] = np.asarray(slope, dtype=np.float64)
    with np.errstate(all="ignore"):
        return np.asarray(ACTIVATIONS[op].fn(np.asarray(x, dtype=np.float64), a), dtype=np.float64)


def compute_precision(elem: int) -> np.dtype:
    """Precision a kernel legitimately evaluates in: float32 for float16/bfloat16/float, else double."""
    return np.dtype(np.float64) if elem == onnx.TensorProto.DOUBLE else np.dtype(np.float32)


def variants(op: str, x: np.ndarray, attrs: dict, elem: int, slope: np.ndarray | None = None) -> dict[str, np.ndarray]:
    """Legitimate implementations of ``op`` at the precision the input type allows, each rounded
    to the output type (returned as float64): the formula evaluated in float32 (double for
    double), every alternate form (naive ``exp(x)-1``, ``log(1+exp(x))`` with a threshold,
    the spec's ``1+erf``/``1+tanh`` text, ``1/(1+exp(-x))``, HardSwish's float32 alpha), and
    the function bodies' ``CastLike(alpha, X)`` (attributes rounded to T), and for float16
    and bfloat16 the formula evaluated in T itself, every operation rounded to T (the
    function body cast by cast; the naive text forms too where they cannot overflow)."""
    spec = ACTIVATIONS[op]
    w = compute_precision(elem)
    xw = np.asarray(x, dtype=np.float64).astype(w)
    a = dict(attrs)
    if slope is not None:
        a["slope"] = np.asarray(slope, dtype=np.float64)
    a_t = {k: (float(dtypes.round_to(np.float64(v), elem)) if isinstance(v, float) else v) for k, v in a.items()}
    out = {}
    with np.errstate(all="ignore"):
        forms = {f"{w.name}": {}}
        forms.update({f"{w.name}-{alt}": {alt: True} for alt in spec.alternates})
        for name, kw in forms.items():
            out[name] = spec.fn(xw, a, **kw)
        out[f"{w.name}-attrs-in-T"] = spec.fn(xw, a_t)
        t = dtypes.np_dtype(elem)
        if t != w:  # the function body cast by cast: every operation rounded to T
            out["T-cast-by-cast"] = np.asarray(spec.fn(np.asarray(x, dtype=np.float64).astype(t), a_t), dtype=t)
            if spec.alternates and spec.alternates[0] == "naive" and op not in ("Softplus", "Mish", "Sigmoid", "Swish"):
                # the spec's text form in T (exp(x) - 1, 1 + erf): no exp overflow in these forms
                out["T-cast-by-cast-naive"] = np.asarray(spec.fn(np.asarray(x, dtype=np.float64).astype(t), a_t,
                                                                 naive=True), dtype=t)
    return {k: dtypes.round_to(np.asarray(v, dtype=np.float64), elem).astype(np.float64) for k, v in out.items()}


def floor_scale(op: str, elem: int, x: np.ndarray | None = None, attrs: dict | None = None) -> float:
    """``scale`` for derive_tolerance: magnitude below which errors are absolute (module docstring).

    ``x``/``attrs`` are needed for the ``input`` floor (Swish): max(1, max |x| over the
    elements whose output is below 1 in magnitude and whose sigmoid is not saturated,
    ``|alpha x| <= 30``)."""
    fi = dtypes.finfo(elem)
    kind = ACTIVATIONS[op].floor
    if kind == "input":
        xf = np.asarray(x, dtype=np.float64)
        with np.errstate(all="ignore"):
            e = oracle(op, xf, attrs)
            sel = np.isfinite(xf) & (np.abs(e) < 1) & (np.abs(attrs["alpha"] * xf) <= 30)
        return max(1.0, float(np.max(np.abs(xf[sel]))) if sel.any() else 1.0)
    if kind == "exact":
        return float(fi.tiny)
    if kind == "tiny":
        return float(fi.tiny) / float(fi.eps)
    return 1.0


def tolerance(op: str, expected: np.ndarray, variant_outs: dict[str, np.ndarray], elem: int,
              x: np.ndarray | None = None, attrs: dict | None = None) -> Tolerance:
    """Tolerance of the output of ``op`` (float types; integer outputs are exact, see below).

    ``expected`` is the oracle rounded to the output type (as float64); variants too.  Elements
    with |e| >= floor set the relative ulps (``max(4, budget, 4 * worst variant deviation in ulps)``,
    budget: :func:`ulp_budget`);
    the others enter derive_tolerance's spread (absolute term), with ``scale=floor``.

    Raises:
        ValueError: a variant is not finite where the expectation is (reference bug).
    """
    e = np.asarray(expected, dtype=np.float64)
    if elem not in dtypes.FLOAT_TYPES:
        return Tolerance(atol=0.0, rtol=0.0, exact=True)
    floor = floor_scale(op, elem, x, attrs)
    eps = dtypes.eps(elem)
    fin = np.isfinite(e)
    big = fin & (np.abs(e) >= floor)
    worst = 0.0
    small = {}
    for name, v in variant_outs.items():
        v = np.asarray(v, dtype=np.float64)
        if not np.isfinite(v[fin]).all():
            raise ValueError(f"{op}: variant {name!r} is not finite where the expectation is")
        if big.any():
            worst = max(worst, float(np.max(np.abs(v[big] - e[big]) / (eps * np.abs(e[big])))))
        small[name] = np.where(big, e, v)
    ulps = max(DEFAULT_ULPS, ulp_budget(op, elem), DEFAULT_SAFETY * worst)
    return derive_tolerance(e, small, elem, scale=floor, ulps=ulps)
