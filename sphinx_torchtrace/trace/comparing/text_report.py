"""A comparison as plain lines, what ``sphinx-torchtrace diff`` prints: the header naming
the two runs, then what changed, rank by rank.

Each line starts with the tool's words, never with text from a log; escaping for the
console is the caller's (``render/diff_formats.py``).  Apart from the model so that the
words can change without moving the facts the JSON and the pages publish.
"""

from __future__ import annotations

import math
from typing import Any

from ..analyses.compile_time import PHASE_WORDS
from ..analyses.rank_digest import number_ranges
from .changes import FrameDiff, RankDiff, TraceDiff, frame_evidence
from .figures import per_call_text, seconds_text, times_text
from .vllm_change import VllmChange

#: Frames a "cache only" line names before "and N more".
CACHE_ONLY_NAMED = 8


def header_lines(diff: TraceDiff, baseline: str, new: str) -> list[str]:
    """Which two runs, made with what; what differs in their setup; whether anything was
    compared.  ``baseline`` and ``new`` name the inputs as the user gave them."""
    lines = []
    if diff.baseline_facts is not None and diff.new_facts is not None:
        lines.append(f"baseline: {baseline} ({diff.baseline_facts.describe()})")
        lines.append(f"new run:  {new} ({diff.new_facts.describe()})")
    for difference in diff.setup:
        lines.append(f"not like for like: {difference}")
    if diff.nothing_compared:
        lines.append(f"nothing compared: {diff.nothing_compared}")
    return lines


def report_lines(diff: TraceDiff) -> list[str]:
    """Plain lines saying what changed, rank by rank (one line when nothing did).  Each
    line starts with the tool's words, never with text from a log."""
    if diff.nothing_compared:
        return []  # the header says so, once
    if diff.unchanged:
        multi = len(diff.ranks) > 1
        return ["No change in compilation (compile time aside)."] + [
            line
            for r in diff.ranks
            for line in _runtime_lines(r, f"rank {r.rank}: " if multi else "")
        ]
    lines = _unread_and_unmatched_lines(diff)
    multi = len(diff.ranks) > 1 or any(r.alike for r in diff.ranks)
    for r in diff.ranks:
        lines += _rank_lines(r, f"rank {r.rank}: " if multi else "")
    return lines


def _unread_and_unmatched_lines(diff: TraceDiff) -> list[str]:
    """What was not read, and the ranks only one run has."""
    lines: list[str] = [f"Not read: {what}" for what in diff.unread]
    for n in diff.ranks_only_baseline:
        lines.append(f"rank {n}: only in the baseline")
    new_only = {r.rank: r for r in diff.new_only}
    for n in diff.ranks_only_new:
        r = new_only.get(n)
        found = (
            (
                f" (compared with nothing: {len(r.errors_new)} compile error(s), "
                f"{len(r.breaks_new)} graph break(s))"
            )
            if r is not None
            else ""
        )
        lines.append(f"rank {n}: only in the new run{found}")
    return lines


def _rank_lines(r: RankDiff, prefix: str) -> list[str]:
    """What changed on one compared rank: frames new and gone, graph breaks and errors,
    changed frames, caches, runtime, compile time."""
    lines: list[str] = []
    if r.alike and r.changed:
        lines.append(
            f"{prefix}stands for ranks {number_ranges(r.alike)} too (alike in "
            "each run: compared once)"
        )
    for f in r.frames_new:
        lines.append(f"{prefix}new frame {f.key} {f.new.label if f.new else ''}".rstrip())
    for f in r.frames_gone:
        lines.append(
            f"{prefix}gone frame {f.key} {f.baseline.label if f.baseline else ''}".rstrip()
        )
    lines += _break_and_error_lines(r, prefix)
    for f in r.frames:
        if f.is_new or f.is_gone or not f.changed or f.cache_only:
            continue
        lines += _changed_frame_lines(f, prefix)
    lines += _cache_only_lines([f for f in r.frames if f.cache_only], prefix)
    if r.cache.changed:
        lines.append(f"{prefix}cache: {_value(r.cache.baseline)} -> {_value(r.cache.new)}")
    lines += _runtime_lines(r, prefix)
    total = r.total_seconds
    if total is not None:
        ratio = f" ({times_text(total.ratio)}, noisy)" if total.ratio is not None else " (noisy)"
        lines.append(
            f"{prefix}compile time: {seconds_text(total.baseline)} -> "
            f"{seconds_text(total.new)}{ratio}"
        )
        lines += _function_time_lines(r, prefix)
    if r.vllm is not None:
        lines.append(f"{prefix}vllm: {r.vllm.baseline or 'none'} -> {r.vllm.new or 'none'}")
        lines += _vllm_cell_lines(r.vllm, prefix)
    return lines


