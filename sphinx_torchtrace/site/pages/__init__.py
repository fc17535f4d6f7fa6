"""The views of generated pages: a trace's plan in, a :class:`~..blocks.Page` out.

One module per page kind; each reads the model and the plan and says, as plain
blocks, what its page shows.  Nothing here knows Sphinx or any markup.
"""

from __future__ import annotations

from ..blocks import Page
from ..plan import GraphPlan, KernelPlan, PageSettings, TracePlan


def build_page(plan: TracePlan, docname: str, settings: PageSettings) -> Page:
    """The page at ``docname`` (KeyError if the plan has no such page)."""
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
