"""Bundles on disk, in the ONNX backend-test layout other runners read.

Layout::

    BUNDLE/manifest.json                      suite identity + one entry per case
    BUNDLE/cases/test_<name>/model.onnx       value cases
    BUNDLE/cases/test_<name>/test_data_set_K/input_I.pb, output_J.pb
    BUNDLE/cases/test_<name>/data.json        {"rtol": .., "atol": ..}
    BUNDLE/errors/test_<name>/model.onnx      error cases (invalid models)
    BUNDLE/errors/test_<name>/test_data_set_K/input_I.pb
    BUNDLE/errors/test_<name>/expect_error.json
    BUNDLE/checks/test_<name>/model.onnx      random cases judged by a check function
    BUNDLE/checks/test_<name>/test_data_set_K/input_I.pb, check.json

Value cases live in ``cases/`` so that ``onnx.backend.test.loader.load_model_tests
(data_dir=BUNDLE, kind="cases")`` and onnxruntime's ``onnx_test_runner BUNDLE/cases``
read exactly the cases that have expected outputs; error cases (whose expected
outcome is a rejection, which those runners cannot express) are kept apart in
``errors/``.  ``data.json`` carries, for runners that read one tolerance per model,
the largest ``atol`` and ``rtol`` over the case's outputs (the official comparison
is ``np.testing.assert_allclose(actual, expected, rtol, atol)``).

Tensors (``input_I.pb``, ``output_J.pb``, initializers in ``model.onnx``) are written by
``onnx.numpy_helper.from_array`` and read by ``numpy_helper.to_array``, which round-trips
every ONNX element type bit for bit (NaN payloads included): int4, uint4 and float4e2m1
packed two per byte, int2 and uint2 four per byte, float6e2m3 and float6e3m2 four per three
bytes in ``raw_data``; strings in ``string_data`` as UTF-8 (read back as an ``object`` array
of ``str``, see :mod:`conformance.dtypes`).

A bundle is a directory in that layout or one zip archive holding the same files
(:func:`conformance.bundle_write.write_archive`; ``generate --out NAME.zip``): the runner, ``coverage``, ``package`` and
the reports read either; runners that read the ONNX layout need the directory (``unzip`` it).
The archive's ``manifest.json`` is stored uncompressed, so that a case's entry is read from
the archive by its byte span as from a directory's manifest.

A bundle is data, never code: no pickle; every path in the manifest must be a plain
relative path inside the bundle.  The same suite gives byte-identical bundles
(sorted JSON keys, deterministic protobuf serialisation, no timestamps).  Each case's
content hash is checked on reading, so an edited bundle is detected.

This module reads bundles (:func:`read_index`, :class:`CaseRef`, :func:`read_bundle`) and holds
what reading and writing share (the format, the case files' digest); :mod:`conformance.bundle_write`
writes them.
"""

from __future__ import annotations

import contextlib
import hashlib
import heapq
import json
import os
import re
import zipfile
from array import array
from collections.abc import Mapping, Sequence
from pathlib import Path

import numpy as np
import onnx
import orjson
from onnx import helper, numpy_helper

from .case import Case, DataSet, Input, Output
from .compact import DiskSpool, Ints
from .suite import Suite
from .tolerance import Tolerance

FORMAT = "onnx-conformance-bundle/1"
_SAFE_DIR = re.compile(r"^(cases|errors|checks)/test_[A-Za-z0-9_]+$")


class BundleError(Exception):
    """A bundle is malformed, edited, or cannot be written where asked."""


def proto_value(data: bytes, kind: str, p: str):
    """The value stored in the bytes ``data`` of file ``p`` as a proto of ``kind``
    (:func:`value_proto`'s inverse; a tensor by :func:`tensor_array`).

    Raises:
        BundleError: the bytes are no such proto.
    """
    cls = {"tensor": onnx.TensorProto, "sequence": onnx.SequenceProto}.get(kind, onnx.OptionalProto)
    t = cls()
    try:
        t.ParseFromString(data)
    except Exception as exc:  # noqa: BLE001 - protobuf raises its own DecodeError
        raise BundleError(f"{p}: not a {cls.__name__}: {exc}") from exc
    if kind == "tensor":
        return tensor_array(t)
    if kind == "sequence":
        return [np.asarray(v) for v in numpy_helper.to_list(t)]
    v = numpy_helper.to_optional(t)
    return [np.asarray(x) for x in v] if isinstance(v, list) else v


#: The case files' digest (:func:`_files_hash`) starts from this.
_DIGEST_TAG = b"onnx-conformance case files/1\n"


def _files_hash():
    """A sha256 that a case's files are fed to as they are written or read (:func:`_feed`), then its
    manifest entry (:func:`_entry_line_with_digest`): ``files_sha256``."""

    return hashlib.sha256(_DIGEST_TAG)


def _feed(h, data: bytes) -> None:
    h.update(len(data).to_bytes(8, "little"))
    h.update(data)


def _entry_line_with_digest(entry: dict, h) -> str:
    """The manifest line of ``entry`` (:func:`_entry_line`) with ``files_sha256``: the digest of
    the case's files (fed to ``h`` in the order a reader reads them: ``model.onnx``, then each
    data set's ``input_I.pb`` and ``output_J.pb``) and of the line without that member.

    A reader that gets the same bytes back (the files, and the line minus the member) knows the
    case is as written, tolerances and expectation included, at a tenth of the cost of
    recomputing its content hash from decoded tensors; one that does not (an edited case, or a
    manifest another tool re-formatted) checks the content hash instead.
    """
    h.update(_entry_line(entry).encode())
    return _entry_line({**entry, "files_sha256": h.hexdigest()})


def _digest_member(digest: str) -> bytes:
    """How ``files_sha256`` appears in an entry's line (after ``expect_error``, keys sorted)."""
    return b',"files_sha256":"' + digest.encode() + b'"'


def _entry_line(entry: dict) -> str:
    """A case's manifest entry as it is written: one line of compact JSON, keys sorted."""
    return json.dumps(entry, sort_keys=True, separators=(",", ":"), allow_nan=False)


