"""Tests of the LayerNormalization-17 oracle, its entry (conformance/ops/layer_normalization.py)
and its tolerances.

* the oracle against an independent plain-Python formula (``math.fsum``), every
  rank 1-5 and axis, with broadcast parameters;
* the oracle against ``onnx.reference.ReferenceEvaluator`` where that one is right,
  and one test per known disagreement, asserting it still exists;
* determinism and coverage of the generated suite (read from the cases' models, shapes and
  attributes, not only from tags);
* numpy kernels run through ``KernelBackend`` on the generated suite: legitimate
  implementations (float32 with one cast, Welford, reverse order, an rsqrt a few ulp
  off, the function body cast by cast) give no ``fail``/``error``; each deliberately
  wrong kernel gives at least one ``fail``.
"""

from __future__ import annotations

import itertools
import math
from collections import Counter

import ml_dtypes
import numpy as np
import onnx
import pytest
from onnx import TensorProto

from conformance import dtypes, registry
from conformance.backends import resolve_backend
from conformance.backends.kernel import KernelBackend
from conformance.opspec import op_spec
from conformance.ops import schedule
from conformance.runner import run_cases
from conformance.tolerance import compare
from conformance.reference import layer_normalization as ref

OP = "LayerNormalization"
registry.available_ops()  # the families in registry order (the entry after the retired generator)
from conformance.ops import layer_normalization as entry_mod  # noqa: E402
# onnx.reference and the deliberately wrong kernels overflow/NaN on purpose
pytestmark = pytest.mark.filterwarnings("ignore::RuntimeWarning")
BF16 = np.dtype(ml_dtypes.bfloat16)


def _generate(seed: int):
    return registry.generate([OP], seed=seed)


@pytest.fixture(scope="module")
def suite():
    return _generate(0)


@pytest.fixture(scope="module")
def value_cases(suite):
    return [c for c in suite if c.expect_error is None]


# ============================================================================ oracle
def fsum_layer_norm(X, Scale, B, axis, epsilon):
    """Plain-Python LayerNormalization: nested index loops, ``math.fsum``, broadcasting by hand."""
    x = np.asarray(X, dtype=np.float64)
    shape, r = x.shape, x.ndim
    ax = axis + r if axis < 0 else axis
    eps = float(np.float32(epsilon))

    def param(p, idx):
        p = np.asarray(p, dtype=np.float64)
        return float(p[tuple(0 if d == 1 else idx[r - p.ndim + k] for k, d in enumerate(p.shape))])

    y = np.empty(shape)
    red = tuple(shape[:ax]) + (1,) * (r - ax)
    mean_o, inv_o = np.empty(red), np.empty(red)
    inner = list(itertools.product(*[range(d) for d in shape[ax:]]))
    for outer in itertools.product(*[range(d) for d in shape[:ax]]):
        vals = [float(x[outer + i]) for i in inner]
        mu = math.fsum(vals) / len(vals)
        var = math.fsum((v - mu) ** 2 for v in vals) / len(vals)
        inv = 1.0 / math.sqrt(var + eps)
        for i, v in zip(inner, vals):
            idx = outer + i
            y[idx] = (v - mu) * inv * param(Scale, idx) + (param(B, idx) if B is not None else 0.0)
        mean_o[outer + (0,) * (r - ax)] = mu
        inv_o[outer + (0,) * (r - ax)] = inv
    return y, mean_o, inv_o


@pytest.mark.parametrize("rank", [1, 2, 3, 4, 5])
def test_oracle_matches_fsum_formula_every_axis(rank):
    rng = np.random.default_rng(100 + rank)
    for axis in range(-rank, rank):
        shape = tuple(int(d) for d in rng.integers(1, 4, size=rank))
        ax = axis % rank
        x = rng.normal(3.0, 2.0, size=shape)
        norm = shape[ax:]
        # a broadcast Scale (size-1 dims, fewer dims) and a full B
        s_shape = tuple(1 if rng.random() < 0.4 else d for d in norm)[int(rng.integers(0, len(norm))) :]
        scale = rng.uniform(0.5, 1.5, size=s_shape)
        b = rng.normal(size=norm)
        for bias in (b, None):
            got = ref.layer_normalization(x, scale, bias, axis=axis, epsilon=1e-3)
            want = fsum_layer_norm(x, scale, bias, axis, 1e-3)
            for g, w in zip(got, want):
                assert g.shape == w.shape
                np.testing.assert_allclose(g, w, rtol=1e-12, atol=1e-12)