#: vLLM cells the text maps from cold to warm before "and N more" (the JSON has them all).
VLLM_CELLS_IN_TEXT = 60
#: Characters of a log's name (a call's prefix, a subgraph, a file) a line keeps.
NAME_CHARS = 120


def _vllm_cell_lines(change: VllmChange, prefix: str) -> list[str]:
    """A cold run against its warm start: each cold piece and the warm run's load of it
    (found by its output code file), as the page and ``diff --json`` (``cells``) give."""
    if not change.cells:
        return []
    cold, warm = ("baseline", "new") if change.cold_run == "baseline" else ("new", "baseline")
    found = sum(1 for c in change.cells if c["warm_line"] is not None)
    lines = [
        f"{prefix}vllm cells ({cold} cold -> {warm} warm): {found} of {len(change.cells)} cells "
        "have a load, found by its output code file"
    ]
    several = len({c["call"] for c in change.cells}) > 1
    for cell in change.cells[:VLLM_CELLS_IN_TEXT]:
        call = f"{_name(cell['call'])}: " if several else ""
        where = f"{call}{_name(cell['subgraph'])} {_name(cell['range'])}"
        wall = cell["cold_wall_seconds"]
        took = f" ({wall:.2f} s)" if isinstance(wall, (int, float)) else ""
        cold_text = f"line {cell['cold_line']}{took}"
        if cell["reused"]:
            via = cell["via_line"]
            cold_text = f"line {cell['cold_line']} reused" + (
                f", probably the piece at line {via}" if via is not None else ", source not logged"
            )
        if cell["warm_line"] is None:
            loaded = "no load of its output code"
        else:
            what = "its source's output code" if cell["reused"] else "output code"
            loaded = f"load line {cell['warm_line']} ({what} {_name(cell['output_code'])})"
        lines.append(f"{prefix}  vllm cell {where}: {cold} {cold_text} -> {warm} {loaded}")
    if len(change.cells) > VLLM_CELLS_IN_TEXT:
        more = len(change.cells) - VLLM_CELLS_IN_TEXT
        lines.append(f"{prefix}  and {more} more vllm cells (diff --json gives them all)")
    return lines


def _name(value: Any) -> str:
    text = str(value)
    return text if len(text) <= NAME_CHARS else text[:NAME_CHARS] + "..."


#: Functions the text names under a rank's compile time, the most changed first.
FUNCTIONS_IN_TEXT = 3


def _function_time_lines(r: RankDiff, prefix: str) -> list[str]:
    """The functions whose compile time changed most, with the phase that changed most."""
    lines: list[str] = []
    for f in r.function_times[:FUNCTIONS_IN_TEXT]:
        if not f.change:
            break
        phase = f.most_changed_phase()
        where = ""
        if phase is not None:
            where = f", most in {PHASE_WORDS.get(phase[0], phase[0])} ({phase[1]:+.2f} s)"
        lines.append(
            f"{prefix}  {f.function} ({f.file}): {f.baseline_seconds:.2f} s -> "
            f"{f.new_seconds:.2f} s{where}"
        )
    return lines


