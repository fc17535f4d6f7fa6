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
from itertools import accumulate, chain

#: Blocks of at least this many lines are highlighted lazily past their first chunk.
LAZY_LINES = 100
#: Lines written at once, highlighted, and lines in each later chunk.
CHUNK_LINES = 50
LAZY_CLASS = "torchtrace-lazy"

#: A token's span in the flat HTML the fast highlighters write (its text escaped: no ``<``).
_SPAN = re.compile(r'<span class="([a-z0-9]+)">([^<]*)</span>')
_EMPTY_SPAN = re.compile(r'<span class="[a-z0-9]+"></span>')
_SPLIT = re.compile(r'<span class="([a-z0-9]+)">|</span>')
_CLOSE = "</span>"


def lazy_lines(escaped: str) -> str | None:
    """``escaped`` (a block's highlighted HTML, flat spans of escaped text) with every
    chunk after the first as plain text and runs; None when the block is short, holds
    markup other than flat spans, or a carriage return (which an HTML parser changes,
    so offsets would drift).

    The text is cut where its lines are (a token over a cut is cut in two, each part
    keeping its class; an empty token is left out) and each chunk written from its
    slice: the work is a few passes of the regex engine over the text, and Python's
    only per token of a chunk written as runs."""
    if escaped.count("\n") < LAZY_LINES or "\r" in escaped:
        return None
    if "<" in _SPAN.sub("", escaped):
        return None
    if '"></span>' in escaped:
        escaped = _EMPTY_SPAN.sub("", escaped)
    out: list[str] = []
    opened = ""  # the class of the span a cut fell inside ("": none)
    at = 0
    for cut in _cuts(escaped):
        ends_in = _open_class(escaped, cut)
        body = escaped[at:cut]
        if not out:  # the first chunk: highlighted as written
            out.append(body + _CLOSE if ends_in else body)
        else:
            out.append(_runs(f'<span class="{opened}">' + body if opened else body, bool(ends_in)))
        opened, at = ends_in, cut
    return "".join(out)


def _cuts(escaped: str) -> list[int]:
    """Where each chunk of :data:`CHUNK_LINES` lines ends: after its last line's newline,
    or after the end of the span that newline closes; the last chunk ends with the text."""
    cuts: list[int] = []
    lines = escaped.split("\n")
    at = 0
    for first in range(0, len(lines) - CHUNK_LINES, CHUNK_LINES):
        at += sum(map(len, lines[first : first + CHUNK_LINES])) + CHUNK_LINES
        cut = at + len(_CLOSE) if escaped.startswith(_CLOSE, at) else at
        cuts.append(cut)
    if not cuts or cuts[-1] < len(escaped):
        cuts.append(len(escaped))
    return cuts


def _open_class(escaped: str, cut: int) -> str:
    """The class of the span ``cut`` falls inside ("" if none); a cut follows a newline,
    so it is in a token's text, never in a tag."""
    if cut >= len(escaped):
        return ""
    tag = escaped.rfind("<", 0, cut)
    if tag < 0 or escaped.startswith(_CLOSE, tag):
        return ""
    return escaped[tag + len('<span class="') : escaped.index('"', tag + len('<span class="'))]


def _runs(chunk: str, unclosed: bool) -> str:
    """A chunk as plain text and its tokens' runs (``chunk`` opens any span it continues;
    ``unclosed``: its last span goes on in the next chunk)."""
    # plain text, a class, its token's text, None (the closing tag), plain text, ...
    parts = _SPLIT.split(chunk + _CLOSE if unclosed else chunk)
    texts = parts[0::2]
    count = _utf16_length if "&" in chunk or not chunk.isascii() else len
    ends = list(accumulate(map(count, texts), initial=0))
    runs = ",".join(
        chain.from_iterable(
            zip(map(str, ends[1:-1:2]), map(str, ends[2::2]), parts[1::4], strict=True)
        )
    )
    return f'<span class="{LAZY_CLASS}" data-runs="{runs}">{"".join(texts)}</span>'


def _utf16_length(escaped: str) -> int:
    """How many UTF-16 code units the text of ``escaped`` is, as a script's strings count."""
    text = html.unescape(escaped) if "&" in escaped else escaped
    if text.isascii():
        return len(text)
    return len(text) + sum(1 for ch in text if ord(ch) > 0xFFFF)
