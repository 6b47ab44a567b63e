"""Runner overhead: a bare onnxruntime loop vs our runner (vs onnx's official harness), same bundle.

The bundle (``--preset``, or ``--ops``/``--seed``, or ``--bundle DIR`` as given):

* ``mixed`` (the default; issue 30's "mixed bundle"): eleven families at seed 0,
  LayerNormalization, Softmax, LogSoftmax, Relu, Gelu, Add, MatMul, Transpose, ReduceSum, Gather,
  Cast: 7,317 cases (onnxruntime 1.32), most of them small (Relu and Cast are 4,244 of them),
  where what the runner does around each case shows;
* ``lnbn``: LayerNormalization and BatchNormalization at seed 0 (2,315 cases; heavier cases,
  which hide the per-case cost).

Either without the cases that crash onnxruntime (found by a first isolated run; neither
in-process loop survives them), written once to a temporary directory (``--keep DIR``: there).

1. Whole processes (what a CI job pays: interpreter start, imports, reading the bundle, the
   report), as ``--pairs`` paired rounds: bare loop, ``run --jobs 1``, ``run --jobs 2``, the
   ratios taken within a round, then their median and spread (min - max) over the rounds; a
   warm-up round before them is not counted (a cold page cache, a VM slow after an idle spell).
   CPU time is user + system of the process and of every child it waited for (the workers):
   ``getrusage(RUSAGE_CHILDREN)`` deltas around each process.

   * bare loop: ``python bench/bench_runner.py --bare-loop DIR``: for every manifest entry,
     read model.onnx and the input .pb files, ``onnxruntime.InferenceSession`` with 1-thread
     pools (as our backend makes them) and ``run``; nothing is compared, nothing written; an
     input of a type numpy holds only through ml_dtypes (bfloat16, float8, int4, ...) fed as an
     ``OrtValue`` of the file's bytes, as onnxruntime's Python API needs (before session 15 the
     loop gave it numpy arrays it refused: it skipped the runtime's work on 2,343 of the mixed
     bundle's 7,317 cases);
   * ``onnx-conformance run --backend onnxruntime --bundle DIR --jobs 1 --out TMP --force``
     (results.jsonl, results.json, report.html, coverage included), and ``--jobs 2``.

   The package's bytecode is compiled first (``compileall``, as ``pip install`` does), unless
   ``--no-compile``: where ``PYTHONDONTWRITEBYTECODE`` is set and no ``__pycache__`` exists, each
   ``run`` would otherwise compile the package's modules anew (~0.1 s of CPU a process).

   Issue 30's bounds, checked on the medians: ``run --jobs 1`` at most 1.3x the bare loop's CPU
   time and 1.5x its wall time; ``run --jobs 2`` at most 0.75x the bare loop's wall time.
   With ``--official``, onnx's harness as well (best of ``--repeat``): ``onnx.load`` +
   ``onnxruntime.backend.prepare`` + ``run`` + ``Runner.assert_similar_outputs`` per data set.

2. Per stage, CPU microseconds per case, in one process, the way a worker goes (a batch of
   ``isolation.MAX_BATCH_CHEAP`` cases read, then attempted, then judged: the size a worker's
   batches of such cheap cases grow to), on the bundle, its cheap
   cases (Relu and Cast) and LN+BN: reading and checking the case (``CaseRef.load_for_run``),
   the backend's prepare + run (``runner.attempt_case``: what the runtime spends), judging
   (``runner.judge_case``), the result record (``to_json``, its line of results.jsonl encoded
   by ``isolation.record_line`` and the message pickled, as the worker makes them), and what
   the parent does per result (the message unpickled, the line written, the outcome counted;
   one flush per batch, as the run flushes once per collection of results); then the
   runner's part (every stage but prepare + run) and its share of the runtime's.  The bare
   loop in the same process, per case, for scale.

3. ``--in-process``: the bare loop, ``run_isolated`` with 1 worker and with 2, in one process
   (no start-up, no report), best of ``--repeat``.

Usage: python bench/bench_runner.py [--preset mixed|lnbn] [--bundle DIR] [--ops A,B] [--seed 0]
                                    [--pairs 5] [--skip-stages] [--stages-only] [--lnbn-bundle DIR]
                                    [--in-process] [--official] [--no-compile] [--keep DIR]
"""

from __future__ import annotations

