"""Find the logs a path means and read them into a :class:`Trace`.

A path is one log file, or a ``TORCH_TRACE`` directory: every rank's
``dedicated_log_torch_trace_rank_<N>[_suffix].log`` when there are rank logs,
else its newest log (tlparse's ``--latest``).  "Newest" is by the epoch times
recorded inside the logs (chromium event ``ts``, ``compilation_metrics``
``start_time``), read from a bounded prefix of each: a copy or a git checkout
reorders modification times, and the glog line prefix has no year.  File times
decide only when no log records a time.  A directory that mixes runs (two logs
of one rank, or a log without a rank beside rank logs) is reported, unless the
caller chose (``latest`` or ``ranks``).  A log that uses interned
strings defined in another log of the same process (``draft_export`` under
``TORCH_DTRACE`` writes such a pair) borrows that log's string table.

A trace directory is untrusted like its logs: an entry that is a link leading
out of the directory (to ``/proc/self/environ``, say, whose first line a
diagnostic would quote) or that is no regular file (a FIFO would block the
build, a device never end) is not read, and a ``skipped`` diagnostic names
it.  A log path given directly may be a link: that is the user's choice.
"""

from __future__ import annotations

import gzip
import logging
import os
import re
import zlib
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..diagnostics import Diagnostic, TraceReadError
from ..digests import compile_digest
from ..folders import list_folder
from ..model import RankTrace, Trace
from ..reader import (
    CHUNK_SIZE,
    DEFAULT_MAX_LOG_BYTES,
    FileDigest,
    LogReader,
    file_digest,
    file_sha256,
    load_json,
)
from ..runtime import RUNTIME_DIR, profile_claims, read_profiles
from .builder import RankBuilder

logger = logging.getLogger(__name__)

RANK_LOG = re.compile(r"^dedicated_log_torch_trace_rank_(\d+)(?:_[^/]*)?\.log(?:\.gz)?$")
TRACE_LOG = re.compile(r"^dedicated_log_torch_trace_.*\.log(?:\.gz)?$")
# One line only: a record that does not end as expected costs its own line.  The string's
# two alternatives start with different characters, so the match is linear.
_STR_RECORD = re.compile(rb'\] \{"str": \["((?:[^"\\\n]|\\.)*)", (\d{1,30})\]\}')
_PID = re.compile(rb"^\S+ \S+ +(\d{1,19}) ", re.M)

#: Bytes read (decompressed) from the start of a log to find when it was recorded: torch
#: logs its first chromium event within the first records.
TIME_PREFIX_BYTES = 1 << 20
# ``"ts": 1795261848850498.0`` (microseconds), ``"start_time": 1712154528.05`` (seconds),
# ``"start_time_us": ...``: a literal key, then digits: linear.
_EPOCH_FIELD = re.compile(rb'"(ts|start_time|start_time_us)": ?(\d{1,20})[.,}\s]')
# Plausible epoch seconds (2001 to 5138): anything else is no time, whatever a log claims.
_EPOCH_RANGE = (1e9, 1e11)
_TIMES: dict[tuple[str, int, int], float | None] = {}  # (path, size, mtime_ns): time
_TIMES_KEPT = 4096


@dataclass
class _Listing:
    """A directory's entries that may be read as logs, and the ones that may not."""

    files: list[Path] = field(default_factory=list)
    skipped: list[tuple[Path, str]] = field(default_factory=list)  # entry, why


def _list_directory(directory: Path) -> _Listing:
    """Regular files of ``directory``, links among them only where they stay inside it
    (:func:`~..folders.list_folder`); subfolders are neither read nor reported."""
    listing = list_folder(directory)
    return _Listing(listing.files, listing.refused)


def rank_logs(directory: str | os.PathLike[str]) -> dict[int, Path]:
    """Every rank's log in a directory, by rank (for a repeated rank, its newest log)."""
    return {r: logs[0] for r, logs in _rank_groups(_list_directory(Path(directory))).items()}


def _rank_groups(listing: _Listing) -> dict[int, list[Path]]:
    """Each rank's logs, newest first (by :func:`_newest_first`)."""
    found: dict[int, list[Path]] = {}
    for entry in listing.files:
        match = RANK_LOG.match(entry.name)
        if match:
            found.setdefault(int(match.group(1)), []).append(entry)
    return {r: _newest_first(found[r])[0] if len(found[r]) > 1 else found[r] for r in sorted(found)}


