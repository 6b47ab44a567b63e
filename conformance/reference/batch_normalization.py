"""BatchNormalization (ai.onnx) versions 1, 6, 7, 9, 14 and 15: float64 oracle and legitimate variants.

Spec text: ``onnx.defs.get_schema("BatchNormalization", v).doc`` for v in 1, 6, 7, 9, 14, 15.
Every function here takes *values* (float64 arrays holding exactly the numbers a
backend is fed) and returns float64 arrays; rounding to the output element types is
the caller's business (``conformance.dtypes.round_to``).

Semantics, per version (decisions and their sources):

* Formula (all versions)::

      Y = (X - mean) / sqrt(var + epsilon) * scale + B

  per channel, the channel axis being axis 1.  In *inference* ``mean``/``var`` are the
  inputs; in *training* they are the batch statistics of X (population variance,
  ``sum((x - mean)^2) / n``, stated from version 14 on and assumed for 6, 7 and 9, as
  onnx.reference and onnxruntime do), and the running statistics are::

      running_mean = input_mean * momentum + current_mean * (1 - momentum)
      running_var  = input_var  * momentum + current_var  * (1 - momentum)

* ``epsilon`` and ``momentum`` are float attributes: the oracle uses their float32
  values exactly (``0.9f = 0.89999997615814...``).
* Rank of X: (N x C x D1 ... Dn); from version 9 a rank-1 X of shape (N,) is accepted
  "in which case C is assumed to be 1", so scale/B/mean/var have shape (1,) and the
  training statistics run over all N elements.  onnx shape inference (14, 15) unifies
  the parameter length with 1 for a rank-1 X; onnxruntime accepts it (inference and
  training).  Versions 6 and 7 do not define rank 1 (we do not generate it there).
  A rank-0 X is invalid in every version.
* Training mode: versions 1 and 6 by ``is_test`` (0, the default, is training); versions 7 and
  9 by the number of outputs (the schema allows 1 or 5 output slots; "Output case #1:
  Y, mean, var, saved_mean, saved_var (training mode)"; onnx issue #1042 settles that
  optional outputs mean training); versions 14 and 15 by ``training_mode`` (nonzero is
  training: the attribute is described as a boolean and onnx shape inference treats
  any nonzero value as true).
* ``spatial`` (1, 6, 7): 1 (default) is per-channel statistics; 0 is per-activation
  statistics (reduced over N only), scale/B/mean/var having shape (C x D1 x ... x Dn)
  (version 7 input text; version 9 says deprecated non-spatial models should be
  flattened to (N x C*D1*...*Dn), i.e. the same thing).  Version 1 and 6 text gives the
  parameters as "1-dimensional tensor of size C" for both values, so there spatial=0
  is only unambiguous where D1*...*Dn = 1 (a rank-2 X, or (N, C, 1, 1)); the
  parameters are then taken 1-dimensional of size C*D1*...*Dn (= C).
* ``saved_mean`` / ``saved_var`` (1, 6, 7, 9): thin spec text ("Saved mean/variance used
  during training to speed up gradient computation").  We take them as the current
  batch mean and the current batch (population) *variance*, which is what the names
  say and what onnx.reference's ``_batchnorm_training_mode`` computes.  This is
  UNCERTAIN: onnxruntime (and Caffe2/cuDNN before it) returns the saved *inverse
  standard deviation* ``1/sqrt(var + epsilon)`` in ``saved_var``.  Generators tag
  cases that request ``saved_var`` so reports can separate them.
* Version 1 (opsets 1-5) is version 6 plus the required INTS attribute
  ``consumed_inputs`` ("legacy optimization attribute"): same doc text, same inputs,
  outputs, attributes and defaults (epsilon 1e-5, is_test 0, momentum 0.9, spatial 1),
  same T.  ``consumed_inputs`` marks inputs an implementation may update in place; it
  changes no value, so the oracle ignores it.  Sources: onnx's version converter drops
  it going 5 -> 6 and changes nothing else (``adapters/batch_normalization_5_6.h``;
  6 -> 5 only adds ``consumed_inputs=[0, 0]``, ``batch_normalization_6_5.h``); the two
  schemas in onnx 1.23 have the same doc text, type constraint, attributes (names,
  descriptions, defaults) and input/output options, and differ only in
  ``consumed_inputs`` and the X/Y descriptions (onnx's operator docs,
  ``text_diff_BatchNormalization_1_6``); version 1 has no shape inference function.  The exporters of the time wrote
  ``consumed_inputs=[0, 0, 0, 1, 1]`` (PyTorch 0.3 ``torch/onnx/symbolic.py``
  ``batch_norm``: mean and var consumed, i.e. updated in place by the running-statistic
  outputs 1 and 2).  One difference in the text: version 1 describes X and Y as "4-dimensional
  tensor of shape NCHW", version 6 as (N x C x D1 ... Dn); generators treat rank 4 as
  the defined case and other ranks as contested (rejecting them is defensible).
  Version 1 with spatial=0 follows version 6 (:func:`layout`).
* Types: 1/6/7/9 one type T; 14: T for X/scale/B/Y, U for input_mean/input_var and the
  running outputs; 15: T (X, Y), T1 (scale, B), T2 (input_mean, input_var, running
  outputs).

Legitimate variants (:func:`variants`), the basis of the derived tolerances: the
spec mandates no precision above the types involved, so an implementation may

* accumulate the batch statistics in the accumulation type ``A`` = float32 for
  float16/bfloat16/float X (version 15 says ReduceMean/ReduceVar use float for
  float16; we assume the same minimum for 6-14 and for bfloat16) and double for
  double X, by pairwise summation, sequential summation, or Welford's algorithm
  (sequential, or in 16/8/.. SIMD-like lanes merged with Chan's formula), the result
  possibly a couple of ulps of ``A`` away (other summation orders); always two-pass
  in spirit (E[x^2] - E[x]^2 in the input type is *not* legitimate: it fails large
  offsets);
* do the element-wise part in the X type T (statistics rounded to T, scale/B cast to
  T, rounding after every operation) or in float32 for float16/bfloat16 X, either
  directly ``(x - m) / sqrt(v + eps) * s + b``, multiplying by an inverse square
  root, or *folded* ``a = s / sqrt(v + eps); y = x * a + (b - m * a)``, with ``a`` and
  ``b`` each also one ulp up or down (their rounding is the implementation's choice);
* (the fold is the re-association rule every statistics-based operator shares:
  docs/tolerance.md; the generator adds the propagated rounding of the batch statistics,
  ``conformance.tolerance.statistic_rounding_errors``, to the training-mode tolerances);
* evaluate ``var + epsilon`` and its square root in at least float32 (epsilon is a
  float attribute; flushing a tiny epsilon to float16 would divide by zero for a
  constant channel, which is exactly what epsilon is there to prevent);
* update the running statistics in T2 (momentum rounded to T2) or in float32;
* with mixed types (14: U != T; 15: T, T1, T2 not all equal), evaluate every
  operation in the types of its operands (numpy promotion), e.g. ``sqrt(var + eps)``
  in T2: the statistics only carry T2's precision anyway.  (Uncertain: this makes the
  Y tolerance of a double X with float16 statistics float16-sized.)
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from onnx import TensorProto

from conformance import dtypes
from conformance.opspec import op_spec

_SPEC = op_spec("BatchNormalization")
#: The since_versions of the installed onnx (1, 6, 7, 9, 14, 15).
VERSIONS = tuple(_SPEC.since_versions)
#: Versions whose mode is set by ``is_test`` and whose spatial=0 parameters are 1-D (1, 6).
IS_TEST_VERSIONS = tuple(v for v in VERSIONS if "is_test" in _SPEC.versions[v].attributes)
#: Versions with the ``spatial`` attribute (1, 6, 7).
SPATIAL_VERSIONS = tuple(v for v in VERSIONS if "spatial" in _SPEC.versions[v].attributes)
#: What legacy exporters wrote for ``consumed_inputs`` (mean and var updated in place).
LEGACY_CONSUMED_INPUTS = (0, 0, 0, 1, 1)
DEFAULT_EPSILON = 1e-5
DEFAULT_MOMENTUM = 0.9

#: Formal input names per version (schema order).
INPUTS_OLD = ("X", "scale", "B", "mean", "var")
INPUTS_NEW = ("X", "scale", "B", "input_mean", "input_var")
#: Output names per version as the generated graphs name them.  For 6/7/9 the schema
#: calls outputs 1 and 2 ``mean`` and ``var``, the names of inputs 3 and 4; a graph
#: cannot use one name for an input and an output (SSA), so the graphs call them
#: ``running_mean``/``running_var`` like versions 14 and 15 do.
OUTPUTS_OLD = ("Y", "running_mean", "running_var", "saved_mean", "saved_var")
OUTPUTS_NEW = ("Y", "running_mean", "running_var")

_F16, _BF16, _F32, _F64 = TensorProto.FLOAT16, TensorProto.BFLOAT16, TensorProto.FLOAT, TensorProto.DOUBLE


def input_names(version: int) -> tuple[str, ...]:
    """Formal input names of ``version`` (X, scale, B, mean, var / input_mean, input_var)."""
    return INPUTS_NEW if version >= 14 else INPUTS_OLD


def output_names(version: int) -> tuple[str, ...]:
    """Output names of ``version`` as the generated graphs use them (see :data:`OUTPUTS_OLD`)."""
    return OUTPUTS_NEW if version >= 14 else OUTPUTS_OLD


def version_for_opset(opset: int) -> int:
    """The BatchNormalization version current at ``opset`` (1 <= opset).

    Raises:
        ValueError: opset below 1.
    """
    cands = [v for v in VERSIONS if v <= opset]
    if not cands:
        raise ValueError(f"BatchNormalization does not exist at opset {opset}")
    return max(cands)


def f32(x: float) -> float:
    """``x`` rounded to float32 (how a float attribute is stored), as a Python float."""
    return float(np.float32(x))


def attribute_values(attributes: dict) -> tuple[float, float]:
    """(epsilon, momentum) as the float32 values a model carries, defaults filled in."""
    eps = attributes.get("epsilon")
    mom = attributes.get("momentum")
    return (f32(DEFAULT_EPSILON if eps is None else eps), f32(DEFAULT_MOMENTUM if mom is None else mom))


def is_training(version: int, attributes: dict, outputs) -> bool:
    """Whether the node runs in training mode (see module docstring).

    Args:
        version: operator version (1, 6, 7, 9, 14, 15).
        attributes: node attributes, defaults not filled in.
        outputs: names of the present (requested) outputs.
    """
    if version in IS_TEST_VERSIONS:
        return int(attributes.get("is_test", 0)) == 0
    if version in (7, 9):
        return any(o != "Y" for o in outputs)
    return int(attributes.get("training_mode", 0)) != 0


@dataclass(frozen=True)
class Layout:
    """How X splits into statistic groups.

    Attributes:
        x_shape: shape of X.
        param_shape: shape scale/B/mean/var must have.
        bshape: shape the parameters are reshaped to for broadcasting against X.
        spatial: per-channel (True) or per-activation (False) statistics.
    """

    x_shape: tuple[int, ...]
    param_shape: tuple[int, ...]
    bshape: tuple[int, ...]
    spatial: bool

    @property
    def groups(self) -> int:
        return int(np.prod(self.param_shape))

    @property
    def group_size(self) -> int:
        """Elements per statistic group (N * D1 * ... * Dn, or N for spatial=0)."""
        total = int(np.prod(self.x_shape))
        return total // self.groups if self.groups else 0

    def to_groups(self, x: np.ndarray) -> np.ndarray:
        """(groups, group_size) view of X, each row in X's memory order."""
        if len(self.x_shape) == 1:
            return x.reshape(1, -1)
        if not self.spatial:
            return x.reshape(self.x_shape[0], -1).T.copy()
        return np.moveaxis(x, 1, 0).reshape(self.x_shape[1], -1).copy()

    def bcast(self, p: np.ndarray) -> np.ndarray:
        """A parameter (param_shape) reshaped to broadcast against X."""
        return np.asarray(p).reshape(self.bshape)


