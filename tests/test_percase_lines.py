"""The result's line of results.jsonl made in the worker (issue 30, "Per-case cost"): the same
bytes the parent wrote from the record (NaN, infinities, non-ASCII text and lone surrogates in
messages, exponent floats), for the workers' results and for those the parent makes (a crash)."""

from __future__ import annotations

import re

import faulty

from conformance.isolation import record_line, run_isolated
from conformance.jsonsafe import written
from conformance.runner import run_cases

_DURATION = re.compile(rb'"duration_s":[-+0-9.eE]+')


def _parent_line(rec: dict) -> bytes:
    """The line as the parent wrote it before the workers made it (execute._run's ``keep``)."""
    return written(rec, separators=(",", ":"))[1].encode() + b"\n"


def _no_duration(line: bytes) -> bytes:
    return _DURATION.sub(b'"duration_s":0', line)


def test_worker_lines_are_the_parent_bytes(toy_suite):
    cases = toy_suite.cases * 6  # more cases than the awkward backend's outputs and messages
    local = [r.to_json() for r in run_cases(cases, faulty.awkward())]
    got: dict[int, tuple[bytes, str]] = {}
    run_isolated(cases, faulty.awkward(), jobs=1, collect=False,
                 on_line=lambda i, line, outcome: got.__setitem__(i, (line, outcome)))
    assert sorted(got) == list(range(len(cases)))
    for i, rec in enumerate(local):
        line, outcome = got[i]
        assert _no_duration(line) == _no_duration(_parent_line(rec))
        assert outcome == rec["outcome"]
        assert line.endswith(b"\n") and line.count(b"\n") == 1
    text = b"".join(line for line, _ in got.values())
    assert b'"NaN"' in text and b'"-Infinity"' in text and b'"Infinity"' in text  # the awkward values were met
    assert b"\\u00e9" in text and b"\\ufffd" in text  # non-ASCII escaped, lone surrogates replaced


def test_lines_beside_records_are_the_same_bytes(toy_suite):
    """With ``on_record`` as well the parent makes the lines from the records: the same bytes."""
    cases = toy_suite.cases * 6
    lines: dict[int, bytes] = {}
    recs: dict[int, dict] = {}
    run_isolated(cases, faulty.awkward(), jobs=1, collect=False,
                 on_line=lambda i, line, outcome: lines.__setitem__(i, line),
                 on_record=lambda i, rec: recs.__setitem__(i, rec))
    assert sorted(lines) == sorted(recs) == list(range(len(cases)))
    for i in recs:
        assert lines[i] == _parent_line(recs[i])


def test_record_line_exponent_floats_and_awkward_text():
    rec = {"id": "x", "outcome": "fail", "message": "na\u00efve \udc80 \U0001F600",
           "detail": {"err": 1e-05, "tol": 1.5e-7, "big": 1e300, "nan": float("nan"),
                      "inf": float("inf"), "-inf": float("-inf"), "int": 2**70}}
    value, line = record_line(rec)
    assert line == _parent_line(rec)
    assert b'"err":1e-05' in line and b'"tol":1.5e-07' in line and b'"nan":"NaN"' in line
    assert b'"-inf":"-Infinity"' in line and b"\\ud83d\\ude00" in line and b"\\ufffd" in line
    assert value["detail"]["nan"] == "NaN"


def test_a_crash_gets_the_parent_made_line(toy_suite):
    """A case whose worker dies gets its line from the parent; the other cases' from the workers."""
    cases = toy_suite.cases
    got: dict[int, tuple[bytes, str]] = {}
    run_isolated(cases, faulty.aborting(), jobs=1, collect=False,
                 on_line=lambda i, line, outcome: got.__setitem__(i, (line, outcome)))
    assert sorted(got) == list(range(len(cases)))
    outcomes = [o for _l, o in got.values()]
    assert "crash" in outcomes
    for line, outcome in got.values():
        assert f'"outcome":"{outcome}"'.encode() in line and line.endswith(b"\n")