def newest_log(directory: str | os.PathLike[str]) -> Path | None:
    """A directory's newest trace log by recorded time (any file if none is named so)."""
    return _newest_log(_list_directory(Path(directory)))[0]


def _candidates(listing: _Listing) -> list[Path]:
    return [p for p in listing.files if TRACE_LOG.match(p.name)] or listing.files


def _newest_log(listing: _Listing) -> tuple[Path | None, str]:
    """The newest candidate log and what decided it (``recorded time``, ``modification time``)."""
    logs = _candidates(listing)
    if len(logs) <= 1:  # nothing to choose: no log read
        return (logs[0] if logs else None), ""
    ordered, by = _newest_first(logs)
    return ordered[0], by


def _newest_first(logs: list[Path]) -> tuple[list[Path], str]:
    """``logs`` newest first, and by what: the times they record, else their files' times.

    Logs that record a time come before those that do not (a log without one is
    unlikely to be the run's own); ties go to the later file name.
    """
    times = {p: recorded_time(p) for p in logs}
    if any(t is not None for t in times.values()):
        key = {p: (t is not None, t or 0.0, p.name) for p, t in times.items()}
        return sorted(logs, key=key.__getitem__, reverse=True), "recorded time"
    return sorted(logs, key=lambda p: (_mtime(p), p.name), reverse=True), "modification time"


def _mtime(path: Path) -> float:
    try:
        return path.stat().st_mtime
    except OSError:
        return 0.0


def recorded_time(path: str | os.PathLike[str]) -> float | None:
    """When a log was recorded, in epoch seconds: the earliest time in its first records.

    Read from at most :data:`TIME_PREFIX_BYTES` (decompressed) of the log, once per
    file version (size and modification time) in a process; None when it records none.
    """
    try:
        st = os.stat(path)
    except OSError:
        return None
    key = (os.fspath(path), st.st_size, st.st_mtime_ns)
    if key not in _TIMES:
        if len(_TIMES) >= _TIMES_KEPT:
            _TIMES.clear()
        _TIMES[key] = _earliest_time(_prefix(path))
    return _TIMES[key]


def _prefix(path: str | os.PathLike[str]) -> bytes:
    try:
        with open(path, "rb") as raw:
            head = raw.read(TIME_PREFIX_BYTES)
        if head.startswith(b"\x1f\x8b"):
            with gzip.open(path, "rb") as f:
                return f.read(TIME_PREFIX_BYTES)
        return head
    except (OSError, EOFError, zlib.error):
        return b""


def _earliest_time(data: bytes) -> float | None:
    earliest: float | None = None
    low, high = _EPOCH_RANGE
    for match in _EPOCH_FIELD.finditer(data):
        value = int(match.group(2))
        seconds = value / 1e6 if match.group(1) != b"start_time" else float(value)
        if low <= seconds < high and (earliest is None or seconds < earliest):
            earliest = seconds
    return earliest


@dataclass(frozen=True)
class LogChoice:
    """The logs a path stands for, and how they were chosen (for the build to say)."""

    logs: list[Path]
    skipped: list[tuple[Path, str]] = field(default_factory=list)  # entries not read, why
    among: int = 0  # candidate logs in the directory (0: a file was named)
    by: str = ""  # "recorded time", "modification time", "ranks"; "" for a file or a list
    mixed: str | None = None  # why the directory looks like more than one run, if it does
    #: The folder's other logs without a rank, not read: earlier runs, or other programs.
    others: list[Path] = field(default_factory=list)
    #: The ranks the folder has logs of, whichever were chosen.
    ranks: tuple[int, ...] = ()
    folder: bool = False  # a folder was named (its logs chosen), not a log

    def describe(self) -> str:
        """``using x.log (newest of 3 logs by recorded time)``, ``using 4 rank logs ...``."""
        if self.by == "ranks":
            logs = "1 rank log" if len(self.logs) == 1 else f"{len(self.logs)} rank logs"
            names = ", ".join(p.name for p in self.logs[:4])
            more = f" and {len(self.logs) - 4} more" if len(self.logs) > 4 else ""
            return f"using {logs} ({names}{more})"
        name = self.logs[0].name if self.logs else "no log"
        if self.among == 1:
            return f"using {name} (the only log)"
        if not self.by:
            return f"using {name}"
        return f"using {name} (newest of {self.among} logs by {self.by})"


def resolve_logs(
    path: str | os.PathLike[str], *, latest: bool = False, ranks: Sequence[int] | None = None
) -> list[Path]:
    """The log files a path stands for, in rank order."""
    return choose_logs(path, latest=latest, ranks=ranks).logs


