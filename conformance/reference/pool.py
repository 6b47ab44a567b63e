"""Float64 oracles, accumulation bounds and checks of the pooling operators (MaxPool,
AveragePool, LpPool, GlobalAveragePool, GlobalMaxPool, GlobalLpPool, MaxUnpool, RoiAlign,
MaxRoiPool and the com.microsoft MaxpoolWithMask and NhwcMaxPool).

**Geometry** (:func:`geometry`, which delegates to the shared
:func:`conformance.reference.spatial.pool_geometry`; the text of MaxPool/AveragePool/LpPool,
every version).  For
spatial axis ``i`` with input size ``D``, kernel ``k``, stride ``s``, dilation ``d`` (the
effective kernel ``K = d (k - 1) + 1``) and pads ``b`` (begin) and ``e`` (end):

* explicit pads (``auto_pad`` NOTSET): ``O = floor((D + b + e - K) / s + 1)``, or ``ceil`` with
  ``ceil_mode``; then "sliding windows that would start in the right padded region are
  ignored": while ``(O - 1) s >= D + b`` the last window is dropped (the rule PyTorch states and
  the text links to);
* ``VALID``: ``O = floor((D - K) / s) + 1`` (the text's ceil form for ceil_mode gives the same
  integer), no padding;
* ``SAME_UPPER`` / ``SAME_LOWER``: ``O = ceil(D / s)``, total padding
  ``P = (O - 1) s + K - D`` split ``floor(P/2)`` / ``ceil(P/2)``, the odd one at the end
  (UPPER) or at the beginning (LOWER).  The padding comes from the *dilated* kernel, as the
  text's formula says.

Window ``o`` covers the positions ``o s - b + j d``, ``j < k``.  A position in ``[0, D)`` is an
input element; one in ``[-b, 0)`` or ``[D, D + e)`` is padding; one at or beyond ``D + e`` lies
in the ceil_mode overhang, beyond the padding.

**Values.**  MaxPool: the maximum over the window's input elements (padding never wins: the
text's "exclude pad"); Indices: the flat index of that element in ``N x C x D1 x ... x Dn``
(row-major spatial order, or column-major with ``storage_order = 1``; the batch and channel
offset ``(n C + c) D1...Dn`` in both).  AveragePool: the sum of the window's input elements
divided by their number (``count_include_pad = 0``) or by the number of input and padding
positions (``count_include_pad = 1``); the overhang beyond the padding counts in neither
reading that every runtime agrees on, so a window reaching it with ``count_include_pad = 1`` is
judged by :func:`check_average_pool_overhang` (either divisor).  LpPool: ``(sum |x|^p)^(1/p)``
over the window's input elements (padding adds zeros), evaluated as the formula's IEEE
arithmetic (an infinity gives inf, a NaN gives NaN, also beside an infinity: ``inf + NaN``).

**Accumulation bounds** (Higham, *Accuracy and Stability of Numerical Algorithms*, 2nd ed.,
§4.2 and Lemma 3.3): a sum of ``n`` terms in any order at unit roundoff ``u'`` is within
``gamma_{n-1}(u') sum|x|`` of the exact sum; a mean formed as ``sum / c``, ``sum * fl(1/c)``
or ``sum fl(x/c)`` within ``gamma_{n+1}(u') sum|x| / c`` (+ ``n s'`` for quotients that
underflow).  The accumulation precision is at least float32 for float16 and bfloat16 and the
type itself for float and double (:data:`conformance.reference.linalg.ACC`, the rule of
MatMul/ReduceMean).  Max and min pooling are exact.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Sequence

import numpy as np

from . import spatial as spatial_ref
from .linalg import ACC, gamma
from .reduce import exact_row_sums

# ============================================================================ geometry


def geometry(spatial: Sequence[int], kernel: Sequence[int], strides=None, pads=None, dilations=None,
             auto_pad: str = "NOTSET", ceil_mode: int = 0, drop: bool = True) -> tuple[list[int], list[int], list[int]]:
    """Output spatial shape and the begin/end pads of a pooling (module docstring).

    Args:
        spatial: input spatial dims ``D1..Dn``.
        kernel: ``kernel_shape`` (n values).
        strides / pads / dilations: the attributes (``None``: 1, 0, 1); ``pads`` is
            ``[b1..bn, e1..en]``.
        auto_pad: ``NOTSET``, ``VALID``, ``SAME_UPPER`` or ``SAME_LOWER``.
        ceil_mode: 0 or 1.
        drop: apply "sliding windows that would start in the right padded region are ignored"
            (the text of MaxPool-22 and AveragePool-22; before 22, and in LpPool's text, the
            plain ceil formula keeps such a window, which holds no input element).

    Returns:
        ``(out, begin, end)``: output spatial dims and the pads actually applied.

    Raises:
        ValueError: an output dimension below 1 (a kernel larger than the padded input),
            negative pads or pads of the wrong length.
    """
    g = spatial_ref.pool_geometry(spatial, kernel, strides, dilations, pads, auto_pad, ceil_mode)
    if ceil_mode and not drop and spatial_ref.auto_pad_name(auto_pad) == "NOTSET":
        ext = [spatial_ref.dilated_extent(k, d) for k, d in zip(g.kernel_shape, g.dilations)]
        g = spatial_ref.Geometry(tuple(-(-(D + b + e - x) // s) + 1 for D, b, e, x, s in
                                       zip(spatial, g.begin, g.end, ext, g.strides)),
                                 g.begin, g.end, g.strides, g.dilations, g.kernel_shape)
    if pads is not None and len(pads) != 2 * len(spatial):
        raise ValueError(f"pads has {len(pads)} values for {len(spatial)} spatial axes")
    if any(o < 1 for o in g.out):
        raise ValueError(f"output spatial shape {list(g.out)} (kernel larger than the padded input)")
    return list(g.out), list(g.begin), list(g.end)


def _attrs_geometry(spatial, attrs, drop: bool = True) -> tuple[list[int], list[int], list[int], list[int], list[int], list[int]]:
    """(out, begin, end, kernel, strides, dilations) from a node's attributes."""
    n = len(spatial)
    k = list(attrs["kernel_shape"])
    s = list(attrs.get("strides") or [1] * n)
    d = list(attrs.get("dilations") or [1] * n)
    out, b, e = geometry(spatial, k, s, attrs.get("pads"), d, attrs.get("auto_pad", "NOTSET") or "NOTSET",
                         int(attrs.get("ceil_mode", 0) or 0), drop)
    return out, b, e, k, s, d


