"""Case generators for ai.onnx Softmax, LogSoftmax and Hardmax, versions 1, 11 and 13.

Oracle and definitional decisions: :mod:`conformance.reference.softmax` (2-D coercion before 13,
single axis from 13; max-shifted evaluation; special values by the formula; Hardmax
ties to the first maximum).

Suite per operator (deterministic in ``seed``, one ``case_rng`` stream per case):

* ``core``: version x dtype (the version's type constraint: float16, float, double, and
  bfloat16 from 13) x rank 1-4 x every valid axis (version 1: ``[0, r)``; 11 and 13:
  ``[-r, r)``), plus the default axis (attribute omitted) per version and dtype.  The
  numerics class cycles over the product index: ``normal``, ``large`` (values near
  +100 (float16), +200 (bfloat16), +1000 (float, double): ``exp`` without the max shift
  overflows), ``wide`` (std 8-ish: float16 probabilities underflow, LogSoftmax stays
  finite), ``neg-inf`` (some ``-inf`` entries in rows with a finite max), ``ties``
  (small integers: many tied maxima -- Hardmax takes the first), ``special`` (Softmax and
  LogSoftmax: a row of all ``-inf`` and a row with a NaN, both NaN by the formula, plus
  finite rows; Hardmax: an all ``-inf`` row and ``+inf`` entries).
* ``long-rows``: rows of >= 4096 elements (per version and dtype).
* ``rank5``: a few rank-5 cases.
* ``error``: axis out of range (``r`` and ``-r-1``; version 1 also ``-1``).

Opsets: version 1 at 1, 6, 7, 10; version 11 at 11, 12; version 13 at 13, 17, 21, 26 and
some at 28.  Tolerances: :func:`conformance.tolerance.derive_tolerance` over the
reference's variants (float32 arithmetic for float16/bfloat16); Hardmax is exact.
"""

from __future__ import annotations

import numpy as np

from conformance import dtypes
from conformance.case import Case, DataSet, Input, Output
from conformance.registry import case_rng, register, register_strategy
from conformance.tolerance import Tolerance, derive_tolerance
from conformance.generators import common
from conformance.reference import softmax as ref

OPSETS = {1: (1, 6, 7, 10), 11: (11, 12), 13: (13, 17, 21, 26)}
from conformance.ops.schedule import LATEST_OPSET  # noqa: E402  (one place for the opset constants)
NUMERICS = ("normal", "large", "wide", "neg-inf", "ties", "special")
LARGE = {"float16": 100.0, "bfloat16": 200.0, "float": 1000.0, "double": 1000.0}


def dtypes_of(since_version: int) -> tuple[str, ...]:
    """Element types of the version's type constraint T."""
    return ("float16", "float", "double") + (("bfloat16",) if since_version >= 13 else ())


def _shape(rng, rank: int) -> tuple[int, ...]:
    caps = {1: 16, 2: 8, 3: 5, 4: 4, 5: 3}[rank]
    return tuple(int(rng.integers(1, caps + 1)) if rank > 1 else int(rng.integers(2, caps + 1)) for _ in range(rank))


def _data(rng, op: str, numerics: str, shape, t: int, axis, since) -> np.ndarray:
    tname = dtypes.type_name(t)
    if numerics in ("normal", "long-rows"):
        return common.normal(rng, shape, t, loc=rng.uniform(-1, 1), scale=rng.uniform(0.5, 3.0))
    if numerics == "large":
        return common.representable(LARGE[tname] + rng.normal(0, 3.0, size=shape), t)
    if numerics == "wide":
        return common.normal(rng, shape, t, scale=10.0)
    if numerics == "ties":
        return common.representable(rng.integers(-1, 2, size=shape).astype(np.float64), t)
    x = common.normal(rng, shape, t, scale=2.0)
    if x.size == 0:
        return x
    rows, back = ref.to_rows(x, ref.default_axis(since) if axis is None else axis, since)
    rows = rows.copy()
    n_rows, n = rows.shape
    if numerics == "neg-inf":
        for r_ in range(n_rows):
            if n > 1:
                k = int(rng.integers(1, n))
                rows[r_, rng.choice(n, size=k, replace=False)] = -np.inf
        return back(rows)
    if numerics == "special":
        rows[0, :] = -np.inf
        if op == "Hardmax":
            if n_rows > 1:
                rows[1, int(rng.integers(0, n))] = np.inf
        elif n_rows > 1:
            rows[1, int(rng.integers(0, n))] = np.nan
        return back(rows)
    raise ValueError(numerics)


