"""What the compile caches answered: lookups per result, per compile and per cache.

An ``fx_graph_bundled_cache_hit`` is no lookup: torch logs it when it loads the FX graph
(Inductor's output) that an AOT-autograd cache entry carries in itself
(``BundledOutputCodeLoadable.post_compile`` in ``aot_autograd_result.py``, "always a
hit"), just before it logs that entry's ``aotautograd_cache_hit``.  Regional Inductor
stores its output so: the cold run logged one AOT-autograd miss and no FX-graph lookup for
it, the warm run one AOT-autograd hit and this record.  It is counted apart
(:func:`bundled`), with the hit that carried it (:func:`carrier`).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass

from ..model import CacheEvent, Compile

CACHE_RESULTS = ("hit", "miss", "bypass")
#: The cache name of ``fx_graph_bundled_cache_hit``: an FX graph an AOT-autograd entry carried.
BUNDLED = "fx_graph_bundled"
#: The cache whose hit carries it.
CARRIER = "aotautograd"


def lookups(compile_: Compile) -> list[CacheEvent]:
    """The compile's cache lookups: its cache records but the bundled FX graphs' loads."""
    return [e for e in compile_.cache_events if e.cache != BUNDLED]


def bundled(compile_: Compile) -> list[CacheEvent]:
    """The FX graphs loaded from inside the compile's AOT-autograd cache hits."""
    return [e for e in compile_.cache_events if e.cache == BUNDLED]


def carrier(compile_: Compile, event: CacheEvent) -> CacheEvent | None:
    """The AOT-autograd cache hit that carried a bundled FX graph: the compile's first one
    logged after it (torch logs the load, then the hit), if the log has it."""
    return next(
        (
            e
            for e in compile_.cache_events
            if e.cache == CARRIER and e.result == "hit" and e.line > event.line
        ),
        None,
    )


def cache_counts(compile_: Compile) -> dict[str, int]:
    """Lookups per result (``hit``/``miss``/``bypass``), results that occurred only."""
    counts = Counter(e.result for e in lookups(compile_))
    return {r: counts[r] for r in CACHE_RESULTS if counts[r]}


def cache_text(compile_: Compile) -> str:
    counts = cache_counts(compile_)
    return ", ".join(f"{n} {r}" for r, n in counts.items())


@dataclass
class CacheRow:
    compile: Compile
    cells: dict[str, str]  # cache name -> "hit", "miss ×2", ...


def cache_table(compiles: Iterable[Compile]) -> tuple[list[str], list[CacheRow]]:
    """Columns (caches in first-seen order) and one row per compile that looked a cache up."""
    caches: list[str] = []
    rows = []
    for c in compiles:
        if not lookups(c):
            continue
        per_cache: dict[str, Counter[str]] = {}
        for e in lookups(c):
            if e.cache not in caches:
                caches.append(e.cache)
            per_cache.setdefault(e.cache, Counter())[e.result] += 1
        cells = {
            cache: ", ".join(f"{r} ×{n}" if n > 1 else r for r, n in counts.items())
            for cache, counts in per_cache.items()
        }
        rows.append(CacheRow(c, cells))
    return caches, rows


def cache_totals(compiles: Iterable[Compile]) -> dict[str, int]:
    counts = Counter(e.result for c in compiles for e in lookups(c))
    return {r: counts[r] for r in CACHE_RESULTS if counts[r]}
