"""The report's coverage section: what the suite covers, per operator version, and how the
backend fared on each covered type combination.

Input is the ``coverage`` entry of a results document, written by
:func:`conformance.execute.execute` as :func:`conformance.coverage.compute_coverage` of the
suite's cases with the run's outcomes (computed from the models, never from tags).  Older
results files have no such entry; the section is then left out.
"""

from __future__ import annotations

from .common import outcome_cell


def coverage_rows(cov: dict | None, order: list[str]) -> dict | None:
    """Rows for the template, or ``None`` when ``cov`` is missing.

    Args:
        cov: the results document's ``coverage`` (see :func:`conformance.coverage.compute_coverage`).
        order: outcomes in display order (for cell titles).

    Returns:
        ``{"ops": [{"key", "source", "versions": [row]}], "totals": coverage_totals(cov),
        "unmatched": [...]}``; a row has ``version``, ``deprecated``, ``value`` / ``error``
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
        ops.append({"key": key, "source": op["source"], "versions": rows})
    return {"ops": ops, "totals": coverage_totals(cov), "unmatched": cov.get("unmatched") or []}
