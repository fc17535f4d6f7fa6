"""A rank's chromium events as Perfetto reads them: one rank's file, or every rank's as
one array written piece by piece.  Each event is its own text from the log, on one line,
once the decoder has accepted it (:mod:`.event_lines`); never markup.
"""

from __future__ import annotations

import json
from collections.abc import Iterator

from ..model import RankTrace, Trace
from .event_lines import event_lines, events_with_lines
from .naming import rank_number
from .timings import EventReading


def chromium_events_json(rank: RankTrace) -> str:
    """All of a rank's chromium events as a JSON array, for Perfetto or chrome://tracing."""
    lines = []
    reading = EventReading(rank)  # the overview's chart and timers, from this one reading
    for event, line, data in events_with_lines(rank):
        reading.add(event, data)
        lines.append(line)
    reading.done()
    if not lines:
        return "[]\n"
    return "[\n" + ",\n".join(lines) + "\n]\n"  # one event a line


def chromium_events_all_ranks(trace: Trace) -> Iterator[str]:
    """Every rank's chromium events as one JSON array, piece by piece (a rank at a time: a
    thousand ranks' events are never in memory at once), each event's ``pid`` its rank and
    each rank named, so Perfetto shows the ranks one above the other (as tlparse's merged
    file does)."""
    yield "["
    first = True
    for rank in trace.ranks:
        number = rank_number(trace, rank)
        parts = [
            json.dumps(
                {
                    "name": "process_name",
                    "ph": "M",
                    "pid": number,
                    "args": {"name": f"rank {number}"},
                }
            )
        ]
        parts.extend(line for line, _ in event_lines(rank, pid=number))
        yield ("\n" if first else ",\n") + ",\n".join(parts)
        first = False
    yield "\n]\n"
