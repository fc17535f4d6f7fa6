"""The sidebar of generated pages: shared per folder, yet what Sphinx would give each page."""

from __future__ import annotations

import posixpath
import re
from collections import defaultdict
from itertools import chain
from pathlib import Path

from .conftest import SiteMaker, generated_pages, inventory


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


def test_frames_past_the_sidebar_limit_leave_the_toctree_not_the_site(
    make_site: SiteMaker,
) -> None:
    listed = make_site("simple", "html")
    frames = [p for p in generated_pages(listed, "frame-") if not p.endswith("frame-none")]
    included = set(chain.from_iterable(listed.env.toctree_includes.values()))
    assert frames and set(frames) <= included  # a small trace: every frame in the sidebar
    # the records outside any compilation are no frame: an orphan linked from the overview
    assert not {p for p in generated_pages(listed, "frame-none")} & included

    app = make_site("simple", "html", confoverrides={"torchtrace_sidebar_frames": 0})
    assert app.warning.getvalue() == ""  # no "not included in any toctree"
    included = set(chain.from_iterable(app.env.toctree_includes.values()))
    assert not set(frames) & included
    for page in frames:  # still built, still objects, marked orphan
        assert (app.outdir / f"{page}.html").is_file()
        assert app.env.metadata[page].get("orphan") is True
    assert inventory(app)["frame"] == inventory(listed)["frame"]
    # PDF builds need every page in a toctree, whatever the limit
    latex = make_site("simple", "latex", confoverrides={"torchtrace_sidebar_frames": 0})
    included = set(chain.from_iterable(latex.env.toctree_includes.values()))
    assert set(frames) <= included


def test_sections_left_out_leave_no_link_to_them(make_site: SiteMaker) -> None:
    """``:sections:`` without the compile directory, past ``torchtrace_sidebar_frames``:
    the note on what the sidebar lists links no section that is not there; every in-page
    anchor of the overview lands."""
    page = (
        "Lambdas\n=======\n\n.. torchtrace:: @DATA@/corpus/many_lambdas\n"
        "   :name: lambdas\n   :sections: header, failures\n"
    )
    app = make_site(
        "simple", pages={"index.rst": page}, confoverrides={"torchtrace_sidebar_frames": 3}
    )
    overview = (Path(app.outdir) / "torchtrace/lambdas/index.html").read_text(encoding="utf-8")
    assert "The sidebar lists the first page of" in overview  # the note is there
    ids = set(re.findall(r'id="([^"]+)"', overview))
    dead = [h for h in re.findall(r'href="#([^"]+)"', overview) if h not in ids]
    assert dead == []
