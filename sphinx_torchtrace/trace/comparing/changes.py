"""What changed between two runs, as data: a figure on each side (:class:`Change`), each
frame (:class:`FrameDiff`), each rank (:class:`RankDiff`), the whole comparison
(:class:`TraceDiff`).

The model alone, so pages, the command line and CI read one set of facts: it is built by
:mod:`.diff` and :mod:`.matching`, judged by :mod:`.regressions` and said by
:mod:`.text_report` and :mod:`.json_form`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

from ..analyses.phases import TIME_PHASES
from .comparability import RunFacts
from .function_times import FunctionTimes
from .run_frames import BreakSite, FrameFacts, RunFunction
from .vllm_change import VllmChange


@dataclass
class Change:
    """A figure in both runs (None where a run has none)."""

    baseline: Any
    new: Any

    @property
    def changed(self) -> bool:
        return bool(self.baseline != self.new)


@dataclass
class FrameDiff:
    """One frame of either run, and what changed in it; ``baseline`` or ``new`` None if absent."""

    key: RunFunction
    baseline: FrameFacts | None
    new: FrameFacts | None
    status: Change
    versions: Change
    recompile_reasons_new: list[str]
    guards_added: list[str]
    guards_removed: list[str]
    graph_ops: Change
    graph_nodes: Change
    graph_diff: str  # unified diff of the Dynamo graphs ("" when the same or not in both)
    kernel_count: Change
    kernels_added: list[str]
    kernels_removed: list[str]
    kernel_kinds: Change  # {kind: count}
    seconds: Change  # noisy
    cache: Change
    #: How sure the pairing is: ``matched`` (one frame of this file and function on each
    #: side), ``ambiguous`` (several: paired by their order, ``candidates`` the others),
    #: ``new`` or ``gone``.
    match: str = "matched"
    candidates: list[str] = field(default_factory=list)
    #: (calls, own µs) on each side where a runtime profile was kept (noisy, not a change).
    runtime: Change = field(default_factory=lambda: Change(None, None))

    @property
    def runtime_ratio(self) -> float | None:
        """The new run's time per call over the baseline's, where both ran it: not a
        finite number where the times cannot be compared (a baseline of no time, a time
        past any number; :func:`.regressions.uncompared` names it)."""
        old, new = self.runtime.baseline, self.runtime.new
        if not old or not new or not old[0] or not new[0] or old[1] == new[1] == 0:
            return None  # not run on a side, or no time of its own on either
        return _ratio(new[1] / new[0], old[1] / old[0])

    @property
    def is_new(self) -> bool:
        return self.baseline is None

    @property
    def is_gone(self) -> bool:
        return self.new is None

    @property
    def cache_only(self) -> bool:
        """In both runs, and only its cache lookups differ (a warm cache: not about the code)."""
        return (
            self.cache.changed
            and not self.is_new
            and not self.is_gone
            and not any(
                c.changed
                for c in (
                    self.status,
                    self.versions,
                    self.graph_ops,
                    self.graph_nodes,
                    self.kernel_count,
                    self.kernel_kinds,
                )
            )
            and not (
                self.recompile_reasons_new
                or self.guards_added
                or self.guards_removed
                or self.graph_diff
                or self.kernels_added
                or self.kernels_removed
            )
        )

    @property
    def changed(self) -> bool:
        """Anything but compile time differs (time is noise unless a threshold says otherwise)."""
        return (
            self.is_new
            or self.is_gone
            or any(
                c.changed
                for c in (
                    self.status,
                    self.versions,
                    self.graph_ops,
                    self.graph_nodes,
                    self.kernel_count,
                    self.kernel_kinds,
                    self.cache,
                )
            )
            or bool(self.recompile_reasons_new or self.guards_added or self.guards_removed)
            or bool(self.graph_diff or self.kernels_added or self.kernels_removed)
        )


@dataclass
class PhaseChange:
    """Seconds of one compile-time phase, summed over a rank's compiles (noisy)."""

    phase: str  # a key of TIME_PHASES; the JSON says it by :data:`.json_form.JSON_PHASE_NAMES`
    baseline: float | None
    new: float | None

    @property
    def ratio(self) -> float | None:
        """New over baseline seconds where both runs have them, 0 s in both aside: not a
        finite number where they cannot be compared (:func:`.regressions.uncompared` names it)."""
        if self.baseline is None or self.new is None or self.baseline == self.new == 0:
            return None
        return _ratio(self.new, self.baseline)


