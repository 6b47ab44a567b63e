"""Tests of the text entries StringNormalizer, StringConcat, StringSplit, RegexFullMatch and
TfIdfVectorizer (``conformance/ops/text.py``; oracles in ``conformance/reference/text.py``).

* the oracle against explicit code written independently here, on every generated value case
  (a character scanner for StringSplit, gap enumeration over index combinations for
  TfIdfVectorizer, upper-case folding for StringNormalizer, hand-labelled matches for
  RegexFullMatch) and against onnx's node tests (the spec's examples);
* kernels through ``KernelBackend``: legitimate ones pass every value case and reject every
  error case; the deliberately wrong ones fail cases the right kernel passes;
* string cases round-trip through a bundle and compare exactly; onnx.reference and onnxruntime
  disagreements are each classified with who is right.
"""

from __future__ import annotations

import itertools
import operator
import re
from collections import Counter

import numpy as np
import pytest

from conformance.backends import resolve_backend
from conformance.backends.kernel import KernelBackend
from conformance.bundle import read_bundle
from conformance.bundle_write import write_bundle
from conformance.ops import engine
from conformance.ops import text as ops_text
from conformance.reference import text as ref
from conformance.runner import run_cases
from conformance.suite import Suite
from oracle_checks import single_node_tests, sort_findings  # tests/oracle_checks.py

OPS = ("StringNormalizer", "StringConcat", "StringSplit", "RegexFullMatch", "TfIdfVectorizer")


@pytest.fixture(scope="module")
def suite():
    return [c for e in ops_text.ENTRIES for c in engine.cases(e, 0)]


@pytest.fixture(scope="module")
def value_cases(suite):
    return [c for c in suite if c.expect_error is None]


def _feeds(case):
    ds = case.datasets[0].inputs
    return {i.name: (ds[i.name] if i.name in ds else i.value) for i in case.inputs if i.present}


def _dec(v):
    if isinstance(v, bytes):
        return v.decode()
    if isinstance(v, list):
        return [_dec(u) for u in v]
    return v


def _obj(vals, shape):
    out = np.empty(len(vals), dtype=object)
    out[:] = list(vals)
    return out.reshape(shape)


# ============================================================================ independent code
def normalize_loop(x, attrs, fold=str.upper):
    """StringNormalizer by hand: keep the elements not equal to a stopword (folded by ``fold``
    unless case-sensitive), change their case, [''] when none is left."""
    action = attrs.get("case_change_action", "NONE")
    if action not in ("NONE", "LOWER", "UPPER"):
        raise ValueError(action)
    if not (x.ndim == 1 or (x.ndim == 2 and x.shape[0] == 1)):
        raise ValueError(x.shape)
    sens = attrs.get("is_case_sensitive", 0)
    stops = attrs.get("stopwords") or []
    kept = []
    for w in x.ravel():
        hit = False
        for s in stops:
            if (w == s) if sens else (fold(w) == fold(s)):
                hit = True
        if not hit:
            if str(attrs.get("locale", "")).startswith("tr_"):  # Turkish: dotted and dotless i by character
                w = "".join({"i": "İ"}.get(ch, ch) if action == "UPPER" else
                            {"I": "ı", "İ": "i"}.get(ch, ch) if action == "LOWER" else ch for ch in w)
            kept.append(w.lower() if action == "LOWER" else w.upper() if action == "UPPER" else w)
    if not kept:
        kept = [""]
    return _obj(kept, (1, len(kept)) if x.ndim == 2 else (len(kept),))


def split_scan(s, delimiter, maxsplit):
    """One element split by scanning characters (no ``str.split``)."""
    out, cur, i, splits = [], "", 0, 0
    limit = -1 if maxsplit is None else maxsplit
    if not delimiter:
        ws = " \t\n\r\v\f"
        while i < len(s) and s[i] in ws:
            i += 1
        end = len(s)
        while end > i and s[end - 1] in ws:
            end -= 1
        s, i = s[i:end], 0
        if not s:
            return []
        while i < len(s):
            if s[i] in ws and splits != limit:
                out.append(cur)
                cur = ""
                splits += 1
                while s[i] in ws:
                    i += 1
                continue
            cur += s[i]
            i += 1
        return out + [cur]
    while i < len(s):
        if s.startswith(delimiter, i) and splits != limit:
            out.append(cur)
            cur = ""
            splits += 1
            i += len(delimiter)
            continue
        cur += s[i]
        i += 1
    return out + [cur]


def split_loop(x, attrs, one=split_scan):
    parts = [one(s, attrs.get("delimiter"), attrs.get("maxsplit")) for s in x.ravel()]
    k = max((len(p) for p in parts), default=0)
    y = np.empty((len(parts), k), dtype=object)
    y[...] = ""
    for i, p in enumerate(parts):
        y[i, :len(p)] = p
    return y.reshape(x.shape + (k,)), np.array([len(p) for p in parts], dtype=np.int64).reshape(x.shape)


