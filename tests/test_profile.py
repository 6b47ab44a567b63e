"""Profiles and verdicts (conformance/profile.py): what a runtime claims, and whether it keeps it.

An honest backend that claims less passes its profile; a backend that claims a type or an
operator and refuses it is not conformant; waivers are listed with their reasons; a package's
verdict must follow from its results; the verdict is on the report's first screen.
"""

import dataclasses
import json
import zipfile

import numpy as np
import pytest

from conformance.analysis import analyse_case
from conformance.backends.base import Unsupported
from conformance.backends.kernel import KernelBackend
from conformance.profile import (
    FEATURES, Profile, ProfileError, judge, load_profile, onnxruntime_claim, shipped_profiles, verdict_line)
from conformance.runner import run_cases


def _abs(i, a, o, v):
    return {"Y": np.abs(i["X"])}


def _refuse_16_bit(i, a, o, v):
    if i["X"].dtype.itemsize == 2:
        raise Unsupported("no 16-bit kernel")
    return {"Y": np.abs(i["X"])}


def _profile(tmp_path, body: str, name="p.toml"):
    path = tmp_path / name
    path.write_text("[profile]\n" + body, encoding="utf-8")
    return str(path)


def _verdict(cases, kernel, profile):
    records = [r.to_json() for r in run_cases(cases, KernelBackend({"Abs": kernel}))]
    return judge(records, {c.id: analyse_case(c) for c in cases}, profile)


# --------------------------------------------------------------------------- reading profiles

def test_shipped_profiles_load_and_are_listed():
    names = shipped_profiles()
    assert {"float32-opset21", "float16-opset21", "int8-quantized", "language-model"} <= set(names)
    for name in names:
        p = load_profile(name)
        assert p.name == name and p.title == names[name] and p.kernels is None
    f16, f32 = load_profile("float16-opset21"), load_profile("float32-opset21")
    # extends: float16 adds a type and keeps the base's operators and opsets
    assert set(f16.types) == set(f32.types) | {"float16"} and f16.opsets == f32.opsets == (7, 21)


@pytest.mark.parametrize("body, match", [
    ('name = "x"\nwhatever = 1\n', "unknown field"),
    ('name = "x"\nfeatures = ["teleport"]\n', "unknown feature"),
    ('name = "x"\noperators = ["Conv", "NoSuchOp"]\n', "unknown operator 'NoSuchOp'"),
    ('name = "x"\ntypes = ["float33"]\n', "unknown element type"),
    ('name = "x"\nopsets = [21, 7]\n', "opsets must be"),
    ('name = "x"\ntypes = "float"\n', "types must be a list of strings"),
    ('title = "no name"\n', "missing field 'name'"),
    ('name = "x y"\n', "letters, digits"),
    ('name = "x"\nextends = "no-such-profile"\n', "unknown profile 'no-such-profile'"),
])
def test_malformed_profiles_are_refused_with_the_field_named(tmp_path, body, match):
    with pytest.raises(ProfileError, match=match):
        load_profile(_profile(tmp_path, body))


def test_profile_errors_for_files(tmp_path):
    with pytest.raises(ProfileError, match="no such file"):
        load_profile(str(tmp_path / "missing.toml"))
    bad = tmp_path / "bad.toml"
    bad.write_text("[profile\n", encoding="utf-8")
    with pytest.raises(ProfileError, match="not valid TOML"):
        load_profile(str(bad))
    (tmp_path / "a.toml").write_text('[profile]\nname = "a"\nextends = "b.toml"\n', encoding="utf-8")
    (tmp_path / "b.toml").write_text('[profile]\nname = "b"\nextends = "a.toml"\n', encoding="utf-8")
    with pytest.raises(ProfileError, match="cycle"):
        load_profile(str(tmp_path / "a.toml"))


def test_a_vendor_profile_extends_a_shipped_one(tmp_path):
    p = load_profile(_profile(tmp_path, 'name = "acme-npu"\nextends = "float32-opset21"\ntypes = ["int8"]\n'
                                        'exclude_operators = ["Einsum"]\nfeatures = ["training"]\n'))
    assert p.opsets == (7, 21) and "int8" in p.types and "float" in p.types
    assert p.exclude_operators == ("Einsum",) and p.features == ("training",)
    a = {"op": "Einsum", "domain": "", "version": 12, "opset": 12, "combo": {"T": "tensor(float)"}}
    assert p.excludes(a, {}) == "operator not claimed"
    assert p.excludes({**a, "op": "MatMul", "version": 13, "opset": 13}, {"training_mode": 1}) is None
    assert p.excludes({**a, "op": "MatMul", "opset": 22}, {}) == "opset 22 not claimed"
    assert p.excludes({**a, "op": "MatMul", "combo": {"T": "tensor(float16)"}}, {}) == "type float16 not claimed"
    base = load_profile("float32-opset21")
    assert base.excludes({**a, "op": "MatMul"}, {"training_mode": 1}) == "feature training not claimed"
    assert base.excludes({**a, "op": "SequenceAt", "combo": {"S": "seq(tensor(float))"}}, {}) \
        == "feature sequences not claimed"
    assert set(FEATURES) == {"training", "sequences", "optionals"}


