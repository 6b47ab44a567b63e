"""Adapter for any ``onnx.backend.base.Backend`` subclass (``--backend package.module:Attr``).

Every runtime that speaks the ONNX backend API (``prepare(model, device)`` returning a
``BackendRep`` with ``run(inputs)``) plugs in without code.  ``Attr`` may be the
Backend class itself or an instance.  Options given on the command line are
passed to ``prepare`` as keyword arguments (values as strings), and ``device``
(default ``CPU``) is the device string.
"""

from __future__ import annotations

import importlib
from typing import Any

import numpy as np
import onnx

from .base import Backend


def load_attr(spec: str) -> Any:
    """Import ``package.module:Attr`` (``Attr`` may be dotted).

    Raises:
        ValueError: ``spec`` is not of that form, or the module or attribute cannot be found.
    """
    if ":" not in spec:
        raise ValueError(f"backend spec {spec!r} is neither a built-in name nor of the form package.module:Attr")
    mod_name, _, attr = spec.partition(":")
    try:
        obj: Any = importlib.import_module(mod_name)
    except ImportError as exc:
        raise ValueError(f"cannot import module {mod_name!r} for backend {spec!r}: {exc}") from exc
    for part in attr.split("."):
        try:
            obj = getattr(obj, part)
        except AttributeError:
            raise ValueError(f"module {mod_name!r} has no attribute {attr!r} (backend {spec!r})") from None
    return obj


#: The package a case's ``check`` must live in.  A bundle is data: a ``check`` it names is
#: resolved only inside this project, never in an arbitrary module a bundle could name.
CHECK_PACKAGE = "conformance"


def load_check(spec: str) -> Any:
    """Resolve a case's ``check`` (``conformance.module:function``, see :attr:`Case.check`).

    Raises:
        ValueError: ``spec`` names a module outside the ``conformance`` package, or it cannot
            be imported or has no such attribute.
    """
    mod_name = spec.partition(":")[0]
    if mod_name != CHECK_PACKAGE and not mod_name.startswith(CHECK_PACKAGE + "."):
        raise ValueError(f"check {spec!r} is not a function of the {CHECK_PACKAGE} package")
    return load_attr(spec)


class BackendApiBackend(Backend):
    """Wraps an ``onnx.backend.base.Backend`` (class or instance)."""

    def __init__(self, spec: str, backend: Any, device: str = "CPU", **prepare_kwargs: Any):
        self.name = spec
        self.backend = backend
        self.device = device
        self.prepare_kwargs = prepare_kwargs

    def prepare(self, model: onnx.ModelProto, model_bytes: bytes):
        return self.backend.prepare(model, self.device, **self.prepare_kwargs)

    def run(self, prepared, inputs: dict[str, np.ndarray], output_names: list[str]) -> list[Any]:
        # The backend API takes inputs positionally, in graph-input order, and returns
        # all graph outputs in graph order; our graphs list exactly the requested outputs.
        return list(prepared.run([inputs[k] for k in inputs]))

    def environment(self) -> dict[str, Any]:
        mod = getattr(self.backend, "__module__", "") or type(self.backend).__module__
        top = mod.split(".")[0]
        version = getattr(importlib.import_module(top), "__version__", None) if top else None
        return {"backend": self.name, "module": mod, "version": version, "device": self.device}
