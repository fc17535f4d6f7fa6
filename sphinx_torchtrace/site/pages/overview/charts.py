"""The charts of compile time and when each compile ran."""

from __future__ import annotations

from ....trace import RankTrace
from ...blocks import Block, Section
from ...words import _
from ..charts import charts_blocks
from .view import Overview


def section(view: Overview) -> list[Block]:
    def body(rank: RankTrace) -> list[Block]:
        blocks: list[Block] = charts_blocks(view.plan, rank)
        return blocks

    bodies = view.for_ranks(view.trace.ranks, body)
    return [Section([_("Compile time charts")], bodies, anchor="charts")]
