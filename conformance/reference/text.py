"""Exact oracles of the text operators: StringNormalizer (10), StringConcat (20), StringSplit (20),
RegexFullMatch (20) and TfIdfVectorizer (9), and the data tables their cases draw from.

Every output is exact (strings, booleans, int64 counts) except TfIdfVectorizer's float ``Y``,
whose tolerance :func:`tfidf_tolerance` derives from the counts (docs/tolerance.md, "Text
operators").  Inputs are numpy object arrays of Python ``str`` (string tensors) or of Python
``int`` (integer tensors), as :mod:`conformance.ops.entry` hands them to an oracle.

What the suite avoids, and why (the oracle would otherwise have to choose between readings):

* **Case mapping** (:data:`CASED`): only letters whose lower/upper mapping is one character to
  one character, the same under Unicode's simple and full mappings, the same in every locale
  and round-trips (``lower(upper(c)) == c``): ASCII letters except ``i``/``I`` (Turkish and
  Azeri dotted/dotless i: ``I`` lowercases to ``ı`` in tr_TR), Latin-1 accented letters
  (é, ñ, ü, ç, ø, à), Greek letters other than sigma (Σ lowercases to σ or, word-finally, ς
  under the full mapping), Cyrillic.  Left out: ß (full uppercase ``SS``), the ligatures
  (ﬁ), titlecase digraphs (ǅ), ŉ/ǰ (full mappings of two characters), the Kelvin sign, µ and
  ſ (their case pairs do not round-trip), Lithuanian dotted forms, and characters outside the
  Basic Multilingual Plane (a 16-bit ``wchar_t`` sees them as two surrogates).
* **Whitespace** (:data:`WHITESPACE`): space, tab and newline only: Python's ``str.split``
  also splits on U+001C..U+001F, U+0085, U+00A0, U+3000... which C's ``isspace`` does not.
* **Regular expressions** (:data:`REGEXES`): only constructs whose meaning is the same in RE2
  (the syntax the text names) and Python's ``re`` on the data used: literals, ``.``, bracket
  classes with ranges and negation, ``* + ? {n} {n,m}`` (greedy and lazy), alternation,
  capturing and non-capturing groups, ``^``/``$`` at the ends, ``(?i)`` on ASCII data, escaped
  metacharacters, ``\\d`` on ASCII digits only.  Avoided: backreferences and lookaround (not
  RE2: :data:`INVALID_REGEXES` has them as invalid models), ``\\w``/``\\s``/``\\b``/``\\d`` on
  non-ASCII data (ASCII in RE2, Unicode in Python), POSIX classes ``[[:alpha:]]`` and ``\\pL``
  (RE2 only), ``\\Z`` (Python) vs ``\\z`` (RE2), ``\\C`` (RE2: one byte), ``$`` before a
  final newline (Python's ``$`` also matches there), nested quantifiers that backtrack
  exponentially in Python (``(a+)+b``).
"""

from __future__ import annotations

import re
from collections.abc import Sequence

import numpy as np

# ----------------------------------------------------------------------------- data tables
#: Letters whose case mapping is one-to-one, locale-independent and round-trips (module docstring).
CASED = ("a", "b", "c", "e", "h", "t", "x", "é", "ñ", "ü", "ç", "ø", "à", "α", "β", "ω", "д", "ж", "я")
#: Characters without case (digits, punctuation, CJK, a space).
UNCASED = ("0", "7", "-", ",", "日", "本", " ")
#: The whitespace the suite splits on (module docstring).
WHITESPACE = (" ", "\t", "\n")
#: Strings for StringConcat: empty, ASCII, non-ASCII (two-byte, three-byte, four-byte UTF-8, a
#: combining accent), spaces.
CONCAT_STRINGS = ("", "a", "ab", "Z", "é", "日本", "😀", "e\u0301", " ", "a b", "-1", "ω")
#: StringNormalizer's stopword lists (attribute ``stopwords``): mixed case, non-ASCII, a phrase
#: with a space (an element, not a word), the empty string.
STOPWORDS = (("the", "A", "éTé", "ДА"), ("and", "ω", "", "a b"))
#: TfIdfVectorizer's token vocabulary: abstract token k -> (string, int) value.  Tokens past
#: :data:`POOL_TOKENS` never appear in a pool (they break n-grams).
STRING_TOKENS = ("the", "cat", "é", "日本", "sat", "on", "a b", "mat")
INT_TOKENS = (94, 17, 36, 12, -5, 0, 2147483647, 28)
#: int64 inputs: a pool token beyond int32 whose low 32 bits are an out-of-pool token's (12), so a
#: kernel that narrows to int32 counts 12 as ``2^40 + 12``.
INT64_TOKENS = (94, 17, 36, 2 ** 40 + 12, -5, -(2 ** 62), 2147483647, 12)
POOL_TOKENS = 6

