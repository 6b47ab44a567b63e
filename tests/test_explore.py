"""Explore mode: hypothesis strategies built from the generators, shrinking, saved failures.

* the strategies of LayerNormalization and BatchNormalization draw valid value cases
  (legitimate kernels pass every one) and shrink to the smallest case;
* :func:`conformance.explore.explore_op` shrinks a wrong kernel's failure to a small case;
* each operator has its own hypothesis example-database key, the same on every run and in
  every process: a saved failure replays for its operator only;
* end to end: ``pytest --conformance-explore`` against deliberately wrong backends
  (unbiased variance; statistics over the last axis only) from a scratch directory
  fails with a minimal case (every dim <= 2), saved as a bundle, and the printed
  ``onnx-conformance run`` command reproduces the failure.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import subprocess
import sys
from collections import Counter

import pytest
from hypothesis import HealthCheck, find, given, settings

from conformance import registry
from conformance.backends.kernel import KernelBackend
from conformance.bundle import read_bundle
from conformance.explore import ExploreFailure, describe_case, explore_op, repro_command, save_failure
from conformance.runner import run_case

TESTS = os.path.dirname(os.path.abspath(__file__))


def _env(extra: dict | None = None) -> dict:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTEST_", "HYPOTHESIS_"))}
    env.update(extra or {})
    env["PYTHONPATH"] = os.pathsep.join([p for p in (env.get("PYTHONPATH"), TESTS) if p])
    return env


def run_pytest(cwd, *args: str, env: dict | None = None) -> subprocess.CompletedProcess:
    """``python -m pytest ARGS`` in ``cwd`` (rootdir pinned there), output captured."""
    return subprocess.run([sys.executable, "-m", "pytest", f"--rootdir={cwd}", *args], cwd=cwd, env=_env(env),
                          capture_output=True, text=True, timeout=300)

pytestmark = pytest.mark.filterwarnings("ignore::RuntimeWarning")

#: A scratch backend module (written to tmp_path): LayerNormalization kernels with one bug each.
WRONG_LN = '''
import ml_dtypes
import numpy as np

from conformance.backends.kernel import KernelBackend


def _kernel(divisor_offset, last_axis_only=False):
    def kernel(inputs, attributes, outputs, opset):
        x, scale, b = inputs["X"], inputs["Scale"], inputs.get("B")
        axis = int(attributes.get("axis", -1))
        eps = np.float32(attributes.get("epsilon", 1e-5))
        u = np.float32 if int(attributes.get("stash_type", 1)) == 1 else ml_dtypes.bfloat16
        ax = x.ndim - 1 if last_axis_only else axis % x.ndim
        rows, n = int(np.prod(x.shape[:ax])), int(np.prod(x.shape[ax:]))
        with np.errstate(all="ignore"):
            xc = x.reshape(rows, n).astype(np.float32)
            mean = xc.sum(axis=1, keepdims=True) / np.float32(n)
            d = xc - mean
            var = (d * d).sum(axis=1, keepdims=True) / np.float32(n - divisor_offset)
            inv = np.float32(1) / np.sqrt(var + eps)
            w = np.float64 if x.dtype == np.float64 else np.float32
            y = (d * inv).astype(w).reshape(x.shape) * scale.astype(w)
            if b is not None:
                y = y + b.astype(w)
        shape = tuple(x.shape[:ax]) + (1,) * (x.ndim - ax)
        res = {"Y": y.astype(x.dtype), "Mean": mean.reshape(shape).astype(u),
               "InvStdDev": inv.reshape(shape).astype(u)}
        return {o: res[o] for o in outputs}
    return kernel


def unbiased():
    """Divides the variance by n - 1 instead of n."""
    return KernelBackend({"LayerNormalization": _kernel(1)}, name="unbiased-variance", check=False)


def last_axis():
    """Computes the statistics over the last axis only, whatever ``axis`` says."""
    return KernelBackend({"LayerNormalization": _kernel(0, last_axis_only=True)}, name="last-axis", check=False)


def correct():
    """float32 two-pass statistics: a legitimate kernel."""
    return KernelBackend({"LayerNormalization": _kernel(0)}, name="float32-two-pass", check=False)
'''


def _legit(op):
    if op == "LayerNormalization":
        import test_layer_normalization as t
    else:
        import test_batch_normalization as t
    return KernelBackend({op: t.LEGIT["welford"]}, name="welford")


# ----------------------------------------------------------------------------- strategies
@pytest.mark.parametrize("op", ["LayerNormalization", "BatchNormalization"])
def test_strategy_draws_valid_cases_that_legitimate_kernels_pass(op):
    assert op in registry.strategy_ops()
    backend = _legit(op)
    seen: Counter = Counter()

    @settings(max_examples=60, deadline=None, database=None, derandomize=True,
              suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
    @given(registry.get_strategy(op))
    def check(case):
        assert case.op == op and case.expect_error is None
        assert all(o.tolerance is not None for o in case.present_outputs)
        r = run_case(case, backend)
        assert r.outcome == "pass", (describe_case(case), r.message)
        seen[case.tags["dtype"]] += 1
        seen[case.tags["numerics"]] += 1

    check()
    assert len([k for k in seen if k in ("float", "double", "float16", "bfloat16")]) >= 3, seen
    numerics = {"normal", "large-offset", "special-values", "tiny-variance", "near-limits", "constant-rows",
                "constant-channels"}
    assert len(numerics & set(seen)) >= 4, seen


# ----------------------------------------------------------------------------- explore_op in-process
def test_explore_op_shrinks_a_wrong_batch_normalization_kernel(tmp_path):
    import test_batch_normalization as t

    backend = KernelBackend({"BatchNormalization": t.WRONG["eps-ignored"]}, name="eps-ignored")
    with pytest.raises(ExploreFailure) as info:
        explore_op("BatchNormalization", lambda c: run_case(c, backend), max_examples=60, derandomize=True,
                   save_dir=tmp_path / "fails", backend_spec="pkg.mod:eps_ignored")
    f = info.value
    assert f.result.outcome == "fail" and f.counts["fail"] >= 1
    x = next(i for i in f.case.inputs if i.name == "X")
    assert max(x.shape) <= 2, describe_case(f.case)
    # saved as a one-case bundle that reads back to the same case
    suite = read_bundle(f.bundle)
    assert [c.id for c in suite.cases] == [f.case.id]
    assert f.command == repro_command("pkg.mod:eps_ignored", None, f.bundle)
    assert f.command.startswith("onnx-conformance run --backend pkg.mod:eps_ignored --bundle ")
    assert "reproduce: " + f.command in str(f)


def test_explore_op_counts_unsupported_and_passes():
    empty = KernelBackend({}, name="nothing")
    counts = explore_op("LayerNormalization", lambda c: run_case(c, empty), max_examples=5, derandomize=True)
    assert set(counts) == {"unsupported"} and counts["unsupported"] >= 5


def test_save_failure_and_command_quoting(tmp_path):
    case = find(registry.get_strategy("LayerNormalization"), lambda c: len(c.inputs[0].shape) == 3,
                settings=settings(database=None, derandomize=True))
    b1 = save_failure(case, tmp_path / "a dir")
    b2 = save_failure(case, tmp_path / "a dir")  # same case again: replaced, not an error
    assert b1 == b2 and b1.name == f"LayerNormalization-{case.content_hash[:12]}"
    cmd = repro_command("onnxruntime", {"graph_optimization_level": "disable"}, b1)
    assert shlex.split(cmd) == ["onnx-conformance", "run", "--backend", "onnxruntime", "--backend-option",
                                "graph_optimization_level=disable", "--bundle", str(b1), "--out",
                                f"{b1}.results", "--force"]


# ----------------------------------------------------------------------------- end to end
def _explore(tmp_path, backend: str, *extra: str):
    return run_pytest(tmp_path, "--conformance-backend", backend, "--conformance-explore", "--conformance-ops",
                      "LayerNormalization", "--conformance-save-failures", "fails", "-p", "no:cacheprovider",
                      *extra, env={"PYTHONPATH": str(tmp_path)})


def _reproduce(tmp_path, out: str) -> tuple[str, dict]:
    """Run the printed command; returns the case id it reproduces and that case's result."""
    m = re.search(r"reproduce: (onnx-conformance run .*)$", out, re.M)
    assert m, out
    argv = shlex.split(m.group(1))
    assert argv[:2] == ["onnx-conformance", "run"]
    res = subprocess.run([sys.executable, "-m", "conformance.cli", *argv[1:]], cwd=tmp_path,
                         env=_env({"PYTHONPATH": str(tmp_path)}), capture_output=True, text=True, timeout=120)
    assert res.returncode == 1, res.stdout + res.stderr  # 1: some case failed
    out_dir = argv[argv.index("--out") + 1]
    [case] = json.loads((tmp_path / out_dir / "results.json").read_text())["cases"]
    return argv[argv.index("--bundle") + 1], case


