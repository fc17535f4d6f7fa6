"""The overview page of a trace: what tlparse's index shows, and what it leaves to work out.

Figures come from ``trace/analyses/`` (a module per question: ``glance``, ``recompiles``,
``caches``, ``phases``, ``divergence`` ...); this package only lays them out as
blocks, section by section in page order, each section shown when ``:sections:`` asks for it.
Several ranks get one body per rank in synchronized tabs, so switching the rank in
one section switches it everywhere on the page.

One module per section, in :data:`SECTIONS`: each lays out the blocks of its section."""

from __future__ import annotations

from collections.abc import Callable

from ....trace.analyses.naming import compiled_function
from ...blocks import (
    AnchorLink,
    Badge,
    Block,
    Code,
    Inline,
    Page,
    Paragraph,
    Section,
    Table,
    Toctree,
)
from ...plan import PageSettings, TracePlan
from ...words import _
from .. import runtime
from ..cudagraphs import cudagraphs_overview_blocks
from . import (
    caches,
    charts,
    compile_time,
    directory,
    export,
    failures,
    header,
    legend,
    ranks,
    recompiles,
    timeline,
    times,
    trie,
)
from .directory import function_cell, places_by_name
from .glance import triage_blocks as triage_blocks  # the trace directive's glance
from .header import introduction
from .view import Overview, Row


def overview_page(plan: TracePlan, settings: PageSettings) -> Page:
    """The overview page of a trace: its sections in page order, then the frames' toctree."""
    view = Overview(plan, settings)
    glance = triage_blocks(plan, settings) if "glance" in view.wanted else []
    blocks: list[Block] = [*glance, introduction()]
    for key, section in SECTIONS:
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
    outside += [plan.vllm_docname] if plan.vllm_docname else []
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
            "compile of its function",
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
    functions = [compiled_function(p.rank.rank, p.compile) for p in plan.past_limit]
    places = places_by_name(functions)
    for p, function in zip(plan.past_limit, functions, strict=True):
        cell = function_cell(function, places, False)
        row: Row = [[Code(p.compile.label)], cell, [Badge(p.compile.status)]]
        rows.append([[p.rank.name or "—"], *row] if multi else row)
    header = [*(["Rank"] if multi else []), "Compile id", "Function", "Status"]
    table = Table(header, rows, classes=["torchtrace-past-limit"])
    return [Section([_("Frames past the limit")], [intro, table], anchor="frames-past-the-limit")]


#: The sections in page order, by their ``:sections:`` key.
SECTIONS: list[tuple[str, Callable[[Overview], list[Block]]]] = [
    ("header", header.section),
    ("legend", legend.section),
    ("trie", trie.section),
    ("directory", directory.section),
    ("charts", charts.section),
    ("failures", failures.section),
    ("recompiles", recompiles.section),
    ("cache", caches.section),
    ("times", compile_time.section),  # shown with the times: the same figures, by source
    ("times", times.section),
    ("runtime", lambda view: runtime.overview_section(view.plan, view.link, view.for_ranks)),
    ("chromium", timeline.section),
    ("ranks", ranks.section),
    ("export", export.section),
]
