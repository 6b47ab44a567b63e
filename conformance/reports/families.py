"""Operator families for the HTML report: which family each operator belongs to, the
family-level summary at the top of the page, and matrices grouped by family.

A results document names each operator's family in ``doc["suite"]["families"]``
(``{op type: family}``, written by :func:`conformance.results.results_document`).  Older
results lack it; the operator table (:func:`conformance.registry.family`) is then asked,
and an operator it does not know is in :data:`OTHER`.

Families are shown in alphabetical order with :data:`OTHER` last, operators alphabetically
inside their family, so the same results give the same page.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Mapping

from .common import ABSENT, NUMBER, ORDER, outcome_cell, outcome_rank, score, weighted

__all__ = ["OTHER", "op_families", "family_sort_key", "family_summary", "group_matrix"]

#: The family of an operator outside the operator table.
OTHER = "other"


def op_families(doc: dict) -> dict[str, str]:
    """``{operator: family}`` for every operator of ``doc``'s cases (and coverage entries), the
    operator named by :func:`conformance.suite.op_key` (``domain:type`` outside ai.onnx).

    From ``doc["suite"]["families"]`` where it names the operator; otherwise from the
    operator table (:func:`conformance.registry.family` with the case's domain), and
    :data:`OTHER` when that cannot be asked or does not know the operator.  Never raises
    for a malformed ``families`` entry (non-string values are ignored).
    """
    given = (doc.get("suite") or {}).get("families")
    given = {str(k): v for k, v in given.items() if isinstance(v, str) and v} if isinstance(given, dict) else {}
    from ..suite import op_key

    wanted: dict[str, tuple[str, str]] = {}
    for c, _ in weighted(doc.get("cases") or ()):
        domain, op = str(c.get("domain") or ""), str(c.get("op", ""))
        key = op_key(op, domain)
        if key not in wanted:
            wanted[key] = (op[len(domain) + 1:] if domain and op.startswith(domain + ":") else op, domain)
    cov = doc.get("coverage")
    if isinstance(cov, dict) and isinstance(cov.get("ops"), Mapping):
        ops = cov["ops"]
        compact = hasattr(ops, "json_text")  # a run's coverage: entries parsed (and decorated) when read
        for key in ops:
            if compact and key in wanted and not key.startswith("ai.onnx:"):
                continue  # keyed as op_key keys it (domain:type): the entry would add nothing
            e = ops[key]
            if isinstance(e, dict) and "op" in e:
                domain = str(e.get("domain") or "")
                wanted.setdefault(op_key(e["op"], domain), (str(e["op"]), domain))
    out = {}
    lookup = None
    for key, (op, domain) in wanted.items():
        fam = given.get(key)
        if fam is None:
            if lookup is None:
                lookup = _registry_lookup()
            fam = lookup(op, domain)
        out[key] = fam
    return out


def _registry_lookup():
    try:
        from conformance import registry

        fn = registry.family
    except (ImportError, AttributeError):  # an operator table without families: everything is "other"
        return lambda op, domain: OTHER

    def lookup(op: str, domain: str) -> str:
        try:
            return str(fn(op, domain) or OTHER)
        except Exception:  # noqa: BLE001 - a foreign operator the table cannot resolve is just "other"
            return OTHER

    return lookup


def family_sort_key(name: str) -> tuple:
    """Sort key for family names: alphabetical, :data:`OTHER` last."""
    return (name == OTHER, name)


def _pattern(msg: str) -> tuple[str, str]:
    """A message's first line with numbers as ``#`` (cut to 300 characters), and its longest
    number-free piece (for the case list's search box)."""
    first = msg.strip().split("\n", 1)[0]
    pieces = sorted((p.strip() for p in NUMBER.split(first[:300])), key=len, reverse=True)
    return NUMBER.sub("#", first)[:300] or "(no message)", (pieces[0] if pieces else "")


def _bar(counts: Counter, order: list[str]) -> dict:
    cell = outcome_cell(counts, order)
    pct, num, den = score(counts)
    cell.update(score=pct, score_num=num, score_den=den)
    return cell


def family_summary(cases: list[dict], families: dict[str, str], order: list[str] | None = None,
                   problems: int = 3) -> list[dict]:
    """One row per family of the operators in ``cases``, in :func:`family_sort_key` order.

    Args:
        cases: case records of a results document.
        families: ``{op type: family}`` (:func:`op_families`); an operator missing there is in :data:`OTHER`.
        order: outcomes in display order for the bars (default :data:`conformance.reports.common.ORDER`).
        problems: how many of a family's most frequent problems to keep.

    Returns:
        ``[{"name", "n_ops", "n" (cases), "counts" ({outcome: cases}), "score", "score_num",
        "score_den" (:func:`conformance.reports.common.score`: percent or ``None``), "pass", "worst",
        "segs" (``(outcome, cases, percent)`` bar segments), "title", "problems": [{"outcome",
        "count", "pattern", "query", "ops"}] (the cases that count against the score, grouped by
        outcome and message with numbers as ``#``, most frequent first), "worst_ops": [(op, non-passing cases)]
        (up to three, most first), "ops": [same fields per operator, with "op" and its single most
        frequent "problem" or ``None``]}]``.
    """
    order = list(order or ORDER)
    per_op: dict[str, Counter] = defaultdict(Counter)
    groups: dict[tuple[str, str, str], dict] = {}
    op_groups: dict[tuple[str, str, str], int] = Counter()
    patterns: dict[str, tuple[str, str]] = {}
    for c, w in weighted(cases):
        op = str(c.get("op", ""))
        oc = str(c.get("outcome"))
        per_op[op][oc] += w
        if oc in ("pass", "skip", "xfail"):
            continue
        msg = str(c.get("message") or "")
        pq = patterns.get(msg)
        if pq is None:
            pq = patterns[msg] = _pattern(msg)
        fam = families.get(op, OTHER)
        key = (fam, oc, pq[0])
        g = groups.get(key)
        if g is None:
            g = groups[key] = {"outcome": oc, "count": 0, "pattern": pq[0], "query": pq[1], "ops": Counter()}
        g["count"] += w
        g["ops"][op] += w
        op_groups[(op, oc, pq[0])] += w
    by_fam: dict[str, list[str]] = defaultdict(list)
    for op in per_op:
        by_fam[families.get(op, OTHER)].append(op)
    fam_groups: dict[str, list[dict]] = defaultdict(list)
    for (fam, _, _), g in groups.items():
        fam_groups[fam].append(g)
    op_top: dict[str, tuple] = {}
    for (op, oc, pat), k in op_groups.items():
        cand = (-k, outcome_rank(oc), pat)
        if op not in op_top or cand < op_top[op]:
            op_top[op] = cand
    rows = []
    for fam in sorted(by_fam, key=family_sort_key):
        ops = sorted(by_fam[fam])
        total: Counter = Counter()
        op_rows = []
        for op in ops:
            total.update(per_op[op])
            r = _bar(per_op[op], order)
            t = op_top.get(op)
            r.update(op=op, problem=({"count": -t[0], "outcome": ORDER[t[1]] if t[1] < len(ORDER) else "?",
                                      "pattern": t[2]} if t else None))
            op_rows.append(r)
        top = sorted(fam_groups[fam], key=lambda g: (-g["count"], outcome_rank(g["outcome"]), g["pattern"]))[:problems]
        top = [{**g, "ops": ", ".join(f"{o} {k}" for o, k in sorted(g["ops"].items(), key=lambda kv: (-kv[1], kv[0]))[:3])}
               for g in top]
        bad = sorted(((op, r["n"] - r["pass"] - per_op[op].get("skip", 0)) for op, r in zip(ops, op_rows)),
                     key=lambda t: (-t[1], t[0]))
        row = _bar(total, order)
        row.update(name=fam, n_ops=len(ops), counts=dict(total), problems=top,
                   worst_ops=[t for t in bad if t[1] > 0][:3], ops=op_rows)
        rows.append(row)
    return rows


def group_matrix(m: dict, order: list[str], families: dict[str, str], feature: bool = False) -> dict | None:
    """A matrix (:func:`conformance.reports.html.matrix` or ``data_matrix``) grouped by family, for the page.

    With ``feature``, operators whose cases all lack the feature are left out, families left
    without an operator too (``None`` when nothing is left); columns without a case in the
    remaining rows are dropped.

    Returns:
        ``{"cols", "groups": [{"name", "ops": [op], "cells": {col: cell}}], "cells": {(op, col): cell}}``
        where a cell is :func:`conformance.reports.common.outcome_cell` (a family's cell sums
        its operators' counts, so its colour is the worst outcome among them).
    """
    rows = m["rows"]
    if feature:
        keep = {k[0] for k in m["cells"] if k[1] != ABSENT}
        rows = [r for r in rows if r in keep]
        if not rows:
            return None
    rowset = set(rows)
    used = {k[1] for k in m["cells"] if k[0] in rowset}
    cols = [c for c in m["cols"] if c in used]
    fam_ops: dict[str, list[str]] = defaultdict(list)
    for r in rows:
        fam_ops[families.get(r, OTHER)].append(r)
    fam_counts: dict[tuple[str, str], Counter] = defaultdict(Counter)
    for (r, c), counts in m["cells"].items():
        if r in rowset:
            fam_counts[(families.get(r, OTHER), c)].update(counts)
    groups = []
    for fam in sorted(fam_ops, key=family_sort_key):
        groups.append({"name": fam, "ops": sorted(fam_ops[fam]),
                       "cells": {c: outcome_cell(fam_counts[(fam, c)], order) for c in cols if (fam, c) in fam_counts}})
    return {"cols": cols, "groups": groups,
            "cells": {k: outcome_cell(v, order) for k, v in m["cells"].items() if k[0] in rowset}}

