"""The command line, end to end on the toy operator (fast) and its error paths."""

import json

import pytest

from conformance.cli import main


def test_generate_run_report(toy_registered, tmp_path, capsys):
    b, r = tmp_path / "bundle", tmp_path / "results"
    assert main(["generate", "--ops", "Abs", "--seed", "3", "--out", str(b)]) == 0
    assert (b / "manifest.json").is_file() and (b / "coverage.jsonl").is_file()  # the coverage a run reads
    assert main(["run", "--backend", "onnxruntime", "--bundle", str(b), "--out", str(r)]) == 0
    doc = json.loads((r / "results.json").read_text())
    assert doc["suite"]["seed"] == 3 and doc["suite"]["n_cases"] == 5
    assert doc["backend"]["backend"] == "onnxruntime" and doc["backend"]["onnxruntime"]
    rec = doc["cases"][0]
    for key in ("id", "op", "domain", "since_version", "opset", "tags", "outcome", "message", "outputs"):
        assert key in rec
    assert {"max_abs_err", "ratio", "tolerance"} <= set(rec["outputs"][0]) or rec["outcome"] != "pass"
    assert "<table" in (r / "report.html").read_text()
    out = capsys.readouterr().out
    assert "Abs" in out and "results.json" in out
    assert main(["report", str(r / "results.json"), "--out", str(tmp_path / "x.html")]) == 0
    assert (tmp_path / "x.html").stat().st_size > 1000


def test_run_from_ops_and_exit_status_on_failure(toy_registered, tmp_path):
    # onnx-reference accepts the invalid model (unknown attribute): a fail, so exit status 1
    assert main(["run", "--backend", "onnx-reference", "--ops", "Abs", "--out", str(tmp_path / "r")]) == 1
    doc = json.loads((tmp_path / "r" / "results.json").read_text())
    assert doc["summary"]["fail"] == 1


def test_match_selects_cases(toy_registered, tmp_path):
    assert main(["run", "--ops", "Abs", "--match", "double", "--out", str(tmp_path / "r")]) == 0
    doc = json.loads((tmp_path / "r" / "results.json").read_text())
    assert [c["tags"]["dtype"] for c in doc["cases"]] == ["double"]


@pytest.mark.parametrize("argv, message", [
    (["run", "--backend", "nosuch", "--ops", "Abs", "--out", "{tmp}/r"], "unknown backend"),
    (["run", "--backend", "onnxruntime", "--backend-option", "novalue", "--ops", "Abs", "--out", "{tmp}/r"], "KEY=VALUE"),
    (["run", "--ops", "NoSuchOp", "--out", "{tmp}/r"], "unknown operator"),
    (["run", "--bundle", "{tmp}", "--out", "{tmp}/r"], "not a bundle"),
    (["run", "--out", "{tmp}/r"], "give exactly one of --bundle DIR, --ops OPS or --suite onnx-node"),
    (["report", "{tmp}/missing.json"], "no such file"),
])
def test_bad_input_exit_2_with_clear_message(toy_registered, tmp_path, capsys, argv, message):
    argv = [a.replace("{tmp}", str(tmp_path)) for a in argv]
    assert main(argv) == 2
    assert message in capsys.readouterr().err.replace("\n", " ")


def test_existing_output_dirs(toy_registered, tmp_path, capsys):
    b = tmp_path / "b"
    assert main(["generate", "--ops", "Abs", "--out", str(b)]) == 0
    assert main(["generate", "--ops", "Abs", "--out", str(b)]) == 2
    assert "--force" in capsys.readouterr().err
    assert main(["generate", "--ops", "Abs", "--out", str(b), "--force"]) == 0
    r = tmp_path / "r"
    r.mkdir()
    (r / "notes.txt").write_text("mine")
    assert main(["run", "--bundle", str(b), "--out", str(r), "--force"]) == 2
    assert (r / "notes.txt").read_text() == "mine"


def test_help_explains(capsys):
    with pytest.raises(SystemExit):
        main(["--help"])
    text = capsys.readouterr().out
    assert "generate" in text and "run" in text and "report" in text and "examples" in text


