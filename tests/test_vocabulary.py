"""One word, one meaning, read from the source, as ``test_layers.py`` keeps the imports.

The "Words" glossary of ``demo_docs/guide/internals.md`` gives each concept of the house
one word.  ``kind`` had about twenty meanings, ``summary`` six, ``frame`` four; this test
parses every module of the package and refuses:

- a name (module, class, function, module constant, parameter or field) that uses ``kind``
  for anything but the category field of the object that holds it: an input's *format*, a
  family's *handler*, a page's *role*, a warning's *subtype*, a record's *event*, a graph
  break's *type*, what ranks diverge in (an *aspect*) each have their word;
- a field (or property) named ``kind`` whose type is not a closed set (a ``Literal`` or an
  ``Enum``): a kind is a category, and mypy checks every value given to it;
- ``summary`` for anything but the ``sphinx-torchtrace summary`` command and what it prints;
- the retired names of a frame (``FrameKey``: the glossary calls it a function).

Each refusal says the glossary's word to use.  A name built on ``kind`` that enumerates or
computes a category field is listed in :data:`KIND_NAMES` with the class whose ``kind`` it
is about, and the test checks that class has such a field.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator
from dataclasses import dataclass
from functools import cache
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
PACKAGE = REPO / "sphinx_torchtrace"
GLOSSARY = "the Words glossary (demo_docs/guide/internals.md)"

#: Names built on ``kind`` that speak of a category field: name -> the class holding it.
KIND_NAMES: dict[str, str] = {
    "KERNEL_KINDS": "Kernel",  # the values of Kernel.kind
    "KernelKind": "Kernel",
    "KERNEL_KIND_MEANINGS": "Kernel",  # the page's words for each
    "_HEURISTIC_KIND": "Kernel",
    "_PREFIX_KIND": "Kernel",
    "_backend_kind": "Kernel",
    "_triton_kind": "Kernel",
    "kernel_kinds": "Kernel",  # a comparison's kernels counted by kind
    "REGRESSION_KINDS": "Regression",
    "RATIO_KINDS": "Regression",
    "EXPORT_ISSUE_KINDS": "ExportIssue",
    "GUARD_KINDS": "GuardFailure",  # the patterns that tell each
    "REFINED_KINDS": "GuardFailure",
    "GUARD_KIND_NAMES": "GuardFailure",
    "CONTEXT_KINDS": "GuardFailure",
    "guard_kind": "GuardFailure",
}

#: Names where "kind" is the page's own word for the reader, not the code's.
PAGE_WORDS: dict[str, str] = {
    "kinds_text": "writes the pages' '(5 kinds, 6 places)'",
}

#: Retired names, with the glossary's word (and the name to use where one is settled).
RETIRED: dict[str, str] = {
    "detect_kind": "format: `detect_format`",
    "INPUT_KINDS": "format: `INPUT_FORMATS`",
    "input_kinds": "format: `input_formats`",
    "InputKind": "handler: `InputHandler`, the part of a family that takes one format",
    "TraceKind": "handler: `TraceHandler`",
    "DebugDirKind": "handler: `DebugDirHandler`",
    "CaptureKind": "handler: `CaptureHandler`",
    "DiffKind": "handler: `DiffHandler`",
    "TrendKind": "handler: `TrendHandler`",
    "kind_for": "handler: `handler_for`",
    "OPTION_KINDS": "format, as the options table names it: `OPTION_FORMATS`",
    "DIFF_KINDS": "format, as the options table names it: `DIFF_FORMATS`",
    "option_kind": "format, as the options table names it: `option_format`",
    "page_kind": "page role: `page_role`",
    "PAGE_KIND": "page role: `PAGE_ROLE`",
    "PAGE_KINDS": "event: `PAGED_EVENTS`, the events that get pages",
    "DiagnosticKind": "subtype: `DiagnosticSubtype`",
    "DIAGNOSTIC_KINDS": "subtype: `DIAGNOSTIC_SUBTYPES`",
    "SphinxKind": "subtype",
    "SPHINX_KINDS": "subtype",
    "UNREAD_KINDS": "subtype: `UNREAD_SUBTYPES`",
    "METRICS_KINDS": "event: `METRICS_EVENTS`",
    "TEXT_KIND": "event: `TEXT_EVENT`",
    "graph_break_kinds": "type: `graph_break_types` (pages and --json keep saying 'kinds')",
    "break_kinds": "type: `break_types`",
    "error_kinds": "type: `error_types`",
    "start_kind": "a vLLM view's `startup` (cold, warm)",
    "FAILURE_KINDS": "category: `CATEGORY_WORDS`, the words of each `Category`",
    "DIVERGENCE_KINDS": "aspect: `DIVERGENCE_ASPECTS`, what ranks diverge in",
    "diverging_kinds": "aspect: `diverging_aspects`",
    "FrameKey": "function: `RunFunction` (file, function, occurrence)",
    "summary_nodes": "inline nodes: `inline_nodes`, what a directive shows in the page",
    "summary_lines": "report: `report_lines`, what `diff` prints",
}

#: Where "summary" is the command: its own module and package, and what it prints.
SUMMARY_NAMES = {"summary_data", "summary_rows", "summary_text"}
SUMMARY_MODULES = {"sphinx_torchtrace/cli/commands/summary.py"}

#: Names still waiting for a file another piece of work holds; each must still exist (the
#: list only shrinks) and is refused again once it is gone from here.
PENDING: dict[str, str] = {}

KIND_WORDS = {"kind", "kinds"}
#: The glossary's words for what ``kind`` used to mean.
OTHER_WORDS = {"subtype", "format", "event", "role", "aspect"}
SUMMARY_WORDS = {"summary", "summaries"}
ENUM_BASES = {"Enum", "StrEnum", "IntEnum", "Flag", "IntFlag"}


def words(name: str) -> list[str]:
    """``DiagnosticKind`` -> diagnostic, kind; ``INPUT_KINDS`` -> input, kinds."""
    return [
        w.lower()
        for part in name.split("_")
        for w in re.findall(r"[A-Z]+(?![a-z])|[A-Z]?[a-z0-9]+", part)
    ]


@dataclass(frozen=True)
class Name:
    what: str  # module, class, function, constant, parameter, field
    name: str
    path: Path
    line: int
    node: ast.AST | None = None  # a field's or property's definition
    owner: str = ""  # the class of a field or method, the function of a parameter

    @property
    def key(self) -> str:
        """``Kernel.kind``, ``page_kind.plan``: how :data:`PENDING` names it."""
        return f"{self.owner}.{self.name}" if self.owner else self.name

    def __str__(self) -> str:
        return f"{self.path.relative_to(REPO)}:{self.line}: {self.what} {self.name!r}"


@cache
def _parsed() -> tuple[tuple[Path, ast.Module], ...]:
    return tuple(
        (path, ast.parse(path.read_text(encoding="utf-8"), str(path)))
        for path in sorted(PACKAGE.rglob("*.py"))
    )


def _trees() -> Iterator[tuple[Path, ast.Module]]:
    yield from _parsed()


def _targets(node: ast.stmt) -> list[str]:
    if isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
        return [node.target.id]
    if isinstance(node, ast.Assign):
        return [t.id for t in node.targets if isinstance(t, ast.Name)]
    return []


def _is_property(fn: ast.FunctionDef | ast.AsyncFunctionDef) -> bool:
    return any(
        isinstance(d, ast.Name)
        and d.id in {"property", "cached_property"}
        or isinstance(d, ast.Attribute)
        and d.attr == "cached_property"
        for d in fn.decorator_list
    )


def _function_names(
    fn: ast.FunctionDef | ast.AsyncFunctionDef, path: Path, owner: str
) -> Iterator[Name]:
    what = "property" if _is_property(fn) else "function"
    yield Name(what, fn.name, path, fn.lineno, fn, owner)
    a = fn.args
    for arg in [*a.posonlyargs, *a.args, *a.kwonlyargs, a.vararg, a.kwarg]:
        if arg is not None and arg.arg not in {"self", "cls"}:
            yield Name("parameter", arg.arg, path, arg.lineno, owner=fn.name)


def _body_names(body: list[ast.stmt], path: Path, owner: str) -> Iterator[Name]:
    """``owner``: the class whose body this is, "" for a module."""
    for node in body:
        if isinstance(node, ast.ClassDef):
            yield Name("class", node.name, path, node.lineno)
            yield from _body_names(node.body, path, node.name)
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            yield from _function_names(node, path, owner)
            for inner in ast.walk(node):  # nested functions and classes, not locals
                if inner is node:
                    continue
                if isinstance(inner, (ast.FunctionDef, ast.AsyncFunctionDef)):
                    yield from _function_names(inner, path, "")
                elif isinstance(inner, ast.ClassDef):
                    yield Name("class", inner.name, path, inner.lineno)
                    yield from _body_names(inner.body, path, inner.name)
        elif isinstance(node, (ast.Import, ast.ImportFrom)):  # a name given on import
            for alias in node.names:
                if alias.asname:
                    yield Name("constant", alias.asname, path, node.lineno)
        elif isinstance(node, (ast.If, ast.Try)):  # TYPE_CHECKING and version switches
            yield from _body_names(node.body, path, owner)
            yield from _body_names(node.orelse, path, owner)
        else:
            for target in _targets(node):
                yield Name("field" if owner else "constant", target, path, node.lineno, node, owner)


def all_names() -> list[Name]:
    names = []
    for path, tree in _trees():
        rel = path.relative_to(PACKAGE)
        for part in rel.with_suffix("").parts:
            names.append(Name("module", part, path, 1))
        names += _body_names(tree.body, path, "")
    return names


def _closed_types() -> set[str]:
    """Names of Enum classes and of type aliases that are Literals (or unions of them)."""
    closed: set[str] = set()
    aliases: dict[str, ast.expr] = {}
    for _, tree in _trees():
        for node in ast.walk(tree):
            if isinstance(node, ast.ClassDef) and any(
                (b.id if isinstance(b, ast.Name) else getattr(b, "attr", "")) in ENUM_BASES
                for b in node.bases
            ):
                closed.add(node.name)
        for node in tree.body:
            if isinstance(node, (ast.Assign, ast.AnnAssign)) and node.value is not None:
                for target in _targets(node):
                    aliases[target] = node.value
    changed = True
    while changed:  # an alias of an alias
        changed = False
        for name, value in aliases.items():
            if (
                name not in closed
                and not isinstance(value, ast.Constant)
                and _closed(value, closed)
            ):
                closed.add(name)
                changed = True
    return closed


def _closed(annotation: ast.expr | None, closed: set[str]) -> bool:
    if isinstance(annotation, ast.Constant) and isinstance(annotation.value, str):
        annotation = ast.parse(annotation.value, mode="eval").body  # a quoted annotation
    if isinstance(annotation, ast.Subscript):
        base = annotation.value
        return (base.id if isinstance(base, ast.Name) else getattr(base, "attr", "")) == "Literal"
    if isinstance(annotation, ast.Name):
        return annotation.id in closed
    if isinstance(annotation, ast.Attribute):
        return annotation.attr in closed
    if isinstance(annotation, ast.BinOp) and isinstance(annotation.op, ast.BitOr):
        return all(
            _closed(side, closed) or (isinstance(side, ast.Constant) and side.value is None)
            for side in (annotation.left, annotation.right)
        )
    return False


def _mentions_closed(annotation: ast.expr | None, closed: set[str]) -> bool:
    """``list[KernelKind]``, ``dict[KernelKind, int]``: a collection of a closed set."""
    return annotation is not None and any(
        isinstance(e, ast.expr) and _closed(e, closed) for e in ast.walk(annotation)
    )


def _glossary_word(annotation: ast.expr | None) -> str | None:
    """``DiagnosticSubtype`` -> subtype: a kind field typed by another word of the glossary."""
    for e in ast.walk(annotation) if annotation is not None else ():
        if isinstance(e, ast.Name) and words(e.id)[-1] in OTHER_WORDS:
            return words(e.id)[-1]
    return None


def _kind_field_type(name: Name) -> ast.expr | None:
    if isinstance(name.node, ast.AnnAssign):
        return name.node.annotation
    if isinstance(name.node, (ast.FunctionDef, ast.AsyncFunctionDef)):
        return name.node.returns
    return None


def _kind_fields(closed: set[str]) -> dict[str, bool]:
    """Class name -> whether its ``kind`` is a closed set, for every class with a ``kind``."""
    out: dict[str, bool] = {}
    for _, tree in _trees():
        for cls in ast.walk(tree):
            if not isinstance(cls, ast.ClassDef):
                continue
            for node in cls.body:
                if isinstance(node, ast.AnnAssign) and _targets(node) == ["kind"]:
                    out[cls.name] = _closed(node.annotation, closed)
                elif isinstance(node, ast.FunctionDef) and node.name == "kind":
                    out[cls.name] = _closed(node.returns, closed)
    return out


def refusals() -> list[str]:
    names = all_names()
    closed = _closed_types()
    kind_fields = _kind_fields(closed)
    kind_types = {
        e.id
        for n in names
        if n.name == "kind" and n.what in {"field", "property"}
        for e in ast.walk(_kind_field_type(n) or ast.Constant(None))
        if isinstance(e, ast.Name) and e.id in closed
    }
    out = []
    for n in names:
        if n.key in PENDING or (n.what == "module" and n.name in PENDING):
            continue
        w = set(words(n.name))
        rel = n.path.relative_to(REPO).as_posix()
        if n.name in RETIRED:
            out.append(f"{n}: retired; {GLOSSARY} says {RETIRED[n.name]}")
        elif n.what == "module" and w & KIND_WORDS:
            out.append(f"{n}: no module is named after `kind`: name what it holds ({GLOSSARY})")
        elif n.what == "module" and w & SUMMARY_WORDS and rel not in SUMMARY_MODULES:
            out.append(
                f"{n}: `summary` is the command only; name the module after the question it "
                f"answers ({GLOSSARY})"
            )
        elif n.name == "kind" and n.what in {"field", "property"}:
            said = _glossary_word(_kind_field_type(n))
            if said:
                out.append(f"{n}: its values are a {said}: name the field `{said}` ({GLOSSARY})")
            elif not _closed(_kind_field_type(n), closed):
                out.append(
                    f"{n}: a `kind` is a category: type it with a Literal or an Enum of its "
                    f"values, or name what it is (event, subtype, format, type ...: {GLOSSARY})"
                )
        elif n.name == "kinds" and n.what in {"field", "property"}:
            if not _mentions_closed(_kind_field_type(n), closed):
                out.append(
                    f"{n}: `kinds` holds categories of a closed set (a Literal or an Enum); "
                    f"name what it holds otherwise (a family's `handlers`, formats: {GLOSSARY})"
                )
        elif w & KIND_WORDS and n.name not in {"kind", "kinds"}:
            if n.name in PAGE_WORDS:
                continue
            holder = KIND_NAMES.get(n.name)
            if holder is None and n.name in kind_types:
                continue  # ``KernelKind``: the closed type of a kind field
            if holder is None:
                out.append(
                    f"{n}: `kind` is only the category field of the object holding it; name "
                    f"what this is (format, handler, page role, subtype, event, type, aspect: "
                    f"{GLOSSARY}), or list it in KIND_NAMES with the class whose kind it is"
                )
            elif not kind_fields.get(holder, False):
                out.append(f"{n}: KIND_NAMES says it is about {holder}.kind, a closed set: none")
        elif w & SUMMARY_WORDS and n.name not in SUMMARY_NAMES:
            if not rel.startswith("sphinx_torchtrace/cli/"):  # there, summary is the command
                out.append(
                    f"{n}: `summary` is the `sphinx-torchtrace summary` command only: name what "
                    f"this is (inline nodes, description, report, counts: {GLOSSARY})"
                )
    return out


def test_one_word_one_meaning() -> None:
    found = refusals()
    assert not found, "\n".join(found)


def test_pending_names_still_exist() -> None:
    """The list of names left to rename only shrinks: a name renamed leaves it."""
    present = {n.key for n in all_names()} | {n.name for n in all_names()}
    gone = sorted(set(PENDING) - present)
    assert not gone, f"renamed, so remove from PENDING: {gone}"


def test_the_glossary_has_each_word() -> None:
    text = (REPO / "demo_docs" / "guide" / "internals.md").read_text(encoding="utf-8")
    glossary = text[text.index("## Words") :]
    for word in (
        "kind",
        "format",
        "page role",
        "event",
        "subtype",
        "type",
        "aspect",
        "summary",
        "frame",
        "function",
    ):
        assert f"- **{word}**" in glossary, word
