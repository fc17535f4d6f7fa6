"""How the ranks of a job differ: compile ids some ranks lack, the functions and statuses
of each id, cache patterns, graph shapes, collectives, schedules, estimated runtimes.

Ranks of one job usually compile the same code the same way; a difference is a common
cause of hangs (collectives in different graphs) and of uneven compile times.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from ..kept import Kept
from ..model import RankTrace, Trace
from .naming import compile_ids_of, function_name, rank_number
from .rank_groups import (
    SCHEDULE_ARTIFACTS,
    RankGroup,
    artifact_groups,
    cache_lookups,
    collective_groups,
    shape_groups,
)
from .status import status_over
from .timings import plausible


@dataclass
class MissingIds:
    """Compile ids that a set of ranks lacks while other ranks have them."""

    labels: list[str]
    missing_on: list[int]


@dataclass
class RuntimeSpread:
    """A compiled graph's estimated runtime (Inductor's estimate, summed over its ops) on
    the fastest and the slowest rank, as tlparse's graph runtime analysis gives it."""

    label: str
    fastest: int  # rank number
    fastest_ns: float
    slowest: int
    slowest_ns: float

    @property
    def delta_ns(self) -> float:
        return self.slowest_ns - self.fastest_ns


@dataclass
class StatusSplit:
    """One compile id with different statuses on different ranks (each rank's status over
    the id's attempts, as its page and the glance say it)."""

    label: str
    ranks_by_status: dict[str, list[int]]


@dataclass
class FunctionSplit:
    """One compile id naming different functions on different ranks: the ranks compiled
    different code under the same number, so its pages are not comparable."""

    label: str
    ranks_by_function: dict[str, list[int]]


@dataclass
class Divergence:
    missing_ids: list[MissingIds] = field(default_factory=list)
    cache_groups: list[RankGroup] = field(default_factory=list)  # empty when all agree
    status_splits: list[StatusSplit] = field(default_factory=list)
    function_splits: list[FunctionSplit] = field(default_factory=list)
    #: Ranks grouped by the input shapes their Dynamo graphs were compiled for; empty
    #: when all agree (ranks running graphs of different shapes often explain a hang).
    shape_groups: list[RankGroup] = field(default_factory=list)
    #: Ranks grouped by what inductor logged of each graph's distributed schedule
    #: (:data:`SCHEDULE_ARTIFACTS`), by artifact name; only names whose groups differ.
    schedule_groups: dict[str, list[RankGroup]] = field(default_factory=dict)
    #: Collectives parity: by compile id, ranks grouped by the collectives their graph
    #: issues, in order, with shapes and arguments; only compile ids whose groups differ.
    #: (Same kernel names in another order, or on other shapes, pass a schedule check.)
    collective_groups: dict[str, list[RankGroup]] = field(default_factory=dict)
    #: Each graph's estimated runtime on its fastest and slowest rank, where logged.
    runtimes: list[RuntimeSpread] = field(default_factory=list)

    @property
    def any(self) -> bool:
        return bool(
            self.missing_ids
            or self.cache_groups
            or self.status_splits
            or self.function_splits
            or self.shape_groups
            or self.schedule_groups
            or self.collective_groups
            or self.runtime_differs
        )

    @property
    def runtime_differs(self) -> bool:
        return any(s.delta_ns > 0 for s in self.runtimes)


def _known_labels(rank: RankTrace) -> list[str]:
    seen: list[str] = []
    for c in rank.compiles:
        if not c.id.is_unknown and c.label not in seen:
            seen.append(c.label)
    return seen


def divergence(trace: Trace) -> Divergence:
    """How the ranks of a job differ: compile ids, cache hit/miss patterns, statuses,
    graph shapes, collectives, schedules.

    Ranks of one job usually compile the same code the same way; a difference
    is a common cause of hangs (collectives in different graphs) and of uneven
    compile times (one rank missing the cache).  Reading a thousand ranks' graphs costs
    seconds, and the glance, the overview and the directive's note all ask: the answer
    for the traces asked last is kept (by identity, a weak reference telling a live
    trace from one whose ``id()`` was reused).
    """
    return _DIVERGENCE(trace)