import argparse
import ctypes
import glob
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import warnings
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def bare_loop(bundle: str) -> int:
    """The bare loop (item 1): run every case of ``bundle`` on onnxruntime, nothing else.

    An input of a type onnxruntime's Python API takes from no numpy array (bfloat16, the float8,
    4-bit and 2-bit types: those numpy holds as ``ml_dtypes`` types) is fed as an ``OrtValue``
    holding the file's ``raw_data``, so that onnxruntime runs those cases as the runner makes it
    run them; before session 15 the loop fed ``numpy_helper.to_array``'s array, which onnxruntime
    refused before running anything (2,343 of the mixed bundle's 7,317 cases, a third of its
    cheap ones).  An output of such a type still fails in ``run`` after the kernel ran (converting
    it to numpy is a harness's work, which the runner pays)."""
    import onnx
    import onnxruntime as ort
    from onnx import helper, numpy_helper

    ort.set_default_logger_severity(4)
    so = ort.SessionOptions()
    so.intra_op_num_threads, so.inter_op_num_threads, so.log_severity_level = 1, 1, 4
    # the types numpy holds only as ml_dtypes (user-defined) dtypes: onnxruntime takes them as OrtValues
    bits = set()
    for t in onnx.TensorProto.DataType.values():
        try:
            if t and helper.tensor_dtype_to_np_dtype(t).isbuiltin == 2:
                bits.add(t)
        except (KeyError, ValueError, TypeError):
            pass
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
                    if t.data_type in bits and t.HasField("raw_data"):
                        v = ort.OrtValue.ortvalue_from_shape_and_type(list(t.dims), t.data_type)
                        if v.tensor_size_in_bytes() == len(t.raw_data) and t.raw_data:
                            ctypes.memmove(v.data_ptr(), t.raw_data, len(t.raw_data))
                        feeds[names[i]] = v
                    else:
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


#: issue 30's mixed bundle: eleven families, many small cases
MIXED = ("LayerNormalization,Softmax,LogSoftmax,Relu,Gelu,Add,MatMul,Transpose,ReduceSum,Gather,Cast")
LNBN = "LayerNormalization,BatchNormalization"
#: the cheap cases of the mixed bundle, where the per-case cost shows
CHEAP = ("Relu", "Cast")
#: issue 30's bounds: (label, measure, at most)
BOUNDS = (("run --jobs 1, CPU time", "cpu1", 1.3), ("run --jobs 1, wall time", "wall1", 1.5),
          ("run --jobs 2, wall time", "wall2", 0.75))


def _children_cpu() -> float:
    import resource

    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


def measure(argv: list[str]) -> tuple[float, float]:
    """``(wall, cpu)`` seconds of one whole process ``argv``; cpu: user + system of it and of
    every child it waited for (its workers).  The package is this checkout's (``PYTHONPATH``),
    not whichever an editable install points to."""
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(ROOT)] + [p for p in
                                                                    [os.environ.get("PYTHONPATH")] if p]))
    c0, t0 = _children_cpu(), time.perf_counter()
    r = subprocess.run(argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, env=env)
    wall, cpu = time.perf_counter() - t0, _children_cpu() - c0
    if r.returncode not in (0, 1):  # run exits 1 when some case does not pass
        raise SystemExit(f"{' '.join(argv)} failed ({r.returncode}):\n{r.stderr[-2000:]}")
    return wall, cpu


def _busy_s() -> float:
    """Seconds of CPU the whole machine has been busy (/proc/stat), 0 where unknown: the rounds
    subtract their own to show what other work ran beside them."""
    try:
        with open("/proc/stat") as f:
            v = [int(x) for x in f.readline().split()[1:]]
        return (sum(v) - v[3] - v[4]) / os.sysconf("SC_CLK_TCK")
    except (OSError, ValueError, IndexError):
        return 0.0


def _load() -> str:
    """The load average and, where /proc/stat exists, the share of the cores busy over the next
    second (other sessions' work shows there before it shows in the load average)."""
    text = "load average %.2f %.2f %.2f" % os.getloadavg()
    try:
        def sample():
            with open("/proc/stat") as f:
                v = [int(x) for x in f.readline().split()[1:]]
            return sum(v), v[3] + v[4]  # all, idle + iowait
        a = sample()
        time.sleep(1.0)
        b = sample()
        text += f"; cores busy {100 * (1 - (b[1] - a[1]) / max(b[0] - a[0], 1)):.0f}% over 1 s"
    except (OSError, ValueError, IndexError):
        pass
    return text


