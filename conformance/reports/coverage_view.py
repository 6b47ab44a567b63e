"""The report's coverage section: what the suite covers, per operator version, and how the
backend fared on each covered type combination.

Input is the ``coverage`` entry of a results document, written by
:func:`conformance.execute.execute` as :func:`conformance.coverage.compute_coverage` of the
suite's cases with the run's outcomes (computed from the models, never from tags).  Older
results files have no such entry; the section is then left out.
"""

from __future__ import annotations

from collections import Counter, defaultdict

from markupsafe import Markup

from .common import esc, outcome_cell


def coverage_rows(cov: dict | None, order: list[str], families: dict[str, str] | None = None) -> dict | None:
    """Rows for the template, or ``None`` when ``cov`` is missing.

    Args:
        cov: the results document's ``coverage`` (see :func:`conformance.coverage.compute_coverage`).
        order: outcomes in display order (for cell titles).
        families: ``{op type: family}`` (:func:`conformance.reports.families.op_families`);
            operators missing there, or all when ``None``, are in ``"other"``.

    Returns:
        ``{"families": [family], "totals": coverage_totals(cov) (counted in the same pass),
        "unmatched": [...]}``; a family
        (in :func:`conformance.reports.families.family_sort_key` order) has ``name``, ``n_ops``,
        ``ops`` (its operators by key, each ``{"key", "source", "family", "versions": [row]}``,
        made as they are iterated: the whole suite's rows took 20 MiB at once), ``versions``,
        ``value`` / ``error`` (case counts), ``covered`` / ``total`` (type combinations),
        ``missing`` (texts), ``style`` and ``cell`` / ``error_cell``
        (:func:`conformance.reports.common.outcome_cell` of the outcomes of all its covered
        combinations / error cases); a row has ``version``, ``deprecated``, ``value`` / ``error``
        (case counts), ``covered`` / ``total`` (type combinations), ``style`` (``full``,
        ``partial``, ``none``), ``combos_html`` (the page's cell of each covered combination, with
        its outcome counts: passed / cases, coloured by the worst, titled with the counts),
        ``missing`` (text per missing combination, with a declared reason where one exists; then
        the unexercised optional-I/O and attribute states, with their stated reason where one is
        declared), ``error_cell`` (the outcomes of the error cases) and ``details_html``
        (optional-I/O patterns and attribute values of the value cases, as the page's ``<dt>`` /
        ``<dd>`` pairs).  The cells and details are text, not objects: rows are kept for the
        template (:data:`_ROWS_KEPT`), and its loops over them wrote 45,000 pieces for the
        mixed bundle.
    """
    if not cov or not isinstance(cov, dict) or "ops" not in cov:
        return None
    from conformance.coverage import add_version_totals, empty_totals, unexercised_text

    from .families import OTHER, family_sort_key

    families = families or {}
    ops = cov["ops"]
    by_fam: dict[str, list[str]] = defaultdict(list)
    for key in ops:
        by_fam[families.get(key, OTHER)].append(key)
    fams = []
    # coverage_totals(cov) counted in this pass, from the entries it reads (reading them again for
    # the totals parsed and decorated every operator's entry once more)
    tot = empty_totals(cov)
    bare: dict[str, list[str]] = {}
    budget = _ROWS_KEPT  # characters of rows kept from the totals' pass for the template
    for name in sorted(by_fam, key=family_sort_key):
        members = sorted(by_fam[name])
        outcomes, errors = Counter(), Counter()
        n = value = error = covered = total = missing = 0
        full = True
        kept: dict[str, dict] = {}
        for key in members:  # one operator's entries at a time (a compact coverage parses each when read)
            op = ops[key]
            if budget > 0:  # its rows made now, from the entry just read, while they are small in all
                rows = [_row(v, e, order) for v, e in op["versions"].items()]
                budget -= sum(len(r["combos_html"]) + len(r["details_html"]) + sum(map(len, r["missing"])) + 200
                              for r in rows)
                if budget >= 0:
                    kept[key] = {"key": key, "source": op["source"], "family": name, "versions": rows}
                del rows
            for v, e in op["versions"].items():
                if add_version_totals(tot, e):
                    bare.setdefault(key, []).append(f"{key}-{v}")
                for counts in (e.get("outcomes") or {}).values():
                    outcomes.update(counts)
                errors.update(e.get("error_outcomes") or {})
                n, value, error = n + 1, value + e["value"]["cases"], error + e["error"]["cases"]
                covered, total = covered + len(e["covered"]), total + e["total_combinations"]
                missing += len(e["missing"]) + len(unexercised_text(e))
                full = full and _style(e) == "full"
            del op
        fams.append({"name": name, "n_ops": len(members), "ops": _Ops(ops, members, name, order, kept),
                     "versions": n, "value": value, "error": error, "covered": covered, "total": total,
                     "missing": missing, "style": "full" if full else ("partial" if covered else "none"),
                     "cell": outcome_cell(outcomes, order) if outcomes else None,
                     "error_cell": outcome_cell(errors, order) if errors else None})
    tot["bare_versions"] = [b for key in ops for b in bare.get(key, ())]  # in the coverage's order
    return {"families": fams, "totals": tot, "unmatched": cov.get("unmatched") or []}


