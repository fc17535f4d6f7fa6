"""What ranks differ in, in words: the pages', the warning's and ``summary``'s name for
each aspect the model tells apart (:data:`~..trace.analyses.divergence.DIVERGENCE_ASPECTS`, and
the schedule artifacts compared across ranks)."""

from __future__ import annotations

from collections.abc import Iterable

#: Each aspect of divergence, as a sentence names it ("the ranks diverge in ...").
DIVERGENCE_WORDS: dict[str, str] = {
    "compile_ids": "compile ids",
    "functions": "functions",
    "statuses": "statuses",
    "cache_patterns": "cache patterns",
    "graph_shapes": "graph shapes",
    "collectives_parity": "collectives parity",
    "runtime_estimates": "runtime estimates",
    "inductor_collective_schedule": "collective schedules",
    "inductor_runtime_and_tensor_meta": "tensor metadata",
    "graph_execution": "graph execution order",
}


def divergence_words(aspects: Iterable[str]) -> list[str]:
    """The words for each aspect (an artifact this table does not know: its torch name)."""
    return [DIVERGENCE_WORDS.get(aspect, aspect) for aspect in aspects]
