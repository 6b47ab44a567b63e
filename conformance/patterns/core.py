"""The layer-pattern core: pattern entries, their graphs, the composed oracle and the tolerance.

A *pattern case* is a :class:`conformance.case.Case` whose model is a small graph (``Case.graph``,
a :class:`PatternGraph`) instead of one node: the form an exporter emits for one layer of the
model builders' catalog (LayerNormalization written out as ReduceMean, Sub, Pow, ReduceMean,
Add, Sqrt, Div, Mul, Add; a Dense layer as MatMul and Add...).  ``Case.op`` is the pattern's
name (``"LayerNormalization.decomposed"``) in the domain :data:`PATTERN_DOMAIN`, ``since_version``
and ``opset`` the ai.onnx opset the graph imports, so ids, bundle directories, families, reports
and ``--ops`` work unchanged.  Tags carry the pattern, the catalog layer, the exporter form, the
drawn variation values (``v_<axis>``) and, for a near-miss, ``near_miss``.

A pattern is one :class:`Pattern` entry holding only what the nodes' schemas cannot say: a
builder of the nodes from the drawn variation values (:class:`Builder`), the variation axes,
its near-miss values, the catalog layer, the exporter form, the fused operator it decomposes
(for the tolerance and for exact rewrites in tests) and the op types whose presence in an
optimized graph shows that a runtime's target rewrite fired.

Expected values (:func:`evaluate`): the suite's own float64-or-exact oracles composed node by
node in topological order (each node's op looked up in the operator table,
:data:`conformance.ops.engine.ENTRIES`; the version in force at the imported opset, the schema's
attribute defaults filled in), ``Cast`` applied exactly as the text says (rounded to its target
type), the graph outputs rounded once to their type.  Never onnx.reference or a runtime.

Tolerance (docs/tolerance.md, "Layer patterns"): the per-element envelope of legitimate
variants' deviation from the float64 composition (:func:`derive_pattern_tolerance`):

* ``rounded``: every node's result rounded to its type (an unfused chain of correctly rounded
  kernels);
* ``float32-intermediates`` (16-bit graphs): every node rounded to float32, the outputs to T
  (a runtime that computes 16-bit chains in float32, a legitimate choice);
* ``perturb-up`` / ``perturb-down`` / ``perturb-alt`` / ``perturb-rand``: every node's result
  moved by its own operator tolerance (the operator table's, at T: a kernel may be that far off
  and still pass its single-node case) in a sign pattern (all up, all down, alternating by node,
  random per element), then rounded to T;

``atol = SAFETY * spread + final.atol``, ``rtol = final.rtol``, where ``spread`` is the largest
deviation of those variants and ``final`` the single-node tolerance of the node producing the
output; and, where the pattern decomposes an operator (``Pattern.fused``), at least that
operator's own tolerance plus the (exact-arithmetic: rounding-only) distance between the fused
float64 result and the composition.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import onnx
from onnx import helper, numpy_helper

from .. import dtypes, registry
from ..case import Case, DataSet, Input, Output, graph_io
from ..tolerance import Tolerance

#: The domain a pattern case's ``Case.domain`` names (never imported by the model).
PATTERN_DOMAIN = "pattern"
#: Multiplier on the measured spread of the legitimate chain variants (as
#: :data:`conformance.tolerance.DEFAULT_SAFETY`): the sign patterns do not reach every
#: combination of per-node errors, and a chain is only first-order linear in them.
SAFETY = 4.0
#: Where a parameter of a pattern lives (the ``params`` axis): an initializer, a Constant node, or
#: a graph input fed by the data set (a graph input must not be folded as a constant).
PARAM_KINDS = ("initializer", "constant", "input")
#: Nodes whose result is rounded to their output type even in the float64 composition: the text
#: defines them as a conversion to that type (Cast: "converted to the target type";
#: DequantizeLinear's ``y`` is a tensor of its float type, which a following QuantizeLinear
#: quantizes: a tie of the float64 value need not be one of the float32 value).  They are not
#: perturbed (a conversion is exact up to its rounding).
CONVERTING = frozenset({"Cast", "CastLike", "DequantizeLinear"})
#: 16-bit floating types: their chains may be computed in float32 (a legitimate variant).
HALF_TYPES = ("float16", "bfloat16")


# ----------------------------------------------------------------------------- graph
@dataclass(frozen=True)
class Node:
    """One node of a pattern graph.

    Attributes:
        op: operator type.
        inputs / outputs: value names (``""`` for an omitted optional input).
        attrs: attribute name -> Python value (as ``helper.make_node`` takes; a Constant's
            ``value`` as an ndarray of its element type).
        domain: operator domain (``""``: ai.onnx).
        name: the node's name in the model.
    """

    op: str
    inputs: tuple[str, ...]
    outputs: tuple[str, ...]
    attrs: Mapping[str, Any] = field(default_factory=dict)
    domain: str = ""
    name: str = ""

    def describe(self) -> str:
        """``"y = Op(a, b) {attr=v}"``: one line of the minimal graph a report shows."""
        attrs = ", ".join(f"{k}={_attr_text(v)}" for k, v in sorted(self.attrs.items()))
        op = f"{self.domain}.{self.op}" if self.domain else self.op
        return f"{', '.join(self.outputs)} = {op}({', '.join(self.inputs)})" + (f" {{{attrs}}}" if attrs else "")


def _attr_text(v) -> str:
    if isinstance(v, np.ndarray):
        return f"tensor{list(v.shape)}:{np.array2string(v.ravel()[:4], precision=6)}"
    if isinstance(v, float):
        return f"{v:.9g}"
    return repr(v)


@dataclass
class PatternGraph:
    """The nodes of a pattern case (``Case.graph``).

    Attributes:
        name: the graph's name (the pattern's).
        nodes: the nodes in topological order (Constant nodes included).
        opsets: domain -> opset version imported (``""``: ai.onnx).
        types: value name -> ONNX element type of every value (inputs, intermediates, outputs).
    """

    name: str
    nodes: tuple[Node, ...]
    opsets: Mapping[str, int]
    types: Mapping[str, int] = field(default_factory=dict)

    def model(self, case: Case) -> onnx.ModelProto:
        """The ONNX model of ``case`` with these nodes: graph inputs and initializers from
        ``case.inputs``, graph outputs from ``case.present_outputs`` (shapes from the first data
        set), one opset import per domain used, the IR version the opsets need (as
        :func:`conformance.case.build_model`).

        Raises:
            ValueError: an initializer without a value.
        """
        nodes = []
        for k, n in enumerate(self.nodes):
            node = helper.make_node(n.op, list(n.inputs), list(n.outputs), name=n.name or f"{n.op}_{k}",
                                    domain=n.domain or None)
            for a in sorted(n.attrs):
                v = n.attrs[a]
                node.attribute.append(helper.make_attribute(a, numpy_helper.from_array(v) if isinstance(v, np.ndarray)
                                                            else v))
            nodes.append(node)
        graph_inputs, inits, outs = graph_io(case)
        graph = helper.make_graph(nodes, self.name, graph_inputs, outs, inits)
        opsets = [helper.make_opsetid(d, v) for d, v in sorted(self.opsets.items())]
        model = helper.make_model(graph, opset_imports=opsets, producer_name="onnx-conformance")
        model.ir_version = helper.find_min_ir_version_for(list(model.opset_import), ignore_unknown=True)
        if model.ir_version < 4:
            for i in case.inputs:
                if i.present and i.initializer:
                    model.graph.input.append(helper.make_tensor_value_info(i.name, i.elem_type, list(i.shape)))
        return model

    def describe(self) -> list[str]:
        """The node list, one :meth:`Node.describe` line per node."""
        return [n.describe() for n in self.nodes]


def describe_model(model: onnx.ModelProto) -> list[str]:
    """The node list of any model (a pattern case read back from a bundle has no ``graph``)."""
    out = []
    for n in model.graph.node:
        attrs = {a.name: helper.get_attribute_value(a) for a in n.attribute}
        attrs = {k: (numpy_helper.to_array(v) if isinstance(v, onnx.TensorProto) else
                     v.decode() if isinstance(v, bytes) else list(v) if isinstance(v, (list, tuple)) or
                     type(v).__name__ == "RepeatedScalarContainer" else v) for k, v in attrs.items()}
        out.append(Node(n.op_type, tuple(n.input), tuple(n.output), attrs, n.domain).describe())
    return out


# ----------------------------------------------------------------------------- composed oracle
def _entry(op: str, domain: str):
    from ..ops.engine import ENTRIES

    registry._load()
    try:
        return ENTRIES[(domain, op)]
    except KeyError:
        raise KeyError(f"no operator-table entry for {domain or 'ai.onnx'}:{op}: a pattern can only use "
                       "operators the suite has an oracle for") from None


def _full_attrs(vs, given: Mapping[str, Any]) -> dict:
    """Every attribute of the version as an oracle receives it (schema defaults filled in, floats
    as their float32 value), as :func:`conformance.ops.engine._full_attrs` gives single nodes."""
    from ..ops.engine import _full_attrs as full

    return full(vs, dict(given))


@dataclass
class NodeRun:
    """One node's evaluation in :func:`evaluate` (for tolerances and tests).

    Attributes:
        node: the node.
        inputs: the values it received (exact form: float64 / object ints), by input name.
        outputs: its results (before any perturbation or rounding of the variant), by name.
        tolerance: output name -> the node's own single-node :class:`Tolerance` at its type.
    """

    node: Node
    inputs: dict[str, Any]
    outputs: dict[str, Any]
    tolerance: dict[str, Tolerance] = field(default_factory=dict)


def _exact(x, elem: int):
    from ..ops import values as V

    return V.to_exact(np.asarray(x), dtypes.type_name(elem))


def _round(x, elem: int) -> np.ndarray:
    return dtypes.round_to(np.asarray(x, dtype=np.float64), elem).astype(np.float64)


def _node_ctx(node: Node, opsets: Mapping[str, int], types: Mapping[str, int], feeds: Mapping[str, Any]):
    from ..ops.entry import Ctx
    from ..opspec import op_spec

    spec = op_spec(node.op, node.domain)
    opset = opsets[node.domain]
    v = spec.version_in_force(opset)
    if v is None:
        raise ValueError(f"{node.op} does not exist at opset {opset}")
    vs = spec.versions[v]
    ins = [feeds[n] if n else None for n in node.inputs] + [None] * max(0, len(vs.inputs) - len(node.inputs))
    names = list(node.inputs) + [""] * max(0, len(vs.inputs) - len(node.inputs))
    attrs = _full_attrs(vs, {k: v for k, v in node.attrs.items()})
    ctx = Ctx(node.op, v, opset,
              types={f.name: dtypes.type_name(types[n]) for f, n in zip(vs.inputs, names) if n},
              out_types={f.name: dtypes.type_name(types[n]) for f, n in zip(vs.outputs, node.outputs) if n},
              attrs=attrs, outputs=tuple(f.name for f, n in zip(vs.outputs, node.outputs) if n),
              shapes={f.name: tuple(np.shape(x)) for f, x in zip(vs.inputs, ins) if x is not None},
              given=dict(node.attrs))
    return ctx, vs, ins, attrs


def node_tolerance(node: Node, ctx, vs, ins, attrs, outs: Mapping[str, Any], types: Mapping[str, int]) -> dict:
    """The single-node tolerance of each floating output of ``node`` at its type: the operator
    table's (the entry's ``tolerance`` function, else :func:`conformance.ops.engine.tolerance_for`),
    as the node's own single-node cases would get it for these inputs."""
    from ..ops.engine import tolerance_for

    entry = _entry(node.op, node.domain)
    formal = {n: f.name for f, n in zip(vs.outputs, node.outputs) if n}
    out: dict[str, Tolerance] = {}
    if entry.tolerance is not None:
        with np.errstate(all="ignore"):
            got = entry.tolerance(ctx, list(ins), attrs, {formal[n]: outs[n] for n in formal})
        for n, f in formal.items():
            if f in got:
                out[n] = got[f]
    for n in formal:
        if n not in out and dtypes.is_float(types[n]):
            with np.errstate(all="ignore"):
                out[n] = tolerance_for(entry, dtypes.type_name(types[n]), ctx, list(ins), attrs)
    return out


