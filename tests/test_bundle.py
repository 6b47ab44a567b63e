"""Bundle layout, reproducibility, integrity and hostile input."""

import json
import math
import shutil

import numpy as np
import pytest

from conformance.bundle import BundleError, read_bundle
from conformance.bundle_write import write_bundle
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


def test_edited_manifest_entry_is_detected(toy_suite, tmp_path):
    """A tolerance edited in a case's manifest entry (its files untouched, its content hash kept) is
    found as an edited file is: the files' digest covers what the content hash covers."""
    out = write_bundle(toy_suite, tmp_path / "b")
    m = json.loads((out / "manifest.json").read_text())
    tol = next(o["tolerance"] for e in m["cases"] for o in e["outputs"] if o["tolerance"])
    tol["atol"] *= 10
    (out / "manifest.json").write_text(json.dumps(m))
    with pytest.raises(BundleError, match="does not match its hash"):
        read_bundle(out)


def test_manifest_with_nan_from_another_writer_reads(toy_suite, tmp_path):
    """A manifest line holding ``NaN`` (Python's json writes it; orjson, which reads our lines, does
    not take it) is read by Python's reader, one entry per line or not."""
    from conformance.bundle import read_index

    out = write_bundle(toy_suite, tmp_path / "b")
    lines = (out / "manifest.json").read_text().split("\n")
    k = next(i for i, line in enumerate(lines) if line.startswith("  {"))
    e = json.loads(lines[k].rstrip(","))
    e["tags"]["note"] = float("nan")
    lines[k] = "  " + json.dumps(e) + ("," if lines[k].endswith(",") else "")
    (out / "manifest.json").write_text("\n".join(lines))
    _, refs = read_index(out)
    assert math.isnan(refs[0].entry()["tags"]["note"]) and [r.id for r in refs] == [c.id for c in toy_suite.cases]
    assert refs[0].load().id == refs[0].id  # its line is not as written: checked by the content hash


def test_a_bundle_as_written_is_checked_by_its_digest(toy_suite, tmp_path, monkeypatch):
    """Reading a case of a bundle as written recomputes no content hash (the files' and entry's
    digest holds); the hashes a run would otherwise pay for are not computed."""
    import conformance.case

    out = write_bundle(toy_suite, tmp_path / "b")
    monkeypatch.setattr(conformance.case, "_hash_array", lambda *a: pytest.fail("a content hash was recomputed"))
    assert [c.id for c in read_bundle(out).cases] == [c.id for c in toy_suite.cases]


@pytest.mark.parametrize("edit", [False, True])
def test_manifest_without_file_digests_is_checked_by_content_hash(toy_suite, tmp_path, edit):
    """A bundle written before entries had ``files_sha256`` is still checked, by recomputing each
    case's content hash from its decoded files."""
    out = write_bundle(toy_suite, tmp_path / "b")
    m = json.loads((out / "manifest.json").read_text())
    for e in m["cases"]:
        assert len(e.pop("files_sha256")) == 64
    (out / "manifest.json").write_text(json.dumps(m))
    if edit:
        p = sorted((out / "cases").iterdir())[0] / "test_data_set_0" / "output_0.pb"
        data = bytearray(p.read_bytes())
        data[-1] ^= 1
        p.write_bytes(bytes(data))
        with pytest.raises(BundleError, match="does not match its hash"):
            read_bundle(out)
    else:
        assert [c.id for c in read_bundle(out).cases] == [c.id for c in toy_suite.cases]


