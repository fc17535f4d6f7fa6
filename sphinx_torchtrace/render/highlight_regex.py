"""Python, C++ and traceback highlighting with one regular expression per language.

Generated output code, C++ kernels and stack traces cost a big build more in
Pygments than anything else.  These tokenizers find only what gets a color —
comments, strings, keywords, builtins, numbers — and write the CSS classes
Pygments' Python, C++ and traceback lexers use, so themes color both alike.

Python and C++ are one compiled pattern each: a run of plain text (names that
are not keywords, operators, spaces), then one token.  Plain runs are matched
in tight loops and the keyword check is a trie, so the scan costs little per
character and the Python callback runs once per colored token, not once per
name (about 25 MB/s on generated output code, Pygments about 1 MB/s).  A
traceback is read line by line, its source lines highlighted as Python.

The raw text is tokenized and every piece escaped; a token spanning lines (a
triple-quoted string, a block comment) is one span, however long (a span per
line, as Pygments writes them, was 3 % of the HTML of logs of generated code:
25.47 MB against 24.74 for ``corpus/big_training``); only a block with
emphasized lines has them cut per line, in :mod:`.highlight`.
"""

from __future__ import annotations

import functools
import html
import re
from collections.abc import Callable, Iterable
from typing import TypeAlias

_Trie: TypeAlias = "dict[str, _Trie]"


def _words(words: Iterable[str]) -> str:
    """Whole words as a trie-shaped pattern: a miss costs a step or two, not one per word."""
    root: _Trie = {}
    for word in words:
        node = root
        for char in word:
            node = node.setdefault(char, {})
        node[""] = {}  # a word ends here

    def emit(node: _Trie) -> str:
        alternatives = [re.escape(c) + emit(child) for c, child in sorted(node.items()) if c]
        if not alternatives:
            return ""
        body = alternatives[0] if len(alternatives) == 1 else f"(?:{'|'.join(alternatives)})"
        return f"(?:{body})?" if "" in node else body

    return rf"\b{emit(root)}\b"


def _scanner(plain: str, tokens: str) -> re.Pattern[str]:
    """Plain text (group 1), then a named token, one character no token takes, or the end.

    ASCII classes are a fifth faster; a non-ASCII letter is just not part of a name.
    """
    return re.compile(rf"((?:{plain})*)(?:{tokens}|[\s\S]|\Z)", re.ASCII)


def _escape(text: str) -> str:
    """``html.escape`` without quotes, skipped where there is nothing to escape (most runs)."""
    if "&" in text or "<" in text or ">" in text:
        return html.escape(text, quote=False)
    return text


def _span(css_class: str, token: str) -> str:
    """``token`` escaped in a span of class ``css_class``, one span however many lines it has."""
    return f'<span class="{css_class}">{_escape(token)}</span>'


#: Token classes that are one word (keywords, builtins, numbers): nothing to escape or split.
_WORD_CLASSES = frozenset({"k", "kn", "kc", "kr", "kt", "ow", "bp", "nb", "ne", "mi", "mf", "mh"})


def _substitute(match: re.Match[str]) -> str:
    """The HTML of one match: its plain run, escaped, then its token in a span."""
    kind = match.lastgroup
    if kind is None:  # plain text to the end, or up to a character no token took
        return _escape(match.group())
    plain, token = match.group(1, kind)
    if plain:  # inlined _escape: this runs once per token
        plain = plain.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
    if kind in _WORD_CLASSES:
        return f'{plain}<span class="{kind}">{token}</span>'
    if kind == "words":
        return plain + _words_html(token)
    if kind[0] == "s" and token.lstrip("rRbBuU")[:3] in _TRIPLES:
        head = plain.rstrip(" \t")  # a triple-quoted string first on its line: a docstring
        if head.endswith("\n") or not (head or match.start()):
            kind = "sd"
    return plain + _span(kind, token)


_TRIPLES = ('"""', "'''")


@functools.lru_cache(maxsize=4096)
def _words_html(token: str) -> str:
    """A keyword and what it names: ``def f``, ``import os``, ``#include <x>``.

    Cached: generated code repeats its imports and function names in every file.
    """
    parts = _BLANKS.split(token)
    classes = _WORDS_CLASSES[parts[0]]
    if parts[0] == "def" and parts[2][:2] == "__" == parts[2][-2:]:
        classes = ("k", "fm")  # a magic method
    words = zip(classes, parts[::2], strict=True)
    parts[::2] = [f'<span class="{kind}">{_escape(word)}</span>' for kind, word in words]
    return "".join(parts)


_BLANKS = re.compile(r"([ \t]+)")
#: The classes of the words of a ``words`` token, by its first word.
_WORDS_CLASSES = {
    "def": ("k", "nf"),
    "class": ("k", "nc"),
    "from": ("kn", "nn", "kn"),
    "import": ("kn", "nn"),
    "#include": ("cp", "cpf"),
}


def _triple(quote: str) -> str:
    """A triple-quoted string, closed or running to the end of the text."""
    q, qqq = quote, quote * 3
    return rf"{qqq}[^{q}\\]*(?:(?:\\[\s\S]?|{q}(?!{q}{q}))[^{q}\\]*)*(?:{qqq}|\Z)"


