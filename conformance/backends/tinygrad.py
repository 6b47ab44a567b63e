"""tinygrad backend (``--backend tinygrad``; ``pip install 'onnx-conformance[tinygrad]'``).

Runs cases with ``tinygrad.nn.onnx.OnnxRunner`` (tinygrad >= 0.14, which selects
devices with the ``DEV`` context variable; the model is passed as a ``Tensor`` of its
bytes), then realises each output with ``Tensor.numpy()``.

tinygrad needs a working device.  Its ``CPU`` device compiles generated C with
``clang`` (``$CC``, default ``clang``; gcc does not take its flags), so it needs a
clang on ``PATH``; ``PYTHON`` is an emulator that needs nothing but is slow.

Options (``--backend-option KEY=VALUE``):

* ``device``: the tinygrad device (``CPU``, ``PYTHON``, ``CL``, ``CUDA``, ...; the
  ``DEV`` syntax, e.g. ``CPU:LLVM``, is accepted).  Default: the ``DEV`` environment
  variable if set, else ``CPU`` when ``$CC``/``clang`` is found on ``PATH``, else
  ``PYTHON``.  The choice is recorded in the results' environment.

Outputs are returned in the dtype tinygrad computed them in, never cast:
``Tensor.numpy()`` turns a bfloat16 tensor into float32, so bfloat16 outputs are
bit-cast to uint16 inside tinygrad and viewed as ``ml_dtypes.bfloat16`` instead.

Unsupported mapping: ``NotImplementedError`` (tinygrad raises it for an operator
or operator version it does not implement: "op='X' is not supported"), and
tinygrad's own assertions that decline an attribute value or type ("only float32
is supported", e.g. LayerNormalization with stash_type != 1, "... not supported
yet") are ``unsupported``; every other exception is ``error``.
"""

from __future__ import annotations

import os
import re
import shutil
from typing import Any

import ml_dtypes
import numpy as np
import onnx

from .base import Backend, refuse_non_tensor_io, reject_unknown_options

_KNOWN = ("device",)
_BF16 = np.dtype(ml_dtypes.bfloat16)

_DECLINE = re.compile(r"only \w+ (?:is|are) supported|not supported|unsupported|not implemented", re.IGNORECASE)


def default_device() -> str:
    """The device the backend uses when none is given (see the module docstring)."""
    env = os.environ.get("DEV", "").strip()
    if env:
        return env
    cc = (os.environ.get("CC") or "clang").split()[0]
    return "CPU" if shutil.which(cc) else "PYTHON"


class TinygradBackend(Backend):
    """Runs cases with ``tinygrad.nn.onnx.OnnxRunner`` on one tinygrad device.

    Raises:
        ValueError: tinygrad is not installed (or has no ``nn.onnx.OnnxRunner``),
            an unknown option, or a device tinygrad cannot open.
    """

    name = "tinygrad"

    def __init__(self, device: str | None = None, **unknown: Any):
        reject_unknown_options("tinygrad", unknown, _KNOWN)
        try:
            import tinygrad
            from tinygrad.helpers import Context
            from tinygrad.nn.onnx import OnnxRunner
        except ImportError as exc:
            raise ValueError(f"tinygrad is not installed (or too old to have tinygrad.nn.onnx.OnnxRunner): "
                             f"pip install 'onnx-conformance[tinygrad]' ({exc})") from None
        self._tinygrad = tinygrad
        self._Context = Context
        self._OnnxRunner = OnnxRunner
        self.device = str(device).strip() if device else default_device()
        from tinygrad.helpers import ContextVar

        if "DEV" not in getattr(ContextVar, "_cache", {}):
            raise ValueError("this tinygrad selects devices without the DEV context variable: "
                             "pip install 'onnx-conformance[tinygrad]' (tinygrad >= 0.14)")
        try:
            with self._Context(DEV=self.device):
                from tinygrad import Device

                self.device_name = Device.DEFAULT
                Device[self.device_name]  # opens it: fails early without a compiler
        except Exception as exc:  # noqa: BLE001 - tinygrad raises many kinds
            raise ValueError(f"tinygrad device {self.device!r} cannot be opened: {type(exc).__name__}: {exc}. "
                             "Its CPU device needs clang on PATH; device=PYTHON needs nothing (slow)") from None

    def prepare(self, model: onnx.ModelProto, model_bytes: bytes):
        refuse_non_tensor_io(model, self.name)
        from tinygrad import Tensor

        with self._Context(DEV=self.device):
            return self._OnnxRunner(Tensor(model_bytes))

    def run(self, prepared, inputs: dict[str, np.ndarray], output_names: list[str]) -> list[Any]:
        with self._Context(DEV=self.device):
            outs = prepared({k: np.asarray(v, order="C") for k, v in inputs.items()})  # keeps 0-d arrays 0-d
            return [_to_numpy(outs[name]) for name in output_names]

    def is_unsupported(self, exc: BaseException) -> bool:
        if super().is_unsupported(exc):
            return True
        return isinstance(exc, AssertionError) and bool(_DECLINE.search(str(exc)))

    def environment(self) -> dict[str, Any]:
        import importlib.metadata

        try:
            version = importlib.metadata.version("tinygrad")
        except importlib.metadata.PackageNotFoundError:
            version = getattr(self._tinygrad, "__version__", None)
        return {"backend": self.name, "tinygrad": version, "device": self.device_name,
                "device_option": self.device, "CC": os.environ.get("CC")}


def _to_numpy(value: Any) -> Any:
    """numpy array of a tinygrad Tensor in its own dtype (bfloat16 kept as ``ml_dtypes.bfloat16``)."""
    from tinygrad import Tensor, dtypes

    if not isinstance(value, Tensor):
        return value
    if value.dtype == dtypes.bfloat16:
        return value.bitcast(dtypes.uint16).numpy().view(_BF16)
    return value.numpy()
