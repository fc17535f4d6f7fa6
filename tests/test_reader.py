"""The record scanner against a straightforward line-by-line reading of real logs.

Decisions pinned here (see also ``test_corrupted.py``):

* **CRLF** is accepted: a record line ending in ``\\r\\n`` marks a log written in
  text mode on Windows; its payload lines lose their ``\\r`` before the md5
  check, so the payload is what torch hashed.  (tlparse's own
  ``multi_rank_logs/..._rank_1.log`` is such a file: all 733 payloads verify.)
* **Blank lines** between records mean nothing and are not reported.  A blank
  line between payload lines is an empty payload line that lost its TAB (an
  editor stripping trailing whitespace) and stays an empty line; blank lines
  after a payload's last TAB line belong to no payload.
* ``[rankN]:`` before a record line is tolerated, as in tlparse.
"""

from __future__ import annotations

import gzip
import hashlib
import json
import re
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from sphinx_torchtrace.trace import reader as reader_module
from sphinx_torchtrace.trace.inputs.loader import load_trace
from sphinx_torchtrace.trace.reader import LogReader, payload_body

DATA = Path(__file__).parent / "data" / "shared"
INPUTS = DATA / "tlparse-inputs" / "inputs"
SIMPLE = next((DATA / "simple").glob("*.log"))
# Real logs without blank lines (the reference below knows nothing of blank lines).
REAL_LOGS = sorted(
    p
    for p in [*DATA.glob("*/*.log"), *DATA.glob("cache/*/*.log")]
    if p.parent.name != "tlparse-inputs"
) + [INPUTS / "comp_metrics.log", INPUTS / "artifacts.log", INPUTS / "simple.log"]
SMALL_LOGS = [SIMPLE, INPUTS / "comp_metrics.log", INPUTS / "artifacts.log"]

_GLOG = re.compile(rb"^V\d{4} \d\d:\d\d:\d\d\.\d{6} +\d+ [^:]+:\d+\] (\{.*\})$")

Rec = tuple[int, dict[str, Any], bytes | None]


def reference(data: bytes) -> tuple[list[Rec], list[int]]:
    """Every line not starting with TAB starts a record; its payload is the TAB lines after it.

    Returns (line, envelope, payload or None) per record and the lines of the
    records whose md5 does not match.
    """
    lines = data.split(b"\n")
    if data.endswith(b"\n"):
        lines.pop()
    groups: list[tuple[int, bytes, list[bytes]]] = []
    for number, line in enumerate(lines, 1):
        if line.startswith(b"\t"):
            groups[-1][2].append(line[1:])
        else:
            groups.append((number, line, []))
    records: list[Rec] = []
    bad_md5: list[int] = []
    for number, line, payload_lines in groups:
        match = _GLOG.match(line)
        assert match is not None, (number, line[:80])
        envelope = json.loads(match.group(1))
        body = b"\n".join(payload_lines) if payload_lines else None
        expected = envelope.get("has_payload")
        if expected is not None and hashlib.md5(body or b"").hexdigest() != expected:
            bad_md5.append(number)
        records.append((number, envelope, body))
    return records, bad_md5


def scan(path: Path) -> tuple[list[Rec], LogReader]:
    reader = LogReader(path)
    records: list[Rec] = [(r.line, r.envelope, r.body) for r in reader.records()]
    return records, reader


def normalized(records: list[Rec]) -> list[Rec]:
    """A record with has_payload but no payload lines has an empty body in the reader."""
    return [
        (line, env, b"" if body is None and "has_payload" in env else body)
        for line, env, body in records
    ]


def record_line(envelope: dict[str, Any], payload: str | None, prefix: str = "") -> bytes:
    """One record as torch writes it (``_internal.py``: every payload line gets one TAB)."""
    envelope = dict(envelope)
    text = ""
    if payload is not None:
        envelope["has_payload"] = hashlib.md5(payload.encode()).hexdigest()
        text = "".join(f"\n\t{line}" for line in payload.split("\n"))
    head = f"{prefix}V1121 11:50:48.850000 5896 torch/_dynamo/utils.py:2350] "
    return (head + json.dumps(envelope) + text + "\n").encode()


@pytest.mark.parametrize("path", REAL_LOGS, ids=lambda p: p.parent.name + "/" + p.name)
def test_records_match_line_by_line_reference(path: Path) -> None:
    data = path.read_bytes()
    expected, bad_md5 = reference(data)
    records, reader = scan(path)
    assert records == normalized(expected)
    assert Counter(next(iter(env)) for _, env, _ in records) == Counter(
        next(iter(env)) for _, env, _ in expected
    )
    assert [(d.subtype, d.line) for d in reader.diagnostics] == [("md5", n) for n in bad_md5]
    assert reader.size == len(data)
    assert reader.lines == data.count(b"\n") + (0 if data.endswith(b"\n") else 1)


