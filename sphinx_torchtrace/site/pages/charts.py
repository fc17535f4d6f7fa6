"""The compile-time charts of one rank, as blocks: where the time went, and when compiles ran.

The overview shows these under its "Compile time charts" heading (one tab per rank).
Each picture is a :class:`~..blocks.Chart` carrying the numbers the render layer draws,
with a table of the same numbers for builders that cannot show SVG.
"""

from __future__ import annotations

from collections.abc import Sequence

from ...trace import RankTrace
from ...trace.analyses.timings import (
    STAGES,
    CompileTimeRow,
    TimelineSpan,
    bounded_rows,
    compile_time_rows,
    timeline_rows,
    timeline_spans,
    used_stages,
)
from ..blocks import Block, Chart, Code, Emphasis, Paragraph, Strong, Table
from ..plan import TracePlan

#: The timeline's table lists at most this many compiles (the picture shows all of them).
MAX_TABLE_SPANS = 200

NO_TIMING = "No compilation logged its compile time."


def charts_blocks(plan: TracePlan, rank: RankTrace) -> list[Block]:
    """The charts of ``rank``: a sentence when no compile logged its time.

    ``plan`` is what every view takes; the charts need only the rank so far.
    """
    rows = bounded_rows(compile_time_rows(rank))
    spans = timeline_spans(rank)
    blocks: list[Block] = []
    if not rows and not spans:
        blocks.append(Paragraph([NO_TIMING]))
    if rows:
        blocks += compile_time_blocks(rows)
    if spans:
        blocks += timeline_blocks(spans)
    return blocks


def compile_time_blocks(rows: Sequence[CompileTimeRow]) -> list[Block]:
    """A stacked bar per compile (``rows`` already bounded), or a table of the seconds."""
    intro: list[str | Code] = [
        "One bar per compilation, split into its stages: Dynamo traces the Python bytecode, "
        "AOT autograd traces the joint forward and backward graph, Inductor lowers it, code "
        "generation writes and compiles the kernels. The backward graph is compiled later, "
        "at the first ",
        Code("backward()"),
        ".",
    ]
    if rows and rows[-1].source == "aggregate":
        intro.append(
            f" The {len(rows) - 1} slowest compilations are drawn; the last bar sums the "
            f"other {rows[-1].compiles}."
        )
    used = used_stages(rows)
    table = Table(
        header=["Compile", "Function", *(STAGES[i] for i in used), "Total"],
        rows=[
            [
                [row.label],
                [row.name or "—"],
                *([_seconds(row.stages[i])] for i in used),
                [_seconds(row.total)],
            ]
            for row in rows
        ],
    )
    return [
        _rubric("Where the time went"),
        Paragraph(intro),
        Chart(
            "compile-times",
            list(rows),
            "Compile time per compilation, by stage",
            fallback=[_caption("Compile time per compilation, in seconds"), table],
        ),
    ]


def timeline_blocks(spans: Sequence[TimelineSpan]) -> list[Block]:
    """A Gantt chart of the compiles, one row per frame, or a table of their times."""
    shown = spans[:MAX_TABLE_SPANS]
    table = Table(
        header=["Compile", "Function", "Pass", "Start", "End", "Duration"],
        rows=[
            [
                [span.label],
                [span.name or "—"],
                ["backward" if span.kind == "backward" else "whole compile"],
                [_seconds(span.start)],
                [_seconds(span.end)],
                [_seconds(span.duration)],
            ]
            for span in shown
        ],
    )
    fallback: list[Block] = [
        _caption("Compilations in time, in seconds since the first one started"),
        table,
    ]
    if len(spans) > len(shown):
        fallback.append(Paragraph([f"The first {len(shown)} of {len(spans)} compilations."]))
    return [
        _rubric("When each compilation ran"),
        Paragraph(
            [
                "One row per compiled function: its recompiles share the row, so a row of "
                "many boxes is a function compiled again and again, in seconds since the "
                "first compilation started."
            ]
        ),
        Chart("timeline", timeline_rows(spans), "When each compilation ran", fallback=fallback),
    ]


def _rubric(title: str) -> Paragraph:
    return Paragraph([Strong(title)])


def _caption(text: str) -> Paragraph:
    """A table's title (the Table block has none of its own)."""
    return Paragraph([Emphasis(text)])


def _seconds(value: float) -> str:
    return f"{value:.3f}"
