"""Which characters of a log no output can hold, said once for every layer above the model.

Trace text may hold any code point.  Output formats cannot: XML and HTML forbid C0
controls (but TAB, LF, CR) and the noncharacters U+FFFE and U+FFFF (an EPUB's XHTML that
holds one is no XML), call DEL and C1 controls errors, UTF-8 cannot encode lone
surrogates, and a title, a name or an ``objects.inv`` line must be one line, which every
boundary ``str.splitlines()`` knows would break.  Pages show each such character as a
visible escape (``\\x07``, ``\\uffff``), as consoles do.
"""

from __future__ import annotations

import re

from ..trace.secrets import mask_secrets

#: C0 controls but TAB, LF and CR; DEL; C1 controls; lone surrogates; U+FFFE and U+FFFF.
UNPRINTABLE = "\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f\ud800-\udfff\ufffe\uffff"
#: Every line boundary of ``str.splitlines()``.
LINE_BREAKS = "\n\r\x0b\x0c\x1c-\x1e\x85\u2028\u2029"

_UNPRINTABLE_OR_CR = re.compile(f"[{UNPRINTABLE}\r]")
_LINE_BREAKS = re.compile(f"[{LINE_BREAKS}]")


def printable(text: str) -> str:
    """``text`` with CR LF as LF and every unprintable character (a lone CR too) as a
    visible escape (``\\x1b``, ``\\uffff``): what the log holds is shown, and every
    output format (XHTML included) can hold it.

    Line numbers stay the model's: only LF starts a line, as in the model.
    """
    return _UNPRINTABLE_OR_CR.sub(_escaped, text.replace("\r\n", "\n"))


#: The invisible and bidirectional format characters: zero-width spaces and joiners, marks,
#: embeddings, overrides and isolates, the byte order mark.
FORMAT_CHARACTERS = "\u200b-\u200f\u202a-\u202e\u2066-\u2069\ufeff"
#: What a console must never receive raw from an input: C0 controls (TAB and line breaks
#: too: a name that starts a new line can start a CI workflow command such as ``::error``),
#: DEL, C1 controls, Unicode's line breaks, the invisible and bidirectional format
#: characters (text that reads differently than it is), lone surrogates, U+FFFE, U+FFFF.
_BEYOND_C0 = f"\x7f-\x9f\u2028\u2029{FORMAT_CHARACTERS}\ud800-\udfff\ufffe\uffff"
CONSOLE_UNSAFE = "\x00-\x1f" + _BEYOND_C0
_CONSOLE_UNSAFE = re.compile(f"[{CONSOLE_UNSAFE}]")


def visible_escape(match: re.Match[str]) -> str:
    """The matched character as an escape anyone can read: ``\\x1b``, ``\\u202e``."""
    code = ord(match.group())
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


_escaped = visible_escape


def console_text(text: str) -> str:
    """``text`` for a terminal or a CI log: every character of :data:`CONSOLE_UNSAFE` as a
    visible escape (``\\x1b``, ``\\u202e``), so that an input can neither draw over the
    output, colour it, reorder it, nor start a line of its own; and what looks secret
    masked as ``redact`` masks it (a terminal's scrollback and a CI log are published)."""
    return _CONSOLE_UNSAFE.sub(_escaped, mask_secrets(text))


#: :data:`CONSOLE_UNSAFE` but the line feed, which JSON text holds only between tokens
#: (``json.dumps`` escapes every C0 control inside strings).
_JSON_UNSAFE = re.compile(f"[\x00-\x09\x0b-\x1f{_BEYOND_C0}]")


def console_json(text: str) -> str:
    """JSON text (``json.dumps(..., ensure_ascii=False)``) for a terminal, still the same
    JSON: each other character :func:`console_text` escapes can only be inside a string,
    and is written there as a ``\\uXXXX`` escape; what looks secret is masked (the mask
    holds no character JSON escapes)."""
    return _JSON_UNSAFE.sub(lambda m: f"\\u{ord(m.group()):04x}", mask_secrets(text))


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
