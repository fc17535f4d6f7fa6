"""The docs document everything a user can write or run: every directive and its options,
role, configuration value and warning type of the extension, and every command and option
of ``sphinx-torchtrace``.

The names come from where the code keeps them: what a Sphinx app holds once the
extension's ``setup`` ran (directives, the ``torchtrace`` domain's roles, configuration
values) and the command line's argparse parser.  They are looked for in the demo site's
sources, so nothing can be added without its paragraph.  What a table or a reference is
generated from (warning types, the command line) is checked by its directive's presence,
and the command line's reference by one small build.
"""

from __future__ import annotations

import argparse
import html
import re
from dataclasses import dataclass
from io import StringIO
from pathlib import Path
from typing import Any

import pytest
from docutils.parsers.rst import directives as docutils_directives
from sphinx.testing.util import SphinxTestApp

from sphinx_torchtrace.cli import _parser

DOCS = Path(__file__).resolve().parents[1] / "demo_docs"
GUIDE = DOCS / "guide"
#: The folder of the demo's generated stubs (``torchtrace_generated_dir``) and its build.
NOT_SOURCES = {"_build", "torchtrace"}
CLI_DIRECTIVE = "cli-reference"  # demo_docs/_ext/cli_reference.py


def sources() -> dict[str, str]:
    """Every page of the demo site, ``{path under demo_docs: text}``."""
    return {
        path.relative_to(DOCS).as_posix(): path.read_text(encoding="utf-8")
        for path in sorted(DOCS.rglob("*"))
        if path.suffix in (".rst", ".md") and not NOT_SOURCES & set(path.relative_to(DOCS).parts)
    }


def shows(text: str, directive: str) -> bool:
    """Whether a page writes the directive, in rST (``.. name::``) or MyST (```` ```{name} ````)."""
    return bool(re.search(rf"\.\. {re.escape(directive)}::|\{{{re.escape(directive)}\}}", text))


@dataclass(frozen=True)
class Registered:
    directives: dict[str, Any]  # name -> directive class
    roles: list[str]  # of the torchtrace domain
    config_values: list[str]


@pytest.fixture(scope="module")
def registered(tmp_path_factory: pytest.TempPathFactory) -> Registered:
    """What the extension registers with a real Sphinx app (nothing is built)."""
    srcdir = tmp_path_factory.mktemp("registry")
    (srcdir / "conf.py").write_text('extensions = ["sphinx_torchtrace"]\n', encoding="utf-8")
    (srcdir / "index.rst").write_text("Empty\n=====\n", encoding="utf-8")
    app = SphinxTestApp("html", srcdir=srcdir, status=StringIO(), warning=StringIO())
    try:
        found = {
            name: cls
            for name, cls in vars(docutils_directives)["_directives"].items()
            if getattr(cls, "__module__", "").startswith("sphinx_torchtrace.")
        }
        domain = app.registry.domains["torchtrace"]
        # the names alone: iterating the Config reads each option's fields, which a theme
        # imported earlier (furo on Sphinx 7.3) may have turned into plain tuples
        values = [name for name in app.config.values if name.startswith("torchtrace_")]
    finally:
        app.cleanup()
    return Registered(found, sorted(domain.roles), values)


def test_the_registries_are_found(registered: Registered) -> None:
    """The checks below look at something: the extension's own names are there."""
    assert {"torchtrace", "torchtrace-diff", "torchtrace-provenance"} <= set(registered.directives)
    assert {"frame", "gb"} <= set(registered.roles)
    assert "torchtrace_generated_dir" in registered.config_values


def test_every_directive_is_documented(registered: Registered) -> None:
    docs = "\n".join(sources().values())
    assert [d for d in registered.directives if not shows(docs, d)] == []


def test_every_option_is_described_where_its_directive_is(registered: Registered) -> None:
    """``:option:`` in prose (a literal, not only in an example) on a page showing the
    directive: the torchtrace directive's in directive.rst, the diff's in ci.rst ..."""
    pages = sources()
    missing = []
    for name, cls in registered.directives.items():
        where = [text for text in pages.values() if shows(text, name)]
        for option in dict(cls.option_spec or {}):  # AnyOption lists only the real ones
            if not any(f"``:{option}:``" in text for text in where):
                missing.append(f"{name} :{option}:")
    assert missing == []


def test_every_role_is_in_the_roles_page(registered: Registered) -> None:
    page = (GUIDE / "roles.rst").read_text(encoding="utf-8")
    assert [r for r in registered.roles if f"``:torchtrace:{r}:``" not in page] == []


def test_every_configuration_value_is_described(registered: Registered) -> None:
    page = (GUIDE / "config.rst").read_text(encoding="utf-8")
    assert [v for v in registered.config_values if f"``{v}``" not in page] == []


def test_every_warning_type_is_in_the_generated_table() -> None:
    """The table lists the registry every warning's subtype must be in (``warn`` refuses
    another): the warnings page holds the table."""
    assert shows((GUIDE / "warnings.rst").read_text(encoding="utf-8"), "torchtrace-warnings")


# -- the command line --------------------------------------------------------------------


def commands() -> dict[str, argparse.ArgumentParser]:
    """``sphinx-torchtrace``'s subcommands, from its parser."""
    parser = _parser()
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            return dict(action.choices)
    return {}


def test_every_command_has_its_reference() -> None:
    """The page holds the program's reference and each command's, generated from the
    parser; the guide lists the page."""
    page = (GUIDE / "cli.rst").read_text(encoding="utf-8")
    written = re.findall(rf"^\.\. {CLI_DIRECTIVE}::[ \t]*(\S*)[ \t]*$", page, re.MULTILINE)
    assert sorted(written) == sorted(["", *commands()])
    assert re.search(r"^   guide/cli$", (DOCS / "index.rst").read_text("utf-8"), re.MULTILINE)


def _text(page: str) -> str:
    """An HTML page's text as a reader sees it, whitespace collapsed."""
    body = page.split('role="main"', 1)[-1]
    return " ".join(html.unescape(re.sub(r"<[^>]+>", " ", body)).split())


def test_the_reference_shows_every_option_and_its_help_as_written(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.syspath_prepend(str(DOCS / "_ext"))
    (tmp_path / "conf.py").write_text(
        f'extensions = ["{CLI_DIRECTIVE.replace("-", "_")}"]\n', encoding="utf-8"
    )
    blocks = "".join(f".. {CLI_DIRECTIVE}:: {name}\n\n" for name in ["", *commands()])
    (tmp_path / "index.rst").write_text(f"CLI\n===\n\n{blocks}", encoding="utf-8")
    app = SphinxTestApp("html", srcdir=tmp_path, status=StringIO(), warning=StringIO())
    try:
        app.build()
        assert app.warning.getvalue() == ""
        shown = _text((app.outdir / "index.html").read_text(encoding="utf-8"))
    finally:
        app.cleanup()
    expected = [_parser().description or ""]
    for parser in commands().values():
        expected += [f"usage: {parser.prog}", parser.description or ""]
        for action in parser._actions:
            expected += [*action.option_strings, action.help or ""]
            if isinstance(action.metavar, str):
                expected.append(action.metavar)
    # straight quotes and double dashes: help text is not prose to typeset
    missing = [e for e in expected if " ".join(e.split()) not in shown]
    assert missing == []
    assert '{"old": "new"}' in shown and "after --:" in shown
