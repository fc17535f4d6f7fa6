"""``check``, ``redact`` and ``bundle``: the commands that make a trace safe to post.

Part of the command line (:mod:`.cli` adds them to its parser).  What they print passes
through :func:`~.site.characters.console_text`: a finding's text is the log's, so it is
escaped, and no line starts with it (each starts with ``LOG:LINE:``).  A secret is named
by its kind, never shown; what ``redact`` could not remove is named by class and line
only.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from .site.characters import console_json, console_text
from .trace.diagnostics import TraceReadError
from .trace.secrets import masked_name
from .trace.sharing.redact import LogReport
from .trace.sharing.redact_text import CLASSES, DEFAULT_CLASSES, Options
from .trace.sharing.share import (
    RefusedEntries,
    beside_files,
    bundle_names,
    check_logs,
    log_files,
    readme,
    redact_logs,
    totals,
    tree_files,
    write_zip,
)

PROG = "sphinx-torchtrace"


class ShareError(Exception):
    """Input the command cannot use: one line, exit status 2."""


def add_share_commands(commands: Any) -> None:
    """Add ``check``, ``redact`` and ``bundle`` to the command line's subparsers."""
    check = commands.add_parser(
        "check",
        help="list what a log would reveal (paths, names, secrets, source); exit 1 if any",
        description="List each machine path, user or host name, secret and line of source "
        "code a log (or a folder of logs) holds, as LOG:LINE: class: what (a secret by its "
        "kind, never its value).  Exit 1 when anything is found, 0 when the log is clean, "
        "2 when it cannot be read.",
    )
    check.add_argument("path", metavar="LOG", help="a log file or a folder of logs")
    check.add_argument("--json", action="store_true", help="print the findings as JSON")
    _class_options(check)
    check.set_defaults(run=_check)

    redact = commands.add_parser(
        "redact",
        help="write a copy of a log without paths, names, secrets and source",
        description="Write LOG (or each log of a folder, in parallel) redacted to OUT: "
        "machine paths as stable names (~/project/...), user and host names as 'user', "
        "secrets masked, the user's source lines as [source removed]; payload md5s "
        "recomputed, so tlparse and this tool read it as before.  Prints what changed by "
        "class, then checks OUT: exit 1 if something private remains, 2 on unreadable input.",
    )
    redact.add_argument("path", metavar="LOG", help="a log file or a folder of logs")
    redact.add_argument(
        "-o",
        "--output",
        metavar="OUT",
        required=True,
        help="the redacted log (a folder for a folder of logs)",
    )
    redact.add_argument("--json", action="store_true", help="print the report as JSON")
    _class_options(redact)
    redact.set_defaults(run=_redact)

    bundle = commands.add_parser(
        "bundle",
        help="zip the redacted log, its report and a README, for a bug report",
        description="Redact LOG as redact does, build the report of the redacted log, and "
        "write a zip of both with a README of what was removed: the attachment PyTorch's "
        "bug template asks for.  No zip is written if the check of the redacted log finds "
        "anything (exit 1).",
    )
    bundle.add_argument("path", metavar="LOG", help="a log file or a folder of logs")
    bundle.add_argument(
        "-o",
        "--output",
        metavar="ZIP",
        default="torchtrace_report.zip",
        help="the zip to write (default: ./torchtrace_report.zip)",
    )
    bundle.add_argument("-q", "--quiet", action="store_true", help="no progress lines")
    _class_options(bundle)
    bundle.set_defaults(run=_bundle)


def _class_options(parser: argparse.ArgumentParser) -> None:
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


def _options(args: argparse.Namespace) -> Options:
    keep = {k.strip() for k in args.keep.split(",") if k.strip()}
    unknown = sorted(keep - set(DEFAULT_CLASSES))
    if unknown:
        raise ShareError(f"--keep: {', '.join(unknown)}: give some of {', '.join(DEFAULT_CLASSES)}")
    return Options(
        **{c: c not in keep for c in DEFAULT_CLASSES},
        constants=args.constants,
        extra_names=tuple(args.name),
    )