def test_oracle_hand_derived_properties():
    # constant row: Var = 0, InvStdDev = 1/sqrt(float32(eps)), Y = B
    x = np.array([[2.5, 2.5, 2.5, 2.5], [1.0, 2.0, 3.0, 4.0]])
    y, m, inv = ref.layer_normalization(x, np.full(4, 3.0), np.arange(4.0), axis=1, epsilon=1e-5)
    assert m.shape == inv.shape == (2, 1)
    assert m[0, 0] == 2.5 and inv[0, 0] == 1.0 / math.sqrt(float(np.float32(1e-5)))
    np.testing.assert_array_equal(y[0], np.arange(4.0))
    # [1, 2, 3, 4]: mean 2.5, population variance 1.25
    assert m[1, 0] == 2.5
    assert inv[1, 0] == pytest.approx(1.0 / math.sqrt(1.25 + float(np.float32(1e-5))), rel=1e-15)
    # normalized rows have zero mean and unit (population) variance up to epsilon
    rng = np.random.default_rng(0)
    x = rng.normal(5.0, 3.0, size=(3, 4, 5))
    y, _, _ = ref.layer_normalization(x, np.ones((4, 5)), axis=1, epsilon=0.0)
    np.testing.assert_allclose(y.reshape(3, -1).mean(axis=1), 0.0, atol=1e-14)
    np.testing.assert_allclose(y.reshape(3, -1).var(axis=1), 1.0, rtol=1e-13)
    # special values follow the formula
    x = np.array([[1.0, np.nan, 2.0], [np.inf, 1.0, 2.0], [np.inf, -np.inf, 0.0]])
    y, m, inv = ref.layer_normalization(x, np.ones(3), axis=-1)
    assert np.isnan(m[0, 0]) and m[1, 0] == np.inf and np.isnan(m[2, 0])
    assert np.isnan(inv).all() and np.isnan(y).all()
    # zero-size outer dimension: empty outputs of the right shapes
    y, m, inv = ref.layer_normalization(np.zeros((2, 0, 3)), np.ones(3), axis=2)
    assert y.shape == (2, 0, 3) and m.shape == inv.shape == (2, 0, 1)


def test_oracle_rejects_invalid_and_undefined():
    x = np.zeros((2, 3, 4))
    for axis in (3, -4):
        with pytest.raises(ValueError, match="out of range"):
            ref.layer_normalization(x, np.ones(4), axis=axis)
    for stash in (0, 7, 10, 11):
        with pytest.raises(ValueError, match="stash_type"):
            ref.layer_normalization(x, np.ones(4), stash_type=stash)
    for s in ((5,), (3, 5), (1, 1, 3, 4)):
        with pytest.raises(ValueError, match="not broadcastable"):
            ref.layer_normalization(x, np.ones(s), axis=1)
    with pytest.raises(ValueError, match="not broadcastable"):
        ref.layer_normalization(x, np.ones(4), np.ones(5), axis=-1)
    with pytest.raises(ValueError, match="contested"):
        ref.layer_normalization(x, np.ones((2, 3, 4)), axis=1)
    with pytest.raises(ValueError, match="empty"):
        ref.layer_normalization(np.zeros((2, 0)), np.ones(0), axis=1)
    # accepted: extra leading ones within X's rank, rank-0 and size-1 parameters
    for s in ((1, 3, 4), (), (1,), (3, 1), (4,)):
        ref.layer_normalization(x, np.ones(s), np.ones(s), axis=1)


def test_function_body_is_one_pass_and_not_a_legitimate_variant():
    """The function body onnx attaches computes Var = E[x^2] - E[x]^2 (check it stays so),
    while the text is two-pass; on large-offset data the one-pass form loses the variance."""
    schema = onnx.defs.get_schema(OP, 17)
    node = onnx.helper.make_node(OP, ["X", "Scale", "B"], ["Y", "Mean", "InvStdDev"], axis=-1)
    tp = onnx.helper.make_tensor_type_proto(TensorProto.FLOAT, [2, 8]).SerializeToString()
    fn = onnx.FunctionProto()
    fn.ParseFromString(schema.get_context_dependent_function_with_opset_version(17, node.SerializeToString(), [tp] * 3))
    ops = [n.op_type for n in fn.node]
    outs = {n.output[0]: (n.op_type, list(n.input)) for n in fn.node}
    assert outs["Var"] == ("Sub", ["MeanOfSquare", "SquareOfMean"])
    # and it flattens Scale to [1, size]: it cannot broadcast a Scale of shape [4] over a
    # normalized shape [3, 4], which the text allows (runtimes that inline the body, e.g.
    # onnxruntime for stash_type=16, reject such valid models at shape inference)
    flat = next(n for n in fn.node if n.output[0] == "Scale2D")
    assert flat.op_type == "Flatten" and onnx.helper.get_attribute_value(flat.attribute[0]) == 0
    assert "D = Sub(X, Mean)" in schema.doc and "Var = ReduceMean<axes=normalized_axes>(DD)" in schema.doc
    assert ops.count("ReduceMean") == 2
    rng = np.random.default_rng(1)
    x = (1.0e4 + rng.normal(size=(3, 16))).astype(np.float32)
    s = np.ones(16, np.float32)
    y64, _, inv64 = ref.layer_normalization(x, s)
    y1, _, inv1 = ref.onepass_variant(x, s)
    assert not np.allclose(inv1, inv64, rtol=1e-2, equal_nan=False)  # garbage or NaN
    for name, (yv, _, iv) in ref.variant_outputs(x, s).items():  # every legitimate variant is close
        np.testing.assert_allclose(iv, inv64, rtol=1e-3, err_msg=name)
        np.testing.assert_allclose(yv, y64, atol=1e-2, err_msg=name)


