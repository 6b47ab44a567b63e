"""The pytest plugin (conformance.pytest_plugin), driven as a user would: pytest in a scratch directory.

* an unrelated pytest run is unchanged by the installed plugin (same tests, same
  outcomes, same markers, nothing of ours imported);
* ``pytest --conformance-backend onnxruntime --conformance-ops LayerNormalization -n 2``
  gives, case by case, the outcomes of ``onnx-conformance run`` (documented mapping),
  in the JUnit XML too;
* a segfaulting backend from a conftest hook fails its one test and the session completes;
  serial and ``-n 2`` runs agree; ``-m``/``-k`` select by markers and ids, ``--lf`` reruns
  the failure;
* expected failures (xfail, strict xpass, stale entries), unsupported -> skipped, and the
  results document and HTML report written at the end;
* bad options are usage errors.

Every run is a subprocess with ``cwd=tmp_path`` (the toy Abs generator is registered by
the scratch conftest, never in this process).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

TESTS = Path(__file__).resolve().parent

#: conformance outcome -> pytest outcome (conformance/pytest_plugin.py docstring)
PYTEST_OUTCOME = {"pass": "passed", "fail": "failed", "error": "failed", "crash": "failed", "timeout": "failed",
                  "xpass": "failed", "unsupported": "skipped", "skip": "skipped", "xfail": "xfailed"}

TOY_CONFTEST = f"""
import ctypes
import os
import sys

import ml_dtypes
import numpy as np

sys.path.insert(0, {str(TESTS)!r})
import toy  # noqa: E402

from conformance.backends.base import Unsupported  # noqa: E402
from conformance.backends.kernel import KernelBackend  # noqa: E402

toy.install()


def mixed_kernel(inputs, attributes, outputs, opset):
    x = inputs["X"]
    if x.dtype == np.float16:
        ctypes.string_at(0)  # SIGSEGV
    if x.dtype == ml_dtypes.bfloat16:
        raise Unsupported("no bfloat16 Abs here")
    if x.dtype == np.float64:
        return {{"Y": np.abs(x) + 1.0}}  # wrong values
    return {{"Y": np.abs(x)}}


def pytest_conformance_backend(config):
    if os.environ.get("TOY_BACKEND") == "segfaulting":
        import faulty

        return faulty.segfaulting()
    if os.environ.get("TOY_BACKEND") == "ort-backend-api":
        from onnxruntime.backend.backend import OnnxRuntimeBackend

        return OnnxRuntimeBackend  # an onnx.backend.base.Backend subclass
    return KernelBackend({{"Abs": mixed_kernel}}, name="mixed")
