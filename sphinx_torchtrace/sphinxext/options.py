"""The ``torchtrace`` directive's options: one parser for the scan and the directive.

The pages of a trace are generated before Sphinx reads any source, from a scan
of the sources (:mod:`.scan`); the directive reads its options again when its
page is read.  Both use :data:`OPTION_SPEC`, so they can never disagree on what
an option means (the scan once dropped ranks the directive rejected).
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from docutils.parsers.rst import directives

from ..trace.inputs import DEBUG_DIR as DEBUG_DIR_KIND
from ..trace.inputs import INPUT_KINDS
from ..trace.inputs import TORCH_LOGS as TORCH_LOGS_KIND
from ..trace.summary import SECTION_KEYS


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
        raise ValueError(
            f"unknown sections {', '.join(unknown)}; valid: {', '.join(SECTION_KEYS)}"
        )
    return tuple(k for k in SECTION_KEYS if k in wanted)


def format_option(value: str | None) -> str:
    """``trace``, ``debug-dir`` or ``torch-logs``: the input's kind, when detection is wrong."""
    text = (value or "").strip().lower()
    if text not in INPUT_KINDS:
        raise ValueError(f"expected one of {', '.join(INPUT_KINDS)}")
    return text


def with_option(value: str | None) -> tuple[str, ...]:
    """Other inputs of the same run (``path[, path]``), relative to the page like the argument."""
    paths = tuple(p.strip() for p in (value or "").split(",") if p.strip())
    if not paths:
        raise ValueError("expected one or more paths, separated by commas")
    return paths


def name_option(value: str | None) -> str:
    text = " ".join((value or "").split())
    if not text:
        raise ValueError("a name is required")
    return text


OPTION_SPEC: dict[str, Callable[[str | None], Any]] = {
    "name": name_option,
    "latest": directives.flag,
    "ranks": ranks_option,
    "sections": sections_option,
    "no-source": directives.flag,
    "format": format_option,
    "with": with_option,
}


class AnyOption(dict[str, Callable[[str | None], Any]]):
    """An option spec that takes every key, so that :func:`parse_options` can say what a
    misspelled option should have been (docutils would only say it is unknown)."""

    def __contains__(self, key: object) -> bool:
        return True

    def __getitem__(self, key: str) -> Callable[[str | None], Any]:
        return directives.unchanged


@dataclass(frozen=True)
class TraceOptions:
    """A directive's options, checked."""

    name: str | None = None
    latest: bool = False
    ranks: tuple[int, ...] | None = None
    sections: tuple[str, ...] = ()
    no_source: bool = False
    format: str | None = None  # None: detected (trace.inputs.detect_kind)
    with_paths: tuple[str, ...] = ()  # ``:with:``


def parse_options(raw: Mapping[str, str | None]) -> TraceOptions:
    """Options as the scan found them (``{key: text}``); ValueError names the bad one."""
    return from_directive(checked_options(raw, OPTION_SPEC))


def checked_options(
    raw: Mapping[str, str | None], spec: Mapping[str, Callable[[str | None], Any]]
) -> dict[str, Any]:
    """Each option checked by its entry of ``spec``; ValueError names the bad one."""
    values: dict[str, Any] = {}
    for key, text in raw.items():
        check = spec.get(key)
        if check is None:
            raise ValueError(f"unknown option :{key}:; valid: {', '.join(spec)}")
        try:
            values[key] = check(text)
        except ValueError as err:
            raise ValueError(f"option :{key}: {err}") from err
    return values


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


#: The ``torchtrace-diff`` directive's options (checked by the scan and the directive alike).
DIFF_OPTION_SPEC: dict[str, Callable[[str | None], Any]] = {
    "name": name_option,
    "baseline-label": name_option,
    "new-label": name_option,
    "no-regressions": directives.flag,
    "no-source": directives.flag,
}


@dataclass(frozen=True)
class DiffOptions:
    """A ``torchtrace-diff`` directive's options, checked."""

    name: str | None = None
    baseline_label: str = "baseline"
    new_label: str = "new"
    no_regressions: bool = False  # no ``regression_*`` warnings for this comparison
    no_source: bool = False  # the user's source lines left out (also when a side has it)


