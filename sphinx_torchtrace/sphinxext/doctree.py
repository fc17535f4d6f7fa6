"""Blocks to docutils nodes: the one place where a page view becomes a doctree.

Every string of a :mod:`~sphinx_torchtrace.site.blocks` tree becomes a
``nodes.Text`` or the content of a literal block: nothing is handed to a
parser, so a log's string cannot turn into markup.  On the way, each string
passes the configured path rewrites and loses the characters no output format
can hold (control characters, lone surrogates).  Links become the nodes
Sphinx's own roles make (``pending_xref`` for pages, anchors and ``torchtrace``
objects, ``download_reference`` for files), so every builder resolves them.
"""

from __future__ import annotations

import html
import posixpath
import re
from collections.abc import Callable, Iterable, Sequence
from typing import Any, TypeVar

from docutils import nodes
from sphinx import addnodes
from sphinx.environment import BuildEnvironment

from ..render.highlight import is_fast
from ..site import blocks as b
from ..site.characters import one_line, printable, short_words
from .downloads import SCHEME
from .fold import PRINT_LAST, fold, fold_title
from .latex import CODE_CLASS
from .patches.fast_code import FAST_CLASS
from .web_only import choice

_Element = TypeVar("_Element", bound=nodes.Element)
_URL = re.compile(r"https?://[^\s<>\"'`]+")


#: A node attribute on what a directive returns to the user's page, so that the publish
#: check scans it (:mod:`.publish_check`); not rendered.
OUTPUT_MARK = "torchtrace_output"


def mark_output(out: list[nodes.Node]) -> list[nodes.Node]:
    """Mark a directive's nodes for the publish check (and for :mod:`.translations`)."""
    for node in out:
        if isinstance(node, nodes.Element):
            node[OUTPUT_MARK] = True
    return out


#: A node attribute on references to PyTorch's API: left as plain code when nothing
#: resolves them (:func:`plain_when_missing`), never a warning, nitpicky or not.
OPTIONAL_LINK = "torchtrace_optional"
#: A document attribute: the page holds a tab set (sphinx-design's pass over tab sets has
#: work there; see ``patches.generated_transforms``).  Not rendered.
HAS_TAB_SETS = "torchtrace_tab_sets"


def plain_when_missing(
    app: object, env: object, node: addnodes.pending_xref, contnode: nodes.Element
) -> nodes.Element | None:
    """missing-reference, after intersphinx: an API name no inventory knows is its code."""
    return contnode if node.get(OPTIONAL_LINK) else None


def chart_nodes(builder: DoctreeBuilder, block: b.Chart) -> list[nodes.Node]:
    """A chart: its SVG for HTML (drawn by the render layer), its fallback for the others."""
    from ..render import charts

    svg = charts.draw(block.kind, block.data, builder.line(block.title))
    node = chart_node(svg=builder.markup(svg))
    node.extend(builder.blocks(block.fallback))
    return [node]


#: A run of text in markup (between tags), or an attribute's quoted value.
_MARKUP_TEXT = re.compile(r'(>)([^<>]+)(<)|(=")([^"<>]*)(")')


class chart_node(nodes.General, nodes.Element):  # noqa: N801 - docutils names nodes so
    """An SVG chart (``svg`` attribute) in HTML; other builders show its children."""