def test_the_profile_record_judges_again_as_the_profile(tmp_path):
    for p in (load_profile("language-model"), onnxruntime_claim()):
        again = Profile.from_json(json.loads(json.dumps(p.to_json())))
        assert again == p and (again.kernels is None) == (p.kernels is None)
        if p.kernels is not None:
            assert again.kernels == {k: [(lo, hi, {n: frozenset(t) for n, t in c.items()}) for lo, hi, c in ks]
                                     for k, ks in p.kernels.items()}
    with pytest.raises(ProfileError, match="not a profile record"):
        Profile.from_json({"name": "x"})


# --------------------------------------------------------------------------- verdicts

def test_an_honest_backend_that_claims_less_is_conformant(toy_suite, tmp_path):
    """It refuses float16 and bfloat16, which its profile does not claim: conformant, and the
    refused cases are not claimed (not counted as pass or fail)."""
    prof = load_profile(_profile(tmp_path, 'name = "fp"\noperators = ["Abs"]\ntypes = ["float", "double"]\n'))
    v = _verdict(toy_suite.cases, _refuse_16_bit, prof)
    assert v["conformant"] and v["findings"] == [] and v["waived"] == []
    assert v["claimed"] == 3 and v["outcomes"] == {"pass": 3}  # float, double and the invalid model
    assert v["not_claimed"] == 2 and v["not_claimed_reasons"] == {"type bfloat16 not claimed": 1,
                                                                   "type float16 not claimed": 1}
    assert "CONFORMANT" in verdict_line(v) and "NOT" not in verdict_line(v)


def test_a_backend_that_claims_float16_and_refuses_it_is_not_conformant(toy_suite, tmp_path):
    prof = load_profile(_profile(tmp_path, 'name = "fp16"\noperators = ["Abs"]\ntypes = ["float", "double", '
                                           '"float16"]\n'))
    v = _verdict(toy_suite.cases, _refuse_16_bit, prof)
    assert not v["conformant"] and "NOT CONFORMANT" in verdict_line(v)
    assert [(f["op"], f["types"], f["kind"], f["cases"]) for f in v["findings"]] == [
        ("Abs", "T=float16", "claimed but refused", 1)]
    # the same backend with every kernel right is conformant to the same claim
    assert _verdict(toy_suite.cases, _abs, prof)["conformant"]


def test_a_dropped_or_wrong_operator_is_a_finding(toy_suite, tmp_path):
    prof = load_profile(_profile(tmp_path, 'name = "abs"\noperators = ["Abs"]\n'))
    records = [r.to_json() for r in run_cases(toy_suite.cases, KernelBackend({}))]  # no kernel at all
    analyses = {c.id: analyse_case(c) for c in toy_suite.cases}
    v = judge(records, analyses, prof)
    assert not v["conformant"] and v["claimed"] == 5
    assert {f["kind"] for f in v["findings"]} == {"claimed but refused"}
    wrong = judge([r.to_json() for r in run_cases(toy_suite.cases, KernelBackend({"Abs": lambda i, a, o, v: {
        "Y": -np.abs(i["X"])}}))], analyses, prof)
    assert not wrong["conformant"] and {f["kind"] for f in wrong["findings"]} == {"fail"}
    # a profile that claims nothing this suite has is no verdict of conformance
    none = judge(records, analyses, load_profile(_profile(tmp_path, 'name = "mm"\noperators = ["MatMul"]\n')))
    assert not none["conformant"] and none["claimed"] == 0 and "NO CLAIMED CASE" in verdict_line(none)


