"""A Pygments lexer for FX graphs as ``print_readable()`` writes them.

Graphs are most of a trace's text, and Pygments' Python lexer handles them at
well under 1 MB/s (and stumbles on ``class <lambda>``).  This lexer knows the
few shapes an FX graph line takes — node name, type annotation, ATen call,
comment — and matches them with one compiled pattern, so it is several times
faster and highlights what a reader looks for: node names and operators.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from pygments.lexer import Lexer
from pygments.token import (
    Comment,
    Keyword,
    Name,
    Number,
    String,
    Text,
    _TokenType,
)

from .fx_tokens import alternatives

_TOKENS = re.compile(alternatives())
_TOKEN_TYPES: dict[str, _TokenType] = {
    "c1": Comment.Single,
    "s": String,
    "nv": Name.Variable,
    "nf": Name.Function,
    "k": Keyword,
    "m": Number,
}


class FxGraphLexer(Lexer):
    """Readable FX graphs (Dynamo, AOT autograd and Inductor graphs in a trace)."""

    name = "FX graph"
    aliases = ["torchtrace-fx"]  # noqa: RUF012 - Pygments reads these class attributes
    filenames = []  # noqa: RUF012

    def get_tokens_unprocessed(self, text: str) -> Iterator[tuple[int, _TokenType, str]]:
        # A leading newline lets node names on the first line match the look-behind.
        text = "\n" + text
        pos = 1
        for match in _TOKENS.finditer(text, 1):
            start = match.start()
            if start > pos:
                yield pos - 1, Text, text[pos:start]
            kind = match.lastgroup or "m"
            value = match.group()
            if kind == "nv":
                stripped = value.lstrip()
                if len(stripped) < len(value):
                    yield start - 1, Text, value[: len(value) - len(stripped)]
                yield start - 1 + len(value) - len(stripped), Name.Variable, stripped
            else:
                yield start - 1, _TOKEN_TYPES[kind], value
            pos = match.end()
        if pos < len(text):
            yield pos - 1, Text, text[pos:]
