"""The trace a command reads (``diff``, ``summary``): a log, a folder or a TORCH_LOGS text
log, with a progress bar on a terminal; or an :class:`~.common.InputError` that names why not.
"""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path

from ..site.characters import console_text
from ..trace import Trace, TraceReadError
from ..trace.inputs.formats import DEBUG_DIR, TORCH_LOGS
from ..trace.inputs.loading import load_input
from ..trace.inputs.no_records import has_records, no_records_message
from ..trace.inputs.opening import OpenedInput
from .common import PROG, InputError


def load(opened: OpenedInput, *, compared: bool = False) -> Trace:
    """A trace log or folder, or a TORCH_LOGS text log, as the directive reads them (opened
    once: :func:`~..trace.inputs.opening.open_input`); or InputError when the path holds
    nothing readable (or, ``compared``, what a comparison cannot match: a text log does not
    say which function each compile ran)."""
    path = opened.path
    if not opened.exists:
        raise InputError(f"{path}: no such file or directory")
    kind = opened.format
    if kind == DEBUG_DIR:
        raise InputError(
            f"{path}: a TORCH_COMPILE_DEBUG folder: compare its run's TORCH_TRACE logs"
            if compared
            else f"{path}: a TORCH_COMPILE_DEBUG folder"
        )
    if kind == TORCH_LOGS and compared:
        raise InputError(
            f"{path}: a TORCH_LOGS text log does not say which function each "
            "compile ran, so frames cannot be matched: compare TORCH_TRACE logs"
        )
    # the name alone: a bar longer than the terminal's line wraps and cannot redraw itself
    bar = ProgressBar(f"reading {Path(path).name[:40] or path}") if ProgressBar.wanted() else None
    try:
        trace = load_input(opened, progress=bar).trace
    except TraceReadError as e:  # it names the log: the words a build's warning says
        raise InputError(str(e)) from None
    except (OSError, ValueError) as e:
        raise InputError(f"{path}: cannot read: {e}") from None
    finally:
        if bar is not None:
            bar.close()
    if not has_records(trace):
        raise InputError(no_records_message(path, kind))
    return trace


class ProgressBar:
    """A progress bar on stderr while logs are read (a big log takes a minute), as tlparse
    draws one: only on a terminal, never in a CI log or a pipe; redrawn at most ten times a
    second and erased when reading ends, so the output that follows starts a clean line."""

    WIDTH = 24

    def __init__(self, label: str) -> None:
        self.label = console_text(f"{PROG}: {label}")  # a path is input text: escaped
        self.started = time.monotonic()
        self.drawn: float | None = None

    @staticmethod
    def wanted() -> bool:
        return sys.stderr.isatty() and not os.environ.get("CI") and os.environ.get("TERM") != "dumb"

    def __call__(self, done: int, total: int) -> None:
        now = time.monotonic()
        if self.drawn is not None and now - self.drawn < 0.1 and done < total:
            return
        self.drawn = now
        share = min(done / total, 1.0) if total > 0 else 1.0
        filled = round(share * self.WIDTH)
        bar = "#" * filled + "-" * (self.WIDTH - filled)
        sys.stderr.write(
            f"\r\x1b[K{self.label} [{bar}] {share:4.0%} "
            f"{done / 1e6:.1f}/{total / 1e6:.1f} MB {now - self.started:.0f} s"
        )
        sys.stderr.flush()

    def close(self) -> None:
        if self.drawn is not None:
            sys.stderr.write("\r\x1b[K")
            sys.stderr.flush()
