"""The ``onnx-conformance`` command line: every argparse and rich-console command.

This package is the top of the import graph: it imports the library (conformance.suite,
conformance.execute, conformance.reports, ...) and no library module imports it
(tests/test_structure.py).  :func:`main` is the console script's entry point; the
report commands (diff, package, verify, junit) are in :mod:`conformance.cli.report_commands`.

Exit status: 0 when the command completed and (for ``run``) no case ended in
``fail``, ``error``, ``crash``, ``timeout`` or ``xpass``; 1 when some did; 2 for
bad usage or bad input (unknown operator or backend, malformed bundle, an output
directory that may not be overwritten).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from collections import Counter, defaultdict
from pathlib import Path

from rich.console import Console
from rich.markup import escape
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn, TimeRemainingColumn
from rich.table import Table

from .. import __version__
from ..errors import UsageError, parse_ops

BAD = ("fail", "error", "crash", "timeout", "xpass")

EPILOG = """\
examples:
  onnx-conformance generate --ops LayerNormalization,BatchNormalization --seed 0 --out bundle
  onnx-conformance run --backend onnxruntime --bundle bundle --out results
  onnx-conformance run --backend onnxruntime --ops LayerNormalization --out results
  onnx-conformance run --backend onnxruntime --backend-option graph_optimization_level=disable --bundle bundle --out r2
  onnx-conformance run --backend onnx-reference --bundle bundle --out ref
  onnx-conformance run --backend mypkg.backend:MyBackend --bundle bundle --out mine
  onnx-conformance run --resume results                     # finish an interrupted run
  onnx-conformance run --suite onnx-node --out node         # onnx's own node tests
  onnx-conformance scoreboard --backends onnxruntime,onnx-reference --bundle bundle --out sb
  onnx-conformance report results/results.json --out report.html
  onnx-conformance diff old/results.json new/results.json --html diff.html
  onnx-conformance package results --bundle bundle --out submission.zip && onnx-conformance verify submission.zip
