"""``package`` and ``verify``: a deterministic zip with a hash list, and a verifier that catches
missing, duplicated and extra cases, disallowed or edited outcomes, another suite, and edits."""

import copy
import hashlib
import json
import shutil
import zipfile
from pathlib import Path

import pytest

from conformance.package import SUMS, build_package, manifest_content_hash, verify_package, write_package
from conformance.reports.commands import main


@pytest.fixture(scope="module")
def run_dir(tmp_path_factory):
    """A real bundle of the toy suite and an onnxruntime run of it."""
    import toy

    from conformance.backends import resolve_backend
    from conformance.bundle_write import write_bundle
    from conformance.results import results_document, write_results
    from conformance.runner import run_cases
    from conformance.suite import Suite

    root = tmp_path_factory.mktemp("pkg")
    suite = Suite(cases=toy.abs_cases(0), seed=0, ops=["Abs"], generators={"Abs": "toy.abs_cases@toy"})
    bundle = write_bundle(suite, root / "bundle")
    backend = resolve_backend("onnxruntime")
    results = run_cases(suite.cases, backend)
    run = {"backend_spec": "onnxruntime", "backend_options": {}, "bundle": str(bundle.resolve()), "ops": ["Abs"],
           "seed": 0, "match": None, "argv": ["run"]}
    out = root / "results"
    out.mkdir()
    write_results(results_document(suite, backend.environment(), results, 0.5, run), out / "results.json")
    return out


def _copy_run(run_dir, tmp_path, edit=None):
    """A copy of the run whose results.json was passed through ``edit(doc)`` (summary recomputed)."""
    out = tmp_path / "run"
    shutil.copytree(run_dir, out)
    if edit:
        doc = json.loads((out / "results.json").read_text())
        edit(doc)
        from conformance.reports.common import summarize

        doc["summary"] = {k: v for k, v in summarize(doc["cases"]).items()}
        (out / "results.json").write_text(json.dumps(doc, indent=1))
    return out


def _members(path):
    with zipfile.ZipFile(path) as zf:
        return {n: zf.read(n) for n in zf.namelist()}, zf.comment


def test_package_verifies_and_is_deterministic(run_dir, tmp_path, capsys):
    a, b = tmp_path / "a.zip", tmp_path / "b.zip"
    assert main(["package", str(run_dir), "--out", str(a)]) == 0
    out = capsys.readouterr().out
    assert "package verifies" in out and "sha256:" in out
    digest = build_package(run_dir, b)
    assert a.read_bytes() == b.read_bytes()  # byte-identical
    members, comment = _members(a)
    assert sorted(members) == [SUMS, "environment.json", "manifest.json", "package.json", "report.html",
                               "results.json"]
    with zipfile.ZipFile(a) as zf:
        assert [i.filename for i in zf.infolist()] == sorted(members)
        assert {i.date_time for i in zf.infolist()} == {(1980, 1, 1, 0, 0, 0)}
    # SHA256SUMS in sha256sum's format, and the digest over it in the zip comment
    lines = members[SUMS].decode().splitlines()
    assert lines == [f"{hashlib.sha256(members[n]).hexdigest()}  {n}" for n in sorted(members) if n != SUMS]
    assert digest == hashlib.sha256(members[SUMS]).hexdigest()
    assert comment.decode().endswith(f"sha256:{digest}")
    # byte-for-byte results and manifest; a report rendered with the manifest
    assert members["results.json"] == (run_dir / "results.json").read_bytes()
    doc = json.loads(members["results.json"])
    assert members["manifest.json"] == (Path(doc["run"]["bundle"]) / "manifest.json").read_bytes()
    assert json.loads(members["environment.json"])["backend"]["backend"] == "onnxruntime"
    info = json.loads(members["package.json"])
    assert info["suite"]["content_hash"] == doc["suite"]["content_hash"]
    assert b"ONNX operator conformance report" in members["report.html"]
    v = verify_package(a, digest=f"sha256:{digest}")
    assert v.ok, v.problems
    assert v.facts["declared_cases"] == v.facts["result_records"] == 5
    assert main(["verify", str(a), "--digest", f"sha256:{digest}"]) == 0


def test_verify_rejects_a_missing_case(run_dir, tmp_path, capsys):
    dropped = {}

    def drop(doc):
        dropped["id"] = doc["cases"].pop(2)["id"]

    run = _copy_run(run_dir, tmp_path, drop)
    z = tmp_path / "p.zip"
    assert main(["package", str(run), "--out", str(z)]) == 1  # packaged, but it does not verify
    capsys.readouterr()
    assert main(["verify", str(z)]) == 1
    out = capsys.readouterr().out
    assert "package does not verify" in out
    problems = verify_package(z).problems
    assert problems == [f"1 declared case(s) missing from the results: {dropped['id']}"]


def test_verify_rejects_a_duplicated_case(run_dir, tmp_path):
    def dup(doc):
        doc["cases"].append(copy.deepcopy(doc["cases"][1]))

    z = tmp_path / "p.zip"
    build_package(_copy_run(run_dir, tmp_path, dup), z)
    problems = verify_package(z).problems
    assert len(problems) == 1 and "appear more than once in the results" in problems[0]
    assert "(2 times)" in problems[0]


