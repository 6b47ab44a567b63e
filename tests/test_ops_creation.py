"""Tests of the layout and creation entries (``conformance/ops/creation.py``).

Per operator:

* the oracle against independent formulas (explicit Python index loops, the spec's worked
  examples: the expected outputs of onnx's own node tests);
* agreement with ``onnx.reference`` on every generated case, each disagreement asserted and
  explained (who is right);
* numpy kernels written here through ``KernelBackend``: legitimate ones (other index
  paths) pass every case; deliberately wrong ones (the issue's DepthToSpace with DCR and
  CRD swapped, and the obvious others) are each caught by at least one case;
* coverage: every version x type combination has value cases, the attribute states and
  shape classes the traps need are present.
"""

from __future__ import annotations

import math
from collections import Counter
from fractions import Fraction

import ml_dtypes
import numpy as np
import onnx
import pytest

from conformance.backends import resolve_backend
from conformance.backends.kernel import KernelBackend
from conformance.coverage import compute_coverage
from conformance.ops import creation
from conformance.ops import values as V
from conformance.ops.entry import Ctx
from conformance.runner import run_cases
from oracle_checks import single_node_tests, sort_findings  # tests/oracle_checks.py

pytestmark = pytest.mark.filterwarnings("ignore::RuntimeWarning")
OPS = ("DepthToSpace", "SpaceToDepth", "Shape", "Size", "Trilu", "Range", "EyeLike", "ReverseSequence", "CenterCropPad",
       "ConstantOfShape", "Constant")
E = {e.op: e for e in creation.ENTRIES}


def _of(cases, op):
    out = [c for c in cases if c.op == op]
    assert out, op
    return out


def _node_tests(module: str, op: str):
    """onnx's own node tests of ``op`` (the spec's examples)."""
    found = single_node_tests((op,), (module,))
    assert found, op
    return found


def _attrs(node) -> dict:
    out = {a.name: onnx.helper.get_attribute_value(a) for a in node.attribute}
    return {k: v.decode() if isinstance(v, bytes) else v for k, v in out.items()}


def _opset(model) -> int:
    return next(o.version for o in model.opset_import if o.domain in ("", "ai.onnx"))


def _run(cases, kernels, name="k", check=True):
    return run_cases(cases, KernelBackend(kernels, name=name, check=check))


def _not_passing(cases, results):
    return [(c.id, r.outcome, (r.message or "")[:200]) for c, r in zip(cases, results) if r.outcome != "pass"]


def _caught(cases, results) -> int:
    """Value cases the kernel fails (wrong values, shape or dtype) or errors on (rejects a valid model)."""
    return sum(1 for c, r in zip(cases, results) if c.expect_error is None and r.outcome in ("fail", "error"))


