"""The header: which log, which torch, which settings, and the rank files."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Any

from ....trace import Trace
from ....trace.analyses.glance import Triage, triage
from ....trace.analyses.naming import rank_number
from ....trace.analyses.rank_digest import number_ranges
from ....trace.analyses.run_info import capture_span, torch_commit, torch_version
from ....trace.analyses.settings import config_json, notable_settings
from ....version import __version__
from ...artifacts import size_text
from ...blocks import (
    AnchorLink,
    Block,
    Code,
    CodeBlock,
    Dropdown,
    Inline,
    Inlines,
    Paragraph,
    Table,
    Target,
    capped_table,
    joined,
)
from ...plan import PageSettings
from ...statuses import STATUS_ORDER
from ...words import _
from .view import Overview, Row, counted, duration_text, in_all_ranks, log_size_text


def introduction() -> Paragraph:
    return Paragraph(
        [
            "This is the overview of a PyTorch compilation trace: the log ",
            Code("torch.compile"),
            " writes when the ",
            Code("TORCH_TRACE"),
            " environment variable is set. It lists every compilation (a Python function that "
            "PyTorch turned into optimized code), what went wrong, and where the time went; "
            "each compile id links to a page with its graphs, generated code and metrics.",
        ]
    )


def section(view: Overview) -> list[Block]:
    """The facts of the trace; no heading, as the page title is its heading."""
    rows: list[Row] = [
        [[_("PyTorch")], _torch_versions(view.trace)],
        [[_("Ranks")], _ranks_fact(view)],
        [[_("Captured")], [_capture_fact(view.trace)]],
        [[_("Log")], _log_fact(view.trace)],
        *_other_runs_rows(view.trace),
        [[_("Compilations")], [_compilations_fact(triage(view.trace), view.multi)]],
        [[_("Settings")], _settings_fact(view.configs, [n for _, n in view.config_runs])],
        [[_("Report")], _report_fact(view.settings)],
    ]
    blocks: list[Block] = [
        Target("header"),
        Table((), rows, widths=[1, 4], classes=["torchtrace-header"]),
    ]
    if notable_settings(view.configs):
        blocks.append(
            Paragraph(
                [
                    "The settings line lists the key ",
                    Code("torch._dynamo.config"),
                    " and ",
                    Code("torch._inductor.config"),
                    " options that differ from PyTorch's usual defaults (an arrow means the "
                    "value changed during the run).",
                ]
            )
        )
    if view.multi:
        blocks.append(_rank_files(view.trace))
    if view.configs:
        blocks.append(_configuration(view.configs))
    return blocks


def _other_runs_rows(trace: Trace) -> list[Row]:
    """Where a folder held more logs without a rank than the trace shows (earlier runs,
    other programs): which, how the shown one was chosen, and how to show another."""
    if not trace.not_shown:
        return []
    shown = [Code(p) for p in trace.not_shown[:8]]
    more = len(trace.not_shown) - len(shown)
    cell: list[Inline] = [*joined([[c] for c in shown])]
    if more:
        cell.append(f" and {more} more")
    by = f", the newest by {trace.chosen_by}" if trace.chosen_by else ""
    cell.append(
        f": the folder holds {len(trace.not_shown) + 1} logs without a rank (runs of a "
        f"program, or other programs); this report shows the log above{by}. Name a log "
        "file in the directive (one directive per run) to show another."
    )
    return [[[_("Not shown")], cell]]


def _rank_files(trace: Trace) -> Dropdown:
    """Each rank's log with its size and sha256: what a published report was made from."""
    rows: list[list[Inlines]] = [
        [
            [str(rank_number(trace, r))],
            [Code(r.path)],
            [log_size_text(r)],
            [Code(r.sha256)] if r.sha256 else ["not read"],
        ]
        for r in trace.ranks
    ]
    table = capped_table(["Rank", "File", "Size", "sha256"], rows, where="the trace folder")
    files = len({r.path for r in trace.ranks})  # a text log holds several ranks
    return Dropdown([f"The {files} log file{'' if files == 1 else 's'}"], table, print_last=True)


