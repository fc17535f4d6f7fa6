"""One stemming cache for the whole HTML build, not one per page.

Sphinx's search indexer stems every word of a page afresh (its cache lives for
one page, and snowballstemmer 3 keeps none): on a big trace, hundreds of
generated pages share their words and stemming was a quarter of the writing
phase.  Stemming is a pure function of the word, so a cache shared by all pages
changes nothing in the index.  Applied once the indexer exists (it is made when
writing starts); without one, or with an indexer of another shape, nothing is
done.

Checked against Sphinx 7.0 to 9.0.  Touches: ``builder.indexer.lang.stem``
(the search language's stemmer).  Falls back to doing nothing when the indexer
or its ``stem`` is missing.

Measured with ``benchmarks/bench_speedups.py`` (best of 5 fresh builds, 2 CPUs;
``benchmarks/results/speedups-37/``): it saves 0.36 s of 13.8 s (3 %) on a 285-page
trace and 0.40 s of 3.3 s (12 %) on an 83-page one.
"""

from __future__ import annotations

import functools
from typing import Any

from docutils import nodes
from sphinx.application import Sphinx

_MARK = "_torchtrace_shared_cache"


def share_stem_cache(app: Sphinx, doctree: nodes.document, docname: str) -> None:
    lang: Any = getattr(getattr(app.builder, "indexer", None), "lang", None)
    stem = getattr(lang, "stem", None)
    if stem is None or getattr(stem, _MARK, False):
        return
    cached = functools.lru_cache(maxsize=1 << 16)(stem)
    setattr(cached, _MARK, True)
    lang.stem = cached


def setup_stem_cache(app: Sphinx) -> None:
    # doctree-resolved comes before each page is fed to the index, in the main process.
    app.connect("doctree-resolved", share_stem_cache)
