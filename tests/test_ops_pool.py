"""Tests of the pooling entries (``conformance/ops/pool.py``; oracles, geometry, bounds and
checks in ``conformance/reference/pool.py``).

* the geometry against the text's worked sizes (onnx's node tests' shapes) and hand-computed
  ones; the oracles against an explicit loop kernel written here from the text (its own
  output-size arithmetic, a window walk per output element, float64 and ``fractions``);
* the spec's examples: onnx's node tests of every pooling operator;
* agreement with ``onnx.reference`` on every generated case, each disagreement explained;
* numpy loop kernels through ``KernelBackend``: legitimate ones (float32 accumulation of the
  16-bit types in sequential, reverse and pairwise order, a mean by reciprocal, float64; NaN
  propagated or ignored; the first or the last of tied maxima as Indices) pass every case; the
  deliberately wrong ones fail cases they target: SAME_UPPER and SAME_LOWER swapped, dilations
  ignored, ceil_mode ignored, AveragePool dividing by the full window in the ceil_mode overhang
  with count_include_pad=0, Indices ignoring storage_order, Indices without the batch/channel
  offset, LpPool ignoring p, float16 accumulation;
* coverage: every type combination of every version, the trap patterns present.
"""

from __future__ import annotations

import itertools
import math
from collections import Counter
from fractions import Fraction

import ml_dtypes
import numpy as np
import onnx
import pytest

from conformance.backends import resolve_backend
from conformance.backends.kernel import KernelBackend
from conformance.coverage import compute_coverage
from conformance.ops import pool
from conformance.reference import pool as ref
from conformance.runner import run_cases
from oracle_checks import single_node_tests, sort_findings  # tests/oracle_checks.py

pytestmark = pytest.mark.filterwarnings("ignore::RuntimeWarning")
OPS = ["MaxPool", "AveragePool", "LpPool", "GlobalAveragePool", "GlobalMaxPool", "GlobalLpPool", "MaxUnpool", "RoiAlign",
       "MaxRoiPool", "NhwcMaxPool"]
E = {e.op: e for e in pool.ENTRIES}
BF16 = np.dtype(ml_dtypes.bfloat16)
WINDOWED = ("MaxPool", "AveragePool", "LpPool")