def paired(bundle: Path, pairs: int, tmp: Path) -> dict[str, list[float]]:
    """``pairs`` rounds of bare loop, ``run --jobs 1``, ``run --jobs 2``; the per-round ratios."""
    out = tmp / "out"
    cli = [sys.executable, "-m", "conformance.cli", "run", "--backend", "onnxruntime", "--bundle", str(bundle),
           "--out", str(out), "--force"]
    bare = [sys.executable, str(Path(__file__).resolve()), "--bare-loop", str(bundle)]
    ratios: dict[str, list[float]] = {"cpu1": [], "wall1": [], "wall2": [], "cpu2": []}
    raw = []
    print(f"\nwhole processes, {pairs} paired rounds (bare loop, run --jobs 1, run --jobs 2); {_load()}")
    # a round first, not counted: the first processes after an idle spell read a cold page cache and
    # run on a VM slow to give CPU back (a bare loop took 8.1 s there and 3.4 s in the next round)
    ww = [measure(c) for c in (bare, cli + ["--jobs", "1"], cli + ["--jobs", "2"])]
    print(f"  warm-up round (not counted): bare {ww[0][0]:5.2f} s wall, --jobs 1 {ww[1][0]:5.2f} s, "
          f"--jobs 2 {ww[2][0]:5.2f} s")
    for k in range(pairs):
        busy0 = _busy_s()
        bw, bc = measure(bare)
        w1, c1 = measure(cli + ["--jobs", "1"])
        w2, c2 = measure(cli + ["--jobs", "2"])
        others = _busy_s() - busy0 - (bc + c1 + c2)
        raw.append((bw, bc, w1, c1, w2, c2))
        ratios["cpu1"].append(c1 / bc)
        ratios["wall1"].append(w1 / bw)
        ratios["wall2"].append(w2 / bw)
        ratios["cpu2"].append(c2 / bc)
        print(f"  round {k + 1}: bare {bw:5.2f} s wall {bc:5.2f} s CPU | --jobs 1 {w1:5.2f} s wall {c1:5.2f} s CPU "
              f"({c1 / bc:4.2f}x CPU, {w1 / bw:4.2f}x wall) | --jobs 2 {w2:5.2f} s wall {c2:5.2f} s CPU "
              f"({w2 / bw:4.2f}x wall); others' CPU meanwhile ~{max(others, 0):.1f} s")
    print(f"  after: {_load()}")
    med = lambda xs: statistics.median(xs)  # noqa: E731
    print(f"  medians: bare {med([r[0] for r in raw]):.2f} s wall, {med([r[1] for r in raw]):.2f} s CPU; "
          f"--jobs 1 {med([r[2] for r in raw]):.2f} s wall, {med([r[3] for r in raw]):.2f} s CPU; "
          f"--jobs 2 {med([r[4] for r in raw]):.2f} s wall, {med([r[5] for r in raw]):.2f} s CPU")
    print("  issue 30's bounds (median of the per-round ratios; spread min - max):")
    for label, key, limit in BOUNDS:
        xs = ratios[key]
        verdict = "holds" if med(xs) <= limit else "DOES NOT hold"
        print(f"    {label:26s} {med(xs):5.2f}x ({min(xs):.2f} - {max(xs):.2f}), at most {limit}x: {verdict}")
    xs = ratios["cpu2"]
    print(f"    {'(run --jobs 2, CPU time)':26s} {med(xs):5.2f}x ({min(xs):.2f} - {max(xs):.2f})")
    return ratios


STAGES = ("read+check", "prepare+run", "judge", "record", "parent")


def stages(refs, batch: int) -> tuple[dict[str, float], int]:
    """Seconds per stage over ``refs`` (see the module's docstring, 2.), the way a worker goes."""
    import pickle

    from conformance.backends import resolve_backend
    from conformance.bundle import BundleError
    from conformance.isolation import record_line
    from conformance.runner import attempt_case, judge_case

    backend = resolve_backend("onnxruntime", {})
    t = dict.fromkeys(STAGES, 0.0)
    pc = time.process_time  # CPU time: another session's load or a cold page cache moves it less
    counts: dict[str, int] = {}
    n = 0
    with open(os.devnull, "wb") as sink:
        for s in range(0, len(refs), batch):
            t0 = pc()
            cases = []
            for r in refs[s:s + batch]:
                try:
                    cases.append(r.load_for_run())
                except BundleError as exc:
                    raise SystemExit(f"cannot read the bundle: {exc}") from None
            t1 = pc()
            got = [attempt_case(c, backend) for c in cases]
            t2 = pc()
            msgs = []
            for c, g in zip(cases, got):
                ta = pc()
                res = judge_case(c, backend, g)
                tb = pc()
                line = (record_line(res.to_json())[1], res.outcome)
                msgs.append(pickle.dumps(("line", 0, line, None), pickle.HIGHEST_PROTOCOL))
                t["judge"] += tb - ta
                t["record"] += pc() - tb
            t3 = pc()
            for m in msgs:
                data, outcome = pickle.loads(m)[2]
                sink.write(data)
                counts[outcome] = counts.get(outcome, 0) + 1
            sink.flush()  # once per collection of results, as the run does
            t4 = pc()
            t["read+check"] += t1 - t0
            t["prepare+run"] += t2 - t1
            t["parent"] += t4 - t3
            n += len(cases)
    return t, n


