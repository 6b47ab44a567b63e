"""The recurrent operators as entries of the operator table (family ``shaped``): LSTM (1, 7, 14,
22), GRU (1, 3, 7, 14, 22) and RNN (1, 7, 14, 22).

Oracle, error bound and legitimate kernels: :mod:`conformance.reference.recurrent` (one
recurrence evaluated in float64, as a running error bound, and as numpy kernels).

**Shape tables** (hidden sizes 1 to 3, sequences of 1 to 5 steps, so the bound stays
meaningful): directions forward (``direction`` absent, or the explicit default), reverse and
bidirectional; sequence_lens shorter than the sequence (batch 0 runs the whole sequence, the
others fewer steps: Y is zero past a batch's length, Y_h / Y_c are taken at its last valid step,
the reverse direction reverses only the valid part) in every direction; an empty batch
(bidirectional: Y ``(S, 2, 0, H)``); peepholes (LSTM); clip;
input_forget (LSTM); linear_before_reset (GRU 3+); every activation name of the text, with
alpha and beta, and the ONNX operators' default alpha/beta; layout 1 (14+); output_sequence
(version 1).  The optional inputs (B, sequence_lens, initial_h, initial_c, P) cycle over
their present/absent sets and the outputs over every non-empty set of Y, Y_h (, Y_c).

**Ambiguities generated only where the readings agree**: LSTM's clip "is applied to the input
of activations" -- whether the cell state Ct itself is clipped or only h's argument (or
neither) is open, so the clip patterns keep |Ct| below the threshold (clip 3, at most 2 steps,
|initial_c| <= 1: |Ct| <= 0.953 |Ct-1| + 0.948 < 3) while the gates' pre-activations exceed
it.  activation_alpha / activation_beta "are consumed in the order of activation functions":
read as consumed by the activations that take them, or indexed by position, the two agree when
the activations that take alpha (beta) come first; every list here is so.  A bidirectional op's
activation list always has 2 x the per-direction count (never the ambiguous 3-entry list).
hidden_size is always written (the text does not say what its absence means; onnxruntime
requires it).

**Contested**: GRU-1's schema default direction is ``"foward"`` (a typo of the text's
"forward"); RNN's schema default activations ``["Tanh", "Tanh"]`` written into a forward model
(the text: one activation per direction).  The oracle reads both as the text means.

**Tolerance**: :func:`conformance.reference.recurrent.tolerance_of` of the running error bound
(:class:`conformance.reference.recurrent.Bound`, docs/tolerance.md "Recurrent networks").

**Error cases**: hidden_size disagreeing with W and R, a direction count that does not match
W's first dimension, an unknown activation name, an unknown direction.
"""

from __future__ import annotations

import itertools

import numpy as np

from ..reference import recurrent as ref
from . import values as V
from .engine import register_entries
from .entry import Entry, Err, Shape

OPTIONAL = {"LSTM": ("B", "sequence_lens", "initial_h", "initial_c", "P"),
            "GRU": ("B", "sequence_lens", "initial_h"), "RNN": ("B", "sequence_lens", "initial_h")}


# ----------------------------------------------------------------------------- numerics
def _u(rng, shape, t, lo, hi):
    return V.representable(rng.uniform(lo, hi, size=shape), t)


def _draw(rng, ctx, shapes, xs: float, ws: float):
    t = ctx.types["X"]
    names = [n for n in ("X", "W", "R", "B", "sequence_lens", "initial_h", "initial_c", "P") if n in ctx.types]
    scale = {"X": xs, "W": ws, "R": 0.5, "B": 1.0, "initial_h": 1.0, "initial_c": 1.0, "P": 1.0}
    out = []
    for n, s in zip(names, shapes):
        if n == "sequence_lens":
            out.append(np.full(s, 1, dtype=object))  # replaced by the structural rule
        else:
            out.append(_u(rng, s, t, -scale[n], scale[n]))
    return out


