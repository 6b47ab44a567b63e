"""``python -m conformance.cli``: the ``onnx-conformance`` command line."""

import sys

from conformance.cli import console_main

sys.exit(console_main())