def stage_table(sets: list[tuple[str, list, str]]) -> None:
    """Print the per-stage table for each ``(name, refs, bundle)``; the bare loop per case for scale."""
    from conformance.isolation import MAX_BATCH_CHEAP

    print(f"\nper stage, CPU microseconds per case, in one process (batches of {MAX_BATCH_CHEAP}); {_load()}")
    cols = STAGES + ("runner", "runner/runtime", "bare loop")
    print(f"  {'':28s}" + "".join(f"{c:>15s}" for c in cols))
    for name, refs, bundle in sets:
        t, n = stages(refs, MAX_BATCH_CHEAP)
        us = {k: v / n * 1e6 for k, v in t.items()}
        runner = sum(us.values()) - us["prepare+run"]
        bare = ""
        if bundle is not None:
            t0 = time.process_time()
            bare_loop(bundle)
            bare = f"{(time.process_time() - t0) / len(refs) * 1e6:.0f}"
        print(f"  {name:28s}" + "".join(f"{us[k]:15.0f}" for k in STAGES) + f"{runner:15.0f}"
              f"{runner / us['prepare+run']:14.0%} " + f"{bare:>15s}")
    print(f"  after: {_load()}")


def in_process(bundle: Path, repeat: int) -> None:
    from conformance.bundle import read_index
    from conformance.isolation import run_isolated

    _, refs = read_index(bundle)
    t_in = best_of(lambda: bare_loop(str(bundle)), repeat)
    rows = [(f"in one process (no start-up, no report), best of {repeat}; {_load()}", None),
            ("bare onnxruntime loop", t_in)]
    for jobs in (1, 2):
        rows.append((f"run_isolated, {jobs} worker(s)",
                     best_of(lambda: run_isolated(refs, spec="onnxruntime", jobs=jobs, collect=False,
                                                  on_analysis=lambda a: None), repeat)))
    print_rows(rows, t_in)


def best_of(fn, repeat: int) -> float:
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return min(times)


def make_bundle(ops: list[str], seed: int, out: Path) -> Path:
    """The operators' bundle without the cases that crash onnxruntime."""
    from conformance.bundle_write import write_bundle
    from conformance.execute import keep_coverage
    from conformance.isolation import run_isolated
    from conformance.suite import generate_suite

    suite = generate_suite(ops, seed)
    results = run_isolated(suite.cases, spec="onnxruntime", jobs=os.cpu_count() or 1)
    crashed = {r.id for r in results if r.outcome in ("crash", "timeout")}
    suite.cases = [c for c in suite.cases if c.id not in crashed]
    print(f"{len(suite.cases)} cases of {', '.join(ops)} (seed {seed}); {len(crashed)} that crash onnxruntime "
          "left out")
    return write_bundle(suite, out, after_manifest=keep_coverage)  # its coverage and index kept, as generate's


