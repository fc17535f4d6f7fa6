"""The overview page of a trace: what tlparse's index shows, and what it leaves to work out.

Figures come from :mod:`...trace.analyses.summary`; this module only lays them out as blocks,
section by section in page order, each section shown when ``:sections:`` asks for it.
Several ranks get one body per rank in synchronized tabs, so switching the rank in
one section switches it everywhere on the page.
"""

from __future__ import annotations

import posixpath
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from ...trace import STATUS_LEGEND, Compile, RankTrace, StackTrieNode, Trace
from ...trace.analyses import graph_breaks, summary, volatile
from ...trace.analyses.break_registry import BreakRegistry
from ...trace.analyses.outcome import OUTCOME_WORDS
from ...trace.analyses.rank_digest import number_ranges
from ...trace.analyses.timings import MAX_SECONDS, plausible
from ...version import __version__
from ..artifacts import size_text
from ..blocks import (
    Admonition,
    AnchorLink,
    Badge,
    Block,
    BulletList,
    Code,
    CodeBlock,
    Download,
    Dropdown,
    Emphasis,
    Inline,
    Inlines,
    Lines,
    Link,
    ObjectLink,
    ObjectTarget,
    Page,
    PageLink,
    Paragraph,
    Section,
    Strong,
    Tab,
    Table,
    TabSet,
    Target,
    Toctree,
    WebOnly,
    capped_table,
    item,
    joined,
    linked,
)
from ..naming import break_object_name
from ..plan import RANK_TABS, FramePlan, PageSettings, RankPlan, TracePlan
from ..rank_sharing import SET_ASIDE, VALUES_SHOWN
from ..source import maybe_strip
from ..statuses import LEGEND_MORE, STATUS_MEANING, STATUS_ORDER
from ..words import _
from . import runtime
from .cudagraphs import cudagraphs_overview_blocks

#: Nested lists a stack trie may use: LaTeX allows 4 nested itemize lists, and docutils
#: recurses per level; deeper frames are listed flat at the last level, with their depth.
TRIE_MAX_NESTING = 4
#: Stack tries longer than this (frames) are folded away: they push the rest of the page down.
TRIE_FOLD_LINES = 30
#: Compile ids one table cell lists before "and N more".
CELL_COMPILES = 20
#: Functions whose recompiles are listed open; more are folded under the merged reasons.
RECOMPILE_FUNCTIONS_OPEN = 3

FrameLink = Callable[[Compile], Inline]
Row = list[list[Inline]]  # a table row: the inline content of each cell


@dataclass
class _Overview:
    """What every section needs: the plan, the settings, and figures computed once."""

    plan: TracePlan
    settings: PageSettings
    names: summary.FrameNames = field(init=False)
    configs: list[dict[str, dict[str, Any]]] = field(init=False)
    config_runs: list[tuple[dict[str, dict[str, Any]], int]] = field(init=False)
    wanted: frozenset[str] = field(init=False)
    declared: set[str] = field(init=False, default_factory=set)  # graph-break objects

    def __post_init__(self) -> None:
        self.names = summary.FrameNames(self.plan.frames)
        self.config_runs = summary.config_runs(self.plan.trace)
        self.configs = [config for config, _ in self.config_runs]
        self.wanted = frozenset(k for k in summary.SECTION_KEYS if self.settings.shows(k))

    @property
    def trace(self) -> Trace:
        return self.plan.trace

    @property
    def multi(self) -> bool:
        return self.plan.trace.is_multi_rank

    @property
    def compiles(self) -> list[Compile]:
        return [c for r in self.plan.trace.ranks for c in r.compiles]  # past the cap too

    def link(self, compile_: Compile) -> Inline:
        """A compile's frame page with its status badge; its label where it has no page."""
        name = self.names(compile_)
        return ObjectLink("frame", name) if name else Code(compile_.label)

    def links(self, compiles: Sequence[Compile], limit: int = CELL_COMPILES) -> list[Inline]:
        out = joined([[self.link(c)] for c in compiles[:limit]])
        if len(compiles) > limit:
            out.append(f" and {len(compiles) - limit} more")
        return out

    def for_ranks(
        self, ranks: Sequence[RankTrace], body: Callable[[RankTrace], list[Block]]
    ) -> list[Block]:
        """One body per rank: as it is for a single log, in synchronized tabs for several;
        one tab per class of alike ranks (its first rank's body), at most
        :data:`RANK_TABS` (the others are listed under Ranks, each linked to its pages)."""
        if not self.multi:
            return [b for r in ranks for b in body(r)]
        classes: dict[int, list[RankTrace]] = {}
        for rank in ranks:
            rank_plan = self.plan.rank_plan(rank)
            first = rank_plan.same_as if rank_plan is not None else None
            classes.setdefault(id(first.rank if first is not None else rank), []).append(rank)
        tabs = []
        for members in list(classes.values())[:RANK_TABS]:
            numbers = [summary.rank_number(self.trace, r) for r in members]
            title = f"Rank {numbers[0]}" if len(numbers) == 1 else f"Ranks {number_ranges(numbers)}"
            shown = body(members[0])
            if len(numbers) > 1 and shown:  # one rank's figures stand for the class's
                others = _ranks_text(numbers[1:])
                shown.insert(
                    0,
                    Paragraph(
                        [
                            f"Rank {numbers[0]}'s figures, which {others} logged alike (their own "
                            "times and metrics are under ",
                            AnchorLink(self.plan.index_docname, "ranks", "Ranks"),
                            ").",
                        ]
                    ),
                )
            tabs.append(Tab(title, shown, sync=f"rank-{numbers[0]}"))
        blocks: list[Block] = [TabSet(tabs)]
        if len(classes) > RANK_TABS:
            rest = sum(len(m) for m in list(classes.values())[RANK_TABS:])
            blocks.append(
                Paragraph(
                    [
                        f"The tabs show the first {RANK_TABS} classes of alike ranks; the other "
                        f"{rest} ranks are listed under ",
                        AnchorLink(self.plan.index_docname, "ranks", "Ranks"),
                        ", each with the compiles it differs in, linked to their pages.",
                    ]
                )
            )
        return blocks


def overview_page(plan: TracePlan, settings: PageSettings) -> Page:
    """The overview page of a trace: its sections in page order, then the frames' toctree."""
    view = _Overview(plan, settings)
    glance = triage_blocks(plan, settings) if "glance" in view.wanted else []
    blocks: list[Block] = [*glance, _introduction()]
    for key, section in _SECTIONS:
        if key in view.wanted:
            blocks.extend(section(view))
    blocks.extend(cudagraphs_overview_blocks(plan))
    blocks.extend(past_limit_blocks(plan))
    sidebar = plan.sidebar_frames(settings.sidebar_limit)
    if sidebar:
        # a section of its own: after the last section, themes (rtd) nest the frames under it
        frames: list[Block] = []
        if len(sidebar) < len(plan.listed_frames):
            frames.append(_sidebar_note(plan, len(sidebar), settings))
        frames.append(Toctree([f.docname for f in sidebar]))
        blocks.append(Section([_("Frames")], frames, anchor="frames"))
    outside = [f.docname for f in plan.paged_frames if f.compile.id.is_unknown]
    if outside and settings.detail_toctree:  # one document (LaTeX) holds every page
        blocks.append(Toctree(outside, hidden=True))
    return Page(plan.index_docname, ["Trace ", plan.label], blocks)


def _sidebar_note(plan: TracePlan, listed: int, settings: PageSettings) -> Paragraph:
    """Past ``torchtrace_sidebar_frames``: what the sidebar shows, and where the rest is
    (the compile directory, where ``:sections:`` keeps it)."""
    where: list[Inline] = (
        [
            ", and the ",
            AnchorLink(plan.index_docname, "compile-directory", "compile directory"),
            " lists them all.",
        ]
        if settings.shows("directory")
        else ["."]
    )
    return Paragraph(
        [
            f"The sidebar lists the first page of {listed} functions of the "
            f"{len(plan.listed_frames)} frame pages; each page links the previous and next "
            "compile",
            *where,
        ]
    )


def past_limit_blocks(plan: TracePlan) -> list[Block]:
    """The compiles past ``torchtrace_max_frames``: listed, without pages or links."""
    if not plan.past_limit:
        return []
    multi = plan.trace.is_multi_rank
    intro = Paragraph(
        [
            f"Only the first {plan.max_frames} compilations get pages "
            f"(torchtrace_max_frames = {plan.max_frames}); these {len(plan.past_limit)} "
            "have none. Raise ",
            Code("torchtrace_max_frames"),
            " in conf.py to give them pages.",
        ]
    )
    rows: list[Row] = []
    functions = [summary.compiled_function(p.rank.rank, p.compile) for p in plan.past_limit]
    places = _places_by_name(functions)
    for p, function in zip(plan.past_limit, functions, strict=True):
        cell = _function_cell(function, places, False)
        row: Row = [[Code(p.compile.label)], cell, [Badge(p.compile.status)]]
        rows.append([[p.rank.name or "—"], *row] if multi else row)
    header = [*(["Rank"] if multi else []), "Compile id", "Function", "Status"]
    table = Table(header, rows, classes=["torchtrace-past-limit"])
    return [Section([_("Frames past the limit")], [intro, table], anchor="frames-past-the-limit")]


