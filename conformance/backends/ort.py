"""onnxruntime backend.

Options (``--backend-option KEY=VALUE``):

* ``providers``: comma-separated execution providers, default ``CPUExecutionProvider``;
* ``graph_optimization_level``: ``disable``, ``basic``, ``extended``, ``layout`` or ``all``
  (default ``all``, onnxruntime's own default); both the optimized and the
  unoptimized session are legitimate configurations to score;
* ``intra_op_num_threads``: integer, default 1 (deterministic timing, cheap sessions).

Unsupported mapping: onnxruntime's ``NotImplemented`` status (e.g. "Could not find an
implementation for BatchNormalization(15) node ... float16"), and the model-load
failure for an opset newer than the runtime ("... is till opset N"), are
``unsupported``; every other exception on a valid model is ``error``.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import onnx

from .base import Backend

_LEVELS = {
    "disable": "ORT_DISABLE_ALL",
    "basic": "ORT_ENABLE_BASIC",
    "extended": "ORT_ENABLE_EXTENDED",
    "layout": "ORT_ENABLE_LAYOUT",
    "all": "ORT_ENABLE_ALL",
}


class OnnxRuntimeBackend(Backend):
    """Runs cases with ``onnxruntime.InferenceSession``.

    Raises:
        ValueError: an unknown option, provider or optimization level.
    """

    name = "onnxruntime"

    def __init__(self, providers: str | list[str] = "CPUExecutionProvider", graph_optimization_level: str = "all",
                 intra_op_num_threads: int | str = 1, **unknown: Any):
        import onnxruntime as ort

        if unknown:
            raise ValueError(f"unknown onnxruntime option(s): {', '.join(sorted(unknown))}; "
                             "known: providers, graph_optimization_level, intra_op_num_threads")
        self._ort = ort
        if isinstance(providers, str):
            providers = [p.strip() for p in providers.split(",") if p.strip()]
        available = ort.get_available_providers()
        missing = [p for p in providers if p not in available]
        if missing:
            raise ValueError(f"execution provider(s) {missing} not available; this onnxruntime has {available}")
        self.providers = providers
        level = str(graph_optimization_level).lower()
        if level not in _LEVELS:
            raise ValueError(f"graph_optimization_level must be one of {sorted(_LEVELS)}, got {level!r}")
        self.level = level
        self.threads = int(intra_op_num_threads)

    def prepare(self, model: onnx.ModelProto, model_bytes: bytes):
        so = self._ort.SessionOptions()
        so.graph_optimization_level = getattr(self._ort.GraphOptimizationLevel, _LEVELS[self.level])
        so.intra_op_num_threads = self.threads
        so.inter_op_num_threads = 1
        so.log_severity_level = 3
        return self._ort.InferenceSession(model_bytes, sess_options=so, providers=self.providers)

    def run(self, prepared, inputs: dict[str, np.ndarray], output_names: list[str]) -> list[Any]:
        return prepared.run(output_names, inputs)

    def is_unsupported(self, exc: BaseException) -> bool:
        if type(exc).__name__ == "NotImplemented":
            return True
        msg = str(exc)
        if "is till opset" in msg or "Could not find an implementation" in msg:
            return True
        return super().is_unsupported(exc) and "NOT_IMPLEMENTED" in msg

    def environment(self) -> dict[str, Any]:
        return {
            "backend": self.name,
            "onnxruntime": self._ort.__version__,
            "providers": self.providers,
            "graph_optimization_level": self.level,
            "intra_op_num_threads": self.threads,
        }
