"""onnxruntime's attention-family contrib operators (com.microsoft), onnxruntime-defined: their
schemas come from onnxruntime's registry (``conformance.opspec.op_spec(op, "com.microsoft")``),
their oracle from ContribOperators.md.

Built: **RotaryEmbedding (com.microsoft, 1)**: 3-D input ``[batch, sequence, hidden]`` with
``num_heads``, 2-D ``position_ids [batch, sequence]`` (int64), caches
``[max_position, head_size / 2]``, ``interleaved`` 0/1, partial ``rotary_embedding_dim`` (the head's tail passes through),
``is_packed_batching`` 0 and ``scale`` 1.0 given explicitly.  Only what every reading agrees on is
generated: the 4-D input layout (documented as ``[batch, num_heads, sequence, head]`` in one
version and ``[batch, sequence, num_heads, head]`` in another), the 1-element position_ids
form, ``is_packed_batching`` 1 and other ``scale`` values are left out.

Tolerance: the ai.onnx RotaryEmbedding rule (docs/tolerance.md, "Transformer operators"),
reused: ``gamma_3(u_T) (|cos x1| + |sin x2|) + 2 s``.

**EmbedLayerNormalization (1)**: word, position (implicit, ``[B, S]`` or ``[1, S]`` ids) and
segment embeddings summed and layer-normalized; mask_index from right-padded 0/1 masks;
embedding_sum without segments only (what every reading agrees on).

**MultiHeadAttention (1)**, **GroupQueryAttention (1)**, **Attention (1)**: the forms onnxruntime's
CPU kernels take (separate, BNSH and packed Q/K/V, the merged projection, bias, key padding masks
and mask_index forms, attention_bias, past/present caches, unidirectional/causal aligned to the
bottom-right corner of the cache, seqlens_k and total_sequence_length, rotary, softcap, head_sink,
local window (contested)) on the shared float64 core
:func:`conformance.reference.attention.scaled_dot_product_attention`; tolerance: the first-order
attention bound :func:`conformance.reference.contrib_attention.attention_bound` (docs/tolerance.md,
"onnxruntime's attention-family contrib operators, continued").  What the text leaves
undefined or provider-dependent is not generated and is declared to coverage with its reason
(``coverage.DECLARED_UNEXERCISED``): qk / output_qk, buffer sharing, beam-search indirection, the
quantized KV cache, q/k norm weights, query_seqlens.
"""

from __future__ import annotations

import numpy as np

from .. import coverage
from ..reference import contrib_attention as ref
from ..reference import linalg as lref
from ..reference import transformer as tref
from ..tolerance import Tolerance
from . import values as V
from .engine import register_entries
from .entry import Attrs, Entry, Err, Shape  # noqa: F401

MS = "com.microsoft"


def _draw(rng, ctx, shapes, mode: str):
    """Inputs ``[input, position_ids, cos_cache, sin_cache]``: input uniform in [-2, 2]; genuine
    cos/sin tables ``p * 10000^(-2i/r)`` (``random-cache``: uniform [-1, 1]); position_ids
    replaced by the structural rule."""
    t = ctx.types["input"]
    x = V.representable(rng.uniform(-2.0, 2.0, size=shapes[0]), t)
    cs = shapes[2]
    if mode == "random-cache":
        c = V.representable(rng.uniform(-1.0, 1.0, size=cs), t)
        s = V.representable(rng.uniform(-1.0, 1.0, size=shapes[3]), t)
    else:
        half = cs[-1]
        freq = 10000.0 ** (-2.0 * np.arange(half) / max(2 * half, 1))
        ang = np.arange(cs[0], dtype=np.float64)[:, None] * freq
        c, s = V.representable(np.cos(ang), t), V.representable(np.sin(ang), t)
    return [x, np.zeros(shapes[1], dtype=object), c, s]


def _class(mode):
    def fn(rng, ctx, shapes):
        return _draw(rng, ctx, shapes, mode)
    fn.__name__ = fn.__qualname__ = f"ms_rope_{mode.replace('-', '_')}"
    fn.__doc__ = f"com.microsoft RotaryEmbedding numerics class ``{mode}`` (module docstring)."
    return fn


CLASSES = {m: _class(m) for m in ("normal", "random-cache")}


def _position_ids(rng, ctx):
    """position_ids ``[batch, seq]``: batch 0 an offset in ``[1, P - S]`` plus ``0..S-1``, other
    batches any positions in ``[0, P)`` (never ``0..S-1`` in batch 0, so a kernel ignoring
    position_ids differs)."""
    b, s = ctx.shapes["position_ids"]
    p = ctx.shapes["cos_cache"][0]
    out = np.empty((b, s), dtype=object)
    if b * s == 0:
        return out
    ids = rng.integers(0, p, size=(b, s))
    ids[0] = int(rng.integers(1, p - s + 1)) + np.arange(s)
    out[:] = ids.astype(int).tolist()
    return out


def _shapes() -> tuple[Shape, ...]:
    out = []

    def add(name, d, heads, inter, b=(1, 2), s=(1, 4), p=(6, 9), r=None, extra=None):
        half = (r or d) // 2
        dims = {"B": b, "S": s, "R": (half, half), "P": p, "W": (heads * d, heads * d)}
        a = {"num_heads": heads, "interleaved": inter, **(extra or {})}
        if r is not None:
            a["rotary_embedding_dim"] = r
        out.append(Shape(name, {"input": "BSW", "position_ids": "BS", "cos_cache": "PR", "sin_cache": "PR"},
                         a, dims=dims))

    add("3d", 8, 2, 0)
    add("3d/interleaved", 8, 2, 1)
    add("3d/heads=3", 4, 3, 0, b=(2, 3))
    add("3d/heads=1/interleaved", 6, 1, 1)
    add("3d/decode", 8, 2, 0, s=(1, 1), b=(2, 3), p=(10, 16))
    add("3d/decode/interleaved", 8, 2, 1, s=(1, 1), b=(2, 3), p=(10, 16))
    add("3d/partial", 8, 2, 0, r=4)
    add("3d/partial/interleaved", 10, 2, 1, r=6)
    # the explicit defaults: is_packed_batching 0 (not packed) and scale 1.0 change nothing
    # under every reading; other values are left out (scale's use is undocumented)
    add("3d/explicit-defaults", 8, 2, 0, extra={"is_packed_batching": 0, "scale": 1.0})
    return tuple(out)


def _attrs(attrs) -> dict:
    return {k: attrs.get(k, 0) or 0 for k in ("interleaved", "num_heads", "rotary_embedding_dim")}


def oracle(ctx, x, position_ids, cos_cache, sin_cache, **attrs):
    """com.microsoft RotaryEmbedding-1
    (:func:`conformance.reference.contrib_attention.ms_rotary_embedding`)."""
    return ref.ms_rotary_embedding(x, position_ids, cos_cache, sin_cache, **_attrs(attrs))


