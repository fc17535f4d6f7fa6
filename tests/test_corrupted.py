"""Bad input never raises: each problem becomes a diagnostic, everything else still comes through.

Decisions pinned here:

* An **empty file** is a valid empty log: no records, no diagnostics.  So is a
  file of only newlines (blank lines mean nothing).
* A log cut **inside a line** ends in a ``truncated`` diagnostic.  A log cut
  right **after a newline** inside a payload is indistinguishable from a
  payload edited by hand (tlparse's own test inputs have such complete logs),
  so it is reported as ``md5`` at the record's line.
* A payload that fails its md5 is also checked for UTF-8; an invalid line gets
  an ``encoding`` diagnostic at that line.  TAB lines after a record that
  declares no payload get an ``md5`` diagnostic.
* Only a file that cannot be read at all (missing, a directory, no
  permission) raises :class:`TraceReadError`.
"""

from __future__ import annotations

import gzip
import hashlib
import json
import os
import random
import tempfile
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from sphinx_torchtrace.trace.diagnostics import DIAGNOSTIC_SUBTYPES, TraceReadError
from sphinx_torchtrace.trace.inputs.loader import load_trace
from sphinx_torchtrace.trace.reader import LogReader

DATA = Path(__file__).parent / "data" / "shared"
INPUTS = DATA / "tlparse-inputs" / "inputs"
SIMPLE = next((DATA / "simple").glob("*.log"))
BASE = SIMPLE.read_bytes()


def records_of(data: bytes) -> list[tuple[int, int, int]]:
    """(line, start offset, end offset incl. the final newline) of each record of a clean log."""
    out: list[tuple[int, int, int]] = []
    offset = 0
    for number, line in enumerate(data.split(b"\n")[:-1], 1):
        if not line.startswith(b"\t"):
            if out:
                out[-1] = (out[-1][0], out[-1][1], offset)
            out.append((number, offset, -1))
        offset += len(line) + 1
    out[-1] = (out[-1][0], out[-1][1], offset)
    return out


RECORDS = records_of(BASE)


def scan(
    path: Path,
) -> tuple[list[tuple[int, dict[str, Any], bytes | None]], list[tuple[str, int]]]:
    reader = LogReader(path)
    records = [(r.line, r.envelope, r.body) for r in reader.records()]
    for d in reader.diagnostics:
        assert d.subtype in DIAGNOSTIC_SUBTYPES and d.path == str(path)
    return records, [(d.subtype, d.line) for d in reader.diagnostics]


ORIGINAL, _ = scan(SIMPLE)
ORIGINAL_IDS = [str(c.id) for c in load_trace(SIMPLE).ranks[0].compiles]


def compile_ids(path: Path) -> list[str]:
    return [str(c.id) for c in load_trace(path).ranks[0].compiles]


def write(tmp_path: Path, data: bytes, name: str = "log.log") -> Path:
    path = tmp_path / name
    path.write_bytes(data)
    return path


def _truncation_cases() -> list[tuple[str, int, int]]:
    """(case, record index, cut offset) at many kinds of places, deterministic."""
    rng = random.Random(1)
    cases: list[tuple[str, int, int]] = []
    for index in [1, 2, 5, *rng.sample(range(6, len(RECORDS) - 1), 12), len(RECORDS) - 1]:
        line, start, end = RECORDS[index]
        nl = BASE.index(b"\n", start)
        cases.append(("line", index, rng.randrange(start + 1, nl)))  # inside the record line
        cases.append(("line", index, start + 1))
        cases.append(("boundary", index, end))  # right after the record
        cases.append(("boundary", index, end - 1))  # only the final newline lost
        if end > nl + 1:  # has payload lines
            after = [i + 1 for i in range(nl, end - 1) if BASE[i] == 0x0A]
            cases.append(("after_newline", index, rng.choice(after)))
            inside = [i for i in range(nl + 2, end - 1) if BASE[i - 1] != 0x0A]
            if inside:
                cases.append(("payload", index, rng.choice(inside)))
    return cases


