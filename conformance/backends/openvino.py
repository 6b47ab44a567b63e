"""OpenVINO backend (``--backend openvino``; ``pip install 'onnx-conformance[openvino]'``).

The model is read from its bytes by OpenVINO's ONNX frontend
(``openvino.Core().read_model``) and compiled with ``Core.compile_model``.

Options (``--backend-option KEY=VALUE``):

* ``device``: OpenVINO device name, default ``CPU``;
* ``inference_precision_hint``: ``f32`` (default), ``f16``, ``bf16``, or ``default``
  to leave the device's own choice.  The default is ``f32`` because OpenVINO's CPU
  plugin otherwise runs float32 models in bfloat16 on CPUs with AVX512-BF16/AMX,
  which is an opt-in accuracy trade, not what the ONNX spec asks for; score the
  device default explicitly with ``inference_precision_hint=default``;
* ``inference_num_threads``: integer, default ``1`` (like the onnxruntime backend:
  deterministic, cheap when several workers run); ``0`` leaves the device default.

Outputs are fetched from the infer request by *name*, in the requested order, and
returned in the element type OpenVINO reports for them: nothing is cast, so a
runtime that returns float32 where the model declares float16 is scored ``fail``.
An output name the compiled model does not have is a missing output (``fail``).
Inputs are fed by name; an input the compiled model no longer has (the frontend
removed a parameter its translation does not use, e.g. BatchNormalization-6's
``mean``/``var`` in training mode) is not fed -- if the spec says it matters, the
outputs show it.

bfloat16: OpenVINO's Python API exposes bfloat16 tensor memory as a float16 numpy
view, and it does not understand ``ml_dtypes.bfloat16`` arrays (it reads their bytes
as something else).  bfloat16 inputs are therefore wrapped as ``openvino.Tensor``
of element type ``bf16`` over the uint16 bits, and bfloat16 outputs are read back as
uint16 bits and viewed as ``ml_dtypes.bfloat16``.

Unsupported mapping: OpenVINO's "No conversion rule found for operations" (an
operator or operator version its ONNX frontend does not know), "not
implemented"/"unsupported"/"not supported"/"doesn't support" messages (an element
type or attribute a translator or plugin lacks, e.g. "Unsupported precision"), and
an opset newer than the frontend are ``unsupported``.  Every other exception is
``error`` -- including an ``OpConversionFailure`` whose cause is a failed check in a
translator (e.g. a shape-inference check rejecting a Scale the spec allows): the
frontend knows the operator but rejects a valid model.
"""

from __future__ import annotations

import re
from typing import Any

import ml_dtypes
import numpy as np
import onnx

from .base import Backend, refuse_non_tensor_io, reject_unknown_options
from .command import MissingOutput

_BF16 = np.dtype(ml_dtypes.bfloat16)

#: OpenVINO element types whose numpy form ml_dtypes gives: OpenVINO type name -> (numpy dtype,
#: bits per element).  OpenVINO's tensors hold the 4- and 2-bit types packed, first element in the
#: low bits (as ONNX's TensorProto does); their ``.data`` is that buffer as uint8, and the 8-bit
#: float types' ``.data`` is uint8 too.  Feeding or reading them as plain numpy arrays would pack
#: nothing (an error charged to the runtime) or give uint8 (a wrong-dtype fail): a set-up problem
#: of this adapter, not of the runtime.
_PACKED = {
    "f8e4m3": (np.dtype(ml_dtypes.float8_e4m3fn), 8),
    "f8e5m2": (np.dtype(ml_dtypes.float8_e5m2), 8),
    "f8e8m0": (np.dtype(ml_dtypes.float8_e8m0fnu), 8),
    "f4e2m1": (np.dtype(ml_dtypes.float4_e2m1fn), 4),
    "u4": (np.dtype(ml_dtypes.uint4), 4),
    "i4": (np.dtype(ml_dtypes.int4), 4),
    "u2": (np.dtype(ml_dtypes.uint2), 2),
}
_PACKED_BY_DTYPE = {dt: name for name, (dt, _) in _PACKED.items()}


def _pack(value: np.ndarray, bits: int) -> np.ndarray:
    """The bytes of ``value`` (one element per byte, ml_dtypes' layout) packed ``8 // bits`` to a
    byte, first element in the low bits; uint8, ``ceil(size * bits / 8)`` long."""
    per = 8 // bits
    codes = value.reshape(-1).view(np.uint8) & np.uint8((1 << bits) - 1)
    codes = np.concatenate([codes, np.zeros((-codes.size) % per, np.uint8)]).reshape(-1, per)
    return np.bitwise_or.reduce(codes << (bits * np.arange(per, dtype=np.uint8)), axis=1).astype(np.uint8)


def _unpack(packed: np.ndarray, bits: int, dtype: np.dtype, shape) -> np.ndarray:
    """Inverse of :func:`_pack`: ``shape``-shaped ``dtype`` from the packed uint8 buffer."""
    n = int(np.prod(shape, dtype=np.int64))
    per = 8 // bits
    codes = (packed.reshape(-1, 1) >> (bits * np.arange(per, dtype=np.uint8))) & np.uint8((1 << bits) - 1)
    codes = codes.reshape(-1)[:n]
    if dtype in (np.dtype(ml_dtypes.int4),):  # two's complement: sign-extend the nibble
        return np.where(codes >= 8, codes.astype(np.int16) - 16, codes).astype(np.int8).astype(dtype).reshape(shape)
    return codes.astype(np.uint8).view(dtype).reshape(shape)
