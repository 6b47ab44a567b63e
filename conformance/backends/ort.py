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

bfloat16 and float8: onnxruntime's Python API has no numpy type for bfloat16 or the four
float8 types (float8e4m3fn, float8e4m3fnuz, float8e5m2, float8e5m2fnuz), so inputs of
those types are fed as ``OrtValue`` (the raw bits as uint16 / uint8, tagged with the ONNX
element type) and outputs of those types are copied out of the CPU ``OrtValue`` as raw
bits (2 / 1 bytes per element) and viewed as the ``ml_dtypes`` type (``bfloat16``,
``float8_e4m3fn``...).  Every other input and output goes through ``InferenceSession.run``
unchanged; an output of such a type on a non-CPU device raises ``RuntimeError`` (``error``).
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


#: onnxruntime type string -> (ONNX element type, numpy dtype of the raw bits, ml_dtypes dtype) of
#: the element types onnxruntime's Python API cannot convert to or from numpy itself.
_BITS_TYPES = {
    "tensor(bfloat16)": (16, np.dtype(np.uint16), np.dtype(ml_dtypes.bfloat16)),
    "tensor(float8e4m3fn)": (17, np.dtype(np.uint8), np.dtype(ml_dtypes.float8_e4m3fn)),
    "tensor(float8e4m3fnuz)": (18, np.dtype(np.uint8), np.dtype(ml_dtypes.float8_e4m3fnuz)),
    "tensor(float8e5m2)": (19, np.dtype(np.uint8), np.dtype(ml_dtypes.float8_e5m2)),
    "tensor(float8e5m2fnuz)": (20, np.dtype(np.uint8), np.dtype(ml_dtypes.float8_e5m2fnuz)),
}
#: ml_dtypes dtype -> (ONNX element type, numpy dtype of the raw bits), for feeding.
_BITS_BY_DTYPE = {dt: (onnx_type, bits) for onnx_type, bits, dt in _BITS_TYPES.values()}


def _ortvalue_to_numpy(value) -> np.ndarray:
    """numpy array of an OrtValue; bfloat16 and float8 are copied from CPU memory as raw bits.

    Raises:
        RuntimeError: a bfloat16/float8 output that does not live in CPU memory.
    """
    spec = _BITS_TYPES.get(value.data_type())
    if spec is None:
        return value.numpy()
    _, bits, dt = spec
    if value.device_name().lower() != "cpu":
        raise RuntimeError(f"{value.data_type()} output on device {value.device_name()!r} cannot be read")
    shape = tuple(value.shape())
    n = int(np.prod(shape, dtype=np.int64))
    raw = ctypes.string_at(value.data_ptr(), bits.itemsize * n) if n else b""
    return np.frombuffer(raw, dtype=bits).view(dt).reshape(shape).copy()


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
        bits_out = any(o.type in _BITS_TYPES for o in prepared.get_outputs())
        if not bits_out and not any(np.asarray(v).dtype in _BITS_BY_DTYPE for v in inputs.values()):
            return prepared.run(output_names, inputs)
        # onnxruntime's Python API has no numpy type for bfloat16 / float8: feed and fetch OrtValues.
        ov = self._ort.OrtValue
        feeds = {}
        for k, v in inputs.items():
            v = np.asarray(v, order="C")
            if v.dtype in _BITS_BY_DTYPE:
                onnx_type, bits = _BITS_BY_DTYPE[v.dtype]
                feeds[k] = ov.ortvalue_from_numpy_with_onnx_type(v.view(bits), onnx_type)
            else:
                feeds[k] = ov.ortvalue_from_numpy(v)
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
