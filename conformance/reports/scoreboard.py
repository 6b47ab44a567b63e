"""Scoreboard: one suite, several backends, one page side by side.

Shows, per operator and backend, the outcome counts and pass rate, and every case on
which the backends disagree (different outcomes), with each backend's outcome and
message.  Cases that every backend declines the same way are not disagreements.
"""

from __future__ import annotations

import os
from collections import Counter, defaultdict
from pathlib import Path

from .common import SEVERITY
from .html import _env


def disagreements(docs: dict[str, dict]) -> list[dict]:
    """Cases whose outcome differs between backends: ``[{id, op, tags, outcomes: {backend: (outcome, message)}}]``."""
    by_id: dict[str, dict] = {}
    for name, doc in docs.items():
        for c in doc["cases"]:
            e = by_id.setdefault(c["id"], {"id": c["id"], "op": c["op"], "tags": c.get("tags", {}), "outcomes": {}})
            e["outcomes"][name] = (c["outcome"], c.get("message", ""))
    return [e for e in by_id.values() if len({o for o, _ in e["outcomes"].values()}) > 1]


def render_scoreboard(docs: dict[str, dict], unavailable: dict[str, str] | None = None) -> str:
    """Render the scoreboard page for ``{backend name: results document}``."""
    names = list(docs)
    counts: dict[tuple[str, str], Counter] = defaultdict(Counter)
    ops = set()
    for name, doc in docs.items():
        for c in doc["cases"]:
            counts[(c["op"], name)][c["outcome"]] += 1
            ops.add(c["op"])
    rates = {}
    for k, cnt in counts.items():
        total = sum(cnt.values()) - cnt.get("skip", 0)
        rates[k] = 100.0 * (cnt.get("pass", 0) + cnt.get("xfail", 0)) / total if total else 0.0
    dis = disagreements(docs)
    dis.sort(key=lambda e: (e["op"], e["id"]))
    pattern_counts = Counter(tuple(e["outcomes"].get(n, ("-", ""))[0] for n in names) for e in dis)
    return _env().get_template("scoreboard.html.j2").render(
        names=names, docs=docs, ops=sorted(ops), counts=counts, rates=rates, severity=SEVERITY,
        disagreements=dis, patterns=pattern_counts.most_common(), unavailable=unavailable or {},
    )


def write_scoreboard(docs: dict[str, dict], path: str | os.PathLike, unavailable: dict[str, str] | None = None) -> Path:
    """Render and write the scoreboard to ``path``."""
    path = Path(path)
    path.write_text(render_scoreboard(docs, unavailable), encoding="utf-8")
    return path
