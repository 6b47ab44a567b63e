"""The opset constants and the opset schedule: which opsets a version's cases import.

One place for the opset facts every generator needs:

* :data:`LATEST_OPSET`: the newest ai.onnx opset the installed onnx defines
  (``onnx.defs.onnx_opset_version()``; 28 with onnx 1.23).  The installed onnx is part of
  the suite's recorded versions, so deriving it keeps "same versions, same bytes".
* :data:`RUNTIME_OPSET`: the newest ai.onnx opset that the onnxruntime releases vendors ship
  load (26: 1.25 to 1.31 refuse opset-28 models, "Unsupported model IR version: 14, max
  supported IR version: 13"; 1.32 loads them, measured in docs/compat.md).  Most cases
  import at most this opset, so that those runtimes can run them; a few cases of each
  operator's newest version import :data:`LATEST_OPSET` as well.

A version ``since`` of an operator is in force from opset ``since`` to the opset before the
next version (:func:`last_opset`).  :func:`opsets` gives the schedule the cases of that
version cycle over; :func:`body_opsets` the opsets at which onnx defines a function body of
the version (a runtime without a kernel may expand the body there, so those opsets get cases
of their own: onnxruntime expands Softplus-1 at opset 18, where ``Log(Add(Exp(X), 1))``
overflows).
"""

from __future__ import annotations

import onnx.defs

from ..opspec import OpSpec

#: Newest ai.onnx opset of the installed onnx (onnx 1.23: 28).
LATEST_OPSET: int = int(onnx.defs.onnx_opset_version())
#: Newest ai.onnx opset onnxruntime 1.25-1.31 load; cases stay at or below it except a few
#: per operator at :data:`LATEST_OPSET`.
RUNTIME_OPSET: int = 26
#: The ai.onnx opsets exporters emit, which layer-pattern graphs (:mod:`conformance.patterns`)
#: import: 13 (torch.onnx's long-time default range, tf2onnx's), 17 (torch.onnx's default from
#: torch 2.0: LayerNormalization exists), 18 (the dynamo exporter's; ReduceMean's axes become an
#: input) and :data:`RUNTIME_OPSET`.
EXPORTER_OPSETS: tuple[int, ...] = (13, 17, 18, RUNTIME_OPSET)


def last_opset(spec: OpSpec, since: int) -> int:
    """The last opset in which version ``since`` of ``spec`` is in force: the next version's
    since_version - 1, or :data:`LATEST_OPSET` for the newest version.

    Raises:
        KeyError: ``since`` is not a version of ``spec``.
    """
    if since not in spec.versions:
        raise KeyError(f"{spec.op} has no version {since}; versions: {spec.since_versions}")
    later = [v for v in spec.since_versions if v > since]
    if later:
        return later[0] - 1
    return LATEST_OPSET if _onnx_domain(spec) else since


def _onnx_domain(spec: OpSpec) -> bool:
    """ai.onnx: the domain whose opsets :data:`LATEST_OPSET` and :data:`RUNTIME_OPSET` count.
    Another domain's (com.microsoft) newest version is imported at its since_version only: a
    runtime refuses an opset of that domain beyond the newest it registers (onnxruntime 1.32
    refuses com.microsoft opset 26 and 28)."""
    return spec.domain in ("", "ai.onnx")


def opsets(spec: OpSpec, since: int) -> list[int]:
    """The opsets the cases of version ``since`` import, in the order cases cycle over them:
    ``since``; the version's last opset capped at :data:`RUNTIME_OPSET` (when later than
    ``since``); and :data:`LATEST_OPSET` for the newest version (when beyond the runtime cap).

    Outside ai.onnx: ``since`` only (:func:`last_opset`).

    Example: Acos-7 -> [7, 21]; Acos-22 -> [22, 26, 28]; Mod-28 -> [28];
    com.microsoft SkipLayerNormalization-1 -> [1].
    """
    if not _onnx_domain(spec):
        return [since]
    last = last_opset(spec, since)
    out = [since]
    mid = min(last, RUNTIME_OPSET)
    if mid > since:
        out.append(mid)
    if last == LATEST_OPSET and LATEST_OPSET not in out:
        out.append(LATEST_OPSET)
    return out


def body_opsets(spec: OpSpec, since: int) -> list[int]:
    """Opsets inside version ``since``'s range at which onnx defines its function body
    (``function_opset_versions`` and ``context_dependent_function_opset_versions``); empty for
    operators onnx.defs does not know (contrib schemas)."""
    if spec.source != "onnx.defs":
        return []
    s = onnx.defs.get_schema(spec.op, since, spec.domain)
    last = last_opset(spec, since)
    found = set(s.function_opset_versions) | set(s.context_dependent_function_opset_versions)
    return sorted(b for b in found if since <= b <= last)
