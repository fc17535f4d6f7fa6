"""The ``sphinx-torchtrace`` command: compare two runs in CI, print triage numbers, build a site.

``diff`` and ``summary`` need no docs project and import nothing of Sphinx; ``build`` makes a
Sphinx project around the logs (in the user's cache folder) and runs Sphinx in-process;
``serve`` previews its output on 127.0.0.1; ``run`` runs a program under ``TORCH_TRACE`` and
builds its report (its exit status is the program's); ``check``, ``redact`` and ``bundle``
make a log safe to post (paths, names, secrets and source removed).  Exit codes: 0 fine,
1 a regression of a listed kind (``diff``), something private found (``check``) or left
(``redact``, ``bundle``), 2 unreadable input or a failed build, 130 when
Ctrl+C stopped it (quietly: the user asked).  Every error is one line on stderr, never a
traceback: this runs in CI logs people skim.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shlex
import subprocess
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from .render.diff_formats import FORMATS, Report, render
from .render.summary_text import answer_lines, wants_colour
from .share_cli import ShareError, add_share_commands
from .site.characters import console_json, console_text
from .site.count_words import kinds_text
from .site.divergence_words import divergence_words
from .site.rank_sharing import rank_classes
from .trace import Trace, TraceReadError
from .trace.analyses import compile_time
from .trace.analyses.answers import answers
from .trace.analyses.rank_digest import number_ranges
from .trace.analyses.summary import divergence as summary_divergence
from .trace.analyses.summary import diverging_kinds, triage
from .trace.analyses.vllm import summary_data, summary_text, vllm_view
from .trace.comparing.comparability import parse_rank_pairs
from .trace.comparing.diff import (
    DEFAULT_REGRESSIONS,
    REGRESSION_KINDS,
    diff_traces,
    parse_fail_on,
    regressions,
    uncompared,
)
from .trace.comparing.trend import MAX_RUNS, trend, unread_runs
from .trace.inputs.debug_dir import load_debug_dir
from .trace.inputs.kinds import DEBUG_DIR, TORCH_LOGS, detect_kind
from .trace.inputs.loading import load_input
from .trace.inputs.no_records import has_records, no_records_message
from .trace.reader import record_lines
from .trace.secrets import SecretMasker, mask_secrets, secret_name
from .version import __version__

PROG = "sphinx-torchtrace"
#: Rank classes ``summary`` lists by their ranks (the others counted; ``--json`` has all).
CLASSES_SHOWN = 20
DEFAULT_FAIL_ON = ",".join(k for k, v in DEFAULT_REGRESSIONS.items() if v)


class InputError(Exception):
    """Input the command cannot use: reported as one line, exit status 2."""


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; returns the exit status (the console script exits with it)."""
    parser = _parser()
    args = parser.parse_args(argv)
    try:
        status: int = args.run(args)
        return status
    except (InputError, ShareError) as e:
        _error(str(e))
        return 2
    except KeyboardInterrupt:  # the user stopped it: no error to report, the shell's status
        return 130
    except Exception as e:  # noqa: BLE001 - a CI log gets one line, not a traceback
        _error(f"unexpected {type(e).__name__}: {e}")
        return 2


def _say(line: str) -> None:
    """Print one line of output: input text in it (names, reasons, paths) escaped, so a
    trace can neither draw on the terminal nor start a line of a CI log."""
    print(console_text(line))


