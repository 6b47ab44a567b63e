"""One run of a suite on a backend, written to an output directory, resumable.

Files in the output directory::

    run.json        how the run was made (backend spec and options, suite source,
                    selection, variants, expected-failure file, jobs, limits) and the
                    suite's content hash; written first, so a run can be resumed
    results.jsonl   one raw CaseResult per line, appended and flushed per case
    results.json    the results document (conformance.results), written at the end,
                    expected failures applied
    report.html     the HTML report

``--resume OUTDIR`` reads ``run.json``, rebuilds the same suite (and checks its
content hash), keeps the results already in ``results.jsonl`` (a torn last line
from a kill is dropped), runs the remaining cases, and ends with the same
``results.json`` an uninterrupted run gives (durations aside).
"""

from __future__ import annotations

import json
import os
import shutil
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .bundle import CaseRefs, _loads
from .case import Case
from .compact import trim_heap
from .jsonsafe import dumps
from .levels import PATTERN_DOMAIN, LevelledRefs
from .runner import CaseResult
from .suite import Suite

RUN_FORMAT = "onnx-conformance-run/1"


class RunError(Exception):
    """A run cannot start or resume (bad spec, suite changed, missing files)."""


@dataclass
class RunSpec:
    """Everything that defines a run; stored as ``run.json``."""

    backend_spec: str = "onnxruntime"
    backend_options: dict[str, str] = field(default_factory=dict)
    suite: str = "generated"  # generated | bundle | onnx-node
    bundle: str | None = None
    ops: list[str] = field(default_factory=list)
    seed: int | list[int] = 0  # several seeds: a sorted list (conformance.suite.parse_seeds), one suite
    depth: str = "full"
    match: list[str] | None = None
    variants: list[str] = field(default_factory=list)
    xfail: str | None = None
    profile: str | None = None
    jobs: int = 1
    timeout: float = 120.0
    memory_limit_mb: float = 4096
    executor: str = "local"
    scheduler: str | None = None
    suite_content_hash: str | None = None
    #: graph-optimization levels layer-pattern cases are scored at (:mod:`conformance.levels`);
    #: ``None``: every level the backend declares (``Backend.levels``), none for a backend
    #: without levels; ``[]``: pattern cases run once at the backend's configured level
    levels: list[str] | None = None

    def to_json(self) -> dict:
        return {"format": RUN_FORMAT, **{k: getattr(self, k) for k in self.__dataclass_fields__}}

    @classmethod
    def from_json(cls, d: dict) -> RunSpec:
        if d.get("format") != RUN_FORMAT:
            raise RunError(f"run.json has format {d.get('format')!r}, expected {RUN_FORMAT!r}")
        return cls(**{k: d[k] for k in cls.__dataclass_fields__ if k in d})


def load_suite(spec: RunSpec, status: Callable[[str], None] = lambda s: None, *,
               scratch: Path | None = None) -> Suite:
    """Build the suite a :class:`RunSpec` names (generate, read a bundle, or onnx's node tests).

    A bundle's cases are :class:`conformance.bundle.CaseRef` references (the manifest only;
    each case is read and checked where it runs) unless the spec needs them whole (variants:
    a variant is made from the case's data); with ``scratch``, generated cases are written there
    as a bundle (:func:`conformance.bundle_write.write_generated_bundle`, one worker per core) and
    referenced the same way, so that the parent never holds the suite's data.

    Raises:
        RunError: an unreadable bundle, unknown operator, or bad variant.
    """
    from . import variants as variants_mod
    from .bundle import BundleError
    from .bundle_write import write_generated_bundle

    try:
        if spec.suite == "bundle":
            status(f"reading {spec.bundle}")
            suite = _indexed_suite(spec.bundle)
        elif spec.suite == "onnx-node":
            from .onnx_node import onnx_node_suite

            status("loading onnx's node test cases")
            suite = onnx_node_suite()
        elif scratch is not None:
            status(f"generating {', '.join(spec.ops) if len(spec.ops) <= 5 else f'{len(spec.ops)} operators'} "
                   f"(seed {spec.seed})")
            write_generated_bundle(spec.ops, spec.seed, scratch, force=True, jobs=default_jobs(), depth=spec.depth,
                                   after_manifest=keep_coverage)
            suite = _indexed_suite(scratch)
            suite.source = "generated"
        else:
            from .suite import generate_suite

            status(f"generating {', '.join(spec.ops)} (seed {spec.seed})")
            suite = generate_suite(spec.ops, spec.seed, spec.depth)
    except BundleError as exc:
        raise RunError(f"cannot read bundle: {exc}") from None
    except KeyError as exc:
        raise RunError(str(exc.args[0] if exc.args else exc)) from None
    if spec.match:
        cases = suite.cases  # by index: compact references answer ids without reading the manifest
        suite.cases = [cases[i] for i in range(len(cases)) if any(m in _case_id(cases, i) for m in spec.match)]
    if spec.variants:
        try:
            suite.cases = variants_mod.expand(materialize(suite.cases), spec.variants)
        except ValueError as exc:
            raise RunError(str(exc)) from None
    return suite