def parse_diff_options(raw: Mapping[str, str | None]) -> DiffOptions:
    """``torchtrace-diff`` options as the scan found them; ValueError names the bad one."""
    values = checked_options(raw, DIFF_OPTION_SPEC)
    return DiffOptions(
        name=values.get("name"),
        baseline_label=values.get("baseline-label") or "baseline",
        new_label=values.get("new-label") or "new",
        no_regressions="no-regressions" in values,
        no_source="no-source" in values,
    )


def labels_option(value: str | None) -> tuple[str, ...]:
    """``:labels: v1, v2, v3``: what each run of a trend is called."""
    labels = tuple(" ".join(part.split()) for part in (value or "").split(","))
    if not labels or not all(labels):
        raise ValueError("give a comma-separated label for each run")
    return labels


#: The ``torchtrace-trend`` directive's options.
TREND_OPTION_SPEC: dict[str, Callable[[str | None], Any]] = {"labels": labels_option}


@dataclass(frozen=True)
class TrendOptions:
    """A ``torchtrace-trend`` directive's options, checked."""

    labels: tuple[str, ...] = ()  # one per run; default: the paths' last parts


def parse_trend_options(raw: Mapping[str, str | None]) -> TrendOptions:
    values = checked_options(raw, TREND_OPTION_SPEC)
    return TrendOptions(labels=values.get("labels") or ())


def args_option(value: str | None) -> tuple[str, ...]:
    """``:args:``: the script's arguments, split as a shell would (quotes group, nothing
    is expanded)."""
    try:
        return tuple(shlex.split(value or ""))
    except ValueError as err:
        raise ValueError(f"cannot split the arguments: {err}") from None


_ENV_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")


def env_option(value: str | None) -> tuple[tuple[str, str], ...]:
    """``:env: NAME=value NAME2="two words"``: variables set for the script."""
    pairs = []
    for item in args_option(value):
        name, sep, text = item.partition("=")
        if not sep or not _ENV_NAME.match(name):
            raise ValueError(f"expected NAME=value items, got {item!r}")
        pairs.append((name, text))
    if not pairs:
        raise ValueError("expected NAME=value items")
    return tuple(pairs)


def timeout_option(value: str | None) -> float:
    """Seconds a capture may run (a number above 0)."""
    try:
        seconds = float((value or "").strip())
    except ValueError:
        raise ValueError("expected a number of seconds") from None
    if not seconds > 0 or seconds == float("inf"):
        raise ValueError("expected a number of seconds above 0")
    return seconds


def depends_option(value: str | None) -> tuple[str, ...]:
    """``:depends: model/*.py, data/config.json``: globs of the files whose bytes count."""
    globs = tuple(p for p in re.split(r"[,\s]+", value or "") if p)
    if not globs:
        raise ValueError("expected one or more globs, relative to the page")
    return globs


def folder_option(value: str | None) -> str:
    text = (value or "").strip()
    if not text:
        raise ValueError("expected a folder, relative to the page")
    return text


#: The ``torchtrace-capture`` directive's options: the report's (as ``torchtrace``'s), and
#: how the script runs.
CAPTURE_OPTION_SPEC: dict[str, Callable[[str | None], Any]] = {
    **{k: OPTION_SPEC[k] for k in ("name", "latest", "ranks", "sections", "no-source")},
    "args": args_option,
    "env": env_option,
    "timeout": timeout_option,
    "depends": depends_option,
    "cwd": folder_option,
}


@dataclass(frozen=True)
class CaptureOptions:
    """A ``torchtrace-capture`` directive's options, checked."""

    trace: TraceOptions
    args: tuple[str, ...] = ()
    env: tuple[tuple[str, str], ...] = ()
    timeout: float | None = None  # None: torchtrace_capture_timeout
    depends: tuple[str, ...] | None = None  # None: the local modules the script imports
    cwd: str | None = None  # None: the script's folder


def parse_capture_options(raw: Mapping[str, str | None]) -> CaptureOptions:
    """``torchtrace-capture`` options as the scan found them; ValueError names the bad one."""
    values = checked_options(raw, CAPTURE_OPTION_SPEC)
    return CaptureOptions(
        trace=from_directive(values),
        args=values.get("args") or (),
        env=values.get("env") or (),
        timeout=values.get("timeout"),
        depends=values.get("depends"),
        cwd=values.get("cwd"),
    )


# -- what each option does on each input kind ----------------------------------------------

