"""The numbers a reader wants first: what compiled, how often, what broke, what it cost,
for the overview's glance and the ``summary`` command, and each rank's row, counted the
same way so that the ranks' rows add up to the glance's.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field

from ..model import Compile, RankTrace, Trace
from .caches import cache_totals
from .compare import hit_limit, is_compiled_again, is_refused
from .divergence import Divergence, divergence
from .failures import failure_groups
from .graph_breaks import EventGroup, break_counts
from .naming import compile_ids_of, functions_of, rank_number
from .phases import compile_seconds
from .recompiles import RecompiledFunction, recompiled_functions
from .status import status_over


@dataclass
class RankRow:
    """A rank's figures, counted as the glance counts them (compile ids, each with its
    status over its attempts), so that the ranks' rows add up to the glance's."""

    number: int
    rank: RankTrace
    compile_ids: int
    attempts: int
    statuses: dict[str, int]  # status -> compile ids
    seconds: float | None  # None when no compilation logged its time
    chromium_events: int


def rank_rows(trace: Trace) -> list[RankRow]:
    rows = []
    for rank in trace.ranks:
        known = [c for c in rank.compiles if not c.id.is_unknown]
        ids = compile_ids_of(rank)
        times = [s for c in known if (s := compile_seconds(c)) is not None]
        total = sum(times) if times else None
        statuses = Counter(str(status_over(rank, group)) for group in ids.values())
        rows.append(
            RankRow(
                rank_number(trace, rank),
                rank,
                len(ids),
                len(known),
                dict(statuses),
                total,
                len(rank.chromium_events),
            )
        )
    return rows


@dataclass
class Triage:
    """The numbers a reader wants before anything else, for the overview's first screen and
    the ``summary`` command: what compiled, how often, what broke, what it cost.

    Graph breaks and errors are the events of :func:`.graph_breaks.break_events`, each
    once however many records torch wrote for it; the failures table shows the same list.
    """

    ranks: int
    frames: int  # functions compiled: by frame id and name, per rank, summed (a reset reuses ids)
    frames_per_rank: tuple[int, int]  # (fewest, most) of them on one rank
    compile_ids: int  # distinct compile ids (repeats after a reset counted apart)
    attempts: int  # compilations logged, restarted attempts included
    statuses: dict[str, int]  # status -> compile ids, over the ids' attempts' worst
    graph_breaks: int  # graph breaks that did not stop the frame (one event each)
    graph_break_reasons: int  # distinct places among them: rows of the failures table
    errors: int  # compile errors, a graph break that made torch skip the frame included
    distinct_errors: int  # rows of the failures table (kind, place, what followed)
    recompiled: list[RecompiledFunction]  # per function that recompiled (all ranks)
    #: The same, each function once however many ranks recompiled it.
    recompiled_by_function: list[FunctionRecompiles]
    cache: dict[str, int]  # hit / miss / bypass lookups
    compile_seconds: float | None  # whole-frame compile time summed; None when never logged
    divergence: Divergence | None  # for several ranks
    #: ``ok`` compile ids that logged a graph break torch resumed from without a restart
    #: (a data-dependent jump): ok by their metrics, split by a break all the same.
    ok_with_breaks: int = 0
    #: Compiles of a function after a version that failed, with no reason logged: compiled
    #: again, not recompiled (:func:`.compare.is_compiled_again`).
    compiled_again: int = 0
    #: Compiles torch refused past the recompile limit (no new version, not recompiles),
    #: whether the call ran on or raised ``FailOnRecompileLimitHit``.
    limit_hits: list[Compile] = field(default_factory=list)
    #: Compiles refused under ``error_on_recompile`` (``RecompileError`` raised instead).
    error_on_recompile: list[Compile] = field(default_factory=list)
    graph_break_types: int = 0  # distinct types of graph break (:class:`BreakCounts`)
    error_types: int = 0  # distinct types of compile error
    #: (distinct places named in the user's code, events with no place logged)
    graph_break_places: tuple[int, int] = (0, 0)
    restarts: int = 0  # restarts of the analysis that were no graph break
    error_places: tuple[int, int] = (0, 0)
    #: (rank number, its compile seconds) of the rank that spent the most: what held the
    #: job up, where a sum over the ranks is not a time anyone waited; None for one rank.
    slowest: tuple[int, float] | None = None

    @property
    def recompiles(self) -> int:
        return sum(len(fn.recompiles) for fn in self.recompiled)


@dataclass
class FunctionRecompiles:
    """One function's recompiles over the ranks that recompiled it: on a job's ranks, the
    same function recompiles on each, and is one function to a reader, not one per rank."""

    shown: str  # as :attr:`RecompiledFunction.shown`
    per_rank: list[int]  # recompiles on each rank that recompiled it


def triage(trace_or_rank: Trace | RankTrace) -> Triage:
    """The first-screen figures of a whole trace (all ranks) or of one rank."""
    ranks = trace_or_rank.ranks if isinstance(trace_or_rank, Trace) else [trace_or_rank]
    compile_ids = attempts = ok_with_breaks = compiled_again = 0
    limit_hits: list[Compile] = []
    error_on_recompile: list[Compile] = []
    per_rank: list[int] = []
    groups: list[EventGroup] = []
    statuses: Counter[str] = Counter()
    recompiled: list[RecompiledFunction] = []
    by_function: dict[tuple[str, int], FunctionRecompiles] = {}
    total, timed = 0.0, False
    spent: list[tuple[float, int]] = []  # (compile seconds, -position) of each timed rank
    for position, rank in enumerate(ranks):
        known = [c for c in rank.compiles if not c.id.is_unknown]
        attempts += len(known)
        per_rank.append(len(functions_of(rank, known)))
        ids = compile_ids_of(rank)  # as the ranks table and the checks count them
        compile_ids += len(ids)
        for group in ids.values():
            status = str(status_over(rank, group))
            statuses[status] += 1
            if status == "ok" and any(f.kind == "graph_break" for c in group for f in c.failures):
                ok_with_breaks += 1
        groups += failure_groups(known)
        own = [fn for fn in recompiled_functions(rank) if fn.recompiles]
        compiled_again += sum(is_compiled_again(rank, c) for c in known)
        refused = [c for c in known if not c.id.attempt and is_refused(c)]
        limit_hits += [c for c in refused if hit_limit(c)]
        error_on_recompile += [c for c in refused if not hit_limit(c)]
        recompiled.extend(own)
        nth: Counter[str] = Counter()  # two functions one rank shows alike stay two
        for fn in own:
            nth[fn.shown] += 1
            key = (fn.shown, nth[fn.shown])
            by_function.setdefault(key, FunctionRecompiles(fn.shown, [])).per_rank.append(
                len(fn.recompiles)
            )
        times = [s for c in known if (s := compile_seconds(c)) is not None]
        for seconds in times:
            total, timed = total + seconds, True
        if times:
            spent.append((sum(times), -position))
    counts = break_counts(groups)  # a break on several ranks is one distinct break
    all_compiles = [c for r in ranks for c in r.compiles]
    several = isinstance(trace_or_rank, Trace) and trace_or_rank.is_multi_rank
    multi = trace_or_rank if several and isinstance(trace_or_rank, Trace) else None
    slowest = None
    if multi is not None and spent:
        seconds, position = max(spent)  # the first such rank, where several spent as much
        slowest = (rank_number(multi, multi.ranks[-position]), seconds)
    return Triage(
        ranks=len(ranks),
        frames=sum(per_rank),
        frames_per_rank=(min(per_rank, default=0), max(per_rank, default=0)),
        compile_ids=compile_ids,
        attempts=attempts,
        statuses=dict(statuses),
        graph_breaks=counts.graph_breaks,
        graph_break_reasons=counts.distinct_breaks,
        errors=counts.errors,
        distinct_errors=counts.distinct_errors,
        ok_with_breaks=ok_with_breaks,
        compiled_again=compiled_again,
        limit_hits=limit_hits,
        error_on_recompile=error_on_recompile,
        graph_break_types=counts.break_types,
        error_types=counts.error_types,
        graph_break_places=(counts.break_places, counts.break_unplaced),
        restarts=counts.restarts,
        error_places=(counts.error_places, counts.error_unplaced),
        recompiled=recompiled,
        recompiled_by_function=list(by_function.values()),
        cache=cache_totals(all_compiles),
        compile_seconds=total if timed else None,
        divergence=divergence(multi) if multi is not None else None,
        slowest=slowest,
    )
