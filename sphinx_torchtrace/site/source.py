"""``:no-source:``: leaving the user's source code out of what a page shows, in one place.

Trace text quotes user code in a few shapes: graph comments (``# File: f.py:3 in fn,
code: y = x + 1``), guard comments (``  # y = x + 1``), and the source line under each
``File "...", line N`` of a traceback.  Every page view passes such text through
:func:`strip_source`; each pattern is linear in the text's length.
"""

from __future__ import annotations

import re

_GRAPH_CODE = re.compile(r"(# File: [^\n]*?), code: [^\n]*")


def strip_source(text: str) -> str:
    """``text`` without the user code it quotes (see the module docstring)."""
    text = _GRAPH_CODE.sub(r"\1", text)
    out: list[str] = []
    after_file = False
    for line in text.split("\n"):
        code, sep, _comment = line.partition("  # ")
        if sep and "# File: " not in line and code.strip():  # a comment after code
            line = code.rstrip()
        if not (after_file and line.startswith("    ")):
            out.append(line)
        after_file = line.lstrip().startswith("File ")
    return "\n".join(out)


def maybe_strip(text: str, no_source: bool) -> str:
    return strip_source(text) if no_source else text