def _indexed_suite(path) -> Suite:
    """A bundle's suite whose cases are references (:func:`conformance.bundle.read_index`)."""
    from .bundle import read_index

    identity, refs = read_index(path)
    return Suite(cases=refs, seed=identity["seed"], ops=identity["ops"], generators=identity["generators"],
                 versions=identity["versions"], source=identity["source"], depth=identity.get("depth"),
                 families=dict(identity.get("families", {})), seeds=identity.get("seeds"))


def materialize(cases: list) -> list[Case]:
    """``cases`` with every reference (:class:`conformance.bundle.CaseRef`) read and checked.

    Raises:
        RunError: a referenced case cannot be read or fails its content check.
    """
    from .bundle import BundleError

    try:
        return [c if isinstance(c, Case) else c.load() for c in cases]
    except BundleError as exc:
        raise RunError(f"cannot read bundle: {exc}") from None


def read_jsonl(path: Path) -> list[CaseResult]:
    """Results already streamed to ``path``; a torn (unterminated or unparsable) last line is dropped."""
    return [CaseResult.from_json(d) for d in read_records(path)]


def index_records(path: Path) -> dict[str, int]:
    """Where each result streamed to ``path`` starts: ``{id: offset of its line}`` (a later line for
    the same id wins); a torn (unterminated or unparsable) last line is dropped and cut from the
    file, as :func:`read_records` does.  The records themselves stay on disk (:func:`_records_at`):
    at 40,000 cases they took hundreds of MB in the parent."""
    return {d["id"]: offset for offset, _, d in _good_records(path)}


def _lines_at(path: Path, offsets):
    """The lines of ``path`` (without their newline) starting at ``offsets``, in that order."""
    with path.open("rb") as f:
        for off in offsets:
            f.seek(off)
            yield f.readline().rstrip(b"\r\n")


def _records_at(path: Path, offsets) -> list[dict]:
    """The result records of ``path`` whose lines start at ``offsets``, in that order."""
    return [json.loads(line) for line in _lines_at(path, offsets)]


def _case_store(path: Path, offsets, cases=None):
    """The report's :class:`~conformance.reports.casedata.CaseStore` of the records of ``path``
    whose lines start at ``offsets``, read one at a time in that order (the whole records took
    24 MiB for 5,353 cases; the store holds about 0.2 KiB a case): the ids from ``cases`` (the
    suite's, in the same order) where given, the details of the cases the page shows read again
    from ``path``."""
    return _StoreFeed(path, offsets, cases).finish()


class _StoreFeed:
    """The report's case store (:func:`_case_store`) filled as results come in: :meth:`feed`
    (after each collection of results is written and flushed, while the workers run) adds the
    records of the cases from :attr:`next` on whose results are in, in suite order, and stops at
    the first case not done yet (a crashed operator version's cases run late: the rest waits for
    them); :meth:`finish` adds what is left.  The end of a run then reads back only the last few
    records, where it read all of them (0.16 - 0.28 s of a 7,317-case run's serial end; with one
    worker the parent's share runs on the other core).

    Attributes:
        store: the :class:`~conformance.reports.casedata.CaseStore`.
        next: the suite position of the first case not in the store.
    """

    def __init__(self, path: Path, offsets, cases=None):
        from .reports.casedata import CaseStore

        self.path, self.offsets, self.next = path, offsets, 0
        f = None

        def detail_at(i: int):  # the page asks for up to MAX_DETAIL_CASES: one file, opened once
            nonlocal f
            if f is None:
                f = path.open("rb")
            f.seek(offsets[i])
            return _loads(f.readline().rstrip(b"\r\n")).get("detail")

        id_at = None
        if cases is not None:  # the suite's own id(j) where it has one (_case_id's test once, not a call each)
            ids = getattr(cases, "id", None)
            id_at = ids if callable(ids) else (lambda i: _case_id(cases, i))
        self.store = CaseStore(id_at=id_at, detail_at=detail_at, scratch_dir=path.parent)

    def feed(self) -> None:
        """Add the records of the cases from :attr:`next` on, in order, up to the first without one
        (``offsets[j] < 0``); every line whose offset is set must have been flushed."""
        offsets, start, n = self.offsets, self.next, len(self.offsets)
        end = start
        while end < n and offsets[end] >= 0:
            end += 1
        if end > start:
            add = self.store.add
            for line in _lines_at(self.path, offsets[start:end]):
                add(_loads(line))
            self.next = end

    def finish(self):
        """The store, every case's record added (all of them must have one)."""
        self.feed()
        return self.store


