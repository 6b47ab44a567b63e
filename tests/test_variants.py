"""Parameters as graph inputs or as initializers: the same case, scored both ways."""

import numpy as np
import onnx

from conformance.backends import resolve_backend
from conformance.isolation import run_isolated
from conformance.variants import expand, with_params_as


def test_layer_normalization_variants_keep_expectations():
    from conformance.suite import generate_suite

    cases = [c for c in generate_suite(["LayerNormalization"], 0).cases
             if c.expect_error is None and c.tags["dtype"] == "float"][:40]
    out = expand(cases, ["inputs", "initializers"])
    assert len(out) > len(cases)
    made = [c for c in out if c.tags.get("variant")]
    for v in made:
        inits = {t.name for t in v.model.graph.initializer}
        feeds = {i.name for i in v.model.graph.input}
        params = [i.name for i in v.inputs[1:] if i.present]
        if v.tags["inputs_as"] == "initializers":
            assert set(params) <= inits and not (set(params) & {n for n in feeds if n not in inits})
        else:
            assert not inits and set(params) <= feeds
        onnx.checker.check_model(v.model, full_check=True)
    # every variant passes on onnxruntime exactly when its original does
    res = {r.id: r.outcome for r in run_isolated(out, spec="onnxruntime", jobs=2)}
    originals = {c.label: res[c.id] for c in out if not c.tags.get("variant")}
    for v in made:
        base = v.label.rsplit("/as=", 1)[0]
        assert res[v.id] == originals[base], v.id


def test_variant_refuses_what_cannot_be_constant(toy_suite):
    case = next(c for c in toy_suite.cases if len(c.datasets) == 2)
    assert with_params_as(case, "initializers") is None  # no parameters besides X
    err = next(c for c in toy_suite.cases if c.expect_error)
    assert with_params_as(err, "inputs") is None


def test_unknown_variant():
    import pytest

    with pytest.raises(ValueError, match="unknown variant"):
        expand([], ["constants"])
    _ = np, resolve_backend
