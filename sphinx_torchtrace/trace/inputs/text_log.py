"""TORCH_LOGS text logs (what ``TORCH_LOGS=...`` prints to stderr) as the trace model.

A text log is not a trace: no envelopes, no metrics, one message spread over many
lines.  torch 2.13 writes every line of a message with the same glog prefix
(``V1122 12:43:35.056000 11385 torch/_inductor/compile_fx.py:3076] [0/0] ...``), so
consecutive lines with the same (level, time, pid, file:line, compile id, artifact)
form one message; older torch wrote ``[2024-03-25 11:07:02,184] [4/0] logger: [DEBUG] ...``
(seed 003).  torchrun prefixes worker lines with ``[rankN]:``; Python warnings and
anything else a program prints are mixed in.  Messages become the same ``Compile``
objects a trace gives (graphs, guards, output code with its kernels, graph breaks,
recompile reasons, failures), so frame, graph and kernel pages render as usual; every
other line is kept, in order, in a ``text_log_lines`` artifact of its compile (or of
``[-/-]`` for lines outside any compile).

Statuses: a text log has no metrics, so a compile is ``error`` when the log says its
compilation failed, ``break`` when it restarted or broke its graph, and ``missing``
otherwise (``RankTrace.source == "torch_logs"`` makes the frame status follow that).
Every line is hostile: prefixes are matched on a bounded head of the line by linear
expressions, lines and messages are bounded, and nothing here raises on content.
"""

from __future__ import annotations

import hashlib
import os
import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field

from ..compile_id import UNKNOWN, CompileId
from ..compile_status import text_status
from ..diagnostics import Diagnostic, TraceReadError, quote
from ..kernels import split_output_code
from ..model import Artifact, Compile, Failure, RankTrace, Trace
from ..reader import DEFAULT_MAX_LOG_BYTES, Payload, PayloadStore, file_sha256
from ..secrets import scan_text
from .builder import graph_node_count

#: ``RankTrace.source`` of a rank read from a text log.
SOURCE = "torch_logs"
#: The artifact holding a compile's lines that became nothing else, in log order.
LOG_LINES = "text_log_lines"
#: The artifact holding a compile's CUDA graph messages (see :mod:`.cudagraphs`).
CUDAGRAPH_LINES = "cudagraph_log"
#: Artifact kind of everything made from a text log.
TEXT_EVENT = "text_log"

#: Characters of a line's head in which a prefix is looked for.
HEAD_CHARS = 600
#: ``[rankN]:`` prefixes stripped from one line (torchrun's ``--tee`` can add a second).
MAX_RANK_PREFIXES = 4
#: Characters kept of one line (a longer line is cut, with a ``limit`` diagnostic).
MAX_LINE_CHARS = 1 << 20

_GLOG = re.compile(
    r"(?P<level>[DIWEVC])(?P<time>\d{4} \d\d:\d\d:\d\d\.\d{1,9}) +(?P<pid>\d{1,10}) "
    r"(?P<where>[^\]\s:]{1,300}:\d{1,9})\] ?"
)
_OLD = re.compile(
    r"\[(?P<time>\d{4}-\d\d-\d\d \d\d:\d\d:\d\d,\d{3})\] "
    r"(?P<cid>\[[^\]\s]{1,40}\] )?(?P<logger>[\w.]{1,200}): "
    r"\[(?P<level>DEBUG|INFO|WARNING|ERROR|CRITICAL)\] ?"
)
_RANK = re.compile(r"\[(?:rank|default)(\d{1,6})\]: ?")
_COMPILE_ID = re.compile(r"\[(!\d{1,9}/)?(\d{1,9}|-)/(\d{1,9}|-)(_\d{1,9})?\] ?")
_TAG = re.compile(r"\[__(\w{1,60})\] ?")
_OLD_TAG = re.compile(r"\.__(\w{1,60})$")
_USER_AT = re.compile(r"(?:in user code at|user code at) (\S{1,500}?):(\d{1,9})\b")
_RECOMPILING = re.compile(r"Recompiling function (\S{1,300}) in (\S{1,500})")
_GUARD_FAILURE = re.compile(r"^\s*- (.{1,2000})$")
_WONT_CONVERT = re.compile(r"WON'T CONVERT (\S{1,300}) (\S{1,500}) line (\d{1,9})")
_EXCEPTION = re.compile(
    r"^((?:[A-Za-z_]\w{0,100}\.){0,10}[A-Za-z_]\w{0,100}"
    r"(?:Error|Exception|Failed|Unsupported|Interrupt)\w{0,40}): ?(.{0,2000})$"
)
_GRAPH_HEADER = re.compile(r"=====\s{0,5}([^=]{1,200}?)\s{0,5}=====")

