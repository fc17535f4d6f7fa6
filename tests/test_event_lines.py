"""The timeline downloads write each chromium event's own text (``trace/analyses/event_lines.py``):
what a reader of the file decodes must be what decoding the event says, on every log."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from sphinx_torchtrace.trace import load_trace
from sphinx_torchtrace.trace.analyses.event_lines import event_line
from sphinx_torchtrace.trace.model import ChromiumEvent
from sphinx_torchtrace.trace.reader import MAX_JSON_DEPTH, read_payloads

DATA = Path(__file__).parent / "data"


def _with_events() -> list[Path]:
    logs = sorted(p for p in DATA.rglob("*.log") if b"chromium_event" in p.read_bytes())
    assert len(logs) > 40
    return logs


def test_every_event_of_every_log_reads_as_decoding_it_says() -> None:
    """Each event of the corpus: the line decodes to the event's dict, on one line; with a
    pid, that pid and nothing else changed; refused events are the ones decoding refuses."""
    seen = 0
    for log in _with_events():
        for rank in load_trace(log).ranks:
            events = [e for e in rank.chromium_events if e.readable]
            for data in read_payloads([e.payload for e in events]):
                decoded = ChromiumEvent.parse(data)
                made = event_line(data)
                if decoded is None:
                    assert made is None and event_line(data, pid=3) is None
                    continue
                assert made is not None, log.name
                line, value = made
                assert "\n" not in line and json.loads(line) == value == decoded
                moved = event_line(data, pid=7)
                assert moved is not None
                assert json.loads(moved[0]) == moved[1] == {**decoded, "pid": 7}
                seen += 1
    assert seen > 20_000


@pytest.mark.parametrize(
    ("text", "pid_count"),
    [
        ('{"name": "a", "pid": 12, "s": "p"}', 1),  # not the last key
        ('{"pid" : -4 }', 1),
        ('{"name": "a"}', 1),  # no pid: one is added
        ('{"pid": 1, "pid": 2}', 1),  # a duplicate: one is kept
        ('{"\\u0070id": 1, "pid": 2}', 1),  # the same key, spelt with an escape
        ('{"args": {"pid": 5}, "pid": 2}', 2),  # a nested pid stays
        ('{"pid": 2, "args": {"pid": 5}}', 2),
        ('{"pid": 1.5}', 1),
        ('{"pid": true}', 1),
        ('{"pid": "3"}', 1),
        ('{"name": "pid", "pid": 4}', 2),  # a value that reads pid
        ('{"pid": 12345678901234567890123456789012345}', 1),
        ('{\n"name": "\\u00e9",\n"pid": 0\n}', 1),
        ('  {"pid": 0}\r\n', 1),
    ],
)
def test_the_pid_is_set_wherever_the_text_puts_it(text: str, pid_count: int) -> None:
    made = event_line(text.encode(), pid=9)
    assert made is not None
    line, value = made
    assert "\n" not in line
    assert json.loads(line) == value and value["pid"] == 9
    pairs = json.loads(line, object_pairs_hook=lambda kv: kv)
    assert [k for k, _ in pairs].count("pid") == 1  # one pid key: every reader sees 9
    assert line.count('"pid"') == pid_count


@pytest.mark.parametrize(
    "data",
    [
        b"[1, 2]",
        b'"pid"',
        b"",
        b'{"a": 1} {"b": 2}',
        b'{"a": "x\ny"}',  # a raw line break inside a string: not JSON
        b'{"a": 1',
        b"\xff\xfe{}",
        b'{"a": ' + b"[" * MAX_JSON_DEPTH + b"]" * MAX_JSON_DEPTH + b"}",
    ],
)
def test_what_decoding_refuses_is_left_out(data: bytes) -> None:
    assert ChromiumEvent.parse(data) is None
    assert event_line(data) is None and event_line(data, pid=1) is None


def test_nesting_up_to_the_limit_is_kept() -> None:
    depth = MAX_JSON_DEPTH - 1  # and the object around it
    data = b'{"a": ' + b"[" * depth + b"]" * depth + b', "pid": 3}'
    assert ChromiumEvent.parse(data) is not None
    made = event_line(data, pid=1)
    assert made is not None and json.loads(made[0])["pid"] == 1


def test_text_that_is_not_utf8_is_decoded_as_json_decodes_it() -> None:
    data = '{"name": "\u00e9", "pid": 0}'.encode("utf-16")
    decoded = ChromiumEvent.parse(data)
    made = event_line(data, pid=2)
    assert decoded is not None and made is not None
    assert json.loads(made[0]) == {**decoded, "pid": 2}
