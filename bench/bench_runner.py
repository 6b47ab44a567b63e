"""Runner overhead: a bare onnxruntime loop vs our runner vs onnx's official harness, same cases.

On one bundle (generated into a temporary directory unless --bundle is given), in one process:

  1. bare loop: ``onnxruntime.InferenceSession(model bytes)`` + ``run`` per data set, nothing else
     (default session options, so onnxruntime builds a thread pool per session), and the same
     loop with 1-thread sessions, which is what our onnxruntime backend uses by default;
  2. our runner, one worker subprocess (``run_isolated(jobs=1)``: fork, pickle, compare, classify);
  3. our runner with ``--jobs 2``;
  4. onnx's official harness style: ``onnx.load`` + ``onnxruntime.backend.prepare`` + ``run`` +
     ``Runner.assert_similar_outputs`` per data set, from the bundle's files.

Cases that crash onnxruntime (found by a first isolated pass) are left out of all four,
since the in-process loops cannot survive them; bfloat16 cases are left out too
(neither the bare loop's numpy feeds nor onnxruntime.backend can pass bfloat16).
Each figure is the best of --repeat runs; ratios are against the bare loop.

Usage: python bench/bench_runner.py [--bundle DIR] [--ops LayerNormalization,BatchNormalization] [--repeat 3]
"""

from __future__ import annotations

import argparse
import glob
import os
import tempfile
import time
import warnings
from pathlib import Path


def best_of(fn, repeat: int) -> float:
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return min(times)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--bundle")
    ap.add_argument("--ops", default="LayerNormalization,BatchNormalization")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()
    warnings.simplefilter("ignore")

    import numpy as np
    import onnx
    import onnxruntime as ort
    from onnx import numpy_helper
    from onnx.backend.test.runner import Runner
    import onnxruntime.backend as ort_backend

    from conformance.bundle import read_bundle, write_bundle
    from conformance.isolation import run_isolated
    from conformance.suite import generate_suite

    tmp = tempfile.TemporaryDirectory()
    bundle = Path(args.bundle) if args.bundle else write_bundle(generate_suite(args.ops.split(","), args.seed),
                                                                Path(tmp.name) / "bundle")
    suite = read_bundle(bundle)
    first = run_isolated(suite.cases, spec="onnxruntime", jobs=2)
    ok = {r.id for r in first if r.outcome in ("pass", "fail")}
    cases = [c for c in suite.cases if c.id in ok and c.expect_error is None
             and not any(i.elem_type == onnx.TensorProto.BFLOAT16 for i in c.graph_inputs)
             and not any(o.elem_type == onnx.TensorProto.BFLOAT16 for o in c.present_outputs)]
    n_ds = sum(len(c.datasets) for c in cases)
    print(f"bundle {bundle}: {len(suite.cases)} cases; benchmarking {len(cases)} that onnxruntime runs "
          f"({n_ds} data sets); cores {os.cpu_count()}; onnxruntime {ort.__version__}")

    def bare():
        for c in cases:
            sess = ort.InferenceSession(c.model_bytes, providers=["CPUExecutionProvider"])
            names = [o.name for o in c.present_outputs]
            for ds in c.datasets:
                sess.run(names, ds.inputs)

    def bare_1thread():
        so = ort.SessionOptions()
        so.intra_op_num_threads, so.inter_op_num_threads = 1, 1
        for c in cases:
            sess = ort.InferenceSession(c.model_bytes, sess_options=so, providers=["CPUExecutionProvider"])
            names = [o.name for o in c.present_outputs]
            for ds in c.datasets:
                sess.run(names, ds.inputs)

    def ours(jobs):
        return lambda: run_isolated(cases, spec="onnxruntime", jobs=jobs)

    def load(p):
        t = onnx.TensorProto()
        t.ParseFromString(Path(p).read_bytes())
        return numpy_helper.to_array(t)

    dirs = [str(bundle / "cases" / c.dirname) for c in cases]
    tol = {d: __import__("json").loads(Path(d, "data.json").read_text()) for d in dirs}

    def official():
        for d in dirs:
            model = onnx.load(os.path.join(d, "model.onnx"))
            rep = ort_backend.prepare(model, "CPU")
            for ds in sorted(glob.glob(os.path.join(d, "test_data_set_*"))):
                ins = [load(p) for p in sorted(glob.glob(os.path.join(ds, "input_*.pb")))]
                ref = [load(p) for p in sorted(glob.glob(os.path.join(ds, "output_*.pb")))]
                outs = list(rep.run(ins))
                try:
                    Runner.assert_similar_outputs(ref, outs, rtol=tol[d]["rtol"], atol=tol[d]["atol"])
                except AssertionError:
                    pass

    t_bare = best_of(bare, args.repeat)
    rows = [("bare onnxruntime loop", t_bare),
            ("bare loop, sessions with 1 thread (as ours)", best_of(bare_1thread, args.repeat))]
    rows.append(("our runner, 1 worker", best_of(ours(1), args.repeat)))
    rows.append(("our runner, --jobs 2", best_of(ours(2), args.repeat)))
    rows.append(("onnx official harness (onnxruntime.backend)", best_of(official, args.repeat)))
    for name, t in rows:
        print(f"{name:46s} {t:7.3f} s  {len(cases) / t:8.0f} cases/s  {t / t_bare:5.2f}x bare")
    _ = np
    tmp.cleanup()


if __name__ == "__main__":
    main()