def _torch_versions(trace: Trace) -> list[Inline]:
    """Each PyTorch build the ranks ran, with its commit when the log names it."""
    builds: list[tuple[str, str | None]] = []
    for rank in trace.ranks:
        build = (torch_version(rank) or "not logged", torch_commit(rank))
        if build not in builds:
            builds.append(build)
    return joined(
        [
            [version, " (commit ", Code(commit), ")"] if commit else [version]
            for version, commit in builds
        ],
        "; ",
    )


def _report_fact(settings: PageSettings) -> list[Inline]:
    """What made these pages, so a published report can be traced to its tools and day."""
    made = f", {settings.made_on} (UTC)" if settings.made_on else ""
    return [f"made by sphinx-torchtrace {__version__}{made}"]


def _ranks_fact(view: Overview) -> list[Inline]:
    trace = view.trace
    if not view.multi:
        rank = trace.ranks[0].rank
        return ["single process" if rank is None else f"rank {rank}"]
    numbers = number_ranges(rank_number(trace, r) for r in trace.ranks)
    fact: list[Inline] = [f"{len(trace.ranks)} processes: {numbers}"]
    if "ranks" in view.wanted:
        ranks = AnchorLink(view.plan.index_docname, "ranks", "Ranks")
        fact += [" (see the ", ranks, " section below)"]
    return fact


def _capture_fact(trace: Trace) -> str:
    span = capture_span(trace.ranks)
    if span is None:
        return "not recorded"
    duration = f" ({duration_text(span.seconds)})" if span.seconds is not None else ""
    start, end = _when(span.start), _when(span.end)
    return f"{start} to {end}{duration}; the log records month and day, not the year"


def _when(moment: datetime | None) -> str:
    """``Nov 21 11:51:36``: the month, day and time torch logged (its year is not known)."""
    return moment.strftime("%b %d %H:%M:%S") if moment is not None else "—"


def _log_fact(trace: Trace) -> list[Inline]:
    files = {r.path: r for r in trace.ranks}  # a text log holds several ranks
    if len(files) > 1:
        on_disk = sum(r.file_size or r.size for r in files.values())
        text = sum(r.size for r in files.values())
        read = f", {size_text(text)} of text" if text != on_disk else ""
        return [f"{len(files)} files, {size_text(on_disk)} in all{read} (listed below)"]
    rank = trace.ranks[0]
    fact: list[Inline] = [Code(rank.path), f" ({log_size_text(rank)})"]
    if rank.sha256:
        fact += [", sha256 ", Code(rank.sha256)]
    return fact


def _compilations_fact(t: Triage, multi: bool) -> str:
    """The glance's figures again (the same function): compile ids by status, attempts."""
    parts = [f"{t.statuses[s]} {s}" for s in STATUS_ORDER if t.statuses.get(s)]
    ids = f"{t.compile_ids} compile id{'s' if t.compile_ids != 1 else ''}"
    attempts = f"{t.attempts} attempt{'s' if t.attempts != 1 else ''}"
    in_all = in_all_ranks(t.ranks) if multi else ""
    return f"{ids} ({attempts}){in_all}" + (": " + ", ".join(parts) if parts else "")


def _settings_fact(
    configs: Sequence[dict[str, dict[str, Any]]], counts: Sequence[int] = ()
) -> list[Inline]:
    if not configs:
        return ["not logged (the compilation metrics carry no configuration)"]
    changed = notable_settings(configs, counts)
    if not changed:
        return ["PyTorch's usual defaults for the key settings"]
    parts: list[list[Inline]] = []
    for s in changed:
        values: list[Inline] = []
        for i, value in enumerate(s.values):
            values += [" → "] if i else []
            values.append(Code(value))
            if s.changes and i < len(s.compiles):
                values.append(f" ({counted(s.compiles[i], 'compile')})")
        usual: list[Inline] = [" (usually ", Code(s.usual), ")"]
        parts.append([f"{s.config} ", Code(s.key), " = ", *values, *usual])
    return joined(parts, "; ")


def _configuration(configs: Sequence[dict[str, dict[str, Any]]]) -> Dropdown:
    title = "Full compile configuration"
    if len(configs) > 1:
        changes = len(configs) - 1
        plural = "s" if changes > 1 else ""
        title += f" (of the first compilation; it changed {changes} time{plural} later)"
    # pages of JSON: in print, after the overview's sections (the status legend first)
    return Dropdown([title], [CodeBlock(config_json(configs[0]), "json")], print_last=True)
