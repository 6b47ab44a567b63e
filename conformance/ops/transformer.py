"""The transformer operators as entries of the operator table (family ``shaped``):
RotaryEmbedding (23) and SwiGLU (28).

Oracles and legitimate kernels: :mod:`conformance.reference.transformer`.

**RotaryEmbedding-23** (the text's numpy algorithm): 4-D input ``[batch, heads, seq, head]``
and 3-D input ``[batch, seq, heads * head]`` with ``num_heads``; ``interleaved`` 0 (halves
``(i, i + r/2)``) and 1 (pairs ``(2i, 2i+1)``); ``rotary_embedding_dim`` absent, 0 (the whole
head), equal to the head and partial (the tail passes through unchanged); ``position_ids``
present (2-D caches ``[max_position_id_plus_1, r/2]`` indexed by them: offsets that are never
``0..S-1`` in every batch, and arbitrary positions with repeats) and absent (3-D caches
``[batch, seq, r/2]`` taken per position); one-pair heads, a one-token decode step, an empty
batch and an empty sequence.  Data classes: genuine cos/sin tables (``normal``), independent
caches in [-1, 1] (``random-cache``: a flipped sign or swapped cache is never hidden by
cos^2 + sin^2 = 1), magnitudes up to ``fmax/8`` (``wide``), NaN/inf/-0 in X (``special``,
caches nonzero).  Error cases: a cache whose last dimension is not ``r/2`` (the text raises),
a 3-D input without num_heads ("Must be provided when input is a 3D tensor"), a hidden size
that is not a multiple of num_heads, an odd head size (4-D: "head_size has to be even").

**SwiGLU-28**: ``Swish_alpha(A) * B``, alpha absent, explicit 1, 1.702, 0.5 and negative;
ranks 0 to 4 and zero-size; data classes for the sigmoid's saturation, signed zeros,
NaN/inf; A and B of different shapes (broadcasting "is not applied") an error case.

**Tolerance** (docs/tolerance.md "Transformer operators"): RotaryEmbedding
``gamma_3(u_T) (|cos x1| + |sin x2|)`` per element (two products and one sum, in T or wider,
FMA or not); SwiGLU the Swish budget of the sigmoid (libm) plus two multiplications.
"""

from __future__ import annotations

import numpy as np

from ..reference import transformer as ref
from ..tolerance import Tolerance, budget_ulps
from . import values as V
from .engine import register_entries
from .entry import Attrs, Entry, Err, Shape


# ============================================================================ RotaryEmbedding
def _rope_names(ctx) -> list[str]:
    return [n for n in ("X", "cos_cache", "sin_cache", "position_ids") if n in ctx.types]


def _rope_tables(rng, ctx, shapes, t):
    """Genuine cos/sin tables: angle ``p * 10000^(-2i/r)`` for position ``p`` (the cache row
    with position_ids, a drawn position per (batch, seq) without), rounded to T."""
    cs = shapes[1]
    half = cs[-1]
    i = np.arange(half)
    freq = 10000.0 ** (-2.0 * i / max(2 * half, 1))
    if len(cs) == 2:
        pos = np.arange(cs[0], dtype=np.float64)[:, None]
    else:
        pos = rng.integers(0, 64, size=cs[:2]).astype(np.float64)[..., None]
    ang = pos * freq
    return V.representable(np.cos(ang), t), V.representable(np.sin(ang), t)