TRACE_LOG = "a trace log"
TRACE_FOLDER = "a trace folder"
DEBUG_FOLDER = "a debug folder"
TEXT_LOG = "a text log"
#: The kinds of input a ``torchtrace`` directive reads, as the table of options names them.
OPTION_KINDS = (TRACE_LOG, TRACE_FOLDER, DEBUG_FOLDER, TEXT_LOG)
#: What an option given where it does nothing gets: a warning, never silence.
NO_EFFECT = "no effect: a ``torchtrace.option`` warning says so"

#: Option -> input kind -> what it does there.  The docs' table is made from this
#: (``torchtrace-options``) and the test suite checks every cell on a real build, so a
#: promise cannot be written without being kept.
OPTION_EFFECTS: dict[str, dict[str, str]] = {
    "name": dict.fromkeys(OPTION_KINDS, "the label: folder of the pages, start of object names")
    | {DEBUG_FOLDER: "the label; the run's trace logs are ``<name>-trace`` and "
                     "``<name>-with-N``"},
    "latest": {
        TRACE_LOG: NO_EFFECT, TRACE_FOLDER: "only the newest log, even among rank logs",
        DEBUG_FOLDER: NO_EFFECT, TEXT_LOG: NO_EFFECT,
    },
    "ranks": {
        TRACE_LOG: NO_EFFECT, TRACE_FOLDER: "only the logs of these ranks",
        DEBUG_FOLDER: NO_EFFECT,
        TEXT_LOG: "only the lines of these ranks (``[rankN]:`` prefixes)",
    },
    "sections": {
        TRACE_LOG: "the overview's parts", TRACE_FOLDER: "the overview's parts",
        DEBUG_FOLDER: NO_EFFECT, TEXT_LOG: "the overview's parts",
    },
    "no-source": dict.fromkeys(OPTION_KINDS, "no line of user source on any page or download")
    | {DEBUG_FOLDER: "no line of user source on any page or download, the run's trace "
                     "logs' included"},
    "format": dict.fromkeys(OPTION_KINDS, "read as this kind, not the detected one"),
    "with": {
        TRACE_LOG: "text logs of the same run: their lines on each compile's page",
        TRACE_FOLDER: "text logs of the same run: their lines on each compile's page",
        DEBUG_FOLDER: "trace logs of the same run: their reports, linked from each graph",
        TEXT_LOG: "the trace log of the same run becomes the base; this log's lines on each "
                  "compile's page",
    },
}


def option_kind(kind: str, is_folder: bool) -> str:
    """The option table's kind of an input, from its reader kind (``trace.inputs``)."""
    if kind == DEBUG_DIR_KIND:
        return DEBUG_FOLDER
    if kind == TORCH_LOGS_KIND:
        return TEXT_LOG
    return TRACE_FOLDER if is_folder else TRACE_LOG


def ineffective_options(options: TraceOptions, kind: str) -> list[str]:
    """The options a directive gave that do nothing on this kind of input."""
    given = {
        "latest": options.latest, "ranks": options.ranks is not None,
        "sections": bool(options.sections),
    }
    return [o for o, on in given.items() if on and OPTION_EFFECTS[o][kind] == NO_EFFECT]


#: The kinds a ``torchtrace-diff`` side may be, and what its options do on them.
DIFF_KINDS = (TRACE_LOG, TRACE_FOLDER)
#: A side of another kind is not compared: its warning says why.
DIFF_REFUSED = {
    DEBUG_FOLDER: "compare its run's trace logs (a ``torchtrace.read`` warning says so)",
    TEXT_LOG: "it does not say which function each compile ran, so frames cannot be matched "
              "(a ``torchtrace.read`` warning says so)",
}
DIFF_OPTION_EFFECTS: dict[str, dict[str, str]] = {
    "name": dict.fromkeys(DIFF_KINDS, "the comparison's label: folder of its pages"),
    "baseline-label": dict.fromkeys(DIFF_KINDS, "what the pages call the first run"),
    "new-label": dict.fromkeys(DIFF_KINDS, "what the pages call the second run"),
    "no-regressions": dict.fromkeys(DIFF_KINDS, "no ``regression_*`` warnings (the page "
                                                "still lists them)"),
    "no-source": dict.fromkeys(DIFF_KINDS, "no line of user source on its pages; also when "
                                           "either run is shown with ``:no-source:``"),
}
