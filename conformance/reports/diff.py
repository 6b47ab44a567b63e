"""Compare two results documents: what got worse, what got better, what else changed.

Cases are matched by id (ids carry a content hash, so the same id is the same case).
Categories:

* regressions: ``pass`` in the old run, anything else in the new one;
* fixes: not ``pass`` before, ``pass`` now;
* other changes: a different outcome, neither of the above (``error`` -> ``unsupported``...);
* new cases (only in the new run) and removed cases (only in the old run);
* accuracy drift: passing in both, but the worst error/tolerance over the outputs grew
  at least :data:`DRIFT_FACTOR`-fold to at least :data:`DRIFT_MIN` of the tolerance
  (still passing, but closer to the limit).

:func:`diff_results` computes the comparison; :func:`print_diff` prints it with rich;
:func:`render_diff_html` renders it as a self-contained, autoescaped HTML page.
"""

from __future__ import annotations

import math
import os
from collections import Counter
from pathlib import Path

from rich.console import Console
from rich.markup import escape
from rich.table import Table

from ..jsonsafe import decode_number
from .common import dtype_of, outcome_rank, score, summarize

#: Accuracy drift: the new worst ratio is at least this many times the old one...
DRIFT_FACTOR = 4.0
#: ... and at least this fraction of the tolerance.
DRIFT_MIN = 0.25


def _max_ratio(case: dict) -> float | None:
    """The worst error/tolerance ratio over the case's outputs (infinite where an output is
    infinitely wrong, e.g. a NaN where a number is expected); ``None`` when no output has one."""
    rs = [decode_number(o.get("ratio")) for o in case.get("outputs") or ()]
    rs = [r if not math.isnan(r) else math.inf for r in rs if r is not None]
    return max(rs) if rs else None


def _first_line(s: str | None, limit: int = 240) -> str:
    s = (s or "").strip().split("\n", 1)[0]
    return s if len(s) <= limit else s[:limit] + " ..."


def _meta(doc: dict) -> dict:
    be = doc.get("backend") or {}
    name = be.get("backend", "?")
    version = be.get(name) if isinstance(be.get(name), (str, int, float)) else None
    summary = summarize(doc.get("cases") or [])
    pct, num, den = score(summary)
    suite = doc.get("suite") or {}
    return {"backend": name, "backend_version": version, "content_hash": suite.get("content_hash"),
            "n_cases": len(doc.get("cases") or []), "summary": summary, "score": pct, "score_num": num,
            "score_den": den, "host": doc.get("host") or {}}


def _index(doc: dict, label: str, notes: list[str]) -> dict[str, dict]:
    out: dict[str, dict] = {}
    dup = 0
    for c in doc.get("cases") or []:
        cid = str(c.get("id"))
        if cid in out:
            dup += 1
        out[cid] = c
    if dup:
        notes.append(f"the {label} results list {dup} case id(s) more than once; the last record of each is used")
    return out


def _row(cid: str, old: dict | None, new: dict | None) -> dict:
    ref = new or old or {}
    return {
        "id": cid, "op": ref.get("op", ""), "dtype": dtype_of(ref),
        "old": old.get("outcome") if old else None, "new": new.get("outcome") if new else None,
        "old_message": _first_line(old.get("message")) if old else "",
        "new_message": _first_line(new.get("message")) if new else "",
        "old_ratio": _max_ratio(old) if old else None, "new_ratio": _max_ratio(new) if new else None,
    }


def diff_results(old: dict, new: dict) -> dict:
    """Compare two results documents (see the module docstring for the categories).

    Returns:
        ``{"old": meta, "new": meta, "same_suite": bool, "notes": [...], "regressions": [...],
        "fixes": [...], "changed": [...], "added": [...], "removed": [...], "drift": [...],
        "unchanged": int, "by_op": {op: Counter of categories}}``; each list holds rows
        ``{id, op, dtype, old, new, old_message, new_message, old_ratio, new_ratio}``.
    """
    notes: list[str] = []
    o_idx, n_idx = _index(old, "old", notes), _index(new, "new", notes)
    om, nm = _meta(old), _meta(new)
    same_suite = bool(om["content_hash"]) and om["content_hash"] == nm["content_hash"]
    if not same_suite:
        notes.append("the two runs are of different suites (content hashes differ): cases only in one of them "
                     "are listed as new or removed")
    res: dict[str, list] = {k: [] for k in ("regressions", "fixes", "changed", "added", "removed", "drift")}
    unchanged = 0
    by_op: dict[str, Counter] = {}
    for cid, n in n_idx.items():
        o = o_idx.get(cid)
        if o is None:
            cat = "added"
        else:
            oo, no = o.get("outcome"), n.get("outcome")
            if oo == no:
                cat = None
                if oo == "pass":
                    r0, r1 = _max_ratio(o), _max_ratio(n)
                    if r1 is not None and r1 >= DRIFT_MIN and (not r0 or r1 >= DRIFT_FACTOR * r0):
                        cat = "drift"
                if cat is None:
                    unchanged += 1
                    continue
            elif oo == "pass":
                cat = "regressions"
            elif no == "pass":
                cat = "fixes"
            else:
                cat = "changed"
        row = _row(cid, o, n)
        res[cat].append(row)
        by_op.setdefault(row["op"], Counter())[cat] += 1
    for cid, o in o_idx.items():
        if cid not in n_idx:
            row = _row(cid, o, None)
            res["removed"].append(row)
            by_op.setdefault(row["op"], Counter())["removed"] += 1
    for k, rows in res.items():
        if k == "drift":
            rows.sort(key=lambda r: -(r["new_ratio"] or 0))
        else:
            rows.sort(key=lambda r: (outcome_rank(r["new"] or r["old"] or ""), r["op"], r["id"]))
    return {"old": om, "new": nm, "same_suite": same_suite, "notes": notes, "unchanged": unchanged,
            "by_op": {k: dict(v) for k, v in sorted(by_op.items())}, **res}