def windows(spatial, attrs, drop: bool = True):
    """The windows of a pooling as index arrays.

    Returns:
        ``(out, pos, kind)``: ``out`` the output spatial dims; ``pos`` an int array of shape
        ``out + [kernel volume, n]`` with each window position's spatial coordinates (may be
        outside the input); ``kind`` an int array of shape ``out + [kernel volume]``: 0 an input
        element, 1 padding, 2 the ceil_mode overhang beyond the padding.
    """
    out, b, e, k, s, d = _attrs_geometry(spatial, attrs, drop)
    n = len(spatial)
    grids = []
    for i in range(n):
        o = np.arange(out[i])[:, None]
        j = np.arange(k[i])[None, :]
        grids.append(o * s[i] - b[i] + j * d[i])  # [O_i, k_i]
    vol = int(np.prod(k))
    pos = np.zeros(tuple(out) + (vol, n), dtype=np.int64)
    for oi in itertools.product(*[range(o) for o in out]):
        coords = [grids[i][oi[i]] for i in range(n)]
        mesh = np.stack([c.ravel() for c in np.meshgrid(*coords, indexing="ij")], axis=-1)
        pos[oi] = mesh
    sp = np.asarray(spatial)
    ends = sp + np.asarray(e)
    inside = np.all((pos >= 0) & (pos < sp), axis=-1)
    padded = np.all((pos >= -np.asarray(b)) & (pos < ends), axis=-1)
    kind = np.where(inside, 0, np.where(padded, 1, 2))
    return out, pos, kind


def _gather(x: np.ndarray, pos: np.ndarray, valid: np.ndarray) -> np.ndarray:
    """``x[N, C, pos...]`` as ``[N, C] + out + [vol]`` (invalid positions clipped; mask them)."""
    sp = x.shape[2:]
    clipped = np.clip(pos, 0, np.asarray(sp) - 1) if len(sp) else pos
    idx = tuple(clipped[..., i] for i in range(len(sp)))
    return x[(slice(None), slice(None)) + idx]


def flat_index(pos: np.ndarray, spatial, storage_order: int) -> np.ndarray:
    """Flat spatial index of coordinates ``pos[..., n]``: row-major, or column-major with
    ``storage_order = 1`` (MaxPool's Indices, before the batch/channel offset)."""
    sp = list(spatial)
    order = range(len(sp)) if storage_order else reversed(range(len(sp)))
    out = np.zeros(pos.shape[:-1], dtype=np.int64)
    mul = 1
    for i in order:
        out = out + pos[..., i] * mul
        mul *= sp[i]
    return out


# ============================================================================ MaxPool
def max_pool(x: np.ndarray, attrs: dict, nan: str = "propagate", drop: bool = True) -> tuple[np.ndarray, np.ndarray]:
    """MaxPool's Y and Indices (module docstring).

    Args:
        x: ``[N, C, D1..Dn]``, float64 (or an object array of Python ints).
        attrs: kernel_shape, strides, pads, dilations, auto_pad, ceil_mode, storage_order.
        nan: ``propagate`` (a NaN in the window gives NaN, the IEEE ``maximum``) or ``ignore``
            (NaN never compares greater: the ``x > y`` scan of onnxruntime; a window of NaN
            only gives the type's lowest value, here ``-inf``).
        drop: the version's ceil_mode rule (:func:`geometry`); a window without an input
            element (before 22) gives ``-inf`` (an integer input: its smallest element), a
            value the text does not define (judged by :func:`check_max_pool_v10`).

    Returns:
        ``(Y, Indices)``: Y like x's dtype, Indices int64; the index of a tie is the first
        maximum in window order, of a NaN maximum the first NaN.
    """
    spatial = x.shape[2:]
    out, pos, kind = windows(spatial, attrs, drop)
    vals = _gather(x, pos, kind == 0)  # [N, C] + out + [vol]
    valid = np.broadcast_to(kind == 0, vals.shape)
    integer = x.dtype == object
    if integer:
        fill = min(int(q) for q in x.ravel()) if x.size else 0
        v = np.where(valid, vals, fill)
        arg = _argmax_obj(v)
    else:
        v = np.where(valid, vals.astype(np.float64), -np.inf)
        isn = np.isnan(v)
        first_max = np.argmax(np.where(isn, -np.inf, v), axis=-1)
        if nan == "propagate":  # the first NaN wins over any number; among numbers the first maximum
            arg = np.where(isn.any(axis=-1), np.argmax(isn, axis=-1), first_max)
        else:
            arg = first_max
    y = np.take_along_axis(v, arg[..., None], axis=-1)[..., 0]
    if not integer and nan == "ignore":
        allnan = np.all(np.isnan(v) | ~valid, axis=-1)
        y = np.where(allnan, -np.inf, y)
    chosen = np.take_along_axis(np.broadcast_to(pos, vals.shape + (len(spatial),)),
                                arg[..., None, None], axis=-2)[..., 0, :]
    so = int(attrs.get("storage_order", 0) or 0)
    flat = flat_index(chosen, spatial, so)
    plane = int(np.prod(spatial))
    nc = np.arange(x.shape[0] * x.shape[1]).reshape(x.shape[0], x.shape[1], *([1] * len(spatial))) * plane
    ind = (flat + nc).astype(np.int64)
    if integer:
        y = np.asarray(y, dtype=object)
    return y, ind


