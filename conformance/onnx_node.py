"""onnx's own node test cases as a suite (``--suite onnx-node``), with their own tolerances.

``onnx.backend.test.loader.load_model_tests(kind="node")`` gives each test's model,
data sets and one ``rtol``/``atol`` (default 1e-3 / 1e-7, the official comparison
``np.testing.assert_allclose``).  Each becomes a :class:`~conformance.case.Case`
whose every output has that tolerance, so the same runner and reports score both
suites.  Tests whose inputs or outputs are not plain numeric tensors (sequences,
optionals, maps, strings) cannot be compared by our runner yet; they are marked
``skip`` with that reason rather than silently dropped.
"""

from __future__ import annotations

import warnings

import numpy as np
import onnx
from onnx import defs

from .case import Case, DataSet, Input, Output
from .suite import Suite
from .tolerance import Tolerance


def _elem_type(vi: onnx.ValueInfoProto) -> int | None:
    t = vi.type
    return t.tensor_type.elem_type if t.HasField("tensor_type") else None


def _since_version(op: str, domain: str, opset: int) -> int:
    try:
        return defs.get_schema(op, opset, domain).since_version
    except Exception:  # noqa: BLE001 - unknown/experimental op
        return opset


def _is_numeric(a) -> bool:
    return isinstance(a, np.ndarray) and a.dtype != object and a.dtype.kind in "biufc" or (
        isinstance(a, np.ndarray) and a.dtype.name == "bfloat16")


def case_from_test(test) -> Case:
    """A Case from one ``onnx.backend.test`` TestCase (model in memory, data sets as given)."""
    model: onnx.ModelProto = test.model
    graph = model.graph
    init_names = {t.name for t in graph.initializer}
    first = graph.node[0] if graph.node else None
    op = first.op_type if first is not None else "?"
    domain = first.domain if first is not None else ""
    opset = next((o.version for o in model.opset_import if o.domain in ("", "ai.onnx") and domain in ("", "ai.onnx")),
                 next((o.version for o in model.opset_import if o.domain == domain), 0))
    feeds = [vi for vi in graph.input if vi.name not in init_names]
    inputs = [Input(vi.name, _elem_type(vi) or 0, tuple(d.dim_value for d in vi.type.tensor_type.shape.dim)
                    if vi.type.HasField("tensor_type") else ())
              for vi in feeds]
    tol = Tolerance(atol=float(test.atol), rtol=float(test.rtol), variants=("onnx-node-test",))
    outputs = [Output(vi.name, _elem_type(vi) or 0, tol) for vi in graph.output]
    datasets, skip = [], None
    for ins, outs in test.data_sets or []:
        if len(ins) != len(feeds) or len(outs) != len(outputs):
            skip = "data set does not match the graph's inputs/outputs"
            break
        if not all(_is_numeric(a) for a in list(ins) + list(outs)):
            skip = "non-tensor or non-numeric inputs/outputs (sequence, optional, map or string) are not compared yet"
            break
        datasets.append(DataSet({vi.name: a for vi, a in zip(feeds, ins)},
                                {o.name: a for o, a in zip(outputs, outs)}))
    if not datasets and skip is None:
        skip = "no data sets"
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
    case.__dict__["model"] = model
    case.__dict__["model_bytes"] = model.SerializeToString(deterministic=True)
    return case


def onnx_node_suite() -> Suite:
    """All of onnx's node test cases as a :class:`Suite` (ids ``Op-since/test_name/hash``)."""
    from onnx.backend.test.loader import load_model_tests

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with np.errstate(all="ignore"):
            tests = load_model_tests(kind="node")
    cases, seen = [], set()
    for t in tests:
        c = case_from_test(t)
        if c.id in seen:
            continue
        seen.add(c.id)
        cases.append(c)
    return Suite(cases=cases, seed=None, ops=sorted({c.op for c in cases}), generators={"*": "onnx.backend.test"},
                 source=f"onnx {onnx.__version__} node tests")
