"""Sharing a trace: ``check``, ``redact`` and ``bundle`` over a log or a folder of logs.

A folder's logs (a job's ranks) are redacted in parallel processes.  The first log is
redacted first, alone: the folders, names and values it teaches seed the others, so a
folder every rank names gets one name in every rank's log (``~/project``) and the ranks
still read alike.  A folder only a later rank names gets a name of its own, the same in
every process (:class:`~.redact_text.PathMap`'s ``salt``).

A bundle is a zip of the redacted logs, the report built from them and a README of what
was removed, written in a fixed order with fixed times: the same input, the same bytes.
Every name in it is made here (:func:`bundle_names`): an input's file name may hold a
user's name, a Windows ``..\\`` climb, a line break or a terminal escape, and nothing of
it reaches the zip, its README or its report.
"""

from __future__ import annotations

import os
import secrets
import zipfile
from collections import Counter
from collections.abc import Iterable, Sequence
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass
from pathlib import Path

from ..diagnostics import TraceReadError
from ..folders import list_folder, real_root, refusal, walk_files
from ..inputs.loader import RANK_LOG, TRACE_LOG
from .redact import LogReport, open_log, redact_log, scan_log
from .redact_text import DEFAULT_CLASSES, Options, PathMap, TextRedactor

#: Logs of a folder redacted at once, at most (one process each).
MAX_JOBS = 16
#: The time every file of a bundle has (zip's earliest).
ZIP_TIME = (1980, 1, 1, 0, 0, 0)
#: The most digits of a rank a bundle's log name keeps (more: named as a log without one).
MAX_RANK_DIGITS = 9


class RefusedEntries(Exception):
    """Entries of a folder the user named that must not be read (:mod:`..folders`): a link
    leading out of it, a FIFO, a device, a link to nowhere.  The command stops rather than
    share what is left: a job's folder without one of its ranks is not the job's trace."""

    def __init__(self, folder: Path, refused: Sequence[tuple[Path, str]]) -> None:
        self.folder = folder
        self.refused = list(refused)
        entry, why = self.refused[0]
        more = f" (and {len(self.refused) - 1} more)" if len(self.refused) > 1 else ""
        super().__init__(f"{entry}: not read: {why}{more}")


def _is_log_name(name: str) -> bool:
    return name.endswith(".log") or name.endswith(".log.gz")


def log_files(path: Path) -> list[Path]:
    """A log, or the logs of a folder (``*.log``, ``*.log.gz``, not its subfolders), by
    name.  Raises :class:`RefusedEntries` for an entry named like a log that may not be
    read (:func:`~..folders.list_folder`); other names are not read, so not refused."""
    if not path.is_dir():
        # a log named directly may be a link (the user's choice), never a FIFO or device
        why = refusal(path, real_root(path))
        if why:
            raise RefusedEntries(path, [(path, why)])
        return [path]
    listing = list_folder(path)
    refused = [(p, why) for p, why in listing.refused if _is_log_name(p.name)]
    if refused:
        raise RefusedEntries(path, refused)
    return [p for p in listing.files if _is_log_name(p.name)]


#: Entries under a folder ``check`` looks at beside its logs, at most (bounded work).
MAX_BESIDE = 10_000


def beside_files(path: Path) -> list[Path]:
    """Every other file under a folder than its logs (a ``TORCH_COMPILE_DEBUG`` folder's
    files, a trace's runtime profiles and their meta files), by path: what ``check`` reads
    too, as a build publishes them; an entry that leads out of the folder is refused
    (:class:`RefusedEntries`), never read."""
    if not path.is_dir():
        return []
    files, refused = walk_files(path, limit=MAX_BESIDE)
    if refused:
        raise RefusedEntries(path, refused)
    logs = {p for p in files if p.parent == path and _is_log_name(p.name)}
    return [p for p in files if p not in logs]


