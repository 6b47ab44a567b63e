"""Distribute cases over a Dask cluster (``--executor dask --scheduler ADDRESS``).

Cases are sent in chunks; each chunk is one Dask task that runs its cases through
:func:`conformance.isolation.run_isolated` with one worker subprocess (started by
``forkserver``, so the Dask worker's threads are never forked).  So a crash or a
hang costs one case, exactly as with the local executor.  Should a Dask worker
itself die, Dask reschedules its task; if the task keeps killing workers
(``KilledWorker``), its cases are recorded as ``crash``.

The backend must be a spec (name or ``package.module:Attr``) that every Dask worker
can import; the package must be installed on the workers, and the workers must be
allowed to start subprocesses: Dask config ``distributed.worker.daemon: False``
(environment ``DASK_DISTRIBUTED__WORKER__DAEMON=False`` when starting ``dask worker``).

Before any case is sent, :func:`check_cluster` asks every worker whether it can do that (not
daemonic, the same onnx-conformance, the backend builds): a cluster that cannot isolate cases
is a set-up problem of the run, refused with the fix named (:class:`ClusterError`), never
charged to the backend as outcomes.

Generation (``generate --executor dask``, :func:`generate_dask`): each (operator, seed) is one
task that generates the cases on a worker and returns their files as one in-memory zip; the
client writes them as they arrive (a bounded number in flight) and the manifest is assembled in
task order, so the bundle is byte-identical to a local ``generate``.  Before any task,
:func:`check_generation_cluster` refuses workers whose onnx-conformance, onnx, numpy or
ml_dtypes differ from the client's (they would generate other bytes).
"""

from __future__ import annotations

import contextlib
import math
from collections.abc import Callable, Sequence

from .case import Case
from .runner import CaseResult


class ClusterError(RuntimeError):
    """The cluster cannot run cases as the local executor does (no dask.distributed, no
    scheduler, no workers, a daemonic worker, another onnx-conformance, a backend that does not
    build on a worker).  Raised before any case is sent; the message names the fix."""


DAEMON_FIX = ("start the workers with the Dask config distributed.worker.daemon=False (environment: "
              "DASK_DISTRIBUTED__WORKER__DAEMON=False dask worker ADDRESS)")


def _worker_problem(backend_spec: str, options: dict, version: str) -> str | None:
    """Run on each Dask worker by :func:`check_cluster`: why it cannot run cases, or ``None``."""
    import multiprocessing as mp

    if mp.current_process().daemon:
        return "the worker runs as a daemonic process, which may not start the subprocesses that isolate each case"
    from . import __version__

    if __version__ != version:
        return f"the worker has onnx-conformance {__version__}, this run {version}"
    from .backends import resolve_backend

    try:
        resolve_backend(backend_spec, options)
    except Exception as exc:  # noqa: BLE001 - any failure to build is the answer
        return f"backend {backend_spec!r} does not build on the worker: {type(exc).__name__}: {exc}"
    return None


def check_cluster(client, spec) -> int:
    """Ask every worker of ``client`` whether it can run ``spec``'s cases; return the number of workers.

    Raises:
        ClusterError: no worker, or a worker that cannot (each named, with the fix).
    """
    from . import __version__

    workers = client.scheduler_info().get("workers") or {}
    if not workers:
        raise ClusterError("the Dask cluster has no workers: start some with 'dask worker ADDRESS' "
                           "(DASK_DISTRIBUTED__WORKER__DAEMON=False)")
    try:
        answers = client.run(_worker_problem, spec.backend_spec, dict(spec.backend_options), __version__)
    except Exception as exc:  # noqa: BLE001 - e.g. the worker cannot import this module at all
        raise ClusterError(f"the Dask workers cannot run onnx-conformance ({type(exc).__name__}: {exc}): install "
                           f"onnx-conformance {__version__} and the backend's package on every worker") from None
    bad = {w: why for w, why in sorted(answers.items()) if why}
    if bad:
        lines = "; ".join(f"{w}: {why}" for w, why in bad.items())
        fix = DAEMON_FIX if any("daemonic" in why for why in bad.values()) else \
            "install the same onnx-conformance and the backend's package on every worker"
        raise ClusterError(f"{len(bad)} of {len(answers)} Dask worker(s) cannot isolate cases ({lines}); {fix}")
    return len(answers)


