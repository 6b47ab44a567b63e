"""The report's per-case data: what the page's script reads of every case, built one case at a
time in compact columns, so that a run of any size is rendered with bounded memory.

:func:`case_row` takes what the page shows of one result record; :class:`CaseStore` keeps the rows
of a run in arrays (numbers), interned tables (texts that repeat) and byte spools (ids and
outputs), in the order they come (a run's suite order), and writes them as the page's columnar
JSON (:meth:`CaseStore.pieces`) in the page's order: worst outcome first, then operator, then id.
The store also answers what the page's aggregates read of every case (counts, messages of the
cases that did not pass, the accuracy ratios of those that did) without a dict per case
(:meth:`CaseStore.slim`).  At 60,000 cases the rows took 8 KiB a case as Python objects; here
about 0.2 KiB.
"""

from __future__ import annotations

import functools
import json
import math
import os
from array import array
from collections import Counter, defaultdict
from collections.abc import Iterable, Iterator
from pathlib import Path

from markupsafe import Markup

from ..compact import Ints, TextSpool, trim_heap
from ..jsonsafe import JS_SAFE_INT, dumps, encode_float, page_safe
from ..suite import op_key
from .common import FEATURES, ORDER, SEVERITY, dtype_key, dtype_of, feature_value, repro_prefix
from .families import OTHER, family_sort_key, op_families

#: Non-passing cases whose input shapes and model attributes are embedded: bounded work and file
#: size for runs where almost everything fails.
MAX_DETAIL_CASES = 10000


def json_for_script(obj) -> Markup:
    """``obj`` as JSON that is safe inside ``<script type="application/json">``.

    ``<``, ``>`` and ``&`` are written as JSON escapes, so no string can close the
    element (``</script>``) or open a comment; ``JSON.parse`` gives back the original
    text.  Non-finite floats and lone surrogates are written in :mod:`conformance.jsonsafe`'s
    encoding (JSON has no NaN; the page is UTF-8).
    """
    text = dumps(obj, separators=(",", ":"), ensure_ascii=False)
    text = text.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")
    text = text.replace("\u2028", "\\u2028").replace("\u2029", "\\u2029")
    return Markup(text)


# -- manifest and attributes ------------------------------------------------------------

def load_manifest(bundle_or_file: str | os.PathLike) -> dict | None:
    """A bundle's ``manifest.json`` (the bundle directory or archive, or the file itself), or ``None``
    if unreadable."""
    from conformance.bundle import FORMAT, BundleError, is_archive, manifest_bytes

    p = Path(bundle_or_file)
    try:
        text = manifest_bytes(p) if p.is_dir() or is_archive(p) else p.read_bytes()
        m = json.loads(text)
    except (OSError, ValueError, BundleError):
        return None
    if not isinstance(m, dict) or m.get("format") != FORMAT or not isinstance(m.get("cases"), list):
        return None
    return m


def _type_name(elem_type) -> str:
    """The name of an ONNX element type (``float16``; the type's enum name, or the value as text,
    where it is no type we know)."""
    try:
        return _known_type_name(elem_type)
    except TypeError:  # unhashable: not a type at all
        return str(elem_type)


def _kind_type_name(elem_type, kind) -> str:
    """:func:`_type_name`, wrapped as the ONNX type string of a sequence or optional kind
    (``seq(float)``, ``optional(seq(float))``; :data:`conformance.case.KINDS`)."""
    name = _type_name(elem_type)
    if kind == "sequence":
        return f"seq({name})"
    if kind == "optional_tensor":
        return f"optional({name})"
    if kind == "optional_sequence":
        return f"optional(seq({name}))"
    return name


@functools.lru_cache(maxsize=None)
def _known_type_name(elem_type) -> str:
    try:
        from conformance.dtypes import type_name

        return type_name(int(elem_type))
    except (KeyError, TypeError, ValueError):
        try:
            import onnx

            return onnx.TensorProto.DataType.Name(int(elem_type)).lower()
        except (ValueError, TypeError):
            return str(elem_type)


