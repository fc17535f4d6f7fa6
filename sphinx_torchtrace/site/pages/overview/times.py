"""Where compile time went, by phase, and the slowest compiles."""

from __future__ import annotations

from ....trace import RankTrace
from ....trace.analyses.phases import PhaseTotal, chromium_phase_times, time_totals
from ...blocks import Block, Code, Inline, Paragraph, Section, Table
from ...phase_words import phase_words
from ...words import _
from .view import Overview, Row, seconds_text


def section(view: Overview) -> list[Block]:
    intro = Paragraph(
        [
            "How long compiling took, from the metrics PyTorch logs for each compilation. The "
            "phases nest (the whole frame includes the backend, which includes Inductor, which "
            'includes code generation), so the rows do not add up; "slowest" is the '
            "compilation that spent the most time in that phase."
        ]
    )
    bodies = view.for_ranks(view.trace.ranks, lambda r: _times_of(view, r))
    return [Section([_("Compile time")], [intro, *bodies], anchor="compile-time")]


def _times_of(view: Overview, rank: RankTrace) -> list[Block]:
    totals = time_totals(rank.compiles)
    blocks: list[Block] = []
    if not totals:
        blocks.append(Paragraph(["No compilation logged its compile time."]))
    else:
        rows: list[Row] = [
            [
                [phase_words(t.phase)],
                [seconds_text(t.seconds)],
                [str(t.compiles)],
                _slowest_cell(view, t),
            ]
            for t in totals
        ]
        blocks.append(
            Table(
                [_("Phase"), _("Total"), _("Compilations"), _("Slowest")],
                rows,
                widths=[4, 2, 2, 3],
                classes=["torchtrace-times"],
            )
        )
    blocks.extend(_timers(rank))
    return blocks


def _slowest_cell(view: Overview, total: PhaseTotal) -> list[Inline]:
    if total.slowest is None:
        return ["—"]
    return [view.link(total.slowest), f" ({seconds_text(total.slowest_seconds)})"]


def _timers(rank: RankTrace) -> list[Block]:
    timers = chromium_phase_times(rank)
    if not timers:
        return []
    intro = Paragraph(
        [
            f"PyTorch's own timers (from its chromium events), the {len(timers)} longest in "
            "total; timers nest inside each other, so they overlap."
        ]
    )
    rows: list[Row] = [[[Code(t.name)], [seconds_text(t.seconds)], [str(t.count)]] for t in timers]
    return [intro, Table([_("Timer"), _("Total"), _("Times run")], rows, widths=[4, 2, 1])]
