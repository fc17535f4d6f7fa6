"""An oracle for vLLM logs, independent of the package: it reads a TORCH_TRACE log's
records in order itself (like the shared capture's ``vllm_facts.py``) and says, per
compile call, each ``vllm_piecewise_compile_start``, whether a compile followed it, its
wall and Inductor time, its output code; for a warm log, the loads and their span.

The tests of :mod:`tests.test_vllm_captures` check the page, ``summary --json`` and the
glance against it."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

_PREFIX = re.compile(r"^[VIWEC]\d{4} \d\d:\d\d:\d\d\.\d+ +\d+ [^\]]+\] (.*)$")
_ENVELOPE = {
    "rank",
    "frame_id",
    "frame_compile_id",
    "attempt",
    "has_payload",
    "compiled_autograd_id",
    "stack",
    "timestamp",
    "subgraph_name",
}
START_SPAN = "vllm_log_compile_start_torch_trace_only"


@dataclass
class Record:
    line: int  # 1-based line of its envelope
    kind: str  # the envelope's record key: artifact, graph_dump, chromium_event, ...
    name: str  # the record's own name where it has one
    envelope: dict[str, Any]
    payload: str

    @property
    def compile_id(self) -> str | None:
        frame = self.envelope.get("frame_id")
        return None if frame is None else f"{frame}/{self.envelope.get('frame_compile_id')}"


def records(path: Path) -> Iterator[Record]:
    lines = path.read_text(encoding="utf-8").split("\n")
    i = 0
    while i < len(lines):
        m = _PREFIX.match(lines[i])
        i += 1
        line = i
        if not m:
            continue
        envelope = json.loads(m.group(1))
        payload = []
        while i < len(lines) and lines[i].startswith("\t"):
            payload.append(lines[i][1:])
            i += 1
        kind = next((k for k in envelope if k not in _ENVELOPE), "?")
        value = envelope[kind]
        name = value.get("name", "") if isinstance(value, dict) else ""
        yield Record(line, kind, str(name or kind), envelope, "\n".join(payload))


@dataclass
class Piece:
    line: int
    submod: str
    range: tuple[int, int]
    single_size: bool
    marker_us: float | None = None  # its START_SPAN's begin
    cache: list[str] = field(default_factory=list)
    output_code: str | None = None  # the file name, no folder
    output_code_line: int | None = None
    kernels: int = 0
    inductor_s: float | None = None
    wall_s: float | None = None
    graph_line: int | None = None  # its vllm_submod_* dump, where logged after it

    @property
    def compiled(self) -> bool:
        """Inductor ran or looked its caches up (not reused)."""
        return self.output_code is not None or bool(self.cache)

    @property
    def loaded(self) -> bool:
        """Every cache record after its start is a hit: loaded from a cache."""
        return bool(self.cache) and all(name.endswith("_hit") for name in self.cache)


@dataclass
class Call:
    line: int | None
    config: dict[str, Any]
    split_line: int | None = None
    submods: list[str] = field(default_factory=list)
    pieces: list[Piece] = field(default_factory=list)
    graphs: dict[str, str] = field(default_factory=dict)  # submod -> its dump
    backend: tuple[int, int, float] | None = None  # begin line, end line, seconds
    metrics_lines: list[int] = field(default_factory=list)

    @property
    def label(self) -> str:
        return str(self.config.get("prefix") or self.config.get("model") or "")


@dataclass
class Facts:
    calls: list[Call] = field(default_factory=list)
    loads: list[tuple[int, str]] = field(default_factory=list)  # (line, output code file)
    #: Per model of a warm log (its loads end at its vllm_execution_code): the loads, and
    #: first inductor_load begin line, last end line, seconds between them.
    load_groups: list[tuple[list[tuple[int, str]], tuple[int, int, float] | None]] = field(
        default_factory=list
    )
    compile_ids: dict[str, int] = field(default_factory=dict)

    @property
    def pieces(self) -> list[Piece]:
        return [p for c in self.calls for p in c.pieces]


def _file(envelope: dict[str, Any]) -> str:
    value = envelope.get("inductor_output_code") or {}
    return str(value.get("filename", "")).rsplit("/", 1)[-1]


def facts(path: Path) -> Facts:
    out = Facts()
    call: Call | None = None
    piece: Piece | None = None
    opened: dict[str, list[tuple[float, int]]] = {}
    last_marker: float | None = None
    load_first: tuple[float, int] | None = None
    load_last: tuple[float, int] | None = None
    outputs: list[tuple[int, str]] = []
    group: list[tuple[int, str]] = []

    def close() -> None:
        nonlocal group, load_first, load_last
        if group:
            span = None
            if load_first is not None and load_last is not None:
                span = (load_first[1], load_last[1], (load_last[0] - load_first[0]) / 1e6)
            out.load_groups.append((group, span))
        group, load_first, load_last = [], None, None

    for r in records(path):
        cid = r.compile_id or "-"
        out.compile_ids[cid] = out.compile_ids.get(cid, 0) + 1
        if r.name == "vllm_compilation_config":
            call = Call(r.line, json.loads(r.payload))
            out.calls.append(call)
            piece = None
        elif r.name == "vllm_piecewise_split_graph" and call is not None:
            call.split_line = r.line
            call.submods = re.findall(r"^\s+submod_\d+ = self\.(submod_\d+)\(", r.payload, re.M)
        elif r.name == "vllm_piecewise_compile_start" and call is not None:
            s = json.loads(r.payload)
            rng = (int(s["compile_range_start"]), int(s["compile_range_end"]))
            piece = Piece(r.line, s["submod_name"], rng, bool(s["is_single_size"]), last_marker)
            call.pieces.append(piece)
        elif r.name.startswith("vllm_submod_") and call is not None:
            call.graphs[r.name[len("vllm_") :]] = r.payload
            if piece is not None and piece.graph_line is None:
                piece.graph_line = r.line
        elif r.name == "vllm_execution_code":
            piece = None
            close()
        elif re.search(r"_cache_(miss|hit|bypass)$", r.name) and r.kind == "artifact":
            if piece is not None:
                piece.cache.append(r.name)
        elif r.kind == "inductor_output_code":
            outputs.append((r.line, _file(r.envelope)))
            if piece is None:
                group.append((r.line, _file(r.envelope)))
            if piece is not None and piece.output_code is None:
                piece.output_code, piece.output_code_line = _file(r.envelope), r.line
                piece.kernels = len(re.findall(r"^(cpp_fused_\w+|triton_\w+) = ", r.payload, re.M))
        elif r.kind.startswith("compilation_metrics") and call is not None:
            call.metrics_lines.append(r.line)
        elif r.kind == "chromium_event":
            e = json.loads(r.payload)
            name, ts = e.get("name"), e.get("ts")
            if e.get("ph") == "B":
                opened.setdefault(name, []).append((ts, r.line))
                if name == START_SPAN:
                    last_marker = ts
                if name == "AOTAutogradCache.inductor_load" and load_first is None:
                    load_first = (ts, r.line)
            elif e.get("ph") == "E" and opened.get(name):
                begin, begin_line = opened[name].pop()
                if name == "inductor_compile" and piece is not None and piece.inductor_s is None:
                    piece.inductor_s = (ts - begin) / 1e6
                if name == "vllm_backend" and call is not None and call.backend is None:
                    call.backend = (begin_line, r.line, (ts - begin) / 1e6)
                    if call.pieces and call.pieces[-1].marker_us is not None:
                        call.pieces[-1].wall_s = (ts - call.pieces[-1].marker_us) / 1e6
                    piece = None
                if name == "AOTAutogradCache.inductor_load":
                    if load_last is None or ts >= load_last[0]:
                        load_last = (ts, r.line)
    for c in out.calls:
        for p, nxt in zip(c.pieces, c.pieces[1:], strict=False):
            if p.marker_us is not None and nxt.marker_us is not None:
                p.wall_s = (nxt.marker_us - p.marker_us) / 1e6
    close()
    if out.pieces:
        out.load_groups = []
    else:
        out.loads = outputs
    return out


def graph_twins(call: Call, piece: Piece) -> list[Piece]:
    """The earlier compiled pieces of the same range whose subgraph dump calls the same
    functions and methods with the same annotated types, line by line (names aside: vLLM
    keys a compile by the graph's structure, not its names)."""

    def calls(text: str) -> list[tuple[list[str], list[str]]]:
        found = []
        for line in text.split("\n"):
            if line.strip().startswith("#") or not line.strip():
                continue
            code = line.split(";", 1)[0]
            found.append(
                (re.findall(r"(?:torch(?:\.\w+)+|\.\w+)\(", code), re.findall(r'"[^"]*"', code))
            )
        return found

    mine = call.graphs.get(piece.submod)
    if mine is None:
        return []
    return [
        p
        for p in call.pieces[: call.pieces.index(piece)]
        if p.compiled
        and p.range == piece.range
        and p.submod != piece.submod
        and p.submod in call.graphs
        and calls(call.graphs[p.submod]) == calls(mine)
    ]
