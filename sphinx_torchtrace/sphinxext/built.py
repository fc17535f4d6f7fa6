"""What this build generated: one registry for every family's input, in a module of its own.

Pages are planned at ``builder-inited`` (:mod:`.generate`, through the handlers of
:mod:`.families`) and turned into nodes later, when Sphinx reads a generated stub or
the page holding a directive.  In between, everything lives here, per source
folder: module state, not the environment, so nothing of it is pickled, forked
``-j`` readers inherit it, and two projects built in one process stay apart
(``BuildEnvironment.app`` is deprecated, hence not on the app).

The handlers import this module; it imports none of them.  What a handler registers is
a :class:`Generated`: the directives and the page stub ask it for their nodes.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol, TypeVar

from docutils import nodes
from sphinx.application import Sphinx
from sphinx.environment import BuildEnvironment
from sphinx.util.docutils import SphinxDirective

from ..site.blocks import Page
from .warnings import Note, WarningType

T = TypeVar("T")


class Generated(Protocol):
    """One directive's input as this build planned it (a trace, a debug folder, a
    comparison ...): the nodes of its pages and of the directive itself."""

    @property
    def rewrite(self) -> Callable[[str], str]:
        """The path rewrites applied to every text shown."""

    @property
    def notes(self) -> list[Note]:
        """(warning subtype, message) pairs, said at the directive's line."""

    @property
    def logs(self) -> list[Path]:
        """Every file the pages depend on: a change to one re-reads them."""

    def page(self, docname: str) -> Page:
        """The blocks of one of its generated pages (KeyError for another docname)."""

    def page_nodes(self, directive: SphinxDirective, docname: str) -> list[nodes.Node]:
        """The nodes of one of its generated pages."""

    def inline_nodes(self, directive: SphinxDirective) -> list[nodes.Node]:
        """What the directive shows where it stands in the user's page."""

    def meanings(self) -> dict[str, str]:
        """What each object name it declares stands for (``run/[13/0]`` → the function and
        file), so a name whose meaning changes with a recapture is said (:mod:`.moved`)."""


@dataclass
class Problem:
    """Why a directive has no pages: said at its own line, if it really runs (a directive
    the scan mistook for one, an example, stays silent)."""

    message: str
    subtype: WarningType
    logs: list[Path] = field(default_factory=list)  # a change to one reads the page again


#: (docname of the page holding it, directive name, its argument with spaces collapsed)
Key = tuple[str, str, str, str, int]


@dataclass
class Built:
    """The registry of one build: what each directive and each generated page stands for."""

    directives: dict[Key, Generated] = field(default_factory=dict)
    pages: dict[str, Generated] = field(default_factory=dict)  # by docname
    problems: dict[Key, Problem] = field(default_factory=dict)
    #: The content digest of the inputs behind each page (generated, or holding a
    #: directive): a page is read again when it changes, not when a file's time does.
    digests: dict[str, str] = field(default_factory=dict)
    #: What a family keeps for its companion directives (the captures' table), by the
    #: part's class: see :meth:`part`.
    parts: dict[type, object] = field(default_factory=dict)
    #: The user's directive behind each folder of generated pages and downloads:
    #: (docname of its page, its line), for a warning about what was published there.
    origins: dict[str, tuple[str, int]] = field(default_factory=dict)
    #: Whether this build added or removed generated pages: every page's navigation lists
    #: them, so every page is written again (see :func:`.generate.rewrite_navigation`).
    pages_changed: bool = False
    #: Whether this builder puts graph and kernel pages in toctrees (one assembled
    #: document: LaTeX, singlehtml); the pages read for another builder lack them.
    detail_toctree: bool = False

    def clear(self) -> None:
        self.pages_changed = False
        self.detail_toctree = False
        self.parts.clear()
        self.origins.clear()  # cleared, not replaced: the publish check holds it
        self.directives.clear()
        self.pages.clear()
        self.problems.clear()
        self.digests.clear()

    def part(self, cls: type[T]) -> T:
        """A family's part of this build's registry (made empty on first use): what its
        companion directives read when the pages are read, typed by its class."""
        found = self.parts.get(cls)
        if not isinstance(found, cls):
            found = self.parts[cls] = cls()
        return found


_BUILT: dict[str, Built] = {}


def built(app_or_env: Sphinx | BuildEnvironment) -> Built:
    """This build's registry (one per source folder)."""
    return _BUILT.setdefault(os.fspath(app_or_env.srcdir), Built())


def key(docname: str, directive: str, argument: str, name: str = "", nth: int = 0) -> Key:
    """The registry's key of a directive (spacing does not matter): its page, its kind, its
    argument, its ``:name:`` and how many directives before it on the page have the same
    argument and name, so that two directives of one input on one page are two reports
    (or one report and one warning at the second, when they are named alike)."""
    return (docname, directive, " ".join(argument.split()), " ".join(name.split()), nth)


#: Where the environment keeps the last build's digests (pickled with it).
_ENV_DIGESTS = "torchtrace_input_digests"
#: Where it keeps whether the last build's pages had graph and kernel pages in toctrees.
_ENV_DETAIL = "torchtrace_detail_toctree"


def content_digest(paths: list[Path]) -> str:
    """A digest of the files' contents (and names): a log touched but unchanged keeps it."""
    h = hashlib.sha256()
    for path in sorted(paths):
        h.update(os.fspath(path).encode("utf-8", "surrogateescape") + b"\0")
        try:
            with open(path, "rb", buffering=0) as f:
                while chunk := f.read(1 << 20):
                    h.update(chunk)
        except OSError:
            h.update(b"unreadable")
    return h.hexdigest()


def changed_inputs(
    app: Sphinx, env: BuildEnvironment, added: set[str], changed: set[str], removed: set[str]
) -> list[str]:
    """env-get-outdated: the pages whose inputs' content changed since the last build.

    Pages note no dependency on the logs themselves (Sphinx would compare file times: a
    copied or checked-out log, unchanged, read every page again).  Every page is read
    again when the builder before used other toctrees (``make html singlehtml`` shares
    one environment: the single page lacked every graph and kernel page)."""
    registry = built(app)
    now = registry.digests
    before: dict[str, str] = getattr(env, _ENV_DIGESTS, {})
    setattr(env, _ENV_DIGESTS, dict(now))
    if getattr(env, _ENV_DETAIL, None) != registry.detail_toctree:
        setattr(env, _ENV_DETAIL, registry.detail_toctree)
        before = {}
    # a page whose directives had inputs last time and none now (they fail now) changed too
    gone = [d for d in before if d not in now and d in env.all_docs]
    return [d for d, digest in now.items() if before.get(d) != digest and d in env.all_docs] + gone


def forget_built(app: Sphinx, exception: BaseException | None) -> None:
    """build-finished: the directives have run, the models need not outlive the build."""
    _BUILT.pop(os.fspath(app.srcdir), None)
