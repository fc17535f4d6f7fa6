"""The page of one compile: what was compiled, how it went, and why.

The reader arrives from the overview or from a recompile and wants, in order: the
outcome, the facts, why it compiled again, what failed, where it was compiled from,
the metrics, and every artifact in pipeline order.  Trace text goes into blocks as
plain text; nothing here writes markup.

One module per section, in :data:`SECTIONS`: each lays out the blocks of its section
from a :class:`~.view.FrameView`."""

from __future__ import annotations

from collections.abc import Callable

from ....trace.analyses import compare
from ....trace.analyses.naming import function_label
from ...blocks import Block, Inline, Lines, ObjectTarget, Page, PageLink, Section, Toctree
from ...plan import TITLE_SEPARATOR, FramePlan, PageSettings, TracePlan
from .. import runtime
from ..autotuning import autotuning_section
from ..cudagraphs import cudagraphs_section, text_log_section
from ..regions import regions_section
from ..workers import workers_section
from . import (
    across_ranks,
    artifacts,
    caches,
    changed,
    failures,
    header,
    kernels,
    metrics,
    provenance,
    shapes,
    stack,
)
from .folds import FOLDED_TABLE_ROWS as FOLDED_TABLE_ROWS
from .folds import FOLDS_LISTED as FOLDS_LISTED
from .folds import folded_if_many as folded_if_many
from .view import FrameView


def frame_page(plan: TracePlan, frame: FramePlan, settings: PageSettings) -> Page:
    """The page of one compile (one attempt or occurrence of a compile id)."""
    c = frame.compile
    view = FrameView(plan, frame, settings, compare.previous_compile(frame.rank, c))
    blocks: list[Block] = [
        *(ObjectTarget("frame", name, status) for name, status in plan.frame_objects(frame)),
        *_neighbour_links(view),
        header.status_paragraph(view),
        header.fact_lines(view),
    ]
    for section in SECTIONS:
        shown = section(view)
        if shown is not None:
            blocks.append(shown)
    blocks.extend(_neighbour_links(view))
    if settings.detail_toctree and (frame.graphs or frame.kernels):
        # Graph and kernel pages are orphans in HTML (a light sidebar); builders that
        # assemble one document (LaTeX, singlehtml) need them in a toctree.
        docnames = [g.docname for g in frame.graphs if g.has_page]
        docnames += [k.docname for k in frame.kernels if k.has_page]
        blocks.append(Toctree(docnames, hidden=True))
    title = plan.frame_title(frame, function_label(frame.rank, c))
    # [-/-] is no compilation: linked from the overview, in a toctree only where one
    # document holds every page (LaTeX)
    listed = plan.in_sidebar(frame, settings.sidebar_limit)
    orphan = not listed and not (c.id.is_unknown and settings.detail_toctree)
    return Page(frame.docname, [title], blocks, orphan=orphan)


def _neighbour_links(view: FrameView) -> list[Block]:
    """Previous and next frame pages in compile order, and the way back to the overview."""
    before, after = view.plan.neighbours(view.frame)
    parts: list[Inline] = [PageLink(view.plan.index_docname, f"{view.plan.label} overview")]
    if before is not None:
        parts += [" · previous: ", PageLink(before.docname, _short_title(view.plan, before))]
    if after is not None:
        parts += [" · next: ", PageLink(after.docname, _short_title(view.plan, after))]
    return [Lines([parts], classes=["torchtrace-prev-next"])]


def _short_title(plan: TracePlan, frame: FramePlan) -> str:
    """A neighbour as its sidebar names it, without the trace's label (the page has it)."""
    return plan.frame_title(frame, function_label(frame.rank, frame.compile)).split(
        TITLE_SEPARATOR, 1
    )[-1]


#: The sections after the facts, in page order: short answers first (failure headlines,
#: figures, what was made), long blocks after.
SECTIONS: list[Callable[[FrameView], Section | None]] = [
    lambda view: text_log_section(view.frame.rank),
    failures.section,
    across_ranks.section,
    changed.section,  # the answers (what failed, why it compiled again) first
    metrics.section,
    lambda view: autotuning_section(view.plan, view.frame),
    lambda view: runtime.frame_section(view.plan, view.frame),
    lambda view: cudagraphs_section(view.compile),
    artifacts.section,
    lambda view: regions_section(view.plan, view.frame),
    lambda view: workers_section(view.plan, view.frame),
    kernels.section,
    provenance.section,
    stack.section,
    shapes.section,
    caches.section,
]
