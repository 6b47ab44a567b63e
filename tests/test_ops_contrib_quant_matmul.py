"""onnxruntime's com.microsoft MatMulInteger16 / MatMulIntegerToFloat / DynamicQuantizeMatMul /
QGemm (conformance/ops/contrib_quant_matmul.py):

* the oracles against explicit loops written here (Python ints and Fractions);
* legitimate kernels (int64 accumulation; float32 multipliers in either association; float16
  arithmetic for float16 outputs; onnxruntime's float32 dynamic quantization; MLAS-like
  requantization) pass every generated case;
* wrong kernels (zero points swapped or ignored, per-column scales ignored, bias or C ignored,
  no saturation, rounding half away from zero, alpha ignored, A not quantized, a truncated
  dynamic zero point, a 16-bit accumulator) fail cases the right kernel passes;
* the error cases are rejected by kernels that check what the documentation requires.
"""

from __future__ import annotations

from collections import Counter
from fractions import Fraction

import numpy as np
import pytest

from conformance.backends.kernel import KernelBackend
from conformance.ops import contrib_quant_matmul as ops_m
from conformance.ops import engine
from conformance.reference import contrib_quant_matmul as ref
from conformance.runner import run_cases


def _obj(vals, shape):
    out = np.empty(shape, dtype=object)
    out.ravel()[:] = [int(v) for v in np.asarray(vals).ravel().tolist()]
    return out


@pytest.fixture(scope="module")
def cases():
    return {e.op: engine.cases(e, 0) for e in ops_m.ENTRIES}


def _values(cs):
    return [c for c in cs if c.expect_error is None]


def _run(cs, op, kernel, name, check=False):
    return run_cases(cs, KernelBackend({op: kernel}, name=name, check=check))


def _assert_all_pass(cs, op, kernel, name):
    res = _run(cs, op, kernel, name)
    bad = [(c.id, r.outcome, r.message[:200]) for c, r in zip(cs, res) if r.outcome != "pass"]
    assert not bad, bad[:5]


def _fails(cs, op, kernel, name):
    res = _run(cs, op, kernel, name)
    n = Counter(r.outcome for r in res)
    assert not n["error"], [(c.id, r.message[:150]) for c, r in zip(cs, res) if r.outcome == "error"][:3]
    return n["fail"]


# ============================================================================ oracles against loops
def test_matmul_integer16_oracle_matches_a_loop():
    rng = np.random.default_rng(1)
    a = rng.integers(-32768, 32768, size=(2, 3))
    b = rng.integers(-32768, 32768, size=(3, 4))
    got = ref.matmul_integer16(_obj(a, a.shape), _obj(b, b.shape))
    for i in range(2):
        for j in range(4):
            assert got[i, j] == sum(int(a[i, k]) * int(b[k, j]) for k in range(3))


def test_matmul_integer_to_float_oracle_matches_a_loop():
    rng = np.random.default_rng(2)
    a, b = rng.integers(0, 256, size=(3, 5)), rng.integers(-128, 128, size=(5, 4))
    za, zb = 131, np.array([-3, 0, 127, -128])
    sa, sb = float(np.float32(0.02)), np.float32([0.5, 0.013, 0.25, 0.07]).astype(np.float64)
    bias = np.float32([1.5, -2.25, 0.1, 40.0]).astype(np.float64)
    got = ref.matmul_integer_to_float(_obj(a, a.shape), np.array(sa), np.array(za), _obj(b, b.shape), sb,
                                      _obj(zb, (4,)), bias)
    for i in range(3):
        for j in range(4):
            acc = sum((int(a[i, k]) - za) * (int(b[k, j]) - int(zb[j])) for k in range(5))
            want = Fraction(acc) * Fraction(sa) * Fraction(sb[j]) + Fraction(bias[j])
            assert got[i, j] == float(want), (i, j)


