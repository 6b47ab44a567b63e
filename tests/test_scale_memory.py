"""The parent of a run holds no per-case record while the cases run.

A run of N and of 4N toy cases (the toy Abs cases copied under distinct labels, with as many tags
as a real case has), each a whole CLI process in a subprocess; in each, tracemalloc measures what
the parent still holds when :func:`conformance.execute._run` returns (allocated from the first
case sent to the last result received); the growth per case between the two runs is bounded.
tracemalloc, not the resident size: a run's memory first goes into the heap the bundle's index
freed, so the resident size hides per-case growth at these sizes.

Measured on the 2-core machine (``python tests/test_scale_memory.py``, N = 400, --jobs 2): before
the flat-memory change (every record, its results.jsonl line and its report row kept by id while
the run went on) 7.94 KiB a case; after it (an index entry per case: the offset of its line,
outcome, operator, domain) 0.33 KiB a case.  The bound sits well between.  The end of the run
(the report's rows and the page) is measured by bench/bench_scale.py, not here.
"""

from __future__ import annotations

import dataclasses
import os
import subprocess
import sys
from pathlib import Path

import pytest

N = 400
#: KiB a case the parent may grow by while the cases run (see the module docstring for the measurements)
BOUND_KIB = 1.5

_MEASURED = """
import sys, tracemalloc
import conformance.execute as ex

run = ex._run

def measured(*a, **k):
    tracemalloc.start()
    out = run(*a, **k)
    held = tracemalloc.get_traced_memory()[0]
    tracemalloc.stop()
    print(f"RUN_GROWTH_KIB {held / 1024:.1f}", file=sys.stderr)
    return out

ex._run = measured
from conformance.cli import main
sys.exit(main(sys.argv[1:]))
"""


#: tags as many as a real case's (LayerNormalization's have 15-19), in a few combinations
_TAGS = [{f"feature{k}": f"value{(j + k) % 5}" for k in range(14)} for j in range(7)]


def _bundle(n: int, out: Path) -> Path:
    """A bundle of ``n`` toy Abs cases, each with its own id and tags."""
    import toy

    from conformance.bundle_write import write_bundle
    from conformance.suite import Suite

    base = toy.abs_cases(0)
    cases = [dataclasses.replace(b, label=f"{b.label}/copy{i}", tags={**b.tags, "copy": i, **_TAGS[i % 7]})
             for i in range(n) for b in [base[i % len(base)]]]
    return write_bundle(Suite(cases=cases, seed=0, ops=["Abs"], generators={"Abs": "toy"}), out, force=True)


def _run_growth_kib(bundle: Path, out: Path) -> float:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([os.environ.get("PYTHONPATH", ""),
                                                       str(Path(__file__).resolve().parents[1])])}
    r = subprocess.run([sys.executable, "-c", _MEASURED, "run", "--backend", "onnxruntime", "--bundle", str(bundle),
                        "--out", str(out), "--force", "--jobs", "2"],
                       capture_output=True, text=True, env=env, timeout=300, cwd=out.parent)  # not the checkout: -c puts the cwd first on sys.path
    assert r.returncode in (0, 1), r.stderr[-2000:]  # 1: the invalid toy model may be accepted
    line = [x for x in r.stderr.splitlines() if x.startswith("RUN_GROWTH_KIB ")]
    assert line, r.stderr[-2000:]
    assert (out / "results.json").exists() and (out / "report.html").exists()
    return float(line[-1].split()[1])


def growth_per_case(tmp: Path, n: int = N) -> float:
    """KiB a case by which the parent's resident memory grows over the running of the cases
    (:func:`conformance.execute._run`: from the index of the bundle to the last result), between a
    run of ``n`` and of ``4n`` cases."""
    small = _run_growth_kib(_bundle(n, tmp / "b1"), tmp / "r1")
    large = _run_growth_kib(_bundle(4 * n, tmp / "b4"), tmp / "r4")
    return (large - small) / (3 * n)


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the CLI subprocess is measured on Linux")
def test_parent_memory_per_case_stays_small(tmp_path):
    pytest.importorskip("onnxruntime")
    per_case = growth_per_case(tmp_path)
    assert per_case < BOUND_KIB, f"the parent grows {per_case:.2f} KiB a case while running (bound {BOUND_KIB})"


if __name__ == "__main__":
    import tempfile

    sys.path.insert(0, str(Path(__file__).parent))
    with tempfile.TemporaryDirectory() as d:
        print(f"{growth_per_case(Path(d), int(sys.argv[1]) if len(sys.argv) > 1 else N):.2f} KiB a case")