def test_piped_tables_keep_operator_names_whole(capsys, monkeypatch):
    """Under a pipe (a CI log) rich cannot ask a terminal for its width: the tables are
    printed wide enough that an operator name is never folded into fragments."""
    monkeypatch.delenv("COLUMNS", raising=False)
    assert main(["coverage", "--ops", "SkipSimplifiedLayerNormalization,BatchNormalization"]) == 0
    out = capsys.readouterr().out
    lines = out.splitlines()
    assert any("com.microsoft:SkipSimplifiedLayerNormalization" in ln for ln in lines), out
    assert any("BatchNormalization" in ln for ln in lines), out
    assert not any(ln.strip("│ ").startswith("zation") for ln in lines), out


def test_release_below_the_supported_range_is_refused_at_start(capsys, monkeypatch):
    """An installed release below pyproject's floor stops every command before it runs, naming
    the release (not a traceback from deep inside, as onnx 1.18's missing FLOAT8E8M0 gave)."""
    import conformance.compat

    monkeypatch.setattr(conformance.compat, "problems", lambda: ["onnx 1.18.0 is older than the supported 1.19"])
    assert main(["list"]) == 2
    err = capsys.readouterr().err
    assert "onnx 1.18.0 is older than the supported 1.19" in err and "Traceback" not in err


def test_several_seeds_generate_run_report_package(toy_registered, tmp_path, capsys):
    """generate --seed 0-2 and run --ops --seed 2,1,0: one suite of every seed's cases (the same
    suite either way); results.json, the report's headline, the
    repro command and the package name the seeds; verify accepts the package."""
    from conformance import registry

    b, r = tmp_path / "b", tmp_path / "r"
    ids = {c.id for s in (0, 1, 2) for c in registry.generate(["Abs"], s)}
    assert main(["generate", "--ops", "Abs", "--seed", "0-2", "--out", str(b)]) == 0
    assert "seeds 0,1,2" in capsys.readouterr().out
    assert main(["run", "--bundle", str(b), "--out", str(r)]) == 0
    doc = json.loads((r / "results.json").read_text())
    assert doc["suite"]["seeds"] == [0, 1, 2] and doc["suite"]["seed"] is None
    assert {c["id"] for c in doc["cases"]} == ids and doc["suite"]["n_cases"] == len(ids)
    html = (r / "report.html").read_text()
    assert "seeds 0,1,2" in html and "<th>seeds</th>" in html
    assert main(["run", "--ops", "Abs", "--seed", "2,1,0", "--out", str(tmp_path / "g")]) == 0
    gen = json.loads((tmp_path / "g" / "results.json").read_text())
    assert gen["suite"]["content_hash"] == doc["suite"]["content_hash"] and gen["run"]["seed"] == [0, 1, 2]
    from conformance.reports.common import repro_prefix

    assert repro_prefix(gen["run"], gen["suite"]).endswith("--ops Abs --seed 0,1,2")
    assert repro_prefix({"backend_spec": "x"}, gen["suite"]).endswith("--ops Abs --seed 0,1,2")
    assert main(["package", str(r), "--bundle", str(b), "--out", str(tmp_path / "p.zip")]) == 0
    import zipfile

    with zipfile.ZipFile(tmp_path / "p.zip") as zf:
        info = json.loads(zf.read("package.json"))
    assert info["suite"]["seeds"] == [0, 1, 2] and info["suite"]["n_cases"] == len(ids)
    assert main(["verify", str(tmp_path / "p.zip")]) == 0
    capsys.readouterr()
    with pytest.raises(SystemExit) as exit_:  # argparse's usage error: exit 2, the bad range named
        main(["generate", "--ops", "Abs", "--seed", "3-1", "--out", str(tmp_path / "x")])
    assert exit_.value.code == 2 and "seed range '3-1'" in capsys.readouterr().err


@pytest.mark.parametrize("given, expected", [(None, "1"), ("3", "3")])
def test_console_script_gives_openblas_one_thread_unless_set(given, expected):
    """The console script pins OpenBLAS to one thread before numpy's import (its idle threads
    spun ~0.05 s of CPU a run), and a value the user set stands."""
    import os
    import subprocess
    import sys

    env = {k: v for k, v in os.environ.items() if k != "OPENBLAS_NUM_THREADS"}
    if given is not None:
        env["OPENBLAS_NUM_THREADS"] = given
    code = ("import os, sys; sys.argv = ['onnx-conformance', 'list']; from conformance.cli import console_main; "
            "console_main(); import numpy; print('THREADS', os.environ['OPENBLAS_NUM_THREADS'], "
            "'numpy' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert f"THREADS {expected} True" in out.stdout