@pytest.mark.parametrize("bug, rank", [("unbiased", 1), ("last_axis", 2)])
def test_explore_mode_shrinks_saves_and_reproduces(tmp_path, bug, rank):
    (tmp_path / "wrong_ln.py").write_text(WRONG_LN)
    # derandomized: shrinking reaches the minimal case from some draws only (a random seed failed
    # about one run in eight to get below rank 4 for last_axis)
    res = _explore(tmp_path, f"wrong_ln:{bug}", "--conformance-derandomize")
    assert res.returncode == 1, res.stdout + res.stderr
    assert "1 failed" in res.stdout and "explore LayerNormalization: minimal failing case after shrinking: fail" \
        in res.stdout
    bundle, result = _reproduce(tmp_path, res.stdout)
    [case] = read_bundle(bundle).cases
    assert result["id"] == case.id and result["outcome"] == "fail"
    assert case.id in res.stdout
    # minimal: every dim at most 2, the lowest rank the bug shows at, the first dtype, Y only
    for i in case.inputs:
        if i.present:
            assert all(d <= 2 for d in i.shape), describe_case(case)
    x = case.inputs[0]
    assert len(x.shape) == rank and case.tags["dtype"] == "float" and case.tags["outputs"] == "Y", \
        describe_case(case)
    if bug == "last_axis":  # not found at once: random examples, then shrinking
        counts = dict(re.findall(r"(\w+) (\d+)", re.search(r"examples run: (.*)", res.stdout).group(1)))
        assert int(counts.get("pass", 0)) >= 1 and int(counts["fail"]) >= 2, counts


