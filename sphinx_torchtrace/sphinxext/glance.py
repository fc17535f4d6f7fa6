"""The answer at a glance, once per output document.

The directive shows a trace's glance where it stands, and the trace's overview page
opens with the same lines.  A builder that binds the pages into one document (LaTeX,
man, Texinfo, single-page HTML) inlines the overview right after the directive, and
printed the glance twice in a row; there the overview's copy is the one kept (its
lines link into its sections).
"""

from __future__ import annotations

from typing import Any

from docutils import nodes
from sphinx import addnodes
from sphinx.application import Sphinx
from sphinx.transforms.post_transforms import SphinxPostTransform

#: A node attribute on the directive's glance (its lead-in and its lines): the docname of
#: the overview page that repeats it.  Not rendered.
GLANCE_OF = "torchtrace_glance_of"


class GlanceOnce(SphinxPostTransform):
    default_priority = 5

    def run(self, **kwargs: Any) -> None:
        bound = {n.get("docname") for n in self.document.findall(addnodes.start_of_file)}
        if not bound:
            return  # one page per document: the glance is said once on each
        for node in list(self.document.findall(nodes.Element)):
            if node.get(GLANCE_OF) in bound and node.parent is not None:
                node.parent.remove(node)


def setup_glance(app: Sphinx) -> None:
    app.add_post_transform(GlanceOnce)
