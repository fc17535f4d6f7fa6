"""Status of a compile id over its attempts, as badges and tables show it: the worst of
its compiles' (a text log's) or the status their metrics make together (a trace's).

Metrics torch logged for a compile without its id (vLLM's ahead-of-time compile) count
as its own, as they do for its own status.  Each compile's own status, and the legend,
are the model's (:mod:`..compile_status`, set while its log is read).
"""

from __future__ import annotations

from ..compile_id import CompileId
from ..compile_status import combined_status, combined_text_status
from ..model import Compile, RankTrace, Status


def frame_status(rank: RankTrace, compile_id: CompileId) -> Status:
    """Status of ``[x/y]`` over all attempts and occurrences: what tlparse shows."""
    return _over(rank, rank.frame_compiles(compile_id))


def attempts_status(rank: RankTrace, compile_: Compile) -> Status:
    """Status of ``compile_``'s ``[x/y]`` over the attempts of its occurrence.

    What a badge for ``[x/y]`` shows: :func:`frame_status` within one occurrence (a
    repeat after ``torch._dynamo.reset()`` is another function under the same id).
    """
    return _over(rank, rank.attempts(compile_) or [compile_])


def status_over(rank: RankTrace, members: list[Compile]) -> Status:
    """The status of a compile id over its attempts: from their metrics, or for a text log
    (no metrics) from what its lines say."""
    return _over(rank, members)


def _over(rank: RankTrace, members: list[Compile]) -> Status:
    if rank.source == "torch_logs":
        return combined_text_status(members)
    return combined_status(m for c in members for m in (*c.metrics, *c.metrics_apart))