def _argmax_obj(v: np.ndarray) -> np.ndarray:
    """argmax along the last axis of an object array of Python ints (first maximum)."""
    if v.size == 0:
        return np.zeros(v.shape[:-1], dtype=np.int64)
    flat = v.reshape(-1, v.shape[-1])
    out = np.array([max(range(len(r)), key=lambda i, r=r: (r[i], -i)) for r in flat], dtype=np.int64)
    return out.reshape(v.shape[:-1])


# ============================================================================ AveragePool / LpPool
def average_pool(x: np.ndarray, attrs: dict, overhang: str = "padded", drop: bool = True) -> np.ndarray:
    """AveragePool (module docstring).

    Args:
        x: ``[N, C, D1..Dn]`` float64.
        attrs: the pooling attributes and count_include_pad.
        overhang: with ``count_include_pad = 1``, whether the ceil_mode overhang beyond the
            padding counts in the divisor: ``padded`` (no: the input and padding positions
            only, onnxruntime and PyTorch) or ``full`` (yes: the kernel volume).
        drop: the version's ceil_mode rule (:func:`geometry`).

    Returns:
        float64 ``[N, C] + out``.
    """
    spatial = x.shape[2:]
    out, pos, kind = windows(spatial, attrs, drop)
    vals = _gather(x, pos, kind == 0)
    v = np.where(kind == 0, vals, 0.0)
    s = exact_row_sums(v)
    if int(attrs.get("count_include_pad", 0) or 0):
        cnt = (kind <= 1).sum(axis=-1) if overhang == "padded" else np.full(kind.shape[:-1], kind.shape[-1])
    else:
        cnt = (kind == 0).sum(axis=-1)
    with np.errstate(all="ignore"):
        return s / cnt


def lp_pool(x: np.ndarray, attrs: dict, drop: bool = False) -> np.ndarray:
    """LpPool: ``(sum |x|^p)^(1/p)`` over each window's input elements (module docstring);
    ``p`` the attribute (float at version 1, int from 2); LpPool's text has no rule dropping a
    ceil_mode window that starts in the right padding (``drop`` False: such a window is 0)."""
    spatial = x.shape[2:]
    out, pos, kind = windows(spatial, attrs, drop)
    vals = _gather(x, pos, kind == 0)
    return lp_rows(np.where(kind == 0, vals, 0.0), float(attrs.get("p", 2)))


def lp_rows(v: np.ndarray, p: float) -> np.ndarray:
    """``(sum |v|^p)^(1/p)`` along the last axis, in float64 with a power-of-two scaling (no
    spurious overflow or underflow); NaN and infinities follow IEEE (``|inf|^p = inf``)."""
    a = np.abs(v)
    with np.errstate(all="ignore"):
        m = np.max(a, axis=-1, keepdims=True) if a.shape[-1] else np.zeros(a.shape[:-1] + (1,))
        bad = ~np.isfinite(m) | (m == 0)
        e = np.where(bad, 0, np.floor(np.log2(np.where(bad, 1, m))))
        scale = np.exp2(e)
        r = (a / scale) ** p
        s = exact_row_sums(r)
        y = s ** (1.0 / p) * scale[..., 0]
        nan = np.isnan(a).any(axis=-1)
        inf = np.isinf(a).any(axis=-1)
        y = np.where(inf, np.inf, y)
        y = np.where(nan, np.nan, y)  # the formula's IEEE arithmetic: inf + NaN is NaN
    return y


# ============================================================================ global pools
def global_pool(x: np.ndarray, kind: str, p: float = 2.0) -> np.ndarray:
    """GlobalAveragePool / GlobalMaxPool / GlobalLpPool: ``[N, C, 1, ..., 1]`` over every
    spatial element (``kind``: ``avg``, ``max`` (NaN propagates), ``lp``)."""
    n, c = x.shape[:2]
    rows = x.reshape(n, c, int(np.prod(x.shape[2:])))
    keep = (n, c) + (1,) * (x.ndim - 2)
    if kind == "avg":
        with np.errstate(all="ignore"):
            return (exact_row_sums(rows) / rows.shape[-1]).reshape(keep)
    if kind == "max":
        if rows.shape[-1] == 0:
            raise ValueError("empty spatial extent")
        if rows.dtype == object:
            return np.array([[max(r) for r in row] for row in rows], dtype=object).reshape(keep)
        return np.max(rows, axis=-1).reshape(keep)
    return lp_rows(rows, p).reshape(keep)