#: Characters of coverage rows (their cells' and details' text, missing texts, 200 a row) that
#: :func:`coverage_rows` keeps from the pass that counts the families' totals, so that the template
#: does not parse those operators' entries again (the mixed bundle's: ~0.02 s of CPU); the rest, a
#: large suite's, are made again when the template reaches them (the whole suite's rows took 20 MiB).
_ROWS_KEPT = 1 << 19


def _style(e: dict) -> str:
    """A version's coverage class: ``full`` (no gap, value cases), ``partial`` (some covered), ``none``."""
    return "full" if e["gaps"] == 0 and e["value"]["cases"] else ("partial" if e["covered"] else "none")


class _Ops:
    """A family's operators as the template iterates them, each one's rows made when it is reached
    (or given made: ``kept``, by operator, each given once)."""

    def __init__(self, ops, members: list[str], family: str, order: list[str], kept: dict | None = None):
        self._ops, self._members, self._family, self._order = ops, members, family, order
        self._kept = kept or {}

    def __len__(self) -> int:
        return len(self._members)

    def __iter__(self):
        for key in self._members:
            made = self._kept.pop(key, None)
            if made is not None:
                yield made
                continue
            op = self._ops[key]
            yield {"key": key, "source": op["source"], "family": self._family,
                   "versions": [_row(v, e, self._order) for v, e in op["versions"].items()]}


#: A combination cell's text around its key, by (outcome order, outcome counts as items): what
#: :func:`outcome_cell` of those counts shows (at most 4,096 kept).
_CELLS: dict[tuple, tuple[str, str]] = {}


def _row(v: str, e: dict, order: list[str]) -> dict:
    """The template's row of one version entry (see :func:`coverage_rows`)."""
    from conformance.coverage import missing_text, unexercised_text

    outcomes = e.get("outcomes") or {}
    # a combination's cell: its key between a prefix and a suffix that its outcome counts make, made
    # once per distinct counts (the mixed bundle's 3,941 combinations have a few dozen)
    spans = []
    for ck in e["covered"]:
        counts = outcomes.get(ck, {})
        try:
            memo_key = (tuple(order), tuple(counts.items()))
            cut = _CELLS.get(memo_key)
        except (TypeError, AttributeError):  # unhashable counts: made each time
            memo_key, cut = None, None
        if cut is None:
            c = outcome_cell(counts, order)
            cut = (f'<span class="combo o-{esc(c["worst"])}" title="{esc(c["title"])}">',
                   f': {esc(c["pass"])}/{esc(c["n"])}</span> ')
            if memo_key is not None and len(_CELLS) < 4096:
                _CELLS[memo_key] = cut
        spans.append(f"{cut[0]}{esc(ck)}{cut[1]}")
    details = [("optional I/O", ", ".join(f"{p} ({n})" for p, n in e["value"]["io_patterns"].items()) or "-")]
    details += [(name, ", ".join(f"{k} ({n})" for k, n in vals.items()))
                for name, vals in e["value"]["attributes"].items()]
    details.append(("opsets", ", ".join(f"{k} ({n})" for k, n in e["value"]["opsets"].items()) or "-"))
    # the combinations' cells and the details as the page has them, joined here: a template loop wrote
    # 45,000 pieces for the mixed bundle's 7,300 cases
    combos_html = Markup("".join(spans))
    details_html = Markup("".join(f"<dt>{esc(name)}</dt><dd>{esc(text)}</dd>" for name, text in details))
    return {"version": v, "deprecated": e["deprecated"], "value": e["value"]["cases"], "error": e["error"]["cases"],
            "covered": len(e["covered"]), "total": e["total_combinations"], "style": _style(e),
            "missing": missing_text(e, limit=None) + unexercised_text(e),
            "error_cell": outcome_cell(e.get("error_outcomes") or {}, order) if e["error"]["cases"] else None,
            "combos_html": combos_html, "details_html": details_html}