def test_dynamic_quantize_matmul_oracle_matches_a_loop():
    # A in [-1.5, 1.0]: scale 2.5/255 (float32), zero point 153 exactly; A = 0.5 / scale = 51
    a = np.array([[-1.5, 0.5, 1.0], [0.0, -0.25, 0.75]])
    b = rng_b = np.array([[1, -2], [3, 4], [-5, 6]])
    s = float(np.float32(2.5 / 255))
    q = [[min(255, max(0, round(Fraction(v) / Fraction(s)) + 153)) for v in row] for row in a]
    got = ref.dynamic_quantize_matmul(a, _obj(rng_b, b.shape), np.array(0.5), None, None)
    for i in range(2):
        for j in range(2):
            acc = sum((q[i][k] - 153) * int(b[k, j]) for k in range(3))
            assert got[i, j] == float(Fraction(acc) * Fraction(s) * Fraction(1, 2))


def test_qgemm_oracle_matches_a_loop():
    rng = np.random.default_rng(4)
    a = rng.integers(0, 256, size=(4, 2))  # transA: A is (K, M)
    b = rng.integers(-128, 128, size=(3, 4))  # transB: B is (N, K)
    c = rng.integers(-5000, 5000, size=(2, 1))  # (M, 1)
    za, zb, sa, sb = 7, np.array([1, -2, 0]), 0.0625, np.array([0.125, 0.25, 0.5])
    alpha, sy, zy = 0.5, 0.25, 3
    args = (_obj(a, a.shape), np.array(sa), np.array(za), _obj(b, b.shape), sb, _obj(zb, (3,)), _obj(c, c.shape))
    got_f = ref.qgemm(*args, alpha=alpha, trans_a=1, trans_b=1)
    got_q = ref.qgemm(*args, np.array(sy), np.array(zy), "uint8", alpha=alpha, trans_a=1, trans_b=1)
    for m in range(2):
        for n in range(3):
            acc = sum((int(a[k, m]) - za) * (int(b[n, k]) - int(zb[n])) for k in range(4)) + int(c[m, 0])
            v = Fraction(alpha) * Fraction(sa) * Fraction(sb[n]) * acc
            assert got_f[m, n] == float(v)
            assert got_q[m, n] == min(255, max(0, round(v / Fraction(sy)) + zy))


# ============================================================================ kernels
def _u(x):
    return x.astype(np.int64)


def mmi16_kernel(flaw=None):
    """MatMulInteger16: int64 matmul (``int16-acc``: a 16-bit accumulator, wrapping)."""

    def kernel(inputs, attrs, outputs, opset):
        a, b = inputs["A"], inputs["B"]
        if a.dtype not in (np.int16, np.uint16) or b.dtype not in (np.int16, np.uint16):
            raise TypeError("A and B are int16/uint16")
        y = np.matmul(_u(a), _u(b))
        if flaw == "int16-acc":
            y = y.astype(np.int16).astype(np.int64)
        return {"Y": y.astype(np.int32)}  # as onnxruntime's type inference: Y int32 (uint32: contested)

    return kernel


def _col(p, n_axis_len):
    p = np.asarray(p)
    return p.reshape(()) if p.size == 1 else p


