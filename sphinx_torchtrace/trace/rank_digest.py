"""Digests of what ranks logged, what differs between any two processes aside: how ranks
are told alike.

The ranks of a job log nearly the same, each naming its own rank number here and there
(``rank3`` in a path, ``'rank': 3`` in a record), and each logging what any process has
of its own: object addresses (``___check_obj_id(G['torch'], 139962313686640)`` in
guards, ``# graph id: 1399...`` in graphs, ``at 0x7f4b583c9b20`` in reprs), ids it drew
(``__compiled_fn_13_<uuid>``), temporary folders (``/tmp/torchinductor_user/tmp66o2th__``),
durations it measured (``Guard latency = 85.96 us``) and config settings in another order
(a repro script's ``torch._inductor.config.x = ...`` lines follow a set's order, which
differs from one process to the next).  Those are left out of texts compared
(:func:`comparable`).  A compile's digest covers every record of it but its metrics
(times, mostly), so two ranks' compiles are alike when their digests are; a rank's *class
key* is its compiles' digests and what it logged outside them.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Iterable

from .model import Compile, RankTrace

#: ``rank0``, ``rank=0``, ``rank: 12``, ``RANK_3``, ``'rank': 2``: a rank number in a
#: payload, ignored when ranks are compared (bounded repetitions: linear).
_RANK_MENTION = re.compile(r"(rank['\" _=:\-]{0,4})[0-9]{1,7}", re.IGNORECASE)
#: The same, in lower-case text: ten times faster than ignoring case, which stops the
#: regex engine from looking for its ``rank`` as a literal.
_LOWER_RANK_MENTION = re.compile(r"(rank['\" _=:\-]{0,4})[0-9]{1,7}")
#: An object's address or id: ``0x7f4b583c9b20``, or a whole number of 10 digits or more
#: (CPython's ids are addresses, above 2**32 on 64-bit machines; epoch nanoseconds too).
_ADDRESS = re.compile(r"\b0x[0-9a-fA-F]{6,16}\b|(?<![\w.])[0-9]{10,20}(?![\w.])")
#: A UUID, spelt with ``-`` or ``_`` (``__compiled_fn_13_33fe20b4_5c7a_4516_...``).
_UUID = re.compile(
    r"[0-9a-f]{8}([-_])[0-9a-f]{4}\1[0-9a-f]{4}\1[0-9a-f]{4}\1[0-9a-f]{12}(?![0-9a-f])"
)
#: A folder ``tempfile`` named (``tmp`` and 8 characters of its alphabet).
_TEMP_FOLDER = re.compile(r"(?<=[/\\])tmp[a-z0-9_]{8}(?=[/\\'\"]|$)", re.MULTILINE)
#: A duration measured while compiling, said in a text: ``Guard latency = 85.96 us``.
_DURATION = re.compile(
    r"((?:latency|time|took|elapsed)[ :=]{1,4})[0-9]+(?:\.[0-9]+)?[ ]?(?:ns|us|µs|ms|s)\b",
    re.IGNORECASE,
)
#: A line setting a config option in a repro script: ``torch._inductor.config.x = 1``.
_CONFIG_LINE = re.compile(r"^(?:torch\.[\w.]*config|[\w.]*config)\.[\w.]+ = ")


class _Digest:
    """A blake2b digest fed values (text or JSON), rank numbers in them ignored."""

    def __init__(self) -> None:
        self.h = hashlib.blake2b(digest_size=20)

    def feed(self, value: object) -> None:
        text = value if isinstance(value, str) else json.dumps(value, sort_keys=True, default=str)
        data = comparable(text).encode("utf-8", "replace")
        self.h.update(len(data).to_bytes(8, "little"))
        self.h.update(data)

    def digest(self) -> bytes:
        return self.h.digest()


def compile_digest(c: Compile) -> bytes:
    """Everything a compile logged but its metrics (times, mostly): artifacts with or without
    pages, text-log lines, failures, cache and shape events, tensor descriptions (the one
    made while its log was read, when there is one)."""
    if c.digest:
        return bytes.fromhex(c.digest)
    d = _Digest()
    d.feed([c.label, c.status, c.restarted, c.recompile_reasons])
    d.feed([[f.filename, f.line, f.name] for f in c.stack or ()])
    for a in c.artifacts:
        d.feed([a.name, a.kind, a.encoding, a.metadata])
        d.feed(a.text())
    d.feed([[f.kind, f.reason, f.type, f.user_location] for f in c.failures])
    d.feed([[e.cache, e.result, e.artifact] for e in c.cache_events])
    d.feed([[e.kind, e.data] for e in c.shape_events])
    d.feed([c.tensor_descriptions, c.links])
    c.digest = d.digest().hex()  # once: a compile's records do not change
    return bytes.fromhex(c.digest)


def outside_digest(rank: RankTrace) -> bytes:
    """What a rank logged outside its compiles: unknown record kinds, dump files, export."""
    d = _Digest()
    for record in rank.unknown_records:
        d.feed([record.kind, record.envelope])
        d.feed(record.payload.text() if record.payload else "")
    for name, payload in sorted(rank.dump_files.items()):
        d.feed([name, payload.text()])
    export = rank.export
    for events in (export.exported_programs, export.guards_added, export.data_dependent_errors,
                   export.expressions, export.unbacked_symbols, export.missing_fake_kernels,
                   export.mismatched_fake_kernels):
        for e in events:
            d.feed([e.kind, e.data, e.payload.text() if e.payload else ""])
    return d.digest()


def comparable(text: str) -> str:
    """``text`` as ranks are compared: rank numbers, object addresses, UUIDs, measured
    durations and temporary folder names left out, and each run of config settings in one order (see
    the module's doc).
    Only what torch itself makes differ between processes: whatever else differs (a
    shape, a graph line, the order of ops) keeps two ranks apart."""
    text = without_rank_numbers(text)
    if "0x" in text or _LONG_NUMBER.search(text):
        text = _ADDRESS.sub("#", text)
    if _UUID_HINT.search(text):
        text = _UUID.sub("#", text)
    if _DURATION_HINT.search(text):
        text = _DURATION.sub(r"\1#", text)
    if "/tmp" in text or "\\tmp" in text:
        text = _TEMP_FOLDER.sub("tmp#", text)
    if "config." in text and "\n" in text:
        text = _settings_in_order(text)
    return text


#: Whether :data:`_UUID` may match.
_UUID_HINT = re.compile(r"[0-9a-f]{4}[-_][0-9a-f]{4}[-_][0-9a-f]{4}[-_][0-9a-f]{12}")
#: Whether :data:`_DURATION` may match (its case-blind regex cannot look for a literal).
_DURATION_HINT = re.compile(r"[0-9] ?[nuµm]?s\b")
#: Ten digits in a row: whether :data:`_ADDRESS` has anything to do (found in C, fast).
_LONG_NUMBER = re.compile(r"[0-9]{10}")


def _settings_in_order(text: str) -> str:
    """Each run of consecutive config-setting lines sorted: settings of distinct options
    commute, and torch writes them in a set's order."""
    lines = text.split("\n")
    out: list[str] = []
    run: list[str] = []
    for line in lines:
        if _CONFIG_LINE.match(line):
            run.append(line)
            continue
        out += sorted(run)
        run = []
        out.append(line)
    out += sorted(run)
    return "\n".join(out)


def without_rank_numbers(text: str) -> str:
    """``text`` with the numbers after each ``rank`` left out.  Texts without ``ank`` or
    ``ANK`` are left as they are without a regex pass (``str.find`` is many times faster
    on the megabytes of graphs a rank logs); a mixed-case ``rAnK`` is left too, which can
    only keep two ranks apart, never hide a difference."""
    if "ank" not in text and "ANK" not in text:
        return text
    if not text.isascii():  # case folding beyond ASCII (the Kelvin sign is a "k")
        return _RANK_MENTION.sub(r"\1#", text)
    # ASCII: its lower case has the same length, so its matches are the text's
    parts: list[str] = []
    last = 0
    for m in _LOWER_RANK_MENTION.finditer(text.lower()):
        parts += (text[last : m.end(1)], "#")
        last = m.end()
    if not parts:
        return text
    parts.append(text[last:])
    return "".join(parts)


def class_key(rank: RankTrace) -> bytes:
    """One digest of everything a rank logged but metrics and timing events: ranks of
    one key logged alike."""
    h = hashlib.blake2b(digest_size=20)
    for c in rank.compiles:
        h.update(c.label.encode("utf-8", "replace") + b"\0" + compile_digest(c))
    h.update(outside_digest(rank))
    return h.digest()


def number_ranges(numbers: Iterable[int]) -> str:
    """``0-3, 5, 7-9``: rank numbers as runs (a thousand alike ranks are one run)."""
    runs: list[list[int]] = []
    for n in sorted(set(numbers)):
        if runs and n == runs[-1][1] + 1:
            runs[-1][1] = n
        else:
            runs.append([n, n])
    return ", ".join(str(a) if a == b else f"{a}-{b}" for a, b in runs)
