"""What every command shares: its shape, its refusal, how it prints and the ``--rewrite`` option.

Every line goes through :func:`~..site.characters.console_text`: input text in it (names,
reasons, paths) is escaped, so a trace can neither draw on the terminal nor start a line
of a CI log.
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path
from typing import Protocol

from ..site.characters import console_text
from ..trace.secrets import mask_secrets

PROG = "sphinx-torchtrace"


class InputError(Exception):
    """Input the command cannot use: reported as one line, exit status 2."""


class Command(Protocol):
    """A module of :mod:`.commands`: its one-line help, its description, its options and
    what it runs (returning the exit status)."""

    HELP: str
    DESCRIPTION: str

    def add_arguments(self, parser: argparse.ArgumentParser) -> None: ...

    def run(self, args: argparse.Namespace) -> int: ...


def say(line: str) -> None:
    """Print one line of output, input text in it escaped."""
    print(console_text(line))


def error(message: str) -> None:
    """The one line on stderr that a refusal or failure prints: its message's first line."""
    first = message.strip().splitlines()[0] if message.strip() else "error"
    print(console_text(f"{PROG}: error: {first}"), file=sys.stderr)


def note(line: str) -> None:
    """A progress line on stderr (stdout is the output, or a program's), masked as
    ``redact`` masks a log's secrets: a terminal's scrollback, a CI log."""
    print(console_text(mask_secrets(f"{PROG}: {line}")), file=sys.stderr, flush=True)


def interactive() -> bool:
    """Someone at a terminal, not a CI job or a pipe: then the report opens, as tlparse's
    does (``--no-browser`` never, ``run --open`` always)."""
    return sys.stdout.isatty() and not os.environ.get("CI")


def open_page(page: Path) -> None:
    """Show a built page in the browser."""
    import webbrowser

    webbrowser.open(page.resolve().as_uri())


def rewrite_option(parser: argparse.ArgumentParser) -> None:
    """``--rewrite PATH=NAME``, of the commands that build a report."""
    parser.add_argument(
        "--rewrite",
        metavar="PATH=NAME",
        action="append",
        default=[],
        type=_path_rule,
        help="show PATH (a folder of this machine, taken literally) as NAME on the pages; "
        "repeatable, before the rules for home folders, temporary and site-packages paths",
    )


def _path_rule(text: str) -> tuple[str, str]:
    path, sep, name = text.partition("=")
    if not sep or not path.strip("/"):
        raise argparse.ArgumentTypeError(f"{text!r}: give PATH=NAME, as /srv/ci/checkout=<project>")
    return path, name