def choose_logs(
    path: str | os.PathLike[str], *, latest: bool = False, ranks: Sequence[int] | None = None
) -> LogChoice:
    """Which logs a path stands for, why, and whether its directory mixes runs.

    Raises :class:`TraceReadError` for a directory without any log.
    """
    p = Path(path)
    if not p.is_dir():
        return LogChoice([p])
    listing = _list_directory(p)
    # A skipped entry matters where it could have been read: named like a log, or in a
    # directory without any log named so (where any file is a candidate).
    named = any(TRACE_LOG.match(e.name) for e in listing.files)
    skipped = [
        (e, why) for e, why in listing.skipped if TRACE_LOG.match(e.name) or RANK_LOG.match(e.name)
    ]
    if not named:
        skipped = listing.skipped
    groups = _rank_groups(listing)
    if not latest and groups:
        wanted = groups if ranks is None else {r: groups[r] for r in ranks if r in groups}
        mixed = None if ranks is not None else _mixed_runs(listing, groups)
        chosen = [logs[0] for logs in wanted.values()]
        return LogChoice(chosen, skipped, len(groups), "ranks", mixed, [], tuple(groups), True)
    newest, by = _newest_log(listing)
    if newest is None:
        raise TraceReadError(str(p), "the directory holds no log file")
    candidates = _candidates(listing)
    others = [c for c in candidates if c != newest]
    return LogChoice([newest], skipped, len(candidates), by, None, others, tuple(groups), True)


def _mixed_runs(listing: _Listing, groups: dict[int, list[Path]]) -> str | None:
    """Why the rank logs of a directory look like more than one run, or None."""
    reasons = []
    repeated = {r: logs for r, logs in groups.items() if len(logs) > 1}
    if repeated:
        rank, logs = next(iter(repeated.items()))
        reasons.append(
            f"{len(repeated)} rank(s) have more than one log (rank {rank}: "
            f"{', '.join(p.name for p in logs[:3])}); each rank's newest log is used"
        )
    loose = [p for p in listing.files if TRACE_LOG.match(p.name) and not RANK_LOG.match(p.name)]
    if loose:
        reasons.append(
            f"{len(loose)} log(s) without a rank beside the rank logs are left out "
            f"({', '.join(p.name for p in loose[:3])})"
        )
    if not reasons:
        return None
    return (
        "the directory mixes logs of different runs: "
        + "; ".join(reasons)
        + " (name the ranks with :ranks:, or say :latest: for the newest log alone)"
    )


def load_trace(
    path: str | os.PathLike[str] | Sequence[str | os.PathLike[str]],
    *,
    latest: bool = False,
    ranks: Sequence[int] | None = None,
    display_root: str | os.PathLike[str] | None = None,
    cache_dir: str | os.PathLike[str] | None = None,
    max_bytes: int = DEFAULT_MAX_LOG_BYTES,
    progress: Callable[[int, int], None] | None = None,
    choice: LogChoice | None = None,
) -> Trace:
    """Read a log, a directory of logs, or an explicit list of logs of one process.

    Only an unreadable file raises (:class:`TraceReadError`); everything wrong
    inside a log becomes a diagnostic.  With a list, later logs borrow the
    interned strings of earlier ones.  With ``cache_dir``, each log's model is
    cached there (see :mod:`.cache`), so an unchanged log is not parsed again.
    At most ``max_bytes`` of each log (decompressed) are read: a longer log is
    cut, with a ``limit`` diagnostic.  ``progress(done, total)`` is told the bytes of
    the logs' files read so far, of all of them, now and then (a command line's bar).
    ``choice``: the logs of ``path`` as :func:`.opening.open_input` chose them (else
    chosen here, with ``latest`` and ``ranks``).
    """
    trace = Trace(ranks=[])
    if not isinstance(path, (str, os.PathLike)):  # the logs of one process, in order
        logs = [Path(p) for p in path]
        _read_logs(trace, logs, True, display_root, cache_dir, max_bytes, progress)
        _ranks_from_file_names(trace, logs, display_root)
        return trace
    choice = choice or choose_logs(path, latest=latest, ranks=ranks)
    _note_choice(trace, path, choice, display_root)
    _read_logs(trace, choice.logs, False, display_root, cache_dir, max_bytes, progress)
    _ranks_from_file_names(trace, choice.logs, display_root)
    folder = Path(path) if choice.folder else Path(path).parent
    _attach_runtime(trace, folder, display_root)
    return trace


