"""onnx's own node test cases as a suite (``--suite onnx-node``), with their own tolerances.

``onnx.backend.test.loader.load_model_tests(kind="node")`` gives each test's model,
data sets and one ``rtol``/``atol`` (default 1e-3 / 1e-7, the official comparison
``np.testing.assert_allclose``).  Each becomes a :class:`~conformance.case.Case`
whose every output has that tolerance, so the same runner and reports score both
suites.

Where the model and data sets come from depends on the onnx release: onnx 1.23 and
later build the node tests in memory (``test.model``, ``test.data_sets``); earlier
releases (1.16 to 1.22) leave both ``None`` and give ``test.model_dir``, the directory
of the ONNX backend-test layout (``model.onnx``, ``test_data_set_N/input_I.pb`` and
``output_I.pb``), which :func:`load_test_dir` reads as onnx's own backend runner does
(``onnx.backend.test.runner.Runner._load_proto``: each file parsed as the proto its graph
input or output type says).

Training-mode Dropout with a ratio above 0 drops elements at random: onnx's expected outputs
are one draw of numpy's generator, which the spec does not ask a runtime to reproduce.  Those
node tests are judged statistically instead (:func:`check_node_dropout`, the suite's own
``conformance.reference.dropout.check_dropout``: every element 0 or ``x / (1 - ratio)``, the
mask consistent, the dropped fraction near the ratio).

A tensor is a tensor whatever its rank and however onnx hands it over: a numpy array, a
numpy scalar (the 0-d inputs of onnx's in-memory node tests, e.g. Dropout's ``ratio``
and ``training_mode``) or a ``TensorProto`` (float8 / int4 data in memory) all become
arrays (:func:`as_tensor`).  Tests whose inputs or outputs are not numeric tensors
(sequences, optionals, maps, strings) cannot be compared by our runner yet; they are
marked ``skip`` with that reason rather than silently dropped.
"""

from __future__ import annotations

import os
import re
import warnings
from typing import Any

import numpy as np
import onnx
from onnx import defs, numpy_helper

from .case import Case, DataSet, Input, Output, value_kind
from .suite import Suite
from .tolerance import Tolerance


def _elem_type(vi: onnx.ValueInfoProto) -> int | None:
    """The element type of a tensor, or of the tensors of a sequence / optional (:func:`conformance.case.value_kind`)."""
    t = vi.type
    while not t.HasField("tensor_type"):
        if t.HasField("sequence_type"):
            t = t.sequence_type.elem_type
        elif t.HasField("optional_type"):
            t = t.optional_type.elem_type
        else:
            return None
    return t.tensor_type.elem_type


def as_value(a: Any, kind: str | None) -> tuple[Any, bool]:
    """``(value, ok)``: a data set value of onnx's node tests in the case model's form for a
    graph input/output of ``kind`` (:data:`conformance.case.KINDS`; ``None``: a map, a sparse
    tensor or a nested sequence): a tensor by :func:`as_tensor`, a sequence as a list of arrays,
    an optional as ``None`` (absent) or its value; ``ok`` is False where it is none of these."""
    if kind is None:
        return None, False
    if kind.startswith("optional_"):
        return (None, True) if a is None else as_value(a, kind[len("optional_"):])
    if kind == "sequence":
        if not isinstance(a, (list, tuple)):
            return None, False
        items = [as_tensor(x) for x in a]
        return items, all(x is not None for x in items)
    t = as_tensor(a)
    return t, t is not None


def _since_version(op: str, domain: str, opset: int) -> int:
    try:
        return defs.get_schema(op, opset, domain).since_version
    except Exception:  # noqa: BLE001 - unknown/experimental op
        return opset


def as_tensor(a: Any) -> np.ndarray | None:
    """``a`` as a numpy array if it is a tensor, else ``None``.

    A numpy array is returned as is, a numpy scalar (``np.float32(0.5)``, ``np.bool_(True)``:
    how onnx's in-memory node tests hand over 0-d tensors) as a 0-d array of its dtype, a
    ``TensorProto`` decoded by ``onnx.numpy_helper.to_array``.  Anything else (a list for a
    sequence, a dict for a map, ``None`` for an empty optional, a Python number) is not a
    tensor: ``None``.
    """
    if isinstance(a, np.ndarray):
        return a
    if isinstance(a, np.generic):
        return np.asarray(a)
    if isinstance(a, onnx.TensorProto):
        return numpy_helper.to_array(a)
    return None


