"""vLLM's piecewise compiles, read in log order.

vLLM (``CompilationMode.VLLM_COMPILE``) splits a model's graph at its attention ops and
compiles each piece once per compile range and compile size.  With vLLM's default
ahead-of-time compile (torch >= 2.10) almost no record carries a compile id: grouping by
compile id finds one empty-looking compile, so this module reads the rank's records in
log order instead.  A *compile call* starts at ``vllm_compilation_config``; a *piecewise
compile* runs from one ``vllm_piecewise_compile_start`` to the next (or to
``vllm_execution_code`` / the end of the ``vllm_backend`` span); what follows the last
one belongs to the call.  A log with vLLM's records but no compile start (a warm start
that loaded every piece from vLLM's cache) gives *loads*: each ``inductor_output_code``
with its cache records.  Record names and fields are vLLM 0.32's; any other ``vllm_*``
record and any field not known here is kept and shown, never dropped.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from ..model import (
    Artifact,
    CacheEvent,
    ChromiumEvent,
    Compile,
    Metrics,
    RankTrace,
    ShapeEvent,
)
from ..reader import read_payloads
from .timings import MAX_SECONDS, MAX_TIMESTAMP_US, plausible

CONFIG = "vllm_compilation_config"
SPLIT_GRAPH = "vllm_piecewise_split_graph"
COMPILE_START = "vllm_piecewise_compile_start"
EXECUTION_CODE = "vllm_execution_code"
#: Names that say a log holds vLLM's records (tlparse reads the first four too).
TRIGGERS = frozenset({CONFIG, SPLIT_GRAPH, COMPILE_START, EXECUTION_CODE})
#: Graph dumps of one subgraph each: ``vllm_submod_0`` (vLLM 0.32), ``vllm_subgraph_*``.
SUBGRAPH_PREFIXES = ("vllm_submod_", "vllm_subgraph_")
#: Chromium spans: the whole vLLM backend, one per piecewise compile start, one Inductor
#: compile, one load from the AOT cache.
BACKEND_SPAN = "vllm_backend"
START_SPAN = "vllm_log_compile_start_torch_trace_only"
INDUCTOR_SPAN = "inductor_compile"
LOAD_SPAN = "AOTAutogradCache.inductor_load"

#: Records that begin a Dynamo capture: what follows is no longer the previous call's.
NEW_CAPTURE = frozenset({"dynamo_start", "dynamo_output_graph"})
#: ``vllm_piecewise_compile_start`` fields this module reads; others are shown as logged.
START_FIELDS = (
    "piecewise_index",
    "submod_name",
    "total_piecewise_compiles",
    "compile_range_start",
    "compile_range_end",
    "is_single_size",
    "is_cudagraph_capture_size",
)
#: The config fields that shape compilation, in the order a reader wants them.
SHAPING_FIELDS = (
    "compile_sizes",
    "compile_ranges_endpoints",
    "compile_ranges_split_points",
    "cudagraph_mode",
    "backend",
    "custom_ops",
    "enabled_passes",
    "inductor_passes",
    "use_inductor_graph_partition",
    "dynamic_shapes_type",
    "dynamic_shapes_evaluate_guards",
)
#: Config fields that hold a comma-joined list (vLLM 0.32 joins every list).
LIST_FIELDS = frozenset(
    {
        "compile_sizes",
        "compile_ranges_endpoints",
        "compile_ranges_split_points",
        "custom_ops",
        "splitting_ops",
        "enabled_passes",
        "inductor_passes",
    }
)
#: vLLM's ``CompilationMode`` by number (``vllm/config/compilation.py``).
MODES = {"0": "NONE", "1": "STOCK_TORCH_COMPILE", "2": "DYNAMO_TRACE_ONCE", "3": "VLLM_COMPILE"}
#: Inputs whose first size is the number of tokens of a batch, in order of preference.
TOKEN_INPUTS = ("input_ids", "inputs_embeds", "positions")
_TOKEN_SOURCE = re.compile(r"^L\['(\w{1,64})'\]\.size\(\)\[0\]$")
#: A guard bounding one symbol linearly: ``4*s72 <= 512``, ``s72 < 9``, ``s72 >= 2``.
_BOUND = re.compile(r"^(?:(\d{1,18})\*)?(\w{1,64}) (<=|<|>=|>) (\d{1,18})$")
_EQ_SYMBOLS = re.compile(r"^Eq\((\w{1,64}), (\w{1,64})\)$")
_SPLIT_CALL = re.compile(r"^\s+(submod_\d{1,9}) = self\.(submod_\d{1,9})\(", re.M)
_INLINED_DEF = re.compile(r"^def (__vllm_inlined_submods__(\d{1,9}))\(", re.M)
_OP_CALL = re.compile(r"torch\.ops\.([A-Za-z_][\w.]{0,200})\(")
_CLASS_DEF = re.compile(r"^    class (submod_\d{1,9})\(", re.M)
#: Characters of a prefix or model name shown as a compile call's label, at most.
LABEL_CHARS = 120
#: Characters of a graph's text compared for reuse, at most.
COMPARE_CHARS = 2_000_000


@dataclass
class Span:
    """A chromium B/E pair: its name, its times (microseconds) and lines."""

    name: str
    begin_us: float
    begin_line: int
    end_us: float | None = None
    end_line: int | None = None

    @property
    def seconds(self) -> float | None:
        if self.end_us is None:
            return None
        return plausible((self.end_us - self.begin_us) / 1e6, MAX_SECONDS)


@dataclass
class Piece:
    """One piecewise compile: a subgraph for one compile range or size."""

    start: Artifact  # its vllm_piecewise_compile_start
    fields: dict[str, Any]  # that record's payload, as logged
    graph: Artifact | None = None  # the subgraph's vllm_submod_* dump, when logged here
    records: list[Artifact] = field(default_factory=list)  # artifacts in its span
    cache: list[CacheEvent] = field(default_factory=list)
    output_code: Artifact | None = None
    inductor: Span | None = None  # its inductor_compile span
    marker: Span | None = None  # its vllm_log_compile_start_torch_trace_only span
    wall_seconds: float | None = None  # from its marker to the next one / end of backend
    wall_end_line: int | None = None
    #: An earlier piece whose subgraph is the same text but for numbers: what a reused
    #: piece (no compile record of its own) probably reused.
    source: Piece | None = None
    #: How many earlier compiled pieces qualify as its source (one: named; more: none is).
    twins: int = 0

    @property
    def line(self) -> int:
        return self.start.line

    @property
    def submod(self) -> str:
        value = self.fields.get("submod_name")
        if isinstance(value, str) and value:
            return value
        index = _int(self.fields.get("piecewise_index"))
        return f"piece {index}" if index is not None else "?"

    @property
    def range(self) -> tuple[int, int] | None:
        start = _int(self.fields.get("compile_range_start"))
        end = _int(self.fields.get("compile_range_end"))
        return (start, end) if start is not None and end is not None else None

    @property
    def single_size(self) -> bool:
        value = self.fields.get("is_single_size")
        return value is True or (self.range is not None and self.range[0] == self.range[1])

    @property
    def capture_size(self) -> bool:
        return self.fields.get("is_cudagraph_capture_size") is True

    @property
    def other_fields(self) -> dict[str, Any]:
        """Fields vLLM logged that this module does not read: shown as logged."""
        return {k: v for k, v in self.fields.items() if k not in START_FIELDS}

    @property
    def compiled(self) -> bool:
        """Inductor ran (or looked its caches up) for this piece."""
        return self.output_code is not None or bool(self.cache) or self.inductor is not None

    @property
    def reused(self) -> bool:
        """No compile record followed its start: vLLM reused an artifact compiled earlier
        in the process (an identical AOTAutograd key), which it does not log."""
        return not self.compiled

    @property
    def loaded(self) -> bool:
        """Its cache lookups all hit (a warm start without vLLM's ahead-of-time compile
        loads each piece from vLLM's own cache after its compile start): no compile."""
        return bool(self.cache) and all(e.result == "hit" for e in self.cache)

    @property
    def kind(self) -> Literal["compiled", "loaded", "reused"]:
        if self.reused:
            return "reused"
        return "loaded" if self.loaded else "compiled"

    @property
    def cache_text(self) -> str:
        return ", ".join(f"{e.cache} {e.result}" for e in self.cache)

    @property
    def kernels(self) -> int:
        """Kernels Inductor generated (library calls such as ``extern_kernels.mm`` aside)."""
        code = self.output_code
        return sum(1 for k in code.kernels if k.kind != "extern") if code is not None else 0

    @property
    def extern_calls(self) -> int:
        code = self.output_code
        return sum(1 for k in code.kernels if k.kind == "extern") if code is not None else 0

    @property
    def label(self) -> str:
        return f"{self.submod} {range_text(self.range, self.single_size)}"


@dataclass
class Call:
    """One compile call: a config, a split graph, its piecewise compiles, what followed."""

    config: Artifact | None = None
    settings: dict[str, Any] = field(default_factory=dict)  # the config's payload
    split: Artifact | None = None
    submods: list[str] = field(default_factory=list)  # in the split graph's call order
    pieces: list[Piece] = field(default_factory=list)
    graphs: list[Artifact] = field(default_factory=list)  # vllm_submod_* dumps
    execution_code: Artifact | None = None
    #: The ops each splitting submodule calls, by submodule (``submod_1``), and where read.
    split_ops: dict[str, list[str]] = field(default_factory=dict)
    split_ops_from: Artifact | None = None
    after: list[Artifact | Metrics] = field(default_factory=list)  # after the last piece
    backend: Span | None = None  # its vllm_backend span

    @property
    def line(self) -> int | None:
        """Where the call starts: its config, else its split graph, else its first piece."""
        first = self.config or self.split or (self.pieces[0].start if self.pieces else None)
        first = first or self.execution_code
        return first.line if first is not None else None

    def graph_of(self, submod: str) -> Artifact | None:
        """The subgraph's dump (``vllm_submod_2``), logged once, at its first piece."""
        return next((g for g in self.graphs if _subgraph_name(g.name) == submod), None)

    @property
    def compile_metrics(self) -> list[Metrics]:
        """The compilation metrics logged after its pieces (vLLM's AOT compile: no id)."""
        return [m for m in self.after if isinstance(m, Metrics)]

    @property
    def label(self) -> str:
        """The config's prefix (``backbone``) or model, as a section's name."""
        for key in ("prefix", "model"):
            value = self.settings.get(key)
            if isinstance(value, str) and value.strip():
                return value[:LABEL_CHARS]  # a log's text: never a page's worth of title
        return "vLLM compile"

    @property
    def mode(self) -> str | None:
        """``VLLM_COMPILE (3)``: the mode by name, as logged when it is no known number."""
        value = self.settings.get("mode")
        if value is None:
            return None
        text = str(value)
        name = MODES.get(text.strip())
        return f"{name} ({text})" if name else text

    def listed(self, key: str) -> list[str]:
        """A config field as a list (vLLM joins lists with commas)."""
        return as_list(self.settings.get(key))

    @property
    def ranges_endpoints(self) -> tuple[str, list[str]] | None:
        """(field name, values) of the compile ranges' endpoints, under either name."""
        for key in ("compile_ranges_endpoints", "compile_ranges_split_points"):
            if key in self.settings:
                return key, self.listed(key)
        return None

    @property
    def compiled_submods(self) -> list[str]:
        seen: dict[str, None] = {}
        for p in self.pieces:
            seen.setdefault(p.submod)
        return list(seen)

    @property
    def splitting_submods(self) -> list[str]:
        """Submodules of the split graph that vLLM did not compile: the splitting ops."""
        compiled = set(self.compiled_submods)
        return [s for s in self.submods if s not in compiled]

    @property
    def candidates(self) -> list[str]:
        return self.listed("splitting_ops")

    @property
    def split_op_names(self) -> list[str]:
        """The distinct ops that split the graph, as the execution code calls them."""
        seen: dict[str, None] = {}
        for ops in self.split_ops.values():
            for op in ops:
                seen.setdefault(op)
        return list(seen)

    def op_is_candidate(self, op: str) -> bool:
        """``vllm.unified_attention_with_output`` is the config's
        ``vllm::unified_attention_with_output``."""
        namespace, _, name = op.partition(".")
        return f"{namespace}::{name.removesuffix('.default')}" in self.candidates


@dataclass
class Matrix:
    """The ranges-and-sizes × subgraphs table of one call."""

    ranges: list[tuple[int, int]]  # rows, in numeric order
    submods: list[str]  # columns, in compile order
    cells: dict[tuple[tuple[int, int], str], list[Piece]]

    def cell(self, rng: tuple[int, int], submod: str) -> list[Piece]:
        return self.cells.get((rng, submod), [])

    def row_seconds(self, rng: tuple[int, int]) -> float | None:
        return _sum(p.wall_seconds for s in self.submods for p in self.cell(rng, s))

    def column_seconds(self, submod: str) -> float | None:
        return _sum(p.wall_seconds for r in self.ranges for p in self.cell(r, submod))

    def row_inductor(self, rng: tuple[int, int]) -> float | None:
        return _sum(_inductor(p) for s in self.submods for p in self.cell(rng, s))

    def column_inductor(self, submod: str) -> float | None:
        return _sum(_inductor(p) for r in self.ranges for p in self.cell(r, submod))

    @property
    def pieces(self) -> list[Piece]:
        return [p for ps in self.cells.values() for p in ps]

    @property
    def total_seconds(self) -> float | None:
        return _sum(p.wall_seconds for p in self.pieces)

    @property
    def total_inductor(self) -> float | None:
        return _sum(_inductor(p) for p in self.pieces)

    @property
    def slowest(self) -> Piece | None:
        timed = [p for p in self.pieces if p.wall_seconds is not None]
        return max(timed, key=lambda p: p.wall_seconds or 0.0) if timed else None

    def containing(self, rng: tuple[int, int]) -> tuple[int, int] | None:
        """For a size row, the range row that contains it (vLLM uses the size's compile
        for that size instead of the range's)."""
        if rng[0] != rng[1]:
            return None
        for other in self.ranges:
            if other != rng and other[0] <= rng[0] <= other[1] and other[0] != other[1]:
                return other
        return None


@dataclass
class Load:
    """One piece loaded from a cache (a warm start): its output code and cache records."""

    output_code: Artifact
    cache: list[CacheEvent] = field(default_factory=list)

    @property
    def line(self) -> int:
        return self.output_code.line

    @property
    def filename(self) -> str:
        return code_file(self.output_code)

    @property
    def kernels(self) -> int:
        return sum(1 for k in self.output_code.kernels if k.kind != "extern")

    @property
    def cache_text(self) -> str:
        return ", ".join(f"{e.cache} {e.result}" for e in self.cache)


@dataclass
class LoadGroup:
    """The loads of one model of a warm log: those before its ``vllm_execution_code``
    (each LLM object loads its pieces, then vLLM generates its stitching code), and the
    span from their first ``inductor_load`` begin to their last end."""

    loads: list[Load]
    execution_code: Artifact | None
    span: Span | None = None

    @property
    def seconds(self) -> float | None:
        return self.span.seconds if self.span is not None else None


@dataclass
class Guard:
    """A guard on the token-count symbol, checked against the compile ranges."""

    expr: str
    line: int
    verdict: str  # what it means for the ranges, in words
    cuts: bool = False  # it excludes token counts a compile range holds


@dataclass
class TokenSymbol:
    """The symbol Dynamo created for the number of tokens, and the guards on it."""

    symbol: str
    line: int
    source: str
    value_range: str | None
    hint: str | None
    aliases: list[str] = field(default_factory=list)  # symbols a guard says are equal
    guards: list[Guard] = field(default_factory=list)


@dataclass
class VllmView:
    """Everything vLLM logged in one rank's log, in log order."""

    calls: list[Call] = field(default_factory=list)
    loads: list[Load] = field(default_factory=list)
    #: First inductor_load begin to last end, when the log loads for one model only.
    load_span: Span | None = None
    load_groups: list[LoadGroup] = field(default_factory=list)  # one per model loaded
    load_spans: int = 0  # inductor_load spans paired
    unknown: list[Artifact] = field(default_factory=list)  # vllm_* records not read here
    records: int = 0  # records of the model (artifacts, metrics, shape events, events)
    without_id: int = 0  # of them, logged without a compile id
    compile_ids: list[str] = field(default_factory=list)  # labels of the compiles with one
    dynamo_start: bool = False
    ids_missing: bool = False  # vLLM's own records were logged without a compile id
    metrics: list[Metrics] = field(default_factory=list)  # compilation metrics, no id
    symbol: TokenSymbol | None = None

    @property
    def pieces(self) -> list[Piece]:
        return [p for c in self.calls for p in c.pieces]

    @property
    def compiled(self) -> list[Piece]:
        """Pieces Inductor compiled (a cache lookup missed, or none was logged)."""
        return [p for p in self.pieces if p.kind == "compiled"]

    @property
    def reused(self) -> list[Piece]:
        return [p for p in self.pieces if p.reused]

    @property
    def cache_loaded(self) -> list[Piece]:
        """Pieces whose compile start is followed by cache hits only: loaded, not compiled."""
        return [p for p in self.pieces if p.kind == "loaded"]

    @property
    def loaded_count(self) -> int:
        """Pieces loaded from a cache: a warm log's loads and pieces loaded after a start."""
        return len(self.loads) + len(self.cache_loaded)

    @property
    def warm(self) -> bool:
        """Loaded from vLLM's cache: loads and no piecewise compile logged, or compile
        starts each followed by cache hits (or reused), none by a compile."""
        if self.loads and not self.pieces:
            return True
        return bool(self.cache_loaded) and not self.compiled

    @property
    def startup(self) -> Literal["warm", "cold", "no compile"]:
        """How the run started: ``warm`` from vLLM's cache, ``cold`` compiling."""
        if self.warm:
            return "warm"
        return "cold" if self.compiled else "no compile"

    @property
    def backend_seconds(self) -> float | None:
        """vLLM's compile time: its vllm_backend spans, summed over the calls."""
        return _sum(c.backend.seconds for c in self.calls if c.backend is not None)

    @property
    def models(self) -> int:
        """Compile calls: configs logged, else (a warm log) models whose loads it logged."""
        configs = sum(1 for c in self.calls if c.config is not None)
        return configs or len(self.load_groups) or len(self.shown_calls)

    @property
    def load_seconds(self) -> float | None:
        """Loading time: each model's loads' span, summed (the time between two models'
        loads is no loading)."""
        return _sum([g.seconds for g in self.load_groups])

    @property
    def compile_seconds(self) -> float | None:
        """The time a glance states: the backend's, else the loads'."""
        if self.backend_seconds is not None:
            return self.backend_seconds
        return self.load_seconds

    @property
    def shown_calls(self) -> list[Call]:
        """The calls worth a section: with a config, a split graph, pieces, or (a warm
        log's model) the split ops its execution code calls."""
        return [c for c in self.calls if c.config or c.pieces or c.split or c.split_ops]

    def call_label(self, call: Call) -> str:
        """The call's prefix; where another call has the same prefix, with its model; where
        that is the same too, with its number: ``backbone (tiny_llama)``."""
        calls = self.shown_calls
        label = call.label
        same = [c for c in calls if c.label == label]
        if len(same) < 2:
            return label
        raw = call.settings.get("model")
        model = str(raw)[:LABEL_CHARS] if raw is not None else ""
        alike = sum(1 for c in same if c.settings.get("model") == raw)
        if model.strip() and model != label and alike < 2:
            return f"{label} ({model})"
        return f"{label} (call {calls.index(call) + 1})" if call in calls else label

    def shared_settings(self) -> dict[str, Any]:
        """The config fields every call logged with the same value (several calls only):
        shown once, the rest per call."""
        configs = [c.settings for c in self.shown_calls if c.config is not None]
        if len(configs) < 2:
            return {}
        first = configs[0]
        return {k: v for k, v in first.items() if all(k in c and c[k] == v for c in configs)}

    def matrix(self, call: Call) -> Matrix:
        cells: dict[tuple[tuple[int, int], str], list[Piece]] = {}
        for p in call.pieces:
            if p.range is not None:
                cells.setdefault((p.range, p.submod), []).append(p)
        ranges = sorted({r for r, _ in cells})
        return Matrix(ranges, call.compiled_submods, cells)


# --------------------------------------------------------------------------- reading


def has_vllm(rank: RankTrace) -> bool:
    """Whether the log holds any of vLLM's compile records."""
    return any(_is_vllm(a.name) for c in rank.compiles for a in c.artifacts)


def _is_vllm(name: str) -> bool:
    return name in TRIGGERS or name.startswith(SUBGRAPH_PREFIXES)


def vllm_view(rank: RankTrace) -> VllmView | None:
    """What vLLM logged in ``rank``, read in log order; None when it logged nothing."""
    if not has_vllm(rank):
        return None
    cached: VllmView | None = vars(rank).get("_vllm_view") if hasattr(rank, "__dict__") else None
    if cached is not None:
        return cached
    view = _read(rank)
    if hasattr(rank, "__dict__"):
        vars(rank)["_vllm_view"] = view
    return view


def _read(rank: RankTrace) -> VllmView:
    view = VllmView()
    entries: list[tuple[int, int, object]] = []
    for c in rank.compiles:
        if c.id.is_unknown:
            view.without_id += len(c.artifacts) + len(c.metrics) + len(c.shape_events)
            view.ids_missing = view.ids_missing or any(_is_vllm(a.name) for a in c.artifacts)
        else:
            view.compile_ids.append(c.label)
        if any(a.event == "dynamo_start" for a in c.artifacts) or c.stack is not None:
            view.dynamo_start = True
        entries += [(a.line, 1, a) for a in c.artifacts]
        entries += [(m.line, 2, m) for m in c.metrics]
        entries += [(e.line, 0, e) for e in c.cache_events]
        entries += [(s.line, 3, s) for s in c.shape_events]
        view.records += len(c.artifacts) + len(c.metrics) + len(c.shape_events)
    events = list(_events(rank.chromium_events))
    view.records += len(events)
    view.without_id += sum(1 for e, _ in events if e.compile_id.is_unknown)
    entries += [(e.line, 4, (e, d)) for e, d in events]
    entries.sort(key=lambda x: (x[0], x[1]))
    _Walk(view).run(x[2] for x in entries)
    view.symbol = token_symbol(rank, view)
    return view


def _events(events: Sequence[ChromiumEvent]) -> Iterator[tuple[ChromiumEvent, dict[str, Any]]]:
    readable = [e for e in events if e.readable]
    payloads = read_payloads([e.payload for e in readable])
    for event in readable:
        try:
            data = ChromiumEvent.parse(next(payloads))
        except StopIteration:
            return
        except Exception:  # noqa: BLE001 - an unreadable log: what was read stands
            return
        if data is not None:
            yield event, data


class _Walk:
    """One pass over a rank's records in log order, filling a :class:`VllmView`."""

    def __init__(self, view: VllmView) -> None:
        self.view = view
        self.call: Call | None = None
        self.piece: Piece | None = None
        self.open: dict[str, list[tuple[float, int]]] = {}
        self.marker: Span | None = None  # a start span not yet given to its piece
        self.closed = False  # a new Dynamo capture followed the current call's pieces
        self.loads: list[Load] = []
        self.load: Load | None = None
        self.groups: list[LoadGroup] = []
        self.group_start = 0  # index in self.loads of the current group's first load
        self.group_begin: tuple[float, int] | None = None
        self.group_end: tuple[float, int] | None = None

    def run(self, entries: Iterator[object]) -> None:
        for entry in entries:
            if isinstance(entry, Artifact):
                self.artifact(entry)
            elif isinstance(entry, CacheEvent):
                self.cache(entry)
            elif isinstance(entry, Metrics):
                self.metrics(entry)
            elif isinstance(entry, tuple):
                self.event(*entry)
        self.finish()

    def current_call(self) -> Call:
        if self.call is None:
            self.call = Call()
            self.view.calls.append(self.call)
        return self.call

    def artifact(self, a: Artifact) -> None:
        name = a.name
        if name == CONFIG:
            self.piece, self.closed = None, False
            self.call = Call(config=a, settings=a.json_object() or {})
            self.view.calls.append(self.call)
        elif name == SPLIT_GRAPH:
            call = self.current_call()
            call.split = a
            call.submods = [m.group(2) for m in _SPLIT_CALL.finditer(a.text())]
        elif name == COMPILE_START:
            self.piece = Piece(a, a.json_object() or {})
            self.current_call().pieces.append(self.piece)
            if self.marker is not None and self.marker.begin_line < a.line:
                self.piece.marker, self.marker = self.marker, None
        elif name.startswith(SUBGRAPH_PREFIXES):
            self.current_call().graphs.append(a)
            if self.piece is not None and self.piece.graph is None:
                self.piece.graph = a
        elif name == EXECUTION_CODE:
            call = self.current_call()
            if call.execution_code is not None and call.config is None and not call.pieces:
                # a warm log's next model: loads, then its own execution code
                self.call = call = Call()
                self.view.calls.append(call)
            self.close_group(a)
            call.execution_code = a
            call.after.append(a)
            call.split_ops = inlined_ops(a.text())
            call.split_ops_from = a if call.split_ops else None
            self.piece = None
        else:
            if name.startswith("vllm_"):
                self.view.unknown.append(a)
            self.other(a)

    def close_group(self, code: Artifact | None) -> None:
        """The loads since the last execution code are one model's."""
        loads = self.loads[self.group_start :]
        if not loads:
            return
        span = None
        if self.group_begin is not None and self.group_end is not None:
            span = Span(LOAD_SPAN, *self.group_begin, *self.group_end)
        self.groups.append(LoadGroup(loads, code, span))
        self.group_start = len(self.loads)
        self.group_begin = self.group_end = None

    def other(self, a: Artifact) -> None:
        """A record of torch's: in the open piece, or after a call's pieces, or a load.
        A new Dynamo capture (the next model's, before its config) ends what follows a
        call's pieces: it is no record of that call."""
        if a.event in NEW_CAPTURE:
            self.closed = True
        if self.piece is not None:
            self.piece.records.append(a)
            if a.event == "inductor_output_code" and self.piece.output_code is None:
                self.piece.output_code = a
            return
        if self.call is not None and self.call.pieces and not self.closed:
            self.call.after.append(a)
        if a.event == "inductor_output_code":
            self.load = Load(a)
            self.loads.append(self.load)

    def cache(self, e: CacheEvent) -> None:
        if self.piece is not None:
            self.piece.cache.append(e)
        elif self.load is not None:
            self.load.cache.append(e)

    def metrics(self, m: Metrics) -> None:
        if self.call is not None and self.call.pieces and self.piece is None and not self.closed:
            self.call.after.append(m)
        self.view.metrics.append(m)

    def event(self, e: ChromiumEvent, data: dict[str, Any]) -> None:
        name, phase = data.get("name"), data.get("ph")
        ts = plausible(data.get("ts"), MAX_TIMESTAMP_US)
        if not isinstance(name, str) or ts is None:
            return
        if phase == "B":
            self.open.setdefault(name, []).append((ts, e.line))
            if name == LOAD_SPAN and self.group_begin is None:
                self.group_begin = (ts, e.line)
            return
        if phase != "E" or not self.open.get(name):
            return
        begin, line = self.open[name].pop()
        span = Span(name, begin, line, ts, e.line)
        piece = self.piece
        if name == START_SPAN:
            # vLLM logs the compile start inside this span: it opened before the piece
            if piece is not None and piece.marker is None and line < piece.line:
                piece.marker = span
            else:
                self.marker = span
        elif name == INDUCTOR_SPAN and piece is not None and piece.inductor is None:
            piece.inductor = span
        elif name == BACKEND_SPAN:
            call = self.current_call()
            if call.backend is None:
                call.backend = span
            if call.pieces:  # the last piece's wall time ends with the backend
                last = call.pieces[-1]
                if last.wall_seconds is None and last.marker is not None:
                    last.wall_seconds = _between(last.marker.begin_us, ts)
                    last.wall_end_line = e.line
            self.piece = None
        elif name == LOAD_SPAN:
            self.view.load_spans += 1
            if self.group_end is None or ts >= self.group_end[0]:
                self.group_end = (ts, e.line)

    def finish(self) -> None:
        for call in self.view.calls:
            _walls(call)
            _reuse_sources(call)
        if not self.view.pieces:  # with piecewise compiles, output code is theirs
            self.close_group(None)
            self.view.loads = self.loads
            self.view.load_groups = self.groups
            if len(self.groups) == 1:
                self.view.load_span = self.groups[0].span


def _walls(call: Call) -> None:
    """Each piece's wall time: from its start marker to the next piece's."""
    for p, nxt in zip(call.pieces, call.pieces[1:], strict=False):
        if p.wall_seconds is None and p.marker is not None and nxt.marker is not None:
            p.wall_seconds = _between(p.marker.begin_us, nxt.marker.begin_us)
            p.wall_end_line = nxt.marker.begin_line


def _reuse_sources(call: Call) -> None:
    """For each reused piece, the earlier compiled piece of the same range whose subgraph
    is the same graph but for its names (what vLLM's key ignores): probably its source.
    Where two earlier pieces qualify, none is named: the log does not tell them apart."""
    graph_of: dict[str, str] = {}
    for g in call.graphs:
        graph_of.setdefault(_subgraph_name(g.name), _shape_of(g.text()))
    for i, p in enumerate(call.pieces):
        if not p.reused or p.submod not in graph_of:
            continue
        twins = {
            earlier.submod: earlier
            for earlier in call.pieces[:i]
            if earlier.compiled
            and earlier.range == p.range
            and earlier.submod != p.submod
            and graph_of.get(earlier.submod) == graph_of[p.submod]
        }
        p.twins = len(twins)
        if len(twins) == 1:
            p.source = next(iter(twins.values()))


def _subgraph_name(name: str) -> str:
    for prefix in SUBGRAPH_PREFIXES:
        if name.startswith(prefix):
            return "submod_" + name[len(prefix) :]
    return name


def _shape_of(text: str) -> str:
    """A graph's readable code with its comments dropped and every name it defines (the
    forward's parameters, each node) renamed in order of definition: two isomorphic
    subgraphs (layer 1's and layer 2's) then read the same, as vLLM's cache key sees
    them (``autograd_cache_normalize_inputs``), though the first middle layer's input is
    ``hidden_states`` and the next one's ``x_residual_1``."""
    kept = [ln for ln in text[:COMPARE_CHARS].split("\n") if not ln.strip().startswith("#")]
    body = "\n".join(ln for ln in kept if ln.strip())
    names: dict[str, str] = {}
    for m in _DEFINED.finditer(body):
        names.setdefault(m.group(1), f"v{len(names)}")
    forward = _FORWARD.search(body)
    if forward is not None:
        for m in _PARAMETER.finditer(forward.group(1)):
            names.setdefault(m.group(1), f"v{len(names)}")
    return _NAME.sub(lambda m: names.get(m.group(0), m.group(0)), body)


#: A node of a readable graph: ``    view: "f32[s72, 192]" = ...`` or ``    getitem = ...``.
_DEFINED = re.compile(r"^ {4,}([A-Za-z_]\w{0,200})(?:: \"[^\"\n]{0,2000}\")? = ", re.M)
_FORWARD = re.compile(r"^ +def forward\(self, ([^\n]{0,200000})\):", re.M)
_PARAMETER = re.compile(r"(?:^|, )([A-Za-z_]\w{0,200})(?=: \"|,|$)")
#: A name, not an attribute (``x.view``: the ``view`` stays).
_NAME = re.compile(r"(?<![\w.])[A-Za-z_]\w{0,200}")


def inlined_ops(code: str) -> dict[str, list[str]]:
    """``{"submod_1": ["vllm.unified_kv_cache_update", ...]}``: the ops each splitting
    submodule calls, read from the ``__vllm_inlined_submods__<k>`` functions of vLLM's
    execution code."""
    found: dict[str, list[str]] = {}
    matches = list(_INLINED_DEF.finditer(code))
    for m, nxt in zip(matches, [*matches[1:], None], strict=True):
        body = code[m.end() : nxt.start() if nxt is not None else len(code)]
        body = body.split("\ndef ", 1)[0]
        ops: dict[str, None] = {}
        for op in _OP_CALL.finditer(body):
            ops.setdefault(op.group(1))
        found[f"submod_{m.group(2)}"] = list(ops)
    return found


def split_graph_ops(call: Call) -> dict[str, list[str]]:
    """The ops of the splitting submodules as the split graph's ``class submod_<k>`` bodies
    call them: where no execution code was logged."""
    if call.split is None:
        return {}
    text = call.split.text()
    wanted = set(call.splitting_submods)
    found: dict[str, list[str]] = {}
    matches = list(_CLASS_DEF.finditer(text))
    for m, nxt in zip(matches, [*matches[1:], None], strict=True):
        if m.group(1) not in wanted:
            continue
        body = text[m.end() : nxt.start() if nxt is not None else len(text)]
        ops: dict[str, None] = {}
        for line in body.split("\n"):
            if line.strip().startswith("#"):
                continue
            for op in _OP_CALL.finditer(line):
                ops.setdefault(op.group(1))
        found[m.group(1)] = list(ops)
    return found


def captured_call(rank: RankTrace, compile_: Compile) -> Call | None:
    """The vLLM compile call whose graph this compile's Dynamo capture gave: the first call
    that starts after its ``dynamo_output_graph`` and before the next compile's.  With
    vLLM's ahead-of-time compile only this Dynamo part carries the compile id; the split,
    the piecewise compiles and the metrics follow it without one."""
    view = vllm_view(rank)
    if view is None or compile_.id.is_unknown:
        return None
    graphs = [a.line for a in compile_.artifacts if a.event == "dynamo_output_graph"]
    if not graphs:
        return None
    begin = graphs[-1]
    later = [
        a.line
        for c in rank.compiles
        if c is not compile_ and not c.id.is_unknown
        for a in c.artifacts
        if a.event == "dynamo_output_graph" and a.line > begin
    ]
    end = min(later, default=None)
    for call in view.calls:
        line = call.line
        if line is not None and line > begin and (end is None or line < end):
            return call
    return None


# --------------------------------------------------------------------------- shapes


def token_symbol(rank: RankTrace, view: VllmView) -> TokenSymbol | None:
    """The token-count symbol (``s72`` from ``L['input_ids'].size()[0]``) and every guard
    on it or on a symbol a guard says equals it, checked against the compile ranges."""
    events = sorted((s for c in rank.compiles for s in c.shape_events), key=lambda s: s.line)
    created: dict[str, tuple[str, ShapeEvent]] = {}
    for s in events:
        if s.event != "create_symbol":
            continue
        m = _TOKEN_SOURCE.match(str(s.data.get("source", ""))[:200])
        if m and m.group(1) in TOKEN_INPUTS:
            created.setdefault(m.group(1), (str(s.data.get("symbol", "")), s))
    chosen = next((created[n] for n in TOKEN_INPUTS if n in created), None)
    if chosen is None:
        return None
    symbol, event = chosen
    found = TokenSymbol(
        symbol,
        event.line,
        str(event.data.get("source", "")),
        _text(event.data.get("vr")),
        _text(event.data.get("val")),
    )
    low, high = _range_bounds(view)
    names = {symbol}
    for s in events:
        expr = s.data.get("expr")
        if s.event != "guard_added_fast" and s.event != "guard_added":
            continue
        if not isinstance(expr, str) or len(expr) > 2000:
            continue
        eq = _EQ_SYMBOLS.match(expr)
        if eq and symbol in eq.groups():
            other = eq.group(2) if eq.group(1) == symbol else eq.group(1)
            if other not in names:
                names.add(other)
                found.aliases.append(other)
    pattern = re.compile(r"\b(" + "|".join(re.escape(n) for n in sorted(names)) + r")\b")
    for s in events:
        expr = s.data.get("expr")
        if s.event not in ("guard_added_fast", "guard_added") or not isinstance(expr, str):
            continue
        if len(expr) > 2000 or not pattern.search(expr):
            continue
        found.guards.append(_check(expr, s.line, names, low, high))
    return found


def _range_bounds(view: VllmView) -> tuple[int | None, int | None]:
    ranges = [p.range for p in view.pieces if p.range is not None]
    if not ranges:
        return None, None
    return min(r[0] for r in ranges), max(r[1] for r in ranges)


def _check(expr: str, line: int, names: set[str], low: int | None, high: int | None) -> Guard:
    m = _BOUND.match(expr)
    if m is None or m.group(2) not in names:
        eq = _EQ_SYMBOLS.match(expr)
        if eq and set(eq.groups()) <= names:
            return Guard(expr, line, f"{eq.group(1)} and {eq.group(2)} are the same count")
        return Guard(expr, line, "not a bound on the token count alone: not checked")
    factor = int(m.group(1) or 1)
    op, limit = m.group(3), int(m.group(4))
    sym = m.group(2)
    if op in ("<=", "<"):
        bound = limit // factor if op == "<=" else (limit - 1) // factor
        if high is None:
            return Guard(expr, line, f"{sym} ≤ {bound}; no compile range logged to check")
        if bound >= high:
            return Guard(expr, line, f"{sym} ≤ {bound}: every compile range (up to {high}) fits")
        return Guard(expr, line, f"{sym} ≤ {bound}: cuts the ranges (up to {high})", cuts=True)
    bound = -(-limit // factor) if op == ">=" else limit // factor + 1
    if low is None:
        return Guard(expr, line, f"{sym} ≥ {bound}; no compile range logged to check")
    if bound <= low:
        return Guard(expr, line, f"{sym} ≥ {bound}: every compile range (from {low}) fits")
    return Guard(expr, line, f"{sym} ≥ {bound}: cuts the ranges (from {low})", cuts=True)


# --------------------------------------------------------------------------- helpers


def as_list(value: Any) -> list[str]:
    """A config value as a list: vLLM 0.32 joins lists with ``", "``; a JSON list stays one."""
    if value is None:
        return []
    if isinstance(value, list):
        return [str(v) for v in value]
    text = str(value).strip()
    if text.startswith("[") and text.endswith("]"):
        text = text[1:-1]
    return [part.strip().strip("'\"") for part in text.split(",") if part.strip()]


def range_text(rng: tuple[int, int] | None, single: bool = False) -> str:
    """``size 4`` or ``[1, 16]``."""
    if rng is None:
        return "(no range logged)"
    if single or rng[0] == rng[1]:
        return f"size {rng[0]}"
    return f"[{rng[0]}, {rng[1]}]"


def code_file(artifact: Artifact) -> str:
    """The output code's file name (``c…py``), without its folder (a machine path)."""
    name = artifact.metadata.get("filename")
    return str(name).replace("\\", "/").rsplit("/", 1)[-1][:200] if name else ""


@dataclass
class CellLoad:
    """A cold run's piece and what a warm run loaded for it: the load of the same output
    code file; for a piece the cold run reused, the load of its source's file."""

    piece: Piece
    load: Load | None
    via: Piece | None = None  # the source piece whose artifact a reused piece used


def map_cells(cold: VllmView, warm: VllmView) -> list[CellLoad]:
    """Each of the cold run's pieces, in log order, with the warm run's load of it: from
    the warm log alone no load says its subgraph or range, but it loads the same output
    code files the cold log names."""
    by_file: dict[str, Load] = {}
    for load in warm.loads:
        by_file.setdefault(load.filename, load)
    for piece in warm.cache_loaded:  # a warm start that logged compile starts
        if piece.output_code is not None:
            by_file.setdefault(code_file(piece.output_code), Load(piece.output_code, piece.cache))
    found: list[CellLoad] = []
    for p in cold.pieces:
        if p.output_code is not None:
            found.append(CellLoad(p, by_file.get(code_file(p.output_code))))
        elif p.source is not None and p.source.output_code is not None:
            found.append(CellLoad(p, by_file.get(code_file(p.source.output_code)), p.source))
        else:
            found.append(CellLoad(p, None))
    return found


def map_loads(warm: VllmView, cold: VllmView) -> dict[int, Piece]:
    """Each warm load (by its line) mapped to the cold log's piece that wrote the same
    output code file: from the warm log alone no load says its subgraph or range."""
    by_file = {code_file(p.output_code): p for p in cold.pieces if p.output_code is not None}
    return {load.line: by_file[load.filename] for load in warm.loads if load.filename in by_file}


def _int(value: Any) -> int | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, int) and abs(value) < 10**18:
        return value
    if isinstance(value, str) and value.strip().lstrip("-").isdigit() and len(value) < 19:
        return int(value)
    return None


def _text(value: Any) -> str | None:
    return None if value is None else str(value)[:200]


def _between(begin: float, end: float | None) -> float | None:
    return None if end is None else plausible((end - begin) / 1e6, MAX_SECONDS)


def _inductor(p: Piece) -> float | None:
    return p.inductor.seconds if p.inductor is not None else None


def _sum(values: Iterator[float | None] | Sequence[float | None]) -> float | None:
    known = [v for v in values if v is not None]
    return sum(known) if known else None


# --------------------------------------------------------------------------- summary


def summary_data(view: VllmView) -> dict[str, Any]:
    """The view's figures as plain JSON values (``summary --json``), each with its line."""
    calls = []
    for call in view.calls:
        m = view.matrix(call)
        slowest = m.slowest
        calls.append(
            {
                "line": call.config.line if call.config is not None else None,
                "label": view.call_label(call),
                "model": _text(call.settings.get("model")),
                "prefix": _text(call.settings.get("prefix")),
                "mode": call.mode,
                "backend": _text(call.settings.get("backend")),
                "backend_seconds": call.backend.seconds if call.backend else None,
                "backend_lines": [call.backend.begin_line, call.backend.end_line]
                if call.backend
                else None,
                "split_ops": call.split_op_names,
                "candidate_split_ops": len(call.candidates),
                "pieces": [_piece_data(p) for p in call.pieces],
                "seconds_per_range": {range_text(r): m.row_seconds(r) for r in m.ranges},
                "seconds_per_subgraph": {s: m.column_seconds(s) for s in m.submods},
                "slowest": _piece_data(slowest) if slowest is not None else None,
            }
        )
    symbol = view.symbol
    return {
        "start": view.startup,
        "compile_seconds": view.compile_seconds,
        "compile_calls": view.models,
        "compiles": len(view.compiled),
        "reused": len(view.reused),
        "loaded": view.loaded_count,
        "compile_ids_missing": view.ids_missing,
        "records_without_compile_id": view.without_id,
        "calls": calls,
        "loads": [
            {
                "line": load.line,
                "output_code": load.filename,
                "cache": load.cache_text,
                "kernels": load.kernels,
            }
            for load in view.loads
        ],
        "load_seconds": view.load_seconds,
        "load_groups": [
            {
                "loads": len(g.loads),
                "seconds": g.seconds,
                "lines": [g.span.begin_line, g.span.end_line] if g.span is not None else None,
                "execution_code_line": g.execution_code.line if g.execution_code else None,
            }
            for g in view.load_groups
        ],
        "token_symbol": None
        if symbol is None
        else {
            "symbol": symbol.symbol,
            "line": symbol.line,
            "source": symbol.source,
            "range": symbol.value_range,
            "guards": [
                {"expr": g.expr, "line": g.line, "verdict": g.verdict, "cuts": g.cuts}
                for g in symbol.guards
            ],
        },
        "other_records": [{"name": a.name, "line": a.line} for a in view.unknown],
    }


def _piece_data(p: Piece) -> dict[str, Any]:
    code = p.output_code
    return {
        "line": p.line,
        "subgraph": p.submod,
        "range": list(p.range) if p.range is not None else None,
        "size": p.single_size,
        "wall_seconds": p.wall_seconds,
        "inductor_seconds": p.inductor.seconds if p.inductor is not None else None,
        "cache": [f"{e.cache} {e.result}" for e in p.cache],
        "reused": p.reused,
        "loaded": p.loaded,
        "kernels": p.kernels,
        "output_code": code_file(code) if code is not None else None,
        "output_code_line": code.line if code is not None else None,
        "other_fields": {k: _text(v) for k, v in p.other_fields.items()},
    }


def summary_text(view: VllmView) -> str:
    """One line for ``summary``: cold or warm, the pieces, vLLM's time, the slowest."""
    parts = [f"{view.startup} start"]
    calls = view.models
    if calls > 1:
        parts.append(f"{calls} compile calls")
    if view.compiled:
        parts.append(f"{len(view.compiled)} piecewise compiles")
    if view.reused:
        parts.append(f"{len(view.reused)} reused")
    if view.loaded_count:
        parts.append(f"{view.loaded_count} loaded")
    seconds = view.compile_seconds
    if seconds is not None:
        what = "vllm_backend" if view.backend_seconds is not None else "loading"
        parts.append(f"{seconds:.2f} s ({what})")
    slowest = [m.slowest for c in view.calls if (m := view.matrix(c)).slowest is not None]
    if slowest:
        p = max(slowest, key=lambda p: p.wall_seconds or 0.0) if slowest else None
        if p is not None and p.wall_seconds is not None:
            parts.append(f"slowest {p.label} {p.wall_seconds:.2f} s (line {p.line})")
    return ", ".join(parts)
