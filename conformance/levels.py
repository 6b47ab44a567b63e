"""Score layer-pattern cases at every graph-optimization level of a backend (issue 26).

A runtime's graph optimizer rewrites multi-node patterns (fusions, folded constants, new
layouts); a rewrite that fires where its precondition does not hold gives wrong values.  A run
therefore scores each layer-pattern case (:mod:`conformance.patterns`) once per level the backend
declares (``Backend.levels``: onnxruntime ``disable``, ``basic``, ``extended``, ``all``), like
:mod:`conformance.variants`: the case at level ``L`` is one more case (``Case.level``; id suffix
``@L``, so results.jsonl, resume, diff and junit keep working), one result record each with a
``level`` field.  Single-node cases are not expanded (they run at the backend's configured
level).  A backend without ``levels`` runs pattern cases once.

Classification of a pattern case over its levels (:func:`classify`):

* ``pass``: right at every level;
* ``optimizer``: right with optimizations disabled (the first level) and wrong at some other
  level: an optimizer failure, naming the levels;
* ``kernel``: wrong at every level: a kernel failure;
* ``other``: any other mix (unsupported or skipped at some level, or wrong at the first level
  only).

"Right" is the outcome ``pass``; "wrong" is ``fail`` or ``error`` (a rejected valid model).
"""

from __future__ import annotations

import copy
from collections import Counter, defaultdict
from collections.abc import Iterable

from .bundle import CaseRef
from .case import Case

PATTERN_DOMAIN = "pattern"
WRONG = ("fail", "error", "crash", "timeout")


class LevelRef(CaseRef):
    """A bundle case reference (:class:`conformance.bundle.CaseRef`) scored at one level: its id
    has the ``@level`` suffix and the case it loads has ``Case.level`` set."""

    __slots__ = ("level", "base_id")

    @classmethod
    def of(cls, ref: CaseRef, level: str) -> LevelRef:
        """``ref`` at ``level`` (the manifest entry is shared, not read again)."""
        new = cls.__new__(cls)
        for k in CaseRef.__slots__:
            setattr(new, k, getattr(ref, k))
        new.level, new.base_id = level, ref.id
        new.id = f"{ref.id}@{level}"
        return new

    def load(self, verify: bool = True) -> Case:
        """The case (:meth:`CaseRef.load`) with ``Case.level`` set."""
        case = super().load(verify)
        case.level = self.level
        return case

    def load_for_run(self) -> Case:
        """The case (:meth:`CaseRef.load_for_run`) with ``Case.level`` set."""
        case = super().load_for_run()
        case.level = self.level
        return case

    def __repr__(self) -> str:
        return f"LevelRef({self.id!r})"


def is_pattern(case) -> bool:
    """Whether ``case`` (a Case, a reference or a result record) is a layer-pattern case."""
    if isinstance(case, dict):
        return (case.get("domain") or "") == PATTERN_DOMAIN
    return (getattr(case, "domain", "") or "") == PATTERN_DOMAIN


def with_level(case, level: str):
    """``case`` (a :class:`Case` or :class:`CaseRef`) scored at ``level``."""
    if isinstance(case, CaseRef):
        return LevelRef.of(case, level)
    new = copy.copy(case)
    new.level = level
    return new


def expand(cases: list, levels: Iterable[str]) -> list:
    """Each layer-pattern case replaced by one case per level of ``levels`` (in that order);
    other cases unchanged.  No levels: ``cases`` unchanged."""
    levels = list(levels)
    if not levels:
        return list(cases)
    out = []
    for c in cases:
        if is_pattern(c):
            out.extend(with_level(c, lv) for lv in levels)
        else:
            out.append(c)
    return out


def base_id(case_id: str) -> str:
    """The id without its ``@level`` suffix."""
    head, sep, tail = case_id.rpartition("@")
    return head if sep and "/" not in tail else case_id


def classify(outcomes: dict[str, str], levels: list[str]) -> tuple[str, list[str]]:
    """``(class, wrong levels)`` of one pattern case from its outcome per level (module
    docstring); ``levels`` in order, the first the unoptimized one."""
    present = [lv for lv in levels if lv in outcomes]
    if not present:
        return "other", []
    wrong = [lv for lv in present if outcomes[lv] in WRONG]
    right = [lv for lv in present if outcomes[lv] == "pass"]
    if len(right) == len(present):
        return "pass", []
    if len(wrong) == len(present):
        return "kernel", wrong
    if outcomes.get(present[0]) == "pass" and wrong:
        return "optimizer", wrong
    return "other", wrong


