"""ai.onnx Attention (23, 24, 25) and TensorScatter (24) as entries of the operator table
(family ``shaped``).

Oracles, error bounds and legitimate kernels: :mod:`conformance.reference.attention` (the
float64 core :func:`~conformance.reference.attention.scaled_dot_product_attention` is shared
with onnxruntime's com.microsoft attention operators).

**Attention shape table** (every dimension fixed per pattern but the batch, so the templates'
products -- 3-D hidden sizes ``heads x head_size``, the total length ``past + kv`` -- hold):
4-D and 3-D inputs (``q_num_heads`` / ``kv_num_heads``); multi-head, grouped-query (Hq = 2, 3
Hkv) and multi-query (Hkv = 1); a value head size other than the query/key head size; self and
cross attention with the query shorter and longer than the keys; is_causal square, with
``Lq != Lk`` and no cache (the text: ``offset = 0``, the top-left corner), with a past
(``offset = past_sequence_length``, which is not ``Lk - Lq`` when the current K is longer than Q),
with ``nonpad_kv_seqlen`` (24+, ``offset = nonpad - Lq`` per batch, negative: leading rows fully
masked); attn_mask boolean and additive (the type combination: U bool or U = T1) of every
broadcast rank (1-D, 2-D, 3-D ``(heads, q, kv)``, 4-D with batch and head dimensions of 1 and
whole, a ``(q, 1)`` column) and a last dimension shorter than the total length (24+, padded
with ``-inf``); past_key/past_value with present_key/present_value (a decode step, a prefill
over a cache, an empty past, GQA, 3-D); the scale default and given (0.25, 2); softcap; every
``softmax_precision`` the text lists; ``qk_matmul_output_mode`` 0-3 with its output (with a
mask and softcap so the four stages differ); Attention-25's sliding window (left/right
bounds, one-sided, with is_causal, with a past offset, with nonpad_kv_seqlen); an empty batch,
an empty query, no keys at all (every row fully masked: zero rows), head size 1, a single key,
a long key sequence (64 keys, head size 32).

**Numerics classes**: ``normal`` (Q, K in [-2, 2], V in [-1, 1], an additive mask in [-2, 2]
with some ``-inf``, a boolean mask 70 % True), ``peaked`` (Q, K in [-4, 4], additive mask in
[-8, 8]: sharp softmax rows; finite logits stay within +-25 so that a kernel without max subtraction
does not overflow float32), ``dead-rows`` (``normal`` with the first query row of the mask
entirely False / ``-inf``: the text's zero row).

**Type combinations** (``type_filter``): T2 = T1 only (the function body multiplies the T1
probabilities by V in one MatMul, which is ill-typed for T2 != T1, and the text states no
conversion); U bool or U = T1 only (the text: "a boolean mask ... or a float mask of the same
type as query, key, value"; an integer mask or a float mask of another type has no meaning in
the text).

**Contested**: a mask whose last dimension is 1 with more than one key at 24+ (broadcast by
"broadcastable", padded with ``-inf`` by "The last dimension can also be shorter"; the oracle pads,
as the function body of 24 and 25 and onnx.reference do; at 23 it broadcasts, as 23's text and
body do).

**Not generated, with the reason**: present_key/present_value without past_key/past_value and
the reverse ("They shall be used together"; the readings of "together" differ), nonpad_kv_seqlen
with a past (the text: "should not be used together"), q_num_heads/kv_num_heads written with
4-D inputs (onnx.reference rejects it at 25 only; the attributes "Must be used with 3D inputs").

**Error cases**: kv_num_heads not dividing q_num_heads (3-D and 4-D), a mask whose shape does
not broadcast, a mask longer than the total sequence, a 3-D input without the head attributes,
head sizes of Q and K that differ, a hidden size that is not a multiple of the heads, past_key
without past_value.

**Tolerance** (docs/tolerance.md "Attention and TensorScatter"): the per-element bound of
:func:`conformance.reference.attention.bound`, every output.

**TensorScatter-24**: :func:`conformance.reference.attention.tensor_scatter`, exact.
"""

