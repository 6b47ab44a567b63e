"""Coverage of operator specifications, measured from the cases' models.

Nothing is declared by hand and tags are not read: for every case the single-node
model (``case.model``) is inspected:

* the node's op type and domain, and the opset the model imports for that domain ->
  the schema version in force (highest ``since_version`` <= opset, as
  ``onnx.defs.get_schema(op, opset, domain).since_version``; :mod:`conformance.opspec`);
* the element type bound to each type parameter: the graph's inputs, outputs,
  value_info and initializers matched, by the node's input/output names, to the schema's
  formal inputs/outputs (position; a variadic last formal takes the rest).  A parameter no
  present formal binds is taken from an attribute where :data:`conformance.analysis.ATTRIBUTE_TYPE_PARAMS`
  says the spec makes that attribute choose it (LayerNormalization's ``U`` =
  ``stash_type``), else it stays unbound (``*``);
* which formal inputs/outputs are present (non-empty node names);
* attribute values (absent = the schema default).

Per operator and version it then reports which combinations of the schema's type
parameters (:func:`conformance.opspec.type_combinations`) have value cases and which do
not, the optional-I/O patterns, the attribute values (INT/STRING: the set of values;
FLOAT: absent / explicit default / non-default; lists: the distinct values) -- value
cases and error cases separately.

A missing combination is a gap unless :data:`DECLARED_UNBUILDABLE` gives a reason why
no case can exercise it although the spec allows it.  Combinations outside a version's
constraints are not gaps and are never listed as missing (they appear, for error cases,
under ``outside_constraints``).
"""

from __future__ import annotations

import functools
import itertools
import json
import sys
from collections import Counter, defaultdict
from collections.abc import Iterable, Iterator, Mapping
from .analysis import UNBOUND, _attr_class, analyse_case
from .compact import DiskSpool
from .jsonsafe import dumps
from .opspec import OpSpec, VersionSpec, combination_notes, op_spec, type_combinations

#: (op, since_version, combination as a sorted tuple of (param, type)) -> reason no case can
#: exercise a combination the spec allows.  Only for true impossibilities; empty is fine.
DECLARED_UNBUILDABLE: dict[tuple[str, int, tuple[tuple[str, str], ...]], str] = {}

#: (op key -- ``op`` or ``domain:op`` --, since_version, an :func:`_unexercised` item) -> why
#: no value case can do it.  Such items are listed with their reason and not counted.
DECLARED_UNEXERCISED: dict[tuple[str, int, str], str] = {
    **{("Dropout", v, "optional output mask never present"):
       "the mask of versions 1-7 has type T and the text does not say what it holds" for v in (1, 6, 7)},
    ("com.microsoft:SkipSimplifiedLayerNormalization", 1, "optional output mean never present"):
        "a simplified (RMS) normalization computes no mean; the slot is inherited from SkipLayerNormalization "
        "and its content is undefined",
    **{(op, v, "attribute stash_type only given its default value"):
       "the text defines stage-one precision by the example stash_type=1 (float32) only and no type constraint "
       "lists other admissible values" for op, v in (("GroupNormalization", 21), ("RMSNormalization", 23))},
}

_MAX_LIST_VALUES = 20


# ----------------------------------------------------------------------------- aggregation
def _combo_key(combo: dict[str, str], params: list[str]) -> str:
    return _combo_key_of(tuple(combo.get(p, UNBOUND) for p in params), tuple(params))


@functools.lru_cache(maxsize=4096)
def _combo_key_of(types: tuple[str, ...], params: tuple[str, ...]) -> str:
    return ", ".join(f"{p}={_short(t)}" for p, t in zip(params, types))


def _short(t: str) -> str:
    """``tensor(float)`` -> ``float`` (also inside ``a|b`` conflicts)."""
    return "|".join(x[7:-1] if x.startswith("tensor(") and x.endswith(")") else x for x in t.split("|"))


def _pattern(a: dict) -> str:
    return f"{','.join(a['inputs'])} -> {','.join(a['outputs'])}"


def _block(analyses: list[dict], vs: VersionSpec) -> dict:
    """Counts of one (op, version) over value or error cases."""
    params = list(vs.type_constraints)
    allowed = {p: set(ts) for p, ts in vs.type_constraints.items()}
    combos: Counter = Counter()
    partial: Counter = Counter()
    outside: Counter = Counter()
    patterns: Counter = Counter()
    attrs: dict[str, Counter] = defaultdict(Counter)
    opsets: Counter = Counter()
    for a in analyses:
        c = a["combo"]
        key = _combo_key(c, params)
        if any(c[p] != UNBOUND and c[p] not in allowed[p] for p in params):
            outside[key] += 1
        elif any(c[p] == UNBOUND for p in params):
            partial[key] += 1
        else:
            combos[key] += 1
        patterns[_pattern(a)] += 1
        opsets[str(a["opset"])] += 1
        for name, v in a["attributes"].items():
            attrs[name][v] += 1
    return {
        "cases": len(analyses),
        "combinations": dict(sorted(combos.items())),
        "partial_combinations": dict(sorted(partial.items())),
        "outside_constraints": dict(sorted(outside.items())),
        "io_patterns": dict(sorted(patterns.items())),
        "attributes": {k: dict(sorted(v.items())) for k, v in sorted(attrs.items())},
        "opsets": dict(sorted(opsets.items(), key=lambda kv: int(kv[0]) if kv[0].isdigit() else -1)),
    }


def _unexercised(vs: VersionSpec, values: list[dict]) -> list[str]:
    """What the value cases of a version never do: an optional formal never present or never
    omitted; an attribute never given, never left out (when it has a default) or only given
    its default value.  Empty when there is no value case (the version is bare anyway)."""
    if not values:
        return []
    out = []
    for kind, formals in (("input", vs.inputs), ("output", vs.outputs)):
        for f in formals:
            if f.option != "optional":
                continue
            seen = [f.name in a[kind + "s"] for a in values]
            if not any(seen):
                out.append(f"optional {kind} {f.name} never present")
            elif all(seen):
                out.append(f"optional {kind} {f.name} never omitted")
    for name, spec_attr in vs.attributes.items():
        absent = _attr_class(spec_attr, False, None)
        given = [c for c in (a["attributes"][name] for a in values) if c != absent]
        if not given:
            out.append(f"attribute {name} never given")
            continue
        if spec_attr.default is not None and len(given) == len(values):
            out.append(f"attribute {name} never left at its default")
        if spec_attr.default is not None and all(c == _attr_class(spec_attr, True, spec_attr.default) for c in given):
            out.append(f"attribute {name} only given its default value")
    return out


