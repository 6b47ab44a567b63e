"""Tests of the signal entries (``conformance/ops/signal.py``, oracles and bounds in
``conformance/reference/signal.py``).

* the oracles against independent formulas: numpy's windows (hanning, blackman; numpy.hamming's
  0.54/0.46 differ from the schema's 25/46, 21/46 by exactly the asserted amount), the text's
  periodic rule (the first ``size`` points of a symmetric window of ``size + 1``), numpy.fft
  (fft, ifft, rfft, irfft) for DFT and STFT, an explicit loop for STFT's framing, onnx's node
  tests (hannwindow, dft, stft, melweightmatrix);
* agreement with ``onnx.reference`` on every generated case, each disagreement explained;
* numpy kernels through ``KernelBackend``: legitimate ones (the windows' function body in float32
  with an exact or a 3-ulp-off cos, or in float64; DFT/STFT by a float32 direct sum, numpy's
  float32 pocketfft, a radix-2 float32 FFT with a direct sum for the odd factors, float64) pass
  every uncontested case; the deliberately wrong ones fail cases they target.
"""

from __future__ import annotations

from collections import Counter

import ml_dtypes
import numpy as np
import onnx
import pytest

from conformance.backends import resolve_backend
from conformance.backends.kernel import KernelBackend
from conformance.ops import signal, values as V
from conformance.reference import signal as ref
from conformance.runner import run_cases
from oracle_checks import single_node_tests, sort_findings  # tests/oracle_checks.py

pytestmark = pytest.mark.filterwarnings("ignore::RuntimeWarning")
OPS = ["HannWindow", "HammingWindow", "BlackmanWindow", "DFT", "STFT", "MelWeightMatrix"]
E = {e.op: e for e in signal.ENTRIES}
WINDOWS = ("HannWindow", "HammingWindow", "BlackmanWindow")


def _feeds(case):
    """The inputs of a case by name, graph inputs and initializers together (absent: None)."""
    ds = case.datasets[0].inputs
    return {i.name: (ds[i.name] if i.name in ds else i.value) if i.present else None for i in case.inputs}


def _np_type(elem: int):
    name = V.name_of(int(elem))
    return np.dtype(ml_dtypes.bfloat16) if name == "bfloat16" else V.np_dtype(name)


def _run(cases, kernels, name, check=True):
    return run_cases(cases, KernelBackend(kernels, name=name, check=check))


# ============================================================================ windows: oracle
@pytest.mark.parametrize("size", [2, 3, 4, 7, 8, 17, 64, 1000])
def test_window_oracle_is_numpy_and_the_periodic_rule(size):
    assert np.allclose(ref.window("HannWindow", size, 0), np.hanning(size), rtol=0, atol=1e-15)
    assert np.allclose(ref.window("BlackmanWindow", size, 0), np.blackman(size), rtol=0, atol=1e-15)
    # numpy.hamming is 0.54 - 0.46 cos; the schema's function body has 25/46 - 21/46 cos
    k = np.arange(size)
    c = np.cos(2 * np.pi * k / (size - 1))
    assert np.allclose(ref.window("HammingWindow", size, 0) - np.hamming(size), (25 / 46 - 0.54) * (1 + c), atol=1e-15)
    assert np.max(np.abs(ref.window("HammingWindow", size, 0) - np.hamming(size))) > 6e-3
    for op in WINDOWS:
        # "hann computes a window of length size + 1 and returns the first size points"
        assert np.array_equal(ref.window(op, size, 1), ref.window(op, size + 1, 0)[:size])


def test_window_oracle_edges_and_exact_values():
    for op in WINDOWS:
        assert ref.window(op, 0, 1).shape == ref.window(op, 0, 0).shape == (0,)
        assert ref.window(op, 1, 0).tolist() == [1.0]  # the one-point symmetric window (contested)
        a0, a1, a2 = ref.WINDOW_COEFFS[op]
        assert ref.window(op, 1, 1).tolist() == [pytest.approx(a0 - a1 + a2, abs=1e-16)]
    assert ref.window("BlackmanWindow", 8, 1)[4] == 1.0  # 0.42 + 0.5 + 0.08, exactly
    assert ref.window("HannWindow", 2, 1).tolist() == [0.0, 1.0]
    assert ref.window("HannWindow", 5, 0).tolist() == [0.0, 0.5, 1.0, 0.5, 0.0]
    with pytest.raises(ValueError):
        ref.window("HannWindow", -1)


def test_window_function_body_float32_is_within_the_bound():
    for op in WINDOWS:
        for size in (2, 3, 7, 8, 16, 17, 64, 65, 1000):
            for periodic in (0, 1):
                e = ref.window(op, size, periodic)
                got = ref.window_float32(op, size, periodic).astype(np.float64)
                err = np.max(np.abs(got - e))
                assert err <= ref.window_bound(op), (op, size, periodic, err)
        assert np.isnan(ref.window_float32(op, 1, 0)).all()  # the body's 0/0


def test_window_oracle_reproduces_the_node_tests():
    tests = single_node_tests(WINDOWS, ("hannwindow", "hammingwindow", "blackmanwindow"))
    assert len(tests) >= 6
    for t in tests:
        node = t.model.graph.node[0]
        attrs = {a.name: onnx.helper.get_attribute_value(a) for a in node.attribute}
        for ins, outs in t.data_sets:
            got = ref.window(node.op_type, int(ins[0]), int(attrs.get("periodic", 1)))
            assert np.max(np.abs(got - outs[0])) <= ref.window_bound(node.op_type), t.name


