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
  ``start > end`` and empty slices.  The data values are irrelevant to the result: one
  numerics class per type (``special`` for floats, ``int-extremes``: a kernel must not read
  them), and a sweep of the patterns and start/end states for float.
* **Trilu** (14): square, wide, tall, one-row and one-column matrices, one and two batch
  dims, zero-size rows and batches; ``upper`` absent/1/0; ``k`` absent or a structural
  scalar drawn per case among 0, +-1, +-2, the last diagonals touching the matrix, the first
  beyond them, far beyond and the int64 extremes (the text defines every ``k``).  Removed
  elements are the zero of the type: ``+0.0`` (the sign of zero is checked: a kernel that
  multiplies by a 0/1 mask turns ``-x`` into ``-0.0`` and NaN/inf into NaN, which no reading
  of "set to zero" allows), ``0``, ``False``, ``0j`` and ``""`` for strings (the text says
  "zero"; the empty string is a string tensor's zero value).  Error cases: rank 0 and 1.
* **Range** (11, 27): the count ``max(ceil((limit - start) / delta), 0)`` in exact arithmetic
  and ``start + i * delta`` exactly (integers: Python ints, so a ``limit - start`` beyond the
  type, or beyond float64 for int64, is exact).  Floating classes: ``normal``, ``integral``
  (the limit an exact multiple away: excluded), ``empty`` (wrong side or equal), ``accumulate``
  (100-250 steps of 0.1-like deltas), ``large-offset`` (start beyond the type's consecutive
  integers), ``wide`` and ``special`` (subnormal and smallest-normal steps, zero starts and
  limits); every floating case has a count that exact, T, stash-type, float32 and float64
  evaluation agree on (the count is never a rounding question).  Integer classes: ``int``,
  ``int-extremes`` (from an extreme inwards), ``int-span`` (``limit - start`` beyond the type,
  the limit one past a multiple of delta), ``int-empty``.  Tolerance: exact for integers; for
  floats the largest deviation from the correctly rounded value among the legitimate
  evaluations at the mandated precision (:func:`range_variants`: the text's
  ``start + i*delta`` with one or two roundings and the function body's repeated addition,
  which the text's pseudocode and the schema's function body disagree on), no ulp added.
  ``stash_type`` absent/1/11 at 27.  Error cases: non-scalar start/delta, mixed types.
* **EyeLike** (9, 22): every (T1, T2) pair, ``dtype`` written where T2 differs from T1 and,
  where they agree, omitted at 9 and written at 22 (``type_attrs``); square, wide, tall,
  one-row, one-column, 1x1 and zero-size inputs; ``k`` absent, 0, +-1, +-2, +-3, +-6 (the
  last diagonals of the widest matrices and beyond), +-100 and the int64 extremes.  The input
  values are irrelevant: one numerics class per type, a sweep of the patterns and k states
  for float -> float.  Error cases: rank 1 and 3, ``dtype`` STRING and UNDEFINED.
* **ReverseSequence** (10, 28): time-major (attributes absent or explicit) and batch-major
  (``batch_axis=0, time_axis=1``) layouts of rank 2-4 tied to the attributes by the shape
  table, zero-size batch / time / inner dims; ``sequence_lens`` structural, in ``[0, T]`` with
  the full length, 1 and 0 among them.  Error cases: rank 1, ``batch_axis`` 2, both axes 0,
  ``sequence_lens`` of the wrong length or int32.
* **CenterCropPad** (18): every axis (axes absent, rank 1-3), one axis (negative, middle),
  two axes (sorted, unsorted, the trailing H/W of an image batch), a zero-size input; the
  target ``shape`` structural: per listed axis a crop or pad by an odd or even amount (the
  first two listed axes one of each), the same size or 0.  Crops start at
  ``floor((n - t) / 2)``, pads put ``floor((t - n) / 2)`` on the left; the padding value is
  the type's zero (``""`` for strings).  Every ``Tind = int32`` model is contested: the
  context-dependent function body's ``Max(Shape(x), shape)`` is ill-typed for it.  Error
  cases: ``shape`` shorter than the rank or than ``axes``, an axis out of range.
* **ConstantOfShape** (9, 20, 21, 23, 24, 25): every output type T2 of every version, the
  ``value`` attribute a one-element tensor of that type written by ``type_attrs`` (the k-th
  version that allows a type takes its k-th value: signed zero, NaN, infinities, the largest
  finite, the smallest subnormal, the integer extremes, then ordinary values; float's first is
  the attribute left out, float32 zero); the shape input structural (dims in [1, 4]) with
  ranks 0 (an empty shape: a scalar output) to 5 and zero-size outputs; tag ``attr_value``
  names the value.  Error cases: a negative dim, a rank-2 shape input, a two-element or string
  ``value``.
* **Constant** (1, 9, 11, 12, 13, 19, 21, 23, 24, 25): no inputs; the value attribute is the
  case (``drawn_attrs``), its form from the shape pattern and the output type: ``value`` as a
  scalar, a rank 1-3 tensor and a zero-size tensor; ``sparse_value`` (11; numeric and bool
  types; indices ``[NNZ, rank]`` or linearized, ascending, 0 to every element) and the
  ``single``/``list`` patterns (12) that write ``value_float(s)``, ``value_int(s)``,
  ``value_string(s)`` for float, int64 and string outputs (``value`` elsewhere); data by
  numerics class (IEEE floats: ``normal`` and ``special``; the narrow floats every value
  of the type; integers with their extremes; bool, string, complex).  Tag ``constant_form``.
  Error cases: no value attribute, two of them (value and value_float, value_int and
  value_ints, value and sparse_value).
"""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
import onnx
from onnx import numpy_helper

from ..opspec import op_spec
from ..tolerance import Tolerance
from . import values as V
from .engine import register_entries
from .entry import REALS, Attrs, Entry, Err, Shape


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

def _values_irrelevant(t: str) -> tuple[str, ...]:
    """Numerics classes of an operator that reads only its input's shape (Shape, Size, EyeLike):
    one per type (``special`` for floats: NaN and infinities a kernel must not trip on; the
    integer extremes; bool, string, complex draws)."""
    k = V.kind(t)
    return ("special",) if k == V.FLOAT else (("int-extremes",) if k == V.INT else (k,))


def _sweep(param: str, n: int, *also: str):
    """``per_type``: ``n`` cases for the combination whose ``param`` (and each of ``also``) is
    float (a sweep over the patterns and attribute states), one per numerics class for the others."""
    return lambda version, combo: n if all(combo[p] == "float" for p in (param, *also)) else 0


SHAPE = Entry(
    "Shape", _shape_oracle, family="shaped", shapes=_SHAPE_PATTERNS, attrs=_SHAPE_ATTRS,
    numerics_classes=_values_irrelevant, per_type=_sweep("T", len(_SHAPE_PATTERNS)),
    notes={15: "start/end attributes: negative axes from the back, clamped to [0, r]"})

SIZE = Entry("Size", _size_oracle, family="shaped", shapes=_SHAPE_PATTERNS, numerics_classes=_values_irrelevant,
             per_type=_sweep("T", len(_SHAPE_PATTERNS)))


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


# ============================================================================ Range
def range_count(start, limit, delta) -> int:
    """``max(ceil((limit - start) / delta), 0)`` in exact rational arithmetic (the text's
    formula; floats as their exact binary values, integers as Python ints).

    Raises:
        ZeroDivisionError: ``delta`` is zero (undefined: never generated).
    """
    q = (Fraction(limit) - Fraction(start)) / Fraction(delta)
    return max(math.ceil(q), 0)


def range_exact(start, limit, delta) -> list[Fraction]:
    """``start + i * delta`` for ``i < range_count(...)``, exactly."""
    s, d = Fraction(start), Fraction(delta)
    return [s + i * d for i in range(range_count(start, limit, delta))]


def _stash(ctx) -> str | None:
    """The precision Range-27 computes a float16/bfloat16 range in (``stash_type``: float by
    default, double for 11); None where T is the precision."""
    if ctx.version >= 27 and ctx.types["start"] in ("float16", "bfloat16"):
        return V.name_of(int(ctx.attrs.get("stash_type", 1)))
    return None


def _range_oracle(ctx, start, limit, delta, stash_type=1):
    vals = range_exact(_scalar(start), _scalar(limit), _scalar(delta))
    if V.kind(ctx.types["start"]) == V.INT:
        out = np.empty(len(vals), dtype=object)
        out[:] = [int(v) for v in vals]
        return out
    return np.array([float(v) for v in vals], dtype=np.float64)  # correctly rounded to double


def _scalar(x):
    """The Python value of a one-element array."""
    return np.asarray(x).reshape(()).item()


def range_variants(t: str, stash: str | None, start: float, limit: float, delta: float) -> dict[str, np.ndarray]:
    """The legitimate evaluations of a floating Range (float64 arrays of values in ``t``), at
    the precision ``P`` the spec mandates (``t``; Range-27's float16/bfloat16: the stash type),
    then rounded to ``t``:

    * ``one-rounding``: the text's ``start + (i * delta)`` rounded once (an FMA, or any wider
      evaluation);
    * ``two-roundings``: ``i * delta`` rounded to ``P``, then the sum;
    * ``repeated-addition``: ``x_0 = start``, ``x_(i+1) = x_i + delta`` rounded to ``P`` at each
      step: the function body's ``Loop`` (``current = Add(prev, delta)``; Range-27's context
      function too, in float) and the "successive additions" Range-27's ``stash_type`` text
      speaks of.  The text's pseudocode says ``start + (i * delta)``; the schema's own function
      body says repeated addition: both are normative parts of the schema, so both are
      legitimate, at ``P``.

    Not legitimate: any of them below ``P`` (float16 arithmetic where the stash type is float),
    a step recomputed from the first two values (numpy's ``arange``), a wrong count."""
    p = stash or t
    n = range_count(start, limit, delta)
    i = np.arange(n, dtype=np.float64)
    P = V.np_dtype(p).type
    with np.errstate(all="ignore"):
        two = (P(start) + (i.astype(P) * P(delta)).astype(P)).astype(P).astype(np.float64)
        one = np.array([float(Fraction(start) + k * Fraction(delta)) for k in range(n)], dtype=np.float64)
        rep, x = np.empty(n, dtype=np.float64), P(start)
        for k in range(n):
            rep[k] = float(x)
            x = P(x + P(delta))
    return {f"one-rounding-{p}": V.representable(V.representable(one, p), t),
            f"two-roundings-{p}": V.representable(two, t),
            f"repeated-addition-{p}": V.representable(rep, t)}


def _range_tolerance(ctx, inputs, attrs, outputs):
    t = ctx.types["start"]
    if V.kind(t) != V.FLOAT:
        return {"output": Tolerance(0.0, 0.0, exact=True)}
    e = V.representable(np.asarray(outputs["output"], dtype=np.float64), t)
    var = range_variants(t, _stash(ctx), *(_scalar(x) for x in inputs))
    spread = max((float(np.max(np.abs(v - e))) if e.size else 0.0) for v in var.values())
    return {"output": Tolerance(spread, 0.0, spread=spread, variants=tuple(var), exact=spread == 0.0)}


#: Largest output the float classes make (bfloat16 holds the integers up to 256 exactly).
_RANGE_MAX_N = 250


def _range_counts_agree(t: str, stash: str | None, start: float, limit: float, delta: float) -> bool:
    """The count is the same in exact arithmetic, in ``t`` (and the stash type), in float64
    and, for the types float32 holds, in float32 (``(limit - start) / delta`` rounded at each
    step, then ``ceil``), and every value is finite: a case any legitimate kernel sizes alike."""
    n = range_count(start, limit, delta)
    if n > _RANGE_MAX_N:
        return False
    for p in sorted({t, stash or t, "double"} | ({"float"} if t != "double" else set())):
        P = V.np_dtype(p).type
        with np.errstate(all="ignore"):
            q = (P(limit) - P(start)) / P(delta)
        if not np.isfinite(float(q)) or max(math.ceil(float(q)), 0) != n:
            return False
    vals = range_exact(start, limit, delta)
    return all(math.isfinite(v) for v in V.representable(np.array([float(v) for v in vals] or [0.0]), t))


def _range_float_class(kind: str):
    """A floating numerics class of Range: draws until the count is unambiguous
    (:func:`_range_counts_agree`)."""

    def fn(rng, ctx, shapes):
        t = ctx.types["start"]
        fi = V.finfo(t)
        stash = _stash(ctx)

        def rt(x):
            return float(V.representable(np.array(float(x)), t))

        for _ in range(200):
            sign = float(rng.choice([-1.0, 1.0]))
            if kind == "integral":  # an exact multiple: the limit itself is excluded
                start = float(rng.integers(-20, 21))
                delta = sign * float(rng.choice([1.0, 2.0, 3.0, 0.5, 0.25, 4.0]))
                limit = start + int(rng.integers(0, 31)) * delta
            elif kind == "empty":  # the limit on the wrong side of start (or equal to it)
                start, delta = rt(rng.uniform(-10, 10)), rt(sign * rng.uniform(0.1, 3))
                limit = rt(start - sign * float(rng.choice([0.0, rng.uniform(0.01, 5)])))
            elif kind == "accumulate":  # long ranges of a step no binary type holds
                start = rt(rng.uniform(-5, 5))
                delta = rt(sign * float(rng.choice([0.1, 0.3, 1 / 3, 0.7, 0.01])))
                limit = rt(start + (int(rng.integers(100, _RANGE_MAX_N)) - 0.5) * delta)
            elif kind == "large-offset":  # start beyond the type's integers: x + delta may equal x
                start = rt(sign * 2.0 ** (fi.nmant + 1) * rng.uniform(1, 2))
                delta = rt(float(rng.choice([1.0, 0.5, 2.0, 3.0])) * float(rng.choice([-1.0, 1.0])))
                limit = rt(start + (int(rng.integers(5, 40)) - 0.5) * delta)
            elif kind == "wide":  # magnitudes over the type's range, far from overflow
                e_lo, e_hi = math.log2(float(fi.smallest_normal)) + 12, math.log2(float(fi.max)) - 8
                start = rt(sign * 2.0 ** rng.uniform(e_lo, e_hi))
                delta = rt(float(rng.choice([-1.0, 1.0])) * abs(start) * rng.uniform(0.05, 1.0))
                limit = rt(start + (int(rng.integers(1, 21)) - rng.uniform(0.25, 0.75)) * delta)
            elif kind == "special":  # subnormal and smallest-normal steps, zero starts and limits
                unit = float(rng.choice([float(fi.smallest_subnormal), float(fi.smallest_normal)]))
                start = float(rng.choice([0.0, unit * int(rng.integers(-3, 4))]))
                delta = sign * unit * int(rng.integers(1, 4))
                limit = start + int(rng.integers(0, 12)) * delta - (0.0 if rng.random() < 0.5 else delta / 2)
                if rng.random() < 0.3:
                    limit = 0.0
            else:  # normal
                start, delta = rt(rng.uniform(-10, 10)), rt(sign * rng.uniform(0.1, 3))
                limit = rt(start + (int(rng.integers(1, 41)) - rng.uniform(0.25, 0.75)) * delta)
            if delta == 0 or rt(limit) != limit or rt(start) != start or rt(delta) != delta:
                continue
            if _range_counts_agree(t, stash, start, limit, delta):
                return [np.array(start), np.array(limit), np.array(delta)]
        raise RuntimeError(f"Range: no {kind} case found for {t}")

    return fn


def _range_int_class(kind: str):
    """An integer numerics class of Range (outputs always inside the type)."""

    def fn(rng, ctx, shapes):
        t = ctx.types["start"]
        info = V.iinfo(t)
        lo, hi = int(info.min), int(info.max)
        for _ in range(200):
            sign = int(rng.choice([-1, 1]))
            if kind == "int-extremes":  # from an extreme inwards, span inside the type
                start = hi - int(rng.integers(0, 3)) if sign < 0 else lo + int(rng.integers(0, 3))
                delta = sign * int(rng.integers(1, hi // 64 + 2))
                limit = start + sign * int(rng.integers(0, hi // 2))
            elif kind == "int-span":
                # limit - start beyond the type; the limit one past a multiple of delta (or on one),
                # which float64 cannot tell apart for int64
                k = int(rng.integers(3, 7))
                step = (hi - lo) // k - int(rng.integers(0, 1000))
                start = lo + int(rng.integers(0, 100)) if sign > 0 else hi - int(rng.integers(0, 100))
                delta = sign * step
                limit = start + (k - 1) * delta + sign * int(rng.integers(0, 2))
            elif kind == "int-empty":
                start = int(rng.integers(-100, 101))
                delta = sign * int(rng.integers(1, 10))
                limit = start - sign * int(rng.integers(0, 10))
            else:  # int: the limit a few steps away, not a multiple of delta half the time
                start = int(rng.integers(-100, 101))
                delta = sign * int(rng.integers(1, 10))
                limit = start + int(rng.integers(0, 31)) * delta - sign * int(rng.integers(0, abs(delta)))
            if not (lo <= start <= hi and lo <= limit <= hi and lo <= delta <= hi) or delta == 0:
                continue
            vals = range_exact(start, limit, delta)
            if len(vals) <= _RANGE_MAX_N and all(lo <= v <= hi for v in vals):
                return [np.array(start, dtype=object), np.array(limit, dtype=object), np.array(delta, dtype=object)]
        raise RuntimeError(f"Range: no {kind} case found for {t}")

    return fn


_RANGE_FLOAT = ("normal", "integral", "empty", "accumulate", "large-offset", "wide", "special")
_RANGE_INT = ("int", "int-extremes", "int-span", "int-empty")

RANGE = Entry(
    "Range", _range_oracle, family="shaped", shapes=(Shape("scalars", {"start": "", "limit": "", "delta": ""}),),
    float_numerics={k: _range_float_class(k) for k in _RANGE_FLOAT},
    int_numerics={k: _range_int_class(k) for k in _RANGE_INT},
    attrs=(Attrs({"stash_type": 11}, since=27, tag="stash=double"),),
    tolerance=_range_tolerance, per_type=lambda v, combo: 14 if V.kind(combo["T"]) == V.FLOAT else 8,
    errors=(Err("start, limit and delta are scalars: start has shape [2]", "start-shape", {}, ((2,), (), ())),
            Err("start, limit and delta are scalars: delta has shape [1, 1]", "delta-shape", {}, ((), (), (1, 1))),
            Err("start, limit and delta share the type T: limit is double", "limit-type", {}, ((), (), ()),
                types={"limit": "double"})),
    notes={27: "float16/bfloat16 with stash_type: computed in float (1, default) or double (11)"})


# ============================================================================ EyeLike
def eye_like(shape: tuple[int, int], k: int = 0) -> np.ndarray:
    """EyeLike's values for a ``[N, M]`` input: 1 at ``[i, i + k]``, 0 elsewhere (float64;
    ``k`` an exact Python int, so no overflow at the int64 extremes).

    Raises:
        ValueError: ``shape`` is not 2-D ("Only 2D tensors are supported").
    """
    if len(shape) != 2:
        raise ValueError(f"EyeLike needs a 2-D input, got rank {len(shape)}")
    n, m = shape
    out = np.zeros((n, m), dtype=np.float64)
    for i in range(n):
        if 0 <= i + int(k) < m:
            out[i, i + int(k)] = 1.0
    return out


def _eye_oracle(ctx, x, dtype=None, k=0):
    return eye_like(np.shape(x), k)


def _eye_type_attrs(version, combo):
    """dtype written where T2 differs from T1 (the only way to get it); where they agree,
    omitted at 9 and written at 22, so both states meet every type."""
    if combo["T1"] != combo["T2"] or version >= 22:
        return {"dtype": V.elem(combo["T2"])}
    return {}


_EYE_SHAPES = (
    Shape("square", {"input": "NN"}, dims={"N": (2, 5)}),
    Shape("wide", {"input": "NM"}, dims={"N": (2, 3), "M": (4, 6)}),
    Shape("tall", {"input": "MN"}, dims={"N": (2, 3), "M": (4, 6)}),
    Shape("row", {"input": "1M"}, dims={"M": (1, 5)}),
    Shape("column", {"input": "N1"}, dims={"N": (2, 5)}),
    Shape("zero-size/rows", {"input": "0M"}),
    Shape("zero-size/columns", {"input": "N0"}),
    Shape("one", {"input": "11"}),
)

#: k beyond absent and the explicit 0: the first diagonals on both sides, the last that touch a
#: 2-6 wide matrix and the first beyond it, far beyond, the int64 extremes (no diagonal).
_EYE_ATTRS = tuple(Attrs({"k": k}, tag=f"k={k}") for k in (1, -1, 2, -2, 3, -3, 6, -6, 100, -100))
_EYE_ATTRS += (Attrs({"k": 2 ** 63 - 1}, tag="k=int64-max"), Attrs({"k": -(2 ** 63)}, tag="k=int64-min"))

EYE_LIKE = Entry(
    "EyeLike", _eye_oracle, family="shaped", shapes=_EYE_SHAPES, attrs=_EYE_ATTRS, type_attrs=_eye_type_attrs,
    numerics_classes=_values_irrelevant, per_type=_sweep("T1", len(_EYE_SHAPES), "T2"), signed_zero=True,
    errors=(Err("Only 2D tensors are supported: rank 1", "rank1", {}, ((4,),)),
            Err("Only 2D tensors are supported: rank 3", "rank3", {}, ((2, 3, 3),)),
            Err("dtype must be valid as an output type: STRING is not in T2", "dtype-string",
                {"dtype": V.elem("string")}, ((3, 3),), out_types={"output": "string"}),
            Err("dtype must be one of the DataType enum values: 0 (UNDEFINED) is not", "dtype-undefined",
                {"dtype": 0}, ((3, 3),))),
    notes={22: "bfloat16 in T1 and T2"})


# ============================================================================ ReverseSequence
def reverse_sequence(x: np.ndarray, lens, batch_axis: int = 1, time_axis: int = 0) -> np.ndarray:
    """ReverseSequence: for each batch slice ``i``, the first ``lens[i]`` elements along
    ``time_axis`` reversed, the rest copied.

    Raises:
        ValueError: rank below 2, axes not {0, 1} distinct, ``lens`` not of length
            ``x.shape[batch_axis]`` or a length outside ``[0, x.shape[time_axis]]``.
    """
    if x.ndim < 2 or {batch_axis, time_axis} != {0, 1}:
        raise ValueError(f"rank {x.ndim}, batch_axis {batch_axis}, time_axis {time_axis}")
    lens = [int(v) for v in np.asarray(lens).ravel()]
    if len(lens) != x.shape[batch_axis] or any(not 0 <= n <= x.shape[time_axis] for n in lens):
        raise ValueError(f"sequence_lens {lens} for shape {x.shape}")
    out = x.copy()
    for b, n in enumerate(lens):
        src = [slice(None)] * x.ndim
        src[batch_axis] = b
        src[time_axis] = slice(n - 1, None, -1) if n else slice(0, 0)
        dst = list(src)
        dst[time_axis] = slice(0, n)
        out[tuple(dst)] = x[tuple(src)]
    return out


def _revseq_oracle(ctx, x, sequence_lens, batch_axis=1, time_axis=0):
    return reverse_sequence(x, sequence_lens, batch_axis, time_axis)


def _revseq_lens(rng, ctx):
    """One length per batch element in ``[0, T]``: the full length, 1 and 0 among them where the
    batch is large enough, the rest drawn."""
    shape = ctx.shapes["input"]
    b, t = shape[ctx.attrs.get("batch_axis", 1)], shape[ctx.attrs.get("time_axis", 0)]
    lens = [int(v) for v in rng.integers(0, t + 1, size=b)]
    for i, v in enumerate((t, 1, 0)[:b]):
        lens[i] = min(v, t)
    perm = rng.permutation(b) if b else []
    out = np.empty(b, dtype=object)
    out[:] = [lens[i] for i in perm]
    return out


_BATCH_MAJOR = {"batch_axis": 0, "time_axis": 1}
_REVSEQ_SHAPES = (
    Shape("time-major/r2", {"input": "TB", "sequence_lens": "B"}, dims={"T": (1, 6), "B": (1, 4)}),
    Shape("time-major/r3", {"input": "TBK", "sequence_lens": "B"}, dims={"T": (2, 6), "B": (2, 4)}),
    Shape("time-major/r4/explicit", {"input": "TBKM", "sequence_lens": "B"}, {"batch_axis": 1, "time_axis": 0},
          dims={"T": (2, 5), "B": (2, 3), "K": (1, 2), "M": (1, 3)}),
    Shape("batch-major/r2", {"input": "BT", "sequence_lens": "B"}, _BATCH_MAJOR, dims={"T": (1, 6), "B": (1, 4)}),
    Shape("batch-major/r3", {"input": "BTK", "sequence_lens": "B"}, _BATCH_MAJOR, dims={"T": (2, 6), "B": (2, 4)}),
    Shape("batch-major/r4", {"input": "BTKM", "sequence_lens": "B"}, _BATCH_MAJOR,
          dims={"T": (2, 5), "B": (2, 3), "K": (1, 2), "M": (1, 3)}),
    Shape("zero-size/batch", {"input": "T0K", "sequence_lens": "0"}),
    Shape("zero-size/time", {"input": "B0K", "sequence_lens": "B"}, _BATCH_MAJOR),
    Shape("zero-size/inner", {"input": "TB0", "sequence_lens": "B"}),
)

REVERSE_SEQUENCE = Entry(
    "ReverseSequence", _revseq_oracle, family="shaped", shapes=_REVSEQ_SHAPES,
    structural={"sequence_lens": _revseq_lens}, signed_zero=True, per_type=6,
    errors=(Err("the input must be of rank r >= 2: rank 1", "rank1", {}, ((4,), (1,)), values={"sequence_lens": 2}),
            Err("batch_axis 'Must be one of 1 (default), or 0': 2", "batch-axis", {"batch_axis": 2},
                ((3, 2, 2), (2,)), values={"sequence_lens": 1}),
            Err("time_axis and batch_axis are both 0", "same-axes", {"batch_axis": 0, "time_axis": 0},
                ((3, 2), (3,)), values={"sequence_lens": 1}),
            Err("sequence_lens has shape [batch_size]: 3 lengths for a batch of 2", "lens-shape", {},
                ((3, 2), (3,)), values={"sequence_lens": 1}),
            Err("sequence_lens is int64: int32 given", "lens-type", {}, ((3, 2), (2,)),
                types={"sequence_lens": "int32"}, values={"sequence_lens": 1})),
    notes={28: "bfloat16"})


# ============================================================================ CenterCropPad
def center_crop_pad(x: np.ndarray, shape, axes=None, zero=None) -> np.ndarray:
    """CenterCropPad: each listed axis cropped to a centred window (start rounded down) or
    padded with ``zero`` equally on both sides (the odd pixel on the right); other axes kept.
    ``zero`` defaults to the dtype's zero (object arrays need it given: ``0`` or ``""``).

    Raises:
        ValueError: ``shape`` and ``axes`` (default: every axis) differ in length, an axis is
            outside ``[-r, r-1]`` or repeated, or a target is negative.
    """
    r = x.ndim
    axes = list(range(r)) if axes is None else [int(a) for a in axes]
    shape = [int(v) for v in np.asarray(shape).ravel()]
    if len(shape) != len(axes) or any(not -r <= a < r for a in axes) or len({a % r for a in axes}) != len(axes) \
            or any(v < 0 for v in shape):
        raise ValueError(f"shape {shape}, axes {axes} for rank {r}")
    out_shape = list(x.shape)
    src, dst = [slice(None)] * r, [slice(None)] * r
    for a, t in zip(axes, shape):
        a %= r
        n = x.shape[a]
        out_shape[a] = t
        if n >= t:  # crop: the window starts at floor((n - t) / 2)
            lo = (n - t) // 2
            src[a] = slice(lo, lo + t)
        else:  # pad: floor((t - n) / 2) on the left, the rest (one more when odd) on the right
            lo = (t - n) // 2
            dst[a] = slice(lo, lo + n)
    out = np.empty(out_shape, dtype=x.dtype)
    out[...] = np.zeros((), dtype=x.dtype) if zero is None else zero
    out[tuple(dst)] = x[tuple(src)]
    return out


def _ccp_oracle(ctx, x, shape, axes=None):
    zero = {V.STRING: "", V.INT: 0}.get(V.kind(ctx.types["input_data"]))
    return center_crop_pad(x, shape, axes, zero)


def _ccp_shape(rng, ctx):
    """The target of each listed axis: a crop or a pad by an odd or even amount, the same size,
    or 0; the first two listed axes get one crop and one pad where there are two."""
    dims = ctx.shapes["input_data"]
    r = len(dims)
    axes = ctx.attrs.get("axes")
    axes = list(range(r)) if axes is None else [a % r for a in axes]
    out = []
    for j, a in enumerate(axes):
        n = dims[a]
        kind = ("crop", "pad")[j] if j < 2 and len(axes) > 1 else str(rng.choice(["crop", "pad", "same", "zero"]))
        if kind == "crop" and n > 0:
            t = int(rng.integers(0, n))
        elif kind == "pad":
            t = n + int(rng.integers(1, 4))
        elif kind == "zero":
            t = 0
        else:
            t = n
        out.append(t)
    v = np.empty(len(out), dtype=object)
    v[:] = out
    return v


_CCP_SHAPES = (
    Shape("r1/all", {"input_data": "N", "shape": "1"}, dims={"N": (1, 7)}),
    Shape("r2/all", {"input_data": "NM", "shape": "2"}, dims={"N": (1, 6), "M": (1, 6)}),
    Shape("r3/all", {"input_data": "NMK", "shape": "3"}, dims={c: (1, 5) for c in "NMK"}),
    Shape("r3/axes=[-1]", {"input_data": "NMK", "shape": "1"}, {"axes": [-1]}, dims={"K": (1, 7)}),
    Shape("r3/axes=[0,2]", {"input_data": "NMK", "shape": "2"}, {"axes": [0, 2]}, dims={c: (1, 5) for c in "NMK"}),
    Shape("r4/axes=[-2,-1]", {"input_data": "BCHW", "shape": "2"}, {"axes": [-2, -1]},
          dims={"B": (1, 2), "C": (1, 3), "H": (2, 7), "W": (2, 7)}),
    Shape("r2/axes=[1,0]", {"input_data": "NM", "shape": "2"}, {"axes": [1, 0]}, dims={"N": (1, 6), "M": (1, 6)}),
    Shape("r3/axes=[1]", {"input_data": "NMK", "shape": "1"}, {"axes": [1]}, dims={"M": (1, 7)}),
    Shape("zero-size/input", {"input_data": "N0", "shape": "2"}, dims={"N": (1, 4)}),
)

#: Case.contested of the CenterCropPad models whose shape input is int32.
CCP_INT32_CONTESTED = ("Tind = int32: the schema admits it, but CenterCropPad-18's function body computes "
                       "Max(Shape(input_data) (int64), shape (int32)), which is ill-typed: a runtime that expands "
                       "the body rejects the model")


def _ccp_contested(ctx, attrs):
    return CCP_INT32_CONTESTED if ctx.types.get("shape") == "int32" else None


CENTER_CROP_PAD = Entry(
    "CenterCropPad", _ccp_oracle, family="shaped", shapes=_CCP_SHAPES, structural={"shape": _ccp_shape},
    signed_zero=True, per_type=5, contested=_ccp_contested,
    errors=(Err("shape has one entry per axis (every axis when axes is omitted): 2 for rank 3", "shape-length",
                {}, ((2, 3, 4), (2,)), values={"shape": 2}),
            Err("shape has one entry per listed axis: 1 for axes [0, 1]", "axes-length", {"axes": [0, 1]},
                ((2, 3, 4), (1,)), values={"shape": 2}),
            Err("axes 'Accepted range is [-r, r-1]': 3 for rank 3", "axes-range", {"axes": [3]},
                ((2, 3, 4), (1,)), values={"shape": 2})))


# ============================================================================ ConstantOfShape
#: The value attribute left out (ConstantOfShape: float32 zero).
ABSENT = None


def value_tensor(t: str, v) -> onnx.TensorProto:
    """A one-element tensor of type ``t`` holding the exact value ``v`` (float, int or bool)."""
    exact = np.array([v], dtype=object if V.kind(t) == V.INT else (np.bool_ if t == "bool" else np.float64))
    return numpy_helper.from_array(V.to_type(exact, t), "value")


def tensor_value(tp: onnx.TensorProto):
    """The exact value(s) of a TensorProto attribute, as the oracles take them (float64, Python
    ints, bools, strings), and its spec type name."""
    t = V.name_of(tp.data_type)
    return V.to_exact(numpy_helper.to_array(tp), t), t


def cos_values(t: str) -> list:
    """The ``value`` attribute's values for output type ``t`` (the k-th version that has the type
    takes the k-th, cyclically): special values first (signed zero, NaN, infinities, the largest
    finite and the smallest subnormal, the integer extremes), then ordinary ones; float's first is
    the attribute left out (float32 zero) and its last an explicit zero."""
    k = V.kind(t)
    if k == V.BOOL:
        return [True, False]
    if k == V.INT:
        info = V.iinfo(t)
        return [int(info.min), int(info.max), 1, 0, -1 if info.min < 0 else int(info.max) - 1, min(2, int(info.max))]
    if t == "float":
        return [ABSENT, -0.0, math.nan, math.inf, float(V.finfo(t).smallest_subnormal), 0.0]
    specials = V.float_specials(t)
    fi = V.finfo(t)
    picks = [-0.0, math.nan, math.inf, -float(fi.max), float(fi.smallest_subnormal), 1.5]
    def held(v) -> bool:
        return any((math.isnan(v) and math.isnan(x)) or (v == x and math.copysign(1, v) == math.copysign(1, x))
                   for x in specials)

    ok = [v for v in picks if held(v)]
    return ok + [x for x in specials if x not in ok and not math.isnan(x)][:6 - len(ok)]


def _cos_type_attrs(version, combo):
    """``value`` of output type T2: the k-th of :func:`cos_values` at the k-th version whose T2
    allows the type (so the special values come first at every type)."""
    t = combo["T2"]
    spec = op_spec("ConstantOfShape")
    having = [v for v in spec.since_versions if f"tensor({t})" in spec.versions[v].type_constraints["T2"]]
    vals = cos_values(t)
    v = vals[having.index(version) % len(vals)]
    return {} if v is ABSENT else {"value": value_tensor(t, v)}


def _cos_oracle(ctx, shape, value=None):
    dims = [int(d) for d in np.asarray(shape).ravel()]
    if value is None:
        return np.zeros(dims, dtype=np.float64)
    v, t = tensor_value(value)
    out = np.empty(dims, dtype=v.dtype)
    out[...] = v.reshape(-1)[0]
    return out


def _cos_tags(ctx):
    value = ctx.attrs.get("value")
    if value is None:
        return {}
    v, t = tensor_value(value)
    x = v.reshape(-1)[0]
    x = float(x) if V.kind(t) == V.FLOAT else (bool(x) if t == "bool" else int(x))
    return {"attr_value": f"{t}:{x!r}"}


def _cos_shape(rng, ctx):
    """Output dims drawn in [1, 4], one per element of the (1-D) input."""
    out = np.empty(ctx.shapes["input"], dtype=object)
    out[:] = [int(d) for d in rng.integers(1, 5, size=ctx.shapes["input"])]
    return out


_COS_SHAPES = (
    Shape("rank0", {"input": "0"}),  # an empty shape: a scalar output
    Shape("rank1", {"input": "1"}),
    Shape("rank2", {"input": "2"}),
    Shape("rank3", {"input": "3"}),
    Shape("rank4", {"input": "4"}),
    Shape("rank5", {"input": "5"}),
    Shape("zero-size", {"input": "3"}, values={"input": [2, 0, 3]}),
    Shape("zero-size/rank1", {"input": "1"}, values={"input": [0]}),
)

_F1 = numpy_helper.from_array(np.array([1.0], dtype=np.float32), "value")

CONSTANT_OF_SHAPE = Entry(
    "ConstantOfShape", _cos_oracle, family="shaped", shapes=_COS_SHAPES, structural={"input": _cos_shape},
    type_attrs=_cos_type_attrs, tags=_cos_tags, signed_zero=True,
    errors=(Err("'All values must be >= 0': [2, -1]", "negative", {"value": _F1}, ((2,),),
                values={"input": [2, -1]}, out_types={"output": "float"}),
            Err("the input is a 1D tensor: rank 2", "rank2", {"value": _F1}, ((1, 2),), values={"input": 2},
                out_types={"output": "float"}),
            Err("value 'Should be a one-element tensor': 2 elements", "value-size",
                {"value": numpy_helper.from_array(np.array([1.0, 2.0], dtype=np.float32), "value")}, ((2,),),
                values={"input": 2}, out_types={"output": "float"}),
            Err("value of type string: not in T2", "value-string",
                {"value": numpy_helper.from_array(np.array(["a"], dtype=object), "value")}, ((2,),),
                values={"input": 2}, out_types={"output": "string"})),
    notes={20: "bfloat16, float8 types", 21: "int4/uint4", 23: "float4e2m1", 24: "float8e8m0", 25: "int2/uint2"})


# ============================================================================ Constant
#: The attribute a value_* form writes for an output type (value_float is a float32 scalar,
#: value_int an int64 one, value_string a string one; the plural forms are 1-D).
_SINGLE = {"float": "value_float", "int64": "value_int", "string": "value_string"}
_LIST = {"float": "value_floats", "int64": "value_ints", "string": "value_strings"}


def constant_value(attrs) -> np.ndarray:
    """Constant's output from its node attributes (exactly one given): ``value`` (a
    TensorProto), ``sparse_value`` (a SparseTensorProto: the listed values at their indices, 0
    elsewhere; indices ``[NNZ, rank]`` or linearized ``[NNZ]``), ``value_float(s)``,
    ``value_int(s)``, ``value_string(s)``; as an exact value (float64, Python ints, str, bool).

    Raises:
        ValueError: none or more than one of them is given.
    """
    given = {k: v for k, v in attrs.items() if v is not None}
    if len(given) != 1:
        raise ValueError(f"exactly one value attribute must be given, got {sorted(given)}")
    (k, v), = given.items()
    if k == "value":
        return tensor_value(v)[0]
    if k == "sparse_value":
        vals, t = tensor_value(v.values)
        dims = tuple(int(d) for d in v.dims)
        idx = numpy_helper.to_array(v.indices).astype(np.int64)
        out = np.empty(dims, dtype=vals.dtype)
        out[...] = {V.STRING: "", V.INT: 0}.get(V.kind(t), False if t == "bool" else 0.0)
        flat = idx if idx.ndim == 1 else np.ravel_multi_index(tuple(idx.T), dims) if idx.size else idx.reshape(0)
        out.reshape(-1)[flat.astype(np.int64)] = vals.reshape(-1)
        return out
    if k in ("value_float", "value_floats"):
        return np.asarray(np.float32(v) if k == "value_float" else np.asarray(v, np.float32), dtype=np.float64)
    if k in ("value_int", "value_ints"):
        out = np.empty(() if k == "value_int" else (len(v),), dtype=object)
        out[...] = int(v) if k == "value_int" else [int(x) for x in v]
        return out
    out = np.empty(() if k == "value_string" else (len(v),), dtype=object)
    dec = [x.decode() if isinstance(x, bytes) else x for x in ([v] if k == "value_string" else v)]
    out[...] = dec[0] if k == "value_string" else dec
    return out


def _constant_oracle(ctx, **attrs):
    return constant_value(attrs)


def _constant_classes(t: str) -> tuple[str, ...]:
    """One class per type (two for the IEEE floats: special values encoded in every form)."""
    k = V.kind(t)
    if k == V.FLOAT:
        return ("normal", "special") if t in V.IEEE else ("special",)
    return ("int",) if k == V.INT else (k,)


def _constant_data(rng, t: str, numerics: str, shape) -> np.ndarray:
    """Exact values of type ``t`` for a Constant of ``shape``."""
    k = V.kind(t)
    if k == V.FLOAT:
        if numerics == "special":
            vals = np.array(V.float_specials(t), dtype=np.float64)
            return rng.choice(vals, size=shape) if vals.size else np.zeros(shape)
        return V.sample_float(rng, shape, t, REALS, "normal")
    if k == V.INT:  # uniform draws, about 40% of them replaced by the type's extremes, 0 and +-1
        info = V.iinfo(t)
        ext = [v for v in (int(info.min), int(info.max), 0, 1, -1) if info.min <= v <= info.max]
        x = V.sample_int(rng, shape, t, extremes=False)
        pick = rng.random(size=shape) < 0.4
        x[pick] = [ext[int(i)] for i in rng.integers(0, len(ext), size=int(np.sum(pick)))]
        return x
    if k == V.BOOL:
        return V.sample_bool(rng, shape)
    if k == V.STRING:
        return V.sample_string(rng, shape)
    return V.sample_complex(rng, shape, t)


def _constant_attrs(rng, p) -> dict:
    """The value attribute of a Constant case: its form from the shape pattern and the output type
    (``single``/``list``: value_float(s) / value_int(s) / value_string(s) where the type has one,
    else ``value``; ``sparse``: sparse_value for numeric and bool types), its data from the numerics
    class."""
    t = dict(p.types)["T"]
    pat = p.shape
    if pat == "single" and t in _SINGLE:
        x = _constant_data(rng, t, p.numerics, ())
        v = x.reshape(()).item()
        return {_SINGLE[t]: float(v) if t == "float" else (int(v) if t == "int64" else str(v))}
    if pat == "list" and t in _LIST:
        x = _constant_data(rng, t, p.numerics, (int(rng.integers(1, 6)),))
        return {_LIST[t]: [float(v) if t == "float" else (int(v) if t == "int64" else str(v)) for v in x.tolist()]}
    if pat == "sparse" and V.kind(t) in (V.FLOAT, V.INT, V.BOOL):
        dims = tuple(int(d) for d in rng.integers(1, 5, size=int(rng.integers(1, 3))))
        size = int(np.prod(dims))
        nnz = int(rng.integers(0, size + 1))
        flat = np.sort(rng.choice(size, size=nnz, replace=False)).astype(np.int64)
        vals = V.to_type(_constant_data(rng, t, p.numerics, (nnz,)), t)
        idx = flat if rng.random() < 0.5 or len(dims) == 1 else np.stack(np.unravel_index(flat, dims), axis=1)
        sp = onnx.helper.make_sparse_tensor(numpy_helper.from_array(vals, "values"),
                                           numpy_helper.from_array(np.asarray(idx, np.int64), "indices"), list(dims))
        return {"sparse_value": sp}
    shape = {"scalar": (), "zero-size": (2, 0), "single": (), "list": (int(rng.integers(1, 6)),)}.get(pat)
    if shape is None:
        shape = tuple(int(d) for d in rng.integers(1, 5, size=int(rng.integers(1, 4))))
    return {"value": numpy_helper.from_array(V.to_type(_constant_data(rng, t, p.numerics, shape), t), "value")}


def _constant_tags(ctx):
    """``constant_form``: the attribute that holds the value (the engine's ``attr_value`` tag of a
    TensorProto is replaced by the form's name)."""
    form = next((k for k in ("value", "sparse_value", *_SINGLE.values(), *_LIST.values()) if k in ctx.given), None)
    return {"constant_form": form, "attr_value": form}


_CONSTANT_SHAPES = (
    Shape("scalar", {}),
    Shape("tensor", {}),
    Shape("zero-size", {}),
    Shape("sparse", {}, since=11),
    Shape("single", {}, since=12),
    Shape("list", {}, since=12),
)

CONSTANT = Entry(
    "Constant", _constant_oracle, family="shaped", shapes=_CONSTANT_SHAPES, numerics_classes=_constant_classes,
    drawn_attrs=_constant_attrs, tags=_constant_tags, signed_zero=True,
    attrs=(Attrs({"value": _F1}, until=9, tag="value"),),
    per_type=lambda v, combo: sum(sh.applies(v) for sh in _CONSTANT_SHAPES) if combo["T"] in _SINGLE else 0,
    errors=(Err("'Exactly one of the provided attributes ... must be specified': none given", "no-attribute",
                {"value": None}),
            Err("'Exactly one of the provided attributes ... must be specified': value and value_float",
                "two-attributes", {"value": _F1, "value_float": 2.0}, since=12),
            Err("'Exactly one of the provided attributes ... must be specified': value_int and value_ints",
                "two-value-ints", {"value_int": 1, "value_ints": [1, 2]}, since=12, type_name="int64"),
            Err("'Exactly one of the provided attributes ... must be specified': value and sparse_value",
                "value-and-sparse", {"value": _F1, "sparse_value": onnx.helper.make_sparse_tensor(
                    numpy_helper.from_array(np.array([1.0], np.float32), "values"),
                    numpy_helper.from_array(np.array([0], np.int64), "indices"), [2])}, since=11)),
    notes={11: "sparse_value", 12: "value_float(s), value_int(s), value_string(s)"})


ENTRIES: tuple = (DEPTH_TO_SPACE, SPACE_TO_DEPTH, SHAPE, SIZE, TRILU, RANGE, EYE_LIKE, REVERSE_SEQUENCE,
                  CENTER_CROP_PAD, CONSTANT_OF_SHAPE, CONSTANT)
register_entries(ENTRIES, family="creation")