def _quoted(quote: str) -> str:
    """A one-line string, closed or ending with its line (a backslash continues it)."""
    return rf"{quote}[^{quote}\\\n]*(?:\\[\s\S][^{quote}\\\n]*)*{quote}?"


_PY_KEYWORDS = (
    "assert async await break continue del elif else except finally for global if lambda "
    "nonlocal pass raise return try while with yield as def class"
).split()
_PY_BUILTINS = (  # Pygments' list
    "__import__ abs aiter all any bin bool bytearray breakpoint bytes callable chr classmethod "
    "compile complex delattr dict dir divmod enumerate eval filter float format frozenset "
    "getattr globals hasattr hash hex id input int isinstance issubclass iter len list locals "
    "map max memoryview min next object oct open ord pow print property range repr reversed "
    "round set setattr slice sorted staticmethod str sum super tuple type vars zip"
).split()
_PY_EXCEPTIONS = (  # Pygments' list, less the Windows and VMS ones
    "ArithmeticError AssertionError AttributeError BaseException BlockingIOError "
    "BrokenPipeError BufferError BytesWarning ChildProcessError ConnectionAbortedError "
    "ConnectionError ConnectionRefusedError ConnectionResetError DeprecationWarning "
    "EOFError EncodingWarning EnvironmentError Exception FileExistsError FileNotFoundError "
    "FloatingPointError FutureWarning GeneratorExit IOError ImportError ImportWarning "
    "IndentationError IndexError InterruptedError IsADirectoryError KeyError "
    "KeyboardInterrupt LookupError MemoryError ModuleNotFoundError NameError "
    "NotADirectoryError NotImplementedError OSError OverflowError PendingDeprecationWarning "
    "PermissionError ProcessLookupError RecursionError ReferenceError ResourceWarning "
    "RuntimeError RuntimeWarning StopAsyncIteration StopIteration SyntaxError SyntaxWarning "
    "SystemError SystemExit TabError TimeoutError TypeError UnboundLocalError "
    "UnicodeDecodeError UnicodeEncodeError UnicodeError UnicodeTranslateError UnicodeWarning "
    "UserWarning ValueError Warning ZeroDivisionError"
).split()
_PY_PSEUDO = "self cls Ellipsis NotImplemented".split()
_PY_OTHER = "import from True False None and or not in is".split()
#: Every word with a class of its own: a plain name is none of these.
_PY_RESERVED = _PY_KEYWORDS + _PY_BUILTINS + _PY_EXCEPTIONS + _PY_PSEUDO + _PY_OTHER
_PY_PREFIX = r"[rRbBfFuU]{1,2}"
_INT = r"\d[\d_]*"

PYTHON = _scanner(
    # A name after a dot is an attribute, never a keyword: no check.
    rf"\.[A-Za-z_]\w*|[^\w#\"'@.]+"
    rf"|(?!{_words(_PY_RESERVED)}|{_PY_PREFIX}[\"'])[A-Za-z_]\w*"
    rf"|\.(?!\d)",
    # The most frequent tokens first: numbers.
    rf"(?P<mh>\b0[xX][\da-fA-F_]+)"
    rf"|(?P<mf>(?:\b{_INT}\.(?:{_INT})?|(?<![\w.])\.{_INT})(?:[eE][+-]?{_INT})?"
    rf"|\b{_INT}[eE][+-]?{_INT})"
    rf"|(?P<mi>\b{_INT})"
    rf"|(?P<c1>#[^\n]*)"
    rf"|(?P<s2>(?:\b{_PY_PREFIX})?(?:{_triple(chr(34))}|{_quoted(chr(34))}))"
    rf"|(?P<s1>(?:\b{_PY_PREFIX})?(?:{_triple(chr(39))}|{_quoted(chr(39))}))"
    rf"|(?P<words>\b(?:def|class)[ \t]+[A-Za-z_]\w*"
    rf"|\bfrom[ \t]+[\w.]+[ \t]+import\b|\bimport[ \t]+[\w.]+)"
    rf"|(?P<k>{_words(_PY_KEYWORDS)})"
    rf"|(?P<kn>\b(?:import|from)\b)"
    rf"|(?P<kc>\b(?:True|False|None)\b)"
    rf"|(?P<ow>\b(?:and|or|not|in|is)\b)"
    rf"|(?P<bp>(?<!\.){_words(_PY_PSEUDO)})"
    rf"|(?P<nb>(?<!\.){_words(_PY_BUILTINS)})"
    rf"|(?P<ne>(?<!\.){_words(_PY_EXCEPTIONS)})"
    rf"|(?P<nd>(?<!\S)@[A-Za-z_][\w.]*)",
)

