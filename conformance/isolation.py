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

import gc
import math
import multiprocessing as mp
import multiprocessing.connection
import os
import pickle
import select
import signal
import threading
import time
import traceback
from collections import deque
from collections.abc import Callable, Sequence
from multiprocessing.connection import wait
from typing import Any

from .case import Case
from .jsonsafe import json_line
from .runner import CaseResult

#: Default per-case deadline in seconds (prepare + every data set).
DEFAULT_TIMEOUT = 120.0
#: Default resident-memory limit of one worker, in MiB (0 = no limit).
DEFAULT_MEMORY_LIMIT_MB = 4096
#: How often the parent samples the workers' resident memory, and looks at which case a worker is
#: on while no result comes (a case's deadline counts from when it is first seen), in seconds.
_MEMORY_POLL_S = 0.05
#: ``select.poll`` where the platform has it (:meth:`_Worker.messages`), else None
_POLL = getattr(select, "poll", None)
#: the connection class whose messages :meth:`_Worker.messages` reads from its descriptor
_FD_CONNECTION = getattr(mp.connection, "Connection", ())


_PAGE_SIZE = os.sysconf("SC_PAGE_SIZE") if hasattr(os, "sysconf") else 4096


def _rss_mb(pid: int) -> float | None:
    """Resident set size of ``pid`` in MiB (Linux /proc), or None where it cannot be read."""
    try:
        with open(f"/proc/{pid}/statm", "rb") as f:
            return int(f.read().split()[1]) * _PAGE_SIZE / 2**20
    except (OSError, ValueError, IndexError):
        return None


def _worker_main(conn, backend, spec, options, cases, analyse=False, current=None, parent_end=None,
                 lines=False) -> None:
    """Worker loop: receive a batch, send back a list of one ``("result", index, record, analysis)`` a
    case, in one message once the batch is judged.

    ``parent_end``: the parent's end of this worker's pipe, which a forked worker inherits; it is
    closed first, so that the worker reads end-of-file and exits when the parent dies (a run
    killed with SIGKILL left its forked workers waiting for a batch forever).

    A batch is a list of indices into ``cases`` (fork: the cases are inherited, nothing
    is pickled) or of ``(index, Case)`` pairs (spawn/forkserver).  ``None`` stops.  A case
    given by reference (:class:`conformance.bundle.CaseRef`) is read and checked here;
    when it cannot be (an edited or damaged bundle), ``("bundle", index, message, None)`` is
    sent instead of a result.  ``record`` is the result as :meth:`CaseResult.to_json` gives it;
    ``analysis`` is the coverage analysis of the case's model
    (:func:`conformance.analysis.analyse_case`) when ``analyse`` and the parent cannot have it
    (a case given whole, or a manifest without analyses), else ``None``.  Messages are pickled
    here with the highest protocol and sent as bytes (``Connection.recv`` reads them): half the
    cost of ``Connection.send``'s pickler, measured.  A batch's messages go as one list once the
    batch is judged (one pickle, one write and one wake-up of the parent a batch, not a case); a
    worker that dies while judging loses the unsent results of its batch, and the parent runs
    those cases again (as suspects: :func:`run_isolated`), as it does the ones attempted and not
    yet judged.  A message that cannot be pickled is sent as the case's internal error.

    A batch is read whole, then attempted on the backend case after case
    (:func:`conformance.runner.attempt_case`), then judged case after case, each phase's code
    staying warm: read between two onnxruntime sessions, a case took ~20% longer (2.2 s against
    1.8 s for 2,315 cases); judged between two, its comparisons took twice as long.
    ``current`` (shared memory) holds the index of the case being attempted or judged, so
    that the parent charges a crash or a hang to that case whichever phase it happens in.

    ``lines``: send ``("line", index, (line, outcome), analysis)`` instead of a result: ``line`` is
    the result's line of ``results.jsonl`` as bytes (:func:`record_line` of the record), made here
    so that a parent that only stores results parses and encodes nothing.
    """
    import faulthandler

    from .runner import attempt_case, judge_case

    if parent_end is not None:
        parent_end.close()
    faulthandler.disable()  # a crash is reported as the case's outcome, not as a dump on stderr
    try:
        if backend is None:
            from .backends import resolve_backend

            backend = resolve_backend(spec, options)
    except BaseException as exc:  # noqa: BLE001 - reported to the parent
        conn.send(("fatal", f"cannot create backend {spec!r}: {type(exc).__name__}: {exc}"))
        return
    conn.send(("ready", os.getpid()))
    # what the worker holds from here on (the backend, the modules, the inherited cases) lives as
    # long as it does: out of the collector's way, each collection walks only what a batch makes
    gc.freeze()

    def send(msgs, dumps=pickle.dumps, protocol=pickle.HIGHEST_PROTOCOL, send_bytes=conn.send_bytes):
        try:
            data = dumps(msgs, protocol)
        except BaseException:  # noqa: BLE001 - one message that cannot be pickled: an internal error of its case
            data = dumps([m if _picklable(m) else ("internal", m[1], traceback.format_exc(), None) for m in msgs],
                         protocol)
        send_bytes(data)

    def at(i: int) -> None:
        if current is not None:
            current.value = i

    while True:
        try:
            batch = conn.recv()
        except (EOFError, KeyboardInterrupt):
            return
        if batch is None:
            return
        loaded = [_load(pair, None) for pair in _pairs(batch, cases)]
        attempted = []
        for i, case, recorded, problem in loaded:
            if problem is not None:
                break  # reported in order, after the cases before it
            at(i)
            try:
                got = attempt_case(case, backend)
            except BaseException:  # noqa: BLE001 - ours, not the backend's (attempt_case catches those)
                got = traceback.format_exc()
            attempted.append((i, case, recorded, got))
        out = []  # the batch's messages, sent together once it is judged
        for i, case, recorded, got in attempted:
            at(i)
            if isinstance(got, str):
                out.append(("internal", i, got, None))
                continue
            try:
                res = judge_case(case, backend, got)
                analysis = _analysis(case) if analyse and not recorded else None
                if lines:
                    out.append(("line", i, (record_line(res.to_json())[1], res.outcome), analysis))
                else:
                    out.append(("result", i, res.to_json(), analysis))
            except BaseException:  # noqa: BLE001 - ours: an internal error of the case
                out.append(("internal", i, traceback.format_exc(), None))
        del attempted  # the outputs of a batch, released before the next is read
        problems = [(i, problem) for i, _case, _recorded, problem in loaded if problem is not None]
        if problems:  # the run stops there: the cases after it in the batch are not attempted
            out.append(("bundle", *problems[0], None))
        if out:
            send(out)
        del out


