"""Fast HTML for the big code blocks of generated pages: Sphinx's literal-block visitor.

Checked against Sphinx 7.0 to 9.0.  Touches: the HTML5 translator's
``visit_literal_block`` (overridden for ``nodes.literal_block``, falling back to
Sphinx's own for every block we did not mark) and the wrapper Sphinx writes
around highlighted code (``div.highlight-<lang> > div.highlight > pre``), which
themes and copy buttons rely on.  Blocks marked with :data:`FAST_CLASS` are
highlighted by :mod:`sphinx_torchtrace.render.highlight`; if Sphinx changes
the wrapper, the blocks still show, only the themes' colors may differ.
Non-HTML builders are untouched.
"""

from __future__ import annotations

from typing import Any

from docutils import nodes
from sphinx.application import Sphinx
from sphinx.writers.html5 import HTML5Translator

from ...render.highlight import FAST_LANGUAGES, highlight_fast

FAST_CLASS = "torchtrace-fast"
#: Builders whose readers may run no script: every line highlighted in the page.
_EAGER_BUILDERS = frozenset({"epub", "epub3"})


def visit_literal_block(self: HTML5Translator, node: nodes.literal_block) -> None:
    if FAST_CLASS not in node.get("classes", ()) or node.rawsource != node.astext():
        HTML5Translator.visit_literal_block(self, node)
        return
    language = str(node.get("language", "none"))
    if language not in FAST_LANGUAGES:
        language = "none"  # a huge block in another language: plain text
    highlight_args: dict[str, Any] = node.get("highlight_args", {})
    inner = highlight_fast(
        node.rawsource,
        language,
        bool(node.get("linenos")),
        highlight_args.get("linenostart", 1),
        highlight_args.get("hl_lines") or (),
        lazy=self.builder.name not in _EAGER_BUILDERS,
    )
    starttag = self.starttag(node, "div", suffix="", CLASS=f"highlight-{language} notranslate")
    self.body.append(starttag + inner + "</div>\n")
    raise nodes.SkipNode


def depart_literal_block(self: HTML5Translator, node: nodes.literal_block) -> None:
    HTML5Translator.depart_literal_block(self, node)


def setup_fast_code(app: Sphinx) -> None:
    app.add_node(
        nodes.literal_block,
        override=True,
        html=(visit_literal_block, depart_literal_block),
    )
