"""What ``redact`` changes in log text, and what ``check`` reports: one pass, two uses.

A :class:`TextRedactor` takes text of a log (many records at once) and returns it with
what is private replaced, and each replacement as a :class:`Change`.  ``check`` runs it
and keeps only the changes; ``redact`` keeps the text.  Classes, each on unless turned
off (:class:`Options`):

* ``secrets``: what :class:`~.secrets.SecretMasker` masks (values of environment variables
  in guards and configs, tokens, keys, passwords in URLs, random strings);
* ``source``: the user's code quoted in graphs, guards, tracebacks and stacks
  (:mod:`.source_lines`);
* ``paths``: machine paths (:mod:`.private`), each folder mapped to a stable name
  (:class:`PathMap`: ``/home/alice/proj/m.py`` → ``~/project/m.py``, the same folder
  always the same name), and the short forms torch writes in guard comments;
* ``names``: user names (from home folders and inductor's cache folder, the machine's
  own user and host names, names given) wherever they stand as a word;
* ``constants`` (off unless asked for): the values of tensor constants, as torch prints
  them in graphs (``tensor([[0.6037, -0.0390], ...])``, ``torch.tensor([3.25, 4.75])``)
  and in cache keys (``values=[...]``): each number becomes ``0.``, so shapes stay and the
  graph's code still runs.

Replacements hold no quote, backslash or line break: JSON stays JSON and every line
stays where it was.
"""

from __future__ import annotations

import bisect
import getpass
import hashlib
import re
import socket
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Final, Literal, NamedTuple

from ..secrets import ENVIRONMENT, SecretMasker
from .private import ESCAPED_SLASH, HOME_ROOTS, escape_levels, path_spans, plain_slashes
from .source_lines import Edit, JsonAt, SourceFinder

#: A class of what a log reveals (``check`` and ``redact`` say it, ``--keep`` names it).
RedactionClass = Literal["paths", "names", "secrets", "source", "constants"]
PATHS: Final = "paths"
NAMES: Final = "names"
SECRETS: Final = "secrets"
SOURCE: Final = "source"
CONSTANTS: Final = "constants"
#: The classes of what a log reveals, in the order they are reported.
CLASSES: tuple[RedactionClass, ...] = (PATHS, NAMES, SECRETS, SOURCE, CONSTANTS)
#: Classes removed unless kept; the others only when asked for.
DEFAULT_CLASSES = (PATHS, NAMES, SECRETS, SOURCE)
#: What a user name becomes.
USER = "user"
#: Names never masked as words: the placeholders themselves and names every machine has.
COMMON_NAMES = frozenset(
    {
        "user",
        "root",
        "admin",
        "ubuntu",
        "runner",
        "nobody",
        "jovyan",
        "ec2-user",
        "localhost",
        "worker",
        "cache",
        "default",
        "docker",
        "test",
    }
)
MIN_NAME_CHARS = 3
_INDUCTOR = re.compile(r"/torchinductor_(?!user(?![^/\s\"'<>\\]))(?P<name>[^/\s\"'<>\\]{1,200})")
_MACOS_TEMP = re.compile(r"/var/folders/[^/\s\"'<>]{1,100}/[^/\s\"'<>]{1,100}/T/")
_HOME = re.compile(rf"/(?:(?:{HOME_ROOTS}|data/users)/(?P<name>[^/]+)|root)(?=/|$)")
_WINDOWS_HOME = re.compile(r"[A-Za-z]:/Users/(?P<name>[^/]+)(?=/|$)")
_LIBRARY = re.compile(r"/(?:lib(?:64)?/python\d|(?:site-packages|dist-packages|torch)(?=/|$))")
_SEPARATOR = re.compile(r"\\+|/")
# Characters that continue a name: a match after one is inside a longer word.  Patterns
# start with their literal and look back in Python: a leading look-behind is tried at
# every character of the text (ten times slower over megabytes).
_IN_A_NAME = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_-"
# Where a tensor's values start: a tensor's repr, a call of torch.tensor, a cache key's
# TensorMetadataAndValues; the values run to the bracket that closes the first one.
_TENSOR_VALUES = re.compile(r"\b(?:tensor\(|values=)\s*(?:\[|(?=-?(?:\d|\.\d|nan\b|inf\b)))")
# In the values: an escape of a JSON string (kept), or a number or a float's words.
_VALUE = re.compile(
    r"\\[nrt]|(?<![\w.])-?(?:\d+\.?\d*|\.\d+)(?:e[-+]?\d+)?(?![\w.])|-?\b(?:nan|inf)\b"
)
#: The longest stretch of values read for one tensor (a cut repr stops there).
MAX_TENSOR_CHARS = 1 << 20