@pytest.mark.parametrize("case,index,cut", _truncation_cases())
def test_truncated_at_many_offsets(case: str, index: int, cut: int, tmp_path: Path) -> None:
    path = write(tmp_path, BASE[:cut])
    records, diagnostics = scan(path)
    line = RECORDS[index][0]
    before = [r for r in ORIGINAL if r[0] < line]
    if case == "boundary":
        assert diagnostics == []
        assert records == [r for r in ORIGINAL if r[0] <= line]
    elif case == "line":
        assert diagnostics == [("truncated", line)]
        assert records == before
    else:
        kept = BASE[BASE.index(b"\n", RECORDS[index][1]) + 1 : cut]
        body = b"\n".join(x[1:] for x in kept.rstrip(b"\n").split(b"\n")) if kept else b""
        envelope = ORIGINAL[index][1]
        assert hashlib.md5(body).hexdigest() != envelope["has_payload"]
        kind = "md5" if case == "after_newline" else "truncated"
        assert diagnostics == [(kind, line)]
        assert records[:-1] == before
        assert records[-1][:2] == ORIGINAL[index][:2]
    ids = compile_ids(path)
    assert ids == ORIGINAL_IDS[: len(ids)]
    first_lines = [c.first_line for c in load_trace(SIMPLE).ranks[0].compiles]
    assert len(ids) >= sum(1 for n in first_lines if n < line)


def test_garbage_lines_between_records(tmp_path: Path) -> None:
    lines = BASE.split(b"\n")
    targets = sorted({RECORDS[i][0] for i in (3, 40, 41, 100, len(RECORDS) - 1)})
    out: list[bytes] = []
    expected: list[tuple[str, int]] = []
    for number, line in enumerate(lines, 1):
        if number in targets:
            out.append(b"this is not a record: {}")
            expected.append(("prefix", len(out)))
        out.append(line)
    path = write(tmp_path, b"\n".join(out))
    records, diagnostics = scan(path)
    assert diagnostics == expected
    assert [r[1:] for r in records] == [r[1:] for r in ORIGINAL]
    assert compile_ids(path) == ORIGINAL_IDS


def test_garbage_line_inside_a_payload(tmp_path: Path) -> None:
    index = next(i for i, (_, s, e) in enumerate(RECORDS) if BASE.count(b"\n", s, e) > 4)
    line, start, _ = RECORDS[index]
    cut = BASE.index(b"\n", BASE.index(b"\n", start) + 1) + 1  # after the first payload line
    path = write(tmp_path, BASE[:cut] + b"garbage\n" + BASE[cut:])
    records, diagnostics = scan(path)
    assert diagnostics == [("md5", line), ("prefix", line + 2)]
    assert [r[1] for r in records] == [r[1] for r in ORIGINAL]
    assert compile_ids(path) == ORIGINAL_IDS


def test_tab_line_after_a_record_without_payload(tmp_path: Path) -> None:
    index = next(i for i, (_, s, e) in enumerate(RECORDS) if BASE.count(b"\n", s, e) == 1)
    line, _, end = RECORDS[index]
    path = write(tmp_path, BASE[:end] + b"\tstray payload line\n" + BASE[end:])
    records, diagnostics = scan(path)
    assert diagnostics == [("md5", line)]
    assert [r[1] for r in records] == [r[1] for r in ORIGINAL]


def test_flipped_payload_byte_is_an_md5_diagnostic(tmp_path: Path) -> None:
    data = bytearray(BASE)
    flipped = []
    for index in (2, 50, 120):
        line, start, end = RECORDS[index]
        nl = BASE.index(b"\n", start)
        position = next(i for i in range(nl + 2, end) if chr(data[i]).isalpha())
        data[position] ^= 0x20  # swap the case of one letter
        flipped.append(line)
    path = write(tmp_path, bytes(data))
    records, diagnostics = scan(path)
    assert diagnostics == [("md5", n) for n in flipped]
    assert [r[:2] for r in records] == [r[:2] for r in ORIGINAL]
    assert compile_ids(path) == ORIGINAL_IDS


def test_binary_junk_line(tmp_path: Path) -> None:
    rng = random.Random(7)
    junk = bytes(rng.choice([b for b in range(256) if b != 0x0A]) for _ in range(5000))
    junk = b"\x00" + junk  # starts with NUL, never a TAB
    line, start, _ = RECORDS[30]
    path = write(tmp_path, BASE[:start] + junk + b"\n" + BASE[start:])
    records, diagnostics = scan(path)
    assert diagnostics == [("prefix", line)]
    assert [r[1:] for r in records] == [r[1:] for r in ORIGINAL]
    assert compile_ids(path) == ORIGINAL_IDS