# ============================================================================ DepthToSpace / SpaceToDepth
def _d2s_loops(x, bs, mode):
    """DepthToSpace by its definition, element by element: output channel ``c`` at spatial
    offset ``(i, j)`` inside a block reads input channel ``(i*bs + j)*C' + c`` (DCR: depth,
    then column, then row) or ``c*bs*bs + i*bs + j`` (CRD)."""
    b, c, h, w = x.shape
    cp = c // (bs * bs)
    y = np.empty((b, cp, h * bs, w * bs), dtype=x.dtype)
    for n in range(b):
        for k in range(cp):
            for p in range(h * bs):
                for q in range(w * bs):
                    i, j = p % bs, q % bs
                    src = (i * bs + j) * cp + k if mode == "DCR" else k * bs * bs + i * bs + j
                    y[n, k, p, q] = x[n, src, p // bs, q // bs]
    return y


def _s2d_loops(x, bs, mode):
    """SpaceToDepth element by element (the inverse mapping of :func:`_d2s_loops`)."""
    b, c, h, w = x.shape
    y = np.empty((b, c * bs * bs, h // bs, w // bs), dtype=x.dtype)
    for n in range(b):
        for k in range(c):
            for p in range(h):
                for q in range(w):
                    i, j = p % bs, q % bs
                    dst = (i * bs + j) * c + k if mode == "DCR" else k * bs * bs + i * bs + j
                    y[n, dst, p // bs, q // bs] = x[n, k, p, q]
    return y


@pytest.mark.parametrize("mode", ["DCR", "CRD"])
@pytest.mark.parametrize("shape,bs", [((1, 8, 2, 3), 2), ((2, 18, 1, 2), 3), ((1, 32, 2, 1), 4), ((2, 3, 2, 2), 1),
                                      ((0, 8, 2, 2), 2), ((1, 12, 0, 2), 2)])
def test_depth_space_oracles_match_index_loops(shape, bs, mode):
    x = np.arange(int(np.prod(shape)), dtype=np.float64).reshape(shape)
    y = creation.depth_to_space(x, bs, mode)
    assert np.array_equal(y, _d2s_loops(x, bs, mode))
    # SpaceToDepth is the reverse transformation, mode by mode
    assert np.array_equal(creation.space_to_depth(y, bs, mode), x)
    assert np.array_equal(creation.space_to_depth(y, bs, mode), _s2d_loops(y, bs, mode))
    if bs > 1 and shape[1] // (bs * bs) > 1 and 0 not in shape:  # the modes differ with more than one group
        other = "CRD" if mode == "DCR" else "DCR"
        assert not np.array_equal(y, creation.depth_to_space(x, bs, other))


def test_depth_space_oracle_versions_and_errors():
    x = np.arange(16.0).reshape(1, 8, 1, 2)
    ctx1, ctx11 = Ctx("DepthToSpace", 1, 1, {"input": "float"}), Ctx("DepthToSpace", 11, 11, {"input": "float"})
    assert np.array_equal(E["DepthToSpace"].oracle(ctx1, x, blocksize=2, mode="CRD"), creation.depth_to_space(x, 2))
    assert np.array_equal(E["DepthToSpace"].oracle(ctx11, x, blocksize=2, mode="CRD"),
                          creation.depth_to_space(x, 2, "CRD"))
    y = np.arange(16.0).reshape(1, 1, 4, 4)
    s13, s28 = Ctx("SpaceToDepth", 13, 13, {"input": "float"}), Ctx("SpaceToDepth", 28, 28, {"input": "float"})
    assert np.array_equal(E["SpaceToDepth"].oracle(s13, y, blocksize=2, mode="CRD"), creation.space_to_depth(y, 2))
    assert np.array_equal(E["SpaceToDepth"].oracle(s28, y, blocksize=2, mode="CRD"),
                          creation.space_to_depth(y, 2, "CRD"))
    for bad in (lambda: creation.depth_to_space(np.zeros((1, 6, 2, 2)), 2),
                lambda: creation.depth_to_space(np.zeros((4, 2, 2)), 2),
                lambda: creation.depth_to_space(np.zeros((1, 8, 2, 2)), 2, "RCD"),
                lambda: creation.space_to_depth(np.zeros((1, 1, 3, 4)), 2),
                lambda: creation.space_to_depth(np.zeros((1, 1, 4, 4)), 0)):
        with pytest.raises(ValueError):
            bad()


@pytest.mark.parametrize("module,op", [("depthtospace", "DepthToSpace"), ("spacetodepth", "SpaceToDepth")])
def test_depth_space_oracles_reproduce_onnx_node_tests(module, op):
    tests = _node_tests(module, op)
    for t in tests:
        node = t.model.graph.node[0]
        attrs = _attrs(node)
        ctx = Ctx(op, onnx.defs.get_schema(op, _opset(t.model)).since_version, _opset(t.model), {"input": "float"})
        for ins, outs in t.data_sets:
            got = E[op].oracle(ctx, np.asarray(ins[0], np.float64), **attrs)
            assert np.array_equal(got, np.asarray(outs[0], np.float64)), t.name
    assert len(tests) >= 2


def _d2s_kernel(op, flaw=None):
    """A DepthToSpace / SpaceToDepth kernel by gather indices (another path than the oracle's
    reshape/transpose); ``flaw`` injects one error."""

    def kernel(inputs, attrs, outputs, opset):
        (x,) = inputs.values()
        if x.ndim != 4:
            raise ValueError("rank")
        bs = attrs["blocksize"]
        if bs <= 0:
            raise ValueError("blocksize")
        mode = attrs.get("mode", "DCR") if opset >= (11 if op == "DepthToSpace" else 28) else "DCR"
        if mode not in ("DCR", "CRD"):
            raise ValueError("mode")
        if flaw == "modes-swapped":
            mode = {"DCR": "CRD", "CRD": "DCR"}[mode]
        if flaw == "mode-ignored":
            mode = "DCR"
        b, c, h, w = x.shape
        if op == "DepthToSpace":
            if c % (bs * bs):
                raise ValueError("channels")
            cp = c // (bs * bs)
            k, p, q = np.meshgrid(np.arange(cp), np.arange(h * bs), np.arange(w * bs), indexing="ij")
            i, j = p % bs, q % bs
            if flaw == "row-column-swapped":
                i, j = j, i
            src = (i * bs + j) * cp + k if mode == "DCR" else k * bs * bs + i * bs + j
            y = x[:, src, p // bs, q // bs]
        else:
            if h % bs or w % bs:
                raise ValueError("spatial")
            k, p, q = np.meshgrid(np.arange(c * bs * bs), np.arange(h // bs), np.arange(w // bs), indexing="ij")
            if mode == "DCR":
                blk, ch = k // c, k % c
            else:
                ch, blk = k // (bs * bs), k % (bs * bs)
            i, j = blk // bs, blk % bs
            if flaw == "row-column-swapped":
                i, j = j, i
            y = x[:, ch, p * bs + i, q * bs + j]
        if flaw == "through-float32" and x.dtype.kind == "f":
            y = y.astype(np.float32).astype(x.dtype)
        if flaw == "zero-canonicalized" and x.dtype.kind == "f":
            y = (y + np.zeros((), y.dtype)).astype(x.dtype)  # -0 + 0 = +0
        return {outputs[0]: np.ascontiguousarray(y)}

    return kernel


@pytest.fixture(scope="module")
def reference_results(suite):
    return run_cases(suite, resolve_backend("onnx-reference"))


def _reference_disagreement(case, res) -> str | None:
    """Why onnx.reference (onnx 1.23.2) and the suite disagree on ``case``; None if unknown.

    * ``trilu-k-overflow``: Trilu with ``k`` at the int64 extremes: onnx.reference's
      ``np.triu(x, k)`` raises ``OverflowError`` (numpy builds ``arange + k`` in C long); the
      text defines every ``k`` (all kept / all zero), the suite is right.
    * ``trilu-string-zero``: Trilu on strings: onnx.reference writes the integer ``0`` into the
      removed elements (numpy's ``triu`` on an object array), not a string; the suite writes
      ``""``, the zero value of a string tensor (what a TensorProto default holds).
    * ``trilu-rank1-accepted``: a rank-1 input ("Input tensor of rank 2 or higher") is
      accepted (numpy broadcasts it); the suite is right.
    * ``range-numpy-step``: double Range: onnx.reference's ``np.arange`` recomputes the step
      from its first two values (``(start + delta) - start``, rounded) and fills
      ``start + i * step'``: neither the text's ``start + i * delta`` nor the function body's
      repeated addition; the suite is right.
    * ``range-int64-count-in-double``: int64 Range whose ``limit - start`` exceeds 2^53:
      ``np.arange`` computes the count in float64, which cannot tell a limit one past a
      multiple of ``delta`` from the multiple itself (one element short); the text's formula
      is exact (the suite, Python's ``range`` and onnxruntime agree).
    * ``range-unchecked-inputs``: Range with a ``[1, 1]`` delta (the text: "Scalar") or a
      double ``limit`` beside float ``start``/``delta`` (one type ``T``) is accepted
      (``.item()`` and numpy promotion); the suite is right (onnxruntime rejects both).
    * ``eyelike-unchecked``: EyeLike with a rank-1 input ("Only 2D tensors are supported") or
      ``dtype`` STRING (not in T2) is accepted; the suite is right (onnx's checker rejects
      the string output type, onnxruntime both).
    * ``revseq-unchecked``: ReverseSequence with ``batch_axis`` 2, both axes 0, or int32
      ``sequence_lens`` (the schema: int64) is accepted (numpy indexes whatever it is given);
      the suite is right (onnxruntime rejects all three).
    * ``ccp-unchecked``: CenterCropPad with fewer ``shape`` entries than axes is accepted
      (onnx.reference zips them); the suite is right.
    * ``ccp-string-zero``: CenterCropPad on strings pads with the integer ``0`` (numpy's
      ``np.pad`` default on an object array), not a string; the suite pads with ``""``.
    * ``cos-string-value``: ConstantOfShape with a string ``value`` (STRING is not in T2) is
      accepted and fills strings; the suite is right (onnx's checker rejects it).
    * ``constant-sparse-unsupported``: Constant with ``sparse_value``: onnx.reference returns its
      own ``SparseTensor`` object (``TypeError``: "no ONNX corresponding type"), and at opset
      11 raises "Function attributes are not implemented for opset <= 11"; the output is a
      dense tensor of type T ("Output tensor containing the same value of the provided
      tensor"), which the suite expects.
    * (Constant with ``value_string(s)`` returns a numpy ``<U`` array where the suite has an
      object array of str: one ONNX STRING type, compared by value since issue 27.)
    * ``constant-two-attributes``: two value attributes ("Exactly one ... must be specified")
      are accepted; the suite is right (onnx's checker rejects the model).
    * ``mode-unchecked``: DepthToSpace with ``mode="RCD"``: the attribute defines DCR and
      CRD only; onnx.reference treats every other string as DCR and returns a result
      (the suite is right: onnxruntime rejects the model).  SpaceToDepth-28 raises
      ``ValueError`` at run time, which the runner reads as a clean ``unsupported`` (not a
      disagreement about the values).
    """
    if case.op in ("DepthToSpace", "SpaceToDepth") and case.tags.get("error") == "mode":
        return "mode-unchecked"
    if case.op == "Range":
        if case.expect_error and res.outcome == "fail" and case.tags["error"] in ("delta-shape", "limit-type"):
            return "range-unchecked-inputs"
        if res.outcome == "fail" and case.tags["dtype"] == "double" and _numpy_arange_differs(case):
            return "range-numpy-step"
        if res.outcome == "fail" and case.tags["dtype"] == "int64" and "shape" in (res.message or ""):
            start, limit, delta = (int(v) for v in _range_inputs(case))
            if len(np.arange(start, limit, delta)) != len(range(start, limit, delta)):
                return "range-int64-count-in-double"
    if case.op == "EyeLike" and res.outcome == "fail" and case.tags.get("error") in ("rank1", "dtype-string"):
        return "eyelike-unchecked"
    if case.op == "ReverseSequence" and res.outcome == "fail" and \
            case.tags.get("error") in ("batch-axis", "same-axes", "lens-type"):
        return "revseq-unchecked"
    if case.op == "CenterCropPad" and res.outcome == "fail":
        if case.tags.get("error") in ("shape-length", "axes-length"):
            return "ccp-unchecked"
        if case.tags["dtype"] == "string":
            return "ccp-string-zero"
    if case.op == "ConstantOfShape" and res.outcome == "fail" and case.tags.get("error") == "value-string":
        return "cos-string-value"
    if case.op == "Constant":
        if res.outcome == "fail" and case.tags.get("error") in ("two-attributes", "two-value-ints"):
            return "constant-two-attributes"
        if res.outcome in ("error", "unsupported") and case.tags.get("constant_form") == "sparse_value" and \
                ("SparseTensor" in (res.message or "") or "Function attributes" in (res.message or "")):
            return "constant-sparse-unsupported"
        if res.outcome == "fail" and case.tags.get("constant_form") in ("value_string", "value_strings") and \
                "dtype <U" in (res.message or ""):
            return "constant-string-dtype"
        if res.outcome == "unsupported" and case.tags.get("error") == "value-and-sparse" and case.opset <= 11:
            return "constant-sparse-unsupported"
    if case.op == "Trilu":
        if case.tags.get("error") == "rank1" and res.outcome == "fail":
            return "trilu-rank1-accepted"
        k = _trilu_k_of(case)
        if res.outcome == "error" and k is not None and abs(k) >= 2 ** 62 and "OverflowError" in (res.message or ""):
            return "trilu-k-overflow"
        if res.outcome == "fail" and case.tags["dtype"] == "string":
            return "trilu-string-zero"
    return None


def _reference_findings(cases, results):
    return sort_findings(cases, results, _reference_disagreement, key=lambda c, k, r: (c.op, k, r.outcome))


def test_depth_space_agreement_with_onnx_reference(suite, reference_results):
    cases = [c for c in suite if c.op in ("DepthToSpace", "SpaceToDepth")]
    res = [r for c, r in zip(suite, reference_results) if c.op in ("DepthToSpace", "SpaceToDepth")]
    why, unexplained = _reference_findings(cases, res)
    assert not unexplained, unexplained[:5]
    assert why == {("DepthToSpace", "mode-unchecked", "fail"): 3, ("SpaceToDepth", "mode-unchecked", "unsupported"): 1}
    assert sum(r.outcome == "pass" for r in res) >= len(res) - 4


def test_depth_space_legitimate_kernel_passes_everything(suite):
    cases = [c for c in suite if c.op in ("DepthToSpace", "SpaceToDepth")]
    res = _run(cases, {op: _d2s_kernel(op) for op in ("DepthToSpace", "SpaceToDepth")})
    assert not _not_passing(cases, res), _not_passing(cases, res)[:5]


@pytest.mark.parametrize("op", ["DepthToSpace", "SpaceToDepth"])
@pytest.mark.parametrize("flaw", ["modes-swapped", "mode-ignored", "row-column-swapped", "through-float32",
                                  "zero-canonicalized"])
def test_depth_space_wrong_kernel_is_caught(op, flaw, value_cases):
    cases = _of(value_cases, op)
    if flaw in ("modes-swapped", "mode-ignored"):  # only the versions with a mode attribute, CRD given
        cases = [c for c in cases if c.attributes.get("mode") == "CRD"]
    elif flaw == "through-float32":
        cases = [c for c in cases if c.tags["dtype"] == "double"]
    elif flaw == "zero-canonicalized":
        cases = [c for c in cases if c.tags["numerics"] == "special"]
    assert cases
    res = _run(cases, {op: _d2s_kernel(op, flaw)}, check=False)
    assert _caught(cases, res) >= 1, flaw


def test_depth_space_coverage(value_cases):
    for op in ("DepthToSpace", "SpaceToDepth"):
        cases = _of(value_cases, op)
        cov = compute_coverage(cases)["ops"][op]["versions"]
        assert all(v["gaps"] == 0 and v["covered"] for v in cov.values()), op
        # DCR and CRD differ only with more than one channel group: every mode version has
        # CRD cases that tell them apart, and blocksizes 1 to 4, zero-size inputs
        for v in {c.since_version for c in cases}:
            vc = [c for c in cases if c.since_version == v]
            shapes = {c.tags["shape"] for c in vc}
            assert {"bs1", "zero-size/batch", "zero-size/spatial"} <= shapes
            assert {c.attributes["blocksize"] for c in vc} == {1, 2, 3, 4}
            if v >= (11 if op == "DepthToSpace" else 28):
                crd = [c for c in vc if c.attributes.get("mode") == "CRD" and 0 not in c.inputs[0].shape
                       and c.attributes["blocksize"] > 1]
                bs2 = {id(c): c.attributes["blocksize"] ** 2 for c in crd}
                groups = {(c.inputs[0].shape[1] if op == "DepthToSpace" else c.inputs[0].shape[1] * bs2[id(c)])
                          // bs2[id(c)] for c in crd}
                assert max(groups) > 1, (op, v)
                assert {c.tags["params"] for c in vc} == {"mode-absent", "explicit-default", "CRD"}
        # every value case is compared exactly, signed zeros included
        for c in cases:
            tol = c.outputs[0].tolerance
            assert tol.exact and (tol.signed_zero or V.kind(c.tags["dtype"]) != V.FLOAT)


# ============================================================================ Shape / Size
def test_shape_slice_is_python_slicing():
    """Shape-15's rule (negative axes from the back, both clamped to [0, r], start > end
    empty) is exactly Python's slice semantics on the list of dims: an independent formula."""
    for r in range(0, 5):
        dims = tuple(range(2, 2 + r))
        for start in range(-7, 8):
            assert creation.shape_slice(dims, start) == list(dims)[start:]
            for end in range(-7, 8):
                assert creation.shape_slice(dims, start, end) == list(dims)[start:end], (r, start, end)
        assert creation.shape_slice(dims, -(2 ** 63), 2 ** 63 - 1) == list(dims)
        assert creation.shape_slice(dims, 2 ** 63 - 1) == []


def test_shape_and_size_oracles_reproduce_onnx_node_tests():
    tests = _node_tests("shape", "Shape") + _node_tests("size", "Size")
    for t in tests:
        node = t.model.graph.node[0]
        opset = _opset(t.model)
        ctx = Ctx(node.op_type, onnx.defs.get_schema(node.op_type, opset).since_version, opset, {"data": "float"})
        for ins, outs in t.data_sets:
            got = E[node.op_type].oracle(ctx, np.asarray(ins[0], np.float64), **_attrs(node))
            assert np.asarray(got).tolist() == np.asarray(outs[0]).tolist(), t.name
    assert len(tests) >= 10
    # the text's examples (Shape-15 onward), input [2, 3, 4]
    ctx = Ctx("Shape", 25, 25, {"data": "float"})
    x = np.zeros((2, 3, 4))
    for attrs, want in (({}, [2, 3, 4]), ({"start": -1}, [4]), ({"end": -1}, [2, 3]), ({"start": 1, "end": 2}, [3])):
        assert list(E["Shape"].oracle(ctx, x, **attrs)) == want
    # before 15 there is no slicing
    assert list(E["Shape"].oracle(Ctx("Shape", 13, 13, {"data": "float"}), x)) == [2, 3, 4]
    assert int(E["Size"].oracle(ctx, np.zeros((2, 0, 3)))) == 0 and int(E["Size"].oracle(ctx, np.float64(1))) == 1


def _shape_kernel(op, flaw=None):
    def kernel(inputs, attrs, outputs, opset):
        (x,) = inputs.values()
        if op == "Size":
            n = x.ndim if flaw == "size-is-rank" else (
                int(np.prod([d for d in x.shape if d])) if flaw == "zero-dims-skipped" else x.size)
            return {outputs[0]: np.array(n, dtype=np.int32 if flaw == "int32" else np.int64)}
        dims = list(x.shape)
        if opset < 15:
            return {outputs[0]: np.array(dims, dtype=np.int64)}
        start, end = attrs.get("start", 0), attrs.get("end", len(dims))
        if flaw == "negative-start-ignored" and start < 0:
            start = 0
        if flaw == "end-inclusive" and "end" in attrs:
            end = end + 1 if end != -1 else len(dims)
        if flaw == "no-clamp":  # out-of-range axes rejected instead of clamped
            for a in (start, end):
                if not -len(dims) <= a <= len(dims):
                    raise ValueError("axis out of range")
        out = np.array(dims[start:end], dtype=np.int32 if flaw == "int32" else np.int64)
        return {outputs[0]: out}

    return kernel


def test_shape_size_agreement_with_onnx_reference(suite, reference_results):
    pairs = [(c, r) for c, r in zip(suite, reference_results) if c.op in ("Shape", "Size")]
    assert pairs and all(r.outcome == "pass" for _, r in pairs), [(c.id, r.message) for c, r in pairs
                                                                   if r.outcome != "pass"][:5]


def test_shape_size_legitimate_kernel_passes_everything(suite):
    cases = [c for c in suite if c.op in ("Shape", "Size")]
    res = _run(cases, {op: _shape_kernel(op) for op in ("Shape", "Size")})
    assert not _not_passing(cases, res), _not_passing(cases, res)[:5]


@pytest.mark.parametrize("op,flaw,where", [
    ("Shape", "negative-start-ignored", lambda c: c.attributes.get("start", 0) < 0 and c.tags["rank"] > 0),
    ("Shape", "end-inclusive", lambda c: "end" in c.attributes),
    ("Shape", "no-clamp", lambda c: c.tags["params"] in ("start=-10", "end=10", "int64-extremes")),
    ("Shape", "int32", lambda c: True),
    ("Size", "size-is-rank", lambda c: True),
    ("Size", "zero-dims-skipped", lambda c: 0 in c.inputs[0].shape),
    ("Size", "int32", lambda c: True),
])
def test_shape_size_wrong_kernel_is_caught(op, flaw, where, suite):
    cases = [c for c in _of(suite, op) if where(c)]
    assert cases
    res = _run(cases, {op: _shape_kernel(op, flaw)}, check=False)
    assert _caught(cases, res) >= 1, flaw


def test_shape_size_coverage(value_cases):
    for op in ("Shape", "Size"):
        cases = _of(value_cases, op)
        cov = compute_coverage(cases)["ops"][op]["versions"]
        assert all(v["gaps"] == 0 and v["covered"] for v in cov.values()), op
        for v in {c.since_version for c in cases}:
            vc = [c for c in cases if c.since_version == v]
            assert {c.tags["rank"] if op == "Shape" else len(c.inputs[0].shape) for c in vc} >= (
                {1} if op == "Shape" else set(range(7)))
            assert any(0 in c.inputs[0].shape for c in vc) and any(c.inputs[0].shape == () for c in vc)
        assert all(c.outputs[0].tolerance.exact for c in cases)
    # Shape-15 onward: every start/end state, negative and clamped ones among them
    shape15 = [c for c in _of(value_cases, "Shape") if c.since_version >= 15]
    states = {c.tags["params"] for c in shape15}
    assert {"start=-1", "end=-1", "start=-10", "end=10", "start=2/end=1", "int64-extremes", "default",
            "explicit-default"} <= states
    # an empty result and a rank-0 input with slicing
    assert any(c.datasets[0].outputs["shape"].size == 0 for c in shape15)


# ============================================================================ Trilu
def _trilu_k_of(case):
    """The ``k`` a Trilu case feeds (graph input or initializer), or None when absent."""
    k = next((i for i in case.inputs if i.name == "k" and i.present), None)
    if k is None:
        return None
    return int(k.value if k.initializer else case.datasets[0].inputs["k"])


def _trilu_loops(x, k, upper, zero):
    y = np.array(x, dtype=object)
    for idx in np.ndindex(*x.shape):
        i, j = idx[-2], idx[-1]
        if not ((j - i >= k) if upper else (j - i <= k)):
            y[idx] = zero
    return y


def test_trilu_oracle_matches_numpy_and_loops():
    rng = np.random.default_rng(7)
    for shape in ((3, 3), (2, 5), (5, 2), (2, 3, 4), (2, 1, 3, 3), (0, 4), (1, 6)):
        x = rng.normal(size=shape)
        for k in range(-7, 8):
            for upper in (0, 1):
                want = np.triu(x, k) if upper else np.tril(x, k)
                got = creation.trilu(x, k, upper)
                assert np.array_equal(got, want), (shape, k, upper)
                if x.ndim == 2:
                    assert np.array_equal(got, _trilu_loops(x, k, upper, 0.0).astype(np.float64))
        for k in (2 ** 63 - 1, -(2 ** 63)):  # beyond every diagonal: all kept or all zero
            assert np.array_equal(creation.trilu(x, k, 1), np.zeros(shape) if k > 0 else x)
            assert np.array_equal(creation.trilu(x, k, 0), x if k > 0 else np.zeros(shape))
    # the removed elements are the type's zero: +0.0 (not -0.0, not NaN*0), "" for strings
    y = creation.trilu(np.array([[-1.0, np.nan], [np.inf, -0.0]]), 0, 1)
    assert y[1, 0] == 0 and not np.signbit(y[1, 0]) and np.isnan(y[0, 1]) and np.signbit(y[1, 1])
    s = np.array([["a", "b"], ["c", "d"]], dtype=object)
    assert E["Trilu"].oracle(Ctx("Trilu", 14, 14, {"input": "string"}), s, None, upper=0).tolist() == [["a", ""],
                                                                                                      ["c", "d"]]
    with pytest.raises(ValueError):
        creation.trilu(np.zeros(3), 0, 1)


def test_trilu_oracle_reproduces_onnx_node_tests():
    tests = _node_tests("trilu", "Trilu")
    for t in tests:
        node = t.model.graph.node[0]
        for ins, outs in t.data_sets:
            x = np.asarray(ins[0])
            types = {"input": V.name_of(t.model.graph.input[0].type.tensor_type.elem_type)}
            k = np.asarray(ins[1]) if len(ins) > 1 else None
            got = E["Trilu"].oracle(Ctx("Trilu", 14, _opset(t.model), types), V.to_exact(x, types["input"]),
                                    None if k is None else V.to_exact(k, "int64"), **_attrs(node))
            assert V.to_type(got, types["input"]).tolist() == np.asarray(outs[0]).tolist(), t.name
    assert len(tests) >= 15


def _trilu_kernel(flaw=None):
    def kernel(inputs, attrs, outputs, opset):
        x = inputs["input"]
        if x.ndim < 2:
            raise ValueError("rank")
        k = int(inputs["k"]) if "k" in inputs else 0
        upper = attrs.get("upper", 1)
        n, m = x.shape[-2:]
        if flaw == "k-off-by-one":
            k += 1
        elif flaw == "k-ignored":
            k = 0
        elif flaw == "upper-inverted":
            upper = 1 - upper
        elif flaw == "k-clamped-to-matrix":  # beyond-the-matrix k pulled back to the last diagonal
            k = min(max(k, -(n - 1)), m - 1)
        k = min(max(k, -(n + 1)), m + 1)  # equivalent for every k: no overflow below
        keep = (np.arange(m)[None, :] - np.arange(n)[:, None]) >= k if upper else \
            (np.arange(m)[None, :] - np.arange(n)[:, None]) <= k
        if flaw == "first-matrix-only" and x.ndim > 2:
            keep = np.where(np.arange(x.shape[-3]).reshape((-1, 1, 1)) == 0, keep, True)
        zero = "" if x.dtype == object else np.zeros((), x.dtype)
        if flaw == "mask-multiply" and x.dtype.kind in "fc":
            y = x * keep.astype(x.dtype)
        else:
            y = np.where(keep, x, zero)
        return {outputs[0]: np.asarray(y, dtype=x.dtype)}

    return kernel


def test_trilu_legitimate_kernel_passes_everything(suite):
    cases = _of(suite, "Trilu")
    res = _run(cases, {"Trilu": _trilu_kernel()})
    assert not _not_passing(cases, res), _not_passing(cases, res)[:5]


@pytest.mark.parametrize("flaw,where", [
    ("k-off-by-one", lambda c: _trilu_k_of(c) is not None),
    ("k-ignored", lambda c: _trilu_k_of(c) not in (None, 0)),
    ("upper-inverted", lambda c: True),
    ("k-clamped-to-matrix", lambda c: _trilu_k_of(c) is not None),
    ("first-matrix-only", lambda c: c.tags["shape"].startswith("batch")),
    ("mask-multiply", lambda c: c.tags["numerics"] == "special"),
])
def test_trilu_wrong_kernel_is_caught(flaw, where, value_cases):
    cases = [c for c in _of(value_cases, "Trilu") if where(c)]
    assert cases
    res = _run(cases, {"Trilu": _trilu_kernel(flaw)}, check=False)
    assert _caught(cases, res) >= 1, flaw


def test_trilu_agreement_with_onnx_reference(suite, reference_results):
    pairs = [(c, r) for c, r in zip(suite, reference_results) if c.op == "Trilu"]
    why, unexplained = _reference_findings(*zip(*pairs))
    assert not unexplained, unexplained[:5]
    assert {k for _, k, _ in why} == {"trilu-k-overflow", "trilu-string-zero", "trilu-rank1-accepted"}, why
    assert sum(r.outcome == "pass" for _, r in pairs) >= 0.85 * len(pairs)


def test_trilu_coverage(value_cases):
    cases = _of(value_cases, "Trilu")
    cov = compute_coverage(cases)["ops"]["Trilu"]["versions"]
    assert all(v["gaps"] == 0 and v["covered"] for v in cov.values())
    ks = {_trilu_k_of(c) for c in cases}
    assert None in ks and {0, 1, -1, 2 ** 63 - 1, -(2 ** 63)} <= ks
    # k beyond the matrix on both sides, with upper and lower
    beyond = {(c.attributes.get("upper", 1), _trilu_k_of(c) > 0) for c in cases
              if _trilu_k_of(c) is not None and not -c.inputs[0].shape[-2] < _trilu_k_of(c) < c.inputs[0].shape[-1]}
    assert beyond == {(0, True), (0, False), (1, True), (1, False)}
    assert {c.tags["shape"] for c in cases} >= {"square", "wide", "tall", "batch", "batch2", "zero-size/rows"}
    assert {c.tags["params"] for c in cases} == {"default", "explicit-default", "lower"}
    assert all(c.outputs[0].tolerance.exact for c in cases)


# ============================================================================ Range
def _range_inputs(case):
    vals = {}
    for i in case.inputs:
        vals[i.name] = (i.value if i.initializer else case.datasets[0].inputs[i.name]).reshape(()).item()
    return vals["start"], vals["limit"], vals["delta"]


def _numpy_arange_differs(case) -> bool:
    """numpy's ``arange`` (what onnx.reference runs) on the case's inputs is outside the
    case's tolerance: the step it recomputes from its first two values is not ``delta``."""
    start, limit, delta = _range_inputs(case)
    got = np.arange(start, limit, delta).astype(np.float64)
    want = case.datasets[0].outputs["output"].astype(np.float64)
    return got.shape == want.shape and bool(np.any(np.abs(got - want) > case.outputs[0].tolerance.atol))


def test_range_oracle_examples_and_independent_counts():
    ctx = Ctx("Range", 11, 11, {"start": "int32", "limit": "int32", "delta": "int32"})
    o = E["Range"].oracle
    assert list(o(ctx, *(np.array(v, dtype=object) for v in (3, 9, 3)))) == [3, 6]  # the text's example 1
    assert list(o(ctx, *(np.array(v, dtype=object) for v in (10, 4, -2)))) == [10, 8, 6]  # example 2
    # integers: Python's range has the same count rule, max(ceil((limit - start) / delta), 0)
    rng = np.random.default_rng(3)
    for _ in range(500):
        a, b, d = (int(v) for v in rng.integers(-50, 51, 3))
        if d:
            assert list(o(ctx, *(np.array(v, dtype=object) for v in (a, b, d)))) == list(range(a, b, d))
    big = (-(2 ** 63), 2 ** 63 - 1, 2 ** 62 + 1)  # beyond double and beyond int64 intermediates
    assert list(o(ctx, *(np.array(v, dtype=object) for v in big))) == list(range(*big))
    # floats: start + i*delta, exact in float64 for these float32 inputs; the count is the ceiling
    fctx = Ctx("Range", 11, 11, {"start": "float", "limit": "float", "delta": "float"})
    for _ in range(200):
        a, d = float(np.float32(rng.uniform(-10, 10))), float(np.float32(rng.uniform(0.1, 3) * rng.choice([-1, 1])))
        b = float(np.float32(a + (int(rng.integers(0, 30)) + 0.5) * d))
        got = o(fctx, np.array(a), np.array(b), np.array(d))
        n = math.ceil((Fraction(b) - Fraction(a)) / Fraction(d))
        assert len(got) == max(n, 0)
        assert np.array_equal(got, np.float64(a) + np.arange(len(got), dtype=np.float64) * np.float64(d))
    assert creation.range_count(0.0, 0.0, 1.0) == 0 and creation.range_count(1.0, 0.0, 1.0) == 0


def test_range_oracle_reproduces_onnx_node_tests():
    tests = _node_tests("rangeop", "Range")
    for t in tests:
        types = {f: V.name_of(vi.type.tensor_type.elem_type) for f, vi in zip(("start", "limit", "delta"),
                                                                              t.model.graph.input)}
        ctx = Ctx("Range", 11, _opset(t.model), types)
        for ins, outs in t.data_sets:
            got = E["Range"].oracle(ctx, *(V.to_exact(np.asarray(x), types["start"]) for x in ins))
            assert V.to_type(got, types["start"]).tolist() == np.asarray(outs[0]).tolist(), t.name
    assert len(tests) >= 2


def test_range_counts_are_unambiguous(value_cases):
    """Every floating case sizes alike in exact arithmetic, in T, in the stash type and in
    float64 (and float32 for the types it holds): the count is never a rounding question."""
    cases = [c for c in _of(value_cases, "Range") if V.kind(c.tags["dtype"]) == V.FLOAT]
    assert len(cases) >= 40
    for c in cases:
        t = c.tags["dtype"]
        start, limit, delta = _range_inputs(c)
        n = c.datasets[0].outputs["output"].shape[0]
        assert n == creation.range_count(start, limit, delta)
        for p in {t, "double"} | ({"float"} if t != "double" else set()):
            P = V.np_dtype(p).type
            assert max(math.ceil(float((P(limit) - P(start)) / P(delta))), 0) == n, (c.id, p)


def _range_kernel(flaw=None, mode="one"):
    """Range at the mandated precision: ``mode`` one (exact, rounded once), two (two roundings)
    or repeated (the function body's additions); ``flaw`` injects one error."""

    def kernel(inputs, attrs, outputs, opset):
        start, limit, delta = (inputs[k] for k in ("start", "limit", "delta"))
        if any(np.ndim(v) for v in (start, limit, delta)):
            raise ValueError("scalars only")
        if not start.dtype == limit.dtype == delta.dtype:
            raise ValueError("one type T")
        dt = start.dtype
        a, b, d = (v.item() for v in (start, limit, delta))
        if dt.kind == "i":
            a, b, d = int(a), int(b), int(d)
            span = b - a
            if flaw == "span-in-type":  # limit - start wraps around in T
                bits = dt.itemsize * 8
                span = (span + 2 ** (bits - 1)) % 2 ** bits - 2 ** (bits - 1)
            if flaw == "count-through-double":
                n = max(math.ceil(float(span) / float(d)), 0)
            elif flaw == "count-truncated":  # integer division in T
                n = max(int(span / d) if abs(span) < 2 ** 52 else span // d, 0)
            else:
                n = max(-(-span // d), 0)
            if flaw == "count-floor-plus-one":
                n = max(span // d + 1, 0)
            if flaw == "limit-inclusive" and n >= 0 and a + n * d == b:
                n += 1
            vals = [a + i * d for i in range(n)]
            return {outputs[0]: np.array(vals, dtype=np.int64).astype(dt)}
        stash = V.name_of(int(attrs.get("stash_type", 1))) if opset >= 27 and dt in (np.float16, ml_dtypes.bfloat16) \
            else None
        if flaw == "stash-ignored":
            stash = None
        P = np.dtype(stash and V.np_dtype(stash) or dt).type
        with np.errstate(all="ignore"):
            q = (P(b) - P(a)) / P(d)
        n = max(math.ceil(float(q)), 0)
        if flaw == "count-floor-plus-one":
            n = max(math.floor(float(q)) + 1, 0)
        if flaw == "limit-inclusive" and n and float(P(a) + P(n) * P(d)) == float(P(b)):
            n += 1
        if flaw == "numpy-step":
            y = np.arange(P(a), P(b), P(d), dtype=P)
        elif mode == "repeated" or flaw == "stash-ignored":
            y, x = np.empty(n, dtype=P), P(a)
            for i in range(n):
                y[i], x = x, P(x + P(d))
        elif mode == "two":
            y = (P(a) + (np.arange(n).astype(P) * P(d)).astype(P)).astype(P)
        else:
            y = np.array([float(Fraction(a) + i * Fraction(d)) for i in range(n)])
        return {outputs[0]: np.asarray(y).astype(dt)}

    return kernel


@pytest.mark.parametrize("mode", ["one", "two", "repeated"])
def test_range_legitimate_kernels_pass_everything(mode, suite):
    cases = _of(suite, "Range")
    res = _run(cases, {"Range": _range_kernel(mode=mode)})
    assert not _not_passing(cases, res), _not_passing(cases, res)[:5]


@pytest.mark.parametrize("flaw,where", [
    ("count-floor-plus-one", lambda c: c.tags["numerics"] in ("integral", "int")),
    ("limit-inclusive", lambda c: c.tags["numerics"] in ("integral", "int")),
    ("count-truncated", lambda c: c.tags["numerics"] == "int"),
    ("count-through-double", lambda c: c.tags["dtype"] == "int64" and c.tags["numerics"] == "int-span"),
    ("span-in-type", lambda c: c.tags["numerics"] == "int-span"),
    ("stash-ignored", lambda c: c.tags["dtype"] in ("float16", "bfloat16")),
    ("numpy-step", lambda c: c.tags["dtype"] in ("float", "double")),
])
def test_range_wrong_kernel_is_caught(flaw, where, value_cases):
    cases = [c for c in _of(value_cases, "Range") if where(c)]
    assert cases
    res = _run(cases, {"Range": _range_kernel(flaw)}, check=False)
    assert _caught(cases, res) >= 1, flaw


def test_range_agreement_with_onnx_reference(suite, reference_results):
    pairs = [(c, r) for c, r in zip(suite, reference_results) if c.op == "Range"]
    why, unexplained = _reference_findings(*zip(*pairs))
    assert not unexplained, unexplained[:5]
    assert {k for _, k, _ in why} == {"range-numpy-step", "range-unchecked-inputs", "range-int64-count-in-double"}, why
    assert sum(r.outcome == "pass" for _, r in pairs) >= 0.9 * len(pairs)


def test_range_coverage_and_tolerances(value_cases):
    cases = _of(value_cases, "Range")
    cov = compute_coverage(cases)["ops"]["Range"]["versions"]
    assert all(v["gaps"] == 0 and v["covered"] for v in cov.values())
    for t in ("float", "double", "int16", "int32", "int64", "float16", "bfloat16"):
        tc = [c for c in cases if c.tags["dtype"] == t]
        assert any(c.datasets[0].outputs["output"].size == 0 for c in tc), t  # empty ranges
        assert any(_range_inputs(c)[2] < 0 for c in tc) and any(_range_inputs(c)[2] > 0 for c in tc), t
    assert {c.tags["params"] for c in cases if c.since_version == 27} == {"default", "explicit-default", "stash=double"}
    # integers exact; floats exact where every legitimate evaluation agrees, else the variants' spread,
    # never more than a few ulps of the largest output (repeated addition over <= 250 steps)
    for c in cases:
        tol = c.outputs[0].tolerance
        if V.kind(c.tags["dtype"]) == V.INT:
            assert tol.exact
        else:
            y = c.datasets[0].outputs["output"].astype(np.float64)
            assert tol.rtol == 0 and {v.split("-")[0] for v in tol.variants} == {"one", "two", "repeated"}
            if y.size:
                ulp = float(np.spacing(np.max(np.abs(y)).astype(V.np_dtype(c.tags["dtype"]))))
                assert tol.atol <= 256 * ulp + 1e-300
    assert any(c.outputs[0].tolerance.exact for c in cases if V.kind(c.tags["dtype"]) == V.FLOAT)


# ============================================================================ EyeLike
def test_eyelike_oracle_matches_numpy_eye():
    for n, m in ((3, 3), (2, 5), (5, 2), (1, 4), (4, 1), (0, 3), (3, 0), (1, 1)):
        for k in range(-7, 8):
            assert np.array_equal(creation.eye_like((n, m), k), np.eye(n, m, k)), (n, m, k)
        for k in (2 ** 63 - 1, -(2 ** 63)):
            assert not creation.eye_like((n, m), k).any()
    with pytest.raises(ValueError):
        creation.eye_like((3,), 0)


def test_eyelike_oracle_reproduces_onnx_node_tests():
    tests = _node_tests("eyelike", "EyeLike")
    for t in tests:
        node = t.model.graph.node[0]
        out_t = V.name_of(t.model.graph.output[0].type.tensor_type.elem_type)
        for ins, outs in t.data_sets:
            got = E["EyeLike"].oracle(Ctx("EyeLike", 9, _opset(t.model), {"input": "float"}), np.asarray(ins[0]),
                                      **_attrs(node))
            assert V.to_type(got, out_t).tolist() == np.asarray(outs[0]).tolist(), t.name
    assert len(tests) >= 3


def _eyelike_kernel(flaw=None):
    def kernel(inputs, attrs, outputs, opset):
        x = inputs["input"]
        if x.ndim != 2:
            raise ValueError("rank")
        dtype = attrs.get("dtype")
        if dtype is not None and dtype not in range(1, 17) or dtype == 8:
            raise ValueError("dtype")
        dt = V.np_dtype(V.name_of(dtype)) if dtype is not None and flaw != "dtype-ignored" else x.dtype
        k = attrs.get("k", 0)
        n, m = x.shape
        if flaw == "k-ignored":
            k = 0
        elif flaw == "k-negated":
            k = -k
        elif flaw == "k-clamped":
            k = min(max(k, -(n - 1)), m - 1)
        k = min(max(k, -n), m)  # equivalent for every k, no overflow
        return {outputs[0]: np.eye(n, m, k).astype(dt)}

    return kernel


def _eye_types(case):
    """(T1, T2) of an EyeLike case: the input's and the output's element types."""
    return case.tags["dtype"], V.name_of(case.outputs[0].elem_type)


def test_eyelike_legitimate_kernel_passes_everything(suite):
    cases = _of(suite, "EyeLike")
    res = _run(cases, {"EyeLike": _eyelike_kernel()})
    assert not _not_passing(cases, res), _not_passing(cases, res)[:5]


@pytest.mark.parametrize("flaw,where", [
    ("k-ignored", lambda c: c.attributes.get("k", 0) != 0),
    ("k-negated", lambda c: c.attributes.get("k", 0) != 0),
    ("k-clamped", lambda c: c.attributes.get("k", 0) != 0),
    ("dtype-ignored", lambda c: _eye_types(c)[0] != _eye_types(c)[1]),
])
def test_eyelike_wrong_kernel_is_caught(flaw, where, value_cases):
    cases = [c for c in _of(value_cases, "EyeLike") if where(c)]
    assert cases
    res = _run(cases, {"EyeLike": _eyelike_kernel(flaw)}, check=False)
    assert _caught(cases, res) >= 1, flaw


def test_eyelike_agreement_with_onnx_reference(suite, reference_results):
    pairs = [(c, r) for c, r in zip(suite, reference_results) if c.op == "EyeLike"]
    why, unexplained = _reference_findings(*zip(*pairs))
    assert not unexplained, unexplained[:5]
    assert {k for _, k, _ in why} == {"eyelike-unchecked"}, why
    assert all(r.outcome == "pass" for c, r in pairs if c.expect_error is None)


def test_eyelike_coverage(value_cases):
    cases = _of(value_cases, "EyeLike")
    cov = compute_coverage(cases)["ops"]["EyeLike"]["versions"]
    assert all(v["gaps"] == 0 and v["covered"] for v in cov.values())
    assert {(c.since_version, _eye_types(c)) for c in cases} == {
        (int(v), (a, b)) for v, e in cov.items() for a in e["type_params"]["T1"] for b in e["type_params"]["T2"]}
    for v in (9, 22):
        vc = [c for c in cases if c.since_version == v]
        same = [c for c in vc if _eye_types(c)[0] == _eye_types(c)[1]]
        assert same and all(("dtype" in c.attributes) == (v == 22) for c in same)
        assert all("dtype" in c.attributes for c in vc if c not in same)
        ks = {c.attributes.get("k") for c in vc}
        assert {None, 0, 1, -1, 100, -100, 2 ** 63 - 1, -(2 ** 63)} <= ks
        # k beyond the matrix (no diagonal at all) on non-empty, non-square matrices
        assert any(not c.datasets[0].outputs["output"].any() and c.tags["shape"] in ("wide", "tall") for c in vc)
        assert {c.tags["shape"] for c in vc} >= {"square", "wide", "tall", "zero-size/rows", "zero-size/columns"}


# ============================================================================ ReverseSequence
def _revseq_loops(x, lens, batch_axis, time_axis):
    y = np.empty_like(x)
    for idx in np.ndindex(*x.shape):
        b, t = idx[batch_axis], idx[time_axis]
        n = int(lens[b])
        src = list(idx)
        src[time_axis] = n - 1 - t if t < n else t
        y[idx] = x[tuple(src)]
    return y


def test_revseq_oracle_matches_loops_and_examples():
    rng = np.random.default_rng(11)
    for shape, (ba, ta) in (((5, 3), (1, 0)), ((3, 5), (0, 1)), ((4, 2, 3), (1, 0)), ((2, 4, 2, 2), (0, 1))):
        x = rng.normal(size=shape)
        for _ in range(5):
            lens = rng.integers(0, shape[ta] + 1, size=shape[ba])
            assert np.array_equal(creation.reverse_sequence(x, lens, ba, ta), _revseq_loops(x, lens, ba, ta))
    tests = _node_tests("reversesequence", "ReverseSequence")
    for t in tests:
        for ins, outs in t.data_sets:
            got = E["ReverseSequence"].oracle(Ctx("ReverseSequence", 10, 10, {"input": "float"}), np.asarray(ins[0]),
                                              np.asarray(ins[1]), **_attrs(t.model.graph.node[0]))
            assert np.array_equal(got, np.asarray(outs[0])), t.name
    assert len(tests) >= 2
    for bad in (((4,), [1], 1, 0), ((3, 2), [1, 1], 0, 0), ((3, 2), [1, 1, 1], 1, 0), ((3, 2), [4, 1], 1, 0)):
        with pytest.raises(ValueError):
            creation.reverse_sequence(np.zeros(bad[0]), *bad[1:])


def _revseq_kernel(flaw=None):
    def kernel(inputs, attrs, outputs, opset):
        x, lens = inputs["input"], inputs["sequence_lens"]
        ba, ta = attrs.get("batch_axis", 1), attrs.get("time_axis", 0)
        if x.ndim < 2 or {ba, ta} != {0, 1} or lens.dtype != np.int64 or lens.shape != (x.shape[ba],):
            raise ValueError("invalid")
        if flaw == "axes-ignored":
            ba, ta = 1, 0
        y = x.copy()
        xt = np.moveaxis(x, (ba, ta), (0, 1))
        yt = np.moveaxis(y, (ba, ta), (0, 1))  # a view: writes go to y
        for b in range(min(xt.shape[0], len(lens))):
            n = int(lens[b])
            if flaw == "lens-ignored":
                n = xt.shape[1]
            elif flaw == "lens-off-by-one":
                n = max(n - 1, 0)
            if flaw == "tail-reversed":
                yt[b, n:] = xt[b, n:][::-1]
            else:
                yt[b, :n] = xt[b, :n][::-1]
        return {outputs[0]: y}

    return kernel


def test_revseq_legitimate_kernel_passes_everything(suite):
    cases = _of(suite, "ReverseSequence")
    res = _run(cases, {"ReverseSequence": _revseq_kernel()})
    assert not _not_passing(cases, res), _not_passing(cases, res)[:5]


@pytest.mark.parametrize("flaw,where", [
    ("lens-ignored", lambda c: True),
    ("lens-off-by-one", lambda c: True),
    ("tail-reversed", lambda c: True),
    ("axes-ignored", lambda c: c.attributes.get("batch_axis") == 0),
])
def test_revseq_wrong_kernel_is_caught(flaw, where, value_cases):
    cases = [c for c in _of(value_cases, "ReverseSequence") if where(c)]
    assert cases
    res = _run(cases, {"ReverseSequence": _revseq_kernel(flaw)}, check=False)
    assert _caught(cases, res) >= 1, flaw


def test_revseq_agreement_with_onnx_reference(suite, reference_results):
    pairs = [(c, r) for c, r in zip(suite, reference_results) if c.op == "ReverseSequence"]
    why, unexplained = _reference_findings(*zip(*pairs))
    assert not unexplained, unexplained[:5]
    assert {k for _, k, _ in why} == {"revseq-unchecked"}, why
    assert all(r.outcome == "pass" for c, r in pairs if c.expect_error is None)


def test_revseq_coverage(value_cases):
    cases = _of(value_cases, "ReverseSequence")
    cov = compute_coverage(cases)["ops"]["ReverseSequence"]["versions"]
    assert all(v["gaps"] == 0 and v["covered"] for v in cov.values())
    for v in (10, 28):
        vc = [c for c in cases if c.since_version == v]
        layouts = {(c.attributes.get("batch_axis", 1), c.attributes.get("time_axis", 0)) for c in vc}
        assert layouts == {(1, 0), (0, 1)}
        fed = [c for c in vc if "sequence_lens" in c.datasets[0].inputs]
        lens = [int(x) for c in fed for x in c.datasets[0].inputs["sequence_lens"]]
        assert 0 in lens and 1 in lens
        # a full-length reversal and one shorter than the time axis in the same batch
        full = [c for c in fed if 0 not in c.inputs[0].shape
                and max(c.datasets[0].inputs["sequence_lens"]) == c.inputs[0].shape[c.attributes.get("time_axis", 0)]
                and min(c.datasets[0].inputs["sequence_lens"]) < c.inputs[0].shape[c.attributes.get("time_axis", 0)]]
        assert full
        assert {c.tags["shape"] for c in vc} >= {"zero-size/batch", "zero-size/time", "time-major/r4/explicit"}


# ============================================================================ CenterCropPad
def _ccp_kernel(flaw=None):
    """CenterCropPad by padding then slicing (the function body's plan, in numpy)."""

    def kernel(inputs, attrs, outputs, opset):
        x, shape = inputs["input_data"], [int(v) for v in inputs["shape"]]
        r = x.ndim
        axes = attrs.get("axes", list(range(r)))
        if flaw == "axes-ignored":
            axes = list(range(len(shape)))
        if len(axes) != len(shape) or any(not -r <= a < r for a in axes):
            raise ValueError("shape/axes")
        axes = [a % r for a in axes] if flaw != "negative-axes-as-first" else [max(a, 0) for a in axes]
        pads = [(0, 0)] * r
        for a, t in zip(axes, shape):
            d = max(t - x.shape[a], 0)
            left = d // 2 if flaw != "pad-odd-left" else d - d // 2
            pads[a] = (left, d - left)
        zero = "" if x.dtype == object else np.zeros((), x.dtype)
        y = np.pad(x, pads, mode="edge" if flaw == "edge-padding" and x.size else "constant", **(
            {"constant_values": zero} if flaw != "edge-padding" or not x.size else {}))
        idx = [slice(None)] * r
        for a, t in zip(axes, shape):
            d = y.shape[a] - t
            lo = d // 2 if flaw != "crop-rounded-up" else d - d // 2
            idx[a] = slice(lo, lo + t)
        return {outputs[0]: np.ascontiguousarray(y[tuple(idx)])}

    return kernel


def test_ccp_oracle_worked_cases_and_node_tests():
    x = np.arange(5.0)
    assert creation.center_crop_pad(x, [2]).tolist() == [1.0, 2.0]  # (5 - 2) / 2 = 1.5: start rounded down
    assert creation.center_crop_pad(x, [4]).tolist() == [0.0, 1.0, 2.0, 3.0]  # half a pixel to the left
    assert creation.center_crop_pad(np.array([1.0, 2.0]), [5]).tolist() == [0, 1, 2, 0, 0]  # odd pixel right
    assert creation.center_crop_pad(np.array([1.0, 2.0]), [0]).shape == (0,)
    y = creation.center_crop_pad(np.ones((4, 2, 3)), [2, 5], axes=[-3, 2])
    assert y.shape == (2, 2, 5) and y[:, :, 0].sum() == 0 and y[:, :, 4].sum() == 0 and y[:, :, 1:4].all()
    rng = np.random.default_rng(5)
    for _ in range(50):  # against the kernel written here (pad, then slice)
        x = rng.normal(size=tuple(rng.integers(0, 5, 3)))
        shape = [int(v) for v in rng.integers(0, 7, 3)]
        want = _ccp_kernel()({"input_data": x, "shape": np.array(shape)}, {}, ["y"], 18)["y"]
        assert np.array_equal(creation.center_crop_pad(x, shape), want)
    tests = _node_tests("center_crop_pad", "CenterCropPad")
    for t in tests:
        types = {"input_data": V.name_of(t.model.graph.input[0].type.tensor_type.elem_type), "shape": "int64"}
        for ins, outs in t.data_sets:
            got = E["CenterCropPad"].oracle(Ctx("CenterCropPad", 18, 18, types), np.asarray(ins[0]), np.asarray(ins[1]),
                                            **_attrs(t.model.graph.node[0]))
            assert np.array_equal(got, np.asarray(outs[0])), t.name
    assert len(tests) >= 5
    for bad in (([2, 2], None), ([2], [0, 1]), ([2], [3]), ([-1, 2, 2], None), ([2, 2], [0, -3])):
        with pytest.raises(ValueError):
            creation.center_crop_pad(np.zeros((2, 3, 4)), *bad)


def test_ccp_legitimate_kernel_passes_everything(suite):
    cases = _of(suite, "CenterCropPad")
    res = _run(cases, {"CenterCropPad": _ccp_kernel()})
    assert not _not_passing(cases, res), _not_passing(cases, res)[:5]


def _ccp_out_shape(c):
    return c.datasets[0].outputs["output_data"].shape


def _ccp_odd(c, kind):
    """Whether a CenterCropPad case crops (``crop``) or pads (``pad``) some axis by an odd amount."""
    x = c.inputs[0].shape
    y = c.datasets[0].outputs["output_data"].shape
    return any((n - t) % 2 and ((n > t) == (kind == "crop")) for n, t in zip(x, y))


@pytest.mark.parametrize("flaw,where", [
    ("crop-rounded-up", lambda c: _ccp_odd(c, "crop")),
    ("pad-odd-left", lambda c: _ccp_odd(c, "pad")),
    ("axes-ignored", lambda c: c.attributes.get("axes", [0]) != list(range(len(c.attributes.get("axes", [0]))))),
    ("negative-axes-as-first", lambda c: any(a < 0 for a in c.attributes.get("axes", []))),
    ("edge-padding", lambda c: any(t > n for n, t in zip(c.inputs[0].shape, _ccp_out_shape(c)))),
])
def test_ccp_wrong_kernel_is_caught(flaw, where, value_cases):
    cases = [c for c in _of(value_cases, "CenterCropPad") if where(c)]
    assert cases
    res = _run(cases, {"CenterCropPad": _ccp_kernel(flaw)}, check=False)
    assert _caught(cases, res) >= 1, flaw


def test_ccp_agreement_with_onnx_reference(suite, reference_results):
    pairs = [(c, r) for c, r in zip(suite, reference_results) if c.op == "CenterCropPad"]
    why, unexplained = _reference_findings(*zip(*pairs))
    assert not unexplained, unexplained[:5]
    assert {k for _, k, _ in why} == {"ccp-unchecked", "ccp-string-zero"}, why


def test_ccp_coverage_and_contested(value_cases):
    cases = _of(value_cases, "CenterCropPad")
    cov = compute_coverage(cases)["ops"]["CenterCropPad"]["versions"]
    assert all(v["gaps"] == 0 and v["covered"] for v in cov.values())
    assert all((c.contested == creation.CCP_INT32_CONTESTED) == (c.inputs[1].elem_type == onnx.TensorProto.INT32)
               for c in cases)
    assert any(_ccp_odd(c, "crop") for c in cases) and any(_ccp_odd(c, "pad") for c in cases)
    # cases that crop one axis and pad another
    both = [c for c in cases if any(n > t for n, t in zip(c.inputs[0].shape, _ccp_out_shape(c)))
            and any(n < t for n, t in zip(c.inputs[0].shape, _ccp_out_shape(c)))]
    assert both
    assert {str(c.attributes.get("axes")) for c in cases} >= {"None", "[-1]", "[0, 2]", "[-2, -1]", "[1, 0]"}


# ============================================================================ ConstantOfShape
def _cos_value(case):
    """(numpy scalar, type name) of a ConstantOfShape case's value attribute (float32 zero when absent)."""
    tp = case.attributes.get("value")
    if tp is None:
        return np.float32(0.0), "float"
    a = onnx.numpy_helper.to_array(tp)
    return a.reshape(-1)[0], V.name_of(tp.data_type)


def _bits_equal(a, b) -> bool:
    a, b = np.asarray(a), np.asarray(b)
    return a.dtype == b.dtype and a.shape == b.shape and a.tobytes() == b.tobytes()


def test_cos_outputs_are_the_attribute_value_everywhere(value_cases):
    """Each expected output is the value attribute (decoded by onnx itself), bit for bit, at
    every position of the shape the input lists (a rank-0 output for an empty shape)."""
    cases = _of(value_cases, "ConstantOfShape")
    for c in cases:
        v, t = _cos_value(c)
        shape = [int(d) for d in (c.inputs[0].value if c.inputs[0].initializer else c.datasets[0].inputs["input"])]
        assert _bits_equal(c.datasets[0].outputs["output"], np.full(shape, v, dtype=v.dtype)), c.id
    tests = _node_tests("constantofshape", "ConstantOfShape")
    for t in tests:
        attrs = _attrs(t.model.graph.node[0])
        for ins, outs in t.data_sets:
            got = E["ConstantOfShape"].oracle(Ctx("ConstantOfShape", 9, 9, {"input": "int64"}), np.asarray(ins[0]),
                                              **attrs)
            out_t = V.name_of(t.model.graph.output[0].type.tensor_type.elem_type)
            assert _bits_equal(V.to_type(got, out_t), np.asarray(outs[0])), t.name
    assert len(tests) >= 3


def _cos_kernel(flaw=None):
    def kernel(inputs, attrs, outputs, opset):
        shape = inputs["input"]
        if shape.ndim != 1 or (shape < 0).any():
            raise ValueError("shape")
        tp = attrs.get("value")
        if tp is not None and (len(tp.dims) != 1 or tp.dims[0] != 1 and flaw != "value-size-unchecked"
                               or tp.data_type == onnx.TensorProto.STRING):
            raise ValueError("value")
        v = np.float32(0) if tp is None or flaw == "value-ignored" else onnx.numpy_helper.to_array(tp).reshape(-1)[0]
        if flaw == "through-float32" and v.dtype.kind in "fiu" and v.dtype.itemsize >= 4:
            v = v.astype(np.float32).astype(v.dtype)
        if flaw == "zero-canonicalized" and v.dtype.kind == "f":
            v = (v + v.dtype.type(0)).astype(v.dtype)
        dims = [int(d) for d in shape]
        if flaw == "empty-shape-as-1d" and not dims:
            dims = [1]
        return {outputs[0]: np.full(dims, v, dtype=v.dtype)}

    return kernel


def test_cos_legitimate_kernel_passes_everything(suite):
    cases = _of(suite, "ConstantOfShape")
    res = _run(cases, {"ConstantOfShape": _cos_kernel()})
    assert not _not_passing(cases, res), _not_passing(cases, res)[:5]


@pytest.mark.parametrize("flaw,where", [
    ("value-ignored", lambda c: "value" in c.attributes),
    ("through-float32", lambda c: _cos_value(c)[1] in ("int64", "double", "int32", "uint64")),
    ("zero-canonicalized", lambda c: "value" in c.attributes and _cos_value(c)[1] in ("float", "double", "float16")),
    ("empty-shape-as-1d", lambda c: c.tags["shape"] == "rank0"),
])
def test_cos_wrong_kernel_is_caught(flaw, where, value_cases):
    cases = [c for c in _of(value_cases, "ConstantOfShape") if where(c)]
    assert cases
    res = _run(cases, {"ConstantOfShape": _cos_kernel(flaw)}, check=False)
    assert _caught(cases, res) >= 1, flaw


def test_cos_agreement_with_onnx_reference(suite, reference_results):
    pairs = [(c, r) for c, r in zip(suite, reference_results) if c.op == "ConstantOfShape"]
    why, unexplained = _reference_findings(*zip(*pairs))
    assert not unexplained, unexplained[:5]
    assert {k for _, k, _ in why} == {"cos-string-value"}, why
    assert all(r.outcome == "pass" for c, r in pairs if c.expect_error is None)


def test_cos_coverage(value_cases):
    cases = _of(value_cases, "ConstantOfShape")
    cov = compute_coverage(cases)["ops"]["ConstantOfShape"]["versions"]
    assert all(v["gaps"] == 0 and v["covered"] for v in cov.values())
    for v in {c.since_version for c in cases}:
        vc = [c for c in cases if c.since_version == v]
        assert {c.tags["shape"] for c in vc} >= {"rank0", "zero-size", "zero-size/rank1", "rank5"}
        assert any(c.datasets[0].outputs["output"].ndim == 0 for c in vc)
    values = {c.tags.get("attr_value", "absent") for c in cases}
    assert {"absent", "float:-0.0", "float:nan", "float:inf", "float:0.0", "int64:-9223372036854775808",
            "int64:9223372036854775807", "uint64:18446744073709551615", "bool:True", "bool:False"} <= values
    # every output type of every version has a value of its own type
    assert all(_cos_value(c)[1] == V.name_of(c.outputs[0].elem_type) for c in cases)


# ============================================================================ Constant
def _dense_from_sparse(sp):
    """A SparseTensorProto made dense by a loop over its entries (independent of the oracle)."""
    vals = onnx.numpy_helper.to_array(sp.values)
    idx = onnx.numpy_helper.to_array(sp.indices)
    dims = tuple(sp.dims)
    out = np.zeros(dims, dtype=vals.dtype)
    for k, v in enumerate(vals):
        pos = np.unravel_index(int(idx[k]), dims) if idx.ndim == 1 else tuple(int(i) for i in idx[k])
        out[pos] = v
    return out


def _constant_kernel(flaw=None):
    def kernel(inputs, attrs, outputs, opset):
        given = {k: v for k, v in attrs.items()}
        if len(given) != 1:
            raise ValueError("exactly one value attribute")
        (k, v), = given.items()
        if k == "value":
            y = onnx.numpy_helper.to_array(v)
            if flaw == "zero-canonicalized" and y.dtype.kind == "f":
                y = (y + y.dtype.type(0)).astype(y.dtype)
        elif k == "sparse_value":
            y = _dense_from_sparse(v)
            idx = onnx.numpy_helper.to_array(v.indices)
            if flaw == "sparse-indices-column-major" and idx.size:  # linearized in Fortran order
                vals, dims = onnx.numpy_helper.to_array(v.values), tuple(v.dims)
                tup = np.unravel_index(idx, dims) if idx.ndim == 1 else tuple(idx.T)
                y = np.zeros(dims, dtype=vals.dtype)
                y.reshape(-1)[np.ravel_multi_index(tup, dims, order="F")] = vals
        elif k in ("value_float", "value_floats"):
            y = np.asarray(v, dtype=np.float64 if flaw == "float-as-double" else np.float32)
        elif k in ("value_int", "value_ints"):
            y = np.asarray(v, dtype=np.int32 if flaw == "int-as-int32" else np.int64)
        else:  # the attribute holds UTF-8 bytes (KernelBackend decodes a lone value, not a list)
            y = np.empty(() if k == "value_string" else (len(v),), dtype=object)
            y[...] = v if k == "value_string" else list(v)
            if flaw != "strings-as-bytes":
                y = np.vectorize(lambda s: s.decode() if isinstance(s, bytes) else s, otypes=[object])(y) \
                    if y.size else y
            else:
                y = np.vectorize(lambda s: s.encode() if isinstance(s, str) else s, otypes=[object])(y)
        return {outputs[0]: y}

    return kernel


def test_constant_oracle_against_independent_decoding(value_cases):
    """Every expected output is the attribute decoded independently: onnx's ``to_array`` for
    ``value``, a loop over the entries for ``sparse_value`` (0 elsewhere), numpy for the
    ``value_*`` lists (float32 / int64 / str)."""
    cases = _of(value_cases, "Constant")
    forms = Counter()
    for c in cases:
        (k, v), = c.attributes.items()
        want = _constant_kernel()({}, {k: v}, ["output"], c.opset)["output"]
        got = c.datasets[0].outputs["output"]
        if want.dtype == object:
            assert got.dtype == object and got.tolist() == want.tolist(), c.id
        else:
            assert _bits_equal(got, want), c.id
        forms[k] += 1
    assert set(forms) == {"value", "sparse_value", "value_float", "value_floats", "value_int", "value_ints",
                          "value_string", "value_strings"}
    for t in _node_tests("constant", "Constant"):
        got = E["Constant"].oracle(Ctx("Constant", 9, 9, {}), **_attrs(t.model.graph.node[0]))
        assert np.array_equal(got, np.asarray(t.data_sets[0][1][0])), t.name
    with pytest.raises(ValueError):
        creation.constant_value({"value_float": 1.0, "value_int": 1})


def test_constant_legitimate_kernel_passes_everything(suite):
    cases = _of(suite, "Constant")
    res = _run(cases, {"Constant": _constant_kernel()})
    assert not _not_passing(cases, res), _not_passing(cases, res)[:5]


@pytest.mark.parametrize("flaw,where", [
    ("zero-canonicalized", lambda c: c.tags["numerics"] == "special" and "value" in c.attributes),
    ("sparse-indices-column-major", lambda c: len(getattr(c.attributes.get("sparse_value"), "dims", ())) == 2),
    ("float-as-double", lambda c: c.tags["constant_form"] in ("value_float", "value_floats")),
    ("int-as-int32", lambda c: c.tags["constant_form"] in ("value_int", "value_ints")),
    ("strings-as-bytes", lambda c: c.tags["constant_form"] in ("value_string", "value_strings")),
])
def test_constant_wrong_kernel_is_caught(flaw, where, value_cases):
    cases = [c for c in _of(value_cases, "Constant") if where(c)]
    assert cases
    res = _run(cases, {"Constant": _constant_kernel(flaw)}, check=False)
    assert _caught(cases, res) >= 1, flaw


def test_constant_agreement_with_onnx_reference(suite, reference_results):
    pairs = [(c, r) for c, r in zip(suite, reference_results) if c.op == "Constant"]
    why, unexplained = _reference_findings(*zip(*pairs))
    assert not unexplained, unexplained[:5]
    assert {k for _, k, _ in why} == {"constant-sparse-unsupported", "constant-two-attributes"}, why
    assert all(r.outcome == "pass" for c, r in pairs
               if c.expect_error is None and c.tags["constant_form"] not in ("sparse_value", "value_string",
                                                                             "value_strings"))


def test_constant_coverage(value_cases):
    cases = _of(value_cases, "Constant")
    cov = compute_coverage(cases)["ops"]["Constant"]["versions"]
    assert all(v["gaps"] == 0 and v["covered"] and not v["unexercised"] for v in cov.values())
    for v in {c.since_version for c in cases}:
        forms = {c.tags["constant_form"] for c in cases if c.since_version == v}
        lists = {"value_float", "value_floats", "value_int", "value_ints", "value_string", "value_strings"}
        want = {"value"} | ({"sparse_value"} if v >= 11 else set()) | (lists if v >= 12 else set())
        assert forms == want, v
        shapes = {c.tags["shape"] for c in cases if c.since_version == v}
        assert {"scalar", "tensor", "zero-size"} <= shapes
    # special values in every encoding a float can take (tensor, sparse, value_float(s))
    specials = {c.tags["constant_form"] for c in cases
                if c.tags["numerics"] == "special" and c.tags["dtype"] == "float"}
    assert {"value", "sparse_value", "value_float", "value_floats"} <= specials
    # both sparse index layouts
    layouts = {c.attributes["sparse_value"].indices.dims[-1] if len(c.attributes["sparse_value"].indices.dims) == 2
               else "linear" for c in cases if "sparse_value" in c.attributes}
    assert "linear" in layouts and len(layouts) >= 2