def test_verify_rejects_an_edited_outcome(run_dir, tmp_path, capsys):
    z = tmp_path / "p.zip"
    build_package(run_dir, z)
    members, comment = _members(z)
    doc = json.loads(members["results.json"])
    case = next(c for c in doc["cases"] if c["outcome"] == "pass")
    case["outcome"] = "fail"  # edited after the run, hashes left as they were
    members["results.json"] = json.dumps(doc, indent=1).encode()
    edited = tmp_path / "edited.zip"
    with zipfile.ZipFile(edited, "w") as zf:
        for n in sorted(members):
            zf.writestr(n, members[n])
        zf.comment = comment
    assert main(["verify", str(edited)]) == 1
    assert "member results.json was edited after packaging" in capsys.readouterr().out
    problems = verify_package(edited).problems
    assert any(p.startswith("member results.json was edited after packaging") for p in problems)
    assert any("the summary in results.json does not match its case records" in p for p in problems)


def test_verify_rejects_outcomes_outside_the_allowed_set_even_with_fresh_hashes(run_dir, tmp_path):
    z = tmp_path / "p.zip"
    build_package(run_dir, z)
    members, _ = _members(z)
    doc = json.loads(members["results.json"])
    doc["cases"][0]["outcome"] = "passed"
    doc["summary"] = {"passed": 1, **{k: v for k, v in doc["summary"].items()}}
    doc["summary"][json.loads(members["results.json"])["cases"][0]["outcome"]] -= 1
    members["results.json"] = json.dumps(doc).encode()
    forged = tmp_path / "forged.zip"
    digest = write_package(members, forged)  # hashes recomputed: consistent, but not the published digest
    v = verify_package(forged)
    assert v.problems == ["outcome(s) outside the allowed set pass, fail, error, unsupported, crash, timeout, xfail, "
                          "xpass, skip: 'passed' (1 case(s))"]
    assert digest != verify_package(z).facts["digest"]
    assert any("not the expected" in p for p in verify_package(forged, digest=verify_package(z).facts["digest"]).problems)


def test_verify_rejects_extra_cases_another_suite_and_an_edited_manifest(run_dir, tmp_path):
    def extra(doc):
        c = copy.deepcopy(doc["cases"][0])
        c["id"] = "Abs-13/float/not-in-the-suite"
        doc["cases"].append(c)
        doc["suite"]["content_hash"] = "0" * 64

    z = tmp_path / "p.zip"
    build_package(_copy_run(run_dir, tmp_path, extra), z)
    problems = verify_package(z).problems
    assert any("result(s) for case(s) the suite does not declare: Abs-13/float/not-in-the-suite" in p for p in problems)
    assert any(p.startswith("the results are of another suite") for p in problems)

    members, _ = _members(z)
    m = json.loads(members["manifest.json"])
    assert manifest_content_hash(m) == m["content_hash"]
    m["cases"].pop()
    members["manifest.json"] = json.dumps(m).encode()
    forged = tmp_path / "m.zip"
    write_package(members, forged)
    assert any(p.startswith("manifest.json was edited") for p in verify_package(forged).problems)


def test_verify_rejects_a_changed_hash_list_and_odd_members(run_dir, tmp_path):
    z = tmp_path / "p.zip"
    build_package(run_dir, z)
    members, comment = _members(z)
    members["results.json"] = members["results.json"].replace(b'"pass"', b'"fail"', 1)
    members[SUMS] = "".join(f"{hashlib.sha256(members[n]).hexdigest()}  {n}\n"
                            for n in sorted(members) if n != SUMS).encode()
    members["../evil.txt"] = b"x"
    bad = tmp_path / "bad.zip"
    with zipfile.ZipFile(bad, "w") as zf:
        for n in sorted(members):
            zf.writestr(n, members[n])
        zf.comment = comment  # the old digest
    problems = verify_package(bad).problems
    assert any(p.startswith("SHA256SUMS was changed") for p in problems)
    assert any("unexpected member(s) in the package: ../evil.txt" in p for p in problems)
    assert any("member ../evil.txt is not listed in SHA256SUMS" in p for p in problems)


def test_bad_input(run_dir, tmp_path, capsys):
    assert main(["package", str(tmp_path), "--out", str(tmp_path / "x.zip")]) == 2
    assert "no such file" in capsys.readouterr().err
    assert main(["package", str(run_dir), "--out", str(tmp_path / "x.zip"), "--bundle", str(tmp_path)]) == 2
    assert "not a bundle" in capsys.readouterr().err
    z = tmp_path / "ok.zip"
    assert main(["package", str(run_dir), "--out", str(z)]) == 0
    assert main(["package", str(run_dir), "--out", str(z)]) == 2
    assert "--force" in capsys.readouterr().err
    (tmp_path / "notzip.zip").write_bytes(b"hello")
    assert main(["verify", str(tmp_path / "notzip.zip")]) == 1
    assert "not a readable zip file" in capsys.readouterr().out
    assert main(["verify", str(tmp_path / "missing.zip")]) == 2
    # a run made with --ops records no bundle: package asks for one
    run = _copy_run(run_dir, tmp_path, lambda d: d["run"].update(bundle=None))
    assert main(["package", str(run), "--out", str(tmp_path / "y.zip")]) == 2
    assert "--bundle" in capsys.readouterr().err