def _load_value(path: str, type_proto: onnx.TypeProto) -> Any:
    """One ``input_I.pb`` / ``output_I.pb`` file as onnx's backend runner reads it: a
    ``TensorProto`` as an array, a ``SequenceProto`` as a list, an ``OptionalProto`` as its
    value or ``None``, anything else (map, sparse tensor) as the raw bytes (not a tensor)."""
    with open(path, "rb") as f:
        content = f.read()
    if type_proto.HasField("tensor_type"):
        return numpy_helper.to_array(onnx.load_tensor_from_string(content))
    if type_proto.HasField("sequence_type"):
        seq = onnx.SequenceProto()
        seq.ParseFromString(content)
        return numpy_helper.to_list(seq)
    if type_proto.HasField("optional_type"):
        opt = onnx.OptionalProto()
        opt.ParseFromString(content)
        return numpy_helper.to_optional(opt)
    return content


def _numbered(directory: str, prefix: str) -> list[str]:
    """Entries ``PREFIX<N>`` / ``PREFIX<N>.pb`` of ``directory`` in the order of N."""
    pat = re.compile(rf"{re.escape(prefix)}(\d+)(?:\.pb)?$")
    found = [(int(m.group(1)), name) for name in os.listdir(directory) if (m := pat.match(name))]
    return [os.path.join(directory, name) for _, name in sorted(found)]


def load_test_dir(model_dir: str | os.PathLike) -> tuple[onnx.ModelProto, list[tuple[list, list]]]:
    """The model and data sets of one test in the ONNX backend-test layout.

    Args:
        model_dir: a directory with ``model.onnx`` and ``test_data_set_0/``, ``test_data_set_1/``...,
            each holding ``input_0.pb``... (one per graph input that is not an initializer, in
            graph order) and ``output_0.pb``... (one per graph output).

    Returns:
        ``(model, [(inputs, outputs), ...])``, the values decoded by the graph's types
        (arrays for tensors, whatever their rank).

    Raises:
        OSError: a file cannot be read.
        ValueError: a data set has more files than the graph has inputs or outputs.
        google.protobuf.message.DecodeError: a file is not the proto its type says.
    """
    model = onnx.load(os.path.join(os.fspath(model_dir), "model.onnx"))
    return model, _load_data_sets(model, model_dir)


def _load_data_sets(model: onnx.ModelProto, model_dir: str | os.PathLike) -> list[tuple[list, list]]:
    init_names = {t.name for t in model.graph.initializer}
    feeds = [vi for vi in model.graph.input if vi.name not in init_names]
    outputs = list(model.graph.output)
    data_sets = []
    for ds in _numbered(os.fspath(model_dir), "test_data_set_"):
        ins, outs = _numbered(ds, "input_"), _numbered(ds, "output_")
        if len(ins) > len(feeds) or len(outs) > len(outputs):
            raise ValueError(f"{ds}: {len(ins)} input and {len(outs)} output files for a graph with "
                             f"{len(feeds)} inputs and {len(outputs)} outputs")
        data_sets.append(([_load_value(p, vi.type) for p, vi in zip(ins, feeds)],
                          [_load_value(p, vi.type) for p, vi in zip(outs, outputs)]))
    return data_sets


def check_node_dropout(inputs: dict, outputs: dict, attrs: dict) -> tuple[bool, str]:
    """Judge a training-mode Dropout node test statistically (``Case.check`` of those tests).

    Args:
        inputs: graph inputs in node order: data, then ratio and training_mode where given.
        outputs: graph outputs in node order: output, then mask where given.
        attrs: the node's attributes (none in onnx's tests: ratio is an input).

    Returns:
        ``(passed, message)`` of ``conformance.reference.dropout.check_dropout``.
    """
    from .reference.dropout import check_dropout

    xs, ys = list(inputs.values()), list(outputs.values())
    formal = {"data": xs[0]}
    if len(xs) > 1:
        formal["ratio"] = xs[1]
    return check_dropout(formal, {"output": ys[0], "mask": ys[1] if len(ys) > 1 else None}, attrs)


def _random_dropout(graph: onnx.GraphProto, feeds: list, datasets: list[DataSet]) -> bool:
    """A single Dropout node whose graph inputs/outputs are its own, in order, run in training
    mode with a ratio above 0 in some data set (its outputs are random)."""
    if len(graph.node) != 1 or graph.node[0].op_type != "Dropout" or graph.node[0].domain not in ("", "ai.onnx"):
        return False
    node = graph.node[0]
    if list(node.input) != [vi.name for vi in feeds] or list(node.output)[:len(graph.output)] != [
            o.name for o in graph.output] or len(node.input) < 3:
        return False
    ratio_name, mode_name = node.input[1], node.input[2]
    return any(bool(np.asarray(ds.inputs[mode_name])) and float(np.asarray(ds.inputs[ratio_name])) > 0
               for ds in datasets)


