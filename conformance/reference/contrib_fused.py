"""Float64 oracles and legitimate variants of onnxruntime's fused contrib operators
(com.microsoft, onnxruntime-defined): Gelu, FastGelu, BiasGelu, QuickGelu, FusedMatMul,
TransposeMatMul and FusedGemm.

Sources: onnxruntime's schema docs (``ContribOperators.md``, the same text its registry holds:
``onnxruntime.capi.onnxruntime_pybind11_state.get_all_operator_schema()``) and, where the docs
leave a choice open, its CPU kernels (read, not copied) and its own tests:

* **Gelu**: "Gaussian Error Linear Unit", the erf form ``0.5 x (1 + erf(x / sqrt 2))`` (its
  function body is ``X * 0.5 * (1 + Erf(X / sqrt 2))``): :func:`conformance.reference.activations.gelu`
  with ``approximate="none"``.
* **BiasGelu**: "the sum of input A and bias input B as the input of Gelu": ``Gelu(A + B)``, B a
  1-D tensor of A's last dimension.
* **FastGelu**: ``Y = 0.5 X (1 + tanh(0.797885 X + 0.035677 X^3))`` with an optional bias added
  to X first.  The doc's two constants are 6-digit roundings of ``sqrt(2/pi)`` and
  ``0.044715 sqrt(2/pi)`` (the tanh approximation of Gelu, which the kernel evaluates): the
  oracle uses the exact constants (ai.onnx Gelu's ``approximate="tanh"``) and the doc's
  rounded ones are a legitimate variant (:func:`gelu_variants`).
* **QuickGelu**: ``x * Sigmoid(alpha * x)``, which is ai.onnx Swish with the same ``alpha``:
  :func:`conformance.reference.activations.swish`.
* **FusedMatMul** / **TransposeMatMul**: ``alpha * matmul(A', B')`` with numpy.matmul
  semantics, ``A'`` = A with ``transBatchA`` then ``transA`` applied (:func:`logical`).
* **FusedGemm**: ``activation(alpha A' B' + beta C)``: Gemm, then the element-wise activation
  onnxruntime's kernel creates from the ``activation`` name and the ``activation_*`` attributes
  with the prefix removed (``activation_alpha`` is the functor's ``alpha``): :data:`GEMM_ACTIVATIONS`.
"""

from __future__ import annotations

import numpy as np
from onnx import TensorProto

from conformance import dtypes
from conformance.reference import activations as act
from conformance.reference import libm
from conformance.reference import linalg as lref

#: ContribOperators.md's FastGelu constants (6-digit roundings of sqrt(2/pi) and 0.044715 sqrt(2/pi)).
DOC_C0, DOC_C1 = 0.797885, 0.035677


# ----------------------------------------------------------------------------- Gelu family
def gelu_erf(z: np.ndarray) -> np.ndarray:
    """com.microsoft Gelu of float64 ``z`` (any shape): ``0.5 z erfc(-z / sqrt 2)``, float64."""
    return act.oracle("Gelu", z, {"approximate": "none"})


def gelu_tanh(z: np.ndarray) -> np.ndarray:
    """FastGelu's formula with the exact constants: ``0.5 z (1 + tanh(sqrt(2/pi) (z + 0.044715
    z^3)))`` in float64 (ai.onnx Gelu ``approximate="tanh"``)."""
    return act.oracle("Gelu", z, {"approximate": "tanh"})


def add_bias(x, bias) -> np.ndarray:
    """``x + bias`` in float64 (``bias`` broadcast over the last dimension; ``None``: ``x``).
    Exact for float32/16-bit inputs of ordinary magnitudes (a float64 sum of two floats whose
    exponents differ by less than 29 is exact)."""
    x = np.asarray(x, dtype=np.float64)
    if bias is None:
        return x
    with np.errstate(all="ignore"):
        return x + np.asarray(bias, dtype=np.float64)


def _doc_tanh_form(z: np.ndarray) -> np.ndarray:
    """FastGelu with ContribOperators.md's literal constants, evaluated in ``z``'s dtype."""
    c0, c1 = np.asarray(DOC_C0, dtype=z.dtype), np.asarray(DOC_C1, dtype=z.dtype)
    with np.errstate(all="ignore"):
        u = c0 * z + c1 * z * z * z
        return z * (np.asarray(1, dtype=z.dtype) / (np.asarray(1, dtype=z.dtype) + libm.exp(-2 * u)))


