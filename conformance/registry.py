"""Registry of case generators, one per operator.

Adding an operator means: an oracle in ``conformance/reference/<family>.py``, a generator in
``conformance/generators/<family>.py`` decorated with :func:`register`, and the family module
listed in :data:`FAMILIES`.  Nothing else moves.

A generator is ``fn(seed: int) -> Iterable[Case]``; it must be deterministic in
``seed`` and the installed onnx/numpy versions.  Use :func:`case_rng` to get an
independent stream per case, so adding a case does not change the others.
"""

from __future__ import annotations

import importlib
import zlib
from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from functools import lru_cache

import numpy as np

from .case import Case, canonicalise_nans

#: Generator modules imported on first use.
FAMILIES = (
    "conformance.ops.unary",
    "conformance.ops.binary",
    "conformance.ops.logical",
    "conformance.ops.variadic",
    "conformance.ops.softmax",
    "conformance.ops.activations",
    "conformance.ops.normalization",
    "conformance.ops.layer_normalization",
    "conformance.ops.batch_normalization",
    "conformance.ops.dropout",
    "conformance.ops.reduce",
    "conformance.ops.reduce_index",
    "conformance.ops.cast",
    "conformance.ops.linalg",
    "conformance.ops.shape",
    "conformance.ops.creation",
    "conformance.ops.indexing",
    "conformance.ops.pool",
    "conformance.ops.roi",
    "conformance.ops.conv",
    "conformance.ops.resample",
    "conformance.ops.quantize",
    "conformance.ops.qlinear",
    "conformance.ops.contrib_quant",
    "conformance.ops.contrib_quant_matmul",
    "conformance.ops.recurrent",
    "conformance.ops.signal",
    "conformance.ops.text",
    "conformance.ops.transformer",
    "conformance.ops.attention",
    "conformance.ops.contrib_attention",
    "conformance.ops.contrib_fused",
    "conformance.ops.losses",
    "conformance.ops.detection",
    "conformance.ops.sequence",
    "conformance.ops.control_flow",
    "conformance.ops.image",
    "conformance.ops.random",
    "conformance.ops.contrib_recurrent",
    "conformance.patterns.layernorm",
    "conformance.patterns.dense",
    "conformance.patterns.gelu",
    "conformance.patterns.qdq",
    "conformance.patterns.conv_blocks",
    "conformance.patterns.pad_pool",
    "conformance.patterns.layout",
    "conformance.patterns.boundaries",
    "conformance.patterns.upsample",
    "conformance.patterns.attention",
)


@dataclass(frozen=True)
class GeneratorInfo:
    """A registered generator."""

    op: str
    domain: str
    version: str
    fn: Callable[[int], Iterable[Case]]
    #: ``fn() -> reason or None``: why the generator cannot run with the installed libraries
    #: (a contrib operator whose schema an old onnxruntime does not expose).
    unavailable: Callable[[], str | None] | None = None
    #: the operator's family, as reports group operators (the operator table's module)
    family: str = "other"
    #: ``fn(seed, depth)`` takes a depth (:data:`DEPTHS`); else a smoke selection is made from
    #: the full cases (:func:`smoke_selection`)
    depths: bool = False

    @property
    def name(self) -> str:
        return f"{self.fn.__module__}.{self.fn.__qualname__}"


#: (domain, op) -> generator.  Operators are named by their type alone where it is unique
#: among the registered domains, else as ``domain:op`` (:func:`resolve`).
_REGISTRY: dict[tuple[str, str], GeneratorInfo] = {}


def register(op: str, *, domain: str = "", version: str = "1", unavailable=None, family: str = "other",
             depths: bool = False) -> Callable:
    """Decorator registering ``fn(seed) -> Iterable[Case]`` as the generator of ``op``.

    Args:
        op: operator type.
        domain: operator domain (``""`` for ai.onnx).
        version: generator version; bump it whenever the cases it makes change.
        unavailable: optional ``fn() -> reason or None``, asked when the operators are listed:
            an operator with a reason is left out of :func:`available_ops` and :func:`get`
            names the reason.
        family: the family reports group the operator under.
        depths: ``fn`` takes ``depth`` as a second argument (``"full"`` or ``"smoke"``).
    """

    def deco(fn):
        global _AVAILABLE
        _REGISTRY[(domain, op)] = GeneratorInfo(op, domain, version, fn, unavailable, family, depths)
        _AVAILABLE = None
        return fn

    return deco


