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
from sphinx import addnodes
from sphinx.application import Sphinx
from sphinx.transforms.post_transforms import SphinxPostTransform
from sphinx.writers.html5 import HTML5Translator

from .patches.compat import builder_format

FOLD_CLASS = "torchtrace-fold"
#: A fold attribute: printed after its page's own sections (``Dropdown.print_last``).
PRINT_LAST = "torchtrace_print_last"
#: The id of a printed-last fold that had none: no HTML page has it.
PRINTED_PREFIX = "torchtrace-printed-"


class fold(nodes.General, nodes.Element):  # noqa: N801 - docutils names nodes in lowercase
    """A folded block: a :class:`fold_title`, then the content; ``open``: shown opened."""


class fold_title(nodes.TextElement):  # noqa: N801
    """The always visible line of a fold (HTML ``<summary>``); it carries the fold's anchor."""


class FoldFallback(SphinxPostTransform):
    """Every builder but HTML's: the title as a rubric, the content under it.

    The fold's anchors (its title's, and the objects declared just before it) go on a
    target before the rubric: LaTeX writes no label for a rubric's or a container's ids,
    and a link to a fold would be an undefined reference in the PDF.  A fold marked
    :data:`PRINT_LAST` becomes a section after its page's own sections, and a line at
    its place says where it went.
    """

    default_priority = 5

    def run(self, **kwargs: Any) -> None:
        if builder_format(self) == "html":
            return
        for number, node in enumerate(list(self.document.findall(fold))):
            if node.get(PRINT_LAST) and _print_last(node, f"{PRINTED_PREFIX}{number}"):
                continue
            replaced: list[nodes.Node] = []
            for child in node.children:
                if isinstance(child, fold_title):
                    ids = [*_unlabeled(node), *child["ids"]]
                    if ids:
                        replaced.append(nodes.target("", "", ids=ids))
                    rubric = nodes.rubric("", "", *child.children)
                    rubric.source, rubric.line = child.source, child.line
                    replaced.append(rubric)
                else:
                    replaced.append(child)
            node.replace_self(nodes.container("", *replaced, classes=[FOLD_CLASS]))


def _unlabeled(node: fold) -> list[str]:
    """The fold's own ids but those a target just before it names (docutils moved them
    here from it, and it writes their label itself)."""
    named: set[str] = set()
    parent = node.parent
    at = parent.index(node) if parent is not None else 0
    while parent is not None and at > 0:
        before = parent[at - 1]
        if not isinstance(before, nodes.target):
            break
        named.add(before.get("refid", ""))
        at -= 1
    return [i for i in node["ids"] if i not in named]


def _print_last(node: fold, new_id: str) -> bool:
    """The fold as the last section of its page but for the sections holding other pages
    (a book inlines them there); False where it is in no section (it stays a fold)."""
    page = node.parent
    while page is not None and not isinstance(page, nodes.section):
        page = page.parent
    if page is None or not node.children or not isinstance(node[0], fold_title):
        return False
    title = node[0]
    ids = [*_unlabeled(node), *title["ids"]] or [new_id]
    section = nodes.section("", nodes.title("", "", *title.deepcopy().children), ids=ids)
    section.extend(node.children[1:])
    at = next(
        (
            i
            for i, child in enumerate(page.children)
            if isinstance(child, nodes.Element) and _holds_pages(child)
        ),
        len(page.children),
    )
    page.insert(at, section)
    link = nodes.reference("", "", *title.children, internal=True, refid=ids[0])
    said = nodes.Text(" follows the other sections, below.")
    node.replace_self(nodes.paragraph("", "", link, said))
    return True


def _holds_pages(node: nodes.Element) -> bool:
    """A part of a page listing other pages (a toctree), or holding them once a book
    inlines them there (LaTeX, man, Texinfo)."""
    return any(
        True
        for _ in node.findall(lambda n: isinstance(n, (addnodes.toctree, addnodes.start_of_file)))
    )


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
    self.body.append(
        self.starttag(node, "summary", "", CLASS=f"{FOLD_CLASS}-title", ids=list(outer))
    )


def _depart_title(self: HTML5Translator, node: fold_title) -> None:
    self.body.append("</summary>\n")


def setup_folds(app: Sphinx) -> None:
    app.add_node(fold, html=(_visit_fold, _depart_fold))
    app.add_node(fold_title, html=(_visit_title, _depart_title))
    app.add_post_transform(FoldFallback)