def _good_records(path: Path):
    """Yield ``(offset, line, record)`` for each whole result line of ``path`` (a missing file: none);
    at the end, a torn (unterminated or unparsable) tail is cut from the file."""
    if not path.exists():
        return
    good_end = 0
    with path.open("rb") as f:
        for line in f:
            if not line.endswith(b"\n"):
                break
            try:
                d = json.loads(line)
                if not isinstance(d, dict) or "id" not in d or "outcome" not in d:
                    break
            except ValueError:
                break
            yield good_end, line, d
            good_end += len(line)
        f.seek(0, os.SEEK_END)
        size = f.tell()
    if good_end != size:
        with path.open("r+b") as f:
            f.truncate(good_end)


def read_records(path: Path, lines: dict[str, bytes] | None = None) -> list[dict]:
    """The result records (``CaseResult.to_json`` dicts) streamed to ``path``; a torn
    (unterminated or unparsable) last line is dropped, and cut from the file.  With ``lines``,
    each record's JSON text (the line without its newline) is put there by id."""
    records = []
    for _, line, d in _good_records(path):
        records.append(d)
        if lines is not None:
            lines[d["id"]] = line.rstrip(b"\r\n")
    return records


def execute(
    spec: RunSpec,
    out: Path,
    *,
    backend: Any = None,
    suite: Suite | None = None,
    resume: bool = False,
    on_start: Callable[[int, int], None] | None = None,
    on_result: Callable[[CaseResult], None] | None = None,
    status: Callable[[str], None] = lambda s: None,
    on_outcome: Callable[[str], None] | None = None,
) -> tuple[dict, list[Any]]:
    """Run (or resume) ``spec`` into ``out``; return the results document and stale xfail entries.

    Args:
        spec: the run's definition (written to ``out/run.json`` unless resuming).
        out: output directory (must exist).
        backend: a constructed backend (default: built from ``spec``).
        suite: the suite (default: :func:`load_suite`).
        resume: keep the results in ``out/results.jsonl`` and run only the rest.
        on_start: called with (number of cases, number already done).
        on_result: called per case run now (raw outcome, before expected failures).
        status: receives short progress messages.
        on_outcome: called with the outcome of each case run now (cheaper than ``on_result``
            for progress: no result is parsed in this process).

    Raises:
        RunError: bad backend, suite changed since the run began, unreadable xfail file,
            unknown or malformed profile (all before any case runs).
        KeyboardInterrupt: passed through; what was done is in results.jsonl.
    """
    from .backends import resolve_backend
    from .profile import ProfileError, load_profile
    from .xfail import ExpectedFailureError, load_expected_failures

    if backend is None:
        try:
            backend = resolve_backend(spec.backend_spec, spec.backend_options)
        except (ValueError, ImportError) as exc:
            raise RunError(f"backend {spec.backend_spec!r}: {exc}") from None
    profile = None
    if spec.profile:
        try:
            profile = load_profile(spec.profile)
        except ProfileError as exc:
            raise RunError(f"profile {spec.profile!r}: {exc}") from None
    entries = []
    if spec.xfail:
        try:
            entries = load_expected_failures(spec.xfail)
        except ExpectedFailureError as exc:
            raise RunError(str(exc)) from None
    scratch = None
    streaming = spec.executor == "local" and spec.jobs > 0
    if suite is None:
        if spec.suite == "generated" and streaming:
            scratch = out / ".cases"  # a scratch bundle, removed at the end
        suite = load_suite(spec, status, scratch=scratch)
    if not streaming:
        suite.cases = materialize(suite.cases)
    pattern_levels = _levels(spec, backend, suite)
    trim_heap()  # the manifest's entries, read and dropped
    try:
        # the end's case store is filled while the workers run unless expected failures or a profile
        # make the end hold the records (_finish)
        ran = _run(spec, out, suite, backend, resume, on_start, on_result, status, on_outcome,
                   store=not (entries or profile is not None))
    finally:
        if scratch is not None:
            shutil.rmtree(scratch, ignore_errors=True)
    trim_heap()  # the run's buffers and the coverage's transfer
    return _finish(spec, out, suite, backend, ran, entries, profile, pattern_levels, resume, status)