class CaseRef:
    """A bundle case as its manifest entry names it, without its files: what the runner needs to
    schedule a case, report it and recover from a crash (``id``, ``op``, ``domain``,
    ``since_version``, ``opset``, ``expect_error``, ``content_hash``).  :meth:`load` reads and
    checks the case itself, in the worker that runs it; :attr:`tags` and :meth:`entry` read the
    manifest entry again (from its byte span in ``manifest.json``), so a parent holding 40,000
    refs holds a few small strings per case, not the entries.
    """

    __slots__ = ("root", "id", "op", "domain", "since_version", "opset", "expect_error", "content_hash",
                 "recorded_analysis", "_span", "_raw", "_stamp", "_read")

    def __init__(self, root: str, e: dict, span: tuple[int, int] | None, raw: str | None, stamp: tuple):
        self.root, self._stamp = root, stamp
        self.id, self.op, self.domain = str(e["id"]), str(e["op"]), str(e.get("domain") or "")
        self.since_version, self.opset = int(e["since_version"]), int(e["opset"])
        self.expect_error, self.content_hash = e.get("expect_error"), str(e["content_hash"])
        self._span, self._raw = span, raw
        self._read: tuple[bytes, dict] | None = None  # (entry text, entry) as just read (CaseRefs), for one load
        #: the coverage analysis the manifest records for the case (without ``id``), or None for a
        #: manifest written before entries had one
        a = e.get("coverage")
        self.recorded_analysis = a if isinstance(a, dict) else None

    def entry(self) -> dict:
        """The case's manifest entry (read again from ``manifest.json``).

        Raises:
            BundleError: the manifest was replaced or edited since it was indexed.
        """
        return _loads(self._entry_text())

    def _entry_text(self) -> bytes:
        """The entry's JSON text, as the manifest has it (or, for a manifest whose layout has no
        byte spans, as it was parsed and serialised again)."""
        return _entry_bytes(self.root, self._stamp, self._span, self._raw)

    @property
    def tags(self) -> dict:
        return dict(self.entry().get("tags") or {})

    def load(self, verify: bool = True) -> Case:
        """The case, read from its directory (see :func:`read_bundle`).

        Raises:
            BundleError: a missing or unparsable file, a path outside the bundle, or (``verify``)
                content that no longer matches the manifest's hash.
        """
        text = self._entry_text()
        return _load_entry(self.root, _loads(text), verify, text)

    def load_for_run(self) -> Case:
        """The case, checked as :meth:`load` checks it, its initializers' values decoded only when a
        check function judges it (the backend gets them in the model).

        Raises:
            BundleError: see :meth:`load`.
        """
        if self._read is not None:  # read a moment ago (CaseRefs): not read and parsed again
            (text, e), self._read = self._read, None
        else:
            text = self._entry_text()
            e = _loads(text)
        return _load_entry(self.root, e, True, text, bool(e.get("check")))

    def analysis(self) -> dict:
        """The coverage analysis of the case's model (:func:`conformance.analysis.analyse_case`):
        the one the manifest records, else measured from the model (the case is read, unchecked).

        Raises:
            BundleError: see :meth:`load`.
        """
        if self.recorded_analysis is not None:
            return {**self.recorded_analysis, "id": self.id}
        from .analysis import analyse_case

        return analyse_case(_load_entry(self.root, self.entry(), False))

    def __repr__(self) -> str:
        return f"CaseRef({self.id!r})"


def _entry_bytes(root: str, stamp: tuple, span: tuple[int, int] | None, raw: str | None) -> bytes:
    """A manifest entry's JSON text: ``raw`` where the entry was kept as text (a manifest not
    readable by byte span), else the bytes at ``span`` of ``root``'s manifest.

    Raises:
        BundleError: the manifest was replaced or edited since it was indexed (``stamp``).
    """
    if raw is not None:
        return raw.encode()
    start, end = span
    return os.pread(_manifest_fd(root, stamp), end - start, start)


def _intern(a, interned: dict) -> dict | None:
    """``a`` (a recorded coverage analysis), or the equal one already in ``interned``, its values
    shared with equal values of other analyses: most cases of an operator version exercise the
    same types, formals and attributes, and where two analyses differ (40,000 distinct ones in
    47,549 cases, by opset and attribute values) they share their attribute, type and formal
    lists.  ``None`` when ``a`` is not a dict."""
    if not isinstance(a, dict):
        return None
    key = _canonical(a)
    hit = interned.get(key)
    if hit is None:
        hit = interned[key] = {k: _share(v, interned) for k, v in a.items()}
    return hit


def _share(v, interned: dict):
    """``v``, or an equal container already in ``interned`` (texts and numbers as they are)."""
    if not isinstance(v, (dict, list)):
        return v
    return interned.setdefault((_canonical(v),), v)


def _canonical(v) -> bytes:
    """A 16-byte digest of ``v``'s canonical JSON text (orjson's own text is a 4 KiB buffer
    whatever its length: 40,000 of them as keys took 160 MiB)."""
    try:
        text = orjson.dumps(v, option=orjson.OPT_SORT_KEYS)  # texts, numbers, lists: its canonical text
    except TypeError:
        text = json.dumps(v, sort_keys=True).encode()
    return hashlib.blake2b(text, digest_size=16).digest()


#: (pid, bundle root, manifest stamp) -> an open descriptor of the manifest: a worker reads
#: thousands of entries from it; keyed by process so that a forked worker opens its own.
_MANIFEST_FDS: dict[tuple, int] = {}


def _stamp(st: os.stat_result) -> tuple:
    return (st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns)


def _manifest_fd(root: str, stamp: tuple) -> int:
    """An open descriptor of ``root``'s manifest, which must be the file indexed (``stamp``).

    Raises:
        BundleError: the manifest was replaced or edited since it was indexed (the entries'
            byte spans would no longer hold).
    """
    key = (os.getpid(), root, stamp)
    path = root if _archive_root(root) else os.path.join(root, "manifest.json")
    fd = _MANIFEST_FDS.get(key)
    if fd is None:
        try:
            fd = _MANIFEST_FDS[key] = os.open(path, os.O_RDONLY)
        except OSError as exc:
            raise BundleError(f"{path}: {exc.strerror}") from None
    if _stamp(os.fstat(fd)) != stamp:  # every time: an edit in place keeps the descriptor
        raise BundleError(f"{path} was replaced or edited since the bundle was read; read it again")
    return fd


def _loads(text: bytes | str):
    """``json.loads``, by orjson (2-3x faster on a manifest entry: a run parses every entry twice,
    in the parent and in the worker); JSON that orjson refuses but Python's reader takes
    (``NaN``, which our manifests never hold) goes to ``json.loads``.

    Raises:
        ValueError: not valid JSON.
    """
    try:
        return orjson.loads(text)
    except orjson.JSONDecodeError:
        return json.loads(text)


def _decode_entry(text: str, pos: int, dec: json.JSONDecoder) -> tuple[object, int]:
    """The JSON value at ``pos`` in ``text`` and where it ends.  An entry that fills its line (as
    :func:`conformance.bundle_write._write_manifest` writes them, a comma after) is parsed by :func:`_loads`; any other
    layout by ``dec.raw_decode``."""
    nl = text.find("\n", pos)
    line = text[pos:nl if nl >= 0 else len(text)].rstrip()
    if line.endswith(","):
        line = line[:-1]
    if line.startswith("{") and line.endswith("}"):
        try:
            return orjson.loads(line), pos + len(line)
        except orjson.JSONDecodeError:
            pass
    return dec.raw_decode(text, pos)


class _NotLineLayout(Exception):
    """The manifest is not in the layout :func:`conformance.bundle_write._write_manifest` writes (read it whole instead)."""


