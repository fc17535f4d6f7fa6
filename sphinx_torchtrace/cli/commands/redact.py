"""``redact``: a copy of a log without paths, names, secrets and source, then checked."""

from __future__ import annotations

import argparse
import json
import os
from collections.abc import Sequence
from pathlib import Path

from ...site.characters import console_json
from ...trace.secrets import masked_name
from ...trace.sharing.redact import LogReport
from ...trace.sharing.redact_text import CLASSES, DEFAULT_CLASSES
from ...trace.sharing.share import redact_logs, totals
from ..common import InputError, say
from ..sharing import class_options, logs, options, read, remaining

HELP = "write a copy of a log without paths, names, secrets and source"
DESCRIPTION = (
    "Write LOG (or each log of a folder, in parallel) redacted to OUT: "
    "machine paths as stable names (~/project/...), user and host names as 'user', "
    "secrets masked, the user's source lines as [source removed]; payload md5s "
    "recomputed, so tlparse and this tool read it as before.  Prints what changed by "
    "class, then checks OUT: exit 1 if something private remains, 2 on unreadable input."
)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("path", metavar="LOG", help="a log file or a folder of logs")
    parser.add_argument(
        "-o",
        "--output",
        metavar="OUT",
        required=True,
        help="the redacted log (a folder for a folder of logs)",
    )
    parser.add_argument("--json", action="store_true", help="print the report as JSON")
    class_options(parser)


def run(args: argparse.Namespace) -> int:
    chosen = options(args)
    source = Path(args.path)
    found = logs(args.path)
    dests = _destinations(source, found, Path(args.output))
    reports = read(lambda: redact_logs(found, dests, chosen))
    left = [(d, c) for r, d in zip(reports, dests, strict=True) for c in r.remaining]
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
            "clean": not left,
        }
        print(console_json(json.dumps(data, indent=2, ensure_ascii=False)))
        return 1 if left else 0
    _report(reports, dests)
    return remaining(left)


def _destinations(source: Path, logs: list[Path], out: Path) -> list[Path]:
    """Where each log goes: OUT itself for one log (inside it if it is a folder), OUT/name
    for the logs of a folder; never over a log read."""
    if source.is_dir() or out.is_dir():
        dests = []
        taken: set[str] = set()
        for log in logs:
            # a secret in a log's name (a token a job put there) masked, in characters a
            # file name keeps (``hf__masked.log``); two names masked alike stay two files
            name, n = masked_name(log.name), 2
            stem, dot, ext = name.partition(".")
            while name in taken:
                name, n = f"{stem}_{n}{dot}{ext}", n + 1
            taken.add(name)
            dests.append(out / name)
    else:
        dests = [out]
    for log, dest in zip(logs, dests, strict=True):
        if dest.exists() and os.path.samefile(log, dest):
            raise InputError(f"{dest}: the output would replace the log read")
    return dests


def _report(reports: Sequence[LogReport], dests: Sequence[Path]) -> None:
    for r, d in zip(reports, dests, strict=True):
        say(f"{r.path} -> {d}: {r.records} records, {r.md5_recomputed} payload md5(s) recomputed")
    counts, folders = totals(reports)
    for c in CLASSES:
        if c not in DEFAULT_CLASSES and not counts[c]:
            continue
        detail = ""
        if c == "paths" and folders:
            detail = " (" + ", ".join(f"{n} {k}" for n, k in folders.items()) + ")"
        say(f"  {c + ':':<10} {counts.get(c, 0)} removed{detail}")
