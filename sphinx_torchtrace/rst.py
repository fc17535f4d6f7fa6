"""Writing untrusted trace text into reStructuredText safely.

Trace text (reasons, names, code) is never interpreted: prose is escaped so no
markup survives, code goes into literal blocks indented under their directive
so no line can end the block, and control characters become U+FFFD.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

from .table import CELL_SEPARATOR

_CONTROL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]")
# Quotes too: escaped, they are kept straight instead of becoming smart quotes.
_SPECIAL = re.compile(r"([\\`*_|<>\[\]:{}#=~^.+'\"-])")


def clean(text: str) -> str:
    """Control characters (other than TAB and newline) replaced: docutils rejects some."""
    return _CONTROL.sub("\ufffd", text.replace("\r\n", "\n").replace("\r", "\n"))


def _one_line(text: object) -> str:
    """Prose or a cell: one line, and never the table cell separator."""
    return " ".join(clean(str(text)).replace(CELL_SEPARATOR, "\ufffd").split())


def escape(text: object) -> str:
    """One line of prose with every markup character escaped."""
    return _SPECIAL.sub(r"\\\1", _one_line(text))


def literal(text: object) -> str:
    """Inline literal text: ``:code:`...``` cannot be broken out of, unlike double backquotes."""
    one_line = _one_line(text)
    if not one_line:
        return ""
    return ":code:`" + one_line.replace("\\", "\\\\").replace("`", "\\`") + "`"


def indent(text: str, spaces: int = 3) -> str:
    pad = " " * spaces
    return "\n".join(pad + line if line.strip() else "" for line in clean(text).split("\n"))


def code_block(text: str, language: str = "text", **options: Any) -> str:
    """A ``code-block`` directive holding ``text`` verbatim (highlighted by Pygments)."""
    head = [f".. code-block:: {language}", *_block_options(**options)]
    body = indent(text.rstrip("\n") or " ", 3)
    return "\n".join(head) + "\n\n" + body + "\n"


def literal_include(path: str, language: str = "text", **options: Any) -> str:
    """A ``literalinclude`` of a generated side file, with the options of :func:`code_block`."""
    head = [f".. literalinclude:: {path}", f"   :language: {language}"]
    return "\n".join([*head, *_block_options(**options)]) + "\n"


def _block_options(
    *,
    fast: bool = False,
    searchable: bool = False,
    linenos: bool = False,
    lineno_start: int | None = None,
    emphasize: Sequence[int] = (),
    caption: str | None = None,
    name: str | None = None,
) -> list[str]:
    lines = ["   :force:"]  # graphs are not quite Python: highlight what lexes
    classes = ([] if searchable else ["no-search"]) + (["torchtrace-fast"] if fast else [])
    if classes:
        lines.append("   :class: " + " ".join(classes))
    if linenos:
        lines.append("   :linenos:")
    if lineno_start is not None:
        lines.append(f"   :lineno-start: {lineno_start}")
    if emphasize:
        lines.append("   :emphasize-lines: " + ",".join(str(n) for n in emphasize))
    if caption:
        lines.append("   :caption: " + escape(caption))
    if name:
        lines.append("   :name: " + name)
    return lines


def heading(text: str, char: str = "=") -> str:
    title = escape(text)
    return f"{title}\n{char * max(len(title), 3)}"


def table(headers: Sequence[str], rows: Sequence[Sequence[str]], widths: str = "auto") -> str:
    """A table whose cells are one line of rST each (escape them before).

    Written for the ``torchtrace-table`` directive (:mod:`sphinx_torchtrace.table`),
    which parses cells as inline markup: many times faster than ``list-table``.
    """
    if not rows:
        return ""
    out = [".. torchtrace-table::", "   :header-rows: 1", f"   :widths: {widths}", ""]
    for row in [list(headers), *[list(r) for r in rows]]:
        cells = [" ".join(cell.replace(CELL_SEPARATOR, " ").split()) for cell in row]
        out.append("   " + CELL_SEPARATOR.join(cells))
    return "\n".join(out) + "\n"
