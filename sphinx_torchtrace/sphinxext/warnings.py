"""Every warning the extension gives, in one registry: type ``torchtrace``, a stable subtype.

Sphinx matches ``suppress_warnings`` entries as ``type.subtype``, so a user
silences one kind with ``suppress_warnings = ["torchtrace.md5"]``.  The docs'
table of warnings is generated from :data:`WARNINGS` (``torchtrace-warnings``
directive), so a subtype cannot exist without its documentation.
"""

from __future__ import annotations

from typing import Any

from sphinx.util import logging

from ..trace.diagnostics import DIAGNOSTIC_KINDS

#: Subtypes of problems with the Sphinx side: options, configuration, references.
SPHINX_KINDS: dict[str, str] = {
    "option": "a directive option has a value the directive does not accept",
    "config": "a torchtrace_* configuration value is invalid; its default is used",
    "label": "two directives give their traces the same label",
    "duplicate": "two pages declare the same frame, graph or kernel object",
    "ambiguous": "a role's target names more than one object; the first is linked",
    "provenance": "a provenance view names no frame, or its frame logged no node mappings",
    "page": "a generated page no trace of this build knows (a stale file); it is left empty",
    "user_files": "the generated folder holds files the extension did not write; they are kept",
}

#: Every subtype, with what it means: the reader's diagnostics, then the Sphinx side's.
WARNINGS: dict[str, str] = {**DIAGNOSTIC_KINDS, **SPHINX_KINDS}

logger = logging.getLogger("sphinx_torchtrace")


def warn(subtype: str, message: str, location: Any = None) -> None:
    """One ``torchtrace.<subtype>`` warning; the subtype must be registered above."""
    if subtype not in WARNINGS:
        raise KeyError(f"unregistered torchtrace warning subtype {subtype!r}")
    logger.warning(message, location=location, type="torchtrace", subtype=subtype)