def tolerance(ctx, inputs, attrs, outputs) -> dict:
    """The ai.onnx RotaryEmbedding rule: ``atol = max gamma_3(u_T) (|cos x1| + |sin x2|) + 2 s``,
    ``rtol = 0`` (two products and a sum in T or wider, FMA or not)."""
    t = ctx.types["input"]
    u, s = tref.unit(t)
    x, pid, c, sn = inputs[:4]
    mag = tref.rotary_magnitude(x, c, sn, pid, **_attrs(attrs))
    b = tref.gamma(3, u) * mag
    atol = (float(b.max()) if b.size else 0.0) + 2 * s
    return {"output": Tolerance(atol, 0.0, variants=(f"bound:two products and a sum in T, u={u:g}",))}


def _errors() -> tuple[Err, ...]:
    pid = {"position_ids": [[0, 1, 2]]}
    return (
        Err("hidden_size 8 is not a multiple of num_heads 3", "hidden-not-multiple", {"num_heads": 3},
            ((1, 3, 8), (1, 3), (6, 4), (6, 4)), values=pid),
        Err("cos_cache's last dimension 3 is not head_size/2 = 4", "cache-dim", {"num_heads": 2},
            ((1, 3, 16), (1, 3), (6, 3), (6, 3)), values=pid),
    )


SHAPES = _shapes()
ROTARY_EMBEDDING = Entry(
    "RotaryEmbedding", oracle, family="shaped", domain=MS, shapes=SHAPES, tolerance=tolerance,
    float_numerics=CLASSES, numerics_classes=lambda t: tuple(CLASSES), per_type=2 * len(SHAPES),
    errors=_errors(), structural={"position_ids": _position_ids},
)

# ============================================================================ EmbedLayerNormalization
ELN_OPTS = ("segment_ids", "segment_embedding", "mask", "position_ids")


def _eln_draw(mode: str):
    """Inputs of com.microsoft EmbedLayerNormalization in schema order (present ones): ids uniform
    over their tables, a right-padded 0/1 mask (each batch's word count drawn in ``[0, S]``,
    batch 0 at least one word), position_ids any rows of the table; embeddings N(0, 1) (``offset``:
    word rows share a common offset 8, so the statistics cancel), segment rows N(0, 1) * 2 (a kernel
    ignoring them is far off), gamma +-[0.5, 1.5], beta N(0, 1)."""

    def fn(rng, ctx, shapes):
        names = [n for n in ("input_ids", "segment_ids", "word_embedding", "position_embedding", "segment_embedding",
                             "gamma", "beta", "mask", "position_ids") if n in ctx.types]
        sh = dict(zip(names, shapes))
        b, s = sh["input_ids"]
        out = {}
        out["input_ids"] = rng.integers(0, sh["word_embedding"][0], size=(b, s))
        we = rng.standard_normal(sh["word_embedding"])
        if mode == "offset":
            we = we + 8.0
        out["word_embedding"] = we
        out["position_embedding"] = rng.standard_normal(sh["position_embedding"])
        if "segment_ids" in sh:
            out["segment_ids"] = rng.integers(0, sh["segment_embedding"][0], size=(b, s))
            out["segment_embedding"] = 2.0 * rng.standard_normal(sh["segment_embedding"])
        h = sh["gamma"][0]
        out["gamma"] = rng.uniform(0.5, 1.5, h) * np.where(rng.random(h) < 0.2, -1.0, 1.0)
        out["beta"] = rng.standard_normal(h)
        if "mask" in sh:
            lens = rng.integers(0, s + 1, size=b)
            if b:
                lens[0] = max(int(lens[0]), 1)
            out["mask"] = (np.arange(s)[None, :] < lens[:, None]).astype(np.int64)
        if "position_ids" in sh:
            pb, ps = sh["position_ids"]
            out["position_ids"] = rng.integers(0, sh["position_embedding"][0], size=(pb, ps))
        res = []
        for n in names:
            x = out[n]
            if V.kind(ctx.types[n]) == V.FLOAT:
                res.append(V.representable(x, ctx.types[n]))
            else:
                o = np.empty(x.shape, dtype=object)
                o[...] = x.astype(int).tolist() if x.ndim else int(x)
                res.append(o)
        return res

    fn.__name__ = fn.__qualname__ = f"eln_{mode}"
    fn.__doc__ = f"com.microsoft EmbedLayerNormalization numerics class ``{mode}`` (:func:`_eln_draw`)."
    return fn


ELN_CLASSES = {m: _eln_draw(m) for m in ("normal", "offset")}


def _eln_shapes() -> tuple[Shape, ...]:
    out = []
    base = {"input_ids": "BS", "segment_ids": "BS", "word_embedding": "VH", "position_embedding": "PH",
            "segment_embedding": "GH", "gamma": "H", "beta": "H", "mask": "BS", "position_ids": "BS"}
    dims = {"B": (1, 3), "S": (1, 5), "H": (2, 16), "V": (3, 9), "P": (5, 8), "G": (2, 3)}
    seg, mask = ("segment_ids", "segment_embedding"), ("mask",)

    def add(name, opt, outs, mit=None, **kw):
        inputs = dict(base)
        inputs.update(kw.pop("inputs", {}))
        attrs = {} if mit is None else {"mask_index_type": mit}
        out.append(Shape(name, inputs, attrs, dims={**dims, **kw.pop("dims", {})}, optional=(opt,),
                         outputs=tuple(outs), **kw))

    # mask_index only with a mask (the text defines it from the mask); embedding_sum only without
    # segment embeddings (the text: "sum of word_embedding and position_embedding"; onnxruntime's
    # kernel adds the segment embedding too): what every reading agrees on
    add("words", (), [(), ("embedding_sum",)], 0)
    add("segments", seg, [()], 0)
    add("mask", mask, [("mask_index",), ("mask_index", "embedding_sum")], 1)
    add("segments/mask", seg + mask, [("mask_index",)], 1)
    add("position_ids", ("position_ids",), [(), ("embedding_sum",)], 0)
    add("position_ids/broadcast", ("position_ids",), [(), ("embedding_sum",)], 0, inputs={"position_ids": "1S"})
    add("all", seg + mask + ("position_ids",), [("mask_index",)], 1)
    add("batch=1/seq=1", seg + mask, [("mask_index",)], 1, dims={"B": (1, 1), "S": (1, 1)})
    add("hidden=1", seg, [()], 0, dims={"H": (1, 1)})
    add("long-rows", seg + mask, [("mask_index",)], 1, dims={"H": (256, 256), "S": (2, 3)})
    # mask_index_type absent ("for shape inference"): a model requesting mask_index and one not
    add("mask/mask_index_type-absent", mask, [("mask_index",)])
    add("words/mask_index_type-absent", (), [()])
    return tuple(out)