def _note_choice(
    trace: Trace,
    path: str | os.PathLike[str],
    choice: LogChoice,
    display_root: str | os.PathLike[str] | None,
) -> None:
    """What the choice of logs left out, said in the trace: entries not read, a folder
    that mixes runs, the folder's other logs; and how the logs were chosen."""
    for entry, why in choice.skipped:
        trace.diagnostics.append(
            Diagnostic("skipped", f"not read: {why}", display_path(entry, display_root))
        )
    if choice.mixed:
        trace.diagnostics.append(
            Diagnostic("mixed_runs", choice.mixed, display_path(path, display_root))
        )
    trace.not_shown = [display_path(p, display_root) for p in choice.others]
    trace.chosen_by = choice.by


def _read_logs(
    trace: Trace,
    logs: list[Path],
    chained: bool,
    display_root: str | os.PathLike[str] | None,
    cache_dir: str | os.PathLike[str] | None,
    max_bytes: int,
    progress: Callable[[int, int], None] | None,
) -> None:
    """Read each log into a rank of ``trace``.  ``chained``: the logs of one process, each
    borrowing the interned strings of the ones before (never cached); else the ranks of a
    run, which share equal strings and may come from the model cache."""
    strings: dict[int, str] = {}
    shared: dict[str, str] | None = {} if len(logs) > 1 and not chained else None
    digests: dict[str, FileDigest] = {}
    if cache_dir is not None and not chained:
        digests = warm_cache(logs, cache_dir, display_root, max_bytes)
    sizes = [_size(log) for log in logs] if progress is not None else []
    for number, log in enumerate(logs):
        told = None
        if progress is not None:
            told = _told(progress, sum(sizes[:number]), sum(sizes))
        rank = _read_rank(
            log,
            display_root=display_root,
            strings=strings if chained else None,
            cache_dir=cache_dir,
            max_bytes=max_bytes,
            known=digests.get(os.fspath(log)),
            progress=told,
        )
        if chained:
            strings.update(rank.strings)
        if shared is not None:
            share_strings(rank, shared)
        trace.ranks.append(rank)
        trace.diagnostics.extend(rank.diagnostics)


def _read_rank(
    log: Path,
    *,
    display_root: str | os.PathLike[str] | None,
    strings: dict[int, str] | None,
    cache_dir: str | os.PathLike[str] | None,
    max_bytes: int,
    known: FileDigest | None,
    progress: Callable[[int], None] | None,
) -> RankTrace:
    """One log of a run (``strings`` None) or of a chain: read again with the string
    table of a sibling log of its process where it uses strings it never defines; its
    rank number from its file name where the log never said."""
    rank = read_log(
        log,
        display_root=display_root,
        strings=strings,
        cache_dir=cache_dir,
        max_bytes=max_bytes,
        known=known,
        progress=progress,
    )
    if strings is None and _has_missing_strings(rank):
        borrowed = _sibling_strings(log, rank.pids, max_bytes)
        if borrowed:
            rank = read_log(
                log,
                display_root=display_root,
                strings=borrowed,
                cache_dir=cache_dir,
                max_bytes=max_bytes,
                known=known,
            )
    if rank.rank is None:
        # The log never said (no torch.distributed context): trust its file name.
        match = RANK_LOG.match(Path(log).name)
        rank.rank = int(match.group(1)) if match else None
    return rank


def _attach_runtime(
    trace: Trace, folder: Path, display_root: str | os.PathLike[str] | None
) -> None:
    """The profiles of ``run --runtime`` in ``runtime/`` beside the logs: the compiled run's
    of the processes these logs are from (by pid), the eager run's of their ranks."""
    profiles, problems = read_profiles(folder / RUNTIME_DIR)
    for problem in problems:
        trace.diagnostics.append(
            Diagnostic("runtime", problem, display_path(folder / RUNTIME_DIR, display_root))
        )
    pids = {pid for rank in trace.ranks for pid in rank.pids}
    ranks = {rank.rank for rank in trace.ranks}
    for profile in profiles:
        if profile.mode == "compiled" and profile.pid not in pids:
            continue  # another run's, or a process whose log is not shown
        if profile.mode == "eager" and len(ranks) > 1 and profile.rank not in ranks:
            continue
        trace.runtime.append(profile)
    for problem in profile_claims(trace.runtime, trace.ranks):  # one rank's, never two's
        trace.diagnostics.append(
            Diagnostic("runtime", problem, display_path(folder / RUNTIME_DIR, display_root))
        )


