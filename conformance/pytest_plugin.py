"""pytest plugin: every conformance case is a pytest test; explore mode shrinks failures.

Installed with the package (entry point ``pytest11: onnx_conformance``), and dormant
unless asked for: in a run without any of ``--conformance-backend``,
``--conformance-ops``, ``--conformance-bundle`` or ``--conformance-explore`` it
registers no markers, collects nothing, imports nothing beyond this module (no onnx,
no numpy) and changes no outcome.  Only its options appear in ``pytest --help``
(a ``pytest11`` plugin cannot parse ``--conformance-backend`` without declaring it).
``-p no:onnx_conformance`` removes it altogether.

Conformance mode::

    pytest --conformance-backend onnxruntime --conformance-ops LayerNormalization -n auto
    pytest --conformance-backend mypkg.backend:MyBackend --conformance-bundle bundle \\
           --conformance-xfail xfail.toml --conformance-report report.html

One test per case, under the virtual collector ``onnx-conformance``, node id
``onnx-conformance::case[<case id>]``, in suite order (every xdist worker generates
the same suite from the seed).  Each case runs in a worker subprocess (the isolated
runner's worker, one per pytest process: :class:`conformance.isolation.IsolatedExecutor`), so a backend that
segfaults, aborts, hangs or eats memory fails that one test.  Outcomes:

==================================  ==========================================
conformance outcome                 pytest outcome
==================================  ==========================================
pass                                passed
fail, error, crash, timeout         failed (the message says which, and why)
unsupported                         skipped ("unsupported: ...")
skip                                skipped ("skip: ...")
xfail (``--conformance-xfail``)     xfailed
xpass                               failed ("[XPASS(strict)] ...")
==================================  ==========================================

xpass fails, as it makes ``onnx-conformance run`` exit with 1: a stale
expected-failure entry must be noticed.  The precise outcome is also recorded as the
``conformance_outcome`` user property (in ``--junitxml`` output as a property).

Markers (for ``-m``): ``conformance`` on every case (with keyword arguments ``op``,
``dtype``, ``domain``, ``opset``, ``since_version``, so ``-m "conformance(opset=17)"``
works), the operator (``LayerNormalization``), the dtype tag (``float16``,
``bfloat16``, ``float``, ``double``...), the domain (``ai_onnx`` for the default
domain, else the domain with non-word characters as ``_``: ``com_microsoft``),
``invalid_model`` on error cases, ``explore`` on explore-mode tests.  Example:
``-m "LayerNormalization and float16"``.

Explore mode (``--conformance-explore``): one test per operator, ``onnx-conformance::
explore[<op>]``, drawing ``--conformance-max-examples`` fresh cases from the
operator's hypothesis strategy (:mod:`conformance.explore`); a failure is shrunk to a
minimal case, saved with ``--conformance-save-failures DIR`` as a bundle, and the
failure message prints the command that reruns it.

A backend object instead of a name: define the hook ``pytest_conformance_backend(config)``
in the rootdir's ``conftest.py`` (or any plugin); it returns a
:class:`conformance.backends.Backend`, an ``onnx.backend.base.Backend`` subclass or
instance, or a spec string, and is consulted when ``--conformance-backend`` is not
given.  Workers are forked, so the object is inherited, not pickled.
"""

from __future__ import annotations

import json
import re
import time
from pathlib import Path

import pytest

#: Options that switch the plugin on.
ACTIVATING = ("conformance_backend", "conformance_ops", "conformance_bundle", "conformance_explore")
#: Node id of the virtual collector every conformance test hangs from.
ROOT = "onnx-conformance"
#: Marker names we never add (pytest's own); an op or dtype of that name gets no marker.
_RESERVED = {"skip", "skipif", "xfail", "parametrize", "usefixtures", "filterwarnings", "tryfirst", "trylast",
             "conformance", "explore", "invalid_model"}