"""


def _progress(console: Console) -> Progress:
    return Progress(
        TextColumn("[bold]{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        TimeRemainingColumn(),
        TextColumn("{task.fields[status]}"),
        console=console,
        transient=False,
        disable=not console.is_terminal,
    )


def _generate_suite(ops: list[str], seed: int, console: Console):
    from ..suite import generate_suite

    t0 = time.perf_counter()
    with console.status(f"generating {', '.join(ops)} (seed {seed})"):
        suite = generate_suite(ops, seed)
    console.print(f"generated {len(suite.cases)} cases in {time.perf_counter() - t0:.1f} s")
    return suite


def _seeds(text: str):
    """``--seed``: one seed (an int, as always) or several (``0,1,2``, ``0-9``: a sorted list)."""
    from ..suite import parse_seeds

    try:
        seeds = parse_seeds(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None
    return seeds[0] if len(seeds) == 1 else seeds


def _seed_text(seed) -> str:
    return ",".join(map(str, seed)) if isinstance(seed, list) else str(seed)


def cmd_generate(args, console: Console) -> int:
    from ..bundle import BundleError
    from ..bundle_write import prepare_out_archive, prepare_out_dir, write_generated_bundle
    import functools

    from ..dask_executor import ClusterError, generate_dask
    from ..execute import keep_coverage

    ops = parse_ops(args.ops)
    if args.executor == "dask" and not args.scheduler:
        raise UsageError("--executor dask needs --scheduler ADDRESS")
    if args.scheduler and args.executor != "dask":
        raise UsageError("--scheduler is for --executor dask")
    try:
        if str(args.out).endswith(".zip"):
            prepare_out_archive(args.out, args.force)
        else:
            prepare_out_dir(args.out, args.force, "manifest.json")
    except BundleError as exc:
        raise UsageError(str(exc)) from None
    jobs = args.jobs or os.cpu_count() or 1
    n_seeds = len(args.seed) if isinstance(args.seed, list) else 1
    where = f"Dask cluster {args.scheduler}" if args.executor == "dask" else f"{jobs} worker(s)"
    t0 = time.perf_counter()
    with _progress(console) as prog:
        task = prog.add_task(f"generating (seed {_seed_text(args.seed)}, {where})", total=len(ops) * n_seeds,
                             status="")
        try:
            ident = write_generated_bundle(
                ops, args.seed, args.out, force=args.force, jobs=jobs, depth=args.depth,
                executor=functools.partial(generate_dask, scheduler=args.scheduler) if args.executor == "dask" else None,
                progress=lambda op, n: prog.update(task, advance=1, status=f"{op}: {n}"), after_manifest=keep_coverage)
        except ClusterError as exc:
            raise UsageError(f"{exc}. Nothing was generated.") from None
    n, n_err = ident["n_cases"], ident["n_error"]
    console.print(
        f"generated and wrote {n} cases ({n - n_err} value, {n_err} error; depth {args.depth}; "
        f"seed{'s' if n_seeds > 1 else ''} {_seed_text(args.seed)}) to {args.out} "
        f"in {time.perf_counter() - t0:.1f} s\n"
        f"suite content hash {ident['content_hash']}"
    )
    return 0


def summary_table(cases: list[dict], title: str) -> Table:
    """Rich table: one row per op, one column per outcome present."""
    from ..runner import OUTCOMES

    by_op: dict[str, Counter] = defaultdict(Counter)
    for c in cases:
        by_op[str(c.get("op", "?"))][str(c.get("outcome", "?"))] += 1
    present = [o for o in OUTCOMES if any(cnt.get(o) for cnt in by_op.values())]
    present += sorted({o for cnt in by_op.values() for o in cnt} - set(OUTCOMES))  # a foreign file's
    t = Table(title=escape(title))
    t.add_column("operator", no_wrap=True, min_width=max((len(op) for op in by_op), default=8))
    for o in present:
        t.add_column(escape(o), justify="right")
    t.add_column("total", justify="right")
    total: Counter = Counter()
    for op in sorted(by_op):
        cnt = by_op[op]
        total.update(cnt)
        t.add_row(escape(op), *[str(cnt.get(o, 0)) for o in present], str(sum(cnt.values())))
    t.add_row("[bold]all", *[f"[bold]{total.get(o, 0)}" for o in present], f"[bold]{sum(total.values())}")
    return t


def _spec_from_args(args, backend_spec: str | None = None):
    """The RunSpec (conformance.execute) the run/scoreboard arguments describe."""
    from ..backends import parse_options
    from ..execute import RunSpec, default_jobs

    sources = [x for x in (args.bundle, args.ops, getattr(args, "suite", None)) if x]
    if len(sources) != 1:
        raise UsageError("give exactly one of --bundle DIR, --ops OPS or --suite onnx-node")
    try:
        options = parse_options(getattr(args, "backend_option", None))
    except ValueError as exc:
        raise UsageError(str(exc)) from None
    if args.jobs is not None and args.jobs < 0:
        raise UsageError("--jobs must be >= 0")
    if getattr(args, "depth", "full") != "full" and not args.ops:
        raise UsageError("--depth selects among generated cases (--ops); a bundle keeps the depth it was generated "
                         "with (onnx-conformance generate --depth smoke)")
    variants = [v.strip() for v in (args.variants or "").split(",") if v.strip()]
    levels_arg = getattr(args, "levels", None)
    levels = None if levels_arg is None else [v.strip() for v in levels_arg.split(",") if v.strip()]
    return RunSpec(
        backend_spec=backend_spec or args.backend,
        backend_options=options,
        suite="bundle" if args.bundle else ("onnx-node" if getattr(args, "suite", None) else "generated"),
        bundle=args.bundle,
        ops=parse_ops(args.ops) if args.ops else [],
        seed=args.seed,
        depth=args.depth,
        match=args.match,
        variants=variants,
        xfail=args.xfail,
        profile=getattr(args, "profile", None),
        jobs=args.jobs if args.jobs is not None else default_jobs(),
        timeout=args.timeout,
        memory_limit_mb=args.memory_limit,
        executor=args.executor,
        scheduler=args.scheduler,
        levels=levels,
    )


#: how often the run's progress display is updated while results come, in seconds
_SHOW_S = 0.1


def _execute_with_progress(spec, out: Path, console: Console, *, resume: bool = False, suite=None, backend=None):
    from ..execute import RunError, execute

    counts: Counter = Counter()
    with _progress(console) as prog:
        task = prog.add_task(f"running on {spec.backend_spec}", total=None, status="")

        def on_start(total, done):
            prog.update(task, total=total, completed=done)
            if done:
                console.print(f"resuming: {done} of {total} cases already done")

        # the display is updated at most every _SHOW_S (a rich update and its status text per result
        # cost ~10 us a case), and whenever the run says what it does next and at the end: exact then
        unshown = [0, time.monotonic()]  # results counted but not yet shown, when the display was updated

        def show():
            prog.update(task, advance=unshown[0], status=" ".join(f"{k} {v}" for k, v in sorted(counts.items())))
            unshown[0], unshown[1] = 0, time.monotonic()

        def on_outcome(outcome, monotonic=time.monotonic):
            counts[outcome] += 1
            unshown[0] += 1
            if monotonic() - unshown[1] >= _SHOW_S:
                show()

        def status(m):
            if unshown[0]:
                show()
            prog.update(task, description=m)

        try:
            return execute(spec, out, backend=backend, suite=suite, resume=resume, on_start=on_start,
                           on_outcome=on_outcome, status=status)
        except RunError as exc:
            raise UsageError(str(exc)) from None
        finally:
            if unshown[0]:
                show()


def cmd_run(args, console: Console) -> int:
    from ..bundle import BundleError
    from ..bundle_write import prepare_out_dir
    from ..execute import RunError, RunSpec

    if args.resume:
        out = Path(args.resume)
        try:
            spec = RunSpec.from_json(json.loads((out / "run.json").read_text(encoding="utf-8")))
        except FileNotFoundError:
            raise UsageError(f"{out} has no run.json: nothing to resume") from None
        except (ValueError, RunError) as exc:
            raise UsageError(f"{out / 'run.json'}: {exc}") from None
        if args.jobs is not None:
            spec.jobs = args.jobs
    else:
        if not args.out:
            raise UsageError("give --out OUTDIR (or --resume OUTDIR)")
        spec = _spec_from_args(args)
        _check_profile(spec.profile)
        try:
            out = prepare_out_dir(args.out, args.force, "run.json")
        except BundleError as exc:
            raise UsageError(str(exc)) from None
        backend = _check_backend(spec)
        out.mkdir(parents=True, exist_ok=True)
    t0 = time.perf_counter()
    try:
        doc, stale = _execute_with_progress(spec, out, console, resume=bool(args.resume),
                                            backend=None if args.resume else backend)
    except KeyboardInterrupt:
        console.print(f"interrupted; the results so far are in {out / 'results.jsonl'}; "
                      f"finish with: onnx-conformance run --resume {out}")
        return 130
    for line in doc.get("expected_failures", {}).get("stale", []):
        console.print(f"[yellow]warning:[/yellow] expected failure matches no case: {escape(line)}")
    console.print(summary_table(doc["cases"], f"{doc['backend'].get('backend', spec.backend_spec)}: "
                                              f"{len(doc['cases'])} cases in {time.perf_counter() - t0:.1f} s"))
    console.print(f"results: {out / 'results.json'}\nreport:  {out / 'report.html'}")
    if doc.get("verdict"):  # with a profile, the verdict decides the exit status
        from ..profile import verdict_line

        v = doc["verdict"]
        console.print(("[green]" if v["conformant"] else "[red]") + escape(verdict_line(v)) + "[/]")
        for f in v["findings"][:10]:
            console.print(f"  {f['op']}-{f['since_version']} {f['types']}: {f['kind']} ({f['cases']} case(s))",
                          markup=False, highlight=False)
        if len(v["findings"]) > 10:
            console.print(f"  ... and {len(v['findings']) - 10} more claim(s): see the report")
        return 0 if v["conformant"] else 1
    return 1 if any(doc["summary"].get(o) for o in BAD) else 0


def _check_profile(spec: str | None) -> None:
    """Read the run's profile before anything is written or run (a bad one is a usage error)."""
    if spec:
        from ..profile import ProfileError, load_profile

        try:
            load_profile(spec)
        except ProfileError as exc:
            raise UsageError(f"--profile {spec}: {exc}") from None


