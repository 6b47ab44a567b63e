"""onnxruntime backend.

Options (``--backend-option KEY=VALUE``):

* ``providers``: comma-separated execution providers, default ``CPUExecutionProvider``;
* ``graph_optimization_level``: ``disable``, ``basic``, ``extended``, ``layout`` or ``all``
  (default ``all``, onnxruntime's own default); both the optimized and the
  unoptimized session are legitimate configurations to score;
* ``intra_op_num_threads``: integer, default 1 (deterministic timing, cheap sessions).

Unsupported mapping: onnxruntime's ``NotImplemented`` status (e.g. "Could not find an
implementation for BatchNormalization(15) node ... float16"), a model-load failure for
an opset or IR version newer than the runtime ("... is till opset N", "Unsupported
model IR version"), and a kernel's own "Training mode only supports spatial BN" are
``unsupported``; every other exception on a valid model is ``error``.

bfloat16: onnxruntime's Python API has no numpy type for bfloat16, so bfloat16 inputs
are fed as ``OrtValue`` (uint16 bits tagged bfloat16) and bfloat16 outputs are copied
out of the CPU ``OrtValue`` as uint16 bits and viewed as ``ml_dtypes.bfloat16``.
"""

from __future__ import annotations

import ctypes
from typing import Any

import ml_dtypes
import numpy as np
import onnx

from .base import Backend, reject_unknown_options

#: onnxruntime messages that mean "this runtime does not implement that" (not a failure).
_UNSUPPORTED_MESSAGES = (
    "is till opset",  # opset newer than the runtime
    "Unsupported model IR version",  # IR version newer than the runtime
    "Could not find an implementation",  # no kernel for this op/version/type
    "Failed to find kernel for",
    "Training mode only supports",  # BatchNormalization: "Training mode only supports spatial BN"
    "is not a registered function/op",  # an op or domain the runtime does not know
)

_LEVELS = {
    "disable": "ORT_DISABLE_ALL",
    "basic": "ORT_ENABLE_BASIC",
    "extended": "ORT_ENABLE_EXTENDED",
    "layout": "ORT_ENABLE_LAYOUT",
    "all": "ORT_ENABLE_ALL",
}


_BF16 = np.dtype(ml_dtypes.bfloat16)
_BF16_ONNX = 16  # TensorProto.BFLOAT16


def _ortvalue_to_numpy(value) -> np.ndarray:
    """numpy array of an OrtValue, bfloat16 included (copied from CPU memory as uint16)."""
    if value.data_type() != "tensor(bfloat16)":
        return value.numpy()
    if value.device_name().lower() != "cpu":
        raise RuntimeError(f"bfloat16 output on device {value.device_name()!r} cannot be read")
    shape = tuple(value.shape())
    n = int(np.prod(shape, dtype=np.int64))
    raw = ctypes.string_at(value.data_ptr(), 2 * n) if n else b""
    return np.frombuffer(raw, dtype=np.uint16).view(_BF16).reshape(shape).copy()


class OnnxRuntimeBackend(Backend):
    """Runs cases with ``onnxruntime.InferenceSession``.

    Raises:
        ValueError: an unknown option, provider or optimization level.
    """

    name = "onnxruntime"

    def __init__(self, providers: str | list[str] = "CPUExecutionProvider", graph_optimization_level: str = "all",
                 intra_op_num_threads: int | str = 1, **unknown: Any):
        import onnxruntime as ort

        reject_unknown_options("onnxruntime", unknown, ("providers", "graph_optimization_level", "intra_op_num_threads"))
        self._ort = ort
        ort.set_default_logger_severity(4)
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
        so.log_severity_level = 4  # runtime errors are reported per case, not on stderr
        return self._ort.InferenceSession(model_bytes, sess_options=so, providers=self.providers)

    def run(self, prepared, inputs: dict[str, np.ndarray], output_names: list[str]) -> list[Any]:
        bf16_out = {o.name for o in prepared.get_outputs() if o.type == "tensor(bfloat16)"}
        if not bf16_out and not any(v.dtype == _BF16 for v in inputs.values()):
            return prepared.run(output_names, inputs)
        # onnxruntime's Python API has no numpy type for bfloat16: feed and fetch OrtValues.
        ov = self._ort.OrtValue
        feeds = {
            k: ov.ortvalue_from_numpy_with_onnx_type(np.asarray(v, order="C").view(np.uint16), _BF16_ONNX)
            if v.dtype == _BF16 else ov.ortvalue_from_numpy(np.asarray(v, order="C"))
            for k, v in inputs.items()
        }
        return [_ortvalue_to_numpy(o) for o in prepared.run_with_ort_values(output_names, feeds)]

    def is_unsupported(self, exc: BaseException) -> bool:
        if type(exc).__name__ == "NotImplemented":
            return True
        msg = str(exc)
        if any(p in msg for p in _UNSUPPORTED_MESSAGES):
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
