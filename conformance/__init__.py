"""onnx-conformance: conformance cases for ONNX operators and a runner that scores runtimes."""

__version__ = "0.3.0"