def _entry_unbuildable(spec: OpSpec, version: int, combo: dict[str, str]) -> str | None:
    """The reason the operator table gives for not building a combination (an entry's
    ``type_filter`` or a value kind the engine has no model for), if the operator is an entry."""
    from . import registry
    from .ops.engine import ENTRIES, skipped_combinations

    registry.available_ops()  # loads the operator table (coverage of a bundle loads no generator)
    entry = ENTRIES.get((spec.domain, spec.op))
    if entry is None:
        return None
    return skipped_combinations(entry).get((version, _combo_label(combo)))


def _declared_unbuildable(declared: dict, version: int, combo: dict[str, str]) -> str | None:
    """The reason a bundle's manifest gives (``declared``: its operator's entry of the manifest's
    ``declared``, :func:`conformance.bundle_write.op_facts`) for not building a combination, if any."""
    return (declared.get(str(version)) or {}).get(_combo_label(combo))


def _combo_label(combo: dict[str, str]) -> str:
    """A type combination (``{param: "tensor(float)"}``) as the operator table labels the ones it
    skips (:func:`conformance.ops.engine.types_label` of the element type names)."""
    from .ops.engine import types_label

    return types_label({p: t[7:-1] if t.startswith("tensor(") else t for p, t in combo.items()})


def _version_entry(spec: OpSpec, version: int, pairs: list[tuple[str, dict]], outcomes=None,
                   declared: dict | None = None) -> dict:
    """The coverage entry of one version from its cases' ``(id, analysis)`` pairs; the reasons for
    combinations not built from ``declared`` (the operator's entry of a bundle manifest's
    ``declared``) where given, else from the operator table."""
    analyses = [a for _, a in pairs]
    vs = spec.versions[version]
    op_key = f"{spec.domain}:{spec.op}" if spec.domain else spec.op
    params = list(vs.type_constraints)
    value = _block([a for a in analyses if not a["error"]], vs)
    error = _block([a for a in analyses if a["error"]], vs)
    all_combos = type_combinations(vs)
    covered, missing = [], []
    for combo in all_combos:
        key = _combo_key(combo, params)
        if key in value["combinations"]:
            covered.append(key)
            continue
        partial = sum(n for k, n in value["partial_combinations"].items()
                      if all(x.endswith(f"={UNBOUND}") or x in key.split(", ") for x in k.split(", ")))
        entry = {"combination": sys.intern(key), "partial_cases": partial}  # interned: 22,000 in a whole suite
        reason = DECLARED_UNBUILDABLE.get((spec.op, version, tuple(sorted(combo.items())))) or (
            _entry_unbuildable(spec, version, combo) if declared is None else
            _declared_unbuildable(declared, version, combo))
        if reason:
            entry["declared_unbuildable"] = sys.intern(reason)
        missing.append(entry)
    entry = {
        "deprecated": vs.deprecated,
        "type_params": {p: [_short(t) for t in ts] for p, ts in vs.type_constraints.items()},
        "param_notes": combination_notes(vs),
        "optional_formals": {"inputs": [f.name for f in vs.inputs if f.option == "optional"],
                             "outputs": [f.name for f in vs.outputs if f.option == "optional"]},
        "total_combinations": len(all_combos),
        "covered": covered,
        "missing": missing,
        "gaps": sum(1 for m in missing if "declared_unbuildable" not in m),
        "unexercised": [u for u in _unexercised(vs, [a for a in analyses if not a["error"]])
                        if (op_key, version, u) not in DECLARED_UNEXERCISED],
        "declared_unexercised": {u: r for (k, v, u), r in DECLARED_UNEXERCISED.items()
                                 if k == op_key and v == version},
        "value": value,
        "error": error,
    }
    if outcomes is not None:
        _add_outcomes(entry, params, pairs, outcomes)
    return entry


def _add_outcomes(entry: dict, params: list[str], pairs: list[tuple[str, dict]], outcomes: Mapping[str, str]) -> None:
    """Add ``outcomes`` and ``error_outcomes`` to a version entry (see :func:`compute_coverage`)."""
    by_combo: dict[str, Counter] = defaultdict(Counter)
    err: Counter = Counter()
    for cid, a in pairs:
        o = outcomes.get(cid)
        if o is None:
            continue
        if a["error"]:
            err[o] += 1
        else:
            by_combo[_combo_key(a["combo"], params)][o] += 1
    entry["outcomes"] = {k: dict(sorted(v.items())) for k, v in sorted(by_combo.items())}
    entry["error_outcomes"] = dict(sorted(err.items()))


def compute_coverage(cases: Iterable, outcomes: Mapping[str, str] | None = None, *,
                     analyses: Iterable[dict] = ()) -> dict:
    """Coverage of the operators in ``cases``, per operator and version (JSON-serialisable).

    Args:
        cases: :class:`~conformance.case.Case` objects (only ``case.model``,
            ``case.expect_error`` and ``case.id`` are read; tags are ignored).
        outcomes: case id -> outcome of a run; when given, every version entry also has
            ``outcomes`` (type-combination key -> {outcome: count} over its value cases)
            and ``error_outcomes`` ({outcome: count} over its error cases), so a report
            can say which covered combinations a backend passes.
        analyses: :func:`analyse_case` results computed elsewhere (the runner's workers, which
            read the models), counted with those of ``cases``; each a dict with its ``id``, or an
            ``(id, analysis)`` pair (equal analyses may then share one dict).

    Returns:
        ``{"ops": {key: {"op", "domain", "source", "versions": {since: entry}}},
        "unmatched": [{"id", "problem"}], "cases": n}``, ``key`` = ``op`` or
        ``domain:op``.  Each version entry has ``deprecated``, ``type_params``,
        ``param_notes``, ``total_combinations``, ``covered`` (keys such as
        ``"T=float, U=float"``), ``missing`` (``combination``, ``partial_cases``: value cases
        where a parameter was unbound but the others match, optional
        ``declared_unbuildable``), ``gaps``, ``unexercised`` (optional formals never present
        or never omitted, attributes never given, never left out or only at their default,
        in the value cases) and the ``value`` / ``error`` blocks
        (``cases``, ``combinations``, ``partial_combinations``, ``outside_constraints``,
        ``io_patterns``, ``attributes``, ``opsets``).  Every version of every operator is
        listed, also versions without cases.
    """
    patterns: list = []
    by_op, unmatched, n = _group(itertools.chain((analyse_case(c) for c in cases), analyses), patterns)
    ops = {}
    for (domain, op), analyses in sorted(by_op.items()):
        spec = op_spec(op, domain)
        versions = {}
        for v in spec.since_versions:
            versions[str(v)] = _version_entry(spec, v, [p for p in analyses if p[1]["version"] == v], outcomes)
        ops[f"{domain}:{op}" if domain else op] = {"op": op, "domain": domain, "source": spec.source,
                                                   "versions": versions}
    cov = {"cases": n, "ops": ops, "unmatched": unmatched}
    if patterns:  # layer-pattern cases: only where the suite has some (other coverage unchanged)
        cov["patterns"] = pattern_coverage(patterns, outcomes)
    return cov


