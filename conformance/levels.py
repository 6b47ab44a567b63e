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
from array import array
from collections import Counter, defaultdict
from collections.abc import Iterable, Sequence

from .bundle import CaseRef, CaseRefs, suite_hash
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
        new.id = level_id(ref.id, level)
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


def expand(cases, levels: Iterable[str]):
    """Each layer-pattern case replaced by one case per level of ``levels`` (in that order);
    other cases unchanged.  No levels: ``cases`` unchanged.  A bundle's compact references
    (:class:`conformance.bundle.CaseRefs`) give a :class:`LevelledRefs` over them."""
    levels = list(levels)
    if isinstance(cases, LevelledRefs):  # expanded before (another backend's run of the same suite)
        cases = cases.base
    if isinstance(cases, CaseRefs):
        return LevelledRefs(cases, levels) if levels else cases
    if not levels:
        return list(cases)
    out = []
    for c in cases:
        if is_pattern(c):
            out.extend(with_level(c, lv) for lv in levels)
        else:
            out.append(c)
    return out


class LevelledRefs(Sequence):
    """:func:`expand` of a bundle's :class:`~conformance.bundle.CaseRefs`, as compact: per case the
    index of its bundle case and its level (5 bytes); item ``j`` is that reference, or its
    :class:`LevelRef`, made when asked for.

    Attributes:
        base: the bundle's references.
        levels: the levels each layer-pattern case runs at, in order.
    """

    def __init__(self, base: CaseRefs, levels: list[str]):
        self.base, self.levels = base, list(levels)
        pattern = {k for k, (domain, _) in enumerate(base.kinds) if domain == PATTERN_DOMAIN}
        self._base, self._level = array("I"), bytearray()
        for i in range(len(base)):
            if base._kind[i] in pattern:
                for k in range(1, len(self.levels) + 1):
                    self._base.append(i)
                    self._level.append(k)
            else:
                self._base.append(i)
                self._level.append(0)
        self._hash: str | None = None

    def __len__(self) -> int:
        return len(self._base)

    def __getitem__(self, j):
        if isinstance(j, slice):
            return [self[k] for k in range(*j.indices(len(self)))]
        ref = self.base[self._base[j]]
        lv = self._level[j]
        return LevelRef.of(ref, self.levels[lv - 1]) if lv else ref

    def refs(self, indices) -> list:
        """``[self[j] for j in indices]``, the bundle cases' manifest entries read together
        (:meth:`conformance.bundle.CaseRefs.refs`: a worker's batch).

        Raises:
            conformance.bundle.BundleError: the manifest was replaced or edited since it was indexed.
        """
        indices = list(indices)
        base = self.base.refs([self._base[j] for j in indices])
        return [LevelRef.of(r, self.levels[self._level[j] - 1]) if self._level[j] else r
                for j, r in zip(indices, base)]

    def base_index(self, j: int) -> int:
        """The index in :attr:`base` of case ``j``."""
        return self._base[j]

    def id(self, j: int) -> str:
        """Case ``j``'s id (``@level`` for a levelled one), without reading the manifest."""
        lv = self._level[j]
        cid = self.base.id(self._base[j])
        return level_id(cid, self.levels[lv - 1]) if lv else cid

    def kind(self, j: int) -> tuple:
        """:meth:`CaseRefs.kind` of case ``j``'s bundle case."""
        return self.base.kind(self._base[j])

    @property
    def content_hash(self) -> str:
        """:attr:`conformance.suite.Suite.content_hash` of these cases (the levelled ones under their
        own ids), computed once."""
        if self._hash is None:
            def key(j: int) -> bytes:
                line, lv = self.base.key(self._base[j]), self._level[j]
                if lv:
                    cid, _, ch = line.partition(b"\0")
                    line = level_id(cid.decode("utf-8", "surrogatepass"), self.levels[lv - 1]).encode(
                        "utf-8", "surrogatepass") + b"\0" + ch
                return line
            self._hash = suite_hash(len(self), key)[0]
        return self._hash


def level_id(case_id: str, level: str) -> str:
    """The id of case ``case_id`` scored at ``level`` (:func:`base_id` undoes it)."""
    return f"{case_id}@{level}"


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


def pattern_summary(records: Iterable[dict], levels: list[str]) -> dict:
    """The layer-pattern section of a run's results (results.json ``patterns``, the report's
    section) from the pattern cases' result records (other records are skipped), a case's records
    together (as a run writes them).

    Raises:
        ValueError: a case's records are not together.

    Returns:
        ``{"levels": levels, "families": {family: {level: {outcome: n}}}, "classes":
        {family: {class: n}}, "patterns": {pattern: {"family", "layer", "cases", "classes",
        "fired": {level: n cases whose optimized graph shows the target rewrite and whose graph at
        the first level does not}, "targets"}},
        "failures": [{"id", "pattern", "class", "levels", "outcomes", "responsible", "variation",
        "nodes", "near_miss", "message"}]}``.
    """
    levels = list(levels) or ["-"]
    fam_levels: dict = defaultdict(lambda: defaultdict(Counter))
    fam_classes: dict = defaultdict(Counter)
    patterns: dict = {}
    failures = []

    def summarize_case(cid: str, per: dict[str, dict]) -> None:
        """Count one pattern case from its records by level."""
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

    # a case's records come together (a run gives its levels one after another): each case is
    # counted when the next begins, so no more than one case's records are held
    current, per, done = None, {}, set()
    for r in records:
        if not is_pattern(r):
            continue
        cid = base_id(r["id"])
        if cid != current:
            if current is not None:
                summarize_case(current, per)
                done.add(current)
            if cid in done:
                raise ValueError(f"the records of pattern case {cid} are not together")
            current, per = cid, {}
        detail = r.get("detail") or {}
        per[r.get("level") or "-"] = {
            "outcome": r["outcome"], "optimized": r.get("optimized"), "message": str(r.get("message") or "")[:300],
            "detail": {k: detail[k] for k in ("variation", "nodes") if k in detail},
            **({"tags": r.get("tags"), "opset": r.get("opset"), "op": r.get("op")} if not per else {}),
        }
    if current is not None:
        summarize_case(current, per)
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
