"""The report's per-case data: what the page's script reads of every case, built one case at a
time in compact columns, so that a run of any size is rendered with bounded memory.

:func:`case_row` takes what the page shows of one result record; :class:`CaseStore` keeps the rows
of a run as columns (numbers, indices into interned tables of the texts that repeat, outputs as
JSON text), in the order they come (a run's suite order), in a scratch file a block of cases at a
time (:class:`_Spill`), and writes them as the page's columnar JSON (:meth:`CaseStore.pieces`)
in the page's order: worst outcome first, then operator, then id.  The store also answers what
the page's aggregates read of every case (counts, messages of the cases that did not pass, the
accuracy ratios of those that did) without a dict per case (:meth:`CaseStore.slim`,
:meth:`SlimCases.grouped`).  At 60,000 cases the rows took 8 KiB a case as Python objects, then
0.2 KiB in memory; here a few bytes in memory (the outcome, and a passing output's ratio).
"""

from __future__ import annotations

import functools
import itertools
import json
import math
import operator
import os
from array import array
from collections import Counter, defaultdict
from collections.abc import Iterable, Iterator
from pathlib import Path

import numpy as np
from markupsafe import Markup

from ..compact import Ints, trim_heap
from ..jsonsafe import JS_SAFE_INT, _encodes, dumps, encode_float, page_safe
from ..suite import op_key
from .common import (ABSENT, FEATURES, ORDER, SEVERITY, dtype_key, dtype_of, feature_value, fmt_value,
                     repro_prefix)
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
    text = _page_json(obj)
    text = text.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")
    text = text.replace("\u2028", "\\u2028").replace("\u2029", "\\u2029")
    return Markup(text)


def _c_encoder(ensure_ascii: bool, separators: tuple[str, str], sort_keys: bool, allow_nan: bool):
    """The C encoder that ``json.dumps(obj, ensure_ascii=..., separators=..., sort_keys=...,
    allow_nan=...)`` makes at each call (``json.encoder.c_make_encoder``; a JSONEncoder a call cost
    more than the text of a small value), made once; ``None`` where this Python has none."""
    try:
        from json.encoder import c_make_encoder, encode_basestring, encode_basestring_ascii

        if c_make_encoder is None:
            return None
        return c_make_encoder(None, json.JSONEncoder().default,
                              encode_basestring_ascii if ensure_ascii else encode_basestring, None,
                              separators[1], separators[0], sort_keys, False, allow_nan)
    except Exception:  # noqa: BLE001 - another Python's signature: json.dumps as before
        return None


_PAGE_ENC = _c_encoder(False, (",", ":"), False, False)
_KEY_ENC = _c_encoder(True, (", ", ": "), True, True)


def _page_json(obj) -> str:
    """:func:`conformance.jsonsafe.dumps` ``(obj, separators=(",", ":"), ensure_ascii=False)``: the
    same text, by a C encoder made once where the value needs nothing made safe (no NaN nor
    infinity, no lone surrogate)."""
    if _PAGE_ENC is not None:
        try:
            text = "".join(_PAGE_ENC(obj, 0))
        except (ValueError, TypeError):
            text = None
        if text is not None and _encodes(text):
            return text
    return dumps(obj, separators=(",", ":"), ensure_ascii=False)


def _sorted_json(v) -> str:
    """``json.dumps(v, sort_keys=True)``, by a C encoder made once."""
    if _KEY_ENC is None:
        return json.dumps(v, sort_keys=True)
    return "".join(_KEY_ENC(v, 0))


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


#: (name in :meth:`CaseStore.state`, attribute) of the store's interned tables of one kind of text
_TABLES = (("oc", "_oc"), ("ops", "ops"), ("dtypes", "dtypes"), ("phases", "phases"), ("strings", "strings"))


def _table(interner: _Interner) -> tuple[list, list]:
    """``(values, keys)`` of an interner, in its order."""
    keys = [None] * len(interner.items)
    for k, i in interner.index.items():
        keys[i] = k
    return list(interner.items), keys


def _mapping(interner: _Interner, table: tuple[list, list]) -> np.ndarray:
    """The index in ``interner`` of each value of another interner's ``table`` (:func:`_table`),
    each value added where new, in the other's order (as adding its records here would)."""
    values, keys = table
    return np.array([interner.add(v, k) for v, k in zip(values, keys)] or [0], dtype=np.int64)


def _text_blocks(f, base: int, ends: np.ndarray) -> Iterator[tuple[int, list[str]]]:
    """``(first index, texts)`` of the texts :meth:`CaseStore.state` wrote to the binary file ``f``
    at ``base`` (their ``ends``), :data:`SPILL_BLOCK` at a time."""
    for k in range(0, len(ends), SPILL_BLOCK):
        part = ends[k:k + SPILL_BLOCK].tolist()
        lo = ends[k - 1] if k else 0
        f.seek(base + int(lo))
        data = f.read(part[-1] - int(lo))
        starts = [0] + [e - int(lo) for e in part[:-1]]
        yield k, [data[a:e - int(lo)].decode("utf-8", "surrogatepass") for a, e in zip(starts, part)]


def _remap_outputs(text: str, strings: list[int]) -> str:
    """A case's outputs text (:meth:`CaseStore.add`'s: ``0``, or a list of ``[name, ratio]`` and
    ``[name, passed, ratio, max_abs_err, atol, rtol, reason, worst_index, expected, actual]``) with
    its interned texts (name, reason) renumbered by ``strings``; every other value written again as
    :func:`_js` wrote it (each of them reads back to itself)."""
    if text == "0":
        return text
    entries = text[2:-2].split("],[")
    if not any("[" in e or "]" in e or '"' in e for e in entries):  # no nested list, no text: plain values
        parts = []
        for e in entries:
            v = e.split(",")
            v[0] = str(strings[int(v[0])])
            if len(v) > 2:
                v[6] = str(strings[int(v[6])])
            parts.append(",".join(v))
        return "[[" + "],[".join(parts) + "]]"
    parts = []
    for e in json.loads(text):
        e[0] = strings[e[0]]
        if len(e) > 2:
            e[6] = strings[e[6]]
        parts.append("[" + ",".join(map(_js, e)) + "]")
    return "[" + ",".join(parts) + "]"


def _json_safe(v):
    """``v`` as page data (:func:`conformance.jsonsafe.page_safe`), with a fast path for the
    plain values that most tags are."""
    t = type(v)
    if (t is str and v.isascii()) or t is bool or v is None or (t is int and abs(v) <= JS_SAFE_INT):
        return v
    return page_safe(v)


def _key_of(v, memo: dict | None) -> str:
    """``v``'s interning key (its JSON, keys sorted): by the C encoder made once
    (:func:`_sorted_json`), else made once per distinct ``repr`` where a ``memo`` is given (values
    parsed from JSON: equal reprs, equal keys)."""
    if memo is None or _KEY_ENC is not None:  # the C encoder costs what the repr would: no memo
        return _sorted_json(v)
    r = repr(v)
    k = memo.get(r)
    if k is None:
        k = memo[r] = _sorted_json(v)
    return k


def detail_row(det, memo: dict | None = None) -> tuple | None:
    """``(io signature, its key, attributes, their key)`` of a record's ``detail`` (what the page's
    drill-down shows of a case that did not pass), or ``None`` when it is not one; ``memo``: keys
    already made, by the value's ``repr`` (:func:`_key_of`)."""
    if not isinstance(det, dict):
        return None
    sig = {"in": [[str(x[0]), _kind_type_name(x[1], x[5] if len(x) > 5 else None), x[2], x[3], x[4]]
                  for x in det.get("inputs") or []],
           "out": [[str(x[0]), _kind_type_name(x[1], x[3] if len(x) > 3 else None), x[2]]
                   for x in det.get("outputs") or []]}
    attrs = _json_safe({k: _attr_display(v) for k, v in (det.get("attributes") or {}).items()})
    return sig, _key_of(sig, memo), attrs, _key_of(attrs, memo)