def _run_chunk(cases: Sequence[Case], spec: str, options: dict, timeout: float, memory_limit_mb: float) -> list[dict]:
    import multiprocessing as mp

    from .isolation import run_isolated

    if mp.current_process().daemon:  # check_cluster refuses such a cluster; a worker that joined later
        raise RuntimeError(f"Dask workers run as daemonic processes: {DAEMON_FIX}")

    results = run_isolated(cases, spec=spec, options=options, jobs=1, timeout=timeout,
                           memory_limit_mb=memory_limit_mb, start_method="forkserver")
    return [r.to_json() for r in results]


def run_dask(cases: Sequence[Case], spec, *, on_result: Callable[[CaseResult], None] | None = None,
             client=None, chunk_size: int | None = None) -> list[CaseResult]:
    """Run ``cases`` on the Dask cluster at ``spec.scheduler`` (or the given ``client``).

    Args:
        cases: the cases.
        spec: a :class:`conformance.execute.RunSpec` (backend_spec/options, timeout,
            memory_limit_mb, scheduler).
        on_result: called per case as chunks complete.
        client: an existing ``distributed.Client`` (tests pass one for a LocalCluster).
        chunk_size: cases per task (default: about 4 tasks per Dask worker thread, at most 200).

    Raises:
        ClusterError: before any case is sent: dask.distributed is not installed, no scheduler
            address or none reachable, or a cluster that cannot isolate cases (:func:`check_cluster`).
    """
    try:
        from distributed import Client, as_completed
        from distributed.client import FutureCancelledError
        from distributed.scheduler import KilledWorker
    except ImportError as exc:
        raise ClusterError("the dask executor needs dask.distributed: pip install 'onnx-conformance[dask]'") from exc
    own = client is None
    if own:
        if not spec.scheduler:
            raise ClusterError("--executor dask needs --scheduler ADDRESS")
        try:
            client = Client(spec.scheduler, timeout=30)
        except (OSError, TimeoutError) as exc:
            raise ClusterError(f"cannot reach the Dask scheduler at {spec.scheduler}: {exc}") from None
    try:
        check_cluster(client, spec)
        n_threads = max(1, sum(client.nthreads().values()))
        size = chunk_size or max(1, min(200, math.ceil(len(cases) / (4 * n_threads))))
        chunks = [list(cases[i:i + size]) for i in range(0, len(cases), size)]
        futures = {}
        for chunk in chunks:
            f = client.submit(_run_chunk, chunk, spec.backend_spec, spec.backend_options, spec.timeout,
                              spec.memory_limit_mb, pure=False)
            futures[f] = chunk
        results: list[CaseResult] = []
        for fut in as_completed(list(futures)):
            chunk = futures[fut]
            try:
                recs = [CaseResult.from_json(d) for d in fut.result()]
            except (KilledWorker, FutureCancelledError) as exc:
                recs = [_crash(c, f"Dask worker died running this case's task ({type(exc).__name__})") for c in chunk]
            except Exception as exc:  # noqa: BLE001 - a task failed inside the runner itself
                recs = [_crash(c, f"Dask task failed: {type(exc).__name__}: {exc}", outcome="error") for c in chunk]
            for r in recs:
                results.append(r)
                if on_result:
                    on_result(r)
        return results
    finally:
        if own:
            client.close()


