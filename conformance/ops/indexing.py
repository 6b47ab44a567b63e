"""The indexing family as entries of the operator table (family ``shaped``): Gather (1, 11,
13), GatherElements (11, 13), GatherND (11, 12, 13), ScatterElements (11, 13, 16, 18),
ScatterND (11, 13, 16, 18), OneHot (9, 11, 28), NonZero (9, 13), Compress (9, 11, 28) and
Unique (11, 28).

Every output is compared exactly (data movement, integer and boolean results; floating
values bit for bit with the sign of zero, NaN as a class).  What the entries add to the
schema:

* **shape tables** tying the index inputs to the data (ranks, every valid ``axis`` of the
  version with its negative forms, the attribute left out, rank-0 indices and outputs,
  zero-size indices and data);
* **structural index values** (:attr:`~conformance.ops.entry.Entry.structural`): indices
  drawn inside the range the version's text allows -- ``[0, s-1]`` where the text knows no
  negative index (Gather-1), ``[-s, s-1]`` elsewhere -- with the boundaries ``0``, ``s-1``,
  ``-1``, ``-s`` written first where the size allows, and duplicates;
* **undefined behaviour never generated**: an out-of-range index is an error by the text
  of every gather/scatter operator (error cases, ``Err``), never a value case; OneHot's
  out-of-range indices are *defined* (an all-off row) and have a class of their own.

The operators, one section each below, document their own decisions.
"""

from __future__ import annotations

import numpy as np

from . import values as V
from .engine import register_entries
from .entry import Entry, Err, Shape

#: The integer element types of the schemas (for numerics_types restrictions).
INT_TYPES = ("uint8", "uint16", "uint32", "uint64", "int8", "int16", "int32", "int64")


# ----------------------------------------------------------------------------- shared helpers
def _ints(vals, shape=None) -> np.ndarray:
    """An object array of Python ints (the exact form of integer inputs) of ``shape``."""
    flat = [int(v) for v in np.asarray(vals, dtype=object).ravel()]
    out = np.empty(len(flat), dtype=object)
    out[:] = flat
    return out.reshape(np.shape(vals) if shape is None else shape)


def index_values(rng: np.random.Generator, shape, s: int, negative: bool) -> np.ndarray:
    """Indices into an axis of size ``s``: uniform in ``[-s, s-1]`` (``negative``) or
    ``[0, s-1]``, the boundaries ``0, s-1`` (and ``-1, -s``) at random positions first where
    the size allows, as Python ints of ``shape``.

    Raises:
        ValueError: ``s == 0`` with a non-empty ``shape`` (no index is in range).
    """
    n = int(np.prod(shape, dtype=np.int64))
    if n == 0:
        return _ints(np.zeros(shape, dtype=np.int64))
    if s <= 0:
        raise ValueError(f"no index is in range for an axis of size {s}")
    lo = -s if negative else 0
    vals = [int(v) for v in rng.integers(lo, s, size=n)]
    edges = list(dict.fromkeys([0, s - 1] + ([-1, -s] if negative else [])))
    for pos, e in zip(rng.permutation(n), edges):
        vals[int(pos)] = e
    return _ints(np.array(vals, dtype=np.int64).reshape(shape))


def _norm_axis(axis: int, rank: int) -> int:
    return axis + rank if axis < 0 else axis


def _wrap(idx, s: int) -> np.ndarray:
    """Python-int indices as non-negative int64 (``i < 0`` counts from the back)."""
    a = np.asarray(idx, dtype=object).astype(np.int64)
    return np.where(a < 0, a + s, a)


def _axis_errors(rank_shape: tuple[int, ...], extra: tuple[tuple[int, ...], ...], what: str = "data",
                 lo_of=lambda r: -r, hi_of=lambda r: r - 1, values=None, since: int = 0) -> tuple[Err, ...]:
    """``axis`` just outside ``[lo, hi]`` for a ``what`` input of shape ``rank_shape`` (the
    other inputs of shapes ``extra``, with ``values`` where given, so that nothing else is
    wrong with the model)."""
    r = len(rank_shape)
    lo, hi = lo_of(r), hi_of(r)
    return tuple(Err(f"axis {a} outside the accepted range [{lo}, {hi}] for a {what} of rank {r}", f"axis={a}",
                     {"axis": a}, (rank_shape,) + extra, since=since, values=values or {})
                 for a in (hi + 1, lo - 1))


