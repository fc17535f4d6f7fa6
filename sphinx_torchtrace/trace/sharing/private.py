"""Where text names the machine it was made on: the one path finder of the project.

``sphinx-torchtrace check`` and ``redact`` look for machine paths in a log with it, and
the Sphinx build's publish check in the pages it writes (``sphinxext.publish_check``), so
a log that ``check`` calls clean publishes no path the build would warn about.  Pure text:
no file is read here.

A machine path starts at a folder at the root of a machine that holds users' and
projects' files (:data:`ROOTS`) or at a Windows drive; the random folders Python's
``tempfile`` makes and the rewritten inductor cache tell nothing and are left out
(:func:`harmless`).  Every pattern starts with a literal and is linear in the text.
"""

from __future__ import annotations

import json
import re
from typing import NamedTuple

from ..secrets import json_views

#: Paths gathered from one text, at most (:func:`surviving_paths`).
SHOWN_MAX = 20

#: Folders at the root of a machine that hold users' and projects' files: personal
#: (``/home``, ``/home2``, ``/Users``), shared and cluster storage (``/gpfs``, ``/lustre``,
#: ``/nfs``, ``/scratch``, ``/workspace``, ``/shared`` ...), service and temporary trees.
ROOTS = (
    r"home\d*|Users|root|tmp|var|data\d*|srv|opt|mnt|scratch\d*|gpfs|lustre|nfs"
    r"|workspace|shared|projects?|fsx|efs|net|cluster|private|media|export"
)
#: Where home folders are, the user's name the folder after it: Linux (``/home``,
#: ``/home2``, ``/export/home`` on Solaris-style clusters, ``/private/home`` of some
#: clusters, ``/var/home`` of image-based Linux, ``/media/<user>`` for removable disks),
#: macOS (``/Users``, ``/private/var/home``).  A bare home
#: folder (``/home/alice`` as a whole value, a working directory) is a path too: its
#: last part is the user's name.  Windows' ``C:\Users\<user>`` is matched as any drive
#: path.
HOME_ROOTS = r"(?:private/|export/|(?:private/)?var/)?home\d*|Users|media"
# Each pattern starts with a literal, so the regex engine jumps from one candidate to
# the next (a leading look-behind made it try every character: 0.8 s for a 36 MB site);
# the character before a match is checked in Python.  A folder's name may hold spaces,
# apostrophes and any letter (``/srv/o'neil/proj``, ``/scratch/a b/c``) but not start or
# end with a space, nor hold a colon; the last part stops at whitespace or a quote.
# Every class excludes the separator it stops at: linear.
# A folder's name is at most 255 bytes (every file system's limit) and holds no ``=``: a
# run of prose between two paths (``a/b.py lorem … cwd=/home/…``) is no folder.
_SEGMENT = r"[^/\s\"<>&:=](?:[^/\n\"<>&:=]{0,253}[^/\s\"<>&:=])?/"  # no ":": not into a URL
_POSIX = re.compile(rf"/(?:{ROOTS})/(?:{_SEGMENT})+[^\s\"'<>&]+")
_BARE_HOME = re.compile(rf"/(?:{HOME_ROOTS}|data/users)/(?:[^/\s\"'<>&:\\]|\\u[0-9a-fA-F]{{4}})+")
_WINDOWS = re.compile(r":\\{1,2}[^\s\\/\"'<>:&]+\\{1,2}[^\s\"'<>&]+")
_ROOT_NAMED = re.compile(rf"/(?:{ROOTS})/|:\\")
_TAG = re.compile(r"<[^<>]*>")
# Paths that tell nothing of the machine or its user: the rewritten inductor cache, and
# the random folders of Python's ``tempfile`` that torch works in (``/tmp/tmpk2j4_x9a/``,
# ``/tmp/torchelastic_krot7efo/``).
_HARMLESS = re.compile(
    r"/(?:private/)?(?:var/)?tmp/(?:torchinductor_user(?![^/])"
    r"|(?!torchinductor_)(?:tmp|[A-Za-z]{1,40}_)[a-z0-9_]{8}/)"
)
#: What ends a path found in prose: punctuation after it is not part of it.
_TRAILING = "\\.,;:)]}"


class PathSpan(NamedTuple):
    """A machine path in a text: where it is, and the path (trailing punctuation cut)."""

    start: int
    end: int
    path: str
    windows: bool
    escaped: int = 0  # levels of JSON escapes the path is written under (0: as it reads)


#: A home folder (it names its user), POSIX or Windows, as :func:`mask_homes` hides it.
_HOME_FOLDER = re.compile(
    rf"/(?:{HOME_ROOTS}|data/users)/[^/\s\"'<>\\]+"
    r"|(?<![A-Za-z0-9_])[A-Za-z]:(?:\\{1,2}|/)Users(?:\\{1,2}|/)[^\\/\s\"'<>]+"
)


def mask_homes(text: str) -> str:
    """``text`` with each home folder written ``~`` (``/home/alice/x.py`` is ``~/x.py``):
    for text made into a name (an object's, a page's), which no path rule of a user's
    reaches."""
    return _HOME_FOLDER.sub("~", text) if "/" in text or "\\" in text else text