# -- at a glance ----------------------------------------------------------------------------


def triage_blocks(plan: TracePlan, settings: PageSettings, titled: bool = True) -> list[Block]:
    """The answer first: the trace's figures, each a link to the section that explains it;
    for several ranks, whether they diverge before anything else.  Also shown by the
    directive on the user's own page (``titled=False``: no section of ours in their page;
    its links go to the overview)."""
    t = summary.triage(plan.trace)
    index = plan.index_docname

    def to(section: str, anchor: str, text: str) -> Inline:
        return AnchorLink(index, anchor, text) if settings.shows(section) else text

    def plural(n: int, noun: str, nouns: str | None = None) -> str:
        return f"{n} {noun if n == 1 else (nouns or noun + 's')}"

    # Several ranks: the figures add up every rank's, and say so (the ranks compile the
    # same functions: "320 functions compiled" would read as 320 of them).
    several = plan.trace.is_multi_rank
    in_all = _in_all(t.ranks) if several else ""
    lines: list[list[Inline]] = []
    if several:
        fewest, most = t.frames_per_rank
        each = str(most) if fewest == most else f"{fewest} to {most}"
        noun = f"{each} function{'' if most == 1 else 's'}"
        compiled: list[Inline] = [
            to("directory", "compile-directory", noun),
            f" on each of the {t.ranks} ranks ({plural(t.compile_ids, 'compile id')}, "
            f"{plural(t.attempts, 'attempt')}{in_all})",
        ]
    else:
        compiled = [
            # "functions", not "functions compiled": the statuses after it say how many
            # compiled, and an error left its function uncompiled
            to("directory", "compile-directory", plural(t.frames, "function")),
            f" ({plural(t.compile_ids, 'compile id')}, {plural(t.attempts, 'attempt')})",
        ]
    statuses = [s for s in STATUS_ORDER if t.statuses.get(s)]
    if statuses:
        compiled.append(": ")
        counts: list[list[Inline]] = [[f"{t.statuses[s]} ", Badge(s)] for s in statuses]
        if t.ok_with_breaks:  # never plain ok beside a break it logged
            n = t.ok_with_breaks
            counts[statuses.index("ok")].append(
                f" ({n} of them with a graph break torch resumed from, no restart)"
            )
        compiled += joined(counts)
    lines.append([_("Compiled:"), " ", *compiled])
    breaks: list[Inline] = [_("none")]
    if t.graph_breaks:
        total = plural(t.graph_breaks, "graph break")
        breaks = [to("failures", "failures-and-restarts", total)]
        kinds = graph_breaks.kinds_text(t.graph_breaks, t.graph_break_kinds, *t.graph_break_places)
        breaks.append(in_all + kinds)
    if t.restarts:  # a restart of the analysis with no graph break is said apart
        n = t.restarts
        breaks.append(
            f" ({n} restart{'s' if n > 1 else ''} of Dynamo's analysis with no graph break)"
        )
    lines.append([_("Graph breaks:"), " ", *breaks])
    recompiles: list[Inline] = [
        to("recompiles", "recompiles-explained", plural(t.recompiles, "recompile"))
        if t.recompiles
        else _("none")
    ]
    if t.recompiled:
        by_function = t.recompiled_by_function
        per_function: list[list[Inline]] = [
            [Code(maybe_strip(fn.shown, settings.no_source)), _recompile_counts(fn, t.ranks)]
            for fn in by_function[:8]
        ]
        recompiles += [f"{in_all}: ", *joined(per_function)]
        if len(by_function) > 8:
            recompiles.append(f" and {len(by_function) - 8} more functions")
    if t.limit_hits:  # counted apart: past the limit torch made no new version
        n = len(t.limit_hits)
        names = summary.FrameNames(plan.frames)
        refused = joined(
            [
                [ObjectLink("frame", name) if (name := names(c)) else Code(c.label)]
                for c in t.limit_hits[:CELL_COMPILES]
            ]
        )
        more = f" and {n - CELL_COMPILES} more" if n > CELL_COMPILES else ""
        recompiles += [
            f"; the recompile limit refused {n} more (",
            *refused,
            more,
            "): no new version",
        ]
    if t.compiled_again:  # counted apart: after a failed version no guard failed
        n = t.compiled_again
        recompiles.append(
            f"; {n} compile{'s' if n > 1 else ''} of a function again after a "
            "version that failed (not a recompile: no guard failed)"
        )
    lines.append([_("Recompiles:"), " ", *recompiles])
    errors: list[Inline] = [_("none")]
    if t.errors:
        total = plural(t.errors, "compile error")
        errors = [to("failures", "failures-and-restarts", total)]
        errors.append(in_all + graph_breaks.kinds_text(t.errors, t.error_kinds, *t.error_places))
    lines.append([_("Compile errors:"), " ", *errors])
    if t.cache:
        cache_text = ", ".join(
            plural(n, result, result + "es" if result.endswith("s") else None)
            for result, n in t.cache.items()
        )
        lines.append([_("Cache lookups:"), " ", to("cache", "compile-caches", cache_text), in_all])
    if t.compile_seconds is not None:
        spent: list[Inline] = [
            _("Compile time:"),
            " ",
            to("times", "compile-time", f"{t.compile_seconds:.1f} s{in_all or ' in all'}"),
        ]
        if t.slowest is not None:
            number, seconds = t.slowest
            spent.append(f"; {seconds:.1f} s on rank {number}, the slowest")
        lines.append(spent)
    ran = runtime.glance_line(plan, settings.shows("runtime"))
    if ran is not None:
        lines.append(ran)
    blocks: list[Block] = []
    if t.divergence is not None:
        if t.divergence.any:
            blocks.append(_divergence(_Overview(plan, settings)))
        else:
            blocks.append(Paragraph([_divergence_none_text(t.ranks)]))
    blocks.append(Lines(lines, classes=["torchtrace-facts", "torchtrace-triage"]))
    return [Section([_("At a glance")], blocks, anchor="at-a-glance")] if titled else blocks


def _in_all(ranks: int) -> str:
    """What a figure summed over several ranks is said with."""
    return " in both ranks" if ranks == 2 else f" in all {ranks} ranks"


def _recompile_counts(fn: summary.FunctionRecompiles, ranks: int) -> str:
    """`` 4`` on one rank; over several, how many on each rank that recompiled it."""
    counts = fn.per_rank
    if ranks == 1:
        return f" {counts[0]}"
    fewest, most = min(counts), max(counts)
    each = str(most) if fewest == most else f"{fewest} to {most}"
    times = "time" if most == 1 else "times"
    if len(counts) == ranks:
        return f" {each} {times} on each rank"
    return f" {each} {times} on {len(counts)} rank{'' if len(counts) == 1 else 's'}"


def _divergence_none_text(ranks: int) -> str:
    every = "Both ranks" if ranks == 2 else f"All {ranks} ranks"
    return (
        f"{every} compiled the same functions under the same compile ids, with "
        "the same statuses, caches, graph input shapes and collectives."
    )


def _introduction() -> Paragraph:
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


# -- header ---------------------------------------------------------------------------------


def _header(view: _Overview) -> list[Block]:
    """The facts of the trace; no heading, as the page title is its heading."""
    rows: list[Row] = [
        [[_("PyTorch")], _torch_versions(view.trace)],
        [[_("Ranks")], _ranks_fact(view)],
        [[_("Captured")], [_capture_fact(view.trace)]],
        [[_("Log")], _log_fact(view.trace)],
        *_other_runs_rows(view.trace),
        [[_("Compilations")], [_compilations_fact(summary.triage(view.trace), view.multi)]],
        [[_("Settings")], _settings_fact(view.configs, [n for _, n in view.config_runs])],
        [[_("Report")], _report_fact(view.settings)],
    ]
    blocks: list[Block] = [
        Target("header"),
        Table((), rows, widths=[1, 4], classes=["torchtrace-header"]),
    ]
    if summary.notable_settings(view.configs):
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
            [str(summary.rank_number(trace, r))],
            [Code(r.path)],
            [log_size_text(r)],
            [Code(r.sha256)] if r.sha256 else ["not read"],
        ]
        for r in trace.ranks
    ]
    table = capped_table(["Rank", "File", "Size", "sha256"], rows, where="the trace folder")
    files = len({r.path for r in trace.ranks})  # a text log holds several ranks
    return Dropdown([f"The {files} log file{'' if files == 1 else 's'}"], table, print_last=True)


