"""Float64 oracle for ai.onnx LayerNormalization-17 (unchanged through opset 28), and
the legitimate algorithm variants at the precision the spec mandates.

Spec followed (``onnx.defs.get_schema("LayerNormalization", 17)``):

* ``axis`` in ``[-r, r)``; the normalized axes are ``axis .. r-1``; with ``n`` the
  number of elements in ``X.shape[axis:]`` and one *row* per index of ``X.shape[:axis]``::

      Mean      = ReduceMean(X)                    over the normalized axes
      D         = X - Mean
      Var       = ReduceMean(D * D)                population variance (divide by n)
      InvStdDev = 1 / sqrt(Var + epsilon)
      Y         = D * InvStdDev * Scale + B        B optional (absent = 0)

* ``Mean`` and ``InvStdDev`` have type ``U`` chosen by ``stash_type`` (a TensorProto
  data type: 1 = float, 16 = bfloat16; nothing else is in U's type constraint) and
  shape ``[d0, ..., d(axis-1), 1, ..., 1]``; stage one (the statistics and
  ``Normalized = D * InvStdDev``) is computed in ``U``; ``Normalized`` is cast to ``T``
  and stage two (``* Scale + B``) is computed in ``T``.
* ``epsilon`` is a 32-bit float attribute: the oracle uses exactly ``float32(epsilon)``.
  (The function body casts it to ``U``; the variants do the same.)
* ``Scale`` and ``B`` broadcast unidirectionally.  The text says "to tensor X".  The
  function body flattens ``Scale`` to ``[1, size]`` and multiplies it with the
  ``[rows, n]`` normalized matrix, so it only works when the parameter has ``n``
  elements or one.  We follow the text inside ``X.shape[axis:]``: size-1 dims, fewer
  dims, extra leading 1s and rank 0 are valid (a runtime that inlines the function
  body rejects some of them: a defect of the body, reported as a finding).  A
  parameter that is broadcastable to ``X`` but *varies along an axis before*
  ``axis`` (e.g. ``Scale`` ``[2, 3, 4]`` for ``X`` ``[2, 3, 4]``, ``axis = 1``) is
  *contested*: the text's "broadcastable to X" admits it, the operator's meaning (an
  affine transform per normalized element) and the function body do not.
  :func:`check_param_shape` raises for it and the generator makes no case of it.
* An empty normalized extent (``n == 0``) is undefined (mean of nothing, a 0/0 in
  the equations): :func:`layer_normalization` raises.  Empty outer dimensions are
  fine: all outputs are empty.
* Special values follow the formula in IEEE arithmetic: a NaN in a row makes the
  whole row of ``Y``, its ``Mean`` and its ``InvStdDev`` NaN; a row holding ``+inf``
  (and no ``-inf``/NaN) has ``Mean = +inf`` and ``Var = NaN`` (``inf - inf``), so
  ``InvStdDev`` and the row of ``Y`` are NaN.

Variance: one-pass or two-pass?  The operator's *text* gives the two-pass
equations above (``D = Sub(X, Mean)``, ``Var = ReduceMean(Mul(D, D))``).  The
*function body* that onnx attaches to the schema (opsets 17 and 18 builders)
computes ``Var = ReduceMean(XU * XU) - Mean * Mean`` -- the one-pass form -- in
``U``.  The two agree in exact arithmetic only.  In ``U = float`` the one-pass form
loses the whole variance when ``mean >> std`` (catastrophic cancellation: for
``X ~ 1e4 + N(0, 1)`` ``E[x^2] ~ 1e8`` has an ulp of 8), may even go negative (NaN
after Sqrt), and its error is not bounded by any multiple of the working
precision relative to the result.  We therefore treat the text's equations as the
definition and the function body's one-pass variance as a numerically unstable
expansion of it, NOT as a legitimate variant: large-offset cases that reject a
one-pass kernel in ``U`` (onnxruntime's CPU kernel before its two-pass fix -- 1.31.1
passes them --, a runtime that expands the function body) are findings.  :func:`onepass_variant` computes
the function body literally so tests can show the difference.

Legitimate variants (:func:`variant_outputs`), all at the mandated precision
(statistics in ``U``, ``X`` cast to ``U`` first as the function body does, each
elementwise operation rounded to ``U``, ``ReduceMean`` accumulating in at least
float32 and rounding its result to ``U``):

* accumulation order: pairwise (``np.sum``), sequential (``np.cumsum(...)[..., -1]``),
  reverse sequential, Welford, a float64 accumulator;
* mean as ``sum / n`` or ``sum * (1/n)``;
* ``InvStdDev`` as ``Reciprocal(Sqrt(.))`` rounded twice or a fused ``rsqrt``;
* ``Normalized`` as ``Div(D, StdDev)`` (function body) or ``Mul(D, InvStdDev)`` (text);
* stage two cast by cast (``Cast(Normalized, T)``, ``Mul`` and ``Add`` in ``T``),
  with one cast at the end (computed in float32, or double for ``T = double``), or
  fused (one rounding);
* folded (:data:`VARIANTS` ``folded-pairwise``): ``a = Scale * InvStdDev`` and
  ``c = B - Mean * a`` in ``U``, ``Y = X * a + c`` in ``U``, one cast to ``T``
  (the re-association rule of :mod:`conformance.reference.normalization`: folding is
  legitimate at no less than the mandated precision of each stage -- here ``U`` --, not
  with ``a``/``c`` rounded to ``T``);
* for ``stash_type = 16`` also the statistics computed in float32 (more precise than
  mandated) and rounded to bfloat16 only on output.

Accumulating a ``ReduceMean`` in bfloat16 itself (each partial sum rounded to 8
bits) is not modelled: it stagnates on long rows and no reasonable reduction does
it; the op-level result of ``ReduceMean`` is what is rounded to ``U``.
"""

