"""Sequence and optional operators: SequenceConstruct, SequenceEmpty, SequenceAt, SequenceErase,
SequenceInsert, SequenceLength, SplitToSequence, ConcatFromSequence, Optional,
OptionalHasElement, OptionalGetElement, and Identity's ``seq``/``optional`` types.

Each operator is an :class:`~conformance.ops.entry.Entry` whose cases its own builder makes
(:attr:`~conformance.ops.entry.Entry.extra_cases`: the engine draws tensors only), from the
schema: every version (``onnx.defs``), every element type of the version's constraint, every
attribute given and omitted, every optional input present and omitted, every opset of the
schedule (:func:`conformance.ops.schedule.opsets`, cycled over the types).  Oracles:
:mod:`conformance.reference.sequence`; every output is a copy of input elements, so the
tolerance is exact (:data:`conformance.ops.values_common.EXACT`).

Traps the cases hold (ONNX operator text):

* positions: negative ones count from the back (SequenceInsert ``-1`` inserts *before* the
  last tensor), the ends of the ranges (``-n``, ``n-1``; SequenceInsert's ``n`` appends), an
  omitted position (SequenceErase: the last tensor; SequenceInsert: at the back);
* an empty sequence (SequenceEmpty, erasing the only tensor, inserting into an empty one);
  tensors of different shapes in one sequence; zero-size tensors;
* SplitToSequence: ``split`` omitted (parts of 1, squeezed with ``keepdims=0``), a scalar that
  does not divide the axis (a shorter last part), a 1-D list, ``keepdims=0`` *ignored* when
  ``split`` is given, a negative axis;
* ConcatFromSequence: ``new_axis=1`` stacks (axis up to ``r``, negative down to ``-r-1``);
* Optional with an input and with only the ``type`` attribute (an empty optional);
  OptionalHasElement / OptionalGetElement-18's tensor and sequence inputs and omitted input.

Error cases: positions out of range, a sequence of mixed element types (SequenceConstruct,
SequenceInsert), a split that does not sum to the axis, an axis out of range, and
OptionalGetElement of an empty optional ("It is an error if the input is an empty
optional-type", though the same sentence calls the behaviour undefined).
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from .. import registry
from ..case import Case, DataSet, Input, Output
from ..opspec import op_spec
from ..reference import sequence as ref
from . import schedule
from .engine import register_entries
from .entry import Entry
from .values_common import EXACT, draw, elem, full_type, make_case, position, seq_shape, smoke, split_type, type_attr, \
    types_of


# ----------------------------------------------------------------------------- helpers
def _seq_in(name: str, t: str, value: list) -> Input:
    return Input(name, elem(t), seq_shape(value), kind="sequence")


def _seq_out(name: str, t: str, value: list) -> Output:
    return Output(name, elem(t), EXACT, shape=seq_shape(value), kind="sequence")


def _tensor_in(name: str, t: str, value: np.ndarray) -> Input:
    return Input(name, elem(t), tuple(value.shape))


def _tensor_out(name: str, t: str) -> Output:
    return Output(name, elem(t), EXACT)


def _absent(name: str, t: str) -> Input:
    return Input(name, elem(t), (), present=False)


def _seq_of(rng, t: str, shapes) -> list[np.ndarray]:
    return [draw(rng, t, s, special=(k == 0)) for k, s in enumerate(shapes)]


def _versions(op: str):
    spec = op_spec(op)
    for v, vs in spec.versions.items():
        yield spec, v, vs, schedule.opsets(spec, v)


def _gen(op: str, build: Callable) -> Callable[[int, str], list[Case]]:
    """``fn(seed, depth)`` of an entry's ``extra_cases``: ``build(seed)`` (smoke: :func:`smoke`)."""
    def fn(seed: int, depth: str = "full") -> list[Case]:
        made = build(seed)
        return smoke(made) if depth == "smoke" else made

    fn.__qualname__ = f"value_cases_{op}"
    return fn


def _rng(seed: int, op: str, *key):
    return registry.case_rng(seed, op, *map(str, key))


