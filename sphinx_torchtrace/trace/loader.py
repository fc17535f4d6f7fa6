"""Find the logs a path means and read them into a :class:`Trace`.

A path is one log file, or a ``TORCH_TRACE`` directory: every rank's
``dedicated_log_torch_trace_rank_<N>[_suffix].log`` when there are rank logs,
else its newest log (tlparse's ``--latest``).  A log that uses interned
strings defined in another log of the same process (``draft_export`` under
``TORCH_DTRACE`` writes such a pair) borrows that log's string table.
"""

from __future__ import annotations

import os
import re
from collections.abc import Sequence
from pathlib import Path

from .builder import RankBuilder
from .diagnostics import TraceReadError
from .model import RankTrace, Trace
from .reader import LogReader

RANK_LOG = re.compile(r"^dedicated_log_torch_trace_rank_(\d+)(?:_[^/]*)?\.log$")
TRACE_LOG = re.compile(r"^dedicated_log_torch_trace_.*\.log(?:\.gz)?$")
_STR_RECORD = re.compile(rb'\] \{"str": \["((?:[^"\\]|\\.)*)", (\d+)\]\}')
_PID = re.compile(rb"^\S+ \S+ +(\d+) ", re.M)


def rank_logs(directory: str | os.PathLike[str]) -> dict[int, Path]:
    """Every rank's log in a directory, by rank (the first file wins for a repeated rank)."""
    found: dict[int, Path] = {}
    for entry in sorted(Path(directory).iterdir()):
        match = RANK_LOG.match(entry.name)
        if match and entry.is_file():
            found.setdefault(int(match.group(1)), entry)
    return dict(sorted(found.items()))


def newest_log(directory: str | os.PathLike[str]) -> Path | None:
    """The most recently modified trace log of a directory (any file if none is named so)."""
    files = [p for p in Path(directory).iterdir() if p.is_file()]
    logs = [p for p in files if TRACE_LOG.match(p.name)] or files
    if not logs:
        return None
    return max(logs, key=lambda p: (p.stat().st_mtime, p.name))


def resolve_logs(
    path: str | os.PathLike[str], *, latest: bool = False, ranks: Sequence[int] | None = None
) -> list[Path]:
    """The log files a path stands for, in rank order."""
    p = Path(path)
    if not p.is_dir():
        return [p]
    if not latest:
        by_rank = rank_logs(p)
        if by_rank:
            wanted = by_rank if ranks is None else {r: by_rank[r] for r in ranks if r in by_rank}
            return list(wanted.values())
    newest = newest_log(p)
    if newest is None:
        raise TraceReadError(str(p), "the directory holds no log file")
    return [newest]


def load_trace(
    path: str | os.PathLike[str] | Sequence[str | os.PathLike[str]],
    *,
    latest: bool = False,
    ranks: Sequence[int] | None = None,
    display_root: str | os.PathLike[str] | None = None,
    cache_dir: str | os.PathLike[str] | None = None,
) -> Trace:
    """Read a log, a directory of logs, or an explicit list of logs of one process.

    Only an unreadable file raises (:class:`TraceReadError`); everything wrong
    inside a log becomes a diagnostic.  With a list, later logs borrow the
    interned strings of earlier ones.  With ``cache_dir``, each log's model is
    cached there (see :mod:`.cache`), so an unchanged log is not parsed again.
    """
    if isinstance(path, (str, os.PathLike)):
        logs = resolve_logs(path, latest=latest, ranks=ranks)
        chained = False
    else:
        logs = [Path(p) for p in path]
        chained = True
    trace = Trace(ranks=[])
    strings: dict[int, str] = {}
    for log in logs:
        rank = read_log(
            log,
            display_root=display_root,
            strings=strings if chained else None,
            cache_dir=cache_dir,
        )
        if not chained and _has_missing_strings(rank):
            borrowed = _sibling_strings(log, rank.pids)
            if borrowed:
                rank = read_log(
                    log, display_root=display_root, strings=borrowed, cache_dir=cache_dir
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
) -> RankTrace:
    """Build the model of one log file (from the cache in ``cache_dir``, if given)."""
    display = os.fspath(log)
    if display_root is not None:
        try:
            display = os.path.relpath(log, display_root)
        except ValueError:
            pass

    def build() -> RankTrace:
        return RankBuilder(LogReader(log, display_path=display), strings).build()

    if cache_dir is None:
        return build()
    from .cache import load_cached, strings_variant

    return load_cached(
        log, cache_dir, build, display_path=display, variant=strings_variant(strings)
    )


def _has_missing_strings(rank: RankTrace) -> bool:
    return any(d.kind == "intern" for d in rank.diagnostics)


def _sibling_strings(log: Path, pids: list[int]) -> dict[int, str]:
    """Interned strings that other logs of the same process in the same directory define."""
    import json

    strings: dict[int, str] = {}
    for other in sorted(log.parent.iterdir()):
        if other == log or not other.is_file() or not TRACE_LOG.match(other.name):
            continue
        try:
            data = other.read_bytes()
        except OSError:
            continue
        other_pids = {int(m.group(1)) for m in _PID.finditer(data[:4096])}
        if pids and other_pids and not other_pids & set(pids):
            continue
        for match in _STR_RECORD.finditer(data):
            try:
                text = json.loads(b'"' + match.group(1) + b'"')
            except ValueError:
                continue
            strings.setdefault(int(match.group(2)), text)
    return strings


__all__ = [
    "load_trace",
    "newest_log",
    "rank_logs",
    "read_log",
    "resolve_logs",
]
