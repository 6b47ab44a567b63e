"""Synthetic results documents, for the report's tests and its benchmark (bench/bench_report.py).

:func:`synthetic_results` builds a results document (``onnx-conformance-results/1``) of
any size whose records look like real ones: ids with a content-hash suffix, a dozen
tags per case, one to five outputs with tolerance records, outcomes in realistic
proportions, messages with numbers in them (mostly distinct), and a few hostile
messages (markup, quotes, control characters).

``ops="table"`` (or :func:`table_ops`) uses the real operator table
(:func:`conformance.registry.available_ops`, every operator, each in its family from
:func:`conformance.registry.family`), so a report of the whole suite can be built
without running it; the document then carries ``suite.families`` as a real run's does.
"""

from __future__ import annotations

import hashlib
import random

from conformance.runner import OUTCOMES

OPS = ("LayerNormalization", "BatchNormalization", "GroupNormalization", "InstanceNormalization", "Softmax",
       "LogSoftmax", "ReduceMean", "MatMul", "Gemm", "Conv", "RMSNormalization", "Gelu")
DTYPES = ("double", "float", "float16", "bfloat16")
OUTPUTS = ("Y", "Y,Mean", "Y,InvStdDev", "Y,Mean,InvStdDev", "Y,running_mean,running_var",
           "Y,running_mean,running_var,saved_mean,saved_var")
NUMERICS = ("normal", "large-offset", "constant-rows", "tiny-variance", "near-limits", "special-values")
#: Outcome weights (pass dominates, as in a decent runtime).
WEIGHTS = {"pass": 80, "fail": 5, "error": 3, "unsupported": 8, "crash": 1, "timeout": 0.5, "xfail": 1,
           "xpass": 0.2, "skip": 1.3}
HOSTILE = ("<script>alert(1)</script>", "</script><script>alert(2)</script>", "it's \"quoted\" & <b>bold</b>",
           "control \x1b[31m chars \x00 and ]]> end", "<!-- comment --> <img src=x onerror=alert(3)>")
VARIANTS = ["body-pairwise-div-castbycast", "text-pairwise-mul-castbycast", "sequential-mul-onecast",
            "reverse-div-castbycast", "welford-mul-onecast", "recip-rsqrt-fused", "wideacc-mul-castbycast"]


def _ratio(rng: random.Random, dtype: str) -> float:
    if rng.random() < 0.55:
        return 0.0
    lo = {"double": -9, "float": -6, "float16": -3, "bfloat16": -2.5}[dtype]
    return min(1.0, 10 ** rng.uniform(lo, 0))


def table_ops() -> tuple[list[str], dict[str, str]]:
    """The real operator table: ``(operator names, {op type: family})`` from the registry."""
    from conformance import registry

    names = registry.available_ops()
    fams = {}
    for name in names:
        domain, _, op = name.rpartition(":")
        fams[op] = registry.family(op, domain)
    return names, fams


