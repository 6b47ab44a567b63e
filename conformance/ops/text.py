"""The text operators as entries of the operator table (family ``shaped``): StringNormalizer (10),
StringConcat (20), StringSplit (20), RegexFullMatch (20) and TfIdfVectorizer (9).

Oracles and data tables: :mod:`conformance.reference.text` (its docstring says which letters,
whitespace and regular-expression constructs the suite avoids, and why).  Every output is
compared exactly except TfIdfVectorizer's float ``Y`` (:func:`conformance.reference.text.tfidf_rtol`,
docs/tolerance.md "Text operators").

* **StringNormalizer**: shapes ``[C]``, ``[1, C]``, ``[1]``; stopword lists with mixed case,
  non-ASCII, a phrase with a space and the empty string; data classes with no stopword, some
  stopwords in other cases, case variants of the stopwords only (what ``is_case_sensitive``
  decides) and stopwords only (the output is then ``[1]`` / ``[1, 1]`` holding ``""``, the
  text's rule); every ``case_change_action`` with and without ``is_case_sensitive``; the
  ``locale`` given as ``C.UTF-8`` and ``en_US.UTF-8`` (the data's case mapping is the same in
  every locale), and two cases with ``tr_TR.UTF-8`` over the Turkish dotted and dotless i's (the
  locale decides: ``i`` uppercases to ``İ``, ``I`` lowercases to ``ı``).  Contested: an empty
  ``[0]`` input ([C] admits C = 0; "all elements dropped" or none).  Errors: an unknown ``case_change_action``, a ``[2, C]`` and a rank-3 input.
* **StringConcat**: every broadcasting pattern of the binary family (scalars, trailing,
  leading, size-1 both ways, rank 5, zero-size) over empty, ASCII, multi-byte (2, 3 and 4
  bytes in UTF-8), combining-accent and long (40 to 600 bytes) strings.  Error: shapes that do not broadcast.
* **StringSplit**: no delimiter (runs of space, tab and newline, leading and trailing
  whitespace), the empty delimiter, ``","`` (consecutive, leading and trailing delimiters),
  ``"::"`` (data with lone ``:``), ``" "`` (runs of spaces delimit empty strings), maxsplit 0,
  1 and 2 with and without a delimiter; ranks 0 to 3.  Contested
  (:func:`conformance.reference.text.split_contested`): an empty element with a delimiter, an
  empty tensor, whitespace after maxsplit's suffix.  Error: an int64 input.
* **RegexFullMatch**: every pattern of :data:`conformance.reference.text.REGEXES` over strings it
  matches and strings it only *searches* (or matches a prefix of); ranks 0 to 2 and an empty
  tensor.  Contested: the pattern absent (the schema gives no default).  Errors: the invalid
  RE2 patterns of :data:`conformance.reference.text.INVALID_REGEXES`.
* **TfIdfVectorizer**: modes TF, IDF, TFIDF, each with n-gram ranges 1-1, 1-2, 2-2 (skip 1),
  1-3 (skip 2) ; pools with 1-, 2- and 3-grams, without 1-grams (``ngram_counts`` ``[0, 0]``)
  and with 1-grams only; ``ngram_indexes`` permuted with unused output columns; weights absent,
  dyadic (exact) and inexact; inputs ``[C]``, ``[N, C]``, ``[1, C]``, shorter than the n-grams,
  ``[N, 0]`` and ``[0, C]``; string, int32 and int64 (``pool_strings`` or ``pool_int64s`` by the
  input type, :attr:`Entry.drawn_attrs`).  Errors: an unknown mode, both pools, ``pool_strings``
  with an integer input, ``ngram_counts`` inconsistent with the pool, ``ngram_indexes`` shorter
  than the pool, weights not parallel to ``ngram_indexes``, a rank-3 input.
"""

from __future__ import annotations

import numpy as np

from ..reference import text as ref
from ..tolerance import Tolerance
from .engine import register_entries
from .entry import Attrs, Entry, Err, Shape