def log_size_text(rank: RankTrace) -> str:
    """The log file's size, and the text read of it where that differs: a gzip log's
    unpacked text, or the part of a log read up to the size limit."""
    if not rank.file_size or rank.file_size == rank.size:
        return size_text(rank.size)
    what = "unpacked" if rank.path.endswith(".gz") else "read"
    return f"{size_text(rank.file_size)} ({size_text(rank.size)} {what})"


def _torch_versions(trace: Trace) -> list[Inline]:
    """Each PyTorch build the ranks ran, with its commit when the log names it."""
    builds: list[tuple[str, str | None]] = []
    for rank in trace.ranks:
        build = (summary.torch_version(rank) or "not logged", summary.torch_commit(rank))
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


def _ranks_fact(view: _Overview) -> list[Inline]:
    trace = view.trace
    if not view.multi:
        rank = trace.ranks[0].rank
        return ["single process" if rank is None else f"rank {rank}"]
    numbers = number_ranges(summary.rank_number(trace, r) for r in trace.ranks)
    fact: list[Inline] = [f"{len(trace.ranks)} processes: {numbers}"]
    if "ranks" in view.wanted:
        ranks = AnchorLink(view.plan.index_docname, "ranks", "Ranks")
        fact += [" (see the ", ranks, " section below)"]
    return fact


def _capture_fact(trace: Trace) -> str:
    span = summary.capture_span(trace.ranks)
    if span is None:
        return "not recorded"
    duration = f" ({span.duration})" if span.seconds is not None else ""
    return f"{span.start} to {span.end}{duration}; the log records month and day, not the year"


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


def _compilations_fact(t: summary.Triage, multi: bool) -> str:
    """The glance's figures again (the same function): compile ids by status, attempts."""
    parts = [f"{t.statuses[s]} {s}" for s in STATUS_ORDER if t.statuses.get(s)]
    ids = f"{t.compile_ids} compile id{'s' if t.compile_ids != 1 else ''}"
    attempts = f"{t.attempts} attempt{'s' if t.attempts != 1 else ''}"
    in_all = _in_all(t.ranks) if multi else ""
    return f"{ids} ({attempts}){in_all}" + (": " + ", ".join(parts) if parts else "")


def _settings_fact(
    configs: Sequence[dict[str, dict[str, Any]]], counts: Sequence[int] = ()
) -> list[Inline]:
    if not configs:
        return ["not logged (the compilation metrics carry no configuration)"]
    changed = summary.notable_settings(configs, counts)
    if not changed:
        return ["PyTorch's usual defaults for the key settings"]
    parts: list[list[Inline]] = []
    for s in changed:
        values: list[Inline] = []
        for i, value in enumerate(s.values):
            values += [" → "] if i else []
            values.append(Code(value))
            if s.changes and i < len(s.compiles):
                values.append(f" ({_plural(s.compiles[i], 'compile')})")
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
    return Dropdown([title], [CodeBlock(summary.config_json(configs[0]), "json")], print_last=True)


# -- status legend --------------------------------------------------------------------------


def _legend(view: _Overview) -> list[Block]:
    rows: list[Row] = [
        [[Badge(s)], [STATUS_LEGEND[s]], [f"{STATUS_MEANING[s]} {LEGEND_MORE.get(s, '')}".strip()]]
        for s in STATUS_ORDER
    ]
    intro = Paragraph(
        [
            "Each compile id is shown as a badge whose color gives the outcome of that "
            "compilation, the same colors tlparse uses: ok is green, break is lime, error is "
            "red, empty is white and missing is purple."
        ]
    )
    table = Table(
        [_("Status"), _("tlparse's legend"), _("What it means")],
        rows,
        widths=[1, 2, 4],
        classes=["torchtrace-legend"],
    )
    return [Section([_("Status legend")], [intro, table], anchor="status-legend")]


# -- where compilations start ---------------------------------------------------------------


def _trie(view: _Overview) -> list[Block]:
    intro = Paragraph(
        [
            "A compilation starts when Python calls a function that ",
            Code("torch.compile"),
            " wraps. This tree merges the Python call stacks of those moments, so shared "
            "callers appear once; each compile id stands at the frame where it started. Frames "
            "of PyTorch itself and of the standard library are marked ",
            Emphasis("(library)"),
            "; the others are your code.",
        ]
    )
    no_source = view.settings.no_source

    def anchor(compile_: Compile) -> str | None:  # a frame page links its compile's entry
        frame = view.plan.frame_for(compile_)
        return view.plan.trie_anchor(frame) if frame is not None else None

    bodies = view.for_ranks(
        view.trace.ranks,
        lambda r: stack_trie_blocks(r.stack_trie, view.link, no_source, anchor),
    )
    title = [_("Where compilations start")]
    return [Section(title, [intro, *bodies], anchor="where-compilations-start")]


def stack_trie_blocks(
    root: StackTrieNode,
    link: FrameLink,
    no_source: bool = False,
    anchor: Callable[[Compile], str | None] | None = None,
) -> list[Block]:
    """The stack trie as nested bullet lists, folded in a dropdown when it is long;
    ``anchor`` names the entry of each compile that frame pages link to."""
    lines = summary.trie_lines(root)
    if not lines:
        return [Paragraph(["No compilation logged its Python stack."])]
    tree = trie_list(lines, link, no_source, anchor)
    if len(lines) > TRIE_FOLD_LINES:
        return [Dropdown([f"Stack trie ({len(lines)} frames)"], [tree])]
    return [tree]


def trie_list(
    lines: Sequence[summary.TrieLine],
    link: FrameLink,
    no_source: bool = False,
    anchor: Callable[[Compile], str | None] | None = None,
) -> BulletList:
    """Trie lines (pre-order, with depths) as at most :data:`TRIE_MAX_NESTING` nested lists.

    One pass, one item per line: a stack of thousands of frames costs thousands of
    items, not thousands of nested lists.
    """
    top: list[list[Block]] = []
    open_lists: list[list[list[Block]]] = [top]  # [k]: the items of the open list at level k
    for line in lines:
        level = min(line.depth, TRIE_MAX_NESTING - 1)
        del open_lists[level + 1 :]
        while len(open_lists) <= level:  # the first child of the last item one level up
            items: list[list[Block]] = []
            parent = open_lists[-1]
            if not parent:
                parent.append([])
            parent[-1].append(BulletList(items))
            open_lists.append(items)
        content = _trie_line(line, link, no_source, flattened=line.depth > level)
        anchors = [a for c in line.compiles if anchor and (a := anchor(c))]
        open_lists[level].append([*map(Target, anchors), Paragraph(content)])
    return BulletList(top)


def _trie_line(
    line: summary.TrieLine, link: FrameLink, no_source: bool, flattened: bool
) -> list[Inline]:
    frame = line.frame
    content: list[Inline] = [f"(depth {line.depth + 1}) "] if flattened else []
    content += [Code(f"{frame.filename}:{frame.line}"), " in ", Code(frame.name)]
    if not frame.is_user_code:
        content += [" ", Emphasis("(library)")]
    if frame.loc and not no_source:
        content += [" — ", Code(frame.loc)]
    for compile_ in line.compiles:
        content += [" ", link(compile_)]
    return content


# -- compile directory ----------------------------------------------------------------------


def _directory(view: _Overview) -> list[Block]:
    intro = Paragraph(
        [
            "Every compilation, by compile id. A compile id ",
            Code("[x/y]"),
            " is the ",
            Emphasis("y"),
            "-th version of the ",
            Emphasis("x"),
            "-th function compiled (",
            Emphasis("y"),
            " > 0 is a recompile); ",
            Code("_z"),
            " marks a restarted attempt, a leading ",
            Code("!n"),
            " a compiled-autograd graph, and ",
            Code("#2"),
            " the same id used again after ",
            Code("torch._dynamo.reset()"),
            ". Time is the whole compilation in seconds; cache counts the lookups in PyTorch's "
            "compile caches.",
        ]
    )
    bodies = view.for_ranks(view.trace.ranks, lambda r: _directory_of(view, r))
    return [Section([_("Compile directory")], [intro, *bodies], anchor="compile-directory")]


