"""What any two processes log differently though they ran the same code the same way.

The ranks of a job (or two runs of one program) each log what a process has of its own,
and only in the forms torch writes it: an object's id in a guard
(``___check_obj_id(G['torch'], 139962313686640)``) or a graph (``# graph id: 1399...``,
``"graph_id": 1399...``), an address in a repr (``<function f at 0x7f4b583c9b20>``) or a
data pointer in a repro's environment, ids drawn at random (``__compiled_fn_13_<uuid>``),
temporary folders (``/tmp/torchinductor_user/tmp66o2th__``, torchelastic's per-process
error file folder), durations and times measured while compiling (``Guard latency = 85.96
us``, ``"time_taken_ns": 1234``) and distinct config options set in a set's order (a
repro script's ``torch._inductor.config.x = ...`` lines).  Ranks are compared without
them (:func:`without_volatile`); anything else that differs (a shape, any other number, a
constant in hex, a graph line, the order of two ops, two settings of one option) keeps
them apart.  Each rule is named (:data:`RULE_NAMES`), and what it set aside can be
gathered, one example a rule, so pages can show what comparing ranks left out.

A rank logs megabytes of such text, and a regular expression run over all of it costs a
hundred milliseconds a rank (the regex engine tries every position): each rule starts with
a literal found with ``str.find`` (in C, at memory speed), and its expression runs only
where one starts.  UUIDs have no literal: for ASCII text they are found with
``bytes.translate``.  :func:`volatile_by_regex` runs the expressions whole (what tests
hold the fast path to).
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass

#: Names of the rules, as pages say what was set aside (keys of a ``found`` dict).
ADDRESS = "object addresses"
OBJECT_ID = "object ids"
UUID = "random ids (UUIDs)"
DURATION = "measured durations and times"
TEMP_FOLDER = "temporary folders"
SETTINGS_ORDER = "the order of distinct config settings"
RANK_NUMBER = "the rank's own number"
RULE_NAMES = (RANK_NUMBER, ADDRESS, OBJECT_ID, UUID, DURATION, TEMP_FOLDER, SETTINGS_ORDER)

#: Characters of context an example keeps before what was set aside.
_EXAMPLE_BEFORE = 48
#: Characters of what was set aside an example keeps.
_EXAMPLE_CHARS = 80


@dataclass(frozen=True)
class _Rule:
    """One form of a per-process value: ``pattern`` starts with one of ``anchors`` (so it
    can match only where one is found) and its group ``v`` is what is left out."""

    name: str
    anchors: tuple[str, ...]
    pattern: re.Pattern[str]
    #: Anchors are looked for in the lower-cased text (the pattern ignores case).
    any_case: bool = False


#: A guard's argument, parentheses nested up to three deep: ``list(dict.keys(L['s']))[0]``.
_ARG = r"(?:[^\n()]|\((?:[^\n()]|\((?:[^\n()]|\([^\n()]*\))*\))*\))*?"

_RULES = (
    # an address in a repr: ``<function f at 0x7f4b583c9b20>``
    _Rule(ADDRESS, (" at 0x",), re.compile(r" at (?P<v>0x[0-9a-fA-F]{6,16})>")),
    # a tensor's data pointer in a repro's environment
    _Rule(ADDRESS, ("_DATA_PTR'] = '",), re.compile(r"_DATA_PTR'\] = '(?P<v>[0-9]{1,20})'")),
    # an object's or a type's id in a guard: ``___check_obj_id(G['torch'], 1399...)``, the
    # last argument of ``___check_type_id`` and ``___check_fake_script_type`` too
    _Rule(
        OBJECT_ID,
        ("___check_obj_id(", "___check_type_id(", "___check_fake_script_type("),
        re.compile(
            r"___check_(?:obj_id|type_id|fake_script_type)\(" + _ARG + r", (?P<v>[0-9]{1,20})\)"
        ),
    ),
    # a graph module's id: ``# graph id: 1399...``, ``"graph_id": 1399...``
    _Rule(OBJECT_ID, ("# graph id: ",), re.compile(r"# graph id: (?P<v>[0-9]{6,20})(?![0-9])")),
    _Rule(OBJECT_ID, ('"graph_id": ',), re.compile(r'"graph_id": (?P<v>[0-9]{6,20})(?![0-9])')),
    # a duration said in a text: ``Guard latency = 85.96 us``, ``took 3 s``
    _Rule(
        DURATION,
        ("latency", "time", "took", "elapsed"),
        re.compile(
            r"(?:latency|time|took|elapsed)[ :=]{1,4}"
            r"(?P<v>[0-9]+(?:\.[0-9]+)?[ ]?(?:ns|us|µs|ms|s))\b",
            re.IGNORECASE,
        ),
        any_case=True,
    ),
    # a time or duration in JSON, by its key: ``"start_time_us": 17...``, ``"cache_event_time"``
    _Rule(
        DURATION,
        ('_us": ', '_ns": ', '_ms": ', '_time": ', '_time_s": '),
        re.compile(
            r'(?:_us|_ns|_ms|_time|_time_s)": (?P<v>-?[0-9]+(?:\.[0-9]+)?(?:[eE][-+]?[0-9]+)?)'
            r"(?![0-9.eE])"
        ),
    ),
    # a folder ``tempfile`` named: ``tmp`` and 8 characters of its alphabet
    _Rule(
        TEMP_FOLDER,
        ("/tmp", "\\tmp"),
        re.compile(r"[/\\](?P<v>tmp[a-z0-9_]{8})(?=[/\\'\"]|$)", re.MULTILINE),
    ),
    # torchelastic's folder of a process's error file: ``torchelastic_<8>/<run>_<8>/attempt_0/3``
    _Rule(
        TEMP_FOLDER,
        ("torchelastic_",),
        re.compile(
            r"torchelastic_(?P<v>[a-z0-9_]{8}/[^\s'\"/]{1,200}/attempt_[0-9]{1,6}/[0-9]{1,7})(?=/)"
        ),
    ),
)

#: Names of what a message (an error's or a graph break's text, matched across runs) holds
#: of its process beyond :data:`RULE_NAMES`.
PROCESS_ID = "process ids"
PORT = "ports"

#: A message names its process's own values in more forms than a record does: a process id
#: (a dead worker's ``sidecar (pid 7293)``), a port (``port 29500``, ``localhost:29500``),
#: any address (``0x7f4b583c9b20``), any folder right under a temporary root
#: (``/tmp/pymp-1x2y3z4w``, ``/tmp/torchinductor_user``).  Kept apart from :data:`_RULES`:
#: ranks of one job share their ports and temporary root, and a record's JSON keys such as
#: ``"pid"`` are compared by the rank digests with their own rules.
_MESSAGE_RULES = (
    _Rule(
        PROCESS_ID,
        ("pid", "process"),
        re.compile(
            r"\b(?:pid|process(?: id)?)\"?[ :=#]{1,4}(?P<v>[0-9]{1,10})(?![0-9])", re.IGNORECASE
        ),
        any_case=True,
    ),
    _Rule(
        PORT,
        ("port", ":"),
        re.compile(
            r"(?:\bport\"?[ :=]{1,4}|(?:localhost|[0-9]{1,3}(?:\.[0-9]{1,3}){3}|\]):)"
            r"(?P<v>[0-9]{2,5})(?![0-9])",
            re.IGNORECASE,
        ),
        any_case=True,
    ),
    _Rule(
        ADDRESS, ("0x",), re.compile(r"(?<![0-9A-Za-z])(?P<v>0x[0-9a-fA-F]{6,16})(?![0-9a-fA-F])")
    ),
    _Rule(
        TEMP_FOLDER,
        ("/tmp/", "/var/folders/", "\\temp\\"),
        re.compile(r"(?:/tmp/|/var/folders/|\\temp\\)(?P<v>[^\s'\"/\\]{1,200})", re.IGNORECASE),
        any_case=True,
    ),
)


def message_key(text: str, found: dict[str, str] | None = None) -> str:
    """A message as two runs' messages are matched: :func:`without_volatile`, and the
    process ids, ports, addresses and temporary folders it names each a ``#``, so that the
    same error of two processes is one error."""
    text = volatile_by_regex(text, found)
    for rule in _MESSAGE_RULES:
        text = _apply(text, rule.pattern.finditer(text), rule.name, found)
    return text


#: A UUID, spelt with ``-`` or ``_`` (``__compiled_fn_13_33fe20b4_5c7a_4516_...``).
_UUID = re.compile(
    r"(?P<v>[0-9a-f]{8}([-_])[0-9a-f]{4}\2[0-9a-f]{4}\2[0-9a-f]{4}\2[0-9a-f]{12})(?![0-9a-f])"
)
#: ASCII bytes → ``h`` for a lower-case hex digit, ``-`` and ``_`` kept, ``.`` otherwise.
_HEX_DIGITS = bytes(
    0x68 if (0x30 <= b <= 0x39 or 0x61 <= b <= 0x66) else b if b in (0x2D, 0x5F) else 0x2E
    for b in range(256)
)
_UUID_SHAPES = tuple(
    "h" * 8 + sep + "h" * 4 + sep + "h" * 4 + sep + "h" * 4 + sep + "h" * 12 for sep in "-_"
)
#: A line setting a config option in a repro script: ``torch._inductor.config.x = 1``.
_CONFIG_LINE = re.compile(r"^(?:torch\.[\w.]*config|[\w.]*config)\.[\w.]+ = ")


def without_volatile(text: str, found: dict[str, str] | None = None) -> str:
    """``text`` with what differs between any two processes left out (see the module's
    doc), each value a ``#``; distinct config options set in a run of lines sorted.
    ``found``: rule name -> one example of what it left out, filled where a rule has none."""
    if not text.isascii():
        return volatile_by_regex(text, found)
    for rule in _RULES:
        text = _apply(text, _matches_at(text, rule.pattern, _starts(text, rule)), rule.name, found)
    if "-" in text or "_" in text:
        mask = text.encode("ascii").translate(_HEX_DIGITS).decode("ascii")
        starts = sorted(p for shape in _UUID_SHAPES for p in _finds(mask, shape))
        text = _apply(text, _matches_at(text, _UUID, starts), UUID, found)
    return _settings_in_order(text, found)


def volatile_by_regex(text: str, found: dict[str, str] | None = None) -> str:
    """:func:`without_volatile` by its regular expressions alone, rule after rule."""
    for rule in _RULES:
        text = _apply(text, rule.pattern.finditer(text), rule.name, found)
    text = _apply(text, _UUID.finditer(text), UUID, found)
    return _settings_in_order(text, found)


def _starts(text: str, rule: _Rule) -> list[int]:
    """Where ``rule`` may match, in increasing order."""
    hay = text.lower() if rule.any_case else text  # ASCII: the same length, the same places
    return sorted(p for anchor in rule.anchors for p in _finds(hay, anchor))


def _settings_in_order(text: str, found: dict[str, str] | None) -> str:
    """Each run of consecutive config-setting lines in the order of their options: distinct
    options commute, and torch writes them in a set's order; settings of one option keep
    their order (the last one wins)."""
    if "config." not in text or "\n" not in text:
        return text
    out: list[str] = []
    run: list[str] = []

    def flush() -> None:
        ordered = sorted(run, key=lambda line: line.split(" = ", 1)[0])  # stable
        if found is not None and SETTINGS_ORDER not in found and ordered != run:
            found[SETTINGS_ORDER] = _cut(" / ".join(run[:2]))
        out.extend(ordered)
        run.clear()

    for line in text.split("\n"):
        if _CONFIG_LINE.match(line):
            run.append(line)
            continue
        flush()
        out.append(line)
    flush()
    return "\n".join(out)


# -- helpers --------------------------------------------------------------------------------


def _finds(text: str, needle: str) -> Iterator[int]:
    """Every position of ``needle`` in ``text`` (overlapping ones too)."""
    at = text.find(needle)
    while at >= 0:
        yield at
        at = text.find(needle, at + 1)


def _matches_at(text: str, pattern: re.Pattern[str], starts: list[int]) -> Iterator[re.Match[str]]:
    """The matches ``pattern.finditer`` would give, given every position one may start at
    (in increasing order): leftmost first, none overlapping."""
    end = 0
    for at in starts:
        if at < end:
            continue
        m = pattern.match(text, at)
        if m is not None and m.end() > m.start():
            yield m
            end = m.end()


def _apply(
    text: str, matches: Iterator[re.Match[str]], name: str, found: dict[str, str] | None
) -> str:
    """``text`` with each match's group ``v`` a ``#``; the first one kept in ``found``."""
    parts: list[str] = []
    last = 0
    for m in matches:
        start, end = m.span("v")
        if not parts and found is not None and name not in found:
            found[name] = example(text, start, end)
        parts += (text[last:start], "#")
        last = end
    if not parts:
        return text
    parts.append(text[last:])
    return "".join(parts)


def example(text: str, start: int, end: int) -> str:
    """What was left out at ``start:end``, after a little of its line: ``…___check_obj_id(
    G['torch'], 139962313686640``."""
    line_start = text.rfind("\n", 0, start) + 1
    begin = max(line_start, start - _EXAMPLE_BEFORE)
    before = ("…" if begin > line_start else "") + text[begin:start].lstrip()
    return before + _cut(text[start:end])


def _cut(text: str) -> str:
    return text if len(text) <= _EXAMPLE_CHARS else text[: _EXAMPLE_CHARS - 1] + "…"
