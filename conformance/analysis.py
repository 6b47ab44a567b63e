"""What one case's model exercises, read from the model itself (:func:`analyse_case`).

The single-node model is inspected (tags are not read): the node's op type and domain, the
opset the model imports for that domain and so the schema version in force; the element type
bound to each type parameter (graph inputs, outputs, value_info and initializers matched by the
node's input/output names to the schema's formal inputs/outputs); which formals are present; the
attribute values.  :mod:`conformance.coverage` aggregates these per operator version; bundles
record each case's analysis in their manifest (:mod:`conformance.bundle`), so that a run need not
read the models again.
"""

from __future__ import annotations

from collections import defaultdict
from typing import Any

import onnx
from onnx import helper

from .opspec import op_spec, type_string

#: (domain, op, type parameter) -> attribute whose value (a TensorProto element type)
#: the spec says fixes that parameter.  Used only where no present formal binds it.
ATTRIBUTE_TYPE_PARAMS: dict[tuple[str, str, str], str] = {
    ("", "LayerNormalization", "U"): "stash_type",  # LayerNormalization-17: U = stash_type
    # onnxruntime's SimplifiedLayerNormalization: inv_std_var has the stash_type's type
    ("", "SimplifiedLayerNormalization", "U"): "stash_type",
}

UNBOUND = "*"


def _type_of(tp: onnx.TypeProto) -> str | None:
    kind = tp.WhichOneof("value")
    if kind == "tensor_type":
        return type_string(tp.tensor_type.elem_type) if tp.tensor_type.elem_type else None
    if kind == "sequence_type":
        inner = _type_of(tp.sequence_type.elem_type)
        return f"seq({inner})" if inner else None
    if kind == "optional_type":
        inner = _type_of(tp.optional_type.elem_type)
        return f"optional({inner})" if inner else None
    return None


def _graph_types(graph: onnx.GraphProto) -> dict[str, str]:
    types: dict[str, str] = {}
    for vi in list(graph.value_info) + list(graph.input) + list(graph.output):
        t = _type_of(vi.type)
        if t:
            types[vi.name] = t
    for init in graph.initializer:
        types.setdefault(init.name, type_string(init.data_type))
    return types


def _match(formals, names: list[str]) -> list[tuple[Any, str]]:
    """(formal, node name) pairs by position; a variadic last formal takes the rest."""
    pairs = []
    for i, name in enumerate(names):
        if i < len(formals):
            pairs.append((formals[i], name))
        elif formals and formals[-1].option == "variadic":
            pairs.append((formals[-1], name))
    return pairs


def _attr_class(spec_attr, present: bool, value: Any) -> str:
    """The coverage key of one attribute value (see module docstring)."""
    default = spec_attr.default if spec_attr is not None else None
    kind = spec_attr.type if spec_attr is not None else "UNKNOWN"
    if kind == "FLOAT":
        if not present:
            return "absent (default)" if default is not None else "absent"
        if default is not None and float(value) == float(default):
            return "explicit default"
        return "non-default"
    if not present:
        return f"{default!r} (absent)" if default is not None else "absent"
    if kind in ("INT", "STRING", "INTS", "FLOATS", "STRINGS"):
        return repr(value)
    return "given"


def analyse_case(case) -> dict:
    """What the model of ``case`` exercises (see module docstring).

    Returns a dict: ``op``, ``domain``, ``opset``, ``version`` (since_version in force, or
    ``None``), ``error`` (error case), ``combo`` (param -> type string, ``*`` unbound,
    ``a|b`` conflicting), ``inputs`` / ``outputs`` (present formal names), ``attributes``
    (name -> coverage key), ``problem`` (why the model could not be matched, else ``None``).
    """
    model = case.model
    out: dict[str, Any] = {"id": case.id, "error": case.expect_error is not None, "problem": None,
                           "combo": {}, "inputs": [], "outputs": [], "attributes": {}, "version": None}
    if (case.domain or "") == "pattern":
        return _pattern_analysis(case, out)
    nodes = list(model.graph.node)
    if len(nodes) != 1:
        out.update(op=case.op, domain=case.domain, opset=None, problem=f"{len(nodes)} nodes, expected 1")
        return out
    node = nodes[0]
    domain = "" if node.domain in ("", "ai.onnx") else node.domain
    opsets = {("" if o.domain in ("", "ai.onnx") else o.domain): o.version for o in model.opset_import}
    out.update(op=node.op_type, domain=domain, opset=opsets.get(domain))
    try:
        spec = op_spec(node.op_type, domain)
    except KeyError as exc:
        out["problem"] = str(exc).strip("'\"")
        return out
    if out["opset"] is None:
        out["problem"] = f"the model imports no opset for domain {domain or 'ai.onnx'!r}"
        return out
    version = spec.version_in_force(out["opset"])
    if version is None:
        out["problem"] = f"opset {out['opset']} predates {node.op_type}-{spec.since_versions[0]}"
        return out
    out["version"] = version
    vs = spec.versions[version]
    types = _graph_types(model.graph)

    bound: dict[str, set[str]] = defaultdict(set)
    for formals, names, key in ((vs.inputs, list(node.input), "inputs"), (vs.outputs, list(node.output), "outputs")):
        for formal, name in _match(formals, names):
            if not name:
                continue
            if formal.name not in out[key]:
                out[key].append(formal.name)
            if formal.type_str in vs.type_constraints and name in types:
                bound[formal.type_str].add(types[name])

    given = {a.name: helper.get_attribute_value(a) for a in node.attribute}
    for name in sorted(set(vs.attributes) | set(given)):
        value = given.get(name)
        if isinstance(value, bytes):
            value = value.decode("utf-8", "replace")
        out["attributes"][name] = _attr_class(vs.attributes.get(name), name in given, value)

    combo = {}
    for p in vs.type_constraints:
        if bound.get(p):
            combo[p] = "|".join(sorted(bound[p]))
            continue
        attr = ATTRIBUTE_TYPE_PARAMS.get((domain, node.op_type, p))
        if attr is not None and attr in vs.attributes:
            v = given.get(attr, vs.attributes[attr].default)
            try:
                combo[p] = type_string(int(v))
            except (TypeError, ValueError):
                combo[p] = f"invalid({v!r})"
        else:
            combo[p] = UNBOUND
    out["combo"] = combo
    return out


def _pattern_analysis(case, out: dict) -> dict:
    """The analysis of a layer-pattern case (:mod:`conformance.patterns`): ``pattern`` holds the
    pattern, its catalog layer, family and exporter form, the element type, the opset, the
    drawn variation values (``axes``), the near-miss (if any) and the graph's op types.  These
    come from the case's tags, which the pattern generator writes (a pattern's variation is not
    recoverable from the model alone); the op types from the model."""
    tags = case.tags or {}
    opsets = {("" if o.domain in ("", "ai.onnx") else o.domain): o.version for o in case.model.opset_import}
    out.update(op=case.op, domain="pattern", opset=opsets.get(""), version=opsets.get(""), pattern={
        "name": tags.get("pattern", case.op), "layer": tags.get("layer"), "family": tags.get("pattern_family"),
        "exporter": tags.get("exporter"), "dtype": tags.get("dtype"), "near_miss": tags.get("near_miss"),
        "axes": {k[2:]: v for k, v in sorted(tags.items()) if k.startswith("v_")},
        "ops": sorted({n.op_type if n.domain in ("", "ai.onnx") else f"{n.domain}:{n.op_type}"
                       for n in case.model.graph.node})})
    return out
