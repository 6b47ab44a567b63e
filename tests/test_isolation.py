"""The isolated runner survives backends that crash, hang or exit, and loses nothing."""

import numpy as np
import pytest

import faulty
from conformance.backends.kernel import KernelBackend
from conformance.isolation import WorkerError, run_isolated
from conformance.runner import run_cases


def _outcomes(results):
    return {(r.tags.get("error") and "error-case") or r.tags["dtype"]: r for r in results}


@pytest.mark.parametrize("make, outcome, text", [
    (faulty.aborting, "crash", "SIGABRT"),
    (faulty.segfaulting, "crash", "SIGSEGV"),
    (faulty.exiting, "crash", "status 3"),
    (faulty.hanging, "timeout", "no result within"),
    (faulty.leaking, "crash", "exceeded the limit of {limit} MiB"),
    (faulty.bad_output, "crash", "SIGABRT"),  # when judged, after the rest of its batch ran
    (faulty.unlistable, "error", "runner internal error"),  # the worker lives on; no crash is charged
    (faulty.wrong_dtype, "fail", "dtype float64 != expected float16"),
    (faulty.dropping, "fail", "returned 0 output(s), expected 1"),
])
def test_faulty_backend_costs_only_its_case(toy_suite, make, outcome, text):
    limit = faulty.leak_limit_mb()
    text = text.format(limit=limit)
    cases = toy_suite.cases * 2  # the victim comes twice: the replaced worker must carry on
    # the leak is given time to reach the limit (touching 400 MiB on a loaded machine can take over 1 s)
    results = run_isolated(cases, make(), jobs=2, timeout=60.0 if make is faulty.leaking else 5.0,
                           memory_limit_mb=limit)
    assert [r.id for r in results] == [c.id for c in cases]
    for r in results:
        if r.tags["dtype"] == "float16" and not r.tags.get("error"):
            assert r.outcome == outcome and text in r.message, r.message
        else:
            assert r.outcome == "pass", (r.id, r.outcome, r.message)


@pytest.mark.parametrize("jobs", [1, 2])
def test_a_case_that_breaks_its_process_costs_one_crash(toy_suite, jobs):
    """A case that leaves its worker broken makes the next case in that worker crash (charged to
    that case: nothing tells them apart), but no more: the broken case ran in a batch, attempted
    before the crash and not judged, and runs again alone in a fresh worker, not in front of
    every following case.

    One poisoning case among twenty: with two workers, the case a poisoned worker runs next depends
    on scheduling, and a second poisoning case could be it (charged the crash, rightly: session 16
    saw that 2 runs in 60); with one, the crash is the next case's, whichever worker it ran in."""
    f16 = lambda c: c.tags["dtype"] == "float16" and not c.tags.get("error")  # noqa: E731
    cases = [c for k in range(4) for c in toy_suite.cases if k == 2 or not f16(c)]
    assert sum(map(f16, cases)) == 1
    results = run_isolated(cases, faulty.poisoning(), jobs=jobs, timeout=30)
    assert [r.id for r in results] == [c.id for c in cases]
    crashes = [r for r in results if r.outcome == "crash"]
    assert len(crashes) == 1 and not f16(crashes[0]), [(r.id, r.outcome) for r in results]
    assert all(r.outcome == "pass" for r in results if r.outcome != "crash"), [(r.id, r.message) for r in results]


def test_isolated_equals_in_process(toy_suite):
    backend = KernelBackend({"Abs": lambda i, a, o, v: {"Y": np.abs(i["X"]) * np.float32(1.001).astype(i["X"].dtype)}})
    iso = run_isolated(toy_suite.cases, backend, jobs=2)
    local = run_cases(toy_suite.cases, backend)
    strip = lambda r: {k: v for k, v in r.to_json().items() if k != "duration_s"}  # noqa: E731
    assert [strip(r) for r in iso] == [strip(r) for r in local]


def test_backend_from_spec_in_workers(toy_suite):
    results = run_isolated(toy_suite.cases, spec="onnxruntime", options={}, jobs=1)
    assert {r.outcome for r in results} <= {"pass", "unsupported"}
    with pytest.raises(WorkerError, match="cannot create backend"):
        run_isolated(toy_suite.cases, spec="onnxruntime", options={"colour": "blue"}, jobs=1)


def test_on_result_sees_every_case(toy_suite):
    seen = []
    run_isolated(toy_suite.cases, faulty.aborting(), jobs=2, on_result=lambda r: seen.append(r.id))
    assert sorted(seen) == sorted(c.id for c in toy_suite.cases)


def test_a_batch_sent_to_a_dead_worker_is_not_an_error(toy_suite):
    """Batches are topped up while a worker still runs, so a send can meet a worker that has just
    died on its current case: it must not raise (it once raised BrokenPipeError and took the run
    down); the cases stay in flight, for the death to be charged to the head and the rest re-run."""
    import multiprocessing as mp

    from conformance.isolation import _Worker

    w = _Worker(mp.get_context("fork"), faulty.aborting(), None, None, toy_suite.cases)
    w.proc.kill()  # as a crash would: the process is gone, the parent's end of the pipe open
    w.proc.join(5)
    w.send([0, 1], toy_suite.cases)
    assert list(w.inflight) == [0, 1] and not w.proc.is_alive()
    w.kill()


def test_many_crashes_amid_topped_up_batches(toy_suite):
    """40 crashes among 200 cases, one worker, batches topped up: every case gets its outcome,
    in order."""
    cases = toy_suite.cases * 40
    results = run_isolated(cases, faulty.aborting(), jobs=1, timeout=10.0)
    assert [r.id for r in results] == [c.id for c in cases]
    crashed = [r for r in results if r.outcome == "crash"]
    assert len(crashed) == 40 and all("SIGABRT" in r.message and r.tags["dtype"] == "float16" for r in crashed)
    assert all(r.outcome == "pass" for r in results if r.tags["dtype"] != "float16" or r.tags.get("error"))
