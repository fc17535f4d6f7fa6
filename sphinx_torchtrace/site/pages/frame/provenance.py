"""The side-by-side view of what each operator became."""

from __future__ import annotations

from ....trace.analyses.provenance import provenance_views
from ...blocks import AnchorLink, Block, Inline, ObjectLink, Paragraph, Provenance, Section, Strong
from ...words import _
from .view import FrameView

PROVENANCE_TEXT = (
    "The pre-grad graph, the post-grad graph and the generated code side by side: hover or "
    "click a line to see where it came from and what it became; in a pane, the arrow keys "
    "step through the linked lines."
)


def section(view: FrameView) -> Section | None:
    """The side-by-side view of every node mapping that links anything: a training compile
    logs the forward's and the backward's, each shown (tlparse shows the last one only)."""
    c = view.compile
    linked = [i for i, v in enumerate(provenance_views(c)) if not v.empty]
    if not linked:  # no node mapping logged, or none that links anything
        return None
    title = [_("Provenance: what each operator became")]
    copy = view.plan.provenance_copy(view.frame)
    if copy is not None:  # a recompile of the same graphs: the view is the earlier one's
        same: list[Inline] = [
            "The node mappings, graphs and code are ",
            ObjectLink("frame", copy.name),
            "'s, text for text: see ",
            AnchorLink(copy.docname, "provenance", "its provenance view"),
            ".",
        ]
        return Section(title, [Paragraph(same)], anchor="provenance")
    blocks: list[Block] = [Paragraph([PROVENANCE_TEXT])]
    training = bool(c.artifacts_named("aot_backward_graph"))
    names = (
        ["Forward", "Backward"]
        if len(linked) == 2 and training
        else [f"Mapping {n + 1}" for n in range(len(linked))]
    )
    for name, index in zip(names, linked, strict=True):
        if len(linked) > 1:
            blocks.append(Paragraph([Strong(name)]))
        blocks.append(Provenance(view.frame.name, view=index))
    return Section(title, blocks, anchor="provenance")