#: Artifact tags (``[__graph_code]``, ``logger.__graph_code``) and what they become.
GRAPH_TAGS = {
    "graph_code": "dynamo_output_graph",
    "graph_code_verbose": "dynamo_output_graph",
    "aot_graphs": "aot_graph",  # named from the header: forward, backward, joint, inference
    "aot_joint_graph": "aot_joint_graph",
    "post_grad_graphs": "inductor_post_grad_graph",
    "pre_grad_graphs": "inductor_pre_grad_graph",
}
GUARD_TAGS = frozenset({"guards", "verbose_guards"})
#: Artifacts logged only after the backend ran: a compile holding one did not fail there.
_FINISHED = frozenset(
    {
        "inductor_output_code",
        "inductor_pre_grad_graph",
        "inductor_post_grad_graph",
        "aot_forward_graph",
        "aot_joint_graph",
        "aot_inference_graph",
    }
)
_LEVELS = {"DEBUG": "D", "INFO": "I", "WARNING": "W", "ERROR": "E", "CRITICAL": "C"}


@dataclass
class Message:
    """One message: consecutive lines under the same prefix (or one run of plain lines)."""

    line: int  # 1-based line of its first line in the file
    rank: int | None
    level: str  # D I W E V C, or "" for plain lines
    time: str
    pid: int | None
    where: str  # file:line (glog) or the logger (old format); "" for plain lines
    compile_id: CompileId | None
    tag: str  # the artifact logger's name (``graph_breaks``), or ""
    texts: list[str] = field(default_factory=list)  # the lines after the prefix
    raws: list[str] = field(default_factory=list)  # the lines as written (rank prefix off)

    @property
    def key(self) -> tuple[object, ...]:
        return (self.level, self.time, self.pid, self.where, self.compile_id, self.tag)

    @property
    def text(self) -> str:
        return "\n".join(self.texts)

    @property
    def first(self) -> str:
        return self.texts[0] if self.texts else ""


class TextStore(PayloadStore):
    """Payloads of a text log, held in memory: a message's lines are not contiguous bytes
    of the file (each repeats the prefix), so its text is copied once, as TAB lines."""

    def __init__(self, display: str) -> None:
        super().__init__(display, compressed=False)
        self._data = bytearray()

    def add(self, text: str) -> Payload:
        body = text.encode("utf-8", "replace")
        raw = b"\t" + body.replace(b"\n", b"\n\t") + b"\n"
        offset = len(self._data)
        self._data += raw
        return Payload(self, offset, len(raw), len(body))

    def read_raw(self, offset: int, length: int) -> bytes:
        if length <= 0 or offset < 0:
            return b""
        return bytes(self._data[offset : offset + length])


# -- reading ----------------------------------------------------------------


def load_text_log(
    path: str | os.PathLike[str],
    *,
    max_bytes: int = DEFAULT_MAX_LOG_BYTES,
    display_path: str | None = None,
) -> Trace:
    """The model of a TORCH_LOGS text log: one :class:`RankTrace` per rank its lines name.

    Only a file that cannot be read raises (:class:`TraceReadError`); anything wrong
    inside becomes a diagnostic.  At most ``max_bytes`` are read (``limit`` past that).
    """
    display = display_path if display_path is not None else os.fspath(path)
    try:
        with open(path, "rb") as f:
            # read(n) allocates n bytes first: ask for what the file holds, not the limit
            size = os.fstat(f.fileno()).st_size
            data = f.read(min(max_bytes, size) + 1)
    except OSError as e:
        raise TraceReadError(display, e.strerror or str(e)) from e
    diagnostics: list[Diagnostic] = []
    whole = len(data) <= max_bytes
    if not whole:
        data = data[:max_bytes]
        diagnostics.append(
            Diagnostic("limit", f"the text log is larger than {max_bytes} bytes: cut", display)
        )
    trace = parse_text_log(data, display, diagnostics)
    try:
        sha256 = hashlib.sha256(data).hexdigest() if whole else file_sha256(path)[0]
    except OSError:
        sha256 = ""
    for rank in trace.ranks:
        rank.sha256, rank.file_size = sha256, size
    return trace


