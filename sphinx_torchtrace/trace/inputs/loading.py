"""Reading an input of any kind into the model: a TORCH_TRACE log or folder, or a
TORCH_LOGS text log, alone or with the other logs of the same run.

The ``torchtrace`` directive (its ``:with:`` paths) and the command line read inputs
through :func:`load_input`, so every command reads every kind the directive reads.

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
from .kinds import DEBUG_DIR, TORCH_LOGS, TRACE, detect_kind
from .loader import display_path, load_trace
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


def load_input(
    path: str,
    kind: str | None = None,
    others: Sequence[str] = (),
    *,
    latest: bool = False,
    ranks: Sequence[int] | None = None,
    display_root: str | os.PathLike[str] | None = None,
    cache_dir: str | None = None,
    max_bytes: int = DEFAULT_MAX_LOG_BYTES,
    progress: Callable[[int, int], None] | None = None,
) -> LoadedInput:
    """The model of ``path`` (a trace or a text log; ``kind`` None: detected) with the text
    logs of ``others`` attached; raises :class:`TraceReadError` only when the base cannot
    be read.  The notes name ``others`` as the directive's ``:with:``.  ``progress``: see
    :func:`.loader.load_trace`."""
    kind = kind or detect_kind(path)
    if kind == DEBUG_DIR:
        raise TraceReadError(
            display_path(path, display_root),
            "a TORCH_COMPILE_DEBUG folder, not a log (read it with trace.debug_dir.load_debug_dir)",
        )
    notes: list[tuple[LoadNote, str]] = []
    traces: list[str] = [path] if kind == TRACE else []
    texts: list[str] = [path] if kind == TORCH_LOGS else []
    for other in others:
        shown = display_path(other, display_root)
        if not os.path.exists(other):
            notes.append(("read", f":with: {shown}: no such file or folder"))
            continue
        other_kind = detect_kind(other)
        if other_kind == DEBUG_DIR:
            notes.append(
                (
                    "option",
                    f":with: {shown} is a TORCH_COMPILE_DEBUG folder: give it "
                    "its own torchtrace directive, with this trace in its :with:",
                )
            )
        elif other_kind == TORCH_LOGS:
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
    extra = [Path(p) for p in (traces + texts) if p != path]
    text_ranks: set[int | None] | None = None
    if traces:
        trace = load_trace(
            traces[0],
            latest=latest,
            ranks=list(ranks) if ranks else None,
            display_root=display_root,
            cache_dir=cache_dir,
            max_bytes=max_bytes,
            progress=progress,
        )
    else:
        trace = load_text_log(
            texts[0], max_bytes=max_bytes, display_path=display_path(texts[0], display_root)
        )
        texts = texts[1:]
        text_ranks = {r.rank for r in trace.ranks}
        if ranks:  # a text log of several ranks (``[rankN]:`` prefixes)
            trace.ranks = [r for r in trace.ranks if r.rank in ranks]
    for text in texts:
        shown = display_path(text, display_root)
        try:
            text_trace = load_text_log(text, max_bytes=max_bytes, display_path=shown)
        except TraceReadError as e:
            notes.append(("read", f":with: {e}"))
            continue
        trace.diagnostics.extend(text_trace.diagnostics)
        unmatched = attach_text_log(trace, text_trace)
        if unmatched:
            listed = ", ".join(unmatched[:10]) + (" ..." if len(unmatched) > 10 else "")
            notes.append(
                (
                    "unmatched",
                    f"text log {shown}: {len(unmatched)} compile(s) the "
                    f"trace has not ({listed}); their lines are under [-/-]",
                )
            )
    return LoadedInput(trace, extra, notes, text_ranks)


__all__ = ["LoadedInput", "load_input"]
