"""Finding the ``torchtrace`` directives in a project's sources before Sphinx reads them.

Pages are generated at ``builder-inited``, before any source is parsed, so the
directives are found by a light scan of the source files: rST, and MyST's
fenced directives, skipping examples inside literal blocks and code fences.
Options are checked with the directive family's own parser (:mod:`.families`).
"""

from __future__ import annotations

import os
import re
from collections import deque
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from sphinx.application import Sphinx
from sphinx.util.matching import compile_matchers


def resolve_argument(
    argument: str, source_dir: str | os.PathLike[str], srcdir: str | os.PathLike[str]
) -> str:
    """A directive's path (its argument or a ``:with:`` path): relative to the page, or,
    with a leading ``/``, to the source folder."""
    if argument.startswith("/"):
        return os.path.normpath(os.path.join(srcdir, argument.lstrip("/")))
    return os.path.normpath(os.path.join(source_dir, argument))


def directive_patterns(name: str) -> tuple[re.Pattern[str], re.Pattern[str]]:
    """The rST and MyST openings of directive ``name`` (``torchtrace``, ``torchtrace-diff``):
    ``.. torchtrace:: path`` in rST (also inside eval-rst blocks of MyST) and
    ```` ```{torchtrace} path ```` / ``:::{torchtrace} path`` in MyST."""
    n = re.escape(name)
    return (
        re.compile(rf"^(?P<indent>[ \t]*)\.\.[ \t]+{n}::[ \t]*(?P<arg>\S.*?)\s*$"),
        re.compile(rf"^[ \t]*(?:`{{3,}}|~{{3,}}|:{{3,}})\{{{n}\}}[ \t]*(?P<arg>\S.*?)\s*$"),
    )


_RST_DIRECTIVE, _MYST_DIRECTIVE = directive_patterns("torchtrace")
SUPPORTED_SUFFIXES = (".rst", ".md", ".txt")
_OPTION = re.compile(r"^[ \t]*:(?P<key>[\w-]+):(?:[ \t]+(?P<value>.*?))?\s*$")


@dataclass
class DirectiveRequest:
    """One directive of any family (``torchtrace``, ``torchtrace-diff`` ...) found in a
    source file."""

    docname: str
    argument: str
    path: str  # absolute, once resolved
    raw_options: dict[str, str] = field(default_factory=dict)
    #: how many directives before it on its page have the same argument and ``:name:``
    #: (see :func:`.built.key`)
    nth: int = 0
    #: the line of its page it starts at (1-based; 0: not from a page): where a warning
    #: about what it published points
    line: int = 0

    def label(self) -> str:
        name = self.raw_options.get("name")
        if name and name.strip():
            return " ".join(name.split())
        p = Path(self.path)
        return p.stem if p.is_file() or p.suffix else p.name


def scan_sources(
    app: Sphinx, generated: str, directive: str = "torchtrace"
) -> list[DirectiveRequest]:
    """Find every ``directive`` (``torchtrace``) in the project's sources (rST and MyST)."""
    patterns = directive_patterns(directive)
    env = app.env
    env.find_files(app.config, app.builder)  # found_docs is stale on an incremental build
    generated = generated.rstrip("/") + "/"
    requests: list[DirectiveRequest] = []
    for docname in sorted(env.found_docs):
        if docname.startswith(generated):
            continue
        source = Path(env.doc2path(docname))
        if source.suffix not in SUPPORTED_SUFFIXES:
            continue
        try:
            text = source.read_text(encoding="utf-8", errors="replace")
        except OSError:
            continue
        if "torchtrace" not in text:
            continue
        requests.extend(_requests_in(docname, source, text.splitlines(), patterns))
    return requests


# Blocks whose text is shown, not parsed: a ``.. torchtrace::`` in them is an example.
_RST_LITERAL = re.compile(
    r"^[ \t]*\.\.[ \t]+(?:code-block|code|sourcecode|parsed-literal|literalinclude|doctest"
    r"|testcode|testoutput|prompt)::"
)
_FENCE = re.compile(r"^[ \t]*(?P<fence>`{3,}|~{3,}|:{3,})[ \t]*(?P<info>[^\s`]*)")
_MYST_LITERAL_DIRECTIVES = ("{code-block}", "{code}", "{sourcecode}", "{literalinclude}")


def _closes(line: str, fence: str) -> bool:
    stripped = line.strip()
    return stripped.startswith(fence) and set(stripped) == {fence[0]}