def _directory_of(view: _Overview, rank: RankTrace) -> list[Block]:
    mine = [f for f in view.plan.frames if f.rank is rank]
    frames = [f for f in mine if not f.compile.id.is_unknown]
    outside = [_outside_paragraph(f) for f in mine if f.compile.id.is_unknown]
    if not frames:
        return [Paragraph(["No compilations in this log."]), *outside]
    functions = {id(f.compile): summary.compiled_function(rank, f.compile) for f in frames}
    places = _places_by_name(functions.values())
    rows: list[Row] = [
        [
            _attempt_cell(view, f),
            _function_cell(functions[id(f.compile)], places, view.settings.no_source),
            [f.compile.status],
            [seconds_text(summary.compile_seconds(f.compile))],
            [str(len(f.compile.graphs))],
            [str(len(f.kernels))],
            [summary.cache_text(f.compile) or "—"],
            [str(len(f.compile.artifacts))],
        ]
        for f in frames
    ]
    header = ["Compile id", "Function", "Status", "Time", "Graphs", "Kernels", "Cache", "Artifacts"]
    table = Table(header, rows, widths=[2, 3, 1, 1, 1, 1, 2, 1], classes=["torchtrace-directory"])
    return [table, *outside]


def _outside_paragraph(frame: FramePlan) -> Paragraph:
    """``[-/-]`` is not a compilation: its records are named below the table, not in it."""
    c = frame.compile
    records = len(c.artifacts) + len(c.metrics) + c.chromium_event_count
    names = sorted({a.name for a in c.artifacts})
    if c.metrics:
        names.append(f"{len(c.metrics)} metrics record{'s' if len(c.metrics) != 1 else ''}")
    if c.chromium_event_count:
        n = c.chromium_event_count
        names.append(f"{n} chromium event{'s' if n != 1 else ''}")
    listed = ", ".join(names[:6]) + (f" and {len(names) - 6} more kinds" if len(names) > 6 else "")
    one = records == 1
    return Paragraph(
        [
            f"{records} record{'' if one else 's'} logged outside any compilation"
            + (f" ({listed})" if listed else "")
            + (" is on " if one else " are on "),
            PageLink(frame.docname, "its own page" if one else "their own page"),
            ".",
        ]
    )


def _attempt_cell(view: _Overview, frame: FramePlan) -> list[Inline]:
    """One attempt's row: a badge only where ``[x/y]``'s (over all attempts) is its own."""
    if view.plan.badge_status(frame) == frame.compile.status:
        return [view.link(frame.compile)]
    return [PageLink(frame.docname, frame.compile.label)]


def _places_by_name(
    functions: Iterable[tuple[str | None, str | None]],
) -> dict[str | None, set[str | None]]:
    """Where the functions of each name are defined, for :func:`_function_cell`."""
    places: dict[str | None, set[str | None]] = {}
    for name, place in functions:
        places.setdefault(name, set()).add(place)
    return places


def _function_cell(
    function: tuple[str | None, str | None],
    places: dict[str | None, set[str | None]],
    no_source: bool,
) -> list[Inline]:
    """The function's name, with its ``file:line`` where the name alone does not tell it
    apart: a name two functions share, and every ``<lambda>``."""
    name, place = function
    if not name:
        return ["—"]
    cell: list[Inline] = [Code(name)]
    if place and (len(places.get(name, ())) > 1 or name.startswith("<")):
        cell += [" ", Code(maybe_strip(place, no_source))]
    return cell


# -- charts ---------------------------------------------------------------------------------


def _charts(view: _Overview) -> list[Block]:
    try:
        from .charts import charts_blocks  # type: ignore[import-not-found,unused-ignore]
    except ImportError:  # the charts view is optional: the page stands without it
        return []

    def body(rank: RankTrace) -> list[Block]:
        blocks: list[Block] = charts_blocks(view.plan, rank)
        return blocks

    bodies = view.for_ranks(view.trace.ranks, body)
    return [Section([_("Compile time charts")], bodies, anchor="charts")]


# -- failures and restarts ------------------------------------------------------------------


def _failures(view: _Overview) -> list[Block]:
    intro = Paragraph(
        [
            "A ",
            Emphasis("graph break"),
            " is a spot where PyTorch cannot capture the code into its graph: it compiles the "
            "part before, runs the offending code as ordinary Python, then compiles what "
            "follows, which costs speed. A ",
            Emphasis("restart"),
            " is PyTorch starting the analysis of a function over (usually right after a graph "
            "break), and a ",
            Emphasis("compile error"),
            " leaves the function uncompiled. Identical reasons are grouped; the count says how "
            "often each occurred.",
        ]
    )
    bodies = view.for_ranks(view.trace.ranks, lambda r: _failures_of(view, r))
    return [Section([_("Failures and restarts")], [intro, *bodies], anchor="failures-and-restarts")]


def _failures_of(view: _Overview, rank: RankTrace) -> list[Block]:
    groups = summary.failure_groups(rank.compiles)
    if not groups:
        return [Paragraph(["No graph breaks, restarts or compile errors."])]
    counts = graph_breaks.break_counts(groups)
    rows: list[Row] = [
        [_failure_kind(g), _failure_reason(g), [str(g.count)], _failure_places(view, g)]
        for g in groups
    ]
    table = Table(
        [_("Kind"), _("Reason"), _("Count"), _("Compile ids and places")],
        rows,
        widths=[2, 6, 1, 3],
        classes=["torchtrace-failures"],
    )
    return [Paragraph([_break_counts_text(counts) + "."]), table, *_distinct_breaks(view, groups)]


def _distinct_breaks(view: _Overview, groups: Sequence[graph_breaks.EventGroup]) -> list[Block]:
    """Each distinct graph break as structure: its type and registry id (a ``torchtrace``
    object, ``run/GB0025``, declared where the trace first shows it), how often and where,
    the explanation, the hints as a list, what torch chained after it, and its debug context
    folded."""
    items: list[list[Block]] = []
    kinds: dict[str, list[graph_breaks.EventGroup]] = {}
    for g in groups:
        if g.category == "graph_break":
            kinds.setdefault(g.message.first_part.key, []).append(g)
    for rows in kinds.values():
        g = rows[0]
        first = g.message.first_part
        entry: list[Block] = []
        name = break_object_name(view.plan.label, first.key)
        if name not in view.declared:
            view.declared.add(name)
            entry.append(ObjectTarget("gb", name, f"{first.type} ({view.plan.label})"))
        head: list[Inline] = [Strong(first.type)]
        if first.registry_id:
            head += [" (", _registry_link(first), ")"]
        head.append(f": {_plural(sum(r.count for r in rows), 'time')}")
        for row in rows:  # each place of this kind, with its compiles
            head.append(f"; {row.count} at " if len(rows) > 1 else " at ")
            place = row.location or "a place torch did not name"
            head += [Code(maybe_strip(place, view.settings.no_source)) if row.location else place]
            head += [" in ", *view.links(row.compiles)]
        entry.append(Paragraph(head))
        if first.explanation:
            entry.append(Paragraph(["Why: ", *linked(first.explanation)]))
        hints = [h for h in first.hints if not h.lower().startswith("please report")]
        entry.extend(_registry_blocks(view.settings.break_registry, first))
        if hints:
            entry.append(BulletList([[Paragraph(["Hint: ", *linked(h)])] for h in hints]))
        for chained in g.message.parts[1:]:  # caused by the first: never a cause of its own
            then: list[Inline] = ["Then, while handling it: ", Strong(chained.type)]
            if chained.registry_id:
                then += [" (", _registry_link(chained), ")"]
            entry.append(Paragraph(then))
        if first.context:
            entry.append(
                Dropdown(
                    [_("Developer debug context")],
                    [CodeBlock(maybe_strip(first.context, view.settings.no_source), "text")],
                )
            )
        items.append(entry)
    errors = _distinct_errors(view, groups)
    if not items:
        return errors
    intro = Paragraph(
        [
            Strong("Distinct graph breaks"),
            ": each kind once, with what PyTorch says of it and how to avoid it. Each is a ",
            Code("gb"),
            " object of the documentation, named after the trace and its registry id (",
            Code(break_object_name(view.plan.label, "GB0025")),
            "; ",
            Code("gb/<type>--h<digest>"),
            " without one), which your pages can link with the gb role.",
        ]
    )
    return [intro, BulletList(items), *errors]


#: Characters of an error's message the overview folds (its frame page shows it whole).
ERROR_MESSAGE_CHARS = 20_000


