"""The element-wise engine: every case of an element-wise operator, derived from its entry and
the schema.

For an :class:`~conformance.ops.entry.Entry` of family ``unary``, ``binary``, ``variadic`` or
``select``, :func:`points` enumerates the coordinates of the frozen suite and
:func:`strategy` draws the same coordinates for explore mode; :func:`build` turns one
coordinate (a :class:`Point`) into a :class:`~conformance.case.Case`.  What comes from the
schema (:func:`conformance.opspec.op_spec`):

* **versions** and the **opset schedule** (:mod:`conformance.ops.schedule`): cases cycle over
  the version's since_version, its last opset (capped at the runtime opset) and the latest
  opset for the newest version; function-body opsets get ``special`` cases of their own;
* **type combinations** (:func:`conformance.opspec.type_combinations`): every combination
  gets value cases (an entry's ``type_filter`` may exclude one with a reason, which coverage
  reports);
* **attribute states**: absent, the schema default written out, every state of the entry's
  table that applies to the version, and version 1's legacy ``consumed_inputs``; required
  attributes (BitShift's ``direction``) are always given;
* **optional inputs**: every present/absent pattern (Clip-11+'s ``min`` and ``max``);
* **parameters as graph inputs or initializers**: inputs after the first alternate;
* **shapes** from the family's table (:data:`UNARY_SHAPES`, :data:`BINARY_SHAPES`,
  :data:`LEGACY_SHAPES`, :data:`VARIADIC_SHAPES`, :data:`SELECT_SHAPES`): rank 0 to 5,
  size-1 dimensions, zero-size tensors, broadcasting in both directions, legacy
  ``broadcast``/``axis`` alignment before opset 7 (special-value grids are laid out so that
  only B broadcasts, to A's shape, as the legacy rule requires);
* **numerics classes** by element kind (:func:`numerics_for`): floating ``normal``,
  ``wide``, ``special`` (every pair of special values: NaN, +-inf, +-0, subnormals, the
  smallest normal, +-max...), ``edge`` (the entry's domain edges and their neighbours),
  integer ``int`` (type extremes included) and ``int-extremes`` (every pair of extremes),
  ``bool``, ``string``, ``complex``, plus the entry's own classes;
* **expected outputs**: the oracle on the exact inputs, rounded to the output type;
  elements the text leaves undefined (the entry's ``defined``, integer results outside the
  type) and elements whose result sits within the accuracy budget of the overflow
  threshold are replaced by safe values first;
* **tolerance** (:func:`tolerance_for`): exact (correctly rounded, or not floating), an
  accumulation bound, or the entry's ulp budget;
* **error cases**: shapes that do not broadcast, legacy shapes that do not align, unequal
  shapes before variadic broadcasting (opset 8), and the entry's :class:`Err` list.

Ids are ``Op-since/<types>/<numerics>/<shape pattern>/<params>/opset<N>/<hash>``; the
generator version :data:`GEN_VERSION` is bumped whenever the cases change.
"""

from __future__ import annotations

import dataclasses
import itertools
import math
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

import numpy as np

from .. import registry
from ..case import Case, DataSet, Input, Output
from ..opspec import OpSpec, VersionSpec, op_spec, type_combinations
from ..tolerance import Tolerance, budget_tolerance, budget_ulps
from . import schedule, values as V
from .entry import REALS, Ctx, Entry, Shape

#: Bump whenever the cases of the element-wise engine change.
GEN_VERSION = "1"
#: The numerics class of special values in vectorizable rows (:func:`conformance.ops.values.special_rows`):
#: one case per version and floating lead type of every element-wise entry, shape pattern ``rows``.
SPECIAL_ROWS = "special-rows"
#: Rows of a ``special-rows`` case.
ROWS = 3

#: Unary shapes: pattern -> rank (dims drawn per case) or an explicit template.
UNARY_SHAPES = ("rank0", "rank1", "rank2", "rank3", "rank4", "zero-size")
#: Multidirectional broadcasting (onnx docs/Broadcasting.md), both directions, as templates of
#: letters S, M, K (each a dim drawn in [2, 4]) and literal digits.
BINARY_SHAPES = {
    "same": ("SM", "SM"),
    "scalar-right": ("SMK", ""),
    "scalar-left": ("", "SM"),
    "trailing": ("SMK", "MK"),
    "leading": ("K", "SMK"),
    "size1-both": ("S1K", "1MK"),
    "outer": ("S1", "1M"),
    "rank5": ("S11MK", "1SMK"),
    "scalars": ("", ""),
    "zero-size": ("S01", "1K"),
}
#: Legacy broadcasting (versions with the ``broadcast``/``axis`` attributes, opset < 7):
#: pattern -> (A, B, attributes); B aligns with A's trailing dims or at ``axis``.
LEGACY_SHAPES = {
    "same": ("SMK", "SMK", {}),
    "legacy-scalar": ("SM", "", {"broadcast": 1}),
    "legacy-suffix": ("SMK", "MK", {"broadcast": 1}),
    "legacy-axis0": ("SMK", "SM", {"broadcast": 1, "axis": 0}),
    "legacy-axis1": ("SMK", "M", {"broadcast": 1, "axis": 1}),
}
#: Variadic inputs (Sum, Mean, Max, Min): up to three shapes; before opset 8 only ``same``.
VARIADIC_SHAPES = {
    "same": ("SM", "SM", "SM"),
    "broadcast": ("SM", "M", ""),
    "size1": ("S1K", "1M1", "K"),
    "rank0": ("", "", ""),
    "zero-size": ("0K", "1K", "K"),
}
#: Where(condition, X, Y): three-way broadcasting.
SELECT_SHAPES = {
    "same": ("SM", "SM", "SM"),
    "broadcast": ("S1", "1M", ""),
    "cond-scalar": ("", "SM", "M"),
    "size1": ("S1K", "1M1", "K"),
    "zero-size": ("0K", "1K", "K"),
}
#: Variadic occurrence counts exercised.
ARITIES = (1, 2, 3)


@dataclass(frozen=True)
class Point:
    """The coordinates of one value case (what the suite enumerates and explore draws).

    Attributes:
        version: since_version under test.
        opset: the opset the model imports.
        types: type parameter -> spec type name (one :func:`type_combinations` entry).
        numerics: numerics class.
        shape: shape pattern name of the family's table.
        attrs_tag / attrs: attribute state (``default``, ``explicit-default``,
            ``non-default``...) and the attributes written.
        optional: the optional inputs present.
        params: ``inputs`` or ``initializers`` for the inputs after the first.
        arity: occurrences of a variadic input.
        extra: additional tags (``body_opset``, ``legacy``).
        outputs: the optional outputs the model requests.
        dims: dimension letters of a ``shaped`` pattern fixed by explore mode (the others
            are drawn from the case's stream).
    """

    version: int
    opset: int
    types: tuple[tuple[str, str], ...]
    numerics: str
    shape: str
    attrs_tag: str = "default"
    attrs: tuple[tuple[str, Any], ...] = ()
    optional: tuple[str, ...] = ()
    params: str = "inputs"
    arity: int = 1
    extra: tuple[tuple[str, Any], ...] = ()
    outputs: tuple[str, ...] = ()
    dims: tuple[tuple[str, int], ...] = ()


# ----------------------------------------------------------------------------- schema helpers
def _type_name(type_str: str, combo: dict[str, str]) -> str:
    t = combo.get(type_str, type_str)
    return t[7:-1] if t.startswith("tensor(") else t


def _combos(entry: Entry, vs: VersionSpec) -> tuple[list[dict[str, str]], dict[str, str]]:
    """(generated combinations, excluded combination label -> reason)."""
    keep, skipped = [], {}
    for c in type_combinations(vs):
        names = {p: _type_name(t, {}) for p, t in c.items()}
        if entry.extra_cases is not None and (entry.family == "values" or _unbuildable(vs, names)):
            # a sequence/optional combination, or any of a ``values`` entry: the entry's own
            # builder makes it (Entry.extra_cases)
            reason = entry.type_filter(vs.since_version, names) if entry.type_filter else None
            if reason:
                skipped[types_label(names)] = reason
            continue
        reason = _unbuildable(vs, names) or (entry.type_filter(vs.since_version, names) if entry.type_filter else None)
        if reason:
            skipped[types_label(names)] = reason
        else:
            keep.append(names)
    return keep, skipped


def _unbuildable(vs: VersionSpec, names: dict[str, str]) -> str | None:
    for t in names.values():
        if t.startswith(("seq(", "sequence(", "optional(", "map(", "sparse_tensor(")):
            return "sequence, optional, map and sparse values need the graph family's value model (not built yet)"
    return None


def types_label(types: dict[str, str]) -> str:
    """Label of a type combination: the type when all parameters share it, else ``T=a,T1=b``."""
    vals = list(dict.fromkeys(types.values()))
    if len(vals) == 1:
        return vals[0]
    return ",".join(f"{p}={t}" for p, t in types.items())


