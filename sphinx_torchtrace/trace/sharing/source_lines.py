"""Lines of the user's source code that a log quotes, found and replaced in place.

torch quotes the code it compiled in four shapes: graph comments (``# File: f.py:3 in fn,
code: y = x + 1``), guard comments (``guard  # y = x + 1  # proj/f.py:3 in fn``), the
line under each ``File "f.py", line 3, in fn`` of a traceback (also inside a JSON string,
``...in fn\\n    y = x + 1\\n...``), and the ``loc`` of each frame of a logged stack
(``{"filename": 1, "loc": "y = x + 1"}``, the file interned by a ``str`` record).

``sphinx-torchtrace redact`` replaces each with :data:`SOURCE_REMOVED` and ``check``
reports the same places: one finder for both.  Code of library files (torch, the standard
library, site-packages: :func:`~.graph_breaks.is_library_file`) stays; it is public and
it is what a maintainer reads.  Nothing is added or removed but the code itself, so lines
stay where they were and JSON stays JSON (the code inside a JSON string ends where the
string does).  Patterns are bounded or start with literals: linear in the text.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from typing import NamedTuple

from ..analyses.graph_breaks import is_library_file

#: What stands for a line of source code that was removed.
SOURCE_REMOVED = "[source removed]"

#: Shapes of quoted source, as ``check`` names them.
GRAPH = "in a graph comment"
GUARD = "in a guard comment"
TRACEBACK = "in a traceback"
STACK = "in a logged stack frame"

_TRIGGER = re.compile(r'# File: |File \\{0,7}"|  # [^\s#"\\]{1,1000}:\d+ in ')
_GRAPH = re.compile(r"# File: (?P<file>[^\n]{0,1000}?):\d+ in [^\n]{0,300}?, code: ")
_FRAME = re.compile(r'File \\{0,7}"(?P<file>[^"\n]{0,1000}?)\\{0,7}", line \d+, in ')
_PLACE = re.compile(r'  # (?P<file>[^\s#"\\]{1,1000}):\d+ in ')
#: A frame's ``loc`` in JSON, and the ``filename`` before it in the same frame.
_LOC = re.compile(r'"loc": "(?P<code>(?:[^"\\\n]|\\.){0,100000})"')
_FILENAME = re.compile(r'"filename": (?:(?P<id>\d{1,12})|"(?P<name>(?:[^"\\\n]|\\.){0,4096})")')
_FRAME_REACH = 600  # characters before a ``loc`` searched for its frame's file


#: Whether the line at an offset is JSON; True or False for a whole text.
JsonAt = bool | Callable[[int], bool]


def _ALWAYS(offset: int) -> bool:
    return True


def _NEVER(offset: int) -> bool:
    return False


class Edit(NamedTuple):
    """One quoted piece of source: where it is, and which shape it was in."""

    start: int
    end: int
    shape: str


class SourceFinder:
    """Finds the user's source code in log text (``files``: the log's interned file names,
    by id, for stack frames that name their file by number)."""

    def __init__(
        self,
        files: Mapping[int, str] | None = None,
        library: Callable[[str], bool] = is_library_file,
    ) -> None:
        self.files: Mapping[int, str] = files if files is not None else {}
        self.library = library

    def find(self, text: str, json_at: JsonAt) -> list[Edit]:
        """The source in ``text`` in order, none overlapping.  ``json_at``: whether the line
        at an offset is JSON (an envelope, a JSON payload), whose line breaks inside strings
        are ``\\n`` (True or False: all of ``text`` is, or is not)."""
        if isinstance(json_at, bool):
            json_at = _ALWAYS if json_at else _NEVER
        edits: list[Edit] = []
        if '"loc"' in text:
            edits += self._stack_frames(text, json_at)
        if "File" in text or "  # " in text:
            edits += self._lines(text, json_at)
        if len(edits) < 2:
            return edits
        edits.sort()
        kept: list[Edit] = []
        for e in edits:
            if not kept or e.start >= kept[-1].end:
                kept.append(e)
        return kept

    def remove(self, text: str, json_at: JsonAt) -> tuple[str, list[Edit]]:
        """``text`` with its source replaced by :data:`SOURCE_REMOVED`, and what was."""
        edits = self.find(text, json_at)
        if not edits:
            return text, edits
        pieces: list[str] = []
        pos = 0
        for e in edits:
            pieces += (text[pos : e.start], SOURCE_REMOVED)
            pos = e.end
        pieces.append(text[pos:])
        return "".join(pieces), edits

    # -- the shapes ----------------------------------------------------------------------

    def _user(self, name: str) -> bool:
        return not self.library(name.replace("\\\\", "\\"))

    def _stack_frames(self, text: str, json_at: Callable[[int], bool]) -> list[Edit]:
        edits = []
        for m in _LOC.finditer(text):
            code = m["code"]
            if not code or code == SOURCE_REMOVED or not json_at(m.start()):
                continue
            before = text[max(0, m.start() - _FRAME_REACH) : m.start()]
            frame = before[before.rfind("{") + 1 :]
            named = None
            for f in _FILENAME.finditer(frame):
                named = f
            if named is not None:
                name = named["name"] if named["id"] is None else self.files.get(int(named["id"]))
                if name is not None and not self._user(name):
                    continue
            edits.append(Edit(m.start("code"), m.end("code"), STACK))
        return edits

    def _lines(self, text: str, json_at: Callable[[int], bool]) -> list[Edit]:
        edits: list[Edit] = []
        done = -1  # the start of the last line whose comments were looked at
        for trigger in _TRIGGER.finditer(text):
            json_mode = json_at(trigger.start())
            start, end, after = _line(text, trigger.start(), json_mode)
            if not trigger.group().startswith("File"):
                if start != done:
                    done = start
                    self._line_shapes(text, start, end, json_mode, edits)
                continue
            # a traceback's frame line: the code is the next line (a JSON string may hold
            # several tracebacks, so a frame can follow code on one line)
            frame = _FRAME.match(text, trigger.start(), end)
            if frame is None or not self._user(frame["file"]):
                continue
            if text.startswith("\t", after) and not json_mode:
                after += 1  # a payload line's TAB: torch's, not the traceback's
            if after < len(text) and text[after] == " ":
                _, next_end, _ = _line(text, after, json_mode)
                code = after + len(text[after:next_end]) - len(text[after:next_end].lstrip())
                stop = _code_end(text, code, next_end, json_mode)
                if stop > code and text[code:stop] != SOURCE_REMOVED:
                    edits.append(Edit(code, stop, TRACEBACK))
        return edits

    def _line_shapes(
        self, text: str, start: int, end: int, json_mode: bool, edits: list[Edit]
    ) -> None:
        graph = _GRAPH.search(text, start, end)
        if graph is not None:
            if self._user(graph["file"]):
                stop = _code_end(text, graph.end(), end, json_mode)
                if stop > graph.end() and text[graph.end() : stop] != SOURCE_REMOVED:
                    edits.append(Edit(graph.end(), stop, GRAPH))
            return
        first = text.find("  # ", start, end)
        last = text.rfind("  # ", start, end)
        if first < 0 or first == last or not text[start:first].strip():
            return
        place = _PLACE.match(text, last, end)
        if place is None or place["file"].startswith("torch/") or not self._user(place["file"]):
            return
        code = first + len("  # ")
        if last > code and text[code:last] != SOURCE_REMOVED:
            edits.append(Edit(code, last, GUARD))


def _line(text: str, pos: int, json_mode: bool) -> tuple[int, int, int]:
    """The line around ``pos``: its start, its end, and where the next line starts.  In
    JSON text an escaped line break (a backslash and ``n``) ends a line too."""
    start = text.rfind("\n", 0, pos) + 1
    end = text.find("\n", pos)
    end = len(text) if end < 0 else end
    after = end + 1
    if json_mode:
        escaped = text.rfind("\\n", start, pos)
        if escaped >= 0:
            start = escaped + 2
        escaped = text.find("\\n", pos, end)
        if escaped >= 0:
            end, after = escaped, escaped + 2
    return start, end, after


def _code_end(text: str, start: int, end: int, json_mode: bool) -> int:
    """Where code that starts at ``start`` ends: its line's end or, in JSON, the end of the
    string holding it (an unescaped quote); never inside an escape (trailing backslashes
    stay, they belong to the line break or quote after them)."""
    stop = end
    if json_mode:
        pos = start
        while True:
            quote = text.find('"', pos, end)
            if quote < 0:
                break
            run = quote - len(text[pos:quote].rstrip("\\")) - pos
            if run % 2 == 0:
                stop = quote
                break
            pos = quote + 1
        while stop > start and text[stop - 1] == "\\":
            stop -= 1
    while stop > start and text[stop - 1] in " \t\r":
        stop -= 1
    return stop