def _check_backend(spec):
    """The run's backend, built before any case runs (a backend that cannot be built fails fast).

    Raises:
        UsageError: the backend cannot be built; the message says why.
    """
    from ..backends import resolve_backend

    try:
        return resolve_backend(spec.backend_spec, spec.backend_options)
    except (ValueError, ImportError) as exc:
        raise UsageError(f"backend {spec.backend_spec!r}: {exc}") from None


def cmd_scoreboard(args, console: Console) -> int:
    from ..bundle import BundleError
    from ..bundle_write import prepare_out_dir
    from ..execute import RunError, load_suite
    from ..reports.scoreboard import write_scoreboard

    backends = [b.strip() for b in (args.backends or "").split(",") if b.strip()]
    if not backends:
        raise UsageError("--backends needs a comma-separated list, e.g. onnxruntime,onnx-reference")
    try:
        out = prepare_out_dir(args.out, args.force, "scoreboard.html")
    except BundleError as exc:
        raise UsageError(str(exc)) from None
    base = _spec_from_args(args, backend_spec=backends[0])
    try:
        suite = load_suite(base)
    except RunError as exc:
        raise UsageError(str(exc)) from None
    out.mkdir(parents=True, exist_ok=True)
    docs, unavailable, failed = {}, {}, {}
    for name in backends:
        spec = _spec_from_args(args, backend_spec=name)
        spec.backend_options = {}
        try:
            _check_backend(spec)
        except UsageError as exc:
            unavailable[name] = str(exc)
            console.print(f"[yellow]skipping[/yellow] {escape(name)}: {escape(str(exc))}")
            continue
        sub = out / _safe_name(name)
        sub.mkdir(exist_ok=True)
        try:
            _execute_with_progress(spec, sub, console, suite=suite)
            doc = _written_results(sub)  # the whole records: the run's own document holds a summary of each
        except Exception as exc:  # noqa: BLE001 - one backend's run or report must not end the others'
            why = f"{type(exc).__name__}: {exc}" if not isinstance(exc, UsageError) else str(exc)
            doc = _written_results(sub)
            failed[name] = why
            unavailable[name] = (f"its run failed ({why})" if doc is None else
                                 f"its results are shown, but writing its report failed ({why})")
            console.print(f"[red]failed[/red] {escape(name)}: {escape(why)}; going on with the next backend")
            if doc is None:
                continue
        docs[name] = doc
        console.print(summary_table(doc["cases"], f"{name}: {len(doc['cases'])} cases"))
    path = write_scoreboard(docs, out / "scoreboard.html", unavailable=unavailable)
    console.print(f"scoreboard: {path}")
    if failed:
        console.print(f"[red]{len(failed)} backend(s) failed[/red]: "
                      + "; ".join(f"{escape(n)} ({escape(w)})" for n, w in failed.items()))
        return 1
    return 0


