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


def leaking() -> KernelBackend:
    """Allocates (and touches) memory without bound on float16 cases, until it is killed."""
    hoard = []

    def leak():
        while True:
            hoard.append(np.ones(8 * 2**20 // 8))  # 8 MiB, pages touched

    return KernelBackend({"Abs": _abs_or(leak)}, name="leaking")


def wrong_dtype() -> KernelBackend:
    """Returns float64 instead of the input type on float16 cases."""
    return KernelBackend({"Abs": lambda i, a, o, v: {"Y": np.abs(i["X"]).astype(np.float64)
                                                     if _is_victim(i["X"]) else np.abs(i["X"])}}, name="wrong-dtype")


class _AbortOnRead:
    """An output that aborts the process when it is read as an array (a backend whose output
    buffer is gone, say): the crash happens when the case is judged, not when it runs."""

    def __array__(self, dtype=None, copy=None):
        os.abort()


def bad_output() -> KernelBackend:
    """Returns, on float16 cases, an output whose reading aborts the process (SIGABRT)."""
    return KernelBackend({"Abs": lambda i, a, o, v: {"Y": _AbortOnRead() if _is_victim(i["X"]) else np.abs(i["X"])}},
                         name="bad-output")


class _Unlistable:
    """Outputs that cannot be listed: reading them raises inside the runner's own code."""

    def __iter__(self):
        raise ValueError("these outputs cannot be listed")


def unlistable() -> "VictimOutputsBackend":
    """Returns, on float16 cases, outputs whose iteration raises ValueError."""
    return VictimOutputsBackend("unlistable", lambda outs: _Unlistable())


def dropping() -> "VictimOutputsBackend":
    """Returns no outputs on float16 cases."""
    return VictimOutputsBackend("dropping", lambda outs: [])


class VictimOutputsBackend(KernelBackend):
    """Correct, but on float16 cases returns ``victim(outputs)`` instead of the outputs."""

    def __init__(self, name: str, victim):
        super().__init__({"Abs": lambda i, a, o, v: {"Y": np.abs(i["X"])}}, name=name)
        self.victim = victim

    def run(self, prepared, inputs, output_names):
        outs = super().run(prepared, inputs, output_names)
        return self.victim(outs) if _is_victim(inputs["X"]) else outs


def slow(delay: str = "0.1") -> KernelBackend:
    """Correct, but sleeps ``delay`` seconds per data set (to interrupt runs midway)."""

    def kernel(i, a, o, v):
        time.sleep(float(delay))
        return {"Y": np.abs(i["X"])}

    return KernelBackend({"Abs": kernel}, name="slow")
