"""Cache hits and misses, as the log records them."""

from __future__ import annotations

from ....trace import RankTrace
from ....trace.analyses.caches import bundled, cache_table, cache_totals, carrier
from ...blocks import Block, Emphasis, Paragraph, Section, Table
from ...words import _
from .view import Overview, Row


def section(view: Overview) -> list[Block]:
    if not any(c.cache_events for c in view.compiles):
        return []
    intro = Paragraph(
        [
            "PyTorch keeps compiled work in caches on disk: the FX graph cache holds Inductor's "
            "generated code, the AOTAutograd cache the traced forward and backward graphs. A ",
            Emphasis("hit"),
            " reuses an earlier result (fast), a ",
            Emphasis("miss"),
            " compiles from scratch and stores the result, and a ",
            Emphasis("bypass"),
            " means the graph could not be cached, so it is compiled every time.",
        ]
    )
    bodies = view.for_ranks(view.trace.ranks, lambda r: _caches_of(view, r))
    return [Section([_("Compile caches")], [intro, *bodies], anchor="compile-caches")]


def _caches_of(view: Overview, rank: RankTrace) -> list[Block]:
    return [*_lookups_of(view, rank), *_bundled_of(view, rank)]


def _bundled_of(view: Overview, rank: RankTrace) -> list[Block]:
    """The FX graphs loaded from inside AOT-autograd cache hits: said apart, not counted as
    lookups (what torch's record means: :mod:`...trace.analyses.caches`)."""
    loads = [(c, e) for c in rank.compiles for e in bundled(c)]
    if not loads:
        return []
    c, first = loads[0]
    hit = carrier(c, first)
    with_hit = (
        f"with the aotautograd_cache_hit at line {hit.line}"
        if hit is not None
        else "no AOT-autograd cache lookup logged for its entry"
    )
    compiles = [c for c in rank.compiles if bundled(c)]
    n = len(loads)
    return [
        Paragraph(
            [
                f"Besides: {n} FX graph{'s' if n != 1 else ''} loaded from inside "
                f"AOT-autograd cache entries (fx_graph_bundled_cache_hit, first at line "
                f"{first.line}, {with_hit}), in ",
                *view.links(compiles),
                ". torch logs this record when it loads the Inductor output that an "
                "AOT-autograd cache entry holds in itself (as regional Inductor's entries and "
                "vLLM's saved compiles do), just before that entry's hit where it was looked "
                "up: it is no lookup of the FX graph cache, so the lookups here do not count it.",
            ]
        )
    ]


def _lookups_of(view: Overview, rank: RankTrace) -> list[Block]:
    caches, rows = cache_table(rank.compiles)
    if not rows:
        return [Paragraph(["No cache lookups on this rank."])]
    totals = cache_totals(rank.compiles)
    in_all = ", ".join(f"{n} {result}" for result, n in totals.items())
    if len(totals) == 1:  # every lookup had the same result: one line, not a table of it
        ((result, n),) = totals.items()
        links = view.links([row.compile for row in rows])
        return [
            Paragraph(
                [
                    f"Every lookup was a {result}: {n} lookups in ",
                    ", ".join(caches),
                    f" by {len(rows)} compile{'s' if len(rows) != 1 else ''}: ",
                    *links,
                    ".",
                ]
            )
        ]
    cells: list[Row] = [
        [[view.link(row.compile)]] + [[row.cells.get(cache, "—")] for cache in caches]
        for row in rows
    ]
    table = Table(["Compile id", *caches], cells, classes=["torchtrace-cache"])
    return [Paragraph([f"In all: {in_all}."]), table]