def _crash(case: Case, message: str, outcome: str = "crash") -> CaseResult:
    from .runner import case_detail

    return CaseResult(id=case.id, op=case.op, domain=case.domain, since_version=case.since_version, opset=case.opset,
                      tags=dict(case.tags), outcome=outcome, message=message, phase="run",
                      expect_error=case.expect_error, detail=case_detail(case))


# ------------------------------------------------------------------------------- generation

def _worker_versions() -> dict[str, str]:
    """Run on each Dask worker by :func:`check_generation_cluster`: the versions that determine the
    generated bytes (:func:`conformance.suite.library_versions`)."""
    from .suite import library_versions

    return library_versions()


def check_generation_cluster(client, versions: dict[str, str] | None = None) -> int:
    """Ask every worker of ``client`` for the versions that determine the generated bytes (this
    onnx-conformance, onnx, numpy, ml_dtypes) and compare them with ``versions`` (default: this
    process's, :func:`conformance.suite.library_versions`); return the number of workers.

    Raises:
        ClusterError: no worker, a worker that cannot import onnx-conformance, or one whose
            versions differ (each named, with the versions to install).
    """
    from .suite import library_versions

    want = dict(versions or library_versions())
    need = ", ".join(f"{k} {v}" for k, v in want.items())
    workers = client.scheduler_info().get("workers") or {}
    if not workers:
        raise ClusterError("the Dask cluster has no workers: start some with 'dask worker ADDRESS'")
    try:
        answers = client.run(_worker_versions)
    except Exception as exc:  # noqa: BLE001 - e.g. the worker cannot import this module at all
        raise ClusterError(f"the Dask workers cannot run onnx-conformance ({type(exc).__name__}: {exc}): install "
                           f"{need} on every worker") from None
    bad = {}
    for w, got in sorted(answers.items()):
        diff = [f"{k} {got.get(k)} (here {v})" for k, v in want.items() if got.get(k) != v]
        if diff:
            bad[w] = ", ".join(diff)
    if bad:
        lines = "; ".join(f"{w} has {why}" for w, why in bad.items())
        raise ClusterError(f"{len(bad)} of {len(answers)} Dask worker(s) would generate other bytes ({lines}); "
                           f"install {need} on every worker")
    return len(answers)


def _generate_task(index: int, op: str, seed: int, depth: str) -> tuple:
    """One (operator, seed) task of :func:`generate_dask`, run on a Dask worker: the cases
    generated and serialised as :func:`conformance.bundle_write.write_generated_bundle` writes them.

    Returns:
        ``(index, op, keys, generators, families, declared, payload)``: ``keys`` [(id, content hash,
        is error case, directory)], the middle three :func:`conformance.bundle_write.op_facts`, and ``payload`` one in-memory zip (deflated) holding each case's
        files under its directory and ``entries.jsonl``, the task's scratch manifest lines.
    """
    import io
    import zipfile

    from . import registry
    from .bundle import _entry_line_with_digest
    from .bundle_write import _case_entry, _case_files, _scratch_line, op_facts

    keys, lines = [], []
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED, compresslevel=1) as zf:
        for case in registry.generate([op], seed, depth):
            kind = "errors" if case.expect_error is not None else ("checks" if case.check else "cases")
            rel = f"{kind}/{case.dirname}"
            files, h = _case_files(case)
            for name, data in files:
                zf.writestr(f"{rel}/{name}", data)
            lines.append(_scratch_line(case.id, _entry_line_with_digest(_case_entry(case, rel), h)))
            keys.append((case.id, case.content_hash, case.expect_error is not None, rel))
        zf.writestr("entries.jsonl", "".join(lines))
    return (index, op, keys, *op_facts(op), buf.getvalue())