def _strings(vals) -> np.ndarray:
    out = np.empty(len(vals), dtype=object)
    out[:] = list(vals)
    return out


def _word(rng, letters=ref.CASED + ref.UNCASED[:-1], lo=1, hi=4) -> str:
    n = int(rng.integers(lo, hi + 1))
    return "".join(letters[int(i)] for i in rng.integers(0, len(letters), size=n))


def _variant(rng, w: str) -> str:
    """``w`` in another case (upper, lower, swapped or title), or itself."""
    k = int(rng.integers(0, 5))
    return (w.upper(), w.lower(), w.swapcase(), w.title(), w)[k]


# ============================================================================ StringNormalizer
def _sn_data(kind):
    def fn(rng, ctx, shapes):
        """StringNormalizer data: ``words`` (no stopword; some empty strings), ``with-stopwords``
        (half stopwords in any case), ``case-variants`` (stopwords as given or in another case),
        ``all-stopwords`` (every element a stopword that matches under ``is_case_sensitive``)."""
        stops = list(ctx.attrs.get("stopwords") or [])
        sensitive = bool(ctx.attrs.get("is_case_sensitive", 0))
        n = int(np.prod(shapes[0], dtype=np.int64))
        folded = {ref._fold(s) for s in stops}
        out = []
        for _ in range(n):
            if kind == "words" or not stops or (kind == "with-stopwords" and rng.random() < 0.5):
                w = _word(rng, lo=0) if rng.random() < 0.9 else ""
                while ref._fold(w) in folded:
                    w = _word(rng)
                out.append(w)
            else:
                s = stops[int(rng.integers(len(stops)))]
                if kind == "all-stopwords" and sensitive:
                    out.append(s)
                else:
                    out.append(_variant(rng, s))
        return [_strings(out).reshape(shapes[0])]

    fn.__name__ = fn.__qualname__ = f"string_normalizer_{kind.replace('-', '_')}"
    return fn


SN_CLASSES = {k: _sn_data(k) for k in ("words", "with-stopwords", "case-variants", "all-stopwords")}


def _sn_oracle(ctx, x, **attrs):
    """:func:`conformance.reference.text.string_normalizer`."""
    return ref.string_normalizer(x, attrs.get("case_change_action", "NONE"), attrs.get("is_case_sensitive", 0),
                                 attrs.get("stopwords"), attrs.get("locale"))


def _sn_contested(ctx, attrs):
    if 0 in ctx.shapes.get("X", (1,)):
        return ("StringNormalizer of an empty [0] input: the text's [C] admits C = 0, and whether all of no elements "
                "were dropped (output [1] holding '') or none (output [0]) is open")
    return None