def parse_text_log(data: bytes, display: str, diagnostics: list[Diagnostic] | None = None) -> Trace:
    """The model of a text log's bytes (see :func:`load_text_log`)."""
    diagnostics = list(diagnostics or [])
    text = data.decode("utf-8", "replace")
    bad = text.find("\ufffd")
    if bad >= 0 and b"\xef\xbf\xbd" not in data:
        line = text.count("\n", 0, bad) + 1
        diagnostics.append(
            Diagnostic("encoding", "the text log is not valid UTF-8 (replaced)", display, line)
        )
    by_rank: dict[int | None, list[Message]] = {}
    for message in messages(_lines(text), display, diagnostics):
        by_rank.setdefault(message.rank, []).append(message)
    if not by_rank:
        by_rank[None] = []
    if not any(m.level for group in by_rank.values() for m in group):
        diagnostics.append(
            Diagnostic(
                "text_log",
                "no line has a TORCH_LOGS prefix: is this a text log? Its lines are kept as text",
                display,
            )
        )
    trace = Trace(ranks=[])
    store = TextStore(display)
    for rank, group in sorted(by_rank.items(), key=lambda kv: (kv[0] is not None, kv[0] or 0)):
        built = _TextRankBuilder(display, rank, store).build(group)
        built.size = len(data)
        trace.ranks.append(built)
    if len(trace.ranks) > 1 and trace.ranks[0].rank is None and not _has_compiles(trace.ranks[0]):
        # Launcher lines without a rank prefix beside rank lines: rank 0's [-/-].
        _merge_unranked(trace.ranks.pop(0), trace.ranks[0])
    trace.ranks[0].diagnostics.extend(diagnostics)
    trace.ranks[0].secrets = scan_text(data)  # the file's lines, whichever rank they are
    for r in trace.ranks:
        trace.diagnostics.extend(r.diagnostics)
    return trace


def _lines(text: str) -> list[str]:
    """The file's lines (only ``\n`` ends a line: numbers agree with an editor's)."""
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    return [line[:-1] if line.endswith("\r") else line for line in lines]


def messages(
    lines: Iterable[str], display: str, diagnostics: list[Diagnostic]
) -> Iterator[Message]:
    """Group lines into messages, per rank (lines of ranks interleave in a torchrun log)."""
    open_: dict[int | None, Message] = {}
    cut = False
    for number, line in enumerate(lines, 1):
        if len(line) > MAX_LINE_CHARS:
            line = line[:MAX_LINE_CHARS]
            if not cut:
                cut = True
                diagnostics.append(
                    Diagnostic(
                        "limit",
                        f"a line longer than {MAX_LINE_CHARS} characters is cut",
                        display,
                        number,
                    )
                )
        rank, raw, parsed = _parse_line(line, number)
        current = open_.get(rank)
        if (
            current is not None
            and current.key == parsed.key
            and (parsed.level or not current.level)
        ):
            current.texts.append(parsed.first)
            current.raws.append(raw)
            continue
        if current is not None:
            yield current
        parsed.raws.append(raw)
        open_[rank] = parsed
    yield from open_.values()