def normal(rng, ctx, shapes):
    """Numerics class ``normal``: X in [-2, 2], W, B, initial states and P in [-1, 1], R in
    [-0.5, 0.5] (the recurrence amplifies the error bound by at most ``|R|``'s row sums per step)."""
    return _draw(rng, ctx, shapes, 2.0, 1.0)


def saturating(rng, ctx, shapes):
    """Numerics class ``saturating``: X in [-4, 4], W in [-2, 2]: pre-activations beyond the clip
    threshold and sigmoids near 0 and 1."""
    return _draw(rng, ctx, shapes, 4.0, 2.0)


CLASSES = {"normal": normal, "saturating": saturating}


def _sequence_lens(rng, ctx):
    """sequence_lens: batch 0 the whole sequence, the others drawn in ``[1, S - 1]`` (``[1, S]``
    for a batch of one)."""
    xs = ctx.shapes["X"]
    layout = int(ctx.attrs.get("layout", 0) or 0)
    s, n = (xs[1], xs[0]) if layout else (xs[0], xs[1])
    if n == 0:
        return np.zeros((0,), dtype=object)
    if n == 1:
        return np.array([int(rng.integers(1, s + 1))], dtype=object)
    lens = [s] + [int(rng.integers(1, max(1, s - 1) + 1)) for _ in range(n - 1)]
    return np.array(lens, dtype=object)


# ----------------------------------------------------------------------------- oracle, tolerance
def _oracle(op):
    def oracle(ctx, x, w, r, b=None, sequence_lens=None, initial_h=None, *rest, **attrs):
        """Float64 recurrence (:func:`conformance.reference.recurrent.oracle`): every output in
        schema order."""
        initial_c = rest[0] if op == "LSTM" and rest else None
        p = rest[1] if op == "LSTM" and len(rest) > 1 else None
        names = ("Y", "Y_h", "Y_c") if op == "LSTM" else ("Y", "Y_h")
        out = ref.oracle(op, (x, w, r, b, sequence_lens, initial_h, initial_c, p), attrs, names)
        return tuple(out[n] for n in names)

    oracle.__name__ = oracle.__qualname__ = f"{op.lower()}_oracle"
    return oracle


def _tolerance(op):
    def tolerance(ctx, inputs, attrs, outputs):
        """The running error bound of every present output
        (:func:`conformance.reference.recurrent.tolerance_of`)."""
        ins = list(inputs) + [None] * (8 - len(inputs))
        if op != "LSTM":
            ins = ins[:6] + [None, None]
        t = ctx.types["X"]
        bd = ref.bounds(op, t, ins, attrs, tuple(outputs))
        return {n: ref.tolerance_of(t, *bd[n]) for n in outputs}

    tolerance.__name__ = tolerance.__qualname__ = f"{op.lower()}_tolerance"
    return tolerance


def _outputs_rule(op):
    def rule(version, attrs, outputs) -> bool:
        """At least one output (a node with none computes nothing); GRU-1's Y_h is required."""
        return bool(outputs) or (op == "GRU" and version == 1)

    return rule


def _contested(op):
    def contested(ctx, attrs) -> str | None:
        given = ctx.given
        if op == "GRU" and given.get("direction") == "foward":
            return "GRU-1's schema default direction is 'foward', a typo of the text's 'forward'"
        acts = given.get("activations")
        if op == "RNN" and acts is not None and list(acts) == ["Tanh", "Tanh"] and \
                given.get("direction", "forward") != "bidirectional":
            return ("RNN's schema default activations ['Tanh', 'Tanh'] written into a one-direction model (the text: "
                    "'One (or two if bidirectional) activation function')")
        return None

    return contested


