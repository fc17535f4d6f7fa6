"""The tokens of an FX graph as ``print_readable()`` writes it: one table for both highlighters.

The Pygments lexer (:mod:`.fx_lexer`, for builders that use Pygments) and the fast
HTML path (:mod:`.highlight`) both build their patterns from :data:`FX_TOKENS`, so
a graph is colored alike whichever path draws it.  Keys are Pygments' short CSS
classes.
"""

from __future__ import annotations

#: Module prefixes of operator calls (``torch.relu``, ``aten.add.Tensor``).
OPERATOR_MODULES = r"(?:torch|aten|prims|operator|_operator)"
#: Words shown as keywords.
KEYWORDS = r"(?:def|class|return|None|True|False|import|from|self)"

#: (CSS class, pattern) in the order they are tried.  ``nv`` (a node name) needs the
#: text to start with a newline: its look-behind finds the start of a line.
FX_TOKENS: tuple[tuple[str, str], ...] = (
    ("c1", r"\#[^\n]*"),
    ("s", r'"[^"\n]*"|\'[^\'\n]*\''),
    ("nv", r"(?<=\n)[ \t]+[A-Za-z_]\w*(?=: |\s=\s)"),
    ("nf", rf"\b{OPERATOR_MODULES}\.[\w.]+"),
    ("k", rf"\b{KEYWORDS}\b"),
    ("m", r"\b\d+(?:\.\d+)?(?:e[+-]?\d+)?\b"),
)

#: Text that starts no token: punctuation runs, and names that are neither an
#: operator module nor a keyword.  A line's indentation is never plain (it may start
#: an ``nv``).
FX_PLAIN = (
    r"(?<!\n)[^\w#\"'\n]+|\n"
    rf"|(?!{OPERATOR_MODULES}\.|{KEYWORDS}\b)[A-Za-z_]\w*"
)


def alternatives() -> str:
    """The tokens as named alternatives of one pattern."""
    return "|".join(f"(?P<{name}>{pattern})" for name, pattern in FX_TOKENS)
