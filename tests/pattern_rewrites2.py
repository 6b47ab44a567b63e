"""Graph rewrites (right and deliberately wrong) for the second set of pattern families (conv
blocks, padding + pooling, layout, dtype boundaries and no-ops, upsampling, quantized forms,
attention and losses), applied by tests/pattern_rewrites.py's ``RewriteBackend`` at its ``opt``
level.

Each ``*_rewrite(...)`` returns ``fn(model) -> model or None`` (``None``: nothing matched).  The
right forms check the preconditions a correct optimizer must check; each ``wrong=`` flag skips
one, as issue 26 lists (a Conv+BatchNormalization fold that drops epsilon, a Pad+MaxPool fusion
folding a zero pad into the pooling, a quantized Resize rounding exact ties away from zero...).
Folded parameters are computed in float64 and stored in the graph's type (as an optimizer folds
initializers); fused kernels live in ``test.fused`` (:data:`FUSED_OPS2`).
"""

from __future__ import annotations

import numpy as np
import onnx
from onnx import helper, numpy_helper
from onnx.reference.op_run import OpRun

import pattern_rewrites as pr

DOMAIN = pr.DOMAIN


class BatchNormalization(OpRun):
    """ai.onnx BatchNormalization in inference (every version up to 15 with ``training_mode`` 0):
    ``(x - mean) / sqrt(var + epsilon) * scale + bias`` in the input's precision.  onnx.reference's
    own BatchNormalization_9 recomputes the statistics from the batch whenever ``momentum`` has a
    value -- and the evaluator fills in the schema's default 0.9 -- so every opset-9..13 graph
    gets training-mode statistics; BatchNormalization-9's text defines inference only ("the
    output Y only", the running statistics given as inputs)
    (tests/test_patterns_conv_blocks.py::test_onnx_reference_batchnorm9_uses_batch_statistics)."""

    op_domain = ""

    def _run(self, x, scale, bias, mean, var, epsilon=None, momentum=None, training_mode=None, spatial=None,
             is_test=None):
        sh = (1, -1) + (1,) * (x.ndim - 2)
        w = pr._work(x)
        eps = w(1e-5 if epsilon is None else epsilon)
        y = (x.astype(w) - mean.astype(w).reshape(sh)) / np.sqrt(var.astype(w).reshape(sh) + eps) * \
            scale.astype(w).reshape(sh) + bias.astype(w).reshape(sh)
        return (y.astype(x.dtype),)


class Pad(OpRun):
    """ai.onnx Pad (11+) with negative pads: the text allows them ("add or remove (if negative)");
    onnx.reference's own Pad raises ``index can't contain negative values``
    (tests/test_patterns_pad_pool.py::test_onnx_reference_pool_disagreements).  Crops the negative
    amounts, then pads the rest as numpy does (constant / reflect / edge / wrap)."""

    op_domain = ""

    def _run(self, data, pads, constant_value=None, axes=None, mode=None):
        r = data.ndim
        pads = [int(p) for p in pads]
        if axes is not None:
            ax = [int(a) % r for a in axes]
            full = [0] * (2 * r)
            for j, a in enumerate(ax):
                full[a], full[r + a] = pads[j], pads[len(ax) + j]
            pads = full
        sl = tuple(slice(max(0, -pads[i]), data.shape[i] - max(0, -pads[r + i])) for i in range(r))
        x = data[sl]
        width = [(max(0, pads[i]), max(0, pads[r + i])) for i in range(r)]
        mode = (mode.decode() if isinstance(mode, bytes) else mode) or "constant"
        if mode == "constant":
            v = 0 if constant_value is None else constant_value.reshape(-1)[0] if np.size(constant_value) else 0
            return (np.pad(x, width, mode="constant", constant_values=v).astype(data.dtype),)
        return (np.pad(x, width, mode={"edge": "edge", "reflect": "reflect", "wrap": "wrap"}[mode]),)