# ============================================================================ onnx.reference
def _ref_eval(case, ds):
    from onnx.reference import ReferenceEvaluator

    sess = ReferenceEvaluator(case.model)
    return sess.run([o.name for o in case.present_outputs], ds.inputs)


def test_oracle_agrees_with_onnx_reference_for_float_stash1(value_cases):
    """float X with stash_type=1: onnx.reference computes two-pass in float32 like the spec."""
    cases = [c for c in value_cases if c.tags["dtype"] == "float" and c.tags["stash_type"] == 1]
    assert len(cases) > 80
    results = run_cases(cases, resolve_backend("onnx-reference"))
    bad = [(r.id, r.message[:200]) for r in results if r.outcome != "pass"]
    assert not bad, bad


def test_disagreement_onnx_reference_statistics_in_T_not_U(value_cases):
    """onnx.reference returns Mean/InvStdDev in T (float16/bfloat16/double); the spec says U
    (float for stash_type=1).  We are right: the output type constraint is U, chosen by stash_type."""
    for dt, np_dt in (("float16", np.float16), ("bfloat16", BF16), ("double", np.float64)):
        c = next(
            c for c in value_cases if c.tags["dtype"] == dt and c.tags["stash_type"] == 1
            and c.tags["outputs"] == "Y,Mean,InvStdDev" and c.tags["numerics"] == "normal"
        )
        _, mean, inv = _ref_eval(c, c.datasets[0])
        assert mean.dtype == np_dt and inv.dtype == np_dt
        assert c.datasets[0].outputs["Mean"].dtype == np.float32


def test_disagreement_onnx_reference_float16_stats_in_float16(value_cases):
    """onnx.reference computes float16 statistics in float16: the squares of near-limit values
    overflow (variance inf, so Y collapses to B, or NaN), where the float32 statistics the spec
    mandates (stash_type=1) are finite and accurate.  We are right: stash_type=1 means stage
    one in float32."""
    cases = [
        c for c in value_cases if c.tags["dtype"] == "float16" and c.tags["numerics"] == "near-limits"
        and c.tags["stash_type"] == 1
    ]
    wrong_y = 0
    for c in cases:
        ds = c.datasets[0]
        y = _ref_eval(c, ds)[0]
        tol = next(o.tolerance for o in c.outputs if o.name == "Y")
        wrong_y += not compare("Y", y, ds.outputs["Y"], tol).passed
    assert cases and wrong_y == len(cases)


def test_disagreement_onnx_reference_stash16_not_implemented(value_cases):
    c = next(c for c in value_cases if c.tags["stash_type"] == 16)
    with pytest.raises(NotImplementedError, match="stash_type"):
        _ref_eval(c, c.datasets[0])


def test_disagreement_onnx_reference_and_checker_accept_axis_equal_rank(suite):
    """axis = r is outside [-r, r): onnx's checker (shape inference) and onnx.reference both
    accept it (the reference then returns statistics of X's full shape).  We are right: the
    attribute text gives the allowed range [-r, r)."""
    c = next(c for c in suite if c.tags.get("error") == "axis-range"
             and c.attributes["axis"] == len(c.inputs[0].shape) >= 2)
    onnx.checker.check_model(c.model, full_check=True)  # no exception: the finding
    outs = _ref_eval(c, c.datasets[0])
    assert outs[0].shape == c.datasets[0].inputs["X"].shape


def test_disagreement_onnx_reference_accepts_params_of_higher_rank(suite):
    """Scale of shape [1, 1, 3, 4] for X [2, 3, 4] is not unidirectionally broadcastable to X;
    onnx.reference broadcasts it anyway and returns Y of rank 4."""
    c = next(c for c in suite if c.tags.get("error") == "scale-shape" and "more dims" in c.expect_error)
    y = _ref_eval(c, c.datasets[0])[0]
    assert y.ndim == c.datasets[0].inputs["X"].ndim + 1


# ============================================================================ suite
DTYPES = ("float16", "bfloat16", "float", "double")
STASH = (1, 16)
PATTERNS = ("Y", "Y,Mean", "Y,InvStdDev", "Y,Mean,InvStdDev")
KINDS = ("full", "fewer-dims", "size1-dims", "leading-ones", "scalar")


