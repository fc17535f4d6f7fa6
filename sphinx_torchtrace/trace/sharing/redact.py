"""``redact`` and ``check``: a log streamed through :class:`~.redact_text.TextRedactor`.

The log is read in chunks of whole records (as :mod:`.reader` splits them) and each
chunk is redacted as one text, so the work per record is a comparison of bytes: a record
nothing changed is copied as it was.  A changed record whose payload matched its md5
gets the md5 of its new payload, computed as torch does (the payload lines without
their TAB, joined by newlines: :func:`~.reader.payload_body`); one that did not match
keeps its md5, so damage stays visible.  A record larger than a chunk is streamed: its
redacted payload waits in a spooled temporary file until its md5 is known.  Memory is
bounded by the chunk size whatever the log's size; gzip in, gzip out.

``check`` is the same pass with nothing written: what it would change, by line.  After
writing, ``redact`` checks its output so (seeded with the names and values it learned)
and reports what survived.
"""

from __future__ import annotations

import contextlib
import gzip
import hashlib
import json
import os
import re
import shutil
import tempfile
import zlib
from bisect import bisect_right
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

from ..diagnostics import TraceReadError
from ..reader import _StreamedBody, load_json, payload_body
from ..secrets import MAX_VALUE_CHARS, environment_values, name_findings, safe_cut
from .redact_text import Change, PathMap, TextRedactor

#: Bytes read at a time: a chunk is cut at its last record start (or, inside a record
#: longer than that, at a line's end).
CHUNK_SIZE = 4 << 20
#: Changes kept with their lines per log (``check`` lists them); the rest are counted.
MAX_CHANGES = 10_000
#: Payload bytes of one record held in memory before they spill to a temporary file.
SPOOL_BYTES = 16 << 20

_RECORD_START = re.compile(rb"\n[^\t\n]")
_HAS_PAYLOAD = re.compile(rb'"has_payload": ?"([0-9a-f]{32})"')
_STR_RECORD = re.compile(r'\] \{"str": \["((?:[^"\\\n]|\\.){0,4096})", (\d{1,12})\]')
_GZIP_MAGIC = b"\x1f\x8b"


@dataclass
class LogReport:
    """What one pass over a log changed (or, for ``check``, would change)."""

    path: str
    counts: Counter[str] = field(default_factory=Counter)
    changes: list[Change] = field(default_factory=list)  # the first MAX_CHANGES
    records: int = 0
    md5_recomputed: int = 0
    folders: dict[str, int] = field(default_factory=dict)  # new folder name -> paths
    remaining: list[Change] = field(default_factory=list)  # what redact's own check found

    def add(self, changes: list[Change], line: int) -> None:
        for c in changes:
            self.counts[c.kind] += 1
            if len(self.changes) < MAX_CHANGES:
                self.changes.append(c._replace(line=c.line + line - 1))

    @property
    def total(self) -> int:
        return sum(self.counts.values())

    def to_json(self) -> dict[str, Any]:
        return {
            "log": self.path,
            "counts": {k: self.counts[k] for k in sorted(self.counts)},
            "records": self.records,
            "md5_recomputed": self.md5_recomputed,
            "folders": dict(sorted(self.folders.items())),
            "findings": [{"line": c.line, "class": c.kind, "what": c.what} for c in self.changes],
            "more": max(0, self.total - len(self.changes)),
        }


@dataclass
class _Open:
    """A record whose payload goes on past the chunk: its head waits for its md5."""

    head: bytes  # as read
    new_head: bytes
    line: int
    crlf: bool
    json: bool
    old: _StreamedBody
    new: _StreamedBody
    spool: IO[bytes]


