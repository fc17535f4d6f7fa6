"""Find the logs a path means and read them into a :class:`Trace`.

A path is one log file, or a ``TORCH_TRACE`` directory: every rank's
``dedicated_log_torch_trace_rank_<N>[_suffix].log`` when there are rank logs,
else its newest log (tlparse's ``--latest``).  A log that uses interned
strings defined in another log of the same process (``draft_export`` under
``TORCH_DTRACE`` writes such a pair) borrows that log's string table.

A trace directory is untrusted like its logs: an entry that is a link leading
out of the directory (to ``/proc/self/environ``, say, whose first line a
diagnostic would quote) or that is no regular file (a FIFO would block the
build, a device never end) is not read, and a ``skipped`` diagnostic names
it.  A log path given directly may be a link: that is the user's choice.
"""

from __future__ import annotations

import os
import re
import stat
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from .builder import RankBuilder
from .diagnostics import Diagnostic, TraceReadError
from .model import RankTrace, Trace
from .reader import CHUNK_SIZE, DEFAULT_MAX_LOG_BYTES, LogReader, load_json

RANK_LOG = re.compile(r"^dedicated_log_torch_trace_rank_(\d+)(?:_[^/]*)?\.log$")
TRACE_LOG = re.compile(r"^dedicated_log_torch_trace_.*\.log(?:\.gz)?$")
# One line only: a record that does not end as expected costs its own line.  The string's
# two alternatives start with different characters, so the match is linear.
_STR_RECORD = re.compile(rb'\] \{"str": \["((?:[^"\\\n]|\\.)*)", (\d{1,30})\]\}')
_PID = re.compile(rb"^\S+ \S+ +(\d{1,19}) ", re.M)


@dataclass
class _Listing:
    """A directory's entries that may be read as logs, and the ones that may not."""

    files: list[Path] = field(default_factory=list)
    skipped: list[tuple[Path, str]] = field(default_factory=list)  # entry, why


def _list_directory(directory: Path) -> _Listing:
    """Regular files of ``directory``, links among them only where they stay inside it."""
    listing = _Listing()
    root = os.path.realpath(directory)
    for entry in sorted(directory.iterdir()):
        why = _unsafe(entry, root)
        if why is None:
            listing.files.append(entry)
        elif why:
            listing.skipped.append((entry, why))
    return listing


def _unsafe(entry: Path, root: str) -> str | None:
    """Why ``entry`` must not be read ("" for a directory, never a log); None when it may be."""
    try:
        mode = entry.lstat().st_mode
        if stat.S_ISLNK(mode):
            target = os.path.realpath(entry)
            if os.path.commonpath([root, target]) != root:
                return "a link that leads out of the trace directory"
            mode = os.stat(target).st_mode
    except (OSError, ValueError):
        return "a link that leads nowhere, or an entry that cannot be examined"
    if stat.S_ISDIR(mode):
        return ""
    if not stat.S_ISREG(mode):
        return "not a regular file"
    return None


def rank_logs(directory: str | os.PathLike[str]) -> dict[int, Path]:
    """Every rank's log in a directory, by rank (the first file wins for a repeated rank)."""
    return _rank_logs(_list_directory(Path(directory)))


def _rank_logs(listing: _Listing) -> dict[int, Path]:
    found: dict[int, Path] = {}
    for entry in listing.files:
        match = RANK_LOG.match(entry.name)
        if match:
            found.setdefault(int(match.group(1)), entry)
    return dict(sorted(found.items()))


def newest_log(directory: str | os.PathLike[str]) -> Path | None:
    """The most recently modified trace log of a directory (any file if none is named so)."""
    return _newest_log(_list_directory(Path(directory)))


def _newest_log(listing: _Listing) -> Path | None:
    logs = [p for p in listing.files if TRACE_LOG.match(p.name)] or listing.files
    if not logs:
        return None
    return max(logs, key=lambda p: (p.stat().st_mtime, p.name))


def resolve_logs(
    path: str | os.PathLike[str], *, latest: bool = False, ranks: Sequence[int] | None = None
) -> list[Path]:
    """The log files a path stands for, in rank order."""
    return _resolve(Path(path), latest, ranks)[0]


def _resolve(
    p: Path, latest: bool, ranks: Sequence[int] | None
) -> tuple[list[Path], list[tuple[Path, str]]]:
    """The logs, and the entries of the directory left out that could have been logs."""
    if not p.is_dir():
        return [p], []
    listing = _list_directory(p)
    # A skipped entry matters where it could have been read: named like a log, or in a
    # directory without any log named so (where any file is a candidate).
    named = any(TRACE_LOG.match(e.name) for e in listing.files)
    skipped = [
        (e, why) for e, why in listing.skipped if TRACE_LOG.match(e.name) or RANK_LOG.match(e.name)
    ]
    if not named:
        skipped = listing.skipped
    if not latest:
        by_rank = _rank_logs(listing)
        if by_rank:
            wanted = by_rank if ranks is None else {r: by_rank[r] for r in ranks if r in by_rank}
            return list(wanted.values()), skipped
    newest = _newest_log(listing)
    if newest is None:
        raise TraceReadError(str(p), "the directory holds no log file")
    return [newest], skipped


