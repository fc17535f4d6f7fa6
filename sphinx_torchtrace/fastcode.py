"""Fast HTML for the big code blocks of generated pages.

Graphs, guards and generated code are most of a trace, and Pygments formats
them at about 1 MB/s: a 36 MB trace spent more time highlighting than
everything else together.  Blocks the templates mark with the class
``torchtrace-fast`` are written here instead: FX graphs highlighted by one
regular-expression pass over the escaped text (same Pygments CSS classes, so
every theme colors them), other languages as plain escaped text.  Output
mirrors Sphinx's (``div.highlight-<lang>`` > ``div.highlight`` > ``pre``, inline
line numbers), so themes and copy buttons see no difference.  Other blocks,
and every non-HTML builder, are untouched.
"""

from __future__ import annotations

import html
import re

from docutils import nodes
from sphinx.application import Sphinx
from sphinx.writers.html5 import HTML5Translator

FAST_CLASS = "torchtrace-fast"

# The FX lexer's shapes, matched on HTML-escaped text (quotes are left as they are).
_FX_TOKENS = re.compile(
    r"(?P<c1>\#[^\n]*)"
    r'|(?P<s>"[^"\n]*"|\'[^\'\n]*\')'
    r"|(?P<nv>(?<=\n)[ \t]+[A-Za-z_]\w*(?=: |\s=\s))"
    r"|(?P<nf>\b(?:torch|aten|prims|operator|_operator)\.[\w.]+)"
    r"|(?P<k>\b(?:def|class|return|None|True|False|import|from|self)\b)"
    r"|(?P<m>\b\d+(?:\.\d+)?(?:e[+-]?\d+)?\b)"
)


def _fx_span(match: re.Match[str]) -> str:
    kind = match.lastgroup or "m"
    text = match.group()
    if kind == "nv":
        stripped = text.lstrip()
        return f'{text[: len(text) - len(stripped)]}<span class="nv">{stripped}</span>'
    return f'<span class="{kind}">{text}</span>'


def _diff_line(line: str) -> str:
    kind = _DIFF_CLASSES.get(line[:1]) if not line.startswith(("+++", "---")) else "gh"
    if line.startswith("@@"):
        kind = "gu"
    return f'<span class="{kind}">{line}</span>' if kind else line


_DIFF_CLASSES = {"+": "gi", "-": "gd"}


def highlight_fast(text: str, language: str, linenos: bool, first_line: int = 1) -> str:
    """The inner HTML of a code block: ``<div class="highlight"><pre>...</pre></div>``."""
    escaped = html.escape(text.rstrip("\n"), quote=False)
    if language == "torchtrace-fx":
        escaped = _FX_TOKENS.sub(_fx_span, "\n" + escaped)[1:]
    elif language == "diff":
        escaped = "\n".join(_diff_line(line) for line in escaped.split("\n"))
    if linenos:
        lines = escaped.split("\n")
        width = len(str(first_line + len(lines) - 1))
        escaped = "\n".join(
            f'<span class="linenos">{n:>{width}}</span>{line}'
            for n, line in enumerate(lines, first_line)
        )
    return f'<div class="highlight"><pre><span></span>{escaped}\n</pre></div>\n'


def visit_literal_block(self: HTML5Translator, node: nodes.literal_block) -> None:
    if FAST_CLASS not in node.get("classes", ()) or node.rawsource != node.astext():
        HTML5Translator.visit_literal_block(self, node)
        return
    language = str(node.get("language", "none"))
    if language not in FAST_LANGUAGES:
        language = "none"  # a huge Python or C++ block: plain text
    highlight_args: dict[str, int] = node.get("highlight_args", {})
    first = highlight_args.get("linenostart", 1)
    inner = highlight_fast(node.rawsource, language, bool(node.get("linenos")), first)
    starttag = self.starttag(node, "div", suffix="", CLASS=f"highlight-{language} notranslate")
    self.body.append(starttag + inner + "</div>\n")
    raise nodes.SkipNode


def depart_literal_block(self: HTML5Translator, node: nodes.literal_block) -> None:
    HTML5Translator.depart_literal_block(self, node)


def is_fast(language: str, size: int) -> bool:
    """Whether a block is written here: FX graphs, plain text and JSON, and huge blocks."""
    return language in FAST_LANGUAGES or size > FAST_ABOVE


#: Languages written without Pygments (the FX lexer's shapes, or no highlighting at all).
FAST_LANGUAGES = frozenset({"torchtrace-fx", "text", "none", "json", "diff"})
#: Any block longer than this (characters) is written without Pygments.
FAST_ABOVE = 200_000


def setup_fast_code(app: Sphinx) -> None:
    app.add_node(
        nodes.literal_block,
        override=True,
        html=(visit_literal_block, depart_literal_block),
    )