def _attr_display(v):
    """An attribute value as the drill-down shows it: float attributes are float32 in the
    model, so 7 significant digits say all of it (lists element by element)."""
    if isinstance(v, float):
        return _num(v, 7)
    if isinstance(v, list):
        return [_num(x, 7) if isinstance(x, float) else x for x in v]
    return v


def _model_attributes(bundle_dir: Path, rel: Path, op: str) -> dict | None:
    """Attributes of the node ``op`` in the model of the case directory ``rel`` of the bundle
    ``bundle_dir`` (a directory or an archive; ``None`` if unreadable)."""
    try:
        import onnx
        from onnx import helper

        from conformance.bundle import _read_file

        model = onnx.load_model_from_string(_read_file(str(bundle_dir), f"{rel.as_posix()}/model.onnx"))  # directory or archive
    except Exception:  # noqa: BLE001 - a missing or broken model just has no attributes shown
        return None
    for node in model.graph.node:
        if node.op_type == op or len(model.graph.node) == 1:
            out = {}
            for a in node.attribute:
                try:
                    v = helper.get_attribute_value(a)
                except Exception:  # noqa: BLE001
                    continue
                if isinstance(v, bytes):
                    v = v.decode("utf-8", "replace")
                elif isinstance(v, (list, tuple)):
                    v = [x.decode("utf-8", "replace") if isinstance(x, bytes) else x for x in v]
                    if not all(isinstance(x, (int, float, str)) for x in v):
                        v = str(v)
                elif not isinstance(v, (int, float, str)):
                    v = type(v).__name__
                out[a.name] = _attr_display(v)
            return out
    return {}


# -- the embedded case data ---------------------------------------------------------------

def _num(x, sig: int | None = None):
    """A number for the page's JSON: non-finite values as :mod:`conformance.jsonsafe` encodes
    them, optionally rounded to ``sig`` significant digits (a finite value that rounding would
    take beyond the float range, such as the largest double, is kept as it is)."""
    if x is None or isinstance(x, bool):
        return x
    if isinstance(x, int):
        return _json_safe(x)
    if isinstance(x, float):
        if not math.isfinite(x):
            return encode_float(x)
        if sig:
            r = float(f"{x:.{sig}g}")
            return r if math.isfinite(r) else x
        return x
    if isinstance(x, str):
        return x
    return _json_safe(x)


class _Interner:
    def __init__(self, first=None):
        self.items: list = []
        self.index: dict = {}
        if first is not None:
            self.add(first)

    def add(self, value, key=None) -> int:
        key = value if key is None else key
        i = self.index.get(key)
        if i is None:
            i = self.index[key] = len(self.items)
            self.items.append(value)
        return i


def _json_safe(v):
    """``v`` as page data (:func:`conformance.jsonsafe.page_safe`), with a fast path for the
    plain values that most tags are."""
    t = type(v)
    if (t is str and v.isascii()) or t is bool or v is None or (t is int and abs(v) <= JS_SAFE_INT):
        return v
    return page_safe(v)


def detail_row(det) -> tuple | None:
    """``(io signature, its key, attributes, their key)`` of a record's ``detail`` (what the page's
    drill-down shows of a case that did not pass), or ``None`` when it is not one."""
    if not isinstance(det, dict):
        return None
    sig = {"in": [[str(x[0]), _kind_type_name(x[1], x[5] if len(x) > 5 else None), x[2], x[3], x[4]]
                  for x in det.get("inputs") or []],
           "out": [[str(x[0]), _kind_type_name(x[1], x[3] if len(x) > 3 else None), x[2]]
                   for x in det.get("outputs") or []]}
    attrs = _json_safe({k: _attr_display(v) for k, v in (det.get("attributes") or {}).items()})
    return sig, json.dumps(sig, sort_keys=True), attrs, json.dumps(attrs, sort_keys=True)