def pattern_coverage(pairs: list[tuple[str, dict]], outcomes: Mapping[str, str] | None = None) -> dict:
    """The layer patterns of ``pairs`` (``(id, analysis)`` of pattern cases, :mod:`conformance.patterns`):

    Returns:
        ``{"patterns": {name: {"layer", "family", "exporter", "cases", "near_miss_cases",
        "dtypes", "opsets", "axes": {axis: {value: n}}, "missing": ["axis=value" the pattern
        declares and no case has], "near_misses": {"axis=value": n}, "outcomes": {outcome: n}}},
        "layers": {layer: [pattern names]}}``.
    """
    from .levels import base_id
    from .patterns.core import PATTERNS, _label_value
    from .registry import load_patterns

    load_patterns()  # the patterns' declarations, without the operator table
    by_case: dict[str, Counter] = defaultdict(Counter)  # a case's outcomes, one per level it ran at
    for oid, oc in (outcomes or {}).items():
        by_case[base_id(oid)][oc] += 1
    out: dict = {}
    for cid, a in pairs:
        p = a["pattern"]
        e = out.setdefault(p["name"], {"layer": p["layer"], "family": p["family"], "exporter": p["exporter"],
                                       "cases": 0, "near_miss_cases": 0, "dtypes": Counter(), "opsets": Counter(),
                                       "axes": defaultdict(Counter), "near_misses": Counter(), "outcomes": Counter()})
        e["cases"] += 1
        e["dtypes"][str(p["dtype"])] += 1
        e["opsets"][str(a["opset"])] += 1
        if p["near_miss"]:
            e["near_miss_cases"] += 1
            e["near_misses"][p["near_miss"]] += 1
        for k, v in p["axes"].items():
            e["axes"][k][str(v)] += 1
        if outcomes is not None:
            e["outcomes"].update(by_case.get(cid, ()))
    layers: dict = defaultdict(list)
    for name, e in sorted(out.items()):
        decl = PATTERNS.get(name)
        e["missing"] = [] if decl is None else [
            f"{ax}={_label_value(v)}" for ax, vals in sorted(decl.axes.items()) for v in vals
            if _label_value(v) not in e["axes"].get(ax, {})]
        for k in ("dtypes", "opsets", "near_misses", "outcomes"):
            e[k] = dict(sorted(e[k].items()))
        e["axes"] = {k: dict(sorted(c.items())) for k, c in sorted(e["axes"].items())}
        layers[e["layer"]].append(name)
    return {"patterns": dict(sorted(out.items())), "layers": dict(sorted(layers.items()))}


def _group(analyses: Iterable, patterns: list | None = None) -> tuple[dict, list, int]:
    """``(by (domain, op): [(id, analysis)], unmatched cases, number of cases)`` of analyses given
    as dicts with their ``id`` or as ``(id, analysis)`` pairs; layer-pattern cases' ``(id,
    analysis)`` go to ``patterns`` instead (dropped when it is ``None``)."""
    by_op: dict[tuple[str, str], list] = defaultdict(list)
    unmatched = []
    n = 0
    for a in analyses:
        n += 1
        cid, a = a if isinstance(a, tuple) else (a["id"], a)
        if "pattern" in a:
            if patterns is not None:
                patterns.append((cid, a))
            continue
        if a["problem"] is not None:
            unmatched.append({"id": cid, "op": a["op"], "problem": a["problem"], "error_case": a["error"]})
            continue
        by_op[(a["domain"], a["op"])].append((cid, a))
    return by_op, unmatched, n


