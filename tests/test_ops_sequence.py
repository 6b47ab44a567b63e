"""Tests of the value model (sequences and optionals, :mod:`conformance.case`) and of the sequence
and optional entries (``conformance/ops/sequence.py``, oracles in ``conformance/reference/sequence.py``).

* the oracles against independent formulas (Python list operations written here) and the
  spec's own examples (onnx's node tests for these operators);
* comparison of sequences and optionals (:func:`conformance.tolerance.compare_value`): wrong
  length, absent against present, a tensor against a sequence, each element's tolerance;
* the bundle: sequence and optional values stored as SequenceProto / OptionalProto, read back
  byte for byte (same content hash), read by onnx's own loader, run by onnxruntime;
* Python kernels through ``KernelBackend``: legitimate ones (written independently here) pass
  every value case; the deliberately wrong ones of issue 27 fail cases the right ones pass
  (SequenceInsert's negative position one place off, SequenceErase erasing the first tensor by
  default, SplitToSequence ignoring keepdims, ConcatFromSequence ignoring new_axis); the error
  cases are rejected;
* agreement with ``onnx.reference``, each disagreement asserted and explained.
"""

from __future__ import annotations

import math
from collections import Counter

import numpy as np
import onnx
import pytest

from conformance import registry
from conformance.backends import resolve_backend
from conformance.backends.kernel import KernelBackend
from conformance.bundle import read_bundle
from conformance.bundle_write import write_bundle
from conformance.case import Case, DataSet, Input, Output
from conformance.reference import sequence as ref
from conformance.runner import run_cases
from conformance.suite import Suite
from conformance.onnx_node import case_from_test
from conformance.tolerance import Tolerance, compare_value
from oracle_checks import single_node_tests  # tests/oracle_checks.py

OPS = ["SequenceConstruct", "SequenceEmpty", "SequenceAt", "SequenceErase", "SequenceInsert", "SequenceLength",
       "SplitToSequence", "ConcatFromSequence", "Optional", "OptionalHasElement", "OptionalGetElement"]
F = np.float32


@pytest.fixture(scope="module")
def suite() -> list[Case]:
    return registry.generate(OPS, 0)


@pytest.fixture(scope="module")
def identity_values() -> list[Case]:
    return [c for c in registry.generate(["Identity"], 0) if any(i.kind != "tensor" for i in c.inputs)]


def _by_op(cases, op, errors=False):
    out = [c for c in cases if c.op == op and (c.expect_error is not None) == errors]
    assert out, (op, errors)
    return out


# ============================================================================ oracles
def test_positions_follow_the_text():
    a, b, c = (np.full((1,), k, F) for k in range(3))
    seq = [a, b, c]
    # SequenceAt: [-n, n-1]
    assert [float(ref.sequence_at(seq, np.array(p))[0]) for p in (0, 2, -1, -3)] == [0, 2, 2, 0]
    for p in (3, -4):
        with pytest.raises(IndexError):
            ref.sequence_at(seq, np.array(p))
    # SequenceInsert: [-n, n]; -1 inserts before the last tensor, n appends, absent appends
    x = np.full((1,), 9, F)

    def ins(p):
        return [float(t[0]) for t in ref.sequence_insert(seq, x, None if p is None else np.array(p))]

    assert ins(None) == [0, 1, 2, 9]
    assert ins(3) == [0, 1, 2, 9]
    assert ins(-1) == [0, 1, 9, 2]
    assert ins(-3) == [9, 0, 1, 2]
    assert ins(0) == [9, 0, 1, 2]
    for p in (4, -4):
        with pytest.raises(IndexError):
            ins(p)
    # SequenceErase: absent erases the last
    assert [float(t[0]) for t in ref.sequence_erase(seq)] == [0, 1]
    assert [float(t[0]) for t in ref.sequence_erase(seq, np.array(-3))] == [1, 2]
    assert ref.sequence_erase([a]) == []
    assert int(ref.sequence_length([])) == 0 and ref.sequence_length(seq).dtype == np.int64


