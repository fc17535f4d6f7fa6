"""``:no-source:``: leaving the user's source code out of what a page shows, in one place.

Trace text quotes user code in a few shapes: graph comments (``# File: f.py:3 in fn,
code: y = x + 1``), guard comments (``  # y = x + 1``), and the source line under each
``File "...", line N, in fn`` of a traceback, as lines of their own or inside a string
that holds the traceback: JSON (``...line 3, in fn\\n    y = x + 1\\n``, as metrics
and provenance fields log them) or a Python repr split over lines (``'line 3, in
fn\\n'`` then ``'    y = x + 1\\n'``, as AOT metadata prints stack traces).  Every page
view passes such text through :func:`strip_source`.  Trace text is untrusted, so the
work is plain string searches, one pass per line: linear in the text's length whatever
it holds (a regular expression with a lazy ``[^\\n]*?`` took minutes on a line of
repeated ``# File: ``).
"""

from __future__ import annotations

_GRAPH_FILE = "# File: "
_GRAPH_CODE = ", code: "
_COMMENT = "  # "
_ESCAPED_BREAK = "\\n"  # a backslash and an n: a line break inside a quoted string
_FILE = "# File "  # ``# File "f.py", line 3, in fn, code: ...`` in a message or JSON string
_FRAME_IN = ", in "


def strip_source(text: str) -> str:
    """``text`` without the user code it quotes (see the module docstring)."""
    out: list[str] = []
    after_file = False
    after_repr_frame = False  # the previous line ended a traceback's frame line in a repr
    in_frame = False  # inside the fragments of such a frame line
    for line in text.split("\n"):
        line = _without_escaped_code(_without_graph_code(line))
        line = _without_comment(line)
        body = line[_log_prefix_end(line) :]  # a TORCH_LOGS line: its message
        stripped = line.lstrip()
        quoted = stripped[:1] in ("'", '"')
        quoted_code = after_repr_frame and quoted and stripped[1:5] == "    "
        if not (after_file and body.startswith("    ")) and not quoted_code:
            out.append(line)
        after_file = body.lstrip().startswith("File ") or any(
            marker in body for marker in _QUOTES_NEXT_LINE
        )
        # a repr splits ``'line 3, in fn\\n'`` over fragments: ``'line 3, in '``, ``'fn\\n'``
        in_frame = quoted and (in_frame or (_FRAME_IN in stripped and "line " in stripped))
        after_repr_frame = in_frame and stripped.endswith(("\\n'", '\\n"'))
        in_frame = in_frame and not after_repr_frame
    return "\n".join(out)


# Dynamo's TORCH_LOGS messages whose next message is the user's source line
# (``+dynamo``: ``[__trace_source] TRACE starts_line f.py:3 in fn`` then ``    y = x + 1``).
_QUOTES_NEXT_LINE = ("TRACE starts_line ", "TRACE FX call ")
# How far into a line a TORCH_LOGS prefix may reach (the glog prefix names a file).
_PREFIX_REACH = 600


def _log_prefix_end(line: str) -> int:
    """Where a TORCH_LOGS line's message starts: after torchrun's ``[rank0]:``, the glog
    prefix (``V1122 12:43:35.056000 11 torch/_dynamo/x.py:5] ``) or the older
    ``[2024-03-25 11:07:02,184] logger: [DEBUG] ``, a compile id (``[0/0] ``) and a
    logger's tag (``[__trace_source] ``); 0 for a line without such a prefix.  Plain
    searches within :data:`_PREFIX_REACH` characters: linear."""
    start = 0
    if line.startswith("[rank"):
        start = line.find("]:", 0, 20) + 2 if line.find("]:", 0, 20) > 0 else 0
    head = line[start : start + 5]
    if head[:1] in "VIWEC" and head[1:5].isdigit():
        end = line.find("] ", start, start + _PREFIX_REACH)
    elif head[:1] == "[" and head[1:5].isdigit():
        level = line.find(": [", start, start + _PREFIX_REACH)
        end = line.find("] ", level, level + 20) if level > 0 else -1
    else:
        return 0
    if end < 0:
        return 0
    end += 2
    for _ in range(2):  # a compile id, then a logger's tag
        if line.startswith("[", end):
            close = line.find("] ", end, end + 40)
            if close > 0:
                end = close + 2
    return end