def harmless(path: str) -> bool:
    """A path that names no user or machine: the rewritten inductor cache, ``tempfile``'s."""
    return bool(_HARMLESS.match(path))


def path_spans(text: str) -> list[PathSpan]:
    """The machine paths in ``text``, in order, with their places (harmless ones left out):
    found in the text as it stands and, where a JSON escape could hide or cut one, in what
    a reader decodes (:func:`~..secrets.json_views`: ``\\/home\\/alice``, a name with a
    ``\\u`` escape, JSON in a JSON string), each span in ``text``'s offsets; a span found
    only decoded says how many levels of escapes its text is under (``escaped``)."""
    spans = _spans(text)
    if _HIDING.search(text):
        for level, view in enumerate(json_views(text), 1):
            for span in _spans(view.text):
                start, end = view.where(span.start), view.where(span.end)
                if end > start:
                    spans.append(span._replace(start=start, end=end, escaped=level))
        if len(spans) > 1:
            spans.sort(key=lambda s: (s.start, -s.end, s.escaped))
            kept: list[PathSpan] = []
            for span in spans:
                if not kept or span.start >= kept[-1].end:
                    kept.append(span)
            spans = kept
    return spans


def _spans(text: str) -> list[PathSpan]:
    if not _ROOT_NAMED.search(text):
        return []
    matches = sorted(
        [m for m in _POSIX.finditer(text) if _starts_a_path(text, m.start(), posix=True)]
        + [m for m in _BARE_HOME.finditer(text) if _starts_a_path(text, m.start(), posix=True)]
        + [m for m in _WINDOWS.finditer(text) if _starts_a_path(text, m.start(), posix=False)],
        key=lambda m: (m.start(), -m.end()),
    )
    spans: list[PathSpan] = []
    for match in matches:
        windows = match.re is _WINDOWS
        start = match.start() - 1 if windows else match.start()
        if spans and start < spans[-1].end:
            continue
        path = text[start : match.end()].rstrip(_TRAILING)
        if path and not harmless(path):
            spans.append(PathSpan(start, start + len(path), path, windows))
    return spans


#: An escape that can hide a path or cut it from the rules (only then is a text decoded):
#: one that spells an ASCII character (``\\/``, ``\\u0068``), an escaped backslash before
#: a slash, another backslash or such an escape (JSON in a JSON string: ``\\\\/``).  A
#: name's other letters escaped (``\\u00e9``) are part of a path as it stands.
_HIDING = re.compile(r"\\(?:u00[2-7][0-9a-fA-F]|/|\\(?=[/\\]|u00[2-7]))")


def escape_levels(text: str, levels: int) -> str:
    """``text`` written as it must stand under ``levels`` levels of JSON escapes (a path's
    new name put where a decoded path was): a backslash, a quote or a control character
    escaped once for each."""
    for _ in range(levels):
        text = json.dumps(text, ensure_ascii=False)[1:-1]
    return text


#: A JSON escape that spells a printable ASCII character but a quote or a backslash
#: (``\\/``, ``\\u0067``), not itself escaped (``\\\\/`` is a backslash, then ``/``).
ESCAPED_SLASH = re.compile(
    r"(?<!\\)((?:\\\\)*)\\(/|u00(?:2[013-9a-fA-F]|[3-46-7][0-9a-fA-F]|5[0-9abd-fABD-F]))"
)
_SPELLED = re.compile(r"\\(?:/|u00[2-7][0-9a-fA-F])")


def _plain(m: re.Match[str]) -> str:
    esc = m[2]
    return m[1] + ("/" if esc == "/" else chr(int(esc[1:], 16)))


def plain_slashes(text: str) -> str:
    """``text`` with the JSON escapes that spell a printable ASCII character written as
    that character (``\\/home\\/alice`` and ``\\u002fhome/alice`` are ``/home/alice``):
    the same JSON string as a reader decodes it, for the path rules to find."""
    return ESCAPED_SLASH.sub(_plain, text) if _SPELLED.search(text) else text


def surviving_paths(text: str) -> list[str]:
    """The machine paths in ``text`` (HTML tags left out first), in order, each once."""
    text = plain_slashes(text)
    if not _ROOT_NAMED.search(text):
        return []  # most pages: nothing to strip tags for
    found: list[str] = []
    for span in path_spans(_TAG.sub("", text)):
        if span.path not in found:
            found.append(span.path)
            if len(found) > SHOWN_MAX:
                break
    return found


def _starts_a_path(text: str, start: int, *, posix: bool) -> bool:
    """Whether a match at ``start`` begins a path: not inside a word, URL or another path.

    A Windows match starts at its ``:``; the drive letter before it must stand alone.  A
    backslash before a path is no part of it (``\\\\/home/alice`` in a JSON string reads
    ``\\/home/alice``: the user's name shows).
    """
    if posix:
        before = text[start - 1] if start else " "
        if start >= 2 and text[start - 2] == "\\" and before in "nrtbf":
            return True  # after a line break or TAB escaped in a JSON string
        return not (before.isalnum() or before in "_.~/-")
    if start < 1 or not text[start - 1].isascii() or not text[start - 1].isalpha():
        return False
    before = text[start - 2] if start > 1 else " "
    if start >= 3 and text[start - 3] == "\\" and before in "nrtbf":
        return True
    return not (before.isalnum() or before == "_")