class CompactOps(Mapping):
    """A coverage's ``ops`` (:func:`compute_coverage`) with each operator's entry kept as its compact
    JSON text (:func:`conformance.jsonsafe.dumps`) in a spool file
    (:class:`conformance.compact.DiskSpool`) and parsed when read: the whole table's entries are
    8 MB as text, which the parent of a run held in memory, and took 25 MiB as objects.  Reading an
    entry gives a new dict each time; :meth:`json_text` gives the text as a results file writes it.
    Pickled, the texts travel with it (the coverage process sends it to the run's parent, whose
    copy spools them again)."""

    def __init__(self):
        self._spool: DiskSpool | None = None
        self._at: dict[str, int] = {}  # an operator's entry, its versions' missing lists as markers
        self._missing_at: dict[str, list[int]] = {}  # those lists' texts, by marker number
        self._cells_at: dict[str, int] = {}  # an operator's cells' text (RefsCoverage), where kept
        self._decorated: dict[str, int] = {}  # an operator's decorated entry (missing lists as markers)
        self._decorate = None

    @property
    def decorate(self):
        """``fn(key, entry)`` adding what is kept apart to an entry as it is read (a run's
        outcomes: :meth:`RefsCoverage.with_outcomes`), or None.  Each operator's entry is decorated
        once, its text then kept in the spool (results.json and the page read it: three
        decorations an operator were 0.1 s of a 7,300-case run's end); setting it drops those."""
        return self._decorate

    @decorate.setter
    def decorate(self, fn) -> None:
        self._decorate = fn
        self._decorated = {}

    @staticmethod
    def _marker(k: int) -> str:
        """What stands for an entry's ``k``-th missing list (the text of no coverage value)."""
        return f"\x00missing\x00{k}"

    def put(self, key: str, entry: dict) -> None:
        """Store (or replace) operator ``key``'s entry.  Each version's ``missing`` list is kept as
        text of its own, its place in the entry marked: a results file's text of a decorated
        entry is then made without parsing those lists (OptionalGetElement's are 2.3 MB of
        JSON, 11 MiB of the parent's heap while parsed)."""
        missing: list[bytes] = []
        versions = {}
        for v, e in (entry.get("versions") or {}).items():
            if isinstance(e, dict) and isinstance(e.get("missing"), list) and e["missing"]:
                missing.append(dumps(e["missing"], separators=(",", ":")).encode())
                e = {**e, "missing": self._marker(len(missing) - 1)}
            versions[v] = e
        slim = {**entry, "versions": versions} if "versions" in entry else entry
        self._put(key, dumps(slim, separators=(",", ":")).encode(), missing)

    def _put(self, key: str, text: bytes, missing: list[bytes] = ()) -> None:
        if self._spool is None:
            self._spool = DiskSpool()
        self._at[key] = self._spool.add(text)
        self._missing_at[key] = [self._spool.add(m) for m in missing]
        self._decorated.pop(key, None)

    def _parts(self, key: str) -> tuple[bytes, list[bytes]]:
        return self._spool[self._at[key]], [self._spool[k] for k in self._missing_at[key]]

    def put_cells(self, key: str, text: bytes) -> None:
        """Keep operator ``key``'s cells (:class:`RefsCoverage`) as their JSON text."""
        if self._spool is None:
            self._spool = DiskSpool()
        self._cells_at[key] = self._spool.add(text)

    def cells_text(self, key: str) -> bytes:
        """Operator ``key``'s cells as :meth:`put_cells` kept them (``b"[]"``: none)."""
        at = self._cells_at.get(key)
        return b"[]" if at is None else self._spool[at]

    def json_text(self, key: str) -> str:
        """Operator ``key``'s entry as compact JSON (see :meth:`json_pieces`)."""
        return "".join(self.json_pieces(key))

    def json_pieces(self, key: str) -> Iterator[str]:
        """Operator ``key``'s entry as compact JSON, in pieces (decorated where :attr:`decorate`
        is set): its missing lists' texts as they are kept, never parsed nor joined to the rest
        (the results file writes them as they come)."""
        slim, missing = self._slim(key)
        at = 0
        for k, m in enumerate(missing):
            marker = dumps(self._marker(k)).encode()
            cut = slim.index(marker, at)
            yield slim[at:cut].decode()
            yield m.decode()
            at = cut + len(marker)
        yield slim[at:].decode()

    def _slim(self, key: str) -> tuple[bytes, list[bytes]]:
        """:meth:`_parts` of operator ``key``, its entry decorated (:attr:`decorate`) where that is
        set: decorated once, the text kept in the spool."""
        slim, missing = self._parts(key)
        if self._decorate is not None:
            at = self._decorated.get(key)
            if at is not None:
                return self._spool[at], missing
            entry = json.loads(slim)
            self._decorate(key, entry)
            slim = dumps(entry, separators=(",", ":")).encode()
            self._decorated[key] = self._spool.add(slim)
        return slim, missing

    def __getitem__(self, key: str) -> dict:
        slim, missing = self._slim(key)
        entry = json.loads(slim)
        for e in (entry.get("versions") or {}).values():
            m = e.get("missing") if isinstance(e, dict) else None
            if isinstance(m, str) and m.startswith("\x00missing\x00"):
                e["missing"] = json.loads(missing[int(m[9:])])
        return entry

    def __iter__(self):
        return iter(self._at)

    def __len__(self) -> int:
        return len(self._at)

    def __getstate__(self) -> dict:
        return {"texts": [(k, *self._parts(k)) for k in self._at], "decorate": self.decorate,
                "cells": [(k, self.cells_text(k)) for k in self._cells_at]}

    def __setstate__(self, state: dict) -> None:
        self.__init__()
        for k, text, missing in state["texts"]:
            self._put(k, text, missing)
        for k, text in state["cells"]:
            self.put_cells(k, text)
        self.decorate = state["decorate"]


def _swapped(a):
    """A copy of the array ``a`` with its items' bytes swapped (big-endian machines)."""
    b = a[:]
    b.byteswap()
    return b