def _value_case(op, since, tname, shape, axis, numerics, opset, rng, extra_tags=None) -> Case:
    t = dtypes.elem_type(tname)
    x = _data(rng, op, numerics, shape, t, axis, since)
    xt = common.as_type(x, t)
    e64 = ref.evaluate(op, xt, axis, since)
    if op == "Hardmax":
        tol = Tolerance(atol=0.0, rtol=0.0, exact=True)
    else:
        tol = derive_tolerance(e64, ref.variants(op, xt, axis, since, t), t)
    attrs = {} if axis is None else {"axis": int(axis)}
    rank = len(shape)
    ax_eff = ref.default_axis(since) if axis is None else axis
    tags = {
        "dtype": tname, "rank": rank, "axis": "default" if axis is None else int(axis),
        "axis_sign": "default" if axis is None else ("neg" if axis < 0 else "pos"),
        "outputs": "output", "params": "none", "numerics": numerics, "opset": opset,
        "semantics": "coerce-2d" if since < 13 else "single-axis",
        "flattened": since < 13 and (ax_eff % rank) < rank - 1,
    }
    tags.update(extra_tags or {})
    ax_s = "default" if axis is None else str(axis)
    return Case(
        op=op, since_version=since, opset=opset, attributes=attrs,
        inputs=[Input("input", t, tuple(shape))],
        outputs=[Output("output", t, tolerance=tol)],
        datasets=[DataSet(inputs={"input": xt}, outputs={"output": dtypes.round_to(e64, t)})],
        tags=tags, label=f"{tname}/r{rank}/axis={ax_s}/{numerics}/opset{opset}",
    )


def _error_case(op, since, tname, shape, axis, opset, rng) -> Case:
    t = dtypes.elem_type(tname)
    lo, hi = ref.axis_range(since, len(shape))
    return Case(
        op=op, since_version=since, opset=opset, attributes={"axis": int(axis)},
        inputs=[Input("input", t, tuple(shape))], outputs=[Output("output", t, shape=tuple(shape))],
        datasets=[DataSet(inputs={"input": common.as_type(common.normal(rng, shape, t), t)})],
        tags={"dtype": tname, "rank": len(shape), "axis": int(axis), "outputs": "output", "opset": opset,
              "error": "axis-range"},
        label=f"{tname}/r{len(shape)}/axis={axis}/error=axis-range/opset{opset}",
        expect_error=f"axis {axis} outside [{lo}, {hi}) for rank {len(shape)}",
    )


def generate_op(op: str, seed: int) -> list[Case]:
    """All cases of ``op`` (Softmax, LogSoftmax or Hardmax) for ``seed`` (module docstring)."""
    cases: list[Case] = []
    j = 0
    for since in ref.VERSIONS:
        opsets = OPSETS[since]
        for tname in dtypes_of(since):
            for rank in range(1, 5):
                lo, hi = ref.axis_range(since, rank)
                for axis in list(range(lo, hi)) + ([None] if rank == 3 else []):
                    rng = case_rng(seed, "core", since, tname, rank, str(axis))
                    numerics = NUMERICS[(j * 5 + rank) % len(NUMERICS)]
                    opset = LATEST_OPSET if since == 13 and j % 17 == 5 else opsets[(j * 3 + rank) % len(opsets)]
                    cases.append(_value_case(op, since, tname, _shape(rng, rank), axis, numerics, opset, rng))
                    j += 1
            # long rows: a 2-D [2, 4096] row over axis 1, and a rank-3 flattened/single-axis one
            for k, (shape, axis) in enumerate((((2, 4096), 1), ((2, 8, 640), 1 if since < 13 else -1))):
                rng = case_rng(seed, "long", since, tname, k)
                opset = opsets[k % len(opsets)]
                cases.append(_value_case(op, since, tname, shape, axis, "long-rows", opset, rng,
                                         {"long_rows": True}))
            # large values on long rows (overflow without the shift) and rank 5
            rng = case_rng(seed, "long-large", since, tname)
            cases.append(_value_case(op, since, tname, (1, 4096), 1, "large", opsets[-1], rng, {"long_rows": True}))
            rng = case_rng(seed, "rank5", since, tname)
            cases.append(_value_case(op, since, tname, (2, 3, 2, 3, 4), 2, NUMERICS[j % 6], opsets[0], rng))
            j += 1
    # errors
    k = 0
    for since in ref.VERSIONS:
        for rank in (1, 2, 3):
            shape = (3, 4, 2)[:rank]
            bad = (rank, -rank - 1) if since >= 11 else (rank, rank + 1)
            for axis in bad:
                tname = dtypes_of(since)[k % len(dtypes_of(since))]
                rng = case_rng(seed, "err", since, rank, axis)
                cases.append(_error_case(op, since, tname, shape, axis, OPSETS[since][k % len(OPSETS[since])], rng))
                k += 1
    return cases