# ============================================================================ tolerances
def mean_bound(x: np.ndarray, attrs: dict, t: str, overhang: str = "padded", drop: bool = True) -> tuple[float, float]:
    """``(atol, rtol)`` of an AveragePool output of type ``t``: per output element
    ``gamma_{n+1}(u') (1 + u) A / c + n s' + 2 s``, ``rtol = 2.01 u`` (module docstring; ``A`` the
    window's sum of ``|x|``, ``n`` the kernel volume, ``c`` the divisor, ``u'``/``s'`` the
    accumulation precision's unit roundoff and smallest subnormal, ``u``/``s`` the output
    type's); the largest over the finite outputs."""
    u_acc, s_acc = ACC[t]
    from ..ops import values as V  # local: the reference does not import the table at module level

    fi = V.finfo(t)
    u, s = float(fi.eps) / 2, float(fi.smallest_subnormal)
    spatial = x.shape[2:]
    out, pos, kind = windows(spatial, attrs, drop)
    vals = _gather(np.abs(x), pos, kind == 0)
    a = exact_row_sums(np.where(kind == 0, vals, 0.0))
    if int(attrs.get("count_include_pad", 0) or 0):
        cnt = (kind <= 1).sum(axis=-1) if overhang == "padded" else np.full(kind.shape[:-1], kind.shape[-1])
    else:
        cnt = (kind == 0).sum(axis=-1)
    n = kind.shape[-1]
    with np.errstate(all="ignore"):
        b = gamma(n + 1, u_acc) * (1 + u) * a / np.maximum(cnt, 1) + n * s_acc + 2 * s
    b = b[np.isfinite(b)]
    return (float(b.max()) if b.size else 2 * s), 2.01 * u


def sum_mean_bound(a: np.ndarray, n: int, cnt, t: str) -> tuple[float, float]:
    """The same bound from the windows' sums of ``|x|`` (``a``), the term count ``n`` and the
    divisors ``cnt`` (GlobalAveragePool)."""
    from ..ops import values as V

    u_acc, s_acc = ACC[t]
    fi = V.finfo(t)
    u, s = float(fi.eps) / 2, float(fi.smallest_subnormal)
    with np.errstate(all="ignore"):
        b = gamma(n + 1, u_acc) * (1 + u) * np.asarray(a, dtype=np.float64) / np.maximum(cnt, 1) + n * s_acc + 2 * s
    b = b[np.isfinite(b)]
    return (float(b.max()) if b.size else 2 * s), 2.01 * u


#: ulps of the accumulation precision a library ``pow``/``sqrt`` may be off (OpenCL C full
#: profile: pow 16 ulp, rootn 16 ulp, sqrt 3 ulp; a kernel computing ``|x|^p`` by ``p - 1``
#: multiplications carries ``gamma_{p-1}``).
POW_ULPS = 16


def lp_tolerance(y: np.ndarray, n: int, p: float, t: str) -> tuple[float, float]:
    """``(atol, rtol)`` of an LpPool / GlobalLpPool output of type ``t`` (p-norm of ``n``
    terms): each ``|x|^p`` within ``POW_ULPS`` ulps of ``u'``; their sum (all terms
    non-negative) within ``gamma_{n-1}(u')`` relative; the root ``S^(1/p)`` turns a relative
    error ``e`` of ``S`` into ``e / p`` and adds ``POW_ULPS`` ulps plus ``|ln S| u' / p`` for
    ``1/p`` rounded to the accumulation type:

        rtol = (1 + u) ((gamma_{n-1}(u') + POW_ULPS u') / p + POW_ULPS u' + |ln S|max u' / p) + 2.01 u

    ``atol`` adds ``(n s')^(1/p)``: powers that underflow in the accumulation precision (a
    subnormal float input squared in float32 is 0), and ``2 s``."""
    from ..ops import values as V

    u_acc, s_acc = ACC[t]
    fi = V.finfo(t)
    u, s = float(fi.eps) / 2, float(fi.smallest_subnormal)
    yy = np.abs(np.asarray(y, dtype=np.float64))
    yy = yy[np.isfinite(yy) & (yy > 0)]
    lnS = float(np.max(np.abs(p * np.log(yy)))) if yy.size else 0.0
    rel = (1 + u) * ((gamma(max(n - 1, 0), u_acc) + POW_ULPS * u_acc) / p + POW_ULPS * u_acc + lnS * u_acc / p)
    atol = (max(n, 1) * s_acc) ** (1.0 / p) + 2 * s
    return atol, rel + 2.01 * u


# ============================================================================ checks (judged outputs)
def _typed(y: np.ndarray, like: np.ndarray) -> np.ndarray:
    """``y`` (float64 or object) rounded to ``like``'s dtype."""
    if like.dtype.kind in "iu":
        return np.asarray(y, dtype=np.int64).astype(like.dtype)
    return np.asarray(y, dtype=np.float64).astype(like.dtype)


