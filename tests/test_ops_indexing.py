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

pytestmark = pytest.mark.filterwarnings("ignore::RuntimeWarning")
OPS = ("Gather", "GatherElements", "GatherND")
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


def _index_array(c):
    """The ``indices`` fed to a case (graph input or initializer)."""
    ds = c.datasets[0]
    if "indices" in ds.inputs:
        return ds.inputs["indices"]
    return next(i.value for i in c.inputs if i.name == "indices")


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


KERNELS = {"Gather": k_gather, "GatherElements": k_gather_elements, "GatherND": k_gather_nd}


def _backend(flaw=None, op=None):
    def bind(name, fn):
        return lambda i, a, o, s: fn(i, a, o, s, flaw=flaw if op in (None, name) else None)

    return KernelBackend({name: bind(name, fn) for name, fn in KERNELS.items()}, name=f"kernels-{flaw}")


def test_legitimate_kernels_pass_every_case(suite):
    results = run_cases(suite, _backend())
    bad = [(c.id, r.outcome, r.message[:300]) for c, r in zip(suite, results) if r.outcome != "pass"]
    assert not bad, bad[:5]


#: flaw -> (operator, case filter that must match, at least one caught)
WRONG = {
    "negative-not-wrapped": ("Gather", lambda c: (_index_array(c) < 0).any()),
    "wrong-axis": ("Gather", lambda c: c.attributes.get("axis", 0) not in (0, -len(c.inputs[0].shape))),
    "negative-not-wrapped/GatherElements": ("GatherElements", lambda c: (_index_array(c) < 0).any()),
    "wrong-axis/GatherElements": ("GatherElements",
                                  lambda c: c.attributes.get("axis", 0) not in (0, -len(c.inputs[0].shape))),
    "negative-not-wrapped/GatherND": ("GatherND", lambda c: (_index_array(c) < 0).any()),
    "batch-dims-ignored": ("GatherND", lambda c: c.attributes.get("batch_dims", 0) > 0),
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
    """
    if case.expect_error and case.tags.get("error") == "data-rank0" and case.op == "Gather":
        return "gather-data-rank0"
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
    why, unexplained = Counter(), []
    for c, r in zip(suite, results):
        if r.outcome == "pass":
            continue
        k = _reference_disagreement(c, r)
        if k is None:
            unexplained.append((c.id, r.outcome, r.message[:200]))
        why[k] += 1
    assert not unexplained, unexplained[:5]
    assert set(why) == {"gather-data-rank0", "gather-elements-out-of-range-wraps", "gather-elements-negative-axis",
                        "gather-elements-smaller-dims"}, why  # the list is not stale


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
