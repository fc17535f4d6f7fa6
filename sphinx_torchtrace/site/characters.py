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
