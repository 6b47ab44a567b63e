"""Float64 oracles and legitimate variants for the ai.onnx normalization family (besides
LayerNormalization and BatchNormalization): InstanceNormalization (1, 6, 22),
GroupNormalization (18, 21), RMSNormalization (23), LpNormalization (1, 22),
MeanVarianceNormalization (9, 13) and LRN (1, 13); also onnxruntime's com.microsoft
SkipLayerNormalization / SkipSimplifiedLayerNormalization (:func:`skip_layer_normalization`).

Spec followed (``onnx.defs.get_schema(op, version).doc`` and function bodies):

* **InstanceNormalization**: ``X`` is ``[N, C, D1, ..., Dk]``; mean and *population*
  variance per (n, c) over ``D1..Dk``; ``y = scale[c] * (x - mean) / sqrt(var + eps) + B[c]``.
  ``scale`` and ``B`` are 1-D of length ``C``.  An empty spatial extent is undefined.
* **GroupNormalization**: channels split into ``num_groups`` contiguous groups (``C``
  divisible by ``num_groups``), statistics per (n, group) over the group's channels and
  all spatial positions.  *Version 18*: ``scale``/``bias`` have one value **per group**
  (shape ``[num_groups]``).  *Version 21*: one value **per channel** (shape ``[C]``),
  and stage one (statistics and normalization) is computed in the ``stash_type``
  precision (1 = float: "casts all input variables to 32-bit float"), stage two in ``T``.
* **RMSNormalization-23**: ``Normalized = X / sqrt(ReduceMean(X*X) + eps)`` over
  ``axis..r-1`` in the ``stash_type`` precision (float for 1), cast to ``T``, then
  ``Y = Normalized * Scale`` with ``Scale`` (type ``V``) unidirectionally broadcast;
  ``Y`` has type ``V``.  No mean is subtracted.
* **LpNormalization**: ``y = x / ||x||_p`` along ``axis`` with ``p`` in {1, 2};
  a zero norm gives 0 (spec text).
* **MeanVarianceNormalization**: ``Y = (X - E[X]) / (sqrt(E[(X - E[X])^2]) + 1e-9)``
  over ``axes`` (default ``[0, 2, 3]``).  The ``1e-9`` is the function body's
  ``Epsilon`` constant (the text's formula has none); the body's variance is one-pass
  ``E[X^2] - E[X]^2`` -- as for LayerNormalization we take the text's
  ``E(X-EX)^2`` as the definition (two-pass) and the generator avoids data where the
  two differ by more than rounding (no large-offset class).
* **LRN**: ``square_sum[n, c, ...] = sum X[n, i, ...]^2`` over
  ``max(0, c - floor((size-1)/2)) <= i <= min(C-1, c + ceil((size-1)/2))`` and
  ``Y = X / (bias + alpha / size * square_sum) ^ beta`` (the division by ``size``
  is part of the definition; even sizes give an asymmetric window).

``epsilon``/``alpha``/``beta``/``bias`` are 32-bit float attributes: the oracles use
their float32 values.

Re-association rule (one for every family; docs/tolerance.md): a kernel may re-associate the
spec's formula in any algebraically exact way -- reduction order, reciprocal multiplication,
FMA, and the *fold* ``a = scale / sqrt(var + eps)``, ``y = x * a + (B - mean * a)`` (PyTorch's
CPU instance/group/batch norm, onnxruntime's InstanceNormalization) -- provided every
subexpression is computed at no less than the precision the spec mandates for its stage:
folding in ``T`` where the spec computes in ``T`` (InstanceNormalization, GroupNormalization-18,
MeanVarianceNormalization), in float where it mandates float (GroupNormalization-21's
stash_type).  Its error ``|a| (|x| + |mean|) u / 2`` is of the order of what rounding the mean
to that precision costs every kernel (``conformance.tolerance.statistic_rounding_errors``,
which the generators add to the tolerance).  The variants ``folded-<precision>``
(:func:`folded_rows`) implement it.

Precision of the legitimate variants (:func:`*_variants`): where the spec mandates a
precision (stash_type of GroupNormalization-21 and RMSNormalization) stage one is
computed in it; elsewhere in ``T``, with float16/bfloat16 reductions accumulating in
float32 (accumulating in a half type stagnates on long rows and is not modelled).
Variants differ in accumulation order (pairwise, sequential, reverse, float64),
``Div`` vs multiplication by a reciprocal, and one rounding at the end versus every
elementwise operation rounded (cast by cast).  For half types both "everything in
float32, one cast at the end" and "elementwise in T" are included; in the latter the
epsilon addition, the standard deviation and its reciprocal stay in float32 (``epsilon``
is a float attribute: 1e-12 is 0 in float16 and ``1/sqrt(1e-12)`` overflows it).
"""

from __future__ import annotations

import ml_dtypes
import numpy as np

from conformance.reference.layer_normalization import epsilon_value, normalize_axis

_F16 = np.dtype(np.float16)
_BF16 = np.dtype(ml_dtypes.bfloat16)
_F32 = np.dtype(np.float32)
_F64 = np.dtype(np.float64)

#: stash_type values whose precision the spec names (1 = float).
STASH_TYPES = (1,)


def f32(v: float) -> float:
    """A 32-bit float attribute's value."""
    return float(np.float32(v))


def rnd(a, dt) -> np.ndarray:
    """Round float64 values to numpy dtype ``dt`` and back to float64."""
    a = np.asarray(a, dtype=np.float64)
    dt = np.dtype(dt)
    if dt == _F64:
        return a
    if dt == _BF16:
        return a.astype(np.float32).astype(_BF16).astype(np.float64)
    return a.astype(dt).astype(np.float64)


