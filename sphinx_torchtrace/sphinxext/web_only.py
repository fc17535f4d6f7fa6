"""Words only a web page can keep true (a download), chosen per builder.

A page is read once and written by every builder, but only HTML builders copy
downloads (``download_support``; an EPUB has none either): elsewhere "the whole
text is a download" names a file the reader does not have.  A
:class:`~sphinx_torchtrace.site.blocks.WebOnly` piece becomes a :class:`web_only`
node holding both wordings; before references are resolved, each builder keeps the
one its reader gets (a PDF: the log's line number, or nothing).
"""

from __future__ import annotations

from typing import Any

from docutils import nodes
from sphinx.application import Sphinx
from sphinx.transforms.post_transforms import SphinxPostTransform

from .patches.compat import builder_has_downloads


class web_only(nodes.General, nodes.Element):  # noqa: N801 - docutils names nodes so
    """Two children, each an ``inline`` (in a paragraph) or a ``container`` (of blocks):
    what a builder with downloads shows, then what the others show.  Never written."""


def choice(web: nodes.Element, printed: nodes.Element) -> web_only:
    return web_only("", web, printed)


class ChooseWebOnly(SphinxPostTransform):
    """Each :class:`web_only` becomes the wording of the running builder (or nothing)."""

    default_priority = 1  # before references are resolved (10): the other wording's go too

    def run(self, **kwargs: Any) -> None:
        keep = 0 if builder_has_downloads(self) else 1
        for node in list(self.document.findall(web_only)):
            chosen = node.children[keep] if len(node.children) > keep else None
            kept = list(chosen.children) if isinstance(chosen, nodes.Element) else []
            node.replace_self(kept)


def setup_web_only(app: Sphinx) -> None:
    app.add_node(web_only)
    app.add_post_transform(ChooseWebOnly)