def _tag_key(v) -> tuple:
    """``(interning key, JSON-safe value)`` of a tag's value: the value itself for text, its type
    beside it for an int, bool or None (1, True and 1.0 are equal as dict keys: kept apart), its
    repr for a finite float (0.0 and -0.0 apart), else its JSON (keys sorted) of the page-safe value."""
    t = type(v)
    if t is str:
        return v, v
    if t is int or t is bool or v is None:
        return (t, v), v
    if t is float and math.isfinite(v):
        return (t, repr(v)), v
    v = _json_safe(v)
    return json.dumps(v, sort_keys=True), v


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
    tag_items = [(k, *_tag_key(v)) for k, v in tags.items()]
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

#: The position of ``opset`` in :data:`FEATURES` (a record's own ``opset`` where no tag gives it).
_OPSET_FEATURE = [k for k, _, _ in FEATURES].index("opset")

#: The types of tag values that are their own look-up key in :meth:`CaseStore.add`'s maps.
_PLAIN = frozenset((str, int))


def _lookup_key(v):
    """A tag value's look-up key in :meth:`CaseStore.add`'s maps: the value itself for a text or an
    int, ``(type, value)`` for a bool or None (``1`` and ``True`` apart), :func:`_list_key` for a
    list, ``None`` for anything else (interned by its text each time)."""
    t = type(v)
    if t is str or t is int:
        return v
    if t is bool or v is None:
        return t, v
    return _list_key(v) if t is list else None


def _list_key(v: list) -> tuple | None:
    """The look-up key of a tag value that is a list of texts and ints (a shape, a list of axes):
    ``(list, *v)``, which equals no other list's key and no key of a text, an int, a bool or None;
    ``None`` for any other list (a float's ``-0.0`` and ``0.0``, ``1`` and ``True`` would share
    one), which is interned by its text each time.  A whole suite's three seeds had a list in a
    quarter of their records' tags, each formatted as JSON again for its text and its feature."""
    for x in v:
        tx = type(x)
        if tx is not int and tx is not str:
            return None
    return (list, *v)


def _one_of(p: int, values: tuple) -> tuple:
    return (values[p],)


def _none_of(values: tuple) -> tuple:
    return ()


#: Cases a block of :class:`_Spill` holds: the store writes its columns to disk a block at a time.
SPILL_BLOCK = 2048

_NP_TYPES = {"b": np.int8, "h": np.int16, "i": np.int32, "q": np.int64}


class _Spill:
    """Per-case columns kept in a scratch file (anonymous: removed when closed or when the process
    ends), written a block of cases at a time and read back whole (a column of numbers) or a case at
    a time (a column of texts): the store's memory does not grow with the cases (issue 30).  The
    file's pages are the system's page cache, not the process's memory."""

    def __init__(self, directory=None):
        import tempfile

        self._f = tempfile.TemporaryFile(dir=directory, prefix=".casedata-", buffering=0)
        self._fd = self._f.fileno()
        self._size = 0
        self._blocks: dict[str, list[tuple[int, str, int]]] = defaultdict(list)  # (offset, typecode, n)
        self._texts: dict[str, list[tuple[int, int]]] = defaultdict(list)  # (offset of the block's texts, n)

    def close(self) -> None:
        self._f.close()

    def _write(self, data: bytes) -> int:
        off = self._size
        view, done = memoryview(data), 0
        while done < len(view):  # positional: a forked page writer shares the file's offset (write_html)
            done += os.pwrite(self._fd, view[done:], off + done)
        self._size += len(data)
        return off

    def _read(self, off: int, n: int) -> bytes:
        """Up to ``n`` bytes at ``off`` (fewer at the end of the file), by ``os.pread``: no shared
        file offset to race on."""
        data = os.pread(self._fd, n, off)
        if len(data) == n or not data:
            return data
        parts, got = [data], len(data)
        while got < n:  # a short read before the end of the file
            more = os.pread(self._fd, n - got, off + got)
            if not more:
                break
            parts.append(more)
            got += len(more)
        return b"".join(parts)

    def drop(self, name: str) -> None:
        """Forget the column ``name`` (numbers or texts; its bytes stay in the file unread)."""
        for k in (name, name + "#"):
            self._blocks.pop(k, None)
        self._texts.pop(name, None)

    def put(self, name: str, values: list) -> None:
        """Append ``values`` (integers, or floats for a column of floats) to the column ``name``:
        integers in the narrowest type that holds this block's."""
        a = None
        if type(values) is list:  # a list of ints through an array of int64 (np.array took 450 instructions an int)
            try:
                a = np.frombuffer(array("q", values), dtype=np.int64)
            except (TypeError, OverflowError):
                a = None
        if a is None:
            a = np.array(values)
        if a.dtype.kind in "iu" and len(a):
            lo, hi = int(a.min()), int(a.max())
            a = a.astype(next(t for t in (np.int8, np.int16, np.int32, np.int64)
                              if np.iinfo(t).min <= lo and hi <= np.iinfo(t).max))
        elif a.dtype.kind not in "iuf":  # nothing yet, or not numbers
            a = a.astype(np.int64)
        self._blocks[name].append((self._write(a.tobytes()), a.dtype.str, len(a)))

    def put_texts(self, name: str, texts: list[str]) -> None:
        """Append ``texts`` to the text column ``name`` (UTF-8, lone surrogates kept)."""
        data = [t.encode("utf-8", "surrogatepass") for t in texts]
        self._texts[name].append((self._write(b"".join(data)), len(data)))
        self.put(name + "#", np.cumsum(np.fromiter(map(len, data), dtype=np.int64, count=len(data))))

    def column(self, name: str) -> np.ndarray:
        """The column ``name`` whole, in the widest type of its blocks (float64 for a column of
        floats)."""
        parts = []
        for off, dt, n in self._blocks.get(name, ()):
            dt = np.dtype(dt)
            parts.append(np.frombuffer(self._read(off, n * dt.itemsize), dtype=dt))
        if not parts:
            return np.zeros(0, dtype=np.int64)
        return np.concatenate(parts) if len(parts) > 1 else parts[0].copy()

    def text_index(self, name: str) -> tuple[np.ndarray, np.ndarray]:
        """``(starts, ends)``: where each text of the column ``name`` lies in the file."""
        kind = np.uint32 if self._size < 2**32 else np.int64  # 4 bytes a case for a file under 4 GiB
        ends = self.column(name + "#").astype(kind)
        base = np.repeat(np.array([off for off, _ in self._texts[name]], dtype=kind),
                         [n for _, n in self._texts[name]])
        starts = np.empty_like(ends)
        starts[1:] = ends[:-1]
        k = 0
        for _, n in self._texts[name]:  # each block's first text starts at the block
            if n:
                starts[k] = 0
            k += n
        return starts + base, ends + base

    def texts(self, name: str, index: tuple[np.ndarray, np.ndarray], order) -> Iterator[str]:
        """The texts ``order`` (case indices, a numpy array) of the column ``name`` (its
        :meth:`text_index`), in that order."""
        starts, ends = index
        read = self._read
        buf, b0, b1 = b"", 0, 0  # a window of the file (64 KiB): texts read near each other, one read
        for k in range(0, len(order), 4096):
            part = order[k:k + 4096]
            # read in the file's order, given in ``order``'s: the page's order (worst outcome,
            # operator, id) is not the store's, and a window read per text that missed it was
            # 312,000 reads of 64 KiB for a three-seed suite's 170,000 cases
            s_part, e_part = starts[part], ends[part]
            by = np.argsort(s_part, kind="stable")
            out = [""] * len(part)
            for j, s, e in zip(by.tolist(), s_part[by].tolist(), e_part[by].tolist()):
                if s < b0 or e > b1:
                    buf = read(s, max(e - s, 65536))
                    b0, b1 = s, s + len(buf)
                out[j] = buf[s - b0:e - b0].decode("utf-8", "surrogatepass")
            yield from out