from __future__ import annotations

import ml_dtypes
import numpy as np
import onnx.defs
from onnx import TensorProto

from .. import dtypes
from ..tolerance import DEFAULT_ULPS, Tolerance, chain_ulps, derive_tolerance, statistic_rounding_errors

#: The operator's name and the version this module follows.
OP, SINCE = "LayerNormalization", 17
#: Outputs in schema order.
OUTPUT_NAMES = tuple(f.name for f in onnx.defs.get_schema(OP, SINCE).outputs)
#: stash_type values allowed by U's type constraint -> ONNX element type of U (the attribute's
#: value is the element type itself: 1 = float, 16 = bfloat16), read from the schema.
STASH_TYPES = {dtypes.elem_type(t[7:-1]): dtypes.elem_type(t[7:-1])
               for c in onnx.defs.get_schema(OP, SINCE).type_constraints if c.type_param_str == "U"
               for t in c.allowed_type_strs}

_F32 = np.dtype(np.float32)
_BF16 = np.dtype(ml_dtypes.bfloat16)
_F64 = np.dtype(np.float64)
_NP = {
    TensorProto.FLOAT16: np.dtype(np.float16),
    TensorProto.BFLOAT16: _BF16,
    TensorProto.FLOAT: _F32,
    TensorProto.DOUBLE: _F64,
}


# ----------------------------------------------------------------------------- checks
def normalize_axis(axis: int, rank: int) -> int:
    """Return ``axis`` in ``[0, rank)``.

    Raises:
        ValueError: ``axis`` outside ``[-rank, rank)`` (the spec's allowed range), or rank 0.
    """
    if rank < 1:
        raise ValueError("LayerNormalization needs X of rank >= 1")
    if not -rank <= axis < rank:
        raise ValueError(f"axis {axis} out of range [-{rank}, {rank}) for X of rank {rank}")
    return axis + rank if axis < 0 else axis