def test_explore_mode_passes_a_correct_backend_and_skips_an_unsupported_op(tmp_path):
    (tmp_path / "wrong_ln.py").write_text(WRONG_LN)
    res = run_pytest(tmp_path, "--conformance-backend", "wrong_ln:correct", "--conformance-explore",
                     "--conformance-ops", "LayerNormalization,BatchNormalization",
                     "--conformance-max-examples", "40", "--conformance-derandomize", "-p", "no:cacheprovider",
                     "-rs", "-m", "explore", env={"PYTHONPATH": str(tmp_path)})
    assert res.returncode == 0, res.stdout + res.stderr
    assert "1 passed, 1 skipped" in res.stdout  # BatchNormalization: no kernel, every example unsupported
    assert "unsupported: every one of" in res.stdout and "BatchNormalization" in res.stdout
    assert not (tmp_path / "fails").exists()


# ----------------------------------------------------------------------------- the example database
class _RecordingDatabase:
    """An InMemoryExampleDatabase that records the keys hypothesis reads (``fetch``) and writes."""

    def __init__(self):
        from hypothesis.database import InMemoryExampleDatabase

        class DB(InMemoryExampleDatabase):
            def __init__(db):
                super().__init__()
                db.fetched, db.saved = [], []

            def fetch(db, key):
                db.fetched.append(key)
                yield from super().fetch(key)

            def save(db, key, value):
                db.saved.append(key)
                super().save(key, value)

        self.db = DB()


