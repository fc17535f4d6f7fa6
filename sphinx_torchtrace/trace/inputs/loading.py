"""Reading an input of any kind into the model: a TORCH_TRACE log or folder, or a
TORCH_LOGS text log, alone or with the other logs of the same run.

The ``torchtrace`` directive (its ``:with:`` paths) and the command line open an input
once (:mod:`.opening`) and read it through :func:`load_input`, so every command reads
every format the directive reads.

A text log alone gives the usual pages (statuses from what its lines say); beside a
trace, each compile's text lines are shown on that frame's page and the trace's records
decide the rest.  Either may be the argument and the other in ``:with:``: the trace,
when there is one, is the base.  (A debug folder is another model, :mod:`.debug_dir`.)
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from ..diagnostics import TraceReadError
from ..model import Trace
from ..reader import DEFAULT_MAX_LOG_BYTES
from .formats import DEBUG_DIR, TORCH_LOGS, TRACE
from .loader import display_path, load_trace
from .opening import OpenedInput, open_input
from .text_log import attach_text_log, load_text_log

#: The warning subtypes of what :func:`load_input` notes (``:with:`` files).
LoadNote = Literal["read", "option", "unmatched"]


@dataclass
class LoadedInput:
    """A trace (or a text log's model), the extra files it was made from, and what to say."""

    trace: Trace
    extra_logs: list[Path] = field(default_factory=list)  # ``:with:`` files read
    notes: list[tuple[LoadNote, str]] = field(default_factory=list)  # (subtype, message)
    #: the ranks a text log (the base) holds, before ``:ranks:`` chose; None for a trace base
    text_ranks: set[int | None] | None = None
    #: the ``:with:`` inputs, opened (those read among :attr:`extra_logs`, and the others)
    others: list[OpenedInput] = field(default_factory=list)
    #: the input read as the trace: the base, or the ``:with:`` trace beside a text log
    trace_input: OpenedInput | None = None


def load_input(
    opened: OpenedInput,
    others: Sequence[str] = (),
    *,
    display_root: str | os.PathLike[str] | None = None,
    cache_dir: str | None = None,
    max_bytes: int = DEFAULT_MAX_LOG_BYTES,
    progress: Callable[[int, int], None] | None = None,
) -> LoadedInput:
    """The model of ``opened`` (a trace or a text log: :func:`.opening.open_input`) with
    the text logs of ``others`` attached; raises :class:`TraceReadError` only when the base
    cannot be read.  The notes name ``others`` as the directive's ``:with:``.
    ``progress``: see :func:`.loader.load_trace`."""
    if opened.format == DEBUG_DIR:
        raise TraceReadError(
            display_path(opened.path, display_root),
            "a TORCH_COMPILE_DEBUG folder, not a log (read it with trace.debug_dir.load_debug_dir)",
        )
    if opened.problem is not None:
        raise opened.problem
    # the :with: files, opened as the directive asked (its ranks, its latest)
    with_inputs = [open_input(o, latest=opened.latest, ranks=opened.ranks) for o in others]
    traces, texts, notes = _sorted_inputs(opened, with_inputs, display_root)
    extra = [Path(o.path) for o in (traces + texts) if o.path != opened.path]
    text_ranks: set[int | None] | None = None
    if traces:
        base = traces[0]
        if base.problem is not None:
            raise base.problem
        trace = load_trace(
            base.path,
            choice=base.choice,
            display_root=display_root,
            cache_dir=cache_dir,
            max_bytes=max_bytes,
            progress=progress,
        )
    else:
        first = texts[0].path
        trace = load_text_log(
            first, max_bytes=max_bytes, display_path=display_path(first, display_root)
        )
        texts = texts[1:]
        text_ranks = {r.rank for r in trace.ranks}
        if opened.ranks:  # a text log of several ranks (``[rankN]:`` prefixes)
            trace.ranks = [r for r in trace.ranks if r.rank in opened.ranks]
    for text in texts:
        notes += _attach(trace, text.path, max_bytes, display_path(text.path, display_root))
    base_trace = traces[0] if traces else None
    return LoadedInput(trace, extra, notes, text_ranks, with_inputs, base_trace)


def _sorted_inputs(
    opened: OpenedInput,
    with_inputs: list[OpenedInput],
    display_root: str | os.PathLike[str] | None,
) -> tuple[list[OpenedInput], list[OpenedInput], list[tuple[LoadNote, str]]]:
    """The traces and the text logs to read, the base first: the trace, when there is one,
    is the base; what ``:with:`` names that cannot be read beside it is noted."""
    notes: list[tuple[LoadNote, str]] = []
    traces: list[OpenedInput] = [opened] if opened.format == TRACE else []
    texts: list[OpenedInput] = [opened] if opened.format == TORCH_LOGS else []
    for other in with_inputs:
        shown = display_path(other.path, display_root)
        if not other.exists:
            notes.append(("read", f":with: {shown}: no such file or folder"))
        elif other.format == DEBUG_DIR:
            notes.append(
                (
                    "option",
                    f":with: {shown} is a TORCH_COMPILE_DEBUG folder: give it "
                    "its own torchtrace directive, with this trace in its :with:",
                )
            )
        elif other.format == TORCH_LOGS:
            texts.append(other)
        elif traces:
            notes.append(
                (
                    "option",
                    f":with: {shown} is a second trace log; one report shows "
                    "one trace (a folder of rank logs is one trace)",
                )
            )
        else:
            traces.append(other)
    return traces, texts, notes


def _attach(trace: Trace, text: str, max_bytes: int, shown: str) -> list[tuple[LoadNote, str]]:
    """A ``:with:`` text log's lines on the trace's compiles; what to say of it."""
    try:
        text_trace = load_text_log(text, max_bytes=max_bytes, display_path=shown)
    except TraceReadError as e:
        return [("read", f":with: {e}")]
    trace.diagnostics.extend(text_trace.diagnostics)
    unmatched = attach_text_log(trace, text_trace)
    if not unmatched:
        return []
    listed = ", ".join(unmatched[:10]) + (" ..." if len(unmatched) > 10 else "")
    return [
        (
            "unmatched",
            f"text log {shown}: {len(unmatched)} compile(s) the "
            f"trace has not ({listed}); their lines are under [-/-]",
        )
    ]


__all__ = ["LoadedInput", "load_input"]
