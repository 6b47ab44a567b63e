"""A run at 40,000+ cases: the parent's peak memory, and how long ``report`` takes.

Generates the whole suite (``--ops all``) with --seeds seeds into one bundle (each seed's cases
have their own ids; the bundles are merged by hard links and one manifest), then, as whole
processes:

  * ``onnx-conformance run --backend onnxruntime --bundle B --jobs N --out R``, with the parent's
    own peak resident memory (``ru_maxrss`` of the CLI process, its workers not counted) and wall
    time;
  * ``onnx-conformance report R/results.json --out R/again.html``: wall time, and the page's size.

Usage: python bench/bench_scale.py [--seeds 2] [--ops all] [--jobs 2] [--keep DIR]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

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


def merge(bundles: list[Path], out: Path) -> int:
    """One bundle at ``out`` holding the cases of ``bundles`` (hard links), each id once."""
    import hashlib

    from conformance.bundle import _write_manifest

    lines, keys, ops, seen = [], [], [], set()
    for b in bundles:
        m = json.loads((b / "manifest.json").read_text(encoding="utf-8"))
        for e in m["cases"]:
            if e["id"] in seen:  # a case no seed changes (special values): the same id in every seed
                continue
            seen.add(e["id"])
            src, dst = b / e["dir"], out / e["dir"]
            shutil.copytree(src, dst, copy_function=os.link)
            lines.append(json.dumps(e, sort_keys=True, separators=(",", ":")))
            keys.append((e["id"], e["content_hash"]))
        ops = m["ops"]
        identity = {k: v for k, v in m.items() if k not in ("cases", "format")}
    h = hashlib.sha256()
    for cid, ch in sorted(keys):
        h.update(f"{cid}\0{ch}\n".encode())
    identity.update(content_hash=h.hexdigest(), n_cases=len(keys), ops=ops, seed=None)
    _write_manifest(out / "manifest.json", lines, identity)
    return len(keys)


def timed(argv: list[str]) -> tuple[float, float | None, str]:
    t0 = time.perf_counter()
    r = subprocess.run(argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    wall = time.perf_counter() - t0
    peak = None
    for line in r.stderr.splitlines():
        if line.startswith("PEAK_RSS_MIB "):
            peak = float(line.split()[1])
    if r.returncode not in (0, 1):
        raise SystemExit(f"{' '.join(argv)} failed ({r.returncode}):\n{r.stderr[-2000:]}")
    return wall, peak, r.stderr


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--seeds", type=int, default=2)
    ap.add_argument("--ops", default="all")
    ap.add_argument("--jobs", type=int, default=len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else 2)
    ap.add_argument("--keep", help="work in this directory and keep it")
    args = ap.parse_args()
    work = Path(args.keep) if args.keep else Path(tempfile.mkdtemp(prefix="bench-scale-"))
    work.mkdir(parents=True, exist_ok=True)
    cli = [sys.executable, "-c", _MEASURED]
    try:
        parts = []
        for seed in range(args.seeds):
            b = work / f"seed{seed}"
            if not (b / "manifest.json").exists():
                t, _, _ = timed(cli + ["generate", "--ops", args.ops, "--seed", str(seed), "--out", str(b)])
                print(f"generated seed {seed} in {t:.1f} s")
            parts.append(b)
        bundle = work / "bundle"
        if bundle.exists():
            shutil.rmtree(bundle)
        n = merge(parts, bundle)
        print(f"bundle of {n} cases ({args.seeds} seeds of --ops {args.ops})")
        out = work / "results"
        t, peak, _ = timed(cli + ["run", "--backend", "onnxruntime", "--bundle", str(bundle), "--jobs", str(args.jobs),
                                  "--out", str(out), "--force"])
        print(f"run --jobs {args.jobs}: {t:.1f} s, parent peak RSS {peak:.0f} MiB "
              f"({peak * 1024 / n:.1f} KiB a case); results.json {(out / 'results.json').stat().st_size / 2**20:.1f} MB")
        t, peak, _ = timed(cli + ["report", str(out / "results.json"), "--out", str(out / "again.html")])
        print(f"report: {t:.1f} s (whole process), peak RSS {peak:.0f} MiB; report.html "
              f"{(out / 'again.html').stat().st_size / 2**20:.1f} MB")
    finally:
        if not args.keep:
            shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
