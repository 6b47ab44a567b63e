"""onnxruntime's contrib recurrent operators com.microsoft ``AttnLSTM`` (1) and
``DynamicQuantizeLSTM`` (1) as entries of the operator table (family ``shaped``,
onnxruntime-defined: their text is onnxruntime's ContribOperators.md, the schemas' docs).

**DynamicQuantizeLSTM** has no operator description, only its inputs': W
``[D, input_size, 4*hidden_size]`` and R ``[D, hidden_size, 4*hidden_size]`` (transposed
against LSTM's), int8 or uint8, with scale and zero point ``[D]`` (per tensor) or ``[D, 4H]``
(per channel, the 4H axis); the rest is LSTM's.  The oracle is LSTM
(:mod:`conformance.reference.recurrent`) on ``(W - zero_point) * scale``.  "Dynamic
quantize" says the kernel may quantize its float operands (X, the hidden state) at run time,
but not how (granularity, uint8 or int8): the tolerance accepts any 8-bit dynamic
quantization of them, per tensor or finer, and none
(:func:`conformance.reference.contrib_recurrent.dq_quantization_errors`).  Zero points follow
onnxruntime's limits (per-channel int8 zero points 0, per-channel uint8 zero points one
constant), which the text does not state: varied per-channel zero points are not generated.
T is float only.  Errors: hidden_size vs W, W in LSTM's layout, a W_scale of neither shape,
the direction count vs W.

**AttnLSTM**

Oracle, error bound and legitimate kernels: :mod:`conformance.reference.contrib_recurrent`
(the LSTM cell of :mod:`conformance.reference.recurrent` wrapped in the Bahdanau attention
mechanism and the attention wrapper of the text).

**What the text defines** (and the suite generates): the LSTM cell (gates ``iofc``, peepholes,
clip, input_forget, activations with alpha/beta, directions, sequence_lens) with the input
``concat(X_t, ATTN_{t-1})``, ``ATTN_{-1} = 0``; the mechanism ``KEYS = M MW``, ``PQ = H_t QW``,
``ALIGN = softmax(reduce_sum(V tanh(KEYS + PQ)))``, ``CONTEXT = ALIGN VALUES``; the wrapper
``ATTN_t = concat(H_t, CONTEXT_t) AW`` (AW given) or ``CONTEXT_t``; Y the LSTM's H.

**Readings chosen where the text is open** (each stated in docs/tolerance.md's section):

* W: the input text says ``[num_directions, 4*hidden_size, input_size]`` (LSTM's words) but the
  cell's input is ``concat(X_t, ATTN_{t-1})``; W is generated ``[D, 4H, input_size + Z]``
  (``Z``: AW's last dimension, else memory_depth), X's columns first, as the equation orders
  the concatenation.  A W of ``input_size`` columns cannot multiply the concatenated input.
* memory_seq_lens: "VALUES - masked Memory by its real sequence length"; the suite reads the
  softmax as taken over each batch's valid memory steps (Bahdanau attention with a memory
  length, as the attention mechanism the text names defines it: the padded steps get no
  weight).  A literal reading that masks VALUES but normalises over every step disagrees on
  the patterns named ``memory_seq_lens/*`` only; every other pattern has memory_seq_lens absent
  or full, where the readings agree.
* QW, MW, V and M are "optional" in the schema, but the equations use them and the text does
  not say what their absence means: present together in every pattern but one, the
  **contested** pattern ``contested/no-attention-mechanism`` (all four, AW and
  memory_seq_lens absent), whose oracle reads "no mechanism" as ATTN keeping its initial zero.
* The optional "alignment normalisation" and previous-alignment input of other attention
  mechanisms are not in the text: nothing generated.
* LSTM's own ambiguities (clip of the cell state, alpha/beta order, hidden_size always written)
  are handled as :mod:`conformance.ops.recurrent` handles them (the clip patterns keep
  ``|C_t|`` below the threshold).

**Types**: T is float and double (the schema); onnxruntime's kernel registers double but
throws "not implemented" for it, which is onnxruntime's defect, not the suite's.

**Error cases**: hidden_size disagreeing with W/R, a direction count disagreeing with W, an
unknown activation, an unknown direction, AW's second dimension not ``hidden_size +
memory_depth``, memory_seq_lens beyond M's steps.
"""

