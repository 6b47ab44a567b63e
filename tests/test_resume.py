"""Interrupted runs: SIGKILL or Ctrl-C midway, then --resume, ends with the uninterrupted results."""

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

import toy
from conformance.bundle_write import write_bundle
from conformance.suite import Suite

HERE = Path(__file__).parent


@pytest.fixture
def bundle(tmp_path):
    cases = [c for seed in range(8) for c in toy.abs_cases(seed)]
    return write_bundle(Suite(cases=cases, seed=0, ops=["Abs"]), tmp_path / "bundle")


def _default_sigint() -> None:
    # a shell starts a background job with SIGINT ignored, and Python keeps an ignored SIGINT
    # ignored: a test run started with `&` (or under nohup) would hand the CLI an ignored SIGINT,
    # and the interrupted run would finish (what made this test "flaky" when run in the background)
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def _cli(*args, **kw):
    env = dict(os.environ, PYTHONPATH=str(HERE) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    return subprocess.Popen([sys.executable, "-m", "conformance.cli", *args], env=env, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, preexec_fn=_default_sigint, **kw)


def _cases(out):
    doc = json.loads((out / "results.json").read_text())
    return [{k: v for k, v in c.items() if k != "duration_s"} for c in doc["cases"]]


def _lines(path):
    return len(path.read_text().splitlines()) if path.exists() else 0


def _interrupt_midway(proc, out, sig):
    """Send ``sig`` to the run ``proc`` once 8 results are in (it must still be running)."""
    deadline = time.monotonic() + 60
    while _lines(out / "results.jsonl") < 8:
        assert proc.poll() is None, proc.communicate()
        assert time.monotonic() < deadline
        time.sleep(0.05)
    assert proc.poll() is None, ("the run finished before it could be interrupted", proc.communicate())
    proc.send_signal(sig)
    proc.wait(30)


def _no_process_with(text: str, wait: float = 10.0) -> bool:
    """Whether, within ``wait`` seconds, no process's command line holds ``text`` (a run's forked
    workers carry their parent's command line).  True where /proc cannot be read."""
    proc = Path("/proc")
    if not proc.is_dir():
        return True
    deadline = time.monotonic() + wait
    while True:
        alive = []
        for d in proc.iterdir():
            if d.name.isdigit():
                try:
                    if text.encode() in (d / "cmdline").read_bytes():
                        alive.append(d.name)
                except OSError:
                    continue
        if not alive or time.monotonic() > deadline:
            return not alive
        time.sleep(0.1)


@pytest.mark.parametrize("sig", [signal.SIGKILL, signal.SIGINT])
def test_interrupt_then_resume_equals_uninterrupted(bundle, tmp_path, sig):
    ref = tmp_path / "ref"
    p = _cli("run", "--backend", "faulty:slow", "--bundle", str(bundle), "--out", str(ref), "--jobs", "2")
    assert p.wait(120) == 0, p.communicate()

    out = tmp_path / "out"
    # slower than the reference run (0.5 s a data set): results arrive a batch (16 cases) at a time,
    # and the signal must land before the last batch is in
    p = _cli("run", "--backend", "faulty:slow", "--backend-option", "delay=0.5", "--bundle", str(bundle),
             "--out", str(out), "--jobs", "1")
    _interrupt_midway(p, out, sig)
    done = _lines(out / "results.jsonl")
    assert not (out / "results.json").exists() and 8 <= done < 40, (sig, done, p.returncode)
    if sig == signal.SIGINT:
        assert p.returncode == 130 and b"--resume" in p.stdout.read()
    assert _no_process_with(str(out)), "a worker outlived its run"
    # a torn last line (as a kill during a write leaves) is dropped on resume
    with (out / "results.jsonl").open("a") as f:
        f.write('{"id": "Abs-13/tor')
    p = _cli("run", "--resume", str(out))
    stdout, stderr = p.communicate(timeout=120)
    assert p.returncode == 0, stderr
    assert b"already done" in stdout
    assert _cases(out) == _cases(ref)
    assert _lines(out / "results.jsonl") == 40
    # results.json's cases are results.jsonl's lines spliced (those of both sessions): the bytes
    # serialising the document gives
    from conformance.results import write_results

    for run in (ref, out):
        text = (run / "results.json").read_bytes()
        assert write_results(json.loads(text), tmp_path / "again.json").read_bytes() == text


def test_resume_refuses_a_changed_suite(bundle, tmp_path):
    out = tmp_path / "out"
    p = _cli("run", "--backend", "onnxruntime", "--bundle", str(bundle), "--out", str(out), "--match", "float16")
    assert p.wait(120) == 0
    run = json.loads((out / "run.json").read_text())
    run["seed"], run["suite_content_hash"] = 0, "0" * 64
    (out / "run.json").write_text(json.dumps(run))
    p = _cli("run", "--resume", str(out))
    _, err = p.communicate(timeout=60)
    assert p.returncode == 2 and b"suite changed" in err
    p = _cli("run", "--resume", str(tmp_path))
    _, err = p.communicate(timeout=60)
    assert p.returncode == 2 and b"nothing to resume" in err