def _break_and_error_lines(r: RankDiff, prefix: str) -> list[str]:
    """Graph breaks and compile errors new and fixed, each with the record it rests on."""
    lines: list[str] = []
    for b in r.breaks_new:
        lines.append(f"{prefix}new graph break: {b}")
        lines += _evidence_line("new", b.evidence)
    for b in r.breaks_fixed:
        lines.append(f"{prefix}graph break fixed: {b}")
        lines += _evidence_line("baseline", b.evidence)
    for e in r.errors_new:
        lines.append(f"{prefix}new compile error: {e}")
        lines += _evidence_line("new", e.evidence)
    for e in r.errors_fixed:
        lines.append(f"{prefix}compile error fixed: {e}")
        lines += _evidence_line("baseline", e.evidence)
    return lines


def _changed_frame_lines(f: FrameDiff, prefix: str) -> list[str]:
    """A frame both runs compiled that changed: each figure that moved, its new recompile
    reasons, its guards and graph, and the records on each side."""
    lines = [f"{prefix}changed frame {f.key}{_match_text(f)}:"]
    for label, change in (
        ("status", f.status),
        ("compiles", f.versions),
        ("graph ops", f.graph_ops),
        ("graph nodes", f.graph_nodes),
        ("kernels", f.kernel_count),
        ("cache", f.cache),
    ):
        if change.changed:
            lines.append(f"  {label}: {_value(change.baseline)} -> {_value(change.new)}")
    for reason in f.recompile_reasons_new:
        lines.append(f"  new recompile reason: {reason}")
    if f.guards_added or f.guards_removed:
        lines.append(f"  guards: +{len(f.guards_added)} -{len(f.guards_removed)}")
    if f.graph_diff:
        lines.append("  Dynamo graph changed")
    lines.append("  evidence: " + ", ".join(f"{side} {where}" for side, where in frame_evidence(f)))
    return lines


def _cache_only_lines(cache_only: list[FrameDiff], prefix: str) -> list[str]:
    """The frames whose cache results alone changed, one line naming the first few."""
    if not cache_only:
        return []
    named = ", ".join(str(f.key) for f in cache_only[:CACHE_ONLY_NAMED])
    more = (
        f" and {len(cache_only) - CACHE_ONLY_NAMED} more"
        if len(cache_only) > CACHE_ONLY_NAMED
        else ""
    )
    return [f"{prefix}cache results only, in {len(cache_only)} frame(s): {named}{more}"]


def _runtime_lines(r: RankDiff, prefix: str) -> list[str]:
    """Each frame's time per call on both sides, where a runtime profile was kept."""
    lines: list[str] = []
    ran = [f for f in r.frames if f.runtime.baseline or f.runtime.new]
    if ran:
        lines.append(f"{prefix}runtime per call (run --runtime; noisy):")
        for f in sorted(ran, key=_growth)[:RUNTIME_LISTED]:
            calls = "/".join(str(s[0]) if s else "-" for s in (f.runtime.baseline, f.runtime.new))
            grew = f.runtime_ratio
            lines.append(
                f"  {f.key}: {per_call_text(f.runtime)}"
                + (f" ({times_text(grew)})" if grew is not None else "")
                + f", calls {calls}"
            )
    return lines


def _growth(f: FrameDiff) -> float:
    """Sorts the frames whose runtime cannot be compared first, then the largest growth."""
    ratio = f.runtime_ratio
    return 0.0 if ratio is None else -ratio if math.isfinite(ratio) else -math.inf


#: Frames the runtime lines list, the largest growth first.
RUNTIME_LISTED = 20


def _evidence_line(side: str, where: str | None) -> list[str]:
    return [f"  evidence: {side} {where}"] if where else []


def _match_text(f: FrameDiff) -> str:
    """`` (ambiguous: paired by order; also [3/*])`` for a pairing that is a guess."""
    if f.match != "ambiguous":
        return ""
    others = f"; also {', '.join(f.candidates)}" if f.candidates else ""
    return f" (ambiguous: several frames of this function, paired by order{others})"


def _value(value: Any) -> str:
    if isinstance(value, dict):
        return ", ".join(f"{v} {k}" for k, v in value.items()) or "none"
    return "-" if value is None else str(value)