class RefsCoverage:
    """The coverage of a bundle's cases from the analyses its manifest records
    (:func:`compute_coverage` of them), computed one operator at a time so that no more than one
    operator's analyses are in memory, the operators' entries kept as text (:class:`CompactOps`),
    and kept with what adding a run's outcomes needs: per case the cell (operator, version and
    type combination, or the version's error cases) it counts in.

    Attributes:
        coverage: :func:`compute_coverage` of the analyses, without outcomes; its ``ops`` a
            :class:`CompactOps` (``dict(cov["ops"])`` for a plain one).
    """

    def __init__(self, refs):
        """``refs``: a bundle's :class:`~conformance.bundle.CaseRefs` whose every entry records an
        analysis (``refs.recorded == len(refs)``).

        Raises:
            ValueError: an entry records no analysis.
            conformance.bundle.BundleError: the manifest changed since it was indexed.
        """
        from array import array

        if refs.recorded != len(refs):
            raise ValueError(f"{len(refs) - refs.recorded} of {len(refs)} manifest entries record no coverage analysis")
        n = len(refs)
        groups: dict[tuple[str, str], list[int]] = defaultdict(list)
        self._patterns: list[int] = []
        self._pattern_names: list[str] = []
        unmatched = []
        kinds = [k[1] for k in refs.kinds]
        for i in range(n):
            group = kinds[refs._kind[i]]
            if group[0] == "op":
                groups[(group[1], group[2])].append(i)
            elif group[0] == "pattern":
                self._patterns.append(i)
            else:
                a = refs.entry(i)["coverage"]
                unmatched.append({"id": refs.id(i), "op": a["op"], "problem": a["problem"], "error_case": a["error"]})
        self._refs, self._content_hash = refs, refs.content_hash
        # the cells, numbered an operator after another: per operator its first cell and how many,
        # and each cell's (version, combination key; None: error cases) kept as the operator's text
        # (CompactOps.put_cells: 18,500 cells as objects were 3 MiB of the parent's heap, more
        # when parsed from a kept coverage)
        self._op_cells: dict[str, tuple[int, int]] = {}
        self._n_cells = 0
        self.cell_of = array("i", [-1]) * n
        ops = CompactOps()
        declared_all = refs.declared or {}
        for (domain, op), members in sorted(groups.items()):
            spec = op_spec(op, domain)
            key = f"{domain}:{op}" if domain else op
            declared = json.loads(declared_all[key]) if key in declared_all else None
            if not isinstance(declared, dict):
                declared = None
            pairs = [(i, {**e["coverage"], "id": e["id"]}) for i, e in zip(members, refs.entries(members))]
            versions = {}
            cells: list[tuple[str, str | None]] = []
            cell_index: dict[tuple[str, str | None], int] = {}
            for v in spec.since_versions:
                mine = [(i, a) for i, a in pairs if a["version"] == v]
                versions[str(v)] = _version_entry(spec, v, [(a["id"], a) for _, a in mine], declared=declared)
                params = list(spec.versions[v].type_constraints)
                for i, a in mine:
                    cell = (str(v), None if a["error"] else _combo_key(a["combo"], params))
                    c = cell_index.get(cell)
                    if c is None:
                        c = cell_index[cell] = len(cells)
                        cells.append(cell)
                    self.cell_of[i] = self._n_cells + c
            ops.put(key, {"op": op, "domain": domain, "source": spec.source, "versions": versions})
            ops.put_cells(key, dumps(cells, separators=(",", ":")).encode())
            self._op_cells[key] = (self._n_cells, len(cells))
            self._n_cells += len(cells)
            del pairs, versions, cells, cell_index
        self.coverage = {"cases": n, "ops": ops, "unmatched": unmatched}
        if self._patterns:
            # computed here, without outcomes (the coverage process reads the pattern cases' entries,
            # not the run's parent, whose heap kept 17 MiB of the 5,800 analyses of three seeds);
            # a pattern case's cell is -2 - the index of its pattern's name (with_outcomes counts them)
            pairs = self._pattern_pairs()
            self.coverage["patterns"] = pattern_coverage(pairs)
            self._pattern_names = sorted(self.coverage["patterns"]["patterns"])
            name_index = {name: k for k, name in enumerate(self._pattern_names)}
            for i, (_, a) in zip(self._patterns, pairs):
                self.cell_of[i] = -2 - name_index[a["pattern"]["name"]]
            del pairs

    #: the bundle file that keeps a generated bundle's coverage (:meth:`save`, :meth:`load`)
    CACHE = "coverage.jsonl"
    _CACHE_FORMAT = "onnx-conformance-coverage/4"

    @staticmethod
    def _computed_by() -> str:
        """What the coverage depends on besides the manifest: onnx (its schemas) and the code that
        computes it (this module and :mod:`conformance.opspec`), as one digest."""
        import hashlib
        from pathlib import Path

        import onnx

        from . import opspec

        h = hashlib.sha256(f"onnx {onnx.__version__}\n".encode())
        for path in (__file__, opspec.__file__):
            h.update(Path(path).read_bytes())
        return h.hexdigest()

    def save(self, path) -> None:
        """Write this coverage (without outcomes) to ``path`` (JSON lines, byte-reproducible): a
        head line (the manifest's content hash, what computed it, the unmatched cases, the
        patterns, the number of cells and each case's cell as little-endian int32 in base64),
        then per operator: ``[key, its number of cells, its number of missing lists]``, its
        entry's text (each missing list a marker, :class:`CompactOps`), its cells' text
        (``[[version, combination or null], ...]``) and its missing lists' texts, a line each.
        A generated bundle keeps it as :attr:`CACHE`, so that a run of the bundle reads it instead
        of reading every manifest entry again (0.2 s of the parent's CPU a 7,000-case run; 8 s in
        a process of its own at 150,000 cases)."""
        import base64

        cov = self.coverage
        head = {"format": self._CACHE_FORMAT, "content_hash": self._content_hash, "computed_by": self._computed_by(),
                "cases": cov["cases"], "unmatched": cov["unmatched"], "patterns": cov.get("patterns"),
                "pattern_names": self._pattern_names,
                "n_cells": self._n_cells,
                "cell_of": base64.b64encode(self.cell_of.tobytes() if sys.byteorder == "little"
                                            else _swapped(self.cell_of).tobytes()).decode("ascii")}
        ops = cov["ops"]
        with open(path, "wb") as f:
            f.write(dumps(head, separators=(",", ":")).encode() + b"\n")
            for key in ops:
                text, missing = ops._parts(key)
                head_line = dumps([key, self._op_cells.get(key, (0, 0))[1], len(missing)]).encode()
                f.write(b"\n".join([head_line, text, ops.cells_text(key), *missing]) + b"\n")

    @classmethod
    def load(cls, f, refs) -> RefsCoverage | None:
        """The coverage :meth:`save` wrote (``f``: the file, opened for reading bytes, read a line
        at a time) for the bundle ``refs``, or ``None`` where it is not this bundle's (another
        content hash), was computed by another onnx or another version of this code, or is
        damaged: the caller computes it then."""
        import base64
        from array import array

        try:
            head = json.loads(f.readline())
            if (head.get("format") != cls._CACHE_FORMAT or head.get("content_hash") != refs.content_hash
                    or head.get("computed_by") != cls._computed_by() or head.get("cases") != len(refs)):
                return None
            self = cls.__new__(cls)
            self._refs, self._content_hash = refs, refs.content_hash
            # the pattern cases themselves are not needed: their cells name their patterns
            self._patterns, self._pattern_names = [], list(head["pattern_names"])
            self._op_cells, self._n_cells = {}, 0
            self.cell_of = array("i")
            self.cell_of.frombytes(base64.b64decode(head["cell_of"]))
            if sys.byteorder != "little":
                self.cell_of = _swapped(self.cell_of)
            if len(self.cell_of) != len(refs):
                return None
            ops = CompactOps()
            for line in f:
                key, n_cells, n_missing = json.loads(line)
                text, cells, *missing = (f.readline() for _ in range(2 + n_missing))
                if not all(x.endswith(b"\n") for x in (line, text, cells, *missing)):  # cut short
                    return None
                ops._put(key, text[:-1], [m[:-1] for m in missing])
                ops.put_cells(key, cells[:-1])
                self._op_cells[key] = (self._n_cells, n_cells)
                self._n_cells += n_cells
            if self._n_cells != head["n_cells"]:
                return None
            self.coverage = {"cases": head["cases"], "ops": ops, "unmatched": head["unmatched"]}
            if head.get("patterns") is not None:
                self.coverage["patterns"] = head["patterns"]
            return self
        except (ValueError, KeyError, TypeError, IndexError):
            return None

    def detach(self) -> RefsCoverage:
        """This coverage without its references (to send it to another process, which has its own:
        :meth:`attach`)."""
        self._refs = None
        return self

    def attach(self, refs) -> RefsCoverage:
        """This coverage with ``refs``, references to the same bundle's cases (its content hash the same).

        Raises:
            ValueError: ``refs`` are another bundle's.
        """
        if refs.content_hash != self._content_hash:
            raise ValueError("the coverage was computed for another bundle")
        self._refs = refs
        return self

    def _pattern_pairs(self) -> list[tuple[str, dict]]:
        return [(self._refs.id(i), self._refs.entry(i)["coverage"]) for i in self._patterns]

    def with_outcomes(self, outcome_of: Iterable[tuple[int, str]]) -> dict:
        """:attr:`coverage` (changed in place: call this once) with a run's outcomes, as
        ``compute_coverage(..., outcomes, analyses=...)`` gives it (every version entry's
        ``outcomes`` and ``error_outcomes``, the layer patterns' ``outcomes``).

        Args:
            outcome_of: ``(bundle case index, outcome)`` of every case run (a layer-pattern case
                once per level it ran at).
        """
        from array import array

        counts: dict[str, array] = {}  # per outcome, a count per cell (a Counter per cell took 15 MiB)
        pattern_counts: dict[int, Counter] = defaultdict(Counter)  # per pattern (name index), its cases' outcomes
        for i, outcome in outcome_of:
            c = self.cell_of[i]
            if c >= 0:
                col = counts.get(outcome)
                if col is None:
                    col = counts[outcome] = array("i", [0]) * self._n_cells
                col[c] += 1
            elif c <= -2:
                pattern_counts[-2 - c][outcome] += 1
        ops = self.coverage["ops"]

        def decorate(key: str, entry: dict) -> None:
            """Add the outcomes (kept as counts per cell) to operator ``key``'s entry as it is read:
            adding them to the entries' text took 13 MiB of the parent's heap."""
            import numpy as np

            per_version: dict[str, tuple[dict, Counter]] = {}
            first = self._op_cells.get(key, (0, 0))[0]
            cells = json.loads(ops.cells_text(key))
            # an outcome's cells with cases, found by numpy (each cell's every outcome tested in
            # Python was most of a decoration); the counts are sorted below, so their order is free
            for outcome, col in counts.items():
                part = np.frombuffer(col, dtype=np.intc)[first:first + len(cells)]
                nz = np.flatnonzero(part)
                for c, k in zip(nz.tolist(), part[nz].tolist()):
                    v, combo = cells[c]
                    pv = per_version.get(v)
                    if pv is None:
                        pv = per_version[v] = (defaultdict(Counter), Counter())
                    (pv[1] if combo is None else pv[0][combo])[outcome] += k
            for v, e in entry["versions"].items():
                combos, err = per_version.get(v, ({}, {}))
                e["outcomes"] = {k: dict(sorted(c.items())) for k, c in sorted(combos.items())}
                e["error_outcomes"] = dict(sorted(err.items()))

        cov = self.coverage
        cov["ops"].decorate = decorate
        for k, counter in pattern_counts.items():
            cov["patterns"]["patterns"][self._pattern_names[k]]["outcomes"] = dict(sorted(counter.items()))
        return cov


