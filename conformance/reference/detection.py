"""Oracle and output check of NonMaxSuppression (ai.onnx 10, 11; the two versions share the text).

The text (``onnx.defs``): per batch and class, boxes whose score is *less than*
``score_threshold`` are removed (a score equal to it stays); the others are taken greedily in
decreasing score order, and a box is suppressed when its IoU with a previously selected box is
*strictly greater* than ``iou_threshold`` (equal stays); at most ``max_output_boxes_per_class``
boxes are selected per batch and class (absent: 0, no output).  ``center_point_box`` 0: boxes
are ``[y1, x1, y2, x2]``, any diagonal pair of corners (the corners may come in either order);
1: ``[x_center, y_center, width, height]``.  ``selected_indices`` (num_selected, 3) rows are
``[batch_index, class_index, box_index]``; the text calls it "a set of integers", so its row
order is not specified: :func:`check_nms` compares the rows as a multiset.

The text does not fix the order of equal scores; the generator draws ties only where every
order selects the same set (tied boxes that do not suppress each other, and no cut of
``max_output_boxes_per_class`` inside a tie), so the oracle's stable order is one of them.
IoUs are computed exactly (rationals); the generator keeps every IoU either equal to the
threshold (then exactly representable, with exact float32 arithmetic on the boxes' small
half-integer coordinates) or at least :data:`MARGIN` away from it, so a float32 kernel makes
the same comparisons.
"""

from __future__ import annotations

from fractions import Fraction

import numpy as np

#: how far every IoU that is not equal to the threshold stays from it
MARGIN = Fraction(1, 1000)


def corners(box, center_point_box: int) -> tuple[Fraction, Fraction, Fraction, Fraction]:
    """``(y_min, x_min, y_max, x_max)`` of one box (4 numbers) as exact rationals, in the
    format ``center_point_box`` names (module docstring)."""
    b = [Fraction(float(v)) for v in box]
    if center_point_box:
        xc, yc, w, h = b
        return yc - h / 2, xc - w / 2, yc + h / 2, xc + w / 2
    y1, x1, y2, x2 = b
    return min(y1, y2), min(x1, x2), max(y1, y2), max(x1, x2)


def iou(a, b) -> Fraction:
    """Exact intersection over union of two boxes given as :func:`corners`; 0 where the union
    is empty."""
    ih = max(Fraction(0), min(a[2], b[2]) - max(a[0], b[0]))
    iw = max(Fraction(0), min(a[3], b[3]) - max(a[1], b[1]))
    inter = ih * iw
    union = (a[2] - a[0]) * (a[3] - a[1]) + (b[2] - b[0]) * (b[3] - b[1]) - inter
    return inter / union if union > 0 else Fraction(0)


def nms(boxes, scores, max_output_boxes_per_class=None, iou_threshold=None, score_threshold=None,
        center_point_box: int = 0) -> np.ndarray:
    """NonMaxSuppression (10, 11): ``boxes`` (B, N, 4), ``scores`` (B, C, N) (float arrays),
    the optional scalars (``None`` absent).  Returns int64 (num_selected, 3) rows ``[b, c, i]``
    in batch, class, selection order.

    Raises:
        ValueError: boxes not (B, N, 4) or scores not (B, C, N) of the same B and N.
    """
    boxes = np.asarray(boxes, dtype=np.float64)
    scores = np.asarray(scores, dtype=np.float64)
    if boxes.ndim != 3 or boxes.shape[2] != 4 or scores.ndim != 3 or scores.shape[0] != boxes.shape[0] \
            or scores.shape[2] != boxes.shape[1]:
        raise ValueError(f"boxes {boxes.shape} and scores {scores.shape} are not (B, N, 4) and (B, C, N)")
    k = 0 if max_output_boxes_per_class is None else int(np.asarray(max_output_boxes_per_class).reshape(-1)[0])
    t = Fraction(0) if iou_threshold is None else Fraction(float(np.asarray(iou_threshold).reshape(-1)[0]))
    st = None if score_threshold is None else float(np.asarray(score_threshold).reshape(-1)[0])
    rows = []
    for b in range(boxes.shape[0]):
        cs = [corners(boxes[b, i], center_point_box) for i in range(boxes.shape[1])]
        for c in range(scores.shape[1]):
            s = scores[b, c]
            cand = [i for i in range(len(s)) if st is None or not s[i] < st]
            cand.sort(key=lambda i: -s[i])  # stable: equal scores in index order (one allowed order)
            sel: list[int] = []
            for i in cand:
                if len(sel) >= k:
                    break
                if all(iou(cs[i], cs[j]) <= t for j in sel):
                    sel.append(i)
            rows += [[b, c, i] for i in sel]
    return np.array(rows, dtype=np.int64).reshape(-1, 3)


def check_nms(inputs: dict, outputs: dict, attrs: dict) -> tuple[bool, str]:
    """Judge ``selected_indices`` as a set: int64, shape (num_selected, 3), and the same rows as
    :func:`nms` of the fed ``inputs`` (formal names; absent optional inputs missing) in any order.

    Returns ``(passed, message)``."""
    want = nms(inputs["boxes"], inputs["scores"], inputs.get("max_output_boxes_per_class"),
               inputs.get("iou_threshold"), inputs.get("score_threshold"), int(attrs.get("center_point_box", 0)))
    got = np.asarray(outputs["selected_indices"])
    if got.dtype != np.int64:
        return False, f"selected_indices is {got.dtype}, not int64"
    if got.ndim != 2 or got.shape[1:] != (3,):
        return False, f"selected_indices has shape {list(got.shape)}, not (num_selected, 3)"
    a, e = sorted(map(tuple, got.tolist())), sorted(map(tuple, want.tolist()))
    if a != e:
        extra = sorted(set(a) - set(e))[:4]
        missing = sorted(set(e) - set(a))[:4]
        return False, (f"{len(a)} rows selected, expected {len(e)}; extra {extra}, missing {missing}"
                       if set(a) != set(e) else "the same rows, with other multiplicities")
    return True, f"{len(e)} rows, the expected set (order free)"
