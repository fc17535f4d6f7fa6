"""Transforms that find nothing to do on a generated page are not run there.

Sphinx, docutils and extensions run some seventy transforms on every document;
each walks the whole doctree.  On a generated page most find nothing: its
nodes are built by :mod:`..doctree`, which makes no footnotes, substitutions,
``refname`` links, asides, badges or images, and gives every code block its
language.  On a big trace (hundreds of pages) the walks of the transforms
listed in :data:`SKIPPED_ON_GENERATED_PAGES` (each with why it has nothing to
do there) were a twentieth of the build.  The user's own pages, and pages
assembled from several documents (singlehtml, LaTeX), run every transform.

Mechanism: each listed class's ``apply`` is wrapped, once per process, in a
check that returns early when the document is one of this build's generated
pages (its docname is in :func:`..built.built`'s pages, read through
``document.settings.env``, which Sphinx sets while reading and resolving).
Subclasses and every other document go through the original ``apply``.

Two more kinds: a pass with work only where the page has a certain block
(:data:`SKIPPED_ON_GENERATED_PAGES_WITHOUT`: sphinx-design's tab sets, marked on the
document by :mod:`..doctree` as it makes one) is skipped on the pages without it; and
a ``doctree-resolved`` handler of :data:`SKIPPED_HANDLERS` is wrapped, in this
application's listeners, to return at once on a generated page.

Checked against Sphinx 7.0 to 9.0, docutils 0.20 to 0.22 and sphinx-design
0.5 to 0.8.  Touches: the ``apply`` method of each listed class,
``document.settings.env`` and the application's ``doctree-resolved`` listeners.
Falls back to running a transform (or handler) when it is not found (another
version), or when the document has no environment.

Measured with ``benchmarks/bench_speedups.py`` (best of 5 fresh builds, 2 CPUs;
``benchmarks/results/speedups-37/``): it saves 1.90 s of 15.4 s (14 %) on a 285-page
trace, nothing measurable on an 83-page one (and -0.9 s, within the noise, in a noisier
3-round run).  The two sphinx-design passes added since (dropdowns, the first title's CSS)
took 0.23 to 0.33 s of a 10 to 16 s build of an 82-page 27 MB log, timed pass by pass in
two builds each way; skipped, 0.00 s.  Timed each on its own in a build with the
speed-ups off (``-D torchtrace_speedups=0``, every call's time summed, one build), the
passes added last (source workaround, translation totaliser, tab sets, the new-tab
handler) took 0.18, 0.20, 0.23 and 0.20 s of an 18.4 s build of that log (4 %), and
0.12 s of a 4.3 s build of an 18-page one (``corpus/explain``).
"""

from __future__ import annotations

import functools
import importlib
from collections.abc import Callable
from typing import Any

from docutils import nodes
from docutils.transforms import Transform
from sphinx.application import Sphinx

from ..built import built
from ..doctree import HAS_TAB_SETS

#: Dotted class name -> why a generated page gives it nothing to do.
SKIPPED_ON_GENERATED_PAGES: dict[str, str] = {
    # read transforms
    "sphinx.transforms.references.SphinxDanglingReferences": (
        "reports ``refname`` links without a target: links here are resolved nodes"
    ),
    "sphinx.builders.latex.transforms.FootnoteDocnameUpdater": "no footnotes",
    "sphinx.transforms.i18n.RemoveTranslatableInline": "no translatable inline placeholders",
    "docutils.transforms.references.AnonymousHyperlinks": "no anonymous links",
    "sphinx.transforms.AutoNumbering": "no captioned figure, table or code block to number",
    "docutils.transforms.references.Substitutions": "no substitution references",
    "sphinx.transforms.DefaultSubstitutions": "no substitution references",
    "docutils.transforms.references.ExternalTargets": "no targets with a URL",
    "docutils.transforms.references.InternalTargets": "no ``refname`` links to targets",
    "docutils.transforms.misc.Transitions": "no transitions",
    "sphinx.domains.citation.CitationDefinitionTransform": "no citations",
    "sphinx.domains.citation.CitationReferenceTransform": "no citation references",
    "sphinx.transforms.MoveModuleTargets": "no module targets",
    "sphinx.transforms.HandleCodeBlocks": "no block quotes",
    "sphinx.transforms.SortIds": "every section has one id, its own anchor",
    "sphinx.transforms.AutoIndexUpgrader": "no index entries",
    "sphinx.transforms.ReorderConsecutiveTargetAndIndexNodes": "no index entries",
    "sphinx.transforms.DoctestTransform": "no doctest blocks",
    "sphinx.transforms.GlossarySorter": "no glossary",
    "sphinx.transforms.ApplySourceWorkaround": (
        "titles, rubrics, lines and code blocks have their source and raw source (from"
        " ``doctree.DoctreeBuilder``); other nodes' raw source is read by no writer and, with"
        " no source, by no translation"
    ),
    "sphinx.transforms.i18n.TranslationProgressTotaliser": (
        "its counts feed only the ``|translation progress|`` substitution: none here"
    ),
    # post-transforms (while writing)
    "sphinx.transforms.post_transforms.code.HighlightLanguageTransform": (
        "every code block has its language, and no highlight directive is here"
    ),
    "sphinx.transforms.post_transforms.code.TrimDoctestFlagsTransform": (
        "a log's code is shown as logged, doctest flags included"
    ),
    "sphinx.transforms.post_transforms.OnlyNodeTransform": "no only directive",
    "sphinx.transforms.post_transforms.PropagateDescDomain": "no object descriptions",
    "sphinx.transforms.post_transforms.images.ImageDownloader": "no images",
    "sphinx.transforms.post_transforms.images.DataURIExtractor": "no images",
    "sphinx.domains.c.AliasTransform": "no C alias directive",
    "sphinx.domains.cpp.AliasTransform": "no C++ alias directive",
    "sphinx_design.aside.AsideHtmlTransform": "no aside component",
    "sphinx_design.dropdown.DropdownHtmlTransform": (
        "no sphinx-design dropdown: a fold is the extension's own ``<details>`` node"
    ),
    "sphinx_design.extension.AddFirstTitleCss": "no docinfo (``sd_hide_title``)",
    "sphinx_design.badges_buttons.BadgeRefTooltipStash": "no badge references",
    "sphinx_design.badges_buttons.ButtonRefContentStash": "no button references",
}