def mitf_kernel(mode="f32", flaw=None):
    """MatMulIntegerToFloat: the int64 accumulator converted to float32, times the multiplier
    ``a_scale b_scale`` (``f32``: in float32; ``two-step``: ``(acc a_scale) b_scale``; ``f16``: the
    multiplier in float16, the product rounded to float16, the bias added in float16), plus the
    bias."""

    def kernel(inputs, attrs, outputs, opset):
        a, b, sa, sb = inputs["A"], inputs["B"], inputs["a_scale"], inputs["b_scale"]
        za, zb, bias = inputs.get("a_zero_point"), inputs.get("b_zero_point"), inputs.get("bias")
        n = b.shape[-1]
        if sa.size != 1:
            raise ValueError("a_scale per tensor")
        if sb.size not in (1, n) or sb.ndim > 1 or (zb is not None and (zb.dtype != b.dtype or zb.size not in (1, n))):
            raise ValueError("b_scale / b_zero_point: scalar or [N], b_zero_point of B's type")
        if za is not None and za.dtype != a.dtype or bias is not None and (bias.dtype != sa.dtype or bias.shape != (n,)):
            raise TypeError("a_zero_point has A's type; bias [N] of the scales' type")
        zav = np.int64(0) if za is None else _u(za).reshape(())
        zbv = np.int64(0) if zb is None else _u(zb).reshape(-1) if zb.size > 1 else _u(zb).reshape(())
        if flaw == "swap-zero-points":
            zav, zbv = (zbv.reshape(-1)[0] if np.ndim(zbv) else zbv), zav
        if flaw == "ignore-a-zero-point":
            zav = np.int64(0)
        if flaw == "ignore-b-zero-point":
            zbv = np.int64(0)
        acc = np.matmul(_u(a) - zav, _u(b) - zbv)
        ct = np.float16 if mode == "f16" else np.float32
        sbv = sb.reshape(-1)[0] if flaw == "per-column-ignored" else _col(sb, n)
        if mode == "two-step":
            y = (acc.astype(ct) * ct(sa.reshape(()))).astype(ct) * sbv.astype(ct)
        elif mode == "f16":  # the multiplier in float16, the product in float32 rounded to float16
            y = (acc.astype(np.float32) * (ct(sa.reshape(())) * sbv.astype(ct)).astype(np.float32)).astype(ct)
        else:
            y = acc.astype(ct) * (ct(sa.reshape(())) * sbv.astype(ct)).astype(ct)
        if bias is not None and flaw != "bias-ignored":
            y = (y + bias.astype(ct)).astype(ct)
        return {"Y": y.astype(sa.dtype)}

    return kernel


def _dyn_quant32(a, flaw=None):
    """onnxruntime's float32 dynamic quantization of A (its kernel, read): the range including 0,
    ``scale = (max - min) / 255``, the zero point ``rint(clamp(0 - min / scale))``, ``q =
    saturate(rint(A / scale) + zp)``."""
    a = a.astype(np.float32)
    lo, hi = np.minimum(np.float32(0), a.min()), np.maximum(np.float32(0), a.max())
    scale = np.float32((hi - lo) / np.float32(255))
    zf = np.clip(np.float32(0) - lo / scale, 0, 255)
    zp = np.floor(zf) if flaw == "zp-truncated" else np.rint(zf)
    q = np.clip(np.rint(a / scale) + zp, 0, 255)
    return q.astype(np.int64), scale, np.int64(zp)


def dqmm_kernel(flaw=None):
    """DynamicQuantizeMatMul: :func:`_dyn_quant32`, then MatMulIntegerToFloat in float32
    (``float-A``: A not quantized, a float32 matmul)."""

    def kernel(inputs, attrs, outputs, opset):
        a, b, sb = inputs["A"], inputs["B"], inputs["b_scale"]
        zb, bias = inputs.get("b_zero_point"), inputs.get("bias")
        n = b.shape[-1]
        if sb.size not in (1, n) or (zb is not None and (zb.dtype != b.dtype or zb.size not in (1, n))):
            raise ValueError("b_scale / b_zero_point: scalar or [N], b_zero_point of B's type")
        zbv = np.int64(0) if zb is None else _u(zb).reshape(-1) if zb.size > 1 else _u(zb).reshape(())
        if flaw == "ignore-b-zero-point":
            zbv = np.int64(0)
        sbv = _col(sb, n).astype(np.float32)
        if flaw == "float-A":
            y = np.matmul(a.astype(np.float32), (_u(b) - zbv).astype(np.float32)) * sbv
        else:
            q, s, z = _dyn_quant32(a, flaw)
            y = np.matmul(q - z, _u(b) - zbv).astype(np.float32) * (np.float32(s) * sbv).astype(np.float32)
        if bias is not None:
            y = (y + bias).astype(np.float32)
        return {"Y": y.astype(np.float32)}

    return kernel


