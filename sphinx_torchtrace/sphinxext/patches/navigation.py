"""One sidebar navigation per folder of generated pages, not one per page.

Themes such as furo put the whole site's toctree in every page's sidebar by
calling the template function ``toctree()``, and Sphinx resolves it afresh
for each page: on a big trace that was a tenth of the build.  Graph and kernel
pages are orphans (in no toctree), so for them the resolved navigation depends
on the page only through relative links: every orphan page in the same output
folder gets the same HTML.  We compute it once per folder and argument set.
Pages in a toctree, and pages outside the generated folder, are left alone.

Checked against Sphinx 7.0 to 9.0.  Touches: the ``toctree`` function that
Sphinx puts in the HTML page context, and ``BuildEnvironment.toctree_includes``.
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

_Cache = dict[tuple[str, tuple[tuple[str, Any], ...]], str]
_CACHES: WeakKeyDictionary[Builder, tuple[frozenset[str], _Cache]] = WeakKeyDictionary()


def share_orphan_navigation(
    app: Sphinx, pagename: str, templatename: str, context: dict[str, Any], doctree: Any
) -> None:
    """Wrap the page's ``toctree()`` in a per-folder cache when the page is a generated orphan."""
    toctree = context.get("toctree")
    if toctree is None or not pagename.startswith(
        generated_prefix(app.config.torchtrace_generated_dir)
    ):
        return
    builder = app.builder
    if builder not in _CACHES:
        included = frozenset(chain.from_iterable(app.env.toctree_includes.values()))
        _CACHES[builder] = (included, {})
    included, cache = _CACHES[builder]
    if pagename in included or pagename == app.config.root_doc:
        return
    folder = posixpath.dirname(builder.get_target_uri(pagename))
    context["toctree"] = _cached(toctree, folder, cache)


def _cached(toctree: Callable[..., str], folder: str, cache: _Cache) -> Callable[..., str]:
    def cached_toctree(**kwargs: Any) -> str:
        key = (folder, tuple(sorted(kwargs.items())))
        if key not in cache:
            cache[key] = toctree(**kwargs)
        return cache[key]

    return cached_toctree


def setup_navigation(app: Sphinx) -> None:
    # Before the themes' own handlers (priority 500), which call toctree().
    app.connect("html-page-context", share_orphan_navigation, priority=400)
