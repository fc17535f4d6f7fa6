"""One sidebar navigation shared by many generated orphan pages, not one per page.

Themes such as furo put the whole site's toctree in every page's sidebar by
calling the template function ``toctree()``, and Sphinx resolves it afresh for
each page: on a big trace that was a tenth of the build.  Graph and kernel
pages are orphans (in no toctree), so their navigation depends on the page
only through relative links: every orphan in one output folder gets the same
HTML.  A trace has one folder per frame (``<trace>/frame-0-0/`` ...), and
from two sibling folders ``P/x`` and ``P/y`` a link resolves to the same
relative URL unless it points inside ``P/x`` or ``P/y``.  So when no toctree
page lives inside a subfolder of ``P``, every subfolder of ``P`` shares the
navigation resolved for the first; otherwise (``dirhtml``, where each page is
a folder) each folder has its own.  Pages in a toctree, and pages outside the
generated folder, are left alone.

Checked against Sphinx 7.3 to 9.0.  Touches: the ``toctree`` function that
Sphinx puts in the HTML page context, ``BuildEnvironment.toctree_includes``
and ``Builder.get_target_uri``.  Falls back to Sphinx's own navigation when
the context has no ``toctree``.

Measured with ``benchmarks/bench_speedups.py`` (best of 5 fresh builds, 2 CPUs;
``benchmarks/results/speedups-37/``): it saves 3.20 s of 16.7 s (24 %) on a 285-page
trace and 0.09 s of 3.0 s on an 83-page one.
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

_Key = tuple[str, tuple[tuple[str, Any], ...]]


class _Shared:
    """What one builder shares: pages in a toctree, folders checked, navigations made."""

    def __init__(self, app: Sphinx) -> None:
        builder = app.builder
        self.included = frozenset(chain.from_iterable(app.env.toctree_includes.values()))
        linked = self.included | {app.config.root_doc}
        self.linked_uris = [builder.get_target_uri(d) for d in linked]
        self.shareable: dict[str, bool] = {}
        self.navigation: dict[_Key, str] = {}

    def sharing_folder(self, folder: str) -> str:
        """The key of the navigation ``folder`` can use: its parent's subfolders when safe
        (``P/*``), else the folder itself (``P``).  The two never meet: pages *in* ``P``
        link the trace's index as ``index.html``, pages one folder below as ``../index.html``."""
        parent = posixpath.dirname(folder)
        if parent not in self.shareable:
            prefix = parent + "/" if parent else ""
            self.shareable[parent] = not any(
                uri.startswith(prefix) and "/" in uri[len(prefix) :] for uri in self.linked_uris
            )
        return f"{parent}/*" if self.shareable[parent] else folder


_SHARED: WeakKeyDictionary[Builder, _Shared] = WeakKeyDictionary()


def share_orphan_navigation(
    app: Sphinx, pagename: str, templatename: str, context: dict[str, Any], doctree: Any
) -> None:
    """Wrap the page's ``toctree()`` in a shared cache when the page is a generated orphan."""
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
    folder = shared.sharing_folder(posixpath.dirname(builder.get_target_uri(pagename)))
    context["toctree"] = _cached(toctree, folder, shared.navigation)


def _cached(toctree: Callable[..., str], folder: str, cache: dict[_Key, str]) -> Callable[..., str]:
    def cached_toctree(**kwargs: Any) -> str:
        key = (folder, tuple(sorted(kwargs.items())))
        if key not in cache:
            cache[key] = toctree(**kwargs)
        return cache[key]

    return cached_toctree


def setup_navigation(app: Sphinx) -> None:
    # Before the themes' own handlers (priority 500), which call toctree().
    app.connect("html-page-context", share_orphan_navigation, priority=400)