@pytest.mark.parametrize("path", REAL_LOGS[:3] + SMALL_LOGS, ids=lambda p: p.name)
def test_record_lines_and_payload_offsets(path: Path) -> None:
    data = path.read_bytes()
    lines = data.split(b"\n")
    reader = LogReader(path)
    payloads = []
    for record in reader.records():
        line = lines[record.line - 1]
        assert line.startswith(b"V") and b"] {" in line
        assert json.loads(line.split(b"] ", 1)[1]) == record.envelope
        assert record.source == line.split(b" ")[3].decode().rstrip("]")
        if record.payload is not None:
            assert record.payload.size == len(record.body or b"")
            payloads.append((record.payload, record.body))
    assert payloads
    for payload, body in payloads:  # re-read after the scan, from the file
        assert payload.read_bytes() == body
        assert payload.text() == (body or b"").decode("utf-8", "replace")


@pytest.mark.parametrize("path", SMALL_LOGS + [REAL_LOGS[0]], ids=lambda p: p.name)
@pytest.mark.parametrize("name", ["log.gz", "log.txt"])
def test_gzip_gives_the_same_records(path: Path, name: str, tmp_path: Path) -> None:
    # Compression is found by the magic bytes, whatever the file is called.
    gz = tmp_path / name
    gz.write_bytes(gzip.compress(path.read_bytes()))
    plain, plain_reader = scan(path)
    reader = LogReader(gz)
    assert reader.compressed
    records = list(reader.records())
    assert [(r.line, r.envelope, r.body) for r in records] == plain
    assert [(d.subtype, d.line) for d in reader.diagnostics] == [
        (d.subtype, d.line) for d in plain_reader.diagnostics
    ]
    fresh = list(LogReader(path).records())
    assert [r.payload.text() if r.payload else None for r in records] == [
        r.payload.text() if r.payload else None for r in fresh
    ]
    trace_plain, trace_gz = load_trace(path), load_trace(gz)
    assert [str(c.id) for c in trace_gz.ranks[0].compiles] == [
        str(c.id) for c in trace_plain.ranks[0].compiles
    ]


def test_rank_prefix_is_tolerated(tmp_path: Path) -> None:
    data = SIMPLE.read_bytes()
    prefixed = b"\n".join(
        line if line.startswith(b"\t") or not line else b"[rank0]:" + line
        for line in data.split(b"\n")
    )
    path = tmp_path / "rank.log"
    path.write_bytes(prefixed)
    records, reader = scan(path)
    assert reader.diagnostics == []
    assert records == scan(SIMPLE)[0]


def test_crlf_logs_are_read_like_lf_logs(tmp_path: Path) -> None:
    path = tmp_path / "crlf.log"
    path.write_bytes(SIMPLE.read_bytes().replace(b"\n", b"\r\n"))
    records, reader = scan(path)
    assert reader.diagnostics == []
    assert records == scan(SIMPLE)[0]
    texts = [r.payload.text() for r in LogReader(path).records() if r.payload]
    assert texts == [r.payload.text() for r in LogReader(SIMPLE).records() if r.payload]
    assert all("\r" not in t for t in texts)


def test_real_crlf_log_from_tlparse_verifies() -> None:
    records, reader = scan(INPUTS / "multi_rank_logs" / "dedicated_log_torch_trace_rank_1.log")
    assert reader.diagnostics == []
    assert sum(1 for _, env, _ in records if "has_payload" in env) == 733


def test_payload_ending_in_newline_and_empty_payload(tmp_path: Path) -> None:
    path = tmp_path / "edge.log"
    path.write_bytes(
        record_line({"artifact": {"name": "a"}}, "line one\nline two\n")  # lone-TAB last line
        + record_line({"artifact": {"name": "b"}}, "")  # a single lone-TAB line
        + record_line({"artifact": {"name": "c"}}, "\n\n")  # only lone-TAB lines
        + record_line({"artifact": {"name": "d"}}, "\tindented\t\n")  # tabs inside lines
    )
    assert path.read_bytes().split(b"\n").count(b"\t") == 6  # the lone-TAB lines
    records, reader = scan(path)
    assert reader.diagnostics == []
    assert [body for _, _, body in records] == [
        b"line one\nline two\n",
        b"",
        b"\n\n",
        b"\tindented\t\n",
    ]
    texts = [r.payload.text() for r in LogReader(path).records() if r.payload]
    assert texts == ["line one\nline two\n", "", "\n\n", "\tindented\t\n"]


def test_has_payload_without_payload_lines(tmp_path: Path) -> None:
    empty_md5 = hashlib.md5(b"").hexdigest()
    other_md5 = hashlib.md5(b"something").hexdigest()
    head = b"V1121 11:50:48.850000 5896 torch/_dynamo/utils.py:2350] "
    path = tmp_path / "nolines.log"
    path.write_bytes(
        head
        + json.dumps({"artifact": {"name": "e"}, "has_payload": empty_md5}).encode()
        + b"\n"
        + head
        + json.dumps({"artifact": {"name": "f"}, "has_payload": other_md5}).encode()
        + b"\n"
        + record_line({"str": ["x", 0]}, None)
    )
    reader = LogReader(path)
    records = list(reader.records())
    assert [r.body for r in records] == [b"", b"", None]
    assert records[0].payload is not None and records[0].payload.size == 0
    assert records[0].payload.text() == ""
    assert [(d.subtype, d.line) for d in reader.diagnostics] == [("md5", 2)]


