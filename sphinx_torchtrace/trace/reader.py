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
the ``\\r`` before each ``\\n`` is not part of the payload torch hashed.

Logs are untrusted, so every cost is bounded: at most ``max_bytes`` of a log
(decompressed) are read, a record larger than :data:`MAX_RECORD_BYTES` is
hashed as it streams by instead of being held, a gzip log's payloads are
re-read from a temporary file rather than kept in memory, and JSON is decoded
only through :func:`load_json`, which refuses nesting deeper than
:data:`MAX_JSON_DEPTH` instead of overflowing the stack.
"""

from __future__ import annotations

import gzip
import hashlib
import io
import json
import os
import re
import stat
import tempfile
import threading
import weakref
import zlib
from collections import OrderedDict
from collections.abc import Callable, Generator, Iterator, Sequence
from dataclasses import dataclass
from typing import IO, Any

from .diagnostics import Diagnostic, DiagnosticSubtype, TraceReadError, quote
from .secrets import SecretScan, SecretScanner

#: Bytes read at a time.  Large enough that per-chunk costs vanish, small
#: enough to keep the reader's peak memory far below the size of a big log.
CHUNK_SIZE = 4 << 20
#: A record larger than this is not held in memory: its payload is checked
#: against its md5 as it streams by and kept as a location only, unanalysed.
MAX_RECORD_BYTES = 64 << 20
#: Bytes (decompressed) read from one log at most, unless the caller says otherwise.
DEFAULT_MAX_LOG_BYTES = 1 << 30
#: Deepest JSON nesting decoded: real logs nest a few levels; deeper input is hostile and
#: would overflow the stack of the decoder or of whatever walks the value afterwards.
MAX_JSON_DEPTH = 100

# `[rank0]:` is tolerated like tlparse does; the path part may hold spaces but no colon.
# The pid is bounded so that int() never meets a number too long to convert.
_PREFIX = re.compile(
    rb"(?:\[rank\d+\]:)?([VIWEC])(\d{4}) (\d\d:\d\d:\d\d\.\d{6}) +(\d{1,19}) ([^:]+):(\d+)\] "
)
# A record starts on every line that is neither a payload line (TAB) nor blank.
_RECORD_START = re.compile(rb"\n[^\t\n]")
_GZIP_MAGIC = b"\x1f\x8b"
_PLAIN_NAME = re.compile(r"[A-Za-z0-9_]{1,60}")
# For the JSON depth scan: escape pairs, every byte but quotes and brackets, then the strings
# that remain (an unterminated one runs to the end), and runs of brackets.  Possessive and
# without alternatives: nothing backtracks, and most of the work is bytes.translate.
_JSON_ESCAPE = re.compile(rb"\\.", re.DOTALL)
_NOT_JSON_STRUCTURE = bytes(set(range(256)) - set(b'"[]{}'))
_JSON_STRING = re.compile(rb'"[^"]*"?')
_BRACKET_RUN = re.compile(rb"[\[{]+|[\]}]+")
_OPENING = frozenset(b"[{")


# -- JSON ------------------------------------------------------------------------


class JsonNestingError(ValueError):
    """JSON nested deeper than :data:`MAX_JSON_DEPTH`: refused, not decoded."""


def json_too_deep(data: str | bytes, limit: int = MAX_JSON_DEPTH) -> bool:
    """Whether ``data`` nests brackets deeper than ``limit`` outside its strings.

    Linear and mostly in C: text with few brackets is cleared by counting them;
    otherwise only quotes and brackets are kept, strings removed, and the runs of
    brackets that remain are summed.
    """
    if isinstance(data, str):
        if data.count("[") + data.count("{") <= limit:
            return False
        data = data.encode("utf-8", "surrogatepass")
    elif data.count(b"[") + data.count(b"{") <= limit:
        return False
    if b"\\" in data:
        data = _JSON_ESCAPE.sub(b"", data)
    structure = _JSON_STRING.sub(b"", data.translate(None, _NOT_JSON_STRUCTURE))
    depth = 0
    for run in _BRACKET_RUN.findall(structure):
        if run[0] in _OPENING:
            depth += len(run)
            if depth > limit:
                return True
        else:
            depth = max(0, depth - len(run))
    return False


def load_json(data: str | bytes, limit: int = MAX_JSON_DEPTH) -> Any:
    """``json.loads`` that refuses deep nesting with :class:`JsonNestingError` (a ValueError).

    Every JSON text of a log goes through here, so no decoder and no code that
    walks a decoded value recursively can meet a ``RecursionError``.
    """
    if json_too_deep(data, limit):
        raise JsonNestingError(f"JSON nested more than {limit} levels deep")
    try:
        return json.loads(data)
    except RecursionError:  # only if the stack is already deep where this is called
        raise JsonNestingError("JSON nested too deeply for the stack") from None


def json_list(value: Any) -> list[Any]:
    """``value`` where a log's JSON should hold a list, else ``[]``: any value of a log may
    be any JSON type (a number where a list was is no reason to fail a page)."""
    return value if isinstance(value, list) else []


def json_object(value: Any) -> dict[str, Any]:
    """``value`` where a log's JSON should hold an object, else ``{}`` (see :func:`json_list`)."""
    return value if isinstance(value, dict) else {}


