"""Compatibility with the releases the project supports: the scoring of refusals against the real
messages of onnxruntime 1.15 to 1.32, the supported range (conformance.compat), and onnx's node
tests as onnx < 1.23 hands them over (a model directory, 0-d tensors)."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

from conformance import compat
from conformance.backends.base import REFUSALS, Backend, Unsupported, match_refusal
from conformance.case import Case, DataSet, Input, Output
from conformance.onnx_node import as_tensor, case_from_test, load_test_dir
from conformance.reports.html import top_problems
from conformance.runner import run_cases

ROOT = Path(__file__).resolve().parents[1]

#: Real onnxruntime messages (release, kind the table must give, the exception as the runner sees
#: it: ``"ExceptionType: message"``), collected by running one bundle (onnx 1.23.2, seed 0, every
#: operator) on each release 1.15.1 ... 1.32.0 (docs/compat.md).  ``None``: a real rejection or
#: failure, no refusal.  Where a message has more lines (one "Version mismatch" per kernel),
#: its first line is kept and " ..." marks the cut.
ORT_MESSAGES = [
    ('1.15.1', 'version',
     'InvalidArgument: [ONNXRuntimeError] : 2 : INVALID_ARGUMENT : Failed to load model with error: /o'
     'nnxruntime_src/onnxruntime/core/graph/model.cc:149 onnxruntime::Model::Model(onnx::ModelProto&&,'
     ' const PathString&, const IOnnxRuntimeOpSchemaRegistryList*, const onnxruntime::logging::Logger&'
     ', const onnxruntime::ModelOptions&) Unsupported model IR version: 10, max supported IR version: '
     '9'),
    ('1.15.1', 'version',
     'InvalidArgument: [ONNXRuntimeError] : 2 : INVALID_ARGUMENT : Failed to load model with error: /o'
     'nnxruntime_src/onnxruntime/core/graph/model_load_utils.h:46 void onnxruntime::model_load_utils::'
     'ValidateOpsetForDomain(const std::unordered_map<std::basic_string<char>, int>&, const onnxruntim'
     'e::logging::Logger&, bool, const string&, int) ONNX Runtime only *guarantees* support for models'
     ' stamped with official released onnx opset versions. Opset 20 is under development and support f'
     'or this is limited. The operator schemas and or other functionality may change before next ONNX '
     'release and in this case ONNX Runtime will not guarantee backward compatibility. Current officia'
     'l support for domain ai.onnx is till opset 19.'),
    ('1.17.3', 'version',
     'InvalidArgument: [ONNXRuntimeError] : 2 : INVALID_ARGUMENT : Failed to load model with error: /o'
     'nnxruntime_src/onnxruntime/core/graph/model.cc:179 onnxruntime::Model::Model(onnx::ModelProto&&,'
     ' const onnxruntime::PathString&, const onnxruntime::IOnnxRuntimeOpSchemaRegistryList*, const onn'
     'xruntime::logging::Logger&, const onnxruntime::ModelOptions&) Unsupported model IR version: 13, '
     'max supported IR version: 9'),
    ('1.18.1', 'version',
     'InvalidArgument: [ONNXRuntimeError] : 2 : INVALID_ARGUMENT : Failed to load model with error: /o'
     'nnxruntime_src/onnxruntime/core/graph/model_load_utils.h:46 void onnxruntime::model_load_utils::'
     'ValidateOpsetForDomain(const std::unordered_map<std::__cxx11::basic_string<char>, int>&, const o'
     'nnxruntime::logging::Logger&, bool, const std::string&, int) ONNX Runtime only *guarantees* supp'
     'ort for models stamped with official released onnx opset versions. Opset 22 is under development'
     ' and support for this is limited. The operator schemas and or other functionality may change bef'
     'ore next ONNX release and in this case ONNX Runtime will not guarantee backward compatibility. C'
     'urrent official support for domain ai.onnx is till opset 21.'),
    ('1.21.1', 'version',
     'InvalidArgument: [ONNXRuntimeError] : 2 : INVALID_ARGUMENT : Failed to load model with error: /o'
     'nnxruntime_src/onnxruntime/core/graph/model.cc:180 onnxruntime::Model::Model(onnx::ModelProto&&,'
     ' const onnxruntime::PathString&, const onnxruntime::IOnnxRuntimeOpSchemaRegistryList*, const onn'
     'xruntime::logging::Logger&, const onnxruntime::ModelOptions&) Unsupported model IR version: 13, '
     'max supported IR version: 10'),
    ('1.22.1', 'version',
     'Fail: [ONNXRuntimeError] : 1 : FAIL : /onnxruntime_src/onnxruntime/core/graph/model.cc:181 onnxr'
     'untime::Model::Model(onnx::ModelProto&&, const onnxruntime::PathString&, const onnxruntime::IOnn'
     'xRuntimeOpSchemaRegistryList*, const onnxruntime::logging::Logger&, const onnxruntime::ModelOpti'
     'ons&) Unsupported model IR version: 13, max supported IR version: 10'),
    ('1.24.4', 'version',
     'Fail: [ONNXRuntimeError] : 1 : FAIL : /onnxruntime_src/onnxruntime/core/graph/model_load_utils.h'
     ':46 void onnxruntime::model_load_utils::ValidateOpsetForDomain(const std::unordered_map<std::__c'
     'xx11::basic_string<char>, int>&, const onnxruntime::logging::Logger&, bool, const std::string&, '
     'int) ONNX Runtime only *guarantees* support for models stamped with official released onnx opset'
     ' versions. Opset 26 is under development and support for this is limited. The operator schemas a'
     'nd or other functionality may change before next ONNX release and in this case ONNX Runtime will'
     ' not guarantee backward compatibility. Current official support for domain ai.onnx is till opset'
     ' 25.'),
    ('1.24.4', 'version',
     'Fail: [ONNXRuntimeError] : 1 : FAIL : /onnxruntime_src/onnxruntime/core/graph/model.cc:181 onnxr'
     'untime::Model::Model(onnx::ModelProto&&, const onnxruntime::PathString&, const onnxruntime::IOnn'
     'xRuntimeOpSchemaRegistryList*, const onnxruntime::logging::Logger&, const onnxruntime::ModelOpti'
     'ons&) Unsupported model IR version: 14, max supported IR version: 13'),
    ('1.15.1', 'type',
     'Fail: [ONNXRuntimeError] : 1 : FAIL : Exception during loading: MLDataType for: tensor(complex64'
     ') is not currently registered or supported'),
    ('1.32.0', 'type',
     'Fail: [ONNXRuntimeError] : 1 : FAIL : Exception during loading: MLDataType for: tensor(complex64'
     ') is not currently registered or supported'),
    ('1.15.1', 'kernel',
     'NotImplemented: [ONNXRuntimeError] : 9 : NOT_IMPLEMENTED : Could not find an implementation for '
     "Abs(1) node with name 'Abs'"),
    ('1.32.0', 'kernel',
     'NotImplemented: [ONNXRuntimeError] : 9 : NOT_IMPLEMENTED : Could not find an implementation for '
     "Abs(1) node with name 'Abs'"),
    ('1.32.0', 'kernel',
     'NotImplemented: [ONNXRuntimeError] : 9 : NOT_IMPLEMENTED : Failed to find kernel for BatchNormal'
     "ization(6) (node:'BatchNormalization' ep:'CPUExecutionProvider'). Op with name (BatchNormalizati"
     'on) domain () and type (BatchNormalization) kernel is not supported in CPUExecutionProvider. Enc'
     'ountered following errors: ( Version mismatch. node_version: 6 kernel start version: 7 kernel_en'
     'd_version: 8 ...'),
    ('1.15.1', 'kernel',
     'RuntimeException: [ONNXRuntimeError] : 6 : RUNTIME_EXCEPTION : Exception during initialization: '
     '/onnxruntime_src/onnxruntime/core/providers/cpu/nn/batch_norm.h:56 onnxruntime::BatchNorm<T>::Ba'
     'tchNorm(const onnxruntime::OpKernelInfo&) [with T = float] is_spatial_ was false. Training mode '
     'only supports spatial BN'),
    ('1.32.0', 'kernel',
     'Fail: [ONNXRuntimeError] : 1 : FAIL : Exception during initialization: /onnxruntime_src/onnxrunt'
     'ime/core/providers/cpu/nn/batch_norm.h:56 onnxruntime::BatchNorm<T>::BatchNorm(const onnxruntime'
     '::OpKernelInfo&) [with T = float] is_spatial_ was false. Training mode only supports spatial BN'),
    ('1.32.0', 'kernel',  # ScatterElements-18 float16, reduction add: no kernel, said at run time
     "RuntimeException: [ONNXRuntimeError] : 6 : RUNTIME_EXCEPTION : Non-zero status code returned while"
     " running ScatterElements node. Name:'ScatterElements' Status Message: CPU execution provider: MLFlo"
     "at16 data type is not supported with ScatterElements opset 16 when reduction is 'add'."),
    ('1.15.1', None,
     "Fail: [ONNXRuntimeError] : 1 : FAIL : Node (Hardmax) Op (Hardmax) [ShapeInferenceError] 'axis' m"
     'ust be in [-1 , 0]. Its actual value is: 1'),
    ('1.32.0', None,
     'Fail: [ONNXRuntimeError] : 1 : FAIL : Node (Add) Op (Add) [ShapeInferenceError] Incompatible dim'
     'ensions'),
    ('1.15.1', None,
     'InvalidGraph: [ONNXRuntimeError] : 10 : INVALID_GRAPH : This is an invalid model. Type Error: Ty'
     "pe 'tensor(bfloat16)' of input parameter (X) of operator (BatchNormalization) in node (BatchNorm"
     'alization) is invalid.'),
    ('1.32.0', None,
     'InvalidArgument: [ONNXRuntimeError] : 2 : INVALID_ARGUMENT : Non-zero status code returned while'
     " running BatchNormalization node. Name:'BatchNormalization' Status Message: Invalid input scale:"
     ' 0th dimension != 3'),
    ('1.15.1', None,
     'InvalidGraph: [ONNXRuntimeError] : 10 : INVALID_GRAPH : This is an invalid model. In Node, ("Ins'
     'ertedCast_X", Cast, "", -1) : ("X": tensor(float16),) -> ("InsertedCast_X": tensor(float),) , Er'
     "ror Mismatched attribute type in 'InsertedCast_X : to'"),
]
#: The words each version message must be reported with (the reason in the result's message).
VERSION_REASONS = {
    0: "Unsupported model IR version: 10, max supported IR version: 9",
    1: "Opset 20 is under development and support for this is limited",
    3: "Opset 22 is under development and support for this is limited",
    7: "Unsupported model IR version: 14, max supported IR version: 13",
}


@pytest.mark.parametrize("release,kind,text", ORT_MESSAGES,
                         ids=[f"{r}-{k}-{i}" for i, (r, k, _) in enumerate(ORT_MESSAGES)])
def test_onnxruntime_refusal_table_on_real_messages(release, kind, text):
    found = match_refusal("onnxruntime", text)
    assert (found.kind if found else None) == kind, (release, found)


def test_version_reasons_are_the_runtime_words():
    assert {i: match_refusal("onnxruntime", ORT_MESSAGES[i][2]).reason for i in VERSION_REASONS} == VERSION_REASONS
    # every release's version refusal is found by the generic row too (a backend-API adapter around onnxruntime)
    versions = [t for _, k, t in ORT_MESSAGES if k == "version"]
    assert len(versions) == 8 and all(match_refusal("pkg.mod:Backend", t).kind == "version" for t in versions)
    # and the fixtures cover both wrappings: INVALID_ARGUMENT (up to 1.21) and FAIL (1.22 on)
    assert {t.split(":")[0] for t in versions} == {"InvalidArgument", "Fail"}


def test_refusal_table_is_one_table_with_known_kinds():
    assert set(REFUSALS) >= {"*", "onnxruntime"}
    for row in REFUSALS.values():
        assert set(row) <= {"version", "type", "kernel"}


class _Refusing(Backend):
    """A backend that raises, at prepare, an exception of the class name and text given (as
    onnxruntime's pybind exceptions InvalidArgument, Fail, NotImplemented... are named)."""

    def __init__(self, name: str, text: str):
        self.name = name
        cls_name, _, msg = text.partition(": ")
        self.exc = type(cls_name, (RuntimeError,), {})(msg)

    def prepare(self, model, model_bytes):
        raise self.exc

    def run(self, prepared, inputs, output_names):  # pragma: no cover - prepare always raises
        raise AssertionError("not reached")


def _pair(toy_suite):
    error = next(c for c in toy_suite.cases if c.expect_error)
    value = next(c for c in toy_suite.cases if c.expect_error is None and c.tags["dtype"] == "float")
    return error, value


@pytest.mark.parametrize("backend_name", ["onnxruntime", "pkg.mod:SomeBackend"])
def test_version_refusal_is_unsupported_with_its_reason(toy_suite, backend_name):
    error, value = _pair(toy_suite)
    for i, reason in VERSION_REASONS.items():
        be = _Refusing(backend_name, ORT_MESSAGES[i][2])
        e, v = run_cases([error, value], be)
        assert e.outcome == "unsupported" and v.outcome == "unsupported", (i, e.message, v.message)
        assert e.message.startswith(f"declined as unsupported at prepare for the model's version ({reason}), which "
                                    f"does not show that the invalid model ({error.expect_error}) is rejected")
        assert v.message.startswith(f"prepare: cannot load the model for its version ({reason}): ")


def test_real_rejection_still_passes_and_kernel_refusal_still_declines(toy_suite):
    error, value = _pair(toy_suite)
    by_kind = {}
    for release, kind, text in ORT_MESSAGES:
        e, v = run_cases([error, value], _Refusing("onnxruntime", text))
        by_kind.setdefault(kind, set()).add((e.outcome, v.outcome))
        if kind == "kernel":
            assert e.message.startswith("declined as unsupported at prepare, which does not show"), e.message
    assert by_kind == {"version": {("unsupported", "unsupported")}, "type": {("unsupported", "unsupported")},
                       "kernel": {("unsupported", "unsupported")}, None: {("pass", "error")}}


def test_problem_list_shows_the_version_reason(toy_suite):
    _, value = _pair(toy_suite)
    base = ORT_MESSAGES[0][2]
    results = []
    for ir, top in ((10, 9), (11, 9), (13, 10)):  # one group whatever the numbers
        text = base.replace("IR version: 10, max supported IR version: 9",
                            f"IR version: {ir}, max supported IR version: {top}")
        results += [r.to_json() for r in run_cases([value], _Refusing("onnxruntime", text))]
    groups = top_problems(results)
    assert len(groups) == 1 and groups[0]["count"] == 3 and groups[0]["outcome"] == "unsupported"
    assert groups[0]["pattern"].startswith(
        "prepare: cannot load the model for its version (Unsupported model IR version: #, max supported IR version: #)")


def test_unsupported_exception_kinds_survive_pickling():
    import pickle

    u = pickle.loads(pickle.dumps(Unsupported("no string OrtValue", kind="type")))
    assert u.kind == "type" and str(u) == "no string OrtValue"
    with pytest.raises(ValueError, match="refusal kind"):
        Unsupported("x", kind="opset")

    class B(_Refusing):
        def prepare(self, model, model_bytes):
            raise Unsupported("no string OrtValue", kind="type")

    b = B("onnxruntime", "X: y")
    assert b.refusal_kind(Unsupported("a", kind="type")) == "type"
    assert b.refusal_kind(NotImplementedError("bfloat16 Abs")) == "kernel"
    assert b.refusal_kind(RuntimeError("index 7 out of bounds")) is None


# -- the supported range -------------------------------------------------------------------

def test_floors_are_read_from_pyproject():
    fl = compat.floors(pyproject=ROOT / "pyproject.toml")
    assert set(fl) == set(compat.CHECKED)
    assert compat.floors() == fl  # from the checkout's pyproject.toml, not a stale egg-info beside it
    assert compat.floors(["onnx>=1.19", "numpy >= 1.24.2", "ml-dtypes>=0.5; python_version >= '3'",
                          "rich>=13", "tract>=0.23; extra == 'test'"]) == {
        "onnx": "1.19", "numpy": "1.24.2", "ml_dtypes": "0.5"}


def test_problems_name_the_release_out_of_range():
    floor = {"onnx": "1.19", "onnxruntime": "1.15", "numpy": "1.24.2", "ml_dtypes": "0.5"}
    ok = {"onnx": "1.19.0", "onnxruntime": "1.15.0", "numpy": "1.24.2", "ml_dtypes": "0.5.0"}
    assert compat.problems(ok, floor) == []
    old = compat.problems({**ok, "onnx": "1.18.0", "ml_dtypes": "0.4.1"}, floor)
    assert len(old) == 2 and old[0].startswith("onnx 1.18.0 is older than the oldest supported release, onnx 1.19")
    assert old[1].startswith("ml_dtypes 0.4.1 is older than the oldest supported release, ml_dtypes 0.5")
    # onnxruntime wheels before 1.19 are built on numpy 1: not a floor, pip cannot see it
    np2 = compat.problems({**ok, "onnxruntime": "1.17.3", "numpy": "2.4.6"}, floor)
    assert len(np2) == 1 and "onnxruntime 1.17.3 was built against numpy 1" in np2[0] and "numpy 2.4.6" in np2[0]
    assert compat.problems({**ok, "onnxruntime": "1.19.0", "numpy": "2.0.0"}, floor) == []
    assert compat.problems({**ok, "numpy": "2.0.0rc1", "onnxruntime": "1.18.1"}, floor) != []
    with pytest.raises(compat.VersionError, match="onnx 1.18.0 is older"):
        compat.check_versions({**ok, "onnx": "1.18.0"}, floor)


def test_this_environment_is_in_range():
    assert compat.problems() == [], compat.installed_versions()


def test_onnxruntime_out_of_range_or_unimportable_is_a_clear_error(monkeypatch):
    from conformance.backends.ort import OnnxRuntimeBackend

    # onnxruntime < 1.19 under numpy 2: its first import fails and a second returns a half-initialised
    # module whose sessions crash (measured with 1.15.0 and numpy 2.0.2): refused before importing it
    monkeypatch.setattr(compat, "problems", lambda: ["onnxruntime 1.17.3 was built against numpy 1 ..."])
    with pytest.raises(ValueError, match="onnxruntime cannot be used here: onnxruntime 1.17.3 was built"):
        OnnxRuntimeBackend()
    monkeypatch.setattr(compat, "problems", lambda: [])
    monkeypatch.setitem(sys.modules, "onnxruntime", None)  # import fails
    with pytest.raises(ValueError, match="onnxruntime cannot be imported"):
        OnnxRuntimeBackend()


def _doc(cases, backend="onnxruntime"):
    return {"backend": {"backend": backend, backend: "1.15.1", "onnx": "1.19.0"}, "summary": {}, "cases": cases}


def test_version_refusal_passes_finds_dishonest_passes(tmp_path, capsys):
    ir = ORT_MESSAGES[0][2]
    shape = next(t for _, k, t in ORT_MESSAGES if k is None)
    cases = [
        {"id": "a", "expect_error": "p must be 1 or 2", "outcome": "pass",
         "message": f"rejected at prepare as expected (p must be 1 or 2): {ir}"},  # the bug of issue 13
        {"id": "b", "expect_error": "axis", "outcome": "pass", "message": f"rejected at prepare as expected (axis): {shape}"},
        {"id": "c", "expect_error": None, "outcome": "unsupported", "message": f"prepare: {ir}"},
        {"id": "d", "expect_error": "p", "outcome": "unsupported", "message": f"declined as unsupported ...: {ir}"},
    ]
    assert [c["id"] for c in compat.version_refusal_passes(_doc(cases))] == ["a"]
    bad, good = tmp_path / "bad.json", tmp_path / "good.json"
    bad.write_text(json.dumps(_doc(cases)))
    good.write_text(json.dumps(_doc(cases[1:])))
    assert compat.main(["no-version-pass", str(good)]) == 0
    assert compat.main(["no-version-pass", str(good), str(bad)]) == 1
    assert "passing on a version refusal: 1" in capsys.readouterr().out


def test_pins_are_the_floors(capsys):
    assert compat.main(["pins", str(ROOT / "pyproject.toml")]) == 0
    pins = dict(line.split("==") for line in capsys.readouterr().out.split())
    assert pins == compat.floors(pyproject=ROOT / "pyproject.toml")


# -- onnx's node tests as onnx < 1.23 hands them over --------------------------------------

def test_as_tensor_takes_every_form_of_a_tensor():
    import ml_dtypes

    r = as_tensor(np.float32(0.5))
    assert isinstance(r, np.ndarray) and r.shape == () and r.dtype == np.float32 and r == 0.5
    b = as_tensor(np.bool_(True))
    assert b.shape == () and b.dtype == np.bool_
    f8 = helper.make_tensor("z", TensorProto.FLOAT8E4M3FN, [2], [1.0, -2.0])
    a = as_tensor(f8)
    assert a.dtype == ml_dtypes.float8_e4m3fn and a.astype(np.float32).tolist() == [1.0, -2.0]
    x = np.arange(3)
    assert as_tensor(x) is x
    assert as_tensor([x]) is None and as_tensor(None) is None and as_tensor({1: x}) is None and as_tensor(0.5) is None


def _write_test_dir(root: Path, model: onnx.ModelProto, data_sets) -> Path:
    """A test in the ONNX backend-test layout (what onnx < 1.23 ships and loads from)."""
    root.mkdir(parents=True)
    onnx.save(model, root / "model.onnx")
    for k, (ins, outs) in enumerate(data_sets):
        d = root / f"test_data_set_{k}"
        d.mkdir()
        for prefix, values in (("input", ins), ("output", outs)):
            for i, v in enumerate(values):
                (d / f"{prefix}_{i}.pb").write_bytes(numpy_helper.from_array(np.asarray(v)).SerializeToString())
    return root


def _node_tests():
    """onnx's node tests as the installed onnx gives them (its generators' numpy warnings silenced)."""
    import warnings

    from onnx.backend.test.loader import load_model_tests

    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore")
        return load_model_tests(kind="node")


class _DirTest:
    """An ``onnx.backend.test`` TestCase as onnx 1.16 to 1.22 give it: no model, no data sets."""

    def __init__(self, name, model_dir):
        self.name, self.model_dir, self.url = name, str(model_dir), None
        self.model, self.data_sets, self.rtol, self.atol = None, None, 1e-3, 1e-7


def test_node_test_from_a_model_directory_is_the_same_case(tmp_path):
    tests = {t.name: t for t in _node_tests() if t.name in ("test_dropout_default_ratio", "test_relu")}
    assert set(tests) == {"test_dropout_default_ratio", "test_relu"}
    for name, t in tests.items():
        mem = case_from_test(t)
        ds = [([as_tensor(a) for a in ins], [as_tensor(a) for a in outs]) for ins, outs in t.data_sets]
        disk = case_from_test(_DirTest(name, _write_test_dir(tmp_path / name, t.model, ds)))
        assert disk.skip is None and mem.skip is None
        assert disk.id == mem.id and disk.content_hash == mem.content_hash
    ratio = disk_ratio = case_from_test(_DirTest("d", tmp_path / "test_dropout_default_ratio")).datasets[0].inputs["r"]
    assert disk_ratio.shape == () and ratio.dtype == np.float32
    model, data_sets = load_test_dir(tmp_path / "test_relu")
    assert model.graph.node[0].op_type == "Relu" and len(data_sets) == 1 and len(data_sets[0][0]) == 1


def test_node_test_with_a_sequence_is_compared(tmp_path):
    seq_in = helper.make_tensor_sequence_value_info("S", TensorProto.FLOAT, None)
    out = helper.make_tensor_value_info("Y", TensorProto.FLOAT, None)
    g = helper.make_graph([helper.make_node("SequenceAt", ["S", "I"], ["Y"])], "g",
                          [seq_in, helper.make_tensor_value_info("I", TensorProto.INT64, [])], [out])
    model = helper.make_model(g, opset_imports=[helper.make_opsetid("", 11)])
    root = tmp_path / "test_seq"
    root.mkdir()
    onnx.save(model, root / "model.onnx")
    (root / "test_data_set_0").mkdir()
    seq = numpy_helper.from_list([np.ones(2, np.float32)], name="S")
    (root / "test_data_set_0" / "input_0.pb").write_bytes(seq.SerializeToString())
    (root / "test_data_set_0" / "input_1.pb").write_bytes(numpy_helper.from_array(np.int64(0)).SerializeToString())
    (root / "test_data_set_0" / "output_0.pb").write_bytes(numpy_helper.from_array(np.ones(2, np.float32)).SerializeToString())
    _, data_sets = load_test_dir(root)
    assert isinstance(data_sets[0][0][0], list) and data_sets[0][0][1].shape == ()
    case = case_from_test(_DirTest("test_seq", root))
    assert case.skip is None and case.inputs[0].kind == "sequence"  # compared since issue 27
    assert isinstance(case.datasets[0].inputs["S"], list)
    from conformance.backends import resolve_backend
    from conformance.runner import run_case

    assert run_case(case, resolve_backend("onnxruntime")).outcome == "pass"


def test_node_test_without_model_or_directory_is_refused():
    t = _DirTest("test_x", "")
    t.model_dir = None
    with pytest.raises(ValueError, match="neither a model nor a model directory"):
        case_from_test(t)


def test_subclass_decides_kernel_refusals_but_not_version_ones():
    class Narrow(_Refusing):  # as the command backend: its failed command is never "unsupported"
        def is_unsupported(self, exc):
            return False

    class Wide(_Refusing):  # as tinygrad: an assertion that declines
        def is_unsupported(self, exc):
            return super().is_unsupported(exc) or "only float32" in str(exc)

    narrow, wide = Narrow("command", "X: y"), Wide("tinygrad", "X: y")
    assert narrow.refusal(RuntimeError("exit status 1: op not supported")) is None
    assert narrow.refusal_kind(RuntimeError(ORT_MESSAGES[0][2])) == "version"
    assert wide.refusal(AssertionError("only float32 is supported here")).kind == "kernel"
    assert wide.refusal(AssertionError("shape mismatch")) is None


def test_node_test_with_unreadable_data_is_skipped_with_the_reason(tmp_path):
    g = helper.make_graph([helper.make_node("Relu", ["X"], ["Y"])], "g",
                          [helper.make_tensor_value_info("X", TensorProto.FLOAT, [2])],
                          [helper.make_tensor_value_info("Y", TensorProto.FLOAT, [2])])
    root = _write_test_dir(tmp_path / "test_bad", helper.make_model(g), [([np.ones(2, np.float32)] * 2,
                                                                          [np.ones(2, np.float32)])])
    case = case_from_test(_DirTest("test_bad", root))  # two input files for one graph input
    assert case.skip.startswith("test data unreadable: ValueError:") and "2 input and 1 output files" in case.skip
    with pytest.raises(ValueError, match="2 input and 1 output files"):
        load_test_dir(root)


def test_an_operator_without_a_schema_here_is_left_out_with_the_reason(monkeypatch):
    """onnxruntime 1.15 exposes no contrib schemas: such an operator is not listed (``--ops all``
    leaves it out) and asking for it names the reason instead of failing inside generation."""
    from conformance import opspec, registry

    registry.available_ops()
    key = ("com.example", "NoSchemaHere")
    monkeypatch.setitem(registry._REGISTRY, key, registry.GeneratorInfo(
        "NoSchemaHere", "com.example", "1", lambda seed: [],
        unavailable=lambda: "no schema for operator 'NoSchemaHere' (onnxruntime 1.15.0 does not expose it)"))
    assert "NoSchemaHere" not in registry.available_ops()
    with pytest.raises(KeyError, match="cannot be generated here: no schema .*1.15.0"):
        registry.get("NoSchemaHere")
    # the engine's entries ask opspec; a contrib operator without onnxruntime's registry says why
    monkeypatch.setattr(opspec, "_ort_index", lambda: {})
    with pytest.raises(KeyError, match="SkipLayerNormalization"):
        opspec.op_spec.__wrapped__("SkipLayerNormalization", "com.microsoft")  # past the cache
