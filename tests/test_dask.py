"""The Dask executor on a LocalCluster: same outcomes as the local runner, crashes contained."""

import pytest

distributed = pytest.importorskip("distributed")

from conformance.dask_executor import run_dask  # noqa: E402
from conformance.execute import RunSpec  # noqa: E402
from conformance.isolation import run_isolated  # noqa: E402


@pytest.fixture(scope="module")
def client():
    import os
    from pathlib import Path

    # worker processes must import tests/faulty.py for the "faulty:aborting" spec
    here = str(Path(__file__).parent)
    old = os.environ.get("PYTHONPATH")
    os.environ["PYTHONPATH"] = here + (os.pathsep + old if old else "")
    import dask

    with dask.config.set({"distributed.worker.daemon": False}), distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None,
                                  silence_logs=40) as cluster, distributed.Client(cluster) as c:
        yield c
    if old is None:
        os.environ.pop("PYTHONPATH", None)
    else:
        os.environ["PYTHONPATH"] = old


def _strip(r):
    return {k: v for k, v in r.to_json().items() if k != "duration_s"}


def test_dask_equals_local(client, toy_suite):
    spec = RunSpec(backend_spec="onnxruntime", timeout=30)
    seen = []
    res = run_dask(toy_suite.cases, spec, client=client, chunk_size=2, on_result=lambda r: seen.append(r.id))
    local = run_isolated(toy_suite.cases, spec="onnxruntime", jobs=1)
    assert sorted(map(str, map(_strip, res))) == sorted(map(str, map(_strip, local)))
    assert sorted(seen) == sorted(c.id for c in toy_suite.cases)


def test_dask_contains_a_crashing_backend(client, toy_suite):
    spec = RunSpec(backend_spec="faulty:aborting", timeout=30)
    res = {r.id: r for r in run_dask(toy_suite.cases, spec, client=client, chunk_size=5)}
    for c in toy_suite.cases:
        r = res[c.id]
        if c.tags["dtype"] == "float16":
            assert r.outcome == "crash" and "SIGABRT" in r.message
        else:
            assert r.outcome == "pass", (r.id, r.message)