def _finish(spec: RunSpec, out: Path, suite: Suite, backend, ran: "_Ran", entries, profile, pattern_levels,
            resume: bool, status) -> tuple[dict, list[Any]]:
    """The end of a run (after :func:`_run`): the results document, results.json and report.html."""
    from .profile import judge
    from .xfail import apply_expected_failures

    cases, offsets = suite.cases, ran.offsets
    missing = next((j for j, off in enumerate(offsets) if off < 0), None)
    if missing is not None:
        n_missing = sum(1 for off in offsets if off < 0)
        raise RunError(f"{n_missing} case(s) have no result (first: {_case_id(cases, missing)}); run with --resume")
    jsonl = out / "results.jsonl"
    stale = []
    store = None
    if entries or profile is not None:
        # expected failures change records and a profile judges them: these runs hold them all
        results: Any = _records_at(jsonl, offsets)
        if entries:
            objs = [CaseResult.from_json(d) for d in results]
            stale = apply_expected_failures(objs, entries, backend.name)
            results = [r.to_json() for r in objs]
        outcome_at = [r["outcome"] for r in results].__getitem__
    else:
        # the records, read back one at a time in suite order into the report's compact store (most
        # of them while the workers ran: ran.feed); the document's cases are the store's small view
        # of them (what its head and the summary read)
        store = ran.feed.finish() if ran.feed is not None else _case_store(jsonl, offsets, cases)
        results, outcome_at = store.slim(), store.outcome
        trim_heap()  # the records, parsed one at a time
    run_info = {
        **{k: v for k, v in spec.to_json().items() if k != "format"},
        "bundle": str(Path(spec.bundle).resolve()) if spec.bundle else None,
        "argv": sys.argv[1:],
        "resumed": bool(resume and ran.n_done),
    }
    from .reports.html import write_html
    from .results import results_document, write_results

    doc = results_document(suite, backend.environment(), results, ran.seconds, run_info)
    doc["expected_failures"] = {"file": spec.xfail, "stale": [f"{e.source}: {e.id} ({e.reason})" for e in stale]}
    doc["coverage"] = _coverage(suite, outcome_at, ran, status)
    if profile is not None:
        doc["verdict"] = judge(results, _analyses_by_id(suite, ran), profile)
    if pattern_levels is not None:
        from .levels import is_pattern, pattern_summary

        pat = (offsets[j] for j in range(len(cases)) if _is_pattern_at(cases, j, is_pattern))
        doc["patterns"] = pattern_summary((json.loads(line) for line in _lines_at(jsonl, pat)),
                                          pattern_levels or [])
    # the cases as results.jsonl has them, streamed in suite order (serialising them again cost
    # 0.05 s a 2,300-case run), unless expected failures changed some
    trim_heap()  # the coverage's outcomes and the pattern records
    write_results(doc, out / "results.json", case_lines=None if entries else _lines_at(jsonl, offsets))
    write_html(doc, out / "report.html", store=store)
    return doc, stale  # the document's cases read the store (its scratch file has no name: it goes with it)


def _case_id(cases, j: int) -> str:
    """The id of case ``j`` of a suite's cases: a compact sequence's ``id(j)`` (:class:`CaseRefs`,
    :class:`LevelledRefs`, :class:`_Subset`: no manifest entry read), else the case's."""
    ids = getattr(cases, "id", None)
    return ids(j) if callable(ids) else cases[j].id


def _is_pattern_at(cases, j: int, is_pattern) -> bool:
    """Whether case ``j`` of a suite's cases is a layer-pattern case (compact references: from the
    domain they keep)."""
    kind = getattr(cases, "kind", None)
    return kind(j)[0] == PATTERN_DOMAIN if callable(kind) else is_pattern(cases[j])