def _requests_in(
    docname: str,
    source: Path,
    lines: list[str],
    patterns: tuple[re.Pattern[str], re.Pattern[str]] = (_RST_DIRECTIVE, _MYST_DIRECTIVE),
) -> list[DirectiveRequest]:
    """The directives of one source, skipping examples in literal blocks and code fences."""
    found = []
    literal_indent: int | None = None  # inside an rST literal block opened at this indent
    literal_fence: str | None = None  # inside a Markdown code fence closed by this
    parsed_fences: list[str] = []  # open MyST directive fences ({note}, {eval-rst} ...)
    for i, line in enumerate(lines):
        stripped = line.strip()
        indent = len(line) - len(line.lstrip())
        if literal_fence is not None:
            if _closes(line, literal_fence):
                literal_fence = None
            continue
        if literal_indent is not None:
            if not stripped or indent > literal_indent:
                continue
            literal_indent = None
        if parsed_fences and _closes(line, parsed_fences[-1]):
            parsed_fences.pop()
            continue
        opening = _FENCE.match(line)
        if opening is not None:
            info = opening.group("info")
            # ```python, ```rst, ```{code-block}: shown; ```{eval-rst}, ```{note}: parsed
            if opening.group("fence")[0] != ":" and (
                not info.startswith("{") or info in _MYST_LITERAL_DIRECTIVES
            ):
                literal_fence = opening.group("fence")
                continue
            parsed_fences.append(opening.group("fence"))
        match = patterns[0].match(line) or patterns[1].match(line)
        if match is None:
            if _RST_LITERAL.match(line) or (
                stripped.endswith("::") and not stripped.startswith("..")
            ):
                literal_indent = indent
            continue
        found.append(
            DirectiveRequest(docname, match.group("arg"), "", _options_after(lines, i), line=i + 1)
        )
    seen: dict[tuple[str, str], int] = {}
    for request in found:
        same = (
            " ".join(request.argument.split()),
            " ".join((request.raw_options.get("name") or "").split()),
        )
        request.nth = seen.get(same, 0)
        seen[same] = request.nth + 1
    return found


def _options_after(lines: list[str], i: int) -> dict[str, str]:
    """``:key: value`` lines after a directive, or MyST's ``---`` YAML block."""
    options: dict[str, str] = {}
    following = lines[i + 1 :]
    if following and following[0].strip() == "---":
        for line in following[1:]:
            if line.strip() == "---":
                break
            key, sep, value = line.partition(":")
            if sep and key.strip():
                options[key.strip()] = value.strip().strip("\"'")
        return options
    for line in following:
        if not line.strip():
            if options:
                break
            continue
        opt = _OPTION.match(line)
        if opt is None:
            break
        options[opt.group("key")] = opt.group("value") or ""
    return options


#: A directive family's inputs: (its argument, its options) -> the paths they name.
NamedPaths = Callable[[str, Mapping[str, str]], list[str]]
_SOURCE_LIMIT = 8 << 20  # a source bigger than this is not a page anyone wrote


def source_suffixes(value: Any) -> tuple[str, ...]:
    """The suffixes of ``source_suffix`` in any of the forms Sphinx accepts."""
    if isinstance(value, str):
        return (value,)
    return tuple(value or (".rst",))


def input_paths(
    srcdir: str,
    suffixes: tuple[str, ...],
    exclude: list[str],
    directives: Mapping[str, NamedPaths],
    only: Iterable[str] | None = None,
) -> tuple[dict[str, str], set[str]]:
    """Every path the ``directives`` (name -> the paths one names) of the sources name
    (absolute, normalized) and the source that names it, and the set of sources read.

    Runs before Sphinx looks for documents (:mod:`.input_guard`), so it walks the source
    folder itself: breadth first, so that a page names its inputs before the walk reaches
    them, and never into an input found so far, a folder ``exclude`` matches, a folder seen
    before, or through a link that leaves the source folder.  ``only``: read these sources
    instead of walking."""
    found: dict[str, str] = {}
    scanned: set[str] = set()
    excluded = compile_matchers([*exclude, "**/_sources", ".#*", "**/.#*", "*.lproj/**"])
    patterns = {name: directive_patterns(name) for name in directives}

    def read(source: str) -> None:
        scanned.add(source)
        try:
            if os.path.getsize(source) > _SOURCE_LIMIT:
                return
            text = Path(source).read_text(encoding="utf-8", errors="replace")
        except OSError:
            return
        if "torchtrace" not in text:
            return
        lines = text.splitlines()
        folder = os.path.dirname(source)
        for name, named in directives.items():
            for request in _requests_in("", Path(source), lines, patterns[name]):
                for argument in named(request.argument, request.raw_options):
                    found.setdefault(resolve_argument(argument, folder, srcdir), source)

    if only is not None:
        for source in only:
            read(os.path.normpath(source))
        return found, scanned
    real_root = os.path.realpath(srcdir)
    seen = {real_root}
    queue = deque([srcdir])
    while queue:
        folder = queue.popleft()
        try:
            entries = sorted(os.scandir(folder), key=lambda e: e.name)
        except OSError:
            continue
        folders = []
        for entry in entries:
            relative = Path(os.path.relpath(entry.path, srcdir)).as_posix()
            if any(m(relative) for m in excluded):
                continue
            try:
                is_dir = entry.is_dir()
            except OSError:
                continue
            if not is_dir:
                if entry.name.endswith(suffixes):
                    read(os.path.normpath(entry.path))
            else:
                folders.append(entry.path)
        for path in folders:
            real = os.path.realpath(path)
            if (
                os.path.normpath(path) in found
                or real in seen
                or not (real + os.sep).startswith(real_root + os.sep)
            ):
                continue
            seen.add(real)
            queue.append(path)
    return found, scanned
