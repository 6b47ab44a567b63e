"""Case generator for ai.onnx Dropout, versions 1, 6, 7, 10, 12, 13 and 22.

Oracle: :mod:`conformance.reference.dropout` (inference is the identity, mask all true; training
keeps each element with probability ``1 - ratio`` and scales it by ``1 / (1 - ratio)``).

Value cases are deterministic wherever the spec makes them so:

* versions 1 and 6: ``is_test=1`` (identity), ``ratio`` attribute default / 0.2 / 0.7;
  and ``is_test=0`` with ``ratio=0`` (training without dropping: identity);
* versions 7 and 10: identity whatever ``ratio``; version 10 also with the bool mask (all true;
  tag ``mask_semantics=inferred``: the version 10 text does not say what the mask is in
  inference -- all true is the only value consistent with ``output = data`` and with the
  version 12 text, where the mask is true for kept elements);
* versions 12, 13, 22: ``training_mode`` absent, false (graph input or initializer) --
  identity, ``ratio`` absent or any value in [0, 1) -- and ``training_mode`` true with
  ``ratio = 0`` (identity); mask requested or not; ratio of each T1 type.
* ``zero-data``: training with ratio > 0 on all-zero data (output is all zeros whatever
  the mask; checks shape, dtype and that nothing like NaN appears).

Data carry special values (NaN, +-inf, -0, subnormals) in some cases: the identity
must keep them bit for bit (tolerance ``exact`` with ``signed_zero``: a -0 must stay -0).

Random cases (tag ``random=1``): training with ratio > 0 on 4096-element nonzero
data, with and without mask and ``seed``.  Their ``expected`` outputs are not
meaningful: ``Case.check`` names :func:`conformance.reference.dropout.check_dropout`, which the
runner calls instead of a value comparison.

Error cases: ratio 1.0 and -0.1 with training_mode true (the spec's range is [0, 1)).

float8 (version 22 only; generated after every other case, so the cases above keep
their ids).  T and T1 each range over bfloat16, float16, float, double and the four
float8 types (:data:`FLOAT8_NAMES`), 64 (T, T1) pairs, 48 of which involve a float8 type:

* for each float8 T, the same kinds as above: inference (training_mode absent / false,
  graph input or initializer, ratio absent or 0.5 / 0 / 0.875 / 0.375, mask or not),
  training with ratio 0 (identity), all-zero data, three random training cases (ratio
  0.5, 0.25, absent = 0.5) and one error case (ratio 1.0 or -0.25), T1 cycling over the
  eight types (a float8 T1 for the random ones);
* for each of the 48 pairs (T, T1) with a float8 T or T1: one inference case
  (training_mode false, mask requested, special data) and one random training case
  (mask requested, ratio 0.5, 0.25 or 0.375 in turn).

Every ratio is exactly representable in every T1 (0.5 = 2^-1, 0.25 = 2^-2,
0.375 = 1.1b x 2^-2, 0.875 = 1.11b x 2^-1 need at most 2 mantissa bits); the tag and the
id carry that exact value.  Special data of a float8 type (:func:`special_values`): NaN,
+-inf (float8e5m2 only), -0 (float8e4m3fn and float8e5m2 only: the fnuz types have a
single zero), the smallest and the largest subnormal, -3 x the smallest subnormal and
+-max; inference and ratio-0 training keep them bit for bit (the expected outputs are
bit-exact copies, compared exactly with the sign of zero; NaN payloads are not compared).  Random float8 data are
Gaussian with standard deviation 2 (|x| < 32 in practice), so ``x / (1 - ratio) <= 2x``
stays far below the smallest float8 maximum (240).  The kept values of float8 training
are judged by :func:`conformance.reference.dropout.kept_value_range` (the legitimate
roundings of ``x / (1 - ratio)``).

Version 1's legacy ``consumed_inputs``: one inference case per type with it given (tag
``legacy``); it changes no value.

Not generated: the mask of versions 1-7 (type T, meaning unspecified).
"""

from __future__ import annotations

import numpy as np
from onnx import TensorProto

