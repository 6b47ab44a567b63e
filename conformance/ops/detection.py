"""NonMaxSuppression (ai.onnx 10, 11) as an entry of the operator table (family ``shaped``).

Oracle and check: :mod:`conformance.reference.detection`.  What the entry adds to the schema:

* shape patterns: one batch and one class, several batches and classes (B 2, C 2-3), 24 boxes
  in one class (long greedy chains), zero boxes (N = 0);
* ``center_point_box`` 0 and 1 (and absent); boxes on a half-integer grid (every float32
  computation of their corners, areas and intersections is exact), corners in either order
  (``flipped``: y1 > y2 and x1 > x2 for format 0);
* the optional inputs present and absent (the engine's cycle): ``max_output_boxes_per_class``
  0, 1, 2 and more than the boxes (absent: 0, no output); ``iou_threshold`` 0 (also its
  default), 0.25, 0.375, 0.5, 0.625 with pairs whose IoU is *exactly* the threshold (kept: the
  text suppresses "strictly greater"); ``score_threshold`` halfway between two score levels,
  and, in the ``score-at-threshold`` pattern, equal to one of the scores (kept: the text removes
  scores "less than" it; contested, since onnx's reference implementation removes it);
* numerics: ``normal`` (distinct scores per class, multiples of 1/64), ``flipped``, ``ties``
  (equal scores, only between boxes that do not suppress each other, with no
  ``max_output_boxes_per_class`` cut: every tie order the text allows selects the same set);
* every IoU is either the threshold exactly or :data:`~conformance.reference.detection.MARGIN`
  away from it (redrawn otherwise), so a float32 IoU takes the oracle's branches;
* ``selected_indices`` is "a set" in the text: judged by
  :func:`conformance.reference.detection.check_nms` (rows in any order);
* error cases: boxes whose last dimension is not 4, scores whose spatial dimension is not
  the boxes', boxes of rank 2.
"""

from __future__ import annotations

from fractions import Fraction

import numpy as np

from ..reference import detection as ref
from .engine import register_entries
from .entry import Attrs, Entry, Err, Shape

CHECK = "conformance.reference.detection:check_nms"
THRESHOLDS = (0.0, 0.25, 0.375, 0.5, 0.625)
#: the boxes' shape of the pattern whose score_threshold equals a score (contested)
AT_THRESHOLD = (1, 9, 4)


def _shapes() -> tuple[Shape, ...]:
    def s(name, cycle=True, optional=None, **dims):
        return Shape(name, {"boxes": "BN4", "scores": "BCN"}, dims=dims, cycle=cycle, optional=optional)

    k = "max_output_boxes_per_class"
    with_k = ((k,), (k, "iou_threshold"), (k, "score_threshold"), (k, "iou_threshold", "score_threshold"))

    return (
        s("B1C1", B=(1, 1), C=(1, 1), N=(2, 7)),
        s("BxC", optional=with_k, B=(2, 2), C=(2, 3), N=(3, 8)),
        s("many/N=24", optional=with_k, B=(1, 1), C=(1, 2), N=(24, 24)),
        s("score-at-threshold/1x2x9", optional=(("max_output_boxes_per_class", "score_threshold"),
                                                ("max_output_boxes_per_class", "iou_threshold", "score_threshold")),
          B=(1, 1), C=(2, 2), N=(9, 9)),
        s("zero-boxes", cycle=False, B=(2, 2), C=(2, 2), N=(0, 0)),
    )


def _box(rng) -> list[Fraction]:
    """Corners (y1, x1, y2, x2) on the integer grid, each side 1 to 6."""
    y, x = int(rng.integers(0, 12)), int(rng.integers(0, 12))
    return [Fraction(y), Fraction(x), Fraction(y + int(rng.integers(1, 7))), Fraction(x + int(rng.integers(1, 7)))]


def _pair(rng, t: Fraction) -> tuple[list, list]:
    """Two boxes whose IoU is exactly ``t``: nested (t > 0, areas 8t and 8) or touching (t = 0)."""
    y, x = Fraction(int(rng.integers(0, 10))), Fraction(int(rng.integers(0, 8)))
    if t == 0:
        return [y, x, y + 2, x + 2], [y, x + 2, y + 2, x + 4]
    return [y, x, y + 1, x + 8 * t], [y, x, y + 1, x + 8]


def _draw_boxes(rng, n: int, t: Fraction) -> list[list[Fraction]]:
    """``n`` boxes, about a third of them in exact-threshold pairs, every other IoU at least
    MARGIN away from ``t``."""
    for _ in range(200):
        bx = []
        while len(bx) < n:
            if n - len(bx) >= 2 and rng.random() < 0.35:
                a, b = _pair(rng, t)
                bx += [a, b] if rng.random() < 0.5 else [b, a]
            else:
                bx.append(_box(rng))
        ok = all(ref.iou(bx[i], bx[j]) == t or abs(ref.iou(bx[i], bx[j]) - t) >= ref.MARGIN
                 for i in range(n) for j in range(i))
        if ok:
            return bx
    raise RuntimeError("no box set keeps its IoUs away from the threshold")