def _logs(path: str, allow_none: bool = False) -> list[Path]:
    """The logs ``path`` names; a :class:`ShareError` naming each entry that may not be
    read (a link leading out of the folder, a FIFO): the whole command is refused, since
    what it would share without them is not the job's trace."""
    source = Path(path)
    if not source.exists():
        raise ShareError(f"{path}: no such file or directory")
    try:
        logs = log_files(source)
    except RefusedEntries as e:
        named = "; ".join(console_text(f"{entry}: {why}") for entry, why in e.refused[:5])
        more = f" (and {len(e.refused) - 5} more)" if len(e.refused) > 5 else ""
        raise ShareError(
            f"{path}: refused, nothing read: {named}{more} (copy a file into the folder to "
            "share it)"
        ) from None
    if not logs and not allow_none:
        raise ShareError(f"{path}: no log files (*.log, *.log.gz) in the folder")
    return logs


def _say(line: str) -> None:
    print(console_text(line))


def _note(line: str, quiet: bool = False) -> None:
    if not quiet:
        print(console_text(f"{PROG}: {line}"), file=sys.stderr, flush=True)


def _counts(counts: dict[str, int]) -> str:
    return ", ".join(f"{c} {counts[c]}" for c in CLASSES if c in DEFAULT_CLASSES or counts[c])


# -- check ------------------------------------------------------------------------------


def _check(args: argparse.Namespace) -> int:
    options = _options(args)
    # a folder of other files (a debug folder): what it holds is listed too
    logs = _logs(args.path, allow_none=True)
    try:
        beside = beside_files(Path(args.path))
    except RefusedEntries as e:
        raise ShareError(f"{args.path}: refused, nothing read: {e}") from None
    if not logs and not beside:
        raise ShareError(f"{args.path}: no log files (*.log, *.log.gz) in the folder")
    reports = _read(lambda: check_logs([*logs, *beside], options))
    total = sum(r.total for r in reports)
    if args.json:
        data = {"logs": [r.to_json() for r in reports], "total": total}
        print(console_json(json.dumps(data, indent=2, ensure_ascii=False)))
        return 1 if total else 0
    for r in reports:
        for c in r.changes:
            _say(f"{r.path}:{c.line}: {c.kind}: {c.what}")
        if r.total > len(r.changes):
            _say(f"{r.path}: and {r.total - len(r.changes)} more")
    counts, _ = totals(reports)
    if total:
        _say(f"{total} finding(s) in {len(reports)} log(s): {_counts(counts)}")
        return 1
    _say(f"nothing private found in {len(reports)} log(s)")
    return 0


# -- redact -----------------------------------------------------------------------------


def _redact(args: argparse.Namespace) -> int:
    options = _options(args)
    source = Path(args.path)
    logs = _logs(args.path)
    dests = _destinations(source, logs, Path(args.output))
    reports = _read(lambda: redact_logs(logs, dests, options))
    remaining = [(d, c) for r, d in zip(reports, dests, strict=True) for c in r.remaining]
    if args.json:
        data = {
            "logs": [
                {
                    **r.to_json(),
                    "output": str(d),
                    "findings": None,
                    "remaining": [{"line": c.line, "class": c.kind} for c in r.remaining],
                }
                for r, d in zip(reports, dests, strict=True)
            ],
            "clean": not remaining,
        }
        print(console_json(json.dumps(data, indent=2, ensure_ascii=False)))
        return 1 if remaining else 0
    _report(reports, dests)
    return _remaining(remaining)


def _masked_name(name: str) -> str:
    """A log's file name for its redacted copy: a secret it holds (a token a job put in
    its log's name) masked, in characters a file name keeps (``hf__masked.log``)."""
    return masked_name(name)