_SHAPES = {  # element shapes of the sequences the cases feed
    "same": [(2, 3), (2, 3), (2, 3)],
    "ragged": [(2, 3), (1, 3), (3, 1)],
    "zero": [(0, 3), (2, 3)],
    "scalars": [(), (), ()],
    "one": [(4,)],
}


# ----------------------------------------------------------------------------- SequenceConstruct
def _construct(seed: int) -> list[Case]:
    op, out = "SequenceConstruct", []
    for _, v, vs, opsets in _versions(op):
        for k, t in enumerate(types_of(vs, "T")):
            for j, pattern in enumerate(("same", "ragged", "zero", "one", "scalars")):
                if j > 1 and k % 3 != j % 3:  # every type: same and ragged; the rest spread over the types
                    continue
                rng = _rng(seed, op, v, t, pattern)
                xs = _seq_of(rng, t, _SHAPES[pattern])
                names = [f"inputs_{i}" for i in range(len(xs))]
                out.append(make_case(
                    op, v, opsets[(k + j) % len(opsets)],
                    inputs=[_tensor_in(n, t, x) for n, x in zip(names, xs)],
                    outputs=[_seq_out("output_sequence", t, xs)],
                    datasets=[DataSet(dict(zip(names, xs)), {"output_sequence": ref.sequence_construct(*xs)})],
                    tags={"dtype": t, "pattern": pattern, "arity": len(xs)}, label=f"{t}/{pattern}"))
        t2 = [x for x in types_of(vs, "T") if x != "float"][0]
        xs = [draw(_rng(seed, op, v, "mixed"), "float", (2,)), draw(_rng(seed, op, v, "mixed2"), t2, (2,))]
        out.append(make_case(
            op, v, opsets[0],
            inputs=[_tensor_in("inputs_0", "float", xs[0]), _tensor_in("inputs_1", t2, xs[1])],
            outputs=[Output("output_sequence", elem("float"), kind="sequence")],
            datasets=[DataSet({"inputs_0": xs[0], "inputs_1": xs[1]})],
            tags={"dtype": "float", "error": "mixed-types"}, label="error/mixed-types",
            expect_error="SequenceConstruct: 'All tensors must have the same data type' (T is one type "
                         f"for every input); float and {t2} given"))
    return out


# ----------------------------------------------------------------------------- SequenceEmpty
def _empty(seed: int) -> list[Case]:
    op, out = "SequenceEmpty", []
    for _, v, vs, opsets in _versions(op):
        for k, t in enumerate(types_of(vs, "S")):
            attrs = {} if t == "float" else {"dtype": elem(t)}
            out.append(make_case(op, v, opsets[k % len(opsets)], inputs=[],
                                 outputs=[Output("output", elem(t), EXACT, kind="sequence")],
                                 datasets=[DataSet({}, {"output": []})], attrs=attrs,
                                 tags={"dtype": t, "params": "dtype" if attrs else "default"},
                                 label=f"{t}/{'dtype' if attrs else 'default'}"))
        out.append(make_case(op, v, opsets[-1], inputs=[],
                             outputs=[Output("output", elem("float"), EXACT, kind="sequence")],
                             datasets=[DataSet({}, {"output": []})], attrs={"dtype": elem("float")},
                             tags={"dtype": "float", "params": "explicit-default"}, label="float/explicit-default"))
    return out


# ----------------------------------------------------------------------------- SequenceAt
def _at(seed: int) -> list[Case]:
    op, out = "SequenceAt", []
    for _, v, vs, opsets in _versions(op):
        ints = types_of(vs, "I")
        for k, t in enumerate(types_of(vs, "T")):
            pattern = ("ragged", "same", "zero")[k % 3]
            seq = _seq_of(_rng(seed, op, v, t, pattern), t, _SHAPES[pattern])
            n = len(seq)
            for j, p in enumerate((0, n - 1, -1, -n)):
                it = ints[(k + j) % len(ints)]
                out.append(make_case(
                    op, v, opsets[(k + j) % len(opsets)],
                    inputs=[_seq_in("input_sequence", t, seq), _tensor_in("position", it, position(p, it))],
                    outputs=[_tensor_out("tensor", t)],
                    datasets=[DataSet({"input_sequence": seq, "position": position(p, it)},
                                      {"tensor": ref.sequence_at(seq, position(p, it))})],
                    tags={"dtype": t, "position": p, "pattern": pattern, "position_type": it},
                    label=f"{t}/{pattern}/pos{p}/{it}"))
        seq = _seq_of(_rng(seed, op, v, "err"), "float", _SHAPES["same"])
        for p in (len(seq), -len(seq) - 1):
            out.append(make_case(
                op, v, opsets[0], inputs=[_seq_in("input_sequence", "float", seq), _tensor_in("position", "int64",
                                                                                            position(p, "int64"))],
                outputs=[_tensor_out("tensor", "float")],
                datasets=[DataSet({"input_sequence": seq, "position": position(p, "int64")})],
                tags={"dtype": "float", "error": "position"}, label=f"error/position{p}",
                expect_error=f"SequenceAt: position {p} outside the accepted range [-n, n-1] = [-3, 2]"))
    return out


