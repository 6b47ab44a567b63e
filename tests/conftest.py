import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))


@pytest.fixture
def toy_suite():
    """A Suite of the toy Abs cases (4 value cases, one invalid model)."""
    import toy

    from conformance.suite import Suite

    return Suite(cases=toy.abs_cases(0), seed=0, ops=["Abs"], generators={"Abs": "toy.abs_cases@toy"})


@pytest.fixture
def toy_registered(monkeypatch):
    """Register the toy Abs generator (for CLI tests) in place of the real one, and undo it afterwards."""
    import toy

    from conformance import registry

    registry.available_ops()  # load the real generators first: the toy replaces the real Abs, not the reverse
    monkeypatch.setitem(registry._REGISTRY, ("", "Abs"), registry.GeneratorInfo("Abs", "", "toy", toy.abs_cases))
    return "Abs"


@pytest.fixture(scope="module")
def suite(request):
    """The cases of the test module's ``OPS`` at seed 0 (operator-table family tests)."""
    from conformance import registry

    return registry.generate(request.module.OPS, seed=0)


@pytest.fixture(scope="module")
def value_cases(suite):
    """The value cases of :func:`suite`."""
    return [c for c in suite if c.expect_error is None]
