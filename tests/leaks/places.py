"""Where canaries go: input kinds, their places, a canary's record, and the files of an
input written twice (live, and a control with every canary made harmless)."""

from __future__ import annotations

import bisect
import random
import re
from collections import Counter, defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from .shapes import (
    HOMES,
    JSON_ENCODINGS,
    RAW,
    SECRET,
    SECRETS,
    SHAPES,
    TRIGGER,
    Plant,
    Seg,
    encode,
    needles,
    rand,
    tag_of,
)

#: The checkout, and the real inputs the campaign plants in.
ROOT = Path(__file__).resolve().parents[2]
DATA = ROOT / "tests" / "data"

# -- where canaries go -------------------------------------------------------------------

#: Input kinds: what a user hands to ``check``, ``redact``, ``bundle`` and a build.
TRACE, TRACE_GZ, RANKS, LONG = "trace", "trace.gz", "rank folder", "trace long line"
TEXT, TEXT_LONG, DEBUG, PROFILE, CAPTURE = (
    "text log",
    "text log long line",
    "debug folder",
    "runtime profile",
    "capture",
)
KINDS = (TRACE, TRACE_GZ, RANKS, LONG, TEXT, TEXT_LONG, DEBUG, PROFILE, CAPTURE)

# places, with the encodings each may use
P_ENV_NAME = "envelope: artifact name"
P_ENV_FIELD = "envelope: metrics field"
P_PAYLOAD = "payload lines"
P_GRAPH = "graph payload line"
P_JSON = "json payload"
P_STR = "interned str"
P_STR_USED = "interned str in stacks"
P_NAME = "file name"
P_GZ_NAME = "gzip header name"
P_LONG_ENV = "long record line"
P_LONG_PAYLOAD = "long payload line"
P_LONG_TEXT = "long text log line"
P_TEXT = "text log line"
P_DEBUG_PY = "debug python file"
P_DEBUG_TEXT = "debug text file"
P_DEBUG_JSON = "debug json file"
P_DEBUG_NAME = "debug entry name"
P_PROF_NAME = "profile event name"
P_PROF_ARGS = "profile event args"
P_PROF_META = "profile meta file"
P_CAP_STDERR = "capture stderr tail"
P_CAP_FIELD = "capture record field"

JSONY = JSON_ENCODINGS
#: place -> the encodings it is written in.
PLACES: dict[str, tuple[str, ...]] = {
    P_ENV_NAME: JSONY,
    P_ENV_FIELD: JSONY,
    P_PAYLOAD: (RAW,),
    P_GRAPH: (RAW,),
    P_JSON: JSONY,
    P_STR: JSONY,
    P_STR_USED: JSONY,
    P_NAME: (RAW,),
    P_GZ_NAME: (RAW,),
    P_LONG_ENV: JSONY,
    P_LONG_PAYLOAD: JSONY,
    P_LONG_TEXT: (RAW,),
    P_TEXT: (RAW,),
    P_DEBUG_PY: (RAW,),
    P_DEBUG_TEXT: (RAW,),
    P_DEBUG_JSON: JSONY,
    P_DEBUG_NAME: (RAW,),
    P_PROF_NAME: JSONY,
    P_PROF_ARGS: JSONY,
    P_PROF_META: JSONY,
    P_CAP_STDERR: JSONY,
    P_CAP_FIELD: JSONY,
}
TRACE_PLACES = (P_ENV_NAME, P_ENV_FIELD, P_PAYLOAD, P_GRAPH, P_JSON, P_STR, P_STR_USED)
#: kind -> its places and the canaries an input of it holds.
KIND_PLACES: dict[str, tuple[str, ...]] = {
    TRACE: TRACE_PLACES,
    TRACE_GZ: (*TRACE_PLACES, P_GZ_NAME),
    RANKS: (*TRACE_PLACES, P_NAME),
    LONG: (P_LONG_ENV, P_LONG_PAYLOAD),
    TEXT: (P_TEXT,),
    TEXT_LONG: (P_LONG_TEXT,),
    DEBUG: (P_DEBUG_PY, P_DEBUG_TEXT, P_DEBUG_JSON, P_DEBUG_NAME),
    PROFILE: (P_PROF_NAME, P_PROF_ARGS, P_PROF_META),
    CAPTURE: (P_CAP_STDERR, P_CAP_FIELD, P_PAYLOAD, P_JSON),
}
#: Canaries per input of each kind (a long line holds one across every cut and a few more).
PER_INPUT = {
    TRACE: 2400,
    TRACE_GZ: 2400,
    RANKS: 2400,
    LONG: 60,
    TEXT: 2400,
    TEXT_LONG: 60,
    DEBUG: 1600,
    PROFILE: 2400,
    CAPTURE: 400,
}
#: Places that hold few canaries per input, at most.
PLACE_CAP = {
    P_NAME: 12,
    P_GZ_NAME: 3,
    P_DEBUG_NAME: 12,
    P_PROF_META: 4,
    P_CAP_FIELD: 2,
    P_STR_USED: 40,
}
#: Places ``check`` is not given (or cannot be: what a capture record says of its run).
NOT_CHECKED = {P_CAP_FIELD, P_CAP_STDERR}
#: A value quoted again is a secret only where its guard is planted too (in the same log).
ECHO = "env value quoted again"
COMPANION_PLACES = (*TRACE_PLACES, P_TEXT)
#: Canaries of a shape per input, at most: a log holds a few environment values (the
#: masker learns 32 per log: ``secrets.MAX_LEARNED``), not hundreds.
SHAPE_CAP = {"env guard": 12, ECHO: 12}