from __future__ import annotations

import numpy as np

from ..reference import attention as ref
from . import values as V
from .engine import register_entries
from .entry import Entry, Err, Shape

_ATT_IN = ("Q", "K", "V", "attn_mask", "past_key", "past_value", "nonpad_kv_seqlen")
_ATT_OUT = ("Y", "present_key", "present_value", "qk_matmul_output")
QK = "qk_matmul_output"
PRESENT = ("present_key", "present_value")


# ============================================================================ numerics
def _att_draw(rng, ctx, shapes, mode: str):
    t = ctx.types["Q"]
    names = [n for n in _ATT_IN if n in ctx.types]
    qk = 4.0 if mode == "peaked" else 2.0
    mrange = 8.0 if mode == "peaked" else 2.0
    out = []
    for n, shp in zip(names, shapes):
        if n in ("Q", "K", "past_key"):
            out.append(V.representable(rng.uniform(-qk, qk, size=shp), t))
        elif n in ("V", "past_value"):
            out.append(V.representable(rng.uniform(-1.0, 1.0, size=shp), t))
        elif n == "attn_mask":
            if ctx.types[n] == "bool":
                m = rng.random(size=shp) < 0.7
            else:
                m = V.representable(rng.uniform(-mrange, mrange, size=shp), t)
                m = np.where(rng.random(size=shp) < 0.15, -np.inf, m)
            if mode == "dead-rows" and len(shp) >= 2 and m.size:
                m = np.array(m, copy=True)
                m[..., 0, :] = False if m.dtype == np.bool_ else -np.inf
            out.append(m)
        else:  # nonpad_kv_seqlen: the pattern's value
            out.append(np.zeros(shp, dtype=object))
    return out


def _att_class(mode):
    def fn(rng, ctx, shapes):
        return _att_draw(rng, ctx, shapes, mode)

    fn.__name__ = fn.__qualname__ = f"attention_{mode.replace('-', '_')}"
    fn.__doc__ = f"Attention numerics class ``{mode}`` (module docstring)."
    return fn


ATT_CLASSES = {m: _att_class(m) for m in ("normal", "peaked", "dead-rows")}


# ============================================================================ oracle, tolerance
def _inputs(ins):
    out = [None if a is None else (np.asarray(a).astype(np.int64) if i == 6 else np.asarray(a))
           for i, a in enumerate(list(ins) + [None] * (7 - len(ins)))]
    if out[3] is not None and out[3].dtype != np.bool_:
        out[3] = out[3].astype(np.float64)
    return out


def attention_oracle(ctx, *ins, **attrs):
    """Attention 23-25 (:func:`conformance.reference.attention.attention`): Y, present_key,
    present_value, qk_matmul_output, float64."""
    return ref.attention(*_inputs(ins), version=ctx.version, **attrs)


def attention_tolerance(ctx, inputs, attrs, outputs) -> dict:
    """:func:`conformance.reference.attention.bound` of every present output (present_key and
    present_value are copies: exact)."""
    from ..tolerance import Tolerance

    t = ctx.types["Q"]
    bd = ref.bound(*_inputs(inputs), t=t, version=ctx.version, **attrs)
    mode = int(attrs.get("qk_matmul_output_mode", 0) or 0)
    tol = {}
    for name in outputs:
        if name in PRESENT:
            tol[name] = Tolerance(0.0, 0.0, exact=True, variants=("copy",))
        else:
            tol[name] = ref.tolerance_of(t, bd["Y"] if name == "Y" else bd[mode])
    return tol


def _att_type_filter(version, combo) -> str | None:
    if combo.get("T2") != combo.get("T1"):
        return ("T2 != T1: the function body multiplies the T1 probabilities by V in one MatMul (ill-typed), and "
                "the text states no conversion")
    u = combo.get("U")
    if u is not None and u not in ("bool", combo.get("T1")):
        return ("attn_mask of type U other than bool or T1: the text defines 'a boolean mask' or 'a float mask of "
                "the same type as query, key, value' only")
    return None