def _x(c):
    return c.inputs[0]


def _node_axis(c) -> int:
    """The axis the node says (the default -1 when omitted)."""
    return int(c.attributes.get("axis", -1))


def _stash(c) -> int:
    return int(c.attributes.get("stash_type", 1))


def _norm(c) -> tuple[int, ...]:
    shape = _x(c).shape
    return tuple(shape[_node_axis(c) % len(shape):])


def _kind(c, name) -> str:
    """The kind of a parameter's shape, computed here from the shapes (not from the entry)."""
    p = next(i for i in c.inputs if i.name == name)
    if not p.present:
        return "absent"
    shape, norm = tuple(p.shape), _norm(c)
    if shape in ((), (1,)) and norm != (1,):
        return "scalar"
    if shape == norm:
        return "full"
    if len(shape) > len(norm):
        assert set(shape[: len(shape) - len(norm)]) == {1} and shape[len(shape) - len(norm):] == norm, (c.id, shape)
        return "leading-ones"
    if len(shape) < len(norm):
        assert shape == norm[len(norm) - len(shape):], (c.id, shape)
        return "fewer-dims"
    assert all(d in (1, n) for d, n in zip(shape, norm)), (c.id, shape)
    return "size1-dims"


def test_generation_draws_from_its_seed(suite):
    """Another seed, other values (the same seed's same bytes: test_ops_table, every entry)."""
    other = _generate(1)
    assert len(other) == len(suite)
    # value cases draw from the seed; the engine's error cases are fixed models (no seed)
    values = {c.content_hash for c in suite if c.expect_error is None}
    assert values.isdisjoint({c.content_hash for c in other if c.expect_error is None})


def test_coverage(suite, value_cases):
    assert len(suite) >= 548  # the retired generator's count
    # every (T, U via stash_type, rank, axis, outputs) tuple, read from the models
    full = {(c.tags["dtype"], _stash(c), len(_x(c).shape), _node_axis(c), ",".join(o.name for o in c.present_outputs))
            for c in value_cases if "axis" in c.attributes}
    want = {(d, st, r, a, p) for d in DTYPES for st in STASH for r in range(1, 6) for a in range(-r, r)
            for p in PATTERNS}
    assert want <= full, sorted(want - full)[:5]
    # per (T, U): every Scale/B shape kind, B present and absent, both parameter forms, every
    # epsilon state, every numerics class, the axis omitted, zero-size, long rows, 2 data sets
    eps_kinds = {float(np.float32(v)): k for v, k in ((1e-5, "explicit-default"), (1e-12, "tiny"), (0.0, "zero"),
                                                     (0.5, "large"))}

    def eps_kind(c):
        return "default" if "epsilon" not in c.attributes else eps_kinds[float(np.float32(c.attributes["epsilon"]))]

    pairs = {
        "scale": (lambda c: _kind(c, "Scale"), KINDS),
        "bias": (lambda c: _kind(c, "B"), KINDS + ("absent",)),
        "inputs_as": (lambda c: "initializers" if c.inputs[1].initializer else "inputs", ("inputs", "initializers")),
        "epsilon": (eps_kind, ("default",) + tuple(eps_kinds.values())),
        "numerics": (lambda c: c.tags["numerics"], ("normal", "wide", "special", "large-offset", "constant-rows",
                                                    "tiny-variance", "near-limits")),
        "outputs": (lambda c: ",".join(o.name for o in c.present_outputs), PATTERNS),
        "axis_sign": (lambda c: "omitted" if "axis" not in c.attributes else "neg" if c.attributes["axis"] < 0
                      else "pos", ("neg", "pos", "omitted")),
        "extent": (lambda c: "zero-size" if 0 in _x(c).shape else "long" if np.prod(_norm(c)) >= 4096 else "short",
                   ("zero-size", "long", "short")),
        "datasets": (lambda c: len(c.datasets), (1, 2)),
    }
    for key, (fn, values) in pairs.items():
        got = {(c.tags["dtype"], _stash(c), fn(c)) for c in value_cases}
        missing = {(d, st, v) for d in DTYPES for st in STASH for v in values} - got
        assert not missing, (key, sorted(missing))
    # opsets: the schedule's and the function body's (onnxruntime expands the body at 18)
    spec = op_spec(OP)
    opsets = Counter(c.opset for c in value_cases)
    assert set(opsets) == set(schedule.opsets(spec, 17)) | set(schedule.body_opsets(spec, 17)), opsets
    assert opsets[schedule.LATEST_OPSET] >= 3
    # long rows really are long; every middle-omitted pattern is written with "" in the node;
    # every normalized extent has at least 2 elements and zero sizes only in outer dims
    for c in value_cases:
        n = int(np.prod(_norm(c)))
        assert n >= 2, c.id
        if c.tags["shape"].startswith("long-rows"):
            assert n >= 4096
        if c.tags["outputs"] == "Y,InvStdDev":
            assert list(c.model.graph.node[0].output) == ["Y", "", "InvStdDev"]
    errors = Counter(c.tags["error"] for c in suite if c.expect_error)
    assert errors == {"axis-range": 10, "scale-shape": 4, "bias-shape": 3, "stash-type": 4}, errors
    axis_errs = {(c.attributes["axis"] >= 0) for c in suite if c.tags.get("error") == "axis-range"}
    assert axis_errs == {True, False}
    # the stash-type errors request the statistics, declared with stash_type's (invalid) type
    for c in suite:
        if c.tags.get("error") == "stash-type":
            stats = [o for o in c.outputs if o.present and o.name != "Y"]
            assert stats and all(o.elem_type == _stash(c) for o in stats), c.id
    # every value case's expected outputs have the spec's types: Y in T, statistics in U, and
    # U = stash_type (the attribute the combination fixes)
    for c in value_cases:
        t = dtypes.np_dtype(dtypes.elem_type(c.tags["dtype"]))
        u = np.float32 if _stash(c) == 1 else BF16
        assert c.tags["stash_type"] == _stash(c)
        for ds in c.datasets:
            assert ds.outputs["Y"].dtype == t
            for o in ("Mean", "InvStdDev"):
                if o in ds.outputs:
                    assert ds.outputs[o].dtype == u


