"""Exact oracles, accumulation bounds and legitimate float32 kernels of the convolution operators
(Conv, ConvTranspose, and the operators built on them).

**Exact values.**  Every finite floating input is an integer times a power of two
(:func:`conformance.reference.linalg.scaled_ints`), so a convolution of such inputs is an exact
rational: the oracles gather the terms of every output element with an im2col layout (Conv) or
scatter them (ConvTranspose), multiply and add Python integers, and round once to float64.
Padding is zeros, as the texts define it ("the number of pixels added").  IEEE special values
are term by term (as :func:`conformance.reference.linalg.exact_matmul`): an output is NaN if a
term is NaN (a NaN factor, ``0 * inf``) or its terms hold both infinities, else ``+-inf`` if a
term is infinite.  The suite's cases put NaN only in X (a NaN in a window is NaN in every
algorithm below, Winograd included) and never infinities (Winograd and FFT convolutions mix
the inputs of a tile before multiplying: ``inf - inf`` where a direct sum has ``inf``).

**Accumulation bound** (Higham, *Accuracy and Stability of Numerical Algorithms*, 2nd ed.,
§3.1 eq. (3.5), the rule of :mod:`conformance.reference.linalg`): an output element is a sum of
``Q = (C / group) * prod(kernel_shape)`` products plus the bias; any order, blocking or fused
multiply-add in a precision of unit roundoff ``u`` is within ``gamma_{Q+1}(u) (sum |w||x| +
|b|) + (Q + 1) s`` of the exact value (:func:`direct_bound`).

**Winograd F(2x2, 3x3)** (Lavin & Gray, "Fast Algorithms for Convolutional Neural Networks",
CVPR 2016; the transforms ``B^T``, ``G``, ``A^T`` of their §4.1): ``Y = A^T [sum_c (G g_c G^T) .
(B^T d_c B)] A`` per 4x4 input tile ``d`` and 2x2 output tile.  It is not a reordering of the
direct sum: its terms are products of *transformed* values, so its error is bounded by the
magnitudes of the transformed quantities, not by ``sum |w||x|`` (Barabasz, Anderson,
Soodhalter & Gregg, "Error analysis and improving the accuracy of Winograd convolution for deep
neural networks", ACM TOMS 46(4), 2020, §4: the error grows with the norms of the transform
matrices).  Applying Higham's model to each stage -- input transform (two additions per
element), weight transform (four additions, the halvings exact), the product, the sum over
``C / group`` channels, the output transform (four additions) and the bias -- gives per
output element ``gamma_{C/group + 11}(u) * |A^T| (sum_c |G||g_c||G^T| . |B^T||d_c||B|) |A|``
(+ |b|) (:func:`winograd_bound`), for any tiling origin (both parities are bounded).  The
tolerance of a 2-D 3x3 stride-1 undilated convolution is the larger of the two bounds, so a
Winograd kernel passes; a float16 accumulator still fails the long sums by orders of magnitude
(measured in the tests).
"""

from __future__ import annotations

import itertools
import math

import numpy as np

from . import spatial as S
from .linalg import U32, U64, S32, S64, floats_of, gamma, scaled_ints  # noqa: F401  (re-exported for callers)

#: Lavin & Gray's F(2x2, 3x3) transforms: ``Y = A^T [(G g G^T) . (B^T d B)] A``.
WINO_BT = np.array([[1, 0, -1, 0], [0, 1, 1, 0], [0, -1, 1, 0], [0, 1, 0, -1]], dtype=np.float64)
WINO_G = np.array([[1, 0, 0], [0.5, 0.5, 0.5], [0.5, -0.5, 0.5], [0, 0, 1]], dtype=np.float64)
WINO_AT = np.array([[1, 1, 1, 0], [0, 1, -1, -1]], dtype=np.float64)
#: Roundings along a Winograd output beyond the channel sum (module docstring): input transform
#: 2, weight transform 4, product 1, output transform 4.
WINO_DEPTH = 11


# ----------------------------------------------------------------------------- validation
def _attr(attrs, name, default=None):
    v = attrs.get(name, default)
    return default if v is None else v


def conv_geometry(x_shape, w_shape, attrs) -> S.Geometry:
    """The :class:`~conformance.reference.spatial.Geometry` of Conv (and DeformConv, FusedConv)
    for X ``(N, C, D1..Dn)`` and W ``(M, C/group, k1..kn)``, after the checks the text implies:
    "X.shape[1] == (W.shape[1] * group) == C and W.shape[0] mod G == 0", W of X's rank,
    ``kernel_shape`` (when given) equal to W's spatial dims, ``pads`` of length ``2n``.

    Raises:
        ValueError: any of those broken, or no output window (:func:`spatial.conv_geometry`).
    """
    x_shape, w_shape = tuple(x_shape), tuple(w_shape)
    group = int(_attr(attrs, "group", 1))
    if len(x_shape) < 3 or len(w_shape) != len(x_shape):
        raise ValueError(f"X {x_shape} and W {w_shape}: W must have X's rank (at least 3)")
    if group < 1 or x_shape[1] != w_shape[1] * group:
        raise ValueError(f"X.shape[1] = {x_shape[1]} must equal W.shape[1] * group = {w_shape[1]} * {group}")
    if w_shape[0] % group:
        raise ValueError(f"W.shape[0] = {w_shape[0]} is not a multiple of group = {group}")
    ks = attrs.get("kernel_shape")
    if ks is not None and tuple(int(k) for k in ks) != w_shape[2:]:
        raise ValueError(f"kernel_shape {tuple(ks)} disagrees with W's spatial shape {w_shape[2:]}")
    _pads_with_auto_pad(attrs)
    return S.conv_geometry(x_shape[2:], w_shape[2:], attrs.get("strides"), attrs.get("dilations"),
                           attrs.get("pads"), _attr(attrs, "auto_pad", "NOTSET"))


def _pads_with_auto_pad(attrs) -> None:
    """pads "cannot be used simultaneously with auto_pad attribute" (auto_pad other than NOTSET).

    Raises:
        ValueError: both given; an auto_pad outside the four values.
    """
    if S.auto_pad_name(_attr(attrs, "auto_pad", "NOTSET")) != "NOTSET" and attrs.get("pads") is not None:
        raise ValueError("pads cannot be used simultaneously with auto_pad")


