"""Read a TORCH_TRACE log into records: envelope, payload, line number.

The reader knows the line format and nothing of what records mean.  A log is
a sequence of records, each a glog-style line ``V1121 11:50:48.850000 5896
torch/_dynamo/utils.py:2350] {json}`` followed by payload lines that each start
with one TAB.  The log is read in large chunks and split with C-level byte
searches, so the Python loop runs once per record, not once per line; payloads
are checked against their md5 while the chunk is in memory and afterwards kept
only as offsets into the file (:class:`Payload`), so a 100 MB log does not
become 100 MB of Python strings.

A log written in text mode on Windows (CRLF line ends) reads like any other:
the ``\r`` before each ``\n`` is not part of the payload torch hashed.
"""

from __future__ import annotations

import gzip
import hashlib
import io
import json
import os
import re
import zlib
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from .diagnostics import Diagnostic, TraceReadError

#: Bytes read at a time.  Large enough that per-chunk costs vanish, small
#: enough to keep the reader's peak memory far below the size of a big log.
CHUNK_SIZE = 4 << 20
#: A record line longer than a chunk makes the reader read more at once, up to this.
MAX_READ_SIZE = 256 << 20

# `[rank0]:` is tolerated like tlparse does; the path part may hold spaces but no colon.
# The pid is bounded so that int() never meets a number too long to convert.
_PREFIX = re.compile(
    rb"(?:\[rank\d+\]:)?([VIWEC])(\d{4}) (\d\d:\d\d:\d\d\.\d{6}) +(\d{1,19}) ([^:]+):(\d+)\] "
)
# A record starts on every line that is neither a payload line (TAB) nor blank.
_RECORD_START = re.compile(rb"\n[^\t\n]")
_GZIP_MAGIC = b"\x1f\x8b"


class PayloadStore:
    """Reads payload text back from a log file on demand.

    Plain files are re-read by offset (cheap, and nothing stays in memory).
    Gzip streams cannot seek cheaply, so their payloads are kept in memory.
    """

    def __init__(self, path: str, compressed: bool) -> None:
        self.path = path
        self.compressed = compressed
        self._inline: dict[int, bytes] = {}

    def keep(self, offset: int, raw: bytes) -> None:
        if self.compressed:
            self._inline[offset] = raw

    def read_raw(self, offset: int, length: int) -> bytes:
        if self.compressed:
            return self._inline.get(offset, b"")[:length]
        try:
            with open(self.path, "rb") as f:
                f.seek(offset)
                return f.read(length)
        except OSError as e:
            raise TraceReadError(self.path, e.strerror or str(e)) from e


@dataclass(slots=True)
class Payload:
    """A record's payload, located in its log but not held in memory."""

    store: PayloadStore
    offset: int  # byte offset of the first payload line (its leading TAB)
    length: int  # bytes of the payload lines as they are in the file
    size: int  # bytes of the payload itself (TABs stripped)
    crlf: bool = False  # the record's lines end in CRLF (a log written in text mode on Windows)

    def read_bytes(self) -> bytes:
        raw = self.store.read_raw(self.offset, self.length)
        return payload_body(raw.replace(b"\r\n", b"\n") if self.crlf else raw)

    def text(self) -> str:
        """The payload as torch wrote it, with invalid UTF-8 replaced."""
        return self.read_bytes().decode("utf-8", "replace")


@dataclass(slots=True)
class Record:
    """One record of a log: its envelope and, while reading, its payload bytes."""

    line: int  # 1-based line number of the envelope line
    timestamp: str  # "MMDD HH:MM:SS.ffffff", local time, no year
    pid: int
    source: str  # "torch/_dynamo/utils.py:2350": where torch logged it
    envelope: dict[str, Any]
    payload: Payload | None
    body: bytes | None  # payload bytes; only valid during iteration

    @property
    def kind(self) -> str:
        """The event name: the envelope's first key (``artifact``, ``dynamo_start`` ...)."""
        return next(iter(self.envelope))

    def body_text(self) -> str:
        return (self.body or b"").decode("utf-8", "replace")


