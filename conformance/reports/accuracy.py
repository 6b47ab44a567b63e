"""Accuracy of passing cases: measured error relative to tolerance, per operator and dtype.

Every output of every case records ``ratio``: the error at the worst element divided by
the tolerance there (``<= 1`` passes, 0 is bit-exact).  For each operator and dtype this
module counts, over the outputs of passing cases, how many were exact and how many fall
in each bin of ``log10(ratio)`` (:data:`PER_DECADE` bins per decade from 10**:data:`LOG_MIN`
to 1), with the numbers n / exact / median / 99th percentile / max beside them.  The page
draws each histogram as a small inline SVG of ``<rect>`` elements from these counts
(:func:`bars`: geometry computed here, written by the template; no plotting library, no
script), so the same results give the same bytes.  Families aggregate their operators.
"""

from __future__ import annotations

import functools
import math
from collections import defaultdict
from collections.abc import Iterable

import numpy as np

from .common import dtype_key, dtype_of

#: Histogram range in log10(ratio): ratios below 10**LOG_MIN are counted in the first bin.
LOG_MIN, LOG_MAX = -8, 0
#: Bins per decade.
PER_DECADE = 2

#: Geometry of one histogram, in SVG user units (CSS pixels): the exact bar, then the bins.
WIDTH, HEIGHT = 216, 22
EXACT_W = 12
BIN_X0 = 32
BIN_W = (WIDTH - BIN_X0 - 4) / ((LOG_MAX - LOG_MIN) * PER_DECADE)


def collect(cases: list[dict]) -> dict[tuple[str, str], np.ndarray]:
    """Ratios of the outputs of passing cases, keyed by ``(op, dtype)`` (finite ratios only)."""
    acc: dict[tuple[str, str], list[float]] = defaultdict(list)
    for c in cases:
        if c.get("outcome") != "pass":
            continue
        for o in c.get("outputs") or ():
            r = o.get("ratio")
            if isinstance(r, (int, float)) and not isinstance(r, bool) and math.isfinite(r):
                acc[(str(c.get("op", "")), dtype_of(c))].append(float(r))
    return {k: np.asarray(v, dtype=np.float64) for k, v in acc.items()}


def _median(r: np.ndarray) -> float:
    """``np.median`` of the finite float64 values ``r`` (at least one), the same value (the middle
    one, or the mean of the two middle ones), without the import of ``numpy.ma`` that
    ``np.median`` makes on its first call (~25 ms of a run's CPU)."""
    k = r.size // 2
    if r.size % 2:
        return float(np.partition(r, k)[k])
    p = np.partition(r, (k - 1, k))
    return float(np.mean(p[k - 1:k + 1]))


def _stat(r: np.ndarray) -> dict:
    return {"n": int(r.size), "exact": int((r == 0).sum()),
            "median": _median(r) if r.size else None,
            "p99": float(np.quantile(r, 0.99)) if r.size else None,
            "max": float(r.max()) if r.size else None}


def stats(ratios: dict[tuple[str, str], np.ndarray]) -> list[dict]:
    """Per ``(op, dtype)``, sorted by operator then dtype: ``op``, ``dtype``, ``n`` (outputs),
    ``exact`` (ratio 0), ``median``, ``p99`` (99th percentile) and ``max`` of the ratios
    (``None`` when there are none)."""
    return [{"op": op, "dtype": dt, **_stat(r)}
            for (op, dt), r in sorted(ratios.items(), key=lambda kv: (kv[0][0], dtype_key(kv[0][1])))]


@functools.lru_cache(maxsize=1)
def _edges() -> np.ndarray:
    """The histogram's bin edges (made once: np.linspace a row cost more than its histogram)."""
    edges = np.linspace(LOG_MIN, LOG_MAX, (LOG_MAX - LOG_MIN) * PER_DECADE + 1)
    edges.flags.writeable = False
    return edges


def histogram(r: np.ndarray) -> tuple[int, np.ndarray]:
    """``(exact count, counts per log10 bin)`` of the ratios ``r``: :data:`PER_DECADE` bins per
    decade over ``[LOG_MIN, LOG_MAX]``; ratios below the range go to the first bin."""
    exact = int((r == 0).sum())
    nz = r[r > 0]
    logs = np.clip(np.log10(nz), LOG_MIN, LOG_MAX) if nz.size else nz
    counts, _ = np.histogram(logs, bins=_edges())
    return exact, counts


def _bin_label(j: int) -> str:
    """The range of err/tol in bin ``j`` as text (the first bin also holds the ratios below the range)."""
    lo = LOG_MIN + j / PER_DECADE
    hi = lo + 1 / PER_DECADE
    return f"{'(0' if j == 0 else f'[1e{lo:g}'}, {'1]' if hi >= LOG_MAX else f'1e{hi:g})'}"