@dataclass(frozen=True)
class Options:
    """What to remove: each class on by default; ``names``: more names to mask."""

    paths: bool = True
    names: bool = True
    secrets: bool = True
    source: bool = True
    extra_names: tuple[str, ...] = ()
    local_names: bool = True  # this machine's user and host names
    constants: bool = False

    def classes(self) -> tuple[str, ...]:
        return tuple(c for c in CLASSES if getattr(self, c))


class Change(NamedTuple):
    """One thing replaced: its line (1-based, in the text given), class and what it was.

    ``what`` never holds a secret: a secret is described (``a GitHub token``)."""

    line: int
    kind: RedactionClass
    what: str


@dataclass
class PathMap:
    """Machine folders and the stable names they get: the first folder of the user's files
    seen is ``~/project``, the next ``~/project2``; a Python environment's prefix is
    ``~/env``; a home folder ``~``.  With a ``salt`` (the other logs of a folder, named in
    parallel), a new folder's name is ``~/project-<hash>`` instead: still one name per
    folder whichever process meets it."""

    salt: str = ""
    roots: dict[str, str] = field(default_factory=dict)  # folder -> name
    envs: dict[str, str] = field(default_factory=dict)
    names: set[str] = field(default_factory=set)  # user names learned from home folders
    used: dict[str, int] = field(default_factory=dict)  # name -> paths mapped to it
    _short: re.Pattern[str] | None = None
    _short_forms: dict[str, str] = field(default_factory=dict)

    def map(self, path: str, windows: bool) -> str:
        """The name of a folder (``path``, the folder of a file found: the file's own name
        is no machine's); a folder inside one named already is named inside that name."""
        seps = _SEPARATOR.findall(path) if windows else []
        sep = seps[0] if seps else "/"
        norm = _SEPARATOR.sub("/", path) if windows else path
        home = (_WINDOWS_HOME if windows else _HOME).match(norm)
        home_dir = home.group() if home else None
        if home is not None and home["name"]:
            self._learn_name(home["name"])
        mapped = self._mapped(norm, home_dir)
        return mapped.replace("/", sep) if windows else mapped

    def home_name(self, path: str, windows: bool) -> str:
        """The user's name a path under a home folder holds, or ""."""
        norm = _SEPARATOR.sub("/", path) if windows else path
        home = (_WINDOWS_HOME if windows else _HOME).match(norm)
        return (home["name"] or "") if home is not None else ""

    def is_home(self, path: str, windows: bool) -> bool:
        """Whether ``path`` is a home folder itself (``/home/alice``, ``C:\\Users\\bob``):
        its last part is a user's name, not a file's."""
        norm = _SEPARATOR.sub("/", path) if windows else path
        home = (_WINDOWS_HOME if windows else _HOME).match(norm.rstrip("/"))
        return home is not None and home.end() == len(norm.rstrip("/"))

    def _mapped(self, path: str, home: str | None) -> str:
        if path == home:
            return self._use("~")
        for root in sorted(self.roots, key=len, reverse=True):
            if path == root or path.startswith(root + "/"):
                return self._use(self.roots[root]) + path[len(root) :]
        library = _LIBRARY.search(path)
        if library is not None and library.start() > 0:
            prefix = path[: library.start()]
            if prefix == home:
                return self._use("~") + path[library.start() :]
            if prefix not in self.envs:
                self.envs[prefix] = self._new_name("~/env", prefix, len(self.envs))
            return self._use(self.envs[prefix]) + path[library.start() :]
        self.roots[path] = self._new_name("~/project", path, len(self.roots))
        self._add_short_forms(path, self.roots[path])
        return self._use(self.roots[path])

    def _new_name(self, stem: str, folder: str, count: int) -> str:
        if self.salt:
            digest = hashlib.sha256((self.salt + folder).encode("utf-8", "surrogatepass"))
            return f"{stem}-{digest.hexdigest()[:8]}"
        return stem if count == 0 else f"{stem}{count + 1}"

    def _use(self, name: str) -> str:
        self.used[name] = self.used.get(name, 0) + 1
        return name

    def _learn_name(self, name: str) -> None:
        if name not in self.names:
            self.names.add(name)

    def _add_short_forms(self, root: str, name: str) -> None:
        """The ways torch shortens a file of ``root`` in guard comments (relative to the
        folder it shares with torch's): every tail of the folder, ``proj/``,
        ``alice/proj/``, ``home/alice/proj/``, become the name's tail (``project/``)."""
        parts = [p for p in root.split("/") if p]
        short = name.removeprefix("~/") + "/"
        for i in range(len(parts)):
            form = "/".join(parts[i:]) + "/"
            if form != short:
                self._short_forms.setdefault(form, short)
        if self._short_forms:
            alternatives = "|".join(
                re.escape(f) for f in sorted(self._short_forms, key=len, reverse=True)
            )
            # only where a file and its line follow, as in a guard comment: a record line's
            # own file (``torch/_dynamo/x.py:12]``) is never one
            self._short = re.compile(f"(?:{alternatives})(?=[^\\s\"'<>:]{{0,500}}:\\d+ in )")

    def shorten(self, text: str) -> tuple[str, list[int]]:
        """``text`` with the short forms of mapped folders renamed; where they were."""
        if self._short is None:
            return text, []
        places: list[int] = []
        forms = self._short_forms

        def rename(m: re.Match[str]) -> str:
            if m.start() and m.string[m.start() - 1] in _IN_A_NAME + "./~\\":
                return m.group()  # inside a longer name or path
            places.append(m.start())
            return forms[m.group()]

        return self._short.sub(rename, text), places


