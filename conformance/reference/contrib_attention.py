"""Oracles of onnxruntime's attention-family contrib operators (com.microsoft); the entries are
in :mod:`conformance.ops.contrib_attention`.

RotaryEmbedding (com.microsoft, 1), onnxruntime-defined (ContribOperators.md): input
``[batch, sequence, hidden]`` split into ``num_heads`` heads, ``position_ids [batch, sequence]``
indexing the ``[max_position, rotary_dim / 2]`` cos/sin caches, pairs ``(2i, 2i+1)`` when
``interleaved``, halves otherwise.  This is the ai.onnx RotaryEmbedding-23 algorithm with its
inputs reordered, so the project's one rotary oracle
(:func:`conformance.reference.transformer.rotary_embedding`) is reused, not rewritten.
"""

from __future__ import annotations

import numpy as np

from . import transformer as _rope


def ms_rotary_embedding(x, position_ids, cos_cache, sin_cache, *, interleaved=0, num_heads=0,
                        rotary_embedding_dim=0) -> np.ndarray:
    """com.microsoft RotaryEmbedding-1: ``x [batch, seq, hidden]``, ``position_ids [batch, seq]``
    int64, caches ``[max_position, r/2]``; returns float64 ``[batch, seq, hidden]``.

    Raises:
        ValueError: the checks of :func:`conformance.reference.transformer.rotary_parts`."""
    return _rope.rotary_embedding(x, cos_cache, sin_cache, position_ids, interleaved=interleaved,
                                  num_heads=num_heads, rotary_embedding_dim=rotary_embedding_dim)
