"""``show``: one record of a log, the evidence ``diff`` and ``summary`` name by LOG:LINE."""

from __future__ import annotations

import argparse

from ...trace.reader import record_lines
from ...trace.secrets import mask_secrets
from ..common import InputError, say

HELP = "print one record of a log (the evidence diff names)"
DESCRIPTION = (
    "Print the record at LOG:LINE (its envelope line and payload), with "
    "every control character escaped."
)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("where", metavar="LOG:LINE", help="a log file and a line number")
    parser.add_argument(
        "--max-lines", type=int, default=200, help="payload lines printed at most (200)"
    )


def run(args: argparse.Namespace) -> int:
    path, sep, number = args.where.rpartition(":")
    if not sep or not number.isdigit() or int(number) < 1:
        raise InputError(f"{args.where}: give LOG:LINE, as trace.log:120")
    try:
        lines = record_lines(path, int(number), max(args.max_lines, 0))
    except OSError as e:
        raise InputError(f"{path}: {e.strerror or e}") from None
    except ValueError as e:
        raise InputError(f"{args.where}: {e}") from None
    say(f"{path}:{number}:")
    for line in lines:
        # indented: a line of a log never starts a line here (a payload's tab: two spaces)
        line = mask_secrets(line)  # a terminal's scrollback, a CI log: no secret
        say(f"    {line[1:]}" if line.startswith("\t") else f"  {line}")
    return 0