def _distinct_errors(view: _Overview, groups: Sequence[graph_breaks.EventGroup]) -> list[Block]:
    """Each distinct compile error (exception type, what torch said, user frame): how
    often, where, and the whole message with its traceback folded."""
    items: list[list[Block]] = []
    for g in groups:
        if g.category != "error":
            continue
        head: list[Inline] = [
            Strong(g.type or "Compile error"),
            ": ",
            *linked(g.message.headline),
            f" ({_plural(g.count, 'time')}",
        ]
        if g.location:
            head += [" at ", Code(maybe_strip(g.location, view.settings.no_source))]
        in_torch = g.events[0].torch_location if g.events else None
        if in_torch:
            shown = maybe_strip(in_torch, view.settings.no_source)
            head += [", raised in library code at ", Code(shown)]
        head += ") in ", *view.links(g.compiles)
        if g.outcome is not None:
            head.append(
                f"; {OUTCOME_WORDS[g.outcome]} (each compile's page says which record shows it)"
            )
        entry: list[Block] = [Paragraph(head)]
        text = g.message.text.strip()
        if text and text != g.message.headline:
            cut = text[:ERROR_MESSAGE_CHARS]  # the frame page has it whole
            note = f"\n... ({len(text) - len(cut)} more characters)" if len(text) > len(cut) else ""
            entry.append(
                Dropdown(
                    [_("The message, with its traceback")],
                    [CodeBlock(maybe_strip(cut, view.settings.no_source) + note, "text")],
                )
            )
        items.append(entry)
    if not items:
        return []
    return [
        Paragraph(
            [
                Strong("Distinct compile errors"),
                ": each once, by exception type, message and user frame.",
            ]
        ),
        BulletList(items),
    ]


def _break_counts_text(counts: graph_breaks.BreakCounts) -> str:
    """``3 graph breaks (2 kinds, 3 places); 1 compile error``: the glance and the table
    alike."""
    parts = []
    if counts.graph_breaks:
        parts.append(
            graph_breaks.counts_text(
                counts.graph_breaks,
                "graph break",
                counts.break_kinds,
                counts.break_places,
                counts.break_unplaced,
            )
        )
    if counts.errors:
        parts.append(
            graph_breaks.counts_text(
                counts.errors,
                "compile error",
                counts.error_kinds,
                counts.error_places,
                counts.error_unplaced,
            )
        )
    if counts.restarts:
        n = counts.restarts
        parts.append(f"{n} restart{'s' if n > 1 else ''} with no graph break")
    return "; ".join(parts) or "none"


def _plural(n: int, noun: str) -> str:
    return f"{n} {noun if n == 1 else noun + 's'}"


def _failure_kind(group: graph_breaks.EventGroup) -> list[Inline]:
    kind: list[Inline] = [summary.FAILURE_KINDS.get(group.category, group.category)]
    if group.type:
        kind += [": ", Code(group.type)]
    if group.outcome is not None:  # what followed, as the log records it
        kind.append(f"; {OUTCOME_WORDS[group.outcome]}")
    return kind


def _failure_reason(group: graph_breaks.EventGroup) -> list[Inline]:
    """The break's type and registry id, what torch chained after it ("then: ..."), the
    explanation and hints of the first part, as sentences of one cell."""
    message = group.message
    parts = message.parts
    reason: list[Inline] = [Strong(parts[0].type if parts else message.headline)]
    if parts and parts[0].registry_id:
        reason += [" (", _registry_link(parts[0]), ")"]
    for chained in parts[1:]:  # caused by the first: never a cause of its own
        reason += [" Then: ", Strong(chained.type)]
        if chained.registry_id:
            reason += [" (", _registry_link(chained), ")"]
    first = parts[0] if parts else None
    if first is not None and first.explanation and group.category == "error":
        reason += [" ", *linked(first.explanation)]  # a break's are listed below the table
    return reason


def _registry_blocks(registry: BreakRegistry | None, part: graph_breaks.BreakPart) -> list[Block]:
    """What the installed torch's graph-break registry says beyond the log: today's name of
    the break where it changed, and the hints the log's message did not give (templates
    with ``{placeholders}`` are left out: the log's concrete hints say them)."""
    variants = registry.get(part.registry_id) if registry is not None else ()
    if not variants:
        return []
    out: list[Block] = []
    names = [v.type for v in variants if v.type != part.type]
    if names and len(variants) == 1:
        out.append(Paragraph(["The installed PyTorch calls it ", Strong(names[0]), "."]))
    logged = set(part.hints)
    extra = [
        h
        for v in variants
        for h in v.hints
        if h not in logged and "{" not in h and not h.lower().startswith("please report")
    ]
    if extra:
        out.append(
            BulletList(
                [
                    [Paragraph(["Hint (PyTorch's registry): ", *linked(h)])]
                    for h in dict.fromkeys(extra)
                ]
            )
        )
    return out


def _registry_link(part: graph_breaks.BreakPart) -> Inline:
    if part.url:
        return Link(part.url, part.registry_id or part.url)
    return Code(part.registry_id or "")


def _failure_places(view: _Overview, group: graph_breaks.EventGroup) -> list[Inline]:
    """The compiles of the row, ``×k`` where one had the break k times: the count adds up."""
    times = Counter(id(e.compile) for e in group.events)
    compiles = group.compiles
    cells = [
        [view.link(c), *([f" ×{times[id(c)]}"] if times[id(c)] > 1 else [])]
        for c in compiles[:CELL_COMPILES]
    ]
    places = joined(cells)
    rest = sum(times[id(c)] for c in compiles[CELL_COMPILES:])
    if rest:
        places.append(f" and {rest} more")
    if group.location:
        places += ["; at ", Code(group.location)]
    return places


# -- recompiles -----------------------------------------------------------------------------


def _recompiles(view: _Overview) -> list[Block]:
    if not any(summary.recompiled_functions(r) for r in view.trace.ranks):  # as the glance
        return []
    limits = summary.recompile_limits(view.configs)
    limit_text = ", later ".join(map(str, limits)) + " in this run" if limits else "8 by default"
    intro = Paragraph(
        [
            "A ",
            Emphasis("recompile"),
            " happens when an already compiled function is called with inputs that fail one of "
            "the checks (guards) recorded when it was compiled, for example a tensor with a new "
            "shape or dtype, so PyTorch compiles one more version of it. Each version costs "
            "compile time; after ",
            Code("recompile_limit"),
            f" versions ({limit_text}) PyTorch compiles no new version of the function: a "
            "call that fits none of its versions runs eagerly. Each row names the earlier "
            "version whose check failed, where the log records it.",
            *_accumulated_limit(view),
        ]
    )
    bodies = view.for_ranks(view.trace.ranks, lambda r: _recompiles_of(view, r))
    return [Section([_("Recompiles explained")], [intro, *bodies], anchor="recompiles-explained")]


def _accumulated_limit(view: _Overview) -> list[Inline]:
    """The other limit, where the run set it below PyTorch's 256: it stops a function too."""
    limits = summary.recompile_limits(view.configs, accumulated=True)
    if not limits or limits == [256]:
        return []
    said = ", later ".join(map(str, limits))
    return [
        " Here ",
        Code("accumulated_recompile_limit"),
        f" ({said} in this run) counts the "
        "versions of all the frames of one code object, and stops them the same way.",
    ]


def _recompiles_of(view: _Overview, rank: RankTrace) -> list[Block]:
    functions = summary.recompiled_functions(rank)
    if not functions:
        return [Paragraph(["No function was recompiled."])]
    blocks: list[Block] = []
    for fn in functions:
        n = len(fn.recompiles)
        versions = max(fn.versions, n + 1)  # a recompile has an earlier version, logged or not
        frame: list[Inline] = [" (", Code(fn.frame_label), ")"] if fn.function else []
        blocks.append(
            Paragraph(
                [
                    Strong(maybe_strip(fn.shown, view.settings.no_source)),
                    *frame,
                    f": {versions} versions"
                    + (
                        f" in {fn.runs} runs of its compile ids (they start again after a reset)"
                        if fn.runs > 1
                        else ""
                    )
                    + f", {n} recompile{'s' if n != 1 else ''}.",
                ]
            )
        )
        rows = [row for rc in fn.recompiles for row in _recompile_rows(view, rc)]
        header = ["New version", "Did not fit", "Failed check (guard)", "In plain words"]
        blocks.append(Table(header, rows, widths=[1, 1, 4, 3]))
    merged = _recompiles_by_reason(view, functions)
    if len(functions) <= RECOMPILE_FUNCTIONS_OPEN:
        return [*merged, *blocks]
    title = f"Each recompile of the {len(functions)} functions, with every failed check"
    return [*merged, Dropdown([title], blocks)]


def _recompiles_by_reason(
    view: _Overview, functions: Sequence[summary.RecompiledFunction]
) -> list[Block]:
    """Identical reasons merged across functions, with counts: thirty functions recompiled
    for one reason are one row, not thirty tables."""
    groups: dict[str, tuple[list[Compile], Counter[str]]] = {}
    for fn in functions:
        for rc in fn.recompiles:
            reason = rc.reasons[0].explanation if rc.reasons else "no reason logged"
            compiles, names = groups.setdefault(reason, ([], Counter()))
            compiles.append(rc.compile)
            names[maybe_strip(fn.shown, view.settings.no_source)] += 1
    rows: list[Row] = []
    for reason, (compiles, names) in sorted(groups.items(), key=lambda kv: -len(kv[1][0])):
        per_function: list[list[Inline]] = [
            [Code(name), f" ×{n}" if n > 1 else ""] for name, n in names.most_common(8)
        ]
        more = f" and {len(names) - 8} more" if len(names) > 8 else ""
        rows.append(
            [[reason], [str(len(compiles))], [*joined(per_function), more], view.links(compiles)]
        )
    header = [
        "Why (the most recent version's failed check)",
        "Recompiles",
        "Functions",
        "New versions",
    ]
    table = Table(header, rows, widths=[4, 1, 3, 3], classes=["torchtrace-recompile-reasons"])
    return [table]