def evaluate(graph: PatternGraph, feeds: Mapping[str, Any], *, precision: Callable[[int], int | None] | None = None,
             perturb: Callable[[int, str, np.ndarray], np.ndarray] | None = None,
             record: list[NodeRun] | None = None, tolerances: bool = False) -> dict[str, Any]:
    """Evaluate ``graph`` on ``feeds`` (value name -> exact value: float64 for floating values,
    object arrays of ints for integer ones) by composing the operator table's oracles.

    Args:
        precision: ``fn(elem_type) -> elem_type or None``: round every floating node result of
            that type to the returned type (``None``: keep float64).  Default: no rounding (the
            float64 composition); ``Cast`` results are always rounded to their target type.
        perturb: ``fn(node index, output name, exact result) -> result``, applied before the
            rounding (the perturbation variants).
        record: receives one :class:`NodeRun` per node.
        tolerances: fill :attr:`NodeRun.tolerance` (needs ``record``).

    Returns:
        value name -> value of every value the graph computes (and the feeds).

    Raises:
        KeyError: a node whose operator has no entry; ValueError: an operator absent at the
            imported opset; anything the oracles raise (an undefined input).
    """
    env = dict(feeds)
    for k, node in enumerate(graph.nodes):
        if node.op == "Constant" and not node.domain:
            arr = np.asarray(node.attrs["value"])
            env[node.outputs[0]] = _exact(arr, graph.types[node.outputs[0]])
            continue
        entry = _entry(node.op, node.domain)
        ctx, vs, ins, attrs = _node_ctx(node, graph.opsets, graph.types, env)
        with np.errstate(all="ignore"):
            res = entry.oracle(ctx, *ins, **attrs)
        res = res if isinstance(res, tuple) else (res,)
        outs = {}
        for name, y in zip(node.outputs, res):
            if not name:
                continue
            elem = graph.types[name]
            if dtypes.is_float(elem):
                y = np.asarray(y, dtype=np.float64)
                if node.op in CONVERTING:
                    y = _round(y, elem)
            outs[name] = y
        if record is not None:
            run = NodeRun(node, {n: env[n] for n in node.inputs if n}, dict(outs))
            if tolerances:
                run.tolerance = node_tolerance(node, ctx, vs, ins, attrs, outs, graph.types)
            record.append(run)
        for name, y in outs.items():
            elem = graph.types[name]
            if dtypes.is_float(elem) and node.op not in CONVERTING:
                if perturb is not None:
                    y = perturb(k, name, y)
                if precision is not None:
                    p = precision(elem)
                    if p is not None:
                        y = _round(y, p)
            env[name] = y
    return env