def _manifest_lines(f, head: dict, keep_text: bool = False):
    """Yield each case entry of the manifest open in binary as ``f`` with its byte span, reading
    one line at a time, so that neither the manifest's text nor its parsed document exists at
    once (a 47,549-case manifest is 70 MB); fill ``head`` with the top-level keys other than
    ``cases`` once the entries are read.  For the layout :func:`conformance.bundle_write._write_manifest` writes:
    ``{``, `` "cases": [``, one entry a line (a comma after all but the last), `` ]`` and the
    rest of the object.  With ``keep_text``, each entry's JSON text comes with it (for a
    manifest that cannot be read again by byte span: a compressed archive member).

    Raises:
        _NotLineLayout: another layout (before any entry is yielded, or at the first line that
            breaks it: the caller starts again with :func:`_manifest_entries`).
        ValueError: an entry line that is not valid JSON.
    """
    first, second = f.readline(), f.readline()
    opening = second.strip()
    if first.strip() != b"{" or opening not in (b'"cases": [', b'"cases": []', b'"cases": [],'):
        raise _NotLineLayout
    pos = len(first) + len(second)
    close = opening if opening != b'"cases": [' else None
    while close is None:
        line = f.readline()
        body = line.strip()
        if body in (b"]", b"],"):
            close = body
        elif body.startswith(b"{") and body.endswith((b"}", b"},")):
            start = pos + len(line) - len(line.lstrip())
            text = body[:-1] if body.endswith(b",") else body
            yield _loads(text), (start, start + len(text)), text.decode("utf-8") if keep_text else None
        else:  # also the end of the file before the list closed
            raise _NotLineLayout
        pos += len(line)
    rest, declared = _rest_lines(f)
    if close.endswith(b","):
        head.update(json.loads("{" + rest))
        if declared is not None:
            head["declared"] = declared
    elif rest.strip() != "}":
        raise _NotLineLayout


def _rest_lines(f) -> tuple[str, dict[str, bytes] | None]:
    """The rest of the manifest open in binary as ``f`` (the identity, after the case entries) as
    text, without its ``"declared"`` member when :func:`conformance.bundle_write._write_manifest` wrote it (an operator a
    line), with that member as ``{operator: its JSON text}``, each line read and kept as bytes, so
    that a reader holds the table's declared reasons unparsed until it needs one operator's
    (parsed whole they were 18 MiB, and the text, read whole, left as much of the heap behind);
    ``(text, None)`` for another layout, left to the JSON reader."""
    parts: list[bytes] = []
    declared: dict[str, bytes] | None = None
    opening = b' "declared": {\n'
    for line in f:
        if declared is None and line == opening:
            declared = {}
            for item in f:
                if item.rstrip(b"\r\n") in (b" }", b" },"):
                    if not item.startswith(b" },") and parts:  # the last member: the comma before it goes
                        parts[-1] = parts[-1].rstrip().rstrip(b",") + b"\n"
                    break
                key, sep, value = item.strip().rstrip(b",").partition(b": ")
                try:
                    name = json.loads(key)
                except ValueError:
                    name = None
                if not sep or not isinstance(name, str) or not value.startswith(b"{"):
                    return (b"".join(parts) + line + item + f.read()).decode("utf-8"), None
                declared[name] = value
            continue
        parts.append(line)
    return b"".join(parts).decode("utf-8"), declared


def _manifest_entries(text: str, head: dict):
    """Yield each case entry of the manifest ``text`` with its span in ``text`` (or, where spans
    cannot stand for byte offsets, its JSON text); fill ``head`` with the top-level keys other
    than ``cases`` once the entries are read.  For manifests :func:`_manifest_lines` cannot
    stream.

    A manifest whose entries are a list ``"cases"`` first is parsed one entry at a time; any other
    valid JSON layout is parsed whole.

    Raises:
        ValueError: not valid JSON.
    """
    m = re.match(r'\s*\{\s*"cases"\s*:\s*\[\s*', text)
    if m is None:
        doc = json.loads(text)
        if not isinstance(doc, dict):
            raise ValueError("the manifest is not a JSON object")
        cases = doc.pop("cases", [])
        if not isinstance(cases, list):
            raise ValueError('"cases" is not a list')
        head.update(doc)
        for e in cases:
            yield e, None, json.dumps(e)
        return
    dec = json.JSONDecoder()
    ws = re.compile(r"\s*")
    spans_ok = text.isascii()  # character offsets are byte offsets
    pos = m.end()
    if text.startswith("]", pos):
        pos += 1
    else:
        while True:
            e, end = _decode_entry(text, pos, dec)
            yield (e, (pos, end), None) if spans_ok else (e, None, text[pos:end])
            pos = ws.match(text, end).end()
            if text.startswith(",", pos):
                pos = ws.match(text, pos + 1).end()
                continue
            if not text.startswith("]", pos):
                raise ValueError(f"expected ',' or ']' at character {pos}")
            pos += 1
            break
    rest = ws.match(text, pos).end()
    tail = "{" + text[rest + 1:] if text.startswith(",", rest) else "{}" if text.startswith("}", rest) else None
    if tail is None:
        raise ValueError(f"expected ',' or '}}' at character {rest}")
    head.update(json.loads(tail))


def is_archive(path: str | os.PathLike) -> bool:
    """Whether ``path`` is a bundle archive (a zip file; :func:`conformance.bundle_write.write_archive`) rather than a
    bundle directory."""
    return os.path.isfile(path) and zipfile.is_zipfile(path)


#: (pid, archive path) -> the open archive: a worker reads thousands of members from it
_ARCHIVES: dict[tuple[int, str], zipfile.ZipFile] = {}


def _archive(root: str) -> zipfile.ZipFile:
    """The archive ``root``, opened once per process.

    Raises:
        BundleError: not a readable zip archive.
    """
    key = (os.getpid(), root)
    zf = _ARCHIVES.get(key)
    if zf is None:
        try:
            zf = _ARCHIVES[key] = zipfile.ZipFile(root)
        except (OSError, zipfile.BadZipFile) as exc:
            raise BundleError(f"{root}: not a readable bundle archive: {exc}") from None
    return zf


#: bundle root -> whether it is an archive (asked for every file a run reads)
_ROOT_KINDS: dict[str, bool] = {}


def _archive_root(root: str) -> bool:
    """:func:`is_archive` of a bundle root, remembered."""
    kind = _ROOT_KINDS.get(root)
    if kind is None:
        kind = _ROOT_KINDS[root] = is_archive(root)
    return kind


@contextlib.contextmanager
def _manifest_stream(root: Path):
    """``(binary file, base, stamp)`` of the bundle ``root``'s manifest: ``base`` is where its
    text starts in the file a :class:`CaseRef` reads it from again (0 for a directory's
    ``manifest.json``; the stored member's data offset in an archive; ``None`` for a compressed
    member, which cannot be read by byte span), ``stamp`` that file's :func:`_stamp`.

    Raises:
        BundleError: an archive without ``manifest.json``, or not a readable zip archive.
    """
    if not _archive_root(str(root)):
        with open(root / "manifest.json", "rb") as f:
            yield f, 0, _stamp(os.fstat(f.fileno()))
        return
    zf = _archive(str(root))
    info = _archive_manifest(zf, root)
    base = None
    if info.compress_type == zipfile.ZIP_STORED:
        with open(root, "rb") as raw:
            raw.seek(info.header_offset)
            local = raw.read(30)  # the local file header: its name and extra field precede the data
            if len(local) == 30 and local[:4] == b"PK\x03\x04":
                base = info.header_offset + 30 + int.from_bytes(local[26:28], "little") + \
                    int.from_bytes(local[28:30], "little")
    with zf.open(info) as f:
        yield f, base, _stamp(os.stat(root))