def _ratio(new: float, old: float) -> float:
    """``new / old``; NaN or infinite where it is no number (0 or a NaN in the baseline,
    a time past any float): never a ratio a gate could read as small."""
    try:
        return float(new) / float(old)
    except ZeroDivisionError:
        return math.inf if new > 0 else math.nan
    except (OverflowError, TypeError, ValueError):
        return math.nan


@dataclass
class RankDiff:
    """The frames of one rank number in both runs."""

    rank: int
    frames: list[FrameDiff]
    breaks_new: list[BreakSite]
    breaks_fixed: list[BreakSite]
    errors_new: list[BreakSite]
    errors_fixed: list[BreakSite]
    times: list[PhaseChange]
    cache: Change  # {hit/miss/bypass: lookups}
    #: Each function's compile seconds by phase in both runs, the most changed first.
    function_times: list[FunctionTimes] = field(default_factory=list)
    #: vLLM's own figures in each run, where either logged vLLM's records.
    vllm: VllmChange | None = None
    #: The other ranks this comparison stands for: in each run they logged what this rank
    #: did (a class of alike ranks, rank numbers, metrics and times aside).
    alike: list[int] = field(default_factory=list)

    @property
    def frames_new(self) -> list[FrameDiff]:
        return [f for f in self.frames if f.is_new]

    @property
    def frames_gone(self) -> list[FrameDiff]:
        return [f for f in self.frames if f.is_gone]

    @property
    def changed_frames(self) -> list[FrameDiff]:
        return [f for f in self.frames if f.changed]

    @property
    def total_seconds(self) -> PhaseChange | None:
        return next((t for t in self.times if t.phase == TIME_PHASES[0].key), None)

    @property
    def changed(self) -> bool:
        return bool(
            self.changed_frames
            or self.breaks_new
            or self.breaks_fixed
            or self.errors_new
            or self.errors_fixed
            or self.cache.changed
        )


@dataclass
class TraceDiff:
    """Two runs compared: per paired rank a :class:`RankDiff`, and the ranks of one run only.

    ``setup`` says what differs in how the runs were made (:mod:`.comparability`);
    ``nothing_compared`` why no frame could be compared (no rank or no frame in common),
    ``unread`` what of the inputs the comparison did not read: a CI job must not pass on
    either.  A rank only the new run has is compared with nothing (``new_only``): all it
    logged is new.
    """

    ranks: list[RankDiff]
    ranks_only_baseline: list[int] = field(default_factory=list)
    ranks_only_new: list[int] = field(default_factory=list)
    #: Each rank only the new run has (unless ``--ranks`` left it out), compared with an
    #: empty log: its errors and graph breaks are new ones.
    new_only: list[RankDiff] = field(default_factory=list)
    #: What the comparison did not read, in the tool's words: ranks of the baseline the new
    #: run lacks, logs of a folder left out, records that did not parse.
    unread: list[str] = field(default_factory=list)
    baseline_facts: RunFacts | None = None
    new_facts: RunFacts | None = None
    setup: list[str] = field(default_factory=list)
    nothing_compared: str | None = None

    @property
    def frames_matched(self) -> int:
        return sum(1 for r in self.ranks for f in r.frames if f.baseline and f.new)

    @property
    def unchanged(self) -> bool:
        """Nothing but compile time differs: the page and the command say so in one line."""
        return not (
            self.ranks_only_baseline
            or self.ranks_only_new
            or self.unread
            or any(r.changed for r in self.ranks)
        )


def frame_evidence(f: FrameDiff, last: bool = False) -> tuple[tuple[str, str], ...]:
    """The frame's records on each side that has it (its last compile's with ``last``)."""
    out = []
    if f.baseline is not None:
        out.append(("baseline", f.baseline.evidence(last)))
    if f.new is not None:
        out.append(("new", f.new.evidence(last)))
    return tuple(out)
