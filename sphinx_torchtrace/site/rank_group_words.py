"""What a group of ranks has in common, in words: the ranks section's line for each kind
of facts the model's checks group ranks by (:data:`~..trace.analyses.rank_groups.RankGroupFacts`).

The model says what the ranks logged (lookups, collectives, shapes); how much of it a
line shows (three compile ids, four collectives) is the page's choice, made here.
"""

from __future__ import annotations

from typing import NoReturn

from ..trace.analyses.rank_groups import (
    CacheLookups,
    CollectiveDiffers,
    Collectives,
    GraphsLogged,
    InputsDiffer,
    RankGroupFacts,
    ReferenceShapes,
    ShapesDiffer,
)

#: Collectives a line names before "and N more".
COLLECTIVES_SHOWN = 4
#: Compile ids a shapes line names, and differing inputs named for each.
COMPILE_IDS_SHOWN = 3
INPUTS_SHOWN = 3


def rank_group_words(facts: RankGroupFacts) -> str:
    """The line a group of ranks is shown with (``Ranks 0-2: ...``), without its ranks."""
    match facts:
        case CacheLookups():
            return _cache_lookups(facts)
        case GraphsLogged(graphs=0):
            return "nothing logged"
        case GraphsLogged():
            return f"{facts.graphs} graph{'' if facts.graphs == 1 else 's'} logged"
        case Collectives():
            return _collectives(facts.ops)
        case CollectiveDiffers():
            mine = "nothing" if facts.mine is None else facts.mine
            theirs = "nothing" if facts.theirs is None else facts.theirs
            return (
                f"collective {facts.index + 1} is {mine} "
                f"(rank {facts.first_rank}: {theirs}); {facts.count} in all"
            )
        case ReferenceShapes():
            return "the shapes the others are compared with"
        case ShapesDiffer():
            return _shapes(facts)
        case _:
            _unmatched(facts)


def _unmatched(facts: NoReturn) -> NoReturn:
    """Never called: mypy checks every kind is matched (``typing.assert_never`` is 3.11's)."""
    raise TypeError(f"no words for {facts!r}")


def _cache_lookups(facts: CacheLookups) -> str:
    if not facts.per_cache:
        return "no cache lookups"
    return "; ".join(
        f"{cache}: " + ", ".join(f"{n} {result}" for result, n in results)
        for cache, results in facts.per_cache
    )


def _collectives(ops: tuple[str, ...]) -> str:
    if not ops:
        return "no collectives"
    more = len(ops) - COLLECTIVES_SHOWN
    shown = ", ".join(ops[:COLLECTIVES_SHOWN]) + (f" and {more} more" if more > 0 else "")
    return f"{len(ops)} collective{'s' if len(ops) > 1 else ''}: {shown}"


def _shapes(facts: ShapesDiffer) -> str:
    said = [_inputs(d, facts.first_rank) for d in facts.compile_ids[:COMPILE_IDS_SHOWN]]
    more = len(facts.compile_ids) - COMPILE_IDS_SHOWN
    return "; ".join(said) + (f" and {more} more compile ids" if more > 0 else "")


def _inputs(differ: InputsDiffer, first_rank: int) -> str:
    """``[1/0] L_x_ f32[6, 16] (rank 0: f32[8, 16])``: the first inputs that differ."""
    changed = [f"{mine} (rank {first_rank}: {theirs})" for mine, theirs in differ.inputs]
    if differ.counts is not None:
        changed.append(f"{differ.counts[0]} inputs (rank {first_rank}: {differ.counts[1]})")
    return f"{differ.label} {', '.join(changed[:INPUTS_SHOWN])}"