def tfidf_combinations(x, attrs, weights_by="pool", flaw=None):
    """TfIdfVectorizer by enumerating index combinations: an n-gram at skip s is a set of n
    positions with constant gap s + 1 (``itertools.combinations``); 1-grams once.  float32
    arithmetic; ``flaw`` injects one error."""
    pool = attrs.get("pool_strings") if attrs.get("pool_strings") is not None else attrs.get("pool_int64s")
    counts_at = list(attrs["ngram_counts"])
    grams = []
    for k, start in enumerate(counts_at):
        end = counts_at[k + 1] if k + 1 < len(counts_at) else len(pool)
        grams += [tuple(pool[i:i + k + 1]) for i in range(start, end, k + 1)]
    idx = list(attrs["ngram_indexes"])
    w = attrs.get("weights")
    lo, hi, skip = attrs["min_gram_length"], attrs["max_gram_length"], attrs["max_skip_count"]
    mode = attrs["mode"]
    if flaw == "skip-ignored":
        skip = 0
    if flaw == "mode-ignored":
        mode = "TF"
    rows = [list(x)] if x.ndim == 1 else [list(r) for r in x]
    if flaw == "rows-flattened" and x.ndim == 2:
        rows = [list(x.ravel())]
    if flaw == "int32-narrowed" and x.dtype == np.int64:
        rows = [[int(np.int64(v).astype(np.int32)) for v in r] for r in rows]
        pool = [int(np.int64(v).astype(np.int32)) for v in pool]
        grams = [tuple(int(np.int64(v).astype(np.int32)) for v in g) for g in grams]
    y = np.zeros((len(rows), max(idx) + 1), dtype=np.float32)
    for r, row in enumerate(rows):
        row = [v.item() if hasattr(v, "item") else v for v in row]
        cnt = Counter()
        for n in range(lo, hi + 1):
            for pos in itertools.combinations(range(len(row)), n):
                gaps = {b - a for a, b in zip(pos, pos[1:])}
                if n == 1 or (len(gaps) == 1 and next(iter(gaps)) <= skip + 1):
                    times = (skip + 1) if (flaw == "unigram-per-skip" and n == 1) else 1
                    cnt[tuple(row[p] for p in pos)] += times
        for k, g in enumerate(grams):
            c = cnt.get(g, 0)
            wk = np.float32(1.0 if not w else (w[idx[k]] if weights_by == "output" and idx[k] < len(w) else w[k]))
            if mode == "TF":
                v = np.float32(c)
            elif mode == "IDF":
                v = np.float32(min(c, 1) if flaw != "idf-not-truncated" else c) * wk
            elif flaw == "repeated-addition":
                v = np.float32(0)
                for _ in range(c):
                    v = np.float32(v + wk)
            else:
                v = np.float32(c) * wk
            out_r = r if not (flaw == "rows-flattened" and x.ndim == 2) else slice(None)
            y[out_r, idx[k]] = v
    return y[0] if x.ndim == 1 else y


# ============================================================================ oracle checks
def test_oracle_agrees_with_independent_code(value_cases):
    seen = Counter()
    for c in value_cases:
        f = _feeds(c)
        exp = c.datasets[0].outputs
        a = {k: _dec(v) for k, v in c.attributes.items()}
        if c.op == "StringNormalizer":
            got = normalize_loop(np.asarray(f["X"], dtype=object), a)
            assert got.shape == exp["Y"].shape and (got == exp["Y"]).all(), c.id
        elif c.op == "StringConcat":
            got = np.frompyfunc(operator.add, 2, 1)(f["X"], f["Y"])
            assert np.shape(got) == exp["Z"].shape and (np.asarray(got, dtype=object) == exp["Z"]).all(), c.id
        elif c.op == "StringSplit":
            y, z = split_loop(np.asarray(f["X"], dtype=object), a)
            assert y.shape == exp["Y"].shape and (y == exp["Y"]).all() and (z == exp["Z"]).all(), c.id
            assert exp["Z"].dtype == np.int64
        elif c.op == "RegexFullMatch":
            flags, body = re.match(r"(\(\?[a-z]+\))?(.*)", a.get("pattern", ""), re.S).groups()
            whole = f"{flags or ''}(?:{body})\\Z"  # a match anchored at the end, not fullmatch
            got = np.vectorize(lambda s: re.match(whole, s) is not None, otypes=[bool])(f["X"]) \
                if f["X"].size else np.zeros(f["X"].shape, bool)
            assert (got == exp["Y"]).all() and exp["Y"].dtype == np.bool_, c.id
        else:
            got = tfidf_combinations(np.asarray(f["X"]), a)
            assert got.shape == exp["Y"].shape and exp["Y"].dtype == np.float32, c.id
            assert np.array_equal(got, exp["Y"]), (c.id, got, exp["Y"])
        seen[c.op] += 1
    assert all(seen[op] >= 20 for op in OPS), seen


