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
    (faulty.leaking, "crash", "exceeded the limit of 400 MiB"),
    (faulty.wrong_dtype, "fail", "dtype float64 != expected float16"),
    (faulty.dropping, "fail", "returned 0 output(s), expected 1"),
])
def test_faulty_backend_costs_only_its_case(toy_suite, make, outcome, text):
    cases = toy_suite.cases * 2  # the victim comes twice: the replaced worker must carry on
    results = run_isolated(cases, make(), jobs=2, timeout=5.0, memory_limit_mb=400)
    assert [r.id for r in results] == [c.id for c in cases]
    for r in results:
        if r.tags["dtype"] == "float16" and not r.tags.get("error"):
            assert r.outcome == outcome and text in r.message, r.message
        else:
            assert r.outcome == "pass", (r.id, r.outcome, r.message)


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
