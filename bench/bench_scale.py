"""A run at 100,000+ cases: the parent's peak memory against a small run's, how long generating
and ``report`` take.

Generates the whole suite (``--ops all``) at --seeds seeds into one bundle (``generate --seed
0-N``: every seed's cases in one suite, a case several seeds give once), then, as whole processes:

  * ``onnx-conformance generate --ops OPS --seed 0-(N-1) --jobs J --out B``: wall time, the parent's
    peak resident memory (``ru_maxrss`` of the CLI process; its workers not counted);
  * ``onnx-conformance run --backend onnxruntime --bundle B --jobs J --out R``: the parent's peak
    resident memory and wall time;
  * the same two for the LayerNormalization+BatchNormalization suite at seed 0 (--baseline-ops),
    and issue 30's criterion: the big run's parent peak <= 1.1 x the baseline's + 32 MiB;
  * ``onnx-conformance report R/results.json --out R/again.html``: wall time, and the page's size.

Times depend on the machine's load (printed: the load average before and after); the peak
memory does not.

Usage: python bench/bench_scale.py [--seeds 3] [--ops all] [--jobs 2] [--keep DIR]
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_runner import _fresh_coverage  # noqa: E402 - a script beside this one

#: Runs the CLI in this process and prints the process's own peak RSS (MiB) last, on stderr.
_MEASURED = """
import resource, sys
from conformance.cli import main
try:
    code = main(sys.argv[1:])
finally:
    print(f"PEAK_RSS_MIB {resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024:.1f}", file=sys.stderr)
sys.exit(code)
"""


def timed(argv: list[str]) -> tuple[float, float | None, str]:
    """Run ``argv`` (the measured CLI): (wall seconds, the CLI process's peak RSS in MiB, its stdout)."""
    t0 = time.perf_counter()
    r = subprocess.run(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                       env={**os.environ, "COLUMNS": "200"})
    wall = time.perf_counter() - t0
    peak = None
    for line in r.stderr.splitlines():
        if line.startswith("PEAK_RSS_MIB "):
            peak = float(line.split()[1])
    if r.returncode not in (0, 1):
        raise SystemExit(f"{' '.join(argv)} failed ({r.returncode}):\n{r.stderr[-2000:]}")
    return wall, peak, r.stdout


def _load() -> str:
    return "load average " + " ".join(f"{x:.2f}" for x in os.getloadavg())


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--seeds", type=int, default=3, help="seeds 0..N-1 in one bundle (default 3)")
    ap.add_argument("--ops", default="all")
    ap.add_argument("--baseline-ops", default="LayerNormalization,BatchNormalization")
    ap.add_argument("--jobs", type=int, default=len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else 2)
    ap.add_argument("--keep", help="work in this directory and keep it (a bundle already there is reused)")
    args = ap.parse_args()
    work = Path(args.keep) if args.keep else Path(tempfile.mkdtemp(prefix="bench-scale-"))
    work.mkdir(parents=True, exist_ok=True)
    cli = [sys.executable, "-c", _MEASURED]
    print(f"{os.cpu_count()} CPUs, {_load()}")
    try:
        peaks = {}
        for name, ops, seeds in (("baseline", args.baseline_ops, "0"), ("big", args.ops, f"0-{args.seeds - 1}")):
            bundle = work / f"{name}-bundle"
            if not (bundle / "manifest.json").exists():
                t, peak, out = timed(cli + ["generate", "--ops", ops, "--seed", seeds, "--jobs", str(args.jobs),
                                            "--out", str(bundle), "--force"])
                print(f"{name}: generate --seed {seeds} --jobs {args.jobs}: {t:.1f} s, parent peak RSS {peak:.0f} MiB; "
                      + next((ln for ln in out.splitlines() if ln.startswith("generated and wrote")), ""))
            else:  # a kept bundle: its kept coverage written again if the coverage code changed since
                _fresh_coverage(bundle)  # (else the run computes it: in the parent, for the baseline)
            with open(bundle / "manifest.json", "rb") as f:  # the identity is at the end
                f.seek(max(0, (bundle / "manifest.json").stat().st_size - 65536))
                tail = f.read().decode("utf-8", "replace")
            n = int(tail.rsplit('"n_cases": ', 1)[1].split(",", 1)[0])
            res = work / f"{name}-results"
            t, peak, _ = timed(cli + ["run", "--backend", "onnxruntime", "--bundle", str(bundle), "--jobs",
                                      str(args.jobs), "--out", str(res), "--force"])
            peaks[name] = peak
            print(f"{name}: run --jobs {args.jobs} on {n} cases: {t:.1f} s, parent peak RSS {peak:.0f} MiB; "
                  f"results.json {(res / 'results.json').stat().st_size / 2**20:.1f} MB; {_load()}")
        limit = 1.1 * peaks["baseline"] + 32
        print(f"criterion: big run's parent peak {peaks['big']:.0f} MiB <= 1.1 x {peaks['baseline']:.0f} + 32 = "
              f"{limit:.0f} MiB: {'holds' if peaks['big'] <= limit else 'DOES NOT hold'}")
        out = work / "big-results"
        t, peak, _ = timed(cli + ["report", str(out / "results.json"), "--out", str(out / "again.html")])
        print(f"report: {t:.1f} s (whole process), peak RSS {peak:.0f} MiB; report.html "
              f"{(out / 'again.html').stat().st_size / 2**20:.1f} MB; {_load()}")
    finally:
        if not args.keep:
            shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