def _size(log: Path) -> int:
    try:
        return os.stat(log).st_size
    except OSError:
        return 0


def _told(progress: Callable[[int, int], None], before: int, total: int) -> Callable[[int], None]:
    """One log's reader's position, as the bytes read of all the logs."""
    return lambda position: progress(before + position, total)


def share_strings(rank: RankTrace, seen: dict[str, str]) -> None:
    """Equal texts of a rank's model made one object with those of the ranks read before
    (``seen``: each text once).  A job's ranks log the same configs, keys, stacks and
    reasons: read apart, each holds copies, 0.6 MB a rank, and a thousand ranks' models
    are held at once; shared, 0.3 MB.  Only the texts change identity, never a value."""
    for c in rank.compiles:
        for m in c.metrics:
            m.data = _shared_dict(m.data, seen)
        c.tensor_descriptions = [_shared_dict(d, seen) for d in c.tensor_descriptions]
        for f in c.failures:
            f.reason = seen.setdefault(f.reason, f.reason)
        for a in c.artifacts:
            a.name = seen.setdefault(a.name, a.name)
            a.metadata = _shared_dict(a.metadata, seen)
        for frame in c.stack or ():
            frame.filename = seen.setdefault(frame.filename, frame.filename)
            frame.name = seen.setdefault(frame.name, frame.name)
            if frame.loc is not None:
                frame.loc = seen.setdefault(frame.loc, frame.loc)


def _shared_dict(data: dict[str, Any], seen: dict[str, str], depth: int = 0) -> dict[str, Any]:
    if depth > SHARED_DEPTH:  # deeper JSON (any depth is legal) is kept as it is
        return data
    return {
        (seen.setdefault(k, k) if type(k) is str else k): _shared(v, seen, depth + 1)
        for k, v in data.items()
    }


def _shared(value: Any, seen: dict[str, str], depth: int) -> Any:
    kind = type(value)
    if kind is str:
        return seen.setdefault(value, value)
    if kind is dict:
        return _shared_dict(value, seen, depth)
    if kind is list and depth <= SHARED_DEPTH:
        return [_shared(v, seen, depth + 1) for v in value]
    return value


#: Levels of a record's JSON whose texts :func:`share_strings` shares.
SHARED_DEPTH = 8


#: Logs from which a folder's logs are parsed in worker processes (see :func:`warm_cache`).
PARALLEL_LOGS = 8
#: Logs a worker parses before a fresh one takes over (its memory is returned).
LOGS_PER_WORKER = 32


def warm_cache(
    logs: Sequence[Path],
    cache_dir: str | os.PathLike[str],
    display_root: str | os.PathLike[str] | None = None,
    max_bytes: int = DEFAULT_MAX_LOG_BYTES,
) -> dict[str, FileDigest]:
    """Build and cache the models of many logs (a job's ranks) in worker processes, one
    per core, before they are loaded from the cache one by one.  Returns the digests it
    took, by path, so that loading the logs does not read them again.  Parsing is most of a
    cold many-rank build, and a process that parsed a thousand logs keeps much of the
    memory it used (the allocator cannot return pages that the models' objects pin):
    loaded from the cache, a thousand ranks' models cost a third of that.  Where processes
    cannot be forked, or for a few logs, nothing happens: the logs are read as always.
    """
    import multiprocessing

    if len(logs) < PARALLEL_LOGS or "fork" not in multiprocessing.get_all_start_methods():
        return {}
    digests: dict[str, FileDigest] = {}
    for log in logs:
        try:
            digests[os.fspath(log)] = file_digest(log)
        except OSError:
            pass
    logs = [log for log in logs if not _cached(digests.get(os.fspath(log)), cache_dir, max_bytes)]
    if len(logs) < PARALLEL_LOGS:  # most are cached already (a rebuild): load them here
        return digests
    workers = max(1, min(os.cpu_count() or 1, len(logs)))
    jobs = [(os.fspath(log), os.fspath(cache_dir), display_root, max_bytes) for log in logs]
    try:
        context = multiprocessing.get_context("fork")
        with context.Pool(workers, maxtasksperchild=LOGS_PER_WORKER) as pool:
            pool.starmap(_cache_one, jobs, chunksize=1)
    except (OSError, RuntimeError, ValueError) as e:  # no processes here: read as always
        logger.debug("logs read in this process: %s", e)
    return digests