def _att_contested(ctx, attrs) -> str | None:
    ms = ctx.shapes.get("attn_mask")
    if ctx.version >= 24 and ms and ms[-1] == 1:
        tot = ctx.shapes["K"][-2 if len(ctx.shapes["K"]) == 4 else 1] + (
            ctx.shapes["past_key"][2] if "past_key" in ctx.shapes else 0)
        if tot > 1:
            return ("attn_mask's last dimension 1 < total_sequence_length: 'broadcastable to (..., "
                    "total_sequence_length)' broadcasts it, 'The last dimension can also be shorter ... and will be "
                    "padded ... with negative infinity' (and the function body's Pad, which the oracle follows) pads it")
    return None


def _att_optional_rule(version, combo, optional) -> bool:
    """A float U (= T1) is bound only by attn_mask: its cases carry the mask."""
    return combo.get("U") == "bool" or "attn_mask" in optional


# ============================================================================ shape table
def _pat(name, *, rank=4, b=(1, 2), hq=2, hkv=2, lq=3, lk=3, past=None, d=4, e=None, mask=None, nonpad=None,
         attrs=None, qk=None, since=0, until=10**6, numerics=(), mlen=None):
    """One pattern: ``hq``/``hkv`` heads, query length ``lq``, current key length ``lk``, past
    length ``past`` (with present outputs), head sizes ``d``/``e``; ``mask`` a template over
    ``b`` (batch), ``h`` (q heads), ``s`` (query), ``t`` (total keys), digits literal, ``m`` a
    shortened key length ``mlen``; ``nonpad`` the nonpad_kv_seqlen values (fixes the batch);
    ``qk`` the qk_matmul_output_mode (the output requested)."""
    e = d if e is None else e
    has_past = past is not None
    past = past or 0
    tot = past + lk
    if nonpad is not None:
        b = (len(nonpad), len(nonpad))
    dims = {"B": b, "H": (hq, hq), "G": (hkv, hkv), "S": (lq, lq), "L": (lk, lk), "P": (past, past),
            "T": (tot, tot), "D": (d, d), "E": (e, e), "X": (hq * d, hq * d), "Y": (hkv * d, hkv * d),
            "Z": (hkv * e, hkv * e), "M": ((mlen, mlen) if mlen is not None else (tot, tot))}
    a = dict(attrs or {})
    if rank == 4:
        inputs = {"Q": "BHSD", "K": "BGLD", "V": "BGLE"}
    else:
        inputs = {"Q": "BSX", "K": "BLY", "V": "BLZ"}
        a.update(q_num_heads=hq, kv_num_heads=hkv)
    inputs.update(past_key="BGPD", past_value="BGPE", nonpad_kv_seqlen="B")
    need = []
    if mask is not None:
        inputs["attn_mask"] = mask.translate(str.maketrans("bhstm", "BHSTM"))
        need.append("attn_mask")
    else:
        inputs["attn_mask"] = "ST"
    if has_past:
        need += ["past_key", "past_value"]
    values = {}
    if nonpad is not None:
        need.append("nonpad_kv_seqlen")
        values["nonpad_kv_seqlen"] = list(nonpad)
        since = max(since, 24)
    if qk is not None:
        a["qk_matmul_output_mode"] = qk
    outs = [()]
    if has_past:
        outs = [PRESENT]
        if qk is not None:
            outs = [PRESENT + (QK,)]
    elif qk is not None:
        outs = [(QK,)]
    return Shape(name, inputs, a, dims=dims, optional=(tuple(n for n in _ATT_IN if n in need),), since=since,
                 until=until, numerics=numerics, outputs=tuple(outs), values=values)


CAUSAL = {"is_causal": 1}


