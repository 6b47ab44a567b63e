"""The worker's judging fast paths give exactly what the general code gives (issue 30, round 5):
``_within``'s index and elements by flat position (not ``np.unravel_index``), ``_json_float``, the
ONNX Runtime backend's shared options; an attempt that raised is freed without the collector; a
judged result and a read case hold the fields their ``__init__`` gives."""

from __future__ import annotations

import dataclasses
import math

import ml_dtypes
import numpy as np
import pytest

from conformance.runner import CaseResult
from conformance.tolerance import Check, Tolerance, _json_float, compare


def _within_slow(name, a, e, err, r, tol):
    """``_within`` as it was (``np.unravel_index`` and tuple indexing)."""
    flat = int(np.argmax(r))
    idx = np.unravel_index(flat, e.shape)
    ratio = float(r[idx])
    passed = bool(ratio <= 1.0)
    reason = ""
    if not passed:
        n_bad = int((r > 1.0).sum())
        reason = (
            f"{n_bad} of {e.size} element(s) out of tolerance; worst at {list(map(int, idx))}: "
            f"expected {e[idx]:.9g}, got {a[idx]:.9g}, |err| {err[idx]:.3g} > "
            f"atol {tol.atol:.3g} + rtol {tol.rtol:.3g}*|e| ({ratio:.3g}x)"
        )
    return Check(name, passed, reason, max_abs_err=float(np.max(err)), ratio=ratio,
                 worst_index=[int(i) for i in idx], expected_at_worst=float(e[idx]),
                 actual_at_worst=float(a[idx]), tolerance=tol)


def _cases():
    rng = np.random.default_rng(5)
    tols = [Tolerance(1e-3, 1e-3), Tolerance(0.0, 0.0, exact=True), Tolerance(1e-6, 0.0, signed_zero=True),
            Tolerance(5e-324, 1e-9)]
    shapes = [(), (1,), (7,), (3, 4), (2, 3, 5), (1, 1, 4, 1)]
    for dt in (np.float32, np.float64, np.float16, ml_dtypes.bfloat16, ml_dtypes.float8_e4m3fn):
        for shape in shapes:
            e = rng.standard_normal(shape).astype(dt)
            for k, a in enumerate([e.copy(), (e.astype(np.float64) * 1.01).astype(dt),
                                   (e.astype(np.float64) + 0.5).astype(dt)]):
                if a.size and k == 2:
                    a.reshape(-1)[-1] = np.nan
                yield e, a, tols[k % len(tols)]
            if e.size:
                z = np.zeros(shape, dtype=dt)
                yield z, -z, tols[2]
                inf = e.copy()
                inf.reshape(-1)[0] = np.inf
                yield inf, e, tols[0]
                yield e, e * np.asarray(1e30).astype(dt) if dt == np.float64 else e, tols[3]
    big = rng.standard_normal((6, 8))
    yield big.T, big.T * 1.5, Tolerance(1e-3, 1e-3)  # not C-contiguous
    yield big[::2, 1::3], big[::2, 1::3] + 1.0, Tolerance(1e-3, 1e-3)


@pytest.mark.parametrize("k", range(len(list(_cases()))))
def test_within_by_flat_position_is_the_unravelled_one(k, monkeypatch):
    import conformance.tolerance as t

    e, a, tol = list(_cases())[k]
    fast = compare("y", a, e, tol)
    monkeypatch.setattr(t, "_within", _within_slow)
    slow = compare("y", a, e, tol)
    assert repr(fast) == repr(slow)
    assert fast.to_json() == slow.to_json() or repr(fast.to_json()) == repr(slow.to_json())
    assert type(fast.passed) is bool and all(type(i) is int for i in fast.worst_index or [])


@pytest.mark.parametrize("x", [None, 0.0, -0.0, 1.5, np.float32(2.5), np.float64(-1e-300), 3, math.inf,
                               -math.inf, math.nan, np.float16(np.inf), np.float64(np.nan), ml_dtypes.bfloat16(1.25)])
def test_json_float_is_encode_float_of_float(x):
    from conformance.jsonsafe import encode_float

    want = None if x is None else encode_float(float(x))
    got = _json_float(x)
    assert repr(got) == repr(want) and type(got) is type(want)


def test_judge_case_result_has_every_field_as_init_gives(toy_suite):
    from conformance.backends import resolve_backend
    from conformance.runner import attempt_case, judge_case

    backend = resolve_backend("onnxruntime", {})
    names = [f.name for f in dataclasses.fields(CaseResult)]
    for case in toy_suite.cases:
        res = judge_case(case, backend, attempt_case(case, backend))
        assert sorted(res.__dict__) == sorted(names)
        again = CaseResult(**{n: getattr(res, n) for n in names})
        assert again == res and again.to_json() == res.to_json()


class _Raising:
    """A backend whose prepare or run raises a bare exception (no message: the traceback is written)."""

    name = "raising"

    def __init__(self, phase):
        self.phase = phase

    def prepare(self, model, model_bytes):
        if self.phase == "prepare":
            raise RuntimeError()
        return object()

    def run(self, prepared, inputs, names):
        raise RuntimeError()

    def refusal(self, exc):
        return None


@pytest.mark.parametrize("phase", ["prepare", "run", "ort"])
def test_an_attempt_that_raised_is_freed_without_the_collector(toy_suite, phase):
    import gc
    import weakref

    from conformance.backends import resolve_backend
    from conformance.runner import attempt_case, judge_case

    backend = resolve_backend("onnxruntime", {}) if phase == "ort" else _Raising(phase)
    cases = [c for c in toy_suite.cases if (c.expect_error is not None) == (phase == "ort")]
    gc.collect()
    gc.disable()
    try:
        for case in cases:
            got = attempt_case(case, backend)
            assert got.exc is not None and got.phase == ("prepare" if phase == "ort" else phase)
            res = judge_case(case, backend, got)
            if phase != "ort":  # the traceback is still there to be written
                assert res.outcome == "error" and "raise RuntimeError()" in res.message and ", line " in res.message
            ref = weakref.ref(got)
            del got
            assert ref() is None
    finally:
        gc.enable()


def test_a_read_case_has_the_fields_init_gives(toy_suite, tmp_path):
    from conformance.bundle import read_index
    from conformance.bundle_write import write_bundle
    from conformance.case import Case

    _, refs = read_index(write_bundle(toy_suite, tmp_path / "b"))
    names = [f.name for f in dataclasses.fields(Case)]
    for ref in refs:
        case = ref.load_for_run()
        assert set(case.__dict__) - {"model", "model_bytes", "content_hash"} == set(names)
        again = Case(**{n: getattr(case, n) for n in names})
        assert all(getattr(again, n) is getattr(case, n) for n in names)
        assert (case.seed, case.graph, case.level) == (None, None, None)
        assert case.id == ref.id and again.id == case.id and case.model_bytes == again.model_bytes