def synthetic_case(rng: random.Random, k: int, ops=OPS) -> dict:
    """One synthetic case record (see :mod:`conformance.results`); operator ``ops[k % len(ops)]``
    (a ``domain:Op`` name gives the record that domain)."""
    domain, _, op = ops[k % len(ops)].rpartition(":")
    dtype = rng.choice(DTYPES)
    outcome = rng.choices(list(WEIGHTS), weights=list(WEIGHTS.values()))[0]
    rank = rng.randint(1, 5)
    axis = rng.randint(-rank, rank - 1)
    opset = rng.choice((17, 18, 21, 23, 26))
    outs = rng.choice(OUTPUTS)
    training = rng.choice((0, 1))
    numerics = rng.choice(NUMERICS)
    tags = {"dtype": dtype, "rank": rank, "axis": axis, "axis_sign": "neg" if axis < 0 else "pos",
            "opset": opset, "outputs": outs, "params": rng.choice(("inputs", "initializers")),
            "numerics": numerics, "epsilon": rng.choice(("default", "tiny", "large")),
            "bias": rng.choice(("present", "absent")), "stash_type": rng.choice((1, 16)), "datasets": 1}
    if "running_mean" in outs:
        tags["training_mode"] = training
    label = f"{dtype}/r{rank}/axis={axis}/outs={outs}/{numerics}"
    h = hashlib.sha256(f"{k}/{label}".encode()).hexdigest()[:6]
    cid = f"{op}-{opset}/{label}/{h}"
    message, phase, outputs = "", "compare", []
    names = outs.split(",")
    if outcome in ("pass", "fail", "xfail", "xpass"):
        bad = rng.randrange(len(names)) if outcome in ("fail", "xfail") else -1
        for j, name in enumerate(names):
            ratio = _ratio(rng, dtype) if j != bad else 10 ** rng.uniform(0.1, 4)
            atol = 10 ** rng.uniform(-8, -1)
            expected = rng.uniform(-100, 100)
            err = ratio * atol
            outputs.append({
                "name": name, "passed": j != bad,
                "reason": "" if j != bad else f"{rng.randint(1, 64)} element(s) out of tolerance; worst at [{j}]: "
                                              f"expected {expected!r}, got {expected + err!r}",
                "max_abs_err": err, "ratio": ratio, "worst_index": [rng.randint(0, 7) for _ in range(rank)],
                "expected_at_worst": expected, "actual_at_worst": expected + err,
                "tolerance": {"atol": atol, "rtol": 2.0 ** -rng.randint(8, 23), "spread": atol / 4,
                              "variants": VARIANTS, "exact": False},
            })
        if bad >= 0:
            message = f"{names[bad]}: {outputs[bad]['reason']} ({outputs[bad]['ratio']:.3g}x)"
    elif outcome == "error":
        phase = rng.choice(("prepare", "run"))
        message = f"{phase}: Fail: [ONNXRuntimeError] : 1 : FAIL : Node ({op}_{k}) shape mismatch {rng.randint(1, 10**6)}"
    elif outcome == "unsupported":
        phase = "prepare"
        message = f"prepare: NotImplemented: Could not find an implementation for {op}({opset}) node with name ''"
    elif outcome == "crash":
        phase, message = "run", "backend process killed by SIGSEGV"
    elif outcome == "timeout":
        phase, message = "run", "no result within 120 s"
    else:
        phase, message = "", "skipped: not selected"
    if k % 997 == 0:
        message = HOSTILE[(k // 997) % len(HOSTILE)] + " " + message
    return {"id": cid, "op": op, "domain": domain, "since_version": opset, "opset": opset, "tags": tags,
            "outcome": outcome, "message": message, "phase": phase, "outputs": outputs, "expect_error": None,
            "duration_s": round(rng.uniform(0.0005, 0.05), 6)}


def synthetic_results(n: int, seed: int = 0, ops=OPS, families: dict[str, str] | None = None) -> dict:
    """A results document with ``n`` synthetic cases (deterministic for a given ``seed``).

    ``ops``: operator names, cases spread round-robin over them; ``"table"`` for the real
    operator table (:func:`table_ops`, which also gives ``families``).  ``families``
    (``{op type: family}``) is written to ``suite.families`` when given; without it the
    document has no such key, as results written before it existed.
    """
    if isinstance(ops, str) and ops == "table":
        ops, table_families = table_ops()
        families = table_families if families is None else families
    ops = tuple(ops)
    rng = random.Random(seed)
    cases = [synthetic_case(rng, k, ops) for k in range(n)]
    summary = {o: 0 for o in OUTCOMES}
    for c in cases:
        summary[c["outcome"]] += 1
    h = hashlib.sha256("\n".join(c["id"] for c in cases).encode()).hexdigest()
    return {
        "format": "onnx-conformance-results/1",
        "suite": {"seed": seed, "ops": list(ops), "generators": {op: "synthetic@1" for op in ops},
                  "versions": {"onnx-conformance": "0.1.0", "onnx": "1.17.0", "numpy": "2.0.0"},
                  "content_hash": h, "n_cases": n, "source": "synthetic",
                  **({"families": dict(sorted(families.items()))} if families is not None else {})},
        "backend": {"backend": "synthetic", "synthetic": "1.0", "providers": ["CPUExecutionProvider"]},
        "run": {"backend_spec": "synthetic.backend:Backend", "backend_options": {"device": "CPU"}, "bundle": None,
                "ops": list(ops), "seed": seed, "match": None, "argv": ["run", "--backend", "synthetic.backend:Backend"]},
        "host": {"python": "3.11.7", "platform": "Linux", "machine": "x86_64"},
        "summary": summary,
        "duration_s": round(sum(c["duration_s"] for c in cases), 3),
        "cases": cases,
    }
