"""Purpose-built faulty backends: each misbehaves on float16 cases, is correct otherwise."""

from __future__ import annotations

import os
import time

import numpy as np

from conformance.backends.kernel import KernelBackend


def _is_victim(x) -> bool:
    return x.dtype == np.float16


def _abs_or(fault):
    def kernel(inputs, attrs, outputs, opset):
        x = inputs["X"]
        if _is_victim(x):
            fault()
        return {"Y": np.abs(x)}

    return kernel


def aborting() -> KernelBackend:
    """Calls os.abort() (SIGABRT) on float16 cases."""
    return KernelBackend({"Abs": _abs_or(os.abort)}, name="aborting")


def segfaulting() -> KernelBackend:
    """Dereferences a null pointer (SIGSEGV) on float16 cases."""
    import ctypes

    return KernelBackend({"Abs": _abs_or(lambda: ctypes.string_at(0))}, name="segfaulting")


def hanging() -> KernelBackend:
    """Sleeps forever on float16 cases."""
    return KernelBackend({"Abs": _abs_or(lambda: time.sleep(10_000))}, name="hanging")


def exiting() -> KernelBackend:
    """Calls os._exit(3) on float16 cases."""
    return KernelBackend({"Abs": _abs_or(lambda: os._exit(3))}, name="exiting")