class Flatten(OpRun):
    """ai.onnx Flatten: ``(d_0 * ... * d_{axis-1}, d_axis * ... * d_{n-1})`` computed from the shape;
    onnx.reference's own Flatten reshapes to ``(d_0..., -1)``, which numpy refuses for a zero-size
    input (``cannot reshape array of size 0 into shape (0,newaxis)``), while the text's output
    shape is defined (tests/test_patterns_layout.py::test_onnx_reference_flatten_zero_batch)."""

    op_domain = ""

    def _run(self, x, axis=None):
        a = 1 if axis is None else int(axis) % (x.ndim + 1) if x.ndim else 0
        return (x.reshape(int(np.prod(x.shape[:a])), int(np.prod(x.shape[a:]))),)


from onnx.reference.ops.op_conv_transpose import ConvTranspose as _RefConvTranspose  # noqa: E402


class ConvTranspose(_RefConvTranspose):
    """ai.onnx ConvTranspose: onnx.reference's own, except for an empty batch, where its loop over
    the images never sets the result and it raises ``TypeError: Issues with types``; the text's
    output shape is defined (N = 0).  Runs one zero image and keeps none of it
    (tests/test_patterns_conv_blocks.py::test_onnx_reference_conv_transpose_empty_batch)."""

    op_domain = ""

    def _run(self, X, W, B=None, **kw):
        if X.shape[0] == 0:
            (y,) = super()._run(np.zeros((1, *X.shape[1:]), dtype=X.dtype), W, B, **kw)
            return (y[:0],)
        return super()._run(X, W, B, **kw)


