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
OPS = ["HannWindow", "HammingWindow", "BlackmanWindow"]
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
    * ``window-float64-in-T2``: onnx.reference computes the window in the output type itself
      (``np.arange(size, dtype=output type)``): for integer outputs the angle and the sum are
      integer arithmetic, for float16/bfloat16 the window is evaluated in 16 bits (an error of
      several float16 ulps, beyond the float32 function body's).
    * ``window-int-one`` (contested): an exact 1 with an integer output (onnx.reference's integer
      arithmetic gives 0 or 1 by accident).
    * ``window-no-validation``: the error models are run, not rejected.
    """
    if case.op in WINDOWS:
        if case.expect_error:
            return "window-no-validation"
        size = int(np.asarray(_feeds(case)["size"]))
        if size == 1 and case.attributes.get("periodic", 1) == 0:
            return "window-symmetric-size1"
        if case.contested:
            return "window-int-one"
        dt = V.name_of(int(case.attributes.get("output_datatype", 1)))
        if dt not in ("float", "double"):
            return "window-float64-in-T2"
    return None


def test_agreement_with_onnx_reference(suite):
    results = run_cases(suite, resolve_backend("onnx-reference"))
    why, unexplained = sort_findings(suite, results, _reference_disagreement)
    assert not unexplained, unexplained[:5]
    assert {"window-symmetric-size1", "window-float64-in-T2"} <= set(why), why
