"""Runner overhead: a bare onnxruntime loop vs our runner vs onnx's official harness, same bundle.

The bundle: the operators' cases (--ops, seed --seed) without those that crash onnxruntime
(found by a first isolated run; neither in-process loop can survive them), written once to a
temporary directory, or --bundle DIR as given.  Then, each figure the best of --repeat:

whole processes (what a CI job pays: interpreter start, imports, reading the bundle, the report):
  1. bare loop: ``python bench/bench_runner.py --bare-loop DIR``: for every manifest entry, read
     model.onnx and the input .pb files, ``onnxruntime.InferenceSession`` with 1-thread pools (as
     our backend makes them) and ``run``; nothing is compared, nothing written;
  2. ``onnx-conformance run --backend onnxruntime --bundle DIR --jobs 1 --out TMP`` (results.json,
     report.html, coverage included);
  3. the same with ``--jobs`` = the number of cores;
  4. onnx's official harness: ``python bench/bench_runner.py --official DIR``: ``onnx.load`` +
     ``onnxruntime.backend.prepare`` + ``run`` + ``Runner.assert_similar_outputs`` per data set.

in one process (no interpreter start or report): the bare loop, ``run_isolated`` with 1 worker
and with one per core.  Ratios are against the bare loop of the same kind.  The issue's bounds
(docs/running.md): a whole ``run --jobs 1`` at most 1.5x the bare loop, ``--jobs 2`` at most 1.25x.

Usage: python bench/bench_runner.py [--bundle DIR] [--ops LayerNormalization,BatchNormalization]
                                    [--seed 0] [--repeat 3] [--skip-official]
"""

from __future__ import annotations

import argparse
import glob
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
import warnings
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def bare_loop(bundle: str) -> int:
    """The bare loop (item 1): run every case of ``bundle`` on onnxruntime, nothing else."""
    import onnx
    import onnxruntime as ort
    from onnx import numpy_helper

    ort.set_default_logger_severity(4)
    so = ort.SessionOptions()
    so.intra_op_num_threads, so.inter_op_num_threads, so.log_severity_level = 1, 1, 4
    with open(os.path.join(bundle, "manifest.json"), encoding="utf-8") as f:
        entries = json.load(f)["cases"]
    ran = 0
    for e in entries:
        d = os.path.join(bundle, e["dir"])
        try:
            with open(os.path.join(d, "model.onnx"), "rb") as f:
                sess = ort.InferenceSession(f.read(), sess_options=so, providers=["CPUExecutionProvider"])
            names = [i.name for i in sess.get_inputs()]
            for k in range(e["n_datasets"]):
                feeds = {}
                for i, p in enumerate(sorted(glob.glob(os.path.join(d, f"test_data_set_{k}", "input_*.pb")))):
                    t = onnx.TensorProto()
                    with open(p, "rb") as f:
                        t.ParseFromString(f.read())
                    feeds[names[i]] = numpy_helper.to_array(t)
                sess.run(None, feeds)
            ran += 1
        except Exception:  # noqa: BLE001 - error cases, missing kernels: the loop goes on
            pass
    return ran


def official(bundle: str) -> int:
    """onnx's harness style (item 4): onnx.load + onnxruntime.backend + assert_similar_outputs."""
    import onnx
    import onnxruntime.backend as ort_backend
    from onnx import numpy_helper
    from onnx.backend.test.runner import Runner

    def load(p):
        t = onnx.TensorProto()
        with open(p, "rb") as f:
            t.ParseFromString(f.read())
        return numpy_helper.to_array(t)

    ran = 0
    for d in sorted(glob.glob(os.path.join(bundle, "cases", "test_*"))):
        with open(os.path.join(d, "data.json"), encoding="utf-8") as f:
            tol = json.load(f)
        try:
            rep = ort_backend.prepare(onnx.load(os.path.join(d, "model.onnx")), "CPU")
            for ds in sorted(glob.glob(os.path.join(d, "test_data_set_*"))):
                ins = [load(p) for p in sorted(glob.glob(os.path.join(ds, "input_*.pb")))]
                ref = [load(p) for p in sorted(glob.glob(os.path.join(ds, "output_*.pb")))]
                outs = list(rep.run(ins))
                try:
                    Runner.assert_similar_outputs(ref, outs, rtol=tol["rtol"], atol=tol["atol"])
                except AssertionError:
                    pass
            ran += 1
        except Exception:  # noqa: BLE001 - bfloat16 feeds, missing kernels
            pass
    return ran