from __future__ import annotations

import itertools

import numpy as np

from ..reference import contrib_recurrent as ref
from . import values as V
from .engine import register_entries
from .entry import Entry, Err, Shape

MS = "com.microsoft"
OPTIONAL = ("B", "sequence_lens", "initial_h", "initial_c", "P", "QW", "MW", "V", "M", "memory_seq_lens", "AW")
ATTENTION = ("QW", "MW", "V", "M")
SCALE = {"X": 2.0, "W": 1.0, "R": 0.5, "B": 1.0, "initial_h": 1.0, "initial_c": 1.0, "P": 1.0, "QW": 1.0,
         "MW": 1.0, "V": 1.0, "M": 1.0, "AW": 0.5}


# ----------------------------------------------------------------------------- numerics
def _draw(rng, ctx, shapes, xs: float, ws: float):
    t = ctx.types["X"]
    names = [n for n in ref.ATTN_INPUTS if n in ctx.types]
    out = []
    for n, s in zip(names, shapes):
        if n in ("sequence_lens", "memory_seq_lens"):
            out.append(np.full(s, 1, dtype=object))  # replaced by the structural rule
            continue
        sc = xs if n == "X" else ws if n == "W" else SCALE[n]
        out.append(V.representable(rng.uniform(-sc, sc, size=s), t))
    return out


def normal(rng, ctx, shapes):
    """Numerics class ``normal``: X in [-2, 2]; W, B, initial states, P, QW, MW, V, M in
    [-1, 1]; R in [-0.5, 0.5]; AW in [-0.5, 0.5]."""
    return _draw(rng, ctx, shapes, 2.0, 1.0)


def saturating(rng, ctx, shapes):
    """Numerics class ``saturating``: X in [-4, 4], W in [-2, 2]: gate pre-activations beyond
    the clip threshold, sigmoids near 0 and 1."""
    return _draw(rng, ctx, shapes, 4.0, 2.0)


CLASSES = {"normal": normal, "saturating": saturating}


def _lens(rng, total: int, n: int):
    """Batch 0 the whole length, the others in ``[1, total - 1]`` (``[1, total]`` for one row)."""
    if n == 0:
        return np.zeros((0,), dtype=object)
    if n == 1:
        return np.array([int(rng.integers(1, total + 1))], dtype=object)
    return np.array([total] + [int(rng.integers(1, max(1, total - 1) + 1)) for _ in range(n - 1)], dtype=object)


def _sequence_lens(rng, ctx):
    """sequence_lens: batch 0 the whole sequence, the others shorter."""
    s, n = ctx.shapes["X"][0], ctx.shapes["X"][1]
    return _lens(rng, s, n)


def _memory_seq_lens(rng, ctx):
    """memory_seq_lens: batch 0 every memory step, the others fewer (at least one)."""
    n, t = ctx.shapes["M"][0], ctx.shapes["M"][1]
    return _lens(rng, t, n)


# ----------------------------------------------------------------------------- oracle, tolerance
def attn_lstm_oracle(ctx, *inputs, **attrs):
    """Float64 AttnLSTM (:func:`conformance.reference.contrib_recurrent.oracle`): Y, Y_h, Y_c."""
    ins = list(inputs) + [None] * (14 - len(inputs))
    names = ("Y", "Y_h", "Y_c")
    out = ref.oracle(ins, attrs, names)
    return tuple(out[n] for n in names)


def attn_lstm_tolerance(ctx, inputs, attrs, outputs):
    """The running error bound of every present output
    (:func:`conformance.reference.recurrent.tolerance_of`)."""
    from ..reference import recurrent as rec

    ins = list(inputs) + [None] * (14 - len(inputs))
    t = ctx.types["X"]
    bd = ref.bounds(t, ins, attrs, tuple(outputs))
    return {n: rec.tolerance_of(t, *bd[n]) for n in outputs}


def _outputs_rule(version, attrs, outputs) -> bool:
    """At least one output (a node with none computes nothing)."""
    return bool(outputs)


