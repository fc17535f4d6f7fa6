"""How a compile differs from the same compile id on the first rank that logged it."""

from __future__ import annotations

from ...blocks import Code, Inlines, ObjectLink, Paragraph, Section, Table, place_link
from ...rank_sharing import SET_ASIDE
from ...words import _
from .view import FrameView, artifact_anchor


def section(view: FrameView) -> Section | None:
    """How this compile differs from the same compile id on the first rank that logged it:
    the reason it has pages of its own, each differing graph linked where this page shows
    it (the alike ones are shown once, on that rank's pages)."""
    other = view.frame.counterpart
    if other is None:
        return None
    where = view.frame.counterpart_label
    intro = Paragraph(
        [
            f"{where.split(' ')[0]} compiled the same compile id (",
            ObjectLink("frame", other.name),
            "), and this rank logged it differently, so this compile has pages of its own. "
            f"Graphs and kernels that are alike ({SET_ASIDE}) are shown once, on its "
            "pages; what differs:",
        ]
    )
    graphs = {g.name[len(view.frame.name) + 1 :]: g for g in view.frame.graphs}
    rows: list[list[Inlines]] = []
    for what, detail in view.frame.differences:
        graph = graphs.get(what)
        name: Inlines = [Code(what)]
        if graph is not None and graph.numbers_of is not None:
            name = [view.anchor_link(artifact_anchor(graph.artifact), what)]
        elif graph is not None and graph.same_as is None:
            name = [place_link(graph.docname, graph.anchor, what)]
        rows.append([name, [detail]])
    if not rows:
        rows.append([["—"], [f"only its metrics and times ({SET_ASIDE})"]])
    table = Table([f"What differs from {where}", "How"], rows, widths=[2, 3])
    return Section([_("Compared with the first rank")], [intro, table], anchor="across-ranks")