@dataclass
class _Ran:
    """What :func:`_run` gives the end of a run.

    Attributes:
        seconds: the wall time of the cases run now.
        offsets: per case of the suite (in its order), where its record starts in results.jsonl
            (-1: none): the parent keeps no record, line or report row per case while the run
            goes on, 8 bytes (tests/test_scale_memory.py).
        n_done: cases done before (a resume).
        analyses: the coverage analyses of every case's model as ``(id, analysis)`` pairs, for
            cases given by reference whose manifest does not record them all (measured by the
            workers), else ``None``.
        coverage: the coverage of a bundle whose manifest records every analysis
            (:class:`conformance.coverage.RefsCoverage`), computed while the workers ran
            (:func:`_prepare_end`), or ``None``.
        feed: the report's case store, filled while the workers ran (:class:`_StoreFeed`), for a
            run whose end builds one (``store``), else ``None``.
    """

    seconds: float
    offsets: Any
    n_done: int
    analyses: list | None = None
    coverage: Any = None
    feed: _StoreFeed | None = None


def _run(spec: RunSpec, out: Path, suite: Suite, backend, resume: bool, on_start, on_result, status,
         on_outcome=None, store: bool = False) -> _Ran:
    """Run the cases of ``suite`` that ``out/results.jsonl`` lacks, appending their results to it;
    with ``store``, the report's case store is filled as the results come (``_Ran.feed``).

    Returns:
        see :class:`_Ran`.

    Raises:
        RunError: see :func:`execute`.
    """
    from array import array

    from .isolation import CaseLoadError, WorkerError, record_line, run_isolated
    from .runner import run_cases

    cases = suite.cases
    n = len(cases)
    if resume:
        if spec.suite_content_hash and spec.suite_content_hash != suite.content_hash:
            raise RunError(f"the suite changed since the run began (content hash {suite.content_hash[:12]} != "
                           f"{spec.suite_content_hash[:12]}); start a new run")
    else:
        spec.suite_content_hash = suite.content_hash
        (out / "run.json").write_text(dumps(spec.to_json(), indent=1) + "\n", encoding="utf-8")
        (out / "results.jsonl").write_bytes(b"")
    offsets = array("q", [-1]) * n
    n_done = 0
    if resume:
        index = index_records(out / "results.jsonl")  # by id, dropped once matched to the suite's positions
        for j in range(n):
            off = index.get(_case_id(cases, j))
            if off is not None:
                offsets[j] = off
                n_done += 1
        del index
    todo = array("I", (j for j in range(n) if offsets[j] < 0)) if n_done else None
    refs = cases.base if isinstance(cases, LevelledRefs) else cases if isinstance(cases, CaseRefs) else None
    whole_manifest = refs is not None and refs.recorded == len(refs)
    by_ref = not whole_manifest and any(not isinstance(c, Case) for c in cases)
    analyses: list | None = None
    if by_ref:
        from .isolation import _parent_analysis

        # the analyses the manifest records (some entries lack one), shared dicts; measured ones for
        # cases done before a resume are found here, the workers measure the rest
        from .bundle import _intern

        analyses = [(c.id, _intern(c.recorded_analysis, _ANALYSES)) for c in cases if c.recorded_analysis is not None]
        try:
            analyses += [_intern_analysis(_parent_analysis(cases[j])) for j in range(n)
                         if offsets[j] >= 0 and cases[j].recorded_analysis is None]
        except CaseLoadError as exc:
            raise RunError(f"cannot read bundle: {exc}") from None
    # where the manifest records every analysis, the coverage is computed from it while the workers
    # run (they send none; the outcomes are added at the end)
    precomputed: dict = {}
    if on_start:
        on_start(n, n_done)
    t0 = time.perf_counter()
    run = cases if todo is None else _Subset(cases, todo)
    with (out / "results.jsonl").open("ab") as stream:
        pos = [stream.seek(0, os.SEEK_END)]  # where the next line starts

        flush_each = True  # the isolated runner writes once per collection of results (on_collected)
        unwritten: list[bytes] = []  # its lines since then

        def keep_line(i: int, data: bytes, outcome: str) -> None:
            """Append the line ``data`` (:func:`conformance.isolation.record_line`) of case ``i`` of ``run``."""
            offsets[i if todo is None else todo[i]] = pos[0]
            if flush_each:
                stream.write(data)
                stream.flush()
            else:
                unwritten.append(data)
            pos[0] += len(data)
            if on_outcome:
                on_outcome(outcome)

        def write_lines() -> None:
            """Write the lines kept since the last call, in one write, and flush them."""
            if unwritten:
                stream.write(b"".join(unwritten))
                unwritten.clear()
            stream.flush()

        def collected() -> None:
            """A collection of results is in: written, then what it completes added to the store."""
            write_lines()
            if feed is not None:
                feed.feed()

        def keep(i: int, rec: dict) -> None:
            """Append the record of case ``i`` of ``run``."""
            rec, line = record_line(rec)  # strict JSON: a backend's NaN error is a string
            keep_line(i, line, rec["outcome"])

        feed = None
        if todo is not None and not len(todo):
            pass
        elif spec.executor == "dask" or spec.jobs == 0:
            at = {_case_id(run, i): i for i in range(len(run))}  # these executors give results without their index

            def record(r: CaseResult) -> None:
                keep(at[r.id], r.to_json())
                if on_result:
                    on_result(r)

            if spec.executor == "dask":
                from .dask_executor import ClusterError, run_dask

                try:
                    run_dask(run, spec, on_result=record)
                except ClusterError as exc:
                    raise RunError(f"{exc}. No case ran; nothing was charged to the backend") from None
            else:
                run_cases(run, backend, on_result=record)
        else:
            flush_each = False
            feed = _StoreFeed(out / "results.jsonl", offsets, cases) if store else None
            try:
                run_isolated(run, backend, spec=spec.backend_spec, options=spec.backend_options, jobs=spec.jobs,
                             timeout=spec.timeout, memory_limit_mb=spec.memory_limit_mb,
                             on_line=keep_line, on_collected=collected,
                             on_result=on_result, collect=False,
                             background=lambda: _prepare_end(refs if whole_manifest else None, precomputed),
                             on_analysis=(lambda a: analyses.append(_intern_analysis(a))) if analyses is not None else None)
            except WorkerError as exc:
                raise RunError(str(exc)) from None
            except CaseLoadError as exc:
                raise RunError(f"cannot read bundle: {exc}. The run stopped; nothing was charged to the backend, "
                               f"and the results so far are in {out / 'results.jsonl'}") from None
            finally:  # the results that came in the round that stopped (an error, an interrupt) are kept
                write_lines()
    coverage = precomputed.get("coverage")
    if coverage is None and whole_manifest:
        coverage = _refs_coverage(refs)
    return _Ran(time.perf_counter() - t0, offsets, n_done, analyses, coverage, feed)