# -- payloads --------------------------------------------------------------------


#: Logs kept open at once across all stores (see ``PayloadStore._plain_fd``): a plain log
#: is one open file, a gzip log two (its stream and its spill).  macOS allows a process
#: 256 open files, Linux 1,024, and a job may have thousands of ranks.
OPEN_LOGS = 64
_OPEN: OrderedDict[int, weakref.ref[PayloadStore]] = OrderedDict()
_OPEN_LOCK = threading.Lock()


def _close_box(box: list[int]) -> None:
    if box and box[0] >= 0:
        try:
            os.close(box[0])
        except OSError:
            pass
        box[0] = -1


def _opened(store: PayloadStore) -> None:
    """Mark a store's log as read last; close the logs read least recently past the cap."""
    with _OPEN_LOCK:
        _OPEN[id(store)] = weakref.ref(store)
        _OPEN.move_to_end(id(store))
        for key in list(_OPEN)[: max(0, len(_OPEN) - OPEN_LOGS)]:
            other = _OPEN[key]()
            if other is None or other._close_if_idle():
                del _OPEN[key]


class PayloadStore:
    """Reads payload bytes back from a log file on demand; none stay in memory.

    Plain files are re-read by offset.  A gzip stream cannot seek, so on the first
    read the log is decompressed, as far as that read needs, into an anonymous
    temporary file, and later reads come from there (decompression goes on from
    where it stopped): memory stays bounded whatever a gzip log expands to, and
    the file holds at most ``max_bytes``, the bytes of the log that were read.
    """

    def __init__(self, path: str, compressed: bool, max_bytes: int = DEFAULT_MAX_LOG_BYTES) -> None:
        self.path = path
        self.compressed = compressed
        self.max_bytes = max_bytes
        self._spill: IO[bytes] | None = None
        self._spilled = 0  # bytes of the decompressed log in the spill file, from offset 0
        self._complete = False  # the spill holds the whole log, or max_bytes of it
        self._source: io.BufferedIOBase | None = None  # where decompression goes on
        self._source_pid = 0  # forked Sphinx workers must not share one stream position
        self._lock = threading.Lock()
        #: The plain log, open while it is among the :data:`OPEN_LOGS` read last (a build
        #: reads it 10^4 times); in a box its finalizer closes, should the store go first.
        self._fd: list[int] | None = None

    def read_raw(self, offset: int, length: int) -> bytes:
        if length <= 0 or offset < 0:
            return b""
        if not self.compressed:
            try:
                if hasattr(os, "pread"):  # positionless: threads and forked workers share it
                    _opened(self)  # read last: others past the cap are closed, never this one
                    with self._lock:  # held while reading: an open log is closed only idle
                        return os.pread(self._plain_fd(), length, offset)
                with open(self.path, "rb") as f:  # pragma: no cover - Windows
                    f.seek(offset)
                    return f.read(length)
            except OSError as e:
                raise TraceReadError(self.path, e.strerror or str(e)) from e
        _opened(self)
        with self._lock:
            self._fill(min(offset + length, self.max_bytes))
            return self._pread(offset, max(0, min(length, self._spilled - offset)))

    def _plain_fd(self) -> int:
        """The log, opened once and kept open (``self._lock`` held), so a log replaced on
        disk meanwhile (a recapture) is still read as it was when the model was built;
        past :data:`OPEN_LOGS` open logs (a thousand-rank job, where the usual limit is
        1,024 open files), the ones read least recently are closed, and opened again when
        next read."""
        if self._fd is None or self._fd[0] < 0:
            box = [os.open(self.path, os.O_RDONLY | getattr(os, "O_CLOEXEC", 0))]
            weakref.finalize(self, _close_box, box)
            self._fd = box
        return self._fd[0]

    def _close_if_idle(self) -> bool:
        """Close the log unless a read holds it now; whether it was closed.  A gzip log's
        spill goes too (a thousand ranks' spills would be gigabytes of temporary files):
        its next read decompresses it again."""
        if not self._lock.acquire(blocking=False):
            return False
        try:
            if self._fd is not None:
                _close_box(self._fd)
                self._fd = None
            if self._source is not None and self._source_pid == os.getpid():
                self._source.close()
            if self._spill is not None:
                self._spill.close()
            self._source, self._spill, self._spilled, self._complete = None, None, 0, False
            return True
        finally:
            self._lock.release()

    def _fill(self, end: int) -> None:
        """Decompress the log into the spill file up to ``end`` (a damaged stream ends it)."""
        try:
            while self._spilled < end and not self._complete:
                # read1: what precedes a damaged part of the stream is kept, as the reader keeps it
                data = self._stream().read1(min(CHUNK_SIZE, self.max_bytes - self._spilled))
                if not data:
                    self._complete = True
                    break
                self._write(data)
        except (EOFError, zlib.error, OSError) as e:
            if isinstance(e, FileNotFoundError | PermissionError):
                raise TraceReadError(self.path, e.strerror or str(e)) from e
            self._complete = True  # a damaged stream: the reader stopped there too
        if self._spilled >= self.max_bytes:
            self._complete = True

    def _stream(self) -> io.BufferedIOBase:
        """The decompressed log, positioned at the end of the spill (reopened in a new process)."""
        if self._source is None or self._source_pid != os.getpid():
            source = gzip.open(self.path, "rb")
            skipped = 0
            while skipped < self._spilled:  # what this process's spill already holds
                data = source.read1(min(CHUNK_SIZE, self._spilled - skipped))
                if not data:
                    break
                skipped += len(data)
            self._source, self._source_pid = source, os.getpid()
        return self._source

    def _write(self, data: bytes) -> None:
        if self._spill is None:
            self._spill = tempfile.TemporaryFile(prefix="torchtrace-")
        # pwrite/pread at offsets: forked Sphinx workers share the file's position.
        if hasattr(os, "pwrite"):
            os.pwrite(self._spill.fileno(), data, self._spilled)
        else:  # pragma: no cover - Windows
            self._spill.seek(self._spilled)
            self._spill.write(data)
            self._spill.flush()
        self._spilled += len(data)

    def _pread(self, offset: int, length: int) -> bytes:
        if self._spill is None or length <= 0:
            return b""
        if hasattr(os, "pread"):
            return os.pread(self._spill.fileno(), length, offset)
        self._spill.seek(offset)  # pragma: no cover - Windows
        return self._spill.read(length)  # pragma: no cover - Windows


