"""The report's coverage section: what the suite covers, per operator version, and how the
backend fared on each covered type combination.

Input is the ``coverage`` entry of a results document, written by
:func:`conformance.execute.execute` as :func:`conformance.coverage.compute_coverage` of the
suite's cases with the run's outcomes (computed from the models, never from tags).  Older
results files have no such entry; the section is then left out.
"""

from __future__ import annotations

from collections import Counter, defaultdict

from .common import outcome_cell


def coverage_rows(cov: dict | None, order: list[str], families: dict[str, str] | None = None) -> dict | None:
    """Rows for the template, or ``None`` when ``cov`` is missing.

    Args:
        cov: the results document's ``coverage`` (see :func:`conformance.coverage.compute_coverage`).
        order: outcomes in display order (for cell titles).
        families: ``{op type: family}`` (:func:`conformance.reports.families.op_families`);
            operators missing there, or all when ``None``, are in ``"other"``.

    Returns:
        ``{"ops": [{"key", "source", "family", "versions": [row]}], "families": [family],
        "totals": coverage_totals(cov), "unmatched": [...]}``; a family (in
        :func:`conformance.reports.families.family_sort_key` order) has ``name``, ``ops`` (its
        entries of ``ops``, by key), ``versions``, ``value`` / ``error`` (case counts), ``covered`` /
        ``total`` (type combinations), ``missing`` (texts), ``style`` and ``cell`` / ``error_cell``
        (:func:`conformance.reports.common.outcome_cell` of the outcomes of all its covered
        combinations / error cases); a row has ``version``, ``deprecated``, ``value`` / ``error``
        (case counts), ``covered`` / ``total`` (type combinations), ``style`` (``full``,
        ``partial``, ``none``), ``combos`` (one cell per covered combination with its
        outcome counts: ``key``, ``n``, ``pass``, ``worst``, ``title``), ``missing`` (text per
        missing combination, with a declared reason where one exists), ``error_cell`` (the
        outcomes of the error cases; then the unexercised optional-I/O and attribute states,
        with their stated reason where one is declared) and ``details`` (optional-I/O patterns and attribute values
        of the value cases, as ``(name, text)`` pairs).
    """
    if not cov or not isinstance(cov, dict) or "ops" not in cov:
        return None
    from conformance.coverage import coverage_totals, missing_text, unexercised_text

    from .families import OTHER, family_sort_key

    families = families or {}
    ops = []
    for key, op in cov["ops"].items():
        rows = []
        for v, e in op["versions"].items():
            outcomes = e.get("outcomes") or {}
            combos = []
            for ck in e["covered"]:
                cell = outcome_cell(outcomes.get(ck, {}), order)
                cell["key"] = ck
                combos.append(cell)
            missing = missing_text(e, limit=None) + unexercised_text(e)
            details = [("optional I/O", ", ".join(f"{p} ({n})" for p, n in e["value"]["io_patterns"].items()) or "-")]
            details += [(name, ", ".join(f"{k} ({n})" for k, n in vals.items()))
                        for name, vals in e["value"]["attributes"].items()]
            details.append(("opsets", ", ".join(f"{k} ({n})" for k, n in e["value"]["opsets"].items()) or "-"))
            ncov = len(e["covered"])
            rows.append({
                "version": v, "deprecated": e["deprecated"], "value": e["value"]["cases"],
                "error": e["error"]["cases"], "covered": ncov, "total": e["total_combinations"],
                "style": "full" if e["gaps"] == 0 and e["value"]["cases"] else ("partial" if ncov else "none"),
                "combos": combos, "missing": missing,
                "error_cell": outcome_cell(e.get("error_outcomes") or {}, order) if e["error"]["cases"] else None,
                "details": details,
            })
        ops.append({"key": key, "source": op["source"], "family": families.get(key, OTHER),
                    "versions": rows, "_outcomes": [e.get("outcomes") or {} for e in op["versions"].values()],
                    "_error_outcomes": [e.get("error_outcomes") or {} for e in op["versions"].values()]})
    by_fam: dict[str, list[dict]] = defaultdict(list)
    for op in ops:
        by_fam[op["family"]].append(op)
    fams = []
    for name in sorted(by_fam, key=family_sort_key):
        members = sorted(by_fam[name], key=lambda o: o["key"])
        rows = [r for o in members for r in o["versions"]]
        outcomes, errors = Counter(), Counter()
        for o in members:
            for per_combo in o["_outcomes"]:
                for counts in per_combo.values():
                    outcomes.update(counts)
            for counts in o["_error_outcomes"]:
                errors.update(counts)
        covered, total = sum(r["covered"] for r in rows), sum(r["total"] for r in rows)
        fams.append({"name": name, "ops": members, "versions": len(rows), "value": sum(r["value"] for r in rows),
                     "error": sum(r["error"] for r in rows), "covered": covered, "total": total,
                     "missing": sum(len(r["missing"]) for r in rows),
                     "style": "full" if all(r["style"] == "full" for r in rows) else ("partial" if covered else "none"),
                     "cell": outcome_cell(outcomes, order) if outcomes else None,
                     "error_cell": outcome_cell(errors, order) if errors else None})
    for op in ops:
        del op["_outcomes"], op["_error_outcomes"]
    return {"ops": ops, "families": fams, "totals": coverage_totals(cov), "unmatched": cov.get("unmatched") or []}
