"""Float64 oracles, error bounds and legitimate variants of the signal operators: the windows
(HannWindow, HammingWindow, BlackmanWindow, 17), DFT (17, 20), STFT (17) and MelWeightMatrix (17).

Conventions: a real signal is an array whose last dimension is 1, a complex one whose last
dimension is 2 (real, imaginary), as the operator text lays them out; the oracles take and
return float64 arrays in that layout (:func:`to_complex`, :func:`from_complex`).

Every oracle here is a direct sum in float64 (no FFT): ``numpy.fft`` is the tests'
independent check.  Error bounds (docs/tolerance.md, "Signal"):

* windows: the schema's function body evaluates ``a0 - a1 cos(theta) + a2 cos(2 theta)``,
  ``theta = k * (6.2831855 / N)``, in float32 whatever ``output_datatype`` is, so every output
  type is granted float32's error (:func:`window_bound`);
* DFT / STFT: per transformed line, the larger of the direct-sum bound ``(n + 6) u ||x||_1``
  and three times Higham's FFT bound ``10 log2(m) u sqrt(m) ||x||_2`` at the Bluestein size
  ``m``, in the unit roundoff ``u`` of the evaluation precision (float32 for 16-bit types), scaled
  by ``1/n`` for an inverse transform (:func:`dft_bound`).
"""

from __future__ import annotations

import math

import numpy as np

from .reduce import exact_row_sums

# ============================================================================ windows
#: (a0, a1, a2) of ``w[k] = a0 - a1 cos(2 pi k / N) + a2 cos(4 pi k / N)``: the constants of the
#: schemas' function bodies (float32 0.54347825 / 0.45652175 are 25/46 and 21/46, Harris 1978's
#: "exact" Hamming coefficients, not numpy.hamming's 0.54 / 0.46).
WINDOW_COEFFS = {
    "HannWindow": (0.5, 0.5, 0.0),
    "HammingWindow": (25.0 / 46.0, 21.0 / 46.0, 0.0),
    "BlackmanWindow": (0.42, 0.5, 0.08),
}
#: float32 2 pi as the function bodies write it.
TAU32 = np.float32(6.2831855)
U32 = 2.0 ** -24
U64 = 2.0 ** -53


def window(op: str, size: int, periodic: int = 1) -> np.ndarray:
    """The window ``op`` of length ``size`` in float64 (HannWindow-17 etc.).

    ``N = size`` when periodic (the text: "computes a window of length size + 1 and returns the
    first size points"), ``size - 1`` when symmetric; ``w[k] = a0 - a1 cos(2 pi k / N) + a2
    cos(4 pi k / N)`` for ``k`` in ``[0, size)``, the cosines exact at the quarter turns and the
    three terms summed with one rounding (``math.fsum``), so Blackman's ``0.42 + 0.5 + 0.08`` is 1.  A symmetric window of size 1 (``N = 0``) is
    ``[1]`` (the limit every signal library returns; the function body divides by zero there:
    the entry marks the case contested).  Size 0: an empty window.

    Raises:
        ValueError: a negative size or an unknown operator.
    """
    a0, a1, a2 = WINDOW_COEFFS[op]
    size = int(size)
    if size < 0:
        raise ValueError(f"{op}: negative size {size}")
    n = size if periodic else size - 1
    if n == 0:
        return np.ones(size, dtype=np.float64)
    out = np.empty(size, dtype=np.float64)
    for k in range(size):
        out[k] = math.fsum((a0, -a1 * _cos_turn(k, n), a2 * _cos_turn(2 * k, n)))
    return out