# ----------------------------------------------------------------------------- tolerance
def _tol_array(t: Tolerance, y: np.ndarray) -> np.ndarray:
    if t.exact:
        return np.zeros(np.shape(y))
    with np.errstate(all="ignore"):
        a = t.atol + t.rtol * np.abs(np.asarray(y, dtype=np.float64))
    return np.where(np.isfinite(a), a, 0.0)


def chain_variants(graph: PatternGraph, feeds: Mapping[str, Any], outputs: list[str], runs: list[NodeRun],
                   seed: int = 0) -> dict[str, dict[str, np.ndarray]]:
    """The legitimate variants of the unfused chain (module docstring): variant name -> output
    name -> value (float64 of the output type's values).  ``runs``: the exact evaluation's
    :class:`NodeRun` records with tolerances."""
    tol_of = {(k, n): r.tolerance.get(n) for k, r in enumerate(_value_runs(graph, runs)) for n in r.outputs}
    out_types = {o: graph.types[o] for o in outputs}
    half = any(dtypes.type_name(t) in HALF_TYPES for t in graph.types.values() if dtypes.is_float(t))

    def at_type(e):
        return e

    def f32(e):
        return onnx.TensorProto.FLOAT if dtypes.type_name(e) in HALF_TYPES else e

    rand = np.random.default_rng(np.random.SeedSequence([seed, 26]))

    def pert(sign):
        def fn(k, name, y):
            t = tol_of.get((k, name))
            if t is None:
                return y
            s = sign(k, np.shape(y))
            return y + s * _tol_array(t, y)
        return fn

    specs = {"rounded": (at_type, None)}
    if half:
        specs["float32-intermediates"] = (f32, None)
    specs["perturb-up"] = (at_type, pert(lambda k, sh: 1.0))
    specs["perturb-down"] = (at_type, pert(lambda k, sh: -1.0))
    specs["perturb-alt"] = (at_type, pert(lambda k, sh: 1.0 if k % 2 == 0 else -1.0))
    specs["perturb-rand"] = (at_type, pert(lambda k, sh: rand.choice((-1.0, 1.0), size=sh)))
    found = {}
    for name, (prec, p) in specs.items():
        env = evaluate(graph, feeds, precision=prec, perturb=p)
        found[name] = {o: _round(env[o], out_types[o]) if dtypes.is_float(out_types[o]) else env[o] for o in outputs}
    return found


