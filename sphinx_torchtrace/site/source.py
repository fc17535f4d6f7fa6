"""``:no-source:``: leaving the user's source code out of what a page shows, in one place.

Trace text quotes user code in a few shapes: graph comments (``# File: f.py:3 in fn,
code: y = x + 1``), guard comments (``  # y = x + 1``), and the source line under each
``File "...", line N`` of a traceback.  Every page view passes such text through
:func:`strip_source`.  Trace text is untrusted, so the work is plain string searches,
one pass per line: linear in the text's length whatever it holds (a regular expression
with a lazy ``[^\\n]*?`` took minutes on a line of repeated ``# File: ``).
"""

from __future__ import annotations

_GRAPH_FILE = "# File: "
_GRAPH_CODE = ", code: "
_COMMENT = "  # "


def strip_source(text: str) -> str:
    """``text`` without the user code it quotes (see the module docstring)."""
    out: list[str] = []
    after_file = False
    for line in text.split("\n"):
        line = _without_graph_code(line)
        code, sep, _comment = line.partition(_COMMENT)
        if sep and _GRAPH_FILE not in line and code.strip():  # a comment after code
            line = code.rstrip()
        if not (after_file and line.startswith("    ")):
            out.append(line)
        after_file = line.lstrip().startswith("File ")
    return "\n".join(out)


def _without_graph_code(line: str) -> str:
    """``# File: f.py:3 in fn, code: y = x + 1`` → ``# File: f.py:3 in fn``.

    The first ``, code: `` after the first ``# File: `` ends the line: what the
    pattern ``(# File: [^\\n]*?), code: [^\\n]*`` replaces, found in linear time.
    """
    start = line.find(_GRAPH_FILE)
    if start < 0:
        return line
    cut = line.find(_GRAPH_CODE, start + len(_GRAPH_FILE))
    return line if cut < 0 else line[:cut]


def maybe_strip(text: str, no_source: bool) -> str:
    return strip_source(text) if no_source else text