@pytest.mark.parametrize("mutate, match", [
    (lambda m: m["cases"][0].update(dir="../../etc"), "not a plain path"),
    (lambda m: m["cases"][0].update(dir="/tmp/x"), "not a plain path"),
    (lambda m: m.update(format="pickle"), "unknown format"),
    (lambda m: m["cases"][0].pop("inputs"), "KeyError"),
    # a bundle is data: a check naming code outside this project is refused before it is imported
    (lambda m: m["cases"][0].update(check="os:system"), "not a function of the conformance package"),
    (lambda m: m["cases"][0].update(check="conformance_evil.x:f"), "not a function of the conformance package"),
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


# ============================================================================ every element type
from onnx import TensorProto  # noqa: E402

from conformance import dtypes  # noqa: E402
from conformance.case import Case, DataSet, Input, Output  # noqa: E402
from conformance.suite import Suite  # noqa: E402
from conformance.tolerance import Tolerance  # noqa: E402

_STRINGS = ["", "a", "ünïcödé", "日本語", "tab\tnew\nline", "x" * 300, "\x00nul", "🙂"]
_SHAPES = [(), (0,), (1,), (3,), (5,), (7,), (2, 3), (3, 0, 2), (3, 3, 3)]  # odd counts for the packed types


def _sample(t: int, shape: tuple, rng) -> np.ndarray:
    """Random bit patterns of the type (NaN payloads, subnormals, -0 included), canonical for
    the sub-byte types (only the low bits set, as ml_dtypes' own values)."""
    n = int(np.prod(shape, dtype=np.int64))
    dt = dtypes.np_dtype(t)
    if t == TensorProto.STRING:
        return np.array([_STRINGS[i % len(_STRINGS)] for i in rng.permutation(max(n, 1))[:n]], dtype=object).reshape(shape)
    if t == TensorProto.BOOL:
        return rng.integers(0, 2, n).astype(bool).reshape(shape)
    bits = dtypes.bit_width(t)
    if bits < 8:
        return rng.integers(0, 2 ** bits, n).astype(np.uint8).view(dt).reshape(shape)
    a = rng.integers(0, 256, n * dt.itemsize).astype(np.uint8)
    if n >= 2 and (dtypes.is_float(t) or dtypes.is_complex(t)):
        a[: dt.itemsize] = 0xFF  # a negative quiet NaN with an all-ones payload
        if t == TensorProto.FLOAT:
            a[4:8] = np.array([0x7F800001], dtype="<u4").view(np.uint8)  # a signalling NaN, payload 1
    return a.view(dt).reshape(shape)


def _same(a: np.ndarray, b: np.ndarray) -> bool:
    if a.dtype != b.dtype or a.shape != b.shape:
        return False
    if a.dtype == object:
        return a.tolist() == b.tolist() and all(type(x) is str for x in b.ravel())
    return a.tobytes() == b.tobytes()


def _all_types_suite() -> tuple[Suite, dict]:
    rng = np.random.default_rng(10)
    cases, arrays = [], {}
    for t in dtypes.ALL_TYPES:
        name = dtypes.type_name(t)
        for shape in _SHAPES:
            x, y = _sample(t, shape, rng), _sample(t, shape, rng)
            c = Case("Identity", 25, 25, {}, [Input("input", t, shape)], [Output("output", t, Tolerance(0.0, 0.0, exact=True))],
                     [DataSet({"input": x}, {"output": y})], label=f"{name}/{'x'.join(map(str, shape)) or 'scalar'}")
            arrays[c.id] = (x, y)
            cases.append(c)
        # the value as an initializer (baked into model.onnx by build_model)
        v = _sample(t, (5,), rng)
        c = Case("Identity", 25, 25, {}, [Input("input", t, (5,), initializer=True, value=v)],
                 [Output("output", t, Tolerance(0.0, 0.0, exact=True))], [DataSet({}, {"output": v})], label=f"{name}/init")
        arrays[c.id] = (v, v)
        cases.append(c)
    return Suite(cases=cases, seed=0, ops=["Identity"]), arrays


def test_every_element_type_round_trips_bit_for_bit(tmp_path):
    suite, arrays = _all_types_suite()
    assert len({c.id for c in suite.cases}) == len(suite.cases)
    back = read_bundle(write_bundle(suite, tmp_path / "b"))  # verify=True: the files' digests checked
    assert back.content_hash == suite.content_hash
    seen = set()
    for a, b in zip(suite.cases, back.cases):
        assert a.id == b.id and a.model_bytes == b.model_bytes
        assert Case.content_hash.func(b) == a.content_hash, a.id  # recomputed from the arrays as read
        x, y = arrays[a.id]
        seen.add(a.inputs[0].elem_type)
        if a.inputs[0].initializer:
            assert _same(x, b.inputs[0].value), a.id
        else:
            assert _same(x, b.datasets[0].inputs["input"]), a.id
        assert _same(y, b.datasets[0].outputs["output"]), a.id
    assert seen == set(dtypes.ALL_TYPES)


def test_packed_types_are_packed_on_disk(tmp_path):
    # int4 / float4: two per byte, int2: four, float6: four per three bytes (onnx's from_array)
    suite, _ = _all_types_suite()
    out = write_bundle(suite, tmp_path / "b")
    by_id = {c.id: c for c in suite.cases}
    manifest = json.loads((out / "manifest.json").read_text())
    import onnx

    for e in manifest["cases"]:
        c = by_id[e["id"]]
        t = c.inputs[0].elem_type
        if c.inputs[0].initializer or t == TensorProto.STRING:
            continue
        n = int(np.prod(c.inputs[0].shape, dtype=np.int64))
        tp = onnx.TensorProto()
        tp.ParseFromString((out / e["dir"] / "test_data_set_0" / "input_0.pb").read_bytes())
        assert tp.data_type == t and list(tp.dims) == list(c.inputs[0].shape)
        assert len(tp.raw_data) == -(-n * dtypes.bit_width(t) // 8)


def test_string_hash_does_not_depend_on_the_numpy_string_dtype():
    # '<U' arrays are written as STRING and read back as object arrays of str: same case
    mk = lambda x: Case("Identity", 25, 25, {}, [Input("input", TensorProto.STRING, (2,))],  # noqa: E731
                        [Output("output", TensorProto.STRING, Tolerance(0.0, 0.0, exact=True))],
                        [DataSet({"input": x}, {"output": x})])
    a = mk(np.array(["ab", "ü"]))
    b = mk(np.array(["ab", "ü"], dtype=object))
    c = mk(np.array([b"ab", "ü".encode()], dtype=object))
    assert a.content_hash == b.content_hash == c.content_hash
    assert mk(np.array(["ab", "u"], dtype=object)).content_hash != a.content_hash
    assert mk(np.array(["a", "bü"], dtype=object)).content_hash != a.content_hash  # no ambiguity at the joins


def test_streamed_generation_writes_the_same_bytes(tmp_path):
    """generate's streamed writer (workers, manifest assembled entry by entry) gives the bundle
    write_bundle gives, byte for byte, with one worker and with two."""
    import filecmp

    from conformance.bundle_write import write_bundle, write_generated_bundle
    from conformance.suite import generate_suite

    ops = ["Acos", "Where", "Dropout"]
    ref = write_bundle(generate_suite(ops, 0), tmp_path / "ref")
    for jobs in (1, 2):
        ident = write_generated_bundle(ops, 0, tmp_path / f"s{jobs}", jobs=jobs)
        assert ident["n_cases"] == len(generate_suite(ops, 0).cases) and ident["n_error"] > 0
        files = sorted(str(p.relative_to(ref)) for p in ref.rglob("*") if p.is_file())
        got = sorted(str(p.relative_to(tmp_path / f"s{jobs}")) for p in (tmp_path / f"s{jobs}").rglob("*") if p.is_file())
        assert files == got
        match, mismatch, errors = filecmp.cmpfiles(ref, tmp_path / f"s{jobs}", files, shallow=False)
        assert mismatch == [] and errors == [] and len(match) == len(files)


# ============================================================================ index and references
def test_index_reads_the_manifest_only(toy_suite, tmp_path):
    """read_index gives references without reading a case file; each reference loads the same
    case as read_bundle, with the analysis the manifest recorded equal to one measured now."""
    from conformance.analysis import analyse_case
    from conformance.bundle import CaseRef, read_index

    out = write_bundle(toy_suite, tmp_path / "b")
    shutil.move(out / "cases", tmp_path / "moved")  # no case file can be read
    identity, refs = read_index(out)
    assert all(isinstance(r, CaseRef) for r in refs)
    assert [r.id for r in refs] == [c.id for c in toy_suite.cases]
    assert identity["content_hash"] == toy_suite.content_hash and identity["n_cases"] == len(toy_suite.cases)
    assert [r.tags for r in refs] == [c.tags for c in toy_suite.cases]
    shutil.move(tmp_path / "moved", out / "cases")
    for ref, case in zip(refs, toy_suite.cases):
        loaded = ref.load_for_run()
        assert loaded.id == case.id and loaded.model_bytes == case.model_bytes
        assert ref.analysis() == analyse_case(case)
        assert ref.recorded_analysis == {k: v for k, v in analyse_case(case).items() if k != "id"}


def test_index_holds_a_few_bytes_a_case(tmp_path):
    """The parent's index of a bundle keeps in memory per case its entry's span, one small index and
    where its id and content hash are in the index's spool file (~20 bytes), no object, no text and
    no analysis (a list of references took 600 bytes a case and the analyses as much again; the
    ids and hashes in memory 150 more); each item is made from the manifest when asked for, and
    ids, kinds and the content hash are answered without reading it."""
    import tracemalloc

    from conformance.bundle import CaseRefs, read_index
    from conformance.suite import generate_suite

    suite = generate_suite(["Relu"], 0)
    path = write_bundle(suite, tmp_path / "b")
    read_index(path)  # what a first read imports is not held per case
    tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        _, refs = read_index(path)
        held = tracemalloc.get_traced_memory()[0] - before
    finally:
        tracemalloc.stop()
    assert isinstance(refs, CaseRefs) and len(refs) == len(suite.cases) > 40
    assert held / len(refs) < 64, f"{held / len(refs):.0f} bytes a case"
    assert [refs.id(i) for i in range(len(refs))] == [r.id for r in refs] == [c.id for c in suite.cases]
    assert refs.content_hash == suite.content_hash
    assert {refs.kind(i) for i in range(len(refs))} == {("", ("op", "", "Relu"))} and refs.recorded == len(refs)
    assert refs[-1].id == suite.cases[-1].id and [r.id for r in refs[1:3]] == [c.id for c in suite.cases[1:3]]


def _same_index(a, b) -> None:
    """Assert that two ``read_index`` results hold the same identity and references."""
    (ia, ra), (ib, rb) = a, b
    assert ia == ib and len(ra) == len(rb) > 0
    assert (ra.content_hash, ra.recorded, ra.kinds) == (rb.content_hash, rb.recorded, rb.kinds)
    n = len(ra)
    assert [ra.key(i) for i in range(n)] == [rb.key(i) for i in range(n)]
    assert [ra.kind(i) for i in range(n)] == [rb.kind(i) for i in range(n)]
    assert list(ra.entries(range(n))) == list(rb.entries(range(n)))
    assert (ra.declared is None) == (rb.declared is None)
    if ra.declared is not None:
        assert dict(ra.declared) == dict(rb.declared) and len(ra.declared) > 0


def test_kept_index_reads_as_the_manifest_does(tmp_path, monkeypatch):
    """generate keeps the manifest's index beside it (``bundle.INDEX_CACHE``, through
    ``keep_coverage``); ``read_index`` takes it, without parsing the manifest, only while it was
    made from the manifest's bytes, and gives what a parse gives; an edited manifest or a damaged
    index is parsed (an edited content hash refused as before); an archive leaves it out."""
    import zipfile

    from conformance import bundle
    from conformance.bundle_write import write_archive, write_generated_bundle
    from conformance.execute import keep_coverage

    out = tmp_path / "b"
    write_generated_bundle(["Relu"], 0, out, after_manifest=keep_coverage)
    assert (out / bundle.INDEX_CACHE).is_file()
    parses = []
    real_lines, real_kept = bundle._manifest_lines, bundle._kept_index

    def counted(*a, **k):
        parses.append(1)
        return real_lines(*a, **k)

    def parsed():
        monkeypatch.setattr(bundle, "_kept_index", lambda root: None)
        try:
            return bundle.read_index(out)
        finally:
            monkeypatch.setattr(bundle, "_kept_index", real_kept)

    monkeypatch.setattr(bundle, "_manifest_lines", counted)
    kept = bundle.read_index(out)
    assert parses == []
    _same_index(kept, parsed())
    assert parses == [1]
    assert [r.load_for_run().id for r in kept[1][:3]] == [kept[1].id(i) for i in range(3)]

    index = (out / bundle.INDEX_CACHE).read_bytes()
    (out / bundle.INDEX_CACHE).write_bytes(index[: len(index) // 2])  # damaged: parsed
    parses.clear()
    _same_index(bundle.read_index(out), parsed())
    assert parses == [1, 1]

    (out / bundle.INDEX_CACHE).write_bytes(index)
    text = (out / "manifest.json").read_text()
    (out / "manifest.json").write_text(text.replace("\n", "\n ", 1))  # same entries, other bytes: parsed
    parses.clear()
    _same_index(bundle.read_index(out), parsed())
    assert parses == [1, 1]
    first = json.loads(text)["cases"][0]["content_hash"]
    (out / "manifest.json").write_text(text.replace(first, "0" * 64, 1))
    with pytest.raises(BundleError, match="content_hash does not match"):
        bundle.read_index(out)

    (out / "manifest.json").write_text(text)
    assert bundle.INDEX_CACHE not in zipfile.ZipFile(write_archive(out, tmp_path / "b.zip")).namelist()


def test_manifest_in_any_json_layout(toy_suite, tmp_path):
    """The entry-at-a-time reader and a whole-document parse agree (a manifest re-written by
    another tool, keys in another order, indented, still reads)."""
    from conformance.bundle import read_index

    out = write_bundle(toy_suite, tmp_path / "b")
    ours = read_index(out)
    entries = [r.entry() for r in ours[1]]
    ids = [r.id for r in ours[1]]
    m = json.loads((out / "manifest.json").read_text())
    (out / "manifest.json").write_text(json.dumps(dict(reversed(list(m.items()))), indent=3))
    theirs = read_index(out)
    assert ours[0] == theirs[0] and ids == [r.id for r in theirs[1]] == [ours[1].id(i) for i in range(len(ids))]
    assert [r.entry() for r in theirs[1]] == entries
    # its entries' text is not what was written, so their digests do not hold: each case is
    # checked by its content hash instead, and reads
    assert [r.load().id for r in theirs[1]] == ids
    with pytest.raises(BundleError, match="replaced or edited since"):  # the old references' spans no longer hold
        ours[1][0]


@pytest.mark.parametrize("n", [0, 1, 3])
def test_manifest_read_line_by_line_as_written(tmp_path, n):
    """The line reader (which never holds the manifest's text) gives the entries, their byte spans
    and the rest of the document as a whole-document parse does, for the layout the writer
    writes with no, one and several entries, non-ASCII text included."""
    import io

    from conformance.bundle import _manifest_lines
    from conformance.bundle_write import _write_manifest

    entries = [{"id": f"Op-1/caf\u00e9/{k}", "k": k, "note": "\u2264 1 ulp"} for k in range(n)]
    path = tmp_path / "manifest.json"
    _write_manifest(path, [json.dumps(e, ensure_ascii=False) for e in entries], {"seed": 7, "ops": ["Op"]})
    raw = path.read_bytes()
    head: dict = {}
    got = list(_manifest_lines(io.BytesIO(raw), head))
    assert [e for e, _, _ in got] == entries
    assert [json.loads(raw[a:b]) for _, (a, b), _ in got] == entries
    whole = json.loads(raw)
    assert whole.pop("cases") == entries and head == whole


def test_edited_manifest_hash_is_refused_before_any_case(toy_suite, tmp_path):
    from conformance.bundle import read_index

    out = write_bundle(toy_suite, tmp_path / "b")
    text = (out / "manifest.json").read_text()
    first = json.loads(text)["cases"][0]["content_hash"]
    (out / "manifest.json").write_text(text.replace(first, "0" * 64, 1))
    with pytest.raises(BundleError, match="content_hash does not match"):
        read_index(out)


def test_edited_case_stops_the_run_and_charges_nothing(toy_suite, tmp_path):
    """A case whose files no longer match its hash is found by the worker that loads it: the run
    stops with the case named, and no result is recorded for it (it is not the backend's fault)."""
    from conformance.execute import RunError, RunSpec, execute

    out = write_bundle(toy_suite, tmp_path / "b")
    edited = sorted((out / "cases").iterdir())[-1]
    p = edited / "test_data_set_0" / "input_0.pb"
    data = bytearray(p.read_bytes())
    data[-1] ^= 1
    p.write_bytes(bytes(data))
    run = tmp_path / "run"
    run.mkdir()
    spec = RunSpec(backend_spec="onnxruntime", suite="bundle", bundle=str(out), jobs=1)
    with pytest.raises(RunError, match="does not match its hash.*nothing was charged to the backend"):
        execute(spec, run)
    recorded = [json.loads(line)["id"] for line in (run / "results.jsonl").read_text().splitlines()]
    assert edited.name[-10:] not in " ".join(recorded)
    assert not (run / "results.json").exists()


def test_the_parent_never_reads_a_case(toy_suite, tmp_path, monkeypatch):
    """A bundle run reads the cases in the workers only: reading one in the parent raises here,
    and the run still gives every case its outcome, coverage included."""
    import os

    from conformance.bundle import CaseRef
    from conformance.execute import RunSpec, execute

    parent = os.getpid()
    real = CaseRef.load_for_run

    def guarded(self):
        assert os.getpid() != parent, "the parent read a case"
        return real(self)

    monkeypatch.setattr(CaseRef, "load_for_run", guarded)
    monkeypatch.setattr(CaseRef, "load", lambda self, verify=True: pytest.fail("the parent read a case"))
    out = write_bundle(toy_suite, tmp_path / "b")
    run = tmp_path / "run"
    run.mkdir()
    doc, _ = execute(RunSpec(backend_spec="onnxruntime", suite="bundle", bundle=str(out), jobs=2), run)
    assert sorted(doc["cases"].ids()) == sorted(c.id for c in toy_suite.cases)
    assert doc["coverage"]["cases"] == len(toy_suite.cases) and doc["suite"]["content_hash"] == toy_suite.content_hash
    # computed while the workers ran, the outcomes added at the end: the coverage computed whole
    from conformance.bundle import read_index
    from conformance.coverage import compute_coverage

    outcomes = {cid: c["outcome"] for cid, c in zip(doc["cases"].ids(), doc["cases"])}
    whole = compute_coverage((), outcomes, analyses=[r.analysis() for r in read_index(out)[1]])
    assert doc["coverage"] == whole  # its operators kept as text (CompactOps), read back as dicts
    written = json.loads((run / "results.json").read_text())["coverage"]
    assert json.dumps(written) == json.dumps(whole)


# -- bundle archives -----------------------------------------------------------------------

def test_archive_reads_as_the_directory_does(toy_suite, tmp_path):
    """A bundle archive (one zip in the directory's layout) gives the same identity, entries, cases
    and content hash as the directory, its entries read again by byte span from the stored
    manifest; writing it twice gives the same bytes."""
    from conformance.bundle import is_archive, manifest_bytes, read_index
    from conformance.bundle_write import write_archive

    d = write_bundle(toy_suite, tmp_path / "b")
    z = write_archive(d, tmp_path / "b.zip")
    assert is_archive(z) and not is_archive(d)
    assert write_archive(d, tmp_path / "again.zip").read_bytes() == z.read_bytes()
    assert manifest_bytes(z) == (d / "manifest.json").read_bytes()
    (id_d, refs_d), (id_z, refs_z) = read_index(d), read_index(z)
    assert {k: v for k, v in id_d.items() if k != "source"} == {k: v for k, v in id_z.items() if k != "source"}
    assert [r.entry() for r in refs_z] == [r.entry() for r in refs_d]
    for rd, rz in zip(refs_d, refs_z):
        cd, cz = rd.load(), rz.load()
        assert cz.content_hash == cd.content_hash == rz.content_hash and cz.model_bytes == cd.model_bytes
    assert [r.outcome for r in run_cases([r.load() for r in refs_z], resolve_backend("onnx-reference"))] == \
        [r.outcome for r in run_cases([r.load() for r in refs_d], resolve_backend("onnx-reference"))]


def test_archive_with_a_missing_member_or_no_manifest_is_refused(toy_suite, tmp_path):
    import zipfile

    from conformance.bundle import read_index
    from conformance.bundle_write import write_archive

    z = write_archive(write_bundle(toy_suite, tmp_path / "b"), tmp_path / "b.zip")
    _, refs = read_index(z)
    victim = f"{refs[0].entry()['dir']}/model.onnx"
    cut = tmp_path / "cut.zip"
    with zipfile.ZipFile(z) as src, zipfile.ZipFile(cut, "w") as dst:
        for info in src.infolist():
            if info.filename != victim:
                dst.writestr(info, src.read(info))
    _, cut_refs = read_index(cut)
    with pytest.raises(BundleError, match="missing file .*model.onnx"):
        cut_refs[0].load()
    bare = tmp_path / "bare.zip"
    with zipfile.ZipFile(bare, "w") as zf:
        zf.writestr("readme.txt", "not a bundle")
    with pytest.raises(BundleError, match="no manifest.json"):
        read_index(bare)


def test_generate_to_an_archive_and_refuse_to_replace_a_foreign_file(tmp_path, toy_registered):
    """``generate --out NAME.zip`` writes the archive (the directory's content hash); an existing
    file is replaced only with --force and only when it is a bundle archive."""
    from conformance.bundle import read_index
    from conformance.bundle_write import write_generated_bundle

    ident = write_generated_bundle(["Abs"], 0, tmp_path / "s.zip")
    assert read_index(tmp_path / "s.zip")[0]["content_hash"] == ident["content_hash"] == \
        write_generated_bundle(["Abs"], 0, tmp_path / "s")["content_hash"]
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".")]  # no staging left behind
    with pytest.raises(BundleError, match="exists; use --force"):
        write_generated_bundle(["Abs"], 0, tmp_path / "s.zip")
    write_generated_bundle(["Abs"], 0, tmp_path / "s.zip", force=True)
    (tmp_path / "notes.zip").write_text("mine")
    with pytest.raises(BundleError, match="not a bundle archive"):
        write_generated_bundle(["Abs"], 0, tmp_path / "notes.zip", force=True)
    assert (tmp_path / "notes.zip").read_text() == "mine"


# ============================================================================ several seeds
def test_parse_seeds():
    from conformance.suite import parse_seeds, seed_identity

    assert parse_seeds(3) == [3] and parse_seeds("3") == [3] and parse_seeds([2, 0, 2]) == [0, 2]
    assert parse_seeds("0-3, 7,2") == [0, 1, 2, 3, 7] and parse_seeds("5 - 5") == [5]
    for bad in ("", "a", "3-1", "1,,2", "-1", "1.5", []):
        with pytest.raises(ValueError):
            parse_seeds(bad)
    assert seed_identity([4]) == {"seed": 4}  # one seed: the manifest's identity as it always was
    assert seed_identity([0, 1]) == {"seed": None, "seeds": [0, 1]}


def test_merge_keys_keeps_an_id_once_at_its_first_task_whatever_the_order():
    """_merge_keys: an id several seeds give is kept once, owned by the first task in manifest
    order even when a later task's result arrives first (a cluster's order); a content hash that
    differs between seeds, or an id twice within one seed, is refused."""
    from conformance.bundle_write import _merge_keys

    keys = {}
    # 2 operators: tasks 0,1 are seed A, tasks 2,3 seed B
    assert _merge_keys(keys, 3, [("Op-1/x/aaaaaa", "h1", True), ("Op-1/y/bbbbbb", "h2", False)], 2) == 1
    assert _merge_keys(keys, 1, [("Op-1/x/aaaaaa", "h1", True)], 2) == 0  # the same case: not counted again
    assert keys == {"Op-1/x/aaaaaa": "h1 1", "Op-1/y/bbbbbb": "h2 3"}
    with pytest.raises(ValueError, match="content hash h1 under one seed and hX"):
        _merge_keys(keys, 2, [("Op-1/x/aaaaaa", "hX", True)], 2)
    with pytest.raises(ValueError, match="duplicate case id Op-1/y/bbbbbb"):
        _merge_keys(keys, 2, [("Op-1/y/bbbbbb", "h2", False)], 2)  # task 2 is seed B, as task 3


def _files(root):
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


def test_several_seeds_make_one_suite_each_id_once(tmp_path):
    """generate --seed 0,1,2: one bundle holding every seed's cases; the cases no seed changes (the
    special values) once; the bytes those of write_bundle(generate_suite(ops,
    seeds)), with one worker and with two; read back with its seeds; a one-seed list is a
    one-seed bundle, byte for byte."""
    from conformance.bundle import read_bundle, read_index
    from conformance.bundle_write import write_generated_bundle
    from conformance.suite import generate_suite

    ops = ["Neg", "Sign"]
    per_seed = [generate_suite(ops, s) for s in (0, 1, 2)]
    union = {c.id: c.content_hash for s in per_seed for c in s.cases}
    n_all = sum(len(s.cases) for s in per_seed)
    assert len(union) < n_all  # some cases are the same under every seed
    shared = set.intersection(*({c.id for c in s.cases} for s in per_seed))
    assert any("special" in cid for cid in shared)  # special values: no seed changes them

    suite = generate_suite(ops, "0-2")
    assert suite.seed is None and suite.seeds == [0, 1, 2] and len(suite.cases) == len(union)
    assert [c.id for c in suite.cases[:len(per_seed[0].cases)]] == [c.id for c in per_seed[0].cases]
    ref = _files(write_bundle(suite, tmp_path / "ref"))
    for jobs in (1, 2):
        ident = write_generated_bundle(ops, [2, 1, 0], tmp_path / f"j{jobs}", jobs=jobs)
        assert _files(tmp_path / f"j{jobs}") == ref
        assert ident["n_cases"] == len(union) and ident["seed"] is None and ident["seeds"] == [0, 1, 2]
    manifest = json.loads((tmp_path / "j1" / "manifest.json").read_text())
    assert manifest["seed"] is None and manifest["seeds"] == [0, 1, 2]
    assert sorted(e["id"] for e in manifest["cases"]) == sorted(union)
    identity, refs = read_index(tmp_path / "j1")
    assert identity["seeds"] == [0, 1, 2] and identity["seed"] is None and identity["n_cases"] == len(union)
    assert identity["content_hash"] == suite.content_hash
    back = read_bundle(tmp_path / "j1")
    assert back.seeds == [0, 1, 2] and back.identity()["seeds"] == [0, 1, 2]
    assert {c.id: c.content_hash for c in back.cases} == union

    write_generated_bundle(ops, [1], tmp_path / "one")
    write_generated_bundle(ops, 1, tmp_path / "int")
    assert _files(tmp_path / "one") == _files(tmp_path / "int")
    assert "seeds" not in json.loads((tmp_path / "one" / "manifest.json").read_text())


@pytest.mark.parametrize("chunk", [1, 3, 8192])
def test_suite_hash_sorted_in_chunks_is_the_whole_sort(chunk):
    """The suite hash sorted a chunk at a time and merged (bounded memory) is sha256 over every
    ``id\\0hash`` line sorted at once, and finds the id two cases share."""
    import hashlib
    import random

    from conformance.bundle import suite_hash

    rng = random.Random(chunk)
    ids = ["Relu_%d" % rng.randrange(40) for _ in range(25)] + ["é", "a\x00b", "Z"]
    keys = [f"{cid}\0{rng.getrandbits(64):016x}".encode() for cid in ids]
    want = hashlib.sha256(b"".join(k + b"\n" for k in sorted(keys))).hexdigest()
    got, dup = suite_hash(len(keys), keys.__getitem__, chunk=chunk)
    assert got == want and dup is not None and ids.count(dup) > 1
    unique = list(dict.fromkeys(ids))
    keys = [f"{cid}\0h".encode() for cid in unique]
    assert suite_hash(len(keys), keys.__getitem__, chunk=chunk)[1] is None