# ============================================================================= Gather
def gather(ctx, data, indices, axis):
    """Gather (every version): ``np.take(data, indices, axis)`` with negative indices
    counting from the back ([-s, s-1], the text from 11; version 1's cases hold
    non-negative indices only).  ``data`` exact values of rank >= 1, ``indices`` Python
    ints of any rank q; output of rank q + r - 1."""
    ax = _norm_axis(axis, data.ndim)
    return np.take(data, _wrap(indices, data.shape[ax]), axis=ax)


def _gather_indices(rng, ctx):
    data = ctx.shapes["data"]
    s = data[_norm_axis(ctx.attrs["axis"], len(data))]
    return index_values(rng, ctx.shapes["indices"], s, negative=ctx.version >= 11)


def _gather_shapes() -> tuple[Shape, ...]:
    def sh(name, data, ind, axis=None, **kw):
        return Shape(name, {"data": data, "indices": ind}, {} if axis is None else {"axis": axis}, **kw)

    return (
        sh("r1/q0/axis=0", "A", "", 0),
        sh("r1/q1/axis=-1", "A", "N", -1),
        sh("r1/q2/axis=0", "A", "NM", 0, dims={"A": (3, 6)}),
        sh("r2/q0/axis=1", "AB", "", 1),
        sh("r2/q1/axis=0", "AB", "N", 0),
        sh("r2/q1/axis=1", "AB", "N", 1),
        sh("r2/q2/axis=-1", "AB", "NM", -1),
        sh("r2/q2/axis=-2", "AB", "NM", -2),
        sh("r2/q1/axis=default", "AB", "N"),
        sh("r3/q1/axis=1", "ABC", "N", 1),
        sh("r3/q2/axis=2", "ABC", "NM", 2),
        sh("r3/q0/axis=-3", "ABC", "", -3),
        sh("r3/q3/axis=-2", "ABC", "NMK", -2, dims={"N": (1, 2), "M": (1, 2), "K": (2, 3)}),
        sh("r4/q1/axis=3", "ABCD", "N", 3, dims={c: (1, 3) for c in "ABCDN"}),
        sh("r4/q2/axis=-3", "ABCD", "NM", -3, dims={c: (1, 3) for c in "ABCDNM"}),
        sh("long-axis/r1/q1", "L", "N", 0, dims={"L": (300, 300), "N": (64, 64)}),
        sh("zero-size/indices", "AB", "0", 0),
        sh("zero-size/data", "A0", "N", 0),
        sh("zero-size/axis", "0B", "N0", 0),
    )


GATHER = Entry(
    "Gather", gather, family="shaped", shapes=_gather_shapes(), structural={"indices": _gather_indices},
    signed_zero=True,
    notes={11: "indices may be negative, in [-s, s-1] (version 1: 'within bounds', non-negative here)",
           13: "bfloat16"},
    errors=_axis_errors((3, 4), ((2,),), values={"indices": [0, 1]}) + (
        Err("'It is an error if any of the index values are out of bounds': index 3 on an axis of size 3",
            "index=s", {"axis": 0}, ((3, 2), (2,)), values={"indices": [0, 3]}),
        Err("'It is an error if any of the index values are out of bounds': index -4 outside [-3, 2]",
            "index=-s-1", {"axis": 0}, ((3, 2), (2,)), since=11, values={"indices": [-4, 1]}),
        Err("data must be of rank r >= 1", "data-rank0", {}, ((), ()), values={"indices": 0}),
    ),
)


# ============================================================================= GatherElements
def gather_elements(ctx, data, indices, axis):
    """GatherElements (11, 13): ``out[i][j][k] = data[index[i][j][k]][j][k]`` (axis 0; the
    index replaces the coordinate at ``axis``), negative indices counting from the back.
    ``indices`` has data's rank; its other dimensions may be smaller than data's (the
    positions beyond them are never read).  Output of indices' shape."""
    ax = _norm_axis(axis, data.ndim)
    idx = np.asarray(indices, dtype=object)
    part = data[tuple(slice(None) if d == ax else slice(0, idx.shape[d]) for d in range(data.ndim))]
    return np.take_along_axis(part, _wrap(idx, data.shape[ax]), axis=ax)