def case_row(c: dict) -> tuple:
    """What :class:`CaseStore` takes from the case record ``c``, nothing interned yet (the
    drill-down detail apart: :func:`detail_row`, for the cases the page shows).

    Returns:
        ``(id, operator (:func:`conformance.suite.op_key`), outcome, [(tag, interning key, JSON-safe value)], [feature value per
        FEATURES], dtype, message, phase, opset, since_version, duration in ms, expected
        rejection or "", [output])``: an output ``(name, ratio)`` (passing output of a
        passing case) or ``(name, passed, ratio, max_abs_err, atol, rtol, reason, worst_index,
        expected_at_worst, actual_at_worst)``.
    """
    outcome = str(c.get("outcome"))
    passed_case = outcome == "pass"
    tags = c.get("tags")
    if not isinstance(tags, dict):
        tags = {}
        c = {**c, "tags": tags}
    tag_items = []
    for k, v in tags.items():
        t = type(v)
        if t is str:
            key = v
        elif t is int or t is bool or v is None:
            key = (t, v)  # 1, True and 1.0 are equal as dict keys; keep them apart
        elif t is float and math.isfinite(v):
            key = (t, repr(v))  # repr: 0.0 and -0.0 apart
        else:
            v = _json_safe(v)
            key = json.dumps(v, sort_keys=True)
        tag_items.append((k, key, v))
    fvals = [feature_value(c, k) for k, _, _ in FEATURES]
    d = c.get("duration_s")
    outs = []
    for o in c.get("outputs") or ():
        name = str(o.get("name", ""))
        if passed_case and o.get("passed"):
            outs.append((name, _num(o.get("ratio"), 3)))
            continue
        tol = o.get("tolerance") or {}
        outs.append((name, 1 if o.get("passed") else 0, _num(o.get("ratio"), 4), _num(o.get("max_abs_err"), 4),
                     _num(tol.get("atol"), 4), _num(tol.get("rtol"), 4), str(o.get("reason") or ""),
                     _json_safe(o.get("worst_index")), _num(o.get("expected_at_worst")),
                     _num(o.get("actual_at_worst"))))
    return (str(c.get("id")), op_key(c.get("op", ""), c.get("domain")), outcome, tag_items, fvals, dtype_of(c),
            str(c.get("message") or ""),
            str(c.get("phase") or ""), c.get("opset"), c.get("since_version"),
            _num(d * 1000.0, 2) if isinstance(d, (int, float)) and not isinstance(d, bool) else None,
            str(c["expect_error"]) if c.get("expect_error") else "", outs)


def _js(v) -> str:
    """One value of the case data as :func:`json_for_script` writes it inside a list (fast for the
    plain numbers most values are)."""
    t = type(v)
    if t is int and -JS_SAFE_INT <= v <= JS_SAFE_INT:
        return str(v)
    if v is None:
        return "null"
    if t is float and math.isfinite(v):
        return repr(v)
    return str(json_for_script(v))


#: (column, number column of :class:`CaseStore`) for the numbers every case has: ``ov`` (opset),
#: ``sv`` (since_version) and ``dur`` (milliseconds); a value the array cannot hold (``None``, a
#: text, a huge integer, a non-finite duration) is kept beside it, by case.
_NUMBER_COLUMNS = ("ov", "sv", "dur")