def _recompile_rows(view: _Overview, recompile: summary.Recompile) -> list[Row]:
    if not recompile.reasons:
        return [[[view.link(recompile.compile)], ["—"], ["—"], ["no reason logged"]]]
    rows: list[Row] = []
    for i, reason in enumerate(recompile.reasons[:8]):
        rows.append(
            [
                [view.link(recompile.compile)] if i == 0 else [],
                _previous_cell(view, reason),
                [Code(reason.guard)] if reason.guard else ["—"],
                [reason.explanation],
            ]
        )
    return rows


def _previous_cell(view: _Overview, reason: summary.GuardFailure) -> list[Inline]:
    if reason.previous is not None:
        return [view.link(reason.previous)]
    if reason.previous_label:
        return [Code(reason.previous_label)]
    return ["—"]


# -- compile caches -------------------------------------------------------------------------


def _caches(view: _Overview) -> list[Block]:
    if not any(c.cache_events for c in view.compiles):
        return []
    intro = Paragraph(
        [
            "PyTorch keeps compiled work in caches on disk: the FX graph cache holds Inductor's "
            "generated code, the AOTAutograd cache the traced forward and backward graphs. A ",
            Emphasis("hit"),
            " reuses an earlier result (fast), a ",
            Emphasis("miss"),
            " compiles from scratch and stores the result, and a ",
            Emphasis("bypass"),
            " means the graph could not be cached, so it is compiled every time.",
        ]
    )
    bodies = view.for_ranks(view.trace.ranks, lambda r: _caches_of(view, r))
    return [Section([_("Compile caches")], [intro, *bodies], anchor="compile-caches")]


def _caches_of(view: _Overview, rank: RankTrace) -> list[Block]:
    caches, rows = summary.cache_table(rank.compiles)
    if not rows:
        return [Paragraph(["No cache lookups on this rank."])]
    totals = summary.cache_totals(rank.compiles)
    in_all = ", ".join(f"{n} {result}" for result, n in totals.items())
    if len(totals) == 1:  # every lookup had the same result: one line, not a table of it
        ((result, n),) = totals.items()
        links = view.links([row.compile for row in rows])
        return [
            Paragraph(
                [
                    f"Every lookup was a {result}: {n} lookups in ",
                    ", ".join(caches),
                    f" by {len(rows)} compile{'s' if len(rows) != 1 else ''}: ",
                    *links,
                    ".",
                ]
            )
        ]
    cells: list[Row] = [
        [[view.link(row.compile)]] + [[row.cells.get(cache, "—")] for cache in caches]
        for row in rows
    ]
    table = Table(["Compile id", *caches], cells, classes=["torchtrace-cache"])
    return [Paragraph([f"In all: {in_all}."]), table]


# -- compile time ---------------------------------------------------------------------------


def _times(view: _Overview) -> list[Block]:
    intro = Paragraph(
        [
            "How long compiling took, from the metrics PyTorch logs for each compilation. The "
            "phases nest (the whole frame includes the backend, which includes Inductor, which "
            'includes code generation), so the rows do not add up; "slowest" is the '
            "compilation that spent the most time in that phase."
        ]
    )
    bodies = view.for_ranks(view.trace.ranks, lambda r: _times_of(view, r))
    return [Section([_("Compile time")], [intro, *bodies], anchor="compile-time")]


def _times_of(view: _Overview, rank: RankTrace) -> list[Block]:
    totals = summary.time_totals(rank.compiles)
    blocks: list[Block] = []
    if not totals:
        blocks.append(Paragraph(["No compilation logged its compile time."]))
    else:
        rows: list[Row] = [
            [[t.phase], [seconds_text(t.seconds)], [str(t.compiles)], _slowest_cell(view, t)]
            for t in totals
        ]
        blocks.append(
            Table(
                [_("Phase"), _("Total"), _("Compilations"), _("Slowest")],
                rows,
                widths=[4, 2, 2, 3],
                classes=["torchtrace-times"],
            )
        )
    blocks.extend(_timers(rank))
    return blocks


def _slowest_cell(view: _Overview, total: summary.PhaseTotal) -> list[Inline]:
    if total.slowest is None:
        return ["—"]
    return [view.link(total.slowest), f" ({seconds_text(total.slowest_seconds)})"]


def _timers(rank: RankTrace) -> list[Block]:
    timers = summary.chromium_phase_times(rank)
    if not timers:
        return []
    intro = Paragraph(
        [
            f"PyTorch's own timers (from its chromium events), the {len(timers)} longest in "
            "total; timers nest inside each other, so they overlap."
        ]
    )
    rows: list[Row] = [[[Code(t.name)], [seconds_text(t.seconds)], [str(t.count)]] for t in timers]
    return [intro, Table([_("Timer"), _("Total"), _("Times run")], rows, widths=[4, 2, 1])]


# -- chromium events ------------------------------------------------------------------------


def _timeline(view: _Overview) -> list[Block]:
    if not any(r.chromium_events for r in view.trace.ranks):
        return []
    intro = Paragraph(
        [
            "PyTorch also records its compile phases as trace events in the Chrome format. ",
            WebOnly(
                ["Download the file and open it in "],
                ["The HTML build of these pages offers them as a file to open in "],
            ),
            Link("https://ui.perfetto.dev", "Perfetto"),
            " (or ",
            Code("chrome://tracing"),
            ") to see a timeline of what ran when.",
        ]
    )
    items: list[list[Block]] = []
    alike: dict[int, list[int]] = {}  # ranks without a file of their own, by their class's first
    for rank in view.trace.ranks:
        number = summary.rank_number(view.trace, rank)
        prefix = f"Rank {number}: " if view.multi else ""
        rank_plan = view.plan.rank_plan(rank)
        if rank_plan is not None and view.plan.own_events(rank_plan):
            path = rank_plan.events_path
            count = f"{len(rank.chromium_events)} events"
            file = Download(path, posixpath.basename(path))
            items.append(item(prefix, count, WebOnly([", ", file])))
        elif rank.chromium_events and rank_plan is not None and rank_plan.same_as is not None:
            first = summary.rank_number(view.trace, rank_plan.same_as.rank)
            alike.setdefault(first, []).append(number)
        elif view.multi:
            items.append(item(f"{prefix}no events"))
    for first, numbers in alike.items():
        word = "Rank" if len(numbers) == 1 else "Ranks"
        their = "its" if len(numbers) == 1 else "their"
        items.append(
            item(
                f"{word} {number_ranges(numbers)}, which logged as rank {first} did "
                f"but for {their} times and timing events: in the timeline of all "
                "ranks"
            )
        )
    merged = view.plan.events_all_path
    if merged is not None:
        items.insert(
            0,
            item(
                "All ranks in one timeline (one process per rank)",
                WebOnly([": ", Download(merged, posixpath.basename(merged))]),
            ),
        )
    title = [_("Timeline (chromium events)")]
    return [Section(title, [intro, BulletList(items)], anchor="timeline")]


# -- ranks ----------------------------------------------------------------------------------


def _ranks(view: _Overview) -> list[Block]:
    if not view.multi:
        return []
    intro = Paragraph(
        [
            "This trace holds one log per process (rank) of a distributed job. Ranks usually "
            "compile the same code in the same way; a difference between them often explains a "
            "hang (ranks running different graphs, so their collectives never meet) or one slow "
            "rank (cache misses)."
        ]
    )
    header = [
        "Rank",
        "Log",
        "Size",
        "Compile ids",
        "Statuses",
        "Compile time",
        "Chromium events",
    ]
    rows = [_rank_row(row) for row in summary.rank_rows(view.trace)]
    table: Block = Table(header, rows, widths=[1, 4, 1, 1, 2, 1, 1])
    if len(rows) > RANK_ROWS_SHOWN:  # a thousand ranks: their classes come first
        table = Dropdown([f"Every rank ({len(rows)})"], [table])
    blocks: list[Block] = [
        intro,
        *_rank_classes(view),
        table,
        *_repeating_ranks(view),
        _divergence(view),
    ]
    return [Section([_("Ranks")], blocks, anchor="ranks")]


#: Ranks the overview's table lists unfolded; more are folded (their classes come first).
RANK_ROWS_SHOWN = 32