def test_blank_lines(tmp_path: Path) -> None:
    path = tmp_path / "blank.log"
    path.write_bytes(
        b"\n\n"
        + record_line({"artifact": {"name": "a"}}, "x\ny")
        + b"\n\n"  # between records, after a payload: nothing
        + record_line({"artifact": {"name": "b"}}, "p\n\nq").replace(b"\n\t\n", b"\n\n")  # TAB lost
        + b"\n"
    )
    records, reader = scan(path)
    assert reader.diagnostics == []
    assert [(line, body) for line, _, body in records] == [(3, b"x\ny"), (8, b"p\n\nq")]
    assert [r.payload.text() for r in LogReader(path).records() if r.payload] == ["x\ny", "p\n\nq"]
    assert payload_body(b"\tx\n\n\n") == b"x"
    assert payload_body(b"\tx\n\t\n") == b"x\n"
    assert payload_body(b"\n\tx\n") == b"\nx"


@pytest.mark.parametrize("chunk", [7, 100, 4096, 65537])
@pytest.mark.parametrize("path", SMALL_LOGS, ids=lambda p: p.name)
def test_chunk_boundaries_do_not_matter(
    path: Path, chunk: int, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    expected, expected_reader = scan(path)
    sizes = [p.payload.size if p.payload else -1 for p in LogReader(path).records()]
    monkeypatch.setattr(reader_module, "CHUNK_SIZE", chunk)
    records, reader = scan(path)
    assert records == expected
    assert reader.diagnostics == expected_reader.diagnostics
    assert reader.lines == expected_reader.lines
    small = list(LogReader(path).records())
    assert [p.payload.size if p.payload else -1 for p in small] == sizes
    assert [p.payload.read_bytes() for p in small if p.payload] == [
        body for _, _, body in expected if body is not None
    ]
    # CRLF line ends split across chunks, and gzip.
    crlf = tmp_path / "crlf.log"
    crlf.write_bytes(path.read_bytes().replace(b"\n", b"\r\n"))
    assert scan(crlf)[0] == expected
    gz = tmp_path / "log.gz"
    gz.write_bytes(gzip.compress(path.read_bytes()))
    assert scan(gz)[0] == expected


def test_a_log_replaced_on_disk_is_read_as_it_was_loaded(tmp_path: Path) -> None:
    """A recapture writes a new log over the old one while a build (or sphinx-autobuild)
    still holds the model: payloads come from the log the model was built from, never
    from the new file at the old offsets."""
    path = tmp_path / "trace.log"
    path.write_bytes(
        record_line({"artifact": {"name": "a"}}, "first capture\n")
        + record_line({"artifact": {"name": "b"}}, "the second payload\n")
    )
    records = [r for r in LogReader(path).records() if r.payload]
    assert records[0].payload.text() == "first capture\n"  # the log is open from here on
    new = tmp_path / "new.log"
    new.write_bytes(record_line({"artifact": {"name": "z"}}, "x" * 200 + "\n"))
    new.replace(path)  # how capture tools and editors write a file: a new file, renamed
    assert [r.payload.text() for r in records] == ["first capture\n", "the second payload\n"]


@pytest.mark.parametrize("form", ["lf", "crlf", "gzip"])
def test_payloads_read_together_are_those_read_one_by_one(form: str, tmp_path: Path) -> None:
    """The timeline of all ranks reads a rank's events in pieces of the log: each payload
    as read alone, for CRLF and gzip logs too, and past the edge of a piece."""
    from sphinx_torchtrace.trace.reader import read_payloads

    data = SIMPLE.read_bytes()
    log = tmp_path / "x.log"
    if form == "crlf":
        data = data.replace(b"\n", b"\r\n")
    log.write_bytes(gzip.compress(data) if form == "gzip" else data)
    trace = load_trace(log)
    payloads = [
        a.payload
        for r in trace.ranks
        for c in r.compiles
        for a in c.artifacts
        if a.payload is not None
    ]
    payloads += [e.payload for r in trace.ranks for e in r.chromium_events]
    payloads.sort(key=lambda p: p.offset)
    assert len(payloads) > 50
    alone = [p.read_bytes() for p in payloads]
    assert list(read_payloads(payloads)) == alone
    reader_module.READ_WINDOW, window = 4096, reader_module.READ_WINDOW
    try:
        assert list(read_payloads(payloads)) == alone
        assert list(read_payloads(payloads[::-1])) == alone[::-1]
    finally:
        reader_module.READ_WINDOW = window