class CaseStore:
    """The report's per-case data (:func:`case_row` of every record), added one record at a time in
    the order a run's suite has them, kept compact, written in the page's order.

    Per case the store keeps indices into interned tables (operator, dtype, outcome, message, phase,
    expected rejection, features, tag key set and tag values), three numbers (opset, since_version,
    duration) and two texts (id and outputs as JSON); all but the outcome (a byte) are written to a
    scratch file a block of :data:`SPILL_BLOCK` cases at a time (:class:`_Spill`) and read back
    when the page is written, a column at a time.  Per ``(operator, dtype)``, the error/tolerance
    ratios of the outputs of passing cases (the accuracy section's input).  Interned tables are
    numbered in the order the records come, so the same records in the same order give the same
    page.

    Attributes:
        n: cases added.
        ratios: ``{(operator, dtype): array of float64}``, the finite ``ratio`` of every output of
            every passing case (:func:`conformance.reports.accuracy.collect` of the records).
        undetailed: cases that did not pass and whose record has no ``detail`` (results written
            before 0.4: the page then reads input shapes from the bundle's manifest).
    """

    def __init__(self, records: Iterable[dict] = (), *, detail_at, id_at=None, scratch_dir=None):
        """Args:
            records: records to add now (:meth:`add`).
            detail_at: ``detail_at(i)``, the ``detail`` of case ``i``'s record, read again (from
                results.jsonl, results.json or the document): the store keeps, of a case's detail,
                only that it has one, and the page reads it for the cases it shows
                (:data:`MAX_DETAIL_CASES`; 16,000 distinct signatures kept took 24 MiB).
            id_at: ``id_at(i)``, the id of case ``i``, where the caller keeps the ids (a run's
                suite does): the store then keeps none.
            scratch_dir: where the scratch file of the columns goes (default: the system's
                temporary directory); the file has no name there and goes when the store does
                (:meth:`close`).
        """
        self._id_at, self._detail_at = id_at, detail_at
        self.n = 0
        self._oc, self.ops, self.dtypes, self.phases = _Interner(), _Interner(), _Interner(), _Interner("")
        self.strings = _Interner("")
        self._domains: dict[str, str] = {}
        self._tag_keys = _Interner()
        self._tag_vals: list[_Interner] = []
        self._feat = [_Interner() for _ in FEATURES]
        self._occ = Ints()  # the outcome of every case (kept: coverage asks for it case by case)
        self._odd: dict[tuple[str, int], object] = {}
        self._keysets = _Interner()  # the tag keys a case has, in its record's order
        #: add's memo of what it looked up by value (operator, feature and tag indices), dropped
        #: when the page is written (:meth:`_column`, :meth:`_text_index`)
        self._fast: dict = {}
        self._plans: dict[tuple, tuple] = {}  # add's plan per tag key set (:meth:`_plan`), dropped with _fast
        self._spill = _Spill(scratch_dir)
        self._block: dict[str, list] = {}
        self._texts = ("out", "tv") + (("id",) if id_at is None else ())
        self._new_block()
        self._cache: dict[str, object] = {}
        self.ratios: dict[tuple[str, str], array] = defaultdict(lambda: array("d"))
        self.undetailed = 0
        for r in records:
            self.add(r)

    _INT_COLUMNS = ("op", "dt", "msg", "ph", "xe", "det", "ov", "sv", "ks") + tuple(f"f{j}" for j in range(len(FEATURES)))

    def _new_block(self) -> None:
        self._block: dict[str, list] = {k: [] for k in self._INT_COLUMNS}  # each written narrowed
        self._dur: list[float] = []
        self._spools: dict[str, list[str]] = {k: [] for k in self._texts}
        self._fcols = [self._block[f"f{j}"] for j in range(len(FEATURES))]
        self._fcols_by_key = [(k, fcol) for (k, _, _), fcol in zip(FEATURES, self._fcols)]
        #: add's appends to the block's columns, in the order it unpacks them
        self._appends = tuple(self._block[k].append for k in ("op", "ks", "dt", "msg", "ph", "xe", "ov", "sv", "det"))
        self._in_block = 0

    def _flush(self) -> None:
        """Write the cases added since the last flush to the scratch file."""
        if not self._in_block:
            return
        for k, col in self._block.items():
            self._spill.put(k, col)
        self._spill.put("dur", np.array(self._dur, dtype=np.float64))
        for k, spool in self._spools.items():
            self._spill.put_texts(k, spool)
        self._new_block()
        self._cache.clear()

    def close(self) -> None:
        """Remove the scratch file (the store is of no use after)."""
        self._spill.close()

    def __del__(self):
        try:
            self._spill.close()
        except Exception:  # noqa: BLE001 - interpreter shutdown
            pass

    def _column(self, name: str) -> np.ndarray:
        """Column ``name`` of every case (``oc``: the outcome's index), as numbers."""
        if name == "oc":
            return np.frombuffer(self._occ.a, dtype=_NP_TYPES[self._occ.a.typecode]).copy()
        self._fast, self._plans = {}, {}
        self._flush()
        return self._spill.column(name)

    def _text_index(self, name: str):
        self._fast, self._plans = {}, {}
        self._flush()
        key = "#" + name
        if key not in self._cache:
            self._cache.clear()  # one text column's index at a time
            self._cache[key] = self._spill.text_index(name)
        return self._cache[key]

    def _texts_at(self, name: str, order) -> Iterator[str]:
        return self._spill.texts(name, self._text_index(name), np.asarray(order, dtype=np.int64))

    @classmethod
    def of(cls, cases: list[dict]) -> CaseStore:
        """The store of a results document's ``cases``, which stay in memory (the store reads
        their ids and details from them again rather than keep copies)."""
        return cls(cases, detail_at=lambda i: cases[i].get("detail"), id_at=lambda i: str(cases[i].get("id")))

    def add(self, c: dict) -> None:
        """Add the result record ``c`` (a :meth:`conformance.runner.CaseResult.to_json` dict, or a
        results document's case; any malformed field is shown as it is, never raised on).

        A record as the runner writes it (its tags a dict, its outputs dicts) takes a fast path that
        stores what :func:`case_row` gives without building the row: its tags by a plan per key set
        (:meth:`_plan`: the key set's index, and per key a map from each value seen to its index as
        text; where each feature and the dtype are), each tag and feature looked up once by its
        value; any other record goes through :func:`case_row`.  Both give the same columns."""
        g = c.get
        tags, outs = g("tags"), g("outputs")
        if type(tags) is not dict or not (outs is None or (type(outs) is list and all(type(o) is dict for o in outs))):
            self._add_row(c, case_row(c))
            return
        i, fast = self.n, self._fast
        a_op, a_ks, a_dt, a_msg, a_ph, a_xe, _ov, _sv, a_det = self._appends  # ov, sv: _put_numbers
        outcome = g("outcome")
        outcome = outcome if type(outcome) is str else str(outcome)
        passed_case = outcome == "pass"
        op, domain = g("op", ""), g("domain")
        opk = fast.get(("op", op, domain)) if type(op) is str and (domain is None or type(domain) is str) else None
        if opk is None:
            key = op_key(op, domain)
            opk = (self.ops.add(key), key)
            if type(op) is str and (domain is None or type(domain) is str):
                fast[("op", op, domain)] = opk
            self._domains.setdefault(key, str(domain or ""))
        opi, op = opk
        oc = self._oc.index.get(outcome)
        self._occ.append(self._oc.add(outcome) if oc is None else oc)
        a_op(opi)
        # tags and features by the plan of the record's key set
        names = tuple(tags)
        plan = self._plans.get(names)
        if plan is None:
            plan = self._plans[names] = self._plan(names)
        ks, maps, fget, fcache, dpos, feats, absent = plan
        values = tuple(tags.values())
        opset = g("opset")
        if _PLAIN.issuperset(map(type, values)):  # texts and ints: each value its own look-up key
            texts = list(map(dict.get, maps, values))
            if not all(texts):  # a value not seen yet (every text seen is a non-empty number)
                self._tag_texts(names, maps, values, texts)
            fkey = (fget(values), opset)
            fis = fcache.get(fkey) if (opset is None or type(opset) is int) else None
            if fis is None:
                fis = self._feature_indices(feats, absent, values, opset)
                if opset is None or type(opset) is int:
                    fcache[fkey] = fis
        else:
            texts = [None] * len(values)
            self._tag_texts(names, maps, values, texts)
            fis = self._feature_indices(feats, absent, values, opset)
        any(map(list.append, self._fcols, fis))  # each feature's column (append gives None: all consumed)
        a_ks(ks)
        self._spools["tv"].append(",".join(texts))
        if dpos >= 0:
            dt = values[dpos]
            dt = dt if type(dt) is str else fmt_value(dt)
        else:
            dt = ABSENT
        di = self.dtypes.index.get(dt)
        a_dt(self.dtypes.add(dt) if di is None else di)
        strings = self.strings
        sidx, s_add = strings.index, strings.add
        msg = g("message")
        msg = "" if not msg else msg if type(msg) is str else str(msg)
        mi = sidx.get(msg)
        a_msg(s_add(msg) if mi is None else mi)
        phase = g("phase")
        phase = "" if not phase else phase if type(phase) is str else str(phase)
        pi = self.phases.index.get(phase)
        a_ph(self.phases.add(phase) if pi is None else pi)
        xe = g("expect_error")
        a_xe(s_add(str(xe)) if xe else 0)
        d = g("duration_s")
        if type(d) is float and (x := d * 1000.0) - x == 0.0:  # finite: _num(d * 1000.0, 2) inlined
            dur = float(f"{x:.2g}")
            if not (dur - dur == 0.0):
                dur = x
        else:
            dur = _num(d * 1000.0, 2) if isinstance(d, (int, float)) and not isinstance(d, bool) else None
        self._put_numbers(i, opset, g("since_version"), dur)
        if outs:
            outs_text = []
            ratios = None
            for o in outs:
                og = o.get
                name = og("name", "")
                name = name if type(name) is str else str(name)
                ni = sidx.get(name)
                if ni is None:
                    ni = s_add(name)
                r = og("ratio")
                if passed_case and og("passed"):
                    if type(r) is float and r == 0.0 and math.copysign(1.0, r) > 0:
                        outs_text.append(f"[{ni},0.0]")
                    else:
                        outs_text.append(f"[{ni},{_js(_num(r, 3))}]")
                    if type(r) in (int, float) and math.isfinite(r):
                        if ratios is None:
                            ratios = self.ratios[(op, dt)]
                        ratios.append(float(r))
                    continue
                tol = og("tolerance") or {}
                outs_text.append(f"[{ni},{1 if og('passed') else 0},{_js(_num(r, 4))},"
                                 f"{_js(_num(og('max_abs_err'), 4))},{_js(_num(tol.get('atol'), 4))},"
                                 f"{_js(_num(tol.get('rtol'), 4))},{s_add(str(og('reason') or ''))},"
                                 f"{_js(_json_safe(og('worst_index')))},{_js(_num(og('expected_at_worst')))},"
                                 f"{_js(_num(og('actual_at_worst')))}]")
                if passed_case:
                    if type(r) in (int, float) and math.isfinite(r):
                        if ratios is None:
                            ratios = self.ratios[(op, dt)]
                        ratios.append(float(r))
            self._spools["out"].append("[" + ",".join(outs_text) + "]")
        else:
            self._spools["out"].append("0")
        # the end (_put_end)
        if passed_case:
            a_det(0)
        else:
            det = g("detail")
            a_det(1 if isinstance(det, dict) else 0)
            if det is None and "detail" not in c:
                self.undetailed += 1
        if self._id_at is None:
            cid = g("id")
            self._spools["id"].append(cid if type(cid) is str else str(cid))
        self.n = i + 1
        self._in_block += 1
        if self._in_block >= SPILL_BLOCK:
            self._flush()

    def _plan(self, names: tuple) -> tuple:
        """The plan of the tag key set ``names`` (a record's tag keys, in its order) for :meth:`add`:
        ``(key set index, per key its map {value's look-up key: its value's index as text},
        the record's feature values given by tags (a function of its tag values, a tuple),
        {(those values, the record's opset): the index of each feature's value}, position of
        "dtype" or -1)``.  A value's look-up key is :func:`_lookup_key`'s.  The key maps live in
        :attr:`_fast`, shared by the key sets that have the key."""
        fast = self._fast
        kis = []
        maps = []
        for k in names:
            ki = self._tag_keys.index.get(k)
            if ki is None:
                ki = self._tag_keys.add(k)
                self._tag_vals.append(_Interner())
            kis.append(ki)
            m = fast.get(("tmap", ki))
            if m is None:
                m = fast[("tmap", ki)] = {}
            maps.append(m)
        ks = self._keysets.add(tuple(kis))
        fpos = [names.index(fk) for fk, _, _ in FEATURES if fk in names]
        if len(fpos) > 1:
            fget = operator.itemgetter(*fpos)
        elif fpos:
            fget = functools.partial(_one_of, fpos[0])
        else:
            fget = _none_of
        feats, absent = [], []
        for j, (fk, _, _) in enumerate(FEATURES):
            if fk in names:
                fmap = fast.get(("fmap", j))
                if fmap is None:
                    fmap = fast[("fmap", j)] = {}
                feats.append((j, names.index(fk), fmap))
            else:
                absent.append((j, None if j == _OPSET_FEATURE else self._absent_index(j)))
        return (ks, maps, fget, {}, names.index("dtype") if "dtype" in names else -1, feats, absent)

    def _tag_texts(self, names: tuple, maps: list, values: tuple, texts: list) -> None:
        """Put in ``texts`` where it has none the index text of each of a record's tag ``values``
        (keys ``names``, their :meth:`_plan` maps), each value interned where new."""
        for p, text in enumerate(texts):
            if text:
                continue
            v, m = values[p], maps[p]
            lk = _lookup_key(v)
            text = m.get(lk) if lk is not None else None
            if text is None:
                text = self._tag_index(names[p], *_tag_key(v))[1]
                if lk is not None:
                    m[lk] = text
            texts[p] = text

    def _feature_indices(self, feats: list, absent: list, values: tuple, opset) -> list[int]:
        """The index of each feature's value (:data:`FEATURES`, in that order) of a record whose tag
        values are ``values`` and whose own opset is ``opset``, interned where new (``feats`` and
        ``absent``: where its key set has each feature, :meth:`_plan`)."""
        fis = [0] * len(FEATURES)
        for j, p, fmap in feats:
            v = values[p]
            lk = _lookup_key(v)
            fi = fmap.get(lk) if lk is not None else None
            if fi is None:
                fi = self._fvalue_index(j, fmt_value(v))
                if lk is not None:
                    fmap[lk] = fi
            fis[j] = fi
        for j, fi in absent:
            if j == _OPSET_FEATURE and opset is not None:
                fi = self._fvalue_index(j, fmt_value(opset))
            elif fi is None:
                fi = self._absent_index(j)
            fis[j] = fi
        return fis

    def _absent_index(self, j: int) -> int:
        feat = self._feat[j]
        fi = feat.index.get(ABSENT)
        return feat.add(ABSENT) if fi is None else fi

    def _fvalue_index(self, j: int, text: str) -> int:
        feat = self._feat[j]
        fi = feat.index.get(text)
        return feat.add(text) if fi is None else fi

    def _tag_index(self, k: str, key, v) -> tuple[int, str]:
        """``(index of the tag key k, index of its value v as text)``, the value interned by its
        ``key`` (:func:`_tag_key`)."""
        ki = self._tag_keys.index.get(k)
        if ki is None:
            ki = self._tag_keys.add(k)
            self._tag_vals.append(_Interner())
        tv = self._tag_vals[ki]
        vi = tv.index.get(key)
        return ki, str(tv.add(v, key) if vi is None else vi)

    def _add_row(self, c: dict, row: tuple) -> None:
        """:meth:`add` of a record whose row :func:`case_row` made."""
        (cid, op, outcome, tag_items, fvals, dt, msg, phase, opset, sv, dur, xe, outs) = row
        i, col, s_add = self.n, self._block, self.strings.add
        oc, opi = self._oc.add(outcome), self.ops.add(op)
        self._domains.setdefault(op, str(c.get("domain") or ""))
        self._occ.append(oc)
        col["op"].append(opi)
        col["dt"].append(self.dtypes.add(dt))
        mi = self.strings.index.get(msg)
        col["msg"].append(s_add(msg) if mi is None else mi)
        col["ph"].append(self.phases.add(phase))
        col["xe"].append(s_add(xe) if xe else 0)
        self._put_numbers(i, opset, sv, dur)
        for fcol, feat, fv in zip(self._fcols, self._feat, fvals):
            fi = feat.index.get(fv)
            fcol.append(feat.add(fv) if fi is None else fi)
        keys, vals = [], []
        for k, key, v in tag_items:
            ki, vi = self._tag_index(k, key, v)
            keys.append(ki)
            vals.append(vi)
        col["ks"].append(self._keysets.add(tuple(keys)))
        self._spools["tv"].append(",".join(vals))
        outs_text = []
        for o in outs:
            if len(o) == 2:
                outs_text.append(f"[{s_add(o[0])},{_js(o[1])}]")
            else:
                outs_text.append(f"[{s_add(o[0])},{','.join(map(_js, o[1:6]))},{s_add(o[6])},"
                                 f"{','.join(map(_js, o[7:]))}]")
        self._spools["out"].append("[" + ",".join(outs_text) + "]" if outs_text else "0")
        if outcome == "pass":
            for o in c.get("outputs") or ():
                r = o.get("ratio") if isinstance(o, dict) else None
                if type(r) in (int, float) and math.isfinite(r):
                    self.ratios[(op, dt)].append(float(r))
        self._put_end(c, outcome == "pass", cid)

    def _put_numbers(self, i: int, opset, sv, dur) -> None:
        """Case ``i``'s opset, since_version and duration (ms) into their columns (a value a column
        cannot hold: 0 there, the value kept aside)."""
        col = self._block
        for name, v in (("ov", opset), ("sv", sv)):
            if type(v) is int and -JS_SAFE_INT <= v <= JS_SAFE_INT:
                col[name].append(v)
            else:
                col[name].append(0)
                self._odd[(name, i)] = v
        if type(dur) is float and math.isfinite(dur):
            self._dur.append(dur)
        else:
            self._dur.append(0)
            self._odd[("dur", i)] = dur

    def _put_end(self, c: dict, passed: bool, cid: str) -> None:
        """The end of :meth:`add` of the record ``c`` (whether it passed, its id as text): whether it has
        a drill-down detail, its id where the store keeps ids, the count, the block's spill."""
        self._block["det"].append(0 if passed else 1 if isinstance(c.get("detail"), dict) else 0)
        if not passed and "detail" not in c:
            self.undetailed += 1
        if self._id_at is None:
            self._spools["id"].append(cid)
        self.n += 1
        self._in_block += 1
        if self._in_block >= SPILL_BLOCK:
            self._flush()

    # -- two stores made one (a large results file read by two processes) -------------------

    def state(self, f) -> dict:
        """What :meth:`extend` takes of this store: its interned tables (values and keys), every
        case's columns (in their narrow types), its odd values, ratios and counts, as a picklable
        dict; its cases' texts written to the binary file ``f`` (from its position on, UTF-8, one
        column after another) and the dict saying where (``{column: (offset, ends)}``).  For a store
        made in another process, to be merged without holding its texts in memory."""
        self._flush()
        texts = {}
        for name in self._texts:
            base, ends, at = f.tell(), array("q"), 0
            index = self._spill.text_index(name)
            for k in range(0, self.n, SPILL_BLOCK):
                chunk = [t.encode("utf-8", "surrogatepass")
                         for t in self._spill.texts(name, index, np.arange(k, min(self.n, k + SPILL_BLOCK)))]
                f.write(b"".join(chunk))
                for t in chunk:
                    at += len(t)
                    ends.append(at)
            texts[name] = (base, np.frombuffer(ends, dtype=np.int64))
        return {
            "n": self.n,
            "occ": np.frombuffer(self._occ.a, dtype=_NP_TYPES[self._occ.a.typecode]).copy(),
            "tables": {name: _table(getattr(self, attr)) for name, attr in _TABLES},
            "tag_keys": list(self._tag_keys.items),
            "tag_vals": [_table(t) for t in self._tag_vals],
            "feat": [_table(t) for t in self._feat],
            "keysets": list(self._keysets.items),
            "domains": dict(self._domains),
            "odd": dict(self._odd),
            "ratios": dict(self.ratios),
            "undetailed": self.undetailed,
            "cols": {name: self._spill.column(name) for name in self._INT_COLUMNS + ("dur",)},
            "texts": texts,
        }

    def extend(self, state: dict, f) -> None:
        """Add the cases of another store (its :meth:`state`, its texts in the binary file ``f``)
        after this store's, as if their records had been added here one by one in their order:
        every interned value numbered where :meth:`add` would have numbered it, so the page is the
        one a single store makes.  The texts are read, renumbered and written a block of
        :data:`SPILL_BLOCK` cases at a time.

        Raises:
            ValueError: the other store keeps its ids and this one does not, or the reverse.
        """
        if ("id" in state["texts"]) != ("id" in self._texts):
            raise ValueError("the stores differ in whether they keep their cases' ids")
        n2 = state["n"]
        if not n2:
            return
        self._flush()
        self._fast, self._plans = {}, {}
        maps = {name: _mapping(getattr(self, attr), state["tables"][name]) for name, attr in _TABLES}
        key_map = []
        for k in state["tag_keys"]:
            ki = self._tag_keys.index.get(k)
            if ki is None:
                ki = self._tag_keys.add(k)
                self._tag_vals.append(_Interner())
            key_map.append(ki)
        val_maps = [_mapping(self._tag_vals[key_map[ki]], table).tolist() for ki, table in enumerate(state["tag_vals"])]
        ks_map = np.array([self._keysets.add(tuple(key_map[k] for k in ks)) for ks in state["keysets"]] or [0],
                          dtype=np.int64)
        cols = state["cols"]
        strings = maps["strings"]
        by = {"op": maps["ops"], "dt": maps["dtypes"], "msg": strings, "ph": maps["phases"], "xe": strings,
              "ks": ks_map}
        for j, feat in enumerate(self._feat):
            by[f"f{j}"] = _mapping(feat, state["feat"][j])
        for name in self._INT_COLUMNS + ("dur",):  # a column at a time
            self._spill.put(name, by[name][cols[name]] if name in by else cols[name])
        # the texts that hold interned indices: a case's tag values (per its key set) and its outputs
        set_maps = [[val_maps[k] for k in ks] for ks in state["keysets"]]
        strings = strings.tolist()
        memo: dict = {}
        for k, texts in _text_blocks(f, *state["texts"]["tv"]):
            tv = []
            for s, text in zip(cols["ks"][k:k + len(texts)].tolist(), texts):
                got = memo.get((s, text))
                if got is None:
                    if len(memo) >= 1 << 16:  # the renumbered texts seen: bounded
                        memo.clear()
                    got = memo[(s, text)] = ",".join(
                        [str(m[int(x)]) for m, x in zip(set_maps[s], text.split(","))]) if text else text
                tv.append(got)
            self._spill.put_texts("tv", tv)
        memo.clear()
        for _, texts in _text_blocks(f, *state["texts"]["out"]):
            out = []
            for text in texts:
                got = memo.get(text)
                if got is None:
                    if len(memo) >= 1 << 16:
                        memo.clear()
                    got = memo[text] = _remap_outputs(text, strings)
                out.append(got)
            self._spill.put_texts("out", out)
        memo.clear()
        if "id" in self._texts:
            for _, texts in _text_blocks(f, *state["texts"]["id"]):
                self._spill.put_texts("id", texts)
        oc_map = maps["oc"]
        for k in range(0, n2, SPILL_BLOCK):
            for v in oc_map[state["occ"][k:k + SPILL_BLOCK]].tolist():
                self._occ.append(v)
        for (name, i), v in state["odd"].items():
            self._odd[(name, i + self.n)] = v
        for key, v in state["domains"].items():
            self._domains.setdefault(key, v)
        for key, v in state["ratios"].items():
            self.ratios[key].extend(v)
        self.undetailed += state["undetailed"]
        self.n += n2
        self._cache.clear()

    # -- what the page's aggregates read -------------------------------------------------

    def id(self, i: int) -> str:
        """The id of case ``i`` (in the order added)."""
        if self._id_at is not None:
            return str(self._id_at(i))
        return next(self._texts_at("id", [i]))

    def _ids(self, order) -> Iterator[str]:
        """The ids of the cases ``order``, in that order."""
        if self._id_at is not None:
            get = self._id_at
            return (str(get(i)) for i in (order.tolist() if isinstance(order, np.ndarray) else order))
        return self._texts_at("id", order)

    def outcome(self, i: int) -> str:
        """The outcome of case ``i`` (in the order added)."""
        return self._oc.items[self._occ[i]]

    def slim(self) -> "SlimCases":
        """Every case as the small record the page's aggregates and the CLI's summary read."""
        return SlimCases(self)

    def cells(self, key: str = "dtype") -> dict[tuple[str, str], Counter]:
        """Outcome counts per (operator, value of ``key``): ``dtype`` or a feature of :data:`FEATURES`
        (:func:`conformance.reports.html.data_matrix`'s cells)."""
        if key == "dtype":
            names, col = self.dtypes.items, self._column("dt")
        else:
            j = [k for k, _, _ in FEATURES].index(key)
            names, col = self._feat[j].items, self._column(f"f{j}")
        ops, outcomes = self.ops.items, self._oc.items
        nv, noc = max(len(names), 1), max(len(outcomes), 1)
        combined = (self._column("op").astype(np.int64) * nv + col) * noc + self._column("oc")
        cells: dict[tuple[str, str], Counter] = defaultdict(Counter)
        keys, counts = np.unique(combined, return_counts=True)
        # the cells in the order their first case comes (the order Counter(zip(...)) gave)
        firsts = np.unique(combined, return_index=True)[1]
        for k, cnt, _ in sorted(zip(keys.tolist(), counts.tolist(), firsts.tolist()), key=lambda t: t[2]):
            op, rest = divmod(k, nv * noc)
            v, oc = divmod(rest, noc)
            cells[(ops[op], names[v])][outcomes[oc]] += cnt
        return cells

    def family_names(self, families: dict[str, str]) -> list[str]:
        """The families of the stored operators, in :func:`family_sort_key` order."""
        return sorted({families.get(o, OTHER) for o in self.ops.items}, key=family_sort_key)

    # -- the page's case data ------------------------------------------------------------

    def order(self) -> np.ndarray:
        """The cases in the page's order: worst outcome first (:data:`SEVERITY`), then operator, then
        id (equal ids in the order they came); as indices in the order they were added."""
        sev = {o: k for k, o in enumerate(SEVERITY)}
        noc = max(len(self._oc.items), 1)
        pair = self._column("op").astype(np.int32) * noc + self._column("oc")  # (operator, outcome)
        pairs = np.unique(pair)
        # (severity, operator name) of each pair, ranked
        keyed = {p: (sev.get(self._oc.items[p % noc], -1), self.ops.items[p // noc]) for p in pairs.tolist()}
        distinct = {key: r for r, key in enumerate(sorted(set(keyed.values())))}
        rank = np.zeros(int(pairs.max()) + 1 if len(pairs) else 1, dtype=np.int32)
        for p, key in keyed.items():
            rank[p] = distinct[key]
        groups = rank[pair]
        del pair
        by_group = np.argsort(groups, kind="stable").astype(np.int32)  # in each group, the order added
        groups = groups[by_group]
        bounds = (np.flatnonzero(np.diff(groups)) + 1).tolist()  # a group a line: (outcome, operator) pairs
        del groups
        perm = np.empty(self.n, dtype=np.int32 if self.n < 2**31 else np.int64)
        # the ids in this order, front-coded (consecutive ids share long prefixes: the length of
        # the prefix shared with the previous id, and the rest), to the scratch file as they come
        spill = self._spill
        spill.drop("pageidp")
        spill.drop("pageids")
        prefixes, rests, prev = [], [], ""
        start = 0
        for end in bounds + [self.n]:
            members = by_group[start:end]
            ids = list(self._ids(members))
            got = sorted(range(len(ids)), key=ids.__getitem__)  # stable: equal ids in the order they came
            perm[start:end] = members[got]
            ids = [ids[k] for k in got]
            for k in range(0, len(ids), 1024):  # 1,024 ids compared at once: ~0.3 MiB of bytes
                part = ids[k:k + 1024]
                shared = _shared_prefixes(prev, part)
                prefixes += shared
                rests += [cid[p:] for cid, p in zip(part, shared)]
                prev = part[-1]
            if len(rests) >= _CHUNK or end == self.n:
                spill.put("pageidp", prefixes)
                spill.put_texts("pageids", rests)
                prefixes, rests = [], []
            start = end
        return perm

    def pieces(self, families: dict[str, str] | None = None, run: dict | None = None, suite: dict | None = None,
               manifest: dict | None = None, bundle_dir: str | os.PathLike | None = None) -> Iterator[str]:
        """The case data as the page's script reads it (layout: :func:`case_data`), as pieces of
        JSON text (:func:`json_for_script`'s escaping) whose concatenation is the document; a piece
        holds at most :data:`_CHUNK` cases of one column.

        Args:
            families: ``{operator: family}`` (default: every operator in :data:`OTHER`).
            run, suite: the results document's ``run`` and ``suite`` (the command that reruns a case).
            manifest: the bundle's manifest, for the input shapes of non-passing cases whose
                record has no ``detail``; ``bundle_dir``: the bundle, for their model attributes.
        """
        families = families or {}
        perm = self.order()
        n = self.n
        outcomes = list(ORDER) + sorted(set(self._oc.items) - set(ORDER))
        ocmap = np.array([outcomes.index(o) for o in self._oc.items] or [0], dtype=np.int64)
        fam_names = self.family_names(families)
        tkeys = sorted(self._tag_keys.items)
        kmap = [tkeys.index(k) for k in self._tag_keys.items]
        # a key set's keys in the page's key order, and where each of its values comes from
        set_order = [sorted(range(len(ks)), key=lambda j, ks=ks: kmap[ks[j]]) for ks in self._keysets.items]
        sets = [[kmap[ks[j]] for j in order] for ks, order in zip(self._keysets.items, set_order)]
        io_col, at_col, iosigs, attrsets = self._page_details(perm, manifest, bundle_dir)
        iosigs.index = attrsets.index = {}  # their keys: only the page texts are written
        trim_heap()  # the details read again and the sort's keys
        head = {
            "n": n, "outcomes": outcomes, "ops": self.ops.items,
            "families": fam_names, "opfam": [fam_names.index(families.get(o, OTHER)) for o in self.ops.items],
            "dtypes": self.dtypes.items, "dtype_order": sorted(self.dtypes.items, key=dtype_key),
            "phases": self.phases.items,
        }
        # the interned texts last, in pieces (the messages of a whole suite are megabytes): a list's
        # compact JSON is its items' joined by commas
        yield str(json_for_script(head))[:-1] + ',"strings":['
        strings = self.strings.items
        for k in range(0, len(strings), _CHUNK):
            yield ("," if k else "") + str(json_for_script(strings[k:k + _CHUNK]))[1:-1]
        yield '],"c":{'

        def ints(values: np.ndarray, prefix: str) -> Iterator[str]:
            """``prefix`` and the list of ``values`` (numbers), in pieces."""
            if not len(values):
                yield prefix + "[]"
                return
            for k in range(0, len(values), _CHUNK):
                text = ",".join(map(str, values[k:k + _CHUNK].tolist()))
                yield (prefix + "[" if not k else ",") + text + ("]" if k + _CHUNK >= len(values) else "")

        def column(name: str) -> np.ndarray:
            return self._column(name)[perm]

        yield from ints(column("op"), '"op":')
        yield from ints(column("dt"), ',"dt":')
        yield from ints(ocmap[self._column("oc")][perm], ',"oc":')
        yield from ints(column("msg"), ',"msg":')
        yield from ints(column("ph"), ',"ph":')
        for name in _NUMBER_COLUMNS:
            values = column(name)
            odd = {k: v for (nm, k), v in self._odd.items() if nm == name}
            if name == "dur" or odd:
                conv = repr if name == "dur" else str
                for k in range(0, n, _CHUNK):
                    vals = values[k:k + _CHUNK].tolist()
                    if odd:
                        idx = perm[k:k + _CHUNK].tolist()
                        parts = ",".join(_js(odd[i]) if i in odd else conv(v) for i, v in zip(idx, vals))
                    else:  # the durations of a run: every one a number the column holds
                        parts = ",".join(map(conv, vals))
                    yield (f',"{name}":[' if not k else ",") + parts + ("]" if k + _CHUNK >= n else "")
                if not n:
                    yield f',"{name}":[]'
            else:
                yield from ints(values, f',"{name}":')
            del values
        yield ',"out":['
        texts = self._texts_at("out", perm)
        for k in range(0, n, _CHUNK):
            yield ("," if k else "") + ",".join(itertools.islice(texts, _CHUNK))
        yield "]"
        xe = column("xe")
        if xe.any():  # a column that says nothing is left out
            yield from ints(xe, ',"xe":')
        del xe
        for name, values in (("io", io_col), ("at", at_col)):
            values = np.frombuffer(values, dtype=np.int16) if len(values) else np.zeros(0, dtype=np.int16)
            if (values != -1).any():
                yield from ints(values, f',"{name}":')
        del io_col, at_col, values
        yield from ints(column("ks"), ',"tk":')
        yield ',"tv":['
        ks = column("ks")
        texts = self._texts_at("tv", perm)
        identity = [order == sorted(order) for order in set_order]
        for k in range(0, n, _CHUNK):
            part = []
            for s, text in zip(ks[k:k + _CHUNK].tolist(), itertools.islice(texts, _CHUNK)):
                if identity[s]:
                    part.append("[" + text + "]")
                else:
                    v = text.split(",")
                    part.append("[" + ",".join(v[j] for j in set_order[s]) + "]")
            yield ("," if k else "") + ",".join(part)
        yield "]"
        del ks
        # ids, front-coded (consecutive ids, sorted, share long prefixes; written by order()),
        # each column in chunks
        yield from ints(self._spill.column("pageidp"), ',"idp":')
        yield ',"ids":['
        rests = self._spill.texts("pageids", self._spill.text_index("pageids"), np.arange(n))
        for k in range(0, n, _CHUNK):
            yield ("," if k else "") + str(json_for_script(list(itertools.islice(rests, _CHUNK))))[1:-1]
        yield "]"
        tvals = [self._tag_vals[self._tag_keys.index[k]].items for k in tkeys]
        yield '},"tags":' + str(json_for_script({"keys": tkeys, "vals": tvals, "sets": sets}))
        fkeys = [k for k, _, _ in FEATURES]
        yield ',"feat":' + str(json_for_script({"keys": fkeys, "vals": [v.items for v in self._feat]}))[:-1] + ',"col":['
        for j in range(len(FEATURES)):
            yield from ints(column(f"f{j}"), "," if j else "")
        yield "]}"
        for name, items in (("io", iosigs.items), ("attrs", attrsets.items)):
            yield f',"{name}":['
            for k in range(0, len(items), 512):  # up to MAX_DETAIL_CASES texts: 1 MB at seed 0
                yield ("," if k else "") + ",".join(items[k:k + 512])
            yield "]"
        yield ',"repro":' + str(json_for_script(repro_prefix(run, suite))) + "}"

    def _page_details(self, perm: np.ndarray, manifest: dict | None, bundle_dir) -> tuple[array, array, _Interner, _Interner]:
        """``(io column, at column, signatures, attribute sets)`` in page order: the recorded detail of
        the first :data:`MAX_DETAIL_CASES` non-passing cases that have one, else (older results) the
        input/output signature from the manifest's entry and the attributes from the bundle's model."""
        entries = {}
        if manifest:
            entries = {e.get("id"): e for e in manifest.get("cases", []) if isinstance(e, dict)}
        bdir = Path(bundle_dir) if bundle_dir else None
        iosigs, attrsets = _PageTexts(), _PageTexts()  # the page's text of each (10,000 as objects: 10 MiB)
        io_col, at_col = array("h"), array("h")  # 2 bytes a case (MAX_DETAIL_CASES < 2**15)
        n_io = n_attr = 0
        memo: dict[str, str] = {}  # the keys of the details' values by repr (1,620 cases, 4,984 dumps)
        oc_names = self._oc.items
        det = self._column("det")[perm]
        if not entries and bdir is None:  # every detail recorded (a run's): only those cases visited
            io_col, at_col = array("h", [-1]) * len(perm), array("h", [-1]) * len(perm)
            for k in np.flatnonzero(det)[:MAX_DETAIL_CASES].tolist():
                sig, sig_key, attrs, attrs_key = detail_row(self._detail_at(int(perm[k])), memo)
                io_col[k] = iosigs.add(sig, sig_key)
                at_col[k] = attrsets.add(attrs, attrs_key)
            return io_col, at_col, iosigs, attrsets
        oc, op = self._column("oc")[perm], self._column("op")[perm]
        for k, i in enumerate(perm.tolist()):
            if det[k] and n_io < MAX_DETAIL_CASES:  # recorded by the runner (results since 0.4)
                n_io += 1
                sig, sig_key, attrs, attrs_key = detail_row(self._detail_at(i), memo)
                io_col.append(iosigs.add(sig, sig_key))
                at_col.append(attrsets.add(attrs, attrs_key))
                continue
            passed = oc_names[oc[k]] == "pass"
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
                    attrs = _model_attributes(bdir, rel, self._op_type(int(op[k])))
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


#: Cases a piece of the page's case data holds (of one column).
_CHUNK = 4096


def _shared_prefixes(prev: str, ids: list[str]) -> list[int]:
    """For each of ``ids``, the length of the prefix it shares with the one before it (the first:
    with ``prev``): ASCII ids compared all at once as bytes (numpy), any other one by one."""
    if not ids:
        return []
    texts = [prev, *ids]
    try:
        data = np.array([t.encode("ascii") for t in texts])
    except UnicodeEncodeError:
        data = None
    if data is not None and data.dtype.itemsize:
        width = data.dtype.itemsize
        b = data.view(np.uint8).reshape(len(texts), width)
        eq = b[1:] == b[:-1]
        shared = np.where(eq.all(axis=1), width, eq.argmin(axis=1))
        lens = np.fromiter(map(len, texts), dtype=np.int64, count=len(texts))
        # the padding (NUL bytes) compared equal past the shorter id's end: cut at it
        return np.minimum(shared, np.minimum(lens[1:], lens[:-1])).tolist()
    out = []
    for cid in ids:
        m = min(len(prev), len(cid))
        if cid[:m] == prev[:m]:
            p = m
        else:  # the longest shared prefix, by halving (ids share ~60 characters)
            p, hi = 0, m  # prev[:p] == cid[:p], prev[:hi] != cid[:hi]
            while hi - p > 1:
                mid = (p + hi) // 2
                if cid[:mid] == prev[:mid]:
                    p = mid
                else:
                    hi = mid
        out.append(p)
        prev = cid
    return out


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
        op, oc, msg = s._column("op"), s._column("oc"), s._column("msg")
        for k in range(0, s.n, _CHUNK):
            for o, c, m in zip(op[k:k + _CHUNK].tolist(), oc[k:k + _CHUNK].tolist(), msg[k:k + _CHUNK].tolist()):
                key = ops[o]
                yield {"op": key, "domain": domains[key], "outcome": outcomes[c], "message": strings[m]}

    def grouped(self) -> Iterator[tuple[dict, int]]:
        """``(record, count)`` for each distinct (operator, outcome, message) of the cases, in the
        order of each one's first case: what the aggregates count, a record per kind of case
        (:func:`conformance.reports.common.weighted`), made as they are iterated."""
        s = self._s
        if not s.n:
            return
        nm, noc = max(len(s.strings.items), 1), max(len(s._oc.items), 1)
        op, oc, msg = s._column("op"), s._column("oc"), s._column("msg")
        counts: dict[int, int] = {}  # by kind, in the order of each one's first case
        for j in range(0, s.n, _CHUNK):  # a chunk at a time: whole-column keys took 6 MiB at 170,000 cases
            key = (op[j:j + _CHUNK].astype(np.int64) * noc + oc[j:j + _CHUNK]) * nm + msg[j:j + _CHUNK]
            keys, first, cnt = np.unique(key, return_index=True, return_counts=True)
            by_first = np.argsort(first, kind="stable")
            for k, c in zip(keys[by_first].tolist(), cnt[by_first].tolist()):
                counts[k] = counts.get(k, 0) + c
        del op, oc, msg
        ops, outcomes, strings, domains = s.ops.items, s._oc.items, s.strings.items, s._domains
        for k, cnt in counts.items():
            rest, m = divmod(k, nm)
            o, c = divmod(rest, noc)
            name = ops[o]
            yield {"op": name, "domain": domains[name], "outcome": outcomes[c], "message": strings[m]}, cnt

    def ids(self) -> Iterator[str]:
        """The cases' ids, in the same order (not in the records: the aggregates never read them,
        and the page's store decodes them from its spool)."""
        return self._s._ids(np.arange(self._s.n))


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



#: A results file of this many bytes or more is read into the report's store by two processes
#: (:func:`read_results_store`): ~35,000 cases, below which one process takes under ~1.5 s.
SPLIT_MIN_BYTES = 32 << 20


def read_results_store(path: str | os.PathLike, scratch_dir=None) -> tuple[dict, CaseStore]:
    """``(document without its cases, store of its cases)``: a results file read one case at a time
    into a :class:`CaseStore` (a 60,000-case file took 330 MiB whole) whose details are read again
    from the file for the cases the page shows.

    A large file (:data:`SPLIT_MIN_BYTES`) in :func:`conformance.results.write_results`' layout is
    read by two processes where this one can fork safely (Linux, no other thread): a forked child
    makes the store of the second half of the lines while this process makes the first's, then
    this one takes the child's in (:meth:`CaseStore.extend`): the same store, hence the same page,
    in about half the time (a three-seed run's 170,545 cases: ~6.5 s read alone).  A child that
    fails leaves its half to this process.

    Raises:
        conformance.results.ResultsError: missing file, invalid JSON, not our format.
    """
    from ..results import case_at, case_lines, first_case_offset, iter_results

    path = Path(path)
    doc, cases = iter_results(path)
    offsets, held = array("q"), []
    reader: dict = {}  # the results file, opened once for the details the page reads again
    store = CaseStore(detail_at=lambda i: (case_at(path, offsets[i], reader) if offsets[i] >= 0 else held[i]).get("detail"),
                      scratch_dir=scratch_dir)
    start = first_case_offset(path)
    split = _split_point(path, start) if start is not None else None
    child = None
    if split is not None:
        try:
            child = _HalfReader(path, split, scratch_dir)
        except OSError:  # no child to be had (no scratch file, no process): one process reads it all
            child = None
    try:
        for offset, case in (cases if child is None else case_lines(path, start, split)):
            offsets.append(offset)
            if offset < 0:  # a file in another layout, in memory anyway
                held.append(case)
            store.add(case)
        if child is not None and not child.merge_into(store, offsets):
            # the child failed: its half read here (a damaged line raises here)
            for offset, case in case_lines(path, split):
                offsets.append(offset)
                store.add(case)
    finally:
        if child is not None:
            child.close()
    return doc, store


def _split_point(path: Path, start: int) -> int | None:
    """Where the second half of a results file's case lines starts (a line's start), or ``None``
    where the file is not worth two processes (:data:`SPLIT_MIN_BYTES`) or this process cannot
    fork (:func:`conformance.forked.can_fork`)."""
    from ..forked import can_fork

    size = path.stat().st_size
    if size < SPLIT_MIN_BYTES or not can_fork():
        return None
    mid = start + (size - start) // 2
    with open(path, "rb") as f:
        f.seek(mid)
        split = mid + len(f.readline())
    return split if split < size - len(b"]}\n") else None


class _HalfReader:
    """A forked child (:class:`conformance.forked.ForkedWriter`) that makes the store of a results
    file's cases from byte ``split`` on and hands it back in a scratch file: its texts
    (:meth:`CaseStore.state`), then the rest of its state and its cases' offsets pickled, the
    pickle's position in the file's first 8 bytes."""

    def __init__(self, path: Path, split: int, scratch_dir):
        from ..forked import ForkedWriter

        def write(f) -> None:
            import pickle

            from ..results import case_lines

            store = CaseStore(detail_at=lambda i: None, scratch_dir=scratch_dir)
            offsets = array("q")
            for offset, case in case_lines(path, split):
                offsets.append(offset)
                store.add(case)
            f.write(bytes(8))
            state = store.state(f)
            at = f.tell()
            pickle.dump((state, offsets), f, protocol=pickle.HIGHEST_PROTOCOL)
            f.seek(0)
            f.write(at.to_bytes(8, "little"))

        self.child = ForkedWriter(scratch_dir, ".results-half-", write)

    def merge_into(self, store: CaseStore, offsets: array) -> bool:
        """Wait for the child and add its cases to ``store`` (:meth:`CaseStore.extend`) and their
        offsets to ``offsets``; ``False`` (nothing added) where it failed."""
        import pickle

        if not self.child.wait():
            return False
        with open(self.child.path, "rb") as f:
            f.seek(int.from_bytes(f.read(8), "little"))
            state, child_offsets = pickle.load(f)
            store.extend(state, f)
        offsets.extend(child_offsets)
        return True

    def close(self) -> None:
        self.child.close()
