"""What any two processes log differently though they ran the same code the same way.

The ranks of a job (or two runs of one program) each log what a process has of its own:
object addresses (``___check_obj_id(G['torch'], 139962313686640)`` in guards, ``# graph
id: 1399...`` in graphs, ``at 0x7f4b583c9b20`` in reprs), ids drawn at random
(``__compiled_fn_13_<uuid>``), temporary folders (``/tmp/torchinductor_user/tmp66o2th__``),
durations measured while compiling (``Guard latency = 85.96 us``) and config settings in a
set's order (a repro script's ``torch._inductor.config.x = ...`` lines).  Ranks are
compared without them (:func:`without_volatile`); anything else that differs (a shape, a
small number, a graph line, the order of two ops) keeps them apart.

A rank logs megabytes of such text, and each rule as one regular expression over it cost
a hundred milliseconds a rank (the regex engine tries every position): for ASCII text
(nearly all of it), each rule finds its candidates with ``str.find`` and ``bytes.translate``
(in C, at memory speed) and runs its expression only where one starts.  Other text takes
the expressions whole (:func:`volatile_by_regex`, also what tests hold the fast path to).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator

#: An address in hex: ``0x7f4b583c9b20``.
_HEX = re.compile(r"\b0x[0-9a-fA-F]{6,16}\b")
#: An object's address or id in decimal: a whole number of 10 to 20 digits (CPython's ids
#: are addresses, above 2**32 on 64-bit machines; epoch nanoseconds are 19 digits).
_DECIMAL = re.compile(r"(?<![\w.])[0-9]{10,20}(?![\w.])")
#: A UUID, spelt with ``-`` or ``_`` (``__compiled_fn_13_33fe20b4_5c7a_4516_...``).
_UUID = re.compile(
    r"[0-9a-f]{8}([-_])[0-9a-f]{4}\1[0-9a-f]{4}\1[0-9a-f]{4}\1[0-9a-f]{12}(?![0-9a-f])"
)
#: A duration measured while compiling, said in a text: ``Guard latency = 85.96 us``.
_DURATION = re.compile(
    r"((?:latency|time|took|elapsed)[ :=]{1,4})[0-9]+(?:\.[0-9]+)?[ ]?(?:ns|us|µs|ms|s)\b",
    re.IGNORECASE,
)
_DURATION_WORDS = ("latency", "time", "took", "elapsed")
#: A folder ``tempfile`` named (``tmp`` and 8 characters of its alphabet).
_TEMP_FOLDER = re.compile(r"(?<=[/\\])tmp[a-z0-9_]{8}(?=[/\\'\"]|$)", re.MULTILINE)
#: A line setting a config option in a repro script: ``torch._inductor.config.x = 1``.
_CONFIG_LINE = re.compile(r"^(?:torch\.[\w.]*config|[\w.]*config)\.[\w.]+ = ")

#: ASCII bytes → ``0`` for a digit, ``.`` for anything else.
_DIGITS = bytes(0x30 if 0x30 <= b <= 0x39 else 0x2E for b in range(256))
#: ASCII bytes → ``h`` for a lower-case hex digit, ``-`` and ``_`` kept, ``.`` otherwise.
_HEX_DIGITS = bytes(
    0x68 if (0x30 <= b <= 0x39 or 0x61 <= b <= 0x66) else b if b in (0x2D, 0x5F) else 0x2E
    for b in range(256)
)
_UUID_SHAPES = tuple(
    "h" * 8 + sep + "h" * 4 + sep + "h" * 4 + sep + "h" * 4 + sep + "h" * 12 for sep in "-_"
)
_WORD = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_")


def without_volatile(text: str) -> str:
    """``text`` with what differs between any two processes left out (see the module's
    doc): each address, UUID, measured duration and temporary folder name a ``#``, each
    run of config settings in one order."""
    if not text.isascii():
        return volatile_by_regex(text)
    for rule in (_hex_addresses, _decimal_ids, _uuids, _durations, _temp_folders):
        text = rule(text)
    return _settings_in_order(text)


def volatile_by_regex(text: str) -> str:
    """:func:`without_volatile` by its regular expressions alone, rule after rule."""
    text = _HEX.sub("#", text)
    text = _DECIMAL.sub("#", text)
    text = _UUID.sub("#", text)
    text = _DURATION.sub(r"\1#", text)
    text = _TEMP_FOLDER.sub("tmp#", text)
    return _settings_in_order(text)


# -- each rule, for ASCII text --------------------------------------------------------------


def _hex_addresses(text: str) -> str:
    return _replace(text, _matches_at(text, _HEX, _finds(text, "0x")), lambda _m: "#")


def _decimal_ids(text: str) -> str:
    mask = text.encode("ascii").translate(_DIGITS)
    spans: list[tuple[int, int, str]] = []
    at = mask.find(b"0" * 10)
    while at >= 0:  # ``at`` starts a run of digits (an earlier start would be found first)
        end = mask.find(b".", at)
        end = len(mask) if end < 0 else end
        before = text[at - 1] if at else ""
        after = text[end] if end < len(text) else ""
        if end - at <= 20 and before not in _WORD and before != "." and (
            after not in _WORD and after != "."
        ):
            spans.append((at, end, "#"))
        at = mask.find(b"0" * 10, end)
    return _apply(text, spans)


def _uuids(text: str) -> str:
    if "-" not in text and "_" not in text:
        return text
    mask = text.encode("ascii").translate(_HEX_DIGITS).decode("ascii")
    starts = sorted(p for shape in _UUID_SHAPES for p in _finds(mask, shape))
    return _replace(text, _matches_at(text, _UUID, starts), lambda _m: "#")


def _durations(text: str) -> str:
    lower = text.lower()  # ASCII: the same length, so the same positions
    starts = sorted(p for word in _DURATION_WORDS for p in _finds(lower, word))
    return _replace(text, _matches_at(text, _DURATION, starts), lambda m: m.group(1) + "#")


def _temp_folders(text: str) -> str:
    starts = sorted(p + 1 for sep in ("/tmp", "\\tmp") for p in _finds(text, sep))
    return _replace(text, _matches_at(text, _TEMP_FOLDER, starts), lambda _m: "tmp#")


def _settings_in_order(text: str) -> str:
    """Each run of consecutive config-setting lines sorted: settings of distinct options
    commute, and torch writes them in a set's order."""
    if "config." not in text or "\n" not in text:
        return text
    out: list[str] = []
    run: list[str] = []
    for line in text.split("\n"):
        if _CONFIG_LINE.match(line):
            run.append(line)
            continue
        out += sorted(run)
        run = []
        out.append(line)
    out += sorted(run)
    return "\n".join(out)


# -- helpers --------------------------------------------------------------------------------


def _finds(text: str, needle: str) -> Iterator[int]:
    """Every position of ``needle`` in ``text`` (overlapping ones too)."""
    at = text.find(needle)
    while at >= 0:
        yield at
        at = text.find(needle, at + 1)


def _matches_at(text: str, pattern: re.Pattern[str], starts: Iterator[int] | list[int]
                ) -> Iterator[re.Match[str]]:
    """The matches ``pattern.sub`` would replace, given every position one may start at
    (in increasing order): leftmost first, none overlapping."""
    end = 0
    for at in starts:
        if at < end:
            continue
        m = pattern.match(text, at)
        if m is not None and m.end() > m.start():
            yield m
            end = m.end()


def _replace(
    text: str, matches: Iterator[re.Match[str]], by: Callable[[re.Match[str]], str]
) -> str:
    return _apply(text, [(m.start(), m.end(), by(m)) for m in matches])


def _apply(text: str, spans: list[tuple[int, int, str]]) -> str:
    if not spans:
        return text
    parts: list[str] = []
    last = 0
    for start, end, new in spans:
        parts += (text[last:start], new)
        last = end
    parts.append(text[last:])
    return "".join(parts)