# ----------------------------------------------------------------------------- rendering
def _fmt_counts(d: dict, limit: int = _MAX_LIST_VALUES) -> str:
    items = [f"{k} ({v})" for k, v in d.items()]
    if len(items) > limit:
        items = items[:limit] + [f"... {len(items) - limit} more"]
    return "\n".join(items) or "-"


def _short_pattern(pattern: str, optional: dict[str, list[str]]) -> str:
    """``"X,Scale,B -> Y,Mean"`` -> ``"B | Mean"``: the optional formals present, inputs | outputs."""
    ins, _, outs = pattern.partition(" -> ")
    pick = [", ".join(n for n in side.split(",") if n in optional[k]) or "-"
            for side, k in ((ins, "inputs"), (outs, "outputs"))]
    return " | ".join(pick)


def coverage_totals(cov: dict) -> dict:
    """Totals of ``cov`` (from :func:`compute_coverage`): ``ops``, ``versions``, ``covered`` /
    ``combinations`` (type combinations over every version), ``gaps`` (missing and not declared
    unbuildable), ``declared`` (missing with a stated reason), ``bare_versions`` (``op-version``
    strings without value cases), ``unexercised`` / ``declared_unexercised`` (optional formals and
    attributes the value cases never vary, without / with a stated reason) and ``unmatched``
    (cases matched to no schema)."""
    t = empty_totals(cov)
    for key, op in cov["ops"].items():
        for v, e in op["versions"].items():
            if add_version_totals(t, e):
                t["bare_versions"].append(f"{key}-{v}")
    return t


def empty_totals(cov: dict) -> dict:
    """:func:`coverage_totals` of ``cov`` before any version is counted (:func:`add_version_totals`)."""
    return {"ops": len(cov["ops"]), "versions": 0, "covered": 0, "combinations": 0, "gaps": 0, "declared": 0,
            "unexercised": 0, "declared_unexercised": 0, "bare_versions": [],
            "unmatched": len(cov.get("unmatched") or [])}


