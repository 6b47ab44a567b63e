"""The signal operators as entries of the operator table (family ``shaped``): HannWindow,
HammingWindow, BlackmanWindow (17), DFT (17, 20), STFT (17) and MelWeightMatrix (17).

Oracles, bounds and legitimate variants: :mod:`conformance.reference.signal` (direct float64
sums; numpy.fft is the tests' independent check).  Tolerances: docs/tolerance.md, "Signal".

**Windows.**  ``size`` is a structural scalar per pattern: 0, 1, 2 (the edge cases), 3, 4, 7,
8, 16, 17, 64, 65 and 1000; ``periodic`` absent, explicit 1 and 0 (a pattern fixes it where the
size makes the two readings matter most); ``output_datatype`` every T2 (written where T2 is not
float; float cases take it absent and explicit).  Integer outputs are the float window truncated
(the function body's ``Cast``): 0 everywhere except the elements whose exact value is 1.
**Contested**: a symmetric window of size 1 (the function body divides by ``size - 1 = 0``:
NaN; the text's "symmetric window" of one point is ``[1]``, what numpy, scipy and torch return:
the oracle's reading); an element whose exact value is 1 (the middle of a window) with an integer
output type: the Cast truncates, so any evaluation a hair below 1 -- a cos a few ulp off at pi,
BlackmanWindow's ``0.42 + 0.5 + 0.08`` in float32 (0.99999994, the function body) -- gives 0;
onnxruntime gives 1, the exact value the oracle takes.
Error cases: a size that is not a scalar, output_datatype outside T2 (string).

**DFT.**  Real (last dimension 1) and complex (2) inputs of rank 2-4; the axis at every valid
position (17: attribute, default 1; 20: input, default -2, negative too); dft_length absent,
equal, longer (zero padding) and shorter (truncation); onesided forward (RFFT, even and odd
lengths), inverse (1/n), onesided inverse (IRFFT, default length ``2 (m - 1)`` and the odd
``2 m - 1``); length 1; an empty batch; long lines (256, and the prime 97 that a radix-2 kernel
cannot split).  IRFFT inputs have real DC (and Nyquist) bins: where they are not, runtimes differ
in what they drop, and the text does not say.  Error cases: last dimension 3, the complex
dimension as the axis, RFFT of a complex input and IRFFT of a real input (the text: "only real
input is supported" / "only complex input is supported"), a rank-1 input.

**STFT.**  frame_step, window and frame_length in every presence the text defines (window and
frame_length, window alone, frame_length alone, neither: frame_length = signal_length), onesided
default (1) and 0, real and complex signals (complex: onesided 0 only), a frame step larger than
the frame, odd frame lengths, one frame that fits exactly, an empty batch, long frames.  Error
cases: a signal of rank 2, onesided with a complex signal, a window whose length differs from
frame_length, a last dimension of 3.  **Contested**: onesided absent (the schema default and the
text: 1; onnx's shape inference reads it as 0 and rejects the one-sided output shape; the oracle
follows the text, onnxruntime too).

**MelWeightMatrix.**  Parameter sets (num_mel_bins 1-40, dft_length odd and even, the common
sample rates, lower edge 0 and above, upper edge below and at Nyquist) whose band edges float32
and float64 floor alike; every T1, T2, T3.  The band spacing: the text's upper_edge_hertz is "the
desired top edge of the highest frequency band", so the oracle spaces ``num_mel_bins + 2`` edges
over ``[mel(lower), mel(upper)]``; onnx.reference and onnxruntime divide by ``num_mel_bins + 2``
(their last edge falls short of upper_edge_hertz): the cases where the two readings give other
bins are **contested**, the others are not.
"""

from __future__ import annotations

import itertools

import numpy as np

from ..reference import signal as ref
from ..tolerance import Tolerance
from . import values as V
from .engine import register_entries
from .entry import Attrs, Entry, Err, Shape

FLOATS = ("float", "double", "float16", "bfloat16")


def _eps(t: str) -> float:
    return float(V.finfo(t).eps)


def _ints(shapes):
    return [np.full(s, 1, dtype=object) for s in shapes]


# ============================================================================ windows
WINDOW_OPS = ("HannWindow", "HammingWindow", "BlackmanWindow")