# ----------------------------------------------------------------------------- always registered
def pytest_addoption(parser: pytest.Parser) -> None:
    """Declare the ``--conformance-*`` options (nothing happens unless one of them is used)."""
    g = parser.getgroup("onnx-conformance", "onnx-conformance: run conformance cases as tests (inactive unless used)")
    g.addoption("--conformance-backend", metavar="SPEC",
                help="backend under test: onnxruntime, onnx-reference, ... or package.module:Attr (as in "
                     "'onnx-conformance run --backend'); default: the conftest hook pytest_conformance_backend")
    g.addoption("--conformance-backend-option", action="append", metavar="KEY=VALUE", default=[],
                help="backend option (repeatable)")
    g.addoption("--conformance-ops", metavar="OPS",
                help="generate cases for these operators (comma-separated, or 'all'; default all)")
    g.addoption("--conformance-seed", type=int, default=0, metavar="N", help="generation seed for --conformance-ops")
    g.addoption("--conformance-bundle", metavar="DIR", help="run the cases of a bundle written by 'generate'")
    g.addoption("--conformance-xfail", metavar="FILE", help="expected-failure file (TOML): failures become xfailed")
    g.addoption("--conformance-report", metavar="FILE", help="write the HTML report of the run's cases to FILE")
    g.addoption("--conformance-results", metavar="FILE", help="write the results document (results.json) to FILE")
    g.addoption("--conformance-timeout", type=float, default=None, metavar="S",
                help="per-case deadline in seconds (default 120); past it the case fails as 'timeout'")
    g.addoption("--conformance-memory-limit", type=float, default=None, metavar="MIB",
                help="kill a case's worker whose resident memory exceeds this (default 4096; 0: no limit)")
    g.addoption("--conformance-explore", action="store_true", default=False,
                help="explore mode: one test per operator drawing fresh cases with hypothesis, failures shrunk")
    g.addoption("--conformance-max-examples", type=int, default=None, metavar="N",
                help="explore mode: examples per operator (default 100)")
    g.addoption("--conformance-derandomize", action="store_true", default=False,
                help="explore mode: draw the same examples on every run")
    g.addoption("--conformance-save-failures", metavar="DIR",
                help="explore mode: save each minimal failing case as a one-case bundle under DIR")


class _HookSpecs:
    @pytest.hookspec(firstresult=True)
    def pytest_conformance_backend(self, config: pytest.Config):
        """Return the backend for onnx-conformance tests when ``--conformance-backend`` is not given.

        A :class:`conformance.backends.Backend`, an ``onnx.backend.base.Backend`` subclass
        or instance, or a backend spec string.  Define it in the rootdir's ``conftest.py``.
        """


def pytest_addhooks(pluginmanager) -> None:
    """Declare the ``pytest_conformance_backend`` hook (so conftest files may implement it)."""
    pluginmanager.add_hookspecs(_HookSpecs)


def is_active(config: pytest.Config) -> bool:
    """True when one of the options in :data:`ACTIVATING` was given."""
    return any(config.getoption(name, default=None) for name in ACTIVATING)


def pytest_configure(config: pytest.Config) -> None:
    """Switch the plugin on (register :class:`ConformancePlugin`) when one of its options is used."""
    if is_active(config):
        config.pluginmanager.register(ConformancePlugin(config), "onnx-conformance-session")


# ----------------------------------------------------------------------------- nodes
def marker_name(text: str) -> str:
    """A marker name for an operator, dtype or domain: non-word characters become ``_``."""
    name = re.sub(r"\W", "_", str(text))
    return name if name and not name[0].isdigit() else f"_{name}"


def domain_marker(domain: str) -> str:
    """``ai_onnx`` for the default domain, else :func:`marker_name` of the domain."""
    return "ai_onnx" if domain in ("", "ai.onnx") else marker_name(domain)


class ConformanceCollector(pytest.Collector):
    """The virtual parent (node id ``onnx-conformance``) of every conformance test."""

    def __init__(self, *, plugin: ConformancePlugin, **kw):
        super().__init__(**kw)
        self.plugin = plugin

    def collect(self) -> list[pytest.Item]:
        """One :class:`ExploreItem` per operator (explore mode), else one :class:`CaseItem` per case."""
        p = self.plugin
        if p.explore:
            return [ExploreItem.from_parent(self, name=f"explore[{op}]", nodeid=f"{ROOT}::explore[{op}]", op=op,
                                            plugin=p) for op in p.ops]
        suite = p.load_suite()
        names = dict.fromkeys(name for c in suite.cases for name in p.marker_names(c))
        p._register_markers(f"{name}: onnx-conformance cases ({name})" for name in names)
        return [CaseItem.from_parent(self, name=f"case[{case.id}]", nodeid=f"{ROOT}::case[{case.id}]", case=case,
                                     index=i, plugin=p) for i, case in enumerate(suite.cases)]


