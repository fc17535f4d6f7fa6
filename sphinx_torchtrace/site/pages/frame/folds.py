"""Long reference tables and many folds, folded so a frame page stays a few screens tall."""

from __future__ import annotations

from collections.abc import Sequence

from ...blocks import Block, Dropdown, Inlines, Table

#: Rows a reference table (artifacts, kernels, shape events) shows unfolded on a frame
#: page: a longer one is folded whole, so that the answer and every section's heading
#: stay within a few screens (a recompiled frame of a big model lists 70 kernels, and
#: shape events take two or three lines a row).  Measured with
#: ``benchmarks/bench_page_height.py``: every frame page of the corpus within 6 screens.
FOLDED_TABLE_ROWS = 8
#: Folds (graphs, artifacts, kernels) a section lists one under another; more are
#: themselves in one fold (a DDP frame logs forty artifacts).
FOLDS_LISTED = 12


def folded_if_long(table: Table, what: str) -> Block:
    """The table, or past :data:`FOLDED_TABLE_ROWS` rows the table in a closed fold
    titled with its count: nothing left out, the page no taller than its headings."""
    if len(table.rows) <= FOLDED_TABLE_ROWS:
        return table
    return Dropdown([f"The table of {len(table.rows)} {what}"], [table])


def folded_if_many(blocks: Sequence[Block], what: str) -> list[Block]:
    """Folds listed one under another, or past :data:`FOLDS_LISTED` of them one fold
    holding them all (a fold's title is a line: forty are a screen and a half); a link
    to one of them opens both (``sphinx-torchtrace.js``)."""
    if len(blocks) <= FOLDS_LISTED:
        return list(blocks)
    return [Dropdown([f"The {len(blocks)} {what}"], blocks)]


def drop_empty_columns(
    header: Sequence[str], rows: Sequence[Sequence[Inlines]], widths: Sequence[int] | None
) -> tuple[list[str], list[list[Inlines]], list[int] | None]:
    """The table without the columns no row fills: an empty column only costs width."""
    keep = [i for i in range(len(header)) if i == 0 or any(row[i] for row in rows)]
    return (
        [header[i] for i in keep],
        [[row[i] for i in keep] for row in rows],
        [widths[i] for i in keep] if widths is not None else None,
    )
