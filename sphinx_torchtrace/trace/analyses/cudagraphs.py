"""CUDA graph trees: which frames ran as CUDA graphs, which were skipped and why, and how
often they were recorded again.

Two sources.  A trace's metrics: ``cudagraph_skip_reason`` (compilation metrics) and
``runtime_cudagraphify_time_us`` (runtime metrics: the time spent recording).  A text
log's ``cudagraphs`` messages (``TORCH_LOGS=cudagraphs``; the lines are kept in the
compile's ``cudagraph_log`` artifact by :mod:`.text_log`): a tree recorded, a warm-up of
a function, a recording with its graph id, a re-recording and why, a skip and why.  Only
a text log tells re-recordings: TORCH_TRACE records none.  Message formats are those of
torch 2.13's ``_inductor/cudagraph_trees.py`` and ``cudagraph_utils.py`` and, for older
torch, those quoted in seed 003 (``Recording function 0 of graph recording id 0``);
``tests/test_cudagraphs.py`` checks them against torch's source.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Literal

from ..model import Compile, RankTrace
from .timings import MAX_SECONDS, plausible

#: The artifact a text log keeps a compile's CUDA graph lines in (``text_log.CUDAGRAPH_LINES``).
CUDAGRAPH_LINES = "cudagraph_log"
#: Lines of one compile's CUDA graph messages read, at most.
MAX_LINES = 10_000

#: What a CUDA graph message says.
CudaGraphEventKind = Literal["tree", "warmup", "record", "rerecord", "skip", "eager", "sizes"]
#: One pattern per event kind, each anchored and bounded (linear on any line).
PATTERNS: dict[CudaGraphEventKind, re.Pattern[str]] = {
    # torch 2.13: "Recording cudagraph tree for graph without symints" / "... for symint key K";
    # seed 003 (older torch): "recording cudagraph tree for None"
    "tree": re.compile(r"^[Rr]ecording cudagraph tree for (.{1,300})$"),
    # "Running warmup function=NAME, mode=MODE"; older: "Running warmup of function 0"
    "warmup": re.compile(
        r"^Running warmup (?:function=(.{1,300}?), mode=(\w{1,40})|of function (\d{1,9}))"
    ),
    # "Recording function=NAME, mode=MODE, cuda_graph_id=N, inputs: ..."
    # older: "Recording function 0 of graph recording id 0"
    "record": re.compile(
        r"^Recording function(?:=(.{1,300}?), mode=(\w{1,40}), cuda_graph_id=(\d{1,9})"
        r"| (\d{1,9}) of graph recording id (\d{1,9}))"
    ),
    # "Re-recording function=NAME, mode=MODE, reason=WHY"
    "rerecord": re.compile(
        r"^Re-recording function=(.{1,300}?), mode=(\w{1,40}), reason=(.{0,4000})"
    ),
    # "skipping cudagraphs due to WHY" (format_default_skip_message) and
    # "skipping cudagraph due to function N exceeding max re-recording limit ..."
    "skip": re.compile(r"^skipping cudagraphs? due to (.{0,4000})"),
    # "Running eager function=NAME": a function that is not recorded on this path
    "eager": re.compile(r"^Running eager function=(.{1,300})$"),
    # the perf hint of maybe_warning_due_to_dynamic_shape
    "sizes": re.compile(
        r"^CUDAGraph supports dynamic shapes by recording a new graph for each "
        r"distinct input size.{0,400}?We have observed (\d{1,9}) distinct sizes"
    ),
}


@dataclass(frozen=True)
class CudaGraphEvent:
    """One CUDA graph message: its kind (a key of :data:`PATTERNS`), what it names, where."""

    kind: CudaGraphEventKind
    line: int
    text: str
    function: str | None = None
    graph_id: int | None = None
    reason: str | None = None


@dataclass
class FrameCudaGraphs:
    """What one compile did with CUDA graphs."""

    compile: Compile
    skip_reasons: list[str] = field(default_factory=list)
    record_time_us: float | None = None  # runtime_cudagraphify_time_us
    events: list[CudaGraphEvent] = field(default_factory=list)

    def count(self, kind: str) -> int:
        return sum(1 for e in self.events if e.kind == kind)

    @property
    def rerecord_reasons(self) -> list[str]:
        return [e.reason or "" for e in self.events if e.kind == "rerecord"]

    @property
    def outcome(self) -> str:
        """``skipped`` (a skip reason), ``recorded`` (a recording or its time), or ``unknown``."""
        if self.skip_reasons:
            return "skipped"
        if self.record_time_us or any(e.kind in ("tree", "record") for e in self.events):
            return "recorded"
        return "unknown"


def parse_event(text: str, line: int) -> CudaGraphEvent | None:
    """The event a message line says, or None for other lines (inputs, checkpoints ...)."""
    text = text.strip()[:5000]
    for kind, pattern in PATTERNS.items():
        m = pattern.match(text)
        if m is None:
            continue
        groups = m.groups()
        if kind == "tree":
            return CudaGraphEvent(kind, line, text, reason=groups[0])
        if kind == "warmup":
            return CudaGraphEvent(kind, line, text, function=groups[0] or groups[2])
        if kind == "record":
            gid = groups[2] or groups[4]
            return CudaGraphEvent(
                kind,
                line,
                text,
                function=groups[0] or groups[3],
                graph_id=int(gid) if gid else None,
            )
        if kind == "rerecord":
            return CudaGraphEvent(kind, line, text, function=groups[0], reason=groups[2])
        if kind == "skip":
            return CudaGraphEvent(kind, line, text, reason=groups[0])
        if kind == "eager":
            return CudaGraphEvent(kind, line, text, function=groups[0])
        return CudaGraphEvent(kind, line, text, reason=groups[0])
    return None


def frame_cudagraphs(c: Compile) -> FrameCudaGraphs | None:
    """What ``c`` did with CUDA graphs; None when nothing it logged is about them."""
    found = FrameCudaGraphs(c)
    for m in c.metrics:
        reason = m.data.get("cudagraph_skip_reason")
        if isinstance(reason, str) and reason:
            found.skip_reasons.append(_without_prefix(reason))
        time_us = plausible(m.data.get("runtime_cudagraphify_time_us"), MAX_SECONDS * 1e6)
        if time_us is not None:  # never float() of a 400-digit integer, never NaN
            found.record_time_us = (found.record_time_us or 0) + time_us
    for a in c.artifacts:
        if a.name != CUDAGRAPH_LINES:
            continue
        for i, text in enumerate(a.text().split("\n")[:MAX_LINES]):
            event = parse_event(text, a.line + i)
            if event is None:
                continue
            found.events.append(event)
            if event.kind == "skip" and event.reason and event.reason not in found.skip_reasons:
                found.skip_reasons.append(event.reason)
    if not found.skip_reasons and found.record_time_us is None and not found.events:
        return None
    return found


def rank_cudagraphs(rank: RankTrace) -> list[FrameCudaGraphs]:
    """Every compile of ``rank`` that logged something about CUDA graphs, in compile order."""
    return [f for c in rank.compiles if (f := frame_cudagraphs(c)) is not None]


def _without_prefix(reason: str) -> str:
    """``skipping cudagraphs due to X`` → ``X``: the reason, as the text log's skips say it."""
    m = PATTERNS["skip"].match(reason.strip()[:5000])
    return m.group(1) if m else reason
