"""The report's case store at the end of a run (issue 30): its per-case columns wait in a scratch
file, read back in the page's order, and the page and the aggregates are what they were.

- a store whose cases span many of its blocks on disk writes the same case data as one whose
  cases fit one block, and the same as :func:`case_data` of the records;
- the aggregates counted a kind of case at a time (``SlimCases.grouped``) equal those counted a
  case at a time;
- what the store keeps in memory grows by a few bytes a case (tracemalloc, 1,000 and 4,000
  cases), where it was about 145 bytes: its columns are on disk;
- its scratch file has no name in the output directory.
"""

from __future__ import annotations

import io
import json
import math
import os
import tracemalloc

import pytest

from conformance.forked import can_fork
from conformance.reports import casedata, html
from conformance.reports.casedata import CaseStore, case_data
from conformance.reports.common import summarize
from conformance.reports.families import family_summary, op_families
from conformance.reports.html import top_problems


def _records(n: int) -> list[dict]:
    """Records of varied shape: outcomes, operators in two domains, tag key sets in different
    orders, odd numbers, non-ASCII ids and messages, details on some failures."""
    out = []
    outcomes = ["pass", "pass", "fail", "error", "pass", "skip", "xfail", "weird"]
    for i in range(n):
        oc = outcomes[i % len(outcomes)]
        op = ["Add", "Relu", "Gelu", "MatMul"][(i * 7) % 4]
        domain = "com.microsoft" if op == "Gelu" and i % 3 == 0 else ""
        tags = {"dtype": ["float32", "float16", "int64"][i % 3], "shape": [i % 5, 2]}
        if i % 4 == 0:
            tags = {"broadcast": bool(i % 8), **tags, "rank": i % 3}
        rec = {
            "id": f"{op}/case_{(i * 37) % n:05d}_é" + ("x" * (i % 3)),
            "op": op, "domain": domain, "outcome": oc,
            "message": "" if oc == "pass" else f"{i % 5} of 8 element(s) differ ✗",
            "phase": "" if oc == "pass" else "compare",
            "opset": None if i % 97 == 0 else 21, "since_version": 13 if i % 89 else "13",
            "duration_s": float("nan") if i % 101 == 0 else 0.001 * (i % 13),
            "expect_error": "shape" if i % 53 == 0 else None,
            "tags": tags,
            "outputs": [{"name": "Y", "passed": oc == "pass", "ratio": (i % 10) / 10.0,
                         "max_abs_err": 1e-3 * (i % 4), "tolerance": {"atol": 1e-5, "rtol": 1e-3},
                         "reason": "" if oc == "pass" else "mismatch",
                         "worst_index": None if i % 7 == 0 else [i % 3, 0],
                         "expected_at_worst": 1.0, "actual_at_worst": math.inf if i % 11 == 0 else 1.5}],
        }
        if oc in ("fail", "error") and i % 2:
            rec["detail"] = {"inputs": [["X", 1, [i % 5, 2], 0, 1]], "outputs": [["Y", 1, 1]],
                             "attributes": {"alpha": 0.5 + (i % 3)}}
        out.append(rec)
    return out


def _store(records, **kw) -> CaseStore:
    return CaseStore(records, detail_at=lambda i: records[i].get("detail"), id_at=lambda i: records[i]["id"], **kw)


def test_many_blocks_on_disk_write_the_same_case_data(monkeypatch):
    records = _records(500)
    fams = {"Add": "elementwise", "Relu": "activation", "com.microsoft:Gelu": "activation"}
    one = "".join(_store(records).pieces(fams, {"bundle": "b"}, {}))
    monkeypatch.setattr(casedata, "SPILL_BLOCK", 7)
    monkeypatch.setattr(casedata, "_CHUNK", 5)  # pieces of a few cases: the joins between them
    many = _store(records)
    assert "".join(many.pieces(fams, {"bundle": "b"}, {})) == one
    # the store that keeps the ids (the report command's) too
    kept = CaseStore(records, detail_at=lambda i: records[i].get("detail"))
    assert "".join(kept.pieces(fams, {"bundle": "b"}, {})) == one
    assert list(kept.slim().ids()) == [r["id"] for r in records]
    assert [kept.id(i) for i in (0, 7, 499)] == [records[i]["id"] for i in (0, 7, 499)]
    assert json.loads(one)["n"] == 500