class CaseStore:
    """The report's per-case data (:func:`case_row` of every record), added one record at a time in
    the order a run's suite has them, kept compact, written in the page's order.

    Per case the store keeps 4-byte indices into interned tables (operator, dtype, outcome,
    message, phase, expected rejection, features, tag key set and tag values), three numbers
    (opset, since_version, duration) and two texts (id and outputs as JSON) in byte spools; per
    ``(operator, dtype)``, the error/tolerance ratios of the outputs of passing cases (the
    accuracy section's input).  Interned tables are numbered in the order the records come, so the
    same records in the same order give the same page.

    Attributes:
        n: cases added.
        ratios: ``{(operator, dtype): array of float64}``, the finite ``ratio`` of every output of
            every passing case (:func:`conformance.reports.accuracy.collect` of the records).
        undetailed: cases that did not pass and whose record has no ``detail`` (results written
            before 0.4: the page then reads input shapes from the bundle's manifest).
    """

    def __init__(self, records: Iterable[dict] = (), *, detail_at, id_at=None):
        """Args:
            records: records to add now (:meth:`add`).
            detail_at: ``detail_at(i)``, the ``detail`` of case ``i``'s record, read again (from
                results.jsonl, results.json or the document): the store keeps, of a case's detail,
                only that it has one, and the page reads it for the cases it shows
                (:data:`MAX_DETAIL_CASES`; 16,000 distinct signatures kept took 24 MiB).
            id_at: ``id_at(i)``, the id of case ``i``, where the caller keeps the ids (a run's
                suite does): the store then keeps none.
        """
        self._id_at, self._detail_at = id_at, detail_at
        self.n = 0
        self._oc, self.ops, self.dtypes, self.phases = _Interner(), _Interner(), _Interner(), _Interner("")
        self.strings = _Interner("")
        self._domains: dict[str, str] = {}
        self._tag_keys = _Interner()
        self._tag_vals: list[_Interner] = []
        self._feat = [_Interner() for _ in FEATURES]
        self._int = {k: Ints() for k in ("oc", "op", "dt", "msg", "ph", "xe")}
        self._detailed = bytearray()  # 1: a case that did not pass and whose record has a detail
        self._feat_col = [Ints() for _ in FEATURES]
        self._numbers = {"ov": Ints(), "sv": Ints(), "dur": array("d")}
        self._odd: dict[tuple[str, int], object] = {}
        self._keysets = _Interner()  # the tag keys a case has, in its record's order
        self._ks, self._tagv, self._tag_end = Ints(), Ints(), Ints()
        self._ids = TextSpool() if id_at is None else None
        self._out = TextSpool()
        self._buckets: dict[tuple[int, int], array] = {}
        self.ratios: dict[tuple[str, str], array] = defaultdict(lambda: array("d"))
        self.undetailed = 0
        for r in records:
            self.add(r)

    @classmethod
    def of(cls, cases: list[dict]) -> CaseStore:
        """The store of a results document's ``cases``, which stay in memory (the store reads
        their ids and details from them again rather than keep copies)."""
        return cls(cases, detail_at=lambda i: cases[i].get("detail"), id_at=lambda i: str(cases[i].get("id")))

    def add(self, c: dict) -> None:
        """Add the result record ``c`` (a :meth:`conformance.runner.CaseResult.to_json` dict, or a
        results document's case; any malformed field is shown as it is, never raised on)."""
        (cid, op, outcome, tag_items, fvals, dt, msg, phase, opset, sv, dur, xe, outs) = case_row(c)
        i, col, s_add = self.n, self._int, self.strings.add
        oc, opi = self._oc.add(outcome), self.ops.add(op)
        self._domains.setdefault(op, str(c.get("domain") or ""))
        col["oc"].append(oc)
        col["op"].append(opi)
        col["dt"].append(self.dtypes.add(dt))
        col["msg"].append(s_add(msg))
        col["ph"].append(self.phases.add(phase))
        col["xe"].append(s_add(xe) if xe else 0)
        for name, v in (("ov", opset), ("sv", sv), ("dur", dur)):
            arr = self._numbers[name]
            if name == "dur" and type(v) is float and math.isfinite(v):
                arr.append(v)
            elif name != "dur" and type(v) is int and -JS_SAFE_INT <= v <= JS_SAFE_INT:
                arr.append(v)
            else:
                arr.append(0)
                self._odd[(name, i)] = v
        for j, fv in enumerate(fvals):
            self._feat_col[j].append(self._feat[j].add(fv))
        keys = []
        for k, key, v in tag_items:
            ki = self._tag_keys.add(k)
            if ki == len(self._tag_vals):
                self._tag_vals.append(_Interner())
            keys.append(ki)
            self._tagv.append(self._tag_vals[ki].add(v, key))
        self._ks.append(self._keysets.add(tuple(keys)))
        self._tag_end.append(len(self._tagv))
        outs_text = []
        for o in outs:
            if len(o) == 2:
                outs_text.append(f"[{s_add(o[0])},{_js(o[1])}]")
            else:
                outs_text.append(f"[{s_add(o[0])},{','.join(map(_js, o[1:6]))},{s_add(o[6])},"
                                 f"{','.join(map(_js, o[7:]))}]")
        self._out.add("[" + ",".join(outs_text) + "]" if outs_text else "0")
        self._detailed.append(outcome != "pass" and isinstance(c.get("detail"), dict))
        if outcome != "pass" and "detail" not in c:
            self.undetailed += 1
        if outcome == "pass":
            for o in c.get("outputs") or ():
                r = o.get("ratio") if isinstance(o, dict) else None
                if type(r) in (int, float) and math.isfinite(r):
                    self.ratios[(op, dt)].append(float(r))
        if self._ids is not None:
            self._ids.add(cid)
        b = self._buckets.get((oc, opi))
        if b is None:
            b = self._buckets[(oc, opi)] = array("I")
        b.append(i)
        self.n += 1

    # -- what the page's aggregates read -------------------------------------------------

    def id(self, i: int) -> str:
        """The id of case ``i`` (in the order added)."""
        return self._ids.get(i) if self._ids is not None else str(self._id_at(i))

    def outcome(self, i: int) -> str:
        """The outcome of case ``i`` (in the order added)."""
        return self._oc.items[self._int["oc"][i]]

    def slim(self) -> "SlimCases":
        """Every case as the small record the page's aggregates and the CLI's summary read."""
        return SlimCases(self)

    def cells(self, key: str = "dtype") -> dict[tuple[str, str], Counter]:
        """Outcome counts per (operator, value of ``key``): ``dtype`` or a feature of :data:`FEATURES`
        (:func:`conformance.reports.html.data_matrix`'s cells)."""
        if key == "dtype":
            names, col = self.dtypes.items, self._int["dt"]
        else:
            j = [k for k, _, _ in FEATURES].index(key)
            names, col = self._feat[j].items, self._feat_col[j]
        ops, outcomes = self.ops.items, self._oc.items
        cells: dict[tuple[str, str], Counter] = defaultdict(Counter)
        for (op, v, oc), k in Counter(zip(self._int["op"], col, self._int["oc"])).items():
            cells[(ops[op], names[v])][outcomes[oc]] += k
        return cells

    def family_names(self, families: dict[str, str]) -> list[str]:
        """The families of the stored operators, in :func:`family_sort_key` order."""
        return sorted({families.get(o, OTHER) for o in self.ops.items}, key=family_sort_key)

    # -- the page's case data ------------------------------------------------------------

    def order(self) -> array:
        """The cases in the page's order: worst outcome first (:data:`SEVERITY`), then operator, then
        id (equal ids in the order they came); as indices in the order they were added."""
        sev = {o: k for k, o in enumerate(SEVERITY)}
        groups: dict[tuple[int, str], list[array]] = defaultdict(list)
        for (oc, opi), b in self._buckets.items():
            groups[(sev.get(self._oc.items[oc], -1), self.ops.items[opi])].append(b)
        perm = array("I")
        get = self.id
        for key in sorted(groups):
            members = [i for b in groups[key] for i in b]
            perm.extend(sorted(members, key=lambda i: (get(i), i)))
        return perm

    def pieces(self, families: dict[str, str] | None = None, run: dict | None = None, suite: dict | None = None,
               manifest: dict | None = None, bundle_dir: str | os.PathLike | None = None) -> Iterator[str]:
        """The case data as the page's script reads it (layout: :func:`case_data`), as pieces of
        JSON text (:func:`json_for_script`'s escaping) whose concatenation is the document; the
        largest piece is one column.

        Args:
            families: ``{operator: family}`` (default: every operator in :data:`OTHER`).
            run, suite: the results document's ``run`` and ``suite`` (the command that reruns a case).
            manifest: the bundle's manifest, for the input shapes of non-passing cases whose
                record has no ``detail``; ``bundle_dir``: the bundle, for their model attributes.
        """
        families = families or {}
        perm = self.order()
        outcomes = list(ORDER) + sorted(set(self._oc.items) - set(ORDER))
        ocmap = [outcomes.index(o) for o in self._oc.items]
        fam_names = self.family_names(families)
        tkeys = sorted(self._tag_keys.items)
        kmap = [tkeys.index(k) for k in self._tag_keys.items]
        # a key set's keys in the page's key order, and where each of its values comes from
        set_order = [sorted(range(len(ks)), key=lambda j, ks=ks: kmap[ks[j]]) for ks in self._keysets.items]
        sets = [[kmap[ks[j]] for j in order] for ks, order in zip(self._keysets.items, set_order)]
        io_col, at_col, iosigs, attrsets = self._page_details(perm, manifest, bundle_dir)
        trim_heap()  # the details read again and the sort's keys
        col = self._int
        head = {
            "n": self.n, "outcomes": outcomes, "ops": self.ops.items,
            "families": fam_names, "opfam": [fam_names.index(families.get(o, OTHER)) for o in self.ops.items],
            "dtypes": self.dtypes.items, "dtype_order": sorted(self.dtypes.items, key=dtype_key),
            "phases": self.phases.items, "strings": self.strings.items,
        }
        yield str(json_for_script(head))[:-1] + ',"c":{'

        def ints(values) -> str:
            return "[" + ",".join(map(str, values)) + "]"

        def numbers(name: str) -> str:
            arr, odd = self._numbers[name], self._odd
            conv = repr if name == "dur" else str
            return "[" + ",".join(_js(odd[(name, i)]) if (name, i) in odd else conv(arr[i]) for i in perm) + "]"

        yield '"op":' + ints(col["op"][i] for i in perm)
        yield ',"dt":' + ints(col["dt"][i] for i in perm)
        yield ',"oc":' + ints(ocmap[col["oc"][i]] for i in perm)
        yield ',"msg":' + ints(col["msg"][i] for i in perm)
        yield ',"ph":' + ints(col["ph"][i] for i in perm)
        for name in _NUMBER_COLUMNS:
            yield f',"{name}":' + numbers(name)
        yield ',"out":['
        for k in range(0, self.n, 4096):
            yield ("," if k else "") + ",".join(self._out.get(i) for i in perm[k:k + 4096])
        yield "]"
        for name, values, empty in (("xe", [col["xe"][i] for i in perm], 0), ("io", io_col, -1), ("at", at_col, -1)):
            if any(v != empty for v in values):  # a column that says nothing is left out
                yield f',"{name}":' + ints(values)
        yield ',"tk":' + ints(self._ks[i] for i in perm) + ',"tv":['
        for k in range(0, self.n, 4096):
            yield ("," if k else "") + ",".join(self._tag_values(i, set_order) for i in perm[k:k + 4096])
        yield "]"
        # ids, front-coded (consecutive ids, sorted, share long prefixes), each column in chunks
        for name in ("idp", "ids"):
            yield f',"{name}":['
            prev = ""
            for k in range(0, self.n, 4096):
                part = []
                for i in perm[k:k + 4096]:
                    cid = self.id(i)
                    p, m = 0, min(len(prev), len(cid))
                    while p < m and prev[p] == cid[p]:
                        p += 1
                    part.append(p if name == "idp" else cid[p:])
                    prev = cid
                text = ints(part) if name == "idp" else str(json_for_script(part))
                yield ("," if k else "") + text[1:-1]
            yield "]"
        tvals = [self._tag_vals[self._tag_keys.index[k]].items for k in tkeys]
        yield '},"tags":' + str(json_for_script({"keys": tkeys, "vals": tvals, "sets": sets}))
        fkeys = [k for k, _, _ in FEATURES]
        yield ',"feat":' + str(json_for_script({"keys": fkeys, "vals": [v.items for v in self._feat]}))[:-1] + ',"col":['
        yield ",".join(ints(c[i] for i in perm) for c in self._feat_col) + "]}"
        yield ',"io":[' + ",".join(iosigs.items) + '],"attrs":[' + ",".join(attrsets.items) + "]"
        yield ',"repro":' + str(json_for_script(repro_prefix(run, suite))) + "}"

    def _tag_values(self, i: int, set_order: list[list[int]]) -> str:
        """Case ``i``'s tag values (indices into each key's values) in its key set's page order."""
        start = self._tag_end[i - 1] if i else 0
        v = self._tagv
        return "[" + ",".join(str(v[start + j]) for j in set_order[self._ks[i]]) + "]"

    def _page_details(self, perm: array, manifest: dict | None, bundle_dir) -> tuple[list, list, _Interner, _Interner]:
        """``(io column, at column, signatures, attribute sets)`` in page order: the recorded detail of
        the first :data:`MAX_DETAIL_CASES` non-passing cases that have one, else (older results) the
        input/output signature from the manifest's entry and the attributes from the bundle's model."""
        entries = {}
        if manifest:
            entries = {e.get("id"): e for e in manifest.get("cases", []) if isinstance(e, dict)}
        bdir = Path(bundle_dir) if bundle_dir else None
        iosigs, attrsets = _PageTexts(), _PageTexts()  # the page's text of each (10,000 as objects: 10 MiB)
        io_col, at_col = [], []
        n_io = n_attr = 0
        col, oc_names = self._int, self._oc.items
        for i in perm:
            if self._detailed[i] and n_io < MAX_DETAIL_CASES:  # recorded by the runner (results since 0.4)
                n_io += 1
                sig, sig_key, attrs, attrs_key = detail_row(self._detail_at(i))
                io_col.append(iosigs.add(sig, sig_key))
                at_col.append(attrsets.add(attrs, attrs_key))
                continue
            passed = oc_names[col["oc"][i]] == "pass"
            e = entries.get(self.id(i)) if entries and not passed else None
            if e and n_io < MAX_DETAIL_CASES:  # shapes are for the drill-down of failures
                n_io += 1
                sig = {"in": [[str(x.get("name")), _kind_type_name(x.get("elem_type"), x.get("kind")), x.get("shape"),
                               1 if x.get("initializer") else 0, 1 if x.get("present", True) else 0]
                              for x in e.get("inputs") or []],
                       "out": [[str(x.get("name")), _kind_type_name(x.get("elem_type"), x.get("kind")),
                                1 if x.get("present", True) else 0]
                               for x in e.get("outputs") or []]}
                io_col.append(iosigs.add(sig, json.dumps(sig, sort_keys=True)))
            else:
                io_col.append(-1)
            at = -1
            if bdir is not None and e and n_attr < MAX_DETAIL_CASES and e.get("dir"):
                rel = Path(str(e["dir"]))
                if ".." not in rel.parts and not rel.is_absolute():
                    n_attr += 1
                    attrs = _model_attributes(bdir, rel, self._op_type(col["op"][i]))
                    if attrs is not None:
                        attrs = _json_safe(attrs)
                        at = attrsets.add(attrs, json.dumps(attrs, sort_keys=True))
            at_col.append(at)
        return io_col, at_col, iosigs, attrsets

    def _op_type(self, opi: int) -> str:
        """The operator's type as the record names it (its key without the domain)."""
        key = self.ops.items[opi]
        dom = self._domains.get(key, "")
        return key[len(dom) + 1:] if dom and key.startswith(dom + ":") else key


