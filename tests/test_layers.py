"""The layer contract, read from the source: imports go one way only.

``sphinxext`` > ``render`` > ``site`` > ``trace``.  Trace logs are untrusted, so the trace
model and the page views are plain Python that never meets a markup parser: only
``sphinxext`` turns them into docutils nodes.  ``nox -s lint`` checks the same contract
with import-linter (``[tool.importlinter]`` in pyproject.toml); this test needs no tool, so
every run of the suite keeps it.
"""

from __future__ import annotations

import ast
import sys
from collections import deque
from collections.abc import Iterator
from dataclasses import dataclass
from importlib.metadata import distribution
from pathlib import Path

from packaging.requirements import Requirement

if sys.version_info >= (3, 11):
    import tomllib
else:  # pytest brings tomli to Python 3.10
    import tomli as tomllib  # type: ignore[import-not-found,unused-ignore]

REPO = Path(__file__).resolve().parents[1]
PACKAGE = "sphinx_torchtrace"
#: Lowest first: a layer may import the ones before it, never one after it.
LAYERS = [
    f"{PACKAGE}.trace",
    f"{PACKAGE}.site",
    f"{PACKAGE}.render",
    f"{PACKAGE}.sphinxext",
    f"{PACKAGE}.cli",  # the command line: above everything, Sphinx only through sphinxext
]
SPHINX_STACK = {"sphinx", "docutils"}


@dataclass(frozen=True)
class Import:
    importer: str
    imported: str
    line: int

    def __str__(self) -> str:
        return f"{self.importer} -> {self.imported} (l.{self.line})"