def test_regex_table_labels_hold():
    """The hand labels of every pattern (full match or not) are what the oracle says, and every
    pattern has a non-matching string that it *searches* successfully (so a search is caught)."""
    for p, (yes, no) in ref.REGEXES.items():
        assert ref.regex_full_match(_obj(yes, (len(yes),)), p).all(), p
        assert not ref.regex_full_match(_obj(no, (len(no),)), p).any(), p
        if p not in ("^ab$",):  # anchors: a search is a full match
            assert any(re.search(p, s) for s in no), p
    for p in ref.INVALID_REGEXES:
        with pytest.raises(ValueError):
            ref.regex_full_match(_obj(["a"], (1,)), p)


def test_spec_examples():
    """onnx's node tests (the spec's examples, onnx 1.23): the oracle reproduces every expected
    output of all 27, the 'empty output' StringNormalizer example ([''] of shape [1]) and the
    empty-tensor StringSplit example (Y of shape [0, 0]) included."""
    ts = single_node_tests(set(OPS), ["stringnormalizer", "string_split", "string_concat", "regex_full_match",
                                      "tfidfvectorizer"])
    from onnx import helper

    assert Counter(t.model.graph.node[0].op_type for t in ts) == {
        "StringNormalizer": 6, "StringSplit": 6, "StringConcat": 5, "RegexFullMatch": 3, "TfIdfVectorizer": 7}
    for t in ts:
        node = t.model.graph.node[0]
        attrs = {a.name: _dec(helper.get_attribute_value(a)) for a in node.attribute}
        (ins, outs), = t.data_sets
        ins = [np.asarray(v, dtype=object) if np.asarray(v).dtype.kind in "OU" else np.asarray(v) for v in ins]
        if node.op_type == "StringNormalizer":
            got = [ref.string_normalizer(ins[0], attrs.get("case_change_action", "NONE"),
                                         attrs.get("is_case_sensitive", 0), attrs.get("stopwords"))]
        elif node.op_type == "StringConcat":
            got = [ref.string_concat(*ins)]
        elif node.op_type == "StringSplit":
            got = list(ref.string_split(ins[0], attrs.get("delimiter"), attrs.get("maxsplit")))
        elif node.op_type == "RegexFullMatch":
            got = [ref.regex_full_match(ins[0], attrs.get("pattern"))]
        else:
            got = [ref.tfidf(ins[0].astype(object) if ins[0].dtype.kind != "O" else ins[0], attrs)]
        for g, e in zip(got, outs):
            e = np.asarray(e)
            assert np.shape(g) == e.shape, (t.name, np.shape(g), e.shape)
            if e.dtype.kind in "OU":
                assert (np.asarray(g, dtype=object) == e.astype(object)).all(), t.name
            else:
                assert np.array_equal(np.asarray(g).astype(e.dtype), e), t.name


# ============================================================================ kernels
def _x(inputs):
    return inputs["X"]


def sn_kernel(flaw=None, fold=str.upper):
    def k(inputs, attrs, outputs, opset):
        a = {kk: _dec(v) for kk, v in attrs.items()}
        x = np.asarray(_x(inputs), dtype=object)
        if flaw == "is_case_sensitive-ignored":
            a["is_case_sensitive"] = 0
        if flaw == "always-case-sensitive":
            a["is_case_sensitive"] = 1
        if flaw == "case_change_action-ignored" and a.get("case_change_action") in ("LOWER", "UPPER"):
            a["case_change_action"] = "NONE"
        y = normalize_loop(x, a, fold)
        if flaw == "all-dropped-empty" and y.size == 1 and y.ravel()[0] == "" and "" not in list(x.ravel()):
            y = np.empty((0,) if x.ndim == 1 else (1, 0), dtype=object)
        return {"Y": y}

    return k


def concat_kernel(flaw=None):
    def k(inputs, attrs, outputs, opset):
        x, y = inputs["X"], inputs["Y"]
        if flaw == "swapped":
            x, y = y, x
        return {"Z": np.asarray(np.frompyfunc(operator.add, 2, 1)(x, y), dtype=object)}

    return k


def split_kernel(flaw=None):
    def one(s, d, m):
        if flaw == "maxsplit-ignored":
            m = None
        if flaw == "missing-delimiter-single-space" and not d:
            d = " "
        if flaw == "contested-other-reading":
            return ref._split_other(s, d, m)
        return split_scan(s, d, m)

    def k(inputs, attrs, outputs, opset):
        a = {kk: _dec(v) for kk, v in attrs.items()}
        y, z = split_loop(np.asarray(_x(inputs), dtype=object), a, one)
        return {"Y": y, "Z": z}

    return k


_NOT_RE2 = re.compile(r"\\[1-9]|\(\?[=!<]")


