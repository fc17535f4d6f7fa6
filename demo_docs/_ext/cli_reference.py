"""``.. cli-reference:: [COMMAND]``: the reference of ``sphinx-torchtrace`` or of one of its
commands, made from the command line's own argparse parser.

Usage, description, arguments and options come from :func:`sphinx_torchtrace.cli._parser`,
so an option cannot exist without its entry on the page.  Help strings are text (as
``--help`` prints them): they become text nodes, never parsed as markup, and keep their
straight quotes and double dashes (``--fail-on ''``).

A local extension of the demo site, not of the package: the package's layers keep the
command line above the Sphinx layer, which must not import it.
"""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from docutils import nodes
from sphinx.application import Sphinx
from sphinx.util.docutils import SphinxDirective

from sphinx_torchtrace import cli

#: Usage lines are wrapped at this width, whatever the terminal that builds the docs.
USAGE_WIDTH = 80


def subcommands(parser: argparse.ArgumentParser) -> dict[str, tuple[argparse.ArgumentParser, str]]:
    """``{command: (its parser, its one-line help)}``, in the parser's order."""
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            helps = {a.dest: a.help or "" for a in action._get_subactions()}
            return {name: (sub, helps.get(name, "")) for name, sub in action.choices.items()}
    return {}


class CliReference(SphinxDirective):
    """The program's usage, description, options and commands; or one command's."""

    optional_arguments = 1

    def run(self) -> list[nodes.Node]:
        # a new option in any command's module re-reads the page
        for module in sorted(Path(cli.__file__).parent.rglob("*.py")):
            self.env.note_dependency(str(module))
        parser = cli._parser()
        commands = subcommands(parser)
        if self.arguments:
            name = self.arguments[0]
            if name not in commands:
                raise self.error(f"no command {name!r}; the commands: {', '.join(commands)}")
            parser = commands[name][0]
        box = nodes.container(classes=["cli-reference"])
        box["support_smartquotes"] = False  # --port stays --port, '' stays ''
        box += _literal(_usage(parser))
        if parser.description:
            box += nodes.paragraph("", parser.description)
        positionals = [a for a in parser._actions if not a.option_strings and _shown(a)]
        optionals = [a for a in parser._actions if a.option_strings and _shown(a)]
        if positionals:
            box += nodes.rubric("", "Arguments")
            box += nodes.option_list(
                "", *(_item([_metavar(a)], "", _help(parser, a)) for a in positionals)
            )
        if optionals:
            box += nodes.rubric("", "Options")
            box += nodes.option_list(
                "", *(_item(a.option_strings, _argument(a), _help(parser, a)) for a in optionals)
            )
        if not self.arguments and commands:
            box += nodes.rubric("", "Commands")
            box += nodes.option_list("", *(_item([n], "", h) for n, (_, h) in commands.items()))
        self.set_source_info(box)
        return [box]


def _shown(action: argparse.Action) -> bool:
    """What ``--help`` lists: not the commands (they get their own reference), nor a
    suppressed option."""
    return action.help != argparse.SUPPRESS and not isinstance(action, argparse._SubParsersAction)


def _usage(parser: argparse.ArgumentParser) -> str:
    formatter = argparse.HelpFormatter(parser.prog, width=USAGE_WIDTH)
    formatter.add_usage(parser.usage, parser._actions, parser._mutually_exclusive_groups)
    return formatter.format_help().strip()


def _help(parser: argparse.ArgumentParser, action: argparse.Action) -> str:
    """The help as ``--help`` prints it (``%(default)s`` and the like filled in)."""
    formatter = argparse.HelpFormatter(parser.prog)
    return formatter._expand_help(action) if action.help else ""


def _metavar(action: argparse.Action) -> str:
    """A positional argument's name: ``PATH``, ``-- PROGRAM``."""
    return action.metavar if isinstance(action.metavar, str) else action.dest


def _argument(action: argparse.Action) -> str:
    """What an option takes: ``OUT``, ``{text,json}``; nothing for a flag."""
    if action.nargs == 0:
        return ""
    if isinstance(action.metavar, str):
        return action.metavar
    if action.choices:
        return "{" + ",".join(map(str, action.choices)) + "}"
    return action.dest.upper()


def _item(names: Sequence[str], argument: str, help_text: str) -> nodes.option_list_item:
    group = nodes.option_group()
    for name in names:
        option = nodes.option("", nodes.option_string(name, name))
        if argument:
            option += nodes.option_argument(argument, argument, delimiter=" ")
        group += option
    description = nodes.description("", nodes.paragraph("", help_text))
    return nodes.option_list_item("", group, description)


def _literal(text: str) -> nodes.literal_block:
    block = nodes.literal_block(text, text)
    block["language"] = "text"
    return block


def setup(app: Sphinx) -> dict[str, Any]:
    app.add_directive("cli-reference", CliReference)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