def test_parameter_shapes_follow_the_text_and_tags_agree(value_cases):
    """Every Scale/B shape is unidirectionally broadcastable inside X.shape[axis:] (the
    reference's check, which also rejects the contested shapes), and the entry's shape-kind
    tags agree with the kinds computed here."""
    for c in value_cases:
        x, axis = _x(c).shape, _node_axis(c)
        for name, tag in (("Scale", "scale_shape"), ("B", "bias_shape")):
            p = next(i for i in c.inputs if i.name == name)
            if p.present:
                ref.check_param_shape(name, p.shape, x, axis)
            assert c.tags[tag] == _kind(c, name), (c.id, name)
            assert entry_mod.shape_kind(p.shape, x, axis) == _kind(c, name) if p.present else True


def test_epsilon_zero_only_with_positive_variance(value_cases):
    """Epsilon 0 is generated only where every finite row has a clearly positive variance in U
    (a zero variance with epsilon 0 divides by zero: not a value case), never with constant
    rows or tiny variance."""
    zero = [c for c in value_cases if c.attributes.get("epsilon") == 0.0]
    assert len(zero) >= 40
    assert {c.tags["numerics"] for c in zero}.isdisjoint({"constant-rows", "tiny-variance"})
    for c in zero:
        u = dtypes.np_dtype(dtypes.elem_type("float" if _stash(c) == 1 else "bfloat16"))
        n = int(np.prod(_norm(c)))
        for ds in c.datasets:
            x = ds.inputs["X"].astype(np.float64).reshape(-1, n)
            x = x[np.isfinite(x).all(axis=1)]
            r = _r(x, u)
            assert np.all(np.std(r, axis=1) > dtypes.eps(dtypes.elem_type(u)) * np.max(np.abs(r), axis=1)), c.id


def test_constant_rows_are_exact_where_the_extent_is_a_power_of_two(value_cases):
    """Constant rows of 2^k elements hold constants every summation order averages exactly:
    their Y is B exactly and their tolerance grants no propagated mean rounding."""
    cases = [c for c in value_cases if c.tags["numerics"] == "constant-rows" and c.tags["shape"].startswith("pow2")]
    assert cases
    checked = 0
    for c in cases:
        n = int(np.prod(_norm(c)))
        x = c.datasets[0].inputs["X"].astype(np.float64).reshape(-1, n)
        const = np.all(x == x[:, :1], axis=1)
        assert const.any() and (~const).any(), c.id
        assert set(x[const, 0]) <= set(entry_mod.CONSTANTS)
        if "Mean" in c.datasets[0].outputs:
            m = c.datasets[0].outputs["Mean"].astype(np.float64).reshape(-1)
            np.testing.assert_array_equal(m[const], x[const, 0])
            checked += 1
    assert checked


# ============================================================================ kernels
def _attrs(attributes):
    return int(attributes.get("axis", -1)), float(attributes.get("epsilon", 1e-5)), int(attributes.get("stash_type", 1))


def _validate(x, scale, b, axis, stash):
    r = x.ndim
    if not -r <= axis < r:
        raise ValueError("axis out of range")
    if stash not in (1, 16):
        raise ValueError("bad stash_type")
    ax = axis % r
    for p in (scale, b):
        if p is None:
            continue
        if p.ndim > r:
            raise ValueError("parameter rank")
        for k, d in enumerate(p.shape):
            xd = x.shape[r - p.ndim + k]
            if d not in (1, xd) or (r - p.ndim + k < ax and d != 1):
                raise ValueError("parameter shape")
    return ax