class LogRedactor:
    """One log through one :class:`TextRedactor` (``out`` None: only what it finds)."""

    def __init__(self, redactor: TextRedactor, report: LogReport, lines: bool) -> None:
        self.redactor = redactor
        self.report = report
        self.lines = lines
        self._open: _Open | None = None
        self._json = False  # the payload of the record the chunk starts inside is JSON
        self._continues = False  # the chunk starts inside a line the last one cut

    def run(self, source: IO[bytes], out: IO[bytes] | None) -> None:
        buf = b""
        line = 1  # of buf[0]
        while True:
            data = source.read(CHUNK_SIZE)
            buf = buf + data if buf else data
            if not data:
                if buf:
                    self._chunk(buf, line, out, final=True)
                break
            starts = [m.start() + 1 for m in _RECORD_START.finditer(buf)]
            cut = starts[-1] if starts else 0
            whole = True
            if cut == 0:
                if len(buf) < CHUNK_SIZE:
                    continue
                whole = False  # inside one long record: cut after a line, else in one
                cut = buf.rfind(b"\n") + 1 or safe_cut(buf)
            self._chunk(buf[:cut], line, out, final=whole)
            self._continues = not buf[cut - 1 : cut] == b"\n"
            line += buf.count(b"\n", 0, cut)
            buf = buf[cut:]
        self._close(out)

    # -- one chunk -----------------------------------------------------------------------

    def _chunk(self, chunk: bytes, line: int, out: IO[bytes] | None, final: bool) -> None:
        """Redact a chunk: whole records, after a continuation of the open record if any;
        ``final``: the chunk ends at a record start (its last record is complete)."""
        text = chunk.decode("utf-8", "surrogateescape")
        self._learn_files(text)
        json_lines = self._layout(text)
        new_text, changes = self.redactor.redact(text, json_lines, lines=self.lines)
        self.report.add(changes, line)
        new = new_text.encode("utf-8", "surrogateescape") if new_text != text else chunk
        old_starts = [0, *(m.start() + 1 for m in _RECORD_START.finditer(chunk))]
        new_starts = [0, *(m.start() + 1 for m in _RECORD_START.finditer(new))]
        if len(old_starts) != len(new_starts):  # pragma: no cover - a rule broke a line
            raise TraceReadError(self.report.path, "redaction changed the record structure")
        old_starts.append(len(chunk))
        new_starts.append(len(new))
        pos_line = line
        for i in range(len(old_starts) - 1):
            a, b = old_starts[i], old_starts[i + 1]
            c, d = new_starts[i], new_starts[i + 1]
            if a == b:
                continue
            old_rec, new_rec = chunk[a:b], new[c:d]
            starts_record = i > 0 or not (self._continues or chunk[:1] in (b"\n", b"\t", b"\r"))
            if not starts_record:  # the open record goes on
                self._feed(old_rec, new_rec, out)
            else:
                self._close(out)
                last = i == len(old_starts) - 2
                if last and not final:
                    self._start(old_rec, new_rec, pos_line)
                else:
                    self._whole(old_rec, new_rec, out)
            pos_line += old_rec.count(b"\n")

    def _layout(self, text: str) -> Callable[[int], bool]:
        """Where records start in ``text``, and a function telling whether the line at an
        offset is JSON: a record's line always, its payload when it starts with ``{`` or
        ``[`` (the chunk's first lines: as the open record's payload)."""
        starts = [m.start() + 1 for m in re.finditer(r"\n[^\t\n]", text)]
        if text[:1] not in ("\n", "\t", "\r", "") and not self._continues:
            starts.insert(0, 0)
        payload_json = []
        for s in starts:
            nl = text.find("\n", s)
            payload_json.append(nl >= 0 and text[nl + 1 : nl + 3] in ("\t{", "\t["))
        first_json = self._open.json if self._open is not None else self._json

        continues = self._continues

        def json_at(offset: int) -> bool:
            line_start = text.rfind("\n", 0, offset) + 1
            if line_start == 0 and continues:
                return first_json  # the rest of a line the last chunk cut
            if text[line_start : line_start + 1] not in ("\t", ""):
                return True  # a record's line (an envelope)
            i = bisect_right(starts, offset) - 1
            return first_json if i < 0 else payload_json[i]

        return json_at

    def _learn_files(self, text: str) -> None:
        if '{"str": [' not in text:
            return
        for m in _STR_RECORD.finditer(text):
            try:
                name = json.loads('"' + m.group(1) + '"')
            except ValueError:
                continue
            self.redactor.learn_file(int(m.group(2)), name)

    # -- records -------------------------------------------------------------------------

    def _whole(self, old: bytes, new: bytes, out: IO[bytes] | None) -> None:
        self.report.records += 1
        if out is None:
            return
        if old == new:
            out.write(old)
            return
        nl = new.find(b"\n")
        head, payload = (new, b"") if nl < 0 else (new[: nl + 1], new[nl + 1 :])
        old_nl = old.find(b"\n")
        old_head = old if old_nl < 0 else old[: old_nl + 1]
        old_payload = b"" if old_nl < 0 else old[old_nl + 1 :]
        crlf = old_head.rstrip(b"\n").endswith(b"\r")
        head = self._valid_head(old_head, head)
        if payload != old_payload:
            head = self._rehash(head, _md5_of(old_payload, crlf), _md5_of(payload, crlf))
        out.write(head)
        out.write(payload)

    def _start(self, old: bytes, new: bytes, line: int) -> None:
        nl = old.find(b"\n")
        new_nl = new.find(b"\n")
        head = old[: nl + 1] if nl >= 0 else old
        new_head = new[: new_nl + 1] if new_nl >= 0 else new
        crlf = head.rstrip(b"\n").endswith(b"\r")
        payload = old[nl + 1 :] if nl >= 0 else b""
        self._open = _Open(
            head,
            self._valid_head(head, new_head),
            line,
            crlf,
            payload[:2] in (b"\t{", b"\t["),
            _StreamedBody(crlf),
            _StreamedBody(crlf),
            tempfile.SpooledTemporaryFile(SPOOL_BYTES, prefix="torchtrace-redact-"),
        )
        self._json = self._open.json
        self._feed(payload, new[new_nl + 1 :] if new_nl >= 0 else b"", None)

    def _feed(self, old: bytes, new: bytes, out: IO[bytes] | None) -> None:
        rec = self._open
        if rec is None:  # payload lines before any record: copied as they are
            if out is not None:
                out.write(new)
            return
        rec.old.feed(old)
        rec.new.feed(new)
        rec.spool.write(new)

    def _close(self, out: IO[bytes] | None) -> None:
        rec, self._open = self._open, None
        if rec is None:
            return
        self.report.records += 1
        if out is not None:
            head = self._rehash(rec.new_head, rec.old.md5.hexdigest(), rec.new.md5.hexdigest())
            out.write(head)
            rec.spool.seek(0)
            shutil.copyfileobj(rec.spool, out, 1 << 20)
        rec.spool.close()

    def _rehash(self, head: bytes, old_md5: str, new_md5: str) -> bytes:
        """The record line with the md5 of its new payload, if the old one matched."""
        m = _HAS_PAYLOAD.search(head)
        if m is None or old_md5 == new_md5 or m.group(1).decode() != old_md5:
            return head
        self.report.md5_recomputed += 1
        return head[: m.start(1)] + new_md5.encode() + head[m.end(1) :]

    def _valid_head(self, old: bytes, new: bytes) -> bytes:
        """The redacted record line, or, if its JSON no longer parses (never seen: every
        replacement is JSON-safe), the record redacted value by value."""
        if old == new:
            return new
        brace = new.find(b"{")
        old_brace = old.find(b"{")
        if brace < 0 or old_brace < 0:
            return new
        try:
            load_json(new[brace:])
            return new
        except ValueError:
            pass
        try:
            value = load_json(old[old_brace:])
        except ValueError:
            return new  # it did not parse before either
        text = self.redactor
        redacted = _redact_values(value, lambda s: text.redact(s, False)[0])
        end = b"\r\n" if old.endswith(b"\r\n") else b"\n" if old.endswith(b"\n") else b""
        return new[:brace] + json.dumps(redacted).encode() + end


