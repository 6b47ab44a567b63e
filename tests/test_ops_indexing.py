"""Tests of the indexing entries (``conformance/ops/indexing.py``): Gather, GatherElements,
GatherND, ScatterElements, ScatterND, OneHot, NonZero, Compress, Unique.

* the oracles against the operator texts' worked examples and against Python loops written
  here from the texts' equations (no numpy indexing helpers);
* agreement with ``onnx.reference`` on every generated case, each disagreement listed with
  who is right;
* kernels through ``KernelBackend``: legitimate ones (Python loops over the output or the
  updates, in another iteration order) pass every case; each deliberately wrong one (a
  negative index not wrapped, Gather on the wrong axis, ...) fails at least one case of a
  filter that is asserted to match;
* coverage: every version x type combination has value cases, the traps the operators need
  (negative indices only where the text allows them, rank-0 indices, zero-size) are present.
"""

from __future__ import annotations

from collections import Counter

import numpy as np
import pytest

from conformance.backends import resolve_backend
from conformance.backends.kernel import KernelBackend
from conformance.coverage import compute_coverage
from conformance.opspec import op_spec, type_combinations
from conformance.ops import indexing as ix
from conformance.ops.entry import Ctx
from conformance.runner import run_cases
from oracle_checks import sort_findings  # tests/oracle_checks.py

pytestmark = pytest.mark.filterwarnings("ignore::RuntimeWarning")
OPS = ("Gather", "GatherElements", "GatherND", "ScatterElements", "ScatterND", "OneHot", "NonZero", "Compress",
       "Unique")
E = {e.op: e for e in ix.ENTRIES}


def _ctx(op, version, attrs=None, types=None, shapes=None):
    return Ctx(op, version, version, types or {}, {}, attrs or {}, (), shapes or {})


def _obj(vals):
    """Python-int object array (the exact form of integer inputs)."""
    a = np.asarray(vals)
    out = np.empty(a.shape, dtype=object)
    out.ravel()[:] = [int(v) for v in a.ravel()]
    return out


def _values(cases, op):
    out = [c for c in cases if c.op == op and c.expect_error is None]
    assert out, op
    return out


def _input(c, name):
    """The value of input ``name`` fed to a case (graph input or initializer)."""
    ds = c.datasets[0]
    if name in ds.inputs:
        return ds.inputs[name]
    return next(i.value for i in c.inputs if i.name == name)


def _index_array(c):
    """The ``indices`` fed to a case."""
    return _input(c, "indices")


# ============================================================================ Gather: oracle
def test_gather_oracle_reproduces_the_text_examples():
    g = E["Gather"].oracle
    data = np.array([[1.0, 1.2], [2.3, 3.4], [4.5, 5.7]])
    out = g(_ctx("Gather", 13), data, _obj([[0, 1], [1, 2]]), axis=0)
    assert out.tolist() == [[[1.0, 1.2], [2.3, 3.4]], [[2.3, 3.4], [4.5, 5.7]]]
    data = np.array([[1.0, 1.2, 1.9], [2.3, 3.4, 3.9], [4.5, 5.7, 5.9]])
    out = g(_ctx("Gather", 13), data, _obj([[0, 2]]), axis=1)
    assert out.tolist() == [[[1.0, 1.9]], [[2.3, 3.9]], [[4.5, 5.9]]]
    # the table of Gather-13: a scalar index removes the axis
    x = np.arange(24.0).reshape(2, 3, 4)
    assert g(_ctx("Gather", 13), x, _obj(2), axis=1).tolist() == x[:, 2, :].tolist()
    # negative indices count from the back ([-s, s-1], text from 11)
    assert g(_ctx("Gather", 11), x, _obj([-1, -3]), axis=1).tolist() == x[:, [2, 0], :].tolist()


def _gather_loop(data, idx, axis):
    """output[j_0.., i_0.., j_axis..] = data[j_0.., k, j_axis..], k = idx[i] (wrapped): the text."""
    axis = axis % data.ndim
    s = data.shape[axis]
    shape = data.shape[:axis] + idx.shape + data.shape[axis + 1:]
    out = np.empty(shape, dtype=data.dtype)
    q = idx.ndim
    for o in np.ndindex(*shape):
        k = int(idx[o[axis:axis + q]])
        if not -s <= k < s:
            raise IndexError(f"index {k} out of bounds for an axis of size {s}")
        out[o] = data[o[:axis] + (k + s if k < 0 else k,) + o[axis + q:]]
    return out


@pytest.mark.parametrize("seed", range(4))
def test_gather_oracle_matches_the_text_equation(seed):
    rng = np.random.default_rng(seed)
    for r in range(1, 5):
        shape = tuple(int(d) for d in rng.integers(1, 4, size=r))
        x = rng.normal(size=shape)
        for axis in range(-r, r):
            s = shape[axis]
            idx = rng.integers(-s, s, size=tuple(int(d) for d in rng.integers(0, 3, size=int(rng.integers(0, 3)))))
            got = E["Gather"].oracle(_ctx("Gather", 13), x, _obj(idx), axis=axis)
            assert np.array_equal(got, _gather_loop(x, idx, axis))


def test_index_values_are_in_range_with_boundaries():
    rng = np.random.default_rng(0)
    v = ix.index_values(rng, (40,), 5, negative=True).astype(np.int64)
    assert v.min() == -5 and v.max() == 4 and {0, 4, -1, -5} <= set(v.tolist())
    v = ix.index_values(rng, (40,), 5, negative=False).astype(np.int64)
    assert v.min() == 0 and v.max() == 4
    assert ix.index_values(rng, (0, 3), 0, negative=True).shape == (0, 3)
    with pytest.raises(ValueError):
        ix.index_values(rng, (2,), 0, negative=True)


# ============================================================================ GatherElements: oracle
def test_gather_elements_oracle_reproduces_the_text_examples():
    g = E["GatherElements"].oracle
    out = g(_ctx("GatherElements", 13), _obj([[1, 2], [3, 4]]), _obj([[0, 0], [1, 0]]), axis=1)
    assert out.tolist() == [[1, 1], [4, 3]]
    data = _obj([[1, 2, 3], [4, 5, 6], [7, 8, 9]])
    out = g(_ctx("GatherElements", 13), data, _obj([[1, 2, 0], [2, 0, 0]]), axis=0)
    assert out.tolist() == [[4, 8, 3], [7, 2, 3]]
    # negative indices and a smaller non-axis dimension (indices (1, 2) into data (3, 3) along axis 1)
    out = g(_ctx("GatherElements", 13), data, _obj([[-1, -3]]), axis=-1)
    assert out.tolist() == [[3, 1]]


def _gather_elements_loop(data, idx, axis):
    """out[i][j][k] = data[i][j][index[i][j][k]] (axis 2) and so on: the text's equations."""
    axis = axis % data.ndim
    s = data.shape[axis]
    out = np.empty(idx.shape, dtype=data.dtype)
    for o in np.ndindex(*idx.shape):
        k = int(idx[o])
        if not -s <= k < s:
            raise IndexError(f"index {k} out of bounds for an axis of size {s}")
        out[o] = data[o[:axis] + (k + s if k < 0 else k,) + o[axis + 1:]]
    return out


