"""Float64 oracle and legitimate variants of Softmax, LogSoftmax and Hardmax (ai.onnx 1, 11, 13).

Definitional decisions (spec text: ``onnx.defs.get_schema("Softmax", v).doc``):

* **Versions 1 and 11** coerce the input to 2-D ``[prod(d0..d(axis-1)), prod(d(axis)..d(n-1))]``
  and normalize over the flattened second dimension (every axis from ``axis`` on).  Version 1
  takes ``axis`` in ``[0, r)`` (the text knows no negative axis; we only generate those),
  version 11 in ``[-r, r)``; the default is 1.
* **Version 13** normalizes over the single axis ``axis`` in ``[-r, r)``; default -1.
* Softmax is ``exp(x) / sum(exp(x))`` evaluated as ``exp(x - m) / sum(exp(x - m))`` with
  ``m`` the row maximum, which is the same function without overflow.  LogSoftmax is
  ``(x - m) - log(sum(exp(x - m)))``.
* Special values by the formula: an entry ``-inf`` in a row with a finite maximum gives
  0 (Softmax) and ``-inf`` (LogSoftmax); a row of all ``-inf`` is ``0/0`` = NaN everywhere;
  a row containing NaN is NaN everywhere.  ``+inf`` entries are not generated (``inf/inf``).
* Hardmax is 1 at the *first* maximum of each row (ties take the first index in the
  row's flattened order), 0 elsewhere; a row of all ``-inf`` has its 1 at index 0.
  NaN is not generated for Hardmax (no max is defined).

Legitimate variants (tolerance derivation): the spec does not mandate a precision;
we take float32 arithmetic for float16/bfloat16 inputs (what every runtime does) and
the input type for float/double, with the max shift, and vary the summation order
(pairwise, sequential forward, sequential reverse) and the division (``e / s`` or
``e * (1/s)``; LogSoftmax: ``(x-m) - log s`` or ``x - (m + log s)``).
"""

from __future__ import annotations

import numpy as np

from conformance import dtypes
from conformance.opspec import op_spec
from conformance.reference import libm

OPS = ("Softmax", "LogSoftmax", "Hardmax")
#: The since_versions of Softmax, LogSoftmax and Hardmax in the installed onnx (1, 11, 13).
VERSIONS = tuple(op_spec("Softmax").since_versions)


def axis_range(since_version: int, rank: int) -> tuple[int, int]:
    """Valid ``axis`` values ``[lo, hi)`` of a version for an input of ``rank``."""
    if since_version < 11:
        return 0, rank
    return -rank, rank


def default_axis(since_version: int) -> int:
    """The schema default of ``axis``: 1 before version 13, -1 from 13."""
    return 1 if since_version < 13 else -1


def to_rows(x: np.ndarray, axis: int, since_version: int):
    """Rows the operator normalizes over, and a function mapping rows back to ``x``'s shape.

    Args:
        x: input of rank >= 1.
        axis: the attribute value.
        since_version: 1, 11 (2-D coercion) or 13 (single axis).

    Returns:
        ``(rows, back)``: ``rows`` is 2-D ``[n_rows, row_len]``; ``back(rows)`` restores the layout.

    Raises:
        ValueError: ``axis`` outside the version's range.
    """
    x = np.asarray(x)
    r = x.ndim
    lo, hi = axis_range(since_version, r)
    if not lo <= axis < hi:
        raise ValueError(f"axis {axis} outside [{lo}, {hi}) for rank {r} (version {since_version})")
    ax = axis % r
    if since_version < 13:
        outer = int(np.prod(x.shape[:ax], dtype=np.int64))
        inner = int(np.prod(x.shape[ax:], dtype=np.int64))
        shape = x.shape
        return x.reshape(outer, inner), lambda y: np.asarray(y).reshape(shape)
    moved = np.moveaxis(x, ax, -1)
    mshape = moved.shape
    rows = moved.reshape(-1, mshape[-1])
    return rows, lambda y: np.moveaxis(np.asarray(y).reshape(mshape), -1, ax)


