"""Autotuning on a compile's page and at a glance: what Inductor benchmarked, for how long,
and the winner where torch logged it (:mod:`...trace.analyses.autotuning`)."""

from __future__ import annotations

from ...trace.analyses.autotuning import (
    METRIC,
    NOTABLE_SHARE,
    Benchmark,
    CompileAutotuning,
    autotuning,
    of_compile,
)
from ..blocks import Block, Code, Inline, Inlines, ObjectLink, Paragraph, Section, Table, joined
from ..plan import FramePlan, TracePlan
from ..words import _

#: Operations listed on a compile's page, at most (a huge model benchmarks hundreds).
ROWS = 200
#: Compiles the glance names, at most.
GLANCE_COMPILES = 4

NO_STATS = (
    "The log does not name the winners: torch logs the choices' stats only with "
    "max_autotune_report_choices_stats on."
)


def autotuning_section(plan: TracePlan, frame: FramePlan) -> Section | None:
    """The compile's autotuning: its total and share, and a row per benchmark."""
    entry = of_compile(frame.rank, frame.compile)
    if entry is None:
        return None
    blocks: list[Block] = [Paragraph(_intro(entry))]
    if entry.benchmarks:
        rows = [_row(b) for b in entry.benchmarks[:ROWS]]
        headings = [
            _("Operation"),
            _("Input shapes"),
            _("Choices"),
            _("Winner"),
            _("Winner's time"),
            _("Benchmarking"),
            _("Precompiling"),
            _("Log lines"),
        ]
        blocks.append(Table(headings, rows, [2, 4, 1, 3, 2, 2, 2, 2]))
        if len(entry.benchmarks) > ROWS:
            blocks.append(Paragraph([f"The first {ROWS} of {len(entry.benchmarks)} benchmarks."]))
        if all(b.best_kernel is None for b in entry.benchmarks):
            blocks.append(Paragraph([NO_STATS]))
    return Section([_("Autotuning")], blocks, anchor="autotuning")


def _intro(entry: CompileAutotuning) -> list[Inline]:
    n = len(entry.benchmarks)
    spent: list[Inline] = [f"{entry.seconds:.3f} s of autotuning"]
    if entry.total_seconds is not None and entry.total_line is not None:
        spent += [" (", Code(METRIC), f", line {entry.total_line})"]
    else:
        spent.append(" (its benchmarks' spans added up: the metric is not logged)")
    share = entry.share
    if share is not None and entry.compile_seconds is not None:
        spent.append(f", {share:.0%} of this compile's {entry.compile_seconds:.3f} s")
    if not n:
        return [*spent, "; the log records no benchmark span for it."]
    what = f"Inductor benchmarked {n} operation{'s' if n > 1 else ''} for this compile: "
    return [what, *spent, "."]


def _row(b: Benchmark) -> list[Inlines]:
    return [
        [Code(b.operation)],
        [Code(b.shapes)] if b.shapes else ["—"],
        [str(b.choices)] if b.choices is not None else ["—"],
        [Code(b.best_kernel)] if b.best_kernel else ["not logged"],
        [f"{b.best_ms:.4f} ms"] if b.best_ms is not None else ["—"],
        [f"{b.seconds:.3f} s"],
        [f"{b.precompile_seconds:.3f} s"] if b.precompile_seconds is not None else ["—"],
        [f"{b.start_line}–{b.line}"],
    ]


def glance_line(plan: TracePlan) -> list[Inline] | None:
    """``Autotuning:`` for the glance, where it took a notable share of a compile's time
    (:data:`NOTABLE_SHARE` or more); None elsewhere."""
    parts: list[Inlines] = []
    for frame in plan.frames:
        if frame.same_as is not None:  # a rank that repeats another: said once
            continue
        entry = next((e for e in autotuning(frame.rank) if e.compile is frame.compile), None)
        if entry is None or not entry.notable or entry.share is None:
            continue
        parts.append(
            [
                f"{entry.seconds:.1f} s ({entry.share:.0%}) in ",
                ObjectLink("frame", frame.name),
            ]
        )
    if not parts:
        return None
    line: list[Inline] = [
        _("Autotuning:"),
        " ",
        *joined(parts[:GLANCE_COMPILES], "; "),
    ]
    if len(parts) > GLANCE_COMPILES:
        line.append(f"; and {len(parts) - GLANCE_COMPILES} more compiles")
    line.append(f" (compiles that spent {NOTABLE_SHARE:.0%} or more of their time autotuning)")
    return line
