"""What the operator-family tests share: onnx's own node tests of some operators (the spec's
worked examples), and the sorting of another runtime's disagreements by their stated reason."""

from __future__ import annotations

import importlib
from collections import Counter


def single_node_tests(ops, modules) -> list:
    """onnx's node tests (``onnx.backend.test.case.node``, built in memory) whose model is one
    node of a type in ``ops``, after importing ``modules`` of that package (each registers its
    cases).  ``_NodeTestCases`` is shared by every importer: once some module has collected the
    ``_expanded`` function-body tests too, a body whose first node is, say, Add is not an Add
    test, hence the one-node filter."""
    import onnx.backend.test.case.node as N

    for m in modules:
        importlib.import_module(f"onnx.backend.test.case.node.{m}")
    return [t for t in N._NodeTestCases
            if t.model is not None and len(t.model.graph.node) == 1 and t.model.graph.node[0].op_type in ops]


def sort_findings(cases, results, explain, *, key=None, skip=None) -> tuple[Counter, list]:
    """The non-passing ``results`` of ``cases`` sorted by ``explain(case, result) -> reason or
    None``: (``key(case, reason, result)`` -> count, the unexplained ones as (id, outcome,
    message)).  ``key`` defaults to the reason; ``skip(case, result)`` drops a result
    before it is explained."""
    why, unexplained = Counter(), []
    for c, r in zip(cases, results):
        if r.outcome == "pass" or (skip is not None and skip(c, r)):
            continue
        k = explain(c, r)
        if k is None:
            unexplained.append((c.id, r.outcome, (r.message or "")[:200]))
        why[key(c, k, r) if key is not None else k] += 1
    return why, unexplained


def reduced_tolerances(cases, *, spread: bool, propagated: bool) -> list:
    """Copies of ``cases`` whose derived tolerances keep only the named parts, beside the
    output-ulp floor: the legitimate variants' ``spread`` (times the safety factor) and the
    ``propagated`` statistics term (:class:`conformance.tolerance.Tolerance`); a test shows
    which part a kernel needs."""
    import copy
    import dataclasses

    from conformance.tolerance import DEFAULT_SAFETY

    out = []
    for c in cases:
        c2 = copy.copy(c)
        c2.outputs = []
        for o in c.outputs:
            tol = o.tolerance
            if tol is not None and not tol.exact:
                atol = tol.atol - (0 if spread else DEFAULT_SAFETY * tol.spread) - (0 if propagated else tol.propagated)
                tol = dataclasses.replace(tol, atol=max(atol, 0.0))
            c2.outputs.append(dataclasses.replace(o, tolerance=tol))
        out.append(c2)
    return out