def _u(stash):
    return np.dtype(np.float32) if stash == 1 else BF16


def _r(a, dt):
    """Round to dt, back to float64 (one correctly rounded operation)."""
    a = np.asarray(a, dtype=np.float64)
    if dt == BF16:
        return a.astype(np.float32).astype(BF16).astype(np.float64)
    return a.astype(dt).astype(np.float64)


def make_kernel(*, flaw: str | None = None, algo: str = "pairwise"):
    """A numpy LayerNormalization kernel: stage one in float32 (two-pass unless ``algo``
    says otherwise), stage two in float32 (double for double X) with one cast, plus an
    optional ``flaw``."""

    def kernel(inputs, attributes, outputs, opset):
        x, scale, b = inputs["X"], inputs["Scale"], inputs.get("B")
        axis, eps, stash = _attrs(attributes)
        ax = _validate(x, scale, b, axis, stash)
        t = x.dtype
        u = t if flaw == "stats-in-T" else np.dtype(np.float32) if flaw == "stats-always-float" else _u(stash)
        if flaw == "axis-ignored":
            ax = x.ndim - 1
        if flaw == "ignore-epsilon":
            eps = 0.0
        rows, n = int(np.prod(x.shape[:ax])), int(np.prod(x.shape[ax:]))
        w = np.float64 if t == np.float64 else np.float32  # stage two precision
        with np.errstate(all="ignore"):
            if flaw == "onepass-in-T":
                xc = x.reshape(rows, n)
                if t == BF16:  # bf16 arithmetic, each op rounded
                    xf = xc.astype(np.float64)
                    mean = _r(np.cumsum(xf, axis=1)[:, -1:] / n, BF16)
                    sq = _r(np.cumsum(_r(xf * xf, BF16), axis=1)[:, -1:] / n, BF16)
                    var = _r(sq - _r(mean * mean, BF16), BF16)
                    d = _r(xf - mean, BF16)
                else:
                    mean = np.cumsum(xc, axis=1)[:, -1:] / np.asarray(n, t)
                    var = np.cumsum(xc * xc, axis=1)[:, -1:] / np.asarray(n, t) - mean * mean
                    d = xc - mean
                mean, var, d = (np.asarray(a, np.float32) for a in (mean, var, d))
            elif flaw == "float16-accumulation" and t == np.float16:
                xh = x.reshape(rows, n)
                mean = (np.cumsum(xh, axis=1)[:, -1:] / np.float16(n)).astype(np.float16)
                d = xh - mean
                var = (np.cumsum(d * d, axis=1)[:, -1:] / np.float16(n)).astype(np.float16)
                mean, var, d = mean.astype(np.float32), var.astype(np.float32), d.astype(np.float32)
            else:
                xc = x.reshape(rows, n).astype(np.float32)
                if algo == "welford":
                    mean = np.zeros((rows, 1), np.float32)
                    m2 = np.zeros((rows, 1), np.float32)
                    for k in range(n):
                        xk = xc[:, k : k + 1]
                        delta = xk - mean
                        mean = mean + delta / np.float32(k + 1)
                        m2 = m2 + delta * (xk - mean)
                    d = xc - mean
                    var = m2 / np.float32(n)
                else:
                    if algo == "reverse":
                        acc = lambda a: np.cumsum(a[:, ::-1], axis=1)[:, -1:]  # noqa: E731
                    else:
                        acc = lambda a: np.sum(a, axis=1, keepdims=True)  # noqa: E731
                    mean = acc(xc) / np.float32(n)
                    d = xc - mean
                    var = acc(d * d) / np.float32(n - 1 if flaw == "unbiased" else n)
            inv = np.float32(1.0) / np.sqrt(var + np.float32(eps))
            if algo == "rsqrt-off":
                inv = inv * np.float32(1.0 + 4 * np.finfo(np.float32).eps)
            normalized = (d * inv).astype(w).reshape(x.shape)
            if flaw == "scale-cycled":  # Scale flattened and cycled over the normalized elements
                scale = np.resize(scale.ravel(), int(np.prod(x.shape[ax:]))).reshape(x.shape[ax:])
            y = normalized * scale.astype(w)
            if b is not None and flaw != "bias-ignored":
                y = y + b.astype(w)
            y = y.astype(t)
        shape = tuple(x.shape[:ax]) + (1,) * (x.ndim - ax)
        if flaw == "axis-ignored":
            shape = tuple(x.shape[:-1]) + (1,)
        stat_inv = np.sqrt(var + np.float32(eps)) if flaw == "std-not-inv" else inv
        res = {"Y": y, "Mean": mean.reshape(shape).astype(u), "InvStdDev": stat_inv.reshape(shape).astype(u)}
        if flaw == "zero-placeholders":
            res["Mean"] = np.zeros(shape, u)
            res["InvStdDev"] = np.zeros(shape, u)
        if flaw == "positional-outputs":  # fills the requested names in order: Y, Mean, InvStdDev
            order = [res["Y"], res["Mean"], res["InvStdDev"]]
            return {name: order[i] for i, name in enumerate(outputs)}
        return {o: res[o] for o in outputs}

    return kernel