def local_names() -> list[str]:
    """This machine's user name and host name (and its first label): a log made here may
    hold them anywhere."""
    names: list[str] = []
    try:
        names.append(getpass.getuser())
    except (KeyError, OSError):  # pragma: no cover - no user in the password database
        pass
    host = socket.gethostname()
    names += [host, host.split(".")[0]]
    return [n for n in dict.fromkeys(names) if usable_name(n)]


def usable_name(name: str) -> bool:
    """A name worth masking as a word: long enough, not a placeholder or a common name."""
    return (
        len(name) >= MIN_NAME_CHARS
        and name.lower() not in COMMON_NAMES
        and not any(c in name for c in "/\\\"'<>\n\t ")
    )


class TextRedactor:
    """Replaces what is private in log text (see the module docstring); keeps what it
    learned (folders, names, environment values) for the rest of the log."""

    def __init__(
        self,
        options: Options = Options(),
        paths: PathMap | None = None,
        files: Mapping[int, str] | None = None,
        masker: SecretMasker | None = None,
    ) -> None:
        self.options = options
        self.paths = paths if paths is not None else PathMap()
        self.files: dict[int, str] = dict(files or {})
        self.source = SourceFinder(self.files)
        self.masker = masker if masker is not None else SecretMasker()
        given = [n for n in options.extra_names if n]
        self.names: set[str] = set(given)
        if options.local_names:
            self.names.update(local_names())
        self._names_re: re.Pattern[str] | None = None
        self._names_key: frozenset[str] = frozenset()

    def learn_file(self, number: int, name: str) -> None:
        """An interned file name (a ``str`` record): stack frames name files by number."""
        if len(self.files) < 1_000_000:
            self.files[number] = name

    def redact(self, text: str, json_at: JsonAt, lines: bool = False) -> tuple[str, list[Change]]:
        """``text`` redacted, and what was changed (with lines only if ``lines``).
        ``json_at(offset)``: whether the line at that offset of ``text`` is JSON."""
        changes: list[Change] = []
        o = self.options
        original = text
        if "\\" in text:  # JSON that spells a character with an escape: read as written
            text = _plain_slashes(text, json_at)
        if o.secrets:
            text = self._secrets(text, changes, lines)
        if o.source:
            at = _Lines(text) if lines else None
            quoted = text
            text, edits = self.source.remove(text, _same_lines(json_at, original, text))
            changes += [
                Change(at.line(e.start) if at else 0, SOURCE, f"a line of source code {e.shape}")
                for e in edits
            ]
            if edits and (o.paths or o.names):
                self._paths_in_source(quoted, edits, changes, at)
        if o.names or o.paths:
            text = self._inductor(text, changes, lines)
        if o.paths:
            text = self._paths(text, changes, lines)
        if o.names:
            text = self._names(text, changes, lines)
        if o.constants:
            text = self._constants(text, changes, lines)
        return text, changes

    # -- the classes ---------------------------------------------------------------------

    def _secrets(self, text: str, changes: list[Change], lines: bool) -> str:
        masked, found = self.masker.masked(text)
        # every value of the text learned (``any`` would stop at the first)
        learned = [self.masker.learn(s) for _, s in found if s.looks_like == ENVIRONMENT]
        if any(learned):
            masked, found = self.masker.masked(text)  # where it quotes them again
        if found:
            at = _Lines(text) if lines else None
            changes += [Change(at.line(i) if at else 0, SECRETS, s.describe()) for i, s in found]
        return masked

    def _paths_in_source(
        self, text: str, edits: list[Edit], changes: list[Change], at: _Lines | None
    ) -> None:
        """The machine paths a removed line of source held (a comment naming a file): gone
        with the line, still listed as paths, and a home folder's user name learned, to be
        masked wherever else the log writes it."""
        for e in edits:
            for span in path_spans(text[e.start : e.end]):
                if self.options.paths:
                    changes.append(Change(at.line(e.start) if at else 0, PATHS, span.path))
                name = self.paths.home_name(span.path, span.windows)
                if self.options.names and name and usable_name(name):
                    self.names.add(name)

    def _inductor(self, text: str, changes: list[Change], lines: bool) -> str:
        if "/torchinductor_" not in text:
            return text
        at = _Lines(text) if lines else None

        def rename(m: re.Match[str]) -> str:
            name = m["name"]
            if usable_name(name):
                self.names.add(name)
            changes.append(
                Change(
                    at.line(m.start()) if at else 0,
                    NAMES,
                    f"user name {name!r} in inductor's cache folder",
                )
            )
            return "/torchinductor_" + USER

        return _INDUCTOR.sub(rename, text)

    def _paths(self, text: str, changes: list[Change], lines: bool) -> str:
        if "/var/folders/" in text:
            text = _MACOS_TEMP.sub("/tmp/", text)
        spans = path_spans(text)
        if spans:
            at = _Lines(text) if lines else None
            pieces: list[str] = []
            pos = 0
            for span in spans:
                if self.paths.is_home(span.path, span.windows):
                    mapped = self.paths.map(span.path, span.windows)
                else:
                    folder, sep, base = _split_last(span.path)
                    mapped = self.paths.map(folder, span.windows) + sep + base
                pieces += (text[pos : span.start], escape_levels(mapped, span.escaped))
                pos = span.end
                changes.append(Change(at.line(span.start) if at else 0, PATHS, span.path))
            pieces.append(text[pos:])
            text = "".join(pieces)
            self.names.update(n for n in self.paths.names if usable_name(n))
        text, places = self.paths.shorten(text)
        if places:
            at = _Lines(text) if lines else None
            changes += [
                Change(at.line(i) if at else 0, PATHS, "a short form of a folder") for i in places
            ]
        return text

    def _names(self, text: str, changes: list[Change], lines: bool) -> str:
        pattern = self._name_pattern()
        if pattern is None:
            return text
        at = _Lines(text) if lines else None

        def rename(m: re.Match[str]) -> str:
            if m.start() and m.string[m.start() - 1] in _IN_A_NAME + ".":
                return m.group()  # the end of a longer name
            changes.append(
                Change(at.line(m.start()) if at else 0, NAMES, f"user or host name {m.group()!r}")
            )
            return USER

        return pattern.sub(rename, text)

    def _constants(self, text: str, changes: list[Change], lines: bool) -> str:
        if "tensor(" not in text and "values=" not in text:
            return text
        at = _Lines(text) if lines else None
        pieces: list[str] = []
        pos = 0
        for m in _TENSOR_VALUES.finditer(text):
            if m.start() < pos:
                continue  # inside the values of the one before
            end = (
                _closing_bracket(text, m.end() - 1)
                if text[m.end() - 1] == "["
                else _end_of_number(text, m.end())
            )
            values = text[m.end() : end]
            numbers = 0

            def zero(v: re.Match[str]) -> str:
                nonlocal numbers
                if v.group()[0] == "\\" or v.group() == "0.":
                    return v.group()  # an escape, or a value redacted already
                numbers += 1
                return "0."

            zeroed = _VALUE.sub(zero, values)
            if not numbers:
                continue
            pieces += (text[pos : m.end()], zeroed)
            pos = end
            changes.append(
                Change(
                    at.line(m.start()) if at else 0, CONSTANTS, f"{numbers} value(s) of a tensor"
                )
            )
        if not pieces:
            return text
        pieces.append(text[pos:])
        return "".join(pieces)

    def _name_pattern(self) -> re.Pattern[str] | None:
        names = frozenset(n for n in self.names if usable_name(n))
        if names != self._names_key:
            self._names_key = names
            alternatives = "|".join(re.escape(n) for n in sorted(names, key=len, reverse=True))
            self._names_re = re.compile(rf"(?:{alternatives})(?![\w-])") if names else None
        return self._names_re

    def learned(self) -> tuple[list[str], list[tuple[str, str]]]:
        """The names and environment values learned so far (to seed another log's pass)."""
        return sorted(self.names), [(p.pattern, n) for p, n in self.masker._learned]


