"""The shape every handler of input has, and what a handler gets to plan its pages.

A handler (:mod:`.trace`, :mod:`.diff`, :mod:`.trend`, :mod:`.capture`) of a directive
family is found for a directive by :func:`InputHandler.accepts`, reads its input into the
model, plans its pages, and adds to the :class:`Context` the stubs and downloads it wants
written and what it stands for in this build's registry (:mod:`..built`); its
:class:`..built.Generated` gives the nodes of its pages and of the directive.
:mod:`..generate` only calls these.
"""

from __future__ import annotations

import hashlib
import os
import posixpath
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Protocol

from docutils import nodes
from sphinx.application import Sphinx
from sphinx.util.docutils import SphinxDirective

from ...site.blocks import Page
from ...site.naming import label_segment
from ..built import Built, Generated, Key, Problem, content_digest, key
from ..cache_dirs import MODEL_CACHE
from ..config import TorchTraceConfig
from ..doctree import DoctreeBuilder
from ..downloads import output_path
from ..files import Content, stub
from ..scan import DirectiveRequest
from ..warnings import LABEL, WarningType


class InputHandler(Protocol):
    """What reads one input of a directive family (:class:`.family.Family`)."""

    def accepts(self, path: str, options: Any) -> bool:
        """Whether ``path`` (the directive's first path, resolved) is this handler's to read."""

    def generate(
        self, context: Context, request: DirectiveRequest, options: Any
    ) -> list[DirectiveRequest]:
        """Read, plan and register one directive's input; returns more requests of the
        same build to generate (the trace logs of a debug folder's run)."""


@dataclass
class Context:
    """One build's generation: its settings, and what the handlers add."""

    app: Sphinx
    config: TorchTraceConfig
    built: Built
    gen_dir: str
    suffix: str  # of the stubs, and the parser they are written for
    parser: str
    #: The folder of the extension's caches (the doctree folder, unless it is published).
    caches: Path
    detail_toctree: bool  # builders of one document list graph and kernel pages too
    wanted: dict[Path, Content] = field(default_factory=dict)  # file -> text (None: keep)
    #: Downloads, by path relative to the sources: written into the output (:mod:`..downloads`).
    downloads: dict[str, Content] = field(default_factory=dict)
    #: The folder of each input's pages (docname), and the directive that claimed it.
    folders: dict[str, DirectiveRequest] = field(default_factory=dict)
    _digests: dict[int, str] = field(default_factory=dict)  # by id() of a Generated
    #: What a kind keeps for the rest of this build (the captures' cache, by its folder).
    shared: dict[str, Any] = field(default_factory=dict)
    #: Called once every directive is generated (a cache that drops what no build used).
    finish: list[Callable[[], object]] = field(default_factory=list)

    @property
    def cache_dir(self) -> str:
        """The model cache, in :attr:`caches`."""
        return os.fspath(self.caches / MODEL_CACHE)

    @property
    def srcdir(self) -> Path:
        return Path(self.app.srcdir)

    def source_dir(self, request: DirectiveRequest) -> Path:
        """The folder of the page holding the directive (its paths are relative to it)."""
        return Path(self.app.env.doc2path(request.docname)).parent

    def register(self, request: DirectiveRequest, directive: str, generated: Generated) -> None:
        """What a directive stands for; the page holding it is read again when the content
        of its inputs changes."""
        self.built.directives[request_key(request, directive)] = generated
        self._page_digest(request.docname, self.digest_of(generated))

    def _page_digest(self, docname: str, digest: str) -> None:
        """A page holding several directives depends on all their inputs."""
        before = self.built.digests.get(docname, "")
        self.built.digests[docname] = hashlib.sha256((before + digest).encode()).hexdigest()

    def digest_of(self, generated: Generated) -> str:
        found = self._digests.get(id(generated))
        if found is None:
            found = self._digests[id(generated)] = content_digest(generated.logs)
        return found

    def add_page(self, docname: str, generated: Generated, page_role: str) -> None:
        """A generated page: its stub is written, its nodes come from ``generated``."""
        self.built.pages[docname] = generated
        self.built.digests[docname] = self.digest_of(generated)
        self.wanted[self.srcdir / (docname + self.suffix)] = stub(self.parser, page_role)

    def add_file(self, relpath: str, text: Content) -> None:
        """A download (``None``: an unchanged file, kept as it is; a function: made when
        it is written, so that downloads are in memory one at a time), named by its path
        relative to the sources, though it is written into the output only."""
        self.downloads[relpath] = text

    def has_download(self, relpath: str) -> bool:
        """Whether the output holds the download ``relpath`` (from an earlier build)."""
        return output_path(self.app, relpath).is_file()

    def claim_label(self, request: DirectiveRequest, directive: str) -> bool:
        """Whether ``request`` gets pages of its own under its label.

        Not when another directive shows the same input with the same options (this one
        shares its pages and its problems), nor when another input has the label (a
        ``label`` problem): labels name the pages' folder and every object.
        """
        label = request.label()
        folder = posixpath.join(self.gen_dir, label_segment(label))
        other = self.folders.get(folder)
        if other is None:
            self.folders[folder] = request
            return True
        if other.path == request.path and other.raw_options == request.raw_options:
            theirs = request_key(other, directive)
            mine = request_key(request, directive)
            if theirs in self.built.directives:
                self.built.directives[mine] = self.built.directives[theirs]
                self._page_digest(request.docname, self.digest_of(self.built.directives[mine]))
            if theirs in self.built.problems:
                self.built.problems[mine] = self.built.problems[theirs]
            return False
        advice = (
            "give one another :name:"
            if request.raw_options.get("name", "").strip()
            else "give one a :name:"
        )
        self.fail(
            request,
            directive,
            f"trace label {label!r} is used twice (also in {other.docname}); {advice}",
            LABEL,
        )
        return False

    def fail(
        self,
        request: DirectiveRequest,
        directive: str,
        message: str,
        subtype: WarningType,
        logs: list[Path] | None = None,
    ) -> None:
        """No pages for this directive: it says why at its own line (the page holding it is
        read again when why changes, or when it had pages before)."""
        self.built.problems[request_key(request, directive)] = Problem(message, subtype, logs or [])
        why = f"{directive}\0{subtype.name}\0{message}".encode("utf-8", "surrogatepass")
        self._page_digest(request.docname, hashlib.sha256(why).hexdigest())