def _picklable(msg) -> bool:
    try:
        pickle.dumps(msg, pickle.HIGHEST_PROTOCOL)
    except BaseException:  # noqa: BLE001 - whatever pickling raises
        return False
    return True


def record_line(rec: dict) -> tuple[dict, bytes]:
    """``(value, line)``: the line of ``results.jsonl`` that holds the record ``rec``
    (:func:`conformance.jsonsafe.json_line`: compact strict JSON in :mod:`conformance.jsonsafe`'s
    encoding, UTF-8, a newline) and the value it holds (``rec`` itself unless it holds something
    awkward)."""
    return json_line(rec)


def _pairs(batch, cases) -> list:
    """The batch's ``(index, case or CaseRef)`` pairs: a batch of indices into inherited
    :class:`conformance.bundle.CaseRefs` has its manifest entries read together
    (:meth:`~conformance.bundle.CaseRefs.refs`: one ``os.pread`` and one check of the manifest's
    stamp for consecutive cases, not one each; ~10 us a case).  Checking the stamp once a batch is
    as strong as once a case: the batch's entries are all read before its first case runs, so an
    edit between two of those reads was never caught later either.  Where that read fails (an
    edited manifest), each case is taken as before, so the same error arises the same way."""
    if cases is None:
        return batch
    refs = getattr(cases, "refs", None)
    if refs is not None:
        try:
            return list(zip(batch, refs(batch)))
        except Exception:  # noqa: BLE001 - raised again below, where it always was
            pass
    return [(i, cases[i]) for i in batch]


