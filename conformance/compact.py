"""Compact per-case storage for the parent of a large run: integers in the narrowest array that
holds them, texts one after another in a spool file.  A Python ``int`` in a list costs 8 bytes
of pointer (and 28 more above 256), a ``str`` about 50 bytes more than its text; at 130,000 cases
the difference was the run's memory (issue 30)."""

from __future__ import annotations

import os
import tempfile
from array import array


class Ints:
    """Integers (indices, and small negative markers) in the narrowest signed array that holds them
    so far: one byte an item for most columns, widened (to 2, 4, then 8 bytes) when a value does
    not fit.

    Raises:
        OverflowError: (``append``) a value beyond the signed 64-bit range.
    """

    __slots__ = ("a",)
    _WIDER = {"b": "h", "h": "i", "i": "q"}

    def __init__(self):
        self.a = array("b")

    def append(self, v: int) -> None:
        try:
            self.a.append(v)
        except OverflowError:
            if self.a.typecode == "q":
                raise
            self.a = array(self._WIDER[self.a.typecode], self.a)
            self.append(v)

    def __getitem__(self, i):
        return self.a[i]

    def __len__(self) -> int:
        return len(self.a)

    def __iter__(self):
        return iter(self.a)


class DiskSpool:
    """Byte strings one after another in an unnamed temporary file (deleted when closed or when
    the process ends), each found again by its index with one ``os.pread``: 4 bytes of memory an
    item (its end offset), where a byte buffer in memory kept the bytes too.  What the parent of a large
    run needs only now and then (a case's id and content hash; the operators' coverage as text) is
    kept here (issue 30: the parent's memory may not grow with the suite).  Appends are buffered
    (:data:`FLUSH` bytes); items are read back in any order, by this process or a process forked
    from it once the appends are done.

    Raises:
        OSError: the temporary file cannot be created or written (no space left, ``TMPDIR``
            not writable).
    """

    __slots__ = ("_file", "_fd", "_buf", "_flushed", "end", "_block_at", "_block")
    #: buffered appends are written once they reach this many bytes
    FLUSH = 1 << 20
    #: reads fetch at least this many bytes, kept until a read falls outside them: items read in
    #: order (a report's ids) cost one ``pread`` a block, not one each
    BLOCK = 1 << 16

    def __init__(self):
        self._file = tempfile.TemporaryFile(prefix="onnx-conformance-spool-", buffering=0)
        self._fd = self._file.fileno()
        self._buf, self._flushed, self.end = bytearray(), 0, Ints()
        self._block_at, self._block = 0, b""

    def add(self, data: bytes) -> int:
        """Append ``data``; returns its index."""
        self._buf += data
        self.end.append(self._flushed + len(self._buf))
        if len(self._buf) >= self.FLUSH:
            self._flush()
        return len(self.end) - 1

    def load(self, src, size: int, ends) -> None:
        """Append the items whose bytes are the next ``size`` bytes of the binary file ``src``,
        one after another, item ``k`` ending at ``ends[k]`` (an ``array`` of offsets into those
        bytes, ascending; its last ``size``): a spool written before, as :meth:`flush` left its
        file, read back a MiB at a time (a whole suite's ids and hashes are 13 MB).

        Raises:
            OSError: ``src`` ends before ``size`` bytes, or the spool file cannot be written.
        """
        self.flush()
        base = done = self._flushed
        while done < base + size:
            chunk = src.read(min(base + size - done, 1 << 20))
            if not chunk:
                raise OSError(f"{getattr(src, 'name', 'the source')!r} ends {base + size - done} bytes early")
            view = memoryview(chunk)
            while view:
                n = os.pwrite(self._fd, view, done)
                view, done = view[n:], done + n
        self._flushed = done
        if base:
            any(map(self.end.append, (base + e for e in ends)))
        elif len(self.end):
            any(map(self.end.append, ends))
        else:
            self.end.a = array(ends.typecode, ends)

    def flush(self) -> None:
        """Write the buffered appends and drop the block last read (their memory freed)."""
        if self._buf:
            self._flush()
        self._block_at, self._block = 0, b""

    def _flush(self) -> None:
        view = memoryview(self._buf)
        while view:
            view = view[os.pwrite(self._fd, view, self._flushed + len(self._buf) - len(view)):]
        self._flushed += len(self._buf)
        self._buf = bytearray()

    def span(self, first: int, last: int) -> bytes:
        """Items ``first`` to ``last`` (inclusive) as one byte string (see :meth:`cut`)."""
        start, stop = self.end[first - 1] if first else 0, self.end[last]
        at = self._block_at
        if at <= start and stop <= at + len(self._block):
            return self._block[start - at:stop - at]
        if stop > self._flushed:
            self._flush()
        # a read just past the block goes on in order: a block; elsewhere (an item here and there)
        # little more than the item (a 64 KiB read costs ~4 us, a small one ~1)
        ahead = at + len(self._block) <= start < at + 2 * len(self._block) + 1024
        block = os.pread(self._fd, max(stop - start, self.BLOCK if ahead else 1024), start)
        if len(block) < stop - start:
            raise OSError(f"spool file {self._file.name!r} shorter than written")
        self._block_at, self._block = start, block
        return block[:stop - start]

    def cut(self, first: int, data: bytes, k: int) -> bytes:
        """Item ``first + k`` of ``data`` (:meth:`span` from ``first``)."""
        base = self.end[first - 1] if first else 0
        return data[(self.end[first + k - 1] if first + k else 0) - base:self.end[first + k] - base]

    def __getitem__(self, i: int) -> bytes:
        return self.span(i, i)

    def __len__(self) -> int:
        return len(self.end)

    def close(self) -> None:
        """Delete the file (reading an item afterwards raises ``OSError``)."""
        self._file.close()
        self._fd, self._block_at, self._block = -1, 0, b""  # never a descriptor the number is given to next


_TRIM = None


def trim_heap() -> None:
    """Give the C heap's free pages back to the system (glibc's ``malloc_trim``; nothing where the
    C library has none).  A run's parent calls it between the phases of its end: what one phase
    allocated and freed (a manifest's entries read and dropped, an operator's coverage parsed and
    written) otherwise stays resident beside what the next one allocates (14 MiB after the cases
    of a whole-suite run, measured)."""
    global _TRIM
    if _TRIM is None:
        try:
            import ctypes

            _TRIM = ctypes.CDLL(None).malloc_trim
        except (OSError, AttributeError):
            _TRIM = False
    if _TRIM:
        _TRIM(0)