# ----------------------------------------------------------------------------- shape tables
def _sh(op, name, hs, nd, attrs=None, *, layout=0, s=(1, 4), n=(1, 3), i=(1, 3), need=(), since=0, until=10**6,
        numerics=()):
    """A pattern: hidden size ``hs``, ``nd`` directions, the optional inputs ``need`` always present."""
    g = len(ref.GATES[op])
    state = "NDH" if layout else "DNH"
    inputs = {"X": "NSI" if layout else "SNI", "W": "DGI", "R": "DGH", "B": "DK", "sequence_lens": "N",
              "initial_h": state}
    if op == "LSTM":
        inputs.update(initial_c=state, P="DQ")
    a = {"hidden_size": hs, **(attrs or {})}
    if layout:
        a["layout"] = 1
    dims = {"S": s, "N": n, "I": i, "H": (hs, hs), "G": (g * hs, g * hs), "K": (2 * g * hs, 2 * g * hs),
            "Q": (3 * hs, 3 * hs), "D": (nd, nd)}
    if name.startswith("acts/") and not numerics:
        # unbounded activations: saturating data would grow the state and the bound.  The gates
        # (LSTM's f, GRU's f) are always bounded activations where alpha is drawn: an unbounded
        # gate (ThresholdedRelu as z) multiplies the state, and its jump at alpha with it
        numerics = ("normal",)
    opt = None
    if need:
        names = OPTIONAL[op]
        sets = [c for k in range(len(names) + 1) for c in itertools.combinations(names, k) if set(need) <= set(c)]
        opt = tuple(sets)
    return Shape(name, inputs, a, dims=dims, optional=opt, since=since, until=until, numerics=numerics)


BI = {"direction": "bidirectional"}
REV = {"direction": "reverse"}


def _common(op):
    """Patterns every operator has."""
    return [
        _sh(op, "forward", 2, 1),
        _sh(op, "forward/H=1", 1, 1, s=(1, 5)),
        _sh(op, "reverse", 2, 1, REV),
        _sh(op, "bidirectional", 2, 2, BI),
        _sh(op, "bidirectional/H=3", 3, 2, BI, s=(1, 3)),
        _sh(op, "seq_lens/forward", 2, 1, s=(3, 5), n=(2, 3), need=("sequence_lens",)),
        _sh(op, "seq_lens/reverse", 2, 1, REV, s=(3, 5), n=(2, 3), need=("sequence_lens",)),
        _sh(op, "seq_lens/bidirectional", 2, 2, BI, s=(3, 5), n=(2, 3), need=("sequence_lens", "initial_h")),
        _sh(op, "seq_lens/batch=1", 2, 2, BI, s=(2, 4), n=(1, 1), need=("sequence_lens",)),
        _sh(op, "layout=1", 2, 1, layout=1, since=14),
        _sh(op, "layout=1/bidirectional/seq_lens", 2, 2, BI, layout=1, s=(3, 5), n=(2, 3), since=14,
            need=("sequence_lens", "initial_h")),
        _sh(op, "layout=1/reverse/seq_lens", 2, 1, REV, layout=1, s=(3, 5), n=(2, 3), since=14,
            need=("sequence_lens",)),
        _sh(op, "output_sequence=1", 2, 1, {"output_sequence": 1}, until=6),
        _sh(op, "zero-batch", 2, 2, BI, n=(0, 0)),
    ]