def _loop_split(x, split, axis, keepdims):
    """SplitToSequence by Python slicing, independent of the oracle."""
    n = x.shape[axis]
    if split is None:
        sizes = [1] * n
    elif np.ndim(split) == 0:
        s = int(split)
        sizes = [s] * (n // s) + ([n % s] if n % s else [])
    else:
        sizes = [int(v) for v in split]
    out, start = [], 0
    for s in sizes:
        idx = [slice(None)] * x.ndim
        idx[axis] = slice(start, start + s)
        part = x[tuple(idx)]
        if split is None and not keepdims:
            part = part.reshape(part.shape[:axis] + part.shape[axis + 1:])
        out.append(part)
        start += s
    return out


@pytest.mark.parametrize("split,axis,keepdims", [(None, 0, 1), (None, 1, 0), (None, -1, 0), (2, 0, 1), (2, 1, 0),
                                                 (np.array([1, 2]), 0, 0), (np.array([3, 1]), 1, 1), (1, 0, 0)])
def test_split_to_sequence_is_slicing(split, axis, keepdims):
    x = np.arange(12, dtype=F).reshape(3, 4)
    got = ref.split_to_sequence(x, split, axis=axis, keepdims=keepdims)
    want = _loop_split(x, split, axis % 2, keepdims)
    assert len(got) == len(want)
    for g, w in zip(got, want):
        assert g.shape == w.shape and np.array_equal(g, w)


def test_concat_from_sequence_concatenates_or_stacks():
    a, b = np.arange(6, dtype=F).reshape(2, 3), np.arange(6, 12, dtype=F).reshape(2, 3)
    assert ref.concat_from_sequence([a, b], axis=0).tolist() == a.tolist() + b.tolist()
    stacked = ref.concat_from_sequence([a, b], axis=2, new_axis=1)
    assert stacked.shape == (2, 3, 2)
    assert all(stacked[i, j, k] == (a, b)[k][i, j] for i in range(2) for j in range(3) for k in range(2))
    assert ref.concat_from_sequence([a, b], axis=-3, new_axis=1).shape == (2, 2, 3)
    with pytest.raises(ValueError):
        ref.concat_from_sequence([a, b], axis=2)


def test_optional_oracles():
    x = np.ones(2, F)
    assert ref.optional(None) is None and np.array_equal(ref.optional(x), x)
    assert bool(ref.optional_has_element(x)) and not bool(ref.optional_has_element(None))
    with pytest.raises(ValueError):
        ref.optional_get_element(None)


def test_oracles_reproduce_the_node_tests():
    """onnx's own node tests of these operators (the spec's examples) on the oracles."""
    from conformance.onnx_node import onnx_node_suite

    calls = {
        "SequenceInsert": lambda ins, a: ref.sequence_insert(*ins),
        "SplitToSequence": lambda ins, a: ref.split_to_sequence(ins[0], ins[1] if len(ins) > 1 else None,
                                                                a.get("axis", 0), a.get("keepdims", 1)),
        "OptionalHasElement": lambda ins, a: ref.optional_has_element(ins[0] if ins else None),
        "OptionalGetElement": lambda ins, a: ref.optional_get_element(ins[0]),
    }
    checked = Counter()
    tests = single_node_tests(set(calls), ["sequenceinsert", "splittosequence", "optionalgetelement",
                                           "optionalhaselement"])
    for case in map(case_from_test, tests):
        if case.skip:
            continue
        node = case.model.graph.node[0]
        attrs = {a.name: onnx.helper.get_attribute_value(a) for a in node.attribute}
        for ds in case.datasets:
            ins = [ds.inputs[i.name] for i in case.inputs]
            want = ds.outputs[case.outputs[0].name]
            chk = compare_value("y", calls[case.op](ins, attrs), want, Tolerance(0, 0, exact=True))
            assert chk.passed, (case.label, chk.reason)
            checked[case.op] += 1
    assert set(checked) == set(calls), checked


# ============================================================================ comparison
def test_compare_value_sequences_and_optionals():
    tol = Tolerance(1e-3, 0.0)
    e = [np.zeros(2, F), np.ones(3, F)]
    assert compare_value("s", [np.zeros(2, F), np.ones(3, F) + F(5e-4)], e, tol).passed
    short = compare_value("s", [np.zeros(2, F)], e, tol)
    assert not short.passed and "length 1 != expected length 2" in short.reason
    off = compare_value("s", [np.zeros(2, F), np.ones(3, F) + F(1e-2)], e, tol)
    assert not off.passed and off.reason.startswith("element 1:") and off.worst_index[0] == 1
    assert compare_value("s", [], [], tol).passed
    assert not compare_value("s", np.zeros(2, F), e, tol).passed  # a tensor where a sequence is expected
    assert compare_value("o", None, None, tol).passed
    absent = compare_value("o", np.zeros(2, F), None, tol)
    assert not absent.passed and "absent optional" in absent.reason
    assert not compare_value("o", None, np.zeros(2, F), tol).passed
    # strings: one ONNX type whatever the numpy form
    assert compare_value("t", np.array(["a", "b"]), np.array(["a", "b"], dtype=object), tol).passed
    assert not compare_value("t", np.array(["a", "c"]), np.array(["a", "b"], dtype=object), tol).passed


# ============================================================================ bundle, loader, onnxruntime
def _small_value_cases(suite, identity_values):
    """A few cases of every value kind: sequence input/output, empty sequence, optional present/absent."""
    pick = {}
    for c in suite + identity_values:
        if c.expect_error is not None or c.tags.get("dtype") not in ("float", "int64"):
            continue
        kinds = tuple(sorted({i.kind for i in c.inputs if i.present} | {o.kind for o in c.outputs}))
        empty = any(v is None or (isinstance(v, list) and not v)
                    for ds in c.datasets for v in list(ds.inputs.values()) + list(ds.outputs.values()))
        pick.setdefault((c.op, kinds, empty), c)
    return list(pick.values())


def test_bundle_round_trip_loader_and_onnxruntime(suite, identity_values, tmp_path):
    cases = _small_value_cases(suite, identity_values)
    kinds = {i.kind for c in cases for i in c.inputs} | {o.kind for c in cases for o in c.outputs}
    assert {"sequence", "optional_tensor", "optional_sequence"} <= kinds
    out = write_bundle(Suite(cases), tmp_path / "b")
    back = {c.id: c for c in read_bundle(out).cases}  # verify=True: content hashes recomputed or digests checked
    assert set(back) == {c.id for c in cases}
    for c in cases:
        b = back[c.id]
        for ds, bs in zip(c.datasets, b.datasets):
            for name, v in list(ds.inputs.items()) + list(ds.outputs.items()):
                w = bs.inputs.get(name, bs.outputs.get(name))
                assert compare_value(name, w, v, Tolerance(0, 0, exact=True)).passed, (c.id, name)
    # onnx's loader reads every case, with the values typed as the model says
    from onnx.backend.test.loader import load_model_tests
    from onnx.backend.test.runner import Runner

    tests = load_model_tests(str(out), kind="cases")
    assert len(tests) == len(cases)

    n_seq = 0
    for t in tests:
        model = onnx.load(f"{t.model_dir}/model.onnx")
        for j, vi in enumerate(model.graph.output):
            got = []
            Runner._load_proto(None, f"{t.model_dir}/test_data_set_0/output_{j}.pb", got, vi.type)
            n_seq += isinstance(got[0], list)
    assert n_seq > 0
    results = run_cases([back[c.id] for c in cases], resolve_backend("onnxruntime"))
    outcomes = Counter(r.outcome for r in results)
    assert outcomes["pass"] >= len(cases) // 2 and outcomes["fail"] == 0 and outcomes["error"] == 0, \
        [(r.id, r.message) for r in results if r.outcome in ("fail", "error")]


def test_ids_hash_sequence_values():
    def case(seq):
        return Case("SequenceLength", 11, 11, {}, [Input("input_sequence", 1, (2,), kind="sequence")],
                    [Output("length", 7, Tolerance(0, 0, exact=True))],
                    [DataSet({"input_sequence": seq}, {"length": np.array(len(seq), np.int64)})])

    a = case([np.zeros(2, F), np.ones(2, F)])
    b = case([np.ones(2, F), np.zeros(2, F)])
    c = case([np.zeros(2, F), np.ones(2, F)])
    assert a.id != b.id and a.id == c.id
    assert a.model.graph.input[0].type.HasField("sequence_type")


# ============================================================================ kernels
def _k_seq_construct(ins, attrs, outs, opset):
    return {outs[0]: [ins[k] for k in sorted(ins, key=lambda n: int(n.split("_")[-1]))]}


def _pos(ins, n, default):
    return default if "position" not in ins else int(np.asarray(ins["position"]).reshape(-1)[0])


def _k_at(ins, attrs, outs, opset):
    s = ins["input_sequence"]
    p = _pos(ins, len(s), None)
    if not -len(s) <= p < len(s):
        raise IndexError(p)
    return {outs[0]: s[p]}


def _k_erase(flaw=None):
    def k(ins, attrs, outs, opset):
        s = list(ins["input_sequence"])
        p = _pos(ins, len(s), 0 if flaw == "erase-first" else len(s) - 1)
        if not -len(s) <= p < len(s):
            raise IndexError(p)
        del s[p]
        return {outs[0]: s}
    return k


def _k_insert(flaw=None):
    def k(ins, attrs, outs, opset):
        s, x = list(ins["input_sequence"]), ins["tensor"]
        if s and s[0].dtype != x.dtype:
            raise TypeError("mixed element types")
        p = _pos(ins, len(s), len(s))
        if not -len(s) <= p <= len(s):
            raise IndexError(p)
        if p < 0:
            p += len(s) + (1 if flaw == "negative-off-by-one" else 0)
        s[p:p] = [x]
        return {outs[0]: s}
    return k


def _k_length(ins, attrs, outs, opset):
    return {outs[0]: np.array(len(ins["input_sequence"]), np.int64)}


def _k_empty(ins, attrs, outs, opset):
    return {outs[0]: []}


def _k_split(flaw=None):
    def k(ins, attrs, outs, opset):
        x = ins["input"]
        axis = attrs.get("axis", 0)
        if not -x.ndim <= axis < x.ndim:
            raise ValueError(axis)
        axis %= x.ndim
        keep = attrs.get("keepdims", 1) or flaw == "ignore-keepdims"
        split = ins.get("split")
        if split is not None and np.ndim(split) == 1 and int(np.sum(split)) != x.shape[axis]:
            raise ValueError("split sum")
        return {outs[0]: _loop_split(x, split, axis, keep)}
    return k


def _k_concat(flaw=None):
    def k(ins, attrs, outs, opset):
        s = ins["input_sequence"]
        axis, new = attrs["axis"], attrs.get("new_axis", 0) and flaw != "ignore-new-axis"
        r = s[0].ndim + (1 if new else 0)
        if not -r <= axis < r:
            raise ValueError(axis)
        if new:
            s = [np.expand_dims(t, axis % r) for t in s]
        return {outs[0]: np.concatenate(s, axis=axis % r)}
    return k


def _k_optional(ins, attrs, outs, opset):
    if "input" not in ins and "type" not in attrs:
        raise ValueError("no type")
    return {outs[0]: ins.get("input")}


def _k_has(ins, attrs, outs, opset):
    return {outs[0]: np.array(ins.get("input") is not None)}


def _k_get(ins, attrs, outs, opset):
    if ins["input"] is None:
        raise ValueError("empty optional")
    return {outs[0]: ins["input"]}


def _k_identity(ins, attrs, outs, opset):
    return {outs[0]: ins["input"]}


KERNELS = {"SequenceConstruct": _k_seq_construct, "SequenceEmpty": _k_empty, "SequenceAt": _k_at,
           "SequenceErase": _k_erase(), "SequenceInsert": _k_insert(), "SequenceLength": _k_length,
           "SplitToSequence": _k_split(), "ConcatFromSequence": _k_concat(), "Optional": _k_optional,
           "OptionalHasElement": _k_has, "OptionalGetElement": _k_get, "Identity": _k_identity}


def test_legitimate_kernels_pass_every_value_case_and_reject_every_error_case(suite, identity_values):
    results = run_cases(suite + identity_values, KernelBackend(KERNELS, name="python-lists"))
    bad = [(r.id, r.outcome, r.message[:200]) for r in results if r.outcome != "pass"]
    assert bad == []
    assert sum(1 for c in suite if c.expect_error) >= 15


@pytest.mark.parametrize("op,flaw,kernel", [
    ("SequenceInsert", "negative-off-by-one", _k_insert("negative-off-by-one")),
    ("SequenceErase", "erase-first", _k_erase("erase-first")),
    ("SplitToSequence", "ignore-keepdims", _k_split("ignore-keepdims")),
    ("ConcatFromSequence", "ignore-new-axis", _k_concat("ignore-new-axis")),
])
def test_wrong_kernels_are_caught(suite, op, flaw, kernel):
    cases = _by_op(suite, op)
    results = run_cases(cases, KernelBackend({**KERNELS, op: kernel}, name=flaw, check=False))
    failed = [r for r in results if r.outcome == "fail"]
    assert failed, flaw  # value cases the legitimate kernel passes (test above)


# ============================================================================ onnx.reference
def test_onnx_reference_agrees_except_where_explained(suite):
    """onnx.reference (1.23) on every value case; its disagreements, each explained:

    * SequenceInsert with ``position = n`` (append, the top of ``[-n, n]``) inserts at the front:
      it computes ``(position + n) % n``;
    * Optional: its kernel returns the wrapped value as a one-element list (a present tensor or
      sequence comes back as a sequence), and with only the ``type`` attribute it raises a
      KeyError on the TypeProto (a case of each kind fails or errors);
    * an absent optional cannot leave any of its kernels (it rejects ``None`` results).
    """
    cases = [c for c in suite if c.expect_error is None]
    results = {r.id: r for r in run_cases(cases, resolve_backend("onnx-reference"))}
    explained = Counter()
    for c in cases:
        r = results[c.id]
        if r.outcome == "pass":
            continue
        if c.op == "SequenceInsert":
            n = len(c.datasets[0].inputs["input_sequence"])
            assert c.tags["position"] == n and n > 0, (c.id, r.message)
            explained["insert-at-n"] += 1
        elif c.op == "Optional":
            explained["optional"] += 1
        elif any(v is None for v in c.datasets[0].outputs.values()):
            explained["absent-output"] += 1
        else:
            pytest.fail(f"unexplained onnx.reference disagreement {c.id}: {r.outcome} {r.message[:300]}")
    assert explained["insert-at-n"] > 0 and explained["optional"] > 0
    assert sum(r.outcome == "pass" for r in results.values()) > len(cases) // 2