def _redact_values(value: Any, redact: Callable[[str], str]) -> Any:
    """A decoded JSON value with every string (keys too) redacted (:func:`load_json`
    bounds its depth)."""
    if isinstance(value, str):
        return redact(value)
    if isinstance(value, dict):
        return {redact(k): _redact_values(v, redact) for k, v in value.items()}
    if isinstance(value, list):
        return [_redact_values(v, redact) for v in value]
    return value


def _md5_of(raw: bytes, crlf: bool) -> str:
    body = payload_body(raw.replace(b"\r\n", b"\n") if crlf else raw) if raw else b""
    return hashlib.md5(body).hexdigest()


# -- files ---------------------------------------------------------------------------------


def open_log(path: Path) -> tuple[Any, bool]:
    """A log's bytes (decompressed) and whether it is gzip."""
    try:
        with open(path, "rb") as f:
            compressed = f.read(2) == _GZIP_MAGIC
        return (gzip.open(path, "rb") if compressed else open(path, "rb")), compressed
    except OSError as e:
        raise TraceReadError(str(path), e.strerror or str(e)) from e


def learn_environment(path: Path, redactor: TextRedactor) -> None:
    """Learn every value of an environment variable the log compares or sets, before the
    pass that masks: a log may quote a value (a string argument's guard) ahead of the
    guard on the variable that names it."""
    if not redactor.options.secrets:
        return
    source, _ = open_log(path)
    carry = ""
    try:
        with source:
            while data := source.read(CHUNK_SIZE):
                text = carry + data.decode("utf-8", "surrogateescape")
                cut = text.rfind("\n") + 1
                carry = text[cut:][-MAX_VALUE_CHARS:]
                for secret in environment_values(text[:cut] if cut else text):
                    redactor.masker.learn(secret)
            for secret in environment_values(carry):
                redactor.masker.learn(secret)
    except (OSError, EOFError) as e:
        raise TraceReadError(str(path), str(e)) from e