from conformance import dtypes
from conformance.case import Case, DataSet, Input, Output
from conformance.registry import case_rng, register
from conformance.tolerance import Tolerance
from conformance.generators import common
from conformance.reference import dropout as ref

OP = "Dropout"
VERSIONS = (1, 6, 7, 10, 12, 13, 22)
OPSETS = {1: (1, 5), 6: (6,), 7: (7, 8, 9), 10: (10, 11), 12: (12,), 13: (13, 17, 21), 22: (22, 26, 28)}
#: Identity outputs are bit-exact up to NaN payloads, the sign of zero included
#: (``scale * data * mask`` with every element kept keeps -0).
EXACT = Tolerance(atol=0.0, rtol=0.0, exact=True, signed_zero=True)



#: Spec names of the float8 types, which Dropout admits from version 22.
FLOAT8_NAMES = tuple(dtypes.type_name(t) for t in dtypes.FLOAT8_TYPES)
#: Version of the float8 cases.
FLOAT8_SINCE = 22
#: Ratios of the float8 cases (exactly representable in every T1, float8 included).
FLOAT8_RANDOM_RATIOS = (0.5, 0.25, 0.375)


def base_dtypes_of(since: int) -> tuple[str, ...]:
    """Element types of T of the main loop (the cases that predate float8), in their order."""
    return ("float16", "float", "double") + (("bfloat16",) if since >= 13 else ())


def base_ratio_dtypes_of(since: int) -> tuple[str, ...]:
    """Element types of T1 of the main loop, from version 12, in their order."""
    return ("float16", "float", "double") + (("bfloat16",) if since >= 22 else ())


def dtypes_of(since: int) -> tuple[str, ...]:
    """Element types of T we generate for version ``since`` (the float8 types from 22)."""
    return base_dtypes_of(since) + (FLOAT8_NAMES if since >= FLOAT8_SINCE else ())


def ratio_dtypes_of(since: int) -> tuple[str, ...]:
    """Element types of T1 (the ratio input) we generate, from version 12 (float8 from 22)."""
    return base_ratio_dtypes_of(since) + (FLOAT8_NAMES if since >= FLOAT8_SINCE else ())


