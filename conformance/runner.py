"""Run cases against a backend and classify each into an outcome.

Outcomes (DESIGN.md, "Outcomes"):

* ``pass``: every output within tolerance (value case), or a rejection of an invalid
  model (error case) that is not merely a refusal (a backend too old for the model's IR
  version or opset, or without a kernel or tensor type for it, has not shown that it checks
  the model: ``unsupported``);
* ``fail``: wrong values, shape, dtype, a missing or extra output, or an invalid
  model accepted;
* ``error``: the backend raised while preparing or running a valid model;
* ``unsupported``: the backend said cleanly that it does not implement this
  op/type/attribute/opset (never counted as a pass); also any rejection of a
  *contested* model (``Case.contested``: one the spec contradicts itself about, which
  onnx's checker rejects), with the message starting ``contested model``.  What a
  message says the backend cannot do comes from the backend (:meth:`Backend.refusal
  <conformance.backends.base.Backend.refusal>`, one table per backend): a ``version``
  refusal (the model's IR version or opset is newer than the runtime: "Unsupported model
  IR version: 10, max supported IR version: 9") is ``unsupported`` for every case, valid
  or invalid, even where the runtime wraps it in a validation status (onnxruntime up to
  1.21: INVALID_ARGUMENT), and its message starts with the reason (``prepare: cannot load
  the model for its version (...)`` / ``declined as unsupported at prepare for the model's
  version (...)``) so that the report's problem list shows it;
* ``crash`` / ``timeout``: reserved for the isolated runner (process died / too slow);
* ``xfail`` / ``xpass``: against an expected-failure list;
* ``skip``: not run.

This module runs cases in-process, one after another; exceptions from the
backend are caught per case (``KeyboardInterrupt`` stops the run).
"""

from __future__ import annotations

import math
import re
import time
import traceback
from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from .backends.base import Backend
from .case import Case
from .tolerance import Check, compare_value

#: Messages that show a model was checked and found invalid (onnx's checker and shape
#: inference, onnxruntime's graph validation), even where they also say "unsupported"
#: ("X typestr: T, has unsupported type: tensor(bfloat16)").
_VALIDATION_RE = re.compile(r"ShapeInferenceError|InferenceError|ValidationError|Type Error|INVALID_GRAPH|"
                            r"INVALID_ARGUMENT|has unsupported type", re.IGNORECASE)

OUTCOMES = ("pass", "fail", "error", "unsupported", "crash", "timeout", "xfail", "xpass", "skip")


@dataclass
class CaseResult:
    """Outcome of one case on one backend.

    Attributes:
        id, op, domain, since_version, opset, tags: copied from the case.
        outcome: one of :data:`OUTCOMES`.
        message: why (empty for a plain pass of a value case).
        phase: where it was decided: ``prepare``, ``run`` or ``compare``.
        outputs: per output, the worst :class:`Check` over the data sets (JSON dicts).
        expect_error: the case's expected rejection, if it is an error case.
        duration_s: wall time of prepare + all runs, in seconds.
        detail: for a case that did not pass, what it fed the backend (:func:`case_detail`), so
            that a report drawn from the results alone can show it; ``None`` otherwise.
        level: the graph-optimization level the case ran at (``Case.level``: layer-pattern
            cases, :mod:`conformance.levels`); ``None`` otherwise (not written).
        optimized: for a case run at a level on a backend that records it: ``{"ops": op types of
            the optimized graph, "responsible": the rewrite whose removal makes a failing case
            pass, or None}`` (not written when ``None``).
    """

    id: str
    op: str
    domain: str
    since_version: int
    opset: int
    tags: dict[str, Any]
    outcome: str
    message: str = ""
    phase: str = ""
    outputs: list[dict] = field(default_factory=list)
    expect_error: str | None = None
    duration_s: float = 0.0
    detail: dict | None = None
    level: str | None = None
    optimized: dict | None = None

    def to_json(self) -> dict:
        d = {
            "id": self.id,
            "op": self.op,
            "domain": self.domain,
            "since_version": self.since_version,
            "opset": self.opset,
            "tags": self.tags,
            "outcome": self.outcome,
            "message": self.message,
            "phase": self.phase,
            "outputs": self.outputs,
            "expect_error": self.expect_error,
            "duration_s": round(self.duration_s, 6),
        }
        if self.detail is not None:
            d["detail"] = self.detail
        if self.level is not None:  # written only for levelled cases: other records keep their bytes
            d["level"] = self.level
        if self.optimized is not None:
            d["optimized"] = self.optimized
        return d

    @classmethod
    def from_json(cls, d: dict) -> CaseResult:
        return cls(**{k: d.get(k) for k in cls.__dataclass_fields__ if k in d})


