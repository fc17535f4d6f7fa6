"""The build's speed-ups change nothing a reader gets: every output file, byte for byte.

Each speed-up (:mod:`sphinx_torchtrace.sphinxext.patches`) is switched off for a
second build of the same project, whose output must be identical; then each one is
checked to do its work (shared sidebars, one settings parser, asset checksums looked
up once, the GC threshold put back, highlighting results that cover every block the
page writer highlights).
"""

from __future__ import annotations

import gc
import os
from itertools import chain
from pathlib import Path

import pytest
from docutils import nodes
from sphinx.testing.util import SphinxTestApp

from sphinx_torchtrace.sphinxext.patches import (
    gc_threshold,
    generated_transforms,
    navigation,
)

from .conftest import SiteMaker, generated_pages


def sourced_nodes(app: SphinxTestApp) -> dict[str, list[tuple[str, str, int | None, str]]]:
    """Per generated page, as read (its pickled doctree), every text node that has a source
    and every code block: class, source (relative to the project), line and raw source.

    What translations (only nodes with a source are translatable) and writers (a code
    block's raw source tells a parsed literal) read of these attributes; a generated page
    skips ApplySourceWorkaround, so the page's builder sets them as that pass would."""
    out = {}
    for docname in generated_pages(app):
        doctree = app.env.get_doctree(docname)
        rows = []
        for node in doctree.findall(nodes.TextElement):
            if node.source or isinstance(node, nodes.literal_block):
                source = os.path.relpath(node.source, app.srcdir) if node.source else ""
                rows.append((type(node).__name__, source, node.line, node.rawsource))
        out[docname] = rows
    return out


def output_files(app: SphinxTestApp) -> dict[str, bytes]:
    """Every file a build wrote, by path (the doctree pickles are Sphinx's cache, not output)."""
    out = Path(app.outdir)
    return {
        p.relative_to(out).as_posix(): p.read_bytes()
        for p in sorted(out.rglob("*"))
        if p.is_file() and ".doctrees" not in p.parts
    }


@pytest.mark.parametrize("buildername", ["html", "dirhtml", "latex", "text"])
def test_speedups_leave_every_output_file_as_it_was(make_site: SiteMaker, buildername: str) -> None:
    """``torchtrace_speedups = False`` builds as Sphinx ships: every transform, Sphinx's
    own settings parser per document, highlighting in the build's process, a sidebar
    resolved per page; the output is the same, file for file."""
    theme = {"html_theme": "furo"} if "html" in buildername else {}
    fast = make_site("multi", buildername, confoverrides=theme)
    assert fast.warning.getvalue() == ""
    fast_files, fast_nodes = output_files(fast), sourced_nodes(fast)
    plain = make_site("multi", buildername, confoverrides={**theme, "torchtrace_speedups": False})
    assert plain.warning.getvalue() == ""
    plain_files, plain_nodes = output_files(plain), sourced_nodes(plain)
    assert fast_nodes == plain_nodes
    assert any(rows for rows in fast_nodes.values())
    assert fast_files.keys() == plain_files.keys()
    assert [name for name in fast_files if fast_files[name] != plain_files[name]] == []
    if buildername == "html":  # pages whose passes run (tab sets) and pages they skip
        tab = b'<input checked="checked" id="sd-tab'
        tabbed = [name for name, data in fast_files.items() if tab in data]
        assert any(n.startswith("torchtrace/") for n in tabbed), "no generated page has tabs"


def test_orphan_sidebars_are_shared_by_sibling_folders(make_site: SiteMaker) -> None:
    # graph and kernel pages (orphans) in every frame's folder: graphs too big to fold
    paged = {"html_theme": "furo", "torchtrace_fold_bytes": 0}
    app = make_site("multi", "html", confoverrides=paged)
    included = set(chain.from_iterable(app.env.toctree_includes.values()))
    orphans = [p for p in generated_pages(app) if p not in included]
    folders = {p.rsplit("/", 1)[0] for p in orphans}
    shared = navigation._SHARED[app.builder]
    parents = {parent for parent, _ in shared.navigation}
    assert len(folders) > len(parents) >= 1  # several frame folders, one navigation each parent


def test_full_collections_are_rare_during_a_build_then_as_before(make_site: SiteMaker) -> None:
    before = gc.get_threshold()
    app = make_site("simple", "html", build=False)
    during: list[tuple[int, ...]] = []
    app.connect("env-updated", lambda app, env: during.append(gc.get_threshold()))
    app.build()
    assert during and during[0][2] >= gc_threshold.FULL_COLLECTION_EVERY
    assert during[0][:2] == before[:2]  # young generations as before
    assert gc.get_threshold() == before


def test_process_wide_speedups_are_put_back_when_the_build_ends(make_site: SiteMaker) -> None:
    """A later build in the same process (a test suite, an editor's preview) finds Sphinx
    as it ships: every transform's own ``apply``, the collector's threshold."""
    before = gc.get_threshold()
    seen: list[bool] = []
    app = make_site("multi", "html", build=False)
    app.connect("env-updated", lambda app, env: seen.append(_patched()))
    app.build()
    assert seen == [True]  # in place while the build ran
    assert not _patched() and gc.get_threshold() == before


def _patched() -> bool:
    """Whether any process-wide speed-up is in place."""
    transforms = (
        generated_transforms._find(name) for name in generated_transforms.SKIPPED_ON_GENERATED_PAGES
    )
    return any(
        c is not None and hasattr(c.__dict__.get("apply"), "__wrapped__") for c in transforms
    )