def _load(item, cases) -> tuple[int, Case | None, bool, str | None]:
    """``(index, case, whether the parent has its coverage analysis, problem or None)`` of one batch
    item: a referenced case is read and checked here (a problem: why it could not be); the parent
    has the analysis the manifest records (``CaseRef.recorded_analysis``)."""
    i, case = (item, cases[item]) if cases is not None else item
    if isinstance(case, Case):
        return i, case, False, None
    recorded = case.recorded_analysis is not None
    try:
        return i, case.load_for_run(), recorded, None
    except Exception as exc:
        from .bundle import BundleError  # imported here, not once a case (~0.7 us)

        if not isinstance(exc, BundleError):
            raise
        return i, None, recorded, str(exc)


def _analysis(case) -> dict:
    """The coverage analysis of ``case``'s model (:func:`conformance.coverage.analyse_case`)."""
    from .analysis import analyse_case

    return analyse_case(case)


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


class CaseLoadError(RuntimeError):
    """A case given by reference could not be read or failed its content check in a worker
    (an edited or damaged bundle); the run stops, and nothing is charged to the backend."""


class _Worker:
    def __init__(self, ctx, backend, spec, options, cases, analyse=False, lines=False):
        self.conn, child = ctx.Pipe()
        self.forked = cases is not None
        self.current = ctx.RawValue("q", -1)  # the case the worker is on (see _worker_main)
        forked = ctx.get_start_method() == "fork"
        self.proc = ctx.Process(target=_worker_main,
                                args=(child, backend, spec, options, cases, analyse, self.current,
                                      self.conn if forked else None, lines), daemon=True)
        self.proc.start()
        child.close()
        self.inflight: deque[int] = deque()
        self.used = False  # some case was sent to it
        self.retire = False  # it ran a suspect (below): stopped once that result is in
        self.started = 0.0  # when the worker began the case it is on (as the parent saw it)
        self.seen = -1  # that case
        self.rss_checked = float("-inf")  # when its memory was last read (:func:`_breach`)
        self.size = MAX_BATCH  # the cases of its next batch (run_isolated: by how long its cases take)
        self.answered = None  # when its last results came (time.monotonic)
        self._buf = bytearray()  # bytes read from the pipe, not yet a whole message (:meth:`messages`)
        self._poller = None
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

    def messages(self) -> tuple[list, bool]:
        """``(messages, eof)``: every case's message the worker has written so far, unpickled, in
        order, read without waiting (its batches' lists, joined); ``eof``: its end of the pipe is
        closed (it died or stopped).

        One ``os.read`` takes whatever the pipe holds and the messages are cut from it here (the
        framing of :meth:`multiprocessing.connection.Connection.send_bytes`: a 4-byte big-endian
        length, or -1 and an 8-byte length, then the bytes), where ``Connection.poll`` + ``recv`` made
        a selector and three system calls per message: 17 us a result against 23 us, results
        unpickled, in bursts of 16 (measured on their own; the unpickling is ~8 us of it).
        A message cut off by the worker's death is dropped, as ``recv`` dropped it.  Where the
        connection has no plain file descriptor (Windows), ``poll`` + ``recv`` as before."""
        fd = self.conn.fileno() if _POLL is not None else None
        if fd is None or not isinstance(self.conn, _FD_CONNECTION):
            out = []
            try:
                while self.conn.poll():
                    out += self.conn.recv()
            except EOFError:
                return out, True
            return out, False
        if self._poller is None:
            self._poller = _POLL()
            self._poller.register(fd, select.POLLIN)
        buf, eof = self._buf, False
        while self._poller.poll(0):
            chunk = os.read(fd, 1 << 16)
            if not chunk:
                eof = True
                break
            buf += chunk
        out, pos, end = [], 0, len(buf)
        loads = pickle.loads
        while end - pos >= 4:
            size = int.from_bytes(buf[pos:pos + 4], "big", signed=True)
            start = pos + 4
            if size == -1:
                if end - pos < 12:
                    break
                size, start = int.from_bytes(buf[pos + 4:pos + 12], "big"), pos + 12
            if end - start < size:
                break
            out += loads(buf[start:start + size])  # a batch's messages (:func:`_worker_main`)
            pos = start + size
        if pos:
            del buf[:pos]
        return out, eof

    @property
    def head(self) -> int | None:
        return self.inflight[0] if self.inflight else None

    def on(self, now: float) -> int | None:
        """The case the worker is on (attempting or judging), of those in flight; its start time
        (``started``) is when this was first seen to change."""
        cur = self.current.value
        if cur != self.seen:
            self.seen, self.started = cur, now
        return cur if cur in self.inflight else self.head

    def charge(self, now: float) -> tuple[int, float]:
        """Take the case the worker is on out of ``inflight``: ``(index, seconds it ran)``; the
        rest of ``inflight`` (attempted but not judged, or not begun) is to run again elsewhere."""
        i = self.on(now)
        self.inflight.remove(i)
        return i, now - self.started

    def send(self, indices: list[int], cases: Sequence[Case]) -> None:
        self.used = True
        if not self.inflight:  # else the head case is running since its predecessor's result came
            self.started = time.monotonic()
        self.inflight.extend(indices)
        try:
            self.conn.send(indices if self.forked else [(i, cases[i]) for i in indices])
        except (BrokenPipeError, ConnectionResetError):
            # it died after its last result was read (a top-up races the crash of the case it is
            # running): the next collection sees the death, charges the head case, re-queues the rest
            pass

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


