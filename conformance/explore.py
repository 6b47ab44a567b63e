"""Explore mode: fresh randomized cases drawn with hypothesis, failures shrunk to a minimal case.

Conformance mode runs a frozen, hashed suite; explore mode (DESIGN.md, "Two modes")
draws new cases from the same generators with hypothesis strategies
(:func:`conformance.registry.register_strategy`; one per operator: every entry of the
operator table gets :func:`conformance.ops.engine.strategy`, which draws the coordinates the
frozen suite enumerates, :func:`conformance.ops.engine.points`).  Every parameter of a case --
type combination, shape pattern and each of its dims, attribute state, optional inputs and
outputs, numerics class, opset, the data seed -- is a hypothesis draw, so when a backend fails a case hypothesis *shrinks* it: it
retries simpler draws (smaller dims, lower rank, the first dtype, fewer outputs...)
as long as the backend still fails, and reports the minimal failing case.

:func:`explore_op` runs that search for one operator against a ``run`` callable (the
pytest plugin passes one that runs each case in a worker subprocess, so a crash or a
hang is a failure that shrinks like any other).  A failure raises
:class:`ExploreFailure`, which carries the minimal case, its result, the bundle it
was saved to (:func:`save_failure`, a one-case bundle written with
:func:`conformance.bundle_write.write_bundle`) and the one-line command that reproduces it
(:func:`repro_command`).

What counts as a failure: a result whose outcome is ``fail``, ``error``, ``crash`` or
``timeout`` after expected failures were applied (``xfail`` does not count).
``unsupported`` and ``skip`` are not failures: they are counted, and an operator
whose every example was unsupported is reported as such (the pytest plugin skips it).
"""

from __future__ import annotations

import os
import shlex
from collections import Counter
from collections.abc import Callable
from pathlib import Path

from .case import Case
from .runner import CaseResult

#: Outcomes that make an explore example fail (and shrink).
FAILING = ("fail", "error", "crash", "timeout")
#: Default number of examples hypothesis draws per operator.
DEFAULT_MAX_EXAMPLES = 100
#: ``explore_op(database=...)`` default: the example database of the current hypothesis settings profile.
PROFILE_DATABASE = object()


class Example:
    """One drawn case, with a short ``repr`` (hypothesis prints it as the falsifying example)."""

    __slots__ = ("case",)

    def __init__(self, case: Case):
        self.case = case

    def __repr__(self) -> str:
        return f"Example({describe_case(self.case)})"


def describe_case(case: Case) -> str:
    """One line: the case id, its inputs (shape and dtype, initializers marked) and attributes."""
    from . import dtypes

    ins = []
    for i in case.inputs:
        if not i.present:
            continue
        kind = " init" if i.initializer else (" outer" if i.outer else "")
        shape = "[?]" if i.shape is None else str(list(i.shape))
        t = dtypes.type_name(i.elem_type)
        t = {"sequence": f"seq({t})", "optional_tensor": f"optional({t})",
             "optional_sequence": f"optional(seq({t}))"}.get(i.kind, t)
        ins.append(f"{i.name}{shape}:{t}{kind}")
    outs = ",".join(o.name for o in case.present_outputs)
    attrs = ", ".join(f"{k}={case.attributes[k]!r}" for k in sorted(case.attributes))
    return f"{case.id}: inputs {' '.join(ins)}; outputs {outs}; attributes {{{attrs}}}; opset {case.opset}"


class ExploreFailure(Exception):
    """Explore mode found a failing case; the attributes describe the minimal one.

    Attributes:
        op: the operator explored.
        case: the minimal failing case (after shrinking).
        result: its :class:`CaseResult` (outcome in :data:`FAILING`).
        bundle: where the case was saved as a one-case bundle, or ``None``.
        command: the command that reruns the saved case, or ``None`` when not saved.
        counts: outcome -> number of examples run (shrinking included).
    """

    def __init__(self, op: str, case: Case, result: CaseResult, bundle: Path | None, command: str | None,
                 counts: Counter):
        self.op, self.case, self.result = op, case, result
        self.bundle, self.command, self.counts = bundle, command, counts
        super().__init__(self.render())

    def render(self) -> str:
        """The failure message: outcome, minimal case, per-output details and how to reproduce it."""
        r = self.result
        lines = [
            f"explore {self.op}: minimal failing case after shrinking: {r.outcome}"
            + (f" at {r.phase}" if r.phase else ""),
            f"  case: {describe_case(self.case)}",
            f"  message: {r.message}",
        ]
        lines.append("  examples run: " + ", ".join(f"{k} {v}" for k, v in sorted(self.counts.items())))
        if self.bundle is not None:
            lines.append(f"  saved as a bundle: {self.bundle}")
            lines.append(f"  reproduce: {self.command}")
        else:
            lines.append("  (--conformance-save-failures DIR saves it as a bundle, with a command that reruns it)")
        return "\n".join(lines)


