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


def test_a_backend_that_does_not_build_on_the_workers_is_refused_before_any_case(client, toy_suite):
    from conformance.dask_executor import ClusterError

    seen = []
    with pytest.raises(ClusterError, match="does not build on the worker") as err:
        run_dask(toy_suite.cases, RunSpec(backend_spec="no_such_pkg.mod:Backend"), client=client,
                 on_result=seen.append)
    assert "2 of 2 Dask worker(s)" in str(err.value) and seen == []


def test_a_daemonic_cluster_is_refused_before_any_case_runs(toy_registered, tmp_path, capsys):
    """A plain `dask worker` (daemonic: it may not start the subprocesses that isolate each case)
    is a set-up problem of the run: refused with exit 2 and the fix named, before any case is
    sent, so no case is scored against the backend."""
    import dask

    from conformance.cli import main
    from conformance.dask_executor import ClusterError

    with dask.config.set({"distributed.worker.daemon": True}), distributed.LocalCluster(
            n_workers=1, threads_per_worker=1, processes=True, dashboard_address=":0", silence_logs=40) as cluster:
        with distributed.Client(cluster) as c, pytest.raises(ClusterError, match="DASK_DISTRIBUTED__WORKER__DAEMON=False"):
            run_dask([], RunSpec(backend_spec="onnxruntime"), client=c)
        out = tmp_path / "r"
        rc = main(["run", "--ops", "Abs", "--executor", "dask", "--scheduler", cluster.scheduler_address,
                   "--out", str(out)])
    err = capsys.readouterr().err
    assert rc == 2 and "daemonic" in err and "distributed.worker.daemon=False" in err and "No case ran" in err
    assert (out / "results.jsonl").read_bytes() == b""  # nothing charged to the backend


def test_a_worker_killed_mid_run_costs_no_case(client, toy_suite):
    """SIGKILL one Dask worker while both run cases: Dask reschedules its task on a live worker
    (its nanny restarts the killed one), and every case gets the outcome a local run gives."""
    import os
    import signal

    spec = RunSpec(backend_spec="faulty:slow", backend_options={"delay": "0.4"}, timeout=30)
    pids = client.run(os.getpid)
    killed = []

    def kill_one(r):
        if not killed:  # a worker that is running a case's task now
            busy = [w for w, keys in sorted(client.processing().items()) if keys]
            os.kill(pids[busy[0]], signal.SIGKILL)
            killed.append(busy[0])

    res = run_dask(toy_suite.cases, spec, client=client, chunk_size=1, on_result=kill_one)
    assert killed and sorted(r.id for r in res) == sorted(c.id for c in toy_suite.cases)
    assert {r.id: r.outcome for r in res} == {c.id: "pass" for c in toy_suite.cases}
    client.wait_for_workers(2, timeout=60)  # the nanny restarted it: the module's other tests keep two workers


# ------------------------------------------------------------------------------- generation
GEN_OPS = ["Neg", "Sign"]


def _files(root):
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


def _on(client):
    """write_generated_bundle's executor: generate_dask on ``client``."""
    import functools

    from conformance.dask_executor import generate_dask

    return functools.partial(generate_dask, client=client)


@pytest.fixture(scope="module")
def local_bundle(tmp_path_factory):
    """The two-seed bundle of GEN_OPS written locally: every file's bytes."""
    from conformance.bundle_write import write_generated_bundle

    out = tmp_path_factory.mktemp("local") / "b"
    write_generated_bundle(GEN_OPS, [0, 1], out, jobs=1)
    return _files(out)


def test_generation_on_the_cluster_is_byte_identical(client, local_bundle, tmp_path):
    """generate on the cluster (each (operator, seed) a task whose files come back as one in-memory
    zip): the bundle a local generate writes, byte for byte; as an archive too."""
    from conformance.bundle_write import write_generated_bundle, write_archive

    seen = []
    ident = write_generated_bundle(GEN_OPS, "0-1", tmp_path / "d", executor=_on(client),
                                   progress=lambda op, n: seen.append(op))
    assert _files(tmp_path / "d") == local_bundle
    assert sorted(seen) == sorted(GEN_OPS * 2) and ident["seeds"] == [0, 1]
    write_generated_bundle(GEN_OPS, [0, 1], tmp_path / "d.zip", executor=_on(client))
    write_archive(tmp_path / "d", tmp_path / "local.zip")
    assert (tmp_path / "d.zip").read_bytes() == (tmp_path / "local.zip").read_bytes()


def test_a_worker_killed_mid_generation_costs_nothing(client, local_bundle, tmp_path, monkeypatch):
    """SIGKILL a Dask worker while it generates: Dask runs its tasks again on a live worker and the
    bundle is still byte-identical to a local one."""
    import os
    import signal

    import slow_generate

    from conformance import dask_executor
    from conformance.bundle_write import write_generated_bundle

    monkeypatch.setattr(dask_executor, "_generate_task", slow_generate.slow_task)
    pids = client.run(os.getpid)
    killed = []

    def kill_one(op, n):
        busy = [w for w, keys in sorted(client.processing().items()) if keys]
        if not killed and busy:  # a worker that is generating now (each has a task or two queued)
            os.kill(pids[busy[0]], signal.SIGKILL)
            killed.append(busy[0])

    write_generated_bundle(GEN_OPS, [0, 1], tmp_path / "d", executor=_on(client), progress=kill_one)
    assert killed and _files(tmp_path / "d") == local_bundle
    client.wait_for_workers(2, timeout=60)


def test_workers_with_other_versions_are_refused_before_any_work(client, tmp_path, monkeypatch, capsys):
    """Workers whose onnx/numpy (or onnx-conformance) differ from the client's would generate other
    bytes: generate --executor dask exits 2 naming the versions to install, and writes nothing."""
    import conformance.suite
    from conformance import dask_executor
    from conformance.cli import main

    real = conformance.suite.library_versions()
    with pytest.raises(dask_executor.ClusterError, match=r"2 of 2 Dask worker\(s\) would generate other bytes"):
        dask_executor.check_generation_cluster(client, {**real, "numpy": "0.0"})
    assert dask_executor.check_generation_cluster(client) == 2

    monkeypatch.setattr(conformance.suite, "library_versions", lambda: {**real, "onnx": "9.9"})
    scheduler = client.scheduler.address
    rc = main(["generate", "--ops", ",".join(GEN_OPS), "--seed", "0,1", "--executor", "dask",
               "--scheduler", scheduler, "--out", str(tmp_path / "b")])
    err = capsys.readouterr().err
    assert rc == 2 and f"onnx {real['onnx']} (here 9.9)" in err and "install" in err and "onnx 9.9" in err
    assert "Nothing was generated" in err and list(tmp_path.iterdir()) == []
    assert main(["generate", "--ops", "Neg", "--executor", "dask", "--out", str(tmp_path / "c")]) == 2
    assert "--scheduler ADDRESS" in capsys.readouterr().err