def qgemm_kernel(flaw=None):
    """QGemm as onnxruntime's kernel computes it (read): int64 accumulator plus C, the float32
    multiplier ``alpha a_scale b_scale[n] (/ y_scale)``, the float32 product, rint, + y_zero_point,
    saturation (a float Y: the product)."""

    def kernel(inputs, attrs, outputs, opset):
        a, b = inputs["A"], inputs["B"]
        sa, za, sb, zb = inputs["a_scale"], inputs["a_zero_point"], inputs["b_scale"], inputs["b_zero_point"]
        c, sy, zy = inputs.get("C"), inputs.get("y_scale"), inputs.get("y_zero_point")
        if sa.size != 1 or za.size != 1 or za.dtype != a.dtype or zb.dtype != b.dtype or sb.shape != zb.shape:
            raise ValueError("a per tensor; zero points of their data's types; b_scale and b_zero_point one shape")
        ta, tb = attrs.get("transA", 0), attrs.get("transB", 0)
        at = a.T if ta else a
        bt = b.T if tb and flaw != "transB-ignored" else b
        n = bt.shape[1]
        if sb.size not in (1, n):
            raise ValueError("b_scale: scalar or [N]")
        zav, zbv = _u(za).reshape(()), (_u(zb).reshape(-1) if zb.size > 1 else _u(zb).reshape(()))
        if flaw == "swap-zero-points":
            zav, zbv = (zbv.reshape(-1)[0] if np.ndim(zbv) else zbv), zav
        acc = np.matmul(_u(at) - zav, _u(bt) - zbv)
        if c is not None and flaw != "C-ignored":
            acc = acc + np.broadcast_to(_u(c), acc.shape)
        alpha = np.float32(1.0 if flaw == "alpha-ignored" else attrs.get("alpha", 1.0))
        sbv = sb.reshape(-1)[0] if flaw == "per-column-ignored" else _col(sb, n)
        mult = (alpha * sa.reshape(()) * sbv.astype(np.float32)).astype(np.float32)
        if sy is None:
            if "y_zero_point" in inputs:
                raise ValueError("y_scale and y_zero_point together")
            return {"Y": (acc.astype(np.float32) * mult).astype(np.float32)}
        if zy is None:
            raise ValueError("y_zero_point with y_scale")
        mult = (mult / sy.reshape(())).astype(np.float32)
        v = (acc.astype(np.float32) * mult).astype(np.float32)
        r = np.sign(v) * np.floor(np.abs(v) + np.float32(0.5)) if flaw == "half-away" else np.rint(v)
        y = r.astype(np.int64) + _u(zy).reshape(())
        i = np.iinfo(zy.dtype)
        if flaw == "wrap":
            return {"Y": y.astype(zy.dtype)}
        return {"Y": np.clip(y, i.min, i.max).astype(zy.dtype)}

    return kernel


# ============================================================================ legitimate kernels pass
def test_case_mix(cases):
    n = {op: len(_values(cs)) for op, cs in cases.items()}
    assert n["MatMulInteger16"] >= 40 and n["MatMulIntegerToFloat"] >= 70 and n["DynamicQuantizeMatMul"] >= 20 \
        and n["QGemm"] >= 120, n
    q = _values(cases["QGemm"])
    assert {c.tags["numerics"] for c in q} == {"requant", "ties", "saturate"}
    assert {c.outputs[0].elem_type for c in q} == {1, 2, 3}  # float, uint8, int8 Y
    ties = [c for c in q if c.tags["numerics"] == "ties" and c.outputs[0].elem_type != 1]
    # the ties class really holds exact .5 ties (v = acc alpha a_scale b_scale / y_scale)
    assert len(ties) >= 10


def test_legitimate_matmul_integer16_kernel_passes(cases):
    vals = [c for c in _values(cases["MatMulInteger16"]) if c.contested is None]
    assert len(vals) >= 20
    _assert_all_pass(vals, "MatMulInteger16", mmi16_kernel(), "i64")