def _archive_manifest(zf: zipfile.ZipFile, root) -> zipfile.ZipInfo:
    """The ``manifest.json`` member of the archive ``zf`` (at ``root``).

    Raises:
        BundleError: the archive has none.
    """
    try:
        return zf.getinfo("manifest.json")
    except KeyError:
        raise BundleError(f"{root} is not a bundle: the archive has no manifest.json") from None


def _shift(span: tuple[int, int] | None, base: int | None) -> tuple[int, int] | None:
    return None if span is None or base is None else (span[0] + base, span[1] + base)


def manifest_bytes(path: str | os.PathLike) -> bytes:
    """The ``manifest.json`` of the bundle ``path`` (a directory or an archive), as written.

    Raises:
        BundleError: ``path`` is not a bundle.
    """
    root = Path(path)
    if is_archive(root):
        zf = _archive(str(root))
        return zf.read(_archive_manifest(zf, root))
    try:
        return (root / "manifest.json").read_bytes()
    except OSError:
        raise BundleError(f"{root} is not a bundle: {root / 'manifest.json'} not found") from None


def is_bundle(path: str | os.PathLike) -> bool:
    """Whether ``path`` is a bundle directory (with ``manifest.json``) or a bundle archive."""
    p = Path(path)
    return (p / "manifest.json").is_file() or is_archive(p)


class KeySorter:
    """:attr:`conformance.suite.Suite.content_hash` of cases whose ``id\\0content hash`` lines
    (UTF-8) are given one at a time (:meth:`add`, in case order, as a reader meets them): sha256
    over the lines sorted, each with a newline (sorting these bytes is sorting the (id, hash)
    pairs: UTF-8 keeps code point order and NUL sorts first); and the first id that two cases
    share, or None (:meth:`digest`).

    The lines are sorted ``chunk`` at a time as they come and the sorted chunks merged at the end,
    each line read again by ``key(i)``: the memory is bounded by a chunk's lines, where sorting all
    of them at once (as one fixed-width numpy array) took 48 MiB at 153,000 cases (issue 30).  A
    suite of one chunk is hashed from the lines it was given (nothing read again).
    """

    def __init__(self, chunk: int = 8192):
        self.chunk, self.n = chunk, 0
        self._keys: list[bytes] = []
        self._orders: list[array] = []  # per sorted chunk, its case indices in order (8 bytes a case)

    def add(self, line: bytes) -> None:
        """The line of the next case (index :attr:`n`)."""
        self._keys.append(line)
        self.n += 1
        if len(self._keys) == self.chunk:
            self._close_chunk()

    def _close_chunk(self) -> None:
        keys, first = self._keys, self.n - len(self._keys)
        self._orders.append(array("q", (first + k for k in sorted(range(len(keys)), key=keys.__getitem__))))
        self._keys = []

    def digest(self, key) -> tuple[str, str | None]:
        """``(hex digest, duplicate id or None)``; ``key(i)`` gives case ``i``'s line again (read only
        where the cases fill more than one chunk)."""
        h = hashlib.sha256()
        if not self._orders:  # one chunk: its lines, sorted, are the order
            merged = sorted(self._keys)
        else:
            if self._keys:
                self._close_chunk()
            merged = (line for line, _ in heapq.merge(*(((key(i), i) for i in order) for order in self._orders)))
        prev, dup = None, None
        for line in merged:
            cid = line.split(b"\0", 1)[0]
            if cid == prev and dup is None:
                dup = cid.decode("utf-8", "surrogatepass")
            prev = cid
            h.update(line + b"\n")
        return h.hexdigest(), dup


def suite_hash(n: int, key, *, chunk: int = 8192) -> tuple[str, str | None]:
    """:attr:`conformance.suite.Suite.content_hash` of ``n`` cases given as ``key(i)``, the ``id\\0content
    hash`` line of case ``i`` (UTF-8), and the first id two cases share or None
    (:class:`KeySorter`, which reads each line twice where there is more than one ``chunk``).

    Returns:
        ``(hex digest, duplicate id or None)``.
    """
    sorter = KeySorter(chunk)
    for i in range(n):
        sorter.add(key(i))
    return sorter.digest(key)