@dataclass(slots=True)
class Payload:
    """A record's payload, located in its log but not held in memory."""

    store: PayloadStore
    offset: int  # byte offset of the first payload line (its leading TAB)
    length: int  # bytes of the payload lines as they are in the file
    size: int  # bytes of the payload itself (TABs stripped)
    crlf: bool = False  # the record's lines end in CRLF (a log written in text mode on Windows)

    def read_bytes(self) -> bytes:
        return self.body_of(self.store.read_raw(self.offset, self.length))

    def body_of(self, raw: bytes) -> bytes:
        """The payload from its lines as they are in the file (``raw``)."""
        return payload_body(raw.replace(b"\r\n", b"\n") if self.crlf else raw)

    def text(self) -> str:
        """The payload as torch wrote it, with invalid UTF-8 replaced."""
        return self.read_bytes().decode("utf-8", "replace")


#: Bytes of a plain log read at once for payloads that lie close together.
READ_WINDOW = 4 << 20


def read_payloads(payloads: Sequence[Payload]) -> Iterator[bytes]:
    """Each payload's bytes, in order, as :meth:`Payload.read_bytes` gives them; payloads of
    one plain log that lie within :data:`READ_WINDOW` of each other (a rank's timing
    events, read for the timeline of all ranks) are read in one piece, not one read each."""
    i = 0
    while i < len(payloads):
        first = payloads[i]
        if first.store.compressed or first.length > READ_WINDOW:
            yield first.read_bytes()
            i += 1
            continue
        start, end, j = first.offset, first.offset + first.length, i + 1
        while j < len(payloads):
            p = payloads[j]
            apart = p.offset < end or p.offset + p.length - start > READ_WINDOW
            if p.store is not first.store or apart:
                break
            end, j = p.offset + p.length, j + 1
        block = first.store.read_raw(start, end - start)
        for p in payloads[i:j]:
            yield p.body_of(block[p.offset - start : p.offset - start + p.length])
        i = j