def regex_kernel(flaw=None):
    def k(inputs, attrs, outputs, opset):
        p = _dec(attrs.get("pattern", ""))
        if _NOT_RE2.search(p):
            raise ValueError(f"not RE2: {p!r}")
        rx = re.compile(p)
        x = np.asarray(_x(inputs), dtype=object)
        if flaw == "bytes":  # UTF-8 bytes: '.' takes one byte
            rb = re.compile(p.encode())
            f = (lambda s: rb.fullmatch(s.encode()) is not None)
        elif flaw == "search":
            f = (lambda s: rx.search(s) is not None)
        elif flaw == "prefix":
            f = (lambda s: rx.match(s) is not None)
        else:
            f = (lambda s: rx.fullmatch(s) is not None)
        out = np.zeros(x.shape, dtype=np.bool_)
        for i in np.ndindex(x.shape):
            out[i] = f(x[i])
        return {"Y": out}

    return k


def tfidf_kernel(flaw=None, weights_by="pool"):
    def k(inputs, attrs, outputs, opset):
        a = {kk: _dec(v) for kk, v in attrs.items()}
        x = np.asarray(_x(inputs))
        # the checks a kernel makes (the error cases)
        if a["mode"] not in ("TF", "IDF", "TFIDF"):
            raise ValueError("mode")
        if ("pool_strings" in a) == ("pool_int64s" in a):
            raise ValueError("pools")
        if "pool_strings" in a and x.dtype.kind != "O":
            raise ValueError("pool_strings needs strings")
        if x.ndim not in (1, 2):
            raise ValueError("rank")
        pool = a.get("pool_strings", a.get("pool_int64s"))
        ref.pool_ngrams(pool, a["ngram_counts"])  # raises on an inconsistent pool
        n = len(ref.pool_ngrams(pool, a["ngram_counts"]))
        if len(a["ngram_indexes"]) != n or ("weights" in a and len(a["weights"]) != n):
            raise ValueError("not parallel")
        return {"Y": tfidf_combinations(x, a, weights_by, flaw)}

    return k


def kernels(**flaws):
    base = {"StringNormalizer": sn_kernel(), "StringConcat": concat_kernel(), "StringSplit": split_kernel(),
            "RegexFullMatch": regex_kernel(), "TfIdfVectorizer": tfidf_kernel()}
    base.update(flaws)
    return base


LEGIT = {
    "independent": kernels(),
    "lower-fold": kernels(StringNormalizer=sn_kernel(fold=str.lower)),
    "casefold": kernels(StringNormalizer=sn_kernel(fold=str.casefold)),
    "float32-repeated-addition": kernels(TfIdfVectorizer=tfidf_kernel("repeated-addition")),
    "contested-other-reading": kernels(StringSplit=split_kernel("contested-other-reading")),
}


@pytest.mark.parametrize("name", sorted(LEGIT))
def test_legitimate_kernels_pass_everything(name, suite):
    results = run_cases(suite, KernelBackend(LEGIT[name], name=name))
    bad = [(c.id, r.outcome, (r.message or "")[:200]) for c, r in zip(suite, results) if r.outcome != "pass"]
    assert not bad, (len(bad), bad[:5])


def _has_stopword_variant(c):
    """A case with an element that is a stopword only case-insensitively."""
    stops = _dec(c.attributes.get("stopwords") or [])
    x = list(_feeds(c)["X"].ravel())
    return any(w not in stops and w.lower() in {s.lower() for s in stops} for w in x)


def _changes_case(c):
    a = c.attributes.get("case_change_action")
    y = c.datasets[0].outputs["Y"].ravel()
    return a in ("LOWER", "UPPER") and any(w != w.lower() or w != w.upper() for w in y)


def _split_limited(c):
    m = c.attributes.get("maxsplit")
    return m is not None and any(len(split_scan(s, _dec(c.attributes.get("delimiter")), None)) > m + 1
                                 for s in _feeds(c)["X"].ravel())


def _whitespace_runs(c):
    return not _dec(c.attributes.get("delimiter")) and any(re.search(r"\s\s|\t|\n|^\s", s)
                                                           for s in _feeds(c)["X"].ravel())


def _tfidf_skip_matters(c):
    return c.attributes["max_skip_count"] > 0 and c.attributes["max_gram_length"] >= 2


