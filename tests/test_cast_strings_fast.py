"""check_number_strings' shortcut (a literal whose double is the source value, an integer literal
equal to the integer) gives the verdict of the exact path (Fraction, rounded to odd, then to the
source type) on every element: values near the types' rounding boundaries, their largest values,
subnormals, long and perturbed literals."""

from __future__ import annotations

import math

import numpy as np
import pytest

from conformance.reference import cast as ref


def _exact_verdict(v: float, s: str, src: str) -> bool:
    """The exact path of check_number_strings for one floating element."""
    try:
        p = ref.parse_literal(s)
    except ValueError:
        return s.upper() in ("-NAN", "+NAN") and math.isnan(v)
    if math.isnan(v) or (isinstance(p, float) and (math.isnan(p) or math.isinf(p))):
        return (math.isnan(v) and isinstance(p, float) and math.isnan(p)) or v == p
    back = float(ref._round_float(np.array([ref._odd53(p) if src != "double" else ref._rne53(p)]), src,
                                  version=28, saturate=False, round_mode="nearest")[0])
    return back == v


def _strings(v: float) -> list[str]:
    out = [repr(v), f"{v:.17g}", f"{v:.9g}", f"{v:.5g}", f"{v:.3e}", f"{v:.25e}", "1e400", "-1e400", "1e-400",
           "0", "-0", "nan", "INF", "abc", "1_0", " 1"]
    if math.isfinite(v):
        nxt = math.nextafter(v, math.inf)
        out += [repr(nxt), f"{(v + nxt) / 2:.30e}", format(v, ".40f")]
    return out


@pytest.mark.parametrize("src,dtype", [("float", np.float32), ("double", np.float64), ("float16", np.float16)])
def test_floating_shortcut_agrees_with_the_exact_path(src, dtype):
    rng = np.random.default_rng(0)
    info = np.finfo(dtype)
    values = [0.0, -0.0, float(info.max), -float(info.max), float(info.tiny), float(info.smallest_subnormal),
              float(np.nextafter(info.max, dtype(0))), 1.0, 0.1, 1 / 3]
    values += [float(x) for x in rng.standard_normal(40).astype(dtype)]
    values += [float(x) for x in (rng.uniform(-1, 1, 20) * (float(info.max) / 2)).astype(dtype)]
    for v in values:
        x = np.array([v], dtype=dtype)
        for s in _strings(v):
            got = ref.check_number_strings({"input": x}, {"output": np.array([s], dtype=object)}, {})[0]
            assert got == _exact_verdict(float(x[0]), s, src), (src, v, s)


def test_integer_shortcut_agrees():
    x = np.array([0, -5, 2**62 + 1, -(2**63)], dtype=np.int64)
    for ys, ok in [(["0", "-5", str(2**62 + 1), str(-(2**63))], True), (["0", "-5", str(2**62), str(-(2**63))], False),
                   (["0.0", "-5", str(2**62 + 1), str(-(2**63))], True), (["0", "-05", "4611686018427387905", "-9223372036854775808"], True),
                   (["0", "+5", str(2**62 + 1), str(-(2**63))], False), (["0", "-5e0", str(2**62 + 1), str(-(2**63))], True)]:
        assert ref.check_number_strings({"input": x}, {"output": np.array(ys, dtype=object)}, {})[0] == ok, ys
    b = np.array([True, False])
    assert ref.check_number_strings({"input": b}, {"output": np.array(["1", "0"], dtype=object)}, {})[0]
    assert not ref.check_number_strings({"input": b}, {"output": np.array(["1", "1"], dtype=object)}, {})[0]
