"""What LaTeX needs of generated pages: every trace prints, whatever it holds.

TeX stops on a code line of tens of thousands of characters (a compile config
logged as one JSON string: "TeX capacity exceeded, grouping levels=255"), and
pdflatex on characters no font sets up.  Long lines of the extension's code
blocks are cut into pieces TeX can wrap, and long blocks to their first
:data:`MAX_LINES` lines with a note of what was left out, for LaTeX only; unknown
characters print as a question mark through ``static/sphinxtorchtrace.sty``.

The extension's tables print their headings whole: ``tabulary`` shrinks every column
of a wide table alike, and TeX then hyphenated one-word headings ("Sta-tus",
"Compi-lations").  Each table is put in the ``torchtrace-table`` class (Sphinx's
``sphinxuseclass`` hook, so the user's own tables are untouched), whose definition in
the ``.sty`` keeps headings from hyphenating and no column narrower than a heading
word needs; the first column of a table of facts is its headings (a stub column).
"""

from __future__ import annotations

from typing import Any

from docutils import nodes
from sphinx.application import Sphinx
from sphinx.transforms.post_transforms import SphinxPostTransform

#: The class of every code block the extension makes.
CODE_CLASS = "torchtrace-code"
#: Longest line TeX is given; longer ones are cut (TeX's verbatim wrapping nests groups).
MAX_LINE = 2000
#: Lines of one code block a PDF prints: a real trace's generated code runs to thousands of
#: lines per frame, which no reader pages through and TeX cannot hold ("TeX capacity
#: exceeded", "Dimension too large" for a box taller than 5 metres).
MAX_LINES = 150


def excerpt(text: str, limit: int = MAX_LINES) -> tuple[str, int]:
    """The first ``limit`` lines of ``text``, and how many were left out."""
    lines = text.split("\n")
    if len(lines) <= limit:
        return text, 0
    return "\n".join(lines[:limit]), len(lines) - limit


def cut_long_lines(text: str, limit: int = MAX_LINE) -> str:
    if all(len(line) <= limit for line in text.split("\n")):
        return text
    out: list[str] = []
    for line in text.split("\n"):
        out.extend(line[i : i + limit] for i in range(0, max(len(line), 1), limit))
    return "\n".join(out)


#: The class of every table the extension makes, and of the LaTeX environment around it.
TABLE_CLASS = "torchtrace-table"
#: A table of facts, ``Label | value`` (the overview's header): the labels are headings.
FACTS_CLASS = "torchtrace-header"


class LatexTables(SphinxPostTransform):
    """Each table of the extension in its class's environment, told its column count
    (``tabulary`` allows no column minimum above the page width over the columns)."""

    builders = ("latex",)
    default_priority = 400

    def run(self, **kwargs: Any) -> None:
        for table in list(self.document.findall(nodes.table)):
            parent = table.parent
            if TABLE_CLASS not in table["classes"] or not isinstance(parent, nodes.Element):
                continue
            group = next(iter(table.findall(nodes.tgroup)), None)
            if group is None:
                continue
            colspecs = [c for c in group.children if isinstance(c, nodes.colspec)]
            if FACTS_CLASS in table["classes"] and colspecs:
                colspecs[0]["stub"] = 1
            columns = nodes.raw(
                "", f"\\sphinxtorchtracecolumns{{{len(colspecs) or 1}}}\n", format="latex"
            )
            # the targets just before it go in with it: LaTeX writes their labels with the
            # table's (a target followed by anything else writes them again)
            at = parent.index(table)
            start = at
            while start > 0 and isinstance(parent[start - 1], nodes.target):
                start -= 1
            moved = parent.children[start : at + 1]
            wrapper = nodes.container("", classes=[TABLE_CLASS])
            parent[start : at + 1] = [wrapper]  # not replace_self: the table keeps its ids
            wrapper += [columns, *moved]


class LatexLongLines(SphinxPostTransform):
    builders = ("latex",)
    default_priority = 400

    def run(self, **kwargs: Any) -> None:
        for node in list(self.document.findall(nodes.literal_block)):
            if CODE_CLASS not in node["classes"]:
                continue
            text = node.astext()
            head, left_out = excerpt(text)
            cut = cut_long_lines(head)
            if cut is not text:
                node.children[:] = [nodes.Text(cut)]
                node.rawsource = cut
            if cut is not head or left_out:
                node["highlight_args"] = {}  # line numbers and emphasis count the old lines
                node["linenos"] = False
            if left_out:
                note = nodes.paragraph(
                    "",
                    f"... {left_out} more lines are left out of the printed version; "
                    "the HTML build of these pages, and the log itself, have the whole text.",
                )
                node.parent.insert(node.parent.index(node) + 1, note)


def setup_latex(app: Sphinx) -> None:
    app.add_post_transform(LatexLongLines)
    app.add_post_transform(LatexTables)
