"""Which frames of a many-rank trace repeat an earlier rank's, so they share its pages.

The ranks of a job log nearly the same: a rank that compiled one function for other shapes
differs from the others in that frame only.  Sharing is decided frame by frame: a compile
whose records equal (rank numbers, addresses and the like aside:
:func:`~..trace.digests.comparable`) those of the same compile id on an earlier rank
is shown on that rank's pages; a compile that differs gets pages of its own, which say
what differs from the first rank's (its *counterpart*).  Ranks whose compiles are all
alike form a *class*, shown as one line.  Everything is decided from digests (made once
per compile, kept in the model cache): the pages grow with the distinct frames, not with
the ranks.
"""

from __future__ import annotations

import itertools
import json
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from ..trace import Compile, Trace
from ..trace.analyses import compare
from ..trace.analyses.naming import function_name, rank_number
from ..trace.digests import class_key, comparable, compile_digest
from .naming import item_name, occurrences


@dataclass
class Sharing:
    """Frame by frame, which compiles repeat an earlier rank's; rank by rank, its class."""

    #: ``id()`` of a compile -> the compile of an earlier rank it repeats (same id, same
    #: records); that one has the pages.
    repeats: dict[int, Compile] = field(default_factory=dict)
    #: ``id()`` of a compile with pages of its own -> the first rank's compile of the same id
    #: (and occurrence) that it differs from; absent where no earlier rank compiled the id.
    counterparts: dict[int, Compile] = field(default_factory=dict)
    #: Rank index -> index of the first rank of its class (ranks that logged alike).
    class_of: dict[int, int] = field(default_factory=dict)
    #: Index of a class's first rank -> what comparing its ranks' records left out, one
    #: example a rule (:mod:`..trace.volatile`), by the rule's name.
    set_aside: dict[int, dict[str, str]] = field(default_factory=dict)

    def classes(self, count: int) -> list[list[int]]:
        """Rank indices by class, in first-rank order: ``[[0, 1, 3], [2]]``."""
        out: dict[int, list[int]] = {}
        for i in range(count):
            out.setdefault(self.class_of.get(i, i), []).append(i)
        return list(out.values())


def share_frames(trace: Trace) -> Sharing:
    """Decide sharing for the compiles of every rank (before the frame cap: a compile shown
    on another's pages costs no page, so it does not count towards the cap).

    Each compile is digested once; nothing more is held than the first compile of each
    distinct (compile id, occurrence, digest).  Ranks of one class have one
    :func:`~..trace.digests.class_key`.
    """
    out = Sharing()
    firsts: dict[tuple[str, int, bytes], Compile] = {}
    first_of_id: dict[tuple[str, int], Compile] = {}
    classes: dict[bytes, int] = {}
    for i, rank in enumerate(trace.ranks):
        for c in rank.compiles:
            key = (c.label, c.occurrence, compile_digest(c, rank.rank))
            found = firsts.get(key)
            if found is not None:
                out.repeats[id(c)] = found
                continue
            firsts[key] = c
            counterpart = first_of_id.setdefault((c.label, c.occurrence), c)
            # another function under the same number is not compared (nothing is alike)
            if counterpart is not c and function_name(counterpart) == function_name(c):
                out.counterparts[id(c)] = counterpart
        set_aside: dict[str, str] = {}
        first = classes.setdefault(class_key(rank, set_aside), i)
        if first != i:
            out.class_of[i] = first
        kept = out.set_aside.setdefault(first, {})
        for rule, shown in set_aside.items():
            kept.setdefault(rule, shown)
    return out


#: What comparing ranks leaves out of their records, as pages say it: what differs between
#: any two processes (see :func:`~..trace.digests.comparable`).
SET_ASIDE = (
    "each rank's own number, object addresses and ids as torch writes them, random "
    "ids, temporary folders, measured durations and the order of distinct config "
    "settings aside"
)

#: Differences a frame page lists at most (the rest counted).
FRAME_DIFFERENCES_SHOWN = 30


def compile_differences(
    original: Compile, c: Compile, ranks: tuple[int | None, int | None] = (None, None)
) -> list[tuple[str, str]]:
    """What a compile logged differently from the same compile id on an earlier rank:
    ``(item, detail)`` per differing artifact (by its short name, ``dynamo_output_graph``,
    ``inductor_output_code_2``), artifact only on one side, status, failures and cache
    results.  Each side's own rank number (``ranks``: the original's, then ``c``'s) aside
    in its texts, as sharing decides."""

    def same(a: str, b: str) -> bool:
        return a == b or comparable(a, ranks[0]) == comparable(b, ranks[1])

    out: list[tuple[str, str]] = []
    if c.status != original.status:
        out.append(("status", f"{c.status} (there: {original.status})"))
    mine = _items(c)
    theirs = _items(original)
    for name, text in mine.items():
        other = theirs.get(name)
        if other is None:
            out.append((name, "logged here only"))
            continue
        new, old = text(), other()  # each payload read once from its log
        if not same(old, new):
            out.append((name, _how_texts_differ(old, new, ranks)))
    out += [(name, "logged there only") for name in theirs if name not in mine]
    failures = [[f.kind, comparable(f.reason, ranks[1])] for f in c.failures]
    if failures != [[f.kind, comparable(f.reason, ranks[0])] for f in original.failures]:
        mine_n, theirs_n = len(c.failures), len(original.failures)
        count = (
            f"{mine_n}, for other reasons"
            if mine_n == theirs_n
            else (f"{mine_n} (there: {theirs_n})")
        )
        out.append(("failures", count))
    cache = [(e.cache, e.result) for e in c.cache_events]
    if cache != [(e.cache, e.result) for e in original.cache_events]:
        out.append(("cache", ", ".join(f"{k} {r}" for k, r in cache) or "no lookups"))
    if len(out) > FRAME_DIFFERENCES_SHOWN:
        rest = len(out) - FRAME_DIFFERENCES_SHOWN
        out = [*out[:FRAME_DIFFERENCES_SHOWN], ("…", f"{rest} more")]
    return out