def case_from_test(test) -> Case:
    """A Case from one ``onnx.backend.test`` TestCase.

    The model and data sets are ``test.model`` / ``test.data_sets`` where onnx fills them
    (onnx >= 1.23), else read from ``test.model_dir`` (:func:`load_test_dir`; onnx < 1.23).

    Raises:
        ValueError: the test has neither a model nor a model directory (a real-model test
            that onnx would download from ``test.url``).
        OSError, google.protobuf.message.DecodeError: ``model.onnx`` cannot be read (unreadable
            data sets make the case a ``skip`` with the reason).
    """
    model: onnx.ModelProto | None = test.model
    data_sets, unreadable = test.data_sets, None
    if model is None:
        if not getattr(test, "model_dir", None):
            raise ValueError(f"{test.name}: neither a model nor a model directory (url {test.url!r})")
        model = onnx.load(os.path.join(test.model_dir, "model.onnx"))
        try:
            data_sets = _load_data_sets(model, test.model_dir)
        except Exception as exc:  # noqa: BLE001 - one unreadable test is skipped with the reason, not the suite
            data_sets, unreadable = [], f"test data unreadable: {type(exc).__name__}: {exc}"
    graph = model.graph
    init_names = {t.name for t in graph.initializer}
    first = graph.node[0] if graph.node else None
    op = first.op_type if first is not None else "?"
    domain = first.domain if first is not None else ""
    opset = next((o.version for o in model.opset_import if o.domain in ("", "ai.onnx") and domain in ("", "ai.onnx")),
                 next((o.version for o in model.opset_import if o.domain == domain), 0))
    feeds = [vi for vi in graph.input if vi.name not in init_names]
    in_kinds = [value_kind(vi.type) for vi in feeds]
    out_kinds = [value_kind(vi.type) for vi in graph.output]
    inputs = [Input(vi.name, _elem_type(vi) or 0, tuple(d.dim_value for d in vi.type.tensor_type.shape.dim)
                    if vi.type.HasField("tensor_type") else None, kind=k or "tensor")
              for vi, k in zip(feeds, in_kinds)]
    tol = Tolerance(atol=float(test.atol), rtol=float(test.rtol), variants=("onnx-node-test",))
    outputs = [Output(vi.name, _elem_type(vi) or 0, tol, kind=k or "tensor") for vi, k in zip(graph.output, out_kinds)]
    datasets, skip = [], None
    for ins, outs in data_sets or []:
        if len(ins) != len(feeds) or len(outs) != len(outputs):
            skip = "data set does not match the graph's inputs/outputs"
            break
        ins = [as_value(a, k) for a, k in zip(ins, in_kinds)]
        outs = [as_value(a, k) for a, k in zip(outs, out_kinds)]
        if not all(ok for _, ok in ins + outs):
            skip = "map, sparse-tensor or nested-sequence inputs/outputs are not compared"
            break
        ins, outs = [v for v, _ in ins], [v for v, _ in outs]
        datasets.append(DataSet({vi.name: a for vi, a in zip(feeds, ins)},
                                {o.name: a for o, a in zip(outputs, outs)}))
    if not datasets and skip is None:
        skip = unreadable or "no data sets"
    tags = {"suite": "onnx-node", "test": test.name, "nodes": len(graph.node)}
    if inputs and inputs[0].elem_type:
        try:
            from .dtypes import type_name

            tags["dtype"] = type_name(inputs[0].elem_type)
        except KeyError:
            tags["dtype"] = onnx.TensorProto.DataType.Name(inputs[0].elem_type).lower()
    if "expanded" in test.name:
        tags["expanded"] = True
    case = Case(op=op, since_version=_since_version(op, domain, opset), opset=opset, attributes={}, inputs=inputs,
                outputs=outputs, datasets=datasets if skip is None else [], tags=tags,
                label=test.name, domain=domain, generator="onnx.backend.test.loader")
    if skip is not None:
        case.skip = skip
    elif _random_dropout(graph, feeds, datasets):
        case.check = "conformance.onnx_node:check_node_dropout"
    case.__dict__["model"] = model
    case.__dict__["model_bytes"] = model.SerializeToString(deterministic=True)
    return case


def onnx_node_suite() -> Suite:
    """All of onnx's node test cases as a :class:`Suite` (ids ``Op-since/test_name/hash``), in
    the order of their test names (onnx < 1.23 lists its data directory in file-system order)."""
    from onnx.backend.test.loader import load_model_tests

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with np.errstate(all="ignore"):
            tests = sorted(load_model_tests(kind="node"), key=lambda t: t.name)
    cases, seen = [], set()
    for t in tests:
        with warnings.catch_warnings(), np.errstate(all="ignore"):
            warnings.simplefilter("ignore")
            c = case_from_test(t)
        if c.id in seen:
            continue
        seen.add(c.id)
        cases.append(c)
    return Suite(cases=cases, seed=None, ops=sorted({c.op for c in cases}), generators={"*": "onnx.backend.test"},
                 source=f"onnx {onnx.__version__} node tests")