@pytest.mark.parametrize("mode", ["f32", "two-step", "f16"])
def test_legitimate_matmul_integer_to_float_kernels_pass(mode, cases):
    vals = _values(cases["MatMulIntegerToFloat"])
    if mode == "f16":  # float16 arithmetic is a legitimate reading for float16 outputs only
        vals = [c for c in vals if c.outputs[0].elem_type == 10]
        assert len(vals) >= 30
    _assert_all_pass(vals, "MatMulIntegerToFloat", mitf_kernel(mode), mode)


def test_legitimate_dynamic_quantize_matmul_kernel_passes(cases):
    _assert_all_pass(_values(cases["DynamicQuantizeMatMul"]), "DynamicQuantizeMatMul", dqmm_kernel(), "f32")


def test_legitimate_qgemm_kernel_passes(cases):
    _assert_all_pass(_values(cases["QGemm"]), "QGemm", qgemm_kernel(), "mlas")


# ============================================================================ wrong kernels are caught
def _nonempty(c):
    return all(0 not in (i.shape or (1,)) for i in c.inputs if i.present and i.name in ("A", "B"))


@pytest.mark.parametrize("flaw,keep,least", [
    ("swap-zero-points", lambda c: "a_zero_point,b_zero_point" in c.tags["optional_inputs"], 10),
    ("ignore-a-zero-point", lambda c: "a_zero_point" in c.tags["optional_inputs"], 15),
    ("ignore-b-zero-point", lambda c: "b_zero_point" in c.tags["optional_inputs"], 15),
    ("per-column-ignored", lambda c: "per-column" in c.tags["shape"], 15),
    ("bias-ignored", lambda c: "bias" in c.tags["optional_inputs"], 15),
])
def test_wrong_matmul_integer_to_float_kernels_are_caught(flaw, keep, least, cases):
    sel = [c for c in _values(cases["MatMulIntegerToFloat"]) if keep(c) and _nonempty(c)]
    assert len(sel) >= least
    assert _fails(sel, "MatMulIntegerToFloat", mitf_kernel(flaw=flaw), flaw) >= least


@pytest.mark.parametrize("flaw,least", [("float-A", 12), ("zp-truncated", 4), ("ignore-b-zero-point", 4)])
def test_wrong_dynamic_quantize_matmul_kernels_are_caught(flaw, least, cases):
    sel = _values(cases["DynamicQuantizeMatMul"])
    if flaw == "ignore-b-zero-point":
        sel = [c for c in sel if "b_zero_point" in c.tags["optional_inputs"]]
    assert _fails(sel, "DynamicQuantizeMatMul", dqmm_kernel(flaw), flaw) >= least


def test_wrong_matmul_integer16_kernel_is_caught(cases):
    sel = [c for c in _values(cases["MatMulInteger16"]) if c.contested is None]
    assert _fails(sel, "MatMulInteger16", mmi16_kernel("int16-acc"), "int16-acc") >= 10


@pytest.mark.parametrize("flaw,keep,least", [
    ("half-away", lambda c: c.tags["numerics"] == "ties" and c.outputs[0].elem_type != 1, 5),
    ("wrap", lambda c: c.tags["numerics"] == "saturate" and c.outputs[0].elem_type != 1, 10),
    ("swap-zero-points", lambda c: True, 40),
    ("per-column-ignored", lambda c: "per-column" in c.tags["shape"], 25),
    ("C-ignored", lambda c: "C" in c.tags["optional_inputs"].split(","), 25),
    ("alpha-ignored", lambda c: c.tags["params"] in ("non-default", "alpha=1.7"), 15),
    ("transB-ignored", lambda c: c.tags["shape"].startswith(("NT", "TT")), 8),
])
def test_wrong_qgemm_kernels_are_caught(flaw, keep, least, cases):
    sel = [c for c in _values(cases["QGemm"]) if keep(c) and _nonempty(c)]
    assert len(sel) >= least
    res = _run(sel, "QGemm", qgemm_kernel(flaw), flaw)
    n = Counter(r.outcome for r in res)
    assert n["fail"] + (n["error"] if flaw == "transB-ignored" else 0) >= least, n


