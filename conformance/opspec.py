"""Operator specifications read from the installed schemas.

:func:`op_spec` collects, for one operator of one domain, every version the
schema registry knows (``since_version`` and whether it is deprecated) and, per
version, the type constraints (type parameter -> allowed types), the formal inputs
and outputs (name, type parameter or fixed type, option ``single`` / ``optional`` /
``variadic``) and the attributes (name, type, default, required).

Sources:

* ``ai.onnx`` (domain ``""``) and the other onnx domains: ``onnx.defs``
  (``get_all_schemas_with_history``), i.e. the operator specification of the
  installed onnx (1.23: opset 28).
* ``com.microsoft``: the contrib schemas onnxruntime registers
  (``onnxruntime.capi.onnxruntime_pybind11_state.get_all_operator_schema()``,
  present in onnxruntime 1.31.1).  onnx.defs does not know these operators.

Nothing here is declared by hand: coverage (:mod:`conformance.coverage`) measures
cases against these specs.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any

import onnx
from onnx import helper

#: Schema option names -> the names used here.
_OPTIONS = {"Single": "single", "Optional": "optional", "Variadic": "variadic"}


@dataclass(frozen=True)
class Formal:
    """One formal input or output of a schema version.

    Attributes:
        name: formal name (``X``, ``Scale``...).
        type_str: a type parameter (``T``) or a fixed type (``tensor(int64)``).
        option: ``"single"``, ``"optional"`` or ``"variadic"``.
        homogeneous: for variadic formals, every occurrence has the same type.
    """

    name: str
    type_str: str
    option: str
    homogeneous: bool = True


@dataclass(frozen=True)
class AttrSpec:
    """One attribute of a schema version.

    Attributes:
        name: attribute name.
        type: ``AttributeProto`` type name (``INT``, ``FLOAT``, ``STRING``, ``INTS``...).
        default: the default value as a Python value (``None``: no default).
        required: the attribute must be given.
    """

    name: str
    type: str
    default: Any = None
    required: bool = False


@dataclass
class VersionSpec:
    """One version of an operator (one schema).

    Attributes:
        since_version: the opset version that introduced this definition.
        deprecated: the schema is marked deprecated.
        type_constraints: type parameter -> allowed types (``tensor(float)``...), schema order.
        inputs / outputs: formal parameters in schema order.
        attributes: name -> :class:`AttrSpec`.
    """

    since_version: int
    deprecated: bool
    type_constraints: dict[str, list[str]]
    inputs: list[Formal]
    outputs: list[Formal]
    attributes: dict[str, AttrSpec]

    def params_of(self, formals: list[Formal]) -> set[str]:
        """Type parameters used by ``formals``."""
        return {f.type_str for f in formals if f.type_str in self.type_constraints}

    def param_binding(self) -> dict[str, dict[str, list[str]]]:
        """Type parameter -> {"required": formals that always bind it, "optional": formals that may}.

        A parameter bound only by optional formals (``U`` of LayerNormalization-17: Mean and
        InvStdDev) is observable in a model only when one of those formals is present; a
        parameter bound only by outputs is fixed by attributes or the spec text, not by the
        inputs.
        """
        out: dict[str, dict[str, list[str]]] = {p: {"required": [], "optional": []} for p in self.type_constraints}
        for f in self.inputs + self.outputs:
            if f.type_str in out:
                out[f.type_str]["optional" if f.option == "optional" else "required"].append(f.name)
        return out


@dataclass
class OpSpec:
    """All versions of one operator of one domain (see module docstring).

    Attributes:
        op: operator type.
        domain: ``""`` for ai.onnx, else e.g. ``"com.microsoft"``.
        source: ``"onnx.defs"`` or ``"onnxruntime"``.
        versions: ``since_version`` -> :class:`VersionSpec`, ascending.
    """

    op: str
    domain: str
    source: str
    versions: dict[int, VersionSpec] = field(default_factory=dict)

    @property
    def since_versions(self) -> list[int]:
        """Every version, ascending."""
        return sorted(self.versions)

    def version_in_force(self, opset: int) -> int | None:
        """The ``since_version`` of the definition a model importing ``opset`` of the domain uses
        (the highest since_version <= opset), or ``None`` when the op did not exist yet."""
        vs = [v for v in self.versions if v <= opset]
        return max(vs) if vs else None


def type_string(elem_type: int) -> str:
    """``tensor(<name>)`` as the schemas spell it, for an ONNX tensor element type.

    Raises:
        ValueError: an unknown element type.
    """
    return f"tensor({onnx.TensorProto.DataType.Name(elem_type).lower()})"


def _formal_onnx(p) -> Formal:
    return Formal(p.name, p.type_str, _OPTIONS.get(p.option.name, p.option.name.lower()), bool(p.is_homogeneous))


def _attr_onnx(a) -> AttrSpec:
    default = None
    if a.default_value is not None and a.default_value.type != onnx.AttributeProto.UNDEFINED:
        default = helper.get_attribute_value(a.default_value)
    return AttrSpec(a.name, a.type.name, _plain(default), bool(a.required))


def _plain(v: Any) -> Any:
    if isinstance(v, bytes):
        return v.decode("utf-8", "replace")
    if isinstance(v, list):
        return [_plain(x) for x in v]
    return v


@lru_cache(maxsize=None)
def _onnx_index() -> dict[tuple[str, str], list]:
    idx: dict[tuple[str, str], list] = {}
    for s in onnx.defs.get_all_schemas_with_history():
        idx.setdefault((s.domain, s.name), []).append(s)
    return idx


@lru_cache(maxsize=None)
def _ort_index() -> dict[tuple[str, str], list]:
    from onnxruntime.capi import onnxruntime_pybind11_state as C

    idx: dict[tuple[str, str], list] = {}
    if not hasattr(C, "get_all_operator_schema"):  # onnxruntime 1.15 does not expose its contrib schemas
        return idx
    for s in C.get_all_operator_schema():
        idx.setdefault((s.domain, s.name), []).append(s)
    return idx


def _version_onnx(s) -> VersionSpec:
    return VersionSpec(
        since_version=int(s.since_version),
        deprecated=bool(s.deprecated),
        type_constraints={t.type_param_str: list(t.allowed_type_strs) for t in s.type_constraints},
        inputs=[_formal_onnx(p) for p in s.inputs],
        outputs=[_formal_onnx(p) for p in s.outputs],
        attributes={k: _attr_onnx(a) for k, a in sorted(s.attributes.items())},
    )


def _version_ort(s) -> VersionSpec:
    def formal(p):
        return Formal(p.name, p.typeStr, _OPTIONS.get(p.option.name, p.option.name.lower()), bool(p.isHomogeneous))

    def attr(a):
        default = None
        raw = a._default_value
        if raw:
            proto = onnx.AttributeProto()
            proto.ParseFromString(raw)
            if proto.type != onnx.AttributeProto.UNDEFINED:
                default = _plain(helper.get_attribute_value(proto))
        return AttrSpec(a.name, a.type.name, default, bool(a.required))

    return VersionSpec(
        since_version=int(s.since_version),
        deprecated=bool(s.deprecated),
        type_constraints={t.type_param_str: list(t.allowed_type_strs) for t in s.type_constraints},
        inputs=[formal(p) for p in s.inputs],
        outputs=[formal(p) for p in s.outputs],
        attributes={k: attr(a) for k, a in sorted(s.attributes.items())},
    )


@lru_cache(maxsize=None)
def op_spec(op: str, domain: str = "") -> OpSpec:
    """The :class:`OpSpec` of ``op`` in ``domain`` (every version the registry knows).

    ``com.microsoft`` operators come from onnxruntime's schema registry; other domains from
    ``onnx.defs``, falling back to onnxruntime's registry for operators onnx does not define.
    The result is cached: treat it as read-only.

    Raises:
        KeyError: no schema for ``op`` in ``domain``.
    """
    domain = "" if domain in ("", "ai.onnx") else domain
    if domain != "com.microsoft" and (domain, op) in _onnx_index():
        spec = OpSpec(op, domain, "onnx.defs")
        for s in _onnx_index()[(domain, op)]:
            spec.versions[int(s.since_version)] = _version_onnx(s)
    else:
        try:
            schemas = _ort_index().get((domain, op), [])
        except ImportError:
            schemas = []
        if not schemas:
            why = ""
            try:
                from onnxruntime.capi import onnxruntime_pybind11_state as C

                if not hasattr(C, "get_all_operator_schema"):
                    import onnxruntime

                    why = (f" (onnxruntime {onnxruntime.__version__} does not expose its contrib schemas: "
                           "get_all_operator_schema is missing)")
            except ImportError:
                why = " (onnxruntime, whose registry holds the contrib schemas, is not installed)"
            raise KeyError(f"no schema for operator {op!r} in domain {domain or 'ai.onnx'!r}{why}")
        spec = OpSpec(op, domain, "onnxruntime")
        for s in schemas:
            spec.versions[int(s.since_version)] = _version_ort(s)
    spec.versions = dict(sorted(spec.versions.items()))
    return spec


def type_combinations(version: VersionSpec) -> list[dict[str, str]]:
    """Every assignment of an allowed type to each type parameter of ``version``.

    The product over the type parameters, in schema order (e.g. BatchNormalization-15:
    4 x 4 x 4 = 64 combinations of T, T1, T2).  The schema itself does not tie parameters
    together; where one parameter is bound only by optional formals, or only by outputs
    (fixed by an attribute such as LayerNormalization's ``stash_type``), see
    :func:`combination_notes`.  A version without type parameters has one, empty, combination.
    """
    params = list(version.type_constraints)
    return [dict(zip(params, combo)) for combo in itertools.product(*(version.type_constraints[p] for p in params))]


def combination_notes(version: VersionSpec) -> dict[str, str]:
    """Per type parameter, how a model fixes it (for reading coverage of :func:`type_combinations`).

    ``"inputs"``: some required input has it, so the data chooses it; ``"outputs"``: only
    outputs have it: an attribute or the spec text decides it, and cases vary it through
    that attribute; ``"optional formals only"``: visible in the model only when one of the
    optional formals is present.
    """
    notes = {}
    req_inputs = {f.type_str for f in version.inputs if f.option != "optional"}
    for p, b in version.param_binding().items():
        if not b["required"]:
            notes[p] = f"optional formals only ({', '.join(b['optional'])})"
        elif p in req_inputs:
            notes[p] = "inputs"
        else:
            notes[p] = "outputs (fixed by attributes or the spec)"
    return notes