def stash_elem_type(stash_type: int) -> int:
    """ONNX element type of ``U`` for a ``stash_type`` attribute value.

    Raises:
        ValueError: not in U's type constraint (tensor(float), tensor(bfloat16)).
    """
    try:
        return STASH_TYPES[int(stash_type)]
    except KeyError:
        raise ValueError(f"stash_type {stash_type} is not an allowed U type (1 = float, 16 = bfloat16)") from None


def epsilon_value(epsilon: float) -> float:
    """The epsilon the node carries: the attribute is a 32-bit float."""
    return float(np.float32(epsilon))


def check_param_shape(name: str, shape: tuple[int, ...], x_shape: tuple[int, ...], axis: int) -> None:
    """Check that a ``Scale``/``B`` shape is defined for ``X.shape`` and ``axis`` (module docstring).

    Raises:
        ValueError: not unidirectionally broadcastable to ``X`` (message starts with
            ``"not broadcastable"``), or broadcastable to ``X`` but varying along an axis
            before ``axis`` (message starts with ``"contested"``).
    """
    axis = normalize_axis(axis, len(x_shape))
    shape, x_shape = tuple(int(d) for d in shape), tuple(int(d) for d in x_shape)
    if len(shape) > len(x_shape):
        raise ValueError(f"not broadcastable: {name} of shape {list(shape)} has more dims than X {list(x_shape)}")
    off = len(x_shape) - len(shape)
    for i, d in enumerate(shape):
        xd = x_shape[off + i]
        if d != 1 and d != xd:
            raise ValueError(
                f"not broadcastable: {name} of shape {list(shape)} to X {list(x_shape)} (dim {off + i}: {d} vs {xd})"
            )
    for i, d in enumerate(shape):
        if off + i < axis and d != 1:
            raise ValueError(
                f"contested: {name} of shape {list(shape)} varies along axis {off + i} < axis {axis} "
                "(broadcastable to X per the text, not per the function body)"
            )


def _check(X, Scale, B, axis, stash_type) -> tuple[int, int, int]:
    x_shape = tuple(np.shape(X))
    ax = normalize_axis(int(axis), len(x_shape))
    stash_elem_type(stash_type)
    check_param_shape("Scale", np.shape(Scale), x_shape, ax)
    if B is not None:
        check_param_shape("B", np.shape(B), x_shape, ax)
    rows = int(np.prod(x_shape[:ax], dtype=np.int64))
    n = int(np.prod(x_shape[ax:], dtype=np.int64))
    if n == 0:
        raise ValueError(f"X.shape[axis:] = {list(x_shape[ax:])} is empty: the mean of nothing is undefined")
    return ax, rows, n


def reduced_shape(x_shape: tuple[int, ...], axis: int) -> tuple[int, ...]:
    """Shape of ``Mean``/``InvStdDev``: ``[d0, ..., d(axis-1), 1, ..., 1]``."""
    ax = normalize_axis(axis, len(x_shape))
    return tuple(x_shape[:ax]) + (1,) * (len(x_shape) - ax)