def _value_runs(graph: PatternGraph, runs: list[NodeRun]) -> list[NodeRun | None]:
    """``runs`` aligned with ``graph.nodes`` (a Constant node has no run)."""
    it = iter(runs)
    return [_Dummy() if (n.op == "Constant" and not n.domain) else next(it) for n in graph.nodes]


class _Dummy:
    outputs: dict = {}
    tolerance: dict = {}


def derive_pattern_tolerance(expected64: np.ndarray, variants: Mapping[str, np.ndarray], final: Tolerance | None,
                             elem: int, fused: tuple[np.ndarray, Tolerance] | None = None) -> Tolerance:
    """The tolerance of one graph output (module docstring): ``SAFETY * spread + final.atol`` and
    ``final.rtol`` (``final``: the producing node's single-node tolerance; ``None``: 4 ulps of
    the output type), widened to the fused operator's own tolerance plus the distance of its
    float64 result from the composition where ``fused`` is given.  Integer and bool outputs
    compare exactly.

    Raises:
        ValueError: a variant is not finite where the composition is (a reference bug).
    """
    if not dtypes.is_float(elem):
        return Tolerance(0.0, 0.0, exact=True)
    e = np.asarray(expected64, dtype=np.float64)
    fin = np.isfinite(e)
    spread = 0.0
    for name, v in variants.items():
        v = np.asarray(v, dtype=np.float64)
        if not np.isfinite(v[fin]).all():
            raise ValueError(f"variant {name!r} is not finite where the composition is")
        if fin.any():
            spread = max(spread, float(np.max(np.abs(v[fin] - e[fin]))))
    # the expectation is the composition rounded once to T: a variant is within spread plus half an
    # ulp of it; one ulp (and a subnormal step) is the floor, whatever the final node's tolerance
    eps = float(dtypes.eps(elem))
    sub = float(dtypes.finfo(elem).smallest_subnormal)
    if final is None or final.exact:
        base_atol, base_rtol = sub, eps
    else:
        base_atol, base_rtol = max(final.atol, sub), max(final.rtol, eps)
    atol, rtol = SAFETY * spread + base_atol, base_rtol
    names = tuple(variants)
    if fused is not None:
        f64, ft = fused
        d = np.abs(np.asarray(f64, dtype=np.float64) - e)
        dist = float(np.max(d[fin])) if fin.any() else 0.0
        atol, rtol = max(atol, ft.atol + dist), max(rtol, ft.rtol)
        names += ("fused",)
    return Tolerance(float(atol), float(rtol), spread=float(spread), variants=names)