def _write_task_result(root, index: int, keys, payload: bytes) -> None:
    """Write a :func:`_generate_task` result under the bundle being assembled at ``root``: its
    scratch lines to ``.entries/<index>.jsonl`` and the files of each case whose directory does not
    exist yet (one that does is the same case from another seed's task: same id, same bytes)."""
    import io
    import zipfile
    from pathlib import Path

    from .bundle_write import _ENTRIES_DIR, _write_files

    root = Path(root)
    (root / _ENTRIES_DIR).mkdir(exist_ok=True)
    with zipfile.ZipFile(io.BytesIO(payload)) as zf:
        (root / _ENTRIES_DIR / f"{index:06d}.jsonl").write_bytes(zf.read("entries.jsonl"))
        by_dir: dict[str, list] = {}
        for name in zf.namelist():
            if name != "entries.jsonl":
                kind, d, rest = name.split("/", 2)
                by_dir.setdefault(f"{kind}/{d}", []).append((rest, name))
        for _cid, _h, _err, rel in keys:
            if not (root / rel).exists():
                _write_files([(rest, zf.read(name)) for rest, name in by_dir.get(rel, [])], root / rel)


def generate_dask(tasks, root, depth: str, *, scheduler: str | None = None, client=None,
                  in_flight: int | None = None, task=None):
    """Generate ``tasks`` ((index, op, seed), :func:`conformance.suite.generation_tasks`) on a Dask
    cluster and write each task's cases under ``root`` as its result arrives: a generator of
    ``(index, op, keys, generators, families, declared)`` (keys [(id, content hash, is error case)]) for
    :func:`conformance.bundle_write.write_generated_bundle`, which assembles the manifest in task order,
    so the bundle's bytes do not depend on the order tasks finish in.

    At most ``in_flight`` tasks (default: two per worker thread) are submitted at a time, so the
    client holds a bounded number of results.  A worker that dies is Dask's to handle: its tasks are
    run again elsewhere (``distributed.scheduler.allowed-failures``); a task that keeps killing
    workers ends the generation (``KilledWorker``, raised as :class:`ClusterError`), nothing written.

    Args:
        scheduler: the scheduler's address (a client is made and closed here), or
        client: an existing ``distributed.Client``.
        task: the function run per task (default :func:`_generate_task`; tests pass a slow one).

    Raises:
        ClusterError: before any task is sent: no dask.distributed, no scheduler reachable, or a
            cluster whose workers would generate other bytes (:func:`check_generation_cluster`);
            later, a task that kept killing workers.
    """
    try:
        from distributed import Client, as_completed
        from distributed.scheduler import KilledWorker
    except ImportError as exc:
        raise ClusterError("generating on a Dask cluster needs dask.distributed: "
                           "pip install 'onnx-conformance[dask]'") from exc
    own = client is None
    if own:
        if not scheduler:
            raise ClusterError("--executor dask needs --scheduler ADDRESS")
        try:
            client = Client(scheduler, timeout=30)
        except (OSError, TimeoutError) as exc:
            raise ClusterError(f"cannot reach the Dask scheduler at {scheduler}: {exc}") from None
    fn = task or _generate_task
    pending = list(tasks)
    futures = None
    try:
        check_generation_cluster(client)
        limit = in_flight or max(2, 2 * sum(client.nthreads().values()))
        nxt = iter(pending)

        def submit():
            t = next(nxt, None)
            if t is None:
                return None
            return client.submit(fn, t[0], t[1], t[2], depth, pure=False)

        first = [f for f in (submit() for _ in range(limit)) if f is not None]
        futures = as_completed(first)
        for fut in futures:
            try:
                index, op, keys, gens, fams, dec, payload = fut.result()
            except KilledWorker as exc:
                raise ClusterError(f"a generation task kept killing Dask workers ({exc}); look at the workers' "
                                   "memory limit and logs") from None
            fut.release()
            _write_task_result(root, index, keys, payload)
            del payload
            more = submit()
            if more is not None:
                futures.add(more)
            yield index, op, [(cid, h, err) for cid, h, err, _rel in keys], gens, fams, dec
    finally:
        if futures is not None:
            with contextlib.suppress(Exception):
                client.cancel(list(futures.futures))
        if own:
            client.close()