@register("Softmax", version="1")
def generate_softmax(seed: int) -> list[Case]:
    """Softmax-1/11/13 cases (module docstring)."""
    return generate_op("Softmax", seed)


@register("LogSoftmax", version="1")
def generate_log_softmax(seed: int) -> list[Case]:
    """LogSoftmax-1/11/13 cases (module docstring)."""
    return generate_op("LogSoftmax", seed)


@register("Hardmax", version="1")
def generate_hardmax(seed: int) -> list[Case]:
    """Hardmax-1/11/13 cases (module docstring)."""
    return generate_op("Hardmax", seed)


# ----------------------------------------------------------------------------- explore mode
#: Type order of explore draws (shrinking goes to the first).
EXPLORE_TYPES = ("float", "double", "float16", "bfloat16")
#: Largest dim per rank of explore shapes.
EXPLORE_CAPS = {1: 16, 2: 8, 3: 5, 4: 4, 5: 3}


def _explore_axes(since: int, rank: int) -> list:
    """Axis choices, simplest first: omitted (``None``; not for rank 1 before 13, where the
    default 1 is out of range), ``0 .. r-1``, then ``-1 .. -r`` (from 11)."""
    lo, hi = ref.axis_range(since, rank)
    default_ok = ref.axis_range(since, rank)[0] <= ref.default_axis(since) < hi
    return ([None] if default_ok else []) + list(range(0, hi)) + list(range(-1, lo - 1, -1))


def strategy(op: str):
    """Hypothesis strategy of fresh value cases of ``op`` (Softmax, LogSoftmax, Hardmax; explore mode).

    Draws the version (1, 11, 13: before 13 the input is coerced to 2-D at ``axis``, from 13
    ``axis`` is one axis), a type of its constraint (float, double, float16, then bfloat16 from
    13), the opset (any in the version's range, 13-28 for version 13), the numerics class
    (:data:`NUMERICS`: ``normal``, ``large``, ``wide``, ``neg-inf``, ``ties``, ``special``), the
    rank (1-5) and every dim (:data:`EXPLORE_CAPS`), the axis (every valid one, or omitted:
    :func:`_explore_axes`), long rows (the normalized axis 256-4096 long, the other dims cut
    to at most 2) and a data seed, and builds the case with :func:`_value_case`, the suite's
    code (oracle, legitimate variants, derived tolerance; Hardmax exact).

    Shrinking goes to version 1, float, the since_version as opset, ``normal`` numerics,
    rank 1, dims of 1, the axis omitted (else 0), no long rows, seed 0.
    """
    from hypothesis import reject
    from hypothesis import strategies as st

    @st.composite
    def cases(draw) -> Case:
        since = draw(st.sampled_from(ref.VERSIONS))
        tname = draw(st.sampled_from([t for t in EXPLORE_TYPES if t in dtypes_of(since)]))
        later = [v for v in ref.VERSIONS if v > since]
        opset = draw(st.integers(since, later[0] - 1 if later else LATEST_OPSET))
        numerics = draw(st.sampled_from(NUMERICS))
        rank = draw(st.integers(1, 5))
        shape = [draw(st.integers(1, EXPLORE_CAPS[rank])) for _ in range(rank)]
        axis = draw(st.sampled_from(_explore_axes(since, rank)))
        long_rows = draw(st.booleans())
        length = draw(st.integers(256, 4096))
        seed = draw(st.integers(0, 2**32 - 1))
        tags = {"explore_seed": seed}
        if long_rows:
            ax = (ref.default_axis(since) if axis is None else axis) % rank
            shape = [length if i == ax else min(d, 2) for i, d in enumerate(shape)]
            tags["long_rows"] = True
        try:
            return _value_case(op, since, tname, tuple(shape), axis, numerics, opset, np.random.default_rng(seed),
                               tags)
        except ValueError as exc:
            # a legitimate variant overflows where the float64 oracle does not: ill-posed at
            # the mandated precision (as BatchNormalization's strategy)
            if "is not finite where the oracle is" not in str(exc):
                raise
            reject()

    return cases()


@register_strategy("Softmax")
def strategy_softmax():
    """Explore-mode strategy of Softmax-1/11/13 (:func:`strategy`)."""
    return strategy("Softmax")


@register_strategy("LogSoftmax")
def strategy_log_softmax():
    """Explore-mode strategy of LogSoftmax-1/11/13 (:func:`strategy`)."""
    return strategy("LogSoftmax")


@register_strategy("Hardmax")
def strategy_hardmax():
    """Explore-mode strategy of Hardmax-1/11/13 (:func:`strategy`)."""
    return strategy("Hardmax")
