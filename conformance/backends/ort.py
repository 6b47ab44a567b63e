"""onnxruntime backend.

Options (``--backend-option KEY=VALUE``):

* ``providers``: comma-separated execution providers, default ``CPUExecutionProvider``;
* ``graph_optimization_level``: ``disable``, ``basic``, ``extended``, ``layout`` or ``all``
  (default ``all``, onnxruntime's own default); both the optimized and the
  unoptimized session are legitimate configurations to score;
* ``intra_op_num_threads``: integer, default 1 (deterministic timing, cheap sessions).

Unsupported mapping (the ``"onnxruntime"`` row of :data:`~.base.REFUSALS`, tested against
the messages of releases 1.15 to 1.32 in ``tests/test_compat.py``): a model-load failure for
an opset or IR version newer than the runtime ("Unsupported model IR version: 10, max
supported IR version: 9", "Opset 28 is under development and support for this is
limited", "... is till opset N"; releases up to 1.21 report it as INVALID_ARGUMENT) is a
``version`` refusal; an element type without a tensor type ("MLDataType for:
tensor(complex64) is not currently registered or supported") a ``type`` refusal;
onnxruntime's ``NotImplemented`` status (e.g. "Could not find an implementation for
BatchNormalization(15) node ... float16") and a kernel's own "Training mode only supports
spatial BN" ``kernel`` refusals.  All are ``unsupported``; every other exception on a valid
model is ``error``.  :meth:`environment` records the onnxruntime release and the onnx release
that loads the models.

Element types numpy cannot hold natively: onnxruntime's Python API converts numpy arrays of
numpy's own dtypes (and ``object`` arrays of ``str`` for string) but has no numpy type for
the ``ml_dtypes`` ones (bfloat16, the float8 types, float8e8m0, int4, uint4, int2, uint2,
float4e2m1, float6e2m3, float6e3m2; :mod:`conformance.dtypes`).  Inputs of those types are
fed as CPU ``OrtValue`` s of the ONNX element type (``OrtValue.ortvalue_from_shape_and_type``)
whose memory is filled with the tensor's raw bytes as onnx's ``numpy_helper.from_array``
lays them out (the ONNX layout, which is onnxruntime's: int4 / float4 two per byte, int2
four per byte, first element in the low bits).  Outputs of those types are fetched as
``OrtValue`` s (``run_with_ort_values``), their ``tensor_size_in_bytes()`` bytes copied out of
CPU memory and decoded by ``numpy_helper.to_array``; one on a non-CPU device raises
``RuntimeError`` (``error``).  Every other input and output goes through
``InferenceSession.run`` unchanged.  onnxruntime's Python API cannot make an ``OrtValue`` of
strings, so a model with a string input *and* an output of an ``ml_dtypes`` type (e.g.
``Cast`` string -> bfloat16) cannot be run through it: :class:`~.base.Unsupported`.

onnxruntime 1.32 (CPU) has no tensor type for complex64, complex128, float6e2m3 and
float6e3m2 ("MLDataType for: tensor(complex64) is not currently registered or supported",
"tensor type 27 is not supported"): ``unsupported``.
"""

from __future__ import annotations

import ctypes
from typing import Any

import numpy as np
import onnx
from onnx import numpy_helper

from .. import dtypes
from .base import Backend, Unsupported, reject_unknown_options

_LEVELS = {
    "disable": "ORT_DISABLE_ALL",
    "basic": "ORT_ENABLE_BASIC",
    "extended": "ORT_ENABLE_EXTENDED",
    "layout": "ORT_ENABLE_LAYOUT",
    "all": "ORT_ENABLE_ALL",
}


#: ONNX element types onnxruntime's Python API cannot convert to or from numpy: those numpy
#: holds as ``ml_dtypes`` types (bfloat16, float8, float8e8m0, int4, uint4, int2, uint2, float4e2m1,
#: float6), i.e. user-defined dtypes (``isbuiltin == 2``; their ``kind`` is no guide: float8_e5m2's is "f").
_BITS_ELEM = frozenset(t for t in dtypes.ALL_TYPES if dtypes.np_dtype(t).isbuiltin == 2)
#: onnxruntime type string (``"tensor(bfloat16)"``) -> ONNX element type, for those types.
_BITS_TYPES = {f"tensor({dtypes.type_name(t)})": t for t in _BITS_ELEM}
#: numpy (ml_dtypes) dtype -> ONNX element type, for those types.
_BITS_BY_DTYPE = {dtypes.np_dtype(t): t for t in _BITS_ELEM}
#: those of them whose elements are whole bytes (bfloat16, the float8 types), -> their numpy dtype:
#: onnx's raw_data holds them as numpy does, one little-endian element after another (the 4-, 2-
#: and 6-bit types are packed, and unpacked by ``numpy_helper.to_array``)
_WHOLE_BYTES = {t: dtypes.np_dtype(t) for t in _BITS_ELEM if not dtypes.is_subbyte(t)}