WRONG = {
    # flaw: (op, kernel, filter on value cases, at least this many fails)
    "is_case_sensitive-ignored": ("StringNormalizer", sn_kernel("is_case_sensitive-ignored"),
                                  lambda c: c.attributes.get("is_case_sensitive") == 1 and _has_stopword_variant(c), 10),
    "always-case-sensitive": ("StringNormalizer", sn_kernel("always-case-sensitive"),
                              lambda c: not c.attributes.get("is_case_sensitive") and _has_stopword_variant(c), 10),
    "case_change_action-ignored": ("StringNormalizer", sn_kernel("case_change_action-ignored"), _changes_case, 15),
    "all-dropped-empty": ("StringNormalizer", sn_kernel("all-dropped-empty"),
                          lambda c: c.tags["shape"].endswith("all-stopwords"), 10),
    "concat-swapped": ("StringConcat", concat_kernel("swapped"), lambda c: True, 15),
    "maxsplit-ignored": ("StringSplit", split_kernel("maxsplit-ignored"), _split_limited, 15),
    "missing-delimiter-single-space": ("StringSplit", split_kernel("missing-delimiter-single-space"),
                                       _whitespace_runs, 15),
    "regex-search": ("RegexFullMatch", regex_kernel("search"), lambda c: "pattern" in c.attributes, 50),
    "regex-prefix": ("RegexFullMatch", regex_kernel("prefix"), lambda c: "pattern" in c.attributes, 30),
    "regex-bytes": ("RegexFullMatch", regex_kernel("bytes"),
                    lambda c: c.attributes.get("pattern") in ("a.c", ".*"), 4),
    "tfidf-skip-ignored": ("TfIdfVectorizer", tfidf_kernel("skip-ignored"), _tfidf_skip_matters, 20),
    "tfidf-unigram-per-skip": ("TfIdfVectorizer", tfidf_kernel("unigram-per-skip"),
                               lambda c: c.attributes["max_skip_count"] > 0 and c.attributes["min_gram_length"] == 1, 20),
    "tfidf-mode-ignored": ("TfIdfVectorizer", tfidf_kernel("mode-ignored"),
                           lambda c: c.attributes["mode"] != "TF" and "weights" in c.attributes, 30),
    "tfidf-idf-not-truncated": ("TfIdfVectorizer", tfidf_kernel("idf-not-truncated"),
                                lambda c: c.attributes["mode"] == "IDF", 15),
    "tfidf-weights-by-output-index": ("TfIdfVectorizer", tfidf_kernel(weights_by="output"),
                                      lambda c: c.attributes["mode"] != "TF" and "weights" in c.attributes, 20),
    "tfidf-int32-narrowed": ("TfIdfVectorizer", tfidf_kernel("int32-narrowed"),
                             lambda c: c.tags["dtype"] == "int64" and 12 in list(_feeds(c)["X"].ravel())
                             and c.attributes["min_gram_length"] == 1, 10),
    "tfidf-rows-flattened": ("TfIdfVectorizer", tfidf_kernel("rows-flattened"),
                             lambda c: len(_feeds(c)["X"].shape) == 2 and _feeds(c)["X"].shape[0] > 1
                             and _feeds(c)["X"].size > 0, 15),
}


@pytest.mark.parametrize("flaw", sorted(WRONG))
def test_wrong_kernels_are_caught(flaw, value_cases):
    op, kern, keep, least = WRONG[flaw]
    cases = [c for c in value_cases if c.op == op and keep(c)]
    assert len(cases) >= least, len(cases)
    results = run_cases(cases, KernelBackend({op: kern}, name=flaw, check=False))
    n = Counter(r.outcome for r in results)
    assert n["fail"] >= least, n


def test_error_cases_are_rejected(suite):
    cases = [c for c in suite if c.expect_error]
    assert Counter(c.op for c in cases) == {"StringNormalizer": 3, "StringConcat": 1, "StringSplit": 1,
                                            "RegexFullMatch": 4, "TfIdfVectorizer": 7}
    results = run_cases(cases, KernelBackend(kernels(), name="legit"))
    assert all(r.outcome == "pass" for r in results), [(c.id, r.message[:100]) for c, r in zip(cases, results)
                                                        if r.outcome != "pass"]


