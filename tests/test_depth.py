"""The smoke depth: a fixed subset of the full suite with every version and type combination."""

import json

import pytest

from conformance import registry
from conformance.coverage import compute_coverage

OPS = ["LayerNormalization", "Add", "Dropout", "Gather", "ReduceSum", "Cast"]


@pytest.fixture(scope="module")
def both():
    return registry.generate(OPS, 0), registry.generate(OPS, 0, "smoke")


def test_smoke_cases_are_full_cases(both):
    """Same seed: every smoke case is the full suite's case of the same id, byte for byte."""
    full, smoke = both
    by_id = {c.id: c for c in full}
    assert 0 < len(smoke) < len(full)
    for c in smoke:
        assert c.id in by_id and by_id[c.id].content_hash == c.content_hash


def test_smoke_covers_every_version_and_type_combination(both):
    """Measured from the models: each (operator, version) covers the same type combinations at
    both depths, and every version with invalid models keeps one."""
    full, smoke = both
    cf, cs = compute_coverage(full), compute_coverage(smoke)
    assert cf["ops"].keys() == cs["ops"].keys()
    for op, entry in cf["ops"].items():
        for v, ve in entry["versions"].items():
            assert cs["ops"][op]["versions"][v]["covered"] == ve["covered"], (op, v)
            assert bool(cs["ops"][op]["versions"][v]["error"]["cases"]) == bool(ve["error"]["cases"]), (op, v)
            assert cs["ops"][op]["versions"][v]["error"]["cases"] <= 1


def test_generic_selection_for_generators_without_depth():
    """A generator that does not select its own smoke cases gets the first case per (version,
    element types) and the first invalid model per version."""
    full = registry.generate(["Softmax"], 0)
    picked = registry.smoke_selection(full)
    keys = {(c.since_version, tuple(i.elem_type for i in c.inputs if i.present)) for c in full if c.expect_error is None}
    assert len([c for c in picked if c.expect_error is None]) == len(keys)
    assert [c for c in picked if c.expect_error is not None] == [
        next(c for c in full if c.expect_error is not None and c.since_version == v)
        for v in sorted({c.since_version for c in full if c.expect_error is not None},
                        key=lambda v: next(i for i, c in enumerate(full) if c.since_version == v and c.expect_error))]


def test_unknown_depth_is_refused():
    with pytest.raises(ValueError, match="unknown depth 'deep'"):
        registry.generate(["Add"], 0, "deep")


def test_cli_smoke_bundle_run_and_report(tmp_path):
    """generate --depth smoke records the depth in the manifest; the run's results and report say it;
    --depth with --bundle is refused before anything runs."""
    from conformance.cli import main

    bundle, out = tmp_path / "b", tmp_path / "r"
    assert main(["generate", "--ops", "Relu,Add", "--depth", "smoke", "--out", str(bundle)]) == 0
    assert json.loads((bundle / "manifest.json").read_text())["depth"] == "smoke"
    main(["run", "--bundle", str(bundle), "--out", str(out), "--jobs", "1"])
    doc = json.loads((out / "results.json").read_text())
    assert doc["suite"]["depth"] == "smoke"
    assert "depth: smoke" in (out / "report.html").read_text(encoding="utf-8")
    assert main(["run", "--bundle", str(bundle), "--depth", "smoke", "--out", str(tmp_path / "x")]) == 2
    assert not (tmp_path / "x").exists()
