"""The views of generated pages: a trace's plan in, a :class:`~..blocks.Page` out.

One module per page kind; each reads the model and the plan and says, as plain
blocks, what its page shows.  Nothing here knows Sphinx or any markup.
"""

from __future__ import annotations

from ...trace.analyses.naming import rank_number
from ...trace.analyses.rank_digest import number_ranges
from ..blocks import AnchorLink, Block, ObjectTarget, Page, Paragraph, object_targets
from ..plan import FramePlan, GraphPlan, KernelPlan, PageSettings, TracePlan
from ..rank_sharing import SET_ASIDE


def build_page(plan: TracePlan, docname: str, settings: PageSettings) -> Page:
    """The page at ``docname`` (KeyError if the plan has no such page), declaring also the
    objects it stands for (an identical graph's, a repeating rank's)."""
    page = _page(plan, docname, settings)
    shared = object_targets(plan.shared_objects(docname))
    if shared:
        page.blocks[:0] = shared
    frame, item = plan.page_of(docname)
    if frame is not None and item is None:
        at = next((i for i, b in enumerate(page.blocks) if not isinstance(b, ObjectTarget)), 0)
        page.blocks[at:at] = _repeating_ranks_note(plan, frame)
    return page


def _repeating_ranks_note(plan: TracePlan, frame: FramePlan) -> list[Block]:
    """On a frame page that later ranks' same compile repeats: which ranks it stands for."""
    repeats = plan.repeats_of(frame)
    if not repeats:
        return []
    numbers = [rank_number(plan.trace, f.rank) for f in repeats]
    one = len(numbers) == 1
    who = f"rank {numbers[0]}: it" if one else f"ranks {number_ranges(numbers)}: they"
    what = "these records" if frame.compile.id.is_unknown else "this compile"
    return [
        Paragraph(
            [
                f"Also {who} logged the same for {what} "
                f"({SET_ASIDE}), so this page stands for {'its' if one else 'theirs'} (what "
                f"{'it' if one else 'they'} logged "
                "differently, metrics and times, is under ",
                AnchorLink(plan.index_docname, "ranks", "Ranks"),
                ").",
            ]
        )
    ]


def _page(plan: TracePlan, docname: str, settings: PageSettings) -> Page:
    if docname == plan.vllm_docname:
        from .vllm import vllm_page

        return vllm_page(plan, settings)
    frame, item = plan.page_of(docname)
    if frame is None:
        from .overview import overview_page

        return overview_page(plan, settings)
    if isinstance(item, GraphPlan):
        from .graph import graph_page

        return graph_page(plan, frame, item, settings)
    if isinstance(item, KernelPlan):
        from .kernel import kernel_page

        return kernel_page(plan, frame, item, settings)
    from .frame import frame_page

    return frame_page(plan, frame, settings)
