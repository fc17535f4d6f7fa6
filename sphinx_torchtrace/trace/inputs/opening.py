"""What the user named, opened once: its format, the logs it stands for and why, the rank
logs a folder holds, the files beside it a trace reads (``runtime/`` profiles), and the
sizes and times of them all.

Every directive family and every command takes this value (:func:`open_input`) instead of
asking the file system again: a file is sniffed once, a folder listed once, its logs
chosen once.  What makes an input unreadable before a line of it is read (nothing there,
a folder without a log) is decided here too (:attr:`OpenedInput.problem`); what its
records say is the readers' (:mod:`.loading`, :mod:`.debug_dir`).
"""

from __future__ import annotations

import os
import stat
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from ..diagnostics import TraceReadError
from ..folders import real_root, refusal
from ..runtime import MAX_PROFILES, RUNTIME_DIR, meta_file, profile_files
from .debug_dir import debug_dir_shape
from .formats import DEBUG_DIR, TRACE, file_format
from .loader import LogChoice, choose_logs


@dataclass(frozen=True)
class FileStamp:
    """A file as it was when opened: what says whether it changed since."""

    path: Path
    size: int
    mtime_ns: int


@dataclass(frozen=True)
class OpenedInput:
    """One input the user named, resolved: read it with :func:`.loading.load_input` (a
    trace or a text log) or :func:`.debug_dir.load_debug_dir` (a debug folder)."""

    path: str  # as named (a directive's, resolved against its page)
    exists: bool
    is_folder: bool
    #: ``trace``, ``torch-logs`` or ``debug-dir`` (:mod:`.formats`): ``:format:`` or detected
    format: str
    #: what was asked of a folder of logs: its newest alone, or these ranks' (``:ranks:``
    #: also chooses a text log's lines)
    latest: bool = False
    ranks: tuple[int, ...] | None = None
    #: the logs it stands for and why (None for a debug folder, or when ``problem``; a
    #: missing path stands for itself, which its reader says it cannot read)
    choice: LogChoice | None = None
    #: why no log can be read from it (a folder without any log); None when one can
    problem: TraceReadError | None = None
    #: a debug folder's shape (``debug``, ``run``, ``graph``), None for any other input
    debug_shape: str | None = None
    #: the ``runtime/`` profiles (and their meta files) a trace here reads
    companions: tuple[Path, ...] = ()
    #: the logs', then the companions' sizes and times, as opened
    stamps: tuple[FileStamp, ...] = ()

    @property
    def logs(self) -> list[Path]:
        """The log files it stands for, in rank order (none for a debug folder)."""
        return list(self.choice.logs) if self.choice is not None else []

    @property
    def files(self) -> list[Path]:
        """Every file read from it: its logs, then its companions."""
        return self.logs + list(self.companions)

    @property
    def folder_ranks(self) -> set[int]:
        """The ranks a folder has logs of (before ``ranks`` chose); none for a file."""
        return set(self.choice.ranks) if self.choice is not None else set()


def open_input(
    path: str | os.PathLike[str],
    *,
    format: str | None = None,
    latest: bool = False,
    ranks: Sequence[int] | None = None,
) -> OpenedInput:
    """``path`` resolved once: its format (``format``, else detected), the logs it stands
    for (``latest``, ``ranks``: :func:`.loader.choose_logs`), its companions and stamps.

    Never raises for what the path holds: a missing path is ``exists`` False, a folder
    without a log has a ``problem``."""
    named = os.fspath(path)
    p = Path(named)
    asked = (latest, tuple(ranks) if ranks else None)
    try:
        st = p.stat()
    except (OSError, ValueError):  # nothing there (or a name no file can have)
        return OpenedInput(named, False, False, format or TRACE, *asked, LogChoice([p]))
    is_folder = stat.S_ISDIR(st.st_mode)
    shape = debug_dir_shape(p) if is_folder else None
    if format is None:
        format = (DEBUG_DIR if shape is not None else TRACE) if is_folder else file_format(p)
    if format == DEBUG_DIR:
        return OpenedInput(named, True, is_folder, format, *asked, debug_shape=shape)
    if is_folder and format == TRACE:
        try:
            choice = choose_logs(p, latest=latest, ranks=list(ranks) if ranks else None)
        except TraceReadError as e:
            return OpenedInput(named, True, is_folder, format, *asked, problem=e)
        logs = _stamps(choice.logs)
    else:  # a log named (or a folder read as a text log, which its reader refuses): itself
        choice = LogChoice([p])
        logs = [FileStamp(p, st.st_size, st.st_mtime_ns)]
    companions = tuple(runtime_companions(p, is_folder)) if format == TRACE else ()
    stamps = tuple(logs + _stamps(list(companions)))
    return OpenedInput(
        named, True, is_folder, format, *asked, choice, companions=companions, stamps=stamps
    )


def runtime_companions(path: Path, is_folder: bool) -> list[Path]:
    """The files of ``run --runtime`` a trace at ``path`` reads: its folder's ``runtime/``
    profiles, each with its meta file if it has one; pages showing them depend on them as
    on its logs.

    Only files the trace may read are listed (their content is digested): never a link out
    of the folder nor a FIFO, and neither a profile whose meta file is refused (it is not
    read) nor one past :data:`MAX_PROFILES`.  A profile that appears, goes, changes or is
    refused changes the list or a listed file's content, so the pages are read again."""
    folder = path if is_folder else path.parent
    root = real_root(folder)
    profiles, _ = profile_files(folder / RUNTIME_DIR, root)
    out: list[Path] = []
    for profile in profiles[:MAX_PROFILES]:
        meta = meta_file(profile)
        if not os.path.lexists(meta):
            out.append(profile)
        elif refusal(meta, root) is None:  # a file that may be read
            out += [profile, meta]
    return out


def _stamps(files: list[Path]) -> list[FileStamp]:
    out = []
    for f in files:
        try:
            st = f.stat()
        except OSError:  # gone since it was listed: said when it is read
            out.append(FileStamp(f, -1, -1))
            continue
        out.append(FileStamp(f, st.st_size, st.st_mtime_ns))
    return out


__all__ = ["FileStamp", "OpenedInput", "open_input", "runtime_companions"]