def _divergence(trace: Trace) -> Divergence:
    result = Divergence()
    if not trace.is_multi_rank:
        return result
    numbers = [rank_number(trace, r) for r in trace.ranks]
    labels = {n: _known_labels(r) for n, r in zip(numbers, trace.ranks, strict=True)}
    union: list[str] = []
    for n in numbers:
        union.extend(label for label in labels[n] if label not in union)
    by_missing: dict[tuple[int, ...], list[str]] = {}
    for label in union:
        missing = tuple(n for n in numbers if label not in labels[n])
        if missing:
            by_missing.setdefault(missing, []).append(label)
    result.missing_ids = [MissingIds(ids, list(m)) for m, ids in by_missing.items()]

    patterns: dict[tuple[tuple[str, str, str], ...], list[int]] = {}
    for n, rank in zip(numbers, trace.ranks, strict=True):
        pattern = tuple((c.label, e.cache, e.result) for c in rank.compiles for e in c.cache_events)
        patterns.setdefault(pattern, []).append(n)
    if len(patterns) > 1:
        result.cache_groups = [RankGroup(r, cache_lookups(p)) for p, r in patterns.items()]

    statuses: dict[str, dict[str, list[int]]] = {}
    functions: dict[str, dict[str, list[int]]] = {}
    for n, rank in zip(numbers, trace.ranks, strict=True):
        for label, attempts in compile_ids_of(rank).items():
            status = str(status_over(rank, attempts))
            statuses.setdefault(label, {}).setdefault(status, []).append(n)
            name = function_name(attempts[0])
            if name is not None:
                functions.setdefault(label, {}).setdefault(name, []).append(n)
    result.status_splits = [StatusSplit(label, s) for label, s in statuses.items() if len(s) > 1]
    result.function_splits = [
        FunctionSplit(label, f) for label, f in functions.items() if len(f) > 1
    ]
    result.shape_groups = shape_groups(numbers, trace.ranks)
    for name, signature in SCHEDULE_ARTIFACTS.items():
        groups = artifact_groups(numbers, trace.ranks, name, signature)
        if groups:
            result.schedule_groups[name] = groups
    result.collective_groups = collective_groups(numbers, trace.ranks)
    result.runtimes = _runtime_spreads(numbers, trace.ranks)
    return result


#: The divergences of the few traces a build asks about at once.
_DIVERGENCE: Kept[Trace, Divergence] = Kept(_divergence)

#: What ranks can differ in, as keys (the pages say each in words), in the overview's order;
#: the schedule artifacts of :data:`SCHEDULE_ARTIFACTS` follow by their torch names.
DIVERGENCE_ASPECTS = (
    "compile_ids",
    "functions",
    "statuses",
    "cache_patterns",
    "graph_shapes",
    "collectives_parity",
    "runtime_estimates",
)


def diverging_aspects(d: Divergence) -> list[str]:
    """What the ranks differ in: keys of :data:`DIVERGENCE_ASPECTS`, then the names of the
    schedule artifacts whose sequences differ."""
    found = (
        d.missing_ids,
        d.function_splits,
        d.status_splits,
        d.cache_groups,
        d.shape_groups,
        d.collective_groups,
        d.runtime_differs,
    )
    return [aspect for aspect, f in zip(DIVERGENCE_ASPECTS, found, strict=True) if f] + list(
        d.schedule_groups
    )


#: An op's estimated runtime past this (a day, in nanoseconds) is no estimate: left out.
MAX_RUNTIME_NS = 86_400e9


def _runtime_spreads(numbers: list[int], ranks: list[RankTrace]) -> list[RuntimeSpread]:
    """Each compile id's estimated runtime (``inductor_runtime_and_tensor_meta``, summed
    over its ops) on its fastest and slowest rank."""
    totals: dict[str, list[tuple[float, int]]] = {}
    for n, rank in zip(numbers, ranks, strict=True):
        for c in rank.compiles:
            estimate = None
            for artifact in c.artifacts_named("inductor_runtime_and_tensor_meta"):
                ops = (artifact.json_object() or {}).get("ops") if artifact.size else None
                if isinstance(ops, list):  # nanoseconds a number can hold: never a float()
                    estimate = (estimate or 0.0) + sum(  # of a 400-digit integer, never NaN
                        ns
                        for op in ops
                        if isinstance(op, dict)
                        and (ns := plausible(op.get("estimated_runtime_ns"), MAX_RUNTIME_NS))
                        is not None
                    )
            if estimate is not None:
                totals.setdefault(c.label, []).append((estimate, n))
    spreads = []
    for label, values in totals.items():
        if len(values) < 2:
            continue
        low, high = min(values), max(values)
        spreads.append(RuntimeSpread(label, low[1], low[0], high[1], high[0]))
    return spreads