def function_body_kernel(inputs, attributes, outputs, opset):
    """The spec's stage one in U cast by cast (text equations, two-pass; ReduceMean accumulating
    in float32 and rounding its result to U; Normalized = Div(D, StdDev)), then Cast to T and
    Mul/Add in T."""
    x, scale, b = inputs["X"], inputs["Scale"], inputs.get("B")
    axis, eps, stash = _attrs(attributes)
    ax = _validate(x, scale, b, axis, stash)
    u, t = _u(stash), x.dtype
    rows, n = int(np.prod(x.shape[:ax])), int(np.prod(x.shape[ax:]))
    with np.errstate(all="ignore"):
        xu = _r(x.reshape(rows, n).astype(np.float64), u)

        def reduce_mean(a):  # float32 accumulation, result rounded to U
            return _r(_r(np.sum(a.astype(np.float32), axis=1, keepdims=True), np.float32) / n, u)

        mean = reduce_mean(xu)
        d = _r(xu - mean, u)
        var = reduce_mean(_r(d * d, u))
        std = _r(np.sqrt(_r(var + _r(np.float32(eps), u), u)), u)
        inv = _r(1.0 / std, u)
        normalized_t = _r(_r(d / std, u), t).reshape(x.shape)
        y = _r(normalized_t * scale.astype(np.float64), t)
        if b is not None:
            y = _r(y + b.astype(np.float64), t)
    shape = tuple(x.shape[:ax]) + (1,) * (x.ndim - ax)
    res = {"Y": y.astype(t), "Mean": mean.reshape(shape).astype(u), "InvStdDev": inv.reshape(shape).astype(u)}
    return {o: res[o] for o in outputs}


def _ulp_off(a, dt, sign):
    """``a`` rounded to dt (float32 or bfloat16) and moved one ulp of dt in direction ``sign``."""
    r = _r(a, dt)
    bits = 8 if dt == BF16 else 24
    with np.errstate(divide="ignore"):
        e = np.floor(np.log2(np.abs(np.where(r == 0, 1.0, r))))
    step = np.where(r == 0, 2.0 ** -149, 2.0 ** (e - (bits - 1)))
    return _r(r + sign * step, dt)


def stats_off_kernel(sm, sv):
    """Mean and variance one ulp of U off (a mean every order computes exactly -- a constant row
    of 2^k elements -- is kept), everything else exact, one rounding per output."""
    def kernel(inputs, attributes, outputs, opset):
        x, scale, b = inputs["X"], inputs["Scale"], inputs.get("B")
        axis, eps, stash = _attrs(attributes)
        ax = _validate(x, scale, b, axis, stash)
        u = _u(stash)
        rows, n = int(np.prod(x.shape[:ax])), int(np.prod(x.shape[ax:]))
        xr = _r(x.reshape(rows, n).astype(np.float64), u)  # XU = Cast(X, U)
        with np.errstate(all="ignore"):
            m = xr.mean(axis=1, keepdims=True)
            exact = np.all(xr == xr[:, :1], axis=1, keepdims=True) & (n & (n - 1) == 0)
            m = np.where(exact, m, _ulp_off(m, u, sm))
            d = xr - m
            v = np.maximum(_ulp_off((d * d).mean(axis=1, keepdims=True), u, sv), 0.0)
            inv = 1.0 / np.sqrt(v + float(np.float32(eps)))
            y = (d * inv).reshape(x.shape) * scale.astype(np.float64)
            if b is not None:
                y = y + b.astype(np.float64)
        shape = tuple(x.shape[:ax]) + (1,) * (x.ndim - ax)
        res = {"Y": _r(y, x.dtype).astype(x.dtype), "Mean": _r(m, u).reshape(shape).astype(u),
               "InvStdDev": _r(inv, u).reshape(shape).astype(u)}
        return {o: res[o] for o in outputs}
    return kernel


