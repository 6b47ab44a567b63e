"""Tests of NonMaxSuppression (10, 11) (``conformance/ops/detection.py``,
``conformance/reference/detection.py``).

* the oracle against onnx's node tests and an independent greedy loop (float64 IoU) on every
  value case; the generated IoUs are the threshold exactly or MARGIN away from it;
* kernels through ``KernelBackend``: legitimate ones (float32 IoU; rows in another order) pass
  every case; wrong ones (center_point_box ignored, iou_threshold inclusive, score_threshold
  ignored or exclusive of an equal score, max_output_boxes_per_class ignored) fail cases;
* onnx.reference's failures explained; error cases rejected; coverage.
"""

from __future__ import annotations

from collections import Counter
from fractions import Fraction

import numpy as np
import onnx
import pytest

from conformance.backends import resolve_backend
from conformance.backends.kernel import KernelBackend
from conformance.coverage import compute_coverage
from conformance.reference import detection as ref
from conformance.runner import run_cases
from oracle_checks import single_node_tests, sort_findings

OPS = ["NonMaxSuppression"]


def _loop(boxes, scores, k, t, st, center):
    """Greedy selection written out: float64 corners, IoU by the usual formula."""
    out = []
    for b in range(boxes.shape[0]):
        bx = []
        for row in boxes[b].astype(np.float64):
            if center:
                xc, yc, w, h = row
                bx.append((yc - h / 2, xc - w / 2, yc + h / 2, xc + w / 2))
            else:
                bx.append((min(row[0], row[2]), min(row[1], row[3]), max(row[0], row[2]), max(row[1], row[3])))
        for c in range(scores.shape[1]):
            order = sorted(range(scores.shape[2]), key=lambda i: (-scores[b, c, i], i))
            kept = []
            for i in order:
                if st is not None and scores[b, c, i] < st:
                    continue
                if len(kept) == k:
                    break
                ok = True
                for j in kept:
                    a, e = bx[i], bx[j]
                    inter = max(0.0, min(a[2], e[2]) - max(a[0], e[0])) * max(0.0, min(a[3], e[3]) - max(a[1], e[1]))
                    union = (a[2] - a[0]) * (a[3] - a[1]) + (e[2] - e[0]) * (e[3] - e[1]) - inter
                    if union > 0 and inter / union > t:
                        ok = False
                        break
                if ok:
                    kept.append(i)
            out += [[b, c, i] for i in kept]
    return out


def _feeds(case):
    ds = case.datasets[0].inputs
    return {i.name: (ds[i.name] if i.name in ds else i.value) for i in case.inputs if i.present}


def _args(f, attrs):
    k = f.get("max_output_boxes_per_class")
    t = f.get("iou_threshold")
    st = f.get("score_threshold")
    return (f["boxes"], f["scores"], 0 if k is None else int(k), 0.0 if t is None else float(t),
            None if st is None else float(st), int(attrs.get("center_point_box", 0)))


def test_oracle_reproduces_the_node_tests():
    tests = single_node_tests(("NonMaxSuppression",), ("nonmaxsuppression",))
    assert len(tests) >= 9
    for t in tests:
        node = t.model.graph.node[0]
        attrs = {a.name: onnx.helper.get_attribute_value(a) for a in node.attribute}
        names = [n for n in node.input]
        for ins, outs in t.data_sets:
            f = dict(zip([n for n in names if n], ins))
            got = ref.nms(f["boxes"], f["scores"], f.get("max_output_boxes_per_class"), f.get("iou_threshold"),
                          f.get("score_threshold"), attrs.get("center_point_box", 0))
            assert got.tolist() == outs[0].tolist(), t.name  # even the order (none of them has ties)


def test_oracle_is_the_loop_and_margins_hold(value_cases):
    n = 0
    for c in value_cases:
        f = _feeds(c)
        boxes, scores, k, t, st, center = _args(f, c.attributes)
        got = ref.nms(boxes, scores, k, t, st, center)
        assert got.tolist() == _loop(boxes, scores, k, t, st, center), c.id
        tq = Fraction(t)
        for b in range(boxes.shape[0]):
            cs = [ref.corners(r, center) for r in boxes[b]]
            for i in range(len(cs)):
                for j in range(i):
                    v = ref.iou(cs[i], cs[j])
                    assert v == tq or abs(v - tq) >= ref.MARGIN, c.id
        n += 1
    assert n >= 140