def fits(place: str, plant: Plant) -> bool:
    """Whether a place can hold a canary: a name holds no path, quote or line break."""
    if place in (P_NAME, P_GZ_NAME, P_DEBUG_NAME):
        return plant.nameable
    if place == P_CAP_FIELD:  # the interpreter's path: a home folder, or a name
        return plant.classes == HOMES or plant.nameable
    return True


@dataclass
class Canary:
    """One planted secret: what, where, as what text, and its windows (``needles``)."""

    uid: int
    shape: str
    place: str
    how: str
    kind: str
    text: str  # decoded, as a reader sees it
    written: str = ""  # as the file holds it (escaped in JSON)
    file: str = ""  # the input's file that holds it (relative)
    line: int = 0  # its first and last line in that file (0: in a name)
    last: int = 0
    classes: tuple[str, ...] = SECRETS
    needles: list[str] = field(default_factory=list)
    companion: str = ""  # where the guard of an echoed value is: "before" / "after"
    at_cut: bool = False  # across a place where a reader cuts a long line

    def label(self) -> str:
        """``place (encoding)``, and ``at a cut`` for one across a reader's cut."""
        how = "" if self.how == RAW else f" ({self.how})"
        return f"{self.place}{' at a cut' if self.at_cut else ''}{how}"


class Doc:
    """A file's text written twice, live (with canaries) and control (each made harmless),
    and where each canary lies in the live text."""

    def __init__(self) -> None:
        self.parts: list[tuple[str, str, int | None]] = []

    def add(self, text: str) -> Doc:
        self.parts.append((text, text, None))
        return self

    def plant(self, uid: int, live: str, control: str) -> Doc:
        self.parts.append((live, control, uid))
        return self

    def extend(self, other: Doc) -> Doc:
        self.parts += other.parts
        return self

    def text(self, live: bool) -> str:
        return "".join(p[0] if live else p[1] for p in self.parts)

    def spans(self) -> dict[int, tuple[int, int]]:
        out: dict[int, tuple[int, int]] = {}
        pos = 0
        for live, _, uid in self.parts:
            if uid is not None:
                out[uid] = (pos, pos + len(live))
            pos += len(live)
        return out


@dataclass
class Input:
    """One generated input: its files (live and control), canaries, what each command is
    given (relative to the input's folder)."""

    n: int
    kind: str
    canaries: list[Canary] = field(default_factory=list)
    files: dict[str, tuple[bytes, bytes]] = field(default_factory=dict)  # live, control
    names: dict[str, str] = field(default_factory=dict)  # live file name -> control's
    target: str = ""  # what check, redact, bundle and build are given
    check_target: str = ""
    note: str = ""

    def write(self, root: Path, live: bool) -> Path:
        for rel, (a, b) in self.files.items():
            name = rel if live else self.names.get(rel, rel)
            path = root / name
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_bytes(a if live else b)
        return root


class Planter:
    """Makes the canaries of one input: every shape in every place of its kind, in turn."""

    def __init__(
        self, r: random.Random, n: int, kind: str, count: int, shapes: Sequence[str] = ()
    ) -> None:
        self.r = r
        self.n = n
        self.kind = kind
        self.next = 0
        places = KIND_PLACES[kind]
        pairs = [
            (s, p) for p in places for s in (shapes or SHAPES) if s != ECHO or p in COMPANION_PLACES
        ]
        r.shuffle(pairs)
        self.queue: dict[str, list[str]] = defaultdict(list)  # place -> shapes, in order
        used: Counter[str] = Counter()
        of_shape: Counter[str] = Counter()
        i = 0
        while sum(used.values()) < count and pairs:
            shape, place = pairs[i % len(pairs)]
            i += 1
            if used[place] >= PLACE_CAP.get(place, 1 << 30):
                pairs = [(s, p) for s, p in pairs if p != place]
                continue
            if of_shape[shape] >= SHAPE_CAP.get(shape, 1 << 30):
                pairs = [(s, p) for s, p in pairs if s != shape]
                continue
            used[place] += 1
            of_shape[shape] += 1
            self.queue[place].append(shape)
        self.canaries: list[Canary] = []

    def make(self, shape: str, place: str, how: str | None = None) -> tuple[Canary, Plant]:
        """A new canary of ``shape`` for ``place`` (a maker tried again until it fits)."""
        uid = self.n * 1_000_000 + self.next
        self.next += 1
        for _ in range(50):
            plant = SHAPES[shape](self.r, tag_of(uid))
            if fits(place, plant):
                break
        else:  # no form of this shape fits (a name cannot hold a path): a bare token instead
            shape = "huggingface hf_"
            plant = Plant([Seg("hf_", TRIGGER), Seg(rand(self.r, 34, tag=tag_of(uid)), SECRET)])
        how = how or self.r.choice(PLACES[place])
        canary = Canary(
            uid,
            shape,
            place,
            how,
            self.kind,
            plant.text(),
            classes=plant.classes,
            needles=needles(plant),
        )
        self.canaries.append(canary)
        return canary, plant

    def written(self, canary: Canary, plant: Plant) -> tuple[str, str]:
        """The canary as its place writes it, live and control (the same random choices)."""
        state = self.r.getstate()
        live = encode(plant, canary.how, True, self.r)
        self.r.setstate(state)
        control = encode(plant, canary.how, False, self.r)
        canary.written = live
        return live, control


def locate(canaries: Sequence[Canary], rel: str, doc: Doc, text: str) -> None:
    """Give each canary of ``doc`` its file and lines (``text``: the doc's live text)."""
    spans = doc.spans()
    if not spans:
        return
    breaks = [m.start() for m in re.finditer("\n", text)]
    for c in canaries:
        if c.uid in spans:
            start, end = spans[c.uid]
            c.file = rel
            c.line = bisect.bisect_left(breaks, start) + 1
            c.last = bisect.bisect_left(breaks, max(start, end - 1)) + 1
