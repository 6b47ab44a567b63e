"""A worker's batch of case references read together (``CaseRefs.refs``, ``isolation._pairs``):
the same references, entries and errors as reading them one at a time."""

import json

import pytest

from conformance.bundle import BundleError, read_index
from conformance.bundle_write import write_bundle


def _same(a, b):
    assert type(a) is type(b)
    for k in a.__slots__:
        assert getattr(a, k) == getattr(b, k), k


@pytest.mark.parametrize("indices", [[0, 1, 2, 3, 4], [1, 2], [0, 2, 4], [4, 3, 0], [3], []])
@pytest.mark.parametrize("chunk", [1 << 20, 1])
def test_refs_are_the_items(toy_suite, tmp_path, indices, chunk):
    out = write_bundle(toy_suite, tmp_path / "b")
    refs = read_index(out)[1]
    assert len(refs) == 5
    got = refs.refs(indices, chunk=chunk)
    assert len(got) == len(indices)
    for i, r in zip(indices, got):
        _same(r, refs[i])
        assert r.entry() == refs.entry(i)
        a, b = r.load_for_run(), refs[i].load_for_run()  # from the entry read with the batch
        assert a.id == b.id and a.model_bytes == b.model_bytes
    assert [r.id for r in refs[1:4]] == [refs.id(i) for i in (1, 2, 3)]
    assert [r.id for r in refs.refs([-1])] == [refs.id(4)]
    with pytest.raises(IndexError):
        refs.refs([0, 5])


def test_refs_of_a_manifest_kept_as_text(toy_suite, tmp_path):
    """A manifest in another layout (entries kept as text, no byte spans) gives the same refs."""
    out = write_bundle(toy_suite, tmp_path / "b")
    m = json.loads((out / "manifest.json").read_text())
    (out / "manifest.json").write_text(json.dumps(dict(reversed(list(m.items()))), indent=3))
    refs = read_index(out)[1]
    for i, r in zip(range(5), refs.refs(range(5))):
        _same(r, refs[i])
        assert r.load_for_run().id == refs.id(i)


def test_refs_of_an_edited_manifest_raise(toy_suite, tmp_path):
    out = write_bundle(toy_suite, tmp_path / "b")
    refs = read_index(out)[1]
    p = out / "manifest.json"
    p.write_text(p.read_text() + " ")
    with pytest.raises(BundleError, match="replaced or edited since"):
        refs.refs([0, 1])


def test_worker_pairs(toy_suite, tmp_path):
    """``_pairs``: references read together; any other sequence, or pairs given whole, as before;
    an edited manifest raises where it did (each case read on its own)."""
    from conformance.isolation import _load, _pairs

    out = write_bundle(toy_suite, tmp_path / "b")
    refs = read_index(out)[1]
    pairs = _pairs([1, 2, 3], refs)
    assert [i for i, _r in pairs] == [1, 2, 3]
    for i, r in pairs:
        _same(r, refs[i])
        j, case, recorded, problem = _load((i, r), None)
        assert (j, case.id, recorded, problem) == (i, refs.id(i), True, None)
    plain = [refs[0], refs[1]]
    assert [r.id for _i, r in _pairs([1, 0], plain)] == [refs.id(1), refs.id(0)]
    given = [(0, toy_suite.cases[0])]
    assert _pairs(given, None) is given
    p = out / "manifest.json"
    p.write_text(p.read_text() + " ")
    with pytest.raises(BundleError, match="replaced or edited since"):
        _pairs([0, 1], refs)


def test_levelled_and_resumed_cases_are_read_a_batch_at_a_time(tmp_path):
    """A batch of layer-pattern cases at several levels, and a resumed run's remaining cases,
    give what taking them one at a time gives."""
    from conformance.bundle import read_index
    from conformance.bundle_write import write_generated_bundle
    from conformance.execute import _Subset
    from conformance.levels import LevelledRefs

    write_generated_bundle(["Gelu", "Swish.mul_sigmoid"], 0, tmp_path / "b")
    _, refs = read_index(tmp_path / "b")
    cases = LevelledRefs(refs, ["disable", "all"])
    assert len(cases) > len(refs)
    batch = list(range(len(cases) - 6, len(cases))) + [0, 1]
    got, want = cases.refs(batch), [cases[j] for j in batch]
    assert [(type(r), r.id, getattr(r, "level", None)) for r in got] == \
        [(type(r), r.id, getattr(r, "level", None)) for r in want]
    assert {getattr(r, "level", None) for r in got} >= {"disable", "all"}
    sub = _Subset(cases, [3, 4, len(cases) - 1])
    assert [r.id for r in sub.refs([0, 1, 2])] == [sub[i].id for i in range(3)]
