"""The command line is a table of commands, one module each, that import none of each other.

A command is a module of ``sphinx_torchtrace/cli/commands`` and its line in
:data:`sphinx_torchtrace.cli.COMMANDS`: a module without its line would never be offered,
a line without its module would break every ``--help``.  ``nox -s lint`` checks the
commands' independence with import-linter; this test needs no tool.
"""

from __future__ import annotations

import argparse
import ast
from pathlib import Path

import pytest

from sphinx_torchtrace import cli

COMMANDS_DIR = Path(cli.__file__).parent / "commands"
PACKAGE = "sphinx_torchtrace.cli.commands"


def modules() -> list[str]:
    return sorted(p.stem for p in COMMANDS_DIR.glob("*.py") if p.stem != "__init__")


def test_every_command_module_has_its_line_and_every_line_its_module() -> None:
    assert sorted(cli.COMMANDS) == modules()
    assert len(set(cli.COMMANDS)) == len(cli.COMMANDS)


@pytest.mark.parametrize("name", cli.COMMANDS)
def test_a_command_is_its_help_options_and_run(name: str) -> None:
    """What the table takes of each module is what ``--help`` shows and what runs."""
    module = cli.command(name)
    parser = cli._parser()
    listing = " ".join(parser.format_help().split())
    assert f"{name} {' '.join(module.HELP.split())}" in listing
    sub = next(
        a.choices[name] for a in parser._actions if isinstance(a, argparse._SubParsersAction)
    )
    assert sub.description == module.DESCRIPTION
    assert sub.get_default("run") is module.run


def imported(path: Path) -> set[str]:
    """The modules of ``commands`` a command module imports, wherever the import stands."""
    found = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom):
            if node.level == 1:  # from .x import y, from . import x
                names = [node.module] if node.module else [a.name for a in node.names]
                found.update(n.partition(".")[0] for n in names if n)
            elif node.level == 0 and (node.module or "").startswith(PACKAGE + "."):
                found.add(node.module.removeprefix(PACKAGE + ".").partition(".")[0])
        elif isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.startswith(PACKAGE + "."):
                    found.add(alias.name.removeprefix(PACKAGE + ".").partition(".")[0])
    return found


def test_no_command_imports_another() -> None:
    """What two commands share lives in cli's own modules (common, loading, sharing)."""
    crossing = {name: sorted(imported(COMMANDS_DIR / f"{name}.py")) for name in modules()}
    assert {n: i for n, i in crossing.items() if i} == {}
