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


def leak_limit_mb(above: int = 400) -> int:
    """The memory limit (MiB) a test gives a worker that runs :func:`leaking`: ``above`` MiB over this
    process's own resident memory, since a forked worker starts as large as its parent (a test
    process that ran hundreds of tests before held over 500 MiB), not ``above`` MiB in all."""
    from conformance.isolation import _rss_mb

    return round(_rss_mb(os.getpid()) or 0) + above


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


#: What a runtime that is wrong in every way hands back for an output (issue 20), by name: the
#: awkward backend picks one per case from the case's input bytes, so a suite meets them all.
AWKWARD_OUTPUTS = {
    "nan": lambda x: np.full_like(x, np.nan),
    "inf": lambda x: np.full_like(x, np.inf),
    "-inf": lambda x: np.full_like(x, -np.inf),
    "max": lambda x: np.full(x.shape, np.finfo(np.float64).max),  # and float64: dtype too
    "finite-for-special": lambda x: np.nan_to_num(np.abs(x)),
    "int64-huge": lambda x: np.full(x.shape, 2**62 + 1, dtype=np.int64),
    "uint64-max": lambda x: np.full(x.shape, 2**64 - 1, dtype=np.uint64),
    "python-ints": lambda x: np.full(x.shape, 2**70, dtype=object),
    "strings": lambda x: np.full(x.shape, "<b>na\u00efve</b> \udc80", dtype=object),
    "bool": lambda x: np.ones(x.shape, dtype=bool),
    "rank+1": lambda x: np.abs(x)[None],
    "empty": lambda x: np.zeros((0,), dtype=x.dtype),
    "huge": lambda x: np.zeros((1 << 20,), dtype=x.dtype),
    "scalar": lambda x: np.float64("nan"),
    "none": lambda x: None,
    "list": lambda x: [[float("nan")], [1, 2]],
}

#: ... and the messages it raises with: markup, control characters, lone surrogates, non-ASCII,
#: NaN in the text, a very long message.
AWKWARD_MESSAGES = [
    "</script><script>alert(1)</script> [bold red]rich markup[/] & <!-- -->",
    "control \x00\x1b[31m\x07 chars ]]> \udc80\udfff lone surrogates \u2028\u2029",
    "non-ASCII: \u00e9\u00e8 \u4e2d\u6587 \U0001F600 NaN Infinity -inf 1e999",
    "x" * 100_000,
]


def awkward() -> "AwkwardBackend":
    """Abs that returns, for the k-th case it runs, the k-th of :data:`AWKWARD_OUTPUTS` or raises
    with one of :data:`AWKWARD_MESSAGES`, in turn (a suite of more cases than both lists, run in
    one worker, meets them all); its environment is awkward too."""
    return AwkwardBackend()


class AwkwardBackend(KernelBackend):
    """See :func:`awkward`."""

    def __init__(self):
        super().__init__({"Abs": lambda i, a, o, v: {"Y": np.abs(i["X"])}}, name="awkward")
        self.k = 0

    def run(self, prepared, inputs, output_names):
        x = super().run(prepared, inputs, output_names)[0]
        kinds = list(AWKWARD_OUTPUTS)
        k, self.k = self.k, self.k + 1
        k %= len(kinds) + len(AWKWARD_MESSAGES)
        if k >= len(kinds):
            raise RuntimeError(AWKWARD_MESSAGES[k - len(kinds)])
        return [AWKWARD_OUTPUTS[kinds[k]](x)]

    def environment(self) -> dict:
        return {**super().environment(), "awkward": "1.0 <b>\udc80</b>", "nan": float("nan"), "big": 2**70}


_POISONED = False


def poisoning() -> KernelBackend:
    """Right on every case, but a float16 case leaves the process broken (a runtime that writes
    out of bounds on it, say): the next case this process runs aborts (SIGABRT)."""

    def kernel(i, a, o, v):
        global _POISONED
        if _POISONED:
            os.abort()
        _POISONED = _is_victim(i["X"])
        return {"Y": np.abs(i["X"])}

    return KernelBackend({"Abs": kernel}, name="poisoning")