# ----------------------------------------------------------------------------- shape tables
def _sh(name, hs, nd, attrs=None, *, i=2, e=3, a=2, c=None, s=(1, 4), n=(1, 3), t=(2, 4), need=(), without=(),
        numerics=(), only=None):
    """A pattern: hidden size ``hs``, ``nd`` directions, input size ``i``, memory depth ``e``,
    attention size ``a``, AW's output size ``c`` (default ``e``, so W's width ``i + e`` holds
    with AW present or absent); the optional inputs ``need`` always present (with QW, MW, V, M),
    ``without`` always absent; ``only``: the optional-input sets themselves."""
    c = e if c is None else c
    if c != e:
        need = tuple(need) + ("AW",)
    inputs = {"X": "SNI", "W": "DGZ", "R": "DGH", "B": "DK", "sequence_lens": "N", "initial_h": "DNH",
              "initial_c": "DNH", "P": "DQ", "QW": "DHA", "MW": "DEA", "V": "DA", "M": "NTE",
              "memory_seq_lens": "N", "AW": "DYC"}
    dims = {"S": s, "N": n, "I": (i, i), "H": (hs, hs), "G": (4 * hs, 4 * hs), "K": (8 * hs, 8 * hs),
            "Q": (3 * hs, 3 * hs), "D": (nd, nd), "A": (a, a), "E": (e, e), "T": t, "C": (c, c),
            "Y": (hs + e, hs + e), "Z": (i + c, i + c)}
    need = set(need) | (set() if set(ATTENTION) & set(without) else set(ATTENTION))
    sets = [cmb for k in range(len(OPTIONAL) + 1) for cmb in itertools.combinations(OPTIONAL, k)
            if need <= set(cmb) and not set(without) & set(cmb)]
    if only is not None:
        sets = list(only)
    return Shape(name, inputs, {"hidden_size": hs, **(attrs or {})}, dims=dims, optional=tuple(sets),
                 numerics=numerics)


BI = {"direction": "bidirectional"}
REV = {"direction": "reverse"}


def _shapes():
    hsig = {"activations": ["HardSigmoid", "ScaledTanh", "Affine"], "activation_alpha": [0.3, 0.8, 0.6],
            "activation_beta": [0.45, 1.3, 0.1]}
    return (
        _sh("forward", 2, 1),
        _sh("forward/H=1", 1, 1, s=(2, 5)),
        _sh("forward/T=1", 2, 1, t=(1, 1), s=(2, 4)),
        _sh("reverse", 2, 1, REV),
        _sh("bidirectional", 2, 2, BI),
        _sh("bidirectional/H=3/E=2", 3, 2, BI, e=2, a=3, s=(1, 3)),
        _sh("no-AW", 2, 1, s=(2, 4), without=("AW",)),
        _sh("AW", 2, 1, s=(2, 4), need=("AW",)),
        _sh("AW/Z!=E", 2, 1, c=4, s=(2, 4)),
        _sh("AW/Z!=E/bidirectional", 2, 2, BI, c=1, s=(2, 4)),
        _sh("AW/Z!=E/reverse", 3, 1, REV, c=2, e=4, s=(2, 4)),
        _sh("seq_lens/forward", 2, 1, s=(3, 5), n=(2, 3), need=("sequence_lens",)),
        _sh("seq_lens/reverse", 2, 1, REV, s=(3, 5), n=(2, 3), need=("sequence_lens",)),
        _sh("seq_lens/bidirectional", 2, 2, BI, s=(3, 5), n=(2, 3), need=("sequence_lens", "initial_h")),
        _sh("memory_seq_lens/forward", 2, 1, s=(2, 4), n=(2, 3), t=(3, 5), need=("memory_seq_lens",)),
        _sh("memory_seq_lens/AW", 2, 1, c=2, s=(2, 4), n=(2, 3), t=(3, 5), need=("memory_seq_lens",)),
        _sh("memory_seq_lens/bidirectional/seq_lens", 2, 2, BI, s=(3, 4), n=(2, 3), t=(3, 5),
            need=("memory_seq_lens", "sequence_lens")),
        _sh("peepholes", 2, 1, need=("P",)),
        _sh("peepholes/bidirectional/initial_c", 2, 2, BI, s=(2, 4), need=("P", "initial_c")),
        _sh("clip", 2, 1, {"clip": 3.0}, s=(1, 2), numerics=("saturating",)),
        _sh("clip/bidirectional/peepholes", 2, 2, {"clip": 3.0, **BI}, s=(1, 2), numerics=("saturating",),
            need=("P",)),
        _sh("input_forget", 2, 1, {"input_forget": 1}),
        _sh("input_forget/reverse/peepholes", 2, 1, {"input_forget": 1, **REV}, need=("P", "initial_c")),
        _sh("acts/hardsigmoid-scaledtanh-affine", 2, 1, hsig, s=(1, 3), numerics=("normal",)),
        _sh("acts/leakyrelu-elu-softsign", 2, 1, {"activations": ["LeakyRelu", "Elu", "Softsign"],
                                                 "activation_alpha": [0.1, 0.7]}, s=(1, 3), numerics=("normal",)),
        _sh("acts/sigmoid-relu-softplus", 2, 1, {"activations": ["Sigmoid", "Relu", "Softplus"]}, s=(1, 3),
            numerics=("normal",)),
        _sh("acts/bidirectional", 2, 2, {**BI, "activations": hsig["activations"] + ["Sigmoid", "Tanh", "Tanh"],
                                         "activation_alpha": hsig["activation_alpha"],
                                         "activation_beta": hsig["activation_beta"]}, s=(1, 3), numerics=("normal",)),
        _sh("zero-batch", 2, 1, n=(0, 0)),
        # contested: no attention mechanism (module docstring)
        _sh("contested/no-attention-mechanism", 2, 1, s=(2, 4), only=((), ("B", "initial_h", "initial_c"))),
    )