def _window_oracle(op):
    def oracle(ctx, size, periodic=1, output_datatype=1):
        """:func:`conformance.reference.signal.window`; integer types truncate (the body's Cast)."""
        w = ref.window(op, int(np.asarray(size).reshape(())), int(periodic))
        if V.kind(ctx.out_types["output"]) == V.INT:
            out = np.empty(w.shape, dtype=object)
            out[:] = [int(np.trunc(v)) for v in w]
            return out
        return w

    oracle.__name__ = oracle.__qualname__ = f"{op.lower()}_oracle"
    return oracle


def _window_tolerance(op):
    def tolerance(ctx, inputs, attrs, outputs):
        """float32's error of the function body (:func:`conformance.reference.signal.window_bound`)
        plus an ulp of the output type; integer outputs exact."""
        t = ctx.out_types["output"]
        if V.kind(t) != V.FLOAT:
            return {"output": Tolerance(0.0, 0.0, exact=True)}
        b = ref.window_bound(op)
        return {"output": Tolerance(b, _eps(t), variants=("float32-function-body", "float64"))}

    return tolerance


def _window_contested(op):
    def contested(ctx, attrs):
        size = int(np.asarray(ctx.values.get("size", 2)).reshape(()))
        periodic = int(ctx.attrs.get("periodic", 1))
        if size == 1 and not periodic:
            return ("a symmetric window of size 1: the function body divides by size - 1 = 0 (NaN); the text's "
                    "one-point symmetric window is [1] (numpy, scipy, torch), the oracle's reading")
        if V.kind(ctx.out_types["output"]) == V.INT and size >= 2:
            n = size if periodic else size - 1
            if n % 2 == 0 and n // 2 < size:
                return ("an element whose exact value is 1 cast to an integer type: truncation keeps 1 only if the "
                        "float evaluation is not below 1, and a cos within its budget (4 ulp) at pi, or Blackman's "
                        "0.42 + 0.5 + 0.08 in float32 (0.99999994, the function body), truncates to 0; onnxruntime "
                        "gives 1, the exact value the oracle takes")
        return None

    return contested


def _win_shape(size: int, periodic=None) -> Shape:
    attrs = {} if periodic is None else {"periodic": periodic}
    tag = "" if periodic is None else ("/periodic" if periodic else "/symmetric")
    return Shape(f"size={size}{tag}", {"size": ""}, attrs, values={"size": size})


WINDOW_SHAPES = (
    _win_shape(8), _win_shape(0), _win_shape(1, 1), _win_shape(1, 0), _win_shape(2, 1), _win_shape(2, 0),
    _win_shape(3), _win_shape(4), _win_shape(7, 1), _win_shape(7, 0), _win_shape(16, 1), _win_shape(16, 0),
    _win_shape(17), _win_shape(64), _win_shape(65, 0), _win_shape(1000, 1), _win_shape(1000, 0),
)


def _window_type_attrs(version, combo):
    """output_datatype written where T2 is not float (the only way to get it)."""
    return {"output_datatype": V.elem(combo["T2"])} if combo["T2"] != "float" else {}


def _window_per_type(version, combo):
    """Every pattern for float/double outputs with an int64 size, four cases for the other float
    outputs and the int32 size, two for the integer outputs."""
    if combo["T2"] in ("float", "double") and combo["T1"] == "int64":
        return len(WINDOW_SHAPES)
    return 4 if combo["T2"] in FLOATS else 2


def _window_errors():
    return (
        Err("size is 'A scalar value indicating the length of the window': shape [1]", "size-rank1", {}, ((1,),),
            values={"size": [4]}),
        Err("output_datatype 'Strictly must be one of the values from DataType enum ... T2': 8 (STRING) is not",
            "output_datatype-string", {"output_datatype": V.elem("string")}, ((),), values={"size": 4},
            out_types={"output": "string"}),
    )


def _window_entry(op):
    return Entry(
        op, _window_oracle(op), family="shaped", shapes=WINDOW_SHAPES, tolerance=_window_tolerance(op),
        int_numerics={"size": lambda rng, ctx, shapes: _ints(shapes)}, numerics_classes=lambda t: ("size",),
        attrs=(Attrs({"periodic": 0}, tag="symmetric"),), type_attrs=_window_type_attrs, per_type=_window_per_type,
        contested=_window_contested(op), errors=_window_errors(), signed_zero=False,
    )


