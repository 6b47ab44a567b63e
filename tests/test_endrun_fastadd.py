"""CaseStore.add's fast path (a record as the runner writes it) stores what case_row gives: the page's
case data is the same as through case_row for records with every kind of tag value."""

import json

from conformance.reports.casedata import CaseStore, case_row


def _records():
    vals = ["a", "", 1, True, 1.0, 0.0, -0.0, None, 2**60, float("nan"), [1, 2], {"x": 1}, "\u2013", False, 0,
            # lists, looked up by their items where those are texts and ints (casedata._list_key): no two of
            # these may share a text, though some are equal as Python values
            [1.0, 2.0], [True, 2], ["1", 2], [1, "2"], [], [[1], 2], [1, 2], [0.0], [-0.0], ["a"], "['a']",
            # more floats and lists that hold them: equal as Python values, apart as texts
            2.5, -2.5, float("inf"), float("-inf"), 1e-300, [0.5, "a"], [1, 1.0], [1.0, 1], [None], [False],
            [float("nan")], [float("inf")], [2.5], [True], [1]]
    out = []
    for k, v in enumerate(vals * 3):
        passed = k % 3 != 1
        out.append({
            "id": f"Op{k % 4}/case{k:03d}", "op": f"Op{k % 4}", "domain": "com.x" if k % 5 == 0 else "",
            "since_version": 13, "opset": [17, None, "x", 2**60][k % 4],
            "tags": {"dtype": [v, "float32"][k % 2], "axis": v, "opset": k % 2, "params": v, "t": v,
                     **({"outputs": v} if k % 2 else {})},
            "outcome": "pass" if passed else ["fail", "error", "skip"][k % 3],
            "message": "" if passed else f"m{k % 2}", "phase": "compare" if k % 2 else None,
            "outputs": [{"name": "Y", "passed": passed or k % 2 == 0, "ratio": [0.5, float("inf"), 0.0, 3][k % 4],
                         "max_abs_err": 0.1, "worst_index": [0], "expected_at_worst": 1.0, "actual_at_worst": 1.5,
                         "reason": "" if passed else "r", "tolerance": {"atol": 0.01, "rtol": 0.001}},
                        {"name": 7, "passed": True, "ratio": True}],
            "expect_error": "bad" if k == 4 else None, "duration_s": [0.01, None, float("inf"), True][k % 4],
            **({"detail": {"inputs": [], "outputs": []}} if k % 3 == 2 else {}),
        })
    out.append({"id": "odd", "op": "Op1", "tags": ["not a dict"], "outcome": "fail"})
    out.append({"id": "odd2", "op": "Op1", "tags": {}, "outputs": None, "outcome": "pass"})
    return out


def _page(store):
    return json.loads("".join(store.pieces({}, None, None, None, None)))


def test_fast_add_equals_case_row():
    recs = _records()
    fast = CaseStore(detail_at=lambda i: recs[i].get("detail"))
    slow = CaseStore(detail_at=lambda i: recs[i].get("detail"))
    for r in recs:
        fast.add(r)
        slow._add_row(r, case_row(r))
    assert json.dumps(_page(fast)) == json.dumps(_page(slow))
    assert {k: list(v) for k, v in fast.ratios.items()} == {k: list(v) for k, v in slow.ratios.items()}
    assert fast.undetailed == slow.undetailed
    assert [fast.outcome(i) for i in range(fast.n)] == [slow.outcome(i) for i in range(slow.n)]