def _written_results(outdir: Path) -> dict | None:
    """The results.json written in ``outdir`` (by a run, or still by one whose report failed), else None."""
    from ..results import ResultsError, load_results

    try:
        return load_results(outdir / "results.json")
    except ResultsError:
        return None


def _safe_name(name: str) -> str:
    import re

    return re.sub(r"[^A-Za-z0-9_.-]+", "_", name)


def cmd_report(args, console: Console) -> int:
    from ..reports.casedata import read_results_store
    from ..reports.html import write_html
    from ..results import ResultsError

    out = Path(args.out or Path(args.results).with_name("report.html"))
    try:
        # the cases read one at a time into the page's compact store, whose columns wait in a
        # scratch file beside the page (a large file by two processes: read_results_store)
        doc, store = read_results_store(args.results, scratch_dir=out.parent if out.parent.is_dir() else None)
    except ResultsError as exc:
        raise UsageError(str(exc)) from None
    doc["cases"] = store.slim()
    write_html(doc, out, store=store)
    console.print(summary_table(doc["cases"], f"{doc.get('backend', {}).get('backend', '?')}: {len(doc['cases'])} cases"))
    console.print(f"report: {out}")
    return 0



def cmd_list(args, console: Console) -> int:
    from .. import registry

    if args.profiles:
        from ..profile import shipped_profiles

        for name, title in shipped_profiles().items():
            console.print(f"{name}\t{title}", markup=False, highlight=False)
        return 0

    for op in registry.available_ops():
        info = registry.get(op)
        console.print(f"{op}\t{info.domain or 'ai.onnx'}\tgenerator {info.name}@{info.version}")
    return 0