class CaseRefs(Sequence):
    """The cases of a bundle as references (:class:`CaseRef`), held compactly: per case the byte
    span of its manifest entry and one index into a small table of (entry domain, coverage group)
    in memory, its id and content hash in a spool file (:class:`conformance.compact.DiskSpool`),
    about 17 bytes of memory a case, where a list of :class:`CaseRef` objects held 600 (and the
    parent of a 130,000-case run held them all) and ids and hashes in memory 150 more.  Item
    ``i`` is a :class:`CaseRef` made from the manifest entry when asked for (its coverage analysis
    not interned), so a forked worker reads and parses the entry of the case it runs, not the
    parent.

    Attributes:
        root: the bundle (directory or archive).
        content_hash: the suite's content hash (:func:`suite_hash` of the cases).
        recorded: how many entries record a coverage analysis (all of them: the run's coverage
            is computed from the manifest, :class:`conformance.coverage.RefsCoverage`).
    """

    def __init__(self, root: str, stamp: tuple):
        self.root, self._stamp = root, stamp
        self._start, self._stop = Ints(), Ints()
        self._raw: list[str] | None = None  # entry texts, for a manifest not readable by byte span
        self._keys = DiskSpool()  # per case two items: its id, its content hash (UTF-8)
        self._kind = Ints()
        self._kinds: dict[tuple, int] = {}
        self.kinds: list[tuple] = []  # (entry domain, coverage group), see kind()
        self.recorded = 0
        self.content_hash = ""
        #: the manifest's ``declared`` (:func:`conformance.bundle_write.op_facts`), each operator's as its JSON text, or None
        #: for a manifest without one
        self.declared: Mapping[str, bytes] | None = None

    def _append(self, e: dict, span: tuple[int, int] | None, raw: str | None) -> bytes:
        """Append the entry ``e``; its ``id\\0content hash`` line (:meth:`key`), for the content hash."""
        if span is None:
            if self._raw is None:
                self._raw = [""] * len(self._start)
            self._raw.append(raw)
            span = (0, 0)
        elif self._raw is not None:
            self._raw.append(None)
        self._start.append(span[0])
        self._stop.append(span[1])
        cid = str(e["id"]).encode("utf-8", "surrogatepass")
        chash = str(e["content_hash"]).encode("utf-8", "surrogatepass")
        self._keys.add(cid)
        self._keys.add(chash)
        a = e.get("coverage")
        if isinstance(a, dict):
            self.recorded += 1
            group = ("pattern",) if "pattern" in a else ("problem",) if a.get("problem") is not None else \
                ("op", str(a.get("domain") or ""), str(a.get("op")))
        else:
            group = None
        kind = (str(e.get("domain") or ""), group)
        k = self._kinds.get(kind)
        if k is None:
            k = self._kinds[kind] = len(self.kinds)
            self.kinds.append(kind)
        self._kind.append(k)
        return cid + b"\0" + chash

    def __len__(self) -> int:
        return len(self._start)

    def _index(self, i: int) -> int:
        n = len(self._start)
        if i < 0:
            i += n
        if not 0 <= i < n:
            raise IndexError("case index out of range")
        return i

    def __getitem__(self, i):
        if isinstance(i, slice):
            return self.refs(range(*i.indices(len(self))))
        return self.refs([i])[0]

    def entry(self, i: int) -> dict:
        """Case ``i``'s manifest entry (read again from the manifest).

        Raises:
            BundleError: the manifest was replaced or edited since it was indexed.
        """
        return next(self.entries([self._index(i)]))

    def entries(self, indices, *, chunk: int = 1 << 20):
        """The manifest entries of cases ``indices`` (ascending), parsed, in that order: entries
        that lie one after another in the manifest read with one ``os.pread`` (up to ``chunk``
        bytes), not one each (the coverage of an operator reads all of its cases' entries, which
        a generated manifest keeps together).

        Raises:
            BundleError: the manifest was replaced or edited since it was indexed.
        """
        for _i, _span, _raw, text in self._texts(indices, chunk):
            yield _loads(text)

    def refs(self, indices, *, chunk: int = 1 << 20) -> list[CaseRef]:
        """``[self[i] for i in indices]``, the entries read as :meth:`entries` reads them: a
        worker's batch of consecutive cases with one ``os.pread`` and one check of the manifest's
        stamp (one ``fstat``), not one each.

        Raises:
            BundleError: the manifest was replaced or edited since it was indexed.
            IndexError: an index out of range.
        """
        out = []
        for _i, span, raw, text in self._texts([self._index(i) for i in indices], chunk):
            e = _loads(text)
            ref = CaseRef(self.root, e, span, raw, self._stamp)
            ref._read = (text, e)  # the worker that loads it reads the entry once, not twice
            out.append(ref)
        return out

    def _texts(self, indices, chunk: int):
        """``(index, span, raw, entry text)`` of each of ``indices``, in that order (see :meth:`entries`)."""
        indices = list(indices)
        k = 0
        while k < len(indices):
            i = indices[k]
            if self._raw is not None and self._raw[i] is not None:
                raw = self._raw[i]
                yield i, None, raw, _entry_bytes(self.root, self._stamp, None, raw)
                k += 1
                continue
            start = self._start[i]
            last = k
            while (last + 1 < len(indices) and (self._raw is None or self._raw[indices[last + 1]] is None)
                   and 0 <= self._start[indices[last + 1]] - self._stop[indices[last]] <= 64
                   and self._stop[indices[last + 1]] - start <= chunk):
                last += 1
            data = _entry_bytes(self.root, self._stamp, (start, self._stop[indices[last]]), None)
            for j in indices[k:last + 1]:
                a, b = self._start[j], self._stop[j]
                yield j, (a, b), None, data[a - start:b - start]
            k = last + 1

    def id(self, i: int) -> str:
        """Case ``i``'s id (without reading the manifest: from the index's spool file)."""
        return self._keys[2 * self._index(i)].decode("utf-8", "surrogatepass")

    def key(self, i: int) -> bytes:
        """Case ``i``'s ``id\\0content hash`` (UTF-8), as :func:`suite_hash` takes it."""
        k = 2 * self._index(i)
        both = self._keys.span(k, k + 1)
        return self._keys.cut(k, both, 0) + b"\0" + self._keys.cut(k, both, 1)

    def kind(self, i: int) -> tuple:
        """``(entry domain, coverage group)`` of case ``i``: the group is ``("op", domain, op)`` of the
        analysis the manifest records, ``("pattern",)`` for a layer-pattern case, ``("problem",)``
        for a model matched to no schema, ``None`` where the entry records none."""
        return self.kinds[self._kind[self._index(i)]]


class _SpooledTexts(Mapping):
    """Texts by key, kept in a :class:`conformance.compact.DiskSpool` (appended to it when made) and
    read back when asked for: a bundle's ``declared`` reasons (5 MB for the whole table), which
    only the coverage of an operator reads."""

    def __init__(self, spool: DiskSpool, texts: dict[str, bytes]):
        self._spool = spool
        self._at = {k: spool.add(v) for k, v in texts.items()}

    @classmethod
    def at(cls, spool: DiskSpool, at: dict[str, int]) -> _SpooledTexts:
        """The texts already in ``spool``, each at its index ``at[key]``."""
        new = cls.__new__(cls)
        new._spool, new._at = spool, at
        return new

    def __getitem__(self, key: str) -> bytes:
        return self._spool[self._at[key]]

    def __iter__(self):
        return iter(self._at)

    def __len__(self) -> int:
        return len(self._at)


def read_index(path: str | os.PathLike, *, keep: bool = False) -> tuple[dict, CaseRefs]:
    """The identity and the case references of a bundle, from its manifest alone (or from the
    index kept beside it, :data:`INDEX_CACHE`, where that was made from this manifest's bytes).

    No case file is read: each :class:`CaseRef` reads and checks its case when loaded, so
    a runner can hand cases to its workers as they are needed.  The manifest's
    ``content_hash`` is checked against its entries (an edited manifest is refused here);
    each case's files are checked against its entry's hash by :meth:`CaseRef.load`.

    Returns:
        ``(identity, refs)``: identity as :meth:`conformance.suite.Suite.identity` gives it
        (``seed``, ``ops``, ``generators``, ``versions``, ``content_hash``, ``n_cases``,
        ``source``; ``depth``, ``families`` and ``seeds`` (a several-seed suite, whose ``seed`` is
        None) where the manifest has them), refs (:class:`CaseRefs`) in manifest order.

    Args:
        keep: write the index beside the manifest of a bundle directory (``generate`` does,
            :func:`conformance.execute.keep_coverage`), where it was not read from there.

    Raises:
        BundleError: missing or malformed manifest, an entry without the fields the runner
            needs, a directory outside the bundle, duplicate ids, or a ``content_hash`` that
            does not match the entries.
    """

    root = Path(path)
    mpath = root / "manifest.json"
    archive = _archive_root(str(root))
    if not archive and not mpath.is_file():
        raise BundleError(f"{root} is not a bundle: {mpath} not found")
    if not archive:
        kept = _kept_index(root)
        if kept is not None:
            return kept
    head: dict = {}
    try:
        with _manifest_stream(root) as (f, base, stamp):
            # the content hash's lines are sorted as the entries are read (each read back once less)
            refs, sorter = CaseRefs(str(root), stamp), KeySorter()
            try:
                for n, (e, span, raw) in enumerate(_manifest_lines(f, head, keep_text=base is None)):
                    sorter.add(_add_ref(refs, root, mpath, n, e, _shift(span, base), raw, stamp))
            except _NotLineLayout:  # another layout: the whole text, parsed as it comes
                head.clear()
                refs, sorter = CaseRefs(str(root), stamp), KeySorter()
                f.seek(0)
                text = f.read().decode("utf-8")
                for n, (e, span, raw) in enumerate(_manifest_entries(text, head)):
                    if span is not None and base is None:
                        span, raw = None, text[span[0]:span[1]]
                    sorter.add(_add_ref(refs, root, mpath, n, e, _shift(span, base), raw, stamp))
                del text
    except (OSError, ValueError) as exc:  # UnicodeDecodeError and JSONDecodeError are ValueErrors
        raise BundleError(f"{mpath}: not valid JSON: {exc}") from exc
    if head.get("format") != FORMAT:
        raise BundleError(f"{mpath}: unknown format {head.get('format')!r}, expected {FORMAT!r}")
    refs.content_hash, dup = sorter.digest(refs.key)
    if dup is not None:
        raise BundleError(f"{mpath}: case id {dup!r} appears twice")
    if isinstance(head.get("declared"), dict):  # kept as text in the spool file, an operator's parsed when its coverage is
        refs.declared = _SpooledTexts(refs._keys, {k: v if isinstance(v, bytes) else orjson.dumps(v)
                                                   for k, v in head.pop("declared").items()})
    refs._keys.flush()
    if head.get("content_hash") is not None and head["content_hash"] != refs.content_hash:
        raise BundleError(f"{mpath}: the suite's content_hash does not match its case entries (edited manifest?)")
    identity = {
        "seed": head.get("seed"), "ops": list(head.get("ops", [])), "generators": dict(head.get("generators", {})),
        "versions": dict(head.get("versions", {})), "content_hash": refs.content_hash, "n_cases": len(refs),
        "source": str(root),
    }
    for key in ("depth", "families", "seeds"):
        if head.get(key):
            identity[key] = head[key]
    if keep and not archive and refs._raw is None:
        _keep_index(root, identity, refs)
    return identity, refs