@pytest.mark.parametrize("seed", range(5))
def test_binary_junk_with_newlines_and_tabs(seed: int, tmp_path: Path) -> None:
    rng = random.Random(seed)
    junk = bytes(rng.randrange(256) for _ in range(rng.randrange(1, 3000)))
    index = rng.randrange(1, len(RECORDS) - 1)
    line, start, _ = RECORDS[index]
    path = write(tmp_path, BASE[:start] + junk + b"\n" + BASE[start:])
    records, diagnostics = scan(path)
    junk_lines = range(line, line + junk.count(b"\n") + 1)
    previous = RECORDS[index - 1][0]
    assert all(n in junk_lines or n == previous for _, n in diagnostics)
    original = [r[1] for r in ORIGINAL]
    got = [r[1] for r in records]
    assert [e for e in got if e in original] == original
    assert compile_ids(path)[: len(ORIGINAL_IDS)] == ORIGINAL_IDS


def test_50mb_single_line(tmp_path: Path) -> None:
    line, start, _ = RECORDS[20]
    path = tmp_path / "huge.log"
    with open(path, "wb") as f:
        f.write(BASE[:start])
        f.write(b"V1121 11:50:48.850000 5896 torch/x.py:1] {" + b"x" * 50_000_000 + b"\n")
        f.write(BASE[start:])
    records, diagnostics = scan(path)
    assert diagnostics == [("json", line)]
    assert [r[1:] for r in records] == [r[1:] for r in ORIGINAL]
    path.write_bytes(b"y" * 50_000_000)  # no newline at all
    assert scan(path) == ([], [("prefix", 1)])


def test_invalid_utf8_in_envelope(tmp_path: Path) -> None:
    line, start, _ = RECORDS[10]
    position = BASE.index(b'"', BASE.index(b"] {", start) + 3)  # the first key's quote
    data = BASE[: position + 1] + b"\xff\xfe" + BASE[position + 1 :]
    path = write(tmp_path, data)
    records, diagnostics = scan(path)
    assert diagnostics == [("encoding", line)]
    assert len(records) == len(ORIGINAL)
    assert next(iter(records[10][1])).startswith("\ufffd\ufffd")
    assert compile_ids(path) == ORIGINAL_IDS


def test_invalid_utf8_in_payload(tmp_path: Path) -> None:
    index = next(i for i, (_, s, e) in enumerate(RECORDS) if BASE.count(b"\n", s, e) > 3)
    line, start, _ = RECORDS[index]
    third = BASE.index(b"\n", BASE.index(b"\n", BASE.index(b"\n", start) + 1) + 1) + 1
    path = write(tmp_path, BASE[: third + 2] + b"\xc3\x28" + BASE[third + 2 :])
    records, diagnostics = scan(path)
    assert diagnostics == [("md5", line), ("encoding", line + 3)]
    assert [r[:2] for r in records] == [r[:2] for r in ORIGINAL]
    payload = next(r.payload for r in LogReader(path).records() if r.line == line)
    assert payload is not None and "\ufffd" in payload.text()


def test_empty_file_and_only_newlines(tmp_path: Path) -> None:
    empty = write(tmp_path, b"", "empty.log")
    assert scan(empty) == ([], [])
    trace = load_trace(empty)
    assert trace.diagnostics == [] and trace.ranks[0].compiles == []
    newlines = write(tmp_path, b"\n" * 1000, "newlines.log")
    assert scan(newlines) == ([], [])
    crlf = write(tmp_path, b"\r\n" * 10, "crlf.log")
    assert scan(crlf) == ([], [])
    reader = LogReader(empty)
    list(reader.records())
    assert reader.lines == 0


def test_unreadable_files_raise(tmp_path: Path) -> None:
    with pytest.raises(TraceReadError) as error:
        LogReader(tmp_path)
    assert str(tmp_path) in str(error.value)
    with pytest.raises(TraceReadError):
        load_trace([tmp_path])
    with pytest.raises(TraceReadError):
        load_trace(tmp_path)  # a directory without logs
    missing = tmp_path / "missing.log"
    with pytest.raises(TraceReadError) as error:
        LogReader(missing)
    assert "missing.log" in str(error.value)
    with pytest.raises(TraceReadError):
        load_trace(missing)


@pytest.mark.skipif(os.name != "posix" or os.geteuid() == 0, reason="root reads anything")
def test_permission_denied_raises(tmp_path: Path) -> None:
    path = write(tmp_path, BASE[:1000])
    path.chmod(0)
    with pytest.raises(TraceReadError):
        LogReader(path)


