"""Long names break inside the PDF's margin.

Trace text is full of single "words" TeX cannot break: kernel names
(``cpp_fused__adaptive_avg_pool2d__native_batch_norm_legit_no_training_relu_1``),
qualified names, paths, sha256 digests, exception class names.  TeX hyphenates
neither ``_`` nor a digest nor a word in typewriter type, so such a word runs past
the margin of a table cell or of the page ("Overfull \\hbox").  In the extension's
pages, a long word of text gets break points, for LaTeX only: after its separators
(``_ . / : , ; = - ) ]``), before a capital that follows a small letter
(``Torch|Runtime|Error``), and every few characters of a long run of letters and
digits that holds a digit (a digest).  A break point is ``\\sphinxtorchtracebreak``
(``static/sphinxtorchtrace.sty``): a place TeX may break a line, printing nothing, so
the PDF's text and its bookmarks read as the log wrote it.  English words are left
to TeX's hyphenation; the user's own pages are untouched.
"""

from __future__ import annotations

import re

from docutils import nodes
from sphinx import addnodes
from sphinx.application import Sphinx
from sphinx.writers.latex import LaTeXTranslator

from ..site.naming import generated_prefix
from .config import torchtrace_config
from .doctree import OUTPUT_MARK

#: Words shorter than this are left whole: they fit the narrowest column.
MIN_WORD = 10
#: A run of letters and digits holding a digit (a digest) may break every this many characters.
CHUNK = 8
_WORD = re.compile(rf"\S{{{MIN_WORD},}}")
_AFTER = "_./:,;=-)]"
_RUN = re.compile(rf"[A-Za-z0-9]{{{CHUNK + 4},}}")
#: In a table cell's code, a run of letters this long or longer may break every
#: :data:`CELL_CHUNK` characters: an eight-column table's columns hold 9 characters of code.
CELL_CHUNK = 6
_CELL_RUN = re.compile(rf"[A-Za-z0-9]{{{CELL_CHUNK + 3},}}")
#: Text under these is printed as written (verbatim, raw, math), or is no text.
_SKIP = (nodes.FixedTextElement, nodes.raw, nodes.math, nodes.target, addnodes.index)


class word_break(nodes.Inline, nodes.Element):  # noqa: N801 - docutils names nodes so
    """A place a line may break inside a word, printing nothing (LaTeX only)."""

    def astext(self) -> str:
        return ""


def break_points(word: str, narrow: bool = False) -> list[int]:
    """Offsets inside ``word`` where a line may break; ``narrow``: a name in a table cell,
    which may be a narrow column: any run of letters may break too."""
    points = {i + 1 for i, c in enumerate(word[:-1]) if c in _AFTER}
    points |= {i for i in range(1, len(word)) if word[i - 1].islower() and word[i].isupper()}
    for run in _RUN.finditer(word):
        if any(c.isdigit() for c in run.group()):
            points |= set(range(run.start() + CHUNK, run.end() - 2, CHUNK))
    if narrow:  # each piece between those points, cut again where it is long
        bounds = sorted({0, len(word), *points})
        for start, end in zip(bounds, bounds[1:], strict=False):
            for run in _CELL_RUN.finditer(word, start, end):
                points |= set(range(run.start() + CELL_CHUNK, run.end() - 2, CELL_CHUNK))
    return sorted(p for p in points if 0 < p < len(word))


def split_text(text: str, narrow: bool = False) -> list[str]:
    """``text`` in the pieces between its break points (one piece if it has none)."""
    pieces: list[str] = []
    start = 0
    for word in _WORD.finditer(text):
        for point in break_points(word.group(), narrow):
            pieces.append(text[start : word.start() + point])
            start = word.start() + point
    pieces.append(text[start:])
    return pieces


def add_word_breaks(app: Sphinx, document: nodes.document, docname: str) -> None:
    """doctree-resolved, last: break points in the long words of the extension's pages and
    directive output, once every link's text is made (a frame role's names its trace)."""
    if app.builder.format != "latex":
        return
    prefix = generated_prefix(torchtrace_config(app.config).generated_dir)
    # walked from the top, not up from each text: LaTeX's one tree, and nodes some passes
    # copy, leave children whose ``parent`` is another node, or none
    stack: list[tuple[nodes.Element, bool, bool]] = [
        (root, False, False) for root in _ours(document, prefix)
    ]
    while stack:
        element, in_cell, in_code = stack.pop()
        if isinstance(element, _SKIP):
            continue
        in_cell = in_cell or isinstance(element, nodes.entry)
        in_code = in_code or isinstance(element, nodes.literal)
        for at in reversed(range(len(element.children))):
            child = element.children[at]
            if isinstance(child, nodes.Element):
                stack.append((child, in_cell, in_code))
            elif isinstance(child, nodes.Text):
                pieces = split_text(str(child), narrow=in_cell and in_code)
                if len(pieces) > 1:
                    element[at : at + 1] = _with_breaks(pieces)


def _with_breaks(pieces: list[str]) -> list[nodes.Node]:
    out: list[nodes.Node] = []
    for piece in pieces:
        if out:
            out.append(word_break())
        out.append(nodes.Text(piece))
    return out


def _ours(document: nodes.document, prefix: str) -> list[nodes.Element]:
    """The generated pages (each is a ``start_of_file`` in LaTeX's one tree) and what the
    directives put on the user's pages, outermost only."""
    found: list[nodes.Element] = []
    stack: list[nodes.Node] = [document]
    while stack:
        node = stack.pop()
        if not isinstance(node, nodes.Element):
            continue
        if (
            isinstance(node, addnodes.start_of_file)
            and str(node.get("docname", "")).startswith(prefix)
        ) or node.get(OUTPUT_MARK):
            found.append(node)
        else:
            stack.extend(node.children)
    return found


def _visit_break(self: LaTeXTranslator, node: word_break) -> None:
    self.body.append(r"\sphinxtorchtracebreak{}")
    raise nodes.SkipNode


def setup_word_breaks(app: Sphinx) -> None:
    app.add_node(word_break, latex=(_visit_break, None))
    app.connect("doctree-resolved", add_word_breaks, priority=950)