def _error(message: str) -> None:
    first = message.strip().splitlines()[0] if message.strip() else "error"
    print(console_text(f"{PROG}: error: {first}"), file=sys.stderr)


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog=PROG, description="PyTorch TORCH_TRACE logs: compare runs, triage, build a report."
    )
    parser.add_argument("--version", action="version", version=f"%(prog)s {__version__}")
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    diff = commands.add_parser(
        "diff",
        help="compare two runs; exit 1 on a regression",
        description="Compare two traces (log files or TORCH_TRACE directories).  Exit 1 when "
        "a regression of the listed kinds is found, 0 otherwise, 2 on unreadable input, "
        "when nothing could be compared (no rank or no frame in common) or when part of the "
        "input was not read (a baseline rank the new run lacks, a log its folder left out, "
        "records that did not parse).  A rank only the new run has is compared with nothing.",
    )
    diff.add_argument(
        "runs",
        metavar="RUN",
        nargs="+",
        help="the baseline trace, then the new one; more runs (oldest first) add a trend "
        "of each function over them, and the last two are compared",
    )
    diff.add_argument(
        "--format",
        choices=FORMATS,
        default="text",
        help="text (default), json, markdown (for $GITHUB_STEP_SUMMARY or a PR comment), "
        "github (workflow annotations) or junit (a test case per frame)",
    )
    diff.add_argument("--json", action="store_true", help="the same as --format json")
    diff.add_argument(
        "--ranks",
        metavar="PAIRS",
        help="which baseline rank to compare with which new one: 0:2 or 0:2,1:3 "
        "(default: ranks of equal numbers)",
    )
    diff.add_argument(
        "--map",
        metavar="FILE",
        dest="renames",
        help='a JSON object of baseline function names to new ones ({"old": "new"}), for '
        "functions renamed between the runs",
    )
    diff.add_argument(
        "--fail-on",
        metavar="KINDS",
        default=DEFAULT_FAIL_ON,
        help=f"comma list of {', '.join(REGRESSION_KINDS)}; compile_time:RATIO sets its "
        f"threshold (default: {DEFAULT_FAIL_ON}; '' never fails)",
    )
    diff.set_defaults(run=_diff)

    summary = commands.add_parser(
        "summary",
        help="print what a trace's compiles did, and where to act",
        description="Which log was read (of a folder: the file chosen and why); frames, "
        "compile ids, graph breaks, recompiles, errors and compile time; then each compile "
        "error and graph break with torch's reason, its place in your code and its record "
        "(LOG:LINE, for show), each recompiled function with the guard that failed, and "
        "the slowest compiles; of a TORCH_TRACE log or folder, or a TORCH_LOGS text log.  "
        "The runs, graph folders and kernels of a TORCH_COMPILE_DEBUG folder.  Colour on a "
        "terminal only (NO_COLOR, FORCE_COLOR).",
    )
    summary.add_argument(
        "path",
        metavar="PATH",
        help="a log file or TORCH_TRACE directory, a TORCH_LOGS text log or a "
        "TORCH_COMPILE_DEBUG folder",
    )
    summary.add_argument("--json", action="store_true", help="print them as JSON")
    summary.add_argument(
        "--all",
        action="store_true",
        help="list every failure, recompiled function and compile (the text shows the first "
        "ones of each list; --json always has every one)",
    )
    summary.set_defaults(run=_summary)

    build = commands.add_parser(
        "build",
        help="build a standalone report site",
        description="Build an HTML report of one or more traces with an embedded Sphinx "
        "configuration (furo when installed), print the page to open (a single trace's "
        "overview, else the index of the traces) and, on a terminal, open it in a browser.",
    )
    build.add_argument("paths", metavar="PATH", nargs="+", help="log files or directories")
    build.add_argument(
        "-o",
        "--output",
        metavar="OUT",
        default="torchtrace_out",
        help="output folder (default: ./torchtrace_out)",
    )
    build.add_argument(
        "--latest", action="store_true", help="in a directory, read only its newest log"
    )
    build.add_argument(
        "-q",
        "--quiet",
        action="store_true",
        help="no progress lines on stderr (warnings and errors are still printed)",
    )
    build.add_argument(
        "--no-browser",
        action="store_true",
        help="do not open the report (by default it opens when run from a terminal, not CI)",
    )
    _rewrite_option(build)
    build.set_defaults(run=_build)

    show = commands.add_parser(
        "show",
        help="print one record of a log (the evidence diff names)",
        description="Print the record at LOG:LINE (its envelope line and payload), with "
        "every control character escaped.",
    )
    show.add_argument("where", metavar="LOG:LINE", help="a log file and a line number")
    show.add_argument(
        "--max-lines", type=int, default=200, help="payload lines printed at most (200)"
    )
    show.set_defaults(run=_show)

    serve = commands.add_parser(
        "serve",
        help="preview a built report on 127.0.0.1",
        description="Serve a folder (what build wrote) on http://127.0.0.1:PORT/ until "
        "interrupted; only this machine can reach it.",
    )
    serve.add_argument("folder", metavar="OUT", help="the folder build wrote")
    serve.add_argument(
        "-p", "--port", type=int, default=8000, help="the port (default 8000; 0: any free one)"
    )
    serve.set_defaults(run=_serve)

    run = commands.add_parser(
        "run",
        help="run a program under TORCH_TRACE, then build its report",
        description="Run PROGRAM with TORCH_TRACE set to a new folder (its output streamed, "
        "Inductor's caches off), build the report of the trace it wrote as build does and "
        "print where it is.  The exit status is the program's (2 when no report could be "
        "made of a program that succeeded).",
    )
    run.add_argument(
        "-o",
        "--output",
        metavar="OUT",
        default="torchtrace_out",
        help="output folder (default: ./torchtrace_out)",
    )
    shown = run.add_mutually_exclusive_group()
    shown.add_argument(
        "--open",
        action="store_true",
        help="open the report in a browser (the default on a terminal, not CI)",
    )
    shown.add_argument("--no-browser", action="store_true", help="do not open the report")
    shown.add_argument("--serve", action="store_true", help="then preview it on 127.0.0.1")
    run.add_argument(
        "-p", "--port", type=int, default=8000, help="--serve's port (default 8000; 0: any)"
    )
    run.add_argument("-q", "--quiet", action="store_true", help="no progress lines on stderr")
    run.add_argument(
        "--runtime",
        action="store_true",
        help="also profile the program with torch.profiler: how often each compiled region "
        "ran and how long (kept beside the trace, shown on the pages)",
    )
    run.add_argument(
        "--steps",
        metavar="FIRST:LAST",
        help="with --runtime: profile optimizer steps FIRST to LAST only (bounds the "
        "profiler's cost on a long run; default: the whole run)",
    )
    run.add_argument(
        "--worth-it",
        action="store_true",
        help="with --runtime: run the program again with every graph on the eager backend "
        "and show, per compile id, eager time against compiled time and compile time",
    )
    _rewrite_option(run)
    run.add_argument(
        "program",
        metavar="-- PROGRAM",
        nargs=argparse.REMAINDER,
        help="the command to run, after --: python train.py --epochs 1",
    )
    run.set_defaults(run=_run)
    add_share_commands(commands)
    return parser


