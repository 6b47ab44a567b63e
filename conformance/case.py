"""The case model: one ONNX model, its data sets, expected outputs and tolerances.

A :class:`Case` is what a generator produces and what the runner, the bundle writer
and the reports consume (DESIGN.md, "Case").  A case is either

* a *value case*: ``expect_error is None``; each data set has expected outputs and
  every present output has a :class:`~conformance.tolerance.Tolerance`; or
* an *error case*: the model is invalid per the spec (axis out of range, a Scale
  that does not broadcast, a bad stash_type...); the expected outcome is a clean
  rejection at prepare or run time, and ``expect_error`` says why.

The model is a single node named after the operator whose formal inputs/outputs
use the schema's names.  Omitted optional inputs and outputs are written as ``""``
in the node (trailing ones dropped), per the ONNX IR spec.  Inputs are graph inputs
(fed by each data set) or initializers (constant, baked into the model).
The model's IR version is the lowest that its opset import needs
(``onnx.helper.find_min_ir_version_for``): runtimes refuse newer IR versions.  Below
IR 4 initializers are also listed as graph inputs (after the fed inputs), as that IR
requires.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

import numpy as np
import onnx
from onnx import helper, numpy_helper

from . import dtypes
from .tolerance import Tolerance


@dataclass
class Input:
    """One formal input of the node.

    Attributes:
        name: the schema's formal name (also the graph input / initializer name).
        elem_type: ONNX element type.
        shape: static shape declared in the graph.
        initializer: the value is a constant initializer (``value`` must be given)
            rather than a graph input fed by each data set.
        value: the initializer's value (only for ``initializer=True``).
        present: ``False`` for an omitted optional input.
        kind: the value's kind (:data:`KINDS`): ``"tensor"`` (default; the value is an
            ndarray), ``"sequence"`` (a ``list`` of ndarrays of ``elem_type``, ``shape`` the
            elements' shape with ``None`` for a dimension that varies, or ``shape=None`` for an
            unknown rank), ``"optional_tensor"`` / ``"optional_sequence"`` (the value, or
            ``None`` for an absent optional).  ONNX IR "Types": tensor, sequence, optional.
        outer: a graph input the node does not take: a value its subgraph attributes (If's
            branches, a Loop/Scan body) name from the outer scope.  It is fed like any graph
            input and is not one of the node's formal inputs.
    """

    name: str
    elem_type: int
    shape: tuple[int | None, ...] | None = ()
    initializer: bool = False
    value: np.ndarray | None = None
    present: bool = True
    kind: str = "tensor"
    outer: bool = False


@dataclass
class Output:
    """One formal output of the node.

    Attributes:
        name: the schema's formal name.
        elem_type: ONNX element type the spec gives this output.
        tolerance: accepted error (value cases, present outputs).
        present: ``False`` for an omitted optional output.
        shape: shape declared in the graph; default: the expected output's shape in
            the first data set, else (error cases) unknown dims of the first input's rank.
            For a sequence or optional kind: the elements' shape (``None`` dims vary), and
            no shape (unknown rank) by default.
        kind: as :attr:`Input.kind`; a sequence's elements are each compared under
            ``tolerance`` (:func:`conformance.tolerance.compare_value`).
    """

    name: str
    elem_type: int
    tolerance: Tolerance | None = None
    present: bool = True
    shape: tuple[int | None, ...] | None = None
    kind: str = "tensor"


#: The kinds of value a case input or output may have (ONNX IR, "Types"): a tensor, a
#: sequence of tensors, an optional tensor, an optional sequence of tensors.
KINDS = ("tensor", "sequence", "optional_tensor", "optional_sequence")


def type_proto(kind: str, elem_type: int, shape) -> onnx.TypeProto:
    """The ``TypeProto`` of a value of ``kind`` (:data:`KINDS`) whose tensors have
    ``elem_type`` and ``shape`` (``None`` dims unknown; ``shape=None``: unknown rank).

    Raises:
        ValueError: an unknown kind.
    """
    tensor = helper.make_tensor_type_proto(elem_type, None if shape is None else list(shape))
    if kind == "tensor":
        return tensor
    if kind == "sequence":
        return helper.make_sequence_type_proto(tensor)
    if kind == "optional_tensor":
        return helper.make_optional_type_proto(tensor)
    if kind == "optional_sequence":
        return helper.make_optional_type_proto(helper.make_sequence_type_proto(tensor))
    raise ValueError(f"unknown value kind {kind!r}; known: {', '.join(KINDS)}")


def value_kind(tp: onnx.TypeProto) -> str | None:
    """The :data:`KINDS` member of a graph input/output's type, ``None`` for any other type (a
    map, a sparse tensor, a sequence of sequences, an unset type)."""
    which = tp.WhichOneof("value")
    if which == "tensor_type":
        return "tensor"
    if which == "sequence_type" and tp.sequence_type.elem_type.WhichOneof("value") == "tensor_type":
        return "sequence"
    if which == "optional_type":
        inner = value_kind(tp.optional_type.elem_type)
        return f"optional_{inner}" if inner in ("tensor", "sequence") else None
    return None


def check_value(kind: str, value, name: str = "value") -> None:
    """Check that ``value`` is a value of ``kind``: an ndarray for a tensor, a list of ndarrays
    for a sequence, ``None`` or the inner kind's value for an optional.

    Raises:
        TypeError: it is not.
    """
    if kind.startswith("optional_"):
        if value is not None:
            check_value(kind[len("optional_"):], value, name)
        return
    if kind == "sequence":
        if not isinstance(value, list) or not all(isinstance(v, np.ndarray) for v in value):
            raise TypeError(f"{name}: a sequence value is a list of arrays, not {type(value).__name__}")
        return
    if not isinstance(value, (np.ndarray, np.generic)):
        raise TypeError(f"{name}: a tensor value is an array, not {type(value).__name__}")


@dataclass
class DataSet:
    """Values for the graph inputs and the expected values of the present outputs.

    A value is an ndarray (kind ``tensor``), a ``list`` of ndarrays (``sequence``), or, for an
    optional kind, ``None`` (absent) or the inner value (:attr:`Input.kind`).
    """

    inputs: dict[str, Any]
    outputs: dict[str, Any] = field(default_factory=dict)


@dataclass
class Case:
    """A conformance case (see module docstring).

    Attributes:
        op: operator type, e.g. ``"LayerNormalization"``.
        since_version: the version of the operator's definition under test.
        opset: the opset version the model imports for ``domain``.
        domain: operator domain, ``""`` for ai.onnx.
        attributes: node attributes (name -> Python value, as ``helper.make_node`` takes).
        inputs / outputs: formal inputs and outputs in schema order.
        datasets: one or more data sets.
        tags: feature coordinates the case covers (dtype, axis, rank, outputs, ...).
        label: human-readable middle part of the id (``float16/axis=-2/...``).
        expect_error: reason the model is invalid (error cases), else ``None``.
        generator: name and version of the generator that made the case.
        seed: the seed the generator derived this case from.
        skip: reason the case cannot be run or compared (outcome ``skip``), else ``None``.
        check: ``package.module:function`` that judges the outputs instead of a value
            comparison, for operators whose result is random (Dropout in training):
            ``fn(inputs, outputs, attributes) -> (passed, message)`` per data set, with
            ``inputs`` every present input by name (initializers included) and
            ``outputs`` the present outputs by name.  Expected outputs are then unused.
        output_slots: write the node with at least this many outputs, trailing omitted
            ones as ``""`` (some versions decide the mode by the output count, e.g.
            BatchNormalization-7/9); default: trailing omitted outputs are dropped.
        contested: reason the specification contradicts itself about this model, else
            ``None``.  For models the schema's type constraints admit but another
            normative part rejects (a function body that is ill-typed for the type, a
            schema whose type inference disagrees with its declared output type), so
            onnx's checker with ``full_check`` rejects them.  The expected outputs follow
            the operator text; a backend that computes them is scored as usual, a backend
            that rejects the model gets ``unsupported`` (not ``error``), because
            rejecting what onnx's own checker rejects is defensible.
        graph: a layer-pattern case's graph (:class:`conformance.patterns.core.PatternGraph`):
            the nodes, Constant nodes and intermediate names of a small multi-node model;
            ``build_model`` builds that graph instead of the single node (``op``/``domain``
            then name the pattern: domain ``"pattern"``).  ``None`` (default): a single-node
            case.  A case read back from a bundle has ``None`` here and its model from disk.
        level: the graph-optimization level a run scores this case at (``"disable"``,
            ``"basic"``...; :mod:`conformance.levels`), appended to the id as ``@level``;
            ``None`` (default): the backend's configured level.
    """

    op: str
    since_version: int
    opset: int
    attributes: dict[str, Any]
    inputs: list[Input]
    outputs: list[Output]
    datasets: list[DataSet]
    tags: dict[str, Any] = field(default_factory=dict)
    label: str = ""
    domain: str = ""
    expect_error: str | None = None
    generator: str = ""
    seed: int | None = None
    output_slots: int | None = None
    skip: str | None = None
    check: str | None = None
    contested: str | None = None
    graph: Any = None
    level: str | None = None

    # ------------------------------------------------------------------ model
    @cached_property
    def model(self) -> onnx.ModelProto:
        """The single-node ONNX model (built once, deterministic)."""
        return build_model(self)

    @cached_property
    def model_bytes(self) -> bytes:
        return self.model.SerializeToString(deterministic=True)

    @property
    def graph_inputs(self) -> list[Input]:
        return [i for i in self.inputs if i.present and not i.initializer]

    @property
    def present_outputs(self) -> list[Output]:
        return [o for o in self.outputs if o.present]

    # ------------------------------------------------------------- identity
    @cached_property
    def content_hash(self) -> str:
        """sha256 over the model bytes, every data set, the tolerances and the expectation."""
        h = hashlib.sha256()
        h.update(self.model_bytes)
        for ds in self.datasets:
            for name in sorted(ds.inputs):
                _hash_value(h, name, ds.inputs[name])
            if self.check is None:  # a check case's expected outputs are unused (and not stored)
                for name in sorted(ds.outputs):
                    _hash_value(h, name, ds.outputs[name])
        for o in self.outputs:
            if o.tolerance is not None:
                h.update(repr(sorted(o.tolerance.to_json().items())).encode())
        h.update(repr(self.expect_error).encode())
        if self.check is not None:
            h.update(b"check:" + self.check.encode())
        if self.contested is not None:
            h.update(b"contested:" + self.contested.encode())
        return h.hexdigest()

    @property
    def id(self) -> str:
        """Stable id: ``Op-since/label/hash6`` (the hash makes it unique and content-bound)."""
        parts = [f"{self.op}-{self.since_version}"]
        if self.domain:
            parts[0] = f"{self.domain}.{parts[0]}"
        if self.label:
            parts.append(self.label)
        parts.append(self.content_hash[:6])
        cid = "/".join(parts)
        return f"{cid}@{self.level}" if self.level else cid

    @property
    def dirname(self) -> str:
        """Bundle directory name: ``test_`` + a filesystem-safe form of the id."""
        slug = re.sub(r"[^A-Za-z0-9]+", "_", f"{self.op}_{self.since_version}_{self.label}").strip("_").lower()
        return f"test_{slug[:100]}_{self.content_hash[:10]}"

    @property
    def dtype(self) -> str:
        return str(self.tags.get("dtype", ""))


#: The operators (``(domain, op)``) whose expected outputs keep the oracle's NaN bits, sign and
#: payload: a conversion's result is its NaN encoding (Cast, CastLike: the text's tables, float8e4m3fn's
#: ``0x7f`` / ``0xff``), a bit cast's is the input's bits (BitCast).  :func:`canonicalise_nans`
#: leaves them as they are.
NAN_BITS_KEPT = frozenset({("", "Cast"), ("", "CastLike"), ("", "BitCast")})


def canonicalise_nans(case: Case) -> bool:
    """Make every NaN in ``case``'s expected outputs the canonical quiet NaN of its type
    (:func:`conformance.dtypes.canonical_nans`: float16, bfloat16, float, double and complex;
    positive, the default quiet payload), so that the content hash and the written files do not
    carry a NaN sign or payload that the machine's numpy loops chose (``x * sigmoid(x)`` at
    ``x = -inf``).  No comparison reads a NaN's sign or payload
    (:func:`conformance.tolerance.compare`).  Inputs are untouched, and so are the operators of
    :data:`NAN_BITS_KEPT` and the float8 / float4 / float6 types.  Sequences are done element by
    element; an absent optional stays ``None``.  Arrays are replaced, never written to (an
    expected output may be an input's array).  :func:`conformance.registry.generate` calls it
    once per generated case, before anything hashes or writes it.

    Returns:
        whether an output changed (a cached content hash is then dropped).
    """
    if (case.domain or "", case.op) in NAN_BITS_KEPT:
        return False
    changed = False
    for ds in case.datasets:
        for name, v in ds.outputs.items():
            if isinstance(v, list):
                old = [np.asarray(e) for e in v]
                new = [dtypes.canonical_nans(e) for e in old]
                if any(n is not e for n, e in zip(new, old)):
                    ds.outputs[name] = new
                    changed = True
            elif v is not None:
                old = np.asarray(v)
                new = dtypes.canonical_nans(old)
                if new is not old:
                    ds.outputs[name] = new
                    changed = True
    if changed:
        case.__dict__.pop("content_hash", None)
    return changed


def _hash_value(h, name: str, v) -> None:
    """Feed a data set value to the hash ``h``: an array as :func:`_hash_array` (the bytes every
    tensor case has always hashed), a sequence (``list``) as its length and each element under
    ``name[i]``, an absent optional (``None``) as a marker.  A present optional hashes as its
    value: the model's declared type tells it from a plain one."""
    if isinstance(v, list):
        h.update(name.encode() + b"\0sequence\0" + len(v).to_bytes(8, "little"))
        for k, e in enumerate(v):
            _hash_array(h, f"{name}[{k}]", e)
        return
    if v is None:
        h.update(name.encode() + b"\0optional-absent\0")
        return
    _hash_array(h, name, v)


def _hash_array(h, name: str, a: np.ndarray) -> None:
    """Feed ``name``, dtype, shape and contents of ``a`` to the hash ``h``.

    Strings (ONNX ``STRING``: numpy ``object`` arrays of ``str`` / ``bytes``, or ``str_`` /
    ``bytes_`` arrays) are hashed by their UTF-8 bytes, each with its length, under one dtype
    label, so the value written to a bundle and the object array of ``str`` read back hash
    the same (an object array's ``tobytes`` would be its pointers).  Every other dtype is
    hashed by its raw bytes, as before.

    Raises:
        TypeError: an object array holding something other than ``str`` / ``bytes``.
    """
    a = np.asarray(a, order="C")  # keeps 0-d arrays 0-d (ascontiguousarray would make them 1-d)
    if a.dtype.kind in "OUS":
        h.update(name.encode())
        h.update(b"string")
        h.update(repr(a.shape).encode())
        for s in a.ravel():
            if isinstance(s, (str, np.str_)):
                s = str(s).encode("utf-8")
            elif isinstance(s, (bytes, np.bytes_)):
                s = bytes(s)
            else:
                raise TypeError(f"{name}: a string tensor holds a {type(s).__name__}, not str or bytes")
            h.update(len(s).to_bytes(8, "little"))
            h.update(s)
        return
    h.update(name.encode())
    h.update(_dtype_name(a.dtype))
    h.update(repr(a.shape).encode())
    h.update(a.tobytes())


_DTYPE_NAMES: dict[np.dtype, bytes] = {}


def _dtype_name(dt: np.dtype) -> bytes:
    """``str(dt).encode()``, cached (numpy builds the name anew each time; bundles hash every tensor)."""
    name = _DTYPE_NAMES.get(dt)
    if name is None:
        name = _DTYPE_NAMES[dt] = str(dt).encode()
    return name


def _attribute(case: Case, name: str, value) -> onnx.AttributeProto:
    """``helper.make_attribute``; an empty list takes its type from the schema (Reshape-1's
    ``shape=[]``, Transpose's ``perm=[]`` on a rank-0 input: onnx cannot infer it from no
    element).

    Raises:
        ValueError: an empty list for an attribute the schema does not know.
    """
    if isinstance(value, (list, tuple)) and len(value) == 0:
        try:
            schema = onnx.defs.get_schema(case.op, case.opset, case.domain or "")
            attr_type = schema.attributes[name].type
        except Exception as exc:  # noqa: BLE001 - a schema onnx.defs lacks, or no such attribute
            raise ValueError(f"{case.op}: empty list for attribute {name!r}, whose type the schema "
                             f"does not give ({exc})") from None
        return helper.make_attribute(name, [], attr_type=int(attr_type))
    return helper.make_attribute(name, value)


def build_model(case: Case) -> onnx.ModelProto:
    """Build the single-node model of ``case`` (see module docstring), or a pattern case's
    multi-node model (``case.graph``: :meth:`conformance.patterns.core.PatternGraph.model`).

    Raises:
        ValueError: an initializer input has no value.
    """
    if case.graph is not None:
        return case.graph.model(case)
    node_inputs = [i.name if i.present else "" for i in case.inputs if not i.outer]
    while node_inputs and node_inputs[-1] == "":
        node_inputs.pop()
    node_outputs = [o.name if o.present else "" for o in case.outputs]
    while node_outputs and node_outputs[-1] == "" and len(node_outputs) > (case.output_slots or 0):
        node_outputs.pop()
    node = helper.make_node(case.op, node_inputs, node_outputs, name=case.op, domain=case.domain or None)
    for k in sorted(case.attributes):
        node.attribute.append(_attribute(case, k, case.attributes[k]))
    graph_inputs, inits, graph_outputs = graph_io(case)
    graph = helper.make_graph([node], f"{case.op}_{case.since_version}", graph_inputs, graph_outputs, inits)
    opsets = [helper.make_opsetid(case.domain, case.opset)]
    if case.domain:
        opsets.insert(0, helper.make_opsetid("", 17))
    model = helper.make_model(graph, opset_imports=opsets, producer_name="onnx-conformance")
    model.ir_version = helper.find_min_ir_version_for(list(model.opset_import), ignore_unknown=True)
    if model.ir_version < 4:
        # IR < 4 (opsets <= 8): every initializer must also be a graph input.
        for i in case.inputs:
            if i.present and i.initializer:
                model.graph.input.append(helper.make_tensor_value_info(i.name, i.elem_type, list(i.shape)))
    return model


def graph_io(case: Case) -> tuple[list[onnx.ValueInfoProto], list[onnx.TensorProto], list[onnx.ValueInfoProto]]:
    """``(graph inputs, initializers, graph outputs)`` of ``case``'s model: its present inputs as graph
    inputs or initializers (in ``case.inputs`` order), its present outputs with their shapes
    (:func:`_output_shape`).

    Raises:
        ValueError: an initializer input has no value.
    """
    graph_inputs, inits = [], []
    for i in case.inputs:
        if not i.present:
            continue
        if i.initializer:
            if i.value is None:
                raise ValueError(f"initializer {i.name!r} has no value")
            inits.append(numpy_helper.from_array(np.asarray(i.value, dtype=dtypes.np_dtype(i.elem_type)), i.name))
        else:
            graph_inputs.append(_value_info(i.name, i.kind, i.elem_type, i.shape))
    graph_outputs = [_value_info(o.name, o.kind, o.elem_type, _output_shape(case, o)) for o in case.present_outputs]
    return graph_inputs, inits, graph_outputs


def _value_info(name: str, kind: str, elem_type: int, shape) -> onnx.ValueInfoProto:
    """A graph input/output of ``kind``; a tensor's exactly as ``make_tensor_value_info`` makes it."""
    if kind == "tensor":
        return helper.make_tensor_value_info(name, elem_type, None if shape is None else list(shape))
    return helper.make_value_info(name, type_proto(kind, elem_type, shape))


def _output_shape(case: Case, out: Output) -> list[int | None] | None:
    if out.shape is not None:
        return list(out.shape)
    if out.kind != "tensor":
        return None
    for ds in case.datasets:
        if out.name in ds.outputs:
            return list(np.shape(ds.outputs[out.name]))
    first = next((i for i in case.inputs if i.present), None)
    if first is not None and (first.kind != "tensor" or first.shape is None):
        return None  # unknown rank
    return [None] * len(first.shape) if first is not None else []
