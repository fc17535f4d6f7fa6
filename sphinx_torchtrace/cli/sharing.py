"""What ``check``, ``redact`` and ``bundle`` share: the options of what to remove, the logs
a path names, and the report of what a redacted copy still holds.

A finding's text is the log's, so it is printed escaped, and no line starts with it (each
starts with ``LOG:LINE:``).  A secret is named by its kind, never shown; what ``redact``
could not remove is named by class and line only.
"""

from __future__ import annotations

import argparse
from collections.abc import Callable
from pathlib import Path
from typing import Any

from ..site.characters import console_text
from ..trace.diagnostics import TraceReadError
from ..trace.sharing.redact import LogReport
from ..trace.sharing.redact_text import CLASSES, DEFAULT_CLASSES, Options
from ..trace.sharing.share import RefusedEntries, log_files
from .common import InputError, say


def class_options(parser: argparse.ArgumentParser) -> None:
    """``--keep``, ``--constants`` and ``--name``: what is removed."""
    parser.add_argument(
        "--keep",
        metavar="CLASSES",
        default="",
        help=f"comma list of classes to leave as they are: {', '.join(DEFAULT_CLASSES)} "
        "(default: none, everything private is removed)",
    )
    parser.add_argument(
        "--constants",
        action="store_true",
        help="also the values of tensor constants (frozen weights, literal tensors): each "
        "number becomes 0., shapes stay",
    )
    parser.add_argument(
        "--name",
        metavar="NAME",
        action="append",
        default=[],
        help="a user, host or project name to remove wherever it stands as a word "
        "(repeatable; this machine's user and host names are always looked for)",
    )


def options(args: argparse.Namespace) -> Options:
    """The options :func:`class_options` added, checked."""
    keep = {k.strip() for k in args.keep.split(",") if k.strip()}
    unknown = sorted(keep - set(DEFAULT_CLASSES))
    if unknown:
        raise InputError(f"--keep: {', '.join(unknown)}: give some of {', '.join(DEFAULT_CLASSES)}")
    return Options(
        **{c: c not in keep for c in DEFAULT_CLASSES},
        constants=args.constants,
        extra_names=tuple(args.name),
    )


def logs(path: str, allow_none: bool = False) -> list[Path]:
    """The logs ``path`` names; an :class:`~.common.InputError` naming each entry that may
    not be read (a link leading out of the folder, a FIFO): the whole command is refused,
    since what it would share without them is not the job's trace."""
    source = Path(path)
    if not source.exists():
        raise InputError(f"{path}: no such file or directory")
    try:
        found = log_files(source)
    except RefusedEntries as e:
        named = "; ".join(console_text(f"{entry}: {why}") for entry, why in e.refused[:5])
        more = f" (and {len(e.refused) - 5} more)" if len(e.refused) > 5 else ""
        raise InputError(
            f"{path}: refused, nothing read: {named}{more} (copy a file into the folder to "
            "share it)"
        ) from None
    if not found and not allow_none:
        raise InputError(f"{path}: no log files (*.log, *.log.gz) in the folder")
    return found


def counts_text(counts: dict[str, int]) -> str:
    """``paths 3, names 0, ...``: what was found or removed, by class."""
    return ", ".join(f"{c} {counts[c]}" for c in CLASSES if c in DEFAULT_CLASSES or counts[c])


def read(run: Callable[[], list[LogReport]]) -> list[LogReport]:
    """The reports ``run`` makes, or the refusal of a log that cannot be read."""
    try:
        reports: list[LogReport] = run()
    except TraceReadError as e:
        raise InputError(f"cannot read: {e}") from None
    return reports


def remaining(left: list[tuple[Path, Any]]) -> int:
    """Name what a redacted copy still holds (by class and line); exit 1 if anything."""
    if not left:
        say("checked: nothing private left")
        return 0
    for dest, c in left[:50]:
        say(f"{dest}:{c.line}: {c.kind}: could not be removed")
    say(f"{len(left)} finding(s) left: do not share this log as it is")
    return 1
