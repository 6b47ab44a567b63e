"""A toy operator family (Abs) for testing the harness independently of the real generators."""

from __future__ import annotations

import numpy as np
from onnx import TensorProto

from conformance import dtypes, registry
from conformance.case import Case, DataSet, Input, Output
from conformance.tolerance import derive_tolerance

TYPES = (TensorProto.FLOAT16, TensorProto.BFLOAT16, TensorProto.FLOAT, TensorProto.DOUBLE)


def abs_cases(seed: int) -> list[Case]:
    """Abs-13 value cases (every float type, 2 data sets for one) and one invalid model."""
    cases = []
    for k, t in enumerate(TYPES):
        rng = registry.case_rng(seed, "abs", k)
        name = dtypes.type_name(t)
        n_ds = 2 if t == TensorProto.FLOAT else 1
        datasets, exp64 = [], []
        for _ in range(n_ds):
            x = dtypes.round_to(rng.normal(size=(2, 3)), t).astype(np.float64)
            e = np.abs(x)
            datasets.append(DataSet({"X": dtypes.round_to(x, t)}, {"Y": dtypes.round_to(e, t)}))
            exp64.append(e)
        tol = derive_tolerance(np.stack(exp64), {"same": np.stack(exp64)}, t)
        cases.append(Case("Abs", 13, 13, {}, [Input("X", t, (2, 3))], [Output("Y", t, tol)], datasets,
                          tags={"dtype": name, "rank": 2}, label=f"{name}/normal"))
    rng = registry.case_rng(seed, "abs-error")
    x = dtypes.round_to(rng.normal(size=(2, 3)), TensorProto.FLOAT).astype(np.float64)
    cases.append(Case("Abs", 13, 13, {"alpha": 1.0}, [Input("X", TensorProto.FLOAT, (2, 3))],
                      [Output("Y", TensorProto.FLOAT)], [DataSet({"X": dtypes.round_to(x, TensorProto.FLOAT)})],
                      tags={"dtype": "float", "error": "unknown-attribute"}, label="float/error=unknown-attribute",
                      expect_error="Abs has no attribute 'alpha'"))
    return cases


def install() -> None:
    """Register the toy generator under the op name ``Abs`` (after the real generators are
    loaded, so that the operator table's Abs does not replace it)."""
    registry.available_ops()
    registry.register("Abs", version="toy")(abs_cases)
