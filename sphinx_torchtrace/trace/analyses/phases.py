"""How long compiling took, phase by phase: the figures torch logs in its compilation
metrics, and its own chromium timers.  A number no compile could have logged (negative,
infinite, 400 digits) counts as not logged.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from ..model import Compile, RankTrace
from .naming import metrics_data
from .timings import MAX_SECONDS, EventTime, phase_times_of, plausible, read_events


def _seconds(value: Any) -> float | None:
    return plausible(value, MAX_SECONDS)


def compile_seconds(compile_: Compile) -> float | None:
    return _seconds(metrics_data(compile_).get("entire_frame_compile_time_s"))


@dataclass(frozen=True)
class TimePhase:
    """A compile-time figure torch logs: where it is (metrics kind and key), under a stable
    key.  The pages name it in words (``site/phase_words.py``), the diff JSON by its own
    published names (``comparing/json_form.py``)."""

    key: str  # "entire_frame"
    event: str  # the metrics record's: "compilation_metrics" or "bwd_compilation_metrics"
    metric: str  # "entire_frame_compile_time_s"


#: The compile-time figures torch logs, in pipeline order.
TIME_PHASES = (
    TimePhase("entire_frame", "compilation_metrics", "entire_frame_compile_time_s"),
    TimePhase("dynamo_before_restart", "compilation_metrics", "dynamo_time_before_restart_s"),
    TimePhase("backend", "compilation_metrics", "backend_compile_time_s"),
    TimePhase("inductor", "compilation_metrics", "inductor_compile_time_s"),
    TimePhase("code_gen", "compilation_metrics", "code_gen_time_s"),
    TimePhase("backward_inductor", "bwd_compilation_metrics", "inductor_compile_time_s"),
    TimePhase("backward_code_gen", "bwd_compilation_metrics", "code_gen_time_s"),
)


@dataclass
class PhaseTotal:
    phase: str  # a key of TIME_PHASES
    seconds: float
    compiles: int  # compiles that logged this figure
    slowest: Compile | None
    slowest_seconds: float


def time_totals(compiles: Iterable[Compile]) -> list[PhaseTotal]:
    """Sum, count and slowest compile of each compile-time figure (phases never logged left out)."""
    compiles = list(compiles)
    out = []
    for phase in TIME_PHASES:
        total, n, slowest, slowest_s = 0.0, 0, None, -1.0
        for c in compiles:
            values = [
                v
                for m in c.metrics
                if m.event == phase.event and isinstance(m.data, dict)
                if (v := _seconds(m.data.get(phase.metric))) is not None
            ]
            if not values:
                continue
            value = sum(values)
            total += value
            n += 1
            if value > slowest_s:
                slowest, slowest_s = c, value
        if n and (total > 0 or phase.metric == "entire_frame_compile_time_s"):  # zeros: noise
            out.append(PhaseTotal(phase.key, total, n, slowest, slowest_s))
    return out


def chromium_phase_times(rank: RankTrace, limit: int = 12) -> list[EventTime]:
    """Where compile time went by torch's own timers: chromium ``B``/``E`` pairs and ``X`` events.

    Nested events of the same name are counted once (the outermost), so a
    recursive timer does not double its time.  Reading every event back from the log
    is most of the cost: :func:`chromium_events_json` counts them as it writes them.
    """
    known = phase_times_of(rank)
    if known is None:  # one reading of the events gives both: see timings.read_events
        read_events(rank)
        known = phase_times_of(rank) or []
    return known[:limit]