_CPP_KEYWORDS = (
    "if else for while do return break continue switch case default goto static const "
    "constexpr extern namespace using template typename class struct union enum public "
    "private protected virtual operator new delete this sizeof auto decltype noexcept "
    "volatile register static_cast reinterpret_cast const_cast dynamic_cast typedef alignas "
    "alignof explicit friend mutable override final static_assert thread_local throw try catch "
    "typeid asm export"
).split()
_CPP_TYPES = (
    "void bool char short int long float double signed unsigned size_t int8_t int16_t "
    "int32_t int64_t uint8_t uint16_t uint32_t uint64_t char16_t char32_t wchar_t half bfloat16"
).split()
_CPP_BUILTINS = ["true", "false", "nullptr", "NULL"]
_CPP_RESERVED = ["inline", "restrict"]  # Pygments' Keyword.Reserved

CPP = _scanner(
    rf"[^\w#/\"'.]+|\.(?!\d)|/(?![/*])"
    rf"|(?!{_words(_CPP_KEYWORDS + _CPP_TYPES + _CPP_BUILTINS + _CPP_RESERVED)})[A-Za-z_]\w*",
    # The most frequent tokens first: ``static_cast<int64_t>(16L)``.
    rf"(?P<k>{_words(_CPP_KEYWORDS)})"
    rf"|(?P<kt>{_words(_CPP_TYPES)})"
    r"|(?P<mh>\b0[xX][\da-fA-F']+[uUlL]*)"
    r"|(?P<mf>(?:(?:\b\d+\.\d*|(?<![\w.])\.\d+)(?:[eE][+-]?\d+)?|\b\d+[eE][+-]?\d+)[fFlL]?"
    r"|\b\d+[fF])"
    r"|(?P<mi>\b\d+[uUlL]*)"
    r"|(?P<c1>//[^\n]*)"
    r"|(?P<cm>/\*[^*]*(?:\*(?!/)[^*]*)*(?:\*/|\Z))"
    r'|(?P<words>#include[ \t]+(?:<[^>\n]*>|"[^"\n]*"))'
    r"|(?P<cp>#[^\n\\]*(?:\\[\s\S][^\n\\]*)*)"
    rf"|(?P<s>{_quoted(chr(34))})"
    r"|(?P<sc>'(?:\\[^\n]|[^'\\\n])+')"
    rf"|(?P<kr>{_words(_CPP_RESERVED)})"
    rf"|(?P<nb>{_words(_CPP_BUILTINS)})",
)


def highlight_python(text: str) -> str:
    """Python source as escaped HTML with Pygments' span classes."""
    return PYTHON.sub(_substitute, text)


def highlight_cpp(text: str) -> str:
    """C++ source as escaped HTML with Pygments' span classes."""
    return CPP.sub(_substitute, text)


_PYTB_LINE = re.compile(
    r"(?P<gt>Traceback \(most recent call last\):"
    r"|During handling of the above exception, another exception occurred:"
    r"|The above exception was the direct cause of the following exception:)\s*"
    r'|[ \t]*File (?P<path>"[^"]*"), line (?P<line>\d+)(?:, in (?P<name>.*))?'
    r"|[ \t]*(?P<pm>[\^~]+)[ \t]*"
    r"|(?P<gr>[A-Za-z_][\w.]*(?:Error|Exception|Warning|Unsupported|Exit|Interrupt))(?::.*)?"
)
#: Within a traceback (source lines are indented), any name at column 0 is the exception.
_PYTB_RAISED = re.compile(r"(?P<gr>[A-Za-z_][\w.]*)(?::.*)?")
#: The class of each group of a traceback line.
_PYTB_CLASSES = {"gt": "gt", "path": "nb", "line": "m", "name": "n", "pm": "pm", "gr": "gr"}


def _pytb_line(match: re.Match[str]) -> str:
    """A line of a traceback's own shapes: its named groups in spans, the rest escaped."""
    line, pos, out = match.string, 0, []
    for group in match.re.groupindex:  # in the order they appear in
        start, end = match.span(group)
        if start < end:
            piece = line[start:end]
            out.append(
                html.escape(line[pos:start], quote=False) + _span(_PYTB_CLASSES[group], piece)
            )
            pos = end
    out.append(html.escape(line[pos:], quote=False))
    return "".join(out)


def highlight_pytb(text: str) -> str:
    """A Python traceback, colored as Pygments' traceback lexer does.

    Source lines (indented) are Python.  The exception's message, from the
    exception line (or any other line at column 0) to the next traceback or
    frame, stays plain, as in Pygments: it is prose, where an apostrophe must
    not open a string.
    """
    out = []
    in_traceback = True
    for line in text.split("\n"):
        match = _PYTB_LINE.fullmatch(line)
        if match is None and in_traceback:
            match = _PYTB_RAISED.fullmatch(line)
        if match is not None:
            out.append(_pytb_line(match))
            in_traceback = match["gr"] is None
        elif in_traceback and line[:1] in (" ", "\t"):
            out.append(highlight_python(line))
        else:
            in_traceback = in_traceback and not line  # prose at column 0 ends the traceback
            out.append(html.escape(line, quote=False))
    return "\n".join(out)


#: The highlighter of each language, from raw text to escaped HTML with Pygments' classes.
HIGHLIGHTERS: dict[str, Callable[[str], str]] = {
    "python": highlight_python,
    "cpp": highlight_cpp,
    "pytb": highlight_pytb,
}
