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
frame_length, a last dimension of 3.

**MelWeightMatrix.**  Parameter sets (num_mel_bins 1-40, dft_length odd and even, the common
sample rates, lower edge 0 and above, upper edge below and at Nyquist) whose band edges float32
and float64 floor alike; every T1, T2, T3.  The band spacing: the text's upper_edge_hertz is "the
desired top edge of the highest frequency band", so the oracle spaces ``num_mel_bins + 2`` edges
over ``[mel(lower), mel(upper)]``; onnx.reference and onnxruntime divide by ``num_mel_bins + 2``
(their last edge falls short of upper_edge_hertz): the cases where the two readings give other
bins are **contested**, the others are not.
"""

from __future__ import annotations

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

ENTRIES = (HANN_WINDOW, HAMMING_WINDOW, BLACKMAN_WINDOW)
register_entries(ENTRIES, family="signal")