"""


def _env(extra: dict | None = None) -> dict:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTEST_", "HYPOTHESIS_"))}
    env["PYTHONPATH"] = os.pathsep.join([str(TESTS)] + [p for p in [env.get("PYTHONPATH")] if p])
    env.update(extra or {})
    return env


def run_pytest(cwd: Path, *args: str, env: dict | None = None, timeout: float = 300) -> subprocess.CompletedProcess:
    """``python -m pytest ARGS`` in ``cwd`` (rootdir pinned there), output captured."""
    return subprocess.run([sys.executable, "-m", "pytest", f"--rootdir={cwd}", *args], cwd=cwd, env=_env(env),
                          capture_output=True, text=True, timeout=timeout)


def _summary(out: str) -> str:
    """The final ``N passed, M failed ...`` line without its timing."""
    last = [line for line in out.strip().splitlines() if line.strip()][-1]
    return last.strip("= ").rsplit(" in ", 1)[0]


def junit_outcomes(path: Path) -> dict[str, tuple[str, str | None]]:
    """case id -> (pytest outcome, conformance_outcome property) from a JUnit XML file."""
    out = {}
    for tc in ET.parse(path).getroot().iter("testcase"):
        name = tc.get("name")
        assert tc.get("classname") == "onnx-conformance" and name.startswith("case[") and name.endswith("]"), name
        if tc.find("failure") is not None or tc.find("error") is not None:
            outcome = "failed"
        elif (sk := tc.find("skipped")) is not None:
            outcome = "xfailed" if sk.get("type") == "pytest.xfail" else "skipped"
        else:
            outcome = "passed"
        props = {p.get("name"): p.get("value") for p in tc.iter("property")}
        out[name[len("case["):-1]] = (outcome, props.get("conformance_outcome"))
    return out


@pytest.fixture
def toy_dir(tmp_path):
    (tmp_path / "conftest.py").write_text(TOY_CONFTEST)
    return tmp_path


# ----------------------------------------------------------------------------- dormant when unused
def test_unrelated_run_is_unchanged(tmp_path):
    (tmp_path / "test_trivial.py").write_text(
        "import json, os, sys\n\n"
        "def test_ok():\n    assert 1 + 1 == 2\n\n"
        "def test_plugin_imported_nothing_heavy():\n"
        "    assert 'onnx' not in sys.modules and 'conformance.registry' not in sys.modules\n\n"
        "def test_record_markers(request):\n"
        "    with open('markers-' + os.environ['RUN'] + '.json', 'w') as f:\n"
        "        json.dump(request.config.getini('markers'), f)\n"
    )
    runs = {}
    for name, extra in (("on", []), ("off", ["-p", "no:onnx_conformance"])):
        res = run_pytest(tmp_path, "-v", "-p", "no:cacheprovider", *extra, env={"RUN": name})
        assert res.returncode == 0, res.stdout + res.stderr
        results = [line.split(" [")[0] for line in res.stdout.splitlines() if line.startswith("test_trivial.py::")]
        collected = [line for line in res.stdout.splitlines() if "collected" in line]
        runs[name] = (results, collected, _summary(res.stdout))
    assert runs["on"] == runs["off"]
    assert runs["on"][2] == "3 passed" and runs["on"][1][0].endswith("collected 3 items")
    # no markers registered by the dormant plugin
    assert (tmp_path / "markers-on.json").read_text() == (tmp_path / "markers-off.json").read_text()
    # the options are declared, though (a pytest11 plugin must, for --conformance-backend to parse)
    assert "--conformance-backend" in run_pytest(tmp_path, "--help").stdout


# ----------------------------------------------------------------------------- same outcomes as the CLI
def test_same_outcomes_as_cli_with_xdist(tmp_path):
    """CLI and ``pytest -n 2`` on every AffineGrid case, compared case by case: 30 cases whose
    outcomes on onnxruntime 1.32 are pass, fail, error and unsupported (LayerNormalization's 1,149
    before session 16: 89 s of the test run, and no failure among them)."""
    cli = subprocess.run([sys.executable, "-m", "conformance.cli", "run", "--backend", "onnxruntime", "--ops",
                          "AffineGrid", "--out", str(tmp_path / "cli"), "-j", "2"],
                         cwd=tmp_path, env=_env(), capture_output=True, text=True, timeout=300)
    assert cli.returncode in (0, 1), cli.stdout + cli.stderr
    expected = {c["id"]: c["outcome"] for c in json.loads((tmp_path / "cli" / "results.json").read_text())["cases"]}
    from conformance import registry

    assert len(expected) == len(registry.generate(["AffineGrid"], 0))
    assert {"pass", "error", "unsupported"} <= set(expected.values())

    res = run_pytest(tmp_path, "--conformance-backend", "onnxruntime", "--conformance-ops", "AffineGrid",
                     "-n", "2", "-q", "-p", "no:cacheprovider", "--junitxml", str(tmp_path / "junit.xml"))
    assert res.returncode == (1 if any(PYTEST_OUTCOME[o] == "failed" for o in expected.values()) else 0), res.stdout
    got = junit_outcomes(tmp_path / "junit.xml")
    assert set(got) == set(expected)
    mismatched = {cid: (expected[cid], got[cid]) for cid in expected
                  if got[cid] != (PYTEST_OUTCOME[expected[cid]], expected[cid])}
    assert not mismatched, list(mismatched.items())[:5]
    # the terminal summary agrees as well
    n = {k: sum(1 for o in expected.values() if PYTEST_OUTCOME[o] == k) for k in ("passed", "failed", "skipped")}
    for k, v in n.items():
        if v:
            assert f"{v} {k}" in _summary(res.stdout), res.stdout[-500:]


# ----------------------------------------------------------------------------- conftest backends, isolation
def test_segfaulting_backend_from_conftest_fails_one_test_last_failed_and_xdist(toy_dir):
    env = {"TOY_BACKEND": "segfaulting"}
    serial = run_pytest(toy_dir, "--conformance-ops", "Abs", "-rf", "--junitxml", "serial.xml", env=env)
    assert serial.returncode == 1, serial.stdout + serial.stderr
    assert _summary(serial.stdout) == "1 failed, 4 passed", serial.stdout
    assert "Abs-13/float16/normal" in serial.stdout and "crash at run" in serial.stdout
    assert "backend process killed by SIGSEGV" in serial.stdout
    outcomes = junit_outcomes(toy_dir / "serial.xml")
    assert sorted(outcomes.values()) == [("failed", "crash")] + [("passed", "pass")] * 4
    # --lf reruns only the crashed case
    again = run_pytest(toy_dir, "--conformance-ops", "Abs", "--lf", "-rf", env=env)
    assert _summary(again.stdout) == "1 failed, 4 deselected", again.stdout
    assert "Abs-13/float16/normal" in again.stdout
    # xdist: the same outcomes
    xdist = run_pytest(toy_dir, "--conformance-ops", "Abs", "-p", "no:cacheprovider", "-n", "2",
                       "--junitxml", "xdist.xml", env=env)
    assert _summary(xdist.stdout) == "1 failed, 4 passed", xdist.stdout
    assert junit_outcomes(toy_dir / "xdist.xml") == outcomes


def test_onnx_backend_api_class_from_conftest(toy_dir):
    res = run_pytest(toy_dir, "--conformance-ops", "Abs", "-p", "no:cacheprovider", "-rs",
                     env={"TOY_BACKEND": "ort-backend-api"})
    assert res.returncode == 0, res.stdout + res.stderr
    # onnxruntime has no bfloat16 Abs: cleanly unsupported -> skipped, never passed
    assert _summary(res.stdout) == "4 passed, 1 skipped", res.stdout
    assert "5 cases on OnnxRuntimeBackend: pass 4, unsupported 1" in res.stdout
    assert "unsupported: prepare:" in res.stdout


DUMP_MARKERS = """