_HINTS = ("f32", "f16", "bf16", "default")
_KNOWN = ("device", "inference_precision_hint", "inference_num_threads")

#: OpenVINO messages that mean a clean decline (matched case-insensitively).
_UNSUPPORTED = re.compile(
    r"no conversion rule found|not ?implemented|unsupported|not supported|doesn't support|does not support|"
    r"opset .* not (?:yet )?supported",
    re.IGNORECASE,
)


class OpenVinoBackend(Backend):
    """Runs cases with OpenVINO (``Core.read_model`` from bytes, ``compile_model``).

    Raises:
        ValueError: OpenVINO is not installed, an unknown option, an unknown
            precision hint, a device this OpenVINO does not have, or a
            non-integer thread count.
    """

    name = "openvino"

    def __init__(self, device: str = "CPU", inference_precision_hint: str = "f32",
                 inference_num_threads: str | int = 1, **unknown: Any):
        reject_unknown_options("openvino", unknown, _KNOWN)
        try:
            import openvino as ov
        except ImportError as exc:
            raise ValueError(f"openvino is not installed: pip install 'onnx-conformance[openvino]' ({exc})") from None
        self._ov = ov
        self.core = ov.Core()
        self.device = str(device)
        available = list(self.core.available_devices)
        base = self.device.split(".")[0].split(":")[0]
        if base not in ("AUTO", "MULTI", "HETERO", "BATCH") and not any(d.split(".")[0] == base for d in available):
            raise ValueError(f"openvino device {self.device!r} not available; this OpenVINO has {available}")
        hint = str(inference_precision_hint).strip().lower() or "default"
        if hint not in _HINTS:
            raise ValueError(f"inference_precision_hint must be one of {', '.join(_HINTS)}, got {inference_precision_hint!r}")
        self.hint = hint
        try:
            self.threads = int(inference_num_threads)
        except ValueError:
            raise ValueError(f"inference_num_threads must be an integer, got {inference_num_threads!r}") from None
        self.config: dict[str, str] = {}
        if hint != "default":
            self.config["INFERENCE_PRECISION_HINT"] = hint
        if self.threads > 0:
            self.config["INFERENCE_NUM_THREADS"] = str(self.threads)

    def prepare(self, model: onnx.ModelProto, model_bytes: bytes):
        refuse_non_tensor_io(model, self.name)
        ov_model = self.core.read_model(model_bytes)
        compiled = self.core.compile_model(ov_model, self.device, self.config)
        names = {n for port in compiled.inputs for n in port.get_names()}
        return compiled, names

    def run(self, prepared, inputs: dict[str, np.ndarray], output_names: list[str]) -> list[Any]:
        ov = self._ov
        prepared, input_names = prepared
        request = prepared.create_infer_request()
        feeds = {}
        keep = []  # arrays wrapped (not copied) by an openvino.Tensor must outlive the inference
        for name, value in inputs.items():
            if name not in input_names:
                continue  # an input the frontend found unused and removed (see module docstring)
            value = np.asarray(value, order="C")  # (np.ascontiguousarray would make 0-d arrays 1-d)
            if value.dtype == _BF16:
                bits = value.view(np.uint16)
                keep.append(bits)
                feeds[name] = ov.Tensor(bits, ov.Shape(list(value.shape)), ov.Type.bf16)
            elif value.dtype in _PACKED_BY_DTYPE:
                type_name = _PACKED_BY_DTYPE[value.dtype]
                tensor = ov.Tensor(getattr(ov.Type, type_name), ov.Shape(list(value.shape)))
                if value.size:
                    data = value.view(np.uint8) if _PACKED[type_name][1] == 8 else _pack(value, _PACKED[type_name][1])
                    tensor.data[...] = data.reshape(tensor.data.shape)
                feeds[name] = tensor
            else:
                feeds[name] = value
        request.infer(feeds)
        out: list[Any] = []
        for name in output_names:
            try:
                port = prepared.output(name)
            except RuntimeError as exc:
                out.append(MissingOutput(f"the compiled model has no output {name!r}: {exc}"))
                continue
            out.append(_tensor_to_numpy(ov, request.get_tensor(port)))
        del keep
        return out

    def is_unsupported(self, exc: BaseException) -> bool:
        text = f"{type(exc).__name__}: {exc}"
        return super().is_unsupported(exc) or bool(_UNSUPPORTED.search(text))

    def environment(self) -> dict[str, Any]:
        env: dict[str, Any] = {
            "backend": self.name,
            "openvino": self._ov.get_version(),
            "device": self.device,
            "config": dict(self.config),
        }
        try:
            env["device_name"] = str(self.core.get_property(self.device, "FULL_DEVICE_NAME"))
        except Exception:  # noqa: BLE001 - informational only
            pass
        return env


def _tensor_to_numpy(ov, tensor) -> np.ndarray:
    """A copy of ``tensor`` as numpy, in the element type OpenVINO reports (bfloat16 included)."""
    data = tensor.data
    if tensor.element_type == ov.Type.bf16:
        return np.array(data, copy=True).view(np.uint16).view(_BF16)
    packed = _PACKED.get(tensor.element_type.get_type_name())
    if packed is not None:
        dtype, bits = packed
        raw = np.array(data, copy=True).view(np.uint8)
        shape = tuple(tensor.shape)
        return raw.view(dtype).reshape(shape) if bits == 8 else _unpack(raw, bits, dtype, shape)
    return np.array(data, copy=True)