def _rewrite_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--rewrite",
        metavar="PATH=NAME",
        action="append",
        default=[],
        type=_path_rule,
        help="show PATH (a folder of this machine, taken literally) as NAME on the pages; "
        "repeatable, before the rules for home folders, temporary and site-packages paths",
    )


def _path_rule(text: str) -> tuple[str, str]:
    path, sep, name = text.partition("=")
    if not sep or not path.strip("/"):
        raise argparse.ArgumentTypeError(f"{text!r}: give PATH=NAME, as /srv/ci/checkout=<project>")
    return path, name


def _load(path: str, *, compared: bool = False) -> Trace:
    """A trace log or folder, or a TORCH_LOGS text log, as the directive reads them; or
    InputError when the path holds nothing readable (or, ``compared``, what a comparison
    cannot match: a text log does not say which function each compile ran)."""
    if not os.path.exists(path):
        raise InputError(f"{path}: no such file or directory")
    kind = detect_kind(path)
    if kind == DEBUG_DIR:
        raise InputError(
            f"{path}: a TORCH_COMPILE_DEBUG folder: compare its run's TORCH_TRACE logs"
            if compared
            else f"{path}: a TORCH_COMPILE_DEBUG folder"
        )
    if kind == TORCH_LOGS and compared:
        raise InputError(
            f"{path}: a TORCH_LOGS text log does not say which function each "
            "compile ran, so frames cannot be matched: compare TORCH_TRACE logs"
        )
    # the name alone: a bar longer than the terminal's line wraps and cannot redraw itself
    bar = _Bar(f"reading {Path(path).name[:40] or path}") if _Bar.wanted() else None
    try:
        trace = load_input(path, kind, progress=bar).trace
    except TraceReadError as e:  # it names the log: the words a build's warning says
        raise InputError(str(e)) from None
    except (OSError, ValueError) as e:
        raise InputError(f"{path}: cannot read: {e}") from None
    finally:
        if bar is not None:
            bar.close()
    if not has_records(trace):
        raise InputError(no_records_message(path, kind))
    return trace