def test_waivers_are_listed_with_their_reasons_and_contested_refusals_are_not_findings(toy_suite, tmp_path):
    prof = load_profile(_profile(tmp_path, 'name = "abs"\noperators = ["Abs"]\n'))
    records = [r.to_json() for r in run_cases(toy_suite.cases, KernelBackend({"Abs": _refuse_16_bit}))]
    analyses = {c.id: analyse_case(c) for c in toy_suite.cases}
    for r in records:
        if r["tags"]["dtype"] == "float16":
            r.update(outcome="xfail", message="expected failure (no half kernels yet) [x.toml#1]: was unsupported")
        elif r["tags"]["dtype"] == "bfloat16":
            r.update(outcome="unsupported", message="contested model (its body is ill-typed), rejected at prepare")
    v = judge(records, analyses, prof)
    assert v["conformant"] and v["findings"] == []
    assert v["waived"] == [{"id": next(r["id"] for r in records if r["tags"]["dtype"] == "float16"),
                            "reason": "expected failure (no half kernels yet) [x.toml#1]: was unsupported"}]
    # a case without an analysis of its model is never claimed
    v2 = judge(records, {}, prof)
    assert v2["claimed"] == 0 and v2["not_claimed_reasons"] == {"no analysis of the case's model": 5}


def test_the_claim_read_from_onnxruntime_registry():
    """onnxruntime registers Add for float from opset 7 on, and no Add for strings: the derived
    claim covers the one and not the other; a version before any registered kernel is not claimed."""
    c = onnxruntime_claim()
    assert c.kernels and c.source.startswith("onnxruntime ")
    add = {"op": "Add", "domain": "", "version": 14, "opset": 14, "combo": {"T": "tensor(float)"}}
    assert c.excludes(add, {}) is None
    assert c.excludes({**add, "combo": {"T": "tensor(string)"}}, {}) == "no kernel registered for T=string"
    assert c.excludes({**add, "version": 1, "opset": 1}, {}) == "no kernel registered for version 1"
    assert c.excludes({**add, "op": "NoSuchOp"}, {}) == "no kernel registered"
    with pytest.raises(ProfileError, match="registers no kernel for 'NoSuchExecutionProvider'"):
        onnxruntime_claim("NoSuchExecutionProvider")


def test_kernel_claims_follow_the_registered_version_ranges_and_types():
    k = {("", "Op"): [(1, 5, {"T": frozenset({"float"})}), (6, 12, {"T": frozenset({"float", "float16"}),
                                                                    "I": frozenset({"int64"})})]}
    p = Profile(name="k", kernels=k, features=tuple(FEATURES))
    a = {"op": "Op", "domain": "", "version": 6, "opset": 9, "combo": {"T": "tensor(float16)", "I": "tensor(int64)"}}
    assert p.excludes(a, {}) is None
    assert p.excludes({**a, "version": 1}, {}) is not None  # float16 only from version 6
    assert p.excludes({**a, "combo": {"T": "tensor(float16)", "I": "tensor(int32)"}}, {}) is not None
    assert p.excludes({**a, "version": 13}, {}) == "no kernel registered for version 13"
    assert p.excludes({**a, "combo": {"T": "tensor(float)", "X": "tensor(bool)"}}, {}) is None  # X not constrained


# --------------------------------------------------------------------------- run, report, package, verify

@pytest.fixture
def profiled_run(tmp_path, toy_registered, capsys):
    """A bundle of the toy Abs cases, run on onnxruntime against a float16-claiming profile."""
    from conformance.cli import main

    prof = _profile(tmp_path, 'name = "abs-all"\noperators = ["Abs"]\n')
    assert main(["generate", "--ops", "Abs", "--out", str(tmp_path / "b")]) == 0
    rc = main(["run", "--bundle", str(tmp_path / "b"), "--profile", prof, "--out", str(tmp_path / "r"),
               "--jobs", "0"])
    assert "profile abs-all (version 1): " in capsys.readouterr().out
    return tmp_path, rc, json.loads((tmp_path / "r" / "results.json").read_text())


def test_run_with_a_profile_records_the_verdict_and_exits_by_it(profiled_run):
    tmp_path, rc, doc = profiled_run
    v = doc["verdict"]
    assert v["profile"]["name"] == "abs-all" and v["claimed"] == 5
    assert rc == (0 if v["conformant"] else 1)
    page = (tmp_path / "r" / "report.html").read_text()
    assert 'id="verdict"' in page and page.index('id="verdict"') < page.index('id="summary"')


def test_a_bad_profile_is_refused_before_anything_is_written(tmp_path, toy_registered, capsys):
    from conformance.cli import main

    out = tmp_path / "r"
    out.mkdir()
    (out / "keep.txt").write_text("earlier results")
    assert main(["run", "--ops", "Abs", "--profile", "no-such", "--out", str(out), "--force"]) == 2
    assert "unknown profile 'no-such'" in capsys.readouterr().err
    assert (out / "keep.txt").read_text() == "earlier results"