def request_key(request: DirectiveRequest, directive: str) -> Key:
    """The registry's key of a directive the scan found (see :func:`..built.key`)."""
    return key(
        request.docname,
        directive,
        request.argument,
        request.raw_options.get("name") or "",
        request.nth,
    )


def page_section(
    directive: SphinxDirective,
    docname: str,
    page: Page,
    rewrite: Callable[[str], str],
    special: Callable[[DoctreeBuilder, object], list[nodes.Node]] | None = None,
) -> list[nodes.Node]:
    """A generated page's nodes, whatever its kind: one section titled as the page,
    ``orphan`` when no toctree lists it; ``special`` builds the blocks of that kind's own."""
    if page.orphan:
        directive.env.metadata[docname]["orphan"] = True
    builder = DoctreeBuilder(
        directive.env,
        directive.state.document,
        rewrite,
        special=(lambda block: special(builder, block)) if special is not None else None,
    )
    section = builder.section(page.title, page.blocks, "page")
    directive.set_source_info(section)
    return [section]


def missing_input(argument: str, path: str) -> str:
    """Why a directive's path names nothing, and the likely mistake: an absolute path of
    the machine (``/tmp/trace``), which a directive takes from the source folder."""
    message = (
        f"no trace at {argument!r}: {path} does not exist (a path is relative to the "
        "page; a leading / means the source folder)"
    )
    if argument.startswith("/") and os.path.exists(argument):
        message += (
            f"; {argument} exists on this machine, outside the docs: copy it into the "
            "source folder and name it from there"
        )
    return message


def build_date() -> str:
    """Today in UTC (``2026-11-26``), or the day ``SOURCE_DATE_EPOCH`` names, as Sphinx
    does for reproducible builds. Pages only say it when they are read again."""
    epoch = os.environ.get("SOURCE_DATE_EPOCH")
    when = datetime.now(tz=timezone.utc)
    if epoch:
        try:
            when = datetime.fromtimestamp(float(epoch), tz=timezone.utc)
        except (ValueError, OverflowError, OSError):
            pass  # not a number of seconds: today
    return when.strftime("%Y-%m-%d")
