"""A trace's PDF prints its answers, not its payloads.

A trace's pages hold the answers (the overview, each compile's status, failures,
recompile reasons) and the payloads behind them: graphs, generated code, guard dumps,
metrics and config records, thousands of lines per compile.  Printed whole they made
hundreds of pages per trace that no reader pages through.  With
``torchtrace_latex_payloads = "summary"`` (the default) each code block of the
extension longer than :data:`PRINT_LINES` lines or :data:`PRINT_BYTES` bytes is
printed as one line instead: its size, and the page and anchor of the HTML build
that shows it (a link where ``html_baseurl`` is set).  Code in the sections that
hold an answer (failures, restarts, why a function compiled again) is printed
anyway, cut to its first lines like every block (:mod:`.latex`).  ``"all"`` prints
every block, cut the same way: TeX cannot hold a block of thousands of lines.
"""

from __future__ import annotations

from typing import Any

from docutils import nodes
from sphinx import addnodes
from sphinx.application import Sphinx
from sphinx.transforms.post_transforms import SphinxPostTransform

from ..site.artifacts import size_text
from .config import torchtrace_config
from .fold import FOLD_CLASS, PRINTED_PREFIX
from .latex import CODE_CLASS

#: Longest code block printed in full.
PRINT_LINES = 40
#: Largest code block printed in full (a few lines of a minified JSON record).
PRINT_BYTES = 4096
#: Ids of the sections whose code is an answer: printed whatever its size.
ANSWER_SECTIONS = frozenset(
    {"failures", "failures-and-restarts", "changed", "recompiles", "recompiles-explained"}
)


def is_payload(text: str) -> bool:
    """Too long to print in full in a summary PDF."""
    return text.count("\n") + 1 > PRINT_LINES or len(text.encode("utf-8")) > PRINT_BYTES


class LatexPayloads(SphinxPostTransform):
    """Each large code block outside the answers, as a line saying where to read it."""

    builders = ("latex",)
    default_priority = 390  # before LatexLongLines cuts what stays

    def run(self, **kwargs: Any) -> None:
        if torchtrace_config(self.config).latex_payloads != "summary":
            return
        suffix = self.config.html_file_suffix or ".html"
        base = (self.config.html_baseurl or "").rstrip("/")
        pages = _pages(self.document)
        for block in list(self.document.findall(nodes.literal_block)):
            if CODE_CLASS not in block["classes"] or block.parent is None:
                continue
            text = block.astext()
            if not is_payload(text) or _in_answer(block):
                continue
            docname, anchor = _place(block, pages, self.env.docname)
            where = docname + suffix + (f"#{anchor}" if anchor else "")
            lines = text.count("\n") + 1
            note = nodes.paragraph(
                "",
                f"{lines:,} lines ({size_text(len(text.encode('utf-8')))}), not printed: "
                "the HTML build of these pages shows them at ",
            )
            if base:
                url = f"{base}/{where}"
                note += nodes.reference(url, url, refuri=url)
            else:
                note += nodes.literal(where, where)
            note += nodes.Text(".")
            note.source, note.line = block.source, block.line
            block.replace_self(note)


def _pages(document: nodes.document) -> dict[int, str]:
    """Each page's docname, by the node its top nodes still name as their parent.

    LaTeX's one tree puts each page's nodes in a ``start_of_file`` without telling them:
    their ``parent`` is still the page's own document node.
    """
    pages: dict[int, str] = {}
    for page in document.findall(addnodes.start_of_file):
        for child in page.children:
            if child.parent is not None and child.parent is not page:
                pages[id(child.parent)] = str(page["docname"])
    return pages


def _in_answer(node: nodes.Node) -> bool:
    parent = node.parent
    while parent is not None:
        if isinstance(parent, nodes.section) and ANSWER_SECTIONS & set(parent["ids"]):
            return True
        parent = parent.parent
    return False


def _place(node: nodes.Node, pages: dict[int, str], root_doc: str) -> tuple[str, str]:
    """The page holding ``node`` and the nearest anchor at or before it on that page."""
    anchor = ""
    child, parent = node, node.parent
    while parent is not None:
        if isinstance(parent, addnodes.start_of_file):
            return str(parent["docname"]), anchor
        if id(parent) in pages:
            return pages[id(parent)], anchor
        if not anchor:
            anchor = _anchor_of(parent, parent.index(child))
        child, parent = parent, parent.parent
    return root_doc, anchor


def _anchor_of(parent: nodes.Element, at: int) -> str:
    """An id of ``parent`` that leads to its child at ``at``: a target just before the
    child (a fold's, printed as a rubric), a fold's own, or a section's."""
    for sibling in reversed(parent.children[:at]):
        if isinstance(sibling, nodes.target) and _html_ids(sibling):
            return _html_ids(sibling)[0]
    if isinstance(parent, nodes.section) or (
        isinstance(parent, nodes.container) and FOLD_CLASS in parent["classes"]
    ):
        return next(iter(_html_ids(parent)), "")
    return ""


def _html_ids(node: nodes.Element) -> list[str]:
    """The node's ids that the HTML build has too (not those made for print alone)."""
    return [str(i) for i in node["ids"] if not str(i).startswith(PRINTED_PREFIX)]


def setup_latex_payloads(app: Sphinx) -> None:
    app.add_post_transform(LatexPayloads)