class CaseFailed(Exception):
    """A case ended in fail, error, crash, timeout or xpass."""

    def __init__(self, result, text: str):
        super().__init__(text)
        self.result = result
        self.text = text


class CaseItem(pytest.Item):
    """One conformance case, run in a worker subprocess."""

    def __init__(self, *, case, index: int, plugin: ConformancePlugin, **kw):
        super().__init__(**kw)
        self.case = case
        self.index = index
        self.plugin = plugin
        self.result = None
        for name in plugin.marker_names(case):
            self.add_marker(name)
        self.add_marker(pytest.mark.conformance(op=case.op, dtype=case.dtype, domain=case.domain or "ai.onnx",
                                                opset=case.opset, since_version=case.since_version))
        if case.expect_error is not None:
            self.add_marker("invalid_model")

    def runtest(self) -> None:
        """Run the case; map its outcome to pytest's (module docstring)."""
        res = self.plugin.run(self.case)
        self.result = res
        self.user_properties.append(("conformance_outcome", res.outcome))
        o = res.outcome
        if o == "pass":
            return
        if o == "unsupported":
            pytest.skip(f"unsupported: {_first_line(res.message)}")
        if o == "skip":
            pytest.skip(f"skip: {_first_line(res.message)}")
        if o == "xfail":
            pytest.xfail(_first_line(res.message))
        raise CaseFailed(res, self.plugin.failure_text(self.case, res))

    def repr_failure(self, excinfo, style=None):
        """The case's failure text instead of a traceback into the plugin."""
        if isinstance(excinfo.value, CaseFailed):
            return excinfo.value.text
        return super().repr_failure(excinfo, style=style)

    def reportinfo(self):
        """Location: the rootdir (there is no file), line 0, the test name."""
        return self.path, 0, self.name


class ExploreItem(pytest.Item):
    """Explore mode for one operator (:func:`conformance.explore.explore_op`)."""

    def __init__(self, *, op: str, plugin: ConformancePlugin, **kw):
        super().__init__(**kw)
        self.op = op
        self.plugin = plugin
        self.add_marker("explore")
        if op not in _RESERVED:
            self.add_marker(marker_name(op))

    def runtest(self) -> None:
        """Explore the operator; skip when every example was unsupported."""
        from collections import Counter

        from .explore import explore_op

        p = self.plugin
        counts: Counter = Counter()
        try:
            explore_op(self.op, p.run, max_examples=p.max_examples, derandomize=p.derandomize,
                       save_dir=p.save_failures, backend_spec=p.spec, backend_options=p.options, counts=counts)
        finally:
            self.user_properties.append(("conformance_examples", json.dumps(dict(sorted(counts.items())))))
        if counts and set(counts) <= {"unsupported", "skip"}:
            pytest.skip(f"unsupported: every one of {sum(counts.values())} examples of {self.op}")

    def repr_failure(self, excinfo, style=None):
        """The minimal failing case and how to reproduce it, instead of a traceback."""
        from .explore import ExploreFailure

        if isinstance(excinfo.value, ExploreFailure):
            return excinfo.value.render()
        return super().repr_failure(excinfo, style=style)

    def reportinfo(self):
        """Location: the rootdir (there is no file), line 0, the test name."""
        return self.path, 0, self.name


def _first_line(text: str, limit: int = 500) -> str:
    line = (text or "").strip().splitlines()[0] if (text or "").strip() else ""
    return line if len(line) <= limit else line[:limit] + " ..."