class _Subset(Sequence):
    """The cases of ``cases`` at the indices ``todo`` (a resumed run's remaining cases), as a sequence."""

    def __init__(self, cases, todo):
        self._cases, self._todo = cases, todo

    def __len__(self) -> int:
        return len(self._todo)

    def __getitem__(self, i):
        if isinstance(i, slice):
            return [self[k] for k in range(*i.indices(len(self)))]
        return self._cases[self._todo[i]]

    def id(self, i: int) -> str:
        return _case_id(self._cases, self._todo[i])

    def refs(self, indices) -> list:
        """``[self[i] for i in indices]``, read together where the cases can
        (:meth:`conformance.bundle.CaseRefs.refs`; a worker's batch of a resumed run).

        Raises:
            AttributeError: the cases cannot (the worker then takes them one at a time).
        """
        return self._cases.refs([self._todo[i] for i in indices])


def _levels(spec: RunSpec, backend, suite: Suite) -> list[str] | None:
    """Expand the suite's layer-pattern cases into one case per level (:func:`conformance.levels.expand`)
    and return the levels (``[]``: pattern cases run once), or ``None`` when the suite has no
    pattern case (nothing changes).

    Raises:
        RunError: a level the backend does not declare.
    """
    from .levels import expand, is_pattern

    cases = suite.cases
    kinds = getattr(cases, "kinds", None)  # compact references: their (domain, group) table, no entry read
    if not (any(k[0] == PATTERN_DOMAIN for k in kinds) if kinds is not None else any(is_pattern(c) for c in cases)):
        return None
    declared = list(getattr(backend, "levels", ()) or ())
    levels = declared if spec.levels is None else list(spec.levels)
    unknown = [lv for lv in levels if lv not in declared]
    if unknown:
        raise RunError(f"backend {backend.name!r} has no optimization level(s) {', '.join(unknown)}; "
                       f"it declares: {', '.join(declared) or 'none'}")
    suite.cases = expand(suite.cases, levels)
    return levels