# ----------------------------------------------------------------------------- pattern entries
@dataclass
class Built:
    """What a :class:`Builder` made (internal)."""

    nodes: list[Node]
    inputs: list[Input]
    feeds: dict[str, Any]
    types: dict[str, int]
    outputs: list[str]

    def value(self, name: str) -> np.ndarray:
        """The exact value of a graph input, initializer or Constant node output ``name``.

        Raises:
            KeyError: no such value.
        """
        if name in self.feeds:
            return np.asarray(self.feeds[name])
        for n in self.nodes:
            if n.op == "Constant" and n.outputs[0] == name:
                return np.asarray(n.attrs["value"]).astype(np.float64)
        raise KeyError(name)


class Builder:
    """Builds one pattern graph from the drawn variation values (the argument of
    :attr:`Pattern.build`).

    Attributes:
        v: axis name -> the drawn value (:attr:`Pattern.axes`; a near-miss case's changed axis
            holds its near-miss value).
        t: the element type name (``"float"``, ``"float16"``...); ``elem`` its ONNX type.
        opset: the ai.onnx opset the graph imports.
        rng: the case's random stream (:func:`conformance.registry.case_rng`).
    """

    def __init__(self, values: Mapping[str, Any], type_name: str, opset: int, rng: np.random.Generator):
        self.v = dict(values)
        self.t = type_name
        self.elem = dtypes.elem_type(type_name)
        self.opset = opset
        self.rng = rng
        self._nodes: list[Node] = []
        self._inputs: list[Input] = []
        self._feeds: dict[str, Any] = {}
        self._types: dict[str, int] = {}
        self._outputs: list[str] = []
        self._count: dict[str, int] = {}
        #: domain -> opset the graph imports; a node of another domain adds it at version 1
        #: (set ``b.opsets[domain]`` first for another version)
        self.opsets: dict[str, int] = {"": opset}

    # -- values
    def data(self, shape, scale: float = 1.0, offset: float = 0.0, lo: float | None = None,
             hi: float | None = None) -> np.ndarray:
        """Normal draws ``offset + scale * N(0, 1)`` of ``shape`` (or uniform in ``[lo, hi]``)
        rounded to the case's type, as float64."""
        shape = tuple(int(d) for d in shape)
        if lo is not None:
            x = self.rng.uniform(lo, hi, size=shape)
        else:
            x = offset + scale * self.rng.standard_normal(size=shape)
        return _round(x, self.elem)

    def input(self, name: str, value, elem: int | None = None) -> str:
        """A graph input fed by the data set (``value`` rounded to ``elem``, default the case's
        type)."""
        elem = self.elem if elem is None else elem
        value = _round(value, elem) if dtypes.is_float(elem) else np.asarray(value)
        self._inputs.append(Input(name, elem, tuple(np.shape(value))))
        self._feeds[name] = value
        self._types[name] = elem
        return name

    def param(self, name: str, value, elem: int | None = None, kind: str | None = None) -> str:
        """A parameter: an initializer, a Constant node or a graph input, as the ``params`` axis
        (or ``kind``) says; returns the value's name."""
        kind = kind or self.v.get("params", "initializer")
        if kind not in PARAM_KINDS:
            raise ValueError(f"unknown parameter kind {kind!r}; known: {PARAM_KINDS}")
        elem = self.elem if elem is None else elem
        arr = _round(value, elem) if dtypes.is_float(elem) else np.asarray(value)
        if kind == "input":
            return self.input(name, arr, elem)
        self._types[name] = elem
        stored = np.asarray(arr).astype(dtypes.np_dtype(elem))
        if kind == "initializer":
            self._inputs.append(Input(name, elem, tuple(np.shape(arr)), initializer=True, value=stored))
            self._feeds[name] = _exact(stored, elem)
        else:
            self._nodes.append(Node("Constant", (), (name,), {"value": stored}, name=f"const_{name}"))
        return name

    def const(self, name: str, value, elem: int = onnx.TensorProto.INT64) -> str:
        """A structural constant (axes, shapes, pads): always an initializer."""
        return self.param(name, value, elem, kind="initializer")

    # -- nodes
    def node(self, op: str, inputs, outputs: int | tuple[str, ...] = 1, domain: str = "", out_type: int | None = None,
             **attrs) -> Any:
        """Append a node; returns its output name (a tuple when it has several).  Output types:
        ``out_type``, else ``to`` for Cast, else the type of the first input."""
        inputs = tuple(inputs)
        if isinstance(outputs, int):
            base = op.lower()
            names = []
            for _ in range(outputs):
                k = self._count.get(base, 0)
                self._count[base] = k + 1
                names.append(f"{base}{k}" if k or outputs > 1 else base)
            outputs = tuple(names)
        if out_type is None:
            if op == "Cast":
                out_type = int(attrs["to"])
            else:
                out_type = next(self._types[i] for i in inputs if i)
        for o in outputs:
            self._types[o] = out_type
        self.opsets.setdefault(domain, 1)
        self._nodes.append(Node(op, inputs, tuple(outputs), dict(attrs), domain, name=f"{op}_{len(self._nodes)}"))
        return outputs[0] if len(outputs) == 1 else outputs

    def output(self, *names: str) -> None:
        """Mark values as graph outputs (in this order)."""
        self._outputs.extend(names)

    def built(self) -> Built:
        """What the builder made: nodes, inputs (graph inputs and initializers), exact feeds,
        value types, graph outputs."""
        return Built(self._nodes, self._inputs, self._feeds, self._types, self._outputs)


