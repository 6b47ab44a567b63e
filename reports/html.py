"""HTML report of one results document (jinja2, autoescaped).

The page shows the suite identity and backend environment, the counts per outcome,
an op x dtype matrix of outcomes, and every non-passing case with its message and
the measured error vs tolerance of each output.  It is one self-contained file
(inline CSS, no scripts, no network).
"""

from __future__ import annotations

import os
from collections import Counter, defaultdict
from pathlib import Path

import jinja2

#: Display order of outcomes (worst first after pass).
ORDER = ("pass", "fail", "error", "crash", "timeout", "unsupported", "xfail", "xpass", "skip")


def _env() -> jinja2.Environment:
    return jinja2.Environment(
        loader=jinja2.PackageLoader("reports", "templates"),
        autoescape=True,  # backend messages can contain anything
        undefined=jinja2.StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
    )


def _fmt(x) -> str:
    if x is None:
        return ""
    if isinstance(x, str):
        return x
    return f"{x:.3g}"


def matrix(cases: list[dict], row_key: str = "op", col_tag: str = "dtype") -> dict:
    """Outcome counts per (row, column): ``{"rows": [...], "cols": [...], "cells": {(r, c): Counter}}``."""
    cells: dict[tuple[str, str], Counter] = defaultdict(Counter)
    for c in cases:
        r = str(c.get(row_key, ""))
        col = str((c.get("tags") or {}).get(col_tag, "-"))
        cells[(r, col)][c["outcome"]] += 1
    rows = sorted({k[0] for k in cells})
    cols = sorted({k[1] for k in cells})
    return {"rows": rows, "cols": cols, "cells": cells, "worst": {k: worst_outcome(v) for k, v in cells.items()}}


#: Severity for colouring a cell by its worst outcome.
SEVERITY = ("fail", "crash", "error", "timeout", "xpass", "unsupported", "xfail", "skip", "pass")


def worst_outcome(counts: Counter) -> str:
    """The most severe outcome present in ``counts`` (see :data:`SEVERITY`)."""
    return next((o for o in SEVERITY if counts.get(o)), "skip")


def render_html(doc: dict) -> str:
    """Render a results document (see :mod:`conformance.results`) to an HTML string."""
    cases = doc["cases"]
    summary = doc.get("summary") or dict(Counter(c["outcome"] for c in cases))
    total = len(cases)
    decided = total - summary.get("skip", 0)
    passed = summary.get("pass", 0) + summary.get("xfail", 0)
    problems = [c for c in cases if c["outcome"] not in ("pass", "skip")]
    problems.sort(key=lambda c: (ORDER.index(c["outcome"]) if c["outcome"] in ORDER else 99, c["id"]))
    worst_ratio = defaultdict(float)
    for c in cases:
        if c["outcome"] == "pass":
            for o in c.get("outputs") or []:
                r = o.get("ratio")
                if isinstance(r, (int, float)):
                    key = (c["op"], (c.get("tags") or {}).get("dtype", "-"))
                    worst_ratio[key] = max(worst_ratio[key], float(r))
    tpl = _env().get_template("report.html.j2")
    return tpl.render(
        doc=doc,
        suite=doc.get("suite", {}),
        backend=doc.get("backend", {}),
        host=doc.get("host", {}),
        summary=summary,
        order=[o for o in ORDER if summary.get(o)],
        total=total,
        score=(100.0 * passed / decided) if decided else 0.0,
        m=matrix(cases),
        problems=problems,
        worst_ratio=sorted(worst_ratio.items()),
        fmt=_fmt,
    )


def write_html(doc: dict, path: str | os.PathLike) -> Path:
    """Render ``doc`` and write it to ``path``."""
    path = Path(path)
    path.write_text(render_html(doc), encoding="utf-8")
    return path
