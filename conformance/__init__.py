"""onnx-conformance: conformance cases for ONNX operators and a runner that scores runtimes."""

__version__ = "0.2.0"