def _fails(case, failing_op) -> bool:
    """The fake backend's bug: cases of ``failing_op`` with a dimension of 2 or more fail (the
    simplest case, drawn first, passes, so the first case of a run tells a replay apart)."""
    return case.op == failing_op and max(case.inputs[0].shape, default=0) >= 3


def _fake_run(failing_op: str | None, seen: list):
    from conformance.runner import CaseResult

    def run(case):
        seen.append(case)
        outcome = "fail" if _fails(case, failing_op) else "pass"
        return CaseResult(case.id, case.op, case.domain, case.since_version, case.opset, case.tags, outcome, "fake")

    return run


def test_each_operator_has_its_own_stable_example_database_key():
    """A failure saved for one operator is replayed on that operator's next run (same key on every
    run) and never on another operator's run (a key of its own)."""
    a, b = "LayerNormalization", "BatchNormalization"
    db = _RecordingDatabase().db
    seen_a: list = []
    with pytest.raises(ExploreFailure) as info:
        explore_op(a, _fake_run(a, seen_a), max_examples=30, database=db)
    assert not _fails(seen_a[0], a) and _fails(info.value.case, a)  # a fresh run starts with a passing case
    keys_a = set(db.saved)
    assert keys_a and db.data, "the failing example was not saved"
    primary_a = db.fetched[0]  # the reuse phase reads the primary key first
    assert primary_a in keys_a

    db.fetched.clear()
    seen_b: list = []
    explore_op(b, _fake_run(None, seen_b), max_examples=5, database=db)
    shared = len(set(db.fetched) & keys_a)
    assert db.fetched and shared == 0, f"the other operator read {shared} key(s) of the first one's entries"
    assert all(c.op == b for c in seen_b)

    # the first operator's next run reads the same key and replays the minimal failing example first
    db.fetched.clear()
    seen_again: list = []
    with pytest.raises(ExploreFailure) as again:
        explore_op(a, _fake_run(a, seen_again), max_examples=30, database=db)
    assert db.fetched[0] == primary_a
    assert seen_again[0].content_hash == info.value.case.content_hash
    assert again.value.case.content_hash == info.value.case.content_hash


def test_the_example_database_key_is_the_same_in_a_new_process(tmp_path):
    """What a failing run saved to a directory database is replayed by a run in another process."""
    from hypothesis.database import DirectoryBasedExampleDatabase

    op = "LayerNormalization"
    seen: list = []
    with pytest.raises(ExploreFailure) as info:
        explore_op(op, _fake_run(op, seen), max_examples=30, database=DirectoryBasedExampleDatabase(tmp_path / "db"))
    assert not _fails(seen[0], op)  # a fresh run starts with a passing case; a replay with the failing one
    script = f"""
import sys
sys.path.insert(0, {TESTS!r})
from hypothesis.database import DirectoryBasedExampleDatabase
from conformance.explore import ExploreFailure, explore_op
from test_explore import _fake_run

seen = []
try:
    explore_op({op!r}, _fake_run({op!r}, seen), max_examples=30, database=DirectoryBasedExampleDatabase({str(tmp_path / "db")!r}))
except ExploreFailure as exc:
    print(seen[0].content_hash, seen[0].id, exc.case.id)
"""
    res = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=300, env=_env())
    assert res.returncode == 0, res.stderr
    first_hash, first_id, minimal_id = res.stdout.split()
    assert first_hash == info.value.case.content_hash, (
        f"the new process started with {first_id} (shrunk to {minimal_id}), not the saved {info.value.case.id}")