def module_files() -> dict[str, Path]:
    """Every module of the package by dotted name; a package is its ``__init__``."""
    modules = {}
    for path in sorted((REPO / PACKAGE).rglob("*.py")):
        parts = list(path.relative_to(REPO).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        modules[".".join(parts)] = path
    return modules


MODULES = module_files()


def imports_of(module: str) -> Iterator[Import]:
    """What ``module`` imports, relative imports made absolute, wherever they stand.

    Imports inside functions and ``if TYPE_CHECKING:`` count: a page view that names a
    Sphinx type has learnt about Sphinx all the same.
    """
    path = MODULES[module]
    is_package = path.name == "__init__.py"
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield Import(module, alias.name, node.lineno)
        elif isinstance(node, ast.ImportFrom):
            base = _absolute(module, is_package, node.level, node.module)
            targets = {f"{base}.{alias.name}" for alias in node.names}
            for target in sorted({name if name in MODULES else base for name in targets}):
                yield Import(module, target, node.lineno)


def _absolute(module: str, is_package: bool, level: int, name: str | None) -> str:
    """The module a ``from ... import`` names, as an absolute dotted name."""
    if level == 0:
        return name or ""
    parts = module.split(".")
    keep = len(parts) - level + (1 if is_package else 0)
    base = parts[:keep]
    return ".".join([*base, name] if name else base)


def _known_module(name: str) -> str | None:
    """The package module an import lands in (``a.b.Class`` is in ``a.b``), or None."""
    while name and name not in MODULES:
        name = name.rpartition(".")[0]
    return name or None


def within(module: str, package: str) -> bool:
    return module == package or module.startswith(package + ".")


def layer_of(module: str) -> int | None:
    """The layer's rank, lowest 0; None for a module outside the layers."""
    return next((rank for rank, layer in enumerate(LAYERS) if within(module, layer)), None)


def edges() -> dict[str, list[Import]]:
    """Imports between the package's own modules.

    The package's ``__init__`` is left out as an importer: its ``setup()`` is Sphinx's
    entry point and imports ``sphinxext`` only when Sphinx calls it, while lower layers
    import the package for ``__version__`` alone.
    """
    graph: dict[str, list[Import]] = {module: [] for module in MODULES}
    for module in MODULES:
        if module == PACKAGE:
            continue
        for found in imports_of(module):
            target = _known_module(found.imported)
            if target is not None and target != module:
                graph[module].append(Import(module, target, found.line))
    return graph


def chain_upwards(start: str, graph: dict[str, list[Import]]) -> list[Import] | None:
    """The shortest chain of imports from ``start`` to a module of a higher layer, if any."""
    own = layer_of(start)
    assert own is not None
    came_by: dict[str, Import | None] = {start: None}
    queue = deque([start])
    while queue:
        module = queue.popleft()
        for step in graph[module]:
            if step.imported in came_by:
                continue
            came_by[step.imported] = step
            higher = layer_of(step.imported)
            if higher is not None and higher > own:
                return _walk_back(step.imported, came_by)
            queue.append(step.imported)
    return None


def _walk_back(end: str, came_by: dict[str, Import | None]) -> list[Import]:
    chain = []
    step = came_by[end]
    while step is not None:
        chain.append(step)
        step = came_by[step.importer]
    return chain[::-1]


def all_imports() -> Iterator[Import]:
    for module in MODULES:
        yield from imports_of(module)


def test_the_layers_exist() -> None:
    """A renamed layer would make every other check here pass on nothing."""
    assert [layer for layer in LAYERS if layer not in MODULES] == []


def test_no_layer_reaches_a_higher_one() -> None:
    graph = edges()
    broken = []
    for module in MODULES:
        if layer_of(module) is not None and (chain := chain_upwards(module, graph)):
            broken.append(" then ".join(str(step) for step in chain))
    assert not broken, "\n".join(broken)


#: Inside ``trace``, lowest first: the model's own modules (records, the dataclasses, compile
#: ids, statuses and digests, what ran), then reading inputs into them, then what is worked
#: out from the model, then comparing runs, then sharing.  ``nox -s lint`` checks the same
#: with import-linter.
TRACE_ROOMS = ["inputs", "analyses", "comparing", "sharing"]


def trace_room(module: str) -> int | None:
    """The room's rank inside ``trace`` (0: the model's own modules), None outside it."""
    trace = f"{PACKAGE}.trace"
    if not within(module, trace) or module == trace or within(module, f"{trace}.runtime_boot"):
        return None
    first = module[len(trace) + 1 :].partition(".")[0]
    return TRACE_ROOMS.index(first) + 1 if first in TRACE_ROOMS else 0


def test_trace_rooms_exist() -> None:
    assert [r for r in TRACE_ROOMS if f"{PACKAGE}.trace.{r}" not in MODULES] == []


def test_no_trace_room_imports_a_higher_one() -> None:
    """Reading an input builds the model and uses nothing worked out from it (analyses),
    nor the comparison of runs or sharing; the model's own modules import none of the rooms."""
    broken = []
    for module in MODULES:
        own = trace_room(module)
        if own is None:
            continue
        for found in imports_of(module):
            target = _known_module(found.imported)
            other = trace_room(target) if target else None
            if other is not None and other > own:
                broken.append(str(found))
    assert not broken, "\n".join(broken)


def import_circles(graph: dict[str, list[str]]) -> list[list[str]]:
    """Every group of modules that import each other in a circle (Tarjan's strongly
    connected components of more than one module), each sorted."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    circles: list[list[str]] = []

    def visit(module: str) -> None:  # the package is small: recursion is fine
        index[module] = low[module] = len(index)
        stack.append(module)
        on_stack.add(module)
        for other in graph.get(module, ()):
            if other not in index:
                visit(other)
                low[module] = min(low[module], low[other])
            elif other in on_stack:
                low[module] = min(low[module], index[other])
        if low[module] == index[module]:
            group = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                group.append(member)
                if member == module:
                    break
            if len(group) > 1:
                circles.append(sorted(group))

    for module in sorted(graph):
        if module not in index:
            visit(module)
    return circles


def module_graph() -> dict[str, list[str]]:
    """Every import between the package's modules, the package's ``__init__`` and imports
    inside functions included (an import put in a function hides a circle, not ends it)."""
    graph: dict[str, list[str]] = {module: [] for module in MODULES}
    for found in all_imports():
        target = _known_module(found.imported)
        if target is not None and target != found.importer:
            graph[found.importer].append(target)
    return graph


def test_no_import_circle_between_any_modules() -> None:
    circles = import_circles(module_graph())
    assert not circles, "\n".join(" <-> ".join(c) for c in circles)


def test_the_circle_finder_finds_circles() -> None:
    """The circles the package once had, as the finder must report them."""
    before = {
        "trace.model": ["trace.status", "trace.text_log"],
        "trace.status": ["trace.model"],
        "trace.text_log": ["trace.builder", "trace.model"],
        "trace.builder": ["trace.model", "trace.status"],
        "sphinxext.generate": ["sphinxext.debug_dir"],
        "sphinxext.debug_dir": ["sphinxext.page"],
        "sphinxext.page": ["sphinxext.generate"],
        "trace.reader": [],
    }
    assert sorted(import_circles(before)) == [
        ["sphinxext.debug_dir", "sphinxext.generate", "sphinxext.page"],
        ["trace.builder", "trace.model", "trace.status", "trace.text_log"],
    ]


def test_only_sphinxext_imports_sphinx_or_docutils() -> None:
    broken = [
        str(found)
        for found in all_imports()
        if found.imported.partition(".")[0] in SPHINX_STACK
        and found.importer != PACKAGE  # the type of setup()'s argument
        and not within(found.importer, f"{PACKAGE}.sphinxext")
    ]
    assert not broken, "\n".join(broken)


def test_nothing_imports_jinja2() -> None:
    """Pages are built as data now, and jinja2 is no longer a dependency."""
    broken = [str(f) for f in all_imports() if f.imported.partition(".")[0] == "jinja2"]
    assert not broken, "\n".join(broken)


#: Code that runs in the profiled program's own Python (``run --runtime``), never in ours:
#: it imports torch, and the ``sitecustomize`` it stands in front of.
IN_THE_PROGRAM = f"{PACKAGE}.trace.runtime_boot"


def test_every_third_party_import_is_a_declared_dependency() -> None:
    """An import that only works because Sphinx happens to bring the package breaks the
    day Sphinx stops bringing it."""
    provided = {name for text in _declared_dependencies() for name in _import_names(text)}
    undeclared = [
        str(found)
        for found in all_imports()
        if not found.importer.startswith(IN_THE_PROGRAM)
        and (top := found.imported.partition(".")[0]) not in provided
        and top not in sys.stdlib_module_names
        and top not in (PACKAGE, "__future__")
    ]
    assert not undeclared, "\n".join(undeclared)


def _import_names(requirement: str) -> set[str]:
    """The top-level names an installed requirement provides, read off its file list.

    Python 3.10's ``packages_distributions`` reads only ``top_level.txt``, which wheels
    built by flit (Sphinx's) do not have.
    """
    files = distribution(Requirement(requirement).name).files or []
    names = set()
    for file in files:
        top = file.parts[0]
        if len(file.parts) == 1:
            top = top.removesuffix(".py") if top.endswith(".py") else ""
        if top and "." not in top and top != "__pycache__":
            names.add(top)
    return names


def _declared_dependencies() -> list[str]:
    with (REPO / "pyproject.toml").open("rb") as file:
        dependencies: list[str] = tomllib.load(file)["project"]["dependencies"]
    return dependencies
