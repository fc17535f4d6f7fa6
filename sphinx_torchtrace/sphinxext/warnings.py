"""Warnings: type ``torchtrace``, a stable subtype, each a :class:`WarningType` object.

Sphinx matches ``suppress_warnings`` entries as ``type.subtype``, so a user
silences one subtype with ``suppress_warnings = ["torchtrace.md5"]``.  A subtype is a
constant (:class:`WarningType`, its name and meaning together) passed to :func:`warn`:
mypy checks every call.  Lower layers, which know nothing of Sphinx, name theirs (a
diagnostic's ``DiagnosticSubtype``, a load note's, a regression's kind); each has its
constant in a table here or in its family, which a test holds complete.  The reader's subtypes
(:data:`DIAGNOSTICS`) and the extension's own (:data:`EXTENSION_WARNINGS`) are here; a
directive family declares its own (``Family.warnings``).  The docs' table
(``torchtrace-warnings``) loops over all of them, so a subtype cannot be documented
without its meaning, and a test finds any constant no table lists.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from docutils import nodes
from sphinx.util import logging

from ..site.characters import console_text
from ..trace.diagnostics import DIAGNOSTIC_SUBTYPES, DiagnosticSubtype


@dataclass(frozen=True)
class WarningType:
    """One ``torchtrace.<name>`` subtype and what it means (a row of the docs' table)."""

    name: str
    meaning: str


#: A (subtype, message) pair a generated input says at its directive's line.
Note = tuple[WarningType, str]

#: The reader's subtypes (:mod:`...trace.diagnostics`), one per :data:`DiagnosticSubtype`.
DIAGNOSTICS: dict[DiagnosticSubtype, WarningType] = {
    subtype: WarningType(subtype, meaning) for subtype, meaning in DIAGNOSTIC_SUBTYPES.items()
}


def diagnostic(subtype: DiagnosticSubtype) -> WarningType:
    """The warning of a reader's diagnostic (every :data:`DiagnosticSubtype` has one)."""
    return DIAGNOSTICS[subtype]


# The extension's own subtypes: options, configuration, references, what it publishes.
OPTION = WarningType("option", "a directive option has a value the directive does not accept")
CONFIG = WarningType("config", "a torchtrace_* configuration value is invalid; its default is used")
LABEL = WarningType("label", "two directives give their traces the same label")
DUPLICATE = WarningType("duplicate", "two pages declare the same frame, graph or kernel object")
AMBIGUOUS = WarningType(
    "ambiguous", "a role's target names more than one object; the first is linked"
)
PROVENANCE = WarningType(
    "provenance",
    "a provenance view names no frame, or its frame logged no node mappings",
)
PAGE = WarningType(
    "page",
    "a generated page no trace of this build knows (a stale file); it is left empty",
)
USER_FILES = WarningType(
    "user_files",
    "the generated folder holds files the extension did not write; they are kept",
)
INPUT_SOURCES = WarningType(
    "input_sources",
    "a folder a directive reads holds source files (.rst, .md ...): they are "
    "not published, since an input folder is data (keep your pages out of it)",
)
MOVED = WarningType(
    "moved",
    "after a recapture, an object name (run/[13/0]) stands for another function or "
    "file than in the last build: links to it in your pages may now mean something else",
)
PATH = WarningType(
    "path",
    "a page or download the extension made still holds an absolute machine path (under "
    "/home, /tmp, /srv ... or a Windows drive) after the path rewrites: add a rule to "
    "torchtrace_path_rewrites",
)
SECRET = WarningType(
    "secret",
    "a trace holds values that look secret (what the program read from its "
    "environment, tokens, private keys, passwords in URLs): they are published masked, and the "
    "warning names the first one's log line; or a page or download the extension made holds "
    "the value of one of the build's environment variables whose name looks secret (the "
    "variable is named, never its value); torchtrace_secrets_keep publishes what you vouch for",
)

#: The extension's own subtypes, in the docs' order (a family's come after: ``Family.warnings``).
EXTENSION_WARNINGS: tuple[WarningType, ...] = (
    OPTION,
    CONFIG,
    LABEL,
    DUPLICATE,
    AMBIGUOUS,
    PROVENANCE,
    PAGE,
    USER_FILES,
    INPUT_SOURCES,
    MOVED,
    PATH,
    SECRET,
)

logger = logging.getLogger("sphinx_torchtrace")


def warn(subtype: WarningType, message: str, location: Any = None) -> None:
    """One ``torchtrace.<subtype.name>`` warning (mypy checks ``subtype`` at each call).

    Message and location (a log's or a debug-folder entry's path, named by the input) are
    printed to the console and CI logs: controls and format characters in them are shown
    as escapes (:func:`console_text`), whatever form the location takes."""
    logger.warning(
        console_text(message),
        location=console_location(location),
        type="torchtrace",
        subtype=subtype.name,
    )


def console_location(location: Any) -> Any:
    """A warning's location, escaped as its message is: a path as text; a node as the
    ``source:line`` Sphinx would print for it (a node's source may be a log's or a folder
    entry's path); a ``(docname, line)`` pair with its docname escaped."""
    if isinstance(location, nodes.Node):
        location = logging.get_node_location(location)
    if isinstance(location, tuple) and len(location) == 2 and isinstance(location[0], str):
        return console_text(location[0]), location[1]
    if isinstance(location, str | Path):
        return console_text(str(location))
    return location
