"""tract backend (``--backend tract``; ``pip install 'onnx-conformance[tract]'``).

tract (Sonos' Rust inference engine) loads an ONNX file as an ``InferenceModel``,
which becomes a typed ``Model`` once every input has a concrete shape and element
type ("input facts"), then a ``Runnable``.  Its Python bindings load only from a
path, so each model is written to an anonymous in-memory file (Linux ``memfd``;
a temporary file elsewhere) first.  Our models declare
concrete shapes and types for every graph input, which tract takes as the facts;
parameters given as initializers are constants to tract.

Options (``--backend-option KEY=VALUE``):

* ``runtime``: tract runtime name, default ``default`` (the CPU runtime; ``cuda``
  and ``metal`` exist in builds that have them).

Outputs: tract renames graph outputs after the nodes that produce them, so outputs
are mapped *by position* in the ONNX graph's output list (which the backend reads
from the model) to the requested names, and returned in the element type tract
produced (never cast).

Unsupported mapping: tract's errors for an operator it does not know ("... not
implemented", "Unimplemented operator", "unsupported ..."), an element type its
Python bindings cannot carry (bfloat16: tract's ``DatumType`` has no bfloat16, so a
model with a bfloat16 input or output is declined up front), an element type tract
itself lacks ("Unknown DatumType Bfloat16", e.g. LayerNormalization's
stash_type=16), an attribute value it
does not handle ("... is not supported", e.g. BatchNormalization's ``spatial``),
parameters it needs as constants but that are graph inputs ("Params are not
const": tract's BatchNormalization folds scale/B/mean/var at load time, so it takes
them only as initializers), and optional outputs its operator does not have
("Wrong number of outputs. Op says 1, node says 3": BatchNormalization's training
outputs), and an opset it does not know, are ``unsupported``; every other error is
``error`` (for example a type-inference rule that rejects the mixed parameter types
BatchNormalization-15 allows).  tract attaches a Rust backtrace to
its messages when ``RUST_BACKTRACE`` is set; it is cut off in the recorded message.
"""

from __future__ import annotations

import contextlib
import os
import re
import tempfile
from typing import Any

import numpy as np
import onnx
from onnx import TensorProto

from .base import Backend, Unsupported, refuse_non_tensor_io, reject_unknown_options

_KNOWN = ("runtime",)

#: tract's element types reachable from numpy through its Python bindings.
_SUPPORTED_ELEM = {
    TensorProto.FLOAT, TensorProto.FLOAT16, TensorProto.DOUBLE, TensorProto.BOOL, TensorProto.INT8,
    TensorProto.INT16, TensorProto.INT32, TensorProto.INT64, TensorProto.UINT8, TensorProto.UINT16,
    TensorProto.UINT32, TensorProto.UINT64,
}

_UNSUPPORTED = re.compile(
    r"not ?implemented|unimplemented|unsupported|not supported|does not support|doesn't support|"
    r"no (?:op|operator) for|"
    r"(?:unknown|unsupported) (?:op|operator)|opset .* not (?:yet )?supported|"
    r"unknown datumtype|params are not const|wrong number of outputs\. op says",
    re.IGNORECASE,
)


@contextlib.contextmanager
def _model_file(data: bytes):
    """A path holding ``data`` for tract's path-only loader.

    On Linux an anonymous in-memory file (``memfd``, read through ``/proc/self/fd``), so
    nothing is left behind when tract crashes the process while loading; elsewhere a
    temporary file, removed afterwards.
    """
    if hasattr(os, "memfd_create") and os.path.isdir("/proc/self/fd"):
        fd = os.memfd_create("onnx-conformance-model")
        try:
            view = memoryview(data)
            while view:
                view = view[os.write(fd, view):]
            yield f"/proc/self/fd/{fd}"
        finally:
            os.close(fd)
        return
    fd, path = tempfile.mkstemp(suffix=".onnx", prefix="onnx-conformance-tract-")
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
        yield path
    finally:
        os.unlink(path)


class TractBackendError(RuntimeError):
    """A tract error, with the Rust backtrace cut off."""


def _clean(exc: BaseException) -> str:
    text = str(exc)
    cut = text.find("Stack backtrace:")
    if cut >= 0:
        text = text[:cut]
    return text.strip()


class TractBackend(Backend):
    """Runs cases with tract (``tract.onnx().load`` -> ``into_model`` -> ``into_runnable``).

    Raises:
        ValueError: tract is not installed, an unknown option, or an unknown runtime.
    """

    name = "tract"

    def __init__(self, runtime: str = "default", **unknown: Any):
        reject_unknown_options("tract", unknown, _KNOWN)
        try:
            import tract
        except ImportError as exc:
            raise ValueError(f"tract is not installed: pip install 'onnx-conformance[tract]' ({exc})") from None
        self._tract = tract
        self.runtime_name = str(runtime)
        self._runtime = None
        if self.runtime_name != "default":
            try:
                self._runtime = tract.runtime_for_name(self.runtime_name)
            except Exception as exc:  # noqa: BLE001 - tract raises its own TractError
                raise ValueError(f"tract runtime {self.runtime_name!r} not available: {_clean(exc)}") from None

    def prepare(self, model: onnx.ModelProto, model_bytes: bytes):
        refuse_non_tensor_io(model, self.name)
        inits = {t.name for t in model.graph.initializer}
        for vi in list(model.graph.input) + list(model.graph.output):
            et = vi.type.tensor_type.elem_type
            if et not in _SUPPORTED_ELEM:
                raise Unsupported(f"tract's Python bindings have no {TensorProto.DataType.Name(et)} element type "
                                  f"({vi.name!r})")
        with _model_file(model_bytes) as path:
            try:
                inference_model = self._tract.onnx().load(path)
                typed = inference_model.into_model()
                runnable = self._runtime.prepare(typed) if self._runtime is not None else typed.into_runnable()
            except self._tract.TractError as exc:
                raise TractBackendError(_clean(exc)) from None
        inputs = [i.name for i in model.graph.input if i.name not in inits]
        outputs = [o.name for o in model.graph.output]
        return runnable, inputs, outputs

    def run(self, prepared, inputs: dict[str, np.ndarray], output_names: list[str]) -> list[Any]:
        runnable, input_order, output_order = prepared
        feeds = [np.asarray(inputs[name], order="C") for name in input_order]  # keeps 0-d arrays 0-d
        try:
            result = runnable.run(feeds)
            arrays = [t.to_numpy() for t in result]
        except self._tract.TractError as exc:
            raise TractBackendError(_clean(exc)) from None
        if len(arrays) != len(output_order):
            raise TractBackendError(f"tract returned {len(arrays)} outputs for a graph with {len(output_order)}")
        by_name = dict(zip(output_order, arrays))
        return [by_name[n] for n in output_names]

    def is_unsupported(self, exc: BaseException) -> bool:
        if isinstance(exc, Unsupported | NotImplementedError):
            return True
        return bool(_UNSUPPORTED.search(_clean(exc)))

    def environment(self) -> dict[str, Any]:
        import importlib.metadata

        try:
            dist = importlib.metadata.version("tract")
        except importlib.metadata.PackageNotFoundError:
            dist = None
        return {"backend": self.name, "tract": self._tract.version(), "tract_python": dist,
                "runtime": self.runtime_name}