class _Bar:
    """A progress bar on stderr while logs are read (a big log takes a minute), as tlparse
    draws one: only on a terminal, never in a CI log or a pipe; redrawn at most ten times a
    second and erased when reading ends, so the output that follows starts a clean line."""

    WIDTH = 24

    def __init__(self, label: str) -> None:
        self.label = console_text(f"{PROG}: {label}")  # a path is input text: escaped
        self.started = time.monotonic()
        self.drawn: float | None = None

    @staticmethod
    def wanted() -> bool:
        return sys.stderr.isatty() and not os.environ.get("CI") and os.environ.get("TERM") != "dumb"

    def __call__(self, done: int, total: int) -> None:
        now = time.monotonic()
        if self.drawn is not None and now - self.drawn < 0.1 and done < total:
            return
        self.drawn = now
        share = min(done / total, 1.0) if total > 0 else 1.0
        filled = round(share * self.WIDTH)
        bar = "#" * filled + "-" * (self.WIDTH - filled)
        sys.stderr.write(
            f"\r\x1b[K{self.label} [{bar}] {share:4.0%} "
            f"{done / 1e6:.1f}/{total / 1e6:.1f} MB {now - self.started:.0f} s"
        )
        sys.stderr.flush()

    def close(self) -> None:
        if self.drawn is not None:
            sys.stderr.write("\r\x1b[K")
            sys.stderr.flush()


# -- diff -----------------------------------------------------------------------------------


def _diff(args: argparse.Namespace) -> int:
    try:
        settings = parse_fail_on(args.fail_on)
    except ValueError as e:
        raise InputError(f"--fail-on: {e}") from None
    try:
        pairs = parse_rank_pairs(args.ranks) if args.ranks is not None else None
    except ValueError as e:
        raise InputError(f"--ranks: {e}") from None
    renames = _renames(args.renames) if args.renames else None
    if len(args.runs) < 2:
        raise InputError("give two runs (the baseline, then the new one), or more for a trend")
    if len(args.runs) > MAX_RUNS:
        raise InputError(f"give at most {MAX_RUNS} runs: a trend compares no more")
    traces = [_load(path, compared=True) for path in args.runs]
    # what looks secret is masked in every format: a CI log or a PR comment is public
    mask = SecretMasker(secrets=(s for t in traces[-2:] for r in t.ranks for s in r.secrets.found))
    result = diff_traces(traces[-2], traces[-1], pairs=pairs, renames=renames, mask=mask)
    found = regressions(result, settings)
    # a gate never passes on what it could not compare or read: exit 2, each named
    result.unread += uncompared(result, settings, traces[-2], traces[-1])
    result.unread += unread_runs(traces, args.runs)
    report = Report(
        result,
        found,
        args.runs[-2],
        args.runs[-1],
        settings,
        trend(traces, args.runs) if len(traces) > 2 else None,
    )
    sys.stdout.write(render(report, "json" if args.json else args.format))
    return report.exit_status


def _renames(path: str) -> dict[str, str]:
    """``--map``: {baseline function: new function}, a JSON object."""
    try:
        data = Path(path).read_bytes()
    except OSError as e:
        raise InputError(f"--map: {path}: {e.strerror or e}") from None
    try:
        table = json.loads(data)
    except (ValueError, UnicodeDecodeError, RecursionError) as e:
        raise InputError(f"--map: {path}: not a table of names: {e}") from None
    if not isinstance(table, dict) or not all(
        isinstance(k, str) and isinstance(v, str) for k, v in table.items()
    ):
        raise InputError(f'--map: {path}: give an object of names, {{"old": "new"}}')
    return dict(table)