class _Sleeper:
    """Sleeps until one of the busy workers has written to its pipe or died, or a timeout passes:
    one ``select.poll`` kept for the run, its descriptors changed as the workers do, where
    :func:`multiprocessing.connection.wait` made a selector and registered each descriptor anew at
    each of the ~500 waits of a 7,317-case run (~100 us a wait, measured; ~5 us so).  Where the
    platform has no ``poll``, ``wait`` as before."""

    def __init__(self):
        self._poll = _POLL() if _POLL is not None else None
        self._fds: set[int] = set()

    def wait(self, busy: list[_Worker], timeout: float) -> None:
        if self._poll is None or not all(isinstance(w.conn, _FD_CONNECTION) for w in busy):
            wait([w.conn for w in busy] + [w.proc.sentinel for w in busy], timeout=timeout)
            return
        fds = {w.conn.fileno() for w in busy} | {w.proc.sentinel for w in busy}
        if fds != self._fds:
            for fd in self._fds - fds:
                self._poll.unregister(fd)
            for fd in fds - self._fds:
                self._poll.register(fd, select.POLLIN)
            self._fds = fds
        self._poll.poll(max(0, math.ceil(timeout * 1000)))


def _attempted_before(w: _Worker) -> list[int]:
    """The cases in flight on ``w`` that it attempted before the one it is on (its batch is
    attempted in order, then judged: see :func:`_worker_main`), judged or not: the cases whose
    effects the one it is on ran after."""
    cur = w.current.value
    inflight = list(w.inflight)
    return inflight[:inflight.index(cur)] if cur in inflight else []


def _synthetic(case: Case, outcome: str, message: str, duration: float) -> CaseResult:
    """The result of a case whose worker gave none (it died, hung or broke), made here, with the
    case's :func:`~conformance.runner.case_detail` (a referenced case is read for it: rare)."""
    from .runner import case_detail

    try:
        detail = case_detail(case if isinstance(case, Case) else case.load(verify=False))
    except Exception:  # noqa: BLE001 - a case that cannot be read has no detail; the outcome stands
        detail = None
    return CaseResult(
        id=case.id, op=case.op, domain=case.domain, since_version=case.since_version, opset=case.opset,
        tags=dict(case.tags), outcome=outcome, message=message, phase="run", expect_error=case.expect_error,
        duration_s=duration, detail=detail,
    )


def _breach(w: _Worker, started: float, now: float, timeout: float, memory_limit_mb: float) -> tuple[str, str] | None:
    """``(outcome, message)`` when the worker's current case is over its memory limit or deadline, else None.
    The memory is read every :data:`_MEMORY_POLL_S` at most (the parent collects results far more
    often: reading it each time cost ~10 us a case of a run of small ones)."""
    rss = None
    if memory_limit_mb and now - w.rss_checked >= _MEMORY_POLL_S:
        w.rss_checked = now
        rss = _rss_mb(w.proc.pid)
    if rss is not None and rss > memory_limit_mb:
        return "crash", (f"backend process killed by SIGKILL: resident memory {rss:.0f} MiB exceeded the "
                         f"limit of {memory_limit_mb:g} MiB")
    if now - started > timeout:
        return "timeout", f"no result within {timeout:g} s; backend process killed"
    return None