def _parse_line(line: str, number: int) -> tuple[int | None, str, Message]:
    """A line's rank, its text without the rank prefix, and a one-line message."""
    head = line[:HEAD_CHARS]
    rank: int | None = None
    pos = 0
    for _ in range(MAX_RANK_PREFIXES):  # a launcher's prefix over the worker's own
        m = _RANK.match(head, pos)
        if m is None:
            break
        rank, pos = int(m.group(1)), m.end()
    raw = line[pos:]
    g = _GLOG.match(head, pos)
    if g:
        pos = g.end()
        cid, pos = _compile_id_at(head, pos)
        tag = ""
        t = _TAG.match(head, pos)
        if t:
            tag, pos = t.group(1), t.end()
        if cid is None:  # cudagraph messages at run time say their compile id in the text
            cid, pos = _compile_id_at(head, pos)
        message = Message(
            number,
            rank,
            g.group("level"),
            g.group("time"),
            int(g.group("pid")),
            g.group("where"),
            cid,
            tag,
            [line[pos:]],
        )
        return rank, raw, message
    o = _OLD.match(head, pos)
    if o:
        pos = o.end()
        cid = _parse_compile_id(o.group("cid").strip()) if o.group("cid") else None
        if cid is None:  # cudagraph messages say their compile id in the text
            cid, pos = _compile_id_at(head, pos)
        logger = o.group("logger")
        tag_m = _OLD_TAG.search(logger)
        message = Message(
            number,
            rank,
            _LEVELS[o.group("level")],
            o.group("time"),
            None,
            logger,
            cid,
            tag_m.group(1) if tag_m else "",
            [line[pos:]],
        )
        return rank, raw, message
    return rank, raw, Message(number, rank, "", "", None, "", None, "", [raw])


def _compile_id_at(head: str, pos: int) -> tuple[CompileId | None, int]:
    m = _COMPILE_ID.match(head, pos)
    if not m:
        return None, pos
    return _parse_compile_id(m.group(0).strip()), m.end()


def _parse_compile_id(text: str) -> CompileId | None:
    try:
        return CompileId.parse(text)
    except ValueError:
        return None


# -- building ---------------------------------------------------------------


class _TextRankBuilder:
    """Turns one rank's messages into a :class:`RankTrace` (``source == "torch_logs"``)."""

    def __init__(self, display: str, rank: int | None, store: TextStore) -> None:
        self.rank = RankTrace(path=display, rank=rank, size=0)
        self.rank.source = SOURCE
        self.store = store
        self._compiles: dict[CompileId, Compile] = {}
        self._attempts: dict[CompileId, list[Compile]] = {}  # by frame: linear in ids
        self._lines: dict[int, list[tuple[int, str]]] = {}  # id(compile) -> (line, raw)
        self._cuda: dict[int, list[tuple[int, str]]] = {}
        self._guards: dict[int, list[Message]] = {}
        self._last: Compile | None = None
        self._ordinal = 0

    def build(self, group: list[Message]) -> RankTrace:
        pids: dict[int, None] = {}
        for m in group:
            if m.pid is not None:
                pids.setdefault(m.pid, None)
            if m.time:
                self.rank.first_timestamp = self.rank.first_timestamp or m.time
                self.rank.last_timestamp = m.time
            self._message(m)
        self.rank.pids = list(pids)
        for c in self.rank.compiles:
            self._finish(c)
        return self.rank

    def _compile(self, compile_id: CompileId, line: int) -> Compile:
        found = self._compiles.get(compile_id)
        if found is None:
            found = self._compiles[compile_id] = Compile(compile_id, 1, line)
            attempts = self._attempts.setdefault(compile_id.frame, [])
            if compile_id.attempt:  # earlier attempts of the frame were restarted
                for other in attempts:
                    if other.id.attempt < compile_id.attempt:
                        other.restarted = True
            attempts.append(found)
            self.rank.compiles.append(found)
        if not compile_id.is_unknown:
            self._last = found
        return found

    def _message(self, m: Message) -> None:
        kind = classify(m)
        self.rank.stats[kind] += 1
        if m.compile_id is None and kind == "failure" and self._unfinished(self._last):
            assert self._last is not None
            c = self._last  # WON'T CONVERT names no compile id: the compile it ends
        else:
            c = self._compile(m.compile_id or UNKNOWN, m.line)
        handler = _HANDLERS.get(kind)
        if handler is None or not handler(self, c, m):
            self._lines.setdefault(id(c), []).extend(
                zip(range(m.line, m.line + len(m.raws)), m.raws, strict=True)
            )

    def _unfinished(self, c: Compile | None) -> bool:
        """A compile that logged neither guards nor code yet: one a failure can end.  (A
        log without Dynamo's messages may not show the failed compile at all.)"""
        if c is None or id(c) in self._guards:
            return False
        return not any(a.name in _FINISHED for a in c.artifacts)

    def artifact(
        self, c: Compile, name: str, line: int, text: str, node_count: int | None = None
    ) -> Artifact:
        a = Artifact(
            name=name,
            event=TEXT_EVENT if name in (LOG_LINES, CUDAGRAPH_LINES) else name,
            line=line,
            ordinal=self._ordinal,
            payload=self.store.add(text),
            node_count=node_count,
        )
        self._ordinal += 1
        c.artifacts.append(a)
        return a

    def _finish(self, c: Compile) -> None:
        guards = self._guards.get(id(c))
        if guards:
            text = "\n".join(g.text for g in guards)
            self.artifact(c, "dynamo_cpp_guards_str", guards[0].line, text)
        cuda = self._cuda.get(id(c))
        if cuda:
            self.artifact(c, CUDAGRAPH_LINES, cuda[0][0], "\n".join(t for _, t in cuda))
        lines = self._lines.get(id(c))
        if lines:
            self.artifact(c, LOG_LINES, lines[0][0], "\n".join(t for _, t in lines))
        c.status = text_status(c)