@dataclass(frozen=True)
class _Seed:
    """What the first log of a folder taught, for the others (sent to other processes)."""

    options: Options
    names: tuple[str, ...]
    roots: tuple[tuple[str, str], ...]
    envs: tuple[tuple[str, str], ...]
    salt: str

    def redactor(self) -> TextRedactor:
        paths = PathMap(salt=self.salt, roots=dict(self.roots), envs=dict(self.envs))
        paths.names.update(self.names)
        redactor = TextRedactor(self.options, paths)
        redactor.names.update(self.names)
        return redactor


def _redact_one(src: Path, dest: Path, seed: _Seed) -> LogReport:
    return redact_log(src, dest, seed.redactor())


def _check_one(src: Path, seed: _Seed) -> LogReport:
    return scan_log(src, seed.redactor())


def redact_logs(
    logs: Sequence[Path], dests: Sequence[Path], options: Options, jobs: int | None = None
) -> list[LogReport]:
    """Redact each log to its destination; the reports in the order of ``logs``."""
    if not logs:
        return []
    first = TextRedactor(options)
    reports = [redact_log(logs[0], dests[0], first)]
    if len(logs) == 1:
        return reports
    seed = _Seed(
        options,
        tuple(sorted(first.names)),
        tuple(first.paths.roots.items()),
        tuple(first.paths.envs.items()),
        secrets.token_hex(16),
    )
    return reports + _parallel(
        _redact_one, [(s, d, seed) for s, d in zip(logs[1:], dests[1:], strict=True)], jobs
    )


def check_logs(logs: Sequence[Path], options: Options, jobs: int | None = None) -> list[LogReport]:
    """What each log reveals (``check``), in the order of ``logs``."""
    seed = _Seed(options, (), (), (), "")
    if len(logs) < 2:
        return [_check_one(log, seed) for log in logs]
    return _parallel(_check_one, [(log, seed) for log in logs], jobs)


def _parallel(fn, args: list[tuple[object, ...]], jobs: int | None) -> list[LogReport]:  # type: ignore[no-untyped-def]
    workers = max(1, min(jobs or os.cpu_count() or 1, MAX_JOBS, len(args)))
    if workers == 1:
        return [fn(*a) for a in args]
    with ProcessPoolExecutor(workers) as pool:
        futures = [pool.submit(fn, *a) for a in args]
        try:
            return [f.result() for f in futures]
        except TraceReadError:
            for f in futures:
                f.cancel()
            raise


def totals(reports: Iterable[LogReport]) -> tuple[Counter[str], dict[str, int]]:
    """Changes by class and paths by folder name, over several logs."""
    counts: Counter[str] = Counter()
    folders: Counter[str] = Counter()
    for r in reports:
        counts.update(r.counts)
        folders.update(r.folders)
    return counts, dict(sorted(folders.items()))


# -- the bundle ---------------------------------------------------------------------------


def bundle_names(logs: Sequence[Path]) -> list[str]:
    """The name each log has in a bundle, made here, never taken from its file name: a
    rank's log ``dedicated_log_torch_trace_rank_<N>.log`` (torch's naming, so the report
    built inside finds the ranks; ``N`` re-written from the integer), another torch log
    ``dedicated_log_torch_trace_<i>.log``, any other file ``trace-<i>.log`` (``i``: its
    place among ``logs``), with ``.gz`` for a gzip log.  A repeated rank gets ``_2``,
    ``_3``: rank discovery takes each rank's newest, as it did with the input's names."""
    names: list[str] = []
    taken: set[str] = set()
    for i, log in enumerate(logs):
        rank = RANK_LOG.match(log.name)
        if rank is not None and len(rank.group(1)) <= MAX_RANK_DIGITS:
            stem = f"dedicated_log_torch_trace_rank_{int(rank.group(1))}"
        elif TRACE_LOG.match(log.name):
            stem = f"dedicated_log_torch_trace_{i}"
        else:
            stem = f"trace-{i}"
        suffix = ".log.gz" if _is_gzip(log) else ".log"
        name, n = stem + suffix, 2
        while name in taken:
            name, n = f"{stem}_{n}{suffix}", n + 1
        taken.add(name)
        names.append(name)
    return names