# ----------------------------------------------------------------------------- SequenceErase
def _erase(seed: int) -> list[Case]:
    op, out = "SequenceErase", []
    for _, v, vs, opsets in _versions(op):
        ints = types_of(vs, "I")
        for k, t in enumerate(types_of(vs, "S")):
            pattern = ("ragged", "same", "zero")[k % 3]
            seq = _seq_of(_rng(seed, op, v, t, pattern), t, _SHAPES[pattern])
            n = len(seq)
            for j, p in enumerate((None, 0, -1, -n, n - 1)):
                it = ints[(k + j) % len(ints)]
                ins = [_seq_in("input_sequence", t, seq)]
                feed = {"input_sequence": seq}
                if p is None:
                    ins.append(_absent("position", it))
                else:
                    ins.append(_tensor_in("position", it, position(p, it)))
                    feed["position"] = position(p, it)
                res = ref.sequence_erase(seq, feed.get("position"))
                out.append(make_case(op, v, opsets[(k + j) % len(opsets)], inputs=ins,
                                     outputs=[_seq_out("output_sequence", t, res)],
                                     datasets=[DataSet(feed, {"output_sequence": res})],
                                     tags={"dtype": t, "position": "absent" if p is None else p, "pattern": pattern},
                                     label=f"{t}/{pattern}/pos{'absent' if p is None else p}"
                                           f"{'' if p is None else '/' + it}"))
            if k % 4 == 0:  # erasing the only tensor leaves an empty sequence
                one = _seq_of(_rng(seed, op, v, t, "one"), t, _SHAPES["one"])
                out.append(make_case(op, v, opsets[-1], inputs=[_seq_in("input_sequence", t, one),
                                                                _absent("position", "int64")],
                                     outputs=[Output("output_sequence", elem(t), EXACT, kind="sequence")],
                                     datasets=[DataSet({"input_sequence": one}, {"output_sequence": []})],
                                     tags={"dtype": t, "position": "absent", "pattern": "to-empty"},
                                     label=f"{t}/to-empty"))
        seq = _seq_of(_rng(seed, op, v, "err"), "float", _SHAPES["same"])
        for p in (3, -4):
            out.append(make_case(op, v, opsets[0], inputs=[_seq_in("input_sequence", "float", seq),
                                                           _tensor_in("position", "int64", position(p, "int64"))],
                                 outputs=[Output("output_sequence", elem("float"), kind="sequence")],
                                 datasets=[DataSet({"input_sequence": seq, "position": position(p, "int64")})],
                                 tags={"dtype": "float", "error": "position"}, label=f"error/position{p}",
                                 expect_error=f"SequenceErase: position {p} outside the accepted range [-n, n-1] "
                                              "= [-3, 2]"))
    return out