@dataclass(slots=True)
class Record:
    """One record of a log: its envelope and, while reading, its payload bytes.

    ``body`` is None for a record without payload lines, and also for a payload
    larger than :data:`MAX_RECORD_BYTES`, which is located but never held.
    """

    line: int  # 1-based line number of the envelope line
    timestamp: str  # "MMDD HH:MM:SS.ffffff", local time, no year
    pid: int
    source: str  # "torch/_dynamo/utils.py:2350": where torch logged it
    envelope: dict[str, Any]
    payload: Payload | None
    body: bytes | None  # payload bytes; only valid during iteration

    @property
    def event(self) -> str:
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


class _StreamedBody:
    """The md5 and size of a payload fed in pieces, as :func:`payload_body` would make it.

    Pieces are cut just before a newline (or inside one huge line), so a line's
    TAB and a CRLF pair are always in one piece.
    """

    def __init__(self, crlf: bool) -> None:
        self.crlf = crlf
        self.md5 = hashlib.md5()
        self.size = 0
        self.length = 0  # raw bytes fed
        self.present = False  # anything but blank lines: the record has a payload
        self.first = True
        self.held = 0  # trailing newlines not yet known to be inside the payload

    def feed(self, raw: bytes) -> None:
        if not raw:
            return
        self.length += len(raw)
        self.present = self.present or raw.count(b"\n") != len(raw)
        text = raw.replace(b"\r\n", b"\n") if self.crlf else raw
        if text.count(b"\n") == len(text):  # blank lines (counting is cheaper than stripping)
            self.first = False
            self.held += len(text)
            return
        # Trailing blank lines belong to the payload only if a payload line follows.
        kept = text.rstrip(b"\n")
        trailing = len(text) - len(kept)
        if self.first:
            self.first = False
            if kept[:1] == b"\t":
                kept = kept[1:]
        if not kept:
            self.held += trailing
            return
        while self.held:
            newlines = min(self.held, CHUNK_SIZE)
            self.md5.update(b"\n" * newlines)
            self.size += newlines
            self.held -= newlines
        kept = kept.replace(b"\n\t", b"\n")
        self.md5.update(kept)
        self.size += len(kept)
        self.held = trailing


