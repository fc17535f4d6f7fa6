"""Digests of what ranks logged, what differs between any two processes aside: how ranks
are told alike.

The ranks of a job log nearly the same, each naming its own rank number here and there
(``rank3`` in a path, ``'rank': 3`` in a record), and each logging what any process logs
of its own (addresses, UUIDs, temporary folders, durations: :mod:`.volatile`).  Texts are
compared without those (:func:`comparable`): a rank's own number only, never another
number after "rank" (``lowrank=64``, a peer's rank).  A compile's digest covers every
record of it but its metrics (times, mostly; compared value by value, and shown, where
ranks share pages), so two ranks' compiles are alike when their digests are; a rank's
*class key* is its compiles' digests and what it logged outside them.  What the rules left
out is kept, one example a rule (:attr:`~.model.Compile.set_aside`), for pages to show.

A compile's digest is part of its model (made while its log is read, kept in the model
cache), so this module sits beside the model, below the readers.
"""

from __future__ import annotations

import hashlib
import json
import re

from .model import Compile, RankTrace
from .volatile import RANK_NUMBER, example, without_volatile

#: ``rank0``, ``rank=0``, ``rank: 12``, ``RANK_3``, ``'rank': 2``, ``rank_3``: a number
#: after the word "rank" (not ``lowrank``), which is left out where it is the log's own
#: rank number (bounded repetitions: linear).
_RANK_MENTION = re.compile(r"(?<![a-z])(rank['\" _=:\-]{0,4})([0-9]{1,7})(?![0-9])", re.IGNORECASE)
#: The same, in lower-case text: ten times faster than ignoring case, which stops the
#: regex engine from looking for its ``rank`` as a literal.
_LOWER_RANK_MENTION = re.compile(r"(?<![a-z])(rank['\" _=:\-]{0,4})([0-9]{1,7})(?![0-9])")


class _Digest:
    """A blake2b digest fed values (text or JSON), as :func:`comparable` makes them for the
    rank numbered ``rank``, what was left out gathered in ``found``."""

    def __init__(self, rank: int | None, found: dict[str, str] | None = None) -> None:
        self.h = hashlib.blake2b(digest_size=20)
        self.rank = rank
        self.found = found

    def feed(self, value: object) -> None:
        text = value if isinstance(value, str) else json.dumps(value, sort_keys=True, default=str)
        data = comparable(text, self.rank, self.found).encode("utf-8", "replace")
        self.h.update(len(data).to_bytes(8, "little"))
        self.h.update(data)

    def digest(self) -> bytes:
        return self.h.digest()


def compile_digest(c: Compile, rank: int | None = None) -> bytes:
    """Everything a compile of the rank numbered ``rank`` logged but its metrics' values
    (times, mostly; the records are counted): artifacts with or without pages, text-log
    lines, failures, cache and shape events, tensor descriptions.  Made once (while its
    log is read, when there is one), with what it left out in
    :attr:`~.model.Compile.set_aside`."""
    if c.digest:
        return bytes.fromhex(c.digest)
    found: dict[str, str] = {}
    d = _Digest(rank, found)
    d.feed([c.label, c.status, c.restarted, c.recompile_reasons])
    d.feed([[f.filename, f.line, f.name] for f in c.stack or ()])
    for a in c.artifacts:
        d.feed([a.name, a.event, a.encoding, a.metadata])
        d.feed(a.text())
    d.feed([[f.kind, f.reason, f.type, f.user_location] for f in c.failures])
    d.feed([[e.cache, e.result, e.artifact] for e in c.cache_events])
    d.feed([[e.event, e.data] for e in c.shape_events])
    d.feed([c.tensor_descriptions, c.links])
    d.feed([m.event for m in c.metrics])  # their values are compared where pages are shared
    c.digest = d.digest().hex()  # once: a compile's records do not change
    c.set_aside = found
    return bytes.fromhex(c.digest)


def outside_digest(rank: RankTrace, found: dict[str, str] | None = None) -> bytes:
    """What a rank logged outside its compiles: unknown record kinds, dump files, export."""
    d = _Digest(rank.rank, found)
    for record in rank.unknown_records:
        d.feed([record.event, record.envelope])
        d.feed(record.payload.text() if record.payload else "")
    for name, payload in sorted(rank.dump_files.items()):
        d.feed([name, payload.text()])
    export = rank.export
    for events in (
        export.exported_programs,
        export.guards_added,
        export.data_dependent_errors,
        export.expressions,
        export.unbacked_symbols,
        export.missing_fake_kernels,
        export.mismatched_fake_kernels,
    ):
        for e in events:
            d.feed([e.event, e.data, e.payload.text() if e.payload else ""])
    return d.digest()


def comparable(text: str, rank: int | None = None, found: dict[str, str] | None = None) -> str:
    """``text`` as ranks are compared: the number of the rank that logged it (``rank``)
    and what differs between any two processes (:func:`.volatile.without_volatile`) left
    out; one example of each rule that left something out kept in ``found``."""
    return without_volatile(without_rank_numbers(text, rank, found), found)


def without_rank_numbers(text: str, rank: int | None, found: dict[str, str] | None = None) -> str:
    """``text`` with the rank's own number ``rank`` after each word ``rank`` (any case) left
    out.  Texts without ``ank`` or ``ANK`` are left as they are without a regex pass
    (``str.find`` is many times faster on the megabytes of graphs a rank logs); a
    mixed-case ``rAnK`` is left too, which can only keep two ranks apart, never hide a
    difference."""
    if rank is None or ("ank" not in text and "ANK" not in text):
        return text
    own = str(rank)
    if text.isascii():  # its lower case has the same length, so its matches are the text's
        matches = _LOWER_RANK_MENTION.finditer(text.lower())
    else:  # case folding beyond ASCII (the Kelvin sign is a "k")
        matches = _RANK_MENTION.finditer(text)
    parts: list[str] = []
    last = 0
    for m in matches:
        if m.group(2).lstrip("0").rjust(1, "0") != own:
            continue
        if not parts and found is not None and RANK_NUMBER not in found:
            found[RANK_NUMBER] = example(text, m.start(), m.end())
        parts += (text[last : m.end(1)], "#")
        last = m.end()
    if not parts:
        return text
    parts.append(text[last:])
    return "".join(parts)


def class_key(rank: RankTrace, found: dict[str, str] | None = None) -> bytes:
    """One digest of everything a rank logged but metrics and timing events: ranks of
    one key logged alike.  ``found`` gathers what comparing left out, one example a rule."""
    h = hashlib.blake2b(digest_size=20)
    for c in rank.compiles:
        h.update(c.label.encode("utf-8", "replace") + b"\0" + compile_digest(c, rank.rank))
        if found is not None:
            for rule, shown in c.set_aside.items():
                found.setdefault(rule, shown)
    h.update(outside_digest(rank, found))
    return h.digest()