# ============================================================================ windows: kernels
def window_kernel(op, mode="float32", flaw=None):
    """A window kernel: ``float32`` the function body node by node, ``float32-cos3ulp`` the same with
    a cos 3 ulp off, ``float64`` the formula in double.  Flaws: ``swap-periodic`` (symmetric when
    periodic is asked and vice versa), ``numpy-hamming`` (0.54 / 0.46), ``always-float``
    (output_datatype ignored)."""

    def cos3(x):
        c = np.cos(x.astype(np.float64)).astype(np.float32)
        return np.nextafter(np.nextafter(np.nextafter(c, np.float32(2)), np.float32(2)), np.float32(2))

    def kernel(inputs, attrs, outputs, opset):
        size = np.asarray(inputs["size"])
        if size.ndim != 0:
            raise ValueError("size must be a scalar")
        dt = int(attrs.get("output_datatype", 1))
        if V.kind(V.name_of(dt)) not in (V.FLOAT, V.INT):
            raise ValueError("output_datatype outside T2")
        periodic = int(attrs.get("periodic", 1))
        if flaw == "swap-periodic":
            periodic = 1 - periodic
        n = int(size)
        if flaw == "numpy-hamming" and op == "HammingWindow":
            m = n if periodic else n - 1
            w = 0.54 - 0.46 * np.cos(2 * np.pi * np.arange(n) / m)
        elif mode == "float64":
            m = n if periodic else n - 1
            th = 2 * np.pi * np.arange(n) / m if m else np.zeros(n)
            a0, a1, a2 = ref.WINDOW_COEFFS[op]
            w = a0 - a1 * np.cos(th) + a2 * np.cos(2 * th)
            if m == 0:
                w = np.ones(n)
        else:
            w = ref.window_float32(op, n, periodic, cos=cos3 if mode == "float32-cos3ulp" else np.cos)
        out = np.asarray(w).astype(np.float32 if flaw == "always-float" else _np_type(dt))
        return {outputs[0]: out}

    return kernel


def _window_kernels(mode="float32", flaw=None):
    return {op: window_kernel(op, mode, flaw) for op in WINDOWS}


@pytest.mark.parametrize("mode", ["float32", "float32-cos3ulp", "float64"])
def test_legitimate_window_kernels_pass_every_uncontested_case(mode, value_cases):
    cases = [c for c in value_cases if c.op in WINDOWS and not c.contested]
    assert len(cases) > 200
    results = _run(cases, _window_kernels(mode), mode)
    bad = [(c.id, r.outcome, r.message[:200]) for c, r in zip(cases, results) if r.outcome != "pass"]
    assert not bad, bad[:5]


WRONG_WINDOWS = {
    # flaw: (filter on value cases, at least this many fails)
    "swap-periodic": (lambda c: c.tags["dtype"] and c.attributes.get("output_datatype", 1) in (1, 11)
                      and int(np.asarray(_feeds(c)["size"])) >= 3, 40),
    "numpy-hamming": (lambda c: c.op == "HammingWindow" and c.attributes.get("output_datatype", 1) in (1, 11)
                      and int(np.asarray(_feeds(c)["size"])) >= 1, 15),
    "always-float": (lambda c: c.attributes.get("output_datatype", 1) != 1, 60),
}


@pytest.mark.parametrize("flaw", sorted(WRONG_WINDOWS))
def test_wrong_window_kernels_are_caught(flaw, value_cases):
    keep, least = WRONG_WINDOWS[flaw]
    cases = [c for c in value_cases if c.op in WINDOWS and not c.contested and keep(c)]
    assert len(cases) >= least
    results = _run(cases, _window_kernels(flaw=flaw), flaw, check=False)
    fails = [c for c, r in zip(cases, results) if r.outcome == "fail"]
    assert len(fails) >= least, Counter(r.outcome for r in results)
    if flaw == "swap-periodic":  # every float window of 3 or more points catches it
        assert len(fails) == len(cases)


def test_window_error_cases_are_rejected(suite):
    cases = [c for c in suite if c.expect_error and c.op in WINDOWS]
    assert {c.tags["error"] for c in cases} == {"size-rank1", "output_datatype-string"}
    results = _run(cases, _window_kernels(), "legit")
    assert all(r.outcome == "pass" for r in results), [(c.id, r.message[:100]) for c, r in zip(cases, results)
                                                        if r.outcome != "pass"]


def test_window_contested_cases(value_cases):
    con = [c for c in value_cases if c.op in WINDOWS and c.contested]
    sizes = Counter((c.op, int(np.asarray(_feeds(c)["size"])), c.attributes.get("periodic", 1)) for c in con)
    for c in con:
        size = int(np.asarray(_feeds(c)["size"]))
        exact = ref.window(c.op, size, c.attributes.get("periodic", 1))
        assert (size == 1 and c.attributes.get("periodic", 1) == 0) or (
            V.kind(V.name_of(int(c.attributes.get("output_datatype", 1)))) == V.INT
            and 1.0 in exact.tolist()), c.id
    assert {op for op, s, p in sizes if s > 1} == set(WINDOWS)
    # the function body's NaN fails them; the oracle's reading passes
    res = _run(con, _window_kernels("float32"), "body", check=False)
    assert any(r.outcome == "fail" for r in res)


def test_window_coverage(value_cases):
    for op in WINDOWS:
        cs = [c for c in value_cases if c.op == op]
        dts = {c.attributes.get("output_datatype", 1) for c in cs}
        allowed = {V.elem(t) for t in ("uint8", "uint16", "uint32", "uint64", "int8", "int16", "int32", "int64",
                                       "float16", "float", "double", "bfloat16")}
        assert dts == allowed
        sizes = {(int(np.asarray(_feeds(c)["size"])), c.attributes.get("periodic", "absent")) for c in cs}
        for s in (0, 1, 2):
            assert any(x == s for x, _ in sizes)
        assert {(1, 0), (1, 1), (2, 0), (2, 1)} <= sizes
        assert {p for _, p in sizes} == {0, 1, "absent"}
        assert 60 <= len(cs) <= 200