#: The index of a bundle directory's manifest (:func:`read_index`'s references, their ids and
#: content hashes, the identity), kept beside it by ``generate``: a run reads it instead of
#: parsing every entry (28 us a case, 0.2 s of a 7,317-case run's parent before any case runs),
#: where the manifest's SHA-256 is the one it was made from (5 ms for that manifest's 10 MB).
#: Anything else (no such file, another manifest, a damaged or older index) is not an error:
#: the manifest is parsed.  Not part of the bundle's content (its hash is the entries').
INDEX_CACHE = "index.bin"
_INDEX_FORMAT = "onnx-conformance-index/1"


def _sha256_of(f) -> str:
    """The SHA-256 (hex) of the rest of the binary file ``f``, read a MiB at a time
    (``hashlib.file_digest`` is Python 3.11's)."""
    h = hashlib.sha256()
    buf = bytearray(1 << 20)
    view = memoryview(buf)
    while n := f.readinto(buf):
        h.update(view[:n])
    return h.hexdigest()


def _keep_index(root: Path, identity: dict, refs: CaseRefs) -> None:
    """Write ``refs`` (just read from ``root``'s manifest, :func:`read_index`) as ``root``'s kept
    index: a JSON header line (format, the manifest's size and SHA-256, the identity, the
    reference tables, each array's type code and length), then the arrays' and the spool's bytes.
    Nothing is written where the manifest changed since it was read (its stamp).

    Raises:
        OSError: the file cannot be written.
    """
    mpath = root / "manifest.json"
    with open(mpath, "rb") as m:
        if _stamp(os.fstat(m.fileno())) != refs._stamp:
            return
        digest = _sha256_of(m)
    keys = refs._keys
    keys.flush()
    arrays = {"start": refs._start.a, "stop": refs._stop.a, "kind": refs._kind.a, "ends": keys.end.a}
    declared = None if refs.declared is None else dict(refs.declared._at)
    header = {
        "format": _INDEX_FORMAT, "manifest_size": refs._stamp[2], "manifest_sha256": digest,
        "identity": {k: v for k, v in identity.items() if k not in ("source", "n_cases")},
        "recorded": refs.recorded, "kinds": refs.kinds, "declared": declared, "spool_bytes": keys._flushed,
        "arrays": [[name, a.typecode, len(a)] for name, a in arrays.items()],
    }
    tmp = root / (INDEX_CACHE + ".tmp")
    with open(tmp, "wb") as f:
        f.write(json.dumps(header, separators=(",", ":")).encode() + b"\n")
        for a in arrays.values():
            f.write(a.tobytes())
        for start in range(0, keys._flushed, 1 << 20):
            f.write(os.pread(keys._fd, min(1 << 20, keys._flushed - start), start))
    os.replace(tmp, root / INDEX_CACHE)


def _kept_index(root: Path) -> tuple[dict, CaseRefs] | None:
    """:func:`read_index` of the bundle directory ``root`` from its kept index
    (:data:`INDEX_CACHE`), or ``None`` where it has none made from its manifest as it is."""
    try:
        with open(root / INDEX_CACHE, "rb") as f:
            header = json.loads(f.readline())
            if not isinstance(header, dict) or header.get("format") != _INDEX_FORMAT:
                return None
            with open(root / "manifest.json", "rb") as m:
                st = os.fstat(m.fileno())
                if st.st_size != header["manifest_size"] or \
                        _sha256_of(m) != header["manifest_sha256"]:
                    return None
                stamp = _stamp(os.fstat(m.fileno()))
            if stamp != _stamp(st):  # written while it was hashed
                return None
            arrays = {}
            for name, code, n in header["arrays"]:
                a = array(code)
                data = f.read(n * a.itemsize)
                a.frombytes(data)
                if len(a) != n:
                    return None
                arrays[name] = a
            size, n = int(header["spool_bytes"]), len(arrays["start"])
            at = f.tell()
            if f.seek(0, os.SEEK_END) - at != size or f.seek(at) != at or \
                    (len(arrays["ends"]) and arrays["ends"][-1] != size) or \
                    not (len(arrays["stop"]) == len(arrays["kind"]) == n and len(arrays["ends"]) >= 2 * n):
                return None
            refs = CaseRefs(str(root), stamp)
            refs._keys.load(f, size, arrays["ends"])  # copied a MiB at a time into the references' spool
        refs._start.a, refs._stop.a, refs._kind.a = arrays["start"], arrays["stop"], arrays["kind"]
        refs.kinds = [(str(d), None if g is None else tuple(g)) for d, g in header["kinds"]]
        refs._kinds = {k: i for i, k in enumerate(refs.kinds)}
        refs.recorded = int(header["recorded"])
        identity = dict(header["identity"])
        refs.content_hash = str(identity["content_hash"])
        if header["declared"] is not None:
            refs.declared = _SpooledTexts.at(refs._keys, {str(k): int(v) for k, v in header["declared"].items()})
    except FileNotFoundError:
        return None
    except (OSError, ValueError, KeyError, TypeError, IndexError, OverflowError):  # damaged: parse the manifest
        return None
    identity.update(source=str(root), n_cases=len(refs))
    return identity, refs