def _att_shapes() -> tuple[Shape, ...]:
    p = _pat
    return (
        # 4-D, no cache
        p("4d/mha"), p("4d/mha/explicit-scale-default", attrs={"scale": 0.5}, d=4),
        p("4d/cross/Lq<Lk", lq=2, lk=5), p("4d/cross/Lq>Lk", lq=5, lk=2),
        p("4d/gqa", hq=4, hkv=2), p("4d/gqa/3:1", hq=6, hkv=2, lq=2, lk=4), p("4d/mqa", hq=3, hkv=1),
        p("4d/dv<dk", d=4, e=3), p("4d/dv>dk/gqa", hq=4, hkv=2, d=3, e=5),
        p("4d/scale=0.25", attrs={"scale": 0.25}), p("4d/scale=2", attrs={"scale": 2.0}, numerics=("normal",)),
        p("4d/softcap=1", attrs={"softcap": 1.0}), p("4d/softcap=2/gqa/mask", attrs={"softcap": 2.0}, hq=4, hkv=2,
                                                         mask="st"),
        p("4d/causal/square", lq=4, lk=4, attrs=CAUSAL), p("4d/causal/Lq<Lk", lq=2, lk=5, attrs=CAUSAL),
        p("4d/causal/Lq>Lk", lq=5, lk=3, attrs=CAUSAL), p("4d/causal/gqa/Lq<Lk", hq=4, hkv=1, lq=3, lk=6,
                                                         attrs=CAUSAL),
        # masks of every broadcast rank
        p("4d/mask-2d", mask="st", lq=3, lk=5), p("4d/mask-4d", mask="bhst"), p("4d/mask-b1st", mask="b1st", lk=4),
        p("4d/mask-1hst", mask="1hst", hq=4, hkv=2), p("4d/mask-3d", mask="hst", hq=2),
        p("4d/mask-1d", mask="t", lk=5), p("4d/mask-column", mask="s1", lq=4),
        p("4d/mask/causal/Lq<Lk", mask="st", lq=3, lk=5, attrs=CAUSAL),
        p("4d/mask/causal/softcap", mask="b1st", lq=4, lk=4, attrs={**CAUSAL, "softcap": 1.5}),
        p("4d/mask-short", mask="sm", lk=5, mlen=3, since=24),
        p("4d/mask-short/causal", mask="1hsm", lq=2, lk=6, mlen=4, since=24, attrs=CAUSAL),
        # qk_matmul_output, every mode, stages made to differ (mask and softcap)
        *(p(f"4d/qk-mode={m}", mask="st", lk=4, attrs={"softcap": 1.5}, qk=m) for m in range(4)),
        p("4d/qk-mode=3/causal/dead", mask="st", lq=3, lk=3, attrs=CAUSAL, qk=3),
        p("4d/qk-mode=2/causal", lq=3, lk=4, attrs=CAUSAL, qk=2),
        p("4d/qk-mode=2/nonpad", lq=2, lk=4, nonpad=(4, 2), qk=2),
        p("4d/qk-mode=1/no-softcap", mask="st", qk=1),
        p("3d/qk-mode=2/gqa", rank=3, hq=4, hkv=2, mask="bhst", qk=2),
        # softmax_precision
        *(p(f"4d/softmax_precision={sp}", mask="st", lk=4, attrs={"softmax_precision": sp}) for sp in (1, 10, 11, 16)),
        p("4d/softmax_precision=1/qk-mode=3", attrs={"softmax_precision": 1}, qk=3),
        # 3-D
        p("3d/mha", rank=3), p("3d/gqa", rank=3, hq=4, hkv=2), p("3d/mqa", rank=3, hq=3, hkv=1, d=2),
        p("3d/dv!=dk", rank=3, d=4, e=2), p("3d/causal/Lq<Lk", rank=3, lq=2, lk=4, attrs=CAUSAL),
        p("3d/mask", rank=3, mask="b1st", hq=4, hkv=2, lk=5),
        # past / present
        p("4d/past/decode/causal", lq=1, lk=1, past=4, attrs=CAUSAL),
        p("4d/past/prefill/causal", lq=3, lk=3, past=2, attrs=CAUSAL),
        p("4d/past/Lk>Lq/causal", lq=2, lk=3, past=2, attrs=CAUSAL),
        p("4d/past/mask", lq=2, lk=2, past=3, mask="st"),
        p("4d/past/gqa/causal", hq=4, hkv=2, lq=2, lk=2, past=3, attrs=CAUSAL, d=3, e=2),
        p("4d/past/empty", lq=2, lk=2, past=0, attrs=CAUSAL),
        p("4d/past/qk-mode=0", lq=2, lk=2, past=2, qk=0, attrs=CAUSAL),
        p("3d/past/causal", rank=3, hq=4, hkv=2, lq=2, lk=1, past=3, attrs=CAUSAL),
        p("3d/past/mqa/mask", rank=3, hq=2, hkv=1, lq=1, lk=2, past=2, mask="bhst"),
        # nonpad_kv_seqlen (24+): an external cache of length L
        p("4d/nonpad", lq=2, lk=5, nonpad=(5, 3)),
        p("4d/nonpad/causal", lq=2, lk=6, nonpad=(6, 3, 4), attrs=CAUSAL),
        p("4d/nonpad/causal/negative-offset", lq=3, lk=5, nonpad=(5, 2), attrs=CAUSAL),
        p("4d/nonpad/zero", lq=2, lk=3, nonpad=(0, 3)),
        p("4d/nonpad/mask-short", lq=2, lk=6, nonpad=(4, 2), mask="sm", mlen=4),
        p("3d/nonpad/gqa/causal", rank=3, hq=4, hkv=2, lq=1, lk=4, nonpad=(4, 2), attrs=CAUSAL),
        # sliding window (25)
        p("4d/window=2,1", lq=4, lk=6, attrs={"left_window_size": 2, "right_window_size": 1}, since=25),
        p("4d/window=1,0/causal", lq=4, lk=4, attrs={**CAUSAL, "left_window_size": 1, "right_window_size": 0},
          since=25),
        p("4d/window=-1,0", lq=3, lk=5, attrs={"left_window_size": -1, "right_window_size": 0}, since=25),
        p("4d/window=2,-1/mask", lq=4, lk=5, mask="st", attrs={"left_window_size": 2}, since=25),
        p("4d/window=1,-1/causal/past", lq=2, lk=2, past=3,
          attrs={**CAUSAL, "left_window_size": 1}, since=25),
        p("4d/window=2,0/nonpad", lq=2, lk=6, nonpad=(6, 3), attrs={"left_window_size": 2, "right_window_size": 0},
          since=25),
        # edges
        p("4d/zero-batch", b=(0, 0)), p("4d/zero-query", lq=0), p("4d/zero-keys", lk=0),
        p("4d/head=1", d=1, e=1), p("4d/one-key", lk=1, lq=3), p("4d/decode", lq=1, lk=6),
        p("4d/long", b=(1, 1), hq=1, hkv=1, lq=2, lk=64, d=32, numerics=("normal",)),
    )