#: RegexFullMatch's patterns: pattern -> (strings it fully matches, strings it does not).  The
#: non-matching ones include strings the pattern *searches* successfully (a kernel that searches
#: or matches a prefix passes them), and non-ASCII ones where ``.`` must take a code point, not
#: a byte.
REGEXES: dict[str, tuple[tuple[str, ...], tuple[str, ...]]] = {
    "abc": (("abc",), ("abcd", "xabc", "ab", "", "ABC")),
    "a.c": (("abc", "aéc", "a日c", "a😀c", "a c"), ("ac", "abbc", "a\nc", "abcc", "xa.c")),
    "[a-c]+x?": (("a", "abcx", "cccc", "bx"), ("", "x", "abcxx", "abd", "dabc")),
    "[^0-9]*": (("", "abc", "é日", "- ,"), ("a1", "0", "abc9")),
    "(ab|cd)*": (("", "ab", "cdab", "ababcd"), ("a", "abc", "abca", "dc")),
    "(?:x|yz){2,3}": (("xx", "xyz", "yzyzx"), ("x", "xxxx", "yzyzyzyz", "xy")),
    "a{2}b?": (("aa", "aab"), ("a", "aaa", "aabb", "ab")),
    "a|ab": (("a", "ab"), ("abb", "b", "")),
    "x*": (("", "x", "xxx"), ("xy", "yx", "X")),
    "\\d+\\.\\d{1,2}": (("3.14", "0.5", "12.00"), ("3.", ".5", "3.141", "a3.14", "3,14")),
    "(?i)hello": (("hello", "HeLLo", "HELLO"), ("hello!", "hell", "say hello")),
    "日本.*": (("日本", "日本語", "日本 x"), ("日", "x日本", "本日本")),
    ".*": (("", "abc", "é日😀"), ("a\nb", "\n")),
    "[.]+|\\*": (("...", "*", "."), ("**", "a", ".*")),
    "^ab$": (("ab",), ("abab", "ab\n", "aab", "")),
    "[a-z]+?b": (("ab", "aab", "zzzb"), ("b", "aba", "abb!")),
    "(é|ñ)+": (("é", "ñéñ"), ("e", "é ", "n\u0303")),
}
#: Invalid patterns: pattern -> why (RE2 syntax).  The backreference and the lookahead are valid
#: in Python's ``re``: a kernel that compiles the pattern with ``re`` accepts them.
INVALID_REGEXES = {
    "(a": "unbalanced parenthesis",
    "[z-a]": "a character class range out of order",
    "(a)\\1": "a backreference (RE2 has none; Python's re accepts it)",
    "a(?=b)": "a lookahead (RE2 has none; Python's re accepts it)",
}


# ----------------------------------------------------------------------------- StringNormalizer
def _fold(s: str) -> str:
    """Case folding for the stopword comparison (the suite's letters fold the same by lower or
    upper, :data:`CASED`)."""
    return s.lower()