class PaddedPool(OpRun):
    """A fused pooling with explicit ``pads`` (begins then ends), ``kind`` ``max`` (padding -inf)
    or ``avg`` (``count_include_pad`` 0/1), ``kernel_shape`` and ``strides``: the kernel the
    Pad-into-pool fusion leaves.  onnx.reference's own MaxPool misplaces asymmetric pads (output
    [1, 1, 3, 7] for a [1, 1, 4, 5] input, kernel 3, pads [0, 1, 2, 2]; onnxruntime: [1, 1, 4, 6])
    and fails on 1-D MaxPool-22 with pads, so the fused node gets this kernel."""

    op_domain = DOMAIN

    def _run(self, x, kind=None, kernel_shape=None, strides=None, pads=None, count_include_pad=None):
        r = x.ndim - 2
        k = list(kernel_shape)
        st = list(strides or [1] * r)
        pads = list(pads or [0] * (2 * r))
        w = pr._work(x)
        xw = x.astype(w)
        fill = -np.inf if kind == "max" else 0.0
        width = [(0, 0), (0, 0)] + [(pads[i], pads[r + i]) for i in range(r)]
        xp = np.pad(xw, width, constant_values=fill)
        real = np.pad(np.ones(x.shape[2:], dtype=w), width[2:])
        outs = [(xp.shape[2 + i] - k[i]) // st[i] + 1 for i in range(r)]
        y = np.zeros(x.shape[:2] + tuple(outs), dtype=w)
        for pos in np.ndindex(*outs):
            sl = tuple(slice(pos[i] * st[i], pos[i] * st[i] + k[i]) for i in range(r))
            win = xp[(slice(None), slice(None)) + sl].reshape(x.shape[0], x.shape[1], int(np.prod(k)))
            idx = (slice(None), slice(None)) + pos
            if kind == "max":
                y[idx] = win.max(axis=-1) if win.size else 0
            else:
                y[idx] = win.sum(axis=-1, dtype=w) / (w(np.prod(k)) if count_include_pad else real[sl].sum(dtype=w))
        return (y.astype(x.dtype),)


FUSED_OPS2: list = [PaddedPool]


class RewriteBackend2(pr.RewriteBackend):
    """tests/pattern_rewrites.py's ``RewriteBackend`` with this module's kernels
    (:data:`FUSED_OPS2`) and the BatchNormalization fix above added to the evaluator."""

    def prepare_at_level(self, model, model_bytes, level, disabled=()):
        from onnx.reference import ReferenceEvaluator

        model, ops = self.rewritten(model, level, disabled)
        fixes = [BatchNormalization, Pad, Flatten, NegativeLogLikelihoodLoss, ConvTranspose]
        return ReferenceEvaluator(model, new_ops=pr.FUSED_OPS + fixes + FUSED_OPS2), ops


def _with(model: onnx.ModelProto, g: pr._Graph, remove: list, new: list, inits: dict) -> onnx.ModelProto:
    """``model`` with the nodes ``remove`` replaced by ``new`` (at the last removed node's place)
    and the initializers ``inits`` (name -> array) added."""
    m = onnx.ModelProto()
    m.CopyFrom(model)
    pos = max(g.nodes.index(r) for r in remove)
    keep = [(i, n) for i, n in enumerate(g.nodes) if all(n is not r for r in remove)]
    del m.graph.node[:]
    m.graph.node.extend([n for i, n in keep if i < pos] + list(new) + [n for i, n in keep if i > pos])
    for k, v in inits.items():
        m.graph.initializer.append(numpy_helper.from_array(v, k))
    if any(n.domain == DOMAIN for n in new) and not any(o.domain == DOMAIN for o in m.opset_import):
        m.opset_import.append(helper.make_opsetid(DOMAIN, 1))
    return m


def _producer(g: pr._Graph, name: str):
    return next((n for n in g.nodes if name in n.output), None)


def _init_names(model: onnx.ModelProto) -> set:
    return {t.name for t in model.graph.initializer} | {n.output[0] for n in model.graph.node
                                                         if n.op_type == "Constant"}


# ----------------------------------------------------------------------------- conv blocks
def conv_bn_fold(*, drop_epsilon: bool = False):
    """Folds ``BatchNormalization(Conv(X, W[, B]))`` into the Conv: ``W' = W * k``, ``B' = (B - mean) *
    k + bias``, ``k = scale / sqrt(var + epsilon)`` (epsilon default 1e-5), computed in float64 and
    stored in the graph's type.  Preconditions: the BN's parameters and the Conv's W/B are
    constants, the Conv output has no other consumer and is no graph output.  ``drop_epsilon``
    (wrong): ``k = scale / sqrt(var)``."""

    def rewrite(model):
        g = pr._Graph(model)
        consts = _init_names(model)
        for conv in g.nodes:
            if conv.op_type != "Conv":
                continue
            bn = g.only(conv.output[0], "BatchNormalization")
            if bn is None or not all(i in consts for i in list(conv.input[1:]) + list(bn.input[1:5])):
                continue
            w = g.consts[conv.input[1]]
            dt = w.dtype
            s, bias, mean, var = (g.consts[i].astype(np.float64) for i in bn.input[1:5])
            eps = float(np.float32(g.attr(bn, "epsilon", 1e-5)))
            k = s / np.sqrt(var + (0.0 if drop_epsilon else eps))
            b0 = g.consts[conv.input[2]].astype(np.float64) if len(conv.input) > 2 and conv.input[2] else 0.0
            w2 = (w.astype(np.float64) * k.reshape((-1,) + (1,) * (w.ndim - 1))).astype(dt)
            b2 = ((b0 - mean) * k + bias).astype(dt)
            tag = conv.output[0]
            new = onnx.NodeProto()
            new.CopyFrom(conv)
            del new.input[:]
            new.input.extend([conv.input[0], f"{tag}_Wfold", f"{tag}_Bfold"])
            del new.output[:]
            new.output.extend(bn.output[:1])
            return _with(model, g, [conv, bn], [new], {f"{tag}_Wfold": w2, f"{tag}_Bfold": b2})
        return None

    rewrite.rewrite_name = "ConvBNFusion"
    return rewrite


# ----------------------------------------------------------------------------- padding + pooling
def pad_pool_fusion(*, zero_into_max: bool = False, any_value_into_conv: bool = False):
    """Folds a constant-mode ``Pad`` of the spatial axes into the consuming pooling's ``pads``:
    into MaxPool only when the pad value is -inf (MaxPool's implicit padding), into AveragePool
    only when it is 0 and the pooling has no pads of its own or counts them
    (``count_include_pad=1``), setting ``count_include_pad=1``.  Preconditions: the Pad's pads
    and value are constants, non-negative, zero on the batch and channel axes.  A zero pad before
    a Conv goes into the Conv's own ``pads``.  Wrong flags: ``zero_into_max`` folds any constant
    pad value into MaxPool, ``any_value_into_conv`` any constant value into Conv."""

    def rewrite(model):
        g = pr._Graph(model)
        for pad in g.nodes:
            if pad.op_type != "Pad" or (g.attr(pad, "mode", b"constant") not in (b"constant", "constant")):
                continue
            pads = g.consts.get(pad.input[1]) if len(pad.input) > 1 else None
            if pads is None:
                continue
            if len(pad.input) > 3 and pad.input[3]:  # Pad-18 axes: expand to every axis
                axes, rank = g.consts.get(pad.input[3]), len(g.shapes.get(pad.input[0], ()))
                if axes is None or not rank:
                    continue
                full = [0] * (2 * rank)
                for j, a in enumerate(int(a) % rank for a in axes):
                    full[a], full[rank + a] = int(pads[j]), int(pads[len(axes) + j])
                pads = full
            value = 0.0
            if len(pad.input) > 2 and pad.input[2]:
                v = g.consts.get(pad.input[2])
                if v is None:
                    continue
                value = float(v)
            pool = g.only(pad.output[0], "MaxPool") or g.only(pad.output[0], "AveragePool") or \
                g.only(pad.output[0], "Conv")
            if pool is None or pool.input[0] != pad.output[0]:
                continue
            r = len(pads) // 2
            pads = [int(p) for p in pads]
            if pads[0] or pads[1] or pads[r] or pads[r + 1] or min(pads) < 0:
                continue
            if g.attr(pool, "auto_pad", b"NOTSET") not in (b"NOTSET", "NOTSET"):
                continue
            own = list(g.attr(pool, "pads", [0] * (2 * (r - 2))) or [0] * (2 * (r - 2)))
            cip = int(g.attr(pool, "count_include_pad", 0))
            if pool.op_type == "MaxPool":
                if not (value == -np.inf or zero_into_max):
                    continue
            elif pool.op_type == "Conv":
                if value != 0.0 and not any_value_into_conv:
                    continue
            else:
                if value != 0.0 or (any(own) and not cip):
                    continue
            sp = r - 2
            new_pads = [own[i] + pads[2 + i] for i in range(sp)] + [own[sp + i] + pads[r + 2 + i] for i in range(sp)]
            a = {at.name: helper.get_attribute_value(at) for at in pool.attribute}
            if a.get("dilations") and any(d != 1 for d in a["dilations"]) or a.get("ceil_mode"):
                continue
            if pool.op_type == "Conv":
                new = onnx.NodeProto()
                new.CopyFrom(pool)
                new.input[0] = pad.input[0]
                for at in list(new.attribute):
                    if at.name == "pads":
                        new.attribute.remove(at)
                new.attribute.append(helper.make_attribute("pads", new_pads))
                return _with(model, g, [pad, pool], [new], {})
            new = helper.make_node("PaddedPool", [pad.input[0]], list(pool.output), domain=DOMAIN,
                                   kind="max" if pool.op_type == "MaxPool" else "avg",
                                   kernel_shape=list(a["kernel_shape"]), strides=list(a.get("strides", [1] * sp)),
                                   pads=new_pads, count_include_pad=1)
            return _with(model, g, [pad, pool], [new], {})
        return None

    rewrite.rewrite_name = "PadFusion"
    return rewrite


# ----------------------------------------------------------------------------- layout
def transpose_pair(*, cancel_any: bool = False):
    """``Transpose(Transpose(X, p), q)`` with nothing between: removed when ``q o p`` is the identity,
    else one ``Transpose(X, p[q])``.  ``cancel_any`` (wrong): removes every such pair."""

    def rewrite(model):
        g = pr._Graph(model)
        for t1 in g.nodes:
            if t1.op_type != "Transpose":
                continue
            t2 = g.only(t1.output[0], "Transpose")
            if t2 is None:
                continue
            p, q = list(g.attr(t1, "perm", [])), list(g.attr(t2, "perm", []))
            if not p or not q:
                continue
            comp = [p[i] for i in q]
            if comp == list(range(len(p))) or cancel_any:
                new = helper.make_node("Identity", [t1.input[0]], list(t2.output))
            else:
                new = helper.make_node("Transpose", [t1.input[0]], list(t2.output), perm=comp)
            return _with(model, g, [t1, t2], [new], {})
        return None

    rewrite.rewrite_name = "TransposePairFusion"
    return rewrite


def reshape_pair(*, ignore_zero: bool = False, drop_allowzero: bool = False):
    """``Reshape(Reshape(X, s1), s2)`` with constant shapes: one ``Reshape(X, s2')`` where a 0 of
    ``s2`` (allowzero 0) is resolved against the intermediate shape (computed from X's shape and
    s1); the second Reshape's allowzero is kept.  Wrong flags: ``ignore_zero`` leaves the 0 in
    s2 (it then copies X's dimension), ``drop_allowzero`` does not copy allowzero=1."""

    def rewrite(model):
        g = pr._Graph(model)
        for r1 in g.nodes:
            if r1.op_type != "Reshape":
                continue
            r2 = g.only(r1.output[0], "Reshape")
            if r2 is None or r1.input[1] not in g.consts or r2.input[1] not in g.consts:
                continue
            xs = g.shapes.get(r1.input[0])
            if xs is None:
                continue
            s1 = [int(v) for v in g.consts[r1.input[1]]]
            s2 = [int(v) for v in g.consts[r2.input[1]]]
            z1, z2 = int(g.attr(r1, "allowzero", 0)), int(g.attr(r2, "allowzero", 0))
            mid = [xs[i] if (d == 0 and not z1) else d for i, d in enumerate(s1)]
            if -1 in mid:
                known = int(np.prod([d for d in mid if d != -1]))
                mid[mid.index(-1)] = int(np.prod(xs)) // known if known else 0
            if not ignore_zero:
                s2 = [mid[i] if (d == 0 and not z2) else d for i, d in enumerate(s2)]
            name = f"{r2.output[0]}_shape"
            attrs = {"allowzero": z2} if z2 and not drop_allowzero else {}
            new = helper.make_node("Reshape", [r1.input[0], name], list(r2.output), **attrs)
            return _with(model, g, [r1, r2], [new], {name: np.array(s2, dtype=np.int64)})
        return None

    rewrite.rewrite_name = "ReshapeFusion"
    return rewrite


# ----------------------------------------------------------------------------- dtype boundaries, no-ops
#: source ONNX type -> middle types holding every value of it exactly (FLOAT 1, FLOAT16 10, DOUBLE 11)
_EXACT_IN = {1: {1, 11}, 11: {11}, 10: {10, 1, 11}}


def cast_pair_removal(*, any_pair: bool = False):
    """``Cast(Cast(X, to=mid), to=T)`` with X of type T: replaced by ``Identity(X)`` when ``mid``
    holds every value of T exactly (float16 -> float / double, float -> double, the same type).
    ``any_pair`` (wrong): removes every pair back to T (a narrower float, an integer, bool)."""

    def rewrite(model):
        g = pr._Graph(model)
        types = {vi.name: vi.type.tensor_type.elem_type for vi in model.graph.input}
        for c1 in g.nodes:
            if c1.op_type != "Cast" or c1.input[0] not in types:
                continue
            c2 = g.only(c1.output[0], "Cast")
            t, mid = types[c1.input[0]], int(g.attr(c1, "to"))
            if c2 is None or int(g.attr(c2, "to")) != t:
                continue
            if mid in _EXACT_IN.get(t, {t}) or any_pair:
                return _with(model, g, [c1, c2], [helper.make_node("Identity", [c1.input[0]], list(c2.output))], {})
        return None

    rewrite.rewrite_name = "CastPairElimination"
    return rewrite


def noop_removal(*, ignore_broadcast: bool = False, ignore_order: bool = False):
    """Removes ``Add(x, 0)``, ``Sub(x, 0)``, ``Mul(x, 1)``, ``Div(x, 1)`` (and ``Add(0, x)``,
    ``Mul(1, x)``) with a constant neutral in every element whose shape does not broadcast x to a
    larger shape.  Wrong flags: ``ignore_broadcast`` removes it even then, ``ignore_order``
    removes ``Sub(0, x)`` / ``Div(1, x)`` too."""
    neutral = {"Add": 0.0, "Sub": 0.0, "Mul": 1.0, "Div": 1.0}

    def rewrite(model):
        g = pr._Graph(model)
        for n in g.nodes:
            if n.op_type not in neutral or n.output[0] in g.outputs:
                continue
            for ci, xi in ((1, 0), (0, 1)):
                c = g.consts.get(n.input[ci])
                if c is None or not np.all(c == neutral[n.op_type]):
                    continue
                if ci == 0 and n.op_type in ("Sub", "Div") and not ignore_order:
                    continue
                xs = g.shapes.get(n.input[xi])
                if xs is None:
                    continue
                if np.broadcast_shapes(xs, c.shape) != tuple(xs) and not ignore_broadcast:
                    continue
                return _with(model, g, [n], [helper.make_node("Identity", [n.input[xi]], list(n.output))], {})
        return None

    rewrite.rewrite_name = "NoopElimination"
    return rewrite


# ----------------------------------------------------------------------------- attention, losses
class NegativeLogLikelihoodLoss(OpRun):
    """ai.onnx NegativeLogLikelihoodLoss: onnx.reference's own, with unit class weights passed where
    ``ignore_index`` is set and no weight is given.  Its own code skips the weights exactly when
    ``ignore_index == -1`` (``elif ignore_index != -1``), so the mean then divides by every
    target, the ignored ones included, where the text divides by the kept ones
    (tests/test_patterns_attention.py::test_onnx_reference_nll_ignore_index_minus_one)."""

    op_domain = ""

    def _run(self, x, target, weight=None, ignore_index=None, reduction=None):
        from onnx.reference.ops.op_negative_log_likelihood_loss import _compute_negative_log_likelihood_loss

        if weight is None and ignore_index is not None:
            weight = np.ones(x.shape[1], dtype=x.dtype)
        red = reduction.decode() if isinstance(reduction, bytes) else (reduction or "mean")
        return _compute_negative_log_likelihood_loss(x, target, weight=weight, reduction=red,
                                                     ignore_index=ignore_index)


class SDPA(OpRun):
    """Fused attention ``Softmax(Q Kt * scale + mask, axis) V`` (float32 inside for float and 16-bit
    graphs), ``Kt`` already transposed; ``c`` the scale constant (multiplied, or divided by with
    ``div=1``; absent: 1); ``axis`` the Softmax axis the fusion read."""

    op_domain = DOMAIN

    def _run(self, Q, Kt, V, c=None, mask=None, div=None, axis=None):
        w = pr._work(Q)
        s = np.matmul(Q.astype(w), Kt.astype(w))
        if c is not None:
            s = s / c.astype(w) if div else s * c.astype(w)
        if mask is not None:
            s = s + mask.astype(w)
        s = s - np.max(s, axis=axis, keepdims=True) if s.size else s
        e = np.exp(s)
        p = e / np.sum(e, axis=axis, keepdims=True)
        return (np.matmul(p, V.astype(w)).astype(Q.dtype),)


class LogSoftmaxF(OpRun):
    """Fused ``LogSoftmax(x, axis)`` in float32 for float and 16-bit graphs."""

    op_domain = DOMAIN

    def _run(self, x, axis=None):
        w = pr._work(x)
        a = x.astype(w)
        m = np.max(a, axis=axis, keepdims=True) if a.size else a
        return ((a - m - np.log(np.sum(np.exp(a - m), axis=axis, keepdims=True))).astype(x.dtype),)


FUSED_OPS2 += [SDPA, LogSoftmaxF]


def attention_fusion(*, any_softmax_axis: bool = False):
    """``MatMul(Softmax(Add(Div|Mul(MatMul(Q, Kt), c), mask), axis), V)`` (scale and mask optional)
    -> ``SDPA(Q, Kt, V[, mask], scale)``.  Preconditions: the scale a constant scalar, the Softmax
    over the last axis, no intermediate used elsewhere.  ``any_softmax_axis`` (wrong): fuses
    whatever the Softmax axis (and normalizes over the last axis)."""

    def rewrite(model):
        g = pr._Graph(model)
        for sm in g.nodes:
            if sm.op_type != "Softmax":
                continue
            ax = int(g.attr(sm, "axis", -1))
            rank = 4
            if ax % rank != rank - 1 and not any_softmax_axis:
                continue
            out = g.only(sm.output[0], "MatMul")
            if out is None or out.input[0] != sm.output[0]:
                continue
            remove, cur, mask, scale, div = [sm, out], sm.input[0], None, "", 0
            node = _producer(g, cur)
            if node is not None and node.op_type == "Add" and g.only(cur, "Softmax") is sm:
                first = _producer(g, node.input[0])
                si = 0 if first is not None and first.op_type in ("Div", "Mul", "MatMul") else 1
                mask, cur = node.input[1 - si], node.input[si]
                remove.append(node)
                node = _producer(g, cur)
            if node is not None and node.op_type in ("Div", "Mul") and len(g.consumers(cur)) == 1:
                c = g.consts.get(node.input[1])
                if c is None or c.size != 1:
                    continue
                scale, div = node.input[1], int(node.op_type == "Div")
                remove.append(node)
                cur = node.input[0]
                node = _producer(g, cur)
            if node is None or node.op_type != "MatMul" or len(g.consumers(cur)) != 1:
                continue
            remove.append(node)
            ins = [node.input[0], node.input[1], out.input[1], scale] + ([mask] if mask else [])
            new = helper.make_node("SDPA", ins, list(out.output), domain=DOMAIN, div=div, axis=-1)
            return _with(model, g, remove, [new], {})
        return None

    rewrite.rewrite_name = "AttentionFusion"
    return rewrite


def log_softmax_fusion(*, drop_axis: bool = False):
    """``Log(Softmax(x, axis))`` -> a fused LogSoftmax over the same axis (the Softmax used only by
    the Log).  ``drop_axis`` (wrong): the fused node takes LogSoftmax-13's default axis -1."""

    def rewrite(model):
        g = pr._Graph(model)
        for sm in g.nodes:
            if sm.op_type != "Softmax":
                continue
            lg = g.only(sm.output[0], "Log")
            if lg is None:
                continue
            ax = -1 if drop_axis else int(g.attr(sm, "axis", -1))
            new = helper.make_node("LogSoftmaxF", [sm.input[0]], list(lg.output), domain=DOMAIN, axis=ax)
            return _with(model, g, [sm, lg], [new], {})
        return None

    rewrite.rewrite_name = "LogSoftmaxFusion"
    return rewrite


def gemm_bn_fold(*, drop_epsilon: bool = False):
    """Folds ``BatchNormalization(Gemm(X, W, C))`` on a rank-2 output into the Gemm (the features
    are the output columns: rows of W with ``transB=1``, columns without), as
    :func:`conv_bn_fold`; ``alpha``/``beta`` other than 1 and a missing C are not folded.
    ``drop_epsilon`` (wrong): ``k = scale / sqrt(var)``."""

    def rewrite(model):
        g = pr._Graph(model)
        consts = _init_names(model)
        for gm in g.nodes:
            if gm.op_type != "Gemm" or len(gm.input) < 3:
                continue
            bn = g.only(gm.output[0], "BatchNormalization")
            if bn is None or not all(i in consts for i in list(gm.input[1:]) + list(bn.input[1:5])):
                continue
            if float(g.attr(gm, "alpha", 1.0)) != 1.0 or float(g.attr(gm, "beta", 1.0)) != 1.0 or \
                    int(g.attr(gm, "transA", 0)):
                continue
            w, c0 = g.consts[gm.input[1]], g.consts[gm.input[2]]
            dt = w.dtype
            s, bias, mean, var = (g.consts[i].astype(np.float64) for i in bn.input[1:5])
            eps = float(np.float32(g.attr(bn, "epsilon", 1e-5)))
            k = s / np.sqrt(var + (0.0 if drop_epsilon else eps))
            tb = int(g.attr(gm, "transB", 0))
            w2 = (w.astype(np.float64) * (k[:, None] if tb else k[None, :])).astype(dt)
            c2 = ((np.broadcast_to(c0.astype(np.float64), k.shape) - mean) * k + bias).astype(dt)
            tag = gm.output[0]
            new = helper.make_node("Gemm", [gm.input[0], f"{tag}_Wfold", f"{tag}_Cfold"], list(bn.output[:1]),
                                   transB=tb)
            return _with(model, g, [gm, bn], [new], {f"{tag}_Wfold": w2, f"{tag}_Cfold": c2})
        return None

    rewrite.rewrite_name = "GemmBNFusion"
    return rewrite


def conv_transpose_bn_fold(*, conv_layout: bool = False):
    """Folds ``BatchNormalization(ConvTranspose(X, W[, B]))`` (group 1): W is ``[C, M, k...]``, so
    ``W'[:, j] = W[:, j] k[j]`` and ``B' = (B - mean) k + bias``.  ``conv_layout`` (wrong): scales
    W's axis 0 as a Conv fold does (with C = M: wrong values; else the fold is skipped, as a
    shape check would)."""

    def rewrite(model):
        g = pr._Graph(model)
        consts = _init_names(model)
        for ct in g.nodes:
            if ct.op_type != "ConvTranspose" or int(g.attr(ct, "group", 1)) != 1:
                continue
            bn = g.only(ct.output[0], "BatchNormalization")
            if bn is None or not all(i in consts for i in list(ct.input[1:]) + list(bn.input[1:5])):
                continue
            w = g.consts[ct.input[1]]
            dt = w.dtype
            s, bias, mean, var = (g.consts[i].astype(np.float64) for i in bn.input[1:5])
            k = s / np.sqrt(var + float(np.float32(g.attr(bn, "epsilon", 1e-5))))
            if conv_layout:
                if w.shape[0] != k.size:
                    continue
                w2 = w.astype(np.float64) * k.reshape((-1,) + (1,) * (w.ndim - 1))
            else:
                w2 = w.astype(np.float64) * k.reshape((1, -1) + (1,) * (w.ndim - 2))
            b0 = g.consts[ct.input[2]].astype(np.float64) if len(ct.input) > 2 and ct.input[2] else 0.0
            b2 = ((b0 - mean) * k + bias).astype(dt)
            tag = ct.output[0]
            new = onnx.NodeProto()
            new.CopyFrom(ct)
            del new.input[:]
            new.input.extend([ct.input[0], f"{tag}_Wfold", f"{tag}_Bfold"])
            del new.output[:]
            new.output.extend(bn.output[:1])
            return _with(model, g, [ct, bn], [new], {f"{tag}_Wfold": w2.astype(dt), f"{tag}_Bfold": b2})
        return None

    rewrite.rewrite_name = "ConvTransposeBNFusion"
    return rewrite
