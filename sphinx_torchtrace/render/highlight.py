"""Fast HTML for big code blocks: one regular-expression pass per language, no Pygments.

Graphs, guards and generated code are most of a trace, and Pygments formats
them at about 1 MB/s: a 36 MB trace spent more time highlighting than
everything else together.  Here each language is one pass with the CSS
classes Pygments would use, so every theme colors them: FX graphs, diffs, and
Python, C++ and tracebacks (:mod:`.highlight_regex`).  Other languages are
plain escaped text.  The output mirrors Pygments' inside Sphinx's wrapper.
"""

from __future__ import annotations

import html
import re
from collections.abc import Collection

from .fx_tokens import FX_PLAIN, alternatives
from .highlight_regex import HIGHLIGHTERS
from .lazy_code import lazy_lines

# Each match is a run of plain text (punctuation, names that start no token) and
# then one token, so the scan moves a name at a time and the Python callback runs
# once per token (about 3x faster than trying every token at every character).
_FX_TOKENS = re.compile(rf"((?:{FX_PLAIN})*)(?:{alternatives()}|[\s\S]|\Z)")


def _fx_span(match: re.Match[str]) -> str:
    """The HTML of one match: its plain run, escaped, then its token in a span."""
    kind = match.lastgroup
    if kind is None:  # plain text, then a character no token starts with (or the end)
        return html.escape(match.group(), quote=False)
    plain, token = match.group(1, kind)
    plain = html.escape(plain, quote=False)
    if kind == "nv":
        name = token.lstrip()
        return f'{plain}{token[: len(token) - len(name)]}<span class="nv">{name}</span>'
    return f'{plain}<span class="{kind}">{html.escape(token, quote=False)}</span>'


def _diff_line(line: str) -> str:
    kind = _DIFF_CLASSES.get(line[:1]) if not line.startswith(("+++", "---")) else "gh"
    if line.startswith("@@"):
        kind = "gu"
    return f'<span class="{kind}">{line}</span>' if kind else line


_DIFF_CLASSES = {"+": "gi", "-": "gd"}


def highlight_fast(
    text: str,
    language: str,
    linenos: bool,
    first_line: int = 1,
    hl_lines: Collection[int] = (),
    lazy: bool = False,
) -> str:
    """The inner HTML of a code block: ``<div class="highlight">...</div>``.

    ``lazy``: a long block's lines past its first chunk are written plain with their
    tokens in an attribute, highlighted by the page's script when read
    (:mod:`.lazy_code`); for pages a browser opens, not for e-books.

    Numbered blocks are Pygments' table layout (numbers in a column of their
    own), not one ``<span class="linenos">`` per line: the column costs a few
    bytes a line instead of thirty (a tenth of a big trace's HTML), and copying
    the code leaves the numbers behind.  ``hl_lines`` are emphasized, counted
    from 1 at the block's first line whatever ``first_line`` is, as Sphinx
    passes them to Pygments.
    """
    text = text.rstrip("\n")
    if language in HIGHLIGHTERS:
        escaped = HIGHLIGHTERS[language](text)
    else:
        if language == "torchtrace-fx":
            escaped = _FX_TOKENS.sub(_fx_span, "\n" + text)[1:]
        else:
            escaped = html.escape(text, quote=False)
        if language == "diff":
            escaped = "\n".join(_diff_line(line) for line in escaped.split("\n"))
    written = lazy_lines(escaped) if lazy and not hl_lines else None
    body = _emphasized(escaped, hl_lines) if written is None else written + "\n"
    code = f"<pre><span></span>{body}</pre>"
    if not linenos:
        return f'<div class="highlight">{code}</div>\n'
    last = first_line + escaped.count("\n")
    width = len(str(last))
    numbers = "\n".join(str(n).rjust(width) for n in range(first_line, last + 1))
    return (
        '<div class="highlight"><table class="highlighttable"><tr>'
        f'<td class="linenos"><div class="linenodiv"><pre>{numbers}</pre></div></td>'
        f'<td class="code"><div>{code}</div></td></tr></table></div>\n'
    )


def _emphasized(escaped: str, hl_lines: Collection[int]) -> str:
    """The lines, those in ``hl_lines`` emphasized as Pygments does.

    A line's emphasis is a span around the line, so a token's span that runs over
    several lines is first cut into one span per line (none empty) to nest in it.
    """
    if not hl_lines:
        return escaped + "\n"
    escaped = _TOKEN_SPAN.sub(_span_per_line, escaped)
    emphasized = set(hl_lines)
    return "".join(
        f'<span class="hll">{line}\n</span>' if n in emphasized else line + "\n"
        for n, line in enumerate(escaped.split("\n"), 1)
    )


#: A token's span (its text is escaped: no ``<`` inside, so one pass, linear).
_TOKEN_SPAN = re.compile(r'(<span class="[^"]+">)([^<]*)</span>')


def _span_per_line(match: re.Match[str]) -> str:
    opened, text = match.groups()
    if "\n" not in text:
        return match.group()
    return "\n".join(f"{opened}{line}</span>" if line else "" for line in text.split("\n"))


def is_fast(language: str, size: int) -> bool:
    """Whether a block is written here: the languages highlighted here, text, and huge blocks."""
    return language in FAST_LANGUAGES or size > FAST_ABOVE


#: Languages written without Pygments: highlighted here, or not at all (text, JSON).
FAST_LANGUAGES = frozenset({"torchtrace-fx", "text", "none", "json", "diff", *HIGHLIGHTERS})
#: Any block longer than this (characters) is written without Pygments.
FAST_ABOVE = 200_000
