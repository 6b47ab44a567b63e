"""A worker's batches (issue 30, per-case cost): as many cases as took ``BATCH_TARGET_S`` of late,
from ``MAX_BATCH`` up to ``MAX_BATCH_CHEAP``; after a crash, each case of the crashed operator
version alone in its batch, so that a second crash there loses no other case's attempt."""

from __future__ import annotations

import faulty
import pytest

from conformance import isolation
from conformance.isolation import MAX_BATCH, MAX_BATCH_CHEAP, run_isolated


@pytest.fixture
def sent(monkeypatch):
    """The batches the parent sends (lists of case indices), and the workers it starts, in order."""
    batches: list[list[int]] = []
    started: list[int] = []
    send, init = isolation._Worker.send, isolation._Worker.__init__

    def spy_send(self, indices, cases):
        batches.append(list(indices))
        return send(self, indices, cases)

    def spy_init(self, *a, **k):
        started.append(1)
        return init(self, *a, **k)

    monkeypatch.setattr(isolation._Worker, "send", spy_send)
    monkeypatch.setattr(isolation._Worker, "__init__", spy_init)
    return batches, started


def test_cheap_cases_go_in_larger_batches(toy_suite, sent):
    batches, _ = sent
    cases = toy_suite.cases * 100  # 500 cases of well under a millisecond
    results = run_isolated(cases, faulty.slow("0"), jobs=1)
    assert [r.id for r in results] == [c.id for c in cases]
    assert all(r.outcome == "pass" for r in results if not r.tags.get("error"))
    assert len(batches[0]) == MAX_BATCH
    assert MAX_BATCH < max(len(b) for b in batches) == MAX_BATCH_CHEAP
    assert sorted(i for b in batches for i in b) == list(range(len(cases)))


def test_slow_cases_stay_in_batches_of_the_base_size(toy_suite, sent):
    batches, _ = sent
    cases = toy_suite.cases * 10  # 50 cases of ~20 ms: a batch of 16 is already 0.3 s
    run_isolated(cases, faulty.slow("0.02"), jobs=1)
    assert max(len(b) for b in batches) == MAX_BATCH
    assert sorted(i for b in batches for i in b) == list(range(len(cases)))


def test_after_a_crash_its_operator_version_runs_a_case_a_batch(toy_suite, sent):
    """40 crashes among 200 cases of one operator version: the first crash's batch leaves suspects
    (each run again in a worker of its own); after it every case goes alone, so each later crash
    costs one worker and no suspect."""
    batches, started = sent
    cases = toy_suite.cases * 40
    results = run_isolated(cases, faulty.aborting(), jobs=1, timeout=10.0)
    assert [r.id for r in results] == [c.id for c in cases]
    crashed = [r for r in results if r.outcome == "crash"]
    assert len(crashed) == 40 and all(r.tags["dtype"] == "float16" for r in crashed)
    assert all(r.outcome == "pass" for r in results if r.tags["dtype"] != "float16" or r.tags.get("error"))
    first = next(k for k, b in enumerate(batches) if cases[b[0]].tags["dtype"] == "float16" or
                 any(cases[i].tags["dtype"] == "float16" and not cases[i].tags.get("error") for i in b))
    # the first worker, one replacing each crashed one, one for each suspect of the first crash
    assert len(started) <= 1 + 40 + (MAX_BATCH - 1), len(started)
    assert all(len(b) == 1 for b in batches[first + 2:]), [len(b) for b in batches]  # its queued batch aside


def test_other_operator_versions_keep_their_batches(toy_suite, sent):
    """A crash marks its own operator version, not the others: a different version's cases after it
    still go in batches."""
    import dataclasses

    batches, _ = sent
    other = [dataclasses.replace(c, since_version=6) for c in toy_suite.cases if c.tags["dtype"] != "float16"]
    cases = toy_suite.cases + other * 30
    results = run_isolated(cases, faulty.aborting(), jobs=1, timeout=10.0)
    assert [r.outcome for r in results].count("crash") == 1
    later = [b for b in batches if min(b) >= len(toy_suite.cases)]
    assert later and max(len(b) for b in later) > 1
