"""The indexing family as entries of the operator table (family ``shaped``): Gather (1, 11,
13), GatherElements (11, 13), GatherND (11, 12, 13), ScatterElements (11, 13, 16, 18),
ScatterND (11, 13, 16, 18), OneHot (9, 11, 28), NonZero (9, 13), Compress (9, 11, 28),
Unique (11, 28) and the deprecated Scatter (9, 11: ScatterElements without a reduction; every
version-11 model contested, onnx's checker rejecting a deprecated operator).

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

import dataclasses
from builtins import sorted as builtins_sorted
from functools import lru_cache

import numpy as np

from ..opspec import op_spec
from . import values as V
from .engine import register_entries
from .entry import REALS, Attrs, Entry, Err, Shape

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


# ============================================================================= Scatter values
# ScatterElements and ScatterND share how their values are drawn.  The text defines the result
# of duplicate targets only with a reduction (with "none" the winner depends on the unspecified
# iteration order), and with a reduction the iteration order is still unspecified: a value case
# must give the same result in every order at the precision of T.  So each numerics class draws
# the indices and the values together (the classes replace the engine's defaults, and indices
# are not a structural input):
#
# * reduction none: distinct targets (``dup-same``: duplicates whose updates are identical, the
#   one way duplicates are defined without a reduction; with a reduction it is one more
#   duplicates class);
# * add / mul, classes normal / int / complex: duplicates, values whose every partial result is
#   exact in T (multiples of 1/2 up to 4 for add, {0, +-1/2, +-1, +-2} for mul; small integers
#   within the type for int), so every order gives the exact result; classes wide / special /
#   int-extremes: distinct targets (one correctly rounded operation per element, IEEE's special
#   values included);
# * max / min: duplicates with any value but NaN and -0 (the text does not say which of
#   max(NaN, x) or max(-0, +0) it means);
# * bool and string: reduction none only (+ * max min are not defined on them), complex: not
#   max / min (no order) -- the entry's numerics_rule.
#: The classes a scatter type gets beyond the engine's defaults (numerics_types).
_COMPLEX = ("complex64", "complex128")


def _reduction(ctx) -> str:
    return str(ctx.attrs.get("reduction", "none"))


def _has_dups(cls: str, reduction: str) -> bool:
    """Whether class ``cls`` with ``reduction`` draws duplicate targets."""
    if cls == "dup-same":
        return True
    if reduction in ("add", "mul"):
        return cls in ("normal", "int", "complex")
    return reduction in ("max", "min")


def _distinct(rng, n: int, s: int) -> np.ndarray:
    """``n`` distinct targets in [0, s) (``n <= s``)."""
    if n > s:
        raise ValueError(f"{n} distinct targets do not fit an axis of size {s}")
    return rng.permutation(s)[:n]


def _with_dup(rng, n: int, s: int) -> np.ndarray:
    """``n`` targets in [0, s) with at least one duplicate where ``n >= 2``."""
    t = rng.integers(0, s, size=n)
    if n >= 2:
        t[int(rng.integers(1, n))] = t[0]
    return t


def _negate_some(rng, t: np.ndarray, s) -> np.ndarray:
    """About half of the targets written in their negative form ``t - s``."""
    neg = rng.random(size=t.shape) < 0.5
    return np.where(neg, t - s, t)


def _elements_targets(rng, data_shape, ind_shape, axis: int, dups: bool):
    """ScatterElements indices (Python ints of ``ind_shape``) and, per update position, the
    data element it targets."""
    ax = _norm_axis(axis, len(data_shape))
    s = data_shape[ax]
    idx = np.zeros(ind_shape, dtype=np.int64)
    other = [d for d in range(len(ind_shape)) if d != ax]
    for line in np.ndindex(*[ind_shape[d] for d in other]):
        sel = list(line)
        sel.insert(ax, slice(None))
        n = ind_shape[ax]
        t = (_with_dup if dups else _distinct)(rng, n, s) if n else np.zeros(0, dtype=np.int64)
        idx[tuple(sel)] = _negate_some(rng, np.asarray(t, dtype=np.int64), s)
    targets = {}
    for pos in np.ndindex(*ind_shape):
        k = int(idx[pos])
        targets[pos] = pos[:ax] + (k + s if k < 0 else k,) + pos[ax + 1:]
    return _ints(idx), targets


def _nd_targets_drawn(rng, data_shape, ind_shape, dups: bool):
    """ScatterND indices (Python ints of ``ind_shape``, index tuples of length k) and, per
    element of updates, the data element it targets."""
    k = ind_shape[-1]
    lead = ind_shape[:-1]
    cells = int(np.prod(data_shape[:k], dtype=np.int64))
    m = int(np.prod(lead, dtype=np.int64))
    flat = (_with_dup if dups else _distinct)(rng, m, cells) if m else np.zeros(0, dtype=np.int64)
    tup = np.stack(np.unravel_index(np.asarray(flat, dtype=np.int64), data_shape[:k]), axis=-1) if m else \
        np.zeros((0, k), dtype=np.int64)
    tup = _negate_some(rng, tup, np.asarray(data_shape[:k], dtype=np.int64))
    idx = tup.reshape(ind_shape)
    targets = {}
    for pos, target in _nd_targets(data_shape, _ints(idx), 0):
        for sub in np.ndindex(*data_shape[k:]):
            targets[pos + sub] = target + sub
    return _ints(idx), targets


def _groups(targets: dict) -> dict:
    """data element -> the update positions that target it."""
    out: dict = {}
    for pos, t in targets.items():
        out.setdefault(t, []).append(pos)
    return out


def _dyadic(rng, shape, reduction: str) -> np.ndarray:
    """Values whose sums (add) or products (mul) of up to 12 terms are exact in every
    IEEE type: multiples of 1/2 in [-4, 4], or {0, +-1/2, +-1, +-2} (a few zeros signed)."""
    if reduction == "add":
        return rng.integers(-8, 9, size=shape) / 2.0
    return rng.choice(np.array([0.5, -0.5, 1.0, -1.0, 2.0, -2.0, 1.0, 0.0, -0.0]), size=shape)


def _sprinkled(rng, x: np.ndarray, specials: list) -> np.ndarray:
    """``x`` with about a third of its elements replaced by ``specials`` (each at least once
    where the size allows)."""
    x = np.array(x, dtype=object if x.dtype == object else x.dtype, copy=True)
    flat = x.reshape(-1)
    if flat.size == 0 or not specials:
        return x
    k = min(flat.size, max(len(specials), flat.size // 3))
    for i, q in enumerate(rng.permutation(flat.size)[:k]):
        flat[q] = specials[i % len(specials)] if i < len(specials) else specials[int(rng.integers(len(specials)))]
    return x


def _int_fit(data, upd, groups, t: str, reduction: str) -> None:
    """Shrink integer updates (in place) until every partial result of every target is inside
    the type whatever the order: sum of |terms| (add) or product of |terms| (mul) at most the
    type's bound."""
    info = V.iinfo(t)
    bound = min(int(info.max), -int(info.min)) if int(info.min) < 0 else int(info.max)
    for target, poss in groups.items():
        d = int(data[target])
        for pos in poss:
            terms = [abs(d)] + [abs(int(upd[p])) for p in poss]
            worst = sum(terms) if reduction == "add" else int(np.prod([max(a, 1) for a in terms], dtype=object))
            if worst <= bound and (reduction == "add" or abs(d) <= bound):
                break
            upd[pos] = 0 if reduction == "add" else 1
        if reduction == "mul" and abs(d) > bound:  # INT_MIN times -1 overflows: only 0 and 1 then
            for pos in poss:
                if int(upd[pos]) < 0:
                    upd[pos] = 1