def conv_transpose_geometry(x_shape, w_shape, attrs, version: int = 22) -> S.Geometry:
    """The geometry of ConvTranspose for X ``(N, C, D1..Dn)`` and W ``(C, M/group, k1..kn)``
    (:func:`spatial.conv_transpose_geometry`).  ConvTranspose-1's text splits an ``output_shape``'s
    odd total padding the other way round ("If (auto_pads != SAME_UPPER): pads[start_i] =
    total_padding[i]/2"): with ``version < 11`` and ``output_shape`` given, the begin/end split
    follows that text.

    Raises:
        ValueError: W not of X's rank, ``W.shape[0] != C``, ``group`` not dividing C,
            ``kernel_shape`` disagreeing with W, pads with an auto_pad other than NOTSET, an
            ``output_padding`` not less than its stride or dilation ("Each padding value in
            output_padding must be less than the corresponding stride/dilation dimension"; read
            as less than either, as PyTorch and onnxruntime do), a negative output size.
    """
    x_shape, w_shape = tuple(x_shape), tuple(w_shape)
    group = int(_attr(attrs, "group", 1))
    if len(x_shape) < 3 or len(w_shape) != len(x_shape):
        raise ValueError(f"X {x_shape} and W {w_shape}: W must have X's rank (at least 3)")
    if w_shape[0] != x_shape[1] or group < 1 or x_shape[1] % group:
        raise ValueError(f"W.shape[0] = {w_shape[0]} must be C = {x_shape[1]}, a multiple of group = {group}")
    ks = attrs.get("kernel_shape")
    if ks is not None and tuple(int(k) for k in ks) != w_shape[2:]:
        raise ValueError(f"kernel_shape {tuple(ks)} disagrees with W's spatial shape {w_shape[2:]}")
    auto_pad = S.auto_pad_name(_attr(attrs, "auto_pad", "NOTSET"))
    _pads_with_auto_pad(attrs)
    rank = len(x_shape) - 2
    for o, st, d in zip(attrs.get("output_padding") or (), attrs.get("strides") or (1,) * rank,
                        attrs.get("dilations") or (1,) * rank):
        if int(o) >= max(int(st), int(d)):
            raise ValueError(f"output_padding {o} is not less than stride/dilation ({st}, {d})")
    g = S.conv_transpose_geometry(x_shape[2:], w_shape[2:], attrs.get("strides"), attrs.get("dilations"),
                                  attrs.get("pads"), auto_pad, attrs.get("output_padding"),
                                  attrs.get("output_shape"))
    if version < 11 and attrs.get("output_shape") is not None and auto_pad != "SAME_UPPER":
        # ConvTranspose-1: begin = total / 2, end = total - total / 2 unless SAME_UPPER
        full = [b + o + e for b, o, e in zip(g.begin, g.out, g.end)]
        tot = [f - o for f, o in zip(full, g.out)]
        begin = tuple(t // 2 for t in tot)
        end = tuple(t - t // 2 for t in tot)
        g = S.Geometry(g.out, begin, end, g.strides, g.dilations, g.kernel_shape)
    elif version < 11 and attrs.get("output_shape") is not None:
        full = [b + o + e for b, o, e in zip(g.begin, g.out, g.end)]
        tot = [f - o for f, o in zip(full, g.out)]
        g = S.Geometry(g.out, tuple(t - t // 2 for t in tot), tuple(t // 2 for t in tot), g.strides, g.dilations,
                       g.kernel_shape)
    return g


# ----------------------------------------------------------------------------- layouts
def _pad(x: np.ndarray, geo: S.Geometry, fill=0) -> np.ndarray:
    """X ``(N, C, D...)`` with the geometry's (non-negative) pads of ``fill`` on the spatial axes."""
    width = [(0, 0), (0, 0)] + [(max(b, 0), max(e, 0)) for b, e in zip(geo.begin, geo.end)]
    if x.dtype == object:
        out = np.full(tuple(d + a + b for d, (a, b) in zip(x.shape, width)), fill, dtype=object)
        out[tuple(slice(a, a + d) for d, (a, _) in zip(x.shape, width))] = x
        return out
    return np.pad(x, width, constant_values=fill)


def _offsets(kernel_shape) -> list[tuple[int, ...]]:
    return list(itertools.product(*[range(k) for k in kernel_shape]))


def im2col(xp: np.ndarray, geo: S.Geometry) -> np.ndarray:
    """The columns of a padded X ``(N, C, P...)``: ``(N, C, K, L)`` with ``K = prod(kernel)``
    (kernel offsets in row-major order) and ``L = prod(out)`` (output positions row-major):
    ``cols[n, c, k, l]`` is the input element that kernel offset ``k`` meets at output ``l``."""
    n, c = xp.shape[:2]
    outs = []
    for off in _offsets(geo.kernel_shape):
        sl = tuple(slice(o * d, o * d + (m - 1) * s + 1, s) for o, d, m, s in
                   zip(off, geo.dilations, geo.out, geo.strides))
        outs.append(xp[(slice(None), slice(None)) + sl].reshape(n, c, int(np.prod(geo.out, dtype=np.int64))))
    if not outs:
        return np.zeros((n, c, 0, int(np.prod(geo.out))), dtype=xp.dtype)
    return np.stack(outs, axis=2)


def _grouped_product(cols: np.ndarray, w: np.ndarray, group: int) -> np.ndarray:
    """``y[n, m, l] = sum_{c in m's group, k} w[m, c, k] cols[n, c_g + c, k, l]`` for ``cols``
    ``(N, C, K, L)`` and ``w`` ``(M, C/group, K)`` (any dtype numpy.matmul takes, object
    included)."""
    n, c, k, l_ = cols.shape
    m = w.shape[0]
    cg, mg = c // group, m // group
    parts = []
    for g in range(group):
        a = w[g * mg:(g + 1) * mg].reshape(mg, cg * k)
        b = cols[:, g * cg:(g + 1) * cg].reshape(n, cg * k, l_)
        parts.append(np.matmul(a, b))
    return np.concatenate(parts, axis=1) if parts else np.zeros((n, 0, l_), dtype=cols.dtype)


def _exact_sum(ints: np.ndarray, e: int, b, shape) -> np.ndarray:
    """``ints * 2^e`` (+ the exact bias ``b`` ``(M,)`` broadcast on axis 1) rounded once to float64."""
    if b is not None:
        bi, eb = scaled_ints(np.where(np.isfinite(b), b, 0.0))
        e0 = min(e, eb)
        bb = np.asarray(bi, dtype=object) * (2 ** (eb - e0))
        ints = ints * (2 ** (e - e0)) + bb.reshape((1, -1) + (1,) * (ints.ndim - 2))
        e = e0
    return floats_of(ints, e).reshape(shape)


def _classes(count, x: np.ndarray, w: np.ndarray):
    """(NaN, +inf, -inf) masks of the outputs from IEEE term classes; ``count(a, b)`` is the
    operator's bilinear map applied to float64 indicator arrays of X and W."""
    f = np.isfinite
    ind = lambda m: m.astype(np.float64)  # noqa: E731
    ones_x, ones_w = np.ones_like(x), np.ones_like(w)
    nan = count(ind(np.isnan(x)), ones_w) + count(ones_x, ind(np.isnan(w))) + \
        count(ind(np.isinf(x)), ind(w == 0)) + count(ind(x == 0), ind(np.isinf(w)))
    pos = count(ind(x == np.inf), ind(w > 0)) + count(ind(x == -np.inf), ind(w < 0)) + \
        count(ind(f(x) & (x > 0)), ind(w == np.inf)) + count(ind(f(x) & (x < 0)), ind(w == -np.inf))
    neg = count(ind(x == np.inf), ind(w < 0)) + count(ind(x == -np.inf), ind(w > 0)) + \
        count(ind(f(x) & (x > 0)), ind(w == -np.inf)) + count(ind(f(x) & (x < 0)), ind(w == np.inf))
    return nan > 0, pos > 0, neg > 0


def _with_specials(y: np.ndarray, masks, b) -> np.ndarray:
    nan, pos, neg = masks
    y = np.where(pos, math.inf, y)
    y = np.where(neg, -math.inf, y)
    y = np.where(nan | (pos & neg), math.nan, y)
    if b is not None and not np.isfinite(b).all():  # IEEE: the bias is added last
        with np.errstate(invalid="ignore"):
            bad = ~np.isfinite(b).reshape((1, -1) + (1,) * (y.ndim - 2))
            y = np.where(bad, y + b.reshape(bad.shape), y)
    return y


# ----------------------------------------------------------------------------- Conv

def _exact_products(x, w, b, m: int, shape: tuple, product) -> np.ndarray:
    """The exact value of ``product(x, w) + b`` (a convolution or its transpose, ``product`` mapping
    two integer-scaled operands to the per-output sums of products), rounded once to float64, with
    the IEEE special values where an operand or B holds NaN or infinities.

    Args:
        x, w: float64 data and weights (any finite values are exact in float64).
        b: optional bias, reshaped to ``(m,)``.
        shape: the output shape.

    Raises:
        ValueError: B is not of shape ``(m,)``.
    """
    if b is not None:
        b = np.asarray(b, dtype=np.float64).reshape(-1)
        if b.shape != (m,):
            raise ValueError(f"B has shape {b.shape}, not (M,) = ({m},)")
    xi, ex = scaled_ints(np.where(np.isfinite(x), x, 0.0))
    wi, ew = scaled_ints(np.where(np.isfinite(w), w, 0.0))
    y = _exact_sum(product(xi, wi), ex + ew, b, shape)
    if np.isfinite(x).all() and np.isfinite(w).all() and (b is None or np.isfinite(b).all()):
        return y
    return _with_specials(y, _classes(product, x, w), b)


def _conv_map(x: np.ndarray, w: np.ndarray, geo: S.Geometry, group: int) -> np.ndarray:
    """The bilinear map of Conv (no bias) in the arrays' own arithmetic: ``(N, M, out...)``."""
    cols = im2col(_pad(x, geo), geo)
    y = _grouped_product(cols, w.reshape(w.shape[0], w.shape[1], -1), group)
    return y.reshape((x.shape[0], w.shape[0]) + geo.out)


def conv_sums(x, w, attrs=None) -> np.ndarray:
    """The bilinear map of Conv without bias in the arrays' own arithmetic (object arrays of
    Python ints or Fractions: exactly), ``(N, M, out...)``, the padding filled with 0; for the
    integer convolutions (ConvInteger, QLinearConv, :mod:`conformance.reference.qlinear`).

    Raises:
        ValueError: invalid shapes or attributes (:func:`conv_geometry`).
    """
    attrs = attrs or {}
    x, w = np.asarray(x), np.asarray(w)
    geo = conv_geometry(x.shape, w.shape, attrs)
    return _conv_map(x, w, geo, int(_attr(attrs, "group", 1)))


def conv(x, w, b=None, attrs=None) -> np.ndarray:
    """Conv, exactly: ``Y[n, m, o] = B[m] + sum_{c in m's group, k} W[m, c, k] Xpad[n, c_g + c,
    o * strides + k * dilations]``, rounded once to float64 (module docstring; IEEE special
    values term by term).  ``x`` ``(N, C, D...)``, ``w`` ``(M, C/group, k...)``, ``b`` ``(M,)``
    or None, float64; ``attrs`` the node's attributes (auto_pad, pads, strides, dilations,
    group, kernel_shape).  Returns ``(N, M, out...)`` float64.

    Raises:
        ValueError: invalid shapes or attributes (:func:`conv_geometry`).
    """
    attrs = attrs or {}
    x, w = np.asarray(x, dtype=np.float64), np.asarray(w, dtype=np.float64)
    geo = conv_geometry(x.shape, w.shape, attrs)
    group = int(_attr(attrs, "group", 1))
    shape = (x.shape[0], w.shape[0]) + geo.out
    return _exact_products(x, w, b, w.shape[0], shape, lambda u, v: _conv_map(u, v, geo, group))


def conv_abs(x, w, b=None, attrs=None) -> np.ndarray:
    """``sum |w||x| + |b|`` per output element of Conv (float64, rounded up by a relative
    ``4 (Q + 2) u64``; non-finite inputs count as 0)."""
    attrs = attrs or {}
    x = np.abs(np.where(np.isfinite(x), x, 0.0)).astype(np.float64)
    w = np.abs(np.where(np.isfinite(w), w, 0.0)).astype(np.float64)
    geo = conv_geometry(x.shape, w.shape, attrs)
    group = int(_attr(attrs, "group", 1))
    q = terms(w.shape, attrs)
    with np.errstate(over="ignore"):
        y = _conv_map(x, w, geo, group) * (1 + 4 * (q + 2) * U64)
        if b is not None:
            y = y + np.abs(np.asarray(b, dtype=np.float64)).reshape((1, -1) + (1,) * len(geo.out))
    return y


def terms(w_shape, attrs=None) -> int:
    """``Q = (C / group) * prod(kernel_shape)``: the products per Conv output element (W
    ``(M, C/group, k...)``)."""
    return int(np.prod(w_shape[1:], dtype=np.int64))


def direct_bound(x, w, b, attrs, u: float, s: float) -> np.ndarray:
    """Higham's bound ``gamma_{Q+1}(u) (sum |w||x| + |b|) + (Q + 1) s`` per Conv output element
    (module docstring)."""
    q = terms(np.shape(w), attrs) + (0 if b is None else 1)
    return gamma(q, u) * conv_abs(x, w, b, attrs) + q * s


def winograd_eligible(x_shape, w_shape, attrs) -> bool:
    """Whether Winograd F(2x2, 3x3) computes this Conv: 2-D, a 3x3 kernel, strides and
    dilations 1 (pads and groups any)."""
    if len(x_shape) != 4 or tuple(w_shape[2:]) != (3, 3):
        return False
    return all(int(v) == 1 for v in (attrs.get("strides") or (1, 1))) and \
        all(int(v) == 1 for v in (attrs.get("dilations") or (1, 1)))


def _winograd_tiles(xp: np.ndarray, out: tuple[int, int], parity: tuple[int, int]):
    """4x4 input tiles of a padded X ``(N, C, P, Q)`` for output tiles starting at
    ``-parity + 2 t`` on each axis: ``(N, C, T0, T1, 4, 4)`` (outside the padded input: 0)."""
    n, c = xp.shape[:2]
    t0, t1 = (out[0] + parity[0] + 1) // 2, (out[1] + parity[1] + 1) // 2
    ext = np.zeros((n, c, 2 * t0 + 4, 2 * t1 + 4), dtype=xp.dtype)
    h, w_ = min(xp.shape[2], ext.shape[2] - parity[0]), min(xp.shape[3], ext.shape[3] - parity[1])
    ext[:, :, parity[0]:parity[0] + h, parity[1]:parity[1] + w_] = xp[:, :, :h, :w_]
    idx0 = 2 * np.arange(t0)[:, None] + np.arange(4)[None, :]
    idx1 = 2 * np.arange(t1)[:, None] + np.arange(4)[None, :]
    tiles = ext[:, :, idx0[:, None, :, None], idx1[None, :, None, :]]  # (N, C, T0, T1, 4, 4)
    return tiles, t0, t1


def _untile(yt: np.ndarray, out: tuple[int, int], parity: tuple[int, int]) -> np.ndarray:
    """Output tiles ``(N, M, T0, T1, 2, 2)`` back to ``(N, M, out0, out1)`` (tiles start at
    ``-parity``)."""
    n, m, t0, t1 = yt.shape[:4]
    full = yt.transpose(0, 1, 2, 4, 3, 5).reshape(n, m, 2 * t0, 2 * t1)
    return full[:, :, parity[0]:parity[0] + out[0], parity[1]:parity[1] + out[1]]


def winograd_abs(x, w, attrs) -> np.ndarray:
    """``|A^T| (sum_c |G||g_c||G^T| . |B^T||d_c||B|) |A|`` per output element of an eligible
    Conv (:func:`winograd_eligible`), the larger over both tiling parities of each axis
    (float64, rounded up; no bias).  Shapes as :func:`conv`."""
    x = np.abs(np.where(np.isfinite(x), x, 0.0)).astype(np.float64)
    w = np.abs(np.where(np.isfinite(w), w, 0.0)).astype(np.float64)
    geo = conv_geometry(x.shape, w.shape, attrs)
    group = int(_attr(attrs, "group", 1))
    xp = _pad(x, geo)
    ag, abt, aat = np.abs(WINO_G), np.abs(WINO_BT), np.abs(WINO_AT)
    u = np.einsum("ik,mckl,jl->mcij", ag, w, ag)  # (M, Cg, 4, 4)
    m_, cg = w.shape[:2]
    mg = m_ // group
    best = np.zeros((x.shape[0], m_) + geo.out)
    for parity in itertools.product((0, 1), repeat=2):
        tiles, _, _ = _winograd_tiles(xp, geo.out, parity)
        v = np.einsum("ik,ncabkl,jl->ncabij", abt, tiles, abt)  # (N, C, T0, T1, 4, 4)
        parts = []
        for g in range(group):
            parts.append(np.einsum("mcij,ncabij->nmabij", u[g * mg:(g + 1) * mg], v[:, g * cg:(g + 1) * cg]))
        prod = np.concatenate(parts, axis=1)
        yt = np.einsum("pi,nmabij,qj->nmabpq", aat, prod, aat)
        best = np.maximum(best, _untile(yt, geo.out, parity))
    return best * (1 + 64 * U64)


def winograd_bound(x, w, b, attrs, u: float, s: float) -> np.ndarray:
    """``gamma_{C/group + 11 + [b]}(u) (winograd_abs + |b|) + (C/group + 11) * 16 s`` per output
    element (module docstring)."""
    k = np.shape(w)[1] + WINO_DEPTH + (0 if b is None else 1)
    mag = winograd_abs(x, w, attrs)
    if b is not None:
        mag = mag + np.abs(np.asarray(b, dtype=np.float64)).reshape((1, -1, 1, 1))
    return gamma(k, u) * mag + k * 16 * s


def conv_bound(x, w, b, attrs, u: float, s: float) -> np.ndarray:
    """The accumulation bound of a Conv output element: :func:`direct_bound`, and for a
    Winograd-eligible geometry the larger of it and :func:`winograd_bound`."""
    bd = direct_bound(x, w, b, attrs, u, s)
    if winograd_eligible(np.shape(x), np.shape(w), attrs):
        bd = np.maximum(bd, winograd_bound(x, w, b, attrs, u, s))
    return bd


# ----------------------------------------------------------------------------- ConvTranspose
def _scatter_frame(geo: S.Geometry, spatial) -> tuple[list[int], tuple[int, ...]]:
    """Where ConvTranspose's products land, for input spatial shape ``spatial``: ``(lo, size)``,
    the full position of the accumulator's first element (``min(0, begin)`` per axis: pads may be
    negative) and the accumulator's spatial size (it holds every full position
    ``i * s + k * d`` and the output window ``[begin, begin + out)``)."""
    lo = [min(0, b) for b in geo.begin]
    full = [s * (d - 1) + S.dilated_extent(k, dl) for s, d, k, dl in
            zip(geo.strides, spatial, geo.kernel_shape, geo.dilations)]
    return lo, tuple(max(f, b + o) - lo_ for f, b, o, lo_ in zip(full, geo.begin, geo.out, lo))


def _scatter_slice(geo: S.Geometry, lo, spatial, off) -> tuple[slice, ...]:
    """The accumulator positions the products of kernel offset ``off`` land on (every input
    position ``i`` at ``i * s + off * d - lo``)."""
    return tuple(slice(k * dl - lo_, k * dl - lo_ + (d - 1) * s + 1, s) for k, dl, lo_, d, s in
                 zip(off, geo.dilations, lo, spatial, geo.strides))


def _scatter_crop(geo: S.Geometry, lo) -> tuple[slice, ...]:
    """The output window of the accumulator (batch and channel axes included)."""
    return (slice(None), slice(None)) + tuple(slice(b - lo_, b - lo_ + o) for b, lo_, o in zip(geo.begin, lo, geo.out))


def _transpose_map(x: np.ndarray, w: np.ndarray, geo: S.Geometry, group: int) -> np.ndarray:
    """The bilinear map of ConvTranspose (no bias) in the arrays' own arithmetic: ``x`` ``(N, C,
    D...)``, ``w`` ``(C, M/group, k...)`` -> ``(N, M, out...)``: every product
    ``x[n, c, i] w[c, m, k]`` lands at full position ``i * s + k * d``, output ``o`` is full
    position ``o + begin``."""
    n, c = x.shape[:2]
    mg = w.shape[1]
    cg = c // group
    m = mg * group
    spatial = x.shape[2:]
    lo, size = _scatter_frame(geo, spatial)
    acc = np.zeros((n, m) + size, dtype=x.dtype)
    if x.dtype == object:
        acc[...] = 0
    xf = x.reshape(n, c, int(np.prod(spatial, dtype=np.int64)))
    for off in _offsets(geo.kernel_shape):
        wk = w[(slice(None), slice(None)) + off]  # (C, Mg)
        parts = []
        for g in range(group):
            a = wk[g * cg:(g + 1) * cg].T  # (Mg, Cg)
            parts.append(np.matmul(a, xf[:, g * cg:(g + 1) * cg]))  # (N, Mg, L)
        t = np.concatenate(parts, axis=1).reshape((n, m) + tuple(spatial))
        if all(d > 0 for d in spatial):
            acc[(slice(None), slice(None)) + _scatter_slice(geo, lo, spatial, off)] += t
    return acc[_scatter_crop(geo, lo)]


def conv_transpose(x, w, b=None, attrs=None, version: int = 22) -> np.ndarray:
    """ConvTranspose, exactly: ``Y[n, g Mg + m, o] = B[.] + sum_{c in group g, i, k: i s + k d
    = o + begin} X[n, g Cg + c, i] W[g Cg + c, m, k]``, rounded once to float64 (module
    docstring).  ``w`` has the layout ``(C, M/group, k...)``; the output has ``M = W.shape[1] *
    group`` channels and the size :func:`conv_transpose_geometry` gives (``output_padding``
    adds positions that receive no term, ``output_shape`` overrides pads).

    Raises:
        ValueError: invalid shapes or attributes.
    """
    attrs = attrs or {}
    x, w = np.asarray(x, dtype=np.float64), np.asarray(w, dtype=np.float64)
    geo = conv_transpose_geometry(x.shape, w.shape, attrs, version)
    group = int(_attr(attrs, "group", 1))
    m = w.shape[1] * group
    shape = (x.shape[0], m) + geo.out
    return _exact_products(x, w, b, m, shape, lambda u, v: _transpose_map(u, v, geo, group))


def transpose_terms(x_shape, w_shape, attrs, version: int = 22) -> int:
    """An upper bound of the products per ConvTranspose output element: ``C/group`` times, per
    axis, the kernel offsets that can meet one output position (``ceil(k / (s / gcd(s, d)))``)."""
    geo = conv_transpose_geometry(x_shape, w_shape, attrs, version)
    group = int(_attr(attrs, "group", 1))
    per = 1
    for k, s, d in zip(geo.kernel_shape, geo.strides, geo.dilations):
        step = s // math.gcd(s, d)
        per *= -(-k // step)
    return (x_shape[1] // group) * per


def conv_transpose_bound(x, w, b, attrs, u: float, s: float, version: int = 22) -> np.ndarray:
    """Higham's bound per ConvTranspose output element: ``gamma_{Q+1}(u) (sum |w||x| + |b|) +
    (Q + 1) s`` with ``Q`` :func:`transpose_terms` (a scatter kernel adds the same terms in
    another order; col2im-based kernels too)."""
    x = np.abs(np.where(np.isfinite(x), x, 0.0)).astype(np.float64)
    w = np.abs(np.where(np.isfinite(w), w, 0.0)).astype(np.float64)
    geo = conv_transpose_geometry(x.shape, w.shape, attrs, version)
    group = int(_attr(attrs, "group", 1))
    q = transpose_terms(x.shape, w.shape, attrs, version) + (0 if b is None else 1)
    with np.errstate(over="ignore"):
        mag = _transpose_map(x, w, geo, group) * (1 + 4 * (q + 2) * U64)
        if b is not None:
            mag = mag + np.abs(np.asarray(b, dtype=np.float64)).reshape((1, -1) + (1,) * len(geo.out))
    return gamma(q, u) * mag + q * s


# ----------------------------------------------------------------------------- legitimate kernels
def _acc_type(dt: np.dtype):
    return np.float64 if dt == np.float64 else np.float32


def direct(x, w, b, attrs, order: str = "forward", acc=None) -> np.ndarray:
    """A legitimate Conv kernel: each output a sequential sum over (channel, kernel offset) in
    ``acc`` (default: float32, float64 for double), ``forward`` or ``reverse`` order, the bias
    added last, rounded to X's type.  Inputs in their element types.

    Raises:
        ValueError: invalid shapes or attributes.
    """
    dt = x.dtype
    acc = acc or _acc_type(dt)
    geo = conv_geometry(x.shape, w.shape, attrs)
    group = int(_attr(attrs, "group", 1))
    cols = im2col(_pad(x.astype(acc), geo), geo)  # (N, C, K, L)
    n, _, k, l_ = cols.shape
    m, cg = w.shape[:2]
    mg = m // group
    wf = w.astype(acc).reshape(m, cg * k)
    y = np.zeros((n, m, l_), dtype=acc)
    qs = range(cg * k) if order == "forward" else range(cg * k - 1, -1, -1)
    with np.errstate(all="ignore"):
        for g in range(group):
            cg_cols = cols[:, g * cg:(g + 1) * cg].reshape(n, cg * k, l_)
            part = np.zeros((n, mg, l_), dtype=acc)
            for q in qs:
                part = (part + wf[g * mg:(g + 1) * mg, q][None, :, None] * cg_cols[:, q][:, None, :]).astype(acc)
            y[:, g * mg:(g + 1) * mg] = part
        if b is not None:
            y = (y + b.astype(acc)[None, :, None]).astype(acc)
    return y.reshape((n, m) + geo.out).astype(dt)


def im2col_gemm(x, w, b, attrs, block: int = 8) -> np.ndarray:
    """A legitimate Conv kernel: im2col, then a blocked GEMM whose blocks of ``block`` terms are
    accumulated by fused multiply-add (``fl(a b + c)``, one rounding: computed in float64 and
    rounded to float32; float64 inputs: plain float64), the block sums added pairwise, the bias
    added last."""
    dt = x.dtype
    acc = _acc_type(dt)
    geo = conv_geometry(x.shape, w.shape, attrs)
    group = int(_attr(attrs, "group", 1))
    cols = im2col(_pad(x.astype(acc), geo), geo)
    n, _, k, l_ = cols.shape
    m, cg = w.shape[:2]
    mg = m // group
    wf = w.astype(acc).reshape(m, cg * k)
    y = np.zeros((n, m, l_), dtype=acc)
    with np.errstate(all="ignore"):
        for g in range(group):
            gc = cols[:, g * cg:(g + 1) * cg].reshape(n, cg * k, l_)
            sums = []
            for start in range(0, cg * k, block):
                part = np.zeros((n, mg, l_), dtype=acc)
                for q in range(start, min(start + block, cg * k)):
                    prod = wf[g * mg:(g + 1) * mg, q][None, :, None].astype(np.float64) * \
                        gc[:, q][:, None, :].astype(np.float64)
                    part = (prod + part.astype(np.float64)).astype(acc)  # FMA: one rounding
                sums.append(part)
            while len(sums) > 1:
                sums = [(sums[i] + sums[i + 1]).astype(acc) if i + 1 < len(sums) else sums[i]
                        for i in range(0, len(sums), 2)]
            if sums:
                y[:, g * mg:(g + 1) * mg] = sums[0]
        if b is not None:
            y = (y + b.astype(acc)[None, :, None]).astype(acc)
    return y.reshape((n, m) + geo.out).astype(dt)


def _bt_rows(d):
    """``B^T d`` along the first axis, as additions (no multiplication by B^T's zeros)."""
    return [d[0] - d[2], d[1] + d[2], d[2] - d[1], d[1] - d[3]]


def _g_rows(g):
    """``G g`` along the first axis (the halvings are exact)."""
    half = g[0].dtype.type(0.5)
    return [g[0], (g[0] + g[1] + g[2]) * half, (g[0] - g[1] + g[2]) * half, g[2]]


def _at_rows(m):
    """``A^T m`` along the first axis."""
    return [m[0] + m[1] + m[2], m[1] - m[2] - m[3]]


def _along(a: np.ndarray, rows, axis: int) -> np.ndarray:
    """Apply a transform written as row formulas (:func:`_bt_rows`...) along ``axis``, each
    operation rounded in ``a``'s dtype."""
    a = np.moveaxis(a, axis, 0)
    return np.moveaxis(np.stack(rows(a)), 0, axis)


def winograd(x, w, b, attrs) -> np.ndarray:
    """A legitimate Conv kernel: Winograd F(2x2, 3x3) (Lavin & Gray 2016) entirely in float32
    (float64 for double) -- weight transform ``G g G^T``, input transform ``B^T d B`` per 4x4
    tile (stride 2, from the padded input's origin), the element-wise product summed over the
    group's channels, output transform ``A^T M A``, bias last -- where
    :func:`winograd_eligible`; the direct kernel elsewhere."""
    if not winograd_eligible(x.shape, w.shape, attrs):
        return direct(x, w, b, attrs)
    dt = x.dtype
    acc = _acc_type(dt)
    geo = conv_geometry(x.shape, w.shape, attrs)
    group = int(_attr(attrs, "group", 1))
    xp = _pad(x.astype(acc), geo)
    m_, cg = w.shape[:2]
    mg = m_ // group
    with np.errstate(all="ignore"):
        u = _along(_along(w.astype(acc), _g_rows, -2), _g_rows, -1)  # G g G^T: (M, Cg, 4, 4)
        tiles, _, _ = _winograd_tiles(xp, geo.out, (0, 0))
        v = _along(_along(tiles, _bt_rows, -2), _bt_rows, -1)  # B^T d B: (N, C, T0, T1, 4, 4)
        parts = []
        for g in range(group):
            parts.append(np.einsum("mcij,ncabij->nmabij", u[g * mg:(g + 1) * mg],
                                   v[:, g * cg:(g + 1) * cg]).astype(acc))
        prod = np.concatenate(parts, axis=1)
        yt = _along(_along(prod, _at_rows, -2), _at_rows, -1)  # A^T M A
        y = _untile(yt, geo.out, (0, 0))
        if b is not None:
            y = (y + b.astype(acc).reshape(1, -1, 1, 1)).astype(acc)
    return np.ascontiguousarray(y).astype(dt)


def conv_transpose_direct(x, w, b, attrs, order: str = "forward", version: int = 22, acc=None) -> np.ndarray:
    """A legitimate ConvTranspose kernel: the scatter of every product ``x[n, c, i] w[c, m, k]``
    into a float32 (float64 for double) accumulator, kernel offsets in ``forward`` or
    ``reverse`` order, then the crop and the bias; rounded to X's type."""
    dt = x.dtype
    acc = acc or _acc_type(dt)
    geo = conv_transpose_geometry(x.shape, w.shape, attrs, version)
    group = int(_attr(attrs, "group", 1))
    xa, wa = x.astype(acc), w.astype(acc)
    n, c = x.shape[:2]
    cg, mg = c // group, w.shape[1]
    m = mg * group
    spatial = x.shape[2:]
    lo, size = _scatter_frame(geo, spatial)
    out = np.zeros((n, m) + size, dtype=acc)
    offs = _offsets(geo.kernel_shape)
    if order == "reverse":
        offs = offs[::-1]
    with np.errstate(all="ignore"):
        for off in offs:
            if not all(d > 0 for d in spatial):
                continue
            sl = _scatter_slice(geo, lo, spatial, off)
            for g in range(group):
                for ci in (range(cg) if order == "forward" else range(cg - 1, -1, -1)):
                    cc = g * cg + ci
                    term = wa[(cc, slice(None)) + off][None, :, *([None] * len(spatial))] * xa[:, cc][:, None]
                    region = out[(slice(None), slice(g * mg, (g + 1) * mg)) + sl]
                    out[(slice(None), slice(g * mg, (g + 1) * mg)) + sl] = (region + term).astype(acc)
        y = out[_scatter_crop(geo, lo)]
        if b is not None:
            y = (y + b.astype(acc).reshape((1, -1) + (1,) * len(spatial))).astype(acc)
    return np.ascontiguousarray(y).astype(dt)


# ----------------------------------------------------------------------------- tolerances
_TYPES = {"float16": np.float16, "bfloat16": None, "float": np.float32, "double": np.float64}


def _finfo(t: str):
    import ml_dtypes

    return ml_dtypes.finfo(ml_dtypes.bfloat16) if t == "bfloat16" else np.finfo(_TYPES[t])


def type_name(dtype) -> str:
    """The spec type name of a floating numpy dtype (``float16``, ``bfloat16``, ``float``,
    ``double``).

    Raises:
        KeyError: another dtype.
    """
    dtype = np.dtype(dtype)
    if dtype.name == "bfloat16":
        return "bfloat16"
    return {np.dtype(np.float16): "float16", np.dtype(np.float32): "float", np.dtype(np.float64): "double"}[dtype]


def mandated(t: str) -> tuple[float, float]:
    """(unit roundoff, smallest subnormal) of the accumulation precision mandated for ``t``:
    at least float32 for the 16-bit types (:data:`conformance.reference.linalg.ACC`)."""
    from .linalg import ACC

    return ACC[t]


def rounding_before_bias(t: str, no_bias_exact: np.ndarray) -> np.ndarray:
    """For the 16-bit types: ``u_T |conv|``, the rounding of the convolution to T before the
    bias is added (a Conv then an Add in T); 0 for float and double (their accumulator is T)."""
    u, _ = mandated(t)
    u_t = float(_finfo(t).eps) / 2
    if u_t <= u:
        return np.zeros(())
    return u_t * np.abs(np.where(np.isfinite(no_bias_exact), no_bias_exact, 0.0))


def output_tolerance(t: str, bound, expected):
    """The :class:`conformance.tolerance.Tolerance` of a ``t``-typed output whose exact values are
    ``expected`` and whose per-element bound is ``bound``: the largest bound over the finite
    expected elements (non-finite ones compare exactly), then the rounding to T on both sides
    (:func:`conformance.reference.linalg.final_tolerance`)."""
    from ..tolerance import Tolerance
    from .linalg import final_tolerance

    fi = _finfo(t)
    e = np.asarray(expected, dtype=np.float64)
    b = np.broadcast_to(np.asarray(bound, dtype=np.float64), e.shape)
    fin = b[np.isfinite(e)]
    atol, rtol = final_tolerance(float(fin.max()) if fin.size else 0.0, float(fi.eps) / 2,
                                 float(fi.smallest_subnormal))
    return Tolerance(atol, rtol, variants=("bound",))


def conv_transpose_expected(x, w, b, attrs, version: int = 22):
    """(exact output, tolerance) of ConvTranspose for inputs of type T (float64 exact values in,
    the type name from ``x``'s dtype): :func:`conv_transpose` and :func:`conv_transpose_bound` in
    the mandated precision, plus :func:`rounding_before_bias`."""
    t = type_name(x.dtype)
    u, s = mandated(t)
    xe, we = np.asarray(x, dtype=np.float64), np.asarray(w, dtype=np.float64)
    be = None if b is None else np.asarray(b, dtype=np.float64)
    y = conv_transpose(xe, we, be, attrs, version)
    bound = conv_transpose_bound(xe, we, be, attrs, u, s, version)
    if be is not None:
        bound = bound + rounding_before_bias(t, conv_transpose(xe, we, None, attrs, version))
    return y, output_tolerance(t, bound, y)


def check_output_shape_either_split(inputs: dict, outputs: dict, attrs: dict) -> tuple[bool, str]:
    """Judge a ConvTranspose-1 with ``output_shape`` and an odd total padding (``Case.check``):
    version 1's text puts the extra padding at the end unless SAME_UPPER, version 11's at the
    beginning unless SAME_UPPER; an output that matches either split (within the derived
    tolerance) passes."""
    from ..ops import values as V
    from ..tolerance import compare

    x, w, b = inputs["X"], inputs["W"], inputs.get("B")
    t = type_name(x.dtype)
    y_name = next(iter(outputs))
    msgs = []
    for version, reading in ((1, "version 1's split"), (11, "version 11's split")):
        y, tol = conv_transpose_expected(x, w, b, attrs, version)
        want = V.to_type(y, t)
        chk = compare(y_name, outputs[y_name], want, tol)
        if chk.passed:
            return True, f"matches {reading} of the odd total padding"
        msgs.append(f"{reading}: {chk.reason}")
    return False, "; ".join(msgs)


# ----------------------------------------------------------------------------- Col2Im
def col2im_geometry(input_shape, image_shape, block_shape, attrs) -> S.Geometry:
    """The block grid of Col2Im: ``input`` ``(N, C * prod(block_shape), L)``, the blocks laid on
    the padded image as a convolution's windows (``L`` must be their count, "enumerated in
    increasing lexicographic-order of their indices").

    Raises:
        ValueError: image_shape and block_shape of different lengths (or fewer than 2 values,
            "a 1-dimensional tensor with size of at least 2"), an input not 3-D, ``input.shape[1]``
            not a multiple of ``prod(block_shape)``, ``L`` not the number of blocks, invalid
            pads/strides/dilations.
    """
    image_shape = tuple(int(v) for v in np.ravel(image_shape))
    block_shape = tuple(int(v) for v in np.ravel(block_shape))
    if len(image_shape) != len(block_shape) or len(image_shape) < 2:
        raise ValueError(f"image_shape {image_shape} and block_shape {block_shape}: equal lengths of at least 2")
    if len(input_shape) != 3:
        raise ValueError(f"input must be 3-D (N, C * prod(block_shape), L), not {tuple(input_shape)}")
    k = int(np.prod(block_shape, dtype=np.int64))
    if k < 1 or input_shape[1] % k:
        raise ValueError(f"input.shape[1] = {input_shape[1]} is not a multiple of prod(block_shape) = {k}")
    geo = S.conv_geometry(image_shape, block_shape, attrs.get("strides"), attrs.get("dilations"), attrs.get("pads"))
    if int(np.prod(geo.out, dtype=np.int64)) != input_shape[2]:
        raise ValueError(f"L = {input_shape[2]} is not the number of blocks {geo.out}")
    return geo


def _col2im_map(x: np.ndarray, image: tuple[int, ...], geo: S.Geometry) -> np.ndarray:
    """The sum of Col2Im in ``x``'s own arithmetic (object ints, floats): ``(N, C, image...)``."""
    n, ck, _ = x.shape
    k = int(np.prod(geo.kernel_shape, dtype=np.int64))
    c = ck // k
    padded = tuple(i + b + e for i, b, e in zip(image, geo.begin, geo.end))
    out = np.zeros((n, c) + padded, dtype=x.dtype)
    if x.dtype == object:
        out[...] = 0
    xr = x.reshape((n, c, k) + geo.out)
    for q, off in enumerate(_offsets(geo.kernel_shape)):
        sl = tuple(slice(o * d, o * d + (m - 1) * s + 1, s) for o, d, m, s in
                   zip(off, geo.dilations, geo.out, geo.strides))
        if n and all(geo.out):
            out[(slice(None), slice(None)) + sl] += xr[:, :, q]
    crop = tuple(slice(b, b + i) for b, i in zip(geo.begin, image))
    return out[(slice(None), slice(None)) + crop]


def col2im(x, image_shape, block_shape, attrs=None) -> np.ndarray:
    """Col2Im (PyTorch's fold, which the text names): every block element
    ``input[n, c * prod(block) + k, l]`` is added at image position ``l_pos * strides + k *
    dilations - pads_begin`` (positions in the padding are dropped), exactly: integers as
    Python ints, floats summed exactly and rounded once to float64 (IEEE special values:
    NaN, or infinities of both signs, give NaN; else an infinity wins), complex numbers by parts.

    Raises:
        ValueError: :func:`col2im_geometry`.
    """
    attrs = attrs or {}
    x = np.asarray(x)
    image = tuple(int(v) for v in np.ravel(image_shape))
    geo = col2im_geometry(x.shape, image, block_shape, attrs)
    if x.dtype == object:
        return _col2im_map(x, image, geo)
    if np.iscomplexobj(x):
        return col2im(x.real, image, block_shape, attrs) + 1j * col2im(x.imag, image, block_shape, attrs)
    x = x.astype(np.float64)
    xi, e = scaled_ints(np.where(np.isfinite(x), x, 0.0))
    y = floats_of(_col2im_map(xi, image, geo), e)
    if np.isfinite(x).all():
        return y
    ind = lambda m: m.astype(np.float64)  # noqa: E731
    nan = _col2im_map(ind(np.isnan(x)), image, geo) > 0
    pos = _col2im_map(ind(x == np.inf), image, geo) > 0
    neg = _col2im_map(ind(x == -np.inf), image, geo) > 0
    return _with_specials(y, (nan, pos, neg), None)


def col2im_bound(x, image_shape, block_shape, attrs, u: float) -> np.ndarray:
    """``gamma_{k-1}(u) sum |x|`` per output element (``k = prod(block_shape)``, the most terms
    an image position receives): any order of the additions in a precision of unit roundoff
    ``u`` (Higham eq. 3.5 with exact products)."""
    x = np.abs(np.where(np.isfinite(x), x, 0.0)).astype(np.float64)
    image = tuple(int(v) for v in np.ravel(image_shape))
    geo = col2im_geometry(x.shape, image, block_shape, attrs)
    k = int(np.prod(geo.kernel_shape, dtype=np.int64))
    return gamma(k - 1, u) * _col2im_map(x, image, geo) * (1 + 4 * (k + 1) * U64)


# ----------------------------------------------------------------------------- DeformConv
def deform_geometry(x_shape, w_shape, offset_shape, mask_shape, attrs) -> S.Geometry:
    """The geometry of DeformConv (as Conv's: :func:`conv_geometry`) after the checks of its
    text: C divisible by offset_group, offset ``(N, offset_group * prod(k) * n, o1..on)``, mask
    ``(N, offset_group * prod(k), o1..on)``.

    Raises:
        ValueError: any of those broken (and Conv's checks).
    """
    geo = conv_geometry(x_shape, w_shape, attrs)
    og = int(_attr(attrs, "offset_group", 1))
    k = int(np.prod(geo.kernel_shape, dtype=np.int64))
    nd = len(geo.out)
    if og < 1 or x_shape[1] % og:
        raise ValueError(f"C = {x_shape[1]} must be divisible by offset_group = {og}")
    want = (x_shape[0], og * k * nd) + geo.out
    if tuple(offset_shape) != want:
        raise ValueError(f"offset has shape {tuple(offset_shape)}, not {want}")
    if mask_shape is not None and tuple(mask_shape) != (x_shape[0], og * k) + geo.out:
        raise ValueError(f"mask has shape {tuple(mask_shape)}, not {(x_shape[0], og * k) + geo.out}")
    return geo


def _deform_samples(x, offset, mask, geo: S.Geometry, og: int, exact: bool):
    """The bilinearly sampled and masked inputs of DeformConv as columns ``(N, C, K, L)``:
    ``mask[n, g, k, o] * sum_corners prod_a w_a X[n, c, corner]`` at position ``o * s - pad +
    k * d + offset[n, g, k, a, o]`` (``g`` the offset group of channel ``c``), corners outside X
    contributing 0.  ``exact``: Fractions (object arrays); else float64 magnitudes
    (``|mask| sum |w_a| |X|``), and a second array: ``|mask| * sum_a (|p_a| + 1) * 2 max|X corners|``
    (the sensitivity to a position rounded relatively by 1)."""
    from fractions import Fraction

    n, c = x.shape[:2]
    spatial = x.shape[2:]
    nd = len(spatial)
    k = int(np.prod(geo.kernel_shape, dtype=np.int64))
    lo = int(np.prod(geo.out, dtype=np.int64))
    cog = c // og
    off = offset.reshape((n, og, k, nd, lo))
    msk = np.ones((n, og, k, lo)) if mask is None else mask.reshape((n, og, k, lo))
    grids = np.meshgrid(*[np.arange(o) for o in geo.out], indexing="ij")
    base = [g.reshape(-1) * s - b for g, s, b in zip(grids, geo.strides, geo.begin)]  # (L,) per axis
    xflat = x.reshape(n, c, int(np.prod(spatial, dtype=np.int64)))
    strides_flat = [int(np.prod(spatial[a + 1:], dtype=np.int64)) for a in range(nd)]
    cols = np.empty((n, c, k, lo), dtype=object) if exact else np.zeros((n, c, k, lo))
    sens = None if exact else np.zeros((n, c, k, lo))
    chan_group = np.arange(c) // cog
    for q, kk in enumerate(_offsets(geo.kernel_shape)):
        pos = [base[a][None, None, :] + kk[a] * geo.dilations[a] + off[:, :, q, a, :] for a in range(nd)]  # (N, og, L)
        pos = [p[:, chan_group, :] for p in pos]  # (N, C, L)
        fl = [np.floor(p) for p in pos]
        fr = [p - f for p, f in zip(pos, fl)]
        acc = None
        worst = np.zeros((n, c, lo)) if not exact else None
        for bits in itertools.product((0, 1), repeat=nd):
            idx = [f.astype(np.int64) + bt for f, bt in zip(fl, bits)]
            valid = np.ones((n, c, lo), dtype=bool)
            for a in range(nd):
                valid &= (idx[a] >= 0) & (idx[a] < spatial[a])
            flat = sum(np.clip(i, 0, max(d - 1, 0)) * st for i, d, st in zip(idx, spatial, strides_flat))
            vals = np.take_along_axis(xflat, flat, axis=2) if xflat.shape[2] else np.zeros((n, c, lo), dtype=x.dtype)
            if exact:
                wgt = np.ones((n, c, lo), dtype=object)
                for a, bt in enumerate(bits):
                    fa = np.vectorize(Fraction, otypes=[object])(fr[a]) if fr[a].size else fr[a].astype(object)
                    wgt = wgt * (fa if bt else 1 - fa)
                term = np.where(valid, wgt * vals, Fraction(0))
            else:
                wgt = np.ones((n, c, lo))
                for a, bt in enumerate(bits):
                    wgt = wgt * (fr[a] if bt else 1 - fr[a])
                term = np.where(valid, np.abs(wgt) * np.abs(vals), 0.0)
                worst = np.maximum(worst, np.where(valid, np.abs(vals), 0.0))
            acc = term if acc is None else acc + term
        m = msk[:, chan_group, q, :]
        if exact:
            mf = np.vectorize(Fraction, otypes=[object])(m) if m.size else m.astype(object)
            cols[:, :, q, :] = acc * mf
        else:
            cols[:, :, q, :] = acc * np.abs(m)
            sens[:, :, q, :] = np.abs(m) * sum(np.abs(p) + 1 for p in pos) * 2 * worst
    return cols, sens


def deform_conv(x, w, offset, b=None, mask=None, attrs=None) -> np.ndarray:
    """DeformConv, exactly (Dai et al. 2017, Zhu et al. 2019 as the text cites them; the layout of
    onnx's reference): ``Y[n, m, o] = B[m] + sum_{c in m's group, k} W[m, c, k] mask[n, g, k, o]
    bilinear(X[n, c], o * strides - pads_begin + k * dilations + offset[n, g, k, :, o])`` with
    ``g = c // (C / offset_group)``, the offset channels ordered (offset group, kernel offset,
    axis), bilinear interpolation over the ``2^n`` neighbours, neighbours outside X counting 0
    ("Sampling locations outside of the padded input tensor gives zero").  Every quantity is a
    dyadic rational: computed with Fractions, rounded once to float64.  Finite inputs only.

    Raises:
        ValueError: :func:`deform_geometry`.
    """
    from fractions import Fraction

    attrs = attrs or {}
    x, w, offset = (np.asarray(v, dtype=np.float64) for v in (x, w, offset))
    mask = None if mask is None else np.asarray(mask, dtype=np.float64)
    geo = deform_geometry(x.shape, w.shape, offset.shape, None if mask is None else mask.shape, attrs)
    og = int(_attr(attrs, "offset_group", 1))
    group = int(_attr(attrs, "group", 1))
    xo = np.vectorize(Fraction, otypes=[object])(x) if x.size else x.astype(object)
    cols, _ = _deform_samples(xo, offset, mask, geo, og, exact=True)
    wo = np.vectorize(Fraction, otypes=[object])(w).reshape(w.shape[0], w.shape[1], -1)
    y = _grouped_product(cols, wo, group)
    if b is not None:
        bo = np.vectorize(Fraction, otypes=[object])(np.asarray(b, dtype=np.float64).reshape(-1))
        y = y + bo.reshape(1, -1, 1)
    out = np.empty(y.shape, dtype=np.float64)
    out.ravel()[:] = [float(v) for v in y.ravel()]
    return out.reshape((x.shape[0], w.shape[0]) + geo.out)


def deform_conv_bound(x, w, offset, b, mask, attrs, u: float, s: float) -> np.ndarray:
    """Per output element of DeformConv in a precision of unit roundoff ``u``:
    ``gamma_{Q 2^n + n + 4}(u) A + u P + (Q 2^n + n + 4) s``, with ``A = sum |W| |mask| sum_corners
    |w_a| |X| + |B|`` (every term a product of at most ``n + 3`` rounded factors, ``Q 2^n``
    terms, any order: Higham eq. 3.5) and ``P = sum |W| |mask| sum_a (|p_a| + 1) 2 max|X|``,
    the bilinear interpolation's sensitivity to sampling positions ``p`` rounded relatively by
    ``u`` (the interpolant is Lipschitz with constant ``2 max|X corners|`` per axis; the
    ``+ 1`` covers the rounding of the fractional part)."""
    x, w, offset = (np.asarray(v, dtype=np.float64) for v in (x, w, offset))
    mask = None if mask is None else np.asarray(mask, dtype=np.float64)
    geo = deform_geometry(x.shape, w.shape, offset.shape, None if mask is None else mask.shape, attrs)
    og = int(_attr(attrs, "offset_group", 1))
    group = int(_attr(attrs, "group", 1))
    cols, sens = _deform_samples(np.abs(x), offset, mask, geo, og, exact=False)
    aw = np.abs(w).reshape(w.shape[0], w.shape[1], -1)
    a = _grouped_product(cols, aw, group)
    p = _grouped_product(sens, aw, group)
    if b is not None:
        a = a + np.abs(np.asarray(b, dtype=np.float64)).reshape(1, -1, 1)
    nd = len(geo.out)
    q = terms(w.shape) * 2 ** nd + nd + 4
    out = (gamma(q, u) * a + u * p) * (1 + 8 * q * U64) + q * s
    return out.reshape((x.shape[0], w.shape[0]) + geo.out)


def deform_conv_f32(x, w, offset, b, mask, attrs, swap_axes: bool = False, ignore_mask: bool = False):
    """A legitimate DeformConv kernel: everything in float32 (float64 for double) -- positions,
    bilinear weights, the masked samples, a sequential sum over (channel, kernel offset), the
    bias -- rounded to X's type.  ``swap_axes``/``ignore_mask`` inject the classic errors (the
    offset pair read as (x, y); the mask ignored)."""
    dt = x.dtype
    acc = _acc_type(dt)
    geo = deform_geometry(x.shape, w.shape, offset.shape, None if mask is None else mask.shape, attrs)
    og = int(_attr(attrs, "offset_group", 1))
    group = int(_attr(attrs, "group", 1))
    n, c = x.shape[:2]
    spatial = x.shape[2:]
    nd = len(spatial)
    k = int(np.prod(geo.kernel_shape, dtype=np.int64))
    lo = int(np.prod(geo.out, dtype=np.int64))
    off = offset.astype(acc).reshape((n, og, k, nd, lo))
    if swap_axes:
        off = off[:, :, :, ::-1]
    msk = None if (mask is None or ignore_mask) else mask.astype(acc).reshape((n, og, k, lo))
    xf = x.astype(acc).reshape(n, c, int(np.prod(spatial, dtype=np.int64)))
    grids = np.meshgrid(*[np.arange(o) for o in geo.out], indexing="ij")
    base = [(g.reshape(-1) * s - bb).astype(acc) for g, s, bb in zip(grids, geo.strides, geo.begin)]
    chan_group = np.arange(c) // (c // og)
    strides_flat = [int(np.prod(spatial[a + 1:], dtype=np.int64)) for a in range(nd)]
    cols = np.zeros((n, c, k, lo), dtype=acc)
    with np.errstate(all="ignore"):
        for q, kk in enumerate(_offsets(geo.kernel_shape)):
            pos = [(base[a][None, None, :] + acc(kk[a] * geo.dilations[a]) + off[:, :, q, a, :]).astype(acc)
                   [:, chan_group] for a in range(nd)]
            fl = [np.floor(p) for p in pos]
            fr = [(p - f).astype(acc) for p, f in zip(pos, fl)]
            val = np.zeros((n, c, lo), dtype=acc)
            for bits in itertools.product((0, 1), repeat=nd):
                idx = [f.astype(np.int64) + bt for f, bt in zip(fl, bits)]
                valid = np.ones((n, c, lo), dtype=bool)
                for a in range(nd):
                    valid &= (idx[a] >= 0) & (idx[a] < spatial[a])
                flat = sum(np.clip(i, 0, max(d - 1, 0)) * st for i, d, st in zip(idx, spatial, strides_flat))
                v = np.take_along_axis(xf, flat, axis=2) if xf.shape[2] else np.zeros((n, c, lo), dtype=acc)
                wgt = np.ones((n, c, lo), dtype=acc)
                for a, bt in enumerate(bits):
                    wgt = (wgt * (fr[a] if bt else (acc(1) - fr[a]).astype(acc))).astype(acc)
                val = (val + np.where(valid, (wgt * v).astype(acc), acc(0))).astype(acc)
            if msk is not None:
                val = (val * msk[:, chan_group, q, :]).astype(acc)
            cols[:, :, q, :] = val
        m_, cg = w.shape[:2]
        mg = m_ // group
        wf = w.astype(acc).reshape(m_, cg * k)
        y = np.zeros((n, m_, lo), dtype=acc)
        for g in range(group):
            gc = cols[:, g * cg:(g + 1) * cg].reshape(n, cg * k, lo)
            part = np.zeros((n, mg, lo), dtype=acc)
            for qq in range(cg * k):
                part = (part + wf[g * mg:(g + 1) * mg, qq][None, :, None] * gc[:, qq][:, None, :]).astype(acc)
            y[:, g * mg:(g + 1) * mg] = part
        if b is not None:
            y = (y + b.astype(acc)[None, :, None]).astype(acc)
    return y.reshape((n, m_) + geo.out).astype(dt)