def _contested(ctx, attrs) -> str | None:
    """A model without QW, MW, V and M: the schema makes them optional, the text's equations
    use them and never say what their absence means."""
    if "QW" not in ctx.types:
        return ("QW, MW, V and M are optional in the schema but the text's attention mechanism uses them and "
                "never says what their absence means (read here: ATTN keeps its initial zero)")
    return None


# ----------------------------------------------------------------------------- errors
def _errors():
    h, e, a = 2, 3, 2
    base = [(2, 1, 2), (1, 8, 2 + e), (1, 8, 2), (1, 16), (1,), (1, 1, 2), (1, 1, 2), (1, 6), (1, h, a),
            (1, e, a), (1, a), (1, 3, e)]
    lens = {"sequence_lens": 2, "memory_seq_lens": 3}
    outs = {"Y_h": (None, None, None)}
    return (
        Err("hidden_size 3 disagrees with W (4 x 2 rows) and R (hidden 2): W is [num_directions, 4*hidden_size, "
            "...]", "hidden_size-mismatch", {"hidden_size": 3}, tuple(base), outputs=outs, values=lens),
        Err("direction bidirectional needs num_directions = 2 in W's first dimension, not 1",
            "num_directions-mismatch", {"hidden_size": 2, "direction": "bidirectional"}, tuple(base), outputs=outs,
            values=lens),
        Err("'The activation functions must be one of the activation functions specified above': Swish",
            "unknown-activation", {"hidden_size": 2, "activations": ["Sigmoid", "Tanh", "Swish"]}, tuple(base),
            outputs=outs, values=lens),
        Err("direction 'Must be one of forward (default), reverse, or bidirectional': both", "unknown-direction",
            {"hidden_size": 2, "direction": "both"}, tuple(base), outputs=outs, values=lens),
        Err("AW 'should be of shape [num_directions, memory_depth+hidden_size, aw_attn_size]': [1, 4, 3] with "
            "memory_depth 3 and hidden_size 2", "AW-shape", {"hidden_size": 2}, tuple(base) + ((1,), (1, 4, 3)),
            outputs=outs, values={"sequence_lens": 2, "memory_seq_lens": 3}),
        Err("memory_seq_lens 4 exceeds M's 3 memory steps ('The sequence length of the input memory')",
            "memory_seq_lens-beyond-M", {"hidden_size": 2}, tuple(base) + ((1,),), outputs=outs,
            values={"sequence_lens": 2, "memory_seq_lens": 4}),
    )


SHAPES = _shapes()
ATTN_LSTM = Entry(
    "AttnLSTM", attn_lstm_oracle, family="shaped", domain=MS, shapes=SHAPES, tolerance=attn_lstm_tolerance,
    float_numerics=CLASSES, numerics_classes=lambda t: ("normal", "saturating"), per_type=3 * len(SHAPES),
    errors=_errors(), outputs_rule=_outputs_rule,
    structural={"sequence_lens": _sequence_lens, "memory_seq_lens": _memory_seq_lens}, outputs_per_type=True,
    contested=_contested,
)