# ============================================================================ the suite's layout
def test_traps_are_generated(value_cases):
    by = {op: [c for c in value_cases if c.op == op] for op in OPS}
    sn = by["StringNormalizer"]
    assert {c.attributes.get("case_change_action", "NONE") for c in sn} == {"NONE", "LOWER", "UPPER"}
    assert {c.attributes.get("locale") for c in sn} == {None, "C.UTF-8", "en_US.UTF-8", "tr_TR.UTF-8"}
    turkish = [c for c in sn if c.attributes.get("locale") == "tr_TR.UTF-8"]
    assert [list(c.datasets[0].outputs["Y"]) for c in turkish] == [["İI", "İI", "DİŞ", "ABC"], ["ıi", "dış", "ıi", "abc"]]
    # every element a stopword: the output is [1] / [1, 1] holding ''
    allst = [c for c in sn if c.tags["shape"].endswith("all-stopwords")]
    assert len(allst) >= 20 and all(c.datasets[0].outputs["Y"].size == 1 and c.datasets[0].outputs["Y"].ravel()[0] == ""
                                    for c in allst)
    assert {c.datasets[0].outputs["Y"].shape for c in allst} == {(1,), (1, 1)}
    assert sum(_has_stopword_variant(c) for c in sn) >= 30
    # no letter whose case mapping depends on the locale or is not one-to-one
    for c in sn:
        if c in turkish:
            continue
        for w in _feeds(c)["X"].ravel():
            assert not set(w) & set("iIıİßςσΣﬁµſK"), (c.id, w)
            assert len(w.upper()) == len(w) == len(w.lower()), (c.id, w)
    sp = by["StringSplit"]
    assert {_dec(c.attributes.get("delimiter")) for c in sp} == {None, "", ",", "::", " "}
    assert {c.attributes.get("maxsplit") for c in sp} == {None, 0, 1, 2}
    assert sum(_split_limited(c) for c in sp) >= 15 and sum(_whitespace_runs(c) for c in sp) >= 15
    # drawn data is never contested; the contested layouts are the fixed ones
    for c in sp:
        f = _feeds(c)["X"]
        reason = ref.split_contested(f, _dec(c.attributes.get("delimiter")), c.attributes.get("maxsplit"))
        assert (reason is None) == (c.contested is None), c.id
        assert (c.check is not None) == (c.contested is not None)
    assert sum(c.contested is not None for c in sp) == 4
    rx = by["RegexFullMatch"]
    assert {c.attributes.get("pattern") for c in rx} == {None} | set(ref.REGEXES)
    tf = by["TfIdfVectorizer"]
    assert {c.tags["dtype"] for c in tf} == {"string", "int32", "int64"}
    assert {c.attributes["mode"] for c in tf} == {"TF", "IDF", "TFIDF"}
    assert {(c.attributes["min_gram_length"], c.attributes["max_gram_length"], c.attributes["max_skip_count"])
            for c in tf} >= set(ops_text.GRAMS)
    assert all(("pool_strings" in c.attributes) == (c.tags["dtype"] == "string") for c in tf)
    assert {c.datasets[0].outputs["Y"].ndim for c in tf} == {1, 2}
    counts = Counter(c.op for c in value_cases)
    assert all(20 <= n <= 300 for n in counts.values()), counts


def test_tfidf_tolerance_is_derived(value_cases):
    """Exact where no weight applies or every partial sum is exact in float32 (dyadic weights);
    otherwise at most (c_max - 1 + 1) float32 roundings relative, far below a one-count error;
    a kernel adding the weight once per occurrence passes (test_legitimate_kernels...) and needs
    the bound: without it, it fails."""
    tf = [c for c in value_cases if c.op == "TfIdfVectorizer"]
    exact = [c for c in tf if c.outputs[0].tolerance.exact]
    loose = [c for c in tf if not c.outputs[0].tolerance.exact]
    assert len(exact) >= 100 and len(loose) >= 20, (len(exact), len(loose))
    # exact: the float32 product and the float32 repeated addition agree bit for bit on them
    # (both kernels pass every case, test_legitimate_kernels_pass_everything)
    assert {c.attributes["mode"] for c in exact} == {"TF", "IDF", "TFIDF"}
    for c in loose:
        r = c.outputs[0].tolerance.rtol
        x = _feeds(c)["X"]
        # c_max <= the row length; a one-count error is at least 1 / c_max relative
        assert 0 < r <= x.shape[-1] * 2.0 ** -24 * 1.01 and r * x.shape[-1] < 1e-4, (c.id, r)
    import copy
    import dataclasses

    tight = []
    for c in loose:
        c2 = copy.copy(c)
        c2.outputs = [dataclasses.replace(o, tolerance=dataclasses.replace(o.tolerance, rtol=0.0, exact=True))
                      for o in c.outputs]
        tight.append(c2)
    res = run_cases(tight, KernelBackend({"TfIdfVectorizer": tfidf_kernel("repeated-addition")}, name="r", check=False))
    n = Counter(r.outcome for r in res)
    assert n["fail"] >= 10, n


# ============================================================================ bundle round trip
@pytest.mark.filterwarnings("ignore:Unknown local setting")
def test_string_cases_round_trip_through_a_bundle(value_cases, tmp_path):
    pick = []
    for op in OPS:
        pick += [c for c in value_cases if c.op == op][:6]
    write_bundle(Suite(cases=pick, seed=0, ops=list(OPS)), tmp_path / "b")
    back = {c.id: c for c in read_bundle(tmp_path / "b").cases}
    assert set(back) == {c.id for c in pick}
    for c in pick:
        b = back[c.id]
        for name, v in c.datasets[0].inputs.items():
            w = b.datasets[0].inputs[name]
            assert w.dtype == v.dtype and w.shape == v.shape and (w == v).all(), (c.id, name)
        for name, v in c.datasets[0].outputs.items():
            w = b.datasets[0].outputs[name]
            assert w.dtype == v.dtype and w.shape == v.shape and (w == v).all(), (c.id, name)
    # fed to onnxruntime from the bundle: the strings arrive and compare exactly
    res = run_cases(list(back.values()), resolve_backend("onnxruntime"))
    ok = Counter(c.op for c, r in zip(back.values(), res) if r.outcome == "pass")
    assert ok["StringConcat"] == 6 and ok["RegexFullMatch"] >= 5 and ok["TfIdfVectorizer"] >= 5, ok
    # and to onnx.reference (which returns some string outputs as numpy unicode arrays)
    import locale

    saved = locale.setlocale(locale.LC_ALL)
    try:
        res = run_cases(list(back.values()), resolve_backend("onnx-reference"))
    finally:
        locale.setlocale(locale.LC_ALL, saved)
    ok = Counter(c.op for c, r in zip(back.values(), res) if r.outcome == "pass")
    assert ok["StringConcat"] == 6 and ok["RegexFullMatch"] >= 5 and ok["StringSplit"] >= 4, ok