def _scatter_class(cls: str, nd: bool):
    """The numerics class ``cls`` of ScatterElements (``nd`` False) or ScatterND: indices,
    data and updates drawn together (the section comment above)."""

    def fn(rng, ctx, shapes):
        t = ctx.types["data"]
        red = _reduction(ctx)
        dshape, ishape, ushape = shapes
        dups = _has_dups(cls, red)
        if nd:
            idx, targets = _nd_targets_drawn(rng, dshape, ishape, dups)
        else:
            idx, targets = _elements_targets(rng, dshape, ishape, int(ctx.attrs["axis"]), dups)
        groups = _groups(targets)
        kind = V.kind(t)
        if kind == V.FLOAT:
            if red in ("add", "mul") and dups:
                data, upd = _dyadic(rng, dshape, red), _dyadic(rng, ushape, red)
            else:
                mode = "wide" if cls == "wide" else "normal"
                data = V.sample_float(rng, dshape, t, REALS, mode)
                upd = V.sample_float(rng, ushape, t, REALS, mode)
                if cls == "special":
                    sp = V.float_specials(t)
                    if red in ("max", "min"):
                        sp = [v for v in sp if not np.isnan(v) and not (v == 0 and np.signbit(v))]
                    data, upd = _sprinkled(rng, data, sp), _sprinkled(rng, upd, sp)
            if red in ("max", "min"):  # no -0 (max(-0, +0) is not defined by the text)
                data, upd = data + 0.0, upd + 0.0
        elif kind == V.INT:
            info = V.iinfo(t)
            if cls == "int-extremes" or red in ("none", "max", "min"):
                data = V.sample_int(rng, dshape, t)
                upd = V.sample_int(rng, ushape, t)
                if cls == "int-extremes":
                    ext = [int(info.min), int(info.max), int(info.min) + 1, int(info.max) - 1, 0]
                    data = _sprinkled(rng, data, ext)
                    if red in ("none", "max", "min"):
                        upd = _sprinkled(rng, upd, ext)
                    else:
                        upd = V.sample_int(rng, ushape, t, (-3, 3), extremes=False)
            else:
                lo = 0 if int(info.min) == 0 else -8
                span = (lo, 8) if red == "add" else (max(lo, -2), 2)
                data = V.sample_int(rng, dshape, t, span, extremes=False)
                upd = V.sample_int(rng, ushape, t, span, extremes=False)
            if red in ("add", "mul"):
                _int_fit(data, upd, groups, t, red)
        elif kind == V.COMPLEX:
            if red in ("add", "mul"):
                def gauss(shape):
                    hi = 2 if red == "add" else 1
                    return rng.integers(-hi, hi + 1, size=shape) + 1j * rng.integers(-hi, hi + 1, size=shape)
                data, upd = gauss(dshape), gauss(ushape)
            else:
                data, upd = V.sample_complex(rng, dshape, t), V.sample_complex(rng, ushape, t)
        elif kind == V.BOOL:
            data, upd = V.sample_bool(rng, dshape), V.sample_bool(rng, ushape)
        else:
            data, upd = V.sample_string(rng, dshape), V.sample_string(rng, ushape)
        if cls == "dup-same":  # duplicates of one target carry the same update
            upd = np.array(upd, copy=True)
            for poss in groups.values():
                for p in poss[1:]:
                    upd[p] = upd[poss[0]]
        return [data, idx, upd]

    fn.__name__ = f"scatter_{cls}"
    return fn


def _combine(reduction: str, a, b):
    """``f(a, b)`` of the text for one element (Python ints, floats, complex, bools, strings)."""
    if reduction == "none":
        return b
    if reduction == "add":
        return a + b
    if reduction == "mul":
        return a * b
    return max(a, b) if reduction == "max" else min(a, b)


def _scatter(data, updates, targets, reduction: str):
    out = np.array(data, copy=True)
    for pos, target in targets:
        out[target] = _combine(reduction, out[target], updates[pos])
    return out


def _scatter_numerics(nd: bool) -> dict:
    names = ("normal", "wide", "special", "int", "int-extremes", "bool", "string", "complex", "dup-same")
    return {n: _scatter_class(n, nd) for n in names}


#: The types each scatter class applies to (the classes of the other kinds are never drawn);
#: identical duplicate updates exercise how a kernel handles duplicates, not a type: float and
#: float16 carry them.
_SCATTER_TYPES = {"int": INT_TYPES, "int-extremes": INT_TYPES, "bool": ("bool",), "string": ("string",),
                  "complex": _COMPLEX, "dup-same": ("float", "float16")}


