"""``torchtrace-table``: a table of one-line cells, parsed for inline markup only.

Generated pages hold hundreds of tables.  docutils' ``list-table`` runs a
nested block parser per cell, which made tables more than half of a big
trace's reading time; our cells are one line of inline rST (escaped text,
literals, references), so each is parsed with ``inline_text`` instead.

Content: one row per line, cells separated by :data:`CELL_SEPARATOR`.  Settings
are words after the directive name, not options (docutils parses options with
a nested state machine, as costly as the table): ``header=N`` (header rows),
``widths=2,1,3`` (relative column widths, else automatic), ``class=NAME``, and
``facts``: rows of a label and a value, shown as lines ``Label: value`` instead
of a table (a page's few facts read as well, in a third of the nodes).
"""

from __future__ import annotations

import re
from typing import ClassVar

from docutils import nodes
from sphinx.util.docutils import SphinxDirective

#: Separates cells in a row; rst.escape and rst.literal never let it through from a trace.
CELL_SEPARATOR = "\u241f"


class TorchTraceTable(SphinxDirective):
    has_content = True
    optional_arguments = 3
    option_spec: ClassVar[None] = None  # settings are arguments: see the module docstring

    def run(self) -> list[nodes.Node]:
        settings = dict(word.partition("=")[::2] for word in self.arguments)
        rows = [line.split(CELL_SEPARATOR) for line in self.content if line.strip()]
        if not rows:
            return []
        if "facts" in settings:
            return [self._facts(rows, settings.get("class"))]
        columns = max(len(r) for r in rows)
        header = settings.get("header", "0")
        header_rows = min(int(header) if header.isdigit() else 0, len(rows))
        classes = [settings["class"]] if settings.get("class") else []
        table = nodes.table(classes=["torchtrace-table", *classes])
        group = nodes.tgroup(cols=columns)
        table += group
        widths = self._widths(settings.get("widths", "auto"), columns)
        if widths is None:
            table["classes"].append("colwidths-auto")
        for width in widths or [1] * columns:
            group += nodes.colspec(colwidth=width)
        messages: list[nodes.system_message] = []
        if header_rows:
            head = nodes.thead()
            group += head
            for row in rows[:header_rows]:
                head += self._row(row, columns, messages)
        body = nodes.tbody()
        group += body
        for row in rows[header_rows:]:
            body += self._row(row, columns, messages)
        return [table, *messages]

    def _facts(self, rows: list[list[str]], cls: str | None) -> nodes.line_block:
        block = nodes.line_block(classes=["torchtrace-facts", *([cls] if cls else [])])
        for label, *values in rows:
            line = nodes.line()
            line += nodes.Text(f"{label.strip()}: ")
            line.extend(self._cell(CELL_SEPARATOR.join(values).strip(), []))
            block += line
        return block

    def _cell(self, text: str, messages: list[nodes.system_message]) -> list[nodes.Node]:
        inline = simple_cell(text)
        if inline is None:
            inline, problems = self.state.inline_text(text, self.lineno)
            messages.extend(problems)
        return inline

    def _widths(self, setting: str, columns: int) -> list[int] | None:
        value = setting.split(",")
        if value == ["auto"] or len(value) != columns or not all(v.isdigit() for v in value):
            return None
        return [int(v) for v in value]

    def _row(
        self, cells: list[str], columns: int, messages: list[nodes.system_message]
    ) -> nodes.row:
        row = nodes.row()
        for cell in cells + [""] * (columns - len(cells)):
            entry = nodes.entry()
            text = cell.strip()
            if text:
                entry += nodes.paragraph(text, "", *self._cell(text, messages))
            row += entry
        return row


# Most cells are escaped text and ``:code:`...``` literals, which need no inline parser.
# Plain text: no markup character unescaped; a literal: as :func:`.rst.literal` writes it,
# between spaces, commas or parentheses (where docutils would recognize it too).  Each
# alternative starts with a character the others cannot: the match is linear.
_CHAR = r"[^\\`*_|\[\]<>:@]|\\\S"
_LITERAL = r":code:`((?:[^`\\]|\\\S)+)`"
_SIMPLE_CELL = re.compile(rf"(?:{_CHAR}|(?<![^\s(]){_LITERAL}(?![^\s,.;)]))+", re.DOTALL)
_PIECES = re.compile(rf"((?:{_CHAR})+)|{_LITERAL}", re.DOTALL)
_ESCAPE = re.compile(r"\\(.)", re.DOTALL)


def simple_cell(text: str) -> list[nodes.Node] | None:
    """The nodes docutils would make of a cell of plain text and literals, or None."""
    if not _SIMPLE_CELL.fullmatch(text):
        return None
    out: list[nodes.Node] = []
    for match in _PIECES.finditer(text):
        plain, code = match.groups()
        if plain is not None:
            out.append(nodes.Text(_ESCAPE.sub(r"\1", plain)))
        elif code[0].isspace() or code[-1].isspace():
            return None  # not a literal to docutils
        else:
            value = _ESCAPE.sub(r"\1", code)
            out.append(nodes.literal(match.group(), value, classes=["code"], language=""))
    return out