def _lstm_shapes():
    op = "LSTM"
    hsig = {"activations": ["HardSigmoid", "ScaledTanh", "Affine"], "activation_alpha": [0.3, 0.8, 0.6],
            "activation_beta": [0.45, 1.3, 0.1]}
    return tuple(_common(op) + [
        _sh(op, "peepholes", 2, 1, need=("P",)),
        _sh(op, "peepholes/initial_c", 2, 1, need=("P", "initial_c")),
        _sh(op, "peepholes/bidirectional/seq_lens", 2, 2, BI, s=(3, 5), n=(2, 3),
            need=("P", "sequence_lens", "initial_c")),
        _sh(op, "clip", 2, 1, {"clip": 3.0}, s=(1, 2), numerics=("saturating",)),
        _sh(op, "clip/bidirectional/peepholes", 2, 2, {"clip": 3.0, **BI}, s=(1, 2), numerics=("saturating",),
            need=("P",)),
        _sh(op, "input_forget", 2, 1, {"input_forget": 1}),
        _sh(op, "input_forget/reverse/peepholes", 2, 1, {"input_forget": 1, **REV}, need=("P", "initial_c")),
        _sh(op, "acts/hardsigmoid-scaledtanh-affine", 2, 1, hsig, s=(1, 3)),
        _sh(op, "acts/leakyrelu-elu-softsign", 2, 1, {"activations": ["LeakyRelu", "Elu", "Softsign"],
                                                     "activation_alpha": [0.1, 0.7]}, s=(1, 3)),
        _sh(op, "acts/hardsigmoid-thresholdedrelu-softplus", 2, 1,
            {"activations": ["HardSigmoid", "ThresholdedRelu", "Softplus"], "activation_alpha": [0.3, 0.4],
             "activation_beta": [0.45]}, s=(1, 3)),
        _sh(op, "acts/sigmoid-relu-softsign/reverse", 2, 1,
            {"activations": ["Sigmoid", "Relu", "Softsign"], **REV}, s=(1, 3)),
        _sh(op, "acts/onnx-default-alpha", 2, 1, {"activations": ["HardSigmoid", "Elu", "LeakyRelu"]}, s=(1, 3)),
        _sh(op, "acts/bidirectional", 2, 2, {**BI, "activations": hsig["activations"] + ["Sigmoid", "Tanh", "Tanh"],
                                             "activation_alpha": hsig["activation_alpha"],
                                             "activation_beta": hsig["activation_beta"]}, s=(1, 3)),
    ])


def _gru_shapes():
    op = "GRU"
    lbr = {"linear_before_reset": 1}
    return tuple(_common(op) + [
        _sh(op, "linear_before_reset", 2, 1, lbr, since=3, need=("B", "initial_h")),
        _sh(op, "linear_before_reset/H=3", 3, 1, lbr, since=3, s=(2, 4), need=("B",)),
        _sh(op, "linear_before_reset/bidirectional/seq_lens", 2, 2, {**lbr, **BI}, since=3, s=(3, 5), n=(2, 3),
            need=("sequence_lens", "B")),
        _sh(op, "linear_before_reset/clip", 2, 1, {**lbr, "clip": 1.0}, since=3, numerics=("saturating",),
            need=("B",)),
        _sh(op, "clip", 2, 1, {"clip": 1.0}, numerics=("saturating",)),
        _sh(op, "clip/bidirectional", 2, 2, {"clip": 1.0, **BI}, numerics=("saturating",)),
        _sh(op, "acts/hardsigmoid-scaledtanh", 2, 1, {"activations": ["HardSigmoid", "ScaledTanh"],
                                                     "activation_alpha": [0.3, 0.8], "activation_beta": [0.45, 1.3]},
            s=(1, 3)),
        _sh(op, "acts/leakyrelu-softsign", 2, 1, {"activations": ["LeakyRelu", "Softsign"],
                                                 "activation_alpha": [0.1]}, s=(1, 3)),
        _sh(op, "acts/hardsigmoid-thresholdedrelu", 2, 1, {"activations": ["HardSigmoid", "ThresholdedRelu"],
                                                          "activation_alpha": [0.3, 0.3], "activation_beta": [0.45]},
            s=(1, 3)),
        _sh(op, "acts/softsign-softplus", 2, 1, {"activations": ["Softsign", "Softplus"]}, s=(1, 3)),
        _sh(op, "acts/affine-elu", 2, 1, {"activations": ["Affine", "Elu"], "activation_alpha": [0.4, 0.8],
                                         "activation_beta": [0.5]}, s=(1, 3)),
        _sh(op, "acts/sigmoid-relu", 2, 1, {"activations": ["Sigmoid", "Relu"]}, s=(1, 3)),
        _sh(op, "acts/onnx-default-alpha", 2, 1, {"activations": ["HardSigmoid", "LeakyRelu"]}, s=(1, 3)),
        _sh(op, "acts/bidirectional", 2, 2, {**BI, "activations": ["HardSigmoid", "ScaledTanh", "Sigmoid", "Tanh"],
                                             "activation_alpha": [0.3, 0.8], "activation_beta": [0.45, 1.3]},
            s=(1, 3)),
    ])