def gelu_variants(op: str, x, bias, elem: int) -> dict[str, np.ndarray]:
    """Legitimate evaluations of the Gelu family's output (rounded to the output type, float64):

    * the activation's own variants (:func:`conformance.reference.activations.variants` of Gelu,
      ``approximate`` none for Gelu/BiasGelu, tanh for FastGelu) at ``z = x + bias`` exact, and
      again at ``z`` rounded to T (a kernel adding the bias in T, or in float32 for the 16-bit
      types, as the schemas' function bodies and onnxruntime's kernels do);
    * FastGelu: ContribOperators.md's 6-digit constants (``0.797885``, ``0.035677``) in float64
      and at the compute precision.

    ``op``: "Gelu", "BiasGelu" or "FastGelu"."""
    approx = "tanh" if op == "FastGelu" else "none"
    z = add_bias(x, bias)
    out = {}
    zs = {"z": z}
    if bias is not None:
        zs["z-in-T"] = dtypes.round_to(z, elem).astype(np.float64)
        if elem in (TensorProto.FLOAT16, TensorProto.BFLOAT16):
            zs["z-in-float32"] = z.astype(np.float32).astype(np.float64)
    for zn, zz in zs.items():
        for k, v in act.variants("Gelu", zz, {"approximate": approx}, elem).items():
            out[f"{zn}/{k}"] = v
        if zn != "z":
            out[f"{zn}/float64"] = dtypes.round_to(act.oracle("Gelu", zz, {"approximate": approx}), elem).astype(np.float64)
        if op == "FastGelu":
            w = act.compute_precision(elem)
            for name, dt in (("doc-constants-float64", np.float64), (f"doc-constants-{w.name}", w)):
                v = _doc_tanh_form(zz.astype(dt)).astype(np.float64)
                out[f"{zn}/{name}"] = dtypes.round_to(v, elem).astype(np.float64)
    return out


def quick_gelu(x, alpha: float) -> np.ndarray:
    """QuickGelu ``x sigmoid(alpha x)`` in float64 (:func:`conformance.reference.activations.swish`)."""
    return act.oracle("Swish", x, {"alpha": float(np.float32(alpha))})


# ----------------------------------------------------------------------------- FusedMatMul
def logical(x: np.ndarray, trans: int, trans_batch: int) -> np.ndarray:
    """The operand numpy.matmul sees: ``transBatch`` moves dimension 0 to position ``-2`` (the
    stored ``[M, b1..bn, K]`` is ``[b1..bn, M, K]``: ContribOperators.md "transposed on the 1st
    dimension and batch dimensions (dim-1 to dim-rank-2)", as onnxruntime's own test builds its
    inputs: ``TransposeBatch`` [batch, N, M] -> [N, batch, M]), then ``trans`` swaps the last two
    dimensions.  A 1-D operand is returned unchanged (it has no two last dimensions; the suite
    never transposes one)."""
    x = np.asarray(x)
    if x.ndim < 2:
        return x
    if trans_batch and x.ndim >= 3:
        x = np.moveaxis(x, 0, -2)
    if trans:
        x = np.swapaxes(x, -1, -2)
    return x


def stored_shape(shape: tuple[int, ...], trans: int, trans_batch: int) -> tuple[int, ...]:
    """The stored shape whose :func:`logical` view has ``shape`` (its inverse on shapes)."""
    s = list(shape)
    if len(s) < 2:
        return tuple(s)
    if trans:
        s[-1], s[-2] = s[-2], s[-1]
    if trans_batch and len(s) >= 3:
        s = [s[-2]] + s[:-2] + [s[-1]]
    return tuple(s)


def logical_shape(shape: tuple[int, ...], trans: int, trans_batch: int) -> tuple[int, ...]:
    """The shape of :func:`logical` of a stored operand of ``shape``."""
    return tuple(logical(np.empty(shape, dtype=np.int8), trans, trans_batch).shape)


