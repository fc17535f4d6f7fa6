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
    """A ``torchtrace-code`` block holding ``text`` verbatim (see :mod:`.codeblock`)."""
    body = indent(text.rstrip("\n") or " ", 3)
    return _code_head(language, **options) + "\n\n" + body + "\n"


def literal_include(path: str, language: str = "text", **options: Any) -> str:
    """A ``torchtrace-code`` block showing a generated side file; options as :func:`code_block`."""
    if not path or any(c.isspace() for c in path):
        raise ValueError(f"generated side file paths have no spaces: {path!r}")
    return _code_head(language, include=path, **options) + "\n"


def _code_head(
    language: str,
    *,
    fast: bool = False,
    searchable: bool = False,
    linenos: bool = False,
    lineno_start: int | None = None,
    emphasize: Sequence[int] = (),
    include: str | None = None,
) -> str:
    words = [language or "text"]
    flags = (("linenos", linenos), ("fast", fast), ("searchable", searchable))
    words += [flag for flag, on in flags if on]
    if lineno_start is not None:
        words.append(f"start={lineno_start}")
    if emphasize:
        words.append("emphasize=" + ",".join(str(n) for n in emphasize))
    if include is not None:
        words.append(f"include={include}")
    return ".. torchtrace-code:: " + " ".join(words)


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
    out = [f".. torchtrace-table:: header=1 widths={','.join(widths.split())}", ""]
    for row in [list(headers), *[list(r) for r in rows]]:
        cells = [" ".join(cell.replace(CELL_SEPARATOR, " ").split()) for cell in row]
        out.append("   " + CELL_SEPARATOR.join(cells))
    return "\n".join(out) + "\n"