def _exc_text(exc: BaseException, limit: int = 2000) -> str:
    text = f"{type(exc).__name__}: {exc}".strip()
    return text if len(text) <= limit else text[:limit] + " ..."


def run_case(case: Case, backend: Backend) -> CaseResult:
    """Run every data set of ``case`` on ``backend`` and classify the outcome
    (:func:`judge_case` of :func:`attempt_case`).

    Never raises for backend failures (``KeyboardInterrupt``/``SystemExit`` pass through).
    """
    return judge_case(case, backend, attempt_case(case, backend))


@dataclass
class Attempt:
    """What a backend did with one case, before it is judged (:func:`attempt_case`).

    Attributes:
        outputs: per data set run, the outputs the backend returned (as it returned them).
        phase: ``"prepare"`` or ``"run"`` when the backend raised ``exc`` there, else ``""``.
        exc: the exception the backend raised (its traceback holds no prepared model).
        duration_s: wall time of prepare + the runs, in seconds (nothing runs for a case with
            ``Case.skip``).
        optimized_ops: the op types of the optimized graph (a levelled case on a backend with
            ``optimized_ops``), else ``None``.
    """

    outputs: list = field(default_factory=list)
    phase: str = ""
    exc: Exception | None = None
    duration_s: float = 0.0
    optimized_ops: list | None = None


def prepare_case(case: Case, backend: Backend, disabled=()):
    """``backend.prepare`` of ``case``'s model, or, for a case with a level (``Case.level``) on a
    backend with ``prepare_at_level`` (:mod:`conformance.levels`), that method at the level (with
    the rewrites named in ``disabled`` removed)."""
    if case.level is not None and hasattr(backend, "prepare_at_level"):
        return backend.prepare_at_level(case.model, case.model_bytes, case.level, disabled=disabled)
    return backend.prepare(case.model, case.model_bytes)


def attempt_case(case: Case, backend: Backend) -> Attempt:
    """Prepare ``case``'s model on ``backend`` and run its data sets, keeping what came back and
    judging nothing: the isolated runner attempts a batch of cases, then judges them one after
    another, where comparing costs half what it costs between two runs of onnxruntime
    (measured: 0.10 s against 0.21 s for 3,027 outputs, its caches being the difference).

    Stops at the first exception, after the first data set of an error case (an invalid model
    that runs is judged from that) and after a run that returns the wrong number of outputs.
    Never raises for backend failures.
    """
    if case.skip is not None:
        return Attempt()
    names = [o.name for o in case.present_outputs]
    got = Attempt()
    t0 = time.perf_counter()
    try:
        prepared = prepare_case(case, backend)
    except Exception as exc:  # noqa: BLE001 - any backend failure is classified
        got.phase, got.exc = "prepare", exc
    else:
        if case.level is not None and hasattr(backend, "optimized_ops"):
            got.optimized_ops = backend.optimized_ops(prepared)
        for ds in case.datasets:
            try:
                outs = backend.run(prepared, ds.inputs, names)
            except Exception as exc:  # noqa: BLE001
                got.phase, got.exc = "run", exc
                break
            try:
                outs = list(outs)
            except TypeError:
                outs = [outs]
            got.outputs.append(outs)
            if case.expect_error is not None or len(outs) != len(names):
                break
        del prepared  # not held by the traceback of an exception kept for judging
    got.duration_s = time.perf_counter() - t0
    # An exception kept in ``got`` holds its traceback, which holds this frame, which would hold
    # ``got`` after the return: a cycle (with the case, the half-made session and the frames below)
    # that only the collector frees, ~5 objects a case of a run, ~15 us a case of collections in
    # a worker (each a 12 ms walk).  The frame lets go of ``got`` as it returns.
    try:
        return got
    finally:
        del got


def judge_case(case: Case, backend: Backend, got: Attempt) -> CaseResult:
    """Classify ``got`` (:func:`attempt_case` of ``case`` on ``backend``) into a :class:`CaseResult`.

    Never raises for backend failures (a backend's output that cannot be compared is a fail).
    """
    res = CaseResult(
        id=case.id,
        op=case.op,
        domain=case.domain,
        since_version=case.since_version,
        opset=case.opset,
        tags=dict(case.tags),
        outcome="pass",
        expect_error=case.expect_error,
        level=case.level,
    )
    if case.skip is not None:
        res.outcome, res.message = "skip", case.skip
        return res
    res.duration_s = got.duration_s
    _judge(case, backend, res, got)
    if res.outcome != "pass":
        res.detail = case_detail(case)
    if case.level is not None and (got.optimized_ops is not None or hasattr(backend, "rewrite_names")):
        res.optimized = {"ops": got.optimized_ops, "responsible": None}
        if res.outcome in ("fail", "error") and case.level != "disable":
            res.optimized["responsible"] = responsible_rewrite(case, backend)
    return res