def to_stored(x: np.ndarray, trans: int, trans_batch: int) -> np.ndarray:
    """The stored operand whose :func:`logical` view is ``x`` (a copy)."""
    x = np.asarray(x)
    if x.ndim < 2:
        return x.copy()
    if trans:
        x = np.swapaxes(x, -1, -2)
    if trans_batch and x.ndim >= 3:
        x = np.moveaxis(x, -2, 0)
    return np.ascontiguousarray(x)


def fused_matmul(a, b, alpha: float = 1.0, transA: int = 0, transB: int = 0, transBatchA: int = 0,
                 transBatchB: int = 0) -> np.ndarray:
    """``alpha * matmul(A', B')`` (:func:`logical` operands; numpy.matmul shapes and IEEE special
    values of :func:`conformance.reference.linalg.exact_matmul`), float64: the exact product
    correctly rounded, times the float32 ``alpha`` (one more float64 rounding).

    Raises:
        ValueError: operands that numpy.matmul rejects after the transposes."""
    la, lb = logical(a, transA, transBatchA), logical(b, transB, transBatchB)
    y = lref.exact_matmul(np.asarray(la, dtype=np.float64), np.asarray(lb, dtype=np.float64))
    with np.errstate(invalid="ignore"):
        return np.asarray(y * float(np.float32(alpha)), dtype=np.float64)


def fused_matmul_bound(a, b, alpha: float, trans: tuple[int, int, int, int], t: str) -> np.ndarray:
    """Per output element: the largest error of a kernel computing ``alpha A'B'`` at the mandated
    precision (accumulation ``u`` = :data:`conformance.reference.linalg.ACC`): the K-term dot
    product and alpha's product in any grouping, ``gamma_{K+1}(u) |alpha| (|A'||B'|) + (K+1)
    |alpha| s``; for the 16-bit types also the product rounded to T before alpha multiplies it
    (a MatMul then a Mul in T): ``+ gamma_2(u_T) |alpha| (|A'B'| + E)``."""
    ta, tb, tba, tbb = trans
    la = np.asarray(logical(a, ta, tba), dtype=np.float64)
    lb = np.asarray(logical(b, tb, tbb), dtype=np.float64)
    u, s = lref.ACC[t]
    k = la.shape[-1]
    al = abs(float(np.float32(alpha)))
    bound = lref.gamma(k + 1, u) * al * lref.abs_matmul(la, lb) + (k + 1) * max(al, 1.0) * s
    u_t = dtypes.eps(dtypes.elem_type(t)) / 2
    if u_t > u:
        ab = np.abs(lref.exact_matmul(np.where(np.isfinite(la), la, 0.0), np.where(np.isfinite(lb), lb, 0.0)))
        bound = bound + lref.gamma(2, u_t) * al * (ab + bound)
    return bound


# ----------------------------------------------------------------------------- FusedGemm
#: The activations onnxruntime 1.32's FusedGemm accepts (its ``ElementWiseRangedTransform``
#: functors, probed: any other name fails with "unknown kernel type"), name -> (the
#: ``activation_*`` attributes it requires, the ai.onnx activation whose formula it is, or None).
GEMM_ACTIVATIONS = {
    "Relu": ((), "Relu"),
    "Tanh": ((), "Tanh"),
    "Sigmoid": ((), "Sigmoid"),
    "Softplus": ((), "Softplus"),
    "Softsign": ((), "Softsign"),
    "LeakyRelu": (("alpha",), "LeakyRelu"),
    "HardSigmoid": (("alpha", "beta"), "HardSigmoid"),
    "Elu": (("alpha",), "Elu"),
    "Selu": (("alpha", "gamma"), "Selu"),
    "Celu": (("alpha",), "Celu"),
    "ThresholdedRelu": (("alpha",), "ThresholdedRelu"),
    "ParametricSoftplus": (("alpha", "beta"), None),
    "ScaledTanh": (("alpha", "beta"), None),
}


def activation_params(attrs) -> dict:
    """``{"alpha": .., "beta": .., "gamma": ..}`` from the node's ``activation_*`` attributes
    (float32 values; absent ones left out)."""
    out = {}
    for k in ("alpha", "beta", "gamma"):
        v = attrs.get(f"activation_{k}")
        if v is not None:
            out[k] = float(np.float32(v))
    return out