class LogReader:
    """Iterates over the records of one log file, collecting diagnostics.

    At most ``max_bytes`` of the log (decompressed) are read: a longer log is cut
    at the last whole record before that, with a ``limit`` diagnostic.
    """

    def __init__(
        self,
        path: str | os.PathLike[str],
        display_path: str | None = None,
        *,
        max_bytes: int = DEFAULT_MAX_LOG_BYTES,
        progress: Callable[[int], None] | None = None,
    ) -> None:
        self.path = os.fspath(path)
        self.display_path = display_path or self.path
        self.max_bytes = max(1, max_bytes)
        #: told the bytes of the file read so far (compressed bytes of a gzip log), once
        #: per chunk, so a command line can draw a progress bar against the file's size
        self.progress = progress
        self._raw: IO[bytes] | None = None
        self.diagnostics: list[Diagnostic] = []
        self.size = 0
        self.lines = 0
        self._damaged: str | None = None  # why a compressed stream stopped early
        self._cut = False  # the log holds more than max_bytes: reading stopped there
        self._tail = b""  # the last byte read
        self._secrets = SecretScanner()  # every byte read is looked at once (.secrets)
        self.secrets = SecretScan()  # what looks secret in the log, once it was read
        try:
            if not stat.S_ISREG(os.stat(self.path).st_mode):
                # A FIFO would block the build, a device never end.
                raise TraceReadError(self.display_path, "not a regular file")
            with open(self.path, "rb") as f:
                self.compressed = f.read(2) == _GZIP_MAGIC
        except OSError as e:
            if isinstance(e, TraceReadError):
                raise
            raise TraceReadError(self.display_path, e.strerror or str(e)) from e
        self.store = PayloadStore(self.path, self.compressed, self.max_bytes)

    def _diag(self, subtype: DiagnosticSubtype, message: str, line: int) -> None:
        self.diagnostics.append(Diagnostic(subtype, message, self.display_path, line))

    def _open(self) -> io.BufferedIOBase:
        try:
            raw = open(self.path, "rb")  # noqa: SIM115 - closed by records()
        except OSError as e:
            raise TraceReadError(self.display_path, e.strerror or str(e)) from e
        self._raw = raw  # its position is how far a gzip log's file was read
        return gzip.GzipFile(fileobj=raw, mode="rb") if self.compressed else raw

    def records(self) -> Iterator[Record]:
        """Yield every record that parses; report the rest as diagnostics."""
        self._secrets = SecretScanner()
        f = self._open()
        try:
            with f:
                yield from self._scan(f)
        finally:
            if self._raw is not None:
                self._raw.close()  # a GzipFile leaves the file it was given open
                self._raw = None
        self.secrets = self._secrets.close()

    # -- reading -----------------------------------------------------------

    def _read(self, f: io.BufferedIOBase, n: int) -> bytes:
        """Up to ``n`` more bytes of the log, never past ``max_bytes``."""
        left = self.max_bytes - self.size
        if left <= 0:
            self._cut = self._cut or self._more(f)
            return b""
        data = self._read_raw(f, min(n, left))
        if data:
            self.size += len(data)
            self._tail = data[-1:]
            self._secrets.feed(data)
            if self.progress is not None and self._raw is not None:
                try:
                    self.progress(self._raw.tell())
                except (OSError, ValueError):  # a closed or unseekable file: no bar
                    pass
        return data

    def _read_raw(self, f: io.BufferedIOBase, n: int) -> bytes:
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

    def _more(self, f: io.BufferedIOBase) -> bool:
        """Whether the log goes on past what was read."""
        try:
            if not self.compressed:
                return os.fstat(f.fileno()).st_size > f.tell()
            return bool(f.read1(1))
        except (OSError, EOFError, zlib.error):
            return False

    # -- splitting into records ----------------------------------------------

    def _scan(self, f: io.BufferedIOBase) -> Iterator[Record]:
        buf = b""
        buf_offset = 0  # file offset of buf[0]
        buf_line = 1  # line number of buf[0]
        scan_from = 0  # where in buf to look for the next record start
        read_size = CHUNK_SIZE
        eof = False
        self._damaged = None
        self._cut = False
        while not eof:
            data = self._read(f, read_size)
            if data:
                buf = buf + data if buf else data
            eof = not data or self._damaged is not None
            if self._damaged is not None:
                line = buf_line + buf.count(b"\n") - (1 if buf.endswith(b"\n") else 0)
                self._diag("truncated", self._damaged, max(line, 1))
            starts = [m.start() + 1 for m in _RECORD_START.finditer(buf, scan_from)]
            if not eof and not starts:
                if len(buf) < MAX_RECORD_BYTES:
                    # One record longer than a chunk (e.g. a huge single line): read more at once.
                    scan_from = max(0, len(buf) - 1)
                    read_size = min(read_size * 2, MAX_RECORD_BYTES // 4)
                    continue
                buf, buf_offset, buf_line, eof = yield from self._stream(
                    f, buf, buf_offset, buf_line
                )
                scan_from = 0
                read_size = CHUNK_SIZE
                continue
            read_size = CHUNK_SIZE
            # The last segment of a cut log is an incomplete record: it is left out.
            bounds = [0, *starts, len(buf)] if eof and not self._cut else [0, *starts]
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
            if eof and self._cut:
                line += buf.count(b"\n", prev, bounds[-1])
                self._cut_at(line)
                self.lines = line - 1
                break
            if eof:
                # Lines of the file: newlines, plus an unterminated last line.
                self.lines = line - 1 + buf.count(b"\n", prev) + (1 if buf[-1:] not in b"\n" else 0)
                break
            keep = bounds[-1]
            buf_line = line + buf.count(b"\n", prev, keep)
            buf_offset += keep
            buf = buf[keep:]
            scan_from = 0

    def _stream(
        self, f: io.BufferedIOBase, buf: bytes, buf_offset: int, buf_line: int
    ) -> Generator[Record, None, tuple[bytes, int, int, bool]]:
        """A record larger than MAX_RECORD_BYTES: hash its payload as it streams by.

        ``buf`` starts with the record and holds no other record start.  Returns
        what follows the record: the buffer, its offset and line, and whether
        the log ended (or was cut) inside the record.
        """
        s = 0
        while buf.startswith(b"\n", s) or buf.startswith(b"\r\n", s):
            s = buf.index(b"\n", s) + 1
        line = record_line = buf_line + buf.count(b"\n", 0, s)
        nl = buf.find(b"\n", s)
        head: tuple[re.Match[bytes], dict[str, Any], bool] | None = None
        if buf[s : s + 1] == b"\t":
            self._diag("prefix", "payload lines without a record line before them", line)
        elif nl < 0:
            self._diag(
                "limit", f"a record line longer than {_size(MAX_RECORD_BYTES)} is left out", line
            )
        else:
            head = self._head(buf[s:nl], line, cut_line=False)
        line = buf_line  # of buf[0], as buf moves on
        start = nl + 1 if nl >= 0 else len(buf)
        body = _StreamedBody(crlf=head is not None and head[2])
        # The payload of a record that is left out is skipped, not hashed.
        feed: Callable[[bytes], None] = body.feed if head is not None else _skip
        payload_offset = buf_offset + start
        search_from = max(0, start - 1)  # the record line's own newline: an empty payload
        eof = False
        while True:
            m = _RECORD_START.search(buf, search_from)
            if m is not None or eof:
                break
            # Feed whole lines, a chunk at a time, so no copy is larger than a chunk.
            while len(buf) - start >= CHUNK_SIZE:
                window = start + CHUNK_SIZE
                split = buf.rfind(b"\n", start + 2, window)  # cut just before a newline ...
                if split < 0:
                    split = window  # ... or inside a huge line
                if buf[split - 1] == 0x0D and split - 1 > start:
                    split -= 1  # keep a CRLF pair together
                feed(buf[start:split])
                start = split
            line += buf.count(b"\n", 0, start)
            buf_offset += start
            buf = buf[start:]
            start = 0
            search_from = 0
            data = self._read(f, CHUNK_SIZE)
            buf += data
            eof = not data or self._damaged is not None
        end = m.start() + 1 if m is not None else len(buf)
        feed(buf[start:end])
        rest_line = line + buf.count(b"\n", 0, end)
        ended = m is None
        if ended and self._cut:
            self._cut_at(record_line)  # an incomplete record: left out
            self.lines = record_line - 1
            return b"", buf_offset + end, rest_line, True
        if ended and self._damaged is not None:
            self._diag("truncated", self._damaged, max(1, rest_line - (self._tail == b"\n")))
        if head is not None:
            yield self._streamed_record(head, record_line, body, payload_offset, ended)
        if ended:
            self.lines = rest_line - 1 + (1 if self.size and self._tail != b"\n" else 0)
        return buf[end:], buf_offset + end, rest_line, ended

    def _streamed_record(
        self,
        head: tuple[re.Match[bytes], dict[str, Any], bool],
        line: int,
        body: _StreamedBody,
        offset: int,
        last: bool,
    ) -> Record:
        m, envelope, crlf = head
        payload = Payload(self.store, offset, body.length, body.size, crlf)
        expected = envelope.get("has_payload")
        name = _event_name(envelope)
        if expected is None:
            if body.present:
                self._diag(
                    "md5",
                    f"payload lines after {name}, which declares no payload (no has_payload)",
                    line,
                )
        elif not (isinstance(expected, str) and body.md5.hexdigest() == expected):
            if last and self._tail != b"\n":
                self._diag("truncated", "the log ends in the middle of a payload", line)
            else:
                self._diag(
                    "md5", f"payload of {name} does not match its md5 {quote(expected, 32)}", line
                )
        self._diag(
            "limit",
            f"the payload of {name} is {_size(body.size)}, more than the "
            f"{_size(MAX_RECORD_BYTES)} analysed: it is kept, but not analysed "
            "(no kernels, node counts or decoded JSON)",
            line,
        )
        present = body.present or expected is not None
        return self._make_record(m, line, envelope, payload if present else None, None)

    def _cut_at(self, line: int) -> None:
        self._diag(
            "limit",
            f"the log is longer than the {_size(self.max_bytes)} read from one log: it was cut "
            f"at line {line}, and that record and all after it are left out",
            line,
        )

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
        head = self._head(buf[s:head_end], line, cut_line=truncated and nl < 0)
        if head is None:
            return None
        m, envelope, crlf = head
        payload = None
        body = None
        raw = buf[nl + 1 : e] if nl >= 0 else b""
        if raw[:1] == b"\t" or raw.strip(b"\n"):
            body = payload_body(raw.replace(b"\r\n", b"\n") if crlf else raw)
            payload = Payload(self.store, buf_offset + nl + 1, len(raw), len(body), crlf)
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
                        f"{quote(expected, 32)}",
                        line,
                    )
        if body and not verified:
            # A payload that matches its md5 is what torch encoded as UTF-8; check the rest.
            try:
                raw.decode("utf-8")
            except UnicodeDecodeError as err:
                bad_line = line + 1 + raw.count(b"\n", 0, err.start)
                self._diag("encoding", "a payload line is not valid UTF-8", bad_line)
        return self._make_record(m, line, envelope, payload, body)

    def _head(
        self, head: bytes, line: int, cut_line: bool
    ) -> tuple[re.Match[bytes], dict[str, Any], bool] | None:
        """The prefix match, envelope and CRLF-ness of a record line; None (reported) if bad.

        ``cut_line``: the log ends inside this line, so a bad line is a truncation.
        """
        crlf = head.endswith(b"\r")
        if crlf:
            head = head[:-1]
        m = _PREFIX.match(head)
        if m is None:
            if cut_line and (head[:1] in b"VIWEC" or head.startswith(b"[")):
                self._diag("truncated", "the log ends in the middle of a record line", line)
            else:
                self._diag("prefix", f"not a trace record line: {quote(head)}", line)
            return None
        try:
            text = head.decode("utf-8")
        except UnicodeDecodeError:
            self._diag("encoding", "the record line is not valid UTF-8", line)
            text = head.decode("utf-8", "replace")
        prefix_chars = len(head[: m.end()].decode("utf-8", "replace"))
        envelope = self._envelope(text[prefix_chars:], line, cut_line)
        if envelope is None:
            return None
        return m, envelope, crlf

    @staticmethod
    def _make_record(
        m: re.Match[bytes],
        line: int,
        envelope: dict[str, Any],
        payload: Payload | None,
        body: bytes | None,
    ) -> Record:
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
            value = load_json(text)
        except JsonNestingError as e:
            self._diag("nesting", f"the record's JSON is left out: {e}", line)
            return None
        except ValueError as e:
            if truncated:
                self._diag("truncated", "the log ends in the middle of a record line", line)
            else:
                self._diag("json", f"the record's JSON does not parse: {_short(e)}", line)
            return None
        if not isinstance(value, dict) or not value:
            self._diag("json", "the record's JSON is not a non-empty object", line)
            return None
        return value


