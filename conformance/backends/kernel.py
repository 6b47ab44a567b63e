"""A backend made of Python kernels, one per operator (for tests and prototyping).

``KernelBackend({"LayerNormalization": fn})`` runs single-node models by calling
``fn(inputs, attributes, outputs, opset)``:

* ``inputs``: present formal inputs by schema name (graph inputs and initializers),
  numpy arrays in their element types (a sequence a list, an absent optional ``None``),
  then the graph inputs the node does not take, by their graph names: the outer-scope
  values its subgraph attributes (If's branches, Loop/Scan bodies) name;
* ``attributes``: the node's attributes as Python values (schema defaults *not*
  filled in);
* ``outputs``: the requested (present) output names, in node order;
* ``opset``: the imported opset version of the node's domain.

It must return ``{name: array}`` for each requested output.  ``prepare`` runs
``onnx.checker.check_model(full_check=True)`` (with strict shape inference), so
models that onnx itself rejects are rejected; any exception a kernel raises is a
rejection too (an error case then passes, a value case is ``error``).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import onnx
from onnx import helper, numpy_helper

from .base import Backend

Kernel = Callable[[dict[str, np.ndarray], dict[str, Any], list[str], int], dict[str, np.ndarray]]


class KernelBackend(Backend):
    """Backend calling Python kernels (see module docstring).

    Raises (at prepare):
        onnx.checker.ValidationError / InferenceError: onnx rejects the model.
        Unsupported: no kernel for the node's operator, or more than one node.
    """

    def __init__(self, kernels: dict[str, Kernel], name: str = "kernels", check: bool = True):
        self.kernels = dict(kernels)
        self.name = name
        self.check = check

    def prepare(self, model: onnx.ModelProto, model_bytes: bytes):
        from .base import Unsupported

        if self.check:
            onnx.checker.check_model(model, full_check=True)
        if len(model.graph.node) != 1:
            raise Unsupported("KernelBackend runs single-node models only")
        node = model.graph.node[0]
        if node.op_type not in self.kernels:
            raise Unsupported(f"no kernel for {node.op_type}")
        opset = next(o.version for o in model.opset_import if o.domain == node.domain)
        inits = {t.name: numpy_helper.to_array(t) for t in model.graph.initializer}
        attrs = {a.name: helper.get_attribute_value(a) for a in node.attribute}
        attrs = {k: (v.decode() if isinstance(v, bytes) else v) for k, v in attrs.items()}
        return node, opset, inits, attrs

    def run(self, prepared, inputs: dict[str, np.ndarray], output_names: list[str]) -> list[Any]:
        node, opset, inits, attrs = prepared
        feeds = {**inits, **inputs}
        named = {n: feeds[n] for n in node.input if n}
        named.update({n: v for n, v in inputs.items() if n not in named})  # outer-scope values
        requested = [n for n in node.output if n]
        result = self.kernels[node.op_type](named, dict(attrs), requested, opset)
        return [result[n] for n in output_names]