class _PageTexts(_Interner):
    """An interner of values by key that keeps each value's page text (:func:`json_for_script`)
    instead of the value."""

    def add(self, value, key=None) -> int:
        key = value if key is None else key
        i = self.index.get(key)
        if i is None:
            i = self.index[key] = len(self.items)
            self.items.append(str(json_for_script(value)))
        return i


class SlimCases:
    """The cases of a :class:`CaseStore` as small records ``{"op" (its :func:`op_key`), "domain",
    "outcome", "message"}`` (their ids: :meth:`ids`), made afresh on each iteration: what the report's counts, family rows
    and problem lists and the CLI's summary table read, without a dict per case in memory."""

    def __init__(self, store: CaseStore):
        self._s = store

    def __len__(self) -> int:
        return self._s.n

    def __iter__(self) -> Iterator[dict]:
        s = self._s
        ops, outcomes, strings, domains = s.ops.items, s._oc.items, s.strings.items, s._domains
        for op, oc, msg in zip(s._int["op"], s._int["oc"], s._int["msg"]):
            key = ops[op]
            yield {"op": key, "domain": domains[key], "outcome": outcomes[oc], "message": strings[msg]}

    def ids(self) -> Iterator[str]:
        """The cases' ids, in the same order (not in the records: the aggregates never read them,
        and the page's store decodes them from its spool)."""
        return (self._s.id(i) for i in range(self._s.n))