def folded_kernel(inputs, attributes, outputs, opset):
    """The fold in U: a = Scale * InvStdDev, c = B - Mean * a, Y = X * a + c, one cast to T."""
    x, scale, b = inputs["X"], inputs["Scale"], inputs.get("B")
    axis, eps, stash = _attrs(attributes)
    ax = _validate(x, scale, b, axis, stash)
    u, t = _u(stash), x.dtype
    rows, n = int(np.prod(x.shape[:ax])), int(np.prod(x.shape[ax:]))
    with np.errstate(all="ignore"):
        xu = _r(x.reshape(rows, n).astype(np.float64), u)
        mean = _r(_r(np.sum(xu.astype(np.float32), axis=1, keepdims=True), np.float32) / n, u)
        d = _r(xu - mean, u)
        var = _r(_r(np.sum(_r(d * d, u).astype(np.float32), axis=1, keepdims=True), np.float32) / n, u)
        inv = _r(1.0 / np.sqrt(_r(var + _r(np.float32(eps), u), u)), u)
        sr = np.broadcast_to(scale.astype(np.float64), x.shape).reshape(rows, n)
        br = np.zeros((rows, n)) if b is None else np.broadcast_to(b.astype(np.float64), x.shape).reshape(rows, n)
        a = _r(_r(sr, u) * inv, u)
        c = _r(_r(br, u) - _r(mean * a, u), u)
        y = _r(_r(_r(xu * a, u) + c, u), t).reshape(x.shape)
    shape = tuple(x.shape[:ax]) + (1,) * (x.ndim - ax)
    res = {"Y": y.astype(t), "Mean": mean.reshape(shape).astype(u), "InvStdDev": inv.reshape(shape).astype(u)}
    return {o: res[o] for o in outputs}


LEGIT = {
    "stats-ulp-off-up": stats_off_kernel(1, 1),
    "stats-ulp-off-down": stats_off_kernel(-1, -1),
    "stats-ulp-off-mixed": stats_off_kernel(1, -1),
    "folded-in-U": folded_kernel,
    "float32-onecast": make_kernel(),
    "welford": make_kernel(algo="welford"),
    "reverse-order": make_kernel(algo="reverse"),
    "rsqrt-4ulp-off": make_kernel(algo="rsqrt-off"),
    "function-body-castbycast": function_body_kernel,
}
WRONG = (
    "ignore-epsilon",
    "unbiased",
    "axis-ignored",
    "stats-in-T",
    "zero-placeholders",
    "positional-outputs",
    "float16-accumulation",
    "bias-ignored",
    "std-not-inv",
    "onepass-in-T",
    "stats-always-float",  # Mean/InvStdDev as float whatever stash_type says (U = bfloat16)
    "scale-cycled",  # a Scale of shape [M, 1] over [M, K] cycled instead of broadcast
)


@pytest.mark.parametrize("name", sorted(LEGIT))
def test_legitimate_kernel_passes_everything(name, suite):
    results = run_cases(suite, KernelBackend({OP: LEGIT[name]}, name=name))
    bad = [(r.id, r.outcome, r.message[:300]) for r in results if r.outcome != "pass"]
    assert not bad, bad[:5]


@pytest.mark.parametrize("flaw", WRONG)
def test_wrong_kernel_is_caught(flaw, value_cases):
    # no onnx.checker needed here: only value cases, and we count fails
    results = run_cases(value_cases, KernelBackend({OP: make_kernel(flaw=flaw)}, name=flaw, check=False))
    outcomes = Counter(r.outcome for r in results)
    assert outcomes["fail"] >= 1, outcomes


def test_tolerances_are_tight_enough_to_matter(value_cases):
    """For float X with normal, well-conditioned data the derived Y tolerance stays within a few
    hundred float32 ulps of max|Y| (spread of legitimate variants times the safety factor, not a
    global atol).

    Only cases whose every row has a standard deviation of at least 1/8 of its largest |x| are
    checked: a normal row of two nearly equal values (n = 2) is a tiny-variance row by
    chance, where every float32 kernel's Y legitimately carries the mean's rounding times
    1 / std (the propagated term) and the variants spread accordingly."""
    eps32 = float(np.finfo(np.float32).eps)
    checked = 0
    for c in value_cases:
        shape, ax = c.inputs[0].shape, c.attributes.get("axis", -1) % len(c.inputs[0].shape)
        if c.tags["dtype"] == "float" and c.tags["numerics"] == "normal" and c.tags["stash_type"] == 1 \
                and int(np.prod(shape[ax:])) >= 2 and 0 not in shape:
            x = c.datasets[0].inputs["X"].astype(np.float64).reshape(int(np.prod(shape[:ax])), -1)
            if np.any(x.std(axis=1) < np.max(np.abs(x), axis=1) / 8):
                continue
            checked += 1
            y = c.datasets[0].outputs["Y"].astype(np.float64)
            tol = next(o.tolerance for o in c.outputs if o.name == "Y")
            assert tol.atol <= 256 * eps32 * max(1.0, float(np.max(np.abs(y)))), (c.id, tol)
            # and the expectation itself passes its own check
            assert compare("Y", c.datasets[0].outputs["Y"], c.datasets[0].outputs["Y"], tol).passed
    assert checked >= 20, checked