def gemm_activation(z: np.ndarray, activation, params: dict) -> np.ndarray:
    """FusedGemm's activation of the Gemm result ``z`` (float64, or an object array of Python
    ints for the integer types: Relu and ThresholdedRelu only, which keep integers integral).
    ``activation`` None: the identity.  ParametricSoftplus ``alpha ln(1 + exp(beta z))``,
    ScaledTanh ``alpha tanh(beta z)`` (onnxruntime's contrib functors); the others are the
    ai.onnx activations of that name (:mod:`conformance.reference.activations`).

    Raises:
        ValueError: an activation onnxruntime does not accept, a required parameter missing,
            or a non-integral activation on integers."""
    if activation is None:
        return z
    act_name = activation.decode() if isinstance(activation, bytes) else activation
    if act_name not in GEMM_ACTIVATIONS:
        raise ValueError(f"unknown kernel type: {act_name}")
    need, onnx_op = GEMM_ACTIVATIONS[act_name]
    missing = [k for k in need if k not in params]
    if missing:
        raise ValueError(f"No attribute with name:'{missing[0]}'is defined.")
    z = np.asarray(z)
    if z.dtype == object:
        if act_name == "Relu":
            return np.asarray([max(0, v) for v in z.ravel()], dtype=object).reshape(z.shape)
        if act_name == "ThresholdedRelu":
            return np.asarray([v if v > params["alpha"] else 0 for v in z.ravel()], dtype=object).reshape(z.shape)
        raise ValueError(f"{act_name} of integers is not integral")
    z = np.asarray(z, dtype=np.float64)
    with np.errstate(all="ignore"):
        if act_name == "ParametricSoftplus":
            return params["alpha"] * libm.logaddexp(0.0, params["beta"] * z)
        if act_name == "ScaledTanh":
            return params["alpha"] * libm.tanh(params["beta"] * z)
        return act.oracle(onnx_op, z, {k: params[k] for k in need})


def activation_slope(activation, params: dict) -> float:
    """The largest ``|f'(z)|`` of the activation (how an error of the Gemm result carries into
    the output): 1 for Relu, Tanh, Softplus, Softsign, Celu, ThresholdedRelu (away from its
    jump), the identity; 1/4 Sigmoid; ``max(1, |alpha|)`` LeakyRelu and Elu; ``|alpha|``
    HardSigmoid; ``gamma max(1, alpha)`` Selu; ``|alpha beta|`` ParametricSoftplus (times 1)
    and ScaledTanh."""
    p = params
    return {
        None: 1.0, "Relu": 1.0, "Tanh": 1.0, "Softplus": 1.0, "Softsign": 1.0, "Celu": 1.0,
        "ThresholdedRelu": 1.0, "Sigmoid": 0.25,
        "LeakyRelu": max(1.0, abs(p.get("alpha", 0.0))), "Elu": max(1.0, abs(p.get("alpha", 0.0))),
        "HardSigmoid": abs(p.get("alpha", 0.0)),
        "Selu": abs(p.get("gamma", 0.0)) * max(1.0, abs(p.get("alpha", 0.0))),
        "ParametricSoftplus": abs(p.get("alpha", 0.0) * p.get("beta", 0.0)),
        "ScaledTanh": abs(p.get("alpha", 0.0) * p.get("beta", 0.0)),
    }[activation]


