"""The sidebar of generated pages: shared per folder, yet what Sphinx would give each page."""

from __future__ import annotations

import posixpath
from collections import defaultdict
from itertools import chain

from .conftest import SiteMaker, generated_pages


def test_orphan_pages_show_the_navigation_sphinx_resolves_for_them(make_site: SiteMaker) -> None:
    # alabaster: its sidebar is toctree() verbatim
    app = make_site("multi", "html", confoverrides={"html_theme": "alabaster"})
    assert app.warning.getvalue() == ""
    included = set(chain.from_iterable(app.env.toctree_includes.values()))
    orphans = [p for p in generated_pages(app) if p not in included]
    frames = [p for p in generated_pages(app) if p in included and "/frame-" in p]
    assert orphans and frames
    by_folder: dict[str, set[str]] = defaultdict(set)
    for page in orphans:
        fresh = app.builder._get_local_toctree(page, collapse=True, includehidden=True)
        html = (app.outdir / f"{page}.html").read_text(encoding="utf-8")
        assert fresh in html, page  # the shared sidebar is exactly this page's own
        by_folder[posixpath.dirname(page)].add(fresh)
    assert all(len(navs) == 1 for navs in by_folder.values())
    assert len(by_folder) < len(orphans)  # there was something to share
    # pages in a toctree keep their own navigation, with themselves marked current
    frame = frames[0]
    html = (app.outdir / f"{frame}.html").read_text(encoding="utf-8")
    assert app.builder._get_local_toctree(frame, collapse=True, includehidden=True) in html
    assert 'class="current reference internal"' in html