def layout(x_shape, spatial: int = 1, version: int | None = None) -> Layout:
    """The :class:`Layout` of an X of ``x_shape``.

    Args:
        x_shape: shape of X.
        spatial: the ``spatial`` attribute (1: per channel, 0: per activation).
        version: operator version; for 1 and 6 (:data:`IS_TEST_VERSIONS`) spatial=0
            parameters are 1-dimensional (size C*D1*...*Dn), else (C x D1 x ... x Dn).

    Raises:
        ValueError: X of rank 0.
    """
    x_shape = tuple(int(d) for d in x_shape)
    if len(x_shape) == 0:
        raise ValueError("BatchNormalization: X must have rank >= 1 (N x C x D1 ... Dn, or (N,))")
    if len(x_shape) == 1:
        return Layout(x_shape, (1,), (1,), True)
    if spatial:
        c = x_shape[1]
        return Layout(x_shape, (c,), (1, c) + (1,) * (len(x_shape) - 2), True)
    pshape = (int(np.prod(x_shape[1:])),) if version in IS_TEST_VERSIONS else x_shape[1:]
    return Layout(x_shape, pshape, (1,) + x_shape[1:], False)


def spatial_of(version: int, attributes: dict) -> int:
    """The ``spatial`` attribute's value (1 where the version has none)."""
    return int(attributes.get("spatial", 1)) if version in SPATIAL_VERSIONS else 1