@pytest.mark.parametrize("seed", range(3))
def test_gather_elements_oracle_matches_the_text_equation(seed):
    rng = np.random.default_rng(seed)
    for r in range(1, 5):
        shape = tuple(int(d) for d in rng.integers(2, 4, size=r))
        x = rng.normal(size=shape)
        for axis in range(-r, r):
            ishape = tuple(int(rng.integers(1, d + 1)) if i != axis % r else int(rng.integers(0, 5))
                           for i, d in enumerate(shape))
            idx = rng.integers(-shape[axis], shape[axis], size=ishape)
            got = E["GatherElements"].oracle(_ctx("GatherElements", 13), x, _obj(idx), axis=axis)
            assert np.array_equal(got, _gather_elements_loop(x, idx, axis))


# ============================================================================ GatherND: oracle
@pytest.mark.parametrize("data,indices,b,want", [
    ([[0, 1], [2, 3]], [[0, 0], [1, 1]], 0, [0, 3]),
    ([[0, 1], [2, 3]], [[1], [0]], 0, [[2, 3], [0, 1]]),
    ([[[0, 1], [2, 3]], [[4, 5], [6, 7]]], [[0, 1], [1, 0]], 0, [[2, 3], [4, 5]]),
    ([[[0, 1], [2, 3]], [[4, 5], [6, 7]]], [[[0, 1]], [[1, 0]]], 0, [[[2, 3]], [[4, 5]]]),
    ([[[0, 1], [2, 3]], [[4, 5], [6, 7]]], [[1], [0]], 1, [[2, 3], [4, 5]]),
])
def test_gather_nd_oracle_reproduces_the_text_examples(data, indices, b, want):
    got = E["GatherND"].oracle(_ctx("GatherND", 13), _obj(data), _obj(indices), batch_dims=b)
    assert got.tolist() == want


def _gather_nd_fancy(data, idx, b):
    """numpy advanced indexing per batch (an implementation independent of the oracle's loop)."""
    idx = np.asarray(idx, dtype=np.int64)
    k = idx.shape[-1]
    for j in range(k):
        if ((idx[..., j] < -data.shape[b + j]) | (idx[..., j] >= data.shape[b + j])).any():
            raise IndexError("index out of bounds")
    if b and idx.shape[:b] != data.shape[:b]:
        raise ValueError("batch dims differ")
    nb = int(np.prod(data.shape[:b], dtype=np.int64))
    d = data.reshape((nb,) + data.shape[b:])
    i = idx.reshape((nb, -1, k))
    out = np.stack([d[n][tuple(i[n, :, j] for j in range(k))] for n in range(nb)]) if nb else \
        np.empty((0, i.shape[1]) + data.shape[b + k:], dtype=data.dtype)
    return out.reshape(idx.shape[:-1] + data.shape[b + k:])


@pytest.mark.parametrize("seed", range(3))
def test_gather_nd_oracle_matches_fancy_indexing(seed):
    rng = np.random.default_rng(seed)
    for r in range(1, 5):
        for b in range(0, r):
            shape = tuple(int(d) for d in rng.integers(1, 4, size=r))
            x = rng.normal(size=shape)
            for k in range(1, r - b + 1):
                lead = shape[:b] + tuple(int(d) for d in rng.integers(0, 3, size=int(rng.integers(0, 2))))
                idx = np.stack([rng.integers(-shape[b + j], shape[b + j], size=lead) for j in range(k)], axis=-1)
                got = E["GatherND"].oracle(_ctx("GatherND", 13), x, _obj(idx), batch_dims=b)
                assert np.array_equal(got, _gather_nd_fancy(x, idx, b))


# ============================================================================ Scatter*: oracles
def test_scatter_elements_oracle_reproduces_the_text_examples():
    f = E["ScatterElements"].oracle
    out = f(_ctx("ScatterElements", 18), np.zeros((3, 3)), _obj([[1, 0, 2], [0, 2, 1]]),
            np.array([[1.0, 1.1, 1.2], [2.0, 2.1, 2.2]]), axis=0, reduction="none")
    assert out.tolist() == [[2.0, 1.1, 0.0], [1.0, 0.0, 2.2], [0.0, 2.1, 1.2]]
    out = f(_ctx("ScatterElements", 18), np.array([[1.0, 2.0, 3.0, 4.0, 5.0]]), _obj([[1, 3]]),
            np.array([[1.1, 2.1]]), axis=1, reduction="none")
    assert out.tolist() == [[1.0, 1.1, 3.0, 2.1, 5.0]]
    # duplicates with each reduction: output[i][indices[i][j]] = f(output[i][indices[i][j]], updates[i][j])
    data, idx, upd = _obj([[1, 2, 3, 4, 5]]), _obj([[1, -4, 3]]), _obj([[7, 3, -2]])
    want = {"add": [1, 12, 3, 2, 5], "mul": [1, 42, 3, -8, 5], "max": [1, 7, 3, 4, 5], "min": [1, 2, 3, -2, 5]}
    for red, w in want.items():
        assert f(_ctx("ScatterElements", 18), data, idx, upd, axis=1, reduction=red).tolist() == [w]


def test_scatter_nd_oracle_reproduces_the_text_examples():
    f = E["ScatterND"].oracle
    out = f(_ctx("ScatterND", 18), _obj([1, 2, 3, 4, 5, 6, 7, 8]), _obj([[4], [3], [1], [7]]), _obj([9, 10, 11, 12]),
            reduction="none")
    assert out.tolist() == [1, 11, 3, 10, 9, 6, 7, 12]
    block = [[1, 2, 3, 4], [5, 6, 7, 8], [8, 7, 6, 5], [4, 3, 2, 1]]
    rev = [[8, 7, 6, 5], [4, 3, 2, 1], [1, 2, 3, 4], [5, 6, 7, 8]]
    upd = [[[5] * 4, [6] * 4, [7] * 4, [8] * 4], [[1] * 4, [2] * 4, [3] * 4, [4] * 4]]
    out = f(_ctx("ScatterND", 18), _obj([block, block, rev, rev]), _obj([[0], [2]]), _obj(upd), reduction="none")
    assert out.tolist() == [upd[0], block, upd[1], rev]
    # the reduction's loop, duplicates and a negative index included
    data = _obj([[1, 2], [3, 4]])
    out = f(_ctx("ScatterND", 18), data, _obj([[0, 1], [-2, -1], [1, 0]]), _obj([5, 6, 7]), reduction="add")
    assert out.tolist() == [[1, 13], [10, 4]]
    out = f(_ctx("ScatterND", 18), data, _obj([[1], [-1]]), _obj([[2, 2], [3, 1]]), reduction="mul")
    assert out.tolist() == [[1, 2], [18, 8]]


_AT = {"add": np.add.at, "mul": np.multiply.at, "max": np.maximum.at, "min": np.minimum.at}
#: reductions each opset accepts (the versions' attribute texts)
_REDUCTIONS = [(18, ("none", "add", "mul", "max", "min")), (16, ("none", "add", "mul")), (0, ("none",))]


def _reduction_of(attrs, opset):
    red = attrs.get("reduction", "none")
    allowed = next(r for v, r in _REDUCTIONS if opset >= v)
    if red not in allowed or (opset < 16 and "reduction" in attrs):
        raise ValueError(f"reduction {red!r} not accepted at opset {opset}")
    return red


def _elements_coords(data_shape, idx, axis):
    """Coordinate arrays of ScatterElements' targets: each entry's own position with the axis
    coordinate replaced by its index."""
    axis %= len(data_shape)
    s = data_shape[axis]
    if ((idx < -s) | (idx >= s)).any():
        raise IndexError("index out of bounds")
    coords = list(np.indices(idx.shape)) if idx.size else [np.zeros(idx.shape, dtype=np.int64)] * idx.ndim
    coords[axis] = np.where(idx < 0, idx + s, idx)
    return tuple(coords)


