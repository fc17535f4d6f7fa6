"""How the frames of two logs of one rank are paired, and what changed in each pair.

Frames are paired by :class:`.run_frames.RunFunction` (file, function, occurrence), never
by compile id; a pairing that rests on order alone says so (``ambiguous``).  Graph breaks
and compile errors are compared as sets of :class:`.run_frames.BreakSite`.  Bounded: a
Dynamo graph diff is cut at :data:`MAX_DIFF_LINES`.
"""

from __future__ import annotations

import difflib
from collections import Counter
from collections.abc import Callable, Mapping
from dataclasses import replace
from typing import Any

from ..analyses.caches import cache_totals
from ..analyses.phases import TIME_PHASES, time_totals
from ..model import RankTrace
from ..secrets import mask_secrets
from .changes import Change, FrameDiff, PhaseChange, RankDiff
from .function_times import function_times
from .run_frames import BreakSite, FrameFacts, RunFunction, frames_of
from .vllm_change import vllm_change

#: Bounds: Dynamo graph lines diffed, lines of a graph diff kept, other frames an
#: ambiguous pairing names.
MAX_GRAPH_LINES = 4000
MAX_DIFF_LINES = 400
MAX_CANDIDATES = 20


def diff_ranks(
    baseline: RankTrace,
    new: RankTrace,
    *,
    rank: int = 0,
    rewrite: Callable[[str], str] | None = None,
    renames: Mapping[str, str] | None = None,
    mask: Callable[[str], str] = mask_secrets,
) -> RankDiff:
    """Compare the frames of two logs of one rank (see :func:`.diff.diff_traces`)."""
    old_list = _renamed(frames_of(baseline, rewrite, mask), renames or {})
    new_list = frames_of(new, rewrite, mask)
    old_frames = {f.key: f for f in old_list}
    new_frames = {f.key: f for f in new_list}
    keys = list(new_frames) + [k for k in old_frames if k not in new_frames]
    frames = [_frame_diff(k, old_frames.get(k), new_frames.get(k)) for k in keys]
    _judge_matches(frames, old_list, new_list)
    old_breaks = _distinct(f.breaks for f in old_frames.values())
    new_breaks = _distinct(f.breaks for f in new_frames.values())
    old_errors = _distinct(f.errors for f in old_frames.values())
    new_errors = _distinct(f.errors for f in new_frames.values())
    old_times = {t.phase: t.seconds for t in time_totals(baseline.compiles)}
    new_times = {t.phase: t.seconds for t in time_totals(new.compiles)}
    times = [
        PhaseChange(phase.key, old_times.get(phase.key), new_times.get(phase.key))
        for phase in TIME_PHASES
        if phase.key in old_times or phase.key in new_times
    ]
    return RankDiff(
        rank=rank,
        frames=frames,
        breaks_new=[b for b in new_breaks if b not in old_breaks],
        breaks_fixed=[b for b in old_breaks if b not in new_breaks],
        errors_new=[e for e in new_errors if e not in old_errors],
        errors_fixed=[e for e in old_errors if e not in new_errors],
        times=times,
        cache=Change(cache_totals(baseline.compiles), cache_totals(new.compiles)),
        function_times=function_times(baseline, new),
        vllm=vllm_change(baseline, new),
    )


def _renamed(frames: list[FrameFacts], renames: Mapping[str, str]) -> list[FrameFacts]:
    """Baseline frames with their functions renamed as the user's map says (occurrences
    counted again under the new names)."""
    if not renames:
        return frames
    seen: Counter[tuple[str, str]] = Counter()
    out = []
    for f in frames:
        function = renames.get(f.key.function, f.key.function)
        seen[(f.key.file, function)] += 1
        out.append(replace(f, key=RunFunction(f.key.file, function, seen[(f.key.file, function)])))
    return out


def _judge_matches(frames: list[FrameDiff], old: list[FrameFacts], new: list[FrameFacts]) -> None:
    """Say how sure each pairing is: several frames of one file and function on a side are
    paired by their order, which an edit can upset (``ambiguous``, with the others)."""
    labels: dict[tuple[str, str], tuple[list[str], list[str]]] = {}
    for side, facts in ((0, old), (1, new)):
        for one in facts:
            labels.setdefault((one.key.file, one.key.function), ([], []))[side].append(one.label)
    for f in frames:
        if f.baseline is None:
            f.match = "new"
        elif f.new is None:
            f.match = "gone"
        else:
            old_labels, new_labels = labels[(f.key.file, f.key.function)]
            if len(old_labels) > 1 or len(new_labels) > 1:
                f.match = "ambiguous"
                f.candidates = [x for x in new_labels if x != f.new.label][:MAX_CANDIDATES]


def _distinct(lists: Any) -> list[BreakSite]:
    """The sites of all frames once each, in order."""
    out: list[BreakSite] = []
    seen: set[BreakSite] = set()
    for sites in lists:
        for s in sites:
            if s not in seen:
                seen.add(s)
                out.append(s)
    return out


def _frame_diff(key: RunFunction, old: FrameFacts | None, new: FrameFacts | None) -> FrameDiff:
    """One pair of frames (or a frame of one run) compared figure by figure."""

    def pick(get: Callable[[FrameFacts], Any]) -> Change:
        return Change(get(old) if old else None, get(new) if new else None)

    both = old is not None and new is not None
    old_guards = set(old.guards) if old else set()
    new_guards = set(new.guards) if new else set()
    old_kernels = Counter(n for n, _ in old.kernels) if old else Counter()
    new_kernels = Counter(n for n, _ in new.kernels) if new else Counter()
    return FrameDiff(
        key=key,
        baseline=old,
        new=new,
        status=pick(lambda f: f.status),
        versions=pick(lambda f: f.versions),
        recompile_reasons_new=[
            r
            for r in (new.recompile_reasons if new else [])
            if r not in (old.recompile_reasons if old else [])
        ],
        guards_added=[g for g in new.guards if g not in old_guards] if old and new else [],
        guards_removed=[g for g in old.guards if g not in new_guards] if old and new else [],
        graph_ops=pick(lambda f: f.graph_ops),
        graph_nodes=pick(lambda f: f.graph_nodes),
        graph_diff=_graph_diff(old, new) if old and new else "",
        kernel_count=pick(lambda f: len(f.kernels)),
        kernels_added=sorted((new_kernels - old_kernels).elements()) if both else [],
        kernels_removed=sorted((old_kernels - new_kernels).elements()) if both else [],
        kernel_kinds=pick(lambda f: dict(Counter(k for _, k in f.kernels))),
        seconds=pick(lambda f: f.seconds),
        cache=pick(lambda f: f.cache),
    )


def _graph_diff(old: FrameFacts, new: FrameFacts) -> str:
    """Unified diff of the two Dynamo graphs (line numbers removed); bounded in size."""
    if old.graph is None or new.graph is None or old.graph == new.graph:
        return ""
    a = [ln.rstrip() for ln in old.graph.splitlines()]
    b = [ln.rstrip() for ln in new.graph.splitlines()]
    if a == b:
        return ""
    if len(a) > MAX_GRAPH_LINES or len(b) > MAX_GRAPH_LINES:
        return f"(graphs of {len(a)} and {len(b)} lines differ; too long to diff)"
    lines = list(
        difflib.unified_diff(a, b, f"baseline {old.label}", f"new {new.label}", n=2, lineterm="")
    )
    if len(lines) > MAX_DIFF_LINES:
        lines = [*lines[:MAX_DIFF_LINES], f"... ({len(lines) - MAX_DIFF_LINES} more lines)"]
    return "\n".join(lines)
