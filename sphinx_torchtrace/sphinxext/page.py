"""``.. torchtrace-page::``: the one directive of every generated stub.

The stub names no trace and holds no trace text: the directive finds its page
by the document's own name in this build's registry (:mod:`.generate`), asks
the site layer for the page's blocks and turns them into nodes
(:mod:`.doctree`), page title included.  Sphinx then treats the page as any
other document: search index, ``objects.inv``, every builder, ``-j``.
"""

from __future__ import annotations

from docutils import nodes
from sphinx.util.docutils import SphinxDirective
from sphinx.util.nodes import make_id

from ..site import blocks as b
from ..site.pages import build_page
from .debug_dir import debug_page_nodes
from .diff_directive import diff_page_nodes
from .doctree import DoctreeBuilder, chart_node
from .domain import TorchTraceDomain
from .generate import GeneratedTrace, page_registry
from .provenance import provenance_nodes
from .warnings import warn

PAGE_KINDS = ("overview", "frame", "graph", "kernel")


class TorchTracePage(SphinxDirective):
    """The page this generated document stands for, built from the trace model."""

    optional_arguments = 1  # the page's kind, for a reader of the stub

    def run(self) -> list[nodes.Node]:
        docname = self.env.docname
        generated = page_registry(self.env).get(docname)
        if generated is None:
            debug_nodes = debug_page_nodes(self, docname)  # a TORCH_COMPILE_DEBUG folder's
            if debug_nodes is not None:
                return debug_nodes
            diff_nodes = diff_page_nodes(self, docname)  # a torchtrace-diff frame page
            if diff_nodes is not None:
                return diff_nodes
            warn("page", f"no trace of this build has a page {docname!r}", self.get_location())
            return []
        for log in generated.logs:
            self.env.note_dependency(str(log))
        page = build_page(generated.plan, docname, generated.settings)
        if page.orphan:
            self.env.metadata[docname]["orphan"] = True
        builder = DoctreeBuilder(
            self.env,
            self.state.document,
            generated.rewrite,
            special=lambda block: self._special(generated, builder, block),
        )
        section = builder.section(page.title, page.blocks, "page")
        self.set_source_info(section)
        return [section]

    def _special(
        self, generated: GeneratedTrace, builder: DoctreeBuilder, block: object
    ) -> list[nodes.Node]:
        """Blocks that need more of Sphinx than a node: objects, charts, provenance."""
        if isinstance(block, b.ObjectTarget):
            return [object_target(self, block)]
        if isinstance(block, b.Chart):
            from ..render import charts

            node = chart_node(svg=charts.draw(block.kind, block.data, builder.line(block.title)))
            node.extend(builder.blocks(block.fallback))
            return [node]
        if isinstance(block, b.Provenance):
            return provenance_nodes(self, generated, block.frame, block.fallback, block.view)
        raise TypeError(f"no nodes for {type(block).__name__}")


def object_target(directive: SphinxDirective, block: b.ObjectTarget) -> nodes.target:
    """Declares a ``torchtrace`` object where it stands (an anchor, and ``objects.inv``)."""
    document = directive.state.document
    node_id = make_id(directive.env, document, f"torchtrace-{block.objtype}", block.name)
    target = nodes.target("", "", ids=[node_id])
    document.note_explicit_target(target)
    domain = directive.env.get_domain("torchtrace")
    assert isinstance(domain, TorchTraceDomain)
    domain.note_object(block.objtype, block.name, node_id, block.status, target)
    return target