# -- summary --------------------------------------------------------------------------------


#: Entries of a folder that were not read, named one by one by ``summary``; past this, a count.
SKIPPED_SHOWN = 5


def _summary(args: argparse.Namespace) -> int:
    if os.path.isdir(args.path) and detect_kind(args.path) == DEBUG_DIR:
        return _debug_summary(args)
    trace = _load(args.path)
    t = triage(trace)
    data: dict[str, Any] = {
        "ranks": t.ranks,
        "frames": t.frames,
        "compile_ids": t.compile_ids,
        "attempts": t.attempts,
        "statuses": t.statuses,
        "graph_breaks": t.graph_breaks,
        "graph_break_reasons": t.graph_break_reasons,  # distinct: (registry id, place)
        "graph_break_kinds": t.graph_break_kinds,  # distinct registry ids (or types)
        "recompiles": t.recompiles,
        "recompiled_functions": len(t.recompiled_by_function),  # each once, on any rank
        "compiled_again": t.compiled_again,  # after a failed version: not recompiles
        "limit_hits": len(t.limit_hits),  # refused past the recompile limit: no version
        "error_on_recompile": len(t.error_on_recompile),  # refused: RecompileError raised
        "errors": t.errors,
        "distinct_errors": t.distinct_errors,
        "error_kinds": t.error_kinds,
        "cache": t.cache,
        "compile_seconds": t.compile_seconds,
        "not_shown": trace.not_shown,  # the folder's other logs of one process, not read
        # entries of the folder refused (a link out of it, a FIFO): never read, named
        "not_read": [
            {"path": d.path, "why": d.message} for d in trace.diagnostics if d.kind == "skipped"
        ],
    }
    vllm = [(r, view) for r in trace.ranks if (view := vllm_view(r)) is not None]
    if vllm:  # vLLM's piecewise compiles, by log order (their compile ids are missing)
        data["vllm"] = [{"rank": r.rank, **summary_data(view)} for r, view in vllm]
    classes = rank_classes(trace) if trace.is_multi_rank else []
    diverging = _diverging(trace)
    if trace.is_multi_rank:
        data["rank_classes"] = classes  # ranks that logged the same, as their pages are shared
        data["divergence"] = diverging
        data["frames_per_rank"] = list(t.frames_per_rank)  # the fewest and the most
        if t.slowest is not None:
            data["slowest_rank"] = {"rank": t.slowest[0], "compile_seconds": t.slowest[1]}
    tree = compile_time.compile_time_tree(trace)  # where the compile time went (issue 55)
    data["compile_time"] = compile_time.summary_data(tree)
    found = answers(trace, args.path)  # which breaks, recompiles and compiles, and where
    data["log"] = found.log.as_json()
    data["failures"] = [f.as_json() for f in found.failures]
    data["recompiled"] = [fn.as_json() for fn in found.recompiled]
    data["slowest_compiles"] = [s.as_json() for s in found.slowest]
    refused = [d for d in trace.diagnostics if d.kind == "skipped"]
    # figures that leave out entries of the folder are no all-clear: exit 2, as diff does
    status = 2 if refused else 0
    if args.json:
        print(console_json(json.dumps(data, indent=2, ensure_ascii=False)))
        return status
    seconds = "-" if t.compile_seconds is None else f"{t.compile_seconds:.2f} s"
    frames = str(t.frames)
    if trace.is_multi_rank:  # the figures add up the ranks': say what one rank did
        fewest, most = t.frames_per_rank
        each = str(most) if fewest == most else f"{fewest} to {most}"
        frames += f" ({each} on each of the {t.ranks} ranks)"
        if t.slowest is not None:
            seconds += f" ({t.slowest[1]:.2f} s on rank {t.slowest[0]}, the slowest)"
    statuses = ", ".join(f"{n} {s}" for s, n in sorted(t.statuses.items())) or "none"
    cache = ", ".join(f"{n} {r}" for r, n in t.cache.items()) or "none"
    rows = [
        ("ranks", str(t.ranks)),
        ("frames", frames),
        ("compile ids", f"{t.compile_ids} ({statuses})"),
        ("graph breaks", _kinds(t.graph_breaks, t.graph_break_kinds, *t.graph_break_places)),
        (
            "recompiles",
            f"{t.recompiles} (in {_functions(len(t.recompiled_by_function))})"
            + (f"; {len(t.limit_hits)} refused past the recompile limit" if t.limit_hits else "")
            + (
                f"; {t.compiled_again} compiled again after a failed version"
                if t.compiled_again
                else ""
            ),
        ),
        ("errors", _kinds(t.errors, t.error_kinds, *t.error_places)),
        ("cache lookups", cache),
        ("compile time", seconds),
    ]
    rows += [("vllm", summary_text(view)) for _, view in vllm]
    read: list[tuple[str, str]] = []  # what of the input was left out: said by the log's row
    if trace.not_shown:  # earlier runs in the folder: the figures are the newest run's
        read.append(
            (
                "not shown",
                f"{len(trace.not_shown)} other log(s) without a rank in "
                "the folder (name a log file to read another)",
            )
        )
    for d in refused[:SKIPPED_SHOWN]:
        read.append(("not read", f"{d.path}: {d.message}"))
    if len(refused) > SKIPPED_SHOWN:
        read.append(("not read", f"and {len(refused) - SKIPPED_SHOWN} more entries"))
    if trace.is_multi_rank:  # the glance says first whether the ranks diverge
        shown = " | ".join(number_ranges(c) for c in classes[:CLASSES_SHOWN])
        more = f" and {len(classes) - CLASSES_SHOWN} more" if len(classes) > CLASSES_SHOWN else ""
        rows.append(("rank classes", f"{len(classes)}: {shown}{more}"))
        rows.append(("diverging", ", ".join(diverging) or "nothing"))
    colour = wants_colour(sys.stdout.isatty(), os.environ)
    lines = answer_lines(
        found,
        [*read, *rows],
        compile_time.summary_rows(tree),
        colour=colour,
        everything=args.all,
    )
    for line in lines:
        print(line)  # each input segment escaped by answer_lines, colour codes its own
    return status