def eln_oracle(ctx, input_ids, segment_ids, word_embedding, position_embedding, segment_embedding, gamma, beta,
               mask=None, position_ids=None, *, epsilon, **attrs):
    """com.microsoft EmbedLayerNormalization-1
    (:func:`conformance.reference.contrib_attention.embed_layer_normalization`): output,
    mask_index (int32), embedding_sum."""
    y, mi, e = ref.embed_layer_normalization(input_ids, segment_ids, word_embedding, position_embedding,
                                             segment_embedding, gamma, beta, mask, position_ids, epsilon=epsilon)
    return y, mi, e


def _acc_unit(t: str) -> float:
    """Unit roundoff of the working precision mandated for T: float32 at least."""
    return 2.0**-53 if t == "double" else 2.0**-24


def eln_tolerance(ctx, inputs, attrs, outputs) -> dict:
    """output: :func:`conformance.reference.contrib_attention.embed_layer_normalization_bound`
    through :func:`conformance.reference.linalg.final_tolerance`; mask_index exact; embedding_sum:
    two roundings in T of the sum (and one more in a float32 working copy)."""
    t = ctx.types["word_embedding"]
    u_t, s_t = tref.unit(t)
    ids, sids, we, pe, se, g = inputs[:6]
    pids = inputs[8] if len(inputs) > 8 else None
    terms = np.abs(ref.embedding_sum(ids, sids, np.abs(we), np.abs(pe), None if se is None else np.abs(se), pids))
    e = ref.embedding_sum(ids, sids, we, pe, se, pids)
    b = ref.embed_layer_normalization_bound(terms, e, g, epsilon=attrs["epsilon"], u_t=u_t, u_a=_acc_unit(t))
    res = {}
    atol, rtol = lref.final_tolerance(float(b.max()) if b.size else 0.0, u_t, s_t)
    res["output"] = Tolerance(atol, rtol, variants=("bound:sum in T, statistics in float32, any order",))
    if "mask_index" in outputs:
        res["mask_index"] = Tolerance(0.0, 0.0, exact=True)
    if "embedding_sum" in outputs:
        eb = 2.2 * u_t * terms
        atol, rtol = lref.final_tolerance(float(eb.max()) if eb.size else 0.0, u_t, s_t)
        res["embedding_sum"] = Tolerance(atol, rtol, variants=("bound:two roundings of the sum",))
    return res


def _eln_errors() -> tuple[Err, ...]:
    ids = {"input_ids": [[0, 1, 2]], "segment_ids": [[0, 1, 0]]}

    def shapes(ids_=(1, 3), we=(4, 4), pe=(5, 4), g=(4,), b=(4,)):
        # schema order: input_ids, segment_ids, word_embedding, position_embedding, segment_embedding, gamma, beta
        return (ids_, ids_, we, pe, (2, we[1]), g, b)

    return (
        Err("gamma [5] is not [hidden_size 4] ('1D gamma tensor ... with shape (hidden_size)')", "gamma-shape",
            {"mask_index_type": 0}, shapes(g=(5,)), values=ids),
        Err("beta [3] is not [hidden_size 4]", "beta-shape", {"mask_index_type": 0}, shapes(b=(3,)), values=ids),
        Err("position_embedding's hidden size 5 is not word_embedding's 4 ('2D with shape (, hidden_size)')",
            "position-hidden", {"mask_index_type": 0}, shapes(pe=(5, 5)), values=ids),
        Err("input_ids must be 2-D ('2D words IDs with shape (batch_size, sequence_length)')", "ids-rank",
            {"mask_index_type": 0}, shapes(ids_=(3,)), values={"input_ids": [0, 1, 2], "segment_ids": [0, 1, 0]}),
    )


ELN_SHAPES = _eln_shapes()
EMBED_LAYER_NORMALIZATION = Entry(
    "EmbedLayerNormalization", eln_oracle, family="shaped", domain=MS, shapes=ELN_SHAPES, tolerance=eln_tolerance,
    float_numerics=ELN_CLASSES, numerics_classes=lambda t: tuple(ELN_CLASSES), per_type=2 * len(ELN_SHAPES),
    attrs=(Attrs({"epsilon": 1e-5}, tag="eps=1e-5"), Attrs({"epsilon": 0.25}, tag="eps-large")),
    errors=_eln_errors(),
)

# ============================================================================ attention data
def _ints(x) -> np.ndarray:
    o = np.empty(np.shape(x), dtype=object)
    o[...] = np.asarray(x).astype(int).tolist() if np.ndim(x) else int(x)
    return o


def _att_draw(mode: str, fill):
    """A numerics class of the attention operators: ``fill(rng, ctx, sh, out)`` fills the
    structural inputs (masks, lengths, ids) into ``out`` (formal name -> array) given ``sh`` (formal
    name -> shape); every other present floating input is N(0, 1) (``peaked``: the query times 3,
    sharp softmax rows where a score's error is amplified; ``wide-bias``: additive biases N(0, 4)),
    rounded to its type."""

    def fn(rng, ctx, shapes):
        names = list(ctx.types)
        sh = dict(zip(names, shapes))
        out: dict = {}
        fill(rng, ctx, sh, out)
        for n in names:
            if n in out:
                continue
            x = rng.standard_normal(sh[n])
            if mode == "peaked" and n in ("query", "input"):
                x = 3.0 * x
            if n in ("bias",):
                x = 0.5 * x
            if n == "attention_bias" and mode == "wide-bias":
                x = 4.0 * x
            out[n] = x
        res = []
        for n in names:
            if V.kind(ctx.types[n]) == V.FLOAT:
                res.append(V.representable(out[n], ctx.types[n]))
            else:
                res.append(_ints(out[n]))
        return res

    fn.__name__ = fn.__qualname__ = f"attention_{mode.replace('-', '_')}"
    fn.__doc__ = f"Attention numerics class ``{mode}`` (:func:`_att_draw`)."
    return fn


def _keep_first(rng, shape) -> np.ndarray:
    """A 0/1 mask (about 70 % ones) whose first key is always 1 (no query row is fully masked)."""
    m = (rng.random(shape) < 0.7).astype(np.int64)
    m[..., 0] = 1
    return m


def _unit(t: str) -> tuple[float, float]:
    return tref.unit(t)


def _final(bound, t: str, what: str) -> Tolerance:
    u_t, s_t = _unit(t)
    b = np.asarray(bound, np.float64)
    atol, rtol = lref.final_tolerance(float(b.max()) if b.size else 0.0, u_t, s_t)
    return Tolerance(atol, rtol, variants=(what,))


# ============================================================================ MultiHeadAttention
def _mha_fill(rng, ctx, sh, out):
    if "key_padding_mask" in sh:
        ms = sh["key_padding_mask"]
        if len(ms) == 1:  # actual key lengths, in [1, L]
            total = sh["key"][1] if "key" in sh else sh["query"][1]
            out["key_padding_mask"] = rng.integers(1, total + 1, size=ms)
        else:
            out["key_padding_mask"] = _keep_first(rng, ms)