def case_data(doc: dict, manifest: dict | None = None, bundle_dir: str | os.PathLike | None = None,
              families: dict[str, str] | None = None) -> dict:
    """The case records of ``doc`` in the compact, columnar form the page's script reads.

    Layout (every list under ``c`` and ``feat.col`` has one entry per case)::

        {"n": cases, "outcomes", "ops", "families": family names (:func:`family_sort_key` order),
         "opfam": per entry of "ops", the index of its family in "families",
         "dtypes", "dtype_order", "phases", "strings": interned texts,
         "c": {"op", "dt", "oc", "msg", "ph", "ov" (opset), "sv" (since_version),
               "dur" (milliseconds), "out", ["xe", "io", "at"], "tk", "tv",
               "idp", "ids" (ids front-coded: id[i] = id[i-1][:idp[i]] + ids[i], see decode_ids)},
         "tags": {"keys" (sorted), "vals": per key its distinct values, "sets": key sets},
         "feat": {"keys", "vals": per feature its values as the matrices write them, "col"},
         "io": input/output signatures, "attrs": model attributes,
         "repro": the command prefix that reruns the suite}

    ``out`` per case is ``0`` or a list of outputs: ``[name, ratio]`` for outputs of a
    passing case, and ``[name, passed, ratio, max_abs_err, atol, rtol, reason,
    worst_index, expected_at_worst, actual_at_worst]`` otherwise (texts as indexes
    into ``strings``; non-finite numbers as strings).  A case's tags: ``tk``, the index of its key
    set in ``tags.sets`` (a list of indices into ``tags.keys``, in key order), and ``tv``, for each
    of those keys the index of the case's value in that key's ``tags.vals``: most cases of an
    operator share a key set, and 60,000 cases have 350 keys.  ``io`` and ``at`` are the input/output signature and model attributes of
    non-passing cases: from the record's ``detail``, else with the bundle's ``manifest`` from its
    entry and with ``bundle_dir`` from its model.  ``families`` is ``{op type: family}``
    (default :func:`op_families` of ``doc``).

    Cases are ordered worst outcome first, then by operator and id (:meth:`CaseStore.order`).
    """
    store = CaseStore.of(doc.get("cases") or [])
    text = "".join(store.pieces(op_families(doc) if families is None else families, doc.get("run"),
                                doc.get("suite"), manifest, bundle_dir))
    return json.loads(text)


def decode_ids(data: dict) -> list[str]:
    """The case ids of :func:`case_data` output, undoing the front coding."""
    out, prev = [], ""
    for k, rest in zip(data["c"]["idp"], data["c"]["ids"]):
        prev = prev[:k] + rest
        out.append(prev)
    return out

