"""The view of a ``torchtrace-trend``: each function over several runs, as blocks.

Shown where the directive stands: which runs, in order; whether they were made alike;
a table with a row per function and a cell per run (its status badge, graph breaks,
recompiles and compile time); a chart of each function's compile time over the runs.
Every string of a log stays text.
"""

from __future__ import annotations

from ...trace.comparing.trend import Trend, TrendCell, time_change_text
from ..blocks import Admonition, Badge, Block, BulletList, Chart, Inline, Paragraph, Table, item
from ..words import _


def trend_blocks(trend: Trend) -> list[Block]:
    runs = ", ".join(trend.labels)
    blocks: list[Block] = [
        Paragraph(
            [
                f"{len(trend.rows)} function(s) over {len(trend.labels)} runs, "
                f"oldest first: {runs}. "
                "Functions are matched by file, function and occurrence, as a comparison matches "
                "them."
            ]
        )
    ]
    if trend.setup:
        blocks.append(
            Admonition(
                "note",
                [
                    Paragraph(["Not like for like: some changes may come from the setup:"]),
                    BulletList([item(d) for d in trend.setup]),
                ],
            )
        )
    rows: list[list[list[Inline]]] = []
    for row in trend.rows:
        rank = f"rank {row.rank}: " if trend.multi_rank else ""
        rows.append([[rank + row.label], *(_cell(c) for c in row.cells)])
    blocks.append(Table([_("Function"), *trend.labels], rows))
    if trend.rows_left_out:
        blocks.append(Paragraph([f"And {trend.rows_left_out} more functions."]))
    changes = [
        item(f"{trend.labels[i]} → {trend.labels[i + 1]}: {time_change_text(change)}")
        for i, change in enumerate(trend.time_changes)
        if change is not None
    ]
    if trend.vllm:
        blocks.append(
            Paragraph(["vLLM in each run (its pieces have no compile ids: no row above):"])
        )
        blocks.append(
            BulletList(
                [
                    item(f"{label}: {line or 'no vLLM records'}")
                    for label, line in zip(trend.labels, trend.vllm, strict=False)
                ]
            )
        )
    if changes:
        blocks.append(
            Paragraph(
                [
                    "The function whose compile time changed most from each run to the next "
                    "(its compile-time tree, by phase; compile times are noisy):"
                ]
            )
        )
        blocks.append(BulletList(changes))
    if any(c.seconds is not None for r in trend.rows for c in r.cells):
        blocks.append(
            Chart(
                "trend",
                (list(trend.rows), list(trend.labels)),
                "Compile time of each function over the runs",
            )
        )
    return blocks


def _cell(cell: TrendCell) -> list[Inline]:
    if not cell.present or cell.status is None:
        return ["-"]
    out: list[Inline] = [Badge(cell.status)]
    rest = cell.describe().split(", ", 1)[1:]  # what follows the status
    if rest:
        out.append(" " + rest[0])
    return out