def _add_ref(refs: CaseRefs, root: Path, mpath: Path, n: int, e, span, raw, stamp: tuple) -> bytes:
    """Append manifest entry #``n`` to ``refs`` (checked as a :class:`CaseRef` would take it); its
    ``id\\0content hash`` line.

    Raises:
        BundleError: the entry lacks a field the runner needs or names a directory outside the
            bundle.
    """
    try:
        rel = e["dir"]
        if not isinstance(rel, str) or not _SAFE_DIR.match(rel):
            raise BundleError(f"{mpath}: case #{n} ({e.get('id')!r}): directory {rel!r} is not a plain "
                              "path inside the bundle")
        CaseRef(str(root), e, span, raw, stamp)  # the fields the runner needs, checked
        return refs._append(e, span, raw)
    except BundleError:
        raise
    except (KeyError, TypeError, ValueError, AttributeError) as exc:
        ident = e.get("id", "?") if isinstance(e, dict) else "?"
        raise BundleError(f"{mpath}: case #{n} ({ident}): malformed entry ({type(exc).__name__}: {exc})") from exc


def read_bundle(path: str | os.PathLike, *, verify: bool = True) -> Suite:
    """Read a bundle written by :func:`conformance.bundle_write.write_bundle`, every case's files included.

    Args:
        path: the bundle directory.
        verify: recompute every case's content hash and compare it with the manifest.

    Raises:
        BundleError: missing or malformed manifest, a path outside the bundle, a
            missing file, a tensor that does not parse, or (``verify``) a case whose
            content no longer matches its hash.
    """
    identity, refs = read_index(path)
    return Suite(cases=[r.load(verify) for r in refs], seed=identity["seed"], ops=identity["ops"],
                 generators=identity["generators"], versions=identity["versions"], source=identity["source"],
                 depth=identity.get("depth"), families=dict(identity.get("families", {})),
                 seeds=identity.get("seeds"))


def _check_spec(spec, d: str) -> str | None:
    """A manifest entry's ``check``, refused (:class:`BundleError`) unless it names a function of
    this project (``conformance.module:function``): a bundle is data and names no code of its own."""
    if spec is None:
        return None
    if not isinstance(spec, str) or not re.fullmatch(r"conformance(\.\w+)*:\w+(\.\w+)*", spec):
        raise BundleError(f"{d}: check {spec!r} is not a function of the conformance package")
    return spec


def _load_entry(root: str | Path, e: dict, verify: bool, text: bytes | None = None,
                initializers: bool = True) -> Case:
    """:func:`_read_case` with every failure as a :class:`BundleError` naming the case."""
    try:
        return _read_case(root, e, verify, text, initializers)
    except BundleError:
        raise
    except (KeyError, TypeError, ValueError, OSError, onnx.onnx_cpp2py_export.checker.ValidationError) as exc:
        ident = e.get("id", "?") if isinstance(e, dict) else "?"
        raise BundleError(f"{os.path.join(root, 'manifest.json')}: case {ident}: {type(exc).__name__}: {exc}") from exc


def _read_file(root: str, rel: str) -> bytes:
    """The bytes of the file ``rel`` of the bundle ``root``: a file under a bundle directory, or
    the member ``rel`` of a bundle archive (:func:`is_archive`).

    Raises:
        BundleError: the file is missing.
    """
    try:
        if _archive_root(root):
            return _archive(root).read(rel)
        # os.open/os.read, not open(): no buffered file object per file (a run reads three or
        # four small files a case; this is a third cheaper: ~7 us against ~11 us a file)
        fd = os.open(f"{root}/{rel}", _O_READ)
        try:
            data = os.read(fd, _READ_CHUNK)
            if data:  # read on to the end of the file (a small file: one more read, which is empty)
                chunk = os.read(fd, _READ_CHUNK)
                if chunk:
                    chunks = [data, chunk]
                    while chunk:
                        chunk = os.read(fd, _READ_CHUNK)
                        chunks.append(chunk)
                    data = b"".join(chunks)
        finally:
            os.close(fd)
        return data
    except (FileNotFoundError, IsADirectoryError, NotADirectoryError, KeyError):
        raise BundleError(f"missing file {root}/{rel}") from None


_O_READ = os.O_RDONLY | getattr(os, "O_CLOEXEC", 0) | getattr(os, "O_BINARY", 0)
_READ_CHUNK = 1 << 16  # below malloc's mmap threshold: no mapping per read


def open_member(root: str, rel: str):
    """The file ``rel`` of the bundle ``root`` (a directory's file or an archive's member) opened
    for reading bytes, or ``None`` where the bundle has none.

    Raises:
        BundleError: ``root`` is an archive that cannot be read.
    """
    try:
        if _archive_root(root):
            return _archive(root).open(rel)
        return open(os.path.join(root, rel), "rb")
    except (FileNotFoundError, IsADirectoryError, NotADirectoryError, KeyError):
        return None


def _load_value(root: str, rel: str, kind: str, h=None):
    """:func:`_load_tensor` for a value of any kind (:func:`proto_value`)."""
    if kind == "tensor":
        return _load_tensor(root, rel, h)
    data = _read_file(root, rel)
    if h is not None:
        _feed(h, data)
    return proto_value(data, kind, f"{root}/{rel}")


def _load_tensor(root: str, rel: str, h=None) -> np.ndarray:
    """The tensor in the bundle file ``rel`` of ``root`` (:func:`_read_file`; a serialised
    ``TensorProto``); its bytes are fed to the files' hash ``h`` (:func:`_feed`) when given.

    Raises:
        BundleError: the file is missing or is not a TensorProto.
    """
    data = _read_file(root, rel)
    if h is not None:
        _feed(h, data)
    a = _raw_tensor(data)
    if a is not None:
        return a
    t = onnx.TensorProto()
    try:
        t.ParseFromString(data)
    except Exception as exc:  # noqa: BLE001 - protobuf raises its own DecodeError
        raise BundleError(f"{root}/{rel}: not a TensorProto: {exc}") from exc
    return tensor_array(t)


def _raw_tensor(data: bytes) -> np.ndarray | None:
    """:func:`tensor_array` of the ``TensorProto`` serialised as ``data``, read from the bytes
    themselves where they hold what ``numpy_helper.from_array`` writes: ``dims``, ``data_type``
    (a type of :func:`_raw_dtypes`), an ASCII ``name`` and ``raw_data``, each field once (``dims``
    any number of times), in any order; ``None`` for anything else (another field, a field
    twice, a negative dimension, truncated bytes), which the caller parses with protobuf.  The
    same array (dtype, shape, values, read-only), without building the message and copying
    ``raw_data`` out of it: half the cost of a tensor file (a run reads two or three a case)."""
    pos, end = 0, len(data)
    dims: list[int] = []
    dtype = raw = name = None
    try:
        while pos < end:
            tag = data[pos]
            pos += 1
            if tag == 0x10 and dtype is None:  # data_type (field 2, varint): a type below 128
                v = data[pos]
                pos += 1
                if v & 0x80:
                    return None
                dtype = v
                continue
            # dims (field 1, varint) or a length (fields 8 and 9, length-delimited): a varint below 2**63
            v = data[pos]
            pos += 1
            if v & 0x80:
                v &= 0x7F
                shift = 7
                while True:
                    b = data[pos]
                    pos += 1
                    v |= (b & 0x7F) << shift
                    if not b & 0x80:
                        break
                    shift += 7
                    if shift > 56:  # a tenth byte: 2**63 or more (a negative dimension)
                        return None
            if tag == 0x08:
                dims.append(v)
            elif tag == 0x4A and raw is None:  # raw_data (field 9)
                if pos + v > end:
                    return None
                raw = (pos, pos + v)
                pos += v
            elif tag == 0x42 and name is None:  # name (field 8)
                if pos + v > end or not data[pos:pos + v].isascii():
                    return None
                name = True
                pos += v
            else:
                return None
    except IndexError:  # truncated
        return None
    dt = _RAW_DTYPES.get(dtype)
    if dt is None or raw is None:
        return None
    return np.frombuffer(data[raw[0]:raw[1]], dtype=dt).reshape(tuple(dims))