HANN_WINDOW = _window_entry("HannWindow")
HAMMING_WINDOW = _window_entry("HammingWindow")
BLACKMAN_WINDOW = _window_entry("BlackmanWindow")

# ============================================================================ DFT
def _dft_args(ctx, rest, attrs):
    """(axis, dft_length) of a DFT case: axis from the attribute (17) or the input (20, default -2)."""
    dft_length = rest[0] if len(rest) > 0 else None
    if ctx.version >= 20:
        axis = rest[1] if len(rest) > 1 and rest[1] is not None else -2
    else:
        axis = attrs.get("axis", 1)
    n = None if dft_length is None else int(np.asarray(dft_length).reshape(()))
    return int(np.asarray(axis).reshape(())), n


def _dft_oracle(ctx, x, *rest, **attrs):
    """:func:`conformance.reference.signal.dft` (direct float64 sums)."""
    axis, n = _dft_args(ctx, rest, attrs)
    return ref.dft(x, axis=axis, dft_length=n, inverse=int(attrs.get("inverse", 0)),
                   onesided=int(attrs.get("onesided", 0)))


def _dft_tolerance(ctx, inputs, attrs, outputs):
    """:func:`conformance.reference.signal.dft_bound` (absolute, per output: the largest line's
    bound) plus an ulp of the output type relative to each element (the rounding of the result and
    of the 1/n scale)."""
    t = ctx.types["input"]
    axis, n = _dft_args(ctx, list(inputs[1:]), attrs)
    b = ref.dft_bound(inputs[0], t, axis=axis, dft_length=n, inverse=int(attrs.get("inverse", 0)),
                      onesided=int(attrs.get("onesided", 0)))
    return {"output": Tolerance(b + _tiny(t), _eps(t), variants=("direct-sum", "fft", "bluestein"))}


def _tiny(t: str) -> float:
    """The smallest subnormal of ``t``: one ulp of a result rounded into the subnormal range, where
    ``rtol * |e|`` is below an ulp."""
    return float(V.finfo(t).smallest_subnormal)


def _signal_data(scale_offset):
    def fn(rng, ctx, shapes):
        names = [k for k in ctx.types]
        out = []
        for name, shp in zip(names, shapes):
            t = ctx.types[name]
            if V.kind(t) != V.FLOAT:
                out.append(np.full(shp, 1, dtype=object))
                continue
            x = rng.uniform(-1.0, 1.0, size=shp) + scale_offset
            if name == "input" and ctx.op == "DFT" and int(ctx.attrs.get("onesided", 0)) and \
                    int(ctx.attrs.get("inverse", 0)) and len(shp) >= 2 and shp[-1] == 2:
                x = _hermitian_ready(ctx, x)
            out.append(V.representable(x, t))
        return out

    return fn