def string_normalizer(x: np.ndarray, case_change_action: str = "NONE", is_case_sensitive: int = 0,
                      stopwords: Sequence[str] | None = None, locale: str | None = None) -> np.ndarray:
    """StringNormalizer-10: remove the elements of ``x`` equal to a stopword (whole elements,
    compared case-insensitively unless ``is_case_sensitive``), then lower- or uppercase the rest.

    Args:
        x: object array of str, shape ``[C]`` or ``[1, C]``.
        case_change_action: ``"NONE"``, ``"LOWER"`` or ``"UPPER"``.
        is_case_sensitive: whether stopwords match only with the same case.
        stopwords: the stopwords (None: none).
        locale: the suite's letters map the same in every locale, except in the few cases that
            name a Turkish or Azeri locale (``tr_TR.UTF-8``) over the dotted and dotless i's:
            there ``i`` uppercases to ``İ`` and ``I`` lowercases to ``ı`` (Unicode SpecialCasing).

    Returns:
        object array of str, ``[C']`` or ``[1, C']`` (the kept elements in order); where every
        element is removed, ``[1]`` or ``[1, 1]`` holding ``""`` (the operator text).

    Raises:
        ValueError: an unknown ``case_change_action``, or ``x`` of another shape ("This operator
        only accepts [C]- and [1, C]-tensor").
    """
    if case_change_action not in ("NONE", "LOWER", "UPPER"):
        raise ValueError(f"unknown case_change_action {case_change_action!r}")
    x = np.asarray(x, dtype=object)
    if not (x.ndim == 1 or (x.ndim == 2 and x.shape[0] == 1)):
        raise ValueError(f"StringNormalizer accepts [C] and [1, C] only, not {list(x.shape)}")
    stops = list(stopwords or [])
    if is_case_sensitive:
        drop = set(stops)
        kept = [w for w in x.ravel() if w not in drop]
    else:
        drop = {_fold(s) for s in stops}
        kept = [w for w in x.ravel() if _fold(w) not in drop]
    turkic = bool(locale) and locale.split("_")[0].split(".")[0].lower() in ("tr", "az")
    if case_change_action == "LOWER":
        kept = [(w.replace("I", "ı").replace("İ", "i") if turkic else w).lower() for w in kept]
    elif case_change_action == "UPPER":
        kept = [(w.replace("i", "İ") if turkic else w).upper() for w in kept]
    if not kept:
        kept = [""]
    out = np.empty(len(kept), dtype=object)
    out[:] = kept
    return out.reshape((1, -1)) if x.ndim == 2 else out