def _raw_dtypes() -> dict[int, np.dtype]:
    """ONNX element types whose ``raw_data`` is one little-endian element after another in the
    numpy dtype :func:`onnx.helper.tensor_dtype_to_np_dtype` gives (the packed 2-, 4- and 6-bit
    types and strings are not)."""
    import sys

    if sys.byteorder != "little":
        return {}
    packed = {"INT4", "UINT4", "FLOAT4E2M1", "INT2", "UINT2", "FLOAT6E2M3", "FLOAT6E3M2", "STRING", "UNDEFINED"}
    out = {}
    for name, code in onnx.TensorProto.DataType.items():
        if name in packed:
            continue
        try:
            out[code] = np.dtype(helper.tensor_dtype_to_np_dtype(code))
        except (KeyError, TypeError, ValueError):
            continue
    return out


_RAW_DTYPES = _raw_dtypes()


def tensor_array(t: onnx.TensorProto) -> np.ndarray:
    """``numpy_helper.to_array(t)``, by one ``np.frombuffer`` where ``t`` holds its values in
    ``raw_data`` (what ``numpy_helper.from_array`` writes) in a type of :func:`_raw_dtypes`
    (a fifth of the cost: a run reads every expected output and input this way); any other
    tensor (external data, typed fields, packed types, strings) goes to ``to_array``."""
    dt = _RAW_DTYPES.get(t.data_type)
    if dt is not None and t.data_location == 0 and t.HasField("raw_data") and not t.HasField("segment"):
        return np.frombuffer(t.raw_data, dtype=dt).reshape(tuple(t.dims))
    return numpy_helper.to_array(t)


def _read_case(root: str | Path, e: dict, verify: bool, text: bytes | None = None,
               initializers: bool = True) -> Case:
    """The case of manifest entry ``e`` (whose JSON text in the manifest is ``text``), read from
    its directory under ``root``; with ``verify``, checked: by the digest of its files and entry
    (``files_sha256``, :func:`_entry_line_with_digest`) where that holds, else by recomputing its
    content hash.  Without ``initializers``, an initializer input's ``value`` is left ``None`` (the
    model carries it; only a check function reads it)."""
    rel = e["dir"]
    if not isinstance(rel, str) or not _SAFE_DIR.match(rel):
        raise BundleError(f"case {e.get('id')!r}: directory {rel!r} is not a plain path inside the bundle")
    root = str(root)
    d = f"{root}/{rel}"  # strings, not pathlib or os.path.join: this runs once per case of every run
    mfile = f"{d}/model.onnx"
    model_bytes = _read_file(root, f"{rel}/model.onnx")
    digest = e.get("files_sha256") if verify and text is not None else None
    files = None
    if isinstance(digest, str):
        files = _files_hash()
        _feed(files, model_bytes)
    try:
        model = onnx.load_model_from_string(model_bytes)
    except Exception as exc:  # noqa: BLE001
        raise BundleError(f"{mfile}: not an ONNX model: {exc}") from exc
    inputs = [
        Input(i["name"], int(i["elem_type"]), None if i["shape"] is None else tuple(i["shape"]), bool(i["initializer"]),
              None, bool(i["present"]), i.get("kind", "tensor"), bool(i.get("outer", False)))
        for i in e["inputs"]
    ]
    outputs = [
        Output(o["name"], int(o["elem_type"]), Tolerance.from_json(o["tolerance"]) if o["tolerance"] else None,
               bool(o["present"]), kind=o.get("kind", "tensor"))
        for o in e["outputs"]
    ]
    graph_inputs = [i for i in inputs if i.present and not i.initializer]
    present_outputs = [o for o in outputs if o.present]
    datasets = []
    expected = e.get("expect_error") is None and not e.get("check")
    for k in range(int(e["n_datasets"])):
        dd = f"{rel}/test_data_set_{k}"
        ins = {i.name: _load_value(root, f"{dd}/input_{n}.pb", i.kind, files) for n, i in enumerate(graph_inputs)}
        outs = {}
        if expected:
            outs = {o.name: _load_value(root, f"{dd}/output_{n}.pb", o.kind, files)
                    for n, o in enumerate(present_outputs)}
        datasets.append(DataSet(ins, outs))
    if initializers:
        inits = {t.name: tensor_array(t) for t in model.graph.initializer}
        for i in inputs:
            if i.initializer:
                i.value = inits.get(i.name)
    node = model.graph.node[0] if len(model.graph.node) == 1 else None
    attrs = {}
    if node is not None:
        for a in node.attribute:
            v = helper.get_attribute_value(a)
            attrs[a.name] = v.decode() if isinstance(v, bytes) else v
    case = Case(
        op=e["op"], since_version=int(e["since_version"]), opset=int(e["opset"]), attributes=attrs,
        inputs=inputs, outputs=outputs, datasets=datasets, tags=dict(e.get("tags") or {}),
        label=e.get("label", ""), domain=e.get("domain", ""), expect_error=e.get("expect_error"),
        generator=e.get("generator", ""),
        output_slots=len(node.output) if node is not None else None,
        check=_check_spec(e.get("check"), d),
        skip=e.get("skip"),
        contested=e.get("contested"),
    )
    # The model on disk is the model under test; it is not rebuilt from the manifest.
    case.__dict__["model"] = model
    case.__dict__["model_bytes"] = model_bytes
    if files is not None:
        files.update(text.replace(_digest_member(digest), b"", 1))
        if files.hexdigest() == digest:  # the files and the entry as written: nothing to recompute
            case.__dict__["content_hash"] = e["content_hash"]
            if case.id != e["id"]:
                raise BundleError(f"case {e['id']!r} in {d}: id does not match its content ({case.id})")
            return case
    if verify:  # no digest, or one that does not hold (an edited case, or a re-formatted manifest)
        got = case.content_hash
        if got != e["content_hash"]:
            raise BundleError(f"case {e['id']!r} in {d}: content does not match its hash (edited after generation?)")
        if case.id != e["id"]:
            raise BundleError(f"case {e['id']!r} in {d}: id does not match its content ({case.id})")
    else:
        case.__dict__["content_hash"] = e["content_hash"]
    return case