def _context(start_method: str | None, backend: Any, spec: str | None):
    """The multiprocessing context, and the backend object the workers inherit (None: rebuilt from spec).

    Raises:
        ValueError: a start method other than fork without a spec to rebuild the backend from.
    """
    method = start_method or ("fork" if "fork" in mp.get_all_start_methods() else "spawn")
    if method != "fork":
        if spec is None:
            raise ValueError(f"start method {method!r} rebuilds the backend in each worker: give it as a spec")
        backend = None
    return mp.get_context(method), backend


#: Cases sent to a worker in one message (they run one after another; a batch saves a round trip
#: per case, and a crash re-queues the rest of its batch): a batch starts at this size...
MAX_BATCH = 16
#: ... and grows to this many where the cases are cheap (:data:`BATCH_TARGET_S`): the cost of a
#: batch's read, judging and message is the same for 16 cases or 64, and each of a batch's three
#: passes (read, attempt, judge) runs longer in caches that stay warm.
MAX_BATCH_CHEAP = 64
#: The work a batch aims at, in seconds: a worker's batch is as many cases as its recent cases took
#: this long for (:data:`MAX_BATCH` to :data:`MAX_BATCH_CHEAP`), so that a batch of heavy cases
#: (large tensors, slow kernels) stays small and what a crash costs stays bounded in time.
BATCH_TARGET_S = 0.04


def _crash_group(cases, i: int) -> str:
    """What a crash of case ``i`` marks as crash-prone: its operator version (the id up to its
    first ``/``: ``Op-since_version``, domain-qualified where it has a domain)."""
    ids = getattr(cases, "id", None)
    if callable(ids):  # a bundle's compact references: the id without reading the manifest
        return ids(i).partition("/")[0]
    c = cases[i]  # a case or a reference: its fields (a case's id would hash its data)
    return f"{c.domain}.{c.op}-{c.since_version}" if c.domain else f"{c.op}-{c.since_version}"


