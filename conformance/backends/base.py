"""The backend interface the runner drives.

A backend turns an ONNX model into something runnable (``prepare``) and runs it on
one data set (``run``).  It also says which of its exceptions mean "I do not
implement this operator / type / attribute / opset" (:class:`Unsupported`, outcome
``unsupported``) as opposed to "I failed on a valid model" (outcome ``error``).
A clean ``unsupported`` is never counted as a pass.  Which messages are refusals, and of
what (:data:`REFUSAL_KINDS`: the model's version, an element type, a kernel), is one table,
:data:`REFUSALS`, per backend.
"""

from __future__ import annotations

import functools
import re
from abc import ABC, abstractmethod
from typing import Any, NamedTuple

import numpy as np
import onnx


class Unsupported(Exception):
    """Raised by a backend (or mapped from its exception) when it cleanly declines a model.

    Args:
        message: what it cannot do.
        kind: one of :data:`REFUSAL_KINDS` (default ``"kernel"``).
    """

    def __init__(self, message: str = "", kind: str = "kernel"):
        super().__init__(message)
        if kind not in REFUSAL_KINDS:
            raise ValueError(f"refusal kind must be one of {REFUSAL_KINDS}, got {kind!r}")
        self.kind = kind

    def __reduce__(self):
        return (type(self), (str(self), self.kind))


def refuse_non_tensor_io(model: onnx.ModelProto, backend: str) -> None:
    """Raise :class:`Unsupported` (kind ``type``) when a graph input or output of ``model`` is not
    a tensor (a sequence or an optional, :data:`conformance.case.KINDS`): for backends whose
    Python API feeds and returns tensors only (OpenVINO, tract, tinygrad).

    Raises:
        Unsupported: such an input or output, named.
    """
    for vi in list(model.graph.input) + list(model.graph.output):
        which = vi.type.WhichOneof("value")
        if which not in (None, "tensor_type"):
            raise Unsupported(f"{backend} takes and returns tensors only; {vi.name!r} is a "
                              f"{which.replace('_type', '')} value", kind="type")


#: What a runtime can say it cannot do, in the order they are tried:
#:
#: * ``version``: the model's IR version or an opset it imports is newer than the runtime
#:   ("Unsupported model IR version: 10, max supported IR version: 9").  Says nothing about
#:   the model itself: a valid model and an invalid one are refused alike;
#: * ``type``: the runtime has no tensor type for an element type of the model;
#: * ``kernel``: no implementation of this operator / version / type / attribute.
REFUSAL_KINDS = ("version", "type", "kernel")


class Refusal(NamedTuple):
    """A backend's clean refusal of a model: ``kind`` (one of :data:`REFUSAL_KINDS`) and
    ``reason``, the words of the runtime's message that say so (first line, at most 200 chars)."""

    kind: str
    reason: str


#: onnxruntime's refusals of a model newer than the release, every release from 1.15 to 1.32
#: (tests/test_compat.py holds the messages, with the release they came from).  Releases up to
#: 1.21 wrap them in an INVALID_ARGUMENT status, later ones in FAIL.
_ORT_VERSION = (
    r"Unsupported model IR version: \d+, max supported IR version: \d+",  # onnxruntime/core/graph/model.cc
    r"Opset \d+ is under development and support for this is limited",  # model_load_utils.h, ... "is till opset N"
    r"is till opset \d+",
)

#: Message patterns, per backend name (:attr:`Backend.name`), that mean the backend declines
#: the model: kind -> regular expressions, searched case-insensitively in
#: ``"ExceptionType: message"``.  The row ``"*"`` serves every backend without its own row (a
#: ``package.module:Attr`` backend, the backend-API adapter, ``onnx-reference``...), and
#: backends that override :meth:`Backend.is_unsupported` add their own "kernel" refusals.
#: The one table the runner's ``unsupported`` decisions read (:meth:`Backend.refusal`).
REFUSALS: dict[str, dict[str, tuple[str, ...]]] = {
    "*": {
        "version": _ORT_VERSION + (
            r"ir_version \d+ is higher than the checker's \(\d+\)",  # onnx.checker (1.19: "... (12)")
            r"\b(?:IR version|opset) ?\d+[^\n]{0,40}?\b(?:is )?(?:not (?:yet )?supported|too new|newer than)",
            r"opset \d+[^\n]{0,40}?under development",
        ),
        "type": (),
        "kernel": (
            r"not ?implemented",
            r"could not find an implementation",
            r"no implementation for operator",  # onnx.reference: "No implementation for operator 'X' domain '' and version 1"
            r"unsupported",
            r"not supported",
        ),
    },
    "onnxruntime": {
        "version": _ORT_VERSION,
        "type": (
            r"MLDataType for: tensor\(\w+\) is not currently registered or supported",  # complex64 (1.15-1.32)
            # the same refusal of a sequence or optional of such tensors: seq(tensor(complex64))
            r"MLDataType for: (?:seq\(|optional\()+tensor\(\w+\)\)+ is not currently registered or supported",
            r"tensor type \d+ is not supported",  # OrtValue factories: float6e2m3 (27) in 1.32
        ),
        "kernel": (
            r"^NotImplemented: [^\n]*",  # the NOT_IMPLEMENTED status: no kernel for this op / version / type
            r"Could not find an implementation for [^\n]*? node",
            r"Failed to find kernel for \S+",
            r"Training mode only supports spatial BN",  # BatchNormalization's own refusal
            r"is not a registered function/op",  # an op or domain the runtime does not know
            # a kernel without this type for one attribute value, said at run time (1.32:
            # "MLFloat16 data type is not supported with ScatterElements opset 16 when reduction is 'add'")
            r"data type is not supported with \w+ opset \d+ when \w+ is",
        ),
    },
}
_COMPILED: dict[str, dict[str, re.Pattern]] = {
    name: {kind: re.compile("|".join(f"(?:{p})" for p in pats), re.IGNORECASE) for kind, pats in row.items() if pats}
    for name, row in REFUSALS.items()
}

