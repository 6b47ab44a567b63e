"""Definitions shared by the HTML report, the diff, the JUnit export and the package verifier.

* outcome ordering and severity (:data:`ORDER`, :data:`SEVERITY`, :func:`worst_outcome`);
* the score (:func:`score`), defined once so every view agrees;
* feature coordinates of a case for the report's matrices (:data:`FEATURES`, :func:`feature_value`);
* the command that reproduces one case of a run (:func:`repro_command`).
"""

from __future__ import annotations

import json
import math
import re
import shlex
from collections import Counter
from collections.abc import Iterable

from conformance.jsonsafe import encode_float
from conformance.runner import OUTCOMES

#: Display order of outcomes (pass first, then from worst to mildest).
ORDER = ("pass", "fail", "error", "crash", "timeout", "unsupported", "xfail", "xpass", "skip")

#: Severity for colouring a cell by its worst outcome (most severe first).
SEVERITY = ("fail", "crash", "error", "timeout", "xpass", "unsupported", "xfail", "skip", "pass")

#: Outcomes that count as passing in the score.
SCORED_PASS = ("pass", "xfail")

#: Outcomes left out of the score's denominator.
NOT_SCORED = ("skip",)

#: Outcomes that make ``run`` exit non-zero (the same list as the CLI's).
BAD = ("fail", "error", "crash", "timeout", "xpass")

#: Spec dtype names in display order; others sort after these, alphabetically.
DTYPE_ORDER = ("double", "float", "float16", "bfloat16", "float8e4m3fn", "float8e5m2", "int64", "int32",
               "int16", "int8", "uint64", "uint32", "uint16", "uint8", "bool", "string")

#: Feature matrices of the report: (key, title, explanation).  The key is a tag name;
#: ``opset`` falls back to the case's own ``opset`` field when the tag is absent.
FEATURES = (
    ("axis", "axis", "the axis attribute (LayerNormalization's normalisation axis)"),
    ("outputs", "optional outputs", "which optional outputs the model asks for (tag outputs)"),
    ("training_mode", "training mode", "BatchNormalization training_mode (1 = training, 0 = inference)"),
    ("opset", "opset version", "the opset the model imports"),
    ("params", "parameters", "scale/bias/statistics given as graph inputs or as initializers (tag params)"),
)

def esc(x) -> str:
    """:func:`markupsafe.escape` of ``x`` as text: a plain text's five characters replaced here, an
    int's decimal text, anything else (a Markup, an object with ``__html__``) by markupsafe (the
    page's cells call it ~16,000 times: markupsafe's Python wrapper and a Markup each cost more)."""
    t = type(x)
    if t is str:
        if "&" in x or "<" in x or ">" in x or "'" in x or '"' in x:
            return (x.replace("&", "&amp;").replace(">", "&gt;").replace("<", "&lt;")
                    .replace("'", "&#39;").replace('"', "&#34;"))
        return x
    if t is int:
        return str(x)
    from markupsafe import escape

    return str(escape(x))


#: A number in a message (the families' and the page's problem lists group messages with their
#: numbers replaced): ``[-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?``, written to begin with a
#: character set (its first character, then the rest by what that was) so that the regex engine
#: skips to where one can start: the same matches, a third of the work (tests/test_endrun_plans.py)
NUMBER = re.compile(r"[-+.\d](?:(?<=[-+])(?:\d+\.?\d*|\.\d+)|(?<=\d)\d*\.?\d*|(?<=\.)\d+)(?:[eE][-+]?\d+)?")

#: Shown for a case that has no value for a feature.
ABSENT = "\u2013"


def outcome_rank(outcome: str) -> int:
    """Position of ``outcome`` in :data:`ORDER` (unknown outcomes last)."""
    try:
        return ORDER.index(outcome)
    except ValueError:
        return len(ORDER)


def worst_outcome(counts: Counter | dict) -> str:
    """The most severe outcome present in ``counts`` (see :data:`SEVERITY`); ``skip`` when empty."""
    present = [o for o, n in counts.items() if n]
    known = [o for o in SEVERITY if counts.get(o)]
    if known:
        return known[0]
    return present[0] if present else "skip"


def outcome_cell(counts: Counter | dict, order: list[str]) -> dict:
    """One matrix cell of outcome counts: ``n`` (cases), ``pass`` (pass + xfail), ``worst``
    (:func:`worst_outcome`, ``skip`` when empty), ``segs`` (``(outcome, count, percent)`` bar
    segments in ``order``) and ``title`` (the counts as text)."""
    n = sum(counts.values())
    segs = [(o, counts[o], 100.0 * counts[o] / n) for o in order if counts.get(o)]
    return {"n": n, "pass": counts.get("pass", 0) + counts.get("xfail", 0), "worst": worst_outcome(counts),
            "segs": segs, "title": ", ".join(f"{o} {k}" for o, k, _ in segs)}