def _numpy_to_ortvalue(ort, value: np.ndarray, elem_type: int):
    """A CPU OrtValue of ``elem_type`` holding ``value`` (an ml_dtypes array): the raw bytes of
    ``numpy_helper.from_array`` copied into memory onnxruntime allocated for the shape.

    Raises:
        RuntimeError: onnxruntime has no such tensor type (float6: "tensor type 27 is not
            supported"), or its size for the shape differs from onnx's packing.
    """
    raw = numpy_helper.from_array(value).raw_data
    ov = ort.OrtValue.ortvalue_from_shape_and_type(list(value.shape), elem_type)
    size = ov.tensor_size_in_bytes()
    if size != len(raw):
        raise RuntimeError(f"{dtypes.type_name(elem_type)} tensor of shape {value.shape}: onnxruntime allocates "
                           f"{size} bytes, onnx packs {len(raw)}")
    if size:
        ctypes.memmove(ov.data_ptr(), raw, size)
    return ov


def _ortvalue_to_numpy(value) -> np.ndarray:
    """numpy array of an OrtValue; the ml_dtypes types are copied from CPU memory as raw bytes
    and decoded by ``numpy_helper.to_array`` (packed int4 / int2 / float4 unpacked).

    Raises:
        RuntimeError: such an output that does not live in CPU memory.
    """
    elem_type = _BITS_TYPES.get(value.data_type())
    if elem_type is None:
        return value.numpy()
    if value.device_name().lower() != "cpu":
        raise RuntimeError(f"{value.data_type()} output on device {value.device_name()!r} cannot be read")
    size = value.tensor_size_in_bytes()
    dtype = _WHOLE_BYTES.get(elem_type)
    if dtype is not None:  # an element a byte or two, stored as onnx packs it: copied straight in
        shape = value.shape()
        out = np.empty(shape, dtype)
        if out.nbytes == size:
            if size:
                ctypes.memmove(out.ctypes.data, value.data_ptr(), size)
            return out
    t = onnx.TensorProto()
    t.data_type = elem_type
    t.dims.extend(value.shape())
    t.raw_data = ctypes.string_at(value.data_ptr(), size) if size else b""
    return numpy_helper.to_array(t).copy()


#: The graph-optimization levels a run scores layer-pattern cases at (:mod:`conformance.levels`),
#: in order: ``disable`` first (the kernels alone), then each level that adds rewrites.
PATTERN_LEVELS = ("disable", "basic", "extended", "all")

#: The names onnxruntime's ``disabled_optimizers`` session argument takes: its rewrite rules
#: (``GenerateRewriteRules``) and graph transformers (``GenerateTransformers``) of levels 1 and 2 in
#: onnxruntime/core/optimizer/graph_transformer_utils.cc (1.32), tried one by one to name the
#: rewrite whose removal makes a failing pattern case pass.  A name the release does not have is
#: ignored by onnxruntime.  A transformer registered at two levels under two names (1.32:
#: ``LayerNormFusionL1`` / ``LayerNormFusionL2``, ``GeluFusionL1`` / ``GeluFusionL2``; earlier
#: releases: one name) is one entry ``(label, names)``, all removed together.
REWRITE_NAMES = (
    ("LayerNormFusion", ("LayerNormFusion", "LayerNormFusionL1", "LayerNormFusionL2")),
    ("GeluFusion", ("GeluFusion", "GeluFusionL1", "GeluFusionL2")),
    "SimplifiedLayerNormFusion", "SkipLayerNormFusion", "FastGeluFusion",
    "BiasGeluFusion", "QuickGeluFusion", "MatMulAddFusion", "GemmTransposeFusion", "MatmulTransposeFusion",
    "GemmActivationFusion", "GemmSumFusion", "MatMulScaleFusion", "DivMulFusion", "ConstantFolding",
    "CommonSubexpressionElimination", "ConstantSharing", "TransposeOptimizer", "ReshapeFusion", "EliminateIdentity",
    "NoopElimination", "CastElimination", "EliminateSlice", "UnsqueezeElimination", "EliminateDropout",
    "ExpandElimination", "PreShapeNodeElimination", "FuseReluClip", "NotWhereFusion", "ConvAddFusion",
    "ConvMulFusion", "ConvBNFusion", "PadFusion", "MatmulBNFusion", "ConvActivationFusion", "AttentionFusion",
    "EmbedLayerNormFusion", "BiasSoftmaxFusion", "GatherSliceToSplitFusion", "GatherToSliceFusion",
    "QDQS8ToU8Transformer", "QDQSelectorActionTransformer", "QDQPropagationTransformer", "WeightBiasQuantization",
    "DoubleQDQPairsRemover", "QDQFinalCleanupTransformer", "NchwcTransformer", "NhwcTransformer",
    "Level1_RuleBasedTransformer", "Level2_RuleBasedTransformer",
)


