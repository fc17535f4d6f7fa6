"""``bundle``: the zip a bug report asks for: the redacted log, its report and a README."""

from __future__ import annotations

import argparse
import os
import tempfile
from pathlib import Path

from ...trace.sharing.share import (
    RefusedEntries,
    bundle_names,
    readme,
    redact_logs,
    totals,
    tree_files,
    write_zip,
)
from ..common import InputError, note, say
from ..sharing import class_options, counts_text, logs, options, read, remaining

HELP = "zip the redacted log, its report and a README, for a bug report"
DESCRIPTION = (
    "Redact LOG as redact does, build the report of the redacted log, and "
    "write a zip of both with a README of what was removed: the attachment PyTorch's "
    "bug template asks for.  No zip is written if the check of the redacted log finds "
    "anything (exit 1)."
)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("path", metavar="LOG", help="a log file or a folder of logs")
    parser.add_argument(
        "-o",
        "--output",
        metavar="ZIP",
        default="torchtrace_report.zip",
        help="the zip to write (default: ./torchtrace_report.zip)",
    )
    parser.add_argument("-q", "--quiet", action="store_true", help="no progress lines")
    class_options(parser)


def run(args: argparse.Namespace) -> int:
    chosen = options(args)
    source = Path(args.path)
    found = logs(args.path)
    out = Path(args.output)
    try:
        from ...sphinxext.standalone import StandaloneBuildError, build_site
    except ImportError:
        raise InputError("bundle needs Sphinx to build the report: pip install sphinx") from None
    with tempfile.TemporaryDirectory(prefix="torchtrace-bundle-") as tmp:
        folder = Path(tmp) / "logs"
        # named here, never as the input was: the zip, its README and its report hold
        # no input's file name (a user's name, a ``..\`` climb, a line break)
        dests = [folder / name for name in bundle_names(found)]
        if not args.quiet:
            note(f"redacting {len(found)} log(s)")
        reports = read(lambda: redact_logs(found, dests, chosen))
        left = [(d, c) for r, d in zip(reports, dests, strict=True) for c in r.remaining]
        if left:
            remaining([(Path("logs") / d.name, c) for d, c in left])
            say(f"{out}: not written")
            return 1
        if not args.quiet:
            note("building the report")
        try:
            target = [folder] if source.is_dir() else dests
            build_site(
                target, Path(tmp) / "report", quiet=True, rewrites=[(os.fspath(folder), "logs")]
            )
        except StandaloneBuildError as e:
            raise InputError(str(e)) from None
        try:  # both folders are this command's own: a refusal here is no user's input
            files = tree_files(folder, "logs") + tree_files(Path(tmp) / "report", "report")
        except RefusedEntries as e:
            raise InputError(f"the bundle's own files were refused: {e}") from None
        try:
            write_zip(out, files, readme(reports, [d.name for d in dests], chosen))
        except ValueError as e:
            raise InputError(f"{out}: not written: {e}") from None
    counts, _ = totals(reports)
    say(
        f"{out}: {len(found)} redacted log(s), their report and README.txt "
        f"({counts_text(counts)} removed)"
    )
    return 0
