"""Generation throughput vs building onnx's own node test suite, in one process.

Prints, for the chosen operators and seed:
  * our generation: cases, seconds, cases/s (in memory, models built and hashed);
  * writing the bundle to a temporary directory: seconds, cases/s, MB;
  * onnx's node suite: ``onnx.backend.test.loader.load_model_tests(kind="node")``
    (imports every node test module and builds every case in memory): cases, seconds, cases/s;
  * the ratio of the two throughputs.

  * the streamed path the CLI uses (generate and write per operator in workers): seconds and
    cases/s with 1 worker and with one per CPU;

Usage: python bench/bench_generate.py [--ops all|LayerNormalization,...] [--seed 0] [--repeat 3]
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from pathlib import Path


def _best(fn, repeat):
    times, out = [], None
    for _ in range(repeat):
        t0 = time.perf_counter()
        out = fn()
        times.append(time.perf_counter() - t0)
    return min(times), statistics.median(times), out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--ops", default="LayerNormalization,BatchNormalization")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()
    from conformance.errors import parse_ops

    ops = parse_ops(args.ops)

    from conformance.bundle_write import write_bundle
    from conformance.suite import generate_suite

    def gen():
        s = generate_suite(ops, args.seed)
        for c in s.cases:  # build and hash every model, as writing a bundle would
            _ = c.content_hash
        return s

    best, med, suite = _best(gen, args.repeat)
    n = len(suite.cases)
    print(f"ours: {n} cases of {','.join(ops)}: best {best:.3f} s, median {med:.3f} s -> {n / best:.0f} cases/s")

    with tempfile.TemporaryDirectory() as d:
        t0 = time.perf_counter()
        out = write_bundle(suite, Path(d) / "b")
        tw = time.perf_counter() - t0
        size = sum(p.stat().st_size for p in out.rglob("*") if p.is_file())
    print(f"ours: writing the bundle: {tw:.3f} s -> {n / tw:.0f} cases/s, {size / 1e6:.1f} MB")
    del suite

    import os
    import resource

    from conformance.bundle_write import write_generated_bundle

    jobs_all = os.cpu_count() or 1
    for jobs in sorted({1, jobs_all}):
        with tempfile.TemporaryDirectory() as d:
            t0 = time.perf_counter()
            ident = write_generated_bundle(ops, args.seed, Path(d) / "b", jobs=jobs)
            ts = time.perf_counter() - t0
        rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
        print(f"ours: streamed generate+write, {jobs} worker(s): {ts:.3f} s -> {ident['n_cases'] / ts:.0f} cases/s "
              f"(this process's peak RSS so far {rss:.0f} MB)")

    from onnx.backend.test.loader import load_model_tests

    # The first call imports every onnx node test module; later calls return the cached list.
    t0 = time.perf_counter()
    node = load_model_tests(kind="node")
    tn = time.perf_counter() - t0
    m = len(node)
    print(f"onnx node suite: {m} cases: first load {tn:.3f} s -> {m / tn:.0f} cases/s")
    print(f"ratio (ours / onnx, cases per second): {(n / best) / (m / tn):.2f}")


if __name__ == "__main__":
    main()