def scan_log(path: Path, redactor: TextRedactor) -> LogReport:
    """``check``: what redaction would change in a log, by line; and, at line 0, a secret
    its file's name (any folder of its path, the name a gzip header keeps) holds."""
    report = LogReport(str(path))
    learn_environment(path, redactor)
    source, compressed = open_log(path)
    try:
        with source:
            LogRedactor(redactor, report, lines=True).run(source, None)
    except (OSError, EOFError) as e:
        raise TraceReadError(str(path), str(e)) from e
    if redactor.options.secrets:
        names = [("the name", os.fspath(path))]
        if compressed:
            names += _gzip_names(path)
        for where, name in names:
            report.add(
                [
                    Change(0, "secrets", f"{where} holds {s.describe()}")
                    for s in name_findings(name, redactor.masker)
                ],
                1,
            )
    return report


#: Bytes of one gzip header field (a name, a comment) read, at most.
MAX_GZIP_FIELD = 1 << 16
#: gzip members whose headers are read, at most (a log written in pieces has a few).
MAX_GZIP_MEMBERS = 10_000


class _Stream:
    """A file's bytes with the ones read too far pushed back (a member's end is known only
    once its deflate stream is read)."""

    def __init__(self, f: IO[bytes]) -> None:
        self.f = f
        self.buf = b""

    def take(self, n: int) -> bytes:
        while len(self.buf) < n:
            data = self.f.read(max(n - len(self.buf), 1 << 16))
            if not data:
                break
            self.buf += data
        out, self.buf = self.buf[:n], self.buf[n:]
        return out

    def some(self) -> bytes:
        out, self.buf = (self.buf, b"") if self.buf else (self.f.read(1 << 20), b"")
        return out

    def field(self) -> bytes:
        """A zero-ended header field (its first :data:`MAX_GZIP_FIELD` bytes)."""
        out = b""
        while True:
            data = self.take(4096)
            if not data:
                return out[:MAX_GZIP_FIELD]
            end = data.find(b"\0")
            if end >= 0:
                self.buf = data[end + 1 :] + self.buf
                return (out + data[:end])[:MAX_GZIP_FIELD]
            out = (out + data)[: MAX_GZIP_FIELD + 1]