@dataclass(frozen=True)
class Fused:
    """The operator a pattern decomposes (``Pattern.fused``): its oracle and its own single-node
    tolerance widen the pattern's (module docstring), and tests use it as an exact rewrite.

    Attributes:
        op / domain / version: the fused operator and the version whose oracle is used.
        inputs: the fused operator's inputs, as value names of the pattern graph.
        attrs: its attributes.
        output: the pattern graph output it replaces.
    """

    op: str
    version: int
    inputs: tuple[str, ...]
    attrs: Mapping[str, Any]
    output: str
    domain: str = ""


@dataclass(frozen=True)
class Pattern:
    """One layer pattern (module docstring).

    Attributes:
        name: the pattern's name (``Case.op``), ``Layer.form``.
        family: the pattern family (report grouping, the module).
        layer: the catalog layer it stands for (``"LayerNormalization"``, ``"Dense"``...).
        exporter: the exporter form (``"torch.onnx LayerNorm below opset 17"``).
        build: ``fn(builder) -> None``: makes the nodes, inputs and outputs from
            ``builder.v`` (the drawn variation values; :class:`Builder`).
        axes: axis name -> its values (the preconditions of the rewrites: ``params``, parameter
            shapes, permutations, constants, operand order...); the first value is the layer's
            canonical form.  Cases cycle over every value of every axis.
        near_misses: axis name -> values one change away from the layer (a valid graph that a
            correct optimizer must leave alone); each gets cases of its own tagged
            ``near_miss=<axis>=<value>``, at depth ``full`` only.
        types: element types of the graph (a type missing here has its reason in ``notes``).
        opsets: the ai.onnx opsets the graphs import (:data:`conformance.ops.schedule.EXPORTER_OPSETS`
            or a subset: the pattern's own ops must exist there).
        fused: ``fn(builder, built) -> Fused or None``: the operator this form decomposes.
        targets: backend name -> op types (``domain:Op`` or ``Op``) whose presence in the
            optimized graph shows the target rewrite fired (``{"onnxruntime":
            ("LayerNormalization",)}``).
        per_combo: mixed cases (several axes changed at once) per (type, opset) at depth full
            (default 1).
        notes: free text: what the pattern tests, reasons for omitted types.
    """

    name: str
    family: str
    layer: str
    exporter: str
    build: Callable[[Builder], None]
    axes: Mapping[str, tuple] = field(default_factory=dict)
    near_misses: Mapping[str, tuple] = field(default_factory=dict)
    types: tuple[str, ...] = ("float", "float16", "double")
    opsets: tuple[int, ...] = ()
    fused: Callable[[Builder, Built], Fused | None] | None = None
    targets: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    per_combo: int = 0
    notes: str = ""