def _att_errors() -> tuple[Err, ...]:
    f = "float"
    return (
        Err("kv_num_heads 2 does not divide q_num_heads 3 ('q_num_heads % kv_num_heads == 0')", "3d-heads-not-multiple",
            {"q_num_heads": 3, "kv_num_heads": 2}, ((1, 3, 6), (1, 4, 4), (1, 4, 4)), type_name=f),
        Err("4-D: K has 2 heads, Q 3 (q_num_heads must be a multiple of kv_num_heads)", "4d-heads-not-multiple", {},
            ((1, 3, 2, 4), (1, 2, 3, 4), (1, 2, 3, 4)), type_name=f),
        Err("attn_mask (4, 5) does not broadcast to (batch, q_num_heads, 3, 5)", "mask-broadcast", {},
            ((1, 2, 3, 4), (1, 2, 5, 4), (1, 2, 5, 4), (4, 5)), type_name=f, types={"attn_mask": "bool"}),
        Err("attn_mask's last dimension 7 is longer than total_sequence_length 5", "mask-too-long", {},
            ((1, 2, 3, 4), (1, 2, 5, 4), (1, 2, 5, 4), (3, 7)), type_name=f, types={"attn_mask": "bool"}),
        Err("3-D Q, K, V without q_num_heads/kv_num_heads ('Must be used with 3D inputs')", "3d-no-num_heads", {},
            ((1, 3, 8), (1, 5, 8), (1, 5, 8)), type_name=f),
        Err("head sizes of Q (4) and K (6) differ", "head-size-mismatch", {},
            ((1, 2, 3, 4), (1, 2, 5, 6), (1, 2, 5, 4)), type_name=f),
        Err("past_key without past_value: 'Both past and present state key/values ... shall be used together, and "
            "not allowed to use only one of them'", "past_key-alone", {},
            ((1, 2, 3, 4), (1, 2, 3, 4), (1, 2, 3, 4), (3, 5), (1, 2, 2, 4)), type_name=f,
            types={"attn_mask": "bool"}),
        Err("3-D Q hidden size 7 is not q_num_heads (2) x head_size", "3d-hidden-not-multiple",
            {"q_num_heads": 2, "kv_num_heads": 2}, ((1, 3, 7), (1, 3, 8), (1, 3, 8)), type_name=f),
    )