def attr_states(entry: Entry, vs: VersionSpec) -> list[tuple[str, dict]]:
    """The attribute states of a version (module docstring), simplest first."""
    attrs = vs.attributes
    required = {k: a for k, a in attrs.items() if a.required}
    table = [(a.tag, dict(a.values)) for a in entry.attrs if a.applies(vs.since_version, attrs)]
    out: list[tuple[str, dict]] = []
    if not required:
        out.append(("default", {}))
    defaults = {k: a.default for k, a in attrs.items() if a.default is not None and k not in _legacy_attrs(vs)}
    if defaults:
        out.append(("explicit-default", defaults))
    out += table
    if required:  # every state must give the required attributes: keep only those that do
        out = [(t, d) for t, d in out if all(k in d for k in required)]
    if "consumed_inputs" in attrs:
        out.append(("legacy", {"consumed_inputs": [0]}))
    return out


def _legacy_attrs(vs: VersionSpec) -> tuple[str, ...]:
    """Attributes of the legacy element-wise versions the engine sets itself (``consumed_inputs``;
    ``broadcast``/``axis`` of the versions before multidirectional broadcasting)."""
    return ("consumed_inputs", "broadcast", "axis") if "broadcast" in vs.attributes else ("consumed_inputs",)


def output_states(entry: Entry, vs: VersionSpec) -> list[tuple[str, ...]]:
    """Requested/omitted patterns of the optional outputs (every subset), fewest first."""
    opt = [f.name for f in vs.outputs if f.option == "optional"]
    out = []
    for k in range(len(opt) + 1):
        out += list(itertools.combinations(opt, k))
    return out


def _outputs_for(entry: Entry, vs: VersionSpec, attrs: dict, states: list[tuple[str, ...]], k: int,
                 shape: str | None = None) -> tuple[str, ...]:
    """The ``k``-th (cyclically) optional-output pattern admitted (:func:`_admits`); none
    requested when no pattern is admitted."""
    if entry.outputs_rule is None and (shape is None or _shape_of(entry, shape).outputs is None):
        return states[k % len(states)]
    ok = [o for o in states if _admits(entry, vs, attrs, o, shape)]
    return ok[k % len(ok)] if ok else ()


def _admits(entry: Entry, vs: VersionSpec, attrs: dict, outputs: tuple[str, ...], shape: str | None = None) -> bool:
    """Whether a model may request ``outputs`` with the attribute state ``attrs`` and (family
    ``shaped``) the shape pattern ``shape``: the pattern's own ``outputs`` restriction, and the
    entry's ``outputs_rule`` on the attributes the node gets (the pattern's override the state's)."""
    sh = _shape_of(entry, shape) if shape is not None and entry.family == "shaped" else None
    if sh is not None and sh.outputs is not None and outputs not in sh.outputs:
        return False
    merged = {**attrs, **(sh.attrs if sh is not None else {})}
    return entry.outputs_rule is None or bool(entry.outputs_rule(vs.since_version, merged, outputs))


def _num_admits(entry: Entry, v: int, num: str, attrs: dict, opt: tuple[str, ...], shape: str | None) -> bool:
    """Whether the entry's ``numerics_rule`` admits class ``num`` with the attribute state
    ``attrs`` (a shaped pattern's attributes over it) and the optional inputs ``opt``."""
    if entry.numerics_rule is None:
        return True
    sh = _shape_of(entry, shape) if shape is not None and entry.family == "shaped" else None
    merged = {**attrs, **(sh.attrs if sh is not None else {})}
    return bool(entry.numerics_rule(v, num, merged, opt))