# ============================================================================ other runtimes
def _nfkd_changes(c):
    import unicodedata

    return any(unicodedata.normalize("NFKD", w) != w for w in _feeds(c)["X"].ravel())


def _reference_disagreement(case, res):
    """Why onnx.reference (onnx 1.23) and the suite disagree; the suite is right in each:

    * ``sn-strips-accents``: StringNormalizer removes accents (NFKD, combining marks dropped), which
      the text never asks for;
    * ``sn-removes-empty``: it drops every empty string (not only stopwords);
    * ``sn-stopwords-as-words``: it removes stopwords as space-separated words inside an element,
      and compares case-insensitively only after a case change (with NONE, 'The' is not 'the');
    * ``sn-no-shape-check``: a [2, C] input accepted;
    * ``sn-locale-ignored``: Python's locale-independent ``str.upper``/``lower`` where the case
      names tr_TR.UTF-8 (``i`` uppercases to ``I``, not ``İ``);
    * ``regex-python-re``: it compiles with Python's re, which accepts a backreference and a
      lookahead (not RE2);
    * ``split-rank0`` / ``split-empty-or-tensor``: np.char.split fails on a rank-0 input
      (AssertionError in its padding);
    * ``tfidf-weights-by-output-index``: it scales by ``weights[ngram_indexes[i]]``, not
      ``weights[i]`` (the text: "the i-th element in weights ... the i-th n-gram in pool"): wrong
      values, or an IndexError where an output coordinate is past the weights' end;
    * ``tfidf-pool-sections``: a pool with an empty 1-gram section (ngram_counts [0, 0, 8]) fails
      ("Issues with types") unless only 1-grams are counted;
    * ``tfidf-N=0``: an empty batch refused (it rejects every invalid TfIdfVectorizer model).
    """
    a = case.attributes
    msg = res.message or ""
    if case.op == "StringNormalizer":
        if case.expect_error:
            return "sn-no-shape-check"
        if a.get("locale") == "tr_TR.UTF-8":
            return "sn-locale-ignored"
        stops = _dec(a.get("stopwords") or [])
        x = list(_feeds(case)["X"].ravel())
        if "" in x and "" not in stops:
            return "sn-removes-empty"
        if _nfkd_changes(case):
            return "sn-strips-accents"
        if stops:
            return "sn-stopwords-as-words"
        return None
    if case.op == "RegexFullMatch" and case.expect_error and a["pattern"] in ("(a)\\1", "a(?=b)"):
        return "regex-python-re"
    if case.op == "StringSplit" and res.outcome == "error" and "AssertionError" in msg:
        return "split-np-char-split"
    if case.op == "TfIdfVectorizer":
        if res.outcome == "error" and "IndexError" in msg and a.get("weights") and \
                max(a["ngram_indexes"]) >= len(a["weights"]):
            return "tfidf-weights-by-output-index"  # weights[ngram_indexes[i]] past the weights' end
        if res.outcome == "error" and "Issues with types" in msg and list(a["ngram_counts"][:2]) == [0, 0]:
            return "tfidf-pool-sections"
        if res.outcome == "error" and "B > 0" in msg:
            return "tfidf-N=0"
        if res.outcome == "fail" and a["mode"] != "TF" and "weights" in a and \
                list(a["ngram_indexes"]) != list(range(len(a["ngram_indexes"]))):
            return "tfidf-weights-by-output-index"
    return None


@pytest.mark.filterwarnings("ignore:Unknown local setting")
def test_agreement_with_onnx_reference(suite):
    import locale

    saved = locale.setlocale(locale.LC_ALL)  # onnx.reference's StringNormalizer sets the process locale
    try:
        results = run_cases(suite, resolve_backend("onnx-reference"))
    finally:
        locale.setlocale(locale.LC_ALL, saved)
    why, unexplained = sort_findings(suite, results, _reference_disagreement,
                                     skip=lambda c, r: c.contested is not None)
    assert not unexplained, (len(unexplained), unexplained[:5])
    assert set(why) == {"sn-strips-accents", "sn-removes-empty", "sn-stopwords-as-words", "sn-no-shape-check",
                        "sn-locale-ignored",
                        "regex-python-re", "split-np-char-split", "tfidf-pool-sections", "tfidf-N=0",
                        "tfidf-weights-by-output-index"}, why
    ok = Counter(c.op for c, r in zip(suite, results) if r.outcome == "pass")
    assert ok["StringConcat"] == 34 and ok["RegexFullMatch"] >= 85 and ok["StringSplit"] >= 60 \
        and ok["TfIdfVectorizer"] >= 100, ok