def _is_gzip(path: Path) -> bool:
    """Whether a log is gzip, as redaction decides it (by its bytes, not its name)."""
    try:
        source, compressed = open_log(path)
    except TraceReadError:
        return False  # redaction says why it cannot be read
    source.close()
    return compressed


def readme(reports: Sequence[LogReport], names: Sequence[str], options: Options) -> str:
    """README.txt of a bundle: what it holds and what was removed (counts, never values).
    ``names``: the logs' names in the bundle (:func:`bundle_names`), checked as every
    member's name is: a README line is never an input's."""
    for name in names:
        _check_member(f"logs/{name}")
    counts, folders = totals(reports)
    kept = [c for c in DEFAULT_CLASSES if c not in options.classes()]
    lines = [
        "A PyTorch TORCH_TRACE log, redacted for a bug report by sphinx-torchtrace.",
        "",
        "logs/    the redacted log(s): tlparse and sphinx-torchtrace read them as they are",
        "report/  the report built from them: open report/index.html",
        "",
        "Removed before sharing:",
        f"  machine paths:     {counts['paths']} (folders renamed: "
        + (", ".join(f"{n} ({c})" for n, c in folders.items()) or "none")
        + ")",
        f"  user/host names:   {counts['names']}",
        f"  secrets:           {counts['secrets']} (environment values, tokens, keys)",
        f"  lines of source:   {counts['source']} (shown as [source removed])",
        *(
            [f"  tensor values:     {counts['constants']} (shown as 0.)"]
            if options.constants
            else []
        ),
        "",
        "Logs: " + ", ".join(names),
        "  (named by sphinx-torchtrace: a rank's log by its rank; no input file's name is kept)",
    ]
    if kept:
        lines += ["", "Kept on request: " + ", ".join(kept)]
    return "\n".join(lines) + "\n"


def write_zip(dest: Path, files: Sequence[tuple[str, Path]], readme_text: str) -> None:
    """A zip of ``files`` (name in the zip, file) and README.txt, sorted, with fixed times
    and modes: the same files make the same bytes.  Raises ValueError, before writing
    anything, for a name no archive should hold (:func:`_check_member`)."""
    for name, _ in files:
        _check_member(name)
    part = dest.with_name(dest.name + ".part")
    with zipfile.ZipFile(part, "w", zipfile.ZIP_DEFLATED) as z:
        entries = sorted([("README.txt", None), *files], key=lambda e: e[0])
        for name, path in entries:
            info = zipfile.ZipInfo(name, ZIP_TIME)
            info.compress_type = zipfile.ZIP_DEFLATED
            info.external_attr = 0o644 << 16
            if path is None:
                z.writestr(info, readme_text.encode("utf-8"))
            else:
                with open(path, "rb") as src, z.open(info, "w") as out:
                    while data := src.read(1 << 20):
                        out.write(data)
    os.replace(part, dest)


def _check_member(name: str) -> None:
    """Refuse a member name an unzip tool or a reader could take for more than a file of
    the bundle: a control or invisible character (a line break, an escape), a backslash
    (a Windows ``..\\`` climb), an absolute path, or a ``.``/``..``/empty segment."""
    if (
        not name.isprintable()
        or "\\" in name
        or name.startswith("/")
        or any(part in ("", ".", "..") for part in name.split("/"))
    ):
        raise ValueError(f"not a name for a bundle's file: {name!r}")


def tree_files(root: Path, prefix: str) -> list[tuple[str, Path]]:
    """Every file under ``root`` as (``prefix/relative/path``, file).  Raises
    :class:`RefusedEntries` for an entry that leads out of ``root`` or is no file
    (:func:`~..folders.walk_files`): a zip never holds what is not in the folder."""
    files, refused = walk_files(root)
    if refused:
        raise RefusedEntries(root, refused)
    return [(f"{prefix}/{p.relative_to(root).as_posix()}", p) for p in files]