def pytest_collection_finish(session):
    import json

    with open("markers.json", "w") as f:
        json.dump({i.nodeid: sorted({m.name for m in i.iter_markers()}) for i in session.items}, f)
"""


def test_markers_and_keywords(toy_dir):
    (toy_dir / "conftest.py").write_text(TOY_CONFTEST + DUMP_MARKERS)
    res = run_pytest(toy_dir, "--conformance-ops", "Abs", "--co", "-q", "-p", "no:cacheprovider", "--strict-markers")
    assert res.returncode == 0, res.stdout + res.stderr
    marks = json.loads((toy_dir / "markers.json").read_text())
    assert len(marks) == 5
    for nodeid, names in marks.items():
        dtype = nodeid.split("/")[1]
        extra = ["invalid_model"] if "error=" in nodeid else []
        assert names == sorted(["Abs", "ai_onnx", "conformance", dtype] + extra), (nodeid, names)

    def selected(*args):
        r = run_pytest(toy_dir, "--conformance-ops", "Abs", "-p", "no:cacheprovider", "--co", "-q", *args)
        assert r.returncode == 0, r.stdout + r.stderr
        return sorted(line.split("/")[1] for line in r.stdout.splitlines() if line.startswith("onnx-conformance::"))

    assert selected("-m", "(Abs and float16) or conformance(dtype='bfloat16') or (double and not invalid_model)") \
        == ["bfloat16", "double", "float16"]
    assert selected("-k", "double or unknown-attribute") == ["double", "float"]


def test_expected_failures_unsupported_and_report(toy_dir):
    (toy_dir / "xfail.toml").write_text(
        '[[expected_failure]]\nid = "Abs-13/double/*"\nreason = "adds one"\n\n'
        '[[expected_failure]]\nid = "Abs-13/float/normal/*"\nreason = "declared, but it passes"\n\n'
        '[[expected_failure]]\nid = "Nope-*"\nreason = "matches nothing"\n'
    )
    res = run_pytest(toy_dir, "--conformance-ops", "Abs", "--conformance-xfail", "xfail.toml", "-p", "no:cacheprovider",
                     "--conformance-results", "out/results.json", "--conformance-report", "out/report.html",
                     "-rsxf", "--junitxml", str(toy_dir / "j.xml"))
    assert res.returncode == 1
    assert _summary(res.stdout) == "2 failed, 1 passed, 1 skipped, 1 xfailed", res.stdout
    assert "[XPASS(strict)] Abs-13/float/normal" in res.stdout
    assert "unsupported: run: Unsupported: no bfloat16 Abs here" in res.stdout
    assert "expected failure matches no case run: xfail.toml#3: Nope-*" in res.stdout
    got = junit_outcomes(toy_dir / "j.xml")
    by_dtype = {cid.split("/")[1] + ("/error" if "error=" in cid else ""): v for cid, v in got.items()}
    assert by_dtype == {"float16": ("failed", "crash"), "bfloat16": ("skipped", "unsupported"),
                        "float": ("failed", "xpass"), "double": ("xfailed", "xfail"), "float/error": ("passed", "pass")}

    doc = json.loads((toy_dir / "out" / "results.json").read_text())
    assert doc["format"] == "onnx-conformance-results/1"
    assert {c["id"]: c["outcome"] for c in doc["cases"]} == {cid: v[1] for cid, v in got.items()}
    assert doc["summary"]["crash"] == 1 and doc["summary"]["xfail"] == 1 and doc["summary"]["xpass"] == 1
    assert doc["suite"]["n_cases"] == 5 and doc["suite"]["ops"] == ["Abs"] and doc["run"]["runner"] == "pytest"
    assert doc["expected_failures"]["stale"] == ["xfail.toml#3: Nope-* (matches nothing)"]
    assert doc["backend"]["backend"] == "mixed"
    html = (toy_dir / "out" / "report.html").read_text()
    assert "<html" in html[:1000] and "Abs-13/float16/normal" in html


def test_bundle_as_the_suite(toy_dir, toy_suite):
    from conformance.bundle_write import write_bundle

    write_bundle(toy_suite, toy_dir / "bundle")
    res = run_pytest(toy_dir, "--conformance-bundle", "bundle", "-p", "no:cacheprovider", "--junitxml", "a.xml",
                     "--conformance-results", "r.json")
    assert res.returncode == 1, res.stdout + res.stderr
    got = junit_outcomes(toy_dir / "a.xml")
    assert set(got) == {c.id for c in toy_suite.cases}
    assert sorted(v[1] for v in got.values()) == ["crash", "fail", "pass", "pass", "unsupported"]
    doc = json.loads((toy_dir / "r.json").read_text())
    assert doc["suite"]["content_hash"] == toy_suite.content_hash
    assert doc["run"]["bundle"] == str((toy_dir / "bundle").resolve())


@pytest.mark.parametrize("args, message", [
    (["--conformance-ops", "NoSuchOp"], "unknown operator(s) NoSuchOp; available: Abs,"),
    (["--conformance-backend", "no_such_module:Backend", "--conformance-ops", "Abs"], "cannot import module"),
    (["--conformance-ops", "Abs", "--conformance-bundle", "x"], "not both"),
    (["--conformance-bundle", "missing"], "no manifest.json"),
    (["--conformance-ops", "Abs", "--conformance-xfail", "missing.toml"], "no such file"),
    (["--conformance-ops", "Abs", "--conformance-backend-option", "oops"], "KEY=VALUE"),
    (["--conformance-ops", "Abs", "--conformance-timeout", "0"], "--conformance-timeout must be > 0"),
    (["--conformance-explore", "--conformance-ops", "NoSuchOp"], "with an explore strategy: Abs, Acos,"),
])
def test_usage_errors(toy_dir, args, message):
    res = run_pytest(toy_dir, "-p", "no:cacheprovider", *args)
    assert res.returncode == 4, res.stdout + res.stderr
    assert message in res.stderr


# ----------------------------------------------------------------------------- the per-process worker
@pytest.mark.parametrize("make, outcome, text", [
    ("aborting", "crash", "SIGABRT"),
    ("segfaulting", "crash", "SIGSEGV"),
    ("exiting", "crash", "status 3"),
    ("hanging", "timeout", "no result within 1 s"),
    ("leaking", "crash", "exceeded the limit of {limit} MiB"),
])
def test_executor_survives_faulty_backends(toy_suite, make, outcome, text):
    import faulty

    from conformance.isolation import IsolatedExecutor

    limit = faulty.leak_limit_mb()
    text = text.format(limit=limit)
    # the leak is given time to reach it (touching 400 MiB on a loaded machine can take over 1 s)
    ex = IsolatedExecutor(getattr(faulty, make)(), timeout=60.0 if make == "leaking" else 1.0, memory_limit_mb=limit)
    try:
        cases = toy_suite.cases * 2  # the victim comes twice: the replaced worker must carry on
        results = [ex.run(c) for c in cases]
    finally:
        ex.close()
    assert [r.id for r in results] == [c.id for c in cases]
    for r in results:
        if r.tags["dtype"] == "float16" and not r.tags.get("error"):
            assert r.outcome == outcome and text in r.message, r.message
        else:
            assert r.outcome == "pass", (r.id, r.outcome, r.message)


def test_executor_equals_run_isolated(toy_suite):
    import numpy as np

    from conformance.backends.kernel import KernelBackend
    from conformance.isolation import run_isolated
    from conformance.isolation import IsolatedExecutor

    backend = KernelBackend({"Abs": lambda i, a, o, v: {"Y": np.abs(i["X"]) * np.float32(1.001).astype(i["X"].dtype)}})
    ex = IsolatedExecutor(backend)
    try:
        mine, pids = [], set()
        for c in toy_suite.cases:
            mine.append(ex.run(c))
            pids.add(ex.worker.proc.pid)
        assert len(pids) == 1  # one persistent worker for every case
    finally:
        ex.close()
    ref = run_isolated(toy_suite.cases, backend, jobs=1)
    strip = lambda r: {k: v for k, v in r.to_json().items() if k != "duration_s"}  # noqa: E731
    assert [strip(r) for r in mine] == [strip(r) for r in ref]
    assert {r.outcome for r in mine} == {"pass", "fail"}