def classify(m: Message) -> str:
    """What a message is: ``graph``, ``guards``, ``graph_break``, ``recompile``,
    ``output_code``, ``failure``, ``cudagraph``, or ``other``."""
    tag, first = m.tag, m.first
    if tag in GRAPH_TAGS and ("GRAPH" in first or len(m.texts) > 2):
        return "graph"
    if tag in GUARD_TAGS:
        return "guards"
    if tag == "graph_breaks" or first.startswith("Graph break in user code"):
        return "graph_break"
    if tag == "recompiles" or first.startswith("Recompiling function"):
        return "recompile"
    if tag == "output_code" and first.startswith("Output code:") and len(m.texts) > 1:
        return "output_code"
    if tag == "cudagraphs" or "cudagraph" in m.where:
        return "cudagraph"
    if first.startswith("WON'T CONVERT") or (
        m.level in "WE" and m.level and "Traceback (most recent call last)" in m.text[:4000]
    ):
        return "failure"
    return "other"


def _on_graph(b: _TextRankBuilder, c: Compile, m: Message) -> bool:
    texts = m.texts[1:] if m.first.strip() == "TRACED GRAPH" else m.texts
    name = GRAPH_TAGS[m.tag]
    header = _GRAPH_HEADER.search("\n".join(texts[:2]))
    if name == "aot_graph":
        label = header.group(1).lower() if header else ""
        phase = next((p for p in ("joint", "forward", "backward", "inference") if p in label), "")
        name = f"aot_{phase}_graph" if phase else "aot_graph"
    body = "\n".join(texts)
    b.artifact(c, name, m.line, body, graph_node_count(body.encode("utf-8", "replace")))
    return True


def _on_guards(b: _TextRankBuilder, c: Compile, m: Message) -> bool:
    b._guards.setdefault(id(c), []).append(m)
    return True


def _on_graph_break(b: _TextRankBuilder, c: Compile, m: Message) -> bool:
    at = _USER_AT.search(m.first)
    location = f"{at.group(1)}:{at.group(2)}" if at else None
    reason = m.text.strip()
    for t in m.texts:
        if t.startswith("Graph Break Reason:"):
            reason = m.text[m.text.find("Graph Break Reason:") :].strip()
            break
    c.failures.append(Failure("graph_break", reason, m.line, None, location))
    return True


def _on_recompile(b: _TextRankBuilder, c: Compile, m: Message) -> bool:
    reasons = [g.group(1).strip() for t in m.texts[1:] if (g := _GUARD_FAILURE.match(t))]
    c.recompile_reasons.extend(reasons or [m.text.strip()])
    return True


def _on_output_code(b: _TextRankBuilder, c: Compile, m: Message) -> bool:
    code = "\n".join(m.texts[1:])
    a = b.artifact(c, "inductor_output_code", m.line, code)
    a.kernels = split_output_code(code, a.name)
    return True


def _on_failure(b: _TextRankBuilder, c: Compile, m: Message) -> bool:
    type_, reason = failure_of(m.texts)
    w = _WONT_CONVERT.search(m.first)
    location = f"{w.group(2)}:{w.group(3)}" if w else None
    c.failures.append(Failure("failure", reason or m.first.strip(), m.line, type_, location))
    return False  # the whole message stays in the log lines too: the traceback


