"""One stemming cache for the whole build: the same search index, stemmed once per word."""

from __future__ import annotations

from .conftest import SiteMaker


def test_shared_stem_cache_leaves_the_search_index_unchanged(make_site: SiteMaker) -> None:
    cached = make_site("simple", "html")
    stem = cached.builder.indexer.lang.stem
    assert stem.cache_info().hits > 0  # words come back, within and across pages
    index = (cached.outdir / "searchindex.js").read_text(encoding="utf-8")
    plain = make_site("simple", "html", confoverrides={"torchtrace_speedups": False})
    assert not hasattr(plain.builder.indexer.lang.stem, "cache_info")
    assert (plain.outdir / "searchindex.js").read_text(encoding="utf-8") == index