# ----------------------------------------------------------------------------- oracle
def layer_normalization(
    X: np.ndarray,
    Scale: np.ndarray,
    B: np.ndarray | None = None,
    *,
    axis: int = -1,
    epsilon: float = 1e-5,
    stash_type: int = 1,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Float64 oracle of LayerNormalization-17 (module docstring).

    Args:
        X: input of rank r >= 1 (any float dtype; its values are taken exactly).
        Scale, B: parameters (B optional), shapes per :func:`check_param_shape`.
        axis: first normalized axis, in ``[-r, r)``.
        epsilon: the attribute (rounded to float32 like the node stores it).
        stash_type: 1 or 16; only validated here (the oracle is float64 either way).

    Returns:
        ``(Y, Mean, InvStdDev)`` as float64: ``Y`` of ``X``'s shape, the statistics of
        :func:`reduced_shape`.  Round them to ``T`` / ``U`` for expected outputs.

    Raises:
        ValueError: axis out of range, a bad stash_type, a parameter shape that is not
            broadcastable (or contested), or an empty normalized extent.
    """
    ax, rows, n = _check(X, Scale, B, axis, stash_type)
    x_shape = tuple(np.shape(X))
    x = np.asarray(X).astype(np.float64).reshape(rows, n)
    eps = epsilon_value(epsilon)
    with np.errstate(invalid="ignore", over="ignore", divide="ignore"):
        # corrected two-pass: D is accurate to float64 relative to itself even when mean >> std
        m0 = np.mean(x, axis=1, keepdims=True) if rows else np.zeros((0, 1))
        d = x - m0
        c = np.mean(d, axis=1, keepdims=True) if rows else np.zeros((0, 1))
        fin = np.isfinite(m0)
        d = np.where(fin, d - c, d)
        mean = np.where(fin, m0 + c, m0)
        var = np.mean(d * d, axis=1, keepdims=True) if rows else np.zeros((0, 1))
        inv = 1.0 / np.sqrt(var + eps)
        y = (d * inv).reshape(x_shape) * np.asarray(Scale, dtype=np.float64)
        if B is not None:
            y = y + np.asarray(B, dtype=np.float64)
    rshape = reduced_shape(x_shape, ax)
    return y.reshape(x_shape), mean.reshape(rshape), inv.reshape(rshape)


# ----------------------------------------------------------------------------- variants
def _rnd(a, dt: np.dtype) -> np.ndarray:
    """Round float64 values to ``dt`` and back (exact emulation of one correctly rounded op
    for float32/bfloat16/float16: double rounding from float64 is innocuous there)."""
    a = np.asarray(a, dtype=np.float64)
    if dt == _F64:
        return a
    if dt == _BF16:
        return a.astype(np.float32).astype(_BF16).astype(np.float64)
    return a.astype(dt).astype(np.float64)


def _acc_sum(a: np.ndarray, acc: str) -> np.ndarray:
    """Row sums of a (rows, n) float64 array of float32-representable values, accumulated
    in float32 (pairwise/sequential/reverse) or float64 (``wide``)."""
    if acc == "wide":
        return np.sum(a, axis=1)
    f = a.astype(np.float32)
    if a.shape[0] == 0:
        return np.zeros(0)
    if acc == "pairwise":
        return np.sum(f, axis=1).astype(np.float64)
    if acc == "sequential":
        return np.cumsum(f, axis=1)[:, -1].astype(np.float64)
    if acc == "reverse":
        return np.cumsum(f[:, ::-1], axis=1)[:, -1].astype(np.float64)
    raise ValueError(f"unknown accumulation {acc!r}")


def _welford(a: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Welford's running mean and M2 in float32 over the rows of a (rows, n) array."""
    f = a.astype(np.float32)
    mean = np.zeros(a.shape[0], np.float32)
    m2 = np.zeros(a.shape[0], np.float32)
    for k in range(a.shape[1]):
        xk = f[:, k]
        delta = xk - mean
        mean = mean + delta / np.float32(k + 1)
        m2 = m2 + delta * (xk - mean)
    return mean.astype(np.float64), m2.astype(np.float64)


#: name -> (accumulation, mean as "div" or "recip", inv "cast" or "rsqrt",
#:          normalized "div" or "mul", stage two "cast", "onecast" or "fused")
VARIANTS = {
    "body-pairwise-div-castbycast": ("pairwise", "div", "cast", "div", "cast"),
    "text-pairwise-mul-castbycast": ("pairwise", "div", "cast", "mul", "cast"),
    "sequential-mul-onecast": ("sequential", "div", "cast", "mul", "onecast"),
    "reverse-div-castbycast": ("reverse", "div", "cast", "div", "cast"),
    "welford-mul-onecast": ("welford", "div", "cast", "mul", "onecast"),
    "recip-rsqrt-fused": ("pairwise", "recip", "rsqrt", "mul", "fused"),
    "wideacc-mul-castbycast": ("wide", "div", "cast", "mul", "cast"),
    # the fold (re-association rule): a = Scale * InvStdDev, c = B - Mean * a, Y = X * a + c,
    # a and c in U, then one cast to T (the stage-one precision is kept; folding into T is not)
    "folded-pairwise": ("pairwise", "div", "cast", "mul", "folded"),
}
#: extra variants for stash_type 16: statistics in float32, rounded to bfloat16 on output.
VARIANTS_STASH16 = {
    "f32stats-pairwise-onecast": ("pairwise", "div", "cast", "mul", "onecast"),
    "f32stats-sequential-castbycast": ("sequential", "div", "cast", "mul", "cast"),
}


def _pipeline(X, Scale, B, ax, epsilon, t_dt, comp_dt, u_dt, spec):
    acc, mean_mode, inv_mode, norm_mode, y_mode = spec
    x_shape = tuple(np.shape(X))
    rows = int(np.prod(x_shape[:ax], dtype=np.int64))
    n = int(np.prod(x_shape[ax:], dtype=np.int64))
    rc = lambda a: _rnd(a, comp_dt)  # noqa: E731 - one rounding to the computation type
    r32 = lambda a: _rnd(a, _F32)  # noqa: E731
    xc = rc(np.asarray(X, dtype=np.float64).reshape(rows, n))  # XU = Cast(X, U)
    eps = rc(epsilon_value(epsilon))  # Epsilon = Cast(FloatEpsilon, U)
    if acc == "welford":
        m, m2 = _welford(xc)
        mean = rc(m)
        d = rc(xc - mean[:, None])
        var = rc(r32(m2 / n))
    else:
        s = _acc_sum(xc, acc)
        acc_r = (lambda a: a) if acc == "wide" else r32
        if mean_mode == "div":
            mean = rc(acc_r(s / n))
        else:
            mean = rc(acc_r(s * acc_r(1.0 / n)))
        d = rc(xc - mean[:, None])
        dd = rc(d * d)
        var = rc(acc_r(_acc_sum(dd, acc) / n))
    vpe = rc(var + eps)
    std = rc(np.sqrt(vpe))
    inv = rc(1.0 / std) if inv_mode == "cast" else rc(1.0 / np.sqrt(vpe))
    normalized = rc(d / std[:, None]) if norm_mode == "div" else rc(d * inv[:, None])
    normalized = normalized.reshape(x_shape)
    s_ = np.asarray(Scale, dtype=np.float64)
    b_ = None if B is None else np.asarray(B, dtype=np.float64)
    if y_mode == "folded":
        sr = np.broadcast_to(s_, x_shape).reshape(rows, n)
        br = np.zeros((rows, n)) if b_ is None else np.broadcast_to(b_, x_shape).reshape(rows, n)
        a = rc(rc(sr) * inv[:, None])
        c = rc(rc(br) - rc(mean[:, None] * a))
        y = _rnd(rc(rc(xc * a) + c), t_dt).reshape(x_shape)
    elif y_mode == "cast":
        y = _rnd(_rnd(normalized, t_dt) * s_, t_dt)
        if b_ is not None:
            y = _rnd(y + b_, t_dt)
    elif y_mode == "onecast":
        w = _F64 if t_dt == _F64 else _F32
        y = _rnd(normalized * s_, w)
        if b_ is not None:
            y = _rnd(y + b_, w)
        y = _rnd(y, t_dt)
    else:
        y = _rnd(normalized * s_ + (0.0 if b_ is None else b_), t_dt)
    rshape = reduced_shape(x_shape, ax)
    return (
        np.broadcast_to(y, x_shape).copy(),
        _rnd(mean, u_dt).reshape(rshape),
        _rnd(inv, u_dt).reshape(rshape),
    )


def variant_outputs(
    X: np.ndarray,
    Scale: np.ndarray,
    B: np.ndarray | None = None,
    *,
    axis: int = -1,
    epsilon: float = 1e-5,
    stash_type: int = 1,
    t_elem: int | None = None,
) -> dict[str, tuple[np.ndarray, np.ndarray, np.ndarray]]:
    """``(Y, Mean, InvStdDev)`` of every legitimate variant (module docstring), as float64
    arrays holding values of ``T`` / ``U``.

    Args:
        X, Scale, B, axis, epsilon, stash_type: as for :func:`layer_normalization`.
        t_elem: ONNX element type ``T`` (default: from ``X``'s dtype).

    Raises:
        ValueError: as :func:`layer_normalization`.
    """
    ax, _, _ = _check(X, Scale, B, axis, stash_type)
    t_dt = _NP[t_elem] if t_elem is not None else np.dtype(np.asarray(X).dtype)
    u_dt = _NP[stash_elem_type(stash_type)]
    out = {}
    with np.errstate(invalid="ignore", over="ignore", divide="ignore"):
        for name, spec in VARIANTS.items():
            out[name] = _pipeline(X, Scale, B, ax, epsilon, t_dt, u_dt, u_dt, spec)
        if u_dt == _BF16:
            for name, spec in VARIANTS_STASH16.items():
                out[name] = _pipeline(X, Scale, B, ax, epsilon, t_dt, _F32, u_dt, spec)
    return out


def onepass_variant(
    X: np.ndarray,
    Scale: np.ndarray,
    B: np.ndarray | None = None,
    *,
    axis: int = -1,
    epsilon: float = 1e-5,
    stash_type: int = 1,
    t_elem: int | None = None,
    compute_elem: int | None = None,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The function body's one-pass variance ``E[x^2] - E[x]^2`` -- NOT a legitimate variant.

    Computed with ``ReduceMean`` accumulating pairwise in float32 and every other
    operation rounded to ``compute_elem`` (default ``U``; pass ``T`` to model a kernel
    that works in the input type).  Used by tests to show that large-offset cases
    separate it from the text's two-pass definition.
    """
    ax, rows, n = _check(X, Scale, B, axis, stash_type)
    x_shape = tuple(np.shape(X))
    t_dt = _NP[t_elem] if t_elem is not None else np.dtype(np.asarray(X).dtype)
    u_dt = _NP[stash_elem_type(stash_type)]
    c_dt = _NP[compute_elem] if compute_elem is not None else u_dt
    rc = lambda a: _rnd(a, c_dt)  # noqa: E731
    with np.errstate(invalid="ignore", over="ignore", divide="ignore"):
        xc = rc(np.asarray(X, dtype=np.float64).reshape(rows, n))
        mean = rc(_acc_sum(xc, "pairwise") / n)
        msq = rc(_acc_sum(rc(xc * xc), "pairwise") / n)
        var = rc(msq - rc(mean * mean))
        std = rc(np.sqrt(rc(var + rc(epsilon_value(epsilon)))))
        normalized = rc((xc - mean[:, None]) / std[:, None]).reshape(x_shape)
        y = _rnd(_rnd(normalized, t_dt) * np.asarray(Scale, dtype=np.float64), t_dt)
        if B is not None:
            y = _rnd(y + np.asarray(B, dtype=np.float64), t_dt)
        inv = rc(1.0 / std)
    rshape = reduced_shape(x_shape, ax)
    return y, _rnd(mean, u_dt).reshape(rshape), _rnd(inv, u_dt).reshape(rshape)


# ----------------------------------------------------------------------------- tolerances
def tolerances(
    X: np.ndarray,
    Scale: np.ndarray,
    B: np.ndarray | None = None,
    *,
    axis: int = -1,
    epsilon: float = 1e-5,
    stash_type: int = 1,
    t_elem: int,
    outputs=OUTPUT_NAMES,
    expected: dict | None = None,
) -> dict[str, Tolerance]:
    """Per-output tolerances of one data set (:func:`conformance.tolerance.derive_tolerance`).

    The spread of the legitimate variants (:func:`variant_outputs`), plus a few ulps of the
    precision the spec mandates for the output -- ``U`` for Mean/InvStdDev, the coarser of
    ``T`` and ``U`` for Y (Y is never more precise than Normalized, which is computed in
    ``U``: double X with float statistics gets float ulps) -- at the output's natural unit:
    max |X| for Mean (its rounding error scales with the summands, not with the mean),
    max(|Normalized*Scale| + |B|) for Y (B can cancel Normalized*Scale), max |InvStdDev|
    for InvStdDev; plus the propagated rounding of statistics computed
    :data:`conformance.tolerance.STAT_ULPS` ulps of ``U`` off
    (:func:`conformance.tolerance.statistic_rounding_errors`: ``|Scale| * E_prop`` for Y,
    ``dm`` for Mean, the deviation of ``1/sqrt(v' + eps)`` for InvStdDev; docs/tolerance.md).

    Args:
        X, Scale, B, axis, epsilon, stash_type: as for :func:`layer_normalization` (values
            exactly representable in ``T``; any float dtype).
        t_elem: ONNX element type ``T`` of X, Scale, B and Y.
        outputs: the output names wanted (schema names).
        expected: name -> the float64 oracle output (default: computed here).

    Returns:
        name -> :class:`~conformance.tolerance.Tolerance`, for each name of ``outputs``.

    Raises:
        ValueError: as :func:`layer_normalization`; a variant non-finite where the oracle
            is finite (a reference bug).
    """
    ax, rows, n = _check(X, Scale, B, axis, stash_type)
    u = stash_elem_type(stash_type)
    x_shape = tuple(np.shape(X))
    x64 = np.asarray(X, dtype=np.float64)
    s64 = np.asarray(Scale, dtype=np.float64)
    b64 = None if B is None else np.asarray(B, dtype=np.float64)
    if expected is None:
        expected = dict(zip(OUTPUT_NAMES, layer_normalization(x64, s64, b64, axis=axis, epsilon=epsilon,
                                                              stash_type=stash_type)))
    var = variant_outputs(x64, s64, b64, axis=axis, epsilon=epsilon, stash_type=stash_type, t_elem=t_elem)
    pr = statistic_rounding_errors(x64.reshape(rows, n), u, epsilon=epsilon_value(epsilon))
    gain = np.broadcast_to(np.abs(s64), x_shape).reshape(rows, n)
    prop = {"Y": pr["y"] * gain, "Mean": pr["mean"], "InvStdDev": pr["inv"]}
    fin = x64[np.isfinite(x64)]
    x_scale = float(np.max(np.abs(fin))) if fin.size else 0.0
    y64 = np.asarray(expected["Y"], dtype=np.float64)
    bb = np.zeros(()) if b64 is None else b64
    with np.errstate(invalid="ignore"):
        terms = (np.abs(y64 - bb) + np.abs(bb)).ravel()
    terms = terms[np.isfinite(terms)]
    y_scale = float(np.max(terms)) if terms.size else 0.0
    out = {}
    for k, name in enumerate(OUTPUT_NAMES):
        if name not in outputs:
            continue
        elem = t_elem if name == "Y" else u
        ulp_elem = u if name == "Y" and dtypes.eps(u) > dtypes.eps(t_elem) else elem
        unit = {"Mean": x_scale or 1.0, "Y": y_scale or 1.0}.get(name)
        # the library steps of each output at the budget table's bounds (chain_ulps): Y's and
        # InvStdDev's sqrt and division, the mean's division by n
        steps = {"Y": ("sqrt", "divide"), "InvStdDev": ("sqrt", "divide"), "Mean": ("divide",)}.get(name)
        ulps = chain_ulps(steps, dtypes.type_name(ulp_elem)) if steps else DEFAULT_ULPS
        out[name] = derive_tolerance(np.asarray(expected[name], dtype=np.float64), {v: o[k] for v, o in var.items()},
                                     ulp_elem, scale=unit, propagated=prop[name], ulps=ulps)
    return out