def _acc(dt) -> np.dtype:
    """Accumulator of a reduction whose elements are ``dt``: float32 for half types."""
    return _F64 if np.dtype(dt) == _F64 else _F32


def _rowsum(a: np.ndarray, order: str, acc: np.dtype) -> np.ndarray:
    """Row sums of a (rows, n) array accumulated in ``acc`` (``wide``: float64)."""
    if a.shape[0] == 0 or a.shape[1] == 0:
        return np.zeros(a.shape[0])
    if order == "wide":
        return np.sum(a, axis=1)
    f = a.astype(acc)
    if order == "pairwise":
        return np.sum(f, axis=1).astype(np.float64)
    if order == "sequential":
        return np.cumsum(f, axis=1)[:, -1].astype(np.float64)
    if order == "reverse":
        return np.cumsum(f[:, ::-1], axis=1)[:, -1].astype(np.float64)
    raise ValueError(order)


# ----------------------------------------------------------------------------- standardization core
def standardize(rows: np.ndarray, eps: float) -> np.ndarray:
    """Float64 ``(x - mean) / sqrt(var + eps)`` per row of a (rows, n) array (population
    variance, corrected two-pass so ``D`` is accurate when mean >> std)."""
    x = np.asarray(rows, dtype=np.float64)
    if x.shape[1] == 0:
        raise ValueError("empty normalized extent: the mean of nothing is undefined")
    with np.errstate(invalid="ignore", over="ignore", divide="ignore"):
        m0 = np.mean(x, axis=1, keepdims=True)
        d = x - m0
        fin = np.isfinite(m0)
        d = np.where(fin, d - np.mean(d, axis=1, keepdims=True), d)
        var = np.mean(d * d, axis=1, keepdims=True)
        return d / np.sqrt(var + eps)


#: name -> (accumulation order, "div" | "mul" (by 1/std), rounding "each" | "f32-once")
STD_VARIANTS = {
    "pairwise-div": ("pairwise", "div", "each"),
    "sequential-mul": ("sequential", "mul", "each"),
    "reverse-div": ("reverse", "div", "each"),
    "wide-mul": ("wide", "mul", "each"),
    "pairwise-div-f32": ("pairwise", "div", "f32-once"),
}


def _standardize_variant(x: np.ndarray, eps: float, comp: np.dtype, spec) -> np.ndarray:
    """Normalized rows computed in ``comp`` (every elementwise op rounded to it)."""
    order, mode, rounding = spec
    if rounding == "f32-once" and comp in (_F16, _BF16):
        comp = _F32
    rc = lambda a: rnd(a, comp)  # noqa: E731
    acc = _acc(comp)
    n = x.shape[1]
    xc = rc(x)
    ra = (lambda a: a) if order == "wide" else (lambda a: rnd(a, acc))
    mean = rc(ra(_rowsum(xc, order, acc) / n))[:, None]
    d = rc(xc - mean)
    var = rc(ra(_rowsum(rc(d * d), order, acc) / n))[:, None]
    # epsilon (a float attribute) is added at the accumulator precision: 1e-12 is 0 in float16
    # (so is the standard deviation and its reciprocal: 1/sqrt(1e-12) overflows float16)
    std = rnd(np.sqrt(rnd(var + rnd(eps, acc), acc)), acc)
    return rc(d / std) if mode == "div" else rc(d * rnd(1.0 / std, acc))


def folded_rows(x: np.ndarray, eps: float, comp, s: np.ndarray, b: np.ndarray) -> np.ndarray:
    """The *folded* form of ``s * (x - mean) / sqrt(var + eps) + b`` per row of a (rows, n)
    array, every operation rounded to ``comp`` (sums accumulated pairwise in float32 for half
    types, ``var + eps`` and the reciprocal square root in at least float32)::

        a = s * rsqrt(var + eps);   c = b - mean * a;   y = x * a + c

    ``s``/``b`` are broadcastable to ``x`` (per row or per element).  Legitimate by the
    re-association rule (module docstring): what PyTorch's CPU batch/instance/group norm
    and onnxruntime's InstanceNormalization compute."""
    comp = np.dtype(comp)
    rc = lambda a: rnd(a, comp)  # noqa: E731
    acc = _acc(comp)
    n = x.shape[1]
    xc = rc(x)
    mean = rc(rnd(_rowsum(xc, "pairwise", acc) / n, acc))[:, None]
    d = rc(xc - mean)
    var = rc(rnd(_rowsum(rc(d * d), "pairwise", acc) / n, acc))[:, None]
    inv = rnd(1.0 / np.sqrt(rnd(var + rnd(eps, acc), acc)), acc)
    a = rc(rc(s) * inv)
    c = rc(rc(b) - rc(mean * a))
    return rc(rc(xc * a) + c)


def _folded(x_rows: np.ndarray, eps: float, s_full: np.ndarray, b_full: np.ndarray, shape, t_dt,
            comps) -> dict[str, np.ndarray]:
    """``folded-<comp>`` variants (values of T) of an affine standardization whose
    parameters ``s_full``/``b_full`` are given broadcast to X's ``shape``."""
    rows = x_rows.shape
    s = np.broadcast_to(s_full, shape).reshape(rows)
    b = np.broadcast_to(b_full, shape).reshape(rows)
    out = {f"folded-{np.dtype(c).name}": rnd(folded_rows(x_rows, eps, c, s, b).reshape(shape), t_dt)
           for c in comps}
    # a fold in a half type is only possible where a = scale/sqrt(var + eps) and x * a fit in it
    # (1/sqrt(1e-12) overflows float16): elsewhere a kernel must fold in float32
    wide = out.get("folded-float32")
    for k in [k for k in out if k not in ("folded-float32", "folded-float64")]:
        if wide is not None and not np.array_equal(np.isfinite(out[k]), np.isfinite(wide)):
            del out[k]
    return out