def _scatter_per_type(version, combo) -> int:
    """Value cases per combination: from 16 (reductions) one per attribute state of the version
    (absent, explicit none, add, mul; max and min from 18) with the classes cycling, on the
    int64-indexed combination (int32 indices get one case per class); bool and string have
    reduction none only (2), complex none / add / mul (4: both none states); before 16 one per
    class."""
    if version < 16 or combo.get("Tind", "int64") != "int64":
        return 0
    t = combo["T"]
    return 2 if t in ("bool", "string") else 4 if t in _COMPLEX or version < 18 else 6


def _scatter_rule(version, numerics, attrs, optional) -> bool:
    """Reductions are defined on numbers: bool and string only with reduction none, complex
    not with max / min."""
    red = attrs.get("reduction", "none")
    if numerics in ("bool", "string"):
        return red == "none"
    if numerics == "complex":
        return red in ("none", "add", "mul")
    return True


def _scatter_attrs():
    return (Attrs({"reduction": "add"}, since=16, tag="reduction=add"),
            Attrs({"reduction": "mul"}, since=16, tag="reduction=mul"),
            Attrs({"reduction": "max"}, since=18, tag="reduction=max"),
            Attrs({"reduction": "min"}, since=18, tag="reduction=min"))


# ============================================================================= ScatterElements
def scatter_elements(ctx, data, indices, updates, axis=0, reduction="none"):
    """ScatterElements (11, 13, 16, 18): a copy of ``data`` where, for every entry of
    ``updates``, the element at the entry's own position with the ``axis`` coordinate
    replaced by the entry of ``indices`` (negative counting from the back) becomes
    ``f(element, update)``: the update (``none``), ``+``, ``*`` (16), ``max``, ``min`` (18).
    Output of data's shape."""
    ax = _norm_axis(axis, data.ndim)
    s = data.shape[ax]
    idx = np.asarray(indices, dtype=object)
    targets = []
    for pos in np.ndindex(*idx.shape):
        k = int(idx[pos])
        targets.append((pos, pos[:ax] + (k + s if k < 0 else k,) + pos[ax + 1:]))
    return _scatter(data, updates, targets, reduction)


def _scatter_elements_shapes() -> tuple[Shape, ...]:
    def sh(name, data, ind, axis=None, **kw):
        dims = {**_BIG, **kw.pop("dims", {})}
        return Shape(name, {"data": data, "indices": ind, "updates": ind}, {} if axis is None else {"axis": axis},
                     dims=dims, **kw)

    return (
        sh("r1/axis=0", "A", "a", 0),
        sh("r1/axis=-1/full", "A", "A", -1),
        sh("r2/axis=0", "AB", "aB", 0),
        sh("r2/axis=1/smaller", "AB", "ab", 1),
        sh("r2/axis=-1/full", "AB", "AB", -1),
        sh("r2/axis=-2", "AB", "aB", -2),
        sh("r2/axis=default", "AB", "aB"),
        sh("r3/axis=1", "ABC", "aBc", 1),
        sh("r3/axis=2", "ABC", "abC", 2),
        sh("r3/axis=-3", "ABC", "abc", -3),
        sh("r4/axis=3", "ABCD", "abcd", 3, dims={c: (2, 3) for c in "ABCD"} | {c: (1, 2) for c in "abcd"}),
        sh("zero-size/indices", "AB", "0B", 0),
        sh("zero-size/data", "A0", "a0", 0),
    )


def _scatter_errors(nd: bool) -> tuple[Err, ...]:
    if nd:
        base = {}
        shapes, good = ((3, 2), (2, 1), (2, 2)), {"indices": [[0], [2]]}
        bad_idx, neg_idx = {"indices": [[0], [3]]}, {"indices": [[-4], [1]]}
    else:
        base = {"axis": 0}
        shapes, good = ((3, 2), (2, 2), (2, 2)), {"indices": [[0, 1], [2, 0]]}
        bad_idx, neg_idx = {"indices": [[0, 1], [3, 0]]}, {"indices": [[0, -4], [2, 0]]}
    out = [
        Err("'It is an error if any of the index values are out of bounds': index 3 on an axis of size 3",
            "index=s", base, shapes, values=bad_idx),
        Err("an index -4 outside [-3, 2] is out of bounds", "index=-s-1", base, shapes, values=neg_idx),
        Err("reduction max arrives at version 18 ('none (default), add, mul' at 16)", "reduction=max@16",
            {**base, "reduction": "max"}, shapes, since=16, until=17, values=good),
        Err("reduction must be one of none, add, mul, max, min", "reduction=sum", {**base, "reduction": "sum"},
            shapes, since=16, values=good),
    ]
    if nd:
        out += [
            Err("indices.shape[-1] must be at most the rank of data", "k>r", {}, ((3, 2), (1, 3), (1,)),
                values={"indices": [[0, 1, 0]]}),
            Err("updates must have shape indices.shape[:-1] + data.shape[k:]", "updates-shape", {},
                ((3, 2), (2, 1), (2, 3)), values=good),
        ]
    else:
        out += _axis_errors((3, 2), ((2, 2), (2, 2)), values=good)
        out += [
            Err("updates must have the same shape as indices", "updates-shape", base, ((3, 2), (2, 2), (2, 1)),
                values=good),
            Err("indices must have the same rank as data", "indices-rank", base, ((3, 2), (2,), (2,)),
                values={"indices": [0, 1]}),
        ]
    return tuple(out)


SCATTER_ELEMENTS = Entry(
    "ScatterElements", scatter_elements, family="shaped", shapes=_scatter_elements_shapes(), signed_zero=True,
    attrs=_scatter_attrs(), float_numerics=_scatter_numerics(False), per_type=_scatter_per_type,
    numerics_types=_SCATTER_TYPES, numerics_rule=_scatter_rule, errors=_scatter_errors(False),
    notes={13: "bfloat16", 16: "reduction none / add / mul", 18: "reduction max / min"},
)


