"""``summary``: what a trace's compiles did, and where to act; or a debug folder's figures."""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path
from typing import Any

from ...render.answers_text import answer_lines, wants_colour
from ...site.characters import console_json
from ...site.count_words import kinds_text
from ...site.divergence_words import divergence_words
from ...site.rank_sharing import rank_classes
from ...trace import Trace, TraceReadError
from ...trace.analyses import compile_time
from ...trace.analyses.answers import answers
from ...trace.analyses.autotuning import autotuning, totals
from ...trace.analyses.caches import bundled
from ...trace.analyses.divergence import divergence, diverging_aspects
from ...trace.analyses.glance import triage
from ...trace.analyses.rank_digest import number_ranges
from ...trace.analyses.vllm import summary_data, summary_text, vllm_view
from ...trace.inputs.debug_dir import load_debug_dir
from ...trace.inputs.formats import DEBUG_DIR
from ...trace.inputs.opening import OpenedInput, open_input
from ..common import InputError, say
from ..loading import load

#: Rank classes ``summary`` lists by their ranks (the others counted; ``--json`` has all).
CLASSES_SHOWN = 20
#: Entries of a folder that were not read, named one by one by ``summary``; past this, a count.
SKIPPED_SHOWN = 5

HELP = "print what a trace's compiles did, and where to act"
DESCRIPTION = (
    "Which log was read (of a folder: the file chosen and why); frames, "
    "compile ids, graph breaks, recompiles, errors and compile time; then each compile "
    "error and graph break with torch's reason, its place in your code and its record "
    "(LOG:LINE, for show), each recompiled function with the guard that failed, and "
    "the slowest compiles; of a TORCH_TRACE log or folder, or a TORCH_LOGS text log.  "
    "The runs, graph folders and kernels of a TORCH_COMPILE_DEBUG folder.  Colour on a "
    "terminal only (NO_COLOR, FORCE_COLOR)."
)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "path",
        metavar="PATH",
        help="a log file or TORCH_TRACE directory, a TORCH_LOGS text log or a "
        "TORCH_COMPILE_DEBUG folder",
    )
    parser.add_argument("--json", action="store_true", help="print them as JSON")
    parser.add_argument(
        "--all",
        action="store_true",
        help="list every failure, recompiled function and compile (the text shows the first "
        "ones of each list; --json always has every one)",
    )


def run(args: argparse.Namespace) -> int:
    opened = open_input(args.path)
    if opened.format == DEBUG_DIR:
        return _debug_summary(args, opened)
    trace = load(opened)
    found = _Found(trace, args.path)
    # figures that leave out entries of the folder are no all-clear: exit 2, as diff does
    status = 2 if found.refused else 0
    if args.json:
        print(console_json(json.dumps(found.data(), indent=2, ensure_ascii=False)))
        return status
    colour = wants_colour(sys.stdout.isatty(), os.environ)
    lines = answer_lines(
        found.answers,
        [*found.read_rows(), *found.rows()],
        compile_time.summary_rows(found.tree),
        colour=colour,
        everything=args.all,
    )
    for line in lines:
        print(line)  # each input segment escaped by answer_lines, colour codes its own
    return status