def run_isolated(
    cases: Sequence[Case],
    backend: Any = None,
    *,
    spec: str | None = None,
    options: dict | None = None,
    jobs: int = 1,
    timeout: float = DEFAULT_TIMEOUT,
    memory_limit_mb: float = DEFAULT_MEMORY_LIMIT_MB,
    on_result: Callable[[CaseResult], None] | None = None,
    start_method: str | None = None,
    on_analysis: Callable[[dict], None] | None = None,
    collect: bool = True,
    on_record: Callable[[int, dict], None] | None = None,
    background: Callable[[], None] | None = None,
    on_line: Callable[[int, bytes, str], None] | None = None,
    on_collected: Callable[[], None] | None = None,
) -> list[CaseResult]:
    """Run ``cases`` in ``jobs`` worker processes; results in the order of ``cases``.

    Args:
        cases: the cases: :class:`~conformance.case.Case` objects, or references with the
            case's ``id``, ``op``, ``domain``, ``since_version``, ``opset``, ``tags`` and
            ``expect_error`` and a ``load()`` that reads the case
            (:class:`conformance.bundle.CaseRef`): those are read, checked and compared in
            the worker, so the parent never holds a case's data.
        backend: a backend object (inherited by forked workers), or ``None`` to build
            one from ``spec``/``options`` in each worker.
        spec, options: backend spec and options (see :func:`conformance.backends.resolve_backend`).
        jobs: number of workers (>= 1).
        timeout: per-case deadline in seconds.
        memory_limit_mb: a worker whose resident memory exceeds this (MiB) is killed
            with SIGKILL and its case is a ``crash`` (what the kernel's OOM killer would
            do, without risking the runner itself); 0 disables the watchdog (Linux only).
        on_result: called in the parent after each case, in completion order.
        start_method: multiprocessing start method; default ``fork`` where available
            (the backend object and the cases are inherited), else ``spawn``;
            ``forkserver`` or ``spawn`` need ``spec`` (the backend is rebuilt in each
            worker, and cases are pickled to it).
        on_analysis: called in the parent with the coverage analysis
            (:func:`conformance.analysis.analyse_case`) of the model of every case whose
            analysis the caller cannot have: a reference's manifest records it
            (``recorded_analysis``: not called for those), a whole case's is measured in the
            worker that ran it (in the parent for a case whose worker died).
        collect: return the results (``False``: return an empty list; ``on_result`` sees them),
            so that a long run's results need not stay in the parent.
        on_record: called in the parent with the index in ``cases`` and the record
            (:meth:`CaseResult.to_json`) of each result: a parent that only stores results builds
            no :class:`CaseResult` (with ``on_result`` unset and ``collect`` false).
        background: work for the parent while the workers run (what it needs afterwards:
            imports, templates), called in a thread once the first workers are started; no
            worker is started while it runs (forking beside a thread that holds an import
            lock could leave the child waiting on it), and it is over when this returns.  It
            must not raise.
        on_line: called in the parent with the index in ``cases``, the result's line of
            ``results.jsonl`` (bytes: :func:`record_line`) and its outcome.  Where it is the only
            taker of results (``on_result`` and ``on_record`` unset, ``collect`` false), the
            workers make the lines and the parent parses none.
        on_collected: called in the parent after each round in which results came (the parent
            collects them as each worker's batch is judged), before any worker is started: a caller that
            buffers what it writes of them flushes it here, once a round rather than per result.

    Raises:
        WorkerError: a worker cannot create the backend.
        CaseLoadError: a referenced case cannot be read or fails its content check (the
            run stops; the results given to ``on_result`` so far stand).
        ValueError: ``jobs`` < 1, or neither ``backend`` nor ``spec``.
    """
    if jobs < 1:
        raise ValueError("jobs must be >= 1")
    if backend is None and spec is None:
        raise ValueError("give a backend object or a spec")
    ctx, backend = _context(start_method, backend, spec)
    inherited = cases if ctx.get_start_method() == "fork" else None
    results: list[CaseResult | None] = [None] * len(cases) if collect else []
    pending = deque(range(len(cases)))
    workers: list[_Worker] = []
    # Suspects: cases a worker that died had attempted but not yet judged (its batch ran in three
    # passes).  One of them may have left the process broken (a runtime that writes out of bounds
    # on an invalid model, say) so that the case after it crashed; run again in front of the rest,
    # it would break each new worker in turn and every following case would be charged a crash.
    # So each suspect runs alone, in a fresh worker that is stopped after it.
    suspects: set[int] = set()
    # Crash-prone operator versions (:func:`_crash_group`): once one of its cases has crashed or hung a
    # worker, each case of the group goes alone in its batch, so that a crash of one loses no other
    # attempt (the cases a batch had attempted before a crash run again as suspects, each in a worker
    # of its own: ~15 ms each).
    crashed: set[str] = set()
    lines = on_line is not None and on_result is None and on_record is None and not collect
    plain_lines = lines and on_analysis is None  # a line is all there is to a worker's result

    n_finished, n_collected = [0], 0  # results finished, and as of the last on_collected

    def finish(i: int, res: CaseResult | dict, analysis: dict | None = None) -> None:
        n_finished[0] += 1
        if on_line is not None:
            if isinstance(res, tuple):  # a line from a worker (``lines``)
                on_line(i, *res)
            else:
                rec = res if isinstance(res, dict) else res.to_json()
                on_line(i, record_line(rec)[1], rec["outcome"])
        if isinstance(res, tuple):
            pass
        elif isinstance(res, dict):  # a record from a worker
            if on_record is not None:
                on_record(i, res)
            if collect or on_result:
                res = CaseResult.from_json(res)
        elif on_record is not None:
            on_record(i, res.to_json())
        if collect:
            results[i] = res
        if on_result:
            on_result(res)
        if on_analysis is not None and getattr(cases[i], "recorded_analysis", None) is None:
            on_analysis(analysis if analysis is not None else _parent_analysis(cases[i]))

    helper: threading.Thread | None = None
    sleeper = _Sleeper()

    def new_worker() -> _Worker:
        if helper is not None:
            helper.join()
        return _Worker(ctx, backend, spec, options, inherited, on_analysis is not None, lines)

    try:
        for _ in range(min(jobs, len(cases))):
            workers.append(new_worker())
        if background is not None:
            helper = threading.Thread(target=background, name="onnx-conformance-background", daemon=True)
            helper.start()
        while pending or any(w.inflight for w in workers):
            for k, w in enumerate(workers):
                if not pending or w.retire:
                    continue
                if pending[0] in suspects:
                    if w.inflight:
                        continue  # it waits for a worker that is idle
                    if w.used:  # a suspect runs in a fresh worker only
                        w.stop()
                        workers[k] = w = new_worker()
                    suspects.discard(pending[0])
                    w.send([pending.popleft()], cases)
                    w.retire = True
                    continue
                # smaller batches at the end even the workers' load out; one worker needs no evening
                size = w.size if len(workers) == 1 else max(1, min(w.size, len(pending) // (2 * len(workers))))
                # a batch queued behind the one it is on: its results come when a batch is judged,
                # so a worker topped up only then would wait for the parent to wake and answer (a
                # worker that blocked ~900 times a 7,317-case run, a wake-up on the other core each,
                # cost ~0.4 s more CPU than one that never waited, measured)
                while len(w.inflight) <= size and pending and pending[0] not in suspects:
                    batch = []
                    while pending and len(batch) < size and pending[0] not in suspects:
                        if crashed and _crash_group(cases, pending[0]) in crashed:
                            if not batch:  # alone in its batch
                                batch.append(pending.popleft())
                            break
                        batch.append(pending.popleft())
                    w.send(batch, cases)
            busy = [w for w in workers if w.inflight]
            now = time.monotonic()
            # results come a batch at a time: woken at least this often, the parent sees each case
            # of a batch begin within _MEMORY_POLL_S, so a hang is charged after ~timeout, not up to
            # twice that (the deadline of the case it last saw passing while a later one runs)
            wake = min(max(0.0, min(w.started + timeout for w in busy) - now), _MEMORY_POLL_S)
            # Sleep until a worker sends a judged batch's results or dies (a batch's results come as
            # one message: one wake-up a batch; waking per result cost 0.1 ms a case, as much as a
            # small case's onnxruntime session, and polling every 5 ms woke the parent for nothing)
            sleeper.wait(busy, wake)
            dead: list[_Worker] = []
            for w in busy:
                try:
                    got, eof = w.messages()
                    if got:  # the next batch's size: as many cases as took BATCH_TARGET_S of late
                        now = time.monotonic()
                        if w.answered is not None:
                            per_case = (now - w.answered) / len(got)
                            w.size = (MAX_BATCH_CHEAP if per_case <= 0 else
                                      max(MAX_BATCH, min(MAX_BATCH_CHEAP, int(BATCH_TARGET_S / per_case))))
                        w.answered = now
                    inflight = w.inflight
                    for kind, i, payload, analysis in got:
                        if not inflight or i != inflight[0]:
                            raise RuntimeError(f"worker answered case {i}, expected {w.head}")
                        inflight.popleft()
                        if kind == "line" and plain_lines:  # the common case, without finish()'s tests
                            n_finished[0] += 1
                            on_line(i, *payload)
                            continue
                        if kind == "bundle":
                            raise CaseLoadError(payload)
                        finish(i, payload if kind == "result" or kind == "line" else
                               _synthetic(cases[i], "error", f"runner internal error: {payload}", 0.0), analysis)
                    if w.inflight and (eof or not w.proc.is_alive()):
                        raise EOFError
                except (EOFError, OSError):
                    w.proc.join(5)
                    attempted = _attempted_before(w)
                    i, ran = w.charge(time.monotonic())
                    crashed.add(_crash_group(cases, i))
                    finish(i, _synthetic(cases[i], "crash", f"backend process {_signal_name(w.proc.exitcode)}", ran))
                    suspects.update(j for j in attempted if j != i)
                    dead.append(w)
            now = time.monotonic()
            for w in workers:
                if w in dead or not w.inflight:
                    continue
                w.on(now)
                breach = _breach(w, w.started, now, timeout, memory_limit_mb)
                if breach is None:
                    continue
                outcome, message = breach
                w.kill()
                i, ran = w.charge(now)
                crashed.add(_crash_group(cases, i))
                finish(i, _synthetic(cases[i], outcome, message, ran))
                dead.append(w)
            if on_collected is not None and n_finished[0] != n_collected:
                n_collected = n_finished[0]
                on_collected()
            for w in workers:
                if w.retire and not w.inflight and w not in dead:  # its suspect's result is in
                    w.stop()
                    dead.append(w)
            for w in dead:
                w.kill()
                pending.extendleft(reversed(w.inflight))  # the rest of its batch runs again elsewhere
                workers.remove(w)
                if pending or any(x.inflight for x in workers):
                    workers.append(new_worker())
    finally:
        for w in workers:
            w.stop()
        if helper is not None:
            helper.join()
    return [r for r in results if r is not None]


def _parent_analysis(case) -> dict:
    """Coverage analysis of a case no worker analysed (its worker died, or it ran before a
    resume): for a reference, the manifest's record (:meth:`conformance.bundle.CaseRef.analysis`;
    the case is read here only for a manifest without one).

    Raises:
        CaseLoadError: the referenced case cannot be read.
    """
    if isinstance(case, Case):
        return _analysis(case)
    from .bundle import BundleError

    try:
        return case.analysis()
    except BundleError as exc:
        raise CaseLoadError(str(exc)) from None


class IsolatedExecutor:
    """Runs cases one at a time in a persistent worker subprocess, as ``onnx-conformance run`` does.

    Used by the pytest plugin.  The worker is the one :func:`run_isolated` uses (forked, so a backend object is
    inherited; each case is sent over a pipe); it lives as long as the pytest process
    (one per xdist worker) and is replaced after a crash or a timeout.  Outcomes and
    messages are those of :func:`conformance.isolation.run_isolated`: a worker that dies
    makes the case ``crash`` (with the signal), one past ``timeout`` seconds or over
    ``memory_limit_mb`` is killed (``timeout`` / ``crash``).  Forking one worker per
    case instead costs ~25 ms per case in a pytest process (measured: 15 s instead of
    ~4 s for 544 LayerNormalization cases).

    Raises (from :meth:`run`):
        conformance.isolation.WorkerError: the worker cannot create the backend.
    """

    def __init__(self, backend, *, spec=None, options=None, timeout: float = 120.0,
                 memory_limit_mb: float = 4096, start_method: str | None = None):
        self.ctx, backend = _context(start_method, backend, spec)
        self.backend, self.spec, self.options = backend, spec, options
        self.timeout, self.memory_limit_mb = timeout, memory_limit_mb
        self.worker = None

    def _start(self):
        import warnings

        with warnings.catch_warnings():  # Python >= 3.12 warns about fork() in a threaded process (xdist)
            warnings.simplefilter("ignore", DeprecationWarning)
            return _Worker(self.ctx, self.backend, self.spec, self.options, None)

    def _discard(self) -> None:
        if self.worker is not None:
            self.worker.kill()
            self.worker = None

    def run(self, case):
        """Run ``case``; a :class:`conformance.runner.CaseResult`, never an exception for backend failures."""
        from multiprocessing.connection import wait

        if self.worker is None or not self.worker.proc.is_alive():
            self._discard()
            self.worker = self._start()
        w = self.worker
        start = time.monotonic()
        try:
            w.send([0], [case])
        except (BrokenPipeError, OSError):
            pass  # it died right now: reported below as a crash
        while True:
            now = time.monotonic()
            wake = max(0.0, start + self.timeout - now)
            if self.memory_limit_mb:
                wake = min(wake, _MEMORY_POLL_S)
            ready = wait([w.conn, w.proc.sentinel], timeout=wake)
            if ready:
                try:
                    if w.conn.poll():
                        (kind, _i, payload, _analysis), = w.conn.recv()
                        w.inflight.clear()
                        if kind == "result":
                            return CaseResult.from_json(payload)
                        return _synthetic(case, "error", f"runner internal error: {payload}", 0.0)
                    if not w.proc.is_alive():
                        raise EOFError
                except (EOFError, OSError):
                    w.proc.join(5)
                    message = f"backend process {_signal_name(w.proc.exitcode)}"
                    self._discard()
                    return _synthetic(case, "crash", message, time.monotonic() - start)
            now = time.monotonic()
            breach = _breach(w, start, now, self.timeout, self.memory_limit_mb)
            if breach is not None:
                self._discard()
                return _synthetic(case, *breach, now - start)

    def close(self) -> None:
        """Stop the worker."""
        if self.worker is not None:
            self.worker.stop()
            self.worker = None