def _prepare_end(refs, out: dict) -> None:
    """Import and compile what the end of a run needs (results, coverage, the report's template)
    and compute the coverage of the bundle ``refs`` from the analyses its manifest records
    (:class:`conformance.coverage.RefsCoverage`, into ``out["coverage"]``), in the parent while
    the workers run: seconds a run's end no longer waits for.  An optimisation only: a failure
    here is left for the end of the run to meet and report."""
    try:
        from . import results  # noqa: F401 - imported for its cost
        from .reports.html import warm_up

        warm_up()
        if refs is not None:
            out["coverage"] = _refs_coverage(refs)
    except Exception:  # noqa: BLE001 - see docstring
        pass


#: A bundle of at least this many cases has its coverage computed in a process of its own
#: (:func:`_refs_coverage`); a smaller one in the parent, where starting a process would cost more
#: time than the memory it saves (a second or so).
COVERAGE_PROCESS_CASES = 20_000


def _refs_coverage(refs, *, process: bool | None = None):
    """:class:`conformance.coverage.RefsCoverage` of ``refs``, or the exception that stopped it (the
    end of the run reports it as :func:`_coverage` reports any).

    For a bundle of :data:`COVERAGE_PROCESS_CASES` cases or more (or with ``process``), it is
    computed in a short-lived process (a new interpreter) that reads the manifest itself and sends back
    the result (the operators' coverage as text, a cell per case): computed in the parent, it
    left 40 MiB of the parent's heap in use for the rest of the run (the whole table's schemas
    and 55,000 manifest entries read and dropped), where the result is 12 MiB.

    First, unless ``process`` says how to compute it, the coverage a generated bundle keeps
    (:func:`read_coverage`) is read: nothing to compute.
    """
    from .coverage import RefsCoverage
    from .opspec import op_spec

    if process is None:
        try:
            kept = read_coverage(refs)
        except Exception:  # noqa: BLE001 - computed below instead
            kept = None
        if kept is not None:
            return kept
        process = len(refs) >= COVERAGE_PROCESS_CASES
    try:
        if not process:
            try:
                return RefsCoverage(refs)
            finally:
                op_spec.cache_clear()  # the operators' schemas: not read again here
        import pickle
        import subprocess
        import tempfile

        # a fresh interpreter running this module (not multiprocessing's spawn, which imports the
        # caller's main script again: a script that runs a suite at import would run it twice)
        package_root = str(Path(__file__).resolve().parents[1])
        env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [package_root, os.environ.get("PYTHONPATH")]))}
        # the result is unpickled as it is read from the pipe (captured whole first, its 8 MB of
        # text were held twice beside the objects made from them)
        with tempfile.TemporaryFile() as err:
            child = subprocess.Popen([sys.executable, "-m", "conformance.execute", "--coverage-of", str(refs.root)],
                                     stdout=subprocess.PIPE, stderr=err, env=env)
            try:
                kind, payload = pickle.load(child.stdout)
            except Exception:  # noqa: BLE001 - no result: say how the process ended
                kind = None
            finally:
                child.stdout.close()
                code = child.wait()
            if kind is None:
                err.seek(0)
                tail = err.read().decode("utf-8", "replace").strip().splitlines()[-1:] or [""]
                raise RuntimeError(f"the coverage process ended ({code}) without a result: {tail[0]}")
        if kind != "ok":
            raise RuntimeError(payload)
        return payload.attach(refs)
    except Exception as exc:  # noqa: BLE001 - coverage is an extra view
        return exc


def keep_coverage(root) -> None:
    """Write the coverage of the bundle directory ``root`` (its manifest written) beside its
    manifest (:meth:`conformance.coverage.RefsCoverage.save`, as ``coverage.jsonl``), where every
    entry records an analysis: a run reads it (:func:`read_coverage`) instead of reading every
    entry to compute it.  Where it cannot be computed, none is written (the run computes it, and
    reports why it cannot).  ``generate`` passes it to the bundle writer
    (:func:`conformance.bundle_write.write_generated_bundle`'s ``after_manifest``)."""
    from .bundle import read_index
    from .coverage import RefsCoverage

    root = Path(root)
    _, refs = read_index(root, keep=True)  # its index kept too (bundle.INDEX_CACHE)
    if len(refs) and refs.recorded == len(refs):
        # a large bundle's in a process of its own, as a run computes it: the generating process's
        # memory stays what writing the cases takes
        cov = _refs_coverage(refs, process=len(refs) >= COVERAGE_PROCESS_CASES)
        if isinstance(cov, RefsCoverage):
            cov.save(root / RefsCoverage.CACHE)


