"""Run cases in worker subprocesses, so that no backend can take the runner down.

Each worker is a child process that owns one backend instance and runs one case at
a time, sent over a pipe; the parent keeps, per worker, the case in flight and its
start time.  When a worker dies (segfault, abort, out-of-memory kill) the case it
was running gets outcome ``crash`` with the signal, and the worker is replaced; when
a case runs past its deadline the worker is killed, the case gets ``timeout``, and
the worker is replaced.  Every other case keeps its normal outcome.

Workers are started with the ``fork`` method where the platform has it, so a
backend *object* (for example one built in a ``conftest.py``) is inherited without
pickling; elsewhere with ``spawn``, where the backend must be given as a spec.
"""

from __future__ import annotations

import multiprocessing as mp
import os
import signal
import time
import traceback
from collections import deque
from collections.abc import Callable, Sequence
from multiprocessing.connection import wait
from typing import Any

from .case import Case
from .runner import CaseResult, run_case

#: Default per-case deadline in seconds (prepare + every data set).
DEFAULT_TIMEOUT = 120.0


def _worker_main(conn, backend, spec, options) -> None:
    """Worker loop: receive a pickled Case, send back ``CaseResult.to_json()``; ``None`` stops."""
    import faulthandler

    faulthandler.disable()  # a crash is reported as the case's outcome, not as a dump on stderr
    try:
        if backend is None:
            from .backends import resolve_backend

            backend = resolve_backend(spec, options)
    except BaseException as exc:  # noqa: BLE001 - reported to the parent
        conn.send(("fatal", f"cannot create backend {spec!r}: {type(exc).__name__}: {exc}"))
        return
    conn.send(("ready", os.getpid()))
    while True:
        try:
            msg = conn.recv()
        except (EOFError, KeyboardInterrupt):
            return
        if msg is None:
            return
        try:
            res = run_case(msg, backend)
            conn.send(("result", res.to_json()))
        except BaseException:  # noqa: BLE001 - e.g. an exception that cannot be pickled
            conn.send(("internal", traceback.format_exc()))


def _signal_name(exitcode: int | None) -> str:
    if exitcode is None:
        return "unknown exit"
    if exitcode < 0:
        try:
            return f"killed by {signal.Signals(-exitcode).name}"
        except ValueError:
            return f"killed by signal {-exitcode}"
    return f"exited with status {exitcode}"


class WorkerError(RuntimeError):
    """A worker could not create the backend (raised before any case runs)."""


class _Worker:
    def __init__(self, ctx, backend, spec, options):
        self.conn, child = ctx.Pipe()
        self.proc = ctx.Process(target=_worker_main, args=(child, backend, spec, options), daemon=True)
        self.proc.start()
        child.close()
        self.index: int | None = None
        self.started = 0.0
        kind, payload = self._recv_ready()
        if kind != "ready":
            self.kill()
            raise WorkerError(payload)

    def _recv_ready(self):
        try:
            return self.conn.recv()
        except EOFError:
            self.proc.join(5)
            return ("fatal", f"worker died while starting ({_signal_name(self.proc.exitcode)})")

    def send(self, index: int, case: Case) -> None:
        self.index, self.started = index, time.monotonic()
        self.conn.send(case)

    def kill(self) -> None:
        if self.proc.is_alive():
            self.proc.kill()
        self.proc.join(5)
        self.conn.close()

    def stop(self) -> None:
        try:
            self.conn.send(None)
        except (BrokenPipeError, OSError):
            pass
        self.proc.join(2)
        if self.proc.is_alive():
            self.proc.kill()
            self.proc.join(2)
        self.conn.close()


def _synthetic(case: Case, outcome: str, message: str, duration: float) -> CaseResult:
    return CaseResult(
        id=case.id, op=case.op, domain=case.domain, since_version=case.since_version, opset=case.opset,
        tags=dict(case.tags), outcome=outcome, message=message, phase="run", expect_error=case.expect_error,
        duration_s=duration,
    )


def run_isolated(
    cases: Sequence[Case],
    backend: Any = None,
    *,
    spec: str | None = None,
    options: dict | None = None,
    jobs: int = 1,
    timeout: float = DEFAULT_TIMEOUT,
    on_result: Callable[[CaseResult], None] | None = None,
) -> list[CaseResult]:
    """Run ``cases`` in ``jobs`` worker processes; results in the order of ``cases``.

    Args:
        cases: the cases.
        backend: a backend object (inherited by forked workers), or ``None`` to build
            one from ``spec``/``options`` in each worker.
        spec, options: backend spec and options (see :func:`conformance.backends.resolve_backend`).
        jobs: number of workers (>= 1).
        timeout: per-case deadline in seconds.
        on_result: called in the parent after each case, in completion order.

    Raises:
        WorkerError: a worker cannot create the backend.
        ValueError: ``jobs`` < 1, or neither ``backend`` nor ``spec``.
    """
    if jobs < 1:
        raise ValueError("jobs must be >= 1")
    if backend is None and spec is None:
        raise ValueError("give a backend object or a spec")
    methods = mp.get_all_start_methods()
    if "fork" in methods:
        ctx = mp.get_context("fork")
    else:
        if backend is not None and spec is None:
            raise ValueError("this platform cannot fork: give the backend as a spec")
        ctx, backend = mp.get_context("spawn"), None
    results: list[CaseResult | None] = [None] * len(cases)
    pending = deque(range(len(cases)))
    workers: list[_Worker] = []

    def finish(i: int, res: CaseResult) -> None:
        results[i] = res
        if on_result:
            on_result(res)

    try:
        for _ in range(min(jobs, len(cases))):
            workers.append(_Worker(ctx, backend, spec, options))
        idle = list(workers)
        busy: dict[Any, _Worker] = {}
        while pending or busy:
            while idle and pending:
                w = idle.pop()
                i = pending.popleft()
                w.send(i, cases[i])
                busy[w.conn] = w
            now = time.monotonic()
            next_deadline = min(w.started + timeout for w in busy.values())
            ready = wait(list(busy) + [w.proc.sentinel for w in busy.values()], timeout=max(0.0, next_deadline - now))
            done: set[_Worker] = set()
            for obj in ready:
                w = busy.get(obj) or next((x for x in busy.values() if x.proc.sentinel == obj), None)
                if w is None or w in done:
                    continue
                i = w.index
                try:
                    if w.conn.poll():
                        kind, payload = w.conn.recv()
                    else:
                        raise EOFError
                except (EOFError, OSError):
                    w.proc.join(5)
                    finish(i, _synthetic(cases[i], "crash", f"backend process {_signal_name(w.proc.exitcode)}",
                                         time.monotonic() - w.started))
                    done.add(w)
                    continue
                if kind == "result":
                    finish(i, CaseResult.from_json(payload))
                else:
                    finish(i, _synthetic(cases[i], "error", f"runner internal error: {payload}",
                                         time.monotonic() - w.started))
                del busy[w.conn]
                w.index = None
                idle.append(w)
            now = time.monotonic()
            for w in list(busy.values()):
                if w not in done and w.index is not None and now - w.started > timeout:
                    w.kill()
                    finish(w.index, _synthetic(cases[w.index], "timeout", f"no result within {timeout:g} s; backend process killed",
                                               now - w.started))
                    done.add(w)
            for w in done:
                busy.pop(w.conn, None)
                workers.remove(w)
                w.kill()
                if pending:
                    nw = _Worker(ctx, backend, spec, options)
                    workers.append(nw)
                    idle.append(nw)
    finally:
        for w in workers:
            w.stop()
    return [r for r in results if r is not None]