def _max_pool_judge(x: np.ndarray, y: np.ndarray, ind, attrs: dict, window_fn) -> tuple[bool, str]:
    """Shared judgement of a max pooling whose ties and NaN the text leaves open.

    ``window_fn(x) -> (vals, valid, flatpos)``: the windows' values ``[N, C] + out + [vol]``,
    which of them are input elements, and each position's flat index (with the batch/channel
    offset).  Y must be, per window, the maximum of its input elements in one of the two NaN
    readings (a NaN in the window gives NaN, or NaN is ignored: the maximum of the numbers,
    the type's lowest value or ``-inf`` if there is none); Indices (if given) must point at an
    input element of the window that holds that Y (NaN at NaN).  A window without any input
    element (the ceil_mode window starting in the right padding that versions before 22
    keep) has no maximum the text defines: any Y and Indices pass there."""
    vals, valid, flat = window_fn(x)
    shape = vals.shape[:-1]
    if tuple(y.shape) != tuple(shape) or y.dtype != x.dtype:
        return False, f"Y {y.dtype}{list(y.shape)} != expected {x.dtype}{list(shape)}"
    integer = x.dtype.kind in "iu"
    v = vals.astype(np.float64)
    yv = y.astype(np.float64)
    with np.errstate(invalid="ignore"):
        vm = np.where(valid, v, -np.inf)
        isn = np.isnan(vm)
        num_max = np.max(np.where(isn, -np.inf, vm), axis=-1)
        has_nan = isn.any(axis=-1)
        allnan = ~np.any(valid & ~isn, axis=-1)
        empty = ~np.any(valid, axis=-1)
    if integer:
        ok = (yv == num_max) | empty
    else:
        lowest = float(np.finfo(x.dtype).min) if x.dtype.kind == "f" else -np.inf
        ok = (yv == num_max) | (has_nan & np.isnan(yv))
        ok |= allnan & ((yv == -np.inf) | (yv == lowest))
        ok |= empty
        # +0 and -0 are equal maxima: the sign of a zero maximum is not judged
    if not ok.all():
        i = tuple(np.argwhere(~ok)[0])
        return False, f"Y{list(i)} = {yv[i]!r}, window maximum {num_max[i]!r} (NaN in window: {bool(has_nan[i])})"
    if ind is None:
        return True, "Y is the window maximum (ties and NaN judged by either reading)"
    ind = np.asarray(ind)
    if tuple(ind.shape) != tuple(shape) or ind.dtype != np.int64:
        return False, f"Indices {ind.dtype}{list(ind.shape)} != expected int64{list(shape)}"
    hit = (flat == ind[..., None]) & valid
    with np.errstate(invalid="ignore"):
        good = np.any(hit & ((v == yv[..., None]) | (np.isnan(v) & np.isnan(yv[..., None]))), axis=-1)
    # a window of NaN only judged by the lowest-value reading: any NaN of the window
    good |= allnan & np.any(hit, axis=-1)
    good |= empty
    if not good.all():
        i = tuple(np.argwhere(~good)[0])
        return False, (f"Indices{list(i)} = {int(ind[i])} does not point at a window element holding Y = {yv[i]!r} "
                       f"(window flat positions {flat[i][valid[i]].tolist()})")
    return True, "Y is the window maximum and Indices point at it (ties and NaN judged by either reading)"


def check_max_pool(inputs: dict, outputs: dict, attrs: dict, drop: bool = True) -> tuple[bool, str]:
    """Judge a MaxPool-22 result whose window maxima tie or hold NaN (:func:`_max_pool_judge`).

    Args:
        inputs: ``{"X": array}`` as fed.
        outputs: ``{"Y": array, "Indices": array (optional)}``.
        attrs: the node's attributes (schema defaults not filled in).
        drop: the ceil_mode rule of the version (:func:`geometry`).
    Returns:
        ``(passed, message)``.
    """
    x = np.asarray(inputs["X"])
    spatial = x.shape[2:]

    def wf(x):
        out, pos, kind = windows(spatial, attrs, drop)
        vals = _gather(x, pos, kind == 0)
        valid = np.broadcast_to(kind == 0, vals.shape)
        plane = int(np.prod(spatial))
        nc = np.arange(x.shape[0] * x.shape[1]).reshape(x.shape[0], x.shape[1], *([1] * (len(spatial) + 1))) * plane
        flat = flat_index(pos, spatial, int(attrs.get("storage_order", 0) or 0)) + nc
        return vals, valid, flat

    return _max_pool_judge(x, np.asarray(outputs["Y"]), outputs.get("Indices"), attrs, wf)


def check_max_pool_v10(inputs: dict, outputs: dict, attrs: dict) -> tuple[bool, str]:
    """:func:`check_max_pool` for MaxPool-1 to -12 (a ceil_mode window starting in the right
    padding is kept: the rule arrives with the text of 22)."""
    return check_max_pool(inputs, outputs, attrs, drop=False)


def check_global_max_pool(inputs: dict, outputs: dict, attrs: dict) -> tuple[bool, str]:
    """Judge a GlobalMaxPool result whose inputs hold NaN (either reading, :func:`_max_pool_judge`)."""
    x = np.asarray(inputs["X"])

    def wf(x):
        n, c = x.shape[:2]
        vals = x.reshape((n, c) + (1,) * (x.ndim - 2) + (int(np.prod(x.shape[2:])),))
        flat = np.broadcast_to(np.arange(vals.shape[-1]), vals.shape)
        return vals, np.ones(vals.shape, dtype=bool), flat

    return _max_pool_judge(x, np.asarray(outputs["Y"]), None, attrs, wf)


def check_average_pool_overhang(inputs: dict, outputs: dict, attrs: dict, drop: bool = True) -> tuple[bool, str]:
    """Judge an AveragePool with ``count_include_pad = 1`` whose ceil_mode windows reach beyond
    the padding: the text says "divided by the number of elements" without saying whether the
    positions beyond the padding are elements; either divisor (input and padding positions,
    or the whole kernel) passes, within :func:`mean_bound` of that reading.  For the 16-bit
    types the accumulation precision is float32.  Before 22 (``drop`` False) the ceil_mode
    window that starts in the right padding is kept; with ``count_include_pad = 0`` it has no
    element to divide by and any value passes there."""
    x = np.asarray(inputs["X"])
    y = np.asarray(outputs["Y"])
    t = {np.dtype(np.float16): "float16", np.dtype(np.float32): "float", np.dtype(np.float64): "double"}.get(
        x.dtype, "bfloat16")
    x64 = x.astype(np.float64)
    msgs = []
    for reading in ("padded", "full"):
        e = average_pool(x64, attrs, reading, drop)
        _, _, kind = windows(x.shape[2:], attrs, drop)
        cip = int(attrs.get("count_include_pad", 0) or 0)
        undefined = ~np.any(kind == 0 if not cip else kind <= 1, axis=-1)
        if tuple(y.shape) != e.shape or y.dtype != x.dtype:
            return False, f"Y {y.dtype}{list(y.shape)} != expected {x.dtype}{list(e.shape)}"
        atol, rtol = mean_bound(x64, attrs, t, reading, drop)
        er = e.astype(x.dtype).astype(np.float64)
        yv = y.astype(np.float64)
        with np.errstate(invalid="ignore"):
            ok = (np.abs(yv - er) <= atol + rtol * np.abs(er)) | (np.isnan(yv) & np.isnan(er)) | (yv == er)
            ok |= np.broadcast_to(undefined, ok.shape)
        if ok.all():
            return True, f"AveragePool overhang divisor: the {reading} reading"
        i = tuple(np.argwhere(~ok)[0])
        msgs.append(f"{reading}: Y{list(i)} = {yv[i]!r}, expected {er[i]!r}")
    return False, "; ".join(msgs)