def activation_derivative(activation, z: np.ndarray, params: dict) -> np.ndarray:
    """``|f'(z)|`` of the activation at float64 ``z`` (one-sided where f has a kink: the larger
    side), elementwise; the identity (None) is 1.  Every ``|f'|`` here is monotone on each side
    of 0 (or piecewise constant), so its largest value over an interval is at an end or at 0
    (:func:`local_slope`)."""
    p = params
    z = np.asarray(z, dtype=np.float64)
    one = np.ones_like(z)
    with np.errstate(all="ignore"):
        if activation in (None, "Relu", "ThresholdedRelu"):
            return one
        if activation == "LeakyRelu":
            return np.where(z >= 0, 1.0, abs(p["alpha"]))
        if activation == "Tanh":
            return 1.0 / libm.cosh(z) ** 2
        if activation == "Sigmoid":
            sg = 1.0 / (1.0 + libm.exp(-z))
            return sg * (1.0 - sg)
        if activation == "Softplus":
            return 1.0 / (1.0 + libm.exp(-z))
        if activation == "Softsign":
            return 1.0 / (1.0 + np.abs(z)) ** 2
        if activation == "HardSigmoid":
            v = p["alpha"] * z + p["beta"]
            return np.where((v >= 0) & (v <= 1), abs(p["alpha"]), 0.0)
        if activation == "Elu":
            return np.where(z >= 0, 1.0, np.abs(p["alpha"] * libm.exp(np.minimum(z, 0.0))))
        if activation == "Selu":
            return abs(p["gamma"]) * np.where(z > 0, 1.0, np.abs(p["alpha"] * libm.exp(np.minimum(z, 0.0))))
        if activation == "Celu":
            return np.where(z >= 0, 1.0, libm.exp(np.minimum(z, 0.0) / p["alpha"]))
        if activation == "ParametricSoftplus":
            return np.abs(p["alpha"] * p["beta"]) / (1.0 + libm.exp(-p["beta"] * z))
        if activation == "ScaledTanh":
            return np.abs(p["alpha"] * p["beta"]) / libm.cosh(p["beta"] * z) ** 2
    raise ValueError(f"unknown kernel type: {activation}")


def local_slope(activation, z: np.ndarray, err: np.ndarray, params: dict) -> np.ndarray:
    """The largest ``|f'|`` over ``[z - err, z + err]`` per element (at the ends, or at 0 inside):
    how an error ``err`` of the Gemm result carries into the activation's output.  Non-finite
    ``z`` (compared exactly) gets 0; where the interval is unbounded, the global slope
    (:func:`activation_slope`)."""
    z = np.asarray(z, dtype=np.float64)
    err = np.broadcast_to(np.asarray(err, dtype=np.float64), z.shape)
    with np.errstate(all="ignore"):
        lo, hi = z - err, z + err
        s = np.maximum(activation_derivative(activation, lo, params), activation_derivative(activation, hi, params))
        at0 = activation_derivative(activation, np.zeros(1), params)[0]
        s = np.where((lo <= 0) & (hi >= 0), np.maximum(s, at0), s)
        s = np.where(np.isfinite(lo) & np.isfinite(hi), s, activation_slope(activation, params))
    return np.where(np.isfinite(z), np.nan_to_num(s, nan=activation_slope(activation, params)), 0.0)


#: The activation's own accuracy budget in ulps of the compute precision, relative to
#: ``max(|y|, 1)`` (the unit floor of docs/tolerance.md's activations): the ai.onnx budget table
#: (:data:`conformance.reference.activations.ULP_BUDGET`) where the formula is an ai.onnx
#: activation; a piecewise-linear one rounds once or twice (a product and a sum: 1 ulp);
#: Softsign a division and a sum (3); ParametricSoftplus and ScaledTanh their inner function and
#: two products (Softplus 5 + 1, Tanh 5 + 1).
ACTIVATION_ULPS = {
    None: 0.0, "Relu": 0.0, "LeakyRelu": 1.0, "ThresholdedRelu": 0.0, "HardSigmoid": 1.0, "Softsign": 3.0,
    "Tanh": act.ULP_BUDGET["Tanh"][0], "Sigmoid": act.ULP_BUDGET["Sigmoid"][0],
    "Softplus": act.ULP_BUDGET["Softplus"][0], "Elu": act.ULP_BUDGET["Elu"][0],
    "Selu": act.ULP_BUDGET["Selu"][0], "Celu": act.ULP_BUDGET["Celu"][0],
    "ParametricSoftplus": act.ULP_BUDGET["Softplus"][0] + 1.0, "ScaledTanh": act.ULP_BUDGET["Tanh"][0] + 1.0,
}


def fused_gemm(a, b, c, alpha: float, beta: float, trans_a: int, trans_b: int, activation, params: dict):
    """``activation(alpha A' B' + beta C)``: the Gemm exactly
    (:func:`conformance.reference.linalg.gemm`), the activation in float64
    (:func:`gemm_activation`)."""
    z = lref.gemm(a, b, c, alpha, beta, trans_a, trans_b)
    return gemm_activation(z, activation, params)