def test_damaged_gzip(tmp_path: Path) -> None:
    compressed = gzip.compress(BASE)
    path = write(tmp_path, compressed[: len(compressed) // 2], "cut.log.gz")
    records, diagnostics = scan(path)
    assert diagnostics and all(kind == "truncated" for kind, _ in diagnostics)
    assert records[:-1] == ORIGINAL[: len(records) - 1]
    junk = bytearray(compressed)
    junk[len(junk) // 2 : len(junk) // 2 + 64] = bytes(64)
    path = write(tmp_path, bytes(junk), "junk.log.gz")
    records, diagnostics = scan(path)
    assert diagnostics
    assert records[:5] == ORIGINAL[:5]
    assert scan(write(tmp_path, b"\x1f\x8b", "magic.gz")) == ([], [("truncated", 1)])


def test_tlparse_corrupted_json_input() -> None:
    path = INPUTS / "simple_corrupted_json.log"
    trace = load_trace(path)
    assert [(d.subtype, d.line) for d in trace.diagnostics] == [("md5", 13)]
    assert path.read_bytes().split(b"\n")[12].startswith(b"V")


# -- property: random mutations of real logs ---------------------------------


def _slice(data: bytes, size: int) -> bytes:
    return data[: data.index(b"\nV", size) + 1]


SEEDS = [
    (INPUTS / "comp_metrics.log").read_bytes(),
    (INPUTS / "artifacts.log").read_bytes(),
    _slice(BASE, 30_000),
]


@st.composite
def mutated(draw: st.DrawFn) -> bytes:
    data = draw(st.sampled_from(SEEDS))
    for _ in range(draw(st.integers(1, 5))):
        n = len(data)
        op = draw(st.sampled_from(["delete", "insert", "replace", "dup", "swap", "truncate"]))
        i = draw(st.integers(0, n))
        j = min(n, i + draw(st.integers(0, 200)))
        junk = draw(
            st.one_of(
                st.binary(max_size=60),
                st.sampled_from([b"\n", b"\t", b"\r\n", b"\n\t", b"\x00", b"\xff", b'"}', b"{"]),
            )
        )
        lines = data.split(b"\n")
        a, b = draw(st.integers(0, len(lines) - 1)), draw(st.integers(0, len(lines) - 1))
        if op == "delete":
            data = data[:i] + data[j:]
        elif op == "insert":
            data = data[:i] + junk + data[i:]
        elif op == "replace":
            data = data[:i] + junk + data[j:]
        elif op == "dup":
            lines.insert(a, lines[a])
            data = b"\n".join(lines)
        elif op == "swap":
            lines[a], lines[b] = lines[b], lines[a]
            data = b"\n".join(lines)
        else:
            data = data[:i]
    return data


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=mutated(), gz=st.booleans())
def test_random_mutations_never_raise(data: bytes, gz: bool) -> None:
    line_count = data.count(b"\n") + (0 if data.endswith(b"\n") or not data else 1)
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "mutated.log"
        path.write_bytes(gzip.compress(data) if gz else data)
        reader = LogReader(path)
        for record in reader.records():
            assert 1 <= record.line <= line_count
            if record.payload is not None:
                assert record.payload.read_bytes() == record.body
        assert reader.lines == line_count
        trace = load_trace(path)
        for d in trace.diagnostics:
            assert d.subtype in DIAGNOSTIC_SUBTYPES
            assert d.path == str(path)
            assert (d.line == 0 and d.subtype == "intern") or 1 <= d.line <= line_count


def test_envelopes_of_odd_shapes_never_raise(tmp_path: Path) -> None:
    from sphinx_torchtrace.trace.inputs.builder import KNOWN_EVENTS

    odd: list[Any] = [None, 0, -1, "s", [1, [2]], {}, {"name": [1], "encoding": {}}, True, 1.5]
    lines = []
    for kind in sorted(KNOWN_EVENTS):
        for value in odd:
            for extra in ({}, {"frame_id": value, "attempt": value, "rank": value}):
                envelope = {kind: value, **extra, "stack": value}
                lines.append(
                    b"V1121 11:50:48.850000 5896 torch/x.py:1] "
                    + json.dumps(envelope).encode()
                    + b"\n\tpayload\n"
                )
    path = write(tmp_path, b"".join(lines))
    trace = load_trace(path)
    assert {d.subtype for d in trace.diagnostics} <= {"md5", "rank"}
