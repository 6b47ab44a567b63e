"""Expected-failure files: failures become xfail, passes xpass, stale entries are reported."""

import json

import numpy as np
import pytest

from conformance.backends.kernel import KernelBackend
from conformance.runner import run_cases
from conformance.xfail import ExpectedFailureError, apply_expected_failures, load_expected_failures


def _write(tmp_path, text):
    p = tmp_path / "xfail.toml"
    p.write_text(text)
    return p


def _half_wrong(i, a, o, v):
    x = i["X"]
    return {"Y": -np.abs(x) if x.dtype == np.float16 else np.abs(x)}


def test_apply(toy_suite, tmp_path):
    entries = load_expected_failures(_write(tmp_path, '''
[[expected_failure]]
id = "Abs-13/float16/*"
reason = "known sign bug in half kernels"

[[expected_failure]]
id = "Abs-13/double/*"
reason = "claimed broken, actually fine"
backends = ["kernels"]

[[expected_failure]]
tags = { dtype = "bfloat16" }
reason = "for another backend only"
backends = ["other"]

[[expected_failure]]
id = "Conv-*"
reason = "no such case"
'''))
    results = run_cases(toy_suite.cases, KernelBackend({"Abs": _half_wrong}))
    stale = apply_expected_failures(results, entries, "kernels")
    by = {r.tags["dtype"] + ("/err" if r.tags.get("error") else ""): r for r in results}
    assert by["float16"].outcome == "xfail" and "known sign bug" in by["float16"].message
    assert by["double"].outcome == "xpass" and "claimed broken" in by["double"].message
    assert by["bfloat16"].outcome == "pass"  # entry is for another backend
    assert by["float"].outcome == "pass"
    assert [e.id for e in stale] == ["Conv-*"]  # the "other"-backend entry is not stale for this backend


@pytest.mark.parametrize("text, match", [
    ('[[expected_failure]]\nid = "x"\n', "needs a non-empty reason"),
    ('[[expected_failure]]\nid = "x"\nreason = "r"\ncolour = 1\n', "unknown field"),
    ('[[expected_failures]]\nid = "x"\nreason = "r"\n', "unknown table"),
    ('[[expected_failure]\n', "not valid TOML"),
    ('[[expected_failure]]\nid = 3\nreason = "r"\n', "string pattern"),
])
def test_malformed_files(tmp_path, text, match):
    with pytest.raises(ExpectedFailureError, match=match):
        load_expected_failures(_write(tmp_path, text))
    with pytest.raises(ExpectedFailureError, match="no such file"):
        load_expected_failures(tmp_path / "missing.toml")


def test_cli_xfail_and_stale_warning(toy_registered, tmp_path, capsys):
    from conformance.cli import main

    x = _write(tmp_path, '[[expected_failure]]\nid = "Abs-13/float/error=*"\nreason = "accepts unknown attributes"\n'
                         '[[expected_failure]]\nid = "Nope-*"\nreason = "stale"\n')
    # onnx-reference accepts the invalid model: a fail, declared expected -> xfail, exit 0
    assert main(["run", "--backend", "onnx-reference", "--ops", "Abs", "--xfail", str(x), "--out", str(tmp_path / "r")]) == 0
    doc = json.loads((tmp_path / "r" / "results.json").read_text())
    assert doc["summary"]["xfail"] == 1 and doc["summary"]["fail"] == 0
    assert "stale" in capsys.readouterr().out
    assert doc["expected_failures"]["stale"] and "Nope-*" in doc["expected_failures"]["stale"][0]
