"""A rank's chromium events as lines of JSON, for the timeline downloads.

The downloads hold every event a rank logged: half a million for a thousand ranks, where
decoding each and encoding it again was most of what the timeline of all ranks cost.  An
event's own text is written instead, on one line, once the decoder has accepted it exactly
as :func:`~sphinx_torchtrace.trace.reader.load_json` would; the timeline of all ranks sets
its ``pid`` in that text, and encodes only the events whose text does not say where their
``pid`` is.
"""

from __future__ import annotations

import json
import json.scanner
import re
from collections.abc import Iterator
from typing import Any

from ..model import ChromiumEvent, RankTrace
from ..reader import MAX_JSON_DEPTH, read_payloads

#: The C scanner behind ``json.loads``: a value and where it ends, with none of the
#: Python layers around it (half the cost of decoding a small event).  (typeshed types its
#: argument wrongly: it takes the decoder whose settings it follows.)
_SCAN = json.scanner.make_scanner(json.JSONDecoder())  # type: ignore[arg-type]
#: JSON's whitespace (``str.strip()`` would take more: ``json.loads`` refuses those).
_WHITESPACE = " \t\n\r"
#: A ``"pid": 123`` key and its integer value, before the next key or the object's end.
_PID = re.compile(r'"pid"[ \t]*:[ \t]*(-?[0-9]{1,30})[ \t]*[,}]')
#: ``p``, ``i`` and ``d`` as JSON escapes: a ``"pid"`` key spelt with them is a second one.
_ESCAPED_PID_LETTER = re.compile(r"\\u00(?:70|69|64)")


def event_lines(rank: RankTrace, pid: int | None = None) -> Iterator[tuple[str, dict[str, Any]]]:
    """Each of a rank's chromium events that is a JSON object, as one line of JSON text
    and as a dict, read from its log a piece at a time; with ``pid`` as its ``pid`` when
    one is given."""
    for _, line, value in events_with_lines(rank, pid):
        yield line, value


def events_with_lines(
    rank: RankTrace, pid: int | None = None
) -> Iterator[tuple[ChromiumEvent, str, dict[str, Any]]]:
    """As :func:`event_lines`, each with its event (its compile id, for the stage spans)."""
    events = [e for e in rank.chromium_events if e.readable]
    for event, data in zip(events, read_payloads([e.payload for e in events]), strict=False):
        made = event_line(data, pid)
        if made is not None:
            yield event, *made


def event_line(data: bytes, pid: int | None = None) -> tuple[str, dict[str, Any]] | None:
    """One event's payload as (a line of JSON, its dict); None where it is not a JSON
    object or nests too deeply (as :meth:`ChromiumEvent.parse` says)."""
    try:
        text = data.decode("utf-8").strip(_WHITESPACE)
        value, end = _SCAN(text, 0)
    except (UnicodeDecodeError, StopIteration, ValueError, RecursionError):
        return _encoded(data, pid)  # what json.loads alone decodes (or refuses)
    if end != len(text) or not isinstance(value, dict):
        return _encoded(data, pid)
    if data.count(b"[") + data.count(b"{") > MAX_JSON_DEPTH and _deeper_than(value, MAX_JSON_DEPTH):
        return None  # refused, as load_json refuses it
    # valid JSON has no raw line breaks inside its strings: these are between tokens
    line = text.replace("\n", "").replace("\r", "") if "\n" in text or "\r" in text else text
    if pid is None:
        return line, value
    m = _top_level_pid(line, value)
    if m is None:
        return _with_pid(value, pid)
    value["pid"] = pid
    return line[: m.start(1)] + str(pid) + line[m.end(1) :], value


def _top_level_pid(line: str, value: dict[str, Any]) -> re.Match[str] | None:
    """Where an event's text spells its object's integer ``pid``: the one ``"pid"`` in it
    when the object has that key and no escape could spell another (a valid text spells
    each key of its object; torch's events all have this one)."""
    if type(value.get("pid")) is not int:
        return None
    at = line.find('"pid"')
    if at < 0 or line.find('"pid"', at + 5) >= 0:  # one scan of the text, for both
        return None
    if "\\u00" in line and _ESCAPED_PID_LETTER.search(line):
        return None
    return _PID.match(line, at)


def _deeper_than(value: dict[str, Any], limit: int) -> bool:
    """Whether a decoded value nests objects and arrays more than ``limit`` deep: what
    :func:`~sphinx_torchtrace.trace.reader.json_too_deep` says of its text, found by
    walking its containers (a few thousand in torch's largest events), not its bytes."""
    stack: list[tuple[Any, int]] = [(value, 1)]
    while stack:
        node, depth = stack.pop()
        if depth > limit:
            return True
        children = node.values() if isinstance(node, dict) else node
        stack.extend((c, depth + 1) for c in children if isinstance(c, (dict, list)))
    return False


def _encoded(data: bytes, pid: int | None) -> tuple[str, dict[str, Any]] | None:
    try:
        value = ChromiumEvent.parse(data)
    except RecursionError:
        return None
    if value is None:
        return None
    if pid is None:
        return json.dumps(value, default=str), value
    return _with_pid(value, pid)


def _with_pid(value: dict[str, Any], pid: int) -> tuple[str, dict[str, Any]]:
    value["pid"] = pid
    return json.dumps(value, default=str), value