#: Why the first families' patterns leave bfloat16 out (``Pattern.notes``): every node of them
#: admits it from opset 13, but exporters emit these layers in float, float16 (mixed precision)
#: and double, and onnxruntime's CPU provider has no bfloat16 kernel for most of their nodes
#: (ReduceMean, Pow, Sqrt, Erf): such cases would only measure refusals.
BF16_NOTE = ("bfloat16 left out: exporters emit these forms in float, float16 and double, and onnxruntime's CPU "
             "provider has no bfloat16 kernel for most of their nodes")

#: name -> pattern, for every registered pattern.
PATTERNS: dict[str, Pattern] = {}


def _canonical(p: Pattern) -> dict[str, Any]:
    """Every axis at its first value: the layer's canonical form."""
    return {a: vals[0] for a, vals in sorted(p.axes.items())}


def _deviations(p: Pattern) -> list[tuple[str, Any]]:
    """Every (axis, value) one change away from the canonical form, in sorted axis order."""
    out = []
    for a, vals in sorted(p.axes.items()):
        seen = [vals[0]]
        for v in vals[1:]:
            if v not in seen:
                seen.append(v)
                out.append((a, v))
    return out


def _mixed(p: Pattern, k: int) -> dict[str, Any]:
    """A case with several axes off their canonical value at once: axis ``j`` takes value
    ``(k + j) % len``."""
    return {a: vals[(k + j) % len(vals)] for j, (a, vals) in enumerate(sorted(p.axes.items()))}


def _label_value(v) -> str:
    if isinstance(v, float):
        return f"{v:g}"
    if isinstance(v, (list, tuple)):
        return "x".join(map(str, v)) or "none"
    return str(v)


def build_case(p: Pattern, values: Mapping[str, Any], type_name: str, opset: int, rng: np.random.Generator,
               near_miss: str | None = None) -> Case:
    """The pattern case of ``p`` with the variation ``values`` (module docstring).

    Raises:
        KeyError / ValueError: a builder that uses an operator without an entry or outside the
            opset, or that makes an output no variant can evaluate.
    """
    b = Builder(values, type_name, opset, rng)
    p.build(b)
    built = b.built()
    graph = PatternGraph(p.name, tuple(built.nodes), dict(b.opsets), dict(built.types))
    runs: list[NodeRun] = []
    env = evaluate(graph, built.feeds, record=runs, tolerances=True)
    variants = chain_variants(graph, built.feeds, built.outputs, runs, seed=int(rng.integers(2**31)))
    producer = {o: r for r in runs for o in r.outputs}
    fused = p.fused(b, built) if p.fused is not None else None
    outputs, expected = [], {}
    for o in built.outputs:
        elem = built.types[o]
        y64 = env[o]
        fz = None
        if fused is not None and fused.output == o:
            fz = evaluate_fused(fused, env, built.types, opset)
        tol = derive_pattern_tolerance(y64, {n: v[o] for n, v in variants.items()}, producer[o].tolerance.get(o),
                                       elem, fz)
        outputs.append(Output(o, elem, tol))
        expected[o] = dtypes.round_to(np.asarray(y64, dtype=np.float64), elem) if dtypes.is_float(elem) else \
            np.asarray(y64).astype(dtypes.np_dtype(elem))
    inputs = []
    ds_in = {}
    for i in built.inputs:
        inputs.append(i)
        if not i.initializer:
            ds_in[i.name] = np.asarray(built.feeds[i.name]).astype(dtypes.np_dtype(i.elem_type))
    tags = {"pattern": p.name, "pattern_family": p.family, "layer": p.layer, "exporter": p.exporter,
            "dtype": type_name, "opset": opset, "nodes": len(built.nodes)}
    if p.targets:
        tags["targets"] = ";".join(f"{k}={'|'.join(v)}" for k, v in sorted(p.targets.items()))
    for a in sorted(values):
        tags[f"v_{a}"] = _label_value(values[a])
    if near_miss:
        tags["near_miss"] = near_miss
    canon = _canonical(p)
    changed = [f"{a}={_label_value(values[a])}" for a in sorted(values) if canon.get(a) != values[a]]
    label = "/".join([type_name, f"opset{opset}"] + ([f"near-miss-{near_miss}"] if near_miss else []) +
                     (changed or ["canonical"]))
    return Case(op=p.name, since_version=opset, opset=opset, attributes={}, inputs=inputs, outputs=outputs,
                datasets=[DataSet(ds_in, expected)], tags=tags, label=label, domain=PATTERN_DOMAIN, graph=graph)


