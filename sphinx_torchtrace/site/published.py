"""The trace a site shows: every text of the model masked record by record, before any page
cuts, joins, splits or names with it.

Pages take text from the model and change its shape before it is published: a metrics
field cut to a table cell, a function's name cut for a title, a payload split into the
lines of a side-by-side view, an artifact's name made an object name.  Masking what each
page then shows would see a private key's line without its header, half a token, a value
without the name that says it is a secret.  So the pages are planned and drawn from this
copy of the model, in which each value is masked as the log held it: a record's JSON
fields as one JSON text (a secret after its name in another field is found), each string
whole, each payload whole when it is read.  The trace's masker (the user's keeps, the
values every rank's log compares with an environment variable) masks them all, names
included; what a page then does with the text can only show less of it.

Left as read: what locates the inputs (log paths, digests), the diagnostics (warned from
the model as read, their quotes rewritten where shown) and runtime profiles (numbers and
the profiler's own names, from files beside the log).
"""

from __future__ import annotations

import json
import re
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, fields, is_dataclass
from typing import Any, TypeVar

from ..trace import StackTrieNode, Trace
from ..trace.diagnostics import Diagnostic
from ..trace.reader import Payload
from ..trace.runtime import RuntimeProfile
from ..trace.secrets import SecretMasker, SecretScan, mask_secrets
from ..trace.sharing.private import HOME_ROOTS

_T = TypeVar("_T")

#: Fields that locate an input, never shown as the log's text: kept as read.
_KEPT_FIELDS = frozenset({"path", "file", "sha256", "digest", "secrets"})
#: Model objects kept whole (see the module's docstring).
_KEPT_TYPES = (Diagnostic, RuntimeProfile, SecretScan)
#: Fields holding a record's JSON object (or a list of them): masked as one JSON text.
_RECORD_FIELDS = frozenset(
    {"data", "envelope", "metadata", "torch_version", "tensor_descriptions", "links"}
)


@dataclass(slots=True)
class ShownPayload(Payload):
    """A payload read masked whole, as the log holds it (its lines together)."""

    mask: Callable[[str], str] | None = None

    def read_bytes(self) -> bytes:
        raw = Payload.read_bytes(self)
        text = raw.decode("utf-8", "replace")
        shown = self._masked(text)
        return raw if shown == text else shown.encode("utf-8", "surrogatepass")

    def text(self) -> str:
        return self._masked(Payload.read_bytes(self).decode("utf-8", "replace"))

    def _masked(self, text: str) -> str:
        return text if self.mask is None else self.mask(text)


#: A home folder that ends a path (``HOME=/home/alice``, ``cwd=C:\\Users\\bob``).
_UNIX_HOME = rf"/(?:{HOME_ROOTS}|data/users)/[^/\s\"'<>\\]+(?![^\s\"'<>])"
_BARE_HOME = re.compile(
    _UNIX_HOME
    + r"|(?<![A-Za-z0-9_])[A-Za-z]:(?:\\{1,2}|/)Users(?:\\{1,2}|/)[^\\/\s\"'<>]+(?![^\s\"'<>])"
)
#: The same where no Windows home can be (no ``Users``): its leading look-behind made the
#: regex engine try every letter of a payload (25x slower on a big log's graphs).
_BARE_UNIX_HOME = re.compile(_UNIX_HOME)


def published_trace(trace: Trace, mask: Callable[[str], str], homes: bool = True) -> Trace:
    """A copy of ``trace`` whose every text a page can show is masked by ``mask`` (the
    trace's masker), each record as a whole; ``trace`` itself is left as it is.

    ``homes``: a home folder that ends a path is written ``~`` too, as the pages' path
    rule writes it, before a page keeps a path's last part (a title names a function's
    file by it) and would show the user's name apart from its root."""
    if not homes:
        return _Masking(mask).value(trace)

    def masked(text: str) -> str:
        shown = mask(text)
        if "/" not in shown and "\\" not in shown:
            return shown
        return (_BARE_HOME if "Users" in shown else _BARE_UNIX_HOME).sub("~", shown)

    return _Masking(masked).value(trace)


