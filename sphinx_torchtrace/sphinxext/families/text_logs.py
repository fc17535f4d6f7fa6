"""The model behind a ``torchtrace`` directive that reads a TORCH_LOGS text log, alone or
``:with:`` a TORCH_TRACE log of the same run.

A text log alone gives the usual pages (statuses from what its lines say); beside a
trace, each compile's text lines are shown on that frame's page and the trace's records
decide the rest.  Either may be the argument and the other in ``:with:``: the trace,
when there is one, is the base.  (A debug folder takes its traces with its own
``:with:``, :mod:`.debug_dir`.)
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path

from ...trace import Trace, TraceReadError, load_trace
from ...trace.inputs import DEBUG_DIR, TORCH_LOGS, TRACE, detect_kind
from ...trace.loader import display_path
from ...trace.text_log import attach_text_log, load_text_log
from .trace_options import TraceOptions


@dataclass
class LoadedInput:
    """A trace (or a text log's model), the extra files it was made from, and what to say."""

    trace: Trace
    extra_logs: list[Path] = field(default_factory=list)  # ``:with:`` files read
    notes: list[tuple[str, str]] = field(default_factory=list)  # (subtype, message)
    #: the ranks a text log (the base) holds, before ``:ranks:`` chose; None for a trace base
    text_ranks: set[int | None] | None = None


def load_input(
    path: str,
    kind: str,
    options: TraceOptions,
    others: list[str],
    *,
    display_root: str | os.PathLike[str],
    cache_dir: str | None,
    max_bytes: int,
) -> LoadedInput:
    """The model of ``path`` (a trace or a text log) with the text logs of ``others``
    attached; raises :class:`TraceReadError` only when the base cannot be read."""
    notes: list[tuple[str, str]] = []
    traces: list[str] = [path] if kind == TRACE else []
    texts: list[str] = [path] if kind == TORCH_LOGS else []
    for other in others:
        shown = display_path(other, display_root)
        if not os.path.exists(other):
            notes.append(("read", f":with: {shown}: no such file or folder"))
            continue
        other_kind = detect_kind(other)
        if other_kind == DEBUG_DIR:
            notes.append(("option", f":with: {shown} is a TORCH_COMPILE_DEBUG folder: give it "
                                    "its own torchtrace directive, with this trace in its :with:"))
        elif other_kind == TORCH_LOGS:
            texts.append(other)
        elif traces:
            notes.append(("option", f":with: {shown} is a second trace log; one report shows "
                                    "one trace (a folder of rank logs is one trace)"))
        else:
            traces.append(other)
    extra = [Path(p) for p in (traces + texts) if p != path]
    text_ranks: set[int | None] | None = None
    if traces:
        trace = load_trace(
            traces[0],
            latest=options.latest,
            ranks=list(options.ranks) if options.ranks else None,
            display_root=display_root,
            cache_dir=cache_dir,
            max_bytes=max_bytes,
        )
    else:
        trace = load_text_log(texts[0], max_bytes=max_bytes,
                              display_path=display_path(texts[0], display_root))
        texts = texts[1:]
        text_ranks = {r.rank for r in trace.ranks}
        if options.ranks:  # a text log of several ranks (``[rankN]:`` prefixes)
            trace.ranks = [r for r in trace.ranks if r.rank in options.ranks]
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
            notes.append(("unmatched", f"text log {shown}: {len(unmatched)} compile(s) the "
                                       f"trace has not ({listed}); their lines are under [-/-]"))
    return LoadedInput(trace, extra, notes, text_ranks)


__all__ = ["LoadedInput", "load_input"]