#: the :data:`FAMILIES` tuple whose modules are imported (:func:`_load` imports them once)
_LOADED: tuple | None = None
#: :func:`available_ops`' answer, until a generator is registered
_AVAILABLE: list[str] | None = None


def _load() -> None:
    global _LOADED
    if _LOADED is FAMILIES:
        return
    for mod in FAMILIES:
        importlib.import_module(mod)
    _LOADED = FAMILIES


def load_patterns() -> None:
    """Import the layer-pattern families of :data:`FAMILIES` (their declarations,
    :data:`conformance.patterns.core.PATTERNS`) and not the operator table: what a bundle's
    coverage needs of the table where its manifest records the rest."""
    for mod in FAMILIES:
        if mod.startswith(f"{__package__}.patterns."):
            importlib.import_module(mod)


def _names(keys) -> dict[tuple[str, str], str]:
    """The name of every (domain, op) key of ``keys``: the type alone, or ``domain:op`` where two
    domains share the type."""
    per_type = Counter(o for _, o in keys)
    return {(d, o): f"{d}:{o}" if per_type[o] > 1 and d else o for d, o in keys}


def resolve(name: str, table=None) -> tuple[str, str]:
    """The (domain, op) key of an operator name: ``Op`` (unique among the registered domains;
    ai.onnx wins over a contrib operator of the same type) or ``domain:Op``.

    Raises:
        KeyError: no such operator (the message lists the known ones).
    """
    table = _REGISTRY if table is None else table
    if ":" in name:
        domain, op = name.rsplit(":", 1)
        key = ("" if domain in ("", "ai.onnx") else domain, op)
        if key in table:
            return key
    else:
        hits = [k for k in table if k[1] == name]
        if hits:
            return ("", name) if ("", name) in hits else sorted(hits)[0]
    raise KeyError(f"no generator for operator {name!r}; known: {', '.join(sorted(_names(table).values())) or 'none'}")


def available_ops() -> list[str]:
    """Names of all operators that have a generator (``domain:Op`` only where two domains share
    an operator type)."""
    global _AVAILABLE
    _load()
    if _AVAILABLE is None:
        names = _names(_REGISTRY)
        _AVAILABLE = sorted(names[k] for k, info in _REGISTRY.items() if _why_not(info) is None)
    return list(_AVAILABLE)


@lru_cache(maxsize=None)
def _why_not(info: GeneratorInfo) -> str | None:
    """Why ``info``'s generator cannot run with the installed libraries (None: it can)."""
    return info.unavailable() if info.unavailable is not None else None


def get(op: str) -> GeneratorInfo:
    """The generator of ``op``.

    Raises:
        KeyError: no generator for ``op`` (the message lists the known ones).
    """
    _load()
    info = _REGISTRY[resolve(op)]
    why = _why_not(info)
    if why is not None:
        raise KeyError(f"operator {op!r} cannot be generated here: {why}")
    return info


def family(op: str, domain: str = "") -> str:
    """The family of operator ``op`` (type or ``domain:Op``; ``domain`` given apart is also
    accepted), as reports group operators; ``"other"`` for an operator without a generator
    (a foreign suite's)."""
    _load()
    try:
        return _REGISTRY[resolve(f"{domain}:{op}" if domain and ":" not in op else op)].family
    except KeyError:
        return "other"


def op_seed(seed: int, op: str) -> int:
    """Seed of one operator's generator, independent of which other ops are generated."""
    return int(np.random.SeedSequence([seed, zlib.crc32(op.encode())]).generate_state(1, np.uint32)[0])


def case_rng(seed: int, *key: int | str) -> np.random.Generator:
    """An independent, reproducible random stream for one case, keyed by ``seed`` and ``key``."""
    # SeedSequence takes non-negative words: strings by CRC-32, negative ints by zigzag.
    words = [seed] + [zlib.crc32(k.encode()) if isinstance(k, str) else (2 * k if k >= 0 else -2 * k - 1)
                      for k in map(lambda k: k if isinstance(k, str) else int(k), key)]
    return np.random.default_rng(np.random.SeedSequence(words))