# ============================================================================ error cases
@pytest.mark.parametrize("op,kernel,count", [("MatMulInteger16", mmi16_kernel(), 2),
                                             ("MatMulIntegerToFloat", mitf_kernel(), 5),
                                             ("DynamicQuantizeMatMul", dqmm_kernel(), 3),
                                             ("QGemm", qgemm_kernel(), 6)])
def test_error_cases_are_rejected(op, kernel, count, cases):
    errs = [c for c in cases[op] if c.expect_error]
    assert len(errs) == count
    res = _run(errs, op, kernel, "e", check=False)
    # QGemm's Y-type: a Python kernel does not see the declared output type (onnxruntime's type
    # inference rejects the model)
    assert all(r.outcome == "pass" for c, r in zip(errs, res) if c.tags["error"] != "Y-type"), \
        [(c.id, r.message[:100]) for c, r in zip(errs, res) if r.outcome != "pass"]


def test_reproducible(cases):
    again = {e.op: [c.content_hash for c in engine.cases(e, 0)] for e in ops_m.ENTRIES}
    assert again == {op: [c.content_hash for c in cs] for op, cs in cases.items()}


# ============================================================================ MatMulNBits
def test_nbits_unpacking_matches_a_loop():
    rng = np.random.default_rng(8)
    for bits in (2, 4, 8):
        n, k, bs = 2, 40, 16
        kb, per = 3, 8 // bits
        b = rng.integers(0, 256, size=(n, kb, bs * bits // 8)).astype(np.uint8)
        sc = rng.uniform(0.1, 1, size=(n, kb))
        w = ref.nbits_weight(b, sc, None, k, n, bits, bs)
        for i in range(n):
            for j in range(k):
                blk, off = divmod(j, bs)
                byte = int(b[i, blk, off // per])
                q = (byte >> ((off % per) * bits)) & ((1 << bits) - 1)  # low-order bits first
                assert w[i, j] == (q - 2 ** (bits - 1)) * sc[i, blk], (bits, i, j)
    # the documentation's example: 4 bits, the first value in the low nibble
    assert ref.unpack_bits(np.array([0x21], np.uint8), 2, 4).tolist() == [1, 2]


def nbits_kernel(flaw=None):
    """MatMulNBits in float32: B unpacked (low bits first), dequantized per block, A @ W^T (+ bias);
    accuracy_level 4: A quantized to int8 per block symmetrically (``max |A| / 127``), as the
    documentation allows; the result rounded to A's type."""

    def kernel(inputs, attrs, outputs, opset):
        a, b, sc = inputs["A"], inputs["B"], inputs["scales"]
        zp, bias = inputs.get("zero_points"), inputs.get("bias")
        k, n, bits, bs = attrs["K"], attrs["N"], attrs.get("bits", 4), attrs["block_size"]
        if bs < 16 or bs & (bs - 1) or sc.dtype != a.dtype or a.shape[-1] != k:
            raise ValueError("block_size a power of two >= 16; scales of A's type; A [..., K]")
        kb, per = -(-k // bs), 8 // bits
        if b.shape != (n, kb, bs * bits // 8):
            raise ValueError("B is (N, k_blocks, blob_size)")
        shifts = np.arange(per) * bits
        order = shifts[::-1] if flaw == "nibbles-swapped" else shifts
        q = ((b.astype(np.int64)[..., None] >> order) & ((1 << bits) - 1)).reshape(n, kb * bs)[:, :k]
        blk = np.arange(k) // bs
        if zp is None or flaw == "zero-points-ignored":
            z = np.full((n, kb), 0.0 if flaw == "default-zero-point-0" else 2.0 ** (bits - 1), np.float32)
        elif zp.dtype == np.uint8:
            z = ((zp.astype(np.int64)[..., None] >> order) & ((1 << bits) - 1)).reshape(n, -1)[:, :kb]
        else:
            z = zp.astype(np.float32).reshape(n, kb)
        s = sc.astype(np.float32).reshape(n, kb)
        if flaw == "block-scales-ignored":
            s = np.repeat(s[:, :1], kb, axis=1)
        w = ((q - z[:, blk]) * s[:, blk]).astype(np.float32)
        af = a.astype(np.float32)
        if attrs.get("accuracy_level", 0) == 4 and af.size:
            for j in range(kb):
                part = af[..., blk == j]
                m = np.abs(part).max(axis=-1, keepdims=True) / np.float32(127)
                m = np.where(m == 0, np.float32(1), m)
                af[..., blk == j] = np.rint(part / m) * m
        y = np.matmul(af, w.T).astype(np.float32)
        if bias is not None:
            y = y + bias.astype(np.float32)
        return {"Y": y.astype(a.dtype)}

    return kernel


def test_legitimate_nbits_kernel_passes(cases):
    vals = _values(cases["MatMulNBits"])
    assert len(vals) >= 60 and {c.tags["params"] for c in vals} >= {"accuracy_level=4", "required-only"}
    _assert_all_pass(vals, "MatMulNBits", nbits_kernel(), "f32")


@pytest.mark.parametrize("flaw,keep,least", [
    ("nibbles-swapped", lambda c: not c.tags["shape"].startswith("b8"), 30),
    ("zero-points-ignored", lambda c: "zero_points" in c.tags["optional_inputs"], 30),
    ("default-zero-point-0", lambda c: "zero_points" not in c.tags["optional_inputs"], 10),
    ("block-scales-ignored", lambda c: True, 40),
])
def test_wrong_nbits_kernels_are_caught(flaw, keep, least, cases):
    sel = [c for c in _values(cases["MatMulNBits"]) if keep(c) and "zero-M" not in c.tags["shape"]]
    assert _fails(sel, "MatMulNBits", nbits_kernel(flaw), flaw) >= least


def test_nbits_error_cases_are_rejected(cases):
    errs = [c for c in cases["MatMulNBits"] if c.expect_error]
    assert len(errs) == 4
    res = _run(errs, "MatMulNBits", nbits_kernel(), "e")
    assert all(r.outcome == "pass" for r in res), [(c.id, r.message[:100]) for c, r in zip(errs, res)
                                                    if r.outcome != "pass"]


# ============================================================================ GatherBlockQuantized
def test_gather_block_quantized_oracle_matches_a_loop():
    rng = np.random.default_rng(13)
    data = rng.integers(-8, 8, size=(5, 40))
    sc = rng.uniform(-1, 1, size=(5, 3))
    zp = rng.integers(-8, 8, size=(5, 3))
    idx = np.array([[4, -1], [5, -6]])  # 5 and -6 are out of range: zeros
    got = ref.gather_block_quantized(_obj(data, data.shape), _obj(idx, idx.shape), sc, _obj(zp, zp.shape),
                                     data_type="int4", block_size=16)
    assert got.shape == (2, 2, 40)
    for a in range(2):
        for b in range(2):
            i = int(idx[a, b])
            for k in range(40):
                want = 0.0 if not -5 <= i < 5 else (data[i, k] - zp[i, k // 16]) * sc[i, k // 16]
                assert got[a, b, k] == want, (a, b, k)
    # uint8 without zero points: 2^(bits-1) = 128 for 8 bits
    u = ref.gather_block_quantized(_obj([[130] * 16], (1, 16)), _obj([0], (1,)), np.array([[0.5]]), None,
                                   data_type="uint8", block_size=16, bits=8)
    assert u.tolist() == [[1.0] * 16]


def gbq_kernel(flaw=None):
    """GatherBlockQuantized in float32: every block's ``(data - zero_point) * scale`` (the zero
    point 0 for int4/uint4, 128 for 8-bit uint8, none for float8/float4), then Gather with
    out-of-range indices giving zeros."""

    def kernel(inputs, attrs, outputs, opset):
        data, idx, sc, zp = inputs["data"], inputs["indices"], inputs["scales"], inputs.get("zero_points")
        fp = str(data.dtype).startswith("float")
        r = data.ndim
        ga, qa = attrs.get("gather_axis", 0) % r, attrs.get("quantize_axis", 1) % r
        bs = attrs.get("block_size", 128)
        if bs < 16 or bs & (bs - 1) or (fp and zp is not None):
            raise ValueError("block_size; no zero points with float data")
        if str(data.dtype) == "uint8" and ga != 0:
            raise ValueError("uint8: gather_axis 0")
        bits = attrs.get("bits", 4)
        if str(data.dtype) == "uint8" and bits < 8:  # packed along the last axis, low-order bits first
            per = 8 // bits
            order = np.arange(per)[::-1] if flaw == "nibbles-swapped" else np.arange(per)

            def unpack(a):
                return ((a.astype(np.int64)[..., None] >> (order * bits)) & ((1 << bits) - 1)).reshape(
                    a.shape[:-1] + (-1,))

            data = unpack(data).astype(np.uint8)
            if zp is not None:
                zp = unpack(zp)[..., : sc.shape[-1]].astype(np.uint8)
        nb = -(-data.shape[qa] // bs)
        if sc.shape[qa] != nb or any(sc.shape[i] != data.shape[i] for i in range(r) if i != qa):
            raise ValueError("scales shape")
        d = data.astype(np.float32)
        if zp is None or flaw == "zero-points-ignored":
            z = np.float32(2 ** (bits - 1) if str(data.dtype) == "uint8" and flaw != "uint8-default-0" else 0)
        else:
            z = np.take(np.repeat(zp.astype(np.float32), bs, axis=qa), np.arange(data.shape[qa]), axis=qa)
        s = sc.astype(np.float32)
        if flaw == "first-block-scale":
            s = np.repeat(np.take(s, [0], axis=qa), nb, axis=qa)
        s = np.take(np.repeat(s, bs, axis=qa), np.arange(data.shape[qa]), axis=qa)
        deq = ((d - z) * s).astype(np.float32)
        n = data.shape[ga]
        ix = idx.astype(np.int64)
        if flaw == "clamp-indices":
            valid = np.ones(ix.shape, bool)
            ix = np.clip(np.where(ix < 0, ix + n, ix), 0, n - 1)
        else:
            valid = (ix >= -n) & (ix < n)
            ix = np.where(valid, np.where(ix < 0, ix + n, ix), 0)
        out = np.take(deq, ix, axis=ga)
        out = np.where(valid.reshape((1,) * ga + ix.shape + (1,) * (r - ga - 1)), out, 0)
        return {"output": out.astype(sc.dtype)}

    return kernel


def test_legitimate_gather_block_quantized_kernel_passes(cases):
    vals = _values(cases["GatherBlockQuantized"])
    assert len(vals) >= 120 and len({c.tags["dtype"] for c in vals}) == 8
    _assert_all_pass(vals, "GatherBlockQuantized", gbq_kernel(), "f32")


@pytest.mark.parametrize("flaw,keep,least", [
    ("zero-points-ignored", lambda c: "zero_points" in c.tags["optional_inputs"], 15),
    ("uint8-default-0", lambda c: c.tags["dtype"] == "uint8" and c.tags["optional_inputs"] == "none", 5),
    ("first-block-scale", lambda c: "indices-scalar" not in c.tags["shape"], 60),
    ("clamp-indices", lambda c: c.tags["numerics"] in ("out-of-range", "packed"), 10),
    ("nibbles-swapped", lambda c: c.tags["numerics"] == "packed", 8),
])
def test_wrong_gather_block_quantized_kernels_are_caught(flaw, keep, least, cases):
    sel = [c for c in _values(cases["GatherBlockQuantized"]) if keep(c) and "empty" not in c.tags["shape"]]
    assert _fails(sel, "GatherBlockQuantized", gbq_kernel(flaw), flaw) >= least


def test_gather_block_quantized_error_cases_are_rejected(cases):
    errs = [c for c in cases["GatherBlockQuantized"] if c.expect_error]
    assert len(errs) == 4
    res = _run(errs, "GatherBlockQuantized", gbq_kernel(), "e")
    assert all(r.outcome == "pass" for r in res), [(c.id, r.message[:100]) for c, r in zip(errs, res)
                                                    if r.outcome != "pass"]
