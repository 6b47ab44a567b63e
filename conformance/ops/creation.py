"""The layout and creation family as entries of the operator table (family ``shaped``).

Every operator here moves or creates values without arithmetic on them, so every output is
compared exactly (integers, bool and strings bit for bit; floats exactly with the sign of
zero checked, NaN as a class): a kernel must not round-trip values through arithmetic.

* **DepthToSpace** (1, 11, 13, 28) and **SpaceToDepth** (1, 13, 28): rank-4 inputs, the
  ``blocksize`` tied to the channel (or spatial) dimensions by the shape table: blocksize
  1 (the identity), 2, 3 and 4, with more than one output channel group (``C / b^2 > 1``,
  where DCR and CRD differ: with one group they coincide), non-square spatial dims, a
  batch of one and more, zero-size batches and spatial dims; ``mode`` DCR (absent and
  explicit) and CRD from 11 (DepthToSpace) and 28 (SpaceToDepth).  The oracle is the text's
  numpy formula (DepthToSpace-11); SpaceToDepth is its inverse ("the reverse
  transformation of SpaceToDepth"), with the same ``mode`` reading at 28.  Error cases:
  rank other than 4, channels not divisible by ``blocksize^2``, spatial dims not divisible
  by ``blocksize``, ``blocksize`` 0 or missing, an unknown ``mode``.
* **Shape** (1, 13, 15, 19, 21, 23, 24, 25) and **Size** (1, 13, 19, 21, 23, 24, 25): ranks
  0 to 6, size-1 dims, an empty first/middle/last axis, every type the schema lists (the
  4-, 2-bit and float8 types included); Shape's ``start``/``end`` (15) as the text's
  examples, negative axes, clamping beyond the rank on both sides (to the int64 extremes),
  ``start > end`` and empty slices.  The data values are irrelevant to the result: the
  floating ``wide`` class is dropped (``normal`` and ``special`` stay: a kernel must not
  read the values).
* **Trilu** (14): square, wide, tall, one-row and one-column matrices, one and two batch
  dims, zero-size rows and batches; ``upper`` absent/1/0; ``k`` absent or a structural
  scalar drawn per case among 0, +-1, +-2, the last diagonals touching the matrix, the first
  beyond them, far beyond and the int64 extremes (the text defines every ``k``).  Removed
  elements are the zero of the type: ``+0.0`` (the sign of zero is checked: a kernel that
  multiplies by a 0/1 mask turns ``-x`` into ``-0.0`` and NaN/inf into NaN, which no reading
  of "set to zero" allows), ``0``, ``False``, ``0j`` and ``""`` for strings (the text says
  "zero"; the empty string is a string tensor's zero value).  Error cases: rank 0 and 1.
"""

from __future__ import annotations

import numpy as np

from . import values as V
from .engine import register_entries
from .entry import Attrs, Entry, Err, Shape