def check_average_pool_overhang_v10(inputs: dict, outputs: dict, attrs: dict) -> tuple[bool, str]:
    """:func:`check_average_pool_overhang` for AveragePool-10 to -19 (no ceil_mode drop rule)."""
    return check_average_pool_overhang(inputs, outputs, attrs, drop=False)


# ============================================================================ MaxUnpool
def unpool_default_shape(x_shape, kernel, strides=None, pads=None) -> list[int]:
    """MaxUnpool's inferred output shape ``[N, C, (X_i - 1) s_i + k_i - b_i - e_i]`` (the size
    of a MaxPool input that pools to X)."""
    n = len(x_shape) - 2
    s = list(strides or [1] * n)
    p = list(pads or [0] * (2 * n))
    return list(x_shape[:2]) + [(x_shape[2 + i] - 1) * s[i] + kernel[i] - p[i] - p[n + i] for i in range(n)]


def max_unpool(x: np.ndarray, indices, attrs: dict, output_shape=None) -> np.ndarray:
    """MaxUnpool: zeros of ``output_shape`` (else :func:`unpool_default_shape`; "if
    output_shape is specified, pads values are ignored") with ``X`` scattered to the flat
    row-major positions ``I`` ("The indices are linear ... assuming row-major storage").

    Raises:
        ValueError: an index outside the output, or a repeated index (the text leaves the value
            of a position two elements target open: the entries never generate one).
    """
    shape = ([int(v) for v in np.asarray(output_shape).ravel()] if output_shape is not None else
             unpool_default_shape(x.shape, list(attrs["kernel_shape"]), attrs.get("strides"), attrs.get("pads")))
    size = int(np.prod(shape))
    idx = [int(v) for v in np.asarray(indices).ravel()]
    if any(not 0 <= i < size for i in idx) or len(set(idx)) != len(idx):
        raise ValueError("MaxUnpool indices outside the output or repeated")
    out = np.zeros(size, dtype=x.dtype if x.dtype != object else object)
    out[idx] = np.asarray(x).ravel()
    return out.reshape(shape)


def check_lp_pool_either_geometry(inputs: dict, outputs: dict, attrs: dict) -> tuple[bool, str]:
    """Judge an LpPool-22 whose ceil_mode window starts in the right padding: its text keeps
    the window (0, an empty sum), onnx's shape inference drops it; either output passes, within
    :func:`lp_tolerance` of that geometry's values."""
    x = np.asarray(inputs["X"])
    y = np.asarray(outputs["Y"])
    t = _t_of(x.dtype)
    x64 = x.astype(np.float64)
    p = float(attrs.get("p", 2))
    n = int(np.prod(attrs["kernel_shape"]))
    msgs = []
    for drop in (False, True):
        e = lp_pool(x64, attrs, drop)
        if tuple(y.shape) != e.shape or y.dtype != x.dtype:
            msgs.append(f"{'dropped' if drop else 'kept'}: Y {y.dtype}{list(y.shape)} != {x.dtype}{list(e.shape)}")
            continue
        atol, rtol = lp_tolerance(e, n, p, t)
        er = e.astype(x.dtype).astype(np.float64)
        yv = y.astype(np.float64)
        with np.errstate(invalid="ignore"):
            ok = (np.abs(yv - er) <= atol + rtol * np.abs(er)) | (np.isnan(yv) & np.isnan(er)) | (yv == er)
        if ok.all():
            return True, f"LpPool-22 ceil_mode window starting in the right padding: {'dropped' if drop else 'kept'}"
        i = tuple(np.argwhere(~ok)[0])
        msgs.append(f"{'dropped' if drop else 'kept'}: Y{list(i)} = {yv[i]!r}, expected {er[i]!r}")
    return False, "; ".join(msgs)