class _Masking:
    """One walk over a model: each object copied once (shared objects stay shared)."""

    def __init__(self, mask: Callable[[str], str]) -> None:
        self.mask = mask
        self.payloads: list[Payload] = []  # each payload met, as read
        # each text met and its masked form (None: unchanged); a file name is in thousands
        # of stacks
        self.strings: dict[str, str | None] = {}
        # id -> (the object, its copy): each object is held, so no id is used twice
        self.memo: dict[int, tuple[Any, Any]] = {}

    def value(self, value: _T) -> _T:
        if isinstance(value, str):
            shown = self.strings.get(value, value)
            if shown is value:  # not met yet
                masked = self.mask(value)
                # a text masking leaves as it is (None) is returned as the very object met,
                # so what holds it can be shared with the model as read
                shown = self.strings[value] = None if masked == value else masked
            return value if shown is None else shown  # type: ignore[return-value]
        if value is None or isinstance(value, (bool, int, float, bytes)):
            return value
        found = self.memo.get(id(value))
        if found is not None:
            return found[1]  # type: ignore[no-any-return]
        copy = self._copy(value)
        self.memo[id(value)] = (value, copy)
        self.memo[id(copy)] = (copy, copy)
        return copy  # type: ignore[no-any-return]

    def _copy(self, value: Any) -> Any:
        if isinstance(value, _KEPT_TYPES):
            return value
        if isinstance(value, ShownPayload):
            return value
        if isinstance(value, Payload):
            self.payloads.append(value)
            return ShownPayload(
                value.store, value.offset, value.length, value.size, value.crlf, self.mask
            )
        if isinstance(value, Counter):
            keys = [self.value(k) for k in value]
            if all(a is b for a, b in zip(value, keys, strict=True)):
                return value
            counts: Counter[Any] = Counter()
            for k, n in zip(keys, value.values(), strict=True):
                counts[k] += n
            return counts
        if isinstance(value, dict):
            items = [(self.value(k), self.value(v)) for k, v in value.items()]
            if all(k is a and v is b for (k, v), (a, b) in zip(value.items(), items, strict=True)):
                return value  # nothing masked in it: shared, not copied
            return dict(items)
        if isinstance(value, list):
            shown = [self.value(v) for v in value]
            return value if all(a is b for a, b in zip(value, shown, strict=True)) else shown
        if isinstance(value, tuple):
            made = tuple(self.value(v) for v in value)
            return value if all(a is b for a, b in zip(value, made, strict=True)) else made
        if isinstance(value, StackTrieNode):
            return self._trie(value)
        if is_dataclass(value) and not isinstance(value, type):
            return self._object(value)
        return value

    def _trie(self, root: StackTrieNode) -> StackTrieNode:
        """A stack trie, copied without recursion (a log's stack can be thousands deep)."""
        top = StackTrieNode(self.value(root.frame), [], self.value(root.compiles))
        work = [(root, top)]
        while work:
            node, copy = work.pop()
            for child in node.children:
                made = StackTrieNode(self.value(child.frame), [], self.value(child.compiles))
                self.memo[id(child)] = (child, made)
                copy.children.append(made)
                work.append((child, made))
        return top

    def _object(self, value: Any) -> Any:
        params = getattr(type(value), "__dataclass_params__", None)
        if params is not None and params.frozen and _plain(value):
            return value  # a compile id: numbers only
        shown: list[tuple[str, Any]] = []
        same = True
        for f in fields(value):
            item = getattr(value, f.name)
            if f.name in _KEPT_FIELDS:
                made = item
            elif f.name in _RECORD_FIELDS:
                made = self.value(self._record(item))
            else:
                made = self.value(item)
            same = same and made is item
            shown.append((f.name, made))
        if same:
            return value  # nothing masked in it (no payload either): shared, not copied
        copy = object.__new__(type(value))
        for name, made in shown:
            object.__setattr__(copy, name, made)
        return copy

    def _record(self, item: Any) -> Any:
        """A record's JSON object masked as one JSON text: a value whose name (another
        field's) says it is secret is found; the fields are then masked one by one too."""
        if not isinstance(item, (dict, list)) or not item:
            return item
        try:
            text = json.dumps(item, ensure_ascii=False)
        except (TypeError, ValueError):
            return item
        shown = self.mask(text)
        if shown == text:
            return item
        try:
            return json.loads(shown)
        except ValueError:
            return item  # masked where it stands, field by field


def learn_environment(trace: Trace, masker: SecretMasker) -> None:
    """Teach ``masker`` every value the trace's text compares with an environment variable.

    A log's scan keeps its first :data:`~..trace.secrets.MAX_FOUND` findings: a guard past
    them is not among the values its masker learned, and a quote of its value elsewhere
    would be shown.  Where a rank's scan counted more, every text of the model (strings,
    then payloads, each whole) is looked at again for such values."""

    def look(text: str) -> str:
        if "environ" in text or "\\" in text:  # the rule's word, or an escape spelling it
            for secret in mask_secrets.findings(text):
                if secret.name:
                    masker.learn(secret)
        return text

    walk = _Masking(look)
    walk.value(trace)
    for payload in walk.payloads:
        look(Payload.text(payload))


def _plain(value: Any) -> bool:
    """Whether a frozen dataclass holds numbers (and None) only."""
    return all(
        getattr(value, f.name) is None or isinstance(getattr(value, f.name), (bool, int, float))
        for f in fields(value)
    )