class _ExampleFailed(Exception):
    """Raised inside the hypothesis test for a failing example (hypothesis shrinks on it)."""

    def __init__(self, case: Case, result: CaseResult):
        super().__init__(f"{result.outcome}: {result.message[:500]}")
        self.case, self.result = case, result


def save_failure(case: Case, directory: str | os.PathLike) -> Path:
    """Write ``case`` as a one-case bundle ``DIRECTORY/<op>-<hash12>`` and return its path.

    Writing the same case again replaces the bundle (it is byte-identical).

    Raises:
        conformance.bundle.BundleError: the target exists and is not one of our bundles.
    """
    from .bundle_write import write_bundle
    from .suite import Suite

    out = Path(directory) / f"{case.op}-{case.content_hash[:12]}"
    suite = Suite(cases=[case], seed=None, ops=[case.op], generators={case.op: case.generator or "explore"},
                  source="explore")
    return write_bundle(suite, out, force=True)


def repro_command(backend_spec: str | None, backend_options: dict | None, bundle: str | os.PathLike,
                  out: str | os.PathLike | None = None) -> str:
    """``onnx-conformance run --backend SPEC [--backend-option K=V ...] --bundle BUNDLE --out OUT --force``.

    Args:
        backend_spec: the backend spec; ``None`` (a backend object from a conftest hook)
            prints the placeholder ``SPEC``.
        backend_options: backend options.
        bundle: the bundle directory.
        out: the output directory (default: ``BUNDLE.results``, beside the bundle).
    """
    parts = ["onnx-conformance", "run", "--backend", backend_spec or "SPEC"]
    for k, v in (backend_options or {}).items():
        parts += ["--backend-option", f"{k}={v}"]
    out = out if out is not None else f"{bundle}.results"
    parts += ["--bundle", str(bundle), "--out", str(out), "--force"]
    return " ".join(shlex.quote(p) for p in parts)


def explore_op(
    op: str,
    run: Callable[[Case], CaseResult],
    *,
    max_examples: int = DEFAULT_MAX_EXAMPLES,
    derandomize: bool = False,
    save_dir: str | os.PathLike | None = None,
    backend_spec: str | None = None,
    backend_options: dict | None = None,
    counts: Counter | None = None,
    database=PROFILE_DATABASE,
) -> Counter:
    """Run ``max_examples`` fresh cases of ``op`` through ``run``; shrink and report a failure.

    Args:
        op: an operator with a registered strategy.
        run: runs one case on the backend under test and returns its result (expected
            failures already applied).
        max_examples: examples hypothesis draws (shrinking runs more).
        derandomize: draw the same examples on every run (hypothesis ``derandomize``;
            the example database is not used then).
        save_dir: where to save the minimal failing case as a bundle (``None``: not saved).
        backend_spec, backend_options: for the reproduction command.
        counts: a Counter to update with the outcome of every example run.
        database: the hypothesis example database that keeps failing examples between runs
            and replays them first (default :data:`PROFILE_DATABASE`: the current settings
            profile's, normally ``.hypothesis/examples`` in the working directory; ``None``:
            none).  Each operator has its own key in it, the same on every run, so a failure
            saved for one operator is replayed for that operator only.

    Returns:
        outcome -> number of examples run, when no example failed.

    Raises:
        ExploreFailure: an example failed; describes the minimal one.
        KeyError: no strategy for ``op``.
    """
    from hypothesis import HealthCheck, Phase, given, settings

    from . import registry

    generator = f"{registry.strategy_name(op)}@explore"
    strategy = registry.get_strategy(op).map(lambda c: Example(_stamp(c, generator)))
    counts = Counter() if counts is None else counts

    def body(example: Example) -> None:
        result = run(example.case)
        counts[result.outcome] += 1
        if result.outcome in FAILING:
            raise _ExampleFailed(example.case, result)

    kw = {}
    if derandomize:
        kw["database"] = None
    elif database is not PROFILE_DATABASE:
        kw["database"] = database
    test = settings(
        max_examples=max_examples,
        deadline=None,
        derandomize=derandomize,
        suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large, HealthCheck.filter_too_much,
                               HealthCheck.large_base_example],
        report_multiple_bugs=False,
        print_blob=False,
        phases=[Phase.explicit, Phase.reuse, Phase.generate, Phase.target, Phase.shrink],
        **kw,
    )(given(example=strategy)(body))
    # Hypothesis keys the example database by function_digest() of the inner test, ``body``:
    # its source, the same for every operator, plus this attribute.  Set on the inner test
    # (where function_digest reads it; not on the @given wrapper) it gives each operator its
    # own key, stable across runs.
    body._hypothesis_internal_add_digest = f"onnx-conformance-explore:{op}".encode()
    try:
        test()
    except _ExampleFailed as exc:  # the final replay of the minimal example
        bundle = command = None
        if save_dir is not None:
            bundle = save_failure(exc.case, save_dir).resolve()
            command = repro_command(backend_spec, backend_options, bundle)
        raise ExploreFailure(op, exc.case, exc.result, bundle, command, counts) from None
    return counts


def _stamp(case: Case, generator: str) -> Case:
    case.generator = generator
    case.seed = None
    return case