def _cached(digest: FileDigest | None, cache_dir: str | os.PathLike[str], max_bytes: int) -> bool:
    """Whether the model cache holds the model of the log of this digest (as
    :func:`read_log` would look for it)."""
    from .cache import cache_path

    if digest is None:  # unreadable: the build says why
        return False
    variant = _variant(None, max_bytes)
    path = cache_path(cache_dir, digest.sha256, compressed=digest.compressed, variant=variant)
    return path.is_file()


def _variant(strings: dict[int, str] | None, max_bytes: int) -> str:
    """The cache variant of a log's model: read with borrowed strings, or another cap (a
    model cut elsewhere is cached apart)."""
    from .cache import strings_variant

    cap = "" if max_bytes == DEFAULT_MAX_LOG_BYTES else f"m{max_bytes}"
    return "-".join(p for p in (strings_variant(strings), cap) if p)


def _cache_one(
    log: str, cache_dir: str, display_root: str | os.PathLike[str] | None, max_bytes: int
) -> None:
    """In a worker: the model of one log, cached (an unreadable log is said when the
    build reads it itself)."""
    try:
        read_log(log, display_root=display_root, cache_dir=cache_dir, max_bytes=max_bytes)
    except Exception as e:  # noqa: BLE001 - the build reads the log again and says why
        logger.debug("not cached: %s: %s", log, e)


def _ranks_from_file_names(
    trace: Trace, logs: Sequence[Path], display_root: str | os.PathLike[str] | None
) -> None:
    """Logs that claim one rank number (copies of one log, say) are told apart by the rank
    their file names give, as tlparse does, when those are all there and distinct."""
    numbers = [r.rank for r in trace.ranks]
    if len(set(numbers)) == len(numbers):
        return
    named = [RANK_LOG.match(Path(log).name) for log in logs]
    if not all(named) or len({int(m.group(1)) for m in named if m}) != len(named):
        return
    for rank, match in zip(trace.ranks, named, strict=True):
        assert match is not None
        said = rank.rank
        rank.rank = int(match.group(1))
        if said != rank.rank:
            note = Diagnostic(
                "rank",
                f"the log says it is rank {said}; its file name says "
                f"rank {rank.rank}, which is used",
                rank.path,
            )
            rank.diagnostics.append(note)
            trace.diagnostics.append(note)


def read_log(
    log: str | os.PathLike[str],
    *,
    display_root: str | os.PathLike[str] | None = None,
    strings: dict[int, str] | None = None,
    cache_dir: str | os.PathLike[str] | None = None,
    max_bytes: int = DEFAULT_MAX_LOG_BYTES,
    known: FileDigest | None = None,
    progress: Callable[[int], None] | None = None,
) -> RankTrace:
    """Build the model of one log file (from the cache in ``cache_dir``, if given).

    At most ``max_bytes`` of the log (decompressed) are read.  ``known``: the log's digest,
    taken earlier in this build (see :func:`~.cache.load_cached`).  ``progress``: see
    :class:`~.reader.LogReader`.
    """
    display = display_path(log, display_root)

    def build() -> RankTrace:
        reader = LogReader(log, display_path=display, max_bytes=max_bytes, progress=progress)
        rank = RankBuilder(reader, strings).build()
        if rank.rank is not None:  # one log of a distributed job: told alike by digests,
            for c in rank.compiles:  # kept in the model cache with the rest
                compile_digest(c, rank.rank)
        return rank

    from .cache import load_cached

    if cache_dir is None:
        rank = build()
        try:
            rank.sha256 = file_sha256(log)[0]  # another read of the file: ~1 GB/s
            rank.file_size = os.stat(log).st_size
        except OSError:
            pass
        return rank

    return load_cached(
        log,
        cache_dir,
        build,
        display_path=display,
        variant=_variant(strings, max_bytes),
        max_bytes=max_bytes,
        known=known,
    )


def display_path(path: str | os.PathLike[str], display_root: str | os.PathLike[str] | None) -> str:
    """A path as messages show it: relative to ``display_root`` where it can be."""
    display = os.fspath(path)
    if display_root is not None:
        try:
            display = os.path.relpath(path, display_root)
        except ValueError:
            pass
    return display


def _has_missing_strings(rank: RankTrace) -> bool:
    return any(d.subtype == "intern" for d in rank.diagnostics)


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
    "display_path",
    "LogChoice",
    "choose_logs",
    "load_trace",
    "recorded_time",
    "newest_log",
    "rank_logs",
    "read_log",
    "resolve_logs",
]