def evaluate_fused(f: Fused, env: Mapping[str, Any], types: Mapping[str, int],
                   opset: int) -> tuple[np.ndarray, Tolerance]:
    """The fused operator's float64 result on the pattern's exact values and its own tolerance."""
    node = Node(f.op, f.inputs, (f.output,), dict(f.attrs), f.domain)
    g_types = dict(types)
    ctx, vs, ins, attrs = _node_ctx(node, {f.domain: max(opset, f.version)}, g_types, env)
    entry = _entry(f.op, f.domain)
    with np.errstate(all="ignore"):
        res = entry.oracle(ctx, *ins, **attrs)
    y = np.asarray(res[0] if isinstance(res, tuple) else res, dtype=np.float64)
    tol = node_tolerance(node, ctx, vs, ins, attrs, {f.output: y}, g_types)[f.output]
    return y, tol


def pattern_cases(p: Pattern, seed: int, depth: str = "full") -> list[Case]:
    """Every case of pattern ``p`` (deterministic in ``seed``).

    Per type and opset: the canonical form (every axis at its first value: the form a rewrite
    targets); at depth ``full`` also each one-change deviation (axis, value) -- spread over the
    opsets, so every type sees every deviation once -- and ``p.per_combo`` (default 1) mixed cases
    with several axes changed at once; then one case per near-miss value per type (tag
    ``near_miss``, the opsets taken in turn).  ``smoke``: the canonical cases only."""
    out = []
    devs = _deviations(p)
    n_mixed = p.per_combo or 1
    for t in p.types:
        for oi, o in enumerate(p.opsets):
            out.append(build_case(p, _canonical(p), t, o, registry.case_rng(seed, p.name, t, o, "canonical")))
            if depth != "full":
                continue
            for i in range(oi, len(devs), len(p.opsets)):
                axis, val = devs[i]
                rng = registry.case_rng(seed, p.name, t, o, axis, str(val))
                out.append(build_case(p, {**_canonical(p), axis: val}, t, o, rng))
            for k in range(n_mixed):
                rng = registry.case_rng(seed, p.name, t, o, "mixed", k)
                out.append(build_case(p, _mixed(p, oi + 1 + k), t, o, rng))
    if depth == "full":
        j = 0
        for axis, vals in sorted(p.near_misses.items()):
            for val in vals:
                for t in p.types:
                    o = p.opsets[j % len(p.opsets)]
                    j += 1
                    rng = registry.case_rng(seed, p.name, "near-miss", axis, str(val), t)
                    values = {**_canonical(p), axis: val}
                    out.append(build_case(p, values, t, o, rng, near_miss=f"{axis}={_label_value(val)}"))
    return out


def register_patterns(patterns, family: str) -> None:
    """Register each pattern's generator (:func:`conformance.registry.register`, domain
    :data:`PATTERN_DOMAIN`, report family ``"pattern: <family>"``)."""
    for p in patterns:
        PATTERNS[p.name] = p

        def gen(seed: int, depth: str = "full", _p=p) -> list[Case]:
            return pattern_cases(_p, seed, depth)

        gen.__qualname__ = f"pattern_cases_{p.name.replace('.', '_')}"
        gen.__doc__ = f"Cases of the layer pattern {p.name}."
        registry.register(p.name, domain=PATTERN_DOMAIN, version="1", family=f"pattern: {family}", depths=True)(gen)


def is_pattern(case_or_record) -> bool:
    """Whether a case (or a result record / manifest entry dict) is a pattern case."""
    if isinstance(case_or_record, dict):
        return (case_or_record.get("domain") or "") == PATTERN_DOMAIN
    return (getattr(case_or_record, "domain", "") or "") == PATTERN_DOMAIN


__all__ = ["Builder", "Fused", "Node", "PATTERN_DOMAIN", "PATTERNS", "Pattern", "PatternGraph", "build_case",
           "derive_pattern_tolerance", "describe_model", "evaluate", "is_pattern", "pattern_cases",
           "register_patterns"]
