"""What a generated page shows, as plain data: the page's content without any markup language.

Page views (:mod:`sphinx_torchtrace.site.pages`) describe each page as a tree of
these blocks; the Sphinx layer turns the tree into docutils nodes one for one.
A string here is always *text*: it becomes a ``nodes.Text`` or the content of a
literal block, never source that a parser reads, so a log's string cannot
become markup whatever it holds (``.. raw::``, backquotes, a line separator).

Inline content is a list of :data:`Inline` items: a plain ``str`` or one of the
small classes below.  Links name their target by what it is (a docname, a domain
object, an anchor); the Sphinx layer resolves them.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Literal, TypeAlias

# -- inline -----------------------------------------------------------------------------------


@dataclass(frozen=True)
class Code:
    """Inline literal text (a name, a guard, a path)."""

    text: str


@dataclass(frozen=True)
class Strong:
    text: str


@dataclass(frozen=True)
class Emphasis:
    text: str


@dataclass(frozen=True)
class Link:
    """An external link; the Sphinx layer keeps only ``http`` and ``https`` URLs as links."""

    url: str
    text: str


@dataclass(frozen=True)
class PageLink:
    """A link to a whole page, by its absolute docname (``torchtrace/run/frame-0-0``)."""

    docname: str
    text: str


@dataclass(frozen=True)
class AnchorLink:
    """A link to an anchor (see :class:`Section` and :class:`Target`) on a page."""

    docname: str
    anchor: str
    text: str


@dataclass(frozen=True)
class ObjectLink:
    """A cross-reference to a ``torchtrace`` domain object (``frame``, ``graph``, ``kernel``).

    A frame link shows its status badge; ``text`` None shows the short compile id.
    """

    objtype: str
    name: str
    text: str | None = None


@dataclass(frozen=True)
class Download:
    """A download of a file the extension wrote, by its path relative to the source folder."""

    path: str
    text: str


@dataclass(frozen=True)
class ApiLink:
    """A name of PyTorch's Python API (``torch.mm``), shown as code: a link into PyTorch's
    documentation where the project's intersphinx knows it, plain code everywhere else."""

    target: str  # "torch.mm"
    text: str  # what the trace says: "aten.mm"


@dataclass(frozen=True)
class WebOnly:
    """Words only a web page can keep true, and what every other output says instead.

    A :class:`Download` is a file that only HTML builders copy: a PDF, a man page, plain
    text or an EPUB has no such file, and "is a download" would be a dead end there.
    ``printed`` is what their reader has in its place (the log's line number), or nothing.
    """

    web: Inlines
    printed: Inlines = ()


@dataclass(frozen=True)
class Badge:
    """A status word shown as the badge of that status (the legend)."""

    status: str


Inline: TypeAlias = (
    str
    | Code
    | Strong
    | Emphasis
    | Link
    | PageLink
    | AnchorLink
    | ObjectLink
    | ApiLink
    | Download
    | Badge
    | WebOnly
)
Inlines: TypeAlias = Sequence[Inline]


# -- blocks -----------------------------------------------------------------------------------


@dataclass
class Paragraph:
    content: Inlines


@dataclass
class Lines:
    """Lines kept as lines (facts as ``Label: value``, a message of several lines)."""

    lines: Sequence[Inlines]
    classes: Sequence[str] = ()


@dataclass
class BulletList:
    """Items of blocks; :func:`item` makes an item of one paragraph."""

    items: Sequence[Sequence[Block]]


@dataclass
class Table:
    """A table whose cells are inline content; ``widths`` relative, or None for automatic."""

    header: Sequence[str]
    rows: Sequence[Sequence[Inlines]]
    widths: Sequence[int] | None = None
    classes: Sequence[str] = ()


@dataclass
class CodeBlock:
    """A block of code or text shown verbatim.

    ``emphasize`` counts lines from 1 at the block's first line, whatever ``start`` is.
    ``searchable`` blocks go to the search index (others do not: they are big and noisy).
    """

    text: str
    language: str = "text"
    linenos: bool = False
    start: int = 1
    emphasize: Sequence[int] = ()
    searchable: bool = False


