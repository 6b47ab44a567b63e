"""The package's structure: an acyclic import graph in which the library never imports the
command line, and no test-only module in what the wheel installs.

The import graph is read from the source (``ast``), not by importing: every ``import`` and
``from ... import`` statement of every module under ``conformance/`` counts, at module level
and inside functions, classes and ``if TYPE_CHECKING:`` blocks alike, relative ones resolved
against the importing module's package.  ``from pkg import name`` is an edge to the module
``pkg.name`` when that is a module of the package, otherwise to ``pkg``.

Run as a script (``python tests/test_structure.py``) to print the cycles.
"""

from __future__ import annotations

import ast
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = "conformance"

# The command line: argparse and rich console code, at the top of the graph.  (The ``coverage``
# sub-command's parser and body are still in conformance.coverage, because tests/test_coverage.py
# imports add_coverage_command from there; they use conformance.errors, not the CLI.)
# conformance.reports.commands is an old import path of the report commands that
# tests/test_diff.py, test_package.py and test_junit.py still use (``main``); it only re-exports
# conformance.cli.main and is part of the CLI layer.
CLI_LAYER = ("conformance.cli", "conformance.reports.commands")
# Test tooling that must not be installed: modules that import these, and module names.
TEST_ONLY_IMPORTS = {"selenium", "pytest", "_pytest"}
PYTEST_PLUGIN = "conformance.pytest_plugin"  # the pytest plugin (entry point pytest11) may import pytest
TEST_ONLY_NAMES = ("synthetic", "cdp")


def module_files(root: Path = ROOT, package: str = PACKAGE) -> dict[str, Path]:
    """Map every module of ``package`` (dotted name; a package by its ``__init__``) to its file."""
    mods = {}
    for path in sorted((root / package).rglob("*.py")):
        parts = list(path.relative_to(root).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        mods[".".join(parts)] = path
    return mods


def _imports(tree: ast.AST, module: str, is_package: bool, modules: set[str]) -> set[str]:
    """The modules of the package that the statements in ``tree`` import."""
    here = module if is_package else module.rpartition(".")[0]
    out: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            targets = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = here.split(".")
                base = base[: len(base) - (node.level - 1)]
                base_name = ".".join(base + ([node.module] if node.module else []))
            else:
                base_name = node.module or ""
            targets = []
            for a in node.names:
                sub = f"{base_name}.{a.name}"
                targets.append(sub if sub in modules else base_name)
        else:
            continue
        for t in targets:
            # ``import a.b.c`` of a module that does not exist: its longest existing prefix
            while t and t not in modules:
                t = t.rpartition(".")[0]
            if t and t != module:
                out.add(t)
    return out


def import_graph(root: Path = ROOT, package: str = PACKAGE) -> dict[str, set[str]]:
    """The import graph of ``package`` under ``root``: module -> the package's modules it imports
    (module-level and function-level imports alike).  Raises SyntaxError for unparsable source."""
    files = module_files(root, package)
    names = set(files)
    graph = {}
    for mod, path in files.items():
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
        graph[mod] = _imports(tree, mod, path.name == "__init__.py", names)
    return graph


def find_cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan), each sorted: every
    import cycle lies inside one of them, and the graph is acyclic exactly when there are none."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    sccs: list[list[str]] = []
    counter = 0

    def visit(v: str) -> None:
        nonlocal counter
        index[v] = low[v] = counter
        counter += 1
        stack.append(v)
        on_stack.add(v)
        for w in sorted(graph.get(v, ())):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                sccs.append(sorted(comp))

    sys.setrecursionlimit(max(sys.getrecursionlimit(), 10 * len(graph) + 100))
    for v in sorted(graph):
        if v not in index:
            visit(v)
    return sorted(sccs)


def shortest_cycle(graph: dict[str, set[str]], scc: list[str]) -> list[str]:
    """One shortest import cycle inside the strongly connected component ``scc``, from its first
    module back to it (breadth-first), e.g. ``["a", "b", "a"]``."""
    start, members = scc[0], set(scc)
    parent: dict[str, str] = {}
    frontier = [start]
    while frontier:
        nxt = []
        for v in frontier:
            for w in sorted(graph[v] & members):
                if w == start:
                    path = [v]
                    while path[-1] != start:
                        path.append(parent[path[-1]])
                    return [start, *reversed(path[:-1]), start]
                if w not in parent:
                    parent[w] = v
                    nxt.append(w)
        frontier = nxt
    raise ValueError(f"{scc} is not a cycle")


def _in_layer(mod: str, layer) -> bool:
    return any(mod == p or mod.startswith(p + ".") for p in layer)


# ----------------------------------------------------------------------------- the checker itself
def _write(root: Path, files: dict[str, str]) -> None:
    for rel, text in files.items():
        p = root / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(text, encoding="utf-8")