def _skip(raw: bytes) -> None:
    """Bytes of a record that is left out."""


def _event_name(envelope: dict[str, Any]) -> str:
    """``artifact 'name'`` or the event's name; a hostile event name is quoted, short."""
    name = next(iter(envelope))
    inner = envelope.get(name)
    if name in ("artifact", "graph_dump") and isinstance(inner, dict):
        return f"{name} {quote(inner.get('name'))}"
    return name if _PLAIN_NAME.fullmatch(name) else quote(name)


def _short(error: ValueError) -> str:
    """A JSON error's message, which names a position, never the text (bounded all the same)."""
    text = str(error)
    return text if len(text) <= 120 else text[:120] + "…"


def _size(n: int) -> str:
    """``1 GiB``, ``64 MiB``, ``1500 bytes``: a byte count as a person reads it."""
    for unit, shift in (("GiB", 30), ("MiB", 20), ("KiB", 10)):
        if n >= 1 << shift and n % (1 << shift) == 0:
            return f"{n >> shift} {unit}"
    if n >= 1 << 20:
        return f"{n / (1 << 20):.1f} MiB"
    return f"{n} bytes"


@dataclass(frozen=True)
class FileDigest:
    """A file's sha256 and gzip-ness, with the file's state before they were read: they
    stand for the file while its state is that one (a write changes its times)."""

    sha256: str
    compressed: bool
    state: tuple[int, int, int, int]

    def holds_for(self, now: os.stat_result) -> bool:
        return self.state == file_state(now)