# ============================================================================ onnx.reference
def _reference_disagreement(case, res) -> str | None:
    """Why onnx.reference (onnx 1.23.2) and the suite disagree; None if unknown.

    * ``window-symmetric-size1`` (contested): onnx.reference divides by ``size - 1 = 0``: NaN
      (or garbage after a cast to an integer type).
    * ``window-float16-arithmetic``: onnx.reference evaluates the window in the output type
      (``np.arange(size, dtype=output type)``); for float16 that is float16 arithmetic, several
      float16 ulps off (a symmetric Hann window of size 2 ends in 9.5e-7, not 0), beyond the
      float32 function body's error.  Its integer and bfloat16 outputs agree.
    * ``window-int-one`` (contested): an exact 1 with an integer output; onnx 1.23.2 gives the exact
      1 on every such case of the suite, so the reason stays unused unless its float64 arithmetic
      lands below 1.
    * ``window-no-validation``: the error models are run, not rejected.
    * ``dft-no-mode-validation``: DFT with onesided=1 runs a complex input forward (RFFT) and a
      real input inverse (IRFFT), which the text excludes ("only real input is supported",
      "only complex input is supported").
    * ``mel-band-spacing`` (contested): onnx.reference steps by ``(mel(upper) - mel(lower)) /
      (num_mel_bins + 2)`` (its highest band ends below upper_edge_hertz); the test below shows its
      output is exactly the oracle's other reading.
    * ``mel-16bit-arithmetic``: with bfloat16 frequencies onnx.reference evaluates the mel scale in
      bfloat16 (``lower_edge_hertz / 700`` and the logarithm in 8 bits), moving band edges by a bin.
    * ``mel-no-validation``: output_datatype STRING is run.
    * ``stft-16bit-arithmetic``: STFT of float16/bfloat16 signals is computed in the 16-bit type
      (frames, window products and the transform), so its error grows to several ulps of the
      output's scale (bfloat16: whole units on offset signals); the text's kernels accumulate in
      float32 at least (a float16 DFT in onnx.reference is computed wider and passes).
    * ``stft-no-validation``: STFT runs onesided=1 with a complex signal and a window whose length
      differs from frame_length; the text forbids both.
    """
    if case.op == "MelWeightMatrix":
        if case.expect_error:
            return "mel-no-validation"
        if case.contested:
            return "mel-band-spacing"
        if case.inputs[3].elem_type in (V.elem("bfloat16"), V.elem("float16")):
            return "mel-16bit-arithmetic"
        return None
    if case.op == "STFT":
        if case.expect_error:
            return "stft-no-validation" if case.tags["error"] in ("onesided-complex", "window-length") else None
        if case.tags["dtype"] in ("float16", "bfloat16"):
            return "stft-16bit-arithmetic"
        return None
    if case.op == "DFT":
        if case.expect_error and case.tags["error"] in ("rfft-complex", "irfft-real"):
            return "dft-no-mode-validation"
        return None
    if case.op in WINDOWS:
        if case.expect_error:
            return "window-no-validation"
        size = int(np.asarray(_feeds(case)["size"]))
        if size == 1 and case.attributes.get("periodic", 1) == 0:
            return "window-symmetric-size1"
        if case.contested:
            return "window-int-one"
        dt = V.name_of(int(case.attributes.get("output_datatype", 1)))
        if dt == "float16":
            return "window-float16-arithmetic"
    return None


def test_agreement_with_onnx_reference(suite):
    results = run_cases(suite, resolve_backend("onnx-reference"))
    why, unexplained = sort_findings(suite, results, _reference_disagreement)
    assert not unexplained, unexplained[:5]
    assert {"window-symmetric-size1", "window-float16-arithmetic", "dft-no-mode-validation", "stft-16bit-arithmetic",
            "stft-no-validation", "mel-band-spacing", "mel-no-validation"} <= set(why), why
    # onnx.reference's MelWeightMatrix is exactly the runtimes' spacing wherever the frequencies are
    # float: the contested reading, and nothing else
    ref_mel = [(c, r) for c, r in zip(suite, results) if c.op == "MelWeightMatrix" and c.contested
               and c.inputs[3].elem_type == V.elem("float") and c.attributes.get("output_datatype", 1) == 1]
    assert ref_mel
    be = resolve_backend("onnx-reference")
    for c, _ in ref_mel[:5]:
        f = _feeds(c)
        p = (int(f["num_mel_bins"]), int(f["dft_length"]), int(f["sample_rate"]), float(f["lower_edge_hertz"]),
             float(f["upper_edge_hertz"]))
        got = be.run(be.prepare(onnx.load_from_string(c.model_bytes), c.model_bytes), f, ["output"])[0]
        assert np.array_equal(got, ref.mel_weight_matrix(*p, spacing="runtime").astype(np.float32)), c.id
    assert not any(c.op == "DFT" and not c.expect_error and r.outcome != "pass" for c, r in zip(suite, results))


# ============================================================================ DFT: oracle
def _rand(rng, shape):
    return rng.uniform(-1, 1, size=shape)


