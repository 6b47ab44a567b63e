"""What the runner does around each case, made cheaper (issue 30, "Per-case cost"), still does
the same: the records' bytes, the messages from a worker, a damaged case refused.  Speed itself
is measured in bench/bench_runner.py, not here."""

from __future__ import annotations

import json
import multiprocessing as mp
import pickle
import threading

import faulty
import numpy as np
import pytest

from conformance.bundle import BundleError, read_index
from conformance.bundle_write import write_bundle
from conformance.isolation import _Worker, run_isolated
from conformance.jsonsafe import written
from conformance.runner import run_cases


def _lines(records) -> list[bytes]:
    """Each record as the parent writes it to results.jsonl, ``duration_s`` left out."""
    out = []
    for rec in records:
        rec = {k: v for k, v in rec.items() if k != "duration_s"}
        out.append(written(rec, separators=(",", ":"))[1].encode())
    return out


def test_isolated_records_are_the_in_process_bytes(toy_suite):
    """Through the worker's pipe (one read holding many messages), the records of NaN, infinite,
    wrong and failing outputs and of awkward messages are the bytes an in-process run gives."""
    cases = toy_suite.cases * 6  # more cases than the awkward backend's outputs and messages
    local = [r.to_json() for r in run_cases(cases, faulty.awkward())]
    seen: list[dict] = []
    run_isolated(cases, faulty.awkward(), jobs=1, collect=False, on_record=lambda i, rec: seen.append(rec))
    assert _lines(seen) == _lines(local)
    text = b"\n".join(_lines(seen))
    assert b'"NaN"' in text and b'"-Infinity"' in text and b"\\ud" in text  # the awkward values were met


def test_a_result_that_cannot_be_pickled_is_its_case_error_alone(toy_suite, monkeypatch):
    """A worker sends a batch's results as one message; one result that cannot be pickled makes
    that case a runner internal error and leaves the others of its batch as they were."""
    import conformance.runner as runner

    cases = toy_suite.cases[:6]
    bad = cases[2].id
    judge = runner.judge_case

    def judge_case(case, backend, got):  # inherited by the forked worker
        res = judge(case, backend, got)
        if case.id == bad:
            res.to_json = lambda rec=res.to_json(): {**rec, "message": lambda: None}
        return res

    monkeypatch.setattr(runner, "judge_case", judge_case)
    seen: dict[str, dict] = {}
    run_isolated(cases, faulty.awkward(), jobs=1, collect=False,
                 on_record=lambda i, rec: seen.__setitem__(cases[i].id, rec))
    local = {r.id: r.to_json() for r in run_cases(cases, faulty.awkward())}
    assert set(seen) == set(local)
    assert seen[bad]["outcome"] == "error" and "runner internal error" in seen[bad]["message"]
    assert "pickle" in seen[bad]["message"].lower()
    others = [c.id for c in cases if c.id != bad]
    assert _lines([seen[k] for k in others]) == _lines([local[k] for k in others])


class _Reader:
    """What :meth:`_Worker.messages` needs of a worker: the parent's end of its pipe."""

    messages = _Worker.messages

    def __init__(self, conn):
        self.conn, self._buf, self._poller = conn, bytearray(), None


def test_messages_are_cut_whole_and_in_order_whatever_the_reads():
    """Batches of messages written in pieces, long ones among them, come out whole, in order and
    joined, none before its batch is complete; end-of-file is reported once the writer's end is
    closed."""
    parent, child = mp.Pipe()
    reader = _Reader(parent)
    sent = [("result", k, {"message": "x" * (k * 50_000 if k % 3 == 1 else k)}, None) for k in range(8)]
    batches = [sent[:1], sent[1:4], sent[4:5], sent[5:]]  # a worker sends a judged batch's messages as one list
    frames = b"".join(len(b).to_bytes(4, "big", signed=True) + b
                      for b in (pickle.dumps(m, pickle.HIGHEST_PROTOCOL) for m in batches))
    got: list = []
    step = 7_777  # cuts through headers and bodies alike
    for at in range(0, len(frames), step):
        child._send(frames[at:at + step])  # the raw bytes, as a worker's send_bytes writes them
        msgs, eof = reader.messages()
        assert not eof
        got += msgs
    child.close()
    msgs, eof = reader.messages()
    assert eof and msgs == []
    assert got == sent


