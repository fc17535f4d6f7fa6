"""What this build generated: one registry for every kind of input, in a module of its own.

Pages are planned at ``builder-inited`` (:mod:`.generate`, through the kinds of
:mod:`.kinds`) and turned into nodes later, when Sphinx reads a generated stub or
the page holding a directive.  In between, everything lives here, per source
folder: module state, not the environment, so nothing of it is pickled, forked
``-j`` readers inherit it, and two projects built in one process stay apart
(``BuildEnvironment.app`` is deprecated, hence not on the app).

The kinds import this module; it imports none of them.  What a kind registers is
a :class:`Generated`: the directives and the page stub ask it for their nodes.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol

from docutils import nodes
from sphinx.application import Sphinx
from sphinx.environment import BuildEnvironment
from sphinx.util.docutils import SphinxDirective

from ..site.blocks import Page


class Generated(Protocol):
    """One directive's input as this build planned it (a trace, a debug folder, a
    comparison ...): the nodes of its pages and of the directive itself."""

    @property
    def rewrite(self) -> Callable[[str], str]:
        """The path rewrites applied to every text shown."""

    @property
    def notes(self) -> list[tuple[str, str]]:
        """(warning subtype, message) pairs, said at the directive's line."""

    @property
    def logs(self) -> list[Path]:
        """Every file the pages depend on: a change to one re-reads them."""

    def page(self, docname: str) -> Page:
        """The blocks of one of its generated pages (KeyError for another docname)."""

    def page_nodes(self, directive: SphinxDirective, docname: str) -> list[nodes.Node]:
        """The nodes of one of its generated pages."""

    def summary_nodes(self, directive: SphinxDirective) -> list[nodes.Node]:
        """What the directive shows where it stands in the user's page."""


@dataclass
class Problem:
    """Why a directive has no pages: said at its own line, if it really runs (a directive
    the scan mistook for one, an example, stays silent)."""

    message: str
    subtype: str  # a ``torchtrace.*`` warning subtype
    logs: list[Path] = field(default_factory=list)  # a change to one reads the page again


#: (docname of the page holding it, directive name, its argument with spaces collapsed)
Key = tuple[str, str, str]


@dataclass
class Built:
    """The registry of one build: what each directive and each generated page stands for."""

    directives: dict[Key, Generated] = field(default_factory=dict)
    pages: dict[str, Generated] = field(default_factory=dict)  # by docname
    problems: dict[Key, Problem] = field(default_factory=dict)

    def clear(self) -> None:
        self.directives.clear()
        self.pages.clear()
        self.problems.clear()


_BUILT: dict[str, Built] = {}


def built(app_or_env: Sphinx | BuildEnvironment) -> Built:
    """This build's registry (one per source folder)."""
    return _BUILT.setdefault(os.fspath(app_or_env.srcdir), Built())


def key(docname: str, directive: str, argument: str) -> Key:
    """The registry's key of a directive (an argument's spacing does not matter)."""
    return (docname, directive, " ".join(argument.split()))


def forget_built(app: Sphinx, exception: BaseException | None) -> None:
    """build-finished: the directives have run, the models need not outlive the build."""
    _BUILT.pop(os.fspath(app.srcdir), None)