def pattern_summary(records: list[dict], levels: list[str]) -> dict:
    """The layer-pattern section of a run's results (results.json ``patterns``, the report's
    section) from the pattern cases' result records.

    Returns:
        ``{"levels": levels, "families": {family: {level: {outcome: n}}}, "classes":
        {family: {class: n}}, "patterns": {pattern: {"family", "layer", "cases", "classes",
        "fired": {level: n cases whose optimized graph shows the target rewrite and whose graph at
        the first level does not}, "targets"}},
        "failures": [{"id", "pattern", "class", "levels", "outcomes", "responsible", "variation",
        "nodes", "near_miss", "message"}]}``.
    """
    by_case: dict[str, dict[str, dict]] = defaultdict(dict)
    for r in records:
        if not is_pattern(r):
            continue
        by_case[base_id(r["id"])][r.get("level") or "-"] = r
    levels = list(levels) or ["-"]
    fam_levels: dict = defaultdict(lambda: defaultdict(Counter))
    fam_classes: dict = defaultdict(Counter)
    patterns: dict = {}
    failures = []
    for cid, per in by_case.items():
        first = next(iter(per.values()))
        tags = first.get("tags") or {}
        fam = tags.get("pattern_family", "other")
        pat = tags.get("pattern", first.get("op"))
        p = patterns.setdefault(pat, {"family": fam, "layer": tags.get("layer"), "cases": 0,
                                      "classes": Counter(), "fired": Counter(), "targets": tags.get("targets", "")})
        p["cases"] += 1
        first_lv = next((lv for lv in levels if lv in per), None)
        base_ops = ((per[first_lv].get("optimized") or {}).get("ops") or []) if first_lv else []
        for lv, r in per.items():
            fam_levels[fam][lv][r["outcome"]] += 1
            ops = (r.get("optimized") or {}).get("ops")
            # fired: the optimized graph shows the target and the unoptimized one did not
            if ops and _fired(tags.get("targets", ""), ops) and not (base_ops and _fired(tags.get("targets", ""),
                                                                                           base_ops)):
                p["fired"][lv] += 1
        cls, wrong = classify({lv: r["outcome"] for lv, r in per.items()}, [lv for lv in levels if lv in per]
                              or list(per))
        fam_classes[fam][cls] += 1
        p["classes"][cls] += 1
        if cls in ("optimizer", "kernel") or (cls == "other" and wrong):
            worst = per[wrong[0]] if wrong else first
            detail = worst.get("detail") or {}
            failures.append({
                "id": cid, "pattern": pat, "class": cls, "levels": wrong,
                "outcomes": {lv: r["outcome"] for lv, r in per.items()},
                "responsible": sorted({(r.get("optimized") or {}).get("responsible") for r in per.values()} - {None}),
                "variation": detail.get("variation") or {k[2:]: v for k, v in tags.items() if k.startswith("v_")},
                "near_miss": tags.get("near_miss"), "dtype": tags.get("dtype"), "opset": first.get("opset"),
                "nodes": detail.get("nodes") or [], "message": worst.get("message", "")[:300],
                "ops": {lv: (r.get("optimized") or {}).get("ops") for lv, r in per.items()},
            })
    return {
        "levels": levels,
        "families": {f: {lv: dict(c) for lv, c in d.items()} for f, d in sorted(fam_levels.items())},
        "classes": {f: dict(c) for f, c in sorted(fam_classes.items())},
        "patterns": {k: {**v, "classes": dict(v["classes"]), "fired": dict(v["fired"])}
                     for k, v in sorted(patterns.items())},
        "failures": sorted(failures, key=lambda f: (f["pattern"], f["id"])),
    }


def _fired(targets: str, ops: list[str]) -> bool:
    """Whether the optimized graph's ``ops`` show the target rewrite (``targets``: the case's
    ``targets`` tag, ``backend=Op|dom:Op|!Op;...``, any backend's names): one of the named ops is
    present, and none of the ``!Op`` ones (a rewrite that removes a node: a folded Transpose)."""
    want, gone = set(), set()
    for part in targets.split(";"):
        _, _, names = part.partition("=")
        for n in names.split("|"):
            if n:
                (gone if n.startswith("!") else want).add(n.lstrip("!"))
    ops = set(ops)
    if gone & ops:
        return False
    return bool(want & ops) if want else bool(gone)