def _nd_coords(data_shape, idx):
    k = idx.shape[-1]
    if k > len(data_shape):
        raise ValueError("k > rank")
    cols = []
    for j in range(k):
        c = idx[..., j]
        if ((c < -data_shape[j]) | (c >= data_shape[j])).any():
            raise IndexError("index out of bounds")
        cols.append(np.where(c < 0, c + data_shape[j], c))
    return tuple(cols)


def _scatter_at(data, coords, upd, red):
    """numpy's unbuffered ufunc.at (duplicates accumulate), or plain assignment for none."""
    out = np.array(data, copy=True)
    if red == "none":
        out[coords] = upd
    else:
        _AT[red](out, coords, upd)
    return out


@pytest.mark.parametrize("seed", range(3))
def test_scatter_oracles_match_numpy_ufunc_at(seed):
    rng = np.random.default_rng(seed)
    for red in ("none", "add", "mul", "max", "min"):
        for r in range(1, 4):
            shape = tuple(int(d) for d in rng.integers(2, 4, size=r))
            x = rng.integers(-5, 6, size=shape)
            for axis in range(-r, r):
                ish = tuple(int(rng.integers(1, d + 1)) for d in shape)
                s = shape[axis]
                idx = np.stack([rng.permutation(s)[:ish[axis]] for _ in range(int(np.prod(ish)) // ish[axis])], -1) \
                    if red == "none" else rng.integers(-s, s, size=ish)
                idx = np.moveaxis(idx.reshape(ish[:axis % r] + ish[axis % r + 1:] + (ish[axis],)), -1, axis % r) \
                    if red == "none" else idx
                upd = rng.integers(-5, 6, size=ish)
                got = E["ScatterElements"].oracle(_ctx("ScatterElements", 18), _obj(x), _obj(idx), _obj(upd), axis=axis,
                                                  reduction=red)
                assert got.tolist() == _scatter_at(x, _elements_coords(shape, idx, axis), upd, red).tolist()
            for k in range(1, r + 1):
                cells = int(np.prod(shape[:k]))
                m = int(rng.integers(0, min(cells, 4) + 1))
                flat = rng.permutation(cells)[:m] if red == "none" else rng.integers(0, cells, size=m)
                idx = np.stack(np.unravel_index(flat, shape[:k]), -1).reshape(m, k) - \
                    (rng.random((m, k)) < 0.5) * np.asarray(shape[:k])
                upd = rng.integers(-5, 6, size=(m,) + shape[k:])
                got = E["ScatterND"].oracle(_ctx("ScatterND", 18), _obj(x), _obj(idx), _obj(upd), reduction=red)
                assert got.tolist() == _scatter_at(x, _nd_coords(shape, idx), upd, red).tolist()


# ============================================================================ OneHot: oracle
def test_one_hot_oracle_follows_the_text():
    f = E["OneHot"].oracle
    vals = np.array([-1.5, 2.5])  # [off_value, on_value]
    idx = _obj([[0, 2], [-1, 5]])
    # axis = -1: output[i, j, input[i, j]] = on; index 5 is outside [-3, 2]: an all-off row; -1 -> 2 (from 11)
    out = f(_ctx("OneHot", 11), idx, _obj(3), vals, axis=-1)
    assert out.tolist() == [[[2.5, -1.5, -1.5], [-1.5, -1.5, 2.5]], [[-1.5, -1.5, 2.5], [-1.5, -1.5, -1.5]]]
    # axis = 0: output[input[i, j], i, j] = on
    out0 = f(_ctx("OneHot", 11), idx, _obj(3), vals, axis=0)
    assert np.array_equal(out0, np.moveaxis(out, -1, 0))
    # version 9: [0, depth) only, a negative index is outside the range (never generated: the input text
    # says the values must be non-negative)
    assert f(_ctx("OneHot", 9), _obj([-1]), _obj(3), vals, axis=-1).tolist() == [[-1.5, -1.5, -1.5]]
    # floating indices and depth are cast to int64 (truncation); depth may be a 1-element rank-1 tensor
    out = f(_ctx("OneHot", 11), np.array([1.0, -0.0, -3.0]), np.array([3.0]), vals, axis=1)
    assert out.tolist() == [[-1.5, 2.5, -1.5], [2.5, -1.5, -1.5], [2.5, -1.5, -1.5]]
    # values are copied, not computed: strings, an infinite off value, a negative zero
    out = f(_ctx("OneHot", 11), _obj([1]), _obj(2), np.array(["off", "on"], dtype=object), axis=-1)
    assert out.tolist() == [["off", "on"]]
    out = f(_ctx("OneHot", 11), _obj([1]), _obj(2), np.array([-np.inf, -0.0]), axis=-1)
    assert out[0, 0] == -np.inf and out[0, 1] == 0 and np.signbit(out[0, 1])


def _one_hot_eye(idx, d, axis, version):
    """Rows of an identity matrix (an all-off row for an index outside the version's range),
    the new axis moved into place; a boolean mask."""
    ints = np.array([int(np.trunc(v)) for v in np.asarray(idx).ravel().tolist()], dtype=object).reshape(np.shape(idx))
    lo = -d if version >= 11 else 0
    eye = np.vstack([np.eye(d, dtype=bool), np.zeros((1, d), dtype=bool)])
    rows = np.array([(v + d if v < 0 else v) if lo <= v < d else d for v in ints.ravel().tolist()], dtype=np.int64)
    mask = eye[rows].reshape(np.shape(idx) + (d,))
    r = np.ndim(idx)
    return np.moveaxis(mask, -1, axis + r + 1 if axis < 0 else axis)


@pytest.mark.parametrize("version", [9, 11])
def test_one_hot_oracle_matches_identity_rows(version):
    rng = np.random.default_rng(version)
    for r in range(0, 4):
        shape = tuple(int(x) for x in rng.integers(0, 4, size=r))
        d = int(rng.integers(1, 6))
        idx = rng.integers(-d - 2, d + 3, size=shape)
        for axis in range(-r - 1, r + 1):
            got = E["OneHot"].oracle(_ctx("OneHot", version), _obj(idx), _obj(d), np.array([0.25, -7.0]), axis=axis)
            want = np.where(_one_hot_eye(idx, d, axis, version), -7.0, 0.25)
            assert np.array_equal(got, want)


# ============================================================================ NonZero: oracle
def test_non_zero_oracle_follows_the_text():
    f = E["NonZero"].oracle
    x = np.array([[1.0, 0.0], [np.nan, -0.0], [5e-324, 2.0]])
    assert f(_ctx("NonZero", 13), x).tolist() == [[0, 1, 2, 2], [0, 0, 0, 1]]
    # a scalar gives shape (0, N), not numpy's (1, N)
    assert f(_ctx("NonZero", 13), np.array(3.0)).shape == (0, 1)
    assert f(_ctx("NonZero", 13), np.array(-0.0)).shape == (0, 0)
    assert f(_ctx("NonZero", 13), np.zeros((2, 0, 3))).shape == (3, 0)
    strings = np.array(["", "a", "", " "], dtype=object)
    assert f(_ctx("NonZero", 13), strings).tolist() == [[1, 3]]
    assert f(_ctx("NonZero", 13), np.array([0j, 1j, 0j, 2 + 0j])).tolist() == [[1, 3]]


@pytest.mark.parametrize("seed", range(3))
def test_non_zero_oracle_matches_numpy_beyond_rank_0(seed):
    rng = np.random.default_rng(seed)
    for r in range(1, 5):
        x = rng.integers(-1, 2, size=tuple(int(d) for d in rng.integers(0, 4, size=r)))
        assert np.array_equal(E["NonZero"].oracle(_ctx("NonZero", 9), _obj(x)).astype(np.int64),
                              np.array(np.nonzero(x)).reshape(r, -1))


# ============================================================================ Compress: oracle
def test_compress_oracle_reproduces_the_node_examples():
    """onnx's node tests for Compress (compress_0, _1, _default_axis, _negative_axis)."""
    f = E["Compress"].oracle
    x = np.array([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]])
    ctx = _ctx("Compress", 11)
    assert f(ctx, x, np.array([False, True, True]), axis=0).tolist() == [[3, 4], [5, 6]]
    assert f(ctx, x, np.array([False, True]), axis=1).tolist() == [[2], [4], [6]]
    assert f(ctx, x, np.array([False, True, False, False, True])).tolist() == [2, 5]
    assert f(ctx, x, np.array([False, True]), axis=-1).tolist() == [[2], [4], [6]]
    # a condition shorter than the axis discards the slices beyond it
    assert f(ctx, x, np.array([True]), axis=0).tolist() == [[1, 2]]
    assert f(ctx, x, np.array([False, False]), axis=0).shape == (0, 2)


def _compress_loop(x, cond, axis):
    if axis is None:
        flat = x.reshape(-1)
        return np.array([flat[i] for i in range(min(len(cond), flat.size)) if cond[i]], dtype=x.dtype)
    axis %= x.ndim
    keep = [i for i in range(min(len(cond), x.shape[axis])) if cond[i]]
    return np.take(x, np.array(keep, dtype=np.int64), axis=axis)


@pytest.mark.parametrize("seed", range(3))
def test_compress_oracle_matches_a_loop(seed):
    rng = np.random.default_rng(seed)
    for r in range(1, 4):
        x = rng.normal(size=tuple(int(d) for d in rng.integers(1, 4, size=r)))
        for axis in [None] + list(range(-r, r)):
            n = x.size if axis is None else x.shape[axis]
            cond = rng.random(size=int(rng.integers(0, n + 1))) < 0.5
            got = E["Compress"].oracle(_ctx("Compress", 11), x, cond, axis=axis)
            assert np.array_equal(got, _compress_loop(x, cond, axis))


# ============================================================================ Unique: oracle
@pytest.mark.parametrize("x,axis,srt,want", [
    ([2, 1, 1, 3, 4, 3], None, 0, ([2, 1, 3, 4], [0, 1, 3, 4], [0, 1, 1, 2, 3, 2], [1, 2, 2, 1])),
    ([[1, 3], [2, 3]], None, 1, ([1, 2, 3], [0, 2, 1], [0, 2, 1, 2], [1, 1, 2])),
    ([[1, 0, 0], [1, 0, 0], [2, 3, 4]], 0, 1, ([[1, 0, 0], [2, 3, 4]], [0, 2], [0, 0, 1], [2, 1])),
    ([[[1, 1], [0, 1], [2, 1], [0, 1]], [[1, 1], [0, 1], [2, 1], [0, 1]]], 1, 1,
     ([[[0, 1], [1, 1], [2, 1]], [[0, 1], [1, 1], [2, 1]]], [1, 0, 2], [1, 0, 2, 0], [2, 1, 1])),
])
def test_unique_oracle_reproduces_the_text_examples(x, axis, srt, want):
    got = E["Unique"].oracle(_ctx("Unique", 11), np.asarray(x, dtype=np.float64), axis=axis, sorted=srt)
    assert [np.asarray(g).tolist() for g in got] == list(want)


def _unique_numpy(x, axis, srt):
    """numpy.unique (sorted, first indices, inverse, counts), reordered by first occurrence for
    sorted=0 (an implementation independent of the oracle's dictionary)."""
    flat = axis is None
    a = x.reshape(-1) if flat else x
    ax = 0 if flat else axis % x.ndim
    y, first, inv, cnt = np.unique(a, return_index=True, return_inverse=True, return_counts=True,
                                   axis=None if flat else ax)
    inv = inv.reshape(-1)
    if not srt:
        order = np.argsort(first, kind="stable")
        rank = np.empty_like(order)
        rank[order] = np.arange(order.size)
        y, first, cnt, inv = np.take(y, order, axis=ax), first[order], cnt[order], rank[inv]
    return y, first, inv, cnt


@pytest.mark.parametrize("seed", range(3))
def test_unique_oracle_matches_numpy_unique(seed):
    rng = np.random.default_rng(seed)
    for r in range(1, 4):
        shape = tuple(int(d) for d in rng.integers(1, 5, size=r))
        x = rng.integers(0, 3, size=shape).astype(np.float64)
        for axis in [None] + list(range(-r, r)):
            for srt in (0, 1):
                got = E["Unique"].oracle(_ctx("Unique", 11), x, axis=axis, sorted=srt)
                want = _unique_numpy(x, axis, srt)
                assert all(np.array_equal(np.asarray(g).astype(w.dtype), w) for g, w in zip(got, want)), (axis, srt)


# ============================================================================ kernels
def _axis(attrs, rank, default=0, lo=None, hi=None):
    """The ``axis`` attribute, checked against [-r, r-1] (or [lo, hi])."""
    axis = attrs.get("axis", default)
    lo, hi = -rank if lo is None else lo, rank - 1 if hi is None else hi
    if not lo <= axis <= hi:
        raise ValueError(f"axis {axis} outside [{lo}, {hi}]")
    return axis


def k_gather(ins, attrs, outs, opset, flaw=None):
    data, idx = ins["data"], np.asarray(ins["indices"]).astype(np.int64)
    axis = _axis(attrs, data.ndim)
    if flaw == "wrong-axis":
        axis = 0
    if flaw == "negative-not-wrapped":
        idx = np.maximum(idx, 0)  # a negative index clamped to the first element instead of wrapped
    return {outs[0]: _gather_loop(data, idx, axis)}


def k_gather_elements(ins, attrs, outs, opset, flaw=None):
    data, idx = ins["data"], np.asarray(ins["indices"]).astype(np.int64)
    axis = _axis(attrs, data.ndim)
    if flaw == "wrong-axis":
        axis = 0
    if flaw == "negative-not-wrapped":
        idx = np.maximum(idx, 0)
    return {outs[0]: _gather_elements_loop(data, idx, axis)}


def k_gather_nd(ins, attrs, outs, opset, flaw=None):
    data, idx = ins["data"], np.asarray(ins["indices"]).astype(np.int64)
    b = attrs.get("batch_dims", 0)
    if idx.ndim < 1 or not 0 <= b < min(idx.ndim, data.ndim) or idx.shape[-1] > data.ndim - b:
        raise ValueError("invalid GatherND shapes")
    if flaw == "batch-dims-ignored":
        b = 0
    if flaw == "negative-not-wrapped":
        idx = np.maximum(idx, 0)
    return {outs[0]: _gather_nd_fancy(data, idx, b)}


def _scatter_loop(data, coords, upd, red):
    """The text's loop over the update entries in *reverse* order, in the type's own arithmetic
    (any iteration order is legitimate where the result is defined)."""
    out = np.array(data, copy=True)
    pos = list(np.ndindex(*upd.shape))
    for p in reversed(pos):
        t = tuple(int(c[p]) for c in coords)
        a, b = out[t], upd[p]
        out[t] = b if red == "none" else a + b if red == "add" else a * b if red == "mul" else \
            (max(a, b) if red == "max" else min(a, b))
    return out


def k_scatter_elements(ins, attrs, outs, opset, flaw=None, loop=False):
    data, idx, upd = ins["data"], np.asarray(ins["indices"]).astype(np.int64), ins["updates"]
    axis = _axis(attrs, data.ndim)
    if idx.ndim != data.ndim or idx.shape != upd.shape:
        raise ValueError("indices and updates must have data's rank and one shape")
    red = _reduction_of(attrs, opset)
    if flaw == "reduction-ignored":
        red = "none"
    if flaw == "wrong-axis":
        axis = 0
    if flaw == "negative-not-wrapped":
        idx = np.maximum(idx, 0)
    coords = _elements_coords(data.shape, idx, axis)
    return {outs[0]: (_scatter_loop if loop else _scatter_at)(data, coords, upd, red)}


def k_scatter_nd(ins, attrs, outs, opset, flaw=None, loop=False):
    data, idx, upd = ins["data"], np.asarray(ins["indices"]).astype(np.int64), ins["updates"]
    k = idx.shape[-1]
    if upd.shape != idx.shape[:-1] + data.shape[k:]:
        raise ValueError("updates must have shape indices.shape[:-1] + data.shape[k:]")
    red = _reduction_of(attrs, opset)
    if flaw == "reduction-ignored":
        red = "none"
    if flaw == "negative-not-wrapped":
        idx = np.maximum(idx, 0)
    coords = _nd_coords(data.shape, idx)
    if loop:  # expand every index tuple to the elements of its slice
        full = [np.broadcast_to(c.reshape(c.shape + (1,) * (data.ndim - k)), upd.shape) for c in coords]
        rest = np.indices(upd.shape)[idx.ndim - 1:] if upd.size else [np.zeros(upd.shape, np.int64)] * (data.ndim - k)
        return {outs[0]: _scatter_loop(data, tuple(full) + tuple(rest), upd, red)}
    return {outs[0]: _scatter_at(data, coords, upd, red)}


def k_one_hot(ins, attrs, outs, opset, flaw=None):
    idx, depth, values = ins["indices"], ins["depth"], ins["values"]
    if depth.size != 1 or depth.ndim > 1 or values.shape != (2,):
        raise ValueError("depth must have one element and values two")
    axis = _axis(attrs, idx.ndim + 1, default=-1, lo=-idx.ndim - 1, hi=idx.ndim)
    d = int(np.trunc(depth.ravel()[0]))
    version = 11 if opset >= 11 else 9
    ints = np.array([int(np.trunc(v)) if isinstance(v, float) else int(v) for v in idx.ravel().tolist()],
                    dtype=object).reshape(idx.shape)
    if flaw == "out-of-range-not-all-off":  # the index taken modulo depth
        ints = np.array([v % d for v in ints.ravel().tolist()], dtype=object).reshape(idx.shape)
    if flaw == "negative-not-wrapped":  # a negative index treated as outside the range
        ints = np.array([d if v < 0 else v for v in ints.ravel().tolist()], dtype=object).reshape(idx.shape)
    mask = _one_hot_eye(ints, d, axis, version)
    if flaw == "values-arithmetic":  # onnx.reference's mask * (on - off) + off, in the values' type
        with np.errstate(all="ignore"):
            return {outs[0]: (mask.astype(values.dtype) * (values[1] - values[0]) + values[0]).astype(values.dtype)}
    return {outs[0]: np.where(mask, values[1], values[0]).astype(values.dtype)}


def k_non_zero(ins, attrs, outs, opset, flaw=None):
    x = ins["X"]
    order = "F" if flaw == "column-major" else "C"

    def nonzero(v):
        if isinstance(v, str):
            return v != ""
        if flaw == "nan-is-zero" and v != v:
            return False
        if flaw == "negative-zero-nonzero" and isinstance(v, float) and v == 0:
            return bool(np.signbit(v))
        return bool(v != 0)

    positions = []
    shape = x.shape
    cells = list(np.ndindex(*shape[::-1])) if order == "F" else list(np.ndindex(*shape))
    for cell in cells:
        pos = cell[::-1] if order == "F" else cell
        v = x[pos]
        if nonzero(v.item() if hasattr(v, "item") else v):
            positions.append(pos)
    rows = 1 if (flaw == "scalar-like-numpy" and x.ndim == 0) else x.ndim
    out = np.zeros((rows, len(positions)), dtype=np.int64)
    for j, pos in enumerate(positions):
        out[:len(pos), j] = pos
    return {outs[0]: out}


def k_compress(ins, attrs, outs, opset, flaw=None):
    x, cond = ins["input"], ins["condition"]
    if cond.ndim != 1 or x.ndim < 1:
        raise ValueError("condition must be of rank 1 and input of rank >= 1")
    axis = _axis(attrs, x.ndim) if "axis" in attrs else None
    if flaw == "flatten-always":
        axis = None
    if flaw == "wrong-axis" and axis is not None:
        axis = 0
    n = x.size if axis is None else x.shape[axis]
    if len(cond) > n:
        raise ValueError("condition longer than the axis")
    if flaw == "short-condition-keeps-rest":
        cond = np.concatenate([cond, np.ones(n - len(cond), dtype=bool)])
    return {outs[0]: _compress_loop(x, cond, axis)}


def _unique_python(x, axis, srt):
    """Unique by sorting (key, first position) pairs: for object arrays (strings), which
    numpy.unique cannot take with an axis."""
    flat = axis is None
    ax = 0 if flat else axis % x.ndim
    items = list(x.reshape(-1)) if flat else [np.take(x, i, axis=ax) for i in range(x.shape[ax])]
    keys = [tuple(np.asarray(it).reshape(-1).tolist()) for it in items]
    firsts = {}
    for i, k in enumerate(keys):
        firsts.setdefault(k, i)
    order = sorted(firsts) if srt else sorted(firsts, key=firsts.get)
    where = {k: j for j, k in enumerate(order)}
    if flat:
        y = np.array([items[firsts[k]] for k in order], dtype=x.dtype).reshape(len(order))
    else:
        y = np.take(x, np.array([firsts[k] for k in order], dtype=np.int64), axis=ax)
    return (y, np.array([firsts[k] for k in order], np.int64), np.array([where[k] for k in keys], np.int64),
            np.array([keys.count(k) for k in order], np.int64))


def k_unique(ins, attrs, outs, opset, flaw=None):
    x = ins["X"]
    srt = attrs.get("sorted", 1)
    if srt not in (0, 1):
        raise ValueError("sorted must be 0 or 1")
    axis = attrs.get("axis")
    if axis is not None:
        axis = _axis(attrs, x.ndim)
    if flaw == "axis-ignored":
        axis = None
    if flaw == "sorted0-returns-sorted":
        srt = 1
    if x.dtype == object or x.dtype.kind == "c" or x.ndim == 0 or x.size == 0:
        y, first, inv, cnt = _unique_python(x, axis, srt)
    else:
        y, first, inv, cnt = _unique_numpy(x, axis, srt)
    if flaw == "indices-last-occurrence":
        flat = x.reshape(-1) if axis is None else None
        keys = [v for v in flat.tolist()] if flat is not None else \
            [tuple(np.take(x, i, axis=axis % x.ndim).reshape(-1).tolist()) for i in range(x.shape[axis % x.ndim])]
        first = np.array([max(i for i, k in enumerate(keys) if k == keys[f]) for f in first], np.int64)
    res = dict(zip(("Y", "indices", "inverse_indices", "counts"), (y, first, inv, cnt)))
    return {o: res[o] for o in outs}


KERNELS = {"Gather": k_gather, "GatherElements": k_gather_elements, "GatherND": k_gather_nd,
           "ScatterElements": k_scatter_elements, "ScatterND": k_scatter_nd, "OneHot": k_one_hot, "NonZero": k_non_zero, "Compress": k_compress, "Unique": k_unique}


def _backend(flaw=None, op=None):
    def bind(name, fn):
        return lambda i, a, o, s: fn(i, a, o, s, flaw=flaw if op in (None, name) else None)

    return KernelBackend({name: bind(name, fn) for name, fn in KERNELS.items()}, name=f"kernels-{flaw}")


def test_legitimate_kernels_pass_every_case(suite):
    results = run_cases(suite, _backend())
    bad = [(c.id, r.outcome, r.message[:300]) for c, r in zip(suite, results)
           if r.outcome != "pass" and not (r.outcome == "unsupported" and c.contested)]
    assert not bad, bad[:5]
    # the contested models are those onnx's checker rejects
    assert all(r.outcome == "unsupported" for c, r in zip(suite, results) if c.contested)


def test_scatter_in_reverse_order_passes_every_case(suite):
    """The text's loop run backwards in the type's own arithmetic (numpy float16 rounds every
    step) gives every expected output: duplicates appear only where every order agrees."""
    cases = [c for c in suite if c.op.startswith("Scatter")]
    backend = KernelBackend({op: (lambda i, a, o, s, _f=KERNELS[op]: _f(i, a, o, s, loop=True))
                             for op in ("ScatterElements", "ScatterND")}, name="reverse-loop")
    results = run_cases(cases, backend)
    bad = [(c.id, r.outcome, r.message[:300]) for c, r in zip(cases, results) if r.outcome != "pass"]
    assert cases and not bad, bad[:5]


#: flaw -> (operator, case filter that must match, at least one caught)
WRONG = {
    "negative-not-wrapped": ("Gather", lambda c: (_index_array(c) < 0).any()),
    "wrong-axis": ("Gather", lambda c: c.attributes.get("axis", 0) not in (0, -len(c.inputs[0].shape))),
    "negative-not-wrapped/GatherElements": ("GatherElements", lambda c: (_index_array(c) < 0).any()),
    "wrong-axis/GatherElements": ("GatherElements",
                                  lambda c: c.attributes.get("axis", 0) not in (0, -len(c.inputs[0].shape))),
    "negative-not-wrapped/GatherND": ("GatherND", lambda c: (_index_array(c) < 0).any()),
    "batch-dims-ignored": ("GatherND", lambda c: c.attributes.get("batch_dims", 0) > 0),
    "reduction-ignored": ("ScatterND", lambda c: c.attributes.get("reduction", "none") != "none"),
    "reduction-ignored/ScatterElements": ("ScatterElements", lambda c: c.attributes.get("reduction", "none") != "none"),
    "negative-not-wrapped/ScatterND": ("ScatterND", lambda c: (_index_array(c) < 0).any()),
    "negative-not-wrapped/ScatterElements": ("ScatterElements", lambda c: (_index_array(c) < 0).any()),
    "wrong-axis/ScatterElements": ("ScatterElements",
                                   lambda c: c.attributes.get("axis", 0) not in (0, -len(c.inputs[0].shape))),
    "out-of-range-not-all-off": ("OneHot", lambda c: c.tags["numerics"] == "out-of-range" and not c.contested),
    "negative-not-wrapped/OneHot": ("OneHot", lambda c: (_index_array(c) < 0).any() and not c.contested),
    "values-arithmetic": ("OneHot", lambda c: c.tags["numerics"] in ("special", "wide") and not c.contested),
    "column-major": ("NonZero", lambda c: c.tags["shape"] in ("rank2", "rank3", "rank4")),
    "scalar-like-numpy": ("NonZero", lambda c: c.tags["shape"] == "rank0"),
    "nan-is-zero": ("NonZero", lambda c: c.tags["numerics"] == "special"),
    "negative-zero-nonzero": ("NonZero", lambda c: c.tags["numerics"] in ("normal", "all-zero", "special")),
    "flatten-always": ("Compress", lambda c: "axis" in c.attributes),
    "short-condition-keeps-rest": ("Compress", lambda c: "shorter" in c.tags["shape"]),
    "wrong-axis/Compress": ("Compress", lambda c: c.attributes.get("axis", 0) not in (0, -len(c.inputs[0].shape))),
    "sorted0-returns-sorted": ("Unique", lambda c: c.attributes.get("sorted", 1) == 0),
    "indices-last-occurrence": ("Unique", lambda c: "indices" in c.tags["outputs"].split(",")),
    "axis-ignored": ("Unique", lambda c: "axis" in c.attributes),
}


@pytest.mark.parametrize("flaw", sorted(WRONG))
def test_wrong_kernel_is_caught(flaw, suite):
    op, keep = WRONG[flaw]
    cases = [c for c in _values(suite, op) if keep(c)]
    assert cases, flaw
    results = run_cases(cases, _backend(flaw.split("/")[0], op))
    outcomes = Counter(r.outcome for r in results)
    assert outcomes["fail"] >= 1, outcomes


# ============================================================================ onnx.reference
def _reference_disagreement(case, res) -> str | None:
    """Why onnx.reference disagrees with a case (who is right), or None if unexplained.

    * ``data-rank0`` (Gather, every version): the text requires data of rank r >= 1;
      onnx.reference's ``np.take`` accepts a scalar and returns it (onnxruntime rejects the
      model: the case is right).
    * GatherElements ``out-of-range-wraps``: ``np.choose(..., mode="wrap")`` wraps index 3 of an
      axis of size 3 to 0 and -4 to 2; the text: "It is an error if any of the index values
      are out of bounds" (onnxruntime raises: the case is right).
    * GatherElements ``negative-axis``: onnx.reference builds the cross-section shape as
      ``index.shape[:dim] + index.shape[dim + 1:]``, which for ``dim = -1`` is not the
      cross-section, and raises ValueError on every negative axis (the text accepts
      [-r, r-1]; onnxruntime passes: the case is right).
    * GatherElements ``smaller-dims``: onnx.reference requires indices to have data's size in
      every dimension but the axis; the text asks only for the same rank (the output has
      indices' shape) and onnxruntime accepts them (the case is right; smallest: data (3, 3),
      indices [[0, 2]] of shape (1, 2), axis 0 gives [[1, 6]] for data 1..9).
    * ScatterElements / ScatterND ``reduction-value-unchecked``: ``reduction="max"`` at version
      16 (whose text lists "none (default), add, mul") and ``reduction="sum"`` (no version
      lists it) run without complaint; onnx's checker does not check string attribute values
      and onnxruntime accepts them too (the cases follow the text; a lenient runtime is
      harmless but the model is not valid at that version).
    * ScatterElements ``indices-rank``: indices and updates of rank 1 with data of rank 2 run
      (onnxruntime rejects: "Indices and updates must have the same rank as data").
    * OneHot ``axis-unchecked``: an axis outside [-r-1, r] runs (onnxruntime rejects it).
    * OneHot ``depth-rank1``: ``np.arange(depth)`` of a depth of shape (1,) raises; the text
      allows a "Scalar or Rank 1 tensor containing exactly one element" (onnxruntime passes).
    * OneHot ``values-arithmetic``: onnx.reference computes ``mask * (on - off) + off`` in the
      values' type, where the text says the locations "will have" on_value and off_value:
      string and bool values raise TypeError, an infinite off value or a NaN gives NaN
      everywhere, ``on - off`` rounds (off=-0.198322594, on=x: the on positions come out an
      ulp off) and -0.0 becomes +0.0 (onnxruntime copies the values: the cases are right).
    * contested models (rank-0 indices, which onnx's shape inference rejects) refused: fine.
    * Compress ``input-rank0``: a scalar input runs (flattened); the text: "Tensor of rank
      r >= 1" (onnxruntime rejects it from 11, accepts it at 9).
    * Unique ``sorted0``: with ``sorted=0`` onnx.reference returns numpy's sorted Y when Y is
      the only output (smallest: X = [2, 1], Y [1, 2] instead of [2, 1]), and otherwise
      rebuilds Y with ``np.take(x, indices, axis=0)`` on the *unflattened* input (wrong rows,
      IndexError, or a wrong shape for rank >= 2 without an axis and for an axis other than 0;
      TypeError for rank 0 and empty inputs).  onnxruntime passes those cases.
    * Unique ``object-axis``: numpy.unique cannot take an axis on an object (string) array:
      TypeError (onnxruntime passes).
    * Unique ``sorted-unchecked``: ``sorted=2`` ("Must be one of 0, or 1") runs (onnxruntime
      too).
    """
    if case.expect_error and case.tags.get("error") == "data-rank0" and case.op == "Gather":
        return "gather-data-rank0"
    if case.op == "Unique":
        if case.expect_error and case.tags.get("error") == "sorted=2":
            return "unique-sorted-unchecked"
        if not case.expect_error and case.attributes.get("sorted", 1) == 0:
            return "unique-sorted0"
        if not case.expect_error and case.tags["dtype"] == "string" and "axis" in case.attributes:
            return "unique-object-axis"
    if case.op == "Compress" and case.expect_error and case.tags.get("error") == "input-rank0":
        return "compress-input-rank0"
    if case.op == "OneHot":
        if case.expect_error and case.tags.get("error", "").startswith("axis="):
            return "one-hot-axis-unchecked"
        if res.outcome == "unsupported" and case.contested:
            return "contested"
        if res.outcome == "error" and case.inputs[1].shape == (1,):
            return "one-hot-depth-rank1"
        types = dict(p.split("=") for p in case.tags.get("types", "").split(",") if "=" in p)
        t3 = types.get("T3", case.tags["dtype"])
        if (res.outcome == "error" and t3 in ("string", "bool")) or res.outcome == "fail":
            return "one-hot-values-arithmetic"
    if case.op.startswith("Scatter") and case.expect_error:
        err = case.tags.get("error")
        if err in ("reduction=max@16", "reduction=sum"):
            return "scatter-reduction-value-unchecked"
        if err == "indices-rank" and case.op == "ScatterElements":
            return "scatter-elements-indices-rank"
    if case.op == "GatherElements":
        if case.expect_error and case.tags.get("error", "").startswith("index="):
            return "gather-elements-out-of-range-wraps"
        axis = case.attributes.get("axis", 0)
        data, ind = case.inputs[0].shape, case.inputs[1].shape
        if res.outcome == "error" and axis < 0:
            return "gather-elements-negative-axis"
        if res.outcome == "error" and any(a != b for d, (a, b) in enumerate(zip(data, ind)) if d != axis % len(data)):
            return "gather-elements-smaller-dims"
    return None


def test_agreement_with_onnx_reference(suite):
    results = run_cases(suite, resolve_backend("onnx-reference"))
    why, unexplained = sort_findings(suite, results, _reference_disagreement)
    assert not unexplained, unexplained[:5]
    assert set(why) == {"gather-data-rank0", "gather-elements-out-of-range-wraps", "gather-elements-negative-axis",
                        "gather-elements-smaller-dims", "scatter-reduction-value-unchecked",
                        "scatter-elements-indices-rank", "one-hot-axis-unchecked", "one-hot-depth-rank1",
                        "one-hot-values-arithmetic", "contested", "compress-input-rank0", "unique-sorted0",
                        "unique-object-axis", "unique-sorted-unchecked"}, why  # not stale


# ============================================================================ coverage
def test_every_version_and_type_combination_has_value_cases(suite):
    cov = compute_coverage([c for c in suite if c.expect_error is None])
    for op in OPS:
        spec = op_spec(op)
        versions = cov["ops"][op]["versions"]
        for v in spec.since_versions:
            e = versions[str(v)]
            assert len(e["covered"]) + len(e["missing"]) == len(type_combinations(spec.versions[v]))
            assert all("declared_unbuildable" in m for m in e["missing"]), (op, v, e["missing"][:3])


def test_gather_index_ranges_follow_each_version(suite):
    """Negative indices only from 11 (version 1's text has no [-s, s-1]); every version has
    rank-0 and zero-size indices, a negative axis and the axis left out."""
    cases = _values(suite, "Gather")
    neg = {c.since_version for c in cases if (_index_array(c) < 0).any()}
    assert neg == {11, 13}
    for v in (1, 11, 13):
        mine = [c for c in cases if c.since_version == v]
        assert any(_index_array(c).ndim == 0 for c in mine)
        assert any(_index_array(c).size == 0 for c in mine)
        assert any(c.attributes.get("axis", 0) < 0 for c in mine)
        assert any("axis" not in c.attributes for c in mine)
        # the boundaries of the axis are indexed
        assert any((_index_array(c) == c.inputs[0].shape[c.attributes.get("axis", 0)] - 1).any()
                   for c in mine if c.inputs[0].shape and _index_array(c).size)


def test_gather_elements_shapes_and_indices(suite):
    """Both versions: negative indices, indices smaller than data off the axis, every rank 1-4,
    zero-size indices, a negative axis and the axis left out."""
    cases = _values(suite, "GatherElements")
    for v in (11, 13):
        mine = [c for c in cases if c.since_version == v]
        assert any((_index_array(c) < 0).any() for c in mine)
        assert any(_index_array(c).size == 0 for c in mine)
        assert {len(c.inputs[0].shape) for c in mine} == {1, 2, 3, 4}
        assert any(c.attributes.get("axis", 0) < 0 for c in mine)
        assert any("axis" not in c.attributes for c in mine)
        assert any(any(a > b for a, b in zip(c.inputs[0].shape, c.inputs[1].shape)) for c in mine)


def test_gather_nd_shapes_and_batch_dims(suite):
    """batch_dims 1 and 2 from 12 only; every version: rank-0 outputs (k = r, q = 1),
    negative indices, zero-size indices; version 12 and 13 also leave batch_dims out."""
    cases = _values(suite, "GatherND")
    assert {c.since_version for c in cases if c.attributes.get("batch_dims", 0)} == {12, 13}
    for v in (12, 13):
        assert {c.attributes.get("batch_dims", 0) for c in cases if c.since_version == v} == {0, 1, 2}
        assert any("batch_dims" not in c.attributes for c in cases if c.since_version == v)
    for v in (11, 12, 13):
        mine = [c for c in cases if c.since_version == v]
        assert any(c.tags["rank"] == 0 for c in mine)
        assert any((_index_array(c) < 0).any() for c in mine)
        assert any(_index_array(c).size == 0 for c in mine)


def _targets(c):
    """The data elements (ScatterElements) or index tuples (ScatterND) a case's indices hit."""
    idx = np.asarray(_index_array(c)).astype(np.int64)
    shape = c.inputs[0].shape
    if c.op == "ScatterElements":
        coords = _elements_coords(shape, idx, c.attributes.get("axis", 0))
    else:
        coords = _nd_coords(shape, idx)
    return list(zip(*(x.ravel().tolist() for x in coords)))


@pytest.mark.parametrize("op", ["ScatterElements", "ScatterND"])
def test_scatter_duplicates_only_where_defined(op, suite):
    """Duplicate targets with reduction none only where their updates are identical (class
    dup-same); every reduction of 16 and 18 meets duplicates; every (type, reduction) pair the
    text defines has a case."""
    cases = _values(suite, op)
    dup_reductions = set()
    for c in cases:
        t = _targets(c)
        if len(set(t)) == len(t):
            continue
        red = c.attributes.get("reduction", "none")
        dup_reductions.add((c.since_version, red))
        if red == "none":
            assert c.tags["numerics"] == "dup-same", c.id
    assert {(16, r) for r in ("add", "mul")} | {(18, r) for r in ("add", "mul", "max", "min")} <= dup_reductions
    assert (11, "none") in dup_reductions  # dup-same
    for v, reds in ((16, ("none", "add", "mul")), (18, ("none", "add", "mul", "max", "min"))):
        seen = {(c.tags["dtype"], c.attributes.get("reduction", "none")) for c in cases if c.since_version == v}
        for t in [t[7:-1] for t in op_spec(op).versions[v].type_constraints["T"]]:
            allowed = ("none",) if t in ("bool", "string") else \
                ("none", "add", "mul") if t.startswith("complex") else reds
            assert all((t, r) in seen for r in allowed if r in reds), (v, t)


def test_one_hot_covering_types_and_index_classes(suite):
    """Every type of each of T1, T2, T3 at every version, onnxruntime's registered triples, the
    filtered combinations stated; out-of-range indices (all-off rows) and T1's extremes at every
    version, negative indices only from 11, a depth of shape (1,), every axis of the text."""
    cases = _values(suite, "OneHot")
    for v in (9, 11, 28):
        mine = [c for c in cases if c.since_version == v]
        tc = op_spec("OneHot").versions[v].type_constraints
        for k, p in enumerate(("T1", "T2", "T3")):
            assert {c.inputs[k].elem_type for c in mine} == {ix.V.elem(t) for t in tc[p]}, (v, p)
        triples = {tuple(ix.V.name_of(i.elem_type) for i in c.inputs) for c in mine}
        assert set(ix.ORT_ONE_HOT) <= triples
        assert triples == ix._one_hot_kept(v) and len(triples) < 30
        skipped = [cb for cb in type_combinations(op_spec("OneHot").versions[v])
                   if tuple(cb[p][7:-1] for p in ("T1", "T2", "T3")) not in triples]
        assert skipped and all("independent" in ix._one_hot_filter(v, {p: t[7:-1] for p, t in cb.items()})
                               for cb in skipped)
        assert any(c.tags["numerics"] == "out-of-range" for c in mine)
        assert any(c.tags["numerics"] == "int-extremes" for c in mine)
        assert any(c.inputs[1].shape == (1,) for c in mine)
        neg = any((_index_array(c) < 0).any() for c in mine)
        assert neg == (v >= 11)
    # out-of-range indices really are outside [-depth, depth-1]: all-off rows expected
    oor = [c for c in cases if c.tags["numerics"] == "out-of-range" and _index_array(c).size]
    assert oor
    for c in oor:
        d = float(np.asarray(_input(c, "depth")).ravel()[0])
        i = np.asarray(_index_array(c)).astype(np.float64)
        assert ((i >= d) | (i < -d)).any(), c.id


def test_non_zero_zeros_and_shapes(suite):
    """Both versions: every rank 0-4 and zero-size, all-zero inputs, -0.0 and NaN among float
    inputs, empty strings."""
    cases = _values(suite, "NonZero")
    for v in (9, 13):
        mine = [c for c in cases if c.since_version == v]
        assert {c.tags["shape"] for c in mine} == {"rank0", "rank1", "rank2", "rank3", "rank4", "zero-size",
                                                 "zero-size/rank1"}
        assert any(c.tags["numerics"] == "all-zero" and _input(c, "X").size for c in mine)
        floats = [_input(c, "X").astype(np.float64) for c in mine if c.tags["dtype"] in ("float", "double", "float16")]
        assert any(((x == 0) & np.signbit(x)).any() for x in floats)
        assert any(np.isnan(x).any() for x in floats)
        assert any((_input(c, "X") == "").any() for c in mine if c.tags["dtype"] == "string")


def test_compress_axes_and_conditions(suite):
    """Every version: the axis left out (flattened), conditions shorter than the axis and of
    full length, all false, empty, zero-size inputs; negative axes only from 11."""
    cases = _values(suite, "Compress")
    for v in (9, 11, 28):
        mine = [c for c in cases if c.since_version == v]
        assert any("axis" not in c.attributes for c in mine)
        neg = any(c.attributes.get("axis", 0) < 0 for c in mine)
        assert neg == (v >= 11)
        shorter = [c for c in mine if "shorter" in c.tags["shape"]]
        assert shorter and all(
            _input(c, "condition").size < (c.inputs[0].shape[c.attributes["axis"]] if "axis" in c.attributes
                                           else int(np.prod(c.inputs[0].shape))) for c in shorter)
        assert any(_input(c, "condition").size and not _input(c, "condition").any() for c in mine)
        assert any(_input(c, "condition").size == 0 for c in mine)
        assert any(0 in c.inputs[0].shape for c in mine)


def test_unique_attributes_outputs_and_duplicates(suite):
    """Both versions: every optional-output set, sorted 0 and 1 with the axis absent and given
    (negative included), duplicates in every non-trivial input, no NaN and no -0.0, complex
    only with sorted=0, rank 0 and zero-size inputs."""
    cases = _values(suite, "Unique")
    for v in (11, 28):
        mine = [c for c in cases if c.since_version == v]
        assert len({c.tags["outputs"] for c in mine}) == 8
        assert {(c.attributes.get("sorted", 1), "axis" in c.attributes) for c in mine} == \
            {(0, False), (0, True), (1, False), (1, True)}
        assert any(c.attributes.get("axis", 0) < 0 for c in mine)
        assert any(c.inputs[0].shape == () for c in mine) and any(0 in c.inputs[0].shape for c in mine)
    for c in cases:
        x = _input(c, "X")
        if x.size >= 2 and c.tags["dtype"] != "bool":
            assert c.datasets[0].outputs["Y"].size < x.size or "axis" in c.attributes, c.id
        if x.dtype.kind == "f":
            xf = x.astype(np.float64)
            assert not np.isnan(xf).any() and not ((xf == 0) & np.signbit(xf)).any()
        if x.dtype.kind == "c":
            assert c.attributes.get("sorted", 1) == 0


@pytest.mark.parametrize("op", OPS)
def test_explore_draws_pass_the_legitimate_kernels(op):
    """Explore mode draws the same parameter space (dims with hypothesis): every draw is a
    valid case the legitimate kernel passes (contested models aside)."""
    from hypothesis import HealthCheck, given, settings

    from conformance import registry

    drawn = []

    @settings(max_examples=15, database=None, suppress_health_check=list(HealthCheck), deadline=None)
    @given(registry.get_strategy(op))
    def collect(case):
        drawn.append(case)

    collect()
    results = run_cases(drawn, _backend())
    bad = [(c.id, r.outcome, r.message[:200]) for c, r in zip(drawn, results)
           if r.outcome != "pass" and not (r.outcome == "unsupported" and c.contested)]
    assert len(drawn) == 15 and not bad, bad[:3]
