"""Oracle of ai.onnx Dropout (versions 1, 6, 7, 10, 12, 13, 22; float8 at 22) and a statistical check of training mode.

Definitional decisions (``onnx.defs.get_schema("Dropout", v).doc``):

* **Inference is the identity**: ``output = data`` bit for bit (NaN, infinities, -0
  and subnormals included).  Versions 1 and 6 are in inference ("test") mode when
  ``is_test`` is nonzero (the default 0 means training); versions 7 and 10 leave the
  mode to the runtime, and an inference runtime runs the identity; from 12 the mode is
  the optional ``training_mode`` input (absent or false: inference, ``ratio`` ignored).
* The mask, when requested, is all true (all ones) in inference (the version 12 text;
  for version 10 it is the only mask consistent with nothing dropped).  Before 10 the
  mask has type T; we do not request it in inference cases for those versions.
* **Training** (``is_test=0`` at 1/6, ``training_mode=true`` from 12): every element is
  independently kept with probability ``1 - ratio``: ``output = data * mask / (1 - ratio)``
  (``scale = 1 / (1 - ratio)``).  ``ratio = 0`` is the identity with an all-true mask.
  ``ratio`` lies in ``[0, 1)``; 1 (or a negative ratio) is invalid.  ``ratio``
  defaults to 0.5 (attribute before 12, input from 12).

* **Precision of kept values.**  The spec writes ``output = scale * data * mask`` with
  ``scale = 1 / (1 - ratio)`` and mandates no precision.  Legitimate kernels: the product
  rounded once to T (``data / (1 - ratio)`` exactly, then rounded), the scale rounded to T
  first and then the product rounded to T, the scale and the product computed in float32
  and then rounded to T, and ``data / (1 - ratio)`` with ``1 - ratio`` rounded to T or to
  float32 first.  A scale rounded to the *ratio's* type T1 is not accepted (T1 only says
  how the ratio value is stored; the scale is a function of that value).  For float16,
  bfloat16, float and double the kept values are accepted within :data:`KEPT_ULPS` ulps of
  T plus :data:`RATIO_ULPS` float32 ulps (relative), which covers all of these.  For the
  float8 types (3 or 2 mantissa bits) an ulp tolerance would be 12.5% / 25% per ulp and
  would accept a kernel that scales by ``1 - ratio`` at ``ratio = 0.25``; there each kept
  value must lie between the smallest and the largest of the legitimate variants above,
  evaluated exactly (:func:`kept_value_range`), so the only freedom is the variants'
  own spread (at most one float8 ulp).  Kept values must not overflow T (the generator
  keeps ``|data / (1 - ratio)|`` far below the float8 maxima); a kernel that routes the
  product through float16 gives the same float8 results as the single rounding on the
  suite's ratios (0.5, 0.25, 0.375: ``data * scale`` is never within float16 resolution of
  a float8 tie), so it is neither a flaw nor detectable there.

* **Ratio not given in training, versions 12 and 13.**  The ratio input's text says both
  "If this input was not set, or if it was set to 0, the output would be a simple copy of
  the input" and "if not specified it will default to 0.5"; version 22 drops the first
  clause.  Where the schema's text still has it (:func:`unset_ratio_is_copy`), a kernel
  that copies and one that drops with ratio 0.5 both follow the text:
  :func:`check_dropout_unset_ratio` accepts either.

Random outputs cannot be compared with fixed expectations: :func:`check_dropout`
checks a training-mode result statistically.

The mode and the effective ratio of a model (:func:`mode`) and which versions have a mode
at all come from the schema (:func:`conformance.opspec.op_spec`): ``is_test`` where the
version has that attribute, the ``training_mode`` input where it has that input, and
inference otherwise (versions 7 and 10).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from functools import lru_cache
from typing import Any

import numpy as np
import onnx.defs

from conformance import dtypes
from conformance.opspec import op_spec

#: False-alarm probability of the dropped-fraction test, per case.
FALSE_ALARM = 1e-6
#: Elementwise tolerance of kept values, in ulps of the data type (``x * scale`` rounded once, or
#: ``x / (1 - ratio)`` with ``1 - ratio`` rounded first, or in float32 for float16/bfloat16).
KEPT_ULPS = 4.0
#: Extra relative tolerance, in float32 ulps, for a scale ``1 / (1 - ratio)`` computed in float32
#: (the ratio is a float32 attribute before 12, and often a float32 input after).
RATIO_ULPS = 2.0


#: The operator.
OP = "Dropout"
#: Judges training-mode results (:attr:`conformance.case.Case.check`).
CHECK = "conformance.reference.dropout:check_dropout"
#: Judges training-mode results whose ratio the text leaves open (:func:`unset_ratio_is_copy`).
CHECK_UNSET = "conformance.reference.dropout:check_dropout_unset_ratio"


def mode_source(version: int) -> str | None:
    """What decides training at ``version``: ``"is_test"`` (the attribute, versions 1 and 6),
    ``"training_mode"`` (the input, from 12) or ``None`` (versions 7 and 10: no mode in the
    model; an inference runtime runs the identity).  Read from the schema.

    Raises:
        KeyError: ``version`` is not a since_version of Dropout.
    """
    vs = op_spec(OP).versions[version]
    if "is_test" in vs.attributes:
        return "is_test"
    if any(f.name == "training_mode" for f in vs.inputs):
        return "training_mode"
    return None


def mode(version: int, attrs: Mapping[str, Any], ratio=None, training_mode=None) -> tuple[bool, float]:
    """``(training, ratio)`` of a model (module docstring).

    Args:
        version: since_version.
        attrs: the node's attributes (defaults need not be filled in: the schema's are used).
        ratio / training_mode: the inputs' values as fed (``None``: absent; from 12).

    Returns:
        whether the model trains, and the ratio in force (the input, else the attribute, else
        the schema's default 0.5), as a float (float32 attributes as stored).
    """
    vs = op_spec(OP).versions[version]
    src = mode_source(version)
    if src == "training_mode":
        training = bool(np.asarray(training_mode)) if training_mode is not None else False
        r = float(np.asarray(ratio, dtype=np.float64)) if ratio is not None else 0.5
        return training, r
    r = attrs.get("ratio", vs.attributes["ratio"].default)
    r = float(np.float32(r))
    if src == "is_test":
        return not attrs.get("is_test", vs.attributes["is_test"].default), r
    return False, r


@lru_cache(maxsize=None)
def unset_ratio_is_copy(version: int) -> bool:
    """Whether the version's ratio text says that an absent ratio gives a copy (12 and 13: "If
    this input was not set, or if it was set to 0, the output would be a simple copy"), while
    it also says the ratio defaults to 0.5 (module docstring).  Read from the schema text."""
    s = onnx.defs.get_schema(OP, version)
    ratio = [i for i in s.inputs if i.name == "ratio"]
    return bool(ratio) and "not set" in ratio[0].description


def random_outcome(version: int, attrs: Mapping[str, Any], data, ratio=None, training_mode=None,
                   mask_requested: bool = False) -> bool:
    """Whether the outputs are random: training with a nonzero ratio, and either some
    nonzero data or the mask requested (all-zero data give zeros whatever is dropped)."""
    training, r = mode(version, attrs, ratio, training_mode)
    if not training or r == 0:
        return False
    return mask_requested or bool(np.any(np.asarray(data, dtype=np.float64) != 0))


def expected(version: int, attrs: Mapping[str, Any], data, ratio=None, training_mode=None):
    """The exact outputs ``(output, mask)`` where they are determined: ``data`` itself and an
    all-true mask in inference and with ratio 0; zeros (``scale * 0 * mask``) and an all-true
    mask for all-zero data (the mask is then random unless the ratio is 0: such a model is
    judged by a check when it requests the mask).  For random outcomes
    (:func:`random_outcome`) the same values stand in; they are not compared
    (:attr:`conformance.case.Case.check`).

    Args:
        data: float64 array (exact values, NaN / inf / -0 included).

    Returns:
        ``(output, mask)``: float64 of ``data``'s shape and bool of the same shape.
    """
    x = np.asarray(data, dtype=np.float64)
    return x.copy(), np.ones(x.shape, dtype=bool)


def special_values(t: int) -> list[float]:
    """Special values of a float8 type ``t`` for identity cases.

    NaN; +-inf where the type has an infinity; -0 where it has a negative zero; the smallest
    and largest subnormal, -3 x the smallest subnormal; +-the largest finite value.  Every
    value is exactly representable in ``t`` (NaN aside).

    Raises:
        KeyError: ``t`` is not a float8 type.
    """
    if t not in dtypes.FLOAT8_TYPES:
        raise KeyError(f"{t} is not a float8 element type")
    fi = dtypes.finfo(t)
    tiny, fmax = float(fi.smallest_subnormal), float(fi.max)
    vals = [np.nan]
    if np.isinf(float(dtypes.round_to(np.float64(np.inf), t).astype(np.float64))):
        vals += [np.inf, -np.inf]
    if np.signbit(dtypes.round_to(np.float64(-0.0), t).astype(np.float64)):
        vals.append(-0.0)
    vals += [tiny, float(fi.smallest_normal) - tiny, -3 * tiny, fmax, -fmax]
    return vals


def dropout_inference(data: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Inference-mode Dropout: ``(output, mask)`` = ``(data, all true)``.

    Args:
        data: any shape, any float dtype (float8 included: the copy keeps every bit, the
            NaN encodings and -0 of the types that have one).

    Returns:
        ``output`` (a copy of ``data``, same dtype) and a bool mask of ``data``'s shape.
    """
    data = np.asarray(data)
    return data.copy(), np.ones(data.shape, dtype=bool)


def validate_ratio(ratio: float) -> None:
    """Raise ``ValueError`` unless ``0 <= ratio < 1`` (the spec's range of the ratio input)."""
    if not (0.0 <= float(ratio) < 1.0):
        raise ValueError(f"ratio {ratio} outside [0, 1)")


def kept_value_range(data: np.ndarray, ratio: float) -> tuple[np.ndarray, np.ndarray]:
    """Smallest and largest kept value that a legitimate float8 kernel can produce.

    Variants (module docstring, "Precision of kept values"), each rounded to T at the end with
    :func:`conformance.dtypes.round_to` (float64 -> T, correctly rounded) or, for float32
    intermediates, with ``ml_dtypes``' float32 -> T round-to-nearest-even:

    * ``round_T(data / (1 - ratio))`` (exact quotient, one rounding);
    * ``round_T(data * round_T(1 / (1 - ratio)))`` (scale rounded to T first; the product of
      two float8 values is exact in float64);
    * ``round_T(f32(f32(data) * f32(1 / (1 - ratio))))`` (scale and product in float32);
    * ``round_T(data / round_T(1 - ratio))`` and ``round_T(f32(f32(data) / f32(1 - ratio)))``.

    Args:
        data: any shape, one of the float8 dtypes (also works for any float dtype).
        ratio: the ratio as fed (``0 <= ratio < 1``).

    Returns:
        ``(lo, hi)``: float64 arrays of ``data``'s shape.  NaN where a variant is NaN (an
        overflow of T, which the generator avoids); a NaN bound accepts nothing.

    Raises:
        KeyError: ``data``'s dtype is not one of the project's element types.
    """
    x = np.asarray(data)
    t = dtypes.elem_type(x.dtype)
    x64 = x.astype(np.float64)
    x32 = x64.astype(np.float32)
    r = float(ratio)
    one_minus = 1.0 - r
    scale = 1.0 / one_minus
    with np.errstate(over="ignore", invalid="ignore"):
        scale_t = float(dtypes.round_to(np.float64(scale), t).astype(np.float64))
        one_minus_t = float(dtypes.round_to(np.float64(one_minus), t).astype(np.float64))
        variants = [
            dtypes.round_to(x64 / one_minus, t),
            dtypes.round_to(x64 * scale_t, t),
            (x32 * np.float32(scale)).astype(np.float32).astype(x.dtype),
            dtypes.round_to(x64 / one_minus_t, t),
            (x32 / np.float32(one_minus)).astype(np.float32).astype(x.dtype),
        ]
    v = np.stack([np.asarray(a).astype(np.float64) for a in variants])
    return v.min(axis=0), v.max(axis=0)


def dropped_fraction_bound(n: int, alpha: float = FALSE_ALARM) -> float:
    """Half-width ``t`` with ``P(|dropped/n - ratio| >= t) <= alpha`` for n Bernoulli trials.

    Hoeffding's inequality: ``P(|mean - p| >= t) <= 2 exp(-2 n t^2)``, so
    ``t = sqrt(ln(2 / alpha) / (2 n))``.  It holds for every ``p``, so the false-alarm
    probability of :func:`check_dropout`'s fraction test is at most ``alpha``.
    """
    return math.sqrt(math.log(2.0 / alpha) / (2.0 * max(n, 1)))


def check_dropout(inputs: dict, outputs: dict, attrs: dict) -> tuple[bool, str]:
    """Check a training-mode Dropout result statistically.

    Args:
        inputs: ``{"data": array, "ratio": scalar (optional)}`` as fed (``ratio`` from
            the input, else from ``attrs``, else 0.5).
        outputs: ``{"output": array, "mask": array (optional)}`` from the backend; the
            mask may be bool or (before version 10) of the data type.
        attrs: node attributes (``ratio`` before version 12).

    Checks: output shape/dtype equal data's; every output element is 0 (dropped) or
    ``data / (1 - ratio)`` within ``KEPT_ULPS`` ulps of the data type plus
    ``RATIO_ULPS`` float32 ulps (relative) -- for the float8 types: within
    :func:`kept_value_range` (module docstring); the mask (if
    given) is true exactly where the element is kept; the dropped fraction (over
    elements with ``data != 0``, whose fate is observable) is within
    :func:`dropped_fraction_bound` of ``ratio`` (false alarm <= :data:`FALSE_ALARM`).

    Returns:
        ``(passed, message)``; the message names the first failed check.
    """
    x = np.asarray(inputs["data"])
    if "ratio" in inputs and inputs["ratio"] is not None:
        ratio = float(np.asarray(inputs["ratio"]).astype(np.float64))
    else:
        ratio = float(np.float32(attrs.get("ratio", 0.5)))  # attributes are float32 in the model
    y = np.asarray(outputs["output"])
    if y.shape != x.shape or y.dtype != x.dtype:
        return False, f"output {y.dtype}{list(y.shape)} != data {x.dtype}{list(x.shape)}"
    x64, y64 = x.astype(np.float64), y.astype(np.float64)
    scaled = x64 / (1.0 - ratio)
    if dtypes.is_float8(x.dtype):
        lo, hi = kept_value_range(x, ratio)
        kept_ok = (y64 >= lo) & (y64 <= hi)
    else:
        eps = dtypes.eps(x.dtype)
        tiny = float(dtypes.finfo(x.dtype).smallest_subnormal)
        rel = KEPT_ULPS * eps + RATIO_ULPS * float(np.finfo(np.float32).eps)
        kept_ok = np.abs(y64 - scaled) <= rel * np.abs(scaled) + tiny
    dropped = y64 == 0
    bad = ~(kept_ok | dropped)
    if bad.any():
        i = np.unravel_index(int(np.argmax(bad)), x.shape)
        return False, (f"{int(bad.sum())} element(s) neither 0 nor data/(1-ratio); first at {list(map(int, i))}: "
                       f"data {x64[i]!r}, output {y64[i]!r}, expected 0 or {scaled[i]!r}")
    observable = x64 != 0
    if "mask" in outputs and outputs["mask"] is not None:
        m = np.asarray(outputs["mask"])
        if m.shape != x.shape:
            return False, f"mask shape {list(m.shape)} != data {list(x.shape)}"
        mb = m.astype(bool)
        incons = observable & (mb == dropped)
        if incons.any():
            i = np.unravel_index(int(np.argmax(incons)), x.shape)
            return False, f"mask inconsistent with output at {list(map(int, i))}: mask {m[i]!r}, output {y64[i]!r}"
        is_dropped = ~mb
        n = x.size
    else:
        is_dropped = dropped[observable]
        n = int(observable.sum())
    if n == 0:
        return True, "no observable elements"
    frac = float(np.sum(is_dropped)) / n
    t = dropped_fraction_bound(n)
    if abs(frac - ratio) >= t:
        return False, (f"dropped fraction {frac:.4f} of {n} differs from ratio {ratio} by >= {t:.4f} "
                       f"(Hoeffding bound, false alarm {FALSE_ALARM:g})")
    return True, f"dropped {frac:.4f} of {n}, ratio {ratio}, bound {t:.4f}"


def check_dropout_unset_ratio(inputs: dict, outputs: dict, attrs: dict) -> tuple[bool, str]:
    """Judge a training-mode result whose ratio input is absent at a version whose text says
    both "a simple copy" and "default to 0.5" (:func:`unset_ratio_is_copy`): it passes as a
    copy (``output`` equal to ``data`` bit for bit up to NaN payloads, the mask all true) or as
    a dropout with ratio 0.5 (:func:`check_dropout`).

    Returns:
        ``(passed, message)``.
    """
    x = np.asarray(inputs["data"])
    y = np.asarray(outputs["output"])
    m = outputs.get("mask")
    if y.shape == x.shape and y.dtype == x.dtype:
        same = x.tobytes() == y.tobytes() or bool(np.all(
            (x.astype(np.float64) == y.astype(np.float64)) & (np.signbit(x.astype(np.float64)) == np.signbit(y.astype(np.float64)))
            | (np.isnan(x.astype(np.float64)) & np.isnan(y.astype(np.float64)))))
        if same and (m is None or bool(np.all(np.asarray(m).astype(bool)))):
            return True, "a copy of the input (ratio not set: the text's 'simple copy')"
    ok, msg = check_dropout({k: v for k, v in inputs.items() if k != "ratio"}, outputs, {"ratio": 0.5})
    if ok:
        return True, msg + " (ratio not set: the text's default 0.5)"
    return False, "neither a copy of the input nor a dropout with the default ratio 0.5: " + msg
