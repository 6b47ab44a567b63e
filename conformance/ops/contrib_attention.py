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

Not built (out of time): MultiHeadAttention, GroupQueryAttention, Attention (com.microsoft),
EmbedLayerNormalization.
"""

from __future__ import annotations

import numpy as np

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
        t = ctx.types["word_embedding"]
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
    ids = {"input_ids": [[0, 1, 2]]}

    def shapes(we=(4, 4), pe=(5, 4), g=(4,), b=(4,)):
        return ((1, 3), we, pe, g, b)

    return (
        Err("gamma [5] is not [hidden_size 4] ('1D gamma tensor ... with shape (hidden_size)')", "gamma-shape",
            {"mask_index_type": 0}, shapes(g=(5,)), values=ids),
        Err("beta [3] is not [hidden_size 4]", "beta-shape", {"mask_index_type": 0}, shapes(b=(3,)), values=ids),
        Err("position_embedding's hidden size 5 is not word_embedding's 4 ('2D with shape (, hidden_size)')",
            "position-hidden", {"mask_index_type": 0}, shapes(pe=(5, 5)), values=ids),
        Err("input_ids must be 2-D ('2D words IDs with shape (batch_size, sequence_length)')", "ids-rank",
            {"mask_index_type": 0}, ((3,), (4, 4), (5, 4), (4,), (4,)), values={"input_ids": [0, 1, 2]}),
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


MHA_SHAPES = _mha_shapes()
MULTI_HEAD_ATTENTION = Entry(
    "MultiHeadAttention", mha_oracle, family="shaped", domain=MS, shapes=MHA_SHAPES, tolerance=mha_tolerance,
    float_numerics=MHA_CLASSES, numerics_classes=lambda t: ("normal", "peaked", "wide-bias"),
    per_type=len(MHA_SHAPES) + 4, type_filter=_mha_type_filter,
    attrs=(Attrs({"num_heads": 2}, tag="default"), Attrs({"num_heads": 2, "scale": 0.3}, tag="scale=0.3"),
           Attrs({"num_heads": 2, "mask_filter_value": -30000.0}, tag="mask_filter_value")),
    errors=_mha_errors(),
)

ENTRIES = (ROTARY_EMBEDDING, EMBED_LAYER_NORMALIZATION, MULTI_HEAD_ATTENTION)
register_entries(ENTRIES, family="contrib_attention")