def _gzip_names(path: Path) -> list[tuple[str, str]]:
    """The names and comments the headers of a gzip file keep (``FNAME``, ``FCOMMENT``), of
    every member (RFC 1952: a log written in pieces, ``cat a.gz b.gz``, is one gzip file
    of several members, each with its header), as (which field, its text).  Each member's
    deflate stream is read through to find the next header, its output dropped a MiB at a
    time: bounded memory."""
    found: list[tuple[str, str]] = []
    try:
        with open(path, "rb") as f:
            src = _Stream(f)
            for member in range(MAX_GZIP_MEMBERS):
                head = src.take(10)
                if len(head) < 10 or head[:3] != _GZIP_MAGIC + b"\x08":
                    break  # the end, or bytes gzip itself ignores after the last member
                flags = head[3]
                if flags & 0x04:
                    src.take(int.from_bytes(src.take(2), "little"))
                which = "the gzip header's" if member == 0 else f"gzip member {member + 1}'s"
                if flags & 0x08:
                    found.append((f"{which} file name", src.field().decode("latin-1")))
                if flags & 0x10:
                    found.append((f"{which} comment", src.field().decode("latin-1")))
                if flags & 0x02:
                    src.take(2)
                if not _skip_deflate(src):
                    break
                src.take(8)  # CRC32 and size
    except (OSError, zlib.error):
        pass  # reading the log says why it cannot be read
    return found


def _skip_deflate(src: _Stream) -> bool:
    """Read one member's deflate stream through; whether it ended."""
    stream = zlib.decompressobj(-zlib.MAX_WBITS)
    while not stream.eof:
        data = src.some()
        if not data:
            return False
        out = stream.decompress(data, 1 << 20)
        while not stream.eof and (stream.unconsumed_tail or len(out) == 1 << 20):
            out = stream.decompress(stream.unconsumed_tail, 1 << 20)
    src.buf = stream.unused_data + src.buf
    return True


def redact_log(path: Path, dest: Path, redactor: TextRedactor) -> LogReport:
    """Write ``path`` redacted to ``dest`` (gzip if it was), then check ``dest`` with what
    was learned; the report's ``remaining``: what the check still found."""
    report = LogReport(str(path))
    learn_environment(path, redactor)
    source, compressed = open_log(path)
    dest.parent.mkdir(parents=True, exist_ok=True)
    part = dest.with_name(dest.name + ".part")
    try:
        with source, open(part, "wb") as raw:
            sink: contextlib.AbstractContextManager[Any] = (
                gzip.GzipFile(filename="", mode="wb", fileobj=raw, mtime=0)
                if compressed
                else contextlib.nullcontext(raw)
            )
            with sink as out:
                LogRedactor(redactor, report, lines=False).run(source, out)
        os.replace(part, dest)
    except (OSError, EOFError) as e:
        part.unlink(missing_ok=True)
        raise TraceReadError(str(path), str(e)) from e
    except TraceReadError:
        part.unlink(missing_ok=True)  # no half-written file left beside the output
        raise
    report.folders = dict(redactor.paths.used)
    report.remaining = check_again(dest, redactor)
    return report


def check_again(path: Path, redactor: TextRedactor) -> list[Change]:
    """What a fresh pass finds in a redacted log, knowing what the redaction learned."""
    again = TextRedactor(redactor.options, PathMap(), redactor.files, redactor.masker)
    again.names.update(redactor.names)
    return scan_log(path, again).changes
