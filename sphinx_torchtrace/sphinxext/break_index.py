"""``.. torchtrace-graph-breaks::``: every distinct graph break of every trace of the project.

Each trace's overview declares its distinct breaks as ``gb`` objects of the domain
(``run/GB0025``, ``run/gb/<type>``); this page lists them all, grouped by break,
once every page has been read (the objects of all traces are known only then), so the
directive leaves a placeholder that ``doctree-resolved`` fills.  The page is read
again on every build: the traces may have changed without it.
"""

from __future__ import annotations

from docutils import nodes
from sphinx.application import Sphinx
from sphinx.util.docutils import SphinxDirective
from sphinx.util.nodes import make_refnode

from .built import built
from .domain import TorchTraceDomain


class graph_break_index(nodes.General, nodes.Element):  # noqa: N801 - docutils node naming
    """Where the list of all graph breaks goes."""


class GraphBreakIndex(SphinxDirective):
    def run(self) -> list[nodes.Node]:
        self.env.note_reread()
        node = graph_break_index()
        self.set_source_info(node)
        return [node]


def fill_index(app: Sphinx, doctree: nodes.document, docname: str) -> None:
    """doctree-resolved: the placeholder becomes a list, one item per distinct break (its
    registry id or type), each naming the traces that hit it.  A generated page (or a book
    bound from generated pages, whose toctrees list only generated pages) has none: its
    tree is not walked."""
    if docname in built(app.env).pages:
        return
    placeholders = list(doctree.findall(graph_break_index))
    if not placeholders:
        return
    domain = app.env.get_domain("torchtrace")
    assert isinstance(domain, TorchTraceDomain)
    by_break: dict[str, list[tuple[str, str, str, str]]] = {}
    for (objtype, name), (target_doc, node_id, title) in sorted(domain.objects.items()):
        if objtype == "gb":
            tail = name.rsplit("/", 1)[-1]
            key = f"gb/{tail}" if name.endswith(f"/gb/{tail}") else tail
            by_break.setdefault(key, []).append((name, target_doc, node_id, title))
    for placeholder in placeholders:
        if not by_break:
            placeholder.replace_self(
                nodes.paragraph("", "No trace of this project logged a graph break.")
            )
            continue
        items = nodes.bullet_list(bullet="-")
        for key, objects in sorted(by_break.items()):
            title = objects[0][3].rsplit(" (", 1)[0]
            para = nodes.paragraph("", "", nodes.strong("", title), nodes.Text(f" ({key}): "))
            for i, (name, target_doc, node_id, _title) in enumerate(objects):
                if i:
                    para += nodes.Text(", ")
                para += make_refnode(
                    app.builder, docname, target_doc, node_id, nodes.literal("", name), name
                )
            items += nodes.list_item("", para)
        placeholder.replace_self(items)


def setup_break_index(app: Sphinx) -> None:
    app.add_node(graph_break_index)
    app.add_directive("torchtrace-graph-breaks", GraphBreakIndex)
    app.connect("doctree-resolved", fill_index)
