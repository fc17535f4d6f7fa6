"""``serve``: preview a built report on 127.0.0.1 (only this machine can reach it)."""

from __future__ import annotations

import argparse
from pathlib import Path

from ..common import InputError

HELP = "preview a built report on 127.0.0.1"
DESCRIPTION = (
    "Serve a folder (what build wrote) on http://127.0.0.1:PORT/ until "
    "interrupted; only this machine can reach it."
)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("folder", metavar="OUT", help="the folder build wrote")
    parser.add_argument(
        "-p", "--port", type=int, default=8000, help="the port (default 8000; 0: any free one)"
    )


def run(args: argparse.Namespace) -> int:
    folder = Path(args.folder)
    if not (folder / "index.html").is_file():
        raise InputError(f"{args.folder}: no index.html (build the report first)")
    from ...sphinxext.standalone import serve

    def ready(line: str) -> None:
        print(line, flush=True)

    try:
        serve(folder, args.port, ready=ready)
    except OSError as e:
        raise InputError(f"cannot serve on 127.0.0.1:{args.port}: {e.strerror or e}") from None
    return 0