def _debug_summary(args: argparse.Namespace) -> int:
    """A TORCH_COMPILE_DEBUG folder's figures: what the directive's page counts."""
    debug = load_debug_dir(args.path)
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
    ]
    for label, value in rows:
        _say(f"{label + ':':<15} {value}")
    return 0


def _kinds(n: int, kinds: int, places: int, unplaced: int) -> str:
    """``6 (5 kinds, 6 places)``: the glance's figures, in the table's words."""
    return str(n) + kinds_text(n, kinds, places, unplaced)


def _functions(n: int) -> str:
    return f"{n} function{'' if n == 1 else 's'}"


def _diverging(trace: Trace) -> list[str]:
    """What the ranks differ in (the overview's divergence kinds), in words."""
    return divergence_words(diverging_kinds(summary_divergence(trace)))


# -- build ----------------------------------------------------------------------------------


def _build(args: argparse.Namespace) -> int:
    for path in args.paths:
        if not os.path.exists(path):
            raise InputError(f"{path}: no such file or directory")
    try:
        from .sphinxext.standalone import StandaloneBuildError, build_site
    except ImportError:
        raise InputError("build needs Sphinx: pip install sphinx") from None
    try:
        index = build_site(
            [Path(p) for p in args.paths],
            Path(args.output),
            latest=args.latest,
            quiet=args.quiet,
            rewrites=args.rewrite,
        )
    except StandaloneBuildError as e:
        raise InputError(str(e)) from None
    _say(str(index))
    if not args.no_browser and interactive():
        _open(index)
    return 0


def interactive() -> bool:
    """Someone at a terminal, not a CI job or a pipe: then the report opens, as tlparse's
    does (``--no-browser`` never, ``run --open`` always)."""
    return sys.stdout.isatty() and not os.environ.get("CI")