def _gather_elements_indices(rng, ctx):
    data = ctx.shapes["data"]
    s = data[_norm_axis(ctx.attrs["axis"], len(data))]
    return index_values(rng, ctx.shapes["indices"], s, negative=True)


#: Dimensions of the data (3-4) and of indices' smaller non-axis dimensions (lowercase, 1-3).
_BIG = {c: (3, 4) for c in "ABCD"} | {c: (1, 3) for c in "abcd"}


def _gather_elements_shapes() -> tuple[Shape, ...]:
    def sh(name, data, ind, axis=None, **kw):
        dims = {**_BIG, **kw.pop("dims", {})}
        return Shape(name, {"data": data, "indices": ind}, {} if axis is None else {"axis": axis}, dims=dims, **kw)

    return (
        sh("r1/axis=0", "A", "N", 0),
        sh("r1/axis=-1", "A", "N", -1, dims={"N": (5, 8)}),
        sh("r2/axis=0/same", "AB", "AB", 0),
        sh("r2/axis=1/smaller", "AB", "aN", 1),
        sh("r2/axis=-1", "AB", "AN", -1),
        sh("r2/axis=-2/smaller", "AB", "Nb", -2),
        sh("r2/axis=default", "AB", "NB"),
        sh("r3/axis=0", "ABC", "NbC", 0),
        sh("r3/axis=1", "ABC", "aNc", 1),
        sh("r3/axis=2/same", "ABC", "ABC", 2),
        sh("r3/axis=-1", "ABC", "abN", -1),
        sh("r3/axis=-3", "ABC", "NBc", -3),
        sh("r4/axis=2", "ABCD", "abNd", 2, dims={c: (2, 3) for c in "ABCD"} | {c: (1, 2) for c in "abcd"}),
        sh("zero-size/indices", "AB", "0B", 0),
        sh("zero-size/data", "A0", "N0", 0),
        sh("zero-size/axis", "0B", "0b", 0),
    )


GATHER_ELEMENTS = Entry(
    "GatherElements", gather_elements, family="shaped", shapes=_gather_elements_shapes(),
    structural={"indices": _gather_elements_indices}, signed_zero=True, notes={13: "bfloat16"},
    errors=_axis_errors((3, 4), ((3, 4),), values={"indices": 0}) + (
        Err("'It is an error if any of the index values are out of bounds': index 3 on an axis of size 3",
            "index=s", {"axis": 0}, ((3, 2), (2, 2)), values={"indices": [[0, 3], [1, 2]]}),
        Err("'It is an error if any of the index values are out of bounds': index -4 outside [-3, 2]",
            "index=-s-1", {"axis": 0}, ((3, 2), (2, 2)), values={"indices": [[0, -4], [1, 2]]}),
        Err("indices must have the same rank r as data", "indices-rank", {"axis": 0}, ((3, 2), (2,)),
            values={"indices": [0, 1]}),
    ),
)


# ============================================================================= GatherND
def _nd_targets(data_shape, idx, b: int):
    """(position in indices' leading dims, target index tuple into data, wrapped) for every
    index tuple of ``idx`` (its last dim k), batch dims ``b`` first: ``data[pos[:b] + t]``."""
    idx = np.asarray(idx, dtype=object)
    for pos in np.ndindex(*idx.shape[:-1]):
        t = tuple(int(v) + (data_shape[b + j] if int(v) < 0 else 0) for j, v in enumerate(idx[pos]))
        yield pos, tuple(pos[:b]) + t


