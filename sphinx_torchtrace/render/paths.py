"""Path rewriting: the one pass that hides machine paths in everything a page publishes.

Trace text is full of absolute paths (home directories, site-packages).  Every
string the Sphinx layer publishes (page text, code blocks, downloads, the
provenance view) goes through one :class:`PathRewriter`, applied line by line so
that it can never add or remove a line and line numbers stay the model's.  It masks
what looks secret first (:mod:`..trace.secrets`): the one place all published trace
text passes.
"""

from __future__ import annotations

import posixpath
import re
from collections.abc import Callable, Iterable, Iterator, Mapping

from ..trace.model import RankTrace, Trace
from ..trace.secrets import mask_secrets
from ..trace.sharing.private import HOME_ROOTS, plain_slashes

#: ``/any/prefix/site-packages/`` (or ``dist-packages``): from the first ``/`` of a path to
#: the first site-packages folder after it.  A match may begin only where a path begins
#: or right after the previous match: otherwise every ``/`` of a long slash-only payload
#: would scan to its end (``/[^\s"'<>]*?/(?:site|dist)-packages/``, same results,
#: took minutes on 150 KB of ``/``).  Group 1 keeps what precedes the first ``/``.
SITE_PACKAGES = (
    r"(?:(?<![^\s\"'<>])|(?<=/site-packages/)|(?<=/dist-packages/))"
    r"([^\s\"'<>/]*)/[^\s\"'<>]*?/(?:site|dist)-packages/"
)

#: Python's own prefix, up to its standard library: ``/usr/lib/python3.11/``,
#: ``/opt/conda/lib/python3.12/``, ``~/.pyenv/versions/3.11.9/lib/python3.11/``.  Like
#: :data:`SITE_PACKAGES`, a match begins only where a path begins (a linear scan).
PYTHON_PREFIX = r"(?<![^\s\"'<>])([^\s\"'<>/]*)/[^\s\"'<>]*?/lib(?:64)?/python\d\.\d{1,3}/"

#: Inductor's cache folder is named after the user (``/tmp/torchinductor_alice``).
TORCHINDUCTOR = r"/torchinductor_(?!user(?![^/\s\"'<>]))[^/\s\"'<>]+"

#: macOS's per-user temporary folder (``/var/folders/fd/kcv8…/T/``).
MACOS_TEMP = r"/var/folders/[^/\s\"'<>]+/[^/\s\"'<>]+/T/"

#: Jupyter's folder of notebook cells (``/tmp/ipykernel_594021/431827302.py``): its number is
#: a process id of the machine that ran the notebook.
IPYKERNEL = r"/tmp/ipykernel_\d{1,12}/"

#: A home folder, alone or at the start of a path: what follows it is kept.
HOME = rf"/(?:(?:{HOME_ROOTS}|data/users)/[^/\s\"'<>\\]+|root)(?=[/\s\"'<>\\]|$)"
#: A Windows home folder (``C:\\Users\\alice``, its backslashes JSON-escaped or not).
WINDOWS_HOME = (
    r"(?:(?<![A-Za-z0-9_])|(?<=\\[nrtbf]))[A-Za-z]:(?:\\{1,2}|/)Users(?:\\{1,2}|/)[^\\/\s\"'<>]+"
)

#: Rewrites applied to every path in published text unless configured otherwise, in order
#: (site-packages before the standard library that holds it, both before home directories
#: that hold them).  Log text is untrusted: each pattern here runs in time linear in the
#: text's length.
DEFAULT_PATH_REWRITES: dict[str, str] = {
    SITE_PACKAGES: r"\g<1><site-packages>/",
    PYTHON_PREFIX: r"\g<1><python>/",
    TORCHINDUCTOR: "/torchinductor_user",
    MACOS_TEMP: "<tmp>/",
    IPYKERNEL: "<notebook>/",
    # home directories: Linux and macOS users (and shared hosts' /data/users/<name>), and
    # the superuser's; a bare home folder (a working directory) too: the same roots as
    # ``check`` and ``redact`` (:data:`~..trace.sharing.private.HOME_ROOTS`)
    HOME: "~",
    WINDOWS_HOME: "~",
}

#: What the project's root becomes (see :func:`project_roots`).
PROJECT = "<project>"


#: Text a rule can only match where this literal occurs, inside one word (a run of what
#: a path is made of: no space, quote or angle bracket): the rule then runs on those words
#: alone (its look-behinds make it slow over megabytes of graphs, or a line of JSON tens
#: of kilobytes long, that hold such a path once).
_LITERAL_HINTS = {
    SITE_PACKAGES: "-packages/",
    PYTHON_PREFIX: "/python",
    TORCHINDUCTOR: "/torchinductor_",
    MACOS_TEMP: "/var/folders/",
    IPYKERNEL: "/tmp/ipykernel_",
    WINDOWS_HOME: "Users",
}
#: What ends a word, looked for going back from a hint (a piece that also spans one of
#: Unicode's other spaces is only longer: no match crosses one either way).
_WORD_ENDS = frozenset(" \t\n\r\f\v\"'<>")
_WORD_REST = re.compile(r"[^\s\"'<>]*")

