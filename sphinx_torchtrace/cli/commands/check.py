"""``check``: what a log would reveal if posted (paths, names, secrets, source); exit 1 if any."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from ...site.characters import console_json
from ...trace.sharing.share import RefusedEntries, beside_files, check_logs, totals
from ..common import InputError, say
from ..sharing import class_options, counts_text, logs, options, read

HELP = "list what a log would reveal (paths, names, secrets, source); exit 1 if any"
DESCRIPTION = (
    "List each machine path, user or host name, secret and line of source "
    "code a log (or a folder of logs) holds, as LOG:LINE: class: what (a secret by its "
    "kind, never its value).  Exit 1 when anything is found, 0 when the log is clean, "
    "2 when it cannot be read."
)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("path", metavar="LOG", help="a log file or a folder of logs")
    parser.add_argument("--json", action="store_true", help="print the findings as JSON")
    class_options(parser)


def run(args: argparse.Namespace) -> int:
    chosen = options(args)
    # a folder of other files (a debug folder): what it holds is listed too
    found = logs(args.path, allow_none=True)
    try:
        beside = beside_files(Path(args.path))
    except RefusedEntries as e:
        raise InputError(f"{args.path}: refused, nothing read: {e}") from None
    if not found and not beside:
        raise InputError(f"{args.path}: no log files (*.log, *.log.gz) in the folder")
    reports = read(lambda: check_logs([*found, *beside], chosen))
    total = sum(r.total for r in reports)
    if args.json:
        data = {"logs": [r.to_json() for r in reports], "total": total}
        print(console_json(json.dumps(data, indent=2, ensure_ascii=False)))
        return 1 if total else 0
    for r in reports:
        for c in r.changes:
            say(f"{r.path}:{c.line}: {c.kind}: {c.what}")
        if r.total > len(r.changes):
            say(f"{r.path}: and {r.total - len(r.changes)} more")
    counts, _ = totals(reports)
    if total:
        say(f"{total} finding(s) in {len(reports)} log(s): {counts_text(counts)}")
        return 1
    say(f"nothing private found in {len(reports)} log(s)")
    return 0
