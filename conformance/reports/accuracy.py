"""Accuracy of passing cases: measured error relative to tolerance, per operator and dtype.

Every output of every case records ``ratio``: the error at the worst element divided by
the tolerance there (``<= 1`` passes, 0 is bit-exact).  For each operator this module
draws, with matplotlib, one histogram per dtype of ``log10(ratio)`` over the outputs of
passing cases, with a separate bar for exact results, and returns it as an SVG
``data:`` URI for an ``<img>`` (no script, nothing the page must fetch).  The SVG keeps
its text as text and carries no date, so the same results give the same bytes.
"""

from __future__ import annotations

import base64
import io
import math
from collections import defaultdict

import numpy as np

from .common import dtype_key, dtype_of

#: Histogram range in log10(ratio): ratios below 10**LOG_MIN are drawn in the first bin.
LOG_MIN, LOG_MAX = -8, 0
#: Bins per decade.
PER_DECADE = 2

_BAR = "#3b7dd8"
_EXACT = "#7aa95c"


def collect(cases: list[dict]) -> dict[tuple[str, str], np.ndarray]:
    """Ratios of the outputs of passing cases, keyed by ``(op, dtype)`` (finite ratios only)."""
    acc: dict[tuple[str, str], list[float]] = defaultdict(list)
    for c in cases:
        if c.get("outcome") != "pass":
            continue
        for o in c.get("outputs") or ():
            r = o.get("ratio")
            if isinstance(r, (int, float)) and math.isfinite(r):
                acc[(c.get("op", ""), dtype_of(c))].append(float(r))
    return {k: np.asarray(v, dtype=np.float64) for k, v in acc.items()}


def stats(ratios: dict[tuple[str, str], np.ndarray]) -> list[dict]:
    """Per ``(op, dtype)``: number of outputs, how many were exact, median, 99th percentile and maximum ratio."""
    rows = []
    for (op, dt), r in sorted(ratios.items(), key=lambda kv: (kv[0][0], dtype_key(kv[0][1]))):
        rows.append({
            "op": op, "dtype": dt, "n": int(r.size), "exact": int((r == 0).sum()),
            "median": float(np.median(r)) if r.size else None,
            "p99": float(np.quantile(r, 0.99)) if r.size else None,
            "max": float(r.max()) if r.size else None,
        })
    return rows


def _edges() -> np.ndarray:
    return np.linspace(LOG_MIN, LOG_MAX, (LOG_MAX - LOG_MIN) * PER_DECADE + 1)


def histogram(r: np.ndarray) -> tuple[int, np.ndarray]:
    """``(exact count, counts per log10 bin)``; ratios below the range go to the first bin."""
    exact = int((r == 0).sum())
    nz = r[r > 0]
    logs = np.clip(np.log10(nz), LOG_MIN, LOG_MAX) if nz.size else nz
    counts, _ = np.histogram(logs, bins=_edges())
    return exact, counts


def figure_svg(op: str, per_dtype: list[tuple[str, np.ndarray]]) -> str:
    """One figure for ``op``: a row per dtype with a bar for exact results and a histogram of log10(ratio).

    Bar heights are ``log(1 + count)`` scaled to the largest bin of the figure, so a single
    output far from the rest stays visible next to thousands of exact ones; the numbers
    beside each row give n, exact, median and max.

    Returns:
        The SVG document as text.
    """
    import matplotlib
    from matplotlib.figure import Figure

    rc = {"svg.fonttype": "none", "svg.hashsalt": "onnx-conformance", "font.size": 8,
          "axes.spines.top": False, "axes.spines.right": False, "axes.spines.left": False}
    edges = _edges()
    width = edges[1] - edges[0]
    exact_x = LOG_MIN - 1.0  # the exact bar sits one decade left of the histogram
    hists = [(dt, r, *histogram(r)) for dt, r in per_dtype]
    top = max([max(e, int(c.max()) if c.size else 0) for _, _, e, c in hists] + [1])
    scale = 0.82 / math.log1p(top)
    n = len(hists)
    with matplotlib.rc_context(rc):
        h_in = 0.75 + 0.42 * n
        fig = Figure(figsize=(8.0, h_in))
        ax = fig.add_axes((0.12, 0.55 / h_in, 0.70, 1 - 0.85 / h_in))
        for j, (_dt, r, exact, counts) in enumerate(hists):
            y0 = n - 1 - j
            ax.axhline(y0, color="#d0d0d0", lw=0.6, zorder=1)
            if exact:
                ax.bar([exact_x], [math.log1p(exact) * scale], bottom=y0, width=width * 1.6, color=_EXACT,
                       align="center", zorder=2)
            nz = counts > 0
            if nz.any():
                ax.bar(edges[:-1][nz], np.log1p(counts[nz]) * scale, bottom=y0, width=width * 0.92, color=_BAR,
                       align="edge", zorder=2)
            med = float(np.median(r)) if r.size else float("nan")
            mx = float(r.max()) if r.size else float("nan")
            ax.text(1.01, (y0 + 0.35) / n, f"n={r.size} exact={exact}\nmedian={med:.2g} max={mx:.2g}",
                    transform=ax.transAxes, ha="left", va="center", fontsize=7, color="#333", family="monospace")
        ax.axvline(0, color="#c0392b", lw=1, ls="--", zorder=3)
        ax.set_ylim(-0.08, n)
        ax.set_yticks([n - 1 - j + 0.3 for j in range(n)], [h[0] for h in hists], fontsize=9, fontweight="bold")
        ax.tick_params(axis="y", length=0)
        ticks = [exact_x] + list(range(LOG_MIN, LOG_MAX + 1))
        labels = ["0 (exact)"] + [f"\u2264 1e{LOG_MIN}"] + [f"1e{k}" for k in range(LOG_MIN + 1, LOG_MAX)] + ["1 (limit)"]
        ax.set_xticks(ticks, labels)
        ax.set_xlim(exact_x - 0.6, LOG_MAX + 0.3)
        ax.set_xlabel("error / tolerance at the worst element; bar height ~ log(1 + number of outputs)")
        fig.text(0.01, 1 - 0.12 / h_in, op, fontsize=10, fontweight="bold", va="top")
        buf = io.StringIO()
        fig.savefig(buf, format="svg", metadata={"Date": None, "Creator": None})
    return buf.getvalue()


def data_uri(svg: str) -> str:
    """An SVG document as a ``data:image/svg+xml;base64,...`` URI."""
    return "data:image/svg+xml;base64," + base64.b64encode(svg.encode("utf-8")).decode("ascii")


def accuracy_section(cases: list[dict]) -> dict:
    """Everything the report's accuracy section needs.

    Returns:
        ``{"figures": [{"op", "uri"}], "stats": [...]}`` (see :func:`stats`).
    """
    ratios = collect(cases)
    by_op: dict[str, list[tuple[str, np.ndarray]]] = defaultdict(list)
    for (op, dt), r in ratios.items():
        by_op[op].append((dt, r))
    figures = []
    for op in sorted(by_op):
        rows = sorted(by_op[op], key=lambda t: dtype_key(t[0]))
        figures.append({"op": op, "uri": data_uri(figure_svg(op, rows))})
    return {"figures": figures, "stats": stats(ratios)}