# ============================================================================ DepthToSpace / SpaceToDepth
def depth_to_space(x: np.ndarray, blocksize: int, mode: str = "DCR") -> np.ndarray:
    """DepthToSpace of a ``[b, c, h, w]`` array (any dtype, object arrays included) by the
    text's formula (DepthToSpace-11 onward; version 1 is DCR).

    Returns ``[b, c / blocksize^2, h * blocksize, w * blocksize]``.

    Raises:
        ValueError: ``x`` is not rank 4, ``c`` is not a multiple of ``blocksize^2`` or
            ``mode`` is neither ``DCR`` nor ``CRD``.
    """
    if x.ndim != 4:
        raise ValueError(f"DepthToSpace needs a rank-4 input, got rank {x.ndim}")
    b, c, h, w = x.shape
    bs = int(blocksize)
    if bs <= 0 or c % (bs * bs):
        raise ValueError(f"channels {c} not divisible by blocksize^2 = {bs * bs}")
    if mode == "DCR":
        tmp = np.reshape(x, [b, bs, bs, c // (bs * bs), h, w])
        tmp = np.transpose(tmp, [0, 3, 4, 1, 5, 2])
    elif mode == "CRD":
        tmp = np.reshape(x, [b, c // (bs * bs), bs, bs, h, w])
        tmp = np.transpose(tmp, [0, 1, 4, 2, 5, 3])
    else:
        raise ValueError(f"mode {mode!r} is neither DCR nor CRD")
    return np.reshape(tmp, [b, c // (bs * bs), h * bs, w * bs])


def space_to_depth(x: np.ndarray, blocksize: int, mode: str = "DCR") -> np.ndarray:
    """SpaceToDepth of a ``[b, c, h, w]`` array: the inverse of :func:`depth_to_space` with
    the same ``mode`` ("the reverse transformation", DepthToSpace's text; SpaceToDepth-28's
    ``mode``: blocks ordered depth-column-row (DCR) or column-row-depth (CRD)).

    Returns ``[b, c * blocksize^2, h / blocksize, w / blocksize]``.

    Raises:
        ValueError: ``x`` is not rank 4, ``h`` or ``w`` is not a multiple of ``blocksize``, or
            ``mode`` is neither ``DCR`` nor ``CRD``.
    """
    if x.ndim != 4:
        raise ValueError(f"SpaceToDepth needs a rank-4 input, got rank {x.ndim}")
    b, c, h, w = x.shape
    bs = int(blocksize)
    if bs <= 0 or h % bs or w % bs:
        raise ValueError(f"spatial dims {h}x{w} not divisible by blocksize {bs}")
    tmp = np.reshape(x, [b, c, h // bs, bs, w // bs, bs])
    if mode == "DCR":  # inverse of DepthToSpace DCR: [b, bs_h, bs_w, c, h', w']
        tmp = np.transpose(tmp, [0, 3, 5, 1, 2, 4])
    elif mode == "CRD":  # inverse of DepthToSpace CRD: [b, c, bs_h, bs_w, h', w']
        tmp = np.transpose(tmp, [0, 1, 3, 5, 2, 4])
    else:
        raise ValueError(f"mode {mode!r} is neither DCR nor CRD")
    return np.reshape(tmp, [b, c * bs * bs, h // bs, w // bs])


def _d2s_oracle(ctx, x, blocksize, mode="DCR"):
    return depth_to_space(x, blocksize, mode if ctx.version >= 11 else "DCR")


def _s2d_oracle(ctx, x, blocksize, mode="DCR"):
    return space_to_depth(x, blocksize, mode if ctx.version >= 28 else "DCR")


#: Small spatial dims (H, W drawn in [1, 3]) and batches of 1 or 2.
_SMALL = {"N": (1, 2), "H": (1, 3), "W": (1, 3)}


def _d2s_shapes() -> tuple[Shape, ...]:
    """(name, template, blocksize, extra dims): channels a multiple of blocksize^2."""
    rows = [
        ("bs1", "NCHW", 1, {"C": (1, 4)}),
        ("bs2/C4", "N4HW", 2, {}),  # one channel group: DCR and CRD coincide
        ("bs2/C8", "N8HW", 2, {}),
        ("bs2/C12/batch", "NCHW", 2, {"N": (2, 3), "C": (12, 12)}),
        ("bs3/C18", "NCHW", 3, {"C": (18, 18), "H": (1, 2), "W": (1, 2)}),
        ("bs2/C8/non-square", "N8HW", 2, {"H": (1, 1), "W": (3, 4)}),
        ("bs4/C32", "NCHW", 4, {"C": (32, 32), "N": (1, 1), "H": (1, 2), "W": (1, 2)}),
        ("zero-size/batch", "08HW", 2, {}),
        ("zero-size/spatial", "N80W", 2, {}),
    ]
    return tuple(Shape(name, {"input": t}, {"blocksize": bs}, dims={**_SMALL, **d}) for name, t, bs, d in rows)


def _s2d_shapes() -> tuple[Shape, ...]:
    """Spatial dims a multiple of blocksize (letters P, Q are the quotients' stand-ins)."""
    rows = [
        ("bs1", "NCHW", 1, {"C": (1, 3)}),
        ("bs2/C1", "N1HW", 2, {"H": (2, 2), "W": (4, 4)}),
        ("bs2/C2", "N2HW", 2, {"H": (4, 4), "W": (2, 2)}),
        ("bs2/C3/batch", "N3HW", 2, {"N": (2, 3), "H": (2, 2), "W": (6, 6)}),
        ("bs3/C2", "N2HW", 3, {"H": (3, 3), "W": (6, 6)}),
        ("bs2/C2/square4", "N244", 2, {}),
        ("bs4/C2", "N2HW", 4, {"N": (1, 1), "H": (4, 4), "W": (8, 8)}),
        ("zero-size/batch", "0244", 2, {}),
        ("zero-size/spatial", "N204", 2, {}),
    ]
    return tuple(Shape(name, {"input": t}, {"blocksize": bs}, dims={"N": (1, 2), **d}) for name, t, bs, d in rows)


def _blocks_attrs(mode_since: int) -> tuple[Attrs, ...]:
    """blocksize is required: every state gives one (the shape pattern's overrides it);
    ``mode`` absent, explicit DCR and CRD from ``mode_since``."""
    return (Attrs({"blocksize": 2}, tag="mode-absent"),
            Attrs({"blocksize": 2, "mode": "DCR"}, since=mode_since, tag="explicit-default"),
            Attrs({"blocksize": 2, "mode": "CRD"}, since=mode_since, tag="CRD"))


def _d2s_errors() -> tuple[Err, ...]:
    return (
        Err("the input must be 4-D ([N, C, H, W]): rank 3", "rank3", {"blocksize": 2}, ((4, 2, 2),)),
        Err("the input must be 4-D ([N, C, H, W]): rank 5", "rank5", {"blocksize": 2}, ((1, 4, 2, 2, 1),)),
        Err("C = 6 is not divisible by blocksize^2 = 4", "channels", {"blocksize": 2}, ((1, 6, 2, 2),)),
        Err("blocksize 0: blocks of [0, 0] cannot hold the depth", "blocksize0", {"blocksize": 0}, ((1, 4, 2, 2),)),
        Err("the required attribute blocksize is missing", "blocksize-missing", {"blocksize": None}, ((1, 4, 2, 2),)),
        Err("mode must be DCR or CRD", "mode", {"blocksize": 2, "mode": "RCD"}, ((1, 8, 2, 2),), since=11),
    )


def _s2d_errors() -> tuple[Err, ...]:
    return (
        Err("the input must be 4-D ([N, C, H, W]): rank 3", "rank3", {"blocksize": 2}, ((1, 4, 4),)),
        Err("H = 3 is not divisible by blocksize 2", "height", {"blocksize": 2}, ((1, 1, 3, 4),)),
        Err("W = 5 is not divisible by blocksize 2", "width", {"blocksize": 2}, ((1, 1, 4, 5),)),
        Err("blocksize 0: blocks of [0, 0] cannot be moved", "blocksize0", {"blocksize": 0}, ((1, 1, 4, 4),)),
        Err("the required attribute blocksize is missing", "blocksize-missing", {"blocksize": None}, ((1, 1, 4, 4),)),
        Err("mode must be DCR or CRD", "mode", {"blocksize": 2, "mode": "RCD"}, ((1, 2, 4, 4),), since=28),
    )


DEPTH_TO_SPACE = Entry(
    "DepthToSpace", _d2s_oracle, family="shaped", shapes=_d2s_shapes(), attrs=_blocks_attrs(11),
    signed_zero=True, errors=_d2s_errors(), per_type=3,
    notes={11: "mode attribute (DCR default, CRD); version 1 is DCR", 13: "bfloat16"})

SPACE_TO_DEPTH = Entry(
    "SpaceToDepth", _s2d_oracle, family="shaped", shapes=_s2d_shapes(), attrs=_blocks_attrs(28),
    signed_zero=True, errors=_s2d_errors(), per_type=3,
    notes={13: "bfloat16", 28: "mode attribute (DCR default, CRD): the inverse of DepthToSpace's mode"})


# ============================================================================ Shape / Size
def shape_slice(shape: tuple[int, ...], start: int = 0, end: int | None = None) -> list[int]:
    """Shape-15's output: the dims of ``shape`` from axis ``start`` to ``end`` (exclusive),
    negative axes counted from the back ("after adding r"), both clamped to ``[0, r]``; an
    omitted ``end`` is ``r``; ``start > end`` gives an empty shape.  Exact Python ints (no
    overflow: ``start = -2**63`` is clamped, not wrapped)."""
    r = len(shape)

    def axis(a: int) -> int:
        a = int(a)
        return min(max(a + r if a < 0 else a, 0), r)

    lo, hi = axis(start), (r if end is None else axis(end))
    return [int(d) for d in shape[lo:hi]] if lo < hi else []


def _shape_oracle(ctx, data, start=0, end=None):
    dims = shape_slice(np.shape(data), start, end) if ctx.version >= 15 else [int(d) for d in np.shape(data)]
    out = np.empty(len(dims), dtype=object)
    out[:] = dims
    return out


def _size_oracle(ctx, data):
    return np.array(int(np.prod(np.shape(data), dtype=object)), dtype=object)


#: Shape and Size: ranks 0 to 6, size-1 dims, zero-size tensors (an empty first / middle / last axis).
_SHAPE_PATTERNS = (
    Shape("rank0", {"data": ""}),
    Shape("rank1", {"data": "A"}, dims={"A": (1, 7)}),
    Shape("rank2", {"data": "AB"}, dims={"A": (1, 5), "B": (1, 5)}),
    Shape("rank3", {"data": "ABC"}),
    Shape("rank4/size1", {"data": "A1B1"}),
    Shape("rank5", {"data": "ABCDE"}, dims={c: (1, 3) for c in "ABCDE"}),
    Shape("rank6", {"data": "ABCDEF"}, dims={c: (1, 2) for c in "ABCDEF"}),
    Shape("zero-size/first", {"data": "0A"}),
    Shape("zero-size/middle", {"data": "A0B"}),
    Shape("zero-size/last", {"data": "AB0"}),
)

#: Shape-15's start/end states: the text's examples, negative axes, clamping beyond the rank on
#: either side (to the int64 extremes), start > end and end = start (empty slices).
_SHAPE_ATTRS = tuple(Attrs(v, tag=t) for t, v in (
    ("start=-1", {"start": -1}),
    ("end=-1", {"end": -1}),
    ("start=1/end=2", {"start": 1, "end": 2}),
    ("start=1", {"start": 1}),
    ("start=-2/end=-1", {"start": -2, "end": -1}),
    ("start=-10", {"start": -10}),
    ("end=10", {"end": 10}),
    ("start=-10/end=10", {"start": -10, "end": 10}),
    ("start=2/end=1", {"start": 2, "end": 1}),
    ("start=3", {"start": 3}),
    ("end=0", {"end": 0}),
    ("end=-10", {"end": -10}),
    ("int64-extremes", {"start": -(2 ** 63), "end": 2 ** 63 - 1}),
    ("start=1/end=-1", {"start": 1, "end": -1}),
))

#: The data values of Shape and Size are irrelevant to the result: one floating class beside the
#: special values (which a kernel must not read either), the integer defaults.
_SHAPE_NUMERICS = {"wide": ()}

SHAPE = Entry(
    "Shape", _shape_oracle, family="shaped", shapes=_SHAPE_PATTERNS, attrs=_SHAPE_ATTRS,
    numerics_types=_SHAPE_NUMERICS,
    notes={15: "start/end attributes: negative axes from the back, clamped to [0, r]"})

SIZE = Entry("Size", _size_oracle, family="shaped", shapes=_SHAPE_PATTERNS, numerics_types=_SHAPE_NUMERICS)


# ============================================================================ Trilu
def trilu(x: np.ndarray, k: int = 0, upper: int = 1, zero=None) -> np.ndarray:
    """Trilu of ``[*, N, M]``: element ``(i, j)`` of every matrix is kept where ``j - i >= k``
    (upper) or ``j - i <= k`` (lower), else set to ``zero`` (default: the zero of ``x``'s
    dtype: ``+0.0``, ``False``, ``0j``; object arrays need it given: ``0`` or ``""``).  ``k``
    is an exact Python int (no overflow at the int64 extremes).

    Raises:
        ValueError: ``x`` has rank below 2.
    """
    if x.ndim < 2:
        raise ValueError(f"Trilu needs rank >= 2, got {x.ndim}")
    n, m = x.shape[-2:]
    d = np.arange(m, dtype=object)[None, :] - np.arange(n, dtype=object)[:, None]  # j - i
    keep = np.broadcast_to((d >= int(k)) if upper else (d <= int(k)), x.shape).astype(bool)
    out = np.empty(x.shape, dtype=x.dtype)
    out[...] = np.zeros((), dtype=x.dtype) if zero is None else zero
    out[keep] = x[keep]
    return out


def _trilu_oracle(ctx, x, k=None, upper=1):
    zero = {V.STRING: "", V.INT: 0}.get(V.kind(ctx.types["input"]))
    return trilu(x, 0 if k is None else int(np.asarray(k).reshape(())), upper, zero)


def _trilu_k(rng, ctx):
    """``k``: on and off the main diagonal, the last diagonals that touch the matrix and the
    first beyond them on both sides, far beyond, and the int64 extremes."""
    n, m = ctx.shapes["input"][-2:]
    choices = [0, 1, -1, 2, -2, m - 1, -(n - 1), m, -n, m + 5, -(n + 5), 2 ** 63 - 1, -(2 ** 63)]
    return np.array(choices[int(rng.integers(len(choices)))], dtype=object)


_TRILU_SHAPES = (
    Shape("square", {"input": "NN"}, dims={"N": (2, 5)}),
    Shape("wide", {"input": "NM"}, dims={"N": (2, 3), "M": (4, 6)}),
    Shape("tall", {"input": "MN"}, dims={"N": (2, 3), "M": (4, 6)}),
    Shape("batch", {"input": "BNM"}, dims={"B": (2, 3), "N": (2, 4), "M": (2, 4)}),
    Shape("batch2", {"input": "ABNM"}, dims={"A": (1, 2), "B": (2, 3), "N": (2, 3), "M": (2, 4)}),
    Shape("row", {"input": "1M"}, dims={"M": (2, 6)}),
    Shape("column", {"input": "N1"}, dims={"N": (2, 6)}),
    Shape("zero-size/rows", {"input": "0M"}),
    Shape("zero-size/batch", {"input": "0NM"}),
)

TRILU = Entry(
    "Trilu", _trilu_oracle, family="shaped", shapes=_TRILU_SHAPES, structural={"k": _trilu_k},
    attrs=(Attrs({"upper": 0}, tag="lower"),), signed_zero=True, per_type=8,
    errors=(Err("the input must be of rank 2 or higher: rank 1", "rank1", {}, ((4,),)),
            Err("the input must be of rank 2 or higher: rank 0", "rank0", {"upper": 0}, ((),))))


ENTRIES: tuple = (DEPTH_TO_SPACE, SPACE_TO_DEPTH, SHAPE, SIZE, TRILU)
register_entries(ENTRIES)