# ----------------------------------------------------------------------------- StringConcat
def string_concat(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """StringConcat-20: ``x[i] + y[i]`` elementwise with multidirectional (numpy) broadcasting.

    Args / returns: object arrays of str.

    Raises:
        ValueError: shapes that do not broadcast.
    """
    x, y = np.asarray(x, dtype=object), np.asarray(y, dtype=object)
    shape = np.broadcast_shapes(x.shape, y.shape)
    xb, yb = np.broadcast_to(x, shape), np.broadcast_to(y, shape)
    out = np.empty(shape, dtype=object)
    for idx in np.ndindex(shape):
        out[idx] = xb[idx] + yb[idx]
    return out


# ----------------------------------------------------------------------------- StringSplit
def split_one(s: str, delimiter: str | None, maxsplit: int | None) -> list[str]:
    """The substrings of one element (StringSplit-20's text).

    * ``delimiter`` unset or ``""``: consecutive whitespace is one separator and leading and
      trailing whitespace is removed (so the suffix left by ``maxsplit`` has no trailing
      whitespace either); an empty or all-whitespace string gives no substring;
    * a delimiter: every occurrence splits (consecutive ones delimit empty strings); a string
      without it, the empty string included, is one substring (see :func:`split_contested`);
    * ``maxsplit``: at most that many splits from the left, the rest is the last substring.
    """
    n = -1 if maxsplit is None else int(maxsplit)
    if not delimiter:
        return s.strip(" \t\n\r\v\f").split(None, n)
    return s.split(delimiter, n)


def string_split(x: np.ndarray, delimiter: str | None = None, maxsplit: int | None = None) -> tuple:
    """StringSplit-20.

    Args:
        x: object array of str, any shape.
        delimiter / maxsplit: the attributes (None: unset).

    Returns:
        (Y, Z): Y object array of str of shape ``x.shape + [K]``, each element's substrings padded
        with ``""`` to ``K``, the largest count (``K = 0`` where there are none or ``x`` is empty);
        Z int64 counts (Python ints) of shape ``x.shape``.
    """
    x = np.asarray(x, dtype=object)
    parts = [split_one(s, delimiter, maxsplit) for s in x.ravel()]
    k = max((len(p) for p in parts), default=0)
    y = np.empty((len(parts), k), dtype=object)
    y[...] = ""
    for i, p in enumerate(parts):
        y[i, :len(p)] = p
    z = np.empty(len(parts), dtype=object)
    z[:] = [len(p) for p in parts]
    return y.reshape(x.shape + (k,)), z.reshape(x.shape)


def split_contested(x: np.ndarray, delimiter: str | None, maxsplit: int | None) -> str | None:
    """Why StringSplit's text leaves the output of ``x`` open, or None.

    * an empty element with a delimiter: the oracle follows split semantics (no delimiter found:
      the element itself, one substring ``""``), onnxruntime gives none;
    * an empty ``x``: "one additional rank ... (where the input tensor is not empty)";
    * whitespace splitting limited by ``maxsplit`` with whitespace after the suffix: "the
      trailing suffix of input string after the final split point" keeps it, "leading or
      trailing whitespace is removed in the output" removes it (the oracle removes it).
    """
    x = np.asarray(x, dtype=object)
    if x.size == 0:
        return "StringSplit of an empty tensor: Y has 'one additional rank ... (where the input tensor is not empty)'"
    if delimiter and any(s == "" for s in x.ravel()):
        return ("StringSplit of an empty string with a delimiter: one substring '' (split semantics, onnx.reference) "
                "or none (onnxruntime); the text does not say")
    if not delimiter and maxsplit is not None:
        for s in x.ravel():
            core = s.lstrip(" \t\n\r\v\f")
            if core != core.rstrip(" \t\n\r\v\f") and len(core.split(None, int(maxsplit))) > int(maxsplit):
                return ("StringSplit's suffix after maxsplit splits on whitespace: 'the trailing suffix ... after the "
                        "final split point' keeps its trailing whitespace, 'trailing whitespace is removed' does not")
    return None


# ----------------------------------------------------------------------------- RegexFullMatch
def regex_full_match(x: np.ndarray, pattern: str | None = None) -> np.ndarray:
    """RegexFullMatch-20: whether each element of ``x`` matches ``pattern`` as a whole (a full
    match, not a search).  The suite's patterns mean the same in RE2 and Python's ``re`` (module
    docstring), so ``re.fullmatch`` evaluates them.

    Args:
        x: object array of str.
        pattern: the pattern; None (the attribute absent) is read as the empty pattern.

    Returns:
        bool array of ``x``'s shape.

    Raises:
        ValueError: a pattern the suite lists as invalid RE2 (:data:`INVALID_REGEXES`) or that
        ``re`` cannot compile.
    """
    pattern = pattern or ""
    if pattern in INVALID_REGEXES:
        raise ValueError(f"invalid RE2 pattern {pattern!r}: {INVALID_REGEXES[pattern]}")
    try:
        rx = re.compile(pattern)
    except re.error as exc:
        raise ValueError(f"invalid pattern {pattern!r}") from exc
    x = np.asarray(x, dtype=object)
    out = np.zeros(x.shape, dtype=np.bool_)
    for idx in np.ndindex(x.shape):
        out[idx] = rx.fullmatch(x[idx]) is not None
    return out


# ----------------------------------------------------------------------------- TfIdfVectorizer
def pool_ngrams(pool: Sequence, ngram_counts: Sequence[int]) -> list[tuple]:
    """The pool's n-grams in pool order: ``ngram_counts[k]`` is where the (k+1)-grams start, so
    the k-th section holds ``(end - start) / (k + 1)`` n-grams of length ``k + 1``.

    Raises:
        ValueError: ``ngram_counts`` not increasing from 0 or beyond the pool, or a section whose
            length is not a multiple of its n.
    """
    starts = [int(v) for v in ngram_counts]
    if not starts or starts[0] != 0 or any(b < a for a, b in zip(starts, starts[1:])) or starts[-1] > len(pool):
        raise ValueError(f"ngram_counts {starts} inconsistent with a pool of {len(pool)}")
    out = []
    for k, start in enumerate(starts):
        end = starts[k + 1] if k + 1 < len(starts) else len(pool)
        n = k + 1
        if (end - start) % n:
            raise ValueError(f"the {n}-gram section of the pool has {end - start} items")
        out += [tuple(pool[i:i + n]) for i in range(start, end, n)]
    return out


def ngram_counts_of(row: Sequence, grams: dict[tuple, int], n_min: int, n_max: int, max_skip: int) -> np.ndarray:
    """Counts of the pool's n-grams (``grams``: n-gram -> pool position) in one row: every n in
    ``[n_min, n_max]``, every skip ``s`` in ``[0, max_skip]`` (items ``i, i + s + 1, ...``); a
    1-gram is the same item whatever the skip, so it is counted once."""
    counts = np.zeros(len(grams), dtype=np.int64)
    c = len(row)
    for n in range(n_min, n_max + 1):
        for s in ([0] if n == 1 else range(max_skip + 1)):
            step = s + 1
            for i in range(c - (n - 1) * step):
                g = tuple(row[i + j * step] for j in range(n))
                if g in grams:
                    counts[grams[g]] += 1
    return counts


def tfidf_counts(x: np.ndarray, attrs) -> tuple[np.ndarray, list[tuple]]:
    """(per row, the count of every pool n-gram; the pool's n-grams): the rows are ``x`` itself
    (``[C]``) or its rows (``[N, C]``).

    Raises:
        ValueError: both pools or neither, a pool of the other element kind than ``x``,
            ``ngram_indexes``/``weights`` not parallel to the pool, a rank other than 1 and 2.
    """
    ps, pi = attrs.get("pool_strings"), attrs.get("pool_int64s")
    if (ps is None) == (pi is None):
        raise ValueError("exactly one of pool_strings and pool_int64s")
    x = np.asarray(x, dtype=object)
    is_str = x.size and isinstance(x.ravel()[0], str)
    if ps is not None and x.size and not is_str:
        raise ValueError("pool_strings with an integer input")
    if x.ndim not in (1, 2):
        raise ValueError(f"TfIdfVectorizer takes [C] or [N, C], not {list(x.shape)}")
    grams = pool_ngrams(list(ps if ps is not None else pi), attrs["ngram_counts"])
    idx = list(attrs["ngram_indexes"])
    if len(idx) != len(grams):
        raise ValueError(f"{len(idx)} ngram_indexes for {len(grams)} pool n-grams")
    w = attrs.get("weights")
    if w is not None and len(w) != len(idx):
        raise ValueError(f"{len(w)} weights for {len(idx)} ngram_indexes")
    if attrs["mode"] not in ("TF", "IDF", "TFIDF"):
        raise ValueError(f"unknown mode {attrs['mode']!r}")
    lookup = {g: k for k, g in enumerate(grams)}
    rows = x.reshape(1, -1) if x.ndim == 1 else x
    counts = np.stack([ngram_counts_of([int(v) if not isinstance(v, str) else v for v in r], lookup,
                                       int(attrs["min_gram_length"]), int(attrs["max_gram_length"]),
                                       int(attrs["max_skip_count"])) for r in rows]) if len(rows) else \
        np.zeros((0, len(grams)), dtype=np.int64)
    return counts, grams


def tfidf(x: np.ndarray, attrs) -> np.ndarray:
    """TfIdfVectorizer-9: ``Y[..., ngram_indexes[k]]`` = the k-th pool n-gram's count (TF), its
    count truncated to 1 times ``weights[k]`` (IDF) or its count times ``weights[k]`` (TFIDF);
    weights default to 1; TF ignores them.  Output columns no n-gram maps to are 0.

    Args:
        x: object array of str or int, ``[C]`` or ``[N, C]``.
        attrs: every attribute (``weights`` are rounded to float32, as the model stores them;
            :func:`tfidf_counts`).

    Returns:
        float64 array ``[max(ngram_indexes) + 1]`` or ``[N, max(ngram_indexes) + 1]`` (exact: a
        count times a float32 weight).

    Raises:
        ValueError: as :func:`tfidf_counts`.
    """
    counts, _ = tfidf_counts(x, attrs)
    idx = [int(v) for v in attrs["ngram_indexes"]]
    # float attributes are stored as float32 (the model's FLOATS)
    w = np.float32(attrs.get("weights") or [1.0] * len(idx)).astype(np.float64)
    mode = attrs["mode"]
    vals = counts.astype(np.float64)
    if mode == "IDF":
        vals = np.minimum(vals, 1.0) * w
    elif mode == "TFIDF":
        vals = vals * w
    y = np.zeros((counts.shape[0], max(idx) + 1))
    for k, j in enumerate(idx):
        y[:, j] = vals[:, k]
    x = np.asarray(x)
    return y[0] if x.ndim == 1 else y


def tfidf_rtol(x: np.ndarray, attrs) -> float:
    """Relative error a kernel may make on TfIdfVectorizer's ``Y`` in float32 (module
    docstring of :mod:`conformance.ops.text`, docs/tolerance.md "Text operators").

    The expectation is ``fl32(c * w)`` (``c`` a count, ``w`` a float32 weight).  The text says
    "scale (by multiplication)": one product, correctly rounded, is the expectation exactly.  A
    kernel that adds ``w`` once per occurrence instead makes ``c - 1`` float32 roundings
    (Higham's ``gamma_{c-1}``), and the expectation's own rounding adds half an ulp:
    ``rtol = (c_max - 1) u / (1 - (c_max - 1) u) + u`` with ``u = 2^-24``.  0 (exact) where no
    weight is applied (TF, or no weights) or every partial sum ``j * w`` (``j <= c``) is exact in
    float32 (dyadic weights of few bits): every evaluation order gives the same float.
    """
    if attrs["mode"] == "TF" or not attrs.get("weights"):
        return 0.0
    counts, _ = tfidf_counts(x, attrs)
    if attrs["mode"] == "IDF":
        counts = np.minimum(counts, 1)
    w = np.float32(attrs["weights"]).astype(np.float64)
    # every partial sum j * w (j <= the count) exact in float32: any evaluation is exact
    exact = all(float(np.float32(j * wk)) == j * wk for col, wk in zip(counts.T, w)
                for j in range(1, int(col.max(initial=0)) + 1))
    if exact:
        return 0.0
    c = int(counts.max(initial=0))
    u = 2.0 ** -24
    return (c - 1) * u / (1 - (c - 1) * u) + u


def _split_other(s: str, delimiter: str | None, maxsplit: int | None) -> list[str]:
    """The other reading of the contested layouts (:func:`split_contested`): an empty element
    has no substring whatever the delimiter; maxsplit's suffix on whitespace keeps its trailing
    whitespace (Python's ``str.split(None, maxsplit)``)."""
    n = -1 if maxsplit is None else int(maxsplit)
    if s == "":
        return []
    if not delimiter:
        return s.split(None, n)
    return s.split(delimiter, n)


def check_split_either(inputs: dict, outputs: dict, attrs: dict) -> tuple[bool, str]:
    """Judge a contested StringSplit (``Case.check``, :func:`split_contested`): Y and Z equal,
    exactly, to the oracle's reading or to the other one (:func:`_split_other`); for an empty
    input, Y of shape ``X.shape + [0]`` or ``X.shape``.

    Args: the runner's feeds by name, outputs by name (``Y``, ``Z``), the node's attributes.
    Returns: (passed, which reading matched or why neither did).
    """
    x = np.asarray(inputs["X"], dtype=object)
    delim, maxsplit = attrs.get("delimiter"), attrs.get("maxsplit")
    y, z = np.asarray(outputs["Y"]), np.asarray(outputs["Z"])
    if x.size == 0:
        ok = y.shape in (x.shape + (0,), x.shape) and z.shape == x.shape
        return ok, f"empty input: Y {list(y.shape)}, Z {list(z.shape)}"
    for name, fn in (("the split reading", split_one), ("the other reading", _split_other)):
        parts = [fn(s, delim, maxsplit) for s in x.ravel()]
        k = max((len(p) for p in parts), default=0)
        want = np.empty((len(parts), k), dtype=object)
        want[...] = ""
        for i, p in enumerate(parts):
            want[i, :len(p)] = p
        want = want.reshape(x.shape + (k,))
        counts = np.array([len(p) for p in parts], dtype=np.int64).reshape(x.shape)
        if y.shape == want.shape and z.shape == counts.shape and (y.astype(object) == want).all() \
                and (z.astype(np.int64) == counts).all():
            return True, f"matches {name} of the contested element(s)"
    return False, "Y/Z match neither reading of the contested element(s)"
