"""NegativeLogLikelihoodLoss (ai.onnx 12, 13, 22) and SoftmaxCrossEntropyLoss (12, 13) as
entries of the operator table (family ``shaped``).

Oracles, variants and bounds: :mod:`conformance.reference.losses`.  What the entries add to
the schema:

* the shape table: (N, C), (N, C, d1), (N, C, d1, d2), (N, C, d1, d2, d3); one long
  accumulation (1, 3, 1024) for the sums; an empty batch (N = 0); a (1, 4, 7) pattern whose
  targets are all ``ignore_index`` where the case has one (the ``0 / 0`` mean);
* attribute states: ``reduction`` none / sum / mean written out (and absent: mean), crossed
  with ``ignore_index`` absent, a present class (1), and negative (-1, -100); targets are
  drawn in ``[0, C)`` with about a quarter equal to ``ignore_index`` where the case has one
  (at least one), so the ignored elements always matter;
* ``weight``/``weights`` present and absent (the engine's optional-input cycle), drawn in
  [0.25, 2] (a positive divisor); SoftmaxCrossEntropyLoss's ``log_prob`` present and absent;
* numerics: ``normal`` (scores/log-probabilities of magnitude ~2), ``wide`` (magnitude ~30:
  cancellation in the sums), ``large`` (SoftmaxCrossEntropyLoss: scores near 100 (float16),
  200 (bfloat16), 1000 (float, double): ``exp`` without the max shift overflows;
  NegativeLogLikelihoodLoss: log-probabilities near -100, where the float16 sum of a long row
  overflows without float32 accumulation);
* contested: ``mean`` with ``ignore_index`` (NegativeLogLikelihoodLoss: the text's
  ``mean(loss)`` and ``sum(weight[target])`` "for all samples" count the ignored targets, its
  reduction attribute "the sum of applied weights" does not; SoftmaxCrossEntropyLoss: the text
  counts them; the function bodies and PyTorch, which the texts cite, divide by the non-ignored
  weights: the oracle follows the bodies); SoftmaxCrossEntropyLoss's ``mean`` with ``weights``
  (the formula's ``ReduceSum(L) / ReduceSum(W)`` against the attribute's "divided by the number
  of elements in the output"; the oracle takes the formula);
* tolerance derived (:func:`conformance.reference.losses.bound` plus the legitimate variants'
  spread, docs/tolerance.md "Losses");
* error cases: a target whose shape is not the input's without C, a target of the wrong rank,
  a weight not of length C.  A target outside ``[0, C)`` that is not ``ignore_index`` is
  undefined by the text (no case).
"""

from __future__ import annotations

import numpy as np

from ..reference import losses as ref
from ..tolerance import derive_tolerance
from . import values as V
from .engine import register_entries
from .entry import Attrs, Entry, Err, Shape

NLL, SCE = ref.OPS
#: formal names per operator: (scores/input, target/labels, weight/weights, output)
NAMES = {NLL: ("input", "target", "weight", "loss"), SCE: ("scores", "labels", "weights", "output")}
LARGE = {"float16": 100.0, "bfloat16": 200.0, "float": 1000.0, "double": 1000.0}
#: the all-ignored pattern's target shape (its marker)
ALL_IGNORED = (1, 7)


def _shapes(op: str) -> tuple[Shape, ...]:
    x, t, w, _ = NAMES[op]
    dims = {"N": (1, 3), "C": (2, 5), "D": (1, 3), "E": (1, 3), "F": (1, 2)}

    def s(name, xt, tt, **kw):
        return Shape(name, {x: xt, t: tt, w: xt[1]}, dims={**dims, **kw.pop("dims", {})}, **kw)

    return (
        s("NC", "NC", "N"),
        s("NCd1", "NCD", "ND"),
        s("NCd1d2", "NCDE", "NDE"),
        s("NCd1d2d3", "NCDEF", "NDEF"),
        s("long/1x3x1024", "13L", "1L", dims={"L": (1024, 1024)}, numerics=("normal", "wide", "large")),
        s("all-ignored/1x4x7", "147", "17"),
        s("empty/0xC", "0C", "0", dims={"C": (3, 3)}, cycle=False),
    )


def _states() -> tuple[Attrs, ...]:
    out = []
    for red in ("none", "sum", "mean", None):
        for ii in (None, 1, -1, -100):
            if red is None and ii is None:
                continue  # both absent: the engine's own state
            v = {k: val for k, val in (("reduction", red), ("ignore_index", ii)) if val is not None}
            out.append(Attrs(v, tag="/".join(f"{k}={val}" for k, val in v.items())))
    return tuple(out)