S0, S1 = list(ref.STOPWORDS[0]), list(ref.STOPWORDS[1])
SN_SHAPES = (
    Shape("C", {"X": "C"}, dims={"C": (1, 6)}, numerics=("words",)),
    Shape("1xC", {"X": "1C"}, dims={"C": (1, 6)}, numerics=("words",)),
    Shape("C/stopwords", {"X": "C"}, {"stopwords": S0}, dims={"C": (3, 8)}, numerics=("with-stopwords",)),
    Shape("1xC/stopwords", {"X": "1C"}, {"stopwords": S1}, dims={"C": (3, 8)}, numerics=("with-stopwords",)),
    Shape("C/case-variants", {"X": "C"}, {"stopwords": S0}, dims={"C": (3, 8)}, numerics=("case-variants",)),
    Shape("C/all-stopwords", {"X": "C"}, {"stopwords": S0}, dims={"C": (1, 5)}, numerics=("all-stopwords",)),
    Shape("1xC/all-stopwords", {"X": "1C"}, {"stopwords": S1}, dims={"C": (1, 5)}, numerics=("all-stopwords",)),
    Shape("C=1/stopwords", {"X": "1"}, {"stopwords": S1}, numerics=("with-stopwords",)),
    Shape("zero-size", {"X": "0"}, {"stopwords": S0}, numerics=("words",), cycle=False),
    # the locale decides: Turkish dotted and dotless i (fixed data, no stopwords)
    Shape("turkish-i/upper", {"X": "4"}, {"locale": "tr_TR.UTF-8", "case_change_action": "UPPER"},
          values={"X": _strings(["iı", "İI", "diş", "abc"])}, cycle=False),
    Shape("turkish-i/lower", {"X": "4"}, {"locale": "tr_TR.UTF-8", "case_change_action": "LOWER"},
          values={"X": _strings(["Iİ", "DIŞ", "ıi", "ABC"])}, cycle=False),
)
SN_STATES = (
    Attrs({"case_change_action": "LOWER"}),
    Attrs({"case_change_action": "UPPER"}),
    Attrs({"is_case_sensitive": 1}),
    Attrs({"is_case_sensitive": 1, "case_change_action": "LOWER"}),
    Attrs({"is_case_sensitive": 1, "case_change_action": "UPPER"}),
    Attrs({"locale": "C.UTF-8", "case_change_action": "UPPER"}),
    Attrs({"locale": "C.UTF-8"}),
    Attrs({"locale": "C.UTF-8", "case_change_action": "LOWER", "is_case_sensitive": 1}),
    Attrs({"locale": "en_US.UTF-8", "case_change_action": "LOWER"}),
)
STRING_NORMALIZER = Entry(
    "StringNormalizer", _sn_oracle, family="shaped", shapes=SN_SHAPES, attrs=SN_STATES, string_numerics=SN_CLASSES,
    numerics_classes=lambda t: tuple(SN_CLASSES), per_type=88, contested=_sn_contested,
    errors=(
        Err("case_change_action: 'Valid values are \"LOWER\", \"UPPER\", \"NONE\"': TITLE", "unknown-case_change_action",
            {"case_change_action": "TITLE"}, ((3,),)),
        Err("'This operator only accepts [C]- and [1, C]-tensor': [2, 3]", "shape-2xC", {}, ((2, 3),)),
        Err("'This operator only accepts [C]- and [1, C]-tensor': [1, 2, 3]", "rank-3", {}, ((1, 2, 3),)),
    ),
)


# ============================================================================ StringConcat
def _concat_data(pool):
    def fn(rng, ctx, shapes):
        """Strings from the class's pool, per element."""
        out = []
        for s in shapes:
            n = int(np.prod(s, dtype=np.int64))
            out.append(_strings([pool[int(i)] for i in rng.integers(0, len(pool), size=n)]).reshape(s))
        return out

    return fn


CONCAT_CLASSES = {"text": _concat_data(ref.CONCAT_STRINGS),
                  "non-ascii": _concat_data(("é", "日本", "😀", "e\u0301", "ω", "дж", "😀é")),
                  # long strings (past a small-string buffer) beside empty ones
                  "long-and-empty": _concat_data(("", "", "x" * 40, "é" * 300, "日本" * 100 + "😀"))}
CONCAT_SHAPES = tuple(Shape(name, {"X": a, "Y": b}, dims=dims) for name, a, b, dims in (
    ("same", "SM", "SM", {}),
    ("1-D", "L", "L", {"L": (1, 24)}),
    ("scalar-right", "SMK", "", {}),
    ("scalar-left", "", "SM", {}),
    ("trailing", "SMK", "MK", {}),
    ("leading", "K", "SMK", {}),
    ("size1-both", "S1K", "1MK", {}),
    ("outer", "S1", "1M", {}),
    ("rank5", "S11MK", "1SMK", {"S": (1, 2), "M": (1, 2), "K": (2, 3)}),
    ("scalars", "", "", {}),
    ("zero-size", "S01", "1K", {}),
))
STRING_CONCAT = Entry(
    "StringConcat", lambda ctx, x, y, **a: ref.string_concat(x, y), family="shaped", shapes=CONCAT_SHAPES,
    string_numerics=CONCAT_CLASSES, numerics_classes=lambda t: tuple(CONCAT_CLASSES), per_type=33,
    errors=(Err("X [2, 3] and Y [4] are not multidirectionally broadcastable (docs/Broadcasting.md)", "broadcast",
                {}, ((2, 3), (4,))),),
)


