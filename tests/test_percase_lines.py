"""The result's line of results.jsonl made in the worker (issue 30, "Per-case cost"): the same
bytes the parent makes from the record (NaN, infinities, non-ASCII text and lone surrogates in
messages, exponent floats), for the workers' results and for those the parent makes (a crash);
and the value every other file's encoding (``jsonsafe.written``) gives."""

from __future__ import annotations

import json
import re

import faulty

from conformance.isolation import record_line, run_isolated
from conformance.jsonsafe import written
from conformance.runner import run_cases

_DURATION = re.compile(rb'"duration_s":[-+0-9.eE]+')


def _parent_line(rec: dict) -> bytes:
    """The line as the parent makes it from a record (execute._run's ``keep``)."""
    return record_line(rec)[1]


def _written_line(rec: dict) -> bytes:
    """``rec`` as every other file of the project writes it (``jsonsafe.written``)."""
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
        assert json.loads(_no_duration(line)) == json.loads(_no_duration(_written_line(rec)))  # the same value
        assert outcome == rec["outcome"]
        assert line.endswith(b"\n") and line.count(b"\n") == 1
    text = b"".join(line for line, _ in got.values())
    assert b'"NaN"' in text and b'"-Infinity"' in text and b'"Infinity"' in text  # the awkward values were met
    assert "\ufffd".encode() in text and b"\\udc" not in text  # lone surrogates replaced (UTF-8)
    assert b"\\u00e9" in text or "\u00e9".encode() in text  # non-ASCII text, escaped or as UTF-8


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
    assert line == _parent_line(rec) and line.endswith(b"\n") and line.count(b"\n") == 1
    back = json.loads(line)
    assert back == value == json.loads(_written_line(rec))  # every other file's value
    assert back["detail"] == {"err": 1e-05, "tol": 1.5e-7, "big": 1e300, "nan": "NaN", "inf": "Infinity",
                              "-inf": "-Infinity", "int": 2**70}
    assert back["message"] == "na\u00efve \ufffd \U0001F600"


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


def test_json_line_writes_the_value_written_gives():
    """``jsonsafe.json_line`` (orjson where the line parses back to the record) holds the value
    ``jsonsafe.written`` gives for plain and awkward records alike; awkward ones are written by it."""
    from dataclasses import dataclass

    from conformance.jsonsafe import json_line

    @dataclass
    class Point:
        x: int

    plain = {"id": "a/b", "n": 3, "f": 1e-05, "g": -0.0, "t": "na\u00efve \x7f", "none": None, "l": [[0], {}]}
    value, line = json_line(plain)
    assert value is plain and line.endswith(b"\n") and line.count(b"\n") == 1
    assert json.loads(line) == json.loads(_written_line(plain)) == plain
    for awkward in ({"x": float("nan")}, {"x": [float("-inf")], "t": "\u00e9"}, {"m": "x\udc80"}, {"big": 2**70},
                    {"t": (1, 2)}, {1: "key"}, {"e": float("inf")}, {"p": Point(1)}):
        value, line = json_line(awkward)
        assert json.loads(line) == json.loads(_written_line(awkward)) == value, awkward  # the value, made safe
        assert json_line(json.loads(line))[1] == line  # read back and written again: the same bytes