class OnnxRuntimeBackend(Backend):
    """Runs cases with ``onnxruntime.InferenceSession``.

    Raises:
        ValueError: an unknown option, provider or optimization level; installed releases out of
            the supported range (:func:`conformance.compat.problems`: the message names them);
            onnxruntime cannot be imported.
    """

    name = "onnxruntime"
    #: levels a run scores layer-pattern cases at (:data:`PATTERN_LEVELS`)
    levels = PATTERN_LEVELS
    #: rewrite names tried to find the one responsible for a failure (:data:`REWRITE_NAMES`)
    rewrite_names = REWRITE_NAMES

    def __init__(self, providers: str | list[str] = "CPUExecutionProvider", graph_optimization_level: str = "all",
                 intra_op_num_threads: int | str = 1, **unknown: Any):
        from ..compat import problems

        found = problems()  # releases out of the supported range, e.g. onnxruntime < 1.19 under numpy 2,
        if found:  # which imports half-initialised (the first import fails, a second "works") and crashes
            raise ValueError("onnxruntime cannot be used here: " + "; ".join(found))
        try:
            import onnxruntime as ort
        except ImportError as exc:
            raise ValueError(f"onnxruntime cannot be imported: {exc}") from exc

        reject_unknown_options("onnxruntime", unknown, ("providers", "graph_optimization_level", "intra_op_num_threads"))
        self._ort = ort
        ort.set_default_logger_severity(4)
        if isinstance(providers, str):
            providers = [p.strip() for p in providers.split(",") if p.strip()]
        available = ort.get_available_providers()
        missing = [p for p in providers if p not in available]
        if missing:
            raise ValueError(f"execution provider(s) {missing} not available; this onnxruntime has {available}")
        self.providers = providers
        level = str(graph_optimization_level).lower()
        if level not in _LEVELS:
            raise ValueError(f"graph_optimization_level must be one of {sorted(_LEVELS)}, got {level!r}")
        self.level = level
        self.threads = int(intra_op_num_threads)
        #: one SessionOptions a (level, threads), shared by the sessions that record nothing (:meth:`_prepare`)
        self._shared_options: dict = {}

    def prepare(self, model: onnx.ModelProto, model_bytes: bytes):
        return self._prepare(model, model_bytes, self.level)

    def prepare_at_level(self, model: onnx.ModelProto, model_bytes: bytes, level: str, disabled=()):
        """Prepare at graph-optimization ``level`` (:data:`PATTERN_LEVELS`) with the rewrites named
        in ``disabled`` removed (``InferenceSession(..., disabled_optimizers=...)``), saving the
        optimized graph (``SessionOptions.optimized_model_filepath``) to read back which nodes it
        holds (:meth:`optimized_ops`).

        Raises:
            ValueError: an unknown level; anything onnxruntime raises.
        """
        if level not in _LEVELS:
            raise ValueError(f"graph_optimization_level must be one of {sorted(_LEVELS)}, got {level!r}")
        return self._prepare(model, model_bytes, level, disabled=tuple(disabled), record=True)

    def optimized_ops(self, prepared) -> list[str] | None:
        """The op types (``domain:Op``; ai.onnx ops bare) of the optimized graph a
        :meth:`prepare_at_level` session runs, sorted, or ``None`` when not recorded."""
        return prepared[2] if len(prepared) > 2 else None

    def _options(self, level: str):
        so = self._ort.SessionOptions()
        so.graph_optimization_level = getattr(self._ort.GraphOptimizationLevel, _LEVELS[level])
        so.intra_op_num_threads = self.threads
        so.inter_op_num_threads = 1
        so.log_severity_level = 4  # runtime errors are reported per case, not on stderr
        return so

    def _prepare(self, model, model_bytes, level: str, disabled=(), record: bool = False):
        path = None
        if record:  # options of its own: they name the file the optimized graph is saved to
            import os
            import tempfile

            so = self._options(level)
            fd, path = tempfile.mkstemp(suffix=".onnx", prefix="ort-optimized-")
            os.close(fd)
            so.optimized_model_filepath = path
        else:
            # one SessionOptions a level, made once and shared by the sessions (InferenceSession copies
            # it into the session it makes; the bare loop shares one too): ~2 us a case less
            key = (level, self.threads)
            so = self._shared_options.get(key)
            if so is None:
                so = self._shared_options[key] = self._options(level)
        kwargs = {"disabled_optimizers": list(disabled)} if disabled else {}
        try:
            session = self._ort.InferenceSession(model_bytes, sess_options=so, providers=self.providers, **kwargs)
            ops = None
            if record:
                try:
                    opt = onnx.load_model(path, load_external_data=False)
                    ops = sorted({f"{n.domain}:{n.op_type}" if n.domain not in ("", "ai.onnx") else n.op_type
                                  for n in opt.graph.node})
                except Exception:  # noqa: BLE001 - the record is an extra; the session stands
                    ops = None
        finally:
            if path is not None:
                try:
                    os.unlink(path)
                except OSError:
                    pass
        # whether an output needs the OrtValue path, from the model's declared types: asking the
        # session (get_outputs) on every run cost ~25 us a case, a tenth of a small case's session
        declared = {o.name: o.type.tensor_type.elem_type for o in model.graph.output}
        if all(declared.values()):
            bits = frozenset(n for n, t in declared.items() if t in _BITS_ELEM)
        else:  # a type the model leaves open: the session's
            bits = frozenset(o.name for o in session.get_outputs() if o.type in _BITS_TYPES)
        if record:
            return session, bits, ops
        return session, bits

    def run(self, prepared, inputs: dict[str, np.ndarray], output_names: list[str]) -> list[Any]:
        prepared, bits = prepared[0], prepared[1]
        bits_out = [n for n in output_names if n in bits] if bits else ()
        # a sequence (list) or an absent optional (None) goes to onnxruntime as it is
        bits_in = {k for k, v in inputs.items()
                   if not isinstance(v, list) and v is not None and np.asarray(v).dtype in _BITS_BY_DTYPE}
        if not bits_out and not bits_in:
            return prepared.run(output_names, inputs)
        # onnxruntime's Python API has no numpy type for these: feed (and fetch) OrtValues.
        feeds = {}
        for k, v in inputs.items():
            if k in bits_in:
                v = np.asarray(v)
                feeds[k] = _numpy_to_ortvalue(self._ort, v, _BITS_BY_DTYPE[v.dtype])
            else:
                feeds[k] = v
        if not bits_out:
            return prepared.run(output_names, feeds)  # run() takes OrtValues and numpy arrays side by side
        keep = []  # ortvalue_from_numpy does not copy: the arrays must outlive the run
        for k in [k for k in feeds if k not in bits_in]:
            v = np.asarray(feeds[k], order="C")
            if v.dtype.kind in "OUS":
                raise Unsupported(f"onnxruntime's Python API cannot feed the string input {k!r} as an OrtValue, "
                                  f"which reading the output {bits_out[0]!r} (a type without a numpy dtype in "
                                  "onnxruntime) needs",
                                  kind="type")
            keep.append(v)
            feeds[k] = self._ort.OrtValue.ortvalue_from_numpy(v)
        outs = prepared.run_with_ort_values(output_names, feeds)
        del keep
        return [_ortvalue_to_numpy(o) for o in outs]

    def environment(self) -> dict[str, Any]:
        return {
            "backend": self.name,
            "onnxruntime": self._ort.__version__,
            "onnx": onnx.__version__,
            "providers": self.providers,
            "graph_optimization_level": self.level,
            "intra_op_num_threads": self.threads,
        }
