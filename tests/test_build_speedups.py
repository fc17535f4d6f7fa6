"""The build's speed-ups change nothing a reader gets: every output file, byte for byte.

Each speed-up (:mod:`sphinx_torchtrace.sphinxext.patches`) is switched off for a
second build of the same project, whose output must be identical; then each one is
checked to do its work (shared sidebars, one settings parser, asset checksums looked
up once, the GC threshold put back, highlighting results that cover every block the
page writer highlights).
"""

from __future__ import annotations

import gc
from itertools import chain
from pathlib import Path
from typing import Any

import pytest
from docutils.frontend import OptionParser
from sphinx.builders import html as html_builder
from sphinx.testing.util import SphinxTestApp
from sphinx.util import docutils as sphinx_docutils

from sphinx_torchtrace.render import highlight
from sphinx_torchtrace.sphinxext.built import Generated, built
from sphinx_torchtrace.sphinxext.patches import (
    asset_checksums,
    fast_code,
    gc_threshold,
    generated_transforms,
    navigation,
    parallel_highlight,
    settings_cache,
)

from .conftest import SiteMaker, generated_pages


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
    fast_files = output_files(fast)
    plain = make_site("multi", buildername, confoverrides={**theme, "torchtrace_speedups": False})
    assert plain.warning.getvalue() == ""
    plain_files = output_files(plain)
    assert fast_files.keys() == plain_files.keys()
    assert [name for name in fast_files if fast_files[name] != plain_files[name]] == []


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


def test_one_settings_parser_serves_every_document(
    make_site: SiteMaker, monkeypatch: pytest.MonkeyPatch
) -> None:
    built: list[object] = []
    real = OptionParser

    def counting(*args: object, **kwargs: object) -> object:
        built.append(args)
        return real(*args, **kwargs)  # type: ignore[arg-type]

    if not hasattr(sphinx_docutils, "_get_settings"):
        pytest.skip("Sphinx before 8.2 keeps one settings parser per build already")
    monkeypatch.setattr(settings_cache, "OptionParser", counting)
    original = getattr(sphinx_docutils._get_settings, "__wrapped__", sphinx_docutils._get_settings)
    monkeypatch.setattr(
        sphinx_docutils, "_get_settings", settings_cache.cached_get_settings(original)
    )
    app = make_site("multi", "html")
    documents = len(app.env.all_docs)
    assert documents > 20
    assert len(built) <= 2  # one per set of components: rST pages (and a MyST one, if any)
    first, second = (app.env.get_doctree(d) for d in sorted(app.env.all_docs)[:2])
    assert first.settings is not second.settings  # each document still has its own


def test_asset_checksums_are_looked_up_once_per_asset(
    make_site: SiteMaker, monkeypatch: pytest.MonkeyPatch
) -> None:
    looked_up: list[object] = []
    current: Any = getattr(html_builder, "_file_checksum")  # noqa: B009 - private, not exported
    original: Any = getattr(current, "__wrapped__", current)

    def counting(outdir: Any, filename: Any) -> str:
        looked_up.append(filename)
        return str(original(outdir, filename))

    monkeypatch.setattr(html_builder, "_file_checksum", asset_checksums.memoized(counting))
    app = make_site("multi", "html")
    assert len(app.env.all_docs) > 20
    assert looked_up and len(looked_up) == len(set(looked_up))  # once each, not once a page
    html = (Path(app.outdir) / "index.html").read_text(encoding="utf-8")
    assert "?v=" in html  # pages still carry them


def test_full_collections_are_rare_during_a_build_then_as_before(make_site: SiteMaker) -> None:
    before = gc.get_threshold()
    app = make_site("simple", "html", build=False)
    during: list[tuple[int, ...]] = []
    app.connect("env-updated", lambda app, env: during.append(gc.get_threshold()))
    app.build()
    assert during and during[0][2] >= gc_threshold.FULL_COLLECTION_EVERY
    assert during[0][:2] == before[:2]  # young generations as before
    assert gc.get_threshold() == before


def test_highlighting_ahead_covers_every_block_the_writer_highlights(
    make_site: SiteMaker, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The child's table (computed here in-process) holds, under the very arguments the
    fast visitor passes, the HTML the visitor would have made: nothing is highlighted twice."""
    monkeypatch.setattr(parallel_highlight, "_usable_cpus", lambda: 1)  # no child: record
    calls: list[tuple[object, ...]] = []

    def recording(*args: object) -> str:
        calls.append(args)
        return highlight.highlight_fast(*args)  # type: ignore[arg-type]

    monkeypatch.setattr(parallel_highlight, "_ORIGINAL", recording)
    app = make_site("multi", "html", build=False)
    pages: dict[str, Generated] = {}
    app.connect("env-updated", lambda app, env: pages.update(built(app).pages))
    app.build()
    assert calls and pages
    monkeypatch.setattr(parallel_highlight, "_ORIGINAL", highlight.highlight_fast)
    table = parallel_highlight.highlight_pages(pages, sorted(pages))
    assert table
    for args in calls:
        key = parallel_highlight.key(*args)  # type: ignore[arg-type]
        assert table.get(key) == highlight.highlight_fast(*args)  # type: ignore[arg-type]


def test_process_wide_speedups_are_put_back_when_the_build_ends(make_site: SiteMaker) -> None:
    """A later build in the same process (a test suite, an editor's preview) finds Sphinx
    as it ships: its functions, every transform's own ``apply``, the collector's threshold."""
    before = gc.get_threshold()
    seen: list[bool] = []
    app = make_site("multi", "html", build=False)
    app.connect("env-updated", lambda app, env: seen.append(_patched()))
    app.build()
    assert seen == [True]  # in place while the build ran
    assert not _patched() and gc.get_threshold() == before


def _patched() -> bool:
    """Whether any process-wide speed-up is in place."""
    functions = (
        getattr(sphinx_docutils, "_get_settings", None),
        getattr(html_builder, "_file_checksum", None),
    )
    transforms = (
        generated_transforms._find(name) for name in generated_transforms.SKIPPED_ON_GENERATED_PAGES
    )
    return (
        any(hasattr(f, "__wrapped__") for f in functions)
        or fast_code.highlight_fast is not highlight.highlight_fast
        or any(
            c is not None and hasattr(c.__dict__.get("apply"), "__wrapped__") for c in transforms
        )
    )