ATT_SHAPES = _att_shapes()


def _att_per_type(version, combo) -> int:
    return sum(1 for s in ATT_SHAPES if s.applies(version))


ATTENTION = Entry(
    "Attention", attention_oracle, family="shaped", shapes=ATT_SHAPES, tolerance=attention_tolerance,
    float_numerics=ATT_CLASSES, numerics_classes=lambda t: tuple(ATT_CLASSES), per_type=_att_per_type,
    errors=_att_errors(), type_filter=_att_type_filter, optional_rule=_att_optional_rule,
    contested=_att_contested,
    notes={24: "nonpad_kv_seqlen; attn_mask's last dimension may be shorter (padded with -inf); offset-aware "
                "causal alignment described for the external cache",
           25: "left_window_size / right_window_size (sliding window)"},
)

# ============================================================================ TensorScatter
def tensor_scatter_oracle(ctx, past_cache, update, write_indices=None, mode="linear", axis=-2):
    """TensorScatter-24 (:func:`conformance.reference.attention.tensor_scatter`): the exact copy."""
    w = None if write_indices is None else np.asarray([int(x) for x in np.asarray(write_indices).ravel()])
    return ref.tensor_scatter(past_cache, update, w, mode=mode, axis=axis)


def _ts_axis(ctx) -> int:
    r = len(ctx.shapes["past_cache"])
    a = int(ctx.attrs.get("axis", -2))
    return a + r if a < 0 else a


def _write_indices(rng, ctx):
    """write_indices ``(B,)``: linear mode any start in ``[0, M - S]`` with batch 0 at the last
    possible one (``M - S``, so a kernel ignoring the indices writes elsewhere); circular mode
    batch 0 at ``M - 1`` (the update wraps around when ``S >= 2``), the others anywhere in
    ``[0, 2M)`` (the index itself is taken modulo M)."""
    b = ctx.shapes["past_cache"][0]
    ax = _ts_axis(ctx)
    m, s = ctx.shapes["past_cache"][ax], ctx.shapes["update"][ax]
    if b == 0:
        return np.zeros((0,), dtype=object)
    if ctx.attrs.get("mode", "linear") == "circular":
        w = [m - 1] + [int(rng.integers(0, 2 * m)) for _ in range(b - 1)]
    else:
        w = [m - s] + [int(rng.integers(0, m - s + 1)) for _ in range(b - 1)]
    return np.array(w, dtype=object)


