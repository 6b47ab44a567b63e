"""The end of a run made cheaper (issue 30) gives the same bytes: CaseStore.add's plans per tag key
set against case_row's path on records whose tag values repeat with every type, the page order's
front coding against a character-by-character one, a compact coverage decorated once against
decorated on every read, and the matrices' cell links against jinja's urlencode."""

import json
import random

import jinja2
import pytest

from conformance.coverage import CompactOps
from conformance.reports.casedata import CaseStore, _shared_prefixes, case_row
from conformance.reports.html import _urlencode


def _records(n=600, seed=3):
    rnd = random.Random(seed)
    vals = ["a", "b", "", 1, 2, 0, True, False, 1.0, 0.0, -0.0, 2.5, None, [1], "1", "\u2013", 2**60]
    keysets = [("dtype", "axis", "opset", "shape"), ("dtype", "outputs", "params", "shape", "x"),
               ("shape", "training_mode"), ()]
    out = []
    for k in range(n):
        keys = keysets[rnd.randrange(len(keysets))]
        plain = rnd.random() < 0.7  # most records: every value a text or an int
        tags = {key: (rnd.choice(["a", "b", 1, 2, 0, "1"]) if plain else rnd.choice(vals)) for key in keys}
        passed = rnd.random() < 0.7
        out.append({"id": f"Op{k % 3}/c{rnd.randrange(50):03d}", "op": f"Op{k % 3}", "domain": "",
                    "since_version": 13, "opset": rnd.choice([17, 18, None, "x", True]), "tags": tags,
                    "outcome": "pass" if passed else rnd.choice(["fail", "error"]), "message": "" if passed else "m",
                    "phase": "compare", "expect_error": None, "duration_s": rnd.choice([0.01, 0.0, -0.0, 1e306, None]),
                    "outputs": [{"name": "Y", "passed": passed, "ratio": rnd.choice([0.0, -0.0, 0.25, float("inf")]),
                                 "tolerance": {"atol": 0.1, "rtol": 0.0}}]})
    return out


def _page(store):
    return "".join(store.pieces({}, None, None, None, None))


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_planned_add_equals_case_row(seed):
    recs = _records(seed=seed)
    fast = CaseStore(detail_at=lambda i: None)
    slow = CaseStore(detail_at=lambda i: None)
    for r in recs:
        fast.add(r)
        slow._add_row(r, case_row(r))
    assert _page(fast) == _page(slow)
    assert {k: list(v) for k, v in fast.ratios.items()} == {k: list(v) for k, v in slow.ratios.items()}


def _prefixes(prev, ids):
    out = []
    for cid in ids:
        p = 0
        while p < min(len(prev), len(cid)) and prev[p] == cid[p]:
            p += 1
        out.append(p)
        prev = cid
    return out


def test_shared_prefixes():
    rnd = random.Random(5)
    for _ in range(500):
        ids = ["".join(rnd.choice("ab/\x00") for _ in range(rnd.randrange(6))) for _ in range(rnd.randrange(1, 8))]
        if rnd.random() < 0.2:
            ids.append("\u00e9" + ids[0])  # not ASCII: compared one by one
        prev = "".join(rnd.choice("ab") for _ in range(rnd.randrange(4)))
        assert _shared_prefixes(prev, ids) == _prefixes(prev, ids)
    assert _shared_prefixes("x", []) == []


def test_compact_ops_decorated_once():
    calls = []

    def decorate(key, entry):
        calls.append(key)
        for v, e in entry["versions"].items():
            e["outcomes"] = {"c": {"pass": len(key)}}

    ops, fresh = CompactOps(), CompactOps()
    for o in (ops, fresh):
        o.put("A", {"versions": {"1": {"missing": [{"combination": "x"}], "covered": ["c"]}}, "source": "s"})
        o.put("B", {"versions": {}, "source": "t"})
        o.decorate = decorate
    text = {k: ops.json_text(k) for k in ops}
    assert sorted(calls) == ["A", "B"]
    assert {k: ops[k] for k in ops} == {k: json.loads(text[k]) for k in ops}
    assert sorted(calls) == ["A", "B"]  # read again: not decorated again
    assert {k: ops[k] for k in ops} == {k: fresh[k] for k in fresh}
    ops.put("A", {"versions": {"2": {"missing": [], "covered": []}}, "source": "s2"})  # replaced: decorated afresh
    assert ops["A"]["versions"]["2"]["outcomes"] == {"c": {"pass": 1}}
    ops.decorate = None
    assert "outcomes" not in ops["B"]["versions"].get("1", {}) and ops["A"]["source"] == "s2"


def test_urlencode_as_jinja():
    for q in ({"op": "a b/c", "dtype": "float16", "oc": "all"}, {"fam": "x&y", "f": "axis", "v": 1, "oc": "all"},
              {"op": "\u00e9", "v": None}, [("a", "b")]):
        for _ in range(2):  # the second time from the memo
            assert _urlencode(q) == jinja2.filters.do_urlencode(q)


def test_number_pattern_as_before():
    import re

    from conformance.reports import common, families, html

    before = re.compile(r"[-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?")
    rnd = random.Random(7)
    texts = ["".join(rnd.choice("-+.eE5 a1.0") for _ in range(rnd.randrange(40))) for _ in range(5000)]
    texts += ["shape (1, 2.5e-3) -7 +.5 1.e5 .e5 -.x 3.", "", "no digits"]
    assert families.NUMBER is html.NUMBER is common.NUMBER  # one pattern for both
    for pat in (common.NUMBER,):
        for t in texts:
            assert pat.sub("#", t) == before.sub("#", t) and pat.split(t) == before.split(t), t