def bars(exact: int, counts) -> list[dict]:
    """The rectangles of one histogram (:data:`WIDTH` x :data:`HEIGHT` user units).

    Bar heights are ``log(1 + count)`` scaled to the row's largest bar, so a single output
    far from the rest stays visible next to thousands of exact ones.

    Returns:
        ``[{"x", "y", "w", "h" (text, 1 decimal), "n" (outputs), "what" (the bin, as text),
        "kind" ("exact" or "bin")}]``, empty bins left out.
    """
    counts = [int(k) for k in counts]
    top = max([exact, *counts, 1])
    scale = (HEIGHT - 2) / math.log1p(top)
    out = []

    def rect(x, w, n, what, kind):
        h = max(1.0, math.log1p(n) * scale)
        out.append({"x": f"{x:.1f}", "y": f"{HEIGHT - h:.1f}", "w": f"{w:.1f}", "h": f"{h:.1f}", "n": n,
                    "what": what, "kind": kind})

    if exact:
        rect(0, EXACT_W, exact, "exact", "exact")
    for j, n in enumerate(counts):
        if n:
            rect(BIN_X0 + j * BIN_W + 0.5, BIN_W - 1, n, _bin_label(j), "bin")
    return out


def axis() -> dict:
    """The histogram axis for the table header: ``{"width", "height", "limit_x", "ticks": [(x, label)]}``
    (x in the same user units as :func:`bars`)."""
    ticks = [(f"{EXACT_W / 2:.1f}", "0")]
    for k in range(LOG_MIN, LOG_MAX + 1, 2):
        x = BIN_X0 + (k - LOG_MIN) * PER_DECADE * BIN_W
        ticks.append((f"{x:.1f}", "1" if k == 0 else f"1e{k}"))
    return {"width": WIDTH, "height": HEIGHT, "limit_x": f"{BIN_X0 + (LOG_MAX - LOG_MIN) * PER_DECADE * BIN_W:.1f}",
            "ticks": ticks}


def _row(r: np.ndarray, **extra) -> dict:
    exact, counts = histogram(r)
    return {**extra, **_stat(r), "bars": bars(exact, counts)}


def accuracy_section(cases: list[dict], families: dict[str, str] | None = None,
                     ratios: dict[tuple[str, str], Iterable[float]] | None = None) -> dict:
    """Everything the report's accuracy section needs, grouped by family.

    Args:
        cases: case records of a results document.
        families: ``{op type: family}`` (:func:`conformance.reports.families.op_families`);
            operators missing there are in ``"other"``; ``None`` puts every operator in ``"other"``.
        ratios: :func:`collect` of ``cases``, gathered before (a run's
            :attr:`conformance.reports.casedata.CaseStore.ratios`); ``cases`` is then not read for them.

    Returns:
        ``{"families": [{"name", "n_ops", "row", "ops": [{"op", "rows": [row]}]}], "stats": [...],
        "axis": axis()}``; ``row`` is ``{"n", "exact", "median", "p99", "max", "bars"}`` over the
        family's outputs (see :func:`stats` and :func:`bars`), and each operator's rows carry
        ``dtype`` as well; ``stats`` is :func:`stats` (flat, per operator and dtype).
    """
    families = families or {}
    ratios = collect(cases) if ratios is None else {k: np.asarray(v, dtype=np.float64) for k, v in ratios.items()}
    return {"families": list(_families(ratios, families)), "stats": stats(ratios), "axis": axis()}


def _families(ratios: dict, families: dict[str, str]):
    """:func:`accuracy_section`'s families, made one at a time (the ratios as numpy arrays, made
    when their family is)."""
    from .families import OTHER, family_sort_key

    by_fam: dict[str, dict[str, list[tuple[str, Iterable[float]]]]] = defaultdict(lambda: defaultdict(list))
    for (op, dt), r in ratios.items():
        by_fam[families.get(op, OTHER)][op].append((dt, r))
    for fam in sorted(by_fam, key=family_sort_key):
        ops = []
        parts = []
        for op in sorted(by_fam[fam]):
            arrays = [(dt, np.asarray(r, dtype=np.float64)) for dt, r in by_fam[fam][op]]
            rows = [_row(r, dtype=dt) for dt, r in sorted(arrays, key=lambda t: dtype_key(t[0]))]
            parts += [r for _, r in arrays]
            ops.append({"op": op, "rows": rows})
        yield {"name": fam, "n_ops": len(ops), "row": _row(np.concatenate(parts)), "ops": ops}


class LazyFamilies:
    """:func:`accuracy_section`'s ``families`` for the page's template, each family made as the
    template reaches it and dropped after (the whole suite's rows and bars took 2.7 MiB at once):
    true when there is one, iterable (each iteration makes them again)."""

    def __init__(self, ratios: dict, families: dict[str, str] | None = None):
        self._ratios, self._families = ratios, families or {}

    def __bool__(self) -> bool:
        return bool(self._ratios)

    def __iter__(self):
        return _families(self._ratios, self._families)