# ============================================================================ RoiAlign
def roi_align_samples(rois_row, height: int, width: int, out_h: int, out_w: int, sampling_ratio: int,
                      spatial_scale: float, half_pixel: bool):
    """The bilinear samples of one RoI, per output bin (Mask R-CNN's RoIAlign as onnx's and
    onnxruntime's kernels define the details the text leaves out).

    The RoI ``[x1, y1, x2, y2]`` is scaled by ``spatial_scale`` and shifted by -0.5 with
    ``half_pixel`` (the text: "pixel shift the input coordinates by -0.5"); without it (version
    10, ``output_half_pixel``) its width and height are at least 1.  Each of the
    ``out_h x out_w`` bins is sampled on a ``gh x gw`` grid (``sampling_ratio``, or
    ``ceil(roi_height / out_h)`` and likewise for the width when it is 0) at the grid cells'
    centres.  A sample beyond ``[-1, H] x [-1, W]`` contributes 0; otherwise it is clamped to
    ``[0, H - 1] x [0, W - 1]`` and interpolated from its four neighbours.

    Returns:
        ``(samples, count, coords)``: ``samples[ph][pw]`` a list of
        ``[(weight, y, x) x 4]`` per sample (an empty list for a sample beyond the image);
        ``count = max(gh gw, 1)``, the divisor of ``avg``; ``coords`` every sample coordinate
        (for the validity margins of the generator).
    """
    off = 0.5 if half_pixel else 0.0
    x1, y1, x2, y2 = (float(v) * spatial_scale - off for v in rois_row)
    rw, rh = x2 - x1, y2 - y1
    if not half_pixel:
        rw, rh = max(rw, 1.0), max(rh, 1.0)
    bh, bw = rh / out_h, rw / out_w
    gh = int(sampling_ratio) if sampling_ratio > 0 else int(math.ceil(rh / out_h))
    gw = int(sampling_ratio) if sampling_ratio > 0 else int(math.ceil(rw / out_w))
    count = max(gh * gw, 1)
    samples, coords = [], []
    for ph in range(out_h):
        row = []
        for pw in range(out_w):
            cell = []
            for iy in range(max(gh, 0)):
                y = y1 + ph * bh + (iy + 0.5) * bh / gh
                for ix in range(max(gw, 0)):
                    x = x1 + pw * bw + (ix + 0.5) * bw / gw
                    coords.append((y, x))
                    if y < -1.0 or y > height or x < -1.0 or x > width:
                        cell.append([])
                        continue
                    yy, xx = max(y, 0.0), max(x, 0.0)
                    yl, xl = int(yy), int(xx)
                    if yl >= height - 1:
                        yl = yh = height - 1
                        yy = float(yl)
                    else:
                        yh = yl + 1
                    if xl >= width - 1:
                        xl = xh = width - 1
                        xx = float(xl)
                    else:
                        xh = xl + 1
                    ly, lx = yy - yl, xx - xl
                    hy, hx = 1.0 - ly, 1.0 - lx
                    cell.append([(hy * hx, yl, xl), (hy * lx, yl, xh), (ly * hx, yh, xl), (ly * lx, yh, xh)])
            row.append(cell)
        samples.append(row)
    return samples, count, coords


def roi_align(x: np.ndarray, rois: np.ndarray, batch_indices, attrs: dict, half_pixel: bool,
              max_reading: str = "text") -> np.ndarray:
    """RoiAlign ``[num_rois, C, output_height, output_width]`` (:func:`roi_align_samples`).

    ``mode`` ``avg``: the mean of the bin's interpolated samples (``count`` of them).  ``max``:
    the text's "max" of the interpolated sample values (``max_reading="text"``), or the reading
    of onnx's reference and onnxruntime (``"corners"``): per sample the largest of its four
    *weighted* corner terms ``w_i x_i``, then the maximum over the samples (onnx#4764).  A
    sample beyond the image is 0 in every reading; a bin without samples is 0.
    """
    n_rois = rois.shape[0]
    c = x.shape[1]
    h, w = x.shape[2], x.shape[3]
    oh, ow = int(attrs.get("output_height", 1)), int(attrs.get("output_width", 1))
    mode = attrs.get("mode", "avg")
    out = np.zeros((n_rois, c, oh, ow))
    for r in range(n_rois):
        b = int(batch_indices[r])
        samples, count, _ = roi_align_samples(rois[r], h, w, oh, ow, int(attrs.get("sampling_ratio", 0)),
                                              float(attrs.get("spatial_scale", 1.0)), half_pixel)
        img = x[b]
        for ph in range(oh):
            for pw in range(ow):
                vals = []
                for s in samples[ph][pw]:
                    if not s:
                        vals.append(np.zeros(c))
                    elif mode == "max" and max_reading == "corners":
                        vals.append(np.max([wt * img[:, yy, xx] for wt, yy, xx in s], axis=0))
                    else:
                        vals.append(np.sum([wt * img[:, yy, xx] for wt, yy, xx in s], axis=0))
                if not vals:
                    continue
                v = np.stack(vals)
                out[r, :, ph, pw] = np.max(v, axis=0) if mode == "max" else np.sum(v, axis=0) / count
    return out


def roi_align_bound(x: np.ndarray, rois: np.ndarray, batch_indices, attrs: dict, half_pixel: bool, t: str) -> float:
    """Absolute error bound of a RoiAlign output of type ``t`` computed in the accumulation
    precision ``u'`` (float32 for the 16-bit types and float, double for double):

        M (2 (dx + dy) + gamma_{count + 6}(u')) + 2 s,   d = 8 u' (|c|max + 1)

    ``M`` the largest ``|x|`` of the image, ``|c|max`` the largest scaled RoI coordinate: each
    sample coordinate is a sum of four rounded terms (``d``), which moves an interpolated value
    by at most ``2 M d`` per axis (the largest difference of neighbours); the four weights,
    products and sums and the ``count`` samples' sum add ``gamma_{count+6} M`` (Higham §3.1).
    The generator keeps every sample ``0.02`` away from the discontinuities (the ``-1`` and
    ``H``/``W`` limits, ``ceil`` of the adaptive grid), so a coordinate error never changes which
    corners are used.  Returns the largest bound over the RoIs (``rtol`` is the output
    rounding, added by the caller)."""
    from ..ops import values as V

    u_acc, s_acc = ACC[t]
    s = float(V.finfo(t).smallest_subnormal)
    scale = float(attrs.get("spatial_scale", 1.0))
    oh, ow = int(attrs.get("output_height", 1)), int(attrs.get("output_width", 1))
    worst = 2 * s
    for r in range(rois.shape[0]):
        m = float(np.max(np.abs(x[int(batch_indices[r])]))) if x.size else 0.0
        _, count, _ = roi_align_samples(rois[r], x.shape[2], x.shape[3], oh, ow, int(attrs.get("sampling_ratio", 0)),
                                        scale, half_pixel)
        cmax = float(np.max(np.abs(np.asarray(rois[r], dtype=np.float64)))) * scale + 1.0
        d = 8 * u_acc * (cmax + 1)
        worst = max(worst, m * (4 * d + gamma(count + 6, u_acc)) + count * s_acc + 2 * s)
    return worst