# ============================================================================ kernels
def make_kernel(order="batch", flaw=None):
    """NonMaxSuppression with a float32 IoU; ``order``: ``batch`` (batch, class, selection)
    or ``reversed`` (the rows backwards: the text's "set" allows it); ``flaw``:
    ``center-ignored``, ``iou-inclusive`` (>=), ``score-threshold-ignored``,
    ``score-threshold-exclusive`` (an equal score removed), ``max-output-ignored``."""

    def kernel(inputs, attrs, outputs, opset):
        boxes, scores = inputs["boxes"], inputs["scores"]
        if boxes.ndim != 3 or boxes.shape[2] != 4 or scores.ndim != 3 or scores.shape[0] != boxes.shape[0] \
                or scores.shape[2] != boxes.shape[1]:
            raise ValueError("shapes")
        k = inputs.get("max_output_boxes_per_class")
        k = 0 if k is None else int(k.reshape(-1)[0])
        if flaw == "max-output-ignored":
            k = boxes.shape[1]
        t = np.float32(0 if inputs.get("iou_threshold") is None else inputs["iou_threshold"].reshape(-1)[0])
        st = inputs.get("score_threshold")
        st = None if st is None or flaw == "score-threshold-ignored" else np.float32(st.reshape(-1)[0])
        center = int(attrs.get("center_point_box", 0)) and flaw != "center-ignored"
        f32 = np.float32
        rows = []
        for b in range(boxes.shape[0]):
            bx = boxes[b].astype(f32)
            if center:
                half_w, half_h = bx[:, 2] / f32(2), bx[:, 3] / f32(2)
                y1, x1, y2, x2 = bx[:, 1] - half_h, bx[:, 0] - half_w, bx[:, 1] + half_h, bx[:, 0] + half_w
            else:
                y1, y2 = np.minimum(bx[:, 0], bx[:, 2]), np.maximum(bx[:, 0], bx[:, 2])
                x1, x2 = np.minimum(bx[:, 1], bx[:, 3]), np.maximum(bx[:, 1], bx[:, 3])
            area = (y2 - y1) * (x2 - x1)
            for c in range(scores.shape[1]):
                s = scores[b, c]
                idx = np.argsort(-s, kind="stable")
                sel = []
                for i in idx:
                    if st is not None and (s[i] < st or (flaw == "score-threshold-exclusive" and s[i] == st)):
                        continue
                    if len(sel) >= k:
                        break
                    ih = np.maximum(f32(0), np.minimum(y2[i], y2[sel]) - np.maximum(y1[i], y1[sel]))
                    iw = np.maximum(f32(0), np.minimum(x2[i], x2[sel]) - np.maximum(x1[i], x1[sel]))
                    inter = (ih * iw).astype(f32)
                    union = (area[i] + area[sel] - inter).astype(f32)
                    with np.errstate(all="ignore"):
                        iou = np.where(union > 0, inter / union, f32(0)).astype(f32)
                    worse = iou >= t if flaw == "iou-inclusive" else iou > t
                    if not worse.any():
                        sel.append(int(i))
                rows += [[b, c, i] for i in sel]
        out = np.array(rows, dtype=np.int64).reshape(-1, 3)
        if order == "reversed":
            out = out[::-1].copy()
        return {outputs[0]: out}

    return kernel


def _run(cases, kernel, name, check=True):
    return run_cases(cases, KernelBackend({"NonMaxSuppression": kernel}, name=name, check=check))


@pytest.mark.parametrize("order", ["batch", "reversed"])
def test_legitimate_kernels_pass_everything(order, value_cases):
    results = _run(value_cases, make_kernel(order), order)
    bad = [(c.id, r.outcome, r.message[:200]) for c, r in zip(value_cases, results) if r.outcome != "pass"]
    assert not bad, (len(bad), bad[:5])


def _present(c, name):
    return any(i.name == name and i.present for i in c.inputs)


WRONG = {
    "center-ignored": lambda c: c.attributes.get("center_point_box") == 1,
    "iou-inclusive": lambda c: _present(c, "max_output_boxes_per_class"),
    "score-threshold-ignored": lambda c: _present(c, "score_threshold") and _present(c, "max_output_boxes_per_class"),
    "score-threshold-exclusive": lambda c: c.contested is not None,
    "max-output-ignored": lambda c: _present(c, "max_output_boxes_per_class"),
}


@pytest.mark.parametrize("flaw", sorted(WRONG))
def test_wrong_kernels_are_caught(flaw, value_cases):
    cases = [c for c in value_cases if WRONG[flaw](c)]
    assert len(cases) >= 20, len(cases)
    results = _run(cases, make_kernel(flaw=flaw), flaw, check=False)
    n = Counter(r.outcome for r in results)
    assert n["fail"] >= 8, n


def test_error_cases_are_rejected(suite):
    cases = [c for c in suite if c.expect_error]
    assert {c.tags["error"] for c in cases} == {"boxes-last-dim", "scores-spatial", "boxes-rank"}
    results = _run(cases, make_kernel(), "legit")
    assert all(r.outcome == "pass" for r in results), [(c.id, r.message[:100]) for c, r in zip(cases, results)
                                                        if r.outcome != "pass"]