def _add_depth_arg(p: argparse.ArgumentParser) -> None:
    p.add_argument("--depth", choices=["full", "smoke"], default="full",
                   help="full: every case (nightly and compliance runs; default); smoke: every version and type "
                        "combination of every operator once and one invalid model per version, the same cases "
                        "(same ids) as in the full suite, for pull-request CI")


def _add_suite_args(r: argparse.ArgumentParser) -> None:
    from ..isolation import DEFAULT_MEMORY_LIMIT_MB, DEFAULT_TIMEOUT

    src = r.add_argument_group("suite (one of)")
    src.add_argument("--bundle", help="bundle written by 'generate' (a directory or a .zip archive)")
    src.add_argument("--ops", help="generate cases for these operators (comma-separated, or 'all')")
    src.add_argument("--suite", choices=["onnx-node"], help="onnx-node: onnx's own node test cases, with their tolerances")
    r.add_argument("--seed", type=_seeds, default=0,
                   help="seed for --ops (default 0); several (0,1,2 or 0-9) run one suite holding every seed's "
                        "cases, each id once")
    _add_depth_arg(r)
    r.add_argument("--match", action="append", metavar="TEXT", help="only cases whose id contains TEXT (repeatable)")
    r.add_argument("--variants", metavar="KINDS",
                   help="also run each case with its parameters as 'inputs' and/or 'initializers' (comma-separated)")
    r.add_argument("--xfail", metavar="FILE", help="expected-failure file (TOML, see docs): failures become xfail")
    r.add_argument("--levels", metavar="LEVELS",
                   help="graph-optimization levels to score layer-pattern cases at, comma-separated (onnxruntime: "
                        "disable,basic,extended,all); each pattern case runs once per level (id suffix @LEVEL) and "
                        "is classified pass / optimizer failure (right at the first level, wrong at another) / "
                        "kernel failure (wrong at every level). Default: every level the backend declares; '' runs "
                        "pattern cases once at the backend's configured level. Single-node cases run once")
    ex = r.add_argument_group("execution")
    ex.add_argument("--jobs", "-j", type=int, default=None,
                    help="worker processes (default: the number of cores); each case runs in a worker, so a "
                         "backend that crashes or hangs costs only that case; 0 runs in this process (no isolation)")
    ex.add_argument("--timeout", type=float, default=DEFAULT_TIMEOUT,
                    help=f"per-case deadline in seconds (default {DEFAULT_TIMEOUT:g})")
    ex.add_argument("--memory-limit", type=float, default=DEFAULT_MEMORY_LIMIT_MB, metavar="MIB",
                    help=f"kill a worker whose resident memory exceeds this (default {DEFAULT_MEMORY_LIMIT_MB}; 0: none)")
    ex.add_argument("--executor", choices=["local", "dask"], default="local",
                    help="local worker processes (default) or a Dask cluster (--scheduler)")
    ex.add_argument("--scheduler", metavar="ADDRESS", help="Dask scheduler address, e.g. tcp://10.0.0.5:8786")


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="onnx-conformance",
        description="Generate conformance cases for ONNX operators and score a runtime against them.",
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("--version", action="version", version=f"%(prog)s {__version__}")
    sub = p.add_subparsers(dest="command", metavar="COMMAND", required=True)

    g = sub.add_parser("generate", help="write a bundle of cases (ONNX backend-test layout)",
                       description="Generate cases for the given operators and write them as a bundle: "
                                   "DIR/manifest.json, DIR/cases/test_*/ (value cases), DIR/errors/test_*/ "
                                   "(invalid models that must be rejected). An --out ending in .zip writes the same "
                                   "files as one zip archive, which run, coverage and package read as they read the "
                                   "directory (unzip it for runners that read the ONNX layout). Same seed and "
                                   "versions, same bytes.")
    g.add_argument("--ops", required=True, help="comma-separated operators, or 'all'")
    g.add_argument("--seed", type=_seeds, default=0,
                   help="generation seed (default 0), or several (0,1,2 or a range 0-9): one bundle holding every "
                        "seed's cases, a case several seeds give (same id, same content) once")
    g.add_argument("--out", required=True, help="bundle directory to create, or NAME.zip for one archive")
    g.add_argument("--force", action="store_true", help="replace an existing bundle at --out")
    g.add_argument("--jobs", type=int, default=0,
                   help="worker processes, each generating and writing whole operators (default: one per CPU); "
                        "the bundle's bytes do not depend on it")
    g.add_argument("--executor", choices=["local", "dask"], default="local",
                   help="local worker processes (default) or a Dask cluster (--scheduler): each (operator, seed) is "
                        "a task; the bundle is byte-identical to a local one")
    g.add_argument("--scheduler", metavar="ADDRESS", help="Dask scheduler address, e.g. tcp://10.0.0.5:8786")
    _add_depth_arg(g)
    g.set_defaults(fn=cmd_generate)

    r = sub.add_parser("run", help="run a suite on a backend; write results.json and report.html",
                       description="Run a bundle (--bundle), freshly generated cases (--ops, --seed) or onnx's "
                                   "node tests (--suite onnx-node) on a backend and write OUT/results.json and "
                                   "OUT/report.html. Results are streamed to OUT/results.jsonl; an interrupted run "
                                   "is finished with --resume OUT.",
                       epilog="backends: onnxruntime (options: providers, graph_optimization_level, "
                              "intra_op_num_threads), onnx-reference, openvino, tract, tinygrad, command "
                              "(option: template), or package.module:Attr naming an onnx.backend.base.Backend "
                              "subclass (option: device, default CPU). See docs/backends.md.",
                       formatter_class=argparse.RawDescriptionHelpFormatter)
    r.add_argument("--backend", default="onnxruntime", help="backend name or package.module:Attr (default onnxruntime)")
    r.add_argument("--backend-option", action="append", metavar="KEY=VALUE", help="backend option (repeatable)")
    _add_suite_args(r)
    r.add_argument("--profile", metavar="NAME|FILE",
                   help="judge the run against a claim: a shipped profile (see 'onnx-conformance list --profiles'), a "
                        "profile TOML file, or 'onnxruntime[:PROVIDER]' (the kernels onnxruntime registers). Cases "
                        "outside the claim are not claimed; inside it every case must pass (unsupported counts "
                        "against the runtime). The report leads with the verdict; the exit status is 0 when "
                        "conformant, else 1. See docs/profiles.md")
    r.add_argument("--out", help="output directory for run.json, results.jsonl, results.json and report.html")
    r.add_argument("--force", action="store_true", help="replace the results of an earlier run in --out")
    r.add_argument("--resume", metavar="OUTDIR", help="finish an interrupted run in OUTDIR (same suite and backend)")
    r.set_defaults(fn=cmd_run)

    sb = sub.add_parser("scoreboard", help="run one suite on several backends; one page side by side",
                        description="Run the same suite on each backend (OUT/<backend>/results.json) and render "
                                    "OUT/scoreboard.html: pass rates per op and backend, and the cases where "
                                    "backends disagree. Backends that are not installed are skipped with a note. "
                                    "A backend whose run or report fails is named with the reason and the "
                                    "next backend runs; the exit status is then 1 (else 0).")
    sb.add_argument("--backends", required=True, help="comma-separated backend specs, e.g. onnxruntime,onnx-reference")
    _add_suite_args(sb)
    sb.add_argument("--out", required=True, help="output directory")
    sb.add_argument("--force", action="store_true", help="replace an earlier scoreboard in --out")
    sb.set_defaults(fn=cmd_scoreboard)

    rep = sub.add_parser("report", help="render report.html from a results.json")
    rep.add_argument("results", help="results.json written by 'run'")
    rep.add_argument("--out", help="HTML file to write (default: report.html beside results.json)")
    rep.set_defaults(fn=cmd_report)

    from ..coverage import add_coverage_command
    from .report_commands import add_commands

    add_commands(sub)  # diff, package, verify, junit

    add_coverage_command(sub)

    ls = sub.add_parser("list", help="list the operators that have generators (or the shipped profiles)")
    ls.add_argument("--profiles", action="store_true", help="list the profiles this project ships (for run --profile)")
    ls.set_defaults(fn=cmd_list)
    return p