# ----------------------------------------------------------------------------- SequenceInsert
def _insert(seed: int) -> list[Case]:
    op, out = "SequenceInsert", []
    for _, v, vs, opsets in _versions(op):
        ints = types_of(vs, "I")
        for k, t in enumerate(types_of(vs, "T")):
            pattern = ("ragged", "same", "zero")[k % 3]
            rng = _rng(seed, op, v, t, pattern)
            seq = _seq_of(rng, t, _SHAPES[pattern])
            x = draw(rng, t, (2, 3))
            n = len(seq)
            for j, p in enumerate((None, 0, n, -1, -n, 1)):
                it = ints[(k + j) % len(ints)]
                ins = [_seq_in("input_sequence", t, seq), _tensor_in("tensor", t, x)]
                feed = {"input_sequence": seq, "tensor": x}
                if p is not None:
                    ins.append(_tensor_in("position", it, position(p, it)))
                    feed["position"] = position(p, it)
                res = ref.sequence_insert(seq, x, feed.get("position"))
                out.append(make_case(op, v, opsets[(k + j) % len(opsets)], inputs=ins,
                                     outputs=[_seq_out("output_sequence", t, res)],
                                     datasets=[DataSet(feed, {"output_sequence": res})],
                                     tags={"dtype": t, "position": "absent" if p is None else p, "pattern": pattern},
                                     label=f"{t}/{pattern}/pos{'absent' if p is None else p}"
                                           f"{'' if p is None else '/' + it}"))
            if k % 4 == 1:  # into an empty sequence (fed as a graph input of length 0)
                out.append(make_case(op, v, opsets[-1], inputs=[Input("input_sequence", elem(t), None, kind="sequence"),
                                                                _tensor_in("tensor", t, x)],
                                     outputs=[_seq_out("output_sequence", t, [x])],
                                     datasets=[DataSet({"input_sequence": [], "tensor": x}, {"output_sequence": [x]})],
                                     tags={"dtype": t, "position": "absent", "pattern": "from-empty"},
                                     label=f"{t}/from-empty"))
        seq = _seq_of(_rng(seed, op, v, "err"), "float", _SHAPES["same"])
        x = draw(_rng(seed, op, v, "errx"), "float", (2, 3))
        for p in (4, -4):
            out.append(make_case(op, v, opsets[0], inputs=[_seq_in("input_sequence", "float", seq),
                                                           _tensor_in("tensor", "float", x),
                                                           _tensor_in("position", "int64", position(p, "int64"))],
                                 outputs=[Output("output_sequence", elem("float"), kind="sequence")],
                                 datasets=[DataSet({"input_sequence": seq, "tensor": x,
                                                    "position": position(p, "int64")})],
                                 tags={"dtype": "float", "error": "position"}, label=f"error/position{p}",
                                 expect_error=f"SequenceInsert: position {p} outside the accepted range [-n, n] "
                                              "= [-3, 3]"))
        xi = draw(_rng(seed, op, v, "errt"), "int32", (2, 3))
        out.append(make_case(op, v, opsets[0], inputs=[_seq_in("input_sequence", "float", seq),
                                                       _tensor_in("tensor", "int32", xi)],
                             outputs=[Output("output_sequence", elem("float"), kind="sequence")],
                             datasets=[DataSet({"input_sequence": seq, "tensor": xi})],
                             tags={"dtype": "float", "error": "mixed-types"}, label="error/mixed-types",
                             expect_error="SequenceInsert: \"'tensor' must have the same data type as "
                                          "'input_sequence'\" (an int32 tensor into a float sequence)"))
    return out


# ----------------------------------------------------------------------------- SequenceLength
def _length(seed: int) -> list[Case]:
    op, out = "SequenceLength", []
    for _, v, vs, opsets in _versions(op):
        for k, t in enumerate(types_of(vs, "S")):
            for j, pattern in enumerate(("ragged", "one", "empty")):
                seq = [] if pattern == "empty" else _seq_of(_rng(seed, op, v, t, pattern), t, _SHAPES[pattern])
                out.append(make_case(
                    op, v, opsets[(k + j) % len(opsets)],
                    inputs=[Input("input_sequence", elem(t), seq_shape(seq), kind="sequence")],
                    outputs=[_tensor_out("length", "int64")],
                    datasets=[DataSet({"input_sequence": seq}, {"length": ref.sequence_length(seq)})],
                    tags={"dtype": t, "pattern": pattern}, label=f"{t}/{pattern}"))
    return out


