"""``build``: a standalone report site of one or more traces, opened on a terminal."""

from __future__ import annotations

import argparse
import os
from pathlib import Path

from ..common import InputError, interactive, open_page, rewrite_option, say

HELP = "build a standalone report site"
DESCRIPTION = (
    "Build an HTML report of one or more traces with an embedded Sphinx "
    "configuration (furo when installed), print the page to open (a single trace's "
    "overview, else the index of the traces) and, on a terminal, open it in a browser."
)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("paths", metavar="PATH", nargs="+", help="log files or directories")
    parser.add_argument(
        "-o",
        "--output",
        metavar="OUT",
        default="torchtrace_out",
        help="output folder (default: ./torchtrace_out)",
    )
    parser.add_argument(
        "--latest", action="store_true", help="in a directory, read only its newest log"
    )
    parser.add_argument(
        "-q",
        "--quiet",
        action="store_true",
        help="no progress lines on stderr (warnings and errors are still printed)",
    )
    parser.add_argument(
        "--no-browser",
        action="store_true",
        help="do not open the report (by default it opens when run from a terminal, not CI)",
    )
    rewrite_option(parser)


def run(args: argparse.Namespace) -> int:
    for path in args.paths:
        if not os.path.exists(path):
            raise InputError(f"{path}: no such file or directory")
    try:
        from ...sphinxext.standalone import StandaloneBuildError, build_site
    except ImportError:
        raise InputError("build needs Sphinx: pip install sphinx") from None
    try:
        index = build_site(
            [Path(p) for p in args.paths],
            Path(args.output),
            latest=args.latest,
            quiet=args.quiet,
            rewrites=args.rewrite,
        )
    except StandaloneBuildError as e:
        raise InputError(str(e)) from None
    say(str(index))
    if not args.no_browser and interactive():
        open_page(index)
    return 0
