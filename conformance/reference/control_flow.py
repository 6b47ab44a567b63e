"""Oracles of the control-flow operators If, Loop, Scan and SequenceMap (ONNX operator text,
opsets 1-28), with the suite's own oracles composed for their bodies.

A body (a ``GraphProto`` attribute) is evaluated node by node by :func:`run_graph`: each node's
oracle is the operator table's (:data:`conformance.ops.engine.ENTRIES`, exact: float64 for
floating inputs, Python ints for integers), rounded to the node's output type as a runtime
stores it between nodes.  A body may name values of the enclosing graph (outer-scope
references, ``outer``).  The bodies of the generated cases use Identity, Add, Sub, Mul and
Less on data whose every intermediate value is exactly representable in the type, so every
node's rounding is exact and the composed result is exact whatever order or fusion a runtime
uses (docs/tolerance.md, "Control flow").

Values follow :mod:`conformance.case`: a tensor is an ndarray, a sequence a ``list``, an
optional ``None`` or its value.
"""

from __future__ import annotations

import numpy as np
import onnx
from onnx import helper

from .. import dtypes

#: Body operators :func:`run_graph` evaluates (each through the operator table's oracle, except
#: Identity, which copies any value kind).
BODY_OPS = ("Identity", "Add", "Sub", "Mul", "Less")


def _exact(a: np.ndarray):
    """The exact value the table's oracles take: float64 for floating types, Python ints for
    integers (object arrays), booleans as they are."""
    if a.dtype.kind == "b":
        return a
    if dtypes.is_float(a.dtype):
        return a.astype(np.float64)
    return a.astype(object)


def _node(node: onnx.NodeProto, ins: list, opset: int) -> list:
    """Outputs of one body node (:data:`BODY_OPS`).

    Raises:
        NotImplementedError: an operator outside :data:`BODY_OPS`.
    """
    op = node.op_type
    if op == "Identity":
        v = ins[0]
        if v is None:
            return [None]
        return [[np.array(x, copy=True) for x in v] if isinstance(v, list) else np.array(v, copy=True)]
    if op not in BODY_OPS:
        raise NotImplementedError(f"body operator {op} is not evaluated by the control-flow oracle")
    from ..ops import engine
    from ..ops.entry import Ctx
    from ..registry import _load

    _load()
    entry = engine.ENTRIES[("", op)]
    spec_types = {f"i{k}": dtypes.type_name(dtypes.elem_type(x.dtype)) for k, x in enumerate(ins)}
    ctx = Ctx(op=op, version=opset, opset=opset, types=spec_types)
    with np.errstate(all="ignore"):
        out = np.asarray(entry.oracle(ctx, *[_exact(x) for x in ins]))
    dt = np.dtype(bool) if op == "Less" else ins[0].dtype
    return [out.astype(dt) if out.dtype != object else np.array(out.tolist(), dtype=dt).reshape(out.shape)]


def run_graph(graph: onnx.GraphProto, feeds: list, outer: dict, opset: int) -> list:
    """Evaluate ``graph`` (a body) on ``feeds`` (its formal inputs in order), names of the
    enclosing scopes resolved in ``outer``; return its outputs in order.

    Raises:
        KeyError: a name no node, input or enclosing scope defines.
    """
    env = dict(outer)
    for vi, v in zip(graph.input, feeds):
        env[vi.name] = v
    for t in graph.initializer:
        env[t.name] = onnx.numpy_helper.to_array(t)
    for node in graph.node:
        outs = _node(node, [env[n] for n in node.input], opset)
        env.update(zip(node.output, outs))
    return [env[o.name] for o in graph.output]


def if_(cond: np.ndarray, then_branch: onnx.GraphProto, else_branch: onnx.GraphProto, outer: dict,
        opset: int) -> list:
    """If-1..25: the outputs of ``then_branch`` when the single element of ``cond`` is true
    (a 0-d or a 1-element tensor), else ``else_branch``'s."""
    flag = bool(np.asarray(cond).reshape(-1)[0])
    return run_graph(then_branch if flag else else_branch, [], outer, opset)