def failure_of(texts: list[str]) -> tuple[str | None, str]:
    """The exception a traceback ends in (type, its lines up to a blank line): the first
    exception line after the last stack frame, torch's own where it wraps another."""
    start = 0
    for i, t in enumerate(texts):
        if t.startswith("  File "):
            start = i + 1
    for i in range(start, len(texts)):
        e = _EXCEPTION.match(texts[i].strip())
        if e:
            end = i
            while end < len(texts) and texts[end].strip() and end - i < 20:
                end += 1
            return e.group(1).rpartition(".")[2], "\n".join(texts[i:end]).strip()
    return None, ""


def _on_cudagraph(b: _TextRankBuilder, c: Compile, m: Message) -> bool:
    b._cuda.setdefault(id(c), []).extend(
        zip(range(m.line, m.line + len(m.texts)), m.texts, strict=True)
    )
    return False


_HANDLERS = {
    "graph": _on_graph,
    "guards": _on_guards,
    "graph_break": _on_graph_break,
    "recompile": _on_recompile,
    "output_code": _on_output_code,
    "failure": _on_failure,
    "cudagraph": _on_cudagraph,
}


def _has_compiles(rank: RankTrace) -> bool:
    return any(not c.id.is_unknown for c in rank.compiles)


def _merge_unranked(unranked: RankTrace, into: RankTrace) -> None:
    """Put a launcher's unranked lines into another rank's ``[-/-]`` log lines."""
    ordinal = 1 + max((a.ordinal for c in into.compiles for a in c.artifacts), default=-1)
    target = next((t for t in into.compiles if t.id.is_unknown), None)
    for c in unranked.compiles:
        for a in c.artifacts:
            if target is None:
                target = Compile(UNKNOWN, 1, a.line)
                into.compiles.insert(0, target)
            a.name = "launcher_log_lines" if a.name == LOG_LINES else a.name
            a.ordinal, ordinal = ordinal, ordinal + 1  # anchors are made of ordinals
            target.artifacts.append(a)


# -- beside a trace ----------------------------------------------------------


def attach_text_log(trace: Trace, text_trace: Trace) -> list[str]:
    """Show a text log of the same run on the trace's frame pages.

    Each rank of ``text_trace`` goes to the trace rank of the same number (or the only
    one); each of its compiles' text artifacts (log lines, CUDA graph messages) is added to
    the trace compile of the same label.  Returns the labels (``rank 1 [3/0]``) of text
    compiles that matched no compile of the trace: their lines go to ``[-/-]``.
    """
    unmatched: list[str] = []
    for text_rank in text_trace.ranks:
        target = _matching_rank(trace, text_rank)
        if target is None:
            unmatched.extend(_where(text_rank, c) for c in text_rank.compiles)
            continue
        ordinal = 1 + max((a.ordinal for c in target.compiles for a in c.artifacts), default=-1)
        unknown: Compile | None = None  # the target's [-/-], found or made once
        for text_c in text_rank.compiles:
            extra = [a for a in text_c.artifacts if a.event == TEXT_EVENT]
            try:
                found = target.compile(text_c.label)
            except KeyError:
                if not text_c.id.is_unknown:  # even one whose lines all became facts
                    unmatched.append(_where(text_rank, text_c))
                if not extra:
                    continue
                unknown = unknown or _unknown_compile(target)
                found = unknown
            for a in extra:
                a.ordinal, ordinal = ordinal, ordinal + 1
                found.artifacts.append(a)
    return unmatched


def _unknown_compile(rank: RankTrace) -> Compile:
    """The rank's ``[-/-]``, made when it has none."""
    for c in rank.compiles:
        if c.id.is_unknown:
            return c
    made = Compile(UNKNOWN, 1, 0)
    rank.compiles.append(made)
    return made


def _matching_rank(trace: Trace, text_rank: RankTrace) -> RankTrace | None:
    for r in trace.ranks:
        if r.rank == text_rank.rank:
            return r
    return trace.ranks[0] if len(trace.ranks) == 1 else None


def _where(rank: RankTrace, c: Compile) -> str:
    return f"rank {rank.rank} {c.label}" if rank.rank is not None else c.label


__all__ = [
    "CUDAGRAPH_LINES",
    "LOG_LINES",
    "Message",
    "attach_text_log",
    "classify",
    "load_text_log",
    "messages",
    "parse_text_log",
    "quote",
]