def test_messages_from_send_and_send_bytes():
    """A worker sends results with ``send_bytes`` of a pickle and other messages with ``send``:
    both read back, whatever their size."""
    parent, child = mp.Pipe()
    reader = _Reader(parent)
    big = {"message": "y" * 300_000}
    writer = threading.Thread(target=lambda: [child.send_bytes(pickle.dumps([("result", 0, big, None)], 5)),
                                              child.send([("internal", 1, "trace", None)])])
    writer.start()
    got: list = []
    while len(got) < 2:
        parent.poll(1)
        got += reader.messages()[0]
    writer.join()
    assert got == [("result", 0, big, None), ("internal", 1, "trace", None)]


@pytest.fixture
def bundle(tmp_path, toy_suite):
    return write_bundle(toy_suite, tmp_path / "b")


@pytest.mark.parametrize("damage", ["directory", "missing", "truncated", "flipped"])
def test_a_damaged_case_file_is_still_refused(bundle, damage):
    """Read with os.read now: a file replaced by a directory or missing is a missing file, a
    truncated or edited one fails the content check."""
    _, refs = read_index(bundle)
    ref = next(r for r in refs if r.expect_error is None)
    p = bundle / ref.entry()["dir"] / "test_data_set_0" / "output_0.pb"
    data = p.read_bytes()
    if damage == "directory":
        p.unlink()
        p.mkdir()
    elif damage == "missing":
        p.unlink()
    elif damage == "truncated":
        p.write_bytes(data[:-3])
    else:
        p.write_bytes(data[:-1] + bytes([data[-1] ^ 1]))
    with pytest.raises(BundleError, match="missing file" if damage in ("directory", "missing") else
                       "not a TensorProto|does not match|content"):
        ref.load_for_run()


def test_a_large_case_file_reads_whole(tmp_path):
    """A file of several read chunks comes back whole."""
    from conformance import bundle as b

    data = np.arange(300_000, dtype=np.uint8).tobytes() + b"tail"
    (tmp_path / "f.pb").write_bytes(data)
    assert b._read_file(str(tmp_path), "f.pb") == data


def test_records_json_round_trip(toy_suite):
    """The lines written from isolated records are JSON that reads back to the record."""
    seen: list[dict] = []
    run_isolated(toy_suite.cases, faulty.awkward(), jobs=2, collect=False, on_record=lambda i, rec: seen.append(rec))
    for line in _lines(seen):
        assert isinstance(json.loads(line), dict)


@pytest.mark.parametrize("exact", [False, True])
@pytest.mark.parametrize("signed_zero", [False, True])
@pytest.mark.parametrize("a, e", [
    (np.array([1.5, -2.0, 3.25], np.float32), np.array([1.5, -2.0, 3.25], np.float32)),
    (np.array([[np.inf, 1.0], [-np.inf, 0.0]]), np.array([[np.inf, 1.0], [-np.inf, 0.0]])),
    (np.array([0.0, -0.0, 2.0]), np.array([-0.0, 0.0, 2.0])),  # equal, but the zeros' signs differ
    (np.array(7.0, np.float16), np.array(7.0, np.float16)),  # rank 0
    (np.array([1.0, np.nan]), np.array([1.0, np.nan])),  # NaN is not equal: the full path
    (np.array([1.0, 2.0]), np.array([1.0, 2.5])),
])
def test_equal_outputs_give_the_full_paths_check(a, e, exact, signed_zero):
    """compare's shortcut for outputs equal element by element gives the check the full path
    gives (every field of the record), and defers to it for a zero of the other sign."""
    from conformance.tolerance import Tolerance, _compare_float, compare

    tol = Tolerance(atol=0.0 if exact else 1e-3, rtol=0.0 if exact else 1e-3, exact=exact, signed_zero=signed_zero)
    got = compare("Y", a, e, tol).to_json()
    want = _compare_float("Y", np.asarray(a, np.float64), np.asarray(e, np.float64), tol).to_json()
    assert json.dumps(got) == json.dumps(want)