# ============================================================================ StringSplit
def _split_data(rng, ctx, shapes):
    """StringSplit data laid out for the case's delimiter: tokens (with lone ``:``, inner spaces
    where the delimiter is not whitespace) joined by the delimiter with empty fields and
    leading/trailing delimiters, or by runs of whitespace with leading/trailing whitespace;
    never the contested layouts (:func:`conformance.reference.text.split_contested`)."""
    delim = ctx.attrs.get("delimiter") or ""
    maxsplit = ctx.attrs.get("maxsplit")
    n = int(np.prod(shapes[0], dtype=np.int64))
    letters = ("a", "b", "é", "日", "7", ":", "x")
    # whitespace: spaces only in half of the cases, space, tab and newline in the others
    spaces = ref.WHITESPACE[:1] if rng.random() < 0.5 else ref.WHITESPACE
    out = []
    for _ in range(n):
        k = int(rng.integers(1, 6))
        if delim:
            toks = [("" if rng.random() < 0.25 else _word(rng, letters, 1, 3)) for _ in range(k)]
            if delim != " " and rng.random() < 0.3:
                toks[int(rng.integers(k))] = "a b"
            s = delim.join(toks)
            if s == "":  # an empty element with a delimiter is contested: two empty fields instead
                s = delim
        else:
            toks = [_word(rng, letters, 1, 3) for _ in range(k)]
            runs = ["".join(spaces[int(i)] for i in rng.integers(0, len(spaces), size=int(rng.integers(1, 4))))
                    for _ in range(k + 1)]
            s = "".join(r + t for r, t in zip(runs, toks))
            if maxsplit is None and rng.random() < 0.5:
                s += runs[-1]  # trailing whitespace (contested only where maxsplit leaves a suffix)
            if rng.random() < 0.1:
                s = "" if rng.random() < 0.5 else " " + spaces[-1] + " "
        out.append(s)
    return [_strings(out).reshape(shapes[0])]


def _split_oracle(ctx, x, **attrs):
    """:func:`conformance.reference.text.string_split`."""
    return ref.string_split(x, attrs.get("delimiter"), attrs.get("maxsplit"))


def _split_contested(ctx, attrs):
    x = ctx.values.get("X")
    if x is None:
        x = np.empty(ctx.shapes.get("X", ()), dtype=object)
        x[...] = "a"  # drawn data is never contested; only its shape can be (an empty tensor)
    return ref.split_contested(x, attrs.get("delimiter"), attrs.get("maxsplit"))


SPLIT_SHAPES = (
    Shape("N", {"X": "N"}, dims={"N": (1, 6)}),
    Shape("NxM", {"X": "NM"}, dims={"N": (1, 3), "M": (1, 3)}),
    Shape("rank0", {"X": ""}),
    Shape("NxMxK", {"X": "NMK"}, dims={"N": (1, 2), "M": (1, 2), "K": (1, 3)}),
    Shape("N=1", {"X": "1"}),
    Shape("1xN", {"X": "1N"}, dims={"N": (2, 5)}),
    Shape("N/long", {"X": "N"}, dims={"N": (6, 10)}),
    Shape("empty-string/delimiter", {"X": "3"}, {"delimiter": ","}, values={"X": _strings(["a,b", "", ",c"])},
          cycle=False),
    Shape("all-empty/delimiter", {"X": "2"}, {"delimiter": "::"}, values={"X": _strings(["", ""])}, cycle=False),
    Shape("empty-string/whitespace", {"X": "3"}, {"delimiter": ""}, values={"X": _strings(["", "   ", "a  b"])},
          cycle=False),
    Shape("maxsplit/trailing-whitespace", {"X": "2"}, {"delimiter": "", "maxsplit": 1},
          values={"X": _strings([" a  b  c  ", "x y "])}, cycle=False),
    Shape("zero-size", {"X": "0"}, cycle=False),
)
SPLIT_STATES = (
    Attrs({"delimiter": ""}, tag="delimiter-empty"),
    Attrs({"delimiter": ","}),
    Attrs({"delimiter": "::"}),
    Attrs({"delimiter": " "}),
    Attrs({"maxsplit": 1}),
    Attrs({"maxsplit": 0}),
    Attrs({"delimiter": ",", "maxsplit": 1}),
    Attrs({"delimiter": "::", "maxsplit": 2}),
    Attrs({"delimiter": " ", "maxsplit": 1}),
)
def _split_check(ctx, inputs, attrs):
    """Contested layouts are judged by either reading."""
    return "conformance.reference.text:check_split_either" if _split_contested(ctx, attrs) else None


