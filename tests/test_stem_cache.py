"""One stemming cache for the whole build: the same search index, stemmed once per word."""

from __future__ import annotations

import pytest

import sphinx_torchtrace.sphinxext.setup as extension

from .conftest import SiteMaker


def test_shared_stem_cache_leaves_the_search_index_unchanged(
    make_site: SiteMaker, monkeypatch: pytest.MonkeyPatch
) -> None:
    cached = make_site("simple", "html")
    stem = cached.builder.indexer.lang.stem
    assert stem.cache_info().hits > 0  # words come back, within and across pages
    index = (cached.outdir / "searchindex.js").read_text(encoding="utf-8")
    monkeypatch.setattr(extension, "setup_stem_cache", lambda app: None)
    plain = make_site("simple", "html")
    assert not hasattr(plain.builder.indexer.lang.stem, "cache_info")
    assert (plain.outdir / "searchindex.js").read_text(encoding="utf-8") == index
