"""What the compile caches answered: lookups per result, per compile and per cache."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass

from ..model import Compile

CACHE_RESULTS = ("hit", "miss", "bypass")


def cache_counts(compile_: Compile) -> dict[str, int]:
    """Lookups per result (``hit``/``miss``/``bypass``), results that occurred only."""
    counts = Counter(e.result for e in compile_.cache_events)
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
        if not c.cache_events:
            continue
        per_cache: dict[str, Counter[str]] = {}
        for e in c.cache_events:
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
    counts = Counter(e.result for c in compiles for e in c.cache_events)
    return {r: counts[r] for r in CACHE_RESULTS if counts[r]}