def _ruled(entry: Entry, v: int, nums: list[str], num: str, states: list, opts: list, j: int,
           shape: str) -> tuple[str, str, dict, tuple[str, ...]]:
    """(numerics class, state tag, state attributes, optional inputs) of the ``j``-th case under
    the entry's ``numerics_rule``: ``num`` if it admits some (state, optional inputs) pair, else
    the ``j``-th (cyclically) of the classes that do (the shaped pattern's own classes, else
    ``nums``); its admitted states cycle with ``j`` and their admitted optional-input patterns
    with ``j // 2``, as without a rule.  Nothing admitted at all: the unruled choice."""
    own = list(_shape_of(entry, shape).numerics) if entry.family == "shaped" else []

    def admitted(n):
        return [(si, o) for si, (_, a) in enumerate(states) for o in opts if _num_admits(entry, v, n, a, o, shape)]

    ok = admitted(num)
    if not ok:
        pool = [n for n in own if admitted(n)] or [n for n in nums if admitted(n)]
        if pool:
            num = pool[j % len(pool)]
            ok = admitted(num)
    if ok:
        sis = list(dict.fromkeys(si for si, _ in ok))
        si = sis[j % len(sis)]
        chosen = [o for s, o in ok if s == si]
        tag, attrs = states[si]
        return num, tag, attrs, chosen[(j // 2) % len(chosen)]
    tag, attrs = states[j % len(states)]
    return num, tag, attrs, opts[(j // 2) % len(opts)]


def _opts_for(entry: Entry, opts: list[tuple[str, ...]], shape: str) -> list[tuple[str, ...]]:
    """The optional-input patterns a case with shape pattern ``shape`` may have: those its
    :attr:`Shape.optional` lists (family ``shaped``), else all of ``opts`` (a restriction
    admitting none of them is ignored)."""
    if entry.family != "shaped":
        return opts
    allowed = _shape_of(entry, shape).optional
    if allowed is None:
        return opts
    return [o for o in opts if o in allowed] or opts


def optional_states(vs: VersionSpec) -> list[tuple[str, ...]]:
    """Present/absent patterns of the optional inputs (every subset), fewest first."""
    opt = [f.name for f in vs.inputs if f.option == "optional"]
    out = []
    for k in range(len(opt) + 1):
        out += list(itertools.combinations(opt, k))
    return out


def shape_patterns(entry: Entry, vs: VersionSpec) -> list[str]:
    """The shape patterns of the family (or the entry's own table) for this version."""
    if entry.family == "shaped":
        return [sh.name for sh in entry.shapes if sh.applies(vs.since_version)]
    if entry.family == "unary":
        return list(UNARY_SHAPES)
    if entry.family == "binary":
        return list(LEGACY_SHAPES) if "broadcast" in vs.attributes else list(BINARY_SHAPES)
    if entry.family == "variadic":
        return ["same"] if vs.since_version < 8 else list(VARIADIC_SHAPES)
    return list(SELECT_SHAPES)


def numerics_for(entry: Entry, type_name: str) -> list[str]:
    """Numerics classes of a case whose first data input has ``type_name`` (the entry's
    ``numerics_classes`` where it has one)."""
    if entry.numerics_classes is not None:
        return list(entry.numerics_classes(type_name))
    k = V.kind(type_name)
    if k == V.FLOAT:
        if type_name not in V.IEEE:  # narrow types: the entry's own classes where numerics_types names them
            own = {n: f for n, f in entry.float_numerics.items() if type_name in entry.numerics_types.get(n, ())}
            return _plus(["normal", "special"], own)
        out = ["normal", "wide", "special"]
        if any(iv.edges for iv in entry.values.values()):
            out.append("edge")
        return _for_type(entry, _plus(out, entry.float_numerics), type_name)
    if k == V.INT:
        return _plus(["int", "int-extremes"], entry.int_numerics)
    if k == V.STRING:
        return _plus([k], entry.string_numerics)
    return [k]


def _for_type(entry: Entry, classes: list[str], type_name: str) -> list[str]:
    """The classes that apply to ``type_name`` (the entry's ``numerics_types`` restrictions)."""
    if not entry.numerics_types:
        return classes
    return [n for n in classes if n not in entry.numerics_types or type_name in entry.numerics_types[n]]


def _plus(defaults: list[str], own) -> list[str]:
    """The default classes then the entry's own (one named like a default replaces it)."""
    return defaults + [n for n in own if n not in defaults]


def _data_formals(vs: VersionSpec):
    return [f for f in vs.inputs if f.option != "optional"]


def _lead_formal(entry: Entry, vs: VersionSpec):
    """The data input whose element type picks a case's numerics classes: the first one, or
    ``X`` for the ``select`` family (Where's condition is always bool); an operator without
    inputs (Constant): its first output."""
    data = _data_formals(vs)
    if not data:
        return vs.outputs[0]
    return data[1] if entry.family == "select" and len(data) > 1 else data[0]


# ----------------------------------------------------------------------------- enumeration
def points(entry: Entry, spec: OpSpec | None = None) -> list[Point]:
    """Every value-case coordinate of the frozen suite, in a deterministic order.

    Per version: per type combination one case per numerics class (at least ``per_type``
    cases, the classes repeating; at most two per combination when a version has more than
    20 combinations, rotating so every class appears), cycling over the shape patterns,
    attribute states, optional-input and optional-output patterns, opsets and
    inputs/initializers; then one case for every attribute state, optional pattern, shape
    pattern and arity the cycle missed; then the function-body opsets.
    """
    spec = spec or op_spec(entry.op, entry.domain)
    out: list[Point] = []
    for v, vs in spec.versions.items():
        combos, _ = _combos(entry, vs)
        shapes = shape_patterns(entry, vs)
        if not combos or not shapes:
            continue
        ops_ = schedule.opsets(spec, v)
        states = attr_states(entry, vs)
        opts = optional_states(vs)
        outs = output_states(entry, vs)
        arities = ARITIES if entry.family == "variadic" else (1,)
        n_inputs = len(vs.inputs)
        seen: dict[str, set] = {"state": set(), "opt": set(), "shape": set(), "arity": set(), "out": set()}
        j = 0
        many = len(combos) > 20
        lead = _lead_formal(entry, vs).type_str
        # the patterns of the cycle (a shaped pattern with cycle=False gets only a fill case)
        cyc = [s for s in shapes if entry.family != "shaped" or _shape_of(entry, s).cycle] or shapes

        def point(opset, combo, num, shape, tag, attrs, opt, params, arity, extra=(), k=0):
            if entry.numerics_rule is not None and not _num_admits(entry, v, num, attrs, opt, shape):
                # a fill point: the first class of the combination that admits its state
                num = next((n for n in numerics_for(entry, _type_name(lead, combo))
                            if _num_admits(entry, v, n, attrs, opt, shape)), num)
            o = _outputs_for(entry, vs, attrs, outs, k, shape if entry.family == "shaped" else None)
            seen["state"].add(tag + repr(attrs))
            seen["opt"].add(opt)
            seen["shape"].add(shape)
            seen["arity"].add(arity)
            seen["out"].add(o)
            return Point(v, opset, tuple(combo.items()), num, shape, tag, tuple(attrs.items()), opt, params, arity,
                         extra, o)

        for ci, combo in enumerate(combos):
            first = _type_name(lead, combo)
            nums = numerics_for(entry, first)
            if many and not all(t == first for t in combo.values()):
                nums = [nums[(ci + r) % len(nums)] for r in range(min(2, len(nums)))]
            cstates = states if entry.combination_states is None else (
                [s for s in states if entry.combination_states(v, combo, s[1])] or states)
            for r in range(max(len(nums), _per_type(entry, v, combo))):
                num = nums[r % len(nums)]
                tag, attrs = cstates[j % len(cstates)]
                # a sweep (per_type) visits every pattern within each combination
                shape = cyc[(r + ci) % len(cyc)] if entry.per_type else cyc[(j * 3 + ci) % len(cyc)]
                popts = _opts_for(entry, opts, shape)
                if entry.optional_rule is not None:  # the optional inputs this combination admits
                    popts = [o for o in popts if entry.optional_rule(v, combo, o)] or popts
                opt = popts[(j // 2) % len(popts)]
                arity = arities[j % len(arities)]
                opset = ops_[j % len(ops_)] if len(ops_) < 3 or j % 7 == 3 else ops_[j % 2]
                params = ("inputs", "initializers")[(j // 3) % 2] if n_inputs > 1 or arity > 1 else "inputs"
                if entry.family == "shaped":
                    own = _own_numerics(entry, shape, first)
                    num = num if not own or num in own else own[(r + ci) % len(own)]
                if entry.numerics_rule is not None:
                    num, tag, attrs, opt = _ruled(entry, v, nums, num, cstates, popts, j, shape)
                extra = (("round", r // len(nums)),) if r >= len(nums) else ()
                out.append(point(opset, combo, num, shape, tag, attrs, opt, params, arity, extra, k=j // 5))
                j += 1
        combo = next((c for c in combos if V.kind(_type_name(lead, c)) == V.FLOAT), combos[0])
        base = numerics_for(entry, _type_name(lead, combo))[0]
        fill = ops_[0]
        dtag, dattrs = states[0]
        for tag, attrs in states:
            if tag + repr(attrs) not in seen["state"]:
                out.append(point(fill, combo, base, shapes[0], tag, attrs, _opts_for(entry, opts, shapes[0])[-1],
                                 "inputs", arities[-1]))
        # each pattern's admitted optional-input sets, once (an operator with 14 optional inputs has
        # 16,384 sets: testing each against every pattern's filtered list was quadratic)
        admitted = {sh: set(_opts_for(entry, opts, sh)) for sh in shapes}
        for opt in opts:
            if opt not in seen["opt"]:
                # the first pattern admitting these optional inputs (Shape.optional)
                sh0 = next((sh for sh in shapes if opt in admitted[sh]), None)
                c0 = combo if entry.optional_rule is None or entry.optional_rule(v, combo, opt) else next(
                    (c for c in combos if entry.optional_rule(v, c, opt)), None)
                if sh0 is not None and c0 is not None:
                    out.append(point(fill, c0, numerics_for(entry, _type_name(lead, c0))[0], sh0, dtag, dattrs, opt,
                                     "initializers" if n_inputs > 1 else "inputs", 1))
        for shape in shapes:
            if shape not in seen["shape"]:
                out.append(point(fill, combo, base, shape, dtag, dattrs, _opts_for(entry, opts, shape)[-1], "inputs",
                                 arities[-1]))
        for arity in arities:
            if arity not in seen["arity"]:
                out.append(point(fill, combo, base, shapes[0], dtag, dattrs, (), "inputs", arity))
        if entry.family == "shaped":  # a pattern's fill_types: each of them gets a case with it
            for shape in shapes:
                for t in _shape_of(entry, shape).fill_types:
                    if any(q.version == v and q.shape == shape and _type_name(lead, dict(q.types)) == t for q in out):
                        continue
                    c = next((c for c in combos if _type_name(lead, c) == t), None)
                    if c is not None:
                        out.append(point(fill, c, numerics_for(entry, t)[0], shape, dtag, dattrs,
                                         _opts_for(entry, opts, shape)[-1], "inputs", arities[-1]))
        for k, o in enumerate(outs):
            if o in seen["out"]:
                continue
            # the first attribute state (and shape pattern, the first one first) that admits these outputs
            pats = shapes if entry.family == "shaped" else shapes[:1]
            st_ = next(((t, a, sh) for sh in pats for t, a in states
                        if _admits(entry, vs, a, o, sh if entry.family == "shaped" else None)), None)
            if st_ is not None:
                out.append(Point(v, fill, tuple(combo.items()), base, st_[2], st_[0], tuple(st_[1].items()),
                                 _opts_for(entry, opts, st_[2])[-1], "inputs", arities[-1], (), o))
                seen["out"].add(o)
        if entry.outputs_per_type:
            _fill_outputs_per_type(entry, vs, out, combos, lead, states, shapes, outs, ops_, opts[-1], arities[-1])
        if entry.family in ("unary", "binary", "variadic", "select"):
            # special values in vectorizable rows, once per floating lead type (the first combination)
            done = set()
            for combo in combos:
                first = _type_name(lead, combo)
                if first not in V.IEEE or first in done or SPECIAL_ROWS in entry.float_numerics:
                    continue
                done.add(first)
                out.append(Point(v, ops_[-1], tuple(combo.items()), SPECIAL_ROWS, "rows", dtag, tuple(dattrs.items()),
                                 _opts_for(entry, opts, shapes[0])[-1], "inputs", arities[-1], (),
                                 _outputs_for(entry, vs, dattrs, outs, 0, None)))
        for b in schedule.body_opsets(spec, v):
            if b in ops_:
                continue
            for combo in combos:
                first = _type_name(lead, combo)
                num = "special" if V.kind(first) == V.FLOAT else numerics_for(entry, first)[0]
                out.append(point(b, combo, num, shapes[0], dtag, dattrs, _opts_for(entry, opts, shapes[0])[-1], "inputs",
                                 arities[-1], (("body_opset", b),)))
    # two coordinates can coincide where the schedule offers a version fewer opsets (an older onnx,
    # whose newest opset is lower): the same point is the same case, kept once
    seen_points: set[str] = set()
    return [q for q in out if not (repr(q) in seen_points or seen_points.add(repr(q)))]


def _fill_outputs_per_type(entry: Entry, vs: VersionSpec, out: list[Point], combos, lead: str, states, shapes,
                           outs, ops_, opt, arity) -> None:
    """Append a point for every (type of the first data input, optional-output pattern, kind)
    that the version's points so far miss (the entry's ``outputs_per_type``; the kind is what
    its function says of the attributes, ``None`` for ``True``), on the combination of that type
    alone where there is one, the first (state, shape pattern) admitting it, the opsets and
    inputs/initializers alternating; with a function, also every (type, numerics class, kind)."""
    v = vs.since_version
    kind_of = entry.outputs_per_type if callable(entry.outputs_per_type) else None

    def kind(attrs, sh, o):
        if kind_of is None:
            return None
        merged = {**dict(attrs), **(_shape_of(entry, sh).attrs if entry.family == "shaped" else {})}
        return kind_of(v, merged, o)

    seen = {(_type_name(lead, dict(p.types)), p.outputs, kind(p.attrs, p.shape, p.outputs)) for p in out
            if p.version == v}
    n = 0
    for combo in combos:
        first = _type_name(lead, combo)
        if any(_type_name(lead, c) == first for c in combos[:combos.index(combo)]):
            continue
        combo = next((c for c in combos if all(t == first for t in c.values())), combo)
        base = numerics_for(entry, first)[0]
        for o in outs:
            for sh in shapes:
                for tag, attrs in states:
                    if not _admits(entry, vs, attrs, o, sh if entry.family == "shaped" else None):
                        continue
                    key = (first, o, kind(attrs, sh, o))
                    if key in seen:
                        continue
                    num = base
                    if entry.family == "shaped":
                        own = _shape_of(entry, sh).numerics
                        num = num if not own or num in own else own[0]
                    out.append(Point(v, ops_[n % len(ops_)], tuple(combo.items()), num, sh, tag, tuple(attrs.items()),
                                     opt, ("inputs", "initializers")[n % 2] if len(vs.inputs) > 1 else "inputs",
                                     arity, (), o))
                    seen.add(key)
                    n += 1
        if kind_of is None:
            continue
        # every numerics class in every kind of model, for this type
        had = {(p.numerics, kind(p.attrs, p.shape, p.outputs)) for p in out
               if p.version == v and _type_name(lead, dict(p.types)) == first}
        for num in numerics_for(entry, first):
            for sh in shapes:
                own = _shape_of(entry, sh).numerics if entry.family == "shaped" else ()
                if own and num not in own:
                    continue
                for tag, attrs in states:
                    for i in range(len(outs)):
                        o = outs[(n + i) % len(outs)]
                        if not _admits(entry, vs, attrs, o, sh if entry.family == "shaped" else None):
                            continue
                        if (entry.numerics_rule is not None
                                and not _num_admits(entry, v, num, attrs, opt, sh if entry.family == "shaped" else None)):
                            continue
                        k = kind(attrs, sh, o)
                        if (num, k) in had:
                            continue
                        out.append(Point(v, ops_[n % len(ops_)], tuple(combo.items()), num, sh, tag,
                                         tuple(attrs.items()), opt,
                                         ("inputs", "initializers")[n % 2] if len(vs.inputs) > 1 else "inputs",
                                         arity, (), o))
                        had.add((num, k))
                        n += 1


def _per_type(entry: Entry, version: int, combo: dict[str, str]) -> int:
    """Value cases per type combination: the entry's ``per_type`` (a number, or a function of
    the version and the combination)."""
    return int(entry.per_type(version, combo)) if callable(entry.per_type) else entry.per_type


def _default_state(states):
    tag, attrs = states[0]
    return tag, tuple(attrs.items())


# ----------------------------------------------------------------------------- building
def _unary_dims(pattern: str) -> list[tuple[int, int]]:
    """Inclusive range of each dimension of a unary shape pattern."""
    if pattern == "zero-size":
        return [(1, 3), (0, 0)]
    rank = int(pattern[-1])
    cap = {0: 1, 1: 24, 2: 6, 3: 4, 4: 3}[rank]
    return [(1, cap)] * rank


def _unary_shape(pattern: str, rng) -> tuple[int, ...]:
    return tuple(int(rng.integers(lo, hi + 1)) if hi > lo else lo for lo, hi in _unary_dims(pattern))


def _shapes(entry: Entry, vs: VersionSpec, p: Point, rng) -> tuple[list[tuple[int, ...]], dict]:
    """Declared shapes of the data inputs and the legacy attributes of the pattern: the
    family table's templates with S, M, K each a dim drawn in [2, 4] and digits literal (family
    ``shaped``: the entry's :class:`~conformance.ops.entry.Shape`, by formal input name)."""
    if entry.family == "shaped":
        sh = _shape_of(entry, p.shape)
        return sh.draw(rng, dict(p.dims)), dict(sh.attrs)
    if p.shape == "rows" and entry.family in ("unary", "binary", "variadic", "select"):
        # special values in vectorizable rows (:func:`conformance.ops.values.special_rows`)
        n = p.arity if entry.family == "variadic" else (1 if entry.family == "unary" else len(_data_formals(vs)))
        return [(ROWS, V.ROW_LENGTH)] * n, {}
    if entry.family == "unary":  # explore mode draws the dims with hypothesis (p.dims), so they shrink
        return [tuple(d for _, d in p.dims) if p.dims else _unary_shape(p.shape, rng)], {}
    attrs: dict = {}
    if entry.family == "binary" and "broadcast" in vs.attributes:
        *temps, attrs = LEGACY_SHAPES[p.shape]
    elif entry.family == "binary":
        temps = BINARY_SHAPES[p.shape]
    else:
        temps = (VARIADIC_SHAPES if entry.family == "variadic" else SELECT_SHAPES)[p.shape]
    sym = {c: int(rng.integers(2, 5)) for c in "SMK"}
    n = p.arity if entry.family == "variadic" else len(temps)
    return [tuple(sym[c] if c in sym else int(c) for c in temps[i]) for i in range(n)], dict(attrs)


def _own_numerics(entry: Entry, shape: str, type_name: str) -> list[str]:
    """The numerics classes a shaped pattern is worth (:attr:`Shape.numerics`) that apply to
    ``type_name`` (the entry's ``numerics_types``); empty: any class."""
    allowed = numerics_for(entry, type_name)
    return [n for n in _shape_of(entry, shape).numerics if n in allowed]


def _shape_of(entry: Entry, name: str) -> Shape:
    return next(sh for sh in entry.shapes if sh.name == name)


def _sprinkle(entry: Entry, x: np.ndarray, name: str, formal: str, rng) -> np.ndarray:
    """``x`` with about a quarter of its elements (at least one of each special value where
    the size allows) replaced by the type's special values: the ``special`` class of the
    ``shaped`` family, whose inputs' shapes are tied and cannot form a grid."""
    specials = _specials_of(entry, name, formal)
    if x.size == 0 or not specials:
        return x
    x = x.copy()
    flat = x.reshape(-1)
    k = min(flat.size, max(len(specials), flat.size // 4))
    pos = rng.permutation(flat.size)[:k]
    for i, q in enumerate(pos):
        flat[q] = specials[i % len(specials)] if i < len(specials) else specials[int(rng.integers(len(specials)))]
    return x


def _align_legacy(b: np.ndarray, rank_a: int, attrs: dict) -> np.ndarray:
    """B reshaped so that numpy broadcasting aligns it as the legacy rule does (B's dims at
    ``axis``, default: A's trailing dims)."""
    if not attrs.get("broadcast"):
        return b
    axis = attrs.get("axis", rank_a - b.ndim)
    return b.reshape((1,) * axis + b.shape + (1,) * (rank_a - axis - b.ndim))


def _specials_of(entry: Entry, name: str, formal: str) -> list:
    k = V.kind(name)
    if k == V.FLOAT:
        iv = entry.values.get(formal, REALS)
        return V.float_specials(name, entry.nan, entry.inf, tuple(entry.specials) + tuple(iv.edges))
    if k == V.INT:
        info = V.iinfo(name)
        lo, hi = int(info.min), int(info.max)
        # every value inside the type (int2 holds [-2, 1]: no 2)
        return sorted(v for v in {lo, lo + 1, hi, hi - 1, 0, 1, min(max(-1, lo), hi), 2, hi // 2} if lo <= v <= hi)
    if k == V.BOOL:
        return [False, True]
    if k == V.STRING:
        return list(V.ALPHABET[:6])
    return [0j, 1 + 0j, -1j, complex(math.inf, 0), complex(math.nan, 1)]


def _grid(lists: list[list], dtypes_: list[str]) -> list[np.ndarray]:
    """Every combination of the lists, as mutually broadcasting arrays (outer product)."""
    n = len(lists)
    out = []
    for i, vals in enumerate(lists):
        shape = [1] * n
        shape[i] = len(vals)
        arr = np.empty(len(vals), dtype=object if V.kind(dtypes_[i]) in (V.INT, V.STRING) else
                       (np.bool_ if V.kind(dtypes_[i]) == V.BOOL else
                        (np.complex128 if V.kind(dtypes_[i]) == V.COMPLEX else np.float64)))
        arr[:] = vals
        out.append(arr.reshape(shape))
    return out


def _legacy_grid(grid: list[np.ndarray], attrs: dict, shape_b: tuple[int, ...], rng) -> list[np.ndarray]:
    """The two-input special-value grid laid out for legacy broadcasting, where only B is
    broadcast, to A's shape: every pair of values in tensors of equal shape (no
    ``broadcast``), B's values along A's last dim (``broadcast=1``, no axis) or along ``axis``
    (A's values then along its last dim); a scalar B pattern keeps one of B's values."""
    va, vb = grid[0].ravel(), grid[1].ravel()
    na, nb = va.size, vb.size
    if not attrs.get("broadcast"):
        return [np.repeat(va, nb).reshape(na, nb), np.tile(vb, na).reshape(na, nb)]
    if len(shape_b) == 0:
        return [va, np.array(vb[int(rng.integers(nb))], dtype=vb.dtype).reshape(())]
    if "axis" not in attrs:
        return [np.repeat(va, nb).reshape(na, nb), vb]
    lead = (1,) * int(attrs["axis"])
    return [np.array(np.broadcast_to(va, lead + (nb, na))), vb]


def _sample(entry: Entry, name: str, formal: str, shape, mode: str, rng) -> np.ndarray:
    k = V.kind(name)
    if k == V.FLOAT:
        iv = entry.values.get(formal, REALS)
        if mode == "edge" and iv.edges:
            pts = []
            for e in iv.edges:
                x = np.float64(e)
                pts += [x, np.nextafter(x, np.inf), np.nextafter(x, -np.inf)]
            base = V.representable(np.array(pts), name)
            ulp = float(V.finfo(name).eps)
            near = np.array([e * (1 + s * k_ * ulp) + s * k_ * ulp for e in iv.edges for s in (-1, 1) for k_ in (1, 2, 8)])
            vals = np.concatenate([base, V.representable(near, name)])
            n = int(np.prod(shape, dtype=np.int64))
            return rng.choice(vals, size=n).reshape(shape)
        return V.sample_float(rng, shape, name, iv, "wide" if mode == "wide" else "normal")
    if k == V.INT:
        return V.sample_int(rng, shape, name, entry.ints.get(formal))
    if k == V.BOOL:
        return V.sample_bool(rng, shape)
    if k == V.STRING:
        return V.sample_string(rng, shape)
    return V.sample_complex(rng, shape, name)


def _safe(entry: Entry, j: int, name: str, formal: str):
    if entry.safe is not None and j < len(entry.safe) and entry.safe[j] is not None:
        return entry.safe[j]
    k = V.kind(name)
    if k == V.FLOAT:
        return entry.values.get(formal, REALS).safe()
    return {V.INT: 1, V.BOOL: False, V.STRING: "", V.COMPLEX: 1 + 0j}[k]


def _as_tuple(out) -> tuple:
    return tuple(out) if isinstance(out, (tuple, list)) else (out,)


def _budget(entry: Entry, name: str) -> float:
    """The entry's budget for a ``name``-typed floating output, in ulps (0: correctly rounded):
    the budget table's (``entry.budget``, :func:`conformance.tolerance.budget_ulps`) or the
    entry's own ``ulps``/``ulps16``."""
    if entry.budget and name in V.IEEE:
        return budget_ulps(entry.budget, name)
    if entry.ulps == 0:
        return 0.0
    return entry.ulps16 if name in ("float16", "bfloat16") else entry.ulps


def tolerance_for(entry: Entry, name: str, ctx: Ctx, inputs, attrs) -> Tolerance:
    """The tolerance of a ``name``-typed output (module docstring of this module):

    * not floating, or a correctly rounded function (``ulps == 0``): exact;
    * an accumulating function (``bound``): ``atol`` = the largest per-element bound,
      ``rtol`` = half an ulp (the final rounding);
    * otherwise the budget ``b`` (the budget table's for ``entry.budget``, else ``ulps``, or
      ``ulps16`` for 16-bit floats) plus the expectation's own rounding:
      ``rtol = (b + 1/2) eps(T)``, ``atol = (b + 1/2) smallest_subnormal(T)``
      (:func:`conformance.tolerance.budget_tolerance`).
    """
    if V.kind(name) != V.FLOAT:
        return Tolerance(0.0, 0.0, exact=True, signed_zero=False)
    fi = V.finfo(name)
    eps = float(fi.eps)
    if entry.bound is not None:
        with np.errstate(all="ignore"):
            b = np.asarray(entry.bound(ctx, inputs, attrs, name), dtype=np.float64)
        b = b[np.isfinite(b)]
        atol = float(b.max()) if b.size else 0.0
        return Tolerance(atol, 0.5 * eps, variants=("bound",), signed_zero=entry.signed_zero)
    budget = _budget(entry, name)
    if budget == 0 or name not in V.IEEE:
        return Tolerance(0.0, 0.0, exact=True, signed_zero=entry.signed_zero)
    return budget_tolerance(budget, name, signed_zero=entry.signed_zero)


def _broadcast_index(x: np.ndarray, out_shape) -> np.ndarray:
    return np.broadcast_to(np.arange(x.size).reshape(x.shape), out_shape)


def _evaluate(entry: Entry, ctx: Ctx, ins: list, attrs: dict, in_types: list[str], formals: list[str],
              out_types: list[str], out_index: list[int] | None = None, frozen=frozenset()):
    """Run the oracle on ``ins`` (``None`` for an absent optional input), replacing undefined
    and ill-posed elements of the present inputs by safe values (at most 4 passes; the
    structural inputs named in ``frozen`` -- axes, shapes, indices -- are never touched).  The
    oracle returns every output of the version in schema order; ``out_index`` picks the
    present ones (default: all).  Returns (inputs, present outputs)."""
    for _ in range(4):
        with np.errstate(all="ignore"):
            outs = _as_tuple(entry.oracle(ctx, *ins, **attrs))
        if out_index is not None:
            outs = tuple(outs[i] for i in out_index)
        shape = np.shape(outs[0])
        bad = np.zeros(shape, dtype=bool)
        if entry.defined is not None:
            with np.errstate(all="ignore"):
                bad |= ~np.broadcast_to(np.asarray(entry.defined(ctx, *ins, **attrs), dtype=bool), shape)
        for o, t in zip(outs, out_types):
            o = np.asarray(o)
            if o.shape != shape:
                continue
            if V.kind(t) == V.INT:
                info = V.iinfo(t)
                bad |= np.vectorize(lambda v: not (info.min <= int(v) <= info.max), otypes=[bool])(o) if o.size else False
            elif V.kind(t) == V.FLOAT and _budget(entry, t) > 0 and t in V.IEEE:
                fmax = float(V.finfo(t).max)
                r = 8 * _budget(entry, t) * float(V.finfo(t).eps)
                a = np.abs(o.astype(np.float64))
                bad |= np.isfinite(a) & (a > fmax * (1 - r)) & (a < fmax * (1 + r))
        if not bad.any():
            return ins, outs
        new = []
        for j, x in enumerate(ins):
            if x is None or not isinstance(x, np.ndarray) or formals[j] in frozen:
                new.append(x)
                continue
            x = x.copy()
            if x.size:
                try:
                    pos = np.unique(_broadcast_index(x, shape)[bad])
                except ValueError:
                    pos = np.arange(x.size)
                x.ravel()[pos] = _safe(entry, j, in_types[j], formals[j])
            new.append(x)
        ins = new
    raise ValueError(f"{ctx.op}-{ctx.version}: undefined elements remain after repair")


def _full_attrs(vs: VersionSpec, given: dict) -> dict:
    """Every attribute of the version as the oracle receives it: schema defaults filled in,
    floats as their float32 value (what the model stores), the legacy attributes the engine
    handles itself removed."""
    full = {k: a.default for k, a in vs.attributes.items() if a.default is not None}
    full.update(given)
    full = {k: (float(np.float32(v)) if isinstance(v, float) else v) for k, v in full.items()}
    for k in _legacy_attrs(vs):
        full.pop(k, None)
    return full


def _output_occurrences(entry: Entry, vs: VersionSpec, shape: str) -> list:
    """The version's output formals with a variadic one (Split's ``outputs``) expanded into the
    shaped pattern's :attr:`Shape.variadic_outputs` occurrences, named ``<formal>_<i>``; the
    formals unchanged otherwise.  The oracle returns the occurrences in place of the formal."""
    n = _shape_of(entry, shape).variadic_outputs if entry.family == "shaped" else 0
    if not n:
        return list(vs.outputs)
    out = []
    for f in vs.outputs:
        out += [dataclasses.replace(f, name=f"{f.name}_{i}") for i in range(n)] if f.option == "variadic" else [f]
    return out


def build(entry: Entry, p: Point, rng: np.random.Generator, spec: OpSpec | None = None) -> Case:
    """The value case at coordinate ``p`` (random shapes and data from ``rng``).

    Raises:
        ValueError: the oracle leaves undefined elements after repair (an entry bug).
    """
    spec = spec or op_spec(entry.op, entry.domain)
    vs = spec.versions[p.version]
    combo = dict(p.types)
    attrs_given = dict(p.attrs)
    data_formals = _data_formals(vs)
    data_names = {f.name for f in data_formals}
    shapes, legacy = _shapes(entry, vs, p, rng)
    attrs_given.update(legacy)
    fixed = dict(entry.type_attrs(p.version, combo)) if entry.type_attrs is not None else {}
    attrs_given.update(fixed)
    if entry.drawn_attrs is not None:  # attributes drawn per case (Constant's value_*): not tagged
        attrs_given.update(entry.drawn_attrs(rng, p))
    shaped = entry.family == "shaped"
    # the formal occurrences: data inputs (variadic: arity copies), then optional ones
    occ: list[tuple[str, str, tuple[int, ...] | None, bool]] = []  # (formal, node name, shape, present)
    if entry.family == "variadic":
        f = data_formals[0]
        occ = [(f.name, f"{f.name}_{i}", shapes[i], True) for i in range(p.arity)]
    elif shaped:
        for f in vs.inputs:
            if f.option == "variadic" and f.name not in shapes and f"{f.name}_0" in shapes:
                # a variadic formal (Concat's inputs): one occurrence per template <formal>_<i>
                i = 0
                while f"{f.name}_{i}" in shapes:
                    occ.append((f.name, f"{f.name}_{i}", shapes[f"{f.name}_{i}"], True))
                    i += 1
            else:
                occ.append((f.name, f.name, shapes.get(f.name, ()), f.option != "optional" or f.name in p.optional))
    else:
        di = 0
        for f in vs.inputs:
            if f.option == "optional":
                occ.append((f.name, f.name, (), f.name in p.optional))
            else:
                occ.append((f.name, f.name, shapes[di], True))
                di += 1
    types = [_type_name(next(f.type_str for f in vs.inputs if f.name == o[0]), combo) for o in occ]
    outs_v = _output_occurrences(entry, vs, p.shape)
    out_formals = [f for f in outs_v if f.option != "optional" or f.name in p.outputs]
    out_index = [i for i, f in enumerate(outs_v) if f.option != "optional" or f.name in p.outputs]
    out_types = [_type_name(f.type_str, combo) for f in out_formals]
    full_attrs = _full_attrs(vs, attrs_given)
    pattern_values = dict(_shape_of(entry, p.shape).values) if shaped else {}
    if any(callable(v) for v in pattern_values.values()):  # values that depend on the case's types
        in_types = {o[0]: t for o, t in zip(occ, types) if o[3]}
        pattern_values = {k: (v(in_types) if callable(v) else v) for k, v in pattern_values.items()}
    ctx = Ctx(entry.op, p.version, p.opset, {o[0]: t for o, t in zip(occ, types) if o[3]},
              {f.name: t for f, t in zip(out_formals, out_types)}, full_attrs,
              tuple(f.name for f in out_formals), {**{o[0]: tuple(o[2]) for o in occ if o[3] and o[2] is not None},
                                                   **({o[1]: tuple(o[2]) for o in occ if o[3] and o[1] != o[0]}
                                                      if shaped else {})},
              dict(attrs_given), {o[0]: pattern_values[o[0]] for o in occ if o[3] and o[0] in pattern_values},
              tuple(o[0] for i, o in enumerate(occ) if o[3] and p.params == "initializers" and i > 0))
    n_data = sum(1 for o in occ if o[3] and o[2] is not None and o[0] in data_names)

    frozen = frozenset(pattern_values) | frozenset(entry.structural)

    def draw_values() -> list:
        """The exact values of one data set (``None`` for an absent input)."""
        exact: list[np.ndarray | None] = []
        custom = (entry.float_numerics.get(p.numerics) or entry.int_numerics.get(p.numerics)
                  or entry.string_numerics.get(p.numerics))
        if custom is not None:
            made = list(custom(rng, ctx, [o[2] for o in occ if o[3]]))
            it = iter(made)
            for o, t in zip(occ, types):
                exact.append(_coerce(next(it), t) if o[3] else None)
        elif shaped:
            # tied shapes: ordinary draws, the special values sprinkled into the first input
            sample_mode = "normal" if p.numerics in ("special", "int-extremes") else p.numerics
            for (formal, _, shape, present), t in zip(occ, types):
                exact.append(_sample(entry, t, formal, shape, sample_mode, rng) if present else None)
            if p.numerics in ("special", "int-extremes"):
                if occ:
                    exact[0] = _sprinkle(entry, exact[0], types[0], occ[0][0], rng)
        elif p.numerics == SPECIAL_ROWS:
            # ordinary values with the special ones at every code path of a vectorized kernel
            for i, ((formal, _, shape, present), t) in enumerate(zip(occ, types)):
                if not present:
                    exact.append(None)
                elif entry.family == "variadic" or formal in data_names:
                    base = _sample(entry, t, formal, shape, "normal", rng)
                    # which of NaN, +inf, -inf comes first rotates over the versions and types
                    lead_t = _type_name(_lead_formal(entry, vs).type_str, combo)
                    rot = p.version + {"float": 1, "double": 2}.get(lead_t, 0)
                    exact.append(V.special_rows(rng, base, _specials_of(entry, t, formal), shift=rot + i))
                else:
                    exact.append(_sample(entry, t, formal, (), "normal", rng))
        elif p.numerics == "special" or p.numerics == "int-extremes":
            # every combination of the data inputs' special values; optional parameters stay scalars
            in_grid = [o[3] and (entry.family == "variadic" or o[0] in data_names) for o in occ]
            lists = [_specials_of(entry, t, o[0]) for o, t, g in zip(occ, types, in_grid) if g]
            if n_data >= 3:
                lists = [ls if len(ls) <= 6 else list(np.asarray(ls, dtype=object)[rng.permutation(len(ls))[:6]])
                         for ls in lists]
            grid = _grid(lists, [t for t, g in zip(types, in_grid) if g])
            if entry.family == "variadic" and vs.since_version < 8:  # equal shapes before broadcasting
                grid = [np.array(a) for a in np.broadcast_arrays(*grid)]
            if entry.family == "binary" and "broadcast" in vs.attributes:  # legacy: B broadcasts to A's shape only
                grid = _legacy_grid(grid, legacy, shapes[1], rng)
            gi = iter(grid)
            for o, t, g in zip(occ, types, in_grid):
                if g:
                    exact.append(next(gi))
                else:
                    exact.append(_sample(entry, t, o[0], (), "normal", rng) if o[3] else None)
        else:
            for (formal, _, shape, present), t in zip(occ, types):
                exact.append(_sample(entry, t, formal, shape, p.numerics, rng) if present else None)
        # inputs a legitimate kernel may narrow (Pow's double exponent): values of the narrower type
        if entry.narrowed is not None:
            for i, ((formal, _, _, present), t) in enumerate(zip(occ, types)):
                to = entry.narrowed(ctx).get(formal)
                if present and to and exact[i] is not None and V.kind(t) == V.FLOAT:
                    exact[i] = V.representable(exact[i], to)
        # structural inputs (axes, shapes, indices, pads): the pattern's value or the entry's rule,
        # whatever the numerics class
        for i, ((formal, _, _, present), t) in enumerate(zip(occ, types)):
            if not present:
                continue
            if formal in pattern_values:
                exact[i] = _coerce(np.asarray(pattern_values[formal], dtype=object if V.kind(t) == V.INT else None), t)
            elif formal in entry.structural:
                exact[i] = _coerce(entry.structural[formal](rng, ctx), t)
        return exact

    def evaluate(exact: list) -> tuple[list, tuple]:
        """(inputs after repair, the present outputs' exact values) of one data set."""
        shapes_decl = [None if x is None else x.shape for x in exact]
        # legacy alignment for the oracle, repair, expected outputs
        aligned = list(exact)
        if legacy and not shaped and len(aligned) > 1 and aligned[1] is not None:
            aligned[1] = _align_legacy(aligned[1], aligned[0].ndim, attrs_given)
        call = [aligned[i] if occ[i][3] else None for i in range(len(occ))]
        call, outs = _evaluate(entry, ctx, call, full_attrs, types, [o[0] for o in occ], out_types, out_index,
                                frozen)
        final = [None if x is None else np.asarray(x).reshape(shapes_decl[i]) for i, x in enumerate(call)]
        return final, outs

    final, outs = evaluate(draw_values())
    # more data sets (the entry's ``datasets``): repeated inputs and initializers keep set 0's values
    n_sets, repeated = entry.datasets(ctx, p.numerics, p.params) if entry.datasets is not None else (1, ())
    keep = [i for i, o in enumerate(occ) if o[3] and (o[0] in repeated or (p.params == "initializers" and i > 0))]
    sets = [(final, outs)]
    for _ in range(n_sets - 1):
        exact = draw_values()
        for i in keep:
            exact[i] = final[i]
        fin_k, outs_k = evaluate(exact)
        if any(not np.array_equal(np.asarray(fin_k[i]), np.asarray(final[i]), equal_nan=V.kind(types[i]) == V.FLOAT)
               for i in keep):
            raise ValueError(f"{entry.op}-{p.version}: repair changed an input every data set repeats")
        sets.append((fin_k, outs_k))
    # the case
    gname = {f.name: entry.output_names.get(f.name, f.name) for f in outs_v}
    inputs, feeds_all = [], [{} for _ in sets]
    for i, ((formal, node_name, _, present), t) in enumerate(zip(occ, types)):
        if not present:
            inputs.append(Input(node_name, V.elem(t), (), present=False))
            continue
        arr = V.to_type(final[i], t)
        init = p.params == "initializers" and i > 0
        inputs.append(Input(node_name, V.elem(t), tuple(arr.shape), initializer=init, value=arr if init else None))
        if not init:
            for feeds, (fin_k, _) in zip(feeds_all, sets):
                feeds[node_name] = V.to_type(fin_k[i], t)
    tols: dict[str, list] = {}
    expected_all: list[dict] = [{} for _ in sets]
    for expected, (fin_k, outs_k) in zip(expected_all, sets):
        exact_outs = {f.name: o for f, o in zip(out_formals, outs_k)}
        own = entry.tolerance(ctx, fin_k, full_attrs, exact_outs) if entry.tolerance is not None else None
        for f in out_formals:
            t = _type_name(f.type_str, combo)
            with np.errstate(all="ignore"):
                expected[gname[f.name]] = V.to_type(np.asarray(exact_outs[f.name]), t)
            tols.setdefault(f.name, []).append(
                own[f.name] if own is not None else
                tolerance_for(entry, t, ctx, [x for x in fin_k if x is not None], full_attrs))
    outputs = []
    for f in outs_v:
        t = _type_name(f.type_str, combo)
        if f.name not in tols:
            outputs.append(Output(gname[f.name], V.elem(t), present=False))
        else:
            outputs.append(Output(gname[f.name], V.elem(t), tolerance=_merge_tolerances(tols[f.name])))
    expected = expected_all[0]
    first_t = (types[1] if entry.family == "select" else types[0]) if types else out_types[0]
    out_shape = np.shape(next(iter(expected.values())))
    tags = {"dtype": first_t, "rank": len(out_shape), "numerics": p.numerics, "opset": p.opset,
            "params": p.attrs_tag, "shape": p.shape, "outputs": ",".join(gname[f.name] for f in out_formals)}
    if len(set(combo.values())) > 1:
        tags["types"] = types_label(combo)
    if any(f.option == "optional" for f in vs.inputs):
        tags["optional_inputs"] = ",".join(p.optional) or "none"
    if len(inputs) > 1:
        tags["inputs_as"] = p.params
    if entry.family == "variadic":
        tags["arity"] = p.arity
    if 0 in out_shape:
        tags["zero_size"] = True
    for k, v in {**dict(p.attrs), **(legacy if shaped else {}), **fixed}.items():
        if k != "consumed_inputs":
            tags[f"attr_{k}"] = v
    tags.update(dict(p.extra))
    slots = entry.output_slots(p.version, full_attrs, p.outputs) if entry.output_slots is not None else None
    if slots is not None:
        tags["output_slots"] = slots
    if entry.datasets is not None:
        tags["datasets"] = n_sets
    if entry.tags is not None:
        tags.update(entry.tags(ctx))
    label = f"{types_label(combo)}/{p.numerics}/{p.shape}/{p.attrs_tag}"
    if p.attrs_tag in ("non-default", "drawn"):
        label += "/" + ",".join(f"{k}={v}" for k, v in p.attrs)
    if entry.family == "variadic":
        label += f"/n={p.arity}"
    if any(f.option == "optional" for f in vs.inputs):
        label += "/opt=" + ("+".join(p.optional) or "none")
    if any(f.option == "optional" for f in vs.outputs):
        label += "/out=" + ("+".join(gname[o] for o in p.outputs) or "required")
    label += f"/{p.params}/opset{p.opset}"
    contested = entry.contested(ctx, full_attrs) if entry.contested else None
    check = entry.check(ctx, final, full_attrs) if entry.check else None
    return Case(op=entry.op, since_version=p.version, opset=p.opset, attributes=attrs_given, inputs=inputs,
                outputs=outputs, datasets=[DataSet(f, e) for f, e in zip(feeds_all, expected_all)], tags=tags,
                label=label, domain=entry.domain, contested=contested, check=check, output_slots=slots)


def _merge_tolerances(tols: list[Tolerance]) -> Tolerance:
    """One tolerance for an output over several data sets: the largest terms of each."""
    if len(tols) == 1:
        return tols[0]
    return Tolerance(max(t.atol for t in tols), max(t.rtol for t in tols), max(t.spread for t in tols),
                     tols[0].variants, all(t.exact for t in tols), any(t.signed_zero for t in tols),
                     max(t.propagated for t in tols))


def _coerce(x, t: str) -> np.ndarray:
    k = V.kind(t)
    x = np.asarray(x)
    if k == V.FLOAT:
        return V.representable(x.astype(np.float64), t)
    if k == V.INT:
        out = np.empty(x.shape, dtype=object)
        out.ravel()[:] = [int(v) for v in x.ravel()]
        return out
    return x


# ----------------------------------------------------------------------------- error cases
def error_cases(entry: Entry, spec: OpSpec | None = None) -> list[Case]:
    """The invalid models of the entry (module docstring)."""
    spec = spec or op_spec(entry.op, entry.domain)
    out = []
    for v, vs in spec.versions.items():
        combos, _ = _combos(entry, vs)
        if not combos:
            continue
        ops_ = schedule.opsets(spec, v)
        opset = min(schedule.last_opset(spec, v), schedule.RUNTIME_OPSET) if v <= schedule.RUNTIME_OPSET else ops_[0]
        lead = _lead_formal(entry, vs).type_str
        combo = next((c for c in combos if c.get(lead, "") == "float"), combos[0])
        required = {k: e.values[k] for e in entry.attrs for k in e.values if vs.attributes.get(k) and
                    vs.attributes[k].required}
        generic = []
        if entry.family in ("binary", "select") or (entry.family == "variadic" and v >= 8):
            n = 3 if entry.family == "select" else 2
            shp = [(2, 3), (4,), (3,)][:n]
            generic.append(("broadcast", {}, shp, f"input shapes {', '.join(map(str, shp))} are not "
                                                  "multidirectionally broadcastable (docs/Broadcasting.md)"))
        if entry.family == "variadic" and v < 8:
            generic.append(("shape", {}, [(2, 3), (3,)], f"{entry.op}-{v} requires inputs of the same shape "
                                                         "(broadcasting arrives at version 8)"))
        if entry.family == "binary" and "broadcast" in vs.attributes:
            generic.append(("legacy-shape", {}, [(2, 3), (3,)], "without broadcast=1 the legacy version requires "
                                                                "B to have A's shape"))
            generic.append(("legacy-align", {"broadcast": 1}, [(2, 3), (2,)],
                            "with broadcast=1 and no axis B's shape must match A's trailing dims"))
        generic = [g + (None,) for g in generic]
        for e in entry.errors:
            if e.since <= v <= e.until:
                generic.append((e.tag, dict(e.attrs), list(e.shapes) if e.shapes else None, e.why, e))
        for tag, attrs, shp, why, err in generic:
            given = {k: a for k, a in {**required, **attrs}.items() if a is not None}
            c = combo
            if err is not None and err.type_name is not None:
                c = next((x for x in combos if x.get(lead, "") == err.type_name), None) or \
                    {k: err.type_name for k in combo}
            out.append(_error_case(entry, spec, vs, c, opset, tag, given, shp, why, err))
    return out


def _error_case(entry, spec, vs, combo, opset, tag, attrs, shapes, why, err=None) -> Case:
    rng = registry.case_rng(0, entry.op, vs.since_version, "error", tag)
    formals = [f for f in vs.inputs if f.option != "optional"]
    if shapes is None:
        shapes = [(2, 3)] * (len(formals) if entry.family != "variadic" else 2)
    inputs, feeds = [], {}
    # a variadic first input (family variadic; family shaped: Concat) gets one occurrence per shape
    variadic = entry.family == "variadic" or (entry.family == "shaped" and bool(formals)
                                              and formals[0].option == "variadic")
    names = ([f"{formals[0].name}_{i}" for i in range(len(shapes))] if variadic
             else [f.name for f in vs.inputs][: len(shapes)])
    ftypes = ([formals[0].type_str] * len(shapes) if variadic
              else [f.type_str for f in vs.inputs][: len(shapes)])
    over = dict(err.types) if err is not None else {}
    for name, shp, ts in zip(names, shapes, ftypes):
        t = over.get(name) or _type_name(ts, combo)
        x = V.to_type(_sample(entry, t, name, shp, "normal", rng), t)
        if err is not None and name in err.values:  # the value that makes the model invalid
            x = V.to_type(_coerce(np.broadcast_to(np.asarray(err.values[name]), shp), t), t)
        inputs.append(Input(name, V.elem(t), tuple(shp)))
        feeds[name] = x
    out_over = dict(err.out_types) if err is not None else {}

    def out_type(f) -> str:
        return out_over.get(f.name) or _type_name(f.type_str, combo)

    outputs = [Output(f.name, V.elem(out_type(f))) for f in vs.outputs if f.option != "optional"]
    slots = None
    tags: dict[str, Any] = {}
    if err is not None and (err.outputs is not None or err.slots is not None):
        requested = dict(err.outputs or {})
        outputs = [Output(entry.output_names.get(f.name, f.name), V.elem(out_type(f)),
                          present=f.option != "optional" or f.name in requested,
                          shape=tuple(requested[f.name]) if f.name in requested else None)
                   for f in vs.outputs]
        slots = err.slots
    if entry.output_slots is not None:
        present = tuple(o.name for o in outputs if o.present)
        formal = tuple(f.name for f in vs.outputs if entry.output_names.get(f.name, f.name) in present
                       and f.option == "optional")
        if slots is None:
            slots = entry.output_slots(vs.since_version, _full_attrs(vs, attrs), formal)
        last = max(i for i, o in enumerate(outputs) if o.present) + 1
        tags["output_slots"] = max(last, slots or 0)
    first_t = (over.get(names[0]) or _type_name(ftypes[0], combo)) if names else \
        (out_over.get(vs.outputs[0].name) or _type_name(vs.outputs[0].type_str, combo))  # no inputs: the output's
    return Case(op=entry.op, since_version=vs.since_version, opset=opset, attributes=attrs, inputs=inputs,
                outputs=outputs, datasets=[DataSet(feeds)], expect_error=why,
                tags={"dtype": first_t, "rank": len(shapes[0]) if shapes else 0, "opset": opset, "error": tag, **tags},
                label=f"{first_t}/error={tag}", domain=entry.domain, output_slots=slots)


# ----------------------------------------------------------------------------- suite and explore
def cases(entry: Entry, seed: int, depth: str = "full", select=None) -> list[Case]:
    """Every case of ``entry`` (value cases at :func:`points`, then :func:`error_cases`),
    deterministic in ``seed``: each case draws from its own stream keyed by its coordinates.
    ``select``: a predicate on the :class:`Point`; only those value cases are built (byte for
    byte the full suite's), and no error case.

    ``depth="smoke"`` keeps the first point of every (version, type combination) and the first
    invalid model of every version (:data:`conformance.registry.DEPTHS`); as each case's stream is keyed by
    its coordinates, those cases are byte for byte the full suite's (same ids).
    """
    spec = op_spec(entry.op, entry.domain)
    out = []
    pts = points(entry, spec)
    if depth == "smoke":
        pts = _smoke_points(pts, spec)
    if select is not None:
        pts = [p for p in pts if select(p)]
    for k, p in enumerate(pts):
        key = (repr(p.outputs),) if p.outputs else ()
        rng = registry.case_rng(seed, entry.op, p.version, repr(p.types), p.numerics, p.shape, p.attrs_tag,
                                repr(p.attrs), repr(p.optional), p.params, p.arity, p.opset, repr(p.extra), *key)
        out.append(build(entry, p, rng, spec))
    errors = error_cases(entry, spec) if select is None else []
    if depth == "smoke":
        firsts: dict[int, Case] = {}
        for c in errors:
            firsts.setdefault(c.since_version, c)
        errors = [c for c in errors if firsts[c.since_version] is c]
    out.extend(errors)
    if entry.extra_cases is not None and select is None:
        out.extend(entry.extra_cases(seed, depth))
    return out


def _smoke_points(pts: list[Point], spec: OpSpec) -> list[Point]:
    """One point per (version, type combination), in order of first appearance: the one whose
    present formals bind the most type parameters, then with the most optional formals present
    (the first among equals), so that a parameter only an optional formal binds is exercised
    (Dropout's T1 through ratio, T2 through mask)."""
    def score(p: Point) -> tuple[int, int]:
        vs = spec.versions[p.version]
        present = [f for f in vs.inputs if f.option != "optional" or f.name in p.optional]
        present += [f for f in vs.outputs if f.option != "optional" or f.name in p.outputs]
        return len({f.type_str for f in present} & set(vs.type_constraints)), len(p.optional) + len(p.outputs)

    best: dict[tuple, tuple[tuple[int, int], Point]] = {}
    for p in pts:
        key, sc = (p.version, p.types), score(p)
        if key not in best or sc > best[key][0]:
            best[key] = (sc, p)
    keep = {id(p) for _, p in best.values()}
    return [p for p in pts if id(p) in keep]


def strategy(entry: Entry):
    """Hypothesis strategy of fresh value cases of ``entry`` (explore mode): the same
    coordinates as :func:`points` -- version, type combination, numerics class, shape
    pattern, attribute state, optional inputs, opset (any in the version's range),
    inputs/initializers, arity -- each drawn with ``sampled_from`` (shrinking goes to the
    first: the oldest version, the first combination, ``normal``, the simplest shape,
    attributes absent), and a data seed."""
    from hypothesis import strategies as st

    spec = op_spec(entry.op, entry.domain)
    per_version = {}
    for v, vs in spec.versions.items():
        combos, _ = _combos(entry, vs)
        if combos and shape_patterns(entry, vs):
            # shrinking goes to the first: float (the type most kernels are written for) first
            per_version[v] = (vs, sorted(combos, key=lambda c: any(t != "float" for t in c.values())))
    versions = sorted(per_version)
    if not versions and entry.extra_cases is not None:
        # every combination binds a sequence or optional: draw among the entry's own value cases,
        # oldest version first (shrinking goes there)
        made = sorted((c for c in entry.extra_cases(0, "full") if c.expect_error is None),
                      key=lambda c: (c.since_version, c.opset))
        return st.sampled_from(made)
    # A coordinate with one choice at some versions and several at others gets a forced choice
    # at the former: every version then draws as many choices, so shrinking (shortest choice
    # sequence first) compares versions coordinate by coordinate and reaches the oldest one
    # (version 1's legacy consumed_inputs state made every later version of Relu "simpler").
    many = [(len(c) > 1, len(attr_states(entry, vs)) > 1) for vs, c in per_version.values()]
    pad_combos, pad_states = (len({m[i] for m in many}) > 1 for i in (0, 1))

    def pick(draw, xs, pad):
        return xs[draw(st.integers(0, 0))] if pad and len(xs) == 1 else draw(st.sampled_from(xs))

    @st.composite
    def draw_case(draw) -> Case:
        v = draw(st.sampled_from(versions))
        vs, combos = per_version[v]
        combo = pick(draw, combos, pad_combos)
        first = _type_name(_lead_formal(entry, vs).type_str, combo)
        nums, states, opts = numerics_for(entry, first), attr_states(entry, vs), optional_states(vs)
        if entry.numerics_rule is not None:  # only the classes, states and inputs the rule admits
            nums = [n for n in nums if any(entry.numerics_rule(v, n, a, o) for _, a in states for o in opts)] or nums
        num = draw(st.sampled_from(nums))
        shape = draw(st.sampled_from(shape_patterns(entry, vs)))
        if entry.numerics_rule is not None:
            states = [s for s in states if any(_num_admits(entry, v, num, s[1], o, shape) for o in opts)] or states
        tag, attrs = pick(draw, states, pad_states)
        drawn = {}
        for k, (lo, hi) in sorted(entry.explore_attrs.items()):  # beyond the table (explore only)
            if k in vs.attributes:
                use, value = draw(st.booleans()), draw(st.floats(lo, hi, width=32))
                if use:
                    drawn[k] = value
        if drawn:
            tag, attrs = "drawn", {**attrs, **drawn}
        if entry.numerics_rule is not None:
            opts = [o for o in opts if _num_admits(entry, v, num, attrs, o, shape)] or opts
        opts = _opts_for(entry, opts, shape)
        if entry.optional_rule is not None:
            opts = [o for o in opts if entry.optional_rule(v, combo, o)] or opts
        opt = draw(st.sampled_from(opts))
        opset = draw(st.integers(v, schedule.last_opset(spec, v)))
        arity = draw(st.sampled_from(ARITIES)) if entry.family == "variadic" else 1
        params = draw(st.sampled_from(("inputs", "initializers")))
        outs = [o for o in output_states(entry, vs)
                if _admits(entry, vs, attrs, o, shape if entry.family == "shaped" else None)] or [()]
        requested = draw(st.sampled_from(outs))
        dims = ()
        if entry.family == "shaped":  # drawn here so that shrinking makes them small
            dims = tuple((c, draw(st.integers(lo, hi))) for c, (lo, hi) in _shape_of(entry, shape).letters().items())
        elif entry.family == "unary" and shape != "rank0":
            dims = tuple((f"d{i}", draw(st.integers(lo, hi))) for i, (lo, hi) in enumerate(_unary_dims(shape)))
        seed = draw(st.integers(0, 2**32 - 1))
        p = Point(v, opset, tuple(combo.items()), num, shape, tag, tuple(attrs.items()), opt, params, arity,
                  (("explore_seed", seed),), requested, dims)
        return build(entry, p, np.random.default_rng(seed), spec)

    return draw_case()


_SKIPPED: dict[tuple[str, str], dict] = {}
#: (domain, op) -> entry, for every registered entry.
ENTRIES: dict[tuple[str, str], Entry] = {}


def register_entries(entries: Iterable[Entry], family: str) -> None:
    """Register each entry's suite generator and explore strategy (keyed by (domain, op)).

    Args:
        entries: the operator table's entries of one family module.
        family: the family's name as reports show it (the module's name, words spaced:
            ``"layer normalization"``); :func:`conformance.registry.family`.
    """
    for e in entries:
        # a pattern is looked up by name: patterns sharing a name may differ only in the versions
        # they apply to (Softmax-13's long rows once took version 1's axis this way)
        by_name: dict[str, Shape] = {}
        for sh in e.shapes:
            first = by_name.setdefault(sh.name, sh)
            if dataclasses.replace(first, since=0, until=0) != dataclasses.replace(sh, since=0, until=0):
                raise ValueError(f"{e.op}: two different shape patterns are named {sh.name!r}")
        ENTRIES[e.key] = e

        def gen(seed: int, depth: str = "full", _e=e) -> list[Case]:
            return cases(_e, seed, depth)

        gen.__qualname__ = f"cases_{e.op}"
        gen.__doc__ = f"Cases of {e.op} (the element-wise engine)."

        def strat(_e=e):
            return strategy(_e)

        strat.__qualname__ = f"strategy_{e.op}"
        def unavailable(_e=e) -> str | None:
            try:
                op_spec(_e.op, _e.domain)
            except KeyError as exc:
                return str(exc.args[0]) if exc.args else str(exc)
            return None

        registry.register(e.op, domain=e.domain, version=GEN_VERSION, unavailable=unavailable, family=family,
                          depths=True)(gen)
        registry.register_strategy(e.op, domain=e.domain)(strat)


def skipped_combinations(entry: Entry) -> dict[tuple[int, str], str]:
    """(since_version, combination label) -> reason, for the combinations the schema admits
    and the engine does not generate (coverage reports them)."""
    if entry.key in _SKIPPED:
        return _SKIPPED[entry.key]
    spec = op_spec(entry.op, entry.domain)
    out = _SKIPPED[entry.key] = {}
    for v, vs in spec.versions.items():
        _, skipped = _combos(entry, vs)
        for label, why in skipped.items():
            out[(v, label)] = why
        if entry.declared is not None:  # generated, but no model can show the combination whole
            for c in type_combinations(vs):
                names = {q: _type_name(t, {}) for q, t in c.items()}
                why = entry.declared(v, names)
                if why:
                    out.setdefault((v, types_label(names)), why)
    return out


__all__ = ["Point", "build", "cases", "error_cases", "points", "register_entries", "strategy", "tolerance_for",
           "ENTRIES", "GEN_VERSION"]