def _open(page: Path) -> None:
    import webbrowser

    webbrowser.open(page.resolve().as_uri())


# -- show -----------------------------------------------------------------------------------


def _show(args: argparse.Namespace) -> int:
    path, sep, number = args.where.rpartition(":")
    if not sep or not number.isdigit() or int(number) < 1:
        raise InputError(f"{args.where}: give LOG:LINE, as trace.log:120")
    try:
        lines = record_lines(path, int(number), max(args.max_lines, 0))
    except OSError as e:
        raise InputError(f"{path}: {e.strerror or e}") from None
    except ValueError as e:
        raise InputError(f"{args.where}: {e}") from None
    _say(f"{path}:{number}:")
    for line in lines:
        # indented: a line of a log never starts a line here (a payload's tab: two spaces)
        line = mask_secrets(line)  # a terminal's scrollback, a CI log: no secret
        _say(f"    {line[1:]}" if line.startswith("\t") else f"  {line}")
    return 0


# -- run ------------------------------------------------------------------------------------


def _run(args: argparse.Namespace) -> int:
    program = list(args.program)
    if program[:1] == ["--"]:
        program = program[1:]
    if not program:
        raise InputError("give the program to run after --: run -- python train.py")
    try:
        from .sphinxext.cache_dirs import cache_home
        from .sphinxext.standalone import StandaloneBuildError, build_site, serve
    except ImportError:
        raise InputError("run needs Sphinx to build the report: pip install sphinx") from None
    from .trace.inputs.capture import run_program
    from .trace.runtime import RUNTIME_DIR, parse_steps, runtime_environment

    if (args.steps or args.worth_it) and not args.runtime:
        raise InputError("--steps and --worth-it go with --runtime")
    try:
        steps = parse_steps(args.steps) if args.steps else None
    except ValueError as e:
        raise InputError(f"--steps: {e}") from None
    stamp = time.strftime("%Y%m%d-%H%M%S", time.gmtime())
    trace_dir = cache_home() / "runs" / f"{stamp}-{os.getpid()}"
    env = runtime_environment(trace_dir / RUNTIME_DIR, steps) if args.runtime else None
    if not args.quiet:
        _note(f"TORCH_TRACE={trace_dir}")
        _note(f"running {shown_command(program)}" + (" under torch.profiler" if env else ""))
    started = time.monotonic()
    try:
        returncode, _ = run_program(
            program,
            trace_dir,
            env=env,
            stdout=None,
            own_session=False,
            progress=None if args.quiet else _still_running(),
        )
    except OSError as e:
        raise InputError(f"cannot run {shown_command(program[:1])}: {e.strerror or e}") from None
    status = (
        returncode
        if returncode is not None and returncode >= 0
        else (128 - returncode if returncode is not None else 2)
    )
    if not args.quiet or status:
        _note(f"the program exited with status {status} after {time.monotonic() - started:.1f} s")
    if args.worth_it:
        try:
            _eager_run(program, trace_dir, steps, args.quiet)
        except OSError as e:
            raise InputError(
                f"cannot run {shown_command(program[:1])}: {e.strerror or e}"
            ) from None
    if args.runtime and not any((trace_dir / RUNTIME_DIR).glob("profile-*.json.gz")):
        _note(
            "no runtime profile was written: no compiled region ran while profiled"
            + (
                " (or --steps counted no optimizer step: a compiled opt.step() calls no hook)"
                if steps
                else ""
            )
        )
    if not any(trace_dir.glob("dedicated_log_torch_trace_*.log*")):
        _error(f"the program wrote no trace log in {trace_dir} (does it run torch.compile?)")
        return status or 2
    try:
        # the folder made for the run is shown by its name, as a log folder given is
        rules = [*args.rewrite, (os.fspath(trace_dir), trace_dir.name)]
        index = build_site([trace_dir], Path(args.output), quiet=args.quiet, rewrites=rules)
    except StandaloneBuildError as e:
        _error(str(e))
        return status or 2
    _say(str(index))
    if args.serve:
        out = Path(args.output).resolve()
        try:
            serve(
                out,
                args.port,
                ready=lambda line: print(line, flush=True),
                page=index.relative_to(out).as_posix(),
            )
        except OSError as e:
            raise InputError(f"cannot serve on 127.0.0.1:{args.port}: {e.strerror or e}") from None
        except KeyboardInterrupt:
            pass
    elif args.open or (not args.no_browser and interactive()):
        _open(index)
    return status