# ----------------------------------------------------------------------------- SplitToSequence
def _split(seed: int) -> list[Case]:
    op, out = "SplitToSequence", []
    #: (tag, input shape, attributes, split or None)
    variants = [
        ("default", (3, 2), {}, None),
        ("keepdims0", (3, 2), {"keepdims": 0}, None),
        ("explicit-default", (2, 3), {"axis": 0, "keepdims": 1}, None),
        ("axis-1-keepdims0", (2, 3), {"axis": -1, "keepdims": 0}, None),
        ("scalar-divides", (4, 2), {}, 2),
        ("scalar-remainder", (2, 5), {"axis": 1}, 2),
        ("list", (5, 2), {}, [2, 3]),
        ("list-keepdims0-ignored", (2, 4), {"axis": 1, "keepdims": 0}, [1, 3]),
        ("scalar-keepdims0-ignored", (3, 2), {"keepdims": 0}, 1),
        ("zero-size", (0, 3), {"axis": 1}, None),
    ]
    for _, v, vs, opsets in _versions(op):
        ints = types_of(vs, "I")
        for k, t in enumerate(types_of(vs, "T")):
            given = 0  # the cases with a split alternate its type, so each type has both
            for j, (tag, shape, attrs, split) in enumerate(variants):
                if j >= 6 and (k + j) % 3:  # every type: the first six; the rest spread over the types
                    continue
                it = ints[(k + given) % len(ints)]
                given += split is not None
                x = draw(_rng(seed, op, v, t, tag), t, shape, special=True)
                ins, feed = [_tensor_in("input", t, x)], {"input": x}
                sp = None
                if split is None:
                    ins.append(_absent("split", it))
                else:
                    sp = np.array(split, dtype=np.int64).astype(np.dtype(it))
                    ins.append(_tensor_in("split", it, sp))
                    feed["split"] = sp
                res = ref.split_to_sequence(x, sp, **attrs)
                out.append(make_case(op, v, opsets[(k + j) % len(opsets)], inputs=ins, attrs=attrs,
                                     outputs=[_seq_out("output_sequence", t, res)],
                                     datasets=[DataSet(feed, {"output_sequence": res})],
                                     tags={"dtype": t, "params": tag, "split": "absent" if split is None else
                                           ("scalar" if np.ndim(split) == 0 else "list")},
                                     label=f"{t}/{tag}{'' if split is None else '/' + it}"))
        x = draw(_rng(seed, op, v, "err"), "float", (5, 2))
        for tag, attrs, split, why in (
                ("split-sum", {}, [2, 2], "the sum of entries in 'split' must be equal to the dimension size of "
                                          "input tensor on 'axis' (2 + 2 != 5)"),
                ("axis", {"axis": 2}, None, "axis 2 outside [-r, r-1] = [-2, 1]")):
            ins, feed = [_tensor_in("input", "float", x)], {"input": x}
            if split is not None:
                sp = np.array(split, dtype=np.int64)
                ins.append(_tensor_in("split", "int64", sp))
                feed["split"] = sp
            out.append(make_case(op, v, opsets[0], inputs=ins, attrs=attrs,
                                 outputs=[Output("output_sequence", elem("float"), kind="sequence")],
                                 datasets=[DataSet(feed)], tags={"dtype": "float", "error": tag},
                                 label=f"error/{tag}", expect_error=f"SplitToSequence: {why}"))
    return out