def best_of(fn, repeat: int) -> float:
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return min(times)


def process(argv: list[str]):
    def go():
        r = subprocess.run(argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        if r.returncode not in (0, 1):  # run exits 1 when some case does not pass
            raise SystemExit(f"{' '.join(argv)} failed ({r.returncode}):\n{r.stderr[-2000:]}")
    return go


def make_bundle(ops: list[str], seed: int, tmp: Path) -> Path:
    """The operators' bundle without the cases that crash onnxruntime."""
    from conformance.bundle import write_bundle
    from conformance.isolation import run_isolated
    from conformance.suite import generate_suite

    suite = generate_suite(ops, seed)
    results = run_isolated(suite.cases, spec="onnxruntime", jobs=os.cpu_count() or 1)
    crashed = {r.id for r in results if r.outcome in ("crash", "timeout")}
    suite.cases = [c for c in suite.cases if c.id not in crashed]
    print(f"{len(suite.cases)} cases of {', '.join(ops)} (seed {seed}); {len(crashed)} that crash onnxruntime "
          "left out")
    return write_bundle(suite, tmp / "bundle")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--bundle")
    ap.add_argument("--ops", default="LayerNormalization,BatchNormalization")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--skip-official", action="store_true", help="leave out onnx's harness (slow)")
    ap.add_argument("--bare-loop", metavar="DIR", help=argparse.SUPPRESS)
    ap.add_argument("--official", metavar="DIR", help=argparse.SUPPRESS)
    args = ap.parse_args()
    warnings.simplefilter("ignore")
    if args.bare_loop:
        bare_loop(args.bare_loop)
        return
    if args.official:
        official(args.official)
        return

    import onnxruntime as ort

    sys.path.insert(0, str(ROOT))
    tmp = Path(tempfile.mkdtemp(prefix="bench-runner-"))
    try:
        bundle = Path(args.bundle) if args.bundle else make_bundle(args.ops.split(","), args.seed, tmp)
        cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1
        print(f"bundle {bundle}; {cores} cores; onnxruntime {ort.__version__}; best of {args.repeat}")
        out = tmp / "out"
        cli = [sys.executable, "-m", "conformance.cli", "run", "--backend", "onnxruntime", "--bundle", str(bundle),
               "--out", str(out), "--force"]
        me = [sys.executable, str(Path(__file__).resolve())]
        rows = [("whole processes", None)]
        t_bare = best_of(process(me + ["--bare-loop", str(bundle)]), args.repeat)
        rows.append(("bare onnxruntime loop", t_bare))
        rows.append(("onnx-conformance run --jobs 1", best_of(process(cli + ["--jobs", "1"]), args.repeat)))
        rows.append((f"onnx-conformance run --jobs {cores}", best_of(process(cli + ["--jobs", str(cores)]),
                                                                     args.repeat)))
        if not args.skip_official:
            rows.append(("onnx official harness (onnxruntime.backend)",
                         best_of(process(me + ["--official", str(bundle)]), args.repeat)))
        print_rows(rows, t_bare)

        from conformance.bundle import read_index
        from conformance.isolation import run_isolated

        _, refs = read_index(bundle)
        t_in = best_of(lambda: bare_loop(str(bundle)), args.repeat)
        rows = [("in one process (no start-up, no report)", None), ("bare onnxruntime loop", t_in)]
        for jobs in (1, cores):
            rows.append((f"run_isolated, {jobs} worker(s)",
                         best_of(lambda: run_isolated(refs, spec="onnxruntime", jobs=jobs, collect=False,
                                                      on_analysis=lambda a: None), args.repeat)))
        print_rows(rows, t_in)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def print_rows(rows, base: float) -> None:
    for name, t in rows:
        if t is None:
            print(f"\n{name}")
        else:
            print(f"  {name:46s} {t:7.3f} s  {t / base:5.2f}x bare")


if __name__ == "__main__":
    main()
