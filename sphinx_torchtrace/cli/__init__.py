"""The ``sphinx-torchtrace`` command: compare two runs in CI, print triage numbers, build a site.

``diff`` and ``summary`` need no docs project and import nothing of Sphinx; ``build`` makes a
Sphinx project around the logs (in the user's cache folder) and runs Sphinx in-process;
``serve`` previews its output on 127.0.0.1; ``run`` runs a program under ``TORCH_TRACE`` and
builds its report (its exit status is the program's); ``check``, ``redact`` and ``bundle``
make a log safe to post (paths, names, secrets and source removed).  Exit codes: 0 fine,
1 a regression of a listed kind (``diff``), something private found (``check``) or left
(``redact``, ``bundle``), 2 unreadable input or a failed build, 130 when
Ctrl+C stopped it (quietly: the user asked).  Every error is one line on stderr, never a
traceback: this runs in CI logs people skim.

Each command is one module of :mod:`.commands` (its help, its options and what it runs);
:data:`COMMANDS` lists them, one line each, so a new command is a module and a line here.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Sequence
from importlib import import_module
from typing import cast

from ..version import __version__
from .common import PROG, Command, InputError, error

#: The commands, in the order ``--help`` lists them: each the name of its module in
#: :mod:`.commands`.
COMMANDS = (
    "diff",
    "summary",
    "build",
    "show",
    "serve",
    "run",
    "check",
    "redact",
    "bundle",
)


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; returns the exit status (the console script exits with it)."""
    parser = _parser()
    args = parser.parse_args(argv)
    try:
        status: int = args.run(args)
        return status
    except InputError as e:
        error(str(e))
        return 2
    except KeyboardInterrupt:  # the user stopped it: no error to report, the shell's status
        return 130
    except BrokenPipeError:  # the reader stopped reading (``| head``): as other tools, quietly
        _quiet_stdout()
        return 141
    except Exception as e:  # noqa: BLE001 - a CI log gets one line, not a traceback
        error(f"unexpected {type(e).__name__}: {e}")
        return 2


def _quiet_stdout() -> None:
    """Point stdout at devnull so that flushing it at exit raises no second BrokenPipeError."""
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, sys.stdout.fileno())


def command(name: str) -> Command:
    """The module of the command ``name`` (one of :data:`COMMANDS`)."""
    return cast(Command, import_module(f"{__name__}.commands.{name}"))


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog=PROG, description="PyTorch TORCH_TRACE logs: compare runs, triage, build a report."
    )
    parser.add_argument("--version", action="version", version=f"%(prog)s {__version__}")
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for name in COMMANDS:
        module = command(name)
        sub = commands.add_parser(name, help=module.HELP, description=module.DESCRIPTION)
        module.add_arguments(sub)
        sub.set_defaults(run=module.run)
    return parser