def add_version_totals(t: dict, e: dict) -> bool:
    """Count the version entry ``e`` into the totals ``t`` (:func:`coverage_totals`' counts, its
    ``bare_versions`` aside); whether the version has no value cases (a bare version)."""
    t["versions"] += 1
    t["covered"] += len(e["covered"])
    t["combinations"] += e["total_combinations"]
    t["gaps"] += e["gaps"]
    t["declared"] += len(e["missing"]) - e["gaps"]
    t["unexercised"] += len(e.get("unexercised", ()))
    t["declared_unexercised"] += len(e.get("declared_unexercised", ()))
    return not e["value"]["cases"]


def missing_text(e: dict, limit: int | None = _MAX_LIST_VALUES) -> list[str]:
    """The missing type combinations of a version entry as text (a declared reason or the
    number of partial matches appended), at most ``limit`` of them (``None``: all)."""
    missing = [m["combination"] + (f" [declared: {m['declared_unbuildable']}]" if "declared_unbuildable" in m
                                   else (f" (partial: {m['partial_cases']})" if m["partial_cases"] else ""))
               for m in e["missing"]]
    if limit is not None and len(missing) > limit:
        missing = missing[:limit] + [f"... {len(missing) - limit} more"]
    return missing


def unexercised_text(e: dict) -> list[str]:
    """The unexercised states of a version entry as text, those with a declared reason last."""
    return list(e.get("unexercised", ())) + [f"{u} [declared: {r}]"
                                             for u, r in e.get("declared_unexercised", {}).items()]


def render_summary(cov: dict, console) -> None:
    """Print ``cov`` as one compact table, a row per operator version: value / error cases,
    covered / total type combinations (green: all, yellow: some, red: none), the missing
    ones, how many optional-I/O patterns and attribute values the value cases exercise;
    then a totals line."""
    from rich.markup import escape
    from rich.table import Table

    t = Table(title="coverage per operator version (details: --detail)", show_lines=False)
    for col, just in (("operator", "left"), ("version", "right"), ("value", "right"), ("error", "right"),
                      ("types", "right"), ("missing type combinations", "left"), ("I/O patterns", "right"),
                      ("attribute values", "right"), ("unexercised (value cases)", "left")):
        t.add_column(col, justify=just, overflow="fold", no_wrap=col == "operator",
                     min_width=max((len(k) for k in cov["ops"]), default=8) if col == "operator" else None)
    for key, op in cov["ops"].items():
        first = True
        for v, e in op["versions"].items():
            ncov = len(e["covered"])
            style = "green" if e["gaps"] == 0 and e["value"]["cases"] else ("yellow" if ncov else "red")
            t.add_row(escape(key) if first else "", f"{v}{' *' if e['deprecated'] else ''}",
                      str(e["value"]["cases"]), str(e["error"]["cases"]),
                      f"[{style}]{ncov}/{e['total_combinations']}[/{style}]",
                      escape("; ".join(missing_text(e, 4)) or "-"),
                      str(len(e["value"]["io_patterns"])),
                      str(sum(len(vals) for vals in e["value"]["attributes"].values())),
                      escape("; ".join(e["unexercised"]) or "-"))
            first = False
    console.print(t)
    if cov.get("patterns"):
        render_patterns(cov["patterns"], console)
    tot = coverage_totals(cov)
    console.print(f"{tot['ops']} operator(s), {tot['versions']} version(s): {tot['covered']}/{tot['combinations']} "
                  f"type combinations covered, {tot['gaps']} gap(s), {tot['declared']} declared unbuildable; "
                  f"{tot['unexercised']} unexercised optional input/output or attribute state(s) "
                  f"(+{tot['declared_unexercised']} with a stated reason)"
                  + (f"; versions without value cases: {', '.join(tot['bare_versions'])}" if tot["bare_versions"]
                     else "")
                  + (f"; {tot['unmatched']} case(s) matched to no schema" if tot["unmatched"] else "")
                  + ("  (* deprecated version)" if any(e["deprecated"] for op in cov["ops"].values()
                                                        for e in op["versions"].values()) else ""))


def render_patterns(pc: dict, console) -> None:
    """Print the layer patterns of a coverage (:func:`pattern_coverage`): one row per pattern with
    its catalog layer, cases, near-miss cases, types, opsets, variation axes (values covered /
    declared) and the declared axis values no case has; then the catalog layers covered."""
    from rich.markup import escape
    from rich.table import Table

    t = Table(title="layer patterns", show_lines=False)
    for col in ("pattern", "layer", "cases", "near-miss", "types", "opsets", "variation axes", "missing values"):
        t.add_column(col, overflow="fold")
    for name, e in pc["patterns"].items():
        axes = ", ".join(f"{k} ({len(v)})" for k, v in e["axes"].items())
        t.add_row(escape(name), escape(str(e["layer"])), str(e["cases"]), str(e["near_miss_cases"]),
                  escape("/".join(e["dtypes"])), escape("/".join(e["opsets"])), escape(axes),
                  escape(", ".join(e["missing"]) or "-"))
    console.print(t)
    console.print("catalog layers: " + escape(", ".join(f"{k} ({len(v)})" for k, v in pc["layers"].items())))