class _Found:
    """What ``summary`` says of a trace, worked out once for the JSON and the text."""

    def __init__(self, trace: Trace, path: str) -> None:
        self.trace = trace
        self.triage = triage(trace)
        # vLLM's piecewise compiles, by log order (their compile ids are missing)
        self.vllm = [(r, view) for r in trace.ranks if (view := vllm_view(r)) is not None]
        self.classes = rank_classes(trace) if trace.is_multi_rank else []
        # what the ranks differ in (the overview's divergence aspects), in words
        self.diverging = divergence_words(diverging_aspects(divergence(trace)))
        self.tree = compile_time.compile_time_tree(trace)  # where the compile time went
        self.answers = answers(trace, path)  # which breaks, recompiles, compiles
        self.refused = [d for d in trace.diagnostics if d.subtype == "skipped"]
        self.autotuning = [(r, e) for r in trace.ranks for e in autotuning(r)]
        # FX graphs loaded from inside AOT-autograd cache entries: loads, not lookups
        self.bundled = sum(len(bundled(c)) for r in trace.ranks for c in r.compiles)

    def data(self) -> dict[str, Any]:
        """``--json``: every figure, every rank class, every failure and compile."""
        t, trace, found = self.triage, self.trace, self.answers
        data: dict[str, Any] = {
            "ranks": t.ranks,
            "frames": t.frames,
            "compile_ids": t.compile_ids,
            "attempts": t.attempts,
            "statuses": t.statuses,
            "graph_breaks": t.graph_breaks,
            "graph_break_reasons": t.graph_break_reasons,  # distinct: (registry id, place)
            "graph_break_kinds": t.graph_break_types,  # distinct registry ids (or types)
            "recompiles": t.recompiles,
            "recompiled_functions": len(t.recompiled_by_function),  # each once, on any rank
            "compiled_again": t.compiled_again,  # after a failed version: not recompiles
            "limit_hits": len(t.limit_hits),  # refused past the recompile limit: no version
            "error_on_recompile": len(t.error_on_recompile),  # refused: RecompileError
            "errors": t.errors,
            "distinct_errors": t.distinct_errors,
            "error_kinds": t.error_types,
            "cache": t.cache,
            "bundled_loads": self.bundled,  # FX graphs an AOT-autograd hit carried: no lookups
            "compile_seconds": t.compile_seconds,
            "not_shown": trace.not_shown,  # the folder's other logs of one process, not read
            # entries of the folder refused (a link out of it, a FIFO): never read, named
            "not_read": [{"path": d.path, "why": d.message} for d in self.refused],
        }
        if self.vllm:
            data["vllm"] = [{"rank": r.rank, **summary_data(view)} for r, view in self.vllm]
        if trace.is_multi_rank:
            data["rank_classes"] = self.classes  # ranks that logged the same, as pages shared
            data["divergence"] = self.diverging
            data["frames_per_rank"] = list(t.frames_per_rank)  # the fewest and the most
            if t.slowest is not None:
                data["slowest_rank"] = {"rank": t.slowest[0], "compile_seconds": t.slowest[1]}
        data["compile_time"] = compile_time.summary_data(self.tree)
        if self.autotuning:  # what Inductor benchmarked, per compile
            data["autotuning"] = [{"rank": r.rank, **e.as_json()} for r, e in self.autotuning]
        data["log"] = found.log.as_json()
        data["failures"] = [f.as_json() for f in found.failures]
        data["recompiled"] = [fn.as_json() for fn in found.recompiled]
        data["slowest_compiles"] = [s.as_json() for s in found.slowest]
        return data

    def rows(self) -> list[tuple[str, str]]:
        """The table of figures: the glance says first whether the ranks diverge."""
        t, trace = self.triage, self.trace
        rows = [
            ("ranks", str(t.ranks)),
            ("frames", self._frames()),
            ("compile ids", f"{t.compile_ids} ({self._statuses()})"),
            ("graph breaks", _counted(t.graph_breaks, t.graph_break_types, *t.graph_break_places)),
            ("recompiles", self._recompiles()),
            ("errors", _counted(t.errors, t.error_types, *t.error_places)),
            ("cache lookups", self._lookups()),
            ("compile time", self._seconds()),
        ]
        rows += [("vllm", summary_text(view)) for _, view in self.vllm]
        if self.autotuning:
            rows.append(("autotuning", self._autotuning()))
        if trace.is_multi_rank:
            classes = self.classes
            shown = " | ".join(number_ranges(c) for c in classes[:CLASSES_SHOWN])
            more = (
                f" and {len(classes) - CLASSES_SHOWN} more" if len(classes) > CLASSES_SHOWN else ""
            )
            rows.append(("rank classes", f"{len(classes)}: {shown}{more}"))
            rows.append(("diverging", ", ".join(self.diverging) or "nothing"))
        return rows

    def _autotuning(self) -> str:
        """Seconds benchmarking, in how many compiles and operations, the largest share."""
        entries = [e for _r, e in self.autotuning]
        seconds, operations = totals(entries)
        most = max(entries, key=lambda e: e.share or 0.0)
        text = (
            f"{seconds:.2f} s in {len(entries)} compile(s), {operations} operation(s) benchmarked"
        )
        if most.share is not None:
            text += f"; {most.compile.label} spent {most.share:.0%} of its compile time on it"
        return text

    def read_rows(self) -> list[tuple[str, str]]:
        """What of the input was left out: said by the log's row."""
        read: list[tuple[str, str]] = []
        if self.trace.not_shown:  # earlier runs in the folder: the figures are the newest's
            read.append(
                (
                    "not shown",
                    f"{len(self.trace.not_shown)} other log(s) without a rank in "
                    "the folder (name a log file to read another)",
                )
            )
        for d in self.refused[:SKIPPED_SHOWN]:
            read.append(("not read", f"{d.path}: {d.message}"))
        if len(self.refused) > SKIPPED_SHOWN:
            read.append(("not read", f"and {len(self.refused) - SKIPPED_SHOWN} more entries"))
        return read

    def _frames(self) -> str:
        t, frames = self.triage, str(self.triage.frames)
        if self.trace.is_multi_rank:  # the figures add up the ranks': say what one rank did
            fewest, most = t.frames_per_rank
            each = str(most) if fewest == most else f"{fewest} to {most}"
            frames += f" ({each} on each of the {t.ranks} ranks)"
        return frames

    def _seconds(self) -> str:
        t = self.triage
        seconds = "-" if t.compile_seconds is None else f"{t.compile_seconds:.2f} s"
        if t.compile_seconds is None:
            seconds = self._no_seconds()
        if self.trace.is_multi_rank and t.slowest is not None:
            seconds += f" ({t.slowest[1]:.2f} s on rank {t.slowest[0]}, the slowest)"
        return seconds

    def _lookups(self) -> str:
        """Lookups by result, and the FX graphs AOT-autograd hits carried, said apart."""
        said = ", ".join(f"{n} {r}" for r, n in self.triage.cache.items()) or "none"
        if self.bundled:
            said += (
                f"; besides, {self.bundled} FX graph(s) loaded from inside AOT-autograd cache "
                "entries"
            )
        return said

    def _no_seconds(self) -> str:
        """What the log records instead of its compiles' times: vLLM's own, or nothing."""
        timed = [v.compile_seconds for _r, v in self.vllm if v.compile_seconds is not None]
        if timed:
            return f"none logged with a compile id; vLLM's: {sum(timed):.2f} s (the vllm row)"
        if all(r.source == "torch_logs" for r in self.trace.ranks):
            return "none recorded (a TORCH_LOGS text log holds no compilation metrics)"
        return "none recorded (the log holds no compilation metrics)"

    def _statuses(self) -> str:
        statuses = sorted(self.triage.statuses.items())
        return ", ".join(f"{n} {s}" for s, n in statuses) or "none"

    def _recompiles(self) -> str:
        t = self.triage
        return (
            f"{t.recompiles} (in {_functions(len(t.recompiled_by_function))})"
            + (f"; {len(t.limit_hits)} refused past the recompile limit" if t.limit_hits else "")
            + (
                f"; {t.compiled_again} compiled again after a failed version"
                if t.compiled_again
                else ""
            )
        )


