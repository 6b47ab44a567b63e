"""Shared building blocks of the families whose values are sequences and optionals (sequence,
optional and control-flow operators; Identity's ``seq``/``optional`` types).

The engine (:mod:`conformance.ops.engine`) draws tensors only; these families build their
cases themselves (:attr:`conformance.ops.entry.Entry.extra_cases`) from the schema
(:mod:`conformance.opspec`: versions, type constraints, attributes) and the opset schedule
(:mod:`conformance.ops.schedule`), with the value model of :mod:`conformance.case` (a sequence
is a ``list`` of ndarrays, an optional ``None`` or its value).
"""

from __future__ import annotations

import numpy as np
from onnx import helper

from .. import dtypes
from ..case import Case, DataSet, Input, Output
from ..opspec import VersionSpec
from ..tolerance import Tolerance

#: The tolerance of outputs that are copies of inputs' elements (data movement, no arithmetic):
#: exact, NaN matching NaN and the sign of zero kept.
EXACT = Tolerance(0.0, 0.0, variants=("data movement: exact",), exact=True, signed_zero=True)

#: Strings drawn for string tensors (ASCII, non-ASCII, empty).
_WORDS = ("", "a", "onnx", "h\u00e9llo", "\u6f22\u5b57", "z" * 9)


def split_type(t: str) -> tuple[str, str]:
    """``(kind, element type name)`` of a schema type string: ``tensor(float)`` -> ``("tensor",
    "float")``, ``seq(tensor(int8))`` -> ``("sequence", "int8")``, ``optional(tensor(x))`` ->
    ``("optional_tensor", "x")``, ``optional(seq(tensor(x)))`` -> ``("optional_sequence", "x")``;
    a bare name (the engine's ``float``) is a tensor.

    Raises:
        ValueError: a map, a sparse tensor or a nested sequence.
    """
    if "(" not in t:
        return "tensor", t
    if t.startswith("tensor(") and t.endswith(")"):
        return "tensor", t[7:-1]
    if t.startswith("seq(tensor(") and t.endswith("))"):
        return "sequence", t[11:-2]
    if t.startswith("optional("):
        inner, name = split_type(t[9:-1])
        if inner in ("tensor", "sequence"):
            return f"optional_{inner}", name
    raise ValueError(f"no value kind for the type {t!r}")


def full_type(t: str) -> str:
    """The schema's type string of an engine type name (``float`` -> ``tensor(float)``)."""
    return t if "(" in t else f"tensor({t})"


def types_of(vs: VersionSpec, param: str, kind: str | None = None) -> list[str]:
    """Element type names of the types of ``param`` in ``vs`` (of one ``kind``, or all), in
    schema order, each once."""
    out = []
    for t in vs.type_constraints[param]:
        try:
            k, name = split_type(t)
        except ValueError:
            continue
        if (kind is None or k == kind) and name not in out:
            out.append(name)
    return out


def draw(rng: np.random.Generator, type_name: str, shape: tuple[int, ...], special: bool = False) -> np.ndarray:
    """A tensor of ``type_name`` and ``shape`` with small values every type represents exactly
    (floats: +-0.5, +-1, +-2, and with ``special`` a -0.0, NaN and infinity where the type has
    them; float8e8m0: powers of two; integers in the type's range near 0; bool; strings
    from a fixed list, non-ASCII included).

    Returns:
        an ndarray in :func:`conformance.dtypes.np_dtype` of the type.
    """
    et = dtypes.elem_type(type_name)
    dt = dtypes.np_dtype(et)
    n = int(np.prod(shape, dtype=np.int64))
    if dtypes.is_string(et):
        vals = np.array([_WORDS[int(i)] for i in rng.integers(0, len(_WORDS), n)] or [], dtype=object)
        return vals.reshape(shape)
    if dtypes.is_bool(et):
        return (rng.random(n) < 0.5).reshape(shape)
    if dtypes.is_complex(et):
        re_, im = rng.integers(-3, 4, n), rng.integers(-3, 4, n)
        return (re_ + 1j * im).astype(dt).reshape(shape)
    if dtypes.is_float(et):
        if type_name == "float8e8m0":
            vals = 2.0 ** rng.integers(-2, 3, n)
        else:
            vals = rng.choice([-2.0, -1.0, -0.5, 0.5, 1.0, 2.0], n)
            if special and n >= 3 and type_name in ("float", "double", "float16", "bfloat16"):
                vals[:3] = [-0.0, np.nan, np.inf]
        return np.asarray(vals, dtype=np.float64).astype(dt).reshape(shape)
    info = dtypes.iinfo(et)
    lo, hi = max(int(info.min), -3), min(int(info.max), 5)
    return np.asarray(rng.integers(lo, hi + 1, n), dtype=np.int64).astype(dt).reshape(shape)


def elem(type_name: str) -> int:
    """The ONNX element type of a type name."""
    return dtypes.elem_type(type_name)


def seq_shape(values) -> tuple[int | None, ...] | None:
    """The element shape a graph declares for a sequence: the common rank with ``None`` where
    the tensors' dimensions differ; ``None`` (unknown rank) for an empty sequence or mixed ranks."""
    if values is None or not isinstance(values, list):
        return None if values is None else tuple(np.shape(values))
    if not values or len({v.ndim for v in values}) != 1:
        return None
    return tuple(d[0] if len(set(d)) == 1 else None for d in zip(*(v.shape for v in values)))


def position(value: int, type_name: str) -> np.ndarray:
    """A 0-d position tensor of ``type_name`` (int32 or int64)."""
    return np.array(value, dtype=dtypes.np_dtype(elem(type_name)))


def make_case(op: str, since: int, opset: int, *, inputs: list[Input], outputs: list[Output], datasets: list[DataSet],
              attrs: dict | None = None, tags: dict | None = None, label: str = "", expect_error: str | None = None,
              contested: str | None = None) -> Case:
    """A case of these families (the label is the id's middle part; tags ``dtype`` and
    ``opset`` are the engine's)."""
    tags = dict(tags or {})
    tags.setdefault("opset", opset)
    label = "/".join(x for x in (label, f"opset{opset}") if x)
    return Case(op=op, since_version=since, opset=opset, attributes=dict(attrs or {}), inputs=inputs, outputs=outputs,
                datasets=datasets, tags=tags, label=label, expect_error=expect_error, contested=contested)


def type_attr(kind: str, type_name: str):
    """The ``TypeProto`` an attribute of type TYPE_PROTO holds (Optional's ``type``): the element
    type for ``tensor``, a sequence of it for ``sequence``."""
    tp = helper.make_tensor_type_proto(elem(type_name), None)
    return helper.make_sequence_type_proto(tp) if kind == "sequence" else tp


def smoke(cases: list[Case]) -> list[Case]:
    """The smoke selection of a family's own cases: the first value case of every (version,
    type) and the first invalid model of every version (:data:`conformance.registry.DEPTHS`)."""
    seen, out = set(), []
    for c in cases:
        key = (c.since_version, "error") if c.expect_error else (c.since_version, c.tags.get("dtype"))
        if key not in seen:
            seen.add(key)
            out.append(c)
    return out
