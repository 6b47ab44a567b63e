"""Control flow: If, Loop, Scan and SequenceMap, operators whose attributes are graphs.

Each is an :class:`~conformance.ops.entry.Entry` of family ``values``: its own builder makes
every case (the engine draws tensors only) from the schema -- every version, every type of
the ``V`` constraint (tensors, and from If/Loop-13/16 sequences and optionals), every opset
of the schedule, every attribute given and omitted.  Bodies are built from operators the table
covers (Identity, Add, Sub, Mul, Less); their oracle is the table's own oracles composed
(:mod:`conformance.reference.control_flow`).  A body's tolerance is its nodes' budgets
composed; the bodies here use exact operations (copies; Add/Sub/Mul/Less, correctly rounded by
IEEE 754) on small integers every type holds, so every intermediate is exact and the
tolerance is exact for any evaluation order or fusion (docs/tolerance.md, "Control flow").

Traps the cases hold:

* If: a 0-d ``false`` condition (data set 1 of every case), a 1-element condition, branches of
  different shapes (from 11; version 1 gets same-shape branches), outer-scope values only
  (branches take no inputs), sequence and optional outputs where ``V`` has them;
* Loop: trip count only, condition only, both (the trip count ends it first, or the
  condition does), zero iterations (``M = 0``; a false initial condition), several
  loop-carried values, scan outputs (every iteration's value, the last included),
  outer-scope references;  "neither" is an infinite loop by the text and has no case;
* Scan: ``scan_input_axes`` (negative from 11), ``scan_input_directions``,
  ``scan_output_axes``, ``scan_output_directions``, several states and scan inputs; Scan-8's
  batch axis and ``directions`` (a scan of length 0 has no case: its scan outputs' element
  shape is whatever the body would have produced, which no iteration shows);
* SequenceMap: additional inputs as tensors and as sequences, several outputs, an empty
  sequence.

Error cases: bodies whose inputs or outputs do not match the host operator's signature,
branches with different output counts or types, an axis out of range, a SequenceMap
additional sequence of another length.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import onnx
from onnx import TensorProto, helper

from .. import registry
from ..case import Case, DataSet, Input, Output, type_proto
from ..opspec import op_spec
from ..reference import control_flow as ref
from . import schedule
from .engine import register_entries
from .entry import Entry
from .values_common import EXACT, draw, elem, make_case, seq_shape, smoke, split_type

BOOL, INT64 = TensorProto.BOOL, TensorProto.INT64


def _vi(name: str, kind: str, t: str, shape=None) -> onnx.ValueInfoProto:
    return helper.make_value_info(name, type_proto(kind, elem(t), shape))


def _node(op: str, ins: list[str], outs: list[str]) -> onnx.NodeProto:
    return helper.make_node(op, ins, outs)


def _kinds(vs, param: str = "V") -> list[tuple[str, str]]:
    out = []
    for t in vs.type_constraints[param]:
        try:
            out.append(split_type(t))
        except ValueError:
            continue
    return out


def _rng(seed, op, *key):
    return registry.case_rng(seed, op, *map(str, key))


def _value(rng, kind: str, t: str, shape=(2, 3)):
    inner = kind.replace("optional_", "")
    if inner == "sequence":
        return [draw(rng, t, shape, special=True), draw(rng, t, (1,) + tuple(shape[1:]))]
    return draw(rng, t, shape, special=True)


def _shape_of(v):
    return seq_shape(v) if isinstance(v, list) else (None if v is None else tuple(np.shape(v)))


def _in(name: str, kind: str, t: str, v, outer: bool = False) -> Input:
    return Input(name, elem(t), _shape_of(v), kind=kind, outer=outer)


def _out(name: str, kind: str, t: str, shape=None) -> Output:
    return Output(name, elem(t), EXACT, shape=shape, kind=kind)


def _arith_types(opset: int) -> list[str]:
    """Element types of the arithmetic bodies: Add/Sub/Mul/Less take integers from opset 9."""
    return ["float", "double", "int32", "int64"] if opset >= 9 else ["float", "double"]


def _gen(op: str, build: Callable) -> Callable[[int, str], list[Case]]:
    def fn(seed: int, depth: str = "full") -> list[Case]:
        made = build(seed)
        return smoke(made) if depth == "smoke" else made

    fn.__qualname__ = f"value_cases_{op}"
    return fn


def _versions(op: str):
    spec = op_spec(op)
    for v, vs in spec.versions.items():
        yield v, vs, schedule.opsets(spec, v)


def _identity_takes(full: str, opset: int) -> bool:
    """Whether Identity, as in force at ``opset``, takes values of the type ``full``
    (``seq(tensor(float))``...): the bodies copy their sequence and optional values with it."""
    spec = op_spec("Identity")
    since = max(v for v in spec.versions if v <= opset)
    vs = spec.versions[since]
    return full in vs.type_constraints[vs.inputs[0].type_str]


def _full(kind: str, t: str) -> str:
    tensor = f"tensor({t})"
    return {"tensor": tensor, "sequence": f"seq({tensor})", "optional_tensor": f"optional({tensor})",
            "optional_sequence": f"optional(seq({tensor}))"}[kind]


def _body_opset(op: str, version: int, kind: str, t: str, preferred: int) -> int | None:
    """The opset a case of ``op``-``version`` whose body copies a ``kind`` of ``t`` imports:
    ``preferred`` when Identity takes the type there, else the first opset of the version's
    schedule where it does; ``None`` where none does."""
    opsets = schedule.opsets(op_spec(op), version)
    for o in [preferred] + opsets:
        if _identity_takes(_full(kind, t), o):
            return o
    return None


def _body_filter(op: str):
    """``type_filter`` of If and Loop: a sequence or optional ``V`` that no body of table
    operators can yield at any opset of the version (a body output must be a node's output,
    and Identity, the one operator copying any value, does not take it)."""
    def rule(version: int, combo) -> str | None:
        t = combo.get("V")
        if t is None or "(" not in t:
            return None
        kind, name = split_type(t)
        if _body_opset(op, version, kind, name, schedule.opsets(op_spec(op), version)[0]) is None:
            return ("no body of table operators yields this sequence or optional type: a graph output must be a "
                    "node's output, and Identity (the operator that copies sequences and optionals) does not take "
                    "it at any opset of the version")
        return None
    return rule


def _union(a, b):
    """The declared shape of an output that is ``a`` or ``b`` (``None`` dims where they differ)."""
    if a is None or b is None or len(a) != len(b):
        return None
    return tuple(x if x == y else None for x, y in zip(a, b))


# ----------------------------------------------------------------------------- If
def _if(seed: int) -> list[Case]:
    op, out = "If", []
    for v, vs, opsets in _versions(op):
        for k, (kind, t) in enumerate(_kinds(vs)):
            opset = _body_opset(op, v, kind, t, opsets[k % len(opsets)])
            if opset is None:  # declared by the entry's type_filter
                continue
            rng = _rng(seed, op, v, kind, t)
            x = _value(rng, kind, t)
            y = _value(rng, kind, t, (3,) if v >= 11 else (2, 3))
            if kind.startswith("optional_") and k % 2:
                y = None  # an absent optional from the else branch
            then_b = ref.graph("then", [_node("Identity", ["x"], ["then_out"])], [], [_vi("then_out", kind, t)])
            else_b = ref.graph("else", [_node("Identity", ["y"], ["else_out"])], [], [_vi("else_out", kind, t)])
            attrs = {"then_branch": then_b, "else_branch": else_b}
            shape = _union(_shape_of(x), _shape_of(y)) if kind == "tensor" else None
            dss = []
            for c in (True, False):  # data set 1: a 0-d false
                cond = np.array(c)
                dss.append(DataSet({"cond": cond, "x": x, "y": y},
                                   {"outputs_0": ref.if_(cond, then_b, else_b, {"x": x, "y": y}, opset)[0]}))
            out.append(make_case(op, v, opset, inputs=[Input("cond", BOOL, ()), _in("x", kind, t, x, True),
                                                       _in("y", kind, t, y, True)],
                                 outputs=[_out("outputs_0", kind, t, shape)], datasets=dss, attrs=attrs,
                                 tags={"dtype": t, "kind": kind, "body": "identity", "datasets": 2},
                                 label=f"{kind}/{t}/outer-scope"))
        opset = opsets[-1]
        for j, t in enumerate(_arith_types(opset)[:2 if v < 13 else 4]):
            rng = _rng(seed, op, v, "arith", t)
            x, y = draw(rng, t, (2, 3)), draw(rng, t, (2, 3))
            then_b = ref.graph("then", [_node("Add", ["x", "y"], ["s"]), _node("Identity", ["x"], ["a"])], [],
                               [_vi("s", "tensor", t), _vi("a", "tensor", t)])
            else_b = ref.graph("else", [_node("Mul", ["x", "y"], ["p"]), _node("Identity", ["y"], ["b"])], [],
                               [_vi("p", "tensor", t), _vi("b", "tensor", t)])
            attrs = {"then_branch": then_b, "else_branch": else_b}
            dss = []
            for c in ([True], [False]):  # a 1-element condition
                cond = np.array(c)
                res = ref.if_(cond, then_b, else_b, {"x": x, "y": y}, opset)
                dss.append(DataSet({"cond": cond, "x": x, "y": y}, {"outputs_0": res[0], "outputs_1": res[1]}))
            out.append(make_case(op, v, opsets[j % len(opsets)], inputs=[Input("cond", BOOL, (1,)),
                                                                        _in("x", "tensor", t, x, True),
                                                                        _in("y", "tensor", t, y, True)],
                                 outputs=[_out("outputs_0", "tensor", t, (2, 3)), _out("outputs_1", "tensor", t, (2, 3))],
                                 datasets=dss, attrs=attrs,
                                 tags={"dtype": t, "kind": "tensor", "body": "add|mul", "datasets": 2},
                                 label=f"tensor/{t}/add-mul"))
        x = draw(_rng(seed, op, v, "err"), "float", (2,))
        two = ref.graph("then", [_node("Identity", ["x"], ["a"]), _node("Identity", ["x"], ["b"])], [],
                        [_vi("a", "tensor", "float"), _vi("b", "tensor", "float")])
        one = ref.graph("else", [_node("Identity", ["x"], ["c"])], [], [_vi("c", "tensor", "float")])
        xi = np.array([1, 2], np.int32)
        other = ref.graph("else", [_node("Identity", ["xi"], ["c"])], [], [_vi("c", "tensor", "int32")])
        for tag, then_b, else_b, why in (
                ("output-count", two, one, "then_branch yields 2 outputs, else_branch 1: both must produce the "
                                           "If's outputs"),
                ("output-type", one, other, "then_branch yields float, else_branch int32: the branches' outputs "
                                            "must have one type V")):
            out.append(make_case(op, v, opsets[0], inputs=[Input("cond", BOOL, ()), _in("x", "tensor", "float", x, True),
                                                           _in("xi", "tensor", "int32", xi, True)],
                                 outputs=[Output("outputs_0", elem("float"), shape=(2,))],
                                 datasets=[DataSet({"cond": np.array(True), "x": x, "xi": xi})],
                                 attrs={"then_branch": then_b, "else_branch": else_b},
                                 tags={"dtype": "float", "error": tag}, label=f"error/{tag}",
                                 expect_error=f"If: {why}"))
    return out


# ----------------------------------------------------------------------------- Loop
def _loop_body(kind: str, t: str, *, cond_node: tuple | None = None, add: bool = False, scan: bool = True,
               counter: bool = False) -> onnx.GraphProto:
    """A Loop body: inputs (iteration_num, cond_in, [c_in,] v_in); ``cond_out`` is cond_in copied,
    or ``Less(c_out, limit)`` (``cond_node``) on a float counter ``c`` stepped by ``one``
    (outer scope); ``v_out`` is ``v_in`` copied, or ``Add(v_in, step)`` (outer scope); the scan
    output is ``v_out``."""
    nodes, ins, outs = [], [helper.make_tensor_value_info("iteration_num", INT64, []),
                            helper.make_tensor_value_info("cond_in", BOOL, [])], []
    if counter:
        ins.append(_vi("c_in", "tensor", "float", ()))
        nodes.append(_node("Add", ["c_in", "one"], ["c_out"]))
    nodes.append(_node("Less", ["c_out", "limit"], ["cond_out"]) if cond_node else
                 _node("Identity", ["cond_in"], ["cond_out"]))
    outs.append(helper.make_tensor_value_info("cond_out", BOOL, []))
    if counter:
        outs.append(_vi("c_out", "tensor", "float", ()))
    ins.append(_vi("v_in", kind, t))
    nodes.append(_node("Add", ["v_in", "step"], ["v_out"]) if add else _node("Identity", ["v_in"], ["v_out"]))
    outs.append(_vi("v_out", kind, t))
    if scan:
        nodes.append(_node("Identity", ["v_out"], ["scan_out"]))
        outs.append(_vi("scan_out", "tensor", t))
    return ref.graph("body", nodes, ins, outs)


def _loop_case(op, v, opset, *, t, kind, body, M, cond, v_init: list, outer: dict, tags, label,
               expect_error=None) -> Case:
    inputs = [Input("M", INT64, (), present=M is not None), Input("cond", BOOL, (), present=cond is not None)]
    feed = {}
    if M is not None:
        feed["M"] = np.array(M, np.int64)
    if cond is not None:
        feed["cond"] = np.array(cond)
    for j, (vk, vt, val) in enumerate(v_init):
        inputs.append(_in(f"v_initial_{j}", vk, vt, val))
        feed[f"v_initial_{j}"] = val
    for name, val in outer.items():  # graph inputs the body names from the outer scope
        inputs.append(Input(name, elem(_tname(val)), tuple(val.shape), outer=True))
        feed[name] = val
    n_out = len(body.output) - 1
    outputs, expected = [], {}
    if expect_error is None:
        res = ref.loop(body, feed.get("M"), feed.get("cond"), [val for _, _, val in v_init], outer, opset)
        for j, r in enumerate(res):
            vk = v_init[j][0] if j < len(v_init) else "tensor"
            vt = v_init[j][1] if j < len(v_init) else t
            outputs.append(_out(f"v_final_and_scan_outputs_{j}", vk, vt, _shape_of(r) if vk == "tensor" else None))
            expected[f"v_final_and_scan_outputs_{j}"] = r
    else:
        outputs = [Output(f"v_final_and_scan_outputs_{j}", elem(t), kind=kind) for j in range(n_out)]
    return make_case(op, v, opset, inputs=inputs, outputs=outputs, datasets=[DataSet(feed, expected)],
                     attrs={"body": body}, tags=tags, label=label, expect_error=expect_error)


def _tname(a: np.ndarray) -> str:
    from .. import dtypes

    return dtypes.type_name(dtypes.elem_type(a.dtype))


def _loop(seed: int) -> list[Case]:
    op, out = "Loop", []
    for v, vs, opsets in _versions(op):
        for k, (kind, t) in enumerate(_kinds(vs)):
            opset = _body_opset(op, v, kind, t, opsets[k % len(opsets)])
            if opset is None:  # declared by the entry's type_filter
                continue
            x = _value(_rng(seed, op, v, kind, t), kind, t)
            scan = kind == "tensor"
            body = _loop_body(kind, t, scan=scan)
            # both M and cond given (each binds a type parameter); the trip count ends it
            out.append(_loop_case(op, v, opset, t=t, kind=kind, body=body, M=2, cond=True, v_init=[(kind, t, x)],
                                  outer={}, tags={"dtype": t, "kind": kind, "loop": "both", "iterations": 2},
                                  label=f"{kind}/{t}/carry"))
        for j, t in enumerate(_arith_types(opsets[-1])):
            opset = opsets[(j + 1) % len(opsets)] if t == "float" else opsets[-1]
            rng = _rng(seed, op, v, "arith", t)
            x, step = draw(rng, t, (2, 3)), draw(rng, t, (2, 3))
            one, limit = np.array(1.0, np.float32), np.array(3.0, np.float32)
            zero = np.array(0.0, np.float32)
            variants = [  # tag, M, cond, counter limit (None: no counter), scan
                ("trip-count", 3, None, None, True),
                ("condition", None, True, 3.0, True),
                ("both-trip-count-ends", 2, True, 10.0, True),
                ("both-condition-ends", 10, True, 2.0, True),
                ("zero-trip-count", 0, True, None, False),
                ("false-condition", 5, False, None, False),
            ]
            if t != "float":
                variants = variants[:1] + variants[2:3]
            for tag, M, cond, lim, scan in variants:
                counter = lim is not None
                body = _loop_body("tensor", t, cond_node=counter or None, add=True, scan=scan, counter=counter)
                outer = {"step": step}
                v_init = [("tensor", t, x)]
                if counter:
                    outer.update({"one": one, "limit": np.array(lim, np.float32)})
                    v_init = [("tensor", "float", zero)] + v_init
                out.append(_loop_case(op, v, opset, t=t, kind="tensor", body=body, M=M, cond=cond, v_init=v_init,
                                      outer=outer, tags={"dtype": t, "kind": "tensor", "loop": tag,
                                                         "carried": len(v_init), "scan": int(scan)},
                                      label=f"tensor/{t}/{tag}"))
        # errors: a body whose signature does not match the Loop's
        x = draw(_rng(seed, op, v, "err"), "float", (2,))
        no_cond = ref.graph("body", [_node("Identity", ["v_in"], ["v_out"]), _node("Identity", ["i"], ["c"])],
                            [helper.make_tensor_value_info("i", INT64, []), _vi("v_in", "tensor", "float")],
                            [_vi("c", "tensor", "bool"), _vi("v_out", "tensor", "float")])
        int_cond = ref.graph("body", [_node("Identity", ["v_in"], ["v_out"]), _node("Identity", ["i"], ["c"])],
                             [helper.make_tensor_value_info("i", INT64, []),
                              helper.make_tensor_value_info("cond_in", BOOL, []), _vi("v_in", "tensor", "float")],
                             [helper.make_tensor_value_info("c", INT64, []), _vi("v_out", "tensor", "float")])
        for tag, body, why in (("body-inputs", no_cond, "the body takes 2 inputs; a Loop with 1 loop-carried value "
                                                        "needs 2 + 1 (iteration_num, condition, the value)"),
                               ("body-condition-type", int_cond, "the body's first output (the condition) is "
                                                                 "int64, not bool")):
            out.append(_loop_case(op, v, opsets[0], t="float", kind="tensor", body=body, M=2, cond=None,
                                  v_init=[("tensor", "float", x)], outer={}, tags={"dtype": "float", "error": tag},
                                  label=f"error/{tag}", expect_error=f"Loop: {why}"))
    return out


# ----------------------------------------------------------------------------- Scan
def _scan_body(t: str, n_states: int, n_scan: int, kind: str = "cumsum") -> onnx.GraphProto:
    """A Scan body: states ``s{i}``, scan elements ``x{j}``; ``identity``: each state becomes the
    last scan element and each scan output is the element; ``cumsum``: ``s0 += x0`` (and
    ``s1 -= x0``), the scan outputs are ``s0`` and, with two scan inputs, ``x0 * x1``."""
    ins = [_vi(f"s{i}_in", "tensor", t) for i in range(n_states)] + [_vi(f"x{j}", "tensor", t) for j in range(n_scan)]
    nodes, outs = [], []
    if kind == "identity":
        for i in range(n_states):
            nodes.append(_node("Identity", ["x0"], [f"s{i}_out"]))
        for j in range(n_scan):
            nodes.append(_node("Identity", [f"x{j}"], [f"y{j}"]))
    else:
        nodes.append(_node("Add", ["s0_in", "x0"], ["s0_out"]))
        if n_states > 1:
            nodes.append(_node("Sub", ["s1_in", "x0"], ["s1_out"]))
        nodes.append(_node("Identity", ["s0_out"], ["y0"]))
        if n_scan > 1:
            nodes.append(_node("Mul", ["x0", "x1"], ["y1"]))
    outs = [_vi(f"s{i}_out", "tensor", t) for i in range(n_states)] + \
           [_vi(f"y{j}", "tensor", t) for j in range(n_scan)]
    return ref.graph("body", nodes, ins, outs)


def _scan_case(op, v, opset, t, body, states, xs, attrs, tags, label, expect_error=None) -> Case:
    names = [f"initial_state_and_scan_inputs_{j}" for j in range(len(states) + len(xs))]
    vals = list(states) + list(xs)
    feed = dict(zip(names, vals))
    lens = None
    if v == 8 and tags.get("sequence_lens"):  # every sequence at its full length
        lens = np.full(xs[0].shape[0], xs[0].shape[1], np.int64)
        feed["sequence_lens"] = lens
    inputs = ([Input("sequence_lens", INT64, (len(lens),) if lens is not None else (), present=lens is not None)]
              if v == 8 else []) + [Input(n, elem(t), tuple(a.shape)) for n, a in zip(names, vals)]
    outputs, expected = [], {}
    n_out = len(body.output)
    if expect_error is None:
        a = dict(attrs)
        if v == 8:
            res = ref.scan8(body, vals, a["num_scan_inputs"], a.get("directions"), opset=opset)
        else:
            res = ref.scan(body, vals, a["num_scan_inputs"], a.get("scan_input_axes"), a.get("scan_input_directions"),
                           a.get("scan_output_axes"), a.get("scan_output_directions"), opset=opset)
        for j, r in enumerate(res):
            outputs.append(_out(f"final_state_and_scan_outputs_{j}", "tensor", t, tuple(r.shape)))
            expected[f"final_state_and_scan_outputs_{j}"] = r
    else:
        outputs = [Output(f"final_state_and_scan_outputs_{j}", elem(t)) for j in range(n_out)]
    return make_case(op, v, opset, inputs=inputs, outputs=outputs, datasets=[DataSet(feed, expected)],
                     attrs={"body": body, **attrs}, tags=tags, label=label, expect_error=expect_error)


def _scan(seed: int) -> list[Case]:
    op, out = "Scan", []
    for v, vs, opsets in _versions(op):
        batch = (2,) if v == 8 else ()
        dir_attr = "directions" if v == 8 else "scan_input_directions"
        for k, (kind, t) in enumerate(_kinds(vs)):
            rng = _rng(seed, op, v, t)
            s, x = draw(rng, t, batch + (2,)), draw(rng, t, batch + (3, 2), special=True)
            attrs = {"num_scan_inputs": 1}
            rev = k % 2 == 1
            if rev:
                attrs[dir_attr] = [1]
            out.append(_scan_case(op, v, opsets[k % len(opsets)], t, _scan_body(t, 1, 1, "identity"), [s], [x], attrs,
                                  {"dtype": t, "scan": "identity", "reverse": int(rev), "sequence_lens": int(v == 8)},
                                  f"{t}/identity{'/reverse' if rev else ''}"))
        opset = opsets[-1]
        for j, t in enumerate(_arith_types(opset)):
            rng = _rng(seed, op, v, "arith", t)
            s = draw(rng, t, batch + (2,))
            x = draw(rng, t, batch + (3, 2))
            xt = draw(rng, t, batch + (2, 3))
            variants = [  # tag, states, scan inputs, attrs, body (n_states, n_scan)
                ("default", [s], [x], {}, (1, 1)),
                ("input-direction", [s], [x], {dir_attr: [1]}, (1, 1)),
                ("explicit-default", [s], [x], {dir_attr: [0]}, (1, 1)),
                ("two-states", [s, s], [x], {}, (2, 1)),
            ]
            if v >= 9:
                variants += [
                    ("input-axis", [s], [xt], {"scan_input_axes": [1]}, (1, 1)),
                    # square: scanning rows instead of columns gives the same shapes, other values
                    ("input-axis-square", [draw(rng, t, (3,))], [draw(rng, t, (3, 3))], {"scan_input_axes": [1]},
                     (1, 1)),
                    ("output-axis", [s], [x], {"scan_output_axes": [1]}, (1, 1)),
                    ("output-direction", [s], [x], {"scan_output_directions": [1]}, (1, 1)),
                    ("two-inputs", [s], [x, xt], {"scan_input_axes": [0, 1], "scan_input_directions": [0, 1],
                                                 "scan_output_axes": [0, 1], "scan_output_directions": [1, 0]}, (1, 2)),
                    ("explicit-defaults", [s], [x], {"scan_input_axes": [0], "scan_input_directions": [0],
                                                     "scan_output_axes": [0], "scan_output_directions": [0]}, (1, 1)),
                ]
            if v >= 11:
                variants += [("negative-axes", [s], [xt], {"scan_input_axes": [-1], "scan_output_axes": [-1]}, (1, 1))]
            if v == 8:
                variants += [("two-inputs", [s], [x, x], {"directions": [0, 1]}, (1, 2))]
            if t != "float":
                variants = variants[:2]
            for i, (tag, st, xs, a, (ns, nx)) in enumerate(variants):
                attrs = {"num_scan_inputs": len(xs), **a}
                out.append(_scan_case(op, v, opsets[(i + j) % len(opsets)] if t == "float" else opset, t,
                                      _scan_body(t, ns, nx), st, xs, attrs,
                                      {"dtype": t, "scan": tag, "states": len(st), "scan_inputs": len(xs)},
                                      f"{t}/{tag}"))
        x = draw(_rng(seed, op, v, "err"), "float", batch + (3, 2))
        s = draw(_rng(seed, op, v, "errs"), "float", batch + (2,))
        errs = [("body-inputs", _scan_body("float", 2, 1), [s], [x], {"num_scan_inputs": 1},
                 "the body takes 3 inputs (2 states + 1 scan element); the Scan gives 1 state and 1 scan input")]
        if v >= 9:
            errs.append(("input-axis", _scan_body("float", 1, 1), [s], [x], {"num_scan_inputs": 1,
                                                                              "scan_input_axes": [2]},
                         "scan_input_axes [2] outside the rank-2 scan input's axes"))
        for tag, body, st, xs, attrs, why in errs:
            out.append(_scan_case(op, v, opsets[0], "float", body, st, xs, attrs, {"dtype": "float", "error": tag},
                                  f"error/{tag}", expect_error=f"Scan: {why}"))
    return out


# ----------------------------------------------------------------------------- SequenceMap
def _sequence_map(seed: int) -> list[Case]:
    op, out = "SequenceMap", []
    for v, vs, opsets in _versions(op):
        s_types = [t for k, t in _kinds(vs, "S") if k == "sequence"]
        v_kinds = _kinds(vs, "V")  # every (S, V) pair is a model: the body takes an element and a V
        for k, t in enumerate(s_types):
            rng = _rng(seed, op, v, t)
            seq = [draw(rng, t, (2, 3), special=True), draw(rng, t, (1, 3)), draw(rng, t, (3, 1))]
            extras = [("alone", None)] + [(f"{ek}-extra-{u}", (ek, u)) for ek, u in v_kinds] + [("empty", None)]
            for j, (tag, extra) in enumerate(extras):
                if tag == "empty" and k % 3:
                    continue
                ins = [_vi("x", "tensor", t)]
                nodes = [_node("Identity", ["x"], ["y0"])]
                outs = [_vi("y0", "tensor", t)]
                inputs = [Input("input_sequence", elem(t), seq_shape(seq) if tag != "empty" else None, kind="sequence")]
                data = [] if tag == "empty" else seq
                feed, extra_vals, types = {"input_sequence": data}, [], [t]
                if extra is not None:
                    ek, u = extra
                    erng = _rng(seed, op, v, t, tag)
                    ev = draw(erng, u, (2,)) if ek == "tensor" else [draw(erng, u, (1,)), draw(erng, u, (2,)),
                                                                      draw(erng, u, (0,))]
                    ins.append(_vi("a", "tensor", u))
                    if u == t:  # every out_sequence has the one type S: a second output only of t
                        nodes.append(_node("Identity", ["a"], ["y1"]))
                        outs.append(_vi("y1", "tensor", u))
                        types.append(u)
                    inputs.append(_in("additional_inputs_0", ek, u, ev))
                    feed["additional_inputs_0"] = ev
                    extra_vals.append(ev)
                body = ref.graph("body", nodes, ins, outs)
                res = ref.sequence_map(body, data, extra_vals, opset=opsets[0])
                outputs = [_out(f"out_sequence_{i}", "sequence", ty, seq_shape(r))
                           for i, (r, ty) in enumerate(zip(res, types))]
                out.append(make_case(op, v, opsets[(k + j) % len(opsets)], inputs=inputs, outputs=outputs,
                                     datasets=[DataSet(feed, {o.name: r for o, r in zip(outputs, res)})],
                                     attrs={"body": body},
                                     tags={"dtype": t, "extra": tag, "outputs": len(outputs)}, label=f"{t}/{tag}"))
        for j, t in enumerate(("float", "int32", "int64", "double")):
            rng = _rng(seed, op, v, "arith", t)
            seq = [draw(rng, t, (2, 3)), draw(rng, t, (1, 3)), draw(rng, t, (3, 1))]
            a = draw(rng, t, (1,))
            body = ref.graph("body", [_node("Add", ["x", "a"], ["y0"]), _node("Mul", ["x", "x"], ["y1"])],
                             [_vi("x", "tensor", t), _vi("a", "tensor", t)], [_vi("y0", "tensor", t),
                                                                              _vi("y1", "tensor", t)])
            res = ref.sequence_map(body, seq, [a], opset=opsets[-1])
            outputs = [_out(f"out_sequence_{i}", "sequence", t, seq_shape(r)) for i, r in enumerate(res)]
            out.append(make_case(op, v, opsets[j % len(opsets)], inputs=[_in("input_sequence", "sequence", t, seq),
                                                                         _in("additional_inputs_0", "tensor", t, a)],
                                 outputs=outputs, datasets=[DataSet({"input_sequence": seq, "additional_inputs_0": a},
                                                                    {o.name: r for o, r in zip(outputs, res)})],
                                 attrs={"body": body}, tags={"dtype": t, "extra": "add-mul", "outputs": 2},
                                 label=f"{t}/add-mul"))
        seq = [draw(_rng(seed, op, v, "err"), "float", (2,)) for _ in range(3)]
        short = seq[:2]
        body = ref.graph("body", [_node("Add", ["x", "a"], ["y0"])], [_vi("x", "tensor", "float"),
                                                                     _vi("a", "tensor", "float")],
                         [_vi("y0", "tensor", "float")])
        one_in = ref.graph("body", [_node("Identity", ["x"], ["y0"])], [_vi("x", "tensor", "float")],
                           [_vi("y0", "tensor", "float")])
        for tag, b, extra_kind, why in (
                ("sequence-length", body, "sequence", "an additional sequence of length 2 with an input sequence of 3: "
                                                      "'must have the same number of elements'"),
                ("body-inputs", one_in, "tensor", "the body takes 1 input; the node gives 2 (the element and one "
                                                  "additional input)")):
            extra = short if extra_kind == "sequence" else seq[0]
            out.append(make_case(op, v, opsets[0], inputs=[_in("input_sequence", "sequence", "float", seq),
                                                           _in("additional_inputs_0", extra_kind, "float", extra)],
                                 outputs=[Output("out_sequence_0", elem("float"), kind="sequence")],
                                 datasets=[DataSet({"input_sequence": seq, "additional_inputs_0": extra})],
                                 attrs={"body": b}, tags={"dtype": "float", "error": tag}, label=f"error/{tag}",
                                 expect_error=f"SequenceMap: {why}"))
    return out


# ----------------------------------------------------------------------------- the table
def _no_filter(version, combo):
    return None


def _seqmap_filter(version, combo):
    """SequenceMap's S is seq(tensor(*)); V may be any tensor or sequence: every pair is a model
    (the body takes an element of S and a V), so none is filtered."""
    return None


ENTRIES = [
    Entry("If", lambda ctx, cond, **a: ref.if_(cond, a["then_branch"], a["else_branch"], {}, ctx.opset),
          family="values", extra_cases=_gen("If", _if), type_filter=_body_filter("If")),
    Entry("Loop", lambda ctx, M=None, cond=None, *v, **a: ref.loop(a["body"], M, cond, list(v), {}, ctx.opset),
          family="values", extra_cases=_gen("Loop", _loop), type_filter=_body_filter("Loop")),
    Entry("Scan", lambda ctx, *xs, **a: ref.scan(a["body"], list(xs), a["num_scan_inputs"]),
          family="values", extra_cases=_gen("Scan", _scan), type_filter=_no_filter),
    Entry("SequenceMap", lambda ctx, s, *extra, **a: ref.sequence_map(a["body"], s, list(extra)),
          family="values", extra_cases=_gen("SequenceMap", _sequence_map), type_filter=_seqmap_filter),
]

register_entries(ENTRIES, "control flow")
