"""Exact oracles of the sequence and optional operators (ONNX operator text, opsets 11-28).

Values follow :mod:`conformance.case`'s model: a tensor is an ndarray, a sequence a ``list`` of
ndarrays, an optional ``None`` (absent) or its value.  Every operator here moves data (no
arithmetic), so each oracle is exact: its outputs are copies of its inputs' elements.

Positions follow the text's ranges (SequenceAt / SequenceErase ``[-n, n-1]``, SequenceInsert
``[-n, n]``, negative values counting from the back); a position outside its range raises
``IndexError`` (the generators make those models error cases, never value cases).
"""

from __future__ import annotations

import numpy as np


def _position(position, n: int, upper: int) -> int:
    """``position`` (a 0-d or 1-element integer tensor) as an index in ``[0, upper]`` after
    adding ``n`` to a negative one.

    Raises:
        IndexError: outside ``[-n, upper]``.
    """
    p = int(np.asarray(position).reshape(-1)[0])
    if not -n <= p <= upper:
        raise IndexError(f"position {p} outside [{-n}, {upper}] for a sequence of {n}")
    return p + n if p < 0 else p


def sequence_construct(*inputs: np.ndarray) -> list[np.ndarray]:
    """SequenceConstruct-11: the sequence of ``inputs`` in order (all of one element type)."""
    return [np.array(x, copy=True) for x in inputs]


def sequence_at(seq: list[np.ndarray], position) -> np.ndarray:
    """SequenceAt-11: a copy of the tensor at ``position`` (``[-n, n-1]``).

    Raises:
        IndexError: position out of range.
    """
    return np.array(seq[_position(position, len(seq), len(seq) - 1)], copy=True)


def sequence_erase(seq: list[np.ndarray], position=None) -> list[np.ndarray]:
    """SequenceErase-11: ``seq`` without the tensor at ``position`` (``[-n, n-1]``; absent: the
    last one, "by default it erases the last tensor").

    Raises:
        IndexError: position out of range, or an empty sequence.
    """
    n = len(seq)
    p = n - 1 if position is None else _position(position, n, n - 1)
    if not 0 <= p < n:
        raise IndexError("SequenceErase of an empty sequence")
    return [np.array(x, copy=True) for k, x in enumerate(seq) if k != p]


def sequence_insert(seq: list[np.ndarray], tensor: np.ndarray, position=None) -> list[np.ndarray]:
    """SequenceInsert-11: ``seq`` with ``tensor`` inserted at ``position`` (``[-n, n]``; a
    negative one counts from the back, so ``-1`` inserts before the last tensor; absent: at the
    back).

    Raises:
        IndexError: position out of range.
    """
    n = len(seq)
    p = n if position is None else _position(position, n, n)
    out = [np.array(x, copy=True) for x in seq]
    out.insert(p, np.array(tensor, copy=True))
    return out


def sequence_length(seq: list[np.ndarray]) -> np.ndarray:
    """SequenceLength-11: the number of tensors, an int64 scalar (0-d)."""
    return np.array(len(seq), dtype=np.int64)


def split_to_sequence(x: np.ndarray, split=None, axis: int = 0, keepdims: int = 1) -> list[np.ndarray]:
    """SplitToSequence-11/24: ``x`` split along ``axis`` (``[-r, r-1]``).

    ``split`` absent: parts of length 1, each squeezed along ``axis`` when ``keepdims`` is 0;
    a scalar ``s``: parts of length ``s``, the last one shorter when the length does not divide;
    a 1-D tensor: parts of those lengths (their sum must be the axis length).  ``keepdims`` is
    ignored when ``split`` is given.

    Raises:
        ValueError: a non-positive or ill-summed split; an axis out of range.
    """
    r = x.ndim
    if not -r <= axis < r:
        raise ValueError(f"axis {axis} outside [{-r}, {r - 1}]")
    axis %= r
    length = x.shape[axis]
    if split is None:
        parts = [np.take(x, [k], axis=axis) for k in range(length)]
        return [np.squeeze(p, axis=axis) if not keepdims else p for p in parts]
    split = np.asarray(split)
    if split.ndim == 0:
        s = int(split)
        if s <= 0:
            raise ValueError(f"split {s} must be positive")
        bounds = list(range(0, length, s)) + [length]
    else:
        sizes = [int(v) for v in split]
        if any(v < 0 for v in sizes) or sum(sizes) != length:
            raise ValueError(f"split {sizes} does not sum to the axis length {length}")
        bounds = [0] + list(np.cumsum(sizes))
    return [np.take(x, np.arange(bounds[k], bounds[k + 1], dtype=np.int64), axis=axis) for k in range(len(bounds) - 1)]


def concat_from_sequence(seq: list[np.ndarray], axis: int, new_axis: int = 0) -> np.ndarray:
    """ConcatFromSequence-11: the tensors concatenated along ``axis`` (``[-r, r-1]``), or, with
    ``new_axis`` 1, stacked along a new axis (``[-r-1, r]``: like ``numpy.stack``).

    Raises:
        ValueError: an empty sequence, an axis out of range, or shapes that do not fit.
    """
    if not seq:
        raise ValueError("ConcatFromSequence of an empty sequence")
    r = seq[0].ndim
    lo, hi = (-r - 1, r) if new_axis else (-r, r - 1)
    if not lo <= axis <= hi:
        raise ValueError(f"axis {axis} outside [{lo}, {hi}]")
    return np.stack(seq, axis=axis) if new_axis else np.concatenate(seq, axis=axis)


def optional(value=None):
    """Optional-15/28: an optional holding ``value`` (``None``: an empty optional of the type the
    ``type`` attribute gives)."""
    if value is None:
        return None
    return [np.array(v, copy=True) for v in value] if isinstance(value, list) else np.array(value, copy=True)


def optional_has_element(value=None) -> np.ndarray:
    """OptionalHasElement-15/18/28: a bool scalar, true when ``value`` is present (a present
    optional, or from 18 a tensor or sequence); false for an empty optional or (18) an omitted
    input."""
    return np.array(value is not None)


def optional_get_element(value):
    """OptionalGetElement-15/18/28: the optional's element (from 18 a tensor or sequence is
    returned as it is).

    Raises:
        ValueError: an empty optional ("It is an error if the input is an empty optional-type").
    """
    if value is None:
        raise ValueError("OptionalGetElement of an empty optional")
    return optional(value)