MHA_CLASSES = {m: _att_draw(m, _mha_fill) for m in ("normal", "peaked", "wide-bias")}
MHA_KV = ("key", "value")


def _mha_shapes() -> tuple[Shape, ...]:
    out = []

    def add(name, opt, tmpl, heads=2, head=4, vhead=None, attrs=None, outs=((),), dims=None):
        vhead = vhead or head
        w, x = heads * head, heads * vhead
        d = {"B": (1, 2), "S": (1, 4), "L": (1, 5), "P": (1, 4), "N": (heads, heads), "H": (head, head),
             "J": (vhead, vhead), "W": (w, w), "X": (x, x), "Z": (2 * w + x, 2 * w + x), **(dims or {})}
        inputs = {"query": "BSW", "key": "BLW", "value": "BLX", "bias": "Z", "past_key": "BNPH",
                  "past_value": "BNPJ", **tmpl}
        out.append(Shape(name, inputs, {"num_heads": heads, **(attrs or {})}, dims=d, optional=(tuple(opt),),
                         outputs=tuple(outs)))

    present = ("present_key", "present_value")
    selfkv = {"key": "BSW", "value": "BSX"}
    add("self", MHA_KV, selfkv, outs=((), present))
    add("self/bias", MHA_KV + ("bias",), selfkv, outs=((), present))
    add("cross", MHA_KV, {}, outs=((), present))
    add("cross/bias/v_head=6", MHA_KV + ("bias",), {}, vhead=6)
    add("self/unidirectional", MHA_KV + ("bias",), selfkv, attrs={"unidirectional": 1}, outs=((), present))
    add("key_padding_mask/lengths", MHA_KV + ("key_padding_mask",), {"key_padding_mask": "B"})
    add("key_padding_mask/2d", MHA_KV + ("key_padding_mask",), {"key_padding_mask": "BL"})
    add("key_padding_mask/3d", MHA_KV + ("key_padding_mask",), {"key_padding_mask": "BSL"})
    add("attention_bias", MHA_KV + ("attention_bias",), {"attention_bias": "BNSL"})
    add("attention_bias/1NSL", MHA_KV + ("attention_bias",), {"attention_bias": "1NSL"})
    add("attention_bias/B1SL", MHA_KV + ("bias", "attention_bias"), {"attention_bias": "B1SL"})
    add("attention_bias+key_padding_mask", MHA_KV + ("key_padding_mask", "attention_bias"),
        {"attention_bias": "11SL", "key_padding_mask": "BL"})
    past = ("past_key", "past_value")
    add("past", MHA_KV + past, selfkv, outs=(present,))
    add("past/bias/unidirectional", MHA_KV + ("bias",) + past, selfkv, attrs={"unidirectional": 1}, outs=(present,))
    # the total length T = P + S as a fixed letter: the masks and biases over every key
    fixed = {"S": (3, 3), "P": (4, 4), "T": (7, 7)}
    add("past/unidirectional/key_padding_mask", MHA_KV + ("key_padding_mask",) + past,
        {**selfkv, "key_padding_mask": "BT"}, attrs={"unidirectional": 1}, outs=(present,), dims=fixed)
    add("past/attention_bias", MHA_KV + ("attention_bias",) + past, {**selfkv, "attention_bias": "BNST"},
        outs=(present,), dims=fixed)
    add("past/decode/unidirectional", MHA_KV + past, selfkv, attrs={"unidirectional": 1}, outs=(present,),
        dims={"S": (1, 1), "P": (3, 8)})
    add("kv-bnsh", MHA_KV, {"key": "BNLH", "value": "BNLJ"})
    add("packed-kv", ("key",), {"key": "BLN2H"})
    add("packed-qkv", (), {"query": "BSN3H"})
    add("heads=1", MHA_KV + ("bias",), {}, heads=1, head=8)
    add("heads=4/head=2", MHA_KV, selfkv, heads=4, head=2, attrs={"unidirectional": 1})
    add("long-keys", MHA_KV + ("key_padding_mask",), {"key_padding_mask": "BL"}, dims={"L": (96, 128), "S": (1, 2)})
    return tuple(out)


def _mha_attrs(attrs) -> dict:
    return {"num_heads": int(attrs["num_heads"]), "scale": attrs.get("scale"),
            "unidirectional": int(attrs.get("unidirectional") or 0),
            "mask_filter_value": attrs.get("mask_filter_value") if attrs.get("mask_filter_value") is not None
            else -10000.0}


def mha_oracle(ctx, query, key=None, value=None, bias=None, key_padding_mask=None, attention_bias=None, past_key=None,
               past_value=None, past_sequence_length=None, cache_indirection=None, **attrs):
    """com.microsoft MultiHeadAttention-1
    (:func:`conformance.reference.contrib_attention.multi_head_attention`): output, present_key,
    present_value (qk is never requested: module docstring)."""
    y, pk, pv, _, _ = ref.multi_head_attention(query, key, value, bias, key_padding_mask, attention_bias, past_key,
                                               past_value, **_mha_attrs(attrs))
    return y, pk, pv, None


def mha_tolerance(ctx, inputs, attrs, outputs) -> dict:
    """output: :func:`conformance.reference.contrib_attention.attention_bound` (the heads after the
    bias addition known to one rounding in T); present_key/present_value: exact, one rounding of
    the bias sum where a bias is given."""
    t = ctx.types["query"]
    u_t, _ = _unit(t)
    query, key, value, bias, kpm, ab, pk, pv = (list(inputs) + [None] * 10)[:8]
    a = _mha_attrs(attrs)
    y, kh, vh, probs, add = ref.multi_head_attention(query, key, value, bias, kpm, ab, pk, pv, **a)
    qh, _, _ = ref.mha_heads(query, key, value, bias, num_heads=a["num_heads"])
    d = None if bias is None else u_t
    h = qh.shape[-1]
    sc = a["scale"] if a["scale"] is not None else 1.0 / np.sqrt(h)
    bnd = ref.attention_bound(qh, kh, vh, probs, scale=sc, add=add, u_t=u_t, u_a=_acc_unit(t),
                              dq=None if d is None else d * np.abs(qh), dk=None if d is None else d * np.abs(kh),
                              dv=None if d is None else d * np.abs(vh))
    res = {"output": _final(bnd, t, "bound:softmax(scale QK^T + bias) V in float32, any order, online softmax")}
    for nm, arr in (("present_key", kh), ("present_value", vh)):
        if nm in outputs:
            res[nm] = Tolerance(0.0, 0.0, exact=True) if bias is None else _final(u_t * np.abs(arr), t,
                                                                                   "bound:one rounding of the bias sum")
    return res


def _mha_type_filter(version, combo):
    if combo.get("QK") != combo.get("T"):
        return ("QK binds only the optional qk output, which is not generated (ContribOperators.md's 'normalized "
                "Q * K' does not say whether it is before or after the softmax)")
    return None