def load_trace(
    path: str | os.PathLike[str] | Sequence[str | os.PathLike[str]],
    *,
    latest: bool = False,
    ranks: Sequence[int] | None = None,
    display_root: str | os.PathLike[str] | None = None,
    cache_dir: str | os.PathLike[str] | None = None,
    max_bytes: int = DEFAULT_MAX_LOG_BYTES,
) -> Trace:
    """Read a log, a directory of logs, or an explicit list of logs of one process.

    Only an unreadable file raises (:class:`TraceReadError`); everything wrong
    inside a log becomes a diagnostic.  With a list, later logs borrow the
    interned strings of earlier ones.  With ``cache_dir``, each log's model is
    cached there (see :mod:`.cache`), so an unchanged log is not parsed again.
    At most ``max_bytes`` of each log (decompressed) are read: a longer log is
    cut, with a ``limit`` diagnostic.
    """
    trace = Trace(ranks=[])
    if isinstance(path, (str, os.PathLike)):
        logs, skipped = _resolve(Path(path), latest, ranks)
        chained = False
        for entry, why in skipped:
            trace.diagnostics.append(
                Diagnostic("skipped", f"not read: {why}", _display(entry, display_root))
            )
    else:
        logs = [Path(p) for p in path]
        chained = True
    strings: dict[int, str] = {}
    for log in logs:
        rank = read_log(
            log,
            display_root=display_root,
            strings=strings if chained else None,
            cache_dir=cache_dir,
            max_bytes=max_bytes,
        )
        if not chained and _has_missing_strings(rank):
            borrowed = _sibling_strings(log, rank.pids, max_bytes)
            if borrowed:
                rank = read_log(
                    log,
                    display_root=display_root,
                    strings=borrowed,
                    cache_dir=cache_dir,
                    max_bytes=max_bytes,
                )
        if rank.rank is None:
            # The log never said (no torch.distributed context): trust its file name.
            match = RANK_LOG.match(Path(log).name)
            rank.rank = int(match.group(1)) if match else None
        if chained:
            strings.update(rank.strings)
        trace.ranks.append(rank)
        trace.diagnostics.extend(rank.diagnostics)
    return trace


def read_log(
    log: str | os.PathLike[str],
    *,
    display_root: str | os.PathLike[str] | None = None,
    strings: dict[int, str] | None = None,
    cache_dir: str | os.PathLike[str] | None = None,
    max_bytes: int = DEFAULT_MAX_LOG_BYTES,
) -> RankTrace:
    """Build the model of one log file (from the cache in ``cache_dir``, if given).

    At most ``max_bytes`` of the log (decompressed) are read.
    """
    display = _display(log, display_root)

    def build() -> RankTrace:
        reader = LogReader(log, display_path=display, max_bytes=max_bytes)
        return RankBuilder(reader, strings).build()

    if cache_dir is None:
        return build()
    from .cache import load_cached, strings_variant

    # A model read with another cap may be cut elsewhere: cached apart.
    cap = "" if max_bytes == DEFAULT_MAX_LOG_BYTES else f"m{max_bytes}"
    parts = [strings_variant(strings), cap]
    return load_cached(
        log,
        cache_dir,
        build,
        display_path=display,
        variant="-".join(p for p in parts if p),
        max_bytes=max_bytes,
    )


def _display(path: str | os.PathLike[str], display_root: str | os.PathLike[str] | None) -> str:
    display = os.fspath(path)
    if display_root is not None:
        try:
            display = os.path.relpath(path, display_root)
        except ValueError:
            pass
    return display


def _has_missing_strings(rank: RankTrace) -> bool:
    return any(d.kind == "intern" for d in rank.diagnostics)


def _sibling_strings(log: Path, pids: list[int], max_bytes: int) -> dict[int, str]:
    """Interned strings that other logs of the same process in the same directory define.

    Only entries a directory listing may read (:func:`_list_directory`), each
    read line by line up to ``max_bytes``.
    """
    strings: dict[int, str] = {}
    wanted = set(pids)
    for other in _list_directory(log.parent).files:
        if other == log or not TRACE_LOG.match(other.name):
            continue
        try:
            for index, text in _str_records(other, wanted, max_bytes):
                strings.setdefault(index, text)
        except OSError:
            continue
    return strings


def _str_records(path: Path, pids: set[int], max_bytes: int) -> Iterator[tuple[int, str]]:
    """The ``str`` records of a plain log, unless another process wrote it."""
    with open(path, "rb") as f:
        left = max_bytes
        carry = b""
        first = True
        while left > 0:
            data = f.read(min(CHUNK_SIZE, left))
            left -= len(data)
            if first:
                first = False
                other_pids = {int(m.group(1)) for m in _PID.finditer(data[:4096])}
                if pids and other_pids and not other_pids & pids:
                    return
            chunk = carry + data
            cut = chunk.rfind(b"\n") + 1 if data else len(chunk)  # whole lines only
            for match in _STR_RECORD.finditer(chunk, 0, cut):
                try:
                    text = load_json(b'"' + match.group(1) + b'"')
                except ValueError:
                    continue
                if isinstance(text, str):
                    yield int(match.group(2)), text
            carry = chunk[cut:] if len(chunk) - cut < CHUNK_SIZE else b""  # drop a huge line
            if not data:
                return


__all__ = [
    "load_trace",
    "newest_log",
    "rank_logs",
    "read_log",
    "resolve_logs",
]
