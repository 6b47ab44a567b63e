"""Backends: built-in names and ``package.module:Attr`` specs.

Built-in names: ``onnxruntime`` (alias ``ort``), ``onnx-reference``.  Anything of the
form ``package.module:Attr`` is imported: an ``onnx.backend.base.Backend`` subclass or
instance is wrapped by :class:`~conformance.backends.backend_api.BackendApiBackend`;
an instance or subclass of our own :class:`~conformance.backends.base.Backend` is
used as is; any other callable is a factory, called with the options, that must
return one of ours.
"""

from __future__ import annotations

import inspect
from typing import Any

from .base import Backend, Unsupported

BUILTIN = {
    "onnxruntime": "conformance.backends.ort:OnnxRuntimeBackend",
    "ort": "conformance.backends.ort:OnnxRuntimeBackend",
    "onnx-reference": "conformance.backends.onnx_reference:OnnxReferenceBackend",
    "openvino": "conformance.backends.openvino:OpenVinoBackend",
    "tract": "conformance.backends.tract:TractBackend",
    "tinygrad": "conformance.backends.tinygrad:TinygradBackend",
    "command": "conformance.backends.command:CommandBackend",
}

__all__ = ["Backend", "Unsupported", "resolve_backend", "parse_options", "BUILTIN"]


def parse_options(items: list[str] | None) -> dict[str, str]:
    """Parse ``["key=value", ...]`` into a dict.

    Raises:
        ValueError: an item without ``=``.
    """
    out: dict[str, str] = {}
    for item in items or []:
        key, sep, value = item.partition("=")
        if not sep or not key:
            raise ValueError(f"backend option {item!r} is not of the form KEY=VALUE")
        out[key.strip()] = value.strip()
    return out


def resolve_backend(spec: str | Backend | Any, options: dict[str, Any] | None = None) -> Backend:
    """Turn a backend spec (name, ``package.module:Attr`` or object) into a :class:`Backend`.

    Raises:
        ValueError: unknown name, unimportable spec, an object that is not a backend,
            or options the backend does not take.
    """
    from .backend_api import BackendApiBackend, load_attr

    options = dict(options or {})
    if isinstance(spec, Backend):
        if options:
            raise ValueError("options cannot be applied to an already constructed backend")
        return spec
    if isinstance(spec, str) and spec in BUILTIN:
        cls = load_attr(BUILTIN[spec])
        return cls(**options)
    if isinstance(spec, str):
        if ":" not in spec:
            raise ValueError(
                f"unknown backend {spec!r}: built-in backends are {', '.join(sorted(set(BUILTIN) - {'ort'}))}; "
                "or give package.module:Attr for an onnx.backend.base.Backend subclass"
            )
        obj = load_attr(spec)
        name = spec
    else:
        obj, name = spec, getattr(spec, "__name__", type(spec).__name__)
    if inspect.isclass(obj) and issubclass(obj, Backend):
        return obj(**options)
    if isinstance(obj, Backend):
        if options:
            raise ValueError(f"{name!r} is a backend instance: options cannot be applied to it")
        return obj
    import onnx.backend.base as obb

    is_api = (inspect.isclass(obj) and issubclass(obj, obb.Backend)) or isinstance(obj, obb.Backend)
    if is_api:
        device = options.pop("device", "CPU")
        return BackendApiBackend(name, obj, device=device, **options)
    if callable(obj) and not inspect.isclass(obj):
        # a factory: ``pkg.mod:make_backend`` called with the options
        made = obj(**options)
        if isinstance(made, Backend):
            return made
        raise ValueError(f"factory {name!r} returned {type(made).__name__}, not a conformance Backend")
    raise ValueError(f"{name!r} is neither an onnx.backend.base.Backend nor a conformance Backend (got {obj!r})")