def _mha_errors() -> tuple[Err, ...]:
    return (
        Err("hidden_size 6 is not a multiple of num_heads 4", "heads-not-dividing", {"num_heads": 4},
            ((1, 2, 6), (1, 2, 6), (1, 2, 6))),
        Err("key's hidden size 8 is not the query's 6 ('Key with shape (batch_size, kv_sequence_length, "
            "hidden_size)')", "key-hidden", {"num_heads": 2}, ((1, 2, 6), (1, 2, 8), (1, 2, 8))),
        Err("bias [7] is not [hidden_size + hidden_size + v_hidden_size = 18]", "bias-length", {"num_heads": 2},
            ((1, 2, 6), (1, 2, 6), (1, 2, 6), (7,))),
        Err("key_padding_mask [1, 3] fits none of (B), (3B+2), (B, L), (B, T), (B, S, T) with L = T = 2",
            "mask-shape", {"num_heads": 2}, ((1, 2, 6), (1, 2, 6), (1, 2, 6), (18,), (1, 3))),
    )


def _mha_declared(version, combo):
    return "QK binds only the optional qk output, which is not generated (module docstring); T and M are covered"


MHA_SHAPES = _mha_shapes()
MULTI_HEAD_ATTENTION = Entry(
    "MultiHeadAttention", mha_oracle, family="shaped", domain=MS, shapes=MHA_SHAPES, tolerance=mha_tolerance,
    float_numerics=MHA_CLASSES, numerics_classes=lambda t: ("normal", "peaked", "wide-bias"),
    per_type=len(MHA_SHAPES) + 4, type_filter=_mha_type_filter, declared=_mha_declared,
    attrs=(Attrs({"num_heads": 2}, tag="default"), Attrs({"num_heads": 2, "scale": 0.3}, tag="scale=0.3"),
           Attrs({"num_heads": 2, "mask_filter_value": -30000.0}, tag="mask_filter_value")),
    errors=_mha_errors(),
)

# ============================================================================ GroupQueryAttention
def _gqa_fill(rng, ctx, sh, out):
    """seqlens_k and total_sequence_length: a prompt (no past, or an empty one) holds ``S`` tokens
    per entry; with a past every entry holds its whole buffer plus the step (``P + S``) when the
    presents are requested or an attention_bias spans the total length (every present row
    defined) or the step has several tokens, else (a one-token step) a ragged batch (each entry
    ``T`` in ``[S, P + S]``: a shorter entry reads only its first ``T - S`` cached rows);
    position_ids any rows of the caches."""
    b, s = sh["query"][:2]
    pbuf = sh["past_key"][2] if "past_key" in sh else 0
    if pbuf == 0:
        t = np.full(b, s)
    elif "present_key" in ctx.outputs or "attention_bias" in sh or s > 1:
        # a step of several tokens over a past: total_sequence_length = past + new (the text's
        # query_seqlens section: without it "a growing cache" has total == past + sequence_length)
        t = np.full(b, pbuf + s)
    else:
        t = rng.integers(s, pbuf + s + 1, size=b)
    out["seqlens_k"] = t - 1
    out["total_sequence_length"] = np.array(int(t.max()) if b else s)
    if "position_ids" in sh:
        out["position_ids"] = rng.integers(0, sh["cos_cache"][0], size=sh["position_ids"])


GQA_CLASSES = {m: _att_draw(m, _gqa_fill) for m in ("normal", "peaked", "wide-bias")}
GQA_KV = ("key", "value")