def _fold_precisions(t_dt, mandated=None) -> list:
    """Precisions a fold may be evaluated in: the mandated one (T where the spec computes in
    T) and float32 for half types; never below the mandated stage-one precision."""
    if mandated is not None:
        return [mandated]
    return [t_dt, _F32] if t_dt in (_F16, _BF16) else [t_dt]


def _check_nc(X, name="X") -> tuple[int, ...]:
    shape = tuple(np.shape(X))
    if len(shape) < 3:
        raise ValueError(f"{name} must be [N, C, D1, ...] of rank >= 3, got {list(shape)}")
    if int(np.prod(shape[2:])) == 0 and shape[0] * shape[1] > 0:
        raise ValueError("empty spatial extent: statistics undefined")
    return shape


# ----------------------------------------------------------------------------- InstanceNormalization
def _check_instance(X, scale, B):
    shape = _check_nc(X, "input")
    c = shape[1]
    for nm, p in (("scale", scale), ("B", B)):
        if tuple(np.shape(p)) != (c,):
            raise ValueError(f"{nm} must have shape [C] = [{c}], got {list(np.shape(p))}")
    return shape


def instance_normalization(X, scale, B, *, epsilon: float = 1e-5) -> np.ndarray:
    """Float64 oracle of InstanceNormalization-1/6/22.

    Args:
        X: ``[N, C, D1, ..., Dk]`` (rank >= 3, nonempty spatial extent).
        scale, B: 1-D of length ``C``.
        epsilon: the float32 attribute.

    Returns:
        ``Y`` (float64, X's shape).

    Raises:
        ValueError: rank < 3, empty spatial extent, scale/B not of shape ``[C]``.
    """
    shape = _check_instance(X, scale, B)
    n, c = shape[:2]
    sp = int(np.prod(shape[2:]))
    y = standardize(np.asarray(X, np.float64).reshape(n * c, sp), epsilon_value(epsilon)).reshape(shape)
    bshape = (1, c) + (1,) * (len(shape) - 2)
    with np.errstate(invalid="ignore", over="ignore"):
        return y * np.asarray(scale, np.float64).reshape(bshape) + np.asarray(B, np.float64).reshape(bshape)


def _stage_two(norm, s, b, t_dt, rounding):
    """``norm * s + b`` in T cast by cast, or in float32/64 with one cast."""
    if rounding == "each":
        return rnd(rnd(rnd(norm, t_dt) * s, t_dt) + b, t_dt)
    w = _acc(t_dt)
    return rnd(rnd(rnd(norm * s, w) + b, w), t_dt)


def instance_normalization_variants(X, scale, B, *, epsilon: float = 1e-5) -> dict[str, np.ndarray]:
    """Legitimate variants of InstanceNormalization (module docstring), values of ``T``."""
    shape = _check_instance(X, scale, B)
    t_dt = np.asarray(X).dtype
    n, c = shape[:2]
    sp = int(np.prod(shape[2:]))
    x = np.asarray(X, np.float64).reshape(n * c, sp)
    bshape = (1, c) + (1,) * (len(shape) - 2)
    s = np.asarray(scale, np.float64).reshape(bshape)
    b = np.asarray(B, np.float64).reshape(bshape)
    out = {}
    with np.errstate(invalid="ignore", over="ignore", divide="ignore"):
        for name, spec in STD_VARIANTS.items():
            norm = _standardize_variant(x, epsilon_value(epsilon), t_dt, spec).reshape(shape)
            out[name] = _stage_two(norm, s, b, t_dt, spec[2])
        out.update(_folded(x, epsilon_value(epsilon), s, b, shape, t_dt, _fold_precisions(t_dt)))
    return out


# ----------------------------------------------------------------------------- GroupNormalization
def _check_group(X, scale, bias, num_groups, version, stash_type=1):
    shape = _check_nc(X)
    c = shape[1]
    g = int(num_groups)
    if g <= 0 or c % g:
        raise ValueError(f"num_groups {g} must be a positive divisor of C = {c}")
    want = (g,) if version < 21 else (c,)
    for nm, p in (("scale", scale), ("bias", bias)):
        if tuple(np.shape(p)) != want:
            raise ValueError(
                f"GroupNormalization-{version}: {nm} must have shape {list(want)}, got {list(np.shape(p))}"
            )
    if version >= 21 and int(stash_type) not in STASH_TYPES:
        raise ValueError(f"invalid stash_type {stash_type} (1 = float is the only one defined)")
    return shape


def _group_row(shape, g: int) -> int:
    """Elements of one group's statistics: ``C / g`` channels times the spatial extent (also
    for an empty batch, where ``-1`` cannot be inferred)."""
    return shape[1] // g * int(np.prod(shape[2:], dtype=np.int64))