# ----------------------------------------------------------------------------- ConcatFromSequence
def _concat(seed: int) -> list[Case]:
    op, out = "ConcatFromSequence", []
    #: (tag, element shapes, attributes)
    variants = [
        ("axis0", [(1, 3), (2, 3), (1, 3)], {"axis": 0}),
        ("axis-1", [(2, 1), (2, 3)], {"axis": -1}),
        ("stack", [(2, 3), (2, 3), (2, 3)], {"axis": 0, "new_axis": 1}),
        ("stack-last", [(2, 3), (2, 3)], {"axis": 2, "new_axis": 1}),
        ("stack-neg", [(2, 3), (2, 3)], {"axis": -3, "new_axis": 1}),
        ("explicit-default", [(2, 2), (1, 2)], {"axis": 0, "new_axis": 0}),
        ("zero-size", [(0, 3), (2, 3)], {"axis": 0}),
        ("one", [(2, 3)], {"axis": 1}),
    ]
    for _, v, vs, opsets in _versions(op):
        for k, t in enumerate(types_of(vs, "T")):
            for j, (tag, shapes, attrs) in enumerate(variants):
                if j >= 4 and (k + j) % 3:
                    continue
                seq = _seq_of(_rng(seed, op, v, t, tag), t, shapes)
                res = ref.concat_from_sequence(seq, **attrs)
                out.append(make_case(op, v, opsets[(k + j) % len(opsets)], inputs=[_seq_in("input_sequence", t, seq)],
                                     attrs=attrs, outputs=[_tensor_out("concat_result", t)],
                                     datasets=[DataSet({"input_sequence": seq}, {"concat_result": res})],
                                     tags={"dtype": t, "params": tag}, label=f"{t}/{tag}"))
        seq = _seq_of(_rng(seed, op, v, "err"), "float", _SHAPES["same"])
        for tag, attrs, why in (("axis", {"axis": 2}, "axis 2 outside [-r, r-1] = [-2, 1] (new_axis 0)"),
                                ("axis-new", {"axis": 3, "new_axis": 1}, "axis 3 outside [-r-1, r] = [-3, 2] "
                                                                          "with new_axis 1")):
            out.append(make_case(op, v, opsets[0], inputs=[_seq_in("input_sequence", "float", seq)], attrs=attrs,
                                 outputs=[Output("concat_result", elem("float"))], datasets=[DataSet({"input_sequence": seq})],
                                 tags={"dtype": "float", "error": tag}, label=f"error/{tag}",
                                 expect_error=f"ConcatFromSequence: {why}"))
    return out


# ----------------------------------------------------------------------------- Optional*
def _value_of(rng, kind: str, t: str):
    """A present value of ``kind`` (``tensor`` or ``sequence``) of element type ``t``."""
    return draw(rng, t, (2, 3), special=True) if kind == "tensor" else _seq_of(rng, t, _SHAPES["ragged"][:2])


def _io(name: str, kind: str, t: str, value, out: bool = False):
    shape = seq_shape(value) if kind.endswith("sequence") else (tuple(np.shape(value)) if value is not None else None)
    if out:
        return Output(name, elem(t), EXACT, shape=shape, kind=kind)
    return Input(name, elem(t), shape, kind=kind)


def _optional(seed: int) -> list[Case]:
    op, out = "Optional", []
    for _, v, vs, opsets in _versions(op):
        for kind in ("tensor", "sequence"):
            for k, t in enumerate(types_of(vs, "V", kind)):
                opset = opsets[k % len(opsets)]
                x = _value_of(_rng(seed, op, v, kind, t), kind, t)
                okind = f"optional_{kind}"
                out.append(make_case(op, v, opset, inputs=[_io("input", kind, t, x)],
                                     outputs=[_io("output", okind, t, x, out=True)],
                                     datasets=[DataSet({"input": x}, {"output": ref.optional(x)})],
                                     tags={"dtype": t, "kind": kind, "params": "input"}, label=f"{kind}/{t}/input"))
                out.append(make_case(op, v, opsets[(k + 1) % len(opsets)], inputs=[], attrs={"type": type_attr(kind, t)},
                                     outputs=[Output("output", elem(t), EXACT, kind=okind)],
                                     datasets=[DataSet({}, {"output": None})],
                                     tags={"dtype": t, "kind": kind, "params": "type"}, label=f"{kind}/{t}/empty"))
                if k % 5 == 0:  # the type attribute beside an input of that type
                    out.append(make_case(op, v, opset, inputs=[_io("input", kind, t, x)],
                                         attrs={"type": type_attr(kind, t)},
                                         outputs=[_io("output", okind, t, x, out=True)],
                                         datasets=[DataSet({"input": x}, {"output": ref.optional(x)})],
                                         tags={"dtype": t, "kind": kind, "params": "input+type"},
                                         label=f"{kind}/{t}/input+type"))
        out.append(make_case(op, v, opsets[0], inputs=[], outputs=[Output("output", elem("float"), kind="optional_tensor")],
                             datasets=[DataSet({})], tags={"dtype": "float", "error": "no-type"}, label="error/no-type",
                             expect_error="Optional without an input and without the type attribute: the type of "
                                          "the empty optional is not given ('type' attribute: 'Type of the element "
                                          "in the optional output')"))
    return out