#: Suite depths: ``full`` (every case: nightly and compliance runs) and ``smoke`` (a fixed
#: subset with every version and type combination of every operator at least once, and one
#: invalid model per version: pull-request CI).
DEPTHS = ("full", "smoke")


def smoke_selection(cases: Iterable[Case]) -> list[Case]:
    """The smoke subset of one operator's ``cases`` (for generators that do not select it
    themselves): the first value case of every (version, combination of input/output element
    types) and the first error case of every version, in generation order."""
    seen, out = set(), []
    for c in cases:
        if c.expect_error is not None:
            key = ("error", c.since_version)
        else:
            key = (c.since_version, tuple(i.elem_type for i in c.inputs if i.present),
                   tuple(o.elem_type for o in c.outputs if o.present))
        if key not in seen:
            seen.add(key)
            out.append(c)
    return out


def generate(ops: Iterable[str], seed: int = 0, depth: str = "full") -> list[Case]:
    """Generate the cases of ``ops`` with ``seed``, in a deterministic order.

    Args:
        depth: ``"full"`` or ``"smoke"`` (:data:`DEPTHS`): a smoke case is the full suite's
            case of the same id, byte for byte.

    Each case's expected outputs leave here with canonical NaNs
    (:func:`conformance.case.canonicalise_nans`), the point where a generated case is fixed.

    Raises:
        KeyError: an unknown operator.
        ValueError: two cases of the suite have the same id, or an unknown depth.
    """
    if depth not in DEPTHS:
        raise ValueError(f"unknown depth {depth!r}; known: {', '.join(DEPTHS)}")
    cases: list[Case] = []
    for op in ops:
        info = get(op)
        if depth == "full":
            made = info.fn(op_seed(seed, op))
        elif info.depths:
            made = info.fn(op_seed(seed, op), depth)
        else:
            made = smoke_selection(info.fn(op_seed(seed, op)))
        for case in made:
            case.generator = f"{info.name}@{info.version}"
            case.seed = seed
            canonicalise_nans(case)
            cases.append(case)
    seen: dict[str, Case] = {}
    for c in cases:
        if c.id in seen:
            raise ValueError(f"duplicate case id {c.id}")
        seen[c.id] = c
    return cases


# ----------------------------------------------------------------------------- explore-mode strategies
#: op -> zero-argument builder of a hypothesis strategy of value :class:`Case` objects.
_STRATEGIES: dict[tuple[str, str], Callable[[], object]] = {}


def register_strategy(op: str, *, domain: str = "") -> Callable:
    """Decorator registering ``fn() -> hypothesis.strategies.SearchStrategy[Case]`` for ``op``.

    The strategy draws fresh value cases for explore mode (``pytest
    --conformance-explore``, :mod:`conformance.explore`).  Every parameter (dtype,
    shape dims, axis, optional outputs, epsilon, numerics class, the data seed...) is
    drawn with hypothesis, so a failing case shrinks towards small shapes and simple
    parameters.  ``fn`` is called lazily, so the generator module need not import
    hypothesis at import time.  Registering does not change :func:`generate`.

    Args:
        op: operator type (the same name as its :func:`register`-ed generator).
    """

    def deco(fn):
        _STRATEGIES[(domain, op)] = fn
        return fn

    return deco


def strategy_ops() -> list[str]:
    """Names of the operators that have an explore-mode strategy."""
    _load()
    return sorted(_names(_STRATEGIES).values())


def get_strategy(op: str):
    """A fresh hypothesis strategy of cases of ``op`` (see :func:`register_strategy`).

    Raises:
        KeyError: no strategy for ``op`` (the message lists the known ones).
    """
    _load()
    try:
        key = resolve(op, _STRATEGIES)
    except KeyError:
        raise KeyError(f"no explore strategy for operator {op!r}; known: {', '.join(strategy_ops()) or 'none'}") from None
    return _STRATEGIES[key]()


def strategy_name(op: str) -> str:
    """``module.function`` of the strategy builder of ``op`` (recorded as the cases' generator).

    Raises:
        KeyError: no strategy for ``op``.
    """
    _load()
    try:
        fn = _STRATEGIES[resolve(op, _STRATEGIES)]
    except KeyError:
        raise KeyError(f"no explore strategy for operator {op!r}") from None
    return f"{fn.__module__}.{fn.__qualname__}"