def gather_nd(ctx, data, indices, batch_dims=0):
    """GatherND (11, 12, 13): every index tuple of ``indices`` (its last dim k, values in
    [-s, s-1] of the data dim they index) selects ``data[batch..., tuple, :]``; the first
    ``batch_dims`` dims of data and indices are batch dims (from 12).  Output of shape
    ``indices.shape[:-1] + data.shape[b + k:]`` (rank ``q + r - k - 1 - b``)."""
    b = int(batch_dims)
    idx = np.asarray(indices, dtype=object)
    k = idx.shape[-1]
    out = np.empty(idx.shape[:-1] + data.shape[b + k:], dtype=data.dtype)
    for pos, target in _nd_targets(data.shape, idx, b):
        out[pos] = data[target]
    return out


def _gather_nd_indices(rng, ctx):
    data, shape = ctx.shapes["data"], ctx.shapes["indices"]
    b = int(ctx.attrs.get("batch_dims", 0))
    cols = [index_values(rng, shape[:-1], data[b + j], negative=True) for j in range(shape[-1])]
    out = np.empty(shape, dtype=object)
    for j, col in enumerate(cols):
        out[..., j] = col
    return out


def _gather_nd_shapes() -> tuple[Shape, ...]:
    def sh(name, data, ind, b=None, **kw):
        return Shape(name, {"data": data, "indices": ind}, {} if b is None else {"batch_dims": b}, **kw)

    small = {c: (1, 3) for c in "ABCDNM"}
    return (
        sh("r1/q1/k=1", "A", "1"),
        sh("r1/q2/k=1", "A", "N1", dims={"N": (3, 6)}),
        sh("r2/q2/k=2", "AB", "N2"),
        sh("r2/q2/k=1", "AB", "N1"),
        sh("r2/q1/k=2", "AB", "2"),
        sh("r3/q2/k=2", "ABC", "N2"),
        sh("r3/q3/k=2", "ABC", "NM2"),
        sh("r3/q2/k=3", "ABC", "N3"),
        sh("r3/q3/k=1", "ABC", "NM1"),
        sh("r4/q2/k=2", "ABCD", "N2", dims=small),
        sh("zero-size/indices", "AB", "02"),
        sh("zero-size/data", "A0", "N1"),
        sh("b=1/r2/q2/k=1", "BA", "B1", 1, since=12),
        sh("b=1/r3/q2/k=1", "BAC", "B1", 1, since=12),
        sh("b=1/r3/q3/k=2", "BAC", "BN2", 1, since=12),
        sh("b=1/r3/q3/k=1", "BAC", "BN1", 1, since=12),
        sh("b=2/r4/q3/k=1", "BDAC", "BD1", 2, since=12, dims=small),
        sh("b=2/r4/q4/k=2", "BDAC", "BDN2", 2, since=12, dims=small),
        sh("b=1/zero-size/indices", "BA", "B01", 1, since=12),
    )


GATHER_ND = Entry(
    "GatherND", gather_nd, family="shaped", shapes=_gather_nd_shapes(), structural={"indices": _gather_nd_indices},
    signed_zero=True, notes={12: "batch_dims", 13: "bfloat16"},
    errors=(
        Err("indices_shape[-1] must be at most the rank of data (minus batch_dims)", "k>r", {}, ((3, 4), (1, 3)),
            values={"indices": [[0, 1, 1]]}),
        Err("'It is an error if any of the index values are out of bounds': index 3 on a dim of size 3", "index=s",
            {}, ((3, 2), (2, 1)), values={"indices": [[0], [3]]}),
        Err("'It is an error if any of the index values are out of bounds': index -4 outside [-3, 2]",
            "index=-s-1", {}, ((3, 2), (2, 1)), values={"indices": [[-4], [1]]}),
        Err("indices must be of rank q >= 1", "indices-rank0", {}, ((3, 2), ()), values={"indices": 0}),
        Err("batch_dims b < min(q, r) is to be honored", "batch_dims=rank", {"batch_dims": 2}, ((2, 3), (2, 1)),
            since=12, values={"indices": [[0], [1]]}),
        Err("the first batch_dims dimensions of data and indices must be equal", "batch-mismatch",
            {"batch_dims": 1}, ((2, 3, 4), (3, 1)), since=12, values={"indices": [[0], [1], [2]]}),
    ),
)


ENTRIES: tuple = (GATHER, GATHER_ELEMENTS, GATHER_ND)
register_entries(ENTRIES)