# ============================================================================ an independent loop kernel
def _geometry(spatial, a, flaw=None, drop=True):
    """Output size and pads written from the operator text (not from the reference module);
    ``drop``: the rule of MaxPool-22/AveragePool-22 that drops a ceil_mode window starting in the
    right padding."""
    n = len(spatial)
    k = list(a["kernel_shape"])
    s = list(a.get("strides") or [1] * n)
    d = list(a.get("dilations") or [1] * n)
    if flaw == "no-dilations":
        d = [1] * n
    ap = a.get("auto_pad", "NOTSET") or "NOTSET"
    if ap != "NOTSET" and "pads" in a:
        raise ValueError("auto_pad cannot be used with pads")
    if flaw == "same-swapped":
        ap = {"SAME_UPPER": "SAME_LOWER", "SAME_LOWER": "SAME_UPPER"}.get(ap, ap)
    ceil = bool(a.get("ceil_mode", 0)) and flaw != "no-ceil"
    pads = list(a.get("pads") or [0] * (2 * n))
    if len(k) != n or len(s) != n or len(d) != n or len(pads) != 2 * n or min(pads) < 0:
        raise ValueError("bad pooling attributes")
    ext = [(kk - 1) * dd + 1 for kk, dd in zip(k, d)]
    if ap in ("SAME_UPPER", "SAME_LOWER"):
        out = [math.ceil(D / ss) for D, ss in zip(spatial, s)]
        b, e = [], []
        for D, o, ss, x in zip(spatial, out, s, ext):
            tot = max(0, (o - 1) * ss + x - D)
            lo, hi = tot // 2, tot - tot // 2
            b.append(lo if ap == "SAME_UPPER" else hi)
            e.append(hi if ap == "SAME_UPPER" else lo)
    elif ap == "VALID":
        b, e = [0] * n, [0] * n
        out = [(D - x) // ss + 1 for D, x, ss in zip(spatial, ext, s)]
    else:
        b, e = pads[:n], pads[n:]
        out = []
        for D, bb, ee, x, ss in zip(spatial, b, e, ext, s):
            q = Fraction(D + bb + ee - x, ss)
            o = (math.ceil(q) if ceil else math.floor(q)) + 1
            if drop and ceil and (o - 1) * ss >= D + bb:  # "windows that would start in the right padded region"
                o -= 1
            out.append(o)
    if min(out) < 1:
        raise ValueError("kernel larger than the padded input")
    return out, b, e, k, s, d


def _walk(spatial, a, flaw=None, drop=True):
    """Per output position (tuple): [(position tuple, 'in' | 'pad' | 'over')] in window order."""
    out, b, e, k, s, d = _geometry(spatial, a, flaw, drop)
    res = {}
    for o in itertools.product(*[range(q) for q in out]):
        cells = []
        for j in itertools.product(*[range(q) for q in k]):
            p = tuple(o[i] * s[i] - b[i] + j[i] * d[i] for i in range(len(spatial)))
            if all(0 <= p[i] < spatial[i] for i in range(len(p))):
                cells.append((p, "in"))
            elif all(-b[i] <= p[i] < spatial[i] + e[i] for i in range(len(p))):
                cells.append((p, "pad"))
            else:
                cells.append((p, "over"))
        res[o] = cells
    return out, res


def _acc_dtype(dt, mode):
    if mode == "float64" or dt == np.float64:
        return np.float64
    if mode == "f16-acc" and dt == np.float16:
        return np.float16
    return np.float32


def _sum(vals, acc, order):
    """Sum a list of [N, C] arrays in the accumulation dtype in the given order."""
    if not vals:
        return np.zeros((), dtype=acc)
    if order == "pairwise":
        return np.sum(np.stack([v.astype(acc) for v in vals]), axis=0, dtype=acc)
    seq = vals[::-1] if order == "reverse" else vals
    t = seq[0].astype(acc)
    for v in seq[1:]:
        t = (t + v.astype(acc)).astype(acc)
    return t


def pool_kernel(op, mode="float32", order="forward", nan="propagate", ties="first", flaw=None):
    """A pooling kernel (MaxPool / AveragePool / LpPool / Global*) walking every window.

    ``mode``: accumulation ``float32`` (16-bit types and float; double in double) or
    ``float64``; ``order``: forward, reverse, pairwise, ``reverse-reciprocal`` (reverse sum
    times ``fl(1/count)``); ``nan``: ``propagate`` or ``ignore`` (max pooling); ``ties``: the
    ``first`` or ``last`` maximum's index.  ``flaw``: a deliberate error (module docstring)."""

    def kernel(inputs, attrs, outputs, opset):
        x = inputs["X"]
        dt = x.dtype
        spatial = x.shape[2:]
        a = dict(attrs)
        if op.startswith("Global"):
            a = {"kernel_shape": list(spatial), "p": attrs.get("p", 2)}
        if (op == "MaxPool" and opset < 8 and "storage_order" in a) or \
                ("ceil_mode" in a and opset < {"MaxPool": 10, "AveragePool": 10, "LpPool": 18}.get(op, 0)) or \
                ("dilations" in a and opset < {"MaxPool": 10, "AveragePool": 19, "LpPool": 18}.get(op, 0)) or \
                (op == "AveragePool" and opset < 7 and "count_include_pad" in a):
            raise ValueError("attribute unknown to this version")
        out, walk = _walk(spatial, a, flaw, drop=op in ("MaxPool", "AveragePool") and opset >= 22)
        n, c = x.shape[:2]
        plane = int(np.prod(spatial))
        is_float = dt.kind == "f" or dt == BF16
        kind = op.replace("Global", "")
        if kind == "MaxPool":
            y = np.zeros((n, c) + tuple(out), dtype=dt)
            ind = np.zeros((n, c) + tuple(out), dtype=np.int64)
            so = int(a.get("storage_order", 0) or 0) if flaw != "indices-row-major" else 0
            for o, cells in walk.items():
                pos = [p for p, w in cells if w == "in"]
                if not pos:  # a window without input elements (before 22): the lowest value
                    y[(slice(None), slice(None)) + o] = np.array(-np.inf if is_float else np.iinfo(dt).min).astype(dt)
                    continue
                st = np.stack([x[(slice(None), slice(None)) + p].astype(np.float64 if is_float else np.int64)
                               for p in pos])
                if is_float:
                    m = np.max(st, axis=0) if nan == "propagate" else np.fmax.reduce(st, axis=0)
                    hit = (st == m) | (np.isnan(st) & np.isnan(m))
                else:
                    m = np.max(st, axis=0)
                    hit = st == m
                idx = np.argmax(hit, axis=0) if ties == "first" else len(pos) - 1 - np.argmax(hit[::-1], axis=0)
                for ni in range(n):
                    for ci in range(c):
                        p = pos[idx[ni, ci]]
                        sp = list(spatial)
                        flat, mul = 0, 1
                        for i in (range(len(sp)) if so else reversed(range(len(sp)))):
                            flat += p[i] * mul
                            mul *= sp[i]
                        off = 0 if flaw == "indices-no-offset" else (ni * c + ci) * plane
                        ind[(ni, ci) + o] = off + flat
                y[(slice(None), slice(None)) + o] = m.astype(dt)
            res = {"Y": y, "Indices": ind}
            return {k: res[k] for k in outputs}
        acc = _acc_dtype(dt, mode if flaw != "f16-acc" else "f16-acc")
        y = np.zeros((n, c) + tuple(out), dtype=dt)
        p = float(a.get("p", 2)) if flaw != "p-ignored" else 2.0
        cip = int(a.get("count_include_pad", 0) or 0)
        for o, cells in walk.items():
            vals = [x[(slice(None), slice(None)) + q] for q, w in cells if w == "in"]
            with np.errstate(all="ignore"):
                if kind == "AveragePool":
                    s = _sum(vals, acc, "reverse" if order == "reverse-reciprocal" else order)
                    cnt = sum(1 for _, w in cells if w == "in" or (cip and w == "pad"))
                    if flaw == "overhang-full" and any(w == "over" for _, w in cells):
                        cnt = len(cells)
                    r = s * acc(np.float64(1.0) / cnt) if order == "reverse-reciprocal" else s / acc(cnt)
                else:  # LpPool
                    pw = [np.abs(v.astype(acc)) ** acc(p) for v in vals]
                    s = _sum(pw, acc, order if order != "reverse-reciprocal" else "reverse")
                    r = s ** acc(1.0 / p)
            y[(slice(None), slice(None)) + o] = np.asarray(r).astype(dt)
        return {"Y": y}

    return kernel


def unpool_kernel(flaw=None):
    """MaxUnpool: a zero tensor of output_shape (or the inferred one) with X written at I;
    ``flaw`` ``output_shape-ignored`` always infers the shape."""

    def kernel(inputs, attrs, outputs, opset):
        x, ind = inputs["X"], inputs["I"]
        if ind.shape != x.shape or len(attrs["kernel_shape"]) != x.ndim - 2:
            raise ValueError("I must have X's shape; kernel_shape one value per axis")
        n = x.ndim - 2
        k, s = attrs["kernel_shape"], attrs.get("strides", [1] * n)
        p = attrs.get("pads", [0] * 2 * n)
        shape = list(x.shape[:2]) + [(x.shape[2 + i] - 1) * s[i] + k[i] - p[i] - p[n + i] for i in range(n)]
        if inputs.get("output_shape") is not None and flaw != "output_shape-ignored":
            shape = [int(v) for v in inputs["output_shape"]]
        out = np.zeros(int(np.prod(shape)), dtype=x.dtype)
        for v, i in zip(x.ravel(), ind.ravel()):
            if flaw is None or 0 <= int(i) < out.size:  # the flawed kernel drops what does not fit
                out[int(i)] = v
        return {outputs[0]: out.reshape(shape)}

    return kernel


def roi_align_kernel(acc_t=np.float32, reading="corners", flaw=None):
    """RoiAlign written from Detectron's RoIAlign with every coordinate, weight and sum in
    ``acc``; ``reading``: ``max`` as the text (max of interpolated samples) or as onnx and
    onnxruntime (max of weighted corners); ``flaw`` ``no-half-pixel``: the -0.5 shift never
    applied."""

    def kernel(inputs, attrs, outputs, opset):
        x, rois, bi = inputs["X"], inputs["rois"], inputs["batch_indices"]
        acc = np.float64 if x.dtype == np.float64 else acc_t
        if x.ndim != 4 or rois.ndim != 2 or rois.shape[1] != 4 or bi.shape != (rois.shape[0],):
            raise ValueError("RoiAlign shapes")
        mode = attrs.get("mode", "avg")
        ctm = attrs.get("coordinate_transformation_mode", "half_pixel" if opset >= 16 else "output_half_pixel")
        if mode not in ("avg", "max") or ctm not in ("half_pixel", "output_half_pixel"):
            raise ValueError("RoiAlign attribute value")
        hp = ctm == "half_pixel" and flaw != "no-half-pixel"
        oh, ow = attrs.get("output_height", 1), attrs.get("output_width", 1)
        sr, scale = attrs.get("sampling_ratio", 0), acc(attrs.get("spatial_scale", 1.0))
        n, c, h, w = x.shape
        xf = x.astype(acc)
        y = np.zeros((rois.shape[0], c, oh, ow), dtype=acc)
        one, half = acc(1), acc(0.5 if hp else 0.0)
        for r in range(rois.shape[0]):
            x1, y1, x2, y2 = (acc(v) * scale - half for v in rois[r].astype(acc))
            rw, rh = x2 - x1, y2 - y1
            if not hp:
                rw, rh = max(rw, one), max(rh, one)
            bh, bw = rh / acc(oh), rw / acc(ow)
            gh = sr if sr > 0 else int(np.ceil(rh / acc(oh)))
            gw = sr if sr > 0 else int(np.ceil(rw / acc(ow)))
            img = xf[int(bi[r])]
            for ph in range(oh):
                for pw in range(ow):
                    vals = []
                    for iy in range(gh):
                        yy = y1 + acc(ph) * bh + (acc(iy) + acc(0.5)) * bh / acc(gh)
                        for ix in range(gw):
                            xx = x1 + acc(pw) * bw + (acc(ix) + acc(0.5)) * bw / acc(gw)
                            if yy < -1 or yy > h or xx < -1 or xx > w:
                                vals.append(np.zeros(c, dtype=acc))
                                continue
                            yv, xv = max(yy, acc(0)), max(xx, acc(0))
                            y0, x0 = min(int(yv), h - 1), min(int(xv), w - 1)
                            yv = acc(y0) if y0 == h - 1 else yv
                            xv = acc(x0) if x0 == w - 1 else xv
                            y1_, x1_ = min(y0 + 1, h - 1), min(x0 + 1, w - 1)
                            ly, lx = yv - acc(y0), xv - acc(x0)
                            terms = [(one - ly) * (one - lx) * img[:, y0, x0], (one - ly) * lx * img[:, y0, x1_],
                                     ly * (one - lx) * img[:, y1_, x0], ly * lx * img[:, y1_, x1_]]
                            if mode == "max" and reading == "corners":
                                vals.append(np.max(np.stack(terms), axis=0))
                            else:
                                vals.append(terms[0] + terms[1] + terms[2] + terms[3])
                    if vals:
                        st = np.stack(vals)
                        y[r, :, ph, pw] = np.max(st, axis=0) if mode == "max" else np.sum(st, axis=0) / acc(max(gh * gw, 1))
        return {outputs[0]: y.astype(x.dtype)}

    return kernel


def max_roi_pool_kernel():
    """MaxRoiPool as Caffe's ROIPooling computes it (float32 bin limits, std::round)."""

    def kernel(inputs, attrs, outputs, opset):
        x, rois = inputs["X"], inputs["rois"]
        ph_n, pw_n = attrs["pooled_shape"]
        if x.ndim != 4 or rois.ndim != 2 or rois.shape[1] != 5 or len(attrs["pooled_shape"]) != 2:
            raise ValueError("MaxRoiPool shapes")
        scale = np.float32(attrs.get("spatial_scale", 1.0))
        n, c, h, w = x.shape
        y = np.zeros((rois.shape[0], c, ph_n, pw_n), dtype=x.dtype)
        for r in range(rois.shape[0]):
            b = int(rois[r, 0])
            sw, sh, ew, eh = (int(np.sign(v) * np.floor(abs(v) + 0.5)) for v in
                              (np.float32(rois[r, i]) * scale for i in range(1, 5)))
            rh, rw = max(eh - sh + 1, 1), max(ew - sw + 1, 1)
            bh, bw = np.float32(rh) / np.float32(ph_n), np.float32(rw) / np.float32(pw_n)
            for ph in range(ph_n):
                h0 = min(max(int(np.floor(np.float32(ph) * bh)) + sh, 0), h)
                h1 = min(max(int(np.ceil(np.float32(ph + 1) * bh)) + sh, 0), h)
                for pw in range(pw_n):
                    w0 = min(max(int(np.floor(np.float32(pw) * bw)) + sw, 0), w)
                    w1 = min(max(int(np.ceil(np.float32(pw + 1) * bw)) + sw, 0), w)
                    if h1 > h0 and w1 > w0:
                        y[r, :, ph, pw] = x[b, :, h0:h1, w0:w1].reshape(c, -1).max(axis=1)
        return {outputs[0]: y}

    return kernel


def nhwc_kernel(**kw):
    """com.microsoft NhwcMaxPool: the MaxPool kernel on the channels-first transpose."""
    inner = pool_kernel("MaxPool", **kw)

    def kernel(inputs, attrs, outputs, opset):
        y = inner({"X": np.moveaxis(inputs["x"], -1, 1)}, attrs, ["Y"], 22)["Y"]
        return {outputs[0]: np.ascontiguousarray(np.moveaxis(y, 1, -1))}

    return kernel


def _backend(kernels, name, check=True):
    return KernelBackend(kernels, name=name, check=check)


def _kernels(**kw):
    reading = "text" if kw.get("ties") == "last" else "corners"
    acc = np.float64 if kw.get("mode") == "float64" else np.float32
    return {**{op: pool_kernel(op, **kw) for op in OPS if op not in ("MaxUnpool", "RoiAlign", "MaxRoiPool",
                                                                     "NhwcMaxPool")},
            "NhwcMaxPool": nhwc_kernel(**kw),
            "MaxUnpool": unpool_kernel(), "RoiAlign": roi_align_kernel(acc, reading),
            "MaxRoiPool": max_roi_pool_kernel()}


def _x(case):
    ds = case.datasets[0].inputs
    return next((ds[i.name] if i.name in ds else i.value) for i in case.inputs if i.name == "X")


# ============================================================================ geometry and oracles
@pytest.mark.parametrize("spatial,attrs,want", [
    # onnx node tests: maxpool_2d_ceil (4x4, k3 s2 ceil -> 2x2), maxpool_2d_same_upper / lower
    ((4, 4), {"kernel_shape": [3, 3], "strides": [2, 2], "ceil_mode": 1}, ([2, 2], [0, 0], [0, 0])),
    ((5, 5), {"kernel_shape": [2, 2], "auto_pad": "SAME_UPPER"}, ([5, 5], [0, 0], [1, 1])),
    ((5, 5), {"kernel_shape": [2, 2], "auto_pad": "SAME_LOWER"}, ([5, 5], [1, 1], [0, 0])),
    # the padding of the dilated kernel: k2 d3 -> extent 4, total 3 (UPPER 1/2, LOWER 2/1)
    ((5,), {"kernel_shape": [2], "dilations": [3], "auto_pad": "SAME_UPPER"}, ([5], [1], [2])),
    ((5,), {"kernel_shape": [2], "dilations": [3], "auto_pad": "SAME_LOWER"}, ([5], [2], [1])),
    ((6,), {"kernel_shape": [3], "strides": [2], "auto_pad": "SAME_LOWER"}, ([3], [1], [0])),
    ((7,), {"kernel_shape": [2], "strides": [2], "auto_pad": "VALID"}, ([3], [0], [0])),
    ((7,), {"kernel_shape": [2], "strides": [2], "auto_pad": "VALID", "ceil_mode": 1}, ([3], [0], [0])),
    # ceil: 4 windows, the 4th would start in the right padding (6 >= 5 + 1): 3
    ((5,), {"kernel_shape": [2], "strides": [2], "pads": [1, 1], "ceil_mode": 1}, ([3], [1], [1])),
    ((6,), {"kernel_shape": [3], "strides": [2], "pads": [1, 1], "ceil_mode": 1}, ([4], [1], [1])),
    ((6,), {"kernel_shape": [3], "strides": [2], "pads": [1, 1]}, ([3], [1], [1])),
    ((2, 2), {"kernel_shape": [3, 3], "pads": [1, 1, 1, 1]}, ([2, 2], [1, 1], [1, 1])),
])
def test_geometry_worked_sizes(spatial, attrs, want):
    got = ref.geometry(spatial, attrs["kernel_shape"], attrs.get("strides"), attrs.get("pads"),
                       attrs.get("dilations"), attrs.get("auto_pad", "NOTSET"), attrs.get("ceil_mode", 0))
    assert got == (list(want[0]), list(want[1]), list(want[2]))
    assert _geometry(spatial, attrs)[:3] == got


@pytest.mark.parametrize("spatial,attrs", [
    ((3, 3), {"kernel_shape": [5, 5]}), ((4,), {"kernel_shape": [2], "pads": [-1, 0]}),
    ((4,), {"kernel_shape": [2], "pads": [1]}), ((4,), {"kernel_shape": [2], "dilations": [6]}),
])
def test_geometry_rejects_invalid(spatial, attrs):
    with pytest.raises(ValueError):
        ref.geometry(spatial, attrs["kernel_shape"], None, attrs.get("pads"), attrs.get("dilations"))


CONFIGS = [
    {"kernel_shape": [3]},
    {"kernel_shape": [2, 2], "strides": [2, 2]},
    {"kernel_shape": [3, 3], "pads": [1, 1, 1, 1]},
    {"kernel_shape": [3, 2], "pads": [2, 1, 1, 0], "count_include_pad": 1},
    {"kernel_shape": [2, 4], "auto_pad": "SAME_UPPER"},
    {"kernel_shape": [2, 4], "auto_pad": "SAME_LOWER", "count_include_pad": 1},
    {"kernel_shape": [3, 3], "strides": [2, 2], "ceil_mode": 1},
    {"kernel_shape": [3, 3], "strides": [2, 2], "pads": [1, 1, 1, 1], "ceil_mode": 1},
    {"kernel_shape": [2, 2], "dilations": [3, 2], "auto_pad": "SAME_LOWER"},
    {"kernel_shape": [2, 2], "strides": [2, 3], "dilations": [2, 2], "ceil_mode": 1},
    {"kernel_shape": [2, 2, 2], "strides": [1, 2, 1], "storage_order": 1},
    {"kernel_shape": [2, 3], "storage_order": 1, "pads": [1, 0, 0, 1]},
]


def _shape_for(attrs):
    return (2, 3) + ((7,) if len(attrs["kernel_shape"]) == 1 else (6, 7) if len(attrs["kernel_shape"]) == 2
                     else (3, 4, 5))


@pytest.mark.parametrize("attrs", CONFIGS)
def test_oracles_match_the_loop_walk(attrs):
    rng = np.random.default_rng(7)
    shape = _shape_for(attrs)
    x = rng.permutation(np.arange(np.prod(shape), dtype=np.float64)).reshape(shape) / 8 - 20
    out, walk = _walk(shape[2:], attrs)
    y, ind = ref.max_pool(x, attrs)
    avg = ref.average_pool(x, attrs)
    lp = ref.lp_pool(x, {**attrs, "p": 3})
    cip = attrs.get("count_include_pad", 0)
    so = attrs.get("storage_order", 0)
    sp = shape[2:]
    for ni, ci in itertools.product(range(shape[0]), range(shape[1])):
        for o, cells in walk.items():
            pos = [p for p, w in cells if w == "in"]
            vals = [x[(ni, ci) + p] for p in pos]
            m = max(vals)
            assert y[(ni, ci) + o] == m
            p = pos[vals.index(m)]
            strides_ = [int(np.prod(sp[i + 1:])) for i in range(len(sp))] if not so else \
                [int(np.prod(sp[:i])) for i in range(len(sp))]
            assert ind[(ni, ci) + o] == (ni * shape[1] + ci) * int(np.prod(sp)) + sum(a * b for a, b in zip(p, strides_))
            cnt = sum(1 for _, w in cells if w == "in" or (cip and w == "pad"))
            assert avg[(ni, ci) + o] == float(sum(Fraction(v) for v in vals) / cnt)
            want = float(sum(Fraction(abs(v)) ** 3 for v in vals)) ** (1 / 3)
            assert lp[(ni, ci) + o] == pytest.approx(want, rel=1e-14)
    assert list(y.shape[2:]) == out


def test_special_values_follow_the_formulas():
    nan, inf = math.nan, math.inf
    x = np.array([[[1.0, nan, 2.0, inf, -inf, 3.0, -0.0, 0.0]]])
    y, ind = ref.max_pool(x, {"kernel_shape": [2], "strides": [2]})
    assert np.isnan(y[0, 0, 0]) and ind[0, 0, 0] == 1 and y[0, 0, 1] == inf and y[0, 0, 2] == 3.0
    y2, _ = ref.max_pool(x, {"kernel_shape": [2], "strides": [2]}, nan="ignore")
    assert y2[0, 0, 0] == 1.0
    avg = ref.average_pool(x, {"kernel_shape": [2], "strides": [2]})
    assert np.isnan(avg[0, 0, 0]) and avg[0, 0, 1] == inf and avg[0, 0, 2] == -inf and avg[0, 0, 3] == 0.0
    lp = ref.lp_pool(np.array([[[nan, inf, inf, 1.0, 3e300, 4e300]]]), {"kernel_shape": [2], "strides": [2], "p": 2})
    assert np.isnan(lp[0, 0, 0]) and lp[0, 0, 1] == inf and lp[0, 0, 2] == 5e300  # scaled: no overflow in float64
    g = ref.global_pool(np.array([[[[1.0, 2.0], [3.0, nan]]]]), "max")
    assert g.shape == (1, 1, 1, 1) and np.isnan(g).all()


def test_tolerance_bounds_are_the_accumulation_rule():
    x = np.ones((1, 1, 16, 16))
    atol, rtol = ref.mean_bound(x, {"kernel_shape": [16, 16]}, "float16")
    # gamma_257(2^-24) * 256 / 256 + 256 * 2^-149 + 2 * 2^-24 (float16 smallest subnormal)
    assert atol == pytest.approx(257 * 2**-24 / (1 - 257 * 2**-24) * (1 + 2**-11) + 256 * 2**-149 + 2 * 2**-24)
    assert rtol == pytest.approx(2.01 * 2**-11)
    a3, r3 = ref.lp_tolerance(np.array([2.0]), 4, 3.0, "float")
    assert a3 == pytest.approx((4 * 2**-149) ** (1 / 3) + 2 * 2**-149) and r3 > 16 * 2**-24


def test_max_pool_check_accepts_either_reading_and_rejects_wrong_outputs():
    x = np.array([[[[1.0, 5.0, 5.0], [math.nan, 2.0, 0.0]]]], dtype=np.float32)
    a = {"kernel_shape": [2, 2]}
    ok = np.array([[[[math.nan, 5.0]]]], dtype=np.float32)
    assert ref.check_max_pool({"X": x}, {"Y": ok}, a)[0]  # NaN propagated
    assert ref.check_max_pool({"X": x}, {"Y": np.array([[[[5.0, 5.0]]]], dtype=np.float32)}, a)[0]  # ignored
    assert not ref.check_max_pool({"X": x}, {"Y": np.array([[[[2.0, 5.0]]]], dtype=np.float32)}, a)[0]
    assert not ref.check_max_pool({"X": x}, {"Y": ok.astype(np.float64)}, a)[0]  # dtype
    y = np.array([[[[5.0, 5.0]]]], dtype=np.float32)
    for first, second in ((1, 1), (1, 2)):  # either tied 5 of the second window (flat 1 and 2)
        assert ref.check_max_pool({"X": x}, {"Y": y, "Indices": np.array([[[[first, second]]]])}, a)[0]
    assert not ref.check_max_pool({"X": x}, {"Y": y, "Indices": np.array([[[[4, 2]]]])}, a)[0]  # 2.0, not 5
    assert not ref.check_max_pool({"X": x}, {"Y": y, "Indices": np.array([[[[1, 0]]]])}, a)[0]  # outside window
    col = {"kernel_shape": [2, 2], "storage_order": 1}  # column-major: x[0, 1] is flat 2, x[0, 2] is 4
    assert ref.check_max_pool({"X": x}, {"Y": y, "Indices": np.array([[[[2, 4]]]])}, col)[0]
    assert not ref.check_max_pool({"X": x}, {"Y": y, "Indices": np.array([[[[1, 2]]]])}, col)[0]


def test_roi_align_max_check_takes_either_reading_only():
    rng = np.random.default_rng(3)
    x = rng.uniform(0.5, 2, size=(1, 1, 5, 5)).astype(np.float32)
    rois = np.array([[0.3, 0.6, 3.7, 3.2]], dtype=np.float32)
    bi = np.array([0])
    a = {"mode": "max", "output_height": 2, "output_width": 2}
    text = ref.roi_align(x.astype(np.float64), rois.astype(np.float64), bi, a, True, "text").astype(np.float32)
    corners = ref.roi_align(x.astype(np.float64), rois.astype(np.float64), bi, a, True, "corners").astype(np.float32)
    assert not np.allclose(text, corners, rtol=1e-3)
    inputs = {"X": x, "rois": rois, "batch_indices": bi}
    assert ref.check_roi_align_max(inputs, {"Y": text}, a)[0]
    assert ref.check_roi_align_max(inputs, {"Y": corners}, a)[0]
    assert not ref.check_roi_align_max(inputs, {"Y": (text + corners) / 2}, a)[0]
    # version 10 has no pixel shift: the half_pixel values fail its check
    assert not ref.check_roi_align_max_v10(inputs, {"Y": text}, a)[0]


# ============================================================================ the spec's examples
#: node tests whose expected outputs were written by hand with 4 significant digits
ROUNDED_NODE_TESTS = {"test_averagepool_2d_ceil_last_window_starts_on_pad"}

def test_oracles_reproduce_the_node_tests():
    tests = single_node_tests(tuple(OPS), ("maxpool", "averagepool", "lppool", "globalaveragepool", "globalmaxpool",
                                           "maxunpool", "roialign"))
    assert len(tests) >= 40
    checked = Counter()
    for t in tests:
        node = t.model.graph.node[0]
        attrs = {a.name: onnx.helper.get_attribute_value(a) for a in node.attribute}
        attrs = {k: (v.decode() if isinstance(v, bytes) else v) for k, v in attrs.items()}
        for ins, outs in t.data_sets:
            x = ins[0].astype(np.float64)
            if node.op_type == "RoiAlign":
                opset = next(o.version for o in t.model.opset_import if o.domain in ("", "ai.onnx"))
                hp = attrs.get("coordinate_transformation_mode", "half_pixel" if opset >= 16 else "output") == "half_pixel"
                text = ref.roi_align(x, ins[1].astype(np.float64), ins[2], attrs, hp, "text")
                corners = ref.roi_align(x, ins[1].astype(np.float64), ins[2], attrs, hp, "corners")
                # the expectations are printed to 4 digits
                assert np.allclose(corners, outs[0], rtol=1e-3, atol=1e-4), t.name
                if attrs.get("mode") == "max":  # onnx#4764: the node test encodes the corners reading
                    assert not np.allclose(text, outs[0], rtol=1e-3, atol=1e-3), t.name
                    checked["RoiAlign-max-corners"] += 1
                checked[node.op_type] += 1
                continue
            if node.op_type == "MaxUnpool":
                got = [ref.max_unpool(x, ins[1], attrs, ins[2] if len(ins) > 2 else None)]
                if t.name == "test_maxunpool_export_with_output_shape":
                    # onnx scatters I into the inferred 4x4 and pads to 5x5: I is read as indices of
                    # the 4x4, where the text reads them as indices of the 5x5 output (module docstring
                    # of the reference disagreements: ref-unpool-output-shape)
                    assert not np.array_equal(got[0], outs[0])
                    inferred = ref.max_unpool(x, ins[1], attrs)
                    want = np.zeros(got[0].shape)
                    want[tuple(slice(0, d) for d in inferred.shape)] = inferred
                    assert np.array_equal(want, outs[0])
                    checked["MaxUnpool-output_shape"] += 1
                    continue
            elif node.op_type == "MaxPool":
                y, ind = ref.max_pool(x, attrs)
                got = [y, ind][: len(outs)]
            elif node.op_type == "AveragePool":
                got = [ref.average_pool(x, attrs)]
            elif node.op_type == "LpPool":
                got = [ref.lp_pool(x, {"p": 2, **attrs})]
            else:
                got = [ref.global_pool(x, {"GlobalAveragePool": "avg", "GlobalMaxPool": "max"}[node.op_type])]
            for g, w in zip(got, outs):
                w = np.asarray(w)
                assert g.shape == w.shape, t.name
                if w.dtype == np.int64 or ins[0].dtype.kind in "iu":
                    assert np.array_equal(g.astype(w.dtype), w), t.name
                else:  # float32 expectations: within float32 rounding of the window sums (a hand-written
                    # expectation printed to 4 digits: within its rounding)
                    tol = (5e-5, 5e-4) if t.name in ROUNDED_NODE_TESTS else (1e-6, 3e-6)
                    assert np.allclose(g, w.astype(np.float64), rtol=tol[1], atol=tol[0], equal_nan=True), t.name
            checked[node.op_type] += 1
    assert set(checked) >= {"MaxPool", "AveragePool", "LpPool", "GlobalAveragePool", "GlobalMaxPool", "MaxUnpool",
                            "MaxUnpool-output_shape", "RoiAlign", "RoiAlign-max-corners"}, checked


# ============================================================================ kernels
LEGIT = [dict(mode="float32", order="forward"), dict(mode="float32", order="reverse-reciprocal"),
         dict(mode="float32", order="pairwise", nan="ignore", ties="last")]


@pytest.mark.parametrize("kw", LEGIT, ids=lambda kw: "-".join(kw.values()))
def test_legitimate_kernels_pass_everything(kw, suite):
    # a contested model that onnx's checker rejects (LpPool-22's text against onnx's shape
    # inference) is run without the checker: the kernel follows the text
    plain = [c for c in suite if not c.contested]
    contested = [c for c in suite if c.contested]
    results = run_cases(plain, _backend(_kernels(**kw), "-".join(kw.values())))
    results += run_cases(contested, _backend(_kernels(**kw), "-".join(kw.values()), check=False))
    bad = [(c.id, r.outcome, r.message[:200]) for c, r in zip(plain + contested, results) if r.outcome != "pass"]
    assert not bad, bad[:5]
    assert any(c.op == "LpPool" for c in contested) and any(c.op == "RoiAlign" for c in contested)


WRONG = {  # flaw -> (operators, the shape patterns its fails must include)
    "same-swapped": (WINDOWED + ("NhwcMaxPool",), ("same-upper", "same-lower")),
    "no-dilations": (WINDOWED + ("NhwcMaxPool",), ("dilations",)),
    "no-ceil": (WINDOWED, ("ceil",)),
    "overhang-full": (("AveragePool",), ("ceil/count_include_pad=0",)),
    "indices-row-major": (("MaxPool",), ("col-major",)),
    "indices-no-offset": (("MaxPool",), ("indices/",)),
    "p-ignored": (("LpPool", "GlobalLpPool"), ("p=",)),
    "f16-acc": (("AveragePool", "GlobalAveragePool"), ("long",)),
    "output_shape-ignored": (("MaxUnpool",), ("k2s2", "k2s3")),
    "no-half-pixel": (("RoiAlign",), ("avg/2x2/half_pixel", "avg/1x1")),
}


@pytest.mark.parametrize("flaw", sorted(WRONG))
def test_wrong_kernels_are_caught(flaw, value_cases):
    ops, patterns = WRONG[flaw]
    cases = [c for c in value_cases if c.op in ops]
    def make(op):
        if op == "MaxUnpool":
            return unpool_kernel(flaw)
        if op == "RoiAlign":
            return roi_align_kernel(flaw=flaw)
        if op == "NhwcMaxPool":
            return nhwc_kernel(flaw=flaw)
        return pool_kernel(op, flaw=flaw)

    results = run_cases(cases, _backend({op: make(op) for op in ops}, flaw, check=False))
    fails = [c for c, r in zip(cases, results) if r.outcome == "fail"]
    for op in ops:  # every operator the flaw applies to is caught
        mine = [c for c in fails if c.op == op]
        assert mine, (op, Counter(r.outcome for r in results))
    for pat in patterns:
        assert any(pat in c.tags["shape"] or pat in c.label for c in fails), (pat, Counter(c.tags["shape"] for c in fails))


def test_error_cases_rejected_by_the_legitimate_kernel(suite):
    errors = [c for c in suite if c.expect_error is not None]
    assert len(errors) >= 30
    results = run_cases(errors, _backend(_kernels(), "legit"))
    assert all(r.outcome == "pass" for r in results), [(c.id, r.message[:100]) for c, r in zip(errors, results)
                                                       if r.outcome != "pass"]
    tags = {c.tags["error"] for c in errors}
    assert tags >= {"negative-pads", "pads-length", "kernel-rank", "kernel>padded-input", "auto_pad+pads",
                    "dilated-kernel>input", "storage_order-v1", "ceil_mode-unknown", "dilations-unknown",
                    "count_include_pad-v1"}, tags


# ============================================================================ onnx.reference
def _reference_disagreement(case, res):
    """Why onnx.reference (onnx 1.20) disagrees with the oracle on ``case`` (None: unexplained).

    * ``ref-same-lower``: SAME_LOWER puts the odd padding at the end (as SAME_UPPER); the text:
      "the extra padding is added ... at the beginning for SAME_LOWER" (k3 s2 over 6:
      onnx.reference [3, 5, 6], the text [2, 4, 6]).
    * ``ref-same-dilations``: SAME_* with dilations: onnx.reference's AveragePool/LpPool pad the
      output with zeros and shift the windows (k2 d3 over 1..5: [2.5, 3.5, 3, 0, 0], the text
      [3, 2.5, 3.5, 3, 4]).
    * ``ref-indices``: MaxPool's Indices are not the flat index of the maximum (a 1x1x3x5
      ``arange`` pooled 2x2: Y 6 at index 3); every Indices case disagrees unless by chance.
    * ``ref-avgpool1-counts-pads``: AveragePool-1 divides by the whole kernel, pads included,
      where its text says "divided by the number of elements exclude pad".
    * ``ref-in-T``: AveragePool, LpPool and GlobalAveragePool are computed in T: float16 and
      bfloat16 windows summed in T (float16 ``|x|^2`` overflows to inf above 256), beyond the
      float32 accumulation the suite requires of the 16-bit types.
    * ``ref-lppool-overhang``: LpPool computes ``vol * mean`` of ``|x|^p`` over the window's
      input elements: a window with pads or in the ceil_mode overhang is scaled by
      ``vol / count`` (k2 s2 ceil over five ones, p=1: [2, 2, 2], the text [2, 2, 1]).
    * ``ref-lppool1-exponent``: LpPool-1 takes ``1/p`` of the float32 attribute in float32
      (relative error ~1e-8 in double).
    * ``ref-int-pads``: int8/uint8 MaxPool with pads fills the padding with NaN and fails.
    * ``ref-nan``: NaN in a MaxPool window: onnx.reference's ``x > y`` scan keeps a NaN only
      when it comes first (judged by either reading, but with SAME_LOWER windows wrong).
    * ``ref-global-shape``: GlobalMaxPool of a 1-D or 3-D input returns a wrong rank.
    * ``ref-global-empty``: GlobalAveragePool of a zero-size batch divides by zero.
    * ``ref-no-validation``: onnx.reference accepts the invalid models onnx's checker lets
      through (auto_pad with pads, attributes the version lacks).
    * ``ref-no-globallppool``: GlobalLpPool is not implemented.
    * ``ref-nan-as-pad``: the padding is NaN and windows are averaged with ``nanmean``, so a NaN
      of the input is dropped like padding (AveragePool, LpPool: a NaN window gives a number).
    * ``ref-ceil-dilations-count``: AveragePool with ceil_mode, dilations and count_include_pad=1
      divides by neither reading's count (a mean 6x too small over a 2x2 window).
    * ``ref-unpool-output-shape``: with ``output_shape`` given, MaxUnpool scatters I into the
      *inferred* shape and pads that to output_shape, instead of reading I as flat indices of
      the output (those of the MaxPool input that produced them, the text's "indices are in
      [0, N x C x D1 x ... x Dn)"): an index beyond the inferred size raises, others land in the
      wrong place.  onnx's node test ``maxunpool_export_with_output_shape`` encodes this reading
      (onnxruntime lists that test as failing; it follows the text).
    * ``ref-roialign10-half-pixel``: RoiAlign-10 is computed with the -0.5 pixel shift
      (``half_pixel``), which arrives as an option at 16; version 10 has no shift (the behaviour
      16 names ``output_half_pixel``, and onnxruntime's RoiAlign-10).
    * ``ref-no-maxroipool``: MaxRoiPool is not implemented.
    * ``ref-no-contrib``: com.microsoft operators (NhwcMaxPool) are not implemented.
    * ``ref-ceil-drop-before-22``: the ceil_mode window that starts in the right padding is
      dropped at every version, where the texts before MaxPool-22/AveragePool-22 (and onnx's
      own shape inference below opset 22) keep it (5 padded by 1, k2 s2 ceil: 3 windows, the
      text of 10-21: 4).
    """
    a = case.attributes
    op = case.op
    if case.domain == "com.microsoft":
        return "ref-no-contrib" if res.outcome == "unsupported" else None
    if op == "MaxRoiPool":
        return "ref-no-maxroipool" if res.outcome == "unsupported" else None
    if op == "RoiAlign":
        if case.expect_error:
            return "ref-no-validation"
        return "ref-roialign10-half-pixel" if case.since_version == 10 else None
    if op == "MaxUnpool":
        return "ref-unpool-output-shape" if "output_shape" in case.tags.get("optional_inputs", "") else None
    if op == "GlobalLpPool":
        return "ref-no-globallppool" if res.outcome == "unsupported" else None
    if case.expect_error:
        return "ref-no-validation" if case.tags["error"] in ("auto_pad+pads", "ceil_mode-unknown", "dilations-unknown",
                                                              "storage_order-v1", "count_include_pad-v1", "rois-shape",
                                                              "mode-value", "coordinate_transformation_mode-value") \
            else None
    msg = res.message or ""
    if op == "GlobalMaxPool" and "shape" in msg and case.tags["rank"] in (3, 5):
        return "ref-global-shape"
    if op == "GlobalAveragePool" and case.tags.get("zero_size") and "ZeroDivision" in msg:
        return "ref-global-empty"
    dt = case.tags["dtype"]
    if "start-in-pad" in case.tags["shape"] and case.since_version < 22 and ("shape" in msg or "!= expected" in msg):
        return "ref-ceil-drop-before-22"
    if "dilations" in a and any(v != 1 for v in a["dilations"]) and a.get("auto_pad", "NOTSET").startswith("SAME"):
        return "ref-same-dilations"
    if a.get("auto_pad") == "SAME_LOWER":
        return "ref-same-lower"
    if op == "MaxPool":
        if "Indices" in case.tags["outputs"] and "Indices" in msg:
            return "ref-indices"
        if dt in ("int8", "uint8") and "NaN" in msg:
            return "ref-int-pads"
        if "NaN in window: True" in msg or np.isnan(np.asarray(_x(case), dtype=np.float64)).any():
            return "ref-nan"
        return None
    if op in ("AveragePool", "LpPool") and "NaN/Inf" in msg and np.isnan(np.asarray(_x(case), dtype=np.float64)).any():
        return "ref-nan-as-pad"
    if op == "AveragePool" and a.get("count_include_pad") and a.get("ceil_mode") and "dilations" in a:
        return "ref-ceil-dilations-count"
    if op == "AveragePool" and case.since_version == 1:
        return "ref-avgpool1-counts-pads"
    if op == "LpPool":
        if "pads" in a or a.get("ceil_mode") or a.get("auto_pad", "NOTSET").startswith("SAME"):
            return "ref-lppool-overhang"
        if case.since_version == 1 and dt == "double":
            return "ref-lppool1-exponent"
    if dt in ("float16", "bfloat16"):
        return "ref-in-T"
    return None


def test_agreement_with_onnx_reference(suite):
    results = run_cases(suite, resolve_backend("onnx-reference"))
    why, unexplained = sort_findings(suite, results, _reference_disagreement)
    assert not unexplained, unexplained[:5]
    assert {"ref-same-lower", "ref-same-dilations", "ref-indices", "ref-avgpool1-counts-pads", "ref-in-T",
            "ref-lppool-overhang", "ref-global-shape", "ref-no-globallppool"} <= set(why), why


# ============================================================================ coverage
def test_coverage_every_combination_of_every_version(suite):
    cov = compute_coverage(suite)
    for op in OPS:
        versions = cov["ops"].get(op, cov["ops"].get(f"com.microsoft:{op}"))["versions"]
        spec = {s.since_version for s in onnx.defs.get_all_schemas_with_history() if s.name == op and s.domain == ""}
        assert set(map(int, versions)) == (spec or {1}), op  # NhwcMaxPool: com.microsoft version 1
        for v, e in versions.items():
            assert not e["missing"], (op, v, e["missing"][:3])
    counts = Counter(c.op for c in suite)
    assert all(50 <= n <= 700 for n in counts.values()), counts


def test_trap_patterns_present(value_cases):
    def have(op, v, pat):
        return any(c.op == op and c.since_version == v and pat in c.tags["shape"] for c in value_cases)

    for v in (10, 11, 12, 22):
        for pat in ("2d/ceil", "ceil/start-in-pad", "dilations/same-upper", "dilations/same-lower", "kernel>input",
                    "indices/2d/col-major", "indices/3d/col-major", "indices/2d/row-major/pads", "zero-batch"):
            assert have("MaxPool", v, pat), (v, pat)
    for v in (10, 11, 19, 22):
        for pat in ("ceil/count_include_pad=0", "ceil/pads/count_include_pad=0", "ceil/pads/count_include_pad=1"):
            assert have("AveragePool", v, pat), (v, pat)
    for v in (19, 22):
        assert have("AveragePool", v, "dilations/same-lower")
    # int8/uint8 MaxPool with Indices requested
    assert {c.tags["dtype"] for c in value_cases if c.op == "MaxPool" and "Indices" in c.tags["outputs"]} >= \
        {"int8", "uint8", "float16", "bfloat16", "float", "double"}
    # LpPool p != 2 at every version
    for v in (1, 2, 11, 18, 22):
        assert any(c.op == "LpPool" and c.since_version == v and float(c.attributes.get("p", 2)) != 2.0
                   for c in value_cases), v
    # the contested overhang is judged by its check, tagged and counted
    contested = [c for c in value_cases if c.check == pool.CHECK_AVG_OVERHANG]
    assert contested and all(c.contested for c in contested)