#: The "*" row's kernel patterns (kept for backends that import them).
UNSUPPORTED_PATTERNS = REFUSALS["*"]["kernel"]


def _short(text: str) -> str:
    line = text.strip().split("\n", 1)[0]
    return line if len(line) <= 200 else line[:197] + "..."


@functools.lru_cache(maxsize=4096)
def match_refusal(backend_name: str, text: str) -> Refusal | None:
    """The refusal the message ``text`` (``"ExceptionType: message"``) of backend ``backend_name``
    states, by the :data:`REFUSALS` table (the ``"*"`` row for names without a row of their own);
    ``None`` when it states none (a rejection of an invalid model, or a failure).  Remembered per
    message: a suite meets the same refusal hundreds of times, and matching the table costs ~20 us."""
    row = _COMPILED.get(backend_name, _COMPILED["*"])
    for kind in REFUSAL_KINDS:
        pat = row.get(kind)
        m = pat.search(text) if pat is not None else None
        if m:
            # a version refusal's words are the match; a type's or kernel's run on to the end of its line
            return Refusal(kind, _short(m.group(0) if kind == "version" else text[m.start():]))
    return None


def reject_unknown_options(backend: str, unknown: dict[str, Any], known) -> None:
    """Raise for backend options the backend does not take (``--backend-option KEY=VALUE``).

    Raises:
        ValueError: ``unknown`` is not empty; the message names them and the known ones.
    """
    if unknown:
        known = list(known)
        tail = f"known: {', '.join(known)}" if known else "it takes none"
        raise ValueError(f"unknown {backend} option(s): {', '.join(sorted(unknown))}; {tail}")


class Backend(ABC):
    """A runtime under test.

    Subclasses implement :meth:`prepare` and :meth:`run`; they may override
    :meth:`is_unsupported` (more messages that mean "not implemented") and
    :meth:`environment`.  What a backend's messages mean is decided in one place, the
    :data:`REFUSALS` table, read by :meth:`refusal`.
    """

    #: Short name, recorded in results.
    name: str = "backend"

    @abstractmethod
    def prepare(self, model: onnx.ModelProto, model_bytes: bytes) -> Any:
        """Load/compile ``model``; return a handle for :meth:`run`.

        Raises:
            Exception: anything; the runner classifies it with :meth:`refusal`.
        """

    @abstractmethod
    def run(self, prepared: Any, inputs: dict[str, np.ndarray], output_names: list[str]) -> list[Any]:
        """Run one data set; return one array per name in ``output_names``, in that order."""

    def _table_refusal(self, exc: BaseException) -> Refusal | None:
        text = f"{type(exc).__name__}: {exc}"
        found = match_refusal(self.name, text)
        if isinstance(exc, Unsupported) and (found is None or found.kind != "version"):
            return Refusal(exc.kind, _short(str(exc) or type(exc).__name__))
        if found is None and isinstance(exc, NotImplementedError):
            return Refusal("kernel", _short(text))
        return found

    def is_unsupported(self, exc: BaseException) -> bool:
        """True when ``exc`` means the backend cleanly declines (:data:`REFUSALS`; an
        :class:`Unsupported` or ``NotImplementedError``)."""
        return self._table_refusal(exc) is not None

    def refusal(self, exc: BaseException) -> Refusal | None:
        """What ``exc`` says the backend cannot do, or ``None`` if it is no refusal.

        A ``version`` refusal (:data:`REFUSALS`) is one whatever else the backend says: it
        says nothing about the model, so the runner never scores it as the rejection of an
        invalid model.  Otherwise :meth:`is_unsupported` decides whether ``exc`` is a refusal
        (a subclass may widen or narrow the table: the command backend's failed command is no
        refusal), and the table its kind (``type`` before ``kernel``; ``kernel`` when only the
        subclass recognises it).
        """
        found = self._table_refusal(exc)
        if found is not None and found.kind == "version":
            return found
        if type(self).is_unsupported is Backend.is_unsupported:  # the table's answer: not matched again
            return found
        if not self.is_unsupported(exc):
            return None
        return found or Refusal("kernel", _short(f"{type(exc).__name__}: {exc}"))

    def refusal_kind(self, exc: BaseException) -> str | None:
        """``refusal(exc).kind``: ``"version"``, ``"type"``, ``"kernel"`` or ``None``."""
        found = self.refusal(exc)
        return found.kind if found is not None else None

    def environment(self) -> dict[str, Any]:
        """Versions and options to record in the results (JSON-serialisable)."""
        return {"backend": self.name}
