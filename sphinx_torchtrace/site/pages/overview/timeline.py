"""The timeline: chromium events to download and open in Perfetto."""

from __future__ import annotations

import posixpath

from ....trace.analyses.naming import rank_number
from ....trace.analyses.rank_digest import number_ranges
from ...blocks import Block, BulletList, Code, Download, Link, Paragraph, Section, WebOnly, item
from ...words import _
from .view import Overview


def section(view: Overview) -> list[Block]:
    if not any(r.chromium_events for r in view.trace.ranks):
        return []
    intro = Paragraph(
        [
            "PyTorch also records its compile phases as trace events in the Chrome format. ",
            WebOnly(
                ["Download the file and open it in "],
                ["The HTML build of these pages offers them as a file to open in "],
            ),
            Link("https://ui.perfetto.dev", "Perfetto"),
            " (or ",
            Code("chrome://tracing"),
            ") to see a timeline of what ran when.",
        ]
    )
    items: list[list[Block]] = []
    alike: dict[int, list[int]] = {}  # ranks without a file of their own, by their class's first
    for rank in view.trace.ranks:
        number = rank_number(view.trace, rank)
        prefix = f"Rank {number}: " if view.multi else ""
        rank_plan = view.plan.rank_plan(rank)
        if rank_plan is not None and view.plan.own_events(rank_plan):
            path = rank_plan.events_path
            count = f"{len(rank.chromium_events)} events"
            file = Download(path, posixpath.basename(path))
            items.append(item(prefix, count, WebOnly([", ", file])))
        elif rank.chromium_events and rank_plan is not None and rank_plan.same_as is not None:
            first = rank_number(view.trace, rank_plan.same_as.rank)
            alike.setdefault(first, []).append(number)
        elif view.multi:
            items.append(item(f"{prefix}no events"))
    for first, numbers in alike.items():
        word = "Rank" if len(numbers) == 1 else "Ranks"
        their = "its" if len(numbers) == 1 else "their"
        items.append(
            item(
                f"{word} {number_ranges(numbers)}, which logged as rank {first} did "
                f"but for {their} times and timing events: in the timeline of all "
                "ranks"
            )
        )
    merged = view.plan.events_all_path
    if merged is not None:
        items.insert(
            0,
            item(
                "All ranks in one timeline (one process per rank)",
                WebOnly([": ", Download(merged, posixpath.basename(merged))]),
            ),
        )
    title = [_("Timeline (chromium events)")]
    return [Section(title, [intro, BulletList(items)], anchor="timeline")]