def _rope_draw(rng, ctx, shapes, mode: str):
    t = ctx.types["X"]
    names = _rope_names(ctx)
    fi = V.finfo(t)
    xs = shapes[0]
    if mode == "wide":
        n = int(np.prod(xs, dtype=np.int64))
        lo, hi = np.log2(float(fi.smallest_normal)), np.log2(float(fi.max) / 8)
        mag = 2.0 ** rng.uniform(lo, hi, size=n)
        x = V.representable((rng.choice([-1.0, 1.0], size=n) * mag).reshape(xs), t)
    else:
        x = V.representable(rng.uniform(-2.0, 2.0, size=xs), t)
    if mode == "random-cache":
        c = V.representable(rng.uniform(-1.0, 1.0, size=shapes[1]), t)
        s = V.representable(rng.uniform(-1.0, 1.0, size=shapes[2]), t)
    else:
        c, s = _rope_tables(rng, ctx, shapes, t)
    if mode == "special":
        # caches without zeros (inf * 0 would make the NaN depend on which products a kernel forms)
        c = np.where(c == 0, 0.5, c)
        s = np.where(s == 0, -0.25, s)
        flat = x.reshape(-1)
        if flat.size:
            k = max(1, flat.size // 6)
            pos = rng.choice(flat.size, size=min(k, flat.size), replace=False)
            vals = [np.nan, np.inf, -np.inf, -0.0, 0.0]
            for j, p in enumerate(pos):
                flat[p] = vals[j % len(vals)]
        x = flat.reshape(xs)
    out = [x, c, s]
    if "position_ids" in names:
        out.append(np.zeros(shapes[3], dtype=object))  # the structural rule replaces it
    return out


def _rope_class(mode):
    def fn(rng, ctx, shapes):
        return _rope_draw(rng, ctx, shapes, mode)

    fn.__name__ = fn.__qualname__ = f"rope_{mode.replace('-', '_')}"
    fn.__doc__ = f"RotaryEmbedding numerics class ``{mode}`` (module docstring)."
    return fn


ROPE_CLASSES = {m: _rope_class(m) for m in ("normal", "random-cache", "wide", "special")}


def _position_ids(rng, ctx):
    """position_ids ``[batch, seq]``: batch 0 an offset in ``[1, P - S]`` plus ``0..S-1`` (a
    decode step past the prompt), the other batches any positions in ``[0, P)`` with a repeat
    and the last cache row (``P`` the caches' first dimension).  Never ``0..S-1`` in batch 0,
    so a kernel ignoring position_ids differs."""
    b, s = ctx.shapes["position_ids"]
    p = ctx.shapes["cos_cache"][0]
    if b * s == 0:
        return np.zeros((b, s), dtype=object)
    ids = rng.integers(0, p, size=(b, s))
    ids[0] = int(rng.integers(1, p - s + 1)) + np.arange(s)
    if b > 1:
        ids[1, 0] = p - 1
        if s > 1:
            ids[1, 1] = ids[1, 0]
    out = np.empty((b, s), dtype=object)
    out[:] = ids.astype(int).tolist()
    return out


def _rope_shapes() -> tuple[Shape, ...]:
    out: list[Shape] = []

    def add(name, rank, d, pos, *, r=None, inter=0, heads=2, b=(1, 2), s=(1, 4), p=(6, 9), attrs=None):
        half = (r or d) // 2
        dims = {"B": b, "S": s, "D": (d, d), "R": (half, half), "P": p, "N": (heads, heads),
                "W": (heads * d, heads * d)}
        a = dict(attrs or {})
        if inter:
            a["interleaved"] = 1
        if r is not None:
            a["rotary_embedding_dim"] = r
        inputs = {"X": "BNSD" if rank == 4 else "BSW", "position_ids": "BS"}
        if rank == 3:
            a["num_heads"] = heads
        if pos:
            inputs.update(cos_cache="PR", sin_cache="PR")
        else:
            inputs.update(cos_cache="BSR", sin_cache="BSR")
        opt = (("position_ids",),) if pos else ((),)
        out.append(Shape(name, inputs, a, dims=dims, optional=opt))

    add("4d/pos", 4, 8, True)
    add("4d/no-pos", 4, 8, False)
    add("4d/pos/interleaved", 4, 8, True, inter=1)
    add("4d/no-pos/interleaved", 4, 8, False, inter=1)
    add("4d/pos/partial", 4, 8, True, r=4)
    add("4d/no-pos/partial/interleaved", 4, 8, False, r=4, inter=1)
    add("4d/pos/partial/interleaved", 4, 10, True, r=6, inter=1)
    add("4d/no-pos/partial", 4, 10, False, r=6)
    add("4d/pos/dim=head", 4, 6, True, r=6)
    add("4d/pos/batch=3", 4, 8, True, b=(3, 3))
    add("4d/head=2", 4, 2, True, heads=3)
    add("4d/decode", 4, 8, True, s=(1, 1), b=(2, 3), p=(10, 16))
    add("3d/pos", 3, 8, True)
    add("3d/no-pos/interleaved", 3, 8, False, inter=1)
    add("3d/pos/partial/interleaved", 3, 8, True, r=4, inter=1, heads=3)
    add("3d/no-pos/partial", 3, 6, False, r=2)
    add("3d/pos/heads=1/interleaved", 3, 4, True, inter=1, heads=1, b=(2, 3))
    add("4d/zero-batch", 4, 4, True, b=(0, 0))
    add("3d/zero-seq", 3, 4, False, s=(0, 0))
    return tuple(out)


def _rope_attrs(attrs) -> dict:
    return {k: attrs.get(k, 0) for k in ("interleaved", "rotary_embedding_dim", "num_heads")}


def rope_oracle(ctx, x, cos_cache, sin_cache, position_ids=None, **attrs):
    """RotaryEmbedding-23 (:func:`conformance.reference.transformer.rotary_embedding`); double
    inputs with correctly rounded two-product sums."""
    return ref.rotary_embedding(x, cos_cache, sin_cache, position_ids, exact=ctx.types["X"] == "double",
                                **_rope_attrs(attrs))


def rope_tolerance(ctx, inputs, attrs, outputs) -> dict:
    """``atol = max over elements of gamma_3(u_T) (|cos x1| + |sin x2|) + 2 s``, ``rtol = 0``:
    two products and one sum rounded in T (or in a wider type, then rounded to T: within
    the same bound), a fused multiply-add or not; the passed-through tail is exact."""
    t = ctx.types["X"]
    u, s = ref.unit(t)
    x, c, sn = inputs[0], inputs[1], inputs[2]
    pid = inputs[3] if len(inputs) > 3 else None
    mag = ref.rotary_magnitude(x, c, sn, pid, **_rope_attrs(attrs))
    b = ref.gamma(3, u) * mag
    atol = (float(b.max()) if b.size else 0.0) + 2 * s
    return {"Y": Tolerance(atol, 0.0, variants=(f"bound:two products and a sum in T, u={u:g}",))}


def _rope_errors() -> tuple[Err, ...]:
    x4, x3 = (1, 2, 3, 8), (1, 3, 8)
    pid = (1, 3)
    return (
        Err("the caches' last dimension 3 is not rotary_embedding_dim/2 = 4 (the text raises ValueError)",
            "cache-dim", {}, (x4, (6, 3), (6, 3), pid), values={"position_ids": [[0, 1, 2]]}),
        Err("partial rotary_embedding_dim 4 with caches of head_size/2 = 4 (need 2)", "cache-dim-partial",
            {"rotary_embedding_dim": 4}, (x4, (6, 4), (6, 4), pid), values={"position_ids": [[0, 1, 2]]}),
        Err("num_heads 'Must be provided when input is a 3D tensor'", "3d-no-num_heads", {},
            (x3, (6, 4), (6, 4), pid), values={"position_ids": [[0, 1, 2]]}),
        Err("hidden_size 8 is not a multiple of num_heads 3 ('hidden_size must be an even multiple of num_heads')",
            "3d-hidden-not-multiple", {"num_heads": 3}, (x3, (6, 4), (6, 4), pid),
            values={"position_ids": [[0, 1, 2]]}),
        Err("4-D head_size 7: 'For cases with a 4D input tensor, head_size has to be even'", "4d-odd-head", {},
            ((1, 2, 3, 7), (6, 3), (6, 3), pid), values={"position_ids": [[0, 1, 2]]}),
    )


ROPE_SHAPES = _rope_shapes()
ROTARY_EMBEDDING = Entry(
    "RotaryEmbedding", rope_oracle, family="shaped", shapes=ROPE_SHAPES, tolerance=rope_tolerance,
    float_numerics=ROPE_CLASSES, numerics_classes=lambda t: tuple(ROPE_CLASSES),
    per_type=2 * len(ROPE_SHAPES), errors=_rope_errors(), structural={"position_ids": _position_ids},
)


# ============================================================================ SwiGLU
def _swiglu_alpha(attrs) -> float:
    return float(np.float32(attrs.get("alpha", 1.0)))


def _sw_draw(rng, ctx, shapes, mode: str):
    t = ctx.types["A"]
    alpha = _swiglu_alpha(ctx.attrs)
    if mode == "saturating":  # alpha * A in [-11, 11]: the sigmoid near 0 and 1, exp(11) < float16's max
        a = rng.uniform(-11.0, 11.0, size=shapes[0]) / max(abs(alpha), 1e-3)
    else:
        a = rng.uniform(-4.0, 4.0, size=shapes[0])
    b = rng.uniform(-4.0, 4.0, size=shapes[1])
    a, b = V.representable(a, t), V.representable(b, t)
    if mode == "special":
        fi = V.finfo(t)
        sub = float(fi.smallest_subnormal)
        av = [np.nan, np.inf, 0.0, -0.0, sub, -sub, float(fi.smallest_normal), 1.0]
        bv = [1.5, -2.0, np.nan, np.inf, -np.inf, 0.0, -0.0, 3.0]
        fa, fb = a.reshape(-1), b.reshape(-1)
        for j in range(fa.size):
            if j % 2 == 0:
                fa[j] = av[(j // 2) % len(av)]
            if j % 3 == 0:
                fb[j] = bv[(j // 3) % len(bv)]
        a, b = fa.reshape(shapes[0]), fb.reshape(shapes[1])
    return [a, b]


def _sw_class(mode):
    def fn(rng, ctx, shapes):
        return _sw_draw(rng, ctx, shapes, mode)

    fn.__name__ = fn.__qualname__ = f"swiglu_{mode}"
    fn.__doc__ = f"SwiGLU numerics class ``{mode}`` (module docstring)."
    return fn


SW_CLASSES = {m: _sw_class(m) for m in ("normal", "saturating", "special")}


def swiglu_oracle(ctx, a, b, alpha=1.0, **attrs):
    """SwiGLU-28 (:func:`conformance.reference.transformer.swiglu`)."""
    return ref.swiglu(a, b, alpha=alpha)


def swiglu_tolerance(ctx, inputs, attrs, outputs) -> dict:
    """Relative bound per element, in eps of T, of ``A * Sigmoid(alpha A) * B`` evaluated in T
    (or float32 and rounded to T)::

        b_exp + b_divide + 3 + |z| (1 - Sigmoid(z)) / 2,   z = alpha A

    (exp and the division within the budget table, the additions and two multiplications
    and the rounding of ``z`` -- whose relative error enters with the sigmoid's condition
    number ``|z| (1 - Sigmoid(z))`` -- at half an ulp, and the expectation's own half ulp);
    ``rtol`` the largest over the elements whose result is normal, ``atol`` 8 subnormals."""
    t = ctx.types["A"]
    fi = V.finfo(t)
    eps, sub, tiny = float(fi.eps), float(fi.smallest_subnormal), float(fi.smallest_normal)
    a = np.asarray(inputs[0], dtype=np.float64)
    with np.errstate(all="ignore"):
        z = _swiglu_alpha(attrs) * a
        cond = np.abs(z) * (1.0 - ref.sigmoid(z))
        y = np.asarray(outputs["Y"], dtype=np.float64)
    k = budget_ulps("exp", t) + budget_ulps("divide", t) + 3.0
    keep = np.isfinite(y) & (np.abs(y) >= tiny) & np.isfinite(cond)
    c = float(cond[keep].max()) if keep.any() else 0.0
    return {"Y": Tolerance(8 * sub, eps * (k + 0.5 * c), variants=(f"budget:exp+divide+3 roundings, cond {c:.3g}",))}


def _swiglu_shapes() -> tuple[Shape, ...]:
    def sh(name, tmpl, **kw):
        return Shape(name, {"A": tmpl, "B": tmpl}, **kw)

    return (sh("r2", "SM"), sh("r3", "SMK"), sh("r0", ""), sh("r1", "L", dims={"L": (1, 40)}), sh("r4", "NCHW"),
            sh("zero-size", "S0"), sh("long-row", "2L", dims={"L": (300, 300)}))


SWIGLU_SHAPES = _swiglu_shapes()
SWIGLU = Entry(
    "SwiGLU", swiglu_oracle, family="shaped", shapes=SWIGLU_SHAPES, tolerance=swiglu_tolerance,
    float_numerics=SW_CLASSES, numerics_classes=lambda t: tuple(SW_CLASSES),
    attrs=(Attrs({"alpha": 1.702}, tag="alpha=1.702"), Attrs({"alpha": 0.5}, tag="alpha=0.5"),
           Attrs({"alpha": -1.25}, tag="alpha<0")),
    # +inf in A with a negative alpha is inf * Sigmoid(-inf) = inf * 0: the formula has no value
    numerics_rule=lambda v, n, a, opt: not (n == "special" and float(a.get("alpha", 1.0)) < 0),
    per_type=2 * len(SWIGLU_SHAPES),
    errors=(Err("A and B must have identical shapes ('broadcasting is not applied')", "broadcast", {},
                ((2, 3), (1, 3))),
            Err("A and B must have identical shapes", "shape-mismatch", {}, ((2, 3), (3, 2)))),
)




# ============================================================================ LinearAttention
_LA_NAMES = ("query", "key", "value", "past_state", "decay", "beta")


def _la_rule(attrs) -> str:
    return str(attrs.get("update_rule", "gated_delta"))


def _la_draw(rng, ctx, shapes, mode: str):
    """LinearAttention data: q, v in [-1, 1] (``large``: [-4, 4]), keys L2-normalised per head
    (the text: "Should be L2-normalized for delta/gated_delta modes"; every rule gets them, so
    the state stays bounded), past_state in [-1, 1], decay (log-space) in [-1, 0] (``strong``
    decay: [-4, -1]), beta in [0.05, 1] (a sigmoid output)."""
    t = ctx.types["query"]
    hkv = int(ctx.attrs["kv_num_heads"])
    out = []
    for n, shp in zip([n for n in _LA_NAMES if n in ctx.types], shapes):
        tn = ctx.types[n]
        if n == "key":
            k = rng.uniform(-1.0, 1.0, size=shp)
            if k.size:
                k4 = k.reshape(shp[0], shp[1], hkv, -1)
                k4 /= np.maximum(np.linalg.norm(k4, axis=-1, keepdims=True), 1e-3)
                k = k4.reshape(shp)
            out.append(V.representable(k, tn))
        elif n == "decay":
            lo, hi = (-4.0, -1.0) if mode == "strong-decay" else (-1.0, 0.0)
            out.append(V.representable(rng.uniform(lo, hi, size=shp), tn))
        elif n == "beta":
            out.append(V.representable(rng.uniform(0.05, 1.0, size=shp), tn))
        else:
            sc = 4.0 if mode == "large" and n in ("query", "value") else 1.0
            out.append(V.representable(rng.uniform(-sc, sc, size=shp), tn))
    del t
    return out


def _la_class(mode):
    def fn(rng, ctx, shapes):
        return _la_draw(rng, ctx, shapes, mode)

    fn.__name__ = fn.__qualname__ = f"linear_attention_{mode.replace('-', '_')}"
    fn.__doc__ = f"LinearAttention numerics class ``{mode}`` (:func:`_la_draw`)."
    return fn


LA_CLASSES = {m: _la_class(m) for m in ("normal", "large", "strong-decay")}


def linear_attention_oracle(ctx, query, key, value, past_state=None, decay=None, beta=None, **attrs):
    """LinearAttention-27 (:func:`conformance.reference.transformer.linear_attention`):
    ``(output, present_state)``."""
    return ref.linear_attention(query, key, value, past_state, decay, beta, **_la_attrs(attrs))


def _la_attrs(attrs) -> dict:
    return {k: attrs[k] for k in ("q_num_heads", "kv_num_heads", "update_rule", "scale", "chunk_size") if k in attrs}


def linear_attention_tolerance(ctx, inputs, attrs, outputs) -> dict:
    """The running error bound of :func:`conformance.reference.transformer.linear_attention_bound`
    (float32 arithmetic, any order of each dot product, the state optionally rounded to S at
    every step), plus the rounding of each output to its type: ``atol`` its largest element
    plus 2 subnormals, ``rtol = 2.01 u``."""
    t = ctx.types["query"]
    st = ctx.out_types.get("present_state", t)
    ins = list(inputs) + [None] * (6 - len(inputs))
    eo, es = ref.linear_attention_bound(*ins, state_type=st, **_la_attrs(attrs))
    tol = {}
    for name, e, ty in (("output", eo, t), ("present_state", es, st)):
        u, s = ref.unit(ty)
        tol[name] = Tolerance((float(e.max()) if e.size else 0.0) + 2 * s, 2.01 * u,
                              variants=("bound:float32 recurrence, any dot-product order, state in S or float32",))
    return tol


def _la_shapes() -> tuple[Shape, ...]:
    out: list[Shape] = []

    def add(name, rule, *, hq=2, hkv=2, dk=3, dv=2, t=(1, 4), b=(1, 2), decay=None, beta=None, attrs=None):
        dims = {"B": b, "T": t, "Q": (hq * dk, hq * dk), "K": (hkv * dk, hkv * dk), "V": (hkv * dv, hkv * dv),
                "H": (hkv, hkv), "D": (dk, dk), "E": (dv, dv)}
        inputs = {"query": "BTQ", "key": "BTK", "value": "BTV", "past_state": "BHDE"}
        need = []
        if decay:
            inputs["decay"] = {"dim": "BTK", "head": "BTH"}[decay]
            need.append("decay")
        if beta:
            inputs["beta"] = {"head": "BTH", "one": "BT1"}[beta]
            need.append("beta")
        a = {"q_num_heads": hq, "kv_num_heads": hkv, **(attrs or {})}
        if rule is not None:
            a["update_rule"] = rule
        order = [n for n in _LA_NAMES[3:] if n in need or n == "past_state"]
        with_past = tuple(n for n in order)
        without = tuple(n for n in order if n != "past_state")
        out.append(Shape(name, inputs, a, dims=dims, optional=(without, with_past)))

    add("linear", "linear")
    add("linear/scale=0.5", "linear", attrs={"scale": 0.5})
    add("gated/decay-per-dim", "gated", decay="dim")
    add("gated/decay-per-head", "gated", decay="head")
    add("delta/beta-per-head", "delta", beta="head")
    add("delta/beta-one", "delta", beta="one", dk=4, dv=3)
    add("gated_delta/default/per-head", None, decay="head", beta="head")
    add("gated_delta/per-dim/beta-one", "gated_delta", decay="dim", beta="one")
    add("gated_delta/gqa", None, hq=4, hkv=2, decay="head", beta="head")
    add("gated_delta/mqa", None, hq=3, hkv=1, decay="head", beta="head", dk=2, dv=3)
    add("linear/gqa", "linear", hq=4, hkv=2)
    add("gated_delta/decode", None, t=(1, 1), b=(2, 3), decay="head", beta="head")
    add("gated_delta/chunk_size=2", None, t=(5, 6), decay="dim", beta="head", attrs={"chunk_size": 2})
    add("delta/scale=1.5/long", "delta", t=(12, 12), beta="head", attrs={"scale": 1.5})
    add("gated/zero-batch", "gated", b=(0, 0), decay="head")
    return tuple(out)


def _la_optional_rule(version, combo, optional) -> bool:
    """Without past_state nothing binds S but present_state: only ``S == T`` (onnx.reference
    and the function body then give present_state T's type); with it, any S."""
    return "past_state" in optional or combo.get("S") == combo.get("T")


def _la_errors() -> tuple[Err, ...]:
    q = (1, 2, 6)
    hv = (1, 2, 2)
    return (
        Err("'q_num_heads must be a positive multiple of kv_num_heads': 2 and 3", "heads-not-multiple",
            {"q_num_heads": 2, "kv_num_heads": 3, "update_rule": "linear"}, ((1, 2, 6), (1, 2, 9), (1, 2, 6))),
        Err("update_rule 'One of: linear, gated, delta, gated_delta': 'softmax'", "unknown-update_rule",
            {"q_num_heads": 2, "kv_num_heads": 2, "update_rule": "softmax"}, (q, q, hv)),
        Err("decay is 'Required for gated and gated_delta modes' (absent)", "gated-no-decay",
            {"q_num_heads": 2, "kv_num_heads": 2, "update_rule": "gated"}, (q, q, hv)),
        Err("beta is 'Required for delta and gated_delta modes' (absent)", "delta-no-beta",
            {"q_num_heads": 2, "kv_num_heads": 2, "update_rule": "delta"}, (q, q, hv)),
        Err("past_state must be (B, H_kv, d_k, d_v) = (1, 2, 3, 1), not (1, 2, 1, 3)", "past_state-shape",
            {"q_num_heads": 2, "kv_num_heads": 2, "update_rule": "linear"}, (q, q, hv, (1, 2, 1, 3))),
    )


LA_SHAPES = _la_shapes()
LINEAR_ATTENTION = Entry(
    "LinearAttention", linear_attention_oracle, family="shaped", shapes=LA_SHAPES,
    tolerance=linear_attention_tolerance, float_numerics=LA_CLASSES, numerics_classes=lambda t: tuple(LA_CLASSES),
    per_type=len(LA_SHAPES), errors=_la_errors(), optional_rule=_la_optional_rule,
    # the required head counts are the pattern's (its attributes take precedence); the states
    # carry placeholders so that the engine keeps them (every state must give the required ones)
    attrs=(Attrs({"q_num_heads": 2, "kv_num_heads": 2}, tag="default"),
           Attrs({"q_num_heads": 2, "kv_num_heads": 2, "update_rule": "gated_delta", "scale": 0.0, "chunk_size": 64},
                 tag="explicit-default"),
           Attrs({"q_num_heads": 2, "kv_num_heads": 2, "chunk_size": 1}, tag="chunk_size=1")),
)

ENTRIES = (ROTARY_EMBEDDING, SWIGLU, LINEAR_ATTENTION)
register_entries(ENTRIES, family="transformer")