@dataclass
class Dropdown:
    """Content folded under a title (``<details>`` in HTML)."""

    title: Inlines
    blocks: Sequence[Block]
    anchor: str | None = None
    open: bool = False
    #: Printed (every builder but HTML's, which folds it) after the page's own sections,
    #: not here: long reference content (a config dump) that the web page keeps closed
    #: where it belongs, and a printed page should not open with.
    print_last: bool = False


@dataclass
class Tab:
    title: str
    blocks: Sequence[Block]
    sync: str | None = None  # tabs of the same key are switched together (ranks)


@dataclass
class TabSet:
    tabs: Sequence[Tab]


@dataclass
class Section:
    """A titled part of the page; ``anchor`` (ours, ``[a-z0-9-]``) makes it a link target."""

    title: Inlines
    blocks: Sequence[Block]
    anchor: str | None = None


@dataclass
class Admonition:
    """A ``warning`` or ``note`` box."""

    kind: Literal["warning", "note"]
    blocks: Sequence[Block]


@dataclass
class Target:
    """An anchor (``[a-z0-9-]``) in the middle of a page, for :class:`AnchorLink`."""

    anchor: str


@dataclass
class ObjectTarget:
    """Declares a ``torchtrace`` domain object here (in ``objects.inv``, linkable), and the
    objects in ``also`` at the same anchor: ``(objtype, name, status)`` of objects it stands
    for (the same graph of ranks that logged alike).  A thousand ranks' names then cost a
    thousand domain entries, not a thousand targets in a row, whose ids docutils hands on
    from each target to the next: quadratic, 15 MB of doctree for one page of 256 ranks."""

    objtype: str
    name: str
    status: str = ""
    also: tuple[tuple[str, str, str], ...] = ()


#: Objects declared in a row each at an anchor of its own; those past it share the first.
OWN_ANCHORS = 16
_FIRST = {"frame": 0, "graph": 1, "kernel": 2}


def object_targets(objects: Sequence[tuple[str, str, str]]) -> list[ObjectTarget]:
    """``(objtype, name, status)`` objects declared in a row, frames first: each at an
    anchor of its own, and past :data:`OWN_ANCHORS` at the first of those, the top of the
    page (a later one is another object's: a link to rank 7's frame landed on a kernel of
    rank 5)."""
    objects = sorted(objects, key=lambda o: _FIRST.get(o[0], 3))
    targets = [ObjectTarget(*o) for o in objects[:OWN_ANCHORS]]
    if len(objects) > OWN_ANCHORS:
        targets[0].also = tuple(objects[OWN_ANCHORS:])
    return targets


#: The drawings of render.charts.
ChartKind = Literal["compile-times", "timeline", "compile-time-tree", "trend"]


@dataclass
class Chart:
    """An SVG chart, drawn by the render layer from ``data`` (see :mod:`.render.charts`).

    Builders that cannot show SVG (LaTeX, text) show ``fallback`` instead: the same
    numbers as a table.
    """

    kind: ChartKind  # which drawing of render.charts
    data: object
    title: str
    fallback: Sequence[Block] = ()


@dataclass
class Provenance:
    """The provenance view (pre-grad, post-grad, code side by side) of one frame object."""

    frame: str
    fallback: str = "table"  # non-HTML builders: "table" (node → kernel table) or "listings"
    view: int | None = None  # which node mapping of the compile; None: the one it shows first


@dataclass
class Toctree:
    """Pages listed under this page (docnames, absolute); hidden ones only order the build."""

    docnames: Sequence[str]
    caption: str | None = None
    hidden: bool = False
    maxdepth: int = 1


Block: TypeAlias = (
    Paragraph
    | Lines
    | BulletList
    | Table
    | CodeBlock
    | Dropdown
    | TabSet
    | Section
    | Admonition
    | Target
    | ObjectTarget
    | Chart
    | Provenance
    | Toctree
)


@dataclass
class Page:
    """One generated page: its title, what it shows, and whether a toctree lists it."""

    docname: str
    title: Inlines
    blocks: list[Block] = field(default_factory=list)
    orphan: bool = False


