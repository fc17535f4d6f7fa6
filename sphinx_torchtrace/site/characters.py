"""Which characters of a log no output can hold, said once for every layer above the model.

Trace text may hold any code point.  Output formats cannot: XML and HTML forbid C0
controls (but TAB, LF, CR) and call DEL and C1 controls errors, UTF-8 cannot encode lone
surrogates, and a title, a name or an ``objects.inv`` line must be one line, which every
boundary ``str.splitlines()`` knows would break.
"""

from __future__ import annotations

import re

#: C0 controls but TAB, LF and CR; DEL; C1 controls; lone surrogates.
UNPRINTABLE = "\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f\ud800-\udfff"
#: Every line boundary of ``str.splitlines()``.
LINE_BREAKS = "\n\r\x0b\x0c\x1c-\x1e\x85\u2028\u2029"

_UNPRINTABLE_OR_CR = re.compile(f"[{UNPRINTABLE}\r]")
_LINE_BREAKS = re.compile(f"[{LINE_BREAKS}]")


def printable(text: str) -> str:
    """``text`` with CR LF as LF and every unprintable character (a lone CR too) as U+FFFD.

    Line numbers stay the model's: only LF starts a line, as in the model.
    """
    return _UNPRINTABLE_OR_CR.sub("\ufffd", text.replace("\r\n", "\n"))


def one_line(text: str) -> str:
    """:func:`printable` text with each line boundary as a space."""
    return _LINE_BREAKS.sub(" ", printable(text))


#: Characters of a word (a run without spaces) that inline text keeps: writers that wrap
#: lines (Sphinx's text builder, LaTeX) take time with the square of a word's length or
#: worse, and a log may hold a megabyte-long name.  Real names and paths are far shorter.
LONGEST_WORD = 1000
# Tried only where a word starts, so each word is scanned once: linear in the text.
_LONG_WORD = re.compile(rf"(?<!\S)\S{{{LONGEST_WORD + 1},}}")


def short_words(text: str) -> str:
    """``text`` with each word longer than :data:`LONGEST_WORD` cut, and the cut said."""
    return _LONG_WORD.sub(
        lambda m: f"{m.group()[:LONGEST_WORD]}… ({len(m.group()) - LONGEST_WORD} more characters)",
        text,
    )