def _eager_run(
    program: list[str], trace_dir: Path, steps: tuple[int, int] | None, quiet: bool
) -> None:
    """The program again, every graph on the eager backend, profiled beside the first run
    (its own trace is left out: the report is the compiled run's)."""
    import shutil

    from .trace.inputs.capture import run_program
    from .trace.runtime import RUNTIME_DIR, runtime_environment

    if not quiet:
        _note("running it again with every graph on the eager backend (--worth-it)")
    scratch = trace_dir.with_name(trace_dir.name + "-eager")
    try:
        run_program(
            program,
            scratch,
            env=runtime_environment(trace_dir / RUNTIME_DIR, steps, eager=True),
            stdout=subprocess.DEVNULL,
            own_session=False,
            progress=None if quiet else _still_running(),
        )
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


def _still_running() -> Callable[[float], None]:
    """A line now and then while the program runs (its own output may be silent for
    minutes): at 5, 10, 20, 40 and 60 s, then every minute, never a line every few seconds
    through a long training run."""
    marks = [5.0, 10.0, 20.0, 40.0, 60.0]

    def progress(elapsed: float) -> None:
        if elapsed + 0.5 < marks[0]:
            return
        _note(f"the program is still running ({elapsed:.0f} s)")
        while marks[0] <= elapsed + 0.5:
            marks.append(marks[-1] + 60.0)
            marks.pop(0)

    return progress


def _note(line: str) -> None:
    """A progress line on stderr (stdout is the program's, then the report's path), masked
    as ``redact`` masks a log's secrets: a terminal's scrollback, a CI log."""
    print(console_text(mask_secrets(f"{PROG}: {line}")), file=sys.stderr, flush=True)


#: What stands for a value the command line's own words say is secret.
_MASKED_ARG = "[secret masked]"
#: ``NAME=value`` (``env HF_TOKEN=… python …``) and ``--name=value``.
_ASSIGNMENT = re.compile(r"(?P<name>-{0,2}[A-Za-z_][A-Za-z0-9_.-]{0,255})=")


def shown_command(program: Sequence[str]) -> str:
    """A program's command line as ``run`` prints it, with what a reader of the terminal or
    the CI log must not get masked: the value of an argument or assignment whose name says
    it is secret (``--token X``, ``--api-key=X``, ``HF_TOKEN=X``, by the rule that names
    environment variables), then every secret :data:`~.trace.secrets.mask_secrets` finds
    (a token, a key, a URL's password, a random string), as ``redact`` masks them."""
    words: list[str] = []
    after_secret_option = False
    for word in program:
        assignment = _ASSIGNMENT.match(word)
        if after_secret_option and not word.startswith("-"):
            word = _MASKED_ARG
        elif assignment is not None and secret_name(assignment["name"].lstrip("-")):
            word = assignment.group() + _MASKED_ARG
        after_secret_option = (
            word.startswith("-") and "=" not in word and secret_name(word.lstrip("-"))
        )
        words.append(word)
    return mask_secrets(shlex.join(words))


# -- serve ----------------------------------------------------------------------------------


def _serve(args: argparse.Namespace) -> int:
    folder = Path(args.folder)
    if not (folder / "index.html").is_file():
        raise InputError(f"{args.folder}: no index.html (build the report first)")
    from .sphinxext.standalone import serve

    def ready(line: str) -> None:
        print(line, flush=True)

    try:
        serve(folder, args.port, ready=ready)
    except OSError as e:
        raise InputError(f"cannot serve on 127.0.0.1:{args.port}: {e.strerror or e}") from None
    return 0