# ----------------------------------------------------------------------------- the active plugin
class ConformancePlugin:
    """Everything the plugin does once switched on; one instance per pytest process.

    Reads and checks the options (bad ones are a ``pytest.UsageError``, exit status 4),
    resolves the backend, adds one test per case (or per operator in explore mode) at
    collection, runs each in a worker subprocess, and -- in the process that sees
    every report (the only one, or the xdist controller) -- writes the results
    document and HTML report at the end.
    """

    def __init__(self, config: pytest.Config):
        from . import registry
        from .explore import DEFAULT_MAX_EXAMPLES
        from .isolation import DEFAULT_MEMORY_LIMIT_MB, DEFAULT_TIMEOUT

        self.config = config
        opt = config.getoption
        self.explore = bool(opt("conformance_explore"))
        self.bundle = opt("conformance_bundle")
        ops_text = opt("conformance_ops")
        self.seed = int(opt("conformance_seed"))
        timeout, mem, examples = (opt("conformance_timeout"), opt("conformance_memory_limit"),
                                  opt("conformance_max_examples"))
        self.timeout = DEFAULT_TIMEOUT if timeout is None else timeout
        self.memory_limit_mb = DEFAULT_MEMORY_LIMIT_MB if mem is None else mem
        self.max_examples = DEFAULT_MAX_EXAMPLES if examples is None else examples
        self.derandomize = bool(opt("conformance_derandomize"))
        base = Path(config.invocation_params.dir)
        self.save_failures = self._path(opt("conformance_save_failures"), base)
        self.report_path = self._path(opt("conformance_report"), base)
        self.results_path = self._path(opt("conformance_results"), base)
        self.xfail_path = self._path(opt("conformance_xfail"), base)
        if self.timeout <= 0:
            raise pytest.UsageError("--conformance-timeout must be > 0")
        if self.max_examples < 1:
            raise pytest.UsageError("--conformance-max-examples must be >= 1")
        if self.memory_limit_mb < 0:
            raise pytest.UsageError("--conformance-memory-limit must be >= 0 (0: no limit)")
        if self.bundle and ops_text:
            raise pytest.UsageError("give --conformance-bundle or --conformance-ops, not both")
        if self.bundle and self.explore:
            raise pytest.UsageError("explore mode draws fresh cases: --conformance-bundle does not apply")
        if self.bundle:
            self.bundle = self._path(self.bundle, base)
            if not (self.bundle / "manifest.json").is_file():
                raise pytest.UsageError(f"--conformance-bundle {self.bundle}: no manifest.json (not a bundle)")
        known = registry.strategy_ops() if self.explore else registry.available_ops()
        self.ops: list[str] = []
        if not self.bundle:
            names = [o.strip() for o in (ops_text or "all").split(",") if o.strip()]
            self.ops = known if names == ["all"] else list(dict.fromkeys(names))
            unknown = [o for o in self.ops if o not in known]
            if unknown:
                what = "with an explore strategy" if self.explore else "available"
                raise pytest.UsageError(f"--conformance-ops: unknown operator(s) {', '.join(unknown)}; "
                                        f"{what}: {', '.join(known)}")
        self.entries = []
        if self.xfail_path:
            from .xfail import ExpectedFailureError, load_expected_failures

            try:
                self.entries = load_expected_failures(self.xfail_path)
            except ExpectedFailureError as exc:
                raise pytest.UsageError(str(exc)) from None
        self.backend, self.spec, self.options = self._resolve_backend()
        self.results: dict[int, dict] = {}
        self.executor = None  # conformance.isolation.IsolatedExecutor, made when the first case runs
        self.started = time.perf_counter()
        self._register_markers(["conformance(op, dtype, domain, opset, since_version): an onnx-conformance case",
                                "explore: an onnx-conformance explore-mode test (one per operator)",
                                "invalid_model: an onnx-conformance error case (the model must be rejected)"])
        from .dtypes import FLOAT_TYPES, type_name

        self._register_markers(f"{marker_name(op)}: onnx-conformance cases of operator {op}" for op in self.ops)
        self._register_markers(f"{type_name(t)}: onnx-conformance cases of dtype {type_name(t)}" for t in FLOAT_TYPES)
        self._register_markers(["ai_onnx: onnx-conformance cases of the default domain (ai.onnx)"])

    @staticmethod
    def _path(value, base: Path) -> Path | None:
        if not value:
            return None
        p = Path(value).expanduser()
        return p if p.is_absolute() else base / p

    def _resolve_backend(self):
        from .backends import parse_options, resolve_backend

        try:
            options = parse_options(self.config.getoption("conformance_backend_option"))
        except ValueError as exc:
            raise pytest.UsageError(str(exc)) from None
        spec = self.config.getoption("conformance_backend")
        obj = spec
        if not spec:
            obj = self.config.hook.pytest_conformance_backend(config=self.config)
            if obj is None:
                raise pytest.UsageError("no backend: give --conformance-backend SPEC, or define "
                                        "pytest_conformance_backend(config) in conftest.py")
            spec = obj if isinstance(obj, str) else None
        try:
            backend = resolve_backend(obj, options)
        except (ValueError, ImportError) as exc:
            raise pytest.UsageError(f"backend {spec or obj!r}: {exc}") from None
        return backend, spec, options

    def _register_markers(self, lines) -> None:
        """Register marker lines (``name: help``) whose names are not registered yet."""
        known = {line.split(":")[0].split("(")[0].strip() for line in self.config.getini("markers")}
        for line in lines:
            name = line.split(":")[0].split("(")[0].strip()
            if name not in known:
                self.config.addinivalue_line("markers", line)
                known.add(name)

    def marker_names(self, case) -> list[str]:
        """Marker names of ``case``: its operator, dtype tag and domain (see module docstring)."""
        names = [marker_name(case.op), domain_marker(case.domain)]
        if case.dtype:
            names.append(marker_name(case.dtype))
        return [n for n in dict.fromkeys(names) if n not in _RESERVED]

    # -- running
    def run(self, case):
        """Run ``case`` in the worker subprocess; expected failures applied.  Returns a CaseResult."""
        from .xfail import apply_expected_failures

        if self.executor is None:
            from .isolation import IsolatedExecutor

            self.executor = IsolatedExecutor(self.backend, spec=self.spec, options=self.options,
                                             timeout=self.timeout, memory_limit_mb=self.memory_limit_mb)
        res = self.executor.run(case)
        if self.entries:
            apply_expected_failures([res], self.entries, self.backend.name)
        return res

    def run_info(self) -> dict:
        """The ``run`` record of the results document (how to reproduce the run)."""
        return {
            "runner": "pytest",
            "backend_spec": self.spec,
            "backend_options": dict(self.options),
            "suite": "bundle" if self.bundle else "generated",
            "bundle": str(self.bundle.resolve()) if self.bundle else None,
            "ops": list(self.ops),
            "seed": None if self.bundle else self.seed,
            "match": None,
            "xfail": str(self.xfail_path) if self.xfail_path else None,
            "timeout": self.timeout,
            "memory_limit_mb": self.memory_limit_mb,
            "argv": list(self.config.invocation_params.args),
        }

    def failure_text(self, case, res) -> str:
        """The failure message of a case: outcome, message, failing outputs, reproduction command."""
        from conformance.reports.common import repro_command

        head = f"{case.id}: {res.outcome}" + (f" at {res.phase}" if res.phase else "")
        if res.outcome == "xpass":
            head = f"[XPASS(strict)] {case.id}"
        # the message names every failing output: worst element, expected, actual, |err| vs tolerance
        lines = [head, f"  {res.message}" if res.message else ""]
        from .explore import describe_case

        lines.append(f"  case: {describe_case(case)}")
        run = self.run_info()
        cmd = repro_command(run, case.id, {"ops": self.ops, "seed": self.seed})
        if cmd is None and self.spec is None:
            run["backend_spec"] = "SPEC"
            cmd = repro_command(run, case.id, {"ops": self.ops, "seed": self.seed})
        if cmd:
            lines.append(f"  reproduce: {cmd}")
        return "\n".join(line for line in lines if line)

    # -- hooks
    def pytest_report_header(self, config):
        """One header line: the backend and its versions, and the suite."""
        env = self.backend.environment()
        what = (f"explore {', '.join(self.ops)} ({self.max_examples} examples each)" if self.explore else
                f"bundle {self.bundle}" if self.bundle else f"{', '.join(self.ops)} (seed {self.seed})")
        extra = ", ".join(f"{k} {v}" for k, v in env.items() if k != "backend" and isinstance(v, (str, int, float)))
        return [f"onnx-conformance: backend {env.get('backend', self.spec)}" + (f" ({extra})" if extra else "")
                + f"; {what}"]

    @pytest.hookimpl(tryfirst=True)
    def pytest_collection_modifyitems(self, session, config, items):
        """Append the conformance tests (before -m/-k/--lf/--deselect select among them)."""
        root = ConformanceCollector.from_parent(session, name=ROOT, nodeid=ROOT, plugin=self)
        new = root.collect()
        # a collect report, as for any collector: the terminal counts the items from it
        session.ihook.pytest_collectreport(report=pytest.CollectReport(root.nodeid, "passed", None, new))
        items.extend(new)

    def load_suite(self):
        """The suite under test: the bundle, or the generated cases of the ops (deterministic)."""
        if self.bundle:
            from .bundle import BundleError, read_bundle

            try:
                return read_bundle(self.bundle)
            except BundleError as exc:
                raise pytest.UsageError(f"cannot read bundle: {exc}") from None
        from .suite import generate_suite

        return generate_suite(self.ops, self.seed)

    @pytest.hookimpl(wrapper=True)
    def pytest_runtest_makereport(self, item, call):
        """Attach the case's outcome (and result, when a document is written) to its report."""
        rep = yield
        if call.when == "call" and isinstance(item, CaseItem) and item.result is not None:
            # travels with the report (also from xdist workers to the controller); the full
            # result only when a results document is asked for
            rep.conformance = {"index": item.index, "outcome": item.result.outcome}
            if self.report_path or self.results_path or self.entries:
                rep.conformance.update(content_hash=item.case.content_hash, result=item.result.to_json())
        return rep

    def pytest_runtest_logreport(self, report):
        """Collect the case results (in the xdist controller: from every worker)."""
        data = getattr(report, "conformance", None)
        if report.when == "call" and isinstance(data, dict):
            self.results[int(data["index"])] = data

    def _is_worker(self) -> bool:
        return hasattr(self.config, "workerinput")

    def results_document(self) -> tuple[dict, list]:
        """The results document of the cases run (suite order), and the stale expected failures."""
        from types import SimpleNamespace

        from .results import results_document
        from .runner import CaseResult
        from .suite import Suite, library_versions

        data = [self.results[k] for k in sorted(self.results)]
        results = [CaseResult.from_json(d["result"]) for d in data]
        stubs = [SimpleNamespace(id=r.id, content_hash=d["content_hash"]) for r, d in zip(results, data)]
        if self.bundle:
            try:
                m = json.loads((self.bundle / "manifest.json").read_text(encoding="utf-8"))
            except (OSError, ValueError):
                m = {}
            suite = Suite(cases=stubs, seed=m.get("seed"), ops=list(m.get("ops") or []),
                          generators=dict(m.get("generators") or {}), versions=dict(m.get("versions") or {}),
                          source=str(self.bundle.resolve()))
        else:
            from . import registry

            gens = {op: f"{registry.get(op).name}@{registry.get(op).version}" for op in self.ops}
            suite = Suite(cases=stubs, seed=self.seed, ops=list(self.ops), generators=gens,
                          versions=library_versions())
        env = self.backend.environment()
        doc = results_document(suite, env, results, time.perf_counter() - self.started, self.run_info())
        stale = []
        if self.entries:
            name = self.backend.name
            stale = [e for e in self.entries if (not e.backends or name in e.backends)
                     and not any(e.matches(r, name) for r in results)]
        doc["expected_failures"] = {"file": str(self.xfail_path) if self.xfail_path else None,
                                    "stale": [f"{e.source}: {e.id} ({e.reason})" for e in stale]}
        return doc, stale

    def pytest_unconfigure(self, config):
        """Stop the case worker."""
        if self.executor is not None:
            self.executor.close()
            self.executor = None

    def pytest_sessionfinish(self, session):
        """Write ``--conformance-results`` and ``--conformance-report`` (not in xdist workers)."""
        if self._is_worker() or not (self.report_path or self.results_path):
            return
        doc, _ = self.results_document()
        if self.results_path:
            from .results import write_results

            self.results_path.parent.mkdir(parents=True, exist_ok=True)
            write_results(doc, self.results_path)
        if self.report_path:
            from conformance.reports.html import write_html

            self.report_path.parent.mkdir(parents=True, exist_ok=True)
            write_html(doc, self.report_path)

    def pytest_terminal_summary(self, terminalreporter):
        """Outcome counts, stale expected failures and the files written."""
        if self._is_worker() or not self.results:
            return
        from collections import Counter

        counts = Counter(d["outcome"] for d in self.results.values())
        tr = terminalreporter
        tr.section("onnx-conformance")
        tr.write_line(f"{len(self.results)} cases on {self.backend.name}: "
                      + ", ".join(f"{k} {v}" for k, v in sorted(counts.items())))
        if self.entries:
            _, stale = self.results_document()
            for e in stale:
                tr.write_line(f"warning: expected failure matches no case run: {e.source}: {e.id} ({e.reason})")
        for label, path in (("results", self.results_path), ("report", self.report_path)):
            if path:
                tr.write_line(f"{label}: {path}")