class DoctreeBuilder:
    """Turns the blocks of one page (or of a user's page, for the directive) into nodes.

    ``rewrite`` is applied to every string; ``special`` builds the blocks that need
    more of Sphinx than a node (``Provenance``, ``ObjectTarget``, ``Chart``) and is
    given by the caller.
    """

    def __init__(
        self,
        env: BuildEnvironment,
        document: nodes.document,
        rewrite: Callable[[str], str],
        special: Callable[[object], list[nodes.Node]] | None = None,
    ) -> None:
        self.env = env
        self.document = document
        self.docname = env.docname
        self._rewrite = rewrite
        self._special = special
        self._ids = 0
        # Titles, rubrics, lines and code blocks get a source (and a raw source) here: what
        # Sphinx's ApplySourceWorkaround would give them, for the pass a generated page skips.
        self._source = document.get("source")

    # -- text and inline ------------------------------------------------------------------

    def text(self, value: str) -> str:
        """Text of a code block: printable, path-rewritten, its lines kept."""
        return printable(self._rewrite(value))

    def line(self, value: str) -> str:
        """Inline text: as :meth:`text`, on one line.  Line breaks are blocks' business
        (``Lines``, ``CodeBlock``); inside a title, a literal or a LaTeX macro argument
        a line break would end a paragraph, or an ``objects.inv`` line.  Words longer than
        any real name are cut (:func:`short_words`): wrapping them takes quadratic time."""
        return short_words(one_line(self._rewrite(value)))

    def markup(self, svg: str) -> str:
        """Markup drawn from the model (a chart's SVG, whose labels name files): each text
        and attribute value rewritten as every string is, then escaped again, so a path
        a page hides is hidden in its chart too and ``<project>`` stays text."""

        def one(m: re.Match[str]) -> str:
            before, text, after = (m.group(1), m.group(2), m.group(3))
            if before is None:
                before, text, after = (m.group(4), m.group(5), m.group(6))
            shown = self._rewrite(html.unescape(text))
            if shown == html.unescape(text):
                return m.group()
            return before + html.escape(shown, quote=before != ">") + after

        return _MARKUP_TEXT.sub(one, svg)

    def inline(self, content: b.Inlines) -> list[nodes.Node]:
        return [self._inline(piece) for piece in content]

    def _inline(self, piece: b.Inline) -> nodes.Node:
        if isinstance(piece, str):
            return nodes.Text(self.line(piece))
        if isinstance(piece, b.Code):
            value = self.line(piece.text)
            return nodes.literal(value, value, classes=["code"])
        if isinstance(piece, b.Strong):
            value = self.line(piece.text)
            return nodes.strong(value, value)
        if isinstance(piece, b.Emphasis):
            value = self.line(piece.text)
            return nodes.emphasis(value, value)
        if isinstance(piece, b.Link):
            value = self.line(piece.text)
            # an address is published as its text is: one the rewrite changes (a password
            # masked, a home folder hidden) is shown as text, never linked as logged
            if _URL.fullmatch(piece.url) and self._rewrite(piece.url) == piece.url:
                return nodes.reference(value, value, refuri=piece.url)
            return nodes.Text(value)
        if isinstance(piece, b.PageLink):
            return self._xref("std", "doc", "/" + piece.docname, piece.text, ["std", "std-doc"])
        if isinstance(piece, b.AnchorLink):
            if piece.docname == self.docname:
                value = self.line(piece.text)
                return nodes.reference(value, value, internal=True, refid=piece.anchor)
            return self._xref(
                "std", "ref", label_of(piece.docname, piece.anchor), piece.text, ["std", "std-ref"]
            )
        if isinstance(piece, b.ObjectLink):
            xref = self._xref(
                "torchtrace",
                piece.objtype,
                piece.name,
                piece.name if piece.text is None else piece.text,
                ["torchtrace", f"torchtrace-{piece.objtype}"],
                explicit=piece.text is not None,
            )
            if piece.objtype == "frame":
                xref["classes"].append("torchtrace-badge")
            return xref
        if isinstance(piece, b.ApiLink):
            value = self.line(piece.text)
            xref = addnodes.pending_xref(
                "",
                nodes.literal(value, value, classes=["xref", "py", "py-obj"]),
                refdomain="py",
                reftype="obj",
                reftarget=piece.target,
                refexplicit=True,
                refwarn=False,
                refdoc=self.docname,
            )
            xref[OPTIONAL_LINK] = True  # plain code where intersphinx has no such name
            return xref
        if isinstance(piece, b.Download):
            value = self.line(piece.text)
            return addnodes.download_reference(
                "",
                "",
                nodes.literal(value, value, classes=["xref", "download"]),
                refdomain="",
                reftype="download",
                reftarget=SCHEME + piece.path,  # written into the output: :mod:`.downloads`
                refdoc=self.docname,
                refexplicit=True,
                refwarn=False,
            )
        if isinstance(piece, b.WebOnly):
            web = nodes.inline("", "", *self.inline(piece.web))
            return choice(web, nodes.inline("", "", *self.inline(piece.printed)))
        if isinstance(piece, b.Badge):
            status = piece.status
            return nodes.inline(
                status, status, classes=["torchtrace-badge", f"torchtrace-status-{status}"]
            )
        raise TypeError(f"not inline content: {piece!r}")

    def _xref(
        self,
        domain: str,
        reftype: str,
        target: str,
        text: str,
        classes: list[str],
        explicit: bool = True,
    ) -> addnodes.pending_xref:
        """The node Sphinx's own roles make for ``:domain:reftype:`text <target>```."""
        value = self.line(text)
        node = addnodes.pending_xref(
            "",
            nodes.inline(value, value, classes=["xref", *classes]),
            refdomain=domain,
            reftype=reftype,
            reftarget=target,
            refexplicit=explicit,
            refwarn=True,
            refdoc=self.docname,
        )
        return node

    # -- blocks ---------------------------------------------------------------------------

    def blocks(self, items: Iterable[b.Block]) -> list[nodes.Node]:
        out: list[nodes.Node] = []
        for block in items:
            out.extend(self.block(block))
        return out

    def block(self, block: b.Block) -> list[nodes.Node]:
        method = getattr(self, "_" + type(block).__name__.lower(), None)
        if method is None:
            if self._special is None:
                raise TypeError(f"no nodes for {type(block).__name__}")
            return self._special(block)
        result: list[nodes.Node] = method(block)
        return result

    def _paragraph(self, block: b.Paragraph) -> list[nodes.Node]:
        return [nodes.paragraph("", "", *self.inline(block.content))]

    def _lines(self, block: b.Lines) -> list[nodes.Node]:
        node = nodes.line_block(classes=list(block.classes))
        for line in block.lines:
            if len(line) == 1 and isinstance(line[0], b.WebOnly) and not line[0].printed:
                # a line with nothing to print (a download) is no empty line in print
                shown = self._sourced(nodes.line("", "", *self.inline(line[0].web)))
                node += choice(nodes.container("", shown), nodes.container())
            else:
                node += self._sourced(nodes.line("", "", *self.inline(line)))
        return [node]

    def _bulletlist(self, block: b.BulletList) -> list[nodes.Node]:
        node = nodes.bullet_list(bullet="-")
        for item in block.items:
            node += nodes.list_item("", *self.blocks(item))
        return [node]

    def _table(self, block: b.Table) -> list[nodes.Node]:
        columns = max([len(block.header), *(len(r) for r in block.rows)])
        if not columns or not block.rows:
            return []
        table = nodes.table(classes=["torchtrace-table", *block.classes])
        group = nodes.tgroup(cols=columns)
        table += group
        widths = list(block.widths or [])
        if len(widths) != columns or not all(w > 0 for w in widths):
            table["classes"].append("colwidths-auto")
            widths = [1] * columns
        total = sum(widths)
        for width in widths:  # percentages, as docutils' own tables give them
            width = max(1, round(100 * width / total))
            group += nodes.colspec(colwidth=width)
        if block.header:
            head = nodes.thead()
            head += self._row([[h] for h in block.header], columns)
            group += head
        body = nodes.tbody()
        for row in block.rows:
            body += self._row(row, columns)
        group += body
        return [table]

    def _row(self, cells: Sequence[b.Inlines], columns: int) -> nodes.row:
        row = nodes.row()
        for cell in [*cells, *([()] * (columns - len(cells)))]:
            entry = nodes.entry()
            if cell:
                entry += nodes.paragraph("", "", *self.inline(cell))
            row += entry
        return row

    def _codeblock(self, block: b.CodeBlock) -> list[nodes.Node]:
        text = code_text(self._rewrite, block)
        # force: Pygments shows what it cannot lex plainly, without a warning quoting the log
        content = nodes.Text(text)
        # The raw source is the text node itself (a str): pickled doctrees hold big blocks once.
        node = nodes.literal_block(content, language=block.language or "text", force=True)
        node += content
        node.source = self._source  # as ApplySourceWorkaround gives it (see _sourced)
        node["classes"].append(CODE_CLASS)
        if not block.searchable:
            node["classes"].append("no-search")
        if is_fast(node["language"], len(text)):
            node["classes"].append(FAST_CLASS)
        args: dict[str, Any] = {}
        if block.linenos:
            node["linenos"] = True
            args["linenostart"] = block.start
        if block.emphasize:
            args["hl_lines"] = emphasized_lines(block, text)
        node["highlight_args"] = args
        return [node]

    def _dropdown(self, block: b.Dropdown) -> list[nodes.Node]:
        title = self._sourced(fold_title("", "", *self.inline(block.title)))
        if block.anchor:
            self._anchor(title, block.anchor)
        node = fold(open=block.open)
        if block.print_last:
            node[PRINT_LAST] = True
        node += title
        node.extend(self.blocks(block.blocks))
        return [node]

    def _tabset(self, block: b.TabSet) -> list[nodes.Node]:
        self.document[HAS_TAB_SETS] = True
        tab_set = _component("tab-set", classes=["sd-tab-set"])
        for tab in block.tabs:
            item = _component("tab-item", classes=["sd-tab-item"], selected=False)
            value = self.line(tab.title)
            label = self._sourced(nodes.rubric(value, value, classes=["sd-tab-label"]))
            if tab.sync:
                label["sync_id"] = tab.sync
                label["sync_group"] = "tab"
            item += label
            content = _component("tab-content", classes=["sd-tab-content"])
            content.extend(self.blocks(tab.blocks))
            item += content
            tab_set += item
        return [tab_set]

    def _section(self, block: b.Section) -> list[nodes.Node]:
        return [self.section(block.title, block.blocks, block.anchor)]

    def section(
        self, title: b.Inlines, content: Iterable[b.Block], anchor: str | None = None
    ) -> nodes.section:
        section = nodes.section()
        section += self._sourced(nodes.title("", "", *self.inline(title)))
        if anchor:
            self._anchor(section, anchor)
        else:
            self._ids += 1
            section["ids"].append(f"section-{self._ids}")
        section.extend(self.blocks(content))
        return section

    def _admonition(self, block: b.Admonition) -> list[nodes.Node]:
        cls = nodes.warning if block.kind == "warning" else nodes.note
        return [cls("", *self.blocks(block.blocks))]

    def _target(self, block: b.Target) -> list[nodes.Node]:
        target = nodes.target("", "")
        self._anchor(target, block.anchor)
        return [target]

    def _toctree(self, block: b.Toctree) -> list[nodes.Node]:
        toctree = addnodes.toctree()
        toctree["parent"] = self.docname
        toctree["entries"] = [(None, d) for d in block.docnames]
        toctree["includefiles"] = list(block.docnames)
        toctree["maxdepth"] = block.maxdepth
        toctree["caption"] = block.caption
        toctree["glob"] = False
        toctree["hidden"] = block.hidden
        toctree["includehidden"] = False
        toctree["numbered"] = 0
        toctree["titlesonly"] = False
        wrapper = nodes.compound(classes=["toctree-wrapper"])
        wrapper += toctree
        return [wrapper]

    def _sourced(self, node: _Element) -> _Element:
        """The node with the page's source and its text as its raw source, as Sphinx's
        ApplySourceWorkaround would give them (a generated page skips that pass)."""
        node.source = self._source
        if not node.rawsource:
            node.rawsource = node.astext()
        return node

    def _anchor(self, node: nodes.Element, anchor: str) -> None:
        """``anchor`` as the node's id, and as a label other pages can reference."""
        node["ids"].append(anchor)
        node["names"].append(label_of(self.docname, anchor))
        self.document.note_explicit_target(node, node)


def code_text(rewrite: Callable[[str], str], block: b.CodeBlock) -> str:
    """What a code block shows: its text path-rewritten and printable, no trailing newline."""
    return printable(rewrite(block.text.rstrip("\n"))) or " "


def emphasized_lines(block: b.CodeBlock, text: str) -> list[int]:
    """The block's emphasized lines that ``text`` has."""
    count = text.count("\n") + 1
    return [n for n in block.emphasize if 1 <= n <= count]


def label_of(docname: str, anchor: str) -> str:
    """The std-domain label of an anchor on a generated page: unique in the project."""
    return posixpath.normpath(docname).replace("/", "-") + "-" + anchor


def _component(name: str, classes: Sequence[str] = (), **attributes: Any) -> nodes.container:
    """A sphinx-design component container, as its directives make them (0.5 to 0.8)."""
    return nodes.container(
        "", is_div=True, design_component=name, classes=list(classes), **attributes
    )