#: Width of tables written to a pipe or a CI log (no terminal to ask): wide enough that no
#: operator name or missing-type list is folded into fragments.
PIPE_WIDTH = 200


def _pipe_width(stream) -> int | None:
    """``None`` (rich asks the terminal) on a terminal or when ``COLUMNS`` is set, else
    :data:`PIPE_WIDTH`."""
    isatty = getattr(stream, "isatty", None)
    if (isatty is not None and isatty()) or os.environ.get("COLUMNS"):
        return None
    return PIPE_WIDTH


def console_main() -> int:
    """The ``onnx-conformance`` console script and ``python -m conformance.cli``: :func:`main`, then
    the cyclic garbage collector frozen, because the process exits next: the collection the
    interpreter makes on the way out walks every object of the run and frees nothing the exit
    would not (~40 ms of a 2,300-case run's 2.5 s, measured).  OpenBLAS is given one thread
    unless ``OPENBLAS_NUM_THREADS`` is set, and the objects the imports made are frozen too.
    In-process callers use :func:`main`."""
    import gc

    # OpenBLAS starts a thread per core when numpy is imported, and they spin for a while: ~0.05 s
    # of CPU a process on 2 cores (measured), for nothing here: a run's parent does no linear
    # algebra, its workers run one case at a time with the backend's own pools pinned to one
    # thread, and one thread makes an oracle's float64 reductions independent of the core count.
    # Before numpy's import (the parser imports it); a value the user set stands.
    if "numpy" not in sys.modules:
        os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
    # what the parser imports (numpy, onnx, the runner) lives as long as the process: frozen, the
    # collector's full passes no longer walk it (~15 ms a pass, measured), nor write to its pages
    # that forked workers share
    from .. import isolation  # noqa: F401

    gc.freeze()
    code = main()
    gc.freeze()
    return code


def main(argv: list[str] | None = None) -> int:
    """The command line: parse ``argv`` (default ``sys.argv[1:]``), run the command; the exit status."""
    args = build_parser().parse_args(argv)
    console = Console(stderr=False, highlight=False, soft_wrap=True, width=_pipe_width(sys.stdout))
    err = Console(stderr=True, highlight=False, soft_wrap=True, width=_pipe_width(sys.stderr))
    from ..compat import problems

    found = problems()  # a release below the supported range: say which, before any traceback deep inside
    if found:
        for problem in found:
            err.print(f"[red]error:[/red] {escape(problem)}", markup=True)
        return 2
    try:
        return args.fn(args, console)
    except UsageError as exc:
        err.print(f"[red]error:[/red] {escape(str(exc))}", markup=True)
        return 2
    except KeyboardInterrupt:
        err.print("interrupted")
        return 130