def special_values(t: int) -> list[float]:
    """Special values of a float8 type ``t`` for identity cases (module docstring).

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


def _data(rng, shape, t: int, special: bool) -> np.ndarray:
    x = common.normal(rng, shape, t, scale=2.0)
    x[x == 0] = 1.0
    if t in dtypes.FLOAT8_TYPES:
        if special:
            vals = special_values(t)
            flat = x.reshape(-1)
            n = min(flat.size, len(vals))
            pos = rng.choice(flat.size, size=n, replace=False)
            for p, v in zip(pos, rng.permutation(len(vals))[:n]):
                flat[p] = vals[v]
        return x
    if special and x.size >= 6:
        flat = x.reshape(-1)
        pos = rng.choice(flat.size, size=6, replace=False)
        tiny = float(dtypes.finfo(t).smallest_subnormal)
        for p, v in zip(pos, (np.nan, np.inf, -np.inf, -0.0, tiny, -3 * tiny)):
            flat[p] = v
    return x


def _case(*, since, opset, tname, shape, attrs, ratio=None, ratio_t=None, ratio_init=False,
          training=None, training_init=False, mask=False, data_kind="normal", mode="inference", rng,
          error=None, random=False, extra=None) -> Case:
    t = dtypes.elem_type(tname)
    if data_kind == "zero":
        x = np.zeros(shape)
    else:
        x = _data(rng, shape, t, data_kind == "special")
    xt = common.as_type(x, t)
    feeds = {"data": xt}
    inputs = [Input("data", t, tuple(shape))]
    if since >= 12:
        rt = dtypes.elem_type(ratio_t or "float")
        rval = None if ratio is None else common.as_type(np.array(ratio), rt)
        inputs.append(Input("ratio", rt, (), initializer=ratio_init, value=rval if ratio_init else None,
                            present=ratio is not None))
        if ratio is not None and not ratio_init:
            feeds["ratio"] = rval
        tval = None if training is None else np.array(bool(training))
        inputs.append(Input("training_mode", TensorProto.BOOL, (), initializer=training_init,
                            value=tval if training_init else None, present=training is not None))
        if training is not None and not training_init:
            feeds["training_mode"] = tval
    mask_t = TensorProto.BOOL if since >= 10 else t
    outs = {}
    if error is None:
        y, m = ref.dropout_inference(xt)
        outs["output"] = y
        if mask:
            outs["mask"] = m if since >= 10 else m.astype(dtypes.np_dtype(t))
    outputs = [Output("output", t, tolerance=EXACT if error is None else None, shape=tuple(shape)),
               Output("mask", mask_t, tolerance=EXACT if error is None else None, present=mask, shape=tuple(shape))]
    r_eff = ratio if since >= 12 else attrs.get("ratio", 0.5)
    tags = {"dtype": tname, "rank": len(shape), "outputs": "output,mask" if mask else "output", "opset": opset,
            "mode": mode, "numerics": data_kind, "ratio": "absent" if r_eff is None else float(r_eff),
            "params": ("initializers" if (ratio_init or training_init) else "inputs") if since >= 12 else "attributes"}
    if since >= 12:
        tags["ratio_input"] = "absent" if ratio is None else (ratio_t or "float")
        tags["training_mode"] = "absent" if training is None else bool(training)
    if "seed" in attrs:
        tags["seed"] = True
    if mask and since == 10:
        tags["mask_semantics"] = "inferred"  # v10 text does not define the inference mask
    if random:
        tags["random"] = 1
    if error:
        tags["error"] = error
    tags.update(extra or {})
    label = f"{tname}/r{len(shape)}/{mode}/ratio={tags['ratio']}/{tags['outputs'].replace(',', '+')}/{data_kind}"
    if since >= 12:
        label += f"/tm={tags['training_mode']}/rt={tags['ratio_input']}"
    label += f"/opset{opset}" + ("/random" if random else "") + (f"/error={error}" if error else "")
    return Case(op=OP, since_version=since, opset=opset, attributes=dict(attrs), inputs=inputs, outputs=outputs,
                datasets=[DataSet(inputs=feeds, outputs=outs)], tags=tags, label=label,
                expect_error=(f"ratio {ratio} outside [0, 1)" if error else None),
                check="conformance.reference.dropout:check_dropout" if random else None)


def _shape(rng) -> tuple[int, ...]:
    rank = int(rng.integers(1, 5))
    return tuple(int(rng.integers(1, 5)) for _ in range(rank - 1)) + (int(rng.integers(2, 7)),)


@register(OP, version="2")
def generate(seed: int) -> list[Case]:
    """All Dropout cases for ``seed`` (module docstring).  Deterministic in ``seed``."""
    cases: list[Case] = []
    j = 0
    for since in VERSIONS:
        opsets = OPSETS[since]
        for i, tname in enumerate(base_dtypes_of(since)):
            def nxt(*key):
                """(rng, opset, data kind) of the next case: opsets and special data cycle."""
                nonlocal j
                j += 1
                opset = opsets[(j + j // len(opsets)) % len(opsets)]
                return case_rng(seed, since, tname, *key), opset, ("special" if j % 3 == 0 else "normal")

            if since in (1, 6):
                for r in (None, 0.2, 0.7):
                    rng, opset, dk = nxt("test", str(r))
                    attrs = {"is_test": 1} | ({} if r is None else {"ratio": r})
                    cases.append(_case(since=since, opset=opset, tname=tname, shape=_shape(rng), attrs=attrs,
                                       rng=rng, data_kind=dk))
                rng, opset, dk = nxt("train0")
                cases.append(_case(since=since, opset=opset, tname=tname, shape=_shape(rng),
                                   attrs={"ratio": 0.0} | ({"is_test": 0} if i % 2 else {}), rng=rng,
                                   data_kind=dk, mode="training"))
                rng, opset, _ = nxt("train-random")
                cases.append(_case(since=since, opset=opset, tname=tname, shape=(4, 1024), attrs={"ratio": 0.3},
                                   rng=rng, mode="training", random=True))
            elif since in (7, 10):
                for k, r in enumerate((None, 0.25, 0.9)):
                    for mask in ((False, True) if since == 10 else (False,)):
                        rng, opset, dk = nxt("inf", str(r), mask)
                        cases.append(_case(since=since, opset=opset, tname=tname, shape=_shape(rng),
                                           attrs={} if r is None else {"ratio": r}, rng=rng, mask=mask,
                                           data_kind=dk))
            else:
                rts = base_ratio_dtypes_of(since)
                # inference: training_mode absent / false (input or initializer); ratio absent or any value
                variants = [(None, None, False, False), (0.5, False, False, False), (0.0, False, True, True),
                            (0.9, None, False, False), (0.3, False, True, False), (None, False, False, True)]
                for k, (r, tm, rinit, tinit) in enumerate(variants):
                    for mask in (False, True):
                        rng, opset, dk = nxt("inf", k, mask)
                        cases.append(_case(since=since, opset=opset, tname=tname, shape=_shape(rng), attrs={},
                                           ratio=r, ratio_t=rts[(k + i) % len(rts)], ratio_init=rinit, training=tm,
                                           training_init=tinit, mask=mask, rng=rng, data_kind=dk))
                # training with ratio 0: identity, all-true mask
                for k, mask in enumerate((False, True)):
                    rng, opset, dk = nxt("train0", mask)
                    cases.append(_case(since=since, opset=opset, tname=tname, shape=_shape(rng),
                                       attrs={"seed": 7} if k else {}, ratio=0.0, ratio_t=rts[(k + i) % len(rts)],
                                       ratio_init=bool(k), training=True, training_init=not k, mask=mask, rng=rng,
                                       data_kind=dk, mode="training"))
                # training on all-zero data: output zeros whatever is dropped
                rng, opset, _ = nxt("zero")
                cases.append(_case(since=since, opset=opset, tname=tname, shape=(3, 5), attrs={}, ratio=0.5,
                                   ratio_t=rts[i % len(rts)], training=True, rng=rng, data_kind="zero",
                                   mode="training"))
                # random: ratio > 0 in training
                for k, (r, mask, attrs) in enumerate(((0.5, True, {}), (0.2, False, {"seed": 3}),
                                                      (None, True, {"seed": 11}))):
                    rng, opset, _ = nxt("random", k)
                    cases.append(_case(since=since, opset=opset, tname=tname, shape=(4, 1024), attrs=attrs,
                                       ratio=r, ratio_t=rts[(k + i) % len(rts)], training=True, mask=mask,
                                       rng=rng, mode="training", random=True))
                # errors: ratio outside [0, 1) in training
                for k, r in enumerate((1.0, -0.1)):
                    if (i + k) % 2:
                        continue
                    rng, opset, _ = nxt("err", k)
                    cases.append(_case(since=since, opset=opset, tname=tname, shape=(2, 3), attrs={}, ratio=r,
                                       ratio_t="float", training=True, rng=rng, mode="training",
                                       error="ratio-range", mask=bool(k)))
    cases += _float8_cases(seed)
    cases += _legacy_cases(seed)
    return cases


def _legacy_cases(seed: int) -> list[Case]:
    """Dropout-1's legacy ``consumed_inputs`` (an in-place hint that changes no value): per type
    one inference case with ``consumed_inputs=[0]`` (tag ``legacy``).  Generated last, so the
    cases above keep their ids."""
    out = []
    for tname in base_dtypes_of(1):
        rng = case_rng(seed, 1, tname, "consumed_inputs")
        c = _case(since=1, opset=1, tname=tname, shape=_shape(rng), attrs={"is_test": 1, "consumed_inputs": [0]},
                  rng=rng, data_kind="normal")
        c.tags["legacy"] = "consumed_inputs"
        c.label += "/consumed_inputs=[0]"
        out.append(c)
    return out


def _float8_cases(seed: int) -> list[Case]:
    """The float8 cases of version 22 (module docstring), deterministic in ``seed``.

    Each case draws from its own :func:`case_rng` stream keyed by ``"f8"``, so they do not
    disturb the cases of the main loop.
    """
    since, opsets = FLOAT8_SINCE, OPSETS[FLOAT8_SINCE]
    all_t = base_dtypes_of(since) + FLOAT8_NAMES
    cases: list[Case] = []
    j = 0

    def nxt(tname, *key):
        """(rng, opset, data kind) of the next case: opsets cycle, every other one special."""
        nonlocal j
        j += 1
        return case_rng(seed, "f8", since, tname, *key), opsets[j % len(opsets)], ("special" if j % 2 else "normal")

    for i, tname in enumerate(FLOAT8_NAMES):
        def rt(k):
            """T1 of the k-th case of this T: the eight types in turn, shifted per T."""
            return all_t[(k + 3 * i) % len(all_t)]

        variants = [(None, None, False, False), (0.5, False, False, False), (0.0, False, True, True),
                    (0.875, None, False, False), (0.375, False, True, False), (None, False, False, True)]
        for k, (r, tm, rinit, tinit) in enumerate(variants):
            for mask in (False, True):
                rng, opset, dk = nxt(tname, "inf", k, mask)
                cases.append(_case(since=since, opset=opset, tname=tname, shape=_shape(rng), attrs={}, ratio=r,
                                   ratio_t=rt(2 * k + mask), ratio_init=rinit, training=tm, training_init=tinit,
                                   mask=mask, rng=rng, data_kind=dk))
        for k, mask in enumerate((False, True)):
            rng, opset, _ = nxt(tname, "train0", mask)
            cases.append(_case(since=since, opset=opset, tname=tname, shape=_shape(rng),
                               attrs={"seed": 7} if k else {}, ratio=0.0, ratio_t=rt(5 + k), ratio_init=bool(k),
                               training=True, training_init=not k, mask=mask, rng=rng, data_kind="special",
                               mode="training"))
        rng, opset, _ = nxt(tname, "zero")
        cases.append(_case(since=since, opset=opset, tname=tname, shape=(3, 5), attrs={}, ratio=0.5,
                           ratio_t=FLOAT8_NAMES[(i + 1) % 4], training=True, rng=rng, data_kind="zero",
                           mode="training"))
        for k, (r, mask, attrs) in enumerate(((0.5, True, {}), (0.25, False, {"seed": 3}),
                                              (None, True, {"seed": 11}))):
            rng, opset, _ = nxt(tname, "random", k)
            cases.append(_case(since=since, opset=opset, tname=tname, shape=(4, 1024), attrs=attrs, ratio=r,
                               ratio_t=FLOAT8_NAMES[(i + k) % 4], training=True, mask=mask, rng=rng,
                               mode="training", random=True))
        r = (1.0, -0.25)[i % 2]
        rng, opset, _ = nxt(tname, "err")
        cases.append(_case(since=since, opset=opset, tname=tname, shape=(2, 3), attrs={}, ratio=r,
                           ratio_t=FLOAT8_NAMES[(i + 2) % 4], training=True, rng=rng, mode="training",
                           error="ratio-range", mask=bool(i % 2)))
    # every (T, T1) pair with a float8 type on either side: one inference and one random case
    n = 0
    for tname in all_t:
        for rname in all_t:
            if tname not in FLOAT8_NAMES and rname not in FLOAT8_NAMES:
                continue
            rng, opset, _ = nxt(tname, "pair-inf", rname)
            cases.append(_case(since=since, opset=opset, tname=tname, shape=_shape(rng), attrs={}, ratio=0.5,
                               ratio_t=rname, training=False, mask=True, rng=rng, data_kind="special",
                               extra={"pair": 1}))
            rng, opset, _ = nxt(tname, "pair-random", rname)
            cases.append(_case(since=since, opset=opset, tname=tname, shape=(4, 1024), attrs={},
                               ratio=FLOAT8_RANDOM_RATIOS[n % 3], ratio_t=rname, training=True, mask=True, rng=rng,
                               mode="training", random=True, extra={"pair": 1}))
            n += 1
    return cases