# ============================================================================= Scatter (deprecated)
#: Every Scatter-11 model is contested: the version is deprecated (its text: "Please use
#: ScatterElements, which provides the same functionality") and onnx's checker rejects it.
SCATTER11_CONTESTED = ("Scatter-11 is deprecated in onnx's schema ('Please use ScatterElements, which provides the "
                       "same functionality'): onnx's checker rejects every model using it")


def scatter(ctx, data, indices, updates, axis=0):
    """Scatter (9, 11): ScatterElements without a reduction (:func:`scatter_elements`): the 9 text's
    ``data[indices[i][j]][j] = updates[i][j]`` (axis 0) and 11's "same functionality" as
    ScatterElements.  Negative indices are defined from 11 ("within bounds [-s, s-1]"); version 9's
    text says nothing of them, so its cases draw none.  Output of data's shape."""
    return scatter_elements(ctx, data, indices, updates, axis=axis)


def _scatter_deprecated_class(cls: str):
    """ScatterElements' class ``cls`` (reduction none), its negative indices written as
    ``i + s`` at version 9."""
    base = _scatter_class(cls, False)

    def fn(rng, ctx, shapes):
        data, idx, upd = base(rng, ctx, shapes)
        if ctx.version < 11:
            s = shapes[0][_norm_axis(int(ctx.attrs["axis"]), len(shapes[0]))]
            idx = _ints(_wrap(idx, s), np.shape(idx))
        return [data, idx, upd]

    fn.__name__ = f"scatter9_{cls}"
    return fn


def _scatter_deprecated_errors() -> tuple[Err, ...]:
    """ScatterElements' error cases without the reductions; the out-of-bounds indices only from
    11 (version 9's text says nothing of bounds)."""
    out = []
    for e in _scatter_errors(False):
        if "reduction" in e.attrs:
            continue
        out.append(dataclasses.replace(e, since=11) if e.tag.startswith("index=") else e)
    return tuple(out)


SCATTER = Entry(
    "Scatter", scatter, family="shaped", shapes=_scatter_elements_shapes(), signed_zero=True,
    float_numerics={n: _scatter_deprecated_class(n) for n in ("normal", "wide", "special", "int", "int-extremes",
                                                              "bool", "string", "complex", "dup-same")},
    numerics_types=_SCATTER_TYPES, errors=_scatter_deprecated_errors(),
    contested=lambda ctx, attrs: SCATTER11_CONTESTED if op_spec("Scatter").versions[ctx.version].deprecated else None,
    notes={11: "deprecated (ScatterElements-11); negative indices in [-s, s-1]"},
)


# ============================================================================= ScatterND
def scatter_nd(ctx, data, indices, updates, reduction="none"):
    """ScatterND (11, 13, 16, 18): a copy of ``data`` where every index tuple of ``indices``
    (last dim k <= r, negative counting from the back) selects the slice
    ``data[tuple]`` of shape ``data.shape[k:]``, combined element by element with
    ``updates[position of the tuple]`` by ``f``: the update (``none``), ``+``, ``*`` (16),
    ``max``, ``min`` (18).  Output of data's shape."""
    idx = np.asarray(indices, dtype=object)
    k = idx.shape[-1]
    targets = []
    for pos, target in _nd_targets(data.shape, idx, 0):
        for sub in np.ndindex(*data.shape[k:]):
            targets.append((pos + sub, target + sub))
    return _scatter(data, updates, targets, reduction)


def _scatter_nd_shapes() -> tuple[Shape, ...]:
    def sh(name, data, ind, upd, **kw):
        dims = {**_BIG, **kw.pop("dims", {})}
        return Shape(name, {"data": data, "indices": ind, "updates": upd}, dims=dims, **kw)

    return (
        sh("r1/q1/k=1", "A", "1", ""),
        sh("r1/q2/k=1", "A", "a1", "a"),
        sh("r2/q2/k=1", "AB", "a1", "aB"),
        sh("r2/q2/k=2", "AB", "a2", "a"),
        sh("r2/q1/k=2", "AB", "2", ""),
        sh("r3/q2/k=1", "ABC", "a1", "aBC"),
        sh("r3/q3/k=2", "ABC", "ab2", "abC"),
        sh("r3/q2/k=3", "ABC", "a3", "a"),
        sh("r4/q2/k=2", "ABCD", "a2", "aCD", dims={c: (2, 3) for c in "ABCD"}),
        sh("zero-size/indices", "AB", "01", "0B"),
        sh("zero-size/data", "A0", "a1", "a0"),
    )


SCATTER_ND = Entry(
    "ScatterND", scatter_nd, family="shaped", shapes=_scatter_nd_shapes(), signed_zero=True,
    attrs=_scatter_attrs(), float_numerics=_scatter_numerics(True), per_type=_scatter_per_type,
    numerics_types=_SCATTER_TYPES, numerics_rule=_scatter_rule, errors=_scatter_errors(True),
    notes={13: "bfloat16", 16: "reduction none / add / mul", 18: "reduction max / min"},
)


# ============================================================================= OneHot
def one_hot(ctx, indices, depth, values, axis=-1):
    """OneHot (9, 11, 28): an output of rank q + 1 with a new dimension of size ``depth`` at
    ``axis`` ([-q-1, q]), ``values[1]`` (on) where the new coordinate equals the index and
    ``values[0]`` (off) elsewhere.  Floating indices and depth are cast to int64 (truncation;
    the cases hold integral values); an index outside the range -- ``[0, depth)`` at 9,
    ``[-depth, depth-1]`` from 11, negative ones counting from the back -- gives an all-off
    row (the text)."""
    d = int(np.trunc(np.asarray(depth, dtype=object).ravel()[0]))
    idx = np.asarray(indices, dtype=object)
    idx = np.vectorize(lambda v: int(np.trunc(v)), otypes=[object])(idx) if idx.size else idx
    r = idx.ndim
    ax = axis + r + 1 if axis < 0 else axis
    lo = -d if ctx.version >= 11 else 0
    out = np.empty(idx.shape[:ax] + (d,) + idx.shape[ax:], dtype=np.asarray(values).dtype)
    out[...] = values[0]
    for pos in np.ndindex(*idx.shape):
        k = int(idx[pos])
        if lo <= k < d:
            out[pos[:ax] + (k + d if k < 0 else k,) + pos[ax:]] = values[1]
    return out