def _t_of(dtype) -> str:
    return {np.dtype(np.float16): "float16", np.dtype(np.float32): "float", np.dtype(np.float64): "double"}.get(
        np.dtype(dtype), "bfloat16")


def check_roi_align_max(inputs: dict, outputs: dict, attrs: dict, default_half_pixel: bool = True) -> tuple[bool, str]:
    """Judge a RoiAlign ``mode = max`` result: the text's reading (max of the interpolated
    samples) or onnx's and onnxruntime's (max of the weighted corners, onnx#4764) passes,
    within :func:`roi_align_bound` plus the output rounding of that reading."""
    x, rois, bi = np.asarray(inputs["X"]), np.asarray(inputs["rois"]), np.asarray(inputs["batch_indices"])
    y = np.asarray(outputs["Y"])
    hp = attrs.get("coordinate_transformation_mode", "half_pixel" if default_half_pixel else "output_half_pixel")
    hp = (hp.decode() if isinstance(hp, bytes) else hp) == "half_pixel"
    t = _t_of(x.dtype)
    x64, r64 = x.astype(np.float64), rois.astype(np.float64)
    from ..ops import values as V

    u = float(V.finfo(t).eps) / 2
    atol = roi_align_bound(x64, r64, bi, attrs, hp, t)
    msgs = []
    for reading in ("text", "corners"):
        e = roi_align(x64, r64, bi, attrs, hp, reading)
        if tuple(y.shape) != e.shape or y.dtype != x.dtype:
            return False, f"Y {y.dtype}{list(y.shape)} != expected {x.dtype}{list(e.shape)}"
        er = e.astype(x.dtype).astype(np.float64)
        yv = y.astype(np.float64)
        ok = np.abs(yv - er) <= atol + 2.01 * u * np.abs(er)
        if ok.all():
            return True, f"RoiAlign max: the {reading} reading"
        i = tuple(np.argwhere(~ok)[0])
        msgs.append(f"{reading}: Y{list(i)} = {yv[i]!r}, expected {er[i]!r} (atol {atol:.3g})")
    return False, "; ".join(msgs)


def check_roi_align_max_v10(inputs: dict, outputs: dict, attrs: dict) -> tuple[bool, str]:
    """:func:`check_roi_align_max` for RoiAlign-10 (no pixel shift: ``output_half_pixel``)."""
    return check_roi_align_max(inputs, outputs, attrs, default_half_pixel=False)


# ============================================================================ MaxRoiPool
def _round_half_away(v: float) -> int:
    return int(math.floor(abs(v) + 0.5)) * (1 if v >= 0 else -1)


def max_roi_pool_bins(roi_row, height: int, width: int, pooled, spatial_scale: float, exact: bool = True):
    """The bins of one MaxRoiPool RoI ``[batch_id, x1, y1, x2, y2]`` (Fast R-CNN's RoIPool, as
    Caffe and onnxruntime define what the text leaves out): the corners scaled and rounded
    half away from zero, a RoI of at least 1x1 pixels (``end - start + 1``), bin ``p`` covering
    ``[floor(p * size / pooled), ceil((p + 1) * size / pooled))`` from the RoI's start, clipped to
    the image.  ``exact``: the bin limits in rational arithmetic (the text's real numbers);
    else in float32 as onnxruntime computes them (the generator requires both to agree).

    Returns:
        ``(batch, [[(h0, h1, w0, w1)] per pw] per ph)``, empty bins with ``h1 <= h0`` or
        ``w1 <= w0``.
    """
    from fractions import Fraction

    b = int(roi_row[0])
    sw, sh, ew, eh = (_round_half_away(float(v) * spatial_scale) for v in roi_row[1:5])
    rh, rw = max(eh - sh + 1, 1), max(ew - sw + 1, 1)
    ph_n, pw_n = int(pooled[0]), int(pooled[1])

    def lim(p, size, n, up):
        if exact:
            q = Fraction(p * size, n)
            return math.ceil(q) if up else math.floor(q)
        f = np.float32(np.float32(p) * (np.float32(size) / np.float32(n)))
        return int(math.ceil(f) if up else math.floor(f))

    bins = []
    for ph in range(ph_n):
        h0 = min(max(lim(ph, rh, ph_n, False) + sh, 0), height)
        h1 = min(max(lim(ph + 1, rh, ph_n, True) + sh, 0), height)
        row = []
        for pw in range(pw_n):
            w0 = min(max(lim(pw, rw, pw_n, False) + sw, 0), width)
            w1 = min(max(lim(pw + 1, rw, pw_n, True) + sw, 0), width)
            row.append((h0, h1, w0, w1))
        bins.append(row)
    return b, bins


def max_roi_pool(x: np.ndarray, rois: np.ndarray, attrs: dict) -> np.ndarray:
    """MaxRoiPool ``[num_rois, C, pooled_h, pooled_w]``: the maximum over each bin
    (:func:`max_roi_pool_bins`), 0 for an empty bin."""
    pooled = list(attrs["pooled_shape"])
    out = np.zeros((rois.shape[0], x.shape[1], pooled[0], pooled[1]))
    for r in range(rois.shape[0]):
        b, bins = max_roi_pool_bins(rois[r], x.shape[2], x.shape[3], pooled, float(attrs.get("spatial_scale", 1.0)))
        for ph, row in enumerate(bins):
            for pw, (h0, h1, w0, w1) in enumerate(row):
                if h1 > h0 and w1 > w0:
                    out[r, :, ph, pw] = np.max(x[b, :, h0:h1, w0:w1].reshape(x.shape[1], -1), axis=1)
    return out