def _items(c: Compile) -> dict[str, Callable[[], str]]:
    artifacts = c.artifacts
    return {
        item_name(a.name, n): a.text
        for a, n in zip(artifacts, occurrences(a.name for a in artifacts), strict=True)
    }


def _how_texts_differ(old: str, new: str, ranks: tuple[int | None, int | None]) -> str:
    """``3 of 23 lines differ, in numbers only; first: "f32[8, → "f32[6,``: lines counted
    as ranks are compared (an address that differs is no difference), and the first change
    shown, as numbers that differ may be a shape (that matters) or an id."""
    old_lines = comparable(old, ranks[0]).split("\n")
    new_lines = comparable(new, ranks[1]).split("\n")
    if len(old_lines) != len(new_lines):
        return f"{len(new_lines)} lines (there: {len(old_lines)})"
    changed = [(a, b) for a, b in zip(old_lines, new_lines, strict=True) if a != b]
    numbers = ", in numbers only" if compare.differ_only_in_numbers(old, new) else ""
    first = f"; first: {_first_change(*changed[0])}" if changed else ""
    return f"{len(changed)} of {len(new_lines)} lines differ{numbers}{first}"


#: Characters of each side of a change a frame page shows.
CHANGE_SHOWN = 40


def _first_change(old: str, new: str) -> str:
    """The first word (run of non-blanks) that differs between two lines, each side
    cut at :data:`CHANGE_SHOWN` characters."""
    old_words, new_words = old.split(), new.split()
    for a, b in zip(old_words, new_words, strict=False):
        if a != b:
            return f"{_cut(a)} → {_cut(b)}"
    if len(old_words) == len(new_words):  # the blanks differ
        return "in its spacing"
    longer = old_words if len(old_words) > len(new_words) else new_words
    extra = _cut(longer[min(len(old_words), len(new_words))])
    return f"{extra} → …" if longer is old_words else f"… → {extra}"


def _cut(word: str) -> str:
    return word if len(word) <= CHANGE_SHOWN else word[: CHANGE_SHOWN - 1] + "…"


def rank_classes(trace: Trace) -> list[list[int]]:
    """The ranks' numbers in classes of ranks that logged the same (rank numbers, metrics
    and timing events aside), in first-rank order: ``[[0, 1, 3], [2]]``."""
    sharing = share_frames(trace)
    return [
        [rank_number(trace, trace.ranks[i]) for i in group]
        for group in sharing.classes(len(trace.ranks))
    ]


#: Metric names a rank's differences list at most; differing values a rank shows at most.
DIFFERENCES_SHOWN = 8
VALUES_SHOWN = 200
_VALUE_CHARS = 300


@dataclass(frozen=True)
class ValueDifference:
    """One metric value a rank logged differently in a compile it shares with another."""

    compile: str  # the label of the compile shown, ``rank0 [0/0]``
    record: str  # the metrics record's kind
    key: str
    original: str  # as JSON, cut at _VALUE_CHARS
    value: str


def metric_differences(
    pairs: Sequence[tuple[Compile, Compile]],
    label: Callable[[Compile], str] = lambda c: c.label,
    rank_of: Callable[[Compile], int | None] = lambda c: None,
) -> tuple[list[str], list[ValueDifference]]:
    """What a rank logged differently in the compiles it shares (pairs of the shown compile
    and its own: metrics, times mostly): a summary by metric name, and the differing values
    (at most :data:`VALUES_SHOWN`), each with the ``label`` of the compile shown.  Every
    metrics record is compared, a record only one side logged value by value against
    nothing; a key naming a rank is set aside only where each side holds its own rank's
    number (``rank_of``)."""
    keys: dict[str, int] = {}
    values: list[ValueDifference] = []
    for a, b in pairs:
        own = (rank_of(a), rank_of(b))
        for ma, mb in itertools.zip_longest(a.metrics, b.metrics):
            da = ma.data if ma is not None else {}
            db = mb.data if mb is not None else {}
            kind = (ma or mb).event
            for key in sorted(set(da) | set(db)):
                va, vb = da.get(key), db.get(key)
                if va == vb or ("rank" in key.lower() and (va, vb) == own and None not in own):
                    continue
                keys[key] = keys.get(key, 0) + 1
                if len(values) < VALUES_SHOWN:
                    values.append(ValueDifference(label(a), kind, key, _value(va), _value(vb)))
    out = [
        f"{key} ({n} record{'s' if n != 1 else ''})"
        for key, n in sorted(keys.items(), key=lambda kv: (-kv[1], kv[0]))[:DIFFERENCES_SHOWN]
    ]
    if len(keys) > DIFFERENCES_SHOWN:
        out.append(f"{len(keys) - DIFFERENCES_SHOWN} more metrics")
    return out, values


def _value(value: object) -> str:
    if value is None:
        return "(not logged)"
    kind = type(value)
    if kind is int or (kind is float and math.isfinite(value)):  # type: ignore[arg-type]
        return repr(value)  # what json.dumps writes, without its machinery (most values)
    text = value if isinstance(value, str) else json.dumps(value, sort_keys=True, default=str)
    return text if len(text) <= _VALUE_CHARS else text[:_VALUE_CHARS] + f"… ({len(text)} chars)"