def _ort_disagreement(case, res):
    """Why onnxruntime 1.32 and the suite disagree; the suite follows the text in each:

    * ``ort-locale-missing``: StringNormalizer's default locale en_US.UTF-8 (and tr_TR.UTF-8, and
      the cases that name them) is not installed in this environment: the session fails to build
      (environment; with both compiled by ``localedef`` into a LOCPATH directory every
      StringNormalizer value case passes);
    * ``ort-whitespace-is-space-only``: StringSplit without delimiter splits on ' ' only; a tab or
      newline is kept inside a substring (the text: "consecutive whitespace characters");
    * ``ort-tfidf-ngram_counts-bound``: max_gram_length beyond len(ngram_counts) refused (the
      text: an n-gram not found in the pool is ignored);
    * ``ort-tfidf-N=0``: an empty batch [0, C] refused ("B > 0");
    * ``ort-tfidf-no-validation``: invalid pools accepted (both pools, pool_strings with int64
      input, ngram_indexes shorter than the pool).
    """
    msg = res.message or ""
    if case.op == "StringNormalizer" and "Failed to construct locale with name:" in msg:
        return "ort-locale-missing"
    if case.op == "StringSplit" and not _dec(case.attributes.get("delimiter")) and \
            any(("\t" in s or "\n" in s) for s in _feeds(case)["X"].ravel()):
        return "ort-whitespace-is-space-only"
    if case.op == "TfIdfVectorizer":
        if "inbounds of ngram_counts" in msg:
            return "ort-tfidf-ngram_counts-bound"
        if "B > 0" in msg:
            return "ort-tfidf-N=0"
        if case.expect_error and res.outcome == "fail":
            return "ort-tfidf-no-validation"
    return None


def test_onnxruntime_findings(suite):
    pytest.importorskip("onnxruntime")
    # onnxruntime reads ngram_indexes past its end when it is shorter than the pool (a hand-made
    # model with 4 indexes for 5 n-grams terminated the process): that case runs only isolated
    suite = [c for c in suite if c.tags.get("error") != "ngram_indexes-short"]
    results = run_cases(suite, resolve_backend("onnxruntime"))
    why, unexplained = sort_findings(suite, results, _ort_disagreement, skip=lambda c, r: c.contested is not None
                                     and r.outcome == "unsupported")
    assert not unexplained, (len(unexplained), unexplained[:5])
    assert set(why) <= {"ort-locale-missing", "ort-whitespace-is-space-only", "ort-tfidf-ngram_counts-bound",
                        "ort-tfidf-N=0", "ort-tfidf-no-validation"}, why
    assert why["ort-whitespace-is-space-only"] >= 5 and why["ort-tfidf-no-validation"] == 2, why
    ok = Counter(c.op for c, r in zip(suite, results) if r.outcome == "pass")
    assert ok["StringConcat"] == 34 and ok["RegexFullMatch"] >= 85 and ok["TfIdfVectorizer"] >= 180, ok
    # the contested StringSplit layouts: onnxruntime follows the other reading of the empty string
    contested = [(c, r) for c, r in zip(suite, results) if c.op == "StringSplit" and c.contested]
    assert any("other reading" in (r.message or "") for _, r in contested), [(c.id, r.message) for c, r in contested]


def test_string_outputs_compare_exactly_whatever_numpy_string_dtype():
    """A string output returned as a numpy unicode array (onnx.reference) is compared exactly with
    the expected object array, as are UTF-8 bytes of the same text (an ONNX STRING is bytes in the
    protobuf; conformance.tolerance._strings); other values, undecodable bytes and another shape fail."""
    from conformance.tolerance import Tolerance, compare

    tol = Tolerance(0.0, 0.0, exact=True)
    want = _obj(["a", "é", ""], (3,))
    assert compare("Y", np.array(["a", "é", ""]), want, tol).passed
    assert compare("Y", want.copy(), want, tol).passed
    bad = compare("Y", np.array(["a", "e", ""]), want, tol)
    assert not bad.passed and "expected 'é', got 'e'" in bad.reason
    assert compare("Y", np.array([b"a", b"\xc3\xa9", b""]), want, tol).passed
    assert not compare("Y", np.array([b"a", b"\xe9", b""]), want, tol).passed  # Latin-1, not UTF-8
    assert not compare("Y", np.array([["a", "é", ""]]), want, tol).passed