def test_case_data_of_the_records_is_the_stores(monkeypatch):
    records = _records(60)
    doc = {"cases": records, "run": {}, "suite": {}}
    want = case_data(doc)
    monkeypatch.setattr(casedata, "SPILL_BLOCK", 4)
    assert case_data(doc) == want


@pytest.mark.parametrize("chunk", [4096, 7])
def test_aggregates_a_kind_of_case_at_a_time_equal_a_case_at_a_time(monkeypatch, chunk):
    monkeypatch.setattr(casedata, "_CHUNK", chunk)
    records = _records(400)
    store = _store(records)
    slim = store.slim()
    each = list(slim)  # a plain list: counted a case at a time
    assert sum(k for _, k in slim.grouped()) == len(records)
    fams = op_families({"cases": each})
    assert op_families({"cases": slim}) == fams
    assert summarize(slim) == summarize(each)
    assert family_summary(slim, fams) == family_summary(each, fams)
    assert top_problems(slim) == top_problems(each)
    assert [store.outcome(i) for i in range(len(records))] == [r["outcome"] for r in records]


def _held_bytes(n: int, tmp_path) -> int:
    records = _records(n)
    for r in records:
        r.pop("detail", None)
        r["message"] = r["message"] and "differ"  # texts interned once, as a suite's repeat
        r["outputs"][0]["ratio"] = None  # no accuracy ratio (8 bytes an output, kept)
    tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        store = CaseStore(detail_at=lambda i: None, id_at=lambda i: records[i]["id"], scratch_dir=tmp_path)
        for r in records:
            store.add(r)
        store._flush()
        held = tracemalloc.get_traced_memory()[0] - before
    finally:
        tracemalloc.stop()
    del store
    return held


def test_the_store_holds_a_few_bytes_a_case(tmp_path):
    small, large = _held_bytes(1000, tmp_path), _held_bytes(4000, tmp_path)
    per_case = (large - small) / 3000
    assert per_case < 16, f"the store holds {per_case:.1f} bytes a case (its columns belong on disk)"


@pytest.mark.skipif(os.name != "posix", reason="an open file without a name: POSIX")
def test_the_scratch_file_has_no_name(tmp_path):
    store = _store(_records(50), scratch_dir=tmp_path)
    assert "".join(store.pieces())
    assert list(tmp_path.iterdir()) == []
    store.close()


def _counted_forks(monkeypatch, child: str) -> list:
    """``os.fork`` counted in the list returned (in the parent), raising EAGAIN where ``child`` is
    "cannot fork"."""
    forks = []
    real_fork = os.fork

    def fork():
        forks.append(1)
        if child == "cannot fork":
            raise BlockingIOError(11, "Resource temporarily unavailable")
        return real_fork()

    monkeypatch.setattr(os, "fork", fork)
    return forks


@pytest.mark.skipif(not can_fork(), reason="the page is written by two processes on Linux only")
@pytest.mark.parametrize("child", ["works", "fails", "cannot fork"])
def test_a_page_written_by_two_processes_is_the_page(monkeypatch, tmp_path, child):
    """write_html with the case data written by a forked child (a large page) gives the bytes of
    render_html, and so does one whose child fails or cannot be forked (the parent writes the case
    data itself); no scratch file stays beside the page."""
    records = _records(300)
    doc = {"format": "onnx-conformance-results/1", "cases": records, "run": {}, "suite": {}, "backend": {}}
    want = html.render_html(dict(doc, cases=[dict(r) for r in records]), manifest={})
    monkeypatch.setattr(html, "FORK_MIN_CASES", 100)
    forks = _counted_forks(monkeypatch, child)
    store = _store(records)
    if child == "fails":  # the child's case data raises; the parent's is whole
        parent, pieces = os.getpid(), store.pieces

        def failing(*a, **kw):
            for k, piece in enumerate(pieces(*a, **kw)):
                if os.getpid() != parent and k == 3:
                    raise OSError("the child's disk is full")
                yield piece

        monkeypatch.setattr(store, "pieces", failing)
    out = html.write_html(dict(doc, cases=store.slim()), tmp_path / "report.html", manifest={}, store=store)
    assert len(forks) == 1, "the page of a store over FORK_MIN_CASES was not written by two processes"
    assert out.read_bytes() == want.encode("utf-8")
    assert [p.name for p in tmp_path.iterdir()] == ["report.html"]


def _page_of(store: CaseStore) -> str:
    return "".join(store.pieces({"Add": "elementwise", "Relu": "activation"}, {"bundle": "b"}, {}))


