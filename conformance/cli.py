"""The ``onnx-conformance`` command line.

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

from . import __version__

BAD = ("fail", "error", "crash", "timeout", "xpass")

EPILOG = """\
examples:
  onnx-conformance generate --ops LayerNormalization,BatchNormalization --seed 0 --out bundle
  onnx-conformance run --backend onnxruntime --bundle bundle --out results
  onnx-conformance run --backend onnxruntime --ops LayerNormalization --out results
  onnx-conformance run --backend onnxruntime --backend-option graph_optimization_level=disable --bundle bundle --out r2
  onnx-conformance run --backend onnx-reference --bundle bundle --out ref
  onnx-conformance run --backend mypkg.backend:MyBackend --bundle bundle --out mine
  onnx-conformance report results/results.json --out report.html
"""


class UsageError(Exception):
    """Bad input from the user: printed without a traceback, exit status 2."""


def _ops(text: str | None) -> list[str]:
    from . import registry

    if not text:
        raise UsageError("--ops needs a comma-separated list of operators, e.g. LayerNormalization,BatchNormalization")
    known = registry.available_ops()
    ops = [o.strip() for o in text.split(",") if o.strip()]
    if ops == ["all"]:
        return known
    unknown = [o for o in ops if o not in known]
    if unknown:
        raise UsageError(f"unknown operator(s): {', '.join(unknown)}; available: {', '.join(known)}")
    return ops


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
    from .suite import generate_suite

    t0 = time.perf_counter()
    with console.status(f"generating {', '.join(ops)} (seed {seed})"):
        suite = generate_suite(ops, seed)
    console.print(f"generated {len(suite.cases)} cases in {time.perf_counter() - t0:.1f} s")
    return suite


def cmd_generate(args, console: Console) -> int:
    from .bundle import BundleError, prepare_out_dir, write_bundle

    ops = _ops(args.ops)
    try:
        prepare_out_dir(args.out, args.force, "manifest.json")
    except BundleError as exc:
        raise UsageError(str(exc)) from None
    suite = _generate_suite(ops, args.seed, console)
    with _progress(console) as prog:
        task = prog.add_task("writing bundle", total=len(suite.cases), status="")
        write_bundle(suite, args.out, force=args.force, progress=lambda c: prog.advance(task))
    n_err = sum(1 for c in suite.cases if c.expect_error is not None)
    console.print(
        f"wrote {len(suite.cases)} cases ({len(suite.cases) - n_err} value, {n_err} error) to {args.out}\n"
        f"suite content hash {suite.content_hash}"
    )
    return 0


def _load_suite(args, console: Console):
    from .bundle import BundleError, read_bundle

    if args.bundle and args.ops:
        raise UsageError("give either --bundle or --ops, not both")
    if args.bundle:
        try:
            with console.status(f"reading {args.bundle}"):
                suite = read_bundle(args.bundle)
        except BundleError as exc:
            raise UsageError(f"cannot read bundle: {exc}") from None
        console.print(f"read {len(suite.cases)} cases from {args.bundle}")
    elif args.ops:
        suite = _generate_suite(_ops(args.ops), args.seed, console)
    else:
        raise UsageError("give --bundle DIR or --ops OPS")
    if args.match:
        suite.cases = [c for c in suite.cases if any(m in c.id for m in args.match)]
        console.print(f"{len(suite.cases)} cases match {args.match}")
    return suite


def summary_table(cases: list[dict], title: str) -> Table:
    """Rich table: one row per op, one column per outcome present."""
    from .runner import OUTCOMES

    by_op: dict[str, Counter] = defaultdict(Counter)
    for c in cases:
        by_op[c["op"]][c["outcome"]] += 1
    present = [o for o in OUTCOMES if any(cnt.get(o) for cnt in by_op.values())]
    t = Table(title=title)
    t.add_column("operator")
    for o in present:
        t.add_column(o, justify="right")
    t.add_column("total", justify="right")
    total: Counter = Counter()
    for op in sorted(by_op):
        cnt = by_op[op]
        total.update(cnt)
        t.add_row(op, *[str(cnt.get(o, 0)) for o in present], str(sum(cnt.values())))
    t.add_row("[bold]all", *[f"[bold]{total.get(o, 0)}" for o in present], f"[bold]{sum(total.values())}")
    return t


def cmd_run(args, console: Console) -> int:
    from .backends import parse_options, resolve_backend
    from .bundle import BundleError, prepare_out_dir
    from .results import results_document, write_results
    from .isolation import WorkerError, run_isolated
    from .runner import run_cases
    from reports.html import write_html

    try:
        options = parse_options(args.backend_option)
        backend = resolve_backend(args.backend, options)
    except (ValueError, ImportError) as exc:
        raise UsageError(f"backend {args.backend!r}: {exc}") from None
    try:
        out = prepare_out_dir(args.out, args.force, "results.json")
    except BundleError as exc:
        raise UsageError(str(exc)) from None
    suite = _load_suite(args, console)
    out.mkdir(parents=True, exist_ok=True)
    counts: Counter = Counter()
    t0 = time.perf_counter()
    jobs = args.jobs if args.jobs is not None else (os.cpu_count() or 1)
    stream = (out / "results.jsonl").open("w", encoding="utf-8")
    with stream, _progress(console) as prog:
        task = prog.add_task(f"running on {backend.name}", total=len(suite.cases), status="")

        def on_result(r):
            stream.write(json.dumps(r.to_json()) + "\n")
            stream.flush()
            counts[r.outcome] += 1
            prog.update(task, advance=1, status=" ".join(f"{k} {v}" for k, v in sorted(counts.items())))

        if jobs == 0:
            results = run_cases(suite.cases, backend, on_result=on_result)
        else:
            try:
                results = run_isolated(suite.cases, backend, spec=args.backend, options=options, jobs=jobs,
                                       timeout=args.timeout, on_result=on_result)
            except WorkerError as exc:
                raise UsageError(str(exc)) from None
    duration = time.perf_counter() - t0
    run_info = {
        "backend_spec": args.backend,
        "backend_options": options,
        "bundle": str(Path(args.bundle).resolve()) if args.bundle else None,
        "ops": suite.ops,
        "seed": suite.seed,
        "match": args.match,
        "argv": sys.argv[1:],
    }
    doc = results_document(suite, backend.environment(), results, duration, run_info)
    rpath = write_results(doc, out / "results.json")
    hpath = write_html(doc, out / "report.html")
    console.print(summary_table(doc["cases"], f"{backend.name}: {len(results)} cases in {duration:.1f} s"))
    console.print(f"results: {rpath}\nreport:  {hpath}")
    return 1 if any(counts.get(o) for o in BAD) else 0


def cmd_report(args, console: Console) -> int:
    from .results import ResultsError, load_results
    from reports.html import write_html

    try:
        doc = load_results(args.results)
    except ResultsError as exc:
        raise UsageError(str(exc)) from None
    out = Path(args.out or Path(args.results).with_name("report.html"))
    write_html(doc, out)
    console.print(summary_table(doc["cases"], f"{doc.get('backend', {}).get('backend', '?')}: {len(doc['cases'])} cases"))
    console.print(f"report: {out}")
    return 0


def cmd_list(args, console: Console) -> int:
    from . import registry

    for op in registry.available_ops():
        info = registry.get(op)
        console.print(f"{op}\t{info.domain or 'ai.onnx'}\tgenerator {info.name}@{info.version}")
    return 0


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
                                   "(invalid models that must be rejected). Same seed and versions, same bytes.")
    g.add_argument("--ops", required=True, help="comma-separated operators, or 'all'")
    g.add_argument("--seed", type=int, default=0, help="generation seed (default 0)")
    g.add_argument("--out", required=True, help="bundle directory to create")
    g.add_argument("--force", action="store_true", help="replace an existing bundle at --out")
    g.set_defaults(fn=cmd_generate)

    r = sub.add_parser("run", help="run a suite on a backend; write results.json and report.html",
                       description="Run a bundle (--bundle) or freshly generated cases (--ops, --seed) on a backend "
                                   "and write OUT/results.json and OUT/report.html.",
                       epilog="backends: onnxruntime (options: providers, graph_optimization_level, "
                              "intra_op_num_threads), onnx-reference, or package.module:Attr naming an "
                              "onnx.backend.base.Backend subclass (option: device, default CPU).",
                       formatter_class=argparse.RawDescriptionHelpFormatter)
    r.add_argument("--backend", default="onnxruntime", help="backend name or package.module:Attr (default onnxruntime)")
    r.add_argument("--backend-option", action="append", metavar="KEY=VALUE", help="backend option (repeatable)")
    src = r.add_mutually_exclusive_group()
    src.add_argument("--bundle", help="bundle directory written by 'generate'")
    src.add_argument("--ops", help="generate cases for these operators (comma-separated, or 'all')")
    r.add_argument("--seed", type=int, default=0, help="seed for --ops (default 0)")
    r.add_argument("--match", action="append", metavar="TEXT", help="only cases whose id contains TEXT (repeatable)")
    r.add_argument("--jobs", "-j", type=int, default=None,
                   help="worker processes (default: the number of cores); each case runs in a worker, so a "
                        "backend that crashes or hangs costs only that case; 0 runs in this process (no isolation)")
    r.add_argument("--timeout", type=float, default=120.0, help="per-case deadline in seconds (default 120)")
    r.add_argument("--out", required=True, help="output directory for results.json(l) and report.html")
    r.add_argument("--force", action="store_true", help="replace the results of an earlier run in --out")
    r.set_defaults(fn=cmd_run)

    rep = sub.add_parser("report", help="render report.html from a results.json")
    rep.add_argument("results", help="results.json written by 'run'")
    rep.add_argument("--out", help="HTML file to write (default: report.html beside results.json)")
    rep.set_defaults(fn=cmd_report)

    ls = sub.add_parser("list", help="list the operators that have generators")
    ls.set_defaults(fn=cmd_list)
    return p


def main(argv: list[str] | None = None) -> int:
    """Entry point of the ``onnx-conformance`` console script."""
    args = build_parser().parse_args(argv)
    console = Console(stderr=False, highlight=False, soft_wrap=True)
    err = Console(stderr=True, highlight=False, soft_wrap=True)
    try:
        return args.fn(args, console)
    except UsageError as exc:
        err.print(f"[red]error:[/red] {escape(str(exc))}", markup=True)
        return 2
    except KeyboardInterrupt:
        err.print("interrupted")
        return 130


if __name__ == "__main__":
    sys.exit(main())