@pytest.mark.parametrize("n", [1, 2, 5, 8, 13, 64])
def test_dft_oracle_is_numpy_fft(n):
    rng = np.random.default_rng(n)
    xc = _rand(rng, (3, n, 2))
    z = xc[..., 0] + 1j * xc[..., 1]
    got = ref.dft(xc, axis=1)
    assert np.allclose(ref.to_complex(got), np.fft.fft(z, axis=1), rtol=0, atol=1e-12)
    got = ref.dft(xc, axis=1, inverse=1)
    assert np.allclose(ref.to_complex(got), np.fft.ifft(z, axis=1), rtol=0, atol=1e-13)
    xr = _rand(rng, (3, n, 1))
    got = ref.dft(xr, axis=1, onesided=1)
    assert got.shape == (3, n // 2 + 1, 2)
    assert np.allclose(ref.to_complex(got), np.fft.rfft(xr[..., 0], axis=1), rtol=0, atol=1e-12)
    # dft_length: numpy's n pads or truncates the same way
    for m in (max(1, n - 1), n + 3):
        assert np.allclose(ref.to_complex(ref.dft(xc, axis=1, dft_length=m)), np.fft.fft(z, n=m, axis=1), atol=1e-12)
        assert np.allclose(ref.to_complex(ref.dft(xr, axis=1, dft_length=m, onesided=1)),
                           np.fft.rfft(xr[..., 0], n=m, axis=1), atol=1e-12)
    # IRFFT: numpy.irfft of the half spectrum, default length 2 (m - 1)
    h = _rand(rng, (2, n + 1, 2))
    zh = h[..., 0] + 1j * h[..., 1]
    got = ref.dft(h, axis=1, onesided=1, inverse=1)
    assert got.shape == (2, 2 * n, 1)
    assert np.allclose(got[..., 0], np.fft.irfft(zh, axis=1), atol=1e-13)
    got = ref.dft(h, axis=1, onesided=1, inverse=1, dft_length=2 * n + 1)
    assert np.allclose(got[..., 0], np.fft.irfft(zh, n=2 * n + 1, axis=1), atol=1e-13)


def test_dft_oracle_is_the_text_sum_on_every_axis():
    rng = np.random.default_rng(7)
    x = _rand(rng, (2, 3, 4, 2))
    z = x[..., 0] + 1j * x[..., 1]
    for axis in (0, 1, 2, -2, -3, -4):
        a = axis % 4
        got = ref.to_complex(ref.dft(x, axis=axis))
        n = z.shape[a]
        want = np.zeros_like(z)
        for idx in np.ndindex(*z.shape):
            k = idx[a]
            want[idx] = sum(np.exp(-2j * np.pi * k * j / n) * z[idx[:a] + (j,) + idx[a + 1:]] for j in range(n))
        assert np.allclose(got, want, atol=1e-13), axis
    for bad in (-1, 3, 4, -5):
        with pytest.raises(ValueError):
            ref.dft(x, axis=bad)
    with pytest.raises(ValueError):
        ref.dft(x, axis=1, onesided=1)  # RFFT of a complex input
    with pytest.raises(ValueError):
        ref.dft(x[..., :1], axis=1, onesided=1, inverse=1)  # IRFFT of a real input
    with pytest.raises(ValueError):
        ref.dft(np.zeros((2, 3, 3)), axis=1)


def test_dft_oracle_reproduces_the_node_tests():
    tests = single_node_tests(("DFT",), ("dft",))
    assert len(tests) >= 6
    seen = 0
    for t in tests:
        node = t.model.graph.node[0]
        attrs = {a.name: onnx.helper.get_attribute_value(a) for a in node.attribute}
        opset = next(o.version for o in t.model.opset_import if o.domain == "")
        for ins, outs in t.data_sets:
            d = dict(zip([i.name for i in t.model.graph.input], ins))
            nin = list(node.input) + ["", ""]
            x = d[nin[0]].astype(np.float64)
            n = int(d[nin[1]]) if nin[1] else None
            if opset >= 20:
                axis = int(d[nin[2]]) if nin[2] else -2
            else:
                axis = int(attrs.get("axis", 1))
            got = ref.dft(x, axis=axis, dft_length=n, inverse=attrs.get("inverse", 0), onesided=attrs.get("onesided", 0))
            b = ref.dft_bound(x, "float", axis=axis, dft_length=n, inverse=attrs.get("inverse", 0),
                              onesided=attrs.get("onesided", 0))
            assert got.shape == outs[0].shape, t.name
            # the node tests' expectations are float32 numpy results: within the float32 bound
            assert np.max(np.abs(got - outs[0])) <= b + 2 ** -23 * np.max(np.abs(got)), t.name
            seen += 1
    assert seen >= 6


def test_dft_bound_holds_for_float32_algorithms_and_is_tight():
    """The bound covers float32 direct sums and numpy's float32 FFT on long offset lines, and is
    within a few hundred of the error they make (it stays far below a wrong kernel's)."""
    rng = np.random.default_rng(1)
    for n in (8, 97, 120, 256):
        x = (_rand(rng, (2, n, 2)) + 8.0).astype(np.float32).astype(np.float64)
        e = ref.dft(x, axis=1)
        b = ref.dft_bound(x, "float", axis=1)
        z32 = (x[..., 0] + 1j * x[..., 1]).astype(np.complex64)
        fft32 = np.fft.fft(z32, axis=1)
        assert fft32.dtype == np.complex64
        w32 = ref.dft_matrix(n).astype(np.complex64)
        direct = np.einsum("kj,bj->bk", w32, z32)
        for got in (fft32, direct):
            err = np.max(np.abs(ref.from_complex(got.astype(np.complex128)) - e))
            assert err <= b, (n, err, b)
        assert b < 1e-3 * np.max(np.abs(e))  # far below the 1/n or padding errors


# ============================================================================ DFT: kernels
def _fft_radix2(z, axis, inverse, acc):
    """A radix-2 decimation-in-time FFT in ``acc`` (complex64/128) along ``axis``; odd lengths by
    a direct sum (a different algorithm, as a mixed-radix kernel has)."""
    z = np.moveaxis(z, axis, -1).astype(acc)
    n = z.shape[-1]
    sign = 1 if inverse else -1

    def rec(v):
        m = v.shape[-1]
        if m == 1:
            return v
        if m % 2:
            w = ref.dft_matrix(m, inverse).astype(acc)
            return np.einsum("kj,...j->...k", w, v).astype(acc)
        ev, od = rec(v[..., 0::2]), rec(v[..., 1::2])
        tw = np.exp(sign * 2j * np.pi * np.arange(m // 2) / m).astype(acc)
        t = (tw * od).astype(acc)
        return np.concatenate([ev + t, ev - t], axis=-1).astype(acc)

    y = rec(z) if n else z
    return np.moveaxis(y, -1, axis)


def _transform(z, axis, inverse, algo, acc):
    n = z.shape[axis]
    if algo == "numpy-fft":
        y = (np.fft.ifft(z.astype(acc), axis=axis) * n) if inverse else np.fft.fft(z.astype(acc), axis=axis)
        return y.astype(acc)
    if algo == "radix2":
        return _fft_radix2(z, axis, inverse, acc)
    w = ref.dft_matrix(n, inverse).astype(acc)
    return np.moveaxis(np.tensordot(w, np.moveaxis(z.astype(acc), axis, 0), axes=(1, 0)), 0, axis).astype(acc)


def dft_kernel(algo="direct", mode="native", flaw=None):
    """A DFT kernel: ``algo`` direct (a float32/float64 matrix product), numpy-fft (pocketfft in the
    working precision) or radix2; ``mode`` native (float32 for float/float16/bfloat16, float64 for
    double) or float64.  Flaws: ``no-inverse-scale``, ``onesided-full-length`` (n bins instead of
    n // 2 + 1), ``ignore-dft_length``, ``ignore-axis`` (the version's default axis)."""

    def kernel(inputs, attrs, outputs, opset):
        x = inputs["input"]
        dt = x.dtype
        acc = np.complex128 if (mode == "float64" or dt == np.float64) else np.complex64
        r = x.ndim
        if r < 2 or x.shape[-1] not in (1, 2):
            raise ValueError("the last dimension must be 1 or 2, rank >= 2")
        if opset >= 20:
            axis = int(inputs["axis"]) if inputs.get("axis") is not None else -2
        else:
            axis = int(attrs.get("axis", 1))
        if flaw == "ignore-axis":
            axis = -2 if opset >= 20 else 1
        if not (-r <= axis <= -2 or 0 <= axis <= r - 2):
            raise ValueError("axis out of range")
        a = axis % r
        inverse, onesided = int(attrs.get("inverse", 0)), int(attrs.get("onesided", 0))
        xf = x.astype(np.float32 if acc == np.complex64 else np.float64)
        z = xf[..., 0].astype(acc) if x.shape[-1] == 1 else (xf[..., 0] + 1j * xf[..., 1]).astype(acc)
        real = x.shape[-1] == 1
        if onesided and real == bool(inverse):
            raise ValueError("RFFT needs a real input, IRFFT a complex one")
        m = z.shape[a]
        n = int(inputs["dft_length"]) if inputs.get("dft_length") is not None else (
            2 * (m - 1) if onesided and inverse else m)
        if flaw == "ignore-dft_length" and not (onesided and inverse):
            n = m
        if onesided and inverse:
            h = n // 2 + 1
            half = np.moveaxis(z, a, 0)
            half = np.concatenate([half, np.zeros((max(0, h - m),) + half.shape[1:], acc)])[:h].copy()
            half[0] = half[0].real
            if n % 2 == 0:
                half[h - 1] = half[h - 1].real
            full = np.concatenate([half, np.conj(half[1:(n + 1) // 2][::-1])]).astype(acc)
            y = _transform(np.moveaxis(full, 0, a), a, True, algo, acc)
            if flaw != "no-inverse-scale":
                y = (y / n).astype(acc)
            return {outputs[0]: y.real[..., None].astype(dt)}
        zz = np.moveaxis(z, a, 0)
        zz = np.concatenate([zz, np.zeros((max(0, n - m),) + zz.shape[1:], acc)])[:n]
        y = _transform(np.moveaxis(zz, 0, a), a, bool(inverse), algo, acc)
        if inverse and flaw != "no-inverse-scale":
            y = (y / n).astype(acc)
        if onesided and flaw != "onesided-full-length":
            y = np.take(y, np.arange(n // 2 + 1), axis=a)
        return {outputs[0]: np.stack([y.real, y.imag], axis=-1).astype(dt)}

    return kernel


DFT_LEGIT = [("direct", "native"), ("numpy-fft", "native"), ("radix2", "native"), ("numpy-fft", "float64")]


@pytest.mark.parametrize("algo,mode", DFT_LEGIT)
def test_legitimate_dft_kernels_pass_everything(algo, mode, value_cases):
    cases = [c for c in value_cases if c.op == "DFT"]
    assert len(cases) > 200
    results = _run(cases, {"DFT": dft_kernel(algo, mode)}, f"{algo}-{mode}")
    bad = [(c.id, r.outcome, r.message[:200]) for c, r in zip(cases, results) if r.outcome != "pass"]
    assert not bad, bad[:5]


WRONG_DFT = {
    # flaw: (filter on value cases, at least this many fails)
    "no-inverse-scale": (lambda c: c.attributes.get("inverse", 0) == 1, 30),
    "onesided-full-length": (lambda c: c.attributes.get("onesided", 0) == 1 and not c.attributes.get("inverse", 0), 20),
    "ignore-dft_length": (lambda c: c.tags["shape"].startswith(("dft_length/", "r4/axis=2/dft_length")), 20),
    "ignore-axis": (lambda c: c.tags["shape"].startswith(("r4/axis=2", "r4/axis=-3", "r3/axis=0", "r5/axis=3")), 15),
}


@pytest.mark.parametrize("flaw", sorted(WRONG_DFT))
def test_wrong_dft_kernels_are_caught(flaw, value_cases):
    keep, least = WRONG_DFT[flaw]
    cases = [c for c in value_cases if c.op == "DFT" and keep(c)]
    assert len(cases) >= least
    results = _run(cases, {"DFT": dft_kernel(flaw=flaw)}, flaw, check=False)
    fails = [c for c, r in zip(cases, results) if r.outcome in ("fail", "error")]
    assert len(fails) >= least, Counter(r.outcome for r in results)
    # every case where the flaw changes the output catches it (n = 1 has no scale, n <= 2 has
    # n // 2 + 1 = n bins)
    right = dft_kernel()
    for c, r in zip(cases, results):
        if r.outcome == "pass":
            feeds = {k: v for k, v in _feeds(c).items() if v is not None}
            a = right(feeds, dict(c.attributes), ["output"], c.opset)["output"]
            b = dft_kernel(flaw=flaw)(feeds, dict(c.attributes), ["output"], c.opset)["output"]
            assert a.shape == b.shape and np.array_equal(a, b), c.id


def test_dft_error_cases_are_rejected(suite):
    cases = [c for c in suite if c.expect_error and c.op == "DFT"]
    assert {c.tags["error"] for c in cases} == {"last-dim-3", "rfft-complex", "irfft-real", "axis-last", "axis-r-1",
                                                "rank1"}
    results = _run(cases, {"DFT": dft_kernel()}, "legit")
    assert all(r.outcome == "pass" for r in results), [(c.id, r.message[:100]) for c, r in zip(cases, results)
                                                        if r.outcome != "pass"]


def test_dft_coverage(value_cases):
    cs = [c for c in value_cases if c.op == "DFT"]
    for v in (17, 20):
        vc = [c for c in cs if c.since_version == v]
        assert {c.tags["dtype"] for c in vc} == {"float16", "float", "double", "bfloat16"}
        modes = {(c.attributes.get("onesided", 0), c.attributes.get("inverse", 0)) for c in vc}
        assert modes == {(0, 0), (1, 0), (0, 1), (1, 1)}
        assert {c.tags["optional_inputs"] for c in vc} >= ({"none", "dft_length"} if v == 17 else
                                                           {"none", "dft_length", "axis", "dft_length,axis"})
        lens = [(c.inputs[0].shape, _feeds(c)["dft_length"]) for c in vc if _feeds(c)["dft_length"] is not None]
        assert any(int(n) > s[-2] for s, n in lens) and any(int(n) < s[-2] for s, n in lens)
        assert any(c.inputs[0].shape[0] == 0 for c in vc)


# ============================================================================ STFT
def _loop_stft(sig, step, window, fl, onesided):
    """STFT written out: frame f starts at f * step, multiplied by the window, numpy.fft of it."""
    z = sig[..., 0] + (1j * sig[..., 1] if sig.shape[-1] == 2 else 0)
    frames = (z.shape[1] - fl) // step + 1
    out = np.zeros((z.shape[0], frames, fl // 2 + 1 if onesided else fl), dtype=np.complex128)
    for b in range(z.shape[0]):
        for f in range(frames):
            seg = z[b, f * step:f * step + fl] * (1.0 if window is None else window)
            y = np.fft.fft(seg)
            out[b, f] = y[: out.shape[2]]
    return out


@pytest.mark.parametrize("length,step,fl,win,onesided,cplx", [
    (16, 2, 8, True, 1, False), (13, 2, 5, False, 1, False), (14, 5, 3, True, 0, False), (9, 4, 9, True, 1, False),
    (16, 4, 8, True, 0, True), (11, 3, 5, False, 0, True), (5, 1, 1, False, 1, False)])
def test_stft_oracle_is_the_framed_numpy_fft(length, step, fl, win, onesided, cplx):
    rng = np.random.default_rng(length)
    sig = _rand(rng, (2, length, 2 if cplx else 1))
    window = _rand(rng, (fl,)) if win else None
    got = ref.stft(sig, step, window, None if win else fl, onesided)
    want = _loop_stft(sig, step, window, fl, onesided)
    assert got.shape == want.shape + (2,)
    assert np.allclose(ref.to_complex(got), want, atol=1e-12)
    assert got.shape[1] == (length - fl) // step + 1


def test_stft_oracle_defaults_and_errors():
    rng = np.random.default_rng(2)
    sig = _rand(rng, (1, 8, 1))
    # neither window nor frame_length: frame_length = signal_length, one frame
    assert ref.stft(sig, 1).shape == (1, 1, 5, 2)
    with pytest.raises(ValueError):
        ref.stft(sig[..., :1].reshape(1, 8), 2, None, 4)  # rank 2
    with pytest.raises(ValueError):
        ref.stft(np.concatenate([sig, sig], -1), 2, None, 4, onesided=1)  # complex with onesided
    with pytest.raises(ValueError):
        ref.stft(sig, 2, np.ones(6), 4)  # window length != frame_length


def test_stft_oracle_reproduces_the_node_tests():
    tests = single_node_tests(("STFT",), ("stft",))
    assert len(tests) >= 2
    for t in tests:
        node = t.model.graph.node[0]
        attrs = {a.name: onnx.helper.get_attribute_value(a) for a in node.attribute}
        for ins, outs in t.data_sets:
            d = dict(zip([i.name for i in t.model.graph.input], ins))
            nin = list(node.input) + ["", "", ""]
            sig = d[nin[0]].astype(np.float64)
            win = d[nin[2]].astype(np.float64) if nin[2] else None
            fl = int(d[nin[3]]) if nin[3] else None
            got = ref.stft(sig, int(d[nin[1]]), win, fl, attrs.get("onesided", 1))
            b = ref.stft_bound(sig, "float", int(d[nin[1]]), win, fl)
            assert got.shape == outs[0].shape, t.name
            assert np.max(np.abs(got - outs[0])) <= b + 2 ** -23 * np.max(np.abs(got)), t.name


def stft_kernel(algo="direct", mode="native", flaw=None):
    """An STFT kernel over :func:`_transform`.  Flaws: ``ignore-frame_step`` (a step of one),
    ``ignore-window``, ``ignore-onesided`` (every bin)."""

    def kernel(inputs, attrs, outputs, opset):
        x = inputs["signal"]
        dt = x.dtype
        if x.ndim != 3 or x.shape[-1] not in (1, 2):
            raise ValueError("the signal is [batch, length, 1 or 2]")
        onesided = int(attrs.get("onesided", 1))
        if onesided and x.shape[-1] == 2:
            raise ValueError("onesided with a complex signal")
        acc = np.complex128 if (mode == "float64" or dt == np.float64) else np.complex64
        real = np.float32 if acc == np.complex64 else np.float64
        step = int(inputs["frame_step"]) if flaw != "ignore-frame_step" else 1
        win = inputs.get("window")
        fl = inputs.get("frame_length")
        fl = int(fl) if fl is not None else (win.shape[0] if win is not None else x.shape[1])
        if win is not None and win.shape[0] != fl:
            raise ValueError("window length != frame_length")
        xf = x.astype(real)
        z = xf[..., 0].astype(acc) if x.shape[-1] == 1 else (xf[..., 0] + 1j * xf[..., 1]).astype(acc)
        frames = (z.shape[1] - fl) // step + 1
        if frames < 1 or step < 1:
            raise ValueError("a frame longer than the signal, or a step below 1")
        idx = np.arange(frames)[:, None] * step + np.arange(fl)[None, :]
        fr = z[:, idx] if z.shape[0] else np.zeros((0, frames, fl), acc)
        if win is not None and flaw != "ignore-window":
            fr = (fr * win.astype(real)).astype(acc)
        y = _transform(fr, 2, False, algo, acc)
        if onesided and flaw != "ignore-onesided":
            y = y[:, :, : fl // 2 + 1]
        return {outputs[0]: np.stack([y.real, y.imag], axis=-1).astype(dt)}

    return kernel


@pytest.mark.parametrize("algo,mode", DFT_LEGIT)
def test_legitimate_stft_kernels_pass_everything(algo, mode, value_cases):
    cases = [c for c in value_cases if c.op == "STFT"]
    assert len(cases) > 100 and any(c.contested for c in cases)
    # contested (onesided absent: onnx's shape inference reads 0): the text's reading, unchecked
    results = _run([c for c in cases if not c.contested], {"STFT": stft_kernel(algo, mode)}, f"{algo}-{mode}")
    results += _run([c for c in cases if c.contested], {"STFT": stft_kernel(algo, mode)}, f"{algo}-{mode}", False)
    cases = [c for c in cases if not c.contested] + [c for c in cases if c.contested]
    bad = [(c.id, r.outcome, r.message[:200]) for c, r in zip(cases, results) if r.outcome != "pass"]
    assert not bad, bad[:5]


WRONG_STFT = {
    "ignore-frame_step": (lambda c: int(_feeds(c)["frame_step"]) > 1, 60),
    "ignore-window": (lambda c: _feeds(c)["window"] is not None, 60),
    "ignore-onesided": (lambda c: c.attributes.get("onesided", 1) == 1, 60),
}


@pytest.mark.parametrize("flaw", sorted(WRONG_STFT))
def test_wrong_stft_kernels_are_caught(flaw, value_cases):
    keep, least = WRONG_STFT[flaw]
    cases = [c for c in value_cases if c.op == "STFT" and keep(c)]
    assert len(cases) >= least
    results = _run(cases, {"STFT": stft_kernel(flaw=flaw)}, flaw, check=False)
    fails = [c for c, r in zip(cases, results) if r.outcome in ("fail", "error")]
    assert len(fails) >= least, Counter(r.outcome for r in results)
    if flaw == "ignore-frame_step":  # every case with more than one frame
        for c, r in zip(cases, results):
            if r.outcome == "pass":
                f = _feeds(c)
                sig = f["signal"]
                fl = int(f["frame_length"]) if f["frame_length"] is not None else (
                    f["window"].shape[0] if f["window"] is not None else sig.shape[1])
                assert (sig.shape[1] - fl) // int(f["frame_step"]) + 1 <= 1 or sig.shape[0] == 0, c.id


def test_stft_error_cases_are_rejected(suite):
    cases = [c for c in suite if c.expect_error and c.op == "STFT"]
    assert {c.tags["error"] for c in cases} == {"signal-rank2", "onesided-complex", "window-length",
                                                "signal-last-dim-3", "frame-longer-than-signal"}
    results = _run(cases, {"STFT": stft_kernel()}, "legit")
    assert all(r.outcome == "pass" for r in results), [(c.id, r.message[:100]) for c, r in zip(cases, results)
                                                        if r.outcome != "pass"]


def test_stft_coverage(value_cases):
    cs = [c for c in value_cases if c.op == "STFT"]
    assert {c.tags["dtype"] for c in cs} == {"float16", "float", "double", "bfloat16"}
    assert {c.tags["optional_inputs"] for c in cs} == {"none", "window", "frame_length", "window,frame_length"}
    assert {(c.inputs[0].shape[-1], c.attributes.get("onesided", "absent")) for c in cs} >= {
        (1, "absent"), (1, 0), (1, 1), (2, 0)}


# ============================================================================ MelWeightMatrix
def _loop_mel(m, n, sr, lo, hi, div):
    """The filterbank written out: edges ``floor((n + 1) hz / sr)`` of ``m + 2`` points equally spaced
    in mel with step ``(mel(hi) - mel(lo)) / div``; triangles over bin indices with peak 1."""
    import math

    mel = lambda f: 2595.0 * math.log10(1.0 + f / 700.0)  # noqa: E731
    hz = lambda q: 700.0 * (10.0 ** (q / 2595.0) - 1.0)  # noqa: E731
    step = (mel(hi) - mel(lo)) / div
    e = [math.floor((n + 1) * hz(mel(lo) + k * step) / sr) for k in range(m + 2)]
    out = np.zeros((n // 2 + 1, m))
    for i in range(m):
        left, center, right = e[i], e[i + 1], e[i + 2]
        for j in range(n // 2 + 1):
            if left <= j <= center:
                out[j, i] = 1.0 if center == left else (j - left) / (center - left)
            if center <= j < right:
                out[j, i] = (right - j) / (right - center)
    return out, e


def test_mel_oracle_is_the_loop_and_its_edges_span_the_text_range():
    for p in signal.MEL_PARAMS:
        m, n, sr, lo, hi = p
        got = ref.mel_weight_matrix(*p)
        want, e = _loop_mel(m, n, sr, lo, hi, m + 1)
        assert np.array_equal(got, want), p
        # the text: lower_edge_hertz is the lowest band's lower edge, upper_edge_hertz the highest's top
        assert e[0] == int(np.floor((n + 1) * lo / sr)) and e[-1] == int(np.floor((n + 1) * hi / sr)), p
        assert got.shape == (n // 2 + 1, m)
        # every band peaks at 1.0 (the text), where its center bin exists
        assert all(got[:, i].max() == 1.0 for i in range(m) if e[i + 1] <= n // 2), p
        # the runtimes' spacing: num_mel_bins + 2 steps, the top edge below upper_edge_hertz
        run, er = _loop_mel(m, n, sr, lo, hi, m + 2)
        assert np.array_equal(ref.mel_weight_matrix(*p, spacing="runtime"), run)
        assert er[-1] <= e[-1]


def test_mel_oracle_and_the_node_test():
    """onnx's node test expects the runtimes' spacing (num_mel_bins + 2 steps): the oracle's other
    reading reproduces it exactly, the text's reading differs (the case is contested)."""
    tests = single_node_tests(("MelWeightMatrix",), ("melweightmatrix",))
    assert len(tests) >= 1
    for t in tests:
        for ins, outs in t.data_sets:
            p = (int(ins[0]), int(ins[1]), int(ins[2]), float(ins[3]), float(ins[4]))
            assert np.array_equal(ref.mel_weight_matrix(*p, spacing="runtime").astype(np.float32), outs[0])
            assert not np.array_equal(ref.mel_weight_matrix(*p).astype(np.float32), outs[0])
            assert p in signal.MEL_PARAMS


def test_mel_parameter_sets_are_robust():
    for p in signal.MEL_PARAMS:
        assert ref.mel_edges_stable(*p, spacing="text"), p
        assert np.array_equal(ref.mel_float32_edges(*p), ref.mel_band_edges(*p)), p
        for v in p[3:]:
            assert float(ml_dtypes.bfloat16(v)) == v
    same = [p for p in signal.MEL_PARAMS if np.array_equal(ref.mel_band_edges(*p), ref.mel_band_edges(*p, "runtime"))]
    assert 3 <= len(same) < len(signal.MEL_PARAMS)


def mel_kernel(mode="float32", flaw=None):
    """A MelWeightMatrix kernel: edges in float32 (or float64), the text's spacing.  Flaws:
    ``runtime-spacing`` (num_mel_bins + 2 steps), ``lower-edge-ignored`` (from 0 Hz),
    ``round-bins`` (round instead of floor)."""

    def kernel(inputs, attrs, outputs, opset):
        dt = int(attrs.get("output_datatype", 1))
        if V.kind(V.name_of(dt)) not in (V.FLOAT, V.INT):
            raise ValueError("output_datatype outside T3")
        m, n, sr = (int(inputs[k]) for k in ("num_mel_bins", "dft_length", "sample_rate"))
        lo, hi = float(inputs["lower_edge_hertz"]), float(inputs["upper_edge_hertz"])
        if flaw == "lower-edge-ignored":
            lo = 0.0
        spacing = "runtime" if flaw == "runtime-spacing" else "text"
        if mode == "float32":
            e = ref.mel_float32_edges(m, n, sr, lo, hi, spacing)
        else:
            e = ref.mel_band_edges(m, n, sr, lo, hi, spacing)
        if flaw == "round-bins":
            lm, hm = ref.hz_to_mel(lo), ref.hz_to_mel(hi)
            e = np.round((n + 1) * ref.mel_to_hz(lm + np.arange(m + 2) * (hm - lm) / (m + 1)) / sr).astype(int)
        bins = n // 2 + 1
        f = np.float64 if V.name_of(dt) == "double" else np.float32  # the weights' division in float32 at least
        w = np.zeros((bins, m), f)
        for i in range(m):
            left, center, right = int(e[i]), int(e[i + 1]), int(e[i + 2])
            for j in range(left, min(center, bins - 1) + 1):
                w[j, i] = 1.0 if center == left else f(j - left) / f(center - left)
            for j in range(center, min(right, bins)):
                w[j, i] = f(right - j) / f(right - center)
        return {outputs[0]: w.astype(_np_type(dt))}

    return kernel


@pytest.mark.parametrize("mode", ["float32", "float64"])
def test_legitimate_mel_kernels_pass_everything(mode, value_cases):
    cases = [c for c in value_cases if c.op == "MelWeightMatrix"]
    assert len(cases) > 150
    results = _run(cases, {"MelWeightMatrix": mel_kernel(mode)}, mode)
    bad = [(c.id, r.outcome, r.message[:200]) for c, r in zip(cases, results) if r.outcome != "pass"]
    assert not bad, bad[:5]


WRONG_MEL = {
    # flaw: (filter, at least this many fails)
    "runtime-spacing": (lambda c: c.contested is not None, 100),
    "lower-edge-ignored": (lambda c: float(_feeds(c)["lower_edge_hertz"]) > 0, 60),
    "round-bins": (lambda c: True, 60),
}


@pytest.mark.parametrize("flaw", sorted(WRONG_MEL))
def test_wrong_mel_kernels_are_caught(flaw, value_cases):
    keep, least = WRONG_MEL[flaw]
    cases = [c for c in value_cases if c.op == "MelWeightMatrix" and keep(c)]
    assert len(cases) >= least
    results = _run(cases, {"MelWeightMatrix": mel_kernel(flaw=flaw)}, flaw, check=False)
    fails = [c for c, r in zip(cases, results) if r.outcome == "fail"]
    assert len(fails) >= least, Counter(r.outcome for r in results)
    if flaw == "runtime-spacing":  # exactly the contested cases catch it
        assert len(fails) == len(cases)
        unc = [c for c in value_cases if c.op == "MelWeightMatrix" and not c.contested]
        assert all(r.outcome == "pass" for r in _run(unc, {"MelWeightMatrix": mel_kernel(flaw=flaw)}, flaw, False))


def test_mel_error_cases_are_rejected(suite):
    cases = [c for c in suite if c.expect_error and c.op == "MelWeightMatrix"]
    assert {c.tags["error"] for c in cases} == {"output_datatype-string"}
    results = _run(cases, {"MelWeightMatrix": mel_kernel()}, "legit")
    assert all(r.outcome == "pass" for r in results)


def test_mel_coverage(value_cases):
    cs = [c for c in value_cases if c.op == "MelWeightMatrix"]
    assert {c.attributes.get("output_datatype", 1) for c in cs} == {
        V.elem(t) for t in ("uint8", "uint16", "uint32", "uint64", "int8", "int16", "int32", "int64", "float16",
                            "float", "double", "bfloat16")}
    assert {c.tags["shape"] for c in cs} == {s.name for s in signal.MEL_SHAPES}
    assert {c.inputs[3].elem_type for c in cs} == {V.elem(t) for t in ("float", "double", "float16", "bfloat16")}