def file_state(st: os.stat_result) -> tuple[int, int, int, int]:
    return (st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns)


def file_digest(path: str | os.PathLike[str]) -> FileDigest:
    """:func:`file_sha256`, kept with the file's state (see :class:`FileDigest`)."""
    before = os.stat(path)
    return FileDigest(*file_sha256(path), file_state(before))


def file_sha256(path: str | os.PathLike[str]) -> tuple[str, bool]:
    """The sha256 of a file, streamed, and whether the file is gzip (read on the way)."""
    digest = hashlib.sha256()
    head = b""
    with open(path, "rb", buffering=0) as f:
        buf = bytearray(1 << 20)
        view = memoryview(buf)
        while n := f.readinto(buf):
            if not head:
                head = bytes(view[:2])
            digest.update(view[:n])
    return digest.hexdigest(), head == b"\x1f\x8b"


#: Characters of one line :func:`record_lines` returns; the rest is counted.
SHOWN_LINE_CHARS = 10_000


def record_lines(path: str | os.PathLike[str], line: int, max_payload: int = 200) -> list[str]:
    """The record at line ``line`` of a log (plain or gzip): its line, then its payload
    lines (those starting with a tab), at most ``max_payload`` of them; each line cut at
    :data:`SHOWN_LINE_CHARS`.  Raises ValueError when the file has fewer lines."""
    with open(path, "rb") as raw:
        compressed = raw.read(2) == _GZIP_MAGIC
    opened = gzip.open(path, "rb") if compressed else open(path, "rb")  # noqa: SIM115
    out: list[str] = []
    with opened as f:
        for number, data in enumerate(f, 1):
            if number < line:
                continue
            text = data.decode("utf-8", "replace").rstrip("\r\n")
            if number > line and not text.startswith("\t"):
                break
            if len(out) > max_payload:
                out.append("... (more payload lines)")
                break
            cut = text[:SHOWN_LINE_CHARS]
            out.append(
                cut
                + (f" ... ({len(text) - len(cut)} more characters)" if len(text) > len(cut) else "")
            )
    if not out:
        raise ValueError(f"the log has fewer than {line} lines")
    return out
