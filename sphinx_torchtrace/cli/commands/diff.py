"""``diff``: compare two runs (or a trend of more) and exit 1 on a regression, for CI."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from ...render.diff_formats import FORMATS, Report, render
from ...trace.comparing.comparability import parse_rank_pairs
from ...trace.comparing.diff import diff_traces
from ...trace.comparing.regressions import (
    DEFAULT_REGRESSIONS,
    REGRESSION_KINDS,
    parse_fail_on,
    regressions,
    uncompared,
)
from ...trace.comparing.trend import MAX_RUNS, trend, unread_runs
from ...trace.inputs.opening import open_input
from ...trace.secrets import SecretMasker
from ..common import InputError
from ..loading import load

DEFAULT_FAIL_ON = ",".join(k for k, v in DEFAULT_REGRESSIONS.items() if v)

HELP = "compare two runs; exit 1 on a regression"
DESCRIPTION = (
    "Compare two traces (log files or TORCH_TRACE directories).  Exit 1 when "
    "a regression of the listed kinds is found, 0 otherwise, 2 on unreadable input, "
    "when nothing could be compared (no rank or no frame in common) or when part of the "
    "input was not read (a baseline rank the new run lacks, a log its folder left out, "
    "records that did not parse).  A rank only the new run has is compared with nothing."
)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "runs",
        metavar="RUN",
        nargs="+",
        help="the baseline trace, then the new one; more runs (oldest first) add a trend "
        "of each function over them, and the last two are compared",
    )
    parser.add_argument(
        "--format",
        choices=FORMATS,
        default="text",
        help="text (default), json, markdown (for $GITHUB_STEP_SUMMARY or a PR comment), "
        "github (workflow annotations) or junit (a test case per frame)",
    )
    parser.add_argument("--json", action="store_true", help="the same as --format json")
    parser.add_argument(
        "--ranks",
        metavar="PAIRS",
        help="which baseline rank to compare with which new one: 0:2 or 0:2,1:3 "
        "(default: ranks of equal numbers)",
    )
    parser.add_argument(
        "--map",
        metavar="FILE",
        dest="renames",
        help='a JSON object of baseline function names to new ones ({"old": "new"}), for '
        "functions renamed between the runs",
    )
    parser.add_argument(
        "--fail-on",
        metavar="KINDS",
        default=DEFAULT_FAIL_ON,
        help=f"comma list of {', '.join(REGRESSION_KINDS)}; compile_time:RATIO sets its "
        f"threshold (default: {DEFAULT_FAIL_ON}; '' never fails)",
    )


def run(args: argparse.Namespace) -> int:
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
    traces = [load(open_input(path), compared=True) for path in args.runs]
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
