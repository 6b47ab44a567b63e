"""A test backend with optimization levels whose optimizing level applies graph rewrites (right or
deliberately wrong) before evaluating the graph with onnx.reference.

``RewriteBackend(rewrites)`` declares the levels ``("disable", "opt")``: at ``disable`` the model
runs as it is (onnx.reference's ReferenceEvaluator, node by node), at ``opt`` each rewrite in
``rewrites`` is applied first (each a function ``model -> model or None``), the fused nodes living
in the domain ``test.fused`` with kernels of their own (:data:`FUSED_OPS`).

The right rewrites check their preconditions as a correct optimizer must (Sub's operand order,
the exponent 2, a scale that does not broadcast X to a larger shape, the normalized axis last,
the permutation a swap, the Gelu divisor sqrt(2), constants known at rewrite time, no
intermediate used elsewhere) and compute the fused operator in float32 for 16-bit and float
graphs (double in double); the wrong ones skip one precondition each, as the issue lists.
"""

from __future__ import annotations

import math

import numpy as np
import onnx
from onnx import helper, numpy_helper
from onnx.reference import ReferenceEvaluator
from onnx.reference.op_run import OpRun

from conformance.backends.base import Backend

DOMAIN = "test.fused"


# ----------------------------------------------------------------------------- fused kernels
def _work(x: np.ndarray) -> type:
    return np.float64 if x.dtype == np.float64 else np.float32


class LayerNorm(OpRun):
    """Fused LayerNormalization over the last axis (float32 inside for float and 16-bit types).
    ``wrong``: 0 right; 1 flattens a larger scale to the last axis (the output keeps X's shape);
    2 computes the one-pass variance."""

    op_domain = DOMAIN

    def _run(self, X, scale, bias=None, epsilon=None, wrong=None):
        w = _work(X)
        x = X.astype(w)
        m = x.mean(axis=-1, keepdims=True, dtype=w)
        d = x - m
        if wrong == 2:  # the one-pass variance E[x^2] - E[x]^2 (cancels for a large mean)
            v = np.maximum((x * x).mean(axis=-1, keepdims=True, dtype=w) - m * m, 0)
        else:
            v = (d * d).mean(axis=-1, keepdims=True, dtype=w)
        n = d / np.sqrt(v + w(epsilon))
        s = scale.astype(w)
        if wrong == 1:  # accepts a scale that broadcasts to a larger shape: takes its last row
            s = s.reshape(-1)[-X.shape[-1]:] if s.size >= X.shape[-1] and X.shape[-1] else s.reshape(-1)[:1]
        y = n * s
        if bias is not None:
            y = y + bias.astype(w)
        return (y.astype(X.dtype),)


class Gelu(OpRun):
    """Fused Gelu: ``approximate`` ``"none"`` (erf, right for the erf form) or ``"tanh"``."""

    op_domain = DOMAIN

    def _run(self, X, approximate=None):
        x = X.astype(np.float64)
        if approximate == "tanh":
            y = 0.5 * x * (1 + np.tanh(math.sqrt(2 / math.pi) * (x + 0.044715 * x ** 3)))
        else:
            y = 0.5 * x * (1 + np.vectorize(math.erf, otypes=[np.float64])(x / math.sqrt(2))) if x.size else x
        return (y.astype(_work(X)).astype(X.dtype),)


class MatMulT(OpRun):
    """``MatMul(A^T if transA else A, B)`` in the working precision."""

    op_domain = DOMAIN

    def _run(self, A, B, transA=None):
        w = _work(A)
        a = A.astype(w).T if transA else A.astype(w)
        return ((a @ B.astype(w)).astype(A.dtype),)


class Erf(OpRun):
    """ai.onnx Erf in the input's precision: onnx.reference's own Erf computes through float32
    (``np.vectorize(math.erf, otypes=["f"])``), 5e-8 off for double inputs, which is the float32
    accuracy, not double's (tests/test_patterns.py::test_onnx_reference_erf_double_is_float32)."""

    op_domain = ""

    def _run(self, x):
        y = np.vectorize(math.erf, otypes=[np.float64])(x.astype(np.float64)) if x.size else x.astype(np.float64)
        return (y.astype(x.dtype),)


FUSED_OPS = [LayerNorm, Gelu, MatMulT, Erf]


