"""The status legend: tlparse's colours and what each means here."""

from __future__ import annotations

from ....trace import STATUS_LEGEND
from ...blocks import Badge, Block, Paragraph, Section, Table
from ...statuses import LEGEND_MORE, STATUS_MEANING, STATUS_ORDER
from ...words import _
from .view import Overview, Row


def section(view: Overview) -> list[Block]:
    rows: list[Row] = [
        [[Badge(s)], [STATUS_LEGEND[s]], [f"{STATUS_MEANING[s]} {LEGEND_MORE.get(s, '')}".strip()]]
        for s in STATUS_ORDER
    ]
    intro = Paragraph(
        [
            "Each compile id is shown as a badge whose color gives the outcome of that "
            "compilation, the same colors tlparse uses: ok is green, break is lime, error is "
            "red, empty is white and missing is purple."
        ]
    )
    table = Table(
        [_("Status"), _("tlparse's legend"), _("What it means")],
        rows,
        widths=[1, 2, 4],
        classes=["torchtrace-legend"],
    )
    return [Section([_("Status legend")], [intro, table], anchor="status-legend")]