def _in_kinds(vs) -> list[tuple[str, str]]:
    """(input kind, element type) pairs the version's ``O`` constraint allows."""
    out = []
    for t in vs.type_constraints["O"]:
        try:
            out.append(split_type(t))
        except ValueError:
            continue
    return out


def _has_element(seed: int) -> list[Case]:
    op, out = "OptionalHasElement", []
    for _, v, vs, opsets in _versions(op):
        for k, (kind, t) in enumerate(_in_kinds(vs)):
            rng = _rng(seed, op, v, kind, t)
            inner = kind.replace("optional_", "")
            x = _value_of(rng, inner, t)
            states = [("present", x)] + ([("absent", None)] if kind.startswith("optional_") else [])
            for j, (state, val) in enumerate(states):
                out.append(make_case(op, v, opsets[(k + j) % len(opsets)], inputs=[_io("input", kind, t, val)],
                                     outputs=[_tensor_out("output", "bool")],
                                     datasets=[DataSet({"input": val}, {"output": ref.optional_has_element(val)})],
                                     tags={"dtype": t, "kind": kind, "state": state}, label=f"{kind}/{t}/{state}"))
        if any(f.option == "optional" for f in vs.inputs):  # 18: the input may be omitted
            out.append(make_case(op, v, opsets[-1], inputs=[Input("input", elem("float"), (), present=False)],
                                 outputs=[_tensor_out("output", "bool")],
                                 datasets=[DataSet({}, {"output": ref.optional_has_element(None)})],
                                 tags={"dtype": "float", "kind": "omitted", "state": "omitted"}, label="omitted"))
    return out


def _get_element(seed: int) -> list[Case]:
    op, out = "OptionalGetElement", []
    for _, v, vs, opsets in _versions(op):
        for k, (kind, t) in enumerate(_in_kinds(vs)):
            inner = kind.replace("optional_", "")
            x = _value_of(_rng(seed, op, v, kind, t), inner, t)
            out.append(make_case(op, v, opsets[k % len(opsets)], inputs=[_io("input", kind, t, x)],
                                 outputs=[_io("output", inner, t, x, out=True)],
                                 datasets=[DataSet({"input": x}, {"output": ref.optional_get_element(x)})],
                                 tags={"dtype": t, "kind": kind}, label=f"{kind}/{t}"))
        for kind in ("optional_tensor", "optional_sequence"):
            out.append(make_case(op, v, opsets[0], inputs=[Input("input", elem("float"), None, kind=kind)],
                                 outputs=[Output("output", elem("float"), kind=kind.replace("optional_", ""))],
                                 datasets=[DataSet({"input": None})], tags={"dtype": "float", "error": "empty"},
                                 label=f"error/empty-{kind}",
                                 expect_error="OptionalGetElement of an empty optional: 'It is an error if the input "
                                              "value does not have an element' (the same sentence leaves the "
                                              "behaviour undefined: a clean rejection is the defined outcome)"))
    return out


# ----------------------------------------------------------------------------- Identity's seq / optional types
def identity_value_cases(seed: int, depth: str = "full") -> list[Case]:
    """Identity's cases of its ``seq(tensor(*))`` and ``optional(*)`` types (versions 14+), for
    the unary family's Identity entry (:attr:`Entry.extra_cases`): a ragged sequence, an empty
    one, an optional present and absent."""
    op, out = "Identity", []
    for _, v, vs, opsets in _versions(op):
        pairs = []
        for t in vs.type_constraints[vs.inputs[0].type_str] if vs.inputs[0].type_str in vs.type_constraints else []:
            try:
                kind, name = split_type(t)
            except ValueError:
                continue
            if kind != "tensor":
                pairs.append((kind, name))
        for k, (kind, t) in enumerate(pairs):
            rng = _rng(seed, op, v, kind, t)
            inner = kind.replace("optional_", "")
            states = [("present", _value_of(rng, inner, t))]
            if kind == "sequence" and k % 3 == 0:
                states.append(("empty", []))
            if kind.startswith("optional_"):
                states.append(("absent", None))
            for j, (state, val) in enumerate(states):
                out.append(make_case(op, v, opsets[(k + j) % len(opsets)], inputs=[_io("input", kind, t, val)],
                                     outputs=[_io("output", kind, t, val, out=True)],
                                     datasets=[DataSet({"input": val}, {"output": ref.optional(val)})],
                                     tags={"dtype": t, "kind": kind, "state": state}, label=f"{kind}/{t}/{state}"))
    return smoke(out) if depth == "smoke" else out