def responsible_rewrite(case: Case, backend: Backend) -> str | None:
    """The first rewrite of ``backend.rewrite_names`` (a name, or ``(label, names)`` removed
    together) whose removal makes ``case`` (at its level) pass, or ``None`` (none does, or the backend cannot remove rewrites).  Each try prepares the
    model anew without that one rewrite and judges every data set."""
    names = getattr(backend, "rewrite_names", ())
    for entry in names:
        name, group = (entry, (entry,)) if isinstance(entry, str) else entry
        got = Attempt()
        try:
            prepared = prepare_case(case, backend, disabled=tuple(group))
            for ds in case.datasets:
                got.outputs.append(list(backend.run(prepared, ds.inputs, [o.name for o in case.present_outputs])))
            del prepared
        except Exception:  # noqa: BLE001 - still failing without this rewrite
            continue
        trial = CaseResult(id=case.id, op=case.op, domain=case.domain, since_version=case.since_version,
                           opset=case.opset, tags={}, outcome="pass", expect_error=case.expect_error)
        _judge(case, backend, trial, got)
        if trial.outcome == "pass":
            return name
    return None


def case_detail(case: Case) -> dict:
    """What ``case`` fed the backend, for the drill-down of a case that did not pass.

    Returns:
        ``{"inputs": [[name, elem_type, shape, initializer (0/1), present (0/1)], ...],
        "outputs": [[name, elem_type, present (0/1)], ...], "attributes": {name: value}}``, a
        sequence or optional input/output with its kind (:data:`conformance.case.KINDS`) last
        (its shape ``None`` for an unknown rank);
        attribute values as JSON has them (bytes as text; a tensor or graph attribute as its
        type's name).
    """
    d = {
        "inputs": [[i.name, i.elem_type, None if i.shape is None else list(i.shape), int(i.initializer),
                    int(i.present)] + ([i.kind] if i.kind != "tensor" else []) for i in case.inputs],
        "outputs": [[o.name, o.elem_type, int(o.present)] + ([o.kind] if o.kind != "tensor" else [])
                    for o in case.outputs],
        "attributes": {k: _attr_json(v) for k, v in sorted(case.attributes.items())},
    }
    if case.domain == "pattern":  # a layer-pattern case: its minimal graph and drawn variation values
        from .patterns.core import describe_model

        d["nodes"] = describe_model(case.model)
        d["variation"] = {k[2:]: v for k, v in sorted(case.tags.items()) if k.startswith("v_")}
    return d


def _attr_json(v):
    if isinstance(v, bytes):
        return v.decode("utf-8", "replace")
    if isinstance(v, (bool, int, float, str)) or v is None:
        return v if not (isinstance(v, float) and not math.isfinite(v)) else str(v)
    if isinstance(v, (list, tuple)):
        return [_attr_json(x) for x in v]
    if isinstance(v, (np.integer, np.floating)):
        return _attr_json(v.item())
    return type(v).__name__


def _declined(case: Case, backend: Backend, res: CaseResult, exc: Exception, phase: str) -> None:
    res.phase = phase
    refusal = backend.refusal(exc)
    if refusal is not None and refusal.kind == "version":
        # the runtime is older than the model: it says nothing about the model itself, valid or not
        res.outcome = "unsupported"
        if case.expect_error is not None:
            res.message = (f"declined as unsupported at {phase} for the model's version ({refusal.reason}), which "
                           f"does not show that the invalid model ({case.expect_error}) is rejected: "
                           f"{_exc_text(exc, 500)}")
        else:
            res.message = f"{phase}: cannot load the model for its version ({refusal.reason}): {_exc_text(exc)}"
    elif case.expect_error is not None and refusal is not None and not _VALIDATION_RE.search(_exc_text(exc)):
        # "no kernel for this op/opset" says nothing about whether the backend checks the
        # invalidity the case is about: not a pass
        res.outcome = "unsupported"
        res.message = (f"declined as unsupported at {phase}, which does not show that the invalid model "
                       f"({case.expect_error}) is rejected: {_exc_text(exc, 500)}")
    elif case.expect_error is not None:
        res.outcome = "pass"
        res.message = f"rejected at {phase} as expected ({case.expect_error}): {_exc_text(exc, 500)}"
    elif case.contested is not None:
        res.outcome = "unsupported"
        res.message = f"contested model ({case.contested}), rejected at {phase}: {_exc_text(exc)}"
    elif refusal is not None:
        res.outcome = "unsupported"
        res.message = f"{phase}: {_exc_text(exc)}"
    else:
        res.outcome = "error"
        res.message = f"{phase}: {_exc_text(exc)}"
        if not str(exc):
            res.message += "\n" + "".join(traceback.format_exception(exc)[-3:])


