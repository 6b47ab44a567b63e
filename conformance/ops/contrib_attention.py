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

ENTRIES = (ROTARY_EMBEDDING,)
register_entries(ENTRIES, family="contrib_attention")
