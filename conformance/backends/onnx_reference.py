"""onnx's ``ReferenceEvaluator`` as a backend (``--backend onnx-reference``).

It computes in the input precision and is a second opinion, not our oracle
(DESIGN.md).  ``NotImplementedError`` and "not implemented/unsupported" messages
map to ``unsupported``.  It takes no options.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import onnx

from .base import Backend, reject_unknown_options


class OnnxReferenceBackend(Backend):
    """Runs cases with ``onnx.reference.ReferenceEvaluator``."""

    name = "onnx-reference"

    def __init__(self, **unknown: Any):
        reject_unknown_options("onnx-reference", unknown, ())

    def prepare(self, model: onnx.ModelProto, model_bytes: bytes):
        from onnx.reference import ReferenceEvaluator

        return ReferenceEvaluator(model)

    def run(self, prepared, inputs: dict[str, np.ndarray], output_names: list[str]) -> list[Any]:
        return list(prepared.run(output_names, inputs))

    def environment(self) -> dict[str, Any]:
        return {"backend": self.name, "onnx": onnx.__version__}
