"""Run a case in its *variants*: parameters as graph inputs, or as initializers.

Some runtimes only accept constant parameters (tract, for one, wants the
normalization parameters as initializers), others treat initializers and graph
inputs through different code paths (constant folding, prepacking).  The same
case can be scored both ways.

The *parameters* of a case are its present inputs after the first (the data
input): Scale and B of LayerNormalization; scale, B, mean and var of
BatchNormalization.  A parameter can become an initializer only when every data set
feeds it the same value (an initializer is baked into the model).
"""

from __future__ import annotations

import copy

import numpy as np

from .case import Case, DataSet

VARIANTS = ("inputs", "initializers")


def with_params_as(case: Case, kind: str) -> Case | None:
    """``case`` with its parameters as graph inputs (``"inputs"``) or initializers (``"initializers"``).

    Returns:
        a new case (new model, id and content hash; tag ``inputs_as`` set to ``kind`` and
        ``variant`` set), or ``None`` when the case is an error case or already in
        that form, or (initializers) a parameter differs between data sets, or a layer-pattern
        case (:mod:`conformance.patterns`: its ``params`` axis already varies this).

    Raises:
        ValueError: unknown ``kind``.
    """
    if kind not in VARIANTS:
        raise ValueError(f"unknown variant {kind!r}; known: {', '.join(VARIANTS)}")
    if case.expect_error is not None:
        return None
    if case.domain == "pattern":  # a layer pattern varies where its parameters live itself (axis "params")
        return None
    params = [i for i in case.inputs[1:] if i.present]
    to_change = [p for p in params if p.initializer != (kind == "initializers")]
    if not to_change:
        return None
    new = copy.copy(case)
    for k in ("model", "model_bytes", "content_hash"):
        new.__dict__.pop(k, None)
    new.inputs = [copy.copy(i) for i in case.inputs]
    new.datasets = [DataSet(dict(ds.inputs), dict(ds.outputs)) for ds in case.datasets]
    by_name = {i.name: i for i in new.inputs}
    for p in to_change:
        inp = by_name[p.name]
        if kind == "initializers":
            values = [ds.inputs[p.name] for ds in new.datasets]
            if any(not np.array_equal(values[0], v, equal_nan=True) or v.dtype != values[0].dtype for v in values[1:]):
                return None
            inp.initializer, inp.value = True, values[0]
            for ds in new.datasets:
                del ds.inputs[p.name]
        else:
            if inp.value is None:
                return None
            for ds in new.datasets:
                ds.inputs[p.name] = inp.value
            inp.initializer, inp.value = False, None
    new.tags = {**case.tags, "inputs_as": kind, "variant": f"params-as-{kind}"}
    new.label = f"{case.label}/as={kind}" if case.label else f"as={kind}"
    return new


def expand(cases: list[Case], kinds: list[str]) -> list[Case]:
    """The cases followed, for each case, by its variants of ``kinds`` that differ from it.

    Raises:
        ValueError: unknown kind.
    """
    for k in kinds:
        if k not in VARIANTS:
            raise ValueError(f"unknown variant {k!r}; known: {', '.join(VARIANTS)}")
    out: list[Case] = []
    seen: set[str] = set()
    for c in cases:
        for cand in [c] + [with_params_as(c, k) for k in kinds]:
            if cand is not None and cand.id not in seen:
                seen.add(cand.id)
                out.append(cand)
    return out