def _fresh_coverage(bundle: Path) -> None:
    """Write ``bundle``'s kept coverage (``coverage.jsonl``) and index (``index.bin``), as
    ``generate`` writes them, where either is missing or stale (the coverage is keyed on its code:
    any edit to coverage.py or opspec.py invalidates it; the index on the manifest's bytes), saying
    so: a run would otherwise compute the coverage in a child process (~0.2 s of CPU on the mixed
    bundle) or parse the manifest (~0.2 s), costs a user's ``generate`` + ``run`` does not pay (the
    session 11 figures paid the first unseen, session 15's first set both)."""
    from conformance.bundle import _kept_index, read_index
    from conformance.execute import keep_coverage, read_coverage

    stale = [name for name, fresh in (("coverage", lambda: read_coverage(read_index(bundle)[1]) is not None),
                                      ("index", lambda: _kept_index(Path(bundle)) is not None)) if not fresh()]
    if stale:
        keep_coverage(bundle)
        print(f"{bundle}: its kept {' and '.join(stale)} missing or stale (the coverage is keyed on its code, the index "
              "on the manifest's bytes): written again, as generate writes them")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--preset", choices=("mixed", "lnbn"), default="mixed",
                    help="the bundle: the mixed one (default) or LayerNormalization+BatchNormalization")
    ap.add_argument("--bundle", help="use this bundle (written by generate) instead of generating one")
    ap.add_argument("--ops", help="operators of the bundle (default: the preset's)")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--pairs", type=int, default=5, help="paired rounds of whole processes")
    ap.add_argument("--repeat", type=int, default=3, help="best of, for --in-process and --official")
    ap.add_argument("--skip-stages", action="store_true", help="leave out the per-stage table")
    ap.add_argument("--stages-only", action="store_true", help="only the per-stage table")
    ap.add_argument("--lnbn-bundle", help="the LN+BN bundle for the per-stage table (default: generated)")
    ap.add_argument("--in-process", action="store_true", help="also run_isolated against the bare loop in process")
    ap.add_argument("--official", action="store_true", help="also onnx's harness (slow)")
    ap.add_argument("--skip-official", action="store_true", help=argparse.SUPPRESS)  # the default now
    ap.add_argument("--no-compile", action="store_true",
                    help="do not compile the package's bytecode first (see the module's docstring)")
    ap.add_argument("--keep", metavar="DIR", help="write generated bundles under DIR and keep them")
    ap.add_argument("--bare-loop", metavar="DIR", help=argparse.SUPPRESS)
    ap.add_argument("--official-loop", "--official-dir", dest="official_dir", metavar="DIR", help=argparse.SUPPRESS)
    args = ap.parse_args()
    warnings.simplefilter("ignore")
    if args.bare_loop:
        bare_loop(args.bare_loop)
        return
    if args.official_dir:
        official(args.official_dir)
        return

    import onnxruntime as ort

    sys.path.insert(0, str(ROOT))
    tmp = Path(tempfile.mkdtemp(prefix="bench-runner-"))
    store = Path(args.keep) if args.keep else tmp
    try:
        ops = (args.ops or (MIXED if args.preset == "mixed" else LNBN)).split(",")
        if args.bundle:
            bundle = Path(args.bundle)
            _fresh_coverage(bundle)
        else:
            name = args.preset if not args.ops else "-".join(o[:4] for o in ops)[:60]
            bundle = make_bundle(ops, args.seed, store / f"{name}-{args.seed}")
        cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1
        print(f"bundle {bundle}; {cores} cores; onnxruntime {ort.__version__}; python {sys.version.split()[0]}")
        if not args.no_compile:
            # as an installed package has it (pip compiles at install): with PYTHONDONTWRITEBYTECODE
            # set and no __pycache__, every run would compile the package anew (~0.1 s of CPU)
            import compileall

            compileall.compile_dir(str(ROOT / "conformance"), quiet=1)
            print("the package's bytecode compiled first, as an install does (--no-compile: not)")
        if not args.stages_only:
            paired(bundle, args.pairs, tmp)
            if args.official:
                t_bare = best_of(lambda: measure([sys.executable, str(Path(__file__).resolve()), "--bare-loop",
                                                  str(bundle)]), args.repeat)
                t_off = best_of(lambda: measure([sys.executable, str(Path(__file__).resolve()), "--official-loop",
                                                 str(bundle)]), args.repeat)
                print_rows([("onnx's official harness, whole process, best of %d" % args.repeat, None),
                            ("bare onnxruntime loop", t_bare), ("onnx official harness (onnxruntime.backend)", t_off)],
                           t_bare)
        if not args.skip_stages:
            from conformance.bundle import read_index

            _, refs = read_index(bundle)
            sets = [(f"{bundle.name} ({len(refs)} cases)", refs, str(bundle))]
            cheap = [r for r in refs if r.op in CHEAP]
            if cheap and len(cheap) < len(refs):
                sets.append((f"  of which {'+'.join(CHEAP)} ({len(cheap)})", cheap, None))
            if args.lnbn_bundle or set(ops) != set(LNBN.split(",")):
                lnbn = Path(args.lnbn_bundle) if args.lnbn_bundle else make_bundle(LNBN.split(","), args.seed,
                                                                                   store / f"lnbn-{args.seed}")
                _, lrefs = read_index(lnbn)
                sets.append((f"LN+BN ({len(lrefs)} cases)", lrefs, str(lnbn)))
            stage_table(sets)
        if args.in_process:
            in_process(bundle, args.repeat)
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