def dtype_key(name: str) -> tuple:
    """Sort key that puts dtypes in :data:`DTYPE_ORDER`, unknown ones after (alphabetically)."""
    return (DTYPE_ORDER.index(name), "") if name in DTYPE_ORDER else (len(DTYPE_ORDER), name)


def value_key(v: str) -> tuple:
    """Sort key for feature values: numbers numerically, then strings, the absent marker last."""
    if v == ABSENT:
        return (2, 0.0, "")
    try:
        return (0, float(v), v)
    except ValueError:
        return (1, 0.0, v)


def fmt_value(v) -> str:
    """A tag value as text: strings as they are, anything else as compact JSON."""
    t = type(v)
    if t is str:
        return v
    if t is int:
        return str(v)
    if t is bool:
        return "true" if v else "false"
    if v is None:
        return "null"
    if t is float:
        return repr(v) if math.isfinite(v) else encode_float(v)
    if isinstance(v, str):
        return str(v)
    return json.dumps(v, separators=(",", ":"), default=str)


def feature_value(case: dict, key: str) -> str:
    """The value of feature ``key`` for a case record, as text (:data:`ABSENT` if it has none)."""
    tags = case.get("tags") or {}
    if key in tags:
        return fmt_value(tags[key])
    if key == "opset" and case.get("opset") is not None:
        return fmt_value(case["opset"])
    return ABSENT


def dtype_of(case: dict) -> str:
    """The case's dtype tag as text (:data:`ABSENT` if it has none)."""
    return feature_value(case, "dtype")


def weighted(cases: Iterable[dict]) -> Iterable[tuple[dict, int]]:
    """``(case, how many)`` over ``cases``: a compact store's cases equal in operator, outcome and
    message come once, with their count, in the order of the first of each
    (:meth:`conformance.reports.casedata.SlimCases.grouped`); other cases one by one."""
    grouped = getattr(cases, "grouped", None)
    return grouped() if callable(grouped) else ((c, 1) for c in cases)


def summarize(cases: Iterable[dict]) -> dict[str, int]:
    """Counts per outcome: every outcome of :data:`conformance.runner.OUTCOMES`, then any unknown ones."""
    c: Counter = Counter()
    for case, k in weighted(cases):
        c[case.get("outcome")] += k
    out = {o: c.pop(o, 0) for o in OUTCOMES}
    out.update({str(k): v for k, v in sorted(c.items(), key=lambda kv: str(kv[0]))})
    return out


def score(summary: dict[str, int]) -> tuple[float | None, int, int]:
    """The report's score: ``(pass + xfail) / (cases - skip)``.

    Returns:
        ``(percent or None when no case was scored, numerator, denominator)``.
    """
    total = sum(summary.values())
    den = total - sum(summary.get(o, 0) for o in NOT_SCORED)
    num = sum(summary.get(o, 0) for o in SCORED_PASS)
    return ((100.0 * num / den) if den else None), num, den


def repro_prefix(run: dict | None, suite: dict | None = None) -> str | None:
    """The shell command that reruns a run's suite, without ``--match`` and ``--out``.

    ``onnx-conformance run --backend SPEC [--backend-option K=V ...] (--bundle BUNDLE | --ops OPS --seed N
    | --suite onnx-node) [--variants KINDS] [--xfail FILE]``, every argument quoted with
    :func:`shlex.quote`; ``--variants`` and ``--xfail`` only when the run recorded them
    (they change which cases exist and how outcomes are classified).  ``None`` when the
    results record neither the backend nor a way to rebuild the suite.
    """
    run = run or {}
    suite = suite or {}
    spec = run.get("backend_spec")
    if not spec:
        return None
    parts = ["onnx-conformance", "run", "--backend", str(spec)]
    for k, v in (run.get("backend_options") or {}).items():
        parts += ["--backend-option", f"{k}={v}"]
    if run.get("bundle"):
        parts += ["--bundle", str(run["bundle"])]
    elif run.get("suite") == "onnx-node":
        parts += ["--suite", "onnx-node"]
    else:
        ops = run.get("ops") or suite.get("ops")
        seed = run["seed"] if run.get("seed") is not None else suite.get("seed")
        if seed is None and suite.get("seeds"):
            seed = suite["seeds"]
        if not ops or seed is None:
            return None
        parts += ["--ops", ",".join(ops), "--seed", ",".join(map(str, seed)) if isinstance(seed, list) else str(seed)]
    if run.get("variants"):
        parts += ["--variants", ",".join(run["variants"]) if isinstance(run["variants"], list) else str(run["variants"])]
    if run.get("xfail"):
        parts += ["--xfail", str(run["xfail"])]
    return " ".join(shlex.quote(p) for p in parts)


def repro_command(run: dict | None, case_id: str, suite: dict | None = None, out: str = "repro") -> str | None:
    """The exact command that reruns one case: :func:`repro_prefix` + ``--match CASE_ID --out repro``."""
    prefix = repro_prefix(run, suite)
    if prefix is None:
        return None
    return f"{prefix} --match {shlex.quote(case_id)} --out {shlex.quote(out)}"