def _rank_classes(view: _Overview) -> list[Block]:
    """Ranks that logged alike, as classes, first: one line for hundreds of alike ranks, and
    for a class that differs from the first rank, the compiles it differs in (linked to
    its own pages; its other compiles are shown on the earlier rank's pages)."""
    plan = view.plan
    classes: dict[int, list[RankPlan]] = {}
    for r in plan.ranks:
        classes.setdefault(id(r.same_as or r), []).append(r)
    if len(classes) == len(plan.ranks) and not any(f.same_as for f in plan.frames):
        return []  # nothing alike: the table says it all
    first_rank = plan.ranks[0]
    items: list[list[Block]] = []
    for members in classes.values():
        numbers = [summary.rank_number(view.trace, r.rank) for r in members]
        word = "rank" if len(numbers) == 1 else "ranks"
        head: list[Inline] = [Strong(f"{word} {number_ranges(numbers)}")]
        if len(numbers) > 1:
            head.append(f" ({len(numbers)} ranks, alike)")
        own = plan.own_frames(members[0])
        if members[0] is first_rank:
            head.append(": the first rank; the others are compared with it")
        elif not own:
            head.append(f": as {_shown_ranks(view, members[0])} (every compile on their pages)")
        else:
            # the records outside any compilation are no compile: named apart, not counted
            compiles = [f for f in own if not f.compile.id.is_unknown]
            parts: list[list[Inline]] = [
                [ObjectLink("frame", f.name)] for f in compiles[:FRAMES_LISTED]
            ]
            if len(compiles) > FRAMES_LISTED:
                parts.append([f"{len(compiles) - FRAMES_LISTED} more compiles"])
            outside = [f for f in own if f.compile.id.is_unknown]
            if outside:
                parts.append(
                    [ObjectLink("frame", outside[0].name, "its records outside any compilation")]
                )
            head += [": differs in ", *joined(parts, ", ")]
            shared = [
                f
                for f in plan.frames_of(members[0])
                if f.same_as is not None and not f.compile.id.is_unknown
            ]
            if shared:
                head.append(f"; its other compiles as {_shown_ranks(view, members[0])}")
        items.append([*item(*head), *_set_aside(members[0])])
    alike = len(classes) < len(plan.ranks)
    intro = Paragraph(
        [
            f"{len(plan.ranks)} ranks in {len(classes)} "
            f"{'class' if len(classes) == 1 else 'classes'}"
            + (" of ranks that logged alike" if alike else ": no two ranks logged alike")
            + f" (every record compared, the values of metrics and timing events apart; "
            f"{SET_ASIDE}: what was set aside is listed under each class, with an example). "
            "A compile that equals the same compile id of an earlier rank is shown on that "
            "rank's pages; one that differs has pages of its own, which list what differs."
        ]
    )
    return [intro, BulletList(items)]


#: Compiles a rank class lists by name (the rest counted).
FRAMES_LISTED = 12


def _set_aside(first: RankPlan) -> list[Block]:
    """What comparing a class's ranks left out of their records, rule by rule, each with one
    example as the log has it: nothing the rules hide is out of a reader's sight."""
    found = first.set_aside
    if not found:
        return []
    rules = [rule for rule in volatile.RULE_NAMES if rule in found]
    return [BulletList([item(f"Set aside, {rule}: ", Code(found[rule])) for rule in rules])]


def _shown_ranks(view: _Overview, rank_plan: RankPlan) -> str:
    """``rank 0``, ``ranks 0, 3``: the ranks whose pages show this rank's shared compiles."""
    shown = {
        id(f.same_as.rank): f.same_as.rank
        for f in view.plan.frames_of(rank_plan)
        if f.same_as is not None
    }
    numbers = [summary.rank_number(view.trace, r) for r in shown.values()]
    return f"{'rank' if len(numbers) == 1 else 'ranks'} {number_ranges(numbers)}"


def _repeating_ranks(view: _Overview) -> list[Block]:
    """What ranks logged differently in the compiles they share (metrics and timing events,
    never other records): ranks that differ in the same metrics are one line, and one table
    gives each differing value's spread over the ranks, so a thousand ranks cost what one
    does."""
    repeats = [r for r in view.plan.ranks if r.differences]
    if not repeats:
        return []
    lines: dict[tuple[int | None, tuple[str, ...]], list[int]] = {}
    for r in repeats:
        m = summary.rank_number(view.trace, r.same_as.rank) if r.same_as else None
        lines.setdefault((m, tuple(r.differences)), []).append(
            summary.rank_number(view.trace, r.rank)
        )
    items: list[list[Block]] = []
    for (m, differences), numbers in lines.items():
        same = f"same as rank {m}; " if m is not None else ""
        verb = "differs" if len(numbers) == 1 else "differ"
        items.append(
            item(Strong(_ranks_text(numbers)), f": {same}{verb} in " + ", ".join(differences))
        )
    intro = Paragraph(
        [
            "What ranks logged differently in the compiles they share with an "
            "earlier rank (metrics, mostly times):"
        ]
    )
    return [intro, BulletList(items), _value_spreads(view, repeats)]


def _value_spreads(view: _Overview, repeats: Sequence[RankPlan]) -> Block:
    """Each differing value: as the compile's page shows it, and the other ranks' values
    (the lowest and the highest, with their ranks, where they are numbers)."""
    spreads: dict[tuple[str, str, str, str], list[tuple[str, int]]] = {}
    for r in repeats:
        n = summary.rank_number(view.trace, r.rank)
        for v in r.changed_values:
            key = (v.compile, v.record, v.key, v.original)
            if key in spreads or len(spreads) < VALUES_SHOWN:
                spreads.setdefault(key, []).append((v.value, n))
    rows: list[Row] = [
        [[label], [record], [Code(key)], [Code(original)], _spread_cell(values)]
        for (label, record, key, original), values in spreads.items()
    ]
    blocks: list[Block] = [
        Table(
            ["Compile", "Record", "Metric", "On its page", "Other ranks"],
            rows,
            widths=[1, 2, 2, 2, 3],
        )
    ]
    if len(spreads) >= VALUES_SHOWN:
        blocks.append(
            Paragraph(
                [f"The first {VALUES_SHOWN} differing values; the lines above count them all."]
            )
        )
    return Dropdown([f"Values that differ ({len(spreads)})"], blocks)


def _spread_cell(values: Sequence[tuple[str, int]]) -> list[Inline]:
    """``424242 (rank 3)``; ``12.5 (rank 7) to 13.1 (rank 2), 63 ranks``."""
    if len(values) == 1:
        value, n = values[0]
        return [Code(value), f" (rank {n})"]
    numbers = [(_number(v), n) for v, n in values]
    if all(x is not None for x, _ in numbers):
        low = min(range(len(values)), key=lambda i: numbers[i][0] or 0.0)
        high = max(range(len(values)), key=lambda i: numbers[i][0] or 0.0)
        return [
            Code(values[low][0]),
            f" (rank {values[low][1]}) to ",
            Code(values[high][0]),
            f" (rank {values[high][1]}), {len(values)} ranks",
        ]
    distinct = len({v for v, _ in values})
    value, n = values[0]
    return [
        f"{len(values)} ranks, {distinct} value{'s' if distinct != 1 else ''}, such as ",
        Code(value),
        f" (rank {n})",
    ]


def _number(text: str) -> float | None:
    try:
        return float(text)
    except ValueError:
        return None


def _rank_row(row: summary.RankRow) -> Row:
    statuses = ", ".join(f"{row.statuses[s]} {s}" for s in STATUS_LEGEND if row.statuses.get(s))
    return [
        [str(row.number)],
        [Code(row.rank.path)],
        [log_size_text(row.rank)],
        [f"{row.compile_ids} ({row.attempts} attempt{'' if row.attempts == 1 else 's'})"],
        [statuses or "—"],
        [seconds_text(row.seconds)],
        [str(row.chromium_events)],
    ]


def _ranks_text(numbers: Sequence[int]) -> str:
    word = "rank" if len(numbers) == 1 else "ranks"
    return f"{word} {number_ranges(numbers)}"  # a thousand ranks: runs, ``0-511, 513``


