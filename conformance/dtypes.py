"""Element types: ONNX ``TensorProto`` data types <-> numpy dtypes.

bfloat16 is represented by ``ml_dtypes.bfloat16``; every other floating type by
numpy's own.  The short names (``float16``, ``bfloat16``, ``float``, ``double``)
are the ones the ONNX spec uses in type constraints (``tensor(float16)``...), and
they are what case ids and tags carry.
"""

from __future__ import annotations

import ml_dtypes
import numpy as np
from onnx import TensorProto

#: ONNX element type -> numpy dtype for the types our generators produce.
_NP = {
    TensorProto.FLOAT16: np.dtype(np.float16),
    TensorProto.BFLOAT16: np.dtype(ml_dtypes.bfloat16),
    TensorProto.FLOAT: np.dtype(np.float32),
    TensorProto.DOUBLE: np.dtype(np.float64),
    TensorProto.INT64: np.dtype(np.int64),
    TensorProto.INT32: np.dtype(np.int32),
    TensorProto.BOOL: np.dtype(np.bool_),
}

#: ONNX element type -> the name the spec uses inside ``tensor(...)``.
_NAME = {
    TensorProto.FLOAT16: "float16",
    TensorProto.BFLOAT16: "bfloat16",
    TensorProto.FLOAT: "float",
    TensorProto.DOUBLE: "double",
    TensorProto.INT64: "int64",
    TensorProto.INT32: "int32",
    TensorProto.BOOL: "bool",
}
_BY_NAME = {v: k for k, v in _NAME.items()}
_BY_NAME.update({"float32": TensorProto.FLOAT, "float64": TensorProto.DOUBLE})

FLOAT_TYPES = (TensorProto.FLOAT16, TensorProto.BFLOAT16, TensorProto.FLOAT, TensorProto.DOUBLE)


def np_dtype(elem_type: int) -> np.dtype:
    """numpy dtype for an ONNX element type.

    Raises:
        KeyError: the element type is not one this project generates.
    """
    try:
        return _NP[elem_type]
    except KeyError:
        raise KeyError(f"unsupported ONNX element type {elem_type}") from None


def type_name(elem_type: int) -> str:
    """Spec name of an element type, e.g. ``TensorProto.FLOAT`` -> ``"float"``."""
    return _NAME[elem_type]


def elem_type(name_or_dtype: str | np.dtype | type) -> int:
    """ONNX element type from a spec name (``"float16"``, ``"tensor(float)"``) or a numpy dtype.

    Raises:
        KeyError: unknown name or dtype.
    """
    if isinstance(name_or_dtype, str):
        name = name_or_dtype
        if name.startswith("tensor(") and name.endswith(")"):
            name = name[len("tensor(") : -1]
        return _BY_NAME[name]
    dt = np.dtype(name_or_dtype)
    for k, v in _NP.items():
        if v == dt:
            return k
    raise KeyError(f"no ONNX element type for numpy dtype {dt}")


def eps(elem_type_or_dtype: int | np.dtype) -> float:
    """Machine epsilon (distance from 1.0 to the next representable value) as a Python float."""
    dt = np_dtype(elem_type_or_dtype) if isinstance(elem_type_or_dtype, int) else np.dtype(elem_type_or_dtype)
    return float(ml_dtypes.finfo(dt).eps)


def finfo(elem_type_or_dtype: int | np.dtype):
    """``ml_dtypes.finfo`` (works for bfloat16 and the numpy float types)."""
    dt = np_dtype(elem_type_or_dtype) if isinstance(elem_type_or_dtype, int) else np.dtype(elem_type_or_dtype)
    return ml_dtypes.finfo(dt)


def round_to(x: np.ndarray, elem_type: int) -> np.ndarray:
    """Round a (float64) array to the element type, round-to-nearest-even.

    bfloat16 goes through ml_dtypes, which rounds correctly from float32; we first
    round float64 -> float32, which can double-round only in the last bit of ties
    that a float64 oracle practically never produces.
    """
    dt = np_dtype(elem_type)
    x = np.asarray(x)
    if dt == np.dtype(ml_dtypes.bfloat16):
        return x.astype(np.float32).astype(dt)
    return x.astype(dt)