def _cos_turn(k: int, n: int) -> float:
    """``cos(2 pi k / n)``, exact at the quarter turns (so a window's exact 0 and 1 stay exact)."""
    k %= n
    if (4 * k) % n == 0:
        return (1.0, 0.0, -1.0, 0.0)[4 * k // n]
    return math.cos(2.0 * math.pi * k / n)


def window_float32(op: str, size: int, periodic: int = 1, cos=np.cos) -> np.ndarray:
    """The function body's evaluation, node by node in float32 (``cos`` replaceable: a libm a
    few ulp off is legitimate).  Symmetric size 1 gives NaN (``Div(Tau, 0) * 0``)."""
    f = np.float32
    a0, a1, a2 = (f(c) for c in {"HannWindow": (0.5, 0.5, 0.0), "HammingWindow": (0.54347825, 0.45652175, 0.0),
                                 "BlackmanWindow": (0.42, 0.5, 0.08)}[op])
    size_fp = f(int(size))
    n = size_fp if periodic else size_fp - f(1)
    with np.errstate(all="ignore"):
        inc = TAU32 / n
        th = (np.arange(int(size), dtype=np.float32) * inc).astype(np.float32)
        c1 = np.asarray(cos(th), dtype=np.float32)
        c2 = np.asarray(cos((th * f(2)).astype(np.float32)), dtype=np.float32)
        return ((a0 - a1 * c1) + a2 * c2).astype(np.float32)


def window_bound(op: str) -> float:
    """Absolute error bound of a float32 evaluation of the window (any output type).

    The angle ``k * (Tau32 / N)``: Tau32's relative error (0.23 u), the division and the product
    (1/2 u each) make ``|d theta| <= 2 u theta <= 4 pi u`` (``theta <= 2 pi``); the output moves
    by at most ``(a1 + 2 a2) |d theta|``; each cos is within 4 ulp (OpenCL float ``cos``), each
    product and sum rounds once (three roundings of a value at most 1)."""
    a0, a1, a2 = WINDOW_COEFFS[op]
    return U32 * ((a1 + 2.0 * a2) * 4.0 * math.pi + 4.0 * (a1 + a2) + 3.0)


# ============================================================================ complex layout
def to_complex(x: np.ndarray) -> np.ndarray:
    """``[..., 1]`` (real) or ``[..., 2]`` (real, imaginary) -> complex128 ``[...]``.

    Raises:
        ValueError: the last dimension is neither 1 nor 2.
    """
    x = np.asarray(x, dtype=np.float64)
    if x.ndim == 0 or x.shape[-1] not in (1, 2):
        raise ValueError(f"the last dimension must be 1 (real) or 2 (complex), got shape {x.shape}")
    if x.shape[-1] == 1:
        return x[..., 0].astype(np.complex128)
    return x[..., 0] + 1j * x[..., 1]


def from_complex(z: np.ndarray) -> np.ndarray:
    """complex ``[...]`` -> float64 ``[..., 2]``."""
    z = np.asarray(z)
    return np.stack([z.real, z.imag], axis=-1).astype(np.float64)


# ============================================================================ DFT
def dft_matrix(n: int, inverse: bool = False) -> np.ndarray:
    """``W[k, j] = exp(-+2 pi i k j / n)`` in float64 (``k j`` reduced mod ``n`` exactly, so the
    angle is accurate for every ``n``)."""
    kj = (np.arange(n)[:, None] * np.arange(n)[None, :]) % max(n, 1)
    sign = 1.0 if inverse else -1.0
    return np.exp(sign * 2j * np.pi * kj / max(n, 1))


def dft_axis(rank: int, axis: int) -> int:
    """The signal axis of a DFT input of rank ``rank`` (last dimension the complex one): ``axis``
    in ``[-r, -2] U [0, r - 2]`` (the text), negative counted from the back.

    Raises:
        ValueError: outside that range.
    """
    if not (-rank <= axis <= -2 or 0 <= axis <= rank - 2):
        raise ValueError(f"axis {axis} outside [-{rank}, -2] U [0, {rank - 2}]")
    return axis + rank if axis < 0 else axis


def default_dft_length(dim: int, onesided: int, inverse: int) -> int:
    """dft_length when the input is omitted: the axis dimension, ``2 (dim - 1)`` for the IRFFT."""
    return 2 * (dim - 1) if (onesided and inverse) else dim


def _fit(z: np.ndarray, axis: int, n: int) -> np.ndarray:
    """Zero-pad or truncate ``z`` to ``n`` along ``axis``."""
    m = z.shape[axis]
    if m >= n:
        return np.take(z, np.arange(n), axis=axis)
    pad = [(0, 0)] * z.ndim
    pad[axis] = (0, n - m)
    return np.pad(z, pad)


def _transform(z: np.ndarray, axis: int, n: int, inverse: bool) -> np.ndarray:
    """Direct float64 sum along ``axis`` of ``z`` (length ``n`` already)."""
    w = dft_matrix(n, inverse)
    y = np.moveaxis(np.tensordot(w, np.moveaxis(z, axis, 0), axes=(1, 0)), 0, axis)
    return y / n if inverse and n else y


def hermitian_full(z: np.ndarray, axis: int, n: int) -> np.ndarray:
    """The full spectrum of length ``n`` from its first ``n // 2 + 1`` bins (IRFFT): ``X[n - k] =
    conj(X[k])``; the imaginary parts of the DC (and, for even ``n``, the Nyquist) bin are
    dropped, as every real inverse does (``numpy.fft.irfft``).

    Raises:
        ValueError: ``z`` has fewer than ``n // 2 + 1`` bins along ``axis``.
    """
    h = n // 2 + 1
    if z.shape[axis] < h:
        raise ValueError(f"IRFFT of length {n} needs {h} bins, got {z.shape[axis]}")
    half = np.moveaxis(np.take(z, np.arange(h), axis=axis), axis, 0).copy()
    half[0] = half[0].real
    if n % 2 == 0 and n:
        half[h - 1] = half[h - 1].real
    rest = np.conj(half[1:(n + 1) // 2][::-1])
    full = np.concatenate([half, rest], axis=0)
    return np.moveaxis(full, 0, axis)


def dft(x: np.ndarray, *, axis: int, dft_length: int | None = None, inverse: int = 0, onesided: int = 0) -> np.ndarray:
    """DFT-17/20 in float64 (the text's sums, directly).

    Args:
        x: ``[..., 1]`` real or ``[..., 2]`` complex.
        axis: the signal axis, ``[-r, -2] U [0, r - 2]``.
        dft_length: ``None``: :func:`default_dft_length`.
        inverse / onesided: the attributes.

    Returns:
        ``[..., n or n // 2 + 1, ..., 2]`` (complex) or, for the IRFFT, ``[..., n, ..., 1]`` (real).

    Raises:
        ValueError: an invalid axis, a last dimension not 1 or 2, RFFT of a complex input, IRFFT of
        a real input, a non-positive dft_length.
    """
    x = np.asarray(x, dtype=np.float64)
    a = dft_axis(x.ndim, int(axis))
    real = x.shape[-1] == 1
    z = to_complex(x)
    n = default_dft_length(x.shape[a], onesided, inverse) if dft_length is None else int(dft_length)
    if n <= 0:
        raise ValueError(f"dft_length must be positive, got {n}")
    if onesided and not inverse and not real:
        raise ValueError("onesided=1, inverse=0 (RFFT) supports only real input")
    if onesided and inverse:
        if real:
            raise ValueError("onesided=1, inverse=1 (IRFFT) supports only complex input")
        full = hermitian_full(z, a, n)
        return _transform(full, a, n, True).real[..., None]
    y = _transform(_fit(z, a, n), a, n, bool(inverse))
    if onesided:
        y = np.take(y, np.arange(n // 2 + 1), axis=a)
    return from_complex(y)


def bluestein_size(n: int) -> int:
    """The power of two ``>= 2 n - 1`` (Bluestein's convolution length)."""
    return 1 << max(0, (2 * n - 2).bit_length())


def line_bound(n: int, l1: np.ndarray, l2: np.ndarray, u: float) -> np.ndarray:
    """Absolute error bound of a length-``n`` transform of lines with L1 norms ``l1`` and L2
    norms ``l2`` (complex moduli) evaluated with unit roundoff ``u``: the larger of

    * a direct sum: ``(n + 6) u ||x||_1`` (n - 1 additions, the complex product with a twiddle
      within a few ulp; Higham, *Accuracy and Stability*, 2nd ed., §3.1 and Lemma 3.5);
    * three FFTs at the Bluestein size ``m`` (the largest a mixed-radix, split-radix or
      Bluestein kernel does): ``3 * 10 log2(m) u sqrt(m) ||x||_2`` (Higham Thm 24.2: a radix-2
      FFT of length m has ``||y^ - y||_2 <= log2(m) eta / (1 - log2(m) eta) ||y||_2``,
      ``eta <= 10 u`` with twiddles within a few ulp, and ``||y||_2 = sqrt(m) ||x||_2``)."""
    m = bluestein_size(n)
    direct = (n + 6) * u * l1
    fft = 3.0 * 10.0 * max(1.0, math.log2(m)) * u * math.sqrt(m) * l2
    return np.maximum(direct, fft)


def line_norms(z: np.ndarray, axis: int) -> tuple[np.ndarray, np.ndarray]:
    """``(L1, L2)`` norms of the complex lines of ``z`` along ``axis`` (float64 arrays of ``z``'s
    shape without ``axis``), for :func:`line_bound`.  Machine-independent, so a derived tolerance
    has the same bytes on every machine (docs/running.md, "Bytes across machines"): each modulus
    is ``np.hypot`` (libm's; numpy's complex ``abs`` has X86_V3 / X86_V4 loops that round
    differently, which moved 9 DFT tolerances), each norm's sum is correctly rounded
    (:func:`conformance.reference.reduce.exact_row_sums`), and ``L2 = sqrt(sum(re^2 + im^2))``
    squares the parts (each product rounds once).  A sum beyond double's range is ``inf``; a NaN
    gives NaN.

    Args:
        z: complex (or real) array, at least one element along ``axis``.
        axis: the line axis (negative counts from the back).
    """
    z = np.moveaxis(np.asarray(z, dtype=np.complex128), axis, -1)
    re, im = z.real, z.imag
    with np.errstate(over="ignore"):
        l1 = exact_row_sums(np.hypot(re, im))
        l2 = np.sqrt(exact_row_sums(np.concatenate([re * re, im * im], axis=-1)))
    return l1, l2


def unit_roundoff(t: str) -> float:
    """The evaluation precision's unit roundoff: double's for double, float32's otherwise (16-bit
    types are evaluated in float32, the precision their kernels accumulate in)."""
    return U64 if t == "double" else U32


def dft_bound(x: np.ndarray, t: str, *, axis: int, dft_length: int | None = None, inverse: int = 0,
              onesided: int = 0) -> float:
    """The largest absolute error bound over the lines of a DFT (:func:`line_bound` of the lines
    the transform sees: padded or truncated, Hermitian-extended for the IRFFT), divided by ``n``
    for an inverse (the scale's own rounding is the relative term)."""
    x = np.asarray(x, dtype=np.float64)
    a = dft_axis(x.ndim, int(axis))
    z = to_complex(x)
    n = default_dft_length(x.shape[a], onesided, inverse) if dft_length is None else int(dft_length)
    if onesided and inverse:
        z = hermitian_full(z, a, n)
    else:
        z = _fit(z, a, n)
    if z.size == 0:
        return 0.0
    l1, l2 = line_norms(z, a)
    b = line_bound(n, l1, l2, unit_roundoff(t))
    return float(np.max(b)) / (n if inverse else 1)


# ============================================================================ STFT
def stft_geometry(signal_length: int, frame_step: int, window_length: int | None,
                  frame_length: int | None) -> tuple[int, int]:
    """``(frame_length, frames)`` of STFT-17: frame_length from the input, else the window's
    length, else the signal's; ``frames = floor((signal_length - frame_length) / frame_step) + 1``.

    Raises:
        ValueError: a non-positive frame_step or frame_length, a window whose length differs from
        frame_length, a frame longer than the signal.
    """
    fl = frame_length if frame_length is not None else (window_length if window_length is not None
                                                         else signal_length)
    if frame_step <= 0 or fl <= 0:
        raise ValueError(f"frame_step {frame_step} and frame_length {fl} must be positive")
    if window_length is not None and window_length != fl:
        raise ValueError(f"the window's length {window_length} must equal frame_length {fl}")
    if fl > signal_length:
        raise ValueError(f"frame_length {fl} exceeds the signal's length {signal_length}")
    return fl, (signal_length - fl) // frame_step + 1


def stft_frames(signal: np.ndarray, frame_step: int, window=None, frame_length=None) -> tuple[np.ndarray, int]:
    """The windowed frames ``[batch, frames, frame_length]`` (complex) and frame_length."""
    z = to_complex(signal)
    if z.ndim != 2:
        raise ValueError(f"the signal must have rank 3, got {z.ndim + 1}")
    wl = None if window is None else int(np.asarray(window).shape[0])
    fl, frames = stft_geometry(z.shape[1], int(frame_step), wl, None if frame_length is None else int(frame_length))
    idx = np.arange(frames)[:, None] * int(frame_step) + np.arange(fl)[None, :]
    fr = z[:, idx] if z.shape[0] else np.zeros((0, frames, fl), dtype=np.complex128)
    if window is not None:
        fr = fr * np.asarray(window, dtype=np.float64)[None, None, :]
    return fr, fl


def stft(signal: np.ndarray, frame_step: int, window=None, frame_length=None, onesided: int = 1) -> np.ndarray:
    """STFT-17 in float64: ``[batch, frames, bins, 2]``, ``bins = frame_length // 2 + 1`` when
    onesided, else frame_length.

    Raises:
        ValueError: :func:`stft_geometry`'s errors, a rank other than 3, onesided with a complex
        signal ("if the input or window tensors are complex, then onesided output is not possible").
    """
    signal = np.asarray(signal, dtype=np.float64)
    if signal.ndim != 3:
        raise ValueError(f"the signal must have rank 3, got {signal.ndim}")
    if onesided and signal.shape[-1] == 2:
        raise ValueError("onesided output is not possible with a complex signal")
    fr, fl = stft_frames(signal, frame_step, window, frame_length)
    y = _transform(fr, 2, fl, False)
    if onesided:
        y = y[:, :, : fl // 2 + 1]
    return from_complex(y)


def stft_bound(signal: np.ndarray, t: str, frame_step: int, window=None, frame_length=None) -> float:
    """:func:`line_bound` of the windowed frames with ``n + 1`` terms (the product with the window
    rounds once more)."""
    fr, fl = stft_frames(np.asarray(signal, dtype=np.float64), frame_step, window, frame_length)
    if fr.size == 0:
        return 0.0
    b = line_bound(fl + 1, *line_norms(fr, -1), unit_roundoff(t))
    return float(np.max(b))


# ============================================================================ MelWeightMatrix
def hz_to_mel(f):
    """``mel(f) = 2595 log10(1 + f / 700)`` (the text)."""
    return 2595.0 * np.log10(1.0 + np.asarray(f, dtype=np.float64) / 700.0)


def mel_to_hz(m):
    """The inverse of :func:`hz_to_mel`."""
    return 700.0 * (10.0 ** (np.asarray(m, dtype=np.float64) / 2595.0) - 1.0)


def mel_band_edges(num_mel_bins: int, dft_length: int, sample_rate: int, lower: float, upper: float,
                   spacing: str = "text") -> np.ndarray:
    """The ``num_mel_bins + 2`` band edges as spectrogram bin indices:
    ``floor((dft_length + 1) * hz / sample_rate)`` of points equally spaced in mel.

    ``spacing="text"``: the points span ``[mel(lower), mel(upper)]`` (step ``/(num_mel_bins + 1)``:
    the text's "upper_edge_hertz: the desired top edge of the highest frequency band");
    ``"runtime"``: step ``/(num_mel_bins + 2)``, so the last point falls short of the upper edge
    (onnx.reference and onnxruntime)."""
    lo, hi = hz_to_mel(lower), hz_to_mel(upper)
    k = np.arange(num_mel_bins + 2, dtype=np.float64)
    div = num_mel_bins + 1 if spacing == "text" else num_mel_bins + 2
    hz = mel_to_hz(lo + k * (hi - lo) / div)
    return np.floor((dft_length + 1) * hz / sample_rate).astype(np.int64)


def mel_weight_matrix(num_mel_bins: int, dft_length: int, sample_rate: int, lower: float, upper: float,
                      spacing: str = "text") -> np.ndarray:
    """MelWeightMatrix-17 in float64: ``[dft_length // 2 + 1, num_mel_bins]``, band ``i`` a triangle
    over the bin indices ``edges[i] .. edges[i + 2]`` with its peak 1.0 at ``edges[i + 1]``:
    ``(j - left) / (center - left)`` rising, ``(right - j) / (right - center)`` falling, a single 1
    at the center where ``left == center`` (:func:`mel_band_edges`).

    Raises:
        ValueError: non-positive sizes, ``lower`` outside ``[0, upper)``, an edge beyond the last
        spectrogram bin.
    """
    if num_mel_bins <= 0 or dft_length <= 0 or sample_rate <= 0:
        raise ValueError("num_mel_bins, dft_length and sample_rate must be positive")
    if not 0 <= lower < upper:
        raise ValueError(f"lower_edge_hertz {lower} must be in [0, upper_edge_hertz {upper})")
    bins = dft_length // 2 + 1
    e = mel_band_edges(num_mel_bins, dft_length, sample_rate, lower, upper, spacing)
    if e[-1] >= bins + 1:
        raise ValueError(f"band edge {e[-1]} beyond the {bins} spectrogram bins")
    out = np.zeros((bins, num_mel_bins), dtype=np.float64)
    for i in range(num_mel_bins):
        left, center, right = int(e[i]), int(e[i + 1]), int(e[i + 2])
        if center == left:
            if center < bins:
                out[center, i] = 1.0
        else:
            for j in range(left, min(center, bins - 1) + 1):
                out[j, i] = (j - left) / (center - left)
        if right > center:
            for j in range(center, min(right, bins)):
                out[j, i] = (right - j) / (right - center)
    return out


def mel_float32_edges(num_mel_bins: int, dft_length: int, sample_rate: int, lower: float, upper: float,
                      spacing: str = "text") -> np.ndarray:
    """:func:`mel_band_edges` evaluated in float32 (a legitimate kernel's arithmetic)."""
    f = np.float32
    lo = f(2595) * np.log10(f(1) + f(lower) / f(700))
    hi = f(2595) * np.log10(f(1) + f(upper) / f(700))
    k = np.arange(num_mel_bins + 2, dtype=np.float32)
    div = f(num_mel_bins + 1 if spacing == "text" else num_mel_bins + 2)
    hz = f(700) * (f(10) ** ((lo + k * ((hi - lo) / div)) / f(2595)) - f(1))
    return np.floor(f(dft_length + 1) * hz / f(sample_rate)).astype(np.int64)


def mel_edges_stable(num_mel_bins: int, dft_length: int, sample_rate: int, lower: float, upper: float,
                     spacing: str = "text", margin: float = 1e-4) -> bool:
    """Whether every edge's ``(dft_length + 1) hz / sample_rate`` is at least ``margin`` away from
    an integer (relative), so float32 and float64 kernels floor it alike."""
    lo, hi = hz_to_mel(lower), hz_to_mel(upper)
    k = np.arange(num_mel_bins + 2, dtype=np.float64)
    div = num_mel_bins + 1 if spacing == "text" else num_mel_bins + 2
    v = (dft_length + 1) * mel_to_hz(lo + k * (hi - lo) / div) / sample_rate
    frac = v - np.floor(v)
    # an edge at 0 Hz is 0 in every precision (mel(0) = 0 and back)
    ok = (np.minimum(frac, 1 - frac) > margin * np.maximum(1.0, np.abs(v))) | ((k == 0) & (lower == 0))
    return bool(np.all(ok))