def render_coverage(cov: dict, console) -> None:
    """Print ``cov`` (from :func:`compute_coverage`) as one rich table per operator.

    Rows: one per version (``*`` marks deprecated ones) with value / error case counts,
    covered / total type combinations, the missing combinations (with the number of value
    cases that match them except for an unbound parameter), the optional formals present
    in the value cases (inputs | outputs), the attribute values of the value cases, and
    what only error cases exercise (types outside the constraints, attribute values,
    I/O patterns).  A summary line per operator follows its table.
    """
    from rich.markup import escape
    from rich.table import Table

    for key, op in cov["ops"].items():
        t = Table(title=f"coverage: {key} ({op['source']})", show_lines=True)
        for col in ("version", "cases", "types", "missing combinations", "optional I/O present (in | out)",
                    "attribute values",
                    "error cases only"):
            t.add_column(col, overflow="fold")
        for v, e in op["versions"].items():
            missing = missing_text(e)
            extra = []
            if e["value"]["outside_constraints"]:
                extra.append("value cases outside constraints: " + "; ".join(e["value"]["outside_constraints"]))
            attrs = "\n".join(f"{name}: " + ", ".join(f"{k} ({n})" for k, n in vals.items())
                              for name, vals in e["value"]["attributes"].items()) or "-"
            err_only = []
            if e["error"]["outside_constraints"]:
                err_only.append("types: " + "; ".join(e["error"]["outside_constraints"]))
            for name, vals in e["error"]["attributes"].items():
                only = [k for k in vals if k not in e["value"]["attributes"].get(name, {})]
                if only:
                    err_only.append(f"{name}: " + ", ".join(only))
            for pat in e["error"]["io_patterns"]:
                if pat not in e["value"]["io_patterns"]:
                    err_only.append("I/O " + _short_pattern(pat, e["optional_formals"]))
            extra += [f"unexercised: {u}" for u in unexercised_text(e)]
            ncov = len(e["covered"])
            style = "green" if e["gaps"] == 0 and e["value"]["cases"] else ("yellow" if ncov else "red")
            t.add_row(
                f"{v}{' *' if e['deprecated'] else ''}",
                f"{e['value']['cases']} value\n{e['error']['cases']} error",
                f"[{style}]{ncov}/{e['total_combinations']}[/{style}]\n"
                + escape(", ".join(f"{p}: {'/'.join(ts)}" for p, ts in e["type_params"].items())),
                escape("\n".join(missing + extra) or "none"),
                escape(_fmt_counts({_short_pattern(k, e["optional_formals"]): n
                                    for k, n in e["value"]["io_patterns"].items()})),
                escape(attrs),
                escape("\n".join(err_only) or "-"),
            )
        console.print(t)
        gaps = {v: e["gaps"] for v, e in op["versions"].items() if e["gaps"]}
        bare = [v for v, e in op["versions"].items() if not e["value"]["cases"]]
        console.print(f"{escape(key)}: {sum(len(e['covered']) for e in op['versions'].values())}/"
                      f"{sum(e['total_combinations'] for e in op['versions'].values())} type combinations covered"
                      + (f"; versions without value cases: {', '.join(bare)}" if bare else "")
                      + (f"; gaps per version: {gaps}" if gaps else ""))
    if cov["unmatched"]:
        console.print(f"{len(cov['unmatched'])} case(s) could not be matched to a schema:")
        for u in cov["unmatched"][:_MAX_LIST_VALUES]:
            console.print(f"  {escape(u['id'])}: {escape(u['problem'])}")


# ----------------------------------------------------------------------------- command line
def bundle_analyses(path):
    """Yield the analysis (:func:`conformance.analysis.analyse_case`) of every case of the bundle
    at ``path``: the one its manifest records, else measured from the case's model
    (:meth:`conformance.bundle.CaseRef.analysis`).

    Raises:
        conformance.bundle.BundleError: an unreadable manifest or case.
    """
    from .bundle import read_index

    _, refs = read_index(path)
    for ref in refs:
        yield ref.analysis()


def bundle_coverage(path) -> dict:
    """:func:`compute_coverage` of the bundle at ``path``: from the analyses its manifest records
    (:class:`RefsCoverage`, one operator's at a time, with the reasons the manifest declares),
    else from each case's analysis (:func:`bundle_analyses`).

    Raises:
        conformance.bundle.BundleError: an unreadable manifest or case.
    """
    from .bundle import read_index

    _, refs = read_index(path)
    if refs.recorded == len(refs):
        cov = RefsCoverage(refs).coverage
        return {**cov, "ops": dict(cov["ops"].items())}
    return compute_coverage((), analyses=bundle_analyses(path))


def cmd_coverage(args, console) -> int:
    """``onnx-conformance coverage``: generate (``--ops``, ``--seed``) or read (``--bundle``)
    a suite, print its coverage (a summary table; ``--detail``: a table per operator) and
    optionally write it as JSON (``--json``).

    Returns 0, or 1 with ``--fail-on-gaps`` when a type combination the spec allows has no
    value case and no declared reason.  Raises :class:`conformance.errors.UsageError` for bad input (neither or both of
    --ops and --bundle, unknown operator, unreadable bundle).
    """
    from .bundle import BundleError
    from .errors import UsageError, parse_ops

    if bool(args.ops) == bool(args.bundle):
        raise UsageError("give exactly one of --ops OPS or --bundle DIR")
    if args.bundle:
        try:
            cov = bundle_coverage(args.bundle)
        except BundleError as exc:
            raise UsageError(str(exc)) from None
    else:
        from . import registry

        cov = compute_coverage(registry.generate(parse_ops(args.ops), args.seed))
    if args.detail:
        render_coverage(cov, console)
    render_summary(cov, console)
    if args.json:
        try:
            with open(args.json, "w", encoding="utf-8") as f:
                f.write(dumps(cov, indent=1) + "\n")
        except OSError as exc:
            raise UsageError(f"cannot write {args.json}: {exc}") from None
        console.print(f"wrote {args.json}")
    return 1 if args.fail_on_gaps and coverage_totals(cov)["gaps"] else 0


def add_coverage_command(subparsers) -> None:
    """Add ``coverage`` to the ``onnx-conformance`` sub-commands (``subparsers`` from
    ``ArgumentParser.add_subparsers``)."""
    c = subparsers.add_parser(
        "coverage", help="which versions, type combinations, optional I/O and attribute values the cases cover",
        description="Inspect the models of a suite (generated with --ops/--seed, or read from --bundle) and "
                    "report, per operator version, the covered and missing combinations of the schema's type "
                    "parameters, the optional input/output patterns and the attribute values. Computed from "
                    "the models, not from tags.")
    c.add_argument("--ops", help="comma-separated operators to generate, or 'all'")
    c.add_argument("--bundle", metavar="DIR", help="read the cases from this bundle instead")
    c.add_argument("--seed", type=int, default=0, help="generation seed (default 0)")
    c.add_argument("--json", metavar="OUT", help="also write the coverage as JSON to this file")
    c.add_argument("--detail", action="store_true",
                   help="also print a table per operator: missing combinations, optional I/O patterns, attribute "
                        "values, what only error cases exercise")
    c.add_argument("--fail-on-gaps", action="store_true",
                   help="exit with status 1 when a type combination the spec allows has no value case and no "
                        "declared reason (for CI)")
    c.set_defaults(fn=cmd_coverage)
