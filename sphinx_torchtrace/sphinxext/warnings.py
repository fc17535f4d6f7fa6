"""Every warning the extension gives, in one registry: type ``torchtrace``, a stable subtype.

Sphinx matches ``suppress_warnings`` entries as ``type.subtype``, so a user
silences one kind with ``suppress_warnings = ["torchtrace.md5"]``.  The docs'
table of warnings is generated from :data:`WARNINGS` (``torchtrace-warnings``
directive), so a subtype cannot exist without its documentation.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Literal, cast

from docutils import nodes
from sphinx.util import logging

from ..site.characters import console_text
from ..trace.diagnostics import DIAGNOSTIC_KINDS, DiagnosticKind

#: The Sphinx side's subtypes, as a type (each has its meaning below): with the reader's
#: :data:`~..trace.diagnostics.DiagnosticKind`, every ``warn`` call is checked by mypy.
SphinxKind = Literal[
    "option",
    "config",
    "label",
    "duplicate",
    "ambiguous",
    "provenance",
    "page",
    "user_files",
    "unmatched",
    "input_sources",
    "divergence",
    "moved",
    "capture",
    "path",
    "secret",
    "comparability",
    "regression_error",
    "regression_graph_break",
    "regression_recompile",
    "regression_compile_time",
    "regression_kernels",
    "regression_runtime",
]
Subtype = DiagnosticKind | SphinxKind

#: Subtypes of problems with the Sphinx side: options, configuration, references.
SPHINX_KINDS: dict[SphinxKind, str] = {
    "option": "a directive option has a value the directive does not accept",
    "config": "a torchtrace_* configuration value is invalid; its default is used",
    "label": "two directives give their traces the same label",
    "duplicate": "two pages declare the same frame, graph or kernel object",
    "ambiguous": "a role's target names more than one object; the first is linked",
    "provenance": "a provenance view names no frame, or its frame logged no node mappings",
    "page": "a generated page no trace of this build knows (a stale file); it is left empty",
    "user_files": "the generated folder holds files the extension did not write; they are kept",
    "unmatched": "a text log given with :with: names compiles its trace has not (a log of "
    "another run?): their lines are shown under [-/-]",
    "input_sources": "a folder a directive reads holds source files (.rst, .md ...): they are "
    "not published, since an input folder is data (keep your pages out of it)",
    "divergence": "the ranks of a trace diverge (compile ids, statuses, caches, graph shapes, "
    "collective schedules, tensor metadata or execution order); only with "
    "torchtrace_warn_divergence = True",
    "moved": "after a recapture, an object name (run/[13/0]) stands for another function or "
    "file than in the last build: links to it in your pages may now mean something else",
    "capture": "a torchtrace-capture script failed or timed out (the end of its stderr is "
    "quoted; the trace it wrote so far is shown), is not a file inside the source folder, or "
    "has no cached capture while torchtrace_capture = 'never'",
    "path": "a page or download the extension made still holds an absolute machine path (under "
    "/home, /tmp, /srv ... or a Windows drive) after the path rewrites: add a rule to "
    "torchtrace_path_rewrites",
    "secret": "a trace holds values that look secret (what the program read from its "
    "environment, tokens, private keys, passwords in URLs): they are published masked, and the "
    "warning names the first one's log line; or a page or download the extension made holds "
    "the value of one of the build's environment variables whose name looks secret (the "
    "variable is named, never its value); torchtrace_secrets_keep publishes what you vouch for",
}

#: Subtypes of ``torchtrace-diff``: what got worse between two runs (torchtrace_regressions
#: says which count; ``:no-regressions:`` turns them off for one comparison).
SPHINX_KINDS.update(
    {
        "comparability": "torchtrace-diff: the runs were made differently (PyTorch, Python, "
        "compile configs or ranks differ), or nothing could be compared (no rank or no frame in "
        "common)",
        "regression_error": "torchtrace-diff: the new run has a compile error the baseline has not",
        "regression_graph_break": "torchtrace-diff: the new run has a graph break (reason and user "
        "location) the baseline has not",
        "regression_recompile": "torchtrace-diff: a frame compiles more times in the new run, or "
        "for a new reason",
        "regression_compile_time": "torchtrace-diff: total compile time grew past the ratio set in "
        "torchtrace_regressions (off by default: timings are noisy)",
        "regression_kernels": "torchtrace-diff: a frame generates more kernels in the new run (a "
        "fusion lost; off by default)",
        "regression_runtime": "torchtrace-diff: a frame's compiled code takes longer per call in "
        "the new run past the ratio set in torchtrace_regressions (both runs captured with run "
        "--runtime; off by default: timings are noisy)",
    }
)

#: Every subtype, with what it means: the reader's diagnostics, then the Sphinx side's.
WARNINGS: dict[str, str] = dict([*DIAGNOSTIC_KINDS.items(), *SPHINX_KINDS.items()])

logger = logging.getLogger("sphinx_torchtrace")


def subtype_of(name: str) -> Subtype:
    """A subtype that arrives as data (a note kept with a cached model), checked."""
    if name not in WARNINGS:
        raise KeyError(f"unregistered torchtrace warning subtype {name!r}")
    return cast(Subtype, name)


def warn(subtype: Subtype, message: str, location: Any = None) -> None:
    """One ``torchtrace.<subtype>`` warning; the subtype must be registered above (mypy
    checks it at each call; a subtype that arrives as data, from a cache, is checked here).

    Message and location (a log's or a debug-folder entry's path, named by the input) are
    printed to the console and CI logs: controls and format characters in them are shown
    as escapes (:func:`console_text`), whatever form the location takes."""
    if subtype not in WARNINGS:
        raise KeyError(f"unregistered torchtrace warning subtype {subtype!r}")
    logger.warning(
        console_text(message),
        location=console_location(location),
        type="torchtrace",
        subtype=subtype,
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