# ============================================================================ DynamicQuantizeLSTM
DQ_OPTIONAL = ("B", "sequence_lens", "initial_h", "initial_c", "P")


def _dq_draw(rng, ctx, shapes, xs: float):
    """X in [-xs, xs]; W and R integers over T2's range (int8: [-128, 127], uint8: [0, 255]);
    scales in [0.5, 1.5] / 128 (R's halved), so that the dequantized weights lie within about
    [-1.5, 1.5] ([-0.75, 0.75]); zero points: per tensor int8 in [-4, 4] / uint8 in [120, 136],
    per channel 0 (int8) or one constant (uint8), onnxruntime's limits (module docstring);
    B, initial states and P in [-1, 1]."""
    t = ctx.types["X"]
    t2 = ctx.types["W"]
    lo, hi = (-128, 127) if t2 == "int8" else (0, 255)
    names = [n for n in ref.DQ_INPUTS if n in ctx.types]
    per_channel = len(ctx.shapes["W_scale"]) == 2
    zp_const = int(rng.integers(-4, 5)) if t2 == "int8" else int(rng.integers(120, 137))
    out = []
    for n, shp in zip(names, shapes):
        size = int(np.prod(shp, dtype=np.int64))
        if n in ("W", "R"):
            out.append(np.array([int(v) for v in rng.integers(lo, hi + 1, size=size)], dtype=object).reshape(shp))
        elif n.endswith("zero_point"):
            if per_channel:
                vals = [0 if t2 == "int8" else zp_const] * size
            else:
                vals = [int(v) for v in (rng.integers(-4, 5, size=size) if t2 == "int8"
                                         else rng.integers(120, 137, size=size))]
            out.append(np.array(vals, dtype=object).reshape(shp))
        elif n.endswith("scale"):
            f = 0.5 if n == "R_scale" else 1.0
            out.append(V.representable(f * rng.uniform(0.5, 1.5, size=shp) / 128, t))
        elif n == "sequence_lens":
            out.append(np.full(shp, 1, dtype=object))
        else:
            sc = xs if n == "X" else 1.0
            out.append(V.representable(rng.uniform(-sc, sc, size=shp), t))
    return out


DQ_CLASSES = {"normal": lambda rng, ctx, shapes: _dq_draw(rng, ctx, shapes, 1.0),
              "saturating": lambda rng, ctx, shapes: _dq_draw(rng, ctx, shapes, 4.0)}


def dq_lstm_oracle(ctx, *inputs, **attrs):
    """Float64 DynamicQuantizeLSTM (:func:`conformance.reference.contrib_recurrent.dq_lstm_oracle`):
    LSTM with the dequantized W and R; Y, Y_h, Y_c."""
    names = ("Y", "Y_h", "Y_c")
    out = ref.dq_lstm_oracle(list(inputs), attrs, names)
    return tuple(out[n] for n in names)


def dq_lstm_tolerance(ctx, inputs, attrs, outputs):
    """The running error bound with the dynamic quantization of X and the hidden state
    (:func:`conformance.reference.contrib_recurrent.dq_lstm_bounds`)."""
    from ..reference import recurrent as rec

    bd = ref.dq_lstm_bounds(list(inputs), attrs, tuple(outputs))
    return {n: rec.tolerance_of("float", *bd[n]) for n in outputs}


def _dq(name, hs, nd, attrs=None, *, per_channel=False, s=(1, 4), n=(1, 3), i=(2, 4), need=(), numerics=()):
    """A DynamicQuantizeLSTM pattern (W ``[D, I, 4H]``, R ``[D, H, 4H]``, the scales and zero
    points ``[D]`` or, ``per_channel``, ``[D, 4H]``)."""
    q = "DG" if per_channel else "D"
    inputs = {"X": "SNI", "W": "DIG", "R": "DHG", "B": "DK", "sequence_lens": "N", "initial_h": "DNH",
              "initial_c": "DNH", "P": "DQ", "W_scale": q, "W_zero_point": q, "R_scale": q, "R_zero_point": q}
    dims = {"S": s, "N": n, "I": i, "H": (hs, hs), "G": (4 * hs, 4 * hs), "K": (8 * hs, 8 * hs),
            "Q": (3 * hs, 3 * hs), "D": (nd, nd)}
    opt = None
    if need:
        opt = tuple(c for k in range(len(DQ_OPTIONAL) + 1) for c in itertools.combinations(DQ_OPTIONAL, k)
                    if set(need) <= set(c))
    return Shape(name, inputs, {"hidden_size": hs, **(attrs or {})}, dims=dims, optional=opt, numerics=numerics)