def _hermitian_ready(ctx, x):
    """An IRFFT input whose DC bin (and the Nyquist bin of an even length) is real: the readings
    of the imaginary parts there (dropped by numpy, kept by a full complex inverse) then agree."""
    axis = int(np.asarray(ctx.values.get("axis", -2)).reshape(())) if ctx.version >= 20 else int(
        ctx.attrs.get("axis", 1))
    a = ref.dft_axis(x.ndim, axis)
    m = x.shape[a]
    n = ctx.values.get("dft_length")
    n = 2 * (m - 1) if n is None else int(np.asarray(n).reshape(()))
    x = x.copy()
    idx = [slice(None)] * x.ndim
    idx[-1] = 1
    for k in {0, n // 2} if n % 2 == 0 else {0}:
        if k < m:
            idx[a] = k
            x[tuple(idx)] = 0.0
    return x


SIGNAL_CLASSES = {"normal": _signal_data(0.0), "offset": _signal_data(8.0)}


def _dft_length_default(rng, ctx):
    """dft_length where the pattern does not fix it: the default's value, written (IRFFT: 2 (m - 1))."""
    shp = ctx.shapes["input"]
    axis = int(np.asarray(ctx.values.get("axis", -2)).reshape(())) if ctx.version >= 20 else int(
        ctx.attrs.get("axis", 1))
    m = shp[ref.dft_axis(len(shp), axis)]
    return ref.default_dft_length(m, int(ctx.attrs.get("onesided", 0)), int(ctx.attrs.get("inverse", 0)))


def _axis_default(rng, ctx):
    """The axis input where the pattern does not fix it: -2 or its positive twin, drawn."""
    r = len(ctx.shapes["input"])
    return int(rng.choice([-2, r - 2]))


_DL = ("dft_length",)


def _dft_patterns():
    """The shape table: (name, template, attrs, axis, dft_length, dims, numerics)."""
    rows = [
        ("r3/real", "BN1", {}, None, None, {"N": (2, 9)}, ()),
        ("r3/complex", "BN2", {}, None, None, {"N": (2, 9)}, ()),
        ("r3/real/onesided", "BN1", {"onesided": 1}, None, None, {"N": (2, 9)}, ()),
        ("r3/complex/inverse", "BN2", {"inverse": 1}, None, None, {"N": (2, 9)}, ()),
        ("r3/real/inverse", "BN1", {"inverse": 1}, None, None, {"N": (3, 6)}, ()),
        ("r3/irfft", "BM2", {"onesided": 1, "inverse": 1}, None, None, {"M": (2, 6)}, ()),
        ("r3/irfft/odd-length", "B52", {"onesided": 1, "inverse": 1}, None, 9, {}, ()),
        ("dft_length/longer/real", "B51", {}, None, 8, {}, ()),
        ("dft_length/shorter/complex", "B72", {}, None, 4, {}, ()),
        ("dft_length/longer/onesided", "B51", {"onesided": 1}, None, 9, {}, ()),
        ("dft_length/shorter/onesided", "B81", {"onesided": 1}, None, 5, {}, ()),
        ("dft_length/shorter/inverse", "B72", {"inverse": 1}, None, 5, {}, ()),
        ("dft_length/longer/inverse", "B32", {"inverse": 1}, None, 6, {}, ()),
        ("n=1", "B12", {}, None, None, {}, ()),
        ("n=1/onesided", "B11", {"onesided": 1}, None, None, {}, ()),
        ("zero-batch", "0N2", {}, None, None, {}, ()),
        ("long/256", "1L2", {}, None, None, {"L": (256, 256)}, ("normal", "offset")),
        ("long/97/onesided", "2L1", {"onesided": 1}, None, None, {"L": (97, 97)}, ("normal", "offset")),
        ("long/120/inverse", "1L2", {"inverse": 1}, None, None, {"L": (120, 120)}, ("normal", "offset")),
        ("r4/axis=2", "BMN2", {}, 2, None, {}, ()),
        ("r4/axis=-3", "BNM1", {}, -3, None, {}, ()),
        ("r4/axis=1/onesided", "BNM1", {"onesided": 1}, 1, None, {}, ()),
        ("r4/axis=-2/inverse", "BMN2", {"inverse": 1}, -2, None, {}, ()),
        ("r4/axis=2/dft_length/longer", "BM52", {}, 2, 7, {}, ()),
        ("r3/axis=0", "NB2", {}, 0, None, {}, ()),
        ("r5/axis=3", "ABCN1", {}, 3, None, {c: (1, 3) for c in "ABC"}, ()),
    ]
    out = []
    for version, until in ((17, 19), (20, 10**6)):
        for name, tmpl, attrs, axis, n, dims, nums in rows:
            a = dict(attrs)
            values = {}
            if n is not None:
                values["dft_length"] = n
            opt = None
            need = ()
            if n is not None:
                need += _DL
            if version == 17:
                if axis is not None:
                    a["axis"] = axis
                names = ("dft_length",)
            else:
                if axis is not None:
                    values["axis"] = axis
                    need += ("axis",)
                names = ("dft_length", "axis")
            if need:
                sets = [c for k in range(len(names) + 1) for c in itertools.combinations(names, k) if set(need) <= set(c)]
                opt = tuple(sets)
            out.append(Shape(f"{name}/v17" if version == 17 else name, {"input": tmpl}, a, since=version, until=until, dims=dims, numerics=nums,
                             values=values, optional=opt))
    # version 20 without a batch: a rank-2 input, the default axis -2 is 0
    out.append(Shape("r2/complex", {"input": "N2"}, {}, since=20, dims={"N": (2, 9)}))
    out.append(Shape("r2/real/onesided", {"input": "N1"}, {"onesided": 1}, since=20, dims={"N": (2, 9)}))
    return tuple(out)


DFT_SHAPES = _dft_patterns()


def _dft_errors():
    return (
        Err("the last dimension 'represents the real and imaginary parts': 3", "last-dim-3", {}, ((2, 4, 3),)),
        Err("onesided=1, inverse=0: 'only real input is supported': a complex input", "rfft-complex",
            {"onesided": 1}, ((2, 4, 2),)),
        Err("onesided=1, inverse=1: 'only complex input is supported': a real input", "irfft-real",
            {"onesided": 1, "inverse": 1}, ((2, 4, 1),)),
        Err("axis 'Accepted range is [-r, -2] U [0, r-2]': -1, the complex dimension", "axis-last",
            {"axis": -1}, ((2, 4, 2),), until=19),
        Err("axis 'Accepted range is [-r, -2] U [0, r-2]': 2 = r - 1, the complex dimension", "axis-r-1",
            {"axis": 2}, ((2, 4, 2),), until=19),
        Err("axis 'Accepted range is [-r, -2] U [0, r-2]': -1, the complex dimension", "axis-last",
            {}, ((2, 4, 2), (), ()), since=20, values={"axis": -1}),
        Err("the input has a signal dimension and the complex one: rank 1", "rank1", {}, ((2,),)),
    )


DFT = Entry(
    "DFT", _dft_oracle, family="shaped", shapes=DFT_SHAPES, tolerance=_dft_tolerance, float_numerics=SIGNAL_CLASSES,
    numerics_classes=lambda t: ("normal", "offset"), per_type=lambda v, c: 30 if c["T1"] in ("float", "double") else 10,
    structural={"dft_length": _dft_length_default, "axis": _axis_default}, errors=_dft_errors(),
    notes={20: "axis moves from an attribute (default 1) to an optional input (default -2)"},
)


# ============================================================================ STFT
def _scalar(x):
    return None if x is None else int(np.asarray(x).reshape(()))


def _stft_oracle(ctx, signal, frame_step, window=None, frame_length=None, onesided=1):
    """:func:`conformance.reference.signal.stft` (direct float64 sums)."""
    return ref.stft(signal, _scalar(frame_step), window, _scalar(frame_length), int(onesided))


def _stft_tolerance(ctx, inputs, attrs, outputs):
    """:func:`conformance.reference.signal.stft_bound` plus an ulp of the output type."""
    t = ctx.types["signal"]
    sig, step, win, fl = (list(inputs) + [None] * 4)[:4]
    b = ref.stft_bound(sig, t, _scalar(step), win, _scalar(fl))
    return {"output": Tolerance(b + _tiny(t), _eps(t), variants=("direct-sum", "fft", "bluestein"))}


def _stft_contested(ctx, attrs):
    if "onesided" not in ctx.given:
        return ("onesided absent: the schema's default and the text say 1 (frame_length // 2 + 1 bins), onnx's shape "
                "inference reads an absent onesided as 0 (frame_length bins) and rejects the model's output shape")
    return None


def _stft_pattern(name, batch, length, step, fl, parts, *, complex_=False, onesided=None, numerics=()):
    """A pattern: ``parts`` the optional inputs present ("window", "frame_length")."""
    values = {"frame_step": step}
    if "frame_length" in parts:
        values["frame_length"] = fl
    attrs = {} if onesided is None else {"onesided": onesided}
    dims = {"B": batch, "L": (length, length), "W": (fl, fl)}
    inputs = {"signal": "BL2" if complex_ else "BL1", "window": "W"}
    return Shape(name, inputs, attrs, dims=dims, values=values, optional=(tuple(parts),), numerics=numerics)


STFT_SHAPES = (
    _stft_pattern("window+frame_length/step=2", (1, 3), 16, 2, 8, ("window", "frame_length")),
    _stft_pattern("window-only/step=3", (1, 2), 12, 3, 6, ("window",)),
    _stft_pattern("frame_length-only/odd/remainder", (1, 2), 13, 2, 5, ("frame_length",)),
    _stft_pattern("neither/frame=signal", (1, 2), 8, 1, 8, ()),
    _stft_pattern("onesided=0/real", (1, 2), 16, 4, 8, ("window", "frame_length"), onesided=0),
    _stft_pattern("onesided=1/explicit", (1, 2), 15, 4, 7, ("window",), onesided=1),
    _stft_pattern("complex/onesided=0", (1, 2), 16, 4, 8, ("window", "frame_length"), complex_=True, onesided=0),
    _stft_pattern("complex/no-window", (1, 2), 11, 3, 5, ("frame_length",), complex_=True, onesided=0),
    _stft_pattern("step>frame_length", (1, 2), 14, 5, 3, ("window", "frame_length")),
    _stft_pattern("one-frame/exact-fit", (1, 2), 9, 4, 9, ("window",)),
    _stft_pattern("frame_length=1", (1, 2), 5, 1, 1, ("frame_length",)),
    _stft_pattern("zero-batch", (0, 0), 16, 4, 8, ("window", "frame_length")),
    _stft_pattern("long/256/step=128", (1, 1), 768, 128, 256, ("window",), numerics=("normal", "offset")),
    _stft_pattern("long/100/step=37", (1, 1), 400, 37, 100, ("window", "frame_length"), numerics=("normal", "offset")),
)


def _stft_errors():
    return (
        Err("the signal 'is expected to have rank 3': rank 2", "signal-rank2", {}, ((2, 16), (), (8,), ()),
            values={"frame_step": 4, "frame_length": 8}),
        Err("'if the input or window tensors are complex, then onesided output is not possible': onesided=1 with "
            "a complex signal", "onesided-complex", {"onesided": 1}, ((1, 16, 2), (), (8,), ()),
            values={"frame_step": 4, "frame_length": 8}),
        Err("'If both frame_length and window are provided, the length of the window must equal frame_length': "
            "6 and 8", "window-length", {}, ((1, 16, 1), (), (6,), ()), values={"frame_step": 4, "frame_length": 8}),
        Err("the last dimension is 1 (real) or 2 (complex): 3", "signal-last-dim-3", {}, ((1, 16, 3), (), (8,), ()),
            values={"frame_step": 4, "frame_length": 8}),
        Err("'frames = floor((signal_length - frame_length) / frame_step) + 1' = floor((8 - 16) / 1) + 1 = -7: a "
            "frame longer than the signal", "frame-longer-than-signal", {}, ((1, 8, 1), (), (16,), ()),
            values={"frame_step": 1, "frame_length": 16}),
    )


STFT = Entry(
    "STFT", _stft_oracle, family="shaped", shapes=STFT_SHAPES, tolerance=_stft_tolerance,
    float_numerics=SIGNAL_CLASSES, numerics_classes=lambda t: ("normal", "offset"),
    per_type=lambda v, c: 28 if c["T1"] in ("float", "double") else 14, errors=_stft_errors(),
    contested=_stft_contested,
)


# ============================================================================ MelWeightMatrix
_MEL_NAMES = ("num_mel_bins", "dft_length", "sample_rate", "lower_edge_hertz", "upper_edge_hertz")

#: (num_mel_bins, dft_length, sample_rate, lower_edge_hertz, upper_edge_hertz): the frequencies are
#: bfloat16 values (every T2 holds them exactly), every band edge is away from a floor boundary in
#: both spacings (:func:`conformance.reference.signal.mel_edges_stable`).
MEL_PARAMS = (
    (8, 16, 8192, 0.0, 4096.0),         # onnx's node test: contested
    (20, 256, 22050, 64.0, 8000.0),
    (1, 32, 16000, 300.0, 4000.0),      # one band
    (16, 400, 16000, 125.0, 6016.0),
    (12, 128, 16000, 2048.0, 8000.0),   # lower edge well above 0
    (40, 512, 16000, 0.0, 8000.0),      # the usual speech front end, upper edge at Nyquist
    (5, 31, 8000, 100.0, 3968.0),       # odd dft_length
    (3, 10, 16000, 0.0, 8000.0),        # bands narrower than a bin (left == center)
    (5, 12, 8000, 1024.0, 2048.0),      # the two spacings floor alike: uncontested
    (8, 8, 8000, 300.0, 2048.0),        # uncontested, most bands collapse onto bin 0
    (8, 24, 16000, 1024.0, 2048.0),     # uncontested
    (2, 4, 16000, 0.0, 2048.0),         # every edge in bin 0: uncontested
)


def _mel_args(vals):
    n, d, sr = (int(np.asarray(v).reshape(())) for v in vals[:3])
    lo, hi = (float(np.asarray(v).reshape(())) for v in vals[3:5])
    return n, d, sr, lo, hi


def _mel_oracle(ctx, num_mel_bins, dft_length, sample_rate, lower_edge_hertz, upper_edge_hertz, output_datatype=1):
    """:func:`conformance.reference.signal.mel_weight_matrix` (the text's band spacing); integer
    outputs truncate (only the peaks, exactly 1, are non-zero)."""
    w = ref.mel_weight_matrix(*_mel_args((num_mel_bins, dft_length, sample_rate, lower_edge_hertz,
                                           upper_edge_hertz)))
    if V.kind(ctx.out_types["output"]) == V.INT:
        out = np.empty(w.shape, dtype=object)
        out[...] = np.trunc(w).astype(np.int64).astype(object)
        return out
    return w


def _mel_tolerance(ctx, inputs, attrs, outputs):
    """The weights are quotients of small integers: one correctly rounded division, then the
    rounding to the output type (an ulp of it); integer outputs exact."""
    t = ctx.out_types["output"]
    if V.kind(t) != V.FLOAT:
        return {"output": Tolerance(0.0, 0.0, exact=True)}
    return {"output": Tolerance(float(V.finfo(t).smallest_subnormal), _eps(t), variants=("float32", "float64"))}


def _mel_contested(ctx, attrs):
    vals = [ctx.values.get(k) for k in _MEL_NAMES]
    if any(v is None for v in vals):
        return None
    p = _mel_args(vals)
    if not np.array_equal(ref.mel_band_edges(*p, spacing="text"), ref.mel_band_edges(*p, spacing="runtime")):
        return ("band spacing: the text's upper_edge_hertz is 'the desired top edge of the highest frequency band' "
                "(num_mel_bins + 2 edges spanning [lower, upper]); onnx.reference and onnxruntime step by "
                "(mel(upper) - mel(lower)) / (num_mel_bins + 2), so their highest band ends below upper_edge_hertz")
    return None


def _mel_shape(p) -> Shape:
    n, d, sr, lo, hi = p
    return Shape(f"bins={n}/dft={d}/sr={sr}/{lo:g}-{hi:g}Hz", {k: "" for k in _MEL_NAMES},
                 values=dict(zip(_MEL_NAMES, (n, d, sr, lo, hi))))


MEL_SHAPES = tuple(_mel_shape(p) for p in MEL_PARAMS)


def _mel_placeholders(rng, ctx, shapes):
    return [np.zeros(s) if V.kind(ctx.types[k]) == V.FLOAT else np.full(s, 1, dtype=object)
            for k, s in zip(ctx.types, shapes)]


def _mel_per_type(version, combo):
    """Every parameter set for float/double outputs (int64 sizes, float frequencies), two cases for
    the other combinations."""
    if combo["T3"] in ("float", "double") and combo["T1"] == "int64" and combo["T2"] == "float":
        return len(MEL_SHAPES)
    return 2


MEL_WEIGHT_MATRIX = Entry(
    "MelWeightMatrix", _mel_oracle, family="shaped", shapes=MEL_SHAPES, tolerance=_mel_tolerance,
    int_numerics={"params": _mel_placeholders}, numerics_classes=lambda t: ("params",),
    type_attrs=lambda v, combo: {"output_datatype": V.elem(combo["T3"])} if combo["T3"] != "float" else {},
    per_type=_mel_per_type, contested=_mel_contested,
    errors=(Err("output_datatype 'Strictly must be one of the values from DataType enum ... T3': 8 (STRING) is not",
                "output_datatype-string", {"output_datatype": V.elem("string")}, ((), (), (), (), ()),
                values=dict(zip(_MEL_NAMES, MEL_PARAMS[0])), out_types={"output": "string"}),),
)


ENTRIES = (HANN_WINDOW, HAMMING_WINDOW, BLACKMAN_WINDOW, DFT, STFT, MEL_WEIGHT_MATRIX)
register_entries(ENTRIES, family="signal")