def _same_lines(json_at: JsonAt, original: str, text: str) -> JsonAt:
    """``json_at`` (offsets of ``original``) for offsets of ``text``, an edit of it that
    kept its lines (no replacement adds or removes a line break): a masked secret or a
    plain slash moves what follows on its line, so an offset is taken to its line's start
    in ``original``, where ``json_at`` answers for the whole line."""
    if not callable(json_at) or text is original:
        return json_at
    at = json_at
    new_breaks = [m.start() for m in re.finditer("\n", text)]
    old_starts = [0, *(m.start() + 1 for m in re.finditer("\n", original))]
    if len(new_breaks) + 1 != len(old_starts):  # pragma: no cover - a rule broke a line
        return json_at  # the chunk's check refuses the log (its record structure changed)

    def moved(offset: int) -> bool:
        return at(old_starts[bisect.bisect_left(new_breaks, offset)])

    return moved


def _plain_slashes(text: str, json_at: JsonAt) -> str:
    """``text`` with the ``\\/`` escapes of its JSON lines written ``/`` (the same JSON
    string, as a reader decodes it), so that an escaped path (``\\/home\\/alice``) is
    found like any other."""
    if not callable(json_at):
        return plain_slashes(text) if json_at else text
    at = json_at
    return ESCAPED_SLASH.sub(lambda m: plain_slashes(m[0]) if at(m.start()) else m[0], text)