@pytest.mark.parametrize("keep_ids", [False, True])
@pytest.mark.parametrize("block", [2048, 7])
def test_two_stores_extended_are_the_store_of_all(monkeypatch, keep_ids, block):
    """A store of the first k records extended by (CaseStore.extend) the state of a store of the
    rest is the store of all of them, at every split: the page's case data, the aggregates, the
    ratios, the outcomes; each interned value numbered where one store would number it (and with
    blocks of 7 cases: the texts merged a block at a time)."""
    monkeypatch.setattr(casedata, "SPILL_BLOCK", block)
    records = _records(240)

    def make(recs, base=0):
        if keep_ids:
            return CaseStore(recs, detail_at=lambda i: recs[i].get("detail"))
        return CaseStore(recs, detail_at=lambda i: records[base + i].get("detail"),
                         id_at=lambda i: records[base + i]["id"])

    one = make(records)
    want = _page_of(one)
    for k in (0, 1, 97, 239, 240):
        first, rest = make(records[:k]), make(records[k:], k)
        first._detail_at = one._detail_at
        first._id_at = one._id_at
        spool = io.BytesIO(b"x")  # the texts wherever the file stands
        spool.seek(1)
        first.extend(rest.state(spool), spool)
        assert first.n == len(records)
        assert _page_of(first) == want, f"split at {k}"
        assert summarize(first.slim()) == summarize(one.slim())
        assert {k2: list(v) for k2, v in first.ratios.items()} == {k2: list(v) for k2, v in one.ratios.items()}
        assert list(first.ratios) == list(one.ratios)  # the (operator, dtype) keys in the order first seen
        assert [first.outcome(i) for i in range(len(records))] == [r["outcome"] for r in records]
        assert first.undetailed == one.undetailed


def test_a_store_that_keeps_ids_is_not_extended_by_one_that_does_not():
    records = _records(20)
    with pytest.raises(ValueError, match="ids"):
        spool = io.BytesIO()
        CaseStore(records[:10], detail_at=lambda i: None).extend(_store(records[10:]).state(spool), spool)


def _results_file(tmp_path, records) -> str:
    from conformance.results import FORMAT, write_results

    return str(write_results({"format": FORMAT, "backend": {"backend": "x"}, "run": {}, "suite": {},
                              "cases": records}, tmp_path / "results.json"))


@pytest.mark.skipif(not can_fork(), reason="a results file is read by two processes on Linux only")
@pytest.mark.parametrize("child", ["works", "fails", "cannot fork"])
def test_a_results_file_read_by_two_processes_is_the_store_of_one(monkeypatch, tmp_path, child):
    """read_results_store of a file over SPLIT_MIN_BYTES (two processes) gives the store, the details
    and the page that one process gives; a child that fails leaves its half to the parent, and so
    does a fork that fails (EAGAIN)."""
    records = _records(300)
    path = _results_file(tmp_path, records)
    monkeypatch.setattr(casedata, "SPLIT_MIN_BYTES", 1 << 40)
    doc1, one = casedata.read_results_store(path)
    monkeypatch.setattr(casedata, "SPLIT_MIN_BYTES", 0)
    forks = _counted_forks(monkeypatch, child)
    if child == "fails":
        parent, state = os.getpid(), CaseStore.state

        def failing(self, f):
            if os.getpid() != parent:
                raise OSError("the child's disk is full")
            return state(self, f)

        monkeypatch.setattr(CaseStore, "state", failing)
    doc2, two = casedata.read_results_store(path)
    assert forks, "a file over SPLIT_MIN_BYTES was not read by two processes"
    assert doc2 == doc1 and two.n == one.n == len(records)
    assert _page_of(two) == _page_of(one)
    assert [two.id(i) for i in range(two.n)] == [r["id"] for r in records]
    assert [p.name for p in tmp_path.iterdir()] == ["results.json"]


@pytest.mark.skipif(not can_fork(), reason="a results file is read by two processes on Linux only")
def test_a_damaged_line_in_the_second_half_is_an_error_not_a_shorter_report(monkeypatch, tmp_path):
    from conformance.results import ResultsError

    records = _records(200)
    path = _results_file(tmp_path, records)
    lines = open(path, "rb").read().split(b"\n")
    lines[180] = lines[180][:40]  # a case line cut short, well after the middle
    open(path, "wb").write(b"\n".join(lines))
    monkeypatch.setattr(casedata, "SPLIT_MIN_BYTES", 0)
    with pytest.raises(ResultsError, match="not valid JSON"):
        casedata.read_results_store(path)
