"""Finding the ``torchtrace`` directives in a project's sources before Sphinx reads them.

Pages are generated at ``builder-inited``, before any source is parsed, so the
directives are found by a light scan of the source files: rST, and MyST's
fenced directives, skipping examples inside literal blocks and code fences.
Options are checked with the directive's own parser (:mod:`.options`).
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field
from pathlib import Path

from sphinx.application import Sphinx

from .options import TraceOptions, parse_options


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
class TraceRequest:
    """One ``torchtrace`` directive found in a source file."""

    docname: str
    argument: str
    path: str  # absolute, once resolved
    raw_options: dict[str, str] = field(default_factory=dict)

    @property
    def options(self) -> TraceOptions:
        """The checked options (ValueError when one is invalid: see :func:`.parse_options`)."""
        return parse_options(self.raw_options)

    def label(self) -> str:
        name = self.raw_options.get("name")
        if name and name.strip():
            return " ".join(name.split())
        p = Path(self.path)
        return p.stem if p.is_file() or p.suffix else p.name


def scan_sources(
    app: Sphinx, generated: str, directive: str = "torchtrace"
) -> list[TraceRequest]:
    """Find every ``directive`` (``torchtrace``) in the project's sources (rST and MyST)."""
    patterns = directive_patterns(directive)
    env = app.env
    env.find_files(app.config, app.builder)  # found_docs is stale on an incremental build
    generated = generated.rstrip("/") + "/"
    requests: list[TraceRequest] = []
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
) -> list[TraceRequest]:
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
        found.append(TraceRequest(docname, match.group("arg"), "", _options_after(lines, i)))
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