def _judge(case: Case, backend: Backend, res: CaseResult, got: Attempt) -> None:
    present = case.present_outputs  # a list made anew by each call: once here
    names = [o.name for o in present]
    worst: dict[str, Check] = {}
    for k, outs in enumerate(got.outputs):
        if case.expect_error is not None:
            res.outcome, res.phase = "fail", "run"
            res.message = f"accepted an invalid model ({case.expect_error}) and returned outputs"
            return
        if len(outs) != len(names):
            res.outcome, res.phase = "fail", "compare"
            res.message = f"data set {k}: backend returned {len(outs)} output(s), expected {len(names)} ({', '.join(names)})"
            return
        ds = case.datasets[k]
        if case.check is not None:
            if not _run_check(case, ds, dict(zip(names, outs)), res, k):
                return
            continue
        for out, actual in zip(present, outs):
            chk = compare_value(out.name, actual, ds.outputs[out.name], out.tolerance)
            prev = worst.get(out.name)
            if prev is None or _worse(chk, prev):
                chk.reason = f"data set {k}: {chk.reason}" if (chk.reason and len(case.datasets) > 1) else chk.reason
                worst[out.name] = chk
    if got.exc is not None:  # the data sets before the failing one were judged first, as they ran
        _declined(case, backend, res, got.exc, got.phase)
        return
    if case.check is not None:
        res.phase = "compare"
        res.message = res.message or f"judged by {case.check}"
        return
    res.outputs = [worst[n].to_json() for n in names]
    failed = [worst[n] for n in names if not worst[n].passed]
    res.phase = "compare"
    if failed:
        res.outcome = "fail"
        res.message = "; ".join(f"{c.name}: {c.reason}" for c in failed)


def _run_check(case: Case, ds, outputs: dict, res: CaseResult, k: int) -> bool:
    """Judge one data set with ``case.check``; False (and ``res`` a fail/error) when it does not pass."""
    from .backends.backend_api import load_check

    inputs = {i.name: i.value for i in case.inputs if i.present and i.initializer}
    inputs.update(ds.inputs)
    try:
        fn = load_check(case.check)
        passed, message = fn(inputs, {n: np.asarray(v) for n, v in outputs.items()}, dict(case.attributes))
    except Exception as exc:  # noqa: BLE001 - a broken check must not pass silently
        res.outcome, res.phase = "error", "compare"
        res.message = f"check {case.check} raised {type(exc).__name__}: {exc}"
        return False
    if not passed:
        res.outcome, res.phase = "fail", "compare"
        res.message = f"data set {k}: {message}" if len(case.datasets) > 1 else str(message)
        return False
    res.message = str(message)
    return True


def _worse(a: Check, b: Check) -> bool:
    if a.passed != b.passed:
        return not a.passed
    ra = a.ratio if not math.isnan(a.ratio) else math.inf
    rb = b.ratio if not math.isnan(b.ratio) else math.inf
    return ra > rb


def run_cases(
    cases: Iterable[Case],
    backend: Backend,
    *,
    on_result: Callable[[CaseResult], None] | None = None,
) -> list[CaseResult]:
    """Run ``cases`` one by one on ``backend``.

    Args:
        cases: the cases.
        backend: a resolved :class:`Backend`.
        on_result: called after each case (progress display, streaming).
    """
    results = []
    for case in cases:
        r = run_case(case, backend)
        results.append(r)
        if on_result:
            on_result(r)
    return results


def summarize(results: Iterable[CaseResult | dict]) -> dict[str, int]:
    """Counts per outcome, every outcome of :data:`OUTCOMES` present (zero if none)."""
    c = Counter((r["outcome"] if isinstance(r, dict) else r.outcome) for r in results)
    return {o: c.get(o, 0) for o in OUTCOMES}


def np_versions() -> dict[str, str]:
    """Versions of the libraries that determine generated bytes."""
    import ml_dtypes
    import onnx

    return {"numpy": np.__version__, "onnx": onnx.__version__, "ml_dtypes": ml_dtypes.__version__}