def _dq_shapes():
    return (
        _dq("per-tensor", 2, 1),
        _dq("per-channel", 2, 1, per_channel=True),
        _dq("per-tensor/H=1", 1, 1, s=(2, 5)),
        _dq("per-channel/H=3/I=1", 3, 1, per_channel=True, i=(1, 1)),
        _dq("reverse/per-channel", 2, 1, REV, per_channel=True),
        _dq("bidirectional/per-tensor", 2, 2, BI),
        _dq("bidirectional/per-channel", 2, 2, BI, per_channel=True),
        _dq("seq_lens/forward", 2, 1, s=(3, 5), n=(2, 3), need=("sequence_lens",)),
        _dq("seq_lens/reverse", 2, 1, REV, s=(3, 5), n=(2, 3), need=("sequence_lens",)),
        _dq("seq_lens/bidirectional/per-channel", 2, 2, BI, per_channel=True, s=(3, 5), n=(2, 3),
            need=("sequence_lens", "initial_h")),
        _dq("peepholes", 2, 1, need=("P", "initial_c")),
        _dq("clip", 2, 1, {"clip": 3.0}, s=(1, 2), numerics=("saturating",)),
        _dq("input_forget", 2, 1, {"input_forget": 1}),
        _dq("acts/hardsigmoid-scaledtanh-softsign", 2, 1,
            {"activations": ["HardSigmoid", "ScaledTanh", "Softsign"], "activation_alpha": [0.3, 0.8],
             "activation_beta": [0.45, 1.3]}, s=(1, 3), numerics=("normal",)),
        _dq("zero-batch", 2, 1, n=(0, 0)),
    )


def _dq_errors():
    base = ((2, 1, 2), (1, 2, 8), (1, 2, 8))
    q = ((1,), (1,), (1,), (1,))
    opt = ((1, 16), (1,), (1, 1, 2), (1, 1, 2), (1, 6))
    outs = {"Y_h": (None, None, None)}
    lens = {"sequence_lens": 2}
    return (
        Err("hidden_size 3 disagrees with W [num_directions, input_size, 4*hidden_size] = [1, 2, 8]",
            "hidden_size-mismatch", {"hidden_size": 3}, base + opt + q, outputs=outs, values=lens),
        Err("W in LSTM's layout [num_directions, 4*hidden_size, input_size] = [1, 8, 2]: the text's W is "
            "[num_directions, input_size, 4*hidden_size]", "W-layout", {"hidden_size": 2},
            ((2, 1, 2), (1, 8, 2), (1, 2, 8)) + opt + q, outputs=outs, values=lens),
        Err("W_scale [1, 3]: 'Its size is [num_directions] ... or [num_directions, 4*hidden_size]'",
            "W_scale-shape", {"hidden_size": 2}, base + opt + ((1, 3), (1,), (1,), (1,)), outputs=outs,
            values=lens),
        Err("direction bidirectional needs num_directions = 2 in W's first dimension, not 1",
            "num_directions-mismatch", {"hidden_size": 2, "direction": "bidirectional"}, base + opt + q,
            outputs=outs, values=lens),
    )


DQ_SHAPES = _dq_shapes()
DYNAMIC_QUANTIZE_LSTM = Entry(
    "DynamicQuantizeLSTM", dq_lstm_oracle, family="shaped", domain=MS, shapes=DQ_SHAPES,
    tolerance=dq_lstm_tolerance, float_numerics=DQ_CLASSES, numerics_classes=lambda t: ("normal", "saturating"),
    per_type=3 * len(DQ_SHAPES), errors=_dq_errors(), outputs_rule=_outputs_rule,
    structural={"sequence_lens": _sequence_lens}, outputs_per_type=True,
)

ENTRIES = (ATTN_LSTM, DYNAMIC_QUANTIZE_LSTM)
register_entries(ENTRIES, family="contrib_recurrent")
