"""Folds: a title that opens its content (``<details>`` in HTML), the extension's own node.

Generated pages fold every graph, kernel and small artifact of a compile, a thousand
folds on a big trace; sphinx-design's dropdown draws each with an inline SVG chevron and
card markup (about 600 bytes a fold), so folds are a node of their own, drawn in a few
tags and styled by ``sphinx-torchtrace.css``.  Builders of other formats get the title as
a rubric and the content below it.
"""

from __future__ import annotations

from typing import Any

from docutils import nodes
from sphinx.application import Sphinx
from sphinx.transforms.post_transforms import SphinxPostTransform
from sphinx.writers.html5 import HTML5Translator

from .patches.compat import builder_format

FOLD_CLASS = "torchtrace-fold"


class fold(nodes.General, nodes.Element):  # noqa: N801 - docutils names nodes in lowercase
    """A folded block: a :class:`fold_title`, then the content; ``open``: shown opened."""


class fold_title(nodes.TextElement):  # noqa: N801
    """The always visible line of a fold (HTML ``<summary>``); it carries the fold's anchor."""


class FoldFallback(SphinxPostTransform):
    """Every builder but HTML's: the title as a rubric, the content under it."""

    default_priority = 5

    def run(self, **kwargs: Any) -> None:
        if builder_format(self) == "html":
            return
        for node in list(self.document.findall(fold)):
            replaced: list[nodes.Node] = []
            for child in node.children:
                if isinstance(child, fold_title):
                    rubric = nodes.rubric("", "", *child.children, ids=child["ids"])
                    rubric.source, rubric.line = child.source, child.line
                    replaced.append(rubric)
                else:
                    replaced.append(child)
            # the fold's own ids (an object declared just before it) stay anchors
            container = nodes.container("", *replaced, classes=[FOLD_CLASS], ids=node["ids"])
            node.replace_self(container)


def _visit_fold(self: HTML5Translator, node: fold) -> None:
    """``<details>``, its attributes written out (``open="open"``): XML too (EPUB's XHTML).

    Its ids (the objects declared just before it, which docutils moves onto it) are
    written by its title: an element before ``<summary>`` would take the summary's place.
    """
    opened = ' open="open"' if node.get("open") else ""
    self.body.append(f'<details class="{FOLD_CLASS}"{opened}>')


def _depart_fold(self: HTML5Translator, node: fold) -> None:
    self.body.append("</details>\n")


def _visit_title(self: HTML5Translator, node: fold_title) -> None:
    """``<summary>`` with its anchor, and its fold's (see :func:`_visit_fold`)."""
    outer = node.parent["ids"] if isinstance(node.parent, fold) else []
    self.body.append(self.starttag(node, "summary", "", CLASS=f"{FOLD_CLASS}-title",
                                   ids=list(outer)))


def _depart_title(self: HTML5Translator, node: fold_title) -> None:
    self.body.append("</summary>\n")


def setup_folds(app: Sphinx) -> None:
    app.add_node(fold, html=(_visit_fold, _depart_fold))
    app.add_node(fold_title, html=(_visit_title, _depart_title))
    app.add_post_transform(FoldFallback)
