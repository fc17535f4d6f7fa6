"""Writing untrusted trace text into reStructuredText safely.

Trace text (reasons, names, code) is never interpreted: prose is escaped so no
markup survives, code goes into literal blocks indented under their directive
so no line can end the block, and control characters become U+FFFD.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

_CONTROL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]")
# Quotes too: escaped, they are kept straight instead of becoming smart quotes.
_SPECIAL = re.compile(r"([\\`*_|<>\[\]:{}#=~^.+'\"-])")


def clean(text: str) -> str:
    """Control characters (other than TAB and newline) replaced: docutils rejects some."""
    return _CONTROL.sub("\ufffd", text.replace("\r\n", "\n").replace("\r", "\n"))


def escape(text: object) -> str:
    """One line of prose with every markup character escaped."""
    one_line = " ".join(clean(str(text)).split())
    return _SPECIAL.sub(r"\\\1", one_line)


def literal(text: object) -> str:
    """Inline literal text: ``:code:`...``` cannot be broken out of, unlike double backquotes."""
    one_line = " ".join(clean(str(text)).split())
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
    searchable: bool = False,
    linenos: bool = False,
    lineno_start: int | None = None,
    emphasize: Sequence[int] = (),
    caption: str | None = None,
    name: str | None = None,
) -> list[str]:
    lines = ["   :force:"]  # graphs are not quite Python: highlight what lexes
    if not searchable:
        lines.append("   :class: no-search")
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
    """A ``list-table`` whose cells are already rST (escape them before)."""
    if not rows:
        return ""
    out = [".. list-table::", "   :header-rows: 1", f"   :widths: {widths}", ""]
    for row in [list(headers), *[list(r) for r in rows]]:
        first = True
        for cell in row:
            text = cell if cell.strip() else "\\ "
            out.append(("   * - " if first else "     - ") + text)
            first = False
    return "\n".join(out) + "\n"