def _destinations(source: Path, logs: list[Path], out: Path) -> list[Path]:
    """Where each log goes: OUT itself for one log (inside it if it is a folder), OUT/name
    for the logs of a folder; never over a log read."""
    if source.is_dir() or out.is_dir():
        dests = []
        taken: set[str] = set()
        for log in logs:
            # two names masked alike (``hf_….log``) stay two files: ``…_2.log``
            name, n = _masked_name(log.name), 2
            stem, dot, ext = name.partition(".")
            while name in taken:
                name, n = f"{stem}_{n}{dot}{ext}", n + 1
            taken.add(name)
            dests.append(out / name)
    else:
        dests = [out]
    for log, dest in zip(logs, dests, strict=True):
        if dest.exists() and os.path.samefile(log, dest):
            raise ShareError(f"{dest}: the output would replace the log read")
    return dests


def _report(reports: Sequence[LogReport], dests: Sequence[Path]) -> None:
    for r, d in zip(reports, dests, strict=True):
        _say(f"{r.path} -> {d}: {r.records} records, {r.md5_recomputed} payload md5(s) recomputed")
    counts, folders = totals(reports)
    for c in CLASSES:
        if c not in DEFAULT_CLASSES and not counts[c]:
            continue
        detail = ""
        if c == "paths" and folders:
            detail = " (" + ", ".join(f"{n} {k}" for n, k in folders.items()) + ")"
        _say(f"  {c + ':':<10} {counts.get(c, 0)} removed{detail}")


def _remaining(remaining: list[tuple[Path, Any]]) -> int:
    if not remaining:
        _say("checked: nothing private left")
        return 0
    for dest, c in remaining[:50]:
        _say(f"{dest}:{c.line}: {c.kind}: could not be removed")
    _say(f"{len(remaining)} finding(s) left: do not share this log as it is")
    return 1


def _read(run: Any) -> list[LogReport]:
    try:
        reports: list[LogReport] = run()
    except TraceReadError as e:
        raise ShareError(f"cannot read: {e}") from None
    return reports


# -- bundle -----------------------------------------------------------------------------


def _bundle(args: argparse.Namespace) -> int:
    options = _options(args)
    source = Path(args.path)
    logs = _logs(args.path)
    out = Path(args.output)
    try:
        from .sphinxext.standalone import StandaloneBuildError, build_site
    except ImportError:
        raise ShareError("bundle needs Sphinx to build the report: pip install sphinx") from None
    with tempfile.TemporaryDirectory(prefix="torchtrace-bundle-") as tmp:
        folder = Path(tmp) / "logs"
        # named here, never as the input was: the zip, its README and its report hold
        # no input's file name (a user's name, a ``..\`` climb, a line break)
        dests = [folder / name for name in bundle_names(logs)]
        _note(f"redacting {len(logs)} log(s)", args.quiet)
        reports = _read(lambda: redact_logs(logs, dests, options))
        remaining = [(d, c) for r, d in zip(reports, dests, strict=True) for c in r.remaining]
        if remaining:
            _remaining([(Path("logs") / d.name, c) for d, c in remaining])
            _say(f"{out}: not written")
            return 1
        _note("building the report", args.quiet)
        try:
            target = [folder] if source.is_dir() else dests
            build_site(
                target, Path(tmp) / "report", quiet=True, rewrites=[(os.fspath(folder), "logs")]
            )
        except StandaloneBuildError as e:
            raise ShareError(str(e)) from None
        try:  # both folders are this command's own: a refusal here is no user's input
            files = tree_files(folder, "logs") + tree_files(Path(tmp) / "report", "report")
        except RefusedEntries as e:
            raise ShareError(f"the bundle's own files were refused: {e}") from None
        try:
            write_zip(out, files, readme(reports, [d.name for d in dests], options))
        except ValueError as e:
            raise ShareError(f"{out}: not written: {e}") from None
    counts, _ = totals(reports)
    _say(
        f"{out}: {len(logs)} redacted log(s), their report and README.txt ({_counts(counts)} "
        "removed)"
    )
    return 0
