"""Long code blocks whose page loads like a short one: highlighted past their first lines
only when the reader gets there.

A browser builds one element per highlighted token, and a 5,000-line graph has tens of
thousands: parsing them is most of the page's load.  Here a block's first
:data:`CHUNK_LINES` lines are written highlighted, and each later chunk of as many lines
is plain text (one element a chunk: in-page find, copying and reading without scripts
work at once) with its tokens as numbers in an attribute, ``data-runs="start,end,class,
..."`` (offsets in UTF-16 code units of the chunk's text, as a script counts them).  The
extension's script turns a chunk into the same spans when it comes near the screen, so
the DOM grows with the lines read, not with the tokens of the file.
"""

from __future__ import annotations

import html
import re

#: Blocks of at least this many lines are highlighted lazily past their first chunk.
LAZY_LINES = 100
#: Lines written at once, highlighted, and lines in each later chunk.
CHUNK_LINES = 50
LAZY_CLASS = "torchtrace-lazy"

#: The flat HTML the fast highlighters write: a token's span, or escaped plain text.
_PIECE = re.compile(r'<span class="([a-z0-9]+)">([^<]*)</span>|([^<]+)')


def lazy_lines(escaped: str) -> str | None:
    """``escaped`` (a block's highlighted HTML, flat spans of escaped text) with every
    chunk after the first as plain text and runs; None when the block is short, holds
    markup other than flat spans, or a carriage return (which an HTML parser changes,
    so offsets would drift)."""
    if escaped.count("\n") < LAZY_LINES or "\r" in escaped:
        return None
    pieces: list[tuple[str | None, str]] = []
    at = 0
    for match in _PIECE.finditer(escaped):
        if match.start() != at:
            return None
        css_class, token, plain = match.groups()
        pieces.append((css_class, token) if plain is None else (None, plain))
        at = match.end()
    if at != len(escaped):
        return None
    return "".join(_written(n, chunk) for n, chunk in enumerate(_chunks(pieces)))


def _chunks(pieces: list[tuple[str | None, str]]) -> list[list[tuple[str | None, str]]]:
    """The pieces cut into chunks of :data:`CHUNK_LINES` lines (a token over a boundary
    is cut in two, each part keeping its class)."""
    chunks: list[list[tuple[str | None, str]]] = [[]]
    lines = 0
    for css_class, text in pieces:
        while text:
            room = CHUNK_LINES - lines
            cut = _nth_newline(text, room)
            if cut < 0:
                chunks[-1].append((css_class, text))
                lines += text.count("\n")
                break
            chunks[-1].append((css_class, text[: cut + 1]))
            chunks.append([])
            lines = 0
            text = text[cut + 1 :]
    return [chunk for chunk in chunks if chunk]


def _nth_newline(text: str, n: int) -> int:
    """The index of the ``n``-th newline of ``text`` (1-based), or -1."""
    at = -1
    for _ in range(n):
        at = text.find("\n", at + 1)
        if at < 0:
            return -1
    return at


def _written(number: int, chunk: list[tuple[str | None, str]]) -> str:
    if number == 0:
        return "".join(
            text if css_class is None else f'<span class="{css_class}">{text}</span>'
            for css_class, text in chunk
        )
    runs: list[str] = []
    offset = 0
    for css_class, text in chunk:
        length = _utf16_length(text)
        if css_class is not None and length:
            runs += (str(offset), str(offset + length), css_class)
        offset += length
    plain = "".join(text for _css_class, text in chunk)
    return f'<span class="{LAZY_CLASS}" data-runs="{",".join(runs)}">{plain}</span>'


def _utf16_length(escaped: str) -> int:
    """How many UTF-16 code units the text of ``escaped`` is, as a script's strings count."""
    text = html.unescape(escaped) if "&" in escaped else escaped
    if text.isascii():
        return len(text)
    return len(text) + sum(1 for ch in text if ord(ch) > 0xFFFF)
