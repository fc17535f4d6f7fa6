"""Several runs of one program, in order: how each function's compile health moved.

A nightly job, or a project's releases, leave one trace per run.  Each function (a
frame, matched across runs as :mod:`.diff` matches two: file, function, occurrence;
ranks by number) becomes a row; each run a cell with the frame's status, its distinct
graph breaks, its recompiles and its compile time, and where the run kept a runtime
profile (``run --runtime``) how often its compiled code ran and how long a call took.
Pure data, no Sphinx: the ``torchtrace-trend`` directive and ``sphinx-torchtrace diff
A B C`` show it.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from ..analyses.compile_time import PHASE_WORDS
from ..analyses.naming import rank_number
from ..analyses.vllm import summary_text, vllm_view
from ..model import Trace
from ..runtime import rank_profiles
from .comparability import RunFacts, differences, run_facts
from .function_times import FunctionTimes, function_times
from .run_frames import FrameFacts, RunFunction, frame_runtime, frames_of
from .unread import unread

#: Rows a trend shows at most (functions x ranks); the rest are counted.
MAX_ROWS = 500
#: Runs a trend compares at most.
MAX_RUNS = 50


@dataclass(frozen=True)
class TrendCell:
    """One frame in one run; ``status`` None where the run has no such frame."""

    status: str | None = None
    graph_breaks: int = 0  # distinct breaks (reason and user location)
    recompiles: int = 0  # as the glance counts them (:func:`.compare.is_recompile`)
    seconds: float | None = None
    label: str | None = None  # its compile id in that run: "[0/*]"
    evidence: str | None = None  # log:line of its first compile
    runtime: tuple[int, float] | None = None  # calls, own µs (run --runtime)

    @property
    def present(self) -> bool:
        return self.status is not None

    def describe(self) -> str:
        """``break, 1 graph break, 2 recompiles, 1.20 s`` (``-`` where absent)."""
        if not self.present:
            return "-"
        parts = [str(self.status)]
        if self.graph_breaks:
            parts.append(f"{self.graph_breaks} graph break{'s' if self.graph_breaks > 1 else ''}")
        if self.recompiles:
            parts.append(f"{self.recompiles} recompile{'s' if self.recompiles > 1 else ''}")
        if self.seconds is not None:
            parts.append(f"{self.seconds:.2f} s")
        if self.runtime is not None:
            calls, own = self.runtime
            per_call = f" at {own / calls / 1000:.3f} ms a call" if calls else ""
            parts.append(f"ran {calls} time{'' if calls == 1 else 's'}{per_call}")
        return ", ".join(parts)


@dataclass(frozen=True)
class TrendRow:
    """A function (of one rank) across the runs."""

    rank: int
    key: RunFunction
    cells: tuple[TrendCell, ...]

    @property
    def label(self) -> str:
        return str(self.key)

    @property
    def seconds(self) -> list[float | None]:
        return [c.seconds for c in self.cells]


@dataclass
class Trend:
    """The runs, in order, and a row per function; ``setup`` says what changed in how
    consecutive runs were made (their PyTorch, Python, configs, ranks)."""

    labels: list[str]
    facts: list[RunFacts]
    rows: list[TrendRow]
    rows_left_out: int = 0
    setup: list[str] = field(default_factory=list)
    #: From each run to the next: the function whose compile time changed most (on the
    #: first rank both have), with its seconds by phase; None where nothing changed.
    time_changes: list[FunctionTimes | None] = field(default_factory=list)
    #: Each run's vLLM line (:func:`..analyses.vllm.summary_text`, its first rank), where
    #: any run logged vLLM's records: its pieces carry no compile ids, so no row shows them.
    vllm: list[str | None] = field(default_factory=list)

    @property
    def multi_rank(self) -> bool:
        return len({r.rank for r in self.rows}) > 1


def trend(
    traces: Sequence[Trace],
    labels: Sequence[str],
    rewrite: Callable[[str], str] | None = None,
) -> Trend:
    """The trend of ``traces`` (oldest first), each called by its label."""
    traces, labels = list(traces)[:MAX_RUNS], list(labels)[:MAX_RUNS]
    per_run: list[dict[tuple[int, RunFunction], FrameFacts]] = []
    order: dict[tuple[int, RunFunction], None] = {}
    for trace in traces:
        found: dict[tuple[int, RunFunction], FrameFacts] = {}
        for rank in trace.ranks:
            number = rank_number(trace, rank)
            profile = rank_profiles(trace.runtime, trace.ranks, rank)[0]
            for frame in frames_of(rank, rewrite):
                if profile is not None:
                    frame.runtime = frame_runtime(frame.compiles, profile)
                found[(number, frame.key)] = frame
                order.setdefault((number, frame.key), None)
        per_run.append(found)
    keys = sorted(order, key=lambda k: k[0])  # stable: first-seen order within a rank
    rows = [
        TrendRow(number, key, tuple(_cell(run.get((number, key))) for run in per_run))
        for number, key in keys[:MAX_ROWS]
    ]
    facts = [run_facts(t) for t in traces]
    setup = [
        f"{labels[i]} → {labels[i + 1]}: {d}"
        for i in range(len(facts) - 1)
        for d in differences(facts[i], facts[i + 1])
    ]
    changes = [_most_changed(traces[i], traces[i + 1]) for i in range(len(traces) - 1)]
    views = [vllm_view(t.ranks[0]) if t.ranks else None for t in traces]
    vllm = [summary_text(v) if v is not None else None for v in views]
    if not any(vllm):
        vllm = []
    return Trend(labels, facts, rows, max(0, len(keys) - MAX_ROWS), setup, changes, vllm)


def _most_changed(before: Trace, after: Trace) -> FunctionTimes | None:
    """The function whose compile time changed most from one run to the next, on the
    lowest rank number both runs logged."""
    ranks = {rank_number(after, r): r for r in after.ranks}
    for rank in sorted(before.ranks, key=lambda r: rank_number(before, r)):
        other = ranks.get(rank_number(before, rank))
        if other is not None:
            found = function_times(rank, other)
            return found[0] if found and found[0].change else None
    return None


def time_change_text(change: FunctionTimes) -> str:
    """``step (train.py) 1.20 s -> 2.40 s, most in Inductor lowering and passes (+1.10 s)``."""
    phase = change.most_changed_phase()
    where = f", most in {PHASE_WORDS.get(phase[0], phase[0])} ({phase[1]:+.2f} s)" if phase else ""
    return (
        f"{change.function} ({change.file}) {change.baseline_seconds:.2f} s -> "
        f"{change.new_seconds:.2f} s{where}"
    )


def unread_runs(traces: Sequence[Trace], labels: Sequence[str]) -> list[str]:
    """What of each run before the last two (the comparison reads those two itself) was
    not read, in :func:`.diff.unread`'s words, each run named by its label: a trend's gate
    never passes on a run it showed without reading it whole, the oldest included."""
    out: list[str] = []
    for trace, label in list(zip(traces, labels, strict=True))[:-2]:
        out += unread(trace, f"run {label}")
    return out


def _cell(facts: FrameFacts | None) -> TrendCell:
    if facts is None:
        return TrendCell()
    return TrendCell(
        status=facts.status,
        graph_breaks=facts.graph_breaks,  # as the glance counts them
        recompiles=facts.recompiles,
        seconds=facts.seconds,
        label=facts.label,
        evidence=facts.evidence(),
        runtime=facts.runtime,
    )


def trend_lines(result: Trend) -> list[str]:
    """The trend as plain lines, a block per function (what the command prints)."""
    lines = [f"trend over {len(result.labels)} runs: {', '.join(result.labels)}"]
    lines += [f"not like for like: {d}" for d in result.setup]
    for row in result.rows:
        rank = f"rank {row.rank}: " if result.multi_rank else ""
        lines.append(f"function {rank}{row.label}")
        for label, cell in zip(result.labels, row.cells, strict=True):
            lines.append(f"  {label}: {cell.describe()}")
    if result.rows_left_out:
        lines.append(f"and {result.rows_left_out} more functions")
    for label, line in zip(result.labels, result.vllm, strict=False):
        lines.append(f"vllm {label}: {line or 'no vLLM records'}")
    for i, change in enumerate(result.time_changes):
        if change is not None:
            step = f"{result.labels[i]} -> {result.labels[i + 1]}"
            lines.append(f"compile time {step} (noisy): {time_change_text(change)}")
    return lines