# ----------------------------------------------------------------------------- graph helpers
class _Graph:
    def __init__(self, model: onnx.ModelProto):
        self.model = model
        g = model.graph
        self.nodes = list(g.node)
        self.outputs = {o.name for o in g.output}
        self.consts: dict[str, np.ndarray] = {t.name: numpy_helper.to_array(t) for t in g.initializer}
        for n in self.nodes:
            if n.op_type == "Constant":
                for a in n.attribute:
                    if a.name == "value":
                        self.consts[n.output[0]] = numpy_helper.to_array(a.t)
        self.shapes = {vi.name: tuple(d.dim_value for d in vi.type.tensor_type.shape.dim) for vi in g.input}
        self.shapes.update({k: v.shape for k, v in self.consts.items()})

    def consumers(self, name: str) -> list:
        return [n for n in self.nodes if name in n.input]

    def only(self, name: str, op: str):
        """The single consumer of ``name`` if it is an ``op`` and ``name`` is no graph output."""
        c = self.consumers(name)
        if len(c) != 1 or c[0].op_type != op or name in self.outputs:
            return None
        return c[0]

    def attr(self, node, name, default=None):
        for a in node.attribute:
            if a.name == name:
                return helper.get_attribute_value(a)
        return default

    def replace(self, remove: list, new) -> onnx.ModelProto:
        m = onnx.ModelProto()
        m.CopyFrom(self.model)
        keep = [n for n in self.nodes if all(n is not r for r in remove)]
        del m.graph.node[:]
        # the fused node goes where the last removed node was (topological order holds)
        pos = max(self.nodes.index(r) for r in remove)
        before = [n for n in keep if self.nodes.index(n) < pos]
        after = [n for n in keep if self.nodes.index(n) > pos]
        m.graph.node.extend(before + [new] + after)
        if not any(o.domain == DOMAIN for o in m.opset_import):
            m.opset_import.append(helper.make_opsetid(DOMAIN, 1))
        return m


def _other(node, name: str) -> str:
    return node.input[1] if node.input[0] == name else node.input[0]


# ----------------------------------------------------------------------------- rewrites
def layer_norm_fusion(*, any_sub_order: bool = False, any_exponent: bool = False, larger_scale: bool = False,
                      one_pass: bool = False):
    """The LayerNormalization fusion; each flag skips one precondition (a wrong rewrite);
    ``one_pass``: the fused kernel computes the one-pass variance (a wrong kernel)."""

    def rewrite(model: onnx.ModelProto):
        g = _Graph(model)
        for rm1 in g.nodes:
            if rm1.op_type != "ReduceMean":
                continue
            x, m = rm1.input[0], rm1.output[0]
            rank = len(g.shapes.get(x, ())) if x in g.shapes else None
            axes = g.attr(rm1, "axes") if len(rm1.input) < 2 else list(g.consts.get(rm1.input[1], [None]))
            if rank is None or axes is None or [int(a) % rank for a in axes] != [rank - 1]:
                continue
            subs = [n for n in g.consumers(m) if n.op_type == "Sub"]
            if len(subs) != 1 or m in g.outputs:
                continue
            sub = subs[0]
            if list(sub.input) != [x, m] and not (any_sub_order and list(sub.input) == [m, x]):
                continue
            d = sub.output[0]
            users = g.consumers(d)
            pw = next((n for n in users if n.op_type == "Pow" and n.input[0] == d), None)
            dv = next((n for n in users if n.op_type == "Div" and n.input[0] == d), None)
            if pw is None or dv is None or len(users) != 2 or d in g.outputs:
                continue
            e = g.consts.get(pw.input[1])
            if e is None or (float(e) != 2.0 and not any_exponent):
                continue
            rm2 = g.only(pw.output[0], "ReduceMean")
            add = rm2 and g.only(rm2.output[0], "Add")
            if add is None:
                continue
            eps = g.consts.get(_other(add, rm2.output[0]))
            sq = g.only(add.output[0], "Sqrt")
            if eps is None or sq is None or g.only(sq.output[0], "Div") is not dv:
                continue
            mul = g.only(dv.output[0], "Mul")
            if mul is None:
                continue
            scale = _other(mul, dv.output[0])
            sshape = g.shapes.get(scale)
            if sshape is None:
                continue
            if np.broadcast_shapes(g.shapes[x], sshape) != g.shapes[x] and not larger_scale:
                continue
            remove = [rm1, sub, pw, rm2, add, sq, dv, mul]
            ins, out = [x, scale], mul.output[0]
            nxt = g.consumers(out)
            if len(nxt) == 1 and nxt[0].op_type == "Add" and out not in g.outputs:
                bias = _other(nxt[0], out)
                bshape = g.shapes.get(bias)
                if bshape is not None and np.broadcast_shapes(g.shapes[x], bshape) == g.shapes[x]:
                    remove.append(nxt[0])
                    ins.append(bias)
                    out = nxt[0].output[0]
            wrong = 1 if larger_scale and np.broadcast_shapes(g.shapes[x], sshape) != g.shapes[x] else 0
            wrong = 2 if one_pass else wrong
            new = helper.make_node("LayerNorm", ins, [out], domain=DOMAIN, epsilon=float(eps), wrong=wrong)
            return g.replace(remove, new)
        return None

    rewrite.rewrite_name = "LayerNormFusion"
    return rewrite