# Folders whose paths the home-directory rule already hides.
_HOMES = re.compile(rf"/(?:(?:{HOME_ROOTS}|data/users)/|root/)")
# File names of library code, not the user's: the project root is never among them.
_LIBRARY = re.compile(r"/(?:site|dist)-packages/|/lib(?:64)?/python\d\.\d{1,3}/|/torch/_")
_MAX_FILES = 10_000  # file names of one log looked at, at most, to find its project's root
_MAX_ROOTS = 64  # logs looked at, at most


def project_roots(trace: Trace) -> list[str]:
    """The folders holding the user's code, per log, where they lie outside home directories.

    For each log (a rank may come from another machine), the common folder of every
    absolute, non-library file name in its stacks (a CI checkout such as
    ``/srv/ci/checkout/proj``); none for a log whose files are under a home directory
    (the home rule hides those), have no such file, or share no folder below ``/``.
    Longest first, so that a root inside another is rewritten first.
    """
    roots: set[str] = set()
    for rank in trace.ranks[:_MAX_ROOTS]:
        root = _root_of(_file_names(rank))
        if root is not None:
            roots.add(root)
    return sorted(roots, key=lambda r: (-len(r), r))


def _root_of(names: Iterable[str]) -> str | None:
    folders: set[str] = set()
    for name in names:
        if name.startswith("/") and not _LIBRARY.search(name) and "\n" not in name:
            folders.add(posixpath.dirname(posixpath.normpath(name)))
    if not folders:
        return None
    root = posixpath.commonpath(sorted(folders))
    if (
        len(root) > 1000
        or root in ("", "/")
        or _HOMES.match(root + "/") is not None
        or any(c in root for c in " \t\"'<>")
    ):
        return None
    return root


def _file_names(rank: RankTrace) -> Iterator[str]:
    count = 0
    names: Iterable[str] = rank.strings.values()
    for name in names:
        yield name
        count += 1
        if count >= _MAX_FILES:
            return
    for compile_ in rank.compiles:
        for frame in compile_.stack or ():
            yield frame.filename
            count += 1
            if count >= _MAX_FILES:
                return


def trace_rules(
    trace: Trace, user_rules: Mapping[str, str], defaults: bool = True
) -> dict[str, str]:
    """The rules for one trace's pages: the user's, then the defaults with its project root.

    Each project root (:func:`project_roots`) is rewritten after the library rules
    (a virtualenv inside a checkout stays ``<site-packages>/``) and before the rest.
    """
    rules = dict(user_rules)
    if not defaults:
        return rules
    roots = project_roots(trace)
    for pattern, replacement in DEFAULT_PATH_REWRITES.items():
        if pattern not in (SITE_PACKAGES, PYTHON_PREFIX):
            for root in roots:
                rules.setdefault(re.escape(root) + r"(?![\w.-])", PROJECT)
            roots = []
        rules.setdefault(pattern, replacement)
    return rules


class PathRewriter:
    """``{regex: replacement}`` rules applied in order, after what looks secret is masked
    (``secrets``, :mod:`..trace.secrets`: by default, every value found, none kept); no
    rules: paths unchanged.  Masking too keeps every line where it was."""

    def __init__(
        self, rules: Mapping[str, str] | None = None, secrets: Callable[[str], str] | None = None
    ) -> None:
        rules = DEFAULT_PATH_REWRITES if rules is None else rules
        self._rules = [(re.compile(p), r, _LITERAL_HINTS.get(p)) for p, r in rules.items()]
        self._secrets = mask_secrets if secrets is None else secrets

    def __call__(self, text: str) -> str:
        text = self._secrets(text)
        rewritten = self._paths(text)
        plain = plain_slashes(text) if self._rules else text
        if plain is not text:  # a path spelled with JSON escapes (``\\/home\\/alice``):
            found = self._paths(plain)  # shown as a reader decodes it where a rule hid one
            if found != plain:
                return found
        return rewritten

    def _paths(self, text: str) -> str:
        for pattern, replacement, hint in self._rules:
            if hint is None:
                text = pattern.sub(replacement, text)
            elif hint in text:
                text = _sub_in_words(pattern, replacement, hint, text)
        return text

    def __bool__(self) -> bool:
        return bool(self._rules)


def _sub_in_words(pattern: re.Pattern[str], replacement: str, hint: str, text: str) -> str:
    """``pattern.sub(replacement, text)`` for a rule that matches only inside a word holding
    ``hint`` (:data:`_LITERAL_HINTS`): each such word is rewritten alone, the rest is copied.
    Linear: each character is looked at once, going back or forth from a hint."""
    out: list[str] = []
    done = 0  # where the text not yet copied starts (the end of the last word rewritten)
    at = text.find(hint)
    while at >= 0:
        start = at
        while start > done and text[start - 1] not in _WORD_ENDS:
            start -= 1
        rest = _WORD_REST.match(text, at)  # matches from a hint on: a hint holds no word end
        end = rest.end() if rest else at + len(hint)
        out += (text[done:start], pattern.sub(replacement, text[start:end]))
        done = end
        at = text.find(hint, end)
    out.append(text[done:])
    return "".join(out)