def loop(body: onnx.GraphProto, M, cond, v_initial: list, outer: dict, opset: int) -> list:
    """Loop-1..25 (the text's pseudo-code)::

        for (i = 0; (M absent or i < M) and cond; ++i) {
            cond, v..., scan... = body(i, cond, v...)
        }

    Returns the final loop-carried values, then each scan output: the per-iteration values
    stacked along a new first axis (at least one iteration must have run for a scan output).

    Raises:
        ValueError: both ``M`` and ``cond`` absent (an infinite loop by the text), or scan
            outputs after zero iterations (their shape is not defined).
    """
    if M is None and cond is None:
        raise ValueError("Loop with neither a trip count nor a condition never ends")
    n_v = len(v_initial)
    values, scans = list(v_initial), []
    go = True if cond is None else bool(np.asarray(cond).reshape(-1)[0])
    i = 0
    while (M is None or i < int(np.asarray(M).reshape(-1)[0])) and go:
        outs = run_graph(body, [np.array(i, np.int64), np.array(go)] + values, outer, opset)
        go = bool(np.asarray(outs[0]).reshape(-1)[0])
        values = outs[1:1 + n_v]
        scans.append(outs[1 + n_v:])
        i += 1
    k = len(body.output) - 1 - n_v
    if k and not scans:
        raise ValueError("Loop scan outputs after zero iterations have no defined shape")
    return values + [np.stack([s[j] for s in scans]) for j in range(k)]


def scan(body: onnx.GraphProto, inputs: list, num_scan_inputs: int, scan_input_axes=None,
         scan_input_directions=None, scan_output_axes=None, scan_output_directions=None, *, outer=None,
         opset: int = 9) -> list:
    """Scan-9..25: the first ``len(inputs) - num_scan_inputs`` inputs are the initial states,
    the rest are scanned along ``scan_input_axes`` (default 0; negative from 11) in
    ``scan_input_directions`` (1: from the end); each iteration's scan outputs are stacked
    along ``scan_output_axes`` (default 0), appended, or prepended where
    ``scan_output_directions`` is 1.

    Raises:
        ValueError: scan inputs of different lengths along their axes, or an axis out of range.
    """
    m = num_scan_inputs
    n = len(inputs) - m
    states, xs = list(inputs[:n]), []
    for j, x in enumerate(inputs[n:]):
        axis = (scan_input_axes or [0] * m)[j]
        if not -x.ndim <= axis < x.ndim:
            raise ValueError(f"scan_input_axes[{j}] = {axis} outside [-{x.ndim}, {x.ndim - 1}]")
        x = np.moveaxis(x, axis, 0)
        if (scan_input_directions or [0] * m)[j]:
            x = x[::-1]
        xs.append(x)
    if len({x.shape[0] for x in xs}) > 1:
        raise ValueError(f"scan inputs of different lengths {[x.shape[0] for x in xs]}")
    steps = xs[0].shape[0] if xs else 0
    ys = []
    for t in range(steps):
        outs = run_graph(body, states + [x[t] for x in xs], outer or {}, opset)
        states = outs[:n]
        ys.append(outs[n:])
    k = len(body.output) - n
    result = list(states)
    for j in range(k):
        y = np.stack([s[j] for s in ys])
        if (scan_output_directions or [0] * k)[j]:
            y = y[::-1]
        axis = (scan_output_axes or [0] * k)[j]
        r = y.ndim
        if not -r <= axis < r:
            raise ValueError(f"scan_output_axes[{j}] = {axis} outside [-{r}, {r - 1}]")
        result.append(np.ascontiguousarray(np.moveaxis(y, 0, axis % r)))
    return result


def scan8(body: onnx.GraphProto, inputs: list, num_scan_inputs: int, directions=None, *, outer=None,
          opset: int = 8) -> list:
    """Scan-8: every input has a leading batch axis; per batch entry the states and the scan
    inputs (scanned along their axis 1, in ``directions``) go through :func:`scan`, and the
    results are stacked along the batch axis (``sequence_lens`` omitted: every sequence has
    the full length)."""
    batch = inputs[0].shape[0]
    per = [scan(body, [x[b] for x in inputs], num_scan_inputs, None, directions, outer=outer, opset=opset)
           for b in range(batch)]
    return [np.stack([p[j] for p in per]) for j in range(len(per[0]))]


def sequence_map(body: onnx.GraphProto, input_sequence: list, additional_inputs: list, outer=None,
                 opset: int = 17) -> list:
    """SequenceMap-17: ``body`` applied to each tensor of ``input_sequence`` with the
    additional inputs (a tensor as it is, a sequence element by element); each body output
    collected into a sequence.

    Raises:
        ValueError: an additional sequence of another length.
    """
    n = len(input_sequence)
    for a in additional_inputs:
        if isinstance(a, list) and len(a) != n:
            raise ValueError(f"additional sequence of length {len(a)}, input sequence of {n}")
    outs: list[list] = [[] for _ in body.output]
    for i in range(n):
        feeds = [input_sequence[i]] + [a[i] if isinstance(a, list) else a for a in additional_inputs]
        for j, v in enumerate(run_graph(body, feeds, outer or {}, opset)):
            outs[j].append(v)
    return outs


def graph(name: str, nodes: list, inputs: list, outputs: list) -> onnx.GraphProto:
    """``helper.make_graph`` (a body: no initializers)."""
    return helper.make_graph(nodes, name, inputs, outputs)
