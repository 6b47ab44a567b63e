"""The ``command`` backend, driven by a small Python script standing in for a native runtime.

No runtime is needed: the "runtime" reads the case directory with onnx, computes with
``onnx.reference`` and writes ``output_*.pb``; a MODE argument makes it misbehave.
"""

from __future__ import annotations

import os
import sys
import textwrap
import time

import numpy as np
import pytest

from conformance.backends import resolve_backend
from conformance.backends.command import PLACEHOLDERS, CommandBackend, MissingOutput
from conformance.isolation import run_isolated
from conformance.runner import run_cases

RUNTIME = textwrap.dedent('''
    import glob, os, subprocess, sys, time
    import numpy as np
    import onnx
    from onnx import numpy_helper
    from onnx.reference import ReferenceEvaluator

    model_path, inputs_dir, outputs_dir, mode = sys.argv[1:5]
    model = onnx.load(model_path)
    if mode == "unsupported":
        print("Abs: this runtime has no such kernel", file=sys.stderr)
        sys.exit(3)
    if mode == "crash":
        print("segmentation fault in kernel Abs", file=sys.stderr)
        sys.exit(1)
    if mode == "text-unsupported":
        print("error: operator Abs is not implemented for this type")
        sys.exit(2)
    if mode == "hang":
        child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
        with open(os.environ["PID_FILE"], "w") as f:
            f.write(str(child.pid))
        time.sleep(60)
    onnx.checker.check_model(model, full_check=True)  # rejects invalid models (exit status 1)
    names = [i.name for i in model.graph.input]
    feeds = {}
    for k, name in enumerate(names):
        t = onnx.TensorProto()
        with open(os.path.join(inputs_dir, f"input_{k}.pb"), "rb") as f:
            t.ParseFromString(f.read())
        assert t.name == name, (t.name, name)
        feeds[name] = numpy_helper.to_array(t)
    outs = ReferenceEvaluator(model).run(None, feeds)
    for j, (o, v) in enumerate(zip(model.graph.output, outs)):
        if mode == "missing" and j == 0:
            continue
        if mode == "wrong-dtype" and v.dtype == np.float16:
            v = v.astype(np.float32)
        with open(os.path.join(outputs_dir, f"output_{j}.pb"), "wb") as f:
            f.write(numpy_helper.from_array(v, o.name).SerializeToString())
''')


@pytest.fixture
def runtime(tmp_path):
    p = tmp_path / "my runtime.py"  # a space in the path: placeholders must stay one argument
    p.write_text(RUNTIME)
    return p


def _backend(runtime, mode, **opts) -> CommandBackend:
    template = f'"{sys.executable}" "{runtime}" {{model}} {{inputs_dir}} {{outputs_dir}} {mode}'
    return resolve_backend("command", {"template": template, **opts})


def _value_cases(toy_suite):
    return [c for c in toy_suite.cases if c.expect_error is None]


def test_correct_runtime_passes_and_rejects_invalid_model(toy_suite, runtime):
    results = run_cases(toy_suite.cases, _backend(runtime, "ok"))
    assert [r.outcome for r in results] == ["pass"] * len(results)
    err = [r for r in results if r.expect_error]
    assert err and "rejected at run" in err[0].message


def test_unsupported_status(toy_suite, runtime):
    results = run_cases(_value_cases(toy_suite), _backend(runtime, "unsupported"))
    assert {r.outcome for r in results} == {"unsupported"}
    assert "status 3" in results[0].message and "no such kernel" in results[0].message


def test_unsupported_status_is_configurable(toy_suite, runtime):
    results = run_cases(_value_cases(toy_suite)[:1], _backend(runtime, "unsupported", unsupported_status="4"))
    assert results[0].outcome == "error"


def test_unsupported_text_with_nonzero_status(toy_suite, runtime):
    results = run_cases(_value_cases(toy_suite)[:1], _backend(runtime, "text-unsupported"))
    assert results[0].outcome == "unsupported" and "not implemented" in results[0].message


def test_exit_1_is_error_with_stderr(toy_suite, runtime):
    results = run_cases(_value_cases(toy_suite)[:1], _backend(runtime, "crash"))
    r = results[0]
    assert r.outcome == "error" and "status 1" in r.message and "segmentation fault in kernel Abs" in r.message


def test_wrong_dtype_is_fail(toy_suite, runtime):
    results = {r.tags["dtype"]: r for r in run_cases(_value_cases(toy_suite), _backend(runtime, "wrong-dtype"))}
    assert results["float16"].outcome == "fail"
    assert "dtype float32 != expected float16" in results["float16"].message
    assert results["float"].outcome == "pass"


def test_missing_output_is_fail(toy_suite, runtime):
    results = run_cases(_value_cases(toy_suite)[:1], _backend(runtime, "missing"))
    assert results[0].outcome == "fail" and "wrote no output_0.pb" in results[0].message


