"""The trace model: plain dataclasses for everything a report shows.

``Trace`` → ``RankTrace`` (one log) → ``Compile`` (one compile id, one
occurrence, one attempt) → ``Artifact`` / ``Metrics`` / ``Failure`` ...
Nothing here knows of Sphinx or HTML; :mod:`.builder` fills it from records.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field, fields
from typing import Any, Literal

from .compile_id import CompileId
from .diagnostics import Diagnostic
from .kernels import Kernel
from .reader import MAX_RECORD_BYTES, Payload, load_json
from .runtime import RuntimeProfile
from .secrets import SecretScan

Status = Literal["ok", "break", "error", "empty", "missing"]

#: tlparse's legend for the statuses, in its check order.
STATUS_LEGEND: dict[str, str] = {
    "missing": "Metrics were missing",
    "error": "Error",
    "empty": "Empty graph",
    "break": "Success with restart (e.g., graph break)",
    "ok": "Success",
}


@dataclass(slots=True)
class StackFrame:
    """One frame of a Python stack as torch logs it (file names are interned)."""

    filename: str
    line: int
    name: str
    loc: str | None = None

    @property
    def is_user_code(self) -> bool:
        """Frames outside torch and the standard library: the ones a reader wrote."""
        f = self.filename
        return not (
            "/site-packages/torch/" in f
            or "/torch/_" in f
            or f.startswith("/usr/lib/python")
            or f.startswith("<frozen")
        )


@dataclass(slots=True)
class Artifact:
    """A record with content: a graph, guards, generated code, a JSON or text artifact.

    ``event`` is the event name (``artifact``, ``dynamo_output_graph``,
    ``graph_dump`` ...); ``name`` is the artifact's own name where it has one
    and the event name otherwise.  ``known`` is False for events this
    model does not understand: they are kept and shown raw.
    """

    name: str
    event: str
    line: int
    ordinal: int  # position among all artifacts of the log, from 0
    payload: Payload | None
    encoding: str | None = None
    metadata: dict[str, Any] = field(default_factory=dict)
    node_count: int | None = None
    known: bool = True
    kernels: list[Kernel] = field(default_factory=list)  # for generated code
    #: The envelope's ``subgraph_name``: the region regional Inductor was compiling when
    #: the record was logged (``repeated_subgraph0``, ``__marked_inductor_submod0``).
    subgraph: str | None = None
    #: For a graph: its ``invoke_subgraph`` calls, per region identifier (``subgraph_0``,
    #: ``fw_subgraph_0``), in order: one region called four times is ``{"subgraph_0": 4}``.
    region_calls: dict[str, int] = field(default_factory=dict)

    @property
    def size(self) -> int:
        """Bytes of the payload (0 when there is none)."""
        return self.payload.size if self.payload else 0

    def text(self) -> str:
        return self.payload.text() if self.payload else ""

    def json(self) -> Any:
        """The payload decoded as JSON; None when it is not JSON, nests too deeply or is huge."""
        if self.size > MAX_RECORD_BYTES:  # unanalysed: decoding would cost gigabytes
            return None
        try:
            return load_json(self.text())
        except ValueError:
            return None

    def json_object(self) -> dict[str, Any] | None:
        """The payload as a JSON object, the type torch writes for the artifacts read by
        name (metadata, mappings, schedules); None for anything else: a list, a string or
        a number there is a damaged or hostile payload (the builder says so, at its line)."""
        value = self.json()
        return value if isinstance(value, dict) else None

    @property
    def is_graph(self) -> bool:
        return self.node_count is not None

    @property
    def cache_result(self) -> str | None:
        """``hit``, ``miss`` or ``bypass`` for cache artifacts (tlparse's ✅ ❌ ❓)."""
        for result in ("hit", "miss", "bypass"):
            if f"cache_{result}" in self.name:
                return result
        return None


@dataclass(slots=True)
class Metrics:
    """One compilation-metrics record (forward, backward, AOT backward, runtime)."""

    event: str  # compilation_metrics, bwd_compilation_metrics, ..._runtime, aot_autograd_...
    line: int
    data: dict[str, Any]

    @property
    def fail_type(self) -> str | None:
        value = self.data.get("fail_type")
        return str(value) if value else None

    @property
    def restart_reasons(self) -> list[str]:
        value = self.data.get("restart_reasons")
        return [str(v) for v in value] if isinstance(value, list) else []


@dataclass(slots=True)
class Failure:
    """Why a compilation failed or restarted."""

    kind: Literal["failure", "restart", "graph_break"]
    reason: str
    line: int
    type: str | None = None  # the exception type, for failures
    user_location: str | None = None  # "file.py:12" in user code, where known


@dataclass(slots=True)
class CacheEvent:
    """A cache lookup: ``fx_graph`` / ``aotautograd`` / ... × ``hit`` / ``miss`` / ``bypass``."""

    cache: str
    result: str
    line: int
    artifact: str


@dataclass(slots=True)
class ShapeEvent:
    """A symbolic-shape event: a symbol created, a guard added, a specialization."""

    event: str
    line: int
    data: dict[str, Any]
    user_stack: list[StackFrame] = field(default_factory=list)


@dataclass(slots=True)
class ChromiumEvent:
    """A Chrome-trace event, kept as a location: decoded only when asked for."""

    line: int
    compile_id: CompileId
    payload: Payload

    def decode(self) -> dict[str, Any] | None:
        """The event as a dict; None when it is not a JSON object, nests too deeply or is huge."""
        return self.parse(self.payload.read_bytes()) if self.readable else None

    @property
    def readable(self) -> bool:
        return self.payload.size <= MAX_RECORD_BYTES

    @staticmethod
    def parse(data: bytes) -> dict[str, Any] | None:
        """An event's payload bytes as a dict (see :meth:`decode`)."""
        try:
            value = load_json(data)
        except ValueError:
            return None
        return value if isinstance(value, dict) else None


@dataclass(slots=True)
class RawRecord:
    """A record of an event the model does not know, kept whole."""

    event: str
    line: int
    envelope: dict[str, Any]
    payload: Payload | None


@dataclass(slots=True)
class ExportEvent:
    """A record of ``torch.export`` (draft export reports, mostly under TORCH_DTRACE)."""

    event: str
    line: int
    data: dict[str, Any]
    payload: Payload | None = None


@dataclass
class Compile:
    """Everything logged for one attempt of one compile id, in log order.

    ``occurrence`` is 1 the first time a compile id appears in a log, 2 when
    the same id comes back after ``torch._dynamo.reset()`` (a different
    frame under the same number), and so on: such repeats are never merged.
    """

    id: CompileId
    occurrence: int
    first_line: int
    stack: list[StackFrame] | None = None
    artifacts: list[Artifact] = field(default_factory=list)
    metrics: list[Metrics] = field(default_factory=list)
    failures: list[Failure] = field(default_factory=list)
    cache_events: list[CacheEvent] = field(default_factory=list)
    recompile_reasons: list[str] = field(default_factory=list)
    shape_events: list[ShapeEvent] = field(default_factory=list)
    tensor_descriptions: list[dict[str, Any]] = field(default_factory=list)
    links: list[dict[str, Any]] = field(default_factory=list)
    chromium_event_count: int = 0
    restarted: bool = False  # a later attempt of the same frame follows this one
    status: Status = "missing"
    #: Compilation metrics logged for it without a compile id (vLLM's ahead-of-time
    #: compile, :func:`.compile_status.metrics_apart`): its status reads them; they stay
    #: with the records without a compile id.
    metrics_apart: list[Metrics] = field(default_factory=list)
    #: Hex digest of its records, rank numbers aside (:mod:`.rank_digest`), when the log is
    #: a rank's: made while the log is read, so a cached model need not read payloads.
    digest: str = ""
    #: What comparing its records with another rank's left out (:mod:`.volatile`): one
    #: example a rule, by the rule's name; made with :attr:`digest`.
    set_aside: dict[str, str] = field(default_factory=dict)

    @property
    def label(self) -> str:
        """``[0/0]``, or ``[0/0] #2`` for the second occurrence of the same id."""
        return str(self.id) + (f" #{self.occurrence}" if self.occurrence > 1 else "")

    @property
    def compilation_metrics(self) -> list[Metrics]:
        return [m for m in self.metrics if m.event == "compilation_metrics"]

    @property
    def graphs(self) -> list[Artifact]:
        return [a for a in self.artifacts if a.is_graph]

    def artifacts_named(self, name: str) -> list[Artifact]:
        return [a for a in self.artifacts if a.name == name]


@dataclass
class StackTrieNode:
    """A node of the trie of all ``dynamo_start`` stacks: where compiles start."""

    frame: StackFrame | None
    children: list[StackTrieNode] = field(default_factory=list)
    compiles: list[Compile] = field(default_factory=list)  # attempt-0 compiles ending here

    def child(self, frame: StackFrame) -> StackTrieNode:
        key = (frame.filename, frame.line, frame.name)
        for c in self.children:
            if c.frame is not None and (c.frame.filename, c.frame.line, c.frame.name) == key:
                return c
        node = StackTrieNode(frame)
        self.children.append(node)
        return node


@dataclass
class ExportReport:
    """What ``torch.export`` logged: programs, guards, data-dependent errors, fake kernels."""

    exported_programs: list[ExportEvent] = field(default_factory=list)
    guards_added: list[ExportEvent] = field(default_factory=list)
    data_dependent_errors: list[ExportEvent] = field(default_factory=list)
    expressions: list[ExportEvent] = field(default_factory=list)
    unbacked_symbols: list[ExportEvent] = field(default_factory=list)
    missing_fake_kernels: list[ExportEvent] = field(default_factory=list)
    mismatched_fake_kernels: list[ExportEvent] = field(default_factory=list)

    @property
    def empty(self) -> bool:
        return not any(getattr(self, f.name) for f in fields(self))

    @property
    def exported(self) -> bool:
        """Whether ``torch.export`` itself logged here: an exported program, or a record only
        draft export writes (a fake kernel it found missing or wrong, the provenance of a
        data-dependent value it ran for real).  Unbacked symbols, guards and data-dependent
        errors are logged by ``torch.compile`` too: alone, they are no export."""
        return bool(
            self.exported_programs
            or self.missing_fake_kernels
            or self.mismatched_fake_kernels
            or any(e.event == EXPORT_ONLY_PROVENANCE for e in self.data_dependent_errors)
        )


#: The record draft export writes for a data-dependent value it ran for real.
EXPORT_ONLY_PROVENANCE = "propagate_real_tensors_provenance"


@dataclass
class RankTrace:
    """One log file (one rank of a job, or the only log)."""

    path: str
    rank: int | None
    size: int
    compiles: list[Compile] = field(default_factory=list)
    stack_trie: StackTrieNode = field(default_factory=lambda: StackTrieNode(None))
    unknown_stack_trie: StackTrieNode = field(default_factory=lambda: StackTrieNode(None))
    chromium_events: list[ChromiumEvent] = field(default_factory=list)
    dump_files: dict[str, Payload] = field(default_factory=dict)
    export: ExportReport = field(default_factory=ExportReport)
    unknown_records: list[RawRecord] = field(default_factory=list)
    strings: dict[int, str] = field(default_factory=dict)
    torch_version: dict[str, Any] | None = None
    pids: list[int] = field(default_factory=list)
    first_timestamp: str | None = None
    last_timestamp: str | None = None
    stats: Counter[str] = field(default_factory=Counter)  # records per event
    diagnostics: list[Diagnostic] = field(default_factory=list)
    #: What the rank was read from: ``trace`` (TORCH_TRACE) or ``torch_logs`` (a text log,
    #: no metrics: statuses come from what the text says, see ``trace.text_log``).
    source: str = "trace"
    #: The sha256 of the log file, so a published report can be traced to its run ("" when
    #: the file could not be read again).
    sha256: str = ""
    #: Bytes of the log file on disk (a gzip log's compressed size; ``size`` is what was
    #: read of its text); 0 when unknown.
    file_size: int = 0
    #: What looks secret in the log (:mod:`.secrets`), found as it was read: published
    #: masked, with one ``torchtrace.secret`` warning per trace.
    secrets: SecretScan = field(default_factory=SecretScan)

    @property
    def problem_counts(self) -> Counter[str]:
        """Diagnostics per subtype (``md5``, ``json`` ...): the failure half of tlparse's Stats."""
        return Counter(d.subtype for d in self.diagnostics)

    def compile(self, label: str) -> Compile:
        """The compile with this label (``[0/0]``, ``[1/0_1]``, ``[0/0] #2``)."""
        found = self._index().by_label.get(label)
        if found is None:
            raise KeyError(label)
        return found

    def frame_compiles(self, compile_id: CompileId) -> list[Compile]:
        """Every attempt and occurrence of ``compile_id``'s ``[x/y]``, in log order."""
        return self._index().by_frame.get(compile_id.frame, [])

    def first_attempt(self, compile_: Compile) -> Compile:
        """The lowest attempt of ``compile_``'s ``[x/y]`` in its occurrence (0 if logged)."""
        members = self.attempts(compile_) or [compile_]
        return min(members, key=lambda c: c.id.attempt)

    def attempts(self, compile_: Compile) -> list[Compile]:
        """Every attempt of ``compile_``'s ``[x/y]`` in its occurrence, in log order."""
        return self._index().by_attempts.get((compile_.id.frame, compile_.occurrence), [])

    def same_function(self, compile_: Compile) -> tuple[list[Compile], int]:
        """The compiles of ``compile_``'s frame id (``[x/*]``), in log order, and its position.

        The position is -1 when ``compile_`` is not a compile of this rank.
        """
        index = self._index()
        group = index.by_function.get(_function_key(compile_.id), [])
        return group, index.function_position.get(id(compile_), -1)

    def _index(self) -> _CompileIndex:
        """Lookups over :attr:`compiles`, built once per list (and again if it grew).

        Pages ask per compile; a scan of all compiles per question made a log of
        thousands of compile ids cost quadratic time.  Kept outside the fields, so
        the cache and comparisons never see it.
        """
        key = (id(self.compiles), len(self.compiles))
        found: _CompileIndex | None = vars(self).get("_compile_index")
        if found is None or found.key != key:
            found = _CompileIndex.of(self.compiles, key)
            vars(self)["_compile_index"] = found
        return found


def _function_key(compile_id: CompileId) -> tuple[int | None, int | None]:
    return compile_id.compiled_autograd_id, compile_id.frame_id


@dataclass
class _CompileIndex:
    """Dictionaries over a rank's compiles (see :meth:`RankTrace._index`)."""

    key: tuple[int, int]
    by_label: dict[str, Compile] = field(default_factory=dict)
    by_frame: dict[CompileId, list[Compile]] = field(default_factory=dict)
    by_attempts: dict[tuple[CompileId, int], list[Compile]] = field(default_factory=dict)
    by_function: dict[tuple[int | None, int | None], list[Compile]] = field(default_factory=dict)
    function_position: dict[int, int] = field(default_factory=dict)  # id(compile) -> position

    @classmethod
    def of(cls, compiles: list[Compile], key: tuple[int, int]) -> _CompileIndex:
        index = cls(key)
        for c in compiles:
            frame = c.id.frame
            index.by_label.setdefault(c.label, c)
            index.by_frame.setdefault(frame, []).append(c)
            index.by_attempts.setdefault((frame, c.occurrence), []).append(c)
            group = index.by_function.setdefault(_function_key(c.id), [])
            index.function_position.setdefault(id(c), len(group))
            group.append(c)
        return index


@dataclass
class Trace:
    """A whole trace: one log, or every rank's log of a distributed job."""

    ranks: list[RankTrace]
    diagnostics: list[Diagnostic] = field(default_factory=list)
    #: The folder's other logs without a rank, not shown (earlier runs beside the newest,
    #: other programs), as the pages name them; and what chose the one shown.
    not_shown: list[str] = field(default_factory=list)
    chosen_by: str = ""
    #: What ran: torch's profiles of the program (``run --runtime``), compiled and eager.
    runtime: list[RuntimeProfile] = field(default_factory=list)

    @property
    def is_multi_rank(self) -> bool:
        return len(self.ranks) > 1
