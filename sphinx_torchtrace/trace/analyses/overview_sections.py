"""The overview's sections by key, in page order: what its ``:sections:`` option names.

The page lays them out (``site/pages/overview/``); the keys are here, below the site, because
the directive's option, the plan and the tests all read them.
"""

from __future__ import annotations

#: Keys of the overview's sections, in page order (the directive's ``:sections:`` option).
SECTION_KEYS = (
    "header",
    "legend",
    "trie",
    "directory",
    "charts",
    "failures",
    "recompiles",
    "cache",
    "times",
    "runtime",  # only with a runtime profile beside the log (run --runtime)
    "chromium",
    "ranks",
    "export",
    "glance",  # shown first, whatever its place here: the figures, each linking to its section
)