def _rows64(rows: np.ndarray, op: str) -> np.ndarray:
    x = rows.astype(np.float64)
    if op == "Hardmax":
        y = np.zeros_like(x)
        if x.shape[1]:
            y[np.arange(x.shape[0]), np.argmax(x, axis=1)] = 1.0  # argmax: first maximum
        return y
    with np.errstate(invalid="ignore", over="ignore", divide="ignore"):
        m = np.max(x, axis=1, keepdims=True) if x.shape[1] else np.zeros((x.shape[0], 1))
        d = x - m
        e = libm.exp(d)
        s = np.sum(e, axis=1, keepdims=True)
        if op == "Softmax":
            return e / s
        if op == "LogSoftmax":
            return d - libm.log(s)
    raise ValueError(f"unknown op {op!r}")


def evaluate(op: str, x: np.ndarray, axis: int | None = None, since_version: int = 13) -> np.ndarray:
    """Float64 oracle of ``op`` (Softmax, LogSoftmax or Hardmax) at ``since_version``.

    Args:
        x: input of rank >= 1, any float dtype (computed in float64).
        axis: the attribute; ``None`` means the version's default.
        since_version: 1, 11 or 13 (module docstring).

    Returns:
        float64 array of ``x``'s shape.

    Raises:
        ValueError: axis out of range, rank 0, unknown op.
    """
    x = np.asarray(x)
    if x.ndim == 0:
        raise ValueError("rank-0 input: no axis is valid")
    axis = default_axis(since_version) if axis is None else axis
    rows, back = to_rows(x, axis, since_version)
    return back(_rows64(rows, op))


def _seq_sum(e: np.ndarray, reverse: bool) -> np.ndarray:
    """Sequential (left-to-right or right-to-left) row sums in e's dtype."""
    if reverse:
        e = e[:, ::-1]
    return np.cumsum(e, axis=1, dtype=e.dtype)[:, -1:] if e.shape[1] else np.zeros((e.shape[0], 1), e.dtype)


def compute_type(elem_type: int) -> np.dtype:
    """Arithmetic precision of the legitimate variants: float32 for float16/bfloat16, else the input's."""
    name = dtypes.type_name(elem_type)
    return np.dtype(np.float64) if name == "double" else np.dtype(np.float32)


def variants(op: str, x: np.ndarray, axis: int | None, since_version: int, elem_type: int) -> dict[str, np.ndarray]:
    """Legitimate implementations of ``op`` (module docstring), rounded to ``elem_type``.

    Args:
        x: input, representable in ``elem_type``.
        axis / since_version: as :func:`evaluate`.
        elem_type: ONNX element type of input and output.

    Returns:
        variant name -> output in the numpy dtype of ``elem_type`` (Hardmax: none, it is exact).
    """
    if op == "Hardmax":
        return {}
    x = np.asarray(x)
    axis = default_axis(since_version) if axis is None else axis
    rows, back = to_rows(x, axis, since_version)
    c = compute_type(elem_type)
    xc = rows.astype(np.float64).astype(c)
    out = {}
    with np.errstate(invalid="ignore", over="ignore", divide="ignore"):
        m = np.max(xc, axis=1, keepdims=True)
        d = (xc - m).astype(c)
        e = libm.exp(d).astype(c)
        sums = {
            "pairwise": np.sum(e, axis=1, keepdims=True, dtype=c),
            "forward": _seq_sum(e, False),
            "reverse": _seq_sum(e, True),
        }
        for sname, s in sums.items():
            if op == "Softmax":
                out[f"{sname}/div"] = e / s
                out[f"{sname}/recip"] = e * (c.type(1) / s)
            else:
                ls = libm.log(s).astype(c)
                out[f"{sname}/d-log"] = d - ls
                out[f"{sname}/x-(m+log)"] = xc - (m + ls)
    return {k: dtypes.round_to(back(v.astype(np.float64)), elem_type) for k, v in out.items()}
