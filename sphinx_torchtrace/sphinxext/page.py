"""``.. torchtrace-page::``: the one directive of every generated stub.

The stub names no input and holds no trace text: the directive finds what its page
stands for by the document's own name in this build's registry (:mod:`.built`),
whatever the kind of input, and asks it for the page's nodes (built from blocks by
:mod:`.doctree`, page title included).  Sphinx then treats the page as any other
document: search index, ``objects.inv``, every builder, ``-j``.
"""

from __future__ import annotations

from docutils import nodes
from sphinx.util.docutils import SphinxDirective

from .built import built
from .warnings import PAGE, warn


class TorchTracePage(SphinxDirective):
    """The page this generated document stands for, built from the model."""

    optional_arguments = 1  # the page's kind, for a reader of the stub

    def run(self) -> list[nodes.Node]:
        docname = self.env.docname
        generated = built(self.env).pages.get(docname)
        if generated is None:
            warn(PAGE, f"no input of this build has a page {docname!r}", self.get_location())
            return []
        return generated.page_nodes(self, docname)  # read again by content: see .built