def _one_hot_class(cls: str):
    """Class ``cls`` of OneHot: depth in [1, 5] (integral, any T2), indices in range with the
    boundaries (negative ones from 11 where T1 is signed), ``out-of-range`` indices beyond
    both ends (all-off rows), ``int-extremes`` the extremes of T1 (out of range: all-off, also
    uint64's largest, which a cast to int64 would turn into -1; the negative one from 11: the
    indices text of 9 says "The values must be non-negative integers"), ``special`` floating indices
    -0.0 (index 0) and +-2^40 (beyond every depth, inside int64); off/on values of T3 drawn
    for the class (its special values or extremes in ``special``/``wide``/``int-extremes``,
    off = True for bool)."""

    def fn(rng, ctx, shapes):
        ishape, dshape, vshape = shapes
        t1, t2, t3 = ctx.types["indices"], ctx.types["depth"], ctx.types["values"]
        d = int(rng.integers(1, 6))
        signed = V.kind(t1) == V.FLOAT or int(V.iinfo(t1).min) < 0
        neg = ctx.version >= 11 and signed
        idx = np.asarray(index_values(rng, ishape, d, neg), dtype=object)
        flat = idx.reshape(-1)
        hi1 = float(V.finfo(t1).max) if V.kind(t1) == V.FLOAT else int(V.iinfo(t1).max)
        if cls == "out-of-range" and flat.size:
            beyond = [d, d + 1, int(min(hi1, d + 7)), int(min(hi1, 100))]
            if neg:
                beyond += [-d - 1, -d - 3]
            for i, q in enumerate(rng.permutation(flat.size)[:max(len(beyond), flat.size // 2)]):
                flat[q] = beyond[i % len(beyond)]
        if cls == "int-extremes" and flat.size:
            info = V.iinfo(t1)
            # version 9: "The values must be non-negative integers"
            ext = [int(info.max), int(info.min)] if int(info.min) < 0 and ctx.version >= 11 else [int(info.max)]
            for i, q in enumerate(rng.permutation(flat.size)[:len(ext)]):
                flat[q] = ext[i]
        if V.kind(t1) == V.FLOAT:
            idx = idx.astype(np.float64)
            if cls == "special" and idx.size:
                sp = [-0.0, 2.0 ** 40] + ([-(2.0 ** 40)] if neg else [])
                if t1 == "float16":
                    sp = [-0.0, 65504.0] + ([-65504.0] if neg else [])
                f = idx.reshape(-1)
                for i, q in enumerate(rng.permutation(f.size)[:len(sp)]):
                    f[q] = sp[i]
        depth = np.full(dshape, float(d) if V.kind(t2) == V.FLOAT else d, dtype=np.float64 if V.kind(t2) == V.FLOAT
                        else object)
        k3 = V.kind(t3)
        if k3 == V.FLOAT:
            if cls in ("special", "int-extremes", "wide") and t3 in V.IEEE:
                sp = V.float_specials(t3)
                vals = np.array([sp[int(rng.integers(len(sp)))] for _ in range(2)])
            else:
                vals = V.sample_float(rng, vshape, t3, REALS, "normal")
        elif k3 == V.INT:
            info = V.iinfo(t3)
            vals = _ints([int(info.min), int(info.max)]) if cls in ("special", "int-extremes", "wide") else \
                V.sample_int(rng, vshape, t3, extremes=False)
        elif k3 == V.BOOL:
            vals = np.array([True, False]) if cls != "normal" and cls != "int" else np.array([False, True])
        elif k3 == V.STRING:
            vals = V.sample_string(rng, vshape)
        else:
            vals = V.sample_complex(rng, vshape, t3)
        return [idx, depth, np.asarray(vals).reshape(vshape)]

    fn.__name__ = f"one_hot_{cls}"
    return fn


#: onnxruntime 1.32's registered OneHot kernels as (T1, T2, T3) (onehot.cc: REG_ONE_HOT_OP(in,
#: out, depth)): always among the generated combinations.
ORT_ONE_HOT = (("int64", "int64", "int64"), ("float", "int64", "int64"), ("int64", "int64", "string"),
               ("float", "int64", "string"), ("int64", "int64", "float"), ("int32", "int32", "float"),
               ("int32", "float", "float"), ("float", "float", "float"), ("int64", "float", "int32"),
               ("int64", "float", "float"), ("int64", "int32", "float"))


@lru_cache(maxsize=None)
def _one_hot_kept(version: int) -> frozenset:
    """The (T1, T2, T3) combinations OneHot-``version``'s cases build: every T3 with T1 and T2
    cycling through their types (each type of each parameter at least once) and
    :data:`ORT_ONE_HOT`."""
    from ..opspec import op_spec

    tc = op_spec("OneHot").versions[version].type_constraints
    t1, t2, t3 = ([t[7:-1] for t in tc[p]] for p in ("T1", "T2", "T3"))
    kept = {(t1[i % len(t1)], t2[(4 * i + 3) % len(t2)], t) for i, t in enumerate(t3)}
    return frozenset(kept | set(ORT_ONE_HOT))


def _one_hot_filter(version, combo):
    if (combo["T1"], combo["T2"], combo["T3"]) in _one_hot_kept(version):
        return None
    return ("T1 (indices), T2 (depth) and T3 (values) are independent in the text (indices and depth are read as "
            "integers, cast to int64 when floating; values are only copied): the suite builds a covering set -- "
            "every type of each parameter, with onnxruntime's registered triples -- not the product of "
            f"{len(_one_hot_kept(version))} of the combinations")


def _one_hot_shapes() -> tuple[Shape, ...]:
    def sh(name, ind, axis=None, depth="", **kw):
        return Shape(name, {"indices": ind, "depth": depth, "values": "2"}, {} if axis is None else {"axis": axis},
                     **kw)

    return (
        sh("q0/axis=default", ""),
        sh("q0/axis=0", "", 0),
        sh("q1/axis=default", "N", dims={"N": (3, 8)}),
        sh("q1/axis=0", "N", 0),
        sh("q1/axis=-2", "N", -2, since=11),
        sh("q2/axis=1", "NM", 1),
        sh("q2/axis=2", "NM", 2),
        sh("q2/axis=-1", "NM", -1),
        sh("q2/axis=-3", "NM", -3, since=11),
        sh("q3/axis=-2", "NMK", -2, since=11, dims={c: (1, 3) for c in "NMK"}),
        sh("q1/depth-rank1", "N", -1, depth="1"),
        sh("zero-size", "N0", 1),
    )


#: Case.contested of OneHot with rank-0 indices.
ONE_HOT_SCALAR_CONTESTED = ("the text sets no minimum rank for indices (rank(output) = rank(indices) + 1), but "
                            "OneHot's shape inference in onnx fails with 'Indices tensor must have rank >= 1', so "
                            "onnx's checker rejects the model")


def _one_hot_contested(ctx, attrs):
    return ONE_HOT_SCALAR_CONTESTED if ctx.shapes.get("indices") == () else None


ONE_HOT = Entry(
    "OneHot", one_hot, family="shaped", shapes=_one_hot_shapes(), signed_zero=True, type_filter=_one_hot_filter,
    contested=_one_hot_contested,
    float_numerics={n: _one_hot_class(n) for n in ("normal", "wide", "special", "out-of-range", "int", "int-extremes")},
    numerics_types={"int": INT_TYPES, "int-extremes": INT_TYPES},
    int_numerics={"out-of-range": _one_hot_class("out-of-range")},
    notes={11: "negative indices in [-depth, depth-1]; negative axis in [-r-1, r]", 28: "bfloat16 values"},
    errors=(
        Err("axis 2 outside the accepted range [-2, 1] for indices of rank 1", "axis=2", {"axis": 2},
            ((3,), (), (2,)), values={"indices": [0, 1, 2], "depth": 3}),
        Err("axis -3 outside the accepted range [-2, 1] for indices of rank 1", "axis=-3", {"axis": -3},
            ((3,), (), (2,)), since=11, values={"indices": [0, 1, 2], "depth": 3}),
        Err("values must be a rank-1 tensor of exactly two elements [off_value, on_value]", "values-3",
            {}, ((3,), (), (3,)), values={"indices": [0, 1, 2], "depth": 3}),
        Err("depth must be a scalar or a rank-1 tensor of exactly one element", "depth-2", {},
            ((3,), (2,), (2,)), values={"indices": [0, 1, 2], "depth": [3, 3]}),
    ),
)


# ============================================================================= NonZero
def non_zero(ctx, x):
    """NonZero (9, 13): the indices of the non-zero elements in row-major order, one row per
    dimension, shape (r, n) -- (0, n) for a scalar (the text, unlike numpy).  Non-zero as
    numpy.nonzero, which the text refers to: NaN and subnormals are non-zero, +-0 are zero, an
    empty string is zero, a complex number is zero when both parts are."""
    x = np.asarray(x)
    flat = x.reshape(-1)
    nz = np.array([bool(v != 0) if not isinstance(v, str) else v != "" for v in flat.tolist()], dtype=bool) \
        if flat.size else np.zeros(0, dtype=bool)
    if x.ndim == 0:
        return _ints(np.zeros((0, int(nz.sum())), dtype=np.int64))
    pos = np.nonzero(nz.reshape(x.shape))
    return _ints(np.array(pos, dtype=np.int64).reshape(x.ndim, -1))


def _sparse(rng, ctx, shapes, fraction=0.5):
    """The input drawn for its kind with about ``fraction`` of its elements zero (+0 and -0
    for floats, "" for strings, 0j and numbers with one zero part for complex)."""
    t = ctx.types["X"]
    shape = shapes[0]
    k = V.kind(t)
    if k == V.FLOAT:
        x = V.sample_float(rng, shape, t, REALS, "normal")
        zeros = [0.0, -0.0]
    elif k == V.INT:
        x = V.sample_int(rng, shape, t)
        zeros = [0]
    elif k == V.STRING:
        x = V.sample_string(rng, shape)
        zeros = [""]
    else:
        x = V.sample_complex(rng, shape, t)
        x = x.reshape(-1)
        if x.size >= 2:  # one part zero, the other not: non-zero
            x[0], x[1] = 1j * abs(x[0].imag) + 1j, x[1].real + 0j
        x = x.reshape(shape)
        zeros = [0j]
    x = np.array(x, copy=True)
    flat = x.reshape(-1)
    for q in np.flatnonzero(rng.random(size=flat.size) < fraction):
        flat[q] = zeros[int(rng.integers(len(zeros)))]
    return [x]


def _all_zero(rng, ctx, shapes):
    return _sparse(rng, ctx, shapes, fraction=1.0)


def _special_sparse(rng, ctx, shapes):
    """A sparse input with NaN, +-inf, +-0 and the smallest subnormal at random positions (NaN
    and subnormals are non-zero, -0.0 is zero)."""
    x = _sparse(rng, ctx, shapes)[0]
    fi = V.finfo(ctx.types["X"])
    sp = [np.nan, -0.0, float(fi.smallest_subnormal), np.inf, -np.inf, 0.0, -float(fi.smallest_subnormal)]
    flat = x.reshape(-1)
    for i, q in enumerate(rng.permutation(flat.size)[:len(sp)]):
        flat[q] = sp[i]
    return [x]


def _non_zero_shapes() -> tuple[Shape, ...]:
    def sh(name, x, **kw):
        return Shape(name, {"X": x}, **kw)

    return (
        sh("rank0", ""),
        sh("rank1", "N", dims={"N": (1, 12)}),
        sh("rank2", "NM"),
        sh("rank3", "NMK"),
        sh("rank4", "NMKL", dims={c: (1, 3) for c in "NMKL"}),
        sh("zero-size", "N0", numerics=_EMPTY_CLASSES),
        sh("zero-size/rank1", "0", numerics=_EMPTY_CLASSES),
    )


#: The classes an empty input is worth (one per kind: the values do not matter).
_EMPTY_CLASSES = ("normal", "int", "bool", "string", "complex")


NON_ZERO = Entry(
    "NonZero", non_zero, family="shaped", shapes=_non_zero_shapes(), per_type=3,
    float_numerics={"normal": _sparse, "special": _special_sparse, "all-zero": _all_zero, "complex": _sparse},
    int_numerics={"int": _sparse, "all-zero": _all_zero}, string_numerics={"string": _sparse, "all-zero": _all_zero},
    numerics_types={"complex": _COMPLEX},
    notes={13: "bfloat16"},
)


# ============================================================================= Compress
def compress(ctx, input, condition, axis=None):
    """Compress (9, 11, 28): the slices along ``axis`` (the elements of the flattened input
    when ``axis`` is absent) whose condition entry is true; a condition shorter than the axis
    discards the slices beyond it (the text; numpy.compress).  Output of rank r (axis given)
    or 1."""
    cond = np.asarray(condition, dtype=bool).reshape(-1)
    if axis is None:
        return np.compress(cond, np.asarray(input).reshape(-1))
    return np.compress(cond, input, axis=_norm_axis(axis, np.ndim(input)))


def _compress_condition(rng, ctx):
    """Random booleans with at least one true and one false entry where the length allows."""
    (n,) = ctx.shapes["condition"]
    c = rng.random(size=n) < 0.5
    if n >= 2:
        first, second = rng.permutation(n)[:2]
        c[first], c[second] = True, False
    return c


def _compress_shapes() -> tuple[Shape, ...]:
    def sh(name, x, cond, axis=None, **kw):
        dims = {**{c: (3, 4) for c in "ABC"}, "n": (1, 2), **kw.pop("dims", {})}
        return Shape(name, {"input": x, "condition": cond}, {} if axis is None else {"axis": axis}, dims=dims, **kw)

    return (
        sh("flat/r1/full", "A", "A"),
        sh("flat/r1/shorter", "A", "n"),
        sh("flat/r2/full", "23", "6"),
        sh("flat/r2/shorter", "AB", "n", dims={"n": (2, 5)}),
        sh("flat/r3/shorter", "ABC", "n", dims={"n": (5, 9)}),
        sh("axis=0/r1", "A", "A", 0),
        sh("axis=0/r2", "AB", "A", 0),
        sh("axis=1/r2/shorter", "AB", "n", 1),
        sh("axis=-1/r2", "AB", "B", -1, since=11),
        sh("axis=-2/r2/shorter", "AB", "n", -2, since=11),
        sh("axis=1/r3", "ABC", "B", 1),
        sh("axis=2/r3/shorter", "ABC", "n", 2),
        sh("axis=-3/r3", "ABC", "A", -3, since=11),
        sh("axis=1/r4", "2ABC", "A", 1, dims={c: (2, 3) for c in "ABC"}),
        sh("all-false/axis=0", "3B", "3", 0, values={"condition": [False, False, False]}),
        sh("all-true/flat", "A2", "4", values={"condition": [True, True, True, True]}),
        sh("zero-size/condition", "AB", "0", 1),
        sh("zero-size/condition/flat", "AB", "0"),
        sh("zero-size/input", "A0", "A", 0),
        sh("zero-size/input/flat", "0B", "0"),
    )


COMPRESS = Entry(
    "Compress", compress, family="shaped", shapes=_compress_shapes(), structural={"condition": _compress_condition},
    signed_zero=True, notes={11: "negative axis in [-r, r-1]", 28: "bfloat16"},
    errors=_axis_errors((3, 2), ((2,),), what="input", values={"condition": [True, False]}) + (
        Err("condition must be a rank-1 tensor of booleans", "condition-rank2", {"axis": 0}, ((3, 2), (3, 1)),
            values={"condition": [[True], [False], [True]]}),
        Err("input must be of rank r >= 1", "input-rank0", {}, ((), (1,)), values={"condition": [True]}),
    ),
)


# ============================================================================= Unique
def _key(v):
    """A hashable, comparable key of one exact element (``-0.0`` and ``+0.0`` are one key, as
    they compare equal)."""
    return v + 0.0 if isinstance(v, float) else v


def unique(ctx, X, axis=None, sorted=1):
    """Unique (11, 28): the distinct elements of the flattened input (``axis`` absent) or the
    distinct subtensors along ``axis``, in ascending order (``sorted=1``; subtensors compared
    lexicographically in row-major order, as numpy.unique, which the text cites, and its
    example 4) or in the order of first occurrence (``sorted=0``); ``indices`` the first
    occurrence of each in X, ``inverse_indices`` for each element (subtensor) of X its
    position in Y, ``counts`` the occurrences.  The cases hold no NaN (its equality is not
    specified) and no -0.0 (which of -0.0 and +0.0 would represent the pair is not), and
    complex inputs only with ``sorted=0`` (complex numbers have no ascending order)."""
    x = np.asarray(X)
    if axis is None:
        items = list(x.reshape(-1))
        keys = [_key(v) for v in x.reshape(-1).tolist()]
    else:
        ax = _norm_axis(axis, x.ndim)
        moved = np.moveaxis(x, ax, 0)
        items = [moved[i] for i in range(moved.shape[0])]
        keys = [tuple(_key(v) for v in np.asarray(it).reshape(-1).tolist()) for it in items]
    first: dict = {}
    count: dict = {}
    order: list = []
    for i, k in enumerate(keys):
        if k not in first:
            first[k] = i
            order.append(k)
        count[k] = count.get(k, 0) + 1
    if sorted:
        order = builtins_sorted(order)
    pos = {k: j for j, k in enumerate(order)}
    if axis is None:
        y = np.array([items[first[k]] for k in order], dtype=x.dtype).reshape(len(order))
    else:
        rest = x.shape[:ax] + x.shape[ax + 1:]
        stacked = np.array([items[first[k]] for k in order], dtype=x.dtype).reshape((len(order),) + rest)
        y = np.moveaxis(stacked, 0, ax)
    return (y, _ints(np.array([first[k] for k in order], dtype=np.int64)),
            _ints(np.array([pos[k] for k in keys], dtype=np.int64)),
            _ints(np.array([count[k] for k in order], dtype=np.int64)))


def _pool_values(rng, t: str, cls: str, n: int) -> np.ndarray:
    """``n`` distinct-ish values of type ``t`` for class ``cls`` (the pool duplicates are drawn
    from): no NaN, no -0.0."""
    k = V.kind(t)
    if k == V.FLOAT:
        if cls == "special":
            vals = [v for v in V.float_specials(t, nan=False) if not (v == 0 and np.signbit(v))]
            out = np.array([vals[int(i)] for i in rng.integers(0, len(vals), size=n)])
        else:
            out = V.sample_float(rng, (n,), t, REALS, "wide" if cls == "wide" else "normal")
        return out + 0.0
    if k == V.INT:
        if cls == "int-extremes":
            info = V.iinfo(t)
            vals = sorted({int(info.min), int(info.min) + 1, int(info.max), int(info.max) - 1, 0})
            return _ints([vals[int(i)] for i in rng.integers(0, len(vals), size=n)], (n,))
        return V.sample_int(rng, (n,), t)
    if k == V.BOOL:
        return V.sample_bool(rng, (n,))
    if k == V.STRING:
        return V.sample_string(rng, (n,))
    return V.sample_complex(rng, (n,), t)


def _unique_class(cls: str):
    """Class ``cls`` of Unique: elements (or subtensors along ``axis``) drawn from a small pool
    of the class's values, so that most repeat (at least one duplicate where the size allows),
    subtensors of the pool sharing leading elements (lexicographic ties broken later)."""

    def fn(rng, ctx, shapes):
        t = ctx.types["X"]
        shape = shapes[0]
        axis = ctx.attrs.get("axis")
        if axis is None:
            n = int(np.prod(shape, dtype=np.int64))
            pool = _pool_values(rng, t, cls, max(1, (n + 1) // 2))
            pick = rng.integers(0, len(pool), size=n)
            if n >= 2:
                pick[int(rng.integers(1, n))] = pick[0]
            return [pool[pick].reshape(shape)]
        ax = _norm_axis(axis, len(shape))
        n = shape[ax]
        rest = shape[:ax] + shape[ax + 1:]
        m = int(np.prod(rest, dtype=np.int64))
        elems = _pool_values(rng, t, cls, 3)
        subs = [elems[rng.integers(0, len(elems), size=m)] for _ in range(max(1, (n + 1) // 2))]
        pick = rng.integers(0, len(subs), size=n)
        if n >= 2:
            pick[int(rng.integers(1, n))] = pick[0]
        stacked = np.array([subs[i] for i in pick], dtype=elems.dtype).reshape((n,) + rest)
        return [np.moveaxis(stacked, 0, ax)]

    fn.__name__ = f"unique_{cls}"
    return fn


def _unique_shapes() -> tuple[Shape, ...]:
    def sh(name, x, axis=None, **kw):
        return Shape(name, {"X": x}, {} if axis is None else {"axis": axis}, **kw)

    return (
        sh("flat/r0", ""),
        sh("flat/r1", "N", dims={"N": (4, 12)}),
        sh("flat/r2", "NM"),
        sh("flat/r3", "NMK"),
        sh("flat/zero-size", "N0"),
        sh("r1/axis=0", "N", 0, dims={"N": (4, 12)}),
        sh("r2/axis=0", "NM", 0, dims={"N": (3, 6), "M": (1, 3)}),
        sh("r2/axis=1", "NM", 1, dims={"N": (1, 3), "M": (3, 6)}),
        sh("r2/axis=-1", "NM", -1, dims={"N": (1, 3), "M": (3, 6)}),
        sh("r2/axis=-2", "NM", -2, dims={"N": (3, 6), "M": (1, 3)}),
        sh("r3/axis=1", "NMK", 1, dims={"N": (1, 2), "M": (3, 6), "K": (1, 2)}),
        sh("r3/axis=-1", "NMK", -1, dims={"N": (1, 2), "M": (1, 2), "K": (3, 6)}),
        sh("r4/axis=2", "NMKL", 2, dims={"N": (1, 2), "M": (1, 2), "K": (3, 5), "L": (1, 2)}),
        sh("zero-size/axis=0", "0M", 0),
    )


def _unique_rule(version, numerics, attrs, optional) -> bool:
    """Complex numbers have no ascending order: complex inputs only with sorted=0."""
    return numerics != "complex" or attrs.get("sorted", 1) == 0


UNIQUE = Entry(
    "Unique", unique, family="shaped", shapes=_unique_shapes(), signed_zero=True,
    attrs=(Attrs({"sorted": 0}, tag="sorted=0"),),
    float_numerics={n: _unique_class(n) for n in ("normal", "wide", "special", "complex")},
    int_numerics={n: _unique_class(n) for n in ("int", "int-extremes")},
    string_numerics={"string": _unique_class("string")},
    numerics_types={"complex": _COMPLEX}, numerics_rule=_unique_rule, per_type=3,
    notes={28: "bfloat16"},
    errors=_axis_errors((3, 2), (), what="X", values={"X": [[1.0, 2.0], [1.0, 2.0], [0.0, 1.0]]}) + (
        Err("sorted 'Must be one of 0, or 1'", "sorted=2", {"sorted": 2}, ((4,),), values={"X": [1.0, 2.0, 1.0, 3.0]}),
    ),
)


ENTRIES: tuple = (GATHER, GATHER_ELEMENTS, GATHER_ND, SCATTER_ELEMENTS, SCATTER_ND, ONE_HOT, NON_ZERO, COMPRESS,
                  UNIQUE, SCATTER)
register_entries(ENTRIES, family="indexing")