def test_verify_checks_that_the_verdict_follows_from_the_results(profiled_run):
    from conformance.package import build_package, verify_package

    tmp_path, _, doc = profiled_run
    good = tmp_path / "good.zip"
    build_package(tmp_path / "r", good)
    v = verify_package(good)
    assert v.ok, v.problems
    assert v.facts["verdict"]["profile"] == "abs-all"
    # a verdict edited before packaging (so every hash is consistent) does not follow from the results
    results = tmp_path / "r" / "results.json"
    forged = json.loads(results.read_text())
    forged["verdict"].update(conformant=not forged["verdict"]["conformant"], findings=[])
    results.write_text(json.dumps(forged))
    build_package(tmp_path / "r", tmp_path / "forged.zip")
    problems = verify_package(tmp_path / "forged.zip").problems
    assert any("conformant is recorded as" in p for p in problems), problems
    # a claimed case dropped from the results (and from the verdict's counts)
    dropped = json.loads(json.dumps(doc))
    gone = dropped["cases"].pop(0)
    from conformance.profile import Profile, judge

    manifest = json.loads((tmp_path / "b" / "manifest.json").read_text())
    analyses = {e["id"]: e["coverage"] for e in manifest["cases"]}
    dropped["verdict"] = judge(dropped["cases"], analyses, Profile.from_json(doc["verdict"]["profile"]))
    dropped["summary"][gone["outcome"]] -= 1
    results.write_text(json.dumps(dropped))
    build_package(tmp_path / "r", tmp_path / "dropped.zip")
    problems = verify_package(tmp_path / "dropped.zip").problems
    assert any("claimed case(s) of profile abs-all are missing" in p and gone["id"] in p for p in problems), problems
    with zipfile.ZipFile(tmp_path / "dropped.zip") as z:
        assert json.loads(z.read("package.json"))["verdict"]["claimed"] == 4


def test_the_verdict_is_on_the_first_screen_in_chromium(tmp_path):
    """The report of a profiled run of the whole table's size (synthetic results, 28,700 cases):
    the verdict heads the page, inside the first 1280x800 screen, with its findings table."""
    from browser import Browser, missing
    from synthetic import synthetic_results

    from conformance.reports.html import write_html

    if missing() is not None:
        pytest.skip(f"no browser to drive: {missing()}")
    doc = synthetic_results(28_700, seed=5, ops="table")
    prof = load_profile("float32-opset21")
    fake = {c["id"]: {"op": c["op"], "domain": c.get("domain", ""), "version": c["since_version"],
                      "opset": c["opset"], "combo": {"T": f"tensor({c['tags'].get('dtype', 'float')})"}}
            for c in doc["cases"]}
    doc["verdict"] = judge(doc["cases"], fake, prof)
    assert doc["verdict"]["findings"]  # the synthetic mix fails some claimed cases
    path = write_html(doc, tmp_path / "verdict.html")
    with Browser(width=1280, height=800, timeout=60) as b:
        b.driver.execute_cdp_cmd("Emulation.setDeviceMetricsOverride",
                                 {"width": 1280, "height": 800, "deviceScaleFactor": 1, "mobile": False})
        page = b.open(path.as_uri())
        box = page.eval("(() => { const r = document.getElementById('verdict-word').getBoundingClientRect();"
                        " return [r.top, r.bottom, r.height]; })()")
        assert box[2] > 0 and 0 <= box[0] and box[1] <= 800, box
        assert page.eval("document.getElementById('verdict-word').textContent") == "NOT CONFORMANT"
        first = page.eval("document.querySelector('#verdict table.findings tbody tr').getBoundingClientRect().top")
        assert first < 800
        assert page.console_errors() == []


def test_profile_is_not_charged_to_the_backend_when_the_claim_cannot_be_read(toy_suite, tmp_path):
    """A profile that cannot be read stops the run before any case (RunError), never an outcome."""
    from conformance.execute import RunError, RunSpec, execute
    from conformance.suite import Suite

    spec = RunSpec(backend_spec="onnxruntime", suite="generated", ops=["Abs"], jobs=0, profile="no-such-profile")
    out = tmp_path / "r"
    out.mkdir()
    with pytest.raises(RunError, match="unknown profile"):
        execute(spec, out, suite=Suite(cases=toy_suite.cases, seed=0, ops=["Abs"]))
    assert not (out / "results.jsonl").exists()
    assert dataclasses.asdict(spec)["profile"] == "no-such-profile"