def _rnn_shapes():
    op = "RNN"
    acts = [("Relu", None, None), ("Sigmoid", None, None), ("Tanh", None, None), ("Affine", 0.7, 0.2),
            ("LeakyRelu", 0.1, None), ("ThresholdedRelu", 0.3, None), ("ScaledTanh", 0.8, 1.3),
            ("HardSigmoid", 0.3, 0.45), ("Elu", 0.8, None), ("Softsign", None, None), ("Softplus", None, None)]
    out = _common(op) + [
        _sh(op, "clip", 2, 1, {"clip": 1.0}, numerics=("saturating",)),
        _sh(op, "clip/bidirectional/seq_lens", 2, 2, {"clip": 1.0, **BI}, s=(3, 5), n=(2, 3),
            numerics=("saturating",), need=("sequence_lens",)),
        _sh(op, "acts/onnx-default-alpha", 2, 1, {"activations": ["LeakyRelu"]}, s=(1, 3)),
        _sh(op, "acts/bidirectional", 2, 2, {**BI, "activations": ["ScaledTanh", "Relu"],
                                             "activation_alpha": [0.8], "activation_beta": [1.3]}, s=(1, 3)),
    ]
    for name, a, b in acts:
        at = {"activations": [name]}
        if a is not None:
            at["activation_alpha"] = [a]
        if b is not None:
            at["activation_beta"] = [b]
        out.append(_sh(op, f"acts/{name.lower()}", 2, 1, at, s=(1, 3)))
    return tuple(out)


# ----------------------------------------------------------------------------- errors
def _errors(op):
    g = len(ref.GATES[op])
    x, w, r = (2, 1, 3), (1, g * 2, 3), (1, g * 2, 2)
    bad_act = {"LSTM": ["Sigmoid", "Tanh", "Swish"], "GRU": ["Sigmoid", "Swish"], "RNN": ["Swish"]}[op]
    return (
        Err(f"hidden_size 3 disagrees with W ({g} x 2 rows) and R (hidden 2): W is "
            "[num_directions, gates*hidden_size, input_size]", "hidden_size-mismatch", {"hidden_size": 3},
            (x, w, r)),
        Err("direction bidirectional needs num_directions = 2 in W's and R's first dimension, not 1",
            "num_directions-mismatch", {"hidden_size": 2, "direction": "bidirectional"}, (x, w, r)),
        Err("'The activation functions must be one of the activation functions specified above': Swish",
            "unknown-activation", {"hidden_size": 2, "activations": bad_act}, (x, w, r)),
        Err("direction 'Must be one of forward (default), reverse, or bidirectional': both", "unknown-direction",
            {"hidden_size": 2, "direction": "both"}, (x, w, r)),
    )


def _entry(op, shapes, notes):
    return Entry(
        op, _oracle(op), family="shaped", shapes=shapes, tolerance=_tolerance(op), float_numerics=CLASSES,
        numerics_classes=lambda t: ("normal", "saturating"), per_type=len(shapes), errors=_errors(op),
        outputs_rule=_outputs_rule(op), structural={"sequence_lens": _sequence_lens}, contested=_contested(op),
        notes=notes, outputs_per_type=True,
    )


LSTM_SHAPES = _lstm_shapes()
GRU_SHAPES = _gru_shapes()
RNN_SHAPES = _rnn_shapes()
LSTM = _entry("LSTM", LSTM_SHAPES, {7: "output_sequence removed (Y optional)", 14: "layout", 22: "bfloat16"})
GRU = _entry("GRU", GRU_SHAPES, {3: "linear_before_reset", 7: "output_sequence removed", 14: "layout",
                                 22: "bfloat16"})
RNN = _entry("RNN", RNN_SHAPES, {7: "output_sequence removed", 14: "layout", 22: "bfloat16"})

ENTRIES = (LSTM, GRU, RNN)
register_entries(ENTRIES, family="recurrent")