def _encode(bx, center: int, flipped: bool, rng) -> list[list[float]]:
    out = []
    for y1, x1, y2, x2 in bx:
        if center:
            out.append([float((x1 + x2) / 2), float((y1 + y2) / 2), float(x2 - x1), float(y2 - y1)])
        elif flipped and rng.random() < 0.7:
            out.append([float(y2), float(x2), float(y1), float(x1)] if rng.random() < 0.5
                       else [float(y2), float(x1), float(y1), float(x2)])
        else:
            out.append([float(y1), float(x1), float(y2), float(x2)])
    return out


def _tied_scores(rng, bx, t: Fraction) -> list[float]:
    """Scores from three tie levels, a box joining a level only where it suppresses none of it."""
    levels = {0.25: [], 0.5: [], 0.75: []}
    out = []
    unique = iter(rng.permutation(np.arange(1, 64)) / 64.0)
    for i, b in enumerate(bx):
        fits = [v for v, members in levels.items() if all(ref.iou(b, bx[j]) <= t for j in members)]
        if fits:
            v = float(fits[int(rng.integers(0, len(fits)))])
            levels[v].append(i)
        else:
            v = float(next(unique))
            while v in levels:
                v = float(next(unique))
        out.append(v)
    return out


def _numerics(kind):
    def fn(rng, ctx, shapes):
        b_, n_, _ = shapes[0]
        c_ = shapes[1][1]
        present = set(ctx.types)
        t = Fraction(THRESHOLDS[int(rng.integers(0, len(THRESHOLDS)))]) if "iou_threshold" in present else Fraction(0)
        center = int(ctx.attrs.get("center_point_box", 0))
        boxes = np.zeros((b_, n_, 4))
        scores = np.zeros((b_, c_, n_))
        for b in range(b_):
            bx = _draw_boxes(rng, n_, t)
            boxes[b] = np.array(_encode(bx, center, kind == "flipped", rng)).reshape(n_, 4)
            for c in range(c_):
                if kind == "ties":
                    scores[b, c] = _tied_scores(rng, bx, t)
                else:
                    scores[b, c] = rng.permutation(np.arange(1, 64))[:n_] / 64.0
        out = [boxes, scores]
        if "max_output_boxes_per_class" in present:
            k = [0, 1, 2, n_ + 3, n_ + 3][int(rng.integers(0, 5))] if kind != "ties" else n_ + 3
            out.append(np.array(k, dtype=object))
        if "iou_threshold" in present:
            out.append(np.array(float(t)))
        if "score_threshold" in present:
            # exactly one of the scores in the at-threshold pattern (kept: "less than" removes;
            # contested), else halfway between two multiples of 1/64 (no score equals it)
            if _at_threshold(ctx) and scores.size:
                st = float(scores.reshape(-1)[int(rng.integers(0, scores.size))])
            else:
                st = (int(rng.integers(8, 56)) + 0.5) / 64.0
            out.append(np.array(st))
        return out
    return fn


def _at_threshold(ctx) -> bool:
    """The pattern whose score_threshold equals one of the scores (its boxes are (1, 9, 4))."""
    return tuple(ctx.shapes.get("boxes", ())) == AT_THRESHOLD


def _contested(ctx, attrs) -> str | None:
    if "score_threshold" in ctx.types and _at_threshold(ctx):
        return ("a score equal to score_threshold: the text removes boxes 'with score less than score_threshold' "
                "(kept); onnx's reference implementation (and onnxruntime) keep only scores greater than it")
    return None


def _oracle(ctx, boxes, scores, max_output_boxes_per_class=None, iou_threshold=None, score_threshold=None,
            center_point_box=0):
    r = ref.nms(boxes, scores, max_output_boxes_per_class, iou_threshold, score_threshold, center_point_box)
    return r.astype(object)


def _errors() -> tuple[Err, ...]:
    return (
        Err("boxes must be [num_batches, spatial_dimension, 4]", "boxes-last-dim", shapes=((1, 3, 3), (1, 1, 3))),
        Err("scores must be [num_batches, num_classes, spatial_dimension] of the boxes' spatial_dimension",
            "scores-spatial", shapes=((1, 3, 4), (1, 1, 2))),
        Err("boxes must be [num_batches, spatial_dimension, 4] (rank 3)", "boxes-rank", shapes=((3, 4), (1, 1, 3))),
    )


ENTRY = Entry("NonMaxSuppression", _oracle, family="shaped", shapes=_shapes(),
              attrs=(Attrs({"center_point_box": 1}, tag="center_point_box=1"),),
              numerics_classes=lambda tn: ("normal", "flipped", "ties"),
              float_numerics={k: _numerics(k) for k in ("normal", "flipped", "ties")},
              check=lambda ctx, inputs, attrs: CHECK, errors=_errors(), contested=_contested, per_type=72,
              nan=False, inf=False)

ENTRIES = (ENTRY,)
register_entries(ENTRIES, family="detection")