def _without_comment(line: str) -> str:
    """``guard(x)  # x = x + 1`` → ``guard(x)``: a comment after code quotes the source.

    Comments that name a file (``# File: ...``, ``# File "f.py", ...``, their code
    already cut) are not source; the first other comment after code ends the line.
    """
    if _GRAPH_FILE in line:
        return line
    at = line.find(_COMMENT)
    while at >= 0:
        after = at + len(_COMMENT) + len("File ")
        named = line.startswith("File ", at + len(_COMMENT))
        if not (named and line[after : after + 1] in ('"', "\\")):
            code = line[:at]
            return code.rstrip() if code.strip() else line
        at = line.find(_COMMENT, at + len(_COMMENT))
    return line


def _without_escaped_code(line: str) -> str:
    """A traceback inside a string of one line, its source lines left out.

    The string's escaped line breaks (a backslash and ``n``) split it; a part that
    follows a ``File ..., line N, in fn`` part and starts with indentation is code,
    up to the end of the string that holds it (see :func:`_string_end`).
    """
    if _ESCAPED_BREAK not in line or _FRAME_IN not in line:
        return line
    parts = line.split(_ESCAPED_BREAK)
    kept = [parts[0]]
    for previous, part in zip(parts, parts[1:], strict=False):
        if part.startswith("    ") and "File " in previous and _FRAME_IN in previous:
            level = len(previous) - len(previous.rstrip("\\"))  # a JSON-in-JSON string's
            end = _string_end(part, level)
            if end < 0:
                continue
            # the string ends here: no line break (its escape's backslashes go too)
            kept[-1] = kept[-1][: len(kept[-1]) - level] + part[end:]
            continue
        kept.append(part)
    return _ESCAPED_BREAK.join(kept)


def _string_end(part: str, level: int) -> int:
    """Where the string holding ``part`` ends: its quote with ``level`` backslashes before it.

    A line break escaped with ``level`` extra backslashes lies in a string whose own
    quotes carry ``level`` backslashes, while quotes of the code in it carry more
    (``2 * level + 1``): the first quote with exactly ``level`` ends the string.  -1
    when the string goes on past ``part``.  Each quote counts only the backslashes
    since the previous quote: linear.
    """
    start = 0
    while True:
        quote = part.find('"', start)
        if quote < 0:
            return -1
        run = quote - len(part[start:quote].rstrip("\\")) - start
        if run == level:
            return quote - run
        start = quote + 1


def _without_graph_code(line: str) -> str:
    """``# File: f.py:3 in fn, code: y = x + 1`` → ``# File: f.py:3 in fn``.

    The first ``, code: `` after the first ``# File: `` ends the line: what the
    pattern ``(# File: [^\\n]*?), code: [^\\n]*`` replaces, found in linear time.
    Messages quote the comment as ``# File "f.py", line 3, in fn, code: ...``: cut
    the same way; inside a JSON string (``# File \\"f.py\\", ...``, at any depth)
    only up to the string's next line break, for every such comment of the line.
    """
    start = line.find(_GRAPH_FILE)
    if start >= 0:
        cut = line.find(_GRAPH_CODE, start + len(_GRAPH_FILE))
        return line if cut < 0 else line[:cut]
    out: list[str] = []
    at = 0
    search = 0
    while True:
        start = line.find(_FILE, search)
        if start < 0:
            out.append(line[at:])
            return "".join(out)
        quote = start + len(_FILE)
        while quote < len(line) and line[quote] == "\\":
            quote += 1
        search = quote
        if quote >= len(line) or line[quote] != '"':
            continue  # not a quoted file name
        cut = line.find(_GRAPH_CODE, quote)
        if cut < 0:
            out.append(line[at:])
            return "".join(out)
        out.append(line[at:cut])
        end = line.find(_ESCAPED_BREAK, cut) if quote > start + len(_FILE) else -1
        if end < 0:  # unescaped: the code runs to the end of the line
            return "".join(out)
        while end > cut and line[end - 1] == "\\":  # a deeper string's break: all of it
            end -= 1
        at = search = end


def maybe_strip(text: str, no_source: bool) -> str:
    return strip_source(text) if no_source else text
