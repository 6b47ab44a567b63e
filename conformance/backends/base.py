"""The backend interface the runner drives.

A backend turns an ONNX model into something runnable (``prepare``) and runs it on
one data set (``run``).  It also says which of its exceptions mean "I do not
implement this operator / type / attribute / opset" (:class:`Unsupported`, outcome
``unsupported``) as opposed to "I failed on a valid model" (outcome ``error``).
A clean ``unsupported`` is never counted as a pass.
"""

from __future__ import annotations

import re
from abc import ABC, abstractmethod
from typing import Any

import numpy as np
import onnx


class Unsupported(Exception):
    """Raised by a backend (or mapped from its exception) when it cleanly declines a model."""


#: Message patterns that mean "not implemented / unsupported" for backends that
#: only raise generic exceptions.  Matched case-insensitively against str(exc).
UNSUPPORTED_PATTERNS = (
    r"not ?implemented",
    r"could not find an implementation",
    r"no implementation for operator",  # onnx.reference: "No implementation for operator 'X' domain '' and version 1"
    r"unsupported",
    r"not supported",
    r"is till opset",  # onnxruntime: "... is till opset 26" (opset newer than the runtime)
    r"opset .* (?:is )?(?:under development|not (?:yet )?supported)",
)
_UNSUPPORTED_RE = re.compile("|".join(f"(?:{p})" for p in UNSUPPORTED_PATTERNS), re.IGNORECASE)


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
    :meth:`is_unsupported` and :meth:`environment`.
    """

    #: Short name, recorded in results.
    name: str = "backend"

    @abstractmethod
    def prepare(self, model: onnx.ModelProto, model_bytes: bytes) -> Any:
        """Load/compile ``model``; return a handle for :meth:`run`.

        Raises:
            Exception: anything; the runner classifies it with :meth:`is_unsupported`.
        """

    @abstractmethod
    def run(self, prepared: Any, inputs: dict[str, np.ndarray], output_names: list[str]) -> list[Any]:
        """Run one data set; return one array per name in ``output_names``, in that order."""

    def is_unsupported(self, exc: BaseException) -> bool:
        """True when ``exc`` means the backend cleanly declines (not implemented/unsupported)."""
        if isinstance(exc, (Unsupported, NotImplementedError)):
            return True
        return bool(_UNSUPPORTED_RE.search(f"{type(exc).__name__}: {exc}"))

    def environment(self) -> dict[str, Any]:
        """Versions and options to record in the results (JSON-serialisable)."""
        return {"backend": self.name}