# ----------------------------------------------------------------------------- the table
def _tied(pairs: dict[str, str]):
    """``type_filter`` of an operator whose type parameters are one value type seen through a
    wrapper: ``pairs`` maps a parameter to ``"seq:<P>"`` (it is ``seq(P)``), ``"opt:<P>"``
    (``optional(P)``) or ``"core:<P>"`` (``optional(P)`` or ``P`` itself, OptionalGetElement-18);
    a combination breaking it is a model type inference rejects."""
    def rule(version: int, combo) -> str | None:
        for p, spec in pairs.items():
            how, q = spec.split(":")
            if p not in combo or q not in combo:
                continue
            a, b = full_type(combo[p]), full_type(combo[q])
            ok = {"seq": a == f"seq({b})", "opt": a == f"optional({b})",
                  "core": a in (f"optional({b})", b)}[how]
            if not ok:
                return ("a sequence or optional type parameter wraps the element type parameter in every model "
                        "(the operator's type inference ties them): other combinations are no model")
        return None
    return rule


def _same_elem(p: str, q: str):
    """``type_filter``: ``p`` = ``seq(q)`` (the sequence holds tensors of ``q``'s type)."""
    return _tied({p: f"seq:{q}"})


def _no_tie(version, combo):
    return None


ENTRIES = [
    Entry("SequenceConstruct", lambda ctx, *xs, **a: ref.sequence_construct(*xs), family="values", extra_cases=_gen("SequenceConstruct", _construct),
          type_filter=_same_elem("S", "T")),
    Entry("SequenceEmpty", lambda ctx, **a: [], family="values", extra_cases=_gen("SequenceEmpty", _empty), type_filter=_no_tie),
    Entry("SequenceAt", lambda ctx, s, p, **a: ref.sequence_at(s, p), family="values", extra_cases=_gen("SequenceAt", _at),
          type_filter=_same_elem("S", "T")),
    Entry("SequenceErase", lambda ctx, s, p=None, **a: ref.sequence_erase(s, p), family="values", extra_cases=_gen("SequenceErase", _erase),
          type_filter=_no_tie),
    Entry("SequenceInsert", lambda ctx, s, x, p=None, **a: ref.sequence_insert(s, x, p),
          family="values", extra_cases=_gen("SequenceInsert", _insert), type_filter=_same_elem("S", "T")),
    Entry("SequenceLength", lambda ctx, s, **a: ref.sequence_length(s), family="values", extra_cases=_gen("SequenceLength", _length),
          type_filter=_no_tie),
    Entry("SplitToSequence", lambda ctx, x, split=None, **a: ref.split_to_sequence(x, split, **a),
          family="values", extra_cases=_gen("SplitToSequence", _split), type_filter=_same_elem("S", "T")),
    Entry("ConcatFromSequence", lambda ctx, s, **a: ref.concat_from_sequence(s, **a),
          family="values", extra_cases=_gen("ConcatFromSequence", _concat), type_filter=_same_elem("S", "T")),
    Entry("Optional", lambda ctx, x=None, **a: ref.optional(x), family="values", extra_cases=_gen("Optional", _optional),
          type_filter=_tied({"O": "opt:V"})),
    Entry("OptionalHasElement", lambda ctx, x=None, **a: ref.optional_has_element(x),
          family="values", extra_cases=_gen("OptionalHasElement", _has_element), type_filter=_no_tie),
    Entry("OptionalGetElement", lambda ctx, x, **a: ref.optional_get_element(x),
          family="values", extra_cases=_gen("OptionalGetElement", _get_element), type_filter=_tied({"O": "core:V"})),
]

register_entries(ENTRIES, "sequence")
