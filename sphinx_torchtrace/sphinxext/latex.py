"""What LaTeX needs of generated pages: every trace prints, whatever it holds.

TeX stops on a code line of tens of thousands of characters (a compile config
logged as one JSON string: "TeX capacity exceeded, grouping levels=255"), and
pdflatex on characters no font sets up.  Long lines of the extension's code
blocks are cut into pieces TeX can wrap, for LaTeX only; unknown characters
print as a question mark through ``static/sphinxtorchtrace.sty``.
"""

from __future__ import annotations

from typing import Any

from docutils import nodes
from sphinx.transforms.post_transforms import SphinxPostTransform

#: The class of every code block the extension makes.
CODE_CLASS = "torchtrace-code"
#: Longest line TeX is given; longer ones are cut (TeX's verbatim wrapping nests groups).
MAX_LINE = 2000


def cut_long_lines(text: str, limit: int = MAX_LINE) -> str:
    if all(len(line) <= limit for line in text.split("\n")):
        return text
    out: list[str] = []
    for line in text.split("\n"):
        out.extend(line[i : i + limit] for i in range(0, max(len(line), 1), limit))
    return "\n".join(out)


class LatexLongLines(SphinxPostTransform):
    builders = ("latex",)
    default_priority = 400

    def run(self, **kwargs: Any) -> None:
        for node in self.document.findall(nodes.literal_block):
            if CODE_CLASS not in node["classes"]:
                continue
            text = node.astext()
            cut = cut_long_lines(text)
            if cut is not text:
                node.children[:] = [nodes.Text(cut)]
                node.rawsource = cut
                node["highlight_args"] = {}  # line numbers and emphasis count the old lines
                node["linenos"] = False