def _split_last(path: str) -> tuple[str, str, str]:
    """A path's folder, its last separator and its last part (``:16``, a quote's backslash
    and all: what follows the folder stays as it is)."""
    cut = max(path.rfind("/"), path.rfind("\\"))
    start = cut
    while start > 0 and path[start - 1] == "\\":
        start -= 1
    return path[:start], path[start : cut + 1], path[cut + 1 :]


def _closing_bracket(text: str, start: int) -> int:
    """The offset of the bracket that closes the one at ``start``, or where the values
    stop (a cut repr, a quote that ends the JSON string, :data:`MAX_TENSOR_CHARS`)."""
    depth = 0
    stop = min(len(text), start + MAX_TENSOR_CHARS)
    for i in range(start, stop):
        c = text[i]
        if c == "[":
            depth += 1
        elif c == "]":
            depth -= 1
            if depth == 0:
                return i
        elif c in "\"')":
            return i
    return stop


def _end_of_number(text: str, start: int) -> int:
    """Where a scalar tensor's value (``tensor(3.2500)``) ends."""
    m = _VALUE.match(text, start)
    return m.end() if m else start


class _Lines:
    """Line numbers of offsets in one text (1-based, relative to the text)."""

    def __init__(self, text: str) -> None:
        self.text = text
        self._breaks: list[int] | None = None

    def line(self, offset: int) -> int:
        if self._breaks is None:
            self._breaks = [m.start() for m in re.finditer("\n", self.text)]
        return bisect.bisect_left(self._breaks, offset) + 1