STRING_SPLIT = Entry(
    "StringSplit", _split_oracle, family="shaped", shapes=SPLIT_SHAPES, attrs=SPLIT_STATES,
    string_numerics={"fields": _split_data}, numerics_classes=lambda t: ("fields",), per_type=70,
    contested=_split_contested, check=_split_check,
    errors=(Err("X of type int64 (T1 is tensor(string))", "int64-input", {}, ((3,),), types={"X": "int64"}),),
)


# ============================================================================ RegexFullMatch
def _regex_data(rng, ctx, shapes):
    """Strings the case's pattern fully matches and strings it does not (those it searches
    successfully among them), :data:`conformance.reference.text.REGEXES`."""
    yes, no = ref.REGEXES.get(ctx.attrs.get("pattern") or "", (("",), ("a", " ")))
    pool = list(yes) + list(no)
    n = int(np.prod(shapes[0], dtype=np.int64))
    # every candidate once where the tensor is large enough, then random ones
    order = list(rng.permutation(len(pool)))
    picks = [pool[int(i)] for i in order[:n]] + [pool[int(i)] for i in rng.integers(0, len(pool), size=max(0, n - len(pool)))]
    return [_strings(picks).reshape(shapes[0])]


def _regex_contested(ctx, attrs):
    if "pattern" not in ctx.given:
        return ("RegexFullMatch without pattern: the schema makes it optional with no default and the text does not "
                "say what its absence means (read as the empty pattern)")
    return None


REGEX_SHAPES = (
    Shape("N", {"X": "N"}, dims={"N": (8, 12)}),
    Shape("NxM", {"X": "NM"}, dims={"N": (2, 3), "M": (3, 5)}),
    Shape("rank0", {"X": ""}),
    Shape("Nx1", {"X": "N1"}, dims={"N": (4, 8)}),
    Shape("1xN", {"X": "1N"}, dims={"N": (4, 8)}),
    Shape("zero-size", {"X": "0"}, cycle=False),
)
REGEX_STATES = tuple(Attrs({"pattern": p}) for p in ref.REGEXES)
REGEX_FULL_MATCH = Entry(
    "RegexFullMatch", lambda ctx, x, **a: ref.regex_full_match(x, a.get("pattern")), family="shaped",
    shapes=REGEX_SHAPES, attrs=REGEX_STATES, string_numerics={"candidates": _regex_data},
    numerics_classes=lambda t: ("candidates",), per_type=len(REGEX_STATES) * 5 + 5, contested=_regex_contested,
    errors=tuple(Err(f"pattern {p!r} is not valid RE2 syntax ('This must be valid RE2 syntax'): {why}",
                     f"invalid-pattern-{k}", {"pattern": p}, ((3,),)) for k, (p, why) in
                 enumerate(ref.INVALID_REGEXES.items())),
)


# ============================================================================ TfIdfVectorizer
#: Pools of abstract tokens (:data:`conformance.reference.text.STRING_TOKENS` / ``INT_TOKENS``):
#: name -> (ngram_counts, the n-grams in pool order).
POOLS = {
    "A": ([0, 4, 10], [(0,), (1,), (2,), (3,), (0, 1), (1, 0), (2, 2), (0, 1, 2)]),
    "B": ([0, 0, 8], [(0, 1), (1, 1), (3, 4), (2, 0)]),
    "C": ([0, 6, 6], [(0,), (1,), (2,), (3,), (4,), (5,)]),
    "D": ([0], [(0,), (1,), (2,), (3,)]),
}
#: Dyadic weights (every partial sum exact in float32) and inexact ones.
W_EXACT = [0.5, 1.25, 3.0, 0.125, 2.0, 1.5, 0.75, 4.0]
W_INEXACT = [0.1, 1.3, 2.7, 0.3, 1.0 / 3.0, 5.9, 0.7, 1.1]