def item(*content: Inline) -> list[Block]:
    """A list item of one paragraph."""
    return [Paragraph(list(content))]


def place_link(docname: str, anchor: str, text: str) -> PageLink | AnchorLink:
    """A link to what is shown on a page of its own (``anchor`` "") or at an anchor of
    another page (a small graph on its frame page)."""
    return AnchorLink(docname, anchor, text) if anchor else PageLink(docname, text)


def joined(parts: Sequence[Inlines], separator: str = ", ") -> list[Inline]:
    """Inline pieces one after the other with a separator between them."""
    out: list[Inline] = []
    for i, part in enumerate(parts):
        if i:
            out.append(separator)
        out.extend(part)
    return out


#: How much of a table made from an input's data a page shows (a JSON file may hold a
#: thousand keys per row): the rest is counted in a note, never rendered.
TABLE_ROWS = 500
TABLE_COLUMNS = 16
CELL_ITEMS = 50


def capped_table(
    header: Sequence[str],
    rows: Sequence[Sequence[Inlines]],
    *,
    max_rows: int = TABLE_ROWS,
    max_columns: int = TABLE_COLUMNS,
    where: str = "the file",
    total_rows: int | None = None,
) -> list[Block]:
    """A table of at most ``max_rows`` rows and ``max_columns`` columns, and a note of what
    was left out (``where`` says where the rest is; ``total_rows``: the rows there are,
    when ``rows`` was already cut)."""
    shown_rows = rows[:max_rows]
    table = Table(list(header[:max_columns]), [list(r[:max_columns]) for r in shown_rows])
    left = []
    total = len(rows) if total_rows is None else total_rows
    if total > len(shown_rows):
        left.append(f"{total - len(shown_rows)} more rows")
    if len(header) > max_columns:
        left.append(f"{len(header) - max_columns} more columns")
    if not left:
        return [table]
    return [
        table,
        Paragraph(
            [
                f"The first {len(shown_rows)} rows and {len(table.header)} "
                f"columns; {' and '.join(left)} are in {where}."
            ]
        ),
    ]


def capped_joined(parts: Sequence[Inlines], limit: int = CELL_ITEMS) -> list[Inline]:
    """:func:`joined` of at most ``limit`` parts, then how many more there are."""
    out = joined(parts[:limit])
    if len(parts) > limit:
        out.append(f" ... ({len(parts) - limit} more)")
    return out


def web_inlines(content: Inlines) -> list[Inline]:
    """Inline content as the HTML build shows it: each :class:`WebOnly` replaced by its
    web words (for tests, which look for the downloads a page offers)."""
    out: list[Inline] = []
    for piece in content:
        out.extend(web_inlines(piece.web) if isinstance(piece, WebOnly) else [piece])
    return out


def inline_text(content: Inlines) -> str:
    """The plain text of inline content (what a reader sees), for tests and alt texts."""
    out = []
    for piece in content:
        if isinstance(piece, str):
            out.append(piece)
        elif isinstance(piece, ObjectLink):
            out.append(piece.text if piece.text is not None else piece.name)
        elif isinstance(piece, Badge):
            out.append(piece.status)
        elif isinstance(piece, WebOnly):  # the web page's words, as the HTML build shows
            out.append(inline_text(piece.web))
        else:
            out.append(piece.text)
    return "".join(out)


#: A web address in trace text: ``http``/``https`` only, no spaces or quotes, bounded (linear).
_URL = re.compile(r"https?://[^\s<>\"'`]{1,2000}")
_URL_TRAILER = ".,;:!?)]}"


def linked(text: str) -> list[Inline]:
    """Text with its web addresses as :class:`Link` (the Sphinx layer keeps http(s) only);
    a sentence's closing punctuation stays outside the link."""
    out: list[Inline] = []
    at = 0
    for m in _URL.finditer(text):
        url = m.group(0).rstrip(_URL_TRAILER)
        if len(url) <= len("https://"):
            continue
        if m.start() > at:
            out.append(text[at : m.start()])
        out.append(Link(url, url))
        at = m.start() + len(url)
    if at < len(text):
        out.append(text[at:])
    return out