def check_shapes(version: int, lay: Layout, params: dict[str, tuple[int, ...]]) -> None:
    """Raise ValueError unless every parameter has the shape ``lay`` requires."""
    for name, shape in params.items():
        if tuple(shape) != lay.param_shape:
            raise ValueError(
                f"BatchNormalization-{version}: {name} has shape {list(shape)}, expected {list(lay.param_shape)} "
                f"for X of shape {list(lay.x_shape)}"
            )


# ----------------------------------------------------------------------------- oracle
def exact_stats(g: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Mean and population variance of each row of ``g`` (float64, correctly summed with fsum).

    Rows with NaN/Inf fall back to numpy (the result is NaN/Inf anyway).

    Raises:
        ValueError: an empty row (N = 0: the statistics are undefined).
    """
    k, n = g.shape
    if n == 0:
        raise ValueError("batch statistics of an empty batch are undefined")
    mean = np.empty(k)
    var = np.empty(k)
    for i in range(k):
        row = g[i]
        if not np.isfinite(row).all():
            with np.errstate(invalid="ignore", over="ignore"):
                mean[i] = np.sum(row) / n
                var[i] = np.sum((row - mean[i]) ** 2) / n
            continue
        m = math.fsum(row.tolist()) / n
        d = row - m
        # corrected two-pass: removes the rounding of m from the sum of squares
        var[i] = (math.fsum((d * d).tolist()) - math.fsum(d.tolist()) ** 2 / n) / n
        mean[i] = m
    return mean, np.maximum(var, 0.0)


def _normalize(x, mean, var, scale, b, eps, lay: Layout):
    with np.errstate(invalid="ignore", over="ignore", divide="ignore"):
        return (x - lay.bcast(mean)) / np.sqrt(lay.bcast(var) + eps) * lay.bcast(scale) + lay.bcast(b)


def oracle(version: int, inputs: dict[str, np.ndarray], attributes: dict, outputs) -> dict[str, np.ndarray]:
    """Float64 BatchNormalization of ``version`` (module docstring), requested outputs only.

    Args:
        version: 1, 6, 7, 9, 14 or 15 (version 1's ``consumed_inputs`` is ignored).
        inputs: by formal name (:func:`input_names`), float64 values.
        attributes: node attributes (defaults not filled in).
        outputs: requested output names (:func:`output_names`).

    Returns:
        name -> float64 array (Y: X's shape; statistics: the parameter shape).

    Raises:
        ValueError: rank-0 X, a parameter of the wrong shape, training on an empty batch,
            or an output that does not exist in this version.
    """
    names = input_names(version)
    x, scale, b, mean_in, var_in = (np.asarray(inputs[n], dtype=np.float64) for n in names)
    eps, mom = attribute_values(attributes)
    lay = layout(x.shape, spatial_of(version, attributes), version)
    check_shapes(version, lay, {n: np.shape(inputs[n]) for n in names[1:]})
    bad = [o for o in outputs if o not in output_names(version)]
    if bad:
        raise ValueError(f"BatchNormalization-{version} has no output(s) {bad}")
    if not is_training(version, attributes, outputs):
        return {"Y": _normalize(x, mean_in, var_in, scale, b, eps, lay)} if "Y" in outputs else {}
    mu, var = exact_stats(lay.to_groups(x))
    mu, var = mu.reshape(lay.param_shape), var.reshape(lay.param_shape)
    with np.errstate(invalid="ignore", over="ignore"):
        full = {
            "Y": _normalize(x, mu, var, scale, b, eps, lay),
            "running_mean": mean_in * mom + mu * (1.0 - mom),
            "running_var": var_in * mom + var * (1.0 - mom),
            "saved_mean": mu,
            "saved_var": var,
        }
    return {o: full[o] for o in outputs}


# ----------------------------------------------------------------------------- variants
def _wide(et: int) -> int:
    """float32 for the half types, else the type itself."""
    return _F32 if et in (_F16, _BF16) else et


def _acc(et: int) -> int:
    """Accumulation type of the batch statistics for an X of type ``et``."""
    return _F64 if et == _F64 else _F32


class _Arith:
    """Element-wise arithmetic rounded to one element type after every operation.

    Rounding is numpy's round-to-nearest-even cast, as :func:`conformance.dtypes.round_to`
    does it for these four types (bfloat16 through float32); the callers hold
    ``np.errstate`` for overflow and invalid operations (one context per variant set: a
    context per operation cost more than the arithmetic).
    """

    def __init__(self, et: int):
        self.et = et
        self.dt = None if et == _F64 else dtypes.np_dtype(et)

    def r(self, a):
        a = np.asarray(a, dtype=np.float64)
        if self.dt is None:
            return a
        if self.et == _BF16:
            a = a.astype(np.float32)
        return a.astype(self.dt).astype(np.float64)

    def __call__(self, fn, *args):
        return self.r(fn(*args))


def _sum_pairwise(g: np.ndarray, dt) -> np.ndarray:
    return np.sum(g.astype(dt), axis=1, dtype=dt)


def _sum_sequential(g: np.ndarray, dt) -> np.ndarray:
    g = np.ascontiguousarray(g.astype(dt))
    return np.cumsum(g, axis=1, dtype=dt)[:, -1]


def _stats_two_pass(g: np.ndarray, et: int, summer) -> tuple[np.ndarray, np.ndarray]:
    dt = dtypes.np_dtype(et)
    n = g.shape[1]
    with np.errstate(invalid="ignore", over="ignore"):
        mean = summer(g, dt) / dt.type(n)
        d = g.astype(dt) - mean[:, None]
        var = summer(d * d, dt) / dt.type(n)
    return mean.astype(np.float64), var.astype(np.float64)


def _lanes(n: int) -> int:
    return next(lane for lane in (16, 8, 4, 2, 1) if n % lane == 0)


def _stats_welford(g: np.ndarray, et: int, lanes: int | None = None) -> tuple[np.ndarray, np.ndarray]:
    """Welford in SIMD-like lanes (element i goes to lane i % L), lanes merged by Chan's formula.

    ``lanes=1`` is the plain sequential Welford; the default picks 16/8/4/2/1 lanes.
    """
    dt = dtypes.np_dtype(et).type
    k, n = g.shape
    lanes = _lanes(n) if lanes is None else lanes
    steps = n // lanes
    ga = g.astype(dt).reshape(k, steps, lanes)
    mean = np.zeros((k, lanes), dt)
    m2 = np.zeros((k, lanes), dt)
    with np.errstate(invalid="ignore", over="ignore"):
        for i in range(steps):
            xi = ga[:, i, :]
            delta = xi - mean
            mean = mean + delta / dt(i + 1)
            m2 = m2 + delta * (xi - mean)
        mt, m2t, cnt = mean[:, 0], m2[:, 0], steps
        for j in range(1, lanes):
            tot = cnt + steps
            delta = mean[:, j] - mt
            mt = mt + delta * dt(steps / tot)
            m2t = m2t + m2[:, j] + delta * delta * dt(cnt * steps / tot)
            cnt = tot
        var = m2t / dt(n)
    return mt.astype(np.float64), var.astype(np.float64)


def stats_variants(g: np.ndarray, x_type: int) -> dict[str, tuple[np.ndarray, np.ndarray]]:
    """Legitimate (mean, population variance) of each row of ``g`` at the mandated precision.

    Args:
        g: (groups, n) float64 values of X.
        x_type: element type of X (decides the accumulation type).

    Returns:
        name -> (mean, var), float64 arrays of values rounded in the accumulation type.
    """
    with np.errstate(invalid="ignore", over="ignore", divide="ignore"):
        return _stats_variants(g, x_type)


def _stats_variants(g: np.ndarray, x_type: int) -> dict[str, tuple[np.ndarray, np.ndarray]]:
    acc = _acc(x_type)
    pairwise = _stats_two_pass(g, acc, _sum_pairwise)
    a = _Arith(acc)
    bump = 1.0 + 2.0 * dtypes.eps(acc)
    return {
        "pairwise": pairwise,
        "sequential": _stats_two_pass(g, acc, _sum_sequential),
        "welford-lanes": _stats_welford(g, acc),
        "welford": _stats_welford(g, acc, lanes=1),
        # any summation order: the statistics a couple of ulps of A away
        "pairwise+2ulp": (a.r(pairwise[0] * bump), a.r(pairwise[1] * bump)),
    }


def _y_forms(x, mean, var, scale, b, eps, lay: Layout, ct: int) -> dict[str, np.ndarray]:
    """Y computed in ``ct`` three ways; var + eps and its square root in at least float32."""
    a, e = _Arith(ct), _Arith(_wide(ct))
    x = a.r(x)
    m, s, bb = a.r(lay.bcast(mean)), a.r(lay.bcast(scale)), a.r(lay.bcast(b))
    den = e(np.add, e.r(lay.bcast(var)), eps)
    sd = a.r(e(np.sqrt, den))
    inv = a.r(e(lambda d: 1.0 / np.sqrt(d), den))
    direct = a(np.add, a(np.multiply, a(np.divide, a(np.subtract, x, m), sd), s), bb)
    rsqrt = a(np.add, a(np.multiply, a(np.multiply, a(np.subtract, x, m), inv), s), bb)
    fa = a(np.multiply, s, inv)
    fb = a(np.subtract, bb, a(np.multiply, m, fa))
    folded = a(np.add, a(np.multiply, x, fa), fb)
    forms = {"direct": direct, "rsqrt": rsqrt, "folded": folded}
    # The folded constants a and b are rounded in whatever way the implementation computes
    # them (in ct, in float32 then rounded, with or without FMA): one ulp of ct either way.
    # With var ~ 0, a is huge and x*a + b cancels, so this rounding dominates the error of
    # any folded kernel (measured: tract's float16 fold, 2.4x the unperturbed spread).
    dt = dtypes.np_dtype(ct)
    for name, (pa, pb) in {"a+ulp": (np.inf, None), "a-ulp": (-np.inf, None),
                           "b+ulp": (None, np.inf), "b-ulp": (None, -np.inf)}.items():
        qa = fa if pa is None else np.nextafter(fa.astype(dt), dt.type(pa)).astype(np.float64)
        qb = fb if pb is None else np.nextafter(fb.astype(dt), dt.type(pb)).astype(np.float64)
        forms[f"folded/{name}"] = a(np.add, a(np.multiply, x, qa), qb)
    return forms


def _y_operand_types(inputs, names, types, eps, lay: Layout) -> np.ndarray:
    """Y with every operation in its operands' types (numpy promotion), e.g. sqrt(var + eps) in T2.

    Only used for mixed T/T1/T2 (14, 15): the statistics arrive in T2, and an
    implementation may evaluate the statistics-only subexpressions in T2 -- except
    ``var + epsilon``, in at least float32 like every variant (module docstring): epsilon is
    a float32 attribute, and a float16 T2 would flush a tiny one to 0 (numpy's weak Python
    scalar did: a constant float16 channel then divided by zero).
    """
    x, s, b, m, v = (np.asarray(inputs[n], dtype=np.float64).astype(dtypes.np_dtype(types[n])) for n in names)
    with np.errstate(invalid="ignore", over="ignore", divide="ignore"):
        # var + epsilon in at least float32 whatever numpy's scalar promotion (numpy 1 kept a
        # float16 array's type when adding a float32 scalar; NEP 50 widens it)
        vv = lay.bcast(v)
        wide = np.promote_types(vv.dtype, np.float32)
        y = (x - lay.bcast(m)) / np.sqrt(vv.astype(wide) + wide.type(np.float32(eps))) * lay.bcast(s) + lay.bcast(b)
    return dtypes.round_to(np.asarray(y, dtype=np.float64), types[names[0]]).astype(np.float64)


def _compute_types(et: int) -> list[int]:
    return [et] if _wide(et) == et else [et, _wide(et)]


def variants(
    version: int, inputs: dict[str, np.ndarray], attributes: dict, outputs, types: dict[str, int]
) -> dict[str, dict[str, np.ndarray]]:
    """Requested outputs computed by legitimate algorithms at the mandated precision.

    Args:
        version, inputs, attributes, outputs: as for :func:`oracle`.
        types: element type by formal input name (X -> T, scale -> T1, mean -> T2).

    Returns:
        output name -> {variant name -> float64 array (values rounded as computed)}.

    Raises:
        ValueError: as :func:`oracle`.
    """
    with np.errstate(invalid="ignore", over="ignore", divide="ignore"):
        return _variants(version, inputs, attributes, outputs, types)


def _variants(version, inputs, attributes, outputs, types):
    names = input_names(version)
    x, scale, b, mean_in, var_in = (np.asarray(inputs[n], dtype=np.float64) for n in names)
    t, t2 = types[names[0]], types[names[3]]
    eps, mom = attribute_values(attributes)
    lay = layout(x.shape, spatial_of(version, attributes), version)
    check_shapes(version, lay, {n: np.shape(inputs[n]) for n in names[1:]})
    out: dict[str, dict[str, np.ndarray]] = {o: {} for o in outputs}
    if not is_training(version, attributes, outputs):
        if "Y" in outputs:
            for ct in _compute_types(t):
                for form, y in _y_forms(x, mean_in, var_in, scale, b, eps, lay, ct).items():
                    out["Y"][f"{dtypes.type_name(ct)}/{form}"] = y
            if len({t, types[names[1]], t2}) > 1:
                out["Y"]["operand-types"] = _y_operand_types(inputs, names, types, eps, lay)
        return out
    stats = stats_variants(lay.to_groups(x), t)
    tr = _Arith(t)
    for sname, (mu, var) in stats.items():
        mu, var = mu.reshape(lay.param_shape), var.reshape(lay.param_shape)
        if "Y" in outputs:
            for ct in _compute_types(t):
                for form, y in _y_forms(x, mu, var, scale, b, eps, lay, ct).items():
                    out["Y"][f"{sname}/{dtypes.type_name(ct)}/{form}"] = y
        for oname, inp, cur in (("running_mean", mean_in, mu), ("running_var", var_in, var)):
            if oname not in outputs:
                continue
            for ct in _compute_types(t2):
                a = _Arith(ct)
                m = a.r(mom)
                one_minus = (a(np.subtract, 1.0, m), a.r(f32(1.0 - mom)))
                for k, om in enumerate(one_minus):
                    out[oname][f"{sname}/{dtypes.type_name(ct)}/om{k}"] = a(
                        np.add, a(np.multiply, a.r(inp), m), a(np.multiply, a.r(cur), om)
                    )
        if "saved_mean" in outputs:
            out["saved_mean"][sname] = tr.r(mu)
        if "saved_var" in outputs:
            out["saved_var"][sname] = tr.r(var)
    return out


def propagated_bounds(version: int, inputs: dict[str, np.ndarray], attributes: dict, x_type: int) -> dict[str, float]:
    """Training mode: bounds of the propagated rounding of batch statistics ``STAT_ULPS`` ulps
    of the mandated precision off (:func:`conformance.tolerance.statistic_rounding_errors`;
    docs/tolerance.md), per output: ``|scale| * E_prop`` for Y, ``dm`` / ``dv + dm^2`` for
    saved_mean / saved_var and ``(1 - momentum)`` times them for the running statistics.

    The mean's mandated precision is X's type T (the elementwise part may hold it in T), so
    the bound uses T's ulps even where the sums accumulate in float.

    Args:
        version, inputs, attributes: as for :func:`oracle`.
        x_type: ONNX element type of X.

    Returns:
        output name (:func:`output_names`) -> the largest finite bound (0.0 where none).
    """
    from conformance.tolerance import statistic_rounding_errors

    names = input_names(version)
    x = np.asarray(inputs[names[0]], dtype=np.float64)
    eps, mom = attribute_values(attributes)
    lay = layout(x.shape, spatial_of(version, attributes), version)
    pr = statistic_rounding_errors(lay.to_groups(x), x_type, epsilon=eps)
    gain = np.abs(np.asarray(inputs[names[1]], dtype=np.float64)).reshape(-1, 1)

    def mx(a):
        a = a[np.isfinite(a)]
        return float(a.max()) if a.size else 0.0

    om = 1.0 - mom
    out = {"Y": mx(pr["y"] * gain), "running_mean": om * mx(pr["mean"]), "running_var": om * mx(pr["var"])}
    if version < 14:
        out.update(saved_mean=mx(pr["mean"]), saved_var=mx(pr["var"]))
    return out


def output_types(version: int, types: dict[str, int]) -> dict[str, int]:
    """Element type of every output of ``version`` given the input types by formal name."""
    names = input_names(version)
    t, t2 = types[names[0]], types[names[3]]
    return {o: (t if o in ("Y", "saved_mean", "saved_var") else t2) for o in output_names(version)}