def test_shell_mode(toy_suite, runtime):
    template = f'"{sys.executable}" "{runtime}" {{model}} {{inputs_dir}} {{outputs_dir}} ok 2>/dev/null'
    results = run_cases(_value_cases(toy_suite), resolve_backend("command", {"template": template, "shell": "1"}))
    assert {r.outcome for r in results} == {"pass"}


def test_missing_program_is_error(toy_suite):
    b = resolve_backend("command", {"template": "/nonexistent/runner {model}"})
    r = run_cases(_value_cases(toy_suite)[:1], b)[0]
    assert r.outcome == "error" and "cannot start command" in r.message


def test_keep_leaves_case_dir(toy_suite, runtime, tmp_path):
    work = tmp_path / "work"
    work.mkdir()
    run_cases(_value_cases(toy_suite)[:1], _backend(runtime, "ok", keep="1", tmpdir=str(work)))
    (case_dir,) = list(work.iterdir())
    assert (case_dir / "model.onnx").is_file()
    assert (case_dir / "test_data_set_0" / "input_0.pb").is_file()
    assert (case_dir / "outputs" / "output_0.pb").is_file()
    run_cases(_value_cases(toy_suite)[:1], _backend(runtime, "ok", tmpdir=str(work)))
    assert len(list(work.iterdir())) == 1  # without keep, nothing is left behind


@pytest.mark.parametrize("opts, text", [
    ({}, "needs option template"),
    ({"template": "run {model} {nope}"}, "unknown placeholder {nope}"),
    ({"template": "run {model!r}"}, "no format spec"),
    ({"template": "run {model}", "colour": "red"}, "known: template"),
    ({"template": "run {model}", "shell": "maybe"}, "shell must be 0 or 1"),
    ({"template": "run 'unbalanced"}, "cannot be split"),
    ({"template": "run {model}", "unsupported_status": "x"}, "must be an integer"),
])
def test_bad_options(opts, text):
    with pytest.raises(ValueError, match=text.replace("{", r"\{").replace("}", r"\}")):
        resolve_backend("command", opts)


def test_literal_braces_and_all_placeholders(toy_suite, tmp_path):
    script = tmp_path / "echo.py"
    script.write_text("import sys; open(sys.argv[1], 'w').write('\\n'.join(sys.argv[2:])); sys.exit(3)\n")
    log = tmp_path / "args.txt"
    fields = " ".join("{" + p + "}" for p in PLACEHOLDERS)
    b = resolve_backend("command", {"template": f"{sys.executable} {script} {log} {{{{x}}}} {fields}"})
    r = run_cases(_value_cases(toy_suite)[:1], b)[0]
    assert r.outcome == "unsupported"
    args = log.read_text().split("\n")
    assert args[0] == "{x}"
    assert args[1].endswith("model.onnx") and args[3].endswith("test_data_set_0") and args[4].endswith("outputs")
    assert args[5:] == ["X", "Y", "1", "1"]


def test_environment_records_template(runtime):
    env = _backend(runtime, "ok").environment()
    assert env["backend"] == "command" and "{model}" in env["template"] and env["shell"] is False


def test_missing_output_sentinel_is_not_an_array():
    with pytest.raises(ValueError, match="missing output: gone"):
        np.asarray(MissingOutput("gone"))


def test_timeout_kills_the_command_process_group(toy_suite, runtime, tmp_path, monkeypatch):
    """A worker killed at the deadline takes the command, its children and its case dir with it."""
    pid_file = tmp_path / "child.pid"
    monkeypatch.setenv("PID_FILE", str(pid_file))
    work = tmp_path / "work"
    work.mkdir()
    case = _value_cases(toy_suite)[0]
    t0 = time.monotonic()
    (r,) = run_isolated([case], _backend(runtime, "hang", tmpdir=str(work)), jobs=1, timeout=3.0)
    assert r.outcome == "timeout"
    assert time.monotonic() - t0 < 30
    child = int(pid_file.read_text())
    for _ in range(50):  # the guardian notices the dead worker and kills the group
        if not _alive(child):
            break
        time.sleep(0.1)
    assert not _alive(child), "the command's child process outlived the killed worker"
    for _ in range(50):
        if not any(work.iterdir()):
            break
        time.sleep(0.1)
    assert not any(work.iterdir()), "the killed case's temporary directory was left behind"


def _alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().split(")")[-1].split()[0] != "Z"
    except FileNotFoundError:
        return False
    except OSError:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return False
        return True


def test_background_child_holding_stdout_does_not_block(toy_suite, tmp_path):
    """A command that leaves a child holding its stdout returns when the command exits."""
    script = tmp_path / "leaky.py"
    script.write_text(
        "import subprocess, sys\n"
        "subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(60)'])\n"
        "print('operator not supported here')\n"
        "sys.exit(2)\n"
    )
    b = resolve_backend("command", {"template": f"{sys.executable} {script} {{model}}"})
    t0 = time.monotonic()
    r = run_cases(_value_cases(toy_suite)[:1], b)[0]
    assert time.monotonic() - t0 < 20
    assert r.outcome == "unsupported" and "not supported" in r.message