def _gqa_shapes() -> tuple[Shape, ...]:
    out = []

    def add(name, opt, tmpl=None, heads=4, kv=2, head=8, attrs=None, outs=((),), dims=None, rot=None):
        d = {"B": (1, 3), "S": (1, 4), "P": (1, 5), "N": (heads, heads), "G": (kv, kv), "H": (head, head),
             "W": (heads * head, heads * head), "K": (kv * head, kv * head),
             "Q": ((heads + 2 * kv) * head, (heads + 2 * kv) * head), "M": (16, 16), **(dims or {})}
        a = {"num_heads": heads, "kv_num_heads": kv, **(attrs or {})}
        if rot is not None:
            d["R"] = (rot // 2, rot // 2)
            a.setdefault("do_rotary", 1)
            opt = tuple(opt) + ("cos_cache", "sin_cache")
        inputs = {"query": "BSW", "key": "BSK", "value": "BSK", "past_key": "BGPH", "past_value": "BGPH",
                  "seqlens_k": "B", "cos_cache": "MR", "sin_cache": "MR", "position_ids": "BS",
                  "attention_bias": "BNSS", "head_sink": "N", **(tmpl or {})}
        order = [f for f in GQA_OPTIONAL if f in opt]
        out.append(Shape(name, inputs, a, dims=d, optional=(tuple(order),), outputs=tuple(outs)))

    present = ("present_key", "present_value")
    past = ("past_key", "past_value")
    one = {"S": (1, 1)}
    add("prompt", GQA_KV, outs=((), present))
    add("prompt/past-empty", GQA_KV + past, {"past_key": "BG0H", "past_value": "BG0H"}, outs=(present,))
    add("prompt/packed", (), {"query": "BSQ"}, outs=((), present))
    add("prompt/mqa", GQA_KV, kv=1, outs=((), present))
    add("prompt/mha", GQA_KV, heads=2, kv=2)
    add("prompt/causal=0", GQA_KV, attrs={"causal": 0})
    add("prompt/softcap", GQA_KV, attrs={"softcap": 2.0})
    add("prompt/attention_bias", GQA_KV + ("attention_bias",))
    add("prompt/attention_bias/11SS", GQA_KV + ("attention_bias",), {"attention_bias": "11SS"})
    add("decode", GQA_KV + past, outs=(present,), dims=one)
    add("decode/ragged", GQA_KV + past, dims={**one, "P": (2, 8)})
    add("decode/packed/ragged", past, {"query": "BSQ"}, dims={**one, "P": (2, 8)})
    add("decode/softcap", GQA_KV + past, attrs={"softcap": 1.5}, outs=(present,), dims=one)
    add("decode/attention_bias", GQA_KV + past + ("attention_bias",), {"attention_bias": "BN1U"}, outs=(present,),
        dims={**one, "P": (5, 5), "U": (6, 6)})
    add("chunk/batch=1", GQA_KV + past, outs=((), present), dims={"B": (1, 1), "S": (2, 4), "P": (2, 5)})
    add("decode/long-past", GQA_KV + past, dims={**one, "P": (100, 128), "B": (1, 2)})
    add("prompt/local_window", GQA_KV, attrs={"local_window_size": 2}, dims={"S": (4, 6)})
    add("decode/local_window", GQA_KV + past, attrs={"local_window_size": 3}, dims={**one, "P": (4, 8)})
    add("prompt/rotary", GQA_KV, head=16, rot=16, outs=((), present))
    add("prompt/rotary/interleaved", GQA_KV, head=16, rot=16, attrs={"rotary_interleaved": 1}, outs=(present,))
    add("decode/rotary/ragged", GQA_KV + past, head=16, rot=16, dims={**one, "P": (2, 8)})
    add("decode/rotary/interleaved", GQA_KV + past, head=16, rot=16, attrs={"rotary_interleaved": 1},
        outs=(present,), dims=one)
    add("decode/rotary/packed", past, {"query": "BSQ"}, head=16, rot=16, outs=(present,), dims=one)
    add("decode/rotary/position_ids", GQA_KV + past + ("position_ids",), head=16, rot=16, dims=one)
    add("prompt/rotary/partial", GQA_KV, head=32, rot=16, outs=(present,))
    # a head size of 8 with rotary: the text sets no restriction (onnxruntime's CPU kernel asks for 16)
    add("prompt/rotary/head=8", GQA_KV, head=8, rot=8)
    add("decode/head_sink", GQA_KV + past + ("head_sink",), attrs={"smooth_softmax": 1}, outs=(present,), dims=one)
    return tuple(out)


GQA_OPTIONAL = ("key", "value", "past_key", "past_value", "cos_cache", "sin_cache", "position_ids", "attention_bias",
                "head_sink", "k_scale", "v_scale", "q_norm_weight", "k_norm_weight", "query_seqlens")


def _gqa_attrs(attrs) -> dict:
    g = {k: attrs.get(k) for k in ("num_heads", "kv_num_heads", "scale", "softcap", "local_window_size", "do_rotary",
                                   "rotary_interleaved", "causal", "smooth_softmax")}
    return {"num_heads": int(g["num_heads"]), "kv_num_heads": int(g["kv_num_heads"]), "scale": g["scale"],
            "softcap": float(g["softcap"] or 0.0),
            "local_window_size": -1 if g["local_window_size"] is None else int(g["local_window_size"]),
            "do_rotary": int(g["do_rotary"] or 0), "rotary_interleaved": int(g["rotary_interleaved"] or 0),
            "causal": 1 if g["causal"] is None else int(g["causal"]),
            "smooth_softmax": -1 if g["smooth_softmax"] is None else int(g["smooth_softmax"])}


def _gqa_call(inputs, attrs):
    x = (list(inputs) + [None] * 17)[:12]
    return ref.group_query_attention(*x, **_gqa_attrs(attrs))


def gqa_oracle(ctx, *inputs, **attrs):
    """com.microsoft GroupQueryAttention-1
    (:func:`conformance.reference.contrib_attention.group_query_attention`): output, present_key,
    present_value (output_qk is never requested: module docstring)."""
    y, pk, pv, _, _ = _gqa_call(inputs, attrs)
    return y, pk, pv, None


def gqa_tolerance(ctx, inputs, attrs, outputs) -> dict:
    """output: :func:`conformance.reference.contrib_attention.attention_bound` per batch entry, the
    rotated heads known to ``gamma_3(u_a) + u_t`` times twice their row's largest magnitude (two
    products and a sum of the rotary rule, then a rounding to T); present_key: that bound with
    rotary, else exact; present_value exact."""
    t = ctx.types["query"]
    u_t, _ = _unit(t)
    u_a = _acc_unit(t)
    a = _gqa_attrs(attrs)
    y, pk, pv, probs, heads = _gqa_call(inputs, attrs)
    kap = (tref.gamma(3, u_a) + u_t) if a["do_rotary"] else 0.0
    parts = []
    for pr, (qb, kb, vb, add) in zip(probs, heads):
        h = qb.shape[-1]
        sc = a["scale"] if a["scale"] is not None else 1.0 / np.sqrt(h)
        dq = dk = None
        if kap:
            dq = np.broadcast_to(2 * kap * np.abs(qb).max(axis=-1, keepdims=True), qb.shape)
            dk = np.broadcast_to(2 * kap * np.abs(kb).max(axis=-1, keepdims=True), kb.shape)
        parts.append(ref.attention_bound(qb, kb, vb, pr, scale=sc, add=add, dq=dq, dk=dk, u_t=u_t, u_a=u_a,
                                         softcap=a["softcap"]))
    bnd = np.concatenate([p.reshape(-1) for p in parts]) if parts else np.zeros(0)
    res = {"output": _final(bnd, t, "bound:softmax(scale QK^T + bias) V in float32, any order, online softmax")}
    if "present_key" in outputs:
        res["present_key"] = (_final(2 * kap * np.abs(pk).max(axis=-1, keepdims=True), t,
                                     "bound:rotary in float32, rounded to T")
                              if kap else Tolerance(0.0, 0.0, exact=True))
    if "present_value" in outputs:
        res["present_value"] = Tolerance(0.0, 0.0, exact=True)
    return res


def _gqa_type_filter(version, combo):
    if combo.get("T_CACHE") != combo.get("T"):
        return ("a KV cache of another type than T is the quantized cache (k_quant_type/v_quant_type with "
                "k_scale/v_scale, kv_cache_bit_width): not generated")
    return None


def _gqa_contested(ctx, attrs):
    w = attrs.get("local_window_size")
    if w is not None and int(w) > 0:
        return ("local_window_size is 'left_window_size for causal local attention (like Mistral)': as ai.onnx "
                "Attention-25's left_window_size a query at position p attends keys p - W .. p (W + 1 keys, the "
                "oracle's reading); as Mistral's sliding window of W tokens (onnxruntime's CPU kernel) p - W + 1 .. p")
    return None


def _gqa_errors() -> tuple[Err, ...]:
    h = 8

    def shapes(b=1, s=2, n=4, kv=2, p=0):
        return ((b, s, n * h), (b, s, kv * h), (b, s, kv * h), (b, kv, p, h), (b, kv, p, h), (b,), ())

    return (
        Err("kv_num_heads 3 does not divide num_heads 4", "kv-heads-not-dividing", {"num_heads": 4, "kv_num_heads": 3},
            ((1, 2, 32), (1, 2, 24), (1, 2, 24)) + shapes()[3:], values={"seqlens_k": [1], "total_sequence_length": 2}),
        Err("the query's hidden size 30 is not a multiple of num_heads 4", "hidden-not-multiple",
            {"num_heads": 4, "kv_num_heads": 2}, ((1, 2, 30),) + shapes()[1:],
            values={"seqlens_k": [1], "total_sequence_length": 2}),
        Err("'when past context is present, sequence_length > 1 requires batch_size == 1' (without query_seqlens)",
            "batch-chunk-with-past", {"num_heads": 4, "kv_num_heads": 2}, shapes(b=2, s=2, p=3),
            values={"seqlens_k": [4, 4], "total_sequence_length": 5}),
        Err("local_window_size 'Must be -1 when causal is 0'", "window-without-causal",
            {"num_heads": 4, "kv_num_heads": 2, "causal": 0, "local_window_size": 2}, shapes(),
            values={"seqlens_k": [1], "total_sequence_length": 2}),
    )


def _gqa_declared(version, combo):
    return ("T_KV_SCALE binds only k_scale/v_scale, inputs of the quantized cache, which is not generated; T, "
            "T_CACHE (= T) and M are covered")


GQA_SHAPES = _gqa_shapes()
GROUP_QUERY_ATTENTION = Entry(
    "GroupQueryAttention", gqa_oracle, family="shaped", domain=MS, shapes=GQA_SHAPES, tolerance=gqa_tolerance,
    float_numerics=GQA_CLASSES, numerics_classes=lambda t: ("normal", "peaked", "wide-bias"),
    per_type=len(GQA_SHAPES) + 2, type_filter=_gqa_type_filter, contested=_gqa_contested, declared=_gqa_declared,
    attrs=(Attrs({"num_heads": 4, "kv_num_heads": 2}, tag="default"),
           Attrs({"num_heads": 4, "kv_num_heads": 2, "scale": 0.3}, tag="scale=0.3"),
           # the schema defaults written out (the engine's explicit-default state lacks the required heads)
           Attrs({"num_heads": 4, "kv_num_heads": 2, "k_quant_type": "NONE", "v_quant_type": "NONE",
                  "sliding_window_cache": 0, "qk_output": 0, "qk_norm_epsilon": 1e-6}, tag="explicit-defaults")),
    errors=_gqa_errors(),
)

# ============================================================================ Attention (com.microsoft)
def _msa_fill(rng, ctx, sh, out):
    if "mask_index" in sh:
        ms = sh["mask_index"]
        b = sh["input"][0]
        total = sh["input"][1] + (sh["past"][3] if "past" in sh else 0)
        if ms == (b,):  # right padding: lengths in [1, T]
            out["mask_index"] = rng.integers(1, total + 1, size=b)
        elif ms == (2 * b,):  # left padding: inclusive starts (batch 0 past the first key), exclusive ends
            start = rng.integers(0, total, size=b)
            if total > 1:
                start[0] = rng.integers(1, total)
            end = np.array([rng.integers(st + 1, total + 1) for st in start])
            out["mask_index"] = np.concatenate([end, start])
        else:
            out["mask_index"] = _keep_first(rng, ms)
    if "weights" in sh:
        out["weights"] = rng.standard_normal(sh["weights"]) / np.sqrt(max(sh["weights"][0], 1))


MSA_CLASSES = {m: _att_draw(m, _msa_fill) for m in ("normal", "peaked", "wide-bias")}


def _msa_shapes() -> tuple[Shape, ...]:
    out = []

    def add(name, opt, tmpl=None, heads=2, head=4, vhead=None, attrs=None, outs=((),), dims=None):
        vhead = vhead or head
        w = 2 * heads * head + heads * vhead
        d = {"B": (1, 3), "S": (1, 4), "I": (3, 8), "P": (1, 4), "N": (heads, heads), "H": (head, head),
             "Z": (w, w), **(dims or {})}
        a = {"num_heads": heads, **(attrs or {})}
        if vhead != head:
            a["qkv_hidden_sizes"] = [heads * head, heads * head, heads * vhead]
        inputs = {"input": "BSI", "weights": "IZ", "bias": "Z", "past": "2BNPH", "attention_bias": "BNSS",
                  **(tmpl or {})}
        order = [f for f in ("bias", "mask_index", "past", "attention_bias") if f in opt]
        out.append(Shape(name, inputs, a, dims=d, optional=(tuple(order),), outputs=tuple(outs)))

    add("projection", ())
    add("projection/bias", ("bias",))
    add("qkv_hidden_sizes/v_head=6", ("bias",), vhead=6)
    add("unidirectional", ("bias",), attrs={"unidirectional": 1})
    add("mask_index/lengths", ("bias", "mask_index"), {"mask_index": "B"})
    add("mask_index/left-padding", ("bias", "mask_index"), {"mask_index": "Y"}, dims={"B": (2, 2), "Y": (4, 4)})
    add("mask_index/2d", ("mask_index",), {"mask_index": "BS"})
    add("mask_index/3d", ("bias", "mask_index"), {"mask_index": "BSS"})
    add("attention_bias", ("bias", "attention_bias"))
    add("attention_bias/11SS", ("attention_bias",), {"attention_bias": "11SS"})
    present = ("present",)
    add("past", ("bias", "past"), outs=(present,))
    add("past/empty", ("bias", "past"), {"past": "2BN0H"}, attrs={"unidirectional": 1}, outs=(present,))
    add("past/unidirectional", ("bias", "past"), attrs={"unidirectional": 1}, outs=(present,))
    add("past/decode/unidirectional", ("bias", "past"), attrs={"unidirectional": 1}, outs=(present,),
        dims={"S": (1, 1), "P": (3, 8)})
    fixed = {"S": (3, 3), "P": (2, 2), "T": (5, 5)}
    add("past/unidirectional/mask_index-2d", ("bias", "mask_index", "past"), {"mask_index": "BT"},
        attrs={"unidirectional": 1}, outs=(present,), dims=fixed)
    add("past/attention_bias", ("bias", "past", "attention_bias"), {"attention_bias": "BNST"}, outs=(present,),
        dims=fixed)
    add("heads=1", ("bias",), heads=1, head=8)
    add("heads=4/long-input", ("bias", "mask_index"), {"mask_index": "BS"}, heads=4, head=2, dims={"I": (64, 96)})
    return tuple(out)


def _msa_attrs(attrs) -> dict:
    q = attrs.get("qkv_hidden_sizes")
    return {"num_heads": int(attrs["num_heads"]), "qkv_hidden_sizes": list(q) if q else None,
            "scale": attrs.get("scale"), "unidirectional": int(attrs.get("unidirectional") or 0),
            "mask_filter_value": attrs.get("mask_filter_value") if attrs.get("mask_filter_value") is not None
            else -10000.0}


def msa_oracle(ctx, x, weights, bias=None, mask_index=None, past=None, attention_bias=None, past_sequence_length=None,
               **attrs):
    """com.microsoft Attention-1 (:func:`conformance.reference.contrib_attention.ms_attention`):
    output and present."""
    y, present, _, _, _ = ref.ms_attention(x, weights, bias, mask_index, past, attention_bias, **_msa_attrs(attrs))
    return y, present


def msa_tolerance(ctx, inputs, attrs, outputs) -> dict:
    """output: :func:`conformance.reference.contrib_attention.attention_bound` with the heads known
    to ``gamma_{I+1}(u_a) (|X||W| + |b|) + u_t |.|`` (the projection in float32, rounded to T);
    present: that bound on the projected rows, the past rows exact."""
    t = ctx.types["input"]
    u_t, _ = _unit(t)
    u_a = _acc_unit(t)
    x, w, bias, mi, past, ab = (list(inputs) + [None] * 7)[:6]
    a = _msa_attrs(attrs)
    y, present, probs, (qh, kh, vh, add), (mq, mk, mv) = ref.ms_attention(x, w, bias, mi, past, ab, **a)
    g = tref.gamma(np.shape(x)[2] + 1, u_a)
    dq, dk, dv = (g * m + u_t * np.abs(h) for m, h in ((mq, qh), (mk, kh), (mv, vh)))
    if past is not None:  # the past rows are fed exactly
        pl = np.shape(past)[3]
        dk[:, :, :pl] = 0.0
        dv[:, :, :pl] = 0.0
    n_rep = 1
    sc = a["scale"] if a["scale"] is not None else 1.0 / np.sqrt(qh.shape[-1])
    bnd = ref.attention_bound(qh, np.repeat(kh, n_rep, 1), vh, probs, scale=sc, add=add, dq=dq, dk=dk, dv=dv,
                              u_t=u_t, u_a=u_a)
    res = {"output": _final(bnd, t, "bound:projection and softmax(scale QK^T + mask) V in float32, any order")}
    if "present" in outputs:
        res["present"] = _final(np.stack([dk, dv]), t, "bound:projection in float32, rounded to T")
    return res


def _msa_errors() -> tuple[Err, ...]:
    return (
        Err("'Q, K and V hidden sizes must be positive multiples of num_heads': 6 with num_heads 4",
            "heads-not-dividing", {"num_heads": 4}, ((1, 2, 4), (4, 18))),
        Err("'When qkv_hidden_sizes is omitted, the weights' second dimension must be divisible by three': 16",
            "weights-not-thirds", {"num_heads": 2}, ((1, 2, 4), (4, 16))),
        Err("qkv_hidden_sizes [8, 8, 8] do not sum to the weights' second dimension 30 ('Their sum must match')",
            "sizes-sum", {"num_heads": 2, "qkv_hidden_sizes": [8, 8, 8]}, ((1, 2, 4), (4, 30))),
        Err("'When there is past state, hidden dimension for Q, K and V shall be the same': [8, 8, 4] with past",
            "past-v-hidden", {"num_heads": 2, "qkv_hidden_sizes": [8, 8, 4]},
            ((1, 2, 4), (4, 20), (20,), (1,), (2, 1, 2, 3, 4)), outputs={"present": (None, None, None, None, None)},
            values={"mask_index": [2]}),
    )


MSA_SHAPES = _msa_shapes()
MS_ATTENTION = Entry(
    "Attention", msa_oracle, family="shaped", domain=MS, shapes=MSA_SHAPES, tolerance=msa_tolerance,
    float_numerics=MSA_CLASSES, numerics_classes=lambda t: ("normal", "peaked", "wide-bias"),
    per_type=len(MSA_SHAPES) + 2,
    attrs=(Attrs({"num_heads": 2}, tag="default"), Attrs({"num_heads": 2, "scale": 0.3}, tag="scale=0.3"),
           Attrs({"num_heads": 2, "mask_filter_value": -30000.0}, tag="mask_filter_value"),
           # the documented defaults written out ("Default value is 0"; the schema records none)
           Attrs({"num_heads": 2, "do_rotary": 0, "past_present_share_buffer": 0, "unidirectional": 0},
                 tag="explicit-defaults")),
    errors=_msa_errors(),
)

ENTRIES = (ROTARY_EMBEDDING, EMBED_LAYER_NORMALIZATION, MULTI_HEAD_ATTENTION, GROUP_QUERY_ATTENTION, MS_ATTENTION)

_QUANT = "the quantized KV cache (k_quant_type/v_quant_type, k_scale/v_scale, kv_cache_bit_width) is not generated"
_QKNORM = ("q_norm_weight/k_norm_weight: 'Currently honored by the CUDA and native WebGPU execution providers; ... "
           "other EPs must reject the node': what a model means depends on the provider, not generated")
#: What no value case of these operators does, and why (coverage lists them with the reason).
coverage.DECLARED_UNEXERCISED.update({
    ("com.microsoft:MultiHeadAttention", 1, "optional input past_sequence_length never present"):
        "buffer sharing (past and present of max_sequence_length): the text does not say which rows a kernel reads "
        "or writes; not generated",
    ("com.microsoft:MultiHeadAttention", 1, "optional input cache_indirection never present"):
        "beam-search cache indirection: the text gives its shape only, not how it changes the keys read",
    ("com.microsoft:MultiHeadAttention", 1, "optional output qk never present"):
        "'normalized Q * K' does not say before or after the softmax (onnxruntime's CPU kernel: the scaled "
        "scores before it)",
    ("com.microsoft:GroupQueryAttention", 1, "optional input k_scale never present"): _QUANT,
    ("com.microsoft:GroupQueryAttention", 1, "optional input v_scale never present"): _QUANT,
    ("com.microsoft:GroupQueryAttention", 1, "attribute kv_cache_bit_width never given"): _QUANT,
    ("com.microsoft:GroupQueryAttention", 1, "optional input q_norm_weight never present"): _QKNORM,
    ("com.microsoft:GroupQueryAttention", 1, "optional input k_norm_weight never present"): _QKNORM,
    ("com.microsoft:GroupQueryAttention", 1, "attribute q_norm_epsilon never given"): _QKNORM,
    ("com.microsoft:GroupQueryAttention", 1, "attribute k_norm_epsilon never given"): _QKNORM,
    ("com.microsoft:GroupQueryAttention", 1, "optional input query_seqlens never present"):
        "right-padded query chunks: not generated yet (its padded output rows are unspecified)",
    ("com.microsoft:Attention", 1, "optional input past_sequence_length never present"):
        "buffer sharing (past_present_share_buffer 1): the text does not say which rows of present a kernel writes "
        "beyond the effective length; not generated",
    ("com.microsoft:Attention", 1, "attribute rotary_embedding_dim never given"):
        "do_rotary 1 has no cos/sin input: the text does not say which rotary table the kernel uses; not generated",
    ("com.microsoft:GroupQueryAttention", 1, "optional output output_qk never present"):
        "the text does not say what output_qk holds at masked (causal, window, padded) keys; not generated",
    ("com.microsoft:GroupQueryAttention", 1, "attribute qk_output only given its default value"):
        "qk_output 1/2 writes output_qk, which is not generated (what it holds at masked keys is not defined)",
    ("com.microsoft:GroupQueryAttention", 1, "attribute k_quant_type only given its default value"): _QUANT,
    ("com.microsoft:GroupQueryAttention", 1, "attribute v_quant_type only given its default value"): _QUANT,
    ("com.microsoft:GroupQueryAttention", 1, "attribute qk_norm_epsilon only given its default value"): _QKNORM,
    ("com.microsoft:GroupQueryAttention", 1, "attribute sliding_window_cache only given its default value"):
        "window-sized past/present buffers evicted 'internally' in cache-relative coordinates: the text bounds the "
        "rows a kernel keeps (min(T, local_window_size) <= L <= min(T, capacity)) but not which, and "
        "local_window_size itself is contested; not generated",
})
register_entries(ENTRIES, family="contrib_attention")
