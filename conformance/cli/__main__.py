"""``python -m conformance.cli``: the ``onnx-conformance`` command line."""

import sys

from conformance.cli import main

sys.exit(main())