def _reference_disagreement(case, res) -> str | None:
    """onnx.reference's NonMaxSuppression indexes its optional inputs as 1-D arrays: a 0-d
    (scalar, as the text says) input raises IndexError, and an omitted optional input a
    TypeError ("Issues with types"); a contested case it refuses that way is reported
    ``unsupported``.  Its selections: :func:`test_onnx_reference_with_1d_inputs_agrees`."""
    if res.outcome in ("error", "unsupported") and ("0-dimensional" in res.message
                                                     or "Issues with types" in res.message):
        return "scalar-or-omitted-inputs"
    return None


def test_agreement_with_onnx_reference(suite):
    vals = [c for c in suite if not c.expect_error]
    results = run_cases(vals, resolve_backend("onnx-reference"))
    why, unexplained = sort_findings(vals, results, _reference_disagreement)
    assert not unexplained, (len(unexplained), unexplained[:5])
    assert why["scalar-or-omitted-inputs"] == len(vals)


def test_onnx_reference_with_1d_inputs_agrees(value_cases):
    """Fed every optional input present as a 1-element 1-D tensor (what it can index), onnx's
    ReferenceEvaluator selects the oracle's set wherever no score equals score_threshold; where
    one does (the contested cases), it removes that box (``score > score_threshold`` keeps),
    against the text's "boxes with score less than score_threshold are removed": its result is
    then exactly the ``score-threshold-exclusive`` kernel's (onnxruntime 1.32 does the same)."""
    from onnx import TensorProto, helper
    from onnx.reference import ReferenceEvaluator

    names = ["boxes", "scores", "max_output_boxes_per_class", "iou_threshold", "score_threshold"]
    n = differ = 0
    for c in value_cases:
        f = _feeds(c)
        if not all(k in f for k in names):
            continue
        boxes, scores, k, t, st, center = _args(f, c.attributes)
        node = helper.make_node("NonMaxSuppression", names, ["y"], center_point_box=center)
        types = [TensorProto.FLOAT, TensorProto.FLOAT, TensorProto.INT64, TensorProto.FLOAT, TensorProto.FLOAT]
        g = helper.make_graph([node], "g", [helper.make_tensor_value_info(a, ty, None) for a, ty in zip(names, types)],
                              [helper.make_tensor_value_info("y", TensorProto.INT64, None)])
        m = helper.make_model(g, opset_imports=[helper.make_opsetid("", c.opset)])
        feeds = {"boxes": f["boxes"], "scores": f["scores"], "max_output_boxes_per_class": np.array([k], np.int64),
                 "iou_threshold": np.array([t], np.float32), "score_threshold": np.array([st], np.float32)}
        got = ReferenceEvaluator(m).run(None, feeds)[0]
        ok, msg = ref.check_nms(feeds, {"selected_indices": got}, {"center_point_box": center})
        excl = make_kernel(flaw="score-threshold-exclusive")(feeds, {"center_point_box": center}, ["y"], c.opset)["y"]
        assert sorted(got.tolist()) == sorted(excl.tolist()), c.id
        if not ok:
            assert (scores == np.float32(st)).any() and c.contested, (c.id, msg)
            differ += 1
        n += 1
    assert n >= 25 and differ >= 5, (n, differ)


def test_coverage_and_states(suite, value_cases):
    cov = compute_coverage(suite)
    for v, e in cov["ops"]["NonMaxSuppression"]["versions"].items():
        assert not e["missing"], (v, e["missing"][:3])
    assert {c.since_version for c in value_cases} == {10, 11}
    assert {c.attributes.get("center_point_box") for c in value_cases} == {None, 0, 1}
    assert {c.tags["numerics"] for c in value_cases} == {"normal", "flipped", "ties"}
    assert any(c.tags["shape"] == "zero-boxes" for c in value_cases)
    ks = Counter()
    at_threshold = 0
    for c in value_cases:
        f = _feeds(c)
        if "max_output_boxes_per_class" in f:
            n = f["boxes"].shape[1]
            k = int(f["max_output_boxes_per_class"])
            ks["zero" if k == 0 else "small" if k < n else "large"] += 1
        equal = "score_threshold" in f and bool((f["scores"] == f["score_threshold"]).any())
        assert equal == (c.contested is not None), c.id  # contested exactly where a score equals it
        at_threshold += equal
    assert min(ks["zero"], ks["small"], ks["large"]) >= 5, ks
    assert at_threshold >= 20
    # exact-threshold IoU pairs are present
    exact = 0
    for c in value_cases:
        f = _feeds(c)
        boxes, _, _, t, _, center = _args(f, c.attributes)
        cs = [ref.corners(r, center) for r in boxes[0]] if boxes.shape[1] else []
        exact += any(ref.iou(cs[i], cs[j]) == Fraction(t) and t > 0 for i in range(len(cs)) for j in range(i))
    assert exact >= 20, exact
    assert 100 <= len(value_cases) <= 400
