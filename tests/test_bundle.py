"""Bundle layout, reproducibility, integrity and hostile input."""

import json
import shutil

import numpy as np
import pytest

from conformance.bundle import BundleError, read_bundle, write_bundle
from conformance.runner import run_cases, summarize
from conformance.backends import resolve_backend


def _tree_bytes(root):
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


def test_roundtrip_preserves_cases(toy_suite, tmp_path):
    out = write_bundle(toy_suite, tmp_path / "b")
    back = read_bundle(out)
    assert [c.id for c in back.cases] == [c.id for c in toy_suite.cases]
    assert back.content_hash == toy_suite.content_hash
    for a, b in zip(toy_suite.cases, back.cases):
        assert a.model_bytes == b.model_bytes and a.expect_error == b.expect_error
        for da, db in zip(a.datasets, b.datasets):
            for k in da.inputs:
                assert da.inputs[k].dtype == db.inputs[k].dtype
                np.testing.assert_array_equal(da.inputs[k], db.inputs[k])
            for k in da.outputs:
                np.testing.assert_array_equal(da.outputs[k], db.outputs[k])
    assert summarize(run_cases(back.cases, resolve_backend("onnxruntime")))["fail"] == 0


def test_layout(toy_suite, tmp_path):
    out = write_bundle(toy_suite, tmp_path / "b")
    values = sorted(p.name for p in (out / "cases").iterdir())
    errors = sorted(p.name for p in (out / "errors").iterdir())
    assert len(values) == 4 and len(errors) == 1 and all(n.startswith("test_") for n in values + errors)
    d = out / "cases" / values[0]
    assert (d / "model.onnx").is_file() and (d / "test_data_set_0" / "input_0.pb").is_file()
    assert set(json.loads((d / "data.json").read_text())) == {"atol", "rtol"}
    e = out / "errors" / errors[0]
    assert not (e / "test_data_set_0" / "output_0.pb").exists()
    assert "alpha" in json.loads((e / "expect_error.json").read_text())["expect_error"]


def test_same_suite_gives_byte_identical_bundles(toy_suite, tmp_path):
    import toy

    from conformance.suite import Suite

    again = Suite(cases=toy.abs_cases(0), seed=0, ops=["Abs"], generators=toy_suite.generators)
    a = _tree_bytes(write_bundle(toy_suite, tmp_path / "a"))
    b = _tree_bytes(write_bundle(again, tmp_path / "b"))
    assert a == b
    other = Suite(cases=toy.abs_cases(1), seed=1, ops=["Abs"], generators=toy_suite.generators)
    assert _tree_bytes(write_bundle(other, tmp_path / "c")) != a


def test_refuses_to_overwrite(toy_suite, tmp_path):
    out = write_bundle(toy_suite, tmp_path / "b")
    with pytest.raises(BundleError, match="--force"):
        write_bundle(toy_suite, out)
    write_bundle(toy_suite, out, force=True)  # replaces a previous bundle
    foreign = tmp_path / "home"
    foreign.mkdir()
    (foreign / "thesis.tex").write_text("precious")
    with pytest.raises(BundleError, match="left alone"):
        write_bundle(toy_suite, foreign, force=True)
    assert (foreign / "thesis.tex").read_text() == "precious"
    f = tmp_path / "file"
    f.write_text("x")
    with pytest.raises(BundleError, match="not a directory"):
        write_bundle(toy_suite, f)


def test_edited_bundle_is_detected(toy_suite, tmp_path):
    out = write_bundle(toy_suite, tmp_path / "b")
    d = sorted((out / "cases").iterdir())[0]
    p = d / "test_data_set_0" / "output_0.pb"
    data = bytearray(p.read_bytes())
    data[-1] ^= 1
    p.write_bytes(bytes(data))
    with pytest.raises(BundleError, match="does not match its hash"):
        read_bundle(out)


@pytest.mark.parametrize("mutate, match", [
    (lambda m: m["cases"][0].update(dir="../../etc"), "not a plain path"),
    (lambda m: m["cases"][0].update(dir="/tmp/x"), "not a plain path"),
    (lambda m: m.update(format="pickle"), "unknown format"),
    (lambda m: m["cases"][0].pop("inputs"), "KeyError"),
])
def test_malformed_manifest(toy_suite, tmp_path, mutate, match):
    out = write_bundle(toy_suite, tmp_path / "b")
    m = json.loads((out / "manifest.json").read_text())
    mutate(m)
    (out / "manifest.json").write_text(json.dumps(m))
    with pytest.raises(BundleError, match=match):
        read_bundle(out)


def test_missing_files(toy_suite, tmp_path):
    out = write_bundle(toy_suite, tmp_path / "b")
    d = sorted((out / "cases").iterdir())[0]
    (d / "test_data_set_0" / "input_0.pb").unlink()
    with pytest.raises(BundleError, match="missing file"):
        read_bundle(out)
    shutil.rmtree(out / "cases")
    with pytest.raises(BundleError):
        read_bundle(out)
    with pytest.raises(BundleError, match="not a bundle"):
        read_bundle(tmp_path)
    (out / "manifest.json").write_text("{not json")
    with pytest.raises(BundleError, match="not valid JSON"):
        read_bundle(out)