def payload_body(raw: bytes) -> bytes:
    """The payload of a record from its payload lines: strip the one TAB torch put before each.

    ``raw`` is everything after the record line up to the next record: TAB lines
    and possibly blank lines.  Blank lines after the last TAB line separate
    records and belong to no payload; a blank line between TAB lines is an empty
    payload line that lost its TAB (an editor stripping trailing whitespace) and
    stays an empty line.
    """
    if raw[:1] == b"\t" and raw[-1:] == b"\n" and raw[-2:] != b"\n\n" and b"\n\n" not in raw:
        # The common case, two copies: drop every line's TAB, then the first TAB and last newline.
        return raw.replace(b"\n\t", b"\n")[1:-1]
    raw = raw.rstrip(b"\n")
    if not raw:
        return b""
    if raw[0] != 0x09 or b"\n\n" in raw:
        return b"\n".join(line[1:] if line[:1] == b"\t" else line for line in raw.split(b"\n"))
    return raw[1:].replace(b"\n\t", b"\n")


class LogReader:
    """Iterates over the records of one log file, collecting diagnostics."""

    def __init__(self, path: str | os.PathLike[str], display_path: str | None = None) -> None:
        self.path = os.fspath(path)
        self.display_path = display_path or self.path
        self.diagnostics: list[Diagnostic] = []
        self.size = 0
        self.lines = 0
        self._damaged: str | None = None  # why a compressed stream stopped early
        try:
            with open(self.path, "rb") as f:
                self.compressed = f.read(2) == _GZIP_MAGIC
        except OSError as e:
            raise TraceReadError(self.display_path, e.strerror or str(e)) from e
        self.store = PayloadStore(self.path, self.compressed)

    def _diag(self, kind: str, message: str, line: int) -> None:
        self.diagnostics.append(Diagnostic(kind, message, self.display_path, line))

    def _open(self) -> io.BufferedIOBase:
        try:
            if self.compressed:
                return gzip.open(self.path, "rb")
            return open(self.path, "rb")
        except OSError as e:
            raise TraceReadError(self.display_path, e.strerror or str(e)) from e

    def records(self) -> Iterator[Record]:
        """Yield every record that parses; report the rest as diagnostics."""
        with self._open() as f:
            yield from self._scan(f)

    def _read(self, f: io.BufferedIOBase, n: int) -> bytes:
        if not self.compressed:
            try:
                # read(n) allocates n bytes up front: ask for no more than the file holds.
                left = os.fstat(f.fileno()).st_size - f.tell()
                return f.read(max(1, min(n, left + 1)))
            except OSError as e:
                raise TraceReadError(self.display_path, e.strerror or str(e)) from e
        # Piece by piece, so that what came before a damaged part of the stream is kept.
        pieces: list[bytes] = []
        got = 0
        while got < n and self._damaged is None:
            try:
                piece = f.read1(n - got)
            except (OSError, EOFError, zlib.error) as e:  # gzip.BadGzipFile is an OSError
                self._damaged = f"the compressed stream is damaged: {e}"
                break
            if not piece:
                break
            pieces.append(piece)
            got += len(piece)
        return b"".join(pieces)

    def _scan(self, f: io.BufferedIOBase) -> Iterator[Record]:
        buf = b""
        buf_offset = 0  # file offset of buf[0]
        buf_line = 1  # line number of buf[0]
        scan_from = 0  # where in buf to look for the next record start
        read_size = CHUNK_SIZE
        eof = False
        self._damaged = None
        while not eof:
            data = self._read(f, read_size)
            self.size += len(data)
            eof = not data
            if data:
                buf = buf + data if buf else data
            if self._damaged is not None:
                eof = True  # what came before the damage is all there is
                line = buf_line + buf.count(b"\n") - (1 if buf.endswith(b"\n") else 0)
                self._diag("truncated", self._damaged, max(line, 1))
            starts = [m.start() + 1 for m in _RECORD_START.finditer(buf, scan_from)]
            if not eof and not starts:
                # One record longer than a chunk (e.g. a huge single line): read more at once.
                scan_from = max(0, len(buf) - 1)
                read_size = min(read_size * 2, MAX_READ_SIZE)
                continue
            read_size = CHUNK_SIZE
            bounds = [0, *starts, len(buf)] if eof else [0, *starts]
            line = buf_line
            prev = 0
            for i in range(len(bounds) - 1):
                s, e = bounds[i], bounds[i + 1]
                if s == e:
                    continue
                line += buf.count(b"\n", prev, s)
                prev = s
                rec = self._record(buf, s, e, buf_offset, line, eof and e == len(buf))
                if rec is not None:
                    yield rec
            if eof:
                # Lines of the file: newlines, plus an unterminated last line.
                self.lines = line - 1 + buf.count(b"\n", prev) + (1 if buf[-1:] not in b"\n" else 0)
                break
            keep = bounds[-1]
            buf_line = line + buf.count(b"\n", prev, keep)
            buf_offset += keep
            buf = buf[keep:]
            scan_from = 0

    def _record(
        self, buf: bytes, s: int, e: int, buf_offset: int, line: int, last: bool
    ) -> Record | None:
        # Blank lines start a segment only at the start of the log or, in a CRLF log,
        # as "\r" lines; they mean nothing (tlparse drops them too).
        while True:
            nl = buf.find(b"\n", s, e)
            head_end = e if nl < 0 else nl
            if head_end - s > 1 or (head_end - s == 1 and buf[s] != 0x0D):
                break
            if nl < 0:
                return None
            s = nl + 1
            line += 1
        truncated = last and not buf.endswith(b"\n")
        if buf[s] == 0x09:
            # Payload lines at the very start of the log, with no record before them.
            self._diag("prefix", "payload lines without a record line before them", line)
            return None
        head = buf[s:head_end]
        crlf = head.endswith(b"\r")
        if crlf:
            head = head[:-1]
        m = _PREFIX.match(head)
        if m is None:
            if truncated and nl < 0 and (head[:1] in b"VIWEC" or head.startswith(b"[")):
                self._diag("truncated", "the log ends in the middle of a record line", line)
            else:
                self._diag("prefix", f"not a trace record line: {_preview(head)}", line)
            return None
        try:
            text = head.decode("utf-8")
        except UnicodeDecodeError:
            self._diag("encoding", "the record line is not valid UTF-8", line)
            text = head.decode("utf-8", "replace")
        prefix_chars = len(head[: m.end()].decode("utf-8", "replace"))
        envelope = self._envelope(text[prefix_chars:], line, truncated and nl < 0)
        if envelope is None:
            return None
        payload = None
        body = None
        raw = buf[nl + 1 : e] if nl >= 0 else b""
        if raw[:1] == b"\t" or raw.strip(b"\n"):
            body = payload_body(raw.replace(b"\r\n", b"\n") if crlf else raw)
            offset = buf_offset + nl + 1
            self.store.keep(offset, raw)
            payload = Payload(self.store, offset, len(raw), len(body), crlf)
        expected = envelope.get("has_payload")
        verified = False
        if expected is None:
            if body is not None:
                self._diag(
                    "md5",
                    f"payload lines after {_event_name(envelope)}, which declares no payload "
                    "(no has_payload)",
                    line,
                )
        else:
            if body is None:
                body = b""
                payload = Payload(self.store, buf_offset + e, 0, 0, crlf)
            verified = isinstance(expected, str) and hashlib.md5(body).hexdigest() == expected
            if not verified:
                if truncated:
                    self._diag("truncated", "the log ends in the middle of a payload", line)
                else:
                    self._diag(
                        "md5",
                        f"payload of {_event_name(envelope)} does not match its md5 "
                        f"{str(expected)[:32]!r}",
                        line,
                    )
        if body and not verified:
            # A payload that matches its md5 is what torch encoded as UTF-8; check the rest.
            raw = buf[nl + 1 : e]
            try:
                raw.decode("utf-8")
            except UnicodeDecodeError as err:
                bad_line = line + 1 + raw.count(b"\n", 0, err.start)
                self._diag("encoding", "a payload line is not valid UTF-8", bad_line)
        return Record(
            line=line,
            timestamp=(m.group(2) + b" " + m.group(3)).decode("ascii"),
            pid=int(m.group(4)),
            source=m.group(5).decode("utf-8", "replace") + ":" + m.group(6).decode("ascii"),
            envelope=envelope,
            payload=payload,
            body=body,
        )

    def _envelope(self, text: str, line: int, truncated: bool) -> dict[str, Any] | None:
        try:
            value = json.loads(text)
        except ValueError as e:
            if truncated:
                self._diag("truncated", "the log ends in the middle of a record line", line)
            else:
                self._diag("json", f"the record's JSON does not parse: {e}", line)
            return None
        except RecursionError:
            self._diag("json", "the record's JSON is nested too deeply", line)
            return None
        if not isinstance(value, dict) or not value:
            self._diag("json", "the record's JSON is not a non-empty object", line)
            return None
        return value


def _event_name(envelope: dict[str, Any]) -> str:
    name = next(iter(envelope))
    inner = envelope.get(name)
    if name in ("artifact", "graph_dump") and isinstance(inner, dict):
        return f"{name} {inner.get('name')!r}"
    return name


def _preview(data: bytes, limit: int = 60) -> str:
    text = data[:limit].decode("utf-8", "replace")
    return repr(text + ("…" if len(data) > limit else ""))