def _tf_pattern(name, template, pool, indexes, weights=None, dims=None, cycle=True):
    counts, _ = POOLS[pool]
    a = {"ngram_counts": counts, "ngram_indexes": indexes}
    if weights is not None:
        a["weights"] = weights[: len(indexes)]
    return Shape(name, {"X": template}, a, dims=dims or {"C": (4, 12), "N": (2, 3)}, cycle=cycle)


TF_SHAPES = (
    _tf_pattern("C/poolA/weights-exact", "C", "A", [3, 0, 7, 1, 5, 2, 9, 6], W_EXACT),
    _tf_pattern("NxC/poolA/weights-inexact", "NC", "A", [0, 1, 2, 3, 4, 5, 6, 7], W_INEXACT),
    _tf_pattern("C/poolB/no-1-grams", "C", "B", [2, 0, 3, 1]),
    _tf_pattern("1xC/poolC/1-grams", "1C", "C", [5, 4, 3, 2, 1, 0], W_INEXACT),
    _tf_pattern("C/short", "C", "A", [7, 6, 5, 4, 3, 2, 1, 0], W_EXACT, dims={"C": (1, 2)}),
    _tf_pattern("NxC/poolC/weights-inexact/long", "NC", "C", [1, 0, 3, 2, 5, 4], W_INEXACT,
                dims={"N": (2, 3), "C": (16, 24)}),
    _tf_pattern("C/poolA/weights-inexact/long", "C", "A", [7, 5, 3, 1, 0, 2, 4, 6], W_INEXACT, dims={"C": (20, 30)}),
    _tf_pattern("NxC/C=0", "NC", "A", [0, 1, 2, 3, 4, 5, 6, 7], W_EXACT, dims={"N": (2, 3), "C": (0, 0)},
                cycle=False),
    _tf_pattern("NxC/N=0", "NC", "C", [0, 1, 2, 3, 4, 5], None, dims={"N": (0, 0), "C": (3, 4)}, cycle=False),
    Shape("C/poolD/max_gram_length-beyond-ngram_counts", {"X": "C"},
          {"ngram_counts": POOLS["D"][0], "ngram_indexes": [0, 1, 2, 3], "min_gram_length": 1, "max_gram_length": 2,
           "max_skip_count": 1}, dims={"C": (5, 8)}, cycle=False),
)
#: (min_gram_length, max_gram_length, max_skip_count) settings.
GRAMS = ((1, 1, 0), (1, 2, 0), (2, 2, 1), (1, 3, 2))
TF_STATES = tuple(Attrs({"mode": m, "min_gram_length": lo, "max_gram_length": hi, "max_skip_count": s,
                         "ngram_counts": POOLS["A"][0], "ngram_indexes": list(range(8))},
                        tag=f"{m}/{lo}-{hi}/skip{s}") for m in ("TF", "IDF", "TFIDF") for lo, hi, s in GRAMS)


def _tokens(type_name: str) -> tuple:
    return {"string": ref.STRING_TOKENS, "int64": ref.INT64_TOKENS}.get(type_name, ref.INT_TOKENS)


def _pool_name(shape_name: str) -> str:
    return shape_name.split("pool")[1][0] if "pool" in shape_name else ("C" if "N=0" in shape_name else "A")


def _tf_pool(rng, point):
    """``pool_strings`` or ``pool_int64s`` by the input type: the pattern's pool of abstract tokens
    as strings or integers (deterministic; ``rng`` unused)."""
    t = dict(point.types)["T"]
    t = t[7:-1] if t.startswith("tensor(") else t
    toks = _tokens(t)
    _, grams = POOLS[_pool_name(point.shape)]
    flat = [toks[k] for g in grams for k in g]
    return {"pool_strings": flat} if t == "string" else {"pool_int64s": [int(v) for v in flat]}