def _divergence(view: _Overview) -> Block:
    d = summary.divergence(view.trace)
    if not d.any:
        return Paragraph(
            [
                "No divergence: every rank compiled the same functions under the same compile "
                "ids, with the same statuses, "
                "the same cache hits and misses, graphs of the same input shapes issuing the "
                "same collectives in the same order, and the same schedules where Inductor "
                "logged them."
            ]
        )
    kinds: list[list[Block]] = []
    if d.missing_ids:
        details = [item(*_missing_ids(m)) for m in d.missing_ids]
        kinds.append(
            item(Strong("Diverging compile ids"), ": not every rank compiled the same functions.")
            + [BulletList(details)]
        )
    if d.function_splits:
        details = [item(*_function_split(s)) for s in d.function_splits[:20]]
        kinds.append(
            item(
                Strong("Different functions under one compile id"),
                ": the ranks compiled different code under the same number, so their "
                "pages of that compile id are not comparable.",
            )
            + [BulletList(details)]
        )
    if d.status_splits:
        details = [item(*_status_split(s)) for s in d.status_splits[:20]]
        kinds.append(
            item(Strong("Diverging statuses"), ": the same compile id ended differently.")
            + [BulletList(details)]
        )
    if d.cache_groups:
        kinds.append(
            _rank_groups(
                view,
                [
                    Strong("Diverging cache hit/miss patterns"),
                    ": ranks grouped by identical sequences of lookups.",
                ],
                d.cache_groups,
            )
        )
    if d.shape_groups:
        kinds.append(
            _rank_groups(
                view,
                [
                    Strong("Diverging graph shapes"),
                    ": ranks grouped by the input shapes and dtypes their graphs were compiled "
                    "for (ranks running graphs of different shapes often explain a hang).",
                ],
                d.shape_groups,
            )
        )
    for label, groups in d.collective_groups.items():
        kinds.append(
            _rank_groups(
                view,
                [
                    Strong("Collectives parity"),
                    f" of {label} (",
                    *_first_frame(view, label),
                    "): ranks grouped by the collectives their graph issues, in order, with "
                    "shapes and arguments. Ranks whose collectives differ in order or shape "
                    "exchange the wrong tensors, or hang.",
                ],
                groups,
            )
        )
    for name, groups in d.schedule_groups.items():
        kinds.append(
            _rank_groups(
                view,
                [
                    Strong(f"Diverging {summary.SCHEDULE_TITLES.get(name, name)}"),
                    " (",
                    Code(name),
                    "): ranks grouped by identical payloads.",
                ],
                groups,
                aside=True,
            )
        )
    if d.runtime_differs:
        spreads = [
            item(
                Code(s.label),
                f": {s.delta_ns / 1e6:.3f} ms between rank {s.fastest} "
                f"({s.fastest_ns / 1e6:.3f} ms) and rank {s.slowest} "
                f"({s.slowest_ns / 1e6:.3f} ms)",
            )
            for s in d.runtimes
            if s.delta_ns > 0
        ]
        kinds.append(
            item(
                Strong("Diverging runtime estimates"),
                ": Inductor's estimate of each graph's runtime, fastest and slowest rank.",
            )
            + [BulletList(spreads)]
        )
    return Admonition("warning", [Paragraph(["The ranks diverge."]), BulletList(kinds)])


def _first_frame(view: _Overview, label: str) -> list[Inline]:
    """The first rank's frame of a compile id, linked."""
    found = next((c for c in view.trace.ranks[0].compiles if c.label == label), None)
    return [view.link(found)] if found is not None else [Code(label)]


def _rank_groups(
    view: _Overview,
    head: list[Inline],
    groups: Sequence[summary.RankGroup],
    aside: bool = False,
) -> list[Block]:
    """One kind of divergence: what it is, then each group of ranks with what it says
    (``Ranks 0-2: ...``, or ``Ranks 0-2 (...)`` with ``aside``), and where a group differs
    from the first, its first rank's frames that differ, linked."""
    by_number = {summary.rank_number(view.trace, r): r for r in view.trace.ranks}

    def line(g: summary.RankGroup) -> list[Inline]:
        ranks = _ranks_text(g.ranks).capitalize()
        out: list[Inline] = [f"{ranks} ({g.description})" if aside else f"{ranks}: {g.description}"]
        rank = by_number.get(g.ranks[0]) if g.ranks else None
        frames = [c for c in rank.compiles if c.label in g.labels] if rank is not None else []
        if frames:
            out += [f"; rank {g.ranks[0]}'s ", *view.links(frames)]
        return out

    return item(*head) + [BulletList([item(*line(g)) for g in groups])]


def _missing_ids(missing: summary.MissingIds) -> list[Inline]:
    out = joined([[Code(label)] for label in missing.labels[:12]])
    if len(missing.labels) > 12:
        out.append(f" and {len(missing.labels) - 12} more")
    out.append(f": missing on {_ranks_text(missing.missing_on)}")
    return out


def _function_split(split: summary.FunctionSplit) -> list[Inline]:
    parts: list[list[Inline]] = [
        [Code(name), f" on {_ranks_text(numbers)}"]
        for name, numbers in split.ranks_by_function.items()
    ]
    return [Code(split.label), ": ", *joined(parts, "; ")]


def _status_split(split: summary.StatusSplit) -> list[Inline]:
    by_status = "; ".join(
        f"{status} on {_ranks_text(numbers)}" for status, numbers in split.ranks_by_status.items()
    )
    return [Code(split.label), f": {by_status}"]


# -- export ---------------------------------------------------------------------------------


def _export(view: _Overview) -> list[Block]:
    exporting = [r for r in view.trace.ranks if not r.export.empty]
    if not exporting:
        return []
    intro = Paragraph(
        [
            Code("torch.export"),
            " captures a whole program as one graph ahead of time. In draft-export mode it "
            "records the problems it worked around instead of stopping at the first one; each "
            "issue below must be fixed (or the behavior accepted) before a strict export "
            "succeeds.",
        ]
    )
    no_source = view.settings.no_source
    bodies = view.for_ranks(exporting, lambda r: _export_of(r, no_source))
    return [Section([_("Export report")], [intro, *bodies], anchor="export-report")]


def _export_of(rank: RankTrace, no_source: bool) -> list[Block]:
    blocks = _export_issues(rank, no_source)
    blocks.extend(_unbacked_symbols(rank, no_source))
    guards = len(rank.export.guards_added)
    if guards:
        verb = "s were" if guards != 1 else " was"
        blocks.append(Paragraph([f"{guards} guard{verb} added while exporting."]))
    programs = summary.exported_programs(rank)
    for i, program in enumerate(programs, 1):
        which = f" ({i} of {len(programs)})" if len(programs) > 1 else ""
        blocks.append(Paragraph([f"The exported program{which}:"]))
        blocks.append(CodeBlock(maybe_strip(program, no_source), "python"))
    return blocks


def _export_issues(rank: RankTrace, no_source: bool) -> list[Block]:
    issues = summary.export_issues(rank)
    if not issues:
        return [Paragraph(["No issues were found."])]
    rows: list[Row] = [
        [
            [i.kind],
            [Code(i.reason)] if i.reason else ["—"],
            [i.detail or "—"],
            [Code(_location(i, no_source))] if i.location else ["—"],
        ]
        for i in issues
    ]
    plural = "s" if len(issues) != 1 else ""
    table = Table(
        [_("Issue"), _("Expression or operator"), _("Detail"), _("Where")],
        rows,
        widths=[2, 3, 2, 4],
        classes=["torchtrace-export"],
    )
    return [Paragraph([f"{len(issues)} issue{plural} found."]), table]


def _unbacked_symbols(rank: RankTrace, no_source: bool) -> list[Block]:
    symbols = summary.unbacked_symbols(rank)
    if not symbols:
        return []
    intro = Paragraph(
        [
            "Unbacked symbols are sizes or values known only when the program runs (from ",
            Code(".item()"),
            ", ",
            Code("nonzero()"),
            " and the like):",
        ]
    )
    items = []
    for s in symbols:
        content: list[Inline] = [Code(s.symbol)]
        if s.value_range:
            content += [", range ", Code(s.value_range)]
        if s.location:
            content += [", from ", Code(_location(s, no_source))]
        items.append(item(*content))
    return [intro, BulletList(items)]


def _location(found: summary.ExportIssue | summary.UnbackedSymbol, no_source: bool) -> str:
    """An export location; with ``:no-source:``, without the user's source line it quotes."""
    return (found.place if no_source else found.location) or ""


# -- helpers --------------------------------------------------------------------------------


def seconds_text(value: float | None) -> str:
    """``1.234 s``, or a dash where nothing (or nothing a compile could take) was logged."""
    seconds = plausible(value, MAX_SECONDS * 1e3)  # sums of many compiles' times
    return "—" if seconds is None else f"{seconds:.3f} s"


#: The sections in page order, by their ``:sections:`` key.
_SECTIONS: list[tuple[str, Callable[[_Overview], list[Block]]]] = [
    ("header", _header),
    ("legend", _legend),
    ("trie", _trie),
    ("directory", _directory),
    ("charts", _charts),
    ("failures", _failures),
    ("recompiles", _recompiles),
    ("cache", _caches),
    ("times", _times),
    ("runtime", lambda view: runtime.overview_section(view.plan, view.link, view.for_ranks)),
    ("chromium", _timeline),
    ("ranks", _ranks),
    ("export", _export),
]
