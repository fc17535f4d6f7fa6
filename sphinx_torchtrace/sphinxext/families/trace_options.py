"""The ``torchtrace`` directive's options, and what each does on each kind of input.

Shared by the kinds of input the directive reads (:mod:`.trace`, :mod:`.debug_dir`),
and by ``torchtrace-capture`` (:mod:`.capture`), whose report takes the same options.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from docutils.parsers.rst import directives

from ...trace.analyses.overview_sections import SECTION_KEYS
from ...trace.inputs.formats import DEBUG_DIR as DEBUG_DIR_FORMAT
from ...trace.inputs.formats import INPUT_FORMATS
from ...trace.inputs.formats import TORCH_LOGS as TORCH_LOGS_FORMAT
from ..options import NO_EFFECT, checked_options, name_option
from ..warnings import OPTION, Note

DIRECTIVE = "torchtrace"


def ranks_option(value: str | None) -> tuple[int, ...] | None:
    """``all`` (None) or a comma-separated list of rank numbers."""
    text = (value or "").strip()
    if text in ("", "all"):
        return None
    parts = [p.strip() for p in text.split(",")]
    if not all(p.isdigit() and len(p) <= 9 for p in parts):
        raise ValueError("expected 'all' or a comma-separated list of rank numbers")
    return tuple(int(p) for p in parts)


def sections_option(value: str | None) -> tuple[str, ...]:
    """Overview sections to show, by key; empty means all."""
    wanted = [p.strip().lower() for p in (value or "").split(",") if p.strip()]
    unknown = [w for w in wanted if w not in SECTION_KEYS]
    if unknown:
        raise ValueError(f"unknown sections {', '.join(unknown)}; valid: {', '.join(SECTION_KEYS)}")
    return tuple(k for k in SECTION_KEYS if k in wanted)


def format_option(value: str | None) -> str:
    """``trace``, ``debug-dir`` or ``torch-logs``: the input's kind, when detection is wrong."""
    text = (value or "").strip().lower()
    if text not in INPUT_FORMATS:
        raise ValueError(f"expected one of {', '.join(INPUT_FORMATS)}")
    return text


def with_option(value: str | None) -> tuple[str, ...]:
    """Other inputs of the same run (``path[, path]``), relative to the page like the argument."""
    paths = tuple(p.strip() for p in (value or "").split(",") if p.strip())
    if not paths:
        raise ValueError("expected one or more paths, separated by commas")
    return paths


OPTION_SPEC: dict[str, Callable[[str | None], Any]] = {
    "name": name_option,
    "latest": directives.flag,
    "ranks": ranks_option,
    "sections": sections_option,
    "no-source": directives.flag,
    "format": format_option,
    "with": with_option,
}


@dataclass(frozen=True)
class TraceOptions:
    """A directive's options, checked."""

    name: str | None = None
    latest: bool = False
    ranks: tuple[int, ...] | None = None
    sections: tuple[str, ...] = ()
    no_source: bool = False
    format: str | None = None  # None: detected (trace.inputs.detect_format)
    with_paths: tuple[str, ...] = ()  # ``:with:``


def parse_options(raw: Mapping[str, str | None]) -> TraceOptions:
    """Options as the scan found them (``{key: text}``); ValueError names the bad one."""
    return from_directive(checked_options(raw, OPTION_SPEC))


def from_directive(values: Mapping[str, Any]) -> TraceOptions:
    """Options already checked with :data:`OPTION_SPEC` (flags are present or not)."""
    return TraceOptions(
        name=values.get("name"),
        latest="latest" in values,
        ranks=values.get("ranks"),
        sections=values.get("sections") or (),
        no_source="no-source" in values,
        format=values.get("format"),
        with_paths=values.get("with") or (),
    )


# -- what each option does on each format -----------------------------------------------

TRACE_LOG = "a trace log"
TRACE_FOLDER = "a trace folder"
DEBUG_FOLDER = "a debug folder"
TEXT_LOG = "a text log"
#: The formats a ``torchtrace`` directive reads, as the table of options names them.
OPTION_FORMATS = (TRACE_LOG, TRACE_FOLDER, DEBUG_FOLDER, TEXT_LOG)

#: Option -> input format -> what it does there.  The docs' table is made from this
#: (``torchtrace-options``) and the test suite checks every cell on a real build, so a
#: promise cannot be written without being kept.
OPTION_EFFECTS: dict[str, dict[str, str]] = {
    "name": dict.fromkeys(OPTION_FORMATS, "the label: folder of the pages, start of object names")
    | {DEBUG_FOLDER: "the label; the run's trace logs are ``<name>-trace`` and ``<name>-with-N``"},
    "latest": {
        TRACE_LOG: NO_EFFECT,
        TRACE_FOLDER: "only the newest log, even among rank logs",
        DEBUG_FOLDER: NO_EFFECT,
        TEXT_LOG: NO_EFFECT,
    },
    "ranks": {
        TRACE_LOG: NO_EFFECT,
        TRACE_FOLDER: "only the logs of these ranks",
        DEBUG_FOLDER: NO_EFFECT,
        TEXT_LOG: "only the lines of these ranks (``[rankN]:`` prefixes)",
    },
    "sections": {
        TRACE_LOG: "the overview's parts",
        TRACE_FOLDER: "the overview's parts",
        DEBUG_FOLDER: NO_EFFECT,
        TEXT_LOG: "the overview's parts",
    },
    "no-source": dict.fromkeys(OPTION_FORMATS, "no line of user source on any page or download")
    | {
        DEBUG_FOLDER: "no line of user source on any page or download, the run's trace "
        "logs' included"
    },
    "format": dict.fromkeys(OPTION_FORMATS, "read as this kind, not the detected one"),
    "with": {
        TRACE_LOG: "text logs of the same run: their lines on each compile's page",
        TRACE_FOLDER: "text logs of the same run: their lines on each compile's page",
        DEBUG_FOLDER: "trace logs of the same run: their reports, linked from each graph",
        TEXT_LOG: "the trace log of the same run becomes the base; this log's lines on each "
        "compile's page",
    },
}


def option_format(kind: str, is_folder: bool) -> str:
    """The option table's format of an input, from its format as read (``trace.inputs``)."""
    if kind == DEBUG_DIR_FORMAT:
        return DEBUG_FOLDER
    if kind == TORCH_LOGS_FORMAT:
        return TEXT_LOG
    return TRACE_FOLDER if is_folder else TRACE_LOG


def ineffective_options(options: TraceOptions, kind: str) -> list[str]:
    """The options a directive gave that do nothing on this kind of input."""
    given = {
        "latest": options.latest,
        "ranks": options.ranks is not None,
        "sections": bool(options.sections),
    }
    return [o for o, on in given.items() if on and OPTION_EFFECTS[o][kind] == NO_EFFECT]


def ineffective_notes(is_folder: bool, kind: str, options: TraceOptions) -> list[Note]:
    """An ``option`` note for each option given that does nothing on this kind of input
    (``kind``: its format, :attr:`...trace.inputs.opening.OpenedInput.format`)."""
    table_format = option_format(kind, is_folder)
    return [
        (OPTION, f":{option}: has no effect on {table_format}; it is ignored")
        for option in ineffective_options(options, table_format)
    ]


def input_paths(argument: str, raw: Mapping[str, str]) -> list[str]:
    """The paths a ``torchtrace`` directive names: its argument (spaces and all) and the
    ``:with:`` paths (an invalid ``:with:`` names none: its directive says so)."""
    try:
        return [argument, *with_option(raw.get("with"))]
    except ValueError:
        return [argument]