def _counted(n: int, kinds: int, places: int, unplaced: int) -> str:
    """``6 (5 kinds, 6 places)``: the glance's figures, in the table's words."""
    return str(n) + kinds_text(n, kinds, places, unplaced)


def _functions(n: int) -> str:
    return f"{n} function{'' if n == 1 else 's'}"


def _debug_summary(args: argparse.Namespace, opened: OpenedInput) -> int:
    """A TORCH_COMPILE_DEBUG folder's figures: what the directive's page counts."""
    debug = load_debug_dir(opened.path, opened.debug_shape)
    graphs = debug.graphs
    by_kind: dict[str, int] = {}
    for graph in graphs:
        by_kind[graph.kind] = by_kind.get(graph.kind, 0) + 1
    data: dict[str, Any] = {
        "input": "torch-compile-debug",
        "runs": len(debug.runs),
        "graph_folders": len(graphs),
        "graph_folders_by_kind": by_kind,
        "kernels": sum(len(g.kernels) for g in graphs),
        "files": sum(1 for _ in debug.files()),
        "trace_logs": len(debug.trace_logs),
        "problems": len(debug.diagnostics),
    }
    timed = _beside_times(opened, debug.trace_logs)
    if timed is not None:  # the folder's own files hold no times: the run's trace log's
        data["compile_time_from"], tree = timed
        data["compile_time"] = compile_time.summary_data(tree)
    if args.json:
        print(console_json(json.dumps(data, indent=2, ensure_ascii=False)))
        return 0
    kinds = ", ".join(f"{n} {k}" for k, n in sorted(by_kind.items())) or "none"
    rows = [
        ("input", "a TORCH_COMPILE_DEBUG folder"),
        ("runs", str(data["runs"])),
        ("graph folders", f"{len(graphs)} ({kinds})"),
        ("kernels", str(data["kernels"])),
        ("files read", str(data["files"])),
        (
            "trace logs",
            f"{data['trace_logs']} beside the runs (their summary has the statuses)"
            if data["trace_logs"]
            else "none beside the runs",
        ),
        ("problems", str(data["problems"])),
        ("compile time", _debug_seconds(timed)),
    ]
    if timed is not None:
        rows += compile_time.summary_rows(timed[1])
    for label, value in rows:
        say(f"{label + ':':<15} {value}")
    return 0


def _beside_times(
    opened: OpenedInput, trace_logs: list[Path]
) -> tuple[str, compile_time.Node] | None:
    """(the log's path as the user names it, its compile-time tree) of the first trace log
    torch wrote beside the runs; None without one or when it cannot be read."""
    if not trace_logs:
        return None
    log = trace_logs[0]
    try:
        trace = load(open_input(log))
    except (InputError, OSError, TraceReadError):
        return None
    shown = os.path.join(opened.path, os.path.relpath(log, opened.path))
    return shown, compile_time.compile_time_tree(trace)


def _debug_seconds(timed: tuple[str, compile_time.Node] | None) -> str:
    """A debug folder's compile time: its files hold none; the run's trace log may."""
    if timed is None:
        return "none recorded (a debug folder's files hold no times; no trace log beside it)"
    path, tree = timed
    if not tree.children:
        return f"none recorded, neither in the folder nor in the trace log beside it ({path})"
    return f"{tree.seconds:.2f} s, from the trace log beside the runs ({path})"