def read_coverage(refs):
    """The coverage the bundle of ``refs`` keeps (:func:`keep_coverage`; a directory's file or an
    archive's member), or ``None`` where it keeps none that holds for these cases, this onnx and
    this code.

    Raises:
        conformance.bundle.BundleError: the bundle archive cannot be read.
    """
    from .bundle import open_member
    from .coverage import RefsCoverage

    f = open_member(refs.root, RefsCoverage.CACHE)
    if f is None:
        return None
    with f:
        return RefsCoverage.load(f, refs)


def _coverage_process(root: str) -> None:
    """The coverage process (``python -m conformance.execute --coverage-of BUNDLE``):
    :class:`conformance.coverage.RefsCoverage` of the bundle at ``root``, written to standard
    output pickled as ``("ok", coverage without its references)`` or ``("error", message)``."""
    import pickle

    from .bundle import read_index
    from .coverage import RefsCoverage

    try:
        result = ("ok", RefsCoverage(read_index(root)[1]).detach())
    except Exception as exc:  # noqa: BLE001 - reported to the parent
        result = ("error", f"{type(exc).__name__}: {exc}")
    sys.stdout.buffer.write(pickle.dumps(result, pickle.HIGHEST_PROTOCOL))
    sys.stdout.flush()



_ANALYSES: dict = {}


def _intern_analysis(a: dict) -> tuple[str, dict]:
    """``(case id, analysis)`` with equal analyses sharing one dict, as a bundle's index shares the
    recorded ones (:func:`conformance.bundle._intern`; 54,000 analyses took 100 MB)."""
    from .bundle import _intern

    return a["id"], _intern({k: v for k, v in a.items() if k != "id"}, _ANALYSES)


def _analyses_by_id(suite: Suite, ran: _Ran) -> dict[str, dict]:
    """Case id -> the analysis of its model (:func:`conformance.analysis.analyse_case`): the ones
    the run gathered or the manifest records, else measured from the cases in memory."""
    if ran.analyses is not None:
        return dict(ran.analyses)
    cases = suite.cases
    refs = cases.base if isinstance(cases, LevelledRefs) else cases if isinstance(cases, CaseRefs) else None
    if refs is not None:
        return {refs.id(i): {**refs.entry(i)["coverage"], "id": refs.id(i)} for i in range(len(refs))}
    from .analysis import analyse_case

    return {c.id: analyse_case(c) for c in cases}


def _coverage(suite: Suite, outcome_at: Callable[[int], str], ran: _Ran, status: Callable[[str], None]) -> dict | None:
    """The suite's coverage with this run's outcomes (``outcome_at(j)``: case ``j``'s): from the
    bundle's manifest where it records every analysis (``ran.coverage``, computed while the
    workers ran), else :func:`conformance.coverage.compute_coverage` from ``ran.analyses`` or the
    cases in memory; or ``None`` (and a status message) if it cannot be computed: coverage is an
    extra view, and a foreign suite must not lose its run over it."""
    from .coverage import compute_coverage

    cases = suite.cases
    try:
        if isinstance(ran.coverage, Exception):
            raise ran.coverage
        if ran.coverage is not None:
            base = cases.base_index if isinstance(cases, LevelledRefs) else (lambda j: j)
            return ran.coverage.with_outcomes((base(j), outcome_at(j)) for j in range(len(cases)))
        outcomes = {_case_id(cases, j): outcome_at(j) for j in range(len(cases))}
        if ran.analyses is not None:
            return compute_coverage((), outcomes, analyses=ran.analyses)
        return compute_coverage(cases, outcomes)
    except Exception as exc:  # noqa: BLE001 - see docstring
        status(f"coverage not computed: {type(exc).__name__}: {exc}")
        return None


def default_jobs() -> int:
    """Worker count by default: the number of cores this process may use."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:
        return os.cpu_count() or 1


if __name__ == "__main__" and sys.argv[1:2] == ["--coverage-of"]:
    _coverage_process(sys.argv[2])