def _score_text(m: dict) -> str:
    return "n/a" if m["score"] is None else f"{m['score']:.1f}% ({m['score_num']}/{m['score_den']})"


def _ratio(x) -> str:
    return "" if x is None else f"{x:.3g}"


def print_diff(d: dict, console: Console, *, limit: int = 50) -> None:
    """Print a comparison from :func:`diff_results` with rich (at most ``limit`` rows per list)."""
    om, nm = d["old"], d["new"]
    console.print(f"[bold]old[/bold]: {escape(str(om['backend']))} {escape(str(om['backend_version'] or ''))}, "
                  f"{om['n_cases']} cases, score {_score_text(om)}")
    console.print(f"[bold]new[/bold]: {escape(str(nm['backend']))} {escape(str(nm['backend_version'] or ''))}, "
                  f"{nm['n_cases']} cases, score {_score_text(nm)}")
    console.print(f"suite: {'same' if d['same_suite'] else '[yellow]different[/yellow]'} "
                  f"({escape(str(om['content_hash'])[:16])} / {escape(str(nm['content_hash'])[:16])})")
    for note in d["notes"]:
        console.print(f"[yellow]note:[/yellow] {escape(note)}")
    console.print(f"[red]{len(d['regressions'])} regression(s)[/red], [green]{len(d['fixes'])} fix(es)[/green], "
                  f"{len(d['changed'])} other change(s), {len(d['added'])} new, {len(d['removed'])} removed, "
                  f"{len(d['drift'])} accuracy drift, {d['unchanged']} unchanged")
    sections = (("regressions", "Regressions (pass -> not pass)", "red"), ("fixes", "Fixes (-> pass)", "green"),
                ("changed", "Other outcome changes", "yellow"), ("added", "New cases", "cyan"),
                ("removed", "Removed cases", "magenta"))
    for key, title, colour in sections:
        rows = d[key]
        if not rows:
            continue
        t = Table(title=f"{title}: {len(rows)}", title_style=f"bold {colour}", show_lines=False)
        t.add_column("case", overflow="fold")
        t.add_column("old")
        t.add_column("new")
        t.add_column("message", overflow="fold")
        for r in rows[:limit]:
            msg = r["new_message"] or (f"was: {r['old_message']}" if r["old_message"] else "")
            t.add_row(escape(r["id"]), r["old"] or "-", r["new"] or "-", escape(msg))
        console.print(t)
        if len(rows) > limit:
            console.print(f"... and {len(rows) - limit} more (see --html)")
    if d["drift"]:
        t = Table(title=f"Accuracy drift (still passing, error/tolerance grew >= {DRIFT_FACTOR:g}x to >= {DRIFT_MIN:g}): "
                        f"{len(d['drift'])}", title_style="bold")
        t.add_column("case", overflow="fold")
        t.add_column("old err/tol", justify="right")
        t.add_column("new err/tol", justify="right")
        for r in d["drift"][:limit]:
            t.add_row(escape(r["id"]), _ratio(r["old_ratio"]), _ratio(r["new_ratio"]))
        console.print(t)


def render_diff_html(d: dict) -> str:
    """Render a comparison from :func:`diff_results` as one self-contained HTML page (autoescaped)."""
    from .html import _env, _static

    env = _env()
    return env.get_template("diff.html.j2").render(d=d, style=_static(env, "report.css.j2"), score_text=_score_text,
                                                   ratio=_ratio)


def write_diff_html(d: dict, path: str | os.PathLike) -> Path:
    """Write :func:`render_diff_html` of ``d`` to ``path``."""
    path = Path(path)
    path.write_text(render_diff_html(d), encoding="utf-8")
    return path
