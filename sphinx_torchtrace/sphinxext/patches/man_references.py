"""A link inside a man page prints as its text, not as ``text <#fragment>``.

A man page is one document: Sphinx resolves every link between its pages (an
anchor, a frame's badge, a page) to ``#fragment`` or to nothing, and its own man
writer prints such a link as plain text.  From docutils 0.22, docutils' man
translator sets ``visit_reference`` on each instance, which hides Sphinx's method:
every internal link came out as ``15 functions <#compile-directory>`` (in roff,
``\\%<#\\:compile-directory>``; sphinx-doc/sphinx#14427).  Links to the web keep
docutils' ``text <url>``.

Checked against Sphinx 9.0 with docutils 0.22 (older docutils has no such method,
and this does nothing there).  Touches: nothing of Sphinx's; a post-transform of the
``man`` builder turns internal ``reference`` nodes (``refid``, or a ``refuri`` that is
empty or a ``#fragment``) into ``inline`` nodes with the same children, only where
docutils' translator is of the kind that hides Sphinx's method
(``_visit_reference_no_macro``).  If Sphinx fixes it, this still prints what Sphinx
would, unstyled.
"""

from __future__ import annotations

from typing import Any

from docutils import nodes
from docutils.writers import manpage
from sphinx.application import Sphinx
from sphinx.transforms.post_transforms import SphinxPostTransform

#: docutils' man translator sets ``visit_reference`` per instance (0.22 on).
SHADOWED = hasattr(manpage.Translator, "_visit_reference_no_macro")


def internal(node: nodes.reference) -> bool:
    """A link to somewhere in the same man page (Sphinx resolves other pages there too)."""
    uri = node.get("refuri")
    return bool(node.get("refid")) or (uri is not None and (not uri or uri.startswith("#")))


class ManInternalLinks(SphinxPostTransform):
    builders = ("man",)
    default_priority = 900  # after references are resolved (10) and everything else

    def run(self, **kwargs: Any) -> None:
        if not SHADOWED:
            return
        for node in list(self.document.findall(nodes.reference)):
            if internal(node):
                node.replace_self(nodes.inline("", "", *node.children))


def setup_man_references(app: Sphinx) -> None:
    app.add_post_transform(ManInternalLinks)
