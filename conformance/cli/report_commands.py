"""The report commands of the ``onnx-conformance`` CLI: ``diff``, ``package``, ``verify``, ``junit``.

:func:`add_commands` adds them to the CLI's argparse subparsers; each sets
``fn(args, console) -> int`` (exit status: 0 fine, 1 regressions / a package that does
not verify, 2 bad input via :class:`conformance.errors.UsageError`).
"""

from __future__ import annotations

import argparse
from pathlib import Path

from rich.console import Console
from rich.markup import escape

from ..errors import UsageError


def _load(path: str) -> dict:
    from ..results import ResultsError, load_results

    p = Path(path)
    if p.is_dir():
        p = p / "results.json"
    try:
        return load_results(p)
    except ResultsError as exc:
        raise UsageError(str(exc)) from None


def cmd_diff(args, console: Console) -> int:
    """``diff OLD NEW [--html OUT]``: print regressions, fixes and other changes; exit 1 on regressions."""
    from ..reports.diff import diff_results, print_diff, write_diff_html

    old, new = _load(args.old), _load(args.new)
    d = diff_results(old, new)
    print_diff(d, console, limit=args.limit)
    if args.html:
        try:
            path = write_diff_html(d, args.html)
        except OSError as exc:
            raise UsageError(f"cannot write {args.html}: {exc.strerror or exc}") from None
        console.print(f"html: {escape(str(path))}")
    return 1 if d["regressions"] else 0


def _print_verification(v, console: Console) -> None:
    for k, val in v.facts.items():
        console.print(f"  {k}: {escape(str(val))}")
    if v.ok:
        console.print("[green]package verifies[/green]: every declared case present exactly once, allowed outcomes "
                      "only, suite hash matches, nothing edited after packaging")
    else:
        console.print(f"[red]package does not verify[/red] ({len(v.problems)} problem(s)):")
        for prob in v.problems:
            console.print(f"  [red]-[/red] {escape(prob)}")


def cmd_package(args, console: Console) -> int:
    """``package OUTDIR --out report.zip [--bundle DIR]``: build a submission package, then verify it."""
    from ..bundle import is_bundle
    from ..package import PackageError, build_package, verify_package

    out = Path(args.out)
    if out.exists() and not args.force:
        raise UsageError(f"{out} exists; use --force to replace it")
    if out.exists() and out.is_dir():
        raise UsageError(f"{out} is a directory")
    if args.bundle and not is_bundle(args.bundle):
        raise UsageError(f"{args.bundle} is not a bundle: {Path(args.bundle) / 'manifest.json'} not found")
    try:
        with console.status(f"packaging {args.outdir}"):
            digest = build_package(args.outdir, out, args.bundle)
    except PackageError as exc:
        raise UsageError(str(exc)) from None
    except OSError as exc:
        raise UsageError(f"cannot write {out}: {exc.strerror or exc}") from None
    console.print(f"package: {escape(str(out))}\ndigest:  sha256:{digest}  (publish it beside the package; "
                  f"'onnx-conformance verify {escape(str(out))} --digest sha256:{digest}')")
    v = verify_package(out)
    _print_verification(v, console)
    return 0 if v.ok else 1


def cmd_verify(args, console: Console) -> int:
    """``verify report.zip [--digest sha256:HEX]``: check a package; exit 1 when it does not verify."""
    from ..package import verify_package

    if not Path(args.package).is_file():
        raise UsageError(f"{args.package}: no such file")
    v = verify_package(args.package, args.digest)
    console.print(f"verifying {escape(args.package)}")
    _print_verification(v, console)
    return 0 if v.ok else 1


def cmd_junit(args, console: Console) -> int:
    """``junit RESULTS.json --out junit.xml``: JUnit XML export."""
    from ..reports.common import summarize
    from ..reports.junit import write_junit

    doc = _load(args.results)
    try:
        path = write_junit(doc, args.out)
    except OSError as exc:
        raise UsageError(f"cannot write {args.out}: {exc.strerror or exc}") from None
    s = summarize(doc["cases"])
    console.print(f"junit: {escape(str(path))} ({len(doc['cases'])} testcases; "
                  + ", ".join(f"{o} {n}" for o, n in s.items() if n) + ")")
    return 0


def add_commands(subparsers) -> None:
    """Add ``diff``, ``package``, ``verify`` and ``junit`` to the CLI's subparsers (``parser.add_subparsers()``)."""
    d = subparsers.add_parser(
        "diff", help="compare two runs: regressions, fixes, other changes, new and removed cases",
        description="Compare two results files case by case (by id). Prints regressions (pass -> not pass), fixes, "
                    "other outcome changes, new and removed cases, and accuracy drift; --html writes the same as a "
                    "page. Exit status 1 when there are regressions.",
        epilog="example: onnx-conformance diff ort-1.17/results.json ort-1.18/results.json --html diff.html",
        formatter_class=argparse.RawDescriptionHelpFormatter)
    d.add_argument("old", help="results.json of the earlier run (or its directory)")
    d.add_argument("new", help="results.json of the later run (or its directory)")
    d.add_argument("--html", metavar="OUT.html", help="also write the comparison as an HTML page")
    d.add_argument("--limit", type=int, default=50, help="rows printed per list (default 50; the HTML has all)")
    d.set_defaults(fn=cmd_diff)

    p = subparsers.add_parser(
        "package", help="build a submission zip: results, report, suite manifest, environment, hash list",
        description="Package a run for a customer: results.json, report.html, the bundle's manifest.json, "
                    "environment.json and package.json in one deterministic zip, with SHA256SUMS (sha256 of every "
                    "member) and the package digest (sha256 of SHA256SUMS) in the zip comment. The package is "
                    "verified after writing; exit status 1 when it does not verify (e.g. a run with --match does "
                    "not cover the suite).",
        epilog="example: onnx-conformance package results --out report.zip --bundle bundle",
        formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("outdir", help="output directory of 'onnx-conformance run' (holds results.json)")
    p.add_argument("--out", required=True, help="zip file to write")
    p.add_argument("--bundle", help="bundle of the suite, a directory or a .zip archive (default: the bundle the "
                                    "run recorded)")
    p.add_argument("--force", action="store_true", help="replace --out if it exists")
    p.set_defaults(fn=cmd_package)

    v = subparsers.add_parser(
        "verify", help="check a submission zip: complete, allowed outcomes, same suite, unedited",
        description="Verify a package written by 'package': every case the manifest declares appears exactly once "
                    "in the results and no other case does, outcomes are from the allowed set, the results' suite "
                    "content hash equals the manifest's, the summary matches the records, and every member matches "
                    "SHA256SUMS and the digest. Exit status 1 when it does not verify.",
        epilog="example: onnx-conformance verify report.zip --digest sha256:3f9a...",
        formatter_class=argparse.RawDescriptionHelpFormatter)
    v.add_argument("package", help="the zip to verify")
    v.add_argument("--digest", help="the package digest published with it (sha256:HEX)")
    v.set_defaults(fn=cmd_verify)

    j = subparsers.add_parser(
        "junit", help="export results as JUnit XML",
        description="Write one JUnit testcase per case (classname = operator): fail/xpass as failures, "
                    "error/crash/timeout as errors, unsupported/xfail/skip as skipped, with messages and the "
                    "command that reproduces each case.",
        epilog="example: onnx-conformance junit results/results.json --out junit.xml",
        formatter_class=argparse.RawDescriptionHelpFormatter)
    j.add_argument("results", help="results.json written by 'run' (or its directory)")
    j.add_argument("--out", required=True, help="XML file to write")
    j.set_defaults(fn=cmd_junit)