def group_params(scale, bias, shape, g, version):
    """Scale/bias of GroupNormalization broadcast to ``[1, C, 1, ...]`` (per group for 18,
    per channel for 21).

    Args:
        scale, bias: ``[g]`` (version < 21) or ``[C]``.
        shape: X's shape ``[N, C, ...]``.
        g: num_groups.
        version: the since_version.

    Returns:
        ``(scale, bias)`` as float64 arrays of shape ``[1, C, 1, ...]``.
    """
    c = shape[1]
    s, b = np.asarray(scale, np.float64), np.asarray(bias, np.float64)
    if version < 21:
        s, b = np.repeat(s, c // g), np.repeat(b, c // g)
    bshape = (1, c) + (1,) * (len(shape) - 2)
    return s.reshape(bshape), b.reshape(bshape)


def group_normalization(X, scale, bias, *, num_groups: int, epsilon: float = 1e-5, version: int = 21,
                        stash_type: int = 1) -> np.ndarray:
    """Float64 oracle of GroupNormalization-18 (``version < 21``) and -21.

    Args:
        X: ``[N, C, D1, ...]``, rank >= 3.
        scale, bias: ``[num_groups]`` for version 18, ``[C]`` for version 21.
        num_groups: positive divisor of ``C``.

    Raises:
        ValueError: bad rank/shape, ``C % num_groups != 0``, unsupported stash_type (21).
    """
    shape = _check_group(X, scale, bias, num_groups, version, stash_type)
    n, g = shape[0], int(num_groups)
    rows = np.asarray(X, np.float64).reshape(n * g, _group_row(shape, g))
    y = standardize(rows, epsilon_value(epsilon)).reshape(shape)
    s, b = group_params(scale, bias, shape, g, version)
    with np.errstate(invalid="ignore", over="ignore"):
        return y * s + b


def group_normalization_variants(X, scale, bias, *, num_groups: int, epsilon: float = 1e-5, version: int = 21,
                                 stash_type: int = 1) -> dict[str, np.ndarray]:
    """Legitimate variants (stage one in float32 for version 21, in T for 18), values of T."""
    shape = _check_group(X, scale, bias, num_groups, version, stash_type)
    t_dt = np.asarray(X).dtype
    n, g = shape[0], int(num_groups)
    x = np.asarray(X, np.float64).reshape(n * g, _group_row(shape, g))
    s, b = group_params(scale, bias, shape, g, version)
    comp = _F32 if version >= 21 else t_dt
    out = {}
    with np.errstate(invalid="ignore", over="ignore", divide="ignore"):
        for name, spec in STD_VARIANTS.items():
            norm = _standardize_variant(x, epsilon_value(epsilon), comp, spec).reshape(shape)
            out[name] = _stage_two(norm, s, b, t_dt, spec[2])
        out.update(_folded(x, epsilon_value(epsilon), s, b, shape, t_dt,
                           _fold_precisions(t_dt, _F32 if version >= 21 else None)))
    return out


#: the retired generator's name for :func:`group_params`
_group_params = group_params


# ----------------------------------------------------------------------------- RMSNormalization
#: stash_type values of onnxruntime's SimplifiedLayerNormalization: the type of inv_std_var (U)
SLN_STASH_TYPES = {1: _F32, 11: _F64}
#: accumulation orders of the RMS variants
RMS_ORDERS = ("pairwise", "sequential", "wide")


def _check_rms(X, scale, axis, stash_type, stash_types=STASH_TYPES):
    shape = tuple(np.shape(X))
    ax = normalize_axis(int(axis), len(shape))
    if int(stash_type) not in stash_types:
        raise ValueError(f"invalid stash_type {stash_type} (allowed: {sorted(stash_types)})")
    ss = tuple(np.shape(scale))
    if len(ss) > len(shape) or any(d not in (1, shape[len(shape) - len(ss) + i]) for i, d in enumerate(ss)):
        raise ValueError(f"not broadcastable: scale {list(ss)} to X {list(shape)}")
    if any(d != 1 for i, d in enumerate(ss) if len(shape) - len(ss) + i < ax):
        raise ValueError(f"contested: scale {list(ss)} varies along an axis before axis {ax}")
    n = int(np.prod(shape[ax:]))
    if n == 0:
        raise ValueError("empty normalized extent")
    return shape, ax, n


def _rms_rows(x: np.ndarray, eps: float) -> tuple[np.ndarray, np.ndarray]:
    """Float64 ``(x / rms, 1 / rms)`` with ``rms = sqrt(mean(x^2) + eps)`` per row of (rows, n)."""
    with np.errstate(invalid="ignore", over="ignore", divide="ignore"):
        rms = np.sqrt(np.mean(x * x, axis=1, keepdims=True) + eps)
        return x / rms, 1.0 / rms


def _rms_stage_one(rows: np.ndarray, eps: float, comp, order: str, mode: str) -> tuple[np.ndarray, np.ndarray]:
    """RMS stage one of (rows, n) values computed in ``comp`` (every operation rounded to it,
    sums accumulated in ``comp`` by ``order``, or in float64 for ``wide``): ``(normalized,
    1/rms)``, ``normalized`` by ``Div`` (``mode="div"``) or by multiplication with the
    reciprocal (``"mul"``)."""
    comp = np.dtype(comp)
    rc = lambda a: rnd(a, comp)  # noqa: E731
    ra = (lambda a: a) if order == "wide" else rc
    x = rc(rows)
    ms = rc(ra(_rowsum(rc(x * x), order, comp) / x.shape[1]))[:, None]
    std = rc(np.sqrt(rc(ms + rc(eps))))
    inv = rc(1.0 / std)
    return (rc(x / std) if mode == "div" else rc(x * inv)), inv


def rms_normalization(X, scale, *, axis: int = -1, epsilon: float = 1e-5, stash_type: int = 1) -> np.ndarray:
    """Float64 oracle of RMSNormalization-23: ``X / sqrt(mean(X^2) + eps) * scale``.

    Raises:
        ValueError: axis outside ``[-r, r)``, scale not broadcastable to the normalized
            dims, stash_type other than 1, empty normalized extent.
    """
    shape, ax, n = _check_rms(X, scale, axis, stash_type)
    y, _ = _rms_rows(np.asarray(X, np.float64).reshape(-1, n), epsilon_value(epsilon))
    with np.errstate(invalid="ignore", over="ignore"):
        return y.reshape(shape) * np.asarray(scale, np.float64)


def _rms_products(norm, s, t_dt, v_dt, name, out, *, widen=False):
    """Stage two ``Normalized * scale`` into ``out``: Normalized cast to T then multiplied in V
    (the function body; ``-cast``), one rounding to V (``-once``) and, with ``widen``, the
    T-rounded Normalized multiplied exactly and rounded once to V (``-cast-wide``)."""
    out[f"{name}-cast"] = rnd(rnd(rnd(norm, t_dt), v_dt) * s, v_dt)
    out[f"{name}-once"] = rnd(norm * s, v_dt)
    if widen:
        out[f"{name}-cast-wide"] = rnd(rnd(norm, t_dt) * s, v_dt)


def rms_normalization_variants(X, scale, *, axis: int = -1, epsilon: float = 1e-5, stash_type: int = 1,
                               v_dtype=None) -> dict[str, np.ndarray]:
    """Variants: stage one in float32 (stash_type 1), then stage two by :func:`_rms_products`
    into V (``v_dtype``, default scale's dtype).  When ``T != V`` (contested: the function
    body's ``Mul(Cast(Normalized, T), Scale)`` is ill-typed) the product is also taken
    from the T-rounded Normalized with one rounding to V."""
    shape, ax, n = _check_rms(X, scale, axis, stash_type)
    t_dt = np.asarray(X).dtype
    v_dt = np.dtype(v_dtype) if v_dtype is not None else np.asarray(scale).dtype
    x = np.asarray(X, np.float64).reshape(-1, n)
    s = np.asarray(scale, np.float64)
    eps = epsilon_value(epsilon)
    out = {}
    with np.errstate(invalid="ignore", over="ignore", divide="ignore"):
        for order in RMS_ORDERS:
            for mode in ("div", "mul"):
                norm, _ = _rms_stage_one(x, eps, _F32, order, mode)
                _rms_products(norm.reshape(shape), s, t_dt, v_dt, f"{order}-{mode}", out, widen=t_dt != v_dt)
    return out


# ----------------------------------------------------------------------------- SimplifiedLayerNormalization
def simplified_layer_normalization(X, scale, *, axis: int = -1, epsilon: float = 1e-5,
                                   stash_type: int = 1) -> tuple[np.ndarray, np.ndarray]:
    """Float64 oracle of onnxruntime's SimplifiedLayerNormalization-1 (ai.onnx domain, not
    an onnx operator): RMS normalization over ``axis..r-1``, no mean subtracted.

    Semantics (onnxruntime's schema ``ONNX_CONTRIB_OPERATOR_SCHEMA(SimplifiedLayerNormalization)``
    in ``onnxruntime/core/graph/contrib_ops/contrib_defs.cc`` and its CPU kernel
    ``LayerNormImpl`` with ``simplified=true`` in ``onnxruntime/core/providers/cpu/nn/
    layer_norm_impl.cc``; the doc string is just the op name):

    * ``Y = X / sqrt(mean(X^2) + epsilon) * scale``; ``Y`` has the type of ``scale`` (``V``:
      the type inference is ``propagateElemTypeFromInputToOutput(ctx, 1, 0)``).  ``scale``
      is NumPy-broadcast to ``X.shape[axis:]`` (onnxruntime 1.31's kernel: "Scale ... must
      match X.shape[axis:] or be NumPy-broadcastable to it").
    * ``inv_std_var = 1 / sqrt(mean(X^2) + epsilon)`` of shape ``X.shape[:axis] + [1] *
      (r - axis)`` (the kernel's ``mean_inv_std_dev_dim``; the schema's shape inference sets
      only dim ``axis`` to 1 and onnxruntime falls back to a "lenient merge").  Its type
      ``U`` *is* ``stash_type`` (the type inference sets the output's elem_type to the
      attribute: "type used for stash mean/inv_std_var"), so stash_type must be 1 (float)
      or 11 (double) when inv_std_var is requested.
    * Precision: the kernel computes in T (float32 for float16/bfloat16, one rounding to
      V at the end); stash_type names only the stash's type.  As with LayerNormalization-17
      (where stash_type is the stage-one precision) computing stage one in U is also
      accepted (:func:`simplified_layer_normalization_variants`).

    Returns:
        ``(Y, inv_std_var)`` in float64.

    Raises:
        ValueError: axis outside ``[-r, r)``, scale not broadcastable to ``X.shape[axis:]``,
            stash_type not 1 or 11, empty normalized extent.
    """
    shape, ax, n = _check_rms(X, scale, axis, stash_type, SLN_STASH_TYPES)
    y, inv = _rms_rows(np.asarray(X, np.float64).reshape(-1, n), epsilon_value(epsilon))
    with np.errstate(invalid="ignore", over="ignore"):
        return y.reshape(shape) * np.asarray(scale, np.float64), inv.reshape(shape[:ax] + (1,) * (len(shape) - ax))


def simplified_layer_normalization_variants(X, scale, *, axis: int = -1, epsilon: float = 1e-5,
                                            stash_type: int = 1) -> dict[str, tuple[np.ndarray, np.ndarray]]:
    """Legitimate variants of SimplifiedLayerNormalization: ``(Y in V, inv_std_var in U)``.

    Stage one in T's working precision (float32 for half types, as onnxruntime's kernel)
    or in U (the stash type); accumulation order and Div vs reciprocal as for
    RMSNormalization; stage two by :func:`_rms_products` (Normalized rounded to T then
    multiplied, or one rounding to V).
    """
    shape, ax, n = _check_rms(X, scale, axis, stash_type, SLN_STASH_TYPES)
    t_dt, v_dt = np.asarray(X).dtype, np.asarray(scale).dtype
    u_dt = SLN_STASH_TYPES[int(stash_type)]
    comps = {"T": _acc(t_dt)}
    if u_dt != comps["T"]:
        comps["U"] = u_dt
    x = np.asarray(X, np.float64).reshape(-1, n)
    s = np.asarray(scale, np.float64)
    eps = epsilon_value(epsilon)
    ishape = shape[:ax] + (1,) * (len(shape) - ax)
    out = {}
    with np.errstate(invalid="ignore", over="ignore", divide="ignore"):
        for cname, comp in comps.items():
            for order in RMS_ORDERS:
                for mode in ("div", "mul"):
                    norm, inv = _rms_stage_one(x, eps, comp, order, mode)
                    ys = {}
                    _rms_products(norm.reshape(shape), s, t_dt, v_dt, f"{cname}-{order}-{mode}", ys)
                    for k, y in ys.items():
                        out[k] = (y, rnd(inv.reshape(ishape), u_dt))
    return out


# ----------------------------------------------------------------------------- LpNormalization
def _check_lp(X, p, axis):
    shape = tuple(np.shape(X))
    ax = normalize_axis(int(axis), len(shape))
    if int(p) not in (1, 2):
        raise ValueError(f"p must be 1 or 2, got {p}")
    return shape, ax


def lp_normalization(X, *, p: int = 2, axis: int = -1) -> np.ndarray:
    """Float64 oracle of LpNormalization-1/22: ``x / ||x||_p`` along ``axis``; 0 where the norm is 0.

    Raises:
        ValueError: p not in {1, 2}, axis outside ``[-r, r)``.
    """
    shape, ax = _check_lp(X, p, axis)
    x = np.asarray(X, np.float64)
    with np.errstate(invalid="ignore", over="ignore", divide="ignore"):
        if int(p) == 1:
            norm = np.sum(np.abs(x), axis=ax, keepdims=True)
        else:
            m = np.max(np.abs(x), axis=ax, keepdims=True) if x.size else np.ones_like(x)
            m = np.where((m > 0) & np.isfinite(m), m, 1.0)
            norm = m * np.sqrt(np.sum((x / m) ** 2, axis=ax, keepdims=True))
        return np.where(norm == 0, 0.0, x / np.where(norm == 0, 1.0, norm))


def _std_rounding(t_dt, order: str, rounding: str):
    """For one :data:`STD_VARIANTS` entry: the accumulation dtype, the rounding of elementwise
    results (T, or float32 for half types with ``f32-once``) and of accumulated sums
    (none for ``wide`` accumulation)."""
    comp = _F32 if (rounding == "f32-once" and t_dt in (_F16, _BF16)) else t_dt
    acc = _acc(comp)
    return (acc, lambda a: rnd(a, comp),
            (lambda a: a) if order == "wide" else (lambda a: rnd(a, acc)))


def lp_normalization_variants(X, *, p: int = 2, axis: int = -1) -> dict[str, np.ndarray]:
    """Variants computed in T (float32 accumulation for half types): accumulation order,
    Div vs multiplication by the reciprocal, elementwise ops in T or float32 for half types."""
    shape, ax = _check_lp(X, p, axis)
    t_dt = np.asarray(X).dtype
    xm = np.moveaxis(np.asarray(X, np.float64), ax, -1)
    mshape = xm.shape
    x = xm.reshape(-1, mshape[-1]) if xm.size else np.zeros((0, max(mshape[-1], 0)))
    out = {}
    with np.errstate(invalid="ignore", over="ignore", divide="ignore"):
        for name, (order, mode, rounding) in STD_VARIANTS.items():
            acc, rc, ra = _std_rounding(t_dt, order, rounding)
            if int(p) == 1:
                norm = rc(ra(_rowsum(np.abs(x), order, acc)))
            else:
                norm = rc(np.sqrt(ra(_rowsum(rnd(x * x, acc), order, acc))))
            norm = norm[:, None]
            safe = np.where(norm == 0, 1.0, norm)
            y = rc(x / safe) if mode == "div" else rc(x * rc(1.0 / safe))
            y = np.where(norm == 0, 0.0, y)
            out[name] = rnd(np.moveaxis(y.reshape(mshape), -1, ax), t_dt)
    return out


# ----------------------------------------------------------------------------- MeanVarianceNormalization
#: the function body's constant added to the standard deviation
MVN_EPSILON = 1e-9


def _check_mvn(X, axes):
    shape = tuple(np.shape(X))
    r = len(shape)
    ax = []
    for a in axes:
        if not -r <= int(a) < r:
            raise ValueError(f"axis {a} out of range for rank {r}")
        ax.append(int(a) % r)
    if len(set(ax)) != len(ax):
        raise ValueError(f"repeated axis in {list(axes)}")
    return shape, sorted(ax)


def _mvn_rows(X, axes):
    shape, ax = _check_mvn(X, axes)
    keep = [i for i in range(len(shape)) if i not in ax]
    xt = np.transpose(np.asarray(X, np.float64), keep + ax)
    n = int(np.prod([shape[i] for i in ax]))
    return shape, keep + ax, xt.shape, xt.reshape(-1, n)


def _mvn_back(rows, tshape, perm):
    return np.transpose(rows.reshape(tshape), np.argsort(perm))


def mean_variance_normalization(X, *, axes=(0, 2, 3)) -> np.ndarray:
    """Float64 oracle of MeanVarianceNormalization-9/13:
    ``(X - E[X]) / (sqrt(E[(X - E[X])^2]) + 1e-9)`` over ``axes``.

    Raises:
        ValueError: an axis outside ``[-r, r)`` or repeated; an empty reduced extent.
    """
    shape, perm, tshape, x = _mvn_rows(X, axes)
    if x.shape[1] == 0:
        raise ValueError("empty reduced extent")
    with np.errstate(invalid="ignore", over="ignore", divide="ignore"):
        m0 = np.mean(x, axis=1, keepdims=True)
        d = x - m0
        d = d - np.mean(d, axis=1, keepdims=True)
        std = np.sqrt(np.mean(d * d, axis=1, keepdims=True))
        return _mvn_back(d / (std + MVN_EPSILON), tshape, perm)


def mean_variance_normalization_variants(X, *, axes=(0, 2, 3)) -> dict[str, np.ndarray]:
    """Variants in T (float32 accumulation for half types), two-pass, plus the function
    body's one-pass variance computed in float32 (legitimate on the generator's data,
    whose mean is not large against the spread)."""
    shape, perm, tshape, x = _mvn_rows(X, axes)
    t_dt = np.asarray(X).dtype
    out = {}
    with np.errstate(invalid="ignore", over="ignore", divide="ignore"):
        for name, (order, mode, rounding) in STD_VARIANTS.items():
            acc, rc, ra = _std_rounding(t_dt, order, rounding)
            n = x.shape[1]
            xc = rc(x)
            mean = rc(ra(_rowsum(xc, order, acc) / n))[:, None]
            d = rc(xc - mean)
            std = rc(np.sqrt(rc(ra(_rowsum(rc(d * d), order, acc) / n))))[:, None]
            den = rc(std + rc(MVN_EPSILON))
            y = rc(d / den) if mode == "div" else rc(d * rc(1.0 / den))
            out[name] = rnd(_mvn_back(y, tshape, perm), t_dt)
        for comp in _fold_precisions(t_dt):  # folded: x * r - mean * r, r = 1 / (std + 1e-9)
            acc, rc = _acc(comp), (lambda a, c=comp: rnd(a, c))
            xc = rc(x)
            mean = rc(rnd(_rowsum(xc, "pairwise", acc) / x.shape[1], acc))[:, None]
            d = rc(xc - mean)
            std = rc(np.sqrt(rc(rnd(_rowsum(rc(d * d), "pairwise", acc) / x.shape[1], acc))))[:, None]
            r = rc(1.0 / rc(std + rc(MVN_EPSILON)))
            out[f"folded-{np.dtype(comp).name}"] = rnd(_mvn_back(rc(rc(xc * r) - rc(mean * r)), tshape, perm), t_dt)
        xc = rnd(x, _F32)
        mean = rnd(_rowsum(xc, "pairwise", _F32) / x.shape[1], _F32)[:, None]
        msq = rnd(_rowsum(rnd(xc * xc, _F32), "pairwise", _F32) / x.shape[1], _F32)[:, None]
        std = rnd(np.sqrt(np.maximum(rnd(msq - rnd(mean * mean, _F32), _F32), 0.0)), _F32)
        y = rnd(rnd(xc - mean, _F32) / rnd(std + MVN_EPSILON, _F32), _F32)
        out["body-onepass-f32"] = rnd(_mvn_back(y, tshape, perm), t_dt)
    return out


# ----------------------------------------------------------------------------- LRN
def lrn_window(c: int, size: int, channels: int) -> tuple[int, int]:
    """Inclusive channel range ``[lo, hi]`` of LRN's square-sum window for channel ``c``."""
    lo = max(0, c - (size - 1) // 2)
    hi = min(channels - 1, c + -(-(size - 1) // 2))
    return lo, hi


def _check_lrn(X, size):
    shape = tuple(np.shape(X))
    if len(shape) < 3:
        raise ValueError(f"X must be [N, C, D1, ...] of rank >= 3, got {list(shape)}")
    if int(size) < 1:
        raise ValueError(f"size must be >= 1, got {size}")
    return shape


def lrn(X, *, size: int, alpha: float = 1e-4, beta: float = 0.75, bias: float = 1.0) -> np.ndarray:
    """Float64 oracle of LRN-1/13 (module docstring): ``X / (bias + alpha/size * square_sum)^beta``.

    Raises:
        ValueError: rank < 3 or size < 1.
    """
    shape = _check_lrn(X, size)
    x = np.asarray(X, np.float64)
    sq = np.zeros_like(x)
    for c in range(shape[1]):
        lo, hi = lrn_window(c, int(size), shape[1])
        sq[:, c] = np.sum(x[:, lo:hi + 1] ** 2, axis=1)
    with np.errstate(invalid="ignore", over="ignore", divide="ignore"):
        return x / (f32(bias) + f32(alpha) / int(size) * sq) ** f32(beta)


def lrn_variants(X, *, size: int, alpha: float = 1e-4, beta: float = 0.75, bias: float = 1.0) -> dict[str, np.ndarray]:
    """Variants in T (float32 for half types): square sum sequential or reversed, ``alpha/size``
    folded first or applied as ``alpha * sum / size``, ``pow`` or ``exp(beta * log)``."""
    shape = _check_lrn(X, size)
    t_dt = np.asarray(X).dtype
    comp = _F32 if t_dt in (_F16, _BF16) else t_dt
    rc = lambda a: rnd(a, comp)  # noqa: E731
    x = rc(np.asarray(X, np.float64))
    a, b, k, sz = f32(alpha), f32(beta), f32(bias), int(size)
    out = {}
    with np.errstate(invalid="ignore", over="ignore", divide="ignore"):
        for order in ("sequential", "reverse"):
            sq = np.zeros_like(x)
            for c in range(shape[1]):
                lo, hi = lrn_window(c, sz, shape[1])
                chans = list(range(lo, hi + 1))
                if order == "reverse":
                    chans = chans[::-1]
                acc = np.zeros_like(x[:, 0])
                for i in chans:
                    acc = rc(acc + rc(x[:, i] * x[:, i]))
                sq[:, c] = acc
            for fold in ("fold", "late"):
                t = rc(rc(a / sz) * sq) if fold == "fold" else rc(rc(a * sq) / sz)
                base = rc(k + t)
                for pw in ("pow", "explog"):
                    den = rc(base ** b) if pw == "pow" else rc(np.exp(rc(b * rc(np.log(base)))))
                    out[f"{order}-{fold}-{pw}"] = rnd(rc(x / den), t_dt)
    return out


# ----------------------------------------------------------------------------- com.microsoft Skip*LayerNormalization
def _check_skip(inp, skip, gamma, others):
    shape = tuple(np.shape(inp))
    if len(shape) not in (2, 3):
        raise ValueError(f"input must be 2-D or 3-D, got {list(shape)}")
    h = shape[-1]
    sk = tuple(np.shape(skip))
    ok = sk == shape or (len(shape) == 3 and sk in ((1,) + shape[1:], shape[1:]))
    if not ok:
        raise ValueError(f"skip {list(sk)} does not match input {list(shape)}")
    for nm, p in (("gamma", gamma),) + tuple(others):
        if p is not None and tuple(np.shape(p)) != (h,):
            raise ValueError(f"{nm} must have shape [hidden_size] = [{h}], got {list(np.shape(p))}")
    return shape


def skip_sum(inp, skip, bias=None) -> np.ndarray:
    """Float64 ``input + skip (+ bias)`` (skip broadcast over the batch)."""
    s = np.asarray(inp, np.float64) + np.asarray(skip, np.float64)
    return s if bias is None else s + np.asarray(bias, np.float64)


def skip_layer_normalization(inp, skip, gamma, beta=None, bias=None, *, epsilon: float = 1e-12,
                             simplified: bool = False):
    """Float64 oracle of com.microsoft SkipLayerNormalization-1 (``simplified=False``) and
    SkipSimplifiedLayerNormalization-1 (``simplified=True``, RMS: no mean, no beta).

    ``S = input + skip + bias`` (skip ``[B, S, H]``, ``[1, S, H]`` or ``[S, H]``); the
    output is LayerNormalization (resp. RMSNormalization) of ``S`` over the last axis
    with ``gamma`` (and ``beta``), all of shape ``[H]``.

    Returns:
        ``(output, mean, inv_std_var, input_skip_bias_sum)`` in float64; mean and
        inv_std_var of shape ``input.shape[:-1] + (1,)`` (mean is None when simplified).

    Raises:
        ValueError: input not 2-D/3-D, skip or a parameter of the wrong shape.
    """
    _check_skip(inp, skip, gamma, (("beta", beta), ("bias", bias)))
    s = skip_sum(inp, skip, bias)
    if simplified:
        with np.errstate(invalid="ignore", over="ignore", divide="ignore"):
            inv = 1.0 / np.sqrt(np.mean(s * s, axis=-1, keepdims=True) + epsilon_value(epsilon))
            return s * inv * np.asarray(gamma, np.float64), None, inv, s
    from conformance.reference.layer_normalization import layer_normalization

    y, mean, inv = layer_normalization(s, gamma, beta, axis=-1, epsilon=epsilon)
    return y, mean, inv, s


def skip_layer_normalization_variants(inp, skip, gamma, beta=None, bias=None, *, epsilon: float = 1e-12,
                                      simplified: bool = False) -> dict[str, tuple]:
    """Variants (statistics in float, U = float): the sum kept in float32 or rounded to T
    before normalizing, added as ``(input + skip) + bias`` in float32; then the
    LayerNormalization variants of :mod:`conformance.reference.layer_normalization` (stash_type 1)
    or the RMS variants of this module.  Values of ``(output, mean, inv, sum)``."""
    _check_skip(inp, skip, gamma, (("beta", beta), ("bias", bias)))
    from conformance.reference.layer_normalization import variant_outputs

    t_dt = np.asarray(inp).dtype
    s32 = rnd(np.asarray(inp, np.float64) + np.asarray(skip, np.float64), _F32)
    if bias is not None:
        s32 = rnd(s32 + np.asarray(bias, np.float64), _F32)
    out = {}
    with np.errstate(invalid="ignore", over="ignore", divide="ignore"):
        for sname, s in (("f32sum", s32), ("Tsum", rnd(s32, t_dt))):
            if simplified:
                n = s.shape[-1]
                rows = s.reshape(-1, n)
                g = np.asarray(gamma, np.float64)
                for order in RMS_ORDERS:
                    for mode in ("div", "mul"):
                        norm, inv = _rms_stage_one(rows, epsilon_value(epsilon), _F32, order, mode)
                        y = rnd(norm.reshape(s.shape) * g, t_dt)
                        y2 = rnd(rnd(norm.reshape(s.shape), t_dt) * g, t_dt)
                        ish = s.shape[:-1] + (1,)
                        out[f"{sname}-{order}-{mode}"] = (y, None, inv.reshape(ish), rnd(s32, t_dt))
                        out[f"{sname}-{order}-{mode}-cast"] = (y2, None, inv.reshape(ish), rnd(s32, t_dt))
            else:
                from conformance.dtypes import elem_type

                for vname, (y, mean, inv) in variant_outputs(s, gamma, beta, axis=-1, epsilon=epsilon, stash_type=1,
                                                             t_elem=elem_type(t_dt)).items():
                    out[f"{sname}-{vname}"] = (rnd(y, t_dt), mean, inv, rnd(s32, t_dt))
    return out