def _tf_data(rng, ctx, shapes):
    """Token sequences: mostly the pool's tokens (so n-grams at every skip occur), some tokens
    outside the pool (they break n-grams)."""
    t = ctx.types["X"]
    toks = _tokens(t)
    n = int(np.prod(shapes[0], dtype=np.int64))
    p = np.array([3.0] * 4 + [1.0] * (len(toks) - 4))
    ids = rng.choice(len(toks), size=n, p=p / p.sum())
    vals = [toks[int(i)] for i in ids]
    out = np.empty(n, dtype=object)
    out[:] = vals
    return [out.reshape(shapes[0])]


def _tf_oracle(ctx, x, **attrs):
    """:func:`conformance.reference.text.tfidf`."""
    return ref.tfidf(x, attrs)


def _tf_tolerance(ctx, inputs, attrs, outputs):
    """Exact, or the relative bound of :func:`conformance.reference.text.tfidf_rtol`."""
    r = ref.tfidf_rtol(inputs[0], attrs)
    if r == 0:
        return {"Y": Tolerance(0.0, 0.0, exact=True)}
    return {"Y": Tolerance(0.0, r, variants=("product", "repeated-addition"))}


_POOL_A_INT = [int(ref.INT_TOKENS[k]) for g in POOLS["A"][1] for k in g]
_POOL_A_STR = [ref.STRING_TOKENS[k] for g in POOLS["A"][1] for k in g]
TFIDF = Entry(
    "TfIdfVectorizer", _tf_oracle, family="shaped", shapes=TF_SHAPES, attrs=TF_STATES, drawn_attrs=_tf_pool,
    string_numerics={"tokens": _tf_data}, int_numerics={"tokens": _tf_data}, numerics_classes=lambda t: ("tokens",),
    per_type=len(TF_STATES) * 7, tolerance=_tf_tolerance,
    errors=(
        Err("mode 'can be one of \"TF\" (term frequency), \"IDF\" ..., and \"TFIDF\"': BM25", "unknown-mode",
            {"mode": "BM25", "pool_int64s": _POOL_A_INT}, ((6,),), type_name="int64"),
        Err("pool_strings and pool_int64s: 'Either this or pool_int64s attributes must be present but not both'",
            "both-pools", {"pool_int64s": _POOL_A_INT, "pool_strings": _POOL_A_STR}, ((6,),), type_name="int64"),
        Err("'If pool_strings is set, the input must be a string tensor': an int64 input", "pool_strings-int-input",
            {"pool_strings": _POOL_A_STR}, ((6,),), type_name="int64"),
        Err("ngram_counts [0, 4, 9] leaves a 2-gram section of 5 items (a section of n-grams holds a multiple of n)",
            "ngram_counts-inconsistent", {"ngram_counts": [0, 4, 9], "pool_int64s": _POOL_A_INT}, ((6,),),
            type_name="int64"),
        Err("ngram_indexes 'parallel to the specified pool_* attribute': 5 indexes for 8 n-grams",
            "ngram_indexes-short", {"ngram_indexes": [0, 1, 2, 3, 4], "pool_int64s": _POOL_A_INT}, ((6,),),
            type_name="int64"),
        Err("weights: 'Its length equals to the size of ngram_indexes': 3 weights for 8", "weights-length",
            {"weights": [1.0, 2.0, 3.0], "pool_int64s": _POOL_A_INT}, ((6,),), type_name="int64"),
        Err("'Input can be either a 1-D or 2-D tensor': rank 3", "rank-3", {"pool_int64s": _POOL_A_INT},
            ((1, 2, 3),), type_name="int64"),
    ),
)

ENTRIES = (STRING_NORMALIZER, STRING_CONCAT, STRING_SPLIT, REGEX_FULL_MATCH, TFIDF)
register_entries(ENTRIES, family="text")