#: Dotted class name -> (the document attribute a generated page has when the pass has
#: work there, why it has none without).  The page's builder sets the attribute.
SKIPPED_ON_GENERATED_PAGES_WITHOUT: dict[str, tuple[str, str]] = {
    "sphinx_design.tabs.TabSetHtmlTransform": (HAS_TAB_SETS, "no tab set on the page"),
}

#: ``doctree-resolved`` handlers (module, function) that find nothing on a generated page.
SKIPPED_HANDLERS: dict[tuple[str, str], str] = {
    ("sphinx_design.extension", "_resolve_new_tab_refs"): (
        "no card or button that opens a new tab (``sd_new_tab``)"
    ),
}

_MARK = "_torchtrace_skips_generated_pages"


def on_generated_page(document: nodes.document) -> bool:
    """Whether ``document`` is one of this build's generated pages."""
    env = getattr(document.settings, "env", None)
    if env is None:
        return False
    return env.docname in built(env).pages


def _find(dotted: str) -> type[Transform] | None:
    module_name, _, name = dotted.rpartition(".")
    try:
        found = getattr(importlib.import_module(module_name), name, None)
    except ImportError:
        return None
    return found if isinstance(found, type) and issubclass(found, Transform) else None


def _skipping(
    cls: type[Transform], apply: Callable[..., None], unless: str | None = None
) -> Callable[..., None]:
    @functools.wraps(apply)
    def apply_unless_generated(self: Transform, **kwargs: Any) -> None:
        if (
            type(self) is cls
            and on_generated_page(self.document)
            and not (unless and self.document.get(unless))
        ):
            return
        apply(self, **kwargs)

    setattr(apply_unless_generated, _MARK, True)
    return apply_unless_generated


def skip_on_generated_pages(
    dotted_names: list[str], unless: dict[str, str] | None = None
) -> list[type[Transform]]:
    """Wrap each found class's ``apply`` (once); returns the classes now skipped there
    (``unless``: dotted name -> the document attribute that keeps that pass running)."""
    wrapped: list[type[Transform]] = []
    for dotted in dotted_names:
        cls = _find(dotted)
        if cls is None:
            continue
        if not getattr(cls.__dict__.get("apply"), _MARK, False):
            patched: Any = cls  # docutils' stubs give Transform no ``apply``
            patched.apply = _skipping(cls, patched.apply, (unless or {}).get(dotted))
        wrapped.append(cls)
    return wrapped


def skip_handlers_on_generated_pages(app: Sphinx) -> None:
    """Each listed ``doctree-resolved`` handler of this application skips generated pages
    (the listeners are the application's own: nothing process-wide to put back)."""
    listeners = app.events.listeners.get("doctree-resolved", [])
    for i, listener in enumerate(listeners):
        handler = listener.handler
        name = (getattr(handler, "__module__", ""), getattr(handler, "__name__", ""))
        if name in SKIPPED_HANDLERS and not getattr(handler, _MARK, False):
            listeners[i] = listener._replace(handler=_handler_skipping(handler))


def _handler_skipping(handler: Callable[..., None]) -> Callable[..., None]:
    @functools.wraps(handler)
    def unless_generated(app: Sphinx, doctree: nodes.document, docname: str) -> None:
        if docname not in built(app.env).pages:
            handler(app, doctree, docname)

    setattr(unless_generated, _MARK, True)
    return unless_generated


def setup_generated_transforms(app: Sphinx) -> None:
    unless = {name: attr for name, (attr, _why) in SKIPPED_ON_GENERATED_PAGES_WITHOUT.items()}
    skip_on_generated_pages([*SKIPPED_ON_GENERATED_PAGES, *unless], unless)
    skip_handlers_on_generated_pages(app)


def remove_generated_transforms() -> None:
    """Each wrapped class's own ``apply`` back (the build finished, or the speed-ups are off)."""
    for dotted in [*SKIPPED_ON_GENERATED_PAGES, *SKIPPED_ON_GENERATED_PAGES_WITHOUT]:
        cls = _find(dotted)
        apply = cls.__dict__.get("apply") if cls is not None else None
        if getattr(apply, _MARK, False):
            patched: Any = cls
            patched.apply = apply.__wrapped__  # type: ignore[union-attr]