def test_graph_resolves_relative_absolute_and_function_level_imports(tmp_path):
    _write(tmp_path, {
        "pkg/__init__.py": "",
        "pkg/a.py": "from .b import x\n",
        "pkg/b.py": "def f():\n    from pkg.sub import c\n",
        "pkg/sub/__init__.py": "from . import c\n",
        "pkg/sub/c.py": "import pkg.a\nfrom .. import d\nimport os\n",
        "pkg/d.py": "",
    })
    g = import_graph(tmp_path, "pkg")
    assert g == {"pkg": set(), "pkg.a": {"pkg.b"}, "pkg.b": {"pkg.sub.c"}, "pkg.sub": {"pkg.sub.c"},
                 "pkg.sub.c": {"pkg.a", "pkg.d"}, "pkg.d": set()}
    assert find_cycles(g) == [["pkg.a", "pkg.b", "pkg.sub.c"]]
    assert shortest_cycle(g, find_cycles(g)[0]) == ["pkg.a", "pkg.b", "pkg.sub.c", "pkg.a"]


def test_a_cycle_through_a_function_level_import_is_found(tmp_path):
    _write(tmp_path, {"pkg/__init__.py": "", "pkg/lib.py": "def f():\n    from .cli import UsageError\n",
                      "pkg/cli.py": "from . import lib\n"})
    assert find_cycles(import_graph(tmp_path, "pkg")) == [["pkg.cli", "pkg.lib"]]
    _write(tmp_path, {"pkg/lib.py": "def f():\n    pass\n"})
    assert find_cycles(import_graph(tmp_path, "pkg")) == []


# ----------------------------------------------------------------------------- the package
def test_no_import_cycles():
    graph = import_graph()
    cycles = find_cycles(graph)
    assert not cycles, "import cycles in conformance: " + "; ".join(
        f"{' -> '.join(shortest_cycle(graph, c))} (component: {', '.join(c)})" for c in cycles)


def test_the_library_never_imports_the_cli():
    graph = import_graph()
    assert "conformance.cli" in graph
    bad = {m: sorted(t for t in ts if _in_layer(t, CLI_LAYER))
           for m, ts in graph.items() if not _in_layer(m, CLI_LAYER)}
    bad = {m: ts for m, ts in bad.items() if ts}
    assert not bad, f"library modules import the command line: {bad}"


def find_test_tooling(root: Path = ROOT, package: str = PACKAGE) -> list[str]:
    """What in the wheel of ``package`` (the packages setuptools discovers under ``root``, with
    their modules) is test tooling: a module that imports selenium or pytest (pytest only
    outside the pytest plugin), or one named like the test helpers (synthetic results, a
    DevTools client).  One line per problem."""
    from setuptools import find_packages

    packages = find_packages(str(root), include=[f"{package}*"])
    problems = []
    for pkg in packages:
        for path in sorted((root / pkg.replace(".", "/")).glob("*.py")):
            mod = ".".join(path.relative_to(root).with_suffix("").parts).removesuffix(".__init__")
            if any(n in path.stem for n in TEST_ONLY_NAMES):
                problems.append(f"{mod}: test-only name")
            for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
                names = ([a.name for a in node.names] if isinstance(node, ast.Import)
                         else [node.module] if isinstance(node, ast.ImportFrom) and not node.level and node.module
                         else [])
                for n in names:
                    top = n.split(".")[0]
                    if top in TEST_ONLY_IMPORTS and not (mod == PYTEST_PLUGIN and top in ("pytest", "_pytest")):
                        problems.append(f"{mod}: imports {n}")
    return problems


def test_the_test_only_check_finds_test_tooling(tmp_path):
    _write(tmp_path, {
        "conformance/__init__.py": "",
        "conformance/pytest_plugin.py": "import pytest\n",
        "conformance/reports/__init__.py": "",
        "conformance/reports/synthetic.py": "",
        "conformance/reports/page.py": "def f():\n    from selenium import webdriver\n",
        "conformance/runner.py": "import _pytest.outcomes\n",
    })
    assert sorted(find_test_tooling(tmp_path)) == ["conformance.reports.page: imports selenium",
                                                    "conformance.reports.synthetic: test-only name",
                                                    "conformance.runner: imports _pytest.outcomes"]


def test_no_test_only_module_in_the_package():
    """The wheel holds no test tooling (:func:`find_test_tooling`): synthetic results and the
    browser driver live under tests/."""
    assert not find_test_tooling()


if __name__ == "__main__":
    graph = import_graph()
    cycles = find_cycles(graph)
    for c in cycles:
        print(" -> ".join(shortest_cycle(graph, c)), f"(component of {len(c)}: {', '.join(c)})")
    print(f"{len(cycles)} cycle(s)")
    sys.exit(1 if cycles else 0)
