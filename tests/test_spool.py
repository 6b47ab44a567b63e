"""compact.DiskSpool: the parent's per-case texts in a spool file (issue 30)."""

from __future__ import annotations

import os
import random
import sys
import tracemalloc

import pytest

from conformance.compact import DiskSpool


class SmallSpool(DiskSpool):
    """Flushes and reads in small pieces, so that a few items cross every boundary."""

    __slots__ = ()
    FLUSH = 50
    BLOCK = 16


@pytest.mark.parametrize("cls", [DiskSpool, SmallSpool])
def test_items_read_back_in_any_order_before_and_after_flushing(cls):
    rng = random.Random(0)
    items = [bytes(rng.randrange(256) for _ in range(rng.choice([0, 1, 3, 17, 40, 200]))) for _ in range(300)]
    spool = cls()
    for k, item in enumerate(items[:150]):
        assert spool.add(item) == k
    assert [spool[k] for k in range(150)] == items[:150]  # some still buffered (SmallSpool: most written)
    for item in items[150:]:
        spool.add(item)
    order = list(range(len(items)))
    rng.shuffle(order)
    assert [spool[k] for k in order] == [items[k] for k in order]
    spool.flush()
    assert [spool[k] for k in range(len(items))] == items and len(spool) == len(items)
    both = spool.span(10, 12)
    assert both == b"".join(items[10:13]) and [spool.cut(10, both, j) for j in range(3)] == items[10:13]
    spool.close()
    with pytest.raises((OSError, ValueError)):
        spool[5]


@pytest.mark.skipif(not hasattr(os, "fork"), reason="a forked child reads the parent's spool")
def test_a_forked_child_reads_the_spool():
    spool = SmallSpool()
    for k in range(100):
        spool.add(str(k).encode() * 3)
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: reads every item, says whether they are right
        ok = all(spool[k] == str(k).encode() * 3 for k in range(100))
        os.write(w, b"1" if ok else b"0")
        os._exit(0)
    os.close(w)
    assert os.read(r, 1) == b"1"
    os.waitpid(pid, 0)


def test_the_spool_holds_its_items_on_disk_not_in_memory():
    """10,000 items of 100 bytes: about the 4-byte end offsets in memory once flushed."""
    spool = DiskSpool()
    tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        for k in range(10_000):
            spool.add(b"%099d" % k)
        spool.flush()
        held = tracemalloc.get_traced_memory()[0] - before
    finally:
        tracemalloc.stop()
    assert held < 10_000 * 8, f"{held / 10_000:.1f} bytes an item"
    assert spool[9_999] == b"%099d" % 9_999 and spool[0] == b"%099d" % 0
    assert sys.getsizeof(spool._buf) < 100  # noqa: SLF001 - the buffer was written and freed