def _target(op):
    def draw(rng, ctx):
        xs, ts = ctx.shapes[NAMES[op][0]], ctx.shapes[NAMES[op][1]]
        c = xs[1]
        t = rng.integers(0, c, size=ts).astype(object)
        ii = ctx.attrs.get("ignore_index")
        if ii is not None and t.size:
            if tuple(ts) == ALL_IGNORED:
                t[...] = int(ii)
            else:
                m = rng.random(ts) < 0.25
                m.reshape(-1)[int(rng.integers(0, t.size))] = True
                t[m] = int(ii)
        return t
    return draw


def _numerics(kind):
    def fn(rng, ctx, shapes):
        op = ctx.op
        t = ctx.types[NAMES[op][0]]
        if kind == "normal":
            x = rng.normal(0.0, 2.0, size=shapes[0])
        elif kind == "wide":
            x = rng.normal(0.0, 30.0, size=shapes[0])
        elif op == SCE:
            x = LARGE[t] + rng.normal(0.0, 3.0, size=shapes[0])
        else:
            x = -100.0 + rng.normal(0.0, 3.0, size=shapes[0])
        if op == NLL and kind == "normal":
            x = -np.abs(x)  # log-probabilities
        out = [V.representable(x, t), np.zeros(shapes[1], dtype=object)]
        if len(shapes) > 2:
            out.append(V.representable(rng.uniform(0.25, 2.0, size=shapes[2]), t))
        return out
    return fn


def _oracle(ctx, x, target, weight=None, ignore_index=None, reduction="mean"):
    if ctx.op == NLL:
        return ref.nll(x, target, weight, ignore_index, reduction)
    out, logp = ref.sce(x, target, weight, ignore_index, reduction)
    return (out, logp) if "log_prob" in ctx.outputs else out


def _tolerance(ctx, inputs, attrs, outputs):
    op = ctx.op
    x, t, w = inputs[0], inputs[1], inputs[2] if len(inputs) > 2 else None
    tn = ctx.types[NAMES[op][0]]
    ii, red = attrs.get("ignore_index"), attrs.get("reduction", "mean")
    b = ref.bound(op, x, t, w, ii, red, tn)
    e = V.elem(ctx.out_types[NAMES[op][3]])
    vs = {f"{np.dtype(acc).name}/{order}": ref.variant(op, x, t, w, ii, red, acc, order)
          for acc in {ref.compute_type(tn), np.float64} for order in ("forward", "reverse", "pairwise")}
    out = {NAMES[op][3]: derive_tolerance(outputs[NAMES[op][3]], {k: v[0] for k, v in vs.items()}, e,
                                          propagated=b["loss"])}
    if "log_prob" in outputs:
        out["log_prob"] = derive_tolerance(outputs["log_prob"], {k: v[1] for k, v in vs.items()}, e,
                                           propagated=b["log_prob"])
    return out


def _contested(ctx, attrs) -> str | None:
    mean = attrs.get("reduction", "mean") == "mean"
    if mean and attrs.get("ignore_index") is not None:
        if ctx.op == NLL:
            return ("reduction 'mean' with ignore_index: the text's formulas (mean(loss); sum(weight[target]) 'for "
                    "all samples') count the ignored targets, its reduction attribute ('divided by the sum of applied "
                    "weights') and the function body (and PyTorch, which the text cites) do not")
        return ("reduction 'mean' with ignore_index: the text (ReduceMean(L); the attribute: 'divided by the number "
                "of elements in the output') counts the ignored labels, the function body (and PyTorch) does not")
    if mean and ctx.op == SCE and "weights" in ctx.types:
        return ("reduction 'mean' with weights: the text's formula divides by ReduceSum(W), the reduction attribute "
                "'by the number of elements in the output'")
    return None


def _errors(op) -> tuple[Err, ...]:
    x, t, w, _ = NAMES[op]
    zero = {t: 0}
    return (
        Err(f"{t} must have the shape of {x} without its class axis (N, d1..dk)", "target-shape",
            shapes=((2, 3, 4), (2, 5)), values=zero),
        Err(f"{t} must have rank {x}'s rank - 1", "target-rank", shapes=((2, 3), (2, 1)), values=zero),
        Err(f"{w} must be a 1-D tensor of length C", "weight-length", shapes=((2, 3), (2,), (4,)),
            values={t: 0, w: 1.0}),
    )


def _entry(op: str) -> Entry:
    x, t, w, _ = NAMES[op]
    return Entry(op, _oracle, family="shaped", shapes=_shapes(op), attrs=_states(), tolerance=_tolerance,
                 structural={t: _target(op)}, contested=_contested, errors=_errors(op), per_type=16,
                 numerics_classes=lambda tn: ("normal", "wide", "large"),
                 float_numerics={k: _numerics(k) for k in ("normal", "wide", "large")},
                 nan=False, inf=False,
                 notes={13: "bfloat16 (SoftmaxCrossEntropyLoss)", 22: "bfloat16 (NegativeLogLikelihoodLoss)"})


ENTRIES = tuple(_entry(op) for op in ref.OPS)
register_entries(ENTRIES, family="losses")