def _ts_shapes() -> tuple[Shape, ...]:
    def sh(name, cache, upd, attrs=None, opt=None, **dims):
        return Shape(name, {"past_cache": cache, "update": upd, "write_indices": "B"}, dict(attrs or {}),
                     dims={k: v for k, v in dims.items()}, optional=opt)

    w = (("write_indices",),)
    no = ((),)
    circ = {"mode": "circular"}
    return (
        sh("prefill/r4/axis=-2", "BHMD", "BHSD", opt=no, S=(1, 3), M=(4, 6)),
        sh("decode/r4/axis=-2", "BHMD", "BH1D", opt=w, M=(4, 6)),
        sh("linear/r4/indices", "BHMD", "BHSD", opt=w, S=(2, 3), M=(5, 7)),
        sh("linear/r4/full", "BHMD", "BHMD", opt=no, M=(3, 4)),
        sh("linear/r3/axis=1", "BMD", "BSD", {"axis": 1}, opt=w, S=(1, 3), M=(4, 6)),
        sh("linear/r4/axis=-1", "BHDM", "BHDS", {"axis": -1}, opt=w, S=(1, 3), M=(4, 6)),
        sh("linear/r4/axis=1", "BMHD", "BSHD", {"axis": 1}, opt=w, S=(1, 3), M=(4, 6)),
        sh("linear/r2/axis=1", "BM", "BS", {"axis": 1}, opt=w, S=(1, 3), M=(4, 6)),
        sh("linear/r5/axis=-3", "BHMDE", "BHSDE", {"axis": -3}, opt=w, S=(1, 2), M=(3, 4), E=(1, 2)),
        sh("circular/r4/wrap", "BHMD", "BHSD", circ, opt=w, B=(2, 3), S=(2, 4), M=(4, 5)),
        sh("circular/r4/decode", "BHMD", "BH1D", circ, opt=w, B=(2, 3), M=(3, 5)),
        sh("circular/r4/no-indices", "BHMD", "BHSD", circ, opt=no, S=(1, 3), M=(4, 5)),
        sh("circular/r3/axis=1/wrap", "BMD", "BSD", {**circ, "axis": 1}, opt=w, B=(2, 3), S=(2, 3), M=(3, 5)),
        sh("circular/r4/full", "BHMD", "BHMD", circ, opt=w, B=(2, 2), M=(3, 4)),
        sh("zero-update", "BHMD", "BH0D", opt=w, M=(3, 4)),
        sh("zero-batch", "0HMD", "0HSD", opt=w, S=(1, 2), M=(3, 4)),
    )


def _ts_errors() -> tuple[Err, ...]:
    return (
        Err("axis 'cannot be 0 (the batch dimension)'", "axis=0", {"axis": 0}, ((2, 4, 3), (2, 4, 3))),
        Err("the update (5) is longer than max_sequence_length (4) along axis -2", "update-longer", {},
            ((1, 2, 4, 3), (1, 2, 5, 3))),
        Err("update and past_cache differ outside the sequence axis (head size 3 vs 2)", "shape-mismatch", {},
            ((1, 2, 4, 3), (1, 2, 2, 2))),
        Err("'linear mode requires write_indices+sequence_length<=max_sequence_length': 3 + 2 > 4",
            "linear-past-the-end", {}, ((1, 2, 4, 3), (1, 2, 2, 3), (1,)), values={"write_indices": [3]}),
    )


TS_SHAPES = _ts_shapes()
TENSOR_SCATTER = Entry(
    "TensorScatter", tensor_scatter_oracle, family="shaped", shapes=TS_SHAPES,
    structural={"write_indices": _write_indices}, signed_zero=True, errors=_ts_errors(),
    # every pattern for the common cache types, a third of them cycling for the others
    per_type=lambda v, combo: len(TS_SHAPES) if combo.get("T") in ("float", "float16", "bfloat16", "double", "int64",
                                                                   "string", "bool") else 6,
)

ENTRIES = (ATTENTION, TENSOR_SCATTER)
register_entries(ENTRIES, family="attention")
