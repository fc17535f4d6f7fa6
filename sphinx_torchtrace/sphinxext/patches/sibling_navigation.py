"""One sidebar navigation for sibling folders of orphan pages, not one per folder.

:mod:`.navigation` shares the navigation of generated orphan pages per output
folder; a trace has one folder per frame (``<trace>/frame-0-0/`` ...), so the
navigation was still resolved once per frame, each time as costly as a whole
page.  Every link of an orphan's navigation is relative to its folder, and
from two sibling folders ``P/x`` and ``P/y`` a link resolves to the same
relative URL unless it points inside ``P/x`` or ``P/y``.  So when no page in
a toctree lives inside a subfolder of ``P``, every subfolder of ``P`` gets the
navigation resolved for the first one.  Otherwise (``dirhtml``, where each
page is a folder) each folder keeps its own, as before.

Checked against Sphinx 7.0 to 9.0.  Touches: the ``toctree`` function that
Sphinx puts in the HTML page context (wrapped before :mod:`.navigation` wraps
it), ``BuildEnvironment.toctree_includes`` and ``Builder.get_target_uri``.
Falls back to Sphinx's own navigation when the context has no ``toctree``.
"""

from __future__ import annotations

import posixpath
from collections.abc import Callable
from itertools import chain
from typing import Any
from weakref import WeakKeyDictionary

from sphinx.application import Sphinx
from sphinx.builders import Builder

from ...site.naming import generated_prefix


class _Shared:
    """What one builder shares: pages in a toctree, folders checked, navigations made."""

    def __init__(self, app: Sphinx) -> None:
        builder = app.builder
        self.included = frozenset(chain.from_iterable(app.env.toctree_includes.values()))
        linked = self.included | {app.config.root_doc}
        self.linked_uris = [builder.get_target_uri(d) for d in linked]
        self.shareable: dict[str, bool] = {}
        self.navigation: dict[tuple[str, tuple[tuple[str, Any], ...]], str] = {}

    def shared_by_children(self, parent: str) -> bool:
        """Whether no page of a toctree lies inside a subfolder of ``parent``."""
        if parent not in self.shareable:
            prefix = parent + "/" if parent else ""
            self.shareable[parent] = not any(
                uri.startswith(prefix) and "/" in uri[len(prefix) :] for uri in self.linked_uris
            )
        return self.shareable[parent]


_SHARED: WeakKeyDictionary[Builder, _Shared] = WeakKeyDictionary()


def share_sibling_navigation(
    app: Sphinx, pagename: str, templatename: str, context: dict[str, Any], doctree: Any
) -> None:
    """Wrap the page's ``toctree()`` in a cache shared by its folder's siblings, when safe."""
    toctree = context.get("toctree")
    if toctree is None or not pagename.startswith(
        generated_prefix(app.config.torchtrace_generated_dir)
    ):
        return
    builder = app.builder
    if builder not in _SHARED:
        _SHARED[builder] = _Shared(app)
    shared = _SHARED[builder]
    if pagename in shared.included or pagename == app.config.root_doc:
        return
    parent = posixpath.dirname(posixpath.dirname(builder.get_target_uri(pagename)))
    if shared.shared_by_children(parent):
        context["toctree"] = _cached(toctree, parent, shared.navigation)


def _cached(
    toctree: Callable[..., str],
    parent: str,
    cache: dict[tuple[str, tuple[tuple[str, Any], ...]], str],
) -> Callable[..., str]:
    def cached_toctree(**kwargs: Any) -> str:
        key = (parent, tuple(sorted(kwargs.items())))
        if key not in cache:
            cache[key] = toctree(**kwargs)
        return cache[key]

    return cached_toctree


def setup_sibling_navigation(app: Sphinx) -> None:
    # Before .navigation (400), whose per-folder cache then calls this one.
    app.connect("html-page-context", share_sibling_navigation, priority=390)