def transpose_fusion(*, identity_as_swap: bool = False):
    """Folds ``Transpose(A)`` into a consuming Gemm's ``transA`` or a MatMul (a ``MatMulT``): a
    swap flips transA, an identity permutation is dropped; ``identity_as_swap`` (wrong) flips
    transA for any permutation."""

    def rewrite(model: onnx.ModelProto):
        g = _Graph(model)
        for tr in g.nodes:
            if tr.op_type != "Transpose":
                continue
            perm = list(g.attr(tr, "perm", []) or [])
            if perm not in ([1, 0], [0, 1]):
                continue
            users = g.consumers(tr.output[0])
            if len(users) != 1 or tr.output[0] in g.outputs or users[0].input[0] != tr.output[0]:
                continue
            u = users[0]
            flip = perm == [1, 0] or identity_as_swap
            if u.op_type == "Gemm":
                new = onnx.NodeProto()
                new.CopyFrom(u)
                new.input[0] = tr.input[0]
                ta = int(g.attr(u, "transA", 0))
                for a in list(new.attribute):
                    if a.name == "transA":
                        new.attribute.remove(a)
                new.attribute.append(helper.make_attribute("transA", (1 - ta) if flip else ta))
                return g.replace([tr, u], new)
            if u.op_type == "MatMul":
                new = helper.make_node("MatMulT", [tr.input[0], u.input[1]], list(u.output), domain=DOMAIN,
                                       transA=int(flip))
                return g.replace([tr, u], new)
        return None

    rewrite.rewrite_name = "TransposeFusion"
    return rewrite


def gelu_fusion(*, tanh_for_erf: bool = False):
    """Fuses ``0.5 * x * (1 + Erf(x / sqrt(2)))`` (Div by sqrt 2 or Mul by 1/sqrt 2, the 0.5 first or
    last) into a fused Gelu; ``tanh_for_erf`` (wrong) computes the tanh approximation."""

    def close(v, target) -> bool:
        return v is not None and v.size == 1 and abs(float(v) - target) <= 1e-3 * target

    def rewrite(model: onnx.ModelProto):
        g = _Graph(model)
        for erf in g.nodes:
            if erf.op_type != "Erf":
                continue
            pre = next((n for n in g.nodes if erf.input[0] in n.output), None)
            if pre is None or pre.op_type not in ("Div", "Mul") or g.only(pre.output[0], "Erf") is not erf:
                continue
            x = pre.input[0]
            c = g.consts.get(pre.input[1])
            if not close(c, math.sqrt(2) if pre.op_type == "Div" else 1 / math.sqrt(2)):
                continue
            add = g.only(erf.output[0], "Add")
            if add is None or not close(g.consts.get(_other(add, erf.output[0])), 1.0):
                continue
            m1 = g.only(add.output[0], "Mul")
            if m1 is None:
                continue
            other = _other(m1, add.output[0])
            if other == x:  # x * (1 + erf) then * 0.5
                m2 = g.only(m1.output[0], "Mul")
                if m2 is None or not close(g.consts.get(_other(m2, m1.output[0])), 0.5):
                    continue
                remove, out = [pre, erf, add, m1, m2], m2.output[0]
            else:  # (x * 0.5) * (1 + erf)
                half = next((n for n in g.nodes if other in n.output), None)
                if half is None or half.op_type != "Mul" or x not in half.input or \
                        not close(g.consts.get(_other(half, x)), 0.5) or g.only(other, "Mul") is not m1:
                    continue
                remove, out = [half, pre, erf, add, m1], m1.output[0]
            new = helper.make_node("Gelu", [x], [out], domain=DOMAIN, approximate="tanh" if tanh_for_erf else "none")
            return g.replace(remove, new)
        return None

    rewrite.rewrite_name = "GeluFusion"
    return rewrite


RIGHT = (layer_norm_fusion(), transpose_fusion(), gelu_fusion())


class RewriteBackend(Backend):
    """Levels ``disable`` and ``opt``; at ``opt`` the ``rewrites`` are applied (each as often as it
    matches) before onnx.reference evaluates the graph (module docstring).  ``optimized_ops``
    lists the evaluated graph's op types, so a run records which rewrites fired."""

    levels = ("disable", "opt")

    def __init__(self, rewrites=RIGHT, name: str = "rewrites", ops=None):
        self.rewrites = tuple(rewrites)
        self.name = name
        self.ops = list(FUSED_OPS if ops is None else ops)  # the kernels onnx.reference is given
        #: the rewrites' names, which ``disabled`` removes (the runner's search for the one responsible)
        self.rewrite_names = tuple(rw.rewrite_name for rw in self.rewrites)

    def prepare(self, model, model_bytes):
        return self.prepare_at_level(model, model_bytes, "disable")

    def rewritten(self, model, level, disabled=()):
        """``(model, its op types)`` after this backend's rewrites at ``level`` (none at
        ``"disable"``; at ``"opt"`` each rewrite not named in ``disabled``, up to 8 times)."""
        if level == "opt":
            for rw in self.rewrites:
                if rw.rewrite_name in disabled:
                    continue
                for _ in range(8):
                    new = rw(model)
                    if new is None:
                        break
                    model = new
        return model, sorted({f"{n.domain}:{n.op_type}" if n.domain else n.op_type for n in model.graph.node})

    def prepare_at_level(self, model, model_bytes, level, disabled=()):
        model, ops = self.rewritten(model, level, disabled)
        return ReferenceEvaluator(model, new_ops=self.ops), ops

    def optimized_ops(self, prepared):
        return prepared[1]

    def run(self, prepared, inputs, output_names):
        with np.errstate(all="ignore"):
            return prepared[0].run(output_names, dict(inputs))
